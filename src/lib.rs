//! fsbench: a filesystem benchmark and I/O analysis tool for Linux.
//!
//! The crate is layered; code uses only the layers below its own (checked by
//! `tests/layers.rs`; `docs/design/architecture.md` has the picture):
//!
//! ```text
//! sys < state < stats < model < workload, decision < fio < observe < engine < testbed
//!     < driver, integrity, profile < store, cluster < analysis < present < cli
//! ```
//!
//! - [`sys`]: thin wrappers over the operating system. [`state`]: records of every resource
//!   fsbench creates and the guard type that owns them. [`stats`]: statistical methods.
//! - [`model`]: plain data every layer shares: the validated job, the one result type,
//!   observation records, verdicts, the report of a run or compare.
//! - [`workload`]: the workload language (TOML), validation, embedded suites; [`fio`] translates
//!   fio job files into it. [`decision`]: the decision rule and when `--repeat auto` stops.
//! - [`observe`]: block counters, memory, extents and block tracing around each phase.
//! - [`engine`]: test files, the cache precondition, timed phases on worker threads (the hot
//!   loop), I/O engines.
//! - [`testbed`]: filesystems on loop-backed images (or named devices), their lifecycle and
//!   cleanup.
//! - [`driver`]: runs a suite on its targets, in turn (`run`) or interleaved (`compare`).
//!   [`integrity`]: faults injected into testbed images. [`profile`]: a command's I/O mapped to
//!   files and blocks.
//! - [`store`]: the SQLite results database. [`cluster`]: multi-client runs on MPI.
//! - [`analysis`]: the head-to-head report, the facts that explain a gap, `diff`.
//! - [`present`]: every way a result is shown (table, JSON, CSV, bonnie, HTML).
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
