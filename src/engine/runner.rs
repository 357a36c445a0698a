//! Orchestration, for every test: for each repetition, make the test's files
//! ([`super::files`]: a data test's one shared file or one per thread, or a fileset's directory
//! of slots), run the repetition on them ([`super::rep`]: set-up, then each phase with its cache
//! precondition, its observation bracket and its workers), finally remove the files. One path
//! for data and fileset tests: what differs is behind the files' trait. `--min-time` lengthens a
//! short phase ([`super::min_time`]).

use super::files::{self, Pass};
use super::hooks::{Hooks, PhaseOutcome, PhasePoint, Share};
use super::keep::{self, LayoutKeep};
use super::min_time;
use super::rep::{self, RepCx, RepEnv, RepRun};
use super::target::Target;
use crate::model::job::TestDef;
use crate::model::result::*;
use crate::observe::blockstat;
use crate::observe::mountinfo;
use std::path::Path;
use std::time::{Duration, Instant};

/// Options that apply to every test of a run.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Repetitions per test (>= 1).
    pub repeat: u32,
    /// Share (0..=100) of each written 4 KiB block that is zeros.
    pub compress_percent: u8,
    /// Base seed for offsets and sizes; runs with the same seed do the same operations.
    pub seed: u64,
    /// Trace the block layer of the target's devices during timed phases (`--trace`).
    pub trace: bool,
    /// Record what the test's threads waited for while off CPU during timed phases
    /// (`--offcpu`, [`crate::observe::trace::offcpu`]).
    pub offcpu: bool,
    /// Write verified data and check the data test's files after each repetition
    /// (`--verify`, [`super::verify`]).
    pub verify: bool,
    /// Stop each timed phase at the next operation boundary after this long and count it as
    /// complete (IOR's stonewall, `-D`; a multi-client run's `--stonewall`).
    pub stonewall: Option<Duration>,
    /// Several processes share the work directory ([`Share`]; `--mpi-shared`).
    pub share: Option<Share>,
    /// Shortest timed phase (`--min-time`; zero: every phase runs once). A data test's timed
    /// phase that ends sooner is run again on the same files (its pattern, not the test's
    /// set-up) until its passes together last this long; a fileset test, whose phases change
    /// the set they work on, is run again whole (set-up included, untimed) until its timed
    /// phases last this long. Figures are sums over the passes ([`PhaseResult::passes`]).
    /// Not applied in multi-client runs (their phases are one window across processes).
    pub min_time: Duration,
    /// Lay out a test that only reads its files once per target and reuse the files in its
    /// later repetitions ([`super::keep`]); false: every repetition lays out its own files
    /// (`--fresh-layout`).
    pub reuse_layout: bool,
    /// The passes each phase of the test runs (by phase index), fixed by the test's first
    /// repetition ([`min_time::chosen`]); `None`: `--min-time` chooses them in the first
    /// repetition, and [`run_test`] fixes them for its later ones. The driver sets it for every
    /// later unit of the test, on every configuration.
    pub passes: Option<Vec<u32>>,
    /// First interval of each timed phase's series (`--interval`; at least 10 ms). `None`:
    /// adaptive, 10 ms doubling until the phase fits in 100-200 points.
    pub interval: Option<Duration>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            repeat: 1,
            compress_percent: 0,
            seed: 0x00f5_be4c,
            trace: false,
            offcpu: false,
            verify: false,
            stonewall: None,
            share: None,
            min_time: Duration::ZERO,
            reuse_layout: true,
            passes: None,
            interval: None,
        }
    }
}

// The run's thresholds and words, at the paths callers have always used.
pub use super::cache::{CACHED_FULL, CACHED_MIN, UNCACHED_MAX};
pub use super::files::RESIDENCY_SAMPLE;
pub use super::min_time::MAX_PASSES;
pub use super::results::STONEWALLED;
pub use crate::model::result::{NOISY_CV, SHORT_PHASE};

