//! What `fsbench integrity` damages and finds, as plain data: the block types of the matrix's
//! rows ([`Target`]), where a block's copies are ([`BlockCopy`], [`ToolLocation`],
//! [`MetaBlock`]) and what a filesystem's checker said ([`CheckRun`]). Here, low in the layers,
//! because each filesystem's plug-in (`crate::testbed::fs`) locates its own metadata and runs
//! its own checker; the integrity layer runs the cases.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

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

/// One copy of a block on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockCopy {
    /// Index of the device (image) in the testbed.
    pub device: usize,
    /// The image file.
    pub image: PathBuf,
    /// Byte offset in the image (= on the loop device).
    pub offset_bytes: u64,
}

/// Where the filesystem's own tools put a file's block on the devices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolLocation {
    /// How it was found (`FIEMAP`, `FIEMAP + btrfs-map-logical`).
    pub method: String,
    /// FIEMAP's physical address of the block (a device offset on ext4/xfs, a btrfs logical
    /// address on btrfs).
    pub fiemap_physical: Option<u64>,
    /// Device index and byte offset of each copy the tool names.
    pub copies: Vec<(usize, u64)>,
    /// The tool's output, or why there is none.
    pub output: String,
}

/// A located metadata block.
#[derive(Debug, Clone)]
pub struct MetaBlock {
    /// Its copies.
    pub copies: Vec<BlockCopy>,
    /// Its length in bytes.
    pub len: usize,
    /// What the tools said (commands and output).
    pub tool_output: String,
}

/// What to locate: a path in the filesystem and its inode number.
#[derive(Debug, Clone)]
pub struct Subject {
    /// Path relative to the filesystem root.
    pub rel: PathBuf,
    /// Inode number (from `stat` while mounted).
    pub ino: u64,
}

/// One scrub or check and what it said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// The command lines run.
    pub commands: Vec<String>,
    /// Their output (stdout and stderr), in order.
    pub output: String,
    /// Exit status of the scrub or check itself.
    pub status: String,
    /// Whether the tool reported errors (see the filesystem's plug-in).
    pub errors_reported: bool,
    /// The lines of the output that say what was found (for the evidence line).
    pub summary: String,
}
