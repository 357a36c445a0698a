//! The engine: runs validated tests against a [`Target`] and returns results.
//!
//! - [`runner`]: the one path for every test: its repetitions, each on new files, the test's
//!   status.
//! - [`files`]: a test's files behind one trait: a data test's one shared file or one per
//!   thread, or a fileset's slots (make, set up, the workers' shares, residency, remove).
//! - [`keep`]: a test that only reads its files lays them out once per target and reuses them.
//! - [`rep`]: one repetition: the set-up, then each phase between the driver's hooks; the
//!   repetition's figures.
//! - [`phase`]: one phase's workers, monomorphised for the test's engine, released together;
//!   progress and the stonewall.
//! - [`cache`]: each phase's cache precondition, made and verified; [`probe`]: what is
//!   observed around a phase (block counters, memory, the block trace); [`min_time`]:
//!   `--min-time`'s passes; [`curve`]: a phase again at fixed fractions of its closed-loop
//!   rate (`--curve`); [`results`]: what the workers measured, as results.
//! - [`worker`]: one thread's share of a phase: the one worker loop, generic over the I/O
//!   engine and the op source. A data file's ops (`FileOps`) are queued up to `iodepth` deep
//!   and reaped, with one clock read per reap.
//! - [`fileset`]: the other op source (`SlotOps`): a fileset's slots, their paths ([`layout`]),
//!   whole-file and namespace ops done synchronously through the engine (one function each),
//!   fill phases.
//! - [`ioengine`]: how an operation reaches the kernel: the queueing [`ioengine::IoEngine`]
//!   trait, one file per engine (`psync`, `null`, `mmap`, `io_uring`), and the dispatch from a
//!   test's engine to its code.
//! - [`roles`]: threads with a file and pattern of their own beside each timed phase.
//! - [`sched`]: a worker thread's nice value, I/O priority and CPUs, set on itself before the
//!   start barrier.
//! - [`buffer`]: aligned buffers and the (incompressible by default) data written.
//! - [`hooks`]: what the engine calls before and after each phase (the suite driver passes
//!   them; a multi-client run's barrier and clock live there).
//!
//! Every failure is an [`EngineError`] (set-up, an op's I/O error, no space, corrupt data, a
//! hook), carried in the test's status; it says whether it was bad input.

pub mod buffer;
pub mod cache;
pub mod curve;
pub mod direct;
pub mod files;
pub mod fileset;
pub mod flow;
pub mod hooks;
pub mod ioengine;
pub mod keep;
pub mod layout;
pub mod min_time;
pub mod oplog;
pub mod pace;
pub mod phase;
pub mod probe;
pub mod random_map;
pub mod rep;
pub mod results;
pub mod roles;
pub mod runner;
pub mod sched;
pub mod series;
pub mod skew;
pub mod steady;
pub mod submit;
mod target;
pub mod verify;
pub mod worker;
pub mod workspace;

pub use crate::model::failure::EngineError;
pub use hooks::{Hooks, NoHooks, PhaseOutcome, PhasePoint, Share};
pub use keep::LayoutKeep;
pub use runner::{run_test, EngineOptions, NoProgress, Progress};
pub use target::{Anchor, CacheControl, EvictError, PageCacheEvictor, Scope, Target, FILES_ONLY};
pub use workspace::Workspace;

#[cfg(test)]
mod seq_tests;
#[cfg(test)]
mod tests;
