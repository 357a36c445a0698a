//! Where a test runs, and how its caches are emptied (with the work directory's descriptors
//! released around an eviction that unmounts: [`Target::evict`]).

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

/// What an eviction must empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The given files' cached pages (a data test: fio's `invalidate`). Other files, and the
    /// kernel's inodes and dentries, stay cached: another test's cached file need not be read
    /// again. The engine verifies the files' residency afterwards and empties everything when
    /// the files alone were not enough ([`super::cache`]).
    Files,
    /// Every cache that could hold the test's data or metadata: the files' pages and, as root,
    /// every clean page, dentry and inode of the machine (`drop_caches`). A file set's
    /// uncached phases need it (their directories and inodes are part of what is measured).
    Everything,
}

/// Empties every cache that could hold a test file's data before an "uncached" phase.
///
/// The default ([`PageCacheEvictor`]) handles kernel filesystems. A testbed whose data is cached
/// elsewhere (zfs-fuse's ARC lives in the daemon) implements this with a pool export/import or a
/// remount. The engine always closes its descriptors before calling [`CacheControl::evict`] and
/// then *verifies* the result with `mincore`, so an implementation cannot silently fail.
pub trait CacheControl: Send + Sync {
    /// Evict `files` (with `scope`, what else must go); return a short description of what was
    /// done (recorded in the result).
    fn evict(&self, files: &[PathBuf], scope: Scope) -> Result<String, EvictError>;

    /// Whether [`CacheControl::evict`] unmounts the filesystem (`zpool export`, a remount): it
    /// then fails ("target is busy") while fsbench holds any descriptor on it, so the engine
    /// releases its own ([`Anchor`], the files') around it and takes them again afterwards.
    fn unmounts(&self) -> bool {
        false
    }
}

/// Descriptors held on the target for as long as a test runs (the work directory's, held so
/// that no link can redirect fsbench's I/O), which an eviction that unmounts must not find open.
pub trait Anchor: Sync {
    /// Let go of every descriptor on the target; paths made from them stop resolving until
    /// [`Anchor::reanchor`].
    fn release(&self) -> std::io::Result<()>;
    /// Take them again, on the same directories as before (checked: not a link, ours, the same
    /// inode), under the same paths; an error when that cannot be made sure of.
    fn reanchor(&self) -> std::io::Result<()>;
}

/// fsync + `POSIX_FADV_DONTNEED` per file, then, for [`Scope::Everything`], `drop_caches` when
/// running as root.
#[derive(Debug, Default, Clone, Copy)]
pub struct PageCacheEvictor;

/// What [`PageCacheEvictor`] says it did for [`Scope::Files`].
pub const FILES_ONLY: &str = "fsync+fadvise(DONTNEED) of the test's files";

impl CacheControl for PageCacheEvictor {
    fn evict(&self, files: &[PathBuf], scope: Scope) -> Result<String, EvictError> {
        for f in files {
            crate::sys::cache::evict_file(f)
                .map_err(|e| EvictError(format!("evicting {}: {e}", f.display())))?;
        }
        if scope == Scope::Files {
            Ok(FILES_ONLY.into())
        } else if crate::sys::is_root() {
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
    /// The work directory's descriptors, released around an eviction that unmounts (the driver
    /// sets it to the work directory it made; `None`: nothing held).
    pub anchor: Option<&'a dyn Anchor>,
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
            anchor: None,
        }
    }

    /// Run the target's eviction on `files` with `scope`: when it unmounts, with the work directory's
    /// descriptors released around it and taken again after (checked). `Ok(Err(_))`: the
    /// eviction failed (the files may still be cached); `Err(_)`: the work directory could not
    /// be released or taken again safely (the test cannot go on in it).
    pub fn evict(
        &self,
        files: &[PathBuf],
        scope: Scope,
    ) -> std::io::Result<Result<String, EvictError>> {
        let anchor = self.anchor.filter(|_| self.cache.unmounts());
        let ctx = |what: &str, e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("the work directory {what}: {e}"))
        };
        if let Some(a) = anchor {
            if let Err(e) = a.release() {
                // Whatever was let go is taken again; the eviction is not tried.
                let again = a.reanchor().err().map(|r| format!("; taking it again: {r}"));
                let e = std::io::Error::new(e.kind(), format!("{e}{}", again.unwrap_or_default()));
                return Err(ctx("could not be released before the eviction", e));
            }
        }
        let r = self.cache.evict(files, scope);
        if let Some(a) = anchor {
            // Taken again whether or not the eviction worked: an export that failed left the
            // filesystem mounted, and the test must not go on without its directory.
            a.reanchor().map_err(|e| ctx("could not be taken again after the eviction", e))?;
        }
        Ok(r)
    }
}
