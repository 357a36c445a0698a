//! A phase's load keys (`rate_iops`, `rate`, `rate_per`, `thinktime`, `thinktime_blocks`, `ss`,
//! `ss_dur`, `ss_ramp`; fio's names and meanings) checked and turned into the model's
//! [`Load`]. Kept apart from the rest of the validator because the fio front end maps fio's
//! options of the same names onto exactly these keys.
//!
//! Also the latency-versus-load curve (`curve_steps`, `curve_step_time`, `curve_knee`, and
//! `--curve` on the command line, [`apply_curve`]): a curve runs the phase at fixed rates, so
//! it is checked here with them: which phases can have one, and not beside a fixed rate.

use super::spec::{CurveSteps, PhaseSpec};
use crate::model::curve::{self, CurvePlan};
use crate::model::job::{Amount, PhaseDef, Suite, TestDef};
use crate::model::scale::Scale;
use crate::model::series::{Flow, Load, Steady, SteadyMetric};
use serde::{Deserialize, Serialize};

/// fio's default steady-state window, seconds.
pub const DEFAULT_SS_DUR: f64 = 30.0;

/// A duration as written: an integer of microseconds (fio's unit for `thinktime`) or a string
/// with a unit (`"500us"`, `"2ms"`, `"1s"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DurationText {
    /// Microseconds.
    Micros(u64),
    /// With a unit.
    Text(String),
}

impl DurationText {
    /// Nanoseconds, or why not.
    pub fn nanos(&self) -> Result<u64, String> {
        match self {
            DurationText::Micros(us) => Ok(us.saturating_mul(1000)),
            DurationText::Text(t) => {
                let t = t.trim();
                let (num, scale) = [("us", 1e3), ("ms", 1e6), ("s", 1e9)]
                    .iter()
                    .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
                    .unwrap_or((t, 1e3));
                match num.trim().parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 3600e9 => {
                        Ok((v * scale) as u64)
                    }
                    _ => Err(format!(
                        "thinktime = \"{t}\" is not a duration: write microseconds (500) or \"500us\", \"2ms\", \"1s\""
                    )),
                }
            }
        }
    }
}

/// The phase's [`Load`] from its keys; `threads` share a per-test rate, `mean_op_bytes` (the
/// data pattern's mean transfer) turns a byte rate into ops. Errors say how to fix the input.
pub fn resolve(
    p: &PhaseSpec,
    amount: &Amount,
    threads: u32,
    mean_op_bytes: Option<f64>,
) -> Result<Load, String> {
    let threads = threads.max(1) as f64;
    let per_test = match p.rate_per.as_deref() {
        None | Some("thread") => false,
        Some("test") => true,
        Some(o) => {
            return Err(format!("rate_per = \"{o}\": write \"thread\" (each thread's rate, fio's) or \"test\" (split over the test's threads)"))
        }
    };
    let asked = match (p.rate_iops, p.rate) {
        (Some(_), Some(_)) => {
            return Err("rate_iops and rate together: give one (rate_iops in ops per second, or rate in bytes per second)".into())
        }
        (Some(r), None) if !(r.is_finite() && r > 0.0 && r <= 1e9) => {
            return Err(format!("rate_iops = {r}: give a rate above 0 and at most 1e9 ops per second, or leave it out for the closed loop"))
        }
        (Some(r), None) => Some(r),
        (None, Some(b)) => {
            let bytes = b.resolve(0);
            let Some(op) = mean_op_bytes.filter(|m| *m > 0.0) else {
                return Err("rate (bytes per second) needs reads or writes in the pattern: use rate_iops for a pattern of other ops".into());
            };
            if bytes == 0 {
                return Err("rate = 0: give bytes per second (\"100M\"), or leave it out for the closed loop".into());
            }
            Some(bytes as f64 / op)
        }
        (None, None) => {
            if p.rate_per.is_some() {
                return Err("rate_per without a rate: add rate_iops or rate".into());
            }
            None
        }
    };
    let (thread_ops_per_s, test_ops_per_s) = match asked {
        Some(r) if per_test => (Some(r / threads), Some(r)),
        Some(r) => (Some(r), Some(r * threads)),
        None => (None, None),
    };
    let think_nanos = match &p.thinktime {
        Some(t) => t.nanos()?,
        None => 0,
    };
    let think_every = match p.thinktime_blocks {
        Some(0) => {
            return Err("thinktime_blocks = 0: give the ops between pauses, at least 1".into())
        }
        Some(_) if think_nanos == 0 => {
            return Err("thinktime_blocks without thinktime: add thinktime (the pause)".into())
        }
        Some(n) => n,
        None if think_nanos > 0 => 1,
        None => 0,
    };
    let dir_ops_per_s = dir_rates(p, per_test, mean_op_bytes)?;
    let steady = resolve_steady(p, amount)?;
    let poisson = match p.rate_process.as_deref() {
        None | Some("linear") => false,
        Some("poisson") if dir_ops_per_s.is_some() => {
            return Err("rate_process = \"poisson\" with rate_read or rate_write: each direction is paced at a fixed period; use rate_process = \"linear\"".into())
        }
        Some("poisson") if thread_ops_per_s.is_none() => {
            return Err("rate_process = \"poisson\" without a rate: add rate_iops or rate (the mean rate of the arrivals)".into())
        }
        Some("poisson") => true,
        Some(o) => {
            return Err(format!("rate_process = \"{o}\": write \"linear\" (a fixed period) or \"poisson\" (exponential gaps)"))
        }
    };
    let latency_from_issue = match p.latency_from.as_deref() {
        None | Some("schedule") => false,
        Some("issue") if thread_ops_per_s.is_none() && dir_ops_per_s.is_none() => {
            return Err("latency_from = \"issue\" without a rate: a closed loop's ops are timed from when they are issued anyway; add rate_iops or rate, or remove it".into())
        }
        Some("issue") => true,
        Some(o) => {
            return Err(format!("latency_from = \"{o}\": write \"schedule\" (from each op's scheduled start) or \"issue\" (from when it is issued, fio's)"))
        }
    };
    let flow = resolve_flow(p)?;
    Ok(Load {
        thread_ops_per_s,
        test_ops_per_s,
        think_nanos,
        think_every,
        steady,
        poisson,
        dir_ops_per_s,
        flow,
        staggered: per_test && thread_ops_per_s.is_some(),
        latency_from_issue,
    })
}

