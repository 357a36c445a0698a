//! The fileset side of the worker: one thread's share of a phase of a metadata test, as an op
//! source ([`SlotOps`]) that the one worker loop ([`super::worker`]) drives: create, stat,
//! unlink, ... each done synchronously through the engine inside `issue`.
//!
//! Threads partition the slots: thread k of T owns slots k, k+T, k+2T, ... so no two threads
//! ever touch the same file and nothing is locked. Each thread keeps its slots' state (file
//! present or not) in a bitset ([`SlotState`], one bit per slot: 125 KB for a million files)
//! that lives across the phases of a repetition. Paths are built from the slot index into a
//! reused buffer ([`super::layout`]) and used relative to the set's root directory (`openat`
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

use super::buffer::{AlignedBuf, WritePool};
use super::ioengine::{Completion, IoEngine};
use super::layout::{Mapping, PathBuf0};
use super::worker::{now_ns, Issue, OpSource, WorkerError, WorkerOutput};
use crate::model::block::{self, BlockId, BLOCK_BYTES};
use crate::model::job::{Amount, FileSet, Layout, MetaEntry, MetaOp, OpKind, PhaseDef, Pick};
use crate::model::latency::OpHistograms;
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Which slots of one thread hold a file. Kept across the phases of a repetition.
#[derive(Debug, Clone)]
pub struct SlotState {
    bits: Vec<u64>,
    n: u64,
    live: u64,
    /// `--verify`: per slot, whose verified content its file holds and how long it is.
    contents: Vec<Content>,
}

/// `--verify`: what a slot's file holds: the verified content of file `file`
/// ([`super::verify`]), `size` bytes of it. A file keeps its content when renamed to another
/// slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Content {
    /// The file id the content was made for (the global slot it was created in).
    pub file: u64,
    /// Bytes written.
    pub size: u64,
}

impl SlotState {
    /// `n` empty slots.
    pub fn new(n: u64) -> SlotState {
        SlotState { bits: vec![0; n.div_ceil(64) as usize], n, live: 0, contents: Vec::new() }
    }

    /// `n` empty slots that also remember their files' verified content (`--verify`).
    pub fn verified(n: u64) -> SlotState {
        SlotState { contents: vec![Content::default(); n as usize], ..SlotState::new(n) }
    }

    /// The verified content of slot `s`'s file (`--verify` only).
    #[inline]
    pub fn content(&self, s: u64) -> Content {
        self.contents.get(s as usize).copied().unwrap_or_default()
    }

    /// Record slot `s`'s content (no-op without `--verify`).
    #[inline]
    pub fn set_content(&mut self, s: u64, c: Content) {
        if let Some(x) = self.contents.get_mut(s as usize) {
            *x = c;
        }
    }

    /// Number of slots.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// No slots at all.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Slots holding a file.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// Whether slot `s` holds a file.
    #[inline]
    pub fn get(&self, s: u64) -> bool {
        self.bits[(s / 64) as usize] & (1 << (s % 64)) != 0
    }

    /// Mark slot `s`.
    #[inline]
    pub fn set(&mut self, s: u64, present: bool) {
        let w = &mut self.bits[(s / 64) as usize];
        let m = 1u64 << (s % 64);
        if present && *w & m == 0 {
            *w |= m;
            self.live += 1;
        } else if !present && *w & m != 0 {
            *w &= !m;
            self.live -= 1;
        }
    }

    /// The first slot at or after `from` (wrapping) whose state is `want`, scanning a word at a
    /// time.
    pub fn find_from(&self, from: u64, want: bool) -> Option<u64> {
        if self.n == 0 || (want && self.live == 0) || (!want && self.live == self.n) {
            return None;
        }
        let from = from % self.n;
        let words = self.bits.len();
        let start_w = (from / 64) as usize;
        for k in 0..=words {
            let wi = (start_w + k) % words;
            let mut w = if want { self.bits[wi] } else { !self.bits[wi] };
            if k == 0 {
                w &= !0u64 << (from % 64);
            }
            if wi == words - 1 && self.n % 64 != 0 {
                w &= (1u64 << (self.n % 64)) - 1;
            }
            if w != 0 {
                return Some(wi as u64 * 64 + w.trailing_zeros() as u64);
            }
            if k == words {
                break;
            }
        }
        // The part of the first word before `from`.
        let w0 = if want { self.bits[start_w] } else { !self.bits[start_w] };
        let low = w0 & ((1u64 << (from % 64)) - 1);
        (low != 0).then(|| start_w as u64 * 64 + low.trailing_zeros() as u64)
    }

    /// Local slots holding a file, in order (for cleanup).
    pub fn iter_live(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.n).filter(|s| self.get(*s))
    }
}

/// A keyed pseudo-random permutation of `0..n` (a 4-round Feistel network on the smallest
/// even-bit domain holding n, with cycle walking): `pick = "shuffle"` visits every slot once per
/// pass, in random order, with no memory.
#[derive(Debug, Clone, Copy)]
pub struct Permutation {
    n: u64,
    half: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// A permutation of `0..n` chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half = bits.div_ceil(2).max(1);
        let mut r = fastrand::Rng::with_seed(seed);
        Permutation { n, half, keys: [r.u64(..), r.u64(..), r.u64(..), r.u64(..)] }
    }

    fn round(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            let f = (r ^ k).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    /// The image of `i` (< n).
    pub fn get(&self, i: u64) -> u64 {
        let mut x = i;
        loop {
            x = self.round(x);
            if x < self.n {
                return x;
            }
        }
    }
}

