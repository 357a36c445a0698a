//! The worker: one thread's share of a phase. This is the hot loop.
//!
//! Everything a worker needs is allocated before it waits at the start barrier: its buffers,
//! its histograms, its random generator. Per operation it does: pick a size and an offset
//! (integer arithmetic and one wyrand step), one system call, one clock read (the end of one op
//! is the start of the next, so one `clock_gettime` per op, through the vDSO), one histogram
//! increment, a relaxed store of its progress counter and a relaxed load of the stop flags. No
//! allocation, no lock, no formatting.

use super::buffer::{AlignedBuf, WritePool};
use super::ioengine::IoEngine;
use crate::stats::latency::OpHistograms;
use crate::sys::rusage::{CpuSample, CpuTime};
use crate::workload::{Amount, OffsetMode, OpKind, OpenFlags, PhaseDef, SizeDist, SyncCall};
use std::fs::{File, OpenOptions};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// A counter on its own cache line, so threads updating theirs do not share lines.
#[repr(align(64))]
#[derive(Default)]
pub struct PaddedCounter(pub AtomicU64);

/// What one worker is asked to do.
pub struct WorkerPlan<'a> {
    /// The phase.
    pub phase: &'a PhaseDef,
    /// The file this worker opens.
    pub path: &'a Path,
    /// File size (random offsets fall in `[0, file_size - op size]`).
    pub file_size: u64,
    /// Start of this worker's sequential region.
    pub region_start: u64,
    /// Length of this worker's sequential region.
    pub region_len: u64,
    /// Seed of this worker's random generator.
    pub seed: u64,
    /// Share of each 4 KiB written block that is zeros.
    pub compress_percent: u8,
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

/// What one worker measured.
pub struct WorkerOutput {
    /// Latencies per op kind.
    pub hist: OpHistograms,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Read + write ops.
    pub data_ops: u64,
    /// Nanoseconds inside fsync/fdatasync.
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

/// Shared flags the hot loop polls.
pub struct StopFlags<'a> {
    /// Set by any worker that fails, so the others stop too.
    pub phase: &'a AtomicBool,
    /// Set by Ctrl-C / SIGTERM.
    pub signal: &'a AtomicBool,
}

