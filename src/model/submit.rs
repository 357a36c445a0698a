//! Submission and completion latency apart, for the asynchronous engines (io_uring, libaio).
//!
//! fsbench times every op once, from its start to its completion (fio's `lat`). An
//! asynchronous engine also has a submission step, which fio times apart: its `slat` runs from
//! the op's start to the return of the call that handed it to the kernel (`io_submit`,
//! `io_uring_enter`), its `clat` from there to the completion. A worker of an asynchronous
//! engine records both beside its own latency: the submission latency as moments (count,
//! min, max, mean, standard deviation: what fio reports of `slat` without
//! `slat_percentiles`), the completion latency as a histogram per op kind (fio gives `clat`
//! percentiles by default). This module holds the records (per phase, role and thread) and
//! their merges; the worker's recorder is `crate::engine::worker`'s.

use crate::model::job::OpKind;
use crate::model::result::{OpLatency, ThreadLatency};
use serde::{Deserialize, Serialize};

/// Count, minimum, maximum, mean and standard deviation of a set of latencies (ns), as fio
/// reports a latency without percentiles; mergeable without the values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    /// Number of values.
    pub count: u64,
    /// Minimum (0 when there are none).
    pub min_nanos: u64,
    /// Maximum.
    pub max_nanos: u64,
    /// Mean.
    pub mean_nanos: f64,
    /// Sample standard deviation (n − 1 in the denominator, as fio's; 0 for fewer than two).
    pub stddev_nanos: f64,
}

impl Moments {
    /// The moments of a sum `sum` and sum of squares `sum_sq` of `count` values between `min`
    /// and `max`.
    pub fn of_sums(count: u64, min: u64, max: u64, sum: u128, sum_sq: u128) -> Moments {
        if count == 0 {
            return Moments::default();
        }
        let n = count as f64;
        let mean = sum as f64 / n;
        let stddev = if count > 1 {
            // Σ(x − mean)² = Σx² − (Σx)²/n, in exact integers as far as they go.
            let m2 = (sum_sq as f64 - (sum as f64) * (sum as f64) / n).max(0.0);
            (m2 / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Moments { count, min_nanos: min, max_nanos: max, mean_nanos: mean, stddev_nanos: stddev }
    }

    /// Add another set (Chan's parallel formula: the sum of squared deviations of the union is
    /// each part's plus the squared distance of the means weighted by the parts' sizes).
    pub fn merge(&mut self, o: &Moments) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *o;
            return;
        }
        let (na, nb) = (self.count as f64, o.count as f64);
        let n = na + nb;
        let m2 = |m: &Moments, k: f64| m.stddev_nanos * m.stddev_nanos * (k - 1.0).max(0.0);
        let delta = o.mean_nanos - self.mean_nanos;
        let sum_m2 = m2(self, na) + m2(o, nb) + delta * delta * na * nb / n;
        self.mean_nanos += delta * nb / n;
        self.stddev_nanos = (sum_m2 / (n - 1.0)).sqrt();
        self.count += o.count;
        self.min_nanos = self.min_nanos.min(o.min_nanos);
        self.max_nanos = self.max_nanos.max(o.max_nanos);
    }
}

/// The submission and completion latency of one op kind of a phase or role (its threads'
/// together).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SplitLatency {
    /// Operation (a read or a write).
    pub op: OpKind,
    /// From the op's start to the return of the call that submitted it (fio's `slat`).
    pub slat: Moments,
    /// From that return to its completion (fio's `clat`), with its histogram.
    pub clat: OpLatency,
}

/// One thread's submission and completion latency of one op kind: summaries only, as the
/// rest of its record ([`ThreadLatency`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadSplit {
    /// Operation (a read or a write).
    pub op: OpKind,
    /// Submission latency (fio's `slat`).
    pub slat: Moments,
    /// Completion latency from the submission's return (fio's `clat`).
    pub clat: ThreadLatency,
}

