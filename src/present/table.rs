//! The terminal table: one row per test, the figures a person compares first; notes (failures,
//! warnings, cache preconditions not met) listed under it.

use super::frame::{self, Grid, Kind};
use super::Exporter;
use crate::model::job::{CacheReq, OpKind};
use crate::model::report::Report;
use crate::model::result::{Figure, RepResult, RunReport, TestResult, TestStatus};
use crate::model::units::{nanos, sig3};

/// Human-readable table and notes; for a comparison the head-to-head table.
pub struct TableExporter {
    /// A comparison: also the observed facts per test and configuration.
    pub details: bool,
    /// Columns to lay the text out for.
    pub width: usize,
}

impl Exporter for TableExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        let mut out = match super::single(report) {
            Some(run) => {
                let mut out = render(run, self.width);
                if self.details {
                    out.push_str(&details(run, self.width));
                }
                // A testbed made for the run: how it was made and mounted, options in effect.
                if let Some(e) = report.configs.first().and_then(|c| c.env.as_ref()) {
                    let line = format!("Configuration: {}", e.summary_line());
                    out.push('\n');
                    out.push_str(&frame::wrap(&line, self.width, "", "  "));
                }
                out
            }
            None => super::compare::render(report, self.details, self.width),
        };
        // Where the time went, last.
        if let Some(t) = &report.time {
            out.push('\n');
            out.push_str(&frame::wrap(&super::time::line(t), self.width, "", "  "));
        }
        Ok(out.into_bytes())
    }
}

/// Render the report as text, laid out for `width` columns.
pub fn render(report: &RunReport, width: usize) -> String {
    let multi = report.repeat > 1;
    let mut grid = columns(multi);
    let mut notes: Vec<String> = Vec::new();
    for t in &report.tests {
        grid.row(test_row(t, multi, &mut notes));
        test_notes(t, &mut notes);
    }
    let mut out = frame::wrap(&headline(report), width, "", "  ");
    out.push_str(&grid.render(width));
    out.push_str(&frame::wrap(&legend(report, multi), width, "", ""));
    let label = report.target.label.as_str();
    out.push_str(&super::curve::section(&[(label, report.tests.as_slice())], &[], width));
    out.push_str(&super::roles::section(
        std::iter::once((report.target.label.as_str(), report.tests.as_slice())),
        width,
    ));
    notes.extend(run_notes(report));
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(&frame::bullets("Notes:", &notes, width));
    }
    out
}

/// The line above the table: version, target, suite, scale and repetitions.
fn headline(report: &RunReport) -> String {
    format!(
        "fsbench {} on {} ({}{}), suite {}, scale {}, {} repetition{}",
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
    )
}

/// The table's columns: throughput first (a test's name and figures), then latency, then CPU
/// and cache; a table wider than the terminal splits in that order.
fn columns(multi: bool) -> Grid {
    let mut g = Grid::new();
    g.column("test", Kind::Key).column("name", Kind::Words);
    for h in ["MiB/s", "ops/s", "s"] {
        g.column(h, Kind::Figure);
    }
    if multi {
        g.column("CV", Kind::Figure).column("95% CI", Kind::Figure);
    }
    // The op and its percentiles stay together.
    g.column("op", Kind::Text);
    for h in ["p50", "p90", "p99", "p99.9", "max"] {
        g.glued(h, Kind::Figure);
    }
    for h in ["sync p99", "CPU us/sy s", "%core/thr", "resident"] {
        g.column(h, Kind::Figure);
    }
    g
}

/// A test's row; a failed or skipped test's reason goes to `notes`.
fn test_row(t: &TestResult, multi: bool, notes: &mut Vec<String>) -> Vec<String> {
    // The engine, depth and O_DIRECT beside the name when not psync at depth 1, buffered.
    let io = t.timed_phase().map(|p| p.io_label());
    let name = match io {
        Some(l) if !l.is_empty() => format!("{} [{l}]", t.name),
        _ => t.name.clone(),
    };
    // Work done more than once per repetition (--min-time) is said where the test is named.
    let name = format!("{name}{}", t.passes_words());
    let mut row = vec![t.id.clone(), name];
    match (&t.status, t.median_rep()) {
        // No repetition met its precondition: no figure (the note says why).
        (TestStatus::NotMet { .. }, _) if t.summary.is_none() => row.push(NOT_MET.into()),
        (TestStatus::Ok, Some(r))
        | (TestStatus::Interrupted, Some(r))
        | (TestStatus::NotMet { .. }, Some(r)) => {
            row.extend(figure_cells(t, r, multi));
        }
        (TestStatus::Failed { reason }, _) => {
            row.push("FAILED".into());
            notes.push(format!("test {} failed: {reason}", t.id));
        }
        (TestStatus::Skipped { reason }, _) => {
            row.push("skipped".into());
            notes.push(format!("test {} skipped: {reason}", t.id));
        }
        (TestStatus::Interrupted, None) => row.push("interrupted".into()),
        (TestStatus::Ok, None) | (TestStatus::NotMet { .. }, None) => row.push("-".into()),
    }
    row
}

