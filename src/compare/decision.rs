//! The decision rule of `fsbench compare`: winner, X-fold factor, or draw.
//!
//! Stated method:
//! - Estimator: the median throughput (MiB/s; ops/s for fileset tests, see
//!   [`crate::result::RepResult::figure`]) of each configuration's completed repetitions; the
//!   factor is the larger median divided by the smaller.
//! - Test (n >= 2 on both sides): Welch's two-sample t-test on the logarithm of throughput
//!   (ratios, not differences, are what a filesystem comparison is about, and log makes the noise
//!   of fast and slow tests comparable), two-sided, 95% confidence, with Welch–Satterthwaite
//!   degrees of freedom. The difference must be significant *and* the factor at least
//!   `1 + min_effect` (default 5%), so a tiny but consistent gap is still a draw.
//! - With a single repetition on either side there is no noise estimate: the factor must reach
//!   `1 + single_run_effect` (default 10%) to name a winner, and the result says no test was made.
//! - A test that failed, was interrupted, or whose cache precondition did not hold on a side is
//!   not compared ("could not run"), with the reason.

use crate::result::{TestResult, TestStatus};
use crate::stats::summary::{mean_sd, t975};
use serde::{Deserialize, Serialize};

/// Thresholds of the rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Minimum effect for a significant difference to count (0.05 = 5%).
    pub min_effect: f64,
    /// Minimum effect when a side has one repetition (no test possible).
    pub single_run_effect: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule { min_effect: 0.05, single_run_effect: 0.10 }
    }
}

/// How a test between two configurations came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Verdict {
    /// `winner` (0 = first side, 1 = second) is faster by `factor`.
    Win {
        /// 0 or 1.
        winner: usize,
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test backed it (false with single repetitions).
        tested: bool,
    },
    /// No significant difference, or below the minimum effect.
    Draw {
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test was made.
        tested: bool,
    },
    /// The test could not be compared.
    NotCompared {
        /// Why.
        reason: String,
    },
}

fn usable(t: &TestResult, label: &str) -> Result<Vec<f64>, String> {
    match &t.status {
        TestStatus::Ok => {}
        TestStatus::Failed { reason } => return Err(format!("failed on {label}: {reason}")),
        TestStatus::Interrupted => return Err(format!("interrupted on {label}")),
        TestStatus::Skipped { reason } => return Err(format!("not run on {label}: {reason}")),
    }
    let unmet = t.reps.iter().flat_map(|r| r.phases.iter()).find(|p| p.timed && !p.cache.met);
    if let Some(p) = unmet {
        return Err(format!(
            "cache precondition ({:?}) not met on {label}: {:.0}% resident after {}",
            p.cache.required,
            p.cache.resident_fraction * 100.0,
            p.cache.method
        )
        .to_lowercase());
    }
    let v: Vec<f64> = t.reps.iter().filter(|r| r.complete).map(|r| r.figure()).collect();
    if v.is_empty() || v.iter().any(|x| x.is_nan() || *x <= 0.0) {
        return Err(format!("no throughput figure on {label}"));
    }
    Ok(v)
}

/// Decide one test between side 0 (`a`) and side 1 (`b`).
pub fn decide(a: &TestResult, la: &str, b: &TestResult, lb: &str, rule: &Rule) -> Verdict {
    let (xa, xb) = match (usable(a, la), usable(b, lb)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return Verdict::NotCompared { reason: e },
    };
    decide_samples(&xa, &xb, rule)
}

/// The rule of [`decide`] on two samples of a higher-is-better figure (throughput, or 1 / time),
/// side 0 = `xa`, side 1 = `xb`. Every value must be positive and finite.
pub fn decide_samples(xa: &[f64], xb: &[f64], rule: &Rule) -> Verdict {
    if xa.is_empty() || xb.is_empty() || xa.iter().chain(xb).any(|x| !x.is_finite() || *x <= 0.0) {
        return Verdict::NotCompared { reason: "no usable figure on a side".into() };
    }
    let ma = crate::stats::summary::median(xa);
    let mb = crate::stats::summary::median(xb);
    let (winner, factor) = if ma >= mb { (0, ma / mb) } else { (1, mb / ma) };
    if xa.len() < 2 || xb.len() < 2 {
        return if factor >= 1.0 + rule.single_run_effect {
            Verdict::Win { winner, factor, tested: false }
        } else {
            Verdict::Draw { factor, tested: false }
        };
    }
    let significant = welch_significant(xa, xb);
    if significant && factor >= 1.0 + rule.min_effect {
        Verdict::Win { winner, factor, tested: true }
    } else {
        Verdict::Draw { factor, tested: true }
    }
}

