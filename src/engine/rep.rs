//! One repetition of a test on its files: the untimed set-up, then each phase in order (its
//! cache precondition, the observation bracket, its workers beside the test's roles, `--min-time`
//! passes on the same files), each between the driver's hooks, so that the processes of a
//! multi-client run start it together and agree on how it ended; finally `--verify` and the
//! repetition's figures.

use super::cache;
use super::files::{Pass, SetUp, TestFiles};
use super::hooks::{Hooks, PhaseOutcome, PhasePoint};
use super::min_time::{self, Passes};
use super::phase::{self, PhaseRun};
use super::probe::Probe;
use super::results::{self, phase_result, rep_result, STONEWALLED, TIME_CAP};
use super::runner::{EngineOptions, Progress};
use super::target::Target;
use crate::model::failure::EngineError;
use crate::model::job::{PhaseDef, TestDef};
use crate::model::latency::OpHistograms;
use crate::model::result::{note_once, CacheCheck, PhaseResult, RepResult, Warning};
use crate::model::time::Untimed;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Where a repetition runs: the target, its devices, the options, the roles' files.
pub struct RepEnv<'a> {
    /// The target.
    pub target: &'a Target<'a>,
    /// Its block devices (for counters and traces).
    pub devices: &'a [String],
    /// The run's options.
    pub opts: &'a EngineOptions,
    /// Each role's files.
    pub roles: &'a [Vec<PathBuf>],
}

/// One repetition as [`run`] ran it: its figures, how it ended, and each phase's latency
/// histograms (kept so that further runs of the test can be added exactly).
pub struct RepRun<'t> {
    /// The test.
    pub test: &'t TestDef,
    /// Its figures; `None` when it failed before its first phase.
    pub result: Option<RepResult>,
    /// How it ended.
    pub outcome: PhaseOutcome,
    hists: Vec<OpHistograms>,
}

impl<'t> RepRun<'t> {
    /// A repetition that ended before its first phase.
    pub fn ended(test: &'t TestDef, outcome: PhaseOutcome) -> RepRun<'t> {
        RepRun { test, result: None, outcome, hists: Vec::new() }
    }
}

/// A fileset test's `--min-time` pass is the whole repetition: its phases' figures and
/// latencies are added up; the repetition ends as the later run did.
impl Passes for RepRun<'_> {
    fn timed_wall(&self) -> Duration {
        let phases = self.result.as_ref().map_or(&[][..], |r| &r.phases);
        Duration::from_nanos(phases.iter().filter(|p| p.timed).map(|p| p.wall_nanos).sum())
    }

    fn passes(&self) -> u32 {
        let first = self.result.as_ref().and_then(|r| r.phases.first());
        first.map_or(min_time::MAX_PASSES, |p| p.passes())
    }

    fn went_well(&self) -> bool {
        self.result.is_some() && self.outcome == PhaseOutcome::Ok
    }

    fn add(&mut self, more: Self) {
        let (Some(r), Some(m)) = (self.result.as_mut(), more.result.as_ref()) else {
            self.outcome = more.outcome;
            return;
        };
        for ((p, q), (h, k)) in
            r.phases.iter_mut().zip(&m.phases).zip(self.hists.iter_mut().zip(&more.hists))
        {
            results::add_pass(p, h, q, k);
        }
        let mut timed = OpHistograms::default();
        for (p, h) in r.phases.iter().zip(&self.hists) {
            if p.timed {
                timed.merge(h);
            }
        }
        let complete = r.complete && m.complete && more.outcome == PhaseOutcome::Ok;
        let mut merged = rep_result(self.test, std::mem::take(&mut r.phases), &timed, complete);
        merged.extents = r.extents.take();
        // Every run's untimed work, added up.
        let mut untimed = r.untimed.unwrap_or_default();
        untimed.add(&m.untimed.unwrap_or_default());
        merged.untimed = Some(untimed);
        results::set_fileset_figure(&mut merged);
        *r = merged;
        self.outcome = more.outcome;
    }
}

/// A data test's `--min-time` pass is the phase again, on the same files: the phase's result,
/// its latencies, and the last pass's run (how it ended, when).
struct PhasePass {
    pr: PhaseResult,
    hist: OpHistograms,
    run: PhaseRun,
}

impl PhasePass {
    /// The pass `run` of `phase`, after the cache precondition `check`.
    fn of(test: &TestDef, phase: &PhaseDef, mut run: PhaseRun, check: CacheCheck) -> PhasePass {
        let mut pr = phase_result(test, phase, &run, check);
        pr.op_log = results::take_op_log(&mut run.outs);
        let hist = std::mem::take(&mut run.hist);
        PhasePass { pr, hist, run }
    }
}

