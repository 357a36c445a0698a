//! ZFS through the zfs-fuse daemon: a pool `fsbench_PID_N` over links to the testbed's
//! devices, mounted on the testbed's mount point (the pool's mechanics are in
//! [`crate::testbed::zfs`], its watchdog in [`crate::testbed::zfs_watch`]).
//!
//! | what | how |
//! | --- | --- |
//! | made | the zfs-fuse daemon if it is not running; `zpool create -m MNT NAME [mirror\|raidz\|raidz2] LINK...`; `zfs set KEY=VALUE NAME` per property |
//! | mounted | by zfs itself (`fuse.zfs`) |
//! | evicted | `zpool export` + `drop_caches` + `zpool import -d DEVDIR`: the ARC lives in the daemon, so only taking the pool away empties it ([`super::super::evict::ZfsCache`]) |
//! | checked (integrity) | `zpool scrub POOL`, then `zpool status -v POOL` until it is done: errors when a READ/WRITE/CKSUM counter is not 0, or known data errors are listed |
//! | metadata (integrity) | `zdb -e -p DEVDIR -dddddd POOL` on the exported pool: the directory's ZAP block (its object's level-0 block); the block of the dataset's dnode array (object 0) holding the file's dnode (512 bytes each, 32 to a 16 KiB block); a file's first level-1 indirect block |
//!
//! zdb names each block by its DVAs (`vdev:offset:asize`, hex); the offset counts from the end
//! of the vdev's front labels and boot area (4 MiB), so a DVA's bytes are at `4 MiB + offset` in
//! the image of that vdev (every child's image for a mirror). zfs keeps two copies (ditto
//! blocks, two DVAs) of such metadata even on one device; both are found, one is damaged.
//! Blocks in the vdev labels (the first 4 MiB and the last 512 KiB of each device) are never
//! targets; raidz is not located (its DVAs are spread over the children with parity). The
//! target is the DVA's allocated size (`asize`: the block as written, compressed metadata
//! included, rounded up to the sector).

use super::{Build, Filesystem, FsIntegrity, Held, Made, MetaError, Untestable};
use crate::model::integrity::{BlockCopy, CheckRun, MetaBlock, Subject, Target, ToolLocation};
use crate::testbed::config::{ConfigError, FsConfig, Given, RawZfs, ZfsLayout, ZfsOpts};
use crate::testbed::error::{Result, TestbedError};
use crate::testbed::fsopts::{check_value, find, names, o, refuse, Kind::*, OptSpec, ONOFF};
use crate::testbed::state::StateDir;
use crate::testbed::zfs::{self as helper, ZfsDaemon, ZfsPool};
use crate::testbed::zfs_watch as watch;
use crate::testbed::{Owned, Testbed};
use std::fmt::Write as _;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// ZFS (zfs-fuse).
pub struct Zfs;

/// The registered ZFS.
pub static ZFS: Zfs = Zfs;

/// Properties whose values the environment record always shows.
const SHOWN_PROPERTIES: [&str; 4] = ["compression", "checksum", "recordsize", "atime"];

