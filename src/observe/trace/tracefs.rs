//! tracefs: finding (or mounting) it, and a tracing instance of our own as a guard.
//!
//! fsbench never touches the top-level buffer or anyone else's instance: it only writes inside
//! `instances/fsbench-PID-N`, which it records in the state file before `mkdir` and forgets
//! after `rmdir`, so `fsbench testbed cleanup` can remove one a crash left behind.
//!
//! If tracefs was not mounted, the first user in this process mounts it at
//! `/sys/kernel/tracing` and the last one unmounts it (a process-wide count, because tests
//! and a comparison may trace from several threads).

use super::TraceError;
use crate::state::{Guard, Recorded, Release, Resource, StateDir};
use crate::sys::pseudofs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Where tracefs is mounted by default.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// Its older location, under debugfs.
pub const TRACEFS_DEBUGFS: &str = "/sys/kernel/debug/tracing";
/// Prefix of every instance name fsbench creates.
pub const INSTANCE_PREFIX: &str = "fsbench-";

struct MountCount {
    users: usize,
    mounted_by_us: bool,
}

static MOUNT: Mutex<MountCount> = Mutex::new(MountCount { users: 0, mounted_by_us: false });
static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(0);

fn mount_count() -> std::sync::MutexGuard<'static, MountCount> {
    MOUNT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where tracefs is mounted now, if anywhere we look.
pub fn find_tracefs() -> Option<PathBuf> {
    [TRACEFS, TRACEFS_DEBUGFS]
        .into_iter()
        .find(|p| pseudofs::is_mounted("tracefs", p))
        .map(PathBuf::from)
}

/// A use of tracefs; the mount made for it (if any) goes when the last use does.
#[derive(Debug)]
pub struct TracefsRef {
    root: PathBuf,
}

impl TracefsRef {
    /// Find tracefs, mounting it at [`TRACEFS`] when it is nowhere.
    pub fn acquire() -> Result<TracefsRef, TraceError> {
        let mut mc = mount_count();
        let root = match find_tracefs() {
            Some(r) => r,
            None => {
                pseudofs::mount("tracefs", TRACEFS).map_err(|e| {
                    TraceError::Unavailable(format!(
                        "tracefs is not mounted and mounting it at {TRACEFS} failed: {e}"
                    ))
                })?;
                mc.mounted_by_us = true;
                PathBuf::from(TRACEFS)
            }
        };
        mc.users += 1;
        Ok(TracefsRef { root })
    }

    /// The mount point.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for TracefsRef {
    fn drop(&mut self) {
        let mut mc = mount_count();
        mc.users = mc.users.saturating_sub(1);
        if mc.users == 0 && mc.mounted_by_us {
            // Best effort: another process may hold a file open in it (EBUSY); then it stays,
            // which is harmless.
            if pseudofs::umount(TRACEFS).is_ok() {
                mc.mounted_by_us = false;
            }
        }
    }
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> TraceError + 'a {
    move |source| TraceError::Io { action, path: path.to_path_buf(), source }
}

/// A tracing instance fsbench created; removed on drop.
pub type Instance = Guard<InstanceDir>;

/// What an [`Instance`] owns.
#[derive(Debug)]
pub struct InstanceDir {
    path: PathBuf,
    // Declared last: dropped after the instance is removed.
    _tracefs: TracefsRef,
}

impl Release for InstanceDir {
    type Error = TraceError;
    fn release(&mut self) -> Result<(), TraceError> {
        // Stop writing into the buffer first, so nothing records while rmdir runs.
        let _ = std::fs::write(self.path.join("tracing_on"), "0");
        // The kernel refuses (EBUSY) while a file of the instance is still referenced: a
        // reader's last close can land moments after its thread was joined. Try again for up
        // to about a second before giving up (seen once in a full test run).
        let mut wait = std::time::Duration::from_millis(5);
        loop {
            match std::fs::remove_dir(&self.path) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e)
                    if e.raw_os_error() == Some(rustix::io::Errno::BUSY.raw_os_error())
                        && wait.as_millis() < 640 =>
                {
                    std::thread::sleep(wait);
                    wait *= 2;
                }
                Err(e) => {
                    return Err(TraceError::Io {
                        action: "removing tracing instance",
                        path: self.path.clone(),
                        source: e,
                    })
                }
            }
        }
    }
    fn state_error(dir: &Path, source: io::Error) -> TraceError {
        TraceError::State { path: dir.to_path_buf(), source }
    }
}

