//! overlay: an overlayfs over a fresh backing filesystem, the way container storage stacks an
//! image's layers (`overlay:on=xfs`, the default, or `on=ext2|ext3|ext4|btrfs`): the question
//! "overlay on xfs, or plain xfs?".
//!
//! | what | how |
//! | --- | --- |
//! | made | the backing filesystem by its own plug-in on the testbed's device (`mkfs=` options are the backing's mkfs options, checked against its allow-list), mounted at `tb-PID-N/backing/`; on it `lower/`, `upper/` and `work/`; in `lower/` the layer fsbench lays out before mounting: 4 directories `d0`..`d3` of 8 files `f0`..`f7` of 4 KiB each (128 KiB), read-only (files 0444, directories 0555) |
//! | mounted | `mount -t overlay overlay -o lowerdir=LOWER,upperdir=UPPER,workdir=WORK[,OPTIONS] MNT` (`mount=` options are overlay's own: `redirect_dir`, `index`, `metacopy`, `xino`, ...) |
//! | evicted | as on the backing filesystem: fsync + `POSIX_FADV_DONTNEED` per file (overlayfs passes it to the upper file) + `drop_caches`; with `--remount-to-evict` the overlay is unmounted and mounted again |
//! | integrity | not tested: the blocks are the backing filesystem's (test that one) |
//!
//! Both mounts are recorded resources of the testbed (the overlay's source is `overlay`, its
//! mount point the testbed's `mnt/`), so teardown, `fsbench testbed cleanup` after a crash and
//! taking the testbed offline go overlay first, then the backing filesystem.

use super::{Build, Filesystem, Fs, FsIntegrity, Made, Untestable};
use crate::testbed::config::{Axis, ConfigError, FsConfig, Given};
use crate::testbed::error::{Result, TestbedError};
use crate::testbed::fsopts::{self, o, Kind::*, OptSpec, ONOFF};
use crate::testbed::mount::MountSpec;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// overlayfs over a backing filesystem.
pub struct Overlay;

/// The registered overlay.
pub static OVERLAY: Overlay = Overlay;

/// The backing filesystem when `on=` is not given.
const DEFAULT_ON: &str = "xfs";
/// The lower layer: directories, files per directory, bytes per file.
const LOWER: (usize, usize, usize) = (4, 8, 4096);

/// Whether `fs` can be under an overlay here: a filesystem made with mkfs on a block device.
fn can_back(fs: Fs) -> bool {
    fs.needs_devices() && fs.mkfs(&FsConfig::new(fs), &[]).is_some()
}

/// The backing filesystem's configuration: `on=`'s filesystem with the overlay's mkfs options
/// and I/O scheduler.
fn backing(cfg: &FsConfig) -> Result<FsConfig, ConfigError> {
    let on = cfg.options.iter().find(|(k, _)| k == "on").map_or(DEFAULT_ON, |(_, v)| v.as_str());
    let fs: Fs = on.parse()?;
    if !can_back(fs) {
        let valid: Vec<&str> = super::all().filter(|f| can_back(*f)).map(|f| f.name()).collect();
        return Err(ConfigError::Invalid(format!(
            "overlay on={on}: the backing filesystem is one made with mkfs on a device; valid: {}",
            valid.join(", ")
        )));
    }
    let mut b = FsConfig::new(fs);
    b.mkfs_opts = cfg.mkfs_opts.clone();
    b.io_scheduler = cfg.io_scheduler.clone();
    b.label = format!("{} under {}", fs.name(), cfg.label);
    Ok(b)
}

