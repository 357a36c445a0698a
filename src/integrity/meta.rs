//! Locating metadata blocks with each filesystem's own tools (`--metadata`), on the offline
//! filesystem.
//!
//! | kind | directory block | inode block |
//! | --- | --- | --- |
//! | ext2/3/4 | `debugfs -R "blocks /DIR"`: the directory's first block | `debugfs -R "imap /FILE"`: the inode table block holding the file's inode |
//! | xfs | `xfs_db -r -c "convert inode INO fsbyte"` of the directory (a small directory lives in its inode: short form) | the same for the file |
//! | btrfs | (in the same fs-tree leaf as the inode) | `btrfs inspect-internal dump-tree -t 5`: the leaf holding the file's INODE_ITEM, mapped with `btrfs-map-logical` to every copy (metadata is DUP on one device, RAID1 on two) |
//! | zfs | `zdb -e -p DEVDIR -dddddd POOL` on the exported pool: the directory's ZAP block (its object's level-0 block) | the same listing: the block of the dataset's dnode array (object 0) holding the file's dnode (512 bytes each, 32 to a 16 KiB block) |
//!
//! zfs also has an **indirect block** row: the level-1 block (block pointers) of a file of
//! more than one 128 KiB record. zdb names each block by its DVAs (`vdev:offset:asize`, hex);
//! the offset counts from the end of the vdev's front labels and boot area (4 MiB), so a DVA's
//! bytes are at `4 MiB + offset` in the image of that vdev (every child's image for a
//! mirror). zfs keeps two copies (ditto blocks, two DVAs) of such metadata even on one device;
//! both are found, one is damaged. Blocks in the vdev labels (the first 4 MiB and the last
//! 512 KiB of each device) are never targets; raidz is not located (its DVAs are spread over
//! the children with parity). The target is the DVA's allocated size (`asize`: the block as
//! written, compressed metadata included, rounded up to the sector).
//!
//! The whole filesystem block is the target (4 KiB, a btrfs node is 16 KiB): IRON's unit.

use super::locate::BlockCopy;
use super::target::Target;
use crate::model::testbed::FsKind;
use crate::sys::cmd::Cmd;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Metadata targets located on `kind`.
pub fn targets(kind: FsKind) -> Vec<Target> {
    match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 | FsKind::Xfs => {
            vec![Target::Directory, Target::Inode]
        }
        FsKind::Btrfs => vec![Target::Inode],
        FsKind::Zfs => vec![Target::Directory, Target::Inode, Target::Indirect],
        FsKind::Tmpfs => Vec::new(),
    }
}

