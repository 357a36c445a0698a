//! `mmap`: reads and writes through a shared mapping of the file, as fio's `mmap` engine (and as
//! databases and program start-up do their I/O): a read copies from the mapping (page faults
//! bring the data in), a write copies into it (the page is dirtied, written back later), and
//! fsync/fdatasync are `msync(MS_SYNC)` of the mapping. Depth 1: each request completes inside
//! `queue`.
//!
//! The whole file is mapped at its first request (one `fstat`, one `mmap`, untimed only in the
//! sense that it happens once per worker and phase), so the mapping covers the file as it is
//! when the phase starts: validation requires `file.prefill = true` (a growing file would need a
//! new mapping per extension). A transfer past the mapped end is cut at the end, as a read at
//! end of file is.

use super::{Completion, Io, IoEngine, IoKind};
use crate::model::job::EngineOptions;
use crate::workload::engines::EngineSpec;
use rustix::mm::{MapFlags, MsyncFlags, ProtFlags};
use std::os::fd::BorrowedFd;

/// I/O through a shared mapping.
#[derive(Debug)]
pub struct Mmap {
    /// The mapped file (-1: none).
    fd: i32,
    /// Start of the mapping (null: none).
    base: *mut u8,
    /// Length of the mapping in bytes.
    len: usize,
    /// The result of the request queued last, until reaped.
    done: Option<Completion>,
}

// SAFETY: the mapping belongs to the worker thread that owns the engine; `Send` is needed only to
// build the engine there.
unsafe impl Send for Mmap {}

impl Mmap {
    /// Map `fd` (whole file, shared, read-write when the file was opened for writing).
    fn map(&mut self, fd: BorrowedFd<'_>) -> rustix::io::Result<()> {
        self.unmap();
        let size = rustix::fs::fstat(fd)?.st_size as usize;
        let writable = rustix::fs::fcntl_getfl(fd)?.contains(rustix::fs::OFlags::RDWR);
        let prot = if writable { ProtFlags::READ | ProtFlags::WRITE } else { ProtFlags::READ };
        if size > 0 {
            // SAFETY: a new shared mapping of an open file; no existing memory is replaced.
            let p = unsafe {
                rustix::mm::mmap(std::ptr::null_mut(), size, prot, MapFlags::SHARED, fd, 0)?
            };
            self.base = p.cast();
            self.len = size;
        }
        use std::os::fd::AsRawFd;
        self.fd = fd.as_raw_fd();
        Ok(())
    }

    fn unmap(&mut self) {
        if !self.base.is_null() {
            // SAFETY: `base`/`len` are exactly the mapping made in `map`.
            let _ = unsafe { rustix::mm::munmap(self.base.cast(), self.len) };
        }
        self.base = std::ptr::null_mut();
        self.len = 0;
        self.fd = -1;
    }

    #[inline(always)]
    fn op(&mut self, io: &Io) -> rustix::io::Result<usize> {
        // SAFETY: the caller keeps `io.fd` open for the duration of the request.
        let fd = unsafe { BorrowedFd::borrow_raw(io.fd) };
        if io.fd != self.fd {
            self.map(fd)?;
        }
        match io.kind {
            IoKind::Read | IoKind::Write => {
                let off = io.offset as usize;
                if off >= self.len {
                    return Ok(0);
                }
                let n = io.len.min(self.len - off);
                // SAFETY: [off, off + n) lies inside the mapping; `io.buf` is valid for `io.len`
                // bytes (the caller's contract) and does not overlap the mapping.
                unsafe {
                    let m = self.base.add(off);
                    if io.kind == IoKind::Read {
                        std::ptr::copy_nonoverlapping(m, io.buf, n);
                    } else {
                        std::ptr::copy_nonoverlapping(io.buf, m, n);
                    }
                }
                Ok(n)
            }
            IoKind::Fsync | IoKind::Fdatasync => {
                if !self.base.is_null() {
                    // SAFETY: the whole mapping made in `map`.
                    unsafe { rustix::mm::msync(self.base.cast(), self.len, MsyncFlags::SYNC)? };
                }
                Ok(0)
            }
            IoKind::Syncfs => rustix::fs::syncfs(fd).map(|()| 0),
        }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        self.unmap();
    }
}

impl IoEngine for Mmap {
    const SPEC: &'static EngineSpec = &crate::workload::engines::mmap::SPEC;
    type Options = ();

    fn options(_o: &EngineOptions) {}

    fn setup(_depth: u32, _opts: &()) -> std::io::Result<Self> {
        Ok(Mmap { fd: -1, base: std::ptr::null_mut(), len: 0, done: None })
    }

    #[inline(always)]
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        let r = self.op(&io);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsRawFd;

    fn io(kind: IoKind, fd: i32, buf: &mut [u8], offset: u64) -> Io {
        Io { kind, fd, buf: buf.as_mut_ptr(), len: buf.len(), offset, tag: 7 }
    }

    fn run(e: &mut Mmap, i: Io) -> Completion {
        let mut out = [Completion::default()];
        // SAFETY: the buffers and file outlive the call; the request completes inside it.
        unsafe { e.queue(i).unwrap() };
        assert_eq!(e.reap(1, &mut out).unwrap(), 1);
        out[0]
    }

    #[test]
    fn reads_and_writes_go_through_the_mapping_and_msync_persists_them() {
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..16384u32).map(|i| (i % 253) as u8).collect();
        f.write_all(&data).unwrap();
        let fd = f.as_raw_fd();
        let mut e = Mmap::setup(1, &()).unwrap();
        let mut b = [0u8; 4096];
        assert_eq!(
            run(&mut e, io(IoKind::Read, fd, &mut b, 4096)),
            Completion { tag: 7, res: 4096 }
        );
        assert_eq!(&b[..], &data[4096..8192]);
        let mut w = [0xabu8; 4096];
        assert_eq!(run(&mut e, io(IoKind::Write, fd, &mut w, 8192)).res, 4096);
        assert_eq!(run(&mut e, io(IoKind::Fsync, fd, &mut [], 0)).res, 0);
        let mut back = vec![0u8; 4096];
        f.seek(std::io::SeekFrom::Start(8192)).unwrap();
        f.read_exact(&mut back).unwrap();
        assert!(back.iter().all(|&x| x == 0xab));
        // Past the end: cut at the end, then 0 (end of file).
        assert_eq!(run(&mut e, io(IoKind::Read, fd, &mut b, 14336)).res, 2048);
        assert_eq!(run(&mut e, io(IoKind::Read, fd, &mut b, 1 << 20)).res, 0);
    }
}
