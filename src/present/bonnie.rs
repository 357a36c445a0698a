//! `--format bonnie`: bonnie++ 2.0's familiar two tables (block I/O and seeks; sequential and
//! random create/read/delete), printed from the same result type as every other format. It
//! reads the `bonnie` suite's tests (`block`, `files-seq`, `files-rand`) by id and their
//! phases by name; what is missing (another suite, `--test` left a test out, the per-character
//! phases fsbench does not implement) is left blank.
//!
//! Figures: block rates in KiB/s (bonnie++'s `k`; `m` = MiB/s above 99,999k), seeks and files
//! per second, %CP = CPU time (user + system) / wall time of the phase, as bonnie++ computes it.
//! The Latency rows hold the maximum latency of the phase's main operation (bonnie++ prints the
//! maximum too). Unlike bonnie++, fast phases are shown as numbers, not `+++++`. An `Elapsed`
//! line under each row gives each phase's wall time in seconds.
//!
//! Several configurations (`compare`) share one table pair, a row each named by the
//! configuration, as `bon_csv2html` puts several runs in one table; a single run's row is named
//! by the machine, as bonnie++ does.

use super::Exporter;
use crate::model::job::OpKind;
use crate::model::report::Report;
use crate::model::result::{PhaseResult, RunReport, TestResult, TestStatus};
use crate::model::units::fmt_bytes;
use crate::model::units::nanos;

/// bonnie++-style tables.
pub struct BonnieExporter;

impl Exporter for BonnieExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        Ok(match super::single(report) {
            // bonnie++ names a run by its machine.
            Some(run) => render(run),
            // One table pair comparing the configurations, a row each, named by the
            // configuration (as bon_csv2html puts several runs in one table).
            None => render_rows(
                &report.configs.iter().map(|c| (c.label.as_str(), &c.run)).collect::<Vec<_>>(),
            ),
        }
        .into_bytes())
    }
}

fn test<'a>(r: &'a RunReport, id: &str) -> Option<&'a TestResult> {
    r.tests.iter().find(|t| t.id == id)
}

fn phase<'a>(t: Option<&'a TestResult>, name: &str) -> Option<&'a PhaseResult> {
    t?.median_rep()?.phases.iter().find(|p| p.name == name)
}

fn secs(p: &PhaseResult) -> f64 {
    (p.wall_nanos as f64 / 1e9).max(1e-9)
}

fn cp(p: &PhaseResult) -> String {
    format!(
        "{:.0}",
        100.0 * (p.cpu_user_nanos + p.cpu_sys_nanos) as f64 / p.wall_nanos.max(1) as f64
    )
}

fn kib_rate(bytes: u64, p: &PhaseResult) -> String {
    let k = bytes as f64 / 1024.0 / secs(p);
    if k > 99_999.0 {
        format!("{:.0}m", k / 1024.0)
    } else {
        format!("{k:.0}k")
    }
}

/// A rate in bonnie++'s five columns: `k` (thousands) above 99,999.
fn per_sec(x: f64) -> String {
    if x > 99_999.0 {
        format!("{:.0}k", x / 1000.0)
    } else {
        format!("{x:.0}")
    }
}

/// `/sec %CP` cells of one phase, or blanks.
fn cells(p: Option<&PhaseResult>, rate: impl Fn(&PhaseResult) -> String) -> (String, String) {
    match p {
        Some(p) => (rate(p), cp(p)),
        None => (String::new(), String::new()),
    }
}

/// The mark on a phase's cell when some completed repetition of `t` missed that phase's
/// precondition (those are left out of the figure; with none left, the cell holds the mark
/// alone).
const UNMET: &str = "!";

/// Whether some completed repetition of `t` missed phase `name`'s precondition.
fn unmet(t: Option<&TestResult>, name: &str) -> bool {
    t.is_some_and(|t| {
        t.reps
            .iter()
            .filter(|r| r.complete)
            .flat_map(|r| r.phases.iter())
            .any(|p| p.name == name && p.timed && !p.cache.met)
    })
}

