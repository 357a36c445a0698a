//! fio's `percentage_random` through the real binary, side by side with fio 3.33 under strace:
//! the share of a random job's I/Os that start where the previous I/O of the same direction
//! ended is the sequential share (100 - the direction's percentage), within a few points, in
//! both tools; a job without the option has next to none.

use crate::util::*;

/// Of the `call`s of `size` bytes in an strace log, in order, the share that start where the
/// previous one ended, and how many there were.
fn continued_share(log: &str, call: &str, size: u64) -> (f64, usize) {
    let mut offsets = Vec::new();
    for l in log.lines().filter(|l| l.contains(&format!(" {call}("))) {
        // "pread64(5, "..."..., 4096, 1052672) = 4096": the size asked and the offset.
        let Some(args) = l.rsplit_once(") = ").map(|(a, _)| a) else { continue };
        let mut it = args.rsplit(", ");
        let off = it.next().and_then(|s| s.trim().parse::<u64>().ok());
        let len = it.next().and_then(|s| s.trim().parse::<u64>().ok());
        if let (Some(off), Some(len)) = (off, len) {
            if len == size {
                offsets.push(off);
            }
        }
    }
    let continued = offsets.windows(2).filter(|w| w[1] == w[0] + size).count();
    let n = offsets.len();
    (continued as f64 / (n.max(2) - 1) as f64, n)
}

/// The share of continued I/Os of `job` run by fsbench or fio.
fn share(job: &str, fio: bool, call: &str) -> f64 {
    let log = strace_fio_job(job, fio, call);
    let (s, n) = continued_share(&log, call, 4096);
    // 16 MiB of 4 KiB I/Os; fsbench's or fio's own reads are of other sizes.
    assert!(n >= 4096, "{}: {n} {call} calls of 4 KiB", if fio { "fio" } else { "fsbench" });
    s
}

#[test]
fn percentage_random_continues_the_share_fio_continues() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let read = "[r]\nrw=randread\nbs=4k\nsize=16m\npercentage_random=30\n";
    // R,W: a write job takes the write share (60% random, 40% continued).
    let write = "[w]\nrw=randwrite\nbs=4k\nsize=16m\npercentage_random=30,60\n";
    let plain = "[r]\nrw=randread\nbs=4k\nsize=16m\n";
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (apt-get install fio): fsbench's shares checked alone");
    }
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = share(read, fio, "pread64");
        assert!((r - 0.70).abs() < 0.03, "{who}: randread percentage_random=30 continued {r:.3}");
        let w = share(write, fio, "pwrite64");
        assert!((w - 0.40).abs() < 0.03, "{who}: randwrite 30,60 continued {w:.3}");
        let p = share(plain, fio, "pread64");
        assert!(p < 0.01, "{who}: randread without it continued {p:.3}");
    }
}

#[test]
fn a_bad_percentage_random_exits_2_with_its_line() {
    let dir = TestDir::new();
    let work = TestDir::new();
    let job = dir.write("bad.fio", "[r]\nrw=randread\nsize=1m\npercentage_random=150\n");
    let o =
        fsbench(&["run", "--fio", job.to_str().unwrap(), "--dir", work.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bad.fio:4: ") && e.contains("150 is above 100"), "{e}");
}

/// With percentage_random=0 a time-based random job reads on from the last read and starts
/// over at the file's start when it reaches the end (fio's `get_next_seq_offset`): the same
/// block sequence 0, 1, ... 15, 0, 1, ... in both tools.
#[test]
fn a_time_based_job_starts_over_at_the_end_as_fio() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let job = "[r]\nrw=randread\nbs=4k\nsize=64k\npercentage_random=0\ntime_based\nruntime=1\n";
    let want: Vec<u64> = (0..40).map(|i| i % 16).collect();
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (apt-get install fio): fsbench's offsets checked alone");
    }
    for fio in tools {
        let log = strace_fio_job(job, fio, "pread64");
        let blocks: Vec<u64> = log
            .lines()
            .filter(|l| l.contains(" pread64(") && l.ends_with("= 4096"))
            .filter_map(|l| l.rsplit_once(") = ")?.0.rsplit(", ").next()?.parse::<u64>().ok())
            .map(|o| o / 4096)
            .take(40)
            .collect();
        assert_eq!(blocks, want, "{}", if fio { "fio" } else { "fsbench" });
    }
}
