//! `fsbench compare`: the same suite on several configurations, interleaved by the suite driver
//! ([`crate::driver::Order::Interleaved`]), and the study's head-to-head table and summary lines.
//!
//! Interleaving: repetition by repetition, test by test, every configuration runs once before
//! any runs again (A B A B ...), and the order rotates with the test and repetition, so slow drift
//! of a shared, noisy machine does not favour whichever side always goes first. Repetition k
//! uses the same random seed on every configuration, so each does the same operations.

use crate::model::report::{ConfigResult, PairSummary, Report, TestRow};
use crate::model::verdict::UNTESTED_WORDS;
use crate::model::verdict::{Rule, Verdict};

use crate::analysis::explain::{self};
use crate::driver::Targets;
use crate::engine::EngineOptions;
use crate::model::facts::Facts;
use crate::model::host::HostInfo;
use crate::model::result::TestResult;
use crate::stats::summary::Stats;

/// Options of a comparison run.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Engine options (`repeat` is the number of interleaved rounds).
    pub engine: EngineOptions,
    /// Decision thresholds.
    pub rule: Rule,
    /// Recreate each filesystem before every test.
    pub fresh_per_test: bool,
}

/// The comparison of what the driver produced on `targets` (its [`crate::driver::Order`] is
/// `Interleaved` for a `compare`).
pub fn from_outcome(
    outcome: crate::driver::Outcome,
    targets: &dyn Targets,
    opts: &CompareOptions,
) -> Report {
    let started = outcome.runs.first().map(|r| r.started_unix_s).unwrap_or(0);
    let configs: Vec<ConfigResult> = outcome
        .runs
        .into_iter()
        .enumerate()
        .map(|(i, run)| ConfigResult {
            label: targets.target(i).label.clone(),
            env: targets.env(i),
            run,
        })
        .collect();
    build_report(configs, opts, started, outcome.interrupted)
}

