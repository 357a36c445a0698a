//! fio's averaged log files (`write_bw_log`, `write_iops_log`, `write_lat_log` with
//! `log_avg_msec`), made from a job's timed-phase series ([`PhaseSeries`]) after the run:
//! `fsbench fio` writes them where fio would, so scripts that read fio's logs read fsbench's.
//!
//! fio 3.33's format (`iolog.c`, checked against its files): one line per window and direction
//! that moved data, `TIME_MS, VALUE, DDIR, BS, OFFSET`, with TIME_MS the window's end since the
//! job started, VALUE the window's KiB/s (`bytes * 1000 / ms / 1024`, whole) or I/Os per second
//! (`ios * 1000 / ms`), DDIR 0 for reads and 1 for writes, and BS and OFFSET 0 (averaged lines
//! carry neither). A window in which a direction moved nothing has no line for it, and fio
//! writes no bandwidth or IOPS line for the window the job ends in: here only windows that end
//! by the phase's end are written.
//!
//! The latency logs (`_lat`, `_clat`; `stat.c`'s `add_log_sample` and `__add_stat_to_log`)
//! carry the mean latency of the window's ops of each direction in ns, rounded half up (fio
//! adds 0.5 to its running mean and truncates; here the sum over the count, in whole numbers).
//! fio closes a latency window when an op completes after its end, and the last one, partial,
//! when the job ends: here every window with ops in a direction has its line, the last one
//! stamped with the phase's end. A `_slat` file is a synchronous engine's, which fio writes
//! empty (no submission step); the translation refuses it for the others.

use crate::fio::{JobLogs, LogKind};
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

/// The log files of every request in `logs`, from `tests` (a run's results): each file's name
/// and text, in the requests' order.
pub fn log_files(
    logs: &[JobLogs],
    tests: &[TestResult],
) -> Result<Vec<(String, String)>, LogError> {
    let mut out = Vec::new();
    for l in logs {
        let no_series = || LogError::NoSeries { job: l.job.clone(), test: l.test_id.clone() };
        let test = tests.iter().find(|t| t.id == l.test_id).ok_or_else(no_series)?;
        let phase = timed_phase(test).ok_or_else(no_series)?;
        let series = phase.series.as_ref().ok_or_else(no_series)?;
        if series.interval_nanos != l.avg_msec * 1_000_000 {
            return Err(LogError::Interval {
                job: l.job.clone(),
                want_ms: l.avg_msec,
                got_ms: series.interval_nanos as f64 / 1e6,
            });
        }
        for (kind, name) in &l.files {
            if matches!(kind, LogKind::Lat | LogKind::Clat) && !has_lat_sums(series) {
                return Err(LogError::NoLatency { job: l.job.clone() });
            }
            out.push((name.clone(), render(series, *kind, phase.wall_nanos)));
        }
    }
    Ok(out)
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

/// One log's text: a line per window that ended by `wall_nanos` and direction with I/O (a
/// latency log: per window and direction with I/O, the last one partial).
pub fn render(series: &PhaseSeries, kind: LogKind, wall_nanos: u64) -> String {
    match kind {
        LogKind::Bw | LogKind::Iops => {}
        LogKind::Lat | LogKind::Clat => return render_lat(series, wall_nanos),
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

/// A latency log's text: per window and direction with ops, the window's end in ms and the
/// mean latency of its ops in ns. The last, partial window ends with the phase, and is stamped
/// at least a ms after its start, so that stamps increase (the phase's wall time is taken from
/// the workers' release a little after the series' origin: a phase that ends a fraction of a
/// ms into a window would otherwise stamp it as the window before).
fn render_lat(series: &PhaseSeries, wall_nanos: u64) -> String {
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
            if let Some(mean) = series.mean_lat_nanos(i, write) {
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
        let logs = vec![JobLogs {
            job: "j".into(),
            test_id: "j".into(),
            avg_msec: 500,
            files: vec![(LogKind::Lat, "p_lat.1.log".into())],
            file: "t.fio".into(),
            line: 3,
        }];
        let test = |series: PhaseSeries| one_test(series, wall);
        assert_eq!(
            log_files(&logs, &[test(series())]),
            Err(LogError::NoLatency { job: "j".into() })
        );
        let files = log_files(&logs, &[test(s)]).expect("files");
        assert_eq!(files, vec![("p_lat.1.log".to_string(), lat)]);
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
        let logs = vec![JobLogs {
            job: "j".into(),
            test_id: "j".into(),
            avg_msec: 250,
            files: vec![(LogKind::Iops, "p_iops.1.log".into())],
            file: "t.fio".into(),
            line: 3,
        }];
        assert_eq!(
            log_files(&logs, &[]),
            Err(LogError::NoSeries { job: "j".into(), test: "j".into() })
        );
        let phase = PhaseResult {
            timed: true,
            wall_nanos: 2_000_000_000,
            series: Some(series()),
            ..PhaseResult::default()
        };
        let rep = crate::model::result::RepResult {
            complete: true,
            phases: vec![phase],
            ..Default::default()
        };
        let test = TestResult {
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
        };
        assert_eq!(
            log_files(&logs, std::slice::from_ref(&test)),
            Err(LogError::Interval { job: "j".into(), want_ms: 250, got_ms: 500.0 })
        );
        let mut ok = logs.clone();
        ok[0].avg_msec = 500;
        let files = log_files(&ok, std::slice::from_ref(&test)).expect("files");
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "p_iops.1.log");
        assert!(files[0].1.starts_with("500, 200, 0, 0, 0\n"));
    }
}
