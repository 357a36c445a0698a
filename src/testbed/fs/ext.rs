//! ext2, ext3 and ext4: one plug-in type, registered three times (they share mke2fs, its
//! options, e2fsck and debugfs; only the mkfs program differs).
//!
//! | what | how |
//! | --- | --- |
//! | made | `mkfs.extN -F -q -E lazy_itable_init=0,lazy_journal_init=0 [OPTIONS] DEV` (the `-E` only when the user gives none: mke2fs keeps the last `-E`; lazy init would write inode tables in the background during the benchmark) |
//! | mounted | `mount -t extN DEV MNT` |
//! | evicted | the page cache ([`super::super::evict::KernelFsCache`]) |
//! | checked (integrity) | `e2fsck -fn DEV` on the unmounted device: errors when it exits non-zero |
//! | metadata (integrity) | `debugfs -R "blocks /DIR"`: the directory's first block; `debugfs -R "imap /FILE"`: the inode table block holding the file's inode |

use super::{Build, Filesystem, FsIntegrity, Made, MetaError, Untestable};
use crate::model::integrity::{CheckRun, MetaBlock, Subject, Target};
use crate::sys::cmd::Cmd;
use crate::testbed::config::{ConfigError, FsConfig, Given};
use crate::testbed::error::Result;
use crate::testbed::fsopts::{o, Kind::*, OptSpec};
use crate::testbed::Testbed;
use std::path::PathBuf;

/// An ext filesystem: its name and mkfs program.
pub struct Ext {
    name: &'static str,
    mkfs: &'static str,
}

/// ext2.
pub static EXT2: Ext = Ext { name: "ext2", mkfs: "mkfs.ext2" };
/// ext3.
pub static EXT3: Ext = Ext { name: "ext3", mkfs: "mkfs.ext3" };
/// ext4.
pub static EXT4: Ext = Ext { name: "ext4", mkfs: "mkfs.ext4" };

impl Filesystem for Ext {
    fn name(&self) -> &'static str {
        self.name
    }

    fn min_device_bytes(&self, _cfg: &FsConfig) -> u64 {
        16 << 20
    }

    fn configure(&self, given: &mut Given, _cfg: &mut FsConfig) -> Result<(), ConfigError> {
        super::one_device(self.name, given)
    }

    fn mkfs_table(&self) -> Option<&'static [OptSpec]> {
        Some(EXT4_MKFS)
    }

    fn mount_table(&self) -> Option<&'static [OptSpec]> {
        Some(EXT4_MOUNT)
    }

    fn tools(&self, _cfg: &FsConfig) -> Vec<(&'static str, &'static str)> {
        vec![(self.mkfs, "e2fsprogs")]
    }

    fn mkfs(&self, cfg: &FsConfig, devices: &[PathBuf]) -> Option<Cmd> {
        let mut cmd = super::mkfs_cmd(self.mkfs, "e2fsprogs").args(["-F", "-q"]);
        if !cfg.mkfs_opts.iter().any(|o| o == "-E") {
            cmd = cmd.args(["-E", "lazy_itable_init=0,lazy_journal_init=0"]);
        }
        Some(cmd.args(&cfg.mkfs_opts).args(devices))
    }

    fn make(&self, b: &mut Build<'_>) -> Result<Made> {
        super::make_on_devices(self, b)
    }

    fn tool_version(&self, _cfg: &FsConfig) -> Option<String> {
        super::tool_version("mke2fs", "-V", "e2fsprogs")
    }

    fn integrity(&self) -> Result<&dyn FsIntegrity, Untestable> {
        Ok(self)
    }
}

impl FsIntegrity for Ext {
    fn metadata_targets(&self) -> &'static [Target] {
        &[Target::Directory, Target::Inode]
    }

    fn metadata_method(&self) -> &'static str {
        "debugfs"
    }

    fn locate_metadata(
        &self,
        target: Target,
        subject: &Subject,
        tb: &Testbed,
    ) -> Result<MetaBlock, MetaError> {
        let mut log = String::new();
        let devices = tb.loop_devices();
        let dev = devices.first().ok_or(MetaError::NoDevice { tool: "debugfs" })?;
        let run = super::run_logged;
        let bs = ext_block_size(&run(Cmd::new("dumpe2fs").arg("-h").arg(dev), &mut log)?)?;
        let abs = format!("/{}", subject.rel.display());
        let block = if target == Target::Directory {
            let out =
                run(Cmd::new("debugfs").arg("-R").arg(format!("blocks {abs}")).arg(dev), &mut log)?;
            out.split_whitespace().next().and_then(|b| b.parse::<u64>().ok())
        } else {
            let out =
                run(Cmd::new("debugfs").arg("-R").arg(format!("imap {abs}")).arg(dev), &mut log)?;
            parse_imap(&out)
        }
        .ok_or_else(|| MetaError::Unlocated(format!("debugfs did not name a block:\n{log}")))?;
        Ok(MetaBlock {
            copies: vec![super::copy_on(tb, 0, block * bs)?],
            len: bs as usize,
            tool_output: log,
        })
    }

    fn check(&self, tb: &mut Testbed, run: &mut CheckRun) -> Result<()> {
        let cmd = Cmd::new("e2fsck").arg("-fn").hint("install the Debian package e2fsprogs");
        super::check_offline(tb, run, cmd)
    }
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

