//! `--format bonnie`: bonnie++ 2.00a's familiar two tables (per-character and block I/O and
//! seeks; sequential and random create/read/delete), printed from the same result type as every
//! other format. It reads the `bonnie` suite's tests (`char`, `block`, `seeks`, `files-seq`,
//! `files-rand`) by id and their phases by name; what is missing (another suite, `--test` left a
//! test out) is left blank. Records made before the suite had the `char` and `seeks` tests have
//! their seeks as a phase of `block`, and no per-character figures.
//!
//! Figures: byte rates as bonnie++ 2.00a prints them (`k` = KiB/s below 10,000k, `m` = MiB/s
//! below 1,000m, `g` = GiB/s), seeks and files per second, %CP = CPU time (user + system) / wall
//! time of the phase (all its threads), as bonnie++ computes it. The Latency rows hold the
//! maximum latency of the phase's main operation (bonnie++ prints the maximum too). Unlike
//! bonnie++, fast phases are shown as numbers, not `+++++`. An `Elapsed` line under each row
//! gives each phase's wall time in seconds. The file size and the files column are one pass's
//! (`--min-time` may run a phase more than once; rates count every pass). The notes of the
//! tests (where fsbench's phase differs from bonnie++'s) are printed under the tables, once.
//!
//! Several configurations (`compare`) share one table pair, a row each named by the
//! configuration, as `bon_csv2html` puts several runs in one table; a single run's row is named
//! by the machine, as bonnie++ does.

use super::Exporter;
use crate::model::job::OpKind;
use crate::model::report::Report;
use crate::model::result::{PhaseResult, RunReport, TestResult, TestStatus, Warning};
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

/// A byte rate as bonnie++ 2.00a prints it (`print_stat`): whole KiB/s below 10,000 (`1433k`),
/// MiB/s with one decimal below 100 (`57.9m`) and whole below 1,000 (`434m`), else GiB/s with
/// one decimal (`1.2g`).
fn kib_rate(bytes: u64, p: &PhaseResult) -> String {
    let k = bytes as f64 / 1024.0 / secs(p);
    let m = k / 1024.0;
    if k < 10_000.0 {
        format!("{}k", k as u64)
    } else if m < 100.0 {
        format!("{m:.1}m")
    } else if m < 1000.0 {
        format!("{}m", (m + 0.5) as u64)
    } else {
        format!("{:.1}g", m / 1024.0)
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
    chr: Option<&'a TestResult>,
    block: Option<&'a TestResult>,
    seeks: Option<&'a TestResult>,
    seq: Option<&'a TestResult>,
    rnd: Option<&'a TestResult>,
}

impl<'a> Row<'a> {
    fn tests(&self) -> impl Iterator<Item = &'a TestResult> {
        [self.chr, self.block, self.seeks, self.seq, self.rnd].into_iter().flatten()
    }

    /// The seeks phase: test `seeks`, or in records made before it existed, `block`'s phase.
    fn seeks_phase(&self) -> Option<&'a PhaseResult> {
        phase(self.seeks, "seeks").or_else(|| phase(self.block, "seeks"))
    }
}

/// One pass's share of a figure summed over a phase's passes (`--min-time`).
fn per_pass(total: u64, p: &PhaseResult) -> u64 {
    total / u64::from(p.passes())
}

