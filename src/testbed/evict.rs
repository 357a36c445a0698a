//! Cache eviction per testbed kind: the [`CacheControl`] each testbed hands to the engine.
//!
//! | kind | what `evict` does |
//! | --- | --- |
//! | ext2/3/4, xfs, btrfs | fsync + `POSIX_FADV_DONTNEED` per file; for a file set (or with `--drop-caches`, or when the files alone stayed resident) also `drop_caches`; with `remount`, also unmount and mount again (drops every inode and dentry of the filesystem, not only the files') |
//! | zfs (zfs-fuse) | `zpool export` + `drop_caches` + `zpool import -d DEVDIR`: the ARC lives in the daemon, so only taking the pool away empties it |
//! | tmpfs | refuses: the data *is* the page cache |
//! | overlay | as its backing filesystem: the page-cache evictor (overlayfs passes `POSIX_FADV_DONTNEED` to the real file); with `remount`, the overlay is unmounted and mounted again |
//!
//! Each filesystem's plug-in ([`super::fs`]) chooses its controller.
//!
//! The engine verifies kernel page-cache residency with `mincore` afterwards; the zfs path was
//! verified by the integration tests, which read a file after `evict` and check that its bytes
//! were read from the loop devices (`/sys/block/loopN/stat`).

use super::mount::{self, MountSpec};
use crate::engine::{CacheControl, EvictError, PageCacheEvictor, Scope};
use std::path::PathBuf;

/// Kernel filesystems: the page-cache evictor, optionally followed by a full remount.
#[derive(Debug)]
pub struct KernelFsCache {
    /// When set, unmount and mount this spec after the page-cache eviction.
    pub remount: Option<MountSpec>,
    /// Empty every cache (`drop_caches`) for every uncached phase, a data test's too
    /// (`--drop-caches`).
    pub drop_all: bool,
}

impl CacheControl for KernelFsCache {
    fn evict(&self, files: &[PathBuf], scope: Scope) -> Result<String, EvictError> {
        let scope = if self.drop_all { Scope::Everything } else { scope };
        let mut what = PageCacheEvictor.evict(files, scope)?;
        if let Some(spec) = &self.remount {
            mount::umount(&spec.target).map_err(|e| EvictError(e.to_string()))?;
            spec.mount().map_err(|e| EvictError(format!("mounting again after eviction: {e}")))?;
            what.push_str("+umount/mount");
        }
        Ok(what)
    }

    fn unmounts(&self) -> bool {
        self.remount.is_some()
    }
}

/// zfs-fuse: export and re-import the pool.
#[derive(Debug)]
pub struct ZfsCache {
    /// Pool name.
    pub pool: String,
    /// Directory holding the symlinks to the pool's devices (for `zpool import -d`).
    pub devdir: PathBuf,
}

impl CacheControl for ZfsCache {
    fn evict(&self, _files: &[PathBuf], _scope: Scope) -> Result<String, EvictError> {
        super::zfs::export_import(&self.pool, &self.devdir)
            .map_err(|e| EvictError(e.to_string()))?;
        Ok("zpool export+drop_caches+zpool import (zfs-fuse ARC emptied)".into())
    }

    fn unmounts(&self) -> bool {
        true
    }
}

/// tmpfs: eviction is impossible, and saying so is better than pretending.
#[derive(Debug)]
pub struct TmpfsCache;

impl CacheControl for TmpfsCache {
    fn evict(&self, _files: &[PathBuf], _scope: Scope) -> Result<String, EvictError> {
        Err(EvictError(
            "tmpfs keeps file data only in memory: an uncached phase is impossible".into(),
        ))
    }
}
