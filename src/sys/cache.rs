//! Page-cache residency and eviction for test files.
//!
//! Residency is measured, not assumed: the file is mapped read-only and `mincore(2)` reports which
//! pages are in memory. Eviction uses `fsync` (dirty pages cannot be dropped), then
//! `posix_fadvise(POSIX_FADV_DONTNEED)`, then, when root, `echo 3 > /proc/sys/vm/drop_caches`.
//! Filesystems whose cache lives elsewhere (zfs-fuse keeps its ARC in the daemon) need more; the
//! testbed layer supplies that through [`crate::engine::CacheControl`].

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Fraction (0.0 ..= 1.0) of `path`'s pages resident in the page cache. An empty file is 0.
pub fn resident_fraction(path: &Path) -> io::Result<f64> {
    resident_fraction_file(&File::open(path)?)
}

/// [`resident_fraction`] of an open file.
pub fn resident_fraction_file(f: &File) -> io::Result<f64> {
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(0.0);
    }
    let page = rustix::param::page_size() as u64;
    let pages = len.div_ceil(page) as usize;
    // Map in chunks so a 10 GiB file does not need a 10 GiB mapping at once on small VMs.
    const CHUNK_PAGES: usize = 1 << 18; // 1 GiB of 4 KiB pages
    let mut resident = 0usize;
    let mut vec = vec![0u8; CHUNK_PAGES.min(pages)];
    let mut done = 0usize;
    while done < pages {
        let n = (pages - done).min(CHUNK_PAGES);
        let off = done as u64 * page;
        let maplen = ((len - off) as usize).min(n * page as usize);
        // SAFETY: a read-only shared mapping of a file we opened; unmapped below; never read.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                maplen,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                off as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: addr/maplen is the mapping above; vec has >= n bytes.
        let rc = unsafe { libc::mincore(addr, maplen, vec.as_mut_ptr()) };
        let err = io::Error::last_os_error();
        // SAFETY: unmapping exactly what we mapped.
        unsafe { libc::munmap(addr, maplen) };
        if rc != 0 {
            return Err(err);
        }
        resident += vec[..n].iter().filter(|b| **b & 1 == 1).count();
        done += n;
    }
    Ok(resident as f64 / pages as f64)
}

/// Write back and drop `path`'s cached pages (fsync + `POSIX_FADV_DONTNEED`).
pub fn evict_file(path: &Path) -> io::Result<()> {
    let f = File::open(path)?;
    // fsync on a read-only fd is allowed on Linux and flushes the inode's dirty pages.
    f.sync_all()?;
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// `sync; echo 3 > /proc/sys/vm/drop_caches`. Needs root.
pub fn drop_all_caches() -> io::Result<()> {
    rustix::fs::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n")
}

/// Read the whole file once so its pages become resident (the "cached" precondition).
pub fn warm_file(path: &Path) -> io::Result<()> {
    use std::io::Read;
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    while f.read(&mut buf)? > 0 {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn written_file_is_resident_then_evicted() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = dir.path().join("f");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 4 << 20]).unwrap();
        drop(f);
        let before = resident_fraction(&p).unwrap();
        assert!(before > 0.9, "freshly written file should be cached, got {before}");
        evict_file(&p).unwrap();
        let after = resident_fraction(&p).unwrap();
        // tmpfs cannot evict; /var/tmp here is a disk filesystem.
        if is_tmpfs(dir.path()) {
            eprintln!("skipped eviction check: /var/tmp is tmpfs");
        } else {
            assert!(after < 0.1, "after DONTNEED expected ~0, got {after}");
        }
        warm_file(&p).unwrap();
        assert!(resident_fraction(&p).unwrap() > 0.9);
    }

    fn is_tmpfs(p: &Path) -> bool {
        rustix::fs::statfs(p).map(|s| s.f_type == 0x0102_1994).unwrap_or(false)
    }

    #[test]
    fn empty_file_is_zero() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e");
        File::create(&p).unwrap();
        assert_eq!(resident_fraction(&p).unwrap(), 0.0);
    }
}
