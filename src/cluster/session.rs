//! One multi-client run or comparison: every rank drives the same plan through the suite driver
//! ([`crate::driver::drive`]) with the cluster's phase hooks, then rank 0 gathers and reduces
//! every rank's results.
//!
//! The targets are directories every rank sees ([`RankTargets`]): by default each rank makes
//! its own work directory in each (file per process); with `--mpi-shared`, rank 0 makes one
//! and names it to the others, and removes it only after every rank is done.

use super::hooks::{agree, ClusterHooks};
use super::reduce::{reduce, RankReport};
use super::{clock, Comm};
use crate::driver::{self, Outcome, PhaseOutcome, Plan, Targets, WorkDir};
use crate::engine::{EngineError, Progress, Share, Target, Workspace};
use crate::model::cluster::{ClockSync, ClusterInfo, RankInfo};
use crate::model::job::{Layout, Suite};
use crate::model::run::RunStatus;
use crate::model::testbed::TestbedEnv;
use anyhow::Context;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Directories every rank sees, as the driver's targets. Work directories are made once per
/// target, collectively (every rank calls [`Targets::workspace`] at the same point of the same
/// schedule), and removed when this is dropped.
pub struct RankTargets {
    comm: Arc<dyn Comm>,
    dirs: Vec<(PathBuf, String)>,
    shared: bool,
    made: Vec<Option<Workspace>>,
    paths: Vec<Option<PathBuf>>,
}

impl RankTargets {
    /// `dirs`: each target's directory and label; `shared`: one work directory for all ranks.
    pub fn new(comm: Arc<dyn Comm>, dirs: Vec<(PathBuf, String)>, shared: bool) -> RankTargets {
        let n = dirs.len();
        RankTargets {
            comm,
            dirs,
            shared,
            made: (0..n).map(|_| None).collect(),
            paths: vec![None; n],
        }
    }

    /// Make target `i`'s work directory: each rank its own, or rank 0 one for all (its name
    /// in the directory, broadcast). Collective; an error on any rank is an error on every
    /// rank, naming the ranks that failed.
    fn make(&mut self, i: usize) -> anyhow::Result<PathBuf> {
        let comm = &*self.comm;
        let mine = if comm.rank() == 0 || !self.shared {
            Some(Workspace::create(&self.dirs[i].0))
        } else {
            None
        };
        let path = if self.shared {
            let said: Result<String, String> = match &mine {
                Some(Ok(w)) => Ok(w.shown_path().display().to_string()),
                Some(Err(e)) => Err(format!("rank 0: {e}")),
                None => Ok(String::new()),
            };
            let b = comm.broadcast(serde_json::to_vec(&said)?)?;
            let heard: Result<String, String> = serde_json::from_slice(&b)?;
            match (&mine, heard) {
                // Rank 0 uses its own anchored path (`/proc/self/fd/N`).
                (Some(Ok(w)), Ok(_)) => w.path().to_path_buf(),
                (_, Ok(name)) => PathBuf::from(name),
                (_, Err(e)) => anyhow::bail!(e),
            }
        } else {
            let local = match &mine {
                Some(Ok(_)) => PhaseOutcome::Ok,
                Some(Err(e)) => PhaseOutcome::Failed(EngineError::hook(e.to_string())),
                None => PhaseOutcome::Failed(EngineError::hook("no work directory")),
            };
            match agree(comm, local)? {
                PhaseOutcome::Ok => {}
                PhaseOutcome::Failed(e) => anyhow::bail!(e),
                PhaseOutcome::Interrupted => anyhow::bail!("interrupted"),
            }
            match &mine {
                Some(Ok(w)) => w.path().to_path_buf(),
                _ => unreachable!("every rank succeeded"),
            }
        };
        self.made[i] = mine.and_then(|m| m.ok());
        Ok(path)
    }
}

impl Targets for RankTargets {
    fn count(&self) -> usize {
        self.dirs.len()
    }
    fn target(&self, i: usize) -> Target<'_> {
        let mut t = Target::dir(&self.dirs[i].0);
        t.label = self.dirs[i].1.clone();
        t
    }
    fn env(&self, _: usize) -> Option<TestbedEnv> {
        None
    }
    fn refresh(&mut self, _: usize) -> anyhow::Result<()> {
        Ok(())
    }
    fn workspace(&mut self, i: usize) -> anyhow::Result<WorkDir> {
        if self.paths[i].is_none() {
            self.paths[i] = Some(self.make(i)?);
        }
        Ok(WorkDir::Shared(self.paths[i].clone().unwrap_or_default()))
    }
}

