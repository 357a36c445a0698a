//! A phase over time in text: a one-line sparkline per timed phase for `--details`
//! ([`details_lines`]), the notes a paced or steady-state phase adds under the table
//! ([`load_notes`]). fio's per-interval log files are [`super::fio_log`]'s.

use crate::model::result::{PhaseResult, TestResult};
use crate::model::series::PhaseSeries;
use crate::model::units::sig3;

/// Eight levels, low to high.
const BARS: [char; 8] = [
    '\u{2581}', '\u{2582}', '\u{2583}', '\u{2584}', '\u{2585}', '\u{2586}', '\u{2587}', '\u{2588}',
];

/// `values` as at most `width` bars scaled from 0 to their maximum (neighbours averaged when
/// there are more values than columns); an empty string for no values.
pub fn sparkline(values: &[f64], width: usize) -> String {
    if values.is_empty() || width == 0 {
        return String::new();
    }
    let per = values.len().div_ceil(width);
    let cols: Vec<f64> =
        values.chunks(per).map(|c| c.iter().sum::<f64>() / c.len() as f64).collect();
    let max = cols.iter().cloned().fold(0.0, f64::max);
    cols.iter()
        .map(|v| {
            if max <= 0.0 || *v <= 0.0 {
                ' '
            } else {
                BARS[((v / max * 7.0).round() as usize).min(7)]
            }
        })
        .collect()
}

/// The share of its interval the last point covers.
fn last_fraction(p: &PhaseResult, s: &PhaseSeries) -> f64 {
    if s.interval_nanos == 0 || s.is_empty() {
        return 1.0;
    }
    let covered = s.interval_nanos * (s.len() as u64 - 1);
    p.wall_nanos.saturating_sub(covered) as f64 / s.interval_nanos as f64
}

/// One line per timed phase with a series of `tests`' median repetitions, prefixed by `label`
/// (a configuration, or empty): throughput and p99 as sparklines, their range, and stalls.
pub fn details_lines(label: &str, tests: &[TestResult], width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let bars = width.saturating_sub(60).clamp(16, 60);
    for t in tests {
        let Some(r) = t.median_rep() else { continue };
        for p in r.phases.iter().filter(|p| p.timed) {
            let Some(s) = p.series.as_ref().filter(|s| !s.is_empty()) else { continue };
            let mib = s.mib_per_s(last_fraction(p, s));
            let p99: Vec<f64> = s.p99_nanos.iter().map(|v| *v as f64).collect();
            let (lo, hi) =
                mib.iter().fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
            let p99max = s.p99_nanos.iter().max().copied().unwrap_or(0);
            let stalls = s.stalls();
            let stall = match stalls.iter().max_by_key(|x| x.1) {
                Some((at, n)) => format!(
                    "; {} stall{} (longest {} ms at {} s)",
                    stalls.len(),
                    if stalls.len() == 1 { "" } else { "s" },
                    sig3((*n as u64 * s.interval_nanos) as f64 / 1e6),
                    sig3((*at as u64 * s.interval_nanos) as f64 / 1e9)
                ),
                None => String::new(),
            };
            let who = if label.is_empty() { String::new() } else { format!("{label} ") };
            out.push(format!(
                "{who}{} {} over time ({} ms points): MiB/s {} {}–{}; p99 {} ≤{}{stall}",
                t.id,
                p.name,
                sig3(s.interval_nanos as f64 / 1e6),
                sparkline(&mib, bars),
                sig3(if lo == f64::MAX { 0.0 } else { lo }),
                sig3(hi),
                sparkline(&p99, bars),
                crate::model::units::nanos(p99max),
            ));
        }
    }
    out
}

/// The `--details` section over time: a heading and [`details_lines`] of each configuration
/// (`label`, its tests); empty when no phase has a series.
pub fn details_section(configs: &[(&str, &[TestResult])], width: usize) -> String {
    let lines: Vec<String> = configs.iter().flat_map(|(l, t)| details_lines(l, t, width)).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nOver time (median repetition; bars from 0 to the phase's largest point; a stall: intervals with no completion between intervals with some):\n",
    );
    for l in lines {
        out.push_str("  ");
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Notes of `t`'s paced and steady-state phases (median repetition): the rate asked and
/// achieved (and by how much it fell short), and whether the steady state held.
pub fn load_notes(t: &TestResult) -> Vec<String> {
    let mut out = Vec::new();
    let Some(r) = t.median_rep() else { return out };
    for p in r.phases.iter().filter(|p| p.timed) {
        let Some(l) = &p.load else { continue };
        if let Some(rate) = &l.rate {
            let short = if rate.short() {
                format!(
                    ": fell short by {:.0}% (the device, or the threads, could not keep up; latency counts the ops held back)",
                    100.0 * (1.0 - rate.ratio())
                )
            } else {
                String::new()
            };
            out.push(format!("test {} phase {}: fixed rate {}{short}", t.id, p.name, rate.words()));
        }
        if let Some(s) = &l.steady {
            out.push(format!("test {} phase {}: {}", t.id, p.name, s.words()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_scales_to_the_maximum_and_averages_neighbours() {
        assert_eq!(sparkline(&[0.0, 1.0, 2.0, 4.0, 8.0], 10), " ▂▃▅█");
        assert_eq!(sparkline(&[8.0, 8.0, 0.0, 0.0], 2), "█ ");
        assert_eq!(sparkline(&[], 5), "");
    }
}
