//! Locating metadata blocks with each filesystem's own tools (`--metadata`), on the offline
//! filesystem. How is each filesystem's plug-in's ([`crate::testbed::fs::FsIntegrity`]):
//!
//! | kind | directory block | inode block |
//! | --- | --- | --- |
//! | ext2/3/4 | `debugfs -R "blocks /DIR"`: the directory's first block | `debugfs -R "imap /FILE"`: the inode table block holding the file's inode |
//! | xfs | `xfs_db -r -c "convert inode INO fsbyte"` of the directory (a small directory lives in its inode: short form) | the same for the file |
//! | btrfs | (in the same fs-tree leaf as the inode) | `btrfs inspect-internal dump-tree -t 5`: the leaf holding the file's INODE_ITEM, mapped with `btrfs-map-logical` to every copy (metadata is DUP on one device, RAID1 on two) |
//! | zfs | `zdb -e -p DEVDIR -dddddd POOL` on the exported pool: the directory's ZAP block (its object's level-0 block) | the same listing: the block of the dataset's dnode array (object 0) holding the file's dnode (512 bytes each, 32 to a 16 KiB block) |
//!
//! zfs also has an **indirect block** row: the level-1 block (block pointers) of a file of
//! more than one 128 KiB record (see the zfs plug-in for how zdb's DVAs become image offsets).
//!
//! The whole filesystem block is the target (4 KiB, a btrfs node is 16 KiB): IRON's unit.

use super::target::Target;
use crate::testbed::{FsConfig, Testbed};

pub use crate::model::integrity::{MetaBlock, Subject};
pub use crate::testbed::fs::MetaError;

/// Metadata targets located on `config`'s filesystem.
pub fn targets(config: &FsConfig) -> Vec<Target> {
    config.kind.integrity().map(|fs| fs.metadata_targets().to_vec()).unwrap_or_default()
}

/// Locate `target` for `subject` on the offline testbed `tb`, with its filesystem's tools.
pub fn find(tb: &Testbed, target: Target, subject: &Subject) -> Result<MetaBlock, MetaError> {
    let fs = tb.config().kind.integrity()?;
    fs.locate_metadata(target, subject, tb)
}
