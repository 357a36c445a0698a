//! The calling thread's scheduling, as fio sets a job's: its CPU nice value, its I/O priority
//! and the CPUs it may run on; and how many CPUs this machine is configured with.
//!
//! Each call acts on the calling thread only (Linux keeps the nice value, the I/O priority and
//! the affinity per thread), so a worker thread can take its job's settings without touching
//! the rest of the process. The calls are fio 3.33's own: glibc's `nice(N)` (which reads the
//! thread's value and sets it N higher), `ioprio_set(IOPRIO_WHO_PROCESS, 0, value)` and
//! `sched_setaffinity(0, sizeof(cpu_set_t), set)`.

use std::io;

/// `IOPRIO_WHO_PROCESS`: `who` is a thread id (0: the calling thread).
const IOPRIO_WHO_PROCESS: libc::c_int = 1;

/// The largest CPU number a `cpu_set_t` holds, plus one (`CPU_SETSIZE`; fio's `FIO_MAX_CPUS`).
pub const MAX_CPUS: u32 = libc::CPU_SETSIZE as u32;

/// CPUs this machine is configured with (`sysconf(_SC_NPROCESSORS_CONF)`, fio's
/// `cpus_configured()`): a CPU number at or above it does not exist here.
pub fn configured_cpus() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n < 1 {
        1
    } else {
        n.min(i64::from(MAX_CPUS) as libc::c_long) as u32
    }
}

/// Raise the calling thread's nice value by `inc` (lower it when negative), as glibc's
/// `nice(3)`: `getpriority` then `setpriority(PRIO_PROCESS, 0, value + inc)`. Lowering it needs
/// `CAP_SYS_NICE` (EPERM otherwise).
pub fn nice(inc: i32) -> io::Result<()> {
    // nice() may return -1 as a valid value: errno, cleared first, tells an error apart.
    // SAFETY: errno is the calling thread's own; nice has no memory arguments.
    unsafe {
        *libc::__errno_location() = 0;
        if libc::nice(inc) == -1 {
            let e = io::Error::last_os_error();
            if e.raw_os_error().unwrap_or(0) != 0 {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Set the calling thread's I/O priority to `value` (`class << 13 | level`, the kernel's
/// `IOPRIO_PRIO_VALUE`). The realtime class needs `CAP_SYS_ADMIN` (EPERM otherwise).
pub fn set_ioprio(value: u32) -> io::Result<()> {
    // SAFETY: ioprio_set takes three integers.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_int,
            value as libc::c_int,
        )
    };
    if r == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Let the calling thread run only on `cpus` (each below [`MAX_CPUS`]; EINVAL when none of them
/// is online).
pub fn set_affinity(cpus: &[u32]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET is given numbers below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= MAX_CPUS {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The machine has at least one CPU, and this thread can be pinned to CPU 0 and back to all
    /// of them (a thread of its own, so no other test's thread is pinned).
    #[test]
    fn affinity_pins_the_calling_thread_only() {
        let n = configured_cpus();
        assert!(n >= 1);
        std::thread::spawn(move || {
            set_affinity(&[0]).unwrap();
            // SAFETY: a zeroed set filled by the kernel.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::cpu_set_t>();
            assert_eq!(unsafe { libc::sched_getaffinity(0, size, &mut set) }, 0);
            assert_eq!(unsafe { libc::CPU_COUNT(&set) }, 1);
            assert!(unsafe { libc::CPU_ISSET(0, &set) });
        })
        .join()
        .unwrap();
        assert_eq!(set_affinity(&[MAX_CPUS]).unwrap_err().raw_os_error(), Some(libc::EINVAL));
    }

    /// nice(3) raises the thread's value by its argument, on that thread only.
    #[test]
    fn nice_raises_the_calling_threads_value() {
        let before = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let after = std::thread::spawn(|| {
            nice(3).unwrap();
            unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
        })
        .join()
        .unwrap();
        assert_eq!(after, (before + 3).min(19));
        assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }, before, "only the thread");
    }

    /// ioprio_set sets the calling thread's class and level (read back with ioprio_get).
    #[test]
    fn ioprio_is_the_calling_threads() {
        let got = std::thread::spawn(|| {
            set_ioprio(2 << 13 | 5).unwrap();
            unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0) }
        })
        .join()
        .unwrap();
        assert_eq!(got, 2 << 13 | 5);
        // No class 7: EINVAL (in a thread of its own, should the kernel take it).
        let e = std::thread::spawn(|| set_ioprio(7 << 13)).join().unwrap().unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }
}
