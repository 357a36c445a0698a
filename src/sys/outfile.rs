//! Writing output files (reports, charts) without being redirected.
//!
//! fsbench often runs as root in a shared directory (`/tmp`, a team's scratch space). Opening
//! `fsbench-report-1.html` with `O_CREAT | O_TRUNC` would write through a link planted under
//! that name to any file root can write (the kernel's `fs.protected_symlinks` is not something
//! to rely on). So every output is written to an `O_CREAT | O_EXCL | O_NOFOLLOW` temporary file
//! in the destination directory, fsync'd, and renamed into place: a rename replaces a name (a
//! planted link included) and never writes to what it points to. In a sticky directory the
//! kernel refuses to replace another user's entry, and that is reported as an error.
//!
//! Every file fsbench writes at a path a user gave goes through here (reports, SVG charts,
//! profile JSON and HTML, preload lists; the results database is made by [`ensure_regular`]).
//! The directory is opened by [`open_dir`]: one component at a time, no link followed that
//! another user owns.
//!
//! [`replace`] is for a path the user named (an earlier file of that name is replaced);
//! [`create_unique`] for names fsbench chooses: it never replaces anything, and if the name is
//! taken (another run's report) it picks `NAME-2.EXT`, `NAME-3.EXT`, ... so no report is lost.

use crate::sys::secure;
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

fn open_parent(path: &Path) -> io::Result<(OwnedFd, String)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?
        .to_string();
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = open_dir(parent, false)
        .map_err(|e| io::Error::new(e.kind(), format!("directory {}: {e}", parent.display())))?;
    Ok((dir, name))
}

const DIR_FLAGS: OFlags =
    OFlags::DIRECTORY.union(OFlags::NOFOLLOW).union(OFlags::RDONLY).union(OFlags::CLOEXEC);

/// Open the directory `path` a user named for output, one component at a time with
/// `O_NOFOLLOW`: a symbolic link on the way is followed only if root or we own it (a system's
/// own `/var/run -> /run`), never one another user planted (in a sticky `/tmp` anyone may
/// plant links, and `fs.protected_symlinks` may be off). Missing components are created
/// (0755) when `create` is set.
pub fn open_dir(path: &Path, create: bool) -> io::Result<OwnedFd> {
    use std::path::Component;
    let me = rustix::process::geteuid().as_raw();
    let start = if path.is_absolute() { "/" } else { "." };
    let mut fd = rustix::fs::open(start, DIR_FLAGS, Mode::empty())?;
    let mut so_far = PathBuf::from(start);
    for c in path.components() {
        let name = match c {
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir => std::ffi::OsStr::new(".."),
            Component::Normal(n) => n,
            Component::Prefix(_) => {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a Unix path"))
            }
        };
        so_far.push(name);
        fd = match rustix::fs::openat(&fd, name, DIR_FLAGS, Mode::empty()) {
            Ok(f) => f,
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(with(&so_far, e)),
                }
                rustix::fs::openat(&fd, name, DIR_FLAGS, Mode::empty())
                    .map_err(|e| with(&so_far, e))?
            }
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                let st = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|e| with(&so_far, e))?;
                if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::Symlink
                {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{} is not a directory", so_far.display()),
                    ));
                }
                if st.st_uid != 0 && st.st_uid != me {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{} is a symbolic link of uid {}: not followed (another user could point it anywhere); give the real directory",
                            so_far.display(),
                            st.st_uid
                        ),
                    ));
                }
                rustix::fs::openat(
                    &fd,
                    name,
                    OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .map_err(|e| with(&so_far, e))?
            }
            Err(e) => return Err(with(&so_far, e)),
        };
    }
    Ok(fd)
}

fn with(path: &Path, e: rustix::io::Errno) -> io::Error {
    io::Error::new(io::Error::from(e).kind(), format!("{}: {e}", path.display()))
}

/// Write `bytes` to `name` in the open directory `dir`, replacing a file of that name (never
/// writing through a link): see [`replace`].
pub fn replace_at(dir: BorrowedFd<'_>, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = write_temp(dir, name, bytes)?;
    if let Err(e) = rustix::fs::renameat(dir, tmp.as_str(), dir, name) {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
        return Err(e.into());
    }
    let _ = rustix::fs::fsync(dir);
    Ok(())
}

/// Make sure the file `path` exists as a regular file, never through a link: an existing
/// regular file is left as it is; a missing one is created empty (`O_CREAT | O_EXCL |
/// O_NOFOLLOW`, `mode`); a link (dangling or not) or anything else is refused. Its directory
/// is created if missing ([`open_dir`]). For files opened later by path by a library (the
/// results database).
pub fn ensure_regular(path: &Path, mode: u32) -> io::Result<()> {
    let (Some(name), parent) = (path.file_name(), path.parent()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file name"));
    };
    let parent = parent.filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = open_dir(parent, true)?;
    match rustix::fs::openat(
        &dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    ) {
        Ok(_) => return Ok(()),
        Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(with(path, e)),
    }
    let st =
        rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| with(path, e))?;
    match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::RegularFile => Ok(()),
        rustix::fs::FileType::Symlink => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} is a symbolic link: not followed; give the real file", path.display()),
        )),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        )),
    }
}

