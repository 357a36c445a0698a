//! Orchestration, for every test: for each repetition, make the test's files (a data test's one
//! shared file or one per thread, or a fileset's directory of slots), then for each phase
//! establish and verify its cache precondition, run its workers, and turn what they measured
//! into results; finally remove the files. One path for data and fileset tests: only the
//! set-up, the workers a phase starts and the tear-down differ ([`Files`]).

use super::fileset::{self, fill_of, FillShared, FsCounters, SlotState, SlotWork};
use super::hooks::{Hooks, PhaseOutcome, PhasePoint, Share};
use super::ioengine::{IoEngine, Mmap, Null, Psync, Uring};
use super::layout::{Mapping, PathBuf0};
use super::target::Target;
use super::worker::{self, FileWork, PaddedCounter, StopFlags, Work, WorkerOutput, WorkerPlan};
use crate::model::job::{
    Amount, CacheReq, EngineKind, FileSet, MetaEntry, MetaOp, OpKind, Pattern, PhaseDef, Pick,
    SyncCall, SyncPolicy, TestDef,
};
use crate::model::latency::OpHistograms;
use crate::model::memory::{MemDelta, MemSample};
use crate::model::result::*;
use crate::model::units::fmt_bytes;
use crate::observe::blockstat::{self, Snapshot};
use crate::observe::mountinfo;
use crate::sys::cache;
use rustix::fs::{Mode, OFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
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
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            repeat: 1,
            compress_percent: 0,
            seed: 0x00f5_be4c,
            trace: false,
            verify: false,
            stonewall: None,
            share: None,
            min_time: Duration::ZERO,
        }
    }
}

/// Most passes of one phase, or runs of one fileset test, that `--min-time` adds (a phase of
/// next to nothing would otherwise loop for a long time).
pub const MAX_PASSES: u32 = 1000;

/// Whether `--min-time` may lengthen the test: not in a multi-client run (one phase is one
/// window across processes), not for a fill phase (it ends at a fill level, not a count), and
/// not for a test with roles (they run beside the phase: a pass without them would measure
/// something else).
fn lengthens(test: &TestDef, opts: &EngineOptions) -> bool {
    !opts.min_time.is_zero()
        && test.roles.is_empty()
        && opts.share.is_none()
        && opts.stonewall.is_none()
        && !test.phases.iter().any(|p| matches!(p.amount, Amount::Fill(_)))
}

/// Sum of the timed phases' wall times of a repetition's phases.
fn timed_wall(phases: &[PhaseResult]) -> Duration {
    Duration::from_nanos(phases.iter().filter(|p| p.timed).map(|p| p.wall_nanos).sum())
}

/// Resident share at or above which a file counts as cached.
pub const CACHED_MIN: f64 = 0.95;
/// Resident share required once something else was seen evicting the files (a second read
/// was needed): full, but for rounding of a partly cached last page.
pub const CACHED_FULL: f64 = 0.995;
/// Resident share at or below which a file counts as uncached.
pub const UNCACHED_MAX: f64 = 0.02;
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

pub(super) enum RepOutcome {
    Ok,
    Failed(String),
    Interrupted,
}

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
    let mut result = TestResult::new(test);
    let mut complete = 0usize;
    for rep in reps {
        let seed = opts.seed ^ (test_index << 32) ^ ((rep as u64) << 16);
        let warnings = &mut result.warnings;
        let share = opts.share.map(|s| s.index);
        let role_paths = super::roles::paths(test, dir, share);
        let mut once = || match Files::make(test, dir, opts, rep) {
            Ok(mut files) => {
                let at = PhasePoint { target: &target.label, test, rep, phase: "" };
                let env = RepEnv { target, devices, opts, roles: &role_paths };
                let out = run_rep(&at, &mut files, &env, seed, (progress, hooks), warnings);
                files.remove(test, opts);
                super::roles::remove(&role_paths);
                out
            }
            Err(msg) => RepRun { result: None, outcome: RepOutcome::Failed(msg), hists: vec![] },
        };
        let mut run = once();
        // --min-time for a fileset test: its phases change the set (a create phase leaves no
        // free slot for another pass), so the whole test runs again, on a new set, and its
        // phases' figures are added up.
        if test.is_fileset() && lengthens(test, opts) {
            while let (Some(r), RepOutcome::Ok) = (&run.result, &run.outcome) {
                let passes = r.phases.first().map(|p| p.passes()).unwrap_or(MAX_PASSES);
                if timed_wall(&r.phases) >= opts.min_time || passes >= MAX_PASSES {
                    break;
                }
                let more = once();
                run.absorb(test, more);
            }
        }
        let RepRun { result: rep_result, outcome, .. } = run;
        if let Some(r) = rep_result {
            result.reps.push(r);
        }
        match outcome {
            RepOutcome::Ok => complete += 1,
            RepOutcome::Failed(reason) => {
                result.status = TestStatus::Failed { reason };
                break;
            }
            RepOutcome::Interrupted => {
                result.status = TestStatus::Interrupted;
                break;
            }
        }
    }
    result.complete_reps = complete as u32;
    result.finalize();
    result
}

/// The files of one repetition. A test works on a set of files: a data test's is one file
/// shared by all threads or one per thread; a fileset's is `count` slots in a directory tree.
enum Files<'t> {
    /// A data test's files (one shared, or one per thread).
    Data {
        /// Their paths.
        paths: Vec<PathBuf>,
    },
    /// A fileset's directory and the state of its slots.
    Set {
        /// The set's definition.
        fs: &'t FileSet,
        /// Its root directory.
        root_path: PathBuf,
        /// The root, open (operations are relative to it).
        root: OwnedFd,
        /// Per thread of every process sharing the set: which of its slots hold a file.
        states: Vec<SlotState>,
        /// This process's first thread among them (0 unless shared).
        first: usize,
        /// Several processes share the set (and remove it together).
        shared: bool,
        /// `paths = "absolute"`: where the root really is, checked
        /// ([`fileset::absolute_base`]).
        absolute: Option<PathBuf>,
    },
}

