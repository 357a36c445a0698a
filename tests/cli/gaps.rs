//! Bad input that used to get through (issue "Safe as root, nothing lost"): each case with its
//! exit code and message, and nothing done on the target.

use crate::util::*;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Run a workload with one test of id `id`, file size `size` and amount `amount` in a fresh
/// directory; returns the output and asserts nothing was created there.
fn run_workload(id: &str, size: &str, amount: &str, extra: &[&str]) -> std::process::Output {
    let d = TestDir::new();
    let run_dir = TestDir::new();
    let f = d.write(
        "w.toml",
        &format!(
            "[[test]]\nid = {id}\nname = \"n\"\nfile = {{ size = \"{size}\" }}\n[[test.phase]]\nname = \"w\"\nopen = [\"create\"]\npattern = [{{ op = \"write\", size = \"4K\" }}]\namount = {amount}\n"
        ),
    );
    let mut args = vec!["run", "--dir", s(run_dir.path()), "--workload", s(&f), "--no-store"];
    args.extend(extra);
    let o = fsbench(&args);
    if o.status.code() == Some(2) {
        assert!(run_dir.entries().is_empty(), "no I/O on bad input: {:?}", run_dir.entries());
    }
    o
}

fn assert_bad(o: &std::process::Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stderr(o).contains(needle), "stderr should mention {needle:?}:\n{}", stderr(o));
}

#[test]
fn test_ids_that_are_not_safe_names_are_refused() {
    for (id, needle) in [
        ("\"a/b\"", "contains '/'"),
        ("\"..\"", "must not start with '.'"),
        ("\"x\\u0000y\"", "contains '\\0'"),
        ("\"t\\u001b[31m\"", "contains '\\u{1b}'"),
    ] {
        let o = run_workload(id, "1M", "{ passes = 1 }", &[]);
        assert_bad(&o, needle);
    }
    let long = format!("\"{}\"", "a".repeat(10_000));
    let o = run_workload(&long, "1M", "{ passes = 1 }", &[]);
    assert_bad(&o, "10000 characters long; at most 64");
}

#[test]
fn a_file_larger_than_the_free_space_is_refused_before_any_io() {
    for size in ["1T", "1E"] {
        let t = Instant::now();
        let o = run_workload("\"big\"", size, "{ passes = 1 }", &[]);
        assert_bad(&o, "free; use a smaller --scale or size");
        assert!(t.elapsed() < Duration::from_secs(20), "refused at once");
    }
}

#[test]
fn unbounded_amounts_need_allow_long() {
    for amount in ["{ bytes = \"1E\" }", "{ seconds = 1e12 }", "{ ops = 100000000000 }"] {
        let o = run_workload("\"u\"", "1M", amount, &[]);
        assert_bad(&o, "--allow-long");
    }
    // With --allow-long the limit is lifted (checked here by validation alone: --scale keeps the
    // file, the run would take days, so it is stopped by a size the directory cannot hold).
    let o = run_workload("\"u\"", "1E", "{ seconds = 1e12 }", &["--allow-long"]);
    assert_bad(&o, "free;");
}

