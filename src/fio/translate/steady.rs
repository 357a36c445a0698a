//! fio's steady state (`steadystate`/`ss`, `steadystate_duration`/`ss_dur`,
//! `steadystate_ramp_time`/`ss_ramp`) onto the timed phase's `ss`, `ss_dur`, `ss_ramp`.
//!
//! fio 3.33 (`steadystate.c`) samples a job's ops and bytes per second once a second, keeps
//! the last `ss_dur` samples after `ss_ramp` seconds, and ends the job as soon as they meet
//! the criterion: for `iops`/`bw` the largest distance of a sample from the window's mean is
//! below the limit, for `iops_slope`/`bw_slope` the size of the least-squares slope is; with
//! `%` the limit is a percentage of the mean. fsbench's criterion (`engine::steady`) is the
//! same on a time-based phase, judged on the test's threads together. Where fio's meaning
//! cannot be had (an absolute limit, the sum of several jobs, clones judged one by one,
//! ops per second of mixed op sizes), the job is refused with the line and the reason.

use super::groups::Group;
use super::{FioError, Job};
use crate::workload::spec::PhaseSpec;

/// fio 3.33's default criterion when only `ss_dur` is given.
const FIO_DEFAULT: &str = "iops_slope:0.01%";

/// A parsed criterion: fio's metric name and its limit in percent.
fn criterion(job: &Job) -> Result<Option<(&'static str, f64, usize)>, FioError> {
    let Some((v, line)) = job.str("steadystate")? else {
        return Ok(None);
    };
    let bad = |m: String| job.err("steadystate", line, m);
    let Some((m, limit)) = v.split_once(':') else {
        return Err(bad(format!("`{v}`: write METRIC:LIMIT%, METRIC one of iops, iops_slope, bw, bw_slope (fio needs the limit too: \"steadystate threshold must be specified in addition to criterion\")")));
    };
    let metric = match m.trim() {
        "iops" => "iops",
        "iops_slope" => "iops_slope",
        "bw" => "bw",
        "bw_slope" => "bw_slope",
        other => {
            return Err(bad(format!(
                "`{other}`: the metric is one of iops, iops_slope, bw, bw_slope"
            )))
        }
    };
    let Some(pct) = limit.trim().strip_suffix('%') else {
        return Err(bad(format!("`{v}`: fio 3.33 reads a limit without % as absolute ({} apart from the window's mean); fsbench's criterion is a percentage of the mean: write the limit with %", if metric.starts_with("iops") { "IOPS" } else { "bytes per second" })));
    };
    let limit: f64 =
        pct.trim().parse().map_err(|_| bad(format!("`{v}`: the limit `{pct}` is not a number")))?;
    if !(limit.is_finite() && limit > 0.0) {
        return Err(bad(format!("`{v}`: fio never attains a limit of {limit}% (it needs the measure below the limit); give a limit above 0")));
    }
    Ok(Some((metric, limit, line)))
}

