//! `fsbench run --mpi` and `fsbench compare --mpi`: the same run (or comparison of
//! directories) on every rank of an MPI job, reduced on rank 0.
//!
//! Rank 0 loads and validates the workload and broadcasts it, so every rank runs the same
//! definition or all stop with rank 0's message. Every rank checks the directories, then
//! [`crate::cluster::session`] drives the plan through the suite driver on every rank (the
//! cluster's phase hooks: a barrier before each phase, the global clock, agreement after it)
//! and reduces every rank's results on rank 0, which alone writes the output and the results
//! database.

use super::compare::CompareArgs;
use super::mpi_args::MpiArgs;
use super::progress::Bar;
use super::run::RunArgs;
use super::{record, ExitCode, UserError};
use crate::analysis::compare::CompareOptions;
use crate::cluster::hooks::agree;
use crate::cluster::session::{self, SessionEnd, SessionOptions};
use crate::cluster::Comm;
use crate::driver::{Order, Outcome, PhaseOutcome, Plan, Spec, TargetSet};
use crate::engine::{EngineError, NoProgress, Progress};
use crate::model::job::Suite;
use crate::model::run::{RunKind, RunStatus};
use crate::model::verdict::Rule;
use crate::present::{exporter, ExportOptions};
use crate::store::write::ConfigStart;
use crate::store::{RunMeta, RunOptions};
use anyhow::Context;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A session's common start on every rank: MPI, the suite rank 0 validated (shared-fileset
/// sized with --mpi-shared), the directories checked on every rank. None: rank 0 rejected the
/// input and every rank stops (rank 0 returned the error).
struct Start {
    comm: Arc<dyn Comm>,
    suite: Suite,
}

fn start(
    mpi: &MpiArgs,
    load: &dyn Fn() -> anyhow::Result<Suite>,
    dirs: &[PathBuf],
    check: &dyn Fn(&Suite) -> Result<(), String>,
) -> anyhow::Result<Option<Start>> {
    let timeout = Duration::try_from_secs_f64(mpi.mpi_timeout)
        .map_err(|e| UserError(format!("--mpi-timeout {}: {e}", mpi.mpi_timeout)))?;
    let comm = crate::cluster::init(Some(timeout))?;
    let rank = comm.rank();
    // Stage 1: rank 0 validates the workload; every rank runs what it broadcast.
    let Some(suite) = share_suite(&*comm, load)? else { return Ok(None) };
    let suite = if mpi.mpi_shared { session::shared_suite(&suite, comm.size()) } else { suite };
    let local = match check(&suite) {
        Ok(()) => PhaseOutcome::Ok,
        Err(reason) => PhaseOutcome::Failed(EngineError::Hook { reason, bad_input: true }),
    };
    if let PhaseOutcome::Failed(msg) = agree(&*comm, local)? {
        if rank == 0 {
            return Err(UserError(format!("{msg} (checking {})", show(dirs))).into());
        }
        return Ok(None);
    }
    Ok(Some(Start { comm, suite }))
}

/// The workload, without a curve: a curve's steps are phases again outside the ranks' common
/// phase window (the hooks that start them together), so a multi-client run refuses one.
fn load(w: &super::suite_args::SuiteArgs) -> anyhow::Result<Suite> {
    let suite = w.load()?;
    if let Some(t) = suite.tests.iter().find(|t| t.phases.iter().any(|p| p.curve.is_some())) {
        return Err(UserError(format!(
            "test {}: a latency-versus-load curve (--curve, curve_steps) does not run across MPI ranks (its steps run outside the ranks' common phase window); run the curve without --mpi, or leave out --curve",
            t.id
        ))
        .into());
    }
    Ok(suite)
}

fn show(dirs: &[PathBuf]) -> String {
    dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
}

fn options(mpi: &MpiArgs) -> SessionOptions {
    SessionOptions { stonewall_s: mpi.stonewall, shared: mpi.mpi_shared }
}

/// The exit code of a rank other than 0: rank 0 reports the run and its status. A failed test
/// exits 0 here, because a non-zero exit of any rank makes mpirun end the job, possibly before
/// rank 0 has written the results that say which rank failed and why.
fn contributed(status: RunStatus) -> ExitCode {
    match status {
        RunStatus::Interrupted => ExitCode::Interrupted,
        _ => ExitCode::Success,
    }
}

