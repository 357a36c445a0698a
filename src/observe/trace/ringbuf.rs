//! The binary format of `trace_pipe_raw`: one ring-buffer sub-buffer ("page") per read.
//!
//! Layout (kernel/trace/ring_buffer.c, and `events/header_page` / `events/header_event`):
//! a page header `{ u64 timestamp; local_t commit; }` then `commit` bytes of events. The top
//! bits of `commit` are flags: bit 31 `RB_MISSED_EVENTS` (events were lost before this page),
//! bit 30 `RB_MISSED_STORED` (their count is stored as an `unsigned long` right after the
//! data). Each event starts with a 32-bit header, `type_len:5` (low bits) and
//! `time_delta:27`:
//!
//! - `type_len` 1..=28: a data record of `type_len * 4` bytes follows;
//! - 0: the next u32 is the record length + 4, the record follows it;
//! - 29 padding (`time_delta == 0` means the rest of the page is empty), its length in the
//!   next u32;
//! - 30 time extend: the next u32 holds bits 27.. of a delta;
//! - 31 absolute time stamp (the low 59 bits of the time).
//!
//! The time of an event is the page timestamp plus the deltas of the events up to it (padding
//! adds nothing, as in the kernel's rb_update_read_stamp()).

use super::event::Decode;

const TS_SHIFT: u32 = 27;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const COMMIT_MASK: u64 = (1 << 30) - 1;

/// Where the header fields are (from `events/header_page`; the x86_64 values by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Offset of `commit`.
    pub commit_offset: usize,
    /// Size of `commit` (`local_t`: 8 on 64-bit kernels, 4 on 32-bit).
    pub commit_size: usize,
    /// Offset of the first event.
    pub data_offset: usize,
}

impl Default for PageLayout {
    fn default() -> Self {
        PageLayout { commit_offset: 8, commit_size: 8, data_offset: 16 }
    }
}

impl PageLayout {
    /// From the text of `events/header_page`.
    pub fn from_header_page(text: &str) -> Option<PageLayout> {
        let f = super::format::Format::parse(text)?;
        let commit = f.field("commit")?;
        let data = f.field("data")?;
        matches!(commit.size, 4 | 8).then_some(PageLayout {
            commit_offset: commit.offset,
            commit_size: commit.size,
            data_offset: data.offset,
        })
    }
}

/// What one page held besides its events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageInfo {
    /// Records decoded into events.
    pub events: u64,
    /// Records skipped (other events or devices).
    pub skipped: u64,
    /// The kernel flagged lost events before this page.
    pub missed_flag: bool,
    /// How many, when the kernel could store the count.
    pub missed: u64,
}

/// A page that does not follow the format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed ring-buffer page at byte {offset}: {what}")]
pub struct PageError {
    /// Byte offset in the page.
    pub offset: usize,
    /// What was wrong.
    pub what: &'static str,
}

impl crate::sys::classify::Classify for PageError {
    /// The kernel's trace buffer, not the user's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

fn u32_at(p: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(p.get(off..off + 4)?.try_into().ok()?))
}

fn u64_at(p: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(p.get(off..off + 8)?.try_into().ok()?))
}

