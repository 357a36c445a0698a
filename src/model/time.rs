//! Where a `run` or a `compare` spent its time: inside timed phases, and outside them by kind
//! (the files' lay-out, cache preconditions, syncs, removing files, `--min-time` passes, the
//! testbeds' mkfs/mount/teardown, the driver's decisions). A benchmark that takes ten minutes
//! to spend four of them measuring should say where the other six went, so that the untimed
//! part can be cut where it is not needed.
//!
//! The engine measures each untimed step of a repetition where it happens ([`Untimed`], on
//! every [`crate::model::result::RepResult`]); the driver adds its own (work directories,
//! testbeds made afresh, decisions: [`DriverTime`]); the command line adds the testbeds'
//! set-up and teardown, and [`TimeSplit::of`] puts them together.

use crate::model::result::{RepResult, RunReport};
use serde::{Deserialize, Serialize};

/// One repetition's untimed work, by kind, in nanoseconds (measured around each step, never
/// inside a timed phase).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Untimed {
    /// The test's set-up: its files laid out (prefilled), its roles' files, and any phase the
    /// test does not time.
    #[serde(default)]
    pub layout_nanos: u64,
    /// Cache preconditions: reading files into the cache, evicting them, and checking
    /// residency (`mincore`).
    #[serde(default)]
    pub cache_nanos: u64,
    /// Syncs outside timed phases: a file set's dirty files synced before an eviction, and a
    /// data test's extent map after its last phase (FIEMAP syncs the files first).
    #[serde(default)]
    pub sync_nanos: u64,
    /// Removing the test's files (and its roles').
    #[serde(default)]
    pub cleanup_nanos: u64,
    /// Between `--min-time` passes: removing what a pass created (the passes' cache
    /// preconditions count as `cache_nanos`, a file set's set-up as `layout_nanos`).
    #[serde(default)]
    pub min_time_nanos: u64,
    /// `--curve`'s steps: the phase run again at fixed rates after its timed pass (their
    /// cache preconditions count as `cache_nanos`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub curve_nanos: u64,
    /// The rest of the repetition outside its timed phases: observation brackets, starting
    /// and joining workers, `--verify`, results.
    #[serde(default)]
    pub other_nanos: u64,
    /// Whether the repetition reused files laid out by an earlier one (its lay-out was
    /// skipped; the cache precondition was established and verified as always).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reused_layout: bool,
}

impl Untimed {
    /// The sum of every kind.
    pub fn total_nanos(&self) -> u64 {
        self.layout_nanos
            + self.cache_nanos
            + self.sync_nanos
            + self.cleanup_nanos
            + self.min_time_nanos
            + self.curve_nanos
            + self.other_nanos
    }

    /// Add `more` (a further `--min-time` run of the whole test).
    pub fn add(&mut self, more: &Untimed) {
        self.layout_nanos += more.layout_nanos;
        self.cache_nanos += more.cache_nanos;
        self.sync_nanos += more.sync_nanos;
        self.cleanup_nanos += more.cleanup_nanos;
        self.min_time_nanos += more.min_time_nanos;
        self.curve_nanos += more.curve_nanos;
        self.other_nanos += more.other_nanos;
        self.reused_layout |= more.reused_layout;
    }
}

/// What the driver measured around the engine, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverTime {
    /// From the first unit to the last.
    pub total_nanos: u64,
    /// Testbeds made afresh between tests (`--fresh per-test`: teardown, mkfs, mount).
    pub testbed_nanos: u64,
    /// Work directories made and removed.
    pub workdir_nanos: u64,
    /// `--repeat auto`'s forecasts and verdicts (which test runs next, which is done).
    pub decision_nanos: u64,
}

/// One test's time over every configuration and repetition, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestTime {
    /// Test id.
    pub id: String,
    /// Test name.
    pub name: String,
    /// Repetitions run (over every configuration).
    pub reps: u32,
    /// Inside its timed phases.
    pub timed_s: f64,
    /// Outside them (lay-out, cache, syncs, removal, the rest).
    pub untimed_s: f64,
    /// Of `untimed_s`: the lay-out.
    pub layout_s: f64,
    /// Of `untimed_s`: cache preconditions.
    pub cache_s: f64,
}

impl TestTime {
    /// Timed and untimed together.
    pub fn total_s(&self) -> f64 {
        self.timed_s + self.untimed_s
    }
}

