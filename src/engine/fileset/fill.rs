//! What a fileset phase shares between its workers: each worker's counters (progress, and the
//! totals of a fill phase's series), and a fill phase's target and marks ([`FillShared`]).

use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Counters a worker updates for the progress display and the fill monitor.
#[repr(align(64))]
#[derive(Default)]
pub struct FsCounters {
    /// Ops done (including skipped).
    pub ops: AtomicU64,
    /// Bytes written.
    pub bytes_written: AtomicU64,
    /// Files created.
    pub creates: AtomicU64,
}

/// Shared state of a fill phase: the target, and the time and totals at which each 10% mark of
/// filesystem fill was first seen. Workers check the fill themselves (statvfs, outside the
/// timing of any op, every [`FILL_CHECK_BYTES`] they write), so the stop is not late when a
/// monitor thread would be starved of CPU by the workers; a mark is claimed with one
/// compare-and-swap, so it is recorded once, without a lock.
pub struct FillShared {
    target: f64,
    start: Instant,
    next: AtomicU64,
    /// Per mark k (k/10 full): nanos since start, bytes written, files created (0: not seen).
    marks: [[AtomicU64; 3]; 11],
    /// Set when the target is reached (or ENOSPC): the phase ends normally.
    pub reached: AtomicBool,
}

/// Bytes a worker writes between two fill checks in a fill phase.
pub const FILL_CHECK_BYTES: u64 = 256 << 10;

impl FillShared {
    /// For a phase that starts at fill `fill0` and stops at `target`.
    pub fn new(fill0: f64, target: f64, start: Instant) -> FillShared {
        FillShared {
            target,
            start,
            next: AtomicU64::new((fill0 * 10.0 + 1e-9).floor() as u64 + 1),
            marks: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            reached: AtomicBool::new(fill0 >= target),
        }
    }

    /// Record the marks `fill` has passed, with the totals over all threads' counters.
    pub fn observe(&self, fill: f64, counters: &[FsCounters]) {
        loop {
            let k = self.next.load(Ordering::Acquire);
            let mark = k as f64 / 10.0;
            if k > 10 || mark > self.target + 1e-9 || fill + 1e-9 < mark {
                break;
            }
            if self.next.compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                let (b, c) = totals(counters);
                let m = &self.marks[k as usize];
                m[1].store(b, Ordering::Relaxed);
                m[2].store(c, Ordering::Relaxed);
                m[0].store((self.start.elapsed().as_nanos() as u64).max(1), Ordering::Release);
            }
        }
        if fill >= self.target {
            self.reached.store(true, Ordering::Relaxed);
        }
    }

    /// The marks seen, in order: (fill, nanos since start, bytes, files), cumulative.
    pub fn marks(&self) -> Vec<(f64, u64, u64, u64)> {
        (0..=10)
            .filter_map(|k| {
                let m = &self.marks[k];
                let t = m[0].load(Ordering::Acquire);
                (t > 0).then(|| {
                    (k as f64 / 10.0, t, m[1].load(Ordering::Relaxed), m[2].load(Ordering::Relaxed))
                })
            })
            .collect()
    }
}

/// Bytes written and files created so far, over all threads.
pub fn totals(counters: &[FsCounters]) -> (u64, u64) {
    let b = counters.iter().map(|c| c.bytes_written.load(Ordering::Relaxed)).sum();
    let c = counters.iter().map(|c| c.creates.load(Ordering::Relaxed)).sum();
    (b, c)
}

/// How full a filesystem is, as `df` computes Use%: used / (used + available to users).
pub fn fill_of(fd: BorrowedFd<'_>) -> std::io::Result<f64> {
    let v = rustix::fs::fstatvfs(fd)?;
    let used = v.f_blocks.saturating_sub(v.f_bfree) as f64;
    let avail = v.f_bavail as f64;
    Ok(if used + avail > 0.0 { used / (used + avail) } else { 1.0 })
}
