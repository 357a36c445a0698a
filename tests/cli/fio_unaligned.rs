//! fio's `bs_unaligned` with `bsrange` through the real binary, side by side with fio 3.33
//! under strace: each read's size is `MIN + ⌊MAX × u⌋` bytes, at most MAX, not rounded (a
//! quarter of 4k-16k's reads at 16 KiB, the rest spread evenly over every byte count from 4096
//! to 16383), sequential offsets follow on unaligned and random ones stay multiples of MIN.

use crate::util::*;

/// The (offset, size) of every `pread64` of the job's file (the fd with the most of them: the
/// dynamic loader's own reads are on others) in an strace log.
fn reads(log: &str) -> Vec<(u64, u64)> {
    let mut by_fd = std::collections::BTreeMap::<String, Vec<(u64, u64)>>::new();
    for l in log.lines() {
        // "123 pread64(5, "..."..., 8193, 1052672) = 8193"
        let Some((_, args)) = l.split_once(" pread64(") else { continue };
        let Some((args, _)) = args.rsplit_once(") = ") else { continue };
        let fd = args.split(',').next().unwrap_or("").to_string();
        let mut it = args.rsplit(", ");
        let off = it.next().and_then(|s| s.trim().parse::<u64>().ok());
        let len = it.next().and_then(|s| s.trim().parse::<u64>().ok());
        if let (Some(off), Some(len)) = (off, len) {
            by_fd.entry(fd).or_default().push((off, len));
        }
    }
    by_fd.into_values().max_by_key(|v| v.len()).unwrap_or_default()
}

/// Checks the size law on the reads of one tool; returns the bytes read.
fn check_law(who: &str, r: &[(u64, u64)]) -> u64 {
    let n = r.len() as f64;
    assert!(n > 4000.0, "{who}: {n} reads");
    let share = |f: &dyn Fn(u64) -> bool| r.iter().filter(|x| f(x.1)).count() as f64 / n;
    assert!(r.iter().all(|x| (4096..=16384).contains(&x.1)), "{who}: a size outside 4k-16k");
    let max = share(&|s| s == 16384);
    assert!((max - 0.25).abs() < 0.02, "{who}: 16 KiB drawn {max:.3}");
    // Not rounded: about three quarters are no multiple of 512 (a rounded law has none).
    let odd = share(&|s| s % 512 != 0);
    assert!(odd > 0.70, "{who}: {odd:.3} of sizes not a multiple of 512");
    for q in 0..4 {
        let lo = 4096 + q * 3072;
        let s = share(&|s| (lo..lo + 3072).contains(&s));
        assert!((s - 0.1875).abs() < 0.02, "{who}: sizes in [{lo}, +3k) drawn {s:.3}");
    }
    r.iter().map(|x| x.1).sum()
}

#[test]
fn bs_unaligned_sizes_follow_fios_law() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let seq = "[r]\nrw=read\nbsrange=4k-16k\nbs_unaligned\nsize=64m\n";
    let rand = "[r]\nrw=randread\nbsrange=4k-16k\nbs_unaligned\nnorandommap\nsize=64m\n";
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (apt-get install fio): fsbench's sizes checked alone");
    }
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = reads(&strace_fio_job(seq, fio, "pread64"));
        let bytes = check_law(who, &r);
        assert!(r.windows(2).all(|w| w[1].0 == w[0].0 + w[0].1), "{who}: not one after another");
        let unaligned = r.iter().filter(|x| x.0 % 512 != 0).count();
        assert!(unaligned > r.len() / 2, "{who}: {unaligned} offsets off 512");
        // The end (the difference `unaligned-end`): fio stops with less than MIN left.
        let size = 64u64 << 20;
        if fio {
            assert!(bytes < size && bytes > size - 4096, "fio read {bytes}");
        } else {
            assert_eq!(bytes, size, "fsbench moves the job's size");
        }
        let r = reads(&strace_fio_job(rand, fio, "pread64"));
        check_law(who, &r);
        assert!(r.iter().all(|x| x.0 % 4096 == 0), "{who}: a random offset off MIN");
    }
}
