//! Latency against load in text (`--curve`): under the main table, one small table per test
//! and curved phase, a row per step and configuration (the median repetition's curve): rate
//! asked and achieved, shortfall, p50/p99/p99.9 from the schedule, the knee marked; with a
//! comparison, each step's verdict on p99 against the baseline. Then each configuration's
//! knee in words and the definition.

use super::frame::{self, Grid, Kind};
use crate::model::curve::{PhaseCurve, StepVerdict};
use crate::model::result::TestResult;
use crate::model::units::{nanos, short};
use crate::model::verdict::Verdict;

/// Ops per second, short: `950`, `12.3k`, `1.05M`.
pub fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", short(v / 1e6))
    } else if v >= 1e4 {
        format!("{}k", short(v / 1e3))
    } else {
        short(v)
    }
}

/// The curved phases of test `ti` over `groups` (configuration label, its tests), in order of
/// appearance.
fn phases(groups: &[(&str, &[TestResult])], ti: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, tests) in groups {
        let Some(t) = tests.get(ti) else { continue };
        for p in t.reps.iter().flat_map(|r| &r.phases).filter(|p| p.curve.is_some()) {
            if !out.contains(&p.name) {
                out.push(p.name.clone());
            }
        }
    }
    out
}

/// The curve of phase `name` in `t`'s median repetition.
pub fn median_curve<'a>(t: &'a TestResult, name: &str) -> Option<&'a PhaseCurve> {
    let r = t.median_rep()?;
    r.phases.iter().find(|p| p.timed && p.name == name).and_then(|p| p.curve.as_ref())
}

/// A step's verdict in a cell, the winner named.
fn verdict_cell(v: &Verdict, base: &str, other: &str) -> String {
    match v {
        Verdict::Win { winner, factor, tested } => {
            let w = if *winner == 0 { base } else { other };
            let mark = if *tested { "" } else { " (untested)" };
            format!("{w} {factor:.1}X{mark}")
        }
        Verdict::Draw { .. } => "draw".into(),
        Verdict::NotCompared { .. } => "undecided".into(),
    }
}

/// The knee of `c` in words: `knee 9.8k ops/s (p99 350µs ≤ 3× 120µs)`.
pub fn knee_words(c: &PhaseCurve) -> String {
    let Some(k) = c.knee_step() else {
        return "no steps ran".into();
    };
    let limit = format!("{}× the unloaded {}", short(c.knee_multiple), nanos(c.unloaded_p99_nanos));
    let mut s = if c.exceeded {
        format!(
            "knee at {} ops/s achieved ({}% step; p99 {} within {limit})",
            rate(k.achieved_ops_per_s),
            short(k.percent),
            nanos(k.p99_nanos)
        )
    } else {
        format!(
            "no knee up to the closed-loop maximum: p99 stayed within {limit} at every step (top step {} ops/s, p99 {})",
            rate(k.achieved_ops_per_s),
            nanos(k.p99_nanos)
        )
    };
    s.push_str(&format!(
        "; closed loop {} ops/s, p99 {}",
        rate(c.closed_loop_ops_per_s),
        nanos(c.closed_loop_p99_nanos)
    ));
    if c.partial {
        s.push_str("; cut short: fewer steps than planned");
    }
    s
}

