//! `fsbench diff`: two recorded runs compared test by test with `compare`'s decision rule, on
//! each test's figure of merit (MiB/s for data tests, ops/s for file-set tests).
//!
//! Configurations are matched by label (two runs of one configuration each are matched whatever
//! their labels), tests by id. All matched pairs of a diff are decided together, as one family
//! ([`crate::decision::decide_all`]: Yuen's trimmed t-test on log figures, and
//! Benjamini–Hochberg over the family). A tested win of the earlier run is a regression; a pair
//! with a single repetition on a side has no noise estimate and is never counted as a regression
//! or an improvement (it is marked untested).
//!
//! Two runs made at different times differ by more than their repetitions show: each is one
//! draw of the machine and of its new testbeds. Each pair's test therefore adds the test's
//! run-to-run spread ([`crate::decision::RunSpread`]), measured from the database's other runs
//! of the same test ([`History`]) or, with too few of them, the rule's assumed `run_spread`.
//! Over 10 pairs of identical compares on a 2-core VM the repetitions alone flagged 11 of 280
//! figures, and with the assumed 6% none (bench/results/2026-11-27-diff-across-time.md); the
//! Benjamini–Hochberg bound (a false alarm in at most 1 diff of 20) holds when the spread is
//! what the rule allows for.

use std::collections::HashMap;

use crate::decision::{self, RunSpread};
use crate::model::result::{Figure, TestResult};

use crate::model::verdict::{Rule, Verdict};
use crate::store::RunRecord;

/// How one test changed between the runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The later run is slower by `factor`.
    Regressed {
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test backed it (false: a single repetition on a side, no noise
        /// estimate; not counted as a regression).
        tested: bool,
    },
    /// The later run is faster by `factor`.
    Improved {
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test backed it (false: a single repetition on a side).
        tested: bool,
    },
    /// No significant change (`tested: false`: no change above the single-repetition threshold,
    /// and no test made).
    Same {
        /// Whether a significance test was made.
        tested: bool,
    },
    /// Not compared, with why.
    NotCompared(String),
}

/// One test of one configuration in both runs.
#[derive(Debug, Clone)]
pub struct DiffRow {
    /// Test id.
    pub id: String,
    /// Test name.
    pub name: String,
    /// Configuration label (of the later run).
    pub config: String,
    /// The figure both medians are of.
    pub figure: Figure,
    /// Median figure of merit in run A.
    pub median_a: Option<f64>,
    /// Median figure of merit in run B.
    pub median_b: Option<f64>,
    /// Median elapsed seconds of the timed phases in run A.
    pub elapsed_s_a: Option<f64>,
    /// Median elapsed seconds of the timed phases in run B.
    pub elapsed_s_b: Option<f64>,
    /// The outcome.
    pub change: Change,
    /// Run A's test missed a stated precondition in some repetitions (left out of its figure
    /// and of the decision).
    pub not_met_a: bool,
    /// Run B's likewise.
    pub not_met_b: bool,
    /// The shift between runs made at different times that the decision allowed for: measured
    /// from the database's other runs of this test, or the rule's assumed one; `None` when
    /// neither (`--run-spread 0` and too few other runs).
    pub spread: Option<RunSpread>,
}

impl DiffRow {
    /// ln(median B / median A), when both are positive.
    fn log_move(&self) -> Option<f64> {
        match (self.median_a, self.median_b) {
            (Some(a), Some(b)) if a > 0.0 && b > 0.0 => Some((b / a).ln()),
            _ => None,
        }
    }
}

/// The distinct values of `key` over `rows`, in first-seen order.
fn distinct<'a>(rows: &'a [DiffRow], key: impl Fn(&'a DiffRow) -> &'a String) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&key(r).as_str()) {
            out.push(key(r));
        }
    }
    out
}

/// The other recorded runs of each test, by (configuration label, test id): the same test definition on a
/// configuration of the same label, recorded on the same host, in runs other than the two
/// compared. From them `diff` measures how far the test moves from run to run.
pub type History = HashMap<(String, String), Vec<TestResult>>;

