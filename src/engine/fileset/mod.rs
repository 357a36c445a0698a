//! The fileset side of the worker: one thread's share of a phase of a metadata test, as an op
//! source ([`SlotOps`]) that the one worker loop ([`super::worker`]) drives: create, stat,
//! unlink, ... each done synchronously through the engine inside `issue`.
//!
//! Threads partition the slots: thread k of T owns slots k, k+T, k+2T, ... so no two threads
//! ever touch the same file and nothing is locked. Each thread keeps its slots' state (file
//! present or not) in a bitset ([`SlotState`], one bit per slot: 125 KB for a million files)
//! that lives across the phases of a repetition ([`slots`]). Paths are built from the slot index
//! into a reused buffer ([`super::layout`]) and used relative to the set's root directory (`openat`
//! and friends). Per operation: a slot choice (bit scans), the system calls, two clock reads,
//! one histogram increment, relaxed stores of the progress counters and relaxed loads of the
//! stop flags. No allocation, no lock, no formatting (except when building an error, once).
//!
//! Timing: each op's latency runs from before its first system call to after its last; an
//! `fsync = true` inside a create or append is recorded as `fsync`, and an `fsync_dir = true`
//! as `fsyncdir`, not as part of the op. A durable `replace` includes its fsync (the fsync is
//! what the idiom costs). Directories a create needed and had to make are recorded as `mkdir`.
//! With `--verify`, making written data and checking read data is timed apart and subtracted
//! from the op's latency (it is the phase's `verify_nanos`).

//!
//! [`ops`] has one function per operation; [`fill`] what a fill phase's workers share.

pub mod fill;
mod ops;
pub mod slots;

pub use fill::{fill_of, totals, FillShared, FsCounters, FILL_CHECK_BYTES};
pub use slots::{slots_of, Content, Permutation, SlotState};

use super::buffer::{AlignedBuf, WritePool};
use super::ioengine::{Completion, IoEngine};
use super::layout::{Mapping, PathBuf0};
use super::worker::{Issue, OpSource, WorkerOutput};
use crate::model::failure::EngineError;
use crate::model::job::{Amount, FileSet, MetaEntry, MetaOp, OpKind, PhaseDef};
use crate::model::latency::OpHistograms;
use ops::{Corruption, Ctx, Cursor, OpErr, Picker, SetVerify};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A worker's share of a fileset: its slots (k, k+T, ... of the set), the set's root, and the
/// counters it shares with the others.
pub struct SlotWork<'a> {
    /// The fileset.
    pub fileset: &'a FileSet,
    /// The set's root directory.
    pub root: &'a OwnedFd,
    /// Its path (for messages).
    pub root_path: &'a Path,
    /// With `paths = "absolute"`: where the root really is, checked
    /// ([`crate::engine::files::absolute_base`]); the
    /// prefix of every path the ops give the kernel.
    pub absolute: Option<&'a Path>,
    /// `--verify`: the seed of the verified content written and checked on read.
    pub verify: Option<u64>,
    /// This thread's index.
    pub thread: u32,
    /// Threads in the phase.
    pub threads: u32,
    /// Fill phases: the target and the series being recorded.
    pub fill: Option<&'a FillShared>,
    /// Every worker's counters (this one's is `counters[thread]`), for the fill series totals.
    pub counters: &'a [FsCounters],
    /// Which of this thread's slots hold a file (kept across the phases of a repetition).
    pub slots: &'a mut SlotState,
}

/// A fileset's ops for one worker: the thread's slots, and the pattern's whole-file and
/// namespace ops, each done synchronously inside [`OpSource::issue`] (one or a few system
/// calls through the engine's provided methods) and accounted at once. Driven by the one worker
/// loop ([`super::worker`]).
pub struct SlotOps<'a, E: IoEngine> {
    cx: Ctx<'a, E>,
    phase: &'a PhaseDef,
    pattern: &'a [MetaEntry],
    /// One cursor and one permutation per (entry, choice).
    cursors: Vec<Vec<Cursor>>,
    perms: Vec<Vec<Permutation>>,
    /// Per entry, the sum of its choices' weights.
    totals: Vec<u32>,
    /// Ops a `passes` or `share` amount asks for.
    passes_ops: Option<u64>,
    deadline: Option<Instant>,
    fill: Option<&'a FillShared>,
    counters: &'a FsCounters,
    all_counters: &'a [FsCounters],
    next_check: u64,
    /// Pattern ops issued (including skipped ones).
    ops: u64,
    /// Index of the next pattern entry.
    i: usize,
}

