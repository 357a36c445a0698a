//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Path of the fsbench binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fsbench"))
}

/// A fresh directory on a disk filesystem (/var/tmp), removed at the end of the test.
pub struct TestDir(pub tempfile::TempDir);

impl TestDir {
    pub fn new() -> TestDir {
        std::fs::create_dir_all("/var/tmp/fsbench-tests").unwrap();
        TestDir(tempfile::tempdir_in("/var/tmp/fsbench-tests").unwrap())
    }
    pub fn path(&self) -> &Path {
        self.0.path()
    }
    /// Write a file in the directory and return its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }
    /// Entries in the directory (to check fsbench left nothing).
    pub fn entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }
}

/// A `Command` for fsbench that cannot touch the user's results database or working directory:
/// `XDG_DATA_HOME` (the default database's home) and the working directory (where `compare`
/// writes its report) are scratch directories under Cargo's target/tmp.
pub fn command() -> Command {
    let mut c = Command::new(bin());
    isolate(&mut c);
    c
}

/// Keep `c` (fsbench itself, or a wrapper such as strace or runuser that starts it) off the
/// user's results database and working directory: `XDG_DATA_HOME` and the working directory
/// become scratch directories under Cargo's target/tmp. `FSBENCH_MIN_TIME=0`: each phase runs
/// once (a test of --min-time removes it or passes the option).
pub fn isolate(c: &mut Command) -> &mut Command {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fsbench-cli");
    let (data, cwd) = (scratch.join("xdg-data"), scratch.join("cwd"));
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    // Every phase once (--min-time 0), unless a test asks for more: runs stay short. A zfs-fuse
    // that stops answering fails the test in minutes (the watchdog aborts the pool's FUSE
    // connection) instead of hanging the suite: healthy zfs commands take seconds.
    c.env("XDG_DATA_HOME", data)
        .env("FSBENCH_MIN_TIME", "0")
        .env(fsbench::testbed::zfs_watch::TIMEOUT_ENV, "120")
        .current_dir(cwd)
}

/// Held by every test here that uses zfs: zfs-fuse can deadlock when several processes create,
/// import and scrub pools at once (seen in CI with two integrity tests side by side), so this
/// suite uses it one test at a time. fsbench's own watchdog covers users who do not.
pub fn zfs_serial() -> MutexGuard<'static, ()> {
    static ZFS: Mutex<()> = Mutex::new(());
    ZFS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Wait for a child of this test for at most `limit`; past it, kill it (our own child, by pid)
/// and fail, so a stuck child never hangs the suite.
pub fn wait_within(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {} s; killed", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Run fsbench with args; return the output.
pub fn fsbench(args: &[&str]) -> Output {
    command().args(args).output().expect("run fsbench")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `fsbench run --fio JOB` once on a fresh 64 MiB ext4 testbed in `work`, unstored, as JSON.
pub fn run_fio_on_small_ext4(job: &Path, work: &Path) -> (serde_json::Value, Output) {
    let (job, work) = (job.to_str().unwrap(), work.to_str().unwrap());
    let args = ["run", "--fio", job, "--fs", "ext4", "--size", "64M", "--workdir", work];
    run_json(&[&args[..], &["--repeat", "1", "--no-store"]].concat())
}

/// Run and parse JSON output (panics with stderr on failure to parse).
pub fn run_json(args: &[&str]) -> (serde_json::Value, Output) {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let o = fsbench(&a);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}); stderr:\n{}\nstdout:\n{}", stderr(&o), stdout(&o))
    });
    (v, o)
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Print why a test is skipped (visible with --nocapture and in CI logs) and return true.
pub fn skip(reason: &str) -> bool {
    eprintln!("skipped: {reason}");
    true
}

/// Why a root + loop + mkfs test cannot run here, if it cannot.
pub fn skip_testbeds(tools: &[&str]) -> bool {
    if !is_root() {
        return skip("needs root (loop devices, mkfs, mount)");
    }
    if !Path::new("/dev/loop-control").exists() {
        return skip("no /dev/loop-control");
    }
    for t in tools {
        if !have(t) {
            return skip(&format!("{t} not installed (scripts/install-deps.sh)"));
        }
    }
    false
}

/// A tmpfs mounted in a fresh directory, unmounted on drop. Needs root.
pub struct Tmpfs {
    pub dir: TestDir,
}

