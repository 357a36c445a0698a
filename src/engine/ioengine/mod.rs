//! I/O engines: how an operation reaches the kernel.
//!
//! Modelled on fio's `struct ioengine_ops`: an engine *queues* requests ([`IoEngine::queue`],
//! fio's `.queue`), hands the queued ones to the kernel ([`IoEngine::commit`], fio's `.commit`)
//! and *reaps* completions ([`IoEngine::reap`], fio's `.getevents` + `.event`). A synchronous
//! engine ([`Psync`]) does the system call inside `queue` and hands the result back at the next
//! `reap`; an asynchronous one (io_uring) fills a submission queue in `queue`, submits it in
//! `commit` and waits for completions in `reap`. The worker drives every engine through the same
//! loop: keep up to `iodepth` requests in flight, reap at least one, record each completion's
//! latency from the moment it was queued, refill.
//!
//! What an engine can do is declared once, in [`IoEngine::CAPS`] ([`Caps`]), and checked when a
//! workload is validated ([`Caps::check`]), never in the hot loop: a queue depth above
//! `max_depth`, O_DIRECT on an engine without it, or O_DIRECT transfers that are not multiples of
//! `direct_align` are errors that name the key to change.
//!
//! Namespace and whole-file operations of fileset tests (open, create, unlink, stat, readdir,
//! mkdir, rename, fsync of a directory, ...) are synchronous by nature: they are the trait's
//! provided methods ([`IoEngine::openat`] and the rest), one system call each, which an engine may
//! override (io_uring has opcodes for most of them). The null engine keeps them real: a
//! fileset's slots must match what exists on disk.
//!
//! The worker is generic over the engine (`worker::run::<Psync>`), so every call here is
//! monomorphised and inlined: no dynamic dispatch and no allocation per operation. One file per
//! engine:
//!
//! | engine | file | depth | what |
//! |---|---|---|---|
//! | `psync` | [`psync`] | 1 | `pread(2)`/`pwrite(2)`, one system call per op, as fio's engine of the same name |
//! | `null` | [`null`] | any | completes every data and sync op at once without a system call (fio's `null`): measures the harness's own cost |
//! | `mmap` | [`mmap`] | 1 | reads and writes copy from and into a shared mapping of the file; syncs are `msync` |
//! | `io_uring` | [`uring`] | 1..4096 | submission/completion rings, batch submit and reap, registered file, short transfers resubmitted |
//!
//! To add an engine: a file here implementing [`IoEngine`], a variant of
//! [`crate::model::job::EngineKind`] (its name, for the `engine` key) and one arm in the runner's
//! `match` that picks the monomorphised worker.

mod mmap;
mod null;
mod psync;
pub mod uring;

pub use mmap::Mmap;
pub use null::{Null, NULL_MAX_DEPTH};
pub use psync::Psync;
pub use uring::{Uring, URING_MAX_DEPTH};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

impl crate::model::job::EngineKind {
    /// The capabilities of this engine.
    pub fn caps(self) -> Caps {
        use crate::model::job::EngineKind as K;
        match self {
            K::Psync => Psync::CAPS,
            K::Null => Null::CAPS,
            K::IoUring => <Uring>::CAPS,
            K::Mmap => Mmap::CAPS,
        }
    }
}

/// What a queued request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// Read `len` bytes at `offset` into `buf` (`pread(2)`).
    Read,
    /// Write `len` bytes from `buf` at `offset` (`pwrite(2)`).
    Write,
    /// `fsync(2)` of the file.
    Fsync,
    /// `fdatasync(2)` of the file.
    Fdatasync,
    /// `syncfs(2)` of the filesystem holding the file.
    Syncfs,
}

