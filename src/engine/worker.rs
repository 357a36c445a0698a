//! The worker: one thread's share of a phase. This is the hot loop, and there is one for every
//! test: [`drive`] runs it over an [`OpSource`], which is either a data file's queued reads and
//! writes ([`FileOps`], here) or a fileset's whole-file and namespace ops
//! ([`super::fileset::SlotOps`]).
//!
//! Everything a worker needs is allocated before it waits at the start barrier: its engine, its
//! buffers (one read buffer per queue slot), its queue bookkeeping, its histograms, its random
//! generator. The loop then does, per operation: poll the stop flags (two relaxed loads), ask the
//! source to issue an op ([`OpSource::issue`]: a data op picks a size and an offset, integer
//! arithmetic and one wyrand step or one step of the random map ([`super::random_map`]), and
//! queues it on the engine, which for `psync` is the system call; a fileset op does its system
//! calls and completes at once), and while requests are in flight reap at least one, read the
//! clock once per reap, and hand each completion to the source
//! ([`OpSource::complete`]: one histogram increment, counters, a relaxed store of the progress
//! counter). At depth 1 the end of one op is the start of the next, so one clock read per op.
//! An engine that submits apart (io_uring, libaio) also gets one clock read after each call
//! that submitted requests, which stamps them (their submission and completion latency apart,
//! [`super::submit`]); fio's depth counts are three integer increments per op and reap.
//! No allocation, no lock, no formatting (except when building an error, once).
//!
//! Everything is generic over the engine and the source, so it is monomorphised and inlined per
//! pair: the data path of `psync` compiles to the straight loop it was before queues existed
//! (queue-slot bookkeeping is skipped at compile time for engines of depth 1).

use super::buffer::{AlignedBuf, WritePool};
use super::fileset::{SlotOps, SlotWork};
use super::ioengine::{Completion, Io, IoEngine, IoKind};
use super::oplog::OpRecorder;
use super::pace::{DirPacer, PacePlan, Pacer, Pick};
use super::random_map::RandomMap;
use super::series::{SeriesPlan, SeriesRecorder};
use super::skew::Skew;
use super::submit::SplitRecorder;
use crate::model::failure::EngineError;
use crate::model::job::{
    next_sequential, Amount, FileService, OffsetMode, OpDef, OpKind, OpenFlags, PhaseDef, SizeDist,
    SyncCall, Wrap,
};
use crate::model::latency::OpHistograms;
use crate::model::series::ThreadWindows;
use crate::model::submit::DepthCounts;
use crate::sys::rusage::{CpuSample, CpuTime, RusageCounts};
use std::fs::OpenOptions;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

/// A counter on its own cache line, so threads updating theirs do not share lines.
#[repr(align(64))]
#[derive(Default)]
pub struct PaddedCounter(pub AtomicU64);

/// What one worker is asked to do: the phase, and its share of the test's files.
pub struct WorkerPlan<'a> {
    /// The phase.
    pub phase: &'a PhaseDef,
    /// Seed of this worker's random generator.
    pub seed: u64,
    /// Share of each 4 KiB written block that is zeros.
    pub compress_percent: u8,
    /// Requests kept in flight (the test's `iodepth`).
    pub iodepth: u32,
    /// Its index among its phase's (or role's) threads: which CPU it takes with
    /// `cpus_policy = "split"` ([`crate::model::sched::CpuAffinity::of_thread`]).
    pub thread_index: u32,
    /// The files it works on.
    pub work: Work<'a>,
    /// Its interval series and pacing ([`OverTime::default`]: neither).
    pub over_time: OverTime<'a>,
}

/// What a worker records over time and how it paces its ops.
#[derive(Clone, Copy, Default)]
pub struct OverTime<'a> {
    /// Record an interval series ([`super::series`]); data workers only.
    pub series: Option<SeriesPlan<'a>>,
    /// Fixed rate and think time ([`super::pace`]).
    pub pace: PacePlan,
    /// Its place in a flow ([`super::flow`]); none: no flow control.
    pub flow: Option<super::flow::FlowPlan<'a>>,
}

/// A worker's share of the test's files.
pub enum Work<'a> {
    /// One data file, opened for the phase, read and written at offsets through the engine's
    /// queue.
    File(FileWork<'a>),
    /// The thread's slots of a fileset, with whole-file and namespace ops ([`super::fileset`]).
    Slots(SlotWork<'a>),
}

/// A worker's data file and its region.
pub struct FileWork<'a> {
    /// The file this worker opens.
    pub path: &'a Path,
    /// File size (random offsets fall in `[0, file_size - op size]`).
    pub file_size: u64,
    /// Start of this worker's sequential region.
    pub region_start: u64,
    /// Length of this worker's sequential region.
    pub region_len: u64,
    /// `--verify`: (seed, file id) of the verified content written ([`super::verify`]).
    pub verify: Option<(u64, u64)>,
    /// Open with `O_NOFOLLOW`: the file is one the job names ([`crate::model::job::NamedFile`]).
    pub nofollow: bool,
    /// Random offsets fall in the region too (fio's `offset`/`offset_increment`: a job's I/O
    /// stays in `[offset, offset + size)`); otherwise in the whole file.
    pub random_in_region: bool,
    /// The worker's several files (fio's `nrfiles` > 1; `path` is the first), each worked on
    /// whole as the one file is; `None`: the one file at `path`.
    pub more: Option<MoreFiles<'a>>,
}

/// A worker's several files (fio's `nrfiles` > 1) and which one each next op goes to.
#[derive(Clone, Copy)]
pub struct MoreFiles<'a> {
    /// Every file of the worker, in order (at least 2), each `FileWork::file_size` bytes.
    pub paths: &'a [PathBuf],
    /// Which file the next op goes to (fio's `file_service_type`).
    pub service: FileService,
}

impl FileWork<'_> {
    /// Where random offsets fall: the start and length of the region or of the whole file.
    #[inline(always)]
    fn random_span(&self) -> (u64, u64) {
        if self.random_in_region {
            (self.region_start, self.region_len)
        } else {
            (0, self.file_size)
        }
    }
}

/// What one worker measured (a data worker or a fileset worker).
pub struct WorkerOutput {
    /// Latencies per op kind.
    pub hist: OpHistograms,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Read + write ops (data tests).
    pub data_ops: u64,
    /// Pattern ops done, not counting skipped ones (fileset tests).
    pub file_ops: u64,
    /// Pattern ops that found no suitable slot and did nothing (fileset tests).
    pub skipped_ops: u64,
    /// Files created (fileset tests).
    pub creates: u64,
    /// The filesystem filled up (ENOSPC) during a fill phase.
    pub enospc: bool,
    /// Nanoseconds inside fsync/fdatasync (files and directories).
    pub sync_nanos: u64,
    /// `--verify`: nanoseconds spent making verified data and checking it, inside the phase's
    /// wall time but outside every op's latency.
    pub verify_nanos: u64,
    /// `--verify`: bytes of file data checked as they were read (fileset tests).
    pub verified_bytes: u64,
    /// When this worker was released.
    pub start: Instant,
    /// When it finished (after close).
    pub end: Instant,
    /// CPU consumed between the two.
    pub cpu: CpuTime,
    /// Context switches and page faults between the two.
    pub rusage: RusageCounts,
    /// Set when the worker failed: what failed (the op, where) and why.
    pub error: Option<EngineError>,
    /// Set when a stop flag ended the worker early.
    pub interrupted: bool,
    /// `invalidate_each_pass`: times the file's cached pages were dropped.
    pub invalidations: u64,
    /// Its interval series (a default recorder when none was asked for).
    pub series: SeriesRecorder,
    /// Ops issued under a fixed rate or think time (0 in the closed loop).
    pub paced_ops: u64,
    /// Its own windows of the series, kept after the phase's merge with a fixed `--interval`
    /// (fio's per-thread rate samples); empty otherwise.
    pub windows: ThreadWindows,
    /// Engines that submit apart (io_uring, libaio), data files: its reads' and writes'
    /// submission and completion latency apart ([`super::submit`]); `None` otherwise.
    pub split: Option<Box<SplitRecorder>>,
    /// fio's queue-depth distributions: requests by the depth at their queueing, submit calls
    /// by what they submitted, reaps by what they reaped.
    pub depths: DepthCounts,
    /// A phase with a per-I/O log ([`PhaseDef::op_log`]), data files: a record of each data
    /// op ([`super::oplog`]); `None` otherwise.
    pub op_log: Option<Box<OpRecorder>>,
}

