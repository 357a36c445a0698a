//! Which filesystems a profile watches: the mounts named with `--mount`, or every mount backed
//! by a block device; for each, the block device to trace and how its sectors relate to the
//! filesystem's (a partition starts `start` sectors into its disk).

use super::ProfileError;
use crate::observe::trace::event::kernel_dev_t;
use crate::sys::mountinfo::{self, MountEntry as Mount};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One watched filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watched {
    /// Mount point.
    pub mountpoint: PathBuf,
    /// Filesystem type.
    pub fs_type: String,
    /// Mount source (`/dev/loop3`, a zfs dataset, `tmpfs`).
    pub source: String,
    /// Kernel name of the block device traced (`loop3`, `sda2`), when the source is one.
    pub block_device: Option<String>,
    /// Kernel dev_t of the filesystem (`s_dev` in page-cache events).
    pub fs_dev: u32,
    /// `st_dev` of the filesystem (userspace encoding), to match fanotify's files.
    pub st_dev: u64,
    /// Where the block device starts on its disk, in 512-byte sectors (0 unless a partition):
    /// request events carry disk sectors, FIEMAP gives filesystem offsets.
    pub partition_start_sectors: u64,
    /// Other processes use the block device: it is not a loop device, or it holds the root
    /// filesystem (the command's binary and libraries). Its request counts include their I/O.
    #[serde(default)]
    pub shared: bool,
}

/// Whether block device `name` is used by the rest of the machine: anything but a loop device
/// (a disk or partition), or a device holding `/`.
pub fn shared_device(name: &str, holds_root: bool) -> bool {
    holds_root || !name.starts_with("loop")
}

fn block_name(source: &str) -> Option<String> {
    let p = Path::new(source);
    let real = p.canonicalize().ok()?;
    let name = real.strip_prefix("/dev").ok()?.to_str()?.to_string();
    Path::new("/sys/class/block").join(&name).exists().then_some(name)
}

fn watched(m: &Mount) -> Result<Watched, ProfileError> {
    let md = std::fs::metadata(&m.mountpoint)
        .map_err(|e| ProfileError::BadInput(format!("{}: {e}", m.mountpoint.display())))?;
    let st_dev = md.dev();
    let fs_dev = kernel_dev_t(libc::major(st_dev), libc::minor(st_dev));
    let block_device = block_name(&m.source);
    let partition_start_sectors = block_device
        .as_ref()
        .and_then(|n| std::fs::read_to_string(format!("/sys/class/block/{n}/start")).ok())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    let shared =
        block_device.as_deref().is_some_and(|n| shared_device(n, m.mountpoint == Path::new("/")));
    Ok(Watched {
        mountpoint: m.mountpoint.clone(),
        fs_type: m.fstype.clone(),
        source: m.source.clone(),
        block_device,
        fs_dev,
        st_dev,
        partition_start_sectors,
        shared,
    })
}

/// The filesystems to watch: the mounts holding `dirs`, or (none given) every mount whose
/// source is a block device. Duplicates (bind mounts of one filesystem) are dropped.
pub fn resolve(dirs: &[PathBuf]) -> Result<Vec<Watched>, ProfileError> {
    let mut out: Vec<Watched> = Vec::new();
    let mounts: Vec<Mount> = if dirs.is_empty() {
        mountinfo::read()
            .map_err(|e| ProfileError::Unavailable(format!("/proc/self/mountinfo: {e}")))?
            .into_iter()
            .filter(|m| block_name(&m.source).is_some())
            .collect()
    } else {
        let mut v = Vec::new();
        for d in dirs {
            if !d.is_dir() {
                return Err(ProfileError::BadInput(format!(
                    "--mount {}: not a directory",
                    d.display()
                )));
            }
            v.push(mountinfo::mount_of(d).ok_or_else(|| {
                ProfileError::BadInput(format!("--mount {}: no mount found for it", d.display()))
            })?);
        }
        v
    };
    for m in &mounts {
        let w = watched(m)?;
        if !out.iter().any(|o| o.st_dev == w.st_dev) {
            out.push(w);
        }
    }
    if out.is_empty() {
        return Err(ProfileError::BadInput(
            "no block-device filesystem is mounted; name one with --mount DIR".into(),
        ));
    }
    Ok(out)
}
