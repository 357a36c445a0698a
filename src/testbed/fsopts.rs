//! Which mkfs, mount and zfs options fsbench passes on: one declarative table per filesystem.
//!
//! fsbench runs mkfs as root on devices it made. An option that names another path or device
//! (`mkfs.btrfs /dev/loop11`, `mkfs.xfs -l logdev=/dev/sdb`, `mke2fs -J device=...`, `-d DIR`,
//! a mount's `journal_path=`) would make root format, write or read something fsbench did not
//! make, around `--device`, `--destroy-data` and the root-disk guard. So every option is
//! checked against the tables below when the configuration is parsed: its name must be listed
//! for that filesystem, and its value must be of the listed kind (a size, a number, one of
//! known words...). Nothing that takes a path or a device is listed, and no value may contain
//! `/`. fsbench's own devices are made after the options are checked (their names are not
//! known yet), so an option naming one is refused too.
//!
//! Each table is `&[OptSpec]` (name, value kind, help), in the form a per-filesystem plug-in
//! can own later: `EXT4_MKFS`, `EXT4_MOUNT`, `XFS_MKFS`, ...

use super::config::ConfigError;
use crate::model::testbed::FsKind;

/// What an option's value may be.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// No value (`-q`, `noatime`).
    Flag,
    /// An optional `0`/`1` (or no value): `barrier`, `lazy_itable_init=0`.
    OptBool,
    /// A whole number, optionally with a unit suffix (`4096`, `64m`, `1G`, `50%` when `pct`).
    Size,
    /// A plain number (digits, optionally one decimal point).
    Number,
    /// A number in octal (`mode=1777`).
    Octal,
    /// One of the listed words; `*` at the end of a listed word allows any suffix of letters,
    /// digits and `-` (`gzip-9`, `zstd:3`).
    Words(&'static [&'static str]),
    /// A short name: letters, digits, `_`, `-`, `.` (labels, usage types).
    Name,
    /// A UUID, or a word such as `clear`, `random`, `time`.
    Uuid,
    /// `uid:gid` (numbers), or nothing.
    UidGid,
    /// A comma list of features, each optionally preceded by `^` (`-O ^has_journal,huge_file`).
    Features,
    /// An SELinux context (`system_u:object_r:tmp_t:s0`).
    Context,
    /// A comma list of sub-options, each checked against the table.
    Sub(&'static [OptSpec]),
}

/// One option: its name (`-b`, `--csum`, `data`, `compression`), its value and a line of help.
#[derive(Debug, Clone, Copy)]
pub struct OptSpec {
    /// The name as typed.
    pub name: &'static str,
    /// What its value may be.
    pub kind: Kind,
    /// What it does, for messages.
    pub help: &'static str,
}

const fn o(name: &'static str, kind: Kind, help: &'static str) -> OptSpec {
    OptSpec { name, kind, help }
}

use Kind::*;

const ONOFF: &[&str] = &["on", "off"];

// ---------------------------------------------------------------- ext2/3/4 (mke2fs(8), ext4(5))

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

