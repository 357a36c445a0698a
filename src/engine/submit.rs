//! The worker's record of submission and completion latency apart, for engines that submit
//! in a call of their own ([`super::ioengine::IoEngine::SUBMITS_APART`]: io_uring, libaio).
//!
//! Why a module: fio times an asynchronous op's submission apart (`slat`, from the op's start
//! to the return of the call that handed it to the kernel) from its completion (`clat`, from
//! there to its completion); fsbench's own latency (`lat`, start to completion) is unchanged
//! and still recorded in the worker's histograms. This recorder is made before the start
//! barrier, only for those engines, and costs per op one branch, a few integer additions and
//! one histogram increment: no allocation, lock or formatting. The worker reads the clock once
//! per call that submitted (the ops it submitted share the reading, as fio's per commit); see
//! `FileOps::submitted` in [`super::worker`].

use crate::model::job::OpKind;
use crate::model::latency::{summarize, thread_latency};
use crate::model::submit::{Moments, SplitLatency, ThreadSplit};
use crate::stats::latency::new_histogram;
use hdrhistogram::Histogram;

/// Sums of one kind's submission latencies, for [`Moments::of_sums`].
#[derive(Debug, Clone, Copy)]
struct Sums {
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: u128,
}

impl Default for Sums {
    fn default() -> Self {
        Sums { count: 0, min: u64::MAX, max: 0, sum: 0, sum_sq: 0 }
    }
}

impl Sums {
    #[inline(always)]
    fn add(&mut self, v: u64) {
        self.count += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += u128::from(v);
        self.sum_sq += u128::from(v) * u128::from(v);
    }

    fn merge(&mut self, o: &Sums) {
        self.count += o.count;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
    }

    fn moments(&self) -> Moments {
        Moments::of_sums(self.count, self.min, self.max, self.sum, self.sum_sq)
    }
}

/// The kinds recorded apart: reads (`[0]`) and writes (`[1]`), fio's two data directions.
const KINDS: [OpKind; 2] = [OpKind::Read, OpKind::Write];

/// One worker's (or, merged, a phase's) submission and completion latencies of its reads and
/// writes.
pub struct SplitRecorder {
    slat: [Sums; 2],
    clat: [Histogram<u64>; 2],
}

impl Default for SplitRecorder {
    fn default() -> Self {
        SplitRecorder { slat: [Sums::default(); 2], clat: [new_histogram(), new_histogram()] }
    }
}

impl SplitRecorder {
    /// Record one data op: `write` or a read, its submission latency `slat` and its completion
    /// latency `clat` (ns). Never allocates.
    #[inline(always)]
    pub fn record(&mut self, write: bool, slat: u64, clat: u64) {
        let d = usize::from(write);
        self.slat[d].add(slat);
        self.clat[d].saturating_record(clat.max(1));
    }

    /// Add another recorder's (same bounds, so this cannot fail).
    pub fn merge(&mut self, o: &SplitRecorder) {
        for d in 0..2 {
            self.slat[d].merge(&o.slat[d]);
            let _ = self.clat[d].add(&o.clat[d]);
        }
    }

    /// The kinds that were recorded, with their completion histograms (a phase's or role's).
    pub fn splits(&self) -> Vec<SplitLatency> {
        (0..2)
            .filter(|&d| self.slat[d].count > 0)
            .map(|d| SplitLatency {
                op: KINDS[d],
                slat: self.slat[d].moments(),
                clat: summarize(KINDS[d], &self.clat[d]),
            })
            .collect()
    }

    /// The kinds that were recorded, summarised (a thread's).
    pub fn thread_splits(&self) -> Vec<ThreadSplit> {
        (0..2)
            .filter(|&d| self.slat[d].count > 0)
            .map(|d| ThreadSplit {
                op: KINDS[d],
                slat: self.slat[d].moments(),
                clat: thread_latency(KINDS[d], &self.clat[d]),
            })
            .collect()
    }

    /// The workers' recorders merged (empty when none has one: a synchronous engine).
    pub fn of<'o>(recorders: impl Iterator<Item = Option<&'o SplitRecorder>>) -> Vec<SplitLatency> {
        let mut acc: Option<SplitRecorder> = None;
        for r in recorders.flatten() {
            acc.get_or_insert_with(SplitRecorder::default).merge(r);
        }
        acc.map(|a| a.splits()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_keeps_reads_and_writes_apart_and_merges_exactly() {
        let mut a = SplitRecorder::default();
        a.record(false, 10_000, 500);
        a.record(false, 30_000, 1500);
        a.record(true, 7, 0);
        let mut b = SplitRecorder::default();
        b.record(false, 20_000, 1000);
        let all = SplitRecorder::of([Some(&a), None, Some(&b)].into_iter());
        assert_eq!(all.len(), 2);
        let r = &all[0];
        assert_eq!(r.op, OpKind::Read);
        assert_eq!((r.slat.count, r.slat.min_nanos, r.slat.max_nanos), (3, 10_000, 30_000));
        assert!((r.slat.mean_nanos - 20_000.0).abs() < 1e-9);
        assert!((r.slat.stddev_nanos - 10_000.0).abs() < 1e-6, "{:?}", r.slat);
        assert_eq!((r.clat.count, r.clat.min_nanos, r.clat.max_nanos), (3, 500, 1500));
        assert!((r.clat.mean_nanos - 1000.0).abs() < 1.0);
        let w = &all[1];
        // A completion latency of 0 is recorded as 1 ns, as fsbench's own latency.
        assert_eq!((w.op, w.slat.count, w.clat.min_nanos), (OpKind::Write, 1, 1));
        let t = a.thread_splits();
        assert_eq!((t.len(), t[0].slat.count, t[0].clat.count), (2, 2, 2));
        assert!(SplitRecorder::of([None, None].into_iter()).is_empty());
    }
}