impl WorkerOutput {
    /// Record the thread's CPU time, context switches and page faults since `cpu0`.
    fn usage_since(&mut self, cpu0: CpuSample) {
        let now = CpuSample::thread_now();
        self.cpu = now.since(cpu0);
        self.rusage = now.counts_since(cpu0);
    }

    /// Nothing done yet, released at `start`.
    pub fn at(start: Instant) -> WorkerOutput {
        WorkerOutput {
            hist: OpHistograms::default(),
            bytes_read: 0,
            bytes_written: 0,
            data_ops: 0,
            file_ops: 0,
            skipped_ops: 0,
            creates: 0,
            enospc: false,
            sync_nanos: 0,
            verify_nanos: 0,
            verified_bytes: 0,
            start,
            end: start,
            cpu: CpuTime::default(),
            rusage: RusageCounts::default(),
            error: None,
            interrupted: false,
            invalidations: 0,
            series: SeriesRecorder::default(),
            paced_ops: 0,
            windows: ThreadWindows::default(),
            split: None,
            depths: DepthCounts::default(),
            op_log: None,
        }
    }
}

/// Shared flags the hot loop polls.
pub struct StopFlags<'a> {
    /// Set by any worker that fails, so the others stop too.
    pub phase: &'a AtomicBool,
    /// Set by Ctrl-C / SIGTERM.
    pub signal: &'a AtomicBool,
}

/// `CLOCK_MONOTONIC` in nanoseconds (the clock `Instant` reads), read through the vDSO by
/// rustix: cheaper than `Instant::now()` plus `Instant - Instant` (glibc's wrapper, and a
/// checked subtraction of two timespecs with a u128 conversion), and op latencies are
/// differences of plain integers.
#[inline(always)]
pub(super) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// What [`OpSource::issue`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Issue {
    /// A request was queued on the engine; it completes in a later reap.
    Queued,
    /// An op was done synchronously, and accounted (fileset ops).
    Done,
    /// Nothing can be queued until the queue drains (a sync covers every write before it).
    Wait,
    /// Nothing more to issue: the amount is done (a source may still issue a sync that a
    /// later completion makes due), or an op failed (`out.error` is set).
    End,
}

/// The ops a worker issues: the one loop ([`drive`]) asks a source for them and hands back
/// what the engine completed. Implemented by a data file's queued reads and writes
/// ([`FileOps`]) and a fileset's whole-file and namespace ops ([`SlotOps`]).
///
/// Every method is called in the worker thread after the start barrier, so inside the timed
/// phase; implementations allocate nothing (they are built, with all their memory, before the
/// barrier).
pub(super) trait OpSource<E: IoEngine> {
    /// The engine the source issues through. The source owns it, so the engine (and any
    /// request still in flight) is dropped before the buffers its requests point into.
    fn engine(&mut self) -> &mut E;

    /// Requests kept in flight (1 for sources whose ops complete inside `issue`).
    fn depth(&self) -> usize;

    /// Whether its ops' submission and completion latency are recorded apart (a data file's,
    /// with an engine that submits apart): [`drive`] then makes the recorder before the
    /// barrier.
    fn splits_latency(&self) -> bool {
        false
    }

    /// Whether a record of each op is kept (a data file's, in a phase with a per-I/O log),
    /// and of how many ops (0: not known before the phase runs): [`drive`] then makes the
    /// recorder, with the chunks for them, before the barrier.
    fn logs_ops(&self) -> Option<u64> {
        None
    }

    /// The timed start (a data file is opened here). `start_ns` is the release from the
    /// barrier; returns the clock at the end, or `None` after setting `out.error`.
    fn begin(&mut self, start_ns: u64, out: &mut WorkerOutput) -> Option<u64>;

    /// Issue the next op; `inflight` requests are queued and not yet reaped, `t0` is the clock
    /// at the last reap, or at the source's latest [`OpSource::clock`] if later (the queueing
    /// time of a request queued now).
    fn issue(&mut self, inflight: usize, t0: u64, out: &mut WorkerOutput) -> Issue;

    /// The latest clock the source read while issuing (after a submission's return, a cache
    /// drop, a reopen), 0 if none: an op issued after it in the same batch starts there, not
    /// at the last reap, so neither the earlier submissions nor the drop are in its latency
    /// (fio stamps each request as it is prepared).
    #[inline(always)]
    fn clock(&self) -> u64 {
        0
    }

    /// Account one completion reaped at `t1`. `false`: stop issuing (the op failed, or the
    /// worker is draining after a failure).
    fn complete(&mut self, c: Completion, t1: u64, out: &mut WorkerOutput) -> bool;

    /// After the completions of one reap: publish progress, and see whether the phase's time
    /// is up (then `issue` says `End`).
    fn reaped(&mut self, t1: u64, out: &WorkerOutput);

    /// The timed end, after the last completion (a data file's end-of-phase sync and close);
    /// `clean` when nothing failed or was interrupted. Returns the clock at the end.
    fn finish(&mut self, t0: u64, clean: bool, out: &mut WorkerOutput) -> u64;
}

/// Run one worker: set up engine `E` with the test's `options` (read once for the phase), wait
/// at `barrier`, then do the phase's pattern on the worker's files until its amount is done.
/// `progress` is the worker's progress counter (bytes of a data phase, ops of a fileset phase),
/// read by the runner every 50 ms.
///
/// The one entry point for every worker thread: the source (a data file or fileset slots) and
/// the engine are made here, before the barrier, and [`drive`] runs the loop.
pub fn run<E: IoEngine>(
    plan: &mut WorkerPlan<'_>,
    options: &E::Options,
    barrier: &Barrier,
    stop: &StopFlags<'_>,
    progress: &AtomicU64,
) -> WorkerOutput {
    let (phase, seed, compress_percent) = (plan.phase, plan.seed, plan.compress_percent);
    let ot = plan.over_time;
    // fio's nice, prio and cpus_allowed: set on this thread once, before the barrier.
    if !phase.sched.is_none() {
        if let Err(e) = super::sched::apply(&phase.sched, plan.thread_index) {
            return failed(e, barrier, stop, ot.flow);
        }
    }
    match &mut plan.work {
        Work::File(f) => {
            let depth = plan.iodepth.max(1);
            match E::setup(depth, options) {
                Ok(e) => {
                    let mut src =
                        FileOps::new(e, phase, f, seed, compress_percent, depth, progress);
                    src.dir_pace = DirPacer::of(&ot.pace, stop.phase);
                    match src.register_buffers() {
                        Ok(()) => drive::<E, _>(&mut src, barrier, stop, &ot),
                        Err(e) => setup_failed::<E>(e, barrier, stop, ot.flow),
                    }
                }
                Err(e) => setup_failed::<E>(e, barrier, stop, ot.flow),
            }
        }
        Work::Slots(w) => match E::setup(1, options) {
            Ok(e) => {
                let mut src = SlotOps::new(e, phase, w, seed, compress_percent);
                // A fileset's ops are timed inside the source: paced, but no series.
                let ot = OverTime { series: None, ..ot };
                drive::<E, _>(&mut src, barrier, stop, &ot)
            }
            Err(e) => setup_failed::<E>(e, barrier, stop, ot.flow),
        },
    }
}

/// An engine that could not be set up: wait with the others, then fail the phase (and leave
/// its flow, whose other threads would wait for it to start).
fn setup_failed<E: IoEngine>(
    e: std::io::Error,
    barrier: &Barrier,
    stop: &StopFlags<'_>,
    flow: Option<super::flow::FlowPlan<'_>>,
) -> WorkerOutput {
    failed(engine_setup_error(E::NAME, &e), barrier, stop, flow)
}

