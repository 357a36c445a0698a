//! The compact in-memory event (24 bytes, no heap data) and how one binary record of a block
//! tracepoint is decoded into it, using field offsets from the kernel's format files.

use super::format::{Format, FormatError};
use crate::model::trace::Op;

/// Which tracepoint an event came from (blktrace's action letter in brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// `block_bio_queue` (Q): a bio entered the block layer.
    BioQueue,
    /// `block_bio_backmerge` (M): a bio was appended to an existing request.
    BioBackmerge,
    /// `block_bio_frontmerge` (F): a bio was prepended to an existing request.
    BioFrontmerge,
    /// `block_split` (X): a bio was split in two.
    Split,
    /// `block_rq_insert` (I): a request went into the scheduler / dispatch list.
    RqInsert,
    /// `block_rq_issue` (D): a request was handed to the driver.
    RqIssue,
    /// `block_rq_merge` (two requests merged in the scheduler).
    RqMerge,
    /// `block_rq_complete` (C): the driver finished a request.
    RqComplete,
}

impl Kind {
    /// Every kind with its tracepoint name, in the order they are enabled.
    pub const ALL: [(Kind, &'static str); 8] = [
        (Kind::RqComplete, "block_rq_complete"),
        (Kind::RqIssue, "block_rq_issue"),
        (Kind::RqInsert, "block_rq_insert"),
        (Kind::RqMerge, "block_rq_merge"),
        (Kind::Split, "block_split"),
        (Kind::BioBackmerge, "block_bio_backmerge"),
        (Kind::BioFrontmerge, "block_bio_frontmerge"),
        (Kind::BioQueue, "block_bio_queue"),
    ];
}

impl Op {
    /// Parse blk_fill_rwbs() output: an optional leading `F` (preflush), then the operation
    /// letter, then flags (`F` FUA, `A` readahead, `S` sync, `M` meta). `FWS` is a write with
    /// preflush, `FF` a flush request with preflush, `WFS` a FUA write.
    pub fn from_rwbs(rwbs: &[u8]) -> Op {
        let letter = |c: u8| match c {
            b'R' => Some(Op::Read),
            b'W' => Some(Op::Write),
            b'D' => Some(Op::Discard),
            b'F' => Some(Op::Flush),
            b'N' => Some(Op::Other),
            _ => None,
        };
        match rwbs {
            [b'F', second, ..] if letter(*second).is_some() => letter(*second).unwrap_or(Op::Other),
            [first, ..] => letter(*first).unwrap_or(Op::Other),
            [] => Op::Other,
        }
    }
}

/// One traced event. Kept small (24 bytes) because a busy device produces millions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// CLOCK_MONOTONIC time (the instance's `mono` trace clock), nanoseconds.
    pub ts_ns: u64,
    /// First 512-byte sector (for a split: where the bio was split).
    pub sector: u64,
    /// Length in 512-byte sectors (0 for a split and for flushes).
    pub nr_sector: u32,
    /// Index of the device in the tracer's device list.
    pub dev: u8,
    /// Tracepoint.
    pub kind: Kind,
    /// Operation.
    pub op: Op,
    /// `rwbs` flag letters after the operation ([`FLAG_META`], [`FLAG_READAHEAD`], ...).
    pub flags: u8,
}

/// `M` in `rwbs`: REQ_META, a filesystem metadata read or write.
pub const FLAG_META: u8 = 1;
/// `A` in `rwbs`: REQ_RAHEAD, readahead.
pub const FLAG_READAHEAD: u8 = 2;
/// `S` in `rwbs`: REQ_SYNC.
pub const FLAG_SYNC: u8 = 4;

/// The flag letters of an `rwbs` string (after its first, operation, letter).
pub fn rwbs_flags(rwbs: &[u8]) -> u8 {
    let mut f = 0;
    for &c in rwbs.iter().skip(1) {
        f |= match c {
            b'M' => FLAG_META,
            b'A' => FLAG_READAHEAD,
            b'S' => FLAG_SYNC,
            _ => 0,
        };
    }
    f
}

/// Turns one binary record (starting at `common_type`) into an event of type `Out`, or `None`
/// for records it does not want. The ring-buffer parser and the reader thread are generic over
/// it, so every tracepoint family shares one reader.
pub trait Decode: Send + 'static {
    /// The decoded event (small, no heap data: millions are kept).
    type Out: Copy + Send + 'static;
    /// Decode the record `rec` stamped `ts_ns`.
    fn decode(&self, ts_ns: u64, rec: &[u8]) -> Option<Self::Out>;
    /// The CLOCK_MONOTONIC time of an event (for merging the per-CPU lists).
    fn time_of(ev: &Self::Out) -> u64;
}

impl Decode for Decoder {
    type Out = Event;
    #[inline]
    fn decode(&self, ts_ns: u64, rec: &[u8]) -> Option<Event> {
        Decoder::decode(self, ts_ns, rec)
    }
    fn time_of(ev: &Event) -> u64 {
        ev.ts_ns
    }
}

impl Event {
    /// Length in bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.nr_sector) * 512
    }
}

