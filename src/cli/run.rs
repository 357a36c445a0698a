//! `fsbench run`.

use super::{progress::Bar, record, ExitCode};
use crate::analysis::compare::CompareOptions;
use crate::driver::{Order, Plan, Spec, TargetSet};
use crate::model::run::RunKind;
use crate::model::verdict::Rule;
use crate::present::{exporter, ExportOptions, Format};
use crate::store::{RunMeta, RunOptions};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `fsbench run`.
#[derive(Debug, Args)]
#[command(after_help = STATS_HELP)]
// Where to run: --dir DIR or --fs CONFIG (or a fio file's `directory=`); clap's message names
// them all when none is given.
#[command(group(clap::ArgGroup::new("target")
    .args(["dir", "fs", "fio", "print_workload"])
    .required(true)
    .multiple(true)))]
pub struct RunArgs {
    /// Directory to run in. fsbench makes a subdirectory `.fsbench-PID-N` there and removes it
    /// afterwards (also on errors and Ctrl-C).
    /// With --fio, the jobs' `directory=` is used when --dir is not given.
    #[arg(long, value_name = "DIR", conflicts_with = "fs")]
    pub dir: Option<PathBuf>,

    /// Instead of --dir: build this filesystem on loop-backed images, run there, and remove it
    /// (e.g. `xfs`, `ext4:mount=data=writeback`; see `fsbench compare --help`). Needs root.
    #[arg(long, value_name = "CONFIG")]
    pub fs: Option<String>,

    #[command(flatten)]
    pub testbed: super::testbed_args::TestbedArgs,

    #[command(flatten)]
    pub workload: super::suite_args::SuiteArgs,

    /// Repetitions of each test (1-1000), or `auto`: 5, then more for each test until the 95%
    /// confidence interval of its figure is within --target-ci, --max-repeat or --time-budget.
    /// With 2 or more, the table shows the median, CV and a 95% confidence interval of the geometric mean.
    #[arg(long, value_name = "N|auto", default_value = "1")]
    pub repeat: super::suite_args::Repeat,

    #[command(flatten)]
    pub auto: super::suite_args::AutoArgs,

    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// Also print, per test, the observed facts (device requests and their sizes, write
    /// amplification, device reads, CPU, where the time went, dirty memory, extents) and the
    /// figure of every repetition in the order run.
    #[arg(long)]
    pub details: bool,

    /// With --format json: also the raw data, for merging or plotting elsewhere: each latency
    /// histogram (`histogram_b64`, HdrHistogram V2, base64) and each traced phase's request
    /// points (`trace.offsets.points`); left out by default, as they are most of the output's
    /// size (`--histograms` is the same flag).
    #[arg(long, alias = "histograms")]
    pub raw: bool,

    #[command(flatten)]
    pub data: super::suite_args::DataArgs,

    #[command(flatten)]
    pub record: super::record::RecordArgs,

    #[command(flatten)]
    pub mpi: super::mpi_args::MpiArgs,
}

const STATS_HELP: &str = "\
Statistics: each test runs --repeat times on freshly made files (auto: 5, then more until the 95%
CI of its figure is within --target-ci, --max-repeat or --time-budget); a timed phase shorter than
--min-time (0.5s) runs again and its figures are totals over the passes. MiB/s is bytes
read+written in the timed phases divided by their wall time, ops/s operations per second (file-set
operations for file-set tests), s the elapsed seconds of the timed phases. A test is ranked on
MiB/s, a file-set test (metadata, rm65536, mail, postmark, untar) on ops/s; the table shows
medians, and of that figure the coefficient of variation (sample sd / mean) and a two-sided 95%
confidence interval of its geometric mean: Student's t on the logarithms, exp(m ±
t(0.975,n-1)·s/√n) with m and s the mean and sd of the log figures (asymmetric, never below 0).
Latency percentiles come from an HdrHistogram with 3 significant digits (each within 0.1%).

Cache: `cached` phases read the file first, `uncached` phases fsync, fadvise(DONTNEED) and (as
root) drop_caches; both are verified with mincore and the resident share is reported. A phase whose
precondition could not be met is flagged, never silently reported.

Exit codes: 0 ok, 1 a test failed, 2 bad input (nothing run), 130 interrupted.";