/// Mount options shared by every filesystem (mount(8), the VFS).
pub const VFS_MOUNT: &[OptSpec] = &[
    o("async", Flag, ""),
    o("sync", Flag, ""),
    o("dirsync", Flag, ""),
    o("atime", Flag, ""),
    o("noatime", Flag, ""),
    o("diratime", Flag, ""),
    o("nodiratime", Flag, ""),
    o("relatime", Flag, ""),
    o("norelatime", Flag, ""),
    o("strictatime", Flag, ""),
    o("nostrictatime", Flag, ""),
    o("lazytime", Flag, ""),
    o("nolazytime", Flag, ""),
    o("dev", Flag, ""),
    o("nodev", Flag, ""),
    o("exec", Flag, ""),
    o("noexec", Flag, ""),
    o("suid", Flag, ""),
    o("nosuid", Flag, ""),
    o("iversion", Flag, ""),
    o("noiversion", Flag, ""),
    o("rw", Flag, ""),
    o("silent", Flag, ""),
    o("loud", Flag, ""),
    o("context", Context, "SELinux context"),
    o("fscontext", Context, "SELinux context"),
    o("defcontext", Context, "SELinux context"),
    o("rootcontext", Context, "SELinux context"),
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

// ---------------------------------------------------------------- xfs (mkfs.xfs(8), xfs(5))

const XFS_BLOCK: &[OptSpec] = &[o("size", Size, "block size")];
const XFS_META: &[OptSpec] = &[
    o("crc", OptBool, ""),
    o("finobt", OptBool, ""),
    o("uuid", Uuid, ""),
    o("rmapbt", OptBool, ""),
    o("reflink", OptBool, ""),
    o("inobtcount", OptBool, ""),
    o("bigtime", OptBool, ""),
    o("autofsck", OptBool, ""),
    o("metadir", OptBool, ""),
];
/// `-d`: not `name=` (another device) nor `file=`.
const XFS_DATA: &[OptSpec] = &[
    o("agcount", Number, ""),
    o("agsize", Size, ""),
    o("cowextsize", Number, ""),
    o("noalign", Flag, ""),
    o("size", Size, ""),
    o("sunit", Number, ""),
    o("su", Size, ""),
    o("swidth", Number, ""),
    o("sw", Number, ""),
    o("concurrency", Number, ""),
    o("daxinherit", OptBool, ""),
    o("extszinherit", Number, ""),
    o("projinherit", Number, ""),
    o("rtinherit", OptBool, ""),
];
const XFS_INODE: &[OptSpec] = &[
    o("align", OptBool, ""),
    o("size", Size, ""),
    o("maxpct", Number, ""),
    o("perblock", Number, ""),
    o("attr", Words(&["1", "2"]), ""),
    o("projid32bit", OptBool, ""),
    o("sparse", OptBool, ""),
    o("nrext64", OptBool, ""),
    o("exchange", OptBool, ""),
];
/// `-l`: not `logdev=` (an external log device).
const XFS_LOG: &[OptSpec] = &[
    o("agnum", Number, ""),
    o("internal", Words(&["1"]), "(an external log is not allowed)"),
    o("size", Size, ""),
    o("version", Words(&["1", "2"]), ""),
    o("sunit", Number, ""),
    o("su", Size, ""),
    o("lazy-count", OptBool, ""),
    o("concurrency", Number, ""),
];
const XFS_NAMING: &[OptSpec] = &[
    o("size", Size, ""),
    o("version", Words(&["2", "ci"]), ""),
    o("ftype", OptBool, ""),
    o("parent", OptBool, ""),
];
/// `-r`: not `rtdev=` (a realtime device).
const XFS_RT: &[OptSpec] = &[
    o("extsize", Size, ""),
    o("size", Size, ""),
    o("noalign", Flag, ""),
    o("rgcount", Number, ""),
];
const XFS_SECTOR: &[OptSpec] = &[o("size", Size, "")];

/// `mkfs.xfs` options. Not here: `-d name=`/`file=`, `-l logdev=`, `-r rtdev=`, `-p` (a
/// protofile), `-c` (a config file), positional arguments.
pub const XFS_MKFS: &[OptSpec] = &[
    o("-b", Sub(XFS_BLOCK), "block size"),
    o("-m", Sub(XFS_META), "metadata options"),
    o("-d", Sub(XFS_DATA), "data section (no other device or file)"),
    o("-f", Flag, "force"),
    o("-i", Sub(XFS_INODE), "inode options"),
    o("-l", Sub(XFS_LOG), "log section (internal only)"),
    o("-n", Sub(XFS_NAMING), "naming (directory) options"),
    o("-r", Sub(XFS_RT), "realtime section (no realtime device)"),
    o("-s", Sub(XFS_SECTOR), "sector size"),
    o("-L", Name, "label"),
    o("-N", Flag, "dry run"),
    o("-K", Flag, "do not discard"),
    o("-q", Flag, "quiet"),
];

/// xfs mount options (xfs(5)). Not here: `logdev=`, `rtdev=`.
pub const XFS_MOUNT: &[OptSpec] = &[
    o("allocsize", Size, ""),
    o("attr2", Flag, ""),
    o("noattr2", Flag, ""),
    o("dax", Words(&["always", "never", "inode"]), "(or no value)"),
    o("discard", Flag, ""),
    o("nodiscard", Flag, ""),
    o("grpid", Flag, ""),
    o("bsdgroups", Flag, ""),
    o("nogrpid", Flag, ""),
    o("sysvgroups", Flag, ""),
    o("filestreams", Flag, ""),
    o("ikeep", Flag, ""),
    o("noikeep", Flag, ""),
    o("inode32", Flag, ""),
    o("inode64", Flag, ""),
    o("largeio", Flag, ""),
    o("nolargeio", Flag, ""),
    o("logbufs", Number, ""),
    o("logbsize", Size, ""),
    o("noalign", Flag, ""),
    o("norecovery", Flag, ""),
    o("nouuid", Flag, ""),
    o("noquota", Flag, ""),
    o("uquota", Flag, ""),
    o("usrquota", Flag, ""),
    o("uqnoenforce", Flag, ""),
    o("quota", Flag, ""),
    o("gquota", Flag, ""),
    o("grpquota", Flag, ""),
    o("gqnoenforce", Flag, ""),
    o("pquota", Flag, ""),
    o("prjquota", Flag, ""),
    o("pqnoenforce", Flag, ""),
    o("qnoenforce", Flag, ""),
    o("sunit", Number, ""),
    o("swidth", Number, ""),
    o("swalloc", Flag, ""),
    o("wsync", Flag, ""),
];

// ---------------------------------------------------------------- btrfs (mkfs.btrfs(8), btrfs(5))

const BTRFS_PROFILE_WORDS: &[&str] =
    &["single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6"];

/// `mkfs.btrfs` options. Not here: `-r`/`--rootdir` (populate from a directory), `--subvol`,
/// `--inode-flags`, positional arguments (extra devices).
pub const BTRFS_MKFS: &[OptSpec] = &[
    o("-b", Size, "filesystem size"),
    o("--byte-count", Size, "filesystem size"),
    o("--csum", Words(&["crc32c", "xxhash", "xxhash64", "sha256", "blake2", "blake2b"]), ""),
    o("--checksum", Words(&["crc32c", "xxhash", "xxhash64", "sha256", "blake2", "blake2b"]), ""),
    o("-d", Words(BTRFS_PROFILE_WORDS), "data profile (or profile=)"),
    o("--data", Words(BTRFS_PROFILE_WORDS), "data profile"),
    o("-m", Words(BTRFS_PROFILE_WORDS), "metadata profile (or profile=)"),
    o("--metadata", Words(BTRFS_PROFILE_WORDS), "metadata profile"),
    o("-M", Flag, "mixed block groups"),
    o("--mixed", Flag, "mixed block groups"),
    o("-n", Size, "node size"),
    o("--nodesize", Size, "node size"),
    o("-s", Size, "sector size"),
    o("--sectorsize", Size, "sector size"),
    o("-L", Name, "label"),
    o("--label", Name, "label"),
    o("-K", Flag, "do not discard"),
    o("--nodiscard", Flag, "do not discard"),
    o("-O", Features, "features"),
    o("--features", Features, "features"),
    o("-R", Features, "runtime features"),
    o("--runtime-features", Features, "runtime features"),
    o("-U", Uuid, "UUID"),
    o("--uuid", Uuid, "UUID"),
    o("--device-uuid", Uuid, "device UUID"),
    o("-f", Flag, "force"),
    o("--force", Flag, "force"),
    o("-q", Flag, "quiet"),
    o("--quiet", Flag, "quiet"),
    o("-v", Flag, "verbose"),
    o("--verbose", Flag, "verbose"),
];

/// btrfs mount options (btrfs(5)). Not here: `device=` (fsbench adds its own devices),
/// `subvol=`.
pub const BTRFS_MOUNT: &[OptSpec] = &[
    o("acl", Flag, ""),
    o("noacl", Flag, ""),
    o("autodefrag", Flag, ""),
    o("noautodefrag", Flag, ""),
    o("barrier", Flag, ""),
    o("nobarrier", Flag, ""),
    o("clear_cache", Flag, ""),
    o("commit", Number, ""),
    o("compress", Words(&["zlib*", "lzo", "zstd*", "no", "none"]), "(or no value)"),
    o("compress-force", Words(&["zlib*", "lzo", "zstd*"]), "(or no value)"),
    o("datacow", Flag, ""),
    o("nodatacow", Flag, ""),
    o("datasum", Flag, ""),
    o("nodatasum", Flag, ""),
    o("degraded", Flag, ""),
    o("discard", Words(&["sync", "async"]), "(or no value)"),
    o("nodiscard", Flag, ""),
    o("enospc_debug", Flag, ""),
    o("noenospc_debug", Flag, ""),
    o("fatal_errors", Words(&["bug", "panic"]), ""),
    o("flushoncommit", Flag, ""),
    o("noflushoncommit", Flag, ""),
    o("max_inline", Size, ""),
    o("metadata_ratio", Number, ""),
    o("norecovery", Flag, ""),
    o("rescan_uuid_tree", Flag, ""),
    o("skip_balance", Flag, ""),
    o("space_cache", Words(&["v1", "v2"]), "(or no value)"),
    o("nospace_cache", Flag, ""),
    o("ssd", Flag, ""),
    o("ssd_spread", Flag, ""),
    o("nossd", Flag, ""),
    o("nossd_spread", Flag, ""),
    o("subvolid", Number, ""),
    o("thread_pool", Number, ""),
    o("treelog", Flag, ""),
    o("notreelog", Flag, ""),
    o("usebackuproot", Flag, ""),
    o("user_subvol_rm_allowed", Flag, ""),
];

// ---------------------------------------------------------------- tmpfs (tmpfs(5))

/// tmpfs mount options.
pub const TMPFS_MOUNT: &[OptSpec] = &[
    o("size", Size, "size (bytes, k/m/g suffix, or N%)"),
    o("nr_blocks", Size, ""),
    o("nr_inodes", Size, ""),
    o("mode", Octal, ""),
    o("uid", Number, ""),
    o("gid", Number, ""),
    o("huge", Words(&["never", "always", "within_size", "advise", "deny", "force"]), ""),
    o("mpol", Words(&["default", "prefer*", "bind*", "interleave*", "local"]), ""),
    o("noswap", Flag, ""),
    o("inode32", Flag, ""),
    o("inode64", Flag, ""),
    o("quota", Flag, ""),
    o("usrquota", Flag, ""),
    o("grpquota", Flag, ""),
];

// ---------------------------------------------------------------- zfs (zfsprops(7), zfs-fuse)

const ZFS_CHECKSUM: &[&str] = &[
    "on",
    "off",
    "fletcher2",
    "fletcher4",
    "sha256",
    "sha512",
    "skein",
    "edonr",
    "blake3",
    "noparity",
];
const ZFS_COMPRESSION: &[&str] =
    &["on", "off", "lzjb", "gzip*", "zle", "lz4", "zstd*", "zstd-fast*"];

/// zfs dataset properties set with `zfs set`. Not here: `mountpoint`, `canmount`, `readonly`
/// (fsbench's to set), `sharenfs`/`sharesmb` (export the dataset), `volsize`, `keylocation`.
pub const ZFS_PROPS: &[OptSpec] = &[
    o("atime", Words(ONOFF), ""),
    o("relatime", Words(ONOFF), ""),
    o("checksum", Words(ZFS_CHECKSUM), ""),
    o("compression", Words(ZFS_COMPRESSION), ""),
    o("compress", Words(ZFS_COMPRESSION), ""),
    o("recordsize", Size, ""),
    o("copies", Words(&["1", "2", "3"]), ""),
    o("dedup", Words(&["on", "off", "verify", "sha256*", "sha512*", "skein*", "edonr*"]), ""),
    o("sync", Words(&["standard", "always", "disabled"]), ""),
    o("primarycache", Words(&["all", "none", "metadata"]), ""),
    o("secondarycache", Words(&["all", "none", "metadata"]), ""),
    o("logbias", Words(&["latency", "throughput"]), ""),
    o("xattr", Words(&["on", "off", "sa", "dir"]), ""),
    o("exec", Words(ONOFF), ""),
    o("setuid", Words(ONOFF), ""),
    o("devices", Words(ONOFF), ""),
    o("snapdir", Words(&["hidden", "visible"]), ""),
    o("aclmode", Words(&["discard", "groupmask", "passthrough", "restricted"]), ""),
    o(
        "aclinherit",
        Words(&["discard", "noallow", "restricted", "passthrough", "passthrough-x", "secure"]),
        "",
    ),
    o("acltype", Words(&["off", "noacl", "nfsv4", "posix", "posixacl"]), ""),
    o("quota", Size, "(or none)"),
    o("refquota", Size, "(or none)"),
    o("reservation", Size, "(or none)"),
    o("refreservation", Size, "(or none)"),
    o("vscan", Words(ONOFF), ""),
    o("nbmand", Words(ONOFF), ""),
    o("dnodesize", Words(&["legacy", "auto", "1k", "2k", "4k", "8k", "16k"]), ""),
    o("redundant_metadata", Words(&["all", "most", "some", "none"]), ""),
    o("special_small_blocks", Size, ""),
    o("version", Number, ""),
];

/// The mkfs table of `kind` (`None`: no mkfs, or not through these tables).
pub fn mkfs_table(kind: FsKind) -> Option<&'static [OptSpec]> {
    match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 => Some(EXT4_MKFS),
        FsKind::Xfs => Some(XFS_MKFS),
        FsKind::Btrfs => Some(BTRFS_MKFS),
        FsKind::Zfs | FsKind::Tmpfs => None,
    }
}