/// Turn per-configuration results into the comparison (verdicts and summary lines).
pub fn build_report(
    configs: Vec<ConfigResult>,
    opts: &CompareOptions,
    started_unix_s: u64,
    interrupted: bool,
) -> Report {
    let baseline = 0;
    let ntests = configs.first().map(|c| c.run.tests.len()).unwrap_or(0);
    let mut tests = Vec::with_capacity(ntests);
    let sides: Vec<(&str, &[TestResult])> =
        configs.iter().map(|c| (c.label.as_str(), c.run.tests.as_slice())).collect();
    let verdicts = crate::decision::versus_baseline(&sides, baseline, &opts.rule);
    for (ti, vs) in verdicts.into_iter().enumerate() {
        let base = &configs[baseline];
        let bt = &base.run.tests[ti];
        let medians = |f: fn(&crate::model::result::Summary) -> &Stats| -> Vec<Option<f64>> {
            configs.iter().map(|c| c.run.tests[ti].summary.as_ref().map(|s| f(s).median)).collect()
        };
        // Medians of the figure of merit: what the verdicts rank.
        let merit: Vec<Option<f64>> = configs.iter().map(|c| c.run.tests[ti].median()).collect();
        let facts: Vec<Option<Facts>> = configs
            .iter()
            .map(|c| {
                let t = &c.run.tests[ti];
                t.median_rep().map(|r| crate::model::facts::of(r, t.threads))
            })
            .collect();
        let mut why: Vec<_> = vs
            .iter()
            .enumerate()
            .map(|(i, v): (usize, &Option<Verdict>)| match v {
                Some(v @ (Verdict::Win { .. } | Verdict::Draw { .. })) => {
                    // A win, or a draw whose medians lie further apart than the minimum effect
                    // (its facts are shown, marked "not significant").
                    let winner = match (v, merit[baseline], merit[i]) {
                        (Verdict::Win { winner, .. }, _, _) => *winner,
                        (Verdict::Draw { factor, .. }, Some(a), Some(b))
                            if *factor >= 1.0 + opts.rule.min_effect =>
                        {
                            usize::from(b > a)
                        }
                        _ => return Vec::new(),
                    };
                    let (wi, li) = if winner == 0 { (baseline, i) } else { (i, baseline) };
                    match (&facts[wi], &facts[li]) {
                        (Some(fw), Some(fl)) => {
                            let w = explain::Side { label: &configs[wi].label, facts: fw };
                            let l = explain::Side { label: &configs[li].label, facts: fl };
                            let mut v = explain::explain(&w, &l, 3);
                            v.extend(explain::context(&w, &l));
                            v
                        }
                        _ => Vec::new(),
                    }
                }
                _ => Vec::new(),
            })
            .collect();
        // A role whose throughput changed a lot, whatever the verdict: what the test's own
        // figure does not show (after the reasons, before the context lines). Each role by name
        // (with the phase's when several timed phases have roles), the median repetition's, as
        // every output shows them.
        let roles: Vec<Vec<(String, f64)>> = configs
            .iter()
            .map(|c| {
                let rs = c.run.tests[ti].roles();
                let phases: std::collections::BTreeSet<&str> = rs.iter().map(|r| r.0).collect();
                rs.iter()
                    .map(|(p, r)| {
                        let name = if phases.len() > 1 {
                            format!("{p}/{}", r.name)
                        } else {
                            r.name.clone()
                        };
                        (name, r.mib_per_s)
                    })
                    .collect()
            })
            .collect();
        for (i, v) in vs.iter().enumerate() {
            if i != baseline && matches!(v, Some(Verdict::Win { .. } | Verdict::Draw { .. })) {
                let changed = explain::role_changes(
                    (&configs[baseline].label, &roles[baseline]),
                    (&configs[i].label, &roles[i]),
                );
                let at = why[i].iter().position(|e| e.is_context()).unwrap_or(why[i].len());
                why[i].splice(at..at, changed);
            }
        }
        // As `--repeat auto` judges it after the test's last round (`looks`: the rounds from the
        // 5th to the most this test got).
        let unsettled = vs
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Some(Verdict::Win { tested: true, .. }) => {
                    let (a, b) = (bt, &configs[i].run.tests[ti]);
                    let n = a.reps.len().max(b.reps.len()) as u32;
                    let looks = n.saturating_sub(crate::decision::AutoRepeat::default().min) + 1;
                    let comparisons = ntests * configs.len().saturating_sub(1);
                    let p = crate::decision::settle_win_p(comparisons, looks);
                    crate::decision::settled(a, b, &opts.rule, p)
                        != Some(crate::decision::Settled::Win)
                }
                _ => false,
            })
            .collect();
        tests.push(TestRow {
            id: bt.id.clone(),
            name: bt.name.clone(),
            figure: bt.figure,
            median_mib_per_s: medians(|s| &s.mib_per_s),
            median_ops_per_s: medians(|s| &s.ops_per_s),
            median_elapsed_s: medians(|s| &s.elapsed_s),
            vs_baseline: vs,
            facts,
            why,
            unsettled,
            curve_verdicts: curve_verdicts(&configs, ti, baseline, &opts.rule),
        });
    }
    let pairs = (0..configs.len())
        .filter(|i| *i != baseline)
        .map(|i| pair_summary(&configs[baseline].label, &configs[i].label, &tests, i))
        .collect();
    Report {
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix_s,
        host: HostInfo::current(),
        suite: configs.first().map(|c| c.run.suite.clone()).unwrap_or_default(),
        scale: configs.first().map(|c| c.run.scale.clone()).unwrap_or_default(),
        repeat: opts.engine.repeat,
        fresh_per_test: opts.fresh_per_test,
        rule: opts.rule,
        baseline,
        configs,
        tests,
        pairs,
        interrupted,
        time: None,
    }
    .with_time_of_reps()
}

