//! fio's jobs that run at the same time. fio starts every job of a run group together and
//! ends the group when the last of them ends; a `stonewall` (or `wait_for_previous`) starts a
//! new group, `new_group` only a new reporting group (`groupid`). fsbench runs a group as one
//! test: the group's first job is the test's own threads, each other job one of its roles
//! (`[[test.role]]`) with its own file, pattern, engine, depth and amount, released with the
//! test's threads and waited for (its amount is its own); each keeps its own figures, which
//! `fsbench fio` reports as fio's `jobs[]` (merged per group with `group_reporting`).
//!
//! `startdelay` delays a job within its group (the first job's delay is its roles' lead);
//! `wait_for` naming a job of an earlier group is met (that group has ended); naming a job of
//! the same group makes the role wait for it (`after`).

use super::{FioError, Job, JobPlace};
use crate::model::job::OptValue;
use crate::workload::spec::{CacheReq, FileSpec, RoleSpec, TestSpec};

/// One of fio's run groups: the jobs (by index) that run at the same time, and each one's
/// reporting group.
#[derive(Debug, Default)]
pub(super) struct Group {
    /// Indices into the job list, in the file's order.
    pub jobs: Vec<usize>,
    /// fio's `groupid` of each job.
    pub report: Vec<u32>,
}

/// The run groups of `jobs`: a new one at the first job and at each `stonewall`; the reporting
/// group counts `stonewall` and `new_group` (fio's `groupid`). `wait_for` must name an earlier
/// job.
pub(super) fn run_groups(jobs: &[Job], errors: &mut Vec<FioError>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut report = 0u32;
    for (i, job) in jobs.iter().enumerate() {
        let flag = |name: &str, errors: &mut Vec<FioError>| match job.bool(name) {
            Ok(b) => b.unwrap_or(false),
            Err(e) => {
                errors.push(e);
                false
            }
        };
        let stonewall = flag("stonewall", errors);
        let new_group = flag("new_group", errors);
        if i > 0 && (stonewall || new_group) {
            report += 1;
        }
        if i == 0 || stonewall {
            groups.push(Group::default());
        }
        if let Some(g) = groups.last_mut() {
            g.jobs.push(i);
            g.report.push(report);
        }
    }
    for (i, job) in jobs.iter().enumerate() {
        let Some((target, line)) = job.str("wait_for").unwrap_or_else(|e| {
            errors.push(e);
            None
        }) else {
            continue;
        };
        if waitee(jobs, i).is_none() {
            errors.push(job.err(
                "wait_for",
                line,
                format!("no job before [{}] is named `{target}` (fio's waitee is defined earlier in the file)", job.name),
            ));
        }
    }
    groups
}

/// The job `wait_for` of job `i` names: the last one before it with that name.
fn waitee(jobs: &[Job], i: usize) -> Option<usize> {
    let (target, _) = jobs[i].str("wait_for").ok().flatten()?;
    let named = |j: &Job| {
        j.name == target || j.str("name").ok().flatten().is_some_and(|(n, _)| n == target)
    };
    jobs[..i].iter().rposition(named)
}

/// fio's `startdelay` of a job, in seconds (0 when absent).
fn start_delay(job: &Job) -> Result<f64, FioError> {
    Ok(job.seconds("startdelay")?.map(|(s, _)| s).unwrap_or(0.0))
}

