//! Exact bytes through read and write syscalls, per file.
//!
//! The syscall tracepoints give the descriptor (`sys_enter_read` ... `fd`) and the bytes moved
//! (`sys_exit_read` ... `ret`), but not the file: the descriptor's file is learned inside the
//! syscall, from the page-cache event the same thread fires between enter and exit, which
//! names the inode: `mm_filemap_get_pages` for a read (it fires for every buffered read that
//! returns bytes, cached or not), `writeback_dirty_folio` for a write (a page going dirty).
//! Once learned, the descriptor keeps its file until the thread closes it (`sys_enter_close`)
//! or gets the number again (`sys_exit_openat`, `dup2`, ...), so a later write to a page
//! already dirty, which fires no page event, is still counted. A forked child or a new thread
//! starts with its parent's descriptors.
//!
//! What is counted: the return value of every `read`, `pread64`, `readv`, `preadv`,
//! `preadv2`, `write`, `pwrite64`, `writev`, `pwritev`, `pwritev2` of the command's process
//! tree on a file of a watched filesystem. Not counted: `O_DIRECT` reads (no page-cache event
//! names the file), `sendfile`/`splice`/`copy_file_range`, and mapped I/O (that is the
//! page-fault side of the profile). Descriptors are tracked per thread: a descriptor opened by
//! one thread and first used by another is learned by that other thread on its own.

use super::files::FileKey;
use super::scope::Watched;
use crate::observe::trace::event::Decode;
use crate::observe::trace::format::{Format, FormatError};
use crate::observe::trace::pagecache::{PageEvent, PageKind};
use std::collections::HashMap;

/// What a syscall event says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum SysKind {
    /// Enter of a read syscall: `value` is the descriptor.
    EnterRead,
    /// Exit of a read syscall: `value` is the return value.
    ExitRead,
    /// Enter of a write syscall: the descriptor.
    EnterWrite,
    /// Exit of a write syscall: the return value.
    ExitWrite,
    /// Enter of `close`: the descriptor.
    EnterClose,
    /// Exit of a syscall that makes a descriptor (`openat`, `dup2`, ...): the new one.
    ExitNewFd,
}

/// The syscalls traced, with the field read and what it means.
pub const SYSCALLS: &[(&str, &str, SysKind)] = &[
    ("sys_enter_read", "fd", SysKind::EnterRead),
    ("sys_enter_pread64", "fd", SysKind::EnterRead),
    ("sys_enter_readv", "fd", SysKind::EnterRead),
    ("sys_enter_preadv", "fd", SysKind::EnterRead),
    ("sys_enter_preadv2", "fd", SysKind::EnterRead),
    ("sys_exit_read", "ret", SysKind::ExitRead),
    ("sys_exit_pread64", "ret", SysKind::ExitRead),
    ("sys_exit_readv", "ret", SysKind::ExitRead),
    ("sys_exit_preadv", "ret", SysKind::ExitRead),
    ("sys_exit_preadv2", "ret", SysKind::ExitRead),
    ("sys_enter_write", "fd", SysKind::EnterWrite),
    ("sys_enter_pwrite64", "fd", SysKind::EnterWrite),
    ("sys_enter_writev", "fd", SysKind::EnterWrite),
    ("sys_enter_pwritev", "fd", SysKind::EnterWrite),
    ("sys_enter_pwritev2", "fd", SysKind::EnterWrite),
    ("sys_exit_write", "ret", SysKind::ExitWrite),
    ("sys_exit_pwrite64", "ret", SysKind::ExitWrite),
    ("sys_exit_writev", "ret", SysKind::ExitWrite),
    ("sys_exit_pwritev", "ret", SysKind::ExitWrite),
    ("sys_exit_pwritev2", "ret", SysKind::ExitWrite),
    ("sys_enter_close", "fd", SysKind::EnterClose),
    ("sys_exit_open", "ret", SysKind::ExitNewFd),
    ("sys_exit_openat", "ret", SysKind::ExitNewFd),
    ("sys_exit_openat2", "ret", SysKind::ExitNewFd),
    ("sys_exit_creat", "ret", SysKind::ExitNewFd),
    ("sys_exit_dup", "ret", SysKind::ExitNewFd),
    ("sys_exit_dup2", "ret", SysKind::ExitNewFd),
    ("sys_exit_dup3", "ret", SysKind::ExitNewFd),
];

/// The tracepoints without which the bytes cannot be counted.
pub const REQUIRED: &[&str] = &[
    "sys_enter_read",
    "sys_exit_read",
    "sys_enter_pread64",
    "sys_exit_pread64",
    "sys_enter_write",
    "sys_exit_write",
    "sys_enter_close",
];

