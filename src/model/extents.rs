//! Extent facts of a test's files, as `filefrag -v` would list them. [`crate::observe::extents`]
//! maps them with FIEMAP.

use serde::{Deserialize, Serialize};

/// One extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extent {
    /// Offset in the file.
    pub logical_bytes: u64,
    /// Offset on the device.
    pub physical_bytes: u64,
    /// Length.
    pub length_bytes: u64,
    /// FIEMAP_EXTENT_* flags (0x800 unwritten, 0x8 encoded, 0x4 delalloc, ...).
    pub flags: u32,
}

/// Extent facts of a test's files after a repetition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtentSummary {
    /// Files mapped.
    pub files: u32,
    /// Extents over all files.
    pub extents: u64,
    /// Largest extent.
    pub largest_bytes: u64,
    /// Mean extent length.
    pub mean_bytes: u64,
    /// Bytes mapped.
    pub mapped_bytes: u64,
    /// The first file's first extents, as `filefrag -v` lists them.
    pub first_file_map: Vec<Extent>,
    /// Why the map is missing or partial (e.g. FIEMAP not supported on zfs-fuse).
    pub note: Option<String>,
}
