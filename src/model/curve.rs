//! Latency against load (`--curve`, the `curve_steps` phase key): what a curve asks for
//! ([`CurvePlan`]), what each step measured ([`CurveStep`]) and the curve with its knee
//! ([`PhaseCurve`]).
//!
//! Why: one closed-loop figure says how fast a configuration goes flat out, not how its
//! latency grows on the way there, which is what capacity planning needs (vdbench's
//! `iorate=curve`, the "hockey stick"). A curve runs the phase closed-loop once (its maximum),
//! then at fixed rates (open loop, [`super::series::Load`]) of 10%, 20%, ... 100% of that
//! maximum, each step for a bounded time, with latency timed from each op's scheduled start.
//!
//! The knee, as every output states it: the unloaded p99 is the p99 of the lowest step; going
//! up the steps in the order of their asked rates, the knee is the step with the highest
//! achieved rate before the first step whose p99 exceeds `knee_multiple` × the unloaded p99
//! (default 3×). When no step exceeds it the knee is the top step and the curve says the
//! latency stayed within the multiple up to the closed-loop maximum.

use serde::{Deserialize, Serialize};

/// Steps of a curve when none are given: 10%, 20%, ... 100%.
pub const DEFAULT_STEPS: u32 = 10;
/// Time of one step when none is given, seconds (`--scale quick`: [`QUICK_STEP_SECS`]).
pub const DEFAULT_STEP_SECS: f64 = 2.0;
/// Time of one step under `--scale quick`, seconds.
pub const QUICK_STEP_SECS: f64 = 1.0;
/// The knee's p99 multiple of the unloaded p99 when none is given.
pub const DEFAULT_KNEE_MULTIPLE: f64 = 3.0;
/// Most steps of one curve (each is a timed run of the phase).
pub const MAX_STEPS: usize = 100;

/// What a curve asks of a time-based timed data phase: the steps as percentages of the
/// closed-loop maximum (ascending, each in (0, 100]), each step's time, the knee's multiple.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePlan {
    /// Steps, % of the closed-loop maximum, ascending.
    pub percents: Vec<f64>,
    /// Time of one step.
    pub step_nanos: u64,
    /// The knee: the p99 limit as a multiple of the unloaded (lowest step's) p99.
    pub knee_multiple: f64,
}

impl CurvePlan {
    /// `n` even steps: 100/n %, 2·100/n %, ... 100%.
    pub fn even(n: u32) -> Vec<f64> {
        (1..=n).map(|i| 100.0 * i as f64 / n as f64).collect()
    }

    /// The steps as given (a list of percentages), checked and sorted; or why not, with the
    /// fix. `what` names where they were written (`--curve-steps`, `curve_steps`).
    pub fn steps(mut percents: Vec<f64>, what: &str) -> Result<Vec<f64>, String> {
        if let Some(p) = percents.iter().find(|p| !(p.is_finite() && **p > 0.0 && **p <= 100.0)) {
            return Err(format!(
                "{what}: step {p}% is outside (0, 100]: each step is a percentage of the closed-loop maximum, above 0 and at most 100"
            ));
        }
        percents.sort_by(f64::total_cmp);
        percents.dedup();
        if percents.len() < 2 {
            return Err(format!(
                "{what}: a curve needs at least 2 different steps (one step is one fixed rate, not a curve): give a count such as 10 (10%, 20%, ... 100%) or a list such as 25,50,75,100; for one rate use rate_iops"
            ));
        }
        if percents.len() > MAX_STEPS {
            return Err(format!(
                "{what}: {} steps; at most {MAX_STEPS} (each is a timed run of the phase)",
                percents.len()
            ));
        }
        Ok(percents)
    }

    /// The knee multiple, checked.
    pub fn knee(m: f64, what: &str) -> Result<f64, String> {
        if m.is_finite() && m > 1.0 && m <= 1000.0 {
            Ok(m)
        } else {
            Err(format!("{what} = {m}: give the knee's p99 limit as a multiple of the unloaded p99, above 1 and at most 1000 (default 3)"))
        }
    }

    /// Each step's asked rate (ops per second of the test) for a closed-loop maximum of
    /// `max_ops_per_s`.
    pub fn asked(&self, max_ops_per_s: f64) -> Vec<f64> {
        self.percents.iter().map(|p| max_ops_per_s * p / 100.0).collect()
    }

    /// Seconds of timed steps per phase and repetition (beside the closed-loop pass).
    pub fn seconds(&self) -> f64 {
        self.percents.len() as f64 * self.step_nanos as f64 / 1e9
    }
}

