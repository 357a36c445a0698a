//! A test's phases over time in the report: throughput and p99 latency against seconds into
//! the phase, every configuration overlaid in its colour, the target's devices (requests per
//! second, busy time) under the throughput, dirty and writeback bytes under them all; the median repetition shown, each repetition in a collapsed section of its own
//! (`<details>`: no scripts). Drawn from the phases' interval series
//! ([`crate::model::series::PhaseSeries`]).

use super::charts::{self, chart_area, colour, key_px, ChartError, FONT};
use super::{file_part, names, svg, Chart, ReportError};
use crate::model::report::Report;
use crate::model::result::{PhaseResult, RepResult};
use crate::model::units::sig3;
use maud::{html, Markup};
use plotters::prelude::*;

/// One line of a time chart.
#[derive(Debug, Clone)]
pub struct TimeLine {
    /// What it is (a configuration's name, or `A dirty`).
    pub label: String,
    /// Configuration index (colour).
    pub config: usize,
    /// Drawn thin and light (the second quantity of a configuration: writeback).
    pub light: bool,
    /// (seconds into the phase, value).
    pub points: Vec<(f64, f64)>,
}

/// Lines against seconds into the phase, `y_desc` on the value axis.
pub fn time_lines(
    title: &str,
    y_desc: &str,
    lines: &[TimeLine],
    key: &[String],
) -> Result<String, ChartError> {
    let (w, h) = (440u32, 200u32 + key_px(key));
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let root =
            chart_area(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), key, &err)?;
        let pts = || lines.iter().flat_map(|l| l.points.iter());
        let xmax = pts().map(|p| p.0).fold(0.01, f64::max);
        let ymax = pts().map(|p| p.1).fold(0.0, f64::max).max(1e-9);
        let mut chart = ChartBuilder::on(&root)
            .margin_top(8)
            .margin_right(16)
            .x_label_area_size(30)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..xmax, 0.0..ymax * 1.1)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("seconds into the phase")
            .y_desc(y_desc)
            .x_label_formatter(&|v| sig3(*v))
            .y_label_formatter(&|v| if *v == 0.0 { "0".into() } else { sig3(*v) })
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 11))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(|e| err(&e))?;
        for l in lines {
            let c = colour(l.config);
            let style = if l.light { c.mix(0.5).stroke_width(1) } else { c.stroke_width(2) };
            chart
                .draw_series(LineSeries::new(l.points.iter().copied(), style))
                .map_err(|e| err(&e))?
                .label(l.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
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

/// The target's devices over time: requests per second (every configuration's, on the left
/// axis, in the key) and the busiest device's utilisation (light lines in the configuration's
/// colour, on the right axis, 0-100%; not in the key, which would cover the lines), against
/// seconds into the phase. It sits under the throughput chart, at the size of the others.
pub fn device_lines(
    title: &str,
    requests: &[TimeLine],
    busy: &[TimeLine],
    key: &[String],
) -> Result<String, ChartError> {
    let (w, h) = (440u32, 200u32 + key_px(key));
    let mut svg = String::new();
    let err = |e: &dyn std::fmt::Display| ChartError { chart: title.into(), detail: e.to_string() };
    {
        let root =
            chart_area(SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area(), key, &err)?;
        let pts = || requests.iter().chain(busy).flat_map(|l| l.points.iter());
        let xmax = pts().map(|p| p.0).fold(0.01, f64::max);
        let ymax = requests.iter().flat_map(|l| &l.points).map(|p| p.1).fold(0.0, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .margin_top(8)
            .margin_right(8)
            .x_label_area_size(30)
            .y_label_area_size(56)
            .right_y_label_area_size(40)
            .build_cartesian_2d(0.0..xmax, 0.0..ymax.max(1e-9) * 1.1)
            .map_err(|e| err(&e))?
            .set_secondary_coord(0.0..xmax, 0.0..110.0);
        chart
            .configure_mesh()
            .x_desc("seconds into the phase")
            .y_desc("device requests/s")
            .x_label_formatter(&|v| sig3(*v))
            .y_label_formatter(&|v| if *v == 0.0 { "0".into() } else { sig3(*v) })
            .y_labels(5)
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 11))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(|e| err(&e))?;
        chart
            .configure_secondary_axes()
            .y_desc("busy % (light)")
            .y_labels(3)
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FONT, 11))
            .axis_desc_style((FONT, 11))
            .draw()
            .map_err(|e| err(&e))?;
        for l in requests {
            let style = colour(l.config).stroke_width(2);
            chart
                .draw_series(LineSeries::new(l.points.iter().copied(), style))
                .map_err(|e| err(&e))?
                .label(l.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style));
        }
        for l in busy {
            let style = colour(l.config).mix(0.5).stroke_width(1);
            chart
                .draw_secondary_series(LineSeries::new(l.points.iter().copied(), style))
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

/// Seconds at the middle of each point of `p`'s series, with `f` of each point.
fn points(p: &PhaseResult, f: impl Fn(usize) -> f64) -> Vec<(f64, f64)> {
    let Some(s) = &p.series else { return Vec::new() };
    let iv = s.interval_nanos as f64 / 1e9;
    (0..s.len()).map(|i| ((i as f64 + 0.5) * iv, f(i))).collect()
}

/// The charts (throughput, the devices' requests and busy time when sampled, p99,
/// dirty/writeback) of phase `name` in the repetitions `reps` (one per configuration, `None`
/// where it has none).
fn charts_of(
    title: &str,
    name: &str,
    reps: &[Option<&RepResult>],
    config_names: &names::Names,
    key: &[String],
) -> Result<Vec<(&'static str, String)>, ChartError> {
    let mut mib = Vec::new();
    let mut p99 = Vec::new();
    let mut mem = Vec::new();
    let (mut requests, mut busy) = (Vec::new(), Vec::new());
    let mut shared = false;
    for (i, r) in reps.iter().enumerate() {
        let Some(p) = r.and_then(|r| r.phases.iter().find(|p| p.timed && p.name == name)) else {
            continue;
        };
        let Some(s) = p.series.as_ref().filter(|s| !s.is_empty()) else { continue };
        let label = config_names.short[i].clone();
        let covered = s.interval_nanos * (s.len() as u64 - 1);
        let last = p.wall_nanos.saturating_sub(covered) as f64 / s.interval_nanos as f64;
        let rate = s.mib_per_s(last);
        let line = |label: String, light, points| TimeLine { label, config: i, light, points };
        mib.push(line(label.clone(), false, points(p, |k| rate[k])));
        p99.push(line(label.clone(), false, points(p, |k| s.p99_nanos[k] as f64 / 1e6)));
        if !s.dirty_bytes.is_empty() {
            let mb = |v: &Vec<u64>, k: usize| v.get(k).copied().unwrap_or(0) as f64 / 1048576.0;
            mem.push(line(format!("{label} dirty"), false, points(p, |k| mb(&s.dirty_bytes, k))));
            let wb = points(p, |k| mb(&s.writeback_bytes, k));
            mem.push(line(format!("{label} writeback"), true, wb));
        }
        if !s.device_busy_nanos.is_empty() {
            let secs = s.interval_nanos as f64 / 1e9;
            let of = |v: &Vec<u64>, k: usize| v.get(k).copied().unwrap_or(0) as f64;
            let reqs = points(p, |k| {
                (of(&s.device_read_requests, k) + of(&s.device_write_requests, k)) / secs
            });
            requests.push(line(format!("{label} requests/s"), false, reqs));
            let pct =
                |k| (of(&s.device_busy_nanos, k) / s.interval_nanos as f64 * 100.0).min(100.0);
            busy.push(line(format!("{label} busy %"), true, points(p, pct)));
            shared |= p.device.as_ref().is_some_and(|d| d.shared);
        }
    }
    let mut out = Vec::new();
    if mib.is_empty() {
        return Ok(out);
    }
    out.push(("mib", time_lines(&format!("{title} MiB/s"), "MiB/s", &mib, key)?));
    if !requests.is_empty() {
        // A directory's device is everyone's: its counters include other processes' I/O.
        let t = format!("{title} device{}", if shared { " (shared)" } else { "" });
        out.push(("device", device_lines(&t, &requests, &busy, key)?));
    }
    out.push(("p99", time_lines(&format!("{title} p99"), "p99 latency (ms)", &p99, key)?));
    if !mem.is_empty() {
        let t = format!("{title} dirty");
        out.push(("dirty", time_lines(&t, "dirty / writeback (MiB, host)", &mem, key)?));
    }
    Ok(out)
}

/// Test `ti`'s phases over time: the median repetitions' charts, then each repetition's in a
/// collapsed section; nothing when no phase has a series.
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
        for rep in &c.run.tests[ti].reps {
            for p in rep.phases.iter().filter(|p| p.timed && p.series.is_some()) {
                if !phases.contains(&p.name) {
                    phases.push(p.name.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for name in phases {
        let median: Vec<Option<&RepResult>> =
            r.configs.iter().map(|c| c.run.tests[ti].median_rep()).collect();
        let title = format!("test {id} phase {name} over time");
        let main = charts_of(&title, &name, &median, &config_names, &key)?;
        if main.is_empty() {
            continue;
        }
        for (what, svg) in &main {
            charts.push(Chart {
                file_name: format!(
                    "{prefix}-test{}-{}-time-{what}.svg",
                    file_part(id),
                    file_part(&name)
                ),
                svg: svg.clone(),
            });
        }
        let nreps = r.configs.iter().map(|c| c.run.tests[ti].reps.len()).max().unwrap_or(0);
        let mut each = Vec::new();
        if nreps > 1 {
            for k in 0..nreps {
                let reps: Vec<Option<&RepResult>> =
                    r.configs.iter().map(|c| c.run.tests[ti].reps.get(k)).collect();
                let t = format!("{title} repetition {}", k + 1);
                each.push((k + 1, charts_of(&t, &name, &reps, &config_names, &key)?));
            }
        }
        out.push(html! {
            div.chart.time {
                p.rule { "Phase " b { (name) } " over time (median repetition of each configuration): throughput per interval, the target's devices under it (requests per second; the busiest device's busy time, light, right axis), p99 latency; host-wide dirty and writeback bytes under them." }
                @for (_, s) in &main { (svg(s)) }
                @for (k, cs) in &each {
                    details {
                        summary { "Repetition " (k) }
                        @for (_, s) in cs { (svg(s)) }
                    }
                }
            }
        });
    }
    Ok(html! { @for m in &out { (m) } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::tests::config;
    use crate::analysis::compare::{build_report, CompareOptions};
    use crate::model::series::PhaseSeries;

    /// A report of two configurations whose phases have a 4-point series, with the devices'
    /// counters when `device`.
    fn report(device: bool) -> Report {
        let mut configs = vec![config("ext4", &[100.0], 0), config("xfs", &[200.0], 0)];
        for c in &mut configs {
            let p = &mut c.run.tests[0].reps[0].phases[0];
            p.timed = true;
            p.wall_nanos = 40_000_000;
            let v = |x: u64| vec![x; 4];
            let mut s = PhaseSeries {
                interval_nanos: 10_000_000,
                write_bytes: v(1 << 20),
                write_ops: v(1),
                ops: v(1),
                p50_nanos: v(1000),
                p99_nanos: v(2000),
                max_nanos: v(3000),
                ..PhaseSeries::default()
            };
            if device {
                s.device_write_requests = v(20);
                s.device_read_requests = v(5);
                s.device_busy_nanos = vec![2_000_000, 5_000_000, 10_000_000, 10_000_000];
            }
            p.series = Some(s);
        }
        let opts = CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        build_report(configs, &opts, 0, false)
    }

    #[test]
    fn the_devices_chart_sits_under_the_throughput_when_sampled() {
        let mut charts = Vec::new();
        let page = chart(&mut charts, &report(true), 0, "1", "r1").unwrap().into_string();
        let names: Vec<&str> = charts.iter().map(|c| c.file_name.as_str()).collect();
        let at = |what: &str| names.iter().position(|n| n.ends_with(&format!("-time-{what}.svg")));
        let (mib, dev, p99) = (at("mib"), at("device"), at("p99"));
        assert!(mib.is_some() && dev == mib.map(|i| i + 1) && p99 > dev, "{names:?}");
        let svg = &charts[dev.unwrap()].svg;
        assert!(svg.contains("device requests/s") && svg.contains("busy % (light)"), "{svg}");
        assert!(svg.contains("ext4 requests/s") && svg.contains("xfs requests/s"), "{svg}");
        // Both configurations' busy lines (light, right axis), not in the key.
        assert_eq!(svg.matches("opacity=\"0.5\"").count(), 2, "{svg}");
        // 25 requests per 10 ms: 2500/s, the left axis up to 2750 (labels every 1000).
        assert!(svg.contains("\n2000\n") && !svg.contains("\n3000\n"), "{svg}");
        assert!(page.contains("busiest device"), "{page}");
        // No device counters (a tmpfs, or a run stored before them): no device chart.
        let mut charts = Vec::new();
        chart(&mut charts, &report(false), 0, "1", "r1").unwrap();
        assert!(charts.iter().all(|c| !c.file_name.ends_with("-time-device.svg")));
        assert!(charts.iter().any(|c| c.file_name.ends_with("-time-mib.svg")));
    }
}
