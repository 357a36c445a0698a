//! `fsbench history`, `show`, `diff` and `report`: reading the results database.

use super::record::DbArg;
use super::{ExitCode, UserError};
use crate::model::run::RunKind;
use crate::model::verdict::Rule;
use crate::present::html::integrity::IntegrityRun;
use crate::present::html::ReportRun;
use crate::present::{exporter, ExportOptions, Format};
use crate::store::HistoryFilter;
use anyhow::Context;
use clap::Args;
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
    /// With --format json: also the raw data, for merging or plotting elsewhere: each latency
    /// histogram (`histogram_b64`, HdrHistogram V2, base64) and each traced phase's request
    /// points (`trace.offsets.points`); left out by default, as they are most of the output's
    /// size (`--histograms` is the same flag).
    #[arg(long, alias = "histograms")]
    pub raw: bool,
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
    /// How far (percent) a test's figure is assumed to move between runs made at different
    /// times, beyond what a run's repetitions show, where the database holds fewer than 3
    /// other runs of the test to measure it from; 0: decide on the repetitions alone.
    #[arg(long, default_value_t = 6.0, value_name = "PCT")]
    pub run_spread: f64,
    #[command(flatten)]
    pub db: DbArg,
}

const DIFF_HELP: &str = "\
Tests are matched by test id, configurations by label (two runs of one configuration each are
matched whatever their labels). Each pair is decided with compare's rule on the test's figure of
merit: the estimator is the median MiB/s (ops/s for file-set tests such as rm65536, metadata,
mail, postmark, untar). With 2 or more repetitions on both sides, Yuen's test of 20% trimmed
means on log figures (Welch's t-test when a side has fewer than 5 repetitions) of whether the gap
is beyond --min-effect, two-sided, gives a p-value per pair; all pairs of the diff form one
family, and the Benjamini-Hochberg procedure keeps a 5% false discovery rate over it. A
significant pair is a regression or an improvement if the factor is also at least
1 + --min-effect. With 5 or more repetitions one outlying repetition per side is trimmed; with 3
it is not, and an outlier makes a draw, never a false alarm. A pair with a single repetition has
no noise estimate: it is shown as UNTESTED and never counted as a regression.

Runs made at different times: each run is one draw of the machine and its new testbeds, and a
run's repetitions cannot show how far that draw moves a figure. The test adds that run-to-run
spread to each pair: measured from the database's other runs of the same test (same
configuration label, same test definition, same host; 3 or more needed), else the assumed
--run-spread. Over 20 identical compares on a 2-core VM a test's figure moved 0-24% from run to
run (median 6%); with that allowance no figure of 10 such pairs was flagged, where the
repetitions alone flagged 11 of 280. The price: one run a side found a 30% drop of one test in
about half the cases on that machine, a 50% drop in 58 of 60. For smaller changes, record
several runs (their spread is then measured) or run both setups side by side (`fsbench
compare`, whose interleaved rounds cancel what the machine does). --run-spread 0 decides on
the repetitions alone.

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
    let text = crate::present::history::render(&runs, crate::present::frame::terminal_width());
    super::out(&text)?;
    Ok(ExitCode::Success)
}

/// `fsbench show RUN`.
pub fn show(a: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = a.db.open_read_only()?;
    let rec = store.load(a.run)?;
    if rec.kind == RunKind::Integrity {
        return show_integrity(&store, &rec, a.format);
    }
    if rec.kind == RunKind::Profile {
        return show_profile(&store, a.run, a.format);
    }
    if rec.unfinished() {
        eprintln!(
            "fsbench: run {} did not finish (still running, or killed): showing the tests recorded so far",
            rec.id
        );
    }
    // HTML of a stored run: its page as `fsbench report RUN` makes it (its id, its command
    // line), not the page of a fresh run, which has neither.
    let bytes = match a.format {
        Format::Html => {
            crate::present::html::render(&[crate::present::html::ReportRun::from_record(&rec)])?
                .0
                .into_bytes()
        }
        f => exporter(f, ExportOptions { details: a.details, width: None, raw: a.raw })
            .export(&rec.report())?,
    };
    super::out_bytes(&bytes).context("writing to stdout")?;
    Ok(ExitCode::Success)
}

