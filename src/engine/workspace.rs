//! The test subdirectory fsbench creates under the target directory, removed when dropped.

use std::io;
use std::path::{Path, PathBuf};

/// `DIR/.fsbench-PID-N`: every test file lives here; the guard removes it on drop (success,
/// error, or Ctrl-C unwinding through the runner).
#[derive(Debug)]
pub struct Workspace {
    path: PathBuf,
}

impl Workspace {
    /// Create a fresh subdirectory of `parent`. Fails clearly if `parent` is missing or read-only.
    pub fn create(parent: &Path) -> io::Result<Workspace> {
        let meta = std::fs::metadata(parent).map_err(|e| {
            io::Error::new(e.kind(), format!("directory {}: {e}", parent.display()))
        })?;
        if !meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a directory", parent.display()),
            ));
        }
        for n in 0..1000u32 {
            let path = parent.join(format!(".fsbench-{}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(Workspace { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot create a test directory in {}: {e}", parent.display()),
                    ))
                }
            }
        }
        Err(io::Error::other("could not find a free test directory name"))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            if e.kind() != io::ErrorKind::NotFound {
                eprintln!("fsbench: warning: could not remove {}: {e}", self.path.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let p = {
            let w = Workspace::create(d.path()).unwrap();
            std::fs::write(w.path().join("f"), b"x").unwrap();
            w.path().to_path_buf()
        };
        assert!(!p.exists());
    }

    #[test]
    fn missing_parent_is_clear() {
        let e = Workspace::create(Path::new("/nonexistent/fsbench")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/fsbench"), "{e}");
    }
}
