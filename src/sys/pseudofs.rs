//! Kernel pseudo-filesystems fsbench needs at their usual places: tracefs (the tracer) and
//! fusectl (the zfs-fuse watchdog aborts a stuck FUSE connection through it). A fresh machine
//! may have neither mounted; fsbench then mounts one for as long as it needs it and unmounts
//! what it mounted, never what it found.

use std::ffi::CString;
use std::io;
use std::path::Path;

/// Whether a filesystem of type `fstype` is mounted at `at` now.
pub fn is_mounted(fstype: &str, at: &str) -> bool {
    super::mountinfo::read()
        .map(|ms| ms.iter().any(|m| m.fstype == fstype && m.mountpoint == Path::new(at)))
        .unwrap_or(false)
}

/// `mount -t FSTYPE nodev AT`.
pub fn mount(fstype: &str, at: &str) -> io::Result<()> {
    let src = CString::new("nodev").map_err(io::Error::other)?;
    let target = CString::new(at).map_err(io::Error::other)?;
    let fstype = CString::new(fstype).map_err(io::Error::other)?;
    // SAFETY: all pointers are valid NUL-terminated strings for the duration of the call.
    let rc =
        unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `umount AT`.
pub fn umount(at: &str) -> io::Result<()> {
    let target = CString::new(at).map_err(io::Error::other)?;
    // SAFETY: a valid NUL-terminated path.
    let rc = unsafe { libc::umount2(target.as_ptr(), 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A pseudo-filesystem in use at `at`: found there, or mounted by [`Scoped::ensure`] and
/// unmounted (best effort) when this is dropped.
#[derive(Debug)]
pub struct Scoped {
    at: &'static str,
    mounted_by_us: bool,
}

impl Scoped {
    /// Use `fstype` at `at`, mounting it if it is not there.
    pub fn ensure(fstype: &str, at: &'static str) -> io::Result<Scoped> {
        if is_mounted(fstype, at) {
            return Ok(Scoped { at, mounted_by_us: false });
        }
        mount(fstype, at)?;
        Ok(Scoped { at, mounted_by_us: true })
    }

    /// Whether this guard mounted it (and will unmount it).
    pub fn mounted_by_us(&self) -> bool {
        self.mounted_by_us
    }
}

impl Drop for Scoped {
    fn drop(&mut self) {
        if self.mounted_by_us {
            // EBUSY if another process holds a file in it: then it stays, which is harmless.
            let _ = umount(self.at);
        }
    }
}
