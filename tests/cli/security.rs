//! Attacks by an unprivileged user on a root fsbench, each against stand-ins in a temporary
//! directory, and each refused (issue "Safe as root, nothing lost"). The attacker's steps run as
//! `nobody` through `setpriv` (util-linux); fsbench runs as root with its state directory in
//! the test's own directory (`FSBENCH_STATE_DIR`), so nothing here touches the machine's state.
//! Also: 6 concurrent runs on one database, a full disk under the database, and cleanup of a
//! crashed run's work directory while another run is live and a testbed is kept.

use crate::util::{command, have, is_root, skip, stderr, stdout, wait_within, zfs_serial, TestDir};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn skip_unless_root_and_setpriv() -> bool {
    if !is_root() {
        return skip("needs root (fsbench as root is what is attacked)");
    }
    if !have("setpriv") {
        return skip("setpriv not installed (apt-get install util-linux)");
    }
    false
}

/// Run `script` with sh as `nobody`; the attacker's step.
pub(crate) fn as_nobody(script: &str) -> Output {
    let o = nobody_cmd(script).output().expect("setpriv");
    assert!(o.status.success(), "attacker step failed: {script}\n{}", stderr(&o));
    o
}

pub(crate) fn nobody_cmd(script: &str) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "sh", "-c", script]);
    c
}

/// A directory anyone may write in (sticky, like /tmp and /var/tmp), inside the test's own.
pub(crate) fn world_dir(parent: &Path, name: &str, mode: u32) -> PathBuf {
    let d = parent.join(name);
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
    d
}

/// A root-owned 0600 file standing in for something precious.
pub(crate) fn victim(path: &Path) -> PathBuf {
    std::fs::write(path, b"root's precious bytes").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.to_path_buf()
}

pub(crate) fn intact(path: &Path) {
    assert_eq!(
        std::fs::read(path).unwrap(),
        b"root's precious bytes",
        "{} changed",
        path.display()
    );
}

/// fsbench as root with its state in `state`.
pub(crate) fn fsbench_in(state: &Path, args: &[&str]) -> Output {
    command().env("FSBENCH_STATE_DIR", state).args(args).output().unwrap()
}

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_state_directory_made_by_another_user_is_refused_and_its_records_not_acted_on() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    let t = TestDir::new();
    let pub_dir = world_dir(t.path(), "pub", 0o1777);
    // Stand-ins: a root image and a directory of root's with a symlink in it.
    let stand = t.path().join("standin");
    std::fs::create_dir(&stand).unwrap();
    let img = victim(&stand.join("vm-disk.img"));
    std::os::unix::fs::symlink(&img, stand.join("link")).unwrap();
    let state = pub_dir.join("state");
    // nobody makes the state directory first and forges a dead process's record.
    let forged = format!(
        r#"{{"owner":{{"pid":1,"start_ticks":1}},"entries":[{{"id":1,"resource":{{"type":"directory","path":"{d}"}}}},{{"id":2,"resource":{{"type":"image_file","path":"{i}"}}}}]}}"#,
        d = s(&stand),
        i = s(&img)
    );
    as_nobody(&format!(
        "mkdir -m 700 {st} && printf '%s' '{forged}' > {st}/1.json",
        st = s(&state)
    ));
    let o = fsbench_in(&state, &["testbed", "cleanup"]);
    assert_ne!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("owned by uid 65534") && stderr(&o).contains("not safe"),
        "{}",
        stderr(&o)
    );
    intact(&img);
    assert!(stand.join("link").symlink_metadata().is_ok(), "the symlink is still there");
    // A run that would record refuses too, before making anything.
    let dir = TestDir::new();
    let o = fsbench_in(&state, &["run", "--dir", s(dir.path()), "--test", "10", "--no-store"]);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("not safe"), "{}", stderr(&o));
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}

