//! A fileset's files: `count` slots in a directory tree (or flat), each holding a file or not,
//! partitioned over the threads of every process sharing the set; made (the directory),
//! checked for space and prefilled before the first phase, and removed after the last.

use super::{SetUp, TestFiles, WorkerShare};
use crate::engine::fileset::{self, fill_of, FillShared, FsCounters, SlotState, SlotWork};
use crate::engine::layout::{Mapping, PathBuf0};
use crate::engine::phase::PhaseRun;
use crate::engine::runner::{EngineOptions, Progress};
use crate::engine::worker::{Work, WorkerOutput};
use crate::model::failure::EngineError;
use crate::model::job::{
    Amount, CacheReq, FileSet, MetaEntry, MetaOp, OpKind, PathMode, Pattern, PhaseDef, Pick,
    SyncCall, SyncPolicy, TestDef,
};
use crate::model::result::{FillPoint, PhaseResult, RepResult, Warning};
use crate::model::units::fmt_bytes;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Files of a fileset whose residency is sampled before a phase.
pub const RESIDENCY_SAMPLE: u64 = 64;

/// A fileset's directory and the state of its slots.
pub(super) struct SetFiles<'t> {
    /// The set's definition.
    fs: &'t FileSet,
    /// Its root directory.
    root_path: PathBuf,
    /// The root, open (operations are relative to it).
    root: OwnedFd,
    /// The root's inode, to check it is the same directory when it is taken again after an
    /// eviction that unmounted ([`TestFiles::reanchor`]).
    root_ino: u64,
    /// Per thread of every process sharing the set: which of its slots hold a file.
    states: Vec<SlotState>,
    /// This process's first thread among them (0 unless shared).
    first: usize,
    /// Several processes share the set (and remove it together).
    shared: bool,
    /// `paths = "absolute"`: where the root really is, checked ([`absolute_base`]).
    absolute: Option<PathBuf>,
    /// Per thread of every process: the counters of the current phase (progress, fill totals).
    counters: Vec<FsCounters>,
    /// A fill phase's start and the marks its workers record.
    fill: Option<FillRun>,
}

/// A fill phase under way: the fill it started at, when, and what the workers share.
struct FillRun {
    fill0: Option<f64>,
    start: Instant,
    shared: FillShared,
}

impl<'t> SetFiles<'t> {
    /// Make the set's directory under `dir`. With several processes in one directory
    /// ([`EngineOptions::share`]), the set is one for all, in a directory named after the
    /// repetition (the first process to get there makes it; one still removing the previous
    /// repetition's cannot remove it under the others), its slots partitioned over every
    /// thread of every process: this process's threads are `first..first + threads` of all,
    /// and `states` holds every thread's, empty for the others'.
    pub(super) fn make(
        test: &'t TestDef,
        dir: &Path,
        opts: &EngineOptions,
        rep: u32,
    ) -> Result<SetFiles<'t>, EngineError> {
        let fs = &test.files;
        let share = opts.share.map(|s| (s.index, s.count));
        let root_path = match share {
            Some(_) => dir.join(format!("t{}.rep{rep}.set", test.id)),
            None => dir.join(format!("t{}.set", test.id)),
        };
        if share.is_none() {
            let _ = std::fs::remove_dir_all(&root_path);
        }
        match std::fs::create_dir(&root_path) {
            Err(e) if !(share.is_some() && e.kind() == std::io::ErrorKind::AlreadyExists) => {
                return Err(EngineError::setup(format!("creating {}", root_path.display()), &e))
            }
            _ => {}
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let root = match rustix::fs::open(&root_path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = std::fs::remove_dir(&root_path);
                let what = format!("opening {}", root_path.display());
                return Err(EngineError::setup(what, &e.into()));
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
            PathMode::Relative => None,
            PathMode::Absolute => match absolute_base(root.as_fd()) {
                Ok(p) => Some(p),
                Err(e) => {
                    if !shared {
                        let _ = std::fs::remove_dir(&root_path);
                    }
                    return Err(e);
                }
            },
        };
        Ok(SetFiles {
            fs,
            root_path,
            root_ino: rustix::fs::fstat(&root).map(|st| st.st_ino).unwrap_or(0),
            root,
            states,
            first: first as usize,
            shared,
            absolute,
            counters: Vec::new(),
            fill: None,
        })
    }
}