/// `c` with the [`UNMET`] mark on its figure when phase `name` of `t` missed its precondition.
fn marked(c: (String, String), t: Option<&TestResult>, name: &str) -> (String, String) {
    if unmet(t, name) {
        (format!("{}{UNMET}", c.0), c.1)
    } else {
        c
    }
}

/// Elapsed wall time of a phase, `1.23s`, or blank.
fn elapsed(p: Option<&PhaseResult>) -> String {
    p.map(|p| format!("{:.3}s", p.wall_nanos as f64 / 1e9)).unwrap_or_default()
}

fn max_latency(p: Option<&PhaseResult>, op: OpKind) -> String {
    p.and_then(|p| p.latency.iter().find(|l| l.op == op))
        .map(|l| nanos(l.max_nanos))
        .unwrap_or_default()
}

/// Render the two tables of one run, its row named by the machine (bonnie++'s default).
pub fn render(r: &RunReport) -> String {
    let host: String = r.host.hostname.chars().take(12).collect();
    render_rows(&[(host.as_str(), r)])
}

/// The tests a row is made of.
struct Row<'a> {
    name: &'a str,
    block: Option<&'a TestResult>,
    seq: Option<&'a TestResult>,
    rnd: Option<&'a TestResult>,
}

/// Render the two tables with one row (and its Latency and Elapsed lines) per (name, run).
pub fn render_rows(runs: &[(&str, &RunReport)]) -> String {
    let rows: Vec<Row<'_>> = runs
        .iter()
        .map(|(name, r)| Row {
            name,
            block: test(r, "block"),
            seq: test(r, "files-seq"),
            rnd: test(r, "files-rand"),
        })
        .collect();
    if rows.iter().all(|r| r.block.is_none() && r.seq.is_none() && r.rnd.is_none()) {
        return "No bonnie results in this report: run `--suite bonnie` for these tables.\n".into();
    }
    // The name column is as wide as the longest `name:size` (bonnie++ gives it 19).
    let sizes: Vec<String> = rows
        .iter()
        .map(|r| phase(r.block, "write").map(|p| fmt_bytes(p.bytes_written)).unwrap_or_default())
        .collect();
    let width = rows
        .iter()
        .zip(&sizes)
        // Room for `name:size` in the block table and `name files` in the file table.
        .map(|(r, z)| r.name.chars().count() + (1 + z.len()).max(6))
        .max()
        .unwrap_or(0)
        .max(19);
    let pad = " ".repeat(width - 19);
    let mut out = String::new();
    out.push_str(&format!(
        "Version  fsbench     {pad}------Sequential Output------ --Sequential Input- --Random-\n"
    ));
    out.push_str(&format!(
        "                    {pad}-Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n"
    ));
    out.push_str(&format!(
        "Name:Size etc        {pad}/sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n"
    ));
    for (row, size) in rows.iter().zip(&sizes) {
        out.push_str(&block_lines(row, size, width));
    }
    out.push_str(&format!(
        "Version  fsbench     {pad}------Sequential Create------ --------Random Create--------\n"
    ));
    out.push_str(&format!(
        "{:<width$} -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n",
        ""
    ));
    out.push_str(&format!(
        "{:<w$}files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n",
        "Name",
        w = width - 5
    ));
    for row in &rows {
        out.push_str(&file_lines(row, width));
    }
    out.push_str("Per Chr: not implemented by fsbench (blank). Read = stat(2), as bonnie++. files: units of 1024.\n");
    out.push_str("Seeks and file phases: operations per second (k: thousands, above 99,999); Elapsed: wall time of each phase\n(median repetition).\n");
    for row in &rows {
        let io: Vec<String> = [row.block, row.seq, row.rnd]
            .into_iter()
            .flatten()
            .filter_map(|t| Some(format!("{} {}", t.id, t.io_words()?)))
            .collect();
        if !io.is_empty() {
            let who = if rows.len() > 1 { format!("{}: ", row.name) } else { String::new() };
            out.push_str(&format!("{who}I/O (engine, depth, O_DIRECT): {}\n", io.join("; ")));
        }
    }
    let all = || rows.iter().flat_map(|row| [row.block, row.seq, row.rnd]).flatten();
    if all().any(|t| t.is_not_met()) {
        out.push_str(&format!("{UNMET}: a stated precondition (the phase's cache state) was not met in some repetitions, even after retrying; they are left out of the figure (blank: none met it)\n"));
    }
    for row in &rows {
        for t in [row.block, row.seq, row.rnd].into_iter().flatten() {
            let who = if rows.len() > 1 { format!("{}: ", row.name) } else { String::new() };
            match &t.status {
                TestStatus::Ok => {}
                TestStatus::NotMet { reason } => {
                    out.push_str(&format!("{who}test {}: {reason}\n", t.id))
                }
                s => out.push_str(&format!("{who}test {}: {s:?}\n", t.id)),
            }
        }
    }
    out
}