#[test]
fn planted_links_for_state_temp_files_and_the_lock_are_never_written_through() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    let t = TestDir::new();
    let pub_dir = world_dir(t.path(), "pub", 0o1777);
    let precious = victim(&t.path().join("root-0600"));
    // The state directory is root's and private: nobody cannot plant anything in it.
    let state = pub_dir.join("state");
    let o = fsbench_in(&state, &["testbed", "cleanup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::metadata(&state).unwrap();
    assert_eq!((md.uid(), md.mode() & 0o7777), (0, 0o700));
    let o = nobody_cmd(&format!("ln -s {} {}/.cleanup.lock.x", s(&precious), s(&state)))
        .output()
        .unwrap();
    assert!(!o.status.success(), "nobody could write into the state directory");
    // An attacker-made state directory full of planted links (PID.json.tmp for every pid, the
    // lock) is refused outright.
    let evil = pub_dir.join("evil-state");
    as_nobody(&format!(
        "mkdir -m 777 {e} && ln -s {p} {e}/.cleanup.lock && i=1; while [ $i -le 4096 ]; do ln -s {p} {e}/$i.json.tmp; ln -s {p} {e}/$i.json; i=$((i+1)); done",
        e = s(&evil),
        p = s(&precious)
    ));
    for args in [
        vec!["testbed", "cleanup"],
        vec!["run", "--fs", "tmpfs", "--test", "10", "--scale", "1/64", "--no-store"],
    ] {
        let o = fsbench_in(&evil, &args);
        assert_ne!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("not safe"), "{args:?}: {}", stderr(&o));
        intact(&precious);
    }
    // A symlinked state directory is refused too.
    let link = pub_dir.join("state-link");
    as_nobody(&format!("ln -s {} {}", s(&state), s(&link)));
    let o = fsbench_in(&link, &["testbed", "cleanup"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
}

#[test]
fn a_planted_report_link_is_not_written_through() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    let t = TestDir::new();
    let pub_dir = world_dir(t.path(), "pub", 0o1777);
    let precious = victim(&t.path().join("root-0600"));
    let a = TestDir::new();
    let b = TestDir::new();
    let db = t.path().join("db.sqlite");
    let state = t.path().join("state");
    for n in 1..=3 {
        as_nobody(&format!("ln -s {} {}/fsbench-report-{n}.html", s(&precious), s(&pub_dir)));
    }
    let run_compare = |extra: &[&str]| {
        let mut c = command();
        c.env("FSBENCH_STATE_DIR", &state).current_dir(&pub_dir).args([
            "compare",
            s(a.path()),
            s(b.path()),
            "--test",
            "10",
            "--scale",
            "1/64",
            "--db",
            s(&db),
        ]);
        c.args(extra).output().unwrap()
    };
    // Default name: taken (by the link), so another name is chosen; nothing is replaced.
    let o = run_compare(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    intact(&precious);
    let written = stderr(&o)
        .lines()
        .find_map(|l| l.strip_prefix("fsbench: report written to ").map(str::to_string))
        .unwrap_or_else(|| panic!("{}", stderr(&o)));
    // The file's name, then its size: `NAME (84 KB)`.
    let (written, size) = written.rsplit_once(" (").unwrap_or_else(|| panic!("{written}"));
    assert!(size.ends_with("KB)") || size.ends_with("MB)"), "{size}");
    assert_eq!(written, "fsbench-report-1-2.html");
    assert!(std::fs::read_to_string(pub_dir.join(written)).unwrap().contains("<html"));
    // Named explicitly: the link is replaced by the report (root may replace nobody's entry in a
    // sticky directory), never written through.
    let named = pub_dir.join("fsbench-report-2.html");
    let o = run_compare(&["--report", s(&named)]);
    assert!(o.status.success(), "{}", stderr(&o));
    intact(&precious);
    assert!(named.symlink_metadata().unwrap().file_type().is_file());
    // `fsbench report` alike.
    let o = command()
        .current_dir(&pub_dir)
        .args(["report", "1", "--db", s(&db), "-o", s(&pub_dir.join("fsbench-report-3.html"))])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    intact(&precious);
    assert!(pub_dir
        .join("fsbench-report-3.html")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_file());
    // And a report that cannot be written at all is an error, not exit 0.
    let o = run_compare(&["--report", "/nonexistent-dir/x.html"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("/nonexistent-dir"), "{}", stderr(&o));
    assert!(stdout(&o).contains("10"), "the table is still printed: {}", stdout(&o));
}

#[test]
fn a_swapped_work_directory_does_not_redirect_writes_or_deletions() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    let t = TestDir::new();
    let state = t.path().join("state");
    // A non-sticky 0777 --dir: nobody can rename and replace what fsbench makes in it.
    let open_dir = world_dir(t.path(), "open", 0o777);
    let roots = t.path().join("roots-dir");
    std::fs::create_dir(&roots).unwrap();
    // Names the unit14 tests 1 and 4 use, and others: none may be truncated or deleted.
    let keep: Vec<PathBuf> =
        ["f0", "file0", "test1", "test4", "data"].iter().map(|n| victim(&roots.join(n))).collect();
    // nobody swaps every .fsbench-* directory for a link to root's directory, over and over.
    let mut attacker = nobody_cmd(&format!(
        "cd {d} || exit 1; while :; do for w in .fsbench-*; do if [ -d \"$w\" ] && [ ! -L \"$w\" ]; then mv \"$w\" \"moved$w$$\" 2>/dev/null && ln -s {r} \"$w\"; fi; done; done",
        d = s(&open_dir),
        r = s(&roots)
    ))
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let o = fsbench_in(
        &state,
        &["run", "--dir", s(&open_dir), "--test", "1,4", "--scale", "1/64", "--no-store"],
    );
    attacker.kill().unwrap(); // by pid: setpriv execs sh, so this is the attacker's shell
    attacker.wait().unwrap();
    for k in &keep {
        intact(k);
    }
    assert_eq!(std::fs::read_dir(&roots).unwrap().count(), keep.len(), "nothing added");
    // Either it measured in the directory it made (whatever the name points to) or it refused
    // clearly; never exit 0 with files in the wrong place.
    if !o.status.success() {
        assert!(stderr(&o).contains("test directory"), "{}", stderr(&o));
    }
    // What fsbench made was emptied; the renamed directories are all that remain.
    for e in std::fs::read_dir(&open_dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && !p.symlink_metadata().unwrap().file_type().is_symlink() {
            assert_eq!(std::fs::read_dir(&p).unwrap().count(), 0, "{} not emptied", p.display());
        }
    }
}

const LONG: &str = "[[test]]\nid = \"long\"\nname = \"long\"\nfile = { size = \"4M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\", offset = \"random\" }]\namount = { seconds = 60 }\n";

/// Wait until `dir` holds a `.fsbench-*` work directory with a file in it (the run is running
/// its test).
fn wait_for_workspace(dir: &Path, child: &mut Child, logs: &Path) -> PathBuf {
    let t = Instant::now();
    loop {
        if let Some(w) = std::fs::read_dir(dir).ok().and_then(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(".fsbench-"))
        }) {
            if std::fs::read_dir(&w).map(|mut r| r.next().is_some()).unwrap_or(false) {
                return w;
            }
        }
        // Generous: testbeds on a loaded 2-core machine shared with other test runs.
        if t.elapsed() > Duration::from_secs(120) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let status = child.wait().ok();
            let log: String = std::fs::read_dir(logs)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".stderr"))
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect();
            panic!("no work directory appeared in {} (child {status:?}): {log}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// On a failed assertion: SIGKILL the children, then `testbed cleanup` and `testbed down --all`
/// in the test's own state directory, so a failing test leaves nothing mounted.
struct Tidy {
    state: PathBuf,
    pids: Vec<u32>,
}

impl Drop for Tidy {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for &pid in &self.pids {
            // Only while it is still our child (a child reaped on the way to the panic may have
            // given its pid to another process).
            let ours = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|t| {
                t.rsplit(')').next().and_then(|r| r.split_whitespace().nth(1))
                    == Some(&std::process::id().to_string())
            });
            if ours {
                // SAFETY: our own child, by pid.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
        }
        std::thread::sleep(Duration::from_millis(500));
        let _ = fsbench_in(&self.state, &["testbed", "cleanup"]);
        let _ = fsbench_in(&self.state, &["testbed", "down", "--all"]);
    }
}