/// Render the two tables with one row (and its Latency and Elapsed lines) per (name, run).
pub fn render_rows(runs: &[(&str, &RunReport)]) -> String {
    let rows: Vec<Row<'_>> = runs
        .iter()
        .map(|(name, r)| Row {
            name,
            chr: test(r, "char"),
            block: test(r, "block"),
            seeks: test(r, "seeks"),
            seq: test(r, "files-seq"),
            rnd: test(r, "files-rand"),
        })
        .collect();
    if rows.iter().all(|r| r.tests().next().is_none()) {
        return "No bonnie results in this report: run `--suite bonnie` for these tables.\n".into();
    }
    // The name column is as wide as the longest `name:size` (bonnie++ gives it 19).
    let sizes: Vec<String> = rows
        .iter()
        .map(|r| {
            phase(r.block, "write")
                .map(|p| fmt_bytes(per_pass(p.bytes_written, p)))
                .unwrap_or_default()
        })
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
    out.push_str("Per Chr: one write(2)/read(2) of 1 byte per character, as bonnie++ 2.00a; its Latency is one character's\n(bonnie++: 8 KiB's). Read = stat(2), as bonnie++. files: units of 1024.\n");
    out.push_str("Seeks and file phases: operations per second (k: thousands, above 99,999); Elapsed: wall time of each phase\n(median repetition).\n");
    for row in &rows {
        let io: Vec<String> =
            row.tests().filter_map(|t| Some(format!("{} {}", t.id, t.io_words()?))).collect();
        if !io.is_empty() {
            let who = if rows.len() > 1 { format!("{}: ", row.name) } else { String::new() };
            out.push_str(&format!("{who}I/O (engine, depth, O_DIRECT): {}\n", io.join("; ")));
        }
    }
    // Where fsbench's phase differs from bonnie++'s: each test's notes, once.
    let mut said: Vec<(&str, &str)> = Vec::new();
    for t in rows.iter().flat_map(|r| r.tests()) {
        for w in &t.warnings {
            if let Warning::Note { text } = w {
                if !said.contains(&(t.id.as_str(), text.as_str())) {
                    said.push((t.id.as_str(), text.as_str()));
                    out.push_str(&format!("Note, test {}: {text}\n", t.id));
                }
            }
        }
    }
    if rows.iter().flat_map(|r| r.tests()).any(|t| t.is_not_met()) {
        out.push_str(&format!("{UNMET}: a stated precondition (the phase's cache state) was not met in some repetitions, even after retrying; they are left out of the figure (blank: none met it)\n"));
    }
    for row in &rows {
        for t in row.tests() {
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
    let (pc, w, rw, gc, rd, sk) = (
        phase(row.chr, "putc"),
        phase(block, "write"),
        phase(block, "rewrite"),
        phase(row.chr, "getc"),
        phase(block, "read"),
        row.seeks_phase(),
    );
    let cpc = marked(cells(pc, |p| kib_rate(p.bytes_written, p)), row.chr, "putc");
    let cgc = marked(cells(gc, |p| kib_rate(p.bytes_read, p)), row.chr, "getc");
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
        cpc.0,
        cpc.1,
        cw.0,
        cw.1,
        crw.0,
        crw.1,
        cgc.0,
        cgc.1,
        crd.0,
        crd.1,
        csk.0,
        csk.1
    );
    out.push_str(&format!(
        "{:<width$} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "Latency",
        max_latency(pc, OpKind::Write),
        max_latency(w, OpKind::Write),
        max_latency(rw, OpKind::Write),
        max_latency(gc, OpKind::Read),
        max_latency(rd, OpKind::Read),
        max_latency(sk, OpKind::Read)
    ));
    out.push_str(&format!(
        "{:<width$} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "Elapsed",
        elapsed(pc),
        elapsed(w),
        elapsed(rw),
        elapsed(gc),
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
        .map(|p| per_pass(p.files_created, p))
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
    use crate::model::result::{Figure, OpLatency, RepResult, TestStatus};

    /// A test `id` whose one complete repetition has these phases.
    fn test_of(id: &str, phases: Vec<PhaseResult>) -> TestResult {
        let rep = RepResult { complete: true, phases, ..Default::default() };
        TestResult {
            id: id.into(),
            name: id.into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            reps: vec![rep],
            complete_reps: 1,
            figure: Figure::OpsPerS,
            summary: None,
            warnings: vec![],
        }
    }

    /// A run of the bonnie suite made of these tests.
    fn report(tests: Vec<TestResult>) -> RunReport {
        RunReport {
            fsbench_version: String::new(),
            started_unix_s: 0,
            host: Default::default(),
            target: Default::default(),
            suite: "bonnie".into(),
            scale: "1".into(),
            repeat: 1,
            tests,
            interrupted: false,
            cluster: None,
            time: None,
        }
    }

    /// A timed phase of `secs` seconds.
    fn timed(name: &str, secs: f64) -> PhaseResult {
        PhaseResult {
            name: name.into(),
            timed: true,
            threads: 1,
            wall_nanos: (secs * 1e9) as u64,
            ..Default::default()
        }
    }

    /// `n` operations of `op` in a phase's latency list.
    fn ops(op: OpKind, n: u64) -> OpLatency {
        OpLatency {
            op,
            count: n,
            mean_nanos: 0.0,
            min_nanos: 0,
            p50_nanos: 0,
            p90_nanos: 0,
            p99_nanos: 0,
            p999_nanos: 0,
            max_nanos: 0,
            histogram_b64: String::new(),
        }
    }

    /// A run with bonnie's `files-seq` test: `ops` operations per phase, each phase 0.5 s.
    fn run(ops: u64) -> RunReport {
        let phase = |name: &str| PhaseResult {
            file_ops: ops,
            files_created: if name == "create" { ops } else { 0 },
            ..timed(name, 0.5)
        };
        report(vec![test_of("files-seq", vec![phase("create"), phase("stat"), phase("delete")])])
    }

    /// The whitespace-separated cells of the line that starts with `name `.
    fn row<'a>(out: &'a str, name: &str) -> Vec<&'a str> {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row {name}: {out}"))
            .split_whitespace()
            .collect()
    }

    #[test]
    fn configurations_share_one_table_a_row_each_named_by_the_configuration() {
        let (a, b) = (run(2048), run(1024));
        let out = render_rows(&[("ext4", &a), ("ext4:mount=data=writeback,noatime", &b)]);
        assert_eq!(out.matches("------Sequential Create------").count(), 1, "{out}");
        assert_eq!(out.matches("------Sequential Output------").count(), 1, "{out}");
        // name, files (units of 1024), then create/stat/delete of the sequential half.
        assert_eq!(row(&out, "ext4")[..4], ["ext4", "2", "4096", "0"], "{out}");
        assert_eq!(
            row(&out, "ext4:mount=data=writeback,noatime")[..3],
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

    #[test]
    fn byte_rates_are_printed_as_bonnie_2_00a_prints_them() {
        let p = timed("write", 1.0);
        let k = |kib: f64| kib_rate((kib * 1024.0) as u64, &p);
        // bonnie++ 2.00a's print_stat: %4dk below 10,000 KiB/s, %4.1fm below 100 MiB/s,
        // %4dm (rounded) below 1,000 MiB/s, %4.1fg above.
        assert_eq!(k(1433.9), "1433k");
        assert_eq!(k(9999.0), "9999k");
        assert_eq!(k(57.93 * 1024.0), "57.9m");
        assert_eq!(k(434.5 * 1024.0), "435m");
        assert_eq!(k(1228.8 * 1024.0), "1.2g");
    }

    /// The per-character cells come from test `char`, the seeks from test `seeks` (5 threads,
    /// reads counted as seeks), and a `block` test recorded before `seeks` existed still fills
    /// the seeks cell from its own phase.
    #[test]
    fn per_character_and_seek_cells_come_from_their_tests() {
        const M: u64 = 1 << 20;
        let putc = PhaseResult { bytes_written: 3 * M, ..timed("putc", 3.0) };
        let getc = PhaseResult { bytes_read: 3 * M, ..timed("getc", 2.0) };
        let write = PhaseResult { bytes_written: 256 * M, passes: 1, ..timed("write", 0.5) };
        let rewrite = PhaseResult { bytes_written: 256 * M, ..timed("rewrite", 1.0) };
        let read = PhaseResult { bytes_read: 256 * M, ..timed("read", 0.25) };
        let seeks = |n: u64, secs: f64| PhaseResult {
            latency: vec![ops(OpKind::Read, n), ops(OpKind::Write, n / 10)],
            threads: 5,
            ..timed("seeks", secs)
        };
        let now = report(vec![
            test_of("char", vec![putc, getc]),
            test_of("block", vec![write.clone(), rewrite.clone(), read.clone()]),
            test_of("seeks", vec![seeks(8195, 0.5)]),
        ]);
        let out = render_rows(&[("ext2", &now)]);
        let r = row(&out, "ext2:256M");
        // putc 1024k, write 512m, rewrite 256m, getc 1536k, read 1.0g, seeks 16390/s.
        let rates: Vec<&str> = r.iter().skip(1).step_by(2).copied().collect();
        assert_eq!(rates, ["1024k", "512m", "256m", "1536k", "1.0g", "16390"], "{out}");

        let old = report(vec![test_of("block", vec![write, rewrite, read, seeks(8000, 0.1)])]);
        let out = render_rows(&[("ext2", &old)]);
        let r = row(&out, "ext2:256M");
        // No char test: the per-character cells are blank; the seeks are block's phase.
        assert_eq!(r.len(), 1 + 2 * 4, "{out}");
        assert_eq!(r[r.len() - 2], "80000", "{out}");
    }

    /// `--min-time` may run a phase twice: the files column and the file size are one pass's,
    /// so a 4,096-file test says 4 whether it ran one pass or two (it said 8 and 4).
    #[test]
    fn files_and_size_are_one_passs_whatever_the_passes() {
        let twice = |p: PhaseResult| PhaseResult { passes: 2, ..p };
        let create = |passes: u32| PhaseResult {
            file_ops: 4096 * u64::from(passes),
            files_created: 4096 * u64::from(passes),
            passes,
            ..timed("create", 0.5)
        };
        let one = report(vec![test_of("files-seq", vec![create(1)])]);
        let two = report(vec![
            test_of("files-seq", vec![create(2)]),
            test_of(
                "block",
                vec![twice(PhaseResult { bytes_written: 512 << 20, ..timed("write", 1.0) })],
            ),
        ]);
        let out = render_rows(&[("ext2", &two), ("zfs", &one)]);
        assert_eq!(row(&out, "ext2")[1], "4", "{out}");
        assert_eq!(row(&out, "zfs")[1], "4", "{out}");
        assert!(out.lines().any(|l| l.starts_with("ext2:256M ")), "{out}");
    }

    /// Where a test's phase differs from bonnie++'s, its note is printed under the tables, once
    /// for all the configurations.
    #[test]
    fn notes_are_said_once_under_the_tables() {
        let mut r = run(4096);
        r.tests[0].warnings = vec![
            Warning::Note { text: "readdir order differs".into() },
            Warning::Noisy { cv: 0.3 },
        ];
        let out = render_rows(&[("ext4", &r), ("xfs", &r)]);
        assert_eq!(
            out.matches("Note, test files-seq: readdir order differs\n").count(),
            1,
            "{out}"
        );
        assert!(!out.contains("vary by"), "only notes: {out}");
    }
}