/// A worker that could not be set up (its engine, or its scheduling): wait with the others,
/// then fail the phase with `error` (and leave its flow, whose other threads would wait for it
/// to start).
fn failed(
    error: EngineError,
    barrier: &Barrier,
    stop: &StopFlags<'_>,
    flow: Option<super::flow::FlowPlan<'_>>,
) -> WorkerOutput {
    barrier.wait();
    if let Some(f) = flow {
        f.never_started();
    }
    stop.phase.store(true, Ordering::Relaxed);
    let start = Instant::now();
    let cpu0 = CpuSample::thread_now();
    let cpu1 = CpuSample::thread_now();
    WorkerOutput {
        end: Instant::now(),
        cpu: cpu1.since(cpu0),
        rusage: cpu1.counts_since(cpu0),
        error: Some(error),
        ..WorkerOutput::at(start)
    }
}

/// Why engine `name` could not be set up. The kernel refusing what the test asks of the engine
/// (io_uring disabled or filtered, SQ polling without the privilege, a ring or buffers it will
/// not lock) is the test's to change ([`EngineError::Unsupported`]); anything else failed while
/// setting up.
#[cold]
fn engine_setup_error(name: &str, e: &std::io::Error) -> EngineError {
    let what = format!("setting up engine {name}");
    let refused = matches!(
        e.raw_os_error(),
        Some(libc::EPERM | libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP | libc::ENOMEM)
    );
    if refused || e.kind() == std::io::ErrorKind::Unsupported {
        return EngineError::unsupported(format!("{what}: {e}"));
    }
    EngineError::setup(what, e)
}

/// The worker loop, for every source and engine.
///
/// Issue ops while fewer than `depth` requests are in flight (a source whose ops complete
/// inside `issue` never has any in flight), commit, reap at least one, read the clock once, and
/// hand each completion to the source, which records its latency from its queueing to that
/// clock read. Stop flags are polled before every op.
///
/// Over time (`ot`): a paced worker takes each op's start from its schedule
/// ([`Pacer::next_start`], which sleeps when ahead) and the op's latency runs from there; the
/// interval series closes an interval when a reap's clock passes its end, before the
/// completions of that reap are recorded in the next.
#[inline(always)]
fn drive<E: IoEngine, S: OpSource<E>>(
    src: &mut S,
    barrier: &Barrier,
    stop: &StopFlags<'_>,
    ot: &OverTime<'_>,
) -> WorkerOutput {
    // An engine of depth 1 keeps one request in flight whatever the test says: a constant, so
    // the loop below compiles to queue-then-reap.
    let depth = if E::CAPS.max_depth == 1 { 1 } else { src.depth() };
    let mut comps = vec![Completion::default(); depth];
    // Its histograms are allocated here too; the times are set after the barrier.
    let mut out = WorkerOutput::at(Instant::now());
    if let Some(sp) = ot.series {
        out.series = SeriesRecorder::new(sp.interval_nanos, sp.cap);
    }
    if src.splits_latency() {
        out.split = Some(Box::default());
    }
    if let Some(expected) = src.logs_ops() {
        out.op_log = Some(Box::new(OpRecorder::new(expected)));
    }
    let mut pacer = Pacer::new(ot.pace).with_flow(ot.flow);

    barrier.wait();
    pacer.join_flow();
    let cpu0 = CpuSample::thread_now();
    let start = Instant::now();
    let start_ns = now_ns();
    (out.start, out.end) = (start, start);
    if let Some(sp) = ot.series {
        out.series.start(sp.origin, start_ns);
    }
    pacer.start(start_ns);
    if let Some(r) = out.op_log.as_deref_mut() {
        r.start(start_ns);
    }
    let Some(mut t0) = src.begin(start_ns, &mut out) else {
        stop.phase.store(true, Ordering::Relaxed);
        out.end = Instant::now();
        out.usage_since(cpu0);
        return out;
    };
    let mut inflight = 0usize;
    // A stop flag or a failure ended the issuing; in-flight requests are still reaped.
    let mut stopped = false;
    loop {
        let mut ended = false;
        while !stopped && inflight < depth {
            if stop.phase.load(Ordering::Relaxed) || stop.signal.load(Ordering::Relaxed) {
                out.interrupted = true;
                stopped = true;
                break;
            }
            let mut stamp = t0;
            if pacer.on {
                match pacer.next_start(t0, inflight) {
                    Some(s) => stamp = s,
                    None => {
                        // Not yet (reap first, or ask again); expired: its next op would
                        // start after the phase's time, which is the end.
                        ended |= pacer.expired;
                        break;
                    }
                }
            }
            let issued = src.issue(inflight, stamp, &mut out);
            // No new clock read: the source's own, if it read one since the last reap.
            t0 = t0.max(src.clock());
            match issued {
                Issue::Queued => {
                    inflight += 1;
                    out.depths.level[DepthCounts::level_bucket(inflight)] += 1;
                    if !E::SUBMITS_APART {
                        // fio's engines without a commit: each op one submission of one.
                        out.depths.submit[1] += 1;
                    }
                    if pacer.on {
                        pacer.issued();
                    }
                }
                Issue::Done => {
                    if pacer.on {
                        pacer.issued();
                    }
                }
                Issue::Wait => break,
                Issue::End => {
                    ended = true;
                    stopped = out.error.is_some();
                    break;
                }
            }
        }
        if inflight == 0 && (stopped || ended) {
            break;
        }
        if inflight == 0 {
            continue; // a Wait with nothing in flight: the source issues on the next call
        }
        let eng = src.engine();
        let n = match eng.commit().and_then(|()| eng.reap(1, &mut comps)) {
            Ok(n) => n,
            Err(e) => {
                out.error.get_or_insert_with(|| reap_error(E::NAME, &e));
                break;
            }
        };
        let t1 = now_ns();
        out.depths.complete[DepthCounts::count_bucket(n)] += 1;
        if out.series.due(t1) {
            out.series.roll(t1, out.bytes_read, out.bytes_written, &out.hist);
        }
        for c in &comps[..n] {
            inflight -= 1;
            if !src.complete(*c, t1, &mut out) {
                stopped = true;
            }
        }
        src.reaped(t1, &out);
        t0 = t1;
    }
    let clean = out.error.is_none() && !out.interrupted;
    if out.error.is_some() {
        stop.phase.store(true, Ordering::Relaxed);
    }
    let t_end = src.finish(t0, clean, &mut out);
    if out.error.is_some() {
        stop.phase.store(true, Ordering::Relaxed);
    }
    let mut series = std::mem::take(&mut out.series);
    series.finish(t_end, &out);
    out.series = series;
    out.paced_ops = pacer.issued;
    out.end = Instant::now();
    out.usage_since(cpu0);
    out
}

/// Why reaping from engine `name` failed: a device that cannot do what the test asks (polled
/// completions without poll queues) is the test's to change.
#[cold]
fn reap_error(name: &str, e: &std::io::Error) -> EngineError {
    let what = format!("reaping completions from engine {name}");
    if e.kind() == std::io::ErrorKind::Unsupported {
        return EngineError::unsupported(format!("{what}: {e}"));
    }
    EngineError::io(what, None, e)
}

/// Record a completed op `s` (`res` its result, `t1` the clock at its reap, `d` its latency,
/// `apart` whether its submission was timed apart) in a per-I/O log: out of line, so a phase
/// without one keeps its loop as it was; a data op only (fio logs no sync).
#[inline(never)]
fn log_op(r: &mut OpRecorder, s: &InFlight, res: i64, t1: u64, d: u64, apart: bool) {
    if s.kind.is_data() {
        let slat =
            if apart { s.sub.saturating_sub(s.stamp) } else { crate::model::oplog::NOT_APART };
        let bytes = u32::try_from(res).unwrap_or(u32::MAX);
        r.push(t1, d, slat, s.off, bytes, s.kind == OpKind::Write);
    }
}

/// How a data file is opened: read-write when the phase writes or creates, and the phase's
/// flags (and `O_NOFOLLOW` for a file the job names).
fn open_options(o: &OpenFlags, writes: bool, nofollow: bool) -> OpenOptions {
    let mut oo = OpenOptions::new();
    oo.read(true).write(writes || o.create || o.trunc || o.append);
    oo.create(o.create).truncate(o.trunc).append(o.append);
    let mut custom = 0;
    if o.dsync {
        custom |= libc::O_DSYNC;
    }
    if o.sync {
        custom |= libc::O_SYNC;
    }
    if o.direct {
        custom |= libc::O_DIRECT;
    }
    if nofollow {
        custom |= libc::O_NOFOLLOW;
    }
    oo.custom_flags(custom);
    oo
}

