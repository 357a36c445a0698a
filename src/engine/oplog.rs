//! The worker's per-op recorder, for fio's per-I/O logs ([`crate::model::oplog`]).
//!
//! Why a module: a fio job with `write_lat_log`, `write_bw_log` or `write_iops_log` and no
//! `log_avg_msec` wants a line per I/O, which the phase's histograms and interval series do not
//! keep. The recorder is made before the start barrier, only for a phase that asks
//! ([`crate::model::job::PhaseDef::op_log`]); a phase that does not has no recorder, and its
//! worker pays one branch on a field that is `None`. Per recorded op: a store of six integers
//! into the chunk in hand and a comparison. The chunks of [`CHUNK_RECORDS`] records (as fio
//! grows its log by chunks) that a phase bound by bytes or ops needs are allocated before the
//! barrier, so its loop makes no allocation at all (their pages are touched as they fill, as
//! any buffer's); a time-based phase allocates a chunk once per 64 Ki ops. The list of chunks is
//! reserved up front for the cap, and past [`MAX_OP_RECORDS`] an op is only counted. No lock,
//! no formatting: the lines are written after the run (`crate::present::fio_log`).

use crate::model::oplog::{OpLog, OpRecord, CHUNK_RECORDS, MAX_OP_RECORDS};

/// One worker's records, in chunks.
#[derive(Debug)]
pub struct OpRecorder {
    /// Filled in order, each of `chunk` records' capacity; `cur` is the one in hand, those
    /// after it allocated ahead and empty.
    chunks: Vec<Vec<OpRecord>>,
    /// Index of the chunk in hand.
    cur: usize,
    /// Records per chunk.
    chunk: usize,
    /// Records kept at most.
    cap: u64,
    /// Records kept.
    kept: u64,
    /// Ops past the cap.
    dropped: u64,
    /// `CLOCK_MONOTONIC` ns of the worker's release: records count from it.
    origin: u64,
}

impl OpRecorder {
    /// A recorder of [`MAX_OP_RECORDS`] at most, with the chunks for `expected` ops (at least
    /// one; 0: not known) allocated now, before the barrier.
    pub fn new(expected: u64) -> OpRecorder {
        OpRecorder::with(CHUNK_RECORDS, MAX_OP_RECORDS, expected)
    }

    /// A recorder of `cap` records at most in chunks of `chunk` records, the chunks for
    /// `expected` records (at most `cap`, at least one chunk) allocated now.
    pub fn with(chunk: usize, cap: u64, expected: u64) -> OpRecorder {
        let chunk = chunk.max(1);
        let mut chunks = Vec::with_capacity(cap.div_ceil(chunk as u64).max(1) as usize);
        let ahead = expected.min(cap).div_ceil(chunk as u64).max(1);
        chunks.extend((0..ahead).map(|_| Vec::with_capacity(chunk)));
        OpRecorder { chunks, cur: 0, chunk, cap, kept: 0, dropped: 0, origin: 0 }
    }

    /// The worker was released at `origin` (ns): every record's time counts from it.
    pub fn start(&mut self, origin: u64) {
        self.origin = origin;
    }

    /// Record a data op that completed at `done` (ns, the clock) after `lat` ns, submitted
    /// `slat` ns after its start ([`crate::model::oplog::NOT_APART`]: not timed apart), at
    /// `offset`, moving `bytes`.
    #[inline]
    pub fn push(&mut self, done: u64, lat: u64, slat: u64, offset: u64, bytes: u32, write: bool) {
        if self.kept >= self.cap {
            self.dropped += 1;
            return;
        }
        let full = self.chunks.get(self.cur).is_none_or(|c| c.len() >= self.chunk);
        if full {
            self.next_chunk();
        }
        let r = OpRecord {
            done_nanos: done.saturating_sub(self.origin),
            lat_nanos: lat,
            slat_nanos: slat,
            offset,
            bytes,
            write,
        };
        if let Some(c) = self.chunks.get_mut(self.cur) {
            c.push(r);
            self.kept += 1;
        }
    }