fn write_temp(dir: BorrowedFd<'_>, name: &str, bytes: &[u8]) -> io::Result<String> {
    let (tmp, f) = secure::create_temp(dir, name, 0o644)?;
    let mut f = File::from(f);
    if let Err(e) = f.write_all(bytes).and_then(|()| f.sync_all()) {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
        return Err(e);
    }
    Ok(tmp)
}

/// Write `bytes` to `path`, replacing a file of that name (never writing through a link; its
/// directory opened as [`open_dir`] does).
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    replace_at(dir.as_fd(), &name, bytes)
}

/// Write `bytes` to a new file named `path`, or `STEM-N.EXT` if that is taken; never replaces
/// anything. Returns the path written.
pub fn create_unique(path: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let (dir, name) = open_parent(path)?;
    let tmp = write_temp(dir.as_fd(), &name, bytes)?;
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (name.clone(), String::new()),
    };
    for n in 1..10_000u32 {
        let candidate = if n == 1 { name.clone() } else { format!("{stem}-{n}{ext}") };
        match place_new(dir.as_fd(), &tmp, &candidate) {
            Ok(()) => {
                let _ = rustix::fs::fsync(&dir);
                return Ok(path.with_file_name(candidate));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
                return Err(e);
            }
        }
    }
    let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
    Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{name}: no free name")))
}

/// Rename `tmp` to `name` only if `name` does not exist (`RENAME_NOREPLACE`; where the
/// filesystem lacks it, a hard link, which fails on an existing name too).
fn place_new(dir: BorrowedFd<'_>, tmp: &str, name: &str) -> io::Result<()> {
    match rustix::fs::renameat_with(dir, tmp, dir, name, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
            rustix::fs::linkat(dir, tmp, dir, name, AtFlags::empty())?;
            let _ = rustix::fs::unlinkat(dir, tmp, AtFlags::empty());
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_replaced_not_written_through() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"root's").unwrap();
        let out = t.path().join("fsbench-report-1.html");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        replace(&out, b"<html>").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"root's");
        assert_eq!(std::fs::read(&out).unwrap(), b"<html>");
        assert!(!std::fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
    }

    #[test]
    fn unique_names_never_replace() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, b"root's").unwrap();
        let out = t.path().join("fsbench-report-1.html");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        let a = create_unique(&out, b"A").unwrap();
        let b = create_unique(&out, b"B").unwrap();
        assert_eq!(a, t.path().join("fsbench-report-1-2.html"));
        assert_eq!(b, t.path().join("fsbench-report-1-3.html"));
        assert_eq!(std::fs::read(&victim).unwrap(), b"root's");
        assert_eq!(std::fs::read(&a).unwrap(), b"A");
        assert_eq!(std::fs::read(&b).unwrap(), b"B");
        let entries = std::fs::read_dir(t.path()).unwrap().count();
        assert_eq!(entries, 4, "no temporary file is left");
    }

    #[test]
    fn links_of_other_users_on_the_way_are_not_followed() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: needs root (a link owned by another user)");
            return;
        }
        let t = tempfile::tempdir().unwrap();
        let private = t.path().join("private");
        std::fs::create_dir(&private).unwrap();
        let link = t.path().join("svgs");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        rustix::fs::chownat(
            rustix::fs::CWD,
            &link,
            Some(rustix::fs::Uid::from_raw(65534)),
            None,
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .unwrap();
        let e = open_dir(&link, true).unwrap_err();
        assert!(e.to_string().contains("symbolic link of uid 65534"), "{e}");
        assert!(replace(&link.join("a.svg"), b"x").is_err());
        let e = ensure_regular(&link.join("db.sqlite"), 0o644).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_dir(&private).unwrap().count(), 0);
        // Root's own link is followed; a dangling link as the file is refused.
        rustix::fs::chownat(
            rustix::fs::CWD,
            &link,
            Some(rustix::fs::Uid::from_raw(0)),
            None,
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .unwrap();
        open_dir(&link, false).unwrap();
        std::os::unix::fs::symlink(private.join("made"), t.path().join("db")).unwrap();
        assert!(ensure_regular(&t.path().join("db"), 0o644).is_err());
        assert!(!private.join("made").exists());
        ensure_regular(&t.path().join("new.sqlite"), 0o644).unwrap();
        assert!(t.path().join("new.sqlite").is_file());
    }

    #[test]
    fn missing_directory_is_an_error() {
        let e = replace(Path::new("/nonexistent-dir/x.html"), b"x").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir"), "{e}");
    }
}
