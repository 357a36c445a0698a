//! The suite driver: every target × test × repetition of a `run` or a `compare`, in one order,
//! with progress, hooks and signals handled in one place (the shape of hyperfine's scheduler).
//!
//! - [`Order`]: `InTurn` (each target runs the suite, each test with all its repetitions:
//!   `run`), or `Interleaved` (repetition by repetition, test by test, every target once before
//!   any runs again, in an order that rotates with the test and repetition: `compare`).
//!   Repetition k uses the same random seed on every target, so each does the same operations.
//! - [`Hooks`]: called before and after every phase the engine runs, the one mechanism for
//!   acting at the edges of a timed phase: a multi-client run ([`crate::cluster`]) puts its
//!   barrier, its global clock stamps and its agreement on the outcome there. The driver hands
//!   them to the engine with every unit of work.
//! - [`Targets::workspace`]: the work directory of a unit (by default one this process makes
//!   and removes; a multi-client run shares one between ranks).
//! - `on_test`: called with a test's results so far after each unit of work (where the store
//!   commits, so a crash loses at most the unit in flight).
//! - Ctrl-C/SIGTERM: checked before every unit; what was not reached is marked skipped.
//! - [`AutoRepeat`] (`--repeat auto`, hyperfine's and Criterion's approach): at least `min`
//!   repetitions, then more (in the same order: interleaved rounds for `compare`) for each test
//!   whose figure is not yet known to within the target, until `max` or the time budget; why
//!   each test stopped is recorded on it ([`crate::model::result::Warning::Repetitions`]).
//!
//! - Time: what the driver does around the engine (work directories, testbeds made afresh,
//!   `--repeat auto`'s decisions) is measured and handed on ([`DriverTime`]) for the split of
//!   where a run's time went ([`crate::model::time`]).
//! - Lay-outs: a target keeps its work directory from one unit to the next (unless it is made
//!   afresh per test), so a test that only reads its files lays them out once on each target
//!   ([`crate::engine::keep`]).
//!
//! [`targets`] has the lifecycle of the targets themselves (directories and testbeds).

use crate::decision::{self, auto_verdict, AutoRepeat, Next, Standing, Stop};
pub mod targets;

use crate::engine::{self, EngineOptions, LayoutKeep, Progress, Target, Workspace};
use crate::model::job::Suite;
use crate::model::result::{RunReport, TestResult, TestStatus};
use crate::model::testbed::TestbedEnv;
pub use crate::model::time::DriverTime;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use crate::engine::hooks::{Hooks, NoHooks, PhaseOutcome, PhasePoint};
pub use targets::{Spec, TargetError, TargetSet};

/// The directory a unit of work puts its files in.
pub enum WorkDir {
    /// Made by this process, removed when dropped.
    Own(Workspace),
    /// Owned by someone else (a work directory several processes share, removed by its maker).
    Shared(PathBuf),
}

impl WorkDir {
    /// Its path.
    pub fn path(&self) -> &Path {
        match self {
            WorkDir::Own(w) => w.path(),
            WorkDir::Shared(p) => p,
        }
    }
}

/// The targets a suite runs on, as the driver needs them.
pub trait Targets {
    /// Number of targets.
    fn count(&self) -> usize;
    /// Target `i`.
    fn target(&self, i: usize) -> Target<'_>;
    /// Environment record of target `i` (None for a user's directory).
    fn env(&self, i: usize) -> Option<TestbedEnv>;
    /// Make target `i` afresh before a test (a new filesystem); a no-op for directories.
    fn refresh(&mut self, i: usize) -> anyhow::Result<()>;
    /// A work directory on target `i` for the next unit: by default a fresh one this process
    /// makes in the target's directory.
    fn workspace(&mut self, i: usize) -> anyhow::Result<WorkDir> {
        Ok(WorkDir::Own(Workspace::create(&self.target(i).dir)?))
    }
}

/// In which order targets × tests × repetitions run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Target after target; each test with all its repetitions (`run`).
    InTurn,
    /// Round after round (one repetition each); in a round test after test; for each test every
    /// target once, starting at `(round + test) mod targets` (`compare`).
    Interleaved,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan<'a> {
    /// The suite (it carries its scale).
    pub suite: &'a Suite,
    /// Engine options; `repeat` repetitions of every test on every target.
    pub engine: EngineOptions,
    /// The order.
    pub order: Order,
    /// Make each target afresh before every test.
    pub fresh_per_test: bool,
    /// `--repeat auto`: add repetitions until each test's figure is known well enough (then
    /// `engine.repeat` is ignored).
    pub auto: Option<AutoRepeat>,
}

/// One unit of work: repetitions `reps` of test `test` on target `target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Target index.
    pub target: usize,
    /// Test index in the suite.
    pub test: usize,
    /// Repetitions.
    pub reps: std::ops::Range<u32>,
}

/// The units of `order`, in the order they run.
pub fn schedule(order: Order, targets: usize, tests: usize, repeat: u32) -> Vec<Unit> {
    let repeat = repeat.max(1);
    let mut units = Vec::new();
    match order {
        Order::InTurn => {
            for target in 0..targets {
                for test in 0..tests {
                    units.push(Unit { target, test, reps: 0..repeat });
                }
            }
        }
        Order::Interleaved => {
            for rep in 0..repeat {
                for test in 0..tests {
                    for k in 0..targets {
                        let target = (k + rep as usize + test) % targets;
                        units.push(Unit { target, test, reps: rep..rep + 1 });
                    }
                }
            }
        }
    }
    units
}

