//! `io_uring`: asynchronous I/O through a submission and a completion ring (the `io-uring`
//! crate, used blocking: no async runtime), as fio's `io_uring` engine and its `t/io_uring`.
//!
//! [`IoEngine::queue`] writes a submission entry, and submits once `iodepth_batch` entries are
//! waiting (1 by default above depth 1, as in fio: each request goes to the kernel as soon as it
//! is queued, so the device does not wait while the worker handles completions);
//! [`IoEngine::reap`] submits whatever is still queued and waits for completions in one
//! `io_uring_enter` (at depth 1, the default, the request goes in with the wait for it), then
//! matches each completion to its request by `user_data` (the worker's tag), in whatever order
//! the kernel completes them. The test's file is registered with the ring at its first request, so requests
//! name it by index and the kernel skips the file-table lookup per op (fio's `registerfiles`;
//! `registerfiles = false` names it by descriptor, fio's default). With `fixedbufs` the worker's
//! read buffers and write pool are registered once ([`IoEngine::register_buffers`]), and reads
//! and writes become READ_FIXED/WRITE_FIXED naming the buffer by index, so the kernel does not
//! map and pin the user pages per request (fio's `fixedbufs`).
//!
//! Short transfers: a read or write that moved fewer bytes than asked is resubmitted for the
//! rest (buffer, length and offset advanced) and completes once, with the whole length, when the
//! rest is done; a read that reaches end of file completes with what it got. `EAGAIN`/`EINTR`
//! completions are resubmitted. Any other error completes the request with `-errno`, which the
//! worker turns into the test's failure with the op, offset and reason (EIO, ENOSPC, ...).
//!
//! Ordering of syncs: the worker queues an fsync/fdatasync only when nothing else is in flight,
//! so it covers every write before it (io_uring itself would run them in any order).
//! `syncfs` has no io_uring opcode: it is a system call inside `queue`, completed at the next reap.
//!
//! The bookkeeping is written against the [`Ring`] trait, so a fake ring (in the tests) can
//! complete requests short and out of order.

use super::{Completion, Io, IoEngine, IoKind};
use crate::model::job::{EngineOptions, UringOpts};
use crate::model::result::PhaseResult;
use crate::workload::engines::EngineSpec;
use std::io;

pub use crate::workload::engines::uring::URING_MAX_DEPTH;

/// A submission and completion queue: the real ring, or a fake in tests.
pub trait Ring: Sized {
    /// Make a ring for `entries` requests in flight, with SQ polling, polled completions and
    /// file registration as `opts` asks (buffers are registered later, by
    /// [`Ring::register_buffers`]).
    fn new(entries: u32, opts: &UringOpts) -> io::Result<Self>;
    /// Register the data buffers (fio's `fixedbufs`): from then on every read and write must
    /// lie inside one of them, and goes to the kernel as READ_FIXED/WRITE_FIXED.
    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)]) -> io::Result<()>;
    /// Put a request in the submission queue (no system call). `Ok(false)` when the submission
    /// queue is full (submit first).
    ///
    /// # Safety
    /// As [`IoEngine::queue`]: the buffer and fd stay valid until the request completes.
    unsafe fn push(&mut self, io: &Io) -> io::Result<bool>;
    /// Submit what was pushed and wait until at least `want` completions are available.
    fn submit_and_wait(&mut self, want: usize) -> io::Result<()>;
    /// Wait until the submission queue has a free entry (with SQ polling the kernel's poller
    /// takes entries on its own time, and frees them after it has posted their completions).
    fn wait_for_room(&mut self) -> io::Result<()>;
    /// Take one completion: `(user_data, result)`.
    fn pop(&mut self) -> Option<(u64, i32)>;
}

/// Most buffers a worker registers (its read buffers and its write pool).
const MAX_FIXED_BUFS: usize = 2;

/// The kernel's ring.
pub struct KernelRing {
    ring: io_uring::IoUring,
    /// Register the file (`registerfiles`).
    register_files: bool,
    /// The file registered at index 0 (-1: none yet).
    registered: i32,
    /// Registered buffers as `[start, end)` addresses; the first `nbufs` are in use.
    bufs: [(usize, usize); MAX_FIXED_BUFS],
    nbufs: usize,
}

