//! Recording a run while it happens.
//!
//! [`Store::begin`] writes the run, its configurations and one row per test (marked "not
//! reached") in one transaction; [`Recorder::record_test`] then commits each test's state and its
//! new repetitions in one transaction as soon as the engine hands them over; [`Recorder::finish`]
//! writes the final state and the run's status. What a killed process leaves is therefore a
//! consistent database holding every finished test, and the run shows as incomplete.

use super::{Result, Store, StoreError};
use crate::model::host::HostInfo;
use crate::model::job::TestDef;
use crate::model::result::{TargetInfo, TestResult, TestStatus};
use crate::model::run::{RunKind, RunStatus};
use crate::model::testbed::TestbedEnv;
use crate::model::verdict::Rule;
use rusqlite::{params, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

/// Reason stored for tests the run has not reached (yet).
pub const NOT_REACHED: &str = "not reached: the run ended before this test";

/// Options of a run that are needed to reproduce its output.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunOptions {
    /// Decision rule (compare).
    #[serde(default)]
    pub rule: Rule,
    /// A fresh filesystem per test (compare).
    #[serde(default)]
    pub fresh_per_test: bool,
    /// Seed for offsets and sizes.
    #[serde(default)]
    pub seed: u64,
    /// Share of zeros in written blocks.
    #[serde(default)]
    pub compress_percent: u8,
    /// Multi-client runs (`--mpi`): ranks, hosts and clocks, for the report's Clients panel
    /// (each repetition's per-rank figures are in its stored result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::model::cluster::ClusterInfo>,
}

/// What is known about a run when it starts.
#[derive(Debug, Clone)]
pub struct RunMeta {
    /// `run` or `compare`.
    pub kind: RunKind,
    /// Start, seconds since the epoch.
    pub started_unix_s: u64,
    /// Suite name.
    pub suite: String,
    /// `--scale` as text.
    pub scale: String,
    /// Repetitions.
    pub repeat: u32,
    /// The machine.
    pub host: HostInfo,
    /// The command line, for the record.
    pub command_line: String,
    /// Options needed to reproduce the output.
    pub options: RunOptions,
}

impl RunMeta {
    /// A run of `suite` starting now, recorded with the command line as typed.
    pub fn new(
        kind: RunKind,
        suite: &crate::model::job::Suite,
        repeat: u32,
        options: RunOptions,
    ) -> RunMeta {
        RunMeta {
            kind,
            started_unix_s: now_unix_s(),
            suite: suite.name.clone(),
            scale: suite.scale.to_string(),
            repeat,
            host: HostInfo::current(),
            command_line: command_line(),
            options,
        }
    }
}

/// Seconds since the epoch.
pub(crate) fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// This process's command line as typed (arguments with blanks or quotes single-quoted).
pub(crate) fn command_line() -> String {
    let args: Vec<String> = std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        })
        .collect();
    args.join(" ")
}

/// One configuration (a `run` has exactly one).
#[derive(Debug, Clone)]
pub struct ConfigStart {
    /// Label used in every output.
    pub label: String,
    /// How the filesystem was made (None for a user's directory).
    pub env: Option<TestbedEnv>,
    /// Where the tests run.
    pub target: TargetInfo,
}

/// A run being recorded.
pub struct Recorder {
    pub(super) store: Store,
    run_id: i64,
    config_ids: Vec<i64>,
}

pub(crate) fn to_json<T: Serialize>(v: &T) -> String {
    // The result types are plain data (no maps with non-string keys), so this cannot fail.
    serde_json::to_string(v).unwrap_or_else(|e| format!("{{\"serialize_error\":\"{e}\"}}"))
}

impl Store {
    /// Start recording a run: the run, its configurations and its tests (as "not reached"), in
    /// one transaction.
    pub fn begin(
        mut self,
        meta: &RunMeta,
        configs: &[ConfigStart],
        tests: &[TestDef],
    ) -> Result<Recorder> {
        let path = self.path.clone();
        let (run_id, config_ids) =
            super::write_tx(&mut self.conn, &path, |tx| begin_tx(tx, meta, configs, tests))?;
        Ok(Recorder { store: self, run_id, config_ids })
    }
}