/// What the driver produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per target, its results as `fsbench run` reports them (tests in suite order).
    pub runs: Vec<RunReport>,
    /// Stopped by Ctrl-C/SIGTERM.
    pub interrupted: bool,
    /// What the driver spent around the engine (work directories, testbeds made afresh,
    /// decisions), and how long it ran.
    pub time: DriverTime,
}

impl Outcome {
    /// Whether any test failed on any target.
    pub fn failed(&self) -> bool {
        self.runs
            .iter()
            .any(|r| r.tests.iter().any(|t| matches!(t.status, TestStatus::Failed { .. })))
    }

    /// How the run ended, as the store records it (and the exit code says).
    pub fn status(&self) -> crate::model::run::RunStatus {
        use crate::model::run::RunStatus;
        if self.interrupted {
            RunStatus::Interrupted
        } else if self.failed() {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        }
    }
}

fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The driver's state while it runs units.
struct State<'p, 'a> {
    plan: &'p Plan<'a>,
    targets: &'p mut dyn Targets,
    progress: &'p dyn Progress,
    hooks: &'p dyn Hooks,
    on_test: &'p mut dyn FnMut(usize, usize, &TestResult),
    /// Per target and test, the results so far.
    acc: Vec<Vec<Option<TestResult>>>,
    /// Per target, its work directory and the tests whose files it keeps laid out. In turn,
    /// only the current target has one; interleaved, each target keeps its own from unit to
    /// unit (unless made afresh per test: then each unit makes its own).
    ws: Vec<Option<(WorkDir, LayoutKeep)>>,
    last_target: Option<usize>,
    /// Per target, its devices as found when the run started.
    devices: Vec<Vec<String>>,
    /// Free bytes a target keeps beside kept files: the suite's largest test, and a margin.
    room: u64,
    /// What the driver spent around the engine.
    time: DriverTime,
    /// Per test, the passes `--min-time` chose for each phase in the test's first repetition
    /// (on the first target that ran it): every later unit of the test, on every target, runs
    /// the same ([`EngineOptions::passes`]).
    passes: Vec<Option<Vec<u32>>>,
}

impl State<'_, '_> {
    /// Run one unit; `Ok(true)`: interrupted, stop.
    fn step(&mut self, unit: &Unit) -> anyhow::Result<bool> {
        if crate::sys::signals::interrupted() {
            return Ok(true);
        }
        let plan = self.plan;
        let (i, ti) = (unit.target, unit.test);
        if plan.fresh_per_test {
            let t0 = Instant::now();
            self.drop_workdirs(|_| true);
            self.targets.refresh(i)?;
            self.time.testbed_nanos += t0.elapsed().as_nanos() as u64;
        }
        if plan.order == Order::Interleaved || self.last_target != Some(i) {
            self.progress.target_start(&self.targets.target(i).label);
            self.last_target = Some(i);
        }
        if plan.order == Order::InTurn {
            self.drop_workdirs(|w| w != i); // the old one goes before the new one is made
        }
        if self.ws[i].is_none() {
            let t0 = Instant::now();
            let keep = if plan.engine.reuse_layout {
                LayoutKeep::new(self.room)
            } else {
                LayoutKeep::none()
            };
            self.ws[i] = Some((self.targets.workspace(i)?, keep));
            self.time.workdir_nanos += t0.elapsed().as_nanos() as u64;
        }
        let mut target = self.targets.target(i);
        let Some((dir, keep)) = &mut self.ws[i] else { unreachable!("made above") };
        let dir: &WorkDir = dir;
        // The work directory's descriptors are let go around an eviction that unmounts.
        if let WorkDir::Own(w) = dir {
            target.anchor = Some(&**w);
        }
        let devices = self.devices[i].clone();
        let test = &plan.suite.tests[ti];
        let opts = EngineOptions { passes: self.passes[ti].clone(), ..plan.engine.clone() };
        let r = engine::runner::run_test_keeping(
            test,
            &target,
            &devices,
            dir.path(),
            &opts,
            ti as u64,
            unit.reps.clone(),
            self.progress,
            self.hooks,
            keep,
        );
        if plan.fresh_per_test {
            // The target may be made afresh before its next unit: its work directory goes now.
            self.drop_workdirs(|_| true);
        }
        if self.passes[ti].is_none() && engine::min_time::applies(test, &opts) {
            self.passes[ti] = r.reps.iter().find_map(engine::min_time::chosen);
        }
        let stop = r.status == TestStatus::Interrupted;
        match &mut self.acc[i][ti] {
            Some(a) => a.merge(r),
            slot @ None => *slot = Some(r),
        }
        if let Some(a) = &self.acc[i][ti] {
            (self.on_test)(i, ti, a);
        }
        Ok(stop)
    }

