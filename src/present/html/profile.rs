//! The profile as one self-contained HTML page (`--html FILE`): the summary, seekwatcher's
//! offset-vs-time plot coloured by kind of file (or metadata / unattributed), throughput and
//! IOPS over time, and the per-file table.

use crate::model::trace::Op;
use crate::present::html::charts::{self, ChartError, Scatter};
use crate::profile::attribute::Owner;
use crate::profile::summary::human;
use crate::profile::Profile;
use maud::{html, PreEscaped, DOCTYPE};
use plotters::prelude::*;

/// The class a request is coloured by: the kind of the file holding most of its bytes.
fn class_of(p: &Profile, r: &crate::profile::attribute::Request) -> String {
    let mut best: Option<(&Owner, u64)> = None;
    for part in &r.parts {
        if best.is_none_or(|(_, b)| part.bytes > b) {
            best = Some((&part.owner, part.bytes));
        }
    }
    match best.map(|b| b.0) {
        Some(Owner::File { file, .. }) => {
            p.files.get(*file).map_or_else(|| "file".into(), |f| f.kind.clone())
        }
        Some(Owner::Metadata { .. }) => "metadata".into(),
        Some(Owner::Unattributed) | None => "unattributed".into(),
    }
}

/// Throughput (MiB/s) and IOPS of reads and writes per time bin.
fn rate_chart(p: &Profile, iops: bool) -> Result<String, ChartError> {
    let chart = if iops { "IOPS" } else { "throughput" };
    let err = |e: &dyn std::fmt::Display| ChartError { chart: chart.into(), detail: e.to_string() };
    let end = p.requests.iter().map(|r| r.t_ms).fold(1.0, f64::max);
    let bins = 100usize;
    let width_ms = (end / bins as f64).max(1.0);
    let mut rd = vec![0f64; bins + 1];
    let mut wr = vec![0f64; bins + 1];
    for r in p.requests.iter().filter(|r| matches!(r.op, Op::Read | Op::Write)) {
        let i = ((r.t_ms / width_ms) as usize).min(bins);
        let v = if iops { 1.0 } else { r.bytes as f64 / 1048576.0 };
        if r.op == Op::Read {
            rd[i] += v;
        } else {
            wr[i] += v;
        }
    }
    let scale = 1000.0 / width_ms;
    let ymax = rd.iter().chain(&wr).fold(1.0f64, |a, b| a.max(b * scale));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (440, 200)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut c = ChartBuilder::on(&root)
            .margin_top(8)
            .margin_right(16)
            .x_label_area_size(30)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..end * 1.02, 0.0..ymax * 1.05)
            .map_err(|e| err(&e))?;
        c.configure_mesh()
            .x_desc("ms after the start")
            .y_desc(if iops { "requests/s" } else { "MiB/s" })
            .label_style(("sans-serif", 11))
            .axis_desc_style(("sans-serif", 11))
            .draw()
            .map_err(|e| err(&e))?;
        for (i, (name, v)) in [("read", &rd), ("write", &wr)].into_iter().enumerate() {
            let col = charts::colour(i);
            c.draw_series(LineSeries::new(
                v.iter().enumerate().map(|(k, y)| (k as f64 * width_ms, y * scale)),
                col.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], col.stroke_width(2)));
        }
        c.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .label_font(("sans-serif", 11))
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// The page's own rules, after the report's stylesheet ([`super::CSS`]) it shares: the same
/// fonts, colours and tables as a run's report.
const PROFILE_CSS: &str = "main{padding:0 32px 24px}pre.summary{background:#fff;border:1px solid \
                           var(--line);border-radius:6px;padding:8px 12px;font-size:12px;\
                           overflow-x:auto}.charts{display:grid;grid-template-columns:repeat(\
                           auto-fill,minmax(470px,1fr));gap:14px}.charts figure{margin:0;border:\
                           1px solid var(--line);border-radius:6px;padding:8px 10px;background:#fff}\
                           .charts svg{width:100%;height:auto;display:block}";