/// A request in flight: what the completion needs to account for it.
#[derive(Clone, Copy)]
struct InFlight {
    kind: OpKind,
    len: usize,
    off: u64,
    /// When it was queued (ns): its latency runs from here to the reap that returned it.
    stamp: u64,
    /// Engines that submit apart: when the call that submitted it returned (ns; `stamp` until
    /// then).
    sub: u64,
}

/// [`InFlight::sub`] of a request submitted by the call that also waited for completions:
/// its submission's return is not known apart, and no submission latency is recorded.
const NOT_APART: u64 = u64::MAX;

/// Where a data file's periodic sync is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SyncState {
    /// Not due.
    Idle,
    /// Due: queued once the queue is empty.
    Due(SyncCall),
    /// Queued: nothing else is queued until the next reap.
    Alone,
}

/// The request kind of a sync call.
#[inline(always)]
fn sync_io(call: SyncCall) -> IoKind {
    match call {
        SyncCall::Fsync => IoKind::Fsync,
        SyncCall::Fdatasync => IoKind::Fdatasync,
        SyncCall::Syncfs => IoKind::Syncfs,
    }
}

/// A data file's ops: reads, writes and syncs queued on one open file (or on the one of a
/// worker's several files the service picks for each op, fio's `nrfiles`).
///
/// Amounts are counted as ops are queued (bytes, ops, passes) or completed (seconds), so a
/// deeper queue does the same work. A sync (periodic or in the pattern) waits until the queue
/// is empty, so it covers every write before it.
pub(super) struct FileOps<'a, E: IoEngine> {
    /// Declared first: dropped (finishing any request still in flight) before the buffers.
    engine: E,
    phase: &'a PhaseDef,
    pattern: &'a [OpDef],
    work: &'a FileWork<'a>,
    options: OpenOptions,
    file: Option<OwnedFd>,
    fd: RawFd,
    /// One read buffer per queue slot, each `stride` bytes, page-aligned.
    rbuf: AlignedBuf,
    stride: usize,
    pool: WritePool,
    verified: bool,
    rng: fastrand::Rng,
    /// The phase's random map (`random_map`): random offsets each once per pass.
    map: Option<RandomMap>,
    /// The phase's skewed distribution (`random_distribution`), its tables made at setup.
    skew: Option<Skew>,
    /// Per queue slot (the request's tag): what is in flight there.
    slots: Box<[InFlight]>,
    /// Free queue slots: a stack of `nfree` tags (unused by engines of depth 1: tag 0).
    free: Box<[u32]>,
    nfree: usize,
    progress: &'a AtomicU64,
    /// End of a timed amount (ns), else `u64::MAX`.
    deadline: u64,
    /// Next marks (cumulative bytes / writes) at which the periodic sync is due.
    sync_at_bytes: u64,
    sync_at_ops: u64,
    /// Where the periodic sync is.
    sync_state: SyncState,
    writes: u64,
    /// The next sequential offset in the region: `[0]` of every sequential entry, `[1]` of the
    /// writes of a mixed sequential read (fio's `rw=rw` keeps a position per direction).
    seq_pos: [u64; 2],
    passes: u32,
    last_off: u64,
    issued_ops: u64,
    issued_bytes: u64,
    /// Index of the next pattern op.
    i: usize,
    /// The amount is queued (or the time is up): only a due sync is still issued.
    done: bool,
    /// A pass ended and `invalidate_each_pass` asks for its file's pages to be dropped.
    drop_due: bool,
    /// A pass ended and `unlink_each_pass` asks for the file to be unlinked and opened again.
    reopen_due: bool,
    /// Bytes of random ops since the last pass ended (`invalidate_each_pass` without a map).
    random_bytes: u64,
    /// A fill phase (`Amount::Fill`, fio's `fill_device`): sequential writes go on past the
    /// region's end, and ENOSPC (or EDQUOT) ends the phase normally (`out.enospc`).
    fill: bool,
    /// A mixed phase's reads and writes each on its own schedule (fio's `rate=R,W`).
    dir_pace: Option<DirPacer<'a>>,
    /// The phase's `random_percent` (fio's `percentage_random`), `[reads, writes]`: 100 draws
    /// nothing.
    random_percent: [u8; 2],
    /// Where the thread's last read (`[0]`) and write (`[1]`) ended, in the file (fio's
    /// `last_pos`): a random-offset op drawn sequential by `random_percent` starts there.
    last_end: [u64; 2],
    /// The worker's files when it has several (fio's `nrfiles`; empty with one): the current
    /// one's `fd`, sequential positions and random map are the fields above, the others'
    /// wait here ([`FileOps::switch_file`]).
    files: Box<[OneFile]>,
    /// Index of the current file in `files`.
    cur: usize,
    /// Which file the next op goes to.
    service: FileService,
    /// Ops left on the current file before the service picks the next (round robin, random).
    left: u32,
    /// Files done in this pass (each has had its size of ops).
    done_files: usize,
    /// Engines that submit apart: the tags of the requests queued and not yet known to be
    /// submitted, oldest first (a ring of `sub_len` tags from `sub_head`; empty otherwise).
    sub_fifo: Box<[u32]>,
    sub_head: usize,
    sub_len: usize,
    /// The latest clock read while issuing ([`OpSource::clock`]): a submission's return, the
    /// end of a cache drop or a reopen.
    clock: u64,
}

/// One of a worker's several files: its open file and where its ops are, kept while another
/// file is current.
struct OneFile {
    file: Option<OwnedFd>,
    fd: RawFd,
    seq_pos: [u64; 2],
    map: Option<RandomMap>,
    /// Bytes issued on it in this pass: it is done at its size (fio's `fio_file_done`), and
    /// the service passes it over until every file is.
    bytes: u64,
}

