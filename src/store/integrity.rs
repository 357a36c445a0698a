//! Recording and loading `fsbench integrity` runs (the tables `integrity_configs` and
//! `integrity_cases`).
//!
//! The run row is the common one (`runs.kind = 'integrity'`, suite `integrity`); each
//! configuration gets a row when the run starts, each case is committed as it ends, and the
//! configuration's environment, error and time when it ends, so a killed run keeps every case
//! that finished.

use super::write::{RunMeta, RunOptions};
use super::{sql_err, Result, Store, StoreError};
use crate::integrity::{Case, ConfigMatrix};
use crate::model::run::{RunKind, RunStatus};
use rusqlite::{params, OptionalExtension, Transaction};

/// The `suite` column of an integrity run.
pub const SUITE: &str = "integrity";

impl RunMeta {
    /// An `fsbench integrity` run with `seed`, starting now.
    pub fn integrity(seed: u64, faults: &str) -> RunMeta {
        RunMeta {
            kind: RunKind::Integrity,
            started_unix_s: super::write::now_unix_s(),
            suite: SUITE.into(),
            scale: faults.into(),
            repeat: 1,
            host: crate::model::host::HostInfo::current(),
            command_line: super::write::command_line(),
            options: RunOptions { seed, ..RunOptions::default() },
        }
    }
}

/// An integrity run being recorded.
pub struct IntegrityRecorder {
    store: Store,
    run_id: i64,
    config_ids: Vec<i64>,
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("{{\"serialize_error\":\"{e}\"}}"))
}

impl Store {
    /// Start recording an integrity run of configurations `labels` (in order), in one
    /// transaction.
    pub fn begin_integrity(
        mut self,
        meta: &RunMeta,
        labels: &[String],
    ) -> Result<IntegrityRecorder> {
        let path = self.path.clone();
        let seed = meta.options.seed;
        let (run_id, config_ids) = super::write_tx(&mut self.conn, &path, |tx| {
            let run_id = super::write::insert_run(tx, meta)?;
            let mut ids = Vec::new();
            for (pos, label) in labels.iter().enumerate() {
                tx.execute(
                    "INSERT INTO integrity_configs (run_id, position, label, seed, elapsed_seconds)
                     VALUES (?1, ?2, ?3, ?4, 0)",
                    params![run_id, pos as i64, label, seed as i64],
                )?;
                ids.push(tx.last_insert_rowid());
            }
            Ok((run_id, ids))
        })?;
        Ok(IntegrityRecorder { store: self, run_id, config_ids })
    }

    /// The matrices of integrity run `id`, in configuration order (empty for another kind of
    /// run, or a database from before the integrity tables).
    pub fn load_integrity(&self, id: i64) -> Result<Vec<ConfigMatrix>> {
        if !self.has_table("integrity_configs")? {
            return Ok(Vec::new());
        }
        let mut cstmt = self
            .conn
            .prepare(
                "SELECT id, label, seed, env_json, error, elapsed_seconds FROM integrity_configs
                 WHERE run_id = ?1 ORDER BY position",
            )
            .map_err(|e| self.err(e))?;
        type Row = (i64, String, i64, Option<String>, Option<String>, f64);
        let rows: Vec<Row> = cstmt
            .query_map(params![id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.err(e))?;
        let mut kstmt = self
            .conn
            .prepare("SELECT case_json FROM integrity_cases WHERE config_id = ?1 ORDER BY position")
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for (cid, label, seed, env, error, elapsed) in rows {
            let cases: Vec<String> = kstmt
                .query_map(params![cid], |r| r.get(0))
                .map_err(|e| self.err(e))?
                .collect::<rusqlite::Result<_>>()
                .map_err(|e| self.err(e))?;
            let cases: Vec<Case> = cases
                .iter()
                .map(|c| {
                    serde_json::from_str(c).map_err(|source| StoreError::BadJson {
                        run: id,
                        what: "integrity case",
                        source,
                    })
                })
                .collect::<Result<_>>()?;
            let environment = match env {
                Some(e) => Some(serde_json::from_str(&e).map_err(|source| {
                    StoreError::BadJson { run: id, what: "testbed environment", source }
                })?),
                None => None,
            };
            out.push(ConfigMatrix {
                config: label,
                environment,
                seed: seed as u64,
                cases,
                error,
                elapsed_seconds: elapsed,
            });
        }
        Ok(out)
    }

    /// For `history`: the configuration labels of integrity run `id`, the cases that ran and
    /// all cases recorded.
    pub(super) fn integrity_summary(&self, id: i64) -> Result<(Vec<String>, u32, u32)> {
        if !self.has_table("integrity_configs")? {
            return Ok((Vec::new(), 0, 0));
        }
        let labels: Vec<String> = self
            .conn
            .prepare("SELECT label FROM integrity_configs WHERE run_id = ?1 ORDER BY position")
            .and_then(|mut s| {
                s.query_map(params![id], |r| r.get(0))?.collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| self.err(e))?;
        let (done, total): (u32, u32) = self
            .conn
            .query_row(
                "SELECT count(*) FILTER (WHERE k.outcome <> 'not_run'), count(*)
                 FROM integrity_cases k JOIN integrity_configs c ON k.config_id = c.id
                 WHERE c.run_id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))?;
        Ok((labels, done, total))
    }

    /// Whether the database has table `name` (a database opened read-only is not migrated).
    pub(super) fn has_table(&self, name: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                params![name],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
            .map_err(|e| sql_err(&self.path, e))
    }
}

impl IntegrityRecorder {
    /// The run's id.
    pub fn run_id(&self) -> i64 {
        self.run_id
    }