/// `rate_read` and `rate_write`: a mixed phase's directions each on their own schedule, in
/// ops per second of each thread (bytes over the entry's mean transfer).
fn dir_rates(
    p: &PhaseSpec,
    per_test: bool,
    mean_op_bytes: Option<f64>,
) -> Result<Option<crate::model::series::DirRates>, String> {
    if p.rate_read.is_none() && p.rate_write.is_none() {
        return Ok(None);
    }
    if p.rate.is_some() || p.rate_iops.is_some() {
        return Err("rate_read/rate_write with rate or rate_iops: give the phase one rate, or each direction its own".into());
    }
    if per_test {
        return Err("rate_per = \"test\" with rate_read/rate_write: a direction's rate is each thread's (fio's); remove rate_per".into());
    }
    let mixed = matches!(p.pattern.as_slice(), [o] if o.write_percent.is_some_and(|w| w > 0 && w < 100) && o.op.as_deref() == Some("read"));
    if !mixed {
        return Err("rate_read/rate_write pace the reads and writes of one entry that mixes them (op = \"read\" with write_percent 1-99); for one direction use rate".into());
    }
    let Some(op) = mean_op_bytes.filter(|m| *m > 0.0) else {
        return Err("rate_read/rate_write need reads or writes in the pattern".into());
    };
    let ops = |key: &str, v: Option<super::size::SizeExpr>| {
        match v.map(|b| b.resolve(0)) {
        None => Ok(None),
        Some(0) => Err(format!("{key} = 0: give bytes per second (\"100M\"), or leave it out for no limit on that direction")),
        Some(b) => Ok(Some(b as f64 / op)),
    }
    };
    Ok(Some(crate::model::series::DirRates {
        read: ops("rate_read", p.rate_read)?,
        write: ops("rate_write", p.rate_write)?,
    }))
}

