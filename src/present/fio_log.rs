//! fio's log files (`write_bw_log`, `write_iops_log`, `write_lat_log`): averaged ones (with
//! `log_avg_msec`) made from a job's timed-phase series ([`PhaseSeries`]) after the run, and
//! per-I/O ones from its per-op records:
//! `fsbench fio` writes them where fio would, so scripts that read fio's logs read fsbench's.
//!
//! fio 3.33's format (`iolog.c`, checked against its files): one line per window and direction
//! that moved data, `TIME_MS, VALUE, DDIR, BS, PRIO`, with TIME_MS the window's end since the
//! job started, VALUE the window's KiB/s (`bytes * 1000 / ms / 1024`, whole) or I/Os per second
//! (`ios * 1000 / ms`), DDIR 0 for reads and 1 for writes, and BS and PRIO 0 (averaged lines
//! carry neither; with `log_offset=1`, an OFFSET 0 between them). A window in which a direction moved nothing has no line for it, and fio
//! writes no bandwidth or IOPS line for the window the job ends in: here only windows that end
//! by the phase's end are written.
//!
//! The latency logs (`_lat`, `_clat`; `stat.c`'s `add_log_sample` and `__add_stat_to_log`)
//! carry the mean latency of the window's ops of each direction in ns, rounded half up (fio
//! adds 0.5 to its running mean and truncates; here the sum over the count, in whole numbers).
//! fio closes a latency window when an op completes after its end, and the last one, partial,
//! when the job ends: here every window with ops in a direction has its line, the last one
//! stamped with the phase's end. A synchronous engine's `_slat` file is empty, as fio writes it
//! (no submission step), and its `_clat` the op's whole time. An engine that submits apart
//! (io_uring, libaio) has its submission timed apart: its `_slat` and `_clat` files carry the
//! window's mean submission latency and completion latency from the submission's return
//! ([`PhaseSeries::split`]), as fio's.
//!
//! Without `log_avg_msec`, fio's per-I/O logs: a line per op from the timed phase's records
//! ([`crate::model::oplog`], kept only for such a job), [`render_ops`].

use crate::fio::{JobLogs, LogKind};
use crate::model::oplog::{OpLog, OpRecord};
use crate::model::result::{PhaseResult, TestResult};
use crate::model::series::PhaseSeries;
use std::fmt::Write;

/// Why a job's log could not be made from the run's records.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LogError {
    /// The job's test is not in the results, or has no timed phase with a series.
    #[error("fio job `{job}`: no series of its timed phase in the results (test `{test}`), so its log files were not written")]
    NoSeries {
        /// fio's job name.
        job: String,
        /// Its test id.
        test: String,
    },
    /// The series keeps no latency sums for a direction that had ops (a record made before
    /// fsbench kept them), so no mean latency per window.
    #[error("fio job `{job}`: its series keeps no latency sums per window, so its latency log files were not written")]
    NoLatency {
        /// fio's job name.
        job: String,
    },
    /// An engine that submits apart did not time every op's submission apart (io_uring hands
    /// a request to the kernel in the call that waits for it at depth 1), so no `_slat` or
    /// `_clat` means per window.
    #[error("fio job `{job}`: not every op's submission was timed apart (io_uring submits in the call that waits for its completion at iodepth 1), so its slat and clat log files were not written; add disable_slat=1 and disable_clat=1")]
    NoSplit {
        /// fio's job name.
        job: String,
    },
    /// A per-I/O log's job has no per-op records of its timed phase in the results.
    #[error("fio job `{job}`: no per-I/O records of its timed phase in the results, so its log files were not written")]
    NoRecords {
        /// fio's job name.
        job: String,
    },
    /// A per-I/O log's phase did more ops than the records keep
    /// ([`crate::model::oplog::MAX_OP_RECORDS`]): a cut log is not written.
    #[error("fio job `{job}`: its per-I/O log was cut at {kept} I/Os ({dropped} more were done: fsbench keeps at most {kept} records in memory), so its log files were not written; give log_avg_msec=N for fio's averaged log, or a shorter runtime or smaller size")]
    Cut {
        /// fio's job name.
        job: String,
        /// Records kept.
        kept: u64,
        /// Ops done past them.
        dropped: u64,
    },
    /// The series was kept at another interval than `log_avg_msec` (widened when a phase that
    /// is not time-based outlasted the series' points).
    #[error("fio job `{job}`: its series was kept at {got_ms} ms windows, not log_avg_msec={want_ms} (the phase outlasted the series' points), so its log files were not written; make the job time_based or give a longer log_avg_msec")]
    Interval {
        /// fio's job name.
        job: String,
        /// `log_avg_msec`.
        want_ms: u64,
        /// The series' interval.
        got_ms: f64,
    },
}