impl Passes for PhasePass {
    fn timed_wall(&self) -> Duration {
        Duration::from_nanos(self.pr.wall_nanos)
    }

    fn passes(&self) -> u32 {
        self.pr.passes()
    }

    fn went_well(&self) -> bool {
        self.run.clean()
    }

    fn add(&mut self, more: PhasePass) {
        results::add_pass(&mut self.pr, &mut self.hist, &more.pr, &more.hist);
        self.run = more.run;
    }
}

/// What runs a repetition: where, with which seed, what to tell, whom to ask.
pub struct RepCx<'a> {
    /// The target, test, repetition (its `phase` is set per phase).
    pub at: PhasePoint<'a>,
    /// Where it runs.
    pub env: &'a RepEnv<'a>,
    /// The repetition's seed.
    pub seed: u64,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// The driver's hooks around the set-up and each phase.
    pub hooks: &'a dyn Hooks,
}

/// Run one repetition on `files`; warnings go to `warnings` (once each).
pub fn run<'t>(
    cx: &RepCx<'t>,
    files: &mut dyn TestFiles,
    warnings: &mut Vec<Warning>,
) -> RepRun<'t> {
    let test = cx.at.test;
    // O_DIRECT refused or misaligned: this test's failure, before any file is made.
    if let Err(e) = files.preflight(test) {
        return RepRun::ended(test, PhaseOutcome::Failed(e));
    }
    // The repetition's untimed work, measured around each step (never inside a timed phase).
    let mut spent = Untimed { reused_layout: files.reused(), ..Untimed::default() };
    let t0 = Instant::now();
    let set_up = set_up(cx, files);
    spent.layout_nanos += t0.elapsed().as_nanos() as u64;
    if set_up != PhaseOutcome::Ok {
        return RepRun::ended(test, set_up);
    }
    let mut phases = Vec::new();
    let mut hists = Vec::new();
    let mut timed_hist = OpHistograms::default();
    let mut outcome = PhaseOutcome::Ok;
    for (pi, phase) in test.phases.iter().enumerate() {
        let step = run_phase(cx, files, pi, phase, warnings, &mut spent);
        if phase.timed {
            timed_hist.merge(&step.hist);
        } else {
            // A phase the test does not time is part of its set-up.
            spent.layout_nanos += step.pr.wall_nanos;
        }
        phases.push(step.pr);
        hists.push(step.hist);
        let point = PhasePoint { phase: &phase.name, ..cx.at };
        outcome = cx.hooks.after_phase(&point, step.window, step.local);
        if outcome != PhaseOutcome::Ok {
            break;
        }
    }
    let opts = cx.env.opts;
    // A file shared by several processes is checked once, by the one that removes it (every
    // process is past the last phase: the hooks agreed on its outcome). After the last phase,
    // outside every timing.
    // A test that only writes checkable blocks for a later test's check does not check them.
    let unchecked = test.files.run_file.as_ref().is_some_and(|r| r.verify_writes) && !test.verify;
    if opts.verify
        && !unchecked
        && outcome == PhaseOutcome::Ok
        && super::files::removes_files(test, opts)
    {
        match files.verify(test, opts, cx.at.rep, &phases) {
            Ok(w) => note_once(warnings, w),
            Err(e) => outcome = PhaseOutcome::Failed(e),
        }
    }
    let complete = outcome == PhaseOutcome::Ok;
    let mut r = rep_result(test, phases, &timed_hist, complete);
    // After the last phase, outside every timing, while the files exist: zfs's compressratio.
    r.compress_ratio =
        complete.then(|| crate::observe::compress::ratio(&cx.env.target.dir)).flatten();
    // A data test's extent map is asked with FIEMAP_FLAG_SYNC: mostly the sync of what the
    // phases left dirty.
    let t0 = Instant::now();
    files.finish_result(complete, &mut r);
    spent.sync_nanos += t0.elapsed().as_nanos() as u64;
    r.untimed = Some(spent);
    RepRun { test, result: Some(r), outcome, hists }
}

