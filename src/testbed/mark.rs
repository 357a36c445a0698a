//! fsbench's own mark on what it makes (image files, testbed directories), so that cleanup acts
//! only on what it can prove fsbench made, whatever a state record says.
//!
//! A record alone is not proof: cleanup runs as root and would detach, unmount and delete what
//! a forged or stale record names. So at creation every image file and testbed directory gets
//! an extended attribute, `trusted.fsbench` (only a process with `CAP_SYS_ADMIN` can set a
//! `trusted.*` attribute), or `user.fsbench` where trusted ones are not allowed (not root; then
//! it counts only on a file of our own uid, as only a file's owner may set it). On a filesystem
//! without extended attributes the directory gets a mark file (`.fsbench-made`) instead, which
//! vouches for the images directly inside it.

use rustix::fs::{AtFlags, FileType, Mode, OFlags, XattrFlags};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// The attribute names, strongest first.
const XATTRS: [&str; 2] = ["trusted.fsbench", "user.fsbench"];
/// The attribute's value.
const VALUE: &[u8] = b"made by fsbench";
/// The mark file of a directory on a filesystem without extended attributes.
pub const MARK_FILE: &str = ".fsbench-made";

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Mark the open file or directory `fd`; returns whether an attribute could be set.
pub fn set(fd: BorrowedFd<'_>) -> bool {
    XATTRS.iter().any(|n| rustix::fs::fsetxattr(fd, *n, VALUE, XattrFlags::empty()).is_ok())
}

/// Mark the directory `dir`: the attribute, else a mark file inside.
pub fn set_dir(dir: BorrowedFd<'_>) -> io::Result<()> {
    if set(dir) {
        return Ok(());
    }
    match rustix::fs::openat(
        dir,
        MARK_FILE,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    ) {
        Ok(_) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Whether the open file or directory `fd` carries the attribute (a `user.` one only on a
/// file of ours).
pub fn has(fd: BorrowedFd<'_>) -> bool {
    let mut buf = [0u8; 32];
    let Ok(st) = rustix::fs::fstat(fd) else { return false };
    XATTRS.iter().enumerate().any(|(i, n)| {
        (i == 0 || st.st_uid == euid())
            && rustix::fs::fgetxattr(fd, *n, &mut buf[..]).is_ok_and(|len| &buf[..len] == VALUE)
    })
}

/// Whether the open directory `dir` is marked: the attribute, or a mark file of ours inside.
pub fn dir_has(dir: BorrowedFd<'_>) -> bool {
    has(dir)
        || rustix::fs::statat(dir, MARK_FILE, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            FileType::from_raw_mode(st.st_mode) == FileType::RegularFile && st.st_uid == euid()
        })
}

/// Open `name` in `dir` without following a link, as a regular file or directory.
pub fn open_nofollow(dir: BorrowedFd<'_>, name: &std::ffi::OsStr) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Whether the image `name` in the directory `dir` is one fsbench made: it carries the
/// attribute, or `dir` carries fsbench's mark.
pub fn image_is_ours(dir: BorrowedFd<'_>, name: &std::ffi::OsStr) -> bool {
    let Ok(fd) = open_nofollow(dir, name) else { return false };
    let regular = rustix::fs::fstat(&fd)
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
    regular && (has(fd.as_fd()) || dir_has(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_and_unmarked() {
        let t = tempfile::tempdir_in("/var/tmp").unwrap();
        let d =
            rustix::fs::open(t.path(), OFlags::DIRECTORY | OFlags::RDONLY, Mode::empty()).unwrap();
        std::fs::write(t.path().join("a.img"), b"").unwrap();
        std::fs::write(t.path().join("b.img"), b"").unwrap();
        assert!(!image_is_ours(d.as_fd(), "a.img".as_ref()));
        assert!(!dir_has(d.as_fd()));
        let f = std::fs::File::open(t.path().join("a.img")).unwrap();
        assert!(set(f.as_fd()), "extended attributes on /var/tmp");
        assert!(image_is_ours(d.as_fd(), "a.img".as_ref()));
        assert!(!image_is_ours(d.as_fd(), "b.img".as_ref()));
        std::os::unix::fs::symlink(t.path().join("a.img"), t.path().join("l.img")).unwrap();
        assert!(!image_is_ours(d.as_fd(), "l.img".as_ref()), "a link is never ours");
        set_dir(d.as_fd()).unwrap();
        assert!(dir_has(d.as_fd()));
        assert!(image_is_ours(d.as_fd(), "b.img".as_ref()), "vouched for by its directory");
    }
}
