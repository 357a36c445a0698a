//! tmpfs: memory only, no image or device.
//!
//! | what | how |
//! | --- | --- |
//! | made | nothing to make |
//! | mounted | `mount -t tmpfs -o size=SIZE[,OPTIONS] fsbench MNT` (`--size`; a `mount=size=...` of the user's wins, and the record says the size in effect) |
//! | evicted | refused: the data *is* the page cache, so an uncached phase is impossible ([`super::super::evict::TmpfsCache`]) |
//! | integrity | not tested: there is no device to corrupt |

use super::{Build, Filesystem, FsIntegrity, Made, Untestable};
use crate::testbed::config::{ConfigError, FsConfig, Given};
use crate::testbed::error::Result;
use crate::testbed::fsopts::{o, Kind::*, OptSpec};
use crate::testbed::mount::MountSpec;

/// tmpfs.
pub struct Tmpfs;

/// The registered tmpfs.
pub static TMPFS: Tmpfs = Tmpfs;

impl Filesystem for Tmpfs {
    fn name(&self) -> &'static str {
        "tmpfs"
    }

    fn needs_devices(&self) -> bool {
        false
    }

    fn min_device_bytes(&self, _cfg: &FsConfig) -> u64 {
        1 << 20
    }

    fn configure(&self, given: &mut Given, cfg: &mut FsConfig) -> Result<(), ConfigError> {
        if !cfg.mkfs_opts.is_empty() {
            return Err(ConfigError::Invalid("tmpfs has no mkfs; drop `mkfs=`".into()));
        }
        if given.devices.take().is_some_and(|n| n > 0) {
            return Err(ConfigError::Invalid("tmpfs uses no devices".into()));
        }
        cfg.devices = 0;
        Ok(())
    }

    fn mount_table(&self) -> Option<&'static [OptSpec]> {
        Some(TMPFS_MOUNT)
    }

    fn tools(&self, _cfg: &FsConfig) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }

    fn make(&self, b: &mut Build<'_>) -> Result<Made> {
        let mut opts = format!("size={}", b.opts.size_bytes);
        if let Some(x) = b.cfg.mount_opts_joined() {
            opts.push(',');
            opts.push_str(&x);
        }
        let spec = MountSpec {
            source: "fsbench".into(),
            target: b.mountpoint.clone(),
            fstype: "tmpfs".into(),
            options: Some(opts),
        };
        b.mount(spec, &b.cfg.mount_opts.clone())?;
        b.backing = format!("memory (tmpfs size={} MiB)", b.opts.size_bytes >> 20);
        // The size in effect, from the mounted filesystem: a user's `mount=size=...` wins over
        // --size, and the record must say what was measured.
        if let Ok(st) = rustix::fs::statvfs(&b.mountpoint) {
            b.device_size_bytes = st.f_blocks.saturating_mul(st.f_frsize);
            b.backing = format!(
                "memory (tmpfs of {})",
                crate::model::units::fmt_bytes(b.device_size_bytes)
            );
        }
        Ok(Made::new(None, Box::new(crate::testbed::evict::TmpfsCache)))
    }

    fn tool_version(&self, _cfg: &FsConfig) -> Option<String> {
        None
    }

    fn integrity(&self) -> Result<&dyn FsIntegrity, Untestable> {
        Err(Untestable {
            fs: "tmpfs",
            why: "has no device to corrupt",
            instead: "choose ext2/3/4, xfs, btrfs or zfs",
        })
    }
}

/// tmpfs mount options.
pub const TMPFS_MOUNT: &[OptSpec] = &[
    o("size", Size, "size (bytes, k/m/g suffix, or N%)"),
    o("nr_blocks", Size, ""),
    o("nr_inodes", Size, ""),
    o("mode", Octal, ""),
    o("uid", Number, ""),
    o("gid", Number, ""),
    o("huge", Words(&["never", "always", "within_size", "advise", "deny", "force"]), ""),
    o("mpol", Words(&["default", "prefer*", "bind*", "interleave*", "local"]), ""),
    o("noswap", Flag, ""),
    o("inode32", Flag, ""),
    o("inode64", Flag, ""),
    o("quota", Flag, ""),
    o("usrquota", Flag, ""),
    o("grpquota", Flag, ""),
];
