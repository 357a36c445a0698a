//! Block-layer tracing on request (`--trace`): a tracefs instance of fsbench's own, filtered to
//! the testbed's devices, drained while a phase runs and summarised afterwards.
//!
//! - [`tracefs`]: finding or mounting tracefs; the instance as a guard recorded in the state
//!   file (so `fsbench testbed cleanup` removes what a crash left).
//! - [`format`]: the kernel's event format files (ids and field offsets).
//! - [`event`]: the compact in-memory event and decoding of one binary record.
//! - [`offcpu`]: what the test's threads waited for while off CPU (sched_switch + stacks).
//! - [`pagecache`]: page-cache insertions, reads, faults, dirtied pages and forks (profile).
//! - [`ringbuf`]: the `trace_pipe_raw` page format.
//! - [`reader`]: the thread that drains the per-CPU buffers.
//! - [`summary`]: from events to [`TraceSummary`] (totals, sizes, queue depth, latency, seeks,
//!   offset series).
//! - [`recording`]: a configured instance plus its reader thread, for any decoder.
//! - [`tracer`]: [`Tracer::start`] / [`Tracer::stop`], tying the above together.
//!
//! Usage:
//! ```no_run
//! use fsbench::observe::trace::{TraceError, TraceOptions, Tracer};
//! let tracer = match Tracer::start(&["loop3".to_string()], TraceOptions::default()) {
//!     Ok(t) => Some(t),
//!     Err(TraceError::Unavailable(why)) => {
//!         eprintln!("tracing unavailable: {why}");
//!         None
//!     }
//!     Err(e) => return Err(e),
//! };
//! // ... run the phase ...
//! if let Some(t) = tracer {
//!     let summary = t.stop()?;
//!     println!("{} writes queued", summary.writes.bios_queued);
//! }
//! # Ok::<(), TraceError>(())
//! ```
//! docs/design/tracing.md explains every summary field, its blktrace counterpart and the measured
//! overhead.

pub mod event;
pub mod format;
pub mod offcpu;
pub mod pagecache;
pub mod reader;
pub mod recording;
pub mod ringbuf;
pub mod summary;
pub mod tracefs;
pub mod tracer;

pub use crate::model::trace::TraceSummary;
pub use tracefs::remove_leftover_instance;
pub use tracer::Tracer;

use std::path::PathBuf;
use std::time::Duration;

/// Why tracing failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Tracing cannot work on this machine or as this user; say so once and go on without it.
    #[error("tracing unavailable: {0}")]
    Unavailable(String),
    /// A device to trace is not a block device we can identify.
    #[error("cannot trace device {name:?}: {reason}")]
    Device {
        /// The name given.
        name: String,
        /// Why.
        reason: String,
    },
    /// A tracefs control file or trace buffer failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The instance could not be recorded in (or removed from) the state file.
    #[error("recording the tracing instance in {}: {source}", path.display())]
    State {
        /// State directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The trace buffer held something that does not follow the ring-buffer format.
    #[error("reading the trace buffer: {0}")]
    Parse(String),
    /// The reader thread panicked or was already gone.
    #[error("the trace reader thread failed")]
    ReaderFailed,
}

impl crate::sys::classify::Classify for TraceError {
    /// Tracing fails on the machine (no tracefs, no permission), not on what the user gave.
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// Settings of a trace.
#[derive(Debug, Clone)]
pub struct TraceOptions {
    /// Kernel ring buffer per CPU, KiB. Large enough to absorb bursts between two polls; the
    /// instance holds it only while tracing.
    pub buffer_kib_per_cpu: u64,
    /// How long the reader sleeps when the buffers were empty.
    pub poll_interval: Duration,
    /// Most events kept in memory (24 bytes each); more are counted in
    /// [`TraceSummary::events_over_limit`].
    pub max_events: usize,
    /// Shortest queue-depth sample interval.
    pub depth_interval: Duration,
    /// Most points in the queue-depth and offset series.
    pub max_points: usize,
    /// State directory in which the instance is recorded.
    pub state_dir: PathBuf,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            buffer_kib_per_cpu: 64 * 1024,
            poll_interval: Duration::from_millis(20),
            max_events: 16 << 20,
            depth_interval: Duration::from_millis(10),
            max_points: 5000,
            state_dir: crate::state::default_state_dir(),
        }
    }
}