impl Guard<InstanceDir> {
    /// Record, then create `instances/fsbench-PID-N`.
    pub fn create(state: &StateDir) -> Result<Instance, TraceError> {
        let tracefs = TracefsRef::acquire()?;
        let dir = tracefs.root().join("instances");
        if !dir.is_dir() {
            return Err(TraceError::Unavailable(format!(
                "{} is missing: this kernel has no tracing instances",
                dir.display()
            )));
        }
        let n = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{INSTANCE_PREFIX}{}-{n}", std::process::id()));
        let rec = Recorded::new(state, Resource::TracingInstance { path: path.clone() })
            .map_err(|source| TraceError::State { path: state.path().to_path_buf(), source })?;
        if let Err(e) = std::fs::create_dir(&path) {
            let _ = rec.forget();
            return Err(match e.kind() {
                io::ErrorKind::PermissionDenied => TraceError::Unavailable(format!(
                    "cannot create a tracing instance in {}: {e}",
                    dir.display()
                )),
                _ => TraceError::Io { action: "creating tracing instance", path, source: e },
            });
        }
        Ok(Guard::new(InstanceDir { path, _tracefs: tracefs }, rec))
    }

    /// Stop recording, remove the instance and forget its record.
    pub fn remove(self) -> Result<(), TraceError> {
        self.teardown()
    }
}

impl InstanceDir {
    /// The instance directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `value` to the control file `rel` (e.g. `buffer_size_kb`).
    pub fn write(&self, rel: &str, value: &str) -> Result<(), TraceError> {
        let p = self.path.join(rel);
        std::fs::write(&p, value).map_err(io_err("writing", &p))
    }

    /// Read the control file `rel`.
    pub fn read(&self, rel: &str) -> Result<String, TraceError> {
        let p = self.path.join(rel);
        std::fs::read_to_string(&p).map_err(io_err("reading", &p))
    }
}

/// Remove an instance a crashed fsbench left (for `fsbench testbed cleanup`). Only paths under
/// `.../tracing/instances/fsbench-` are touched. Mounts tracefs for the duration if it is not
/// mounted (after an unmount the instance still exists in the kernel, with its buffers).
/// Returns whether an instance was removed.
pub fn remove_leftover_instance(path: &Path) -> io::Result<bool> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let parent = path.parent();
    let ours = name.starts_with(INSTANCE_PREFIX)
        && [TRACEFS, TRACEFS_DEBUGFS]
            .iter()
            .any(|root| parent == Some(Path::new(root).join("instances").as_path()));
    if !ours {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not an fsbench tracing instance", path.display()),
        ));
    }
    // Keep (or make) tracefs mounted while we look; it may be mounted at the other place now.
    let tracefs = TracefsRef::acquire().map_err(|e| io::Error::other(e.to_string()))?;
    let path = &tracefs.root().join("instances").join(name);
    if !path.exists() {
        return Ok(false);
    }
    let _ = std::fs::write(path.join("tracing_on"), "0");
    match std::fs::remove_dir(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftover_removal_refuses_foreign_paths() {
        for p in [
            "/sys/kernel/tracing/instances/other",
            "/sys/kernel/tracing/fsbench-1-0",
            "/tmp/instances/fsbench-1-0",
            "/sys/kernel/tracing/instances/fsbench-1-0/events",
        ] {
            let e = remove_leftover_instance(Path::new(p)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{p}");
        }
    }
}
