//! `fsbench run --mpi`: the same run on every rank of an MPI job, reduced on rank 0.
//!
//! Rank 0 loads and validates the workload and broadcasts it, so every rank runs the same
//! definition or all stop with rank 0's message. Each rank checks its --dir and works in its own
//! subdirectory there (file per process). The clocks are aligned ([`crate::cluster::clock`]),
//! the engine's phase hooks put a barrier before each phase and agree on its outcome after it,
//! and at the end every rank's results go to rank 0, which reduces them
//! ([`crate::cluster::reduce`]) and alone writes the output and the results database.

use super::progress::Bar;
use super::run::RunArgs;
use super::{record, ExitCode, UserError};
use crate::cluster::hooks::{agree, ClusterHooks};
use crate::cluster::model::{ClusterInfo, RankInfo};
use crate::cluster::reduce::{reduce, RankReport};
use crate::cluster::{clock, Comm};
use crate::engine::hooks::{Hooks, PhaseOutcome};
use crate::engine::{self, EngineOptions, NoProgress, Progress, Target};
use crate::output::{exporter, ExportOptions};
use crate::result::TestStatus;
use crate::store::read::{RunKind, RunStatus};
use crate::store::write::ConfigStart;
use crate::store::{RunMeta, RunOptions};
use crate::workload::Suite;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// Options of a multi-client run.
#[derive(Debug, Clone, Args)]
pub struct MpiArgs {
    /// Run as one rank of an MPI job: `mpirun -np N fsbench run --mpi --dir DIR ...`. Every
    /// rank runs the workload's threads in its own subdirectory of DIR (file per process; DIR
    /// may be a mount all hosts share); phases start together after a barrier, and the figure
    /// is all ranks' bytes over the time from the first start to the last end (as IOR). Needs a
    /// build with `--features mpi`.
    #[arg(long)]
    pub mpi: bool,

    /// With --mpi: stop each timed phase on every rank at the next operation after this many
    /// seconds (IOR's stonewall, `-D`); the figure then counts the work every rank completed.
    #[arg(long, value_name = "SECONDS", requires = "mpi", value_parser = positive_secs)]
    pub stonewall: Option<f64>,

    /// With --mpi: all ranks work in one directory (made by rank 0 in DIR) and share each
    /// test's shared file, which is then ranks times the size, every thread of every rank
    /// writing or reading its own region with sequential offsets, or anywhere in the file with
    /// random ones (IOR's default, shared-file mode). Tests with a file per thread, and
    /// filesets, get a file or directory per rank in that directory.
    #[arg(long, requires = "mpi")]
    pub mpi_shared: bool,

    /// With --mpi: a rank waiting longer than this at a barrier for the others ends the whole
    /// job with a message naming where it waited (a rank hung in the kernel, or died without
    /// mpirun noticing).
    #[arg(long, value_name = "SECONDS", default_value_t = 1800.0, value_parser = positive_secs)]
    pub mpi_timeout: f64,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    if a.fs.is_some() {
        return Err(UserError(
            "--mpi runs in a directory every rank sees: give --dir (a testbed per rank with --fs is not supported)".into(),
        )
        .into());
    }
    let comm = crate::cluster::init(Some(Duration::from_secs_f64(a.mpi.mpi_timeout)))
        .map_err(UserError)?;
    let rank = comm.rank();

    // Stage 1: rank 0 validates the workload; every rank runs what it broadcast.
    let suite = share_suite(&*comm, &a)?;
    let Some(suite) = suite else { return Ok(ExitCode::BadInput) };
    let Some(dir) = a.dir.clone() else {
        return Err(UserError("--mpi needs --dir".into()).into());
    };
    let local =
        match crate::driver::TargetSet::new(&[crate::driver::Spec::Dir(dir.clone())], &|c| {
            a.testbed.options(c, Some(&suite))
        }) {
            Ok(_) => PhaseOutcome::Ok,
            Err(e) => PhaseOutcome::Failed(format!("{e:#}")),
        };
    if let PhaseOutcome::Failed(msg) = agree(&*comm, local)? {
        if rank == 0 {
            return Err(UserError(msg).into());
        }
        return Ok(ExitCode::BadInput);
    }
    let store = if rank == 0 { a.record.open()? } else { None };

