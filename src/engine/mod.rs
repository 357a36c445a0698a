//! The engine: runs validated tests against a [`Target`] and returns results.
//!
//! - [`runner`]: files, cache preconditions, phases, repetitions.
//! - [`worker`]: one thread's hot loop.
//! - [`ioengine`]: how an operation reaches the kernel (`psync`).
//! - [`buffer`]: aligned buffers and the (incompressible by default) data written.

pub mod buffer;
pub mod fileset;
pub mod hooks;
pub mod ioengine;
pub mod layout;
pub mod runner;
mod target;
pub mod worker;
pub mod workspace;

pub use runner::{run_test, EngineOptions, NoProgress, Progress};
pub use target::{CacheControl, EvictError, PageCacheEvictor, Target};
pub use workspace::Workspace;

#[cfg(test)]
mod tests;
