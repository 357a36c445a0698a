//! The latency record of a phase: one HdrHistogram per op kind, and its percentile summary.
//! The histogram and its error bound are [`crate::stats::latency`].

use crate::model::job::{OpKind, OP_KINDS};
use crate::model::result::{OpLatency, ThreadLatency};
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

    /// fio's figures ([`thread_latency`]) of the data and sync kinds that were recorded (what
    /// fio reports of a job: reads, writes, fsync/fdatasync), and of the ops fio's
    /// file-operation engines time ([`OpKind::fio_fake_io`]).
    pub fn thread_latencies(&self) -> Vec<ThreadLatency> {
        OpKind::ALL
            .iter()
            .filter(|k| {
                k.is_data() || matches!(k, OpKind::Fsync | OpKind::Fdatasync) || k.fio_fake_io()
            })
            .filter(|k| !self.0[k.index()].is_empty())
            .map(|k| thread_latency(*k, &self.0[k.index()]))
            .collect()
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

/// fio's default `percentile_list`.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The upper bounds (ns) of fio's latency buckets but the last: `latency_ns` 2 to 1000 ns,
/// `latency_us` 2 to 1000 µs, `latency_ms` 2 to 1000 ms and 2000 ms; the last bucket
/// (`>=2000` ms) holds the rest. A bucket holds the ops above the bound before it.
pub const FIO_BUCKET_BOUNDS_NANOS: [u64; 31] = {
    const B: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut out = [0u64; 31];
    let mut i = 0;
    while i < 30 {
        out[i] = B[i % 10] * [1, 1_000, 1_000_000][i / 10];
        i += 1;
    }
    out[30] = 2_000_000_000;
    out
};

/// The ops of `h` in each of fio's latency buckets ([`FIO_BUCKET_BOUNDS_NANOS`], then the
/// bucket above its last bound): 32 counts.
pub fn fio_buckets(h: &Histogram<u64>) -> Vec<u64> {
    let mut out = vec![0u64; FIO_BUCKET_BOUNDS_NANOS.len() + 1];
    for v in h.iter_recorded() {
        let at = v.value_iterated_to();
        let i = FIO_BUCKET_BOUNDS_NANOS.iter().position(|b| at <= *b).unwrap_or(31);
        out[i] += v.count_at_value();
    }
    out
}

/// What fio reports of one thread's latency of `op`, kept instead of its histogram (a few
/// hundred bytes where a histogram is 1.5 to 7 KiB).
pub fn thread_latency(op: OpKind, h: &Histogram<u64>) -> ThreadLatency {
    ThreadLatency {
        op,
        count: h.len(),
        min_nanos: h.min(),
        max_nanos: h.max(),
        mean_nanos: h.mean(),
        stddev_nanos: h.stdev(),
        percentiles_nanos: FIO_PERCENTILES.iter().map(|q| h.value_at_quantile(q / 100.0)).collect(),
        fio_buckets: fio_buckets(h),
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

    /// fio's buckets: each op in the first bucket whose bound is at or above it; the last
    /// bucket holds what is above 2 s.
    #[test]
    fn fio_buckets_put_each_op_under_its_bound() {
        let mut h = crate::stats::latency::new_histogram();
        for v in [1, 2, 3, 999, 1500, 60_000, 1_500_000, 1_999_000_000, 5_000_000_000] {
            h.record(v).expect("in range");
        }
        let b = fio_buckets(&h);
        assert_eq!(b.len(), 32);
        assert_eq!(b.iter().sum::<u64>(), 9);
        assert_eq!((b[0], b[1], b[9]), (2, 1, 1), "ns: (0,2], (2,4], (750,1000]: {b:?}");
        assert_eq!((b[10], b[15]), (1, 1), "µs: (1,2], (50,100]: {b:?}");
        assert_eq!((b[20], b[30], b[31]), (1, 1, 1), "ms: (1,2], (1000,2000], above: {b:?}");
        let t = thread_latency(OpKind::Read, &h);
        assert_eq!((t.count, t.min_nanos), (9, 1));
        assert_eq!(t.percentiles_nanos.len(), FIO_PERCENTILES.len());
        assert!(t.percentiles_nanos.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
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
