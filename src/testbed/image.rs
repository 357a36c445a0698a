//! Files on the host: the testbed's directory and its sparse image files.

use super::error::{Result, TestbedError};
use super::state::{RecordId, Resource, StateDir};
use std::fs;
use std::io;
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
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    state: StateDir,
    rec: Option<RecordId>,
}

impl WorkDir {
    /// Create `path` (its parents may exist or be created; only `path` itself is owned).
    pub fn create(path: &Path, state: &StateDir) -> Result<WorkDir> {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| TestbedError::io("creating", parent, e))?;
        }
        let rec = state
            .record(Resource::Directory { path: path.to_path_buf() })
            .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        let mut guard = WorkDir { path: path.to_path_buf(), state: state.clone(), rec: Some(rec) };
        if let Err(e) = fs::create_dir(path) {
            // Not ours: forget it without removing anything.
            if let Some(rec) = guard.rec.take() {
                let _ = guard.state.forget(&rec);
            }
            return Err(TestbedError::io("creating directory", path, e));
        }
        Ok(guard)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remove the directory and forget its record.
    pub fn teardown(mut self) -> Result<()> {
        self.down()
    }

    fn down(&mut self) -> Result<()> {
        let Some(rec) = self.rec.take() else {
            return Ok(());
        };
        remove_owned_dir(&self.path)
            .map_err(|e| TestbedError::io("removing directory", &self.path, e))?;
        self.state
            .forget(&rec)
            .map_err(|e| TestbedError::io("updating state in", self.state.path(), e))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("fsbench: {e}");
        }
    }
}

/// Remove a directory that fsbench created: its symlinks first (never followed), then the
/// directory itself. Anything else inside makes this fail, so nothing unexpected is deleted.
pub fn remove_owned_dir(path: &Path) -> io::Result<()> {
    let rd = match fs::read_dir(path) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for ent in rd {
        let ent = ent?;
        if ent.file_type()?.is_symlink() {
            fs::remove_file(ent.path())?;
        }
    }
    fs::remove_dir(path)
}

/// A sparse image file; deleted on teardown.
#[derive(Debug)]
pub struct ImageFile {
    path: PathBuf,
    size_bytes: u64,
    state: StateDir,
    rec: Option<RecordId>,
}

impl ImageFile {
    /// Create a new sparse file of `size_bytes` at `path` (which must not exist).
    pub fn create(path: &Path, size_bytes: u64, state: &StateDir) -> Result<ImageFile> {
        let rec = state
            .record(Resource::ImageFile { path: path.to_path_buf() })
            .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        let mut guard = ImageFile {
            path: path.to_path_buf(),
            size_bytes,
            state: state.clone(),
            rec: Some(rec),
        };
        let made = fs::File::create_new(path).map_err(|e| (e, false)).and_then(|f| {
            // set_len extends without writing: the file stays sparse.
            f.set_len(size_bytes).map_err(|e| (e, true))
        });
        if let Err((e, created)) = made {
            if !created {
                // Someone else's file: forget it, delete nothing.
                if let Some(rec) = guard.rec.take() {
                    let _ = guard.state.forget(&rec);
                }
            }
            return Err(TestbedError::io("creating image", path, e));
        }
        Ok(guard)
    }

    /// The image's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The image's apparent size.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Delete the image and forget its record.
    pub fn teardown(mut self) -> Result<()> {
        self.down()
    }

    fn down(&mut self) -> Result<()> {
        let Some(rec) = self.rec.take() else {
            return Ok(());
        };
        match fs::remove_file(&self.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(TestbedError::io("removing image", &self.path, e))
            }
            _ => {}
        }
        self.state
            .forget(&rec)
            .map_err(|e| TestbedError::io("updating state in", self.state.path(), e))
    }
}

impl Drop for ImageFile {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("fsbench: {e}");
        }
    }
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
