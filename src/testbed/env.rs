//! The environment record of a testbed: what was created, with which tool, and the mount
//! options actually in effect.

use super::config::FsKind;
use crate::sys::cmd::Cmd;
use serde::{Deserialize, Serialize};

/// What a result needs to say about the filesystem it ran on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestbedEnv {
    /// Filesystem kind (`ext4`, `zfs`, ...).
    pub kind: FsKind,
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

/// The tool that creates `kind` and its version, from the tool itself or else from dpkg.
pub fn tool_version(kind: FsKind) -> Option<String> {
    let (program, flag, package) = match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 => ("mke2fs", "-V", "e2fsprogs"),
        FsKind::Xfs => ("mkfs.xfs", "-V", "xfsprogs"),
        FsKind::Btrfs => ("mkfs.btrfs", "--version", "btrfs-progs"),
        // zfs-fuse has no --version.
        FsKind::Zfs => ("", "", "zfs-fuse"),
        FsKind::Tmpfs => return None,
    };
    if !program.is_empty() {
        if let Ok(out) = Cmd::new(program).arg(flag).run() {
            // mke2fs prints its version on stderr, so stdout may be empty: fall back to dpkg.
            if let Some(line) = out.lines().map(str::trim).find(|l| !l.is_empty()) {
                return Some(line.to_string());
            }
        }
    }
    Cmd::new("dpkg-query")
        .args(["-W", "-f", "${Version}", package])
        .run()
        .ok()
        .map(|v| format!("{package} {} (dpkg)", v.trim()))
}

/// Effective values of `names` on zfs dataset `dataset` (`zfs get -H -o property,value`).
pub fn zfs_properties(dataset: &str, names: &[String]) -> Vec<(String, String)> {
    if names.is_empty() {
        return Vec::new();
    }
    let get = super::zfs_watch::zcmd("zfs").args([
        "get",
        "-H",
        "-o",
        "property,value",
        &names.join(","),
        dataset,
    ]);
    let out = super::zfs_watch::run(get, Some(dataset.split('/').next().unwrap_or(dataset)));
    out.map(|o| {
        o.lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line_shows_requested_and_effective_options() {
        let e = TestbedEnv {
            kind: FsKind::Ext4,
            label: "wb".into(),
            config: "ext4:mount=data=writeback".into(),
            mkfs_cmdline: Some("mkfs.ext4 -F -q /dev/loop3".into()),
            post_create_cmdlines: vec![],
            tool_version: Some("mke2fs 1.47.0".into()),
            fstype: "ext4".into(),
            mount_source: "/dev/loop3".into(),
            mount_options: "rw,relatime".into(),
            super_options: "rw,data=writeback".into(),
            zfs_properties: vec![],
            device_size_bytes: 1 << 30,
            devices: 1,
            backing: "1 fallocated image(s)".into(),
            block_devices: vec!["loop3".into()],
            io_scheduler: Some("mq-deadline".into()),
        };
        let l = e.summary_line();
        assert!(l.starts_with("requested ext4:mount=data=writeback; mkfs.ext4"), "{l}");
        assert!(l.contains("in effect: ext4 rw,relatime (superblock: rw,data=writeback)"), "{l}");
        assert!(l.ends_with("; I/O scheduler mq-deadline"), "{l}");
        let z = TestbedEnv {
            zfs_properties: vec![("compression".into(), "on".into())],
            super_options: String::new(),
            io_scheduler: None,
            ..e
        };
        assert!(z.summary_line().ends_with("; zfs compression=on"), "{}", z.summary_line());
    }
}
