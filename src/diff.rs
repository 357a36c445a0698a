//! `fsbench diff`: two recorded runs compared test by test with `compare`'s decision rule, on
//! each test's figure of merit (MiB/s for data tests, ops/s for file-set tests).
//!
//! Configurations are matched by label (two runs of one configuration each are matched whatever
//! their labels), tests by id. Each pair is decided by [`crate::compare::decision::decide`]; a
//! win of the earlier run is a regression.

use crate::compare::{decision, Rule, Verdict};
use crate::output::units::{sig3, utc};
use crate::result::{Figure, TestResult};
use crate::store::RunRecord;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};

/// How one test changed between the runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The later run is slower by `factor`.
    Regressed {
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test backed it.
        tested: bool,
    },
    /// The later run is faster by `factor`.
    Improved {
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test backed it.
        tested: bool,
    },
    /// No significant change.
    Same,
    /// Not compared, with why.
    NotCompared(String),
}

/// One test of one configuration in both runs.
#[derive(Debug, Clone)]
pub struct DiffRow {
    /// Test id.
    pub id: String,
    /// Test name.
    pub name: String,
    /// Configuration label (of the later run).
    pub config: String,
    /// The figure both medians are of.
    pub figure: Figure,
    /// Median figure of merit in run A.
    pub median_a: Option<f64>,
    /// Median figure of merit in run B.
    pub median_b: Option<f64>,
    /// Median elapsed seconds of the timed phases in run A.
    pub elapsed_s_a: Option<f64>,
    /// Median elapsed seconds of the timed phases in run B.
    pub elapsed_s_b: Option<f64>,
    /// The outcome.
    pub change: Change,
}

/// The outcome of a diff.
#[derive(Debug, Clone)]
pub struct Diff {
    /// Run A's id.
    pub run_a: i64,
    /// Run B's id.
    pub run_b: i64,
    /// One row per matched test and configuration.
    pub rows: Vec<DiffRow>,
    /// What could not be matched, and other things to know.
    pub notes: Vec<String>,
    /// The text printed by `fsbench diff`.
    pub text: String,
}

impl Diff {
    /// Tests that regressed significantly.
    pub fn regressions(&self) -> usize {
        self.rows.iter().filter(|r| matches!(r.change, Change::Regressed { .. })).count()
    }

    /// Tests that improved significantly.
    pub fn improvements(&self) -> usize {
        self.rows.iter().filter(|r| matches!(r.change, Change::Improved { .. })).count()
    }
}

/// Configuration pairs (index in A, index in B), and notes on what is only on one side.
fn pair_configs(ra: &RunRecord, rb: &RunRecord, notes: &mut Vec<String>) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    if ra.configs.len() == 1 && rb.configs.len() == 1 {
        pairs.push((0, 0));
        if ra.configs[0].label != rb.configs[0].label {
            notes.push(format!(
                "configurations matched although their labels differ: `{}` and `{}`",
                ra.configs[0].label, rb.configs[0].label
            ));
        }
        return pairs;
    }
    for (i, c) in ra.configs.iter().enumerate() {
        match rb.configs.iter().position(|d| d.label == c.label) {
            Some(j) => pairs.push((i, j)),
            None => notes.push(format!("configuration `{}` is only in run {}", c.label, ra.id)),
        }
    }
    for c in &rb.configs {
        if !ra.configs.iter().any(|d| d.label == c.label) {
            notes.push(format!("configuration `{}` is only in run {}", c.label, rb.id));
        }
    }
    pairs
}

fn elapsed(t: &TestResult) -> Option<f64> {
    t.summary.as_ref().map(|s| s.elapsed_s.median)
}

/// Compare run B against run A with `rule`.
pub fn diff_runs(ra: &RunRecord, rb: &RunRecord, rule: &Rule) -> Diff {
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    let (la, lb) = (format!("run {}", ra.id), format!("run {}", rb.id));
    for (i, j) in pair_configs(ra, rb, &mut notes) {
        let (ca, cb) = (&ra.configs[i], &rb.configs[j]);
        for ta in &ca.tests {
            let Some(tb) = cb.tests.iter().find(|t| t.id == ta.id) else {
                notes.push(format!("test {} ({}) is only in run {}", ta.id, ca.label, ra.id));
                continue;
            };
            let change = match decision::decide(ta, &la, tb, &lb, rule) {
                Verdict::Win { winner: 0, factor, tested } => Change::Regressed { factor, tested },
                Verdict::Win { factor, tested, .. } => Change::Improved { factor, tested },
                Verdict::Draw { .. } => Change::Same,
                Verdict::NotCompared { reason } => Change::NotCompared(reason),
            };
            rows.push(DiffRow {
                id: ta.id.clone(),
                name: ta.name.clone(),
                config: cb.label.clone(),
                figure: ta.figure,
                median_a: ta.median(),
                median_b: tb.median(),
                elapsed_s_a: elapsed(ta),
                elapsed_s_b: elapsed(tb),
                change,
            });
        }
        for tb in &cb.tests {
            if !ca.tests.iter().any(|t| t.id == tb.id) {
                notes.push(format!("test {} ({}) is only in run {}", tb.id, cb.label, rb.id));
            }
        }
    }
    for (r, name) in [(ra, "A"), (rb, "B")] {
        if r.unfinished() {
            notes.push(format!(
                "run {} ({name}) did not finish: only its recorded tests are compared",
                r.id
            ));
        }
    }
    let mut d = Diff { run_a: ra.id, run_b: rb.id, rows, notes, text: String::new() };
    d.text = render(&d, ra, rb, rule);
    d
}

fn render(d: &Diff, ra: &RunRecord, rb: &RunRecord, rule: &Rule) -> String {
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
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    if t.width().is_none() {
        t.set_width(150);
    }
    t.set_header(vec![
        "test".to_string(),
        "name".to_string(),
        "configuration".to_string(),
        format!("run {}{in_header}", ra.id),
        format!("run {}{in_header}", rb.id),
        "change".to_string(),
        "verdict".to_string(),
    ]);
    let one = " (one repetition: no significance test)";
    for r in &d.rows {
        let change = match (r.median_a, r.median_b) {
            (Some(x), Some(y)) if x > 0.0 => format!("{:+.1}%", (y / x - 1.0) * 100.0),
            _ => "-".into(),
        };
        let verdict = match &r.change {
            Change::Regressed { factor, tested } => {
                format!("REGRESSION: {factor:.2}× slower{}", if *tested { "" } else { one })
            }
            Change::Improved { factor, tested } => {
                format!("improved: {factor:.2}× faster{}", if *tested { "" } else { one })
            }
            Change::Same => "no significant change".into(),
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
    out.push_str(&format!(
        "Decision rule of compare: {estimator}; Welch's t-test on log throughput, two-sided 95%, and at least {:.0}% apart; with one repetition at least {:.0}% apart (no test).\n",
        rule.min_effect * 100.0,
        rule.single_run_effect * 100.0
    ));
    let compared = d.rows.iter().filter(|r| !matches!(r.change, Change::NotCompared(_))).count();
    let (reg, imp) = (d.regressions(), d.improvements());
    out.push_str(&format!(
        "{compared} compared: {reg} regressed significantly, {imp} improved significantly, {} without significant change.\n",
        compared - reg - imp
    ));
    if !d.notes.is_empty() {
        out.push_str("Notes:\n");
        for n in &d.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    out
}