impl<'a, E: IoEngine> SlotOps<'a, E> {
    /// Everything the fileset loop needs, allocated now (before the barrier).
    pub(super) fn new(
        eng: E,
        phase: &'a PhaseDef,
        plan: &'a mut SlotWork<'_>,
        seed: u64,
        compress_percent: u8,
    ) -> SlotOps<'a, E> {
        let (counters, all_counters, fill) =
            (&plan.counters[plan.thread as usize], plan.counters, plan.fill);
        let cx = context(eng, phase, plan, seed, compress_percent);
        let pattern = phase.pattern.entries();
        let (cursors, perms) = pickers(&cx, pattern, seed);
        let totals: Vec<u32> =
            pattern.iter().map(|e| e.choices.iter().map(|c| c.0).sum()).collect();
        let first = pattern[0].choices[0].1.kind;
        let passes_ops = match phase.amount {
            Amount::Passes(p) => Some(p as u64 * ops::space(&cx, first) * pattern.len() as u64),
            Amount::Share(f) => {
                Some((f * ops::space(&cx, first) as f64).ceil() as u64 * pattern.len() as u64)
            }
            _ => None,
        };
        SlotOps {
            counters,
            all_counters,
            fill,
            cx,
            phase,
            pattern,
            cursors,
            perms,
            totals,
            passes_ops,
            deadline: None,
            next_check: FILL_CHECK_BYTES,
            ops: 0,
            i: 0,
        }
    }

    fn publish(&self) {
        self.counters.ops.store(self.ops, Ordering::Relaxed);
        self.counters.bytes_written.store(self.cx.bytes_written, Ordering::Relaxed);
        self.counters.creates.store(self.cx.creates, Ordering::Relaxed);
    }
}

impl<E: IoEngine> OpSource<E> for SlotOps<'_, E> {
    fn engine(&mut self) -> &mut E {
        &mut self.cx.eng
    }

    fn depth(&self) -> usize {
        1
    }

    fn begin(&mut self, start_ns: u64, _out: &mut WorkerOutput) -> Option<u64> {
        if let Amount::Seconds(s) = self.phase.amount {
            // Past what an Instant holds (a huge `seconds` with --allow-long): no deadline.
            self.deadline =
                Duration::try_from_secs_f64(s).ok().and_then(|d| Instant::now().checked_add(d));
        }
        Some(start_ns)
    }

    fn issue(&mut self, _inflight: usize, _t0: u64, out: &mut WorkerOutput) -> Issue {
        if self.fill.is_some_and(|f| f.reached.load(Ordering::Relaxed)) {
            return Issue::End;
        }
        let done = match self.phase.amount {
            Amount::Ops(k) => self.ops >= k,
            Amount::Passes(_) | Amount::Share(_) => self.ops >= self.passes_ops.unwrap_or(0),
            Amount::Seconds(_) => self.deadline.is_some_and(|d| Instant::now() >= d),
            Amount::Fill(_) | Amount::Bytes(_) => false,
        };
        if done {
            return Issue::End;
        }
        let i = self.i;
        let e = &self.pattern[i];
        let j = if e.choices.len() == 1 {
            0
        } else {
            let mut r = self.cx.rng.u32(0..self.totals[i]);
            let mut j = 0;
            while r >= e.choices[j].0 {
                r -= e.choices[j].0;
                j += 1;
            }
            j
        };
        let op = e.choices[j].1;
        let in_passes = self.passes_ops.is_some();
        let pk = Picker { cur: &mut self.cursors[i][j], perm: &self.perms[i][j], in_passes };
        let res = ops::do_op(&mut self.cx, &op, pk);
        self.ops += 1;
        self.i += 1;
        if self.i == self.pattern.len() {
            self.i = 0;
        }
        match res {
            Ok(()) => out.file_ops += 1,
            Err(OpErr::Skip) => out.skipped_ops += 1,
            Err(OpErr::Fail(_, Errno::NOSPC)) if self.fill.is_some() => {
                out.enospc = true;
                if let Some(f) = self.fill {
                    f.reached.store(true, Ordering::Relaxed);
                }
                return Issue::End;
            }
            Err(OpErr::Fail(what, errno)) => {
                out.error = Some(op_error(&self.cx, what, &op, errno, out.file_ops));
                return Issue::End;
            }
            Err(OpErr::Corrupt(c)) => {
                out.error = Some(corrupt_error(&self.cx, &c));
                return Issue::End;
            }
        }
        self.publish();
        if let Some(f) = self.fill {
            if self.cx.bytes_written >= self.next_check {
                self.next_check = self.cx.bytes_written + FILL_CHECK_BYTES;
                if let Ok(v) = fill_of(self.cx.root) {
                    f.observe(v, self.all_counters);
                }
            }
        }
        Issue::Done
    }

    fn complete(&mut self, _c: Completion, _t1: u64, _out: &mut WorkerOutput) -> bool {
        unreachable!("fileset ops complete inside issue")
    }

    fn reaped(&mut self, _t1: u64, _out: &WorkerOutput) {}

    fn finish(&mut self, t0: u64, _clean: bool, out: &mut WorkerOutput) -> u64 {
        self.publish();
        let cx = &mut self.cx;
        std::mem::swap(&mut out.hist, &mut cx.hist);
        out.bytes_read = cx.bytes_read;
        out.bytes_written = cx.bytes_written;
        out.creates = cx.creates;
        out.sync_nanos = cx.sync_nanos;
        out.verify_nanos = cx.verify_nanos;
        out.verified_bytes = cx.verified_bytes;
        t0
    }
}