/// One request (fio's `io_u`). Plain data: the buffer is a raw pointer because it must stay
/// valid, and unmoved, until the request is reaped, which the borrow checker cannot see across
/// `queue` and `reap`; [`IoEngine::queue`] is `unsafe` for that reason.
#[derive(Debug, Clone, Copy)]
pub struct Io {
    /// What to do.
    pub kind: IoKind,
    /// The open file.
    pub fd: RawFd,
    /// Data buffer (reads: written by the kernel; writes: read by it). Null for syncs.
    pub buf: *mut u8,
    /// Transfer length in bytes (0 for syncs).
    pub len: usize,
    /// File offset in bytes (0 for syncs).
    pub offset: u64,
    /// The caller's tag, returned in the request's [`Completion`] (the worker's slot index).
    pub tag: u32,
}

/// A finished request, as io_uring's CQE: the request's tag and its result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Completion {
    /// [`Io::tag`] of the request.
    pub tag: u32,
    /// Bytes transferred (reads and writes; 0 for syncs), or `-errno`.
    pub res: i64,
}

impl Completion {
    /// The result of a system call: bytes or `-errno`.
    #[inline(always)]
    pub fn of(tag: u32, r: Result<usize, Errno>) -> Completion {
        let res = match r {
            Ok(n) => n as i64,
            Err(e) => -(e.raw_os_error() as i64),
        };
        Completion { tag, res }
    }
}

/// What an engine can do, checked once when a workload is validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Largest queue depth (`iodepth`) it accepts; 1 for an engine that does one op at a time.
    pub max_depth: u32,
    /// Every request completes inside [`IoEngine::queue`] (fio's `FIO_SYNCIO`): a `reap` after a
    /// `queue` never waits.
    pub sync_io: bool,
    /// Accepts files opened with O_DIRECT.
    pub direct: bool,
    /// With O_DIRECT: transfer sizes, offsets and buffer addresses must be multiples of this.
    pub direct_align: u64,
}

impl Caps {
    /// Check a test's `iodepth` and O_DIRECT use against these capabilities; the error says
    /// what to change. `direct_sizes` lists, for O_DIRECT phases, each data op's
    /// `(fixed size or None when drawn from a distribution, random-offset alignment or None)`.
    pub fn check(
        &self,
        engine: &str,
        iodepth: u32,
        direct: bool,
        direct_sizes: &mut dyn Iterator<Item = (Option<u64>, Option<u64>)>,
    ) -> Result<(), String> {
        if iodepth > self.max_depth {
            return Err(format!(
                "engine `{engine}` runs at most iodepth = {} (one op at a time); use iodepth = 1, or engine = \"io_uring\" (an engine that queues)",
                self.max_depth
            ));
        }
        if direct {
            if !self.direct {
                return Err(format!("engine `{engine}` cannot open files with O_DIRECT; remove direct / open = [\"direct\"] or use another engine"));
            }
            let a = self.direct_align;
            for (size, align) in direct_sizes {
                let sizes_bad = size.is_none_or(|n| n % a != 0);
                if sizes_bad || align.is_some_and(|x| x % a != 0) {
                    return Err(format!(
                        "O_DIRECT needs fixed sizes and random offsets aligned to {a} bytes; use size and align multiples of {}",
                        crate::model::units::fmt_bytes(a)
                    ));
                }
            }
        }
        Ok(())
    }
}

/// One way of issuing file I/O: a queue of data and sync requests, plus synchronous namespace
/// operations. See the module documentation for the protocol.
///
/// Contract, for implementors:
/// - `queue` accepts up to the depth given to [`IoEngine::setup`] requests not yet reaped; the
///   worker never queues more.
/// - Every queued request completes exactly once, in some `reap`, with its tag; order is free.
/// - `reap(min, out)` returns how many completions it wrote to `out` (at most `out.len()`), and
///   blocks until at least `min` are available, or fewer only when fewer are in flight.
/// - Nothing in `queue`, `commit` or `reap` allocates, locks or formats: they are the hot loop.
pub trait IoEngine: Send + Sized {
    /// Engine name, as written in workloads (`engine = "psync"`) and shown in results.
    const NAME: &'static str;
    /// What the engine can do.
    const CAPS: Caps;

