//! Mounting and unmounting (kernel filesystems and tmpfs; zfs-fuse mounts belong to the pool).

use super::error::{Result, TestbedError};
use super::mountinfo;
use super::state::{Resource, StateDir};
use crate::state::{Guard, Recorded, Release};
use crate::sys::cmd::{Cmd, CmdError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Everything `mount` needs; kept so the cache controller can unmount and mount again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountSpec {
    /// Device (`/dev/loop3`) or, for tmpfs, the name shown in mountinfo (`fsbench`).
    pub source: String,
    /// Mount point.
    pub target: PathBuf,
    /// `-t` type.
    pub fstype: String,
    /// `-o` options, if any.
    pub options: Option<String>,
}

impl MountSpec {
    /// The `mount` command for this spec.
    pub fn command(&self) -> Cmd {
        let mut c = Cmd::new("mount").args(["-t", &self.fstype]);
        if let Some(o) = &self.options {
            c = c.args(["-o", o]);
        }
        c.arg(&self.source).arg(&self.target).hint("install the Debian package mount")
    }

    /// Run `mount`. When it fails, the kernel's own line about an option the user gave (the
    /// `dmesg` tail `mount` points to, e.g. "xfs: unknown mount option [nobarrier]") is added
    /// to what `mount` said.
    pub fn mount(&self) -> Result<()> {
        let since = uptime_seconds();
        self.command().run().map(drop).map_err(|e| {
            let e = match (e, &self.options, since) {
                (CmdError::Failed { cmdline, status, mut stderr }, Some(o), Some(since)) => {
                    let log = Cmd::new("dmesg").run().unwrap_or_default();
                    if let Some(line) = kernel_line(&log, o, since - 1.0) {
                        stderr = format!("{}\nkernel log: {line}", stderr.trim_end());
                    }
                    CmdError::Failed { cmdline, status, stderr }
                }
                (e, ..) => e,
            };
            TestbedError::cmd("mount", e)
        })
    }
}

fn uptime_seconds() -> Option<f64> {
    let t = std::fs::read_to_string("/proc/uptime").ok()?;
    t.split_whitespace().next()?.parse().ok()
}

/// The last kernel log line (`dmesg` output, `[seconds] text`) at or after `since` seconds
/// that names one of the mount options `options` (`a,b=1`), without its time stamp.
pub fn kernel_line(log: &str, options: &str, since: f64) -> Option<String> {
    let names: Vec<&str> = options
        .split(',')
        .map(|o| o.split('=').next().unwrap_or(o).trim())
        .filter(|n| n.len() >= 2)
        .collect();
    log.lines().rev().find_map(|l| {
        let rest = l.trim_start().strip_prefix('[')?;
        let (ts, text) = rest.split_once(']')?;
        let ts: f64 = ts.trim().parse().ok()?;
        let text = text.trim();
        (ts >= since && names.iter().any(|n| text.contains(n))).then(|| text.to_string())
    })
}

/// Unmount `target`, retrying briefly while it is busy (a process may be closing files).
/// Not mounted is success.
pub fn umount(target: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        if !mountinfo::is_mounted(target) {
            return Ok(());
        }
        match Cmd::new("umount").arg(target).run() {
            Ok(_) => return Ok(()),
            Err(CmdError::Failed { ref stderr, .. }) if stderr.contains("not mounted") => {
                return Ok(())
            }
            Err(CmdError::Failed { ref stderr, .. })
                if stderr.contains("busy") && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(TestbedError::cmd(format!("unmounting {}", target.display()), e)),
        }
    }
}

/// A mount fsbench made; unmounted on teardown.
pub type Mount = Guard<Mounted>;

/// What a [`Mount`] owns.
#[derive(Debug)]
pub struct Mounted {
    spec: MountSpec,
}

impl Mounted {
    /// What was mounted.
    pub fn spec(&self) -> &MountSpec {
        &self.spec
    }
}

impl Release for Mounted {
    type Error = TestbedError;
    fn release(&mut self) -> Result<()> {
        umount(&self.spec.target)
    }
    fn state_error(dir: &Path, e: std::io::Error) -> TestbedError {
        TestbedError::io("updating state in", dir, e)
    }
}

impl Guard<Mounted> {
    /// Record, then mount `spec`.
    pub fn create(spec: MountSpec, state: &StateDir) -> Result<Mount> {
        let rec = Recorded::new(
            state,
            Resource::Mount {
                mountpoint: spec.target.clone(),
                source: spec.source.clone(),
                fstype: spec.fstype.clone(),
            },
        )
        .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        if let Err(e) = spec.mount() {
            // mount(8) failing leaves nothing mounted (it is one mount(2) call).
            let _ = rec.forget();
            return Err(e);
        }
        Ok(Guard::new(Mounted { spec }, rec))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_line_naming_a_rejected_option_is_found() {
        let log = "[  100.5] xfs: unknown mount option [nobarrier].\n\
                   [  200.0] loop1: detected capacity change from 0 to 32768\n\
                   [  200.1] XFS (loop1): Mounting V5 Filesystem\n\
                   [  200.2] xfs: unknown mount option [nobarrier].\n\
                   [  200.3] loop2: detected capacity change\n";
        assert_eq!(
            kernel_line(log, "nobarrier", 199.0).as_deref(),
            Some("xfs: unknown mount option [nobarrier].")
        );
        // An older line (before this mount) is not quoted.
        assert_eq!(kernel_line(log, "nobarrier", 300.0), None);
        // Options with values are matched by name.
        let log = "[  5.0] ext4: Unknown parameter 'bogusopt'\n";
        assert_eq!(
            kernel_line(log, "noatime,bogusopt=3", 4.0).as_deref(),
            Some("ext4: Unknown parameter 'bogusopt'")
        );
        assert_eq!(kernel_line(log, "noatime", 4.0), None);
    }

    #[test]
    fn mount_command_line() {
        let s = MountSpec {
            source: "/dev/loop3".into(),
            target: "/var/tmp/fsbench/tb/mnt".into(),
            fstype: "ext4".into(),
            options: Some("data=writeback,nobarrier".into()),
        };
        assert_eq!(
            s.command().cmdline(),
            "mount -t ext4 -o data=writeback,nobarrier /dev/loop3 /var/tmp/fsbench/tb/mnt"
        );
    }

    #[test]
    fn unmounting_what_is_not_mounted_is_fine() {
        umount(Path::new("/nonexistent/fsbench/mnt")).unwrap();
    }
}
