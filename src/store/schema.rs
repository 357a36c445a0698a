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
];

/// The result model written into `tests.model` (see migration 2).
pub const RESULT_MODEL: i64 = 2;

/// The schema version this fsbench writes and understands.
pub fn latest_version() -> i64 {
    MIGRATIONS.len() as i64
}
