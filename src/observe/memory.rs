//! Memory around a phase: page cache, dirty and writeback pages, and the resident memory of a
//! filesystem daemon (zfs-fuse keeps its cache in its own address space).

use crate::model::memory::MemSample;
use crate::sys::meminfo::MemInfo;

impl MemSample {
    /// Read now; `daemon` is the command name of a filesystem daemon (e.g. `zfs-fuse`).
    pub fn take(daemon: Option<&str>) -> MemSample {
        let m = MemInfo::read().unwrap_or_default();
        MemSample {
            cached_bytes: m.get("Cached"),
            dirty_bytes: m.get("Dirty"),
            writeback_bytes: m.get("Writeback"),
            daemon_rss_bytes: daemon.and_then(rss_of),
            daemon_cpu_nanos: daemon.and_then(cpu_of),
        }
    }
}

/// Sum `f` over the /proc directories of processes whose `comm` is `name` (None: no such process).
fn sum_over(name: &str, f: impl Fn(&std::path::Path) -> Option<u64>) -> Option<u64> {
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
        if let Some(v) = f(&p) {
            *total.get_or_insert(0) += v;
        }
    }
    total
}

/// Summed VmRSS of processes whose `comm` is `name`.
pub fn rss_of(name: &str) -> Option<u64> {
    sum_over(name, |p| {
        let status = std::fs::read_to_string(p.join("status")).ok()?;
        Some(MemInfo::parse(&status).get("VmRSS"))
    })
}

/// Summed CPU time (utime + stime, all threads) of processes whose `comm` is `name`, in ns.
pub fn cpu_of(name: &str) -> Option<u64> {
    let tick = rustix::param::clock_ticks_per_second().max(1);
    sum_over(name, |p| {
        let stat = std::fs::read_to_string(p.join("stat")).ok()?;
        // Fields after the ")" that ends comm: state is field 3, utime 14, stime 15.
        let rest = stat.rsplit_once(')')?.1;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
        Some(ticks * 1_000_000_000 / tick)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_own_rss_and_meminfo() {
        let me = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert!(super::rss_of(me.trim()).unwrap() > 0);
        // Burn some CPU so our own process has a non-zero count.
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 30 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(super::cpu_of(me.trim()).is_some());
        let s = crate::model::memory::MemSample::take(None);
        assert!(s.cached_bytes > 0);
        assert!(super::rss_of("no-such-process-zz").is_none());
    }
}
