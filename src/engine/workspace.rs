//! The test subdirectory fsbench creates under the target directory, removed when dropped.
//!
//! The target directory (`--dir`) belongs to the user and may be writable by others (a shared
//! scratch directory). Anyone who can write there could swap the subdirectory for a link to a
//! directory of root's between fsbench's `mkdir` and its use, and fsbench would then create,
//! truncate and delete files there. So the subdirectory is made with `mkdirat` and opened at
//! once with `O_NOFOLLOW`, checked to be the fresh, empty directory of ours just made (owner,
//! device, inode), and used only through that directory fd: [`Workspace::path`] is the
//! `/proc/self/fd/N` path of the fd, which the kernel resolves to the directory itself whatever
//! its name now points to. It is removed through the fd too (never following a link), and its
//! name in `--dir` only while it still names that directory.
//!
//! It is recorded in the state ([`crate::state`]) before it is made and identified (device,
//! inode) once made, so `fsbench testbed cleanup` removes it after a `kill -9`.

use super::target::Anchor;
use crate::state::{Guard, Recorded, Release, Resource, StateDir};
use crate::sys::secure;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// `DIR/.fsbench-PID-N`: every test file lives here; the guard removes it on drop (success,
/// error, or Ctrl-C unwinding through the runner).
pub type Workspace = Guard<WorkspaceDir>;

/// What a [`Workspace`] owns: the directory's fd and its parent's.
#[derive(Debug)]
pub struct WorkspaceDir {
    parent: OwnedFd,
    dir: OwnedFd,
    name: String,
    shown: PathBuf,
    path: PathBuf,
    /// The directory's device: it changes when an eviction unmounts and mounts the filesystem
    /// again (a FUSE mount gets a new one), see [`Anchor::reanchor`].
    dev: AtomicU64,
    ino: u64,
    /// The parent as given (`--dir`, a mount point), and its inode, to take it again after an
    /// eviction that unmounts.
    parent_path: PathBuf,
    parent_ino: u64,
}

const DIR_FLAGS: OFlags =
    OFlags::DIRECTORY.union(OFlags::NOFOLLOW).union(OFlags::RDONLY).union(OFlags::CLOEXEC);

fn with_path(e: io::Error, what: &str, p: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", p.display()))
}

impl Guard<WorkspaceDir> {
    /// Create a fresh subdirectory of `parent`, recorded in the default state directory. Fails
    /// clearly if `parent` is missing or read-only.
    pub fn create(parent: &Path) -> io::Result<Workspace> {
        Workspace::create_in(parent, &StateDir::default())
    }

    /// [`Workspace::create`], recorded in `state`.
    pub fn create_in(parent: &Path, state: &StateDir) -> io::Result<Workspace> {
        let pfd = open_parent(parent).map_err(|e| match e {
            rustix::io::Errno::NOTDIR => io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", parent.display()),
            ),
            e => with_path(e.into(), "directory", parent),
        })?;
        let pid = std::process::id();
        let first = format!(".fsbench-{pid}-0");
        let rec = Recorded::new(
            state,
            Resource::Workspace { path: parent.join(&first), dev: None, ino: None },
        )
        .map_err(|e| io::Error::new(e.kind(), format!("recording the work directory: {e}")))?;
        for n in 0..1000u32 {
            let name = format!(".fsbench-{pid}-{n}");
            let shown = parent.join(&name);
            if n > 0 {
                rec.update(Resource::Workspace { path: shown.clone(), dev: None, ino: None })?;
            }
            match rustix::fs::mkdirat(&pfd, name.as_str(), Mode::from_raw_mode(0o700)) {
                Ok(()) => {}
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => {
                    let _ = rec.forget();
                    return Err(io::Error::new(
                        io::Error::from(e).kind(),
                        format!("cannot create a test directory in {}: {e}", parent.display()),
                    ));
                }
            }
            let dir = match open_made(&pfd, &name) {
                Ok(d) => d,
                Err(e) => {
                    // Not the directory we made (swapped): leave the name alone.
                    let _ = rec.forget();
                    return Err(with_path(e, "test directory", &shown));
                }
            };
            let st = rustix::fs::fstat(&dir)?;
            let (dev, ino) = (st.st_dev, st.st_ino);
            rec.update(Resource::Workspace {
                path: shown.clone(),
                dev: Some(dev),
                ino: Some(ino),
            })?;
            let path = anchored_path(&dir, dev, ino).unwrap_or_else(|| shown.clone());
            let parent_ino = rustix::fs::fstat(&pfd)?.st_ino;
            let ws = WorkspaceDir {
                parent: pfd,
                dir,
                name,
                shown,
                path,
                dev: AtomicU64::new(dev),
                ino,
                parent_path: parent.to_path_buf(),
                parent_ino,
            };
            return Ok(Guard::new(ws, rec));
        }
        let _ = rec.forget();
        Err(io::Error::other("could not find a free test directory name"))
    }
}

