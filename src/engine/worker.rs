//! The worker: one thread's share of a phase. This is the hot loop.
//!
//! Everything a worker needs is allocated before it waits at the start barrier: its engine, its
//! buffers (one read buffer per queue slot), its histograms, its random generator. Per operation
//! it does: pick a size and an offset (integer arithmetic and one wyrand step), queue it on the
//! engine ([`IoEngine::queue`]; with `psync`, the system call), reap it, one clock read per reap
//! (at depth 1 the end of one op is the start of the next, so one `clock_gettime` per op, through
//! the vDSO), one histogram increment, a relaxed store of its progress counter and a relaxed load
//! of the stop flags. No allocation, no lock, no formatting. The worker is generic over the
//! engine, so all of this is monomorphised and inlined per engine.

use super::buffer::{AlignedBuf, WritePool};
use super::fileset::SlotWork;
use super::ioengine::{Completion, Io, IoEngine, IoKind};
use crate::stats::latency::OpHistograms;
use crate::sys::rusage::{CpuSample, CpuTime};
use crate::workload::{Amount, OffsetMode, OpKind, OpenFlags, PhaseDef, SizeDist, SyncCall};
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

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
    /// The files it works on.
    pub work: Work<'a>,
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
}

/// Where a worker stopped with an error.
#[derive(Debug, Clone)]
pub struct WorkerError {
    /// What failed (e.g. "write at offset 4096 of /x/t1.dat").
    pub what: String,
    /// The OS error.
    pub error: String,
    /// errno, when there is one.
    pub errno: Option<i32>,
}

impl std::fmt::Display for WorkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.error)
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
    /// When this worker was released.
    pub start: Instant,
    /// When it finished (after close).
    pub end: Instant,
    /// CPU consumed between the two.
    pub cpu: CpuTime,
    /// Set when the worker failed.
    pub error: Option<WorkerError>,
    /// Set when a stop flag ended the worker early.
    pub interrupted: bool,
}

