//! Profiles (`fsbench profile`) in the store: a run of kind `profile` (its `runs` row: host,
//! command line, status) and one row of the `profiles` table with the whole profile as JSON
//! beside the summary figures a query needs.
//!
//! A database older than the `profiles` table (0.1, 0.2) is read as it is: it holds no
//! profiles. It gets the table when a run or profile is next recorded in it (the migrations).

use super::write::{command_line, now_unix_s, to_json, RunOptions};
use super::{Result, Store, StoreError};
use crate::model::host::HostInfo;
use crate::model::run::{RunKind, RunStatus};
use crate::profile::Profile;
use rusqlite::{params, OptionalExtension};
use std::collections::HashMap;

/// The suite name a profile run is listed under in `history`.
pub const PROFILE_SUITE: &str = "profile";

impl Store {
    /// Record a finished profile: the run (kind `profile`, suite `profile`, the runs as its
    /// repetitions) and its `profiles` row, in one transaction. Returns the run id.
    pub fn record_profile(&mut self, p: &Profile, started_unix_s: u64) -> Result<i64> {
        let status = if p.exit.stopped_by == Some(crate::profile::spawn::StopReason::Interrupted) {
            RunStatus::Interrupted
        } else if p.exit.code != 0 && p.exit.stopped_by.is_none() {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        };
        let json = to_json(p);
        let command = p.command.join(" ");
        let host = to_json(&HostInfo::current());
        let options = to_json(&RunOptions::default());
        let cmdline = command_line();
        let repeat = p.runs_wall_seconds.len().max(1) as i64;
        let s = &p.summary;
        let path = self.path.clone();
        super::write_tx(&mut self.conn, &path, |tx| {
            tx.execute(
                "INSERT INTO runs (kind, started_unix_s, finished_unix_s, status, pid, fsbench_version, suite, scale, repeat, host_json, command_line, options_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, '-', ?8, ?9, ?10, ?11)",
                params![
                    RunKind::Profile.as_str(),
                    started_unix_s as i64,
                    now_unix_s() as i64,
                    status.as_str(),
                    std::process::id(),
                    env!("CARGO_PKG_VERSION"),
                    PROFILE_SUITE,
                    repeat,
                    host,
                    cmdline,
                    options,
                ],
            )?;
            let id = tx.last_insert_rowid();
            tx.execute(
                "INSERT INTO profiles (run_id, command, exit_code, wall_seconds, files_opened, device_read_bytes, device_read_requests, device_write_bytes, read_in_flight_seconds, attributed_share, complete, profile_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    id,
                    command,
                    s.exit_code,
                    s.wall_seconds,
                    s.files_opened as i64,
                    s.device_read_bytes as i64,
                    s.device_read_requests as i64,
                    s.device_write_bytes as i64,
                    s.read_in_flight_seconds,
                    s.named_or_metadata_share(),
                    s.complete(),
                    json,
                ],
            )?;
            Ok(id)
        })
    }

    /// Whether the database has the `profiles` table (it is older than profiles otherwise:
    /// opened read-only, it is not migrated).
    fn has_profiles(&self) -> Result<bool> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'profiles'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        Ok(n > 0)
    }

    /// The stored profile of run `id`; `None` when the run is not a profile.
    pub fn load_profile(&self, id: i64) -> Result<Option<Profile>> {
        if !self.has_profiles()? {
            return Ok(None);
        }
        let json: Option<String> = self
            .conn
            .query_row("SELECT profile_json FROM profiles WHERE run_id = ?1", params![id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))?;
        match json {
            Some(j) => serde_json::from_str(&j).map(Some).map_err(|source| StoreError::BadJson {
                run: id,
                what: "profile",
                source,
            }),
            None => Ok(None),
        }
    }

    /// The profiled command of each profile run among `ids` (for `history`).
    pub fn profile_commands(&self, ids: &[i64]) -> Result<HashMap<i64, String>> {
        let mut out = HashMap::new();
        if ids.is_empty() || !self.has_profiles()? {
            return Ok(out);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT command FROM profiles WHERE run_id = ?1")
            .map_err(|e| self.err(e))?;
        for id in ids {
            let c: Option<String> =
                stmt.query_row(params![id], |r| r.get(0)).optional().map_err(|e| self.err(e))?;
            if let Some(c) = c {
                out.insert(*id, c);
            }
        }
        Ok(out)
    }
}