/// The mount table of `kind`, besides [`VFS_MOUNT`] (`None`: zfs, which is mounted by zfs).
pub fn mount_table(kind: FsKind) -> Option<&'static [OptSpec]> {
    match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 => Some(EXT4_MOUNT),
        FsKind::Xfs => Some(XFS_MOUNT),
        FsKind::Btrfs => Some(BTRFS_MOUNT),
        FsKind::Tmpfs => Some(TMPFS_MOUNT),
        FsKind::Zfs => None,
    }
}

fn find(table: &'static [OptSpec], name: &str) -> Option<&'static OptSpec> {
    table.iter().find(|s| s.name == name)
}

fn names(table: &[OptSpec]) -> String {
    table.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

fn is_size(v: &str, pct: bool) -> bool {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let unit = v[digits..].to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b').filter(|u| !u.is_empty()))
        .unwrap_or(&unit);
    matches!(unit, "" | "k" | "m" | "g" | "t" | "p" | "e" | "s" | "b") || (pct && unit == "%")
}

fn word_matches(w: &str, v: &str) -> bool {
    match w.strip_suffix('*') {
        Some(prefix) => v.strip_prefix(prefix).is_some_and(|rest| {
            rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':' || c == ',')
        }),
        None => w == v,
    }
}

fn is_name(v: &str) -> bool {
    !v.is_empty()
        && !v.starts_with('-')
        && v.len() <= 64
        && v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

/// Check `value` (`None`: none given) against `kind`; `Err` is what is wrong with it.
fn check_value(kind: Kind, value: Option<&str>) -> Result<(), String> {
    if let Some(v) = value {
        if v.contains('/') {
            return Err(format!(
                "`{v}` is a path: fsbench passes no path or device to mkfs, mount or zfs (it makes and names its own devices)"
            ));
        }
    }
    let ok = match (kind, value) {
        (Flag, None) => true,
        (Flag, Some(_)) => return Err("takes no value".into()),
        (OptBool, None) => true,
        (OptBool, Some(v)) => v == "0" || v == "1",
        (Words(ws), None) => return Err(format!("needs a value: {}", ws.join(", "))),
        (Words(ws), Some(v)) => ws.iter().any(|w| word_matches(w, v)),
        (_, None) if matches!(kind, UidGid) => true,
        (_, None) => return Err("needs a value".into()),
        (Size, Some(v)) => is_size(v, true) || v == "none",
        (Number, Some(v)) => {
            !v.is_empty()
                && v.bytes().filter(|&b| b == b'.').count() <= 1
                && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && v.bytes().next().is_some_and(|b| b.is_ascii_digit())
        }
        (Octal, Some(v)) => {
            !v.is_empty() && v.len() <= 5 && v.bytes().all(|b| (b'0'..=b'7').contains(&b))
        }
        (Name, Some(v)) => is_name(v),
        (Uuid, Some(v)) => {
            ["clear", "random", "time", "null", "generate"].contains(&v)
                || (v.len() <= 36 && v.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
        }
        (UidGid, Some(v)) => match v.split_once(':') {
            Some((u, g)) => {
                !u.is_empty()
                    && !g.is_empty()
                    && u.bytes().chain(g.bytes()).all(|b| b.is_ascii_digit())
            }
            None => false,
        },
        (Features, Some(v)) => v.split(',').all(|f| {
            let f = f.strip_prefix('^').unwrap_or(f);
            is_name(f)
        }),
        (Context, Some(v)) => {
            !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:,\"".contains(c))
        }
        (Sub(table), Some(v)) => {
            for part in v.split(',').filter(|p| !p.is_empty()) {
                let (k, sv) = match part.split_once('=') {
                    Some((k, sv)) => (k, Some(sv)),
                    None => (part, None),
                };
                let Some(spec) = find(table, k) else {
                    return Err(format!("`{k}` is not one of: {}", names(table)));
                };
                check_value(spec.kind, sv).map_err(|e| format!("`{part}`: {e}"))?;
            }
            true
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("`{}` is not {}", value.unwrap_or(""), describe(kind)))
    }
}

fn describe(kind: Kind) -> String {
    match kind {
        Flag => "empty".into(),
        OptBool => "0 or 1".into(),
        Size => "a size (a number, optionally with k, m, g, t)".into(),
        Number => "a number".into(),
        Octal => "an octal number".into(),
        Words(ws) => format!("one of: {}", ws.join(", ").replace('*', "[-N]")),
        Name => "a name of letters, digits, `_`, `-`, `.`".into(),
        Uuid => "a UUID".into(),
        UidGid => "UID:GID".into(),
        Features => "a comma list of feature names".into(),
        Context => "an SELinux context".into(),
        Sub(t) => format!("a comma list of: {}", names(t)),
    }
}

fn refuse(kind: FsKind, what: &str, opt: &str, why: String) -> ConfigError {
    ConfigError::Invalid(format!(
        "{kind} {what} option `{opt}`: {why}. fsbench passes on only options that stay on the testbed it makes; remove or change it"
    ))
}

/// Check mkfs arguments (one argv entry each) against `kind`'s table.
pub fn check_mkfs(kind: FsKind, args: &[String]) -> Result<(), ConfigError> {
    let Some(table) = mkfs_table(kind) else {
        return Ok(());
    };
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (name, attached): (&str, Option<&str>) = if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some((n, v)) => (&a[..n.len() + 2], Some(v)),
                None => (a.as_str(), None),
            }
        } else if a.starts_with('-') && a.len() > 2 {
            (&a[..2], Some(&a[2..]))
        } else {
            (a.as_str(), None)
        };
        if !name.starts_with('-') || name == "-" {
            return Err(refuse(
                kind,
                "mkfs",
                a,
                "is not an option: mkfs would take it as a device, a path or a size (fsbench gives the devices)".into(),
            ));
        }
        let Some(spec) = find(table, name) else {
            return Err(refuse(
                kind,
                "mkfs",
                a,
                format!("is not an option fsbench passes to mkfs.{kind}; valid: {}", names(table)),
            ));
        };
        let value = match (spec.kind, attached) {
            (Flag, Some(_)) if !name.starts_with("--") => {
                return Err(refuse(kind, "mkfs", a, "give single-letter flags one by one".into()))
            }
            (Flag, v) => v,
            (_, Some(v)) => Some(v),
            (OptBool, None) => None,
            (_, None) => {
                i += 1;
                match args.get(i) {
                    Some(v) => Some(v.as_str()),
                    None => {
                        return Err(refuse(
                            kind,
                            "mkfs",
                            a,
                            format!("needs a value: {}", describe(spec.kind)),
                        ))
                    }
                }
            }
        };
        check_value(spec.kind, value).map_err(|why| {
            let shown = match value {
                Some(v) if attached.is_none() => format!("{name} {v}"),
                _ => a.clone(),
            };
            refuse(kind, "mkfs", &shown, format!("{why} ({})", spec.help))
        })?;
        i += 1;
    }
    Ok(())
}

