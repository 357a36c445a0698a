//! One phase's workers: one thread per test thread, each with its share of the test's files
//! ([`super::files::TestFiles::shares`]), set up before a start barrier, released together,
//! monomorphised for the test's engine ([`super::ioengine::with_engine`]); the runner's thread
//! reports progress every 50 ms (or as soon as a worker ends) and stops the phase at the
//! stonewall. What they measured comes back merged ([`PhaseRun`]).
//!
//! Over time: the workers of a timed data phase record an interval series on one clock
//! ([`super::series`]), which the runner's thread completes with what it samples at each tick
//! ([`Sample`]: `/proc/meminfo`'s dirty and writeback bytes, the target's devices' requests
//! and busy time, the process's CPU); a phase with a rate or think time is paced in the
//! workers ([`super::pace`]); a time-based phase with a steady-state criterion is watched here
//! once a second and stopped when it holds ([`super::steady`]).

use super::files::TestFiles;
use super::flow::Flows;
use super::ioengine::{self, IoEngine, WithEngine};
use super::pace::PacePlan;
use super::runner::{EngineOptions, Progress};
use super::series::{Sample, SeriesPlan, SeriesRecorder};
use super::steady::SteadyWatch;
use super::worker::{self, OverTime, StopFlags, WorkerOutput, WorkerPlan};
use crate::model::failure::EngineError;
use crate::model::job::{Amount, PhaseDef, TestDef};
use crate::model::latency::OpHistograms;
use crate::model::result::FillPoint;
use crate::model::series::{PhaseSeries, SteadyOutcome, ThreadWindows, MIN_INTERVAL_NANOS};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    /// Another job's end stopped the phase (fio's `exitall`, see [`ExitLink`]).
    pub exited: bool,
    /// A timed data phase's interval series, merged over its workers.
    pub over_time: Option<PhaseSeries>,
    /// A steady-state criterion's outcome (the phase ended when it held).
    pub steady: Option<SteadyOutcome>,
}

impl PhaseRun {
    /// Every worker finished its work: no error, no stop.
    pub fn clean(&self) -> bool {
        self.outs.iter().all(|o| o.error.is_none() && !o.interrupted)
            && self.synced.as_ref().is_none_or(|s| s.1.is_none())
            && !self.stonewalled
            && !self.exited
    }

    /// A phase that could not start: `error` is its one worker's.
    pub fn failed(error: EngineError) -> PhaseRun {
        let out = WorkerOutput { error: Some(error), ..WorkerOutput::at(Instant::now()) };
        PhaseRun { outs: vec![out], ..PhaseRun::default() }
    }
}

/// Run `phase` of `test` on `files`, with the test's engine; `seed` is the phase's; `devices`
/// are the target's block devices (their counters go into the series).
pub fn run(
    test: &TestDef,
    phase: &PhaseDef,
    files: &mut dyn TestFiles,
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
    devices: &[String],
) -> PhaseRun {
    run_linked(test, phase, files, opts, seed, progress, devices, None, &Flows::default())
}

/// The test's own threads' side of fio's `exitall` (the roles' side is in
/// [`super::roles::beside`]): the phase says when its first worker ends (`ended`), and stops
/// when another job's end asks it to (`stop`, then `exited`).
#[derive(Default)]
pub struct ExitLink {
    /// The phase's stop flag: the one its workers poll before every op (no further load in
    /// the hot loop). A failing worker sets it too.
    pub stop: AtomicBool,
    /// Set with `stop` when another job's end stopped the phase.
    pub exited: AtomicBool,
    /// Set by the phase when the first of its workers ends.
    pub ended: AtomicBool,
}

