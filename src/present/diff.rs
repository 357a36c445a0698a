//! `fsbench diff`'s table: two stored runs test by test ([`crate::analysis::diff`]), with the
//! decision rule and the counts under it.

use super::frame::{self, Grid, Kind};
use crate::analysis::diff::{Change, Diff};
use crate::model::result::Figure;
use crate::model::units::sig3;
use crate::model::units::utc;
use crate::model::verdict::Rule;
use crate::store::RunRecord;

/// The text `fsbench diff` prints for `d`, the diff of `ra` against `rb` under `rule`, laid
/// out for `width` columns.
pub fn render(d: &Diff, ra: &RunRecord, rb: &RunRecord, rule: &Rule, width: usize) -> String {
    let head = format!(
        "fsbench diff: run {} ({}, {} {}) against run {} ({}, {} {})",
        ra.id,
        utc(ra.started_unix_s),
        ra.kind.as_str(),
        ra.suite,
        rb.id,
        utc(rb.started_unix_s),
        rb.kind.as_str(),
        rb.suite,
    );
    let mut out = frame::wrap(&head, width, "", "  ");
    out.push_str(&table(d, ra, rb, rule).render(width));
    out.push_str(&summary(d, rule, width));
    out
}

/// One unit for the whole table when all rows share it; else each cell says.
fn common_unit(d: &Diff) -> Option<Figure> {
    match d.rows.first().map(|r| r.figure) {
        Some(f) if d.rows.iter().all(|r| r.figure == f) => Some(f),
        None => Some(Figure::MibPerS),
        _ => None,
    }
}

/// The table: a row per test and configuration, both runs' figures, the change, the verdict.
fn table(d: &Diff, ra: &RunRecord, rb: &RunRecord, rule: &Rule) -> Grid {
    let unit = common_unit(d);
    let in_header = unit.map(|u| format!(" {}", u.unit())).unwrap_or_default();
    let mut t = Grid::new();
    // Names and verdicts wrap; figures and changes stay whole.
    t.column("test", Kind::Key).column("name", Kind::Words).column("configuration", Kind::Words);
    t.column(format!("run {}{in_header}", ra.id), Kind::Figure);
    t.column(format!("run {}{in_header}", rb.id), Kind::Figure);
    t.column("change", Kind::Figure).glued("verdict", Kind::Words);
    for r in &d.rows {
        let change = match (r.median_a, r.median_b) {
            (Some(x), Some(y)) if x > 0.0 => format!("{:+.1}%", (y / x - 1.0) * 100.0),
            _ => "-".into(),
        };
        let cell = |m: Option<f64>, e: Option<f64>, not_met: bool| {
            let Some(m) = m else {
                let none = if not_met { super::table::NOT_MET } else { "-" };
                return none.to_string();
            };
            let mut s = sig3(m);
            if unit.is_none() {
                s.push(' ');
                s.push_str(r.figure.unit());
            }
            if let (Figure::OpsPerS, Some(e)) = (r.figure, e) {
                s.push_str(&format!(" in {} s", sig3(e)));
            }
            if not_met {
                s.push_str(super::table::NOT_MET_MARK);
            }
            s
        };
        t.row(vec![
            r.id.clone(),
            r.name.clone(),
            r.config.clone(),
            cell(r.median_a, r.elapsed_s_a, r.not_met_a),
            cell(r.median_b, r.elapsed_s_b, r.not_met_b),
            change,
            verdict(&r.change, rule),
        ]);
    }
    t
}

/// A pair's verdict in words.
fn verdict(change: &Change, rule: &Rule) -> String {
    match change {
        Change::Regressed { factor, tested: true } => format!("REGRESSION: {factor:.2}× slower"),
        Change::Improved { factor, tested: true } => format!("improved: {factor:.2}× faster"),
        Change::Regressed { factor, tested: false } => {
            format!("{factor:.2}× slower? UNTESTED: one repetition, no noise estimate")
        }
        Change::Improved { factor, tested: false } => {
            format!("{factor:.2}× faster? UNTESTED: one repetition, no noise estimate")
        }
        Change::Same { tested: true } => "no significant change".into(),
        Change::Same { tested: false } => format!(
            "no change above {:.0}% (untested: one repetition)",
            rule.single_run_effect * 100.0
        ),
        Change::NotCompared(reason) => format!("not compared: {reason}"),
    }
}

