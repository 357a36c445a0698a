//! Real devices: the checks made before fsbench formats a device the user named.
//!
//! A device is refused (with the reason) when it is not a block device, is or contains the
//! root filesystem's device (and `/dev/vda`, this project's VM root disk, always), is mounted,
//! has a partition that is mounted, is held by another device (device-mapper, md, ...), or
//! carries a filesystem / partition-table / RAID signature. Only the last one can be overridden
//! with `force`. The checks only read: facts are gathered first ([`DeviceFacts::gather`]) and
//! judged by a pure function ([`check`]), so the refusal logic is testable with fake facts.

use super::error::TestbedError;
use super::mountinfo::{self, MountEntry};
use crate::sys::cmd::Cmd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why a device is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The path is not a block device.
    #[error("not a block device")]
    NotBlockDevice,
    /// Root filesystem's device, its disk, or /dev/vda.
    #[error("it is the root device ({0})")]
    RootDevice(String),
    /// Mounted itself.
    #[error("it is mounted on {0}")]
    Mounted(String),
    /// A partition of it is mounted.
    #[error("its partition {partition} is mounted on {mountpoint}")]
    PartitionMounted {
        /// Partition name.
        partition: String,
        /// Where.
        mountpoint: String,
    },
    /// Held by another device (device-mapper, md, bcache, ...).
    #[error("it is in use by {0} (see /sys/class/block/*/holders)")]
    Held(String),
    /// Carries a filesystem, partition table or RAID signature (overridable with force).
    #[error("it carries data signatures (use --force to overwrite them):\n{0}")]
    Signature(String),
    /// The facts could not be gathered.
    #[error("cannot inspect it: {0}")]
    Inspect(String),
}

/// What the checks look at, gathered from the system (or made up in tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceFacts {
    /// Kernel name (`sdb`, `loop3`, `sdb1`).
    pub name: String,
    /// `major:minor`.
    pub dev: String,
    /// Whether the path is a block device.
    pub is_block: bool,
    /// For a partition, the whole disk's kernel name.
    pub parent: Option<String>,
    /// Partitions as (kernel name, `major:minor`).
    pub partitions: Vec<(String, String)>,
    /// Holders of the device and of its partitions.
    pub holders: Vec<String>,
    /// Kernel names that make up the root filesystem's device (its device, disk, slaves).
    pub root_names: Vec<String>,
    /// Current mounts.
    pub mounts: Vec<MountEntry>,
    /// `wipefs` listing of signatures (empty: none).
    pub signatures: String,
}

/// Judge a device from its facts. `force` overrides only a signature.
pub fn check(f: &DeviceFacts, force: bool) -> Result<(), Refusal> {
    if !f.is_block {
        return Err(Refusal::NotBlockDevice);
    }
    let mut own = vec![f.name.clone()];
    own.extend(f.parent.clone());
    own.extend(f.partitions.iter().map(|p| p.0.clone()));
    if let Some(n) = own.iter().find(|n| {
        n.as_str() == "vda" || n.starts_with("vda") && n[3..].chars().all(|c| c.is_ascii_digit())
    }) {
        return Err(Refusal::RootDevice(format!("{n} is this machine's root disk")));
    }
    if let Some(n) = own.iter().find(|n| f.root_names.contains(n)) {
        return Err(Refusal::RootDevice(format!("/ lives on {n}")));
    }
    let matches =
        |m: &MountEntry, name: &str, dev: &str| m.dev == dev || m.source == format!("/dev/{name}");
    if let Some(m) = f.mounts.iter().find(|m| matches(m, &f.name, &f.dev)) {
        return Err(Refusal::Mounted(m.mountpoint.display().to_string()));
    }
    for (pname, pdev) in &f.partitions {
        if let Some(m) = f.mounts.iter().find(|m| matches(m, pname, pdev)) {
            return Err(Refusal::PartitionMounted {
                partition: pname.clone(),
                mountpoint: m.mountpoint.display().to_string(),
            });
        }
    }
    if !f.holders.is_empty() {
        return Err(Refusal::Held(f.holders.join(", ")));
    }
    if !f.signatures.trim().is_empty() && !force {
        return Err(Refusal::Signature(f.signatures.trim().to_string()));
    }
    Ok(())
}

