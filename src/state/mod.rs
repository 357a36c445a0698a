//! fsbench's state: what it created, written down so that nothing outlives a crash unknown.
//!
//! Used by testbeds (images, loop devices, mounts, pools, the zfs-fuse daemon), by the engine's
//! work directory in `--dir`, by the block tracer (tracing instances) and, next, by command
//! profiling. The parts:
//!
//! The directory checks and link-free file operations it relies on are
//! [`crate::sys::secure`] (why: fsbench runs as root and acts on its records).
//! - [`record`]: the records themselves, one file per process ([`StateDir`], [`Resource`]).
//! - [`guard`]: the one guard type that records, removes and forgets a resource ([`Guard`]).
//! - [`process`]: process identity (pid and start time), so a reused pid is never mistaken for
//!   a live owner.

pub mod guard;
pub mod process;
pub mod record;

pub use guard::{Guard, Recorded, Release};
pub use process::ProcessId;
pub use record::{
    default_state_dir, Entry, ProcessRecord, RecordId, Resource, StateDir, LEGACY_STATE_DIR,
    ROOT_STATE_DIR, STATE_DIR_ENV,
};
