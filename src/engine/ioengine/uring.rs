//! `io_uring`: asynchronous I/O through a submission and a completion ring (the `io-uring`
//! crate, used blocking: no async runtime), as fio's `io_uring` engine and its `t/io_uring`.
//!
//! [`IoEngine::queue`] writes a submission entry (no system call); [`IoEngine::reap`] submits
//! everything queued and waits for completions in one `io_uring_enter` (fio's batch submit: all
//! the requests the worker queued since the last reap go in one call), then matches each
//! completion to its request by `user_data` (the worker's tag), in whatever order the kernel
//! completes them. The test's file is registered with the ring at its first request, so requests
//! name it by index and the kernel skips the file-table lookup per op (fio's `registerfiles`).
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

use super::{Caps, Completion, Io, IoEngine, IoKind};
use std::io;

/// Largest queue depth (entries of the ring; fio's io_uring engine allows 4096 too).
pub const URING_MAX_DEPTH: u32 = 4096;

/// A submission and completion queue: the real ring, or a fake in tests.
pub trait Ring: Sized {
    /// Make a ring for `entries` requests in flight, with SQ polling and polled completions
    /// when asked.
    fn new(entries: u32, sqpoll: bool, iopoll: bool) -> io::Result<Self>;
    /// Put a request in the submission queue (no system call). `Ok(false)` when the submission
    /// queue is full (submit first).
    ///
    /// # Safety
    /// As [`IoEngine::queue`]: the buffer and fd stay valid until the request completes.
    unsafe fn push(&mut self, io: &Io) -> io::Result<bool>;
    /// Submit what was pushed and wait until at least `want` completions are available.
    fn submit_and_wait(&mut self, want: usize) -> io::Result<()>;
    /// Take one completion: `(user_data, result)`.
    fn pop(&mut self) -> Option<(u64, i32)>;
}

/// The kernel's ring.
pub struct KernelRing {
    ring: io_uring::IoUring,
    /// The file registered at index 0 (-1: none yet).
    registered: i32,
}

impl Ring for KernelRing {
    fn new(entries: u32, sqpoll: bool, iopoll: bool) -> io::Result<Self> {
        let mut b = io_uring::IoUring::builder();
        if sqpoll {
            // The poller sleeps after 1 s without submissions (fio's sqthread_poll default).
            b.setup_sqpoll(1000);
        }
        if iopoll {
            b.setup_iopoll();
        }
        let ring = match b.build(entries.max(1)) {
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
        Ok(KernelRing { ring, registered: -1 })
    }

    #[inline(always)]
    unsafe fn push(&mut self, io: &Io) -> io::Result<bool> {
        use io_uring::{opcode, types};
        if io.fd != self.registered {
            // Once per worker and phase (one file): later requests name it by index.
            if self.registered >= 0 {
                self.ring.submitter().unregister_files()?;
            }
            self.ring.submitter().register_files(&[io.fd])?;
            self.registered = io.fd;
        }
        let fd = types::Fixed(0);
        let e = match io.kind {
            IoKind::Read => opcode::Read::new(fd, io.buf, io.len as u32).offset(io.offset).build(),
            IoKind::Write => {
                opcode::Write::new(fd, io.buf, io.len as u32).offset(io.offset).build()
            }
            IoKind::Fsync => opcode::Fsync::new(fd).build(),
            IoKind::Fdatasync => opcode::Fsync::new(fd).flags(types::FsyncFlags::DATASYNC).build(),
            IoKind::Syncfs => return Err(io::Error::other("syncfs has no io_uring opcode")),
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
    /// Wait for at least this many completions per reap.
    batch_complete: usize,
    /// Polled completions: an EOPNOTSUPP completion means the device cannot poll.
    iopoll: bool,
}

impl<R: Ring> Uring<R> {
    /// Push, submitting first when the submission queue is full.
    #[inline(always)]
    unsafe fn push(&mut self, io: &Io) -> io::Result<()> {
        // SAFETY: forwarded from the caller.
        if !unsafe { self.ring.push(io)? } {
            self.ring.submit_and_wait(0)?;
            self.unsubmitted = 0;
            // SAFETY: as above.
            if !unsafe { self.ring.push(io)? } {
                return Err(io::Error::other("io_uring submission queue full after submitting"));
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
    const NAME: &'static str = "io_uring";
    const CAPS: Caps =
        Caps { max_depth: URING_MAX_DEPTH, sync_io: false, direct: true, direct_align: 4096 };

    fn setup(depth: u32) -> io::Result<Self> {
        let depth = depth.max(1);
        let placeholder =
            Io { kind: IoKind::Read, fd: -1, buf: std::ptr::null_mut(), len: 0, offset: 0, tag: 0 };
        Ok(Uring {
            ring: R::new(depth, false, false)?,
            pending: vec![Pending { io: placeholder, done: 0 }; depth as usize],
            in_ring: 0,
            unsubmitted: 0,
            ready: Vec::with_capacity(depth as usize),
            batch_submit: 0,
            batch_complete: 1,
            iopoll: false,
        })
    }

    fn configure(&mut self, o: &crate::workload::UringOpts) -> io::Result<()> {
        if o.sqpoll || o.iopoll {
            self.ring = R::new(self.pending.len() as u32, o.sqpoll, o.iopoll)?;
        }
        self.batch_submit = o.batch_submit as usize;
        self.batch_complete = o.batch_complete.max(1) as usize;
        self.iopoll = o.iopoll;
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