impl<'a, E: IoEngine> FileOps<'a, E> {
    /// Everything the data loop needs, allocated now (before the barrier).
    fn new(
        engine: E,
        phase: &'a PhaseDef,
        work: &'a FileWork<'a>,
        seed: u64,
        compress_percent: u8,
        depth: u32,
        progress: &'a AtomicU64,
    ) -> FileOps<'a, E> {
        let pattern = phase.pattern.data();
        let writes = pattern.iter().any(|o| o.issues(OpKind::Write));
        let max_size = pattern.iter().map(|o| o.size.max()).max().unwrap_or(0).max(1) as usize;
        let depth = depth.max(1) as usize;
        let stride = max_size.div_ceil(super::buffer::ALIGN) * super::buffer::ALIGN;
        let pool = match work.verify {
            Some((vseed, file)) => WritePool::verified(max_size, depth, vseed, file),
            None => WritePool::new(max_size, compress_percent, seed),
        };
        let sync = phase.sync;
        // Validation gives a mapped phase's random ops one fixed size and one alignment.
        let map = phase
            .random_map
            .then(|| pattern.iter().find(|o| o.offset == OffsetMode::Random))
            .flatten()
            .map(|o| RandomMap::new(work.random_span().1, o.size.max(), o.align, seed ^ 0x7a9_3a9));
        // Validation gives a skewed phase's random ops one fixed size and one alignment too.
        let skew = phase.random_distribution.as_ref().and_then(|d| {
            let o = pattern.iter().find(|o| o.offset == OffsetMode::Random)?;
            let align = o.align.max(1);
            let slots = work.random_span().1.saturating_sub(o.size.max()) / align + 1;
            Some(Skew::new(d, slots, align, seed ^ 0x0005_ce3d))
        });
        FileOps {
            engine,
            phase,
            pattern,
            work,
            options: open_options(&phase.open, writes, work.nofollow),
            file: None,
            fd: -1,
            rbuf: AlignedBuf::new(stride * depth),
            stride,
            pool,
            verified: work.verify.is_some(),
            rng: fastrand::Rng::with_seed(seed),
            map,
            skew,
            slots: vec![InFlight { kind: OpKind::Read, len: 0, off: 0, stamp: 0, sub: 0 }; depth]
                .into(),
            sub_fifo: vec![0; if E::SUBMITS_APART { depth } else { 0 }].into(),
            sub_head: 0,
            sub_len: 0,
            clock: 0,
            free: (0..depth as u32).rev().collect(),
            nfree: depth,
            progress,
            deadline: u64::MAX,
            sync_at_bytes: sync.every_bytes.unwrap_or(u64::MAX),
            sync_at_ops: sync.every_ops.unwrap_or(u64::MAX),
            sync_state: SyncState::Idle,
            writes: 0,
            seq_pos: [0; 2],
            passes: 0,
            last_off: 0,
            issued_ops: 0,
            issued_bytes: 0,
            i: 0,
            done: false,
            drop_due: false,
            reopen_due: false,
            random_bytes: 0,
            fill: matches!(phase.amount, Amount::Fill(_)),
            dir_pace: None,
            random_percent: phase.random_percent.unwrap_or([100; 2]),
            last_end: [work.random_span().0; 2],
            files: more_files(work, pattern, phase.random_map, seed),
            cur: 0,
            service: work.more.map_or(FileService::RoundRobin(1), |m| m.service),
            left: match work.more.map(|m| m.service) {
                Some(FileService::RoundRobin(n) | FileService::Random(n)) => n,
                _ => 1,
            },
            done_files: 0,
        }
    }

    /// Hand the read buffers and the write pool to the engine (io_uring registers them with
    /// `fixedbufs`), before the barrier. The engine is the first field, so it is dropped (and
    /// any request still in flight finished) before the buffers are freed.
    fn register_buffers(&mut self) -> std::io::Result<()> {
        let reads = self.rbuf.as_mut_slice();
        let reads = (reads.as_mut_ptr(), reads.len());
        let bufs = [reads, self.pool.region()];
        self.engine.register_buffers(&bufs)
    }

    /// `invalidate_each_pass`: drop the file's cached pages after a pass, before the next op
    /// (once per pass, so out of the per-op path). Returns the clock after it: the next op
    /// starts then, so the drop is in no later op's latency (only in that of requests still
    /// in flight, as in fio's).
    #[cold]
    #[inline(never)]
    fn drop_cache(&mut self, out: &mut WorkerOutput) -> Result<u64, EngineError> {
        self.drop_due = false;
        if let Some(file) = self.file.as_ref() {
            rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed).map_err(|e| {
                EngineError::io("fadvise(DONTNEED)", Some(self.work.path.into()), &e.into())
            })?;
            out.invalidations += 1;
        }
        // Several files: every one's pages, one invalidation.
        if let Some(more) = self.work.more {
            for (f, path) in self.files.iter().zip(more.paths) {
                if let Some(file) = f.file.as_ref() {
                    rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed).map_err(
                        |e| EngineError::io("fadvise(DONTNEED)", Some(path.clone()), &e.into()),
                    )?;
                }
            }
            out.invalidations += 1;
        }
        self.clock = now_ns();
        Ok(self.clock)
    }

    /// `unlink_each_pass` (fio's `unlink_each_loop`): after a pass, once its ops have
    /// completed, close the file, unlink it and open it again with `O_CREAT` (empty, not laid
    /// out), then drop its pages (`invalidate_each_pass`) and give the hint (`fadvise_hint`),
    /// in fio's order. Once per pass, out of the per-op path. Returns the clock after it: the
    /// next op starts then, so none of it is in an op's latency.
    #[cold]
    #[inline(never)]
    fn reopen(&mut self, out: &mut WorkerOutput) -> Result<u64, EngineError> {
        self.reopen_due = false;
        let path = self.work.path;
        if let Some(file) = self.file.take() {
            self.engine.close(file).map_err(|e| {
                EngineError::io("close", Some(path.into()), &std::io::Error::from(e))
            })?;
        }
        rustix::fs::unlink(path)
            .map_err(|e| EngineError::io("unlink", Some(path.into()), &e.into()))?;
        let mut options = self.options.clone();
        options.create(true);
        let file = self
            .engine
            .open(path, &options)
            .map_err(|e| EngineError::io("open", Some(path.into()), &e))?;
        self.fd = file.as_raw_fd();
        self.file = Some(file);
        if self.drop_due {
            self.drop_cache(out)?;
        }
        if let Some(file) = self.file.as_ref() {
            advise(file, self.advice(), path)?;
        }
        self.clock = now_ns();
        Ok(self.clock)
    }

    /// The next free queue slot (a constant 0 for engines of depth 1).
    #[inline(always)]
    fn peek_tag(&self) -> u32 {
        if E::CAPS.max_depth == 1 {
            0
        } else {
            self.free[self.nfree - 1]
        }
    }

    #[inline(always)]
    fn take_tag(&mut self) -> u32 {
        if E::CAPS.max_depth == 1 {
            0
        } else {
            self.nfree -= 1;
            self.free[self.nfree]
        }
    }

    #[inline(always)]
    fn put_tag(&mut self, tag: u32) {
        if E::CAPS.max_depth != 1 {
            self.free[self.nfree] = tag;
            self.nfree += 1;
        }
    }

    /// The periodic sync: queued once the queue is empty, and alone (nothing is queued
    /// beside it before it is reaped).
    #[inline(never)]
    fn periodic_sync(&mut self, inflight: usize, t0: u64, out: &mut WorkerOutput) -> Issue {
        let call = match self.sync_state {
            SyncState::Due(call) if inflight == 0 => call,
            SyncState::Alone => {
                self.sync_state = SyncState::Idle;
                return Issue::Wait;
            }
            _ => return Issue::Wait,
        };
        self.sync_state = SyncState::Alone;
        let tag = self.take_tag();
        self.slots[tag as usize] =
            InFlight { kind: call.kind(), len: 0, off: 0, stamp: t0, sub: t0 };
        let io = Io {
            kind: sync_io(call),
            fd: self.fd,
            buf: std::ptr::null_mut(),
            len: 0,
            offset: 0,
            tag,
        };
        // SAFETY: a sync has no buffer; the file outlives every request.
        if let Err(e) = unsafe { self.engine.queue(io) } {
            out.error = Some(sync_error(call, e));
            self.put_tag(tag);
            return Issue::End;
        }
        if E::SUBMITS_APART {
            self.queued(tag, out);
        }
        Issue::Queued
    }

    /// `fadvise_hint` (fio's): the advice for each opened file, RANDOM when the pattern has
    /// random offsets, else SEQUENTIAL; `None` without the hint.
    fn advice(&self) -> Option<rustix::fs::Advice> {
        let random = self.pattern.iter().any(|o| o.offset == OffsetMode::Random);
        self.phase.fadvise_hint.then_some(if random {
            rustix::fs::Advice::Random
        } else {
            rustix::fs::Advice::Sequential
        })
    }

    /// Engines that submit apart: request `tag` was queued; if the call submitted requests,
    /// read the clock once and stamp them.
    #[inline(always)]
    fn queued(&mut self, tag: u32, out: &mut WorkerOutput) {
        let cap = self.sub_fifo.len();
        // A ring of at most `cap` tags: wrap by a comparison, not a division per op.
        let at = self.sub_head + self.sub_len;
        self.sub_fifo[if at >= cap { at - cap } else { at }] = tag;
        self.sub_len += 1;
        if self.engine.unsubmitted() < self.sub_len {
            self.submitted(now_ns(), out);
        }
    }

    /// Engines that submit apart: stamp the requests the last call submitted (the oldest of
    /// those not yet stamped, as many as the engine no longer holds unsubmitted) with `t`,
    /// the clock after that call's return.
    #[inline(always)]
    fn submitted(&mut self, t: u64, out: &mut WorkerOutput) {
        let cap = self.sub_fifo.len();
        let k = self.sub_len.saturating_sub(self.engine.unsubmitted());
        if k > 0 {
            out.depths.submit[DepthCounts::count_bucket(k)] += 1;
            if t != NOT_APART {
                self.clock = t;
            }
        }
        for _ in 0..k {
            let tag = self.sub_fifo[self.sub_head];
            self.slots[tag as usize].sub = t;
            self.sub_head = if self.sub_head + 1 == cap { 0 } else { self.sub_head + 1 };
        }
        self.sub_len -= k;
    }
}