/// fsbench in the background with its state in `state`; stderr goes to `STATE/../NAME.stderr`.
fn spawn_in(state: &Path, args: &[&str]) -> Child {
    let log = state.with_file_name(format!("{}.stderr", fastrand_name()));
    command()
        .env("FSBENCH_STATE_DIR", state)
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

fn fastrand_name() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("child-{}", N.fetch_add(1, Ordering::Relaxed))
}

#[test]
fn cleanup_after_kill_9_removes_the_work_directory_only_of_the_dead_run() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    let t = TestDir::new();
    let state = t.path().join("state");
    let wl = t.write("long.toml", LONG);
    let dead_dir = TestDir::new();
    let live_dir = TestDir::new();
    let run = |d: &TestDir| {
        spawn_in(&state, &["run", "--dir", s(d.path()), "--workload", s(&wl), "--no-store"])
    };
    let mut dead = run(&dead_dir);
    let mut live = run(&live_dir);
    let dead_ws = wait_for_workspace(dead_dir.path(), &mut dead, t.path());
    let live_ws = wait_for_workspace(live_dir.path(), &mut live, t.path());
    dead.kill().unwrap(); // SIGKILL by pid
    dead.wait().unwrap();
    assert!(dead_ws.exists(), "a kill -9 leaves the work directory");
    let o = fsbench_in(&state, &["testbed", "cleanup"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("removed: work directory"), "{}", stdout(&o));
    assert!(!dead_ws.exists(), "{}", stdout(&o));
    assert!(dead_dir.entries().is_empty(), "{:?}", dead_dir.entries());
    assert!(live_ws.exists(), "the live run's work directory is untouched");
    assert!(stdout(&o).contains("running fsbench processes"), "{}", stdout(&o));
    // SAFETY: signalling our own child by pid.
    unsafe { libc::kill(live.id() as i32, libc::SIGINT) };
    let st = wait_within(&mut live, Duration::from_secs(600), "the live run after Ctrl-C");
    assert_eq!(st.code(), Some(130));
    assert!(live_dir.entries().is_empty(), "{:?}", live_dir.entries());
}