/// The untimed set-up (the files, then the roles' files), between the hooks: every process of a
/// multi-client run starts it together and agrees on its outcome.
fn set_up(cx: &RepCx<'_>, files: &mut dyn TestFiles) -> PhaseOutcome {
    let (test, opts) = (cx.at.test, cx.env.opts);
    let point = PhasePoint { phase: "setup", ..cx.at };
    let local = match cx.hooks.before_phase(&point) {
        Err(e) => PhaseOutcome::Failed(e.at("setup")),
        Ok(()) => {
            let s = SetUp { test, opts, seed: cx.seed, rep: cx.at.rep, progress: cx.progress };
            let roles = || super::roles::prefill(test, cx.env.roles, opts, cx.seed, cx.progress);
            match files.set_up(&s).and_then(|ok| if ok { roles() } else { Ok(false) }) {
                Ok(true) => PhaseOutcome::Ok,
                Ok(false) => PhaseOutcome::Interrupted,
                Err(e) => PhaseOutcome::Failed(e),
            }
        }
    };
    cx.hooks.after_phase(&point, None, local)
}

/// One phase as run: its result, latencies, how it ended here, and when its workers ran.
struct PhaseStep {
    pr: PhaseResult,
    hist: OpHistograms,
    local: PhaseOutcome,
    window: Option<(Instant, Instant)>,
}

/// Run phase `pi`: its cache precondition, then between the probe's bracket and the hooks its
/// workers (beside the roles, for a timed phase), again on the same files for `--min-time`.
/// The untimed work between (cache preconditions, removing a pass's files) is added to
/// `spent`.
fn run_phase(
    cx: &RepCx<'_>,
    files: &mut dyn TestFiles,
    pi: usize,
    phase: &PhaseDef,
    warnings: &mut Vec<Warning>,
    spent: &mut Untimed,
) -> PhaseStep {
    let (test, env) = (cx.at.test, cx.env);
    let (target, opts) = (env.target, env.opts);
    // A phase that creates its files starts every further pass without them; the first phase
    // on files the set-up laid out empty (fio's fallocate) starts each on them laid out anew.
    let creates = !files.all_exist() || (pi == 0 && files.laid_out_empty());
    // The directories could not be taken again after an eviction that unmounted: the phase
    // fails, its workers never start (nothing is done through a path that leads elsewhere).
    let (check, lost) = split(phase, cache::prepare(phase.cache, files, target, spent));
    files.start_progress(test, cx.at.rep, phase, cx.progress);
    let (trace, offcpu) = (opts.trace && phase.timed, opts.offcpu && phase.timed);
    let probe = Probe::start(target, env.devices, trace, offcpu, warnings);
    let point = PhasePoint { phase: &phase.name, ..cx.at };
    let released = cx.hooks.before_phase(&point);
    let seed = files.phase_seed(cx.seed, pi);
    // A pass beside no roles (a --min-time pass, an untimed phase) keeps its threads' flow too.
    let run_once = |files: &mut dyn TestFiles,
                    exit: Option<&phase::ExitLink>,
                    flows: Option<&super::flow::Flows>| {
        let own;
        let flows = match flows {
            Some(f) => f,
            None => {
                own = super::flow::Flows::of(test, phase);
                &own
            }
        };
        phase::run_linked(test, phase, files, opts, seed, cx.progress, env.devices, exit, flows)
    };
    let (run, roles, role_error) = match &released {
        Ok(()) if lost.is_some() => {
            (lost.map(PhaseRun::failed).unwrap_or_default(), Vec::new(), None)
        }
        Ok(()) if phase.timed => super::roles::beside(
            test,
            phase,
            env.roles,
            seed,
            opts.compress_percent,
            |exit, flows| run_once(&mut *files, Some(exit), Some(flows)),
        ),
        Ok(()) => (run_once(&mut *files, None, None), Vec::new(), None),
        Err(_) => (PhaseRun::default(), Vec::new(), None),
    };
    let window_start = run.outs.iter().map(|o| o.start).min();
    let mut pass = PhasePass::of(test, phase, run, check);
    let in_place = super::files::pass_of(test) == Pass::Phase && min_time::applies(test, opts);
    if in_place && phase.timed && released.is_ok() {
        // The same operations (same seed), after the same cache precondition; the time in
        // between (removing created files, evicting or reading the cache) is not timed.
        let fixed = opts.passes.as_ref().and_then(|p| p.get(pi).copied());
        pass = min_time::lengthen(pass, opts.min_time, fixed, || {
            let t0 = Instant::now();
            let renewed = if creates { files.renew_created(test, opts) } else { Ok(()) };
            spent.min_time_nanos += t0.elapsed().as_nanos() as u64;
            let prepared = cache::prepare(phase.cache, files, target, spent);
            let (check, lost) = split(phase, prepared);
            let run = match (renewed, lost) {
                (Err(e), _) | (_, Some(e)) => PhaseRun::failed(e),
                (Ok(()), None) => run_once(&mut *files, None, None),
            };
            PhasePass::of(test, phase, run, check)
        });
    }
    let observed = probe.finish(target, env.devices, &phase.name, warnings);
    cx.progress.phase_end();
    let PhasePass { mut pr, hist, run } = pass;
    // `--curve`: the steps, after the closed-loop pass and outside its observation bracket,
    // each after the same cache precondition (its time is untimed work, as a pass's).
    let mut curve_failed = None;
    if let Some(plan) = phase.curve.as_ref().filter(|_| released.is_ok() && run.clean()) {
        let (t0, cache0) = (Instant::now(), spent.cache_nanos);
        let (curve, failed) = super::curve::run(test, phase, plan, (&pr, &hist), |def| {
            let renewed = if creates { files.renew_created(test, opts) } else { Ok(()) };
            let (check, lost) = split(def, cache::prepare(def.cache, files, target, spent));
            files.start_progress(test, cx.at.rep, def, cx.progress);
            let run = match (renewed, lost) {
                (Err(e), _) | (_, Some(e)) => PhaseRun::failed(e),
                (Ok(()), None) => {
                    phase::run(test, def, files, opts, seed, cx.progress, env.devices)
                }
            };
            cx.progress.phase_end();
            let pr = phase_result(test, def, &run, check);
            (run, pr)
        });
        // The steps' cache preconditions are in `cache_nanos` already.
        let cache = spent.cache_nanos - cache0;
        spent.curve_nanos += (t0.elapsed().as_nanos() as u64).saturating_sub(cache);
        pr.curve = Some(curve);
        curve_failed = failed;
    }
    observed.record(target, &mut pr, warnings);
    pr.roles = roles;
    if run.exited {
        pr.ended_by = Some(super::results::EXITALL.into());
    }
    if run.stonewalled {
        let capped = phase.max_seconds.is_some_and(|s| {
            opts.stonewall.is_none_or(|w| Duration::try_from_secs_f64(s).is_ok_and(|c| c <= w))
        });
        pr.ended_by = Some(if capped { TIME_CAP } else { STONEWALLED }.into());
    }
    let mut local = local_outcome(phase, released, &run, role_error, files);
    if let (PhaseOutcome::Ok, Some(failed)) = (&local, &curve_failed) {
        local = local_outcome(phase, Ok(()), failed, None, files);
    }
    let end = run.outs.iter().map(|o| o.end).max();
    let end = end.map(|e| run.synced.as_ref().map(|s| s.0.max(e)).unwrap_or(e));
    PhaseStep { pr, hist, local, window: window_start.zip(end) }
}