/// Give `file` at `path` the `advice` of `fadvise_hint` (nothing when `None`): once per open,
/// never per op.
fn advise(
    file: &OwnedFd,
    advice: Option<rustix::fs::Advice>,
    path: &std::path::Path,
) -> Result<(), EngineError> {
    let Some(advice) = advice else {
        return Ok(());
    };
    rustix::fs::fadvise(file, 0, None, advice)
        .map_err(|e| EngineError::io("fadvise(RANDOM or SEQUENTIAL)", Some(path.into()), &e.into()))
}

/// Where a random-offset op that `random_percent` made sequential starts, and whether it
/// starts over: where the thread's previous op of its direction ended, `at` (fio's
/// `last_pos`); past the region's end fio draws a random offset instead (`None`), or, in a
/// time-based phase, starts over at the region's start (a pass, as fio's `loop_cache_invalidate`
/// there).
#[inline(always)]
pub(super) fn continue_at(
    at: u64,
    size: u64,
    (base, span): (u64, u64),
    timed: bool,
) -> Option<(u64, bool)> {
    if at >= base && at + size <= base + span {
        Some((at, false))
    } else if timed && size <= span {
        Some((base, true))
    } else {
        None
    }
}

/// Which sequential position an op of entry `op` uses: the writes of a mixed sequential
/// read (fio's `rw=rw`) have their own, as fio's `last_pos[ddir]`.
#[inline(always)]
fn seq_index(op: &OpDef, kind: OpKind) -> usize {
    usize::from(op.write_percent > 0 && kind == OpKind::Write)
}

