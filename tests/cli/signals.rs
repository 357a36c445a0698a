//! Faults during a run: Ctrl-C / SIGTERM stop promptly and clean up; ENOSPC fails one test and
//! the others still run.

use crate::util::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

const LONG: &str = "[[test]]\nid = \"long\"\nname = \"long-randread\"\nfile = { size = \"8M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\", offset = \"random\" }]\namount = { seconds = 60 }\n\n[[test]]\nid = \"after\"\nname = \"never-reached\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n";

fn interrupt_with(signal: i32) {
    let d = TestDir::new();
    let w = d.write("long.toml", LONG);
    let run_dir = TestDir::new();
    let child = command()
        .args(["run", "--dir", run_dir.path().to_str().unwrap(), "--workload", w.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the timed phase is running (the test directory holds the file).
    let t = Instant::now();
    while run_dir.entries().is_empty() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(700));
    let sent = Instant::now();
    // SAFETY: signalling the child we spawned, by its pid.
    unsafe { libc::kill(child.id() as i32, signal) };
    let o = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(1), "stopped {took:?} after the signal");
    assert_eq!(o.status.code(), Some(130), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("long-randread"), "{out}");
    assert!(out.contains("(partial)"), "figures measured so far are printed:\n{out}");
    assert!(out.contains("run interrupted"), "{out}");
    assert!(out.contains("test after skipped"), "{out}");
    assert!(run_dir.entries().is_empty(), "test files removed: {:?}", run_dir.entries());
}

#[test]
fn ctrl_c_stops_within_a_second_and_cleans_up() {
    interrupt_with(libc::SIGINT);
}

#[test]
fn sigterm_stops_within_a_second_and_cleans_up() {
    interrupt_with(libc::SIGTERM);
}

#[test]
fn enospc_fails_that_test_and_the_others_run() {
    let Some(fs) = Tmpfs::mount("6M", false) else {
        skip("needs root to mount a small tmpfs");
        return;
    };
    let d = TestDir::new();
    let w = d.write(
        "full.toml",
        "[[test]]\nid = \"big\"\nname = \"too-big\"\nfile = { size = \"16M\", prefill = false }\n[[test.phase]]\nname = \"w\"\nopen = [\"create\", \"trunc\"]\npattern = [{ op = \"write\", size = \"1M\" }]\namount = { passes = 1 }\n\n[[test]]\nid = \"small\"\nname = \"fits\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n",
    );
    // Refused before any I/O by default; --no-space-check runs it into ENOSPC.
    let o =
        fsbench(&["run", "--dir", fs.path().to_str().unwrap(), "--workload", w.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs 16M of files"), "{}", stderr(&o));
    let (v, o) = run_json(&[
        "run",
        "--dir",
        fs.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--no-space-check",
    ]);
    assert_eq!(o.status.code(), Some(1), "non-zero at the end: {}", stderr(&o));
    let big = test_by_id(&v, "big");
    assert_eq!(big["status"]["state"], "failed");
    let reason = big["status"]["reason"].as_str().unwrap();
    assert!(reason.contains("No space left on device"), "{reason}");
    assert!(reason.contains("offset"), "says where: {reason}");
    assert_eq!(test_by_id(&v, "small")["status"]["state"], "ok");
    let left: Vec<_> = std::fs::read_dir(fs.path()).unwrap().collect();
    assert!(left.is_empty(), "files cleaned up");
}