/// A cache precondition as made, or (when the test's directories were lost around the
/// eviction) an unmet one and the error that fails the phase.
fn split(
    phase: &PhaseDef,
    prepared: Result<CacheCheck, EngineError>,
) -> (CacheCheck, Option<EngineError>) {
    match prepared {
        Ok(c) => (c, None),
        Err(e) => {
            let method = format!("eviction: {e}");
            let c =
                CacheCheck { required: phase.cache, resident_fraction: 0.0, method, met: false };
            (c, Some(e))
        }
    }
}

/// How the phase ended on this process: a hook's refusal, the end-of-phase sync's error, a
/// role's error, a worker's error (with the state of the files), a stop, or done.
fn local_outcome(
    phase: &PhaseDef,
    released: Result<(), EngineError>,
    run: &PhaseRun,
    role_error: Option<EngineError>,
    files: &dyn TestFiles,
) -> PhaseOutcome {
    let place = || format!("phase `{}`", phase.name);
    let interrupted = crate::sys::signals::interrupted;
    if let Err(e) = released {
        if interrupted() {
            return PhaseOutcome::Interrupted;
        }
        return PhaseOutcome::Failed(e.at(place()));
    }
    if let Some(e) = run.synced.as_ref().and_then(|s| s.1.as_ref()) {
        return PhaseOutcome::Failed(e.clone().at(place()));
    }
    if let Some(e) = role_error.filter(|_| !interrupted()) {
        return PhaseOutcome::Failed(e.at(place()));
    }
    if let Some(e) = run.outs.iter().find_map(|o| o.error.as_ref()) {
        let note = files.state_note(&run.outs);
        let error = Box::new(e.clone());
        return PhaseOutcome::Failed(EngineError::At { place: place(), error, note });
    }
    if run.outs.iter().any(|o| o.interrupted) {
        return PhaseOutcome::Interrupted;
    }
    PhaseOutcome::Ok
}