impl TestFiles for SetFiles<'_> {
    fn set_up(&mut self, cx: &SetUp<'_>) -> Result<bool, EngineError> {
        check_space(cx.test, self.fs, &self.root)?;
        if !self.fs.prefill {
            return Ok(true);
        }
        let phase = prefill_phase();
        cx.progress.phase_start_ops(cx.test, cx.rep, "setup", Some(self.fs.count));
        let seed = cx.seed ^ 0xf111;
        // Untimed: no series, so no devices to sample.
        let run = crate::engine::phase::run(cx.test, &phase, self, cx.opts, seed, cx.progress, &[]);
        cx.progress.phase_end();
        if let Some(e) = run.outs.iter().find_map(|o| o.error.as_ref()) {
            return Err(e.clone().at("prefill"));
        }
        Ok(!run.outs.iter().any(|o| o.interrupted))
    }

    fn phase_seed(&self, seed: u64, pi: usize) -> u64 {
        // Each fileset phase has a seed of its own (kept, so that runs repeat their operations).
        seed ^ ((pi as u64 + 1) << 24)
    }

    fn start_progress(&self, test: &TestDef, rep: u32, phase: &PhaseDef, progress: &dyn Progress) {
        progress.phase_start_ops(test, rep, &phase.name, expected_ops(test, self.fs, phase))
    }

    fn all_exist(&self) -> bool {
        true
    }

    fn residency_files(&self) -> Vec<PathBuf> {
        sample_files(&self.root_path, self.fs, &self.states, RESIDENCY_SAMPLE)
    }

    fn sampled(&self) -> bool {
        true
    }

    fn evictable(&self) -> &[PathBuf] {
        // Dirty files cannot be evicted: the set's filesystem is synced, and the target's
        // eviction does the rest.
        let _ = rustix::fs::syncfs(&self.root);
        &[]
    }

    fn release(&self) -> std::io::Result<()> {
        crate::sys::parkfd::park(self.root.as_fd())
    }

    fn reanchor(&self) -> std::io::Result<()> {
        // Through the work directory, taken again first: the set's root by name, no link.
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let root = rustix::fs::open(&self.root_path, flags, Mode::empty())?;
        if rustix::fs::fstat(&root)?.st_ino != self.root_ino {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "the file set's directory is another one after the filesystem was mounted again",
            ));
        }
        crate::sys::parkfd::reseat(self.root.as_fd(), &root)
    }

    fn shares<'a>(
        &'a mut self,
        test: &'a TestDef,
        phase: &'a PhaseDef,
        opts: &'a EngineOptions,
    ) -> Vec<WorkerShare<'a>> {
        let n = test.threads as usize;
        let all = self.states.len();
        self.counters = (0..all).map(|_| FsCounters::default()).collect();
        self.fill = match phase.amount {
            Amount::Fill(target) => {
                let fill0 = fill_of(self.root.as_fd()).ok();
                let start = Instant::now();
                let shared = FillShared::new(fill0.unwrap_or(0.0), target, start);
                Some(FillRun { fill0, start, shared })
            }
            _ => None,
        };
        let SetFiles { fs, root, root_path, states, first, absolute, counters, fill, .. } = self;
        let (fs, first, counters): (&FileSet, usize, &[FsCounters]) = (fs, *first, counters);
        let fill = fill.as_ref().map(|f| &f.shared);
        // Thread k of this process is thread `first + k` of all sharing the set (the counters
        // of the others stay zero).
        states[first..first + n]
            .iter_mut()
            .enumerate()
            .map(|(k, slots)| {
                let work = SlotWork {
                    fileset: fs,
                    root,
                    root_path,
                    absolute: absolute.as_deref(),
                    verify: opts.verify.then_some(opts.seed),
                    thread: (first + k) as u32,
                    threads: all as u32,
                    fill,
                    counters,
                    slots,
                };
                (Work::Slots(work), &counters[first + k].ops)
            })
            .collect()
    }

    fn end_phase(&mut self, phase: &PhaseDef, run: &mut PhaseRun) {
        if let Some(f) = self.fill.take() {
            let end = fill_of(self.root.as_fd()).ok();
            let (b, c) = fileset::totals(&self.counters);
            let last = (end.unwrap_or(0.0), f.start.elapsed().as_nanos() as u64, b, c);
            run.series = Some(fill_series(f.fill0.unwrap_or(0.0), &f.shared.marks(), last));
            run.fill_range = f.fill0.zip(end);
            run.fill_reached = f.shared.reached.load(Ordering::Relaxed);
        }
        // A fileset phase's syncfs runs once, after the last worker, inside the phase's timing
        // ("sync included").
        let clean = run.outs.iter().all(|o| o.error.is_none() && !o.interrupted);
        if clean && phase.sync.at_end == Some(SyncCall::Syncfs) {
            let t0 = Instant::now();
            let r = rustix::fs::syncfs(&self.root);
            let end = Instant::now();
            run.hist.record(OpKind::Syncfs, (end - t0).as_nanos() as u64);
            let what = "syncfs at the end of the phase";
            let err = r.err().map(|e| EngineError::io(what, None, &e.into()));
            run.synced = Some((end, err));
        }
    }

    fn state_note(&self, outs: &[WorkerOutput]) -> String {
        let created: u64 = outs.iter().map(|o| o.creates).sum();
        let written: u64 = outs.iter().map(|o| o.bytes_written).sum();
        let live: u64 = self.states.iter().map(|s| s.live()).sum();
        format!(
            "; all threads in this phase: {created} files created, {} written; {live} of {} files existed when it stopped",
            fmt_bytes(written),
            self.fs.count
        )
    }

    fn verify(
        &self,
        _test: &TestDef,
        _opts: &EngineOptions,
        rep: u32,
        phases: &[PhaseResult],
    ) -> Result<Warning, EngineError> {
        // Checked as they were read, inside the phases (their time is each phase's
        // `verify_nanos`, kept out of the op latencies).
        let bytes: u64 = phases.iter().map(|p| p.verified_bytes).sum();
        let nanos: u64 = phases.iter().map(|p| p.verify_nanos).sum();
        Ok(Warning::VerifiedOnRead { repetition: rep + 1, bytes_checked: bytes, nanos })
    }

    fn finish_result(&self, _complete: bool, r: &mut RepResult) {
        crate::engine::results::set_fileset_figure(r);
    }

    fn remove(self: Box<Self>, _test: &TestDef, _opts: &EngineOptions) {
        let SetFiles { fs, root_path, root, states, shared, .. } = *self;
        remove_set(&root_path, &root, fs, &states);
        drop(root);
        if shared {
            // The last process out removes the root; what remains (others' files, a replace's
            // temporary) goes with the shared work directory.
            let _ = std::fs::remove_dir(&root_path);
        } else if let Err(e) = std::fs::remove_dir_all(&root_path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                eprintln!("fsbench: warning: could not remove {}: {e}", root_path.display());
            }
        }
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