/// Add `other`'s split latencies to `into` (another pass of the same phase, or another
/// node's): moments merged, histograms added. A kind only one side has is kept as it is.
pub fn merge_splits(into: &mut Vec<SplitLatency>, other: &[SplitLatency]) {
    for o in other {
        match into.iter_mut().find(|s| s.op == o.op) {
            Some(s) => {
                s.slat.merge(&o.slat);
                s.clat = merge_op_latency(&s.clat, &o.clat);
            }
            None => into.push(o.clone()),
        }
    }
}

/// Two summaries of one op kind as one: from their histograms when both decode, else the
/// counts, extremes and mean added up with the larger side's percentiles (a record without
/// histograms).
fn merge_op_latency(a: &OpLatency, b: &OpLatency) -> OpLatency {
    use crate::stats::latency::decode;
    if let (Some(mut ha), Some(hb)) = (decode(&a.histogram_b64), decode(&b.histogram_b64)) {
        if ha.add(&hb).is_ok() {
            return crate::model::latency::summarize(a.op, &ha);
        }
    }
    let n = a.count + b.count;
    let mean = if n == 0 {
        0.0
    } else {
        (a.mean_nanos * a.count as f64 + b.mean_nanos * b.count as f64) / n as f64
    };
    let big = if a.count >= b.count { a } else { b };
    OpLatency {
        count: n,
        mean_nanos: mean,
        min_nanos: a.min_nanos.min(b.min_nanos),
        max_nanos: a.max_nanos.max(b.max_nanos),
        histogram_b64: String::new(),
        ..big.clone()
    }
}

/// fio's queue-depth distributions of a job (`iodepth_level`, `iodepth_submit`,
/// `iodepth_complete`), counted as fio's `io_u_mark_depth`, `io_u_mark_submit` and
/// `io_u_mark_complete` count them: seven buckets each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepthCounts {
    /// Requests issued, by the requests in flight once each was queued (itself included):
    /// 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64 and more (fio's `io_u_map`).
    pub level: [u64; 7],
    /// Calls that submitted requests, by how many they submitted: 0, 1-4, 5-8, 9-16, 17-32,
    /// 33-64, more (fio's `io_u_submit`; a synchronous engine's op is one call of one).
    pub submit: [u64; 7],
    /// Calls that reaped completions, by how many they reaped, in the same buckets (fio's
    /// `io_u_complete`).
    pub complete: [u64; 7],
}

impl DepthCounts {
    /// `level`'s bucket of a depth (fio's `io_u_mark_depth`).
    #[inline(always)]
    pub fn level_bucket(depth: usize) -> usize {
        // 1 → 0, 2-3 → 1, 4-7 → 2, ..., 64 and more → 6.
        (usize::BITS - depth.max(1).leading_zeros() - 1).min(6) as usize
    }

    /// `submit`'s and `complete`'s bucket of a count (fio's `__io_u_mark_map`).
    #[inline(always)]
    pub fn count_bucket(n: usize) -> usize {
        // 0 → 0, 1-4 → 1, 5-8 → 2, 9-16 → 3, 17-32 → 4, 33-64 → 5, more → 6.
        if n == 0 {
            0
        } else if n <= 4 {
            1
        } else {
            ((usize::BITS - (n - 1).leading_zeros()) as usize - 1).min(6)
        }
    }

    /// Add another's counts.
    pub fn add(&mut self, o: &DepthCounts) {
        for i in 0..7 {
            self.level[i] += o.level[i];
            self.submit[i] += o.submit[i];
            self.complete[i] += o.complete[i];
        }
    }

    /// Nothing counted (a record made before fsbench counted them).
    pub fn is_empty(&self) -> bool {
        self.level.iter().chain(&self.submit).chain(&self.complete).all(|n| *n == 0)
    }