impl Filesystem for Zfs {
    fn name(&self) -> &'static str {
        "zfs"
    }

    fn min_device_bytes(&self, _cfg: &FsConfig) -> u64 {
        // zpool create needs 64 MiB per vdev.
        64 << 20
    }

    fn own_keys(&self) -> &'static [&'static str] {
        &["layout", "*"]
    }

    fn configure(&self, given: &mut Given, cfg: &mut FsConfig) -> Result<(), ConfigError> {
        let z = given.zfs.take().unwrap_or_default();
        let mut layout = z.layout;
        let mut properties = Vec::new();
        for (k, v) in std::mem::take(&mut given.keys) {
            if k == "layout" {
                layout = Some(v);
            } else {
                properties.push((k, v));
            }
        }
        properties.extend(z.properties);
        let devices = given.devices.take();
        let name = match (&layout, devices) {
            (Some(l), _) => l.as_str(),
            (None, Some(n)) if n > 1 => "stripe",
            (None, _) => "single",
        };
        for (k, _) in &properties {
            let ok = !k.is_empty()
                && k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:@".contains(c));
            if !ok {
                return Err(ConfigError::Invalid(format!("`{k}` is not a zfs property name")));
            }
            // fsbench mounts the pool in its own work directory and removes it from there: a
            // property that moves or hides the mount would send the benchmark, and zfs's
            // directory creation, elsewhere.
            if ["mountpoint", "canmount", "readonly", "rdonly"].contains(&k.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "zfs property `{k}` is fsbench's to set (the pool is mounted in its work directory); remove it"
                )));
            }
        }
        check_zfs(&properties)?;
        cfg.zfs = ZfsOpts { layout: ZfsLayout::build(name, devices)?, properties };
        cfg.devices = cfg.zfs.layout.devices();
        Ok(())
    }

    fn given(&self, cfg: &FsConfig) -> Given {
        Given {
            devices: Some(cfg.devices),
            zfs: Some(RawZfs {
                layout: Some(cfg.zfs.layout.name().to_string()),
                properties: cfg.zfs.properties.clone(),
            }),
            ..Given::default()
        }
    }

    fn short_form_mid(&self, cfg: &FsConfig) -> String {
        if cfg.zfs.layout == ZfsLayout::Single {
            String::new()
        } else {
            format!(":layout={}", cfg.zfs.layout.name())
        }
    }

    fn short_form_tail(&self, cfg: &FsConfig) -> String {
        cfg.zfs.properties.iter().map(|(k, v)| format!(":{k}={v}")).collect()
    }

    fn tools(&self, _cfg: &FsConfig) -> Vec<(&'static str, &'static str)> {
        vec![("zfs-fuse", "zfs-fuse"), ("zpool", "zfs-fuse"), ("zfs", "zfs-fuse")]
    }

    fn make(&self, b: &mut Build<'_>) -> Result<Made> {
        let cfg = b.cfg;
        let devdir = b.dir("zdevs")?;
        let mut vdevs = Vec::new();
        for (i, d) in b.devices.iter().enumerate() {
            let link = devdir.join(format!("dev{i}"));
            std::os::unix::fs::symlink(d, &link)
                .map_err(|e| TestbedError::io("linking", &link, e))?;
            vdevs.push(link);
        }
        b.own(Owned::Daemon(ZfsDaemon::ensure(b.state)?));
        let name = format!("{}{}_{}", helper::POOL_PREFIX, std::process::id(), b.seq);
        let mkfs_cmdline =
            helper::create_command(&name, cfg.zfs.layout, &vdevs, &b.mountpoint).cmdline();
        let post =
            cfg.zfs.properties.iter().map(|(k, v)| format!("zfs set {k}={v} {name}")).collect();
        let pool = ZfsPool::create(
            &name,
            cfg.zfs.layout,
            &vdevs,
            &devdir,
            &b.mountpoint,
            &cfg.zfs.properties,
            b.state,
        )
        .map_err(|e| match &e {
            TestbedError::Cmd { step, .. } if step.starts_with("setting zfs property") => {
                let props: Vec<String> =
                    cfg.zfs.properties.iter().map(|(k, v)| format!("{k}={v}")).collect();
                crate::testbed::rejected("zfs set", &props, e)
            }
            _ => e,
        })?;
        b.own(Owned::Pool(pool));
        let mut shown: Vec<String> = SHOWN_PROPERTIES.map(String::from).to_vec();
        for (k, _) in &cfg.zfs.properties {
            if !shown.contains(k) {
                shown.push(k.clone());
            }
        }
        let cache = crate::testbed::evict::ZfsCache { pool: name.clone(), devdir };
        let mut made = Made::new(Some(mkfs_cmdline), Box::new(cache));
        made.post_create_cmdlines = post;
        made.zfs_properties = crate::testbed::env::zfs_properties(&name, &shown);
        Ok(made)
    }

    fn tool_version(&self, _cfg: &FsConfig) -> Option<String> {
        // zfs-fuse has no --version.
        super::tool_version("", "", "zfs-fuse")
    }

    fn daemon(&self) -> Option<&'static str> {
        Some("zfs-fuse")
    }

    fn daemon_alive(&self) -> Option<bool> {
        Some(helper::daemon_running())
    }

    fn hold_daemon(&self, state: &StateDir) -> Result<Option<Held>> {
        Ok(Some(Box::new(ZfsDaemon::ensure(state)?)))
    }

    fn integrity(&self) -> Result<&dyn FsIntegrity, Untestable> {
        Ok(self)
    }
}

