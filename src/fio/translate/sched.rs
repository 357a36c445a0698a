//! fio's `nice`, `prio`/`prioclass` and `cpus_allowed` (or `cpumask`) with
//! `cpus_allowed_policy` onto the job's phases' `nice`, `ioprio`, `cpus` and `cpus_policy`:
//! fio sets them in each job process (each clone) before its I/O, fsbench in each worker
//! thread of the job before the start barrier, by the same system calls. Values fio 3.33
//! refuses are refused with their line, as are CPUs this machine does not have ("CPU N too
//! large" in fio).

use super::{FioError, Job};
use crate::model::sched::{cpu_list_text, parse_cpu_list, IoClass, IoPrio};
use crate::sys::sched::configured_cpus;
use crate::workload::spec::PhaseSpec;

/// The job's scheduling options onto each of its `phases` (a ramp phase too: fio sets them
/// before the job's first I/O).
pub(super) fn sched(
    job: &Job,
    phases: &mut [PhaseSpec],
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    let nice = nice(job)?;
    let ioprio = ioprio(job)?;
    let cpus = cpus(job)?;
    let split = match job.str("cpus_allowed_policy")? {
        None | Some(("shared", _)) => false,
        Some(("split", _)) => true,
        Some((v, line)) => {
            return Err(job.err(
                "cpus_allowed_policy",
                line,
                format!("`{v}` is not shared or split"),
            ))
        }
    };
    if cpus.is_none() && job.get("cpus_allowed_policy").is_some() {
        notes.push(
            "cpus_allowed_policy without cpus_allowed or cpumask: no effect, as in fio".into(),
        );
    }
    for p in phases {
        p.nice = nice;
        p.ioprio = ioprio.map(IoPrio::text);
        p.cpus = cpus.as_deref().map(cpu_list_text);
        p.cpus_policy = (cpus.is_some() && split).then(|| "split".to_string());
    }
    Ok(())
}

/// fio's `nice`: -20 to 19 (fio's bounds), applied as fio's `nice(N)`.
fn nice(job: &Job) -> Result<Option<i32>, FioError> {
    let Some((v, line)) = job.str("nice")? else { return Ok(None) };
    match v.trim().parse::<i32>() {
        Ok(n) if (-20..=19).contains(&n) => Ok(Some(n)),
        Ok(n) => Err(job.err("nice", line, format!("{n}: fio's nice is -20 to 19"))),
        Err(_) => Err(job.err("nice", line, format!("`{v}` is not a whole number (-20 to 19)"))),
    }
}

/// fio's `prio` (0 to 7) and `prioclass` (0 to 3): given either, the I/O priority fio sets,
/// class 0 (none) and a missing class being best-effort and a missing level 0, as fio's
/// `ioprio_value`.
fn ioprio(job: &Job) -> Result<Option<IoPrio>, FioError> {
    let level = job.int("prio")?;
    let class = job.int("prioclass")?;
    if let Some((l, line)) = level.filter(|(l, _)| *l > 7) {
        return Err(job.err("prio", line, format!("{l}: fio's prio is 0 (highest) to 7 (lowest)")));
    }
    let class = match class {
        None | Some((0 | 2, _)) => IoClass::BestEffort,
        Some((1, _)) => IoClass::Realtime,
        Some((3, _)) => IoClass::Idle,
        Some((c, line)) => {
            return Err(job.err(
                "prioclass",
                line,
                format!("{c}: fio's prioclass is 1 (realtime), 2 (best effort) or 3 (idle); 0 is best effort"),
            ))
        }
    };
    if level.is_none() && job.get("prioclass").is_none() {
        return Ok(None);
    }
    Ok(Some(IoPrio { class, level: level.map_or(0, |(l, _)| l as u8) }))
}

/// fio's `cpus_allowed` (a list, `0,2-3`) or `cpumask` (a bit mask of CPUs 0 to 31, decimal or
/// `0x` hex): both set the job's one CPU set, so the later line counts, as in fio. A CPU this
/// machine does not have is refused, as fio refuses it.
fn cpus(job: &Job) -> Result<Option<Vec<u32>>, FioError> {
    let limit = configured_cpus();
    let list = job.str("cpus_allowed")?;
    let mask = job.str("cpumask")?;
    let later_mask = match (&list, &mask) {
        (Some((_, l)), Some((_, m))) => m > l,
        (None, Some(_)) => true,
        _ => false,
    };
    if later_mask {
        let Some((v, line)) = mask else { return Ok(None) };
        let t = v.trim();
        let bits = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16),
            None => t.parse::<u64>(),
        }
        .map_err(|_| {
            job.err("cpumask", line, format!("`{v}` is not a number (a bit mask: 0x3)"))
        })?;
        if bits == 0 || bits > u64::from(u32::MAX) {
            return Err(job.err("cpumask", line, format!("`{v}`: a mask of CPUs 0 to 31, at least one bit (fio reads 32 bits; use cpus_allowed for more)")));
        }
        let cpus: Vec<u32> = (0..32).filter(|i| bits >> i & 1 == 1).collect();
        if let Some(&c) = cpus.iter().find(|&&c| c >= limit) {
            return Err(job.err(
                "cpumask",
                line,
                format!(
                    "CPU {c} is not on this machine (CPUs 0 to {}), as fio refuses it",
                    limit - 1
                ),
            ));
        }
        return Ok(Some(cpus));
    }
    match list {
        None => Ok(None),
        Some((v, line)) => {
            parse_cpu_list(v, limit).map(Some).map_err(|m| job.err("cpus_allowed", line, m))
        }
    }
}

/// fio deals `cpus_allowed_policy=split`'s CPUs by thread number over the whole job file (a
/// job's first clone takes the CPU after the previous job's last clone's), fsbench from each
/// job's own first thread: where the two differ (the threads of the jobs before it are not a
/// multiple of its CPUs), the job's test and the file's notes say so.
pub(super) fn split_order(
    jobs: &[Job],
    translated: &mut [Option<crate::workload::spec::TestSpec>],
    notes: &mut Vec<String>,
) {
    let mut before = 0u64;
    for (job, test) in jobs.iter().zip(translated.iter_mut()) {
        let threads = job.int("numjobs").ok().flatten().map_or(1, |(n, _)| n.max(1));
        let split = matches!(job.str("cpus_allowed_policy"), Ok(Some(("split", _))));
        let n = cpus(job).ok().flatten().map_or(0, |c| c.len() as u64);
        if split && n > 0 && before % n != 0 {
            let d = super::options::difference("cpus-split");
            notes.push(format!("[{}] {d}", job.name));
            if let Some(t) = test {
                t.notes.push(format!("fio job file: {d}"));
            }
        }
        before += threads;
    }
}