/// With `--mpi-shared`, a fileset is one set for all `ranks` (mdtest's shared directory): as a
/// shared data file is `ranks` times the size, the set has `ranks` times the files, each leaf
/// directory of a tree `ranks` times as many, so every thread of every rank has as many files
/// as one thread of a single-process run. The engine partitions the slots over all threads.
pub fn shared_suite(suite: &Suite, ranks: u32) -> Suite {
    let mut s = suite.clone();
    let n = ranks.max(1) as u64;
    for t in s.tests.iter_mut().filter(|t| t.is_fileset()) {
        t.files.count *= n;
        if let Layout::Tree { files_per_dir, .. } = &mut t.files.layout {
            *files_per_dir *= n;
        }
    }
    s
}

/// How a rank's part of a session ended.
pub enum SessionEnd {
    /// Rank 0: every rank's results, reduced per target (`runs[i].cluster` says who ran).
    Reduced(Outcome),
    /// Another rank: how its own part ended (rank 0 reports the run).
    Contributed(RunStatus),
}

/// Options of a session besides the plan.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// `--stonewall`, seconds.
    pub stonewall_s: Option<f64>,
    /// `--mpi-shared`.
    pub shared: bool,
}

/// Run `plan` on `dirs` (path, label) on every rank of `comm`. `plan.engine` gets the
/// stonewall and the share from `opts`. Collective: every rank calls it.
pub fn run(
    comm: Arc<dyn Comm>,
    plan: &Plan<'_>,
    dirs: Vec<(PathBuf, String)>,
    opts: &SessionOptions,
    progress: &dyn Progress,
) -> anyhow::Result<SessionEnd> {
    let rank = comm.rank();
    let sync = clock::sync(&*comm)?;
    let info = RankInfo {
        rank,
        host: comm.host(),
        pid: std::process::id(),
        dir: dirs.iter().map(|d| d.0.display().to_string()).collect::<Vec<_>>().join(", "),
        clock: sync.clone(),
        monotonic_minus_common_s: {
            let c = clock::GlobalClock::new(&*comm, &sync);
            monotonic_now() - c.now()
        },
    };
    announce(&*comm, &info, &sync, opts.shared);
    let hooks = ClusterHooks::new(comm.clone(), sync);
    let mut plan = plan.clone();
    plan.engine.stonewall = opts.stonewall_s.map(std::time::Duration::from_secs_f64);
    plan.engine.share = opts.shared.then(|| Share { index: rank, count: comm.size() });
    let mut targets = RankTargets::new(comm.clone(), dirs, opts.shared);
    let mine = driver::drive(&plan, &mut targets, progress, &hooks, &mut |_, _, _| {});
    // Every rank is done with every work directory before rank 0 removes a shared one. A rank
    // that failed still reports, so rank 0 is not left waiting.
    comm.barrier("the end of the run")?;
    drop(targets);
    let mine = match mine {
        Ok(o) => Ok(RankReport { info, runs: o.runs, windows: hooks.windows() }),
        Err(e) => Err(format!("rank {rank} (host {}): {e:#}", info.host)),
    };
    let bytes = serde_json::to_vec(&mine).context("encoding this rank's results")?;
    let all = comm.gather(&bytes)?;
    if rank != 0 {
        return Ok(SessionEnd::Contributed(match &mine {
            Ok(r) if r.runs.iter().any(|r| r.interrupted) => RunStatus::Interrupted,
            Ok(r)
                if r.runs.iter().flat_map(|x| &x.tests).any(|t| {
                    matches!(t.status, crate::model::result::TestStatus::Failed { .. })
                }) =>
            {
                RunStatus::Failed
            }
            Ok(_) => RunStatus::Ok,
            Err(_) => RunStatus::Failed,
        }));
    }
    let mut ranks = Vec::with_capacity(all.len());
    for (r, b) in all.iter().enumerate() {
        let got: Result<RankReport, String> = serde_json::from_slice(b)
            .with_context(|| format!("decoding the results of rank {r}"))?;
        ranks.push(got.map_err(anyhow::Error::msg)?);
    }
    Ok(SessionEnd::Reduced(combine(&ranks, opts)))
}