impl DeviceFacts {
    /// Read the facts about `path` from the system (stat, /sys, mountinfo). Signatures are read
    /// separately ([`read_signatures`]) and only once the other checks pass, so a root or
    /// mounted device is not even probed.
    pub fn gather(path: &Path) -> Result<DeviceFacts, Refusal> {
        let md = std::fs::metadata(path).map_err(|e| Refusal::Inspect(e.to_string()))?;
        let mut f =
            DeviceFacts { is_block: md.file_type().is_block_device(), ..Default::default() };
        if !f.is_block {
            return Ok(f);
        }
        let rdev = md.rdev();
        f.dev = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
        f.name = sys_name(&f.dev)
            .ok_or_else(|| Refusal::Inspect(format!("no /sys/dev/block/{}", f.dev)))?;
        let class = Path::new("/sys/class/block").join(&f.name);
        if class.join("partition").exists() {
            f.parent = std::fs::canonicalize(&class).ok().and_then(|p| {
                p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned())
            });
        }
        for ent in std::fs::read_dir(&class).into_iter().flatten().flatten() {
            let p = ent.path();
            if p.join("partition").exists() {
                let dev =
                    std::fs::read_to_string(p.join("dev")).unwrap_or_default().trim().to_string();
                f.partitions.push((ent.file_name().to_string_lossy().into_owned(), dev));
            }
        }
        let mut names = vec![f.name.clone()];
        names.extend(f.partitions.iter().map(|p| p.0.clone()));
        for n in names {
            f.holders.extend(list_dir(&Path::new("/sys/class/block").join(n).join("holders")));
        }
        f.root_names = root_names();
        f.mounts = mountinfo::read()
            .map_err(|e| Refusal::Inspect(format!("/proc/self/mountinfo: {e}")))?;
        Ok(f)
    }
}

/// Check the device the user named for `--device DEV --destroy-data`. Returns its canonical path.
pub fn validate_real_device(path: &Path, force: bool) -> Result<PathBuf, TestbedError> {
    let refuse = |reason| TestbedError::DeviceRefused { device: path.to_path_buf(), reason };
    let canon = std::fs::canonicalize(path).map_err(|e| refuse(Refusal::Inspect(e.to_string())))?;
    let mut facts = DeviceFacts::gather(&canon).map_err(refuse)?;
    check(&facts, force).map_err(refuse)?;
    facts.signatures = read_signatures(&canon).map_err(refuse)?;
    check(&facts, force).map_err(refuse)?;
    Ok(canon)
}

/// `wipefs` listing of the signatures on `path` (read only; empty when there are none).
pub fn read_signatures(path: &Path) -> Result<String, Refusal> {
    Cmd::new("wipefs")
        .args(["--noheadings", "--output", "TYPE,OFFSET"])
        .arg(path)
        .hint("install the Debian package util-linux")
        .run()
        .map_err(|e| Refusal::Inspect(e.to_string()))
}

