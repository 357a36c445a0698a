//! Where a test runs, and how its caches are emptied.

use std::path::{Path, PathBuf};

/// Error from a cache-eviction attempt.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EvictError(pub String);

impl crate::sys::classify::Classify for EvictError {
    /// The caches could not be emptied: the system's failure, not the command's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// Empties every cache that could hold a test file's data before an "uncached" phase.
///
/// The default ([`PageCacheEvictor`]) handles kernel filesystems. A testbed whose data is cached
/// elsewhere (zfs-fuse's ARC lives in the daemon) implements this with a pool export/import or a
/// remount. The engine always closes its descriptors before calling [`CacheControl::evict`] and
/// then *verifies* the result with `mincore`, so an implementation cannot silently fail.
pub trait CacheControl: Send + Sync {
    /// Evict `files`; return a short description of what was done (recorded in the result).
    fn evict(&self, files: &[PathBuf]) -> Result<String, EvictError>;
}

/// fsync + `POSIX_FADV_DONTNEED` per file, then `drop_caches` when running as root.
#[derive(Debug, Default, Clone, Copy)]
pub struct PageCacheEvictor;

impl CacheControl for PageCacheEvictor {
    fn evict(&self, files: &[PathBuf]) -> Result<String, EvictError> {
        for f in files {
            crate::sys::cache::evict_file(f)
                .map_err(|e| EvictError(format!("evicting {}: {e}", f.display())))?;
        }
        if crate::sys::is_root() {
            crate::sys::cache::drop_all_caches()
                .map_err(|e| EvictError(format!("drop_caches: {e}")))?;
            Ok("fsync+fadvise(DONTNEED)+drop_caches".into())
        } else {
            Ok("fsync+fadvise(DONTNEED) (not root: no drop_caches)".into())
        }
    }
}

/// A place to run tests: a directory, the block devices under it, and its cache control.
pub struct Target<'a> {
    /// Directory in which fsbench creates (and removes) its own test subdirectory.
    pub dir: PathBuf,
    /// Label used in all output (a filesystem configuration label or the directory).
    pub label: String,
    /// Block devices (names under /sys/block, e.g. `loop3`) whose counters describe this
    /// target. Empty: derived from the directory's `st_dev` when it is a whole block device.
    pub devices: Vec<String>,
    /// How "uncached" is achieved here.
    pub cache: &'a dyn CacheControl,
    /// Command name of a filesystem daemon whose memory is observed (`zfs-fuse`).
    pub daemon: Option<&'static str>,
}

impl<'a> Target<'a> {
    /// A plain directory using the page-cache evictor.
    pub fn dir(dir: &Path) -> Target<'static> {
        Target {
            dir: dir.to_path_buf(),
            label: dir.display().to_string(),
            devices: Vec::new(),
            cache: &PageCacheEvictor,
            daemon: None,
        }
    }
}
