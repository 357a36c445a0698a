//! Checks made before any work: root, tools, loop devices, host space, image size.

use super::config::FsConfig;
use super::error::{Result, TestbedError};
use crate::sys::cmd::have_program;

/// Programs `config` needs, with the Debian package that provides each.
pub fn required_tools(config: &FsConfig, loop_backed: bool) -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("mount", "mount"), ("umount", "mount")];
    if loop_backed {
        v.push(("losetup", "mount"));
    }
    v.extend(config.kind.tools(config));
    v
}

/// Fail with the first missing program (and its package).
pub fn check_tools(config: &FsConfig, loop_backed: bool) -> Result<()> {
    for (program, package) in required_tools(config, loop_backed) {
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
    check_tools(config, loop_backed)?;
    if real_device && config.devices != 1 {
        return Err(TestbedError::Check(format!(
            "--device names one device, but {} uses {} devices",
            config.label, config.devices
        )));
    }
    if real_device && !config.kind.needs_devices() {
        return Err(TestbedError::Check(format!("{} uses no device; drop --device", config.kind)));
    }
    if loop_backed {
        let min = config.kind.min_device_bytes(config);
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
        let c = |s: &str| FsConfig::parse(s).unwrap();
        assert!(required_tools(&c("xfs"), true).contains(&("mkfs.xfs", "xfsprogs")));
        assert!(required_tools(&c("zfs"), true).contains(&("zpool", "zfs-fuse")));
        assert!(!required_tools(&c("tmpfs"), false).iter().any(|t| t.0 == "losetup"));
        let e = TestbedError::MissingTool { program: "mkfs.btrfs".into(), package: "btrfs-progs" };
        assert!(e.to_string().contains("apt-get install btrfs-progs"));
    }
}