/// The outcome of a diff.
#[derive(Debug, Clone)]
pub struct Diff {
    /// Run A's id.
    pub run_a: i64,
    /// Run B's id.
    pub run_b: i64,
    /// One row per matched test and configuration.
    pub rows: Vec<DiffRow>,
    /// What could not be matched, and other things to know.
    pub notes: Vec<String>,
}

impl Diff {
    /// Tests that regressed significantly (a tested regression: untested ones never count).
    pub fn regressions(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| matches!(r.change, Change::Regressed { tested: true, .. }))
            .count()
    }

    /// Tests that improved significantly (tested).
    pub fn improvements(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| matches!(r.change, Change::Improved { tested: true, .. }))
            .count()
    }

    /// Pairs decided without a test (a single repetition on a side: no noise estimate).
    pub fn untested(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| {
                matches!(
                    r.change,
                    Change::Regressed { tested: false, .. }
                        | Change::Improved { tested: false, .. }
                        | Change::Same { tested: false }
                )
            })
            .count()
    }
}

/// Configuration pairs (index in A, index in B), and notes on what is only on one side.
fn pair_configs(ra: &RunRecord, rb: &RunRecord, notes: &mut Vec<String>) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    if ra.configs.len() == 1 && rb.configs.len() == 1 {
        pairs.push((0, 0));
        if ra.configs[0].label != rb.configs[0].label {
            notes.push(format!(
                "configurations matched although their labels differ: `{}` and `{}`",
                ra.configs[0].label, rb.configs[0].label
            ));
        }
        return pairs;
    }
    for (i, c) in ra.configs.iter().enumerate() {
        match rb.configs.iter().position(|d| d.label == c.label) {
            Some(j) => pairs.push((i, j)),
            None => notes.push(format!("configuration `{}` is only in run {}", c.label, ra.id)),
        }
    }
    for c in &rb.configs {
        if !ra.configs.iter().any(|d| d.label == c.label) {
            notes.push(format!("configuration `{}` is only in run {}", c.label, rb.id));
        }
    }
    pairs
}

/// How a test's uncached timed phases were made uncached, when it has any: whether every cache
/// of the machine was dropped (`drop_caches`, before 2026-11-27 and with `--drop-caches`) or
/// only the test's files' pages.
fn uncached_by_drop_caches(t: &TestResult) -> Option<bool> {
    let mut methods = t
        .reps
        .iter()
        .flat_map(|r| &r.phases)
        .filter(|p| p.timed && p.cache.required == crate::model::job::CacheReq::Uncached)
        .map(|p| &p.cache.method)
        .filter(|m| *m != crate::model::result::CREATED)
        .peekable();
    methods.peek()?;
    Some(methods.all(|m| m.contains("drop_caches")))
}

fn elapsed(t: &TestResult) -> Option<f64> {
    t.summary.as_ref().map(|s| s.elapsed_s.median)
}

/// Share of a configuration's figures that must have moved the same way for [`shift_notes`] to
/// say the whole configuration moved.
const SHIFT_SHARE: f64 = 0.75;
/// Fewest figures of a configuration for [`shift_notes`] to judge it.
const SHIFT_LEAST: usize = 4;

/// One note per configuration whose figures moved the same way between the runs: at least
/// [`SHIFT_SHARE`] of them, by a median of at least the minimum effect. Two runs made at
/// different times on new testbeds can differ this way with nothing changed in the system under
/// test (ten identical compares on this VM: one run's ext4 figures 1-30% lower in 13 of 14 tests,
/// bench/results/2026-11-27-compare-flips-drift.md): each test is then decided against no
/// change, as always, and the note says that the regressions may be that move.
fn shift_notes(rows: &[DiffRow], rule: &Rule, ra: i64, rb: i64) -> Vec<String> {
    let mut out = Vec::new();
    for c in distinct(rows, |r| &r.config) {
        let logs: Vec<f64> =
            rows.iter().filter(|r| r.config == c).filter_map(DiffRow::log_move).collect();
        if logs.len() < SHIFT_LEAST {
            continue;
        }
        let median = crate::stats::summary::median(&logs);
        let (word, same) = if median < 0.0 {
            ("lower", logs.iter().filter(|d| **d < 0.0).count())
        } else {
            ("higher", logs.iter().filter(|d| **d > 0.0).count())
        };
        if (same as f64) < SHIFT_SHARE * logs.len() as f64
            || median.abs() < (1.0 + rule.min_effect).ln()
        {
            continue;
        }
        out.push(format!(
            "{c}: {same} of {} figures are {word} in run {rb} than in run {ra} (median {:+.1}%): the \
             whole configuration moved, as it does when the machine or the testbed (a new image's \
             place on the disk, other tenants) changed between the runs; a regression below may \
             be that move rather than the system's. Runs side by side (`fsbench compare`) tell \
             them apart",
            logs.len(),
            median.exp_m1() * 100.0
        ));
    }
    out
}

