//! `--repeat auto`: how many repetitions a test gets, and when to stop adding them: when its
//! figure is known well enough, when its verdict against the baseline is settled, or when the
//! most repetitions or the time budget are spent. The suite driver asks [`auto_verdict`] after
//! every round.
//!
//! In a `compare`, once every test has its `min` rounds, the rounds left are spent where they
//! buy a decision ([`next`]): each open test's verdict is forecast ([`rounds_to_settle`]: how
//! many more rounds its measured gap and noise need to settle), and the next round goes to the
//! test expected to settle in the fewest seconds (forecast rounds × its measured seconds per
//! round, set-up and cache work included). A test that even an optimistic forecast says cannot
//! settle in the budget left is closed at once, with the budget it would have needed, instead of
//! taking the rest of the budget. The guarantees do not depend on the allocation: a settled win
//! is tested at a level split over every look of every comparison (at most `max − min + 1`
//! looks a test, whichever tests get them), and the final verdicts are the one decision rule's.

use crate::model::result::{TestResult, TestStatus};

/// `--repeat auto`: how many repetitions, and when to stop adding them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoRepeat {
    /// Repetitions every test gets (5: the least at which Yuen's test trims one outlier).
    pub min: u32,
    /// Most repetitions of a test.
    pub max: u32,
    /// Stop adding repetitions to a test when the 95% confidence interval of its figure is
    /// within ± this share (0.05 = ±5%) on every target ([`crate::decision::relative_ci`]).
    pub target_ci: f64,
    /// No repetition beyond `min` starts once the run has lasted this long.
    pub budget: Option<std::time::Duration>,
    /// `compare`: also stop adding repetitions to a test once its verdict against the baseline
    /// (the first target) is settled on every other target, so the rounds left go to the tests
    /// still undecided.
    pub settle: Option<Settle>,
}

/// When `compare`'s `--repeat auto` calls a verdict settled ([`crate::decision::settled`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle {
    /// The decision rule (its minimum effect is the margin).
    pub rule: crate::model::verdict::Rule,
    /// One-sided level of a settled win ([`crate::decision::settle_win_p`]).
    pub win_p: f64,
}

impl Settle {
    /// For a comparison of `tests` tests on `targets` targets (the first the baseline) under `a`.
    pub fn new(
        rule: crate::model::verdict::Rule,
        tests: usize,
        targets: usize,
        a: &AutoRepeat,
    ) -> Settle {
        let looks = a.max.max(a.min) - a.min + 1;
        let win_p = crate::decision::settle_win_p(tests * targets.saturating_sub(1), looks);
        Settle { rule, win_p }
    }
}

impl Default for AutoRepeat {
    fn default() -> Self {
        AutoRepeat { min: 5, max: 20, target_ci: 0.05, budget: None, settle: None }
    }
}

/// Why `--repeat auto` stopped adding repetitions to a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The confidence interval reached the target.
    Ci,
    /// The verdict against the baseline is settled on every target (`compare`).
    Settled,
    /// The most repetitions were run.
    Max,
    /// The time budget was spent.
    Budget,
    /// The test failed (or could not be measured) on a target.
    Failed,
    /// Not expected to settle within the budget left ([`next`]).
    Noisy,
}

impl Stop {
    /// The word outputs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Ci => "ci",
            Stop::Settled => "settled",
            Stop::Max => "max",
            Stop::Budget => "budget",
            Stop::Failed => "failed",
            Stop::Noisy => "noisy",
        }
    }
}

/// Whether test results `on` (one per target, the baseline first, or the one target of a `run`)
/// need another repetition after `done` rounds: `None` to go on, or why to stop. `spent`:
/// whether the budget is used up. Also returns the widest relative CI half-width over the
/// targets.
pub fn auto_verdict(
    a: &AutoRepeat,
    on: &[&TestResult],
    done: u32,
    spent: bool,
) -> (Option<Stop>, Option<f64>) {
    let mut widest: Option<f64> = Some(0.0);
    for t in on {
        if t.status != TestStatus::Ok {
            return (Some(Stop::Failed), None);
        }
        let xs: Vec<f64> =
            t.reps.iter().filter(|r| r.complete).map(|r| t.figure.value(r)).collect();
        match crate::decision::relative_ci(&xs) {
            Some(w) => widest = widest.map(|m| m.max(w)),
            None => widest = None,
        }
    }
    let stop = if done < a.min {
        None
    } else if widest.is_some_and(|w| w <= a.target_ci) {
        Some(Stop::Ci)
    } else if a.settle.is_some_and(|st| {
        on.len() >= 2
            && on[1..]
                .iter()
                .all(|t| crate::decision::settled(on[0], t, &st.rule, st.win_p).is_some())
    }) {
        Some(Stop::Settled)
    } else if done >= a.max {
        Some(Stop::Max)
    } else if spent {
        Some(Stop::Budget)
    } else {
        None
    };
    (stop, widest)
}