impl KernelRing {
    /// Index of the registered buffer holding `[addr, addr + len)`.
    #[inline(always)]
    fn buf_index(&self, addr: *mut u8, len: usize) -> io::Result<u16> {
        let a = addr as usize;
        for (k, &(start, end)) in self.bufs[..self.nbufs].iter().enumerate() {
            if a >= start && a + len <= end {
                return Ok(k as u16);
            }
        }
        Err(io::Error::other("fixedbufs: a request's buffer lies outside the registered buffers"))
    }
}

/// The submission entry of `io` on file `$fd` (`types::Fixed` or `types::Fd`); `$index` is the
/// registered buffer's index (None: not registered).
macro_rules! entry {
    ($io:expr, $fd:expr, $index:expr) => {{
        use io_uring::{opcode, types};
        let (io, fd) = ($io, $fd);
        match (io.kind, $index) {
            (IoKind::Read, None) => {
                opcode::Read::new(fd, io.buf, io.len as u32).offset(io.offset).build()
            }
            (IoKind::Read, Some(i)) => {
                opcode::ReadFixed::new(fd, io.buf, io.len as u32, i).offset(io.offset).build()
            }
            (IoKind::Write, None) => {
                opcode::Write::new(fd, io.buf, io.len as u32).offset(io.offset).build()
            }
            (IoKind::Write, Some(i)) => {
                opcode::WriteFixed::new(fd, io.buf, io.len as u32, i).offset(io.offset).build()
            }
            (IoKind::Fsync, _) => opcode::Fsync::new(fd).build(),
            (IoKind::Fdatasync, _) => {
                opcode::Fsync::new(fd).flags(types::FsyncFlags::DATASYNC).build()
            }
            (IoKind::Syncfs, _) => return Err(io::Error::other("syncfs has no io_uring opcode")),
        }
    }};
}

/// (DEFER_TASKRUN with SINGLE_ISSUER, COOP_TASKRUN), tried in this order.
const TASKRUN_LEVELS: [(bool, bool); 3] = [(true, true), (false, true), (false, false)];