/// The run-to-run spread a pair is decided with: measured from `history` of the test when
/// there are enough, else the rule's assumed one (none when that is 0).
fn spread_of(history: Option<&Vec<TestResult>>, rule: &Rule) -> Option<RunSpread> {
    let runs: Vec<&TestResult> = history.map(|v| v.iter().collect()).unwrap_or_default();
    RunSpread::measured(&runs).or_else(|| (rule.run_spread > 0.0).then(|| RunSpread::assumed(rule)))
}

/// One note per test that changed significantly on a configuration while every configuration
/// moved the same way, each by more than the minimum effect and by at least half the largest
/// move: a change the configurations share (the machine, the kernel, the host's flush latency)
/// rather than one configuration's. Ten identical
/// compares on this VM: in one pair, the three flush-bound tests were 20-28% slower on both
/// filesystems alike (bench/results/2026-11-27-compare-flips-drift.md).
fn shared_move_notes(rows: &[DiffRow], rule: &Rule) -> Vec<String> {
    let configs = distinct(rows, |r| &r.config);
    if configs.len() < 2 {
        return Vec::new();
    }
    let margin = (1.0 + rule.min_effect).ln();
    let mut out = Vec::new();
    for id in distinct(rows, |r| &r.id) {
        let of: Vec<&DiffRow> = rows.iter().filter(|r| r.id == id).collect();
        let flagged = of.iter().any(|r| {
            matches!(
                r.change,
                Change::Regressed { tested: true, .. } | Change::Improved { tested: true, .. }
            )
        });
        let moves: Vec<(&str, f64)> =
            of.iter().filter_map(|r| Some((r.config.as_str(), r.log_move()?))).collect();
        if !flagged || moves.len() != configs.len() {
            continue;
        }
        let largest = moves.iter().map(|(_, m)| m.abs()).fold(0.0, f64::max);
        let same_way = moves.iter().all(|(_, m)| {
            m.abs() > margin && m.abs() >= largest / 2.0 && m.signum() == moves[0].1.signum()
        });
        if !same_way {
            continue;
        }
        let list: Vec<String> =
            moves.iter().map(|(c, m)| format!("{c} {:+.0}%", m.exp_m1() * 100.0)).collect();
        out.push(format!(
            "test {id} moved the same way on every configuration ({}): a change they share (the \
             machine, the kernel, the host's flush latency) rather than one configuration's",
            list.join(", ")
        ));
    }
    out
}