impl FsIntegrity for Zfs {
    fn data_copies(&self, cfg: &FsConfig) -> usize {
        match cfg.zfs.layout {
            ZfsLayout::Mirror(n) => n,
            _ => 1,
        }
    }

    fn checksums_data(&self) -> bool {
        true
    }

    fn parity_protected(&self, cfg: &FsConfig) -> bool {
        matches!(cfg.zfs.layout, ZfsLayout::Raidz(_) | ZfsLayout::Raidz2(_))
    }

    fn parity_target(&self, cfg: &FsConfig) -> bool {
        matches!(cfg.zfs.layout, ZfsLayout::Raidz(3))
    }

    fn metadata_targets(&self) -> &'static [Target] {
        &[Target::Directory, Target::Inode, Target::Indirect]
    }

    fn metadata_method(&self) -> &'static str {
        "zdb"
    }

    fn locate_metadata(
        &self,
        target: Target,
        subject: &Subject,
        tb: &Testbed,
    ) -> Result<MetaBlock, MetaError> {
        let (Some(name), Some(devdir)) = (tb.zfs_pool(), tb.zfs_devdir()) else {
            return Err(MetaError::NoPool);
        };
        let pool = PoolOf { name, devdir, layout: tb.config().zfs.layout };
        find_zfs(target, subject, &tb.image_paths(), &pool, &mut String::new())
    }

    fn map_fiemap(&self, _physical: u64, _devices: &[PathBuf], _loc: &mut ToolLocation) {
        // FIEMAP on zfs-fuse names no device offset.
    }

    fn check(&self, tb: &mut Testbed, run: &mut CheckRun) -> Result<()> {
        let pool = tb
            .zfs_pool()
            .ok_or_else(|| TestbedError::Check("zfs testbed without a pool".into()))?
            .to_string();
        let o = watch::output(watch::zcmd("zpool").args(["scrub", &pool]), Some(&pool))
            .map_err(|e| TestbedError::cmd("zpool scrub", e))?;
        super::add_output(run, &o);
        run.status = o.status.clone();
        let deadline = Instant::now() + Duration::from_secs(300);
        let status = loop {
            let s = watch::output(watch::zcmd("zpool").args(["status", "-v", &pool]), Some(&pool))
                .map_err(|e| TestbedError::cmd("zpool status", e))?;
            if !s.stdout.contains("in progress")
                || Instant::now() > deadline
                || crate::sys::signals::interrupted()
            {
                break s;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        super::add_output(run, &status);
        run.errors_reported = !o.success() || zpool_status_errors(&status.stdout);
        Ok(())
    }

    fn telling_line(&self, line: &str) -> bool {
        let t = line.trim();
        t.starts_with("scrub:")
            || t.starts_with("scan:")
            || (t.starts_with("errors:") && !t.contains("No known data errors"))
            || {
                let w: Vec<&str> = t.split_whitespace().collect();
                w.len() >= 5
                    && matches!(w[1], "ONLINE" | "DEGRADED" | "FAULTED" | "UNAVAIL")
                    && w[2..5].iter().any(|c| *c != "0")
                    && w[2..5].iter().all(|c| c.chars().all(|ch| ch.is_ascii_digit()))
            }
    }
}

/// Any non-zero READ/WRITE/CKSUM counter in the config table, or listed data errors.
fn zpool_status_errors(out: &str) -> bool {
    let mut in_table = false;
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"NAME") && w.contains(&"CKSUM") {
            in_table = true;
            continue;
        }
        if in_table {
            if w.is_empty() {
                in_table = false;
                continue;
            }
            if w.len() >= 5 && w[2..5].iter().any(|c| *c != "0") {
                return true;
            }
        }
        if line.trim_start().starts_with("errors:") && !line.contains("No known data errors") {
            return true;
        }
    }
    false
}

/// The `len` bytes of `copy` in its image.
fn read_copy(copy: &BlockCopy, len: usize) -> Result<Vec<u8>, MetaError> {
    let read = |what, source| MetaError::Read { what, path: copy.image.clone(), source };
    let f = std::fs::File::open(&copy.image).map_err(|e| read("opening", e))?;
    let mut v = vec![0u8; len];
    f.read_exact_at(&mut v, copy.offset_bytes).map_err(|e| read("reading", e))?;
    Ok(v)
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

/// The pool of an offline zfs testbed, for `zdb` (which reads the exported pool's devices
/// itself).
struct PoolOf<'a> {
    name: &'a str,
    devdir: PathBuf,
    layout: ZfsLayout,
}