/// `--curve`: test `ti`'s curves decided step by step, each configuration against the
/// baseline, by the comparison's rule on 1 / p99 of the step over the completed repetitions
/// (paired by round when both sides have it in every round; the steps of one phase's curve
/// form one family). A step is compared at the same percentage of each side's own
/// closed-loop maximum; with one repetition on a side it is not decided.
fn curve_verdicts(
    configs: &[ConfigResult],
    ti: usize,
    baseline: usize,
    rule: &crate::model::verdict::Rule,
) -> Vec<crate::model::curve::StepVerdict> {
    use crate::model::curve::StepVerdict;
    let curves = |c: &ConfigResult, phase: &str| -> Vec<Option<crate::model::curve::PhaseCurve>> {
        let Some(t) = c.run.tests.get(ti) else { return Vec::new() };
        t.reps
            .iter()
            .filter(|r| r.complete)
            .map(|r| {
                r.phases.iter().find(|p| p.timed && p.name == phase).and_then(|p| p.curve.clone())
            })
            .collect()
    };
    let Some(base) = configs.get(baseline).and_then(|c| c.run.tests.get(ti)) else {
        return Vec::new();
    };
    let mut phases: Vec<String> = Vec::new();
    for p in base.reps.iter().flat_map(|r| &r.phases).filter(|p| p.curve.is_some()) {
        if !phases.contains(&p.name) {
            phases.push(p.name.clone());
        }
    }
    let mut out = Vec::new();
    for (i, c) in configs.iter().enumerate().filter(|(i, _)| *i != baseline) {
        for phase in &phases {
            let (ca, cb) = (curves(&configs[baseline], phase), curves(c, phase));
            let percents: Vec<f64> = ca
                .iter()
                .flatten()
                .flat_map(|c| c.steps.iter().map(|s| s.percent))
                .fold(Vec::new(), |mut v, p| {
                    if !v.contains(&p) {
                        v.push(p);
                    }
                    v
                });
            let inv =
                |cs: &[Option<crate::model::curve::PhaseCurve>], pct: f64| -> Vec<Option<f64>> {
                    cs.iter()
                        .map(|c| {
                            let s = c.as_ref()?.steps.iter().find(|s| s.percent == pct)?;
                            (s.p99_nanos > 0).then(|| 1e9 / s.p99_nanos as f64)
                        })
                        .collect()
                };
            let mut family = Vec::new();
            let mut single = Vec::new();
            for &pct in &percents {
                let (a, b) = (inv(&ca, pct), inv(&cb, pct));
                let paired = a.len() == b.len() && a.iter().chain(&b).all(Option::is_some);
                let xa: Vec<f64> = a.into_iter().flatten().collect();
                let xb: Vec<f64> = b.into_iter().flatten().collect();
                single.push(xa.len() < 2 || xb.len() < 2);
                family.push((xa, xb, paired));
            }
            // Steps with one repetition a side are not decided (no noise estimate); the rest
            // form the family.
            let tested: Vec<_> =
                family.iter().zip(&single).filter(|(_, s)| !**s).map(|(f, _)| f.clone()).collect();
            let mut decided = crate::decision::decide_sample_family(&tested, rule).into_iter();
            for (&pct, one) in percents.iter().zip(&single) {
                let verdict = if *one {
                    crate::model::verdict::Verdict::NotCompared {
                        reason: "not decided: one repetition per step on a side (no noise estimate); run --repeat 2 or more".into(),
                    }
                } else {
                    decided.next().unwrap_or(crate::model::verdict::Verdict::NotCompared {
                        reason: "no usable figure on a side".into(),
                    })
                };
                out.push(StepVerdict { phase: phase.clone(), config: i, percent: pct, verdict });
            }
        }
    }
    out
}

