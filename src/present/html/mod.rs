//! `fsbench report`: one self-contained HTML file (inline CSS and inline SVG; no scripts, fonts or
//! anything else from the network) with, per run: the head-to-head table with winners and
//! factors, the summary lines, per-test throughput bars with error bars and latency percentile
//! curves, CPU per operation, the block-device counters and the environment.
//!
//! Everything is drawn from [`Report`] (a stored `run` is a comparison of one
//! configuration), so the report shows exactly what the terminal table showed.
//!
//! The markup is written with `maud`: every value put into the page is escaped by the macro, so
//! a label, a test's name or a command line cannot add markup. Only two things go in as they
//! are ([`maud::PreEscaped`]): fsbench's own stylesheet, and the SVG charts that `plotters`
//! drew (it escapes the text it puts into them).

pub mod charts;
pub mod cluster;
pub mod curve;
pub mod export;
mod h2h;
pub mod integrity;
pub mod names;
pub mod over_time;
mod panels;
mod per_test;
pub mod plain;
pub mod profile;

use crate::model::report::Report;
use crate::model::result::TestResult;
use crate::model::run::RunKind;
use crate::model::units::utc;
use crate::store::RunRecord;
use charts::ChartError;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use std::path::{Path, PathBuf};

/// One run as the report shows it.
#[derive(Debug, Clone)]
pub struct ReportRun {
    /// Its id in the results database (None with --no-store).
    pub id: Option<i64>,
    /// run or compare.
    pub kind: RunKind,
    /// The command line that made it.
    pub command_line: String,
    /// The results (a `run` has one configuration).
    pub report: Report,
}

impl ReportRun {
    /// From a stored run.
    pub fn from_record(r: &RunRecord) -> ReportRun {
        ReportRun {
            id: Some(r.id),
            kind: r.kind,
            command_line: r.command_line.clone(),
            report: r.report(),
        }
    }
}

/// A chart, also written on its own with `--svg-dir`.
#[derive(Debug, Clone)]
pub struct Chart {
    /// File name (`run12-test4-throughput.svg`).
    pub file_name: String,
    /// The SVG document.
    pub svg: String,
}

/// What can go wrong writing a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A chart could not be drawn.
    #[error(transparent)]
    Chart(#[from] ChartError),
    /// Writing a file failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl crate::sys::classify::Classify for ReportError {
    /// A chart or file that cannot be written fails on the system.
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// Render the report: the HTML document and every chart in it.
pub fn render(runs: &[ReportRun]) -> Result<(String, Vec<Chart>), ReportError> {
    let mut charts = Vec::new();
    let sections = runs
        .iter()
        .enumerate()
        .map(|(i, r)| run_section(&mut charts, r, i))
        .collect::<Result<Vec<Markup>, ReportError>>()?;
    let title = match runs {
        [one] => format!("fsbench report: {}", run_title(one, 0)),
        _ => format!("fsbench report: {} runs", runs.len()),
    };
    let names: Vec<String> = runs.iter().enumerate().map(|(i, r)| run_title(r, i)).collect();
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                // fsbench's own stylesheet, as it is: escaping would turn the quotes around
                // font names into entities, which CSS does not read.
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    h1 { "fsbench report" }
                    p.sub {
                        @if runs.len() > 1 {
                            "Runs: "
                            @for (i, n) in names.iter().enumerate() {
                                @if i > 0 { " · " }
                                a href={ "#run-" (i) } { (n) }
                            }
                        } @else if let Some(n) = names.first() {
                            (n)
                        }
                    }
                }
                main { @for s in &sections { (s) } }
                footer {
                    "Made by fsbench " (env!("CARGO_PKG_VERSION"))
                    ". Self-contained: no scripts, no fonts or images from the network."
                }
            }
        }
    };
    let mut html = page.into_string();
    html.push('\n');
    Ok((html, charts))
}

