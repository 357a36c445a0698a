//! Options that choose the results database, and the glue that records a run or comparison as it
//! happens.

use crate::model::result::TestResult;
use crate::model::run::RunStatus;
use crate::store::write::ConfigStart;
use crate::store::{Recorder, RunMeta, Store};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// `--db` for commands that read the results database.
#[derive(Debug, Clone, Args)]
pub struct DbArg {
    /// Results database. Default: $XDG_DATA_HOME/fsbench/results.sqlite, else
    /// ~/.local/share/fsbench/results.sqlite.
    #[arg(long, value_name = "FILE")]
    pub db: Option<PathBuf>,
}

impl DbArg {
    /// The file to use.
    pub fn path(&self) -> anyhow::Result<PathBuf> {
        match &self.db {
            Some(p) => Ok(p.clone()),
            None => Ok(crate::store::default_path()?),
        }
    }

    /// Open for reading.
    pub fn open_read_only(&self) -> anyhow::Result<Store> {
        Ok(Store::open_read_only(&self.path()?)?)
    }
}

/// `--db` and `--no-store` for commands that record (run, compare).
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    #[command(flatten)]
    pub db: DbArg,

    /// Do not record this run in the results database.
    #[arg(long, conflicts_with = "db")]
    pub no_store: bool,
}

impl RecordArgs {
    /// Open (and create or migrate) the database before anything runs, so a database that
    /// cannot be used stops the command before any I/O. None with --no-store.
    pub fn open(&self) -> anyhow::Result<Option<Store>> {
        if self.no_store {
            return Ok(None);
        }
        let path = self.db.path()?;
        let s = Store::open(&path)
            .with_context(|| "opening the results database (--no-store runs without it)")?;
        Ok(Some(s))
    }
}

/// Seconds since the epoch.
pub fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Record and drive `plan` on `targets`: the run is stored as it starts, every unit of work is
/// committed as it ends, and the final state and status when the driver returns.
pub fn drive(
    plan: &crate::driver::Plan<'_>,
    targets: &mut dyn crate::driver::Targets,
    store: Option<Store>,
    meta: &RunMeta,
    progress: &dyn crate::engine::Progress,
) -> anyhow::Result<(crate::driver::Outcome, Recording)> {
    let start = |t: &dyn crate::driver::Targets| -> Vec<ConfigStart> {
        (0..t.count())
            .map(|i| {
                let target = t.target(i);
                ConfigStart {
                    label: target.label.clone(),
                    env: t.env(i),
                    target: crate::engine::runner::target_info(&target),
                }
            })
            .collect()
    };
    let mut configs = start(targets);
    let mut recording = Recording::begin(store, meta, &configs, &plan.suite.tests)?;
    let outcome =
        crate::driver::drive(plan, targets, progress, &crate::driver::NoHooks, &mut |i, ti, t| {
            recording.test(i, ti, t)
        })?;
    // Environments as they are now (a fresh filesystem per test is a new one).
    for (i, (c, run)) in configs.iter_mut().zip(&outcome.runs).enumerate() {
        c.env = targets.env(i);
        c.target = run.target.clone();
    }
    let finished: Vec<(&ConfigStart, &[TestResult])> =
        configs.iter().zip(&outcome.runs).map(|(c, r)| (c, r.tests.as_slice())).collect();
    recording.finish(&finished, outcome.status());
    Ok((outcome, recording))
}

/// A run being recorded. A write that fails mid-run is reported once on stderr and recording
/// stops; the benchmark itself carries on and prints its results, and then the exit code says
/// the results were not all stored ([`Recording::outcome`]).
pub struct Recording {
    rec: Option<Recorder>,
    failed: Option<(std::path::PathBuf, crate::store::StoreError)>,
}

impl Recording {
    /// Start recording (None store: --no-store).
    pub fn begin(
        store: Option<Store>,
        meta: &RunMeta,
        configs: &[ConfigStart],
        tests: &[crate::model::job::TestDef],
    ) -> anyhow::Result<Recording> {
        let rec = match store {
            Some(s) => {
                let path = s.path().to_path_buf();
                Some(
                    s.begin(meta, configs, tests)
                        .with_context(|| format!("recording the run in {}", path.display()))?,
                )
            }
            None => None,
        };
        Ok(Recording { rec, failed: None })
    }

    /// The run's id in the database, if recording.
    pub fn run_id(&self) -> Option<i64> {
        self.rec.as_ref().map(|r| r.run_id())
    }

    /// Commit one test's results so far.
    pub fn test(&mut self, config: usize, position: usize, t: &TestResult) {
        if let Some(r) = &mut self.rec {
            if let Err(e) = r.record_test(config, position, t) {
                self.fail(e);
            }
        }
    }

    /// Final state and status; prints where the run is stored.
    pub fn finish(&mut self, configs: &[(&ConfigStart, &[TestResult])], status: RunStatus) {
        if let Some(r) = &mut self.rec {
            match r.finish(configs, status, now_unix_s()) {
                Ok(()) => eprintln!(
                    "fsbench: stored as run {} in {} (fsbench show {})",
                    r.run_id(),
                    r.path().display(),
                    r.run_id()
                ),
                Err(e) => self.fail(e),
            }
        }
    }

    /// Store where the run's time went (after the testbeds' teardown: it counts too).
    pub fn time(&mut self, t: &crate::model::time::TimeSplit) {
        if let Some(r) = &mut self.rec {
            if let Err(e) = r.record_time(t) {
                self.fail(e);
            }
        }
    }

    fn fail(&mut self, e: crate::store::StoreError) {
        eprintln!("fsbench: warning: recording stopped, results are no longer stored: {e}");
        if let Some(r) = self.rec.take() {
            self.failed = Some((r.path().to_path_buf(), e));
        }
    }

    /// After the output is written: an error if the results could not all be stored (so the
    /// exit code is not 0 for a run whose record is incomplete).
    pub fn outcome(&mut self) -> anyhow::Result<()> {
        match self.failed.take() {
            None => Ok(()),
            Some((path, e)) => Err(anyhow::Error::new(e).context(format!(
                "the results above are complete, but they are not all stored in {}",
                path.display()
            ))),
        }
    }
}

/// The clock of a command's time split ([`crate::model::time::TimeSplit`]): from before its
/// testbeds come up to after they are torn down, with the testbeds' own steps apart.
pub struct Stopwatch {
    started: Instant,
    testbed_nanos: u64,
}

impl Stopwatch {
    /// Start now (before the testbeds come up).
    pub fn start() -> Stopwatch {
        Stopwatch { started: Instant::now(), testbed_nanos: 0 }
    }

    /// Run a testbed step (set-up, teardown) and count its time as the testbeds'.
    pub fn testbed<T>(&mut self, step: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        let out = step();
        self.testbed_nanos += t0.elapsed().as_nanos() as u64;
        out
    }

    /// Where the time of `report`'s run went, with what the driver measured (`driver`).
    pub fn split(
        &self,
        report: &crate::model::report::Report,
        driver: &crate::driver::DriverTime,
    ) -> crate::model::time::TimeSplit {
        let runs: Vec<&crate::model::result::RunReport> =
            report.configs.iter().map(|c| &c.run).collect();
        let total = self.started.elapsed().as_nanos() as u64;
        crate::model::time::TimeSplit::of(&runs, driver, self.testbed_nanos, total)
    }
}
