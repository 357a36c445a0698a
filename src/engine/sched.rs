//! A worker thread takes its phase's scheduling ([`ThreadSched`]: fio's `nice`,
//! `prio`/`prioclass`, `cpus_allowed`) on itself, once, when it starts and before the start
//! barrier, so neither the timed phase nor the hot loop sees a call. The order is fio's: the
//! CPU affinity first, then the I/O priority, then the nice value. A setting the system
//! refuses (EPERM without the privilege, EINVAL) fails the test before its first op, naming
//! the setting and what to change.

use crate::model::failure::EngineError;
use crate::model::sched::{cpu_list_text, ThreadSched};
use crate::sys::sched;

/// Set `s` on the calling thread, the `thread`-th of its phase (or role): the CPUs it may run
/// on, its I/O priority and its nice value. Nothing set, no call.
pub(super) fn apply(s: &ThreadSched, thread: u32) -> Result<(), EngineError> {
    if let Some(a) = &s.cpus {
        let cpus = a.of_thread(thread);
        sched::set_affinity(cpus).map_err(|e| {
            refused(format!("cpus = \"{}\" (sched_setaffinity)", cpu_list_text(cpus)), &e)
        })?;
    }
    if let Some(p) = s.ioprio {
        sched::set_ioprio(p.value())
            .map_err(|e| refused(format!("ioprio = \"{}\" (ioprio_set)", p.text()), &e))?;
    }
    if let Some(n) = s.nice {
        sched::nice(n).map_err(|e| refused(format!("nice = {n}"), &e))?;
    }
    Ok(())
}

/// Why `what` could not be set on a worker thread: the system refusing it (no privilege, a
/// value it does not take) is the test's to change; anything else failed while setting up.
#[cold]
fn refused(what: String, e: &std::io::Error) -> EngineError {
    match e.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => EngineError::unsupported(format!(
            "setting {what} on a worker thread: {e}: a negative nice needs CAP_SYS_NICE and the realtime I/O class CAP_SYS_ADMIN (run as root, or change the test)"
        )),
        Some(libc::EINVAL) => EngineError::unsupported(format!(
            "setting {what} on a worker thread: {e}: the system does not take it (an offline CPU, or an I/O priority this kernel refuses)"
        )),
        _ => EngineError::setup(format!("setting {what} on a worker thread"), e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sched::{CpuAffinity, IoClass, IoPrio};

    /// Each setting lands on the calling thread: its affinity (split: one CPU by its index),
    /// I/O priority and nice value, read back from the kernel.
    #[test]
    fn settings_land_on_the_calling_thread() {
        let s = ThreadSched {
            nice: Some(2),
            ioprio: Some(IoPrio { class: IoClass::BestEffort, level: 6 }),
            cpus: Some(CpuAffinity { cpus: vec![0], split: true }),
        };
        let (nice, ioprio, count) = std::thread::spawn(move || {
            apply(&s, 1).unwrap();
            // SAFETY: read-only queries of the calling thread; a zeroed set filled by the kernel.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
                (
                    libc::getpriority(libc::PRIO_PROCESS, 0),
                    libc::syscall(libc::SYS_ioprio_get, 1, 0),
                    libc::CPU_COUNT(&set),
                )
            }
        })
        .join()
        .unwrap();
        let base = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        assert_eq!(nice, (base + 2).min(19));
        assert_eq!(ioprio, 2 << 13 | 6);
        assert_eq!(count, 1);
    }

    /// A setting the system refuses for want of a privilege (EPERM: a negative nice without
    /// CAP_SYS_NICE, the realtime class without CAP_SYS_ADMIN) is the test's to change, named
    /// with what to do; another errno is a set-up failure. (fsbench's tests run as root, which
    /// may do both, so the errno is given here.)
    #[test]
    fn a_refused_setting_is_a_typed_error() {
        let e = refused("nice = -5".into(), &std::io::Error::from_raw_os_error(libc::EPERM));
        assert!(matches!(e, EngineError::Unsupported { .. }), "{e:?}");
        assert!(
            e.to_string().contains("nice = -5") && e.to_string().contains("CAP_SYS_NICE"),
            "{e}"
        );
        let e = refused("nice = 1".into(), &std::io::Error::from_raw_os_error(libc::ESRCH));
        assert!(matches!(e, EngineError::Setup { errno: Some(libc::ESRCH), .. }), "{e:?}");
    }

    /// An offline or absent CPU is EINVAL from the kernel: a typed error naming the setting.
    #[test]
    fn an_absent_cpu_is_a_typed_error() {
        let s = ThreadSched {
            cpus: Some(CpuAffinity { cpus: vec![sched::MAX_CPUS - 1], split: false }),
            ..Default::default()
        };
        let e = std::thread::spawn(move || apply(&s, 0)).join().unwrap().unwrap_err();
        assert!(matches!(e, EngineError::Unsupported { .. }), "{e:?}");
        assert!(e.to_string().contains("cpus = \"1023\""), "{e}");
    }
}