impl ExitLink {
    /// Stop the phase: another job's end asks it (fio's `exitall`).
    pub fn exit(&self) {
        self.exited.store(true, Ordering::Release);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// [`run`], linked to the test's other jobs by `exit` (fio's `exitall`), its threads in
/// `flows` (fio's flow control, shared with the test's roles).
#[allow(clippy::too_many_arguments)]
pub fn run_linked(
    test: &TestDef,
    phase: &PhaseDef,
    files: &mut dyn TestFiles,
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
    devices: &[String],
    exit: Option<&ExitLink>,
    flows: &Flows,
) -> PhaseRun {
    let job = Workers { test, phase, files, opts, seed, progress, devices, exit, flows };
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
    devices: &'a [String],
    exit: Option<&'a ExitLink>,
    flows: &'a Flows,
}

impl WithEngine for Workers<'_> {
    type Output = PhaseRun;

    fn with<E: IoEngine>(self) -> PhaseRun {
        let Workers { test, phase, files, opts, seed, progress, devices, exit, flows } = self;
        let options = E::options(&test.engine_options);
        let n = test.threads as usize;
        let barrier = Barrier::new(n);
        let own_stop = AtomicBool::new(false);
        let phase_stop: &AtomicBool = exit.map_or(&own_stop, |x| &x.stop);
        let stop = StopFlags { phase: phase_stop, signal: crate::sys::signals::flag() };
        let finished = AtomicUsize::new(0);
        let mut run = PhaseRun::default();
        let mut samples: Vec<Sample> = Vec::new();
        let mut held_at: Option<f64> = None;
        // The steady-state window last judged (fio's `data`).
        let mut steady_window: Vec<f64> = Vec::new();
        // The phase's own time cap (fio's size and runtime together) acts as a stonewall.
        let cap = phase.max_seconds.and_then(|s| Duration::try_from_secs_f64(s).ok());
        let stonewall = if phase.timed {
            match (opts.stonewall, cap) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        } else {
            None
        };
        let shares = files.shares(test, phase, opts);
        let counters: Vec<_> = shares.iter().map(|s| s.1).collect();
        let origin = AtomicU64::new(0);
        let series = series_plan(phase, opts, &origin);
        let plans = shares.into_iter().enumerate().map(|(k, (work, ctr))| {
            let seed = seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let pace = if phase.timed {
                PacePlan::of(&phase.load, k as u32, test.threads).seeded(seed).limited_to(phase)
            } else {
                PacePlan::default()
            };
            let plan = WorkerPlan {
                phase,
                seed,
                compress_percent: opts.compress_percent,
                iodepth: test.iodepth,
                thread_index: k as u32,
                work,
                over_time: OverTime {
                    series,
                    pace,
                    flow: if phase.timed { flows.plan(phase.load.flow) } else { None },
                },
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
                        if let Some(x) = exit {
                            x.ended.store(true, Ordering::Release);
                        }
                        finished.fetch_add(1, Ordering::Release);
                        let _ = done.send(());
                        out
                    })
                })
                .collect();
            drop(done_tx);
            // The stonewall counts from here, just after the workers were spawned.
            let released = Instant::now();
            let wall_at = stonewall.map(|d| released + d);
            // The series' tick: at most its interval, so each point has a fresh sample.
            let tick = match series {
                Some(sp) => Duration::from_nanos(sp.interval_nanos).min(Duration::from_millis(50)),
                None => Duration::from_millis(50),
            };
            if series.is_some() {
                samples.push(Sample::take(devices));
            }
            let mut watch = match (phase.timed, phase.amount, phase.load.steady) {
                (true, Amount::Seconds(_), Some(c)) => Some(SteadyWatch::new(c)),
                _ => None,
            };
            while finished.load(Ordering::Acquire) < n {
                let mut nap = match wall_at {
                    Some(t) if !run.stonewalled => {
                        t.saturating_duration_since(Instant::now()).min(tick)
                    }
                    _ => tick,
                };
                if let Some(w) = &watch {
                    let next = released + Duration::from_secs(w.seconds() as u64 + 1);
                    nap = nap.min(next.saturating_duration_since(Instant::now()));
                }
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
                if series.is_some() && sample_due(&samples, opts.interval.is_some()) {
                    samples.push(Sample::take(devices));
                }
                if let Some(w) = watch.as_mut().filter(|_| held_at.is_none()) {
                    let secs = w.seconds() as u64 + 1;
                    if Instant::now() >= released + Duration::from_secs(secs) {
                        let bytes = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                        if w.sample(bytes) {
                            held_at = Some(secs as f64);
                            phase_stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
                progress.phase_progress(counters.iter().map(|c| c.load(Ordering::Relaxed)).sum());
            }
            if series.is_some() {
                // The state at the end, whatever the thinning left out.
                samples.push(Sample::take(devices));
            }
            if let Some(w) = &watch {
                steady_window = w.window();
            }
            handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect()
        });
        if let (true, Some(c)) = (phase.timed, phase.load.steady) {
            run.steady = Some(SteadyOutcome {
                criterion: c,
                held_at_secs: held_at,
                window_bytes_per_s: steady_window,
            });
        }
        // Stopped by another job's end: asked to, and a worker saw it before its amount was done.
        run.exited = exit.is_some_and(|x| x.exited.load(Ordering::Acquire))
            && run.outs.iter().any(|o| o.interrupted);
        let ended_early = run.stonewalled || held_at.is_some() || run.exited;
        if ended_early && run.outs.iter().all(|o| o.error.is_none()) {
            // Stopped by the stonewall, a steady state or another job's end (exitall), not by
            // a signal or a failing worker.
            let signalled = crate::sys::signals::interrupted();
            for o in &mut run.outs {
                o.interrupted = signalled;
            }
        }
        for o in &run.outs {
            run.hist.merge(&o.hist);
        }
        if series.is_some() {
            let o = origin.load(Ordering::Acquire);
            for x in &mut samples {
                x.at_nanos = x.at_nanos.saturating_sub(o);
            }
            let mut recs: Vec<&mut SeriesRecorder> =
                run.outs.iter_mut().map(|o| &mut o.series).collect();
            run.over_time = super::series::merge(&mut recs, &samples);
            // With a fixed --interval, each worker's own windows (fio's per-thread rate
            // samples, `fsbench fio`): a few numbers per interval, taken after the phase.
            let fixed = opts.interval.is_some();
            for o in &mut run.outs {
                o.windows = if fixed { o.series.windows() } else { ThreadWindows::default() };
                o.series = SeriesRecorder::default(); // its ring is no longer needed
            }
        }
        files.end_phase(phase, &mut run);
        run
    }
}

/// Whether the runner's tick should take a [`Sample`] now: always with a fixed `--interval`
/// (every point needs its readings), else once a 400th of the phase so far has passed since
/// the last one. An adaptive series ends with 100-200 points, so every point still gets two
/// readings or more, and an hour-long phase keeps a few thousand (about 400 × ln(length / 10
/// ms)) instead of one per tick: less memory, and less of the runner's time reading.
fn sample_due(samples: &[Sample], fixed: bool) -> bool {
    match (samples.first(), samples.last()) {
        (Some(first), Some(last)) if !fixed => {
            let now = worker::now_ns();
            now.saturating_sub(last.at_nanos) >= now.saturating_sub(first.at_nanos) / 400
        }
        _ => true,
    }
}

/// A timed data phase's series: from `--interval` (a fixed interval, with a ring as long as a
/// time-based phase needs) or adaptive from 10 ms. `None` for untimed and fileset phases.
fn series_plan<'a>(
    phase: &PhaseDef,
    opts: &EngineOptions,
    origin: &'a AtomicU64,
) -> Option<SeriesPlan<'a>> {
    if !phase.timed || phase.pattern.data().is_empty() {
        return None;
    }
    let fixed = opts.interval.is_some();
    let interval_nanos = opts
        .interval
        .map(|d| d.as_nanos().min(u64::MAX as u128) as u64)
        .unwrap_or(MIN_INTERVAL_NANOS)
        .max(MIN_INTERVAL_NANOS);
    let secs = match phase.amount {
        Amount::Seconds(s) => Some(s),
        _ => None,
    };
    Some(SeriesPlan {
        origin,
        interval_nanos,
        cap: SeriesPlan::cap_for(interval_nanos, fixed, secs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_thin_out_as_an_adaptive_phase_goes_on() {
        let at = |ago_ms: u64| Sample {
            at_nanos: worker::now_ns() - ago_ms * 1_000_000,
            ..Sample::default()
        };
        assert!(sample_due(&[], false), "the first one");
        // 100 s into the phase: one reading per 250 ms (its series' points are 500 ms or more).
        assert!(!sample_due(&[at(100_000), at(100)], false));
        assert!(sample_due(&[at(100_000), at(300)], false));
        // 1 s in: every 10 ms tick still reads.
        assert!(sample_due(&[at(1_000), at(10)], false));
        // A fixed --interval keeps every tick's.
        assert!(sample_due(&[at(100_000), at(1)], true));
    }
}
