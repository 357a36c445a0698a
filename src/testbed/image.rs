//! Files on the host: the testbed's directory and its image files.
//!
//! Images are created sparse (mkfs discards the whole device anyway, which punches holes into the
//! file through the loop device), and once the filesystem is made the holes are filled by
//! [`Image::fill_holes`] according to [`ImageAlloc`], so that the first repetition of a
//! benchmark does not pay for the host filesystem allocating the image's blocks.

use super::error::{Result, TestbedError};
use super::state::{Resource, StateDir};
use crate::state::{Guard, Recorded, Release};
use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

/// Bytes available to root on the filesystem holding `dir` (`statvfs`: `f_bavail * f_frsize`;
/// fsbench runs as root, but reserved blocks are left alone on purpose).
pub fn available_bytes(dir: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(dir)?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Fail with a clear message unless `dir` can hold `needed_bytes` more. Sparse images take no
/// space when created, but a benchmark may fill them, so the full size is what counts.
pub fn check_space(dir: &Path, needed_bytes: u64) -> Result<()> {
    let available_bytes = available_bytes(dir).map_err(|e| TestbedError::io("statvfs", dir, e))?;
    if available_bytes < needed_bytes {
        return Err(TestbedError::HostSpace {
            dir: dir.to_path_buf(),
            needed_bytes,
            available_bytes,
        });
    }
    Ok(())
}

/// A directory fsbench created; removed on teardown (only if empty but for symlinks fsbench made).
pub type WorkDir = Guard<Dir>;

/// What a [`WorkDir`] owns.
#[derive(Debug)]
pub struct Dir {
    path: PathBuf,
}

impl Dir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Release for Dir {
    type Error = TestbedError;
    fn release(&mut self) -> Result<()> {
        remove_owned_dir(&self.path)
            .map_err(|e| TestbedError::io("removing directory", &self.path, e))
    }
    fn state_error(dir: &Path, e: io::Error) -> TestbedError {
        TestbedError::io("updating state in", dir, e)
    }
}

impl Guard<Dir> {
    /// Create `path` (its parents may exist or be created; only `path` itself is owned).
    pub fn create(path: &Path, state: &StateDir) -> Result<WorkDir> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| TestbedError::io("creating", parent, e))?;
        }
        let rec = Recorded::new(state, Resource::Directory { path: path.to_path_buf() })
            .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        if let Err(e) = fs::create_dir(path) {
            // Not ours: forget it without removing anything.
            let _ = rec.forget();
            return Err(TestbedError::io("creating directory", path, e));
        }
        let guard = Guard::new(Dir { path: path.to_path_buf() }, rec);
        // fsbench's mark, which `testbed cleanup` asks for before it removes anything here.
        let fd = rustix::fs::open(
            path,
            rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| TestbedError::io("opening directory", path, e.into()))?;
        super::mark::set_dir(fd.as_fd())
            .map_err(|e| TestbedError::io("marking directory", path, e))?;
        Ok(guard)
    }
}

/// Remove a directory that fsbench created: its symlinks first (never followed), then the
/// directory itself. Anything else inside makes this fail, so nothing unexpected is deleted.
pub fn remove_owned_dir(path: &Path) -> io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a directory path"));
    };
    let dir = match rustix::fs::open(
        parent,
        rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(d) => d,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    remove_owned_dir_at(dir.as_fd(), name)
}

/// [`remove_owned_dir`] for `name` in the open directory `parent`: no link is followed, the
/// directory itself included.
pub fn remove_owned_dir_at(parent: BorrowedFd<'_>, name: &std::ffi::OsStr) -> io::Result<()> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    let fd = match rustix::fs::openat(
        parent,
        name,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    for (n, ft) in crate::sys::secure::list(fd.as_fd())? {
        if ft == FileType::Symlink || (n == super::mark::MARK_FILE && ft == FileType::RegularFile) {
            rustix::fs::unlinkat(&fd, n.as_str(), AtFlags::empty())?;
        }
    }
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)?;
    Ok(())
}