/// One step of a curve: the rate asked and achieved, and the latency of the data ops (reads
/// and writes together) timed from their scheduled starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CurveStep {
    /// % of the closed-loop maximum asked.
    pub percent: f64,
    /// Ops per second asked (every thread together).
    pub asked_ops_per_s: f64,
    /// Ops per second achieved (ops issued over the step's wall time).
    pub achieved_ops_per_s: f64,
    /// How far the achieved rate fell short of the asked one, % of the asked (0 when met or
    /// exceeded).
    pub shortfall_percent: f64,
    /// Median latency.
    pub p50_nanos: u64,
    /// 99th percentile.
    pub p99_nanos: u64,
    /// 99.9th percentile.
    pub p999_nanos: u64,
    /// Data ops measured.
    pub ops: u64,
    /// The step's wall time.
    pub wall_nanos: u64,
}

impl CurveStep {
    /// The shortfall of `achieved` against `asked`, % of the asked (0 when met).
    pub fn shortfall(asked: f64, achieved: f64) -> f64 {
        if asked > 0.0 {
            (100.0 * (1.0 - achieved / asked)).max(0.0)
        } else {
            0.0
        }
    }
}

/// A phase's latency-versus-load curve.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseCurve {
    /// The closed-loop pass's rate (the phase as written): ops per second of the pattern.
    pub closed_loop_ops_per_s: f64,
    /// The closed-loop pass's p99 (data ops).
    pub closed_loop_p99_nanos: u64,
    /// The knee's multiple of the unloaded p99.
    pub knee_multiple: f64,
    /// The unloaded p99: the lowest step's.
    pub unloaded_p99_nanos: u64,
    /// Each step, by ascending asked rate.
    pub steps: Vec<CurveStep>,
    /// Index in `steps` of the knee ([`knee`]); `None` with no step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<usize>,
    /// Some step's p99 exceeded the limit (the knee is below the maximum); `false`: the p99
    /// stayed within it at every step.
    #[serde(default)]
    pub exceeded: bool,
    /// The steps were cut short (a failure or Ctrl-C): fewer than planned.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl PhaseCurve {
    /// The curve of `steps` (ascending asked rates) with its knee for `multiple`.
    pub fn of(closed: (f64, u64), multiple: f64, steps: Vec<CurveStep>, partial: bool) -> Self {
        let (knee, exceeded) = knee(&steps, multiple);
        PhaseCurve {
            closed_loop_ops_per_s: closed.0,
            closed_loop_p99_nanos: closed.1,
            knee_multiple: multiple,
            unloaded_p99_nanos: steps.first().map_or(0, |s| s.p99_nanos),
            steps,
            knee,
            exceeded,
            partial,
        }
    }

    /// The knee's step.
    pub fn knee_step(&self) -> Option<&CurveStep> {
        self.knee.and_then(|k| self.steps.get(k))
    }

    /// The p99 limit of the knee, ns.
    pub fn limit_nanos(&self) -> f64 {
        self.unloaded_p99_nanos as f64 * self.knee_multiple
    }

    /// The definition, as outputs state it under a curve.
    pub fn definition(&self) -> String {
        format!(
            "knee: the highest achieved rate before the first step whose p99 exceeds {}× the unloaded p99 (the lowest step's); latency timed from each op's scheduled start",
            crate::model::units::short(self.knee_multiple)
        )
    }
}

/// `compare`'s verdict on one step of a curve: configuration `config` against the baseline,
/// on the step's p99 over the repetitions (lower is better), by the comparison's rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepVerdict {
    /// The phase.
    pub phase: String,
    /// The configuration compared with the baseline (its index).
    pub config: usize,
    /// The step, % of each configuration's own closed-loop maximum.
    pub percent: f64,
    /// The verdict (`NotCompared` with one repetition a side: not decided).
    pub verdict: crate::model::verdict::Verdict,
}