/// Counters a worker updates for the progress display and the fill monitor.
#[repr(align(64))]
#[derive(Default)]
pub struct FsCounters {
    /// Ops done (including skipped).
    pub ops: AtomicU64,
    /// Bytes written.
    pub bytes_written: AtomicU64,
    /// Files created.
    pub creates: AtomicU64,
}

/// Shared state of a fill phase: the target, and the time and totals at which each 10% mark of
/// filesystem fill was first seen. Workers check the fill themselves (statvfs, outside the
/// timing of any op, every [`FILL_CHECK_BYTES`] they write), so the stop is not late when a
/// monitor thread would be starved of CPU by the workers; a mark is claimed with one
/// compare-and-swap, so it is recorded once, without a lock.
pub struct FillShared {
    target: f64,
    start: Instant,
    next: AtomicU64,
    /// Per mark k (k/10 full): nanos since start, bytes written, files created (0: not seen).
    marks: [[AtomicU64; 3]; 11],
    /// Set when the target is reached (or ENOSPC): the phase ends normally.
    pub reached: AtomicBool,
}

/// Bytes a worker writes between two fill checks in a fill phase.
pub const FILL_CHECK_BYTES: u64 = 256 << 10;

impl FillShared {
    /// For a phase that starts at fill `fill0` and stops at `target`.
    pub fn new(fill0: f64, target: f64, start: Instant) -> FillShared {
        FillShared {
            target,
            start,
            next: AtomicU64::new((fill0 * 10.0 + 1e-9).floor() as u64 + 1),
            marks: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            reached: AtomicBool::new(fill0 >= target),
        }
    }

    /// Record the marks `fill` has passed, with the totals over all threads' counters.
    pub fn observe(&self, fill: f64, counters: &[FsCounters]) {
        loop {
            let k = self.next.load(Ordering::Acquire);
            let mark = k as f64 / 10.0;
            if k > 10 || mark > self.target + 1e-9 || fill + 1e-9 < mark {
                break;
            }
            if self.next.compare_exchange(k, k + 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                let (b, c) = totals(counters);
                let m = &self.marks[k as usize];
                m[1].store(b, Ordering::Relaxed);
                m[2].store(c, Ordering::Relaxed);
                m[0].store((self.start.elapsed().as_nanos() as u64).max(1), Ordering::Release);
            }
        }
        if fill >= self.target {
            self.reached.store(true, Ordering::Relaxed);
        }
    }

    /// The marks seen, in order: (fill, nanos since start, bytes, files), cumulative.
    pub fn marks(&self) -> Vec<(f64, u64, u64, u64)> {
        (0..=10)
            .filter_map(|k| {
                let m = &self.marks[k];
                let t = m[0].load(Ordering::Acquire);
                (t > 0).then(|| {
                    (k as f64 / 10.0, t, m[1].load(Ordering::Relaxed), m[2].load(Ordering::Relaxed))
                })
            })
            .collect()
    }
}

/// Bytes written and files created so far, over all threads.
pub fn totals(counters: &[FsCounters]) -> (u64, u64) {
    let b = counters.iter().map(|c| c.bytes_written.load(Ordering::Relaxed)).sum();
    let c = counters.iter().map(|c| c.creates.load(Ordering::Relaxed)).sum();
    (b, c)
}

/// A worker's share of a fileset: its slots (k, k+T, ... of the set), the set's root, and the
/// counters it shares with the others.
pub struct SlotWork<'a> {
    /// The fileset.
    pub fileset: &'a FileSet,
    /// The set's root directory.
    pub root: &'a OwnedFd,
    /// Its path (for messages).
    pub root_path: &'a Path,
    /// With `paths = "absolute"`: where the root really is, checked ([`absolute_base`]); the
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

/// Where a slot-taking op's cursor is.
#[derive(Clone, Copy, Default)]
struct Cursor {
    pos: u64,
}

/// The state of one worker's loop, borrowed by the op functions.
struct Ctx<'a, E: IoEngine> {
    /// The engine every system call of an op goes through.
    eng: E,
    root: BorrowedFd<'a>,
    root_path: &'a Path,
    map: Mapping,
    fs: &'a FileSet,
    thread: u64,
    threads: u64,
    slots: &'a mut SlotState,
    path: PathBuf0,
    path2: PathBuf0,
    pool: WritePool,
    /// `--verify`: what checks reads.
    verify: Option<SetVerify>,
    rbuf: AlignedBuf,
    dirbuf: Vec<u8>,
    rng: fastrand::Rng,
    hist: OpHistograms,
    bytes_read: u64,
    bytes_written: u64,
    creates: u64,
    sync_nanos: u64,
    /// Time spent making and checking verified data (kept out of op latencies).
    verify_nanos: u64,
    verified_bytes: u64,
}

/// `--verify` in a fileset worker: buffers to check what is read against.
struct SetVerify {
    seed: u64,
    /// The bytes a read should have returned.
    expected: AlignedBuf,
    /// A 4 KiB scratch cell.
    cell: Vec<u8>,
}