impl WorkerOutput {
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
            start,
            end: start,
            cpu: CpuTime::default(),
            error: None,
            interrupted: false,
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

/// How a data file is opened: read-write when the phase writes or creates, and the phase's
/// flags.
fn open_options(o: &OpenFlags, writes: bool) -> OpenOptions {
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
    oo.custom_flags(custom);
    oo
}

/// A request in flight: what the completion needs to account for it.
#[derive(Clone, Copy)]
struct InFlight {
    kind: OpKind,
    len: usize,
    off: u64,
    /// When it was queued: its latency runs from here to the reap that returned it.
    stamp: Instant,
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

/// The output of a worker that failed before its first op.
pub(super) fn failed_output(
    start: Instant,
    cpu0: CpuSample,
    what: String,
    e: std::io::Error,
) -> WorkerOutput {
    WorkerOutput {
        start,
        end: Instant::now(),
        cpu: CpuSample::thread_now().since(cpu0),
        error: Some(WorkerError { what, errno: e.raw_os_error(), error: e.to_string() }),
        ..WorkerOutput::at(start)
    }
}

/// Run one worker: set up engine `E`, wait at `barrier`, then do the phase's pattern on the
/// worker's files until its amount is done. `progress` is the worker's progress counter (bytes
/// of a data phase, ops of a fileset phase), read by the runner every 50 ms.
///
/// The one entry point for every worker thread; data files and fileset slots differ in how an
/// op is issued (queued requests on an open file, [`run_file`]; synchronous whole-file and
/// namespace ops, [`super::fileset::run`]), both through the engine.
pub fn run<E: IoEngine>(
    plan: &mut WorkerPlan<'_>,
    barrier: &Barrier,
    stop: &StopFlags<'_>,
    progress: &AtomicU64,
) -> WorkerOutput {
    let (phase, seed, compress_percent) = (plan.phase, plan.seed, plan.compress_percent);
    match &mut plan.work {
        Work::File(f) => run_file::<E>(
            plan.phase,
            f,
            seed,
            compress_percent,
            plan.iodepth,
            barrier,
            stop,
            progress,
        ),
        Work::Slots(w) => super::fileset::run::<E>(phase, w, seed, compress_percent, barrier, stop),
    }
}

/// The data-file worker: queued requests on one open file.
///
/// One loop for every engine and depth: queue requests while fewer than `iodepth` are in flight
/// (a sync waits until the queue is empty, so it covers every write before it), commit, reap at
/// least one, read the clock once, and account each completion with the latency from its
/// queueing to that clock read. At depth 1 that is one clock read per op (the end of one op is
/// the start of the next), as before queues existed. Amounts are counted as ops are queued
/// (bytes, ops, passes) or completed (seconds), so a deeper queue does the same work.
#[allow(clippy::too_many_arguments)]
fn run_file<E: IoEngine>(
    phase: &PhaseDef,
    plan: &FileWork<'_>,
    seed: u64,
    compress_percent: u8,
    iodepth: u32,
    barrier: &Barrier,
    stop: &StopFlags<'_>,
    progress: &AtomicU64,
) -> WorkerOutput {
    let writes = phase.pattern.data().iter().any(|o| o.kind == OpKind::Write);
    let max_size =
        phase.pattern.data().iter().map(|o| o.size.max()).max().unwrap_or(0).max(1) as usize;
    let depth = iodepth.max(1) as usize;
    // One read buffer per queue slot, each page-aligned.
    let stride = max_size.div_ceil(super::buffer::ALIGN) * super::buffer::ALIGN;
    let mut rbuf = AlignedBuf::new(stride * depth);
    let rbase = rbuf.as_mut_slice().as_mut_ptr();
    let mut pool = WritePool::new(max_size, compress_percent, seed);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut hist = OpHistograms::default();
    let options = open_options(&phase.open, writes);
    let pattern = phase.pattern.data();
    let mut slots: Vec<InFlight> = Vec::with_capacity(depth);
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut comps = vec![Completion::default(); depth];
    // Declared after the buffers, so it is dropped (and any request of an engine that fails
    // mid-phase is finished) before they are freed.
    let engine = E::setup(depth as u32);

    barrier.wait();
    let cpu0 = CpuSample::thread_now();
    let start = Instant::now();
    let mut engine = match engine {
        Ok(e) => e,
        Err(e) => {
            stop.phase.store(true, Ordering::Relaxed);
            return failed_output(start, cpu0, format!("setting up engine {}", E::NAME), e);
        }
    };
    let file = match engine.open(plan.path, &options) {
        Ok(f) => f,
        Err(e) => {
            stop.phase.store(true, Ordering::Relaxed);
            let what = format!("open {}", plan.path.display());
            return failed_output(start, cpu0, what, e);
        }
    };
    let mut t0 = Instant::now();
    hist.record(OpKind::Open, (t0 - start).as_nanos() as u64);
    let fd = file.as_raw_fd();
    slots.resize(depth, InFlight { kind: OpKind::Read, len: 0, off: 0, stamp: t0 });

    let deadline = match phase.amount {
        Amount::Seconds(s) => Some(start + Duration::from_secs_f64(s)),
        _ => None,
    };
    let sync = phase.sync;
    // Next marks (cumulative bytes / writes) at which the periodic sync is due.
    let mut sync_at_bytes = sync.every_bytes.unwrap_or(u64::MAX);
    let mut sync_at_ops = sync.every_ops.unwrap_or(u64::MAX);
    let mut out_bytes_read = 0u64;
    let mut out_bytes_written = 0u64;
    let mut data_ops = 0u64;
    let mut sync_nanos = 0u64;
    let mut error: Option<WorkerError> = None;
    let mut interrupted = false;
    let mut writes = 0u64;
    let mut seq_pos = 0u64;
    let mut passes = 0u32;
    let mut last_off = 0u64;
    let mut issued_ops = 0u64;
    let mut issued_bytes = 0u64;
    let mut i = 0usize;
    let mut inflight = 0usize;
    // Pattern ops may still be queued.
    let mut queueing = true;
    // A periodic sync is due: it is queued once the queue is empty.
    let mut pending_sync: Option<SyncCall> = None;

    loop {
        // Queue.
        loop {
            if let Some(call) = pending_sync {
                if inflight == 0 {
                    pending_sync = None;
                    let tag = free.pop().unwrap_or(0);
                    slots[tag as usize] = InFlight { kind: call.kind(), len: 0, off: 0, stamp: t0 };
                    let io = Io {
                        kind: sync_io(call),
                        fd,
                        buf: std::ptr::null_mut(),
                        len: 0,
                        offset: 0,
                        tag,
                    };
                    // SAFETY: a sync has no buffer; `file` outlives every request.
                    if let Err(e) = unsafe { engine.queue(io) } {
                        error = Some(sync_error(call, e));
                        queueing = false;
                        free.push(tag);
                        break;
                    }
                    inflight += 1;
                }
                break;
            }
            if !queueing || inflight == depth {
                break;
            }
            if stop.phase.load(Ordering::Relaxed) || stop.signal.load(Ordering::Relaxed) {
                interrupted = true;
                queueing = false;
                break;
            }
            let op = &pattern[i];
            let (kind, len, off, buf) = match op.kind {
                OpKind::Fsync | OpKind::Fdatasync => {
                    if inflight > 0 {
                        // The sync covers every write queued before it.
                        break;
                    }
                    let k =
                        if op.kind == OpKind::Fsync { IoKind::Fsync } else { IoKind::Fdatasync };
                    (k, 0usize, 0u64, std::ptr::null_mut())
                }
                _ => {
                    let mut size = match op.size {
                        SizeDist::Fixed(n) => n,
                        d => d.sample(&mut rng),
                    };
                    let off = match op.offset {
                        OffsetMode::Sequential => {
                            size = size.min(plan.region_len - seq_pos);
                            plan.region_start + seq_pos
                        }
                        OffsetMode::Random => {
                            let slots = (plan.file_size - size) / op.align;
                            rng.u64(0..=slots) * op.align
                        }
                        OffsetMode::Last => last_off,
                    };
                    let len = size as usize;
                    if op.kind == OpKind::Read {
                        let tag_slot = *free.last().unwrap_or(&0) as usize;
                        // SAFETY: slot `tag_slot`'s window lies inside `rbuf` (depth × stride).
                        let p = unsafe { rbase.add(tag_slot * stride) };
                        (IoKind::Read, len, off, p)
                    } else {
                        (IoKind::Write, len, off, pool.window(len).as_ptr() as *mut u8)
                    }
                }
            };
            let tag = free.pop().unwrap_or(0);
            slots[tag as usize] = InFlight { kind: op.kind, len, off, stamp: t0 };
            let io = Io { kind, fd, buf, len, offset: off, tag };
            // SAFETY: `buf` is slot `tag`'s part of `rbuf` (reads) or a window of `pool`
            // (writes, never written to), both alive and unmoved until the worker returns, and
            // the slot is not reused before its completion is reaped; `file` outlives them.
            if let Err(e) = unsafe { engine.queue(io) } {
                error = Some(WorkerError {
                    what: format!("queueing {} of {len} bytes at offset {off}", op.kind.name()),
                    errno: e.raw_os_error(),
                    error: e.to_string(),
                });
                free.push(tag);
                queueing = false;
                break;
            }
            inflight += 1;
            i += 1;
            if i == pattern.len() {
                i = 0;
            }
            issued_ops += 1;
            if op.kind.is_data() {
                issued_bytes += len as u64;
                last_off = off;
                if op.offset == OffsetMode::Sequential {
                    seq_pos += len as u64;
                    if seq_pos >= plan.region_len {
                        seq_pos = 0;
                        passes += 1;
                    }
                }
            }
            let done = match phase.amount {
                Amount::Bytes(b) => issued_bytes >= b,
                Amount::Ops(k) => issued_ops >= k,
                Amount::Seconds(_) => false,
                // The rest of the pattern cycle still runs (a rewrite's write after the read
                // that completed the pass).
                Amount::Passes(p) => passes >= p && i == 0,
                Amount::Fill(_) | Amount::Share(_) => {
                    unreachable!("validation admits fill and share only for filesets")
                }
            };
            if done {
                queueing = false;
            }
        }
        if inflight == 0 {
            break;
        }
        // Reap.
        let reaped = engine.commit().and_then(|()| engine.reap(1, &mut comps));
        let n = match reaped {
            Ok(n) => n,
            Err(e) => {
                error.get_or_insert(WorkerError {
                    what: format!("reaping completions from engine {}", E::NAME),
                    errno: e.raw_os_error(),
                    error: e.to_string(),
                });
                break;
            }
        };
        let t1 = Instant::now();
        for c in &comps[..n] {
            let s = slots[c.tag as usize];
            free.push(c.tag);
            inflight -= 1;
            if error.is_some() {
                continue; // draining after a failure
            }
            if c.res < 0 || (c.res == 0 && s.len > 0) {
                let (err, errno) = if c.res < 0 {
                    let e = std::io::Error::from_raw_os_error((-c.res) as i32);
                    (e.to_string(), e.raw_os_error())
                } else {
                    ("unexpected end of file".to_string(), None)
                };
                let what = if s.kind.is_data() {
                    format!("{} of {} bytes at offset {}", s.kind.name(), s.len, s.off)
                } else {
                    s.kind.name().to_string()
                };
                error = Some(WorkerError { what, error: err, errno });
                queueing = false;
                pending_sync = None;
                continue;
            }
            let d = (t1 - s.stamp).as_nanos() as u64;
            hist.record(s.kind, d);
            match s.kind {
                OpKind::Read => {
                    data_ops += 1;
                    out_bytes_read += c.res as u64;
                }
                OpKind::Write => {
                    data_ops += 1;
                    out_bytes_written += c.res as u64;
                    writes += 1;
                    if out_bytes_written >= sync_at_bytes || writes >= sync_at_ops {
                        if sync.call.is_some() {
                            pending_sync = sync.call;
                        }
                        while sync_at_bytes <= out_bytes_written {
                            sync_at_bytes =
                                sync_at_bytes.saturating_add(sync.every_bytes.unwrap_or(u64::MAX));
                        }
                        while sync_at_ops <= writes {
                            sync_at_ops =
                                sync_at_ops.saturating_add(sync.every_ops.unwrap_or(u64::MAX));
                        }
                    }
                }
                _ => sync_nanos += d,
            }
            if s.kind.is_data() {
                progress.store(out_bytes_read + out_bytes_written, Ordering::Relaxed);
            }
        }
        if deadline.is_some_and(|d| t1 >= d) {
            queueing = false;
        }
        t0 = t1;
    }

    if error.is_some() {
        stop.phase.store(true, Ordering::Relaxed);
    } else if !interrupted {
        if let Some(call) = sync.at_end {
            let io = Io {
                kind: sync_io(call),
                fd,
                buf: std::ptr::null_mut(),
                len: 0,
                offset: 0,
                tag: 0,
            };
            // SAFETY: a sync has no buffer; the queue is empty and `file` is open.
            let r = unsafe { engine.queue(io) }
                .and_then(|()| engine.commit())
                .and_then(|()| engine.reap(1, &mut comps));
            let r = match r {
                Ok(1) if comps[0].res >= 0 => Ok(()),
                Ok(1) => Err(std::io::Error::from_raw_os_error((-comps[0].res) as i32)),
                Ok(_) => Err(std::io::Error::other("the engine returned no completion")),
                Err(e) => Err(e),
            };
            match r {
                Ok(()) => {
                    let t1 = Instant::now();
                    let d = (t1 - t0).as_nanos() as u64;
                    hist.record(call.kind(), d);
                    sync_nanos += d;
                    t0 = t1;
                }
                Err(e) => {
                    error = Some(sync_error(call, e));
                    stop.phase.store(true, Ordering::Relaxed);
                }
            }
        }
    }
    // close() is part of the timed phase: NFS and some FUSE filesystems flush on close.
    let close_err = engine.close(file);
    let end = Instant::now();
    hist.record(OpKind::Close, (end - t0).as_nanos() as u64);
    if let (None, Err(e)) = (&error, close_err) {
        let e = std::io::Error::from(e);
        error = Some(WorkerError {
            what: "close".into(),
            errno: e.raw_os_error(),
            error: e.to_string(),
        });
        stop.phase.store(true, Ordering::Relaxed);
    }
    drop(engine);
    drop(rbuf);
    WorkerOutput {
        hist,
        bytes_read: out_bytes_read,
        bytes_written: out_bytes_written,
        data_ops,
        sync_nanos,
        start,
        end,
        cpu: CpuSample::thread_now().since(cpu0),
        error,
        interrupted,
        ..WorkerOutput::at(start)
    }
}

fn sync_error(call: SyncCall, e: std::io::Error) -> WorkerError {
    WorkerError {
        what: call.kind().name().to_string(),
        errno: e.raw_os_error(),
        error: e.to_string(),
    }
}
