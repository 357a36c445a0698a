//! `fsbench history`, `show`, `diff` and `report`: reading the results database.

use super::record::DbArg;
use super::{ExitCode, UserError};
use crate::compare::{decision, Rule, Verdict};
use crate::output::units::{sig3, utc};
use crate::report::ReportRun;
use crate::store::{HistoryFilter, RunKind, RunRecord};
use anyhow::Context;
use clap::{Args, ValueEnum};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use std::io::Write;
use std::path::PathBuf;

fn parse_run_id(s: &str) -> Result<i64, String> {
    s.trim().parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(|| {
        format!("`{s}` is not a run id (a positive number); `fsbench history` lists them")
    })
}

/// Arguments of `fsbench history`.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Show at most this many runs (newest first).
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Only runs of this suite (e.g. unit14, or a workload file's name).
    #[arg(long)]
    pub suite: Option<String>,
    /// Only runs with a configuration whose label contains this text.
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub db: DbArg,
}

/// Arguments of `fsbench show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Run id (see `fsbench history`).
    #[arg(value_parser = parse_run_id, value_name = "RUN")]
    pub run: i64,
    /// Output format, as the run or compare command would have printed it.
    #[arg(long, value_enum, default_value_t = ShowFormat::Table)]
    pub format: ShowFormat,
    /// For a comparison: also the observed facts per test and configuration (as `compare
    /// --details`).
    #[arg(long)]
    pub details: bool,
    #[command(flatten)]
    pub db: DbArg,
}

/// Formats of `show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    /// The table the command printed.
    Table,
    /// Everything stored, as JSON.
    Json,
    /// One row per test (and configuration).
    Csv,
}

/// Arguments of `fsbench diff`.
#[derive(Debug, Args)]
#[command(after_help = DIFF_HELP)]
pub struct DiffArgs {
    /// The earlier run (the reference).
    #[arg(value_parser = parse_run_id, value_name = "RUN_A")]
    pub run_a: i64,
    /// The later run (checked for regressions against RUN_A).
    #[arg(value_parser = parse_run_id, value_name = "RUN_B")]
    pub run_b: i64,
    /// Smallest difference (percent) that counts when it is significant, as in compare.
    #[arg(long, default_value_t = 5.0)]
    pub min_effect: f64,
    #[command(flatten)]
    pub db: DbArg,
}

const DIFF_HELP: &str = "\
Tests are matched by test id, configurations by label (two runs of one configuration each are
matched whatever their labels). Each pair is decided with compare's rule: the estimator is the
median MiB/s; with 2 or more repetitions on both sides Welch's t-test on log(MiB/s), two-sided
at 95%, must find a difference and the factor must be at least 1 + --min-effect; with a single
repetition the factor must be at least 1.10 (no test). Otherwise: no significant change.

Exit codes: 0 no test regressed significantly, 1 at least one test regressed significantly
(use it to gate CI), 2 bad input (unknown run id, unusable database).

Example:
  fsbench run --dir /mnt/test --scale quick --repeat 5     # before the change
  fsbench run --dir /mnt/test --scale quick --repeat 5     # after
  fsbench diff 1 2";

/// Arguments of `fsbench report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run ids (see `fsbench history`); each gets its own section.
    #[arg(required = true, value_parser = parse_run_id, value_name = "RUN")]
    pub runs: Vec<i64>,
    /// The HTML file to write (replacing it). Default: ./fsbench-report-RUN[-RUN...].html, or
    /// -2, -3, ... appended if that name is taken (an existing file is never replaced).
    #[arg(short, long, value_name = "FILE.html")]
    pub output: Option<PathBuf>,
    /// Also write every chart as an SVG file into this directory (for slides and papers).
    #[arg(long, value_name = "DIR")]
    pub svg_dir: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArg,
}