/// Where one open test of a `compare --repeat auto` stands, for [`next`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// Rounds run (a repetition on every configuration each).
    pub rounds: u32,
    /// Seconds its rounds took so far, every configuration, set-up and cache work included.
    pub seconds: f64,
    /// More rounds expected to settle its verdict ([`rounds_to_settle`]); infinite when no
    /// number of rounds is expected to.
    pub to_settle: f64,
    /// The same with the spread at the low end of its 90% interval: what the test is given up
    /// on, so that one odd round does not give up a gap that would settle.
    pub to_settle_at_best: f64,
}

impl Standing {
    /// Seconds one more round of the test is expected to take.
    pub fn per_round(&self) -> f64 {
        self.seconds / f64::from(self.rounds.max(1))
    }
}

/// What [`next`] says to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run one more round of this open test (its index among the candidates' ids).
    Run(usize),
    /// Close this test, why ([`Stop::Noisy`]: not even the optimistic forecast settles it in
    /// the budget left; [`Stop::Budget`]: nothing is left), with the budget (seconds from the
    /// start of the repetitions) the plain forecast says it would have needed, if finite.
    GiveUp(usize, Stop, Option<f64>),
    /// Nothing open.
    Done,
}

/// The next step of a `compare --repeat auto` after the minimum rounds: `open` holds each open
/// test's id and [`Standing`]; `elapsed` and `budget` are seconds of the repetitions so far and
/// allowed (no budget: none is given up for lack of time). Tests given up come first; then the
/// test expected to settle soonest per second (ties: the fewest rounds). A test whose forecast
/// is infinite runs only when every open test's is (and then the least-run one).
pub fn next(open: &[(usize, Standing)], elapsed: f64, budget: Option<f64>) -> Next {
    let left = budget.map(|b| (b - elapsed).max(0.0));
    for &(id, s) in open {
        let at_best = s.to_settle_at_best * s.per_round();
        if let Some(l) = left.filter(|l| at_best.is_nan() || at_best > *l) {
            let need = s.to_settle * s.per_round();
            let why = if l > 0.0 { Stop::Noisy } else { Stop::Budget };
            return Next::GiveUp(id, why, need.is_finite().then_some(elapsed + need));
        }
    }
    let cost = |s: &Standing| s.to_settle * s.per_round();
    open.iter()
        .min_by(|(_, x), (_, y)| cost(x).total_cmp(&cost(y)).then(x.rounds.cmp(&y.rounds)))
        .map_or(Next::Done, |(id, _)| Next::Run(*id))
}

/// The least share of the minimum rounds' time that must be left of the budget for any round
/// beyond the minimum to run ([`budget_after_minimum`]).
pub const LEAST_LEFT: f64 = 0.8;

/// The budget (seconds from the start of the repetitions) that the rounds after the minimum may
/// use, once the minimum rounds took `min_s`: `budget`, or, when less than [`LEAST_LEFT`] × `min_s`
/// is left of it, none at all (`min_s`: every open test is closed as out of budget).
///
/// A little budget left is worse than none: it goes to the gaps nearest to settling, which then
/// settle in one run and not in an identical other one. Simulated pairs of identical unit14
/// compares (`allocating_rounds_by_expected_progress_agrees_as_often_in_less_time`) agreed in 144
/// of 150 with the minimum rounds only, 110 to 128 with 10-50% of their time left over, and 143
/// to 144 from 87% up; see docs/design/decision.md.
pub fn budget_after_minimum(budget: Option<f64>, min_s: f64) -> Option<f64> {
    budget.map(|b| if b - min_s < LEAST_LEFT * min_s { b.min(min_s) } else { b })
}