/// The text section: every test with a curve on some configuration; empty when none has one.
/// `verdicts` by test index (a comparison's), or empty.
pub fn section(
    groups: &[(&str, &[TestResult])],
    verdicts: &[&[StepVerdict]],
    width: usize,
) -> String {
    let ntests = groups.iter().map(|g| g.1.len()).max().unwrap_or(0);
    let mut out = String::new();
    let base = groups.first().map_or("", |g| g.0);
    let mut definition = None;
    for ti in 0..ntests {
        for name in phases(groups, ti) {
            let id = groups.iter().find_map(|g| g.1.get(ti)).map_or("", |t| t.id.as_str());
            let mut g = Grid::new();
            g.column("step", Kind::Key);
            if groups.len() > 1 {
                g.column("config", Kind::Key);
            }
            for h in ["asked/s", "achieved/s", "short"] {
                g.column(h, Kind::Figure);
            }
            for h in ["p50", "p99", "p99.9"] {
                g.glued(h, Kind::Figure);
            }
            let vs = verdicts.get(ti).copied().unwrap_or(&[]);
            if !vs.is_empty() {
                g.column(format!("p99 vs {base}"), Kind::Words);
            }
            let curves: Vec<Option<&PhaseCurve>> = groups
                .iter()
                .map(|(_, ts)| ts.get(ti).and_then(|t| median_curve(t, &name)))
                .collect();
            let mut percents: Vec<f64> = Vec::new();
            for c in curves.iter().flatten() {
                for s in &c.steps {
                    if !percents.contains(&s.percent) {
                        percents.push(s.percent);
                    }
                }
            }
            percents.sort_by(f64::total_cmp);
            for pct in &percents {
                for (ci, c) in curves.iter().enumerate() {
                    let Some(c) = c else { continue };
                    let Some((k, s)) = c.steps.iter().enumerate().find(|(_, s)| s.percent == *pct)
                    else {
                        continue;
                    };
                    definition.get_or_insert_with(|| c.definition());
                    let knee = if c.knee == Some(k) { " ◆" } else { "" };
                    let mut row = vec![format!("{}%{knee}", short(*pct))];
                    if groups.len() > 1 {
                        row.push(groups[ci].0.to_string());
                    }
                    row.push(rate(s.asked_ops_per_s));
                    row.push(rate(s.achieved_ops_per_s));
                    row.push(if s.shortfall_percent >= 2.0 {
                        format!("{}%", short(s.shortfall_percent))
                    } else {
                        "-".into()
                    });
                    row.extend([nanos(s.p50_nanos), nanos(s.p99_nanos), nanos(s.p999_nanos)]);
                    if !vs.is_empty() {
                        let v = vs
                            .iter()
                            .find(|v| v.phase == name && v.config == ci && v.percent == *pct);
                        row.push(v.map_or(String::new(), |v| {
                            verdict_cell(&v.verdict, base, groups[ci].0)
                        }));
                    }
                    g.row(row);
                }
            }
            out.push('\n');
            let head = format!(
                "Latency against load, test {id} phase {name} (median repetition; steps are % of each configuration's closed-loop rate; latency from each op's scheduled start):"
            );
            out.push_str(&frame::wrap(&head, width, "", "  "));
            out.push_str(&g.render(width));
            for (ci, c) in curves.iter().enumerate() {
                let Some(c) = c else { continue };
                let who =
                    if groups.len() > 1 { format!("{}: ", groups[ci].0) } else { String::new() };
                out.push_str(&frame::wrap(&format!("{who}{}", knee_words(c)), width, "  ", "    "));
            }
        }
    }
    if let Some(d) = definition {
        let d = format!("◆ {d}; short: achieved below asked by 2% or more.");
        out.push_str(&frame::wrap(&d, width, "", "  "));
        if verdicts.iter().any(|v| !v.is_empty()) {
            let rule = "p99 vs: each step's p99 compared by the rule above over the repetitions (the steps of a curve are one family); the winner has the lower p99, by the factor; with one repetition a step is undecided.";
            out.push_str(&frame::wrap(rule, width, "", "  "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::curve::CurveStep;
    use crate::model::result::{PhaseResult, RepResult, TestStatus};

    fn test_with(steps: Vec<(f64, f64, f64, u64)>) -> TestResult {
        let steps = steps
            .into_iter()
            .map(|(percent, asked, achieved, p99_us)| CurveStep {
                percent,
                asked_ops_per_s: asked,
                achieved_ops_per_s: achieved,
                shortfall_percent: CurveStep::shortfall(asked, achieved),
                p50_nanos: p99_us * 500,
                p99_nanos: p99_us * 1000,
                p999_nanos: p99_us * 2000,
                ..CurveStep::default()
            })
            .collect();
        let curve = PhaseCurve::of((10_000.0, 5_000_000), 3.0, steps, false);
        let phase = PhaseResult {
            name: "read".into(),
            timed: true,
            wall_nanos: 1_000_000_000,
            curve: Some(curve),
            ..PhaseResult::default()
        };
        let rep = RepResult { complete: true, phases: vec![phase], ..RepResult::default() };
        TestResult {
            id: "r".into(),
            name: "reads".into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            reps: vec![rep],
            complete_reps: 1,
            figure: Default::default(),
            summary: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_text_table_has_every_step_the_knee_and_the_definition() {
        let t = [test_with(vec![
            (50.0, 5000.0, 5000.0, 100),
            (75.0, 7500.0, 7400.0, 200),
            (100.0, 10_000.0, 8000.0, 900),
        ])];
        let s = section(&[("ext4", &t)], &[], 120);
        assert!(s.contains("test r phase read"), "{s}");
        assert!(s.contains("7400") && s.contains("75% ◆"), "{s}");
        assert!(s.contains("20%"), "the 100% step fell 20% short: {s}");
        assert!(s.contains("knee at 7400 ops/s achieved (75% step"), "{s}");
        assert!(s.contains("◆ knee: the highest achieved rate"), "{s}");
        assert!(s.contains("exceeds 3× the unloaded p99"), "{s}");
        let knee_rows: Vec<&str> = s.lines().filter(|l| l.contains("% ◆")).collect();
        assert_eq!(knee_rows.len(), 1, "{s}");
        assert!(knee_rows[0].contains("75% ◆"), "{s}");
        assert_eq!(section(&[("ext4", &[])], &[], 120), "");
    }

    #[test]
    fn a_comparison_shows_each_steps_verdict_and_says_when_it_did_not_decide() {
        let a = [test_with(vec![(50.0, 5000.0, 5000.0, 100), (100.0, 10_000.0, 9900.0, 150)])];
        let b = [test_with(vec![(50.0, 4000.0, 4000.0, 300), (100.0, 8000.0, 7900.0, 400)])];
        let v = vec![
            StepVerdict {
                phase: "read".into(),
                config: 1,
                percent: 50.0,
                verdict: Verdict::Win { winner: 0, factor: 3.0, tested: true },
            },
            StepVerdict {
                phase: "read".into(),
                config: 1,
                percent: 100.0,
                verdict: Verdict::NotCompared { reason: "one repetition".into() },
            },
        ];
        let s = section(&[("ext4", &a), ("xfs", &b)], &[&v], 160);
        assert!(s.contains("p99 vs ext4"), "{s}");
        assert!(s.contains("ext4 3.0X"), "{s}");
        assert!(s.contains("undecided"), "{s}");
        assert!(s.contains("xfs: no knee up to the closed-loop maximum"), "{s}");
    }
}