/// Engine options of a multi-client run: `--repeat auto` runs its minimum (5) as a fixed count
/// (ranks must agree on every repetition), and `--min-time` does not apply (a phase is one
/// window across all processes).
fn mpi_engine(
    data: &super::suite_args::DataArgs,
    repeat: super::suite_args::Repeat,
) -> crate::engine::EngineOptions {
    crate::engine::EngineOptions { min_time: Duration::ZERO, ..data.engine(repeat.least()) }
}

pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    if a.fs.is_some() {
        return Err(UserError(
            "--mpi runs in a directory every rank sees: give --dir (a testbed per rank with --fs is not supported)".into(),
        )
        .into());
    }
    let Some(dir) = a.dir.clone() else {
        return Err(UserError("--mpi needs --dir".into()).into());
    };
    let dirs = [dir.clone()];
    let check = |suite: &Suite| {
        TargetSet::new(&[Spec::Dir(dir.clone())], &|c| a.testbed.options(c, Some(suite)))
            .and_then(|t| t.check_fill(suite))
            .map_err(|e| format!("{e:#}"))
    };
    let Some(Start { comm, suite }) = start(&a.mpi, &|| load(&a.workload), &dirs, &check)? else {
        return Ok(ExitCode::BadInput);
    };
    let rank = comm.rank();
    let store = if rank == 0 { a.record.open()? } else { None };

    // Stage 2: every rank drives the run; rank 0 gets the reduced outcome.
    let plan = Plan {
        suite: &suite,
        engine: mpi_engine(&a.data, a.repeat),
        order: Order::InTurn,
        fresh_per_test: false,
        auto: None,
    };
    let bar;
    let progress: &dyn Progress = if rank == 0 {
        bar = Bar::new(suite.tests.len(), a.repeat.least());
        &bar
    } else {
        &NoProgress
    };
    let dirs = vec![(dir.clone(), dir.display().to_string())];
    let outcome = match session::run(comm, &plan, dirs, &options(&a.mpi), progress)
        .with_context(|| format!("rank {rank}: running in {}", dir.display()))?
    {
        SessionEnd::Reduced(o) => o,
        SessionEnd::Contributed(s) => return Ok(contributed(s)),
    };

    // Stage 3 (rank 0): record, output.
    let options = RunOptions {
        seed: a.data.seed,
        compress_percent: a.data.compress_percent,
        cluster: outcome.runs.first().and_then(|r| r.cluster.clone()),
        ..Default::default()
    };
    let meta = RunMeta::new(RunKind::Run, &suite, a.repeat.least(), options);
    let mut recording = record_all(store, &meta, &suite, &outcome)?;
    let status = outcome.status();
    let opts = CompareOptions {
        engine: plan.engine.clone(),
        rule: Rule::default(),
        fresh_per_test: false,
    };
    let spread_of = outcome.runs[0].clone();
    let report = crate::analysis::compare::build_report(
        outcome.runs.into_iter().map(config_result).collect(),
        &opts,
        spread_of.started_unix_s,
        outcome.interrupted,
    );
    let bytes = exporter(a.format, ExportOptions::default()).export(&report)?;
    let printed = super::out_bytes(&bytes);
    if status != RunStatus::Interrupted {
        recording.outcome()?;
    }
    printed.context("writing to stdout")?;
    print_spread(&spread_of);
    Ok(ExitCode::of(status))
}

