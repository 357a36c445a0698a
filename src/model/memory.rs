//! Memory figures read around a phase (page cache, dirty and writeback, a filesystem daemon's
//! resident set and CPU time). [`crate::observe::memory`] takes the readings.

use serde::{Deserialize, Serialize};

/// A reading of the figures that matter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemSample {
    /// `Cached` (page cache).
    pub cached_bytes: u64,
    /// `Dirty`: waiting to be written back.
    pub dirty_bytes: u64,
    /// `Writeback`: being written back.
    pub writeback_bytes: u64,
    /// Resident set of the filesystem daemon, when there is one.
    pub daemon_rss_bytes: Option<u64>,
    /// CPU time (user + system) the filesystem daemon has used so far: a FUSE filesystem does
    /// its work there, not in the benchmark's threads.
    #[serde(default)]
    pub daemon_cpu_nanos: Option<u64>,
}

/// Before and after a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemDelta {
    /// At the start.
    pub before: MemSample,
    /// At the end.
    pub after: MemSample,
}
