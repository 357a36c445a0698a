//! Thin, safe wrappers over the operating system: external commands, signals, memory facts,
//! page-cache control, directories only their owner can change and files made in them without
//! following links ([`secure`]), the CPUs' idle policy, pseudo-filesystem mounts, per-thread
//! CPU accounting and scheduling ([`sched`]: nice, I/O priority, CPU affinity); and how every
//! error says whether it is the user's to fix ([`classify`]).

pub mod cache;
pub mod classify;
pub mod cmd;
pub mod cpuidle;
pub mod firsttouch;
pub mod meminfo;
pub mod mountinfo;
pub mod outfile;
pub mod parkfd;
pub mod pseudofs;
pub mod regular;
pub mod rusage;
pub mod sched;
pub mod secure;
pub mod signals;

/// Whether the process runs with root privileges (effective uid 0).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}