/// Compare run B against run A with `rule`, each pair's test widened by the run-to-run spread
/// measured from the `history` of its other runs (or the rule's assumed one).
pub fn diff_runs(ra: &RunRecord, rb: &RunRecord, rule: &Rule, history: &History) -> Diff {
    let mut notes = Vec::new();
    let (la, lb) = (format!("run {}", ra.id), format!("run {}", rb.id));
    // Every matched (configuration, test) pair, decided below as one family.
    let mut matched: Vec<(&str, &TestResult, &TestResult)> = Vec::new();
    for (i, j) in pair_configs(ra, rb, &mut notes) {
        let (ca, cb) = (&ra.configs[i], &rb.configs[j]);
        for ta in &ca.tests {
            match cb.tests.iter().find(|t| t.id == ta.id) {
                Some(tb) => {
                    if let (Some(x), Some(y)) =
                        (uncached_by_drop_caches(ta), uncached_by_drop_caches(tb))
                    {
                        if x != y {
                            let how =
                                |all| if all { "drop_caches" } else { "its files' pages only" };
                            notes.push(format!(
                                "test {} ({}): its uncached phases were made uncached differently \
                                 (run {}: {}; run {}: {}): a change may come from that, not from \
                                 the system (`--drop-caches` drops everything)",
                                ta.id,
                                cb.label,
                                ra.id,
                                how(x),
                                rb.id,
                                how(y)
                            ));
                        }
                    }
                    matched.push((&cb.label, ta, tb))
                }
                None => {
                    notes.push(format!("test {} ({}) is only in run {}", ta.id, ca.label, ra.id))
                }
            }
        }
        for tb in &cb.tests {
            if !ca.tests.iter().any(|t| t.id == tb.id) {
                notes.push(format!("test {} ({}) is only in run {}", tb.id, cb.label, rb.id));
            }
        }
    }
    let spreads: Vec<Option<RunSpread>> = matched
        .iter()
        .map(|(config, ta, _)| spread_of(history.get(&(config.to_string(), ta.id.clone())), rule))
        .collect();
    let family: Vec<decision::Pair> = matched
        .iter()
        .zip(&spreads)
        .map(|((_, ta, tb), spread)| decision::Pair {
            a: ta,
            la: &la,
            b: tb,
            lb: &lb,
            paired: false,
            spread: *spread,
        })
        .collect();
    let verdicts = decision::decide_all(&family, rule);
    let rows: Vec<DiffRow> = matched
        .iter()
        .zip(verdicts)
        .zip(spreads)
        .map(|(((config, ta, tb), v), spread)| DiffRow {
            id: ta.id.clone(),
            name: ta.name.clone(),
            config: config.to_string(),
            figure: ta.figure,
            median_a: ta.median(),
            median_b: tb.median(),
            elapsed_s_a: elapsed(ta),
            elapsed_s_b: elapsed(tb),
            not_met_a: ta.is_not_met(),
            not_met_b: tb.is_not_met(),
            spread,
            change: match v {
                Verdict::Win { winner: 0, factor, tested } => Change::Regressed { factor, tested },
                Verdict::Win { factor, tested, .. } => Change::Improved { factor, tested },
                Verdict::Draw { tested, .. } => Change::Same { tested },
                Verdict::NotCompared { reason } => Change::NotCompared(reason),
            },
        })
        .collect();
    notes.extend(shift_notes(&rows, rule, ra.id, rb.id));
    notes.extend(shared_move_notes(&rows, rule));
    for (r, name) in [(ra, "A"), (rb, "B")] {
        if r.unfinished() {
            notes.push(format!(
                "run {} ({name}) did not finish: only its recorded tests are compared",
                r.id
            ));
        }
    }
    Diff { run_a: ra.id, run_b: rb.id, rows, notes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::tests::result;
    use crate::model::run::{RunKind, RunStatus};
    use crate::store::read::{ConfigRecord, RunRecord};

    fn test(id: &str, mibs: &[f64]) -> TestResult {
        let mut t = result(mibs);
        t.id = id.into();
        t.finalize();
        t
    }

    fn run(id: i64, tests: Vec<TestResult>) -> RunRecord {
        RunRecord {
            id,
            kind: RunKind::Run,
            started_unix_s: 0,
            finished_unix_s: Some(1),
            status: RunStatus::Ok,
            fsbench_version: String::new(),
            suite: "s".into(),
            scale: "quick".into(),
            repeat: 5,
            host: Default::default(),
            command_line: String::new(),
            time: None,
            options: Default::default(),
            configs: vec![ConfigRecord {
                label: "ext4".into(),
                env: None,
                target: Default::default(),
                tests,
            }],
        }
    }

    #[test]
    fn one_family_and_untested_pairs_never_regress() {
        let steady = |x: f64| [x, x * 1.01, x * 0.99, x * 1.005, x * 0.995];
        let a = run(
            1,
            vec![test("1", &steady(1000.0)), test("2", &steady(100.0)), test("3", &[100.0])],
        );
        let b =
            run(2, vec![test("1", &steady(500.0)), test("2", &steady(100.0)), test("3", &[50.0])]);
        let d = diff_runs(&a, &b, &Rule::default(), &History::new());
        assert_eq!(d.rows.len(), 3);
        assert!(
            matches!(d.rows[0].change, Change::Regressed { tested: true, .. }),
            "{:?}",
            d.rows[0]
        );
        assert_eq!(d.rows[1].change, Change::Same { tested: true });
        // Half the speed with one repetition: no noise estimate, so not a regression.
        assert!(
            matches!(d.rows[2].change, Change::Regressed { tested: false, .. }),
            "{:?}",
            d.rows[2]
        );
        assert_eq!((d.regressions(), d.improvements(), d.untested()), (1, 0, 1));
        let text = crate::present::diff::render(&d, &a, &b, &Rule::default(), 200);
        assert!(text.contains("UNTESTED") && text.contains("WARNING: 1 pairs"), "{}", text);
        assert!(text.contains("Benjamini-Hochberg") && text.contains("over the 2 tested pairs"));
        assert!(text.contains("1 regressed significantly"), "{}", text);
        assert!(
            text.contains("3 compared: 1 regressed significantly, 0 improved significantly, 1 without significant change, 1 untested."),
            "{}",
            text
        );
    }

    /// Two runs made at different times: a 15% drop with tight repetitions is within what runs
    /// of one setup move by (the assumed 6%), so not a regression, where the repetitions alone
    /// call it one; a halving still is. History runs of the test measure the spread instead:
    /// steady ones make the 15% drop a regression, ones that swing by tens of percent keep even
    /// the halving a draw.
    #[test]
    fn a_move_runs_of_one_setup_make_is_not_a_regression() {
        let steady = |x: f64| test("1", &[x, x * 1.01, x * 0.99, x * 1.005, x * 0.995]);
        let a = run(1, vec![steady(100.0)]);
        let (dropped, halved) = (run(2, vec![steady(85.0)]), run(2, vec![steady(50.0)]));
        let none = History::new();
        let alone = Rule { run_spread: 0.0, ..Rule::default() };
        let change =
            |b: &RunRecord, rule: &Rule, e: &History| diff_runs(&a, b, rule, e).rows[0].clone();
        assert!(matches!(
            change(&dropped, &alone, &none).change,
            Change::Regressed { tested: true, .. }
        ));
        assert_eq!(change(&dropped, &alone, &none).spread, None);
        let r = change(&dropped, &Rule::default(), &none);
        assert_eq!(r.change, Change::Same { tested: true });
        assert_eq!(r.spread, Some(RunSpread { sd: 0.06, runs: 0 }));
        assert!(matches!(
            change(&halved, &Rule::default(), &none).change,
            Change::Regressed { tested: true, .. }
        ));

        let key = ("ext4".to_string(), "1".to_string());
        let calm: History =
            [(key.clone(), [100.0, 101.0, 99.0, 100.5].map(steady).to_vec())].into();
        let r = change(&dropped, &Rule::default(), &calm);
        assert!(matches!(r.change, Change::Regressed { tested: true, .. }), "{r:?}");
        assert_eq!(r.spread.map(|s| s.runs), Some(4));
        let swinging: History =
            [(key, [70.0, 130.0, 85.0, 115.0, 100.0].map(steady).to_vec())].into();
        let r = change(&halved, &Rule::default(), &swinging);
        assert_eq!(r.change, Change::Same { tested: true }, "{r:?}");
        assert!(r.spread.unwrap().sd > 0.2, "{r:?}");
        let text = crate::present::diff::render(
            &diff_runs(&a, &halved, &Rule::default(), &swinging),
            &a,
            &halved,
            &Rule::default(),
            200,
        );
        assert!(text.contains("measured from 5 other runs of the same test for 1 pairs"), "{text}");
    }

    /// A test flagged on one configuration while every configuration moved the same way by a
    /// like amount: the note names the shared move; a move on one configuration only, or a
    /// much smaller one on the other (-22% against -10%), says nothing.
    #[test]
    fn a_move_every_configuration_shares_is_noted() {
        let steady = |id: &str, x: f64| test(id, &[x, x * 1.01, x * 0.99, x * 1.005, x * 0.995]);
        let two = |id: i64, a: f64, b: f64| {
            let mut r = run(id, vec![steady("2", a), steady("4", 100.0)]);
            let mut xfs = r.configs[0].clone();
            xfs.label = "xfs".into();
            xfs.tests = vec![steady("2", b), steady("4", 100.0)];
            r.configs.push(xfs);
            r
        };
        let rule = Rule { run_spread: 0.0, ..Rule::default() };
        let d = diff_runs(&two(1, 100.0, 100.0), &two(2, 78.0, 72.0), &rule, &History::new());
        let noted: Vec<_> = d.notes.iter().filter(|n| n.contains("same way on every")).collect();
        assert_eq!(noted.len(), 1, "{:?}", d.notes);
        assert!(
            noted[0].starts_with(
                "test 2 moved the same way on every configuration (ext4 -22%, xfs -28%)"
            ),
            "{}",
            noted[0]
        );
        for other in [100.0, 90.0] {
            let d = diff_runs(&two(1, 100.0, 100.0), &two(2, 78.0, other), &rule, &History::new());
            assert!(!d.notes.iter().any(|n| n.contains("same way on every")), "{:?}", d.notes);
        }
    }

    /// Most of a configuration's figures lower by more than the minimum effect: a note says the
    /// whole configuration moved; one test slower among steady ones, or a move below the minimum
    /// effect, says nothing.
    #[test]
    fn a_whole_configuration_that_moved_is_noted() {
        let steady = |x: f64| [x, x * 1.01, x * 0.99, x * 1.005, x * 0.995];
        let ids = ["1", "2", "3", "4", "5", "6"];
        let a = run(1, ids.iter().map(|i| test(i, &steady(100.0))).collect());
        let at = |f: &dyn Fn(usize) -> f64| {
            run(2, ids.iter().enumerate().map(|(k, i)| test(i, &steady(100.0 * f(k)))).collect())
        };
        let moved = diff_runs(
            &a,
            &at(&|k| if k == 5 { 1.02 } else { 0.9 }),
            &Rule::default(),
            &History::new(),
        );
        let noted: Vec<_> =
            moved.notes.iter().filter(|n| n.contains("whole configuration")).collect();
        assert_eq!(noted.len(), 1, "{:?}", moved.notes);
        assert!(
            noted[0].starts_with(
                "ext4: 5 of 6 figures are lower in run 2 than in run 1 (median -10.0%)"
            ),
            "{}",
            noted[0]
        );
        for f in [
            &(|k: usize| if k == 0 { 0.5 } else { 1.0 }) as &dyn Fn(usize) -> f64,
            &|_| 0.97,
            &|k| if k % 2 == 0 { 0.9 } else { 1.1 },
        ] {
            let d = diff_runs(&a, &at(f), &Rule::default(), &History::new());
            assert!(!d.notes.iter().any(|n| n.contains("whole configuration")), "{:?}", d.notes);
        }
    }

    /// A run whose uncached phases dropped every cache against one that dropped only the files'
    /// pages: the diff says so for that test (its figures changed for that reason), and says
    /// nothing when both were made alike.
    #[test]
    fn a_changed_eviction_is_noted() {
        let with = |id: &str, method: &str| {
            let mut t = test(id, &[100.0, 101.0, 99.0]);
            for r in &mut t.reps {
                r.phases[0].cache.method = method.into();
            }
            t
        };
        let old = "fsync+fadvise(DONTNEED)+drop_caches";
        let new = crate::engine::FILES_ONLY;
        let a = run(1, vec![with("5", old), with("6", new)]);
        let b = run(2, vec![with("5", new), with("6", new)]);
        let d = diff_runs(&a, &b, &Rule::default(), &History::new());
        let noted: Vec<_> = d.notes.iter().filter(|n| n.contains("uncached differently")).collect();
        assert_eq!(noted.len(), 1, "{:?}", d.notes);
        assert!(noted[0].starts_with("test 5 (ext4)") && noted[0].contains("run 1: drop_caches"));
    }
}