#[test]
fn six_concurrent_runs_on_one_database_store_every_test() {
    let t = TestDir::new();
    let db = t.path().join("shared.sqlite");
    let dirs: Vec<TestDir> = (0..6).map(|_| TestDir::new()).collect();
    let children: Vec<Child> = dirs
        .iter()
        .map(|d| {
            command()
                .args([
                    "run",
                    "--dir",
                    s(d.path()),
                    "--test",
                    "10,11,14",
                    "--scale",
                    "1/64",
                    "--db",
                    s(&db),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stderr(&o).contains("recording stopped"), "{}", stderr(&o));
    }
    let o = command().args(["history", "--db", s(&db)]).output().unwrap();
    let out = stdout(&o);
    let runs: Vec<&str> = out.lines().filter(|l| l.contains(" run ")).collect();
    assert_eq!(runs.len(), 6, "{}", stdout(&o));
    for l in runs {
        assert!(l.contains(" 3/3 ") && l.contains(" ok "), "every test of every run: {l}");
    }
}

/// A tiny ext2 filesystem on a loop device, made and removed by the test.
struct TinyFs {
    dir: TestDir,
    mnt: PathBuf,
}

impl TinyFs {
    fn new(mib: u32) -> Option<TinyFs> {
        if !have("mkfs.ext2") {
            skip("mkfs.ext2 not installed (apt-get install e2fsprogs)");
            return None;
        }
        let dir = TestDir::new();
        let img = dir.path().join("tiny.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let ok = |c: &mut Command| c.status().map(|s| s.success()).unwrap_or(false);
        assert!(ok(Command::new("truncate").args(["-s", &format!("{mib}M"), s(&img)])));
        assert!(ok(Command::new("mkfs.ext2").args(["-F", "-q", "-m", "0", s(&img)])));
        assert!(ok(Command::new("mount").args(["-o", "loop", s(&img), s(&mnt)])));
        Some(TinyFs { dir, mnt })
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        // `mount -o loop` made the loop device with autoclear: unmounting detaches it. The
        // unmount can be refused for a moment as busy (seen once in a full `make test`, which
        // left the mount behind): retry, then detach it lazily so nothing is left.
        let umount = |args: &[&str]| {
            Command::new("umount")
                .args(args)
                .arg(&self.mnt)
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let done = (0..50).any(|_| {
            umount(&[]) || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                false
            }
        });
        if !done {
            umount(&["-l"]);
        }
        let _ = &self.dir;
    }
}

#[test]
fn a_full_disk_under_the_database_is_named_and_fails_the_run() {
    if !is_root() {
        skip("needs root (mounts a tiny loop filesystem)");
        return;
    }
    let Some(fs) = TinyFs::new(8) else {
        return;
    };
    let db = fs.mnt.join("results.sqlite");
    let d = TestDir::new();
    let args = ["run", "--dir", s(d.path()), "--test", "10", "--scale", "1/64", "--db", s(&db)];
    let o = command().args(args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // Fill the rest of the filesystem.
    let _ = Command::new("dd")
        .args(["if=/dev/zero", &format!("of={}", s(&fs.mnt.join("fill"))), "bs=64k"])
        .stderr(Stdio::null())
        .status();
    let o = command().args(args).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("is full"), "{}", stderr(&o));
    drop(fs);
}

#[test]
fn cleanup_with_a_live_zfs_run_and_a_kept_testbed_removes_only_the_crashed_run() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    for p in ["zfs-fuse", "zpool", "mkfs.ext4"] {
        if !have(p) {
            skip(&format!("{p} not installed"));
            return;
        }
    }
    let _zfs = zfs_serial();
    let t = TestDir::new();
    let state = t.path().join("state");
    let work = TestDir::new();
    let wl = t.write("long.toml", LONG);
    let w = s(work.path());
    // A kept testbed.
    let o = fsbench_in(&state, &["testbed", "up", "tmpfs", "--workdir", w, "--size", "64M"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let kept_mnt = PathBuf::from(stdout(&o).trim());
    std::fs::write(kept_mnt.join("user-file"), b"mine").unwrap();
    let name =
        stderr(&o).split("testbed down ").nth(1).unwrap().split('`').next().unwrap().to_string();
    // A live zfs run and a run that will crash.
    let mut live = spawn_in(
        &state,
        &["run", "--fs", "zfs", "--workload", s(&wl), "--workdir", w, "--no-store"],
    );
    let mut crash = spawn_in(
        &state,
        &["run", "--fs", "ext4", "--workload", s(&wl), "--workdir", w, "--no-store"],
    );
    // If an assertion fails: kill the children, clean up after them and remove the kept testbed
    // (the state directory is this test's own).
    let mut tidy = Tidy { state: state.clone(), pids: vec![live.id(), crash.id()] };
    let mnt_of = |pid: u32| work.path().join(format!("tb-{pid}-0")).join("mnt");
    let live_ws = wait_for_workspace(&mnt_of(live.id()), &mut live, t.path());
    let crash_mnt = mnt_of(crash.id());
    wait_for_workspace(&crash_mnt, &mut crash, t.path());
    crash.kill().unwrap();
    tidy.pids.retain(|&p| p != crash.id());
    crash.wait().unwrap();
    let o = fsbench_in(&state, &["testbed", "cleanup"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(&format!("removed: ext4 mount {}", crash_mnt.display())), "{out}");
    assert!(!crash_mnt.exists(), "{out}");
    assert!(out.contains(&name), "the kept testbed is named as left alone: {out}");
    assert_eq!(std::fs::read(kept_mnt.join("user-file")).unwrap(), b"mine");
    assert!(live_ws.exists(), "the live run's files are untouched");
    assert!(fsbench::testbed::zfs::daemon_running(), "the live run's daemon survives");
    assert!(live.try_wait().unwrap().is_none(), "the live run is still running");
    // SAFETY: our own child, by pid.
    unsafe { libc::kill(live.id() as i32, libc::SIGINT) };
    tidy.pids.clear();
    let st = wait_within(&mut live, Duration::from_secs(600), "the live run after Ctrl-C");
    assert_eq!(st.code(), Some(130));
    let o = fsbench_in(&state, &["testbed", "down", &name]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(std::fs::read_dir(work.path()).unwrap().next().is_none(), "all gone");
}