impl Tmpfs {
    pub fn mount(size: &str, ro: bool) -> Option<Tmpfs> {
        if !is_root() {
            return None;
        }
        let dir = TestDir::new();
        let opts = format!("size={size}{}", if ro { ",ro" } else { "" });
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &opts, "fsbench-test", dir.path().to_str().unwrap()])
            .status()
            .ok()?;
        if !st.success() {
            return None;
        }
        Some(Tmpfs { dir })
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Busy for a moment after an io_uring run: the kernel drops a ring's registered file in
        // a work item after the process has exited. Retry for up to 10 s, then detach it
        // (lazy), so no test leaves a mount behind.
        let t = Instant::now();
        while !Command::new("umount").arg(self.dir.path()).status().is_ok_and(|s| s.success()) {
            if t.elapsed() > Duration::from_secs(10) {
                let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A test's JSON object by id.
pub fn test_by_id<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no test {id} in report"))
}

/// Latency entry of an op kind in a repetition or phase JSON object.
pub fn lat<'a>(obj: &'a serde_json::Value, op: &str) -> Option<&'a serde_json::Value> {
    obj["latency"].as_array().unwrap().iter().find(|l| l["op"] == op)
}

/// Whether a program is on PATH (or in /usr/sbin, /sbin).
pub fn have(program: &str) -> bool {
    fsbench::sys::cmd::have_program(program)
}

/// The name `testbed up` tells to pass to `testbed down`.
pub fn name_of_kept(up_stderr: &str) -> String {
    let i =
        up_stderr.find("fsbench testbed down ").expect(up_stderr) + "fsbench testbed down ".len();
    up_stderr[i..].split('`').next().unwrap().to_string()
}

/// Removes a kept testbed when the test panics (`testbed down NAME`); on success the test
/// itself has removed it.
pub struct DownOnPanic(pub String);

impl Drop for DownOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = fsbench(&["testbed", "down", &self.0]);
        }
    }
}

/// The strace log (`-f`, `trace=TRACE`) of the fio job file `job` run by fsbench (`run --fio`,
/// in a directory of its own) or, with `fio`, by fio 3.33 in one: each tool's system calls on
/// the same job, for tests that compare them.
pub fn strace_fio_job(job: &str, fio: bool, trace: &str) -> String {
    let d = TestDir::new();
    let file = d.write("j.fio", job);
    let log = d.path().join("strace.log");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut c = Command::new("strace");
    let trace = format!("trace={trace}");
    isolate(&mut c).args(["-f", "-qq", "-e", &trace, "-e", "signal=none", "-o"]).arg(&log);
    if fio {
        c.arg("fio").arg("--output-format=json").arg("--directory").arg(&data).arg(&file);
    } else {
        c.arg(bin())
            .args(["run", "--fio"])
            .arg(&file)
            .args(["--no-store", "--min-time", "0", "--format", "json", "--dir"])
            .arg(&data);
    }
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(&log).unwrap()
}

/// The strace log's calls with each `<unfinished ...>` call joined to its `<... resumed>` end
/// (strace -f splits a call that another thread's call interrupts), in order of completion.
pub fn strace_calls(log: &str) -> Vec<String> {
    let mut pending = std::collections::HashMap::<String, String>::new();
    let mut out = Vec::new();
    for l in log.lines() {
        let (pid, rest) = l.split_once(' ').unwrap_or(("", l));
        let rest = rest.trim_start();
        if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid.to_string(), head.to_string());
        } else if rest.starts_with("<... ") {
            let tail = rest.split_once("resumed>").map_or("", |x| x.1);
            out.push(format!("{}{tail}", pending.remove(pid).unwrap_or_default()));
        } else {
            out.push(rest.to_string());
        }
    }
    out
}

/// fio 3.33 (`fio`) or `fsbench fio --no-store` on the job file `job` in `format` (`json`,
/// `normal`), each in directories of its own; the run must succeed.
pub fn fio_job_output(fio: bool, job: &str, format: &str) -> Output {
    let work = TestDir::new();
    let file = work.write("job.fio", job);
    let data = TestDir::new();
    let dir = format!("--directory={}", data.path().display());
    let fmt = format!("--output-format={format}");
    let o = if fio {
        Command::new("fio").args([dir.as_str(), fmt.as_str()]).arg(&file).output()
    } else {
        command().args(["fio", dir.as_str(), fmt.as_str(), "--no-store"]).arg(&file).output()
    }
    .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    o
}
