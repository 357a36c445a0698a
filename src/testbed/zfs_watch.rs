//! A watchdog for fsbench's zfs-fuse operations.
//!
//! zfs-fuse can deadlock under concurrent use: processes then sleep in `fuse_get_req` or wait
//! on the daemon's socket forever, and so would fsbench, its cleanup included. So every
//! `zpool`/`zfs`/`zdb` command fsbench runs has a time limit ([`zcmd`]; killed after it), and a
//! file operation on a pool fsbench made can be watched ([`Watch`]). When either runs over,
//! the FUSE connection of **that pool's mount only** is aborted
//! (`/sys/fs/fuse/connections/N/abort`, N the minor of the mount's anonymous device in
//! `/proc/self/mountinfo`; fusectl is mounted there for the abort if it is not already):
//! every request waiting on it fails with ENOTCONN, the stuck operation returns, the error
//! says what happened, and the teardown still runs (destroying a pool whose connection was
//! aborted works: the daemon drops the dead mount). Only pools of
//! this process (`fsbench_PID_N`) are ever aborted; other users' pools and mounts are left alone.
//!
//! The limit is [`limit`]: `FSBENCH_ZFS_TIMEOUT_S` seconds, default 300 — far beyond what a
//! healthy command takes on a loaded machine (seconds), so it only ever ends a hang.

use crate::sys::cmd::{Cmd, CmdError, CmdOutput};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// Environment variable that sets [`limit`] (seconds).
pub const TIMEOUT_ENV: &str = "FSBENCH_ZFS_TIMEOUT_S";
const DEFAULT_LIMIT: Duration = Duration::from_secs(300);
const FUSECTL: &str = "/sys/fs/fuse/connections";

/// How long a zfs command or a watched file operation may take.
pub fn limit() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0 && s.is_finite())
        .map(Duration::from_secs_f64)
        .unwrap_or(DEFAULT_LIMIT)
}

/// A `zpool`, `zfs` or `zdb` command with the watchdog's time limit.
pub fn zcmd(program: &str) -> Cmd {
    Cmd::new(program).hint("install the Debian package zfs-fuse").timeout(limit())
}

/// Whether `pool` is one this process made (`fsbench_PID_N`).
pub fn own_pool(pool: &str) -> bool {
    pool.strip_prefix(&format!("{}{}_", super::zfs::POOL_PREFIX, std::process::id()))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The FUSE connections (mount point, connection number) of `pool`'s mounts (the pool's
/// dataset and its children) in a mountinfo text.
pub fn connections(mountinfo: &str, pool: &str) -> Vec<(PathBuf, u32)> {
    crate::sys::mountinfo::parse(mountinfo)
        .into_iter()
        .filter(|m| m.fstype.starts_with("fuse"))
        .filter(|m| m.source == pool || m.source.starts_with(&format!("{pool}/")))
        .filter_map(|m| {
            // An anonymous device, major 0: the connection's directory is named by the minor.
            let ("0", minor) = m.dev.split_once(':')? else { return None };
            Some((m.mountpoint, minor.parse().ok()?))
        })
        .collect()
}

/// Abort the FUSE connections of pool `pool`, if this process made it. Returns what was done,
/// in words (for the error message).
pub fn abort_pool(pool: &str) -> String {
    if !own_pool(pool) {
        return format!("pool {pool} is not this process's: its FUSE connection was left alone");
    }
    let mi = match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(m) => m,
        Err(e) => return format!("cannot read mountinfo to abort pool {pool}'s mount: {e}"),
    };
    let conns = connections(&mi, pool);
    if conns.is_empty() {
        return format!("pool {pool} has no FUSE mount to abort");
    }
    // A fresh machine may not have fusectl mounted: mount it for the abort, and unmount it after.
    let _fusectl = match crate::sys::pseudofs::Scoped::ensure("fusectl", FUSECTL) {
        Ok(m) => m,
        Err(e) => {
            return format!(
                "could not abort pool {pool}'s FUSE mount: fusectl is not mounted at {FUSECTL} \
                 and mounting it failed: {e}"
            )
        }
    };
    let mut done = Vec::new();
    let mut remounts = Vec::new();
    for (mnt, n) in conns {
        let ctl = PathBuf::from(FUSECTL).join(n.to_string()).join("abort");
        let mut wrote = std::fs::write(&ctl, b"1");
        // Another process that had mounted fusectl for its own abort may have unmounted it
        // meanwhile: mount it again (for as long as this abort) and retry.
        for _ in 0..2 {
            match &wrote {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if let Ok(g) = crate::sys::pseudofs::Scoped::ensure("fusectl", FUSECTL) {
                        remounts.push(g);
                    }
                    wrote = std::fs::write(&ctl, b"1");
                }
                _ => break,
            }
        }
        match wrote {
            Ok(()) => done.push(format!(
                "aborted FUSE connection {n} of pool {pool} ({}: now fails with ENOTCONN)",
                mnt.display()
            )),
            Err(e) => done.push(format!("could not abort {}: {e}", ctl.display())),
        }
    }
    done.join("; ")
}