/// `fsbench history`.
pub fn history(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    let store = a.db.open_read_only()?;
    let runs = store.history(&HistoryFilter {
        limit: Some(a.limit),
        suite: a.suite.clone(),
        label: a.label.clone(),
    })?;
    if runs.is_empty() {
        eprintln!("fsbench: no runs recorded in {} match", store.path().display());
        return Ok(ExitCode::Success);
    }
    let mut t = Table::new();
    t.load_preset(comfy_table::presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    t.set_header([
        "id",
        "started (UTC)",
        "kind",
        "suite",
        "scale",
        "reps",
        "tests",
        "status",
        "configurations",
    ]);
    for r in runs {
        let date = utc(r.started_unix_s);
        t.add_row(vec![
            Cell::new(r.id).set_alignment(CellAlignment::Right),
            Cell::new(date.trim_end_matches(" UTC")),
            Cell::new(r.kind.as_str()),
            Cell::new(&r.suite),
            Cell::new(&r.scale),
            Cell::new(r.repeat).set_alignment(CellAlignment::Right),
            Cell::new(format!("{}/{}", r.tests_done, r.tests_total))
                .set_alignment(CellAlignment::Right),
            Cell::new(r.status_text()),
            Cell::new(r.labels.join(" vs ")),
        ]);
    }
    println!("{}", t.to_string().lines().map(str::trim_end).collect::<Vec<_>>().join("\n"));
    Ok(ExitCode::Success)
}

/// `fsbench show RUN`.
pub fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = a.db.open_read_only()?;
    let rec = store.load(a.run)?;
    if rec.unfinished() {
        eprintln!(
            "fsbench: run {} did not finish (still running, or killed): showing the tests recorded so far",
            rec.id
        );
    }
    let bytes = match rec.kind {
        RunKind::Run => {
            let report = rec
                .run_report(0)
                .ok_or_else(|| anyhow::anyhow!("run {} has no configuration stored", rec.id))?;
            let f = match a.format {
                ShowFormat::Table => crate::output::Format::Table,
                ShowFormat::Json => crate::output::Format::Json,
                ShowFormat::Csv => crate::output::Format::Csv,
            };
            crate::output::exporter(f).serialize(&report)?
        }
        RunKind::Compare => {
            let report = rec.compare_report();
            match a.format {
                ShowFormat::Table => {
                    crate::output::compare::render(&report, a.details).into_bytes()
                }
                ShowFormat::Json => crate::output::compare::json(&report)?,
                ShowFormat::Csv => crate::output::compare::csv(&report)?,
            }
        }
    };
    std::io::stdout().write_all(&bytes).context("writing to stdout")?;
    Ok(ExitCode::Success)
}

/// `fsbench diff RUN_A RUN_B`.
pub fn diff(a: DiffArgs) -> anyhow::Result<ExitCode> {
    if !(a.min_effect >= 0.0 && a.min_effect < 1000.0) {
        return Err(
            UserError(format!("--min-effect {} must be a percentage >= 0", a.min_effect)).into()
        );
    }
    let store = a.db.open_read_only()?;
    let ra = store.load(a.run_a)?;
    let rb = store.load(a.run_b)?;
    let rule = Rule { min_effect: a.min_effect / 100.0, ..Rule::default() };
    let d = diff_runs(&ra, &rb, &rule);
    print!("{}", d.text);
    Ok(if d.regressions > 0 { ExitCode::TestFailed } else { ExitCode::Success })
}

/// The outcome of a diff.
struct Diff {
    text: String,
    regressions: usize,
}

