//! I/O engines: how one operation reaches the kernel.
//!
//! Like fio's `struct ioengine_ops`, one trait and one file per engine. The worker is generic
//! over the engine, so calls are monomorphised and inlined: no dynamic dispatch per operation.
//! `psync` (pread/pwrite) is the only engine today; io_uring would be a second file here.

mod psync;

pub use psync::Psync;

use std::io;
use std::os::fd::BorrowedFd;

/// One way of issuing file I/O.
pub trait IoEngine: Send {
    /// Engine name as shown in results.
    const NAME: &'static str;
    /// Read into `buf` at `offset`; returns bytes read.
    fn read_at(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Write `buf` at `offset`; returns bytes written.
    fn write_at(&mut self, fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<usize>;
    /// `fsync(2)`.
    fn fsync(&mut self, fd: BorrowedFd<'_>) -> io::Result<()>;
    /// `fdatasync(2)`.
    fn fdatasync(&mut self, fd: BorrowedFd<'_>) -> io::Result<()>;
}
