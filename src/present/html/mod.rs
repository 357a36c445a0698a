//! `fsbench report`: one self-contained HTML file (inline CSS and inline SVG; no scripts, fonts or
//! anything else from the network) with, per run: the head-to-head table with winners and
//! factors, the summary lines, per-test throughput bars with error bars and latency percentile
//! curves, CPU per operation, the block-device counters and the environment.
//!
//! Everything is drawn from [`Report`] (a stored `run` is a comparison of one
//! configuration), so the report shows exactly what the terminal table showed.

pub mod charts;
pub mod cluster;
pub mod export;
pub mod integrity;
pub mod names;
pub mod plain;
pub mod profile;

use crate::model::job::OpKind;
use crate::model::report::Report;
use crate::model::result::{Figure, RepResult, TestResult, TestStatus};
use crate::model::run::RunKind;
use crate::model::units::{nanos, sig3, utc};
use crate::model::verdict::Verdict;
use crate::store::RunRecord;
use charts::{Bar, ChartError, Curve};
use std::fmt::Write as _;
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
    let mut body = String::new();
    for (i, r) in runs.iter().enumerate() {
        run_section(&mut body, &mut charts, r, i)?;
    }
    let title = match runs {
        [one] => format!("fsbench report: {}", run_title(one, 0)),
        _ => format!("fsbench report: {} runs", runs.len()),
    };
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header><h1>fsbench report</h1><p class=\"sub\">",
        esc(&title)
    );
    let names: Vec<String> = runs.iter().enumerate().map(|(i, r)| run_title(r, i)).collect();
    if runs.len() > 1 {
        html.push_str("Runs: ");
        for (i, n) in names.iter().enumerate() {
            let _ = write!(
                html,
                "{}<a href=\"#run-{i}\">{}</a>",
                if i > 0 { " · " } else { "" },
                esc(n)
            );
        }
    } else if let Some(n) = names.first() {
        html.push_str(&esc(n));
    }
    let _ = write!(
        html,
        "</p></header>\n<main>\n{body}</main>\n<footer>Made by fsbench {}. Self-contained: no scripts, no fonts or images from the network.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
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

/// HTML escaping of text and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn file_part(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

fn swatch(i: usize) -> String {
    format!("<span class=\"sw\" style=\"background:{}\"></span>", charts::css_colour(i))
}

/// Whether a test's figures can be compared (ok and every cache precondition met).
fn comparable(t: &TestResult) -> bool {
    t.is_ok() && t.reps.iter().flat_map(|r| r.phases.iter()).all(|p| !p.timed || p.cache.met)
}

fn run_section(
    out: &mut String,
    charts: &mut Vec<Chart>,
    run: &ReportRun,
    ri: usize,
) -> Result<(), ReportError> {
    let r = &run.report;
    let prefix = run.id.map(|i| format!("run{i}")).unwrap_or_else(|| format!("run-{}", ri + 1));
    let _ = write!(
        out,
        "<section class=\"run\" id=\"run-{ri}\">\n<h2>{}</h2>\n",
        esc(&run_title(run, ri))
    );
    let _ = write!(
        out,
        "<p class=\"meta\">suite <b>{}</b> · scale <b>{}</b> · <b>{}</b> per configuration{} · fsbench {}</p>\n<pre class=\"cmd\">{}</pre>\n",
        esc(&r.suite),
        esc(&r.scale),
        r.repetitions(),
        if r.configs.len() > 1 {
            if r.repeat > 1 { ", interleaved" } else { "" }
        } else {
            ""
        },
        esc(&r.fsbench_version),
        esc(&run.command_line)
    );
    if r.interrupted {
        out.push_str("<p class=\"warn\">This run did not finish (interrupted or killed): the figures are what was measured before it stopped.</p>\n");
    }
    let _ = writeln!(
        out,
        "<details class=\"plain\" open><summary>Plain-text summary (to paste into an e-mail)</summary><pre class=\"plain\" style=\"overflow-x:auto;font-size:12px\">{}</pre></details>",
        esc(&plain::summary(r, &run.command_line))
    );
    legend(out, r);
    head_to_head(out, r);
    why_panel(out, r);
    per_test(out, charts, r, &prefix)?;
    cluster::panel(out, charts, r, &prefix)?;
    cpu_panel(out, r);
    device_panel(out, r);
    trace_panel(out, r);
    environment(out, run);
    notes(out, r);
    out.push_str("</section>\n");
    Ok(())
}

fn legend(out: &mut String, r: &Report) {
    out.push_str("<p class=\"legend\">");
    // Where the charts name configurations by letter, the legend gives each letter its label.
    let names = names::Names::of(r);
    for (i, c) in r.configs.iter().enumerate() {
        let base = if r.configs.len() > 1 && i == r.baseline { " (baseline)" } else { "" };
        let letter = if names.lettered() {
            format!("<b>{}</b> ", esc(&names.short[i]))
        } else {
            String::new()
        };
        let _ =
            write!(out, "<span class=\"lg\">{letter}{}{}{base}</span>", swatch(i), esc(&c.label));
    }
    out.push_str("</p>\n");
}

fn head_to_head(out: &mut String, r: &Report) {
    // One unit in the header when all tests have the same figure of merit; else each cell says.
    let unit = match r.tests.first().map(|t| t.figure) {
        Some(f) if r.tests.iter().all(|t| t.figure == f) => Some(f),
        None => Some(Figure::MibPerS),
        _ => None,
    };
    let n = r.configs.len();
    let two = n == 2;
    out.push_str("<h3>Head to head</h3>\n<table class=\"h2h\">\n<thead><tr><th>test</th><th>description</th><th title=\"engine, queue depth per thread, O_DIRECT or buffered\">I/O</th>");
    for (i, c) in r.configs.iter().enumerate() {
        let _ = write!(
            out,
            "<th class=\"num\">{}{}{}</th>",
            swatch(i),
            esc(&c.label),
            unit.map(|u| format!(" <span class=\"unit\">{}</span>", u.unit())).unwrap_or_default()
        );
        if n > 2 && i != r.baseline {
            let _ = write!(out, "<th>vs {}</th>", esc(&r.configs[r.baseline].label));
        }
    }
    if two {
        out.push_str("<th>winner / factor</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (ti, row) in r.tests.iter().enumerate() {
        let desc = r.configs.first().map(|c| c.run.tests[ti].description.as_str()).unwrap_or("");
        // Engine, depth and O_DIRECT come from the workload: the same in every configuration.
        let io = r.configs.iter().find_map(|c| c.run.tests[ti].io_words()).unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td class=\"id\">{}</td><td>{}</td><td class=\"io\">{}</td>",
            esc(&row.id),
            esc(desc),
            esc(&io)
        );
        // The winner's cell is highlighted.
        let winner = match row.vs_baseline.iter().flatten().next() {
            Some(Verdict::Win { winner, .. }) if two => {
                Some(if *winner == 0 { r.baseline } else { 1 })
            }
            _ => None,
        };
        for (i, c) in r.configs.iter().enumerate() {
            let t = &c.run.tests[ti];
            let fig = match (&t.status, row.median(i)) {
                (TestStatus::Failed { reason }, _) => {
                    format!("<span class=\"bad\" title=\"{}\">FAILED</span>", esc(reason))
                }
                (TestStatus::Skipped { reason }, _) => {
                    format!("<span class=\"muted\" title=\"{}\">not run</span>", esc(reason))
                }
                (_, Some(m)) => {
                    let ci = t
                        .summary
                        .as_ref()
                        .and_then(|s| Some((s.merit().ci95_low?, s.merit().ci95_high?)));
                    let mut fig = sig3(m);
                    if unit.is_none() {
                        let _ = write!(fig, " <span class=\"unit\">{}</span>", row.figure.unit());
                    }
                    if let Some((lo, hi)) = ci {
                        let _ = write!(
                            fig,
                            "<br><span class=\"ci\" title=\"95% confidence interval of the geometric mean\">{}–{}</span>",
                            sig3(lo),
                            sig3(hi)
                        );
                    }
                    if let (Figure::OpsPerS, Some(e)) =
                        (row.figure, row.median_elapsed_s.get(i).copied().flatten())
                    {
                        let _ = write!(fig, "<br><span class=\"ci\" title=\"elapsed seconds of the timed phases\">{} s</span>", sig3(e));
                    }
                    fig
                }
                (_, None) => "–".into(),
            };
            let cls = if winner == Some(i) { "num win" } else { "num" };
            let _ = write!(out, "<td class=\"{cls}\">{fig}</td>");
            if n > 2 && i != r.baseline {
                let v = row.vs_baseline.get(i).cloned().flatten();
                let _ = write!(
                    out,
                    "<td>{}{}</td>",
                    verdict_html(v.as_ref(), &r.configs[r.baseline].label, &c.label, false, i),
                    unsettled_html(row, i)
                );
            }
        }
        if two {
            let v = row.vs_baseline.get(1).cloned().flatten();
            let _ = write!(
                out,
                "<td>{}{}</td>",
                verdict_html(v.as_ref(), &r.configs[0].label, &r.configs[1].label, true, 1),
                unsettled_html(row, 1)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    let what = match unit {
        Some(Figure::MibPerS) => "MiB/s",
        Some(Figure::OpsPerS) => "ops/s (file-set operations; s: elapsed seconds of the timed phases)",
        None => "MiB/s for data tests, ops/s for file-set tests (s: elapsed seconds of the timed phases)",
    };
    if n > 1 {
        let _ = writeln!(
            out,
            "<p class=\"rule\">{what}: median over repetitions (small: 95% confidence interval of the geometric mean, Student's t on the logs). {}</p>",
            esc(&crate::model::verdict::rule_text(&r.rule))
        );
        out.push_str("<div class=\"summary\">");
        for p in &r.pairs {
            out.push_str("<p>");
            for (k, l) in p.lines.iter().enumerate() {
                let _ = write!(out, "{}{}", if k > 0 { "<br>" } else { "" }, esc(l));
            }
            out.push_str("</p>");
        }
        out.push_str("</div>\n");
    } else {
        let _ = writeln!(out, "<p class=\"rule\">{what}: median over repetitions (small: 95% confidence interval of the geometric mean, Student's t on the logs).</p>");
    }
}

/// For each test with a winner: the observed facts that differ most (the same rules as the
/// terminal's "Why" section).
fn why_panel(out: &mut String, r: &Report) {
    use crate::model::verdict::Verdict;
    let mut items = String::new();
    for (ti, row) in r.tests.iter().enumerate() {
        for (i, v) in row.vs_baseline.iter().enumerate() {
            // Wins, and draws whose medians lie further apart than the minimum effect (their
            // facts are filled by the rule), marked not significant.
            let mark = esc(&crate::model::report::verdict_mark(row, i));
            let (winner, factor, significant) = match v {
                Some(Verdict::Win { winner, factor, .. }) => (*winner, *factor, true),
                Some(Verdict::Draw { factor, .. })
                    if row.why.get(i).is_some_and(|w| !w.is_empty()) =>
                {
                    let (a, b) = (row.median(r.baseline), row.median(i));
                    (usize::from(b > a), *factor, false)
                }
                _ => continue,
            };
            let (w, l) = if winner == 0 { (r.baseline, i) } else { (i, r.baseline) };
            let _ = write!(
                items,
                "<li><b>Test {} {}</b>: {} {factor:.1}× faster than {}{mark}{}<ul>",
                esc(&row.id),
                esc(&r.configs[0].run.tests[ti].name),
                esc(&r.configs[w].label),
                esc(&r.configs[l].label),
                if significant {
                    ""
                } else {
                    " in medians: <b>not significant</b> (a draw; the facts may be noise too)"
                }
            );
            let why = row.why.get(i).map(Vec::as_slice).unwrap_or_default();
            if why.iter().all(|e| e.is_context()) {
                let _ = write!(
                    items,
                    "<li class=\"muted\">{}</li>",
                    esc(crate::model::explanation::NOTHING)
                );
            }
            for e in why {
                let class = if e.is_context() { " class=\"muted\"" } else { "" };
                let _ = write!(items, "<li{class}>{}</li>", esc(&e.text));
            }
            items.push_str("</ul></li>\n");
        }
    }
    if !items.is_empty() {
        let _ = write!(
            out,
            "<h3>Why</h3>\n<p class=\"rule\">Observed facts that differ most between winner and loser (device requests, CPU, time in fsync, extents, memory); in grey, where each side's time went and, with <code>--trace</code>, what the block layer saw.</p>\n<ul class=\"why\">\n{items}</ul>\n"
        );
    }
}

/// The unsettled mark of configuration `i`'s win ([`crate::model::report::TestRow::unsettled`]).
fn unsettled_html(row: &crate::model::report::TestRow, i: usize) -> String {
    if row.unsettled.get(i).copied().unwrap_or(false) {
        format!(
            " <span class=\"muted\" title=\"{}\">({})</span>",
            esc(crate::model::verdict::UNSETTLED_NOTE),
            crate::model::verdict::UNSETTLED_WORDS
        )
    } else {
        String::new()
    }
}

fn verdict_html(
    v: Option<&Verdict>,
    base: &str,
    other: &str,
    two: bool,
    other_idx: usize,
) -> String {
    match v {
        Some(Verdict::Win { winner, factor, tested }) => {
            let (w, wi) = if *winner == 0 { (base, 0) } else { (other, other_idx) };
            let untested = if *tested {
                ""
            } else {
                " <span class=\"muted\" title=\"one repetition: no significance test\">(1 rep)</span>"
            };
            if two {
                format!("{}<b>{}</b> {factor:.1}×{untested}", swatch(wi), esc(w))
            } else if *winner == 1 {
                format!("<b class=\"good\">{factor:.2}× faster</b>{untested}")
            } else {
                format!("<b class=\"bad\">{factor:.2}× slower</b>{untested}")
            }
        }
        Some(Verdict::Draw { factor, .. }) => {
            format!("draw <span class=\"muted\">({factor:.2}×)</span>")
        }
        Some(Verdict::NotCompared { reason }) => {
            format!("<span class=\"muted\" title=\"{}\">not compared</span>", esc(reason))
        }
        None => String::new(),
    }
}

/// The main op of a test: the data op with the most operations in the first configuration that
/// has one.
fn main_op(r: &Report, ti: usize) -> Option<OpKind> {
    r.configs.iter().find_map(|c| c.run.tests[ti].median_rep()?.main_op().map(|l| l.op))
}

/// One histogram of `op` merged over the complete repetitions (the partial one if none).
fn merged_histogram(t: &TestResult, op: OpKind) -> Option<hdrhistogram::Histogram<u64>> {
    let mut reps: Vec<&RepResult> = t.reps.iter().filter(|r| r.complete).collect();
    if reps.is_empty() {
        reps = t.reps.iter().collect();
    }
    let mut acc: Option<hdrhistogram::Histogram<u64>> = None;
    for rep in reps {
        let Some(h) =
            rep.latency_of(op).and_then(|l| crate::stats::latency::decode(&l.histogram_b64))
        else {
            continue;
        };
        match &mut acc {
            Some(a) => {
                if a.add(&h).is_err() {
                    continue;
                }
            }
            None => acc = Some(h),
        }
    }
    acc
}

fn per_test(
    out: &mut String,
    charts: &mut Vec<Chart>,
    r: &Report,
    prefix: &str,
) -> Result<(), ReportError> {
    out.push_str("<h3>Throughput and latency per test</h3>\n");
    let names = names::Names::of(r);
    let key = names.key(charts::KEY_CHARS);
    out.push_str("<p class=\"rule\">Bars: median MiB/s (ops/s for file-set tests); error bars: 95% confidence interval of the geometric mean with 3 or more repetitions, min–max with 2, none with 1; dots: each repetition (a red ring: the first repetition stands out from the others). Faded bars: failed, or cache precondition not met (not compared). Curves: latency of the test's main operation at each percentile, all repetitions merged (HdrHistogram, 3 significant digits).</p>\n<div class=\"grid\">\n");
    for (ti, row) in r.tests.iter().enumerate() {
        let bars: Vec<Bar> = r
            .configs
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let t = &c.run.tests[ti];
                let s = t.summary.as_ref()?;
                let m = s.merit();
                let range = match s.n {
                    0 | 1 => None,
                    2 => Some((m.min, m.max)),
                    _ => m.ci95_low.zip(m.ci95_high),
                };
                Some(Bar {
                    label: names.short[i].clone(),
                    config: i,
                    value: m.median,
                    range,
                    muted: !comparable(t),
                    reps: t.reps.iter().filter(|r| r.complete).map(|r| t.figure.value(r)).collect(),
                })
            })
            .collect();
        let _ = writeln!(
            out,
            "<figure class=\"card\" id=\"{}-test-{}\"><figcaption><b>Test {}</b> {} <span class=\"muted\">{}</span></figcaption>",
            esc(prefix),
            esc(&file_part(&row.id)),
            esc(&row.id),
            esc(&row.name),
            esc(&r.configs.first().map(|c| c.run.tests[ti].description.clone()).unwrap_or_default())
        );
        if bars.is_empty() {
            out.push_str("<p class=\"muted\">No throughput figures.</p>");
        } else {
            let title = format!("test {} throughput", row.id);
            let svg = charts::throughput_bars(&title, row.figure.unit(), &bars, &key)?;
            out.push_str("<div class=\"chart throughput\">");
            out.push_str(&svg);
            out.push_str("</div>\n");
            charts.push(Chart {
                file_name: format!("{prefix}-test{}-throughput.svg", file_part(&row.id)),
                svg,
            });
        }
        if let Some(op) = main_op(r, ti) {
            let curves: Vec<Curve> = r
                .configs
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let h = merged_histogram(&c.run.tests[ti], op)?;
                    Some(Curve {
                        label: names.short[i].clone(),
                        config: i,
                        points: charts::curve_points(&h),
                    })
                })
                .filter(|c| !c.points.is_empty())
                .collect();
            if !curves.is_empty() {
                let svg = charts::latency_curves(
                    &format!("test {} latency", row.id),
                    op.name(),
                    &curves,
                    &key,
                )?;
                out.push_str("<div class=\"chart latency\">");
                out.push_str(&svg);
                out.push_str("</div>\n");
                charts.push(Chart {
                    file_name: format!("{prefix}-test{}-latency.svg", file_part(&row.id)),
                    svg,
                });
                // The percentiles in figures, too, for reading off exact values.
                out.push_str("<table class=\"small\"><tr><th></th><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>");
                for (i, c) in r.configs.iter().enumerate() {
                    if let Some(l) = c.run.tests[ti].median_rep().and_then(|m| m.latency_of(op)) {
                        let _ = write!(
                            out,
                            "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                            swatch(i),
                            esc(&c.label),
                            nanos(l.p50_nanos),
                            nanos(l.p99_nanos),
                            nanos(l.p999_nanos),
                            nanos(l.max_nanos)
                        );
                    }
                }
                out.push_str("</table>\n");
            }
        }
        offset_chart(out, charts, r, ti, &row.id, prefix)?;
        fill_chart(out, charts, r, ti, &row.id, prefix)?;
        out.push_str("</figure>\n");
    }
    out.push_str("</div>\n");
    Ok(())
}

