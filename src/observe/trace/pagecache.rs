//! Page-cache and process events for `fsbench profile`: which pages of which file came into
//! the page cache, which were asked for by read syscalls or page faults, which were dirtied, and
//! which processes the profiled command started.
//!
//! | tracepoint | what it says |
//! | --- | --- |
//! | `filemap:mm_filemap_add_to_page_cache` | a folio (`1 << order` pages at `index`) of inode `i_ino` on `s_dev` entered the cache: it is being read from the device (or created by a write) |
//! | `filemap:mm_filemap_get_pages` | a buffered read syscall asked for pages `index..=last_index` |
//! | `filemap:mm_filemap_fault` | a page fault on a file mapping at `index` |
//! | `filemap:mm_filemap_map_pages` | fault-around mapped cached pages `index..=last_index` |
//! | `writeback:writeback_dirty_folio` | a write dirtied page `index` of inode `ino` (the bdi name, `MAJ:MIN` for a block device, stands for the device) |
//! | `sched:sched_process_fork` | `parent_pid` started `child_pid` |
//! | `readahead:page_cache_sync_ra` | a read missed the cache at `index`, asking for `req_count` pages (`last` = `index + req_count - 1`) |
//! | `readahead:page_cache_async_ra` | readahead of the next window, triggered by a marked page |
//!
//! `mm_filemap_get_pages` fires when the read's pages are already in the cache (after any
//! readahead), so the *cause* of an insertion comes from the readahead events and the fault
//! event, which fire before the pages are inserted.
//!
//! Field offsets come from the format files, as for the block events.

use super::event::{kernel_dev_t, Decode};
use super::format::{Format, FormatError};

/// Which tracepoint a [`PageEvent`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PageKind {
    /// `mm_filemap_add_to_page_cache`.
    AddToCache,
    /// `mm_filemap_get_pages` (read syscall).
    GetPages,
    /// `mm_filemap_fault`.
    Fault,
    /// `mm_filemap_map_pages` (fault-around).
    MapPages,
    /// `writeback_dirty_folio`.
    Dirty,
    /// `sched_process_fork`.
    Fork,
    /// `readahead:page_cache_sync_ra`: a read (or a sequential mmap fault) missed the cache at
    /// `index`; `req_count` pages were asked for, more may be read ahead.
    SyncRa,
    /// `readahead:page_cache_async_ra`: a marked page was hit, the next window is read ahead.
    AsyncRa,
}

impl PageKind {
    /// Every kind with its `group/event` tracepoint, in the order they are enabled.
    pub const ALL: [(PageKind, &'static str, &'static str); 8] = [
        (PageKind::AddToCache, "filemap", "mm_filemap_add_to_page_cache"),
        (PageKind::GetPages, "filemap", "mm_filemap_get_pages"),
        (PageKind::Fault, "filemap", "mm_filemap_fault"),
        (PageKind::MapPages, "filemap", "mm_filemap_map_pages"),
        (PageKind::Dirty, "writeback", "writeback_dirty_folio"),
        (PageKind::Fork, "sched", "sched_process_fork"),
        (PageKind::SyncRa, "readahead", "page_cache_sync_ra"),
        (PageKind::AsyncRa, "readahead", "page_cache_async_ra"),
    ];
}

/// One page-cache or fork event (48 bytes, no heap data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageEvent {
    /// CLOCK_MONOTONIC time, nanoseconds.
    pub ts_ns: u64,
    /// Inode number (for a fork: the child pid).
    pub ino: u64,
    /// First page index.
    pub index: u64,
    /// Last page index, inclusive (for an insertion: `index + (1 << order) - 1`; for a fork:
    /// the parent pid).
    pub last: u64,
    /// Kernel dev_t of the filesystem (`s_dev`); 0 when unknown (a dirtied page of a
    /// filesystem whose bdi is not named `MAJ:MIN`, e.g. btrfs).
    pub dev: u32,
    /// The process that caused it (`common_pid`).
    pub pid: u32,
    /// Tracepoint.
    pub kind: PageKind,
}