/// The cell of a test none of whose repetitions met its precondition.
pub const NOT_MET: &str = "NOT MET";

/// The mark on the figure of a test some of whose repetitions missed their precondition (they
/// are left out of it; the test's note says which and how many).
pub const NOT_MET_MARK: &str = " (not met)";

/// The figures of a test that ran, from `r`, its median repetition.
fn figure_cells(t: &TestResult, r: &RepResult, multi: bool) -> Vec<String> {
    let mut row = Vec::new();
    let mark = match t.status {
        TestStatus::Interrupted => " (partial)",
        TestStatus::NotMet { .. } => NOT_MET_MARK,
        _ => "",
    };
    // Figures of the median repetition: from the summary (over the repetitions that met their
    // preconditions), or the partial repetition.
    let s = t.summary.as_ref().filter(|_| t.status != TestStatus::Interrupted);
    let mib = s.map(|s| s.mib_per_s.median).unwrap_or(r.mib_per_s);
    let ops = s.map(|s| s.ops_per_s.median).unwrap_or(r.ops_per_s);
    let secs = s.map(|s| s.elapsed_s.median).unwrap_or(r.wall_nanos as f64 / 1e9);
    // The figure of merit carries the mark (and, below, the CV and CI).
    let (mib_mark, ops_mark) = match t.figure {
        Figure::MibPerS => (mark, ""),
        Figure::OpsPerS => ("", mark),
    };
    // A file-set test that moved no bytes has no throughput to show, not 0.000.
    let moved = t.figure == Figure::MibPerS || mib > 0.0;
    row.push(if moved { format!("{}{mib_mark}", sig3(mib)) } else { "-".into() });
    row.push(format!("{}{ops_mark}", sig3(ops)));
    row.push(sig3(secs));
    if multi {
        let m = t.summary.as_ref().map(|s| s.merit());
        row.push(m.map(|m| format!("{:.1}%", m.cv * 100.0)).unwrap_or_default());
        row.push(
            m.and_then(|m| {
                let (lo, hi) = (m.ci95_low?, m.ci95_high?);
                Some(format!("{}–{} {}", sig3(lo), sig3(hi), t.figure.unit()))
            })
            .unwrap_or_default(),
        );
    }
    match r.main_op() {
        Some(m) => {
            row.push(m.op.name().to_string());
            for v in [m.p50_nanos, m.p90_nanos, m.p99_nanos, m.p999_nanos, m.max_nanos] {
                row.push(nanos(v));
            }
        }
        None => row.extend((0..6).map(|_| String::new())),
    }
    let sync = r.latency_of(OpKind::Fsync).or(r.latency_of(OpKind::Fdatasync));
    row.push(
        sync.map(|s| format!("{} ×{}", nanos(s.p99_nanos), s.count)).unwrap_or_else(|| "-".into()),
    );
    row.push(format!("{:.2}/{:.2}", r.cpu_user_nanos as f64 / 1e9, r.cpu_sys_nanos as f64 / 1e9));
    // A FUSE filesystem works in its daemon: its CPU (% of one core) beside.
    let daemon = crate::model::facts::daemon_cpu_nanos(r)
        .filter(|_| r.wall_nanos > 0)
        .map(|d| format!(" +{:.0}% daemon", d as f64 * 100.0 / r.wall_nanos as f64))
        .unwrap_or_default();
    row.push(format!("{:.0}%{daemon}", r.cpu_pct_per_thread));
    row.push(residency_cell(r));
    row
}

