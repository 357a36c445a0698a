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