/// Open the directory the work directory is made in (a link may lead there: it is the user's
/// `--dir`).
fn open_parent(parent: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::open(parent, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
}

/// Open the directory just made and check it is ours: a directory (no link), owned by us,
/// empty.
fn open_made(parent: &OwnedFd, name: &str) -> io::Result<OwnedFd> {
    let dir = rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty())
        .map_err(|e| io::Error::new(io::Error::from(e).kind(), "replaced right after mkdir"))?;
    let st = rustix::fs::fstat(&dir)?;
    if st.st_uid != rustix::process::geteuid().as_raw() || st.st_mode & 0o7777 != 0o700 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "replaced right after mkdir by a directory that is not the one fsbench made",
        ));
    }
    if !secure::list(dir.as_fd())?.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "replaced right after mkdir by a directory that is not empty",
        ));
    }
    Ok(dir)
}

/// `/proc/self/fd/N`, if it resolves to the directory (`/proc` mounted).
fn anchored_path(dir: &OwnedFd, dev: u64, ino: u64) -> Option<PathBuf> {
    let p = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    let st = rustix::fs::stat(&p).ok()?;
    (st.st_dev == dev && st.st_ino == ino).then_some(p)
}

impl WorkspaceDir {
    /// The path to do I/O through: resolves to the directory made whatever its name in `--dir`
    /// points to now (`/proc/self/fd/N`; see the module docs). Valid in this process only.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the directory is in `--dir`, for messages.
    pub fn shown_path(&self) -> &Path {
        &self.shown
    }
}

impl Release for WorkspaceDir {
    type Error = io::Error;
    fn release(&mut self) -> io::Result<()> {
        let dev = self.dev.load(Ordering::Relaxed);
        secure::empty_dir(self.dir.as_fd(), dev)
            .map_err(|e| with_path(e, "emptying", &self.shown))?;
        match rustix::fs::statat(&self.parent, self.name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if st.st_dev == dev && st.st_ino == self.ino => {
                rustix::fs::unlinkat(&self.parent, self.name.as_str(), AtFlags::REMOVEDIR)
                    .map_err(|e| with_path(e.into(), "removing", &self.shown))
            }
            // Renamed or replaced by someone else: what the name points to now is not ours.
            Ok(_) | Err(_) => {
                eprintln!(
                    "fsbench: warning: {} no longer names the test directory fsbench made (moved by someone else?); it was emptied, nothing else was removed",
                    self.shown.display()
                );
                Ok(())
            }
        }
    }
    fn state_error(dir: &Path, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("updating state in {}: {e}", dir.display()))
    }
}

/// Around an eviction that unmounts the filesystem (`zpool export`, a remount): both
/// descriptors are parked ([`crate::sys::parkfd`]: their numbers, and so [`WorkspaceDir::path`],
/// stay), then taken again by name without following a link and checked to be the same
/// directories: the parent has its inode, the work directory is a directory (no link), owned
/// by us, mode 0700, with its inode, on the parent's filesystem (not something mounted on it).
/// Inode numbers survive an export/import (zfs) and a remount; a FUSE mount's device number
/// does not, so the new one is taken.
impl Anchor for WorkspaceDir {
    fn release(&self) -> io::Result<()> {
        crate::sys::parkfd::park(self.dir.as_fd())?;
        crate::sys::parkfd::park(self.parent.as_fd())
    }