impl Filesystem for Overlay {
    fn name(&self) -> &'static str {
        "overlay"
    }

    fn min_device_bytes(&self, cfg: &FsConfig) -> u64 {
        backing(cfg).map_or(1 << 20, |b| b.kind.min_device_bytes(&b))
    }

    fn own_keys(&self) -> &'static [Axis] {
        &[Axis {
            key: "on",
            what: "the filesystem under the overlay's layers (default xfs)",
            example: "overlay:on=ext4",
        }]
    }

    fn configure(&self, given: &mut Given, cfg: &mut FsConfig) -> Result<(), ConfigError> {
        super::one_device(self.name(), given)?;
        let mut on = DEFAULT_ON.to_string();
        given.keys.retain(|(k, v)| {
            let mine = k == "on";
            if mine {
                on = v.clone();
            }
            !mine
        });
        cfg.options = vec![("on".into(), on)];
        let b = backing(cfg)?;
        fsopts::check_mkfs(b.kind, &b.mkfs_opts)
    }

    fn mount_table(&self) -> Option<&'static [OptSpec]> {
        Some(OVERLAY_MOUNT)
    }

    fn tools(&self, cfg: &FsConfig) -> Vec<(&'static str, &'static str)> {
        backing(cfg).map(|b| b.kind.tools(&b)).unwrap_or_default()
    }

    fn make(&self, b: &mut Build<'_>) -> Result<Made> {
        let under_cfg = backing(b.cfg).map_err(TestbedError::Config)?;
        let under = b.dir("backing")?;
        let made = under_cfg.kind.make(&mut b.for_config(&under_cfg, under.clone()))?;
        let (lower, upper, work) = (under.join("lower"), under.join("upper"), under.join("work"));
        for d in [&lower, &upper, &work] {
            // Usable as overlay mount options: no `,` (option separator) or `:` (layer
            // separator) in the paths.
            if d.to_string_lossy().contains([',', ':', '\\']) {
                return Err(TestbedError::Check(format!(
                    "overlay: {} has a `,`, `:` or `\\`, which overlay's mount options cannot carry; choose another --workdir",
                    d.display()
                )));
            }
            std::fs::create_dir(d).map_err(|e| TestbedError::io("creating", d, e))?;
        }
        lay_out_lower(&lower)?;
        let mut options = format!(
            "lowerdir={},upperdir={},workdir={}",
            lower.display(),
            upper.display(),
            work.display()
        );
        if let Some(x) = b.cfg.mount_opts_joined() {
            options.push(',');
            options.push_str(&x);
        }
        let spec = MountSpec {
            source: "overlay".into(),
            target: b.mountpoint.clone(),
            fstype: "overlay".into(),
            options: Some(options),
        };
        b.mount(spec.clone(), &b.cfg.mount_opts.clone())?;
        let (dirs, files, bytes) = LOWER;
        b.backing = format!(
            "overlay (lower layer of {dirs} directories × {files} files of {} KiB laid out by fsbench; upper and work directories) on {} at {} on {}",
            bytes >> 10,
            under_cfg.kind,
            under.display(),
            b.backing
        );
        let cache = crate::testbed::evict::KernelFsCache {
            remount: b.opts.remount_to_evict.then_some(spec),
            drop_all: b.opts.drop_caches,
        };
        Ok(Made { cache: Box::new(cache), ..made })
    }

    fn tool_version(&self, cfg: &FsConfig) -> Option<String> {
        backing(cfg).ok().and_then(|b| b.kind.tool_version(&b))
    }

    fn integrity(&self) -> Result<&dyn FsIntegrity, Untestable> {
        Err(Untestable {
            fs: "overlay",
            why: "keeps its blocks on its backing filesystem",
            instead: "run fsbench integrity on that one (e.g. xfs)",
        })
    }
}

/// The lower layer: [`LOWER`]'s directories of files, each file's bytes its own (its path
/// repeated), then made read-only.
fn lay_out_lower(lower: &Path) -> Result<()> {
    let (dirs, files, bytes) = LOWER;
    let io = |what: &'static str, p: &Path, e| TestbedError::io(what, p, e);
    for d in 0..dirs {
        let dir = lower.join(format!("d{d}"));
        std::fs::create_dir(&dir).map_err(|e| io("creating", &dir, e))?;
        for f in 0..files {
            let file = dir.join(format!("f{f}"));
            let line = format!("fsbench overlay lower layer d{d}/f{f}\n");
            let text: Vec<u8> = line.bytes().cycle().take(bytes).collect();
            std::fs::write(&file, text).map_err(|e| io("writing", &file, e))?;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444))
                .map_err(|e| io("making read-only", &file, e))?;
        }
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555))
            .map_err(|e| io("making read-only", &dir, e))?;
    }
    Ok(())
}

