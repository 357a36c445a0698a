//! A timed phase's per-op records: what fio's per-I/O logs (`write_lat_log`, `write_bw_log`,
//! `write_iops_log` without `log_avg_msec`) are made of. Kept only when a fio job asks for such
//! a log ([`crate::model::job::PhaseDef::op_log`]); the worker's recorder, which fills the
//! chunks without allocating per op, is `crate::engine::oplog`'s, and the files are written by
//! `crate::present::fio_log`.
//!
//! The records are held in chunks of [`CHUNK_RECORDS`] (as fio allocates its log in chunks),
//! never copied into one vector: a log of [`MAX_OP_RECORDS`] records is 160 MiB, and the
//! writer walks the chunks in order.

/// The most records one phase keeps: 4 Mi ops (160 MiB of 40-byte records), 16 GiB of 4 KiB
/// ops. `fsbench fio` refuses a size-bound job that could do more, and a time-based one that
/// does more has its log cut (the records after the cap are counted, not kept).
pub const MAX_OP_RECORDS: u64 = 1 << 22;

/// Records per chunk: 64 Ki (2.5 MiB).
pub const CHUNK_RECORDS: usize = 1 << 16;

/// [`OpRecord::slat_nanos`] of an op whose submission was not timed apart from its completion
/// (a synchronous engine's, or a request io_uring handed to the kernel in the call that
/// waited for it).
pub const NOT_APART: u64 = u64::MAX;

/// One data op (a read or a write) of a timed phase, as it completed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpRecord {
    /// Its completion, ns since the worker's release from the phase's start barrier.
    pub done_nanos: u64,
    /// Its latency, from its start to its completion (fio's `lat`).
    pub lat_nanos: u64,
    /// Its submission latency, from its start to the return of the call that submitted it
    /// (fio's `slat`), or [`NOT_APART`].
    pub slat_nanos: u64,
    /// Its offset in its file, bytes.
    pub offset: u64,
    /// Bytes it moved.
    pub bytes: u32,
    /// A write (else a read).
    pub write: bool,
}

impl OpRecord {
    /// Whether its submission was timed apart from its completion.
    pub fn apart(&self) -> bool {
        self.slat_nanos != NOT_APART
    }

    /// Its completion latency (fio's `clat`): from its submission's return to its completion
    /// when that was timed apart, else its whole latency.
    pub fn clat_nanos(&self) -> u64 {
        if self.apart() {
            self.lat_nanos.saturating_sub(self.slat_nanos)
        } else {
            self.lat_nanos
        }
    }

    /// When its submission returned, ns since the worker's release (its completion when the
    /// submission was not timed apart).
    pub fn submitted_nanos(&self) -> u64 {
        if self.apart() {
            self.done_nanos.saturating_sub(self.clat_nanos())
        } else {
            self.done_nanos
        }
    }
}

/// A phase's records, in the order its ops completed, in chunks; and how many the cap left
/// out.
#[derive(Clone, Default, PartialEq)]
pub struct OpLog {
    /// The records, chunk after chunk.
    pub chunks: Vec<Vec<OpRecord>>,
    /// Ops done after [`MAX_OP_RECORDS`] were kept: not recorded (the log is cut).
    pub dropped: u64,
}

impl OpLog {
    /// Every record, in order.
    pub fn iter(&self) -> impl Iterator<Item = &OpRecord> + '_ {
        self.chunks.iter().flatten()
    }

    /// Records kept.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// Whether no record is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records of `other` after this log's (a phase's several workers, in order).
    pub fn append(&mut self, other: OpLog) {
        self.chunks.extend(other.chunks.into_iter().filter(|c| !c.is_empty()));
        self.dropped += other.dropped;
    }
}

/// Not the records (millions of them): how many.
impl std::fmt::Debug for OpLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpLog")
            .field("records", &self.len())
            .field("chunks", &self.chunks.len())
            .field("dropped", &self.dropped)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// clat is lat less slat when the submission was timed apart, else the whole latency; the
    /// submission's return is the completion less the clat.
    #[test]
    fn clat_and_submission_follow_from_lat_and_slat() {
        let apart = OpRecord {
            done_nanos: 10_000,
            lat_nanos: 3_000,
            slat_nanos: 1_000,
            offset: 4096,
            bytes: 4096,
            write: true,
        };
        assert!(apart.apart());
        assert_eq!((apart.clat_nanos(), apart.submitted_nanos()), (2_000, 8_000));
        let sync = OpRecord { slat_nanos: NOT_APART, ..apart };
        assert!(!sync.apart());
        assert_eq!((sync.clat_nanos(), sync.submitted_nanos()), (3_000, 10_000));
        let mut log = OpLog { chunks: vec![vec![apart]], dropped: 1 };
        log.append(OpLog { chunks: vec![vec![], vec![sync, sync]], dropped: 2 });
        assert_eq!((log.len(), log.chunks.len(), log.dropped), (3, 2, 3));
        assert_eq!(log.iter().map(|r| r.apart()).collect::<Vec<_>>(), [true, false, false]);
        assert_eq!(format!("{log:?}"), "OpLog { records: 3, chunks: 2, dropped: 3 }");
    }
}