#[derive(Debug, Clone, Copy)]
struct Offsets {
    id: u16,
    kind: PageKind,
    pid: usize,
    /// `s_dev` (4 bytes), or the bdi `name` (`name_len` bytes) for Dirty.
    dev: usize,
    name_len: usize,
    ino: usize,
    index: usize,
    /// `last_index` (8 bytes) or `order` (1 byte) or unused.
    last: Option<usize>,
    /// `req_count` (8 bytes) of the readahead events.
    count: Option<usize>,
    order: Option<usize>,
}

/// Decodes the [`PageKind`] tracepoints.
#[derive(Debug, Clone)]
pub struct PageDecoder {
    events: Vec<Offsets>,
}

fn need(f: &Format, name: &str, sizes: &[usize]) -> Result<usize, FormatError> {
    f.offset_of(name, sizes)
}

impl PageDecoder {
    /// Build from the format file texts of the events.
    pub fn new(formats: &[(PageKind, &str)]) -> Result<PageDecoder, FormatError> {
        let mut events = Vec::new();
        for (kind, text) in formats {
            let f = Format::parse_event(kind, text)?;
            let id = f.require_id()?;
            let pid = need(&f, "common_pid", &[4])?;
            let o = match kind {
                PageKind::Fork => Offsets {
                    id,
                    kind: *kind,
                    pid,
                    dev: 0,
                    name_len: 0,
                    ino: need(&f, "child_pid", &[4])?,
                    index: 0,
                    last: Some(need(&f, "parent_pid", &[4])?),
                    order: None,
                    count: None,
                },
                PageKind::Dirty => {
                    let name = f.require("name")?;
                    Offsets {
                        id,
                        kind: *kind,
                        pid,
                        dev: name.offset,
                        name_len: name.size,
                        ino: need(&f, "ino", &[8])?,
                        index: need(&f, "index", &[8])?,
                        last: None,
                        order: None,
                        count: None,
                    }
                }
                _ => Offsets {
                    id,
                    kind: *kind,
                    pid,
                    dev: need(&f, "s_dev", &[4])?,
                    name_len: 0,
                    ino: need(&f, "i_ino", &[8])?,
                    index: need(&f, "index", &[8])?,
                    last: f.field("last_index").map(|l| l.offset),
                    order: f.field("order").filter(|o| o.size == 1).map(|o| o.offset),
                    count: f.field("req_count").filter(|o| o.size == 8).map(|o| o.offset),
                },
            };
            events.push(o);
        }
        Ok(PageDecoder { events })
    }
}

fn u32_at(rec: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(rec.get(off..off + 4)?.try_into().ok()?))
}

fn u64_at(rec: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(rec.get(off..off + 8)?.try_into().ok()?))
}

/// `"7:3"` (a bdi name) -> the kernel dev_t of 7:3.
pub fn bdi_dev(name: &[u8]) -> Option<u32> {
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    let text = std::str::from_utf8(&name[..end]).ok()?;
    let (ma, mi) = text.split_once(':')?;
    Some(kernel_dev_t(ma.parse().ok()?, mi.parse().ok()?))
}

impl Decode for PageDecoder {
    type Out = PageEvent;