/// The steady-state options of `job` onto its timed phase. `one_size`: every op of the job has
/// the same size (so ops per second are bytes per second over it); `threads`: the job's
/// `numjobs`.
pub(super) fn steady(
    job: &Job,
    one_size: bool,
    threads: u32,
    timed: &mut PhaseSpec,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    let given = criterion(job)?;
    let ramp = job.seconds("steadystate_ramp_time")?;
    // fio 3.33 keeps whole seconds (microseconds / 1000000, truncated); 0, its default, is off.
    let dur = job.seconds("steadystate_duration")?;
    let Some((dur, dline)) = dur.map(|(d, l)| (d.trunc(), l)).filter(|(d, _)| *d > 0.0) else {
        if given.is_some() || ramp.is_some() {
            notes.push("steadystate without steadystate_duration (ss_dur): no effect, as in fio 3.33 (its default duration 0 turns steady state off)".into());
        }
        return Ok(());
    };
    let dur_err = |m: String| job.err("steadystate_duration", dline, m);
    if dur < 2.0 {
        return Err(dur_err(format!("{dur} s: fsbench judges a window of at least 2 one-second samples (fio's 1-sample window has no deviation and no slope); give 2 or more")));
    }
    let (metric, limit, line) = match given {
        Some(g) => g,
        None => ("iops_slope", 0.01, dline),
    };
    let ramp = match ramp {
        None => 0.0,
        Some((r, _)) if r.fract() == 0.0 => r,
        Some((r, rline)) => {
            return Err(job.err(
                "steadystate_ramp_time",
                rline,
                format!("{r} s: give whole seconds (fsbench skips whole one-second samples)"),
            ))
        }
    };
    if metric.starts_with("iops") && !one_size {
        return Err(job.err("steadystate", line, format!("{metric}: fsbench samples bytes per second and counts ops per second over the op size, which this job does not have one of (bssplit, bsrange, or reads and writes of different sizes); judge it on bw or bw_slope")));
    }
    if threads > 1 && job.bool("group_reporting")? != Some(true) {
        return Err(job.err("steadystate", line, format!("with numjobs={threads} and no group_reporting: fio 3.33 judges each clone on its own and ends each when its own rate settles; fsbench judges the job's threads together, as fio does with group_reporting: add group_reporting, or numjobs=1")));
    }
    if job.seconds("ramp_time")?.is_some_and(|(s, _)| s > 0.0) {
        return Err(job.err("steadystate", line, "with ramp_time: fio 3.33 samples steady state from the job's start, through ramp_time (its window may span the ramp); fsbench judges the timed phase after the ramp only: remove ramp_time (ss_ramp skips seconds of the window's data, as fio)"));
    }
    let runtime = job.seconds("runtime")?.filter(|(s, _)| *s > 0.0);
    let Some((runtime, _)) =
        runtime.filter(|_| job.bool("time_based").ok().flatten() == Some(true))
    else {
        return Err(job.err("steadystate", line, "on a job that is not time_based: fsbench ends a time-based phase early at steady state (fio 3.33 also ends a size-bound job at its size first); add time_based=1 and runtime=SECONDS (the longest it may run), or remove steadystate_duration"));
    };
    let a = &timed.amount;
    if a.bytes.is_some() || a.ops.is_some() || a.passes.is_some() || a.fill.is_some() {
        return Err(job.err("steadystate", line, "on a job bound by more than its runtime: fsbench ends at steady state a phase bound by time alone; remove steadystate_duration"));
    }
    if ramp + dur > runtime {
        return Err(dur_err(format!("ss_ramp + ss_dur = {} s is longer than runtime={runtime}: fio 3.33 would never attain steady state and runs its runtime; fsbench refuses a criterion that cannot be judged: shorten ss_dur or lengthen runtime", ramp + dur)));
    }
    timed.ss = Some(format!("{metric}:{limit}%"));
    timed.ss_dur = Some(dur);
    timed.ss_ramp = (ramp > 0.0).then_some(ramp);
    if given.is_none() {
        notes.push(format!(
            "steadystate_duration={dur} without steadystate: fio's default criterion {FIO_DEFAULT}"
        ));
    }
    Ok(())
}

