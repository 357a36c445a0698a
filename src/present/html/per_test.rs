//! The report's cards per test: throughput bars with error bars and each repetition, latency
//! percentile curves with their figures, and, where recorded, the block trace's offsets and
//! throughput against filesystem fill. Each chart is also kept on its own (`--svg-dir`).

use super::charts::{self, Bar, Curve};
use super::{comparable, file_part, names, svg, swatch, Chart, ReportError};
use crate::model::job::OpKind;
use crate::model::report::{Report, TestRow};
use crate::model::result::TestResult;
use crate::model::units::{nanos, sig3};
use maud::{html, Markup};

/// The section: what the charts show, then a card per test.
pub(super) fn section(
    charts: &mut Vec<Chart>,
    r: &Report,
    prefix: &str,
) -> Result<Markup, ReportError> {
    let cards = r
        .tests
        .iter()
        .enumerate()
        .map(|(ti, row)| card(charts, r, ti, row, prefix))
        .collect::<Result<Vec<Markup>, ReportError>>()?;
    Ok(html! {
        h3 { "Throughput and latency per test" }
        p.rule { "Bars: median MiB/s (ops/s for file-set tests); error bars: 95% confidence interval of the geometric mean with 3 or more repetitions, min–max with 2, none with 1; dots: each repetition (a red ring: the first repetition stands out from the others). Faded bars: failed, or cache precondition not met (not compared). Curves: latency of the test's main operation at each percentile in the median repetition (HdrHistogram, 3 significant digits); the table under them gives its percentiles and, for a test with roles, what each role beside it did, in the same repetition: the figures the terminal, CSV and JSON show." }
        div.grid { @for c in &cards { (c) } }
    })
}

/// Test `ti`'s card.
fn card(
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    row: &TestRow,
    prefix: &str,
) -> Result<Markup, ReportError> {
    let throughput = throughput(charts, r, ti, row, prefix)?;
    let latency = latency(charts, r, ti, row, prefix)?;
    let offsets = offset_chart(charts, r, ti, &row.id, prefix)?;
    let fill = fill_chart(charts, r, ti, &row.id, prefix)?;
    let time = super::over_time::chart(charts, r, ti, &row.id, prefix)?;
    let curve = super::curve::chart(charts, r, ti, &row.id, prefix)?;
    let desc = r.configs.first().map(|c| c.run.tests[ti].description.as_str()).unwrap_or("");
    Ok(html! {
        figure.card id={ (prefix) "-test-" (file_part(&row.id)) } {
            figcaption { b { "Test " (row.id) } " " (row.name) " " span.muted { (desc) } }
            (throughput) (latency) (offsets) (fill) (time) (curve)
        }
    })
}

/// The throughput bars of test `ti`, one per configuration with a summary.
fn throughput(
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    row: &TestRow,
    prefix: &str,
) -> Result<Markup, ReportError> {
    let names = names::Names::of(r);
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
    if bars.is_empty() {
        return Ok(html! { p.muted { "No throughput figures." } });
    }
    let title = format!("test {} throughput", row.id);
    let key = names.key(charts::KEY_CHARS);
    let chart = charts::throughput_bars(&title, row.figure.unit(), &bars, &key)?;
    let out = html! { div.chart.throughput { (svg(&chart)) } };
    charts.push(Chart {
        file_name: format!("{prefix}-test{}-throughput.svg", file_part(&row.id)),
        svg: chart,
    });
    Ok(out)
}

/// The latency curves of test `ti`'s main operation and their percentiles in figures.
fn latency(
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    row: &TestRow,
    prefix: &str,
) -> Result<Markup, ReportError> {
    let Some(op) = main_op(r, ti) else { return Ok(figures_table(r, ti)) };
    let names = names::Names::of(r);
    let curves: Vec<Curve> = r
        .configs
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let h = median_histogram(&c.run.tests[ti], op)?;
            Some(Curve {
                label: names.short[i].clone(),
                config: i,
                points: charts::curve_points(&h),
            })
        })
        .filter(|c| !c.points.is_empty())
        .collect();
    if curves.is_empty() {
        return Ok(figures_table(r, ti));
    }
    let title = format!("test {} latency", row.id);
    let chart = charts::latency_curves(&title, op.name(), &curves, &names.key(charts::KEY_CHARS))?;
    let out = html! {
        div.chart.latency { (svg(&chart)) }
        (figures_table(r, ti))
    };
    charts.push(Chart {
        file_name: format!("{prefix}-test{}-latency.svg", file_part(&row.id)),
        svg: chart,
    });
    Ok(out)
}