/// Decode every event of one page into `out` (appended in page order, which is time order).
/// `limit` caps `out.len()`; records beyond it are counted in `over_limit`.
pub fn parse_page<D: Decode>(
    page: &[u8],
    layout: PageLayout,
    decoder: &D,
    out: &mut Vec<D::Out>,
    limit: usize,
    over_limit: &mut u64,
) -> Result<PageInfo, PageError> {
    let err = |offset, what| PageError { offset, what };
    let mut ts = u64_at(page, 0).ok_or(err(0, "short page header"))?;
    let commit = match layout.commit_size {
        4 => u32_at(page, layout.commit_offset).map(u64::from),
        _ => u64_at(page, layout.commit_offset),
    }
    .ok_or(err(layout.commit_offset, "short page header"))?;
    let size = (commit & COMMIT_MASK) as usize;
    let start = layout.data_offset;
    let end = start + size;
    if end > page.len() {
        return Err(err(layout.commit_offset, "commit larger than the page"));
    }
    let mut info = PageInfo { missed_flag: commit & MISSED_EVENTS != 0, ..Default::default() };
    if commit & MISSED_STORED != 0 {
        info.missed = match layout.commit_size {
            4 => u32_at(page, end).map(u64::from),
            _ => u64_at(page, end),
        }
        .unwrap_or(0);
    }
    let mut pos = start;
    while pos + 4 <= end {
        let hdr = u32_at(page, pos).ok_or(err(pos, "short event header"))?;
        let type_len = hdr & 0x1f;
        let delta = u64::from(hdr >> 5);
        let (rec_start, rec_len, next) = match type_len {
            29 => {
                if delta == 0 {
                    break; // the rest of the page is unused
                }
                let len = u32_at(page, pos + 4).ok_or(err(pos, "short padding"))? as usize;
                pos += 4 + len;
                continue;
            }
            30 => {
                let ext = u64::from(u32_at(page, pos + 4).ok_or(err(pos, "short time extend"))?);
                ts = ts.wrapping_add((ext << TS_SHIFT) | delta);
                pos += 8;
                continue;
            }
            31 => {
                let ext = u64::from(u32_at(page, pos + 4).ok_or(err(pos, "short time stamp"))?);
                let abs = (ext << TS_SHIFT) | delta;
                // Only the low 59 bits are stored; the top ones come from the running time.
                const LOW: u64 = (1 << 59) - 1;
                ts = (ts & !LOW) | (abs & LOW);
                pos += 8;
                continue;
            }
            0 => {
                let len = u32_at(page, pos + 4).ok_or(err(pos, "short length"))? as usize;
                let len = len.checked_sub(4).ok_or(err(pos, "length below 4"))?;
                let len = (len + 3) & !3;
                (pos + 8, len, pos + 8 + len)
            }
            n => {
                let len = n as usize * 4;
                (pos + 4, len, pos + 4 + len)
            }
        };
        if next > end {
            return Err(err(pos, "event runs past the data"));
        }
        ts = ts.wrapping_add(delta);
        match decoder.decode(ts, &page[rec_start..rec_start + rec_len]) {
            Some(ev) if out.len() < limit => {
                out.push(ev);
                info.events += 1;
            }
            Some(_) => *over_limit += 1,
            None => info.skipped += 1,
        }
        pos = next;
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::trace::Op;
    use crate::observe::trace::event::{kernel_dev_t, Decoder, Event, Kind};

    fn decoder() -> Decoder {
        let formats: Vec<(Kind, &str)> = vec![
            (Kind::BioQueue, include_str!("testdata/block_bio_queue.format")),
            (Kind::BioBackmerge, include_str!("testdata/block_bio_backmerge.format")),
            (Kind::BioFrontmerge, include_str!("testdata/block_bio_frontmerge.format")),
            (Kind::Split, include_str!("testdata/block_split.format")),
            (Kind::RqInsert, include_str!("testdata/block_rq_insert.format")),
            (Kind::RqIssue, include_str!("testdata/block_rq_issue.format")),
            (Kind::RqMerge, include_str!("testdata/block_rq_merge.format")),
            (Kind::RqComplete, include_str!("testdata/block_rq_complete.format")),
        ];
        Decoder::new(&formats, vec![kernel_dev_t(7, 0)]).unwrap()
    }

    /// One line of `trace` text output as the kernel printed it, reduced to what we decode:
    /// `dd-11690 [000] ..... 2004.498292: block_rq_issue: 7,0 WS 4096 () 0 + 8 be,0,4 [dd]`.
    fn parse_text_line(line: &str) -> (u64, Kind, Op, u64, u32) {
        let (head, rest) = line.split_once(": block_").unwrap();
        let ts_text = head.rsplit(' ').next().unwrap();
        let (s, us) = ts_text.split_once('.').unwrap();
        let ts_us = s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap();
        let (name, args) = rest.split_once(": ").unwrap();
        let kind = Kind::ALL.iter().find(|(_, n)| *n == format!("block_{name}")).unwrap().0;
        let words: Vec<&str> = args.split_whitespace().collect();
        let op = Op::from_rwbs(words[1].as_bytes());
        // "SECTOR + NR" follows the rwbs (and, for rq events, bytes and the "(cmd)" text).
        let plus = words.iter().position(|w| *w == "+").unwrap();
        let sector: u64 = words[plus - 1].parse().unwrap();
        let nr: u32 = words[plus + 1].parse().unwrap();
        (ts_us, kind, op, sector, nr)
    }

    /// Real pages read from per_cpu/cpu{0,1}/trace_pipe_raw of an instance (kernel 6.18,
    /// x86_64) after dd wrote 8 x 4 KiB O_DIRECT, 16 x 4 KiB buffered + fsync, and read
    /// 2 x 64 KiB O_DIRECT on loop0; testdata/trace.txt is the instance's `trace` text of the
    /// same events, captured before the raw read. Every decoded event must match its line.
    #[test]
    fn recorded_pages_match_the_kernels_text() {
        let d = decoder();
        let mut events = Vec::new();
        let mut over = 0;
        for page in
            [&include_bytes!("testdata/cpu0.page")[..], &include_bytes!("testdata/cpu1.page")[..]]
        {
            let info =
                parse_page(page, PageLayout::default(), &d, &mut events, usize::MAX, &mut over)
                    .unwrap();
            assert!(!info.missed_flag);
            assert_eq!(info.skipped, 0);
        }
        events.sort_by_key(|e| e.ts_ns);
        let text = include_str!("testdata/trace.txt");
        let lines: Vec<_> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(events.len(), lines.len());
        assert_eq!(events.len(), 67);
        // Text timestamps are microseconds, rounded (ns2usecs adds 500 ns); equal-time events may be printed in either order,
        // so compare as sorted multisets.
        let mut want: Vec<_> = lines.iter().map(|l| parse_text_line(l)).collect();
        let mut got: Vec<_> = events
            .iter()
            .map(|e| ((e.ts_ns + 500) / 1000, e.kind, e.op, e.sector, e.nr_sector))
            .collect();
        let key = |t: &(u64, Kind, Op, u64, u32)| (t.0, t.1 as u8, t.3, t.4);
        want.sort_by_key(key);
        got.sort_by_key(key);
        assert_eq!(got, want);
        // Spot checks: the 64 KiB merged write, and the flush completion at sector -1.
        assert!(events.iter().any(|e| e.kind == Kind::RqIssue
            && e.op == Op::Write
            && e.sector == 800
            && e.nr_sector == 128));
        assert!(events
            .iter()
            .any(|e| e.kind == Kind::RqComplete && e.op == Op::Flush && e.sector == u64::MAX));
        assert_eq!(events.iter().filter(|e| e.kind == Kind::BioBackmerge).count(), 15);
    }

    #[test]
    fn other_devices_are_skipped_and_limit_counts() {
        let formats = [(Kind::RqComplete, include_str!("testdata/block_rq_complete.format"))];
        let d = Decoder::new(&formats, vec![kernel_dev_t(7, 1)]).unwrap();
        let page = include_bytes!("testdata/cpu1.page");
        let mut ev = Vec::new();
        let mut over = 0;
        let info = parse_page(page, PageLayout::default(), &d, &mut ev, 100, &mut over).unwrap();
        assert_eq!((info.events, info.skipped), (0, 13));
        let d = decoder();
        let info = parse_page(page, PageLayout::default(), &d, &mut ev, 5, &mut over).unwrap();
        assert_eq!((info.events, over, ev.len()), (5, 8, 5));
    }

    #[test]
    fn time_extend_padding_and_flags() {
        let d = decoder();
        let rec = &include_bytes!("testdata/cpu1.page")[16..16 + 56]; // header + 52-byte record
        let mut page = Vec::new();
        page.extend_from_slice(&1000u64.to_le_bytes());
        let mut data = Vec::new();
        // time extend: delta = (2 << 27) | 5
        data.extend_from_slice(&((5u32 << 5) | 30).to_le_bytes());
        data.extend_from_slice(&2u32.to_le_bytes());
        // the record with its own delta of 7
        let mut r = rec.to_vec();
        r[0..4].copy_from_slice(&((7u32 << 5) | 13).to_le_bytes());
        data.extend_from_slice(&r);
        // a discarded event (padding with a delta): skipped, adds no time
        data.extend_from_slice(&((9u32 << 5) | 29).to_le_bytes());
        data.extend_from_slice(&8u32.to_le_bytes()); // length after the header, itself included
        data.extend_from_slice(&[0; 4]);
        // the record again, length given explicitly (type_len 0), delta 1
        data.extend_from_slice(&1u32.wrapping_shl(5).to_le_bytes());
        data.extend_from_slice(&(52u32 + 4).to_le_bytes());
        data.extend_from_slice(&rec[4..]);
        // end-of-page padding
        data.extend_from_slice(&29u32.to_le_bytes());
        let commit = data.len() as u64 | MISSED_EVENTS | MISSED_STORED;
        page.extend_from_slice(&commit.to_le_bytes());
        page.extend_from_slice(&data);
        page.extend_from_slice(&42u64.to_le_bytes()); // the stored missed count
        let mut ev = Vec::new();
        let mut over = 0;
        let info =
            parse_page(&page, PageLayout::default(), &d, &mut ev, usize::MAX, &mut over).unwrap();
        assert!(info.missed_flag);
        assert_eq!(info.missed, 42);
        assert_eq!(ev.len(), 2);
        let t1 = 1000 + (2u64 << 27) + 5 + 7;
        assert_eq!(ev[0].ts_ns, t1);
        assert_eq!(ev[1].ts_ns, t1 + 1);
        assert_eq!(ev[0], Event { ts_ns: t1, ..ev[1] });
    }

    #[test]
    fn malformed_pages_are_errors() {
        let d = decoder();
        let mut ev = Vec::new();
        let mut over = 0;
        let l = PageLayout::default();
        assert!(parse_page(&[0; 8], l, &d, &mut ev, 9, &mut over).is_err());
        let mut page = vec![0u8; 32];
        page[8] = 200; // commit past the end
        assert!(parse_page(&page, l, &d, &mut ev, 9, &mut over).is_err());
        let mut page = vec![0u8; 16];
        page.extend_from_slice(&20u32.to_le_bytes()); // type_len 20: an 80-byte record, 4 present
        page[8] = 8;
        page.extend_from_slice(&[0; 4]);
        assert!(parse_page(&page, l, &d, &mut ev, 9, &mut over).is_err());
    }

    #[test]
    fn header_page_layout() {
        let text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                    \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
                    \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        assert_eq!(PageLayout::from_header_page(text), Some(PageLayout::default()));
    }
}