    /// The database file.
    pub fn path(&self) -> &std::path::Path {
        self.store.path()
    }

    fn config_id(&self, config: usize) -> Result<i64> {
        self.config_ids.get(config).copied().ok_or_else(|| StoreError::Sqlite {
            path: self.store.path.clone(),
            source: rusqlite::Error::InvalidParameterName(format!("configuration {config}")),
        })
    }

    /// Commit case `position` of configuration `config`.
    pub fn record_case(&mut self, config: usize, position: usize, case: &Case) -> Result<()> {
        let cid = self.config_id(config)?;
        let path = self.store.path.clone();
        super::write_tx(&mut self.store.conn, &path, |tx| write_case(tx, cid, position, case))
    }

    /// Commit configuration `config`'s final state: every case (again, in case one was not
    /// stored), the environment, the error and the time.
    pub fn finish_config(&mut self, config: usize, m: &ConfigMatrix) -> Result<()> {
        let cid = self.config_id(config)?;
        let path = self.store.path.clone();
        super::write_tx(&mut self.store.conn, &path, |tx| {
            for (i, c) in m.cases.iter().enumerate() {
                write_case(tx, cid, i, c)?;
            }
            tx.execute(
                "UPDATE integrity_configs SET env_json = ?1, error = ?2, elapsed_seconds = ?3
                 WHERE id = ?4",
                params![m.environment.as_ref().map(json), m.error, m.elapsed_seconds, cid],
            )?;
            Ok(())
        })
    }

