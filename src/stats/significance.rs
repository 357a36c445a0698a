//! Significance tests behind `compare`'s and `diff`'s verdicts.
//!
//! Stated methods:
//! - [`yuen_welch`]: Yuen's two-sample test of trimmed means with Welch's unequal variances
//!   (K. K. Yuen, "The two-sample trimmed t for unequal population variances", Biometrika 61,
//!   1974; R. R. Wilcox, *Introduction to Robust Estimation and Hypothesis Testing*, 3rd ed.,
//!   2012, §5.3). Per side of n values, g = ⌊0.2·n⌋ values are trimmed from each end; the
//!   statistic is the difference of the 20% trimmed means over √(d₁ + d₂), with
//!   dᵢ = (nᵢ − 1)·s²_w,i / (hᵢ(hᵢ − 1)), s²_w the 20% winsorized variance and h = n − 2g the
//!   values left; degrees of freedom by Welch–Satterthwaite. With 5 to 9 values per side one
//!   value is trimmed at each end, so one outlying repetition neither moves the estimate nor
//!   widens the test. With 3 or 4 values nothing is trimmed and the test is Welch's t-test: an
//!   outlier then widens it (more draws, never more false alarms) — no test can tell one outlier
//!   among three values from noise without assuming the noise's shape.
//! - [`yuen_paired`]: the same trimmed t on the per-round differences of two paired samples
//!   (one-sample form: Tukey–McLaughlin; Wilcox §4.4.1): the 20% trimmed mean of the differences
//!   over √d, d as above for the one sample, h − 1 degrees of freedom. `compare` runs the
//!   configurations in interleaved rounds, so the i-th repetition of each was measured moments
//!   apart; a slow patch of the machine that hits both sides of a round cancels in their
//!   difference, where an unpaired test counts it as noise twice.
//! - [`student_t_two_sided_p`]: the two-sided p-value of Student's t, 2·P(T > |t|) =
//!   I_{df/(df+t²)}(df/2, 1/2), with the regularized incomplete beta function evaluated by its
//!   continued fraction (modified Lentz; Press et al., *Numerical Recipes*, 3rd ed., §6.4) and
//!   ln Γ by Lanczos' approximation (g = 7, 9 terms; |error| < 1e-13 for x > 0).
//! - [`benjamini_hochberg`]: the Benjamini–Hochberg step-up procedure (Benjamini & Hochberg,
//!   J. R. Stat. Soc. B 57, 1995). Sort the m p-values; reject the k smallest, k the largest i
//!   with p₍ᵢ₎ ≤ i·q/m. It bounds the expected share of false discoveries at q; when no
//!   difference is real (two identical runs), every discovery is false and the bound is the
//!   probability of flagging anything at all, the family-wise error rate.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Two-sided p-value of Student's t with `df` (> 0, need not be whole) degrees of freedom.
pub fn student_t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return 1.0;
    }
    if t.is_infinite() {
        return 0.0;
    }
    inc_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// Outcome of a two-sample test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoSample {
    /// Trimmed mean of the first sample minus that of the second.
    pub diff: f64,
    /// Standard error of `diff` (0 when neither sample has any spread).
    pub se: f64,
    /// The test statistic.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Values trimmed from each end of the first and of the second sample.
    pub trimmed: (usize, usize),
}

