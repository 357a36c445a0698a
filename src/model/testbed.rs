//! What a result says about the filesystem it ran on: its kind and the record of how it was
//! made and mounted ([`TestbedEnv`]). Making it is [`crate::testbed`].

use serde::{Deserialize, Serialize};

/// The name of a filesystem a testbed was made of (`ext4`, `xfs`, `zfs`, `overlay`, ...): the
/// lowercase name used in the CLI, TOML and JSON. Which names exist, and what each one does, is
/// the testbed layer's registry of filesystem plug-ins (`crate::testbed::fs`); a result keeps
/// only the name, so results and databases written by any version read the same.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FsName(pub String);

impl FsName {
    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for FsName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for FsName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for FsName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// What a result needs to say about the filesystem it ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestbedEnv {
    /// Filesystem kind (`ext4`, `zfs`, ...).
    pub kind: FsName,
    /// The configuration's label.
    pub label: String,
    /// The configuration's canonical short form.
    pub config: String,
    /// The mkfs or `zpool create` command line run (none for tmpfs).
    pub mkfs_cmdline: Option<String>,
    /// `zfs set` command lines run after `zpool create`.
    pub post_create_cmdlines: Vec<String>,
    /// The tool and its version (`mkfs.xfs version 6.1.0`, `zfs-fuse 0.7.0-25+b1 (dpkg)`).
    pub tool_version: Option<String>,
    /// Filesystem type as mounted (`ext4`, `fuse.zfs`, `tmpfs`).
    pub fstype: String,
    /// Mount source as mounted.
    pub mount_source: String,
    /// Per-mount options in effect (mountinfo field 6).
    pub mount_options: String,
    /// Superblock options in effect (mountinfo, after the fstype and source).
    pub super_options: String,
    /// zfs dataset properties in effect (name, value), for zfs.
    pub zfs_properties: Vec<(String, String)>,
    /// Size of each image (or the real device, or the tmpfs limit) in bytes.
    pub device_size_bytes: u64,
    /// Number of devices.
    pub devices: usize,
    /// How the filesystem is backed, in words.
    pub backing: String,
    /// Kernel names of the block devices (for /sys/block counters).
    pub block_devices: Vec<String>,
    /// The I/O scheduler in effect on the (first) block device, as the kernel reports it.
    #[serde(default)]
    pub io_scheduler: Option<String>,
}

impl TestbedEnv {
    /// One line for a configuration list: the configuration as requested, the mkfs (or
    /// `zpool create`) command, the backing, the mount options in effect *and* the superblock
    /// options (where `data=writeback` or `noatime`-like filesystem options show), the I/O
    /// scheduler, and zfs properties in effect.
    pub fn summary_line(&self) -> String {
        let mut s = format!("requested {}; ", self.config);
        if let Some(m) = &self.mkfs_cmdline {
            s.push_str(m);
            for p in &self.post_create_cmdlines {
                s.push_str(&format!(" && {p}"));
            }
            s.push_str(" on ");
        }
        s.push_str(&self.backing);
        if let Some(v) = &self.tool_version {
            s.push_str(&format!("; {v}"));
        }
        s.push_str(&format!("; in effect: {} {}", self.fstype, self.mount_options));
        if !self.super_options.is_empty() {
            s.push_str(&format!(" (superblock: {})", self.super_options));
        }
        if let Some(sc) = &self.io_scheduler {
            s.push_str(&format!("; I/O scheduler {sc}"));
        }
        if !self.zfs_properties.is_empty() {
            let props: Vec<String> =
                self.zfs_properties.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.push_str(&format!("; zfs {}", props.join(" ")));
        }
        s
    }
}
