//! `fsbench compare`.

use super::testbed_args::TestbedArgs;
use super::{progress::Bar, record, ExitCode, UserError};
use crate::compare::{self, CompareOptions, Rule, Sides};
use crate::engine::{EngineOptions, Target};
use crate::result::TestStatus;
use crate::store::read::{RunKind, RunStatus};
use crate::store::write::ConfigStart;
use crate::store::{RunMeta, RunOptions};
use crate::testbed::{self, FsConfig, Testbed, TestbedEnv, TestbedOptions};
use anyhow::Context;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `fsbench compare`.
#[derive(Debug, Args)]
#[command(after_help = COMPARE_HELP)]
pub struct CompareArgs {
    /// Filesystem configurations (ext4, xfs, btrfs, zfs, tmpfs, ext2, ext3, with options:
    /// `ext4:mount=data=writeback,nobarrier`, `xfs:mkfs=-l size=64m`, `zfs:layout=raidz:devices=3:compression=lzjb`,
    /// `btrfs:profile=raid1:devices=2`, `label=NAME`), or directories you mounted yourself. The
    /// first is the baseline.
    #[arg(required = true, num_args = 2.., value_name = "CONFIG|DIR")]
    pub configs: Vec<String>,

    #[command(flatten)]
    pub workload: super::suite_args::SuiteArgs,

    /// Interleaved repetitions per test and configuration. 3 or more lets a significance test
    /// decide winners.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// Output format on stdout.
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
}

/// Output formats of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Head-to-head table and summary lines.
    Table,
    /// The whole comparison (every configuration's full results) as JSON.
    Json,
    /// One row per test and configuration.
    Csv,
    /// bonnie++'s tables for each configuration (for the `bonnie` suite).
    Bonnie,
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
Each configuration gets its own sparse image file(s) in --workdir, attached as loop devices with
direct I/O, made with mkfs and mounted; zfs pools run on zfs-fuse (started and stopped if needed).
Everything is removed afterwards, also on errors and Ctrl-C; after a crash, `fsbench testbed
cleanup` removes what was left. Needs root; comparing directories you mounted does not.

Runs are interleaved: every configuration runs a test before any runs it again, in an order that
rotates, so drift on a noisy machine does not favour one side.

Decision rule per test: the estimator is the median MiB/s of each configuration. With 2 or more
repetitions on both sides, Welch's t-test on log(MiB/s), two-sided at 95%, must find a
difference and the factor must be at least 1 + --min-effect; with a single repetition (no noise
estimate) the factor must be at least 1.10. Otherwise the test is a draw. Tests that failed, or
whose cache precondition did not hold, are not compared and the reason is given. The summary's
\"mean factor\" is the arithmetic mean of the winning factors, as in the 2005 study.

Examples:
  fsbench compare ext4 xfs --scale quick
  fsbench compare ext4:mount=data=writeback,nobarrier ext4:mount=nodelalloc xfs --test 1,3,9
  fsbench compare ext4 xfs btrfs zfs --scale quick --repeat 3 --format json > cmp.json
  fsbench compare /mnt/a /mnt/b --test 4,14";

enum Side {
    Dir { path: PathBuf, label: String },
    Bed { config: FsConfig, opts: Box<TestbedOptions>, bed: Option<Box<Testbed>> },
}

struct CliSides(Vec<Side>);

impl Sides for CliSides {
    fn count(&self) -> usize {
        self.0.len()
    }
    fn target(&self, i: usize) -> Target<'_> {
        match &self.0[i] {
            Side::Dir { path, label } => {
                let mut t = Target::dir(path);
                t.label = label.clone();
                t
            }
            Side::Bed { bed: Some(b), .. } => b.target(),
            Side::Bed { config, .. } => {
                unreachable!("testbed {} is up while the comparison runs", config.label)
            }
        }
    }
    fn env(&self, i: usize) -> Option<TestbedEnv> {
        match &self.0[i] {
            Side::Bed { bed: Some(b), .. } => Some(b.environment()),
            _ => None,
        }
    }
    fn refresh(&mut self, i: usize) -> anyhow::Result<()> {
        if let Side::Bed { config, opts, bed } = &mut self.0[i] {
            if let Some(b) = bed.take() {
                b.teardown().with_context(|| format!("tearing down {}", config.label))?;
            }
            let b = Testbed::up(config, opts)
                .with_context(|| format!("setting up {}", config.label))?;
            *bed = Some(Box::new(b));
        }
        Ok(())
    }
}