fn open_flags(o: &OpenFlags, writes: bool) -> OpenOptions {
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

/// Run one worker: wait at `barrier`, then do the phase's pattern until its amount is done.
pub fn run<E: IoEngine>(
    engine: &mut E,
    plan: &WorkerPlan<'_>,
    barrier: &Barrier,
    stop: &StopFlags<'_>,
    progress: &AtomicU64,
) -> WorkerOutput {
    let phase = plan.phase;
    let writes = phase.pattern.iter().any(|o| o.kind == OpKind::Write);
    let max_size = phase.pattern.iter().map(|o| o.size.max()).max().unwrap_or(0).max(1) as usize;
    let mut rbuf = AlignedBuf::new(max_size);
    let mut pool = WritePool::new(max_size, plan.compress_percent, plan.seed);
    let mut rng = fastrand::Rng::with_seed(plan.seed);
    let mut hist = OpHistograms::default();
    let oo = open_flags(&phase.open, writes);
    let pattern = &phase.pattern[..];

    let mut out_bytes_read = 0u64;
    let mut out_bytes_written = 0u64;
    let mut data_ops = 0u64;
    let mut sync_nanos = 0u64;
    let mut error: Option<WorkerError> = None;
    let mut interrupted = false;

    barrier.wait();
    let cpu0 = CpuSample::thread_now();
    let start = Instant::now();

    let file: File = match oo.open(plan.path) {
        Ok(f) => f,
        Err(e) => {
            stop.phase.store(true, Ordering::Relaxed);
            let end = Instant::now();
            return WorkerOutput {
                hist,
                bytes_read: 0,
                bytes_written: 0,
                data_ops: 0,
                sync_nanos: 0,
                start,
                end,
                cpu: CpuSample::thread_now().since(cpu0),
                error: Some(WorkerError {
                    what: format!("open {}", plan.path.display()),
                    errno: e.raw_os_error(),
                    error: e.to_string(),
                }),
                interrupted: false,
            };
        }
    };
    let mut t0 = Instant::now();
    hist.record(OpKind::Open, (t0 - start).as_nanos() as u64);
    let fd = file.as_fd();

    let deadline = match phase.amount {
        Amount::Seconds(s) => Some(start + Duration::from_secs_f64(s)),
        _ => None,
    };
    let sync = phase.sync;
    // Next marks (cumulative bytes / writes) at which the periodic sync is due.
    let mut sync_at_bytes = sync.every_bytes.unwrap_or(u64::MAX);
    let mut sync_at_ops = sync.every_ops.unwrap_or(u64::MAX);
    let mut writes = 0u64;
    let mut seq_pos = 0u64;
    let mut passes = 0u32;
    let mut last_off = 0u64;
    let mut ops = 0u64;
    let mut i = 0usize;

    'run: loop {
        if stop.phase.load(Ordering::Relaxed) || stop.signal.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let op = &pattern[i];
        i += 1;
        if i == pattern.len() {
            i = 0;
        }
        match op.kind {
            OpKind::Read | OpKind::Write => {
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
                let res = if op.kind == OpKind::Read {
                    engine.read_at(fd, &mut rbuf.as_mut_slice()[..len], off)
                } else {
                    engine.write_at(fd, pool.window(len), off)
                };
                let n = match res {
                    Ok(0) if len > 0 => {
                        error = Some(WorkerError {
                            what: format!("{} of {len} bytes at offset {off}", op.kind.name()),
                            error: "unexpected end of file".into(),
                            errno: None,
                        });
                        break 'run;
                    }
                    Ok(n) => n as u64,
                    Err(e) => {
                        error = Some(WorkerError {
                            what: format!("{} of {len} bytes at offset {off}", op.kind.name()),
                            errno: e.raw_os_error(),
                            error: e.to_string(),
                        });
                        break 'run;
                    }
                };
                let t1 = Instant::now();
                hist.record(op.kind, (t1 - t0).as_nanos() as u64);
                t0 = t1;
                data_ops += 1;
                ops += 1;
                last_off = off;
                if op.kind == OpKind::Read {
                    out_bytes_read += n;
                } else {
                    out_bytes_written += n;
                    writes += 1;
                }
                progress.store(out_bytes_read + out_bytes_written, Ordering::Relaxed);
                if op.offset == OffsetMode::Sequential {
                    seq_pos += n;
                    if seq_pos >= plan.region_len {
                        seq_pos = 0;
                        passes += 1;
                    }
                }
                if op.kind == OpKind::Write
                    && (out_bytes_written >= sync_at_bytes || writes >= sync_at_ops)
                {
                    if let Some(call) = sync.call {
                        if let Err(e) = do_sync(engine, fd, call) {
                            error = Some(sync_error(call, e));
                            break 'run;
                        }
                        let t1 = Instant::now();
                        let d = (t1 - t0).as_nanos() as u64;
                        hist.record(call.kind(), d);
                        sync_nanos += d;
                        t0 = t1;
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
                let done = match phase.amount {
                    Amount::Bytes(b) => out_bytes_read + out_bytes_written >= b,
                    Amount::Ops(k) => ops >= k,
                    Amount::Seconds(_) => deadline.is_some_and(|d| t1 >= d),
                    // The rest of the pattern cycle still runs (a rewrite's write after the read
                    // that completed the pass).
                    Amount::Passes(p) => passes >= p && i == 0,
                    Amount::Fill(_) | Amount::Share(_) => {
                        unreachable!("validation admits fill and share only for filesets")
                    }
                };
                if done {
                    break;
                }
            }
            OpKind::Fsync | OpKind::Fdatasync => {
                let call =
                    if op.kind == OpKind::Fsync { SyncCall::Fsync } else { SyncCall::Fdatasync };
                if let Err(e) = do_sync(engine, fd, call) {
                    error = Some(sync_error(call, e));
                    break 'run;
                }
                let t1 = Instant::now();
                let d = (t1 - t0).as_nanos() as u64;
                hist.record(op.kind, d);
                sync_nanos += d;
                t0 = t1;
                ops += 1;
                let done = match phase.amount {
                    Amount::Ops(k) => ops >= k,
                    Amount::Seconds(_) => deadline.is_some_and(|d| t1 >= d),
                    _ => false,
                };
                if done {
                    break;
                }
            }
            _ => unreachable!("validation admits only data and sync ops"),
        }
    }

    if error.is_some() {
        stop.phase.store(true, Ordering::Relaxed);
    } else if !interrupted {
        if let Some(call) = sync.at_end {
            match do_sync(engine, fd, call) {
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
    let close_err = close_file(file);
    let end = Instant::now();
    hist.record(OpKind::Close, (end - t0).as_nanos() as u64);
    if let (None, Err(e)) = (&error, close_err) {
        error = Some(WorkerError {
            what: "close".into(),
            errno: e.raw_os_error(),
            error: e.to_string(),
        });
        stop.phase.store(true, Ordering::Relaxed);
    }
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
    }
}

#[inline(always)]
fn do_sync<E: IoEngine>(
    engine: &mut E,
    fd: std::os::fd::BorrowedFd<'_>,
    call: SyncCall,
) -> std::io::Result<()> {
    match call {
        SyncCall::Fsync => engine.fsync(fd),
        SyncCall::Fdatasync => engine.fdatasync(fd),
        SyncCall::Syncfs => Ok(rustix::fs::syncfs(fd)?),
    }
}

fn sync_error(call: SyncCall, e: std::io::Error) -> WorkerError {
    WorkerError {
        what: call.kind().name().to_string(),
        errno: e.raw_os_error(),
        error: e.to_string(),
    }
}

/// close(2) with its error reported (dropping a `File` ignores it).
fn close_file(f: File) -> std::io::Result<()> {
    use std::os::fd::IntoRawFd;
    let fd = f.into_raw_fd();
    // SAFETY: we own fd (taken from the File) and close it exactly once.
    let rc = unsafe { libc::close(fd) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
