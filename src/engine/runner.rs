//! Orchestration: for each test and repetition, make the files, establish and verify each
//! phase's cache precondition, run the phase's workers, and turn what they measured into results.

use super::hooks::PhaseOutcome;
use super::ioengine::Psync;
use super::target::Target;
use super::worker::{self, PaddedCounter, StopFlags, WorkerOutput, WorkerPlan};
use super::workspace::Workspace;
use crate::observe::blockstat::{self, Snapshot};
use crate::observe::memory::{MemDelta, MemSample};
use crate::observe::mountinfo;
use crate::result::*;
use crate::stats::latency::OpHistograms;
use crate::stats::summary;
use crate::sys::cache;
use crate::workload::{Amount, CacheReq, PhaseDef, Suite, TestDef};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Called around each phase (a multi-client run's barrier and clock); no-ops by default.
    pub hooks: super::hooks::Hooks,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            repeat: 1,
            compress_percent: 0,
            seed: 0x00f5_be4c,
            trace: false,
            hooks: Default::default(),
        }
    }
}

/// Resident share at or above which a file counts as cached.
pub const CACHED_MIN: f64 = 0.95;
/// Resident share at or below which a file counts as uncached.
pub const UNCACHED_MAX: f64 = 0.02;
/// A timed total shorter than this gets a warning: scheduler noise is on the order of ms.
pub const SHORT_PHASE: Duration = Duration::from_millis(200);
/// Repetitions varying more than this (coefficient of variation) get a warning.
pub const NOISY_CV: f64 = 0.10;

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

/// Run a whole suite on a target. `on_test` is called after each test (to export or store
/// results as they come, so a later failure loses nothing).
pub fn run_suite(
    suite: &Suite,
    target: &Target<'_>,
    opts: &EngineOptions,
    progress: &dyn Progress,
    scale: &str,
    on_test: &mut dyn FnMut(&TestResult),
) -> std::io::Result<RunReport> {
    let ws = Workspace::create(&target.dir)?;
    let started_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut report = RunReport {
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix_s,
        host: crate::observe::host::HostInfo::current(),
        target: target_info(target),
        suite: suite.name.clone(),
        scale: scale.to_string(),
        repeat: opts.repeat,
        tests: Vec::new(),
        interrupted: false,
        cluster: None,
    };
    let devices = report.target.devices.clone();
    for (idx, test) in suite.tests.iter().enumerate() {
        if crate::sys::signals::interrupted() {
            report.interrupted = true;
            report.tests.push(skipped(test, "run interrupted before this test"));
            continue;
        }
        let reps = 0..opts.repeat.max(1);
        let r = run_test(test, target, &devices, ws.path(), opts, idx as u64, reps, progress);
        if r.status == TestStatus::Interrupted {
            report.interrupted = true;
        }
        on_test(&r);
        report.tests.push(r);
    }
    drop(ws);
    Ok(report)
}