pub fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    // Stage 1: validate everything before any I/O.
    let suite = a.workload.load()?;
    if !(a.min_effect >= 0.0 && a.min_effect < 1000.0) {
        return Err(
            UserError(format!("--min-effect {} must be a percentage >= 0", a.min_effect)).into()
        );
    }
    let mut sides = Vec::new();
    let mut labels = std::collections::HashSet::new();
    for c in &a.configs {
        let p = PathBuf::from(c);
        let side = if p.is_dir() {
            if !a.workload.no_space_check {
                crate::workload::limits::check_space(&suite, &p).map_err(UserError)?;
            }
            Side::Dir { path: p, label: crate::workload::limits::escape_controls(c) }
        } else {
            let config = FsConfig::parse(c).map_err(|e| {
                UserError(format!(
                    "`{c}` is neither a directory nor a filesystem configuration: {e}"
                ))
            })?;
            let opts = a.testbed.options(&config, Some(&suite));
            Side::Bed { config, opts: Box::new(opts), bed: None }
        };
        let label = match &side {
            Side::Dir { label, .. } => label.clone(),
            Side::Bed { config, .. } => config.label.clone(),
        };
        if !labels.insert(label.clone()) {
            return Err(UserError(format!(
                "configuration `{label}` is given twice; give repeats distinct labels, e.g. {label}:label={label}-2"
            ))
            .into());
        }
        sides.push(side);
    }
    // Every configuration gets the same image size: the largest any of them needs (a kind's
    // minimum, e.g. xfs's 300 MiB, raises it for all), so no result is flattered by a bigger
    // device. Said when it differs from --size.
    let same_size = sides
        .iter()
        .filter_map(|s| match s {
            Side::Bed { opts, .. } => Some(opts.size_bytes),
            Side::Dir { .. } => None,
        })
        .max();
    if let Some(size) = same_size {
        if let Some(asked) = a.testbed.size.filter(|&asked| asked != size) {
            eprintln!(
                "fsbench: note: --size {} is below what one configuration needs; every configuration gets {} images",
                crate::workload::size::fmt_bytes(asked),
                crate::workload::size::fmt_bytes(size)
            );
        }
        for s in sides.iter_mut() {
            if let Side::Bed { opts, .. } = s {
                opts.size_bytes = size;
            }
        }
    }
    let needs_root = sides.iter().any(|s| matches!(s, Side::Bed { .. }));
    if needs_root && !crate::sys::is_root() {
        return Err(UserError(
            "building filesystems (image files, loop devices, mkfs, mount, zfs-fuse) needs root; run as root, \
             or compare directories you mounted yourself: fsbench compare /mnt/a /mnt/b"
                .into(),
        )
        .into());
    }
    for s in &sides {
        if let Side::Bed { config, opts, .. } = s {
            testbed::preflight::check(config, opts.size_bytes, false)
                .with_context(|| format!("checking what {} needs", config.label))?;
        }
    }

    let store = a.record.open()?;

    // Stage 2: bring the testbeds up (guards tear them down on any exit from here).
    for s in sides.iter_mut() {
        if let Side::Bed { config, opts, bed } = s {
            if crate::sys::signals::interrupted() {
                return Ok(ExitCode::Interrupted);
            }
            eprintln!("fsbench: setting up {}", super::testbed_args::describe(opts, config));
            let b = match Testbed::up(config, opts) {
                Ok(b) => b,
                // Ctrl-C during set-up: mkfs or mount saw the signal too; the guards removed
                // what was made (this testbed's and, on return, the others').
                Err(_) if crate::sys::signals::interrupted() => {
                    eprintln!("fsbench: interrupted during set-up; nothing is left behind");
                    return Ok(ExitCode::Interrupted);
                }
                Err(e) => {
                    return Err(
                        anyhow::Error::new(e).context(format!("setting up {}", config.label))
                    )
                }
            };
            *bed = Some(Box::new(b));
        }
    }
    let mut sides = CliSides(sides);
    let opts = CompareOptions {
        engine: EngineOptions {
            repeat: a.repeat,
            compress_percent: a.data.compress_percent,
            seed: a.data.seed,
            trace: a.data.trace,
            hooks: Default::default(),
        },
        rule: Rule { min_effect: a.min_effect / 100.0, ..Rule::default() },
        fresh_per_test: a.fresh == Fresh::PerTest,
        scale: a.workload.scale.to_string(),
    };
    let mut configs: Vec<ConfigStart> = (0..sides.count())
        .map(|i| {
            let t = sides.target(i);
            ConfigStart {
                label: t.label.clone(),
                env: sides.env(i),
                target: crate::engine::runner::target_info(&t),
            }
        })
        .collect();
    let meta = RunMeta {
        kind: RunKind::Compare,
        started_unix_s: record::now_unix_s(),
        suite: suite.name.clone(),
        scale: opts.scale.clone(),
        repeat: a.repeat,
        host: crate::observe::host::HostInfo::current(),
        command_line: record::command_line(),
        options: RunOptions {
            rule: opts.rule,
            fresh_per_test: opts.fresh_per_test,
            seed: a.data.seed,
            compress_percent: a.data.compress_percent,
        },
    };
    let mut recording = record::Recording::begin(store, &meta, &configs, &suite.tests)?;
    let bar = Bar::new(suite.tests.len() * sides.count() * a.repeat as usize, 1);
    // Every repetition is committed to the results database as it ends.
    let report =
        compare::run(&suite, &mut sides, &opts, &bar, &mut |i, ti, t| recording.test(i, ti, t))?;
    for (c, r) in configs.iter_mut().zip(&report.configs) {
        c.env = r.env.clone();
        c.target = r.run.target.clone();
    }
    let failed = report
        .configs
        .iter()
        .any(|c| c.run.tests.iter().any(|t| matches!(t.status, TestStatus::Failed { .. })));
    let status = if report.interrupted {
        RunStatus::Interrupted
    } else if failed {
        RunStatus::Failed
    } else {
        RunStatus::Ok
    };
    let finished: Vec<(&ConfigStart, &[crate::result::TestResult])> =
        configs.iter().zip(&report.configs).map(|(c, r)| (c, r.run.tests.as_slice())).collect();
    recording.finish(&finished, status);

    // Stage 3: tear down (reporting errors), then output.
    let mut teardown_errors = Vec::new();
    for s in sides.0.iter_mut() {
        if let Side::Bed { config, bed, .. } = s {
            if let Some(b) = bed.take() {
                if let Err(e) = b.teardown() {
                    teardown_errors.push(format!("{}: {e}", config.label));
                }
            }
        }
    }
    let bytes = match a.format {
        Format::Table => crate::output::compare::render(&report, a.details).into_bytes(),
        Format::Json => crate::output::compare::json(&report)?,
        Format::Csv => crate::output::compare::csv(&report)?,
        // One bonnie++ table pair per configuration, labelled.
        Format::Bonnie => report
            .configs
            .iter()
            .map(|c| format!("== {} ==\n{}", c.label, crate::output::bonnie::render(&c.run)))
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes(),
    };
    std::io::stdout().write_all(&bytes).context("writing to stdout")?;
    let mut report_error = None;
    if !a.no_report {
        let run = crate::report::ReportRun {
            id: recording.run_id(),
            kind: crate::store::RunKind::Compare,
            command_line: meta.command_line.clone(),
            report: report.clone(),
        };
        // A name fsbench chooses never replaces a file (another run's report); one the user
        // gives replaces an earlier file of that name. Neither follows a planted link.
        let written = match &a.report {
            Some(p) => crate::report::write_html(&[run], p, None).map(|()| p.clone()),
            None => {
                let id = recording.run_id().map(|i| i.to_string());
                let p = PathBuf::from(format!(
                    "fsbench-report-{}.html",
                    id.unwrap_or_else(|| report.started_unix_s.to_string())
                ));
                crate::report::write_html_new(&[run], &p, None)
            }
        };
        match written {
            Ok(p) => eprintln!("fsbench: report written to {}", p.display()),
            Err(e) => {
                report_error = Some(anyhow::Error::new(e).context(
                    "the results above are complete, but the HTML report could not be written (choose another place with --report FILE, or --no-report)",
                ))
            }
        }
    }
    if !teardown_errors.is_empty() {
        return Err(anyhow::anyhow!(
            "could not remove every testbed: {}; run `fsbench testbed cleanup`",
            teardown_errors.join("; ")
        ));
    }
    if report.interrupted {
        return Ok(ExitCode::Interrupted);
    }
    recording.outcome()?;
    if let Some(e) = report_error {
        return Err(e);
    }
    Ok(if failed { ExitCode::TestFailed } else { ExitCode::Success })
}
