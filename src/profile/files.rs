//! From opens and page-cache events to one row per file: its path, kind, first open, and the
//! pages it brought into the cache, split by cause (read syscall, page fault, readahead).
//!
//! Cause of an insertion: the process's most recent `page_cache_sync_ra` (a read missed the
//! cache at page `a` asking for `a..=b`), `mm_filemap_fault` (a fault at page `i`) or
//! `page_cache_async_ra` (the next readahead window) on the same inode is its context; these
//! fire before the pages are inserted. An inserted page inside the asked range (or the faulting
//! page) is "read" or "fault"; any other page of that inode inserted in that context, and
//! every page of an async window, is "readahead". An insertion with no such context on that
//! inode is "other" (pages created by a write, or a read path without readahead, e.g.
//! O_DIRECT fallbacks or filesystems that read pages themselves). Bytes asked for by read
//! syscalls come from `mm_filemap_get_pages`, which fires cached or not.

use super::opens::Opens;
use super::scope::Watched;
use crate::observe::trace::pagecache::{PageEvent, PageKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Page size assumed for page indexes (the tracepoints count pages of the kernel's size).
pub fn page_bytes() -> u64 {
    rustix::param::page_size() as u64
}

/// One file the command opened or brought into the page cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileProfile {
    /// Path (at the end of the run; the path at open time when the file is gone).
    pub path: String,
    /// Index of its filesystem in the profile's `filesystems`.
    pub fs: usize,
    /// Inode number.
    pub ino: u64,
    /// What kind of file ([`kind_of`]).
    pub kind: String,
    /// A directory.
    pub is_dir: bool,
    /// Unlinked (or renamed away and not found) by the end of the run: shown as
    /// "(deleted) inode N".
    pub deleted: bool,
    /// Size in bytes (at the open, or at the end).
    pub size_bytes: u64,
    /// First open by the command's process tree, ms after the start; `None`: not opened by it
    /// (seen only through page-cache events, e.g. a mapping inherited or opened elsewhere).
    pub first_open_ms: Option<f64>,
    /// The process that opened it first.
    pub opened_by: Option<u32>,
    /// Opens by the process tree.
    pub opens: u32,
    /// First page brought into the cache, ms after the start.
    pub first_touch_ms: Option<f64>,
    /// Pages brought in for a read syscall.
    pub pages_read: u64,
    /// Pages brought in for a page fault on a mapping.
    pub pages_fault: u64,
    /// Pages brought in by readahead beyond what was asked.
    pub pages_readahead: u64,
    /// Pages inserted with no read or fault context (created by writes, or readahead started
    /// by another path).
    pub pages_other: u64,
    /// Bytes read syscalls returned for this file (exact: the return values of `read`,
    /// `pread64`, `readv`, `preadv`, `preadv2`, [`super::syscalls`]), cached or not.
    pub read_syscall_bytes: u64,
    /// Bytes write syscalls returned for this file (`write`, `pwrite64`, `writev`, `pwritev`,
    /// `pwritev2`).
    #[serde(default)]
    pub write_syscall_bytes: u64,
    /// Bytes dirtied by writes (whole pages, `writeback_dirty_folio`).
    pub dirtied_bytes: u64,
    /// Bytes read from the device for this file (FIEMAP attribution).
    pub device_read_bytes: u64,
    /// Bytes written to the device for this file.
    pub device_write_bytes: u64,
    /// Device requests that carried some of this file.
    pub device_requests: u64,
}

impl FileProfile {
    /// Pages brought into the cache, every cause.
    pub fn pages_in(&self) -> u64 {
        self.pages_read + self.pages_fault + self.pages_readahead + self.pages_other
    }

    /// The name to print: the path, or "(deleted) inode N (was PATH)".
    pub fn display_name(&self) -> String {
        if self.deleted {
            if self.path.is_empty() {
                format!("(deleted) inode {}", self.ino)
            } else {
                format!("(deleted) inode {} (was {})", self.ino, self.path)
            }
        } else {
            self.path.clone()
        }
    }
}

/// The extension of a file name: what follows its last dot, once version numbers after it are
/// set aside (`libc.so.6` → `so`). A version is all digits (`python3.11`: no extension) or
/// digits, letters, digits (`tool-2.0rc1`); a leading dot starts no extension (`.bashrc`); an
/// extension that starts with a digit but is not a version stays one (`.7z`, `.3gp`).
pub fn extension(name: &str) -> Option<String> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let version = |ext: &str| {
        let lead = ext.len() - ext.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let rest = &ext[lead..];
        let after_letters = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        digits(ext) || (lead > 0 && after_letters.len() < rest.len() && digits(after_letters))
    };
    let mut name = name;
    loop {
        let (stem, ext) = name.rsplit_once('.')?;
        if stem.is_empty() || ext.is_empty() {
            return None;
        }
        if !version(ext) {
            return Some(ext.to_ascii_lowercase());
        }
        name = stem;
    }
}

