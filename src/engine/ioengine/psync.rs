//! `psync`: synchronous `pread(2)` / `pwrite(2)`, one system call per operation, as fio's engine of
//! the same name and the study's C programs.

use super::IoEngine;
use std::io;
use std::os::fd::BorrowedFd;

/// Synchronous positional I/O.
#[derive(Debug, Default, Clone, Copy)]
pub struct Psync;

impl IoEngine for Psync {
    const NAME: &'static str = "psync";

    #[inline(always)]
    fn read_at(&mut self, fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pread(fd, buf, offset)?)
    }

    #[inline(always)]
    fn write_at(&mut self, fd: BorrowedFd<'_>, buf: &[u8], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pwrite(fd, buf, offset)?)
    }

    #[inline(always)]
    fn fsync(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        Ok(rustix::fs::fsync(fd)?)
    }

    #[inline(always)]
    fn fdatasync(&mut self, fd: BorrowedFd<'_>) -> io::Result<()> {
        Ok(rustix::fs::fdatasync(fd)?)
    }
}
