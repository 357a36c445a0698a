//! `libaio`: Linux native AIO through its raw system calls (`io_setup`, `io_submit`,
//! `io_getevents`, `io_destroy`; no libaio.so), doing what fio's `libaio` engine does with its
//! defaults, so that `ioengine=libaio` in a fio job means the same system calls here.
//!
//! - [`IoEngine::setup`] makes one AIO context per worker for `depth` events (fio's
//!   `io_queue_init(iodepth)`) and sizes every array the hot loop uses: the control blocks, the
//!   array of pointers `io_submit` takes, the events `io_getevents` fills.
//! - [`IoEngine::queue`] fills a control block (`IOCB_CMD_PREAD`/`PWRITE`) and hands it to
//!   `io_submit` at once: fio's `iodepth_batch_submit` is 1 by default, so fio commits each
//!   request as it is queued. A partial submission is retried with the rest; `EAGAIN` (or
//!   `ENOMEM`) with requests in the kernel leaves the rest queued until completions have been
//!   reaped, as fio's commit does; with none in the kernel it retries for up to 30 s, as fio,
//!   then fails. A request the kernel refuses at submission (`EINVAL`, `EBADF`, ...) completes
//!   with `-errno`, so the worker names the op and offset.
//! - `fsync(2)`, `fdatasync(2)` and `syncfs(2)` run inside `queue`, once nothing is left
//!   unsubmitted, and complete at the next reap: fio 3.33's libaio engine does every sync so
//!   (`do_io_u_sync`, "linux doesn't support aio fsync yet"; later fio versions queue fsync
//!   and fdatasync as `IOCB_CMD_FSYNC`). fsbench's worker queues a periodic sync only once
//!   every earlier request has completed (fio's engine waits only for nothing to be
//!   unsubmitted; with O_DIRECT the two orders may differ, buffered requests complete inside
//!   `io_submit`).
//! - [`IoEngine::reap`]`(min, out)` is `io_getevents(ctx, min, min, events, NULL)` (retried on
//!   `EINTR`), with `min` never more than the kernel holds: fio's `iodepth_batch_complete_min`
//!   of 1, and its `iodepth_batch_complete_max`, which defaults to the min (fio 3.33 under
//!   strace: `io_getevents(ctx, 1, 1, ...)`, one call per completion, at any depth).
//! - Dropping the engine is `io_destroy`, which waits for the requests still in flight.
//!
//! What differs from fio's engine, and why: a short transfer completes with the bytes it moved,
//! as with `psync` (fio queues the rest again; on a regular file only a read at end of file is
//! short).
//!
//! Linux completes AIO asynchronously only on files opened with O_DIRECT: on a buffered file
//! the kernel does the I/O inside `io_submit`, and `io_getevents` then only collects results, so
//! a buffered test has one I/O being worked on at a time whatever its depth (fio's too).

use super::{Completion, Io, IoEngine, IoKind};
use crate::model::job::EngineOptions;
use crate::workload::engines::EngineSpec;
use std::io;
use std::time::{Duration, Instant};

pub use crate::workload::engines::libaio::LIBAIO_MAX_DEPTH;

/// `IOCB_CMD_PREAD` (linux/aio_abi.h).
const IOCB_CMD_PREAD: u16 = 0;
/// `IOCB_CMD_PWRITE`.
const IOCB_CMD_PWRITE: u16 = 1;

/// How long a submission may find the kernel out of room with nothing in flight before the
/// test fails (fio: "aio appears to be stalled, giving up" after 30 s).
const STALL: Duration = Duration::from_secs(30);

/// `struct iocb` of linux/aio_abi.h: one request, as `io_submit` reads it (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Iocb {
    /// Returned in the request's event (`io_event.data`): the worker's tag.
    pub aio_data: u64,
    /// Set by the kernel (`KIOCB_KEY`).
    #[cfg(target_endian = "little")]
    pub aio_key: u32,
    /// `RWF_*` flags of the read or write.
    pub aio_rw_flags: i32,
    /// Set by the kernel (`KIOCB_KEY`).
    #[cfg(target_endian = "big")]
    pub aio_key: u32,
    /// `IOCB_CMD_*`.
    pub aio_lio_opcode: u16,
    /// I/O priority (with `IOCB_FLAG_IOPRIO`).
    pub aio_reqprio: i16,
    /// The file descriptor.
    pub aio_fildes: u32,
    /// The buffer's address.
    pub aio_buf: u64,
    /// Bytes to transfer.
    pub aio_nbytes: u64,
    /// File offset.
    pub aio_offset: i64,
    /// Reserved: zero.
    pub aio_reserved2: u64,
    /// `IOCB_FLAG_*`.
    pub aio_flags: u32,
    /// An eventfd to signal (with `IOCB_FLAG_RESFD`).
    pub aio_resfd: u32,
}