/// Render and write the report to `path` (replacing a file of that name), and each chart to
/// `svg_dir` if given. Files are written without following links ([`crate::sys::outfile`]).
pub fn write_html(
    runs: &[ReportRun],
    path: &Path,
    svg_dir: Option<&Path>,
) -> Result<(), ReportError> {
    let html = render_with_charts(runs, svg_dir)?;
    crate::sys::outfile::replace(path, html.as_bytes())
        .map_err(|source| ReportError::Write { path: path.into(), source })
}

/// [`write_html`] to a name fsbench chose: never replaces a file, takes `NAME-2.html`, ... if
/// the name is taken (another run's report). Returns the path written.
pub fn write_html_new(
    runs: &[ReportRun],
    path: &Path,
    svg_dir: Option<&Path>,
) -> Result<PathBuf, ReportError> {
    let html = render_with_charts(runs, svg_dir)?;
    crate::sys::outfile::create_unique(path, html.as_bytes())
        .map_err(|source| ReportError::Write { path: path.into(), source })
}

fn render_with_charts(runs: &[ReportRun], svg_dir: Option<&Path>) -> Result<String, ReportError> {
    let (html, charts) = render(runs)?;
    if let Some(dir) = svg_dir {
        // Opened without following another user's link, created if missing; each chart
        // replaced by rename, never written through a planted link.
        let dfd = crate::sys::outfile::open_dir(dir, true)
            .map_err(|source| ReportError::Write { path: dir.into(), source })?;
        for c in &charts {
            crate::sys::outfile::replace_at(
                std::os::fd::AsFd::as_fd(&dfd),
                &c.file_name,
                c.svg.as_bytes(),
            )
            .map_err(|source| ReportError::Write { path: dir.join(&c.file_name), source })?;
        }
    }
    Ok(html)
}

fn run_title(r: &ReportRun, i: usize) -> String {
    let rep = &r.report;
    let id = r.id.map(|id| format!("run {id}")).unwrap_or_else(|| format!("#{}", i + 1));
    let labels: Vec<&str> = rep.configs.iter().map(|c| c.label.as_str()).collect();
    format!(
        "{id}: {} {} ({}, {})",
        r.kind.as_str(),
        labels.join(" vs "),
        rep.suite,
        utc(rep.started_unix_s)
    )
}