    /// Remove the work directories (and the files kept in them) of the targets `which` picks.
    fn drop_workdirs(&mut self, which: impl Fn(usize) -> bool) {
        for (w, slot) in self.ws.iter_mut().enumerate() {
            if which(w) && slot.is_some() {
                let t0 = Instant::now();
                drop(slot.take());
                self.time.workdir_nanos += t0.elapsed().as_nanos() as u64;
            }
        }
    }

    /// `--repeat auto` in the plan's order; `Ok(true)`: interrupted.
    fn auto(&mut self, a: &AutoRepeat) -> anyhow::Result<bool> {
        let started = std::time::Instant::now();
        let spent = || a.budget.is_some_and(|b| started.elapsed() >= b);
        let (n, tests) = (self.targets.count(), self.plan.suite.tests.len());
        let max = a.max.max(a.min).max(1);
        match self.plan.order {
            Order::Interleaved => {
                // The minimum rounds as `schedule` makes them, each with the tests still open; a
                // test's stop applies on every target (they are compared on the same
                // repetitions).
                let mut open = vec![true; tests];
                let mut rounds = vec![0u32; tests];
                let mut seconds = vec![0.0f64; tests];
                let all: Vec<usize> = (0..n).collect();
                for rep in 0..a.min.clamp(1, max) {
                    for test in (0..tests).filter(|t| open[*t]) {
                        if self.round(test, rep, &mut seconds[test])? {
                            return Ok(true);
                        }
                        rounds[test] += 1;
                    }
                    let now: Vec<usize> = (0..tests).filter(|t| open[*t]).collect();
                    for test in now {
                        if self.close(a, &all, test, rep + 1, spent()) {
                            open[test] = false;
                        }
                    }
                }
                // Then one round at a time, where it buys a decision, if enough of the budget
                // is left for that.
                let budget = decision::budget_after_minimum(
                    a.budget.map(|b| b.as_secs_f64()),
                    started.elapsed().as_secs_f64(),
                );
                while let Some(settle) = a.settle {
                    let t0 = Instant::now();
                    let standing: Vec<(usize, Standing)> = (0..tests)
                        .filter(|t| open[*t])
                        .map(|t| (t, self.standing(&all, t, rounds[t], seconds[t], &settle)))
                        .collect();
                    let elapsed = started.elapsed().as_secs_f64();
                    let next = decision::next(&standing, elapsed, budget);
                    self.time.decision_nanos += t0.elapsed().as_nanos() as u64;
                    match next {
                        Next::Done => break,
                        Next::GiveUp(test, why, needed) => {
                            self.finish(a, &all, test, why, needed);
                            open[test] = false;
                        }
                        Next::Run(test) => {
                            if self.round(test, rounds[test], &mut seconds[test])? {
                                return Ok(true);
                            }
                            rounds[test] += 1;
                            if self.close(a, &all, test, rounds[test], spent()) {
                                open[test] = false;
                            }
                        }
                    }
                }
                // Without a decision to settle: rounds of every open test, to the maximum.
                for rep in a.min.clamp(1, max)..max {
                    if !open.contains(&true) {
                        break;
                    }
                    for test in (0..tests).filter(|t| open[*t]) {
                        if self.round(test, rep, &mut seconds[test])? {
                            return Ok(true);
                        }
                    }
                    let now: Vec<usize> = (0..tests).filter(|t| open[*t]).collect();
                    for test in now {
                        if self.close(a, &all, test, rep + 1, spent()) {
                            open[test] = false;
                        }
                    }
                }
            }
            Order::InTurn => {
                for target in 0..n {
                    for test in 0..tests {
                        for rep in 0..max {
                            let unit = Unit { target, test, reps: rep..rep + 1 };
                            if self.step(&unit)? {
                                return Ok(true);
                            }
                            if self.close(a, &[target], test, rep + 1, spent()) {
                                break;
                            }
                        }
                    }
                }
            }
        }
        Ok(false)
    }

    /// Round `rep` of `test`: one repetition on every target, in an order that rotates with the
    /// test and the round. Adds the seconds it took (set-up and cache work included) to
    /// `seconds`. `Ok(true)`: interrupted.
    fn round(&mut self, test: usize, rep: u32, seconds: &mut f64) -> anyhow::Result<bool> {
        let n = self.targets.count();
        let t0 = std::time::Instant::now();
        for k in 0..n {
            let target = (k + rep as usize + test) % n;
            if self.step(&Unit { target, test, reps: rep..rep + 1 })? {
                return Ok(true);
            }
        }
        *seconds += t0.elapsed().as_secs_f64();
        Ok(false)
    }

    /// Where open `test` stands on targets `on` after `rounds` rounds that took `seconds`.
    fn standing(
        &self,
        on: &[usize],
        test: usize,
        rounds: u32,
        seconds: f64,
        settle: &decision::Settle,
    ) -> Standing {
        let results: Vec<&TestResult> =
            on.iter().filter_map(|i| self.acc[*i][test].as_ref()).collect();
        let (to_settle, to_settle_at_best) = if results.len() < on.len() {
            (f64::INFINITY, f64::INFINITY)
        } else {
            (
                decision::rounds_to_settle(&results, settle, false),
                decision::rounds_to_settle(&results, settle, true),
            )
        };
        Standing { rounds, seconds, to_settle, to_settle_at_best }
    }

