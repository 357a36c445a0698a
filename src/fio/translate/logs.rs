//! fio's logs: `write_bw_log=PREFIX`, `write_iops_log=PREFIX` and `write_lat_log=PREFIX`.
//! With `log_avg_msec=N`, averaged: fsbench already keeps a series of each timed phase (one
//! point per interval, [`crate::model::series::PhaseSeries`]); `fsbench fio` runs with that
//! interval set to `log_avg_msec` and writes each window's figures in fio's log format after
//! the run ([`crate::present::fio_log`]). Without it, fio's per-I/O logs: the job's timed phase
//! keeps a record per op ([`crate::model::oplog`], marked by [`mark_op_logs`], which bounds
//! their count), written as a line per op after the run. This module decides, at translation,
//! which jobs get which files and refuses what fsbench cannot give with the option's line:
//! - `numjobs` > 1: the series and records are the test's, not each clone's;
//! - a job that runs beside others in its group: the test's series counts them together;
//! - `ramp_time`: fio's time stamps count from the job's start, fsbench's series from its timed
//!   phase;
//! - jobs whose `log_avg_msec` differ: one run has one series interval;
//! - `write_lat_log`'s `slat` and `clat` files with io_uring at iodepth 1 (the request goes to
//!   the kernel in the call that waits for it) or fio's null engine at a depth (fsbench's does
//!   each op at once): their submission is not timed apart ([`lat_files`]).
//!
//! File names follow fio 3.33's `init.c`: `PREFIX_bw.N.log`, `PREFIX_iops.N.log` and
//! `PREFIX_lat.N.log`, `PREFIX_slat.N.log`, `PREFIX_clat.N.log`, N the job's thread number
//! (1 + the `numjobs` of every job before it in the file), or `PREFIX_bw.log` with
//! `per_job_logs=0`; relative to the current directory, not `directory=` (checked with fio
//! 3.33).

use super::groups::Group;
use super::{FioError, Job};
use crate::model::oplog::MAX_OP_RECORDS;
use crate::model::series::MIN_INTERVAL_NANOS;
use std::collections::BTreeMap;

/// Which of fio's averaged logs a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    /// `write_bw_log`: KiB/s per window and direction.
    Bw,
    /// `write_iops_log`: I/Os per second per window and direction.
    Iops,
    /// `write_lat_log`'s `_lat` file: the mean total latency (ns) per window and direction.
    Lat,
    /// `write_lat_log`'s `_clat` file: the mean completion latency (ns); a synchronous
    /// engine's only (there it is fsbench's one latency, as `Lat`).
    Clat,
    /// `write_lat_log`'s `_slat` file: a synchronous engine's, which has no submission step
    /// and no line, as fio's own.
    Slat,
}

impl LogKind {
    /// The fio option that asks for it.
    pub fn option(self) -> &'static str {
        match self {
            LogKind::Bw => "write_bw_log",
            LogKind::Iops => "write_iops_log",
            LogKind::Lat | LogKind::Clat | LogKind::Slat => "write_lat_log",
        }
    }
}

/// The log files one fio job asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct JobLogs {
    /// fio's job name.
    pub job: String,
    /// The test the job runs as (alone in its group).
    pub test_id: String,
    /// `log_avg_msec`: the window length in milliseconds; `None` (no `log_avg_msec`, or 0):
    /// fio's per-I/O log, a line per op ([`crate::model::oplog`]).
    pub avg_msec: Option<u64>,
    /// `log_offset=1`: each line has the op's offset after its size (0 in an averaged line),
    /// as fio's.
    pub offset: bool,
    /// The last column of each line, fio 3.33's without `log_prio`: 1 when the job's I/O
    /// priority class is real time (`prioclass=1`), else 0.
    pub prio: u8,
    /// `gtod_reduce=1`: fio writes a per-I/O bandwidth or IOPS log empty (it takes no clock
    /// per op); an averaged one as without it.
    pub reduced: bool,
    /// Each file: its kind and its name (relative to the current directory).
    pub files: Vec<(LogKind, String)>,
    /// The job file and line of the job's first `write_*_log` (for messages).
    pub file: String,
    /// See `file`.
    pub line: usize,
}