/// The error of an op whose system call failed: the op, the call and its path, the thread and
/// how far it got (ENOSPC: [`EngineError::NoSpace`]).
#[cold]
fn op_error<E: IoEngine>(
    cx: &Ctx<'_, E>,
    what: &str,
    op: &MetaOp,
    errno: Errno,
    done: u64,
) -> EngineError {
    let path = String::from_utf8_lossy(cx.path.bytes()).into_owned();
    let hint = match errno {
        Errno::NOSPC => "; the filesystem is full: use a smaller --scale, a smaller fileset, or a bigger filesystem",
        Errno::NOTEMPTY => "; a directory still holds files: unlink them in an earlier phase",
        _ => "",
    };
    let what = format!(
        "{} ({what} {path}) in thread {} after {done} ops of this phase ({} files created, {} written){hint}",
        op.kind.name(),
        cx.thread,
        cx.creates,
        crate::model::units::fmt_bytes(cx.bytes_written),
    );
    EngineError::io(what, None, &std::io::Error::from(errno))
}

/// The error of a verified read that found other bytes: the file, where, what should be there
/// and what is.
#[cold]
fn corrupt_error<E: IoEngine>(cx: &Ctx<'_, E>, c: &Corruption) -> EngineError {
    let path = cx.root_path.join(String::from_utf8_lossy(cx.path.bytes()).as_ref());
    let (offset, expected) = match &c.expected {
        Ok(id) => (Some(c.offset), format!("the block of {id}")),
        Err(size) => (None, format!("{size} bytes")),
    };
    EngineError::Corrupt { path, offset, expected, found: c.found.clone(), more: String::new() }
}

/// The op functions' state for one worker: its engine, slots, path and data buffers.
fn context<'a, E: IoEngine>(
    eng: E,
    phase: &PhaseDef,
    plan: &'a mut SlotWork<'_>,
    seed: u64,
    compress_percent: u8,
) -> Ctx<'a, E> {
    let fs = plan.fileset;
    let ws = fs.write_size as usize;
    let max_append =
        phase.pattern.entries().iter().flat_map(|e| e.choices.iter()).filter_map(|(_, o)| o.size);
    let max_write = max_append.map(|d| d.max()).max().unwrap_or(0).min(ws as u64) as usize;
    let pool_len = ws.max(max_write).max(1);
    let verify = plan.verify.map(|vseed| SetVerify {
        seed: vseed,
        expected: AlignedBuf::new(ws.max(1)),
        cell: vec![0u8; crate::model::block::BLOCK_BYTES],
    });
    Ctx {
        eng,
        root: plan.root.as_fd(),
        root_path: plan.root_path,
        map: Mapping::of(fs),
        fs,
        thread: plan.thread as u64,
        threads: plan.threads as u64,
        slots: &mut *plan.slots,
        path: path_buf(plan.absolute),
        path2: path_buf(plan.absolute),
        pool: match verify {
            Some(ref v) => WritePool::verified(pool_len, 1, v.seed, 0),
            None => WritePool::new(pool_len, compress_percent, seed),
        },
        verify,
        rbuf: AlignedBuf::new(ws.max(1)),
        dirbuf: Vec::with_capacity(64 << 10),
        rng: fastrand::Rng::with_seed(seed),
        hist: OpHistograms::default(),
        bytes_read: 0,
        bytes_written: 0,
        creates: 0,
        sync_nanos: 0,
        verify_nanos: 0,
        verified_bytes: 0,
    }
}

/// One cursor and one permutation per (entry, choice) of the pattern. Directory-space ops
/// start where this thread's share begins, so threads spread out.
#[allow(clippy::type_complexity)]
fn pickers<E: IoEngine>(
    cx: &Ctx<'_, E>,
    pattern: &[MetaEntry],
    seed: u64,
) -> (Vec<Vec<Cursor>>, Vec<Vec<Permutation>>) {
    let mut cursors: Vec<Vec<Cursor>> =
        pattern.iter().map(|e| vec![Cursor::default(); e.choices.len()]).collect();
    let perms: Vec<Vec<Permutation>> = pattern
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (0..e.choices.len())
                .map(|j| {
                    let n = ops::space(cx, e.choices[j].1.kind);
                    Permutation::new(n, seed ^ ((i as u64) << 40) ^ ((j as u64) << 32))
                })
                .collect()
        })
        .collect();
    for (i, e) in pattern.iter().enumerate() {
        for (j, (_, o)) in e.choices.iter().enumerate() {
            if matches!(o.kind, OpKind::Readdir | OpKind::Fsyncdir) {
                let n = ops::space(cx, o.kind);
                cursors[i][j].pos = n * cx.thread / cx.threads;
            }
        }
    }
    (cursors, perms)
}

/// A worker's path buffer: relative to the set's directory fd, or under `absolute`.
fn path_buf(absolute: Option<&Path>) -> PathBuf0 {
    match absolute {
        None => PathBuf0::default(),
        Some(base) => PathBuf0::absolute(base),
    }
}
