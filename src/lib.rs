//! fsbench: a filesystem benchmark and I/O analysis tool for Linux.
//!
//! The crate is layered the way a run flows:
//!
//! - [`workload`]: the workload language (TOML), its validation into a typed job, and the
//!   embedded suites (`unit14`); [`fio`] translates fio job files into it.
//! - [`driver`]: runs a suite on its targets (directories, testbeds): targets × tests ×
//!   repetitions in turn (`run`) or interleaved (`compare`), with hooks, progress and signals.
//! - [`engine`]: prepares test files, establishes the cache precondition, runs the timed phases
//!   on worker threads (the hot loop), and returns one [`result::TestResult`] per test.
//! - [`stats`], [`compare`]: repetition statistics, significance tests and the decision rule;
//!   the head-to-head report. [`explain`]: the observed facts that explain a gap.
//! - [`observe`]: block counters, memory, extents and block tracing around each phase.
//! - [`testbed`]: filesystems on loop-backed images (or named devices), their lifecycle and
//!   cleanup.
//! - [`output`]: every way a result is shown (table, JSON, CSV, bonnie, HTML), all from the same
//!   result type.
//! - [`store`]: the SQLite results database every run and comparison is recorded in.
//! - [`diff`]: two recorded runs compared test by test.
//! - [`report`]: the self-contained HTML report with charts.
//! - [`state`]: records of every resource fsbench creates (in a directory only root can
//!   change), the guard type that owns them, and process identity.
//! - [`integrity`]: faults injected into testbed images and what each filesystem did.
//! - [`profile`]: a command's I/O mapped to files and blocks, and its preload measured.
//! - [`cluster`]: multi-client runs on MPI (common clock, barriers, reduction on rank 0).
//! - [`sys`]: thin wrappers over the operating system.
//! - [`cli`]: the `fsbench` command line.

pub mod analysis;
pub mod cli;
pub mod cluster;
pub mod decision;
pub mod driver;
pub mod engine;
pub mod fio;
pub mod integrity;
pub mod model;
pub mod observe;
pub mod present;
pub mod profile;
pub mod state;
pub mod stats;
pub mod store;
pub mod sys;
pub mod testbed;
pub mod workload;
