//! `fsbench history`, `show`, `diff` and `report`: reading the results database.

use super::record::DbArg;
use super::{ExitCode, UserError};
use crate::compare::Rule;
use crate::output::units::utc;
use crate::output::{exporter, ExportOptions, Format};
use crate::report::ReportRun;
use crate::store::HistoryFilter;
use anyhow::Context;
use clap::Args;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
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
    /// Output format, as the run or compare command would have printed it (every format of
    /// `run` and `compare`: table, json, csv, bonnie, html).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// For a comparison: also the observed facts per test and configuration (as `compare
    /// --details`).
    #[arg(long)]
    pub details: bool,
    #[command(flatten)]
    pub db: DbArg,
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
matched whatever their labels). Each pair is decided with compare's rule on the test's figure of
merit: the estimator is the median MiB/s (ops/s for file-set tests such as rm65536, metadata,
mail, postmark, untar). With 2 or more repetitions on both sides, Yuen's test of 20% trimmed
means on log figures (Welch's t-test when a side has fewer than 5 repetitions), two-sided, gives
a p-value per pair; all pairs of the diff form one family, and the Benjamini-Hochberg procedure
keeps a 5% false discovery rate over it. Two runs of one setup are therefore flagged in at most
1 diff in 20, however many tests they have. A significant pair is a regression or an improvement
if the factor is also at least 1 + --min-effect. With 5 or more repetitions one outlying
repetition per side is trimmed; with 3 it is not (no test can tell one outlier in three from
noise), and an outlier makes a draw, never a false alarm. A pair with a single repetition has no
noise estimate: it is shown as UNTESTED and never counted as a regression. Use --repeat 5 or
more for a CI gate.

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
    let bytes = exporter(a.format, ExportOptions { details: a.details }).export(&rec.report())?;
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
    let d = crate::diff::diff_runs(&ra, &rb, &rule);
    print!("{}", d.text);
    Ok(if d.regressions() > 0 { ExitCode::TestFailed } else { ExitCode::Success })
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