/// Most rounds a forecast looks ahead; beyond it a test is taken as never settling.
const FORECAST_HORIZON: u32 = 400;

/// How many more rounds the verdict of `on` (the baseline first, one result per configuration)
/// is expected to need to settle against the baseline on every configuration ([`crate::decision::settled`]),
/// if the gap and the spread of the per-round log ratios stay as measured: the standard error
/// shrinks as 1/√n and the trimmed test's degrees of freedom grow with n. `optimistic`: with the
/// spread at the low end of its 90% interval. 0 when settled; infinite when a side cannot be
/// compared, or the gap sits on the minimum effect (it never settles), or beyond the horizon.
pub fn rounds_to_settle(on: &[&TestResult], st: &Settle, optimistic: bool) -> f64 {
    let Some((a, rest)) = on.split_first() else { return f64::INFINITY };
    let mut most: f64 = 0.0;
    for b in rest {
        let Ok((xa, xb, paired)) = crate::decision::samples(a, "a", b, "b", true) else {
            return f64::INFINITY;
        };
        let Some(g) = crate::decision::gap(&xa, &xb, paired) else { return f64::INFINITY };
        if crate::decision::settled_gap(g, &st.rule, st.win_p).is_some() {
            continue;
        }
        let n = xa.len() as f64;
        let se = if optimistic { g.r.se * spread_low(g.r.df) } else { g.r.se };
        let margin = (1.0 + st.rule.min_effect).ln();
        let size = g.r.diff.abs();
        let big = g.factor >= 1.0 + st.rule.min_effect;
        // What must exceed 0 at the level of a settled win, or of a settled draw.
        let (over, level) = if g.agrees && big {
            (size - st.rule.settle_win_margin(), st.win_p)
        } else if !big {
            (margin - size, crate::decision::SETTLE_DRAW_P)
        } else {
            (0.0, 0.0)
        };
        if over <= 0.0 {
            return f64::INFINITY;
        }
        // Whether m rounds would settle it (not monotone in m: the trimming grows in steps
        // every 5 rounds, so the first m is searched for in order).
        let settles = |m: u32| {
            let se_m = se * (n / f64::from(m)).sqrt();
            let h = m - 2 * (m / 5);
            let df = f64::from(h.saturating_sub(1).max(1));
            se_m == 0.0
                || crate::stats::significance::student_t_two_sided_p(over / se_m, df) / 2.0 < level
        };
        // No m below the normal approximation's can settle (Student's t quantile is above the
        // normal one): the search starts there.
        let z = normal_quantile_upper(level) * 0.99;
        let from = (n * (z * se / over).powi(2)).floor().max(n + 1.0).min(f64::from(u32::MAX / 2));
        let first = from as u32;
        match (first..=xa.len() as u32 + FORECAST_HORIZON).find(|&m| settles(m)) {
            Some(m) => most = most.max(f64::from(m) - n),
            None => return f64::INFINITY,
        }
    }
    most
}

