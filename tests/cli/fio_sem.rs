//! fio's meaning in the engine, checked op by op through the real binary: a translated fio job
//! does the operations fio's job does (the random map: each block once per pass).

use crate::util::*;
use std::collections::BTreeMap;
use std::process::Command;

/// The offsets of `pread64` calls of `size` bytes in an `strace -f` log.
fn pread_offsets(log: &std::path::Path, size: u64) -> Vec<u64> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .filter_map(|l| {
            // "1234  pread64(5, ..., 4096, 8192) = 4096"
            let (_, call) = l.split_once("pread64(")?;
            let (args, _) = call.rsplit_once(')')?;
            let args: Vec<&str> = args.split(", ").collect();
            let len: u64 = args.get(2)?.parse().ok()?;
            (len == size).then(|| args.get(3)?.parse().ok())?
        })
        .collect()
}

/// fio reads each block of a randread job once per pass (its random map, the default); so does
/// the translated job: 512 reads of 4 KiB over a 2 MiB file, each block exactly once, in an
/// order that is not the file's.
#[test]
fn a_fio_randread_job_reads_each_block_once() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let job = d.write("rr.fio", "[rr]\nrw=randread\nbs=4k\nsize=2m\n");
    let log = d.path().join("strace.log");
    let run_dir = d.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let mut c = Command::new("strace");
    let o = isolate(&mut c)
        .args(["-f", "-qq", "-e", "trace=pread64", "-e", "signal=none", "-s", "0", "-o"])
        .arg(&log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--no-store", "--min-time", "0", "--dir"])
        .arg(&run_dir)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let offs = pread_offsets(&log, 4096);
    assert_eq!(offs.len(), 512, "one pass of 2M in 4K reads");
    let mut hits: BTreeMap<u64, u32> = BTreeMap::new();
    for &off in &offs {
        *hits.entry(off).or_default() += 1;
    }
    let want: Vec<u64> = (0..512).map(|k| k * 4096).collect();
    assert_eq!(hits.keys().copied().collect::<Vec<_>>(), want, "every block read");
    assert!(hits.values().all(|&n| n == 1), "each block once");
    let in_order = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
    assert!(in_order < 50, "random order, not sequential: {in_order} steps of one block");
    assert!(!stderr(&o).contains("random map"), "no note about the random map: {}", stderr(&o));
}
