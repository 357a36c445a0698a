//! The known data set written to each testbed and read back: directories holding files made of
//! verifiable blocks ([`crate::model::block`]), all derived from the seed.

use crate::model::block::{self, BlockId, Found, BLOCK_BYTES};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Which files [`DataSet::write_part`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Everything.
    All,
    /// The directories and the first file of each.
    First,
    /// The other files.
    Rest,
}

/// The generation every data-set block is written with; a stale block is generation 0.
pub const GENERATION: u64 = 1;
const DIRS: usize = 4;
const FILES_PER_DIR: usize = 3;
/// Files are 16 to 64 blocks: larger than any inline-data limit (btrfs inlines up to 2 KiB,
/// ext4 with inline_data up to an inode's spare bytes), so every block has a place on a device.
const MIN_BLOCKS: u64 = 16;
const MAX_BLOCKS: u64 = 64;

/// One file of the data set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataFile {
    /// File id (in every block's header).
    pub id: u64,
    /// Path relative to the filesystem root.
    pub path: PathBuf,
    /// Length in blocks of [`BLOCK_BYTES`].
    pub blocks: u64,
}

impl DataFile {
    /// The block expected at block index `index`.
    pub fn block_id(&self, seed: u64, index: u64) -> BlockId {
        BlockId { seed, file: self.id, offset: index * BLOCK_BYTES as u64, generation: GENERATION }
    }
}

/// Directories and files, from a seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataSet {
    /// The seed every block derives from.
    pub seed: u64,
    /// Directories, parents first.
    pub dirs: Vec<PathBuf>,
    /// Files.
    pub files: Vec<DataFile>,
}

/// A block that read back wrong without an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// File path relative to the root.
    pub file: PathBuf,
    /// Offset in the file.
    pub offset: u64,
    /// The block that should be there.
    pub expected: BlockId,
    /// What was there.
    pub found: Found,
}

/// An operation that returned an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadError {
    /// Path relative to the root.
    pub path: PathBuf,
    /// What was done: `open`, `read`, `readdir`.
    pub op: String,
    /// Offset of a failed read.
    pub offset: Option<u64>,
    /// errno, if any.
    pub errno: Option<i32>,
    /// The error as the OS says it.
    pub message: String,
}

/// Everything a full read of the data set saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadBack {
    /// Blocks read back intact.
    pub intact_blocks: u64,
    /// Blocks that read back wrong, without an error.
    pub mismatches: Vec<Mismatch>,
    /// Reads that failed (EIO and the like): the filesystem refused to return the data.
    pub read_errors: Vec<ReadError>,
    /// Files or directories that could not be opened or listed, or were missing from their
    /// directory: the namespace was damaged.
    pub lost: Vec<ReadError>,
}

impl ReadBack {
    /// Everything read back intact.
    pub fn all_intact(&self) -> bool {
        self.mismatches.is_empty() && self.read_errors.is_empty() && self.lost.is_empty()
    }
}

