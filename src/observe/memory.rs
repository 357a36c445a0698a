//! Memory around a phase: page cache, dirty and writeback pages, and the resident memory of a
//! filesystem daemon (zfs-fuse keeps its cache in its own address space).

use crate::sys::meminfo::MemInfo;
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
}

/// Before and after a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemDelta {
    /// At the start.
    pub before: MemSample,
    /// At the end.
    pub after: MemSample,
}

impl MemSample {
    /// Read now; `daemon` is the command name of a filesystem daemon (e.g. `zfs-fuse`).
    pub fn take(daemon: Option<&str>) -> MemSample {
        let m = MemInfo::read().unwrap_or_default();
        MemSample {
            cached_bytes: m.get("Cached"),
            dirty_bytes: m.get("Dirty"),
            writeback_bytes: m.get("Writeback"),
            daemon_rss_bytes: daemon.and_then(rss_of),
        }
    }
}

/// Summed VmRSS of processes whose `comm` is `name`.
pub fn rss_of(name: &str) -> Option<u64> {
    let mut total = None;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let p = e.path();
        if !e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(comm) = std::fs::read_to_string(p.join("comm")) else { continue };
        if comm.trim() != name {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(p.join("status")) else { continue };
        let rss = MemInfo::parse(&status).get("VmRSS");
        *total.get_or_insert(0) += rss;
    }
    total
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_own_rss_and_meminfo() {
        let me = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert!(super::rss_of(me.trim()).unwrap() > 0);
        let s = super::MemSample::take(None);
        assert!(s.cached_bytes > 0);
        assert!(super::rss_of("no-such-process-zz").is_none());
    }
}