#[derive(Debug, Clone, Copy)]
struct Offsets {
    id: u16,
    kind: Kind,
    dev: usize,
    sector: usize,
    /// `None` for block_split, which has `new_sector` instead.
    nr_sector: Option<usize>,
    rwbs: usize,
    rwbs_len: usize,
}

/// Decodes binary records of the block tracepoints for a given set of devices.
#[derive(Debug, Clone)]
pub struct Decoder {
    events: Vec<Offsets>,
    /// Kernel-internal dev_t values (MAJOR << 20 | MINOR) and the [`Event::dev`] index each
    /// maps to.
    devs: Vec<(u32, u8)>,
}

impl Decoder {
    /// Build from the format files of the events (`(kind, format text)`) and the devices'
    /// kernel dev_t values. Fails with a description when a field is missing or has an
    /// unexpected size.
    pub fn new(formats: &[(Kind, &str)], devs: Vec<u32>) -> Result<Decoder, FormatError> {
        let index = (0..devs.len()).collect();
        Decoder::new_with_index(formats, devs, index)
    }

    /// Like [`Decoder::new`], with `index[i]` the [`Event::dev`] of `devs[i]` (several dev_t
    /// values may stand for one device, e.g. a partition and its disk).
    pub fn new_with_index(
        formats: &[(Kind, &str)],
        devs: Vec<u32>,
        index: Vec<usize>,
    ) -> Result<Decoder, FormatError> {
        let mut events = Vec::new();
        for (kind, text) in formats {
            let f = Format::parse_event(kind, text)?;
            let need = |name: &str, size: usize| f.offset_of(name, &[size]);
            let rwbs = f.require("rwbs")?;
            events.push(Offsets {
                id: f.require_id()?,
                kind: *kind,
                dev: need("dev", 4)?,
                sector: need("sector", 8)?,
                nr_sector: if *kind == Kind::Split { None } else { Some(need("nr_sector", 4)?) },
                rwbs: rwbs.offset,
                rwbs_len: rwbs.size,
            });
        }
        if devs.len() != index.len() {
            return Err(FormatError::DeviceIndex);
        }
        let mut pairs = Vec::with_capacity(devs.len());
        for (d, i) in devs.into_iter().zip(index) {
            let i = u8::try_from(i).map_err(|_| FormatError::TooManyDevices)?;
            pairs.push((d, i));
        }
        Ok(Decoder { events, devs: pairs })
    }

    /// Decode one record (starting at `common_type`). `None` for other events, devices not
    /// traced, or a record too short for its fields.
    #[inline]
    pub fn decode(&self, ts_ns: u64, rec: &[u8]) -> Option<Event> {
        let id = u16::from_le_bytes(rec.get(0..2)?.try_into().ok()?);
        let o = self.events.iter().find(|o| o.id == id)?;
        let dev = u32::from_le_bytes(rec.get(o.dev..o.dev + 4)?.try_into().ok()?);
        let dev = self.devs.iter().find(|(d, _)| *d == dev)?.1;
        let sector = u64::from_le_bytes(rec.get(o.sector..o.sector + 8)?.try_into().ok()?);
        let nr_sector = match o.nr_sector {
            Some(off) => u32::from_le_bytes(rec.get(off..off + 4)?.try_into().ok()?),
            None => 0,
        };
        let rwbs = rec.get(o.rwbs..o.rwbs + o.rwbs_len)?;
        let end = rwbs.iter().position(|&c| c == 0).unwrap_or(rwbs.len());
        let rwbs = &rwbs[..end];
        Some(Event {
            ts_ns,
            sector,
            nr_sector,
            dev,
            kind: o.kind,
            op: Op::from_rwbs(rwbs),
            flags: rwbs_flags(rwbs),
        })
    }
}

/// The kernel-internal dev_t of a device as stored in tracepoints: MAJOR << 20 | MINOR
/// (include/linux/kdev_t.h, MINORBITS = 20), not the userspace encoding.
pub fn kernel_dev_t(major: u32, minor: u32) -> u32 {
    (major << 20) | (minor & ((1 << 20) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_strings() {
        assert_eq!(Op::from_rwbs(b"WS"), Op::Write);
        assert_eq!(Op::from_rwbs(b"FWS"), Op::Write);
        assert_eq!(Op::from_rwbs(b"WFS"), Op::Write);
        assert_eq!(Op::from_rwbs(b"RA"), Op::Read);
        assert_eq!(Op::from_rwbs(b"RSM"), Op::Read);
        assert_eq!(Op::from_rwbs(b"FF"), Op::Flush);
        assert_eq!(Op::from_rwbs(b"F"), Op::Flush);
        assert_eq!(Op::from_rwbs(b"FS"), Op::Flush);
        assert_eq!(Op::from_rwbs(b"DS"), Op::Discard);
        assert_eq!(Op::from_rwbs(b"N"), Op::Other);
        assert_eq!(Op::from_rwbs(b""), Op::Other);
    }

    #[test]
    fn dev_t_encoding() {
        // 7,3 (loop3) as the tracepoints print it and as filters must compare it.
        assert_eq!(kernel_dev_t(7, 3), 7_340_035);
        assert_eq!(kernel_dev_t(7, 0) >> 20, 7);
    }

    #[test]
    fn event_is_small() {
        assert_eq!(std::mem::size_of::<Event>(), 24);
    }
}
