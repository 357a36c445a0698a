//! `--repeat auto`: how many repetitions a test gets, and when to stop adding them: when its
//! figure is known well enough, when its verdict against the baseline is settled, or when the
//! most repetitions or the time budget are spent. The suite driver asks [`auto_verdict`] after
//! every round.

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
}
