//! Orchestration of a fileset (metadata) test's repetition: the set's root directory, a space
//! check before any file is made, the untimed prefill, each phase's cache precondition, its
//! workers ([`super::fileset`]) and, for fill phases, the monitor that stops them at the target
//! fill and records throughput against fill; finally the removal of every file, with progress
//! on stderr when it takes a while.

use super::fileset::{
    self, fill_of, FillShared, FsCounters, FsWorkerOutput, FsWorkerPlan, SlotState,
};
use super::hooks::PhaseOutcome;
use super::layout::{Mapping, PathBuf0};
use super::runner::{rep_result, RepOutcome, UNCACHED_MAX};
use super::target::Target;
use super::worker::StopFlags;
use crate::observe::blockstat::Snapshot;
use crate::observe::memory::{MemDelta, MemSample};
use crate::result::{CacheCheck, FillPoint, PhaseResult, RepResult};
use crate::stats::latency::OpHistograms;
use crate::workload::size::fmt_bytes;
use crate::workload::{
    Amount, CacheReq, FilesetDef, MetaEntry, MetaOp, OpKind, PhaseDef, Pick, SyncCall, SyncPolicy,
    TestDef,
};
use rustix::fs::{AtFlags, Mode, OFlags};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use super::runner::{EngineOptions, Progress};

/// Slots thread `k` of `t` owns out of `count` (slots k, k+t, ...).
pub fn slots_of(count: u64, k: u64, t: u64) -> u64 {
    if k >= count {
        0
    } else {
        (count - k).div_ceil(t)
    }
}