impl crate::sys::classify::Classify for LogError {
    /// The job ran: what is missing is in its records, after the run (exit 1).
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// One log file's content: an averaged log's text (a line per window), or a per-I/O log's
/// records, whose lines are made as they are written ([`LogText::write_to`]).
pub enum LogText<'a> {
    /// The whole text.
    Text(String),
    /// A line per record ([`write_ops`]).
    Ops {
        /// The phase's records.
        log: &'a OpLog,
        /// Which log.
        kind: LogKind,
        /// The request (its columns).
        request: &'a JobLogs,
    },
}

impl LogText<'_> {
    /// Write the file's content to `w`.
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            LogText::Text(t) => w.write_all(t.as_bytes()),
            LogText::Ops { log, kind, request } => write_ops(log, *kind, request, w),
        }
    }

    /// The file's content as one text.
    pub fn text(&self) -> String {
        match self {
            LogText::Text(t) => t.clone(),
            LogText::Ops { log, kind, request } => render_ops(log, *kind, request),
        }
    }
}

/// The log files of every request in `logs`, from `tests` (a run's results): each file's name
/// and text, in the requests' order.
pub fn log_files(
    logs: &[JobLogs],
    tests: &[TestResult],
) -> Result<Vec<(String, String)>, LogError> {
    Ok(log_outputs(logs, tests)?.into_iter().map(|(n, t)| (n, t.text())).collect())
}

/// The log files of every request in `logs`, from `tests`: each file's name and content, in
/// the requests' order; checked whole before any is written (a request the records cannot
/// give fails them all, as one error).
pub fn log_outputs<'a>(
    logs: &'a [JobLogs],
    tests: &'a [TestResult],
) -> Result<Vec<(String, LogText<'a>)>, LogError> {
    let mut out = Vec::new();
    for l in logs {
        let Some(avg_msec) = l.avg_msec else {
            out.extend(op_log_files(l, tests)?);
            continue;
        };
        let no_series = || LogError::NoSeries { job: l.job.clone(), test: l.test_id.clone() };
        let test = tests.iter().find(|t| t.id == l.test_id).ok_or_else(no_series)?;
        let phase = timed_phase(test).ok_or_else(no_series)?;
        let series = phase.series.as_ref().ok_or_else(no_series)?;
        if series.interval_nanos != avg_msec * 1_000_000 {
            return Err(LogError::Interval {
                job: l.job.clone(),
                want_ms: avg_msec,
                got_ms: series.interval_nanos as f64 / 1e6,
            });
        }
        for (kind, name) in &l.files {
            if matches!(kind, LogKind::Lat | LogKind::Clat) && !has_lat_sums(series) {
                return Err(LogError::NoLatency { job: l.job.clone() });
            }
            let split = series.split.is_some() || !phase.submission.is_empty();
            if split && *kind != LogKind::Lat && !split_covers(phase, series) {
                return Err(LogError::NoSplit { job: l.job.clone() });
            }
            let text = render(series, *kind, phase.wall_nanos);
            let text = if l.offset { with_offset_column(&text) } else { text };
            out.push((name.clone(), LogText::Text(text)));
        }
    }
    Ok(out)
}

/// `log_offset=1` on averaged lines: fio 3.33 writes their offset as 0 between the size (0)
/// and the priority (0), so each line gets one more `, 0`.
fn with_offset_column(text: &str) -> String {
    text.lines().map(|l| format!("{l}, 0\n")).collect()
}

