//! Btrfs, on one device or several (`profile=DATA[/META]`, `devices=N`).
//!
//! | what | how |
//! | --- | --- |
//! | made | `mkfs.btrfs -f -q [-d DATA -m META] [OPTIONS] DEV...` |
//! | mounted | `mount -t btrfs -o device=DEV,... DEV MNT` (every member named: no udev here to register them) |
//! | evicted | the page cache ([`super::super::evict::KernelFsCache`]) |
//! | checked (integrity) | `btrfs scrub start -B MNT`, then `btrfs device stats MNT`, on the mounted filesystem: errors when the scrub reports errors or exits non-zero, or a device's error counter is not 0 |
//! | metadata (integrity) | `btrfs inspect-internal dump-tree -t 5`: the leaf holding the file's INODE_ITEM, mapped with `btrfs-map-logical` to every copy (metadata is DUP on one device, RAID1 on two); a directory's entries are in the same fs-tree leaves |
//!
//! Data blocks found by FIEMAP are logical addresses here, mapped to device offsets with
//! `btrfs-map-logical`.

use super::{Build, Filesystem, FsIntegrity, Made, MetaError, Untestable};
use crate::model::integrity::{BlockCopy, CheckRun, MetaBlock, Subject, Target, ToolLocation};
use crate::sys::cmd::Cmd;
use crate::testbed::config::{ConfigError, FsConfig, Given};
use crate::testbed::error::{Result, TestbedError};
use crate::testbed::fsopts::{o, Kind::*, OptSpec};
use crate::testbed::Testbed;
use std::path::{Path, PathBuf};

/// Btrfs.
pub struct Btrfs;

/// The registered Btrfs.
pub static BTRFS: Btrfs = Btrfs;

/// RAID profiles accepted by `profile=` (`mkfs.btrfs -d/-m`), with their minimum devices.
const PROFILES: [(&str, usize); 9] = [
    ("single", 1),
    ("dup", 1),
    ("raid0", 2),
    ("raid1", 2),
    ("raid1c3", 3),
    ("raid1c4", 4),
    ("raid10", 4),
    ("raid5", 2),
    ("raid6", 3),
];

impl Filesystem for Btrfs {
    fn name(&self) -> &'static str {
        "btrfs"
    }

    fn min_device_bytes(&self, _cfg: &FsConfig) -> u64 {
        // mkfs.btrfs refuses devices below ~114 MiB with default features.
        128 << 20
    }

    fn own_keys(&self) -> &'static [&'static str] {
        &["profile"]
    }

    fn configure(&self, given: &mut Given, cfg: &mut FsConfig) -> Result<(), ConfigError> {
        let mut profile = given.btrfs_profile.take();
        given.keys.retain(|(k, v)| {
            let mine = k == "profile";
            if mine {
                profile = Some(v.clone());
            }
            !mine
        });
        let mut min = 1;
        if let Some(p) = profile {
            let (d, m) = match p.split_once('/') {
                Some((d, m)) => (d.to_string(), m.to_string()),
                None => (p.clone(), p.clone()),
            };
            for prof in [&d, &m] {
                let Some((_, need)) = PROFILES.iter().find(|(n, _)| n == prof) else {
                    let names: Vec<_> = PROFILES.iter().map(|(n, _)| *n).collect();
                    return Err(ConfigError::Invalid(format!(
                        "unknown btrfs profile `{prof}`; valid: {}",
                        names.join(", ")
                    )));
                };
                min = min.max(*need);
            }
            cfg.btrfs_profile = Some((d, m));
        }
        cfg.devices = given.devices.take().unwrap_or(min);
        if cfg.devices < min {
            return Err(ConfigError::Invalid(format!(
                "btrfs profile {} needs at least {min} devices, got {}",
                cfg.btrfs_profile.as_ref().map(|p| p.0.as_str()).unwrap_or("single"),
                cfg.devices
            )));
        }
        Ok(())
    }

    fn given(&self, cfg: &FsConfig) -> Given {
        Given {
            devices: Some(cfg.devices),
            btrfs_profile: cfg.btrfs_profile.as_ref().map(|(d, m)| format!("{d}/{m}")),
            ..Given::default()
        }
    }

    fn short_form_mid(&self, cfg: &FsConfig) -> String {
        match &cfg.btrfs_profile {
            Some((d, m)) if d == m => format!(":profile={d}"),
            Some((d, m)) => format!(":profile={d}/{m}"),
            None => String::new(),
        }
    }

    fn mkfs_table(&self) -> Option<&'static [OptSpec]> {
        Some(BTRFS_MKFS)
    }

    fn mount_table(&self) -> Option<&'static [OptSpec]> {
        Some(BTRFS_MOUNT)
    }

    fn tools(&self, _cfg: &FsConfig) -> Vec<(&'static str, &'static str)> {
        vec![("mkfs.btrfs", "btrfs-progs")]
    }

    fn mkfs(&self, cfg: &FsConfig, devices: &[PathBuf]) -> Option<Cmd> {
        let mut cmd = super::mkfs_cmd("mkfs.btrfs", "btrfs-progs").args(["-f", "-q"]);
        if let Some((d, m)) = &cfg.btrfs_profile {
            cmd = cmd.args(["-d", d, "-m", m]);
        }
        Some(cmd.args(&cfg.mkfs_opts).args(devices))
    }

    fn make(&self, b: &mut Build<'_>) -> Result<Made> {
        super::make_on_devices(self, b)
    }

    fn tool_version(&self, _cfg: &FsConfig) -> Option<String> {
        super::tool_version("mkfs.btrfs", "--version", "btrfs-progs")
    }

    fn integrity(&self) -> Result<&dyn FsIntegrity, Untestable> {
        Ok(self)
    }
}

