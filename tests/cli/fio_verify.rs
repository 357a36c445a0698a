//! fio's `verify` onto fsbench's own check: a job that verifies passes on intact data, fails
//! (exit status, fio's `error`, the file and offset named) on a block changed between the
//! write and the check, and `do_verify=0` reads nothing back.

use crate::util::*;
use std::os::unix::fs::FileExt;
use std::process::Command;

/// Run `job` with `fsbench fio --output-format=json` in the scratch directory `work`.
fn fio_json(dir: &TestDir, work: &TestDir, job: &str) -> (serde_json::Value, std::process::Output) {
    let f = dir.write("job.fio", job);
    let o = fsbench(&[
        "fio",
        &format!("--directory={}", work.path().display()),
        "--output-format=json",
        "--no-store",
        f.to_str().unwrap(),
    ]);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (v, o)
}

#[test]
fn a_verified_write_passes_and_a_flipped_block_fails_the_job_naming_file_and_offset() {
    let (dir, work, user) = (TestDir::new(), TestDir::new(), TestDir::new());
    let data = user.path().join("v.dat");
    let write =
        format!("[w]\nrw=randwrite\nbs=16k\nsize=1m\nverify=crc32c\nfilename={}\n", data.display());
    let (v, o) = fio_json(&dir, &work, &write);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["jobs"][0]["error"], 0, "{v}");
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 1 << 20, "{v}");
    let e = stderr(&o);
    assert!(e.contains("[differs from fio: verify-own-check]"), "the difference is said: {e}");
    let checked = |v: &serde_json::Value| -> Vec<u64> {
        let w = v["jobs"][0]["fsbench"]["warnings"].as_array().cloned().unwrap_or_default();
        w.iter()
            .filter(|w| w["kind"] == "verified")
            .filter_map(|w| w["blocks_intact"].as_u64())
            .collect()
    };
    assert_eq!(checked(&v), [256], "every 4 KiB block of the 1 MiB file checked: {v}");

    // The same file, checked by a verify_only job: intact.
    let check = format!(
        "[c]\nrw=randwrite\nbs=16k\nsize=1m\nverify=crc32c\nverify_only=1\nfilename={}\n",
        data.display()
    );
    let before = std::fs::read(&data).unwrap();
    let (v, o) = fio_json(&dir, &work, &check);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["jobs"][0]["error"], 0, "{v}");
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 0, "verify_only writes nothing: {v}");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1 << 20, "it reads the job's bytes: {v}");
    assert_eq!(std::fs::read(&data).unwrap(), before, "verify_only left the file as it was");
    assert_eq!(checked(&v), [256], "{v}");

    // One byte changed in the block at 196608 (offset 200000): the check fails the job.
    let f = std::fs::OpenOptions::new().write(true).open(&data).unwrap();
    f.write_all_at(&[!before[200_000]], 200_000).unwrap();
    drop(f);
    let (v, o) = fio_json(&dir, &work, &check);
    assert!(!o.status.success(), "a bad block fails the command: {}", stderr(&o));
    assert_ne!(v["jobs"][0]["error"], 0, "fio's error is set: {v}");
    let named = format!("verify: {} at offset 196608: ", data.display());
    let reason = v["jobs"][0]["fsbench"]["status"]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with(&named), "the file and the bad block's offset are named: {v}");
    assert!(reason.ends_with("(1 bad 4 KiB blocks in this file)"), "{reason}");
    // fio's normal output: the job's `err=` and a line with the bad block.
    let f = dir.write("check.fio", &check);
    let o = fsbench(&[
        "fio",
        &format!("--directory={}", work.path().display()),
        "--no-store",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("c: (groupid=0, jobs=1): err= 1:"), "{out}");
    assert!(out.contains(&format!("  error: {named}")), "{out}");
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files in its directory");
}

/// Reads of a whole 1 MiB (the check reads a file in such reads; the job writes) in an
/// `strace -f` log.
fn check_reads(log: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines().filter(|l| l.contains("read(") && l.ends_with(", 1048576) = 1048576")).count()
}

#[test]
fn do_verify_0_writes_without_reading_back() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let (dir, user) = (TestDir::new(), TestDir::new());
    let data = user.path().join("w.dat");
    let run = |do_verify: u8| {
        let job = dir.write(
            "w.fio",
            &format!(
                "[w]\nrw=write\nbs=64k\nsize=2m\nverify=md5\ndo_verify={do_verify}\nfilename={}\n",
                data.display()
            ),
        );
        let log = dir.path().join(format!("strace{do_verify}.log"));
        let run_dir = dir.path().join(format!("run{do_verify}"));
        std::fs::create_dir(&run_dir).unwrap();
        let mut c = Command::new("strace");
        let o = isolate(&mut c)
            .args(["-f", "-qq", "-e", "trace=openat,read", "-e", "signal=none", "-s", "300"])
            .arg("-o")
            .arg(&log)
            .arg(bin())
            .args(["run", "--fio"])
            .arg(&job)
            .args(["--no-store", "--min-time", "0", "--repeat", "1", "--dir"])
            .arg(&run_dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let _ = std::fs::remove_file(&data);
        (check_reads(&log), stderr(&o))
    };
    let (reads, e) = run(1);
    assert_eq!(reads, 2, "do_verify=1 reads the 2 MiB file back once: {e}");
    let (reads, e) = run(0);
    assert_eq!(reads, 0, "do_verify=0 reads nothing back: {e}");
    assert!(e.contains("do_verify=0"), "{e}");
}