/// How an image's blocks are allocated on the host before a benchmark (`--image-alloc`; its
/// values are the variants' names in lower case).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum ImageAlloc {
    /// Leave the image sparse: the host allocates blocks on first write (fsbench 0.1).
    Sparse,
    /// `fallocate(2)` the holes: blocks reserved as unwritten extents; the first write to each
    /// still converts its extent (a journal update on the host), which is cheap. The default:
    /// it costs no data written.
    #[default]
    Allocate,
    /// Write zeros into every hole: every block of the image is allocated and written on the host
    /// before the benchmark. Costs writing the image once.
    Zero,
}

impl ImageAlloc {
    /// The name used on the command line and in descriptions.
    pub fn name(self) -> &'static str {
        match self {
            ImageAlloc::Sparse => "sparse",
            ImageAlloc::Allocate => "allocate",
            ImageAlloc::Zero => "zero",
        }
    }
}

/// An image file (created sparse, see [`ImageAlloc`]); deleted on teardown.
pub type ImageFile = Guard<Image>;

/// What an [`ImageFile`] owns.
#[derive(Debug)]
pub struct Image {
    path: PathBuf,
    size_bytes: u64,
}

impl Image {
    /// Fill the image's holes as `mode` says (after mkfs: data already written is left alone).
    /// Returns the bytes that were holes.
    pub fn fill_holes(&self, mode: ImageAlloc) -> Result<u64> {
        fill_holes(&self.path, mode)
            .map_err(|e| TestbedError::io("allocating image", &self.path, e))
    }

    /// The image's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The image's apparent size.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }
}

impl Release for Image {
    type Error = TestbedError;
    fn release(&mut self) -> Result<()> {
        match fs::remove_file(&self.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(TestbedError::io("removing image", &self.path, e))
            }
            _ => Ok(()),
        }
    }
    fn state_error(dir: &Path, e: io::Error) -> TestbedError {
        TestbedError::io("updating state in", dir, e)
    }
}

impl Guard<Image> {
    /// Create a new sparse file of `size_bytes` at `path` (which must not exist).
    pub fn create(path: &Path, size_bytes: u64, state: &StateDir) -> Result<ImageFile> {
        let rec = Recorded::new(state, Resource::ImageFile { path: path.to_path_buf() })
            .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        let f = match fs::File::create_new(path) {
            Ok(f) => f,
            Err(e) => {
                // Someone else's file: forget it, delete nothing.
                let _ = rec.forget();
                return Err(TestbedError::io("creating image", path, e));
            }
        };
        let guard = Guard::new(Image { path: path.to_path_buf(), size_bytes }, rec);
        // fsbench's mark (where extended attributes exist; else its directory's mark vouches).
        super::mark::set(f.as_fd());
        // set_len extends without writing: the file stays sparse. On failure the guard deletes it.
        f.set_len(size_bytes).map_err(|e| TestbedError::io("creating image", path, e))?;
        Ok(guard)
    }
}

/// The holes of the file at `path`: (offset, length) ranges, from SEEK_HOLE/SEEK_DATA.
pub fn holes(path: &Path) -> io::Result<Vec<(u64, u64)>> {
    use rustix::fs::{seek, SeekFrom};
    let f = fs::File::open(path)?;
    let len = f.metadata()?.len();
    let mut out = Vec::new();
    let mut pos = 0u64;
    while pos < len {
        let hole = seek(&f, SeekFrom::Hole(pos)).map_err(io::Error::from)?;
        if hole >= len {
            break;
        }
        let data = match seek(&f, SeekFrom::Data(hole)) {
            Ok(d) => d.min(len),
            // ENXIO: no data after `hole`.
            Err(rustix::io::Errno::NXIO) => len,
            Err(e) => return Err(e.into()),
        };
        out.push((hole, data - hole));
        pos = data;
    }
    Ok(out)
}

