//! Directories only their owner can change, and files made in them without following links.
//!
//! fsbench runs as root and acts on what its records say (unmount, detach, delete), so a record
//! another user could write or redirect is a way to make root destroy things. Every use of a
//! private directory therefore:
//!
//! 1. walks the path from `/` one component at a time with `openat(O_NOFOLLOW | O_DIRECTORY)`
//!    (no symlink anywhere in the path, no window between the check and the use);
//! 2. checks each ancestor is owned by root or by us and not writable by group or others unless
//!    sticky (`/tmp`: others cannot rename or delete our entries there);
//! 3. checks the directory itself is owned by us with no group or other permission bits (0700),
//!    creating missing components 0700;
//! 4. does everything else relative to the directory's fd: files are created as
//!    `O_CREAT | O_EXCL | O_NOFOLLOW` temporary files and renamed into place (`renameat` replaces
//!    a name, never writes through a link), read with `O_NOFOLLOW` and checked to be regular.
//!
//! [`remove_tree_at`] deletes a directory tree through fds as well: it never follows a symlink
//! (a link is unlinked, its target untouched) and never descends into another filesystem.

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Why a directory is not safe to keep records in.
#[derive(Debug, thiserror::Error)]
#[error("{path} is not safe for fsbench's records: {problem}. {fix}")]
pub struct UnsafeDir {
    /// The path checked.
    pub path: std::path::PathBuf,
    /// What is wrong.
    pub problem: String,
    /// How to fix it.
    pub fix: String,
}

fn unsafe_dir(path: &Path, problem: String, fix: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        UnsafeDir { path: path.to_path_buf(), problem, fix: fix.to_string() },
    )
}

fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

const DIR_FLAGS: OFlags =
    OFlags::DIRECTORY.union(OFlags::NOFOLLOW).union(OFlags::RDONLY).union(OFlags::CLOEXEC);

/// Open the directory `path`, checking it and every ancestor (see the module docs). Missing
/// components are created 0700 when `create` is set; otherwise a missing directory is
/// `NotFound`.
pub fn open_private_dir(path: &Path, create: bool) -> io::Result<OwnedFd> {
    if !path.is_absolute() {
        return Err(unsafe_dir(path, "not an absolute path".into(), "Give an absolute path."));
    }
    let me = euid();
    let mut fd = rustix::fs::open("/", DIR_FLAGS, Mode::empty())?;
    check_ancestor(&fd, Path::new("/"), me)?;
    let comps: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(Ok(n)),
            Component::RootDir | Component::CurDir => None,
            _ => Some(Err(())),
        })
        .collect::<Result<_, _>>()
        .map_err(|_| unsafe_dir(path, "contains `..`".into(), "Give the path without `..`."))?;
    let mut so_far = std::path::PathBuf::from("/");
    for (i, name) in comps.iter().enumerate() {
        so_far.push(name);
        let last = i + 1 == comps.len();
        let next = match rustix::fs::openat(&fd, *name, DIR_FLAGS, Mode::empty()) {
            Ok(f) => f,
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&fd, *name, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                rustix::fs::openat(&fd, *name, DIR_FLAGS, Mode::empty())
                    .map_err(|e| not_dir(&so_far, e))?
            }
            Err(e) => return Err(not_dir(&so_far, e)),
        };
        if last {
            check_private(&next, &so_far, me)?;
        } else {
            check_ancestor(&next, &so_far, me)?;
        }
        fd = next;
    }
    if comps.is_empty() {
        return Err(unsafe_dir(
            path,
            "is the root directory".into(),
            "Give a directory of its own.",
        ));
    }
    Ok(fd)
}