impl<E: IoEngine> OpSource<E> for FileOps<'_, E> {
    #[inline(always)]
    fn engine(&mut self) -> &mut E {
        &mut self.engine
    }

    fn depth(&self) -> usize {
        self.slots.len()
    }

    #[inline(always)]
    fn clock(&self) -> u64 {
        self.clock
    }

    fn splits_latency(&self) -> bool {
        E::SUBMITS_APART
    }

    fn logs_ops(&self) -> Option<u64> {
        // A phase bound by bytes or ops: its count, at its smallest op.
        let smallest = self.pattern.iter().map(|o| o.size.min()).filter(|n| *n > 0).min();
        self.phase.op_log.then(|| match (self.phase.amount, smallest) {
            (Amount::Bytes(b), Some(bs)) => b.div_ceil(bs),
            (Amount::Ops(n), _) => n,
            _ => 0,
        })
    }

    fn begin(&mut self, start_ns: u64, out: &mut WorkerOutput) -> Option<u64> {
        if !self.files.is_empty() {
            return self.open_files(start_ns, out);
        }
        let file = match self.engine.open(self.work.path, &self.options) {
            Ok(f) => f,
            Err(e) => {
                out.error = Some(EngineError::io("open", Some(self.work.path.into()), &e));
                return None;
            }
        };
        let mut t0 = now_ns();
        out.hist.record(OpKind::Open, t0.saturating_sub(start_ns));
        if self.phase.fadvise_hint {
            // fio's fadvise_hint=1: after the open, outside the open's and the first op's time.
            if let Err(e) = advise(&file, self.advice(), self.work.path) {
                out.error = Some(e);
                return None;
            }
            t0 = now_ns();
        }
        self.fd = file.as_raw_fd();
        self.file = Some(file);
        if let Amount::Seconds(s) = self.phase.amount {
            self.deadline = start_ns.saturating_add((s * 1e9) as u64);
        }
        if let Some(p) = self.dir_pace.as_mut() {
            p.start(start_ns);
        }
        Some(t0)
    }

    #[inline(always)]
    fn issue(&mut self, inflight: usize, t0: u64, out: &mut WorkerOutput) -> Issue {
        if self.sync_state != SyncState::Idle {
            if self.done && self.phase.sync.before_next && self.sync_state != SyncState::Alone {
                // fio's: the sync would go before a next write, and there is none.
                self.sync_state = SyncState::Idle;
                return Issue::End;
            }
            return self.periodic_sync(inflight, t0, out);
        }
        if self.done {
            return Issue::End;
        }
        let mut t0 = t0;
        if self.reopen_due {
            if inflight > 0 {
                return Issue::Wait;
            }
            match self.reopen(out) {
                Ok(t) => t0 = t,
                Err(e) => {
                    out.error = Some(e);
                    return Issue::End;
                }
            }
        }
        if self.drop_due {
            // A time-based phase on one file drops at the wrap, with the pass's last requests
            // still in flight (fio's `get_next_seq_offset` and `get_next_rand_block`, so the
            // drop is in their completion latency, as in fio's); any other waits for them,
            // as fio's loops end before the next one drops the file's pages.
            let at_wrap = matches!(self.phase.amount, Amount::Seconds(_)) && self.files.is_empty();
            if inflight > 0 && !at_wrap {
                return Issue::Wait;
            }
            match self.drop_cache(out) {
                Ok(t) => t0 = t,
                Err(e) => {
                    out.error = Some(e);
                    return Issue::End;
                }
            }
        }
        let op = &self.pattern[self.i];
        // A mixed read is a write with its `write_percent` probability (fio's randrw).
        let mut op_kind = if op.write_percent > 0 && self.rng.u8(0..100) < op.write_percent {
            OpKind::Write
        } else {
            op.kind
        };
        if let Some(p) = self.dir_pace.as_mut().filter(|_| op_kind.is_data()) {
            // Each direction on its own schedule: the op may go the other way (fio's).
            let mixed = op.write_percent > 0 && op.write_percent < 100;
            match p.pick(op_kind == OpKind::Write, mixed, t0, inflight) {
                Pick::Go { write, stamp } => {
                    if stamp >= self.deadline {
                        self.done = true;
                        return Issue::End;
                    }
                    op_kind = if write { OpKind::Write } else { OpKind::Read };
                    p.issued(write);
                    t0 = stamp;
                }
                Pick::Reap | Pick::Stopped => return Issue::Wait,
            }
        }
        // A random-offset op that `random_percent` made sequential, and where it starts.
        let mut sequential = None;
        let (kind, len, off, buf, stamp) = match op_kind {
            OpKind::Read | OpKind::Write => {
                let mut size = match op.size {
                    SizeDist::Fixed(n) => n,
                    ref d => d.sample(&mut self.rng),
                };
                let off = match op.offset {
                    OffsetMode::Sequential => {
                        let pos = self.seq_pos[seq_index(op, op_kind)];
                        if !self.fill {
                            size = size.min(self.work.region_len - pos);
                        }
                        self.work.region_start + pos
                    }
                    OffsetMode::Random => {
                        let (base, span) = self.work.random_span();
                        let d = usize::from(op_kind == OpKind::Write);
                        let share = self.random_percent[d];
                        // fio's percentage_random: one draw, only when some ops are sequential.
                        if share < 100 && self.rng.u8(0..100) >= share {
                            let timed = matches!(self.phase.amount, Amount::Seconds(_));
                            sequential = continue_at(self.last_end[d], size, (base, span), timed);
                        }
                        if let Some((at, _)) = sequential {
                            at
                        } else {
                            base + match &mut self.map {
                                Some(m) => m.next_offset(),
                                None => match &self.skew {
                                    Some(s) => s.next_slot(&mut self.rng) * op.align,
                                    None => {
                                        let slots = (span - size) / op.align;
                                        self.rng.u64(0..=slots) * op.align
                                    }
                                },
                            }
                        }
                    }
                    OffsetMode::Last => self.last_off,
                };
                let len = size as usize;
                let slot = self.peek_tag() as usize;
                if op_kind == OpKind::Read {
                    // SAFETY: slot `slot`'s window lies inside `rbuf` (depth × stride).
                    let p =
                        unsafe { self.rbuf.as_mut_slice().as_mut_ptr().add(slot * self.stride) };
                    (IoKind::Read, len, off, p, t0)
                } else if !self.verified {
                    let p = self.pool.window_at(slot, off, len).as_ptr() as *mut u8;
                    (IoKind::Write, len, off, p, t0)
                } else {
                    // Verified data is made here, inside the phase: timed on its own and kept
                    // out of the write's latency.
                    let a = now_ns();
                    let p = self.pool.window_at(slot, off, len).as_ptr() as *mut u8;
                    let b = now_ns();
                    out.verify_nanos += b - a;
                    (IoKind::Write, len, off, p, t0 + (b - a))
                }
            }
            OpKind::Fsync | OpKind::Fdatasync => {
                if inflight > 0 {
                    return Issue::Wait;
                }
                let k = if op_kind == OpKind::Fsync { IoKind::Fsync } else { IoKind::Fdatasync };
                (k, 0usize, 0u64, std::ptr::null_mut(), t0)
            }
            _ => unreachable!("validation admits only data and sync ops in a data pattern"),
        };
        let tag = self.take_tag();
        self.slots[tag as usize] = InFlight { kind: op_kind, len, off, stamp, sub: stamp };
        let io = Io { kind, fd: self.fd, buf, len, offset: off, tag };
        // SAFETY: `buf` is slot `tag`'s part of `rbuf` (reads) or a window of `pool` (writes,
        // never written to while in flight), both alive and unmoved until the source is
        // dropped (after the engine), and the slot is not reused before its completion is
        // reaped; the file stays open until `finish`.
        if let Err(e) = unsafe { self.engine.queue(io) } {
            out.error = Some(queue_error(op_kind, len, off, &e));
            self.put_tag(tag);
            return Issue::End;
        }
        if E::SUBMITS_APART {
            self.queued(tag, out);
        }
        self.i += 1;
        if self.i == self.pattern.len() {
            self.i = 0;
        }
        self.issued_ops += 1;
        if op.kind.is_data() {
            self.issued_bytes += len as u64;
            self.last_off = off;
            self.last_end[usize::from(op_kind == OpKind::Write)] = off + len as u64;
            let wrapped = match op.offset {
                OffsetMode::Sequential => {
                    let d = seq_index(op, op_kind);
                    let pos = off - self.work.region_start;
                    // A fill writes on past the region's end (validation: no skip).
                    let (next, wrap) = if self.fill {
                        (pos + len as u64, Wrap::No)
                    } else {
                        next_sequential(pos, len as u64, op.skip, self.work.region_len)
                    };
                    self.seq_pos[d] = next;
                    // A skip past either end of the region wraps too: a pass for the amount
                    // (so `passes` ends), but only reaching the end drops the cache (as fio).
                    if wrap != Wrap::No {
                        self.passes += 1;
                    }
                    wrap == Wrap::End
                }
                // Sequential by `random_percent`: a pass ends only when it starts over.
                OffsetMode::Random if sequential.is_some() => {
                    sequential.is_some_and(|(_, over)| over)
                }
                OffsetMode::Random => match &self.map {
                    Some(m) => m.pass_done(),
                    // Without a map a pass is the file's size in bytes (as fio counts it).
                    None if self.phase.invalidate_each_pass || self.phase.unlink_each_pass => {
                        self.random_bytes += len as u64;
                        let wrap = self.random_bytes >= self.work.random_span().1;
                        if wrap {
                            self.random_bytes = 0;
                        }
                        wrap
                    }
                    None => false,
                },
                OffsetMode::Last => false,
            };
            // Several files: the next op's file, and a pass is every file done (as fio's loop
            // over a job's files ends when each is done).
            let wrapped = if self.files.is_empty() { wrapped } else { self.next_file(len as u64) };
            // Done before the next op (see `issue`).
            self.drop_due = wrapped && self.phase.invalidate_each_pass;
            self.reopen_due = wrapped && self.phase.unlink_each_pass;
        }
        let done = match self.phase.amount {
            Amount::Bytes(b) => self.issued_bytes >= b,
            Amount::Ops(k) => self.issued_ops >= k,
            Amount::Seconds(_) => false,
            // The rest of the pattern cycle still runs (a rewrite's write after the read that
            // completed the pass).
            Amount::Passes(p) => self.passes >= p && self.i == 0,
            // Until ENOSPC: see `complete`.
            Amount::Fill(_) => false,
            Amount::Share(_) => unreachable!("validation admits share only for filesets"),
        };
        self.done = done;
        Issue::Queued
    }

    #[inline(always)]
    fn complete(&mut self, c: Completion, t1: u64, out: &mut WorkerOutput) -> bool {
        if E::SUBMITS_APART && self.sub_len > 0 {
            // Submitted inside the commit or reap that returned this completion: its return is
            // the clock read after it, unknown when the submission went in with the wait.
            let t = if self.engine.submitted_with_wait() { NOT_APART } else { t1 };
            self.submitted(t, out);
        }
        let s = self.slots[c.tag as usize];
        self.put_tag(c.tag);
        if out.error.is_some() {
            return false; // draining after a failure
        }
        if c.res < 0 || (c.res == 0 && s.len > 0) {
            if self.fill && s.kind == OpKind::Write && is_full(c.res) {
                // The filesystem is full: the fill's end, not a failure (fio's fill_device).
                out.enospc = true;
                self.done = true;
                return true;
            }
            out.error = Some(completion_error(s, c.res));
            self.sync_state = SyncState::Idle;
            return false;
        }
        let d = t1.saturating_sub(s.stamp);
        out.hist.record(s.kind, d);
        out.series.record(s.kind, d);
        let apart = E::SUBMITS_APART && s.kind.is_data() && s.sub != NOT_APART;
        if let (true, Some(r)) = (apart, out.split.as_deref_mut()) {
            let (write, slat, clat) =
                (s.kind == OpKind::Write, s.sub.saturating_sub(s.stamp), t1.saturating_sub(s.sub));
            r.record(write, slat, clat);
            out.series.record_split(write, slat, clat);
        }
        if let Some(r) = out.op_log.as_deref_mut() {
            log_op(r, &s, c.res, t1, d, apart);
        }
        match s.kind {
            OpKind::Read => {
                out.data_ops += 1;
                out.bytes_read += c.res as u64;
            }
            OpKind::Write => {
                out.data_ops += 1;
                out.bytes_written += c.res as u64;
                self.writes += 1;
                if out.bytes_written >= self.sync_at_bytes || self.writes >= self.sync_at_ops {
                    self.sync_due(out.bytes_written);
                }
            }
            _ => out.sync_nanos += d,
        }
        true
    }

    #[inline(always)]
    fn reaped(&mut self, t1: u64, out: &WorkerOutput) {
        self.progress.store(out.bytes_read + out.bytes_written, Ordering::Relaxed);
        if t1 >= self.deadline {
            self.done = true;
        }
    }

    fn finish(&mut self, t0: u64, clean: bool, out: &mut WorkerOutput) -> u64 {
        if !self.files.is_empty() {
            return self.close_files(t0, clean, out);
        }
        let Some(file) = self.file.take() else { return t0 };
        let t0 = if clean { self.end_sync(self.fd, t0, out) } else { t0 };
        // close() is part of the timed phase: NFS and some FUSE filesystems flush on close.
        let close_err = self.engine.close(file);
        let end = now_ns();
        out.hist.record(OpKind::Close, end.saturating_sub(t0));
        if let (None, Err(e)) = (&out.error, close_err) {
            out.error = Some(EngineError::io("close", None, &std::io::Error::from(e)));
        }
        end
    }
}

