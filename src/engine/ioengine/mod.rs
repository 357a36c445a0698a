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
//! What an engine can do is declared once, in its declaration ([`IoEngine::SPEC`], a
//! [`Caps`] beside its name and keys, in `crate::workload::engines`), and checked when a
//! workload is validated ([`Caps::check`]), never in the hot loop: a queue depth above
//! `max_depth`, O_DIRECT on an engine without it, or O_DIRECT transfers that are not multiples of
//! `direct_align` are errors that name the key to change. An engine's own options (io_uring's
//! batching and polling) reach it as the test's opaque [`EngineOptions`], which it reads into
//! its own [`IoEngine::Options`] once per phase, before the workers start: nothing
//! engine-specific is in this trait's signatures, the worker's plan or the runner.
//!
//! Namespace and whole-file operations of fileset tests (open, create, unlink, stat, readdir,
//! mkdir, rename, fsync of a directory, ...) are synchronous by nature: they are the trait's
//! provided methods ([`IoEngine::openat`] and the rest), one system call each, which an engine may
//! override (io_uring has opcodes for most of them). The null engine keeps them real: a
//! fileset's slots must match what exists on disk.
//!
//! The worker is generic over the engine (`worker::run::<Psync>`), so every call here is
//! monomorphised and inlined: no dynamic dispatch and no allocation per operation. The runner
//! picks the monomorphised code for a test's engine once per phase ([`with_engine`]). One file
//! per engine:
//!
//! | engine | file | depth | what |
//! |---|---|---|---|
//! | `psync` | [`psync`] | 1 | `pread(2)`/`pwrite(2)`, one system call per op, as fio's engine of the same name |
//! | `null` | [`null`] | any | completes every data and sync op at once without a system call (fio's `null`): measures the harness's own cost |
//! | `mmap` | [`mmap`] | 1 | reads and writes copy from and into a shared mapping of the file; syncs are `msync` |
//! | `io_uring` | [`uring`] | 1..4096 | submission/completion rings, batch submit and reap, registered file, short transfers resubmitted |
//! | `libaio` | [`libaio`] | 1..4096 | Linux native AIO by its system calls, as fio's `libaio`: one `io_submit` per request as it is queued, one `io_getevents` per completion, syncs inline; asynchronous only with O_DIRECT (on a buffered file the kernel does the I/O inside `io_submit`) |
//!
//! To add an engine: its declaration in `crate::workload::engines` (name, capabilities, keys),
//! its file here implementing [`IoEngine`], and one line in
//! `crate::workload::engines::engine_list!`, from which the modules here and [`with_engine`]'s
//! dispatch are generated (`crate::workload::engines` says why the two halves are apart).

use crate::model::job::{EngineKind, EngineOptions};
use crate::model::result::PhaseResult;
pub use crate::workload::engines::Caps;
use crate::workload::engines::EngineSpec;
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};

/// Work to do with the engine a test names, monomorphised for it: the runner's phase, the
/// result's record of the engine's options. The dispatch from a test's engine (a name) to the
/// engine's type happens in one place, [`with_engine`].
pub trait WithEngine {
    /// What the work returns.
    type Output;
    /// Do the work with engine `E`.
    fn with<E: IoEngine>(self) -> Self::Output;
}

/// Whether two names are the same (a `const fn`, for the registry's compile-time check).
const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The runtime half of the registry, generated from `crate::workload::engines::engine_list!`:
/// one module per engine, its type, and the dispatch from a test's engine to it.
macro_rules! runtime {
    ($($module:ident: $runtime:ident,)*) => {
        $(pub mod $module;)*
        $(pub use $module::$runtime;)*

        // Each engine's runtime half takes its declaration from its own declaration file.
        $(const _: () = assert!(same_name(
            <$runtime as IoEngine>::NAME,
            crate::workload::engines::$module::SPEC.name,
        ));)*

        /// Do `w` with the engine `engine` names: the monomorphised code of that engine.
        /// `None` for a name no engine has (validation admits none).
        pub fn with_engine<W: WithEngine>(engine: &EngineKind, w: W) -> Option<W::Output> {
            $(if engine.name() == <$runtime as IoEngine>::NAME {
                return Some(w.with::<$runtime>());
            })*
            None
        }

        /// Every engine's name, in the list's order.
        #[cfg(test)]
        const RUNTIME_NAMES: &[&str] = &[$(<$runtime as IoEngine>::NAME),*];
    };
}
crate::workload::engines::engine_list!(runtime);