/// Open the directory `path` after checking it and every ancestor is owned by root or by us and
/// not writable by other users unless sticky: nobody else can rename, replace or plant what is
/// in it. Missing components are created (0755) when `create` is set. For directories fsbench
/// puts its own files in (the testbed work directory), which need not be private.
pub fn open_trusted_dir(path: &Path, create: bool) -> io::Result<OwnedFd> {
    if !path.is_absolute() {
        return Err(unsafe_dir(path, "not an absolute path".into(), "Give an absolute path."));
    }
    let me = euid();
    let mut fd = rustix::fs::open("/", DIR_FLAGS, Mode::empty())?;
    check_ancestor(&fd, Path::new("/"), me)?;
    let mut so_far = std::path::PathBuf::from("/");
    for c in path.components() {
        let name = match c {
            Component::Normal(n) => n,
            Component::RootDir | Component::CurDir => continue,
            _ => {
                return Err(unsafe_dir(path, "contains `..`".into(), "Give the path without `..`."))
            }
        };
        so_far.push(name);
        let next = match rustix::fs::openat(&fd, name, DIR_FLAGS, Mode::empty()) {
            Ok(f) => f,
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                rustix::fs::openat(&fd, name, DIR_FLAGS, Mode::empty())
                    .map_err(|e| not_dir(&so_far, e))?
            }
            Err(e) => return Err(not_dir(&so_far, e)),
        };
        check_ancestor(&next, &so_far, me)?;
        fd = next;
    }
    Ok(fd)
}

fn not_dir(path: &Path, e: rustix::io::Errno) -> io::Error {
    match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => {
            let what = match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => "is a symbolic link",
                _ => "is not a directory",
            };
            unsafe_dir(
                path,
                what.into(),
                "Give the real path of a directory (no symbolic links in it).",
            )
        }
        rustix::io::Errno::NOENT => io::Error::new(
            io::ErrorKind::NotFound,
            format!("{}: no such directory", path.display()),
        ),
        e => io::Error::new(io::Error::from(e).kind(), format!("{}: {e}", path.display())),
    }
}

fn check_ancestor(fd: &OwnedFd, path: &Path, me: u32) -> io::Result<()> {
    let st = rustix::fs::fstat(fd)?;
    let mode = st.st_mode;
    if st.st_uid != 0 && st.st_uid != me {
        return Err(unsafe_dir(
            path,
            format!("it is owned by uid {}, who could replace what is below it", st.st_uid),
            "Use a directory whose parents belong to root.",
        ));
    }
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(unsafe_dir(
            path,
            format!(
                "mode {:o} lets other users rename what is in it (and it is not sticky)",
                mode & 0o7777
            ),
            "Use a directory whose parents only root can write to.",
        ));
    }
    Ok(())
}

fn check_private(fd: &OwnedFd, path: &Path, me: u32) -> io::Result<()> {
    let st = rustix::fs::fstat(fd)?;
    if st.st_uid != me {
        return Err(unsafe_dir(
            path,
            format!(
                "it is owned by uid {}, not by uid {me}: another user may have made it to plant records",
                st.st_uid
            ),
            "Check what is in it, remove it, and let fsbench create it again.",
        ));
    }
    if st.st_mode & 0o077 != 0 {
        return Err(unsafe_dir(
            path,
            format!(
                "mode {:o} gives other users access (fsbench makes it 0700)",
                st.st_mode & 0o7777
            ),
            "Check what is in it, then `chmod 700` it.",
        ));
    }
    Ok(())
}

/// Write `bytes` to `name` in `dir` atomically: an `O_EXCL | O_NOFOLLOW` temporary file in the
/// same directory, fsync'd and renamed over `name`, then the directory fsync'd.
pub fn write_atomic(dir: BorrowedFd<'_>, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
    let (tmp, f) = create_temp(dir, name, mode)?;
    let mut f = File::from(f);
    let done = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| rustix::fs::renameat(dir, tmp.as_str(), dir, name).map_err(io::Error::from));
    if let Err(e) = done {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
        return Err(e);
    }
    rustix::fs::fsync(dir)?;
    Ok(())
}

