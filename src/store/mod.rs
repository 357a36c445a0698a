//! The results store: every `run` and `compare` in one SQLite database.
//!
//! - Where: `$XDG_DATA_HOME/fsbench/results.sqlite`, else `~/.local/share/fsbench/results.sqlite`
//!   ([`default_path`]); `--db` chooses another file.
//! - Safety of what is already there: an existing file is first checked read-only (SQLite
//!   header, `application_id`, `user_version`, `PRAGMA quick_check`). A file that is not an
//!   fsbench database, is corrupt, or was written by a newer fsbench is refused before anything
//!   is written to it.
//! - Durability: WAL journal, one transaction per finished test (per repetition in a
//!   comparison), so a crash, `kill -9` or Ctrl-C loses at most the test in flight and never
//!   leaves the database unreadable. `synchronous = NORMAL` in WAL mode survives a killed
//!   process; a power cut may lose the last transactions, never consistency.
//!
//! [`schema`] has the tables and migrations, [`write`] records runs as they happen, [`read`]
//! loads them back into the result types.

pub mod read;
pub mod schema;
pub mod write;

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

pub use read::{HistoryFilter, RunKind, RunRecord, RunSummary};
pub use write::{Recorder, RunMeta, RunOptions};

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not an SQLite database.
    #[error("{path} is not an SQLite database (left untouched); pass another file with --db")]
    NotSqlite {
        /// The file.
        path: PathBuf,
    },
    /// An SQLite database of some other program.
    #[error("{path} is an SQLite database of another program, not fsbench's results (left untouched); pass another file with --db")]
    Foreign {
        /// The file.
        path: PathBuf,
    },
    /// Corrupt database.
    #[error("{path} is damaged (SQLite quick_check: {detail}); it was left untouched. Move it away, or pass another file with --db")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What quick_check or SQLite said.
        detail: String,
    },
    /// Written by a newer fsbench.
    #[error("{path} has schema version {found}, but this fsbench ({version}) knows up to {known}: it was written by a newer fsbench. Nothing was written; upgrade fsbench or pass another file with --db")]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its user_version.
        found: i64,
        /// The newest this build knows.
        known: i64,
        /// This fsbench's version.
        version: &'static str,
    },
    /// No database yet (for commands that only read).
    #[error("no results database at {path}: `fsbench run` and `fsbench compare` record there (or pass the file with --db)")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// No run with that id.
    #[error("no run {id} in {path}; `fsbench history` lists the run ids")]
    UnknownRun {
        /// The id asked for.
        id: i64,
        /// The database.
        path: PathBuf,
    },
    /// The default location could not be determined.
    #[error("cannot find the data directory (neither XDG_DATA_HOME nor HOME is set); pass --db FILE or --no-store")]
    NoDataDir,
    /// Creating the database's directory failed.
    #[error("cannot create {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Reading the file's header failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A stored JSON column does not parse.
    #[error("run {run}: stored {what} does not parse: {source}")]
    BadJson {
        /// Run id.
        run: i64,
        /// Which column.
        what: &'static str,
        /// Why.
        source: serde_json::Error,
    },
    /// Any other SQLite error.
    #[error("{path}: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Whether the error is about what the user gave (a file, a run id), not a failure of the
    /// system: the command exits with code 2.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            StoreError::NotSqlite { .. }
                | StoreError::Foreign { .. }
                | StoreError::Corrupt { .. }
                | StoreError::Newer { .. }
                | StoreError::Missing { .. }
                | StoreError::UnknownRun { .. }
                | StoreError::NoDataDir
        )
    }
}

/// Result alias of the store.
pub type Result<T> = std::result::Result<T, StoreError>;

/// The default database: `$XDG_DATA_HOME/fsbench/results.sqlite`, falling back to
/// `$HOME/.local/share/fsbench/results.sqlite` (the XDG base directory rule: a relative
/// `XDG_DATA_HOME` is ignored).
pub fn default_path() -> Result<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
        if x.is_absolute() {
            return Ok(x.join("fsbench").join("results.sqlite"));
        }
    }
    match std::env::var_os("HOME").map(PathBuf::from) {
        Some(h) if h.is_absolute() => {
            Ok(h.join(".local").join("share").join("fsbench").join("results.sqlite"))
        }
        _ => Err(StoreError::NoDataDir),
    }
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