    fn reanchor(&self) -> io::Result<()> {
        let changed = |what: &str| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} {what} after the filesystem was mounted again: not taken",
                    self.shown.display()
                ),
            )
        };
        let pfd = open_parent(&self.parent_path)
            .map_err(|e| with_path(e.into(), "directory", &self.parent_path))?;
        let pst = rustix::fs::fstat(&pfd)?;
        if pst.st_ino != self.parent_ino {
            return Err(changed("is in a directory that is not the one it was made in"));
        }
        let dir = rustix::fs::openat(&pfd, self.name.as_str(), DIR_FLAGS, Mode::empty())
            .map_err(|e| with_path(e.into(), "test directory", &self.shown))?;
        let st = rustix::fs::fstat(&dir)?;
        if st.st_uid != rustix::process::geteuid().as_raw() || st.st_mode & 0o7777 != 0o700 {
            return Err(changed("has another owner or mode"));
        }
        if st.st_ino != self.ino || st.st_dev != pst.st_dev {
            return Err(changed("is another directory (inode or filesystem differ)"));
        }
        crate::sys::parkfd::reseat(self.parent.as_fd(), &pfd)?;
        crate::sys::parkfd::reseat(self.dir.as_fd(), &dir)?;
        self.dev.store(st.st_dev, Ordering::Relaxed);
        Ok(())
    }
}

/// What [`remove_leftover`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leftover {
    /// Removed.
    Removed,
    /// Not there any more.
    Gone,
    /// Left alone, with why.
    NotOurs(String),
}