const EXT4_EXTENDED: &[OptSpec] = &[
    o("mmp_update_interval", Number, "MMP update interval, seconds"),
    o("stride", Number, "RAID stride, blocks"),
    o("stripe_width", Number, "RAID stripe width, blocks"),
    o("stripe-width", Number, "RAID stripe width, blocks"),
    o("offset", Size, "start of the filesystem on the device, bytes"),
    o("resize", Number, "blocks the filesystem may grow to"),
    o("packed_meta_blocks", OptBool, "metadata at the start of the device"),
    o("lazy_itable_init", OptBool, "initialise inode tables later"),
    o("lazy_journal_init", OptBool, "zero the journal later"),
    o("no_copy_xattrs", Flag, "do not copy xattrs of the root directory"),
    o("num_backup_sb", Words(&["0", "1", "2"]), "backup superblocks with sparse_super2"),
    o("root_owner", UidGid, "owner of the root directory"),
    o("test_fs", Flag, "test-filesystem flag"),
    o("discard", Flag, "discard blocks at mkfs time"),
    o("nodiscard", Flag, "do not discard blocks"),
    o("quotatype", Words(&["usrquota", "grpquota", "prjquota"]), "quota types"),
    o("encoding", Words(&["utf8", "utf8-12.1"]), "filename encoding"),
    o("encoding_flags", Words(&["strict"]), "filename encoding flags"),
    o("orphan_file_size", Size, "orphan file size"),
    o("assume_storage_prezeroed", OptBool, "skip zeroing"),
];

const EXT4_JOURNAL: &[OptSpec] = &[
    o("size", Number, "journal size, MiB"),
    o("fast_commit_size", Number, "fast-commit area size, KiB"),
    o("location", Size, "journal location"),
];

/// `mkfs.ext2/3/4` (mke2fs) options. Not here: `-d` (populate from a directory), `-J device=`
/// (external journal), `-l`/`-c` (bad-block lists), `-z` (undo file), `-M`, and any positional
/// argument (mke2fs takes the first as the device).
pub const EXT4_MKFS: &[OptSpec] = &[
    o("-b", Words(&["1024", "2048", "4096", "8192", "16384", "32768", "65536"]), "block size"),
    o("-C", Size, "cluster size (bigalloc)"),
    o("-D", Flag, "direct I/O"),
    o("-e", Words(&["continue", "remount-ro", "panic"]), "behaviour on errors"),
    o("-E", Sub(EXT4_EXTENDED), "extended options"),
    o("-F", Flag, "force"),
    o("-g", Number, "blocks per group"),
    o("-G", Number, "groups per flex group"),
    o("-i", Number, "bytes per inode"),
    o("-I", Number, "inode size"),
    o("-j", Flag, "create a journal"),
    o("-J", Sub(EXT4_JOURNAL), "journal options (size, location; no external journal)"),
    o("-L", Name, "volume label"),
    o("-m", Number, "reserved blocks, percent"),
    o("-n", Flag, "do not create (dry run)"),
    o("-N", Number, "number of inodes"),
    o("-o", Words(&["Linux", "Hurd", "GNU", "FreeBSD", "Lites"]), "creator OS"),
    o("-O", Features, "features (`^feature` turns one off)"),
    o("-q", Flag, "quiet"),
    o("-r", Words(&["0", "1"]), "revision"),
    o("-S", Flag, "write superblock and group descriptors only"),
    o("-t", Words(&["ext2", "ext3", "ext4"]), "filesystem type"),
    o("-T", Name, "usage type (mke2fs.conf)"),
    o("-U", Uuid, "UUID"),
    o("-v", Flag, "verbose"),
];