/// Check mount options (one `NAME[=VALUE]` each) against `kind`'s table and the VFS's.
pub fn check_mount(kind: FsKind, opts: &[String]) -> Result<(), ConfigError> {
    let Some(table) = mount_table(kind) else {
        return Ok(());
    };
    for opt in opts {
        let (k, v) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (opt.as_str(), None),
        };
        let Some(spec) = find(table, k).or_else(|| find(VFS_MOUNT, k)) else {
            return Err(refuse(
                kind,
                "mount",
                opt,
                format!(
                    "is not a mount option fsbench passes for {kind}; valid: {}, {}",
                    names(table),
                    names(VFS_MOUNT)
                ),
            ));
        };
        // `dax`, `compress`, `discard`, `space_cache` also stand alone.
        if v.is_none() && matches!(spec.kind, Words(_)) && spec.help.contains("or no value") {
            continue;
        }
        check_value(spec.kind, v).map_err(|why| refuse(kind, "mount", opt, why))?;
    }
    Ok(())
}

/// Check zfs dataset properties against [`ZFS_PROPS`]; user properties (`module:name`, see
/// zfsprops(7)) take any value without `/`.
pub fn check_zfs(props: &[(String, String)]) -> Result<(), ConfigError> {
    for (k, v) in props {
        let shown = format!("{k}={v}");
        if k.contains(':') {
            let ok = !v.contains('/')
                && v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:@ ".contains(c));
            if !ok {
                return Err(refuse(
                    FsKind::Zfs,
                    "property",
                    &shown,
                    "a user property's value is letters, digits and `_-.:@` (no path)".into(),
                ));
            }
            continue;
        }
        let Some(spec) = find(ZFS_PROPS, k) else {
            return Err(refuse(
                FsKind::Zfs,
                "property",
                &shown,
                format!("is not a property fsbench sets; valid: {}", names(ZFS_PROPS)),
            ));
        };
        check_value(spec.kind, Some(v))
            .map_err(|why| refuse(FsKind::Zfs, "property", &shown, why))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn what_users_pass_is_accepted() {
        for (k, a) in [
            (FsKind::Ext4, "-b 4096"),
            (FsKind::Ext4, "-m 0"),
            (FsKind::Ext4, "-E stride=16"),
            (FsKind::Ext4, "-O ^has_journal -E lazy_itable_init=0,lazy_journal_init=0"),
            (FsKind::Ext4, "-E root_owner=0:0"),
            (FsKind::Ext4, "-E root_owner"),
            (FsKind::Ext4, "-J size=16 -I 256 -i 16384 -N 1000 -T news -L lab"),
            (FsKind::Ext4, "-b4096"),
            (FsKind::Xfs, "-l size=64m"),
            (FsKind::Xfs, "-b size=3"),
            (FsKind::Xfs, "-m crc=1,reflink=0 -d agcount=4 -i size=512 -n ftype=1"),
            (FsKind::Btrfs, "-n 16k --csum xxhash -M -O ^no-holes"),
            (FsKind::Btrfs, "--csum=sha256"),
        ] {
            check_mkfs(k, &v(a)).unwrap_or_else(|e| panic!("{k} {a}: {e}"));
        }
        for (k, a) in [
            (FsKind::Ext4, "data=writeback,nobarrier,noatime,nodelalloc,commit=60,dirsync"),
            (FsKind::Ext4, "context=system_u:object_r:tmp_t:s0,barrier=0,dax"),
            (FsKind::Xfs, "logbsize=256k,inode64,allocsize=64k"),
            (FsKind::Btrfs, "compress=zstd:3,space_cache=v2,ssd,compress"),
            (FsKind::Tmpfs, "size=3M,mode=1777,huge=within_size,size=50%"),
        ] {
            let opts: Vec<String> = a.split(',').map(str::to_string).collect();
            check_mount(k, &opts).unwrap_or_else(|e| panic!("{k} {a}: {e}"));
        }
        let p = |k: &str, v: &str| (k.to_string(), v.to_string());
        check_zfs(&[
            p("compression", "lz4"),
            p("compression", "lzjb"),
            p("compression", "gzip-9"),
            p("recordsize", "8k"),
            p("checksum", "sha256"),
            p("atime", "off"),
            p("quota", "none"),
            p("org.example:tag", "x1"),
        ])
        .unwrap();
    }

    #[test]
    fn paths_devices_and_unknown_options_are_refused() {
        for (k, a, want) in [
            (FsKind::Btrfs, "/dev/loop11", "not an option"),
            (FsKind::Btrfs, "-r /etc", "not an option"),
            (FsKind::Btrfs, "--rootdir=/etc", "not an option"),
            (FsKind::Xfs, "-l logdev=/dev/loop11,size=64m", "path"),
            (FsKind::Xfs, "-l size=64m,logdev=x", "`logdev` is not one of"),
            (FsKind::Xfs, "-d name=/dev/loop11", "path"),
            (FsKind::Xfs, "-p /etc/protofile", "not an option"),
            (FsKind::Ext4, "-J device=/dev/loop11", "path"),
            (FsKind::Ext4, "-d /etc", "not an option"),
            (FsKind::Ext4, "-z /tmp/undo", "not an option"),
            (FsKind::Ext4, "-b 4096 12345", "not an option"),
            (FsKind::Ext4, "-b size=1", "is not one of"),
            (FsKind::Ext4, "-Z", "not an option"),
            (FsKind::Ext4, "-qF", "one by one"),
            (FsKind::Ext4, "-b", "needs a value"),
        ] {
            let e = check_mkfs(k, &v(a)).unwrap_err().to_string();
            assert!(e.contains(want), "{k} {a}: {e}");
            assert!(e.contains("remove or change it"), "{e}");
        }
        for (k, a) in [
            (FsKind::Ext4, "journal_path=/dev/loop11"),
            (FsKind::Ext4, "journal_dev=1234"),
            (FsKind::Ext4, "data=writeback,no_such_option"),
            (FsKind::Xfs, "logdev=/dev/loop11"),
            (FsKind::Xfs, "rtdev=/dev/loop11"),
            (FsKind::Btrfs, "device=/dev/loop11"),
            (FsKind::Btrfs, "subvol=/x"),
            (FsKind::Tmpfs, "mpol=bind:/x"),
            (FsKind::Ext4, "commit=1/2"),
        ] {
            let opts: Vec<String> = a.split(',').map(str::to_string).collect();
            assert!(check_mount(k, &opts).is_err(), "{k} {a}");
        }
        let p = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert!(check_zfs(&p("sharenfs", "on")).is_err());
        assert!(check_zfs(&p("compression", "/dev/loop1")).is_err());
        assert!(check_zfs(&p("org.example:tag", "/etc/x")).is_err());
        assert!(check_zfs(&p("recordsize", "big")).is_err());
    }
}
