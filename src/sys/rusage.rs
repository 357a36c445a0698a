//! Per-thread CPU time.
//!
//! The total comes from `CLOCK_THREAD_CPUTIME_ID` (the scheduler's nanosecond runtime). The split
//! into user and system time comes from `getrusage(RUSAGE_THREAD)`, whose figures are sampled at
//! scheduler ticks (4 ms at HZ=250): the total is exact, the split is the tick ratio, as the
//! kernel itself does for `/proc/PID/stat`. A phase shorter than one tick may have no sampled
//! split; its CPU is then counted as system time (I/O work is almost all system time).
//!
//! The same `getrusage` call gives the thread's context switches and page faults
//! ([`RusageCounts`]): fio's `ctx`, `majf` and `minf`, and how often a thread blocked.

/// CPU time consumed by the calling thread, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// User-mode CPU time.
    pub user_nanos: u64,
    /// Kernel-mode CPU time.
    pub sys_nanos: u64,
}

/// What the kernel counted for a thread between two readings besides its CPU time
/// (`getrusage(RUSAGE_THREAD)`'s `ru_nvcsw`, `ru_nivcsw`, `ru_majflt`, `ru_minflt`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RusageCounts {
    /// Times the thread gave up the CPU to wait (for I/O, a lock, a sleep).
    pub voluntary_switches: u64,
    /// Times the scheduler took the CPU from it.
    pub involuntary_switches: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
}

impl RusageCounts {
    /// Every context switch, voluntary or not: fio's `ctx`.
    pub fn switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }

    /// Add another thread's (or pass's) counts.
    pub fn add(&mut self, o: &RusageCounts) {
        self.voluntary_switches += o.voluntary_switches;
        self.involuntary_switches += o.involuntary_switches;
        self.major_faults += o.major_faults;
        self.minor_faults += o.minor_faults;
    }

    /// Nothing counted (or not read: records made before fsbench read them).
    pub fn is_zero(&self) -> bool {
        *self == RusageCounts::default()
    }
}

/// A raw reading, diffed by [`CpuSample::since`] and [`CpuSample::counts_since`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSample {
    total_nanos: u64,
    ru_user_nanos: u64,
    ru_sys_nanos: u64,
    counts: RusageCounts,
}

impl CpuSample {
    /// Read the calling thread's CPU clocks.
    pub fn thread_now() -> CpuSample {
        let total_nanos = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        let total_nanos = total_nanos.tv_sec as u64 * 1_000_000_000 + total_nanos.tv_nsec as u64;
        // SAFETY: getrusage writes into the zeroed struct we own; RUSAGE_THREAD is valid on Linux.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
        let (u, s) = if rc == 0 { (tv(ru.ru_utime), tv(ru.ru_stime)) } else { (0, 0) };
        let n = |v: libc::c_long| u64::try_from(v).unwrap_or(0);
        let counts = match rc {
            0 => RusageCounts {
                voluntary_switches: n(ru.ru_nvcsw),
                involuntary_switches: n(ru.ru_nivcsw),
                major_faults: n(ru.ru_majflt),
                minor_faults: n(ru.ru_minflt),
            },
            _ => RusageCounts::default(),
        };
        CpuSample { total_nanos, ru_user_nanos: u, ru_sys_nanos: s, counts }
    }

    /// Context switches and page faults between `earlier` and `self`.
    pub fn counts_since(self, earlier: CpuSample) -> RusageCounts {
        let (a, b) = (self.counts, earlier.counts);
        RusageCounts {
            voluntary_switches: a.voluntary_switches.saturating_sub(b.voluntary_switches),
            involuntary_switches: a.involuntary_switches.saturating_sub(b.involuntary_switches),
            major_faults: a.major_faults.saturating_sub(b.major_faults),
            minor_faults: a.minor_faults.saturating_sub(b.minor_faults),
        }
    }

    /// CPU consumed between `earlier` and `self`.
    pub fn since(self, earlier: CpuSample) -> CpuTime {
        let total = self.total_nanos.saturating_sub(earlier.total_nanos);
        let u = self.ru_user_nanos.saturating_sub(earlier.ru_user_nanos);
        let s = self.ru_sys_nanos.saturating_sub(earlier.ru_sys_nanos);
        if u + s == 0 {
            return CpuTime { user_nanos: 0, sys_nanos: total };
        }
        let user = (total as u128 * u as u128 / (u + s) as u128) as u64;
        CpuTime { user_nanos: user, sys_nanos: total - user }
    }
}

impl CpuTime {
    /// CPU time consumed so far by the whole process (every thread, ended ones too), from
    /// `getrusage(RUSAGE_SELF)`: the kernel's exact runtime split by its tick ratio, and never
    /// decreasing between two readings. `None` when the call fails.
    pub fn process() -> Option<CpuTime> {
        // SAFETY: getrusage writes into the zeroed struct we own; RUSAGE_SELF is valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
        (rc == 0).then(|| CpuTime { user_nanos: tv(ru.ru_utime), sys_nanos: tv(ru.ru_stime) })
    }

    /// User + system.
    pub fn total_nanos(&self) -> u64 {
        self.user_nanos + self.sys_nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(iters: u64) {
        let mut x = 0u64;
        for i in 0..iters {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    }

    #[test]
    fn cpu_time_is_bounded_by_wall_time_and_is_user_time() {
        let w = std::time::Instant::now();
        let a = CpuSample::thread_now();
        // Spin until the thread has really had 20 ms of CPU, however loaded the host is.
        let mut d = CpuTime::default();
        while d.total_nanos() < 20_000_000 {
            spin(100_000);
            d = CpuSample::thread_now().since(a);
        }
        let wall = w.elapsed().as_nanos() as u64;
        assert!(
            d.total_nanos() <= wall + 1_000_000,
            "one thread cannot use more CPU than wall time: {d:?} vs {wall}"
        );
        assert!(d.user_nanos >= d.sys_nanos, "a busy loop is user time: {d:?}");
    }

    #[test]
    fn process_cpu_grows_with_a_threads_work() {
        let a = CpuTime::process().expect("getrusage");
        let t = CpuSample::thread_now();
        while CpuSample::thread_now().since(t).total_nanos() < 20_000_000 {
            spin(100_000);
        }
        let b = CpuTime::process().expect("getrusage");
        assert!(b.user_nanos >= a.user_nanos && b.sys_nanos >= a.sys_nanos, "{a:?} {b:?}");
        // This thread's 20 ms are the process's too (other test threads only add to it).
        assert!(b.total_nanos() - a.total_nanos() >= 15_000_000, "{a:?} {b:?}");
    }

    #[test]
    fn a_sleep_is_a_voluntary_switch_and_touched_pages_are_minor_faults() {
        let a = CpuSample::thread_now();
        for _ in 0..3 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // 64 fresh pages, each touched once: a fault each (the allocator maps them lazily).
        let mut v = vec![0u8; 64 << 12];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let c = CpuSample::thread_now().counts_since(a);
        assert!(c.voluntary_switches >= 3, "{c:?}");
        assert!(c.switches() >= c.voluntary_switches, "{c:?}");
        assert!(c.minor_faults >= 32, "{c:?}");
    }

    #[test]
    fn sub_tick_work_is_measured() {
        // ~100 µs of work: far below a 4 ms scheduler tick, where getrusage alone reads 0.
        let a = CpuSample::thread_now();
        spin(50_000);
        let d = CpuSample::thread_now().since(a);
        assert!(d.total_nanos() > 0, "{d:?}");
    }
}