/// The knee of `steps` (ascending asked rates) for `multiple`: walking up, the step with the
/// highest achieved rate before the first step whose p99 exceeds `multiple` × the first
/// step's p99; and whether such a step exists. `(None, false)` without steps.
pub fn knee(steps: &[CurveStep], multiple: f64) -> (Option<usize>, bool) {
    let Some(first) = steps.first() else { return (None, false) };
    let limit = first.p99_nanos as f64 * multiple;
    let within = steps.iter().position(|s| s.p99_nanos as f64 > limit);
    let upto = within.unwrap_or(steps.len());
    let best = (0..upto).max_by(|&a, &b| {
        steps[a].achieved_ops_per_s.total_cmp(&steps[b].achieved_ops_per_s).then(a.cmp(&b))
    });
    (best, within.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(percent: f64, achieved: f64, p99_us: u64) -> CurveStep {
        CurveStep {
            percent,
            asked_ops_per_s: percent * 100.0,
            achieved_ops_per_s: achieved,
            p99_nanos: p99_us * 1000,
            ..CurveStep::default()
        }
    }

    #[test]
    fn even_steps_and_lists_are_planned_ascending() {
        assert_eq!(CurvePlan::even(4), vec![25.0, 50.0, 75.0, 100.0]);
        assert_eq!(CurvePlan::even(10).len(), 10);
        assert_eq!(CurvePlan::even(10)[0], 10.0);
        assert_eq!(CurvePlan::steps(vec![100.0, 50.0, 50.0, 5.0], "s"), Ok(vec![5.0, 50.0, 100.0]));
        let plan = CurvePlan {
            percents: vec![10.0, 50.0, 100.0],
            step_nanos: 2_000_000_000,
            knee_multiple: 3.0,
        };
        assert_eq!(plan.asked(2000.0), vec![200.0, 1000.0, 2000.0]);
        assert_eq!(plan.seconds(), 6.0);
    }

    #[test]
    fn bad_steps_say_the_fix() {
        let e = CurvePlan::steps(vec![50.0], "--curve-steps").unwrap_err();
        assert!(e.contains("at least 2 different steps"), "{e}");
        let e = CurvePlan::steps(vec![50.0, 50.0], "--curve-steps").unwrap_err();
        assert!(e.contains("at least 2"), "{e}");
        for bad in [0.0, -5.0, 101.0, f64::NAN] {
            let e = CurvePlan::steps(vec![bad, 50.0], "curve_steps").unwrap_err();
            assert!(e.contains("outside (0, 100]"), "{bad}: {e}");
        }
        assert!(CurvePlan::steps(CurvePlan::even(101), "s").unwrap_err().contains("at most"));
        assert!(CurvePlan::knee(1.0, "--curve-knee").unwrap_err().contains("above 1"));
        assert_eq!(CurvePlan::knee(2.5, "k"), Ok(2.5));
    }

    #[test]
    fn the_knee_is_the_last_step_before_p99_leaves_the_multiple() {
        // A hockey stick: flat at 100 µs, 250 µs at 70%, 900 µs at 80% (over 3×), then worse.
        let steps = vec![
            step(10.0, 1000.0, 100),
            step(40.0, 4000.0, 110),
            step(70.0, 6900.0, 250),
            step(80.0, 7800.0, 900),
            step(90.0, 8100.0, 2000),
            step(100.0, 8200.0, 280), // back under the limit: after the first excess, not counted
        ];
        assert_eq!(knee(&steps, 3.0), (Some(2), true));
        let c = PhaseCurve::of((8300.0, 3_000_000), 3.0, steps.clone(), false);
        assert_eq!(c.unloaded_p99_nanos, 100_000);
        assert_eq!(c.knee_step().unwrap().achieved_ops_per_s, 6900.0);
        assert_eq!(c.limit_nanos(), 300_000.0);
        assert!(c.definition().contains("3× the unloaded p99"));
        // A looser multiple moves the knee up.
        assert_eq!(knee(&steps, 10.0), (Some(3), true));
    }

    #[test]
    fn a_flat_curve_has_its_knee_at_the_top_and_says_it_never_exceeded() {
        let steps = vec![step(50.0, 500.0, 100), step(100.0, 990.0, 120)];
        assert_eq!(knee(&steps, 3.0), (Some(1), false));
        // The highest *achieved* rate within the limit, even when a higher asked rate achieved
        // less (a step that fell short).
        let short = vec![step(50.0, 500.0, 100), step(75.0, 700.0, 150), step(100.0, 650.0, 200)];
        assert_eq!(knee(&short, 3.0), (Some(1), false));
        assert_eq!(knee(&[], 3.0), (None, false));
    }

    #[test]
    fn shortfall_is_a_percentage_of_the_asked_rate_never_negative() {
        assert!((CurveStep::shortfall(1000.0, 900.0) - 10.0).abs() < 1e-9);
        assert_eq!(CurveStep::shortfall(1000.0, 1001.0), 0.0);
        assert_eq!(CurveStep::shortfall(0.0, 5.0), 0.0);
    }

    #[test]
    fn old_results_without_a_curve_still_read() {
        let c: PhaseCurve = serde_json::from_str(r#"{"closed_loop_ops_per_s":1,"closed_loop_p99_nanos":2,"knee_multiple":3,"unloaded_p99_nanos":4,"steps":[]}"#).unwrap();
        assert_eq!((c.knee, c.exceeded, c.partial), (None, false, false));
    }
}