/// One run group as one test: its first job's test, with every other job as a role. Returns
/// the test and where each job of the group runs.
pub(super) fn one_group(
    jobs: &[Job],
    g: &Group,
    members: Vec<(usize, TestSpec)>,
    notes: &mut Vec<String>,
) -> Result<(TestSpec, Vec<JobPlace>), Vec<FioError>> {
    if members.iter().any(|(_, t)| t.fileset.is_some()) {
        return super::fileops::one_group(jobs, g, members, notes);
    }
    let mut errs = Vec::new();
    let mut it = members.into_iter().zip(g.report.iter().copied());
    let Some(((first, mut test), report)) = it.next() else {
        return Err(errs);
    };
    let fjob = &jobs[first];
    let reporting = |job: &Job, errs: &mut Vec<FioError>| match job.bool("group_reporting") {
        Ok(b) => b.unwrap_or(false),
        Err(e) => {
            errs.push(e);
            false
        }
    };
    let lead = start_delay(fjob).unwrap_or_else(|e| {
        errs.push(e);
        0.0
    });
    let mut places = vec![JobPlace {
        name: fjob.name.clone(),
        test_id: test.id.clone(),
        role: None,
        group: report,
        group_reporting: reporting(fjob, &mut errs),
        threads: test.threads,
        percentiles: super::LatPercentiles::of(fjob),
        percentile_list: super::percentile_list(fjob).ok().flatten(),
        options: fjob.own.clone(),
        first_thread: 0,
        fileop: None,
    }];
    let rest: Vec<_> = it.collect();
    if rest.is_empty() {
        if lead > 0.0 {
            notes.push(format!("[{}] startdelay={lead}: no other job runs in its group, so fsbench starts it at once (fio waits first; the job's figures are the same)", fjob.name));
        }
        return if errs.is_empty() { Ok((test, places)) } else { Err(errs) };
    }
    if test.phases.len() > 1 {
        errs.push(fjob.err("ramp_time", fjob.line("ramp_time"), format!("in [{}], which runs at the same time as other jobs: fsbench runs a group of jobs as one timed phase, without a ramp; remove ramp_time, or add `stonewall` to the jobs after it", fjob.name)));
    }
    if test.file.as_ref().is_some_and(|f| f.per_thread.is_some()) {
        errs.push(fjob.err("nrfiles", fjob.line("nrfiles"), format!("in [{}], which runs at the same time as other jobs: fsbench runs several files per thread for a job on its own; add `stonewall` to the jobs after it, or remove nrfiles", fjob.name)));
    }
    let mut names = vec![fjob.name.clone()];
    // The files the group's jobs name, and who lays each out.
    let mut shared_files = super::shared::Files::first(fjob, &test);
    // Where each job of the group runs: the test's id for the first, its role's name else.
    let mut runs_as: Vec<(usize, String)> = vec![(first, test.id.clone())];
    for ((i, t), report) in rest {
        let job = &jobs[i];
        let after = waitee(jobs, i)
            .and_then(|w| runs_as.iter().find(|(j, _)| *j == w).map(|(_, n)| n.clone()));
        let delay = start_delay(job).unwrap_or_else(|e| {
            errs.push(e);
            0.0
        });
        let mut role_name: String = t.id.chars().map(|c| if c == '.' { '_' } else { c }).collect();
        while test.roles.iter().any(|r| r.name == role_name) {
            role_name.push('_');
        }
        let threads = t.threads;
        if t.verify == Some(true) {
            errs.push(job.err("verify", job.line("verify"), format!("in [{}], which runs at the same time as [{}]: fsbench checks the data of a group's first job only; add `stonewall` before [{}], or verify in the group's first job", job.name, fjob.name, job.name)));
            continue;
        }
        if t.seed != test.seed {
            let d = crate::fio::options::difference("randseed-group");
            test.notes.push(format!("fio job file: [{}] {d}", job.name));
        }
        let share = shared_files.share_of(job, &t);
        let on_shared = share != super::shared::Share::Own;
        let on_run_file = shared_files.on_first_jobs(share);
        match into_role(job, fjob, t, role_name.clone(), (lead, delay), (on_shared, on_run_file)) {
            Ok((mut role, job_notes)) => {
                role.after = after;
                runs_as.push((i, role.name.clone()));
                test.notes.extend(job_notes.into_iter().map(|n| {
                    match n.strip_prefix("fio job file: ") {
                        Some(rest) => format!("fio job file: [{}] {rest}", job.name),
                        None => n,
                    }
                }));
                let index = test.roles.len();
                if let Err(e) = shared_files.place(job, (&mut role, index), share, &mut test) {
                    errs.push(e);
                    continue;
                }
                test.roles.push(role);
            }
            Err(e) => {
                errs.extend(e);
                continue;
            }
        }
        places.push(JobPlace {
            name: job.name.clone(),
            test_id: test.id.clone(),
            role: Some(role_name),
            group: report,
            group_reporting: reporting(job, &mut errs),
            threads,
            percentiles: super::LatPercentiles::of(job),
            percentile_list: super::percentile_list(job).ok().flatten(),
            options: job.own.clone(),
            first_thread: 0,
            fileop: None,
        });
        names.push(job.name.clone());
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let list = names.iter().map(|n| format!("[{n}]")).collect::<Vec<_>>().join(", ");
    notes.push(format!("{list} run at the same time (one fio group) as test `{}`: [{}] is its own threads (its figure), the others its roles, each with its own figures; the group ends when every job has moved its amount", test.id, fjob.name));
    test.description = format!("fio jobs {list} at the same time; {}", test.description);
    Ok((test, places))
}

/// fio's name of an io_uring key of a test.
fn fio_name(key: &str) -> &str {
    match key {
        "sqpoll" => "sqthread_poll",
        "iopoll" => "hipri",
        other => other,
    }
}

/// A job that runs beside its group's first job `fjob`, translated as the test `t`, as a role
/// (`lead`: the first job's start delay, `delay`: its own), with the test's notes. A role takes
/// io_uring's `registerfiles` and no other engine key. `on_shared`: the file it names is one
/// the group shares ([`super::shared`] places the role on it); `on_run_file`: that file is the
/// group's first job's (a file of the run when other groups name it too).
fn into_role(
    job: &Job,
    fjob: &Job,
    mut t: TestSpec,
    name: String,
    (lead, delay): (f64, f64),
    (on_shared, on_run_file): (bool, bool),
) -> Result<(RoleSpec, Vec<String>), Vec<FioError>> {
    let mut errs = Vec::new();
    let beside = format!("in [{}], which runs at the same time as [{}]", job.name, fjob.name);
    if t.phases.len() != 1 {
        errs.push(job.err("ramp_time", job.line("ramp_time"), format!("{beside}: fsbench runs a group of jobs as one timed phase, without a ramp; remove ramp_time, or add `stonewall` to [{}]", job.name)));
    }
    if t.phases.iter().any(|p| p.unlink_each_pass) {
        errs.push(job.err("unlink_each_loop", job.line("unlink_each_loop"), format!("{beside}: fsbench unlinks and remakes the file after each loop for a group's first job only; add `stonewall` to [{}]", job.name)));
    }
    if t.phases.iter().any(|p| p.cache == CacheReq::Cached) {
        errs.push(job.err("pre_read", job.line("pre_read"), format!("{beside}: fsbench reads a group's files into the cache (and checks they stay) for its first job only; add `stonewall` to [{}], or pre_read in the group's first job", job.name)));
    }
    let file = t.file.take().unwrap_or(FileSpec {
        size: crate::workload::size::SizeExpr::Bytes(0),
        shared: false,
        prefill: false,
        path: None,
        unlink: None,
        whole: None,
        offset: None,
        offset_increment: None,
        run_file: None,
        take_size: None,
        verify_writes: None,
        preallocate: None,
        per_thread: None,
        service: None,
        name_format: None,
    });
    if file.offset.is_some() || file.offset_increment.is_some() {
        let k = if job.get("offset").is_some() { "offset" } else { "offset_increment" };
        errs.push(job.err(k, job.line(k), format!("{beside}: the jobs after the first of a group work from the start of their files; remove {k}, or add `stonewall` to [{}] to run it on its own", job.name)));
    }
    if file.per_thread.is_some() {
        errs.push(job.err("nrfiles", job.line("nrfiles"), format!("{beside}: fsbench gives each thread of a group's later job one file; remove nrfiles, or add `stonewall` to [{}] to run it on its own", job.name)));
    }
    if !on_shared && (file.path.is_some() || (file.shared && t.threads > 1)) {
        errs.push(job.err("filename", job.line("filename"), format!("{beside}: fsbench gives this job files of its own (one per thread, in its work directory), where fio's share the named file; remove filename, or add `stonewall` to [{}] to run it on its own", job.name)));
    }
    let format = job.str("filename_format").ok().flatten();
    if file.name_format.is_some() && format.is_some_and(|f| f.0 != super::name_format::DEFAULT) {
        errs.push(job.err("filename_format", job.line("filename_format"), format!("{beside}: fsbench names the files of a group's later job itself (one per thread, in its work directory); remove filename_format, or add `stonewall` to [{}] to run it on its own", job.name)));
    }
    let mut registerfiles = None;
    for (k, v) in t.engine_keys.iter() {
        match (k, v) {
            ("registerfiles", OptValue::Bool(b)) => registerfiles = Some(*b),
            _ => {
                let o = fio_name(k);
                errs.push(job.err(o, job.line(o), format!("{beside}: the jobs after the first of a group run io_uring with fsbench's defaults but for registerfiles; remove {o}, or add `stonewall` to [{}]", job.name)));
            }
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let Some(phase) = t.phases.pop() else {
        return Err(errs);
    };
    let run_file = file.run_file.is_some();
    let role = RoleSpec {
        name,
        threads: t.threads,
        file: FileSpec {
            shared: false,
            path: None,
            unlink: None,
            whole: None,
            offset: None,
            offset_increment: None,
            run_file: None,
            take_size: None,
            verify_writes: None,
            // A role's files are named by fsbench (`t<ID>.role-<NAME>.<K>.dat`).
            name_format: None,
            ..file
        },
        open: phase.open,
        pattern: phase.pattern,
        sync: phase.sync,
        lead: (lead > 0.0).then_some(lead),
        engine: t.engine,
        iodepth: t.iodepth,
        direct: t.direct,
        amount: Some(phase.amount),
        delay: (delay > 0.0).then_some(delay),
        uncached: (phase.cache == CacheReq::Uncached).then_some(true),
        invalidate_each_pass: phase.invalidate_each_pass.then_some(true),
        fadvise_hint: phase.fadvise_hint.then_some(true),
        random_percent: phase.random_percent,
        random_map: t.random_map,
        random_distribution: t.random_distribution,
        registerfiles,
        after: None,
        same_file: None,
        rate_iops: phase.rate_iops,
        rate: phase.rate,
        rate_process: phase.rate_process,
        latency_from: phase.latency_from,
        rate_read: phase.rate_read,
        rate_write: phase.rate_write,
        thinktime: phase.thinktime,
        thinktime_blocks: phase.thinktime_blocks,
        exitall: None,
        flow: phase.flow,
        flow_id: phase.flow_id,
        flow_sleep: phase.flow_sleep,
        nice: phase.nice,
        ioprio: phase.ioprio,
        cpus: phase.cpus,
        cpus_policy: phase.cpus_policy,
    };
    let mut notes = t.notes;
    if run_file && !on_run_file {
        // Its plain filename is another group's too, and the role's file is not the run's.
        notes.push(format!("fio job file: {}", crate::fio::options::difference("filename-reuse")));
    }
    Ok((role, notes))
}