/// Create a fresh temporary file `.NAME.PID.N.tmp` in `dir` with `O_CREAT | O_EXCL |
/// O_NOFOLLOW`: a name that exists (a planted file or link) is skipped, never opened.
pub fn create_temp(dir: BorrowedFd<'_>, name: &str, mode: u32) -> io::Result<(String, OwnedFd)> {
    let pid = std::process::id();
    for _ in 0..1000 {
        let tmp = format!(".{name}.{pid}.{:016x}.tmp", fastrand::u64(..));
        match rustix::fs::openat(
            dir,
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        ) {
            Ok(f) => return Ok((tmp, f)),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary file name"))
}

/// Open `name` in `dir` for reading without following a link (and without blocking on a FIFO);
/// anything but a regular file is refused.
pub fn open_regular(dir: BorrowedFd<'_>, name: &str) -> io::Result<File> {
    let f = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&f)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{name} is not a regular file"),
        ));
    }
    Ok(File::from(f))
}

/// Read the regular file `name` in `dir` (see [`open_regular`]).
pub fn read_regular(dir: BorrowedFd<'_>, name: &str) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    open_regular(dir, name)?.read_to_end(&mut out)?;
    Ok(out)
}

/// Open (creating 0600) the lock file `name` in `dir`, never through a link.
pub fn open_lock(dir: BorrowedFd<'_>, name: &str) -> io::Result<File> {
    let f = rustix::fs::openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let st = rustix::fs::fstat(&f)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_uid != euid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("lock file {name} is not a regular file of ours"),
        ));
    }
    Ok(File::from(f))
}

/// Remove `name` from `dir`; a missing name is fine.
pub fn unlink(dir: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Names of the entries of `dir` (without `.` and `..`).
pub fn list(dir: BorrowedFd<'_>) -> io::Result<Vec<(String, FileType)>> {
    let mut out = Vec::new();
    for ent in Dir::read_from(dir)? {
        let ent = ent?;
        let name = ent.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        out.push((String::from_utf8_lossy(name).into_owned(), ent.file_type()));
    }
    Ok(out)
}

/// Delete the directory `name` in `parent` and everything below it, through fds: symlinks are
/// unlinked (their targets untouched), nothing on another filesystem (a mount inside) is
/// entered or removed, and the directory must still be the one identified by `expect` (device,
/// inode) when given. Returns whether anything was there to remove.
pub fn remove_tree_at(
    parent: BorrowedFd<'_>,
    name: &OsStr,
    expect: Option<(u64, u64)>,
) -> io::Result<bool> {
    let fd = match rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let st = rustix::fs::fstat(&fd)?;
    if let Some((dev, ino)) = expect {
        if st.st_dev != dev || st.st_ino != ino {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not the directory fsbench made (device/inode differ): left alone",
                    Path::new(name).display()
                ),
            ));
        }
    }
    empty_dir(fd.as_fd(), st.st_dev)?;
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?;
    Ok(true)
}