/// A text made safe for a file name or an element id: letters, digits and `-` kept, anything
/// else `_`.
fn file_part(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// The little square in configuration `i`'s colour.
fn swatch(i: usize) -> Markup {
    html! { span.sw style={ "background:" (charts::css_colour(i)) } {} }
}

/// An SVG chart as `plotters` drew it, put into the page as it is (plotters escapes the text
/// it writes into the SVG).
fn svg(svg: &str) -> PreEscaped<&str> {
    PreEscaped(svg)
}

/// Whether a test's figures can be compared (ok and every cache precondition met).
fn comparable(t: &TestResult) -> bool {
    t.is_ok() && t.reps.iter().flat_map(|r| r.phases.iter()).all(|p| !p.timed || p.cache.met)
}

/// One run's section: its title and command, the verdict table, the plain-text summary
/// (folded), then every panel.
fn run_section(charts: &mut Vec<Chart>, run: &ReportRun, ri: usize) -> Result<Markup, ReportError> {
    let r = &run.report;
    let prefix = run.id.map(|i| format!("run{i}")).unwrap_or_else(|| format!("run-{}", ri + 1));
    let per_test = per_test::section(charts, r, &prefix)?;
    let cluster = cluster::panel(charts, r, &prefix)?;
    let interleaved = r.configs.len() > 1 && r.repeat > 1;
    Ok(html! {
        section.run id={ "run-" (ri) } {
            h2 { (run_title(run, ri)) }
            p.meta {
                "suite " b { (r.suite) } " · scale " b { (r.scale) } " · " b { (r.repetitions()) }
                " per configuration" @if interleaved { ", interleaved" }
                " · fsbench " (r.fsbench_version)
            }
            pre.cmd { (run.command_line) }
            // Where the run's time went, the terminal's last line.
            @if let Some(t) = &r.time {
                p.meta.time { (crate::present::time::line(t)) }
            }
            @if r.interrupted {
                p.warn { "This run did not finish (interrupted or killed): the figures are what was measured before it stopped." }
            }
            (legend(r))
            div.scroll { (h2h::head_to_head(r)) }
            // The long text after the verdicts, folded: open, it filled the first screen and
            // pushed the command line and the table out of sight.
            details.plain {
                summary { "Plain-text summary (to paste into an e-mail)" }
                pre.plain style="overflow-x:auto;font-size:12px" {
                    (plain::summary(r, &run.command_line))
                }
            }
            (h2h::why_panel(r))
            (per_test)
            (cluster)
            (panels::cpu(r))
            (panels::devices(r))
            (panels::trace(r))
            (panels::offcpu(r))
            (panels::environment(run))
            (panels::notes(r))
        }
    })
}

/// The configurations in their colours (and letters, where the charts name them by letter).
fn legend(r: &Report) -> Markup {
    let names = names::Names::of(r);
    html! {
        p.legend {
            @for (i, c) in r.configs.iter().enumerate() {
                span.lg {
                    @if names.lettered() { b { (names.short[i]) } " " }
                    (swatch(i)) (c.label)
                    @if r.configs.len() > 1 && i == r.baseline { " (baseline)" }
                }
            }
        }
    }
}

const CSS: &str = r#"
:root { --fg:#1d2327; --muted:#6b7378; --line:#e3e6e8; --bg:#fbfbfc; --accent:#2f6690; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color:var(--fg); background:var(--bg); }
header { padding: 18px 32px 10px; background:#fff; border-bottom:1px solid var(--line); }
header h1 { margin:0; font-size:22px; }
header .sub { margin:4px 0 0; color:var(--muted); }
main { padding: 0 32px 24px; max-width: 1500px; }
footer { padding: 12px 32px 24px; color:var(--muted); font-size:12px; }
section.run { background:#fff; border:1px solid var(--line); border-radius:8px; padding: 4px 22px 18px; margin-top:20px; }
h2 { font-size:18px; margin:16px 0 4px; }
h3 { font-size:15px; margin:22px 0 8px; padding-bottom:4px; border-bottom:1px solid var(--line); color:var(--accent); }
p.meta { margin:2px 0; color:var(--muted); }
pre.cmd { background:#f3f5f7; border-radius:4px; padding:6px 10px; margin:6px 0; white-space:pre-wrap; word-break:break-all; font-size:12px; }
p.warn { background:#fff4e0; border-left:4px solid #e8a33d; padding:6px 10px; }
p.rule { color:var(--muted); font-size:12px; margin:6px 0; max-width:1100px; }
.legend .lg { margin-right:18px; white-space:nowrap; }
.sw { display:inline-block; width:11px; height:11px; border-radius:2px; margin-right:6px; vertical-align:-1px; }
table { border-collapse:collapse; }
table.h2h, table.panel { width:100%; }
th, td { padding:5px 8px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
th { font-weight:600; background:#f6f7f8; font-size:12.5px; overflow-wrap:normal; word-break:normal; hyphens:none; }
div.scroll { overflow-x:auto; }
table.h2h td:nth-child(2) { min-width:16em; }
table.h2h th:first-child { overflow-wrap:normal; }
td.num, th.num { text-align:right; font-variant-numeric: tabular-nums; }
td.id { font-weight:600; white-space:nowrap; }
td.win { background:#e8f3e6; font-weight:600; }
.unit { color:var(--muted); font-weight:400; }
.ci { color:var(--muted); font-size:11px; font-weight:400; }
.muted { color:var(--muted); }
.bad { color:#b3261e; }
.good { color:#2e7d32; }
.summary { background:#f3f7fb; border-radius:6px; padding:2px 14px; margin:10px 0; }
.summary p { margin:8px 0; }
.grid { display:grid; grid-template-columns: repeat(auto-fill, minmax(470px, 1fr)); gap:14px; }
figure.card { margin:0; border:1px solid var(--line); border-radius:6px; padding:8px 10px 10px; background:#fff; }
figcaption { margin-bottom:4px; }
.chart svg { width:100%; height:auto; display:block; }
table.small { font-size:12px; margin-top:4px; }
table.small td, table.small th { padding:2px 8px; }
td.barcell { min-width:120px; }
td.barcell .bw { position:relative; overflow:hidden; }
td.barcell .hbar { position:absolute; left:0; top:0; bottom:0; max-width:100%; opacity:.28; border-radius:2px; }
td.barcell span { position:relative; font-variant-numeric: tabular-nums; }
table.kv th { width:110px; background:none; }
table.env pre { margin:0; white-space:pre-wrap; word-break:break-word; font-size:12px; }
ul.notes { font-size:12.5px; color:#3c4449; }
div.curve ul { font-size:12.5px; margin:4px 0; padding-left:18px; }
table.steps { font-size:12px; }
table.steps td, table.steps th { padding:2px 8px; white-space:nowrap; }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        let text = "<a href=\"x\">&'";
        let m = html! { p title=(text) { (text) } };
        let want = "&lt;a href=&quot;x&quot;&gt;&amp;'";
        assert_eq!(m.into_string(), format!("<p title=\"{want}\">{want}</p>"));
        assert_eq!(file_part("4/a b"), "4_a_b");
    }

    #[test]
    fn why_panel_shows_wide_draws_as_not_significant() {
        use crate::analysis::compare::tests::config;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let configs = vec![
            config("ext4", &[100.0, 30.0, 300.0], 900_000_000),
            config("xfs", &[180.0, 185.0, 175.0], 100_000_000),
        ];
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let out = h2h::why_panel(&r).into_string();
        assert!(
            out.contains("xfs 1.8× faster than ext4 in medians: <b>not significant</b>"),
            "{out}"
        );
        assert!(out.contains("fsync"), "{out}");
        // Where the time went, in grey after the reasons.
        assert!(out.contains("<li class=\"muted\">where the time went"), "{out}");
    }

    #[test]
    fn configurations_too_long_for_a_chart_row_are_lettered_never_cut() {
        use crate::analysis::compare::tests::config;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        // The same end: cut to fit a row (as 0.2 did, keeping the end) both read the same.
        let (a, b) = ("ext3:mount=data=writeback,noatime", "ext4:mount=data=writeback,noatime");
        let configs =
            vec![config(a, &[100.0, 101.0, 99.0], 0), config(b, &[230.0, 228.0, 232.0], 0)];
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let out = legend(&r).into_string();
        let sw = |i| swatch(i).into_string();
        assert!(out.contains(&format!("<b>A</b> {}{a} (baseline)", sw(0))), "{out}");
        assert!(out.contains(&format!("<b>B</b> {}{b}", sw(1))), "{out}");
        let mut charts = Vec::new();
        per_test::section(&mut charts, &r, "r1").unwrap();
        assert!(!charts.is_empty());
        for c in &charts {
            // Each chart, also saved on its own, keys its letters to the whole labels.
            assert!(c.svg.contains(&format!("A = {a}")) && c.svg.contains(&format!("B = {b}")));
            assert!(!c.svg.contains('…'), "{}", c.svg);
        }
        // Short labels stay as they are, with no key.
        let configs = vec![config("ext4", &[100.0], 0), config("xfs", &[230.0], 0)];
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let mut charts = Vec::new();
        per_test::section(&mut charts, &r, "r1").unwrap();
        for c in &charts {
            assert!(c.svg.contains("\next4\n") && !c.svg.contains(" = "), "{}", c.svg);
        }
    }

    #[test]
    fn the_time_split_is_under_the_command_line() {
        use crate::analysis::compare::tests::config;
        use crate::analysis::compare::{build_report, CompareOptions};
        let configs = vec![config("ext4", &[100.0], 1), config("xfs", &[200.0], 1)];
        let opts = CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let mut r = build_report(configs, &opts, 0, false);
        let time = crate::model::time::TimeSplit {
            total_s: 378.0,
            timed_s: 203.0,
            cache_s: 93.0,
            ..Default::default()
        };
        let want = crate::present::time::line(&time);
        r.time = Some(time);
        let run = ReportRun {
            id: Some(1),
            kind: RunKind::Compare,
            command_line: "fsbench compare".into(),
            report: r,
        };
        let (page, _) = render(&[run]).unwrap();
        let at = page.find("<p class=\"meta time\">").expect("the time line");
        assert!(page[at..].starts_with(&format!("<p class=\"meta time\">{want}</p>")), "{page}");
        assert!(page.find("<pre class=\"cmd\">").unwrap() < at);
    }

    #[test]
    fn the_machine_notes_are_in_the_html_too() {
        use crate::analysis::compare::tests::config;
        use crate::model::result::DeviceDelta;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let mut configs = vec![config("ext4", &[100.0, 101.0], 0), config("xfs", &[99.0, 98.0], 0)];
        for c in &mut configs {
            for r in &mut c.run.tests[0].reps {
                // 4K O_DIRECT reads at depth 1, 35 us each, asleep for most of it.
                let mut h = crate::stats::latency::new_histogram();
                h.record_n(35_000, 1000).unwrap();
                let p = &mut r.phases[0];
                (p.timed, p.iodepth, p.data_ops) = (true, 1, 1000);
                p.latency =
                    vec![crate::model::latency::summarize(crate::model::job::OpKind::Read, &h)];
                p.device = Some(DeviceDelta { reads_completed: 1000, ..Default::default() });
            }
        }
        let mut r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        // The run's host (a stored run's, when the report is made later), not this machine's.
        r.host = Default::default();
        let out = panels::notes(&r).into_string();
        assert!(!out.contains("halts an idle vCPU"), "{out}");
        r.host.cpuidle_driver = "haltpoll".into();
        r.host.guest_halt_poll_ns = Some(0);
        let out = panels::notes(&r).into_string();
        assert!(out.contains("this VM halts an idle vCPU at once"), "{out}");
        assert!(out.contains("test 1 sent short requests one at a time"), "{out}");
    }

    #[test]
    fn cpu_per_file_operation_counts_a_fuse_daemon() {
        use crate::analysis::compare::tests::config;
        use crate::model::memory::{MemDelta, MemSample};
        use crate::model::result::Figure;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let mut configs = vec![config("ext4", &[1.0], 0), config("zfs", &[1.0], 0)];
        let cpu = |n: u64| MemSample { daemon_cpu_nanos: Some(n), ..Default::default() };
        for (i, c) in configs.iter_mut().enumerate() {
            // A file-set test: 1000 unlinks, no read or write, 5 ms of the threads' CPU.
            let t = &mut c.run.tests[0];
            t.figure = Figure::OpsPerS;
            let r = &mut t.reps[0];
            (r.data_ops, r.file_ops, r.cpu_sys_nanos) = (0, 1000, 5_000_000);
            if i == 1 {
                // zfs-fuse's daemon used 15 ms more.
                r.phases[0].memory =
                    Some(MemDelta { before: cpu(1_000_000), after: cpu(16_000_000) });
            }
            t.finalize();
        }
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let out = panels::cpu(&r).into_string();
        assert!(out.contains("<span>5.00</span>"), "ext4 5 µs per unlink: {out}");
        assert!(out.contains("<span>20.0</span>"), "zfs 5 + 15 µs per unlink: {out}");
        assert!(out.contains("FUSE daemon 0.015 s"), "{out}");
    }
}
