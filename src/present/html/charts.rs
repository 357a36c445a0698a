//! The report's charts, drawn with plotters' SVG backend (text is left to the browser's
//! sans-serif font, so no font files are read or embedded).

use crate::model::units::{nanos, sig3};
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordi32};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colours of configurations 0, 1, 2, ... (Tableau 10: distinguishable, also in grey print).
pub const PALETTE: &[(u8, u8, u8)] = &[
    (78, 121, 167),
    (242, 142, 43),
    (89, 161, 79),
    (225, 87, 89),
    (118, 183, 178),
    (237, 201, 72),
    (176, 122, 161),
    (156, 117, 95),
];

/// Colour of configuration `i` as plotters wants it.
pub fn colour(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Colour of configuration `i` as CSS.
pub fn css_colour(i: usize) -> String {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One bar: a configuration's median with its error bar.
#[derive(Debug, Clone)]
pub struct Bar {
    /// Configuration name: its label, or its letter ([`super::names::Names`]).
    pub label: String,
    /// Configuration index (colour).
    pub config: usize,
    /// Median of the test's figure of merit (MiB/s or ops/s).
    pub value: f64,
    /// Error bar low and high, if any.
    pub range: Option<(f64, f64)>,
    /// Drawn hatched/faded: the figure is not comparable (failed, cache unmet).
    pub muted: bool,
    /// Each completed repetition's figure, in the order run: drawn as a strip of dots on the bar;
    /// a first repetition that stands out ([`crate::stats::summary::first_rep_stands_out`]) is
    /// drawn as a red ring.
    pub reps: Vec<f64>,
}

/// One latency curve: values at quantiles.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Configuration name: its label, or its letter ([`super::names::Names`]).
    pub label: String,
    /// Configuration index (colour).
    pub config: usize,
    /// (nines, nanoseconds): nines = -log10(1 - quantile), so 1 is p90, 2 is p99, 3 is p99.9.
    pub points: Vec<(f64, u64)>,
}

/// Errors while drawing (plotters reports them as strings).
#[derive(Debug, thiserror::Error)]
#[error("drawing the chart {chart}: {detail}")]
pub struct ChartError {
    /// Which chart.
    pub chart: String,
    /// What plotters said.
    pub detail: String,
}

impl crate::sys::classify::Classify for ChartError {
    /// plotters failed drawing: not the user's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

pub(super) const FONT: &str = "sans-serif";
/// Longest row label of a bar chart, in characters: longer configuration labels are lettered,
/// with a key ([`super::names::Names`]); a label is never cut.
pub(super) const BAR_LABEL_CHARS: usize = 22;
/// Characters per line of the key under a chart (12 px sans-serif in 440 px).
pub(super) const KEY_CHARS: usize = 60;
/// Pixels per line of the key.
const KEY_LINE_PX: u32 = 16;

/// Pixels the key under a chart takes (0 without one).
pub(super) fn key_px(key: &[String]) -> u32 {
    if key.is_empty() {
        0
    } else {
        12 + KEY_LINE_PX * key.len() as u32
    }
}

/// `full` filled white, with `key` (the configurations' letters and whole labels,
/// [`super::names::Names::key`]) written along its bottom; returns the area above the key,
/// where the chart goes. A chart saved on its own file still says what its letters are.
pub(super) fn chart_area<'a>(
    full: DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    key: &[String],
    err: &dyn Fn(&dyn std::fmt::Display) -> ChartError,
) -> Result<DrawingArea<SVGBackend<'a>, plotters::coord::Shift>, ChartError> {
    full.fill(&WHITE).map_err(|e| err(&e))?;
    if key.is_empty() {
        return Ok(full);
    }
    let h = full.dim_in_pixel().1;
    let (chart, below) = full.split_vertically(h - key_px(key));
    let style = (FONT, 12).into_font().color(&RGBColor(60, 60, 60));
    for (k, line) in key.iter().enumerate() {
        let y = 8 + (KEY_LINE_PX * k as u32) as i32;
        below.draw(&Text::new(line.clone(), (10, y), &style)).map_err(|e| err(&e))?;
    }
    Ok(chart)
}