/// One syscall event (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysEvent {
    /// CLOCK_MONOTONIC time, nanoseconds.
    pub ts_ns: u64,
    /// Descriptor (enter) or return value (exit).
    pub value: i64,
    /// The thread (`common_pid`).
    pub tid: u32,
    /// What it is.
    pub kind: SysKind,
}

/// Decodes the [`SYSCALLS`] tracepoints.
#[derive(Debug, Clone)]
pub struct SysDecoder {
    /// (event id, kind, offset of common_pid, offset and size of the field).
    events: Vec<(u16, SysKind, usize, usize, usize)>,
}

impl SysDecoder {
    /// Build from the format texts of the events (kind, text).
    pub fn new(formats: &[(SysKind, &str, &str)]) -> Result<SysDecoder, FormatError> {
        let mut events = Vec::new();
        for (kind, field, text) in formats {
            let f = Format::parse_event(kind, text)?;
            let id = f.require_id()?;
            let pid = f.require("common_pid")?;
            let offset = f.offset_of(field, &[4, 8])?;
            let size = f.require(field)?.size;
            events.push((id, *kind, pid.offset, offset, size));
        }
        Ok(SysDecoder { events })
    }
}

impl Decode for SysDecoder {
    type Out = SysEvent;

    #[inline]
    fn decode(&self, ts_ns: u64, rec: &[u8]) -> Option<SysEvent> {
        let id = u16::from_le_bytes(rec.get(0..2)?.try_into().ok()?);
        let &(_, kind, pid, off, size) = self.events.iter().find(|e| e.0 == id)?;
        let tid = u32::from_le_bytes(rec.get(pid..pid + 4)?.try_into().ok()?);
        let value = if size == 8 {
            i64::from_le_bytes(rec.get(off..off + 8)?.try_into().ok()?)
        } else {
            i64::from(i32::from_le_bytes(rec.get(off..off + 4)?.try_into().ok()?))
        };
        // Descriptors are stored in 8-byte fields as `unsigned int`: keep the low 32 bits.
        let value = match kind {
            SysKind::EnterRead | SysKind::EnterWrite | SysKind::EnterClose => value & 0xffff_ffff,
            _ => value,
        };
        Some(SysEvent { ts_ns, value, tid, kind })
    }

    fn time_of(ev: &SysEvent) -> u64 {
        ev.ts_ns
    }
}

/// Bytes through syscalls: per file row, and what no watched file took.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyscallBytes {
    /// (row, bytes read, bytes written) for every row with any.
    pub per_file: HashMap<usize, (u64, u64)>,
    /// Bytes read from descriptors not on a watched file (pipes, other filesystems, O_DIRECT).
    pub other_read_bytes: u64,
    /// Bytes written to such descriptors.
    pub other_write_bytes: u64,
}