/// A clear error before starting when a set that is created whole cannot fit: in bytes
/// (mean file size and a block of slack per file) or in inodes.
fn check_space(test: &TestDef, fs: &FileSet, root: &OwnedFd) -> Result<(), EngineError> {
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
        let reason = format!(
            "the fileset needs about {} ({} files of {} on average, plus their last blocks and directories) but the filesystem has {} available; nothing was created: use a smaller --scale, a smaller fileset, or a bigger filesystem",
            fmt_bytes(need),
            fs.count,
            fmt_bytes(fs.size.mean() as u64),
            fmt_bytes(avail)
        );
        return Err(EngineError::NoSpace { op: None, reason });
    }
    let inodes = fs.count + fs.layout.dirs();
    // f_files == 0: the filesystem allocates inodes dynamically (btrfs) and reports none.
    if v.f_files > 0 && inodes > v.f_favail {
        let reason = format!(
            "the fileset needs {inodes} inodes (files and directories) but the filesystem has {} free; nothing was created: use a smaller --scale or a filesystem with more inodes",
            v.f_favail
        );
        return Err(EngineError::NoSpace { op: None, reason });
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
        random_map: false,
        random_distribution: None,
        invalidate_each_pass: false,
        fadvise_hint: false,
        random_percent: None,
        unlink_each_pass: false,
        sched: Default::default(),
        load: Default::default(),
        max_seconds: None,
        curve: None,
        op_log: false,
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

/// Longest path the kernel takes (`PATH_MAX`, with its NUL).
const KERNEL_PATH_MAX: usize = 4096;

/// Where the set whose root directory is `root` really is, for `paths = "absolute"`, checked
/// before any op names a file by it:
/// - the path must lead to `root` itself (same device and inode; not a deleted directory, or one
///   hidden by a later mount);
/// - no directory on it may belong to another user (root and us excepted), nor be writable by
///   others without the sticky bit: fsbench's I/O otherwise goes through the directory's fd, so that a name in a shared `--dir` cannot be
///   redirected (see `workspace`); a full path gives that up, so it is refused where someone
///   else could swap a directory on it for a symlink;
/// - the longest path of the set must fit in `PATH_MAX`.
///
/// Not the path the runner names the set by (`/proc/self/fd/N/...`): every lookup through that
/// magic link costs far more than a directory's, and mdtest-like calls would measure it.
pub fn absolute_base(root: BorrowedFd<'_>) -> Result<PathBuf, EngineError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let link = format!("/proc/self/fd/{}", root.as_raw_fd());
    let what = "paths = \"absolute\"";
    let base = std::fs::read_link(&link).map_err(|e| EngineError::Setup {
        what: what.into(),
        reason: format!("cannot tell where the set is ({link}: {e})"),
        errno: e.raw_os_error(),
    })?;
    let here = rustix::fs::fstat(root)
        .map_err(|e| EngineError::setup(format!("{what}: fstat"), &e.into()))?;
    let same = rustix::fs::stat(&base)
        .is_ok_and(|st| (st.st_dev, st.st_ino) == (here.st_dev, here.st_ino));
    if !base.is_absolute() || !same {
        return Err(EngineError::unsupported(format!(
            "paths = \"absolute\": the set's directory is no longer reachable as {} (deleted, moved or hidden by a mount); use paths = \"relative\"",
            base.display()
        )));
    }
    let me = rustix::process::geteuid().as_raw();
    for dir in base.ancestors() {
        let st = rustix::fs::stat(dir)
            .map_err(|e| EngineError::setup(format!("{what}: {}", dir.display()), &e.into()))?;
        // Its owner may rename what is in it, and swap a directory for a link.
        if st.st_uid != 0 && st.st_uid != me {
            return Err(EngineError::unsupported(format!(
                "paths = \"absolute\" names every file by its full path, and {} belongs to uid {}, who could swap a directory on that path for a symlink and redirect fsbench's creates and unlinks; run in a directory whose parents belong to root (or to you), or use paths = \"relative\"",
                dir.display(),
                st.st_uid
            )));
        }
        let (others_write, sticky) = (st.st_mode & 0o022 != 0, st.st_mode & 0o1000 != 0);
        if others_write && !sticky {
            return Err(EngineError::unsupported(format!(
                "paths = \"absolute\" names every file by its full path, and {} is writable by others without the sticky bit: someone could swap a directory on that path for a symlink and redirect fsbench's creates and unlinks; run in a directory only you can write (or one with the sticky bit, as /tmp), or use paths = \"relative\"",
                dir.display()
            )));
        }
    }
    if base.as_os_str().as_bytes().len() + 1 + crate::engine::layout::MAX_PATH > KERNEL_PATH_MAX {
        return Err(EngineError::unsupported(format!(
            "paths = \"absolute\": the set's directory path is {} bytes; with the set's longest names it would pass the kernel's {KERNEL_PATH_MAX}-byte limit; use a shorter --dir or paths = \"relative\"",
            base.as_os_str().as_bytes().len()
        )));
    }
    Ok(base)
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
            // A slot of `mkdirslot` holds a directory (fio's dircreate).
            if let Err(rustix::io::Errno::ISDIR) =
                rustix::fs::unlinkat(root, p.c_str(), AtFlags::empty())
            {
                let _ = rustix::fs::unlinkat(root, p.c_str(), AtFlags::REMOVEDIR);
            }
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
