//! fio's `randseed` through the real binary: a random job's offsets come from it, so the same
//! randseed reads the same blocks in the same order and another randseed another order (each
//! block still once: the random map), as fio's do (counted under strace beside fio's own
//! calls when fio is installed; the orders are each tool's own). fio 3.33 honours randseed
//! only with `randrepeat=0` (fio 3.35 fixed that); fsbench honours it either way.

use crate::util::*;

/// The offsets of the 4 KiB `pread64` calls of a `run --fio` (or fio) of a 64-op random
/// read with `randseed=seed` and the options `more`, in order.
fn offsets(fio: bool, seed: u32, more: &str) -> Vec<u64> {
    let job = format!("[j]\nrw=randread\nbs=4k\nsize=256k\nrandseed={seed}\n{more}");
    let text = strace_fio_job(&job, fio, "pread64");
    text.lines()
        .filter(|l| l.contains(" pread64(") && l.contains(", 4096, "))
        .filter_map(|l| l.rsplit_once(", ")?.1.split(')').next()?.trim().parse().ok())
        .collect()
}

/// randseed=1 twice: the same 64 offsets in the same order; randseed=2: another order of the
/// same blocks; in both tools with randrepeat=0, in fsbench also without it.
#[test]
fn randseed_draws_the_same_offsets_again_and_another_seed_others() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let check = |fio: bool, more: &str| {
        let who = if fio { "fio" } else { "fsbench" };
        let (a, again, b) = (offsets(fio, 1, more), offsets(fio, 1, more), offsets(fio, 2, more));
        assert_eq!(a.len(), 64, "{who}: {a:?}");
        assert_eq!(a, again, "{who}: the same randseed, the same offsets");
        assert_ne!(a, b, "{who}: another randseed, another order");
        let sorted = |mut v: Vec<u64>| {
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(a), sorted(b), "{who}: each block once either way");
    };
    check(false, "");
    check(false, "randrepeat=0\n");
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's offsets checked alone");
        return;
    }
    check(true, "randrepeat=0\n");
}
