//! The latency record of a phase: one HdrHistogram per op kind, and its percentile summary.
//! The histogram and its error bound are [`crate::stats::latency`].

use crate::model::job::{OpKind, OP_KINDS};
use crate::model::result::OpLatency;
use crate::stats::latency::{encode, new_histogram};
use hdrhistogram::Histogram;
use std::mem::ManuallyDrop;
use std::sync::Mutex;

/// The histograms of every kind: 20 × 270 KiB (1 ns to an hour at 3 significant digits).
type Set = Box<[Histogram<u64>; OP_KINDS]>;

/// Sets let go of, kept for the next worker, pass or phase. Every worker of every `--min-time`
/// pass takes a set: a new one is 5.4 MiB allocated and zeroed page by page (about 14 ms a
/// worker on the development VM, where freed memory costs a host fault on its next touch: 0.3
/// to 0.6 s a repetition of a 30-pass test), a kept one has only its used histograms cleared.
static POOL: Mutex<Vec<Set>> = Mutex::new(Vec::new());
/// Most sets kept (86 MiB): a phase's workers and the merged sets of a repetition.
const POOL_MAX: usize = 16;

/// One histogram per [`OpKind`]. Made with [`Default`] (from the pool of sets let go of, or
/// new) and returned to that pool when dropped.
pub struct OpHistograms(pub ManuallyDrop<Set>);

impl Default for OpHistograms {
    fn default() -> Self {
        let kept = POOL.lock().ok().and_then(|mut p| p.pop());
        let set = match kept {
            Some(mut set) => {
                for h in set.iter_mut().filter(|h| !h.is_empty()) {
                    h.reset();
                }
                set
            }
            None => Box::new(std::array::from_fn(|_| new_histogram())),
        };
        OpHistograms(ManuallyDrop::new(set))
    }
}

impl Drop for OpHistograms {
    fn drop(&mut self) {
        // SAFETY: the set is taken out once, here, and `self.0` is never used again.
        let set = unsafe { ManuallyDrop::take(&mut self.0) };
        if let Ok(mut pool) = POOL.lock() {
            if pool.len() < POOL_MAX {
                pool.push(set);
            }
        }
    }
}

impl OpHistograms {
    /// Record one operation's latency. Never allocates.
    #[inline(always)]
    pub fn record(&mut self, op: OpKind, nanos: u64) {
        self.0[op.index()].saturating_record(nanos.max(1));
    }

    /// Add another set (same bounds, so this cannot fail).
    pub fn merge(&mut self, other: &OpHistograms) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            a.add(b).expect("histograms share bounds");
        }
    }

    /// Summaries of the kinds that were recorded.
    pub fn summaries(&self) -> Vec<OpLatency> {
        OpKind::ALL
            .iter()
            .filter(|k| !self.0[k.index()].is_empty())
            .map(|k| summarize(*k, &self.0[k.index()]))
            .collect()
    }
}

/// Percentile summary of one histogram.
pub fn summarize(op: OpKind, h: &Histogram<u64>) -> OpLatency {
    OpLatency {
        op,
        count: h.len(),
        mean_nanos: h.mean(),
        min_nanos: h.min(),
        p50_nanos: h.value_at_quantile(0.50),
        p90_nanos: h.value_at_quantile(0.90),
        p99_nanos: h.value_at_quantile(0.99),
        p999_nanos: h.value_at_quantile(0.999),
        max_nanos: h.max(),
        histogram_b64: encode(h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::latency::decode;

    #[test]
    fn percentiles_within_error_bound() {
        let mut h = OpHistograms::default();
        for v in 1..=100_000u64 {
            h.record(OpKind::Read, v * 10);
        }
        let s = &h.summaries()[0];
        assert_eq!(s.count, 100_000);
        let within = |got: u64, want: f64| ((got as f64 - want) / want).abs() <= 0.001 + 1e-9;
        assert!(within(s.p50_nanos, 500_000.0), "{}", s.p50_nanos);
        assert!(within(s.p99_nanos, 990_000.0), "{}", s.p99_nanos);
        assert!(within(s.max_nanos, 1_000_000.0), "{}", s.max_nanos);
    }

    #[test]
    fn merge_and_roundtrip() {
        let mut a = OpHistograms::default();
        let mut b = OpHistograms::default();
        a.record(OpKind::Write, 1000);
        b.record(OpKind::Write, 3000);
        b.record(OpKind::Fsync, 5_000_000);
        a.merge(&b);
        let s = a.summaries();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].count, 2);
        let back = decode(&s[0].histogram_b64).expect("decodes");
        assert_eq!(back.len(), 2);
        assert_eq!(back.max(), a.0[OpKind::Write.index()].max());
    }

    #[test]
    fn huge_values_saturate() {
        let mut a = OpHistograms::default();
        a.record(OpKind::Read, u64::MAX);
        assert_eq!(a.summaries()[0].count, 1);
    }

    /// A set let go of comes back empty: nothing recorded before shows in the next one.
    #[test]
    fn a_reused_set_starts_empty() {
        for _ in 0..3 {
            let mut h = OpHistograms::default();
            assert!(h.0.iter().all(|x| x.is_empty() && x.max() == 0));
            h.record(OpKind::Write, 1_000_000);
            h.record(OpKind::Fsync, 5);
            assert_eq!(h.summaries().len(), 2);
        }
    }
}