/// The frame of a horizontal bar chart (throughput per configuration, a figure per rank): one
/// row per label, the first on top (row `labels.len() - 1 - i` holds label `i`), a value axis
/// from 0 to `xmax` described by `x_desc`, light vertical grid lines.
pub(super) fn bar_frame<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    labels: &[&str],
    xmax: f64,
    x_desc: &str,
    err: &dyn Fn(&dyn std::fmt::Display) -> ChartError,
) -> Result<
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, SegmentedCoord<RangedCoordi32>>>,
    ChartError,
> {
    let n = labels.len().max(1);
    let label_chars =
        labels.iter().map(|l| l.chars().count()).max().unwrap_or(4).min(BAR_LABEL_CHARS);
    let mut chart = ChartBuilder::on(root)
        .margin_top(8)
        .margin_right(16)
        .x_label_area_size(30)
        .y_label_area_size(14 + 7 * label_chars as u32)
        // 0..k segmented has k + 1 rows: 0..n left an empty row on top of every chart. One
        // bar keeps 0..1 (0..0 has no height).
        .build_cartesian_2d(0.0..xmax, (0..(n as i32 - 1).max(1)).into_segmented())
        .map_err(|e| err(&e))?;
    debug_assert!(labels.iter().all(|l| l.chars().count() <= BAR_LABEL_CHARS), "{labels:?}");
    let shown: Vec<String> = labels.iter().rev().map(|l| l.to_string()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .x_labels(5)
        .x_desc(x_desc)
        .x_label_formatter(&|v| if *v == 0.0 { "0".into() } else { sig3(*v) })
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => shown.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 13))
        .draw()
        .map_err(|e| err(&e))?;
    Ok(chart)
}