/// Receives progress; the CLI draws a bar, tests and library users can ignore it.
pub trait Progress: Sync {
    /// Work on a (new) target starts, e.g. the next configuration of a comparison.
    fn target_start(&self, _label: &str) {}
    /// A phase (or the set-up) starts; `expected_bytes` when known.
    fn phase_start(&self, _test: &TestDef, _rep: u32, _phase: &str, _expected_bytes: Option<u64>) {}
    /// A phase counted in operations (fileset tests) starts; `phase_progress` then reports
    /// operations. The default shows it like a byte-counted phase.
    fn phase_start_ops(&self, test: &TestDef, rep: u32, phase: &str, expected_ops: Option<u64>) {
        let _ = expected_ops;
        self.phase_start(test, rep, phase, None)
    }
    /// Bytes (or, after `phase_start_ops`, operations) done so far in the current phase.
    fn phase_progress(&self, _bytes: u64) {}
    /// The phase ended.
    fn phase_end(&self) {}
}

/// A [`Progress`] that shows nothing.
pub struct NoProgress;
impl Progress for NoProgress {}

/// What is known about the target: mount, filesystem, devices.
pub fn target_info(target: &Target<'_>) -> TargetInfo {
    let m = mountinfo::mount_of(&target.dir).unwrap_or_default();
    let devices = if target.devices.is_empty() {
        blockstat::device_of(&target.dir).into_iter().collect()
    } else {
        target.devices.clone()
    };
    TargetInfo {
        label: target.label.clone(),
        dir: target.dir.display().to_string(),
        fs_type: m.fstype.clone(),
        mount_options: m.options(),
        mount_source: m.source,
        devices,
    }
}

/// Further attempts at a repetition whose cache precondition did not hold, before it is left
/// out of the figures.
pub const MAX_RETRIES: u32 = 2;

/// Run repetitions `reps` of one test (e.g. `0..5`, or `2..3` for one repetition of an
/// interleaved comparison). The repetition index seeds the random offsets, so repetition k does
/// the same operations on every target.
#[allow(clippy::too_many_arguments)]
pub fn run_test(
    test: &TestDef,
    target: &Target<'_>,
    devices: &[String],
    dir: &Path,
    opts: &EngineOptions,
    test_index: u64,
    reps: std::ops::Range<u32>,
    progress: &dyn Progress,
    hooks: &dyn Hooks,
) -> TestResult {
    let mut none = LayoutKeep::none();
    run_test_keeping(test, target, devices, dir, opts, test_index, reps, progress, hooks, &mut none)
}

