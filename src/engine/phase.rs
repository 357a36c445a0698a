//! One phase's workers: one thread per test thread, each with its share of the test's files
//! ([`super::files::TestFiles::shares`]), set up before a start barrier, released together,
//! monomorphised for the test's engine ([`super::ioengine::with_engine`]); the runner's thread
//! reports progress every 50 ms (or as soon as a worker ends) and stops the phase at the
//! stonewall. What they measured comes back merged ([`PhaseRun`]).

use super::files::TestFiles;
use super::ioengine::{self, IoEngine, WithEngine};
use super::runner::{EngineOptions, Progress};
use super::worker::{self, StopFlags, WorkerOutput, WorkerPlan};
use crate::model::failure::EngineError;
use crate::model::job::{PhaseDef, TestDef};
use crate::model::latency::OpHistograms;
use crate::model::result::FillPoint;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// What a phase's workers did, merged, with a fill phase's series.
#[derive(Default)]
pub struct PhaseRun {
    /// Each worker's output.
    pub outs: Vec<WorkerOutput>,
    /// Their latencies, merged (and a fileset phase's end-of-phase syncfs).
    pub hist: OpHistograms,
    /// A fill phase's steps.
    pub series: Option<Vec<FillPoint>>,
    /// A fill phase's fill at its start and end.
    pub fill_range: Option<(f64, f64)>,
    /// A fill phase reached its target.
    pub fill_reached: bool,
    /// When the end-of-phase syncfs of a fileset phase returned, and its error.
    pub synced: Option<(Instant, Option<EngineError>)>,
    /// The stonewall ended the phase.
    pub stonewalled: bool,
}

impl PhaseRun {
    /// Every worker finished its work: no error, no stop.
    pub fn clean(&self) -> bool {
        self.outs.iter().all(|o| o.error.is_none() && !o.interrupted)
            && self.synced.as_ref().is_none_or(|s| s.1.is_none())
            && !self.stonewalled
    }

    /// A phase that could not start: `error` is its one worker's.
    pub fn failed(error: EngineError) -> PhaseRun {
        let out = WorkerOutput { error: Some(error), ..WorkerOutput::at(Instant::now()) };
        PhaseRun { outs: vec![out], ..PhaseRun::default() }
    }
}

/// Run `phase` of `test` on `files`, with the test's engine; `seed` is the phase's.
pub fn run(
    test: &TestDef,
    phase: &PhaseDef,
    files: &mut dyn TestFiles,
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
) -> PhaseRun {
    let job = Workers { test, phase, files, opts, seed, progress };
    ioengine::with_engine(&test.engine, job).unwrap_or_else(|| {
        let e = format!("engine `{}` is not one of this fsbench's", test.engine.name());
        PhaseRun::failed(EngineError::unsupported(e))
    })
}

/// A phase to run on an engine (see [`run`]).
struct Workers<'a> {
    test: &'a TestDef,
    phase: &'a PhaseDef,
    files: &'a mut dyn TestFiles,
    opts: &'a EngineOptions,
    seed: u64,
    progress: &'a dyn Progress,
}

impl WithEngine for Workers<'_> {
    type Output = PhaseRun;

    fn with<E: IoEngine>(self) -> PhaseRun {
        let Workers { test, phase, files, opts, seed, progress } = self;
        let options = E::options(&test.engine_options);
        let n = test.threads as usize;
        let barrier = Barrier::new(n);
        let phase_stop = AtomicBool::new(false);
        let stop = StopFlags { phase: &phase_stop, signal: crate::sys::signals::flag() };
        let finished = AtomicUsize::new(0);
        let mut run = PhaseRun::default();
        let stonewall = if phase.timed { opts.stonewall } else { None };
        let shares = files.shares(test, phase, opts);
        let counters: Vec<_> = shares.iter().map(|s| s.1).collect();
        let plans = shares.into_iter().enumerate().map(|(k, (work, ctr))| {
            let plan = WorkerPlan {
                phase,
                seed: seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                compress_percent: opts.compress_percent,
                iodepth: test.iodepth,
                work,
            };
            (plan, ctr)
        });
        // Each worker says when it is done, so the runner wakes at once instead of at its next
        // 50 ms tick: a phase repeated for --min-time may take 0.1 ms a pass, and sleeping out
        // the tick after each of hundreds of passes made a default compare minutes longer.
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        run.outs = std::thread::scope(|s| {
            let handles: Vec<_> = plans
                .map(|(mut plan, ctr)| {
                    let (barrier, stop, finished, options) = (&barrier, &stop, &finished, &options);
                    let done = done_tx.clone();
                    s.spawn(move || {
                        let out = worker::run::<E>(&mut plan, options, barrier, stop, ctr);
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
                // A worker's end wakes this early; else the tick passes. Every sender gone
                // with fewer finished: a worker panicked (`join` below says so).
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
        files.end_phase(phase, &mut run);
        run
    }
}