impl Store {
    /// Open for recording, creating the file (and its directory) if needed. An existing file is
    /// checked read-only first and refused, untouched, unless it is a healthy fsbench database of
    /// this or an older schema version; older ones are migrated.
    pub fn open(path: &Path) -> Result<Store> {
        let exists = path.exists();
        if exists {
            check_existing(path)?;
        } else if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|source| StoreError::CreateDir { path: dir.to_path_buf(), source })?;
        }
        let conn = Connection::open(path).map_err(|e| sql_err(path, e))?;
        let mut s = Store { conn, path: path.to_path_buf() };
        s.configure()?;
        s.migrate()?;
        Ok(s)
    }

    /// Open an existing database for reading only (history, show, diff, report).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Err(StoreError::Missing { path: path.to_path_buf() });
        }
        let conn = check_existing(path)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Schema version of the open database.
    pub fn version(&self) -> Result<i64> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| self.err(e))
    }

    fn configure(&self) -> Result<()> {
        // First, so that switching to WAL waits for another fsbench process instead of failing.
        self.conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| self.err(e))?;
        // journal_mode returns a row, so it is queried rather than executed.
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            // E.g. on a filesystem without shared memory: the rollback journal is still safe.
            eprintln!("fsbench: note: {} uses journal mode {mode}, not WAL", self.path.display());
        }
        self.conn
            .execute_batch(
                "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
            )
            .map_err(|e| self.err(e))
    }

    fn migrate(&mut self) -> Result<()> {
        let from = self.version()?;
        let latest = schema::latest_version();
        if from > latest {
            // check_existing refused this already; a second process may have upgraded since.
            return Err(newer(&self.path, from));
        }
        for (i, sql) in schema::MIGRATIONS.iter().enumerate().skip(from as usize) {
            let path = self.path.clone();
            // IMMEDIATE takes the write lock before reading the version, so two fsbench processes
            // opening a new database at once migrate it once: the second waits, then finds the
            // step done.
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(|e| sql_err(&path, e))?;
            let now: i64 = tx
                .query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(|e| sql_err(&path, e))?;
            if now > i as i64 {
                continue;
            }
            tx.execute_batch(sql).map_err(|e| sql_err(&path, e))?;
            tx.execute_batch(&format!(
                "PRAGMA user_version = {}; PRAGMA application_id = {};",
                i + 1,
                schema::APPLICATION_ID
            ))
            .map_err(|e| sql_err(&path, e))?;
            tx.commit().map_err(|e| sql_err(&path, e))?;
        }
        Ok(())
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        sql_err(&self.path, e)
    }
}

fn sql_err(path: &Path, source: rusqlite::Error) -> StoreError {
    StoreError::Sqlite { path: path.to_path_buf(), source }
}

fn newer(path: &Path, found: i64) -> StoreError {
    StoreError::Newer {
        path: path.to_path_buf(),
        found,
        known: schema::latest_version(),
        version: env!("CARGO_PKG_VERSION"),
    }
}

/// Check an existing file without writing to it, and return the read-only connection.
///
/// An empty file (0 bytes) is what SQLite itself treats as a new database, so it is accepted.
fn check_existing(path: &Path) -> Result<Connection> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut f =
        std::fs::File::open(path).map_err(|source| StoreError::Io { path: path.into(), source })?;
    let n = f.read(&mut head).map_err(|source| StoreError::Io { path: path.into(), source })?;
    if n > 0 && (n < head.len() || &head != SQLITE_MAGIC) {
        return Err(StoreError::NotSqlite { path: path.into() });
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| sql_err(path, e))?;
    let corrupt = |e: rusqlite::Error| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) =>
        {
            StoreError::Corrupt { path: path.into(), detail: f.to_string() }
        }
        e => sql_err(path, e),
    };
    // One statement, one snapshot: another fsbench process may be creating the schema right now,
    // and three separate reads could see a half-made database.
    let (version, app, tables): (i64, i32, i64) = conn
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version), \
                    (SELECT application_id FROM pragma_application_id), \
                    (SELECT count(*) FROM sqlite_master)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(corrupt)?;
    if app != schema::APPLICATION_ID && (app != 0 || version != 0 || tables != 0) {
        return Err(StoreError::Foreign { path: path.into() });
    }
    if version > schema::latest_version() {
        return Err(newer(path, version));
    }
    let check: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(corrupt)?;
    if check != "ok" {
        return Err(StoreError::Corrupt { path: path.into(), detail: check });
    }
    Ok(conn)
}

#[cfg(test)]
mod tests;