    /// An engine for one worker thread, able to hold `depth` requests in flight (1 ..=
    /// `CAPS.max_depth`). Called in the worker thread, before the start barrier (untimed).
    fn setup(depth: u32) -> std::io::Result<Self>;

    /// Apply the test's engine options (io_uring's batching and polling), after
    /// [`IoEngine::setup`] and before the first request (untimed). Engines without options
    /// ignore them (validation refuses them for other engines).
    fn configure(&mut self, _opts: &crate::model::job::UringOpts) -> std::io::Result<()> {
        Ok(())
    }

    /// Hand the engine the worker's data buffers, once, after [`IoEngine::configure`] and
    /// before the first request (untimed): every data request's buffer lies inside one of them.
    /// io_uring registers them with the ring when asked (`fixedbufs`); other engines ignore
    /// them.
    fn register_buffers(&mut self, _bufs: &[(*mut u8, usize)]) -> std::io::Result<()> {
        Ok(())
    }

    /// Queue one request.
    ///
    /// # Safety
    /// `io.fd` must stay open and `io.buf` valid for `io.len` bytes (writable for reads), unmoved
    /// and not otherwise accessed, until the request's completion has been reaped.
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()>;

    /// Hand everything queued so far to the kernel (io_uring: `io_uring_enter`). Synchronous
    /// engines have nothing to do.
    #[inline(always)]
    fn commit(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Write completions to `out`, waiting until at least `min` are available (or every
    /// in-flight request has completed); returns how many were written.
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> std::io::Result<usize>;

    /// Open a data file by path, with `std`'s flags (`openat(AT_FDCWD, path, flags|O_CLOEXEC,
    /// 0666)`, exactly the call `std::fs::OpenOptions::open` makes).
    fn open(
        &mut self,
        path: &std::path::Path,
        options: &std::fs::OpenOptions,
    ) -> std::io::Result<OwnedFd> {
        options.open(path).map(OwnedFd::from)
    }

    /// `openat(2)`.
    #[inline(always)]
    fn openat(
        &mut self,
        dir: BorrowedFd<'_>,
        path: &CStr,
        flags: OFlags,
        mode: Mode,
    ) -> Result<OwnedFd, Errno> {
        rustix::fs::openat(dir, path, flags, mode)
    }

    /// `close(2)`, with its error (dropping an `OwnedFd` ignores it).
    #[inline(always)]
    fn close(&mut self, fd: OwnedFd) -> Result<(), Errno> {
        use std::os::fd::IntoRawFd;
        let raw = fd.into_raw_fd();
        // SAFETY: we own raw (taken from the OwnedFd) and close it exactly once.
        let rc = unsafe { libc::close(raw) };
        if rc == 0 {
            Ok(())
        } else {
            Err(Errno::from_raw_os_error(
                std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
            ))
        }
    }

    /// `read(2)` at the file position (whole-file reads).
    #[inline(always)]
    fn read(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> Result<usize, Errno> {
        rustix::io::read(fd, buf)
    }

    /// `write(2)` at the file position (whole-file writes).
    #[inline(always)]
    fn write(&mut self, fd: BorrowedFd<'_>, buf: &[u8]) -> Result<usize, Errno> {
        rustix::io::write(fd, buf)
    }

    /// `fsync(2)` outside the queue (a created file, a directory).
    #[inline(always)]
    fn fsync(&mut self, fd: BorrowedFd<'_>) -> Result<(), Errno> {
        rustix::fs::fsync(fd)
    }

    /// `syncfs(2)` outside the queue (end of a fileset phase).
    #[inline(always)]
    fn syncfs(&mut self, fd: BorrowedFd<'_>) -> Result<(), Errno> {
        rustix::fs::syncfs(fd)
    }

    /// `unlinkat(2)` (`AtFlags::REMOVEDIR`: rmdir).
    #[inline(always)]
    fn unlinkat(&mut self, dir: BorrowedFd<'_>, path: &CStr, flags: AtFlags) -> Result<(), Errno> {
        rustix::fs::unlinkat(dir, path, flags)
    }

    /// `fstatat(2)`; returns the size, so the call cannot be optimised away.
    #[inline(always)]
    fn statat(&mut self, dir: BorrowedFd<'_>, path: &CStr) -> Result<u64, Errno> {
        rustix::fs::statat(dir, path, AtFlags::empty()).map(|s| s.st_size as u64)
    }

    /// `mkdirat(2)`.
    #[inline(always)]
    fn mkdirat(&mut self, dir: BorrowedFd<'_>, path: &CStr, mode: Mode) -> Result<(), Errno> {
        rustix::fs::mkdirat(dir, path, mode)
    }

    /// `renameat(2)` within one directory tree.
    #[inline(always)]
    fn renameat(&mut self, dir: BorrowedFd<'_>, from: &CStr, to: &CStr) -> Result<(), Errno> {
        rustix::fs::renameat(dir, from, dir, to)
    }

    /// Read every entry of an open directory (`getdents64`) through `buf`; returns the number
    /// of entries.
    #[inline(always)]
    fn readdir(&mut self, fd: BorrowedFd<'_>, buf: &mut Vec<u8>) -> Result<u64, Errno> {
        let mut entries = 0u64;
        let mut it = rustix::fs::RawDir::new(fd, buf.spare_capacity_mut());
        while let Some(e) = it.next() {
            entries += e?.file_name().to_bytes().len().min(1) as u64;
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_queue<E: IoEngine>(depth: u32) -> (u32, Vec<Completion>) {
        let f = tempfile::tempfile().unwrap();
        f.set_len(1 << 16).unwrap();
        use std::os::fd::AsRawFd;
        let mut e = E::setup(depth).unwrap();
        let mut bufs = vec![[0u8; 512]; depth as usize];
        for (k, b) in bufs.iter_mut().enumerate() {
            let io = Io {
                kind: IoKind::Read,
                fd: f.as_raw_fd(),
                buf: b.as_mut_ptr(),
                len: 512,
                offset: k as u64 * 512,
                tag: k as u32,
            };
            // SAFETY: the file and buffers outlive the reaps below.
            unsafe { e.queue(io).unwrap() };
        }
        e.commit().unwrap();
        let mut out = vec![Completion::default(); depth as usize];
        let mut got = Vec::new();
        while got.len() < depth as usize {
            let n = e.reap(1, &mut out).unwrap();
            assert!(n > 0, "{} reaped nothing with requests in flight", E::NAME);
            got.extend_from_slice(&out[..n]);
        }
        (depth, got)
    }

    #[test]
    fn psync_completes_each_request_with_its_bytes() {
        let (_, got) = run_queue::<Psync>(1);
        assert_eq!(got, [Completion { tag: 0, res: 512 }]);
    }

    #[test]
    fn null_completes_a_full_queue_with_every_tag_once() {
        let (depth, mut got) = run_queue::<Null>(16);
        got.sort_by_key(|c| c.tag);
        assert_eq!(got.len(), depth as usize);
        for (k, c) in got.iter().enumerate() {
            assert_eq!(*c, Completion { tag: k as u32, res: 512 });
        }
    }

    #[test]
    fn caps_reject_depth_and_direct_misuse_with_the_fix() {
        let e = Psync::CAPS.check("psync", 16, false, &mut std::iter::empty()).unwrap_err();
        assert!(e.contains("iodepth = 1"), "{e}");
        assert!(Null::CAPS.check("null", 16, false, &mut std::iter::empty()).is_ok());
        let e = Psync::CAPS
            .check("psync", 1, true, &mut [(Some(4096), Some(512))].into_iter())
            .unwrap_err();
        assert!(e.contains("aligned to 4096"), "{e}");
        let e = Psync::CAPS.check("psync", 1, true, &mut [(None, None)].into_iter()).unwrap_err();
        assert!(e.contains("fixed sizes"), "{e}");
        assert!(Psync::CAPS.check("psync", 1, true, &mut [(Some(8192), None)].into_iter()).is_ok());
    }
}
