//! fio's bandwidth and IOPS samples: `bwavgtime` and `iopsavgtime` (ms, 500 by default; fio's
//! `bw_avg_time` and `iops_avg_time`), the window of each sample behind fio's `bw_min`,
//! `bw_mean`, ..., `iops_samples`. fsbench tells them from the timed phase's series
//! ([`crate::model::series::RateSamples`]), whose interval `fsbench fio` sets for the run, so
//! this module decides one window for the run and refuses what one series cannot give, with
//! the option's line:
//! - `bwavgtime` and `iopsavgtime` that differ (fio keeps two clocks; the series has one);
//! - jobs whose windows differ: one run has one series interval;
//! - with a log (`log_avg_msec`, which sets the series interval, [`super::logs`]): a window
//!   given that is not a whole multiple of `log_avg_msec`. A multiple is exact: its samples
//!   add up that many log windows (fio keeps the two apart; fsbench resamples the log's
//!   series). fio's default (500) beside a log that does not divide it is not refused (such
//!   files ran before fsbench reported samples): the samples are of the log's windows then,
//!   and `fsbench fio` says so for the job.

use super::logs::JobLogs;
use super::{FioError, Job};
use crate::model::series::MIN_INTERVAL_NANOS;

/// fio's default `bw_avg_time` and `iops_avg_time`, ms.
pub const DEFAULT_WINDOW_MS: u64 = 500;

/// The run's sample window in ms: every job's `bwavgtime` (= its `iopsavgtime`), or
/// [`DEFAULT_WINDOW_MS`]. Problems go to `errors`.
pub(super) fn plan(jobs: &[Job], logs: &[JobLogs], errors: &mut Vec<FioError>) -> u64 {
    // (window, job name) of the first job that set it.
    let mut first: Option<(u64, &str)> = None;
    for job in jobs {
        let (bw, iops) = match (job.int("bwavgtime"), job.int("iopsavgtime")) {
            (Ok(b), Ok(i)) => (b, i),
            (b, i) => {
                errors.extend(b.err().into_iter().chain(i.err()));
                continue;
            }
        };
        // Given (else fio's default): only a given window is refused for a log's interval.
        let given = bw.is_some() || iops.is_some();
        let window = match (bw, iops) {
            (Some((b, _)), Some((i, line))) if b != i => {
                errors.push(job.err("iopsavgtime", line, format!("{i} differs from bwavgtime={b}: fsbench tells both samples from one series, at one interval; give the two the same value")));
                continue;
            }
            (Some((n, line)), _) | (None, Some((n, line))) => (n, line),
            (None, None) => (DEFAULT_WINDOW_MS, job.line("bwavgtime")),
        };
        let (ms, line) = window;
        let key = if bw.is_none() && iops.is_some() { "iopsavgtime" } else { "bwavgtime" };
        if ms * 1_000_000 < MIN_INTERVAL_NANOS {
            errors.push(job.err(
                key,
                line,
                format!(
                    "{ms} ms is below {} ms, the shortest series interval fsbench keeps",
                    MIN_INTERVAL_NANOS / 1_000_000
                ),
            ));
            continue;
        }
        match first {
            Some((w, by)) if w != ms => {
                errors.push(job.err(key, line, format!("{ms} differs from job `{by}`'s {w}: fsbench keeps one series interval per run; give every job the same bwavgtime")));
            }
            Some(_) => {}
            None => first = Some((ms, job.name.as_str())),
        }
        // fio's default beside a log that does not divide it (log_avg_msec=300, 1000): the
        // samples are of the log's windows, and `fsbench fio` says so for the job.
        let log = logs.iter().find_map(|l| l.avg_msec.filter(|a| ms % a != 0).map(|a| (a, l)));
        if let Some((avg, l)) = log.filter(|_| given) {
            errors.push(job.err(key, line, format!("{ms} is not a multiple of log_avg_msec={avg} (job `{}`), which sets the run's series interval: fsbench adds whole log windows up into each sample; give a multiple of it", l.job)));
        }
    }
    first.map_or(DEFAULT_WINDOW_MS, |(w, _)| w)
}

#[cfg(test)]
mod tests {
    use super::super::translate;

    fn env(_: &str) -> Option<String> {
        None
    }

    fn window(text: &str) -> u64 {
        translate(text, "t.fio", "t", &env).unwrap_or_else(|e| panic!("{e}")).sample_window_ms
    }

    fn err(text: &str) -> String {
        translate(text, "t.fio", "t", &env).unwrap_err().to_string()
    }

    const JOB: &str = "rw=randread\nbs=4k\nsize=1m\ntime_based\nruntime=2\n";

    #[test]
    fn the_window_is_bw_avg_time_or_fios_default() {
        assert_eq!(window(&format!("[a]\n{JOB}")), 500);
        assert_eq!(window(&format!("[a]\n{JOB}bwavgtime=250\n")), 250);
        assert_eq!(window(&format!("[a]\n{JOB}iopsavgtime=1000\n")), 1000);
        assert_eq!(window(&format!("[global]\nbwavgtime=200\niopsavgtime=200\n[a]\n{JOB}")), 200);
        // A log's window that divides it: its windows add up.
        assert_eq!(window(&format!("[a]\n{JOB}log_avg_msec=100\nwrite_iops_log=p\n")), 500);
    }

    #[test]
    fn windows_one_series_cannot_give_are_refused_with_their_line() {
        let e = err(&format!("[a]\n{JOB}bwavgtime=500\niopsavgtime=250\n"));
        assert!(e.contains("t.fio:8") && e.contains("differs from bwavgtime=500"), "{e}");
        let e = err(&format!("[a]\n{JOB}[b]\n{JOB}bwavgtime=250\n"));
        assert!(e.contains("t.fio:13") && e.contains("job `a`'s 500"), "{e}");
        let e = err(&format!("[a]\n{JOB}bwavgtime=5\n"));
        assert!(e.contains("t.fio:7") && e.contains("below 10 ms"), "{e}");
        let e = err(&format!("[a]\n{JOB}log_avg_msec=300\nwrite_bw_log=p\nbwavgtime=500\n"));
        assert!(
            e.contains("t.fio:9") && e.contains("500 is not a multiple of log_avg_msec=300"),
            "{e}"
        );
        // fio's default beside such a log is taken (the samples are the log's windows then).
        assert_eq!(window(&format!("[a]\n{JOB}log_avg_msec=300\nwrite_bw_log=p\n")), 500);
    }
}