    // Stage 2: one clock, then the run with the cluster's phase hooks.
    let sync = clock::sync(&*comm)?;
    let info = RankInfo {
        rank,
        host: comm.host(),
        pid: std::process::id(),
        dir: dir.display().to_string(),
        clock: sync.clone(),
        monotonic_minus_common_s: {
            let c = clock::GlobalClock::new(&*comm, &sync);
            monotonic_now() - c.now()
        },
    };
    // One write, so lines of ranks that mpirun merges into one stream do not interleave.
    let line = format!(
        "fsbench: rank {rank} of {} on {} (pid {}) runs in {}/{}; clock: {}, offset {:+.1} µs ± {:.1} µs\n",
        comm.size(),
        info.host,
        info.pid,
        dir.display(),
        if a.mpi.mpi_shared { ".fsbench-* of rank 0 (shared)".to_string() } else { format!(".fsbench-{}-*", info.pid) },
        sync.method,
        sync.offset_s * 1e6,
        sync.uncertainty_s * 1e6
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    let stonewall = a.mpi.stonewall.map(Duration::from_secs_f64);
    let hooks = Arc::new(ClusterHooks::new(comm.clone(), sync, stonewall, a.mpi.mpi_shared));
    let opts = EngineOptions { hooks: Hooks(hooks.clone()), ..a.data.engine(a.repeat) };
    let target = Target::dir(&dir);
    let bar;
    let progress: &dyn Progress = if rank == 0 {
        bar = Bar::new(suite.tests.len(), a.repeat);
        &bar
    } else {
        &NoProgress
    };
    let scale = a.workload.scale.to_string();
    let mine = run_rank(&*comm, &suite, &target, &opts, progress, &scale, a.mpi.mpi_shared)
        .with_context(|| format!("rank {rank}: running in {}", dir.display()));
    // A rank that could not even start still reports, so rank 0 is not left waiting.
    let mine = match mine {
        Ok(r) => Ok(RankReport { info, report: r, windows: hooks.windows() }),
        Err(e) => Err(format!("rank {rank} (host {}): {e:#}", info.host)),
    };
    let bytes = serde_json::to_vec(&mine).context("encoding this rank's results")?;
    comm.barrier("the end of the run")?;
    let all = comm.gather(&bytes)?;
    if rank != 0 {
        return Ok(match &mine {
            Ok(r) if r.report.interrupted => ExitCode::Interrupted,
            Ok(_) => ExitCode::Success,
            Err(_) => ExitCode::TestFailed,
        });
    }

    // Stage 3 (rank 0): reduce, record, output.
    let mut ranks = Vec::with_capacity(all.len());
    for (r, b) in all.iter().enumerate() {
        let got: Result<RankReport, String> = serde_json::from_slice(b)
            .with_context(|| format!("decoding the results of rank {r}"))?;
        ranks.push(got.map_err(anyhow::Error::msg)?);
    }
    let mut report = ranks[0].report.clone();
    report.tests = reduce(&ranks, a.mpi.mpi_shared);
    report.interrupted = ranks.iter().any(|r| r.report.interrupted);
    let mut hosts: Vec<String> = Vec::new();
    for r in &ranks {
        if !hosts.contains(&r.info.host) {
            hosts.push(r.info.host.clone());
        }
    }
    report.cluster = Some(ClusterInfo {
        ranks: ranks.len() as u32,
        hosts,
        mode: if a.mpi.mpi_shared { "shared" } else { "file-per-process" }.into(),
        stonewall_s: a.mpi.stonewall,
        clock_uncertainty_s: ranks.iter().map(|r| r.info.clock.uncertainty_s).fold(0.0, f64::max),
        clock_check_same_host_s: ClusterInfo::same_host_check(
            &ranks.iter().map(|r| r.info.clone()).collect::<Vec<_>>(),
        ),
        rank_info: ranks.iter().map(|r| r.info.clone()).collect(),
    });

    let config = ConfigStart {
        label: report.target.label.clone(),
        env: None,
        target: report.target.clone(),
    };
    let options = RunOptions {
        seed: a.data.seed,
        compress_percent: a.data.compress_percent,
        ..Default::default()
    };
    let meta = RunMeta::new(RunKind::Run, &suite, a.repeat, options);
    let mut recording =
        record::Recording::begin(store, &meta, std::slice::from_ref(&config), &suite.tests)?;
    for (pos, t) in report.tests.iter().enumerate() {
        recording.test(0, pos, t);
    }
    let status = if report.interrupted {
        RunStatus::Interrupted
    } else if report.tests.iter().any(|t| matches!(t.status, TestStatus::Failed { .. })) {
        RunStatus::Failed
    } else {
        RunStatus::Ok
    };
    recording.finish(&[(&config, &report.tests)], status);
    let started = report.started_unix_s;
    let interrupted = report.interrupted;
    let opts = crate::compare::CompareOptions {
        engine: a.data.engine(a.repeat),
        rule: crate::compare::Rule::default(),
        fresh_per_test: false,
    };
    let run = report.clone();
    let out = crate::compare::build_report(
        vec![crate::compare::ConfigResult { label: config.label.clone(), env: None, run }],
        &opts,
        started,
        interrupted,
    );
    let bytes = exporter(a.format, ExportOptions::default()).export(&out)?;
    std::io::stdout().write_all(&bytes).context("writing to stdout")?;
    if status != RunStatus::Interrupted {
        recording.outcome()?;
    }
    print_spread(&report);
    if report.interrupted {
        return Ok(ExitCode::Interrupted);
    }
    if report.tests.iter().any(|t| matches!(t.status, TestStatus::Failed { .. })) {
        return Ok(ExitCode::TestFailed);
    }
    Ok(ExitCode::Success)
}

/// This rank's part of the suite: in a work directory of its own, or (`shared`) in one that rank
/// 0 makes (and removes at the end, after every rank is done) and names to the others.
fn run_rank(
    comm: &dyn Comm,
    suite: &Suite,
    target: &Target<'_>,
    opts: &EngineOptions,
    progress: &dyn Progress,
    scale: &str,
    shared: bool,
) -> anyhow::Result<crate::result::RunReport> {
    let ws = if comm.rank() == 0 || !shared {
        Some(crate::engine::Workspace::create(&target.dir))
    } else {
        None
    };
    let path = if shared {
        let made = match &ws {
            // The name in --dir (`path()` is this process's /proc/self/fd link).
            Some(Ok(w)) => Ok(w.shown_path().display().to_string()),
            Some(Err(e)) => Err(e.to_string()),
            None => Ok(String::new()),
        };
        let b = comm.broadcast(serde_json::to_vec(&made)?)?;
        let got: Result<String, String> = serde_json::from_slice(&b)?;
        match (&ws, got) {
            (Some(Ok(w)), Ok(_)) => w.path().to_path_buf(),
            (_, Ok(name)) => std::path::PathBuf::from(name),
            (_, Err(e)) => return Err(anyhow::Error::msg(e)),
        }
    } else {
        match &ws {
            Some(Ok(w)) => w.path().to_path_buf(),
            Some(Err(e)) => return Err(anyhow::anyhow!("{e}")),
            None => unreachable!("every rank makes its own directory"),
        }
    };
    let mut report = crate::result::RunReport {
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix_s: record::now_unix_s(),
        host: crate::observe::host::HostInfo::current(),
        target: engine::runner::target_info(target),
        suite: suite.name.clone(),
        scale: scale.to_string(),
        repeat: opts.repeat,
        tests: Vec::new(),
        interrupted: false,
        cluster: None,
    };
    let devices = report.target.devices.clone();
    for (idx, test) in suite.tests.iter().enumerate() {
        let reps = 0..opts.repeat.max(1);
        let r = engine::run_test(test, target, &devices, &path, opts, idx as u64, reps, progress);
        if r.status == TestStatus::Interrupted {
            report.interrupted = true;
        }
        report.tests.push(r);
        if report.interrupted {
            break;
        }
    }
    if shared {
        comm.barrier("the end of the shared run")?;
    }
    drop(ws);
    Ok(report)
}

/// Rank 0 loads the suite and broadcasts it (or its error). None on other ranks when rank 0
/// rejected it (rank 0 returns the error itself).
fn share_suite(comm: &dyn Comm, a: &RunArgs) -> anyhow::Result<Option<Suite>> {
    let local: Result<Suite, String> = if comm.rank() == 0 {
        a.workload.load().map_err(|e| format!("{e:#}"))
    } else {
        Err(String::new())
    };
    let bytes = comm.broadcast(serde_json::to_vec(&local).context("encoding the workload")?)?;
    let got: Result<Suite, String> =
        serde_json::from_slice(&bytes).context("decoding the workload rank 0 sent")?;
    match got {
        Ok(s) => Ok(Some(s)),
        Err(msg) if comm.rank() == 0 => Err(UserError(msg).into()),
        Err(_) => Ok(None),
    }
}

/// CLOCK_MONOTONIC in seconds.
fn monotonic_now() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Per-rank spread on stderr, after the table.
fn print_spread(report: &crate::result::RunReport) {
    let Some(c) = &report.cluster else { return };
    let check = match c.clock_check_same_host_s {
        Some(x) => format!("; ranks on one host agree within {:.1} µs", x * 1e6),
        None => String::new(),
    };
    eprintln!(
        "fsbench: {} ranks on {} host(s); clock offsets to rank 0 within ± {:.1} µs{check}",
        c.ranks,
        c.hosts.len(),
        c.clock_uncertainty_s * 1e6
    );
    for t in &report.tests {
        let Some(rep) = t.median_rep() else { continue };
        let Some(cr) = &rep.cluster else { continue };
        let unit = if rep.file_ops > 0 { "ops/s" } else { "MiB/s" };
        eprintln!(
            "  test {}: per rank {unit} min {:.1} / median {:.1} / max {:.1}, slowest rank {} ({}){}",
            t.id,
            cr.spread.min,
            cr.spread.median,
            cr.spread.max,
            cr.spread.slowest_rank,
            cr.spread.slowest_host,
            if cr.stonewalled { "; stonewalled" } else { "" }
        );
    }
}