/// A row of the block table, then its Latency and Elapsed lines.
fn block_lines(row: &Row<'_>, size: &str, width: usize) -> String {
    let block = row.block;
    let (w, rw, rd, sk) = (
        phase(block, "write"),
        phase(block, "rewrite"),
        phase(block, "read"),
        phase(block, "seeks"),
    );
    let cw = marked(cells(w, |p| kib_rate(p.bytes_written, p)), block, "write");
    let crw = marked(cells(rw, |p| kib_rate(p.bytes_written, p)), block, "rewrite");
    let crd = marked(cells(rd, |p| kib_rate(p.bytes_read, p)), block, "read");
    let csk = cells(sk, |p| {
        let seeks = p.latency.iter().find(|l| l.op == OpKind::Read).map(|l| l.count).unwrap_or(0);
        per_sec(seeks as f64 / secs(p))
    });
    let csk = marked(csk, block, "seeks");
    let mut out = format!(
        "{:<width$} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3}\n",
        format!("{}:{size}", row.name),
        "",
        "",
        cw.0,
        cw.1,
        crw.0,
        crw.1,
        "",
        "",
        crd.0,
        crd.1,
        csk.0,
        csk.1
    );
    out.push_str(&format!(
        "{:<width$} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "Latency",
        "",
        max_latency(w, OpKind::Write),
        max_latency(rw, OpKind::Write),
        "",
        max_latency(rd, OpKind::Read),
        max_latency(sk, OpKind::Read)
    ));
    out.push_str(&format!(
        "{:<width$} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "Elapsed",
        "",
        elapsed(w),
        elapsed(rw),
        "",
        elapsed(rd),
        elapsed(sk)
    ));
    out
}