fn bar_cell(value: f64, max: f64, i: usize, text: &str, title: &str) -> String {
    let pct = if max > 0.0 { (value / max * 100.0).clamp(0.0, 100.0) } else { 0.0 };
    format!(
        "<td class=\"barcell\" title=\"{}\"><div class=\"hbar\" style=\"width:{pct:.1}%;background:{}\"></div><span>{}</span></td>",
        esc(title),
        charts::css_colour(i),
        esc(text)
    )
}

fn cpu_panel(out: &mut String, r: &Report) {
    out.push_str("<h3>CPU per operation</h3>\n<p class=\"rule\">User + system CPU time of all threads over the timed phases, plus a FUSE daemon's (zfs-fuse) CPU, divided by the read/write operations, or the file operations of a file-set test (median repetition). Lower is cheaper.</p>\n<table class=\"panel\"><thead><tr><th>test</th>");
    for (i, c) in r.configs.iter().enumerate() {
        let _ = write!(
            out,
            "<th>{}{} <span class=\"unit\">µs/op</span></th>",
            swatch(i),
            esc(&c.label)
        );
    }
    out.push_str("</tr></thead><tbody>\n");
    for (ti, row) in r.tests.iter().enumerate() {
        let per_op: Vec<Option<(f64, &RepResult)>> = r
            .configs
            .iter()
            .map(|c| {
                let m = c.run.tests[ti].median_rep()?;
                // File-set tests: per file operation (create, unlink, ...); a FUSE daemon's
                // CPU is the filesystem's and counts.
                let ops = if m.file_ops > 0 { m.file_ops } else { m.data_ops };
                let daemon = crate::model::facts::daemon_cpu_nanos(m).unwrap_or(0);
                (ops > 0).then(|| {
                    ((m.cpu_user_nanos + m.cpu_sys_nanos + daemon) as f64 / ops as f64 / 1e3, m)
                })
            })
            .collect();
        let max = per_op.iter().flatten().map(|x| x.0).fold(0.0, f64::max);
        let _ = write!(
            out,
            "<tr><td class=\"id\">{} <span class=\"muted\">{}</span></td>",
            esc(&row.id),
            esc(&row.name)
        );
        for (i, v) in per_op.iter().enumerate() {
            match v {
                Some((us, m)) => {
                    let daemon = crate::model::facts::daemon_cpu_nanos(m)
                        .map(|d| format!(", FUSE daemon {:.3} s", d as f64 / 1e9))
                        .unwrap_or_default();
                    let title = format!(
                        "user {:.3} s, system {:.3} s, {:.0}% of a core per thread{daemon}",
                        m.cpu_user_nanos as f64 / 1e9,
                        m.cpu_sys_nanos as f64 / 1e9,
                        m.cpu_pct_per_thread
                    );
                    out.push_str(&bar_cell(*us, max, i, &sig3(*us), &title));
                }
                None => out.push_str("<td class=\"muted\">–</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// Offset against time of the traced requests of test `ti`'s first timed phase, every
/// configuration in its colour (at most 1500 points each, evenly thinned).
fn offset_chart(
    out: &mut String,
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    id: &str,
    prefix: &str,
) -> Result<(), ReportError> {
    use crate::model::trace::Op;
    let names = names::Names::of(r);
    let mut sets = Vec::new();
    for (i, c) in r.configs.iter().enumerate() {
        let Some(m) = c.run.tests[ti].median_rep() else { continue };
        let Some(t) = m.phases.iter().filter(|p| p.timed).find_map(|p| p.trace.as_ref()) else {
            continue;
        };
        let pts = &t.offsets.points;
        if pts.is_empty() {
            continue;
        }
        let step = pts.len().div_ceil(1500).max(1);
        sets.push(charts::Scatter {
            label: names.short[i].clone(),
            config: i,
            points: pts
                .iter()
                .step_by(step)
                .map(|p| (p.t_ms, p.offset_bytes as f64 / 1048576.0, p.op == Op::Write))
                .collect(),
        });
    }
    if sets.is_empty() {
        return Ok(());
    }
    let svg = charts::offset_scatter(
        &format!("test {id} offsets"),
        &sets,
        &names.key(charts::KEY_CHARS),
    )?;
    out.push_str("<div class=\"chart offsets\"><p class=\"rule\">Block trace: device offset of issued requests over time (writes filled, reads hollow).</p>");
    out.push_str(&svg);
    out.push_str("</div>\n");
    charts.push(Chart { file_name: format!("{prefix}-test{}-offsets.svg", file_part(id)), svg });
    Ok(())
}

/// Throughput against filesystem fill for tests with fill phases (the aging suites), each phase
/// of the median repetition that has a series, every configuration in its colour.
fn fill_chart(
    out: &mut String,
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    id: &str,
    prefix: &str,
) -> Result<(), ReportError> {
    let config_names = names::Names::of(r);
    let mut names: Vec<String> = Vec::new();
    for c in &r.configs {
        if let Some(m) = c.run.tests[ti].median_rep() {
            for p in m.phases.iter().filter(|p| p.fill_series.is_some()) {
                if !names.contains(&p.name) {
                    names.push(p.name.clone());
                }
            }
        }
    }
    for name in names {
        let lines: Vec<charts::FillLine> = r
            .configs
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let m = c.run.tests[ti].median_rep()?;
                let p = m.phases.iter().find(|p| p.name == name)?;
                let pts = p.fill_series.as_ref()?;
                Some(charts::FillLine {
                    label: config_names.short[i].clone(),
                    config: i,
                    points: pts.iter().map(|f| (f.fill * 100.0, f.mib_per_s)).collect(),
                })
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let svg = charts::fill_lines(
            &format!("test {id} phase {name} fill"),
            &lines,
            &config_names.key(charts::KEY_CHARS),
        )?;
        let _ = write!(
            out,
            "<div class=\"chart fill\"><p class=\"rule\">Phase <b>{}</b>: throughput over each 10% step of filesystem fill.</p>",
            esc(&name)
        );
        out.push_str(&svg);
        out.push_str("</div>\n");
        charts.push(Chart {
            file_name: format!("{prefix}-test{}-{}-fill.svg", file_part(id), file_part(&name)),
            svg,
        });
    }
    Ok(())
}

/// Block-trace totals per test and configuration (`--trace`), as blktrace summarised them.
fn trace_panel(out: &mut String, r: &Report) {
    use crate::model::units::fmt_bytes;
    let any = r.tests.iter().any(|row| row.facts.iter().flatten().any(|f| f.trace.is_some()));
    if !any {
        return;
    }
    out.push_str("<h3>Block trace</h3>\n<p class=\"rule\">From fsbench's tracefs instance over the timed phases of the median repetition: bios queued (block_bio_queue), merged into existing requests, and requests issued to the driver, with their average sizes; highest queue depth; device latency (issue to complete) p99.</p>\n<table class=\"panel\"><thead><tr><th>test</th><th>configuration</th><th class=\"num\">write bios</th><th class=\"num\">merged</th><th class=\"num\">write requests</th><th class=\"num\">avg request</th><th class=\"num\">read bios</th><th class=\"num\">read requests</th><th class=\"num\">max depth</th><th class=\"num\">device p99</th></tr></thead><tbody>\n");
    for row in &r.tests {
        for (i, c) in r.configs.iter().enumerate() {
            let Some(t) = row.facts.get(i).and_then(|f| f.as_ref()).and_then(|f| f.trace) else {
                continue;
            };
            let avg = t
                .writes
                .request_bytes
                .checked_div(t.writes.requests)
                .map(fmt_bytes)
                .unwrap_or_else(|| "–".into());
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&row.id),
                swatch(i),
                esc(&c.label),
                t.writes.bios,
                t.writes.bio_merges,
                t.writes.requests,
                avg,
                t.reads.bios,
                t.reads.requests,
                t.max_queue_depth,
                t.device_p99_nanos.map(nanos).unwrap_or_else(|| "–".into()),
            );
        }
    }
    out.push_str("</tbody></table>\n");
}

fn device_panel(out: &mut String, r: &Report) {
    out.push_str("<h3>Block devices</h3>\n");
    let any = r.configs.iter().any(|c| {
        c.run
            .tests
            .iter()
            .any(|t| t.reps.iter().any(|rep| rep.phases.iter().any(|p| p.device.is_some())))
    });
    if !any {
        out.push_str("<p class=\"muted\">No block-device counters: the targets have no block device fsbench could read (/sys/block/DEV/stat), e.g. tmpfs.</p>\n");
        return;
    }
    out.push_str("<p class=\"rule\">Changes of /sys/block/DEV/stat over the timed phases of the median repetition. Amplification: bytes the device wrote / bytes the test wrote. Busy: n/a where the kernel's counter grew by more than the phase lasted (it took in time from outside the phase).</p>\n<table class=\"panel\"><thead><tr><th>test</th><th>configuration</th><th>device</th><th class=\"num\">reads</th><th class=\"num\">read MiB</th><th class=\"num\">writes</th><th class=\"num\">write MiB</th><th class=\"num\">avg write</th><th class=\"num\">merged</th><th class=\"num\">busy</th><th>write amplification</th></tr></thead><tbody>\n");
    let mut amp_max = 0.0f64;
    let mut rows = Vec::new();
    for (ti, row) in r.tests.iter().enumerate() {
        for (i, c) in r.configs.iter().enumerate() {
            let Some(m) = c.run.tests[ti].median_rep() else { continue };
            let mut d = crate::model::result::DeviceDelta::default();
            let mut app_written = 0u64;
            let mut seen = false;
            for p in m.phases.iter().filter(|p| p.timed) {
                app_written += p.bytes_written;
                if let Some(x) = &p.device {
                    seen = true;
                    d.add(x);
                }
            }
            if !seen {
                continue;
            }
            let amp = (app_written > 0).then(|| d.write_bytes as f64 / app_written as f64);
            amp_max = amp_max.max(amp.unwrap_or(0.0));
            rows.push((row.id.clone(), i, c.label.clone(), d, amp));
        }
    }
    for (id, i, label, d, amp) in rows {
        let mib = |b: u64| if b == 0 { "0".into() } else { sig3(b as f64 / 1048576.0) };
        let avg = if d.writes_completed > 0 {
            format!("{} KiB", sig3(d.write_bytes as f64 / d.writes_completed as f64 / 1024.0))
        } else {
            "–".into()
        };
        let _ = write!(
            out,
            "<tr><td class=\"id\">{}</td><td>{}{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            esc(&id),
            swatch(i),
            esc(&label),
            esc(&(d.devices.join(",") + if d.shared { " (device-wide)" } else { "" })),
            d.reads_completed,
            mib(d.read_bytes),
            d.writes_completed,
            mib(d.write_bytes),
            avg,
            d.reads_merged + d.writes_merged,
            if d.busy_overcounted { "n/a".to_string() } else { format!("{} ms", d.busy_ms) }
        );
        match amp {
            Some(a) => out.push_str(&bar_cell(
                a,
                amp_max,
                i,
                &format!("{a:.2}×"),
                "device bytes written / bytes written by the test",
            )),
            None => out.push_str("<td class=\"muted\">–</td>"),
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

fn environment(out: &mut String, run: &ReportRun) {
    let r = &run.report;
    let h = &r.host;
    out.push_str("<h3>Environment</h3>\n<table class=\"kv\">");
    let kv = |out: &mut String, k: &str, v: &str| {
        let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    };
    kv(out, "host", &h.hostname);
    kv(out, "kernel", &h.kernel);
    kv(out, "CPU", &format!("{} × {}", h.cpus, h.cpu_model));
    kv(out, "memory", &crate::model::units::fmt_bytes(h.memory_bytes));
    if h.free_page_reporting {
        kv(out, "free page reporting", crate::present::host::PAGE_REPORTING_WORDS);
    }
    if let Some(w) = crate::present::host::idle_words(h) {
        kv(out, "CPU idle", &w);
    }
    kv(out, "started", &utc(r.started_unix_s));
    kv(out, "fsbench", &r.fsbench_version);
    if r.configs.len() > 1 {
        kv(
            out,
            "filesystems",
            if r.fresh_per_test {
                "fresh for every test"
            } else {
                "one per configuration for the suite"
            },
        );
    }
    out.push_str("</table>\n<table class=\"panel env\"><thead><tr><th>configuration</th><th>filesystem</th><th>made with</th><th>mount options in effect</th><th>backing</th></tr></thead><tbody>\n");
    for (i, c) in r.configs.iter().enumerate() {
        let t = &c.run.target;
        let (fs, made, opts, backing) = match &c.env {
            Some(e) => {
                let mut made = e.mkfs_cmdline.clone().unwrap_or_else(|| "–".into());
                for p in &e.post_create_cmdlines {
                    made.push('\n');
                    made.push_str(p);
                }
                if let Some(v) = &e.tool_version {
                    made.push_str(&format!("\n({v})"));
                }
                let mut opts = e.mount_options.clone();
                if !e.super_options.is_empty() {
                    opts.push_str(&format!("\nsuper: {}", e.super_options));
                }
                for (k, v) in &e.zfs_properties {
                    opts.push_str(&format!("\n{k}={v}"));
                }
                if let Some(w) = crate::observe::compress::words(&c.run.tests) {
                    opts.push_str(&format!("\n{w}"));
                }
                (
                    e.fstype.clone(),
                    made,
                    opts,
                    format!(
                        "{} ({} device{}, {} each)",
                        e.backing,
                        e.devices,
                        if e.devices == 1 { "" } else { "s" },
                        crate::model::units::fmt_bytes(e.device_size_bytes)
                    ),
                )
            }
            None => (
                t.fs_type.clone(),
                "existing directory".into(),
                t.mount_options.clone(),
                format!(
                    "{} on {}{}",
                    t.dir,
                    t.mount_source,
                    if t.devices.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", t.devices.join(","))
                    }
                ),
            ),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}{}</td><td>{}</td><td><pre>{}</pre></td><td><pre>{}</pre></td><td>{}</td></tr>",
            swatch(i),
            esc(&c.label),
            esc(&fs),
            esc(&made),
            esc(&opts),
            esc(&backing)
        );
    }
    out.push_str("</tbody></table>\n");
}

fn notes(out: &mut String, r: &Report) {
    let mut notes = Vec::new();
    for c in &r.configs {
        for t in &c.run.tests {
            match &t.status {
                TestStatus::Failed { reason } => {
                    notes.push(format!("{} test {} failed: {reason}", c.label, t.id))
                }
                TestStatus::Skipped { reason } => {
                    notes.push(format!("{} test {} not run: {reason}", c.label, t.id))
                }
                _ => {}
            }
            for w in &t.warnings {
                notes.push(format!("{} test {}: {w}", c.label, t.id));
            }
        }
    }
    for row in &r.tests {
        for v in row.vs_baseline.iter().flatten() {
            if let Verdict::NotCompared { reason } = v {
                notes.push(format!("test {} not compared: {reason}", row.id));
            }
        }
    }
    // What the machine adds to some figures, as under the terminal's tables.
    notes.extend(crate::present::host::notes(
        &r.host,
        r.configs.iter().flat_map(|c| c.run.tests.iter()),
    ));
    if notes.is_empty() {
        return;
    }
    out.push_str("<h3>Notes</h3>\n<ul class=\"notes\">");
    for n in notes {
        let _ = write!(out, "<li>{}</li>", esc(&n));
    }
    out.push_str("</ul>\n");
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
th { font-weight:600; background:#f6f7f8; font-size:12.5px; overflow-wrap:anywhere; }
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
.chart svg { max-width:100%; height:auto; display:block; }
table.small { font-size:12px; margin-top:4px; }
table.small td, table.small th { padding:2px 8px; }
td.barcell { position:relative; min-width:120px; }
td.barcell .hbar { position:absolute; left:0; top:4px; bottom:4px; opacity:.28; border-radius:2px; }
td.barcell span { position:relative; font-variant-numeric: tabular-nums; }
table.kv th { width:110px; background:none; }
table.env pre { margin:0; white-space:pre-wrap; word-break:break-word; font-size:12px; }
ul.notes { font-size:12.5px; color:#3c4449; }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
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
        let mut out = String::new();
        why_panel(&mut out, &r);
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
        let mut out = String::new();
        legend(&mut out, &r);
        assert!(out.contains(&format!("<b>A</b> {}{a} (baseline)", swatch(0))), "{out}");
        assert!(out.contains(&format!("<b>B</b> {}{b}", swatch(1))), "{out}");
        let (mut out, mut charts) = (String::new(), Vec::new());
        per_test(&mut out, &mut charts, &r, "r1").unwrap();
        assert!(!charts.is_empty());
        for c in &charts {
            // Each chart, also saved on its own, keys its letters to the whole labels.
            assert!(c.svg.contains(&format!("A = {a}")) && c.svg.contains(&format!("B = {b}")));
            assert!(!c.svg.contains('…'), "{}", c.svg);
        }
        // Short labels stay as they are, with no key.
        let configs = vec![config("ext4", &[100.0], 0), config("xfs", &[230.0], 0)];
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let (mut out, mut charts) = (String::new(), Vec::new());
        per_test(&mut out, &mut charts, &r, "r1").unwrap();
        for c in &charts {
            assert!(c.svg.contains("\next4\n") && !c.svg.contains(" = "), "{}", c.svg);
        }
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
        let mut out = String::new();
        notes(&mut out, &r);
        assert!(!out.contains("halts an idle vCPU"), "{out}");
        r.host.cpuidle_driver = "haltpoll".into();
        r.host.guest_halt_poll_ns = Some(0);
        notes(&mut out, &r);
        assert!(out.contains("this VM halts an idle vCPU at once"), "{out}");
        assert!(out.contains("test 1 sent short requests one at a time"), "{out}");
    }

    #[test]
    fn cpu_per_file_operation_counts_a_fuse_daemon() {
        use crate::analysis::compare::tests::config;
        use crate::model::memory::{MemDelta, MemSample};
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
        let mut out = String::new();
        cpu_panel(&mut out, &r);
        assert!(out.contains("<span>5.00</span>"), "ext4 5 µs per unlink: {out}");
        assert!(out.contains("<span>20.0</span>"), "zfs 5 + 15 µs per unlink: {out}");
        assert!(out.contains("FUSE daemon 0.015 s"), "{out}");
    }
}