/// ext2/3/4 mount options (ext4(5)). Not here: `journal_dev=`, `journal_path=`, `usrjquota=`,
/// `grpjquota=`.
pub const EXT4_MOUNT: &[OptSpec] = &[
    o("noload", Flag, ""),
    o("norecovery", Flag, ""),
    o("data", Words(&["journal", "ordered", "writeback"]), "data journaling mode"),
    o("commit", Number, "commit interval, seconds"),
    o("orlov", Flag, ""),
    o("oldalloc", Flag, ""),
    o("user_xattr", Flag, ""),
    o("nouser_xattr", Flag, ""),
    o("acl", Flag, ""),
    o("noacl", Flag, ""),
    o("bsddf", Flag, ""),
    o("minixdf", Flag, ""),
    o("debug", Flag, ""),
    o("errors", Words(&["continue", "remount-ro", "panic"]), ""),
    o("data_err", Words(&["ignore", "abort"]), ""),
    o("grpid", Flag, ""),
    o("bsdgroups", Flag, ""),
    o("nogrpid", Flag, ""),
    o("sysvgroups", Flag, ""),
    o("resgid", Number, ""),
    o("resuid", Number, ""),
    o("sb", Number, "superblock to use"),
    o("quota", Flag, ""),
    o("noquota", Flag, ""),
    o("usrquota", Flag, ""),
    o("grpquota", Flag, ""),
    o("prjquota", Flag, ""),
    o("jqfmt", Words(&["vfsold", "vfsv0", "vfsv1"]), ""),
    o("barrier", OptBool, ""),
    o("nobarrier", Flag, ""),
    o("inode_readahead_blks", Number, ""),
    o("stripe", Number, ""),
    o("delalloc", Flag, ""),
    o("nodelalloc", Flag, ""),
    o("max_batch_time", Number, ""),
    o("min_batch_time", Number, ""),
    o("journal_ioprio", Number, ""),
    o("abort", Flag, ""),
    o("auto_da_alloc", OptBool, ""),
    o("noauto_da_alloc", Flag, ""),
    o("init_itable", OptBool, ""),
    o("noinit_itable", Flag, ""),
    o("discard", Flag, ""),
    o("nodiscard", Flag, ""),
    o("block_validity", Flag, ""),
    o("noblock_validity", Flag, ""),
    o("dioread_lock", Flag, ""),
    o("dioread_nolock", Flag, ""),
    o("i_version", Flag, ""),
    o("nombcache", Flag, ""),
    o("nouid32", Flag, ""),
    o("journal_checksum", Flag, ""),
    o("nojournal_checksum", Flag, ""),
    o("journal_async_commit", Flag, ""),
    o("dax", Words(&["always", "never", "inode"]), "(or no value)"),
    o("inlinecrypt", Flag, ""),
    o("mb_optimize_scan", OptBool, ""),
    o("prefetch_block_bitmaps", Flag, ""),
    o("no_prefetch_block_bitmaps", Flag, ""),
    o("warn_on_error", Flag, ""),
    o("nowarn_on_error", Flag, ""),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mke2fs_lines() {
        let dev = vec![PathBuf::from("/dev/loop3")];
        let c = FsConfig::parse("ext4:mkfs=-b 4096").unwrap();
        assert_eq!(
            EXT4.mkfs(&c, &dev).unwrap().cmdline(),
            "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -b 4096 /dev/loop3"
        );
        let c = FsConfig::parse("ext4:mkfs=-E stride=16").unwrap();
        assert_eq!(
            EXT4.mkfs(&c, &dev).unwrap().cmdline(),
            "mkfs.ext4 -F -q -E stride=16 /dev/loop3"
        );
        let c = FsConfig::parse("ext2").unwrap();
        assert!(EXT2.mkfs(&c, &dev).unwrap().cmdline().starts_with("mkfs.ext2 -F -q"));
    }

    #[test]
    fn tool_outputs_parse() {
        assert_eq!(
            parse_imap("Inode 14 is part of block group 0\n\tlocated at block 73, offset 0x0d00\n"),
            Some(73)
        );
        assert_eq!(
            ext_block_size("Block count: 1\nBlock size:               4096\n").ok(),
            Some(4096)
        );
    }

    #[test]
    fn checker_lines_that_tell() {
        let e = "Pass 2: Checking directory structure\nDirectory inode 8193, block #0, offset 0: directory corrupted\nSalvage? no\n";
        assert_eq!(
            crate::testbed::fs::telling_lines(&EXT4, e),
            "Directory inode 8193, block #0, offset 0: directory corrupted | Salvage? no"
        );
    }
}