/// The study's lines for baseline `a` against configuration `b` (index `bi` in the rows).
pub fn pair_summary(a: &str, b: &str, rows: &[TestRow], bi: usize) -> PairSummary {
    let mut s = PairSummary {
        a: a.to_string(),
        b: b.to_string(),
        a_wins: 0,
        a_mean_factor: None,
        b_wins: 0,
        b_mean_factor: None,
        draws: 0,
        not_compared: vec![],
        lines: vec![],
    };
    let (mut fa, mut fb) = (Vec::new(), Vec::new());
    // Wins of a and of b that rest on one repetition (no noise estimate).
    let (mut ua, mut ub) = (0u32, 0u32);
    for row in rows {
        match row.vs_baseline.get(bi).and_then(|v| v.as_ref()) {
            Some(Verdict::Win { winner: 0, factor, tested }) => {
                fa.push(*factor);
                ua += u32::from(!tested);
            }
            Some(Verdict::Win { factor, tested, .. }) => {
                fb.push(*factor);
                ub += u32::from(!tested);
            }
            Some(Verdict::Draw { .. }) => s.draws += 1,
            Some(Verdict::NotCompared { reason }) => {
                s.not_compared.push((row.id.clone(), reason.clone()))
            }
            None => {}
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    s.a_wins = fa.len() as u32;
    s.b_wins = fb.len() as u32;
    s.a_mean_factor = mean(&fa);
    s.b_mean_factor = mean(&fb);
    let tests = |n: u32| if n == 1 { "1 test".to_string() } else { format!("{n} tests") };
    let compared = s.a_wins + s.b_wins + s.draws;
    s.lines.push(format!("of {} compared between {a} and {b}:", tests(compared)));
    // Larger winner first, as the study wrote it.
    let mut sides = [(b, s.b_wins, s.b_mean_factor, a, ub), (a, s.a_wins, s.a_mean_factor, b, ua)];
    if s.a_wins > s.b_wins {
        sides.swap(0, 1);
    }
    for (w, n, f, l, untested) in sides {
        let mark = match untested {
            0 => String::new(),
            u if u == n => format!(" ({UNTESTED_WORDS})"),
            u => format!(" ({u} of them {UNTESTED_WORDS})"),
        };
        match f {
            Some(f) => s
                .lines
                .push(format!("{w} outpaces {l} in {} by a mean factor of {f:.1}{mark}", tests(n))),
            None => s.lines.push(format!("{w} outpaces {l} in no test")),
        }
    }
    s.lines.push(format!("{b} equals {a} (draw) in {}", tests(s.draws)));
    if !s.not_compared.is_empty() {
        let why: Vec<String> =
            s.not_compared.iter().map(|(id, r)| format!("test {id}: {r}")).collect();
        s.lines.push(format!(
            "{} could not be compared: {}",
            tests(s.not_compared.len() as u32),
            why.join("; ")
        ));
    }
    s
}

impl crate::store::RunRecord {
    /// The report, rebuilt with the stored decision rule (so verdicts are those `compare`
    /// printed). A `run` is a report of one configuration (no verdicts).
    pub fn report(&self) -> Report {
        let configs: Vec<ConfigResult> = (0..self.configs.len())
            .filter_map(|i| {
                Some(ConfigResult {
                    label: self.configs[i].label.clone(),
                    env: self.configs[i].env.clone(),
                    run: self.run_report(i)?,
                })
            })
            .collect();
        let opts = CompareOptions {
            engine: EngineOptions {
                repeat: self.repeat,
                compress_percent: self.options.compress_percent,
                seed: self.options.seed,
                trace: false,
                offcpu: false,
                verify: false,
                stonewall: None,
                share: None,
                min_time: Default::default(),
                reuse_layout: true,
                passes: None,
                interval: None,
            },
            rule: self.options.rule,
            fresh_per_test: self.options.fresh_per_test,
        };
        let interrupted =
            self.status == crate::model::run::RunStatus::Interrupted || self.unfinished();
        let mut r = build_report(configs, &opts, self.started_unix_s, interrupted);
        r.host = self.host.clone();
        r.fsbench_version = self.fsbench_version.clone();
        // As the command printed it; else what the repetitions recorded.
        if self.time.is_some() {
            r.time = self.time.clone();
        }
        r
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::result::{Figure, RunReport};

    fn row(id: &str, v: Verdict) -> TestRow {
        TestRow {
            id: id.into(),
            name: id.into(),
            figure: Figure::MibPerS,
            median_mib_per_s: vec![],
            median_ops_per_s: vec![],
            median_elapsed_s: vec![],
            vs_baseline: vec![None, Some(v)],
            facts: vec![],
            why: vec![],
            unsettled: vec![],
            curve_verdicts: vec![],
        }
    }

    #[test]
    fn reproduces_the_studys_summary_lines() {
        // The study's table: ZFS (b) won 1,2,4,6,8,11; UFS (a) won 3,7,9,14; draws 10,12; 5,13 no data.
        let w = |winner, factor| Verdict::Win { winner, factor, tested: true };
        let rows = vec![
            row("1", w(1, 3.4)),
            row("2", w(1, 5.3)),
            row("3", w(0, 1.8)),
            row("4", w(1, 1.1)),
            row("5", Verdict::NotCompared { reason: "no data".into() }),
            row("6", w(1, 2.6)),
            row("7", w(0, 1.3)),
            row("8", w(1, 2.3)),
            row("9", w(0, 2.3)),
            row("10", Verdict::Draw { factor: 1.01, tested: true }),
            row("11", w(1, 5.8)),
            row("12", Verdict::Draw { factor: 1.0, tested: true }),
            row("13", Verdict::NotCompared { reason: "no data".into() }),
            row("14", w(0, 6.9)),
        ];
        let s = pair_summary("UFS", "ZFS", &rows, 1);
        assert_eq!(s.lines[0], "of 12 tests compared between UFS and ZFS:");
        assert_eq!(s.lines[1], "ZFS outpaces UFS in 6 tests by a mean factor of 3.4");
        assert_eq!(s.lines[2], "UFS outpaces ZFS in 4 tests by a mean factor of 3.1");
        assert_eq!(s.lines[3], "ZFS equals UFS (draw) in 2 tests");
        assert!(s.lines[4].starts_with("2 tests could not be compared: test 5: no data"));
    }

    /// A configuration whose one test ran with `mibs` per repetition and spent `sync` of each
    /// second inside fsync.
    pub(crate) fn config(label: &str, mibs: &[f64], sync: u64) -> ConfigResult {
        let mut t = crate::decision::tests::result(mibs);
        for r in &mut t.reps {
            r.phases[0].sync_nanos = sync;
            r.phases[0].bytes_written = 64 << 20;
            r.phases[0].wall_nanos = 1_000_000_000;
        }
        t.finalize();
        ConfigResult {
            label: label.into(),
            env: None,
            run: RunReport {
                fsbench_version: String::new(),
                started_unix_s: 0,
                host: Default::default(),
                target: Default::default(),
                suite: "s".into(),
                scale: "quick".into(),
                repeat: mibs.len() as u32,
                tests: vec![t],
                interrupted: false,
                cluster: None,
                time: None,
            },
        }
    }

    #[test]
    fn a_draw_with_a_large_gap_gets_its_facts() {
        let opts = CompareOptions {
            engine: Default::default(),
            rule: Rule::default(),
            fresh_per_test: false,
        };
        // Medians 1.8x apart, but one side is so noisy that the test cannot tell: a draw.
        let configs = vec![
            config("ext4", &[100.0, 30.0, 300.0], 900_000_000),
            config("xfs", &[180.0, 185.0, 175.0], 100_000_000),
        ];
        let r = build_report(configs, &opts, 0, false);
        assert!(
            matches!(r.tests[0].vs_baseline[1], Some(Verdict::Draw { .. })),
            "{:?}",
            r.tests[0]
        );
        assert!(!r.tests[0].why[1].is_empty(), "facts for the draw");
        // Where each side's time went, after the reasons.
        assert!(r.tests[0].why[1].last().is_some_and(|e| e.rule == "time_split"));
        // Medians within the minimum effect: no facts.
        let configs = vec![
            config("ext4", &[100.0, 30.0, 300.0], 900_000_000),
            config("xfs", &[102.0, 101.0, 103.0], 100_000_000),
        ];
        let r = build_report(configs, &opts, 0, false);
        assert!(r.tests[0].why[1].is_empty());
    }

    #[test]
    fn an_untested_win_is_marked_in_the_summary_lines() {
        let opts = CompareOptions {
            engine: Default::default(),
            rule: Rule::default(),
            fresh_per_test: false,
        };
        // One repetition each, twice as fast: a win, but with no noise estimate.
        let configs =
            vec![config("ext4", &[100.0], 900_000_000), config("xfs", &[200.0], 100_000_000)];
        let r = build_report(configs, &opts, 0, false);
        assert!(
            matches!(r.tests[0].vs_baseline[1], Some(Verdict::Win { tested: false, .. })),
            "{:?}",
            r.tests[0].vs_baseline
        );
        let mark = format!("({UNTESTED_WORDS})");
        let line = r.pairs[0].lines.iter().find(|l| l.starts_with("xfs outpaces")).unwrap();
        assert!(line.ends_with(&format!("by a mean factor of 2.0 {mark}")), "{line}");
        // The loser's line quotes no win: nothing to mark.
        let other = r.pairs[0].lines.iter().find(|l| l.starts_with("ext4 outpaces")).unwrap();
        assert!(!other.contains("untested"), "{other}");
    }
}