/// An integrity run as its HTML report sees it.
fn integrity_run(
    store: &crate::store::Store,
    rec: &crate::store::RunRecord,
) -> anyhow::Result<IntegrityRun> {
    let status = match (rec.status, rec.unfinished()) {
        (_, true) => "incomplete (killed, or still running)".to_string(),
        (s, false) => s.as_str().to_string(),
    };
    Ok(IntegrityRun {
        id: Some(rec.id),
        command_line: rec.command_line.clone(),
        started_unix_s: rec.started_unix_s,
        status,
        configs: store.load_integrity(rec.id)?,
    })
}

/// `fsbench show RUN` of an integrity run: the matrices as `fsbench integrity` printed them
/// (table, json), a row per case (csv), or the HTML report.
fn show_integrity(
    store: &crate::store::Store,
    rec: &crate::store::RunRecord,
    format: Format,
) -> anyhow::Result<ExitCode> {
    if rec.unfinished() {
        eprintln!(
            "fsbench: run {} did not finish (still running, or killed): showing the cases recorded so far",
            rec.id
        );
    }
    let run = integrity_run(store, rec)?;
    let mut out = std::io::stdout().lock();
    match format {
        Format::Table => {
            let width = crate::present::frame::terminal_width();
            for m in &run.configs {
                writeln!(out, "{}", crate::present::integrity::render(m, width))?;
            }
        }
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &run.configs)?;
            writeln!(out)?;
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(&mut out);
            w.write_record([
                "config",
                "target",
                "fault",
                "outcome",
                "expected",
                "block",
                "device",
                "offset_bytes",
                "evidence",
            ])?;
            for m in &run.configs {
                for c in &m.cases {
                    let d = c.damaged.first();
                    w.write_record([
                        m.config.as_str(),
                        c.target.name(),
                        c.fault.name(),
                        c.outcome.name(),
                        m.expected(c.target).map(|e| e.name()).unwrap_or(""),
                        c.block.as_str(),
                        &d.map(|d| d.device.to_string()).unwrap_or_default(),
                        &d.map(|d| d.offset_bytes.to_string()).unwrap_or_default(),
                        &crate::integrity::matrix::evidence_line(c),
                    ])?;
                }
            }
            w.flush()?;
        }
        Format::Html => {
            out.write_all(crate::present::html::integrity::render(&[run]).as_bytes())?
        }
        other => {
            return Err(UserError(format!(
                "run {} is an integrity run: it shows as table, json, csv or html, not {other:?}",
                rec.id
            ))
            .into())
        }
    }
    Ok(ExitCode::Success)
}

/// The stored profile of run `id`, or a bad-input error saying what is missing.
fn stored_profile(store: &crate::store::Store, id: i64) -> anyhow::Result<crate::profile::Profile> {
    store.load_profile(id)?.ok_or_else(|| {
        UserError(format!("run {id} is a profile, but its profile is not in the database")).into()
    })
}

