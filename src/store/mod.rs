//! The results store: every `run` and `compare` in one SQLite database.
//!
//! - Where: `$XDG_DATA_HOME/fsbench/results.sqlite`, else `~/.local/share/fsbench/results.sqlite`
//!   ([`default_path`]); `--db` chooses another file.
//! - Safety of what is already there: an existing file is first checked read-only (SQLite
//!   header, `application_id`, `user_version`, and before the first write `PRAGMA
//!   integrity_check`, which also checks indexes; `quick_check` for reading). A file that is not an
//!   fsbench database, is corrupt, or was written by a newer fsbench is refused before anything
//!   is written to it.
//! - Durability: WAL journal, one transaction per finished test (per repetition in a
//!   comparison), so a crash, `kill -9` or Ctrl-C loses at most the test in flight and never
//!   leaves the database unreadable. `synchronous = NORMAL` in WAL mode survives a killed
//!   process; a power cut may lose the last transactions, never consistency.
//!
//! [`schema`] has the tables and migrations, [`write`] records runs as they happen, [`read`]
//! loads them back into the result types.

pub mod integrity;
pub mod profile;
pub mod read;
pub mod schema;
pub mod write;

use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

pub use integrity::IntegrityRecorder;
pub use read::{HistoryFilter, RunRecord, RunSummary};
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
    #[error("{path} is damaged (SQLite {detail}); it was left untouched. Move it away, or pass another file with --db")]
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
    #[error("no results database at {path}: `fsbench run`, `compare`, `profile` and `integrity` record there (or pass the file with --db)")]
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
    /// The database cannot be written (immutable, read-only mount, no permission).
    #[error("--db {path} cannot be written ({reason}); nothing was recorded. Pass another file with --db, or --no-store")]
    NotWritable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The database path is not a regular file (a device, FIFO, directory, ...).
    #[error("--db {path} is {what}, not a regular file; nothing was created or written. Pass a file path with --db (a new file is created)")]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        what: &'static str,
    },
    /// The filesystem holding the database is full.
    #[error("the disk holding {path} is full (SQLite: {source}); free space there or pass another file with --db")]
    Full {
        /// The file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// Too little free space to record safely (checked before opening: SQLite's shared-memory
    /// index is a memory-mapped file, and growing it on a full disk kills the process with
    /// SIGBUS instead of returning an error).
    #[error("the disk holding {path} is full ({available_kib} KiB free, fsbench needs at least {needed_kib} KiB to record); free space there, pass another file with --db, or use --no-store")]
    NoSpace {
        /// The file.
        path: PathBuf,
        /// Free KiB.
        available_kib: u64,
        /// KiB required.
        needed_kib: u64,
    },
    /// Another process held the write lock for too long.
    #[error("{path} stayed locked by another process for {seconds} s (SQLite: {source})")]
    Busy {
        /// The file.
        path: PathBuf,
        /// How long fsbench waited.
        seconds: u64,
        /// SQLite's error.
        source: rusqlite::Error,
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

impl crate::sys::classify::Classify for StoreError {
    /// Whether the error is about what the user gave (a file, a run id), not a failure of the
    /// system: the command exits with code 2.
    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            StoreError::NotSqlite { .. }
                | StoreError::Foreign { .. }
                | StoreError::Corrupt { .. }
                | StoreError::Newer { .. }
                | StoreError::Missing { .. }
                | StoreError::UnknownRun { .. }
                | StoreError::NoDataDir
                | StoreError::NotRegular { .. }
                | StoreError::NotWritable { .. }
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
        check_regular(path)?;
        // Processes opening a new database at once race for it: while one switches it to WAL or
        // migrates it, another's check or journal-mode switch can get `SQLITE_BUSY` without
        // SQLite's busy handler being asked (a read that must become a write). Every step is
        // idempotent, so the whole open is retried, as a write transaction is.
        let (store, mode) = patiently(path, || Store::open_once(path))?;
        if let Some(mode) = mode {
            // E.g. on a filesystem without shared memory: the rollback journal is still safe.
            // Said once, after the open succeeded (not at each retry).
            eprintln!("fsbench: note: {} uses journal mode {mode}, not WAL", path.display());
        }
        Ok(store)
    }

    /// One try at [`Store::open`]: the store, and its journal mode if that is not WAL.
    fn open_once(path: &Path) -> Result<(Store, Option<String>)> {
        let exists = path.exists();
        if exists {
            check_space(path)?;
            check_existing(path, true)?;
        }
        make_safely(path)?;
        check_writable(path)?;
        check_space(path)?;
        let flags = OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(path, e))?;
        let mut s = Store { conn, path: path.to_path_buf() };
        let mode = s.configure()?;
        s.migrate()?;
        Ok((s, mode))
    }

    /// Open an existing database for reading only (history, show, diff, report).
    pub fn open_read_only(path: &Path) -> Result<Store> {
        check_regular(path)?;
        if !path.exists() {
            return Err(StoreError::Missing { path: path.to_path_buf() });
        }
        // Busy while another process creates or migrates it: waited for, as a write is.
        let conn = patiently(path, || check_existing(path, false))?;
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

    /// Busy timeout, WAL, synchronous and foreign keys; the journal mode if WAL was refused.
    fn configure(&self) -> Result<Option<String>> {
        // First, so that switching to WAL waits for another fsbench process instead of failing.
        self.conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| self.err(e))?;
        // journal_mode returns a row, so it is queried rather than executed.
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        self.conn
            .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(|e| self.err(e))?;
        Ok((!mode.eq_ignore_ascii_case("wal")).then_some(mode))
    }

    fn migrate(&mut self) -> Result<()> {
        let from = self.version()?;
        let latest = schema::latest_version();
        if from > latest {
            // check_existing refused this already; a second process may have upgraded since.
            return Err(newer(&self.path, from));
        }
        if from == latest {
            return Ok(());
        }
        // A migration may rebuild a table that others reference (SQLite's ALTER TABLE page:
        // foreign keys off, which cannot change inside a transaction; `foreign_key_check`
        // before each commit). Dropping the old table would otherwise cascade its deletes.
        self.conn.execute_batch("PRAGMA foreign_keys = OFF;").map_err(|e| self.err(e))?;
        let done = self.migrate_steps(from);
        let on = self.conn.execute_batch("PRAGMA foreign_keys = ON;").map_err(|e| self.err(e));
        done.and(on)
    }

    fn migrate_steps(&mut self, from: i64) -> Result<()> {
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
            let dangling: i64 = tx
                .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0))
                .map_err(|e| sql_err(&path, e))?;
            if dangling > 0 {
                return Err(sql_err(
                    &path,
                    rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
                        Some(format!("migration {} left {dangling} dangling references", i + 1)),
                    ),
                ));
            }
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
    match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DiskFull) => {
            StoreError::Full { path: path.to_path_buf(), source }
        }
        _ => StoreError::Sqlite { path: path.to_path_buf(), source },
    }
}