/// overlayfs mount options (Documentation/filesystems/overlayfs.rst). Not here: `lowerdir`,
/// `upperdir`, `workdir`, `lowerdir+`, `datadir+` (fsbench's own: they name paths).
pub const OVERLAY_MOUNT: &[OptSpec] = &[
    o("redirect_dir", Words(&["on", "off", "follow", "nofollow"]), "renamed directories"),
    o("index", Words(ONOFF), "inode index (hard links of copied-up files)"),
    o("metacopy", Words(ONOFF), "copy up metadata only"),
    o("xino", Words(&["on", "off", "auto"]), "unique inode numbers across layers"),
    o("nfs_export", Words(ONOFF), ""),
    o("uuid", Words(&["on", "off", "null", "auto"]), ""),
    o("verity", Words(&["on", "off", "require"]), "fs-verity of metacopy files"),
    o("volatile", Flag, "no syncs to the upper layer"),
    o("userxattr", Flag, "user.overlay.* attributes"),
    o("default_permissions", Flag, ""),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_names_its_backing_and_checks_options_against_it() {
        let c = FsConfig::parse("overlay").unwrap();
        assert_eq!(c.short_form(), "overlay:on=xfs");
        assert_eq!(c.devices, 1);
        assert_eq!(backing(&c).unwrap().kind, "xfs");
        let c = FsConfig::parse("overlay:on=ext4:mkfs=-b 4096:mount=xino=off").unwrap();
        assert_eq!(c.short_form(), "overlay:mkfs=-b 4096:mount=xino=off:on=ext4");
        assert_eq!(c.kind.min_device_bytes(&c), 16 << 20);
        let d = FsConfig::parse("overlay").unwrap();
        assert_eq!(d.kind.min_device_bytes(&d), 300 << 20, "xfs's minimum");
        let back = FsConfig::from_toml(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let t = FsConfig::from_toml("kind = \"overlay\"\noptions = { on = \"btrfs\" }\n").unwrap();
        assert_eq!(backing(&t).unwrap().kind, "btrfs");
        for (s, want) in [
            ("overlay:on=zfs", "valid: ext2, ext3, ext4, xfs, btrfs"),
            ("overlay:on=tmpfs", "made with mkfs"),
            ("overlay:on=overlay", "made with mkfs"),
            ("overlay:on=fat", "unknown filesystem"),
            ("overlay:mkfs=-l logdev=/dev/loop9", "path"),
            ("overlay:on=ext4:mkfs=-l size=64m", "ext4 mkfs option"),
            ("overlay:mount=upperdir=/etc", "not a mount option fsbench passes for overlay"),
            ("overlay:devices=2", "lives on one device"),
            ("overlay:layout=mirror", "valid: label, mkfs, mount, devices, sched, on"),
        ] {
            let e = FsConfig::parse(s).unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
        }
        assert!(OVERLAY.integrity().is_err());
        assert_eq!(OVERLAY.tools(&c), [("mkfs.ext4", "e2fsprogs")]);
    }

    #[test]
    fn the_lower_layer_is_laid_out_read_only() {
        let tmp = tempfile::tempdir().unwrap();
        lay_out_lower(tmp.path()).unwrap();
        let (dirs, files, bytes) = LOWER;
        for d in 0..dirs {
            let dir = tmp.path().join(format!("d{d}"));
            assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o555);
            for f in 0..files {
                let m = std::fs::metadata(dir.join(format!("f{f}"))).unwrap();
                assert_eq!((m.len(), m.permissions().mode() & 0o777), (bytes as u64, 0o444));
            }
        }
        let text = std::fs::read_to_string(tmp.path().join("d3/f7")).unwrap();
        assert!(text.starts_with("fsbench overlay lower layer d3/f7\n"));
        for d in 0..dirs {
            let dir = tmp.path().join(format!("d{d}"));
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}