fn skipped(test: &TestDef, reason: &str) -> TestResult {
    TestResult {
        id: test.id.clone(),
        name: test.name.clone(),
        description: test.description.clone(),
        threads: test.threads,
        status: TestStatus::Skipped { reason: reason.into() },
        reps: Vec::new(),
        complete_reps: 0,
        summary: None,
        warnings: Vec::new(),
    }
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
        fs_type: m.fs_type,
        mount_source: m.source,
        mount_options: m.options,
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
) -> TestResult {
    let mut result = skipped(test, "");
    result.status = TestStatus::Ok;
    let share = opts.hooks.0.share();
    let paths: Vec<PathBuf> = if test.fileset.is_some() {
        Vec::new()
    } else if test.file.shared {
        vec![dir.join(format!("t{}.dat", test.id))]
    } else if let Some((i, _)) = share {
        (0..test.threads).map(|k| dir.join(format!("t{}.r{i}.{k}.dat", test.id))).collect()
    } else {
        (0..test.threads).map(|k| dir.join(format!("t{}.{k}.dat", test.id))).collect()
    };
    let mut complete = 0usize;
    for rep in reps {
        let seed = opts.seed ^ (test_index << 32) ^ ((rep as u64) << 16);
        let warnings = &mut result.warnings;
        let (rep_result, outcome) = match &test.fileset {
            Some(fs) => super::fileset_runner::run_rep(
                test, fs, target, devices, dir, opts, seed, rep, progress, warnings,
            ),
            None => run_rep(test, target, devices, &paths, opts, seed, rep, progress, warnings),
        };
        if removes_files(test, opts) {
            for p in &paths {
                let _ = std::fs::remove_file(p);
            }
        }
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
    finalize(&mut result);
    result
}

/// Add `more` (later repetitions of the same test) to `acc` and recompute its statistics.
pub fn merge(acc: &mut TestResult, more: TestResult) {
    if acc.status == TestStatus::Ok {
        acc.status = more.status;
    }
    acc.complete_reps += more.complete_reps;
    acc.reps.extend(more.reps);
    for w in more.warnings {
        if !acc.warnings.contains(&w) {
            acc.warnings.push(w);
        }
    }
    finalize(acc);
}

/// Recompute the summary (over completed repetitions) and the statistical warnings.
pub fn finalize(result: &mut TestResult) {
    result.warnings.retain(|w| !w.starts_with(NOISE_WARNING) && !w.starts_with(SHORT_WARNING));
    let done: Vec<&RepResult> = result.reps.iter().filter(|r| r.complete).collect();
    let mibs: Vec<f64> = done.iter().map(|r| r.mib_per_s).collect();
    let opss: Vec<f64> = done.iter().map(|r| r.ops_per_s).collect();
    result.summary = summary::summarize(&mibs, &opss);
    if let Some(s) = &result.summary {
        if s.n >= 2 && s.cv > NOISY_CV {
            result.warnings.push(format!(
                "{NOISE_WARNING} {:.0}% (coefficient of variation); treat differences smaller than that as noise or use more --repeat",
                s.cv * 100.0
            ));
        }
    }
    if let Some(r) = done.first() {
        if Duration::from_nanos(r.wall_nanos) < SHORT_PHASE {
            result.warnings.push(format!(
                "{SHORT_WARNING} {:.1} ms; below {} ms start-up and scheduler noise dominate the figure: use a larger --scale",
                r.wall_nanos as f64 / 1e6,
                SHORT_PHASE.as_millis()
            ));
        }
    }
}

/// Start of the "repetitions vary" warning.
pub const NOISE_WARNING: &str = "repetitions vary by";
/// Start of the "timed phase too short" warning.
pub const SHORT_WARNING: &str = "timed phase lasted only";

#[allow(clippy::too_many_arguments)]
fn run_rep(
    test: &TestDef,
    target: &Target<'_>,
    devices: &[String],
    paths: &[PathBuf],
    opts: &EngineOptions,
    seed: u64,
    rep: u32,
    progress: &dyn Progress,
    warnings: &mut Vec<String>,
) -> (Option<RepResult>, RepOutcome) {
    if removes_files(test, opts) {
        for p in paths {
            let _ = std::fs::remove_file(p);
        }
    }
    let hooks = &*opts.hooks.0;
    if test.file.prefill {
        progress.phase_start(test, rep, "setup", Some(test.footprint_bytes()));
        let local = match hooks.before_phase(test, rep, "setup") {
            Err(e) => PhaseOutcome::Failed(format!("setup: {e}")),
            // A file shared by several processes is prefilled once, whole, by the first.
            Ok(()) if test.file.shared && hooks.share().is_some_and(|(i, _)| i > 0) => {
                PhaseOutcome::Ok
            }
            Ok(()) => {
                let size = file_size(test, opts);
                match prefill(paths, size, opts.compress_percent, seed, progress) {
                    Ok(true) => PhaseOutcome::Ok,
                    Ok(false) => PhaseOutcome::Interrupted,
                    Err(e) => PhaseOutcome::Failed(format!("setup: {e}")),
                }
            }
        };
        progress.phase_end();
        match hooks.after_phase(test, rep, "setup", None, local) {
            PhaseOutcome::Ok => {}
            PhaseOutcome::Interrupted => return (None, RepOutcome::Interrupted),
            PhaseOutcome::Failed(e) => return (None, RepOutcome::Failed(e)),
        }
    }
    let mut phases = Vec::new();
    let mut timed_hist = OpHistograms::default();
    let mut outcome = RepOutcome::Ok;
    for phase in &test.phases {
        let check = establish_cache(phase.cache, paths, target);
        if !check.met {
            let msg = format!(
                "phase `{}`: {} required but {:.0}% of the file was resident after {}; this is not {} figure",
                phase.name,
                cache_word(phase.cache),
                check.resident_fraction * 100.0,
                check.method,
                match phase.cache {
                    CacheReq::Uncached => "an uncached",
                    _ => "a cached",
                },
            );
            if !warnings.contains(&msg) {
                warnings.push(msg);
            }
        }
        let expected = expected_bytes(test, phase);
        progress.phase_start(test, rep, &phase.name, expected);
        let tracer = if opts.trace && phase.timed { start_trace(devices, warnings) } else { None };
        let mem_before = MemSample::take(target.daemon);
        let before = Snapshot::take(devices);
        let released = hooks.before_phase(test, rep, &phase.name);
        let (outs, hist, stonewalled) = match &released {
            Ok(()) => run_phase(test, phase, paths, opts, seed, progress),
            Err(_) => (Vec::new(), OpHistograms::default(), false),
        };
        let after = Snapshot::take(devices);
        let trace = tracer.and_then(|t| match t.stop() {
            Ok(s) => Some(s),
            Err(e) => {
                note_once(warnings, format!("block trace of phase `{}` lost: {e}", phase.name));
                None
            }
        });
        let memory = MemDelta { before: mem_before, after: MemSample::take(target.daemon) };
        progress.phase_end();
        let mut pr = phase_result(test, phase, &outs, &hist, check, before.delta(&after));
        pr.memory = Some(memory);
        if stonewalled {
            pr.ended_by = Some(STONEWALLED.into());
        }
        if let Some(t) = &trace {
            if t.events_lost > 0 || t.events_over_limit > 0 {
                note_once(
                    warnings,
                    format!(
                        "block trace of phase `{}` is incomplete: {} events lost, {} over the in-memory limit; its counts are lower bounds",
                        phase.name, t.events_lost, t.events_over_limit
                    ),
                );
            }
        }
        pr.trace = trace;
        if phase.timed {
            timed_hist.merge(&hist);
        }
        phases.push(pr);
        let local = if let Err(e) = released {
            if crate::sys::signals::interrupted() {
                PhaseOutcome::Interrupted
            } else {
                PhaseOutcome::Failed(format!("phase `{}`: {e}", phase.name))
            }
        } else if let Some(e) = outs.iter().find_map(|o| o.error.as_ref()) {
            PhaseOutcome::Failed(format!("phase `{}`: {e}", phase.name))
        } else if outs.iter().any(|o| o.interrupted) {
            PhaseOutcome::Interrupted
        } else {
            PhaseOutcome::Ok
        };
        let window = outs.iter().map(|o| o.start).min().zip(outs.iter().map(|o| o.end).max());
        match hooks.after_phase(test, rep, &phase.name, window, local) {
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
    let complete = matches!(outcome, RepOutcome::Ok);
    let mut r = rep_result(test, phases, &timed_hist, complete);
    if complete && paths.iter().all(|p| p.exists()) {
        // After the last phase, outside every timing: FIEMAP with its sync flag.
        r.extents = Some(crate::observe::extents::summarize(paths));
    }
    (Some(r), outcome)
}

/// Start tracing `devices`, or say once why not.
pub(super) fn start_trace(
    devices: &[String],
    warnings: &mut Vec<String>,
) -> Option<crate::observe::trace::Tracer> {
    use crate::observe::trace::{TraceOptions, Tracer};
    if devices.is_empty() {
        note_once(warnings, "tracing unavailable: no block device under this directory (tmpfs, FUSE or a network filesystem)".into());
        return None;
    }
    match Tracer::start(devices, TraceOptions::default()) {
        Ok(t) => Some(t),
        Err(e) => {
            note_once(warnings, format!("tracing unavailable ({e}); the run goes on without it"));
            None
        }
    }
}

pub(super) fn note_once(warnings: &mut Vec<String>, msg: String) {
    if !warnings.contains(&msg) {
        warnings.push(msg);
    }
}

pub(super) fn cache_word(c: CacheReq) -> &'static str {
    match c {
        CacheReq::Cached => "cached",
        CacheReq::Uncached => "uncached",
        CacheReq::Any => "any",
    }
}

/// Make and verify the cache state a phase asks for.
fn establish_cache(req: CacheReq, paths: &[PathBuf], target: &Target<'_>) -> CacheCheck {
    let exists = paths.iter().all(|p| p.exists());
    if !exists {
        return CacheCheck {
            required: req,
            resident_fraction: 0.0,
            method: "file created by this phase".into(),
            met: req != CacheReq::Cached,
        };
    }
    let (method, resident) = match req {
        CacheReq::Cached => {
            // Another process (drop_caches, memory pressure) can evict between the read and the
            // check on a shared machine: read again, up to three times, and say so.
            let mut tries = 0;
            loop {
                tries += 1;
                if let Some(e) = paths.iter().find_map(|p| cache::warm_file(p).err()) {
                    break (format!("read once failed: {e}"), residency(paths));
                }
                let r = residency(paths);
                if r >= CACHED_MIN || tries == 3 {
                    let how = if tries == 1 {
                        "read once".into()
                    } else {
                        format!("read {tries} times (evicted by something else in between)")
                    };
                    break (how, r);
                }
            }
        }
        CacheReq::Uncached => {
            let m = match target.cache.evict(paths) {
                Ok(m) => m,
                Err(e) => format!("eviction failed: {e}"),
            };
            (m, residency(paths))
        }
        CacheReq::Any => ("none".into(), residency(paths)),
    };
    let met = match req {
        CacheReq::Any => true,
        CacheReq::Cached => resident >= CACHED_MIN,
        CacheReq::Uncached => resident <= UNCACHED_MAX,
    };
    CacheCheck { required: req, resident_fraction: resident, method, met }
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

/// Write each file sequentially with 1 MiB writes and fsync it. Returns Ok(false) if interrupted.
fn prefill(
    paths: &[PathBuf],
    size: u64,
    compress_percent: u8,
    seed: u64,
    progress: &dyn Progress,
) -> std::io::Result<bool> {
    use std::io::Write;
    const CHUNK: usize = 1 << 20;
    let mut pool = super::buffer::WritePool::new(CHUNK, compress_percent, seed ^ 0xf111);
    let mut done = 0u64;
    for p in paths {
        let mut f = std::fs::File::create(p)
            .map_err(|e| std::io::Error::new(e.kind(), format!("creating {}: {e}", p.display())))?;
        let mut left = size;
        while left > 0 {
            if crate::sys::signals::interrupted() {
                return Ok(false);
            }
            let n = left.min(CHUNK as u64) as usize;
            f.write_all(pool.window(n)).map_err(|e| {
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

fn expected_bytes(test: &TestDef, phase: &PhaseDef) -> Option<u64> {
    let t = test.threads as u64;
    match phase.amount {
        Amount::Bytes(b) => Some(b * t),
        Amount::Passes(p) => Some(test.footprint_bytes() * p as u64),
        Amount::Ops(k) => {
            let data: Vec<_> = phase.pattern.iter().filter(|o| o.kind.is_data()).collect();
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

/// Run one phase's workers (one thread each) and wait for them, reporting progress.
fn run_phase(
    test: &TestDef,
    phase: &PhaseDef,
    paths: &[PathBuf],
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
) -> (Vec<WorkerOutput>, OpHistograms, bool) {
    let n = test.threads as usize;
    let stonewall = if phase.timed { opts.hooks.0.stonewall() } else { None };
    let mut stonewalled = false;
    let barrier = Barrier::new(n);
    let phase_stop = AtomicBool::new(false);
    let stop = StopFlags { phase: &phase_stop, signal: crate::sys::signals::flag() };
    let counters: Vec<PaddedCounter> = (0..n).map(|_| PaddedCounter::default()).collect();
    let size = file_size(test, opts);
    // Threads of all processes sharing the file, and this process's first one among them.
    let (first, all) = match opts.hooks.0.share() {
        Some((i, c)) if test.file.shared => (i as usize * n, c as usize * n),
        _ => (0, n),
    };
    let plans: Vec<WorkerPlan<'_>> = (0..n)
        .map(|k| {
            let (path, region_start, region_len) = if test.file.shared {
                let g = first + k;
                let per = size / all as u64;
                // The last thread takes the remainder.
                let len = if g == all - 1 { size - per * g as u64 } else { per };
                (&paths[0], per * g as u64, len)
            } else {
                (&paths[k], 0, size)
            };
            WorkerPlan {
                phase,
                path,
                file_size: size,
                region_start,
                region_len,
                seed: seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                compress_percent: opts.compress_percent,
            }
        })
        .collect();
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let outs: Vec<WorkerOutput> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .zip(counters.iter())
            .map(|(plan, ctr)| {
                let barrier = &barrier;
                let stop = &stop;
                let finished = &finished;
                s.spawn(move || {
                    let out = worker::run(&mut Psync, plan, barrier, stop, &ctr.0);
                    finished.fetch_add(1, Ordering::Release);
                    out
                })
            })
            .collect();
        // The stonewall counts from here, just after the workers were spawned (they wait at
        // the start barrier only for each other).
        let wall_at = stonewall.map(|d| Instant::now() + d);
        while finished.load(Ordering::Acquire) < n {
            let tick = Duration::from_millis(50);
            let nap = match wall_at {
                Some(t) => t.saturating_duration_since(Instant::now()).min(tick),
                None => tick,
            };
            std::thread::sleep(nap.max(Duration::from_millis(1)));
            if wall_at.is_some_and(|t| Instant::now() >= t) && !stonewalled {
                stonewalled = true;
                phase_stop.store(true, Ordering::Relaxed);
            }
            progress.phase_progress(counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum());
        }
        handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect()
    });
    let mut outs = outs;
    if stonewalled && outs.iter().all(|o| o.error.is_none()) {
        // Stopped by the stonewall, not by a signal or a failing worker.
        let signalled = crate::sys::signals::interrupted();
        for o in &mut outs {
            o.interrupted = signalled;
        }
    }
    let mut hist = OpHistograms::default();
    for o in &outs {
        hist.merge(&o.hist);
    }
    (outs, hist, stonewalled)
}

/// Whether this process removes the test's files: a file shared by several processes is
/// removed by the first only (the others may still be reading its extent map).
fn removes_files(test: &TestDef, opts: &EngineOptions) -> bool {
    !(test.file.shared && opts.hooks.0.share().is_some_and(|(i, _)| i > 0))
}

/// Size of a test's file: a shared file used by several processes is as many times larger.
fn file_size(test: &TestDef, opts: &EngineOptions) -> u64 {
    match opts.hooks.0.share() {
        Some((_, c)) if test.file.shared => test.file.size_bytes * c as u64,
        _ => test.file.size_bytes,
    }
}

/// `ended_by` of a timed phase that the stonewall stopped.
pub const STONEWALLED: &str = "stonewall";

fn phase_result(
    test: &TestDef,
    phase: &PhaseDef,
    outs: &[WorkerOutput],
    hist: &OpHistograms,
    cache: CacheCheck,
    device: Option<DeviceDelta>,
) -> PhaseResult {
    let start = outs.iter().map(|o| o.start).min().unwrap_or_else(Instant::now);
    let end = outs.iter().map(|o| o.end).max().unwrap_or(start);
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
        latency: hist.summaries(),
        cache,
        device,
        sync_nanos: outs.iter().map(|o| o.sync_nanos).sum(),
        memory: None,
        trace: None,
        file_ops: 0,
        skipped_ops: 0,
        files_created: 0,
        fill_series: None,
        fill_range: None,
        ended_by: None,
    }
}

pub(super) fn rep_result(
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
    }
}
