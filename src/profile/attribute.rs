//! Blocks to files (what e2block2file did for ext2/3): every device request is split into the
//! parts that fall in a file's extents (FIEMAP of the files and directories the command used,
//! physical offsets moved by the partition start), the parts in known filesystem metadata, and
//! the rest.
//!
//! Metadata: for ext2/3/4 the geometry comes from `dumpe2fs` (superblocks, group descriptors,
//! block and inode bitmaps, inode tables) and `debugfs -R "blocks <8>"` (the journal inode).
//! For other filesystems (xfs, btrfs) there is no fixed map: a part no file claims is
//! "filesystem metadata" when the request carried REQ_META (`M` in rwbs, set by the filesystem
//! for its metadata I/O), else "unattributed". Both tools only read the device, and run after
//! tracing has stopped, so their reads are not in the profile.

use super::files::FileProfile;
use super::scope::Watched;
use crate::model::trace::Op;
use crate::observe::extents;
use crate::observe::trace::event::{Event, Kind, FLAG_META, FLAG_READAHEAD};
use crate::sys::cmd::{have_program, Cmd};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a part of a request belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "class")]
pub enum Owner {
    /// A file (index into the profile's files) at `offset_bytes` in it.
    File {
        /// Row in `files`.
        file: usize,
        /// Offset in the file.
        offset_bytes: u64,
    },
    /// Filesystem metadata; `what` is "inode table", "journal", "block bitmap", ...,
    /// or "filesystem metadata" when only REQ_META says so.
    Metadata {
        /// Which structure.
        what: String,
    },
    /// Nothing claims it.
    Unattributed,
}

/// A part of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// Owner.
    #[serde(flatten)]
    pub owner: Owner,
    /// Bytes of the request in it.
    pub bytes: u64,
}

/// One device request with its attribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Issue time, ms after the command started.
    pub t_ms: f64,
    /// Device (kernel name).
    pub device: String,
    /// `R`, `W`, `F` (flush), `D` (discard), `N`.
    pub op: Op,
    /// First sector (512 bytes) on the device as traced (a disk's sector for a partition).
    pub sector: u64,
    /// Bytes.
    pub bytes: u64,
    /// Issue to completion, µs; `None` if the completion was not traced.
    pub latency_us: Option<f64>,
    /// REQ_META.
    pub meta: bool,
    /// REQ_RAHEAD.
    pub readahead: bool,
    /// What the bytes belong to (empty for flushes).
    pub parts: Vec<Part>,
}

/// A physical range on a filesystem's device and its owner.
#[derive(Debug, Clone)]
struct Range {
    start: u64,
    end: u64,
    /// File row and the file offset at `start`, or a metadata name.
    owner: RangeOwner,
}

#[derive(Debug, Clone)]
enum RangeOwner {
    File(usize, u64),
    Meta(&'static str),
}

/// Sorted, non-overlapping-by-assumption ranges of one filesystem.
#[derive(Debug, Default)]
pub struct DeviceMap {
    ranges: Vec<Range>,
    /// Why some files could not be mapped (e.g. FIEMAP unsupported), once per reason.
    pub notes: Vec<String>,
    /// Whether the fixed metadata geometry is known (ext2/3/4).
    pub has_geometry: bool,
}

impl DeviceMap {
    fn sort(&mut self) {
        self.ranges.sort_by_key(|r| (r.start, r.end));
    }