/// A row of the file table (name, files), then its Latency and Elapsed lines.
fn file_lines(row: &Row<'_>, width: usize) -> String {
    let files = row
        .seq
        .or(row.rnd)
        .and_then(|t| t.median_rep())
        .and_then(|rep| rep.phases.iter().find(|p| p.name == "create"))
        .map(|p| p.files_created)
        .unwrap_or(0);
    let rate = |p: &PhaseResult| per_sec(p.file_ops as f64 / secs(p));
    let names = ["create", "stat", "delete"];
    let files = if files > 0 { format!("{}", files.div_ceil(1024)) } else { String::new() };
    let mut line = format!("{:<w$}{files:>5}", row.name, w = width - 5);
    let mut lat = format!("{:<width$}", "Latency");
    let mut secs = format!("{:<width$}", "Elapsed");
    for t in [row.seq, row.rnd] {
        for (n, op) in names.iter().zip([OpKind::Create, OpKind::Stat, OpKind::Unlink]) {
            let c = marked(cells(phase(t, n), rate), t, n);
            line.push_str(&format!(" {:>5} {:>3}", c.0, c.1));
            lat.push_str(&format!(" {:>9}", max_latency(phase(t, n), op)));
            secs.push_str(&format!(" {:>9}", elapsed(phase(t, n))));
        }
    }
    format!("{line}\n{lat}\n{secs}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::{Figure, RepResult, TestStatus};

    /// A run with bonnie's `files-seq` test: `ops` operations per phase, each phase 0.5 s.
    fn run(ops: u64) -> RunReport {
        let phase = |name: &str| PhaseResult {
            name: name.into(),
            timed: true,
            threads: 1,
            wall_nanos: 500_000_000,
            file_ops: ops,
            files_created: if name == "create" { ops } else { 0 },
            ..Default::default()
        };
        let rep = RepResult {
            complete: true,
            phases: vec![phase("create"), phase("stat"), phase("delete")],
            ..Default::default()
        };
        let t = TestResult {
            id: "files-seq".into(),
            name: "files-seq".into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            reps: vec![rep],
            complete_reps: 1,
            figure: Figure::OpsPerS,
            summary: None,
            warnings: vec![],
        };
        RunReport {
            fsbench_version: String::new(),
            started_unix_s: 0,
            host: Default::default(),
            target: Default::default(),
            suite: "bonnie".into(),
            scale: "1".into(),
            repeat: 1,
            tests: vec![t],
            interrupted: false,
            cluster: None,
        }
    }

    #[test]
    fn configurations_share_one_table_a_row_each_named_by_the_configuration() {
        let (a, b) = (run(2048), run(1024));
        let out = render_rows(&[("ext4", &a), ("ext4:mount=data=writeback,noatime", &b)]);
        assert_eq!(out.matches("------Sequential Create------").count(), 1, "{out}");
        assert_eq!(out.matches("------Sequential Output------").count(), 1, "{out}");
        let row = |name: &str| {
            out.lines()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("no row {name}: {out}"))
                .split_whitespace()
                .collect::<Vec<_>>()
        };
        // name, files (units of 1024), then create/stat/delete of the sequential half.
        assert_eq!(row("ext4")[..4], ["ext4", "2", "4096", "0"], "{out}");
        assert_eq!(
            row("ext4:mount=data=writeback,noatime")[..3],
            ["ext4:mount=data=writeback,noatime", "1", "2048"]
        );
        // The block table has no figures but a row per configuration (blank cells).
        assert!(out.lines().any(|l| l.trim_end() == "ext4:"), "{out}");
        // Rates above bonnie++'s five columns are in thousands.
        let fast = run(100_000);
        let out = render_rows(&[("x", &fast)]);
        assert!(out.lines().any(|l| l.starts_with("x ") && l.contains(" 200k ")), "{out}");
    }

    #[test]
    fn a_phase_whose_precondition_was_not_met_is_marked_in_its_cell() {
        let mut r = run(2048);
        // A second repetition, its create phase run on a cache that was not as required: its
        // 7,000 creates a second are not part of the figure.
        let mut unmet = run(3500).tests[0].reps[0].clone();
        unmet.phases[0].cache.met = false;
        unmet.phases[0].cache.required = crate::model::job::CacheReq::Uncached;
        r.tests[0].reps.push(unmet);
        r.tests[0].finalize();
        assert!(r.tests[0].is_not_met());
        let out = render_rows(&[("zfs", &r)]);
        let row: Vec<&str> = out
            .lines()
            .find(|l| l.starts_with("zfs "))
            .unwrap_or_else(|| panic!("no row: {out}"))
            .split_whitespace()
            .collect();
        assert_eq!(row[..4], ["zfs", "2", &format!("4096{UNMET}"), "0"], "{out}");
        assert_eq!(row[4], "4096", "stat met its precondition: no mark\n{out}");
        assert!(!out.contains("7000"), "the unmet repetition's figure: {out}");
        assert!(out.contains(&format!("{UNMET}: a stated precondition")), "a legend: {out}");
        assert!(out.contains("test files-seq: precondition not met"), "{out}");
    }

    #[test]
    fn no_empty_tables_without_bonnie_results() {
        let mut r = run(1);
        r.tests[0].id = "rm65536".into();
        assert_eq!(
            render_rows(&[("ext4", &r), ("xfs", &r)]),
            "No bonnie results in this report: run `--suite bonnie` for these tables.\n"
        );
    }
}
