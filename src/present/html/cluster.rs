//! The report's part for a multi-client run (`--mpi`): per test, a bar per rank of its own
//! figure (its bytes or operations over its own time, median repetition), the aggregate's
//! share per rank beside it, and a per-host table (ranks, bytes, CPU, devices, memory).
//! Nothing is shown for single-process runs.

use super::charts::{bar_frame, colour, ChartError};
use super::{file_part, svg, swatch, Chart, ReportError};
use crate::model::cluster::{ClusterRep, HostShare};
use crate::model::report::Report;
use crate::model::units::sig3;
use maud::{html, Markup};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One rank's bar.
#[derive(Debug, Clone)]
pub struct RankBar {
    /// `rank N (host)`.
    pub label: String,
    /// Configuration index (colour).
    pub config: usize,
    /// The rank's own figure (MiB/s or ops/s).
    pub value: f64,
    /// The slowest rank of its configuration (drawn with a dark outline).
    pub slowest: bool,
}

/// `rank N (host)`, the host cut short (keeping its start) so the label fits a chart row
/// whole: cutting the end of the label instead would lose the rank number.
fn rank_label(rank: impl std::fmt::Display, host: &str) -> String {
    const MAX: usize = super::charts::BAR_LABEL_CHARS;
    let head = format!("rank {rank} (");
    let room = MAX.saturating_sub(head.chars().count() + 1);
    if host.chars().count() <= room {
        format!("{head}{host})")
    } else {
        let keep: String = host.chars().take(room.saturating_sub(1)).collect();
        format!("{head}{keep}…)")
    }
}

