//! Loop devices over image files, attached with direct I/O.
//!
//! `--direct-io=on` makes the loop driver open the image with `O_DIRECT`: the host page cache
//! holds no second copy of the test data (so "uncached" really means uncached once the
//! filesystem's own cache is emptied) and an fsync inside the testbed reaches the image.
//! Every detach first checks `/sys/block/loopN/loop/backing_file` names an image fsbench made.

use super::error::{Result, TestbedError};
use super::state::{Resource, StateDir};
use crate::state::{Guard, Recorded, Release};
use crate::sys::cmd::{Cmd, CmdError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An attached loop device; detached on teardown.
pub type LoopDevice = Guard<Loop>;

/// What a [`LoopDevice`] owns.
#[derive(Debug)]
pub struct Loop {
    device: PathBuf,
    backing: PathBuf,
}

impl Release for Loop {
    type Error = TestbedError;
    fn release(&mut self) -> Result<()> {
        detach_verified(&self.device, &self.backing).map(drop)
    }
    fn state_error(dir: &Path, e: std::io::Error) -> TestbedError {
        TestbedError::io("updating state in", dir, e)
    }
}

impl Guard<Loop> {
    /// `losetup --find --show --direct-io=on IMAGE`, recorded before and after.
    pub fn attach(image: &Path, state: &StateDir) -> Result<LoopDevice> {
        let rec = Recorded::new(
            state,
            Resource::LoopDevice { device: None, backing_file: image.to_path_buf() },
        )
        .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        let out = Cmd::new("losetup")
            .args(["--find", "--show", "--direct-io=on"])
            .arg(image)
            .hint("install the Debian package mount")
            .run();
        let out = match out {
            Ok(o) => o,
            Err(e) => {
                // losetup may have attached before failing; detach what is ours, then forget.
                for dev in find_by_backing(image) {
                    let _ = detach_verified(&dev, image);
                }
                let _ = rec.forget();
                return Err(match &e {
                    CmdError::Failed { stderr, .. } if stderr.contains("free loop device") => {
                        TestbedError::NoLoopDevice { detail: stderr.trim().to_string() }
                    }
                    _ => TestbedError::cmd("attaching loop device", e),
                });
            }
        };
        let device = PathBuf::from(out.trim());
        let update = rec.update(Resource::LoopDevice {
            device: Some(device.clone()),
            backing_file: image.to_path_buf(),
        });
        let guard = Guard::new(Loop { device, backing: image.to_path_buf() }, rec);
        update.map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        Ok(guard)
    }
}

impl Loop {
    /// `/dev/loopN`.
    pub fn device(&self) -> &Path {
        &self.device
    }

    /// `loopN`, the name under /sys/block.
    pub fn kernel_name(&self) -> String {
        kernel_name(&self.device)
    }

    /// Whether the loop driver really uses direct I/O (`/sys/block/loopN/loop/dio`).
    pub fn direct_io(&self) -> bool {
        std::fs::read_to_string(format!("/sys/block/{}/loop/dio", self.kernel_name()))
            .map(|s| s.trim() == "1")
            .unwrap_or(false)
    }
}

/// `/dev/loop3` -> `loop3`.
pub fn kernel_name(device: &Path) -> String {
    device.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The backing file of loop device `loopN`, if attached (the kernel appends " (deleted)" when
/// the file was unlinked; that suffix is removed).
pub fn backing_file(kernel_name: &str) -> Option<PathBuf> {
    let s = std::fs::read_to_string(format!("/sys/block/{kernel_name}/loop/backing_file")).ok()?;
    let s = s.trim_end_matches('\n');
    Some(PathBuf::from(s.strip_suffix(" (deleted)").unwrap_or(s)))
}

/// Loop devices currently backed by `image`.
pub fn find_by_backing(image: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return out;
    };
    for ent in rd.flatten() {
        let name = ent.file_name().to_string_lossy().into_owned();
        if name.starts_with("loop") && backing_file(&name).as_deref() == Some(image) {
            out.push(PathBuf::from("/dev").join(name));
        }
    }
    out.sort();
    out
}

/// Detach `device` if, and only if, it is backed by `image`. Returns whether it was attached.
/// Waits briefly for the kernel to finish (a device still open is auto-cleared on last close).
pub fn detach_verified(device: &Path, image: &Path) -> Result<bool> {
    let name = kernel_name(device);
    match backing_file(&name) {
        None => return Ok(false),
        Some(b) if b != image => {
            return Err(TestbedError::Check(format!(
                "not detaching {}: it is backed by {}, not by fsbench's image {}",
                device.display(),
                b.display(),
                image.display()
            )))
        }
        Some(_) => {}
    }
    Cmd::new("losetup")
        .arg("-d")
        .arg(device)
        .run()
        .map_err(|e| TestbedError::cmd(format!("detaching {}", device.display()), e))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while backing_file(&name).as_deref() == Some(image) {
        if Instant::now() > deadline {
            return Err(TestbedError::Check(format!(
                "{} is still attached to {} after `losetup -d` (still open?)",
                device.display(),
                image.display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(true)
}

/// Whether a loop device can be had (`losetup --find` prints the next free one).
pub fn check_free() -> Result<()> {
    match Cmd::new("losetup").arg("--find").hint("install the Debian package mount").run() {
        Ok(_) => Ok(()),
        Err(CmdError::Failed { stderr, .. }) => {
            Err(TestbedError::NoLoopDevice { detail: stderr.trim().to_string() })
        }
        Err(e) => Err(TestbedError::cmd("looking for a free loop device", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names() {
        assert_eq!(kernel_name(Path::new("/dev/loop12")), "loop12");
    }

    #[test]
    fn unknown_device_is_not_detached() {
        // No such loop device: nothing to do, nothing run.
        assert!(
            !detach_verified(Path::new("/dev/loop999999"), Path::new("/nonexistent.img")).unwrap()
        );
    }
}