    /// Decide whether `test` on targets `on` is done after `done` repetitions; when it is,
    /// record why on each of them. Returns whether it is done.
    fn close(&mut self, a: &AutoRepeat, on: &[usize], test: usize, done: u32, spent: bool) -> bool {
        let t0 = Instant::now();
        let results: Vec<&TestResult> =
            on.iter().filter_map(|i| self.acc[*i][test].as_ref()).collect();
        if results.len() < on.len() {
            return false;
        }
        let verdict = auto_verdict(a, &results, done, spent).0;
        self.time.decision_nanos += t0.elapsed().as_nanos() as u64;
        let Some(stop) = verdict else { return false };
        self.finish(a, on, test, stop, None);
        true
    }

    /// Record on `test` of each target in `on` why its repetitions stopped (with the budget it
    /// would have needed, for a test given up), and hand the result on.
    fn finish(
        &mut self,
        a: &AutoRepeat,
        on: &[usize],
        test: usize,
        stop: Stop,
        needed: Option<f64>,
    ) {
        let t0 = Instant::now();
        let results: Vec<&TestResult> =
            on.iter().filter_map(|i| self.acc[*i][test].as_ref()).collect();
        let widest = auto_verdict(a, &results, 0, false).1;
        let cv = results
            .iter()
            .filter_map(|t| t.summary.as_ref().map(|s| s.merit().cv))
            .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))));
        self.time.decision_nanos += t0.elapsed().as_nanos() as u64;
        let noisy = matches!(stop, Stop::Noisy | Stop::Budget);
        for i in on {
            if let Some(t) = self.acc[*i][test].as_mut() {
                t.warn(crate::model::result::Warning::Repetitions {
                    count: t.reps.iter().filter(|r| r.complete).count() as u32,
                    stopped_by: stop.as_str().into(),
                    ci: widest,
                    target_ci: a.target_ci,
                    needed_budget_s: needed.filter(|_| noisy),
                    cv: cv.filter(|_| noisy),
                });
                (self.on_test)(*i, test, t);
            }
        }
    }
}

