//! Roles: threads with a file and a pattern of their own that run beside each timed phase of
//! a test (`[[test.role]]`), e.g. a streaming writer with periodic fsync beside a reader whose
//! latency is the figure (the `starve` suite).
//!
//! A role's threads are ordinary data workers ([`super::worker::run`] on the role's own engine
//! and depth), released together `lead` seconds before the phase's own threads, and stopped
//! (their own stop flag) as soon as the phase's own threads are done; so they load the
//! filesystem for exactly the foreground's time. A role with an amount of its own (fio's jobs
//! that run at the same time, translated as one test) moves it instead, and the phase waits
//! for it. Their latencies and bytes are merged per role and reported beside the
//! phase ([`RoleResult`]); the test's figures are its own threads' only.

use super::flow::Flows;
use super::ioengine::{self, IoEngine, WithEngine};
use super::phase::ExitLink;
use super::runner::{EngineOptions, Progress};
use super::worker::{self, FileWork, StopFlags, Work, WorkerOutput, WorkerPlan};
use crate::model::failure::EngineError;
use crate::model::job::{ExitAll, ExitStops, PhaseDef, RoleDef, RoleWait, TestDef};
use crate::model::latency::OpHistograms;
use crate::model::result::RoleResult;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Barrier;

/// The files of a test's roles, one per thread: `t<ID>.role-<NAME>.<K>.dat` in the test's
/// directory (`t<ID>.role-<NAME>.r<I>.<K>.dat` for process `I` of several sharing the
/// directory); for a role whose threads share one file (`shared_file`), that one file
/// (`t<ID>.role-<NAME>.dat`, `t<ID>.role-<NAME>.r<I>.dat`) for each thread; for a role on
/// another's file (`same_file`), the test's one file or its owner role's.
pub fn paths(test: &TestDef, dir: &Path, process: Option<u32>) -> Vec<Vec<PathBuf>> {
    let rank = process.map(|i| format!("r{i}.")).unwrap_or_default();
    let mut all: Vec<Vec<PathBuf>> = Vec::with_capacity(test.roles.len());
    for r in &test.roles {
        let one = |p: PathBuf| vec![p; r.threads as usize];
        let files = match r.same_file {
            Some(RoleWait::Test) => one(super::files::one_file(test, dir)),
            Some(RoleWait::Role(i)) => {
                one(all.get(i).and_then(|p| p.first()).cloned().unwrap_or_default())
            }
            None if r.shared_file => {
                one(dir.join(format!("t{}.role-{}.{rank}dat", test.id, r.name)))
            }
            None => (0..r.threads)
                .map(|k| dir.join(format!("t{}.role-{}.{rank}{k}.dat", test.id, r.name)))
                .collect(),
        };
        all.push(files);
    }
    all
}

/// Refuse what a role on the test's own file cannot give: `--verify` reads the test's file
/// back and would find the role's writes.
pub fn check(test: &TestDef, verify: bool) -> Result<(), EngineError> {
    use crate::model::job::OpKind;
    let writes = |r: &&RoleDef| {
        r.phase.pattern.kinds().iter().any(|k| matches!(k, OpKind::Write | OpKind::Create))
    };
    let mut on_test = test.roles.iter().filter(|r| r.same_file == Some(RoleWait::Test));
    match on_test.find(writes) {
        Some(r) if verify => Err(EngineError::unsupported(format!(
            "role `{}` writes into the test's own file, whose content --verify checks; run without --verify",
            r.name
        ))),
        _ => Ok(()),
    }
}