/// Horizontal bars of throughput, one per configuration, with error bars.
/// `unit` is the figure's unit (`MiB/s`, `ops/s`), written on the axis.
pub fn throughput_bars(
    title: &str,
    unit: &str,
    bars: &[Bar],
    key: &[String],
) -> Result<String, ChartError> {
    let n = bars.len().max(1);
    let (w, h) = (440u32, 56 + 30 * n as u32 + key_px(key));
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let root =
            chart_area(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), key, &err)?;
        let xmax = bars
            .iter()
            .map(|b| {
                let top = b.reps.iter().copied().fold(b.value, f64::max);
                b.range.map(|r| r.1).unwrap_or(top).max(top)
            })
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.12;
        let labels: Vec<&str> = bars.iter().map(|b| b.label.as_str()).collect();
        let mut chart = bar_frame(&root, &labels, xmax, &format!("{unit} (median)"), &err)?;
        // The first configuration (the baseline) on top: segment n-1 is the top row.
        let row = |i: usize| (n - 1 - i) as i32;
        for (i, b) in bars.iter().enumerate() {
            let c = colour(b.config);
            let style = if b.muted { c.mix(0.3).filled() } else { c.filled() };
            let y0 = SegmentValue::Exact(row(i));
            let y1 = SegmentValue::Exact(row(i) + 1);
            let mut rect = Rectangle::new([(0.0, y0), (b.value, y1)], style);
            rect.set_margin(5, 5, 0, 0);
            chart.draw_series(std::iter::once(rect)).map_err(|e| err(&e))?.label(b.label.clone());
            let centre = || SegmentValue::CenterOf(row(i));
            if let Some((lo, hi)) = b.range {
                // Whiskers: a line from lo to hi with end caps (drawn by hand: plotters' ErrorBar
                // adds a dot at the median that the bar already shows).
                let lo = lo.max(0.0);
                let whisker = BLACK.mix(0.75).stroke_width(1);
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(lo, centre()), (hi, centre())],
                        whisker,
                    )))
                    .map_err(|e| err(&e))?;
                for x in [lo, hi] {
                    let at = chart.backend_coord(&(x, centre()));
                    root.draw(&PathElement::new(vec![(at.0, at.1 - 5), (at.0, at.1 + 5)], whisker))
                        .map_err(|e| err(&e))?;
                }
            }
            // The repetitions: small dots with a white rim, visible on the bar and beside it.
            let first_odd = crate::stats::summary::first_rep_stands_out(&b.reps).is_some();
            for (k, v) in b.reps.iter().enumerate() {
                let at = chart.backend_coord(&(*v, centre()));
                if k == 0 && first_odd {
                    root.draw(&Circle::new(at, 5, RGBColor(200, 0, 0).stroke_width(2)))
                        .map_err(|e| err(&e))?;
                } else {
                    root.draw(&Circle::new(at, 3, WHITE.filled())).map_err(|e| err(&e))?;
                    root.draw(&Circle::new(at, 2, BLACK.mix(0.8).filled())).map_err(|e| err(&e))?;
                }
            }
            let top = b.reps.iter().copied().fold(b.value, f64::max);
            let end = b.range.map(|r| r.1).unwrap_or(top).max(top);
            let text_style = (FONT, 12)
                .into_font()
                .color(&RGBColor(60, 60, 60))
                .pos(Pos::new(HPos::Left, VPos::Center));
            chart
                .draw_series(std::iter::once(Text::new(
                    sig3(b.value),
                    (end + xmax * 0.012, centre()),
                    text_style,
                )))
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// Latency percentile curves (x: percentile on a "nines" scale, y: latency, log scale).
pub fn latency_curves(
    title: &str,
    op: &str,
    curves: &[Curve],
    key: &[String],
) -> Result<String, ChartError> {
    let (w, h) = (440u32, 260u32 + key_px(key));
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let root =
            chart_area(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), key, &err)?;
        let all = curves.iter().flat_map(|c| c.points.iter());
        let (mut lo, mut hi, mut xmax) = (u64::MAX, 1u64, 1.0f64);
        for (x, v) in all {
            lo = lo.min(*v);
            hi = hi.max(*v);
            xmax = xmax.max(*x);
        }
        if lo == u64::MAX {
            lo = 1;
        }
        // Whole decades, so the log axis always has labelled ticks at both ends.
        let ylo = 10f64.powf((lo.max(1) as f64).log10().floor());
        let yhi = 10f64.powf((hi.max(2) as f64).log10().ceil()).max(ylo * 10.0);
        // Room for the longest tick label ("100.00ms" was clipped to "00.00ms" in a fixed 56 px):
        // every label lies between the two decades, about 7.5 px per character at 13 px.
        let mut widest = 0;
        let mut d = ylo;
        while d <= yhi * 1.001 {
            for m in [1.0, 2.0, 5.0] {
                widest = widest.max(nanos((d * m) as u64).chars().count());
            }
            d *= 10.0;
        }
        let y_label_px = 16 + (widest as f64 * 7.5).ceil() as u32;
        let mut chart = ChartBuilder::on(&root)
            .margin_top(8)
            .margin_right(16)
            .x_label_area_size(30)
            .y_label_area_size(y_label_px)
            .build_cartesian_2d(0.0..xmax, (ylo..yhi).log_scale())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(242, 242, 242))
            .max_light_lines(3)
            .bold_line_style(RGBColor(220, 220, 220))
            // Enough ticks that the step divides 1: labels appear at the whole nines.
            .x_labels((xmax.ceil() as usize * 10).max(10))
            .y_labels(6)
            .x_desc(format!("{op} latency percentile"))
            .x_label_formatter(&|x| nines_label(*x))
            .y_label_formatter(&|y| nanos(*y as u64))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 13))
            .draw()
            .map_err(|e| err(&e))?;
        for c in curves {
            let col = colour(c.config);
            chart
                .draw_series(LineSeries::new(
                    c.points.iter().map(|(x, v)| (*x, (*v).max(1) as f64)),
                    col.stroke_width(2),
                ))
                .map_err(|e| err(&e))?
                .label(c.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], col.stroke_width(2))
                });
        }
        if curves.len() > 1 {
            chart
                .configure_series_labels()
                // Percentile curves rise to the right: the lower right is where they are not.
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .label_font((FONT, 12))
                .draw()
                .map_err(|e| err(&e))?;
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// `0`, `90`, `99`, `99.9`, ... for whole nines, nothing in between.
fn nines_label(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 {
        return String::new();
    }
    match x.round() as i32 {
        0 => "p0".into(),
        k => {
            let p = 100.0 * (1.0 - 10f64.powi(-k));
            let s = format!("{p:.*}", (k - 2).max(0) as usize);
            format!("p{s}")
        }
    }
}

/// The points of a latency curve from an HdrHistogram: quantiles at steps of 0.05 nines up to
/// where the histogram has data (the last point is the maximum).
pub fn curve_points(h: &hdrhistogram::Histogram<u64>) -> Vec<(f64, u64)> {
    if h.is_empty() {
        return Vec::new();
    }
    // Beyond log10(count) nines every quantile is the maximum; cap at 5 (p99.999).
    let top = (h.len() as f64).log10().clamp(1.0, 5.0);
    let mut pts = Vec::new();
    let mut x = 0.0;
    while x < top {
        let q = 1.0 - 10f64.powf(-x);
        pts.push((x, h.value_at_quantile(q)));
        x += 0.05;
    }
    pts.push((top, h.max()));
    pts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_labels() {
        assert_eq!(nines_label(0.0), "p0");
        assert_eq!(nines_label(1.0), "p90");
        assert_eq!(nines_label(2.0), "p99");
        assert_eq!(nines_label(3.0), "p99.9");
        assert_eq!(nines_label(1.5), "");
    }

    #[test]
    fn charts_are_svg() {
        let bars = vec![
            Bar {
                label: "ext4".into(),
                config: 0,
                value: 100.0,
                range: Some((90.0, 110.0)),
                muted: false,
                reps: vec![100.0, 95.0, 105.0],
            },
            Bar {
                label: "xfs".into(),
                config: 1,
                value: 230.0,
                range: None,
                muted: false,
                reps: vec![],
            },
        ];
        let s = throughput_bars("t", "MiB/s", &bars, &[]).unwrap();
        assert!(s.starts_with("<svg") && s.contains("ext4") && s.contains("230"), "{s}");
        // One dot (rim and centre) per repetition, no red ring.
        assert_eq!(s.matches("<circle").count(), 6, "{s}");
        assert!(!s.contains("#C80000"), "{s}");
        let slow_first = Bar { reps: vec![20.0, 100.0, 101.0, 99.0], ..bars[0].clone() };
        let s = throughput_bars("t", "MiB/s", &[slow_first], &[]).unwrap();
        assert_eq!(s.matches("<circle").count(), 1 + 3 * 2, "{s}");
        assert!(s.contains("#C80000"), "the first repetition is ringed in red: {s}");
        let mut h = crate::stats::latency::new_histogram();
        for v in 1..10_000u64 {
            h.record(v * 100).unwrap();
        }
        let pts = curve_points(&h);
        assert!(pts.windows(2).all(|w| w[0].1 <= w[1].1), "monotone");
        let c = vec![Curve { label: "ext4".into(), config: 0, points: pts }];
        let s = latency_curves("t", "read", &c, &[]).unwrap();
        assert!(s.contains("<polyline") || s.contains("<path"), "{s}");
    }

    #[test]
    fn a_key_under_a_chart_gives_each_letter_its_whole_label() {
        let names = super::super::names::Names::new(
            ["ext3:mount=data=writeback,noatime", "ext4:mount=data=writeback,noatime"],
            BAR_LABEL_CHARS,
        );
        let bars: Vec<Bar> = (0..2)
            .map(|i| Bar {
                label: names.short[i].clone(),
                config: i,
                value: 100.0 + i as f64,
                range: None,
                muted: false,
                reps: vec![],
            })
            .collect();
        let height = |s: &str| -> u32 {
            let h = s.split("height=\"").nth(1).unwrap();
            h[..h.find('"').unwrap()].parse().unwrap()
        };
        let plain = throughput_bars("t", "MiB/s", &bars, &[]).unwrap();
        let key = names.key(KEY_CHARS);
        let keyed = throughput_bars("t", "MiB/s", &bars, &key).unwrap();
        assert_eq!(height(&keyed), height(&plain) + key_px(&key), "{keyed}");
        for line in
            ["A = ext3:mount=data=writeback,noatime", "B = ext4:mount=data=writeback,noatime"]
        {
            assert!(keyed.contains(line), "{line} in {keyed}");
        }
        assert!(!keyed.contains('…'), "{keyed}");
        let c = vec![Curve { label: "A".into(), config: 0, points: vec![(0.0, 10), (1.0, 20)] }];
        let s = latency_curves("t", "read", &c, &key).unwrap();
        assert!(s.contains("B = ext4:mount=data=writeback,noatime"), "{s}");
        let sets = [Scatter { label: "A".into(), config: 0, points: vec![(1.0, 2.0, true)] }];
        let s = offset_scatter("t", &sets, &key).unwrap();
        assert!(s.contains("A = ext3:mount=data=writeback,noatime"), "{s}");
        let fill = [FillLine { label: "B".into(), config: 1, points: vec![(10.0, 5.0)] }];
        let s = fill_lines("t", &fill, &key).unwrap();
        assert!(s.contains("B = ext4:mount=data=writeback,noatime"), "{s}");
    }
}

/// One configuration's issued requests for an offset-vs-time plot.
#[derive(Debug, Clone)]
pub struct Scatter {
    /// Configuration name: its label, or its letter ([`super::names::Names`]).
    pub label: String,
    /// Configuration index (colour).
    pub config: usize,
    /// (milliseconds since the phase started, device offset in MiB, is a write).
    pub points: Vec<(f64, f64, bool)>,
}

/// Offset against time of issued requests (what seekwatcher drew): writes filled, reads hollow.
pub fn offset_scatter(title: &str, sets: &[Scatter], key: &[String]) -> Result<String, ChartError> {
    // The legend gets rows of its own above the plot: drawn inside, it covered requests.
    const ROW_PX: i32 = 20;
    let w = 440u32;
    let mut at = Vec::with_capacity(sets.len());
    let (mut x, mut row) = (62i32, 0i32);
    for s in sets {
        // About 7 px a character at 12 px, the dot and a gap.
        let width = 8 + 7 * s.label.chars().count() as i32 + 18;
        if x > 62 && x + width > w as i32 {
            (x, row) = (62, row + 1);
        }
        at.push((x, row * ROW_PX));
        x += width;
    }
    let legend_px = if sets.is_empty() { 0 } else { ((row + 1) * ROW_PX + 2) as u32 };
    let h = 240u32 + legend_px + key_px(key);
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let area =
            chart_area(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), key, &err)?;
        let (legend, root) = area.split_vertically(legend_px);
        for (s, (x, y)) in sets.iter().zip(at) {
            let c = colour(s.config);
            legend.draw(&Circle::new((x, y + 11), 4, c.filled())).map_err(|e| err(&e))?;
            legend
                .draw(&Text::new(s.label.clone(), (x + 8, y + 4), (FONT, 12)))
                .map_err(|e| err(&e))?;
        }
        let xmax = sets.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(1.0, f64::max);
        let ymax = sets.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(1.0, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .margin_top(8)
            .margin_right(16)
            .x_label_area_size(30)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..xmax * 1.02, 0.0..ymax * 1.05)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("ms into the phase")
            .y_desc("device offset (MiB)")
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 11))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(|e| err(&e))?;
        for s in sets {
            let c = colour(s.config);
            chart
                .draw_series(s.points.iter().map(|(x, y, write)| {
                    let style = if *write { c.filled() } else { c.stroke_width(1) };
                    Circle::new((*x, *y), 2, style)
                }))
                .map_err(|e| err(&e))?;
        }
        area.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// One configuration's throughput at each fill level.
#[derive(Debug, Clone)]
pub struct FillLine {
    /// Configuration name: its label, or its letter ([`super::names::Names`]).
    pub label: String,
    /// Configuration index (colour).
    pub config: usize,
    /// (fill %, MiB/s) in order of fill.
    pub points: Vec<(f64, f64)>,
}

/// Throughput against filesystem fill (the aging suite's question: does it slow as the disk
/// fills?).
pub fn fill_lines(title: &str, lines: &[FillLine], key: &[String]) -> Result<String, ChartError> {
    let (w, h) = (440u32, 240u32 + key_px(key));
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let root =
            chart_area(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), key, &err)?;
        let ymax = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)).fold(1.0, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .margin_top(8)
            .margin_right(16)
            .x_label_area_size(30)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..100.0, 0.0..ymax * 1.1)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("filesystem fill (%)")
            .y_desc("MiB/s")
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 11))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(|e| err(&e))?;
        for l in lines {
            let c = colour(l.config);
            chart
                .draw_series(LineSeries::new(l.points.iter().copied(), c.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(l.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(2))
                });
            chart
                .draw_series(l.points.iter().map(|(x, y)| Circle::new((*x, *y), 3, c.filled())))
                .map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .label_font((FONT, 11))
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}
