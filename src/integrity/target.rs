//! What is damaged: the block types of the matrix's rows.

use serde::{Deserialize, Serialize};

/// A kind of block to damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// One data block of a file; on a mirror, one of its copies (chosen by the seed).
    Data,
    /// Every copy of one data block (mirrors only: what a mirror cannot survive).
    DataAllCopies,
    /// The parity of a row holding a data block (zfs raidz1).
    Parity,
    /// A directory's block (metadata; `--metadata`).
    Directory,
    /// The block holding a file's inode (ext4, xfs), its tree leaf (btrfs) or its dnode (zfs)
    /// (metadata; `--metadata`).
    Inode,
    /// A file's first indirect block (zfs: the level-1 block of block pointers of a file of
    /// more than one record) (metadata; `--metadata`).
    Indirect,
}

impl Target {
    /// The name used in JSON and evidence lines.
    pub fn name(self) -> &'static str {
        match self {
            Target::Data => "data",
            Target::DataAllCopies => "data-all-copies",
            Target::Parity => "parity",
            Target::Directory => "directory",
            Target::Inode => "inode",
            Target::Indirect => "indirect",
        }
    }

    /// The row label of the matrix.
    pub fn describe(self) -> &'static str {
        match self {
            Target::Data => "file data (one copy)",
            Target::DataAllCopies => "file data (every copy)",
            Target::Parity => "parity (raidz1)",
            Target::Directory => "directory block",
            Target::Inode => "inode / tree leaf",
            Target::Indirect => "indirect block",
        }
    }

    /// Whether this is a metadata target (run only with `--metadata`).
    pub fn is_metadata(self) -> bool {
        matches!(self, Target::Directory | Target::Inode | Target::Indirect)
    }
}