pub use null::NULL_MAX_DEPTH;
pub use uring::URING_MAX_DEPTH;

/// Record in a phase's result what the test's engine ran with (io_uring: its `uring` options).
pub fn record(engine: &EngineKind, options: &EngineOptions, r: &mut PhaseResult) {
    struct Record<'a>(&'a EngineOptions, &'a mut PhaseResult);
    impl WithEngine for Record<'_> {
        type Output = ();
        fn with<E: IoEngine>(self) {
            E::record(&E::options(self.0), self.1)
        }
    }
    let _ = with_engine(engine, Record(options, r));
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
    /// The engine's declaration: name, capabilities and keys
    /// (`crate::workload::engines::<module>::SPEC`).
    const SPEC: &'static EngineSpec;
    /// Engine name, as written in workloads (`engine = "psync"`) and shown in results.
    const NAME: &'static str = Self::SPEC.name;
    /// What the engine can do.
    const CAPS: Caps = Self::SPEC.caps;

    /// Whether the engine hands queued requests to the kernel in a call of their own (io_uring,
    /// libaio), whose return the worker times: fio's submission latency (`slat`) runs from an
    /// op's start to it, its completion latency (`clat`) from it to the completion. A
    /// synchronous engine does the whole op in one call and has no submission step.
    const SUBMITS_APART: bool = false;

    /// The engine's own options, as it reads them (`()` for an engine without keys).
    type Options: Send + Sync;

    /// Read the test's options (checked by the declaration, defaults filled in); once per
    /// phase, before the workers start.
    fn options(o: &EngineOptions) -> Self::Options;

    /// Record in a phase's result what the engine ran with; most engines record nothing.
    fn record(_o: &Self::Options, _r: &mut PhaseResult) {}

    /// An engine for one worker thread, able to hold `depth` requests in flight (1 ..=
    /// `CAPS.max_depth`), with the test's options. Called in the worker thread, before the
    /// start barrier (untimed).
    fn setup(depth: u32, opts: &Self::Options) -> std::io::Result<Self>;

    /// Hand the engine the worker's data buffers, once, after [`IoEngine::setup`] and
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

    /// Requests the worker queued that the engine has not yet handed to the kernel (engines
    /// with [`IoEngine::SUBMITS_APART`]). Requests go to the kernel in the order they were
    /// queued, so the worker knows which of its requests a `queue`, `commit` or `reap` call
    /// submitted: the oldest ones, as many as this count fell. A request the engine completes
    /// without the kernel's queue (a sync done inline, a request refused at submission) counts
    /// as submitted by the call that completed it. Resubmissions of the engine's own (the rest
    /// of a short transfer) are not counted. A field read: called after every call that may
    /// submit.
    #[inline(always)]
    fn unsubmitted(&self) -> usize {
        0
    }

    /// Whether the last `commit` or `reap` handed the worker's queued requests to the kernel in
    /// a call whose return the worker reads only after the wait for completions (io_uring at
    /// depth 1, where the request goes in with the wait for it; libaio's requests an EAGAIN
    /// left queued): their submission's return is then not known apart from a completion's,
    /// and the worker records no submission latency for them. Clears the mark.
    #[inline(always)]
    fn submitted_with_wait(&mut self) -> bool {
        false
    }

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

    /// `fstatat(2)` with `AT_SYMLINK_NOFOLLOW` (`lstat`); returns the size.
    #[inline(always)]
    fn lstatat(&mut self, dir: BorrowedFd<'_>, path: &CStr) -> Result<u64, Errno> {
        rustix::fs::statat(dir, path, AtFlags::SYMLINK_NOFOLLOW).map(|s| s.st_size as u64)
    }

    /// `statx(2)` asking for every field (`STATX_ALL`, flags 0, as fio's `stat_type=statx`);
    /// returns the size.
    #[inline(always)]
    fn statxat(&mut self, dir: BorrowedFd<'_>, path: &CStr) -> Result<u64, Errno> {
        rustix::fs::statx(dir, path, AtFlags::empty(), rustix::fs::StatxFlags::ALL)
            .map(|s| s.stx_size)
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
        let mut e = E::setup(depth, &E::options(&EngineOptions::default())).unwrap();
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
    fn libaio_completes_a_full_queue_with_every_tag_once_and_its_bytes() {
        let (depth, mut got) = run_queue::<Libaio>(16);
        got.sort_by_key(|c| c.tag);
        assert_eq!(got.len(), depth as usize);
        for (k, c) in got.iter().enumerate() {
            assert_eq!(*c, Completion { tag: k as u32, res: 512 });
        }
    }

    /// Queue one request per buffer (`bufs[k]` at `k * len`, tag `k`), commit, and reap them
    /// all with `reap(1, ..)`; returns the completions sorted by tag.
    fn libaio_round(
        e: &mut Libaio,
        fd: RawFd,
        kind: IoKind,
        bufs: &mut [&mut [u8]],
    ) -> Vec<Completion> {
        for (k, b) in bufs.iter_mut().enumerate() {
            let io = Io {
                kind,
                fd,
                buf: b.as_mut_ptr(),
                len: b.len(),
                offset: (k * b.len()) as u64,
                tag: k as u32,
            };
            // SAFETY: the file and buffers outlive the reaps below.
            unsafe { e.queue(io).unwrap() };
        }
        e.commit().unwrap();
        let mut out = vec![Completion::default(); bufs.len()];
        let mut got = Vec::new();
        while got.len() < bufs.len() {
            let n = e.reap(1, &mut out).unwrap();
            assert!(n > 0, "libaio reaped nothing with requests in flight");
            got.extend_from_slice(&out[..n]);
        }
        got.sort_by_key(|c| c.tag);
        got
    }

    /// Write `depth` blocks of `len` bytes, each filled with its own byte, through libaio; sync;
    /// read them back through libaio; each read holds what its write wrote.
    fn libaio_write_then_read(fd: RawFd, bufs: &mut [&mut [u8]]) {
        let depth = bufs.len();
        let len = bufs[0].len();
        let mut e = Libaio::setup(depth as u32, &()).unwrap();
        for (k, b) in bufs.iter_mut().enumerate() {
            b.fill(b'a' + k as u8);
        }
        let got = libaio_round(&mut e, fd, IoKind::Write, bufs);
        let want: Vec<_> =
            (0..depth).map(|k| Completion { tag: k as u32, res: len as i64 }).collect();
        assert_eq!(got, want);
        for kind in [IoKind::Fsync, IoKind::Fdatasync, IoKind::Syncfs] {
            let io = Io { kind, fd, buf: std::ptr::null_mut(), len: 0, offset: 0, tag: 3 };
            // SAFETY: a sync has no buffer; the file is open.
            unsafe { e.queue(io).unwrap() };
            let mut out = [Completion::default(); 2];
            assert_eq!(e.reap(1, &mut out).unwrap(), 1, "{kind:?}");
            assert_eq!(out[0], Completion { tag: 3, res: 0 }, "{kind:?}");
        }
        for b in bufs.iter_mut() {
            b.fill(0);
        }
        let got = libaio_round(&mut e, fd, IoKind::Read, bufs);
        assert_eq!(got, want);
        for (k, b) in bufs.iter().enumerate() {
            assert!(b.iter().all(|&x| x == b'a' + k as u8), "block {k} read back other bytes");
        }
    }

    #[test]
    fn libaio_reads_back_what_it_wrote_on_a_buffered_file() {
        use std::os::fd::AsRawFd;
        let f = tempfile::tempfile().unwrap();
        let mut blocks = vec![vec![0u8; 4096]; 8];
        let mut bufs: Vec<&mut [u8]> = blocks.iter_mut().map(|b| b.as_mut_slice()).collect();
        libaio_write_then_read(f.as_raw_fd(), &mut bufs);
    }

    #[test]
    fn libaio_submits_sixteen_direct_requests_before_a_reap_and_reads_back_its_writes() {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let dir = match tempfile::tempdir_in("/var/tmp") {
            Ok(d) => d,
            Err(e) => {
                eprintln!("skipped: no directory in /var/tmp for an O_DIRECT file ({e})");
                return;
            }
        };
        let path = dir.path().join("direct");
        let f = match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => {
                eprintln!("skipped: /var/tmp's filesystem refuses O_DIRECT ({e})");
                return;
            }
        };
        // 16 blocks of 4 KiB, each 4 KiB-aligned (O_DIRECT's alignment on any device).
        let mut mem = vec![0u8; 17 * 4096];
        let skip = mem.as_ptr().align_offset(4096);
        let mut bufs: Vec<&mut [u8]> = mem[skip..skip + 16 * 4096].chunks_mut(4096).collect();
        libaio_write_then_read(f.as_raw_fd(), &mut bufs);
    }

    #[test]
    fn libaio_completes_a_request_the_kernel_refuses_with_its_errno() {
        let mut e = Libaio::setup(4, &()).unwrap();
        let mut b = [0u8; 512];
        let io =
            Io { kind: IoKind::Read, fd: -1, buf: b.as_mut_ptr(), len: 512, offset: 0, tag: 2 };
        // SAFETY: no file: the kernel refuses the request at submission.
        unsafe { e.queue(io).unwrap() };
        let mut out = [Completion::default(); 4];
        assert_eq!(e.reap(1, &mut out).unwrap(), 1);
        assert_eq!(out[0], Completion { tag: 2, res: -i64::from(libc::EBADF) });
    }

    #[test]
    fn the_runtime_half_has_every_declared_engine_in_order() {
        let declared = crate::workload::engines::names();
        assert_eq!(RUNTIME_NAMES, declared.as_slice());
        struct NameAndCaps;
        impl WithEngine for NameAndCaps {
            type Output = (&'static str, Caps);
            fn with<E: IoEngine>(self) -> Self::Output {
                (E::NAME, E::CAPS)
            }
        }
        for e in crate::workload::engines::ENGINES {
            let got = with_engine(&EngineKind::named(e.name), NameAndCaps);
            assert_eq!(got, Some((e.name, e.caps)), "{}", e.name);
        }
        assert_eq!(with_engine(&EngineKind::named("posix"), NameAndCaps), None);
    }

    #[test]
    fn an_io_uring_phase_records_its_ring_options_and_others_nothing() {
        let t = |text: &str| {
            let ctx = crate::workload::ResolveCtx {
                scale: crate::model::scale::Scale::Paper,
                free_memory: 1 << 30,
            };
            let spec = crate::workload::spec::parse(text, "t").unwrap();
            crate::workload::validate::resolve(&spec, "t", &ctx).unwrap().tests.remove(0)
        };
        let body = "file = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { ops = 1 }\n";
        let u = t(&format!(
            "[[test]]\nid = \"u\"\nname = \"u\"\nengine = \"io_uring\"\niodepth = 8\nsqpoll = true\n{body}"
        ));
        let mut r = PhaseResult::default();
        record(&u.engine, &u.engine_options, &mut r);
        let want =
            crate::model::job::UringOpts { batch_submit: 1, sqpoll: true, ..Default::default() };
        assert_eq!(r.uring, Some(want));
        let p = t(&format!("[[test]]\nid = \"p\"\nname = \"p\"\n{body}"));
        let mut r = PhaseResult::default();
        record(&p.engine, &p.engine_options, &mut r);
        assert_eq!(r.uring, None);
    }
}