/// Run one repetition of a fileset test in `ws_dir`; every file is removed before returning.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_rep(
    test: &TestDef,
    fs: &FilesetDef,
    target: &Target<'_>,
    devices: &[String],
    ws_dir: &Path,
    opts: &EngineOptions,
    seed: u64,
    rep: u32,
    progress: &dyn Progress,
    warnings: &mut Vec<String>,
) -> (Option<RepResult>, RepOutcome) {
    let root_path = match opts.hooks.0.share() {
        Some((i, _)) => ws_dir.join(format!("t{}.r{i}.set", test.id)),
        None => ws_dir.join(format!("t{}.set", test.id)),
    };
    let _ = std::fs::remove_dir_all(&root_path);
    if let Err(e) = std::fs::create_dir(&root_path) {
        return (None, RepOutcome::Failed(format!("creating {}: {e}", root_path.display())));
    }
    let root = match rustix::fs::open(
        &root_path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) => {
            let _ = std::fs::remove_dir(&root_path);
            return (None, RepOutcome::Failed(format!("opening {}: {e}", root_path.display())));
        }
    };
    let t = test.threads as u64;
    let mut states: Vec<SlotState> =
        (0..t).map(|k| SlotState::new(slots_of(fs.count, k, t))).collect();
    let out = run_phases(
        test,
        fs,
        target,
        devices,
        &root,
        opts,
        seed,
        rep,
        progress,
        warnings,
        &mut states,
    );
    remove_set(&root_path, &root, fs, &states);
    drop(root);
    if let Err(e) = std::fs::remove_dir_all(&root_path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            eprintln!("fsbench: warning: could not remove {}: {e}", root_path.display());
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn run_phases(
    test: &TestDef,
    fs: &FilesetDef,
    target: &Target<'_>,
    devices: &[String],
    root: &OwnedFd,
    opts: &EngineOptions,
    seed: u64,
    rep: u32,
    progress: &dyn Progress,
    warnings: &mut Vec<String>,
    states: &mut [SlotState],
) -> (Option<RepResult>, RepOutcome) {
    // The space check and the prefill are the set-up; every process of a multi-client run
    // agrees on its outcome before the first phase.
    let hooks = &*opts.hooks.0;
    let local =
        match hooks.before_phase(test, rep, "setup").and_then(|()| check_space(test, fs, root)) {
            Err(msg) => PhaseOutcome::Failed(msg),
            Ok(()) if fs.prefill => {
                let phase = prefill_phase();
                progress.phase_start_ops(test, rep, "setup", Some(fs.count));
                let run = run_phase(test, fs, &phase, root, states, opts, seed ^ 0xf111, progress);
                progress.phase_end();
                if let Some(e) = run.outs.iter().find_map(|o| o.error.as_ref()) {
                    PhaseOutcome::Failed(format!("prefill: {e}"))
                } else if run.outs.iter().any(|o| o.interrupted) {
                    PhaseOutcome::Interrupted
                } else {
                    PhaseOutcome::Ok
                }
            }
            Ok(()) => PhaseOutcome::Ok,
        };
    match hooks.after_phase(test, rep, "setup", None, local) {
        PhaseOutcome::Ok => {}
        PhaseOutcome::Failed(e) => return (None, RepOutcome::Failed(e)),
        PhaseOutcome::Interrupted => return (None, RepOutcome::Interrupted),
    }
    let mut phases = Vec::new();
    let mut timed_hist = OpHistograms::default();
    let mut outcome = RepOutcome::Ok;
    for (pi, phase) in test.phases.iter().enumerate() {
        let check = establish_cache(phase.cache, root, fs, states, target);
        if !check.met {
            let msg = format!(
                "phase `{}`: uncached required but {:.0}% of sampled files were resident after {}; this is not an uncached figure",
                phase.name,
                check.resident_fraction * 100.0,
                check.method
            );
            if !warnings.contains(&msg) {
                warnings.push(msg);
            }
        }
        progress.phase_start_ops(test, rep, &phase.name, expected_ops(test, fs, phase));
        let tracer = if opts.trace && phase.timed {
            super::runner::start_trace(devices, warnings)
        } else {
            None
        };
        let mem_before = MemSample::take(target.daemon);
        let before = Snapshot::take(devices);
        let pseed = seed ^ ((pi as u64 + 1) << 24);
        let released = hooks.before_phase(test, rep, &phase.name);
        let run = match &released {
            Ok(()) => run_phase(test, fs, phase, root, states, opts, pseed, progress),
            Err(_) => PhaseRun::default(),
        };
        let after = Snapshot::take(devices);
        let trace = tracer.and_then(|t| match t.stop() {
            Ok(s) => Some(s),
            Err(e) => {
                super::runner::note_once(
                    warnings,
                    format!("block trace of phase `{}` lost: {e}", phase.name),
                );
                None
            }
        });
        let memory = MemDelta { before: mem_before, after: MemSample::take(target.daemon) };
        progress.phase_end();
        let mut pr = phase_result(test, phase, &run, check);
        pr.device = before.delta(&after);
        pr.memory = Some(memory);
        pr.trace = trace;
        if phase.timed {
            timed_hist.merge(&run.hist);
        }
        phases.push(pr);
        let local = if let Err(e) = released {
            PhaseOutcome::Failed(format!("phase `{}`: {e}", phase.name))
        } else if let Some(e) = run.synced.as_ref().and_then(|s| s.1.as_ref()) {
            PhaseOutcome::Failed(format!("phase `{}`: {e}", phase.name))
        } else if let Some(e) = run.outs.iter().find_map(|o| o.error.as_ref()) {
            let created: u64 = run.outs.iter().map(|o| o.creates).sum();
            let written: u64 = run.outs.iter().map(|o| o.bytes_written).sum();
            let live: u64 = states.iter().map(|s| s.live()).sum();
            PhaseOutcome::Failed(format!(
                "phase `{}`: {e}; all threads in this phase: {created} files created, {} written; {live} of {} files existed when it stopped",
                phase.name,
                fmt_bytes(written),
                fs.count
            ))
        } else if run.outs.iter().any(|o| o.interrupted) {
            PhaseOutcome::Interrupted
        } else {
            PhaseOutcome::Ok
        };
        let start = run.outs.iter().map(|o| o.start).min();
        let end = run.outs.iter().map(|o| o.end).max();
        let end = end.map(|e| run.synced.as_ref().map(|s| s.0.max(e)).unwrap_or(e));
        match hooks.after_phase(test, rep, &phase.name, start.zip(end), local) {
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
    r.file_ops = r.phases.iter().filter(|p| p.timed).map(|p| p.file_ops).sum();
    let secs = r.wall_nanos as f64 / 1e9;
    r.ops_per_s = if secs > 0.0 { r.file_ops as f64 / secs } else { 0.0 };
    (Some(r), outcome)
}

/// A clear error before starting when a set that is created whole cannot fit: in bytes
/// (mean file size and a block of slack per file) or in inodes.
fn check_space(test: &TestDef, fs: &FilesetDef, root: &OwnedFd) -> Result<(), String> {
    let fills = test.phases.iter().any(|p| matches!(p.amount, Amount::Fill(_)));
    let creates_all = fs.prefill
        || test.phases.iter().any(|p| {
            matches!(p.amount, Amount::Passes(_))
                && p.fileset_pattern
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
        return Err(format!(
            "the fileset needs about {} ({} files of {} on average, plus their last blocks and directories) but the filesystem has {} available; nothing was created: use a smaller --scale, a smaller fileset, or a bigger filesystem",
            fmt_bytes(need),
            fs.count,
            fmt_bytes(fs.size.mean() as u64),
            fmt_bytes(avail)
        ));
    }
    let inodes = fs.count + fs.layout.dirs();
    // f_files == 0: the filesystem allocates inodes dynamically (btrfs) and reports none.
    if v.f_files > 0 && inodes > v.f_favail {
        return Err(format!(
            "the fileset needs {inodes} inodes (files and directories) but the filesystem has {} free; nothing was created: use a smaller --scale or a filesystem with more inodes",
            v.f_favail
        ));
    }
    Ok(())
}

fn prefill_phase() -> PhaseDef {
    PhaseDef {
        name: "prefill".into(),
        timed: false,
        cache: CacheReq::Any,
        open: Default::default(),
        pattern: Vec::new(),
        amount: Amount::Passes(1),
        sync: SyncPolicy::default(),
        fileset_pattern: vec![MetaEntry {
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
        }],
    }
}

fn expected_ops(test: &TestDef, fs: &FilesetDef, phase: &PhaseDef) -> Option<u64> {
    let t = test.threads as u64;
    match phase.amount {
        Amount::Ops(k) => Some(k * t),
        Amount::Share(f) => {
            let passes =
                expected_ops(test, fs, &PhaseDef { amount: Amount::Passes(1), ..phase.clone() })?;
            Some((passes as f64 * f).ceil() as u64)
        }
        Amount::Passes(p) => {
            let first = phase.fileset_pattern.first()?.choices.first()?.1.kind;
            let space = match first {
                OpKind::Mkdir | OpKind::Rmdir => fs.layout.dirs(),
                OpKind::Readdir | OpKind::Fsyncdir => fs.layout.leaves() * t,
                _ => fs.count,
            };
            Some(p as u64 * space * phase.fileset_pattern.len() as u64)
        }
        _ => None,
    }
}

/// Before an uncached phase: syncfs, then the target's eviction (drop_caches as root, or the
/// testbed's own method). Residency is sampled with mincore over up to 64 existing files.
fn establish_cache(
    req: CacheReq,
    root: &OwnedFd,
    fs: &FilesetDef,
    states: &[SlotState],
    target: &Target<'_>,
) -> CacheCheck {
    let method = match req {
        CacheReq::Uncached => {
            let _ = rustix::fs::syncfs(root);
            match target.cache.evict(&[]) {
                Ok(m) => m,
                Err(e) => format!("eviction failed: {e}"),
            }
        }
        _ => "none".into(),
    };
    let (frac, n) = sample_residency(root, fs, states, 64);
    let met = match req {
        CacheReq::Uncached => frac <= UNCACHED_MAX,
        _ => true,
    };
    CacheCheck {
        required: req,
        resident_fraction: frac,
        method: format!("{method}; residency sampled over {n} files"),
        met,
    }
}

fn sample_residency(root: &OwnedFd, fs: &FilesetDef, states: &[SlotState], max: u64) -> (f64, u64) {
    let t = states.len() as u64;
    let live: u64 = states.iter().map(|s| s.live()).sum();
    if live == 0 {
        return (0.0, 0);
    }
    let map = Mapping::new(fs.layout);
    let mut p = PathBuf0::default();
    let step = (fs.count / max).max(1);
    let (mut sum, mut n) = (0.0, 0u64);
    let mut slot = 0u64;
    while slot < fs.count && n < max {
        let (k, s) = (slot % t, slot / t);
        if let Some(st) = states.get(k as usize) {
            if s < st.len() && st.get(s) {
                map.file(&mut p, slot);
                if let Ok(fd) = rustix::fs::openat(
                    root,
                    p.c_str(),
                    OFlags::RDONLY | OFlags::CLOEXEC,
                    Mode::empty(),
                ) {
                    if let Ok(f) = crate::sys::cache::resident_fraction_file(&fd.into()) {
                        sum += f;
                        n += 1;
                    }
                }
            }
        }
        slot += step;
    }
    (if n > 0 { sum / n as f64 } else { 0.0 }, n)
}

/// What a phase's workers did, merged, with the fill series.
#[derive(Default)]
struct PhaseRun {
    outs: Vec<FsWorkerOutput>,
    hist: OpHistograms,
    series: Option<Vec<FillPoint>>,
    fill_range: Option<(f64, f64)>,
    fill_reached: bool,
    /// When the end-of-phase syncfs returned, and its error.
    synced: Option<(Instant, Option<String>)>,
}

#[allow(clippy::too_many_arguments)]
fn run_phase(
    test: &TestDef,
    fs: &FilesetDef,
    phase: &PhaseDef,
    root: &OwnedFd,
    states: &mut [SlotState],
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
) -> PhaseRun {
    let n = test.threads as usize;
    let barrier = Barrier::new(n);
    let phase_stop = AtomicBool::new(false);
    let stop = StopFlags { phase: &phase_stop, signal: crate::sys::signals::flag() };
    let counters: Vec<FsCounters> = (0..n).map(|_| FsCounters::default()).collect();
    let fill0 = match phase.amount {
        Amount::Fill(_) => fill_of(root.as_fd()).ok(),
        _ => None,
    };
    let start = Instant::now();
    let fill = match phase.amount {
        Amount::Fill(t) => Some(FillShared::new(fill0.unwrap_or(0.0), t, start)),
        _ => None,
    };
    let plans: Vec<FsWorkerPlan<'_>> = (0..n)
        .map(|k| FsWorkerPlan {
            phase,
            fileset: fs,
            root,
            thread: k as u32,
            threads: n as u32,
            seed: seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            compress_percent: opts.compress_percent,
            fill: fill.as_ref(),
            counters: &counters,
        })
        .collect();
    let finished = AtomicUsize::new(0);
    let outs: Vec<FsWorkerOutput> = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .iter()
            .zip(states.iter_mut())
            .map(|(plan, st)| {
                let (barrier, stop, finished) = (&barrier, &stop, &finished);
                s.spawn(move || {
                    let out = fileset::run(plan, st, barrier, stop);
                    finished.fetch_add(1, Ordering::Release);
                    out
                })
            })
            .collect();
        while finished.load(Ordering::Acquire) < n {
            std::thread::sleep(Duration::from_millis(50));
            progress.phase_progress(counters.iter().map(|c| c.ops.load(Ordering::Relaxed)).sum());
        }
        handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect()
    });
    let (series, fill_end) = match &fill {
        Some(f) => {
            let end = fill_of(root.as_fd()).ok();
            let (b, c) = fileset::totals(&counters);
            let last = (end.unwrap_or(0.0), start.elapsed().as_nanos() as u64, b, c);
            (Some(fill_series(fill0.unwrap_or(0.0), &f.marks(), last)), end)
        }
        None => (None, None),
    };
    let fill_reached = fill.as_ref().is_some_and(|f| f.reached.load(Ordering::Relaxed));
    let mut hist = OpHistograms::default();
    for o in &outs {
        hist.merge(&o.hist);
    }
    // One syncfs after the last worker, inside the phase's timing ("sync included").
    let clean = outs.iter().all(|o| o.error.is_none() && !o.interrupted);
    let synced = (clean && phase.sync.at_end == Some(SyncCall::Syncfs)).then(|| {
        let t0 = Instant::now();
        let r = rustix::fs::syncfs(root);
        let end = Instant::now();
        hist.record(OpKind::Syncfs, (end - t0).as_nanos() as u64);
        (
            end,
            r.err().map(|e| format!("syncfs at the end of the phase: {}", std::io::Error::from(e))),
        )
    });
    PhaseRun { synced, series, fill_range: fill0.zip(fill_end), fill_reached, outs, hist }
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

fn phase_result(
    test: &TestDef,
    phase: &PhaseDef,
    run: &PhaseRun,
    cache: CacheCheck,
) -> PhaseResult {
    let outs = &run.outs;
    let start = outs.iter().map(|o| o.start).min().unwrap_or_else(Instant::now);
    let end = outs.iter().map(|o| o.end).max().unwrap_or(start);
    let end = run.synced.as_ref().map(|s| s.0.max(end)).unwrap_or(end);
    let ended_by = match phase.amount {
        Amount::Fill(_) if outs.iter().any(|o| o.enospc) => {
            Some("filesystem full (ENOSPC)".to_string())
        }
        Amount::Fill(_) if run.fill_reached => Some("fill target reached".to_string()),
        Amount::Fill(_) if outs.iter().all(|o| !o.interrupted && o.error.is_none()) => Some(
            "no free file slot: every slot holds a file; raise the fileset's count to fill further"
                .to_string(),
        ),
        _ => None,
    };
    PhaseResult {
        name: phase.name.clone(),
        timed: phase.timed,
        threads: test.threads,
        wall_nanos: (end - start).as_nanos() as u64,
        bytes_read: outs.iter().map(|o| o.bytes_read).sum(),
        bytes_written: outs.iter().map(|o| o.bytes_written).sum(),
        data_ops: 0,
        cpu_user_nanos: outs.iter().map(|o| o.cpu.user_nanos).sum(),
        cpu_sys_nanos: outs.iter().map(|o| o.cpu.sys_nanos).sum(),
        latency: run.hist.summaries(),
        cache,
        device: None,
        sync_nanos: outs.iter().map(|o| o.sync_nanos).sum::<u64>()
            + run.hist.0[OpKind::Syncfs.index()].max() * run.synced.is_some() as u64,
        memory: None,
        trace: None,
        file_ops: outs.iter().map(|o| o.file_ops).sum(),
        skipped_ops: outs.iter().map(|o| o.skipped_ops).sum(),
        files_created: outs.iter().map(|o| o.creates).sum(),
        fill_series: run.series.clone(),
        fill_range: run.fill_range,
        ended_by,
    }
}

/// Remove every file and directory of the set. Bounded: one unlink per file that exists, one
/// rmdir per directory, then `remove_dir_all` for leftovers (a replace's temporary cut short).
/// Progress goes to stderr every second once it has taken more than one.
fn remove_set(root_path: &Path, root: &OwnedFd, fs: &FilesetDef, states: &[SlotState]) {
    let total: u64 = states.iter().map(|s| s.live()).sum();
    let t = states.len() as u64;
    if crate::sys::signals::interrupted() {
        eprintln!(
            "fsbench: interrupted: stopped; removing {total} test files in {}",
            root_path.display()
        );
    }
    let map = Mapping::new(fs.layout);
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