/// `flow`, `flow_id`, `flow_sleep`: a weight of 1 to 1000 (fio's bounds), the other two only
/// with it.
fn resolve_flow(p: &PhaseSpec) -> Result<Option<Flow>, String> {
    let Some(weight) = p.flow else {
        if p.flow_id.is_some() || p.flow_sleep.is_some() {
            return Err("flow_id or flow_sleep without flow: add the weight, e.g. flow = 1".into());
        }
        return Ok(None);
    };
    if !(1..=1000).contains(&weight) {
        return Err(format!("flow = {weight}: give a weight of 1 to 1000 (fio's bounds)"));
    }
    let sleep_us = p.flow_sleep.unwrap_or(0);
    if sleep_us > 10_000_000 {
        return Err(format!("flow_sleep = {sleep_us}: give at most 10000000 microseconds (10 s)"));
    }
    Ok(Some(Flow { id: p.flow_id.unwrap_or(0), weight, sleep_nanos: sleep_us * 1000 }))
}

/// `ss`, `ss_dur`, `ss_ramp`: only on a time-based phase.
fn resolve_steady(p: &PhaseSpec, amount: &Amount) -> Result<Option<Steady>, String> {
    let Some(ss) = &p.ss else {
        if p.ss_dur.is_some() || p.ss_ramp.is_some() {
            return Err(
                "ss_dur or ss_ramp without ss: add the criterion, e.g. ss = \"iops:5%\"".into()
            );
        }
        return Ok(None);
    };
    let Amount::Seconds(secs) = amount else {
        return Err(format!(
            "ss = \"{ss}\" on a phase bound by size or count: a steady state ends a time-based phase early; write amount = {{ seconds = N }} (the longest it may run) or remove ss"
        ));
    };
    let bad = || {
        format!("ss = \"{ss}\": write METRIC:LIMIT%, METRIC one of iops, iops_slope, bw, bw_slope (e.g. \"iops:5%\", \"bw_slope:0.5%\")")
    };
    let (m, limit) = ss.split_once(':').ok_or_else(bad)?;
    let metric = match m.trim() {
        "iops" => SteadyMetric::Iops,
        "iops_slope" => SteadyMetric::IopsSlope,
        "bw" => SteadyMetric::Bw,
        "bw_slope" => SteadyMetric::BwSlope,
        _ => return Err(bad()),
    };
    let limit_percent: f64 =
        limit.trim().trim_end_matches('%').trim().parse().map_err(|_| bad())?;
    if !(limit_percent.is_finite() && limit_percent > 0.0) {
        return Err(bad());
    }
    let dur = p.ss_dur.unwrap_or(DEFAULT_SS_DUR);
    let ramp = p.ss_ramp.unwrap_or(0.0);
    if !(dur.is_finite() && dur >= 2.0 && dur.fract() == 0.0) {
        return Err(format!("ss_dur = {dur}: give whole seconds, at least 2 (the criterion is checked on one sample a second)"));
    }
    if !(ramp.is_finite() && ramp >= 0.0 && ramp.fract() == 0.0) {
        return Err(format!("ss_ramp = {ramp}: give whole seconds, 0 or more"));
    }
    if ramp + dur > *secs {
        return Err(format!(
            "ss_ramp + ss_dur = {} s is longer than the phase's {secs} s: the criterion could never be checked; lengthen amount.seconds or shorten ss_dur",
            ramp + dur
        ));
    }
    Ok(Some(Steady { metric, limit_percent, window_secs: dur as u32, ramp_secs: ramp as u32 }))
}

/// A curve step's time: `"2s"`, `"500ms"`, or seconds (`1.5`); from 100 ms to 1 hour.
/// Nanoseconds, or why not (`what`: where it was written).
pub fn step_time(s: &str, what: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1e9)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v * scale >= 1e8 && v * scale <= 3600e9 => Ok((v * scale) as u64),
        _ => Err(format!(
            "{what} `{s}`: give a step time from 100ms to 1 hour, e.g. 500ms or 2s (each step of a curve runs this long)"
        )),
    }
}

