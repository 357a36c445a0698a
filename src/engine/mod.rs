//! The engine: runs validated tests against a [`Target`] and returns results.
//!
//! - [`runner`]: the one path for every test: its files (one shared data file, one per thread,
//!   or a fileset's slots), the cache precondition of each phase, the phases, repetitions,
//!   warnings, results.
//! - [`worker`]: one thread's share of a phase: the one worker loop, generic over the I/O
//!   engine and the op source. A data file's ops (`FileOps`) are queued up to `iodepth` deep
//!   and reaped, with one clock read per reap.
//! - [`fileset`]: the other op source (`SlotOps`): a fileset's slots, their paths ([`layout`]),
//!   whole-file and namespace ops done synchronously through the engine, fill phases.
//! - [`ioengine`]: how an operation reaches the kernel: the queueing [`ioengine::IoEngine`]
//!   trait with capability flags, `psync`, `null`.
//! - [`roles`]: threads with a file and pattern of their own beside each timed phase.
//! - [`buffer`]: aligned buffers and the (incompressible by default) data written.
//! - [`hooks`]: what the engine calls before and after each phase (the suite driver passes
//!   them; a multi-client run's barrier and clock live there).

pub mod buffer;
pub mod direct;
pub mod fileset;
pub mod hooks;
pub mod ioengine;
pub mod layout;
pub mod roles;
pub mod runner;
mod target;
pub mod verify;
pub mod worker;
pub mod workspace;

pub use hooks::{Hooks, NoHooks, PhaseOutcome, PhasePoint, Share};
pub use runner::{run_test, EngineOptions, NoProgress, Progress};
pub use target::{CacheControl, EvictError, PageCacheEvictor, Target};
pub use workspace::Workspace;

#[cfg(test)]
mod tests;
