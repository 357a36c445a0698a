//! The database schema and its migrations.
//!
//! The schema version is SQLite's `PRAGMA user_version`: 0 is an empty file, and migration `i`
//! (0-based) takes a database from version `i` to `i + 1`. Each migration runs in its own
//! transaction together with the version bump, so a crash leaves either the old or the new
//! version. Migrations are only ever appended; a released one is never edited.
//!
//! Results keep their full JSON (a repetition's `RepResult`, a test's summary) next to the few
//! figures that queries need as columns, so fields added to the result types later are stored
//! without a migration.

/// `PRAGMA application_id` of an fsbench results database ("FSBr").
pub const APPLICATION_ID: i32 = 0x4653_4272;

/// Migrations in order; the schema version is their count.
pub const MIGRATIONS: &[&str] = &[
    // 1: runs, configurations, tests, repetitions.
    r#"
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    kind             TEXT NOT NULL CHECK (kind IN ('run', 'compare')),
    started_unix_s   INTEGER NOT NULL,
    finished_unix_s  INTEGER,
    -- running | ok | failed | interrupted
    status           TEXT NOT NULL,
    pid              INTEGER NOT NULL,
    fsbench_version  TEXT NOT NULL,
    suite            TEXT NOT NULL,
    scale            TEXT NOT NULL,
    repeat           INTEGER NOT NULL,
    host_json        TEXT NOT NULL,
    command_line     TEXT NOT NULL,
    -- decision rule, fresh filesystem per test, seed, compress percent
    options_json     TEXT NOT NULL
);
CREATE TABLE configs (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    label        TEXT NOT NULL,
    -- testbed environment (mkfs command, effective mount options); NULL for a user's directory
    env_json     TEXT,
    target_json  TEXT NOT NULL,
    UNIQUE (run_id, position)
);
CREATE TABLE tests (
    id             INTEGER PRIMARY KEY,
    config_id      INTEGER NOT NULL REFERENCES configs(id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    test_id        TEXT NOT NULL,
    name           TEXT NOT NULL,
    description    TEXT NOT NULL,
    threads        INTEGER NOT NULL,
    -- ok | failed | interrupted | skipped
    status         TEXT NOT NULL,
    reason         TEXT,
    complete_reps  INTEGER NOT NULL,
    summary_json   TEXT,
    warnings_json  TEXT NOT NULL,
    -- the test definition as run (sizes after scaling)
    workload_json  TEXT,
    UNIQUE (config_id, position)
);
CREATE TABLE reps (
    id              INTEGER PRIMARY KEY,
    test_row_id     INTEGER NOT NULL REFERENCES tests(id) ON DELETE CASCADE,
    rep_index       INTEGER NOT NULL,
    complete        INTEGER NOT NULL,
    mib_per_s       REAL NOT NULL,
    ops_per_s       REAL NOT NULL,
    wall_nanos      INTEGER NOT NULL,
    bytes           INTEGER NOT NULL,
    cpu_user_nanos  INTEGER NOT NULL,
    cpu_sys_nanos   INTEGER NOT NULL,
    -- the whole RepResult: phases, latency histograms, cache checks, device counters
    rep_json        TEXT NOT NULL,
    UNIQUE (test_row_id, rep_index)
);
CREATE INDEX runs_started ON runs(started_unix_s);
"#,
    // 2: the result model of fsbench 0.2: a figure of merit per test (`mib_per_s` or
    // `ops_per_s`), summaries of MiB/s, ops/s and elapsed seconds, typed warnings. Rows of
    // model 1 (fsbench 0.1: a MiB/s-only summary, warnings as text) are read by rebuilding
    // the summary from the stored repetitions.
    r#"
ALTER TABLE tests ADD COLUMN model INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tests ADD COLUMN figure TEXT;
"#,
    // 3: two more kinds of run, `fsbench profile` and `fsbench integrity`, which keep their
    // results in tables of their own keyed by `runs.id`. SQLite cannot change a CHECK in place,
    // so `runs` is rebuilt (the procedure of SQLite's ALTER TABLE page; `migrate` runs it with
    // foreign keys off and checks them before committing).
    r#"
CREATE TABLE runs_new (
    id               INTEGER PRIMARY KEY,
    kind             TEXT NOT NULL CHECK (kind IN ('run', 'compare', 'profile', 'integrity')),
    started_unix_s   INTEGER NOT NULL,
    finished_unix_s  INTEGER,
    status           TEXT NOT NULL,
    pid              INTEGER NOT NULL,
    fsbench_version  TEXT NOT NULL,
    suite            TEXT NOT NULL,
    scale            TEXT NOT NULL,
    repeat           INTEGER NOT NULL,
    host_json        TEXT NOT NULL,
    command_line     TEXT NOT NULL,
    options_json     TEXT NOT NULL
);
INSERT INTO runs_new (id, kind, started_unix_s, finished_unix_s, status, pid, fsbench_version,
                      suite, scale, repeat, host_json, command_line, options_json)
    SELECT id, kind, started_unix_s, finished_unix_s, status, pid, fsbench_version,
           suite, scale, repeat, host_json, command_line, options_json FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_started ON runs(started_unix_s);
"#,
    // 4: `fsbench profile` results: one row per profile run (kind 'profile'), the whole
    // profile as JSON (every file, every request and its attribution) beside the summary
    // figures a query needs.
    r#"
CREATE TABLE profiles (
    run_id                  INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    command                 TEXT NOT NULL,
    exit_code               INTEGER NOT NULL,
    wall_seconds            REAL NOT NULL,
    files_opened            INTEGER NOT NULL,
    device_read_bytes       INTEGER NOT NULL,
    device_read_requests    INTEGER NOT NULL,
    device_write_bytes      INTEGER NOT NULL,
    read_in_flight_seconds  REAL NOT NULL,
    -- share (0..1) of the bytes read that belong to named files or metadata
    attributed_share        REAL NOT NULL,
    -- no event lost
    complete                INTEGER NOT NULL,
    profile_json            TEXT NOT NULL
);
"#,
    // 5: the matrix of `fsbench integrity` (runs.kind = 'integrity'): a row per configuration and
    // a row per (target, fault) case, with the figures a query needs as columns (outcome, the
    // block, the first damaged copy's device and offset) and the whole case as JSON (every
    // copy, each read's findings, the scrub/check output, the tools' location output, the
    // kernel log lines). Cases are committed as they end.
    r#"
CREATE TABLE integrity_configs (
    id               INTEGER PRIMARY KEY,
    run_id           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    label            TEXT NOT NULL,
    seed             INTEGER NOT NULL,
    -- testbed environment of the first case (mkfs command, mount options, zfs properties)
    env_json         TEXT,
    -- why the configuration stopped (NULL: every case ran)
    error            TEXT,
    elapsed_seconds  REAL NOT NULL,
    UNIQUE (run_id, position)
);
CREATE TABLE integrity_cases (
    id             INTEGER PRIMARY KEY,
    config_id      INTEGER NOT NULL REFERENCES integrity_configs(id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    -- block type (data, data-all-copies, parity, directory, inode, indirect) and fault
    target         TEXT NOT NULL,
    fault          TEXT NOT NULL,
    -- silent | detected | repaired | unavailable | crash | unaffected | not_run
    outcome        TEXT NOT NULL,
    block          TEXT NOT NULL,
    -- the first damaged copy: device index in the configuration and byte offset in its image
    device         INTEGER,
    offset_bytes   INTEGER,
    -- the case's one-line evidence, as printed under the terminal matrix
    evidence       TEXT NOT NULL,
    case_json      TEXT NOT NULL,
    UNIQUE (config_id, position)
);
"#,
    // 6: where a run's time went (timed phases, each kind of untimed work, per test), as
    // JSON (`crate::model::time::TimeSplit`); NULL for runs before it was measured.
    r#"
ALTER TABLE runs ADD COLUMN time_json TEXT;
"#,
];

/// The result model written into `tests.model` (see migration 2).
pub const RESULT_MODEL: i64 = 2;

/// The schema version this fsbench writes and understands.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}