/// `struct io_event` of linux/aio_abi.h: one completion, as `io_getevents` writes it (32 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoEvent {
    /// The request's `aio_data`.
    pub data: u64,
    /// The address of the request's control block.
    pub obj: u64,
    /// Bytes transferred, or `-errno`.
    pub res: i64,
    /// A second result (unused for files).
    pub res2: i64,
}

/// A system call's return: the value, or the error in `errno`.
fn ret(r: libc::c_long) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// `io_submit(ctx, n, iocbs)`.
///
/// # Safety
/// `iocbs` points to `n` addresses of filled control blocks whose buffers and files stay valid
/// until their events have been reaped.
#[inline(always)]
unsafe fn io_submit(ctx: u64, n: usize, iocbs: *const usize) -> io::Result<usize> {
    // SAFETY: as the caller guarantees.
    ret(unsafe { libc::syscall(libc::SYS_io_submit, ctx, n as libc::c_long, iocbs) })
}

/// `io_getevents(ctx, min, events.len(), events, NULL)`: waits without a timeout.
#[inline(always)]
fn io_getevents(ctx: u64, min: usize, events: &mut [IoEvent]) -> io::Result<usize> {
    // SAFETY: `events` is writable for `events.len()` events; a null timeout waits for `min`.
    ret(unsafe {
        libc::syscall(
            libc::SYS_io_getevents,
            ctx,
            min as libc::c_long,
            events.len() as libc::c_long,
            events.as_mut_ptr(),
            std::ptr::null::<libc::timespec>(),
        )
    })
}

/// Linux native AIO (see the module documentation).
#[derive(Debug)]
pub struct Libaio {
    /// The AIO context (`aio_context_t`); 0 once destroyed.
    ctx: u64,
    /// Requests queued and not yet submitted are `iocbs[head..tail]`.
    iocbs: Box<[Iocb]>,
    /// `ptrs[i]` is the address of `iocbs[i]`: `io_submit`'s array of pointers, fixed at setup
    /// (the boxed slice never moves).
    ptrs: Box<[usize]>,
    head: usize,
    tail: usize,
    /// Requests the kernel holds: submitted, not yet reaped.
    in_kernel: usize,
    /// `io_getevents`'s output.
    events: Box<[IoEvent]>,
    /// Completions known without the kernel's events (a `syncfs`, a request refused at
    /// submission), handed back at the next reap: the first `nready`.
    ready: Box<[Completion]>,
    nready: usize,
    /// Requests left queued (after an EAGAIN) went to the kernel in a `commit` or `reap`,
    /// whose return the worker does not read apart from the wait that follows
    /// ([`IoEngine::submitted_with_wait`]).
    joined: bool,
}