    /// fio's percentages of `map` over `total` (`stat_calc_dist`): a bucket with counts below
    /// 0.1% shows 0.1.
    pub fn percents(map: &[u64; 7], total: u64) -> [f64; 7] {
        let mut out = [0.0; 7];
        if total == 0 {
            return out;
        }
        for (o, n) in out.iter_mut().zip(map) {
            *o = *n as f64 / total as f64 * 100.0;
            if *o < 0.1 && *n > 0 {
                *o = 0.1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(v: &[u64]) -> Moments {
        let sum: u128 = v.iter().map(|&x| u128::from(x)).sum();
        let sq: u128 = v.iter().map(|&x| u128::from(x) * u128::from(x)).sum();
        let min = v.iter().copied().min().unwrap_or(0);
        let max = v.iter().copied().max().unwrap_or(0);
        Moments::of_sums(v.len() as u64, min, max, sum, sq)
    }

    #[test]
    fn moments_of_sums_are_the_sample_mean_and_deviation() {
        let m = of(&[2, 4, 4, 4, 5, 5, 7, 9]);
        assert_eq!((m.count, m.min_nanos, m.max_nanos), (8, 2, 9));
        assert!((m.mean_nanos - 5.0).abs() < 1e-12, "{m:?}");
        // Σ(x − 5)² = 32; sample variance 32/7.
        assert!((m.stddev_nanos - (32.0f64 / 7.0).sqrt()).abs() < 1e-9, "{m:?}");
        assert_eq!(of(&[7]).stddev_nanos, 0.0);
        assert_eq!(of(&[]), Moments::default());
    }

    #[test]
    fn merged_moments_equal_the_moments_of_the_union() {
        let (a, b) = ([10u64, 20, 30, 1000], [5u64, 7, 4000]);
        let mut m = of(&a);
        m.merge(&of(&b));
        let all: Vec<u64> = a.iter().chain(&b).copied().collect();
        let want = of(&all);
        assert_eq!((m.count, m.min_nanos, m.max_nanos), (7, 5, 4000));
        assert!((m.mean_nanos - want.mean_nanos).abs() < 1e-9, "{m:?} {want:?}");
        assert!((m.stddev_nanos - want.stddev_nanos).abs() < 1e-6, "{m:?} {want:?}");
        // An empty side changes nothing, either way round.
        let mut e = Moments::default();
        e.merge(&want);
        assert_eq!(e, want);
        e.merge(&Moments::default());
        assert_eq!(e, want);
    }

    /// fio's buckets (io_u.c): depths 1, 2-3, 4-7, ... 64+; counts 0, 1-4, 5-8, ... 65+.
    #[test]
    fn depth_and_count_buckets_are_fios() {
        let lv: Vec<usize> =
            [1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 4096].map(DepthCounts::level_bucket).into();
        assert_eq!(lv, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
        let c: Vec<usize> =
            [0, 1, 4, 5, 8, 9, 16, 17, 32, 33, 64, 65, 4096].map(DepthCounts::count_bucket).into();
        assert_eq!(c, [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]);
        let p = DepthCounts::percents(&[1, 2, 4, 1993, 0, 0, 0], 2000);
        assert_eq!(p[..4], [0.1, 0.1, 0.2, 99.65]);
        assert_eq!(DepthCounts::percents(&[1, 0, 0, 0, 0, 0, 0], 0), [0.0; 7]);
    }

    #[test]
    fn merged_splits_add_histograms_per_kind_and_keep_a_kind_one_side_lacks() {
        let split = |op: OpKind, vals: &[u64]| {
            let mut h = crate::stats::latency::new_histogram();
            for v in vals {
                h.record(*v).expect("in range");
            }
            SplitLatency { op, slat: of(vals), clat: crate::model::latency::summarize(op, &h) }
        };
        let mut into = vec![split(OpKind::Read, &[100, 200])];
        merge_splits(&mut into, &[split(OpKind::Read, &[300, 2000]), split(OpKind::Write, &[42])]);
        assert_eq!(into.len(), 2);
        assert_eq!((into[0].slat.count, into[0].clat.count), (4, 4));
        assert_eq!((into[0].clat.min_nanos, into[0].clat.max_nanos), (100, 2000));
        assert!((into[0].slat.mean_nanos - 650.0).abs() < 1e-9);
        assert_eq!((into[1].op, into[1].clat.count), (OpKind::Write, 1));
    }
}