impl<E: IoEngine> FileOps<'_, E> {
    /// The phase's end-of-phase sync (`sync.at_end`, fio's `end_fsync`) of the file `fd`, if
    /// it asks for one: queued alone, reaped, and timed from `t0`. Returns the clock after it.
    fn end_sync(&mut self, fd: RawFd, mut t0: u64, out: &mut WorkerOutput) -> u64 {
        if let Some(call) = self.phase.sync.at_end {
            let io = Io {
                kind: sync_io(call),
                fd,
                buf: std::ptr::null_mut(),
                len: 0,
                offset: 0,
                tag: 0,
            };
            let mut comps = [Completion::default()];
            // SAFETY: a sync has no buffer; the queue is empty and the file is open.
            let r = unsafe { self.engine.queue(io) }
                .and_then(|()| self.engine.commit())
                .and_then(|()| self.engine.reap(1, &mut comps));
            let r = match r {
                Ok(1) if comps[0].res >= 0 => Ok(()),
                Ok(1) => Err(std::io::Error::from_raw_os_error((-comps[0].res) as i32)),
                Ok(_) => Err(std::io::Error::other("the engine returned no completion")),
                Err(e) => Err(e),
            };
            match r {
                Ok(()) => {
                    let t1 = now_ns();
                    let d = t1.saturating_sub(t0);
                    out.hist.record(call.kind(), d);
                    out.sync_nanos += d;
                    t0 = t1;
                }
                Err(e) => out.error = Some(sync_error(call, e)),
            }
        }
        t0
    }

    /// Several files (fio's `nrfiles`): open each in order at the timed start, each open
    /// timed on its own (and advised, with `fadvise_hint`, outside its time), as the one file
    /// is; the first is current. `None` after setting `out.error` (the files opened so far are
    /// closed when the source is dropped).
    #[cold]
    #[inline(never)]
    fn open_files(&mut self, start_ns: u64, out: &mut WorkerOutput) -> Option<u64> {
        let more = self.work.more?; // `files` is not empty only with `more`
        let mut t0 = start_ns;
        let advice = self.advice();
        for (f, path) in self.files.iter_mut().zip(more.paths) {
            let file = match self.engine.open(path, &self.options) {
                Ok(file) => file,
                Err(e) => {
                    out.error = Some(EngineError::io("open", Some(path.clone()), &e));
                    return None;
                }
            };
            let t1 = now_ns();
            out.hist.record(OpKind::Open, t1.saturating_sub(t0));
            t0 = t1;
            if self.phase.fadvise_hint {
                if let Err(e) = advise(&file, advice, path) {
                    out.error = Some(e);
                    return None;
                }
                t0 = now_ns();
            }
            f.fd = file.as_raw_fd();
            f.file = Some(file);
        }
        self.fd = self.files[0].fd;
        if let Amount::Seconds(s) = self.phase.amount {
            self.deadline = start_ns.saturating_add((s * 1e9) as u64);
        }
        if let Some(p) = self.dir_pace.as_mut() {
            p.start(start_ns);
        }
        Some(t0)
    }

    /// Several files: each file's end-of-phase sync when the phase ends cleanly (fio's
    /// `end_fsync` syncs each of a job's files), and each one's close, in order, each timed.
    #[cold]
    #[inline(never)]
    fn close_files(&mut self, mut t0: u64, clean: bool, out: &mut WorkerOutput) -> u64 {
        for i in 0..self.files.len() {
            let Some(file) = self.files[i].file.take() else { continue };
            if clean {
                t0 = self.end_sync(file.as_raw_fd(), t0, out);
            }
            let close_err = self.engine.close(file);
            let end = now_ns();
            out.hist.record(OpKind::Close, end.saturating_sub(t0));
            t0 = end;
            if let (None, Err(e)) = (&out.error, close_err) {
                out.error = Some(EngineError::io("close", None, &std::io::Error::from(e)));
            }
        }
        t0
    }

    /// Several files: after a data op of `len` bytes on the current file, which file the next
    /// op goes to (fio's `get_next_file`): the current one until it has had its N ops (round
    /// robin, random) or is done (its size of ops in this pass; sequential: only then), then
    /// the next file in order that is not done, or a uniform draw among those not done
    /// (random). When every file is done the pass ends (`true`) and all start again. An index
    /// update and an array lookup (a draw for random); no allocation.
    #[inline(always)]
    fn next_file(&mut self, len: u64) -> bool {
        let n = self.files.len();
        let size = self.work.file_size;
        let f = &mut self.files[self.cur];
        let was_done = f.bytes >= size;
        f.bytes += len;
        let done = f.bytes >= size;
        if done && !was_done {
            self.done_files += 1;
        }
        let stay = match self.service {
            FileService::Sequential => !done,
            FileService::RoundRobin(_) | FileService::Random(_) => {
                self.left -= 1;
                self.left > 0 && !done
            }
        };
        if stay {
            return false;
        }
        if let FileService::RoundRobin(k) | FileService::Random(k) = self.service {
            self.left = k;
        }
        let pass = self.done_files == n;
        if pass {
            // Every file is done: a new pass over all of them.
            for f in self.files.iter_mut() {
                f.bytes = 0;
            }
            self.done_files = 0;
        }
        let mut next = match self.service {
            FileService::Random(_) => self.rng.usize(0..n),
            _ => (self.cur + 1) % n,
        };
        // Pass over the files done in this pass (one is not: the pass would have ended).
        while self.files[next].bytes >= size {
            next = match self.service {
                FileService::Random(_) => self.rng.usize(0..n),
                _ => (next + 1) % n,
            };
        }
        if next != self.cur {
            self.switch_file(next);
        }
        pass
    }

    /// Make file `next` current: the current one's sequential positions and random map go
    /// back to its slot, `next`'s come out of its (a swap of plain values, no allocation).
    #[inline(always)]
    fn switch_file(&mut self, next: usize) {
        let cur = self.cur;
        self.files[cur].seq_pos = self.seq_pos;
        std::mem::swap(&mut self.map, &mut self.files[cur].map);
        let f = &mut self.files[next];
        self.fd = f.fd;
        self.seq_pos = f.seq_pos;
        std::mem::swap(&mut self.map, &mut f.map);
        self.cur = next;
    }
}

/// The slots of a worker's several files ([`FileWork::more`]; empty for one file), made
/// before the barrier: none open yet, each at its start, each but the first with a random map
/// of its own when the phase has one (the first's is [`FileOps::map`], current).
fn more_files(work: &FileWork<'_>, pattern: &[OpDef], mapped: bool, seed: u64) -> Box<[OneFile]> {
    let Some(more) = work.more else { return Box::default() };
    let random = pattern.iter().find(|o| o.offset == OffsetMode::Random);
    (0..more.paths.len())
        .map(|i| OneFile {
            file: None,
            fd: -1,
            seq_pos: [0; 2],
            bytes: 0,
            map: random.filter(|_| mapped && i > 0).map(|o| {
                let s = seed ^ 0x7a9_3a9 ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                RandomMap::new(work.random_span().1, o.size.max(), o.align, s)
            }),
        })
        .collect()
}

impl<E: IoEngine> FileOps<'_, E> {
    /// A write reached a periodic sync mark: queue the sync once the queue drains, and move
    /// the marks past what is written.
    #[inline(never)]
    fn sync_due(&mut self, written: u64) {
        let sync = self.phase.sync;
        if let Some(call) = sync.call {
            self.sync_state = SyncState::Due(call);
        }
        while self.sync_at_bytes <= written {
            self.sync_at_bytes =
                self.sync_at_bytes.saturating_add(sync.every_bytes.unwrap_or(u64::MAX));
        }
        while self.sync_at_ops <= self.writes {
            self.sync_at_ops = self.sync_at_ops.saturating_add(sync.every_ops.unwrap_or(u64::MAX));
        }
    }
}

/// Whether a write's result says the filesystem (or the user's quota) is full: ENOSPC,
/// EDQUOT, or a write of no bytes.
#[cold]
fn is_full(res: i64) -> bool {
    res == 0 || res == -i64::from(libc::ENOSPC) || res == -i64::from(libc::EDQUOT)
}

/// The error of a failed completion.
#[cold]
fn completion_error(s: InFlight, res: i64) -> EngineError {
    let what = if s.kind.is_data() {
        format!("{} of {} bytes at offset {}", s.kind.name(), s.len, s.off)
    } else {
        s.kind.name().to_string()
    };
    if res < 0 {
        return EngineError::io(what, None, &std::io::Error::from_raw_os_error((-res) as i32));
    }
    EngineError::Io { op: what, path: None, errno: None, reason: "unexpected end of file".into() }
}

/// The error of a request the engine would not queue.
#[cold]
fn queue_error(kind: OpKind, len: usize, off: u64, e: &std::io::Error) -> EngineError {
    EngineError::io(format!("queueing {} of {len} bytes at offset {off}", kind.name()), None, e)
}

#[cold]
fn sync_error(call: SyncCall, e: std::io::Error) -> EngineError {
    EngineError::io(call.kind().name(), None, &e)
}