/// Remove everything inside the directory `dir` (on device `dev`), see [`remove_tree_at`].
pub fn empty_dir(dir: BorrowedFd<'_>, dev: u64) -> io::Result<()> {
    // Collect first: deleting while reading a directory stream may skip entries.
    let mut names: Vec<(Vec<u8>, FileType)> = Vec::new();
    for ent in Dir::read_from(dir)? {
        let ent = ent?;
        let n = ent.file_name().to_bytes();
        if n != b"." && n != b".." {
            names.push((n.to_vec(), ent.file_type()));
        }
    }
    for (name, ft) in names {
        let name = OsStr::from_bytes(&name);
        let is_dir = match ft {
            FileType::Directory => true,
            FileType::Unknown => {
                let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
                FileType::from_raw_mode(st.st_mode) == FileType::Directory
            }
            _ => false,
        };
        if is_dir {
            let sub = rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty())?;
            let st = rustix::fs::fstat(&sub)?;
            if st.st_dev != dev {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} is a mount point: not removed", Path::new(name).display()),
                ));
            }
            empty_dir(sub.as_fd(), dev)?;
            rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
        } else {
            match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_0700_and_refuses_open_modes_and_links() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a/state");
        let fd = open_private_dir(&p, true).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o700);
        write_atomic(fd.as_fd(), "x.json", b"{}", 0o600).unwrap();
        assert_eq!(read_regular(fd.as_fd(), "x.json").unwrap(), b"{}");
        assert_eq!(list(fd.as_fd()).unwrap().len(), 1, "no temporary file is left");

        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = open_private_dir(&p, false).unwrap_err();
        assert!(e.to_string().contains("mode 755"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();

        // A parent writable by others (not sticky) is refused.
        std::fs::set_permissions(t.path().join("a"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        let e = open_private_dir(&p, false).unwrap_err();
        assert!(e.to_string().contains("not sticky"), "{e}");
        std::fs::set_permissions(t.path().join("a"), std::fs::Permissions::from_mode(0o700))
            .unwrap();

        let link = t.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let e = open_private_dir(&link, true).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = open_private_dir(&link.join("sub"), true).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(!p.join("sub").exists());
    }

    #[test]
    fn trusted_dirs_are_changeable_only_by_root_or_us() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("work");
        open_trusted_dir(&p, true).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        open_trusted_dir(&p, false).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = open_trusted_dir(&p, false).unwrap_err();
        assert!(e.to_string().contains("not sticky"), "{e}");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o1777)).unwrap();
        open_trusted_dir(&p, false).unwrap();
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
            let e = open_trusted_dir(&p, false).unwrap_err();
            assert!(e.to_string().contains("owned by uid 65534"), "{e}");
        }
    }

    #[test]
    fn planted_names_are_not_opened_and_links_not_read() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s");
        let fd = open_private_dir(&p, true).unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"secret").unwrap();
        std::os::unix::fs::symlink(&victim, p.join("r.json")).unwrap();
        assert!(read_regular(fd.as_fd(), "r.json").is_err());
        std::os::unix::fs::symlink(&victim, p.join(".cleanup.lock")).unwrap();
        assert!(open_lock(fd.as_fd(), ".cleanup.lock").is_err());
        write_atomic(fd.as_fd(), "r.json", b"new", 0o600).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"secret");
        assert!(!std::fs::symlink_metadata(p.join("r.json")).unwrap().file_type().is_symlink());
    }

    #[test]
    fn tree_removal_never_follows_links() {
        let t = tempfile::tempdir().unwrap();
        let keep = t.path().join("keep");
        std::fs::create_dir(&keep).unwrap();
        std::fs::write(keep.join("f"), b"k").unwrap();
        let w = t.path().join("w");
        std::fs::create_dir_all(w.join("d/e")).unwrap();
        std::fs::write(w.join("d/e/f"), b"x").unwrap();
        std::os::unix::fs::symlink(&keep, w.join("d/link")).unwrap();
        std::os::unix::fs::symlink(keep.join("f"), w.join("flink")).unwrap();
        let root = rustix::fs::open(t.path(), DIR_FLAGS, Mode::empty()).unwrap();
        use std::os::unix::fs::MetadataExt;
        let md = std::fs::metadata(&w).unwrap();
        let e = remove_tree_at(root.as_fd(), OsStr::new("w"), Some((md.dev(), md.ino() + 1)))
            .unwrap_err();
        assert!(e.to_string().contains("not the directory"), "{e}");
        assert!(remove_tree_at(root.as_fd(), OsStr::new("w"), Some((md.dev(), md.ino()))).unwrap());
        assert!(!w.exists());
        assert_eq!(std::fs::read(keep.join("f")).unwrap(), b"k");
        assert!(!remove_tree_at(root.as_fd(), OsStr::new("w"), None).unwrap());
    }
}