/// Remove a work directory a crashed run left (for `fsbench testbed cleanup`): only if `path`
/// still names the directory identified by `id` (device, inode), through fds, never following a
/// link or entering a mount. Without `id` (the run died between `mkdir` and identifying it),
/// only an empty directory is removed.
pub fn remove_leftover(path: &Path, id: Option<(u64, u64)>) -> io::Result<Leftover> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(Leftover::NotOurs("not a work directory path".into()));
    };
    if !name.to_string_lossy().starts_with(".fsbench-") {
        return Ok(Leftover::NotOurs("not named .fsbench-*".into()));
    }
    let pfd = match rustix::fs::open(
        parent,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(f) => f,
        Err(rustix::io::Errno::NOENT) => return Ok(Leftover::Gone),
        Err(e) => return Err(e.into()),
    };
    match id {
        Some(id) => match secure::remove_tree_at(pfd.as_fd(), name, Some(id)) {
            Ok(true) => Ok(Leftover::Removed),
            Ok(false) => Ok(Leftover::Gone),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                Ok(Leftover::NotOurs(e.to_string()))
            }
            Err(e) => Err(e),
        },
        None => match rustix::fs::unlinkat(&pfd, name, AtFlags::REMOVEDIR) {
            Ok(()) => Ok(Leftover::Removed),
            Err(rustix::io::Errno::NOENT) => Ok(Leftover::Gone),
            Err(rustix::io::Errno::NOTEMPTY | rustix::io::Errno::NOTDIR) => Ok(Leftover::NotOurs(
                "not identified when the run stopped, and not an empty directory".into(),
            )),
            Err(e) => Err(e.into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> (tempfile::TempDir, StateDir) {
        let t = tempfile::tempdir().unwrap();
        let sd = StateDir::new(t.path().join("state"));
        (t, sd)
    }

    #[test]
    fn created_recorded_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let (_t, sd) = state();
        let (p, shown) = {
            let w = Workspace::create_in(d.path(), &sd).unwrap();
            std::fs::create_dir(w.path().join("sub")).unwrap();
            std::fs::write(w.path().join("sub/f"), b"x").unwrap();
            let all = sd.read_all().unwrap();
            assert!(
                matches!(&all[0].1.entries[0].resource, Resource::Workspace { dev: Some(_), .. }),
                "{all:?}"
            );
            assert!(w.shown_path().join("sub/f").exists());
            (w.path().to_path_buf(), w.shown_path().to_path_buf())
        };
        assert!(p.starts_with("/proc/self/fd"), "{}", p.display());
        assert!(!shown.exists());
        assert!(sd.read_all().unwrap().is_empty(), "record forgotten");
    }

    #[test]
    fn missing_parent_is_clear() {
        let (_t, sd) = state();
        let e = Workspace::create_in(Path::new("/nonexistent/fsbench"), &sd).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/fsbench"), "{e}");
    }

    #[test]
    fn a_swapped_name_does_not_redirect_io_or_removal() {
        let d = tempfile::tempdir().unwrap();
        let (_t, sd) = state();
        let victim = tempfile::tempdir().unwrap();
        std::fs::write(victim.path().join("keep"), b"k").unwrap();
        let w = Workspace::create_in(d.path(), &sd).unwrap();
        let shown = w.shown_path().to_path_buf();
        let moved = d.path().join("moved");
        std::fs::rename(&shown, &moved).unwrap();
        std::os::unix::fs::symlink(victim.path(), &shown).unwrap();
        std::fs::write(w.path().join("keep"), b"bench").unwrap();
        assert_eq!(std::fs::read(victim.path().join("keep")).unwrap(), b"k");
        assert_eq!(std::fs::read(moved.join("keep")).unwrap(), b"bench");
        drop(w);
        assert_eq!(std::fs::read(victim.path().join("keep")).unwrap(), b"k");
        assert!(std::fs::symlink_metadata(&shown).unwrap().file_type().is_symlink());
        assert!(moved.read_dir().unwrap().next().is_none(), "emptied");
    }

    #[test]
    fn released_and_taken_again_under_the_same_path() {
        let d = tempfile::tempdir().unwrap();
        let (_t, sd) = state();
        let w = Workspace::create_in(d.path(), &sd).unwrap();
        std::fs::write(w.path().join("f"), b"x").unwrap();
        w.release().unwrap();
        assert!(std::fs::read(w.path().join("f")).is_err(), "nothing held while released");
        w.reanchor().unwrap();
        assert_eq!(std::fs::read(w.path().join("f")).unwrap(), b"x");
        // Swapped for another directory of the same name while released: refused, and the
        // path leads nowhere rather than into the other directory.
        w.release().unwrap();
        let shown = w.shown_path().to_path_buf();
        std::fs::rename(&shown, d.path().join("moved")).unwrap();
        std::fs::create_dir(&shown).unwrap();
        std::fs::set_permissions(&shown, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .unwrap();
        let e = w.reanchor().unwrap_err();
        assert!(e.to_string().contains("another directory"), "{e}");
        assert!(std::fs::write(w.path().join("g"), b"y").is_err());
        assert!(shown.read_dir().unwrap().next().is_none(), "nothing written in the impostor");
        std::fs::remove_dir(&shown).unwrap();
        std::os::unix::fs::symlink(d.path().join("moved"), &shown).unwrap();
        let e = w.reanchor().unwrap_err();
        assert!(e.to_string().contains("test directory"), "a link is not followed: {e}");
        std::fs::remove_file(&shown).unwrap();
        std::fs::rename(d.path().join("moved"), &shown).unwrap();
        w.reanchor().unwrap();
        assert_eq!(std::fs::read(w.path().join("f")).unwrap(), b"x");
    }

    #[test]
    fn leftover_is_removed_only_when_it_is_the_same_directory() {
        let d = tempfile::tempdir().unwrap();
        let (_t, sd) = state();
        let w = Workspace::create_in(d.path(), &sd).unwrap();
        std::fs::write(w.path().join("f"), b"x").unwrap();
        let shown = w.shown_path().to_path_buf();
        let id = (w.dev.load(Ordering::Relaxed), w.ino);
        let _ = w.keep();
        assert_eq!(
            remove_leftover(&shown, Some((id.0, id.1 + 1))).unwrap(),
            Leftover::NotOurs(format!(
                "{} is not the directory fsbench made (device/inode differ): left alone",
                shown.file_name().unwrap().to_string_lossy()
            ))
        );
        assert_eq!(remove_leftover(&shown, Some(id)).unwrap(), Leftover::Removed);
        assert!(!shown.exists());
        assert_eq!(remove_leftover(&shown, Some(id)).unwrap(), Leftover::Gone);
    }
}
