//! `fsbench compare`.

use super::testbed_args::TestbedArgs;
use super::{progress::Bar, record, ExitCode, UserError};
use crate::analysis::compare::{self, CompareOptions};
use crate::decision::{AutoRepeat, Settle};
use crate::driver::{Order, Plan, Spec, TargetSet, Targets};
use crate::engine::EngineOptions;
use crate::model::run::RunKind;
use crate::model::verdict::Rule;
use crate::present::{exporter, ExportOptions, Format};
use crate::store::{RunMeta, RunOptions};
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Arguments of `fsbench compare`.
#[derive(Debug, Args)]
#[command(after_help = compare_help())]
pub struct CompareArgs {
    /// Filesystem configurations (ext4, xfs, btrfs, zfs, tmpfs, ext2, ext3, with options:
    /// `ext4:mount=data=writeback,nobarrier`, `xfs:mkfs=-l size=64m`, `zfs:layout=raidz:devices=3:compression=lzjb`,
    /// `btrfs:profile=raid1:devices=2`, `label=NAME`), or directories you mounted yourself. The
    /// first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "CONFIG|DIR")]
    pub configs: Vec<String>,

    #[command(flatten)]
    pub workload: super::suite_args::SuiteArgs,

    /// Interleaved repetitions per test and configuration (1-1000), or `auto` (default): 5
    /// rounds, then more rounds of the tests whose verdict is not settled and whose 95%
    /// confidence interval is wider than --target-ci on a configuration, up to --max-repeat or
    /// --time-budget. A win that is
    /// significant but not settled is marked (unsettled): an identical run may call it a draw.
    /// With one repetition there is no noise estimate and no test.
    #[arg(long, value_name = "N|auto", default_value = "auto")]
    pub repeat: super::suite_args::Repeat,

    #[command(flatten)]
    pub auto: super::suite_args::AutoArgs,

    /// Output format on stdout (`html`: the report on stdout; --report writes it to a file
    /// too).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,

    /// A fresh filesystem for each test, or one per configuration for the whole suite.
    #[arg(long, value_enum, default_value_t = Fresh::PerSuite)]
    pub fresh: Fresh,

    /// Smallest difference (percent) that can make a winner when the difference is significant.
    #[arg(long, default_value_t = 5.0)]
    pub min_effect: f64,

    #[command(flatten)]
    pub data: super::suite_args::DataArgs,

    /// Also print, per test and configuration, the observed facts: device requests and their
    /// sizes, write amplification, device reads, CPU, time in fsync, dirty memory, extents.
    #[arg(long)]
    pub details: bool,

    /// With --format json: also the raw data, for merging or plotting elsewhere: each latency
    /// histogram (`histogram_b64`, HdrHistogram V2, base64) and each traced phase's request
    /// points (`trace.offsets.points`); left out by default, as they are most of the output's
    /// size (`--histograms` is the same flag).
    #[arg(long, alias = "histograms")]
    pub raw: bool,

    #[command(flatten)]
    pub testbed: TestbedArgs,

    #[command(flatten)]
    pub record: super::record::RecordArgs,

    /// Write the HTML report (table, charts, environment) to this file (replacing it). Default:
    /// ./fsbench-report-RUNID.html, or -2, -3, ... appended if that name is taken (an existing
    /// file is never replaced). A report that cannot be written makes the exit code 1.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,

    /// Do not write the HTML report.
    #[arg(long, conflicts_with = "report")]
    pub no_report: bool,

    #[command(flatten)]
    pub mpi: super::mpi_args::MpiArgs,
}

/// When filesystems are recreated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Fresh {
    /// One filesystem per configuration for the whole suite (default: faster; later tests see
    /// a filesystem earlier tests have used, as on a real system).
    PerSuite,
    /// mkfs before every test (slower; every test starts from an empty filesystem).
    PerTest,
}

const COMPARE_HELP: &str = "\
Each configuration gets its own image file(s) in --workdir (allocated with fallocate by default;
see --image-alloc), attached as loop devices with direct I/O, made with mkfs and mounted; zfs pools run on zfs-fuse (started and stopped if needed).
Everything is removed afterwards, also on errors and Ctrl-C; after a crash, `fsbench testbed
cleanup` removes what was left. Needs root; comparing directories you mounted does not.

Runs are interleaved: every configuration runs a test before any runs it again, in an order that
rotates, so drift on a noisy machine does not favour one side.

