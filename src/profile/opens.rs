//! Files opened, by whom and when: fanotify `FAN_OPEN` marks on the profiled mounts.
//!
//! Why fanotify and not the `syscalls:sys_enter_openat` tracepoint: the tracepoint records the
//! *address* of the file name in the caller's memory, not the name (this kernel prints
//! `filename: 0x7ffd...`); reading it afterwards from `/proc/PID/mem` races with the process.
//! fanotify hands over an open descriptor of the very file that was opened, so its path
//! (`/proc/self/fd/N`), device and inode are exact, even for a file opened for a microsecond.
//! It also sees `execve` and `dlopen` of shared objects, and directories (`FAN_ONDIR`). It
//! needs CAP_SYS_ADMIN. A queue overflow (`FAN_Q_OVERFLOW`) is counted and reported.
//! The events of every process on the mount are collected; the caller keeps those of the
//! profiled process tree.

use super::ProfileError;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// One open seen by fanotify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenEvent {
    /// CLOCK_MONOTONIC time the event was read (within a poll of the open).
    pub ts_ns: u64,
    /// The opening process.
    pub pid: u32,
    /// `st_dev` of the file (userspace encoding).
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// Path at the time of the open (without the kernel's ` (deleted)` suffix).
    pub path: String,
    /// The file was already unlinked when the event was read.
    pub deleted: bool,
    /// A directory.
    pub is_dir: bool,
    /// Size in bytes at the open.
    pub size: u64,
}

/// What the watcher collected.
#[derive(Debug, Default)]
pub struct Opens {
    /// Every open, in the order read.
    pub events: Vec<OpenEvent>,
    /// `FAN_Q_OVERFLOW` events: opens lost because the queue was full.
    pub overflows: u64,
    /// Files (distinct device and inode) seen but not kept open: [`Opens::held`] was at its
    /// limit.
    pub not_held: u64,
    /// How many descriptors [`Opens::held`] may keep: [`MAX_HELD`], or fewer when the
    /// open-file limit is lower (a reserve is left for the rest of fsbench).
    pub held_limit: usize,
    /// The first descriptor fanotify gave for each (dev, inode), kept open until the profile
    /// is made: a file deleted during the run can still be mapped (FIEMAP through
    /// `/proc/self/fd/N`). Its space is freed when the profile is done. At most
    /// [`MAX_HELD`].
    pub held: std::collections::HashMap<(u64, u64), std::fs::File>,
}

/// Most descriptors kept (the open-file limit is raised to allow them, up to its hard limit).
pub const MAX_HELD: usize = 60_000;
/// Descriptors left to the rest of fsbench (tracing buffers, the command's pipes, the store)
/// and to fanotify itself, which opens one for every event of a read: a read of [`READ_BUF`]
/// holds up to 2,730 events of 24 bytes.
const FD_RESERVE: usize = 4096;
/// Bytes read from fanotify at a time.
const READ_BUF: usize = 64 * 1024;

impl Opens {
    /// A path that reaches (dev, ino) even after it was unlinked.
    pub fn held_path(&self, dev: u64, ino: u64) -> Option<std::path::PathBuf> {
        self.held.get(&(dev, ino)).map(|f| format!("/proc/self/fd/{}", f.as_raw_fd()).into())
    }
}

/// Raise the soft open-file limit to the hard one (for [`Opens::held`]); returns how many
/// descriptors may be held: below the limit by [`FD_RESERVE`], so holding files never makes
/// fsbench's own opens, or fanotify's, fail with EMFILE.
fn raise_nofile() -> usize {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let l = getrlimit(Resource::Nofile);
    if l.current < l.maximum {
        let _ = setrlimit(Resource::Nofile, Rlimit { current: l.maximum, maximum: l.maximum });
    }
    held_limit(getrlimit(Resource::Nofile).current)
}

/// [`MAX_HELD`] within an open-file limit `soft` (`None`: unlimited).
fn held_limit(soft: Option<u64>) -> usize {
    let room = soft.map_or(usize::MAX, |s| usize::try_from(s).unwrap_or(usize::MAX));
    MAX_HELD.min(room.saturating_sub(FD_RESERVE))
}

/// A running watcher.
#[derive(Debug)]
pub struct OpenWatcher {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Opens>>,
}