/// z with P(Z > z) = `p` for a standard normal Z (bisection on
/// [`crate::model::job::normal_cdf`]; p in (0, 0.5]).
fn normal_quantile_upper(p: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, 40.0);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if 1.0 - crate::model::job::normal_cdf(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The low end of a 90% interval of a standard deviation estimated with `df` degrees of freedom,
/// as a share of the estimate: √(χ²₀.₁₀(df)/df), with Wilson–Hilferty's approximation of the
/// quantile (within 1% of the tables from df = 2).
fn spread_low(df: f64) -> f64 {
    let df = df.max(1.0);
    let z10 = -1.281_551_6;
    let k = 2.0 / (9.0 * df);
    let q = df * (1.0 - k + z10 * k.sqrt()).max(0.0).powi(3);
    (q / df).sqrt().clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_auto_closes_a_test_when_every_target_is_known_well_enough() {
        use crate::decision::tests::result;
        let a = AutoRepeat { min: 5, max: 10, target_ci: 0.05, budget: None, settle: None };
        let tight = result(&[100.0, 101.0, 99.0, 100.5, 99.5]);
        let wide = result(&[100.0, 150.0, 70.0, 120.0, 90.0]);
        assert_eq!(auto_verdict(&a, &[&tight, &tight], 5, false).0, Some(Stop::Ci));
        assert_eq!(auto_verdict(&a, &[&tight, &tight], 4, false).0, None, "not before min");
        // One configuration still noisy: go on, until the maximum or the budget.
        let (stop, widest) = auto_verdict(&a, &[&tight, &wide], 5, false);
        assert_eq!(stop, None);
        assert!(widest.unwrap() > 0.05, "{widest:?}");
        assert_eq!(auto_verdict(&a, &[&tight, &wide], 10, false).0, Some(Stop::Max));
        assert_eq!(auto_verdict(&a, &[&tight, &wide], 6, true).0, Some(Stop::Budget));
        let mut failed = tight.clone();
        failed.status = TestStatus::Failed { reason: "ENOSPC".into() };
        assert_eq!(auto_verdict(&a, &[&failed, &tight], 1, false).0, Some(Stop::Failed));
    }

    #[test]
    fn compare_closes_a_test_whose_verdict_is_settled_and_goes_on_with_an_undecided_one() {
        use crate::decision::tests::result;
        use crate::model::verdict::Rule;
        let a = AutoRepeat { min: 5, max: 20, target_ci: 0.01, budget: None, settle: None };
        let a = AutoRepeat { settle: Some(Settle::new(Rule::default(), 14, 2, &a)), ..a };
        // 20% noise on both sides: neither figure is known to ±1%.
        let base = result(&[100.0, 125.0, 80.0, 110.0, 90.0, 105.0]);
        let three_x = result(&[300.0, 375.0, 240.0, 330.0, 270.0, 315.0]);
        assert_eq!(auto_verdict(&a, &[&base, &three_x], 6, false).0, Some(Stop::Settled));
        assert_eq!(auto_verdict(&a, &[&base, &three_x], 4, false).0, None, "not before min");
        // A 1.6x gap in that noise, rounds independent: undecided, so it gets more rounds (up
        // to the maximum).
        let far = result(&[200.0, 128.0, 160.0, 144.0, 168.0, 176.0]);
        assert_eq!(auto_verdict(&a, &[&base, &far], 6, false).0, None);
        assert_eq!(auto_verdict(&a, &[&base, &far], 20, false).0, Some(Stop::Max));
        // Three configurations: settled only when every one is, against the baseline.
        assert_eq!(auto_verdict(&a, &[&base, &three_x, &far], 6, false).0, None);
        // Same figures with a 1% spread, 1% apart: a settled draw (equivalent within 5%).
        let t1 = result(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.2]);
        let t2 = result(&[101.0, 102.0, 100.0, 101.5, 100.5, 101.2]);
        let tight_target = AutoRepeat { target_ci: 1e-6, ..a };
        assert_eq!(auto_verdict(&tight_target, &[&t1, &t2], 6, false).0, Some(Stop::Settled));
        // `run` (one target) never settles: there is no verdict.
        assert_eq!(auto_verdict(&tight_target, &[&t1], 6, false).0, None);
        let no_settle = AutoRepeat { settle: None, ..tight_target };
        assert_eq!(auto_verdict(&no_settle, &[&base, &three_x], 6, false).0, None);
    }

    fn standing(rounds: u32, seconds: f64, to_settle: f64, at_best: f64) -> Standing {
        Standing { rounds, seconds, to_settle, to_settle_at_best: at_best }
    }

    #[test]
    fn the_next_round_goes_where_it_is_expected_to_settle_soonest_per_second() {
        // A cheap test 3 rounds from settling, an expensive one 1 round away: 3 × 0.3 s beats
        // 1 × 12 s.
        let cheap = standing(5, 1.5, 3.0, 1.0);
        let dear = standing(5, 60.0, 1.0, 0.5);
        assert_eq!(next(&[(0, dear), (1, cheap)], 100.0, Some(600.0)), Next::Run(1));
        // No budget: nothing is given up, an endless forecast runs last (then the least run).
        let never = standing(5, 1.0, f64::INFINITY, f64::INFINITY);
        assert_eq!(next(&[(0, never), (1, cheap)], 100.0, None), Next::Run(1));
        let never6 = standing(6, 1.2, f64::INFINITY, f64::INFINITY);
        assert_eq!(next(&[(0, never6), (1, never)], 100.0, None), Next::Run(1));
        assert_eq!(next(&[], 100.0, None), Next::Done);
    }

    #[test]
    fn a_test_that_cannot_settle_in_the_budget_left_is_given_up_with_what_it_would_need() {
        // 12 s a round, even optimistically 40 rounds from settling: 480 s, with 100 s left.
        let dear = standing(5, 60.0, 90.0, 40.0);
        let cheap = standing(5, 1.5, 3.0, 1.0);
        match next(&[(1, cheap), (7, dear)], 500.0, Some(600.0)) {
            Next::GiveUp(7, Stop::Noisy, Some(need)) => assert!((need - 1580.0).abs() < 1e-6),
            n => panic!("{n:?}"),
        }
        // Never expected to settle: given up, with no budget that would do.
        let never = standing(5, 1.0, f64::INFINITY, f64::INFINITY);
        assert_eq!(next(&[(2, never)], 10.0, Some(600.0)), Next::GiveUp(2, Stop::Noisy, None));
        // The budget spent: what is still open stops for the budget.
        assert!(matches!(
            next(&[(1, cheap)], 600.0, Some(600.0)),
            Next::GiveUp(1, Stop::Budget, _)
        ));
        // Optimistically within what is left: it runs, though the plain forecast is longer.
        let maybe = standing(5, 10.0, 60.0, 8.0);
        assert_eq!(next(&[(3, maybe)], 500.0, Some(600.0)), Next::Run(3));
    }

    #[test]
    fn the_forecast_counts_rounds_to_settle_from_the_gap_and_its_noise() {
        use crate::decision::tests::result;
        use crate::model::verdict::Rule;
        let a = AutoRepeat::default();
        let st = Settle::new(Rule::default(), 14, 2, &a);
        let base = result(&[100.0, 110.0, 95.0, 105.0, 90.0]);
        // 3x in 10% noise: one round from settling after 5 (the trimmed test has 2 degrees of
        // freedom), settled after 8.
        let far = result(&[300.0, 320.0, 290.0, 310.0, 280.0]);
        assert_eq!(rounds_to_settle(&[&base, &far], &st, false), 1.0);
        let base8 = result(&[100.0, 110.0, 95.0, 105.0, 90.0, 102.0, 98.0, 107.0]);
        let far8 = result(&[300.0, 320.0, 290.0, 310.0, 280.0, 305.0, 296.0, 318.0]);
        assert_eq!(rounds_to_settle(&[&base8, &far8], &st, false), 0.0);
        // 1.4x in the same noise: some rounds more; optimistically fewer.
        let near = result(&[140.0, 150.0, 128.0, 152.0, 130.0]);
        let plain = rounds_to_settle(&[&base, &near], &st, false);
        let best = rounds_to_settle(&[&base, &near], &st, true);
        assert!(plain > 0.0 && plain.is_finite() && best <= plain, "{plain} {best}");
        // The same gap with more spread between the rounds' ratios needs more rounds.
        let noisy_near = result(&[160.0, 130.0, 150.0, 120.0, 145.0]);
        let noisier = rounds_to_settle(&[&base, &noisy_near], &st, false);
        assert!(noisier > plain, "{noisier} {plain}");
        // A gap on the minimum effect (5%) settles neither way.
        let edge = result(&[105.0, 115.5, 99.75, 110.25, 94.5]);
        assert_eq!(rounds_to_settle(&[&base, &edge], &st, false), f64::INFINITY);
        // A side that failed cannot be forecast.
        let mut failed = near.clone();
        failed.status = TestStatus::Failed { reason: "ENOSPC".into() };
        assert_eq!(rounds_to_settle(&[&base, &failed], &st, false), f64::INFINITY);
    }

    #[test]
    fn rounds_beyond_the_minimum_need_most_of_its_time_left() {
        // The minimum took 200 s: 160 s must be left.
        assert_eq!(budget_after_minimum(Some(240.0), 200.0), Some(200.0));
        assert_eq!(budget_after_minimum(Some(359.0), 200.0), Some(200.0));
        assert_eq!(budget_after_minimum(Some(360.0), 200.0), Some(360.0));
        // Already past the budget: it stays spent; no budget: none.
        assert_eq!(budget_after_minimum(Some(100.0), 200.0), Some(100.0));
        assert_eq!(budget_after_minimum(None, 200.0), None);
    }
}
