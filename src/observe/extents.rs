//! File extent maps through the FIEMAP ioctl (what `filefrag -v` shows).
//!
//! Asked with `FIEMAP_FLAG_SYNC` after a repetition's last phase, so delayed-allocation extents
//! have their final place; that flush is outside every timed phase.

use crate::model::extents::{Extent, ExtentSummary};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const BATCH: usize = 256;
/// Extents listed in full per file (the summary counts all of them).
pub const LISTED: usize = 64;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [RawExtent; BATCH],
}

/// The extent map of one file.
pub fn extents(path: &Path) -> io::Result<Vec<Extent>> {
    let f = File::open(path)?;
    let mut out = Vec::new();
    let mut start = 0u64;
    loop {
        // SAFETY: Fiemap is plain old data; zeroed is a valid value.
        let mut fm: Box<Fiemap> = Box::new(unsafe { std::mem::zeroed() });
        fm.start = start;
        fm.length = u64::MAX - start;
        fm.flags = FIEMAP_FLAG_SYNC;
        fm.extent_count = BATCH as u32;
        // SAFETY: FS_IOC_FIEMAP reads and writes a struct fiemap followed by extent_count extents,
        // which is exactly the layout of Fiemap.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), FS_IOC_FIEMAP, &mut *fm as *mut Fiemap) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let n = fm.mapped_extents as usize;
        if n == 0 {
            break;
        }
        let mut last = false;
        for e in &fm.extents[..n] {
            out.push(Extent {
                logical_bytes: e.logical,
                physical_bytes: e.physical,
                length_bytes: e.length,
                flags: e.flags,
            });
            last |= e.flags & FIEMAP_EXTENT_LAST != 0;
        }
        let e = fm.extents[n - 1];
        start = e.logical + e.length;
        if last || n < BATCH {
            break;
        }
    }
    Ok(out)
}

/// Summarise the extents of `paths`.
pub fn summarize(paths: &[std::path::PathBuf]) -> ExtentSummary {
    let mut s = ExtentSummary::default();
    for (i, p) in paths.iter().enumerate() {
        match extents(p) {
            Ok(ex) => {
                s.files += 1;
                s.extents += ex.len() as u64;
                for e in &ex {
                    s.largest_bytes = s.largest_bytes.max(e.length_bytes);
                    s.mapped_bytes += e.length_bytes;
                }
                if i == 0 {
                    s.first_file_map = ex.into_iter().take(LISTED).collect();
                }
            }
            Err(e) => {
                let why = match e.raw_os_error() {
                    Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => {
                        "FIEMAP not supported by this filesystem".to_string()
                    }
                    _ => format!("FIEMAP failed: {e}"),
                };
                s.note.get_or_insert(why);
            }
        }
    }
    s.mean_bytes = s.mapped_bytes.checked_div(s.extents).unwrap_or(0);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_a_written_file() {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = d.path().join("f");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![1u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        let s = summarize(std::slice::from_ref(&p));
        if let Some(n) = &s.note {
            eprintln!("skipped: {n}");
            return;
        }
        assert_eq!(s.files, 1);
        assert!(s.extents >= 1);
        assert_eq!(s.mapped_bytes, 1 << 20);
        assert!(s.largest_bytes <= 1 << 20);
        assert_eq!(s.first_file_map[0].logical_bytes, 0);
    }

    #[test]
    fn sparse_file_has_no_extents() {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = d.path().join("s");
        let f = File::create(&p).unwrap();
        f.set_len(1 << 20).unwrap();
        let s = summarize(&[p]);
        assert_eq!(s.extents, 0);
        assert_eq!(s.mapped_bytes, 0);
    }
}