impl FsIntegrity for Btrfs {
    fn data_copies(&self, cfg: &FsConfig) -> usize {
        match cfg.btrfs_profile.as_ref().map(|(d, _)| d.as_str()) {
            Some("raid1") | Some("raid10") | Some("dup") => 2,
            Some("raid1c3") => 3,
            Some("raid1c4") => 4,
            _ => 1,
        }
    }

    fn checksums_data(&self) -> bool {
        true
    }

    fn metadata_targets(&self) -> &'static [Target] {
        &[Target::Inode]
    }

    fn metadata_method(&self) -> &'static str {
        "btrfs inspect-internal dump-tree + btrfs-map-logical"
    }

    fn locate_metadata(
        &self,
        _target: Target,
        subject: &Subject,
        tb: &Testbed,
    ) -> Result<MetaBlock, MetaError> {
        let mut log = String::new();
        let devices = tb.loop_devices();
        let dev = devices.first().ok_or(MetaError::NoDevice { tool: "btrfs inspect-internal" })?;
        let run = super::run_logged;
        let sup =
            run(Cmd::new("btrfs").args(["inspect-internal", "dump-super"]).arg(dev), &mut log)?;
        let nodesize = sup
            .lines()
            .find_map(|l| l.trim().strip_prefix("nodesize")?.trim().parse::<u64>().ok())
            .ok_or_else(|| MetaError::Unlocated(format!("dump-super shows no nodesize:\n{log}")))?;
        let tree =
            Cmd::new("btrfs").args(["inspect-internal", "dump-tree", "-t", "5"]).args(&devices);
        let line = tree.cmdline();
        let out = tree.output()?;
        let leaf = leaf_of_inode(&out.stdout, subject.ino).ok_or_else(|| {
            MetaError::Unlocated(format!("no leaf holds inode {} in `{line}`", subject.ino))
        })?;
        log.push_str(&format!(
            "$ {line}\n(leaf {leaf} holds key ({} INODE_ITEM 0))\n",
            subject.ino
        ));
        let map =
            run(Cmd::new("btrfs-map-logical").arg("-l").arg(leaf.to_string()).arg(dev), &mut log)?;
        let copies: Vec<BlockCopy> = parse_map_logical(&map, leaf, &devices)
            .into_iter()
            .map(|(i, p)| super::copy_on(tb, i, p))
            .collect::<Result<_, _>>()?;
        if copies.is_empty() {
            return Err(MetaError::Unlocated(format!("btrfs-map-logical named no copy:\n{log}")));
        }
        Ok(MetaBlock { copies, len: nodesize as usize, tool_output: log })
    }

    fn map_fiemap(&self, physical: u64, devices: &[PathBuf], loc: &mut ToolLocation) {
        if devices.is_empty() {
            return;
        }
        loc.method.push_str(" + btrfs-map-logical");
        let cmd =
            Cmd::new("btrfs-map-logical").arg("-l").arg(physical.to_string()).arg(&devices[0]);
        match cmd.output() {
            Ok(o) => {
                loc.copies = parse_map_logical(&o.stdout, physical, devices);
                loc.output.push_str(&format!("\n$ {}\n{}", o.cmdline, o.text()));
            }
            Err(e) => loc.output.push_str(&format!("\n{e}")),
        }
    }

    fn check(&self, tb: &mut Testbed, run: &mut CheckRun) -> Result<()> {
        let mnt = tb.mountpoint().to_path_buf();
        let o = Cmd::new("btrfs")
            .args(["scrub", "start", "-B"])
            .arg(&mnt)
            .interruptible()
            .output()
            .map_err(|e| TestbedError::cmd("btrfs scrub", e))?;
        super::add_output(run, &o);
        run.status = o.status.clone();
        run.errors_reported = !o.success() || scrub_found_errors(&o.text());
        let s = Cmd::new("btrfs")
            .args(["device", "stats"])
            .arg(&mnt)
            .output()
            .map_err(|e| TestbedError::cmd("btrfs device stats", e))?;
        super::add_output(run, &s);
        run.errors_reported |= stats_nonzero(&s.stdout);
        Ok(())
    }

    fn telling_line(&self, line: &str) -> bool {
        let t = line.trim();
        t.starts_with("Error summary:")
            || ((t.starts_with("Corrected:") || t.starts_with("Uncorrectable:"))
                && !t.ends_with(" 0"))
            || (t.starts_with('[') && !t.ends_with(" 0"))
    }
}

