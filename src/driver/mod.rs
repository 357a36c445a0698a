//! The suite driver: every target × test × repetition of a `run` or a `compare`, in one order,
//! with progress, hooks and signals handled in one place (the shape of hyperfine's scheduler).
//!
//! - [`Order`]: `InTurn` (each target runs the suite, each test with all its repetitions:
//!   `run`), or `Interleaved` (repetition by repetition, test by test, every target once before
//!   any runs again, in an order that rotates with the test and repetition: `compare`).
//!   Repetition k uses the same random seed on every target, so each does the same operations.
//! - [`Hooks`]: called before and after every phase the engine runs (where a multi-client run
//!   will put its barrier), reached from the engine's phase loop through the [`Progress`] it
//!   already receives.
//! - `on_test`: called with a test's results so far after each unit of work (where the store
//!   commits, so a crash loses at most the unit in flight).
//! - Ctrl-C/SIGTERM: checked before every unit; what was not reached is marked skipped.
//!
//! [`targets`] has the lifecycle of the targets themselves (directories and testbeds).

pub mod targets;

use crate::engine::{self, EngineOptions, Progress, Target, Workspace};
use crate::result::{RunReport, TestResult, TestStatus};
use crate::testbed::TestbedEnv;
use crate::workload::{Suite, TestDef};
use std::sync::Mutex;

pub use targets::{Spec, TargetError, TargetSet};

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

/// One phase of one repetition, as the hooks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhasePoint {
    /// Index of the target.
    pub target: usize,
    /// Test id.
    pub test: String,
    /// Repetition index.
    pub rep: u32,
    /// Phase name (`setup` for a test's untimed file preparation).
    pub phase: String,
}

/// Called around every phase the engine runs. The default methods do nothing.
pub trait Hooks: Sync {
    /// Just before the phase starts (after its cache precondition is established).
    fn before_phase(&self, _at: &PhasePoint) {}
    /// Just after it ended.
    fn after_phase(&self, _at: &PhasePoint) {}
}

/// [`Hooks`] that do nothing.
pub struct NoHooks;
impl Hooks for NoHooks {}

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
}

impl Outcome {
    /// Whether any test failed on any target.
    pub fn failed(&self) -> bool {
        self.runs
            .iter()
            .any(|r| r.tests.iter().any(|t| matches!(t.status, TestStatus::Failed { .. })))
    }

    /// How the run ended, as the store records it (and the exit code says).
    pub fn status(&self) -> crate::store::read::RunStatus {
        use crate::store::read::RunStatus;
        if self.interrupted {
            RunStatus::Interrupted
        } else if self.failed() {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        }
    }
}

/// Forwards progress and calls the hooks around each phase.
struct Hooked<'a> {
    progress: &'a dyn Progress,
    hooks: &'a dyn Hooks,
    target: usize,
    current: Mutex<Option<PhasePoint>>,
}

impl Hooked<'_> {
    fn begin(&self, test: &TestDef, rep: u32, phase: &str) {
        let at =
            PhasePoint { target: self.target, test: test.id.clone(), rep, phase: phase.into() };
        self.hooks.before_phase(&at);
        if let Ok(mut c) = self.current.lock() {
            *c = Some(at);
        }
    }
}

impl Progress for Hooked<'_> {
    fn target_start(&self, label: &str) {
        self.progress.target_start(label)
    }
    fn phase_start(&self, test: &TestDef, rep: u32, phase: &str, expected_bytes: Option<u64>) {
        self.begin(test, rep, phase);
        self.progress.phase_start(test, rep, phase, expected_bytes)
    }
    fn phase_start_ops(&self, test: &TestDef, rep: u32, phase: &str, expected_ops: Option<u64>) {
        self.begin(test, rep, phase);
        self.progress.phase_start_ops(test, rep, phase, expected_ops)
    }
    fn phase_progress(&self, done: u64) {
        self.progress.phase_progress(done)
    }
    fn phase_end(&self) {
        self.progress.phase_end();
        let at = self.current.lock().ok().and_then(|mut c| c.take());
        if let Some(at) = at {
            self.hooks.after_phase(&at);
        }
    }
}

fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
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
    on_test: &mut dyn FnMut(usize, usize, &TestResult),
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
                host: crate::observe::host::HostInfo::current(),
                target: engine::runner::target_info(&t),
                suite: suite.name.clone(),
                scale: suite.scale.to_string(),
                repeat: plan.engine.repeat,
                tests: Vec::new(),
                interrupted: false,
                cluster: None,
            }
        })
        .collect();
    let mut acc: Vec<Vec<Option<TestResult>>> = vec![vec![None; suite.tests.len()]; n];
    let mut interrupted = false;
    // In turn, a target keeps one work directory for the whole suite; interleaved, each unit
    // makes its own (the target may be made afresh in between).
    let mut ws: Option<(usize, Workspace)> = None;
    let mut last_target = None;
    for unit in schedule(plan.order, n, suite.tests.len(), plan.engine.repeat) {
        if crate::sys::signals::interrupted() {
            interrupted = true;
            break;
        }
        let (i, ti) = (unit.target, unit.test);
        if plan.fresh_per_test {
            ws = None;
            targets.refresh(i)?;
        }
        let target = targets.target(i);
        if plan.order == Order::Interleaved || last_target != Some(i) {
            progress.target_start(&target.label);
            last_target = Some(i);
        }
        if plan.order == Order::Interleaved || ws.as_ref().is_none_or(|(w, _)| *w != i) {
            ws = Some((i, Workspace::create(&target.dir)?));
        }
        let Some((_, dir)) = &ws else { unreachable!("made above") };
        let hooked = Hooked { progress, hooks, target: i, current: Mutex::new(None) };
        let devices = runs[i].target.devices.clone();
        let test = &suite.tests[ti];
        let r = engine::run_test(
            test,
            &target,
            &devices,
            dir.path(),
            &plan.engine,
            ti as u64,
            unit.reps.clone(),
            &hooked,
        );
        if plan.order == Order::Interleaved {
            ws = None;
        }
        let stop = r.status == TestStatus::Interrupted;
        match &mut acc[i][ti] {
            Some(a) => a.merge(r),
            slot @ None => *slot = Some(r),
        }
        if let Some(a) = &acc[i][ti] {
            on_test(i, ti, a);
        }
        if stop {
            interrupted = true;
            break;
        }
    }
    drop(ws);
    for (i, run) in runs.iter_mut().enumerate() {
        run.interrupted = interrupted;
        for (ti, test) in suite.tests.iter().enumerate() {
            run.tests.push(
                acc[i][ti].take().unwrap_or_else(|| {
                    TestResult::skipped(test, "run interrupted before this test")
                }),
            );
        }
    }
    Ok(Outcome { runs, interrupted })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{ResolveCtx, Scale, SuiteSource};

    /// Records every hook call.
    #[derive(Default)]
    struct Log(Mutex<Vec<String>>);
    impl Hooks for Log {
        fn before_phase(&self, at: &PhasePoint) {
            self.0
                .lock()
                .unwrap()
                .push(format!("before {} {} {} {}", at.target, at.test, at.rep, at.phase));
        }
        fn after_phase(&self, at: &PhasePoint) {
            self.0
                .lock()
                .unwrap()
                .push(format!("after {} {} {} {}", at.target, at.test, at.rep, at.phase));
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
        };
        let out =
            drive(&plan, &mut dirs, &engine::NoProgress, &NoHooks, &mut |_, _, _| {}).unwrap();
        let t = &out.runs[0].tests[0];
        assert_eq!(t.figure, crate::result::Figure::OpsPerS, "declared, not the data test's MiB/s");
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
        let log = log.0.into_inner().unwrap();
        assert_eq!(log.len(), 16, "one before and one after per phase: {log:?}");
        assert_eq!(log[0], "before 0 a 0 w");
        assert_eq!(log[1], "after 0 a 0 w");
        assert_eq!(log[2], "before 1 a 0 w");
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