/// A curve's plan from its parts as written (`None`: the default): `steps` a count or a list,
/// `step_nanos` each step's time (default [`curve::DEFAULT_STEP_SECS`], under `--scale quick`
/// [`curve::QUICK_STEP_SECS`]), `knee` the multiple. `what` names the steps' and the knee's source in errors.
pub fn curve_plan(
    steps: Option<&CurveSteps>,
    step_nanos: Option<u64>,
    knee: Option<f64>,
    scale: Scale,
    (what, knee_what): (&str, &str),
) -> Result<CurvePlan, String> {
    let percents = match steps {
        None => CurvePlan::even(curve::DEFAULT_STEPS),
        Some(CurveSteps::Count(n)) if *n < 2 => {
            return Err(format!("{what} = {n}: a curve needs at least 2 steps (one step is one fixed rate, not a curve): give e.g. 10 (10%, 20%, ... 100%), or use rate_iops for one rate"))
        }
        Some(CurveSteps::Count(n)) if *n as usize > curve::MAX_STEPS => {
            return Err(format!("{what} = {n}: at most {} steps (each is a timed run of the phase)", curve::MAX_STEPS))
        }
        Some(CurveSteps::Count(n)) => CurvePlan::even(*n),
        Some(CurveSteps::List(l)) => l.clone(),
    };
    let percents = CurvePlan::steps(percents, what)?;
    let secs =
        if scale == Scale::Quick { curve::QUICK_STEP_SECS } else { curve::DEFAULT_STEP_SECS };
    let step_nanos = step_nanos.unwrap_or((secs * 1e9) as u64);
    let knee_multiple = CurvePlan::knee(knee.unwrap_or(curve::DEFAULT_KNEE_MULTIPLE), knee_what)?;
    Ok(CurvePlan { percents, step_nanos, knee_multiple })
}

/// The phase keys' curve (`curve_steps` and the rest), `None` without `curve_steps`.
pub fn phase_curve(p: &PhaseSpec, scale: Scale) -> Result<Option<CurvePlan>, String> {
    let Some(steps) = &p.curve_steps else {
        if p.curve_step_time.is_some() || p.curve_knee.is_some() {
            return Err("curve_step_time or curve_knee without curve_steps: add curve_steps = 10 (or a list of percentages)".into());
        }
        return Ok(None);
    };
    let step = p.curve_step_time.as_deref().map(|s| step_time(s, "curve_step_time")).transpose()?;
    curve_plan(Some(steps), step, p.curve_knee, scale, ("curve_steps", "curve_knee")).map(Some)
}

/// Why `phase` of `test` cannot have a curve, with the fix; `None` when it can: a timed data
/// phase bound by time (a step is a time at a rate; a phase bound by size or count would end
/// at a different time on every step, and its closed-loop rate is not a rate it can hold), in
/// a test without roles (they run beside the closed-loop pass only), without a fixed rate of
/// its own (the curve sets each step's rate).
pub fn curve_refusal(test: &TestDef, phase: &PhaseDef) -> Option<String> {
    let at = format!("test {} phase `{}`", test.id, phase.name);
    if !phase.timed || phase.pattern.data().is_empty() {
        return Some(format!(
            "{at}: a curve needs a timed data phase (reads or writes); this one is {}",
            if phase.timed { "a file-set phase" } else { "untimed" }
        ));
    }
    if !matches!(phase.amount, Amount::Seconds(_)) {
        return Some(format!("{at} is bound by size or count: a curve runs the phase at fixed rates for a fixed time, and its closed-loop pass must be a rate over a time: write amount = {{ seconds = N }}"));
    }
    if phase.load.test_ops_per_s.is_some() || phase.load.dir_ops_per_s.is_some() {
        return Some(format!("{at} has a fixed rate (rate_iops, rate, rate_read or rate_write): a curve sets each step's rate itself; remove the phase's rate"));
    }
    if !test.roles.is_empty() {
        return Some(format!("{at}: a test with roles cannot have a curve (the roles run beside the closed-loop pass only, so the steps would measure something else); remove the roles or the curve"));
    }
    None
}