    /// Write the run's status.
    pub fn finish(&mut self, status: RunStatus, finished_unix_s: u64) -> Result<()> {
        let path = self.store.path.clone();
        let run_id = self.run_id;
        super::write_tx(&mut self.store.conn, &path, |tx| {
            tx.execute(
                "UPDATE runs SET status = ?1, finished_unix_s = ?2 WHERE id = ?3",
                params![status.as_str(), finished_unix_s as i64, run_id],
            )
            .map(drop)
        })
    }
}

fn write_case(tx: &Transaction<'_>, cid: i64, position: usize, c: &Case) -> rusqlite::Result<()> {
    let first = c.damaged.first();
    let outcome = serde_json::to_value(c.outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| c.outcome.name().to_string());
    tx.execute(
        "INSERT INTO integrity_cases (config_id, position, target, fault, outcome, block, device,
                                      offset_bytes, evidence, case_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (config_id, position) DO UPDATE SET target = excluded.target,
             fault = excluded.fault, outcome = excluded.outcome, block = excluded.block,
             device = excluded.device, offset_bytes = excluded.offset_bytes,
             evidence = excluded.evidence, case_json = excluded.case_json",
        params![
            cid,
            position as i64,
            c.target.name(),
            c.fault.name(),
            outcome,
            c.block,
            first.map(|d| d.device as i64),
            first.map(|d| d.offset_bytes as i64),
            crate::integrity::matrix::evidence_line(c),
            json(c),
        ],
    )
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrity::dataset::ReadBack;
    use crate::integrity::locate::BlockCopy;
    use crate::integrity::{Fault, Outcome, Target};
    use crate::store::HistoryFilter;

    fn case(fault: Fault, outcome: Outcome) -> Case {
        let copy = BlockCopy { device: 1, image: "/w/dev1.img".into(), offset_bytes: 6328320 };
        Case {
            target: Target::Data,
            fault,
            outcome,
            block: "d0/d3/f10 block 27 (offset 110592)".into(),
            copies: vec![copy.clone()],
            damaged: vec![copy],
            tool_location: None,
            locations_agree: None,
            online_error: None,
            first_read: Some(ReadBack { intact_blocks: 3, ..Default::default() }),
            check: None,
            second_read: Some(ReadBack { intact_blocks: 3, ..Default::default() }),
            kernel_log: vec!["BTRFS warning: csum failed".into()],
            daemon_died: false,
            hung: None,
            note: None,
        }
    }

    fn matrix(label: &str, cases: Vec<Case>) -> ConfigMatrix {
        ConfigMatrix {
            config: label.into(),
            environment: None,
            seed: 9,
            cases,
            error: None,
            elapsed_seconds: 12.5,
        }
    }

    #[test]
    fn cases_are_stored_as_they_end_and_load_back() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.sqlite");
        let meta = RunMeta::integrity(9, "zero,stale");
        let labels = vec!["btrfs".to_string(), "zfs:layout=mirror:devices=2".to_string()];
        let mut rec = Store::open(&db).unwrap().begin_integrity(&meta, &labels).unwrap();
        let id = rec.run_id();
        let a = matrix(
            "btrfs",
            vec![case(Fault::Zero, Outcome::Detected), case(Fault::Stale, Outcome::Detected)],
        );
        rec.record_case(0, 0, &a.cases[0]).unwrap();
        // A killed run: one case recorded, nothing finished. It shows as incomplete with it.
        {
            let s = Store::open_read_only(&db).unwrap();
            let h = s.history(&HistoryFilter::default()).unwrap();
            assert_eq!(h[0].kind, RunKind::Integrity);
            assert_eq!(h[0].labels, labels);
            assert_eq!((h[0].tests_done, h[0].tests_total), (1, 1));
            assert_eq!(s.load_integrity(id).unwrap()[0].cases.len(), 1);
        }
        rec.record_case(0, 1, &a.cases[1]).unwrap();
        rec.finish_config(0, &a).unwrap();
        let mut b =
            matrix("zfs:layout=mirror:devices=2", vec![case(Fault::Zero, Outcome::Repaired)]);
        b.error = Some("interrupted".into());
        rec.finish_config(1, &b).unwrap();
        rec.finish(RunStatus::Interrupted, 1).unwrap();

        let s = Store::open_read_only(&db).unwrap();
        let back = s.load_integrity(id).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].config, "btrfs");
        assert_eq!(back[0].seed, 9);
        assert_eq!(back[0].elapsed_seconds, 12.5);
        let outcomes: Vec<_> = back[0].cases.iter().map(|c| (c.fault, c.outcome)).collect();
        assert_eq!(outcomes, [(Fault::Zero, Outcome::Detected), (Fault::Stale, Outcome::Detected)]);
        assert_eq!(back[0].cases[0].kernel_log, ["BTRFS warning: csum failed"]);
        assert_eq!(back[1].error.as_deref(), Some("interrupted"));
        assert_eq!(back[1].cases[0].outcome, Outcome::Repaired);
        // The columns a query needs.
        let (outcome, device, offset): (String, i64, i64) = s
            .conn
            .query_row(
                "SELECT outcome, device, offset_bytes FROM integrity_cases k
                 JOIN integrity_configs c ON k.config_id = c.id WHERE c.position = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((outcome.as_str(), device, offset), ("repaired", 1, 6328320));
        let rec = s.load(id).unwrap();
        assert_eq!(
            (rec.kind, rec.status, rec.suite.as_str()),
            (RunKind::Integrity, RunStatus::Interrupted, SUITE)
        );
        assert_eq!(rec.options.seed, 9);
        // history --label finds an integrity run by its configurations.
        let f = HistoryFilter { label: Some("mirror".into()), ..Default::default() };
        assert_eq!(s.history(&f).unwrap().len(), 1);
        let f = HistoryFilter { label: Some("xfs".into()), ..Default::default() };
        assert!(s.history(&f).unwrap().is_empty());
    }
}
