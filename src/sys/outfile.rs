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
    let dir = rustix::fs::open(
        parent,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        io::Error::new(io::Error::from(e).kind(), format!("directory {}: {e}", parent.display()))
    })?;
    Ok((dir, name))
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

/// Write `bytes` to `path`, replacing a file of that name (never writing through a link).
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = open_parent(path)?;
    let tmp = write_temp(dir.as_fd(), &name, bytes)?;
    if let Err(e) = rustix::fs::renameat(&dir, tmp.as_str(), &dir, name.as_str()) {
        let _ = rustix::fs::unlinkat(&dir, tmp.as_str(), AtFlags::empty());
        return Err(e.into());
    }
    let _ = rustix::fs::fsync(&dir);
    Ok(())
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
    fn missing_directory_is_an_error() {
        let e = replace(Path::new("/nonexistent-dir/x.html"), b"x").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir"), "{e}");
    }
}