/// Under the table: the decision rule, the counts, the warning on untested pairs, the notes.
fn summary(d: &Diff, rule: &Rule, width: usize) -> String {
    let any_ops = d.rows.iter().any(|r| r.figure == Figure::OpsPerS);
    let estimator = if any_ops {
        "median MiB/s for data tests, ops/s for file-set tests (s: elapsed seconds of the timed phases)"
    } else {
        "median MiB/s"
    };
    let compared = d.rows.iter().filter(|r| !matches!(r.change, Change::NotCompared(_))).count();
    // The family Benjamini-Hochberg corrects over: the pairs that were tested.
    let tested = compared - d.untested();
    let mut out = frame::wrap(&format!(
        "Decision rule of compare: {estimator}; Yuen's trimmed-mean t-test on log figures (Welch's below 5 repetitions), two-sided, significant when Benjamini-Hochberg keeps it at a 5% false discovery rate over the {tested} tested pairs, and at least {:.0}% apart; with one repetition at least {:.0}% apart and UNTESTED.",
        rule.min_effect * 100.0,
        rule.single_run_effect * 100.0,
    ), width, "", "");
    out.push_str(&frame::wrap(&spread_line(d, rule), width, "", ""));
    let (reg, imp, untested) = (d.regressions(), d.improvements(), d.untested());
    // Untested pairs are neither changed nor unchanged: they are counted on their own.
    out.push_str(&frame::wrap(&format!(
        "{compared} compared: {reg} regressed significantly, {imp} improved significantly, {} without significant change{}.",
        compared - reg - imp - untested,
        if untested > 0 { format!(", {untested} untested") } else { String::new() }
    ), width, "", ""));
    if untested > 0 {
        out.push_str(&frame::wrap(&format!(
            "WARNING: {untested} pairs have a single repetition on a side: there is no noise estimate, so no test was made and they are never counted as regressions. Record runs with --repeat 5 or more to test them."
        ), width, "", ""));
    }
    if !d.notes.is_empty() {
        out.push_str(&frame::bullets("Notes:", &d.notes, width));
    }
    out
}

/// How the pairs allowed for the shift between runs made at different times: measured from
/// other runs, assumed, or not at all.
fn spread_line(d: &Diff, rule: &Rule) -> String {
    let measured: Vec<_> = d.rows.iter().filter_map(|r| r.spread.filter(|s| s.runs > 0)).collect();
    let assumed = d.rows.iter().filter(|r| matches!(r.spread, Some(s) if s.runs == 0)).count();
    let none = d.rows.iter().filter(|r| r.spread.is_none()).count();
    let mut parts = Vec::new();
    if !measured.is_empty() {
        let mut sds: Vec<f64> = measured.iter().map(|s| s.sd).collect();
        sds.sort_by(f64::total_cmp);
        let runs: Vec<usize> = measured.iter().map(|s| s.runs).collect();
        let (lo, hi) = (runs.iter().min().unwrap_or(&0), runs.iter().max().unwrap_or(&0));
        let from = if lo == hi { format!("{lo}") } else { format!("{lo}-{hi}") };
        parts.push(format!(
            "measured from {from} other runs of the same test for {} pairs ({:.0}-{:.0}%, median {:.0}%)",
            measured.len(),
            sds[0] * 100.0,
            sds[sds.len() - 1] * 100.0,
            crate::stats::summary::median(&sds) * 100.0
        ));
    }
    if assumed > 0 {
        parts.push(format!(
            "assumed {:.0}% (--run-spread) for {assumed} pairs with fewer than {} other runs of the test in the database",
            rule.run_spread * 100.0,
            crate::decision::SPREAD_RUNS
        ));
    }
    if none > 0 {
        parts.push(format!(
            "none for {none} pairs (--run-spread 0): decided on their repetitions alone"
        ));
    }
    format!(
        "Runs made at different times: each pair's test allows for how far a figure moves from run to run beyond its repetitions: {}.",
        parts.join("; ")
    )
}
