//! Opening a file a user named for reading, refusing what is not a regular file.
//!
//! `open(2)` of a FIFO for reading blocks until a writer comes (forever, if none does), and a
//! device or a directory is never what a list or a job file means. So every path fsbench reads
//! is opened `O_NONBLOCK` (a FIFO opens at once), checked with `fstat` to be a regular file, and
//! only then read (with `O_NONBLOCK` cleared, which a regular file ignores anyway).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Open `path` for reading if it is a regular file (following links, as a user's path may).
pub fn open(path: &Path) -> io::Result<File> {
    let f =
        File::options().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(path)?;
    let ft = f.metadata()?.file_type();
    if !ft.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let what = if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_dir() {
            "a directory"
        } else if ft.is_block_device() || ft.is_char_device() {
            "a device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is {what}, not a regular file", path.display()),
        ));
    }
    let flags = rustix::fs::fcntl_getfl(&f)?;
    rustix::fs::fcntl_setfl(&f, flags - rustix::fs::OFlags::NONBLOCK)?;
    Ok(f)
}

/// Read the regular file `path` as text (see [`open`]).
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let mut s = String::new();
    open(path)?.read_to_string(&mut s)?;
    Ok(s)
}

/// What kind of file `t` is, for a message ("a FIFO", "a block device", ...).
pub fn kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else {
        "a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_and_directories_are_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_to_string(&fifo).unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        let e = read_to_string(t.path()).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        std::fs::write(t.path().join("f"), "x").unwrap();
        assert_eq!(read_to_string(&t.path().join("f")).unwrap(), "x");
    }
}