/// `fsbench show ID` of a profile: the summary as `profile` printed it (table), the whole
/// profile (json), one row per file (csv), or the profile's page (html).
fn show_profile(store: &crate::store::Store, id: i64, format: Format) -> anyhow::Result<ExitCode> {
    let p = stored_profile(store, id)?;
    let bytes = match format {
        Format::Table => {
            crate::present::frame::fit(&p.render(), crate::present::frame::terminal_width())
                .into_bytes()
        }
        Format::Json => {
            let mut v = serde_json::to_vec_pretty(&p)?;
            v.push(b'\n');
            v
        }
        Format::Csv => p.files_csv().context("writing the CSV")?,
        Format::Html => crate::present::html::profile::render(&p)
            .context("drawing the charts")?
            .into_bytes(),
        Format::Bonnie => {
            return Err(UserError(format!(
                "run {id} is a profile: --format bonnie shows bonnie++'s tables of a run or comparison; a profile shows as table, json, csv (one row per file) or html"
            ))
            .into())
        }
    };
    super::out_bytes(&bytes).context("writing to stdout")?;
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
    for r in [&ra, &rb] {
        if r.kind == RunKind::Integrity {
            return Err(UserError(format!(
                "run {} is an integrity run (a matrix, no figures to compare); `fsbench show {}` prints it",
                r.id, r.id
            ))
            .into());
        }
        if r.kind == RunKind::Profile {
            return Err(UserError(format!(
                "run {} is a profile: diff compares the tests of runs and comparisons; `fsbench show {}` prints the profile",
                r.id, r.id
            ))
            .into());
        }
    }
    if !(a.run_spread >= 0.0 && a.run_spread < 1000.0) {
        return Err(
            UserError(format!("--run-spread {} must be a percentage >= 0", a.run_spread)).into()
        );
    }
    let rule = Rule {
        min_effect: a.min_effect / 100.0,
        run_spread: a.run_spread / 100.0,
        ..Rule::default()
    };
    let history = history_runs(&store, &ra, &rb)?;
    let d = crate::analysis::diff::diff_runs(&ra, &rb, &rule, &history);
    if d.rows.is_empty() {
        // An empty table and "0 compared" would read as "no change".
        let mut msg = format!(
            "no tests in common between run {} (suite {}) and run {} (suite {})",
            ra.id, ra.suite, rb.id, rb.suite
        );
        // Configurations that did not pair say why (at most a few lines).
        for n in d.notes.iter().filter(|n| !n.starts_with("test ")).take(4) {
            msg.push_str(&format!("\n  {n}"));
        }
        return Err(UserError(msg).into());
    }
    let width = crate::present::frame::terminal_width();
    super::out(&crate::present::diff::render(&d, &ra, &rb, &rule, width))?;
    Ok(if d.regressions() > 0 { ExitCode::TestFailed } else { ExitCode::Success })
}

/// Most other runs of one test `diff` reads to measure its run-to-run spread (the newest).
const HISTORY_RUNS: u32 = 20;

/// The other runs of each of run B's tests ([`crate::analysis::diff::History`]): same
/// configuration label, same test definition, recorded on B's host, neither A nor B.
fn history_runs(
    store: &crate::store::Store,
    ra: &crate::store::RunRecord,
    rb: &crate::store::RunRecord,
) -> anyhow::Result<crate::analysis::diff::History> {
    let mut loaded: std::collections::HashMap<i64, Option<crate::store::RunRecord>> =
        Default::default();
    let mut out = crate::analysis::diff::History::new();
    for c in &rb.configs {
        for t in &c.tests {
            let ids = store.same_test_runs(rb.id, &c.label, &t.id, HISTORY_RUNS + 1)?;
            for id in ids.into_iter().filter(|id| *id != ra.id) {
                // A run that no longer reads (damaged row) is left out, not an error.
                let r = loaded.entry(id).or_insert_with(|| {
                    store.load(id).ok().filter(|r| r.host.hostname == rb.host.hostname)
                });
                let Some(r) = r.as_ref() else { continue };
                let same = r
                    .configs
                    .iter()
                    .filter(|x| x.label == c.label)
                    .flat_map(|x| x.tests.iter().filter(|u| u.id == t.id));
                out.entry((c.label.clone(), t.id.clone())).or_default().extend(same.cloned());
            }
        }
    }
    Ok(out)
}