impl<'t> Files<'t> {
    /// Name (and, for a fileset, make) the test's files under `dir`; nothing is written yet.
    /// With several processes in one directory ([`EngineOptions::share`]), a
    /// shared file is one for all of them; files of one thread get the process's index in
    /// their names; a fileset is one set for all, in a directory named after the repetition
    /// (the first process to get there makes it; one still removing the previous repetition's
    /// cannot remove it under the others), its slots partitioned over every thread of every
    /// process: this process's threads are the range [`Files::Set::first`]`..+threads` of all,
    /// and `states` holds every thread's, empty for the others'.
    fn make(
        test: &'t TestDef,
        dir: &Path,
        opts: &EngineOptions,
        rep: u32,
    ) -> Result<Files<'t>, String> {
        let fs = &test.files;
        let share = opts.share.map(|s| (s.index, s.count));
        if !test.is_fileset() {
            let paths: Vec<PathBuf> = if test.files.shared {
                vec![dir.join(format!("t{}.dat", test.id))]
            } else if let Some((i, _)) = share {
                (0..test.threads).map(|k| dir.join(format!("t{}.r{i}.{k}.dat", test.id))).collect()
            } else {
                (0..test.threads).map(|k| dir.join(format!("t{}.{k}.dat", test.id))).collect()
            };
            if removes_files(test, opts) {
                for p in &paths {
                    let _ = std::fs::remove_file(p);
                }
            }
            return Ok(Files::Data { paths });
        }
        let root_path = match share {
            Some(_) => dir.join(format!("t{}.rep{rep}.set", test.id)),
            None => dir.join(format!("t{}.set", test.id)),
        };
        if share.is_none() {
            let _ = std::fs::remove_dir_all(&root_path);
        }
        match std::fs::create_dir(&root_path) {
            Err(e) if !(share.is_some() && e.kind() == std::io::ErrorKind::AlreadyExists) => {
                return Err(format!("creating {}: {e}", root_path.display()))
            }
            _ => {}
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let root = match rustix::fs::open(&root_path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = std::fs::remove_dir(&root_path);
                return Err(format!("opening {}: {e}", root_path.display()));
            }
        };
        let t = test.threads as u64;
        let (first, all) = match share {
            Some((i, c)) => (i as u64 * t, c as u64 * t),
            None => (0, t),
        };
        let state = |n| if opts.verify { SlotState::verified(n) } else { SlotState::new(n) };
        let states = (0..all)
            .map(|g| match g >= first && g < first + t {
                true => state(fileset::slots_of(fs.count, g, all)),
                false => SlotState::new(0),
            })
            .collect();
        let shared = share.is_some();
        let absolute = match fs.paths {
            crate::model::job::PathMode::Relative => None,
            crate::model::job::PathMode::Absolute => match fileset::absolute_base(root.as_fd()) {
                Ok(p) => Some(p),
                Err(e) => {
                    if !shared {
                        let _ = std::fs::remove_dir(&root_path);
                    }
                    return Err(e);
                }
            },
        };
        Ok(Files::Set { fs, root_path, root, states, first: first as usize, shared, absolute })
    }

    /// Remove every file (and a fileset's directories); a file shared by several processes
    /// only by the first.
    fn remove(self, test: &TestDef, opts: &EngineOptions) {
        match self {
            Files::Data { paths } => {
                if removes_files(test, opts) {
                    for p in &paths {
                        let _ = std::fs::remove_file(p);
                    }
                }
            }
            Files::Set { fs, root_path, root, states, shared, .. } => {
                fileset::remove_set(&root_path, &root, fs, &states);
                drop(root);
                if shared {
                    // The last process out removes the root; what remains (others' files,
                    // a replace's temporary) goes with the shared work directory.
                    let _ = std::fs::remove_dir(&root_path);
                } else if let Err(e) = std::fs::remove_dir_all(&root_path) {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        eprintln!(
                            "fsbench: warning: could not remove {}: {e}",
                            root_path.display()
                        );
                    }
                }
            }
        }
    }

    /// Remove a data test's files (between passes of a phase that creates them); a fileset's
    /// are left alone.
    fn remove_data(&self, test: &TestDef, opts: &EngineOptions) {
        if let Files::Data { paths } = self {
            if removes_files(test, opts) {
                for p in paths {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }

    /// The untimed set-up: fill a data test's files, or check a fileset's space and create its
    /// files. `Ok(false)`: interrupted.
    fn set_up(
        &mut self,
        test: &TestDef,
        opts: &EngineOptions,
        seed: u64,
        rep: u32,
        progress: &dyn Progress,
    ) -> Result<bool, String> {
        match self {
            Files::Data { paths } => {
                // A file shared by several processes is prefilled once, whole, by the first.
                let others_fill = test.files.shared && opts.share.is_some_and(|s| s.index > 0);
                if !test.files.prefill || others_fill {
                    return Ok(true);
                }
                progress.phase_start(test, rep, "setup", Some(test.footprint_bytes()));
                let size = file_size(test, opts);
                let verify = opts.verify.then_some(opts.seed);
                let r = prefill(paths, size, opts.compress_percent, seed, verify, progress);
                progress.phase_end();
                r.map_err(|e| format!("setup: {e}"))
            }
            Files::Set { fs, .. } => {
                let fs = *fs;
                if let Files::Set { root, .. } = self {
                    check_space(test, fs, root)?;
                }
                if !fs.prefill {
                    return Ok(true);
                }
                let phase = prefill_phase();
                progress.phase_start_ops(test, rep, "setup", Some(fs.count));
                let run = run_phase(test, &phase, self, opts, seed ^ 0xf111, progress);
                progress.phase_end();
                if let Some(e) = run.outs.iter().find_map(|o| o.error.as_ref()) {
                    return Err(format!("prefill: {e}"));
                }
                Ok(!run.outs.iter().any(|o| o.interrupted))
            }
        }
    }

    /// The seed of phase `pi`'s workers. Data phases share the repetition's seed, fileset
    /// phases each get their own (kept as they were, so runs repeat their operations).
    fn phase_seed(&self, seed: u64, pi: usize) -> u64 {
        match self {
            Files::Data { .. } => seed,
            Files::Set { .. } => seed ^ ((pi as u64 + 1) << 24),
        }
    }

    /// The files whose page-cache residency stands for the test's: every file of a data test;
    /// up to [`RESIDENCY_SAMPLE`] existing files of a fileset, spread over its slots.
    fn residency_files(&self) -> Vec<PathBuf> {
        match self {
            Files::Data { paths } => paths.clone(),
            Files::Set { fs, root_path, states, .. } => {
                sample_files(root_path, fs, states, RESIDENCY_SAMPLE)
            }
        }
    }

    /// Whether every file the phase starts with exists (data: a phase may create its file).
    fn all_exist(&self) -> bool {
        match self {
            Files::Data { paths } => paths.iter().all(|p| p.exists()),
            Files::Set { .. } => true,
        }
    }

    /// For a failure message: the state of the set when a phase stopped.
    fn state_note(&self, outs: &[WorkerOutput]) -> String {
        match self {
            Files::Data { .. } => String::new(),
            Files::Set { fs, states, .. } => {
                let created: u64 = outs.iter().map(|o| o.creates).sum();
                let written: u64 = outs.iter().map(|o| o.bytes_written).sum();
                let live: u64 = states.iter().map(|s| s.live()).sum();
                format!(
                    "; all threads in this phase: {created} files created, {} written; {live} of {} files existed when it stopped",
                    fmt_bytes(written),
                    fs.count
                )
            }
        }
    }
}

/// Files of a fileset whose residency is sampled before a phase.
pub const RESIDENCY_SAMPLE: u64 = 64;

/// One repetition as [`run_rep`] ran it: its figures, how it ended, and each phase's latency
/// histograms (kept so that further runs of the test can be added exactly).
struct RepRun {
    result: Option<RepResult>,
    outcome: RepOutcome,
    hists: Vec<OpHistograms>,
}

impl RepRun {
    /// Add another run of the same test and repetition (`--min-time` on a fileset test): each
    /// phase's figures and latency are summed; the repetition ends as the later run did.
    fn absorb(&mut self, test: &TestDef, more: RepRun) {
        let (Some(r), Some(m)) = (self.result.as_mut(), more.result.as_ref()) else {
            self.outcome = more.outcome;
            return;
        };
        for (i, (p, q)) in r.phases.iter_mut().zip(&m.phases).enumerate() {
            p.add_pass(q);
            if let (Some(h), Some(k)) = (self.hists.get_mut(i), more.hists.get(i)) {
                h.merge(k);
                p.latency = h.summaries();
            }
            if let (Some(d), Some(e)) = (p.device.as_mut(), q.device.as_ref()) {
                d.add(e);
            }
        }
        let mut timed = OpHistograms::default();
        for (p, h) in r.phases.iter().zip(&self.hists) {
            if p.timed {
                timed.merge(h);
            }
        }
        let complete = r.complete && m.complete && matches!(more.outcome, RepOutcome::Ok);
        let mut merged = rep_result(test, std::mem::take(&mut r.phases), &timed, complete);
        merged.extents = r.extents.take();
        set_fileset_figure(&mut merged);
        *r = merged;
        self.outcome = more.outcome;
    }
}

/// A fileset's figure is its file operations per second.
fn set_fileset_figure(r: &mut RepResult) {
    r.file_ops = r.phases.iter().filter(|p| p.timed).map(|p| p.file_ops).sum();
    let secs = r.wall_nanos as f64 / 1e9;
    r.ops_per_s = if secs > 0.0 { r.file_ops as f64 / secs } else { 0.0 };
}

/// Where a repetition runs: the target, its devices, the options, the roles' files.
struct RepEnv<'a> {
    target: &'a Target<'a>,
    devices: &'a [String],
    opts: &'a EngineOptions,
    roles: &'a [Vec<PathBuf>],
}

fn run_rep(
    at: &PhasePoint<'_>,
    files: &mut Files<'_>,
    env: &RepEnv<'_>,
    seed: u64,
    (progress, hooks): (&dyn Progress, &dyn Hooks),
    warnings: &mut Vec<Warning>,
) -> RepRun {
    let (test, rep) = (at.test, at.rep);
    let (target, devices, opts) = (env.target, env.devices, env.opts);
    let fail = |outcome| RepRun { result: None, outcome, hists: vec![] };
    if let Files::Data { paths } = files {
        if test.phases.iter().any(|p| p.open.direct) {
            // O_DIRECT refused or misaligned: this test's failure, before any file is made.
            if let Some(dir) = paths.first().and_then(|p| p.parent()) {
                let r = super::direct::probe(dir).and_then(|a| super::direct::check_test(test, &a));
                if let Err(e) = r {
                    return fail(RepOutcome::Failed(e));
                }
            }
        }
    }
    // The set-up, and each phase, between the hooks: every process of a multi-client run
    // starts it together and agrees on its outcome.
    let setup = PhasePoint { phase: "setup", ..*at };
    let local = match hooks.before_phase(&setup) {
        Err(e) => PhaseOutcome::Failed(format!("setup: {e}")),
        Ok(()) => match files.set_up(test, opts, seed, rep, progress).and_then(|ok| {
            if !ok {
                return Ok(false);
            }
            prefill_roles(test, env.roles, opts, seed, progress)
        }) {
            Ok(true) => PhaseOutcome::Ok,
            Ok(false) => PhaseOutcome::Interrupted,
            Err(msg) => PhaseOutcome::Failed(msg),
        },
    };
    match hooks.after_phase(&setup, None, local) {
        PhaseOutcome::Ok => {}
        PhaseOutcome::Interrupted => return fail(RepOutcome::Interrupted),
        PhaseOutcome::Failed(e) => return fail(RepOutcome::Failed(e)),
    }
    let mut phases = Vec::new();
    let mut hists = Vec::new();
    let mut timed_hist = OpHistograms::default();
    // --min-time on a data test: a short timed phase runs again on the same files.
    let in_place = !test.is_fileset() && lengthens(test, opts);
    let mut outcome = RepOutcome::Ok;
    for (pi, phase) in test.phases.iter().enumerate() {
        // A phase that creates its files starts every further pass without them.
        let creates = !files.all_exist();
        let check = establish_cache(phase.cache, files, target);
        if !check.met {
            let (required, method) = (phase.cache, check.method.clone());
            let (phase, resident_fraction) = (phase.name.clone(), check.resident_fraction);
            let sampled = matches!(files, Files::Set { .. });
            warn(
                warnings,
                Warning::CacheNotMet { phase, required, resident_fraction, method, sampled },
            );
        }
        match files {
            Files::Data { .. } => {
                progress.phase_start(test, rep, &phase.name, expected_bytes(test, phase))
            }
            Files::Set { fs, .. } => {
                progress.phase_start_ops(test, rep, &phase.name, expected_ops(test, fs, phase))
            }
        }
        let tracer = if opts.trace && phase.timed { start_trace(devices, warnings) } else { None };
        let mem_before = MemSample::take(target.daemon);
        let before = Snapshot::take(devices);
        let point = PhasePoint { phase: &phase.name, ..*at };
        let released = hooks.before_phase(&point);
        let pseed = files.phase_seed(seed, pi);
        let (mut run, roles, role_error) = match &released {
            Ok(()) if phase.timed => {
                super::roles::beside(test, env.roles, pseed, opts.compress_percent, || {
                    run_phase(test, phase, files, opts, pseed, progress)
                })
            }
            Ok(()) => (run_phase(test, phase, files, opts, pseed, progress), Vec::new(), None),
            Err(_) => (PhaseRun::default(), Vec::new(), None),
        };
        let mut pr = phase_result(test, phase, &run, check, None);
        let mut hist = std::mem::take(&mut run.hist);
        let window_start = run.outs.iter().map(|o| o.start).min();
        if in_place && phase.timed && released.is_ok() {
            // The same operations (same seed), after the same cache precondition; the time in
            // between (removing created files, evicting or reading the cache) is not timed.
            while Duration::from_nanos(pr.wall_nanos) < opts.min_time
                && pr.passes() < MAX_PASSES
                && run.clean()
                && !crate::sys::signals::interrupted()
            {
                if creates {
                    files.remove_data(test, opts);
                }
                let check = establish_cache(phase.cache, files, target);
                if !check.met {
                    let (required, method) = (phase.cache, check.method.clone());
                    let (phase, resident_fraction) = (phase.name.clone(), check.resident_fraction);
                    let w = Warning::CacheNotMet {
                        phase,
                        required,
                        resident_fraction,
                        method,
                        sampled: false,
                    };
                    warn(warnings, w);
                }
                run = run_phase(test, phase, files, opts, pseed, progress);
                pr.add_pass(&phase_result(test, phase, &run, check, None));
                hist.merge(&run.hist);
            }
            pr.latency = hist.summaries();
        }
        let after = Snapshot::take(devices);
        let trace = tracer.and_then(|t| match t.stop() {
            Ok(s) => Some(s),
            Err(e) => {
                let (phase, error) = (phase.name.clone(), e.to_string());
                warn(warnings, Warning::TraceLost { phase, error });
                None
            }
        });
        let memory = MemDelta { before: mem_before, after: MemSample::take(target.daemon) };
        progress.phase_end();
        pr.device = before.delta(&after).map(|mut d| {
            // A user's directory: its device is not fsbench's (Target::dir), others use it.
            d.shared = target.devices.is_empty();
            d
        });
        pr.memory = Some(memory);
        pr.roles = roles;
        if run.stonewalled {
            pr.ended_by = Some(STONEWALLED.into());
        }
        if let Some(t) = &trace {
            if t.events_lost > 0 || t.events_over_limit > 0 {
                let (events_lost, events_over_limit) = (t.events_lost, t.events_over_limit);
                let phase = phase.name.clone();
                warn(warnings, Warning::TraceIncomplete { phase, events_lost, events_over_limit });
            }
        }
        pr.trace = trace;
        if phase.timed {
            timed_hist.merge(&hist);
        }
        phases.push(pr);
        hists.push(hist);
        let local = if let Err(e) = released {
            if crate::sys::signals::interrupted() {
                PhaseOutcome::Interrupted
            } else {
                PhaseOutcome::Failed(format!("phase `{}`: {e}", phase.name))
            }
        } else if let Some(e) = run.synced.as_ref().and_then(|s| s.1.as_ref()) {
            PhaseOutcome::Failed(format!("phase `{}`: {e}", phase.name))
        } else if let Some(e) = role_error.filter(|_| !crate::sys::signals::interrupted()) {
            PhaseOutcome::Failed(format!("phase `{}`: {e}", phase.name))
        } else if let Some(e) = run.outs.iter().find_map(|o| o.error.as_ref()) {
            let note = files.state_note(&run.outs);
            PhaseOutcome::Failed(format!("phase `{}`: {e}{note}", phase.name))
        } else if run.outs.iter().any(|o| o.interrupted) {
            PhaseOutcome::Interrupted
        } else {
            PhaseOutcome::Ok
        };
        let start = window_start;
        let end = run.outs.iter().map(|o| o.end).max();
        let end = end.map(|e| run.synced.as_ref().map(|s| s.0.max(e)).unwrap_or(e));
        match hooks.after_phase(&point, start.zip(end), local) {
            PhaseOutcome::Ok => {}
            PhaseOutcome::Failed(e) => {
                outcome = RepOutcome::Failed(e);
                break;
            }
            PhaseOutcome::Interrupted => {
                outcome = RepOutcome::Interrupted;
                break;
            }
        }
    }
    // A file shared by several processes is checked once, by the one that removes it (every
    // process is past the last phase: the hooks agreed on its outcome).
    if opts.verify && matches!(outcome, RepOutcome::Ok) && removes_files(test, opts) {
        // After the last phase, outside every timing.
        match files {
            Files::Data { paths } => {
                match super::verify::check_files(paths, opts.seed, test.files.prefill) {
                    Ok(c) => warn(
                        warnings,
                        Warning::Verified {
                            repetition: rep + 1,
                            blocks_intact: c.intact,
                            blocks_unwritten: c.unwritten,
                            nanos: c.nanos,
                        },
                    ),
                    Err(reason) => outcome = RepOutcome::Failed(reason),
                }
            }
            Files::Set { .. } => {
                // Checked as they were read, inside the phases (their time is each phase's
                // `verify_nanos`, kept out of the op latencies).
                let bytes: u64 = phases.iter().map(|p| p.verified_bytes).sum();
                let nanos: u64 = phases.iter().map(|p| p.verify_nanos).sum();
                warn(
                    warnings,
                    Warning::VerifiedOnRead { repetition: rep + 1, bytes_checked: bytes, nanos },
                );
            }
        }
    }
    let complete = matches!(outcome, RepOutcome::Ok);
    let mut r = rep_result(test, phases, &timed_hist, complete);
    // After the last phase, outside every timing, while the files exist: zfs's compressratio.
    r.compress_ratio = complete.then(|| crate::observe::compress::ratio(&target.dir)).flatten();
    match files {
        Files::Data { paths } => {
            if complete && paths.iter().all(|p| p.exists()) {
                // After the last phase, outside every timing: FIEMAP with its sync flag.
                r.extents = Some(crate::observe::extents::summarize(paths));
            }
        }
        Files::Set { .. } => set_fileset_figure(&mut r),
    }
    RepRun { result: Some(r), outcome, hists }
}

/// Start tracing `devices`, or say once why not.
fn start_trace(
    devices: &[String],
    warnings: &mut Vec<Warning>,
) -> Option<crate::observe::trace::Tracer> {
    use crate::observe::trace::{TraceOptions, Tracer};
    if devices.is_empty() {
        let reason = "tracing unavailable: no block device under this directory (tmpfs, FUSE or a network filesystem)".into();
        warn(warnings, Warning::TraceUnavailable { reason });
        return None;
    }
    match Tracer::start(devices, TraceOptions::default()) {
        Ok(t) => Some(t),
        Err(e) => {
            let reason = format!("tracing unavailable ({e}); the run goes on without it");
            warn(warnings, Warning::TraceUnavailable { reason });
            None
        }
    }
}

/// Record a warning about a test, once (a repetition that meets the same problem again does not
/// repeat it). Every warning the engine produces goes through here.
fn warn(warnings: &mut Vec<Warning>, w: Warning) {
    note_once(warnings, w);
}

/// Make and verify the cache state a phase asks for, on the test's files (every file of a
/// data test; a sample of a fileset's, [`Files::residency_files`]).
///
/// - `cached`: read the files once, then require ≥ [`CACHED_MIN`] resident (`mincore`); another
///   process (drop_caches, memory pressure) can evict in between on a shared machine, so read
///   again, up to three times, and say so.
/// - `uncached`: a fileset's filesystem is synced first (its dirty files cannot be evicted),
///   then the target's eviction runs ([`super::CacheControl`]); require ≤ [`UNCACHED_MAX`].
/// - `any`: nothing is done; residency is still measured and recorded.
fn establish_cache(req: CacheReq, files: &Files<'_>, target: &Target<'_>) -> CacheCheck {
    if !files.all_exist() {
        return CacheCheck {
            required: req,
            resident_fraction: 0.0,
            method: CREATED.into(),
            met: req != CacheReq::Cached,
        };
    }
    let paths = files.residency_files();
    // Something else evicted pages between reading the files and checking them.
    let mut evicted = false;
    let (method, resident) = match req {
        CacheReq::Cached => {
            let mut tries = 0;
            loop {
                tries += 1;
                if let Some(e) = paths.iter().find_map(|p| cache::warm_file(p).err()) {
                    break (format!("read once failed: {e}"), residency(&paths));
                }
                let r = residency(&paths);
                if r >= CACHED_MIN || tries == 3 {
                    let how = if tries == 1 {
                        "read once".into()
                    } else {
                        format!("read {tries} times (evicted by something else in between)")
                    };
                    evicted = tries > 1;
                    break (how, r);
                }
            }
        }
        CacheReq::Uncached => {
            let evict: &[PathBuf] = match files {
                Files::Data { paths } => paths,
                Files::Set { root, .. } => {
                    let _ = rustix::fs::syncfs(root);
                    &[]
                }
            };
            let m = match target.cache.evict(evict) {
                Ok(m) => m,
                Err(e) => format!("eviction failed: {e}"),
            };
            (m, residency(&paths))
        }
        CacheReq::Any => ("none".into(), residency(&paths)),
        CacheReq::Direct => ("O_DIRECT: the page cache is bypassed".into(), residency(&paths)),
    };
    let met = cache_met(req, resident, evicted);
    let method = match files {
        Files::Data { .. } => method,
        Files::Set { .. } => format!("{method}; residency sampled over {} files", paths.len()),
    };
    CacheCheck { required: req, resident_fraction: resident, method, met }
}

/// Whether a cache precondition holds at `resident`; `evicted`: a `cached` precondition needed
/// a second read because something else evicted the files in between.
fn cache_met(req: CacheReq, resident: f64, evicted: bool) -> bool {
    match req {
        CacheReq::Any | CacheReq::Direct => true,
        // Once something else was seen evicting the files, it may go on during the phase:
        // anything short of full residency counts as not met.
        CacheReq::Cached => resident >= if evicted { CACHED_FULL } else { CACHED_MIN },
        CacheReq::Uncached => resident <= UNCACHED_MAX,
    }
}

/// Size-weighted resident fraction of several files.
fn residency(paths: &[PathBuf]) -> f64 {
    let mut total = 0u64;
    let mut res = 0.0;
    for p in paths {
        let len = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let f = cache::resident_fraction(p).unwrap_or(0.0);
        total += len;
        res += f * len as f64;
    }
    if total == 0 {
        0.0
    } else {
        res / total as f64
    }
}

/// Up to `max` existing files of a fileset, spread evenly over its slots.
fn sample_files(root: &Path, fs: &FileSet, states: &[SlotState], max: u64) -> Vec<PathBuf> {
    let t = states.len() as u64;
    let mut out = Vec::new();
    if states.iter().all(|s| s.live() == 0) {
        return out;
    }
    let map = Mapping::of(fs);
    let mut p = PathBuf0::default();
    let step = (fs.count / max).max(1);
    let mut slot = 0u64;
    while slot < fs.count && (out.len() as u64) < max {
        let (k, s) = (slot % t, slot / t);
        if let Some(st) = states.get(k as usize) {
            if s < st.len() && st.get(s) {
                map.file(&mut p, slot);
                out.push(root.join(String::from_utf8_lossy(p.bytes()).as_ref()));
            }
        }
        slot += step;
    }
    out
}

/// Fill the files of the roles that read what is there (`file.prefill`), untimed.
fn prefill_roles(
    test: &TestDef,
    paths: &[Vec<PathBuf>],
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
) -> Result<bool, String> {
    for (r, p) in test.roles.iter().zip(paths).filter(|(r, _)| r.prefill) {
        let ok = prefill(p, r.file_bytes, opts.compress_percent, seed ^ 0x201e, None, progress)
            .map_err(|e| format!("setup of role `{}`: {e}", r.name))?;
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Write each file sequentially with 1 MiB writes and fsync it. Returns Ok(false) if interrupted.
fn prefill(
    paths: &[PathBuf],
    size: u64,
    compress_percent: u8,
    seed: u64,
    verify: Option<u64>,
    progress: &dyn Progress,
) -> std::io::Result<bool> {
    use std::io::Write;
    const CHUNK: usize = 1 << 20;
    let mut done = 0u64;
    for (i, p) in paths.iter().enumerate() {
        let mut pool = match verify {
            Some(vseed) => super::buffer::WritePool::verified(CHUNK, 1, vseed, i as u64),
            None => super::buffer::WritePool::new(CHUNK, compress_percent, seed ^ 0xf111),
        };
        let mut f = std::fs::File::create(p)
            .map_err(|e| std::io::Error::new(e.kind(), format!("creating {}: {e}", p.display())))?;
        let mut left = size;
        while left > 0 {
            if crate::sys::signals::interrupted() {
                return Ok(false);
            }
            let n = left.min(CHUNK as u64) as usize;
            f.write_all(pool.window_at(0, size - left, n)).map_err(|e| {
                std::io::Error::new(e.kind(), format!("writing {}: {e}", p.display()))
            })?;
            left -= n as u64;
            done += n as u64;
            progress.phase_progress(done);
        }
        f.sync_all()
            .map_err(|e| std::io::Error::new(e.kind(), format!("fsync {}: {e}", p.display())))?;
    }
    Ok(true)
}

/// A clear error before starting when a set that is created whole cannot fit: in bytes
/// (mean file size and a block of slack per file) or in inodes.
fn check_space(test: &TestDef, fs: &FileSet, root: &OwnedFd) -> Result<(), String> {
    let fills = test.phases.iter().any(|p| matches!(p.amount, Amount::Fill(_)));
    let creates_all = fs.prefill
        || test.phases.iter().any(|p| {
            matches!(p.amount, Amount::Passes(_))
                && p.pattern
                    .entries()
                    .iter()
                    .flat_map(|e| e.choices.iter())
                    .any(|(_, o)| o.kind == OpKind::Create)
        });
    if fills || !creates_all {
        return Ok(());
    }
    let v = match rustix::fs::fstatvfs(root) {
        Ok(v) => v,
        Err(_) => return Ok(()), // no figures: ENOSPC, if it comes, says how far the run got
    };
    let need = test.footprint_bytes();
    let avail = v.f_bavail.saturating_mul(v.f_frsize);
    if need > avail {
        return Err(format!(
            "the fileset needs about {} ({} files of {} on average, plus their last blocks and directories) but the filesystem has {} available; nothing was created: use a smaller --scale, a smaller fileset, or a bigger filesystem",
            fmt_bytes(need),
            fs.count,
            fmt_bytes(fs.size.mean() as u64),
            fmt_bytes(avail)
        ));
    }
    let inodes = fs.count + fs.layout.dirs();
    // f_files == 0: the filesystem allocates inodes dynamically (btrfs) and reports none.
    if v.f_files > 0 && inodes > v.f_favail {
        return Err(format!(
            "the fileset needs {inodes} inodes (files and directories) but the filesystem has {} free; nothing was created: use a smaller --scale or a filesystem with more inodes",
            v.f_favail
        ));
    }
    Ok(())
}

/// The untimed phase that creates every file of a prefilled fileset.
fn prefill_phase() -> PhaseDef {
    PhaseDef {
        name: "prefill".into(),
        timed: false,
        cache: CacheReq::Any,
        open: Default::default(),
        amount: Amount::Passes(1),
        sync: SyncPolicy::default(),
        pattern: Pattern::Files(vec![MetaEntry {
            choices: vec![(
                1,
                MetaOp {
                    kind: OpKind::Create,
                    pick: Pick::Next,
                    fsync: false,
                    fsync_dir: false,
                    size: None,
                },
            )],
        }]),
    }
}

/// Bytes a data phase moves over all threads, when known (for progress).
fn expected_bytes(test: &TestDef, phase: &PhaseDef) -> Option<u64> {
    let t = test.threads as u64;
    match phase.amount {
        Amount::Bytes(b) => Some(b * t),
        Amount::Passes(p) => Some(test.footprint_bytes() * p as u64),
        Amount::Ops(k) => {
            let data: Vec<_> = phase.pattern.data().iter().filter(|o| o.kind.is_data()).collect();
            if data.is_empty() {
                return None;
            }
            let mean = data.iter().map(|o| o.size.mean()).sum::<f64>() / data.len() as f64;
            let share = data.len() as f64 / phase.pattern.len() as f64;
            Some((k as f64 * share * mean) as u64 * t)
        }
        Amount::Seconds(_) | Amount::Fill(_) | Amount::Share(_) => None,
    }
}

/// Ops a fileset phase does over all threads, when known (for progress).
fn expected_ops(test: &TestDef, fs: &FileSet, phase: &PhaseDef) -> Option<u64> {
    let t = test.threads as u64;
    match phase.amount {
        Amount::Ops(k) => Some(k * t),
        Amount::Share(f) => {
            let passes =
                expected_ops(test, fs, &PhaseDef { amount: Amount::Passes(1), ..phase.clone() })?;
            Some((passes as f64 * f).ceil() as u64)
        }
        Amount::Passes(p) => {
            let first = phase.pattern.entries().first()?.choices.first()?.1.kind;
            let space = match first {
                OpKind::Mkdir | OpKind::Rmdir => fs.layout.dirs(),
                OpKind::Readdir | OpKind::Fsyncdir => fs.layout.leaves() * t,
                _ => fs.count,
            };
            Some(p as u64 * space * phase.pattern.len() as u64)
        }
        _ => None,
    }
}

/// What a phase's workers did, merged, with a fill phase's series.
#[derive(Default)]
struct PhaseRun {
    outs: Vec<WorkerOutput>,
    hist: OpHistograms,
    series: Option<Vec<FillPoint>>,
    fill_range: Option<(f64, f64)>,
    fill_reached: bool,
    /// When the end-of-phase syncfs of a fileset phase returned, and its error.
    synced: Option<(Instant, Option<String>)>,
    /// The stonewall ended the phase.
    stonewalled: bool,
}

impl PhaseRun {
    /// Every worker finished its work: no error, no stop.
    fn clean(&self) -> bool {
        self.outs.iter().all(|o| o.error.is_none() && !o.interrupted)
            && self.synced.as_ref().is_none_or(|s| s.1.is_none())
            && !self.stonewalled
    }
}

/// Run one phase: one worker thread per test thread, started together behind a barrier,
/// monomorphised for the test's engine; report progress every 50 ms until they are done.
fn run_phase(
    test: &TestDef,
    phase: &PhaseDef,
    files: &mut Files<'_>,
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
) -> PhaseRun {
    match test.engine {
        EngineKind::Psync => run_phase_on::<Psync>(test, phase, files, opts, seed, progress),
        EngineKind::Null => run_phase_on::<Null>(test, phase, files, opts, seed, progress),
        EngineKind::IoUring => run_phase_on::<Uring>(test, phase, files, opts, seed, progress),
        EngineKind::Mmap => run_phase_on::<Mmap>(test, phase, files, opts, seed, progress),
    }
}

fn run_phase_on<E: IoEngine>(
    test: &TestDef,
    phase: &PhaseDef,
    files: &mut Files<'_>,
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
) -> PhaseRun {
    let n = test.threads as usize;
    let barrier = Barrier::new(n);
    let phase_stop = AtomicBool::new(false);
    let stop = StopFlags { phase: &phase_stop, signal: crate::sys::signals::flag() };
    let finished = AtomicUsize::new(0);
    // Per thread, the counter its progress is read from: bytes of a data phase, ops of a
    // fileset phase (whose counters also feed the fill monitor).
    let data_counters: Vec<PaddedCounter> = (0..n).map(|_| PaddedCounter::default()).collect();
    let all_threads = match &*files {
        Files::Set { states, .. } => states.len(),
        Files::Data { .. } => n,
    };
    let set_counters: Vec<FsCounters> = (0..all_threads).map(|_| FsCounters::default()).collect();
    let mut run = PhaseRun::default();
    let stonewall = if phase.timed { opts.stonewall } else { None };
    let mut fill_state: Option<(Option<f64>, Instant, FillShared)> = None;
    let (works, counters): (Vec<Work<'_>>, Vec<&std::sync::atomic::AtomicU64>) = match files {
        Files::Data { paths } => {
            let size = file_size(test, opts);
            // Threads of all processes sharing the file, and this process's first among them.
            let (first, all) = match opts.share {
                Some(s) if test.files.shared => (s.index as usize * n, s.count as usize * n),
                _ => (0, n),
            };
            let works = (0..n)
                .map(|k| {
                    let (path, region_start, region_len) = if test.files.shared {
                        let g = first + k;
                        let per = size / all as u64;
                        // The last thread takes the remainder.
                        let len = if g == all - 1 { size - per * g as u64 } else { per };
                        (&paths[0], per * g as u64, len)
                    } else {
                        (&paths[k], 0, size)
                    };
                    // A shared file is file 0; otherwise thread k's file is file k.
                    let file = if test.files.shared { 0 } else { k as u64 };
                    let verify = opts.verify.then_some((opts.seed, file));
                    Work::File(FileWork { path, file_size: size, region_start, region_len, verify })
                })
                .collect();
            (works, data_counters.iter().map(|c| &c.0).collect())
        }
        Files::Set { fs, root, root_path, states, first, absolute, .. } => {
            let (fs, first): (&FileSet, usize) = (fs, *first);
            let absolute: Option<&Path> = absolute.as_deref();
            let root: &OwnedFd = root;
            let root_path: &Path = root_path;
            let all = states.len();
            if let Amount::Fill(t) = phase.amount {
                let fill0 = fill_of(root.as_fd()).ok();
                let start = Instant::now();
                fill_state = Some((fill0, start, FillShared::new(fill0.unwrap_or(0.0), t, start)));
            }
            let fill = fill_state.as_ref().map(|f| &f.2);
            // Thread k of this process is thread `first + k` of all sharing the set (the
            // counters of the others stay zero).
            let works = states[first..first + n]
                .iter_mut()
                .enumerate()
                .map(|(k, slots)| {
                    Work::Slots(SlotWork {
                        fileset: fs,
                        root,
                        root_path,
                        absolute,
                        verify: opts.verify.then_some(opts.seed),
                        thread: (first + k) as u32,
                        threads: all as u32,
                        fill,
                        counters: &set_counters,
                        slots,
                    })
                })
                .collect();
            (works, set_counters[first..first + n].iter().map(|c| &c.ops).collect())
        }
    };
    let plans = works.into_iter().enumerate().map(|(k, work)| WorkerPlan {
        phase,
        seed: seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        compress_percent: opts.compress_percent,
        iodepth: test.iodepth,
        uring: test.uring,
        work,
    });
    // Each worker says when it is done, so the runner wakes at once instead of at its next
    // 50 ms tick: a phase repeated for --min-time may take 0.1 ms a pass, and sleeping out the
    // tick after each of hundreds of passes made a default compare minutes longer.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    run.outs = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .zip(counters.iter())
            .map(|(mut plan, ctr)| {
                let (barrier, stop, finished) = (&barrier, &stop, &finished);
                let done = done_tx.clone();
                s.spawn(move || {
                    let out = worker::run::<E>(&mut plan, barrier, stop, ctr);
                    finished.fetch_add(1, Ordering::Release);
                    let _ = done.send(());
                    out
                })
            })
            .collect();
        drop(done_tx);
        // The stonewall counts from here, just after the workers were spawned.
        let wall_at = stonewall.map(|d| Instant::now() + d);
        while finished.load(Ordering::Acquire) < n {
            let tick = Duration::from_millis(50);
            let nap = match wall_at {
                Some(t) if !run.stonewalled => {
                    t.saturating_duration_since(Instant::now()).min(tick)
                }
                _ => tick,
            };
            // A worker's end wakes this early; else the tick passes. Every sender gone with
            // fewer finished: a worker panicked (`join` below says so).
            let woke = done_rx.recv_timeout(nap.max(Duration::from_millis(1)));
            if woke == Err(std::sync::mpsc::RecvTimeoutError::Disconnected) {
                break;
            }
            if !run.stonewalled && wall_at.is_some_and(|t| Instant::now() >= t) {
                run.stonewalled = true;
                phase_stop.store(true, Ordering::Relaxed);
            }
            progress.phase_progress(counters.iter().map(|c| c.load(Ordering::Relaxed)).sum());
        }
        handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect()
    });
    if run.stonewalled && run.outs.iter().all(|o| o.error.is_none()) {
        // Stopped by the stonewall, not by a signal or a failing worker.
        let signalled = crate::sys::signals::interrupted();
        for o in &mut run.outs {
            o.interrupted = signalled;
        }
    }
    for o in &run.outs {
        run.hist.merge(&o.hist);
    }
    if let (Files::Set { root, .. }, Some((fill0, start, f))) = (&*files, &fill_state) {
        let end = fill_of(root.as_fd()).ok();
        let (b, c) = fileset::totals(&set_counters);
        let last = (end.unwrap_or(0.0), start.elapsed().as_nanos() as u64, b, c);
        run.series = Some(fill_series(fill0.unwrap_or(0.0), &f.marks(), last));
        run.fill_range = fill0.zip(end);
        run.fill_reached = f.reached.load(Ordering::Relaxed);
    }
    // A fileset phase's syncfs runs once, after the last worker, inside the phase's timing
    // ("sync included").
    let clean = run.outs.iter().all(|o| o.error.is_none() && !o.interrupted);
    if let Files::Set { root, .. } = files {
        if clean && phase.sync.at_end == Some(SyncCall::Syncfs) {
            let t0 = Instant::now();
            let r = rustix::fs::syncfs(&*root);
            let end = Instant::now();
            run.hist.record(OpKind::Syncfs, (end - t0).as_nanos() as u64);
            let err = r
                .err()
                .map(|e| format!("syncfs at the end of the phase: {}", std::io::Error::from(e)));
            run.synced = Some((end, err));
        }
    }
    run
}

/// Whether this process removes the test's files: a file shared by several processes is
/// removed by the first only (the others may still be reading its extent map).
fn removes_files(test: &TestDef, opts: &EngineOptions) -> bool {
    !(test.files.shared && opts.share.is_some_and(|s| s.index > 0))
}

/// Size of a test's file: a shared file used by several processes is as many times larger.
fn file_size(test: &TestDef, opts: &EngineOptions) -> u64 {
    match opts.share {
        Some(s) if test.files.shared => test.files.size_bytes() * s.count as u64,
        _ => test.files.size_bytes(),
    }
}

/// `ended_by` of a timed phase that the stonewall stopped.
pub const STONEWALLED: &str = "stonewall";

/// Turn the marks a fill phase recorded (cumulative: fill, nanos, bytes, files) into steps,
/// with a last, partial step to where the phase ended when that moved the fill by at least 1%
/// (not the few files written while the workers saw the stop).
fn fill_series(
    fill0: f64,
    marks: &[(f64, u64, u64, u64)],
    last: (f64, u64, u64, u64),
) -> Vec<FillPoint> {
    let mut out = Vec::with_capacity(marks.len() + 1);
    let mut prev = (fill0, 0u64, 0u64, 0u64);
    let mut step = |p: (f64, u64, u64, u64), prev: &mut (f64, u64, u64, u64)| {
        let dt = (p.1.saturating_sub(prev.1) as f64 / 1e9).max(1e-9);
        let (db, dc) = (p.2.saturating_sub(prev.2), p.3.saturating_sub(prev.3));
        out.push(FillPoint {
            fill: p.0,
            elapsed_nanos: p.1,
            bytes_written: db,
            files_created: dc,
            mib_per_s: db as f64 / (1u64 << 20) as f64 / dt,
            files_per_s: dc as f64 / dt,
        });
        *prev = p;
    };
    for m in marks {
        step(*m, &mut prev);
    }
    if last.0 - prev.0 >= 0.01 && (last.2 > prev.2 || last.3 > prev.3) {
        step(last, &mut prev);
    }
    out
}

fn phase_result(
    test: &TestDef,
    phase: &PhaseDef,
    run: &PhaseRun,
    cache: CacheCheck,
    device: Option<DeviceDelta>,
) -> PhaseResult {
    let outs = &run.outs;
    let start = outs.iter().map(|o| o.start).min().unwrap_or_else(Instant::now);
    let end = outs.iter().map(|o| o.end).max().unwrap_or(start);
    let end = run.synced.as_ref().map(|s| s.0.max(end)).unwrap_or(end);
    let ended_by = match phase.amount {
        Amount::Fill(_) if outs.iter().any(|o| o.enospc) => {
            Some("filesystem full (ENOSPC)".to_string())
        }
        Amount::Fill(_) if run.fill_reached => Some("fill target reached".to_string()),
        Amount::Fill(_) if outs.iter().all(|o| !o.interrupted && o.error.is_none()) => Some(
            "no free file slot: every slot holds a file; raise the fileset's count to fill further"
                .to_string(),
        ),
        _ => None,
    };
    PhaseResult {
        name: phase.name.clone(),
        timed: phase.timed,
        threads: test.threads,
        wall_nanos: (end - start).as_nanos() as u64,
        bytes_read: outs.iter().map(|o| o.bytes_read).sum(),
        bytes_written: outs.iter().map(|o| o.bytes_written).sum(),
        data_ops: outs.iter().map(|o| o.data_ops).sum(),
        cpu_user_nanos: outs.iter().map(|o| o.cpu.user_nanos).sum(),
        cpu_sys_nanos: outs.iter().map(|o| o.cpu.sys_nanos).sum(),
        latency: run.hist.summaries(),
        cache,
        engine: test.engine.name().to_string(),
        iodepth: test.iodepth,
        direct: phase.open.direct,
        sync_writes: phase.open.dsync || phase.open.sync,
        uring: (test.engine == crate::model::job::EngineKind::IoUring).then_some(test.uring),
        device,
        verify_nanos: outs.iter().map(|o| o.verify_nanos).sum(),
        verified_bytes: outs.iter().map(|o| o.verified_bytes).sum(),
        sync_nanos: outs.iter().map(|o| o.sync_nanos).sum::<u64>()
            + run.hist.0[OpKind::Syncfs.index()].max() * run.synced.is_some() as u64,
        memory: None,
        trace: None,
        file_ops: outs.iter().map(|o| o.file_ops).sum(),
        skipped_ops: outs.iter().map(|o| o.skipped_ops).sum(),
        files_created: outs.iter().map(|o| o.creates).sum(),
        fill_series: run.series.clone(),
        fill_range: run.fill_range,
        ended_by,
        passes: 1,
        roles: Vec::new(),
    }
}

fn rep_result(
    test: &TestDef,
    phases: Vec<PhaseResult>,
    timed_hist: &OpHistograms,
    complete: bool,
) -> RepResult {
    let timed: Vec<&PhaseResult> = phases.iter().filter(|p| p.timed).collect();
    let wall_nanos: u64 = timed.iter().map(|p| p.wall_nanos).sum();
    let bytes: u64 = timed.iter().map(|p| p.bytes_read + p.bytes_written).sum();
    let data_ops: u64 = timed.iter().map(|p| p.data_ops).sum();
    let cpu_user_nanos: u64 = timed.iter().map(|p| p.cpu_user_nanos).sum();
    let cpu_sys_nanos: u64 = timed.iter().map(|p| p.cpu_sys_nanos).sum();
    let secs = wall_nanos as f64 / 1e9;
    let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    RepResult {
        complete,
        wall_nanos,
        bytes,
        data_ops,
        mib_per_s: per_sec(bytes as f64 / (1u64 << 20) as f64),
        ops_per_s: per_sec(data_ops as f64),
        cpu_user_nanos,
        cpu_sys_nanos,
        cpu_pct_per_thread: if wall_nanos > 0 {
            100.0 * (cpu_user_nanos + cpu_sys_nanos) as f64
                / (wall_nanos as f64 * test.threads as f64)
        } else {
            0.0
        },
        latency: timed_hist.summaries(),
        phases,
        extents: None,
        file_ops: 0,
        cluster: None,
        compress_ratio: None,
        figure: Some(crate::model::result::Figure::of_test(test)),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cache_evicted_by_something_else_must_be_fully_resident() {
        // Read once, 96% resident: met (a file a little larger than what stays cached).
        assert!(cache_met(CacheReq::Cached, 0.9565, false));
        // Read twice because something else evicted it, 96% resident at the end: not met.
        assert!(!cache_met(CacheReq::Cached, 0.9565, true));
        assert!(cache_met(CacheReq::Cached, 1.0, true));
        assert!(!cache_met(CacheReq::Cached, 0.9, false));
        assert!(cache_met(CacheReq::Uncached, 0.01, false));
        assert!(!cache_met(CacheReq::Uncached, 0.5, false));
    }

    use super::*;

    #[test]
    fn fill_series_marks_each_tenth() {
        let t0 = Instant::now();
        let f = FillShared::new(0.23, 0.6, t0);
        let c: Vec<FsCounters> = (0..2).map(|_| FsCounters::default()).collect();
        c[0].bytes_written.store(10 << 20, Ordering::Relaxed);
        f.observe(0.25, &c);
        assert!(f.marks().is_empty());
        c[1].bytes_written.store(10 << 20, Ordering::Relaxed);
        f.observe(0.31, &c);
        assert_eq!(f.marks().len(), 1);
        assert_eq!(f.marks()[0].2, 20 << 20, "totals over all threads");
        f.observe(0.52, &c);
        assert_eq!(f.marks().iter().map(|m| m.0).collect::<Vec<_>>(), [0.3, 0.4, 0.5]);
        assert!(!f.reached.load(Ordering::Relaxed));
        f.observe(0.61, &c);
        assert!(f.reached.load(Ordering::Relaxed));
        f.observe(0.75, &c);
        assert_eq!(f.marks().len(), 4, "no mark beyond the target");
        let marks = [(0.3, 1_000_000_000, 20 << 20, 20), (0.4, 2_000_000_000, 30 << 20, 30)];
        let s = fill_series(0.23, &marks, (0.45, 3_000_000_000, 40 << 20, 40));
        assert_eq!(s.len(), 3);
        assert!((s[0].mib_per_s - 20.0).abs() < 1e-9 && (s[1].mib_per_s - 10.0).abs() < 1e-9);
        assert_eq!(s.iter().map(|p| p.bytes_written).sum::<u64>(), 40 << 20);
        let s = fill_series(0.23, &marks, (0.401, 3_000_000_000, 41 << 20, 41));
        assert_eq!(s.len(), 2, "no partial step below 1%");
    }
}