fn diff_runs(ra: &RunRecord, rb: &RunRecord, rule: &Rule) -> Diff {
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
    // Configuration pairs.
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut notes = Vec::new();
    if ra.configs.len() == 1 && rb.configs.len() == 1 {
        pairs.push((0, 0));
        if ra.configs[0].label != rb.configs[0].label {
            notes.push(format!(
                "configurations matched although their labels differ: `{}` and `{}`",
                ra.configs[0].label, rb.configs[0].label
            ));
        }
    } else {
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
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    if t.width().is_none() {
        t.set_width(150);
    }
    t.set_header(vec![
        "test".to_string(),
        "name".to_string(),
        "configuration".to_string(),
        format!("run {} MiB/s", ra.id),
        format!("run {} MiB/s", rb.id),
        "change".to_string(),
        "verdict".to_string(),
    ]);
    let mut regressions = 0;
    let mut improvements = 0;
    let mut compared = 0;
    let (la, lb) = (format!("run {}", ra.id), format!("run {}", rb.id));
    for (i, j) in pairs {
        let (ca, cb) = (&ra.configs[i], &rb.configs[j]);
        for ta in &ca.tests {
            let Some(tb) = cb.tests.iter().find(|t| t.id == ta.id) else {
                notes.push(format!("test {} ({}) is only in run {}", ta.id, ca.label, ra.id));
                continue;
            };
            let ma = ta.summary.as_ref().map(|s| s.median);
            let mb = tb.summary.as_ref().map(|s| s.median);
            let change = match (ma, mb) {
                (Some(x), Some(y)) if x > 0.0 => format!("{:+.1}%", (y / x - 1.0) * 100.0),
                _ => "-".into(),
            };
            let verdict = match decision::decide(ta, &la, tb, &lb, rule) {
                Verdict::Win { winner: 0, factor, tested } => {
                    regressions += 1;
                    compared += 1;
                    format!(
                        "REGRESSION: {factor:.2}× slower{}",
                        if tested { "" } else { " (one repetition: no significance test)" }
                    )
                }
                Verdict::Win { factor, tested, .. } => {
                    improvements += 1;
                    compared += 1;
                    format!(
                        "improved: {factor:.2}× faster{}",
                        if tested { "" } else { " (one repetition: no significance test)" }
                    )
                }
                Verdict::Draw { .. } => {
                    compared += 1;
                    "no significant change".into()
                }
                Verdict::NotCompared { reason } => format!("not compared: {reason}"),
            };
            let fmt = |m: Option<f64>| m.map(sig3).unwrap_or_else(|| "-".into());
            let num = |s: String| Cell::new(s).set_alignment(CellAlignment::Right);
            t.add_row(vec![
                Cell::new(&ta.id),
                Cell::new(&ta.name),
                Cell::new(&cb.label),
                num(fmt(ma)),
                num(fmt(mb)),
                num(change),
                Cell::new(verdict),
            ]);
        }
        for tb in &cb.tests {
            if !ca.tests.iter().any(|t| t.id == tb.id) {
                notes.push(format!("test {} ({}) is only in run {}", tb.id, cb.label, rb.id));
            }
        }
    }
    out.push_str(&t.to_string());
    out.push('\n');
    out.push_str(&format!(
        "Decision rule of compare: median MiB/s; Welch's t-test on log throughput, two-sided 95%, and at least {:.0}% apart; with one repetition at least {:.0}% apart (no test).\n",
        rule.min_effect * 100.0,
        rule.single_run_effect * 100.0
    ));
    out.push_str(&format!(
        "{compared} compared: {regressions} regressed significantly, {improvements} improved significantly, {} without significant change.\n",
        compared - regressions - improvements
    ));
    for (r, name) in [(ra, "A"), (rb, "B")] {
        if r.unfinished() {
            notes.push(format!(
                "run {} ({name}) did not finish: only its recorded tests are compared",
                r.id
            ));
        }
    }
    if !notes.is_empty() {
        out.push_str("Notes:\n");
        for n in notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    Diff { text: out, regressions }
}

/// `fsbench report RUN... -o FILE.html`.
pub fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let store = a.db.open_read_only()?;
    let mut runs = Vec::new();
    for id in &a.runs {
        runs.push(ReportRun::from_record(&store.load(*id)?));
    }
    let path = match &a.output {
        Some(p) => crate::report::write_html(&runs, p, a.svg_dir.as_deref())
            .map(|()| p.clone())
            .with_context(|| format!("writing the report {}", p.display()))?,
        None => {
            // A name fsbench chooses never replaces a file (NAME-2.html if it is taken).
            let ids: Vec<String> = a.runs.iter().map(|i| i.to_string()).collect();
            let p = PathBuf::from(format!("fsbench-report-{}.html", ids.join("-")));
            crate::report::write_html_new(&runs, &p, a.svg_dir.as_deref())
                .with_context(|| format!("writing the report {}", p.display()))?
        }
    };
    eprintln!("fsbench: report written to {}", path.display());
    if let Some(d) = &a.svg_dir {
        eprintln!("fsbench: charts written to {}", d.display());
    }
    Ok(ExitCode::Success)
}
