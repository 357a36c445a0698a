//! fio's `bsrange` through the real binary: each read's size is drawn by fio 3.33's law over
//! the multiples of the range's minimum (4k-16k: 4k, 8k, 12k and 16k a quarter each), counted
//! under strace for fsbench and, when installed, for fio on the same job: every share within
//! 2 points of a quarter in both.

use crate::util::*;

/// The shares of each size among the `pread64` calls of a sequential read of 64 MiB with
/// `bsrange=4k-16k`, by fsbench or fio.
fn shares(fio: bool) -> std::collections::BTreeMap<u64, f64> {
    let job = "[r]\nrw=read\nbsrange=4k-16k\nsize=64m\n";
    let text = strace_fio_job(job, fio, "pread64");
    let mut n = std::collections::BTreeMap::<u64, u64>::new();
    for l in text.lines().filter(|l| l.contains(" pread64(")) {
        // "pread64(5, "..."..., 8192, 1052672) = 8192": the size asked.
        let mut args = l.rsplit(", ");
        let (_, size) = (args.next(), args.next().and_then(|s| s.trim().parse::<u64>().ok()));
        if let Some(s) = size.filter(|s| [4096, 8192, 12288, 16384].contains(s)) {
            *n.entry(s).or_default() += 1;
        }
    }
    let total: u64 = n.values().sum();
    assert!(total > 4000, "{total} reads: {n:?}");
    n.into_iter().map(|(s, c)| (s, c as f64 / total as f64)).collect()
}

#[test]
fn bsrange_sizes_follow_fios_law() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let check = |fio: bool| {
        let got = shares(fio);
        assert_eq!(got.len(), 4, "{got:?}");
        for (size, share) in &got {
            assert!((share - 0.25).abs() < 0.02, "{}: {size} drawn {share:.3}", fio);
        }
    };
    check(false);
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's sizes checked alone");
        return;
    }
    check(true);
}