/// 20% trimmed mean, winsorized variance term d = (n−1)s²_w/(h(h−1)), h and g of one sample.
fn trimmed_parts(xs: &[f64]) -> (f64, f64, usize, usize) {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let g = (0.2 * n as f64).floor() as usize;
    let h = n - 2 * g;
    let tmean = v[g..n - g].iter().sum::<f64>() / h as f64;
    let (lo, hi) = (v[g], v[n - g - 1]);
    let w: Vec<f64> = v.iter().map(|x| x.clamp(lo, hi)).collect();
    let wmean = w.iter().sum::<f64>() / n as f64;
    let s2w = w.iter().map(|x| (x - wmean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    let d = (n as f64 - 1.0) * s2w / (h as f64 * (h as f64 - 1.0));
    (tmean, d, h, g)
}

/// 20% trimmed mean of `xs` and the half-width of its two-sided 95% confidence interval
/// (Tukey–McLaughlin: standard error from the winsorized variance, Student's t with h − 1
/// degrees of freedom, h the values kept): the one-sample form of [`yuen_welch`]. Needs at least
/// 2 values kept; `None` otherwise.
pub fn trimmed_mean_ci95(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (tmean, d, h, _) = trimmed_parts(xs);
    if h < 2 {
        return None;
    }
    Some((tmean, crate::stats::summary::t975(h - 1) * d.max(0.0).sqrt()))
}

/// 20% trimmed mean of `xs` and the square of its standard error (from the winsorized
/// variance, as [`trimmed_mean_ci95`]). Needs at least 2 values kept; `None` otherwise.
pub fn trimmed_mean_se2(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (tmean, d, h, _) = trimmed_parts(xs);
    (h >= 2).then_some((tmean, d.max(0.0)))
}

impl TwoSample {
    /// The same difference with `var` more variance in it, that variance known with `df`
    /// degrees of freedom (infinite: assumed, not estimated): the standard error grows to
    /// sqrt(se² + var), the degrees of freedom are combined by Welch–Satterthwaite, and `t` and
    /// `p` follow. Used for a variance the samples cannot show, such as the shift between runs
    /// made at different times.
    pub fn widened(self, var: f64, df: f64) -> TwoSample {
        if var.is_nan() || var <= 0.0 {
            return self;
        }
        let (s2, v2) = (self.se * self.se, var);
        let total = s2 + v2;
        let within = if s2 > 0.0 && self.df.is_finite() { s2 * s2 / self.df } else { 0.0 };
        let extra = if df.is_finite() && df > 0.0 { v2 * v2 / df } else { 0.0 };
        // An assumed variance on a sample without spread: normal, as Student's t with many df.
        let df = if within + extra > 0.0 { total * total / (within + extra) } else { 1e6 };
        let se = total.sqrt();
        let t = self.diff / se;
        TwoSample {
            diff: self.diff,
            se,
            t,
            df,
            p: student_t_two_sided_p(t, df),
            trimmed: self.trimmed,
        }
    }
}

/// Yuen–Welch test of `a` against `b` (see the module docs). Needs at least 2 values per side;
/// `None` otherwise.
pub fn yuen_welch(a: &[f64], b: &[f64]) -> Option<TwoSample> {
    if a.len() < 2 || b.len() < 2 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (ma, da, ha, ga) = trimmed_parts(a);
    let (mb, db, hb, gb) = trimmed_parts(b);
    let diff = ma - mb;
    let se2 = da + db;
    let trimmed = (ga, gb);
    if se2 <= 0.0 {
        // No spread on either side: any difference is real.
        return Some(no_spread(diff, trimmed));
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (da * da / (ha as f64 - 1.0) + db * db / (hb as f64 - 1.0));
    Some(TwoSample { diff, se: se2.sqrt(), t, df, p: student_t_two_sided_p(t, df), trimmed })
}

/// The test of a difference measured without any spread: any nonzero difference is real.
fn no_spread(diff: f64, trimmed: (usize, usize)) -> TwoSample {
    let p = if diff == 0.0 { 1.0 } else { 0.0 };
    let t = if diff == 0.0 { 0.0 } else { f64::INFINITY.copysign(diff) };
    TwoSample { diff, se: 0.0, t, df: f64::INFINITY, p, trimmed }
}

/// Yuen's trimmed t on paired values: `a[i] − b[i]` is one round's difference (see the module
/// docs). The result's `diff` is the 20% trimmed mean of the differences, `df` is h − 1 and
/// `trimmed` is (g, g). Needs at least 2 pairs with at least 2 kept; `None` otherwise.
pub fn yuen_paired(a: &[f64], b: &[f64]) -> Option<TwoSample> {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    if d.len() < 2 || a.len() != b.len() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let (diff, v, h, g) = trimmed_parts(&d);
    if h < 2 {
        return None;
    }
    if v <= 0.0 {
        return Some(no_spread(diff, (g, g)));
    }
    let se = v.sqrt();
    let (t, df) = (diff / se, (h - 1) as f64);
    Some(TwoSample { diff, se, t, df, p: student_t_two_sided_p(t, df), trimmed: (g, g) })
}

/// Benjamini–Hochberg at level `q`: which of `ps` are discoveries (NaN never is).
pub fn benjamini_hochberg(ps: &[f64], q: f64) -> Vec<bool> {
    let mut idx: Vec<usize> = (0..ps.len()).filter(|i| !ps[*i].is_nan()).collect();
    let m = idx.len();
    idx.sort_by(|x, y| ps[*x].total_cmp(&ps[*y]));
    let k = (1..=m).rev().find(|i| ps[idx[i - 1]] <= *i as f64 * q / m as f64).unwrap_or(0);
    let mut out = vec![false; ps.len()];
    for i in &idx[..k] {
        out[*i] = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_gamma_known_values() {
        assert!((ln_gamma(1.0)).abs() < 1e-12);
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn t_p_values_match_tables() {
        // Two-sided 5% critical values of the t table give p = 0.05.
        for (t, df) in [(12.706, 1.0), (4.303, 2.0), (2.776, 4.0), (2.228, 10.0), (2.042, 30.0)] {
            let p = student_t_two_sided_p(t, df);
            assert!((p - 0.05).abs() < 2e-4, "t {t} df {df}: p {p}");
        }
        // 1% critical value at df 5.
        assert!((student_t_two_sided_p(4.032, 5.0) - 0.01).abs() < 1e-4);
        assert_eq!(student_t_two_sided_p(0.0, 3.0), 1.0);
        // df = 1 is Cauchy: p = 1 − 2·atan(t)/π.
        let p = student_t_two_sided_p(3.0, 1.0);
        assert!((p - (1.0 - 2.0 * 3f64.atan() / std::f64::consts::PI)).abs() < 1e-10);
    }

    #[test]
    fn the_paired_test_cancels_what_both_sides_of_a_round_share() {
        // Side b is 10% faster than a in every round, while the rounds themselves drift 3x.
        let a = [1.0f64, 2.0, 3.0, 1.5, 2.5, 1.2].map(f64::ln);
        let b: Vec<f64> = a.iter().map(|x| x + 1.1f64.ln()).collect();
        let unpaired = yuen_welch(&a, &b).unwrap();
        assert!(unpaired.p > 0.5, "drift hides it unpaired: {unpaired:?}");
        let paired = yuen_paired(&a, &b).unwrap();
        assert!((paired.diff + 1.1f64.ln()).abs() < 1e-12 && paired.p < 1e-9, "{paired:?}");
        // Noisy differences: the trimmed mean of the differences, h − 1 degrees of freedom.
        let b2 = [1.2f64, 2.1, 3.6, 1.4, 2.9, 1.3].map(f64::ln);
        let r = yuen_paired(&a, &b2).unwrap();
        assert_eq!((r.trimmed, r.df), ((1, 1), 3.0));
        assert!(r.diff < 0.0 && r.p > 0.05 && r.p < 0.1, "{r:?}");
        assert!(yuen_paired(&a[..1], &b2[..1]).is_none());
        assert!(yuen_paired(&a, &b2[..5]).is_none(), "unequal lengths");
    }

    /// A variance the samples cannot show (the shift between runs made at different times)
    /// widens the test: an assumed one keeps the samples' degrees of freedom as the floor, an
    /// estimated one with few degrees of freedom lowers them; none leaves the test as it was.
    #[test]
    fn a_widened_test_adds_the_variance_and_combines_the_degrees_of_freedom() {
        let a = [1.00f64, 1.01, 0.99, 1.005, 0.995].map(f64::ln);
        let b = [0.85f64, 0.86, 0.84, 0.855, 0.845].map(f64::ln);
        let r = yuen_welch(&a, &b).unwrap();
        assert!(r.p < 1e-4, "tight samples: {r:?}");
        assert_eq!(r.widened(0.0, f64::INFINITY), r);
        let assumed = r.widened(2.0 * 0.06f64.powi(2), f64::INFINITY);
        assert!((assumed.se - (r.se * r.se + 0.0072).sqrt()).abs() < 1e-12, "{assumed:?}");
        assert!(assumed.df > r.df && assumed.p > 0.01 && assumed.p < 0.2, "{assumed:?}");
        let estimated = r.widened(2.0 * 0.06f64.powi(2), 2.0);
        assert!(estimated.df < 2.1 && estimated.p > assumed.p, "{estimated:?}");
        // No spread in the samples: an assumed variance makes the test normal.
        let flat = yuen_welch(&[1.0, 1.0], &[2.0, 2.0]).unwrap();
        let w = flat.widened(0.01, f64::INFINITY);
        assert!((w.se - 0.1).abs() < 1e-12 && (w.p - 0.0).abs() < 1e-12 && w.df >= 1e6, "{w:?}");
    }

    #[test]
    fn yuen_without_trimming_is_welch() {
        // Welch by hand: means 2 and 5, variances 1 and 1, n 3 and 3: se = sqrt(2/3),
        // t = -3/0.8165 = -3.674, df = (2/3)^2 / (2 * (1/3)^2 / 2) = 4.
        let r = yuen_welch(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(r.trimmed, (0, 0));
        assert!((r.t + 3.674).abs() < 1e-3 && (r.df - 4.0).abs() < 1e-9, "{r:?}");
        assert!((r.p - 0.0213).abs() < 5e-4, "{r:?}");
    }

    #[test]
    fn yuen_trims_one_outlier_of_five() {
        let a = [10.0, 10.1, 9.9, 10.05, 0.5];
        let b = [9.0, 9.1, 8.9, 9.05, 8.95];
        let r = yuen_welch(&a, &b).unwrap();
        assert_eq!(r.trimmed, (1, 1));
        assert!(r.p < 0.001 && r.diff > 0.9, "{r:?}");
        // Four values are not trimmed: the outlier widens the test (Welch), the gap is lost.
        let w = yuen_welch(&a[1..], &b[1..]).unwrap();
        assert_eq!(w.trimmed, (0, 0));
        assert!(w.p > 0.05, "{w:?}");
    }

    #[test]
    fn bh_step_up() {
        // m = 4, q = 0.05: thresholds 0.0125, 0.025, 0.0375, 0.05. The largest i with p(i) at
        // most its threshold is 3 (0.035 <= 0.0375), so the three smallest are discoveries, also
        // 0.03, which is above its own threshold 0.025 (step-up).
        let ps = [0.01, 0.03, 0.035, 0.5];
        assert_eq!(benjamini_hochberg(&ps, 0.05), vec![true, true, true, false]);
        assert_eq!(benjamini_hochberg(&[0.03, 0.5], 0.05), vec![false, false]);
        assert_eq!(benjamini_hochberg(&[0.02, f64::NAN], 0.05), vec![true, false]);
        assert!(benjamini_hochberg(&[], 0.05).is_empty());
    }
}
