//! Per-thread CPU time, from `getrusage(RUSAGE_THREAD)`.

/// User and system CPU time consumed so far by the calling thread, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTime {
    /// User-mode CPU time.
    pub user_nanos: u64,
    /// Kernel-mode CPU time.
    pub sys_nanos: u64,
}

impl CpuTime {
    /// CPU time of the calling thread.
    pub fn thread_now() -> CpuTime {
        // SAFETY: getrusage writes into the zeroed struct we own; RUSAGE_THREAD is valid on Linux.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        if rc != 0 {
            return CpuTime::default();
        }
        let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
        CpuTime { user_nanos: tv(ru.ru_utime), sys_nanos: tv(ru.ru_stime) }
    }

    /// Time consumed between `earlier` and `self`.
    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_nanos: self.user_nanos.saturating_sub(earlier.user_nanos),
            sys_nanos: self.sys_nanos.saturating_sub(earlier.sys_nanos),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_loop_consumes_user_time() {
        let a = CpuTime::thread_now();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 30 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let d = CpuTime::thread_now().since(a);
        assert!(d.user_nanos + d.sys_nanos >= 10_000_000, "{d:?}");
    }
}
