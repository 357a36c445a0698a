//! Where a fileset's slots live: slot index -> relative path, built into a reused buffer.
//!
//! A flat set names slot `i` `f{i}` (`f`: the set's `name_prefix`). A tree of depth D and
//! fan-out F names leaf directory `l` by its D base-F digits, most significant first
//! (`d3/d0/d7`), and slot `i` is file `f{i % N}` in leaf `i / N` (N files per leaf). So slots
//! in order fill one leaf after another, depth first, as `tar x` does. Directories are numbered
//! in pre-order (every parent before its children; reversed, every child before its parent,
//! which is the order `rm -r` needs).
//!
//! Paths are relative to the set's root directory (used with `openat` and friends), or, with
//! `paths = "absolute"`, the root's absolute path and the same relative path (the directory fd
//! passed with them is then ignored by the kernel). They are written into a caller-owned buffer
//! with a trailing NUL: no allocation per operation.

use crate::model::job::{FileSet, Layout, DEFAULT_NAME_PREFIX, MAX_NAME_PREFIX};
use std::ffi::CStr;

/// Longest relative path: 8 levels of `d` + 10 digits + `/`, the name prefix + 20 digits,
/// `.tmp`, NUL.
pub const MAX_PATH: usize = 8 * 12 + MAX_NAME_PREFIX + 20 + 5 + 1;

/// A path buffer, reused for every operation of a worker (allocated once, when the worker is
/// set up).
pub struct PathBuf0 {
    buf: Box<[u8]>,
    /// Length of the prefix every path starts with: 0, or the set's absolute path and a `/`.
    base: usize,
    len: usize,
    /// Length of the parent directory's path (`base`: the set's root).
    parent_len: usize,
}

impl Default for PathBuf0 {
    fn default() -> Self {
        PathBuf0 { buf: vec![0; MAX_PATH].into_boxed_slice(), base: 0, len: 0, parent_len: 0 }
    }
}

impl PathBuf0 {
    /// A buffer whose paths start with `root` (the set's directory; made absolute, against the
    /// working directory, if it is not): `paths = "absolute"`.
    pub fn absolute(root: &std::path::Path) -> PathBuf0 {
        use std::os::unix::ffi::OsStrExt;
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        let r = root.as_os_str().as_bytes();
        let r = if r.len() > 1 { r.strip_suffix(b"/").unwrap_or(r) } else { r };
        let base = if r == b"/" { 1 } else { r.len() + 1 };
        let mut buf = vec![0; base + MAX_PATH].into_boxed_slice();
        buf[..r.len()].copy_from_slice(r);
        buf[base - 1] = b'/';
        PathBuf0 { buf, base, len: base, parent_len: base }
    }

    fn clear(&mut self) {
        if self.base > 0 {
            // `parent_c_str` of the root ends the string on the base's `/`.
            self.buf[self.base - 1] = b'/';
        }
        self.len = self.base;
        self.parent_len = self.base;
    }

    fn push(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    fn push_num(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut k = 0;
        loop {
            digits[k] = b'0' + (n % 10) as u8;
            k += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        while k > 0 {
            k -= 1;
            self.push(digits[k]);
        }
    }

    fn finish(&mut self) {
        self.buf[self.len] = 0;
    }

    /// The path as a C string (for `openat` etc.).
    pub fn c_str(&self) -> &CStr {
        // The buffer is NUL-terminated at `len` and holds no NUL before it: the base is a path,
        // the rest `d`, digits, `/`, the name prefix (letters, digits, `.`, `_`, `-`), `.tmp`.
        CStr::from_bytes_until_nul(&self.buf[..=self.len]).unwrap_or(c".")
    }

    /// The path's bytes (no NUL).
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The parent directory's path, as a C string (`.` for the root). Changes the buffer: call
    /// it only when the file's own path is no longer needed, or rebuild after.
    pub fn parent_c_str(&mut self) -> &CStr {
        if self.parent_len == 0 {
            self.buf[0] = b'.';
            self.len = 1;
        } else if self.parent_len == 1 {
            self.len = 1; // `/`
        } else {
            self.len = self.parent_len - 1; // the '/' before the name
        }
        self.buf[self.len] = 0;
        self.parent_len = self.buf[..self.len]
            .iter()
            .rposition(|b| *b == b'/')
            .map(|i| i + 1)
            .unwrap_or(0)
            .max(self.base);
        self.c_str()
    }

    /// Same parent directory as `other`.
    pub fn same_parent(&self, other: &PathBuf0) -> bool {
        self.buf[..self.parent_len] == other.buf[..other.parent_len]
    }

    /// Append `.tmp` (the durable-replace temporary next to the file).
    pub fn push_tmp(&mut self) {
        for b in *b".tmp" {
            self.push(b);
        }
        self.finish();
    }

    /// The prefixes of the path that are directories, shortest first, as byte lengths.
    pub fn dir_prefix_ends(&self) -> impl Iterator<Item = usize> + '_ {
        let base = self.base;
        self.buf[..self.parent_len]
            .iter()
            .enumerate()
            .filter(move |(i, b)| **b == b'/' && *i >= base)
            .map(|(i, _)| i)
    }

    /// Temporarily cut the path at `end` (a `/`), returning it as a C string; call
    /// [`PathBuf0::restore`] with the same `end` afterwards.
    pub fn cut(&mut self, end: usize) -> &CStr {
        self.buf[end] = 0;
        CStr::from_bytes_until_nul(&self.buf[..=end]).unwrap_or(c".")
    }

    /// Undo [`PathBuf0::cut`].
    pub fn restore(&mut self, end: usize) {
        self.buf[end] = b'/';
    }
}

/// The mapping of one fileset.
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    layout: Layout,
    /// File names: this and the slot number.
    prefix: [u8; MAX_NAME_PREFIX],
    prefix_len: usize,
}

