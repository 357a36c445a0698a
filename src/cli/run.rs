//! `fsbench run`.

use super::{progress::Bar, record, ExitCode, UserError};
use crate::engine::{self, EngineOptions, Target};
use crate::output::{exporter, Format};
use crate::result::TestStatus;
use crate::store::read::{RunKind, RunStatus};
use crate::store::write::ConfigStart;
use crate::store::{RunMeta, RunOptions};
use crate::testbed::{FsConfig, Testbed};
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `fsbench run`.
#[derive(Debug, Args)]
#[command(after_help = STATS_HELP)]
pub struct RunArgs {
    /// Directory to run in. fsbench makes a subdirectory `.fsbench-PID-N` there and removes it
    /// afterwards (also on errors and Ctrl-C).
    #[arg(long, value_name = "DIR", required_unless_present = "fs", conflicts_with = "fs")]
    pub dir: Option<PathBuf>,

    /// Instead of --dir: build this filesystem on loop-backed images, run there, and remove it
    /// (e.g. `xfs`, `ext4:mount=data=writeback`; see `fsbench compare --help`). Needs root.
    #[arg(long, value_name = "CONFIG")]
    pub fs: Option<String>,

    #[command(flatten)]
    pub testbed: super::testbed_args::TestbedArgs,

    #[command(flatten)]
    pub workload: super::suite_args::SuiteArgs,

    /// Repetitions of each test. With 2 or more, the table shows the median, CV and a 95%
    /// confidence interval of the mean.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    #[command(flatten)]
    pub data: super::suite_args::DataArgs,

    #[command(flatten)]
    pub record: super::record::RecordArgs,

    #[command(flatten)]
    pub mpi: super::mpi_run::MpiArgs,
}

const STATS_HELP: &str = "\
Statistics: each test runs --repeat times on freshly made files. MiB/s is bytes read+written in
the timed phases divided by their wall time; the table shows the median repetition, the
coefficient of variation (sample sd / mean) and a two-sided 95% confidence interval of the mean
from Student's t distribution (mean ± t(0.975, n-1)·s/√n). Latency percentiles come from an
HdrHistogram with 3 significant digits (each within 0.1%).

Cache: `cached` phases read the file first, `uncached` phases fsync, fadvise(DONTNEED) and (as
root) drop_caches; both are verified with mincore and the resident share is reported. A phase whose
precondition could not be met is flagged, never silently reported.

Exit codes: 0 ok, 1 a test failed, 2 bad input (nothing run), 130 interrupted.";

pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    if a.mpi.mpi {
        return super::mpi_run::run(a);
    }
    // Stage 1: everything is validated before any I/O.
    let suite = a.workload.load()?;
    let bed_config = match &a.fs {
        Some(c) => {
            let cfg = FsConfig::parse(c).map_err(|e| UserError(e.to_string()))?;
            if !crate::sys::is_root() {
                return Err(UserError(format!(
                    "--fs {c} builds a filesystem on loop devices, which needs root; without root use --dir on a filesystem you mounted"
                ))
                .into());
            }
            let opts = a.testbed.options(&cfg, Some(&suite));
            crate::testbed::preflight::check(&cfg, opts.size_bytes, false)
                .with_context(|| format!("checking what {} needs", cfg.label))?;
            Some((cfg, opts))
        }
        None => None,
    };
    if let Some(d) = &a.dir {
        check_dir(d)?;
        if !a.workload.no_space_check {
            crate::workload::limits::check_space(&suite, d).map_err(UserError)?;
        }
    }
    let store = a.record.open()?;

    // Stage 2: run (a testbed's guard removes it on every way out of this function).
    let bed = match &bed_config {
        Some((cfg, opts)) => {
            eprintln!("fsbench: setting up {}", super::testbed_args::describe(opts, cfg));
            match Testbed::up(cfg, opts) {
                Ok(b) => Some(b),
                // Ctrl-C during set-up: mkfs or mount saw the signal too; what was made is gone.
                Err(_) if crate::sys::signals::interrupted() => {
                    eprintln!("fsbench: interrupted during set-up; nothing is left behind");
                    return Ok(ExitCode::Interrupted);
                }
                Err(e) => {
                    return Err(anyhow::Error::new(e).context(format!("setting up {}", cfg.label)))
                }
            }
        }
        None => None,
    };
    if let (Some(b), false) = (&bed, a.workload.no_space_check) {
        crate::workload::limits::check_space(&suite, b.mountpoint()).map_err(UserError)?;
    }
    let target = match (&bed, &a.dir) {
        (Some(b), _) => b.target(),
        (None, Some(d)) => Target::dir(d),
        (None, None) => unreachable!("clap requires --dir or --fs"),
    };
    let opts = EngineOptions {
        repeat: a.repeat,
        compress_percent: a.data.compress_percent,
        seed: a.data.seed,
        trace: a.data.trace,
        hooks: Default::default(),
    };
    let mut config = ConfigStart {
        label: target.label.clone(),
        env: bed.as_ref().map(|b| b.environment()),
        target: engine::runner::target_info(&target),
    };
    let meta = RunMeta {
        kind: RunKind::Run,
        started_unix_s: record::now_unix_s(),
        suite: suite.name.clone(),
        scale: a.workload.scale.to_string(),
        repeat: a.repeat,
        host: crate::observe::host::HostInfo::current(),
        command_line: record::command_line(),
        options: RunOptions {
            seed: a.data.seed,
            compress_percent: a.data.compress_percent,
            ..Default::default()
        },
    };
    let mut recording = record::Recording::begin(store, &meta, &[config.clone()], &suite.tests)?;
    let bar = Bar::new(suite.tests.len(), a.repeat);
    // Each test is committed to the results database as it ends.
    let mut on_test = |t: &crate::result::TestResult| {
        if let Some(pos) = suite.tests.iter().position(|d| d.id == t.id) {
            recording.test(0, pos, t);
        }
    };
    let report = engine::run_suite(
        &suite,
        &target,
        &opts,
        &bar,
        &a.workload.scale.to_string(),
        &mut on_test,
    )
    .with_context(|| format!("running in {}", target.dir.display()))?;
    drop(target);
    config.target = report.target.clone();
    let status = if report.interrupted {
        RunStatus::Interrupted
    } else if report.tests.iter().any(|t| matches!(t.status, TestStatus::Failed { .. })) {
        RunStatus::Failed
    } else {
        RunStatus::Ok
    };
    recording.finish(&[(&config, &report.tests)], status);
    if let Some(b) = bed {
        b.teardown().context("removing the testbed (run `fsbench testbed cleanup`)")?;
    }

    // Stage 3: output.
    let bytes = exporter(a.format).serialize(&report)?;
    std::io::stdout().write_all(&bytes).context("writing to stdout")?;

    if report.interrupted {
        return Ok(ExitCode::Interrupted);
    }
    recording.outcome()?;
    if report.tests.iter().any(|t| matches!(t.status, TestStatus::Failed { .. })) {
        return Ok(ExitCode::TestFailed);
    }
    Ok(ExitCode::Success)
}

pub(super) fn check_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    let meta = std::fs::metadata(dir).map_err(|e| {
        UserError(format!(
            "--dir {}: {e}; give an existing directory on the filesystem to test",
            dir.display()
        ))
    })?;
    if !meta.is_dir() {
        return Err(UserError(format!("--dir {} is not a directory", dir.display())).into());
    }
    if rustix::fs::access(dir, rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK).is_err()
    {
        return Err(UserError(format!(
            "--dir {} is not writable by this user; pick a directory you can write to",
            dir.display()
        ))
        .into());
    }
    Ok(())
}
