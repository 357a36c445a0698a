//! fio's sequential variants through the real binary, op by op under strace: `rw=read:-8k`
//! reads backwards as fio 3.33 does, and numjobs on one `filename` share one file that every
//! thread reads whole.

use crate::util::*;
use std::collections::BTreeMap;
use std::process::Command;

/// `(pid, call, offset)` of the `pread64`/`pwrite64` calls of `size` bytes in an `strace -f`
/// log, and the paths opened.
fn calls(log: &std::path::Path, size: u64) -> (Vec<(String, String, u64)>, Vec<String>) {
    let text = std::fs::read_to_string(log).unwrap();
    let mut io = Vec::new();
    let mut opened = Vec::new();
    for l in text.lines() {
        let pid = l.split_whitespace().next().unwrap_or("").to_string();
        if let Some((_, rest)) = l.split_once("openat(") {
            if let Some(p) = rest.split('"').nth(1) {
                if !l.contains("= -1") {
                    opened.push(p.to_string());
                }
            }
            continue;
        }
        for call in ["pread64", "pwrite64"] {
            // A call another thread interrupted ends on a "<... pread64 resumed>" line.
            let rest = l
                .split_once(&format!("{call}("))
                .or_else(|| l.split_once(&format!("{call} resumed>")))
                .map(|(_, r)| r);
            let Some(rest) = rest else { continue };
            let Some((args, _)) = rest.rsplit_once(')') else { continue };
            let args: Vec<&str> = args.split(", ").collect();
            let n = args.len();
            if n < 2 {
                continue;
            }
            let (len, off) = (args[n - 2].trim().parse::<u64>(), args[n - 1].trim().parse::<u64>());
            if let (Ok(len), Ok(off)) = (len, off) {
                if len == size {
                    io.push((pid.clone(), call.to_string(), off));
                }
            }
        }
    }
    (io, opened)
}

/// Runs `job` (a fio job file's text) under strace; the log's path.
fn traced(d: &TestDir, job: &str) -> Option<std::path::PathBuf> {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return None;
    }
    let file = d.write("j.fio", job);
    let log = d.path().join("strace.log");
    let run_dir = d.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let mut c = Command::new("strace");
    let o = isolate(&mut c)
        .args(["-f", "-qq", "-e", "trace=openat,pread64,pwrite64", "-e", "signal=none", "-s"])
        .args(["0", "-o"])
        .arg(&log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(&file)
        .args(["--no-store", "--min-time", "0", "--dir"])
        .arg(&run_dir)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    Some(log)
}

/// fio 3.33 (strace, 64 KiB, bs=4k, rw=read:-8k) reads block 0, then 14, 13, ... 0: the
/// translated job's timed reads are the same, in the same order. Reads of 4 KiB made by the
/// set-up (the cache check) come before them; the timed pass is the log's last 16.
#[test]
fn a_backwards_read_reads_as_fio() {
    let d = TestDir::new();
    let Some(log) = traced(&d, "[b]\nbs=4k\nrw=read:-8k\nsize=64k\n") else { return };
    let (io, _) = calls(&log, 4096);
    let reads: Vec<u64> = io.iter().filter(|c| c.1 == "pread64").map(|c| c.2 / 4096).collect();
    assert!(reads.len() >= 16, "{reads:?}");
    let timed = &reads[reads.len() - 16..];
    let fio: Vec<u64> = std::iter::once(0).chain((0..15).rev()).collect();
    assert_eq!(timed, fio.as_slice());
}

/// numjobs=4 on one plain `filename`: fio's 4 jobs each read the whole file; so do fsbench's
/// 4 threads, all on one file (fsbench's own, in its work directory; laid out once), each
/// reading blocks 0..15 in order.
#[test]
fn numjobs_on_one_filename_read_the_whole_shared_file() {
    let d = TestDir::new();
    let job = "[s]\nbs=4k\nrw=read\nsize=64k\nnumjobs=4\nfilename=shared.dat\n";
    let Some(log) = traced(&d, job) else { return };
    let (io, opened) = calls(&log, 4096);
    let data: Vec<&String> = opened.iter().filter(|p| p.ends_with(".dat")).collect();
    assert!(data.len() >= 4, "each thread opens the shared file: {opened:?}");
    let names: std::collections::BTreeSet<_> = data.iter().map(|p| p.as_str()).collect();
    assert_eq!(names.len(), 1, "one file: {names:?}");
    let writes = io.iter().filter(|c| c.1 == "pwrite64").count();
    assert!(writes <= 16, "laid out once (at most 16 blocks written): {writes}");
    let mut per_pid: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (pid, call, off) in &io {
        if call == "pread64" {
            per_pid.entry(pid).or_default().push(off / 4096);
        }
    }
    let whole: Vec<u64> = (0..16).collect();
    let readers = per_pid.values().filter(|v| v.ends_with(&whole)).count();
    assert_eq!(readers, 4, "4 threads each read blocks 0..15: {per_pid:?}");
}

/// The reads of each thread, in 4 KiB blocks, from a traced run.
fn reads_per_thread(log: &std::path::Path) -> Vec<Vec<u64>> {
    let (io, _) = calls(log, 4096);
    let mut per_pid: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (pid, call, off) in &io {
        if call == "pread64" {
            per_pid.entry(pid).or_default().push(off / 4096);
        }
    }
    per_pid.into_values().collect()
}

/// offset=16k, offset_increment=32k, size=16k, numjobs=2 on one file: fio's job k works on
/// [16k + k * 32k, + 16k); so do fsbench's threads, sequential (in order) and random (each
/// block of its region once, none outside).
#[test]
fn offset_increment_gives_each_thread_its_region() {
    for (rw, sorted) in [("read", false), ("randread", true)] {
        let d = TestDir::new();
        let job = format!("[o]\nbs=4k\nrw={rw}\nsize=16k\nnumjobs=2\nfilename=one.dat\noffset=16k\noffset_increment=32k\n");
        let Some(log) = traced(&d, &job) else { return };
        let mut regions: Vec<Vec<u64>> = reads_per_thread(&log)
            .into_iter()
            .filter_map(|r| {
                // The timed pass is each thread's last 4 reads.
                let n = r.len();
                (n >= 4).then(|| r[n - 4..].to_vec())
            })
            .filter(|r| r.iter().all(|&b| b >= 4))
            .map(|mut r| {
                if sorted {
                    r.sort();
                }
                r
            })
            .collect();
        regions.sort();
        assert_eq!(regions, vec![vec![4, 5, 6, 7], vec![12, 13, 14, 15]], "{rw}");
    }
}