impl Ring for KernelRing {
    fn new(entries: u32, opts: &UringOpts) -> io::Result<Self> {
        let (sqpoll, iopoll) = (opts.sqpoll, opts.iopoll);
        // Completion handling, newest first; a kernel that refuses a level (EINVAL) gets the
        // next. DEFER_TASKRUN (6.1): completions are posted when this thread waits for them,
        // not by interrupting it; it needs SINGLE_ISSUER (one thread submits: the worker
        // makes, uses and drops its ring). COOP_TASKRUN (5.19): no interrupt to post them.
        // fio sets the same. SQ polling posts from its own thread: none of these.
        let levels: &[(bool, bool)] = if sqpoll { &[(false, false)] } else { &TASKRUN_LEVELS };
        let mut built = Err(io::Error::from_raw_os_error(libc::EINVAL));
        for &(defer, coop) in levels {
            let mut b = io_uring::IoUring::builder();
            if sqpoll {
                // The poller sleeps after 1 s without submissions (fio's sqthread_poll default).
                b.setup_sqpoll(1000);
            }
            if iopoll {
                b.setup_iopoll();
            }
            if defer {
                b.setup_single_issuer().setup_defer_taskrun();
            }
            if coop {
                b.setup_coop_taskrun();
            }
            built = b.build(entries.max(1));
            match &built {
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => continue,
                _ => break,
            }
        }
        let ring = match built {
            Ok(r) => r,
            Err(e) if sqpoll && e.raw_os_error() == Some(libc::EPERM) => {
                return Err(io::Error::new(e.kind(), format!("sqpoll = true: the kernel refused a submission-queue polling thread ({e}); run as root (or with CAP_SYS_NICE), or set sqpoll = false")));
            }
            Err(e) if (sqpoll || iopoll) && e.raw_os_error() == Some(libc::EINVAL) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "this kernel's io_uring does not accept {} ({e}); remove it",
                        if sqpoll { "sqpoll" } else { "iopoll" }
                    ),
                ));
            }
            Err(e) => return Err(unavailable(e)),
        };
        Ok(KernelRing {
            ring,
            register_files: opts.registerfiles,
            registered: -1,
            bufs: [(0, 0); MAX_FIXED_BUFS],
            nbufs: 0,
        })
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        if bufs.len() > MAX_FIXED_BUFS {
            return Err(io::Error::other("fixedbufs: more buffers than the engine registers"));
        }
        let iov: Vec<libc::iovec> =
            bufs.iter().map(|&(p, n)| libc::iovec { iov_base: p.cast(), iov_len: n }).collect();
        // SAFETY: the worker keeps these buffers alive and unmoved for the engine's lifetime
        // (they are declared before it, so dropped after it; dropping the ring unregisters).
        if let Err(e) = unsafe { self.ring.submitter().register_buffers(&iov) } {
            let total: usize = bufs.iter().map(|b| b.1).sum();
            let size = crate::model::units::fmt_bytes(total as u64);
            let why = match e.raw_os_error() {
                Some(libc::ENOMEM) => format!("the kernel would not lock {size} of buffers in memory ({e}): raise the locked-memory limit (ulimit -l) or run as root, lower iodepth or the op size, or set fixedbufs = false"),
                Some(libc::EFAULT) | Some(libc::EINVAL) | Some(libc::EOVERFLOW) => format!("the kernel refused to register {size} of buffers ({e}); each may be at most 1 GiB (iodepth × largest op): lower iodepth or the op size, or set fixedbufs = false"),
                _ => format!("registering {size} of buffers failed ({e}); set fixedbufs = false"),
            };
            return Err(io::Error::new(e.kind(), format!("fixedbufs = true: {why}")));
        }
        for (k, &(p, n)) in bufs.iter().enumerate() {
            self.bufs[k] = (p as usize, p as usize + n);
        }
        self.nbufs = bufs.len();
        Ok(())
    }

    #[inline(always)]
    unsafe fn push(&mut self, io: &Io) -> io::Result<bool> {
        let index = if self.nbufs > 0 && matches!(io.kind, IoKind::Read | IoKind::Write) {
            Some(self.buf_index(io.buf, io.len)?)
        } else {
            None
        };
        let e = if self.register_files {
            if io.fd != self.registered {
                // Once per worker and phase (one file): later requests name it by index.
                if self.registered >= 0 {
                    self.ring.submitter().unregister_files()?;
                }
                self.ring.submitter().register_files(&[io.fd])?;
                self.registered = io.fd;
            }
            entry!(io, io_uring::types::Fixed(0), index)
        } else {
            entry!(io, io_uring::types::Fd(io.fd), index)
        };
        // SAFETY: the caller keeps the buffer and fd valid until the completion is reaped.
        let pushed = unsafe { self.ring.submission().push(&e.user_data(u64::from(io.tag))) };
        Ok(pushed.is_ok())
    }

    #[inline(always)]
    fn submit_and_wait(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn wait_for_room(&mut self) -> io::Result<()> {
        loop {
            match self.ring.submitter().squeue_wait() {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<(u64, i32)> {
        self.ring.completion().next().map(|c| (c.user_data(), c.result()))
    }
}

/// Why io_uring cannot be used here, in words that name the cause and the way out.
pub fn unavailable(e: io::Error) -> io::Error {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok();
    io::Error::new(e.kind(), unavailable_reason(&e, sysctl.as_deref().map(str::trim)))
}

fn unavailable_reason(e: &io::Error, sysctl: Option<&str>) -> String {
    let fix = "use engine = \"psync\" (fio: ioengine=psync), which needs no io_uring";
    match (e.raw_os_error(), sysctl) {
        (_, Some("2")) => format!("io_uring is disabled on this machine (sysctl kernel.io_uring_disabled = 2: {e}); enable it with `sysctl kernel.io_uring_disabled=0`, or {fix}"),
        (Some(libc::EPERM), Some("1")) => format!("io_uring is limited to root and the kernel.io_uring_group group (sysctl kernel.io_uring_disabled = 1: {e}); run as root, or {fix}"),
        (Some(libc::ENOSYS), _) => format!("the kernel has no io_uring (older than 5.1, or a seccomp filter of a container returns ENOSYS: {e}); {fix}"),
        (Some(libc::EPERM), _) => format!("io_uring_setup was refused ({e}): a seccomp filter (container runtime, systemd's SystemCallFilter) blocks it; allow io_uring_setup/io_uring_enter/io_uring_register, or {fix}"),
        (Some(libc::ENOMEM), _) => format!("the ring could not be allocated ({e}): lower iodepth, or raise the locked-memory limit (ulimit -l)"),
        _ => format!("io_uring_setup failed: {e}"),
    }
}

/// Per tag: the request as queued, and how many bytes are done.
#[derive(Clone, Copy)]
struct Pending {
    io: Io,
    done: usize,
}

/// The io_uring engine over a ring `R`.
pub struct Uring<R: Ring = KernelRing> {
    ring: R,
    /// Indexed by tag (the worker's tags are 0..depth).
    pending: Vec<Pending>,
    /// Requests in the ring (pushed, not yet completed).
    in_ring: usize,
    /// Requests pushed since the last submission.
    unsubmitted: usize,
    /// Completions made without the ring (syncfs), not yet reaped.
    ready: Vec<Completion>,
    /// Submit once this many are pushed (0: at each reap).
    batch_submit: usize,
    /// A reap submitted requests in the call that waited for completions
    /// ([`IoEngine::submitted_with_wait`]).
    joined: bool,
    /// Wait for at least this many completions per reap.
    batch_complete: usize,
    /// Polled completions: an EOPNOTSUPP completion means the device cannot poll.
    iopoll: bool,
    /// Register the worker's buffers when it hands them over (`fixedbufs`).
    fixedbufs: bool,
}

impl<R: Ring> Uring<R> {
    /// Push, submitting first when the submission queue is full.
    #[inline(always)]
    unsafe fn push(&mut self, io: &Io) -> io::Result<()> {
        // SAFETY: forwarded from the caller.
        if !unsafe { self.ring.push(io)? } {
            self.ring.submit_and_wait(0)?;
            self.unsubmitted = 0;
            // Without SQ polling the submission above emptied the queue. With it, the poller
            // may have posted a completion before it released the request's entry (a cached
            // read completes while it is being submitted): wait for the entry.
            let mut waits = 0;
            // SAFETY: as above.
            while !unsafe { self.ring.push(io)? } {
                if waits == 1000 {
                    return Err(io::Error::other(
                        "io_uring submission queue still full after 1000 waits for room",
                    ));
                }
                self.ring.wait_for_room()?;
                waits += 1;
            }
        }
        self.in_ring += 1;
        self.unsubmitted += 1;
        Ok(())
    }

    /// Account one ring completion: `Some` when its request is finished.
    #[inline(always)]
    fn complete(&mut self, user_data: u64, res: i32) -> io::Result<Option<Completion>> {
        let tag = user_data as u32;
        let Some(p) = self.pending.get_mut(tag as usize) else {
            return Err(io::Error::other(format!("io_uring completion for unknown tag {tag}")));
        };
        let data = matches!(p.io.kind, IoKind::Read | IoKind::Write);
        if res == -libc::EAGAIN || res == -libc::EINTR {
            let rest = p.rest();
            // SAFETY: the same request, still owned by the worker until completed.
            unsafe { self.push(&rest)? };
            return Ok(None);
        }
        if res < 0 {
            if self.iopoll && res == -libc::EOPNOTSUPP {
                return Err(io::Error::new(io::ErrorKind::Unsupported, "iopoll = true: the device does not support polled I/O (EOPNOTSUPP; NVMe needs poll_queues, loop devices have none); set iopoll = false"));
            }
            return Ok(Some(Completion { tag, res: i64::from(res) }));
        }
        let moved = res as usize;
        if data && moved > 0 && p.done + moved < p.io.len {
            // Short transfer: ask for the rest.
            p.done += moved;
            let rest = p.rest();
            // SAFETY: as above.
            unsafe { self.push(&rest)? };
            return Ok(None);
        }
        Ok(Some(Completion { tag, res: (p.done + moved) as i64 }))
    }
}

impl Pending {
    /// The part of the request not done yet.
    #[inline(always)]
    fn rest(&self) -> Io {
        let mut io = self.io;
        if matches!(io.kind, IoKind::Read | IoKind::Write) {
            // SAFETY: done < len, so the pointer stays inside the caller's buffer.
            io.buf = unsafe { io.buf.add(self.done) };
            io.len -= self.done;
            io.offset += self.done as u64;
        }
        io
    }
}

impl<R: Ring + Send> IoEngine for Uring<R> {
    const SPEC: &'static EngineSpec = &crate::workload::engines::uring::SPEC;
    const SUBMITS_APART: bool = true;
    type Options = UringOpts;

    fn options(o: &EngineOptions) -> UringOpts {
        crate::workload::engines::uring::uring_opts(o)
    }

    fn record(o: &UringOpts, r: &mut PhaseResult) {
        r.uring = Some(*o);
    }

    fn setup(depth: u32, o: &UringOpts) -> io::Result<Self> {
        let depth = depth.max(1);
        let placeholder =
            Io { kind: IoKind::Read, fd: -1, buf: std::ptr::null_mut(), len: 0, offset: 0, tag: 0 };
        Ok(Uring {
            ring: R::new(depth, o)?,
            pending: vec![Pending { io: placeholder, done: 0 }; depth as usize],
            in_ring: 0,
            unsubmitted: 0,
            ready: Vec::with_capacity(depth as usize),
            batch_submit: o.batch_submit as usize,
            joined: false,
            batch_complete: o.batch_complete.max(1) as usize,
            iopoll: o.iopoll,
            fixedbufs: o.fixedbufs,
        })
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        if self.fixedbufs {
            self.ring.register_buffers(bufs)?;
        }
        Ok(())
    }

    #[inline(always)]
    unsafe fn queue(&mut self, io: Io) -> io::Result<()> {
        if io.kind == IoKind::Syncfs {
            // SAFETY: the caller keeps the fd open.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(io.fd) };
            self.ready.push(Completion::of(io.tag, rustix::fs::syncfs(fd).map(|()| 0)));
            return Ok(());
        }
        let Some(p) = self.pending.get_mut(io.tag as usize) else {
            return Err(io::Error::other(format!("tag {} beyond the ring's depth", io.tag)));
        };
        *p = Pending { io, done: 0 };
        // SAFETY: forwarded from the caller.
        unsafe { self.push(&io)? };
        if self.batch_submit > 0 && self.unsubmitted >= self.batch_submit {
            self.ring.submit_and_wait(0)?;
            self.unsubmitted = 0;
        }
        Ok(())
    }

    /// Entries pushed since the last submission. A reap always ends with nothing unsubmitted
    /// (its resubmissions of short transfers included), so after a `queue` these are the
    /// worker's own requests.
    #[inline(always)]
    fn unsubmitted(&self) -> usize {
        self.unsubmitted
    }

    #[inline(always)]
    fn submitted_with_wait(&mut self) -> bool {
        std::mem::take(&mut self.joined)
    }

    #[inline(always)]
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        // iodepth_batch_complete: wait for more than one when asked (never more than in flight).
        let min = if min > 0 {
            min.max(self.batch_complete.min(self.in_ring + self.ready.len()))
        } else {
            0
        };
        let mut n = 0;
        while n < out.len() {
            match self.ready.pop() {
                Some(c) => {
                    out[n] = c;
                    n += 1;
                }
                None => break,
            }
        }
        loop {
            while n < out.len() {
                let Some((ud, res)) = self.ring.pop() else { break };
                self.in_ring -= 1;
                if let Some(c) = self.complete(ud, res)? {
                    out[n] = c;
                    n += 1;
                }
            }
            if n >= min.min(out.len()) || self.in_ring == 0 {
                // Requests queued since the last submission go to the kernel before returning.
                if self.unsubmitted > 0 {
                    self.ring.submit_and_wait(0)?;
                    self.unsubmitted = 0;
                }
                return Ok(n);
            }
            // One system call: submit what is queued and wait for a completion.
            self.joined |= self.unsubmitted > 0;
            self.ring.submit_and_wait(1)?;
            self.unsubmitted = 0;
        }
    }
}

// SAFETY: the raw buffer pointers in `pending` belong to the worker thread that owns the engine;
// the engine is created and used in that one thread (`Send` is needed only to build it there).
unsafe impl<R: Ring + Send> Send for Uring<R> {}

#[cfg(test)]
mod tests;