/// `compare --mpi DIR DIR...`: the directories compared, interleaved as `compare` does, from
/// every rank at once.
pub fn compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    if !(a.min_effect >= 0.0 && a.min_effect < 1000.0) {
        return Err(
            UserError(format!("--min-effect {} must be a percentage >= 0", a.min_effect)).into()
        );
    }
    let dirs: Vec<PathBuf> = a.configs.iter().map(PathBuf::from).collect();
    if let Some(c) = a.configs.iter().find(|c| !std::path::Path::new(c).is_dir()) {
        return Err(UserError(format!(
            "compare --mpi compares directories every rank sees; `{c}` is not a directory (a testbed per rank is not supported)"
        ))
        .into());
    }
    let specs: Vec<Spec> = dirs.iter().map(|d| Spec::Dir(d.clone())).collect();
    let check = |suite: &Suite| {
        TargetSet::new(&specs, &|c| a.testbed.options(c, Some(suite)))
            .and_then(|t| t.check_fill(suite))
            .map_err(|e| format!("{e:#}"))
    };
    let Some(Start { comm, suite }) = start(&a.mpi, &|| load(&a.workload), &dirs, &check)? else {
        return Ok(ExitCode::BadInput);
    };
    let rank = comm.rank();
    let store = if rank == 0 { a.record.open()? } else { None };
    let opts = CompareOptions {
        engine: mpi_engine(&a.data, a.repeat),
        rule: Rule { min_effect: a.min_effect / 100.0, ..Rule::default() },
        fresh_per_test: false,
    };
    let plan = Plan {
        suite: &suite,
        engine: opts.engine.clone(),
        order: Order::Interleaved,
        fresh_per_test: false,
        auto: None,
    };
    let bar;
    let progress: &dyn Progress = if rank == 0 {
        bar = Bar::per_repetition(suite.tests.len() * dirs.len() * a.repeat.least() as usize);
        &bar
    } else {
        &NoProgress
    };
    let labelled = dirs
        .iter()
        .zip(&a.configs)
        .map(|(d, c)| (d.clone(), crate::workload::limits::escape_controls(c)))
        .collect();
    let outcome = match session::run(comm, &plan, labelled, &options(&a.mpi), progress)
        .with_context(|| format!("rank {rank}: comparing {}", show(&dirs)))?
    {
        SessionEnd::Reduced(o) => o,
        SessionEnd::Contributed(s) => return Ok(contributed(s)),
    };
    let options = RunOptions {
        rule: opts.rule,
        fresh_per_test: false,
        seed: a.data.seed,
        compress_percent: a.data.compress_percent,
        cluster: outcome.runs.first().and_then(|r| r.cluster.clone()),
    };
    let meta = RunMeta::new(RunKind::Compare, &suite, a.repeat.least(), options);
    let recording = record_all(store, &meta, &suite, &outcome)?;
    let status = outcome.status();
    let started = outcome.runs.first().map(|r| r.started_unix_s).unwrap_or(0);
    let runs = outcome.runs.clone();
    let report = crate::analysis::compare::build_report(
        outcome.runs.into_iter().map(config_result).collect(),
        &opts,
        started,
        outcome.interrupted,
    );
    let code = super::compare::finish(&a, &report, recording, &meta, status, Ok(()));
    for r in &runs {
        print_spread(r);
    }
    code
}

fn config_result(run: crate::model::result::RunReport) -> crate::model::report::ConfigResult {
    crate::model::report::ConfigResult { label: run.target.label.clone(), env: None, run }
}

/// Rank 0 records the reduced outcome (the store sees one run, as from one host).
fn record_all(
    store: Option<crate::store::Store>,
    meta: &RunMeta,
    suite: &Suite,
    outcome: &Outcome,
) -> anyhow::Result<record::Recording> {
    let configs: Vec<ConfigStart> = outcome
        .runs
        .iter()
        .map(|r| ConfigStart { label: r.target.label.clone(), env: None, target: r.target.clone() })
        .collect();
    let mut recording = record::Recording::begin(store, meta, &configs, &suite.tests)?;
    for (i, run) in outcome.runs.iter().enumerate() {
        for (pos, t) in run.tests.iter().enumerate() {
            recording.test(i, pos, t);
        }
    }
    let finished: Vec<(&ConfigStart, &[crate::model::result::TestResult])> =
        configs.iter().zip(&outcome.runs).map(|(c, r)| (c, r.tests.as_slice())).collect();
    recording.finish(&finished, outcome.status());
    Ok(recording)
}

/// Rank 0 loads the suite and broadcasts it (or its error). None on other ranks when rank 0
/// rejected it (rank 0 returns the error itself).
fn share_suite(
    comm: &dyn Comm,
    load: &dyn Fn() -> anyhow::Result<Suite>,
) -> anyhow::Result<Option<Suite>> {
    let local: Result<Suite, String> =
        if comm.rank() == 0 { load().map_err(|e| format!("{e:#}")) } else { Err(String::new()) };
    let bytes = comm.broadcast(serde_json::to_vec(&local).context("encoding the workload")?)?;
    let got: Result<Suite, String> =
        serde_json::from_slice(&bytes).context("decoding the workload rank 0 sent")?;
    match got {
        Ok(s) => Ok(Some(s)),
        Err(msg) if comm.rank() == 0 => Err(UserError(msg).into()),
        Err(_) => Ok(None),
    }
}

/// Per-rank spread on stderr, after the table.
fn print_spread(report: &crate::model::result::RunReport) {
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
            "  test {} on {}: per rank {unit} min {:.1} / median {:.1} / max {:.1}, slowest rank {} ({}){}",
            t.id,
            report.target.label,
            cr.spread.min,
            cr.spread.median,
            cr.spread.max,
            cr.spread.slowest_rank,
            cr.spread.slowest_host,
            if cr.stonewalled { "; stonewalled" } else { "" }
        );
    }
}