/// `fsbench report RUN... -o FILE.html`.
pub fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let store = a.db.open_read_only()?;
    let records = a.runs.iter().map(|id| store.load(*id)).collect::<Result<Vec<_>, _>>()?;
    let integrity = records.iter().filter(|r| r.kind == RunKind::Integrity).count();
    if integrity > 0 {
        if integrity < records.len() {
            return Err(UserError(
                "integrity runs have a report of their own: give `fsbench report` either only integrity runs or none".into(),
            )
            .into());
        }
        let runs =
            records.iter().map(|r| integrity_run(&store, r)).collect::<anyhow::Result<Vec<_>>>()?;
        let html = crate::present::html::integrity::render(&runs);
        return write_report(&a, html.as_bytes());
    }
    let mut runs = Vec::new();
    let mut profile = None;
    for rec in &records {
        if rec.kind == RunKind::Profile {
            let id = rec.id;
            if a.runs.len() > 1 {
                return Err(UserError(format!(
                    "run {id} is a profile: its report is a page of its own; \
                     run `fsbench report {id}` alone"
                ))
                .into());
            }
            profile = Some(stored_profile(&store, id)?);
            continue;
        }
        runs.push(ReportRun::from_record(rec));
    }
    if let Some(p) = profile {
        return report_profile(&p, a.runs[0], a.output.as_deref(), a.svg_dir.is_some());
    }
    let path = match &a.output {
        Some(p) => crate::present::html::write_html(&runs, p, a.svg_dir.as_deref())
            .map(|()| p.clone())
            .with_context(|| format!("writing the report {}", p.display()))?,
        None => {
            // A name fsbench chooses never replaces a file (NAME-2.html if it is taken).
            let ids: Vec<String> = a.runs.iter().map(|i| i.to_string()).collect();
            let p = PathBuf::from(format!("fsbench-report-{}.html", ids.join("-")));
            crate::present::html::write_html_new(&runs, &p, a.svg_dir.as_deref())
                .with_context(|| format!("writing the report {}", p.display()))?
        }
    };
    eprintln!("{}", super::written("report", &path));
    if let Some(d) = &a.svg_dir {
        eprintln!("fsbench: charts written to {}", d.display());
    }
    Ok(ExitCode::Success)
}

/// Write an integrity report where `fsbench report` writes its reports (`-o FILE`, or a new
/// `fsbench-report-RUN....html`).
fn write_report(a: &ReportArgs, html: &[u8]) -> anyhow::Result<ExitCode> {
    if a.svg_dir.is_some() {
        eprintln!("fsbench: note: an integrity report has no charts; --svg-dir is ignored");
    }
    let path = match &a.output {
        Some(p) => crate::sys::outfile::replace(p, html)
            .map(|()| p.clone())
            .with_context(|| format!("writing the report {}", p.display()))?,
        None => {
            let ids: Vec<String> = a.runs.iter().map(|i| i.to_string()).collect();
            let p = PathBuf::from(format!("fsbench-report-{}.html", ids.join("-")));
            crate::sys::outfile::create_unique(&p, html)
                .with_context(|| format!("writing the report {}", p.display()))?
        }
    };
    eprintln!("{}", super::written("report", &path));
    Ok(ExitCode::Success)
}

/// `fsbench report ID` of a profile: the page `profile --html` writes.
fn report_profile(
    p: &crate::profile::Profile,
    id: i64,
    output: Option<&std::path::Path>,
    svg: bool,
) -> anyhow::Result<ExitCode> {
    if svg {
        return Err(UserError(format!(
            "run {id} is a profile: its charts are drawn into the page; --svg-dir is for reports of runs and comparisons"
        ))
        .into());
    }
    let page = crate::present::html::profile::render(p).context("drawing the charts")?;
    let path = match output {
        Some(o) => o.to_path_buf(),
        None => {
            // Never replace a file fsbench named itself (NAME-2.html if it is taken).
            let mut n = 1;
            loop {
                let suffix = if n == 1 { String::new() } else { format!("-{n}") };
                let c = PathBuf::from(format!("fsbench-report-{id}{suffix}.html"));
                if !c.exists() {
                    break c;
                }
                n += 1;
            }
        }
    };
    std::fs::write(&path, page)
        .with_context(|| format!("writing the report {}", path.display()))?;
    eprintln!("{}", super::written("report", &path));
    Ok(ExitCode::Success)
}
