//! A descriptor number kept while what it refers to is let go: [`park`] points the number at
//! `/dev/null` (so the filesystem it was on is no longer held busy, and no other `open` can be
//! given the number in between), [`reseat`] points it at a newly opened file again.
//!
//! Why: fsbench reaches its work directory through `/proc/self/fd/N` paths (never following a
//! link, see `engine::workspace`). A cache eviction that unmounts the filesystem (`zpool export`,
//! a remount) fails with "target is busy" while any descriptor is open on it; closing and
//! reopening would give the directory another number and break every path made from the old
//! one. `dup3` onto the same number replaces what it refers to atomically.

use rustix::fs::{Mode, OFlags};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

/// Point `fd`'s number at `/dev/null`: whatever it referred to is released (once no other
/// descriptor refers to it), the number stays taken.
pub fn park(fd: BorrowedFd<'_>) -> io::Result<()> {
    let null = rustix::fs::open("/dev/null", OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    reseat(fd, &null)
}

/// Point `fd`'s number at what `new` refers to (close-on-exec); `new` stays open for its owner
/// to drop.
pub fn reseat(fd: BorrowedFd<'_>, new: &OwnedFd) -> io::Result<()> {
    // SAFETY: `fd` is a live descriptor borrowed from its owner; the `OwnedFd` made here is
    // turned back into a raw number at once, so it never closes the owner's descriptor. `dup3`
    // replaces what the number refers to and leaves it open.
    let mut target = unsafe { OwnedFd::from_raw_fd(std::os::fd::AsRawFd::as_raw_fd(&fd)) };
    let r = rustix::io::dup3(new.as_fd(), &mut target, rustix::io::DupFlags::CLOEXEC);
    let _ = target.into_raw_fd();
    r.map_err(io::Error::from)
}

/// Whether `fd` refers to `/dev/null` (parked).
pub fn is_parked(fd: BorrowedFd<'_>) -> bool {
    match (rustix::fs::fstat(fd), rustix::fs::stat("/dev/null")) {
        (Ok(a), Ok(b)) => a.st_rdev == b.st_rdev && a.st_ino == b.st_ino && a.st_dev == b.st_dev,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_parked_number_is_kept_and_reseated() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::write(b.path().join("here"), b"b").unwrap();
        let flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let dir = rustix::fs::open(a.path(), flags, Mode::empty()).unwrap();
        let n = dir.as_raw_fd();
        let via = std::path::PathBuf::from(format!("/proc/self/fd/{n}"));
        park(dir.as_fd()).unwrap();
        assert!(is_parked(dir.as_fd()));
        assert!(
            std::fs::metadata(via.join("here")).is_err(),
            "no directory behind a parked number"
        );
        let other = rustix::fs::open(b.path(), flags, Mode::empty()).unwrap();
        reseat(dir.as_fd(), &other).unwrap();
        drop(other);
        assert_eq!(dir.as_raw_fd(), n);
        assert!(!is_parked(dir.as_fd()));
        assert_eq!(std::fs::read(via.join("here")).unwrap(), b"b");
    }
}