fn begin_tx(
    tx: &Transaction<'_>,
    meta: &RunMeta,
    configs: &[ConfigStart],
    tests: &[TestDef],
) -> rusqlite::Result<(i64, Vec<i64>)> {
    let e = |e| e;
    {
        let run_id = insert_run(tx, meta)?;
        let mut config_ids = Vec::new();
        for (pos, c) in configs.iter().enumerate() {
            tx.execute(
                "INSERT INTO configs (run_id, position, label, env_json, target_json) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![run_id, pos as i64, c.label, c.env.as_ref().map(to_json), to_json(&c.target)],
            )
            .map_err(e)?;
            let cid = tx.last_insert_rowid();
            config_ids.push(cid);
            for (tpos, t) in tests.iter().enumerate() {
                tx.execute(
                    "INSERT INTO tests (config_id, position, test_id, name, description, threads, status, reason, complete_reps, warnings_json, workload_json, model, figure)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'skipped', ?7, 0, '[]', ?8, ?9, ?10)",
                    params![
                        cid,
                        tpos as i64,
                        t.id,
                        t.name,
                        t.description,
                        t.threads,
                        NOT_REACHED,
                        to_json(t),
                        super::schema::RESULT_MODEL,
                        crate::model::result::Figure::of_test(t).key()
                    ],
                )
                .map_err(e)?;
            }
        }
        Ok((run_id, config_ids))
    }
}

impl Recorder {
    /// The run's id (what `fsbench show` takes).
    pub fn run_id(&self) -> i64 {
        self.run_id
    }

    /// The database file.
    pub fn path(&self) -> &std::path::Path {
        self.store.path()
    }

    /// Commit the current state of test `position` of configuration `config` and every
    /// repetition not stored yet, in one transaction.
    pub fn record_test(&mut self, config: usize, position: usize, t: &TestResult) -> Result<()> {
        let cid = self.config_id(config)?;
        let path = self.store.path.clone();
        super::write_tx(&mut self.store.conn, &path, |tx| write_test(tx, cid, position, t))
    }

    /// Write the final state of every configuration and test and the run's status.
    pub fn finish(
        &mut self,
        configs: &[(&ConfigStart, &[TestResult])],
        status: RunStatus,
        finished_unix_s: u64,
    ) -> Result<()> {
        let ids: Vec<i64> =
            (0..configs.len()).map(|i| self.config_id(i)).collect::<Result<Vec<_>>>()?;
        let path = self.store.path.clone();
        let run_id = self.run_id;
        super::write_tx(&mut self.store.conn, &path, |tx| {
            for ((c, tests), cid) in configs.iter().zip(&ids) {
                tx.execute(
                    "UPDATE configs SET env_json = ?1, target_json = ?2 WHERE id = ?3",
                    params![c.env.as_ref().map(to_json), to_json(&c.target), cid],
                )?;
                for (pos, t) in tests.iter().enumerate() {
                    write_test(tx, *cid, pos, t)?;
                }
            }
            // `--repeat auto` starts at its least (5) and may add rounds: the run's repetitions
            // are the most any test got (history, show's header), never fewer than asked.
            let done = configs.iter().flat_map(|(_, ts)| ts.iter()).map(|t| t.reps.len()).max();
            tx.execute(
                "UPDATE runs SET status = ?1, finished_unix_s = ?2, repeat = MAX(repeat, ?3) WHERE id = ?4",
                params![status.as_str(), finished_unix_s as i64, done.unwrap_or(0) as i64, run_id],
            )?;
            Ok(())
        })
    }

    /// Record where the run's time went.
    pub fn record_time(&mut self, t: &crate::model::time::TimeSplit) -> Result<()> {
        let path = self.store.path.clone();
        let run_id = self.run_id;
        super::write_tx(&mut self.store.conn, &path, |tx| {
            tx.execute(
                "UPDATE runs SET time_json = ?1 WHERE id = ?2",
                params![to_json(t), run_id],
            )?;
            Ok(())
        })
    }

