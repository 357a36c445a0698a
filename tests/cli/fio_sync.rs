//! fio's `fsync=N` through the real binary: the sync goes before the job's next write, so none
//! follows its last one (64 writes with `fsync=8`: 7 fsyncs; `end_fsync=1` adds the last), as
//! fio 3.33 does, counted under strace beside fio's own calls when fio is installed.

use crate::util::*;

/// How many `fsync` calls fsbench (`run --fio`), or fio with `fio`, makes on `job`.
fn fsyncs(job: &str, fio: bool) -> usize {
    let text = strace_fio_job(job, fio, "fsync,pwrite64");
    // Only the syncs of the threads that write the job's file (not the set-up's or the
    // cache drop's, made by other threads).
    let pid = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
    let writers: std::collections::BTreeSet<String> =
        text.lines().filter(|l| l.contains(" pwrite64(")).map(pid).collect();
    text.lines().filter(|l| l.contains(" fsync(") && writers.contains(&pid(l))).count()
}

/// 64 writes with fsync=8 make 7 fsyncs, and 8 with end_fsync=1, as fio's.
#[test]
fn fio_fsync_every_n_writes_goes_before_the_next_write() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let job = "[w]\nrw=write\nbs=4k\nsize=256k\nfsync=8\n";
    let end = "[w]\nrw=write\nbs=4k\nsize=256k\nfsync=8\nend_fsync=1\n";
    assert_eq!(fsyncs(job, false), 7);
    assert_eq!(fsyncs(end, false), 8);
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's counts checked alone");
        return;
    }
    assert_eq!(fsyncs(job, true), 7);
    assert_eq!(fsyncs(end, true), 8);
}