#[test]
fn a_fifo_workload_is_refused_without_blocking() {
    let d = TestDir::new();
    let fifo = d.path().join("w.toml");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let run_dir = TestDir::new();
    let mut child = command()
        .args(["run", "--dir", s(run_dir.path()), "--workload", s(&fifo), "--no-store"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("fsbench blocked on a FIFO workload");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    assert_bad(&o, "not a regular file");
}

#[test]
fn control_characters_in_names_are_escaped_on_the_terminal() {
    let d = TestDir::new();
    let run_dir = TestDir::new();
    let f = d.write(
        "w.toml",
        "[[test]]\nid = \"e\"\nname = \"\\u001b[2J\\u001b]0;pwned\\u0007red\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"p\\u001b[31m\"\nopen = [\"create\"]\npattern = [{ op = \"write\", size = \"4K\" }]\namount = { passes = 1 }\n",
    );
    let o = fsbench(&["run", "--dir", s(run_dir.path()), "--workload", s(&f), "--no-store"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for out in [&o.stdout, &o.stderr] {
        assert!(
            !out.contains(&0x1b) && !out.contains(&0x07),
            "raw control characters reached the terminal"
        );
    }
    assert!(stdout(&o).contains("\\u{1b}[2J"), "{}", stdout(&o));
}

#[test]
fn database_paths_that_are_not_regular_files_are_refused_before_anything_is_created() {
    let d = TestDir::new();
    let run_dir = TestDir::new();
    let fifo = d.path().join("db.fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let before = std::fs::symlink_metadata("/dev/null-journal").is_ok();
    for (db, what) in
        [("/dev/null", "a character device"), (s(&fifo), "a FIFO"), (s(d.path()), "a directory")]
    {
        let o = fsbench(&["run", "--dir", s(run_dir.path()), "--test", "10", "--db", db]);
        assert_bad(&o, &format!("is {what}, not a regular file"));
        assert!(run_dir.entries().is_empty());
        let o = fsbench(&["history", "--db", db]);
        assert_bad(&o, "not a regular file");
    }
    if !before {
        assert!(std::fs::symlink_metadata("/dev/null-journal").is_err(), "/dev/null-journal made");
    }
    assert_eq!(d.entries(), ["db.fifo"], "nothing created beside");
    // A zero-byte file is a new database.
    let empty = d.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let o = fsbench(&[
        "run",
        "--dir",
        s(run_dir.path()),
        "--test",
        "10",
        "--scale",
        "1/64",
        "--db",
        s(&empty),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fsbench(&["history", "--db", s(&empty)]);
    assert!(stdout(&o).contains(" run "), "{}", stdout(&o));
}

#[test]
fn compare_gives_every_configuration_the_same_image_size() {
    if skip_testbeds(&["mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    let work = TestDir::new();
    let o = fsbench(&[
        "compare",
        "ext4",
        "xfs",
        "--size",
        "64M",
        "--test",
        "10",
        "--scale",
        "1/64",
        "--workdir",
        s(work.path()),
        "--format",
        "json",
        "--no-store",
        "--no-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("every configuration gets 300M images"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sizes: Vec<&serde_json::Value> =
        v["configs"].as_array().unwrap().iter().map(|c| &c["env"]["device_size_bytes"]).collect();
    assert_eq!(sizes.len(), 2, "{v}");
    assert_eq!(sizes[0], sizes[1], "same size for all: {sizes:?}");
    assert_eq!(sizes[0], 300u64 << 20);
}

#[test]
fn a_tmpfs_size_option_is_recorded_as_mounted() {
    if skip_testbeds(&[]) {
        return;
    }
    let work = TestDir::new();
    let o = fsbench(&["testbed", "up", "tmpfs:mount=size=3M", "--workdir", s(work.path())]);
    assert!(o.status.success(), "{}", stderr(&o));
    let name =
        stderr(&o).split("testbed down ").nth(1).unwrap().split('`').next().unwrap().to_string();
    let _down = DownOnPanic(name.clone());
    assert!(stderr(&o).contains("tmpfs of 3M"), "{}", stderr(&o));
    let o = fsbench(&["testbed", "down", &name]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn rejected_mkfs_and_mount_options_and_sizes_are_bad_input() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let work = TestDir::new();
    let w = s(work.path());
    for (fs, needle) in [
        ("ext4:mkfs=-I 3", "mkfs refused the options given (-I 3)"),
        (
            "ext4:mount=inode_readahead_blks=3",
            "mount refused the options given (inode_readahead_blks=3)",
        ),
        ("tmpfs:mount=mpol=bind:99", "mount refused the options given (mpol=bind:99)"),
    ] {
        let o = fsbench(&["run", "--fs", fs, "--test", "10", "--scale", "1/64", "--workdir", w]);
        assert_bad(&o, needle);
        assert!(work.entries().is_empty(), "{fs}: {:?}", work.entries());
        // The failed command and its output once, not once per layer of the error.
        let e = stderr(&o);
        assert_eq!(e.matches("` failed (").count(), 1, "{fs}: {e}");
        let dmesg = std::process::Command::new("dmesg").output();
        if fs.starts_with("ext4:mount") && dmesg.is_ok_and(|d| d.status.success()) {
            // The kernel says which option it refused.
            assert!(e.contains("kernel log: ") && e.contains("inode_readahead_blks"), "{e}");
        }
    }
    let o = fsbench(&["run", "--fs", "ext4", "--size", "1E", "--test", "10", "--workdir", w]);
    assert_bad(&o, "not enough space");
    assert!(work.entries().is_empty(), "{:?}", work.entries());
}

#[test]
fn ctrl_c_during_set_up_exits_130_and_leaves_nothing() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let work = TestDir::new();
    let child = command()
        .args(["run", "--fs", "ext4", "--size", "2G", "--test", "10", "--scale", "1/64"])
        .args(["--workdir", s(work.path()), "--no-store"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt as soon as a loop device exists (mkfs is about to run or running).
    let t = Instant::now();
    loop {
        let loops = std::process::Command::new("losetup").arg("-a").output().unwrap();
        if String::from_utf8_lossy(&loops.stdout).contains(s(work.path())) {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "no loop device appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: our own child, by pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(!stderr(&o).contains("mkfs failed"), "{}", stderr(&o));
    assert!(work.entries().is_empty(), "{:?}", work.entries());
    let loops = std::process::Command::new("losetup").arg("-a").output().unwrap();
    assert!(!String::from_utf8_lossy(&loops.stdout).contains(s(work.path())));
}

#[test]
fn a_zfs_mountpoint_property_is_refused_before_anything_is_made() {
    let work = TestDir::new();
    let mp = work.path().join("mp");
    let fs = format!("zfs:mountpoint={}", s(&mp));
    let o = fsbench(&["run", "--fs", &fs, "--test", "10", "--workdir", s(work.path())]);
    assert_bad(&o, "zfs property `mountpoint` is fsbench's to set");
    assert!(work.entries().is_empty(), "{:?}", work.entries());
}

#[test]
fn a_rejected_zfs_property_is_bad_input_and_leaves_nothing() {
    if skip_testbeds(&["zfs-fuse", "zpool", "zfs"]) {
        return;
    }
    let _zfs = zfs_serial();
    let work = TestDir::new();
    let o = fsbench(&[
        "run",
        "--fs",
        "zfs:compression=lz4",
        "--test",
        "10",
        "--scale",
        "1/64",
        "--workdir",
        s(work.path()),
    ]);
    // Past the allow-list (a known word), refused by zfs-fuse, which has no lz4.
    assert_bad(&o, "zfs set refused the options given (compression=lz4)");
    assert!(work.entries().is_empty(), "{:?}", work.entries());
}

#[test]
fn compare_checks_each_directory_for_space() {
    let a = TestDir::new();
    let b = TestDir::new();
    let d = TestDir::new();
    let f = d.write(
        "big.toml",
        "[[test]]\nid = \"big\"\nname = \"n\"\nfile = { size = \"1E\" }\n[[test.phase]]\nname = \"w\"\nopen = [\"create\"]\npattern = [{ op = \"write\", size = \"4K\" }]\namount = { passes = 1 }\n",
    );
    let o = fsbench(&["compare", s(a.path()), s(b.path()), "--workload", s(&f), "--no-store"]);
    assert_bad(&o, "test big (n) needs 1048576T of files");
    assert!(a.entries().is_empty() && b.entries().is_empty());
}

/// A testbed of a given --size that a test's files cannot fit in is refused before it is made,
/// memory-relative sizes (`freemem/2`, unit14's test 8) included: exit 2 naming the test, not a
/// run into ENOSPC.
#[test]
fn compare_checks_a_sized_testbed_for_space_including_freemem_sizes() {
    let d = TestDir::new();
    let work = TestDir::new();
    // Half of free memory: more than 64 MiB on any machine that runs the tests.
    let f = d.write(
        "mem.toml",
        "[[test]]\nid = \"8\"\nname = \"half-of-memory\"\nfile = { size = \"freemem/2\" }\n[[test.phase]]\nname = \"w\"\nopen = [\"create\"]\npattern = [{ op = \"write\", size = \"1M\" }]\namount = { passes = 1 }\n",
    );
    let o = fsbench(&[
        "compare",
        "ext4",
        "xfs",
        "--workload",
        s(&f),
        "--size",
        "64M",
        "--workdir",
        s(work.path()),
        "--no-store",
    ]);
    assert_bad(&o, "test 8 (half-of-memory) needs ");
    assert!(stderr(&o).contains("testbed's image is 64M"), "{}", stderr(&o));
    assert!(stderr(&o).contains("larger --size"), "{}", stderr(&o));
    assert!(work.entries().is_empty(), "{:?}", work.entries());
}

/// Help says what the commands do: compare's images are fallocated by default (not sparse);
/// `testbed up` keeps its work directory, has no suite to size for and no phases to evict.
#[test]
fn testbed_help_is_true() {
    let o = fsbench(&["compare", "--help"]);
    let h = stdout(&o);
    assert!(!h.contains("sparse image file"), "{h}");
    assert!(h.contains("allocated with fallocate by default"), "{h}");
    let o = fsbench(&["testbed", "up", "--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let h = stdout(&o);
    for wrong in ["removed afterwards", "largest test", "--remount-evict"] {
        assert!(!h.contains(wrong), "{wrong}: {h}");
    }
    assert!(h.contains("kept until `fsbench testbed down`"), "{h}");
    assert!(h.contains("Default: 1 GiB"), "{h}");
    // The options that apply are still there.
    for opt in ["--workdir", "--size", "--image-alloc", "--device"] {
        assert!(h.contains(opt), "{opt}: {h}");
    }
}

/// `fsbench run` alone names both ways to say where to run, not only --dir.
#[test]
fn run_without_a_target_names_dir_and_fs() {
    let o = fsbench(&["run"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("--dir <DIR>") && err.contains("--fs <CONFIG>"), "{err}");
    // --fs and --dir together are still refused.
    let o = fsbench(&["run", "--fs", "ext4", "--dir", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}
