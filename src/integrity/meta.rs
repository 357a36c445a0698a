//! Locating metadata blocks with each filesystem's own tools (`--metadata`), on the offline
//! filesystem.
//!
//! | kind | directory block | inode block |
//! | --- | --- | --- |
//! | ext2/3/4 | `debugfs -R "blocks /DIR"`: the directory's first block | `debugfs -R "imap /FILE"`: the inode table block holding the file's inode |
//! | xfs | `xfs_db -r -c "convert inode INO fsbyte"` of the directory (a small directory lives in its inode: short form) | the same for the file |
//! | btrfs | (in the same fs-tree leaf as the inode) | `btrfs inspect-internal dump-tree -t 5`: the leaf holding the file's INODE_ITEM, mapped with `btrfs-map-logical` to every copy (metadata is DUP on one device, RAID1 on two) |
//! | zfs | not located yet (zdb's dnode and DVA output is the way) | not located yet |
//!
//! The whole filesystem block is the target (4 KiB, a btrfs node is 16 KiB): IRON's unit.

use super::locate::BlockCopy;
use super::target::Target;
use crate::sys::cmd::Cmd;
use crate::testbed::FsKind;
use std::path::PathBuf;

/// Metadata targets located on `kind`.
pub fn targets(kind: FsKind) -> Vec<Target> {
    match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 | FsKind::Xfs => {
            vec![Target::Directory, Target::Inode]
        }
        FsKind::Btrfs => vec![Target::Inode],
        FsKind::Zfs | FsKind::Tmpfs => Vec::new(),
    }
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

fn run(cmd: Cmd, log: &mut String) -> Result<String, String> {
    let line = cmd.cmdline();
    let o = cmd.output().map_err(|e| e.to_string())?;
    log.push_str(&format!("$ {line}\n{}\n", o.text()));
    if !o.success() {
        return Err(format!("`{line}` failed ({}): {}", o.status, o.text()));
    }
    Ok(o.stdout)
}

/// Locate `target` for `subject` on the offline filesystem of `kind` over `devices` (loop
/// devices) backed by `images`.
pub fn find(
    kind: FsKind,
    target: Target,
    subject: &Subject,
    devices: &[PathBuf],
    images: &[PathBuf],
) -> Result<MetaBlock, String> {
    let mut log = String::new();
    let dev = devices.first().ok_or("no device")?;
    let copy = |device: usize, offset: u64| BlockCopy {
        device,
        image: images[device].clone(),
        offset_bytes: offset,
    };
    match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 => {
            let bs = ext_block_size(&run(Cmd::new("dumpe2fs").arg("-h").arg(dev), &mut log)?)?;
            let abs = format!("/{}", subject.rel.display());
            let block = if target == Target::Directory {
                let out = run(
                    Cmd::new("debugfs").arg("-R").arg(format!("blocks {abs}")).arg(dev),
                    &mut log,
                )?;
                out.split_whitespace().next().and_then(|b| b.parse::<u64>().ok())
            } else {
                let out = run(
                    Cmd::new("debugfs").arg("-R").arg(format!("imap {abs}")).arg(dev),
                    &mut log,
                )?;
                parse_imap(&out)
            }
            .ok_or_else(|| format!("debugfs did not name a block:\n{log}"))?;
            Ok(MetaBlock { copies: vec![copy(0, block * bs)], len: bs as usize, tool_output: log })
        }
        FsKind::Xfs => {
            let out = run(
                Cmd::new("xfs_db")
                    .args(["-r", "-c"])
                    .arg(format!("convert inode {} fsbyte", subject.ino))
                    .arg(dev),
                &mut log,
            )?;
            let byte = parse_parenthesised(&out).ok_or_else(|| format!("xfs_db said:\n{log}"))?;
            Ok(MetaBlock { copies: vec![copy(0, byte / 4096 * 4096)], len: 4096, tool_output: log })
        }
        FsKind::Btrfs => {
            let sup =
                run(Cmd::new("btrfs").args(["inspect-internal", "dump-super"]).arg(dev), &mut log)?;
            let nodesize = sup
                .lines()
                .find_map(|l| l.trim().strip_prefix("nodesize")?.trim().parse::<u64>().ok())
                .ok_or("dump-super shows no nodesize")?;
            let tree =
                Cmd::new("btrfs").args(["inspect-internal", "dump-tree", "-t", "5"]).args(devices);
            let line = tree.cmdline();
            let out = tree.output().map_err(|e| e.to_string())?;
            let leaf = leaf_of_inode(&out.stdout, subject.ino)
                .ok_or_else(|| format!("no leaf holds inode {} in `{line}`", subject.ino))?;
            log.push_str(&format!(
                "$ {line}\n(leaf {leaf} holds key ({} INODE_ITEM 0))\n",
                subject.ino
            ));
            let map = run(
                Cmd::new("btrfs-map-logical").arg("-l").arg(leaf.to_string()).arg(dev),
                &mut log,
            )?;
            let copies: Vec<BlockCopy> = super::locate::parse_map_logical(&map, leaf, devices)
                .into_iter()
                .map(|(i, p)| copy(i, p))
                .collect();
            if copies.is_empty() {
                return Err(format!("btrfs-map-logical named no copy:\n{log}"));
            }
            Ok(MetaBlock { copies, len: nodesize as usize, tool_output: log })
        }
        FsKind::Zfs | FsKind::Tmpfs => {
            Err(format!("{} metadata blocks are not located", kind.name()))
        }
    }
}

