//! Latency against load in the report (`--curve`): one chart per test and curved phase, each
//! configuration's curve in its colour (its median repetition): achieved ops/s across, p99
//! latency up on a log axis (a hockey stick spans decades), the p50 as a thin dashed line of
//! the same colour, each knee marked with a ring and its rate. The step table and every step's
//! verdict follow in a collapsed section. Drawn from [`crate::model::curve::PhaseCurve`].

use super::charts::{self, chart_area, colour, key_px, ChartError, FONT};
use super::{file_part, names, svg, Chart, ReportError};
use crate::model::curve::PhaseCurve;
use crate::model::report::Report;
use crate::model::units::{nanos, short};
use crate::present::curve::{knee_words, median_curve, rate};
use maud::{html, Markup};
use plotters::prelude::*;

/// One configuration's curve on a chart.
pub struct CurveLine<'a> {
    /// Its label (short name).
    pub label: String,
    /// Configuration index (colour).
    pub config: usize,
    /// The curve.
    pub curve: &'a PhaseCurve,
}

/// The chart of `lines`: x achieved ops/s, y p99 (and p50, thin and dashed, not in the legend)
/// in ms on a log axis with a decade of headroom for the legend, knees ringed.
pub fn curve_chart(
    title: &str,
    lines: &[CurveLine<'_>],
    key: &[String],
) -> Result<String, ChartError> {
    let (w, h) = (560u32, 320u32 + key_px(key));
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let root =
            chart_area(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), key, &err)?;
        let steps = || lines.iter().flat_map(|l| l.curve.steps.iter());
        let xmax = steps().map(|s| s.achieved_ops_per_s).fold(1.0, f64::max);
        let ms = |n: u64| (n as f64 / 1e6).max(1e-4);
        let ymin = steps().map(|s| ms(s.p50_nanos).min(ms(s.p99_nanos))).fold(f64::MAX, f64::min);
        let ymax = steps().map(|s| ms(s.p99_nanos)).fold(0.0, f64::max);
        // A decade of headroom above the highest p99: the legend goes there, clear of the data.
        let (ymin, ymax) = if ymin <= ymax { (ymin / 1.5, ymax * 20.0) } else { (0.001, 1.0) };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 13))
            .margin_top(6)
            .margin_right(18)
            .x_label_area_size(34)
            .y_label_area_size(62)
            .build_cartesian_2d(0.0..xmax * 1.08, (ymin..ymax).log_scale())
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("achieved rate (ops/s)")
            .y_desc("latency from schedule (ms, log)")
            .x_label_formatter(&|v| rate(*v))
            .y_label_formatter(&|v| short(*v))
            .y_labels(6)
            .x_labels(7)
            .max_light_lines(1)
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 11))
            .light_line_style(RGBColor(244, 244, 244))
            .draw()
            .map_err(|e| err(&e))?;
        for l in lines {
            let c = colour(l.config);
            let p99: Vec<(f64, f64)> =
                l.curve.steps.iter().map(|s| (s.achieved_ops_per_s, ms(s.p99_nanos))).collect();
            let p50: Vec<(f64, f64)> =
                l.curve.steps.iter().map(|s| (s.achieved_ops_per_s, ms(s.p50_nanos))).collect();
            let thick = c.stroke_width(2);
            chart
                .draw_series(LineSeries::new(p99.iter().copied(), thick))
                .map_err(|e| err(&e))?
                .label(format!("{} p99", l.label))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], thick));
            chart
                .draw_series(p99.iter().map(|&(x, y)| Circle::new((x, y), 2, c.filled())))
                .map_err(|e| err(&e))?;
            let thin = c.mix(0.6).stroke_width(1);
            // Not in the legend (the caption says what a dashed line is): two rows per
            // configuration would cover the curves.
            chart
                .draw_series(DashedLineSeries::new(p50.iter().copied(), 4, 3, thin))
                .map_err(|e| err(&e))?;
            if let Some(k) = l.curve.knee_step() {
                let at = (k.achieved_ops_per_s, ms(k.p99_nanos));
                let ring = ShapeStyle { color: c.to_rgba(), filled: false, stroke_width: 2 };
                let text = format!("knee {}", rate(k.achieved_ops_per_s));
                let style = (FONT, 11).into_font().color(&c);
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at(at) + Circle::new((0, 0), 7, ring),
                    ))
                    .map_err(|e| err(&e))?;
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at(at)
                            + Text::new(text, (-24, -22 - 13 * l.config as i32), style),
                    ))
                    .map_err(|e| err(&e))?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .label_font((FONT, 11))
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// Test `ti`'s curves: a chart per curved phase with every configuration, its knees in words,
/// and the steps (with `compare`'s verdict per step) in a collapsed table; nothing without a
/// curve.
pub(super) fn chart(
    charts: &mut Vec<Chart>,
    r: &Report,
    ti: usize,
    id: &str,
    prefix: &str,
) -> Result<Markup, ReportError> {
    let config_names = names::Names::of(r);
    let key = config_names.key(charts::KEY_CHARS);
    let mut phases: Vec<String> = Vec::new();
    for c in &r.configs {
        let Some(t) = c.run.tests.get(ti) else { continue };
        for p in t.reps.iter().flat_map(|r| &r.phases).filter(|p| p.curve.is_some()) {
            if !phases.contains(&p.name) {
                phases.push(p.name.clone());
            }
        }
    }
    let verdicts = r.tests.get(ti).map_or(&[][..], |t| t.curve_verdicts.as_slice());
    let mut out = Vec::new();
    for name in phases {
        let lines: Vec<CurveLine<'_>> = r
            .configs
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let curve = median_curve(c.run.tests.get(ti)?, &name)?;
                Some(CurveLine { label: config_names.short[i].clone(), config: i, curve })
            })
            .collect();
        if lines.iter().all(|l| l.curve.steps.is_empty()) {
            continue;
        }
        let title = format!("test {id} phase {name}: latency against load");
        let s = curve_chart(&title, &lines, &key)?;
        charts.push(Chart {
            file_name: format!("{prefix}-test{}-{}-curve.svg", file_part(id), file_part(&name)),
            svg: s.clone(),
        });
        let definition = lines.first().map(|l| l.curve.definition()).unwrap_or_default();
        let base = config_names.short.first().cloned().unwrap_or_default();
        out.push(html! {
            div.chart.curve {
                p.rule { "Phase " b { (name) } " against load (median repetition of each configuration): the phase closed-loop, then at fixed rates of each configuration's own closed-loop rate; p99 thick, p50 dashed; the ring marks the " (definition) "." }
                (svg(&s))
                ul {
                    @for l in &lines {
                        li { b { (l.label) } ": " (knee_words(l.curve)) }
                    }
                }
                details {
                    summary { "Steps" @if !verdicts.is_empty() { " and each step's verdict on p99 against " (base) } }
                    div.scroll { table.steps {
                        tr {
                            th { "step" } th { "configuration" } th { "asked/s" } th { "achieved/s" } th { "short" }
                            th { "p50" } th { "p99" } th { "p99.9" }
                            @if !verdicts.is_empty() { th { "p99 vs " (base) } }
                        }
                        @for l in &lines {
                            @for (k, st) in l.curve.steps.iter().enumerate() {
                                tr {
                                    td { (short(st.percent)) "%" @if l.curve.knee == Some(k) { " ◆ knee" } }
                                    td { (l.label) }
                                    td { (rate(st.asked_ops_per_s)) }
                                    td { (rate(st.achieved_ops_per_s)) }
                                    td { @if st.shortfall_percent >= 2.0 { (short(st.shortfall_percent)) "%" } @else { "-" } }
                                    td { (nanos(st.p50_nanos)) }
                                    td { (nanos(st.p99_nanos)) }
                                    td { (nanos(st.p999_nanos)) }
                                    @if !verdicts.is_empty() {
                                        td { (step_verdict(verdicts, &name, l.config, st.percent, &base, &l.label)) }
                                    }
                                }
                            }
                        }
                    } }
                }
            }
        });
    }
    Ok(html! { @for m in &out { (m) } })
}

