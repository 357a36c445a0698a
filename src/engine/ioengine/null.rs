//! `null`: completes every queued request at once, successfully, without a system call, as fio's
//! `null` engine. A read "reads" nothing into its buffer and a write "writes" nothing, but both
//! report their full length, so the worker does all its own per-op work (offsets, sizes, the
//! clock, the histogram, the amount and sync bookkeeping) and nothing else: a phase's time per
//! op with this engine is the harness's own cost per op. It accepts any queue depth, so the
//! queued path of the worker is exercised at depth > 1 without io_uring.
//!
//! Namespace operations (open, create, unlink, ...) stay real system calls (the trait's
//! provided methods): a fileset's slots must match what exists on disk.

use super::{Completion, Io, IoEngine, IoKind};
use crate::model::job::EngineOptions;
use crate::workload::engines::EngineSpec;

pub use crate::workload::engines::null::NULL_MAX_DEPTH;

/// The engine that does no I/O.
#[derive(Debug, Default)]
pub struct Null {
    /// Completed, not yet reaped (a ring of `depth` entries, made in `setup`).
    done: Vec<Completion>,
    head: usize,
    len: usize,
}

impl IoEngine for Null {
    const SPEC: &'static EngineSpec = &crate::workload::engines::null::SPEC;
    type Options = ();

    fn options(_o: &EngineOptions) {}

    fn setup(depth: u32, _opts: &()) -> std::io::Result<Self> {
        Ok(Null { done: vec![Completion::default(); depth.max(1) as usize], head: 0, len: 0 })
    }

    #[inline(always)]
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        let res = match io.kind {
            IoKind::Read | IoKind::Write => io.len as i64,
            IoKind::Fsync | IoKind::Fdatasync | IoKind::Syncfs => 0,
        };
        let cap = self.done.len();
        if self.len == cap {
            return Err(std::io::Error::other("null engine: more requests queued than its depth"));
        }
        let at = (self.head + self.len) % cap;
        self.done[at] = Completion { tag: io.tag, res };
        self.len += 1;
        Ok(())
    }

    #[inline(always)]
    fn reap(&mut self, _min: usize, out: &mut [Completion]) -> std::io::Result<usize> {
        let n = self.len.min(out.len());
        let cap = self.done.len();
        for slot in out.iter_mut().take(n) {
            *slot = self.done[self.head];
            self.head = (self.head + 1) % cap;
        }
        self.len -= n;
        Ok(n)
    }
}