    #[inline]
    fn decode(&self, ts_ns: u64, rec: &[u8]) -> Option<PageEvent> {
        let id = u16::from_le_bytes(rec.get(0..2)?.try_into().ok()?);
        let o = self.events.iter().find(|o| o.id == id)?;
        let pid = u32_at(rec, o.pid)?;
        let ev = match o.kind {
            PageKind::Fork => PageEvent {
                ts_ns,
                ino: u64::from(u32_at(rec, o.ino)?),
                index: 0,
                last: u64::from(u32_at(rec, o.last?)?),
                dev: 0,
                pid,
                kind: o.kind,
            },
            PageKind::Dirty => {
                let index = u64_at(rec, o.index)?;
                PageEvent {
                    ts_ns,
                    ino: u64_at(rec, o.ino)?,
                    index,
                    last: index,
                    dev: bdi_dev(rec.get(o.dev..o.dev + o.name_len)?).unwrap_or(0),
                    pid,
                    kind: o.kind,
                }
            }
            _ => {
                let index = u64_at(rec, o.index)?;
                let last = match (o.last, o.order, o.count) {
                    (Some(l), _, _) => u64_at(rec, l)?,
                    (None, Some(ord), _) => {
                        let order = u32::from(*rec.get(ord)?).min(20);
                        index + (1u64 << order) - 1
                    }
                    (None, None, Some(c)) => index + u64_at(rec, c)?.max(1) - 1,
                    (None, None, None) => index,
                };
                PageEvent {
                    ts_ns,
                    ino: u64_at(rec, o.ino)?,
                    index,
                    last: last.max(index),
                    dev: u32_at(rec, o.dev)?,
                    pid,
                    kind: o.kind,
                }
            }
        };
        Some(ev)
    }

    fn time_of(ev: &PageEvent) -> u64 {
        ev.ts_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADD: &str = "name: mm_filemap_add_to_page_cache\nID: 600\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:unsigned long i_ino;\toffset:16;\tsize:8;\tsigned:0;\n\
\tfield:unsigned long index;\toffset:24;\tsize:8;\tsigned:0;\n\
\tfield:dev_t s_dev;\toffset:32;\tsize:4;\tsigned:0;\n\
\tfield:unsigned char order;\toffset:36;\tsize:1;\tsigned:0;\n";

    const FORK: &str = "name: sched_process_fork\nID: 300\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n\
\tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n\
\tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n";

    #[test]
    fn decodes_an_insertion_of_a_large_folio() {
        let d = PageDecoder::new(&[(PageKind::AddToCache, ADD)]).unwrap();
        let mut rec = vec![0u8; 40];
        rec[0..2].copy_from_slice(&600u16.to_le_bytes());
        rec[4..8].copy_from_slice(&4242u32.to_le_bytes());
        rec[16..24].copy_from_slice(&12u64.to_le_bytes());
        rec[24..32].copy_from_slice(&64u64.to_le_bytes());
        rec[32..36].copy_from_slice(&kernel_dev_t(7, 3).to_le_bytes());
        rec[36] = 2;
        let e = d.decode(99, &rec).unwrap();
        assert_eq!(
            e,
            PageEvent {
                ts_ns: 99,
                ino: 12,
                index: 64,
                last: 67,
                dev: kernel_dev_t(7, 3),
                pid: 4242,
                kind: PageKind::AddToCache
            }
        );
        rec[0] = 1; // another event id
        assert!(d.decode(99, &rec).is_none());
    }

    #[test]
    fn decodes_a_fork() {
        let d = PageDecoder::new(&[(PageKind::Fork, FORK)]).unwrap();
        let mut rec = vec![0u8; 24];
        rec[0..2].copy_from_slice(&300u16.to_le_bytes());
        rec[12..16].copy_from_slice(&10u32.to_le_bytes());
        rec[20..24].copy_from_slice(&11u32.to_le_bytes());
        let e = d.decode(5, &rec).unwrap();
        assert_eq!((e.kind, e.ino, e.last), (PageKind::Fork, 11, 10));
    }

    #[test]
    fn bdi_names() {
        assert_eq!(bdi_dev(b"7:3\0\0\0"), Some(kernel_dev_t(7, 3)));
        assert_eq!(bdi_dev(b"btrfs-1\0"), None);
    }

    #[test]
    fn event_is_small() {
        assert_eq!(std::mem::size_of::<PageEvent>(), 48);
    }
}