impl OpenWatcher {
    /// Mark the mounts holding `mountpoints` and start reading events.
    pub fn start(mountpoints: &[&Path]) -> Result<OpenWatcher, ProfileError> {
        // SAFETY: plain syscall.
        let fd = unsafe {
            libc::fanotify_init(
                libc::FAN_CLASS_NOTIF | libc::FAN_CLOEXEC | libc::FAN_NONBLOCK,
                (libc::O_RDONLY | libc::O_LARGEFILE | libc::O_CLOEXEC) as libc::c_uint,
            )
        };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            return Err(ProfileError::Unavailable(format!(
                "fanotify_init (needs CAP_SYS_ADMIN, CONFIG_FANOTIFY): {e}"
            )));
        }
        // SAFETY: fanotify_init returned a new descriptor we own.
        let fan = unsafe { OwnedFd::from_raw_fd(fd) };
        for m in mountpoints {
            let c = std::ffi::CString::new(m.as_os_str().as_encoded_bytes())
                .map_err(|_| ProfileError::Unavailable(format!("bad path {}", m.display())))?;
            // SAFETY: valid descriptor and NUL-terminated path.
            let rc = unsafe {
                libc::fanotify_mark(
                    fan.as_raw_fd(),
                    libc::FAN_MARK_ADD | libc::FAN_MARK_MOUNT,
                    libc::FAN_OPEN | libc::FAN_ONDIR,
                    libc::AT_FDCWD,
                    c.as_ptr(),
                )
            };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                return Err(ProfileError::Unavailable(format!(
                    "fanotify_mark on {}: {e}",
                    m.display()
                )));
            }
        }
        let limit = raise_nofile();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("fsbench-opens".into())
            .spawn(move || read_loop(fan, stop2, limit))
            .map_err(|e| ProfileError::Unavailable(format!("starting the open watcher: {e}")))?;
        Ok(OpenWatcher { stop, thread: Some(thread) })
    }

    /// Stop and return what was seen (events queued before the call are read first).
    pub fn stop(mut self) -> Opens {
        self.stop.store(true, Ordering::Release);
        self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default()
    }
}

impl Drop for OpenWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_loop(fan: OwnedFd, stop: Arc<AtomicBool>, held_limit: usize) -> Opens {
    let mut out = Opens { held_limit, ..Opens::default() };
    let mut buf = vec![0u8; READ_BUF];
    let mut not_held = std::collections::HashSet::new();
    let meta_len = std::mem::size_of::<libc::fanotify_event_metadata>();
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let mut pfd = libc::pollfd { fd: fan.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, if stopping { 0 } else { 20 }) };
        loop {
            // SAFETY: reading into a buffer we own, of its length.
            let n = unsafe { libc::read(fan.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            let ts_ns = crate::observe::trace::tracer::now_mono_ns();
            let mut off = 0usize;
            while off + meta_len <= n as usize {
                // SAFETY: the kernel wrote whole metadata records; read_unaligned copes with
                // any alignment of the buffer.
                let m: libc::fanotify_event_metadata =
                    unsafe { std::ptr::read_unaligned(buf.as_ptr().add(off).cast()) };
                if m.event_len == 0 {
                    break;
                }
                off += m.event_len as usize;
                if m.mask & libc::FAN_Q_OVERFLOW != 0 {
                    out.overflows += 1;
                }
                if m.fd < 0 {
                    continue;
                }
                // SAFETY: fanotify gave us this descriptor; we own and close it.
                let f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(m.fd) });
                let Ok(md) = f.metadata() else { continue };
                let link = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd()))
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let (path, deleted) = match link.strip_suffix(" (deleted)") {
                    Some(p) => (p.to_string(), true),
                    None => (link, false),
                };
                out.events.push(OpenEvent {
                    ts_ns,
                    pid: m.pid as u32,
                    dev: md.dev(),
                    ino: md.ino(),
                    path,
                    deleted,
                    is_dir: md.is_dir(),
                    size: md.len(),
                });
                let key = (md.dev(), md.ino());
                if out.held.len() < out.held_limit {
                    out.held.entry(key).or_insert(f);
                } else if !out.held.contains_key(&key) && not_held.insert(key) {
                    out.not_held += 1;
                }
            }
        }
        if stopping {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_files_stay_below_the_open_file_limit() {
        // 20,000 is this VM's hard limit: holding 60,000 would make every later open fail.
        assert_eq!(held_limit(Some(20_000)), 20_000 - FD_RESERVE);
        assert!(FD_RESERVE > READ_BUF / std::mem::size_of::<libc::fanotify_event_metadata>());
        assert_eq!(held_limit(Some(1_048_576)), MAX_HELD);
        assert_eq!(held_limit(None), MAX_HELD);
        assert_eq!(held_limit(Some(100)), 0);
    }
}
