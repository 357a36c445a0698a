//! Loading stored runs back into the result types, and the run history.

use super::write::{RunOptions, NOT_REACHED};
use super::{sql_err, Result, Store, StoreError};
use crate::model::host::HostInfo;
use crate::model::result::{
    Figure, RepResult, RunReport, Summary, TargetInfo, TestResult, TestStatus, Warning,
};
use crate::model::run::{RunKind, RunStatus};
use crate::model::testbed::TestbedEnv;
use rusqlite::{params, OptionalExtension};
use serde::de::DeserializeOwned;

/// One line of `fsbench history`.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Run id.
    pub id: i64,
    /// run or compare.
    pub kind: RunKind,
    /// Start, seconds since the epoch.
    pub started_unix_s: u64,
    /// Status as stored.
    pub status: RunStatus,
    /// For an unfinished run: whether its process is still alive on this host.
    pub alive: bool,
    /// Suite.
    pub suite: String,
    /// Scale.
    pub scale: String,
    /// Repetitions.
    pub repeat: u32,
    /// Configuration labels.
    pub labels: Vec<String>,
    /// Tests with figures / tests, over all configurations.
    pub tests_done: u32,
    /// Tests over all configurations.
    pub tests_total: u32,
}

impl RunSummary {
    /// The status in words (an unfinished run whose process is gone is "incomplete").
    pub fn status_text(&self) -> &'static str {
        match (self.status, self.alive) {
            (RunStatus::Running, true) => "running",
            (RunStatus::Running, false) => "incomplete",
            (s, _) => s.as_str(),
        }
    }
}

/// Filters of `fsbench history`.
#[derive(Debug, Clone, Default)]
pub struct HistoryFilter {
    /// At most this many runs (newest first).
    pub limit: Option<u32>,
    /// Only this suite.
    pub suite: Option<String>,
    /// Only runs with a configuration label containing this.
    pub label: Option<String>,
}

/// One stored configuration with its tests.
#[derive(Debug, Clone)]
pub struct ConfigRecord {
    /// Label.
    pub label: String,
    /// Testbed environment.
    pub env: Option<TestbedEnv>,
    /// Where it ran.
    pub target: TargetInfo,
    /// Tests in run order.
    pub tests: Vec<TestResult>,
}

/// A whole stored run.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// Run id.
    pub id: i64,
    /// run or compare.
    pub kind: RunKind,
    /// Start.
    pub started_unix_s: u64,
    /// End, if it finished.
    pub finished_unix_s: Option<u64>,
    /// Status.
    pub status: RunStatus,
    /// fsbench version that recorded it.
    pub fsbench_version: String,
    /// Suite.
    pub suite: String,
    /// Scale.
    pub scale: String,
    /// Repetitions.
    pub repeat: u32,
    /// Host.
    pub host: HostInfo,
    /// Command line.
    pub command_line: String,
    /// Options.
    pub options: RunOptions,
    /// Configurations in order (the first is a comparison's baseline).
    pub configs: Vec<ConfigRecord>,
    /// Where the run's time went (None: stored before fsbench measured it, or unfinished).
    pub time: Option<crate::model::time::TimeSplit>,
}

fn parse<T: DeserializeOwned>(run: i64, what: &'static str, s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|source| StoreError::BadJson { run, what, source })
}