/// A test's notes: throughput against fill, its warnings, each timed phase's time.
fn test_notes(t: &TestResult, notes: &mut Vec<String>) {
    let r = t.median_rep();
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
    notes.extend(super::series::load_notes(t));
    // Each timed phase's elapsed time, when a test has several.
    if let Some(r) = r.filter(|r| r.phases.iter().filter(|p| p.timed).count() > 1) {
        let each: Vec<String> = r
            .phases
            .iter()
            .filter(|p| p.timed)
            .map(|p| format!("{} {} s", p.name, sig3(p.wall_nanos as f64 / 1e9)))
            .collect();
        notes.push(format!("test {} timed phases (median repetition): {}", t.id, each.join(", ")));
    }
}

/// What the columns mean, one paragraph (and one on a FUSE daemon's CPU when shown).
fn legend(report: &RunReport, multi: bool) -> String {
    let mut out = String::from("MiB/s: bytes read+written in the timed phases / their wall time (includes open, syncs, close); ops/s: read/write operations per second, file-set operations (create, stat, unlink, ...) for file-set tests; s: elapsed seconds of the timed phases. Tests are ranked on MiB/s, file-set tests on ops/s. Latency columns: the main op");
    if multi {
        out.push_str("; figures are medians of the repetitions; CV and CI (95% confidence interval of the geometric mean: Student's t on the logs) are of the figure the test is ranked on");
    }
    out.push_str(". resident: page-cache share of the file before the timed phase (✗: precondition not met).\n");
    if report
        .tests
        .iter()
        .filter_map(|t| t.median_rep())
        .any(|r| crate::model::facts::daemon_cpu_nanos(r).is_some())
    {
        out.push_str("%core/thr: +N% daemon is the CPU of the filesystem's FUSE daemon (zfs-fuse) over the timed phases, % of one core: the work an in-kernel filesystem does in the threads' system time.\n");
    }
    out
}

/// The run's notes under the table: device-wide counters, a first repetition that stands out,
/// the machine, compression, an interruption.
fn run_notes(report: &RunReport) -> Vec<String> {
    let mut notes = Vec::new();
    if report
        .tests
        .iter()
        .flat_map(|t| t.reps.iter().flat_map(|r| r.phases.iter()))
        .any(|p| p.device.as_ref().is_some_and(|d| d.shared))
    {
        notes.push(format!(
            "device counters of {} are device-wide: fsbench did not make this device, so they \
             include other processes' I/O",
            if report.target.devices.is_empty() {
                "the target's device".to_string()
            } else {
                report.target.devices.join(",")
            }
        ));
    }
    notes.extend(super::reps::first_rep_note(None, &report.tests));
    notes.extend(super::host::notes(&report.host, report.tests.iter()));
    notes.extend(crate::observe::compress::words(&report.tests));
    if report.interrupted {
        notes.push("run interrupted: figures are what was measured before the stop".into());
    }
    notes
}

/// `run --details`: the observed facts of each test's median repetition and the figure of every
/// repetition in the order run.
pub fn details(report: &RunReport, width: usize) -> String {
    let facts: Vec<(&str, crate::model::facts::Facts)> = report
        .tests
        .iter()
        .filter_map(|t| Some((t.id.as_str(), crate::model::facts::of(t.median_rep()?, t.threads))))
        .collect();
    let rows: Vec<(&str, &str, &crate::model::facts::Facts)> =
        facts.iter().map(|(id, f)| (*id, report.target.label.as_str(), f)).collect();
    let mut out = super::compare::details_table(&rows, width);
    out.push_str(&super::compare::verify_lines(
        &[(report.target.label.as_str(), report.tests.as_slice())],
        width,
    ));
    out.push_str(&super::reps::run_section(&report.tests, width));
    out.push_str(&super::series::details_section(&[("", report.tests.as_slice())], width));
    out
}

fn residency_cell(r: &crate::model::result::RepResult) -> String {
    let Some(p) = r.phases.iter().find(|p| p.timed) else {
        return String::new();
    };
    let c = &p.cache;
    // Nothing to be resident: the phase creates its files, or (no requirement) it moves no
    // data (unlink, stat, empty files).
    let moved: u64 =
        r.phases.iter().filter(|p| p.timed).map(|p| p.bytes_read + p.bytes_written).sum();
    if c.required == CacheReq::Any && (c.method == crate::model::result::CREATED || moved == 0) {
        return "-".into();
    }
    let word = match c.required {
        CacheReq::Cached => "cached ",
        CacheReq::Uncached => "uncached ",
        CacheReq::Any => "",
        CacheReq::Direct => "direct ",
    };
    format!("{word}{:.0}%{}", c.resident_fraction * 100.0, if c.met { "" } else { " ✗" })
}