/// Rank 0: one outcome from every rank's.
fn combine(ranks: &[RankReport], opts: &SessionOptions) -> Outcome {
    let mut hosts: Vec<String> = Vec::new();
    for r in ranks {
        if !hosts.contains(&r.info.host) {
            hosts.push(r.info.host.clone());
        }
    }
    let rank_info: Vec<RankInfo> = ranks.iter().map(|r| r.info.clone()).collect();
    let cluster = ClusterInfo {
        ranks: ranks.len() as u32,
        hosts,
        mode: if opts.shared { "shared" } else { "file-per-process" }.into(),
        stonewall_s: opts.stonewall_s,
        clock_uncertainty_s: ranks.iter().map(|r| r.info.clock.uncertainty_s).fold(0.0, f64::max),
        clock_check_same_host_s: ClusterInfo::same_host_check(&rank_info),
        rank_info,
    };
    let mut runs = ranks[0].runs.clone();
    for (i, run) in runs.iter_mut().enumerate() {
        run.tests = reduce(ranks, i, opts.shared);
        run.interrupted = ranks.iter().any(|r| r.runs.get(i).is_some_and(|x| x.interrupted));
        run.cluster = Some(cluster.clone());
    }
    let interrupted = runs.iter().any(|r| r.interrupted);
    Outcome { runs, interrupted }
}

/// "fsbench: rank R of N on HOST (pid P) runs in ...; clock: ..." on stderr, in one write so
/// the lines of ranks that mpirun merges into one stream do not interleave.
fn announce(comm: &dyn Comm, info: &RankInfo, sync: &ClockSync, shared: bool) {
    let line = format!(
        "fsbench: rank {} of {} on {} (pid {}) runs in {} in {}; clock: {}, offset {:+.1} µs ± {:.1} µs\n",
        info.rank,
        comm.size(),
        info.host,
        info.pid,
        if shared {
            "rank 0's .fsbench-* (shared)".to_string()
        } else {
            format!(".fsbench-{}-*", info.pid)
        },
        info.dir,
        sync.method,
        sync.offset_s * 1e6,
        sync.uncertainty_s * 1e6
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// CLOCK_MONOTONIC in seconds.
fn monotonic_now() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Single;
    use crate::driver::Order;
    use crate::model::scale::Scale;
    use crate::workload::{ResolveCtx, SuiteSource};

    fn suite(body: &str) -> Suite {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.toml");
        std::fs::write(&p, body).unwrap();
        let ctx = ResolveCtx { scale: Scale::Factor(1.0), free_memory: 1 << 30 };
        crate::workload::load(&SuiteSource::File(p), &ctx).unwrap()
    }

    const MD: &str = "[[test]]\nid = \"m\"\nname = \"md\"\nfileset = { count = 40, flat = true, size = \"0\" }\n[[test.phase]]\nname = \"create\"\npattern = [{ op = \"create\", pick = \"next\" }]\namount = { passes = 1 }\n";

    #[test]
    fn a_shared_fileset_has_ranks_times_the_files() {
        let s = suite(MD);
        let shared = shared_suite(&s, 4);
        assert_eq!((s.tests[0].files.count, shared.tests[0].files.count), (40, 160));
    }

    #[test]
    fn one_rank_runs_through_the_driver_and_reduces_to_itself() {
        let s = suite(MD);
        let d1 = tempfile::tempdir().unwrap();
        let d2 = tempfile::tempdir().unwrap();
        let plan = Plan {
            suite: &s,
            engine: crate::engine::EngineOptions { repeat: 2, ..Default::default() },
            order: Order::Interleaved,
            fresh_per_test: false,
            auto: None,
        };
        let dirs =
            vec![(d1.path().to_path_buf(), "a".into()), (d2.path().to_path_buf(), "b".into())];
        let comm: Arc<dyn Comm> = Arc::new(Single::default());
        let opts = SessionOptions { stonewall_s: None, shared: true };
        let end = run(comm, &plan, dirs, &opts, &crate::engine::NoProgress).unwrap();
        let SessionEnd::Reduced(o) = end else { panic!("rank 0 reduces") };
        assert_eq!(o.runs.len(), 2);
        for (run, label) in o.runs.iter().zip(["a", "b"]) {
            assert_eq!(run.target.label, label);
            assert_eq!(run.cluster.as_ref().unwrap().mode, "shared");
            let t = &run.tests[0];
            assert_eq!(t.status, crate::model::result::TestStatus::Ok, "{:?}", t.status);
            assert_eq!(t.reps.len(), 2);
            for rep in &t.reps {
                let c = rep.cluster.as_ref().unwrap();
                assert_eq!(c.per_rank.len(), 1);
                assert_eq!(c.per_rank[0].windows.len(), 1, "this target's window only");
                assert_eq!(rep.file_ops, 40);
            }
        }
        for d in [&d1, &d2] {
            assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "work directory removed");
        }
    }
}