impl Mapping {
    /// For a layout, with the default names (`f12`).
    pub fn new(layout: Layout) -> Mapping {
        Mapping::named(layout, DEFAULT_NAME_PREFIX)
    }

    /// For a fileset: its layout and its `name_prefix`.
    pub fn of(fs: &FileSet) -> Mapping {
        Mapping::named(fs.layout, &fs.name_prefix)
    }

    fn named(layout: Layout, prefix: &str) -> Mapping {
        // Validation keeps a prefix within MAX_NAME_PREFIX bytes; longer is cut, never overrun.
        let b = prefix.as_bytes();
        let n = b.len().min(MAX_NAME_PREFIX);
        let mut m = Mapping { layout, prefix: [0; MAX_NAME_PREFIX], prefix_len: n };
        m.prefix[..n].copy_from_slice(&b[..n]);
        m
    }

    fn push_leaf(&self, p: &mut PathBuf0, leaf: u64) {
        if let Layout::Tree { depth, fanout, .. } = self.layout {
            let f = fanout as u64;
            let mut div = f.pow(depth - 1);
            for _ in 0..depth {
                p.push(b'd');
                p.push_num((leaf / div) % f);
                p.push(b'/');
                div = (div / f).max(1);
            }
        }
    }

    /// Build the path of file slot `slot`.
    pub fn file(&self, p: &mut PathBuf0, slot: u64) {
        p.clear();
        let name = match self.layout {
            Layout::Flat => slot,
            Layout::Tree { files_per_dir, .. } => {
                self.push_leaf(p, slot / files_per_dir);
                slot % files_per_dir
            }
        };
        p.parent_len = p.len;
        for &b in &self.prefix[..self.prefix_len] {
            p.push(b);
        }
        p.push_num(name);
        p.finish();
    }

    /// Build the path of leaf directory `leaf` (`.` for a flat set).
    pub fn leaf(&self, p: &mut PathBuf0, leaf: u64) {
        p.clear();
        match self.layout {
            Layout::Flat => p.push(b'.'),
            Layout::Tree { .. } => {
                self.push_leaf(p, leaf);
                p.len -= 1; // no trailing '/'
                self.set_parent(p);
            }
        }
        p.finish();
    }

    fn set_parent(&self, p: &mut PathBuf0) {
        p.parent_len = p.buf[..p.len].iter().rposition(|b| *b == b'/').map(|i| i + 1).unwrap_or(0);
    }