impl DataSet {
    /// The data set of `seed`: [`DIRS`] directories (one nested), [`FILES_PER_DIR`] files in
    /// each, of seeded lengths.
    pub fn new(seed: u64) -> DataSet {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x6461_7461_7365_7421);
        let mut dirs = Vec::new();
        let mut files = Vec::new();
        for d in 0..DIRS {
            // The last directory is nested in the first: a directory inside a directory.
            let dir = if d + 1 == DIRS && d > 0 {
                PathBuf::from(format!("d0/d{d}"))
            } else {
                PathBuf::from(format!("d{d}"))
            };
            for f in 0..FILES_PER_DIR {
                let id = (d * FILES_PER_DIR + f) as u64;
                files.push(DataFile {
                    id,
                    path: dir.join(format!("f{id}")),
                    blocks: rng.u64(MIN_BLOCKS..=MAX_BLOCKS),
                });
            }
            dirs.push(dir);
        }
        DataSet { seed, dirs, files }
    }

    /// Total bytes of file data.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.blocks * BLOCK_BYTES as u64).sum()
    }

    /// Create the directories and files under `root` and flush them to the filesystem
    /// (`syncfs`, not `fsync`: an fsync would put extra copies of the data in a log (zfs's ZIL)
    /// that a scan of the device would then also find).
    pub fn write(&self, root: &Path) -> io::Result<()> {
        self.write_part(root, Part::All)
    }

    /// Write part of the data set (see [`Part`]); writing [`Part::First`] then [`Part::Rest`]
    /// writes it all, and leaves older versions of metadata blocks to be captured in between.
    pub fn write_part(&self, root: &Path, part: Part) -> io::Result<()> {
        for d in &self.dirs {
            std::fs::create_dir_all(root.join(d))?;
        }
        let mut buf = vec![0u8; BLOCK_BYTES];
        for (n, f) in self.files.iter().enumerate() {
            let first = n % FILES_PER_DIR == 0;
            match part {
                Part::First if !first => continue,
                Part::Rest if first => continue,
                _ => {}
            }
            let mut file = File::create(root.join(&f.path))?;
            for i in 0..f.blocks {
                block::fill(f.block_id(self.seed, i), &mut buf);
                file.write_all(&buf)?;
            }
        }
        let dir = File::open(root)?;
        rustix::fs::syncfs(&dir)?;
        Ok(())
    }

    /// Read every directory and file under `root` and check every block.
    pub fn read_back(&self, root: &Path) -> ReadBack {
        let mut rb = ReadBack::default();
        for d in &self.dirs {
            let expected: Vec<String> = self
                .files
                .iter()
                .filter(|f| f.path.parent() == Some(d.as_path()))
                .map(|f| f.path.file_name().unwrap_or_default().to_string_lossy().into_owned())
                .collect();
            match std::fs::read_dir(root.join(d)) {
                Ok(it) => {
                    let mut names = Vec::new();
                    let mut failed = false;
                    for e in it {
                        match e {
                            Ok(e) => names.push(e.file_name().to_string_lossy().into_owned()),
                            Err(e) => {
                                failed = true;
                                rb.lost.push(error(d, "readdir", None, &e));
                            }
                        }
                    }
                    // Entries missing from a listing that ended in an error are explained by
                    // the error; from a listing that succeeded, they are lost silently.
                    for n in expected.iter().filter(|n| !failed && !names.contains(n)) {
                        rb.lost.push(ReadError {
                            path: d.join(n),
                            op: "readdir".into(),
                            offset: None,
                            errno: None,
                            message: "missing from its directory's listing".into(),
                        });
                    }
                }
                Err(e) => rb.lost.push(error(d, "readdir", None, &e)),
            }
        }
        let mut buf = vec![0u8; BLOCK_BYTES];
        for f in &self.files {
            let file = match File::open(root.join(&f.path)) {
                Ok(x) => x,
                Err(e) => {
                    rb.lost.push(error(&f.path, "open", None, &e));
                    continue;
                }
            };
            for i in 0..f.blocks {
                let offset = i * BLOCK_BYTES as u64;
                let expected = f.block_id(self.seed, i);
                match file.read_exact_at(&mut buf, offset) {
                    Ok(()) => {
                        let found = block::check(expected, &buf);
                        if found.is_intact() {
                            rb.intact_blocks += 1;
                        } else {
                            rb.mismatches.push(Mismatch {
                                file: f.path.clone(),
                                offset,
                                expected,
                                found,
                            });
                        }
                    }
                    Err(e) => rb.read_errors.push(error(&f.path, "read", Some(offset), &e)),
                }
            }
        }
        rb
    }
}

fn error(path: &Path, op: &str, offset: Option<u64>, e: &io::Error) -> ReadError {
    ReadError {
        path: path.to_path_buf(),
        op: op.into(),
        offset,
        errno: e.raw_os_error(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_repeatable() {
        assert_eq!(DataSet::new(1), DataSet::new(1));
        assert_ne!(DataSet::new(1).files, DataSet::new(2).files);
        let d = DataSet::new(1);
        assert_eq!(d.files.len(), DIRS * FILES_PER_DIR);
        assert!(d.files.iter().all(|f| (MIN_BLOCKS..=MAX_BLOCKS).contains(&f.blocks)));
        assert!(d.dirs.iter().any(|p| p.components().count() == 2), "a nested directory");
    }

    #[test]
    fn written_data_reads_back_and_damage_is_named() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let d = DataSet::new(5);
        d.write_part(tmp.path(), Part::First).unwrap();
        let rb = d.read_back(tmp.path());
        assert_eq!(rb.lost.len(), 2 * d.files.len() / FILES_PER_DIR * (FILES_PER_DIR - 1));
        d.write_part(tmp.path(), Part::Rest).unwrap();
        let rb = d.read_back(tmp.path());
        assert!(rb.all_intact(), "{rb:?}");
        assert_eq!(rb.intact_blocks, d.files.iter().map(|f| f.blocks).sum::<u64>());

        let f = &d.files[2];
        let file = std::fs::OpenOptions::new().write(true).open(tmp.path().join(&f.path)).unwrap();
        file.write_all_at(&vec![0u8; BLOCK_BYTES], 3 * BLOCK_BYTES as u64).unwrap();
        std::fs::remove_file(tmp.path().join(&d.files[5].path)).unwrap();
        let rb = d.read_back(tmp.path());
        assert_eq!(rb.mismatches.len(), 1);
        assert_eq!(rb.mismatches[0].offset, 3 * BLOCK_BYTES as u64);
        assert_eq!(rb.mismatches[0].found, Found::Zeroed);
        assert_eq!(rb.lost.len(), 2, "missing from the listing and not openable: {:?}", rb.lost);
    }
}
