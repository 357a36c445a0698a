//! The terminal table: one row per test, the figures a person compares first; notes (failures,
//! warnings, cache preconditions not met) listed under it.

use super::units::{nanos, sig3};
use super::Exporter;
use crate::result::{RunReport, TestStatus};
use crate::workload::{CacheReq, OpKind};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

/// Human-readable table and notes.
pub struct TableExporter;

impl Exporter for TableExporter {
    fn serialize(&self, report: &RunReport) -> anyhow::Result<Vec<u8>> {
        Ok(render(report).into_bytes())
    }
}

/// Render the report as text.
pub fn render(report: &RunReport) -> String {
    let multi = report.repeat > 1;
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    if table.width().is_some_and(|w| w < 40) {
        // A terminal that reports no usable width (mpirun gives ranks a pty of width 0).
        table.set_width(150);
    }
    let mut header = vec!["test", "name", "MiB/s"];
    if multi {
        header.extend(["CV", "95% CI"]);
    }
    header.extend([
        "ops/s",
        "op",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "sync p99",
        "CPU us/sy s",
        "%core/thr",
        "resident",
    ]);
    table.set_header(header);
    let mut notes: Vec<String> = Vec::new();
    for t in &report.tests {
        let mut row: Vec<Cell> = vec![Cell::new(&t.id), Cell::new(&t.name)];
        let r = t.median_rep();
        let num = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
        match (&t.status, r) {
            (TestStatus::Ok, Some(r)) | (TestStatus::Interrupted, Some(r)) => {
                let mark = if t.status == TestStatus::Interrupted { " (partial)" } else { "" };
                let mib = t
                    .summary
                    .as_ref()
                    .filter(|_| mark.is_empty())
                    .map(|s| s.median)
                    .unwrap_or(r.mib_per_s);
                row.push(num(format!("{}{mark}", sig3(mib))));
                if multi {
                    let s = t.summary.as_ref();
                    row.push(num(s.map(|s| format!("{:.1}%", s.cv * 100.0)).unwrap_or_default()));
                    row.push(num(s
                        .and_then(|s| Some(format!("{}–{}", sig3(s.ci95_low?), sig3(s.ci95_high?))))
                        .unwrap_or_default()));
                }
                let ops = t
                    .summary
                    .as_ref()
                    .filter(|_| mark.is_empty())
                    .map(|s| s.ops_per_s_median)
                    .unwrap_or(r.ops_per_s);
                row.push(num(sig3(ops)));
                match r.main_op() {
                    Some(m) => {
                        row.push(Cell::new(m.op.name()));
                        for v in [m.p50_nanos, m.p90_nanos, m.p99_nanos, m.p999_nanos, m.max_nanos]
                        {
                            row.push(num(nanos(v)));
                        }
                    }
                    None => row.extend((0..6).map(|_| Cell::new(""))),
                }
                let sync = r.latency_of(OpKind::Fsync).or(r.latency_of(OpKind::Fdatasync));
                row.push(num(sync
                    .map(|s| format!("{} ×{}", nanos(s.p99_nanos), s.count))
                    .unwrap_or_else(|| "-".into())));
                row.push(num(format!(
                    "{:.2}/{:.2}",
                    r.cpu_user_nanos as f64 / 1e9,
                    r.cpu_sys_nanos as f64 / 1e9
                )));
                row.push(num(format!("{:.0}%", r.cpu_pct_per_thread)));
                row.push(num(residency_cell(r)));
            }
            (TestStatus::Failed { reason }, _) => {
                row.push(Cell::new("FAILED"));
                notes.push(format!("test {} failed: {reason}", t.id));
            }
            (TestStatus::Skipped { reason }, _) => {
                row.push(Cell::new("skipped"));
                notes.push(format!("test {} skipped: {reason}", t.id));
            }
            (TestStatus::Interrupted, None) => {
                row.push(Cell::new("interrupted"));
            }
            (TestStatus::Ok, None) => row.push(Cell::new("-")),
        }
        table.add_row(row);
        // Throughput against fill (aging phases): one note per fill phase.
        for p in r.map(|r| r.phases.iter()).into_iter().flatten() {
            if let Some(series) = p.fill_series.as_ref().filter(|s| !s.is_empty()) {
                let steps: Vec<String> = series
                    .iter()
                    .map(|f| {
                        format!(
                            "{:.0}%: {} MiB/s {} files/s",
                            f.fill * 100.0,
                            sig3(f.mib_per_s),
                            sig3(f.files_per_s)
                        )
                    })
                    .collect();
                let end = p.ended_by.as_deref().unwrap_or("");
                notes.push(format!(
                    "test {} phase {} (throughput vs fill; {end}): {}",
                    t.id,
                    p.name,
                    steps.join(", ")
                ));
            }
        }
        for w in &t.warnings {
            notes.push(format!("test {}: {w}", t.id));
        }
    }
    let mut out = format!(
        "fsbench {} on {} ({}{}), suite {}, scale {}, {} repetition{}\n",
        report.fsbench_version,
        report.target.label,
        if report.target.fs_type.is_empty() { "unknown fs" } else { &report.target.fs_type },
        if report.target.devices.is_empty() {
            String::new()
        } else {
            format!(" on {}", report.target.devices.join(","))
        },
        report.suite,
        report.scale,
        report.repeat,
        if report.repeat == 1 { "" } else { "s" },
    );
    out.push_str(&table.to_string());
    out.push('\n');
    out.push_str("MiB/s: bytes read+written in the timed phases / their wall time (includes open, syncs, close). Latency columns: the main op");
    if multi {
        out.push_str(";\nMiB/s is the median of the repetitions; CI: 95% confidence interval of the mean (Student's t)");
    }
    out.push_str(". resident: page-cache share of the file before the timed phase (✗: precondition not met).\n");
    if report.interrupted {
        notes.push("run interrupted: figures are what was measured before the stop".into());
    }
    if !notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}

fn residency_cell(r: &crate::result::RepResult) -> String {
    let Some(p) = r.phases.iter().find(|p| p.timed) else {
        return String::new();
    };
    let c = &p.cache;
    let word = match c.required {
        CacheReq::Cached => "cached ",
        CacheReq::Uncached => "uncached ",
        CacheReq::Any => "",
    };
    format!("{word}{:.0}%{}", c.resident_fraction * 100.0, if c.met { "" } else { " ✗" })
}