/// `--curve`: `plan` on every phase of the suite that can have a curve. Every test needs one
/// such phase; when a test has none, the error names it and why, with the fix (`--test` to
/// choose tests, or the workload's phases).
pub fn apply_curve(suite: &mut Suite, plan: &CurvePlan) -> Result<(), String> {
    let mut problems = Vec::new();
    for t in &mut suite.tests {
        let why: Vec<Option<String>> = t.phases.iter().map(|p| curve_refusal(t, p)).collect();
        if why.iter().all(Option::is_some) {
            // The reason of the phase that came closest: a timed data phase's, else the first.
            let data = t.phases.iter().position(|p| p.timed && !p.pattern.data().is_empty());
            let reason = why[data.unwrap_or(0)].clone();
            problems.push(reason.unwrap_or_else(|| format!("test {}: no phases", t.id)));
            continue;
        }
        for (p, w) in t.phases.iter_mut().zip(&why) {
            if w.is_none() {
                p.curve = Some(plan.clone());
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let shown = if problems.len() > 3 {
        format!("{}; and {} more tests", problems[..3].join("; "), problems.len() - 3)
    } else {
        problems.join("; ")
    };
    Err(format!(
        "--curve: {shown}. A curve needs a timed data phase bound by time (amount = {{ seconds = N }}) without a fixed rate; choose such tests with --test, or write one (examples/curve.toml)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::size::SizeExpr;

    fn spec() -> PhaseSpec {
        PhaseSpec::default()
    }

    /// `rate_read`/`rate_write`: each direction's ops per second of each thread, on one entry
    /// that mixes reads and writes; refused elsewhere or beside a phase rate, saying why.
    #[test]
    fn each_directions_rate_of_a_mixed_entry() {
        let mixed = crate::workload::spec::OpSpec {
            op: Some("read".into()),
            write_percent: Some(30),
            ..crate::workload::spec::OpSpec::default()
        };
        let p = PhaseSpec {
            rate_read: Some(SizeExpr::Bytes(2 << 20)),
            rate_write: None,
            pattern: vec![mixed.clone()],
            ..spec()
        };
        let l = resolve(&p, &Amount::Seconds(4.0), 4, Some(4096.0)).unwrap();
        let d = l.dir_ops_per_s.expect("per direction");
        assert_eq!((d.read, d.write, l.thread_ops_per_s), (Some(512.0), None, None));
        assert!(!l.is_closed());
        let read_only = PhaseSpec {
            pattern: vec![crate::workload::spec::OpSpec { write_percent: None, ..mixed.clone() }],
            ..p.clone()
        };
        let e = resolve(&read_only, &Amount::Seconds(4.0), 1, Some(4096.0)).unwrap_err();
        assert!(e.contains("one entry that mixes them"), "{e}");
        let both = PhaseSpec { rate: Some(SizeExpr::Bytes(1)), ..p.clone() };
        let e = resolve(&both, &Amount::Seconds(4.0), 1, Some(4096.0)).unwrap_err();
        assert!(e.contains("with rate or rate_iops"), "{e}");
        let poisson = PhaseSpec { rate_process: Some("poisson".into()), ..p.clone() };
        let e = resolve(&poisson, &Amount::Seconds(4.0), 1, Some(4096.0)).unwrap_err();
        assert!(e.contains("rate_process = \"linear\""), "{e}");
        let zero = PhaseSpec { rate_write: Some(SizeExpr::Bytes(0)), ..p };
        let e = resolve(&zero, &Amount::Seconds(4.0), 1, Some(4096.0)).unwrap_err();
        assert!(e.contains("rate_write = 0"), "{e}");
    }

    /// `latency_from`: `schedule` (the default) or `issue` with a rate; `issue` without a rate
    /// and other words are refused, saying why.
    #[test]
    fn latency_from_is_schedule_or_issue_under_a_rate() {
        let at = |p: &PhaseSpec| resolve(p, &Amount::Seconds(1.0), 1, Some(4096.0));
        let rated = PhaseSpec { rate_iops: Some(100.0), ..spec() };
        assert!(!at(&rated).unwrap().latency_from_issue);
        let from = |w: &str| PhaseSpec { latency_from: Some(w.into()), ..rated.clone() };
        assert!(!at(&from("schedule")).unwrap().latency_from_issue);
        assert!(at(&from("issue")).unwrap().latency_from_issue);
        let e = at(&from("start")).unwrap_err();
        assert!(e.contains("\"schedule\"") && e.contains("\"issue\""), "{e}");
        let closed = PhaseSpec { latency_from: Some("issue".into()), ..spec() };
        assert!(at(&closed).unwrap_err().contains("without a rate"));
    }

    /// `flow` is a weight of 1 to 1000 with its id (default 0) and sleep (µs to ns); `flow_id`
    /// or `flow_sleep` alone is refused, as a weight outside fio's bounds.
    #[test]
    fn a_flow_is_a_weight_with_its_id_and_sleep() {
        let at = |p: &PhaseSpec| resolve(p, &Amount::Seconds(1.0), 1, Some(4096.0));
        let p = PhaseSpec { flow: Some(8), flow_id: Some(2), flow_sleep: Some(250), ..spec() };
        assert_eq!(at(&p).unwrap().flow, Some(Flow { id: 2, weight: 8, sleep_nanos: 250_000 }));
        assert_eq!(at(&spec()).unwrap().flow, None);
        for bad in [
            PhaseSpec { flow_sleep: Some(10), ..spec() },
            PhaseSpec { flow_id: Some(1), ..spec() },
            PhaseSpec { flow: Some(0), ..spec() },
            PhaseSpec { flow: Some(1001), ..spec() },
        ] {
            assert!(at(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_rate_is_per_thread_unless_per_test() {
        let p = PhaseSpec { rate_iops: Some(500.0), ..spec() };
        let l = resolve(&p, &Amount::Seconds(4.0), 4, Some(4096.0)).unwrap();
        assert_eq!((l.thread_ops_per_s, l.test_ops_per_s), (Some(500.0), Some(2000.0)));
        let p = PhaseSpec { rate_per: Some("test".into()), ..p };
        let l = resolve(&p, &Amount::Seconds(4.0), 4, Some(4096.0)).unwrap();
        assert_eq!((l.thread_ops_per_s, l.test_ops_per_s), (Some(125.0), Some(500.0)));
        // A byte rate is ops of the pattern's mean size.
        let p = PhaseSpec { rate: Some(SizeExpr::Bytes(4 << 20)), ..spec() };
        let l = resolve(&p, &Amount::Seconds(4.0), 1, Some(4096.0)).unwrap();
        assert_eq!(l.thread_ops_per_s, Some(1024.0));
    }

    #[test]
    fn rate_process_poisson_needs_a_rate_and_only_known_words() {
        let r = |p: PhaseSpec| resolve(&p, &Amount::Seconds(4.0), 1, Some(4096.0));
        let paced = PhaseSpec { rate_iops: Some(50.0), ..spec() };
        let p = PhaseSpec { rate_process: Some("poisson".into()), ..paced.clone() };
        assert!(r(p).expect("poisson with a rate").poisson);
        let p = PhaseSpec { rate_process: Some("linear".into()), ..paced.clone() };
        assert!(!r(p).expect("linear").poisson);
        let e = r(PhaseSpec { rate_process: Some("poisson".into()), ..spec() }).unwrap_err();
        assert!(e.contains("without a rate: add rate_iops"), "{e}");
        let e = r(PhaseSpec { rate_process: Some("bursty".into()), ..paced }).unwrap_err();
        assert!(e.contains("\"linear\"") && e.contains("\"poisson\""), "{e}");
    }

    #[test]
    fn bad_load_keys_say_the_fix() {
        let e = |p: PhaseSpec, a: Amount| resolve(&p, &a, 1, Some(4096.0)).unwrap_err();
        let both = PhaseSpec { rate_iops: Some(1.0), rate: Some(SizeExpr::Bytes(1)), ..spec() };
        assert!(e(both, Amount::Ops(1)).contains("give one"));
        let zero = PhaseSpec { rate_iops: Some(0.0), ..spec() };
        assert!(e(zero, Amount::Ops(1)).contains("above 0"));
        let sized = PhaseSpec { ss: Some("iops:5%".into()), ..spec() };
        assert!(e(sized.clone(), Amount::Bytes(1 << 20)).contains("amount = { seconds = N }"));
        let word = PhaseSpec { ss: Some("lat:5%".into()), ..spec() };
        assert!(e(word, Amount::Seconds(60.0)).contains("iops_slope"));
        assert!(e(sized, Amount::Seconds(10.0)).contains("longer than the phase"));
        let blocks = PhaseSpec { thinktime_blocks: Some(4), ..spec() };
        assert!(e(blocks, Amount::Ops(1)).contains("add thinktime"));
    }

    #[test]
    fn steady_state_and_think_time() {
        let p = PhaseSpec {
            ss: Some("iops_slope:0.5%".into()),
            ss_dur: Some(10.0),
            ss_ramp: Some(5.0),
            thinktime: Some(DurationText::Text("2ms".into())),
            ..spec()
        };
        let l = resolve(&p, &Amount::Seconds(60.0), 1, None).unwrap();
        let s = l.steady.unwrap();
        assert_eq!(
            (s.metric, s.limit_percent, s.window_secs, s.ramp_secs),
            (SteadyMetric::IopsSlope, 0.5, 10, 5)
        );
        assert_eq!((l.think_nanos, l.think_every), (2_000_000, 1));
        assert_eq!(DurationText::Micros(250).nanos(), Ok(250_000));
    }

    /// The test of `toml` (one test) resolved.
    fn suite(toml: &str) -> Suite {
        let ctx = crate::workload::ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        // A directory per call: the tests calling this run at the same time.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("w.toml");
        std::fs::write(&f, toml).unwrap();
        crate::workload::load(&crate::workload::SuiteSource::File(f), &ctx).unwrap()
    }

    fn reads(amount: &str, extra: &str) -> String {
        format!("[[test]]\nid = \"r\"\nname = \"reads\"\nfile = {{ size = \"8M\" }}\n[[test.phase]]\nname = \"read\"\npattern = [{{ op = \"read\", size = \"4K\", offset = \"random\" }}]\namount = {amount}\n{extra}\n")
    }

    #[test]
    fn curve_plans_from_counts_lists_and_defaults() {
        let p = curve_plan(None, None, None, Scale::Paper, ("s", "k")).unwrap();
        assert_eq!(p.percents, CurvePlan::even(10));
        assert_eq!((p.step_nanos, p.knee_multiple), (2_000_000_000, 3.0));
        let quick = curve_plan(None, None, None, Scale::Quick, ("s", "k")).unwrap();
        assert_eq!(quick.step_nanos, 1_000_000_000, "--scale quick: shorter steps");
        let l = CurveSteps::List(vec![100.0, 25.0]);
        let p = curve_plan(Some(&l), Some(500_000_000), Some(4.0), Scale::Paper, ("s", "k"));
        let p = p.unwrap();
        assert_eq!(
            (p.percents, p.step_nanos, p.knee_multiple),
            (vec![25.0, 100.0], 500_000_000, 4.0)
        );
        let one = curve_plan(
            Some(&CurveSteps::Count(1)),
            None,
            None,
            Scale::Paper,
            ("--curve-steps", "k"),
        );
        assert!(one.unwrap_err().starts_with("--curve-steps = 1: a curve needs at least 2 steps"));
        let knee = curve_plan(None, None, Some(0.5), Scale::Paper, ("s", "--curve-knee"));
        assert!(knee.unwrap_err().starts_with("--curve-knee = 0.5"));
        assert_eq!(step_time("250ms", "t"), Ok(250_000_000));
        assert_eq!(step_time("1.5", "t"), Ok(1_500_000_000));
        assert!(step_time("50ms", "--curve-step-time").unwrap_err().contains("from 100ms"));
        assert!(step_time("soon", "t").is_err());
    }

    #[test]
    fn apply_curve_marks_time_based_timed_data_phases_and_refuses_the_rest() {
        let plan = curve_plan(None, None, None, Scale::Paper, ("s", "k")).unwrap();
        let mut s = suite(&reads("{ seconds = 2 }", ""));
        apply_curve(&mut s, &plan).unwrap();
        let timed: Vec<bool> = s.tests[0].phases.iter().map(|p| p.curve.is_some()).collect();
        assert_eq!(timed, vec![true]);
        let mut sized = suite(&reads("{ bytes = \"1M\" }", ""));
        let e = apply_curve(&mut sized, &plan).unwrap_err();
        assert!(e.contains("test r phase `read` is bound by size or count"), "{e}");
        assert!(e.contains("--test"), "{e}");
        let mut paced = suite(&reads("{ seconds = 2 }", "rate_iops = 50"));
        assert!(apply_curve(&mut paced, &plan).unwrap_err().contains("remove the phase's rate"));
        // The workload key alone gives the phase its curve; refused where it cannot run.
        let keyed =
            suite(&reads("{ seconds = 2 }", "curve_steps = [50, 100]\ncurve_step_time = \"1s\""));
        let c = keyed.tests[0].phases[0].curve.clone().unwrap();
        assert_eq!((c.percents, c.step_nanos), (vec![50.0, 100.0], 1_000_000_000));
    }

    /// examples/curve.toml, as the guide runs it: every test takes `--curve`.
    #[test]
    fn the_curve_example_takes_a_curve_in_every_test() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/curve.toml");
        let mut s = suite(&std::fs::read_to_string(path).unwrap());
        let plan = curve_plan(None, None, None, Scale::Quick, ("s", "k")).unwrap();
        apply_curve(&mut s, &plan).unwrap();
        assert_eq!(s.tests.len(), 2);
        for t in &s.tests {
            assert!(
                t.phases.iter().any(|p| p.timed && p.curve.as_ref() == Some(&plan)),
                "{}",
                t.id
            );
        }
    }
}