/// The kind of a file for the summary: `shared object`, `python module`, `font`, `config`,
/// `directory`, `.EXT` ([`extension`]), `executable` (a file without an extension in a `bin`
/// or `sbin` directory, such as `python3.11`) or `no extension`.
pub fn kind_of(path: &str, is_dir: bool) -> String {
    if is_dir {
        return "directory".into();
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = extension(name);
    if name.ends_with(".so") || name.contains(".so.") {
        return "shared object".into();
    }
    let in_bin = path.rsplit('/').nth(1).is_some_and(|d| d == "bin" || d == "sbin");
    match ext.as_deref() {
        Some("py" | "pyc" | "pyo") => "python module".into(),
        Some("ttf" | "otf" | "ttc" | "pfb" | "pcf" | "woff" | "woff2") => "font".into(),
        Some("conf" | "cfg" | "ini" | "toml" | "yaml" | "yml" | "rc") => "config".into(),
        _ if path.starts_with("/etc/") => "config".into(),
        Some(e) if e.len() <= 8 => format!(".{e}"),
        None if in_bin => "executable".into(),
        _ => "no extension".into(),
    }
}

/// The pids of the command's tree: the root and every child its fork events name.
pub fn process_tree(root: u32, pages: &[PageEvent]) -> HashSet<u32> {
    let mut tree: HashSet<u32> = [root].into_iter().collect();
    for e in pages.iter().filter(|e| e.kind == PageKind::Fork) {
        tree.insert(e.ino as u32);
    }
    tree
}

/// Key of a file: (filesystem index, inode).
pub type FileKey = (usize, u64);

/// Build the file rows. `t0_ns` is the command's start.
pub fn build(
    watched: &[Watched],
    opens: &Opens,
    pages: &[PageEvent],
    tree: &HashSet<u32>,
    t0_ns: u64,
) -> (Vec<FileProfile>, HashMap<FileKey, usize>) {
    let ms = |t: u64| t.saturating_sub(t0_ns) as f64 / 1e6;
    let mut rows: Vec<FileProfile> = Vec::new();
    let mut index: HashMap<FileKey, usize> = HashMap::new();
    let fs_of_st = |d: u64| watched.iter().position(|w| w.st_dev == d);
    let fs_of_k = |d: u32| watched.iter().position(|w| w.fs_dev == d);
    for o in opens.events.iter().filter(|o| tree.contains(&o.pid)) {
        let Some(fs) = fs_of_st(o.dev) else { continue };
        let i = *index.entry((fs, o.ino)).or_insert_with(|| {
            rows.push(FileProfile {
                path: o.path.clone(),
                fs,
                ino: o.ino,
                kind: kind_of(&o.path, o.is_dir),
                is_dir: o.is_dir,
                deleted: o.deleted,
                size_bytes: o.size,
                first_open_ms: Some(ms(o.ts_ns)),
                opened_by: Some(o.pid),
                ..Default::default()
            });
            rows.len() - 1
        });
        rows[i].opens += 1;
    }
    // Per process: the last read/fault context (fs, ino, first, last page, is_fault).
    let mut ctx: HashMap<u32, (usize, u64, u64, u64, bool)> = HashMap::new();
    let pb = page_bytes();
    for e in pages {
        if e.kind == PageKind::Fork {
            continue;
        }
        let Some(fs) = fs_of_k(e.dev) else { continue };
        let key = (fs, e.ino);
        let i = *index.entry(key).or_insert_with(|| {
            rows.push(FileProfile { fs, ino: e.ino, ..Default::default() });
            rows.len() - 1
        });
        let r = &mut rows[i];
        let n = e.last - e.index + 1;
        match e.kind {
            PageKind::GetPages => r.read_syscall_bytes += n * pb,
            PageKind::Fault => {
                ctx.insert(e.pid, (fs, e.ino, e.index, e.index, true));
            }
            PageKind::SyncRa => {
                // A sequential mmap fault goes through sync readahead too: keep the fault.
                let fault = matches!(ctx.get(&e.pid), Some(&(cfs, cino, a, _, true))
                    if cfs == fs && cino == e.ino && a >= e.index && a <= e.last);
                if !fault {
                    ctx.insert(e.pid, (fs, e.ino, e.index, e.last, false));
                }
            }
            PageKind::AsyncRa => {
                // Nothing asked for: the whole window is readahead.
                ctx.insert(e.pid, (fs, e.ino, 1, 0, false));
            }
            PageKind::MapPages => {}
            PageKind::Dirty => r.dirtied_bytes += pb,
            PageKind::AddToCache => {
                if r.first_touch_ms.is_none() {
                    r.first_touch_ms = Some(ms(e.ts_ns));
                }
                match ctx.get(&e.pid) {
                    Some(&(cfs, cino, a, b, fault)) if cfs == fs && cino == e.ino => {
                        let lo = e.index.max(a);
                        let hi = e.last.min(b);
                        let inside = if hi >= lo { hi - lo + 1 } else { 0 };
                        if fault {
                            r.pages_fault += inside;
                        } else {
                            r.pages_read += inside;
                        }
                        r.pages_readahead += n - inside;
                    }
                    _ => r.pages_other += n,
                }
            }
            PageKind::Fork => {}
        }
    }
    name_unknown(watched, &mut rows);
    (rows, index)
}

/// Give paths to rows known only by inode, and check that the named ones still are what the
/// path holds (a rename or unlink during the run): walk each filesystem once, if needed.
fn name_unknown(watched: &[Watched], rows: &mut [FileProfile]) {
    let mut wanted: BTreeMap<usize, HashSet<u64>> = BTreeMap::new();
    for r in rows.iter_mut() {
        // The block device's own page cache (the kernel numbers a block device's inode by its
        // dev_t): the filesystem's metadata read or written through the buffer cache, not a
        // file, and never "deleted".
        if r.path.is_empty() && r.ino == u64::from(watched[r.fs].fs_dev) {
            let dev = watched[r.fs].block_device.as_deref().unwrap_or("the device");
            r.path = format!("({dev} buffer cache: filesystem metadata)");
            r.kind = "metadata".into();
            continue;
        }
        let fine = !r.path.is_empty()
            && std::fs::symlink_metadata(&r.path)
                .is_ok_and(|m| m.ino() == r.ino && m.dev() == watched[r.fs].st_dev);
        if !fine {
            wanted.entry(r.fs).or_default().insert(r.ino);
        } else if r.size_bytes == 0 {
            r.size_bytes = std::fs::metadata(&r.path).map(|m| m.len()).unwrap_or(0);
        }
    }
    for (fs, inos) in wanted {
        let found = walk_for(&watched[fs].mountpoint, watched[fs].st_dev, &inos, 2_000_000);
        for r in rows.iter_mut().filter(|r| r.fs == fs && inos.contains(&r.ino)) {
            match found.get(&r.ino) {
                Some((p, is_dir, size)) => {
                    r.path = p.clone();
                    r.is_dir = *is_dir;
                    r.size_bytes = *size;
                    r.deleted = false;
                }
                None => r.deleted = true,
            }
            r.kind = kind_of(&r.path, r.is_dir);
        }
    }
}

/// Walk `root` (one filesystem, `dev`) until every inode of `inos` has a path, or `budget`
/// entries were looked at.
fn walk_for(
    root: &Path,
    dev: u64,
    inos: &HashSet<u64>,
    budget: usize,
) -> HashMap<u64, (String, bool, u64)> {
    let mut out = HashMap::new();
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    if let Ok(m) = std::fs::symlink_metadata(root) {
        if inos.contains(&m.ino()) {
            out.insert(m.ino(), (root.to_string_lossy().into_owned(), true, m.len()));
        }
    }
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            seen += 1;
            let Ok(m) = e.metadata() else { continue };
            if m.dev() != dev {
                continue;
            }
            if inos.contains(&m.ino()) {
                out.entry(m.ino()).or_insert((
                    e.path().to_string_lossy().into_owned(),
                    m.is_dir(),
                    m.len(),
                ));
            }
            if m.is_dir() {
                stack.push(e.path());
            }
        }
        if out.len() == inos.len() || seen >= budget {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(kind_of("/usr/lib/x86_64-linux-gnu/libc.so.6", false), "shared object");
        assert_eq!(kind_of("/usr/lib/foo.so", false), "shared object");
        assert_eq!(kind_of("/usr/lib/python3/os.py", false), "python module");
        assert_eq!(kind_of("/a/__pycache__/os.cpython-311.pyc", false), "python module");
        assert_eq!(kind_of("/usr/share/fonts/DejaVuSans.ttf", false), "font");
        assert_eq!(kind_of("/etc/passwd", false), "config");
        assert_eq!(kind_of("/x/app.toml", false), "config");
        assert_eq!(kind_of("/x/data.bin", false), ".bin");
        assert_eq!(kind_of("/x/README", false), "no extension");
        // A version after the last dot is no extension (python3.11 was ".11").
        assert_eq!(kind_of("/usr/bin/python3.11", false), "executable");
        assert_eq!(kind_of("/opt/tool/python3.11", false), "no extension");
        assert_eq!(kind_of("/usr/lib/x86_64-linux-gnu/libc.so.6", false), "shared object");
        assert_eq!(kind_of("/usr/sbin/tool-2.0rc1", false), "executable");
        assert_eq!(kind_of("/home/u/.bashrc", false), "no extension");
        assert_eq!(kind_of("/x/archive.7z", false), ".7z");
        assert_eq!(kind_of("/x/Data.JSON", false), ".json");
        assert_eq!(extension("libc.so.6"), Some("so".into()));
        assert_eq!(extension("python3.11"), None);
        assert_eq!(extension("foo-1.2.3"), None);
        assert_eq!(extension("libc.so"), Some("so".into()));
        assert_eq!(extension("a.tar.gz"), Some("gz".into()));
        assert_eq!(extension("clip.3gp"), Some("3gp".into()));
        assert_eq!(extension("noext"), None);
        assert_eq!(kind_of("/x", true), "directory");
    }

    fn ev(kind: PageKind, pid: u32, ino: u64, index: u64, last: u64) -> PageEvent {
        PageEvent { ts_ns: 10, ino, index, last, dev: 5, pid, kind }
    }

    #[test]
    fn insertion_causes() {
        let w = vec![Watched {
            mountpoint: "/nonexistent-fsbench".into(),
            fs_type: "ext4".into(),
            source: "/dev/loop9".into(),
            block_device: Some("loop9".into()),
            fs_dev: 5,
            st_dev: 0,
            partition_start_sectors: 0,
            shared: false,
        }];
        let pages = vec![
            // read of pages 0..=1 misses, the kernel reads 0..=3 (2 pages ahead)
            ev(PageKind::SyncRa, 1, 7, 0, 1),
            ev(PageKind::AddToCache, 1, 7, 0, 3),
            ev(PageKind::GetPages, 1, 7, 0, 1),
            // the async window 4..=7
            ev(PageKind::AsyncRa, 1, 7, 4, 4),
            ev(PageKind::AddToCache, 1, 7, 4, 7),
            // fault at page 10 of another file, fault-around reads 8..=11
            ev(PageKind::Fault, 1, 8, 10, 10),
            ev(PageKind::AddToCache, 1, 8, 8, 11),
            // a write creates page 0 of inode 9: no context
            ev(PageKind::AddToCache, 1, 9, 0, 0),
            ev(PageKind::Dirty, 1, 9, 0, 0),
            // the block device's own cache (its inode is numbered by its dev_t, 5): metadata
            ev(PageKind::AddToCache, 1, 5, 100, 100),
            ev(PageKind::Dirty, 1, 5, 100, 100),
        ];
        let tree = process_tree(1, &pages);
        let (rows, idx) = build(&w, &Opens::default(), &pages, &tree, 0);
        let r7 = &rows[idx[&(0, 7)]];
        assert_eq!((r7.pages_read, r7.pages_readahead, r7.pages_fault), (2, 6, 0));
        assert_eq!(r7.read_syscall_bytes, 2 * page_bytes());
        let r8 = &rows[idx[&(0, 8)]];
        assert_eq!((r8.pages_fault, r8.pages_readahead), (1, 3));
        let r9 = &rows[idx[&(0, 9)]];
        assert_eq!((r9.pages_other, r9.dirtied_bytes), (1, page_bytes()));
        // No path could be found for them: reported as deleted, by inode.
        assert!(r9.deleted);
        assert_eq!(r9.display_name(), "(deleted) inode 9");
        let r5 = &rows[idx[&(0, 5)]];
        assert!(!r5.deleted, "{r5:?}");
        assert_eq!(r5.display_name(), "(loop9 buffer cache: filesystem metadata)");
        assert_eq!(r5.kind, "metadata");
    }
}