/// The offset-against-time scatter of every request, coloured by the kind of file it read.
fn scatter(p: &Profile) -> Result<String, ChartError> {
    let mut classes: Vec<String> = Vec::new();
    let mut sets: Vec<Scatter> = Vec::new();
    for r in p.requests.iter().filter(|r| matches!(r.op, Op::Read | Op::Write) && r.bytes > 0) {
        let c = class_of(p, r);
        let i = match classes.iter().position(|x| *x == c) {
            Some(i) => i,
            None => {
                classes.push(c.clone());
                sets.push(Scatter { label: c, config: classes.len() - 1, points: Vec::new() });
                classes.len() - 1
            }
        };
        let mib = (r.sector * 512) as f64 / 1048576.0;
        sets[i].points.push((r.t_ms, mib, r.op == Op::Write));
    }
    charts::offset_scatter("requests", &sets, &[])
}

/// Render the page.
pub fn render(p: &Profile) -> Result<String, ChartError> {
    let scatter = scatter(p)?;
    let tput = rate_chart(p, false)?;
    let iops = rate_chart(p, true)?;
    let mut files: Vec<&crate::profile::files::FileProfile> = p.files.iter().collect();
    files.sort_by(|a, b| {
        a.first_touch_ms
            .or(a.first_open_ms)
            .unwrap_or(f64::MAX)
            .total_cmp(&b.first_touch_ms.or(b.first_open_ms).unwrap_or(f64::MAX))
    });
    let ms = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.1}"));
    // The charts are SVG that plotters drew (it escapes the text it writes into them).
    let page = html! {
        (DOCTYPE)
        html {
            head {
                meta charset="utf-8";
                title { "fsbench profile" }
                meta name="viewport" content="width=device-width, initial-scale=1";
                style { (PreEscaped(super::CSS)) (PreEscaped(PROFILE_CSS)) }
            }
            body {
                header { h1 { "fsbench profile" } }
                main {
                pre.summary { (p.render()) }
                div.charts {
                    figure {
                        (PreEscaped(&scatter))
                        figcaption { "device offset of each request against time (seekwatcher), coloured by the kind of file it read; writes filled" }
                    }
                    figure { (PreEscaped(&tput)) figcaption { "throughput" } }
                    figure { (PreEscaped(&iops)) figcaption { "requests per second" } }
                }
                h3 { "Files, first touch first" }
                table.panel {
                    tr {
                        th { "file" } th { "kind" } th { "first open ms" } th { "first page ms" }
                        th { "pages by read" } th { "by fault" } th { "by readahead" }
                        th { "device read" } th { "requests" }
                    }
                    @for f in &files {
                        tr {
                            td { (f.display_name()) }
                            td { (f.kind) }
                            td.num { (ms(f.first_open_ms)) }
                            td.num { (ms(f.first_touch_ms)) }
                            td.num { (f.pages_read) }
                            td.num { (f.pages_fault) }
                            td.num { (f.pages_readahead) }
                            td.num { (human(f.device_read_bytes)) }
                            td.num { (f.device_requests) }
                        }
                    }
                }
                }
            }
        }
    };
    let mut h = page.into_string();
    h.push('\n');
    Ok(h)
}

#[cfg(test)]
mod tests {
    /// The page wears the report's stylesheet (it was unstyled) and names a file's
    /// kind by the shared rule (python3.11 is no `.11`).
    #[test]
    fn the_profile_page_has_the_reports_style() {
        let p = crate::profile::Profile {
            command: vec!["python3.11".into()],
            filesystems: Vec::new(),
            cold: None,
            exit: crate::profile::spawn::Exit { code: 0, signal: None, stopped_by: None },
            runs_wall_seconds: vec![0.5],
            summary: Default::default(),
            files: vec![crate::profile::files::FileProfile {
                path: "/usr/bin/python3.11".into(),
                kind: crate::profile::files::kind_of("/usr/bin/python3.11", false),
                first_open_ms: Some(1.0),
                ..Default::default()
            }],
            requests: Vec::new(),
            touched: Vec::new(),
            notes: Vec::new(),
        };
        let page = super::render(&p).unwrap();
        assert!(page.contains(super::super::CSS), "the report's stylesheet");
        assert!(page.contains("<table class=\"panel\">"), "{page}");
        assert!(page.contains("<td>executable</td>") && !page.contains("<td>.11</td>"), "{page}");
    }
}