fn ext_block_size(dumpe2fs: &str) -> Result<u64, String> {
    dumpe2fs
        .lines()
        .find_map(|l| l.strip_prefix("Block size:")?.trim().parse().ok())
        .ok_or_else(|| "dumpe2fs shows no block size".into())
}

/// `Inode 14 is part of block group 0\n\tlocated at block 73, offset 0x0d00` -> 73.
fn parse_imap(out: &str) -> Option<u64> {
    let rest = out.split("located at block ").nth(1)?;
    rest.split(',').next()?.trim().parse().ok()
}

/// `0x10a00 (68096)` -> 68096.
fn parse_parenthesised(out: &str) -> Option<u64> {
    let inner = out.split('(').nth(1)?.split(')').next()?;
    inner.trim().parse().ok()
}

/// The leaf (bytenr) whose items include `key (INO INODE_ITEM 0)` in a dump-tree listing.
fn leaf_of_inode(dump: &str, ino: u64) -> Option<u64> {
    let key = format!("key ({ino} INODE_ITEM 0)");
    let mut leaf = None;
    for l in dump.lines() {
        let t = l.trim_start();
        if let Some(rest) = t.strip_prefix("leaf ") {
            leaf = rest.split_whitespace().next().and_then(|n| n.parse().ok());
        } else if t.starts_with("node ") {
            leaf = None;
        } else if t.contains(&key) {
            return leaf;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_outputs_parse() {
        assert_eq!(
            parse_imap("Inode 14 is part of block group 0\n\tlocated at block 73, offset 0x0d00\n"),
            Some(73)
        );
        assert_eq!(parse_parenthesised("0x10a00 (68096)\n"), Some(68096));
        assert_eq!(ext_block_size("Block count: 1\nBlock size:               4096\n"), Ok(4096));
        let dump = "fs tree key (FS_TREE ROOT_ITEM 0)\n\
                    leaf 30474240 items 40 free space 12000 generation 9 owner FS_TREE\n\
                    \titem 0 key (256 INODE_ITEM 0) itemoff 16123 itemsize 160\n\
                    leaf 30490624 items 12 free space 100 generation 9 owner FS_TREE\n\
                    \titem 3 key (263 INODE_ITEM 0) itemoff 16123 itemsize 160\n";
        assert_eq!(leaf_of_inode(dump, 263), Some(30490624));
        assert_eq!(leaf_of_inode(dump, 256), Some(30474240));
        assert_eq!(leaf_of_inode(dump, 999), None);
    }
}
