//! How an idle CPU waits: the cpuidle driver, and on a KVM guest whether it polls before halting.
//!
//! A guest whose idle vCPU halts at once (the `haltpoll` cpuidle driver with
//! `guest_halt_poll_ns` 0, as on the Firecracker VM fsbench was developed on) leaves the
//! hypervisor each time it idles, and every wake-up of that vCPU (an interrupt, a task woken from
//! the other CPU) is a host round trip. A thread that sleeps on each request pays one per request.
//! On that VM, 4K O_DIRECT reads at depth 1 ran 2-3.5x faster on a RAM-backed loop device and
//! 1.3-1.4x on a disk-backed one with `guest_halt_poll_ns` 200000, for fio and fsbench alike
//! (bench/results/2026-11-24-uring-vs-fio.md): the figure was mostly the VM's wake-up, not the
//! filesystem's work. fsbench records the setting with each run and says so under the results
//! ([`crate::present::host`]); it does not change it.

use std::path::Path;

/// The idle facts of a machine, read under `sys` (normally `/sys`): the cpuidle driver in use
/// (empty when none is) and the haltpoll driver's `guest_halt_poll_ns` when it is loaded.
pub fn read_under(sys: &Path) -> (String, Option<u64>) {
    let driver = std::fs::read_to_string(sys.join("devices/system/cpu/cpuidle/current_driver"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let poll = std::fs::read_to_string(sys.join("module/haltpoll/parameters/guest_halt_poll_ns"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    (driver, poll)
}

/// [`read_under`] `/sys`.
pub fn read() -> (String, Option<u64>) {
    read_under(Path::new("/sys"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn the_driver_and_the_guest_poll_time_are_read_when_present() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(read_under(t.path()), (String::new(), None), "no cpuidle at all");
        write(t.path(), "devices/system/cpu/cpuidle/current_driver", "intel_idle\n");
        assert_eq!(read_under(t.path()), ("intel_idle".into(), None));
        let g = tempfile::tempdir().unwrap();
        write(g.path(), "devices/system/cpu/cpuidle/current_driver", "haltpoll\n");
        write(g.path(), "module/haltpoll/parameters/guest_halt_poll_ns", "0\n");
        assert_eq!(read_under(g.path()), ("haltpoll".into(), Some(0)));
        write(g.path(), "module/haltpoll/parameters/guest_halt_poll_ns", "200000\n");
        assert_eq!(read_under(g.path()), ("haltpoll".into(), Some(200_000)));
    }
}
