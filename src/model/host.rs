//! Facts about the machine a run happened on.

use serde::{Deserialize, Serialize};

/// Kernel, CPU and memory of the host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// `uname -r`.
    pub kernel: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// Online CPUs.
    pub cpus: usize,
    /// MemTotal in bytes.
    pub memory_bytes: u64,
    /// A VM whose balloon reports free memory to its host: memory freed a while ago costs a
    /// host fault per page on its next touch ([`crate::sys::firsttouch`]).
    #[serde(default)]
    pub free_page_reporting: bool,
    /// The cpuidle driver in use (`/sys/devices/system/cpu/cpuidle/current_driver`); empty
    /// when none is or it is unknown.
    #[serde(default)]
    pub cpuidle_driver: String,
    /// The `haltpoll` driver's `guest_halt_poll_ns` on a KVM guest: how long an idle vCPU polls
    /// before it halts ([`crate::sys::cpuidle`]). `None` where the driver is not loaded.
    #[serde(default)]
    pub guest_halt_poll_ns: Option<u64>,
}

impl HostInfo {
    /// Read the current host's facts (missing ones are left empty).
    pub fn current() -> HostInfo {
        let uts = rustix::system::uname();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_default();
        let (cpuidle_driver, guest_halt_poll_ns) = crate::sys::cpuidle::read();
        HostInfo {
            hostname: uts.nodename().to_string_lossy().into_owned(),
            kernel: uts.release().to_string_lossy().into_owned(),
            cpu_model,
            cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            memory_bytes: crate::sys::meminfo::MemInfo::read()
                .map(|m| m.get("MemTotal"))
                .unwrap_or(0),
            free_page_reporting: crate::sys::firsttouch::free_page_reporting(),
            cpuidle_driver,
            guest_halt_poll_ns,
        }
    }

    /// Whether an idle vCPU halts at once (`haltpoll` with `guest_halt_poll_ns` 0), so that
    /// waking it is a host round trip: a cost in every request a thread sleeps on.
    pub fn halts_without_polling(&self) -> bool {
        self.cpuidle_driver == "haltpoll" && self.guest_halt_poll_ns == Some(0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_this_host() {
        let h = super::HostInfo::current();
        assert!(!h.kernel.is_empty());
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
    }
}