/// A zfs testbed's pool, for `zdb` (which reads the exported pool's devices itself).
#[derive(Debug, Clone)]
pub struct ZfsPool {
    /// The pool's name.
    pub name: String,
    /// The directory of links to its devices (`zdb -e -p DEVDIR`).
    pub devdir: PathBuf,
    /// Its layout (how a DVA's vdev maps to devices).
    pub layout: crate::testbed::ZfsLayout,
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

/// Why a metadata block could not be located (recorded as the case's note).
#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    /// A tool could not be run.
    #[error(transparent)]
    Cmd(#[from] crate::sys::cmd::CmdError),
    /// A tool ran and failed.
    #[error("`{cmdline}` failed ({status}): {output}")]
    Failed {
        /// The command line.
        cmdline: String,
        /// Its exit status.
        status: String,
        /// What it printed.
        output: String,
    },
    /// The tools' output does not name the block: what is missing, with what they said.
    #[error("{0}")]
    Unlocated(String),
    /// An image's size could not be read.
    #[error("{}: {source}", path.display())]
    Image {
        /// The image.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A copy could not be read back.
    #[error(transparent)]
    Read(#[from] super::fault::InjectError),
}

impl crate::sys::classify::Classify for MetaError {
    /// The tools and images of fsbench's own testbed, not the user's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

fn run(cmd: Cmd, log: &mut String) -> Result<String, MetaError> {
    let line = cmd.cmdline();
    let o = cmd.output()?;
    log.push_str(&format!("$ {line}\n{}\n", o.text()));
    if !o.success() {
        return Err(MetaError::Failed {
            cmdline: line,
            status: o.status.clone(),
            output: o.text(),
        });
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
    zfs: Option<&ZfsPool>,
) -> Result<MetaBlock, MetaError> {
    let mut log = String::new();
    let dev = devices.first().ok_or_else(|| MetaError::Unlocated("no device".into()))?;
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
            .ok_or_else(|| MetaError::Unlocated(format!("debugfs did not name a block:\n{log}")))?;
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
            let byte = parse_parenthesised(&out)
                .ok_or_else(|| MetaError::Unlocated(format!("xfs_db said:\n{log}")))?;
            Ok(MetaBlock { copies: vec![copy(0, byte / 4096 * 4096)], len: 4096, tool_output: log })
        }
        FsKind::Btrfs => {
            let sup =
                run(Cmd::new("btrfs").args(["inspect-internal", "dump-super"]).arg(dev), &mut log)?;
            let nodesize = sup
                .lines()
                .find_map(|l| l.trim().strip_prefix("nodesize")?.trim().parse::<u64>().ok())
                .ok_or_else(|| MetaError::Unlocated("dump-super shows no nodesize".into()))?;
            let tree =
                Cmd::new("btrfs").args(["inspect-internal", "dump-tree", "-t", "5"]).args(devices);
            let line = tree.cmdline();
            let out = tree.output()?;
            let leaf = leaf_of_inode(&out.stdout, subject.ino).ok_or_else(|| {
                MetaError::Unlocated(format!("no leaf holds inode {} in `{line}`", subject.ino))
            })?;
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
                return Err(MetaError::Unlocated(format!(
                    "btrfs-map-logical named no copy:\n{log}"
                )));
            }
            Ok(MetaBlock { copies, len: nodesize as usize, tool_output: log })
        }
        FsKind::Zfs => {
            let pool =
                zfs.ok_or_else(|| MetaError::Unlocated("a zfs testbed without a pool".into()))?;
            find_zfs(target, subject, images, pool, &mut log)
        }
        FsKind::Tmpfs => {
            Err(MetaError::Unlocated(format!("{} metadata blocks are not located", kind.name())))
        }
    }
}

/// Bytes before a DVA's offset on each vdev: two 256 KiB labels and the 3.5 MiB boot area.
pub const ZFS_LABEL_FRONT: u64 = 4 << 20;
/// The two labels at the end of each vdev.
pub const ZFS_LABEL_BACK: u64 = 512 << 10;
/// The dnode array's block size, and a dnode's size (zfs-fuse's pool version).
const DNODE_BLOCK: u64 = 16 << 10;
const DNODE_BYTES: u64 = 512;

/// One block of an object as zdb lists it under "Indirect blocks:".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZdbBlock {
    /// Offset of the block in the object (bytes; for an indirect block, of the first byte it
    /// covers).
    pub offset: u64,
    /// Level: 0 for data (or a ZAP or dnode block), 1 and up for indirect blocks.
    pub level: u32,
    /// The DVAs: (vdev, offset, allocated size), bytes.
    pub dvas: Vec<(u64, u64, u64)>,
}

/// The blocks of `object` of `dataset` in a `zdb -dddddd` listing.
pub fn zdb_object_blocks(dump: &str, dataset: &str, object: u64) -> Vec<ZdbBlock> {
    let mut in_dataset = false;
    let mut in_object = false;
    let mut header_next = false;
    let mut out = Vec::new();
    for l in dump.lines() {
        if let Some(rest) = l.strip_prefix("Dataset ") {
            in_dataset = rest.split_whitespace().next() == Some(dataset);
            in_object = false;
            continue;
        }
        if !in_dataset {
            continue;
        }
        let t = l.trim();
        if t.starts_with("Object ") && t.contains("lvl") {
            header_next = true;
            continue;
        }
        if header_next {
            header_next = false;
            in_object =
                t.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()) == Some(object);
            continue;
        }
        if !in_object {
            continue;
        }
        let w: Vec<&str> = t.split_whitespace().collect();
        let level = w.get(1).and_then(|x| x.strip_prefix('L')).and_then(|x| x.parse().ok());
        let (Some(off), Some(level)) =
            (w.first().and_then(|x| u64::from_str_radix(x, 16).ok()), level)
        else {
            continue;
        };
        let dvas: Vec<(u64, u64, u64)> = w[2..]
            .iter()
            .map_while(|d| {
                let mut p = d.split(':').map(|x| u64::from_str_radix(x, 16));
                match (p.next(), p.next(), p.next(), p.next()) {
                    (Some(Ok(v)), Some(Ok(o)), Some(Ok(a)), None) => Some((v, o, a)),
                    _ => None,
                }
            })
            .collect();
        if !dvas.is_empty() {
            out.push(ZdbBlock { offset: off, level, dvas });
        }
    }
    out
}