/// Where a whole `run` or `compare` spent its time, in seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeSplit {
    /// From the testbeds' set-up to their teardown (what the parts below add up to).
    pub total_s: f64,
    /// Inside timed phases (every pass of `--min-time`).
    pub timed_s: f64,
    /// The test files' lay-out (prefill), roles' files, untimed phases.
    pub layout_s: f64,
    /// Cache preconditions (reads, evictions, residency checks).
    pub cache_s: f64,
    /// Syncs outside timed phases (before an eviction; FIEMAP's after the last phase).
    pub sync_s: f64,
    /// Removing test files and work directories.
    pub cleanup_s: f64,
    /// Between `--min-time` passes.
    pub min_time_s: f64,
    /// `--curve`'s steps.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub curve_s: f64,
    /// Testbeds: mkfs, mount, teardown (and made afresh between tests).
    pub testbed_s: f64,
    /// `--repeat auto`'s forecasts and verdicts.
    pub decision_s: f64,
    /// The rest: observation, workers started and joined, results, storing them.
    pub other_s: f64,
    /// Repetitions that reused files laid out earlier.
    #[serde(default)]
    pub reused_layouts: u32,
    /// Every test, most time first.
    pub tests: Vec<TestTime>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

/// Nanoseconds to seconds.
fn s(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

impl TimeSplit {
    /// The split of the configurations' `runs` (their repetitions' timed and untimed time),
    /// the driver's `driver` time, and the testbeds' set-up and teardown (`testbed_nanos`);
    /// `total_nanos`: the wall time from the testbeds' set-up to their teardown. What is not
    /// accounted for is `other_s`.
    pub fn of(
        runs: &[&RunReport],
        driver: &DriverTime,
        testbed_nanos: u64,
        total_nanos: u64,
    ) -> TimeSplit {
        let mut t = TimeSplit {
            total_s: s(total_nanos.max(driver.total_nanos + testbed_nanos)),
            testbed_s: s(testbed_nanos + driver.testbed_nanos),
            decision_s: s(driver.decision_nanos),
            cleanup_s: s(driver.workdir_nanos),
            ..Default::default()
        };
        let ntests = runs.iter().map(|r| r.tests.len()).max().unwrap_or(0);
        for ti in 0..ntests {
            let mut tt: Option<TestTime> = None;
            for test in runs.iter().filter_map(|r| r.tests.get(ti)) {
                let tt = tt.get_or_insert_with(|| TestTime {
                    id: test.id.clone(),
                    name: test.name.clone(),
                    reps: 0,
                    timed_s: 0.0,
                    untimed_s: 0.0,
                    layout_s: 0.0,
                    cache_s: 0.0,
                });
                for r in &test.reps {
                    let u = r.untimed.unwrap_or_default();
                    let timed = s(timed_nanos(r));
                    tt.reps += 1;
                    tt.timed_s += timed;
                    tt.untimed_s += s(u.total_nanos());
                    tt.layout_s += s(u.layout_nanos);
                    tt.cache_s += s(u.cache_nanos);
                    t.timed_s += timed;
                    t.layout_s += s(u.layout_nanos);
                    t.cache_s += s(u.cache_nanos);
                    t.sync_s += s(u.sync_nanos);
                    t.cleanup_s += s(u.cleanup_nanos);
                    t.min_time_s += s(u.min_time_nanos);
                    t.curve_s += s(u.curve_nanos);
                    t.other_s += s(u.other_nanos);
                    t.reused_layouts += u.reused_layout as u32;
                }
            }
            t.tests.extend(tt);
        }
        // What no step accounts for (storing results, the driver between units).
        let known = t.timed_s
            + t.layout_s
            + t.cache_s
            + t.sync_s
            + t.cleanup_s
            + t.min_time_s
            + t.curve_s
            + t.testbed_s
            + t.decision_s
            + t.other_s;
        t.other_s += (t.total_s - known).max(0.0);
        // Without a measured total (a stored run's repetitions alone): the parts are the whole.
        t.total_s = t.total_s.max(known);
        t.tests.sort_by(|a, b| b.total_s().total_cmp(&a.total_s()));
        t
    }

    /// Everything outside timed phases.
    pub fn untimed_s(&self) -> f64 {
        (self.total_s - self.timed_s).max(0.0)
    }

    /// The split of what the repetitions of `runs` recorded alone (no testbeds, no driver);
    /// None when none recorded it (runs stored before fsbench measured it).
    pub fn of_reps(runs: &[&RunReport]) -> Option<TimeSplit> {
        let any =
            runs.iter().flat_map(|r| &r.tests).flat_map(|t| &t.reps).any(|r| r.untimed.is_some());
        any.then(|| TimeSplit::of(runs, &DriverTime::default(), 0, 0))
    }
}

/// The time a repetition spent inside its timed phases (every pass).
pub fn timed_nanos(r: &RepResult) -> u64 {
    r.phases.iter().filter(|p| p.timed).map(|p| p.wall_nanos).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::{PhaseResult, TestResult, TestStatus};

    fn rep(timed_ms: u64, u: Untimed) -> RepResult {
        let phase =
            PhaseResult { timed: true, wall_nanos: timed_ms * 1_000_000, ..Default::default() };
        RepResult { complete: true, phases: vec![phase], untimed: Some(u), ..Default::default() }
    }

    fn run(tests: Vec<(&str, Vec<RepResult>)>) -> RunReport {
        let tests = tests
            .into_iter()
            .map(|(id, reps)| TestResult {
                id: id.into(),
                name: format!("t{id}"),
                description: String::new(),
                threads: 1,
                status: TestStatus::Ok,
                reps,
                complete_reps: 1,
                figure: Default::default(),
                summary: None,
                warnings: Vec::new(),
            })
            .collect();
        RunReport {
            fsbench_version: String::new(),
            started_unix_s: 0,
            host: Default::default(),
            target: Default::default(),
            suite: String::new(),
            scale: String::new(),
            repeat: 1,
            tests,
            interrupted: false,
            cluster: None,
            time: None,
        }
    }

    #[test]
    fn the_split_adds_every_kind_over_configurations_and_the_rest_is_other() {
        let ms = 1_000_000;
        let lay = Untimed { layout_nanos: 300 * ms, cache_nanos: 100 * ms, ..Default::default() };
        let reused = Untimed { cache_nanos: 50 * ms, reused_layout: true, ..Default::default() };
        let a =
            run(vec![("1", vec![rep(1000, lay), rep(1000, reused)]), ("2", vec![rep(10, lay)])]);
        let b = run(vec![("1", vec![rep(2000, lay)]), ("2", vec![rep(10, Untimed::default())])]);
        let driver = DriverTime {
            total_nanos: 6000 * ms,
            testbed_nanos: 0,
            workdir_nanos: 20 * ms,
            decision_nanos: 30 * ms,
        };
        let t = TimeSplit::of(&[&a, &b], &driver, 500 * ms, 7000 * ms);
        assert!((t.timed_s - 4.02).abs() < 1e-9, "{}", t.timed_s);
        assert!((t.layout_s - 0.9).abs() < 1e-9);
        assert!((t.cache_s - 0.35).abs() < 1e-9);
        assert!((t.testbed_s - 0.5).abs() < 1e-9);
        assert!((t.decision_s - 0.03).abs() < 1e-9);
        assert!((t.cleanup_s - 0.02).abs() < 1e-9);
        assert_eq!(t.reused_layouts, 1);
        // 7 s in all: what no step accounts for is `other`, and the parts add up to the whole.
        let parts = t.timed_s
            + t.layout_s
            + t.cache_s
            + t.sync_s
            + t.cleanup_s
            + t.min_time_s
            + t.testbed_s
            + t.decision_s
            + t.other_s;
        assert!((parts - 7.0).abs() < 1e-9, "{parts}");
        assert!((t.untimed_s() - (7.0 - 4.02)).abs() < 1e-9);
        // Per test over both configurations, most time first.
        assert_eq!(t.tests.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(t.tests[0].reps, 3);
        assert!((t.tests[0].timed_s - 4.0).abs() < 1e-9);
        assert!((t.tests[0].layout_s - 0.6).abs() < 1e-9);
        assert!((t.tests[1].untimed_s - 0.4).abs() < 1e-9);
    }

    #[test]
    fn a_stored_repetition_without_the_split_still_reads() {
        // Runs stored before the split: no `untimed` on the repetition; it counts as timed only.
        let r: RepResult = serde_json::from_str(
            r#"{"complete":true,"wall_nanos":5,"bytes":0,"data_ops":0,"mib_per_s":0,"ops_per_s":0,
                "cpu_user_nanos":0,"cpu_sys_nanos":0,"cpu_pct_per_thread":0,"latency":[],
                "phases":[],"extents":null}"#,
        )
        .unwrap();
        assert_eq!(r.untimed, None);
        let t = TimeSplit::of(&[&run(vec![("1", vec![r])])], &DriverTime::default(), 0, 0);
        assert_eq!(t.tests[0].untimed_s, 0.0);
        let u: Untimed = serde_json::from_str(r#"{"layout_nanos":7}"#).unwrap();
        assert_eq!(u.layout_nanos, 7);
    }
}
