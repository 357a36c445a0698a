//! Checks made before any work: root, tools, loop devices, host space, image size.

use super::config::FsConfig;
use super::error::{Result, TestbedError};
use crate::model::testbed::FsKind;
use crate::sys::cmd::have_program;

/// Programs a kind needs, with the Debian package that provides each.
pub fn required_tools(kind: FsKind, loop_backed: bool) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("mount", "mount"), ("umount", "mount")];
    if loop_backed {
        v.push(("losetup", "mount"));
    }
    match kind {
        FsKind::Ext2 => v.push(("mkfs.ext2", "e2fsprogs")),
        FsKind::Ext3 => v.push(("mkfs.ext3", "e2fsprogs")),
        FsKind::Ext4 => v.push(("mkfs.ext4", "e2fsprogs")),
        FsKind::Xfs => v.push(("mkfs.xfs", "xfsprogs")),
        FsKind::Btrfs => v.push(("mkfs.btrfs", "btrfs-progs")),
        FsKind::Zfs => {
            v.extend([("zfs-fuse", "zfs-fuse"), ("zpool", "zfs-fuse"), ("zfs", "zfs-fuse")])
        }
        FsKind::Tmpfs => {}
    }
    v
}

/// Fail with the first missing program (and its package).
pub fn check_tools(kind: FsKind, loop_backed: bool) -> Result<()> {
    for (program, package) in required_tools(kind, loop_backed) {
        if !have_program(program) {
            return Err(TestbedError::MissingTool { program: program.to_string(), package });
        }
    }
    Ok(())
}

/// Everything that can be checked before creating anything for `config`.
pub fn check(config: &FsConfig, size_bytes: u64, real_device: bool) -> Result<()> {
    if !crate::sys::is_root() {
        return Err(TestbedError::NotRoot { what: format!("creating a {} testbed", config.kind) });
    }
    let loop_backed = config.kind.needs_devices() && !real_device;
    check_tools(config.kind, loop_backed)?;
    if real_device && config.devices != 1 {
        return Err(TestbedError::Check(format!(
            "--device names one device, but {} uses {} devices",
            config.label, config.devices
        )));
    }
    if real_device && !config.kind.needs_devices() {
        return Err(TestbedError::Check("tmpfs uses no device; drop --device".into()));
    }
    if loop_backed {
        let min = config.kind.min_device_bytes();
        if size_bytes < min {
            return Err(TestbedError::TooSmall {
                kind: config.kind.name(),
                min_mib: min >> 20,
                size_mib: size_bytes >> 20,
            });
        }
        super::loopdev::check_free()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_name_their_packages() {
        assert!(required_tools(FsKind::Xfs, true).contains(&("mkfs.xfs", "xfsprogs")));
        assert!(required_tools(FsKind::Zfs, true).contains(&("zpool", "zfs-fuse")));
        assert!(!required_tools(FsKind::Tmpfs, false).iter().any(|t| t.0 == "losetup"));
        let e = TestbedError::MissingTool { program: "mkfs.btrfs".into(), package: "btrfs-progs" };
        assert!(e.to_string().contains("apt-get install btrfs-progs"));
    }
}