fn find_zfs(
    target: Target,
    subject: &Subject,
    images: &[PathBuf],
    pool: &PoolOf<'_>,
    log: &mut String,
) -> Result<MetaBlock, MetaError> {
    let cmd = watch::zcmd("zdb").args(["-e", "-p"]).arg(&pool.devdir).args(["-dddddd", pool.name]);
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
            return Err(MetaError::NotLocated { target: target.name(), fs: "zfs" });
        }
    };
    let blocks = zdb_object_blocks(&o.stdout, pool.name, object);
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
    let bytes: Vec<Vec<u8>> =
        copies.iter().map(|c| read_copy(c, asize as usize)).collect::<Result<_, _>>()?;
    if bytes.iter().any(|b| *b != bytes[0]) || bytes[0].iter().all(|&x| x == 0) {
        return Err(MetaError::Unlocated(format!(
            "the copies zdb names are not one block (differ or are zero):\n{log}"
        )));
    }
    let _ = writeln!(log, "(the {} copies hold the same {asize} bytes)", copies.len());
    Ok(MetaBlock { copies, len: asize as usize, tool_output: std::mem::take(log) })
}

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
                    "zfs",
                    "property",
                    &shown,
                    "a user property's value is letters, digits and `_-.:@` (no path)".into(),
                ));
            }
            continue;
        }
        let Some(spec) = find(ZFS_PROPS, k) else {
            return Err(refuse(
                "zfs",
                "property",
                &shown,
                format!("is not a property fsbench sets; valid: {}", names(ZFS_PROPS)),
            ));
        };
        check_value(spec.kind, Some(v))
            .map_err(|why| refuse("zfs", "property", &shown, why.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A copy zdb named that cannot be read back says which image and the OS error.
    #[test]
    fn a_copy_not_read_back_names_its_image() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let image = tmp.path().join("dev0.img");
        let copy = BlockCopy { device: 0, image: image.clone(), offset_bytes: 4096 };
        let e = read_copy(&copy, 512).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("opening {}: No such file or directory (os error 2)", image.display())
        );
        std::fs::write(&image, vec![1u8; 4096]).unwrap();
        let e = read_copy(&copy, 512).unwrap_err();
        let short = matches!(&e, MetaError::Read { what: "reading", path, .. } if *path == image);
        assert!(short, "{e}");
        std::fs::write(&image, vec![1u8; 8192]).unwrap();
        assert_eq!(read_copy(&copy, 512).unwrap(), vec![1u8; 512]);
    }

    #[test]
    fn zpool_status_counters_and_errors() {
        let clean = "  pool: p\n state: ONLINE\nconfig:\n\n\tNAME STATE READ WRITE CKSUM\n\tp ONLINE 0 0 0\n\t  /t/dev0 ONLINE 0 0 0\n\nerrors: No known data errors\n";
        assert!(!zpool_status_errors(clean));
        let bad = clean.replace("/t/dev0 ONLINE 0 0 0", "/t/dev0 ONLINE 0 0 2  4K repaired");
        assert!(zpool_status_errors(&bad));
        let lost = clean.replace("No known data errors", "Permanent errors have been detected");
        assert!(zpool_status_errors(&lost));
        let z = "$ zpool status -v p\n scrub: scrub completed after 0h0m with 0 errors\nconfig:\n\tNAME STATE READ WRITE CKSUM\n\tp ONLINE 0 0 0\n\t  mirror-0 ONLINE 0 0 0\n\t    /t/dev0 ONLINE 0 0 0\n\t    /t/dev1 ONLINE 0 0 1  4K repaired\n\nerrors: No known data errors\n";
        assert_eq!(
            super::super::telling_lines(&ZFS, z),
            "scrub: scrub completed after 0h0m with 0 errors | /t/dev1 ONLINE 0 0 1 4K repaired"
        );
    }

    #[test]
    fn properties_are_checked_against_the_allow_list() {
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
        let p = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert!(check_zfs(&p("sharenfs", "on")).is_err());
        assert!(check_zfs(&p("compression", "/dev/loop1")).is_err());
        assert!(check_zfs(&p("org.example:tag", "/etc/x")).is_err());
        assert!(check_zfs(&p("recordsize", "big")).is_err());
    }
}
