//! CSV: one row per test, median repetition for per-rep columns. Units are in the headers;
//! `figure` names the figure of merit (`mib_per_s` or `ops_per_s`) the `figure_*` columns are of.
//!
//! A test with roles (`[[test.role]]`) is followed by a row per role of its median repetition:
//! its identifying columns and the `role*` columns, the test's figure columns empty (so a sum
//! over a column never counts a role as a test); a test's own row has the `role*` columns empty.

use super::Exporter;
use crate::model::job::OpKind;
use crate::model::report::Report;
use crate::model::result::{RunReport, TestResult, TestStatus};

/// CSV with a header row.
pub struct CsvExporter;

const HEADER: &[&str] = &[
    "target",
    "test",
    "name",
    "status",
    "reason",
    "threads",
    "reps",
    "mib_per_s_median",
    "mib_per_s_min",
    "mib_per_s_max",
    "mib_per_s_cv",
    "mib_per_s_ci95_low",
    "mib_per_s_ci95_high",
    "ops_per_s_median",
    "figure",
    "figure_median",
    "figure_cv",
    "figure_ci95_low",
    "figure_ci95_high",
    "elapsed_s_median",
    "main_op",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "fsync_count",
    "fsync_p99_ns",
    "cpu_user_s",
    "cpu_sys_s",
    "cpu_pct_per_thread",
    "cache_required",
    "resident_fraction",
    "cache_met",
    "wall_s",
    "bytes",
    "device_read_bytes",
    "device_write_bytes",
    "engine",
    "iodepth",
    "direct",
    "device_wide",
];

/// The columns of a role's row, after every other column ([`role_cells`]).
pub const ROLE_HEADER: &[&str] = &[
    "role",
    "role_mib_per_s",
    "role_op",
    "role_lat_p50_ns",
    "role_lat_p99_ns",
    "role_lat_p999_ns",
    "role_sync_p99_ns",
];

/// The role rows' cells of test `t`: one per role of its median repetition
/// ([`TestResult::roles`]), in [`ROLE_HEADER`]'s order.
pub fn role_cells(t: &TestResult) -> Vec<Vec<String>> {
    t.roles()
        .into_iter()
        .map(|(phase, r)| {
            let main = r.main_op();
            let ns = |f: fn(&crate::model::result::OpLatency) -> u64| {
                main.map(|l| f(l).to_string()).unwrap_or_default()
            };
            vec![
                super::roles::role_name(t, phase, r),
                format!("{:.6}", r.mib_per_s),
                main.map(|l| l.op.name().to_string()).unwrap_or_default(),
                ns(|l| l.p50_nanos),
                ns(|l| l.p99_nanos),
                ns(|l| l.p999_nanos),
                r.sync_latency().map(|l| l.p99_nanos.to_string()).unwrap_or_default(),
            ]
        })
        .collect()
}

impl Exporter for CsvExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        match super::single(report) {
            Some(run) => run_csv(run),
            None => super::compare::csv(report),
        }
    }
}