/// The files of a per-I/O log (no `log_avg_msec`): one line per op, from the job's timed
/// phase's records ([`render_ops`]). A log the cap cut is not written; neither are the slat
/// and clat files of an engine that submits apart when some ops' submission was not timed
/// apart (their lines would be missing or wrong).
fn op_log_files<'a>(
    l: &'a JobLogs,
    tests: &'a [TestResult],
) -> Result<Vec<(String, LogText<'a>)>, LogError> {
    let no_records = || LogError::NoRecords { job: l.job.clone() };
    let test = tests.iter().find(|t| t.id == l.test_id).ok_or_else(no_records)?;
    let rep = test.reps.iter().rev().find(|r| r.complete).or(test.reps.last());
    let mut logged = rep.into_iter().flat_map(|r| &r.phases).filter(|p| p.timed);
    let (phase, log) =
        logged.find_map(|p| p.op_log.as_ref().map(|log| (p, log))).ok_or_else(no_records)?;
    if log.dropped > 0 {
        return Err(LogError::Cut {
            job: l.job.clone(),
            kept: log.len() as u64,
            dropped: log.dropped,
        });
    }
    let split = !phase.submission.is_empty() || log.iter().any(|r| r.apart());
    let mut out = Vec::new();
    for (kind, name) in &l.files {
        let apart = matches!(kind, LogKind::Slat | LogKind::Clat);
        if split && apart && !log.iter().all(|r| r.apart()) {
            return Err(LogError::NoSplit { job: l.job.clone() });
        }
        out.push((name.clone(), LogText::Ops { log, kind: *kind, request: l }));
    }
    Ok(out)
}

/// A per-I/O log's text, fio 3.33's lines (`iolog.c`'s `flush_samples`): one per data op,
/// `TIME_MS, VALUE, DDIR, BS[, OFFSET], PRIO`, TIME_MS the op's completion since the worker's
/// release (fio: since the job's start) and VALUE:
/// - `Lat`: its latency in ns; `Clat`: its completion latency (from its submission's return
///   when that was timed apart, else its whole latency, a synchronous engine's);
/// - `Slat`: its submission latency, stamped at its submission's return and in that order
///   (fio logs it when it submits); a synchronous engine has none and the file is empty;
/// - `Bw`: its bytes over its completion latency, `bytes * 10^6 / clat_ns` (fio's integer
///   division; 0 for a latency of 0); `Iops`: 1. Both empty with `gtod_reduce` (fio's
///   `disable_bw` and its reduced clock).
///
/// BS is the bytes the op moved, OFFSET (with `log_offset=1`) its offset, PRIO
/// [`JobLogs::prio`].
pub fn render_ops(log: &OpLog, kind: LogKind, l: &JobLogs) -> String {
    let mut o = Vec::new();
    // Writing to memory does not fail.
    let _ = write_ops(log, kind, l, &mut o);
    String::from_utf8_lossy(&o).into_owned()
}

/// [`render_ops`]'s lines written to `w` as they are made (a log of millions of lines is never
/// held as one text).
pub fn write_ops(
    log: &OpLog,
    kind: LogKind,
    l: &JobLogs,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut line = |ms: u64, value: u64, r: &OpRecord| -> std::io::Result<()> {
        write!(w, "{ms}, {value}, {}, {}", u8::from(r.write), r.bytes)?;
        if l.offset {
            write!(w, ", {}", r.offset)?;
        }
        writeln!(w, ", {}", l.prio)
    };
    let ms = |ns: u64| ns / 1_000_000;
    match kind {
        LogKind::Bw | LogKind::Iops if l.reduced => Ok(()),
        LogKind::Lat => log.iter().try_for_each(|r| line(ms(r.done_nanos), r.lat_nanos, r)),
        LogKind::Clat => log.iter().try_for_each(|r| line(ms(r.done_nanos), r.clat_nanos(), r)),
        LogKind::Bw => log.iter().try_for_each(|r| {
            let clat = r.clat_nanos();
            let bw = (u64::from(r.bytes) * 1_000_000).checked_div(clat).unwrap_or(0);
            line(ms(r.done_nanos), bw, r)
        }),
        LogKind::Iops => log.iter().try_for_each(|r| line(ms(r.done_nanos), 1, r)),
        LogKind::Slat => {
            let mut apart: Vec<&OpRecord> = log.iter().filter(|r| r.apart()).collect();
            apart.sort_by_key(|r| r.submitted_nanos());
            apart.into_iter().try_for_each(|r| line(ms(r.submitted_nanos()), r.slat_nanos, r))
        }
    }
}

