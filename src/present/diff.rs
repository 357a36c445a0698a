//! `fsbench diff`'s table: two stored runs test by test ([`crate::analysis::diff`]), with the
//! decision rule and the counts under it.

use super::frame;
use crate::analysis::diff::{Change, Diff};
use crate::model::result::Figure;
use crate::model::units::sig3;
use crate::model::units::utc;
use crate::model::verdict::Rule;
use crate::store::RunRecord;
use comfy_table::{Cell, CellAlignment};

/// The text `fsbench diff` prints for `d`, the diff of `ra` against `rb` under `rule`.
pub fn render(d: &Diff, ra: &RunRecord, rb: &RunRecord, rule: &Rule) -> String {
    let mut out = format!(
        "fsbench diff: run {} ({}, {} {}) against run {} ({}, {} {})\n",
        ra.id,
        utc(ra.started_unix_s),
        ra.kind.as_str(),
        ra.suite,
        rb.id,
        utc(rb.started_unix_s),
        rb.kind.as_str(),
        rb.suite,
    );
    // One unit in the header when all rows share it; else each cell says.
    let unit = match d.rows.first().map(|r| r.figure) {
        Some(f) if d.rows.iter().all(|r| r.figure == f) => Some(f),
        None => Some(Figure::MibPerS),
        _ => None,
    };
    let in_header = unit.map(|u| format!(" {}", u.unit())).unwrap_or_default();
    let any_ops = d.rows.iter().any(|r| r.figure == Figure::OpsPerS);
    let mut t = frame::table();
    t.set_header(vec![
        "test".to_string(),
        "name".to_string(),
        "configuration".to_string(),
        format!("run {}{in_header}", ra.id),
        format!("run {}{in_header}", rb.id),
        "change".to_string(),
        "verdict".to_string(),
    ]);
    // Names and verdicts wrap; figures and changes stay whole.
    frame::wrap_only(&mut t, &[1, 2, 6]);
    for r in &d.rows {
        let change = match (r.median_a, r.median_b) {
            (Some(x), Some(y)) if x > 0.0 => format!("{:+.1}%", (y / x - 1.0) * 100.0),
            _ => "-".into(),
        };
        let verdict = match &r.change {
            Change::Regressed { factor, tested: true } => {
                format!("REGRESSION: {factor:.2}× slower")
            }
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
        };
        let cell = |m: Option<f64>, e: Option<f64>| {
            let Some(m) = m else { return "-".to_string() };
            let mut s = sig3(m);
            if unit.is_none() {
                s.push(' ');
                s.push_str(r.figure.unit());
            }
            if let (Figure::OpsPerS, Some(e)) = (r.figure, e) {
                s.push_str(&format!(" in {} s", sig3(e)));
            }
            s
        };
        let num = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
        t.add_row(vec![
            Cell::new(&r.id),
            Cell::new(&r.name),
            Cell::new(&r.config),
            num(cell(r.median_a, r.elapsed_s_a)),
            num(cell(r.median_b, r.elapsed_s_b)),
            num(change),
            Cell::new(verdict),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    let estimator = if any_ops {
        "median MiB/s for data tests, ops/s for file-set tests (s: elapsed seconds of the timed phases)"
    } else {
        "median MiB/s"
    };
    let compared = d.rows.iter().filter(|r| !matches!(r.change, Change::NotCompared(_))).count();
    // The family Benjamini-Hochberg corrects over: the pairs that were tested.
    let tested = compared - d.untested();
    out.push_str(&format!(
        "Decision rule of compare: {estimator}; Yuen's trimmed-mean t-test on log figures (Welch's below 5 repetitions), two-sided, significant when Benjamini-Hochberg keeps it at a 5% false discovery rate over the {tested} tested pairs, and at least {:.0}% apart; with one repetition at least {:.0}% apart and UNTESTED.\n",
        rule.min_effect * 100.0,
        rule.single_run_effect * 100.0,
    ));
    let (reg, imp, untested) = (d.regressions(), d.improvements(), d.untested());
    // Untested pairs are neither changed nor unchanged: they are counted on their own.
    out.push_str(&format!(
        "{compared} compared: {reg} regressed significantly, {imp} improved significantly, {} without significant change{}.\n",
        compared - reg - imp - untested,
        if untested > 0 { format!(", {untested} untested") } else { String::new() }
    ));
    if untested > 0 {
        out.push_str(&format!(
            "WARNING: {untested} pairs have a single repetition on a side: there is no noise estimate, so no test was made and they are never counted as regressions. Record runs with --repeat 5 or more to test them.\n"
        ));
    }
    if !d.notes.is_empty() {
        out.push_str("Notes:\n");
        for n in &d.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}
