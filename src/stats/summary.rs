//! Statistics over repetitions.
//!
//! Method, stated: for n repetitions of a test we report, for its throughput, its operation rate
//! and the elapsed time of its timed phases, the median, minimum and maximum, the coefficient of variation (sample standard deviation / mean, n-1 denominator),
//! and a two-sided 95% confidence interval for the mean from Student's t distribution with n-1
//! degrees of freedom: mean ± t(0.975, n-1) · s / √n, its lower end truncated at 0 (a throughput
//! cannot be negative; with few, noisy repetitions the interval can reach below). The t interval
//! assumes repetition noise is
//! roughly normal and repetitions are independent; fsbench recreates the test files for each
//! repetition to make them so. With n = 1 no interval is given.

use serde::{Deserialize, Serialize};
/// t(0.975, df) for df = 1..=30 (two-sided 95%), from standard tables.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 97.5% quantile of Student's t with `df` degrees of freedom (df >= 1).
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df - 1],
        31..=40 => 2.021,
        41..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// Median of a slice (mean of the middle two for even n). Empty: NaN.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Mean and sample standard deviation (n-1). One value: sd 0.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The 95% confidence interval of a figure's typical value, from 2 or more repetitions.
///
/// Positive figures (throughput, rates, seconds): the interval of the geometric mean, i.e. the
/// t interval of the mean of their logarithms, taken back (`exp`). Logarithms because rates
/// vary by factors, as `compare`'s rule assumes; the interval is asymmetric and never reaches
/// 0, which a symmetric interval of the mean did whenever the spread was wide (it was cut at 0,
/// hiding how wide). For tight figures the two agree (9..13: 9.11-13.07 against 9.04-12.96).
/// With a zero or negative value among them: the t interval of the mean.
pub fn ci95(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    if xs.iter().all(|x| x.is_finite() && *x > 0.0) {
        let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        let (m, sd) = mean_sd(&logs);
        let h = t975(xs.len() - 1) * sd / (xs.len() as f64).sqrt();
        return Some(((m - h).exp(), (m + h).exp()));
    }
    let (mean, sd) = mean_sd(xs);
    let half = t975(xs.len() - 1) * sd / (xs.len() as f64).sqrt();
    Some((mean - half, mean + half))
}

/// Statistics of one figure over completed repetitions (None when there are none).
pub fn stats(xs: &[f64]) -> Option<Stats> {
    if xs.is_empty() {
        return None;
    }
    let (mean, sd) = mean_sd(xs);
    let (lo, hi) = ci95(xs).unzip();
    Some(Stats {
        median: median(xs),
        mean,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
        max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        cv: if mean > 0.0 { sd / mean } else { 0.0 },
        ci95_low: lo,
        ci95_high: hi,
    })
}

/// How far the first repetition must lie from the others' median to be flagged (either way).
pub const FIRST_REP_FACTOR: f64 = 1.25;

/// The first repetition's figure divided by the median of the others, when it stands out.
///
/// Rule, on log figures: with at least 3 other repetitions, the first lies outside their range,
/// at least [`FIRST_REP_FACTOR`] from their median, and at least 3 times as far from that median
/// as the others spread (their max/min). Simulated with independent log-normal noise (no first
/// repetition effect), a first repetition is flagged in 3.8% of tests with 4 repetitions and
/// 0.9% with 5; with 3 repetitions it would be 15% (two others cannot say what is normal), so
/// fewer than 4 repetitions are never flagged. The usual cause is a first-touch cost of a fresh
/// testbed (blocks allocated on the host, metadata read or initialised once) or a cold cache,
/// which the others do not pay. `None` otherwise.
pub fn first_rep_stands_out(xs: &[f64]) -> Option<f64> {
    if xs.len() < 4 || xs.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
        return None;
    }
    let rest = &xs[1..];
    let m = median(rest);
    let lo = rest.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rest.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let r = xs[0] / m;
    let d = r.ln().abs();
    let outside = xs[0] < lo || xs[0] > hi;
    (outside && d >= FIRST_REP_FACTOR.ln() && d >= 3.0 * (hi / lo).ln()).then_some(r)
}

/// Statistics of one figure over the completed repetitions.
///
/// The confidence interval is for the mean, from Student's t distribution (two-sided 95%), which
/// assumes roughly normal repetition-to-repetition noise; with one repetition there is none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Sample standard deviation / mean (0 with one repetition).
    pub cv: f64,
    /// 95% CI of the geometric mean, low end (None with one repetition; see
    /// [`crate::stats::summary::ci95`]).
    pub ci95_low: Option<f64>,
    /// 95% CI of the geometric mean, high end.
    pub ci95_high: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let xs = [10.0, 12.0, 11.0, 13.0, 9.0];
        let s = stats(&xs).unwrap();
        assert_eq!(s.median, 11.0);
        assert_eq!(s.mean, 11.0);
        assert_eq!((s.min, s.max), (9.0, 13.0));
        assert!((s.cv - 0.14374).abs() < 1e-4, "{}", s.cv);
        // Of the geometric mean: logs' mean 2.38951, sd 0.14533, t(4) = 2.776:
        // e^(2.38951 ± 0.18044) = 9.11 .. 13.07.
        let (lo, hi) = (s.ci95_low.unwrap(), s.ci95_high.unwrap());
        assert!((lo - 9.107).abs() < 0.01 && (hi - 13.065).abs() < 0.01, "{lo} {hi}");
    }

    #[test]
    fn a_wide_spread_gives_a_wide_interval_above_zero_not_one_cut_at_zero() {
        // A 100-fold spread: the interval of the mean would run from -580 to 681.
        let s = stats(&[1.0, 100.0]).unwrap();
        let (lo, hi) = (s.ci95_low.unwrap(), s.ci95_high.unwrap());
        assert!(lo > 0.0 && lo < 1.0 && hi > 100.0, "{lo} {hi}");
        // Symmetric on the log scale: geometric mean 10, lo * hi = 100.
        assert!((lo * hi - 100.0).abs() < 1e-6, "{lo} {hi}");
        // A zero among the values (a metadata test's MiB/s): the interval of the mean.
        let z = stats(&[0.0, 0.0, 0.0]).unwrap();
        assert_eq!((z.ci95_low, z.ci95_high), (Some(0.0), Some(0.0)));
    }

    #[test]
    fn one_repetition_has_no_interval() {
        let s = stats(&[5.0]).unwrap();
        assert_eq!(s.cv, 0.0);
        assert!(s.ci95_low.is_none());
        assert!(stats(&[]).is_none());
    }

    #[test]
    fn even_median() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn t_table_edges() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(30), 2.042);
        assert_eq!(t975(1000), 1.960);
    }

    #[test]
    fn first_repetition_flag() {
        let r = first_rep_stands_out(&[387.0, 4000.0, 3900.0, 4100.0]).unwrap();
        assert!((r - 0.0968).abs() < 1e-3, "{r}");
        assert!(first_rep_stands_out(&[200.0, 100.0, 101.0, 99.0]).unwrap() > 1.9);
        // Within the others' range, or close to their median: not flagged.
        assert_eq!(first_rep_stands_out(&[100.0, 90.0, 130.0, 110.0]), None);
        assert_eq!(first_rep_stands_out(&[85.0, 100.0, 101.0, 99.0]), None);
        // Outside, but the others spread too much to call it odd.
        assert_eq!(first_rep_stands_out(&[50.0, 70.0, 100.0, 130.0]), None);
        // Fewer than 3 others cannot say what is normal.
        assert_eq!(first_rep_stands_out(&[10.0, 100.0, 101.0]), None);
    }
}