/// The verdict of configuration `config`'s step `percent` against the baseline, in words.
fn step_verdict(
    verdicts: &[crate::model::curve::StepVerdict],
    phase: &str,
    config: usize,
    percent: f64,
    base: &str,
    label: &str,
) -> String {
    use crate::model::verdict::Verdict;
    let Some(v) =
        verdicts.iter().find(|v| v.phase == phase && v.config == config && v.percent == percent)
    else {
        return String::new();
    };
    match &v.verdict {
        Verdict::Win { winner, factor, tested } => {
            let w = if *winner == 0 { base } else { label };
            format!("{w} {factor:.2}X lower{}", if *tested { "" } else { " (untested)" })
        }
        Verdict::Draw { .. } => "draw".into(),
        Verdict::NotCompared { reason } => reason.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::curve::CurveStep;

    #[test]
    fn the_chart_has_its_axes_with_units_a_legend_and_the_knee() {
        let steps: Vec<CurveStep> = [(1000.0, 100), (5000.0, 120), (8000.0, 400), (9000.0, 3000)]
            .iter()
            .map(|&(a, p99_us)| CurveStep {
                percent: a / 100.0,
                asked_ops_per_s: a,
                achieved_ops_per_s: a,
                p50_nanos: 50_000,
                p99_nanos: p99_us * 1000,
                p999_nanos: p99_us * 2000,
                ..CurveStep::default()
            })
            .collect();
        let c = PhaseCurve::of((9100.0, 2_000_000), 3.0, steps, false);
        let lines = [CurveLine { label: "ext4".into(), config: 0, curve: &c }];
        let s = curve_chart("test r phase read: latency against load", &lines, &[]).unwrap();
        assert!(s.contains("achieved rate (ops/s)"), "x axis");
        assert!(s.contains("latency from schedule (ms, log)"), "y axis");
        assert!(s.contains("ext4 p99"), "legend");
        // 400 µs at 8000/s is over 3 × 100 µs: the knee is the step before, 5000/s.
        assert!(s.contains("knee 5000"), "the knee is marked at 5000/s");
        assert!(!s.contains("knee 8000"));
    }
}