    /// Build the path of directory `index` in pre-order (0 .. [`Layout::dirs`]).
    pub fn dir(&self, p: &mut PathBuf0, mut index: u64) {
        p.clear();
        let Layout::Tree { depth, fanout, .. } = self.layout else {
            p.push(b'.');
            p.finish();
            return;
        };
        let f = fanout as u64;
        for level in 1..=depth {
            // Directories in the subtree of one node at this level, the node included.
            let below = depth - level;
            let subtree: u64 = (0..=below).map(|l| f.pow(l)).sum();
            let child = index / subtree;
            index %= subtree;
            if level > 1 {
                p.push(b'/');
            }
            p.push(b'd');
            p.push_num(child);
            if index == 0 {
                break;
            }
            index -= 1;
        }
        self.set_parent(p);
        p.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(l: Layout, slot: u64) -> String {
        let mut p = PathBuf0::default();
        Mapping::new(l).file(&mut p, slot);
        p.c_str().to_str().unwrap().to_string()
    }

    fn dir(l: Layout, i: u64) -> String {
        let mut p = PathBuf0::default();
        Mapping::new(l).dir(&mut p, i);
        p.c_str().to_str().unwrap().to_string()
    }

    const TREE: Layout = Layout::Tree { depth: 2, fanout: 3, files_per_dir: 4 };

    #[test]
    fn flat_and_tree_file_paths() {
        assert_eq!(file(Layout::Flat, 0), "f0");
        assert_eq!(file(Layout::Flat, 1234567), "f1234567");
        assert_eq!(file(TREE, 0), "d0/d0/f0");
        assert_eq!(file(TREE, 3), "d0/d0/f3");
        assert_eq!(file(TREE, 4), "d0/d1/f0");
        assert_eq!(file(TREE, 13), "d1/d0/f1");
        assert_eq!(file(TREE, 35), "d2/d2/f3");
        let deep = Layout::Tree { depth: 3, fanout: 100, files_per_dir: 100 };
        assert_eq!(file(deep, 99_999_999), "d99/d99/d99/f99");
    }

    #[test]
    fn every_tree_slot_has_its_own_path() {
        let mut seen = std::collections::HashSet::new();
        for s in 0..36 {
            assert!(seen.insert(file(TREE, s)));
        }
    }

    #[test]
    fn directories_in_pre_order() {
        let all: Vec<String> = (0..TREE.dirs()).map(|i| dir(TREE, i)).collect();
        assert_eq!(
            all,
            [
                "d0", "d0/d0", "d0/d1", "d0/d2", "d1", "d1/d0", "d1/d1", "d1/d2", "d2", "d2/d0",
                "d2/d1", "d2/d2"
            ]
        );
        let l = Layout::Tree { depth: 1, fanout: 5, files_per_dir: 1 };
        assert_eq!(dir(l, 4), "d4");
        let one = Layout::Tree { depth: 3, fanout: 1, files_per_dir: 2 };
        assert_eq!((0..3).map(|i| dir(one, i)).collect::<Vec<_>>(), ["d0", "d0/d0", "d0/d0/d0"]);
    }

    #[test]
    fn parents_and_leaves() {
        let m = Mapping::new(TREE);
        let mut p = PathBuf0::default();
        m.file(&mut p, 13);
        let ends: Vec<usize> = p.dir_prefix_ends().collect();
        assert_eq!(ends, [2, 5]);
        assert_eq!(p.cut(2).to_str().unwrap(), "d1");
        p.restore(2);
        assert_eq!(p.c_str().to_str().unwrap(), "d1/d0/f1");
        assert_eq!(p.parent_c_str().to_str().unwrap(), "d1/d0");
        m.file(&mut p, 13);
        p.push_tmp();
        assert_eq!(p.c_str().to_str().unwrap(), "d1/d0/f1.tmp");
        m.leaf(&mut p, 5);
        assert_eq!(p.c_str().to_str().unwrap(), "d1/d2");
        assert_eq!(p.parent_c_str().to_str().unwrap(), "d1");
        let f = Mapping::new(Layout::Flat);
        f.file(&mut p, 3);
        assert_eq!(p.parent_c_str().to_str().unwrap(), ".");
        assert_eq!(p.c_str().to_str().unwrap(), ".", "the buffer now holds the parent");
        f.leaf(&mut p, 0);
        assert_eq!(p.c_str().to_str().unwrap(), ".");
    }

    #[test]
    fn absolute_paths_start_with_the_sets_directory_and_stop_there() {
        let m = Mapping::new(TREE);
        let mut p = PathBuf0::absolute(std::path::Path::new("/mnt/x/set/"));
        m.file(&mut p, 13);
        assert_eq!(p.c_str().to_str().unwrap(), "/mnt/x/set/d1/d0/f1");
        // Only the set's own directories are made on demand, not /mnt or /mnt/x.
        let ends: Vec<usize> = p.dir_prefix_ends().collect();
        assert_eq!(ends, [13, 16]);
        assert_eq!(p.cut(13).to_str().unwrap(), "/mnt/x/set/d1");
        p.restore(13);
        assert_eq!(p.parent_c_str().to_str().unwrap(), "/mnt/x/set/d1/d0");
        m.leaf(&mut p, 5);
        assert_eq!(p.c_str().to_str().unwrap(), "/mnt/x/set/d1/d2");
        assert_eq!(p.parent_c_str().to_str().unwrap(), "/mnt/x/set/d1");
        assert_eq!(p.parent_c_str().to_str().unwrap(), "/mnt/x/set", "the set's root");
        assert_eq!(p.parent_c_str().to_str().unwrap(), "/mnt/x/set", "and no further");
        let f = Mapping::new(Layout::Flat);
        f.file(&mut p, 3);
        assert_eq!(p.c_str().to_str().unwrap(), "/mnt/x/set/f3");
        assert!(p.dir_prefix_ends().next().is_none());
        assert_eq!(p.parent_c_str().to_str().unwrap(), "/mnt/x/set");
        let mut q = PathBuf0::absolute(std::path::Path::new("/"));
        f.file(&mut q, 3);
        assert_eq!(q.c_str().to_str().unwrap(), "/f3");
        assert_eq!(q.parent_c_str().to_str().unwrap(), "/");
        // A relative directory is made absolute against the working directory.
        let mut r = PathBuf0::absolute(std::path::Path::new("rel"));
        f.file(&mut r, 0);
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(r.c_str().to_str().unwrap(), format!("{}/rel/f0", cwd.display()));
    }

    #[test]
    fn files_are_named_by_the_sets_prefix() {
        let mut p = PathBuf0::default();
        let m = Mapping::named(TREE, "file.mdtest.0.");
        m.file(&mut p, 13);
        assert_eq!(p.c_str().to_str().unwrap(), "d1/d0/file.mdtest.0.1");
        let long = "n".repeat(MAX_NAME_PREFIX);
        Mapping::named(TREE, &long).file(&mut p, u64::MAX);
        p.push_tmp();
        assert!(p.c_str().to_str().unwrap().ends_with(&format!("/{long}{}.tmp", u64::MAX % 4)));
    }
}