/// [`run_test`], where `keep` says which tests' files an earlier repetition left laid out in
/// `dir` (a test that only reads its files reuses them, [`super::keep`]), and records which
/// this test leaves there.
#[allow(clippy::too_many_arguments)]
pub fn run_test_keeping(
    test: &TestDef,
    target: &Target<'_>,
    devices: &[String],
    dir: &Path,
    opts: &EngineOptions,
    test_index: u64,
    reps: std::ops::Range<u32>,
    progress: &dyn Progress,
    hooks: &dyn Hooks,
    keep: &mut LayoutKeep,
) -> TestResult {
    // A test whose size is its run file's length as the earlier tests left it.
    let sized;
    let test = match files::sized_from_run_file(test, dir) {
        None => test,
        Some(Ok(t)) => {
            sized = t;
            &sized
        }
        Some(Err(e)) => {
            let mut result = TestResult::new(test);
            result.status = TestStatus::Failed { reason: e.into() };
            result.finalize();
            return result;
        }
    };
    let mut result = TestResult::new(test);
    let mut complete = 0usize;
    // The passes --min-time chooses in the first repetition, for the others.
    let mut fixed = opts.clone();
    // The test's own `verify` is `--verify` for this test.
    fixed.verify |= test.verify;
    // Blocks a later test checks are written as --verify writes them (and not checked here).
    fixed.verify |= test.files.run_file.as_ref().is_some_and(|r| r.verify_writes);
    let lengthens = min_time::applies(test, opts);
    for rep in reps {
        let opts = &fixed;
        let seed = test.seed.unwrap_or(opts.seed) ^ (test_index << 32) ^ ((rep as u64) << 16);
        let role_paths = super::roles::paths(test, dir, opts.share.map(|s| s.index));
        let env = RepEnv { target, devices, opts, roles: &role_paths };
        let at = PhasePoint { target: &target.label, test, rep, phase: "" };
        let cx = RepCx { at, env: &env, seed, progress, hooks };
        let warnings = &mut result.warnings;
        let reusable = keep::reusable(test, opts);
        let mut once = || run_on_new_files(&cx, dir, warnings, reusable.then_some(&mut *keep));
        let mut attempt = || {
            let run = once();
            // --min-time for a fileset test: its phases change the set (a create phase leaves
            // no free slot for another pass), so the whole test runs again, on a new set, and
            // its phases' figures are added up.
            if files::pass_of(test) == Pass::Repetition && min_time::applies(test, opts) {
                let n = opts.passes.as_ref().and_then(|p| p.first().copied());
                min_time::lengthen(run, opts.min_time, n, &mut once)
            } else {
                run
            }
        };
        let mut run = attempt();
        // A repetition whose cache precondition did not hold measured something else: it is
        // run again (same seed, same operations), up to MAX_RETRIES times; if it still misses,
        // the test's result leaves it out of the figures and says so. Not in a multi-client
        // run: every process must run the same phases.
        let mut retried = 0;
        while retried < MAX_RETRIES
            && opts.share.is_none()
            && run.outcome == PhaseOutcome::Ok
            && run.result.as_ref().is_some_and(|r| !r.preconditions_met())
            && !crate::sys::signals::interrupted()
        {
            retried += 1;
            run = attempt();
        }
        let RepRun { result: rep_result, outcome, .. } = run;
        if let Some(mut r) = rep_result {
            r.retried = retried;
            if lengthens && fixed.passes.is_none() {
                fixed.passes = min_time::chosen(&r);
            }
            result.reps.push(r);
        }
        match outcome {
            PhaseOutcome::Ok => complete += 1,
            PhaseOutcome::Failed(e) => {
                result.status = TestStatus::Failed { reason: e.into() };
                break;
            }
            PhaseOutcome::Interrupted => {
                result.status = TestStatus::Interrupted;
                break;
            }
        }
    }
    result.complete_reps = complete as u32;
    result.finalize();
    result
}

/// Make the repetition's files, run it on them, remove them (and the roles' files). With
/// `keep` (a test that only reads its files), use the files an earlier repetition left laid out
/// and leave them for the next one when it went well and there is room.
fn run_on_new_files<'t>(
    cx: &RepCx<'t>,
    dir: &Path,
    warnings: &mut Vec<Warning>,
    mut keep: Option<&mut LayoutKeep>,
) -> RepRun<'t> {
    let (test, opts) = (cx.at.test, cx.env.opts);
    let t0 = Instant::now();
    if let Err(e) = super::roles::check(test, opts.verify) {
        return RepRun::ended(test, PhaseOutcome::Failed(e));
    }
    let kept = keep.as_mut().is_some_and(|k| k.take(test));
    match files::make(test, dir, opts, cx.at.rep, kept) {
        Ok(mut files) => {
            let mut out = rep::run(cx, &mut *files, warnings);
            let removing = Instant::now();
            let ok = out.outcome == PhaseOutcome::Ok && out.result.is_some();
            if !(ok && keep.is_some_and(|k| k.keep(test, dir))) {
                files.remove(test, opts);
            }
            super::roles::remove(test, cx.env.roles);
            if let Some(r) = out.result.as_mut() {
                // What no step accounts for: observation, workers started and joined, results.
                let mut u = r.untimed.unwrap_or_default();
                u.cleanup_nanos += removing.elapsed().as_nanos() as u64;
                let all = t0.elapsed().as_nanos() as u64;
                let timed = crate::model::time::timed_nanos(r);
                u.other_nanos = all.saturating_sub(timed + u.total_nanos());
                r.untimed = Some(u);
            }
            out
        }
        Err(e) => RepRun::ended(test, PhaseOutcome::Failed(e)),
    }
}