fn find_zfs(
    target: Target,
    subject: &Subject,
    images: &[PathBuf],
    pool: &ZfsPool,
    log: &mut String,
) -> Result<MetaBlock, MetaError> {
    use crate::testbed::zfs_watch as watch;
    use crate::testbed::ZfsLayout;
    let cmd = watch::zcmd("zdb").args(["-e", "-p"]).arg(&pool.devdir).args(["-dddddd", &pool.name]);
    let line = cmd.cmdline();
    let o = watch::output(cmd, None)?;
    if !o.success() {
        return Err(MetaError::Failed {
            cmdline: line,
            status: o.status.clone(),
            output: o.text(),
        });
    }
    let (object, level, offset, what) = match target {
        Target::Directory => (subject.ino, 0, 0, "the directory's ZAP block"),
        Target::Inode => {
            (0, 0, subject.ino * DNODE_BYTES / DNODE_BLOCK * DNODE_BLOCK, "the dnode block")
        }
        Target::Indirect => (subject.ino, 1, 0, "the file's first level-1 indirect block"),
        _ => {
            return Err(MetaError::Unlocated(format!(
                "{} is not a zfs metadata target",
                target.name()
            )))
        }
    };
    let blocks = zdb_object_blocks(&o.stdout, &pool.name, object);
    let b = blocks
        .iter()
        .find(|b| b.level == level && b.offset == offset)
        .ok_or_else(|| {
            MetaError::Unlocated(format!(
                "`{line}` lists no L{level} block at offset {offset:#x} of object {object} of dataset {}",
                pool.name
            ))
        })?;
    // Only the lines of the object, for the record (the whole listing is long).
    let _ = writeln!(
        log,
        "$ {line}
{what}: object {object} of dataset {}, L{level} at offset {offset:#x}: DVAs {}",
        pool.name,
        b.dvas.iter().map(|(v, o, a)| format!("{v}:{o:x}:{a:x}")).collect::<Vec<_>>().join(" ")
    );
    for l in o.stdout.lines().filter(|l| {
        let t = l.trim_start();
        b.dvas.iter().any(|(v, o, a)| t.contains(&format!(" {v}:{o:x}:{a:x}")))
    }) {
        let _ = writeln!(log, "{l}");
    }
    let mut copies = Vec::new();
    let asize = b.dvas[0].2;
    for &(vdev, off, a) in &b.dvas {
        if a != asize {
            return Err(MetaError::Unlocated(format!("the block's DVAs differ in size:\n{log}")));
        }
        let devices: Vec<usize> = match pool.layout {
            ZfsLayout::Single | ZfsLayout::Stripe(_) => vec![vdev as usize],
            ZfsLayout::Mirror(n) if vdev == 0 => (0..n).collect(),
            _ => {
                return Err(MetaError::Unlocated(format!(
                    "zfs {} metadata is not located",
                    pool.layout.name()
                )))
            }
        };
        for d in devices {
            let image = images.get(d).ok_or_else(|| {
                MetaError::Unlocated(format!("no device {d} for DVA vdev {vdev}"))
            })?;
            let at = ZFS_LABEL_FRONT + off;
            let size = std::fs::metadata(image)
                .map_err(|source| MetaError::Image { path: image.clone(), source })?
                .len();
            if at + a > size.saturating_sub(ZFS_LABEL_BACK) {
                return Err(MetaError::Unlocated(format!(
                    "DVA {vdev}:{off:x} lies in the vdev's end labels"
                )));
            }
            copies.push(BlockCopy { device: d, image: image.clone(), offset_bytes: at });
        }
    }
    // Every copy zdb names must hold the same bytes, not all zero: the check that the DVA
    // arithmetic (label offset, vdev to device) found the block.
    let bytes: Vec<Vec<u8>> = copies
        .iter()
        .map(|c| super::fault::read_copy(c, asize as usize))
        .collect::<Result<_, _>>()?;
    if bytes.iter().any(|b| *b != bytes[0]) || bytes[0].iter().all(|&x| x == 0) {
        return Err(MetaError::Unlocated(format!(
            "the copies zdb names are not one block (differ or are zero):\n{log}"
        )));
    }
    let _ = writeln!(log, "(the {} copies hold the same {asize} bytes)", copies.len());
    Ok(MetaBlock { copies, len: asize as usize, tool_output: std::mem::take(log) })
}

fn ext_block_size(dumpe2fs: &str) -> Result<u64, MetaError> {
    dumpe2fs
        .lines()
        .find_map(|l| l.strip_prefix("Block size:")?.trim().parse().ok())
        .ok_or_else(|| MetaError::Unlocated("dumpe2fs shows no block size".into()))
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
        assert_eq!(
            ext_block_size("Block count: 1\nBlock size:               4096\n").ok(),
            Some(4096)
        );
        let dump = "fs tree key (FS_TREE ROOT_ITEM 0)\n\
                    leaf 30474240 items 40 free space 12000 generation 9 owner FS_TREE\n\
                    \titem 0 key (256 INODE_ITEM 0) itemoff 16123 itemsize 160\n\
                    leaf 30490624 items 12 free space 100 generation 9 owner FS_TREE\n\
                    \titem 3 key (263 INODE_ITEM 0) itemoff 16123 itemsize 160\n";
        assert_eq!(leaf_of_inode(dump, 263), Some(30490624));
        assert_eq!(leaf_of_inode(dump, 256), Some(30474240));
        assert_eq!(leaf_of_inode(dump, 999), None);
    }

    #[test]
    fn zdb_blocks_of_an_object() {
        let dump = "Dataset mos [META], ID 0, cr_txg 4\n\
\n    Object  lvl   iblk   dblk  dsize  lsize   %full  type\n\
         6    1    16K    512     8K    512  100.00  object array\n\
Indirect blocks:\n\
               0 L0 0:aa000:1000 0:3aa000:1000 200L/200P F=1 B=4/4\n\
Dataset fsbench_1_0 [ZPL], ID 16, cr_txg 1, 768K, 6 objects\n\
\n    Object  lvl   iblk   dblk  dsize  lsize   %full  type\n\
         0    7    16K    16K  56.0K    16K   18.75  DMU dnode (K=inherit) (Z=inherit)\n\
Indirect blocks:\n\
               0 L6       0:dd000:1000 0:303d000:1000 4000L/400P F=6 B=7/7\n\
               0       L0 0:d7000:1000 0:3037000:1000 4000L/600P F=6 B=7/7\n\
\n    Object  lvl   iblk   dblk  dsize  lsize   %full  type\n\
         6    2    16K   128K   648K   640K  100.00  ZFS plain file\n\
\tpath\t/d0/f1\n\
Indirect blocks:\n\
               0 L1  0:d6000:1000 0:3036000:1000 4000L/400P F=5 B=7/7\n\
               0  L0 0:36000:20000 20000L/20000P F=1 B=7/7\n\
           20000  L0 0:56000:20000 20000L/20000P F=1 B=7/7\n\
\n\t\tsegment [0000000000000000, 00000000000a0000) size  640K\n";
        let f = zdb_object_blocks(dump, "fsbench_1_0", 6);
        assert_eq!(f.len(), 3, "{f:?}");
        assert_eq!(
            f[0],
            ZdbBlock {
                offset: 0,
                level: 1,
                dvas: vec![(0, 0xd6000, 0x1000), (0, 0x3036000, 0x1000)]
            }
        );
        assert_eq!(f[2], ZdbBlock { offset: 0x20000, level: 0, dvas: vec![(0, 0x56000, 0x20000)] });
        // Object 6 of the MOS is another object; object 0 of the dataset is its dnode array.
        let d = zdb_object_blocks(dump, "fsbench_1_0", 0);
        assert_eq!(d.iter().map(|b| b.level).collect::<Vec<_>>(), [6, 0]);
        assert_eq!(d[1].dvas[1], (0, 0x3037000, 0x1000));
        assert!(zdb_object_blocks(dump, "fsbench_1_0", 9).is_empty());
    }
}