    /// The parts of `[start, end)` (device bytes), in order.
    fn split(&self, start: u64, end: u64, meta_flag: bool) -> Vec<Part> {
        let mut parts: Vec<Part> = Vec::new();
        let mut push = |owner: Owner, bytes: u64| {
            if bytes == 0 {
                return;
            }
            if let Some(last) = parts.last_mut() {
                let same = match (&last.owner, &owner) {
                    (
                        Owner::File { file: a, offset_bytes: oa },
                        Owner::File { file: b, offset_bytes: ob },
                    ) => a == b && oa + last.bytes == *ob,
                    (x, y) => x == y,
                };
                if same {
                    last.bytes += bytes;
                    return;
                }
            }
            parts.push(Part { owner, bytes });
        };
        let unclaimed = || {
            if meta_flag {
                Owner::Metadata { what: "filesystem metadata".into() }
            } else {
                Owner::Unattributed
            }
        };
        // First range that may overlap: the ranges are sorted by start; back up over a few
        // that start before `start` (extents do not overlap, so one is enough, but metadata
        // ranges may nest in rare layouts).
        let mut i = self.ranges.partition_point(|r| r.start <= start).saturating_sub(1);
        while i > 0 && self.ranges[i - 1].end > start {
            i -= 1;
        }
        let mut pos = start;
        while pos < end {
            let next =
                self.ranges[i..].iter().take_while(|r| r.start < end).position(|r| r.end > pos);
            let Some(k) = next else {
                push(unclaimed(), end - pos);
                break;
            };
            let r = &self.ranges[i + k];
            i += k;
            if r.start > pos {
                push(unclaimed(), r.start - pos);
                pos = r.start;
            }
            let stop = r.end.min(end);
            let owner = match &r.owner {
                RangeOwner::File(f, off) => {
                    Owner::File { file: *f, offset_bytes: off + (pos - r.start) }
                }
                RangeOwner::Meta(m) => Owner::Metadata { what: (*m).to_string() },
            };
            push(owner, stop - pos);
            pos = stop;
            i += 1;
        }
        parts
    }
}

/// Map the files (rows of `files` on filesystem `fs`) and the metadata of `w`. `held(row)`
/// gives a path that still reaches a deleted file (an open descriptor), if there is one.
pub fn device_map(
    fs: usize,
    w: &Watched,
    files: &[FileProfile],
    held: &dyn Fn(usize) -> Option<std::path::PathBuf>,
) -> DeviceMap {
    let mut m = DeviceMap::default();
    for (row, f) in files.iter().enumerate().filter(|(_, f)| f.fs == fs) {
        let path = match (f.deleted, held(row)) {
            (false, _) => std::path::PathBuf::from(&f.path),
            (true, Some(p)) => p,
            (true, None) => continue,
        };
        match extents::extents(&path) {
            Ok(ex) => {
                for e in ex {
                    // Inline / unknown-location extents have no device place.
                    const NOT_ALIGNED: u32 = 0x100 | 0x200 | 0x2;
                    if e.flags & NOT_ALIGNED != 0 || e.length_bytes == 0 {
                        continue;
                    }
                    m.ranges.push(Range {
                        start: e.physical_bytes,
                        end: e.physical_bytes + e.length_bytes,
                        owner: RangeOwner::File(row, e.logical_bytes),
                    });
                }
            }
            Err(e) => {
                let note = format!(
                    "FIEMAP unavailable on {} ({}): {e}",
                    w.fs_type,
                    w.mountpoint.display()
                );
                if !m.notes.contains(&note) {
                    m.notes.push(note);
                }
            }
        }
    }
    // The directories on the way to each file (path lookups read them): metadata.
    let mut dirs: std::collections::BTreeSet<std::path::PathBuf> = Default::default();
    for f in files.iter().filter(|f| f.fs == fs && !f.deleted && !f.is_dir) {
        let mut p = std::path::Path::new(&f.path).parent();
        while let Some(d) = p {
            if !d.starts_with(&w.mountpoint) || !dirs.insert(d.to_path_buf()) {
                break;
            }
            p = d.parent();
        }
    }
    for d in dirs {
        for e in extents::extents(&d).unwrap_or_default() {
            if e.length_bytes > 0 && e.flags & 0x302 == 0 {
                m.ranges.push(Range {
                    start: e.physical_bytes,
                    end: e.physical_bytes + e.length_bytes,
                    owner: RangeOwner::Meta("directory"),
                });
            }
        }
    }
    if matches!(w.fs_type.as_str(), "ext2" | "ext3" | "ext4") {
        match ext_geometry(&w.source) {
            Ok(g) => {
                m.ranges.extend(g);
                m.has_geometry = true;
            }
            // On a device fsbench did not make (the root disk) the tool may not be allowed to
            // read it: a quiet note, the first line of what it said.
            Err(e) if w.shared => m.notes.push(format!(
                "no ext metadata map of {} (a shared device): {}; its metadata reads count as \
                 unattributed",
                w.source,
                e.to_string().lines().last().unwrap_or_default().trim()
            )),
            Err(e) => m.notes.push(format!("ext metadata map of {}: {e}", w.source)),
        }
    }
    m.sort();
    m
}

/// Parse `dumpe2fs` output into metadata ranges (bytes).
pub fn parse_dumpe2fs(text: &str) -> Vec<(u64, u64, &'static str)> {
    let mut bs = 4096u64;
    let mut out = Vec::new();
    let range = |s: &str| -> Option<(u64, u64)> {
        let s = s.split_whitespace().next()?.trim_end_matches(',');
        match s.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse::<u64>().ok()? + 1)),
            None => {
                let a: u64 = s.parse().ok()?;
                Some((a, a + 1))
            }
        }
    };
    for line in text.lines() {
        let l = line.trim();
        if let Some(v) = l.strip_prefix("Block size:") {
            bs = v.trim().parse().unwrap_or(4096);
            continue;
        }
        for (key, name) in [
            ("superblock at ", "superblock"),
            ("Group descriptors at ", "group descriptors"),
            ("Reserved GDT blocks at ", "reserved GDT"),
            ("Block bitmap at ", "block bitmap"),
            ("Inode bitmap at ", "inode bitmap"),
            ("Inode table at ", "inode table"),
        ] {
            let mut rest = l;
            while let Some(p) = rest.find(key) {
                rest = &rest[p + key.len()..];
                if let Some((a, b)) = range(rest) {
                    out.push((a, b, name));
                }
            }
        }
    }
    out.into_iter().map(|(a, b, n)| (a * bs, b * bs, n)).collect()
}