impl Store {
    /// Runs, newest first.
    pub fn history(&self, f: &HistoryFilter) -> Result<Vec<RunSummary>> {
        // The integrity tables exist from their migration on (a database opened read-only is
        // not migrated).
        let integrity_label = if self.has_table("integrity_configs")? {
            " OR EXISTS (SELECT 1 FROM integrity_configs c WHERE c.run_id = r.id AND instr(c.label, ?2) > 0)"
        } else {
            ""
        };
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT r.id, r.kind, r.started_unix_s, r.status, r.pid, r.suite, r.scale, r.repeat,
                    (SELECT group_concat(label, char(31)) FROM (SELECT label FROM configs WHERE run_id = r.id ORDER BY position)),
                    (SELECT count(*) FROM tests t JOIN configs c ON t.config_id = c.id WHERE c.run_id = r.id AND t.complete_reps > 0),
                    (SELECT count(*) FROM tests t JOIN configs c ON t.config_id = c.id WHERE c.run_id = r.id)
                 FROM runs r
                 WHERE (?1 IS NULL OR r.suite = ?1)
                   AND (?2 IS NULL OR EXISTS (SELECT 1 FROM configs c WHERE c.run_id = r.id AND instr(c.label, ?2) > 0){integrity_label})
                 ORDER BY r.started_unix_s DESC, r.id DESC
                 LIMIT ?3"
            ))
            .map_err(|e| self.err(e))?;
        let limit = f.limit.map(i64::from).unwrap_or(-1);
        let rows = stmt
            .query_map(params![f.suite, f.label, limit], |r| {
                let labels: Option<String> = r.get(8)?;
                let status = RunStatus::parse(&r.get::<_, String>(3)?);
                let pid: i64 = r.get(4)?;
                Ok(RunSummary {
                    id: r.get(0)?,
                    kind: RunKind::parse(&r.get::<_, String>(1)?).unwrap_or(RunKind::Run),
                    started_unix_s: r.get::<_, i64>(2)?.max(0) as u64,
                    status,
                    alive: status == RunStatus::Running && process_alive(pid),
                    suite: r.get(5)?,
                    scale: r.get(6)?,
                    repeat: r.get(7)?,
                    labels: labels
                        .map(|l| l.split('\u{1f}').map(String::from).collect())
                        .unwrap_or_default(),
                    tests_done: r.get(9)?,
                    tests_total: r.get(10)?,
                })
            })
            .map_err(|e| self.err(e))?;
        let mut runs = rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.err(e))?;
        drop(stmt);
        // A profile has no configurations: its label is the command it profiled.
        let ids: Vec<i64> =
            runs.iter().filter(|r| r.kind == RunKind::Profile).map(|r| r.id).collect();
        let commands = self.profile_commands(&ids)?;
        for r in &mut runs {
            if let Some(c) = commands.get(&r.id) {
                r.labels = vec![c.clone()];
            }
        }
        // An integrity run keeps its configurations and cases in tables of its own.
        for r in runs.iter_mut().filter(|r| r.kind == RunKind::Integrity) {
            let (labels, done, total) = self.integrity_summary(r.id)?;
            (r.labels, r.tests_done, r.tests_total) = (labels, done, total);
        }
        Ok(runs)
    }

    /// Load a whole run. A stored row that does not parse is first checked against the
    /// database's own damage (`integrity_check`), which is then what is reported.
    pub fn load(&self, id: i64) -> Result<RunRecord> {
        self.load_unchecked(id).map_err(|e| self.damaged_or(e))
    }

    fn load_unchecked(&self, id: i64) -> Result<RunRecord> {
        type Head =
            (String, i64, Option<i64>, String, String, String, String, u32, String, String, String);
        let head: Option<Head> = self
            .conn
            .query_row(
                "SELECT kind, started_unix_s, finished_unix_s, status, fsbench_version, suite, scale, repeat, host_json, command_line, options_json
                 FROM runs WHERE id = ?1",
                params![id],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                        r.get(8)?,
                        r.get(9)?,
                        r.get(10)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((kind, started, finished, status, version, suite, scale, repeat, host, cmd, opts)) =
            head
        else {
            return Err(StoreError::UnknownRun { id, path: self.path.clone() });
        };
        let status = RunStatus::parse(&status);
        let mut rec = RunRecord {
            id,
            kind: RunKind::parse(&kind).unwrap_or(RunKind::Run),
            started_unix_s: started.max(0) as u64,
            finished_unix_s: finished.map(|f| f.max(0) as u64),
            status,
            fsbench_version: version,
            suite,
            scale,
            repeat,
            host: parse(id, "host", &host)?,
            command_line: cmd,
            options: parse(id, "options", &opts)?,
            configs: Vec::new(),
            time: self.time_split(id)?,
        };
        let mut cstmt = self
            .conn
            .prepare("SELECT id, label, env_json, target_json FROM configs WHERE run_id = ?1 ORDER BY position")
            .map_err(|e| self.err(e))?;
        let configs: Vec<(i64, String, Option<String>, String)> = cstmt
            .query_map(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        for (cid, label, env, target) in configs {
            let env: Option<TestbedEnv> = match env {
                Some(e) => Some(parse(id, "testbed environment", &e)?),
                None => None,
            };
            let target: TargetInfo = parse(id, "target", &target)?;
            let tests = self.load_tests(id, cid, status)?;
            rec.configs.push(ConfigRecord { label, env, target, tests });
        }
        Ok(rec)
    }

    fn load_tests(&self, run: i64, cid: i64, status: RunStatus) -> Result<Vec<TestResult>> {
        type Row = (
            (i64, String, String, String, u32, String, Option<String>, u32, Option<String>, String),
            (i64, Option<String>),
        );
        // A database of schema version 1 (opened read-only, so not migrated) has no model
        // and figure columns: its rows are of result model 1.
        let model_cols = if self.version()? >= 2 { "model, figure" } else { "1, NULL" };
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT id, test_id, name, description, threads, status, reason, complete_reps, summary_json, warnings_json, {model_cols}
                 FROM tests WHERE config_id = ?1 ORDER BY position"
            ))
            .map_err(|e| self.err(e))?;
        let rows: Vec<Row> = stmt
            .query_map(params![cid], |r| {
                Ok((
                    (
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                        r.get(8)?,
                        r.get(9)?,
                    ),
                    (r.get(10)?, r.get(11)?),
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        let mut rstmt = self
            .conn
            .prepare("SELECT rep_json FROM reps WHERE test_row_id = ?1 ORDER BY rep_index")
            .map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(rows.len());
        for (head, (model, figure)) in rows {
            let (row_id, tid, name, desc, threads, st, reason, complete, summary, warnings) = head;
            let reason = reason.unwrap_or_default();
            let st = match st.as_str() {
                "ok" => TestStatus::Ok,
                "failed" => TestStatus::Failed { reason: reason.into() },
                "interrupted" => TestStatus::Interrupted,
                "not_met" => TestStatus::NotMet { reason },
                _ if reason == NOT_REACHED && status == RunStatus::Running => TestStatus::Skipped {
                    reason: NOT_REACHED.replace("ended", "stopped (killed?)"),
                },
                _ => TestStatus::Skipped { reason },
            };
            let reps: Vec<String> = rstmt
                .query_map(params![row_id], |r| r.get(0))
                .map_err(|e| self.err(e))?
                .collect::<rusqlite::Result<_>>()
                .map_err(|e| self.err(e))?;
            let reps: Vec<RepResult> =
                reps.iter().map(|r| parse(run, "repetition", r)).collect::<Result<_>>()?;
            if model < super::schema::RESULT_MODEL {
                out.push(legacy_test(
                    run,
                    (tid, name, desc, threads, st, reps, complete),
                    &warnings,
                )?);
                continue;
            }
            let summary: Option<Summary> = match summary {
                Some(s) => Some(parse(run, "summary", &s)?),
                None => None,
            };
            let figure = match figure.as_deref() {
                Some("ops_per_s") => Figure::OpsPerS,
                _ => Figure::MibPerS,
            };
            out.push(TestResult {
                id: tid,
                name,
                description: desc,
                threads,
                status: st,
                reps,
                complete_reps: complete,
                figure,
                summary,
                warnings: parse(run, "warnings", &warnings)?,
            });
        }
        Ok(out)
    }

    /// Other runs holding the same test as run `run`'s test `test_id` on its configuration
    /// `label`: a configuration of the same label, a test of the same id and the same
    /// definition as run (sizes after scaling), that completed (`ok`); newest first, at most
    /// `limit`. `fsbench diff` measures from them how far the test moves from run to run.
    pub fn same_test_runs(
        &self,
        run: i64,
        label: &str,
        test_id: &str,
        limit: u32,
    ) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT DISTINCT c2.run_id FROM tests t1
                 JOIN configs c1 ON t1.config_id = c1.id
                 JOIN tests t2 ON t2.test_id = t1.test_id AND t2.workload_json IS t1.workload_json
                 JOIN configs c2 ON t2.config_id = c2.id AND c2.label = c1.label
                 JOIN runs r2 ON r2.id = c2.run_id
                 WHERE c1.run_id = ?1 AND c1.label = ?2 AND t1.test_id = ?3 AND c2.run_id <> ?1
                   AND r2.kind IN ('run', 'compare') AND t2.status = 'ok'
                 ORDER BY c2.run_id DESC LIMIT ?4",
            )
            .map_err(|e| self.err(e))?;
        let ids = st
            .query_map(params![run, label, test_id, limit], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<i64>>>()
            .map_err(|e| self.err(e))?;
        Ok(ids)
    }

    /// Resolve a run id given on the command line, with a clear error when it is unknown.
    pub fn require_run(&self, id: i64) -> Result<()> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM runs WHERE id = ?1", params![id], |r| r.get(0))
            .map_err(|e| sql_err(&self.path, e))?;
        if n == 0 {
            return Err(StoreError::UnknownRun { id, path: self.path.clone() });
        }
        Ok(())
    }
}

impl Store {
    /// Run `id`'s time split, if stored (a database from before migration 6, opened read-only
    /// and so not migrated, has no column for it).
    fn time_split(&self, id: i64) -> Result<Option<crate::model::time::TimeSplit>> {
        let has_column: bool = self
            .conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'time_json'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(|e| self.err(e))?;
        if !has_column {
            return Ok(None);
        }
        let json: Option<String> = self
            .conn
            .query_row("SELECT time_json FROM runs WHERE id = ?1", params![id], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        json.map(|j| parse(id, "time", &j)).transpose()
    }
}

impl RunRecord {
    /// True if the run did not finish (killed, or still running).
    pub fn unfinished(&self) -> bool {
        self.status == RunStatus::Running
    }

    /// Configuration `i` as the `RunReport` that `fsbench run` printed.
    pub fn run_report(&self, i: usize) -> Option<RunReport> {
        let c = self.configs.get(i)?;
        Some(RunReport {
            fsbench_version: self.fsbench_version.clone(),
            started_unix_s: self.started_unix_s,
            host: self.host.clone(),
            target: c.target.clone(),
            suite: self.suite.clone(),
            scale: self.scale.clone(),
            repeat: self.repeat,
            tests: c.tests.clone(),
            interrupted: self.status == RunStatus::Interrupted || self.unfinished(),
            cluster: self.options.cluster.clone(),
            // A run's own part carries its split (a comparison's is on the whole report).
            time: self.time.clone().filter(|_| self.configs.len() == 1),
        })
    }
}

/// A test row of result model 1 (fsbench 0.1): its summary was of MiB/s only and its warnings
/// were text. The figure of merit is what 0.1's decision rule ranked (ops/s when the repetitions
/// counted file-set operations), the summary and the statistical warnings are rebuilt from the
/// stored repetitions, and the other warnings are kept as text.
fn legacy_test(
    run: i64,
    (id, name, description, threads, status, reps, complete_reps): (
        String,
        String,
        String,
        u32,
        TestStatus,
        Vec<RepResult>,
        u32,
    ),
    warnings: &str,
) -> Result<TestResult> {
    let texts: Vec<String> = parse(run, "warnings", warnings)?;
    let figure =
        if reps.iter().any(|r| r.file_ops > 0) { Figure::OpsPerS } else { Figure::MibPerS };
    let mut t = TestResult {
        id,
        name,
        description,
        threads,
        status,
        reps,
        complete_reps,
        figure,
        summary: None,
        // 0.1's statistical warnings began so; finalize() words them again.
        warnings: texts
            .into_iter()
            .filter(|w| {
                !w.starts_with("repetitions vary by") && !w.starts_with("timed phase lasted only")
            })
            .map(|text| Warning::Note { text })
            .collect(),
    };
    t.finalize();
    Ok(t)
}

/// Whether process `pid` exists (signal 0 checks without sending anything).
fn process_alive(pid: i64) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