/// A read returned other bytes than were written.
struct Corruption {
    /// Offset of the first bad byte's 4 KiB block (or of the end, for a wrong length).
    offset: u64,
    /// The block expected there, or the expected length.
    expected: Result<BlockId, u64>,
    /// What was found.
    found: String,
}

/// Why an op did not complete.
enum OpErr {
    /// Nothing suitable to do; no system call was made.
    Skip,
    /// A system call failed.
    Fail(&'static str, Errno),
    /// `--verify`: a read returned other bytes than were written.
    Corrupt(Box<Corruption>),
}

type OpResult = Result<(), OpErr>;

fn fail(what: &'static str) -> impl Fn(Errno) -> OpErr {
    move |e| OpErr::Fail(what, e)
}

const FILE_MODE: Mode = Mode::from_raw_mode(0o644);
const DIR_MODE: Mode = Mode::from_raw_mode(0o755);

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
        let fs = plan.fileset;
        let ws = fs.write_size as usize;
        let max_append = phase
            .pattern
            .entries()
            .iter()
            .flat_map(|e| e.choices.iter())
            .filter_map(|(_, o)| o.size);
        let max_write = max_append.map(|d| d.max()).max().unwrap_or(0).min(ws as u64) as usize;
        let pool_len = ws.max(max_write).max(1);
        let verify = plan.verify.map(|vseed| SetVerify {
            seed: vseed,
            expected: AlignedBuf::new(ws.max(1)),
            cell: vec![0u8; crate::model::block::BLOCK_BYTES],
        });
        let cx = Ctx {
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
        };
        let pattern = phase.pattern.entries();
        let mut cursors: Vec<Vec<Cursor>> =
            pattern.iter().map(|e| vec![Cursor::default(); e.choices.len()]).collect();
        let perms: Vec<Vec<Permutation>> = pattern
            .iter()
            .enumerate()
            .map(|(i, e)| {
                (0..e.choices.len())
                    .map(|j| {
                        let n = space(&cx, e.choices[j].1.kind);
                        Permutation::new(n, seed ^ ((i as u64) << 40) ^ ((j as u64) << 32))
                    })
                    .collect()
            })
            .collect();
        let totals: Vec<u32> =
            pattern.iter().map(|e| e.choices.iter().map(|c| c.0).sum()).collect();
        // Directory-space ops start where this thread's share begins, so threads spread out.
        for (i, e) in pattern.iter().enumerate() {
            for (j, (_, o)) in e.choices.iter().enumerate() {
                if matches!(o.kind, OpKind::Readdir | OpKind::Fsyncdir) {
                    let n = space(&cx, o.kind);
                    cursors[i][j].pos = n * cx.thread / cx.threads;
                }
            }
        }
        let first = pattern[0].choices[0].1.kind;
        let passes_ops = match phase.amount {
            Amount::Passes(p) => Some(p as u64 * space(&cx, first) * pattern.len() as u64),
            Amount::Share(f) => {
                Some((f * space(&cx, first) as f64).ceil() as u64 * pattern.len() as u64)
            }
            _ => None,
        };
        SlotOps {
            counters: &plan.counters[plan.thread as usize],
            all_counters: plan.counters,
            fill: plan.fill,
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
        let res = do_op(&mut self.cx, &op, &mut self.cursors[i][j], &self.perms[i][j], in_passes);
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

fn op_error<E: IoEngine>(
    cx: &Ctx<'_, E>,
    what: &str,
    op: &MetaOp,
    errno: Errno,
    done: u64,
) -> WorkerError {
    let path = String::from_utf8_lossy(cx.path.bytes()).into_owned();
    let hint = match errno {
        Errno::NOSPC => "; the filesystem is full: use a smaller --scale, a smaller fileset, or a bigger filesystem",
        Errno::NOTEMPTY => "; a directory still holds files: unlink them in an earlier phase",
        _ => "",
    };
    WorkerError {
        what: format!(
            "{} ({what} {path}) in thread {} after {done} ops of this phase ({} files created, {} written){hint}",
            op.kind.name(),
            cx.thread,
            cx.creates,
            crate::model::units::fmt_bytes(cx.bytes_written),
        ),
        errno: Some(errno.raw_os_error()),
        error: std::io::Error::from(errno).to_string(),
    }
}

/// How full a filesystem is, as `df` computes Use%: used / (used + available to users).
pub fn fill_of(fd: BorrowedFd<'_>) -> std::io::Result<f64> {
    let v = rustix::fs::fstatvfs(fd)?;
    let used = v.f_blocks.saturating_sub(v.f_bfree) as f64;
    let avail = v.f_bavail as f64;
    Ok(if used + avail > 0.0 { used / (used + avail) } else { 1.0 })
}

/// Size of the slot space an op kind works on, for this thread.
fn space<E: IoEngine>(cx: &Ctx<'_, E>, kind: OpKind) -> u64 {
    match kind {
        OpKind::Mkdir | OpKind::Rmdir => cx.fs.layout.dirs(),
        OpKind::Readdir | OpKind::Fsyncdir => cx.fs.layout.leaves(),
        _ => cx.slots.len(),
    }
}

/// Global slot of this thread's local slot `s`.
#[inline]
fn global<E: IoEngine>(cx: &Ctx<'_, E>, s: u64) -> u64 {
    cx.thread + s * cx.threads
}

/// Choose a local slot whose state is `want` (file present or not), or skip.
fn pick_slot<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    pick: Pick,
    cur: &mut Cursor,
    perm: &Permutation,
    want: bool,
    in_passes: bool,
) -> Result<u64, OpErr> {
    let n = cx.slots.len();
    match pick {
        Pick::Next if in_passes => {
            let s = cur.pos % n;
            cur.pos = s + 1;
            if cx.slots.get(s) == want {
                Ok(s)
            } else {
                Err(OpErr::Skip)
            }
        }
        Pick::Next => {
            let s = cx.slots.find_from(cur.pos, want).ok_or(OpErr::Skip)?;
            cur.pos = s + 1;
            Ok(s)
        }
        Pick::Shuffle if in_passes => {
            let s = perm.get(cur.pos % n);
            cur.pos = (cur.pos + 1) % n;
            if cx.slots.get(s) == want {
                Ok(s)
            } else {
                Err(OpErr::Skip)
            }
        }
        Pick::Shuffle => {
            if (want && cx.slots.live() == 0) || (!want && cx.slots.live() == n) {
                return Err(OpErr::Skip);
            }
            for _ in 0..n {
                let s = perm.get(cur.pos % n);
                cur.pos = (cur.pos + 1) % n;
                if cx.slots.get(s) == want {
                    return Ok(s);
                }
            }
            Err(OpErr::Skip)
        }
        Pick::Random => {
            let r = cx.rng.u64(0..n);
            cx.slots.find_from(r, want).ok_or(OpErr::Skip)
        }
    }
}

/// Choose an index in a space of `n` (directories, leaves) that has no state.
fn pick_index<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    pick: Pick,
    cur: &mut Cursor,
    perm: &Permutation,
    n: u64,
) -> u64 {
    if n == 0 {
        return 0;
    }
    match pick {
        Pick::Next => {
            let s = cur.pos % n;
            cur.pos = s + 1;
            s
        }
        Pick::Shuffle => {
            let s = perm.get(cur.pos % n);
            cur.pos = (cur.pos + 1) % n;
            s
        }
        Pick::Random => cx.rng.u64(0..n),
    }
}