/// Horizontal bars, one per rank (grouped by configuration), of each rank's own figure;
/// a dashed line per configuration at the aggregate divided by the ranks: a rank below it
/// held the others back.
pub fn rank_bars(
    title: &str,
    unit: &str,
    bars: &[RankBar],
    even_share: &[(usize, f64)],
) -> Result<String, ChartError> {
    let n = bars.len().max(1);
    let (w, h) = (440u32, 56 + 22 * n as u32);
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let top = bars.iter().map(|b| b.value).chain(even_share.iter().map(|e| e.1));
        let xmax = top.fold(0.0f64, f64::max).max(1e-9) * 1.15;
        let labels: Vec<&str> = bars.iter().map(|b| b.label.as_str()).collect();
        let x_desc = format!("{unit} per rank (median repetition)");
        let mut chart = bar_frame(&root, &labels, xmax, &x_desc, &err)?;
        let row = |i: usize| (n - 1 - i) as i32;
        for (i, b) in bars.iter().enumerate() {
            let (y0, y1) = (SegmentValue::Exact(row(i)), SegmentValue::Exact(row(i) + 1));
            let mut rect = Rectangle::new([(0.0, y0), (b.value, y1)], colour(b.config).filled());
            rect.set_margin(3, 3, 0, 0);
            chart.draw_series(std::iter::once(rect)).map_err(|e| err(&e))?;
            if b.slowest {
                let (y0, y1) = (SegmentValue::Exact(row(i)), SegmentValue::Exact(row(i) + 1));
                let mut edge = Rectangle::new([(0.0, y0), (b.value, y1)], BLACK.stroke_width(2));
                edge.set_margin(3, 3, 0, 0);
                chart.draw_series(std::iter::once(edge)).map_err(|e| err(&e))?;
            }
            let style = ("sans-serif", 11)
                .into_font()
                .color(&RGBColor(60, 60, 60))
                .pos(Pos::new(HPos::Left, VPos::Center));
            let at = (b.value + xmax * 0.012, SegmentValue::CenterOf(row(i)));
            chart
                .draw_series(std::iter::once(Text::new(sig3(b.value), at, style)))
                .map_err(|e| err(&e))?;
        }
        for &(config, x) in even_share {
            let rows: Vec<usize> = (0..bars.len()).filter(|i| bars[*i].config == config).collect();
            let (Some(&first), Some(&last)) = (rows.first(), rows.last()) else { continue };
            let line = PathElement::new(
                vec![(x, SegmentValue::Exact(row(first) + 1)), (x, SegmentValue::Exact(row(last)))],
                colour(config).mix(0.9).stroke_width(2),
            );
            chart.draw_series(std::iter::once(line)).map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

fn figure_of(c: &ClusterRep, rank: usize, ops: bool) -> f64 {
    let r = &c.per_rank[rank];
    if ops {
        r.ops_per_s
    } else {
        r.mib_per_s
    }
}

/// The multi-client section: per test, rank bars for every configuration that ran on several
/// ranks, and the per-host table. Empty when no configuration has cluster results.
pub fn panel(charts: &mut Vec<Chart>, r: &Report, prefix: &str) -> Result<Markup, ReportError> {
    let Some(info) = r.configs.iter().find_map(|c| c.run.cluster.as_ref()) else {
        return Ok(html! {});
    };
    let mut cards = Vec::new();
    let mut hosts = Vec::new();
    for (ti, row) in r.tests.iter().enumerate() {
        let ops = row.figure == crate::model::result::Figure::OpsPerS;
        let mut bars = Vec::new();
        let mut even = Vec::new();
        for (i, c) in r.configs.iter().enumerate() {
            let t = &c.run.tests[ti];
            let Some(m) = t.median_rep() else { continue };
            let Some(cr) = &m.cluster else { continue };
            for (k, pr) in cr.per_rank.iter().enumerate() {
                bars.push(RankBar {
                    label: rank_label(pr.rank, &pr.host),
                    config: i,
                    value: figure_of(cr, k, ops),
                    slowest: pr.rank == cr.spread.slowest_rank,
                });
            }
            let agg = if ops { m.ops_per_s } else { m.mib_per_s };
            even.push((i, agg / cr.ranks.max(1) as f64));
            for h in &cr.per_host {
                hosts.push(host_row(&row.id, i, &c.label, h));
            }
        }
        if bars.is_empty() {
            continue;
        }
        let title = format!("test {} per rank", row.id);
        let chart = rank_bars(&title, row.figure.unit(), &bars, &even)?;
        cards.push(html! {
            figure.card {
                figcaption { b { "Test " (row.id) } " " (row.name) " " span.muted { "per rank" } }
                div.chart.ranks { (svg(&chart)) }
            }
        });
        charts.push(Chart {
            file_name: format!("{prefix}-test{}-ranks.svg", file_part(&row.id)),
            svg: chart,
        });
    }
    let stonewall = info.stonewall_s.map(|s| format!(", stonewall {s} s")).unwrap_or_default();
    Ok(html! {
        h3 { "Clients (MPI)" }
        p.rule {
            (info.ranks) " ranks on " (info.hosts.len()) " host(s), " (info.mode) (stonewall)
            ". Bars: each rank's own figure (its bytes or operations over its own time) in the median repetition; the outlined bar is the slowest rank; the line is the aggregate divided by the ranks (all ranks' work over the last end minus the first start, on a common clock with offsets within ± "
            (sig3(info.clock_uncertainty_s * 1e6)) " µs)."
        }
        div.grid { @for c in &cards { (c) } }
        p.rule { "Per host, median repetition: its ranks' bytes and CPU in the timed phases; its devices and memory are the host's (read once per host, by its first rank). Memory: page cache, dirty and writeback at the end of each timed phase (change over the phase in brackets)." }
        table.panel {
            thead {
                tr {
                    th { "test" } th { "configuration" } th { "host" } th { "ranks" }
                    th.num { "MiB" } th.num { "CPU s" } th.num { "device write MiB" }
                    th { "memory (cached / dirty / writeback MiB)" }
                }
            }
            tbody { @for h in &hosts { (h) } }
        }
    })
}

fn mib(b: u64) -> String {
    if b == 0 {
        "0".into()
    } else {
        sig3(b as f64 / 1048576.0)
    }
}

fn signed_mib(after: u64, before: u64) -> String {
    let sign = if after >= before { "+" } else { "−" };
    format!("{sign}{}", mib(after.abs_diff(before)))
}

fn host_row(test: &str, i: usize, label: &str, h: &HostShare) -> Markup {
    let ranks: Vec<String> = h.ranks.iter().map(|r| r.to_string()).collect();
    let memory: Vec<String> = h
        .phases
        .iter()
        .filter(|p| p.timed)
        .filter_map(|p| {
            let m = p.memory?;
            Some(format!(
                "{}: {} ({}) / {} ({}) / {}",
                p.phase,
                mib(m.after.cached_bytes),
                signed_mib(m.after.cached_bytes, m.before.cached_bytes),
                mib(m.after.dirty_bytes),
                signed_mib(m.after.dirty_bytes, m.before.dirty_bytes),
                mib(m.after.writeback_bytes)
            ))
        })
        .collect();
    html! {
        tr {
            td.id { (test) }
            td { (swatch(i)) (label) }
            td { (h.host) }
            td { (ranks.join(", ")) }
            td.num { (mib(h.bytes)) }
            td.num { (sig3((h.cpu_user_nanos + h.cpu_sys_nanos) as f64 / 1e9)) }
            td.num { (h.device.as_ref().map(|d| mib(d.write_bytes)).unwrap_or_else(|| "–".into())) }
            td {
                @if memory.is_empty() { "–" }
                @for (k, m) in memory.iter().enumerate() {
                    @if k > 0 { br; }
                    (m)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_long_host_name_is_cut_and_the_rank_kept() {
        assert_eq!(super::rank_label(3, "n1"), "rank 3 (n1)");
        let l = super::rank_label(12, "node-a.cluster.example.org");
        assert!(l.starts_with("rank 12 (node-a") && l.ends_with("…)"), "{l}");
        assert!(l.chars().count() <= super::super::charts::BAR_LABEL_CHARS, "{l}");
    }
    use super::*;
    use crate::analysis::compare::CompareOptions;
    use crate::model::cluster::{ClusterInfo, HostPhase, RankFigure, Spread};
    use crate::model::memory::{MemDelta, MemSample};
    use crate::model::report::ConfigResult;
    use crate::model::result::{RepResult, RunReport, TestResult, TestStatus};

    fn run(label: &str, per_rank: &[(u32, &str, f64)]) -> RunReport {
        let cr = ClusterRep {
            ranks: per_rank.len() as u32,
            per_rank: per_rank
                .iter()
                .map(|(rank, host, mib)| RankFigure {
                    rank: *rank,
                    host: host.to_string(),
                    mib_per_s: *mib,
                    bytes: 1 << 20,
                    ..Default::default()
                })
                .collect(),
            spread: Spread { slowest_rank: 1, slowest_host: "h1".into(), ..Default::default() },
            per_host: vec![HostShare {
                host: "h1".into(),
                ranks: vec![0, 1],
                bytes: 2 << 20,
                phases: vec![HostPhase {
                    phase: "write".into(),
                    timed: true,
                    memory: Some(MemDelta {
                        before: MemSample::default(),
                        after: MemSample { dirty_bytes: 5 << 20, ..Default::default() },
                    }),
                    device: None,
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let rep = RepResult {
            complete: true,
            wall_nanos: 1_000_000_000,
            bytes: 2 << 20,
            mib_per_s: 2.0,
            cluster: Some(cr),
            ..Default::default()
        };
        let mut t = TestResult {
            id: "1".into(),
            name: "w".into(),
            description: String::new(),
            threads: 2,
            status: TestStatus::Ok,
            reps: vec![rep],
            complete_reps: 1,
            summary: None,
            warnings: Vec::new(),
            figure: Default::default(),
        };
        t.finalize();
        RunReport {
            fsbench_version: String::new(),
            started_unix_s: 0,
            host: Default::default(),
            target: crate::model::result::TargetInfo { label: label.into(), ..Default::default() },
            suite: "s".into(),
            scale: "1".into(),
            repeat: 1,
            tests: vec![t],
            interrupted: false,
            cluster: Some(ClusterInfo { ranks: 2, hosts: vec!["h1".into()], ..Default::default() }),
        }
    }

    #[test]
    fn a_bar_per_rank_and_a_row_per_host() {
        let configs = vec![
            ConfigResult {
                label: "/a".into(),
                env: None,
                run: run("/a", &[(0, "h1", 3.0), (1, "h1", 1.5)]),
            },
            ConfigResult {
                label: "/b".into(),
                env: None,
                run: run("/b", &[(0, "h1", 2.0), (1, "h1", 1.0)]),
            },
        ];
        let opts = CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let mut charts = Vec::new();
        let out = panel(&mut charts, &r, "run1").unwrap().into_string();
        assert_eq!(charts.len(), 1, "one chart per test");
        let svg = &charts[0].svg;
        assert_eq!(svg.matches("rank 0 (h1)").count(), 2, "a bar per rank and configuration");
        assert_eq!(svg.matches("rank 1 (h1)").count(), 2);
        assert!(out.contains("Clients (MPI)") && out.contains("2 ranks on 1 host(s)"), "{out}");
        assert_eq!(out.matches("<tr><td class=\"id\">1</td>").count(), 2, "a host row per config");
        assert!(out.contains("write: 0 (+0) / 5.00 (+5.00) / 0"), "memory per host: {out}");
        // No cluster: nothing.
        let mut single = r.clone();
        for c in &mut single.configs {
            c.run.cluster = None;
        }
        let none = panel(&mut Vec::new(), &single, "run1").unwrap().into_string();
        assert!(none.is_empty());
    }
}
