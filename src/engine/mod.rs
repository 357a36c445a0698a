//! The engine: runs validated tests against a [`Target`] and returns results.
//!
//! - [`runner`]: the one path for every test: its files (one shared data file, one per thread,
//!   or a fileset's slots), the cache precondition of each phase, the phases, repetitions,
//!   warnings, results.
//! - [`worker`]: one thread's share of a phase, generic over the I/O engine; data ops are
//!   queued up to `iodepth` deep and reaped, with one clock read per reap.
//! - [`fileset`]: the fileset side of the worker: slots, their paths ([`layout`]), whole-file
//!   and namespace ops, fill phases.
//! - [`ioengine`]: how an operation reaches the kernel: the queueing [`ioengine::IoEngine`]
//!   trait with capability flags, `psync`, `null`.
//! - [`buffer`]: aligned buffers and the (incompressible by default) data written.

pub mod buffer;
pub mod direct;
pub mod fileset;
pub mod hooks;
pub mod ioengine;
pub mod layout;
pub mod runner;
mod target;
pub mod verify;
pub mod worker;
pub mod workspace;

pub use runner::{run_test, EngineOptions, NoProgress, Progress};
pub use target::{CacheControl, EvictError, PageCacheEvictor, Target};
pub use workspace::Workspace;

#[cfg(test)]
mod tests;
