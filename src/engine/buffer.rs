//! Page-aligned I/O buffers and the data written by tests.
//!
//! Written data is incompressible by default: bonnie++'s repetitive blocks once made ZFS with
//! compression look 28 times faster (seed 003). A write buffer is a pool of random bytes a little
//! larger than the largest write; each write takes a window starting at a different 4 KiB step,
//! so consecutive blocks differ (no dedup) without generating data per operation.
//! `compress_percent` zeroes that share of every 4 KiB block, like fio's
//! `buffer_compress_percentage`.

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Alignment of every buffer (enough for O_DIRECT on 4Kn devices).
pub const ALIGN: usize = 4096;
/// Extra bytes in a write pool beyond the largest write: the windows' range of start offsets.
const WINDOW_SPAN: usize = 1 << 20;

/// A heap buffer aligned to [`ALIGN`].
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of at least `len` bytes (rounded up to [`ALIGN`]).
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1).div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align(len, ALIGN).expect("buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the lifetime of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this exact layout.
        unsafe { dealloc(self.ptr, Layout::from_size_align_unchecked(self.len, ALIGN)) }
    }
}

/// The source of written data: a pool of (mostly) random bytes with rotating windows, or, with
/// `--verify`, the verified content of the bytes written ([`super::verify`]).
pub struct WritePool {
    buf: AlignedBuf,
    next: usize,
    verified: Option<Verified>,
}

/// Verified mode: one slot of `stride` bytes per request that may be in flight, and a cell.
struct Verified {
    seed: u64,
    file: u64,
    stride: usize,
    cell: Vec<u8>,
}

impl WritePool {
    /// A pool for writes up to `max_write` bytes; `seed` makes the data differ per thread.
    pub fn new(max_write: usize, compress_percent: u8, seed: u64) -> WritePool {
        let mut buf = AlignedBuf::new(max_write + WINDOW_SPAN);
        fill(buf.as_mut_slice(), compress_percent, seed);
        WritePool { buf, next: 0, verified: None }
    }

    /// A pool whose windows hold file `file`'s verified content at the offset written
    /// ([`super::verify::fill_range`]), for up to `slots` requests in flight at once.
    pub fn verified(max_write: usize, slots: usize, seed: u64, file: u64) -> WritePool {
        let stride = max_write.max(1).div_ceil(ALIGN) * ALIGN;
        WritePool {
            buf: AlignedBuf::new(stride * slots.max(1)),
            next: 0,
            verified: Some(Verified {
                seed,
                file,
                stride,
                cell: vec![0u8; crate::model::block::BLOCK_BYTES],
            }),
        }
    }

    /// The whole pool, where every window lies (io_uring registers it with `fixedbufs`).
    pub fn region(&mut self) -> (*mut u8, usize) {
        let b = self.buf.as_mut_slice();
        (b.as_mut_ptr(), b.len())
    }

    /// The data of a write of `len` bytes at `off`, held in `slot` (the request's queue slot,
    /// so a window stays untouched while its request is in flight): the verified content in
    /// verified mode, else the next window.
    #[inline(always)]
    pub fn window_at(&mut self, slot: usize, off: u64, len: usize) -> &[u8] {
        match &mut self.verified {
            None => self.window(len),
            Some(v) => {
                let start = slot * v.stride;
                let out = &mut self.buf.as_mut_slice()[start..start + len];
                super::verify::fill_range(out, &mut v.cell, v.seed, v.file, off);
                &self.buf.as_slice()[start..start + len]
            }
        }
    }

    /// The verified content of bytes `[off, off + len)` of file `file` (a verified pool of one
    /// slot, whose file changes from write to write: a fileset's files).
    #[inline]
    pub fn window_of(&mut self, file: u64, off: u64, len: usize) -> &[u8] {
        if let Some(v) = &mut self.verified {
            v.file = file;
        }
        self.window_at(0, off, len)
    }

    /// The next `len`-byte window (page-aligned start, so usable with O_DIRECT).
    #[inline(always)]
    pub fn window(&mut self, len: usize) -> &[u8] {
        let start = self.next;
        self.next += ALIGN;
        if self.next >= WINDOW_SPAN {
            self.next = 0;
        }
        &self.buf.as_slice()[start..start + len]
    }
}

/// Fill `buf` with random bytes, zeroing the last `compress_percent`% of each 4 KiB block.
pub fn fill(buf: &mut [u8], compress_percent: u8, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x5eed_f5be_4c40_0001);
    let keep = ALIGN * (100 - compress_percent.min(100) as usize) / 100;
    for block in buf.chunks_mut(ALIGN) {
        let k = keep.min(block.len());
        rng.fill(&mut block[..k]);
        block[k..].fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_sized() {
        let b = AlignedBuf::new(5000);
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_slice().len(), 8192);
    }

    #[test]
    fn windows_rotate_and_stay_aligned() {
        let mut p = WritePool::new(8192, 0, 1);
        let a = p.window(8192).as_ptr() as usize;
        let b = p.window(8192).as_ptr() as usize;
        assert_eq!(b - a, ALIGN);
        assert_eq!(a % ALIGN, 0);
        for _ in 0..1000 {
            assert_eq!(p.window(8192).len(), 8192);
        }
    }

    /// Distinct bytes in a buffer: a crude but sufficient compressibility check.
    fn zero_share(b: &[u8]) -> f64 {
        b.iter().filter(|x| **x == 0).count() as f64 / b.len() as f64
    }

    #[test]
    fn compressibility_knob() {
        let mut a = vec![0u8; 1 << 16];
        fill(&mut a, 0, 7);
        assert!(zero_share(&a) < 0.01);
        fill(&mut a, 50, 7);
        let z = zero_share(&a);
        assert!((0.49..0.52).contains(&z), "{z}");
    }
}