Repetitions (default --repeat auto): 5 rounds, then further rounds of each test whose 95%
confidence interval (20%-trimmed mean of log figures) is wider than --target-ci on a
configuration, until --max-repeat or --time-budget (the first 5 rounds always run); a note says
how many each test got and what stopped it. Each timed phase lasts at least --min-time (0.5s): a
shorter one runs again (see --min-time), and its figures are totals over its passes.

Decision rule per test: the estimator is the median of the test's figure of merit on each
configuration: MiB/s for data tests, ops/s for file-set tests (metadata, rm65536, mail, postmark,
untar, bonnie's file phases; shown with elapsed seconds). With 2 or more repetitions on both
sides, Yuen's trimmed t on each round's log ratio (the configurations run in interleaved rounds,
so a slow patch of the machine that hits both sides of a round cancels; 20% trimmed, nothing
trimmed below 5 rounds) tests whether the gap is beyond --min-effect and gives a two-sided
p-value; all tests and configurations of the comparison form one family, and the
Benjamini-Hochberg procedure keeps a 5% false discovery rate over it (identical setups show a
winner anywhere in at most 1 comparison in 20). A significant test has a winner if the medians'
factor is also at least 1 + --min-effect. With 5 or more repetitions one outlying round is
trimmed; with 3 it is not, and it makes a draw more likely. With a single
repetition there is NO noise estimate: the factor must be at least 1.10 and the win is marked
(untested). Otherwise the test is a draw. Tests that failed, or whose cache precondition did not
hold, are not compared and the reason is given. The summary's \"mean factor\" is the arithmetic
mean of the winning factors, as in the 2005 study.

Examples:
  fsbench compare ext4 xfs --scale quick
  fsbench compare ext4:mount=data=writeback,nobarrier ext4:mount=nodelalloc xfs --test 1,3,9
  fsbench compare ext4 xfs btrfs zfs --scale quick --repeat 5 --format json > cmp.json
  fsbench compare /mnt/a /mnt/b --test 4,14
  fsbench compare ext4 xfs --workload examples/curve.toml --scale quick --repeat 3   # latency against load";

/// `compare --help`'s text after the options: the configuration keys (from the tables the
/// parser takes them from), then how a comparison runs and decides.
fn compare_help() -> String {
    format!("{}\n{COMPARE_HELP}", crate::testbed::config::axes_help())
}

pub fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    // Stage 1: validate everything before any I/O.
    if a.workload.print_workload()? {
        return Ok(ExitCode::Success);
    }
    let suite = a.workload.load()?;
    let auto = a.auto.plan(a.repeat)?;
    if !(a.min_effect >= 0.0 && a.min_effect < 1000.0) {
        return Err(
            UserError(format!("--min-effect {} must be a percentage >= 0", a.min_effect)).into()
        );
    }
    let rule = Rule { min_effect: a.min_effect / 100.0, ..Rule::default() };
    // --repeat auto also closes a test once its verdict is settled.
    let auto = auto.map(|au| AutoRepeat {
        settle: Some(Settle::new(rule, suite.tests.len(), a.configs.len(), &au)),
        ..au
    });
    let specs: Vec<Spec> = a.configs.iter().map(|c| Spec::DirOrFs(c.clone())).collect();
    let mut targets = TargetSet::new(&specs, &|c| a.testbed.options(c, Some(&suite)))?;
    targets.check_fill(&suite)?;
    if a.fresh == Fresh::PerTest {
        refuse_run_files_per_test(&suite)?;
    }
    if !a.workload.no_space_check {
        targets.check_space(&suite)?;
    }
    targets.same_image_size(a.testbed.size);
    targets.check()?;
    let store = a.record.open()?;

    // Stage 2: bring the testbeds up (guards tear them down on any exit from here) and run.
    let mut clock = record::Stopwatch::start();
    if !clock.testbed(|| targets.up())? {
        return Ok(ExitCode::Interrupted);
    }
    // The mounted filesystems' free space (their metadata takes part of the image): a test
    // that cannot fit is refused before any of its I/O; the guards remove the testbeds.
    if !a.workload.no_space_check {
        targets.check_space(&suite)?;
    }
    let opts = CompareOptions {
        engine: a.data.engine(a.repeat.least()),
        rule,
        fresh_per_test: a.fresh == Fresh::PerTest,
    };
    let plan = Plan {
        suite: &suite,
        engine: opts.engine.clone(),
        order: Order::Interleaved,
        fresh_per_test: opts.fresh_per_test,
        auto,
    };
    let options = RunOptions {
        rule: opts.rule,
        fresh_per_test: opts.fresh_per_test,
        seed: a.data.seed,
        compress_percent: a.data.compress_percent,
        cluster: None,
    };
    let meta = RunMeta::new(RunKind::Compare, &suite, a.repeat.least(), options);
    let bar = Bar::per_repetition(suite.tests.len() * targets.count() * a.repeat.least() as usize);
    let (outcome, recording) = record::drive(&plan, &mut targets, store, &meta, &bar)?;
    let status = outcome.status();
    // With --repeat auto the header gives the most repetitions a test got.
    let opts = CompareOptions {
        engine: EngineOptions {
            repeat: outcome.runs.iter().map(|r| r.repeat).max().unwrap_or(1),
            ..opts.engine
        },
        ..opts
    };
    let driver_time = outcome.time;
    let mut report = compare::from_outcome(outcome, &targets, &opts);

    // Stage 3: tear down (errors reported after the output), then output.
    let teardown = clock.testbed(|| targets.teardown());
    report.time = Some(clock.split(&report, &driver_time));
    finish(&a, &report, recording, &meta, status, teardown)
}