/// Attribute the syscalls' bytes to files: `sys` and `pages` in time order; `index` maps a
/// (filesystem, inode) to its row.
pub fn attribute(
    sys: &[SysEvent],
    pages: &[PageEvent],
    watched: &[Watched],
    index: &HashMap<FileKey, usize>,
) -> SyscallBytes {
    let mut out = SyscallBytes::default();
    // The syscall a thread is in: (is a read, descriptor, row learned inside it).
    let mut current: HashMap<u32, (bool, i64, Option<usize>)> = HashMap::new();
    let mut fds: HashMap<(u32, i64), usize> = HashMap::new();
    let row_of = |e: &PageEvent| {
        let fs = watched.iter().position(|w| w.fs_dev == e.dev)?;
        index.get(&(fs, e.ino)).copied()
    };
    let (mut i, mut j) = (0, 0);
    while i < sys.len() || j < pages.len() {
        // Page events first at equal times: they happen inside the syscall.
        let take_page = j < pages.len() && (i == sys.len() || pages[j].ts_ns <= sys[i].ts_ns);
        if take_page {
            let e = &pages[j];
            j += 1;
            if e.kind == PageKind::Fork {
                // `ino` is the child, `last` the parent: the child starts with its descriptors.
                let (child, parent) = (e.ino as u32, e.last as u32);
                let inherited: Vec<(i64, usize)> = fds
                    .iter()
                    .filter(|((t, _), _)| *t == parent)
                    .map(|((_, fd), row)| (*fd, *row))
                    .collect();
                for (fd, row) in inherited {
                    fds.insert((child, fd), row);
                }
                continue;
            }
            let Some(cur) = current.get_mut(&e.pid) else { continue };
            let names_it = match e.kind {
                PageKind::GetPages => cur.0,
                PageKind::Dirty => !cur.0,
                _ => false,
            };
            if names_it && cur.2.is_none() {
                cur.2 = row_of(e);
            }
            continue;
        }
        let e = &sys[i];
        i += 1;
        match e.kind {
            SysKind::EnterRead | SysKind::EnterWrite => {
                current.insert(e.tid, (e.kind == SysKind::EnterRead, e.value, None));
            }
            SysKind::ExitRead | SysKind::ExitWrite => {
                let read = e.kind == SysKind::ExitRead;
                let Some((was_read, fd, learned)) = current.remove(&e.tid) else { continue };
                if was_read != read {
                    continue;
                }
                if let Some(row) = learned {
                    fds.insert((e.tid, fd), row);
                }
                if e.value <= 0 {
                    continue;
                }
                let n = e.value as u64;
                match learned.or_else(|| fds.get(&(e.tid, fd)).copied()) {
                    Some(row) => {
                        let t = out.per_file.entry(row).or_default();
                        if read {
                            t.0 += n;
                        } else {
                            t.1 += n;
                        }
                    }
                    None if read => out.other_read_bytes += n,
                    None => out.other_write_bytes += n,
                }
            }
            SysKind::EnterClose | SysKind::ExitNewFd => {
                if e.value >= 0 {
                    fds.remove(&(e.tid, e.value));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w() -> Vec<Watched> {
        vec![Watched {
            mountpoint: "/m".into(),
            fs_type: "ext4".into(),
            source: "/dev/loop0".into(),
            block_device: Some("loop0".into()),
            fs_dev: 7,
            st_dev: 7,
            partition_start_sectors: 0,
            shared: false,
        }]
    }

    fn sys(ts: u64, tid: u32, kind: SysKind, value: i64) -> SysEvent {
        SysEvent { ts_ns: ts, value, tid, kind }
    }

    fn page(ts: u64, pid: u32, kind: PageKind, ino: u64) -> PageEvent {
        PageEvent { ts_ns: ts, ino, index: 0, last: 0, dev: 7, pid, kind }
    }

    #[test]
    fn bytes_follow_the_descriptor_learned_inside_the_syscall() {
        use PageKind::*;
        use SysKind::*;
        let index: HashMap<FileKey, usize> = [((0, 11), 0), ((0, 12), 1)].into_iter().collect();
        let s = vec![
            // read(3) of inode 11: 4096 + 100 bytes; the second read fires no page event
            // (same thread, same descriptor: counted by the descriptor).
            sys(1, 10, EnterRead, 3),
            sys(3, 10, ExitRead, 4096),
            sys(4, 10, EnterRead, 3),
            sys(5, 10, ExitRead, 100),
            // read(0) of a pipe: nothing names a file.
            sys(6, 10, EnterRead, 0),
            sys(7, 10, ExitRead, 50),
            // write(4) to inode 12, then a write to a page already dirty.
            sys(8, 10, EnterWrite, 4),
            sys(10, 10, ExitWrite, 10),
            sys(11, 10, EnterWrite, 4),
            sys(12, 10, ExitWrite, 7),
            // close(3); a new file gets 3; its read names inode 12.
            sys(13, 10, EnterClose, 3),
            sys(14, 10, ExitNewFd, 3),
            sys(15, 10, EnterRead, 3),
            sys(17, 10, ExitRead, 1),
            // The child (tid 20) inherits descriptor 4 and writes without a page event.
            sys(20, 20, EnterWrite, 4),
            sys(21, 20, ExitWrite, 5),
        ];
        let mut fork = page(18, 10, Fork, 20);
        fork.last = 10;
        let p = vec![
            page(2, 10, AddToCache, 11),
            page(2, 10, GetPages, 11),
            page(9, 10, Dirty, 12),
            page(16, 10, GetPages, 12),
            fork,
        ];
        let b = attribute(&s, &p, &w(), &index);
        assert_eq!(b.per_file.get(&0), Some(&(4196, 0)));
        assert_eq!(b.per_file.get(&1), Some(&(1, 22)));
        assert_eq!((b.other_read_bytes, b.other_write_bytes), (50, 0));
    }

    #[test]
    fn decodes_an_exit_and_an_enter() {
        let exit = "name: sys_exit_read\nID: 841\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n";
        let enter = "name: sys_enter_read\nID: 842\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n";
        let d =
            SysDecoder::new(&[(SysKind::ExitRead, "ret", exit), (SysKind::EnterRead, "fd", enter)])
                .unwrap();
        let mut rec = vec![0u8; 24];
        rec[0..2].copy_from_slice(&841u16.to_le_bytes());
        rec[4..8].copy_from_slice(&77u32.to_le_bytes());
        rec[16..24].copy_from_slice(&(-14i64).to_le_bytes());
        let e = d.decode(5, &rec).unwrap();
        assert_eq!((e.tid, e.value, e.kind), (77, -14, SysKind::ExitRead));
        rec[0..2].copy_from_slice(&842u16.to_le_bytes());
        rec[16..24].copy_from_slice(&0xffff_ffff_0000_0003u64.to_le_bytes());
        let e = d.decode(6, &rec).unwrap();
        assert_eq!((e.value, e.kind), (3, SysKind::EnterRead));
    }
}