/// How long an open or a write waits for other fsbench processes' transactions in total.
const WRITE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(120);

/// Run `f` in a write transaction and commit it.
///
/// `BEGIN IMMEDIATE` takes the write lock at the start, where SQLite's busy handler waits for
/// it (a deferred transaction that reads first and then writes gets `SQLITE_BUSY` at once, with
/// no waiting: how concurrent runs on one database used to lose results). If the lock is still
/// held after the busy timeout, the whole transaction is retried ([`patiently`]). A full disk is
/// reported as such ([`StoreError::Full`]).
pub(crate) fn write_tx<T>(
    conn: &mut Connection,
    path: &Path,
    mut f: impl FnMut(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
) -> Result<T> {
    patiently(path, || {
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sql_err(path, e))?;
        let v = f(&tx).map_err(|e| sql_err(path, e))?;
        tx.commit().map_err(|e| sql_err(path, e))?;
        Ok(v)
    })
}

/// Run `attempt` until it ends without `SQLITE_BUSY`, with a growing, jittered pause, for up to
/// [`WRITE_PATIENCE`]; then fail with [`StoreError::Busy`]. `attempt` must be safe to repeat.
fn patiently<T>(path: &Path, mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(20);
    loop {
        match attempt() {
            Err(StoreError::Sqlite { source, .. }) if is_busy(&source) => {
                if start.elapsed() >= WRITE_PATIENCE {
                    return Err(StoreError::Busy {
                        path: path.to_path_buf(),
                        seconds: start.elapsed().as_secs(),
                        source,
                    });
                }
                std::thread::sleep(pause + std::time::Duration::from_millis(fastrand::u64(..20)));
                pause = (pause * 2).min(std::time::Duration::from_millis(500));
            }
            r => return r,
        }
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Free space needed beside the database before recording (a run's rows, the WAL and its index).
const MIN_FREE_BYTES: u64 = 4 << 20;

fn check_space(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(st) = rustix::fs::statvfs(dir) else {
        return Ok(());
    };
    let available = st.f_bavail.saturating_mul(st.f_frsize);
    if available < MIN_FREE_BYTES {
        return Err(StoreError::NoSpace {
            path: path.to_path_buf(),
            available_kib: available >> 10,
            needed_kib: MIN_FREE_BYTES >> 10,
        });
    }
    Ok(())
}

/// Refuse a database path that exists and is not a regular file (following a symlink to it),
/// before anything is opened or created: SQLite would make `PATH-journal`/`-wal` beside a device
/// (`/dev/null-journal`), block on a FIFO, or fail late on a directory.
/// The database file and its directory, made as every output at a user's path is
/// ([`crate::sys::outfile::ensure_regular`]): no link followed that another user owns, the file
/// itself never a link (a dangling one would have SQLite create its target).
fn make_safely(path: &Path) -> Result<()> {
    crate::sys::outfile::ensure_regular(path, 0o644).map_err(|source| {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            StoreError::NotRegular { path: path.into(), what: "a symbolic link" }
        } else {
            let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            StoreError::CreateDir { path: dir, source }
        }
    })
}

/// Refuse, before anything runs, a database that cannot be written: `chattr +i`, a read-only
/// mount, no permission (SQLite would open it and fail at the first write, after the run).
fn check_writable(path: &Path) -> Result<()> {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(|e| StoreError::NotWritable {
        path: path.into(),
        reason: match e {
            rustix::io::Errno::PERM => "the file is immutable or append-only (lsattr)".into(),
            rustix::io::Errno::ROFS => "it is on a read-only filesystem".into(),
            e => e.to_string(),
        },
    })
}

fn check_regular(path: &Path) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let md = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(StoreError::Io { path: path.into(), source }),
    };
    let ft = md.file_type();
    let what = if ft.is_file() {
        return Ok(());
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(StoreError::NotRegular { path: path.into(), what })
}

fn newer(path: &Path, found: i64) -> StoreError {
    StoreError::Newer {
        path: path.to_path_buf(),
        found,
        known: schema::latest_version(),
        version: env!("CARGO_PKG_VERSION"),
    }
}

/// Open read-only. Reading a WAL database needs its `-shm` file, which a user who may not write
/// beside the database (a database of root's, a read-only mount) cannot create; then the file
/// is opened as immutable (no locking, no WAL), which reads everything a finished fsbench left:
/// its last connection checkpoints the WAL into the database when it closes. If a WAL file
/// with content is there (a writer is running, or crashed), that is said.
fn open_for_reading(path: &Path) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_err(path, e))?;
    match conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0)) {
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
            ) =>
        {
            let mut wal = path.as_os_str().to_owned();
            wal.push("-wal");
            if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                eprintln!(
                    "fsbench: note: {} is read-only to this user and has a write-ahead log; runs still being written (or left by a crash) may be missing",
                    path.display()
                );
            }
            let uri = format!("file:{}?immutable=1", uri_escape(path));
            Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
                .map_err(|e| sql_err(path, e))
        }
        _ => Ok(conn),
    }
}