    /// The next chunk, allocated ahead or now: once per `chunk` ops, out of the per-op path.
    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self) {
        self.cur += 1;
        if self.cur >= self.chunks.len() {
            self.chunks.push(Vec::with_capacity(self.chunk));
        }
    }

    /// The records, for the phase's result.
    pub fn into_log(self) -> OpLog {
        let chunks = self.chunks.into_iter().filter(|c| !c.is_empty()).collect();
        OpLog { chunks, dropped: self.dropped }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::oplog::NOT_APART;

    /// Records fill a chunk to its size before the next is allocated, keep their order and
    /// their fields (times from the release), never move a chunk that is full, and past the
    /// cap are counted and not kept.
    #[test]
    fn records_fill_chunks_in_order_up_to_the_cap() {
        let mut r = OpRecorder::with(4, 10, 0);
        r.start(1_000);
        assert_eq!((r.chunks.len(), r.chunks[0].capacity()), (1, 4));
        let list_at = r.chunks.as_ptr();
        let mut first_chunk_at = None;
        for i in 0..13u64 {
            r.push(
                1_000 + 10 * i,
                5 + i,
                if i % 2 == 0 { 2 } else { NOT_APART },
                4096 * i,
                4096,
                i % 3 == 0,
            );
            first_chunk_at.get_or_insert(r.chunks[0].as_ptr());
            // A full chunk stays where it is: the records in it are never copied.
            assert_eq!(r.chunks[0].as_ptr(), first_chunk_at.unwrap_or(std::ptr::null()));
        }
        // The list of chunks was reserved for the cap: never reallocated.
        assert_eq!(r.chunks.as_ptr(), list_at);
        let sizes: Vec<usize> = r.chunks.iter().map(Vec::len).collect();
        assert_eq!(sizes, [4, 4, 2]);
        assert!(r.chunks.iter().all(|c| c.capacity() == 4));
        let log = r.into_log();
        assert_eq!((log.len(), log.dropped), (10, 3));
        for (i, rec) in log.iter().enumerate() {
            let i = i as u64;
            assert_eq!(rec.done_nanos, 10 * i);
            assert_eq!((rec.lat_nanos, rec.offset, rec.bytes), (5 + i, 4096 * i, 4096));
            assert_eq!(rec.apart(), i % 2 == 0);
            assert_eq!(rec.write, i % 3 == 0);
        }
        // Nothing recorded: no chunk, nothing dropped.
        let log = OpRecorder::with(4, 10, 0).into_log();
        assert!(log.is_empty() && log.chunks.is_empty() && log.dropped == 0);
        // 64 Ki records a chunk, the list reserved for the whole cap.
        let r = OpRecorder::new(0);
        assert_eq!((r.chunks.len(), r.chunks[0].capacity()), (1, CHUNK_RECORDS));
        assert!(r.chunks.capacity() as u64 * CHUNK_RECORDS as u64 >= MAX_OP_RECORDS);
    }

    /// The chunks a known count needs are allocated ahead (none while recording it): the
    /// records go into them in order, each chunk where it was allocated; past the count, a
    /// chunk is allocated as it is needed; a count past the cap allocates the cap's chunks.
    #[test]
    fn chunks_for_a_known_count_are_allocated_before_the_first_op() {
        let mut r = OpRecorder::with(4, 100, 10);
        let ahead: Vec<*const OpRecord> = r.chunks.iter().map(|c| c.as_ptr()).collect();
        assert_eq!(ahead.len(), 3);
        for i in 0..10 {
            r.push(i, 1, NOT_APART, 0, 512, false);
        }
        assert_eq!(r.chunks.iter().map(|c| c.as_ptr()).collect::<Vec<_>>(), ahead);
        assert_eq!(r.chunks.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 2]);
        for i in 10..13 {
            r.push(i, 1, NOT_APART, 0, 512, false);
        }
        assert_eq!(r.chunks.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 4, 1]);
        let log = r.into_log();
        assert_eq!(
            log.iter().map(|r| r.done_nanos).collect::<Vec<_>>(),
            (0..13).collect::<Vec<_>>()
        );
        assert_eq!(OpRecorder::with(4, 10, 1_000).chunks.len(), 3);
        assert_eq!(OpRecorder::with(4, 10, 4).chunks.len(), 1);
    }
}