impl Libaio {
    /// Hand the queued requests to the kernel (fio's `fio_libaio_commit`).
    fn submit(&mut self) -> io::Result<()> {
        let mut stalled: Option<Instant> = None;
        while self.head < self.tail {
            let n = self.tail - self.head;
            // SAFETY: `ptrs[head..tail]` address filled control blocks; the worker keeps their
            // buffers and files valid until reaped (`queue`'s contract).
            let r = unsafe { io_submit(self.ctx, n, self.ptrs[self.head..].as_ptr()) };
            match r {
                Ok(k) => {
                    let k = k.min(n);
                    self.head += k;
                    self.in_kernel += k;
                    stalled = None;
                }
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR) => {}
                    // Out of room: completions make some; reap first (fio breaks out too).
                    Some(libc::EAGAIN) | Some(libc::ENOMEM) if self.in_kernel > 0 => break,
                    Some(libc::EAGAIN) => {
                        let t = *stalled.get_or_insert_with(Instant::now);
                        if t.elapsed() > STALL {
                            return Err(io::Error::new(e.kind(), format!("io_submit: the kernel took no request for {} s with none in flight ({e}): AIO appears stalled", STALL.as_secs())));
                        }
                        std::thread::sleep(Duration::from_micros(1));
                    }
                    // The first request was refused: it completes with the error, which the
                    // worker reports with its op and offset.
                    Some(errno) => {
                        let cb = &self.iocbs[self.head];
                        self.ready[self.nready] =
                            Completion { tag: cb.aio_data as u32, res: -i64::from(errno) };
                        self.nready += 1;
                        self.head += 1;
                    }
                    None => return Err(e),
                },
            }
        }
        if self.head == self.tail {
            self.head = 0;
            self.tail = 0;
        }
        Ok(())
    }

    /// Room for one more control block at `tail`: requests left unsubmitted after an `EAGAIN`
    /// move to the front (rare: only when the kernel was out of room).
    #[cold]
    fn compact(&mut self) {
        self.iocbs.copy_within(self.head..self.tail, 0);
        self.tail -= self.head;
        self.head = 0;
    }
}

/// Why `io_setup` failed, in words that name the cause and the way out.
#[cold]
fn setup_error(e: io::Error, depth: u32) -> io::Error {
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string());
    let why = match e.raw_os_error() {
        Some(libc::EAGAIN) => format!(
            "io_setup for {depth} events: the machine's aio-max-nr would be exceeded ({e}; /proc/sys/fs/aio-max-nr is {}, aio-nr in use {}; the kernel reserves about twice the depth per context): lower iodepth or numjobs, or raise it (`sysctl fs.aio-max-nr=...`)",
            read("/proc/sys/fs/aio-max-nr").unwrap_or_else(|_| "unreadable".into()),
            read("/proc/sys/fs/aio-nr").unwrap_or_else(|_| "unreadable".into()),
        ),
        Some(libc::ENOSYS) => format!("the kernel has no native AIO (built without CONFIG_AIO, or a seccomp filter returns ENOSYS: {e}); use engine = \"io_uring\" or \"psync\""),
        _ => format!("io_setup for {depth} events failed: {e}"),
    };
    io::Error::new(e.kind(), why)
}

impl IoEngine for Libaio {
    const SPEC: &'static EngineSpec = &crate::workload::engines::libaio::SPEC;
    const SUBMITS_APART: bool = true;
    type Options = ();

    fn options(_o: &EngineOptions) {}