pub fn run(mut a: RunArgs) -> anyhow::Result<ExitCode> {
    // Stage 1: everything is validated before any I/O.
    if a.workload.print_workload()? {
        return Ok(ExitCode::Success);
    }
    let suite = a.workload.load()?;
    let auto = a.auto.plan(a.repeat)?;
    if a.dir.is_none() && a.fs.is_none() {
        // Only --fio gets here without either (clap): its jobs' directory= is the run directory.
        let dir = a.workload.fio_translation()?.and_then(|t| t.directory);
        match dir {
            Some(d) if !std::path::Path::new(&d).is_dir() => {
                return Err(super::UserError(format!(
                    "directory={d} in the fio job file: no such directory; create it, or give --dir DIR (or --fs CONFIG) to run elsewhere"
                ))
                .into())
            }
            Some(d) => a.dir = Some(PathBuf::from(d)),
            None => {
                return Err(super::UserError(
                    "give --dir DIR (or --fs CONFIG): the fio job file has no directory=".into(),
                )
                .into())
            }
        }
    }
    let Some((report, status, mut recording)) = execute(&a, &suite, auto)? else {
        return Ok(ExitCode::Interrupted);
    };

    // Stage 3: output.
    let bytes = exporter(a.format, ExportOptions { details: a.details, width: None, raw: a.raw })
        .export(&report)?;
    let printed = super::out_bytes(&bytes);
    if status != crate::model::run::RunStatus::Interrupted {
        recording.outcome()?;
    }
    printed.context("writing to stdout")?;
    Ok(ExitCode::of(status))
}

/// A run's report, its status, and its recording (finished after the output is written);
/// None when Ctrl-C came before the run started.
pub(super) type Executed =
    Option<(crate::model::report::Report, crate::model::run::RunStatus, record::Recording)>;

/// Stage 2 of a run of the validated `suite` on `a`'s --dir or --fs: the target's checks, the
/// run, the report (shared with `fsbench fio`).
pub(super) fn execute(
    a: &RunArgs,
    suite: &crate::model::job::Suite,
    auto: Option<crate::decision::AutoRepeat>,
) -> anyhow::Result<Executed> {
    let spec = match (&a.fs, &a.dir) {
        (Some(c), _) => Spec::Fs(c.clone()),
        (None, Some(d)) => Spec::Dir(d.clone()),
        (None, None) => unreachable!("clap requires --dir or --fs"),
    };
    let mut targets = TargetSet::new(&[spec], &|c| a.testbed.options(c, Some(suite)))?;
    targets.check_fill(suite)?;
    targets.check()?;
    let space = |t: &TargetSet| match a.workload.no_space_check {
        true => Ok(()),
        false => t.check_space(suite),
    };
    space(&targets)?;
    let store = a.record.open()?;

    // Stage 2: run (a testbed's guard removes it on every way out of this function).
    let mut clock = super::record::Stopwatch::start();
    if !clock.testbed(|| targets.up())? {
        return Ok(None);
    }
    space(&targets)?;
    let plan = Plan {
        suite,
        engine: a.data.engine(a.repeat.least()),
        order: Order::InTurn,
        fresh_per_test: false,
        auto,
    };
    let options = RunOptions {
        seed: a.data.seed,
        compress_percent: a.data.compress_percent,
        ..Default::default()
    };
    let meta = RunMeta::new(RunKind::Run, suite, a.repeat.least(), options);
    let bar = Bar::new(suite.tests.len(), a.repeat.least());
    let (outcome, mut recording) = record::drive(&plan, &mut targets, store, &meta, &bar)?;
    let status = outcome.status();
    let opts = CompareOptions {
        engine: plan.engine.clone(),
        rule: Rule::default(),
        fresh_per_test: false,
    };
    let driver_time = outcome.time;
    let mut report = crate::analysis::compare::from_outcome(outcome, &targets, &opts);
    clock.testbed(|| targets.teardown())?;
    // Where the time went: on the report, and on the run's own part (its JSON), and stored.
    let time = clock.split(&report, &driver_time);
    if let Some(c) = report.configs.first_mut() {
        c.run.time = Some(time.clone());
    }
    recording.time(&time);
    report.time = Some(time);

    Ok(Some((report, status, recording)))
}