/// Run `plan` on `targets`.
///
/// `on_test(target, test, result)` gets the test's results so far after every unit (to store
/// them as they come).
pub fn drive(
    plan: &Plan<'_>,
    targets: &mut dyn Targets,
    progress: &dyn Progress,
    hooks: &dyn Hooks,
    on_test: &'_ mut dyn FnMut(usize, usize, &TestResult),
) -> anyhow::Result<Outcome> {
    let suite = plan.suite;
    let n = targets.count();
    let started = now_unix_s();
    let mut runs: Vec<RunReport> = (0..n)
        .map(|i| {
            let t = targets.target(i);
            RunReport {
                fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
                started_unix_s: started,
                host: crate::model::host::HostInfo::current(),
                target: engine::runner::target_info(&t),
                suite: suite.name.clone(),
                scale: suite.scale.to_string(),
                repeat: plan.engine.repeat,
                tests: Vec::new(),
                interrupted: false,
                cluster: None,
                time: None,
            }
        })
        .collect();
    let acc: Vec<Vec<Option<TestResult>>> = vec![vec![None; suite.tests.len()]; n];
    let devices = runs.iter().map(|r| r.target.devices.clone()).collect();
    let t0 = Instant::now();
    // A kept file leaves room for the largest test beside it, and a margin of an eighth.
    let largest = suite.tests.iter().map(|t| t.footprint_bytes()).max().unwrap_or(0);
    let mut st = State {
        plan,
        targets,
        progress,
        hooks,
        on_test,
        acc,
        ws: (0..n).map(|_| None).collect(),
        last_target: None,
        devices,
        room: largest + largest / 8 + (64 << 20),
        time: DriverTime::default(),
        passes: vec![None; suite.tests.len()],
    };
    let mut interrupted = false;
    match plan.auto {
        None => {
            for unit in schedule(plan.order, n, suite.tests.len(), plan.engine.repeat) {
                if st.step(&unit)? {
                    interrupted = true;
                    break;
                }
            }
        }
        Some(a) => interrupted = st.auto(&a)?,
    }
    st.drop_workdirs(|_| true);
    let State { mut acc, mut time, .. } = st;
    time.total_nanos = t0.elapsed().as_nanos() as u64;
    for (i, run) in runs.iter_mut().enumerate() {
        run.interrupted = interrupted;
        if plan.auto.is_some() {
            // The most repetitions any test got (each test says how many it has).
            let most = acc[i].iter().flatten().map(|t| t.reps.len() as u32).max();
            run.repeat = most.unwrap_or(0).max(1);
        }
        for (ti, test) in suite.tests.iter().enumerate() {
            run.tests.push(
                acc[i][ti].take().unwrap_or_else(|| {
                    TestResult::skipped(test, "run interrupted before this test")
                }),
            );
        }
    }
    Ok(Outcome { runs, interrupted, time })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::runner::UNCACHED_MAX;
    use crate::model::scale::Scale;
    use crate::model::time::Untimed;
    use crate::workload::{ResolveCtx, SuiteSource};

    /// Records every hook call; fails phase `w` of test `fail` after it ran (as a multi-client
    /// run does when another rank failed).
    #[derive(Default)]
    struct Log {
        calls: std::sync::Mutex<Vec<String>>,
        fail: Option<&'static str>,
    }
    impl Hooks for Log {
        fn before_phase(&self, at: &PhasePoint<'_>) -> Result<(), crate::engine::EngineError> {
            let line = format!("before {} {} {} {}", at.target, at.test.id, at.rep, at.phase);
            self.calls.lock().unwrap().push(line);
            Ok(())
        }
        fn after_phase(
            &self,
            at: &PhasePoint<'_>,
            window: Option<(std::time::Instant, std::time::Instant)>,
            local: PhaseOutcome,
        ) -> PhaseOutcome {
            let w = window.map(|(a, b)| b >= a);
            let line = format!("after {} {} {} {} {w:?}", at.target, at.test.id, at.rep, at.phase);
            self.calls.lock().unwrap().push(line);
            match self.fail {
                Some(t) if t == at.test.id && at.phase == "w" => {
                    PhaseOutcome::Failed(crate::engine::EngineError::hook("rank 3 (host h): EIO"))
                }
                _ => local,
            }
        }
    }

    struct Dirs(Vec<tempfile::TempDir>);
    impl Targets for Dirs {
        fn count(&self) -> usize {
            self.0.len()
        }
        fn target(&self, i: usize) -> Target<'_> {
            let mut t = Target::dir(self.0[i].path());
            t.label = format!("d{i}");
            t
        }
        fn env(&self, _: usize) -> Option<TestbedEnv> {
            None
        }
        fn refresh(&mut self, _: usize) -> anyhow::Result<()> {
            Ok(())
        }
    }

    fn suite() -> Suite {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("two.toml");
        let test = |id: &str| {
            format!("[[test]]\nid = \"{id}\"\nname = \"w{id}\"\nfile = {{ size = \"64K\", prefill = false }}\n[[test.phase]]\nname = \"w\"\nopen = [\"create\", \"trunc\"]\npattern = [{{ op = \"write\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n")
        };
        std::fs::write(&p, format!("{}{}", test("a"), test("b"))).unwrap();
        let ctx = ResolveCtx { scale: Scale::Factor(1.0), free_memory: 1 << 30 };
        crate::workload::load(&SuiteSource::File(p), &ctx).unwrap()
    }

    #[test]
    fn a_test_may_declare_its_figure_of_merit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ops.toml");
        let text = |figure: &str| {
            format!("[[test]]\nid = \"a\"\nname = \"w\"\nfigure = \"{figure}\"\nfile = {{ size = \"64K\", prefill = false }}\n[[test.phase]]\nname = \"w\"\nopen = [\"create\", \"trunc\"]\npattern = [{{ op = \"write\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n")
        };
        let ctx = ResolveCtx { scale: Scale::Factor(1.0), free_memory: 1 << 30 };
        std::fs::write(&p, text("ops_per_s")).unwrap();
        let suite = crate::workload::load(&SuiteSource::File(p.clone()), &ctx).unwrap();
        let mut dirs = Dirs(vec![tempfile::tempdir().unwrap()]);
        let plan = Plan {
            suite: &suite,
            engine: EngineOptions { repeat: 2, ..Default::default() },
            order: Order::InTurn,
            fresh_per_test: false,
            auto: None,
        };
        let out =
            drive(&plan, &mut dirs, &engine::NoProgress, &NoHooks, &mut |_, _, _| {}).unwrap();
        let t = &out.runs[0].tests[0];
        assert_eq!(
            t.figure,
            crate::model::result::Figure::OpsPerS,
            "declared, not the data test's MiB/s"
        );
        assert_eq!(t.median(), Some(t.summary.as_ref().unwrap().ops_per_s.median));
        assert!(t.reps.iter().all(|r| r.figure() == r.ops_per_s), "the decision rule ranks ops/s");
        std::fs::write(&p, text("iops")).unwrap();
        let e = crate::workload::load(&SuiteSource::File(p), &ctx).unwrap_err().to_string();
        assert!(e.contains("unknown figure `iops`; known: mib_per_s, ops_per_s"), "{e}");
    }

    #[test]
    fn hooks_see_every_phase_and_each_unit_is_handed_over() {
        let suite = suite();
        let mut dirs = Dirs(vec![tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()]);
        let plan = Plan {
            suite: &suite,
            engine: EngineOptions { repeat: 2, ..Default::default() },
            order: Order::Interleaved,
            fresh_per_test: false,
            auto: None,
        };
        let log = Log::default();
        let mut handed = Vec::new();
        let out = drive(&plan, &mut dirs, &engine::NoProgress, &log, &mut |i, ti, t| {
            handed.push((i, ti, t.reps.len()))
        })
        .unwrap();
        // compare's order, each unit handed over with the repetitions so far.
        assert_eq!(
            handed,
            vec![
                (0, 0, 1),
                (1, 0, 1),
                (1, 1, 1),
                (0, 1, 1),
                (1, 0, 2),
                (0, 0, 2),
                (0, 1, 2),
                (1, 1, 2)
            ]
        );
        let log = log.calls.into_inner().unwrap();
        // Per unit: around the set-up (no window: untimed), then around the phase.
        assert_eq!(log.len(), 32, "one before and one after per phase: {log:?}");
        assert_eq!(log[0], "before d0 a 0 setup");
        assert_eq!(log[1], "after d0 a 0 setup None");
        assert_eq!(log[2], "before d0 a 0 w");
        assert_eq!(log[3], "after d0 a 0 w Some(true)", "with the phase's window");
        assert_eq!(log[4], "before d1 a 0 setup");
        assert!(!out.interrupted && !out.failed());
        for run in &out.runs {
            assert_eq!(run.scale, "1", "the suite carries its scale");
            assert!(run
                .tests
                .iter()
                .all(|t| t.complete_reps == 2 && t.summary.as_ref().unwrap().n == 2));
        }
        // In turn: one target after the other, every repetition of a test at once.
        let plan = Plan { order: Order::InTurn, ..plan };
        let mut handed = Vec::new();
        drive(&plan, &mut dirs, &engine::NoProgress, &NoHooks, &mut |i, ti, t| {
            handed.push((i, ti, t.reps.len()))
        })
        .unwrap();
        assert_eq!(handed, vec![(0, 0, 2), (0, 1, 2), (1, 0, 2), (1, 1, 2)]);
        for d in &dirs.0 {
            assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "work directories removed");
        }
    }

    /// Runs `text` (a suite file) on one directory with `min_time`, 2 repetitions.
    fn run_with_min_time(text: &str, min_time: std::time::Duration) -> RunReport {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.toml");
        std::fs::write(&p, text).unwrap();
        let ctx = ResolveCtx { scale: Scale::Factor(1.0), free_memory: 1 << 30 };
        let suite = crate::workload::load(&SuiteSource::File(p), &ctx).unwrap();
        let mut dirs = Dirs(vec![tempfile::tempdir().unwrap()]);
        let plan = Plan {
            suite: &suite,
            engine: EngineOptions { repeat: 2, min_time, ..Default::default() },
            order: Order::InTurn,
            fresh_per_test: false,
            auto: None,
        };
        let out =
            drive(&plan, &mut dirs, &engine::NoProgress, &NoHooks, &mut |_, _, _| {}).unwrap();
        assert!(!out.failed(), "{:?}", out.runs[0].tests[0].status);
        assert_eq!(std::fs::read_dir(dirs.0[0].path()).unwrap().count(), 0, "files removed");
        out.runs.into_iter().next().unwrap()
    }

    #[test]
    fn min_time_repeats_a_short_phase_and_keeps_figures_per_byte() {
        // A 1 MiB file created and written, then read twice: each phase lasts well under 100 ms
        // (a few ms), so it is repeated, a few dozen times rather than hundreds (each pass has
        // untimed set-up and accounting: ~30 ms in a debug build, ~3 ms in a release one).
        let text = "[[test]]\nid = \"a\"\nname = \"w\"\nfile = { size = \"1M\", prefill = false }\n[[test.phase]]\nname = \"w\"\nopen = [\"create\", \"trunc\"]\npattern = [{ op = \"write\", size = \"4K\" }]\namount = { passes = 1 }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 2 }\n";
        let min = std::time::Duration::from_millis(100);
        let run = run_with_min_time(text, min);
        for r in &run.tests[0].reps {
            for (p, per_pass) in r.phases.iter().zip([1u64 << 20, 2 << 20]) {
                assert!(
                    p.passes() > 1,
                    "{} ran {} pass(es) in {} ns",
                    p.name,
                    p.passes,
                    p.wall_nanos
                );
                // The first repetition chooses the count by the minimum; the others run the
                // same count (like for like), however long it takes them.
                let first = &run.tests[0].reps[0].phases;
                let chosen = first.iter().find(|q| q.name == p.name).unwrap();
                assert!(
                    chosen.wall_nanos >= min.as_nanos() as u64,
                    "{}: {} ns",
                    p.name,
                    chosen.wall_nanos
                );
                assert_eq!(
                    p.passes(),
                    chosen.passes(),
                    "{}: the same passes in every repetition",
                    p.name
                );
                assert_eq!(p.bytes_read + p.bytes_written, per_pass * p.passes() as u64);
                assert_eq!(p.data_ops, per_pass / 4096 * p.passes() as u64);
                let ops: u64 = p.latency.iter().filter(|l| l.op.is_data()).map(|l| l.count).sum();
                assert_eq!(ops, p.data_ops, "latency counts every pass");
            }
            // The repetition's figure is bytes over the summed time of every pass.
            let bytes: u64 = r.phases.iter().map(|p| p.bytes_read + p.bytes_written).sum();
            let secs = r.phases.iter().map(|p| p.wall_nanos).sum::<u64>() as f64 / 1e9;
            assert_eq!(r.bytes, bytes);
            assert!((r.mib_per_s - bytes as f64 / 1048576.0 / secs).abs() < 1e-6 * r.mib_per_s);
        }
        // --min-time 0: one pass, as before.
        let run = run_with_min_time(text, std::time::Duration::ZERO);
        assert!(run.tests[0].reps.iter().flat_map(|r| &r.phases).all(|p| p.passes() == 1));
    }

    #[test]
    fn min_time_runs_a_file_set_test_again_whole() {
        // Create, stat and remove 40 files: a second create pass on the same set would find
        // no free slot, so the whole test runs again and every phase counts each run.
        let text = "[[test]]\nid = \"f\"\nname = \"files\"\nfileset = { count = 40, flat = true, size = 0 }\n[[test.phase]]\nname = \"create\"\npattern = [{ op = \"create\", pick = \"next\" }]\namount = { passes = 1 }\n[[test.phase]]\nname = \"stat\"\npattern = [{ op = \"stat\", pick = \"next\" }]\namount = { passes = 1 }\n[[test.phase]]\nname = \"delete\"\npattern = [{ op = \"unlink\", pick = \"next\" }]\namount = { passes = 1 }\n";
        let min = std::time::Duration::from_millis(40);
        let run = run_with_min_time(text, min);
        for r in &run.tests[0].reps {
            let n = r.phases[0].passes();
            assert!(n > 1, "ran once in {} ns", r.wall_nanos);
            let first = &run.tests[0].reps[0];
            assert!(first.wall_nanos >= min.as_nanos() as u64, "the first repetition chooses");
            assert_eq!(n, first.phases[0].passes(), "the same runs in every repetition");
            for p in &r.phases {
                assert_eq!(p.passes(), n, "{}: every phase runs as often", p.name);
                assert_eq!(p.file_ops, 40 * n as u64, "{}", p.name);
                assert_eq!(p.skipped_ops, 0, "{}: each run works on a set of its own", p.name);
            }
            assert_eq!(r.phases[0].files_created, 40 * n as u64);
            assert_eq!(r.file_ops, 3 * 40 * n as u64);
            let secs = r.wall_nanos as f64 / 1e9;
            assert!((r.ops_per_s - r.file_ops as f64 / secs).abs() < 1e-6 * r.ops_per_s);
        }
    }

    /// The `--repeat auto` note on a test: (count, stopped_by).
    fn auto_note(t: &TestResult) -> Option<(u32, String)> {
        t.warnings.iter().find_map(|w| match w {
            crate::model::result::Warning::Repetitions { count, stopped_by, .. } => {
                Some((*count, stopped_by.clone()))
            }
            _ => None,
        })
    }

    #[test]
    fn repeat_auto_stops_at_the_target_the_maximum_or_the_budget() {
        let suite = suite();
        let mut dirs = Dirs(vec![tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()]);
        let run = |dirs: &mut Dirs, order, auto: AutoRepeat| {
            let plan = Plan {
                suite: &suite,
                engine: EngineOptions { repeat: 1, ..Default::default() },
                order,
                fresh_per_test: false,
                auto: Some(auto),
            };
            let mut handed = Vec::new();
            let out = drive(&plan, dirs, &engine::NoProgress, &NoHooks, &mut |i, ti, t| {
                handed.push((i, ti, t.reps.len()))
            })
            .unwrap();
            assert!(!out.failed());
            (out, handed)
        };
        // A target no real figure reaches: every test runs to the maximum, in compare's order.
        let never = AutoRepeat { min: 5, max: 7, target_ci: 1e-12, budget: None, settle: None };
        let (out, handed) = run(&mut dirs, Order::Interleaved, never);
        for r in &out.runs {
            assert_eq!(r.repeat, 7, "the header gives the most repetitions");
            for t in &r.tests {
                assert_eq!(t.reps.len(), 7);
                assert_eq!(auto_note(t), Some((7, "max".into())));
            }
        }
        // Round 1 rotates as `schedule` does; the note is handed over too (one call per test
        // and target when it closes).
        assert_eq!(&handed[..4], &[(0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]);
        assert_eq!(handed.len(), 2 * 2 * 7 + 4);
        // A target every figure meets: the minimum, stopped by the CI.
        let always = AutoRepeat { target_ci: 1e9, ..never };
        let (out, _) = run(&mut dirs, Order::Interleaved, always);
        assert!(out
            .runs
            .iter()
            .flat_map(|r| &r.tests)
            .all(|t| t.reps.len() == 5 && auto_note(t) == Some((5, "ci".into()))));
        // A budget spent at once: the minimum, stopped by the budget.
        let spent = AutoRepeat { budget: Some(std::time::Duration::from_nanos(1)), ..never };
        let (out, _) = run(&mut dirs, Order::InTurn, spent);
        assert!(out
            .runs
            .iter()
            .flat_map(|r| &r.tests)
            .all(|t| t.reps.len() == 5 && auto_note(t) == Some((5, "budget".into()))));
    }

    #[test]
    fn a_hook_fails_a_phase_and_the_test_with_its_reason() {
        let suite = suite();
        let mut dirs = Dirs(vec![tempfile::tempdir().unwrap()]);
        let plan = Plan {
            suite: &suite,
            engine: EngineOptions { repeat: 2, ..Default::default() },
            order: Order::InTurn,
            fresh_per_test: false,
            auto: None,
        };
        let log = Log { fail: Some("b"), ..Default::default() };
        let out = drive(&plan, &mut dirs, &engine::NoProgress, &log, &mut |_, _, _| {}).unwrap();
        let (a, b) = (&out.runs[0].tests[0], &out.runs[0].tests[1]);
        assert_eq!(a.status, TestStatus::Ok);
        assert_eq!(b.status, TestStatus::Failed { reason: "rank 3 (host h): EIO".into() });
        assert_eq!((a.complete_reps, b.complete_reps), (2, 0));
        assert!(out.failed());
        // Test b stopped after its first phase: repetition 2 never started.
        let calls = log.calls.into_inner().unwrap();
        assert_eq!(calls.iter().filter(|c| c.contains(" b ")).count(), 4, "{calls:?}");
        assert!(!calls.iter().any(|c| c.contains(" b 1 ")), "{calls:?}");
    }

    /// A test that only reads its 1 MiB file (uncached) and one that rewrites its file in place.
    fn read_and_rewrite() -> Suite {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("rw.toml");
        let test = |id: &str, op: &str| {
            format!("[[test]]\nid = \"{id}\"\nname = \"{op}{id}\"\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"{op}\"\ncache = \"uncached\"\npattern = [{{ op = \"{op}\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n")
        };
        std::fs::write(&p, format!("{}{}", test("r", "read"), test("w", "write"))).unwrap();
        let ctx = ResolveCtx { scale: Scale::Factor(1.0), free_memory: 1 << 30 };
        crate::workload::load(&SuiteSource::File(p), &ctx).unwrap()
    }

    #[test]
    fn a_read_only_test_lays_out_once_per_target_and_every_repetition_is_timed_apart() {
        let suite = read_and_rewrite();
        let mut dirs = Dirs(vec![tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()]);
        let run = |dirs: &mut Dirs, reuse_layout: bool| {
            let plan = Plan {
                suite: &suite,
                engine: EngineOptions { repeat: 3, reuse_layout, ..Default::default() },
                order: Order::Interleaved,
                fresh_per_test: false,
                auto: None,
            };
            let out = drive(&plan, dirs, &engine::NoProgress, &NoHooks, &mut |_, _, _| {}).unwrap();
            assert!(!out.failed());
            for d in &dirs.0 {
                let left = std::fs::read_dir(d.path()).unwrap().count();
                assert_eq!(left, 0, "kept files go with the work directories");
            }
            out
        };
        let out = run(&mut dirs, true);
        assert!(out.time.total_nanos > 0 && out.time.workdir_nanos > 0);
        assert_eq!(out.time.testbed_nanos, 0, "directories: no testbed made afresh");
        for r in &out.runs {
            let (read, write) = (&r.tests[0], &r.tests[1]);
            let untimed: Vec<Untimed> = read.reps.iter().map(|x| x.untimed.unwrap()).collect();
            // Laid out by the first repetition on each target, reused by the two after it.
            let reused: Vec<bool> = untimed.iter().map(|u| u.reused_layout).collect();
            assert_eq!(reused, [false, true, true], "{untimed:?}");
            assert!(untimed[0].layout_nanos > 0);
            for (rep, u) in read.reps.iter().zip(&untimed) {
                // The cache precondition is made and verified every time, as for new files.
                let c = &rep.phases[0].cache;
                assert_eq!(c.required, crate::model::job::CacheReq::Uncached);
                assert!(c.met && c.resident_fraction <= UNCACHED_MAX, "{c:?}");
                assert!(u.cache_nanos > 0, "the eviction and mincore are measured");
                assert!(u.cleanup_nanos > 0 || u.reused_layout, "{u:?}");
            }
            // A test that writes its file lays it out every time.
            assert!(write.reps.iter().all(|x| !x.untimed.unwrap().reused_layout));
            assert!(write.reps.iter().all(|x| x.untimed.unwrap().layout_nanos > 0));
        }
        // --fresh-layout: every repetition lays out its own files, as before.
        let out = run(&mut dirs, false);
        let reps = out.runs.iter().flat_map(|r| &r.tests).flat_map(|t| &t.reps);
        assert!(reps.clone().all(|x| !x.untimed.unwrap().reused_layout));
        assert_eq!(reps.count(), 2 * 2 * 3);
    }

    #[test]
    fn in_turn_runs_each_target_through_the_suite() {
        let u = schedule(Order::InTurn, 2, 2, 3);
        let got: Vec<(usize, usize, std::ops::Range<u32>)> =
            u.into_iter().map(|u| (u.target, u.test, u.reps)).collect();
        assert_eq!(got, vec![(0, 0, 0..3), (0, 1, 0..3), (1, 0, 0..3), (1, 1, 0..3)]);
    }

    #[test]
    fn interleaved_rotates_with_test_and_repetition() {
        // compare's order: for round r and test t, targets start at (r + t) mod n.
        let u = schedule(Order::Interleaved, 3, 2, 2);
        let order: Vec<(u32, usize, usize)> =
            u.iter().map(|u| (u.reps.start, u.test, u.target)).collect();
        assert_eq!(
            order,
            vec![
                (0, 0, 0),
                (0, 0, 1),
                (0, 0, 2),
                (0, 1, 1),
                (0, 1, 2),
                (0, 1, 0),
                (1, 0, 1),
                (1, 0, 2),
                (1, 0, 0),
                (1, 1, 2),
                (1, 1, 0),
                (1, 1, 1),
            ]
        );
        assert!(u.iter().all(|u| u.reps.len() == 1));
        // Every target runs every repetition of every test exactly once.
        assert_eq!(schedule(Order::Interleaved, 4, 5, 3).len(), 4 * 5 * 3);
    }
}