/// The one timed phase of the repetition a fio run shows (the last complete one).
fn timed_phase(test: &TestResult) -> Option<&PhaseResult> {
    let rep = test.reps.iter().rev().find(|r| r.complete).or(test.reps.last())?;
    let mut timed = rep.phases.iter().filter(|p| p.timed && p.series.is_some());
    match (timed.next(), timed.next()) {
        (Some(p), None) => Some(p),
        _ => None,
    }
}

/// Whether every point with reads (writes) has its latency sum.
fn has_lat_sums(s: &PhaseSeries) -> bool {
    let covers = |ops: &[u64], sums: &[u64]| ops.iter().skip(sums.len()).all(|n| *n == 0);
    covers(&s.read_ops, &s.read_lat_sum_nanos) && covers(&s.write_ops, &s.write_lat_sum_nanos)
}

/// Whether the series' submission and completion sums cover every op of the phase: the phase
/// timed each read's and write's submission apart, and the series kept their sums.
fn split_covers(phase: &PhaseResult, series: &PhaseSeries) -> bool {
    use crate::model::job::OpKind;
    let Some(x) = series.split.as_ref() else { return false };
    let count = |op: OpKind| phase.latency.iter().find(|l| l.op == op).map_or(0, |l| l.count);
    let split =
        |op: OpKind| phase.submission.iter().find(|s| s.op == op).map_or(0, |s| s.slat.count);
    let covers = |ops: &[u64], sums: &[u64]| ops.iter().skip(sums.len()).all(|n| *n == 0);
    [OpKind::Read, OpKind::Write].iter().all(|op| count(*op) == split(*op))
        && covers(&series.read_ops, &x.read_slat_sum_nanos)
        && covers(&series.read_ops, &x.read_clat_sum_nanos)
        && covers(&series.write_ops, &x.write_slat_sum_nanos)
        && covers(&series.write_ops, &x.write_clat_sum_nanos)
}

/// One log's text: a line per window that ended by `wall_nanos` and direction with I/O (a
/// latency log: per window and direction with I/O, the last one partial).
pub fn render(series: &PhaseSeries, kind: LogKind, wall_nanos: u64) -> String {
    match kind {
        LogKind::Bw | LogKind::Iops => {}
        LogKind::Lat => return render_lat(series, wall_nanos, Mean::Lat),
        // An engine that submits apart: from the submission's return; else the op's time.
        LogKind::Clat if series.split.is_some() => {
            return render_lat(series, wall_nanos, Mean::Clat)
        }
        LogKind::Clat => return render_lat(series, wall_nanos, Mean::Lat),
        LogKind::Slat if series.split.is_some() => {
            return render_lat(series, wall_nanos, Mean::Slat)
        }
        // A synchronous engine's: no submission step timed, no line (fio's is empty too).
        LogKind::Slat => return String::new(),
    }
    let mut o = String::new();
    let interval = series.interval_nanos.max(1) as u128;
    let points = [&series.read_bytes, &series.read_ops, &series.write_bytes, &series.write_ops]
        .iter()
        .map(|v| v.len())
        .max()
        .unwrap_or(0);
    for i in 0..points {
        let end = (i as u128 + 1) * interval;
        if end > wall_nanos as u128 {
            break;
        }
        let at = |v: &[u64]| v.get(i).copied().unwrap_or(0) as u128;
        let dirs = [
            (0, at(&series.read_bytes), at(&series.read_ops)),
            (1, at(&series.write_bytes), at(&series.write_ops)),
        ];
        for (ddir, bytes, ops) in dirs {
            if bytes == 0 && ops == 0 {
                continue;
            }
            let value = match kind {
                LogKind::Bw => bytes * 1_000_000_000 / interval / 1024,
                _ => ops * 1_000_000_000 / interval,
            };
            let _ = writeln!(o, "{}, {value}, {ddir}, 0, 0", end / 1_000_000);
        }
    }
    o
}

/// Which latency a latency log's lines are the mean of.
#[derive(Clone, Copy)]
enum Mean {
    /// The op's whole time (fio's `lat`; a synchronous engine's `clat` too).
    Lat,
    /// Its submission (fio's `slat`).
    Slat,
    /// From its submission's return to its completion (fio's `clat` of an engine that submits
    /// apart).
    Clat,
}