/// Percent-encode what a SQLite URI path cannot hold literally.
fn uri_escape(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Check an existing file without writing to it, and return the read-only connection.
///
/// An empty file (0 bytes) is what SQLite itself treats as a new database, so it is accepted.
///
/// `full` (before the first write to the file): SQLite's `integrity_check`, which also finds
/// index entries missing or out of order (`quick_check` does not look at indexes); otherwise
/// `quick_check`.
fn check_existing(path: &Path, full: bool) -> Result<Connection> {
    use std::io::Read;
    let mut head = [0u8; 16];
    let mut f =
        std::fs::File::open(path).map_err(|source| StoreError::Io { path: path.into(), source })?;
    let n = f.read(&mut head).map_err(|source| StoreError::Io { path: path.into(), source })?;
    if n > 0 && (n < head.len() || &head != SQLITE_MAGIC) {
        return Err(StoreError::NotSqlite { path: path.into() });
    }
    let conn = open_for_reading(path)?;
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
    let pragma = if full { "integrity_check" } else { "quick_check" };
    if let Some(detail) = damage(&conn, pragma).map_err(corrupt)? {
        return Err(StoreError::Corrupt { path: path.into(), detail });
    }
    Ok(conn)
}

/// What `PRAGMA integrity_check` or `quick_check` found wrong (its first lines), or `None`.
fn damage(conn: &Connection, pragma: &str) -> rusqlite::Result<Option<String>> {
    let mut st = conn.prepare(&format!("PRAGMA {pragma}(10)"))?;
    let lines: Vec<String> =
        st.query_map([], |r| r.get::<_, String>(0))?.collect::<rusqlite::Result<_>>()?;
    Ok((lines != ["ok"]).then(|| format!("{pragma}: {}", lines.join("; "))))
}

impl Store {
    /// After a stored row failed to parse: the database's own damage if `integrity_check`
    /// finds some (said as [`StoreError::Corrupt`]), else `e` as it was.
    pub(crate) fn damaged_or(&self, e: StoreError) -> StoreError {
        if !matches!(e, StoreError::BadJson { .. }) {
            return e;
        }
        match damage(&self.conn, "integrity_check") {
            Ok(Some(detail)) => StoreError::Corrupt { path: self.path.clone(), detail },
            _ => e,
        }
    }
}

#[cfg(test)]
mod tests;