/// A worker's path buffer: relative to the set's directory fd, or under `absolute`.
fn path_buf(absolute: Option<&Path>) -> PathBuf0 {
    match absolute {
        None => PathBuf0::default(),
        Some(base) => PathBuf0::absolute(base),
    }
}

/// Longest path the kernel takes (`PATH_MAX`, with its NUL).
const KERNEL_PATH_MAX: usize = 4096;

/// Where the set whose root directory is `root` really is, for `paths = "absolute"`, checked
/// before any op names a file by it:
/// - the path must lead to `root` itself (same device and inode; not a deleted directory, or one
///   hidden by a later mount);
/// - no directory on it may belong to another user (root and us excepted), nor be writable by
///   others without the sticky bit: fsbench's I/O
///   otherwise goes through the directory's fd, so that a name in a shared `--dir` cannot be
///   redirected (see `workspace`); a full path gives that up, so it is refused where someone
///   else could swap a directory on it for a symlink;
/// - the longest path of the set must fit in `PATH_MAX`.
///
/// Not the path the runner names the set by (`/proc/self/fd/N/...`): every lookup through that
/// magic link costs far more than a directory's, and mdtest-like calls would measure it.
pub fn absolute_base(root: BorrowedFd<'_>) -> Result<std::path::PathBuf, String> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let link = format!("/proc/self/fd/{}", root.as_raw_fd());
    let base = std::fs::read_link(&link)
        .map_err(|e| format!("paths = \"absolute\": cannot tell where the set is ({link}: {e})"))?;
    let here = rustix::fs::fstat(root).map_err(|e| format!("paths = \"absolute\": fstat: {e}"))?;
    let same = rustix::fs::stat(&base)
        .is_ok_and(|st| (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino));
    if !base.is_absolute() || !same {
        return Err(format!(
            "paths = \"absolute\": the set's directory is no longer reachable as {} (deleted, moved or hidden by a mount); use paths = \"relative\"",
            base.display()
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    for dir in base.ancestors() {
        let st = rustix::fs::stat(dir)
            .map_err(|e| format!("paths = \"absolute\": {}: {e}", dir.display()))?;
        // Its owner may rename what is in it, and swap a directory for a link.
        if st.st_uid != 0 && st.st_uid != me {
            return Err(format!(
                "paths = \"absolute\" names every file by its full path, and {} belongs to uid {}, who could swap a directory on that path for a symlink and redirect fsbench's creates and unlinks; run in a directory whose parents belong to root (or to you), or use paths = \"relative\"",
                dir.display(),
                st.st_uid
            ));
        }
        let (others_write, sticky) = (st.st_mode & 0o022 != 0, st.st_mode & 0o1000 != 0);
        if others_write && !sticky {
            return Err(format!(
                "paths = \"absolute\" names every file by its full path, and {} is writable by others without the sticky bit: someone could swap a directory on that path for a symlink and redirect fsbench's creates and unlinks; run in a directory only you can write (or one with the sticky bit, as /tmp), or use paths = \"relative\"",
                dir.display()
            ));
        }
    }
    if base.as_os_str().as_bytes().len() + 1 + super::layout::MAX_PATH > KERNEL_PATH_MAX {
        return Err(format!(
            "paths = \"absolute\": the set's directory path is {} bytes; with the set's longest names it would pass the kernel's {KERNEL_PATH_MAX}-byte limit; use a shorter --dir or paths = \"relative\"",
            base.as_os_str().as_bytes().len()
        ));
    }
    Ok(base)
}

fn do_op<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    op: &MetaOp,
    cur: &mut Cursor,
    perm: &Permutation,
    in_passes: bool,
) -> OpResult {
    match op.kind {
        OpKind::Create => {
            let s = pick_slot(cx, op.pick, cur, perm, false, in_passes)?;
            let g = global(cx, s);
            cx.map.file(&mut cx.path, g);
            let size = cx.fs.size.sample(&mut cx.rng);
            create(cx, op, size, g)?;
            cx.slots.set(s, true);
            cx.slots.set_content(s, Content { file: g, size });
            cx.creates += 1;
            if op.fsync_dir {
                fsync_parent(cx)?;
            }
            Ok(())
        }
        OpKind::Unlink => {
            let s = pick_slot(cx, op.pick, cur, perm, true, in_passes)?;
            {
                let g = global(cx, s);
                cx.map.file(&mut cx.path, g);
            }
            let t0 = Instant::now();
            cx.eng.unlinkat(cx.root, cx.path.c_str(), AtFlags::empty()).map_err(fail("unlink"))?;
            cx.hist.record(OpKind::Unlink, t0.elapsed().as_nanos() as u64);
            cx.slots.set(s, false);
            if op.fsync_dir {
                fsync_parent(cx)?;
            }
            Ok(())
        }
        OpKind::Stat => {
            let s = pick_slot(cx, op.pick, cur, perm, true, in_passes)?;
            {
                let g = global(cx, s);
                cx.map.file(&mut cx.path, g);
            }
            let t0 = Instant::now();
            let st = cx.eng.statat(cx.root, cx.path.c_str()).map_err(fail("stat"))?;
            cx.hist.record(OpKind::Stat, t0.elapsed().as_nanos() as u64);
            std::hint::black_box(st);
            Ok(())
        }
        OpKind::Readwhole => {
            let s = pick_slot(cx, op.pick, cur, perm, true, in_passes)?;
            {
                let g = global(cx, s);
                cx.map.file(&mut cx.path, g);
            }
            let content = cx.slots.content(s);
            let v0 = cx.verify_nanos;
            let t0 = Instant::now();
            let fd = cx
                .eng
                .openat(cx.root, cx.path.c_str(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(fail("open"))?;
            let mut pos = 0u64;
            loop {
                let n = cx.eng.read(fd.as_fd(), cx.rbuf.as_mut_slice()).map_err(fail("read"))?;
                if n == 0 {
                    break;
                }
                if cx.verify.is_some() {
                    check_read(cx, fd.as_fd(), content.file, pos, n)?;
                }
                pos += n as u64;
                cx.bytes_read += n as u64;
            }
            if cx.verify.is_some() && pos != content.size {
                let found = format!("{pos} bytes");
                let c = Corruption {
                    offset: pos.min(content.size),
                    expected: Err(content.size),
                    found,
                };
                return Err(OpErr::Corrupt(Box::new(c)));
            }
            cx.eng.close(fd).map_err(fail("close"))?;
            let d = (t0.elapsed().as_nanos() as u64).saturating_sub(cx.verify_nanos - v0);
            cx.hist.record(OpKind::Readwhole, d);
            Ok(())
        }
        OpKind::Append => {
            let s = pick_slot(cx, op.pick, cur, perm, true, in_passes)?;
            {
                let g = global(cx, s);
                cx.map.file(&mut cx.path, g);
            }
            let size = op.size.unwrap_or(cx.fs.size).sample(&mut cx.rng);
            let content = cx.slots.content(s);
            let v0 = cx.verify_nanos;
            let t0 = Instant::now();
            let fd = cx
                .eng
                .openat(
                    cx.root,
                    cx.path.c_str(),
                    OFlags::WRONLY | OFlags::APPEND | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(fail("open"))?;
            write_all(cx, &fd, size, content.file, content.size)?;
            cx.slots.set_content(s, Content { size: content.size + size, ..content });
            let fsync_ns = if op.fsync { fsync_fd(cx, &fd)? } else { 0 };
            cx.eng.close(fd).map_err(fail("close"))?;
            let excluded = fsync_ns + (cx.verify_nanos - v0);
            let d = (t0.elapsed().as_nanos() as u64).saturating_sub(excluded);
            cx.hist.record(OpKind::Append, d);
            Ok(())
        }
        OpKind::Replace => {
            let s = pick_slot(cx, op.pick, cur, perm, true, in_passes)?;
            let g = global(cx, s);
            cx.map.file(&mut cx.path, g);
            cx.map.file(&mut cx.path2, g);
            cx.path2.push_tmp();
            let size = cx.fs.size.sample(&mut cx.rng);
            let v0 = cx.verify_nanos;
            let t0 = Instant::now();
            let fd = cx
                .eng
                .openat(
                    cx.root,
                    cx.path2.c_str(),
                    OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC,
                    FILE_MODE,
                )
                .map_err(fail("open temporary"))?;
            write_all(cx, &fd, size, g, 0)?;
            cx.eng.fsync(fd.as_fd()).map_err(fail("fsync temporary"))?;
            cx.eng.close(fd).map_err(fail("close"))?;
            cx.eng
                .renameat(cx.root, cx.path2.c_str(), cx.path.c_str())
                .map_err(fail("rename over"))?;
            cx.slots.set_content(s, Content { file: g, size });
            let d = (t0.elapsed().as_nanos() as u64).saturating_sub(cx.verify_nanos - v0);
            cx.hist.record(OpKind::Replace, d);
            if op.fsync_dir {
                fsync_parent(cx)?;
            }
            Ok(())
        }
        OpKind::Rename => {
            let s = pick_slot(cx, op.pick, cur, perm, true, in_passes)?;
            let d = cx.slots.find_from(s + 1, false).ok_or(OpErr::Skip)?;
            {
                let g = global(cx, s);
                cx.map.file(&mut cx.path2, g);
            }
            {
                let g = global(cx, d);
                cx.map.file(&mut cx.path, g);
            }
            let t0 = Instant::now();
            cx.eng
                .renameat(cx.root, cx.path2.c_str(), cx.path.c_str())
                .map_err(fail("rename to"))?;
            cx.hist.record(OpKind::Rename, t0.elapsed().as_nanos() as u64);
            cx.slots.set(s, false);
            cx.slots.set(d, true);
            let moved = cx.slots.content(s);
            cx.slots.set_content(d, moved);
            if op.fsync_dir {
                let same = cx.path.same_parent(&cx.path2);
                fsync_parent(cx)?;
                if !same {
                    std::mem::swap(&mut cx.path, &mut cx.path2);
                    fsync_parent(cx)?;
                }
            }
            Ok(())
        }
        OpKind::Readdir => {
            let n = space(cx, OpKind::Readdir);
            let l = pick_index(cx, op.pick, cur, perm, n);
            cx.map.leaf(&mut cx.path, l);
            let t0 = Instant::now();
            let fd = match cx.eng.openat(
                cx.root,
                cx.path.c_str(),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => return Err(OpErr::Skip),
                Err(e) => return Err(OpErr::Fail("open directory", e)),
            };
            let entries = cx.eng.readdir(fd.as_fd(), &mut cx.dirbuf).map_err(fail("getdents64"))?;
            std::hint::black_box(entries);
            cx.eng.close(fd).map_err(fail("close directory"))?;
            cx.hist.record(OpKind::Readdir, t0.elapsed().as_nanos() as u64);
            Ok(())
        }
        OpKind::Fsyncdir => {
            let n = space(cx, OpKind::Fsyncdir);
            let l = pick_index(cx, op.pick, cur, perm, n);
            cx.map.leaf(&mut cx.path, l);
            fsync_dir(cx, false)
        }
        OpKind::Mkdir => {
            let n = space(cx, OpKind::Mkdir);
            let d = pick_index(cx, op.pick, cur, perm, n);
            cx.map.dir(&mut cx.path, d);
            let t0 = Instant::now();
            match cx.eng.mkdirat(cx.root, cx.path.c_str(), DIR_MODE) {
                Ok(()) => {}
                Err(Errno::EXIST) | Err(Errno::NOENT) => return Err(OpErr::Skip),
                Err(e) => return Err(OpErr::Fail("mkdir", e)),
            }
            cx.hist.record(OpKind::Mkdir, t0.elapsed().as_nanos() as u64);
            if op.fsync_dir {
                fsync_parent(cx)?;
            }
            Ok(())
        }
        OpKind::Rmdir => {
            // Reverse pre-order: every child before its parent.
            let n = space(cx, OpKind::Rmdir);
            let d = n - 1 - pick_index(cx, op.pick, cur, perm, n);
            cx.map.dir(&mut cx.path, d);
            let t0 = Instant::now();
            match cx.eng.unlinkat(cx.root, cx.path.c_str(), AtFlags::REMOVEDIR) {
                Ok(()) => {}
                Err(Errno::NOENT) => return Err(OpErr::Skip),
                Err(e) => return Err(OpErr::Fail("rmdir", e)),
            }
            cx.hist.record(OpKind::Rmdir, t0.elapsed().as_nanos() as u64);
            if op.fsync_dir {
                fsync_parent(cx)?;
            }
            Ok(())
        }
        _ => unreachable!("validation admits only fileset ops in a fileset pattern"),
    }
}

/// open(O_CREAT|O_EXCL) the file at `cx.path`, making missing parent directories, write
/// `size` bytes, fsync if asked, close.
fn create<E: IoEngine>(cx: &mut Ctx<'_, E>, op: &MetaOp, size: u64, file: u64) -> OpResult {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
    let t0 = Instant::now();
    let fd = match cx.eng.openat(cx.root, cx.path.c_str(), flags, FILE_MODE) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if matches!(cx.fs.layout, Layout::Tree { .. }) => {
            let t_mk = Instant::now();
            make_parents(cx)?;
            let mk = t_mk.elapsed().as_nanos() as u64;
            let fd = cx
                .eng
                .openat(cx.root, cx.path.c_str(), flags, FILE_MODE)
                .map_err(fail("create"))?;
            // The directories are recorded as mkdir; the create keeps its own time.
            return finish_create(cx, op, fd, (size, file), t0, mk);
        }
        Err(e) => return Err(OpErr::Fail("create", e)),
    };
    finish_create(cx, op, fd, (size, file), t0, 0)
}

fn finish_create<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    op: &MetaOp,
    fd: OwnedFd,
    (size, file): (u64, u64),
    t0: Instant,
    excluded: u64,
) -> OpResult {
    let v0 = cx.verify_nanos;
    write_all(cx, &fd, size, file, 0)?;
    let fsync_ns = if op.fsync { fsync_fd(cx, &fd)? } else { 0 };
    cx.eng.close(fd).map_err(fail("close"))?;
    let excluded = fsync_ns + excluded + (cx.verify_nanos - v0);
    let d = (t0.elapsed().as_nanos() as u64).saturating_sub(excluded);
    cx.hist.record(OpKind::Create, d);
    Ok(())
}

/// mkdir every missing directory on the way to `cx.path` (another thread may make one first:
/// EEXIST is fine).
fn make_parents<E: IoEngine>(cx: &mut Ctx<'_, E>) -> OpResult {
    let mut ends = [0usize; 16];
    let mut k = 0;
    for e in cx.path.dir_prefix_ends() {
        if k < ends.len() {
            ends[k] = e;
            k += 1;
        }
    }
    for &end in &ends[..k] {
        let t0 = Instant::now();
        let r = cx.eng.mkdirat(cx.root, cx.path.cut(end), DIR_MODE);
        cx.path.restore(end);
        match r {
            Ok(()) => cx.hist.record(OpKind::Mkdir, t0.elapsed().as_nanos() as u64),
            Err(Errno::EXIST) => {}
            Err(e) => return Err(OpErr::Fail("mkdir", e)),
        }
    }
    Ok(())
}

/// Write `size` bytes to `fd` in `write_size` pieces; with `--verify`, the verified content of
/// file `file` from offset `off` (where the file's end is), timed as verify time.
fn write_all<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    fd: &OwnedFd,
    size: u64,
    file: u64,
    off: u64,
) -> OpResult {
    let ws = cx.fs.write_size;
    let mut left = size;
    while left > 0 {
        let n = left.min(ws) as usize;
        let buf = if cx.verify.is_some() {
            let a = now_ns();
            let at = off + (size - left);
            let buf = cx.pool.window_of(file, at, n);
            cx.verify_nanos += now_ns() - a;
            buf
        } else {
            cx.pool.window(n)
        };
        let w = cx.eng.write(fd.as_fd(), buf).map_err(fail("write"))?;
        if w == 0 {
            return Err(OpErr::Fail("write", Errno::NOSPC));
        }
        left -= w as u64;
        cx.bytes_written += w as u64;
    }
    Ok(())
}

/// `--verify`: check the `n` bytes just read into `cx.rbuf` at offset `pos` of file `file`
/// against the verified content; timed as verify time. On a mismatch, the 4 KiB block holding
/// the first bad byte is read again (`pread`, once) to say what it holds.
fn check_read<E: IoEngine>(
    cx: &mut Ctx<'_, E>,
    fd: BorrowedFd<'_>,
    file: u64,
    pos: u64,
    n: usize,
) -> OpResult {
    let a = now_ns();
    let Some(v) = cx.verify.as_mut() else { return Ok(()) };
    let expected = &mut v.expected.as_mut_slice()[..n];
    super::verify::fill_range(expected, &mut v.cell, v.seed, file, pos);
    let got = &cx.rbuf.as_slice()[..n];
    let bad = if got == &*expected {
        None
    } else {
        got.iter().zip(expected.iter()).position(|(x, y)| x != y)
    };
    cx.verify_nanos += now_ns() - a;
    cx.verified_bytes += n as u64;
    let Some(k) = bad else { return Ok(()) };
    let at = (pos + k as u64) / BLOCK_BYTES as u64 * BLOCK_BYTES as u64;
    let id = super::verify::cell_id(v.seed, file, at);
    let mut cell = vec![0u8; BLOCK_BYTES];
    let found = match rustix::io::pread(fd, &mut cell, at) {
        Ok(m) if m == BLOCK_BYTES => block::check(id, &cell).to_string(),
        Ok(m) if cell[..m].iter().all(|b| *b == 0) => "zeroes".to_string(),
        Ok(m) => format!("other bytes in the file's last {m} bytes"),
        Err(e) => format!("a block that could not be read again ({e})"),
    };
    Err(OpErr::Corrupt(Box::new(Corruption { offset: at, expected: Ok(id), found })))
}

/// The error of a verified read that found other bytes.
#[cold]
fn corrupt_error<E: IoEngine>(cx: &Ctx<'_, E>, c: &Corruption) -> WorkerError {
    let path = cx.root_path.join(String::from_utf8_lossy(cx.path.bytes()).as_ref());
    let (what, error) = match &c.expected {
        Ok(id) => (
            format!("verify: {} at offset {}", path.display(), c.offset),
            format!("expected the block of {id}, found {}", c.found),
        ),
        Err(size) => (
            format!("verify: {}", path.display()),
            format!("expected {size} bytes, found {}", c.found),
        ),
    };
    WorkerError { what, error, errno: None }
}

/// fsync an open file; returns the nanoseconds it took (recorded as `fsync`).
fn fsync_fd<E: IoEngine>(cx: &mut Ctx<'_, E>, fd: &OwnedFd) -> Result<u64, OpErr> {
    let t0 = Instant::now();
    cx.eng.fsync(fd.as_fd()).map_err(fail("fsync"))?;
    let d = t0.elapsed().as_nanos() as u64;
    cx.hist.record(OpKind::Fsync, d);
    cx.sync_nanos += d;
    Ok(d)
}

/// fsync the parent directory of `cx.path` (which is consumed).
fn fsync_parent<E: IoEngine>(cx: &mut Ctx<'_, E>) -> OpResult {
    let _ = cx.path.parent_c_str();
    fsync_dir(cx, true)
}

/// fsync the directory at `cx.path` (after [`PathBuf0::parent_c_str`] when `parent`).
fn fsync_dir<E: IoEngine>(cx: &mut Ctx<'_, E>, parent: bool) -> OpResult {
    let p: &CStr = cx.path.c_str();
    let p = if parent && p.is_empty() { c"." } else { p };
    let t0 = Instant::now();
    let fd = match cx.eng.openat(
        cx.root,
        p,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) if !parent => return Err(OpErr::Skip),
        Err(e) => return Err(OpErr::Fail("open directory", e)),
    };
    cx.eng.fsync(fd.as_fd()).map_err(fail("fsync directory"))?;
    cx.eng.close(fd).map_err(fail("close directory"))?;
    let d = t0.elapsed().as_nanos() as u64;
    cx.hist.record(OpKind::Fsyncdir, d);
    cx.sync_nanos += d;
    Ok(())
}

/// Slots thread `k` of `t` owns out of `count` (slots k, k+t, ...).
pub fn slots_of(count: u64, k: u64, t: u64) -> u64 {
    if k >= count {
        0
    } else {
        (count - k).div_ceil(t)
    }
}

/// Remove every file and directory of the set. Bounded: one unlink per file that exists, one
/// rmdir per directory, then `remove_dir_all` for leftovers (a replace's temporary cut short).
/// Progress goes to stderr every second once it has taken more than one.
pub fn remove_set(root_path: &Path, root: &OwnedFd, fs: &FileSet, states: &[SlotState]) {
    let total: u64 = states.iter().map(|s| s.live()).sum();
    let t = states.len() as u64;
    if crate::sys::signals::interrupted() {
        eprintln!(
            "fsbench: interrupted: stopped; removing {total} test files in {}",
            root_path.display()
        );
    }
    let map = Mapping::of(fs);
    let mut p = PathBuf0::default();
    let start = Instant::now();
    let mut last = start;
    let mut done = 0u64;
    for (k, st) in states.iter().enumerate() {
        for s in st.iter_live() {
            map.file(&mut p, k as u64 + s * t);
            let _ = rustix::fs::unlinkat(root, p.c_str(), AtFlags::empty());
            done += 1;
            if done % 1024 == 0 && last.elapsed() >= Duration::from_secs(1) {
                last = Instant::now();
                let rate = done as f64 / start.elapsed().as_secs_f64();
                eprintln!(
                    "fsbench: removing test files: {done}/{total} ({rate:.0}/s, about {:.0} s left)",
                    (total - done) as f64 / rate.max(1.0)
                );
            }
        }
    }
    for d in (0..fs.layout.dirs()).rev() {
        map.dir(&mut p, d);
        let _ = rustix::fs::unlinkat(root, p.c_str(), AtFlags::REMOVEDIR);
    }
    if start.elapsed() >= Duration::from_secs(1) {
        eprintln!("fsbench: removed {done} test files in {:.1} s", start.elapsed().as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_partition_the_set() {
        for (count, t) in [(10u64, 3u64), (1, 1), (7, 7), (1_000_000, 16)] {
            let sum: u64 = (0..t).map(|k| slots_of(count, k, t)).sum();
            assert_eq!(sum, count);
        }
        assert_eq!(slots_of(10, 0, 3), 4);
        assert_eq!(slots_of(10, 2, 3), 3);
    }

    #[test]
    fn bitset_finds_in_both_directions() {
        let mut s = SlotState::new(130);
        assert_eq!(s.find_from(0, true), None);
        assert_eq!(s.find_from(5, false), Some(5));
        s.set(3, true);
        s.set(129, true);
        assert_eq!(s.live(), 2);
        assert_eq!(s.find_from(4, true), Some(129));
        assert_eq!(s.find_from(129, true), Some(129));
        assert_eq!(s.find_from(130, true), Some(3), "wraps");
        for k in 0..130 {
            s.set(k, true);
        }
        assert_eq!(s.find_from(7, false), None);
        s.set(2, false);
        assert_eq!(s.find_from(7, false), Some(2), "wraps to the part before `from`");
        assert_eq!(s.iter_live().count(), 129);
    }

    #[test]
    fn permutation_visits_every_index_once() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.get(i);
                assert!(x < n);
                assert!(!seen[x as usize], "n={n}: {x} twice");
                seen[x as usize] = true;
            }
        }
        let p = Permutation::new(1000, 1);
        let moved = (0..1000).filter(|i| p.get(*i) != *i).count();
        assert!(moved > 900, "a shuffle, not the identity: {moved}");
    }
}
