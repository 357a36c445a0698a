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
//! row under each table gives each phase's wall time in seconds.

use super::units::nanos;
use super::Exporter;
use crate::compare::Report;
use crate::result::{PhaseResult, RunReport, TestResult};
use crate::workload::size::fmt_bytes;
use crate::workload::OpKind;

/// bonnie++-style tables.
pub struct BonnieExporter;

impl Exporter for BonnieExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        Ok(match super::single(report) {
            Some(run) => render(run),
            // One bonnie++ table pair per configuration, labelled.
            None => report
                .configs
                .iter()
                .map(|c| format!("== {} ==\n{}", c.label, render(&c.run)))
                .collect::<Vec<_>>()
                .join("\n"),
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

/// `/sec %CP` cells of one phase, or blanks.
fn cells(p: Option<&PhaseResult>, rate: impl Fn(&PhaseResult) -> String) -> (String, String) {
    match p {
        Some(p) => (rate(p), cp(p)),
        None => (String::new(), String::new()),
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

/// Render the two tables.
pub fn render(r: &RunReport) -> String {
    let host: String = r.host.hostname.chars().take(12).collect();
    let block = test(r, "block");
    let (w, rw, rd, sk) = (
        phase(block, "write"),
        phase(block, "rewrite"),
        phase(block, "read"),
        phase(block, "seeks"),
    );
    let size = w.map(|p| fmt_bytes(p.bytes_written)).unwrap_or_default();
    let mut out = String::new();
    out.push_str(
        "Version  fsbench     ------Sequential Output------ --Sequential Input- --Random-\n",
    );
    out.push_str(
        "                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n",
    );
    out.push_str(
        "Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n",
    );
    let cw = cells(w, |p| kib_rate(p.bytes_written, p));
    let crw = cells(rw, |p| kib_rate(p.bytes_written, p));
    let crd = cells(rd, |p| kib_rate(p.bytes_read, p));
    let csk = cells(sk, |p| {
        let seeks = p.latency.iter().find(|l| l.op == OpKind::Read).map(|l| l.count).unwrap_or(0);
        format!("{:.0}", seeks as f64 / secs(p))
    });
    out.push_str(&format!(
        "{:<19} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3} {:>5} {:>3}\n",
        format!("{host}:{size}"),
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
    ));
    out.push_str(&format!(
        "Latency             {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "",
        max_latency(w, OpKind::Write),
        max_latency(rw, OpKind::Write),
        "",
        max_latency(rd, OpKind::Read),
        max_latency(sk, OpKind::Read)
    ));
    out.push_str(&format!(
        "Elapsed             {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "",
        elapsed(w),
        elapsed(rw),
        "",
        elapsed(rd),
        elapsed(sk)
    ));
    let seq = test(r, "files-seq");
    let rnd = test(r, "files-rand");
    let files = seq
        .or(rnd)
        .and_then(|t| t.median_rep())
        .and_then(|rep| rep.phases.iter().find(|p| p.name == "create"))
        .map(|p| p.files_created)
        .unwrap_or(0);
    out.push_str(
        "Version  fsbench     ------Sequential Create------ --------Random Create--------\n",
    );
    out.push_str(&format!(
        "{:<19} -Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--\n",
        host
    ));
    out.push_str(
        "              files  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n",
    );
    let rate = |p: &PhaseResult| format!("{:.0}", p.file_ops as f64 / secs(p));
    let names = ["create", "stat", "delete"];
    let mut row = format!(
        "{:>19}",
        if files > 0 { format!("{}", files.div_ceil(1024)) } else { String::new() }
    );
    let mut lat = String::from("Latency            ");
    let mut secs = String::from("Elapsed            ");
    for t in [seq, rnd] {
        for (n, op) in names.iter().zip([OpKind::Create, OpKind::Stat, OpKind::Unlink]) {
            let c = cells(phase(t, n), rate);
            row.push_str(&format!(" {:>5} {:>3}", c.0, c.1));
            lat.push_str(&format!(" {:>9}", max_latency(phase(t, n), op)));
            secs.push_str(&format!(" {:>9}", elapsed(phase(t, n))));
        }
    }
    out.push_str(&row);
    out.push('\n');
    out.push_str(&lat);
    out.push('\n');
    out.push_str(&secs);
    out.push('\n');
    out.push_str("Per Chr: not implemented by fsbench (blank). Read = stat(2), as bonnie++. files: units of 1024.\n");
    out.push_str("File phases: operations per second; Elapsed: wall time of each phase (median repetition).\n");
    if block.is_none() && seq.is_none() && rnd.is_none() {
        out.push_str("No bonnie results in this report: run `--suite bonnie` for these tables.\n");
    }
    for t in [block, seq, rnd].into_iter().flatten() {
        if !t.is_ok() {
            out.push_str(&format!("test {}: {:?}\n", t.id, t.status));
        }
    }
    out
}