/// A latency log's text: per window and direction with ops, the window's end in ms and the
/// mean latency of its ops in ns. The last, partial window ends with the phase, and is stamped
/// at least a ms after its start, so that stamps increase (the phase's wall time is taken from
/// the workers' release a little after the series' origin: a phase that ends a fraction of a
/// ms into a window would otherwise stamp it as the window before).
fn render_lat(series: &PhaseSeries, wall_nanos: u64, mean: Mean) -> String {
    let mut o = String::new();
    let interval = series.interval_nanos.max(1);
    let points = series.read_ops.len().max(series.write_ops.len());
    for i in 0..points {
        let start = i as u64 * interval;
        let end = start + interval;
        let ms = if end <= wall_nanos {
            end / 1_000_000
        } else {
            (wall_nanos / 1_000_000).max(start / 1_000_000 + 1)
        };
        for (ddir, write) in [(0, false), (1, true)] {
            let m = match mean {
                Mean::Lat => series.mean_lat_nanos(i, write),
                Mean::Slat => series.mean_split_nanos(i, write, true),
                Mean::Clat => series.mean_split_nanos(i, write, false),
            };
            if let Some(mean) = m {
                let _ = writeln!(o, "{ms}, {mean}, {ddir}, 0, 0");
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series() -> PhaseSeries {
        PhaseSeries {
            interval_nanos: 500_000_000,
            read_bytes: vec![100 * 4096, 0, 101 * 4096, 50 * 4096],
            read_ops: vec![100, 0, 101, 50],
            write_bytes: vec![50 * 8192, 25 * 8192, 0, 0],
            write_ops: vec![50, 25, 0, 0],
            ..PhaseSeries::default()
        }
    }

    /// fio's columns and units: window end in ms, KiB/s or IOPS, 0 for reads and 1 for writes,
    /// bs and offset 0; no line for a direction without I/O in a window; the window that
    /// outlasts the phase is left out.
    #[test]
    fn lines_are_fios_averaged_log_lines() {
        let s = series();
        let wall = 1_900_000_000;
        assert_eq!(
            render(&s, LogKind::Iops, wall),
            "500, 200, 0, 0, 0\n500, 100, 1, 0, 0\n1000, 50, 1, 0, 0\n1500, 202, 0, 0, 0\n"
        );
        assert_eq!(
            render(&s, LogKind::Bw, wall),
            "500, 800, 0, 0, 0\n500, 800, 1, 0, 0\n1000, 400, 1, 0, 0\n1500, 808, 0, 0, 0\n"
        );
        // A phase that lasts to the last window's end gets it.
        assert!(render(&s, LogKind::Iops, 2_000_000_000).ends_with("2000, 100, 0, 0, 0\n"));
    }

    /// The latency logs: per window and direction with ops, the window's end in ms and its mean
    /// latency in ns (sum over count, half up); the last, partial window too, stamped with the
    /// phase's end; clat the same as lat (a synchronous engine's), slat empty.
    #[test]
    fn latency_lines_are_the_mean_per_window_and_direction() {
        let mut s = series();
        s.read_lat_sum_nanos = vec![100 * 150_000 + 50, 0, 101 * 200_000, 50 * 90_001];
        s.write_lat_sum_nanos = vec![50 * 1_000_000 + 25, 25 * 2_000_000, 0, 0];
        let wall = 1_900_000_000;
        let lat = render(&s, LogKind::Lat, wall);
        assert_eq!(
            lat,
            "500, 150001, 0, 0, 0\n500, 1000001, 1, 0, 0\n1000, 2000000, 1, 0, 0\n\
             1500, 200000, 0, 0, 0\n1900, 90001, 0, 0, 0\n"
        );
        assert_eq!(render(&s, LogKind::Clat, wall), lat);
        assert_eq!(render(&s, LogKind::Slat, wall), "");
        // A phase whose wall time ends a fraction of a ms into its last window: stamped a ms
        // after the window's start, after the window before.
        let late = render(&s, LogKind::Lat, 1_500_300_000);
        assert!(late.ends_with("1500, 200000, 0, 0, 0\n1501, 90001, 0, 0, 0\n"), "{late}");
        // Without the sums (a series stored before fsbench kept them) no mean is made up.
        let logs = averaged(500, LogKind::Lat, "p_lat.1.log");
        let test = |series: PhaseSeries| one_test(series, wall);
        assert_eq!(
            log_files(&logs, &[test(series())]),
            Err(LogError::NoLatency { job: "j".into() })
        );
        let files = log_files(&logs, &[test(s)]).expect("files");
        assert_eq!(files, vec![("p_lat.1.log".to_string(), lat)]);
    }

    /// An engine that submits apart: its slat and clat logs are the window's mean submission
    /// and completion latencies from their sums; refused when the phase did not time every
    /// op's submission apart (io_uring at depth 1 keeps no split for its ops).
    #[test]
    fn slat_and_clat_lines_of_an_engine_that_submits_apart_are_their_own_means() {
        use crate::model::job::OpKind;
        use crate::model::series::SplitSums;
        let mut s = series();
        s.read_lat_sum_nanos = vec![100 * 150_000, 0, 101 * 200_000, 50 * 90_000];
        s.write_lat_sum_nanos = vec![50 * 1_000_000, 25 * 2_000_000, 0, 0];
        s.split = Some(SplitSums {
            read_slat_sum_nanos: vec![100 * 5_000, 0, 101 * 7_000, 50 * 1_001],
            write_slat_sum_nanos: vec![50 * 20_000 + 25, 25 * 30_000, 0, 0],
            read_clat_sum_nanos: vec![100 * 145_000, 0, 101 * 193_000, 50 * 88_999],
            write_clat_sum_nanos: vec![50 * 980_000 - 25, 25 * 1_970_000, 0, 0],
        });
        let wall = 1_900_000_000;
        assert_eq!(
            render(&s, LogKind::Slat, wall),
            "500, 5000, 0, 0, 0\n500, 20001, 1, 0, 0\n1000, 30000, 1, 0, 0\n\
             1500, 7000, 0, 0, 0\n1900, 1001, 0, 0, 0\n"
        );
        assert_eq!(
            render(&s, LogKind::Clat, wall),
            "500, 145000, 0, 0, 0\n500, 980000, 1, 0, 0\n1000, 1970000, 1, 0, 0\n\
             1500, 193000, 0, 0, 0\n1900, 88999, 0, 0, 0\n"
        );
        let logs = averaged(500, LogKind::Slat, "p_slat.1.log");
        // The phase's split covers its reads and writes: written.
        let mut t = one_test(s.clone(), wall);
        let p = &mut t.reps[0].phases[0];
        let lat = |op: OpKind, count: u64| crate::model::result::OpLatency {
            op,
            count,
            mean_nanos: 0.0,
            min_nanos: 0,
            p50_nanos: 0,
            p90_nanos: 0,
            p99_nanos: 0,
            p999_nanos: 0,
            max_nanos: 0,
            histogram_b64: String::new(),
        };
        let split = |op: OpKind, count: u64| crate::model::submit::SplitLatency {
            op,
            slat: crate::model::submit::Moments { count, ..Default::default() },
            clat: lat(op, count),
        };
        p.latency = vec![lat(OpKind::Read, 251), lat(OpKind::Write, 75)];
        p.submission = vec![split(OpKind::Read, 251), split(OpKind::Write, 75)];
        assert!(log_files(&logs, std::slice::from_ref(&t)).is_ok());
        // Some reads submitted with their wait: refused, no mean made up.
        t.reps[0].phases[0].submission[0].slat.count = 250;
        assert_eq!(log_files(&logs, &[t]), Err(LogError::NoSplit { job: "j".into() }));
    }

    /// A per-I/O log request of job `j`, its files `files`.
    fn per_io(files: &[(LogKind, &str)], offset: bool, prio: u8, reduced: bool) -> Vec<JobLogs> {
        logs_of(None, files, offset, prio, reduced)
    }

    /// An averaged log request of job `j` at `avg_msec`, its file `name` of `kind`.
    fn averaged(avg_msec: u64, kind: LogKind, name: &str) -> Vec<JobLogs> {
        logs_of(Some(avg_msec), &[(kind, name)], false, 0, false)
    }

    /// A log request of job `j` (line 3 of t.fio).
    fn logs_of(
        avg_msec: Option<u64>,
        files: &[(LogKind, &str)],
        offset: bool,
        prio: u8,
        reduced: bool,
    ) -> Vec<JobLogs> {
        vec![JobLogs {
            job: "j".into(),
            test_id: "j".into(),
            avg_msec,
            offset,
            prio,
            reduced,
            files: files.iter().map(|(k, n)| (*k, n.to_string())).collect(),
            file: "t.fio".into(),
            line: 3,
        }]
    }

    /// A psync read at 1.5 ms, a write at 2.9 ms, each of 4 KiB; then an io_uring-like pair
    /// whose submissions were timed apart and completed out of their submission order.
    fn records(apart: bool) -> OpLog {
        use crate::model::oplog::NOT_APART;
        let slat = |n: u64| if apart { n } else { NOT_APART };
        let r = |done, lat, s, offset, write| OpRecord {
            done_nanos: done,
            lat_nanos: lat,
            slat_nanos: slat(s),
            offset,
            bytes: 4096,
            write,
        };
        OpLog {
            chunks: vec![
                vec![r(1_500_000, 40_000, 1_000, 8192, false)],
                vec![r(2_900_000, 2_000_000, 100_000, 0, true)],
            ],
            dropped: 0,
        }
    }

    /// Per-I/O lines as fio 3.33 writes them: one per op in completion order, the time in ms,
    /// the value, 0 for reads and 1 for writes, the op's bytes, its offset with log_offset,
    /// and the priority column; lat in ns, clat the whole latency for a synchronous engine
    /// (its slat file empty), bw as bytes × 10^6 / clat, iops 1; with gtod_reduce the bw and
    /// iops files empty, as fio's.
    #[test]
    fn per_io_lines_are_fios_lines_per_op() {
        let sync = records(false);
        let l = &per_io(&[], false, 0, false)[0];
        assert_eq!(
            render_ops(&sync, LogKind::Lat, l),
            "1, 40000, 0, 4096, 0\n2, 2000000, 1, 4096, 0\n"
        );
        assert_eq!(render_ops(&sync, LogKind::Clat, l), render_ops(&sync, LogKind::Lat, l));
        assert_eq!(render_ops(&sync, LogKind::Slat, l), "");
        // 4096 × 10^6 / 40 000 ns = 102 400; / 2 ms = 2048.
        assert_eq!(
            render_ops(&sync, LogKind::Bw, l),
            "1, 102400, 0, 4096, 0\n2, 2048, 1, 4096, 0\n"
        );
        assert_eq!(render_ops(&sync, LogKind::Iops, l), "1, 1, 0, 4096, 0\n2, 1, 1, 4096, 0\n");
        let l = &per_io(&[], true, 1, false)[0];
        assert_eq!(
            render_ops(&sync, LogKind::Iops, l),
            "1, 1, 0, 4096, 8192, 1\n2, 1, 1, 4096, 0, 1\n"
        );
        let l = &per_io(&[], false, 0, true)[0];
        assert_eq!(render_ops(&sync, LogKind::Bw, l), "");
        assert_eq!(render_ops(&sync, LogKind::Iops, l), "");
        assert!(!render_ops(&sync, LogKind::Lat, l).is_empty());
    }

    /// An engine that submits apart: clat is lat less slat, bw is over the clat, and the slat
    /// lines are stamped at each submission's return, in submission order (the write, sent
    /// at 1.0 ms, before the read, sent at 1.461 ms, though it completed after it), as fio
    /// logs slat when it submits.
    #[test]
    fn per_io_slat_lines_are_stamped_and_ordered_by_submission() {
        let split = records(true);
        let l = &per_io(&[], false, 0, false)[0];
        assert_eq!(
            render_ops(&split, LogKind::Clat, l),
            "1, 39000, 0, 4096, 0\n2, 1900000, 1, 4096, 0\n"
        );
        assert_eq!(
            render_ops(&split, LogKind::Slat, l),
            "1, 100000, 1, 4096, 0\n1, 1000, 0, 4096, 0\n"
        );
        assert_eq!(
            render_ops(&split, LogKind::Bw, l),
            "1, 105025, 0, 4096, 0\n2, 2155, 1, 4096, 0\n"
        );
    }

    /// The files of a per-I/O request come from the timed phase's records; none without
    /// records; a cut log is not written (exit 1 with why); slat and clat files are refused
    /// when some ops of an engine that submits apart were not timed apart, while the lat file
    /// of the same records is written. An averaged log with log_offset gets fio's offset 0.
    #[test]
    fn per_io_files_come_from_the_records_and_a_cut_log_is_refused() {
        let logs = per_io(
            &[(LogKind::Lat, "p_lat.1.log"), (LogKind::Iops, "p_iops.1.log")],
            false,
            0,
            false,
        );
        let mut t = one_test(series(), 2_000_000_000);
        assert_eq!(
            log_files(&logs, std::slice::from_ref(&t)),
            Err(LogError::NoRecords { job: "j".into() })
        );
        t.reps[0].phases[0].op_log = Some(records(false));
        let files = log_files(&logs, std::slice::from_ref(&t)).expect("files");
        let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(names, ["p_lat.1.log", "p_iops.1.log"]);
        assert_eq!(files[0].1.lines().count(), 2);
        // Cut: ops past the cap were not recorded.
        if let Some(log) = t.reps[0].phases[0].op_log.as_mut() {
            log.dropped = 5;
        }
        assert_eq!(
            log_files(&logs, std::slice::from_ref(&t)),
            Err(LogError::Cut { job: "j".into(), kept: 2, dropped: 5 })
        );
        // Some ops of an engine that submits apart not timed apart: no slat or clat file.
        let mut mixed = records(true);
        mixed.chunks[1][0].slat_nanos = crate::model::oplog::NOT_APART;
        t.reps[0].phases[0].op_log = Some(mixed);
        let slat = per_io(&[(LogKind::Slat, "p_slat.1.log")], false, 0, false);
        assert_eq!(
            log_files(&slat, std::slice::from_ref(&t)),
            Err(LogError::NoSplit { job: "j".into() })
        );
        assert!(log_files(&logs, std::slice::from_ref(&t)).is_ok());
        // Averaged with log_offset=1: `time, value, ddir, 0, 0, 0`.
        let mut avg = per_io(&[(LogKind::Iops, "p_iops.1.log")], true, 0, false);
        avg[0].avg_msec = Some(500);
        let files = log_files(&avg, &[one_test(series(), 2_000_000_000)]).expect("files");
        assert!(
            files[0].1.starts_with("500, 200, 0, 0, 0, 0\n500, 100, 1, 0, 0, 0\n"),
            "{}",
            files[0].1
        );
    }

    /// A test `j` whose one timed phase lasted `wall` with `series`.
    fn one_test(series: PhaseSeries, wall: u64) -> TestResult {
        let phase = PhaseResult {
            timed: true,
            wall_nanos: wall,
            series: Some(series),
            ..PhaseResult::default()
        };
        let rep = crate::model::result::RepResult {
            complete: true,
            phases: vec![phase],
            ..Default::default()
        };
        TestResult {
            id: "j".into(),
            name: "j".into(),
            description: String::new(),
            threads: 1,
            status: crate::model::result::TestStatus::Ok,
            reps: vec![rep],
            complete_reps: 1,
            figure: Default::default(),
            summary: None,
            warnings: Vec::new(),
        }
    }

    /// A series at another interval than log_avg_msec is refused, not written at the wrong
    /// window; a job without results names itself.
    #[test]
    fn a_series_at_another_interval_is_refused() {
        let logs = averaged(250, LogKind::Iops, "p_iops.1.log");
        assert_eq!(
            log_files(&logs, &[]),
            Err(LogError::NoSeries { job: "j".into(), test: "j".into() })
        );
        let test = one_test(series(), 2_000_000_000);
        assert_eq!(
            log_files(&logs, std::slice::from_ref(&test)),
            Err(LogError::Interval { job: "j".into(), want_ms: 250, got_ms: 500.0 })
        );
        let mut ok = logs.clone();
        ok[0].avg_msec = Some(500);
        let files = log_files(&ok, std::slice::from_ref(&test)).expect("files");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "p_iops.1.log");
        assert!(files[0].1.starts_with("500, 200, 0, 0, 0\n"));
    }
}