fn fill_holes(path: &Path, mode: ImageAlloc) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    if mode == ImageAlloc::Sparse {
        return Ok(0);
    }
    let holes = holes(path)?;
    let f = fs::OpenOptions::new().write(true).open(path)?;
    let zeros = vec![0u8; 1 << 20];
    let mut total = 0;
    for (off, len) in holes {
        total += len;
        match mode {
            ImageAlloc::Allocate => {
                rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::KEEP_SIZE, off, len)
                    .map_err(io::Error::from)?
            }
            ImageAlloc::Zero => {
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(zeros.len() as u64) as usize;
                    f.write_all_at(&zeros[..n], off + done)?;
                    done += n as u64;
                }
            }
            ImageAlloc::Sparse => {}
        }
    }
    // On the host's disk before the benchmark starts, not written back during it.
    f.sync_all()?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn sparse_image_and_dir_lifecycle() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        let dir = WorkDir::create(&tmp.path().join("tb"), &sd).unwrap();
        let img = ImageFile::create(&dir.path().join("dev0.img"), 1 << 30, &sd).unwrap();
        let md = fs::metadata(img.path()).unwrap();
        assert_eq!(md.len(), 1 << 30);
        assert!(md.blocks() * 512 < 1 << 20, "image should be sparse");
        std::os::unix::fs::symlink("/dev/null", dir.path().join("link")).unwrap();
        assert_eq!(sd.read_all().unwrap()[0].1.entries.len(), 2);
        let p = img.path().to_path_buf();
        img.teardown().unwrap();
        assert!(!p.exists());
        let d = dir.path().to_path_buf();
        dir.teardown().unwrap();
        assert!(!d.exists());
        assert!(sd.read_all().unwrap().is_empty());
    }

    #[test]
    fn holes_are_filled_and_data_is_kept() {
        use std::os::unix::fs::FileExt;
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        for mode in [ImageAlloc::Allocate, ImageAlloc::Zero] {
            let img = ImageFile::create(&tmp.path().join(format!("{mode:?}.img")), 64 << 20, &sd)
                .unwrap();
            // What mkfs wrote: 1 MiB at 8 MiB.
            let f = fs::OpenOptions::new().write(true).open(img.path()).unwrap();
            f.write_all_at(&[7u8; 1 << 20], 8 << 20).unwrap();
            drop(f);
            let before = holes(img.path()).unwrap();
            assert_eq!(before.iter().map(|h| h.1).sum::<u64>(), 63 << 20, "{before:?}");
            assert_eq!(img.fill_holes(mode).unwrap(), 63 << 20);
            let md = fs::metadata(img.path()).unwrap();
            assert_eq!(md.len(), 64 << 20);
            assert!(md.blocks() * 512 >= 64 << 20, "{mode:?}: {} blocks", md.blocks());
            let data = fs::read(img.path()).unwrap();
            assert!(data[8 << 20..9 << 20].iter().all(|b| *b == 7), "{mode:?} kept the data");
            assert!(data[..8 << 20].iter().all(|b| *b == 0));
            if mode == ImageAlloc::Zero {
                assert!(holes(img.path()).unwrap().is_empty());
            }
            img.teardown().unwrap();
        }
    }

    #[test]
    fn existing_file_is_not_taken_or_deleted() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        let p = tmp.path().join("x.img");
        fs::write(&p, b"user data").unwrap();
        assert!(ImageFile::create(&p, 1 << 20, &sd).is_err());
        assert_eq!(fs::read(&p).unwrap(), b"user data");
        assert!(sd.read_all().unwrap().is_empty());
    }

    #[test]
    fn space_check_names_the_numbers() {
        let err = check_space(Path::new("/var/tmp"), u64::MAX).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("not enough space in /var/tmp"), "{msg}");
        check_space(Path::new("/var/tmp"), 1).unwrap();
    }
}