/// Welch's t-test on log values, two-sided at 95%.
pub fn welch_significant(a: &[f64], b: &[f64]) -> bool {
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let (ma, sa) = mean_sd(&la);
    let (mb, sb) = mean_sd(&lb);
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let va = sa * sa / na;
    let vb = sb * sb / nb;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // No noise at all on either side: any difference is real.
        return ma != mb;
    }
    let t = (ma - mb).abs() / se;
    let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let df = if df.is_finite() { df.floor().max(1.0) as usize } else { 1 };
    t > t975(df)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::*;
    use crate::workload::CacheReq;

    pub(crate) fn result(mibs: &[f64]) -> TestResult {
        TestResult {
            id: "1".into(),
            name: "t".into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            complete_reps: mibs.len() as u32,
            reps: mibs.iter().map(|m| rep(*m, true)).collect(),
            figure: Figure::MibPerS,
            summary: None,
            warnings: vec![],
        }
    }

    pub(crate) fn rep(mib: f64, met: bool) -> RepResult {
        RepResult {
            complete: true,
            wall_nanos: 1_000_000_000,
            bytes: (mib * 1048576.0) as u64,
            data_ops: 1,
            mib_per_s: mib,
            ops_per_s: 1.0,
            cpu_user_nanos: 0,
            cpu_sys_nanos: 0,
            cpu_pct_per_thread: 0.0,
            latency: vec![],
            phases: vec![PhaseResult {
                name: "p".into(),
                timed: true,
                threads: 1,
                wall_nanos: 1,
                bytes_read: 0,
                bytes_written: 0,
                data_ops: 0,
                cpu_user_nanos: 0,
                cpu_sys_nanos: 0,
                latency: vec![],
                cache: CacheCheck {
                    required: CacheReq::Uncached,
                    resident_fraction: if met { 0.0 } else { 1.0 },
                    method: "fadvise".into(),
                    met,
                },
                device: None,
                sync_nanos: 0,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn clear_win_with_repetitions() {
        let a = result(&[100.0, 102.0, 98.0]);
        let b = result(&[230.0, 225.0, 235.0]);
        match decide(&a, "ext4", &b, "xfs", &Rule::default()) {
            Verdict::Win { winner: 1, factor, tested: true } => {
                assert!((factor - 2.3).abs() < 0.01)
            }
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn noisy_overlap_is_a_draw() {
        let a = result(&[100.0, 140.0, 80.0]);
        let b = result(&[110.0, 90.0, 130.0]);
        assert!(matches!(
            decide(&a, "a", &b, "b", &Rule::default()),
            Verdict::Draw { tested: true, .. }
        ));
    }

    #[test]
    fn consistent_tiny_gap_is_a_draw_by_min_effect() {
        let a = result(&[100.0, 100.1, 99.9]);
        let b = result(&[102.0, 102.1, 101.9]);
        assert!(welch_significant(&[100.0, 100.1, 99.9], &[102.0, 102.1, 101.9]));
        assert!(matches!(decide(&a, "a", &b, "b", &Rule::default()), Verdict::Draw { .. }));
    }

    #[test]
    fn single_runs_use_the_larger_threshold() {
        let r = Rule::default();
        assert!(matches!(
            decide(&result(&[100.0]), "a", &result(&[108.0]), "b", &r),
            Verdict::Draw { tested: false, .. }
        ));
        assert!(matches!(
            decide(&result(&[100.0]), "a", &result(&[115.0]), "b", &r),
            Verdict::Win { winner: 1, tested: false, .. }
        ));
    }

    #[test]
    fn failures_and_unmet_cache_are_not_compared() {
        let mut a = result(&[1.0]);
        a.status = TestStatus::Failed { reason: "ENOSPC".into() };
        match decide(&a, "zfs", &result(&[1.0]), "ext4", &Rule::default()) {
            Verdict::NotCompared { reason } => assert!(reason.contains("failed on zfs: ENOSPC")),
            v => panic!("{v:?}"),
        }
        let mut b = result(&[1.0]);
        b.reps[0] = rep(1.0, false);
        match decide(&result(&[1.0]), "ext4", &b, "tmpfs", &Rule::default()) {
            Verdict::NotCompared { reason } => {
                assert!(reason.contains("not met on tmpfs"), "{reason}")
            }
            v => panic!("{v:?}"),
        }
    }
}