/// Fill the files of the roles that read what is there (`file.prefill`), and lay out those
/// of roles that write (`file.preallocate`), untimed.
/// `Ok(false)`: interrupted.
pub fn prefill(
    test: &TestDef,
    paths: &[Vec<PathBuf>],
    opts: &EngineOptions,
    seed: u64,
    progress: &dyn Progress,
) -> Result<bool, EngineError> {
    for (r, p) in test.roles.iter().zip(paths) {
        // A file its threads share is laid out once.
        let p = if r.shared_file { &p[..p.len().min(1)] } else { &p[..] };
        if !r.prefill {
            // fio's `fallocate` of a write job's file (a role on another's has none).
            if let Some(how) = r.preallocate {
                super::files::preallocate(p, r.file_bytes, how, false)
                    .map_err(|e| e.at(format!("setup of role `{}`", r.name)))?;
            }
            continue;
        }
        let ok = super::files::prefill(
            p,
            r.file_bytes,
            opts.compress_percent,
            seed ^ 0x201e,
            None,
            progress,
        )
        .map_err(|e| e.at(format!("setup of role `{}`", r.name)))?;
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Remove the roles' own files (never the file of a role on another's: its owner's).
pub fn remove(test: &TestDef, paths: &[Vec<PathBuf>]) {
    let own = test.roles.iter().zip(paths).filter(|(r, _)| r.same_file.is_none());
    for p in own.flat_map(|(_, p)| p) {
        let _ = std::fs::remove_file(p);
    }
}

/// Run `foreground` (the phase's own threads) with every role of `test` beside it. Returns the
/// foreground's value, each role's figures, and the first error of a role.
///
/// Each role runs on its own engine at its own depth, released together with the others
/// (then `delay_seconds` later, fio's `startdelay`); a role without an amount of its own is
/// stopped when the foreground is done, one with an amount (`own_amount`, fio's jobs of one
/// group) moves it (or stops at its time cap, `max_seconds`) and is waited for. Each thread
/// of a role that is `uncached` drops its file's pages when it starts, after its wait and
/// delay (fio invalidates a job's file when the job starts, not when its group does: a reader
/// that waits for a writer of its file would otherwise read the writer's pages from the cache).
///
/// fio's `exitall` ([`crate::model::job::ExitAll`]): when the first thread of a job with one
/// (the foreground, through `exit`, or a role) ends, a watcher stops the jobs it names within
/// [`EXIT_POLL`]; each keeps the work it did, and its own end stops what its `exitall` names.
///
/// Every thread with a flow (fio's `flow`: `phase`'s own and the roles') shares its flow's
/// counters, which `foreground` is given for the phase's threads.
pub fn beside<T>(
    test: &TestDef,
    phase: &PhaseDef,
    paths: &[Vec<PathBuf>],
    seed: u64,
    compress_percent: u8,
    foreground: impl FnOnce(&ExitLink, &Flows) -> T,
) -> (T, Vec<RoleResult>, Option<EngineError>) {
    let fg_exit = ExitLink::default();
    let flows = Flows::of(test, phase);
    if test.roles.is_empty() {
        return (foreground(&fg_exit, &flows), Vec::new(), None);
    }
    let mut error = None;
    // Each role's stop flag: set when the foreground is done for a role without an amount of
    // its own, at its time cap (`max_seconds`) for one with; a signal stops every role.
    let stops: Vec<AtomicBool> = test.roles.iter().map(|_| AtomicBool::new(false)).collect();
    let flags: Vec<StopFlags<'_>> =
        stops.iter().map(|s| StopFlags { phase: s, signal: crate::sys::signals::flag() }).collect();
    let running = AtomicUsize::new(0);
    // What `after` waits for: threads of each role still running, the foreground's end, and
    // when each role started (ns after the release, + 1; 0: not yet).
    let left: Vec<AtomicUsize> =
        test.roles.iter().map(|r| AtomicUsize::new(r.threads as usize)).collect();
    let foreground_done = AtomicBool::new(false);
    let starts: Vec<AtomicU64> = test.roles.iter().map(|_| AtomicU64::new(0)).collect();
    let released = std::time::Instant::now();
    let barriers: Vec<Barrier> =
        test.roles.iter().map(|r| Barrier::new(r.threads as usize)).collect();
    let n: usize = test.roles.iter().map(|r| r.threads as usize).sum();
    let counters: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let mut plans: Vec<(usize, &Path, WorkerPlan<'_>)> = Vec::with_capacity(n);
    for (ri, (r, files)) in test.roles.iter().zip(paths).enumerate() {
        for (k, path) in files.iter().enumerate() {
            let seed = seed ^ 0x5eed_0000 ^ ((ri as u64) << 8) ^ k as u64;
            plans.push((
                ri,
                path,
                WorkerPlan {
                    phase: &r.phase,
                    seed,
                    compress_percent,
                    iodepth: r.iodepth,
                    thread_index: k as u32,
                    work: Work::File(FileWork {
                        path,
                        file_size: r.file_bytes,
                        region_start: 0,
                        region_len: r.file_bytes,
                        verify: None,
                        // The job's own named file, as the test's threads open it.
                        nofollow: r.same_file == Some(RoleWait::Test) && test.files.named.is_some(),
                        random_in_region: false,
                        more: None,
                    }),
                    // No series of its own; its rate and think time (fio's) as a phase's.
                    over_time: super::worker::OverTime {
                        series: None,
                        flow: flows.plan(r.phase.load.flow),
                        pace: super::pace::PacePlan::of(&r.phase.load, k as u32, r.threads)
                            .seeded(seed)
                            .limited_to(&r.phase),
                    },
                },
            ));
        }
    }
    let (value, outs) = std::thread::scope(|s| {
        let handles: Vec<_> = plans
            .into_iter()
            .zip(&counters)
            .map(|((ri, path, plan), ctr)| {
                let r = &test.roles[ri];
                let job =
                    RoleThread { plan, role: r, barrier: &barriers[ri], flags: &flags[ri], ctr };
                running.fetch_add(1, Ordering::Relaxed);
                let (running, left, foreground_done, starts, stops) =
                    (&running, &left, &foreground_done, &starts, &stops);
                s.spawn(move || {
                    // fio's wait_for: until the waitee's threads are all done.
                    let waiting = || match r.after {
                        None => false,
                        Some(RoleWait::Test) => !foreground_done.load(Ordering::Acquire),
                        Some(RoleWait::Role(i)) => {
                            left.get(i).is_some_and(|l| l.load(Ordering::Acquire) > 0)
                        }
                    };
                    // A role stopped before it starts (exitall) starts no later.
                    let stopped = || stops[ri].load(Ordering::Relaxed);
                    while waiting() && !crate::sys::signals::interrupted() && !stopped() {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    if !stopped() {
                        sleep_unless_interrupted(r.delay_seconds);
                    }
                    // fio's invalidate: when the job starts (its threads then meet at the
                    // worker's barrier, so no thread's timed work sees another's drop).
                    let dropped = if r.uncached && !stopped() { evict(path) } else { Ok(()) };
                    let at = released.elapsed().as_nanos() as u64 + 1;
                    let _ = starts[ri].compare_exchange(0, at, Ordering::AcqRel, Ordering::Acquire);
                    let mut out = job.run();
                    // The drop failed first; the role still ran (its threads wait for each other).
                    out.error = dropped.err().or(out.error.take());
                    left[ri].fetch_sub(1, Ordering::Release);
                    running.fetch_sub(1, Ordering::Release);
                    (ri, out)
                })
            })
            .collect();
        // Time caps of roles with their own amount, counted from each role's start.
        let caps: Vec<(usize, std::time::Duration)> = test
            .roles
            .iter()
            .enumerate()
            .filter(|(_, r)| r.own_amount)
            .filter_map(|(i, r)| {
                Some((i, std::time::Duration::try_from_secs_f64(r.phase.max_seconds?).ok()?))
            })
            .collect();
        if !caps.is_empty() {
            let (stops, running, starts) = (&stops, &running, &starts);
            s.spawn(move || {
                while running.load(Ordering::Acquire) > 0 && !crate::sys::signals::interrupted() {
                    for (i, cap) in &caps {
                        let at = starts[*i].load(Ordering::Acquire);
                        let start = std::time::Duration::from_nanos(at.saturating_sub(1));
                        if at > 0 && released.elapsed() >= start + *cap {
                            stops[*i].store(true, Ordering::Relaxed);
                        }
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            });
        }
        if test.exitall.is_some() || test.roles.iter().any(|r| r.exitall.is_some()) {
            let (stops, left, fg_exit, foreground_done, running) =
                (&stops, &left, &fg_exit, &foreground_done, &running);
            s.spawn(move || {
                let mut watch = ExitWatch::new(test);
                loop {
                    // Read before the ends, so the last ends are seen after the loop's end.
                    let over = foreground_done.load(Ordering::Acquire)
                        && running.load(Ordering::Acquire) == 0;
                    let ended = |j: usize| match j {
                        0 => fg_exit.ended.load(Ordering::Acquire),
                        j => {
                            left[j - 1].load(Ordering::Acquire) < test.roles[j - 1].threads as usize
                        }
                    };
                    watch.step(ended, |j| match j {
                        0 => fg_exit.exit(),
                        j => stops[j - 1].store(true, Ordering::Relaxed),
                    });
                    if over || crate::sys::signals::interrupted() {
                        break;
                    }
                    std::thread::sleep(EXIT_POLL);
                }
            });
        }
        // The roles' lead: the foreground meets them in their steady state.
        let lead = test.roles.iter().map(|r| r.lead_seconds).fold(0.0, f64::max);
        sleep_unless_interrupted(lead);
        let value = foreground(&fg_exit, &flows);
        foreground_done.store(true, Ordering::Release);
        for (r, s) in test.roles.iter().zip(&stops) {
            if !r.own_amount {
                s.store(true, Ordering::Relaxed);
            }
        }
        let outs: Vec<(usize, WorkerOutput)> =
            handles.into_iter().map(|h| h.join().expect("role thread panicked")).collect();
        (value, outs)
    });
    let mut results = Vec::with_capacity(test.roles.len());
    for (ri, r) in test.roles.iter().enumerate() {
        let mine: Vec<&WorkerOutput> =
            outs.iter().filter(|(i, _)| *i == ri).map(|o| &o.1).collect();
        results.push(role_result(r, &mine));
        if let Some(e) = mine.iter().find_map(|o| o.error.as_ref()) {
            error.get_or_insert_with(|| e.clone().at(format!("role `{}`", r.name)));
        }
    }
    (value, results, error)
}

/// How often the `exitall` watcher of [`beside`] looks for jobs that ended: the bound on how
/// late a job it stops sees its stop flag (plus the op it has in flight).
pub const EXIT_POLL: std::time::Duration = std::time::Duration::from_millis(2);

/// Which jobs of a test fio's `exitall` stops, job by job: job 0 is the test's own threads,
/// job `i + 1` its role `i`. Plain bookkeeping, so the cascade is testable without threads.
struct ExitWatch {
    /// Each job's `exitall`.
    exits: Vec<Option<ExitAll>>,
    /// Jobs whose end was acted on.
    seen: Vec<bool>,
}

impl ExitWatch {
    fn new(test: &TestDef) -> ExitWatch {
        let exits: Vec<Option<ExitAll>> =
            std::iter::once(test.exitall).chain(test.roles.iter().map(|r| r.exitall)).collect();
        ExitWatch { seen: vec![false; exits.len()], exits }
    }

    /// Act on the jobs that `ended` says have ended since the last step: `stop` each job their
    /// `exitall` names (a job may be stopped more than once).
    fn step(&mut self, ended: impl Fn(usize) -> bool, mut stop: impl FnMut(usize)) {
        for j in 0..self.exits.len() {
            if self.seen[j] || !ended(j) {
                continue;
            }
            self.seen[j] = true;
            let Some(e) = self.exits[j] else { continue };
            for (k, other) in self.exits.iter().enumerate() {
                let named = match e.stops {
                    ExitStops::Test => true,
                    ExitStops::Group => other.is_some_and(|o| o.group == e.group),
                };
                if named {
                    stop(k);
                }
            }
        }
    }
}

/// Drop `path`'s cached pages (fsync + fadvise DONTNEED) as an uncached role's thread starts.
fn evict(path: &Path) -> Result<(), EngineError> {
    crate::sys::cache::evict_file(path)
        .map_err(|e| EngineError::io("dropping the cached pages", Some(path.to_path_buf()), &e))
}

/// Sleep `seconds` (at most), waking early on a signal.
fn sleep_unless_interrupted(seconds: f64) {
    let d = std::time::Duration::try_from_secs_f64(seconds).unwrap_or_default();
    let now = std::time::Instant::now();
    let until = now.checked_add(d).unwrap_or(now);
    while std::time::Instant::now() < until && !crate::sys::signals::interrupted() {
        let left = until.saturating_duration_since(std::time::Instant::now());
        std::thread::sleep(left.min(std::time::Duration::from_millis(20)));
    }
}

/// One role thread: the worker on the role's engine (after its wait and delay).
struct RoleThread<'a> {
    plan: WorkerPlan<'a>,
    role: &'a RoleDef,
    barrier: &'a Barrier,
    flags: &'a StopFlags<'a>,
    ctr: &'a AtomicU64,
}

impl RoleThread<'_> {
    fn run(self) -> WorkerOutput {
        let engine = self.role.engine.clone();
        ioengine::with_engine(&engine, self).unwrap_or_else(|| {
            let e = format!("engine `{}` is not one of this fsbench's", engine.name());
            WorkerOutput {
                error: Some(EngineError::unsupported(e)),
                ..WorkerOutput::at(std::time::Instant::now())
            }
        })
    }
}

impl WithEngine for RoleThread<'_> {
    type Output = WorkerOutput;

    fn with<E: IoEngine>(self) -> WorkerOutput {
        let RoleThread { mut plan, role, barrier, flags, ctr } = self;
        let options = E::options(&role.engine_options);
        worker::run::<E>(&mut plan, &options, barrier, flags, ctr)
    }
}

fn role_result(r: &RoleDef, outs: &[&WorkerOutput]) -> RoleResult {
    let mut hist = OpHistograms::default();
    for o in outs {
        hist.merge(&o.hist);
    }
    let start = outs.iter().map(|o| o.start).min();
    let end = outs.iter().map(|o| o.end).max();
    let wall_nanos = start.zip(end).map_or(0, |(s, e)| (e - s).as_nanos() as u64);
    let bytes_read: u64 = outs.iter().map(|o| o.bytes_read).sum();
    let bytes_written: u64 = outs.iter().map(|o| o.bytes_written).sum();
    let secs = wall_nanos as f64 / 1e9;
    RoleResult {
        name: r.name.clone(),
        threads: r.threads,
        wall_nanos,
        bytes_read,
        bytes_written,
        data_ops: outs.iter().map(|o| o.data_ops).sum(),
        mib_per_s: if secs > 0.0 {
            (bytes_read + bytes_written) as f64 / (1u64 << 20) as f64 / secs
        } else {
            0.0
        },
        latency: hist.summaries(),
        per_thread: super::results::per_thread(outs),
        cpu_user_nanos: outs.iter().map(|o| o.cpu.user_nanos).sum(),
        cpu_sys_nanos: outs.iter().map(|o| o.cpu.sys_nanos).sum(),
        rusage: super::results::rusage(outs.iter().copied()),
        submission: super::submit::SplitRecorder::of(outs.iter().map(|o| o.split.as_deref())),
        depths: super::results::depths(outs.iter().copied()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(exits: &[Option<ExitAll>]) -> ExitWatch {
        ExitWatch { exits: exits.to_vec(), seen: vec![false; exits.len()] }
    }

    fn group(g: u32) -> Option<ExitAll> {
        Some(ExitAll { stops: ExitStops::Group, group: g })
    }

    /// One step with the jobs in `ended` ended: the jobs stopped, in order, once each.
    fn step(w: &mut ExitWatch, ended: &[usize]) -> Vec<usize> {
        let mut stopped = Vec::new();
        w.step(|j| ended.contains(&j), |k| stopped.push(k));
        stopped.sort();
        stopped.dedup();
        stopped
    }

    /// fio's exit_what=group stops the jobs of the ended job's groupid (itself included: its
    /// other threads), `test` every job; a job without exitall stops nothing, and each end is
    /// acted on once. The cascade: a stopped job's own end then stops what it names.
    #[test]
    fn an_ended_job_stops_its_group_or_the_test_and_the_stopped_cascade() {
        let test_wide = Some(ExitAll { stops: ExitStops::Test, group: 5 });
        let mut w = watch(&[group(0), group(1), group(0), test_wide]);
        assert_eq!(step(&mut w, &[]), Vec::<usize>::new());
        assert_eq!(step(&mut w, &[0]), [0, 2]);
        assert_eq!(step(&mut w, &[0]), Vec::<usize>::new(), "acted on once");
        // Job 2 ends (stopped): group 0 again; then job 3 (stops = test): everyone.
        assert_eq!(step(&mut w, &[0, 2]), [0, 2]);
        assert_eq!(step(&mut w, &[0, 2, 3]), [0, 1, 2, 3]);
        let mut none = watch(&[None, group(0)]);
        assert_eq!(step(&mut none, &[0]), Vec::<usize>::new());
        assert_eq!(step(&mut none, &[0, 1]), [1], "a job without exitall is not in a group");
    }
}