/// The percentiles in figures, for reading off exact values, and what each role beside the
/// test did: the median repetition's ([`TestResult::main_latency`], [`TestResult::roles`]),
/// the numbers the terminal, CSV and JSON show.
fn figures_table(r: &Report, ti: usize) -> Markup {
    let any_roles = r.configs.iter().any(|c| !c.run.tests[ti].roles().is_empty());
    html! {
        table.small.latency-figures {
            tr { th {} th { "op" } th { "p50" } th { "p99" } th { "p99.9" } th { "max" } }
            @for (i, c) in r.configs.iter().enumerate() {
                @if let Some(l) = c.run.tests[ti].main_latency() {
                    tr {
                        td { (swatch(i)) (c.label) }
                        td { (l.op.name()) }
                        td.num { (nanos(l.p50_nanos)) }
                        td.num { (nanos(l.p99_nanos)) }
                        td.num { (nanos(l.p999_nanos)) }
                        td.num { (nanos(l.max_nanos)) }
                    }
                }
            }
        }
        @if any_roles {
            table.small.roles {
                tr {
                    th {} th { "role" } th { "MiB/s" } th { "op" } th { "p50" } th { "p99" }
                    th { "p99.9" } th { "sync p99" }
                }
                @for (i, c) in r.configs.iter().enumerate() {
                    @let t = &c.run.tests[ti];
                    @for (phase, role) in t.roles() {
                        @let main = role.main_op();
                        @let sync = role.sync_latency();
                        tr {
                            td { (swatch(i)) (c.label) }
                            td { (crate::present::roles::role_name(t, phase, role)) }
                            td.num { (sig3(role.mib_per_s)) }
                            td { (main.map(|l| l.op.name()).unwrap_or("–")) }
                            td.num { (main.map(|l| nanos(l.p50_nanos)).unwrap_or_else(|| "–".into())) }
                            td.num { (main.map(|l| nanos(l.p99_nanos)).unwrap_or_else(|| "–".into())) }
                            td.num { (main.map(|l| nanos(l.p999_nanos)).unwrap_or_else(|| "–".into())) }
                            td.num title=(sync.map(|l| l.op.name()).unwrap_or("")) {
                                (sync.map(|l| nanos(l.p99_nanos)).unwrap_or_else(|| "–".into()))
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The main op of a test: the data op with the most operations in the first configuration that
/// has one.
fn main_op(r: &Report, ti: usize) -> Option<OpKind> {
    r.configs.iter().find_map(|c| c.run.tests[ti].median_rep()?.main_op().map(|l| l.op))
}

/// The histogram of `op` in the median repetition: the one whose percentiles every output
/// shows, so the curve passes through the figures in the table under it.
fn median_histogram(t: &TestResult, op: OpKind) -> Option<hdrhistogram::Histogram<u64>> {
    let l = t.median_rep()?.latency_of(op)?;
    crate::stats::latency::decode(&l.histogram_b64)
}

/// Offset against time of the traced requests of test `ti`'s first timed phase, every
/// configuration in its colour (at most 1500 points each, evenly thinned).
fn offset_chart(
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    id: &str,
    prefix: &str,
) -> Result<Markup, ReportError> {
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
        return Ok(html! {});
    }
    let title = format!("test {id} offsets");
    let chart = charts::offset_scatter(&title, &sets, &names.key(charts::KEY_CHARS))?;
    let out = html! {
        div.chart.offsets {
            p.rule { "Block trace: device offset of issued requests over time (writes filled, reads hollow)." }
            (svg(&chart))
        }
    };
    charts.push(Chart {
        file_name: format!("{prefix}-test{}-offsets.svg", file_part(id)),
        svg: chart,
    });
    Ok(out)
}

/// Throughput against filesystem fill for tests with fill phases (the aging suites), each phase
/// of the median repetition that has a series, every configuration in its colour.
fn fill_chart(
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    id: &str,
    prefix: &str,
) -> Result<Markup, ReportError> {
    let config_names = names::Names::of(r);
    let mut phases: Vec<String> = Vec::new();
    for c in &r.configs {
        if let Some(m) = c.run.tests[ti].median_rep() {
            for p in m.phases.iter().filter(|p| p.fill_series.is_some()) {
                if !phases.contains(&p.name) {
                    phases.push(p.name.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for name in phases {
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
        let title = format!("test {id} phase {name} fill");
        let chart = charts::fill_lines(&title, &lines, &config_names.key(charts::KEY_CHARS))?;
        out.push(html! {
            div.chart.fill {
                p.rule { "Phase " b { (name) } ": throughput over each 10% step of filesystem fill." }
                (svg(&chart))
            }
        });
        charts.push(Chart {
            file_name: format!("{prefix}-test{}-{}-fill.svg", file_part(id), file_part(&name)),
            svg: chart,
        });
    }
    Ok(html! { @for m in &out { (m) } })
}
