//! fio's flow control (`flow`, `flow_id`, `flow_sleep`) onto the phase's and the roles' flow
//! keys ([`crate::engine::flow`] runs it). fio sums the weights of every job of a flow when it
//! sets the jobs up, before any runs, and takes a job's weight out only when it ends; fsbench
//! does the same within one group of jobs (one test). Two cases where that would hold jobs
//! back for a job that is not running are refused instead of run differently: a flow whose
//! jobs are in several groups, and a job of a flow that waits for another (`wait_for`) or
//! starts later (`startdelay`, its own or its group's first job's).

use super::groups::Group;
use super::{FioError, Job};
use crate::workload::spec::PhaseSpec;

/// The job's `flow`, `flow_id` and `flow_sleep` onto its timed phase. `flow=0` (fio's
/// default) is no flow control; `flow_id` or `flow_sleep` without a weight change nothing, as
/// in fio (noted).
pub(super) fn flow(
    job: &Job,
    timed: &mut PhaseSpec,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    let weight = job.int("flow")?;
    let id = job.int("flow_id")?;
    let sleep = job.int("flow_sleep")?;
    match weight {
        None | Some((0, _)) => {
            if id.is_some() || sleep.is_some() {
                notes.push("flow_id or flow_sleep without flow: no effect, as in fio".into());
            }
            return Ok(());
        }
        Some((w, line)) if w > 1000 => {
            return Err(job.err("flow", line, format!("{w}: fio's weights are 0 to 1000")))
        }
        Some(_) => {}
    }
    if let Some((i, line)) = id.filter(|(i, _)| *i > u64::from(u32::MAX)) {
        return Err(job.err("flow_id", line, format!("{i}: give an id below 2^32")));
    }
    if let Some((s, line)) = sleep.filter(|(s, _)| *s > 10_000_000) {
        return Err(job.err("flow_sleep", line, format!("{s} µs: give at most 10000000 (10 s)")));
    }
    timed.flow = weight.map(|(w, _)| w as u32);
    timed.flow_id = id.map(|(i, _)| i as u32).filter(|i| *i != 0);
    timed.flow_sleep = sleep.map(|(s, _)| s).filter(|s| *s != 0);
    Ok(())
}

/// A job's flow id when it has a weight.
fn flow_of(job: &Job) -> Option<u64> {
    match job.int("flow") {
        Ok(Some((w, _))) if w > 0 => Some(job.int("flow_id").ok().flatten().map_or(0, |v| v.0)),
        _ => None,
    }
}

/// Refuse the flows fsbench cannot run as fio does: one whose jobs are in several groups
/// (fio counts the weights of jobs of a later group, not running yet, and holds the earlier
/// group's jobs back to their share of all of them), and a job of a flow with `wait_for`
/// (its weight counts while it waits).
pub(super) fn check_groups(jobs: &[Job], groups: &[Group], errors: &mut Vec<FioError>) {
    let mut seen: Vec<(u64, usize)> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        for &i in &g.jobs {
            let Some(job) = jobs.get(i) else { continue };
            let Some(id) = flow_of(job) else { continue };
            let line = job.line("flow");
            let first = g.jobs.first().and_then(|&f| jobs.get(f));
            let delayed =
                |j: &Job| j.get("startdelay").is_some_and(|v| v.value.as_deref() != Some("0"));
            if job.get("wait_for").is_some() {
                errors.push(job.err("flow", line, format!("in [{}], which waits for another job (wait_for): fio counts a flow's weights from the start, so the jobs it waits for are held back to their share while it waits; fsbench refuses it: remove flow or wait_for", job.name)));
            } else if delayed(job) || first.is_some_and(delayed) {
                errors.push(job.err("flow", line, format!("in [{}], in a group with a startdelay: fsbench starts the jobs of a flow together (fio counts every weight from the start, so a job that starts later holds the others back meanwhile); remove flow or startdelay", job.name)));
            }
            match seen.iter().find(|(f, _)| *f == id) {
                Some(&(_, first)) if first != gi => errors.push(job.err("flow", line, format!("flow_id {id} is used by jobs of several groups (a stonewall between them): fio counts every job's weight from the start, so a group is held back to its share of jobs that are not running; fsbench runs a flow within one group: give the groups different flow_id values, or remove the stonewall"))),
                Some(_) => {}
                None => seen.push((id, gi)),
            }
        }
    }
}