/// One row per test of one target.
fn run_csv(report: &RunReport) -> anyhow::Result<Vec<u8>> {
    {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(HEADER.iter().chain(ROLE_HEADER))?;
        for t in &report.tests {
            let (status, reason) = match &t.status {
                TestStatus::Ok => ("ok", String::new()),
                TestStatus::Failed { reason } => ("failed", reason.to_string()),
                TestStatus::Interrupted => ("interrupted", String::new()),
                TestStatus::Skipped { reason } => ("skipped", reason.clone()),
                TestStatus::NotMet { reason } => ("not_met", reason.clone()),
            };
            let s = t.summary.as_ref();
            let r = t.median_rep();
            let main = r.and_then(|r| r.main_op());
            let sync =
                r.and_then(|r| r.latency_of(OpKind::Fsync).or(r.latency_of(OpKind::Fdatasync)));
            let first_timed = r.and_then(|r| r.phases.iter().find(|p| p.timed));
            let dev = r.map(|r| {
                r.phases
                    .iter()
                    .filter(|p| p.timed)
                    .filter_map(|p| p.device.as_ref())
                    .fold((0u64, 0u64), |(a, b), d| (a + d.read_bytes, b + d.write_bytes))
            });
            let opt = |x: Option<f64>| x.map(|v| format!("{v:.6}")).unwrap_or_default();
            let row: Vec<String> = vec![
                report.target.label.clone(),
                t.id.clone(),
                t.name.clone(),
                status.into(),
                reason,
                t.threads.to_string(),
                t.reps.len().to_string(),
                opt(s.map(|s| s.mib_per_s.median)),
                opt(s.map(|s| s.mib_per_s.min)),
                opt(s.map(|s| s.mib_per_s.max)),
                opt(s.map(|s| s.mib_per_s.cv)),
                opt(s.and_then(|s| s.mib_per_s.ci95_low)),
                opt(s.and_then(|s| s.mib_per_s.ci95_high)),
                opt(s.map(|s| s.ops_per_s.median)),
                t.figure.key().into(),
                opt(s.map(|s| s.merit().median)),
                opt(s.map(|s| s.merit().cv)),
                opt(s.and_then(|s| s.merit().ci95_low)),
                opt(s.and_then(|s| s.merit().ci95_high)),
                opt(s.map(|s| s.elapsed_s.median)),
                main.map(|m| m.op.name().to_string()).unwrap_or_default(),
                main.map(|m| m.p50_nanos.to_string()).unwrap_or_default(),
                main.map(|m| m.p90_nanos.to_string()).unwrap_or_default(),
                main.map(|m| m.p99_nanos.to_string()).unwrap_or_default(),
                main.map(|m| m.p999_nanos.to_string()).unwrap_or_default(),
                main.map(|m| m.max_nanos.to_string()).unwrap_or_default(),
                sync.map(|m| m.count.to_string()).unwrap_or_default(),
                sync.map(|m| m.p99_nanos.to_string()).unwrap_or_default(),
                opt(r.map(|r| r.cpu_user_nanos as f64 / 1e9)),
                opt(r.map(|r| r.cpu_sys_nanos as f64 / 1e9)),
                opt(r.map(|r| r.cpu_pct_per_thread)),
                first_timed
                    .map(|p| format!("{:?}", p.cache.required).to_lowercase())
                    .unwrap_or_default(),
                opt(first_timed.map(|p| p.cache.resident_fraction)),
                first_timed.map(|p| p.cache.met.to_string()).unwrap_or_default(),
                opt(r.map(|r| r.wall_nanos as f64 / 1e9)),
                r.map(|r| r.bytes.to_string()).unwrap_or_default(),
                dev.map(|d| d.0.to_string()).unwrap_or_default(),
                dev.map(|d| d.1.to_string()).unwrap_or_default(),
                first_timed.map(|p| p.engine.clone()).unwrap_or_default(),
                first_timed.map(|p| p.iodepth.to_string()).unwrap_or_default(),
                first_timed.map(|p| p.direct.to_string()).unwrap_or_default(),
                // The device columns count other processes' I/O too (a user's directory on a
                // device fsbench did not make).
                r.map(|r| r.phases.iter().any(|p| p.device.as_ref().is_some_and(|d| d.shared)))
                    .map(|b| b.to_string())
                    .unwrap_or_default(),
            ];
            let mut row = row;
            row.extend(ROLE_HEADER.iter().map(|_| String::new()));
            w.write_record(&row)?;
            for cells in role_cells(t) {
                let mut role_row = vec![report.target.label.clone(), t.id.clone(), t.name.clone()];
                role_row.resize(HEADER.len(), String::new());
                role_row.extend(cells);
                w.write_record(&role_row)?;
            }
        }
        Ok(w.into_inner()?)
    }
}