fn sys_name(dev: &str) -> Option<String> {
    let link = std::fs::read_link(format!("/sys/dev/block/{dev}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

fn list_dir(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The root filesystem's device, its whole disk and its slaves (for dm/md roots).
fn root_names() -> Vec<String> {
    let mut out = Vec::new();
    let Ok(md) = std::fs::metadata("/") else {
        return out;
    };
    let dev = md.dev();
    let Some(name) = sys_name(&format!("{}:{}", libc::major(dev), libc::minor(dev))) else {
        return out;
    };
    let class = Path::new("/sys/class/block").join(&name);
    if class.join("partition").exists() {
        if let Some(parent) = std::fs::canonicalize(&class).ok().and_then(|p| {
            p.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned())
        }) {
            out.push(parent);
        }
    }
    out.extend(list_dir(&class.join("slaves")));
    out.push(name);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(name: &str, dev: &str) -> DeviceFacts {
        DeviceFacts {
            name: name.into(),
            dev: dev.into(),
            is_block: true,
            root_names: vec!["sda2".into(), "sda".into()],
            mounts: mountinfo::parse("22 1 8:2 / / rw - ext4 /dev/sda2 rw\n"),
            ..Default::default()
        }
    }

    fn mount_line(dev: &str, src: &str, at: &str) -> MountEntry {
        mountinfo::parse(&format!("60 22 {dev} / {at} rw - ext4 {src} rw\n")).remove(0)
    }

    #[test]
    fn clean_disk_is_accepted() {
        assert_eq!(check(&disk("sdb", "8:16"), false), Ok(()));
    }

    #[test]
    fn not_a_block_device() {
        let f = DeviceFacts { is_block: false, ..disk("x", "0:0") };
        assert_eq!(check(&f, true), Err(Refusal::NotBlockDevice));
    }

    #[test]
    fn root_disk_and_vda_are_refused_even_with_force() {
        assert!(matches!(check(&disk("sda", "8:0"), true), Err(Refusal::RootDevice(_))));
        assert!(matches!(check(&disk("sda2", "8:2"), true), Err(Refusal::RootDevice(_))));
        assert!(matches!(check(&disk("vda", "254:0"), true), Err(Refusal::RootDevice(_))));
        let mut f = disk("vdb", "254:16");
        f.parent = None;
        assert_eq!(check(&f, false), Ok(()), "vdb is not vda");
        let mut f = disk("vda1", "254:1");
        f.parent = Some("vda".into());
        assert!(matches!(check(&f, true), Err(Refusal::RootDevice(_))));
    }

    #[test]
    fn mounted_device_or_partition_is_refused_even_with_force() {
        let mut f = disk("sdb", "8:16");
        f.mounts.push(mount_line("8:16", "/dev/sdb", "/mnt/data"));
        assert_eq!(check(&f, true), Err(Refusal::Mounted("/mnt/data".into())));

        // btrfs shows an anonymous dev in mountinfo: the source name must match too.
        let mut f = disk("sdb", "8:16");
        f.mounts.push(mount_line("0:45", "/dev/sdb", "/mnt/b"));
        assert_eq!(check(&f, true), Err(Refusal::Mounted("/mnt/b".into())));

        let mut f = disk("sdb", "8:16");
        f.partitions = vec![("sdb1".into(), "8:17".into())];
        f.mounts.push(mount_line("8:17", "/dev/sdb1", "/boot"));
        assert_eq!(
            check(&f, true),
            Err(Refusal::PartitionMounted { partition: "sdb1".into(), mountpoint: "/boot".into() })
        );
    }

    #[test]
    fn held_device_is_refused() {
        let mut f = disk("sdb", "8:16");
        f.holders = vec!["dm-0".into()];
        assert_eq!(check(&f, true), Err(Refusal::Held("dm-0".into())));
    }

    #[test]
    fn signature_refused_unless_forced() {
        let mut f = disk("sdb", "8:16");
        f.signatures = "ext4 0x438\n".into();
        assert!(matches!(check(&f, false), Err(Refusal::Signature(s)) if s.contains("ext4")));
        assert_eq!(check(&f, true), Ok(()));
    }

    #[test]
    fn regular_file_is_refused() {
        let e = validate_real_device(Path::new("/proc/self/status"), true).unwrap_err();
        assert!(
            matches!(e, TestbedError::DeviceRefused { reason: Refusal::NotBlockDevice, .. }),
            "{e}"
        );
    }
}
