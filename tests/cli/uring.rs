//! The io_uring engine and O_DIRECT on real devices: queue depth reaches the device, direct reads
//! come from the device, filesystems that refuse O_DIRECT fail only their test.

use crate::util::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

fn workload(engine: &str, iodepth: u32, seconds: f64) -> String {
    format!(
        "[[test]]
id = \"qd\"
name = \"randread-4k-direct\"
engine = \"{engine}\"
iodepth = {iodepth}
direct = true
file = {{ size = \"64M\" }}
[[test.phase]]
name = \"randread\"
pattern = [{{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }}]
amount = {{ seconds = {seconds} }}
"
    )
}

/// Highest number of reads in flight (/sys/block/DEV/inflight, first column) sampled every
/// 200 µs while `f` runs. Writes are left out: the untimed prefill's writeback queues deep.
fn max_inflight<T>(dev: &str, f: impl FnOnce() -> T) -> (u64, T) {
    let name = dev.trim_start_matches("/dev/").to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let max = Arc::new(AtomicU64::new(0));
    let (s, m) = (stop.clone(), max.clone());
    let sampler = std::thread::spawn(move || {
        let p = format!("/sys/block/{name}/inflight");
        while !s.load(Ordering::Relaxed) {
            if let Ok(t) = std::fs::read_to_string(&p) {
                let n: u64 = t.split_whitespace().next().and_then(|x| x.parse().ok()).unwrap_or(0);
                m.fetch_max(n, Ordering::Relaxed);
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    });
    let r = f();
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    (max.load(Ordering::Relaxed), r)
}

fn timed_phase(t: &serde_json::Value) -> &serde_json::Value {
    t["reps"][0]["phases"].as_array().unwrap().iter().find(|p| p["timed"] == true).unwrap()
}

#[test]
fn io_uring_depth_reaches_the_loop_device_and_direct_reads_come_from_it() {
    use fsbench::testbed::{FsConfig, Testbed, TestbedOptions};
    if !is_root() || !have("mkfs.ext4") || !std::path::Path::new("/dev/loop-control").exists() {
        skip("needs root, loop devices and mkfs.ext4 (e2fsprogs)");
        return;
    }
    // A loop device over a file in /dev/shm: fast, so the queue is the engine's, not the disk's.
    std::fs::create_dir_all("/dev/shm/fsbench-tests").unwrap();
    let work = tempfile::tempdir_in("/dev/shm/fsbench-tests").unwrap();
    let opts = TestbedOptions {
        workdir: work.path().to_path_buf(),
        size_bytes: 256 << 20,
        ..TestbedOptions::default()
    };
    let tb = Testbed::up(&FsConfig::parse("ext4").unwrap(), &opts).expect("ext4 testbed");
    let dir = tb.mountpoint().to_str().unwrap().to_string();
    let dev = tb.block_devices()[0].clone();
    let files = TestDir::new();
    let run = |engine: &str, depth: u32| {
        let w = files.write(&format!("{engine}-{depth}.toml"), &workload(engine, depth, 1.5));
        max_inflight(&dev, || {
            run_json(&["run", "--dir", &dir, "--workload", w.to_str().unwrap(), "--no-store"])
        })
    };
    let (deep, (v16, o16)) = run("io_uring", 16);
    let (shallow, (v1, o1)) = run("psync", 1);
    tb.teardown().expect("testbed teardown");
    eprintln!("most requests in flight at {dev}: io_uring iodepth 16: {deep}; psync: {shallow}");
    assert!(o16.status.success(), "{}", stderr(&o16));
    assert!(o1.status.success(), "{}", stderr(&o1));
    assert_eq!(v16["tests"][0]["status"]["state"], "ok", "{}", v16["tests"][0]);
    assert!(deep > 1, "io_uring at iodepth 16: at most {deep} request(s) in flight at {dev}");
    assert!(
        deep > shallow,
        "iodepth 16 ({deep} in flight) should queue deeper than psync ({shallow})"
    );
    let ph = timed_phase(&v16["tests"][0]);
    assert_eq!(
        (ph["engine"].as_str(), ph["iodepth"].as_u64(), ph["direct"].as_bool()),
        (Some("io_uring"), Some(16), Some(true))
    );
    let ph = timed_phase(&v1["tests"][0]);
    assert_eq!(
        (ph["engine"].as_str(), ph["iodepth"].as_u64(), ph["direct"].as_bool()),
        (Some("psync"), Some(1), Some(true))
    );
    for v in [&v16, &v1] {
        let ph = timed_phase(&v["tests"][0]);
        // The page cache is bypassed: the cache precondition says "direct", and every byte read
        // came from the device.
        assert_eq!(ph["cache"]["required"], "direct", "{}", ph["cache"]);
        assert_eq!(ph["cache"]["met"], true);
        let read = ph["bytes_read"].as_u64().unwrap();
        let dev_read = ph["device"]["read_bytes"].as_u64().unwrap();
        assert!(read > 0 && dev_read >= read * 9 / 10, "read {read}, device read {dev_read}");
    }
}

/// A ramfs mounted in a fresh directory (ramfs refuses O_DIRECT; tmpfs accepts it since Linux
/// 6.6), unmounted on drop.
struct Ramfs(TestDir);

impl Ramfs {
    fn mount() -> Option<Ramfs> {
        let d = TestDir::new();
        let st = std::process::Command::new("mount")
            .args(["-t", "ramfs", "fsbench-test", d.path().to_str().unwrap()])
            .status()
            .ok()?;
        st.success().then_some(Ramfs(d))
    }
}

impl Drop for Ramfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn o_direct_refused_by_the_filesystem_fails_that_test_at_its_start_and_the_others_run() {
    if !is_root() {
        skip("needs root to mount ramfs");
        return;
    }
    let Some(fs) = Ramfs::mount() else {
        skip("ramfs could not be mounted");
        return;
    };
    let dir = fs.0.path().to_str().unwrap().to_string();
    let files = TestDir::new();
    let w = files.write(
        "w.toml",
        &format!(
            "{}\n[[test]]\nid = \"buffered\"\nname = \"b\"\nfile = {{ size = \"4M\" }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n",
            workload("io_uring", 4, 0.2)
        ),
    );
    // ramfs reports no free space (it has no limit): the space check is skipped.
    let (v, o) = run_json(&[
        "run",
        "--dir",
        &dir,
        "--workload",
        w.to_str().unwrap(),
        "--no-store",
        "--no-space-check",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = test_by_id(&v, "qd");
    assert_eq!(t["status"]["state"], "failed");
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("(ramfs) refuses O_DIRECT") && reason.contains("remove direct"),
        "{reason}"
    );
    // Failed at its start: no repetition ran.
    assert_eq!(t["reps"].as_array().unwrap().len(), 0, "{t}");
    assert_eq!(test_by_id(&v, "buffered")["status"]["state"], "ok");
    assert!(std::fs::read_dir(&dir).unwrap().next().is_none(), "nothing left on the ramfs");
}

#[test]
fn enospc_completion_fails_the_test_with_the_reason() {
    let Some(fs) = Tmpfs::mount("8M", false) else {
        skip("needs root to mount tmpfs");
        return;
    };
    let files = TestDir::new();
    let w = files.write(
        "w.toml",
        "[[test]]\nid = \"full\"\nname = \"fill\"\nengine = \"io_uring\"\niodepth = 8\nfile = { size = \"64M\", prefill = false }\n[[test.phase]]\nname = \"w\"\nopen = [\"create\"]\npattern = [{ op = \"write\", size = \"64K\" }]\namount = { passes = 1 }\n",
    );
    let (v, o) = run_json(&[
        "run",
        "--dir",
        fs.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--no-store",
        "--no-space-check",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = test_by_id(&v, "full");
    assert_eq!(t["status"]["state"], "failed");
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(reason.contains("write of") && reason.contains("No space left on device"), "{reason}");
    assert!(std::fs::read_dir(fs.path()).unwrap().next().is_none(), "nothing left on the tmpfs");
}

/// Run fsbench with `args` (plus `--format json`), killing it and failing the test if it has
/// not finished after `limit`; `watch` is called with its pid every 5 ms while it runs. Its
/// output is read as it comes (a report larger than the pipe's 64 KiB would otherwise block
/// fsbench in its write until the limit).
fn run_json_within(
    args: &[&str],
    limit: std::time::Duration,
    mut watch: impl FnMut(u32),
) -> (serde_json::Value, std::process::Output) {
    use std::io::Read;
    use std::process::Stdio;
    let mut c = command();
    c.args(args).args(["--format", "json"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("start fsbench");
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|r| Box::new(r) as Box<dyn Read + Send>));
    let t0 = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for fsbench") {
            break st;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let e = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
            panic!("fsbench still running after {limit:?} (hung?); stderr:\n{e}");
        }
        watch(child.id());
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let o = std::process::Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    };
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}); stderr:\n{}", stderr(&o)));
    (v, o)
}

/// Whether process `pid` has a thread whose name starts with `prefix`.
fn has_thread(pid: u32, prefix: &str) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return false };
    tasks.flatten().any(|t| {
        std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with(prefix))
    })
}