/// Output, the HTML report and the exit status of a comparison (`compare --mpi`: on rank 0).
pub(super) fn finish(
    a: &CompareArgs,
    report: &crate::model::report::Report,
    mut recording: record::Recording,
    meta: &RunMeta,
    status: crate::model::run::RunStatus,
    teardown: anyhow::Result<()>,
) -> anyhow::Result<ExitCode> {
    let bytes = exporter(a.format, ExportOptions { details: a.details, width: None, raw: a.raw })
        .export(report)?;
    // A closed stdout (`| head`) must not skip the report, the teardown or the store below.
    let printed = super::out_bytes(&bytes);
    let mut report_error = None;
    if !a.no_report {
        let run = crate::present::html::ReportRun {
            id: recording.run_id(),
            kind: crate::model::run::RunKind::Compare,
            command_line: meta.command_line.clone(),
            report: report.clone(),
        };
        // A name fsbench chooses never replaces a file (another run's report); one the user
        // gives replaces an earlier file of that name. Neither follows a planted link.
        let written = match &a.report {
            Some(p) => crate::present::html::write_html(&[run], p, None).map(|()| p.clone()),
            None => {
                let id = recording.run_id().map(|i| i.to_string());
                let p = PathBuf::from(format!(
                    "fsbench-report-{}.html",
                    id.unwrap_or_else(|| report.started_unix_s.to_string())
                ));
                crate::present::html::write_html_new(&[run], &p, None)
            }
        };
        match written {
            Ok(p) => eprintln!("{}", super::written("report", &p)),
            Err(e) => {
                report_error = Some(anyhow::Error::new(e).context(
                    "the results above are complete, but the HTML report could not be written (choose another place with --report FILE, or --no-report)",
                ))
            }
        }
    }
    teardown?;
    if let Some(t) = &report.time {
        recording.time(t);
    }
    if status == crate::model::run::RunStatus::Interrupted {
        return Ok(ExitCode::Interrupted);
    }
    recording.outcome()?;
    printed.context("writing to stdout")?;
    if let Some(e) = report_error {
        return Err(e);
    }
    Ok(ExitCode::of(status))
}

/// `--fresh per-test` makes a new filesystem for each test, so a test that finds a file an
/// earlier test of the run left (a fio job after another on one plain `filename`) would find
/// none: refused before any I/O.
fn refuse_run_files_per_test(suite: &crate::model::job::Suite) -> Result<(), UserError> {
    let later = suite.tests.iter().find_map(|t| {
        t.files.run_file.as_ref().filter(|r| !r.first).map(|r| (t.id.clone(), r.name.clone()))
    });
    match later {
        Some((id, name)) => Err(UserError(format!(
            "--fresh per-test: test {} works on the file `{name}` that an earlier test of the run leaves (fio's jobs share a plain filename), and each test would get a new filesystem without it; leave out --fresh per-test",
            crate::workload::limits::escape_controls(&id)
        ))),
        None => Ok(()),
    }
}