/// [`Cmd::output`] of a command of pool `pool` (or of no pool: `None`) under the time limit;
/// if it runs over, abort the pool's FUSE connection and say so in the error.
pub fn output(cmd: Cmd, pool: Option<&str>) -> Result<CmdOutput, CmdError> {
    match cmd.output() {
        Err(CmdError::TimedOut { cmdline, seconds, stderr, .. }) => {
            let note = match pool {
                Some(p) => format!("zfs-fuse is not answering (deadlocked?); {}", abort_pool(p)),
                None => "zfs-fuse is not answering (deadlocked?)".into(),
            };
            Err(CmdError::TimedOut { cmdline, seconds, stderr, note })
        }
        other => other,
    }
}

/// [`output`], requiring success: stdout, or the failure with its stderr.
pub fn run(cmd: Cmd, pool: Option<&str>) -> Result<String, CmdError> {
    let o = output(cmd, pool)?;
    if o.success() {
        Ok(o.stdout)
    } else {
        Err(CmdError::Failed { cmdline: o.cmdline, status: o.status, stderr: o.stderr })
    }
}

/// A watched stretch of file operations on a pool's mount: if it is still going after the
/// limit, the pool's FUSE connection is aborted, which ends every operation waiting on it with
/// ENOTCONN. Dropping the watch (the operations returned) disarms it.
pub struct Watch {
    done: Option<mpsc::Sender<()>>,
    fired: Arc<AtomicBool>,
    what: String,
    limit: Duration,
    thread: Option<std::thread::JoinHandle<String>>,
}

impl Watch {
    /// Watch `what` (words for the message) on pool `pool` for [`limit`].
    pub fn arm(pool: &str, what: &str) -> Watch {
        Watch::arm_for(pool, what, limit())
    }

    /// Watch with an explicit limit.
    pub fn arm_for(pool: &str, what: &str, limit: Duration) -> Watch {
        let (tx, rx) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let (f, p) = (fired.clone(), pool.to_string());
        let thread = std::thread::spawn(move || match rx.recv_timeout(limit) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                f.store(true, Ordering::SeqCst);
                abort_pool(&p)
            }
            _ => String::new(),
        });
        Watch { done: Some(tx), fired, what: what.into(), limit, thread: Some(thread) }
    }

    /// Disarm; `Some(message)` if the watchdog fired (the operations were cut off).
    pub fn finish(mut self) -> Option<String> {
        self.stop()
    }

    fn stop(&mut self) -> Option<String> {
        drop(self.done.take());
        let action = self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default();
        self.fired.load(Ordering::SeqCst).then(|| {
            format!(
                "{} did not finish within {} s: zfs-fuse is not answering (deadlocked?); {action}",
                self.what,
                self.limit.as_secs_f64().ceil()
            )
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_of_a_pool_from_mountinfo() {
        let mi =
            "42 27 0:39 / /var/tmp/w/tb-1-0/mnt rw,relatime - fuse.zfs fsbench_1_0 rw,user_id=0\n\
                  43 27 0:40 / /var/tmp/w/tb-1-0/mnt/sub rw - fuse.zfs fsbench_1_0/sub rw\n\
                  44 27 0:41 / /var/tmp/w/tb-1-1/mnt rw - fuse.zfs fsbench_1_01 rw\n\
                  45 27 7:3 / /mnt/x rw - ext4 /dev/loop3 rw\n\
                  46 27 0:44 / /mnt/with\\040space rw - fuse.zfs fsbench_1_0/s rw\n";
        assert_eq!(
            connections(mi, "fsbench_1_0"),
            [
                (PathBuf::from("/var/tmp/w/tb-1-0/mnt"), 39),
                (PathBuf::from("/var/tmp/w/tb-1-0/mnt/sub"), 40),
                (PathBuf::from("/mnt/with space"), 44)
            ]
        );
        assert!(connections(mi, "fsbench_1").is_empty());
    }

    #[test]
    fn only_this_processs_pools_are_aborted() {
        let me = std::process::id();
        assert!(own_pool(&format!("fsbench_{me}_3")));
        assert!(!own_pool(&format!("fsbench_{}_3", me + 1)));
        assert!(!own_pool("tank"));
        assert!(!own_pool(&format!("fsbench_{me}_")));
        assert!(abort_pool("tank").contains("left alone"));
    }

    #[test]
    fn a_hung_command_fails_within_the_limit_with_a_clear_message() {
        let start = std::time::Instant::now();
        let cmd = Cmd::new("sleep").arg("60").timeout(Duration::from_millis(300));
        let pool = format!("fsbench_{}_999999", std::process::id());
        let e = run(cmd, Some(&pool)).unwrap_err().to_string();
        assert!(start.elapsed() < Duration::from_secs(30), "{:?}", start.elapsed());
        assert!(e.contains("`sleep 60` did not return within 1 s"), "{e}");
        assert!(e.contains("zfs-fuse is not answering"), "{e}");
        assert!(e.contains(&format!("pool {pool} has no FUSE mount")), "{e}");
    }

    #[test]
    fn a_watch_that_is_finished_in_time_does_nothing() {
        let w = Watch::arm_for("tank", "reading", Duration::from_secs(60));
        assert_eq!(w.finish(), None);
        let w = Watch::arm_for("tank", "reading", Duration::from_millis(10));
        std::thread::sleep(Duration::from_millis(300));
        let m = w.finish().unwrap();
        assert!(m.starts_with("reading did not finish within 1 s"), "{m}");
        assert!(m.contains("left alone"), "not this process's pool: {m}");
    }
}