/// `debugfs -R "blocks <8>"` output (block numbers) -> byte ranges.
pub fn parse_blocks(text: &str, bs: u64) -> Vec<(u64, u64)> {
    let mut nums: Vec<u64> = text.split_whitespace().filter_map(|t| t.parse().ok()).collect();
    nums.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for n in nums {
        match out.last_mut() {
            Some((_, e)) if *e == n => *e = n + 1,
            _ => out.push((n, n + 1)),
        }
    }
    out.into_iter().map(|(a, b)| (a * bs, b * bs)).collect()
}

/// Why an ext filesystem's metadata map could not be read.
#[derive(Debug, thiserror::Error)]
enum GeometryError {
    /// e2fsprogs is missing.
    #[error("dumpe2fs not installed (e2fsprogs)")]
    NoDumpe2fs,
    /// dumpe2fs or debugfs failed (with what it said).
    #[error(transparent)]
    Cmd(#[from] crate::sys::cmd::CmdError),
}

impl crate::sys::classify::Classify for GeometryError {
    /// The tools on the machine, not the user's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

fn ext_geometry(dev: &str) -> Result<Vec<Range>, GeometryError> {
    if !have_program("dumpe2fs") {
        return Err(GeometryError::NoDumpe2fs);
    }
    let text = Cmd::new("dumpe2fs").arg(dev).run()?;
    let bs = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Block size:").and_then(|v| v.trim().parse().ok()))
        .unwrap_or(4096u64);
    let mut out: Vec<Range> = parse_dumpe2fs(&text)
        .into_iter()
        .map(|(start, end, n)| Range { start, end, owner: RangeOwner::Meta(n) })
        .collect();
    if text.contains("has_journal") {
        let j = Cmd::new("debugfs").arg("-R").arg("blocks <8>").arg(dev).run()?;
        out.extend(parse_blocks(&j, bs).into_iter().map(|(start, end)| Range {
            start,
            end,
            owner: RangeOwner::Meta("journal"),
        }));
    }
    Ok(out)
}

/// Pair issues with completions (same device and start sector, first in first out; flushes by
/// device) and attribute each data request. `dev_fs[d]` is the watched filesystem of traced
/// device `d`.
pub fn requests(
    block: &[Event],
    devices: &[String],
    dev_fs: &[usize],
    watched: &[Watched],
    maps: &[DeviceMap],
    t0_ns: u64,
) -> Vec<Request> {
    let mut out: Vec<Request> = Vec::new();
    let mut issued_ns: Vec<u64> = Vec::new();
    let mut pending: HashMap<(u8, u64), std::collections::VecDeque<usize>> = HashMap::new();
    for e in block {
        match e.kind {
            Kind::RqIssue => {
                let d = usize::from(e.dev);
                let fs = dev_fs.get(d).copied();
                let start_sector = match fs {
                    Some(fs) => e.sector.saturating_sub(watched[fs].partition_start_sectors),
                    None => e.sector,
                };
                let bytes = e.bytes();
                let data = matches!(e.op, Op::Read | Op::Write) && bytes > 0;
                let parts = match (data, fs) {
                    (true, Some(fs)) => {
                        let s = start_sector * 512;
                        maps[fs].split(s, s + bytes, e.flags & FLAG_META != 0)
                    }
                    _ => Vec::new(),
                };
                let key = if e.op == Op::Flush { (e.dev, u64::MAX) } else { (e.dev, e.sector) };
                // The same request issued again while in flight (requeued by the driver: on
                // this VM's virtio disk 12 of a library's 24 requests came twice, and only one
                // completion): one request, timed from its last issue.
                let again = pending
                    .get(&key)
                    .and_then(|q| q.back())
                    .copied()
                    .filter(|&i| data && out[i].bytes == bytes && out[i].op == e.op);
                if let Some(i) = again {
                    issued_ns[i] = e.ts_ns;
                    continue;
                }
                pending.entry(key).or_default().push_back(out.len());
                issued_ns.push(e.ts_ns);
                out.push(Request {
                    t_ms: e.ts_ns.saturating_sub(t0_ns) as f64 / 1e6,
                    device: devices.get(d).cloned().unwrap_or_default(),
                    op: e.op,
                    sector: e.sector,
                    bytes,
                    latency_us: None,
                    meta: e.flags & FLAG_META != 0,
                    readahead: e.flags & FLAG_READAHEAD != 0,
                    parts,
                });
            }
            Kind::RqComplete => {
                let key = if e.op == Op::Flush || e.sector == u64::MAX {
                    (e.dev, u64::MAX)
                } else {
                    (e.dev, e.sector)
                };
                if let Some(i) = pending.get_mut(&key).and_then(|q| q.pop_front()) {
                    out[i].latency_us = Some(e.ts_ns.saturating_sub(issued_ns[i]) as f64 / 1e3);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumpe2fs_groups() {
        let t = "Block size:               4096\n\
Group 0: (Blocks 0-32767) csum 0x1234 [ITABLE_ZEROED]\n\
  Primary superblock at 0, Group descriptors at 1-1\n\
  Reserved GDT blocks at 2-64\n\
  Block bitmap at 65 (+65), csum 0x0\n\
  Inode bitmap at 81 (+81), csum 0x0\n\
  Inode table at 97-608 (+97)\n";
        let r = parse_dumpe2fs(t);
        assert!(r.contains(&(0, 4096, "superblock")));
        assert!(r.contains(&(4096, 8192, "group descriptors")));
        assert!(r.contains(&(65 * 4096, 66 * 4096, "block bitmap")));
        assert!(r.contains(&(97 * 4096, 609 * 4096, "inode table")));
        assert_eq!(r.len(), 6);
    }

    #[test]
    fn a_request_issued_again_while_in_flight_is_one_request() {
        let ev = |ts_ns: u64, kind: Kind, sector: u64| Event {
            ts_ns,
            sector,
            nr_sector: 4064,
            dev: 0,
            kind,
            op: Op::Read,
            flags: 0,
        };
        let block = [
            ev(83_618_000, Kind::RqIssue, 2_165_816),
            ev(83_696_000, Kind::RqIssue, 2_165_816),
            ev(86_000_000, Kind::RqComplete, 2_165_816),
            ev(87_000_000, Kind::RqIssue, 8),
            ev(88_000_000, Kind::RqComplete, 8),
        ];
        let r = requests(&block, &["vda".into()], &[], &[], &[], 0);
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(r[0].bytes, 4064 * 512);
        assert_eq!(r[0].latency_us, Some(2304.0), "timed from the last issue");
        assert_eq!(r[1].latency_us, Some(1000.0));
    }

    #[test]
    fn journal_blocks_coalesce() {
        assert_eq!(parse_blocks("10 11 12 20\n", 1024), vec![(10240, 13312), (20480, 21504)]);
    }

    #[test]
    fn a_request_splits_over_files_metadata_and_gaps() {
        let mut m = DeviceMap::default();
        m.ranges.push(Range { start: 0, end: 100, owner: RangeOwner::Meta("inode table") });
        m.ranges.push(Range { start: 200, end: 300, owner: RangeOwner::File(0, 4096) });
        m.ranges.push(Range { start: 300, end: 400, owner: RangeOwner::File(1, 0) });
        m.sort();
        let p = m.split(50, 450, false);
        assert_eq!(
            p,
            vec![
                Part { owner: Owner::Metadata { what: "inode table".into() }, bytes: 50 },
                Part { owner: Owner::Unattributed, bytes: 100 },
                Part { owner: Owner::File { file: 0, offset_bytes: 4096 }, bytes: 100 },
                Part { owner: Owner::File { file: 1, offset_bytes: 0 }, bytes: 100 },
                Part { owner: Owner::Unattributed, bytes: 50 },
            ]
        );
        let p = m.split(250, 260, true);
        assert_eq!(p, vec![Part { owner: Owner::File { file: 0, offset_bytes: 4146 }, bytes: 10 }]);
        let p = m.split(500, 600, true);
        assert_eq!(
            p,
            vec![Part {
                owner: Owner::Metadata { what: "filesystem metadata".into() },
                bytes: 100
            }]
        );
    }
}
