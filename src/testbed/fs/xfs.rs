//! XFS.
//!
//! | what | how |
//! | --- | --- |
//! | made | `mkfs.xfs -f -q [OPTIONS] DEV` (mkfs.xfs 6.x refuses filesystems below 300 MiB) |
//! | mounted | `mount -t xfs DEV MNT` |
//! | evicted | the page cache ([`super::super::evict::KernelFsCache`]) |
//! | checked (integrity) | `xfs_repair -n DEV` on the unmounted device: errors when it exits non-zero |
//! | metadata (integrity) | `xfs_db -r -c "convert inode INO fsbyte"` of the directory (a small directory lives in its inode: short form) or of the file |

use super::{Build, Filesystem, FsIntegrity, Made, MetaError, Untestable};
use crate::model::integrity::{CheckRun, MetaBlock, Subject, Target};
use crate::sys::cmd::Cmd;
use crate::testbed::config::{ConfigError, FsConfig, Given};
use crate::testbed::error::Result;
use crate::testbed::fsopts::{o, Kind::*, OptSpec};
use crate::testbed::Testbed;
use std::path::PathBuf;

/// XFS.
pub struct Xfs;

/// The registered XFS.
pub static XFS: Xfs = Xfs;

impl Filesystem for Xfs {
    fn name(&self) -> &'static str {
        "xfs"
    }

    fn min_device_bytes(&self, _cfg: &FsConfig) -> u64 {
        // mkfs.xfs (6.x) refuses filesystems smaller than 300 MiB.
        300 << 20
    }

    fn configure(&self, given: &mut Given, _cfg: &mut FsConfig) -> Result<(), ConfigError> {
        super::one_device(self.name(), given)
    }

    fn mkfs_table(&self) -> Option<&'static [OptSpec]> {
        Some(XFS_MKFS)
    }

    fn mount_table(&self) -> Option<&'static [OptSpec]> {
        Some(XFS_MOUNT)
    }

    fn tools(&self, _cfg: &FsConfig) -> Vec<(&'static str, &'static str)> {
        vec![("mkfs.xfs", "xfsprogs")]
    }

    fn mkfs(&self, cfg: &FsConfig, devices: &[PathBuf]) -> Option<Cmd> {
        Some(
            super::mkfs_cmd("mkfs.xfs", "xfsprogs")
                .args(["-f", "-q"])
                .args(&cfg.mkfs_opts)
                .args(devices),
        )
    }

    fn make(&self, b: &mut Build<'_>) -> Result<Made> {
        super::make_on_devices(self, b)
    }

    fn tool_version(&self, _cfg: &FsConfig) -> Option<String> {
        super::tool_version("mkfs.xfs", "-V", "xfsprogs")
    }

    fn integrity(&self) -> Result<&dyn FsIntegrity, Untestable> {
        Ok(self)
    }
}

impl FsIntegrity for Xfs {
    fn metadata_targets(&self) -> &'static [Target] {
        &[Target::Directory, Target::Inode]
    }

    fn metadata_method(&self) -> &'static str {
        "xfs_db"
    }

    fn locate_metadata(
        &self,
        _target: Target,
        subject: &Subject,
        tb: &Testbed,
    ) -> Result<MetaBlock, MetaError> {
        let mut log = String::new();
        let devices = tb.loop_devices();
        let dev = devices.first().ok_or(MetaError::NoDevice { tool: "xfs_db" })?;
        let out = super::run_logged(
            Cmd::new("xfs_db")
                .args(["-r", "-c"])
                .arg(format!("convert inode {} fsbyte", subject.ino))
                .arg(dev),
            &mut log,
        )?;
        let byte = parse_parenthesised(&out)
            .ok_or_else(|| MetaError::Unlocated(format!("xfs_db said:\n{log}")))?;
        Ok(MetaBlock {
            copies: vec![super::copy_on(tb, 0, byte / 4096 * 4096)?],
            len: 4096,
            tool_output: log,
        })
    }

    fn check(&self, tb: &mut Testbed, run: &mut CheckRun) -> Result<()> {
        let cmd = Cmd::new("xfs_repair").arg("-n").hint("install the Debian package xfsprogs");
        super::check_offline(tb, run, cmd)
    }
}

/// `0x10a00 (68096)` -> 68096.
fn parse_parenthesised(out: &str) -> Option<u64> {
    let inner = out.split('(').nth(1)?.split(')').next()?;
    inner.trim().parse().ok()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkfs_line_and_xfs_db_output() {
        let dev = vec![PathBuf::from("/dev/loop3")];
        let c = FsConfig::parse("xfs:mkfs=-l size=64m").unwrap();
        assert_eq!(XFS.mkfs(&c, &dev).unwrap().cmdline(), "mkfs.xfs -f -q -l size=64m /dev/loop3");
        assert_eq!(parse_parenthesised("0x10a00 (68096)\n"), Some(68096));
    }
}