    fn setup(depth: u32, _opts: &()) -> io::Result<Self> {
        let depth = depth.clamp(1, LIBAIO_MAX_DEPTH);
        let mut ctx: u64 = 0;
        // SAFETY: `ctx` is a zeroed aio_context_t, as io_setup(2) requires.
        let r = unsafe {
            libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx as *mut u64)
        };
        ret(r).map_err(|e| setup_error(e, depth))?;
        let n = depth as usize;
        let iocbs = vec![Iocb::default(); n].into_boxed_slice();
        let ptrs = iocbs.iter().map(|cb| cb as *const Iocb as usize).collect();
        Ok(Libaio {
            ctx,
            iocbs,
            ptrs,
            head: 0,
            tail: 0,
            in_kernel: 0,
            events: vec![IoEvent::default(); n].into_boxed_slice(),
            ready: vec![Completion::default(); n].into_boxed_slice(),
            nready: 0,
            joined: false,
        })
    }

    #[inline(always)]
    unsafe fn queue(&mut self, io: Io) -> io::Result<()> {
        let op = match io.kind {
            IoKind::Read => IOCB_CMD_PREAD,
            IoKind::Write => IOCB_CMD_PWRITE,
            IoKind::Fsync | IoKind::Fdatasync | IoKind::Syncfs => {
                // fio 3.33 does every sync synchronously once nothing is left unsubmitted.
                self.submit()?;
                // SAFETY: the caller keeps `io.fd` open for the duration of the request.
                let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(io.fd) };
                let r = match io.kind {
                    IoKind::Fsync => rustix::fs::fsync(fd),
                    IoKind::Fdatasync => rustix::fs::fdatasync(fd),
                    _ => rustix::fs::syncfs(fd),
                }
                .map(|()| 0);
                if self.nready == self.ready.len() {
                    return Err(io::Error::other("libaio: more requests than the queue depth"));
                }
                self.ready[self.nready] = Completion::of(io.tag, r);
                self.nready += 1;
                return Ok(());
            }
        };
        if self.tail == self.iocbs.len() {
            if self.head == 0 {
                return Err(io::Error::other("libaio: more requests than the queue depth"));
            }
            self.compact();
        }
        self.iocbs[self.tail] = Iocb {
            aio_data: u64::from(io.tag),
            aio_lio_opcode: op,
            aio_fildes: io.fd as u32,
            aio_buf: io.buf as usize as u64,
            aio_nbytes: io.len as u64,
            aio_offset: io.offset as i64,
            ..Iocb::default()
        };
        self.tail += 1;
        // fio's iodepth_batch_submit = 1: each request goes to the kernel as it is queued.
        self.submit()
    }

    #[inline(always)]
    fn commit(&mut self) -> io::Result<()> {
        if self.head < self.tail {
            // Only requests an EAGAIN left queued (each goes in as it is queued otherwise).
            self.joined = true;
            self.submit()?;
        }
        Ok(())
    }

    #[inline(always)]
    fn submitted_with_wait(&mut self) -> bool {
        std::mem::take(&mut self.joined)
    }

    #[inline(always)]
    fn unsubmitted(&self) -> usize {
        self.pending()
    }

    #[inline(always)]
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        self.commit()?;
        let mut n = 0;
        while n < out.len() && self.nready > 0 {
            self.nready -= 1;
            out[n] = self.ready[self.nready];
            n += 1;
        }
        loop {
            let room = (out.len() - n).min(self.in_kernel);
            if room == 0 {
                break;
            }
            // Wait for what is still missing, never for more than the kernel holds.
            let want = min.saturating_sub(n).min(room);
            if want == 0 && n > 0 {
                break;
            }
            // No more than waited for (at least one): fio's iodepth_batch_complete_max.
            let max = want.max(1);
            let k = match io_getevents(self.ctx, want, &mut self.events[..max]) {
                Ok(k) => k.min(max),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            };
            for ev in &self.events[..k] {
                out[n] = Completion { tag: ev.data as u32, res: ev.res };
                n += 1;
            }
            self.in_kernel -= k;
            if n >= min {
                break;
            }
            // Requests left unsubmitted after an EAGAIN go in now that there is room.
            self.commit()?;
        }
        Ok(n)
    }
}

impl Libaio {
    /// Control blocks queued and not yet taken by `io_submit` ([`IoEngine::unsubmitted`]).
    #[inline(always)]
    fn pending(&self) -> usize {
        self.tail - self.head
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        if self.ctx != 0 {
            // SAFETY: the context is ours; io_destroy waits for the requests still in flight
            // (their buffers are the worker's, which outlive the engine).
            unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
            self.ctx = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn the_control_block_and_event_have_the_kernels_layout() {
        // linux/aio_abi.h: struct iocb is 64 bytes, struct io_event 32, on every architecture.
        assert_eq!(size_of::<Iocb>(), 64);
        assert_eq!(offset_of!(Iocb, aio_data), 0);
        #[cfg(target_endian = "little")]
        assert_eq!((offset_of!(Iocb, aio_key), offset_of!(Iocb, aio_rw_flags)), (8, 12));
        assert_eq!(offset_of!(Iocb, aio_lio_opcode), 16);
        assert_eq!(offset_of!(Iocb, aio_reqprio), 18);
        assert_eq!(offset_of!(Iocb, aio_fildes), 20);
        assert_eq!(offset_of!(Iocb, aio_buf), 24);
        assert_eq!(offset_of!(Iocb, aio_nbytes), 32);
        assert_eq!(offset_of!(Iocb, aio_offset), 40);
        assert_eq!(offset_of!(Iocb, aio_reserved2), 48);
        assert_eq!(offset_of!(Iocb, aio_flags), 56);
        assert_eq!(offset_of!(Iocb, aio_resfd), 60);
        assert_eq!(size_of::<IoEvent>(), 32);
        assert_eq!(
            (offset_of!(IoEvent, data), offset_of!(IoEvent, obj), offset_of!(IoEvent, res)),
            (0, 8, 16)
        );
        assert_eq!(offset_of!(IoEvent, res2), 24);
    }
}