/// fio judges each job of a run group on its own (or a reporting group's sum, with
/// `group_reporting`) and ends only that job or group; fsbench runs a run group as one test and
/// its steady state would end all of it: a job with a steady state must be alone in its group.
pub(super) fn check_groups(jobs: &[Job], groups: &[Group], errors: &mut Vec<FioError>) {
    for g in groups.iter().filter(|g| g.jobs.len() > 1) {
        for &i in &g.jobs {
            let Some(job) = jobs.get(i) else { continue };
            let on = matches!(job.seconds("steadystate_duration"), Ok(Some((d, _))) if d >= 1.0);
            if on {
                let line = job.line("steadystate_duration");
                errors.push(job.err("steadystate_duration", line, format!("in [{}], which runs beside other jobs (no stonewall between them): fio 3.33 ends only this job (or its reporting group, with group_reporting) at steady state, while fsbench runs the group as one test and judges all its threads together; give the job a group of its own (stonewall)", job.name)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::fio::translate::tests::one;
    use crate::fio::translate::translate;
    use crate::workload::spec::PhaseSpec;

    fn err(text: &str) -> String {
        match translate(text, "t.fio", "t", &|_| None) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    const TIMED: &str = "[j]\nrw=randread\nsize=1m\ntime_based\nruntime=30\n";

    fn timed(extra: &str) -> PhaseSpec {
        let (t, _) = one(&format!("{TIMED}{extra}"));
        t.phases.last().cloned().expect("a timed phase")
    }

    fn ss(p: &PhaseSpec) -> (Option<&str>, Option<f64>, Option<f64>) {
        (p.ss.as_deref(), p.ss_dur, p.ss_ramp)
    }

    #[test]
    fn the_criterion_window_and_ramp_go_onto_the_timed_phase_under_every_alias() {
        let p = timed("ss=iops:20%\nss_dur=3\n");
        assert_eq!(ss(&p), (Some("iops:20%"), Some(3.0), None));
        let p =
            timed("steadystate=bw_slope:0.5%\nsteadystate_duration=10s\nsteadystate_ramp_time=2\n");
        assert_eq!(ss(&p), (Some("bw_slope:0.5%"), Some(10.0), Some(2.0)));
        // fio's time units; a fraction of a second dropped, as fio 3.33 keeps whole seconds.
        let p = timed("ss=bw:5%\nss_dur=20000ms\nss_ramp=0\n");
        assert_eq!(ss(&p), (Some("bw:5%"), Some(20.0), None));
        let p = timed("ss=iops_slope:1%\nss_dur=4.7\n");
        assert_eq!(ss(&p), (Some("iops_slope:1%"), Some(4.0), None));
    }

    #[test]
    fn fio_defaults_a_duration_alone_to_iops_slope_and_a_criterion_alone_to_off() {
        let (t, notes) = one(&format!("{TIMED}ss_dur=5\n"));
        let p = t.phases.last().expect("a timed phase");
        assert_eq!(ss(p), (Some("iops_slope:0.01%"), Some(5.0), None));
        assert!(
            notes.iter().any(|n| n.contains("default criterion iops_slope:0.01%")),
            "{notes:?}"
        );
        // ss_dur 0 (fio's default) is off: no criterion, and the notes say the option does nothing.
        for extra in ["ss=iops:5%\n", "ss=iops:5%\nss_dur=0\n", "ss_ramp=3\n"] {
            let (t, notes) = one(&format!("{TIMED}{extra}"));
            let p = t.phases.last().expect("a timed phase");
            assert_eq!(ss(p), (None, None, None), "{extra}");
            assert!(notes.iter().any(|n| n.contains("no effect, as in fio 3.33")), "{notes:?}");
        }
        // Without time_based too: off, so no reason to refuse.
        let (t, _) = one("[j]\nrw=read\nsize=1m\nss=bw:1%\n");
        assert_eq!(t.phases.last().and_then(|p| p.ss.clone()), None);
    }

    #[test]
    fn what_fsbench_cannot_judge_as_fio_is_refused_with_its_line() {
        for (extra, line, says) in [
            ("ss=iops:300\nss_dur=5\n", 6, "absolute"),
            ("ss=bw:1048576\nss_dur=5\n", 6, "absolute"),
            ("ss=iops\nss_dur=5\n", 6, "METRIC:LIMIT%"),
            ("ss=latency:5%\nss_dur=5\n", 6, "one of iops, iops_slope, bw, bw_slope"),
            ("ss=iops:0%\nss_dur=5\n", 6, "never attains"),
            ("ss=iops:x%\nss_dur=5\n", 6, "not a number"),
            ("ss=iops:5%\nss_dur=1\n", 7, "at least 2"),
            ("ss=iops:5%\nss_dur=5\nss_ramp=1.5\n", 8, "whole seconds"),
            ("ss=iops:5%\nss_dur=20\nss_ramp=11\n", 7, "never attain"),
            ("ss=iops:5%\nss_dur=5\nnumjobs=2\n", 6, "each clone on its own"),
            ("ss=iops:5%\nss_dur=5\nramp_time=2\n", 6, "ramp_time"),
            ("ss=iops:5%\nss_dur=5\nbssplit=4k/50:64k/50\n", 6, "bw or bw_slope"),
            ("ss_dur=5\nbsrange=4k-16k\n", 6, "iops_slope: fsbench samples bytes"),
        ] {
            let e = err(&format!("{TIMED}{extra}"));
            assert!(e.contains(&format!("t.fio:{line}")) && e.contains(says), "{extra}: {e}");
        }
        let e = err("[j]\nrw=read\nsize=1m\nruntime=10\nss=iops:5%\nss_dur=5\n");
        assert!(e.contains("t.fio:5") && e.contains("not time_based"), "{e}");
    }

    #[test]
    fn what_fsbench_judges_as_fio_is_taken() {
        // bw criteria with several op sizes; numjobs with group_reporting (fio judges the sum).
        let p = timed("ss=bw:5%\nss_dur=5\nbssplit=4k/50:64k/50\n");
        assert_eq!(p.ss.as_deref(), Some("bw:5%"));
        let (t, _) = one(&format!("{TIMED}ss=iops:5%\nss_dur=5\nnumjobs=2\ngroup_reporting\n"));
        assert_eq!(t.threads, 2);
        assert_eq!(t.phases.last().and_then(|p| p.ss.clone()).as_deref(), Some("iops:5%"));
        // A mixed job of one size judges ops per second too.
        let p = timed("rw=randrw\nss=iops:5%\nss_dur=5\n");
        assert_eq!(p.ss.as_deref(), Some("iops:5%"));
        // number_ios has no effect on a time-based job (fio 3.33 runs its runtime).
        let p = timed("ss=bw:5%\nss_dur=5\nnumber_ios=100\n");
        assert_eq!((p.ss.as_deref(), p.amount.ops), (Some("bw:5%"), None));
        // A window as long as the runtime can still be judged once.
        let p = timed("ss=iops:5%\nss_dur=28\nss_ramp=2\n");
        assert_eq!(p.ss_dur, Some(28.0));
    }

    #[test]
    fn a_job_beside_others_in_its_run_group_is_refused() {
        let text = "[global]\nsize=1m\ntime_based\nruntime=10\n[a]\nrw=read\nss=iops:5%\nss_dur=5\n[b]\nrw=write\n";
        let e = err(text);
        assert!(e.contains("t.fio:8") && e.contains("give the job a group of its own"), "{e}");
        // After a stonewall it is alone in its group.
        let ok = "[global]\nsize=1m\ntime_based\nruntime=10\n[a]\nrw=read\nss=iops:5%\nss_dur=5\n[b]\nstonewall\nrw=write\n";
        let t = translate(ok, "t.fio", "t", &|_| None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.spec.tests.len(), 2);
    }
}