/// The log requests of `jobs`: `solo` maps a job's index to its test id when it runs alone in
/// its group (other jobs that run have no test of their own). Problems go to `errors`.
pub(super) fn plan(
    jobs: &[Job],
    groups: &[Group],
    solo: &BTreeMap<usize, String>,
    errors: &mut Vec<FioError>,
) -> Vec<JobLogs> {
    let mut out: Vec<JobLogs> = Vec::new();
    // fio's thread number of each job: its clones count too.
    let mut number = 1u64;
    for (i, job) in jobs.iter().enumerate() {
        let threads = job.int("numjobs").ok().flatten().map_or(1, |(n, _)| n.max(1));
        let this = number;
        number += threads;
        // Read for every job, so a bad value is reported whether or not a log is asked for.
        let (avg, per_job) = match (job.int("log_avg_msec"), job.bool("per_job_logs")) {
            (Ok(a), Ok(p)) => (a.map(|(n, _)| n), p.unwrap_or(true)),
            (a, p) => {
                errors.extend(a.err().into_iter().chain(p.err()));
                continue;
            }
        };
        let (offset, class, reduced) =
            match (job.bool("log_offset"), job.int("prioclass"), job.bool("gtod_reduce")) {
                (Ok(o), Ok(c), Ok(r)) => {
                    (o.unwrap_or(false), c.map(|(c, _)| c), r.unwrap_or(false))
                }
                (o, c, r) => {
                    errors.extend(o.err().into_iter().chain(c.err()).chain(r.err()));
                    continue;
                }
            };
        let mut asked = Vec::new();
        for (key, kind, suffix) in [
            ("write_bw_log", LogKind::Bw, "bw"),
            ("write_iops_log", LogKind::Iops, "iops"),
            ("write_lat_log", LogKind::Lat, "lat"),
        ] {
            // The option alone: the job's name is the prefix, as fio's.
            if let Some(super::Val { value: None, line, .. }) = job.get(key) {
                asked.push((key, kind, suffix, job.name.as_str(), *line));
                continue;
            }
            match job.str(key) {
                Ok(Some((prefix, line))) => asked.push((key, kind, suffix, prefix, line)),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        let Some(&(first_key, _, _, _, line)) = asked.first() else {
            continue;
        };
        match check(job, avg, i, threads, groups, first_key, line) {
            Ok(avg_msec) => {
                let other = |l: &&JobLogs| l.avg_msec.is_some_and(|a| Some(a) != avg_msec);
                if let (Some(avg), Some(prev)) = (avg_msec, out.iter().find(other)) {
                    let prev_avg = prev.avg_msec.unwrap_or_default();
                    errors.push(job.err(
                        "log_avg_msec",
                        job.line("log_avg_msec"),
                        format!("{avg} differs from job `{}`'s {prev_avg}: fsbench keeps one series interval per run; give every job with a log the same log_avg_msec", prev.job),
                    ));
                    continue;
                }
                // write_lat_log's files, as the job's engine and disable_* allow.
                let lat = match asked.iter().find(|a| a.1 == LogKind::Lat) {
                    Some(&(_, _, _, _, line)) => match lat_files(job, line) {
                        Ok(v) => v,
                        Err(e) => {
                            errors.push(e);
                            continue;
                        }
                    },
                    None => Vec::new(),
                };
                // A job that never runs (exit_what) has no test and gets no file.
                let Some(test_id) = solo.get(&i) else {
                    continue;
                };
                let files: Vec<(LogKind, String)> = asked
                    .iter()
                    .flat_map(|&(_, kind, suffix, prefix, _)| {
                        let kinds = match kind {
                            LogKind::Lat => lat.clone(),
                            _ => vec![(kind, suffix)],
                        };
                        kinds.into_iter().map(move |(kind, suffix)| {
                            (kind, file_name(prefix, suffix, per_job.then_some(this)))
                        })
                    })
                    .collect();
                // write_lat_log with every latency disabled: no file, as fio.
                if files.is_empty() {
                    continue;
                }
                out.push(JobLogs {
                    job: job.name.clone(),
                    test_id: test_id.clone(),
                    avg_msec,
                    offset,
                    prio: u8::from(class == Some(1)),
                    reduced,
                    files,
                    file: job.file.to_string(),
                    line,
                });
            }
            Err(e) => errors.push(e),
        }
    }
    out
}

/// The per-I/O logs of `logs` on `suite` (the translation, validated): each such job's timed
/// phases keep a record per op ([`crate::model::job::PhaseDef::op_log`]). A job whose timed
/// phase is bounded by bytes or ops that could come to more than [`MAX_OP_RECORDS`] ops (its
/// bytes over its smallest op, `size/bs` times `loops`) is refused at its log's line: the
/// records are kept in memory until the run ends. A phase bounded by time (`time_based`), by
/// passes over a file it finds, or filling a device has no count known before it runs: its
/// records stop at the cap, and `fsbench fio` writes no log for it and exits 1 after its
/// report (`crate::present::fio_log::LogError::Cut`).
pub fn mark_op_logs(
    logs: &[JobLogs],
    suite: &mut crate::model::job::Suite,
) -> Result<(), FioError> {
    use crate::model::job::Amount;
    for l in logs.iter().filter(|l| l.avg_msec.is_none()) {
        let Some(test) = suite.tests.iter_mut().find(|t| t.id == l.test_id) else {
            continue;
        };
        for phase in test.phases.iter_mut().filter(|p| p.timed) {
            let smallest =
                phase.pattern.data().iter().map(|o| o.size.min()).filter(|n| *n > 0).min();
            let most = match (phase.amount, smallest) {
                (Amount::Bytes(b), Some(bs)) => Some(b.div_ceil(bs)),
                (Amount::Ops(n), _) => Some(n),
                _ => None,
            };
            if let Some(n) = most.filter(|n| *n > MAX_OP_RECORDS) {
                let option = l.files.first().map_or("write_lat_log", |f| f.0.option());
                return Err(FioError::Value {
                    file: l.file.clone(),
                    line: l.line,
                    option: option.into(),
                    message: format!("without log_avg_msec, a line per I/O: job `{}` could do {n} I/Os, more than the {MAX_OP_RECORDS} fsbench keeps in memory for a per-I/O log (~{} MiB); give log_avg_msec=N for fio's averaged log, or a smaller size", l.job, (MAX_OP_RECORDS * std::mem::size_of::<crate::model::oplog::OpRecord>() as u64) >> 20),
                });
            }
            phase.op_log = true;
        }
    }
    Ok(())
}

/// fio's name of a log file: `PREFIX_bw.N.log`, or `PREFIX_bw.log` without a job number.
pub fn file_name(prefix: &str, suffix: &str, number: Option<u64>) -> String {
    match number {
        Some(n) => format!("{prefix}_{suffix}.{n}.log"),
        None => format!("{prefix}_{suffix}.log"),
    }
}

/// The files of `write_lat_log` (written at `line`), in fio 3.33's order (`init.c`: lat,
/// slat, clat) and each left out by its `disable_lat`/`disable_slat`/`disable_clat` (or by
/// `gtod_reduce`, which sets all three unless the job gives one itself), or why the job's
/// engine cannot have them. fsbench times each op once, from its start (its call, or its
/// scheduled start under a rate) to its completion: fio's total latency (`lat`). A synchronous
/// engine has no submission step: fio's `clat` is the same time but for the op's preparation,
/// and its `slat` file has no line (fio 3.33 writes it empty). io_uring and libaio have their
/// submission timed apart, as fio's, except io_uring at depth 1 (submitted with the wait).
fn lat_files(job: &Job, line: usize) -> Result<Vec<(LogKind, &'static str)>, FioError> {
    let reduce = job.bool("gtod_reduce")?.unwrap_or(false);
    let mut kept = Vec::new();
    for (kind, off, suffix) in [
        (LogKind::Lat, "disable_lat", "lat"),
        (LogKind::Slat, "disable_slat", "slat"),
        (LogKind::Clat, "disable_clat", "clat"),
    ] {
        if !job.bool(off)?.unwrap_or(reduce) {
            kept.push((kind, suffix));
        }
    }
    let engine = job.str("ioengine")?.map_or("psync", |(e, _)| e);
    let depth = job.int("iodepth")?.map_or(1, |(d, _)| d);
    // fio's null engine is synchronous at iodepth=1 (`null_init`), else it queues.
    let asynchronous = match engine {
        "io_uring" | "libaio" => true,
        "null" => depth > 1,
        _ => false,
    };
    // io_uring and libaio have their submission timed apart, but io_uring at depth 1 without
    // batching submits in the call that waits for the request; fsbench's null engine does not
    // queue apart at all.
    let batch = job.int("iodepth_batch")?.map(|(b, _)| b);
    let apart = match engine {
        "libaio" => true,
        "io_uring" => depth > 1 || batch.is_some_and(|b| b >= 1),
        _ => false,
    };
    if asynchronous && !apart && kept.iter().any(|(k, _)| *k != LogKind::Lat) {
        let why = if engine == "io_uring" {
            "fsbench's io_uring at iodepth 1 hands each request to the kernel in the io_uring_enter that waits for it, so its submission (slat) is not timed apart from its completion (clat)"
        } else {
            "fio times an asynchronous engine's submission (slat) and completion (clat) apart, fsbench's null engine does each op at once"
        };
        return Err(job.err("write_lat_log", line, format!("with ioengine={engine} at iodepth={depth}: {why}; add disable_slat=1 and disable_clat=1 to write PREFIX_lat.N.log alone, or use a synchronous engine (psync)")));
    }
    Ok(kept)
}

/// The job's `log_avg_msec` (`None`: a per-I/O log), or why its log cannot be written.
fn check(
    job: &Job,
    avg: Option<u64>,
    index: usize,
    threads: u64,
    groups: &[Group],
    key: &str,
    line: usize,
) -> Result<Option<u64>, FioError> {
    let avg = avg.filter(|n| *n > 0);
    if avg.is_some_and(|avg| avg * 1_000_000 < MIN_INTERVAL_NANOS) {
        let avg = avg.unwrap_or_default();
        return Err(job.err(
            "log_avg_msec",
            job.line("log_avg_msec"),
            format!(
                "{avg} ms is below {} ms, the shortest series interval fsbench keeps",
                MIN_INTERVAL_NANOS / 1_000_000
            ),
        ));
    }
    if threads > 1 {
        return Err(job.err(key, line, format!("with numjobs={threads}: fsbench's series and per-op records are the job's, not each clone's (fio writes one file per clone); use numjobs=1")));
    }
    if groups.iter().any(|g| g.jobs.contains(&index) && g.jobs.len() > 1) {
        return Err(job.err(key, line, "on a job that runs at the same time as other jobs: fsbench's series and per-op records count its group's jobs together; separate it with stonewall"));
    }
    if job.seconds("ramp_time")?.is_some_and(|(s, _)| s > 0.0) {
        return Err(job.err(key, line, "with ramp_time: fio's time stamps count from the job's start, fsbench's from the end of its ramp; leave ramp_time out"));
    }
    Ok(avg)
}

#[cfg(test)]
mod tests {
    use super::super::translate;
    use super::{JobLogs, LogKind};

    fn env(_: &str) -> Option<String> {
        None
    }

    fn logs(text: &str) -> Vec<JobLogs> {
        translate(text, "t.fio", "t", &env).unwrap_or_else(|e| panic!("{e}")).logs
    }

    fn err(text: &str) -> String {
        translate(text, "t.fio", "t", &env).unwrap_err().to_string()
    }

    const JOB: &str = "rw=randread\nbs=4k\nsize=1m\ntime_based\nruntime=2\n";

    /// fio 3.33's names: the job's thread number counts every clone of the jobs before it;
    /// per_job_logs=0 leaves it out; each asked log gets its file, of the job's own test.
    #[test]
    fn files_are_named_as_fio_names_them() {
        let text = format!(
            "[a]\n{JOB}numjobs=3\n[b]\nstonewall\n{JOB}log_avg_msec=500\nwrite_bw_log=p\nwrite_iops_log=q\n[c]\nstonewall\n{JOB}log_avg_msec=500\nwrite_iops_log=r\nper_job_logs=0\n"
        );
        let l = logs(&text);
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[0].job.as_str(), l[0].test_id.as_str(), l[0].avg_msec),
            ("b", "b", Some(500))
        );
        assert_eq!(
            l[0].files,
            vec![
                (LogKind::Bw, "p_bw.4.log".to_string()),
                (LogKind::Iops, "q_iops.4.log".to_string())
            ]
        );
        assert_eq!((l[0].file.as_str(), l[0].line), ("t.fio", 16));
        assert_eq!(l[1].files, vec![(LogKind::Iops, "r_iops.log".to_string())]);
        // The option alone: the job's name is the prefix (fio 3.33: `myjob_iops.1.log`).
        let l = logs(&format!("[myjob]\n{JOB}log_avg_msec=100\nwrite_iops_log\n"));
        assert_eq!(l[0].files, vec![(LogKind::Iops, "myjob_iops.1.log".to_string())]);
        // log_avg_msec alone asks for nothing, as in fio.
        assert!(logs(&format!("[a]\n{JOB}log_avg_msec=500\n")).is_empty());
    }

    /// write_lat_log: fio 3.33's three files in its order (lat, slat, clat), numbered as the
    /// others, each left out by its disable_* or by gtod_reduce (unless the job turns it back
    /// on); with every latency disabled, no file and no log request.
    #[test]
    fn latency_logs_are_named_and_left_out_as_fio_does() {
        let l = logs(&format!(
            "[a]\n{JOB}numjobs=2\n[b]\nstonewall\n{JOB}log_avg_msec=500\nwrite_lat_log=x\nwrite_iops_log=x\n"
        ));
        assert_eq!(
            l[0].files,
            vec![
                (LogKind::Iops, "x_iops.3.log".to_string()),
                (LogKind::Lat, "x_lat.3.log".to_string()),
                (LogKind::Slat, "x_slat.3.log".to_string()),
                (LogKind::Clat, "x_clat.3.log".to_string()),
            ]
        );
        assert_eq!(LogKind::Slat.option(), "write_lat_log");
        let files = |extra: &str| -> Vec<String> {
            let l = logs(&format!("[j]\n{JOB}log_avg_msec=100\nwrite_lat_log\n{extra}"));
            l.first().map(|l| l.files.iter().map(|f| f.1.clone()).collect()).unwrap_or_default()
        };
        assert_eq!(files("per_job_logs=0\n"), ["j_lat.log", "j_slat.log", "j_clat.log"]);
        assert_eq!(files("disable_slat=1\n"), ["j_lat.1.log", "j_clat.1.log"]);
        assert_eq!(files("disable_lat=1\ndisable_clat=1\n"), ["j_slat.1.log"]);
        assert_eq!(files("gtod_reduce=1\ndisable_clat=0\n"), ["j_clat.1.log"]);
        assert!(files("gtod_reduce=1\n").is_empty());
        // Synchronous engines (fio's FIO_SYNCIO): all three.
        for engine in ["psync", "sync", "pvsync", "mmap", "null"] {
            assert_eq!(files(&format!("ioengine={engine}\n")).len(), 3, "{engine}");
        }
    }

    /// io_uring and libaio have their submission timed apart: all three files, as fio's. Not
    /// io_uring at iodepth 1 without iodepth_batch (submitted in the call that waits for it)
    /// nor fio's null engine at a depth (fsbench's does each op at once): their slat and clat
    /// files are refused at write_lat_log's line, and their total latency alone is written.
    #[test]
    fn engines_that_submit_apart_get_the_three_files_and_the_others_their_lat_alone() {
        let names = |l: Vec<JobLogs>| -> Vec<String> {
            l[0].files.iter().map(|(_, n)| n.clone()).collect()
        };
        for (engine, depth) in [("libaio", 1), ("libaio", 4), ("io_uring", 4)] {
            let job = format!(
                "[j]\n{JOB}ioengine={engine}\niodepth={depth}\nlog_avg_msec=100\nwrite_lat_log=x\n"
            );
            let l = logs(&job);
            assert_eq!(names(l), ["x_lat.1.log", "x_slat.1.log", "x_clat.1.log"], "{engine}");
        }
        let l = logs(&format!(
            "[j]\n{JOB}ioengine=io_uring\niodepth_batch=1\nlog_avg_msec=100\nwrite_lat_log=x\n"
        ));
        assert_eq!(l[0].files.len(), 3, "io_uring submitting as it queues");
        for (engine, depth) in [("io_uring", 1), ("null", 4)] {
            let job = format!(
                "[j]\n{JOB}ioengine={engine}\niodepth={depth}\nlog_avg_msec=100\nwrite_lat_log=x\n"
            );
            let e = err(&job);
            assert!(
                e.contains("t.fio:10")
                    && e.contains(&format!("ioengine={engine} at iodepth={depth}"))
                    && e.contains("disable_slat=1 and disable_clat=1"),
                "{e}"
            );
            let e = err(&format!("{job}disable_slat=1\n"));
            assert!(e.contains("t.fio:10") && e.contains("(clat)"), "{e}");
            let l = logs(&format!("{job}disable_slat=1\ndisable_clat=1\n"));
            assert_eq!(l[0].files, vec![(LogKind::Lat, "x_lat.1.log".to_string())], "{engine}");
        }
    }

    /// Without log_avg_msec (or with 0), fio's per-I/O log: planned with no window, its
    /// offset column (log_offset), its last column (1 for prioclass=1, real time) and
    /// gtod_reduce kept; beside an averaged log of another job, whose window alone sets the
    /// series interval. The same refusals as an averaged log's: numjobs, jobs beside it,
    /// ramp_time.
    #[test]
    fn per_io_logs_are_planned_without_log_avg_msec() {
        let l = logs(&format!("[a]\n{JOB}write_bw_log=p\nwrite_lat_log=p\n"));
        assert_eq!(l[0].avg_msec, None);
        assert_eq!((l[0].offset, l[0].prio, l[0].reduced), (false, 0, false));
        let names: Vec<&str> = l[0].files.iter().map(|f| f.1.as_str()).collect();
        assert_eq!(names, ["p_bw.1.log", "p_lat.1.log", "p_slat.1.log", "p_clat.1.log"]);
        let l = logs(&format!(
            "[a]\n{JOB}write_iops_log=p\nlog_avg_msec=0\nlog_offset=1\nprioclass=1\ngtod_reduce=1\n"
        ));
        assert_eq!((l[0].avg_msec, l[0].offset, l[0].prio, l[0].reduced), (None, true, 1, true));
        let l = logs(&format!("[a]\n{JOB}write_iops_log=p\nprioclass=2\nprio=3\n"));
        assert_eq!(l[0].prio, 0, "best effort");
        let l = logs(&format!(
            "[a]\n{JOB}write_iops_log=p\n[b]\nstonewall\n{JOB}write_iops_log=q\nlog_avg_msec=250\n[c]\nstonewall\n{JOB}write_iops_log=r\n"
        ));
        let avg: Vec<Option<u64>> = l.iter().map(|l| l.avg_msec).collect();
        assert_eq!(avg, [None, Some(250), None]);
        let e = err(&format!("[a]\n{JOB}numjobs=2\nwrite_iops_log=p\n"));
        assert!(e.contains("t.fio:8") && e.contains("numjobs=2"), "{e}");
        let e = err(&format!("[a]\n{JOB}[b]\n{JOB}write_lat_log=p\n"));
        assert!(e.contains("t.fio:13") && e.contains("same time as other jobs"), "{e}");
        let e = err(&format!("[a]\n{JOB}ramp_time=1\nwrite_bw_log=p\n"));
        assert!(e.contains("t.fio:8") && e.contains("ramp_time"), "{e}");
        // io_uring at depth 1 submits with its wait: its slat and clat are not apart.
        let e = err(&format!("[a]\n{JOB}ioengine=io_uring\nwrite_lat_log=p\n"));
        assert!(e.contains("t.fio:8") && e.contains("disable_slat=1"), "{e}");
    }

    /// Loading marks a per-I/O log's timed phase to keep a record per op, and nothing else
    /// (not its untimed phases, not an averaged log's job, not a job without a log); a
    /// size-bound job that could do more than MAX_OP_RECORDS ops is refused at its log's line,
    /// a time-based one is not (its records stop at the cap).
    #[test]
    fn load_marks_per_io_phases_and_bounds_their_op_count() {
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 34,
        };
        let load = |text: &str| {
            let t = translate(text, "t.fio", "t", &env).unwrap_or_else(|e| panic!("{e}"));
            crate::fio::load(&t, &ctx)
        };
        let marks = |text: &str| -> Vec<Vec<(bool, bool)>> {
            let suite = load(text).unwrap_or_else(|e| panic!("{e}"));
            suite
                .tests
                .iter()
                .map(|t| t.phases.iter().map(|p| (p.timed, p.op_log)).collect())
                .collect()
        };
        let size = "rw=randread\nbs=4k\nsize=1m\n";
        let m = marks(&format!(
            "[a]\n{size}write_lat_log=p\n[b]\nstonewall\n{size}[c]\nstonewall\n{JOB}write_iops_log=q\nlog_avg_msec=100\n[d]\nstonewall\n{JOB}write_bw_log=r\n"
        ));
        // Every timed phase records, and no untimed one.
        assert!(m[0].contains(&(true, true)) && m[0].iter().all(|&(t, log)| t == log), "{m:?}");
        assert!(m[1].iter().chain(&m[2]).all(|&(_, log)| !log), "{m:?}");
        assert_eq!(m[3].last(), Some(&(true, true)));
        // 4 Mi ops of 4 KiB are 16 GiB: twice that is refused, at the log's line.
        let e =
            load("[a]\nrw=randwrite\nbs=4k\nsize=32g\nwrite_iops_log=p\n").unwrap_err().to_string();
        assert!(
            e.contains("t.fio:5") && e.contains("8388608 I/Os") && e.contains("4194304"),
            "{e}"
        );
        // loops multiply the size: 2 × 16 GiB is too many too.
        let e = load("[a]\nrw=randwrite\nbs=4k\nsize=16g\nloops=2\nwrite_lat_log=p\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.fio:6") && e.contains("8388608 I/Os"), "{e}");
        // Exactly the cap, or a time-based job of any size: taken.
        assert!(load("[a]\nrw=randwrite\nbs=4k\nsize=16g\nwrite_iops_log=p\n").is_ok());
        assert!(load(
            "[a]\nrw=randwrite\nbs=4k\nsize=64g\ntime_based\nruntime=5\nwrite_iops_log=p\n"
        )
        .is_ok());
    }

    /// What the series cannot give is refused at the option's line, with why.
    #[test]
    fn logs_the_series_cannot_give_are_refused() {
        let e = err(&format!("[a]\n{JOB}write_iops_log=p\nlog_avg_msec=5\n"));
        assert!(e.contains("t.fio:8") && e.contains("below 10 ms"), "{e}");
        let e = err(&format!("[a]\n{JOB}numjobs=2\nwrite_iops_log=p\nlog_avg_msec=100\n"));
        assert!(e.contains("t.fio:8") && e.contains("numjobs=2"), "{e}");
        let e = err(&format!("[a]\n{JOB}[b]\n{JOB}write_iops_log=p\nlog_avg_msec=100\n"));
        assert!(e.contains("t.fio:13") && e.contains("same time as other jobs"), "{e}");
        let e = err(&format!("[a]\n{JOB}write_iops_log=p\nlog_avg_msec=100\n[b]\n{JOB}"));
        assert!(e.contains("t.fio:7") && e.contains("same time as other jobs"), "{e}");
        let e = err(&format!("[a]\n{JOB}ramp_time=1\nwrite_iops_log=p\nlog_avg_msec=100\n"));
        assert!(e.contains("t.fio:8") && e.contains("ramp_time"), "{e}");
        let e = err(&format!(
            "[a]\n{JOB}write_iops_log=p\nlog_avg_msec=100\n[b]\nstonewall\n{JOB}write_iops_log=q\nlog_avg_msec=200\n"
        ));
        assert!(e.contains("t.fio:17") && e.contains("one series interval per run"), "{e}");
        // Still refused: the histogram log, priority values, compression.
        for (opt, why) in [
            ("write_hist_log=p", "histogram log"),
            ("log_prio=1", "not the priority's value"),
            ("log_compression=1m", "plain text"),
        ] {
            let e = err(&format!("[a]\n{JOB}log_avg_msec=100\n{opt}\n"));
            assert!(
                e.contains("t.fio:8") && e.contains("not supported") && e.contains(why),
                "{opt}: {e}"
            );
        }
    }
}
