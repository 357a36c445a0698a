//! fio's `pre_read` through the real binary: the job's file is read into the page cache before
//! its I/O and nothing drops it (fio turns `invalidate` off), so a buffered read job starts
//! cached. Under strace the job's own drop of its file's pages (`POSIX_FADV_DONTNEED` when it
//! starts, which both tools make without `pre_read`) is gone in fio 3.33 and fsbench alike (fio
//! still drops the pages once after laying the file out, before its pre-read; fsbench reads
//! the file it laid out); fsbench's record says the timed phase found the file cached.

use crate::util::*;

/// The `fadvise64(..., POSIX_FADV_DONTNEED)` calls of the job, by fsbench or fio.
fn drops(job: &str, fio: bool) -> usize {
    let text = strace_fio_job(job, fio, "fadvise64");
    text.lines().filter(|l| l.contains("POSIX_FADV_DONTNEED")).count()
}

const JOB: &str = "[r]\nrw=read\nbs=4k\nsize=1m\n";

#[test]
fn pre_read_starts_a_buffered_job_cached_without_dropping_its_pages() {
    let pre = format!("{JOB}pre_read=1\n");
    let work = TestDir::new();
    let file = work.write("r.fio", &pre);
    let dir = TestDir::new();
    let o = command()
        .args(["run", "--fio"])
        .arg(&file)
        .args(["--no-store", "--min-time", "0", "--format", "json", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let phases = v["tests"][0]["reps"][0]["phases"].as_array().unwrap();
    let timed = phases.iter().find(|p| p["timed"] == true).unwrap();
    assert_eq!(timed["cache"]["required"], "cached", "{timed}");
    assert_eq!(timed["cache"]["met"], true, "{timed}");
    if !have("strace") {
        skip("strace not installed (apt-get install strace): the system calls not checked");
        return;
    }
    assert_eq!(drops(&pre, false), 0, "fsbench drops the pre-read file's pages");
    assert!(drops(JOB, false) > 0, "without pre_read fsbench starts uncached");
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's calls checked alone");
        return;
    }
    let (with, without) = (drops(&pre, true), drops(JOB, true));
    assert_eq!(with + 1, without, "fio's drops: {with} with pre_read, {without} without");
}