/// btrfs-progs 6.x prints "Error summary:    no errors found", or the error kinds and counts.
fn scrub_found_errors(out: &str) -> bool {
    out.lines().any(|l| {
        let l = l.trim();
        (l.starts_with("Error summary:") && !l.contains("no errors found"))
            || ((l.starts_with("Corrected:") || l.starts_with("Uncorrectable:"))
                && l.split_whitespace().nth(1).is_some_and(|n| n != "0"))
    })
}

/// `[/dev/loop3].corruption_errs   1`: any counter not 0.
fn stats_nonzero(out: &str) -> bool {
    out.lines().any(|l| l.split_whitespace().nth(1).is_some_and(|n| n != "0"))
}

/// Parse `mirror 1 logical L physical P device /dev/loopN` lines for logical address `logical`
/// (the tool also lists the blocks after it, up to its default length).
pub fn parse_map_logical(out: &str, logical: u64, devices: &[PathBuf]) -> Vec<(usize, u64)> {
    let mut v = Vec::new();
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let l =
            w.iter().position(|x| *x == "logical").and_then(|i| w.get(i + 1)?.parse::<u64>().ok());
        if l != Some(logical) {
            continue;
        }
        let phys = w.iter().position(|x| *x == "physical").and_then(|i| w.get(i + 1)?.parse().ok());
        let dev = w.iter().position(|x| *x == "device").and_then(|i| w.get(i + 1));
        if let (Some(p), Some(d)) = (phys, dev) {
            if let Some(idx) = devices.iter().position(|x| x == Path::new(d)) {
                v.push((idx, p));
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkfs_line_with_a_profile() {
        let c = FsConfig::parse("btrfs:profile=raid1").unwrap();
        let two = vec![PathBuf::from("/dev/loop3"), PathBuf::from("/dev/loop4")];
        assert_eq!(
            BTRFS.mkfs(&c, &two).unwrap().cmdline(),
            "mkfs.btrfs -f -q -d raid1 -m raid1 /dev/loop3 /dev/loop4"
        );
    }

    #[test]
    fn scrub_summaries() {
        assert!(!scrub_found_errors("Status: finished\nError summary:    no errors found\n"));
        assert!(scrub_found_errors(
            "Error summary:    csum=1\n  Corrected:      1\n  Uncorrectable:  0\n"
        ));
        assert!(stats_nonzero("[/dev/loop3].corruption_errs   1\n"));
        assert!(!stats_nonzero("[/dev/loop3].corruption_errs   0\n[/dev/loop3].write_io_errs 0\n"));
        let b = "Error summary:    csum=1\n  Corrected:      1\n  Uncorrectable:  0\n[/dev/loop1].corruption_errs  1\n[/dev/loop1].read_io_errs 0\n";
        assert_eq!(
            super::super::telling_lines(&BTRFS, b),
            "Error summary: csum=1 | Corrected: 1 | [/dev/loop1].corruption_errs 1"
        );
    }

    #[test]
    fn map_logical_lines() {
        let out = "mirror 1 logical 13631488 physical 22020096 device /dev/loop4\n\
                   mirror 1 logical 13643776 physical 22032384 device /dev/loop4\n\
                   mirror 2 logical 13631488 physical 1048576 device /dev/loop5\n";
        let devs = vec![PathBuf::from("/dev/loop4"), PathBuf::from("/dev/loop5")];
        assert_eq!(parse_map_logical(out, 13631488, &devs), vec![(0, 22020096), (1, 1048576)]);
    }

    #[test]
    fn leaves_of_inodes() {
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
