//! A phase's latency-versus-load curve (`--curve`, `curve_steps`): after the phase's own,
//! closed-loop pass (its rate is the maximum), the phase runs again once per step at a fixed
//! rate (the open loop of [`super::pace`]: latency from each op's scheduled start) of the
//! step's percentage of that maximum, for the step's time. The model's
//! [`crate::model::curve`] says what a step records and where the knee is.
//!
//! Why here, beside `--min-time`'s passes: a step is the phase again on the same files, after
//! the same cache precondition, so the [`super::rep`] that runs the passes runs the steps,
//! after the phase's observation bracket (the phase's figures, device counters and trace stay
//! the closed-loop pass's). The step's rate is the test's, split evenly over its threads (as
//! `rate_per = "test"`).

use super::phase::PhaseRun;
use crate::model::curve::{CurvePlan, CurveStep, PhaseCurve};
use crate::model::job::{Amount, PhaseDef, TestDef};
use crate::model::latency::OpHistograms;
use crate::model::result::PhaseResult;

/// The closed-loop rate of a phase's pass: ops of its pattern per second (what a fixed rate
/// paces), from its latency histograms (one value per op) and its wall time.
pub fn closed_loop_rate(phase: &PhaseDef, pr: &PhaseResult, hist: &OpHistograms) -> f64 {
    let mut kinds = phase.pattern.kinds();
    kinds.sort_by_key(|k| k.index());
    kinds.dedup();
    let ops: u64 = kinds.iter().map(|k| hist.0[k.index()].len()).sum();
    let secs = pr.wall_nanos as f64 / 1e9;
    if secs > 0.0 {
        ops as f64 / secs
    } else {
        0.0
    }
}

/// p50, p99 and p99.9 of the data ops (reads and writes together), ns; zeros without any.
pub fn data_quantiles(hist: &OpHistograms) -> (u64, u64, u64, u64) {
    let mut all = crate::stats::latency::new_histogram();
    for k in crate::model::job::OpKind::ALL.iter().filter(|k| k.is_data()) {
        // Same bounds and precision: adding cannot fail; a failure leaves that kind out.
        let _ = all.add(&hist.0[k.index()]);
    }
    if all.is_empty() {
        return (0, 0, 0, 0);
    }
    let q = |v: f64| all.value_at_quantile(v);
    (q(0.5), q(0.99), q(0.999), all.len())
}

/// The phase of step `percent`: `phase` bound by `plan`'s step time, at `asked` ops per
/// second of the test split over `threads`; no steady-state end and no curve of its own.
pub fn step_phase(
    phase: &PhaseDef,
    plan: &CurvePlan,
    percent: f64,
    asked: f64,
    threads: u32,
) -> PhaseDef {
    let mut p = phase.clone();
    p.name = format!("{} at {}%", phase.name, crate::model::units::short(percent));
    p.amount = Amount::Seconds(plan.step_nanos as f64 / 1e9);
    p.load.thread_ops_per_s = Some(asked / threads.max(1) as f64);
    p.load.test_ops_per_s = Some(asked);
    p.load.steady = None;
    p.curve = None;
    p
}

/// Run `plan`'s steps of `phase` after its closed-loop pass (`closed`, its latencies `hist`):
/// `run_step` runs one step's phase (its cache precondition made first) and returns what it
/// measured and the result the engine makes of it. Stops at the first step that did not end
/// cleanly (a failure or a signal), which is returned beside the curve (marked partial).
pub fn run(
    test: &TestDef,
    phase: &PhaseDef,
    plan: &CurvePlan,
    (closed, hist): (&PhaseResult, &OpHistograms),
    mut run_step: impl FnMut(&PhaseDef) -> (PhaseRun, PhaseResult),
) -> (PhaseCurve, Option<PhaseRun>) {
    let max = closed_loop_rate(phase, closed, hist);
    let closed_p99 = data_quantiles(hist).1;
    let mut steps = Vec::with_capacity(plan.percents.len());
    let mut failed = None;
    if max > 0.0 {
        for (&percent, asked) in plan.percents.iter().zip(plan.asked(max)) {
            if crate::sys::signals::interrupted() {
                break;
            }
            let def = step_phase(phase, plan, percent, asked, test.threads);
            let (run, pr) = run_step(&def);
            if !run.clean() {
                failed = Some(run);
                break;
            }
            let achieved =
                pr.load.as_ref().and_then(|l| l.rate).map_or(0.0, |r| r.achieved_ops_per_s);
            let (p50, p99, p999, ops) = data_quantiles(&run.hist);
            steps.push(CurveStep {
                percent,
                asked_ops_per_s: asked,
                achieved_ops_per_s: achieved,
                shortfall_percent: CurveStep::shortfall(asked, achieved),
                p50_nanos: p50,
                p99_nanos: p99,
                p999_nanos: p999,
                ops,
                wall_nanos: pr.wall_nanos,
            });
        }
    }
    let partial = steps.len() < plan.percents.len();
    (PhaseCurve::of((max, closed_p99), plan.knee_multiple, steps, partial), failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::OpKind;

    fn read_phase() -> PhaseDef {
        let suite = crate::workload::load(
            &crate::workload::SuiteSource::Embedded("unit14".into()),
            &crate::workload::ResolveCtx { scale: "quick".parse().unwrap(), free_memory: 1 << 30 },
        )
        .unwrap();
        let data = |p: &&PhaseDef| p.timed && p.pattern.kinds().iter().all(|k| k.is_data());
        let t = suite.tests.iter().find(|t| t.phases.iter().any(|p| data(&p))).unwrap();
        t.phases.iter().find(data).unwrap().clone()
    }

    #[test]
    fn a_step_is_the_phase_bound_by_time_at_its_share_of_the_rate() {
        let p = read_phase();
        let plan = CurvePlan {
            percents: vec![50.0, 100.0],
            step_nanos: 1_500_000_000,
            knee_multiple: 3.0,
        };
        let s = step_phase(&p, &plan, 50.0, 1000.0, 4);
        assert_eq!(s.amount, Amount::Seconds(1.5));
        assert_eq!(s.load.thread_ops_per_s, Some(250.0));
        assert_eq!(s.load.test_ops_per_s, Some(1000.0));
        assert!(s.curve.is_none() && s.load.steady.is_none());
        assert_eq!(s.name, format!("{} at 50%", p.name));
    }

    #[test]
    fn the_closed_loop_rate_counts_the_patterns_ops_and_quantiles_only_data_ops() {
        let p = read_phase();
        let kind = p.pattern.kinds()[0];
        let mut h = OpHistograms::default();
        for v in 1..=1000u64 {
            h.record(kind, v * 1000);
        }
        // An op the pattern does not have (an end-of-phase syncfs) is not a paced op.
        h.record(OpKind::Syncfs, 5);
        let pr = PhaseResult { wall_nanos: 2_000_000_000, ..PhaseResult::default() };
        assert_eq!(closed_loop_rate(&p, &pr, &h), 500.0);
        let (p50, p99, p999, n) = data_quantiles(&h);
        assert_eq!(n, 1000);
        assert!((499_000..=501_000).contains(&p50), "{p50}");
        assert!((989_000..=991_000).contains(&p99), "{p99}");
        assert!((998_000..=1_000_100).contains(&p999), "{p999}");
        assert_eq!(data_quantiles(&OpHistograms::default()), (0, 0, 0, 0));
    }
}
