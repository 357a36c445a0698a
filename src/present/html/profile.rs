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

/// The page's stylesheet (fsbench's own, inserted as it is).
const CSS: &str = "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;\
                   font-size:13px}td,th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:right}\
                   td:first-child,th:first-child{text-align:left}.charts{display:flex;flex-wrap:wrap;\
                   gap:1em}";

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
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "fsbench profile" }
                pre { (p.render()) }
                div.charts {
                    figure {
                        (PreEscaped(&scatter))
                        figcaption { "device offset of each request against time (seekwatcher), coloured by the kind of file it read; writes filled" }
                    }
                    figure { (PreEscaped(&tput)) figcaption { "throughput" } }
                    figure { (PreEscaped(&iops)) figcaption { "requests per second" } }
                }
                h2 { "Files, first touch first" }
                table {
                    tr {
                        th { "file" } th { "kind" } th { "first open ms" } th { "first page ms" }
                        th { "pages by read" } th { "by fault" } th { "by readahead" }
                        th { "device read" } th { "requests" }
                    }
                    @for f in &files {
                        tr {
                            td { (f.display_name()) }
                            td { (f.kind) }
                            td { (ms(f.first_open_ms)) }
                            td { (ms(f.first_touch_ms)) }
                            td { (f.pages_read) }
                            td { (f.pages_fault) }
                            td { (f.pages_readahead) }
                            td { (human(f.device_read_bytes)) }
                            td { (f.device_requests) }
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
