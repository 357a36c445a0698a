//! `psync`: synchronous `pread(2)` / `pwrite(2)`, one system call per operation, as fio's engine of
//! the same name and the study's C programs. Queue depth 1: [`IoEngine::queue`] does the system
//! call and keeps its result; the next [`IoEngine::reap`] hands it back. Both inline into the
//! worker, so a data op costs what the bare system call costs (rustix issues the `syscall`
//! instruction directly, without glibc's cancellation-point bracket).

use super::{Completion, Io, IoEngine, IoKind};
use crate::model::job::EngineOptions;
use crate::workload::engines::EngineSpec;
use std::os::fd::BorrowedFd;

/// Synchronous positional I/O.
#[derive(Debug, Default, Clone, Copy)]
pub struct Psync {
    /// The result of the request queued last, until reaped.
    done: Option<Completion>,
}

impl IoEngine for Psync {
    const SPEC: &'static EngineSpec = &crate::workload::engines::psync::SPEC;
    type Options = ();

    fn options(_o: &EngineOptions) {}

    fn setup(_depth: u32, _opts: &()) -> std::io::Result<Self> {
        Ok(Psync { done: None })
    }

    #[inline(always)]
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        // SAFETY: the caller keeps `io.fd` open for the duration of the request.
        let fd = unsafe { BorrowedFd::borrow_raw(io.fd) };
        let r = match io.kind {
            IoKind::Read => {
                // SAFETY: the caller guarantees `buf` is valid and writable for `len` bytes.
                let buf = unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) };
                rustix::io::pread(fd, buf, io.offset)
            }
            IoKind::Write => {
                // SAFETY: the caller guarantees `buf` is valid for `len` bytes.
                let buf = unsafe { std::slice::from_raw_parts(io.buf, io.len) };
                rustix::io::pwrite(fd, buf, io.offset)
            }
            IoKind::Fsync => rustix::fs::fsync(fd).map(|()| 0),
            IoKind::Fdatasync => rustix::fs::fdatasync(fd).map(|()| 0),
            IoKind::Syncfs => rustix::fs::syncfs(fd).map(|()| 0),
        };
        self.done = Some(Completion::of(io.tag, r));
        Ok(())
    }

    #[inline(always)]
    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> std::io::Result<usize> {
        match self.done.take() {
            Some(c) => {
                out[0] = c;
                Ok(1)
            }
            None => Ok(0),
        }
    }
}