    fn config_id(&self, config: usize) -> Result<i64> {
        self.config_ids.get(config).copied().ok_or_else(|| StoreError::Sqlite {
            path: self.store.path.clone(),
            source: rusqlite::Error::InvalidParameterName(format!("configuration {config}")),
        })
    }
}

/// Insert the run's row (status running); returns its id.
pub(super) fn insert_run(tx: &Transaction<'_>, meta: &RunMeta) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO runs (kind, started_unix_s, status, pid, fsbench_version, suite, scale, repeat, host_json, command_line, options_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            meta.kind.as_str(),
            meta.started_unix_s as i64,
            RunStatus::Running.as_str(),
            std::process::id(),
            env!("CARGO_PKG_VERSION"),
            meta.suite,
            meta.scale,
            meta.repeat,
            to_json(&meta.host),
            meta.command_line,
            to_json(&meta.options),
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Upsert one test row and append the repetitions not stored yet.
fn write_test(
    tx: &Transaction<'_>,
    cid: i64,
    position: usize,
    t: &TestResult,
) -> rusqlite::Result<()> {
    let (status, reason) = match &t.status {
        TestStatus::Ok => ("ok", None),
        TestStatus::Failed { reason } => ("failed", Some(reason.as_str())),
        TestStatus::Interrupted => ("interrupted", None),
        TestStatus::Skipped { reason } => ("skipped", Some(reason.as_str())),
        TestStatus::NotMet { reason } => ("not_met", Some(reason.as_str())),
    };
    let existing: Option<i64> = tx
        .query_row(
            "SELECT id FROM tests WHERE config_id = ?1 AND position = ?2",
            params![cid, position as i64],
            |r| r.get(0),
        )
        .optional()?;
    let row_id = match existing {
        Some(id) => {
            tx.execute(
                "UPDATE tests SET test_id = ?1, name = ?2, description = ?3, threads = ?4, status = ?5, reason = ?6,
                 complete_reps = ?7, summary_json = ?8, warnings_json = ?9, model = ?11, figure = ?12 WHERE id = ?10",
                params![
                    t.id,
                    t.name,
                    t.description,
                    t.threads,
                    status,
                    reason,
                    t.complete_reps,
                    t.summary.as_ref().map(to_json),
                    to_json(&t.warnings),
                    id,
                    super::schema::RESULT_MODEL,
                    t.figure.key()
                ],
            )?;
            id
        }
        None => {
            tx.execute(
                "INSERT INTO tests (config_id, position, test_id, name, description, threads, status, reason, complete_reps, summary_json, warnings_json, model, figure)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                params![
                    cid,
                    position as i64,
                    t.id,
                    t.name,
                    t.description,
                    t.threads,
                    status,
                    reason,
                    t.complete_reps,
                    t.summary.as_ref().map(to_json),
                    to_json(&t.warnings),
                    super::schema::RESULT_MODEL,
                    t.figure.key()
                ],
            )?;
            tx.last_insert_rowid()
        }
    };
    let stored: i64 =
        tx.query_row("SELECT count(*) FROM reps WHERE test_row_id = ?1", params![row_id], |r| {
            r.get(0)
        })?;
    for (i, r) in t.reps.iter().enumerate().skip(stored.max(0) as usize) {
        tx.execute(
            "INSERT INTO reps (test_row_id, rep_index, complete, mib_per_s, ops_per_s, wall_nanos, bytes, cpu_user_nanos, cpu_sys_nanos, rep_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                row_id,
                i as i64,
                r.complete,
                r.mib_per_s,
                r.ops_per_s,
                r.wall_nanos as i64,
                r.bytes as i64,
                r.cpu_user_nanos as i64,
                r.cpu_sys_nanos as i64,
                to_json(r)
            ],
        )?;
    }
    Ok(())
}