fn uring_workload(id: &str, keys: &str, amount: &str) -> String {
    format!(
        "[[test]]
id = \"{id}\"
name = \"{id}\"
engine = \"io_uring\"
iodepth = 8
{keys}
file = {{ size = \"8M\" }}
[[test.phase]]
name = \"randwrite\"
pattern = [{{ op = \"write\", size = \"4K\", offset = \"random\", align = \"4K\" }}]
amount = {{ ops = 2000 }}
[[test.phase]]
name = \"randread\"
pattern = [{{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }}]
amount = {amount}
"
    )
}

#[test]
fn sqpoll_runs_with_its_kernel_poller_and_the_result_records_it() {
    if !is_root() {
        skip("needs root: an SQ polling thread needs CAP_SYS_NICE on this kernel's defaults");
        return;
    }
    let files = TestDir::new();
    let work = TestDir::new();
    let w = files.write("w.toml", &uring_workload("sq", "sqpoll = true", "{ seconds = 1.5 }"));
    let mut poller_seen = false;
    let (v, o) = run_json_within(
        &[
            "run",
            "--dir",
            work.path().to_str().unwrap(),
            "--workload",
            w.to_str().unwrap(),
            "--no-store",
        ],
        std::time::Duration::from_secs(300),
        // The kernel's SQ poller is a thread of the process, named iou-sqp-PID.
        |pid| poller_seen |= has_thread(pid, "iou-sqp-"),
    );
    assert!(o.status.success(), "{:?} {}\n{v}", o.status, stderr(&o));
    let t = test_by_id(&v, "sq");
    assert_eq!(t["status"]["state"], "ok", "{t}");
    assert!(poller_seen, "no iou-sqp-* thread was seen while the sqpoll test ran");
    for ph in t["reps"][0]["phases"].as_array().unwrap() {
        assert_eq!(ph["uring"]["sqpoll"], true, "{}", ph["uring"]);
        assert!(ph["data_ops"].as_u64().unwrap() > 0, "{ph}");
    }
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
}

#[test]
fn fixedbufs_and_unregistered_files_run_and_are_recorded() {
    let files = TestDir::new();
    let work = TestDir::new();
    let w = files.write(
        "w.toml",
        &format!(
            "{}{}",
            uring_workload("fixed", "fixedbufs = true", "{ ops = 2000 }"),
            uring_workload("byfd", "registerfiles = false", "{ ops = 2000 }")
        ),
    );
    let (v, o) = run_json(&[
        "run",
        "--dir",
        work.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--no-store",
    ]);
    if !o.status.success() && stderr(&o).contains("io_uring") && !is_root() {
        skip(&format!("io_uring or locked memory unavailable here: {}", stderr(&o)));
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    for (id, fixed, registered) in [("fixed", true, true), ("byfd", false, false)] {
        let t = test_by_id(&v, id);
        assert_eq!(t["status"]["state"], "ok", "{t}");
        for ph in t["reps"][0]["phases"].as_array().unwrap() {
            let u = &ph["uring"];
            assert_eq!(
                (u["fixedbufs"] == fixed, u["registerfiles"] == registered),
                (true, true),
                "{u}"
            );
            assert_eq!(ph["data_ops"], 2000, "{ph}");
        }
    }
}

#[test]
fn iopoll_on_a_loop_device_fails_that_test_saying_why_without_hanging() {
    if !is_root() || !have("mkfs.ext4") || !std::path::Path::new("/dev/loop-control").exists() {
        skip("needs root, loop devices and mkfs.ext4 (e2fsprogs)");
        return;
    }
    let files = TestDir::new();
    let work = TestDir::new();
    // A loop device has no poll queues: the first polled completion is EOPNOTSUPP.
    let polled = "[[test]]\nid = \"polled\"\nname = \"p\"\nengine = \"io_uring\"\niodepth = 4\ndirect = true\niopoll = true\nfile = { size = \"8M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }]\namount = { seconds = 60 }\n";
    let after = "[[test]]\nid = \"after\"\nname = \"a\"\nengine = \"io_uring\"\niodepth = 4\ndirect = true\nfile = { size = \"8M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }]\namount = { ops = 500 }\n";
    let w = files.write("w.toml", &format!("{polled}{after}"));
    let t0 = std::time::Instant::now();
    let (v, o) = run_json_within(
        &[
            "run",
            "--fs",
            "ext4",
            "--size",
            "128M",
            "--workdir",
            work.path().to_str().unwrap(),
            "--workload",
            w.to_str().unwrap(),
            "--no-store",
        ],
        std::time::Duration::from_secs(600),
        |_| {},
    );
    let took = t0.elapsed();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = test_by_id(&v, "polled");
    assert_eq!(t["status"]["state"], "failed", "{t}");
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("does not support polled I/O") && reason.contains("iopoll = false"),
        "{reason}"
    );
    assert_eq!(test_by_id(&v, "after")["status"]["state"], "ok");
    // The polled phase asked for 60 s; failing at the first completion ends it long before.
    assert!(took < std::time::Duration::from_secs(55), "took {took:?}: did the polled test wait?");
    assert!(work.entries().is_empty(), "testbed left behind: {:?}", work.entries());
}

/// Make the child's `io_uring_setup` fail with `errno`, as a container's seccomp filter does:
/// a classic BPF program that returns ERRNO for system call 425 (io_uring_setup, the same
/// number on every architecture) and allows everything else.
fn deny_io_uring_setup(c: &mut std::process::Command, errno: i32) {
    use std::os::unix::process::CommandExt;
    const NR_IO_URING_SETUP: u32 = 425;
    let filter = [
        // A = seccomp_data.nr
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: NR_IO_URING_SETUP,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | errno as u32,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    // SAFETY: between fork and exec the closure makes two prctl calls (async-signal-safe) on
    // data owned by the closure.
    unsafe {
        c.pre_exec(move || {
            let prog =
                libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut _ };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog as *const _)
                    != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn io_uring_blocked_by_seccomp_names_the_cause_and_psync_tests_still_run() {
    let files = TestDir::new();
    let work = TestDir::new();
    let psync = "[[test]]\nid = \"plain\"\nname = \"plain\"\nfile = { size = \"4M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }]\namount = { ops = 500 }\n";
    let w =
        files.write("w.toml", &format!("{}{psync}", uring_workload("ring", "", "{ ops = 500 }")));
    for (errno, cause) in [(libc::EPERM, "seccomp filter"), (libc::ENOSYS, "has no io_uring")] {
        let mut c = command();
        c.args([
            "run",
            "--dir",
            work.path().to_str().unwrap(),
            "--workload",
            w.to_str().unwrap(),
            "--no-store",
            "--format",
            "json",
        ]);
        deny_io_uring_setup(&mut c, errno);
        let o = c.output().expect("run fsbench under the seccomp filter");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}); stderr:\n{}", stderr(&o)));
        let t = test_by_id(&v, "ring");
        assert_eq!(t["status"]["state"], "failed", "{t}");
        let reason = t["status"]["reason"].as_str().unwrap();
        assert!(reason.contains(cause) && reason.contains("engine = \"psync\""), "{reason}");
        assert_eq!(test_by_id(&v, "plain")["status"]["state"], "ok");
        assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
    }
}
