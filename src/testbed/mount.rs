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

    /// Run `mount`.
    pub fn mount(&self) -> Result<()> {
        self.command().run().map(drop).map_err(|e| TestbedError::cmd("mount", e))
    }
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

    /// A tmpfs of `size_bytes` at `target`, with extra options.
    pub fn tmpfs(
        target: &Path,
        size_bytes: u64,
        extra: Option<&str>,
        state: &StateDir,
    ) -> Result<Mount> {
        let mut opts = format!("size={size_bytes}");
        if let Some(x) = extra {
            opts.push(',');
            opts.push_str(x);
        }
        let spec = MountSpec {
            source: "fsbench".into(),
            target: target.to_path_buf(),
            fstype: "tmpfs".into(),
            options: Some(opts),
        };
        Mount::create(spec, state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
