//! Filesystems as plug-ins: everything that differs between one filesystem and another lives
//! behind [`Filesystem`] (and [`FsIntegrity`] for `fsbench integrity`), one file per
//! filesystem, listed once in the registry below (`registry!`: one line per plug-in file). The rest of the testbed layer (images,
//! loop devices, records, guards, cleanup, the environment record) is the same for all of them
//! and never asks which filesystem it is building.
//!
//! A plug-in says:
//!
//! - its name and what a configuration of it may say ([`Filesystem::configure`]: its own keys,
//!   device counts; [`Filesystem::mkfs_table`] and [`Filesystem::mount_table`], the allow-lists
//!   of options checked by [`super::fsopts`]);
//! - what it needs installed ([`Filesystem::tools`], with the Debian package of each);
//! - how it is made and mounted on the devices fsbench made ([`Filesystem::make`], which owns
//!   what it creates through [`Build`]'s guards and returns the [`CacheControl`] the engine
//!   uses to make a phase uncached);
//! - its tool's version and the daemon it runs on, if any;
//! - for `fsbench integrity`: its checker or scrub, where its metadata blocks are, how many
//!   copies of data it keeps ([`Filesystem::integrity`]).
//!
//! Adding a filesystem is one file here and one line in the registry.

use super::config::{ConfigError, FsConfig, Given};
use super::error::{Result, TestbedError};
use super::fsopts::OptSpec;
use super::image::WorkDir;
use super::mount::{Mount, MountSpec};
use super::{Owned, StateDir, Testbed, TestbedOptions};
use crate::engine::CacheControl;
use crate::model::integrity::{BlockCopy, CheckRun, MetaBlock, Subject, Target, ToolLocation};
use crate::model::testbed::FsName;
use crate::sys::cmd::Cmd;
use std::path::{Path, PathBuf};

mod error;
pub use error::{MetaError, Untestable};

/// Declares the plug-in modules and the one table that lists them, in the order shown in
/// messages (`unknown filesystem ...; valid: ...`).
macro_rules! registry {
    ($($module:ident: [$($fs:ident),+];)+) => {
        $(mod $module;)+
        /// Every filesystem fsbench can build.
        static FILESYSTEMS: &[&dyn Filesystem] = &[$($(&$module::$fs,)+)+];
    };
}

registry! {
    ext: [EXT2, EXT3, EXT4];
    xfs: [XFS];
    btrfs: [BTRFS];
    zfs: [ZFS];
    tmpfs: [TMPFS];
    overlay: [OVERLAY];
}

/// One filesystem fsbench can build a testbed of.
pub trait Filesystem: Sync {
    /// The lowercase name used in the CLI, TOML and output (`ext4`).
    fn name(&self) -> &'static str;

    /// Whether the filesystem lives on block devices (images or a real device).
    fn needs_devices(&self) -> bool {
        true
    }

    /// Smallest device (image) size in bytes this filesystem accepts, with a little room.
    fn min_device_bytes(&self, cfg: &FsConfig) -> u64;

    /// Keys of its own in the short form, besides the common ones
    /// ([`super::config::COMMON_AXES`]), each with what it sets and an example: the parser
    /// accepts exactly these, the message that lists valid keys and `compare --help` show them;
    /// `*` takes any other key (zfs: every other key is a dataset property).
    fn own_keys(&self) -> &'static [super::config::Axis] {
        &[]
    }

    /// Take what is this filesystem's from `given` (its keys, its TOML table, the device count)
    /// into `cfg`, checking it. What is left in `given` is refused by the caller. Called after
    /// the common keys and the mkfs and mount allow-lists were checked.
    fn configure(&self, given: &mut Given, cfg: &mut FsConfig) -> Result<(), ConfigError>;

    /// What the serialised (TOML, JSON) form says beyond the common keys: the inverse of
    /// [`Filesystem::configure`].
    fn given(&self, cfg: &FsConfig) -> Given {
        Given {
            devices: self.needs_devices().then_some(cfg.devices),
            keys: cfg.options.clone(),
            ..Given::default()
        }
    }

    /// The part of the canonical short form after `mount=` (`:layout=mirror`).
    fn short_form_mid(&self, _cfg: &FsConfig) -> String {
        String::new()
    }

    /// The part of the canonical short form at its end: its own keys (`:on=xfs`).
    fn short_form_tail(&self, cfg: &FsConfig) -> String {
        cfg.options.iter().map(|(k, v)| format!(":{k}={v}")).collect()
    }

    /// The allow-list of mkfs arguments (`None`: no mkfs of its own, nothing is checked here).
    fn mkfs_table(&self) -> Option<&'static [OptSpec]> {
        None
    }

    /// The allow-list of mount options besides [`super::fsopts::VFS_MOUNT`] (`None`: not
    /// mounted with `mount -o`, nothing is checked here).
    fn mount_table(&self) -> Option<&'static [OptSpec]> {
        None
    }

    /// Programs making and mounting `cfg` needs, with the Debian package of each (besides
    /// `mount`, `umount` and `losetup`, which every testbed needs).
    fn tools(&self, cfg: &FsConfig) -> Vec<(&'static str, &'static str)>;

    /// The mkfs command over `devices`, for filesystems made with one.
    fn mkfs(&self, _cfg: &FsConfig, _devices: &[PathBuf]) -> Option<Cmd> {
        None
    }

    /// Make the filesystem on `b.devices` and mount it at `b.mountpoint`. Every resource is
    /// created through `b` (so it is recorded and guarded); on error, what exists is torn down
    /// by the caller.
    fn make(&self, b: &mut Build<'_>) -> Result<Made>;

    /// The tool that makes the filesystem and its version.
    fn tool_version(&self, cfg: &FsConfig) -> Option<String>;

    /// Command name of the daemon that serves the filesystem (`zfs-fuse`), whose memory the
    /// engine observes.
    fn daemon(&self) -> Option<&'static str> {
        None
    }

    /// Whether that daemon is still running (`None`: there is none).
    fn daemon_alive(&self) -> Option<bool> {
        None
    }

    /// Start (or adopt) the filesystem's daemon for a series of testbeds and keep it until the
    /// returned value is dropped (zfs-fuse: one daemon for all cases of a configuration).
    fn hold_daemon(&self, _state: &StateDir) -> Result<Option<Held>> {
        Ok(None)
    }

    /// What `fsbench integrity` needs of this filesystem, or why it cannot test it.
    fn integrity(&self) -> Result<&dyn FsIntegrity, Untestable>;
}

/// Something a plug-in keeps alive for its caller (a daemon).
pub type Held = Box<dyn std::any::Any>;

/// What `fsbench integrity` needs from a filesystem: how it keeps data, its checker, where its
/// metadata blocks are.
pub trait FsIntegrity: Sync {
    /// How many copies of a data block `cfg` keeps (mirrors, DUP, RAID1).
    fn data_copies(&self, _cfg: &FsConfig) -> usize {
        1
    }

    /// Whether the filesystem checksums data, so that a damaged block is detected (or repaired
    /// from a good copy) rather than returned.
    fn checksums_data(&self) -> bool {
        false
    }

    /// Whether `cfg`'s data is protected by parity in records striped over the devices (zfs
    /// raidz): a data block is then picked whole inside one record.
    fn parity_protected(&self, _cfg: &FsConfig) -> bool {
        false
    }

    /// Whether the parity of a data block's row can be found and damaged on `cfg` (zfs raidz1
    /// on three devices).
    fn parity_target(&self, _cfg: &FsConfig) -> bool {
        false
    }

    /// Metadata targets located on this filesystem (`--metadata`).
    fn metadata_targets(&self) -> &'static [Target] {
        &[]
    }

    /// Name of the tools that locate metadata (`xfs_db`), for the evidence.
    fn metadata_method(&self) -> &'static str {
        ""
    }

    /// Locate `target` for `subject` on the offline testbed `tb`.
    fn locate_metadata(
        &self,
        target: Target,
        _subject: &Subject,
        tb: &Testbed,
    ) -> Result<MetaBlock, MetaError> {
        Err(MetaError::NotLocated { target: target.name(), fs: tb.config().kind.name() })
    }

    /// Turn FIEMAP's physical address of a block into device copies (`loc.copies`), while the
    /// filesystem is mounted; `devices` are the testbed's loop devices in order. Default: a
    /// device offset on the only device.
    fn map_fiemap(&self, physical: u64, _devices: &[PathBuf], loc: &mut ToolLocation) {
        loc.copies.push((0, physical));
    }

    /// Run the filesystem's scrub or checker on `tb` (online before and after) into `run`.
    fn check(&self, tb: &mut Testbed, run: &mut CheckRun) -> Result<()>;

    /// Whether a line of the checker's output says what was found (error counts, non-zero
    /// counters, findings). Default: words of a checker that found something.
    fn telling_line(&self, line: &str) -> bool {
        let l = line.trim().to_ascii_lowercase();
        ["corrupt", "error", "bad ", "invalid", "would ", "salvage", "checksum"]
            .iter()
            .any(|p| l.contains(p))
    }
}

/// A handle on a registered filesystem (its entry in the registry: one pointer): copied
/// freely, compared, printed and serialised by name; dereferences to its [`Filesystem`].
#[derive(Clone, Copy)]
pub struct Fs(&'static &'static dyn Filesystem);

impl Fs {
    /// The filesystem called `name`, if one is registered.
    pub fn named(name: &str) -> Option<Fs> {
        all().find(|f| f.name() == name)
    }

    /// What `fsbench integrity` needs of this filesystem, or why it cannot test it (the
    /// plug-in's [`Filesystem::integrity`], borrowed for as long as the registry lives).
    pub fn integrity(self) -> Result<&'static dyn FsIntegrity, Untestable> {
        self.0.integrity()
    }

    /// The filesystem's name as a result records it.
    pub fn fs_name(self) -> FsName {
        FsName(self.0.name().to_string())
    }
}

impl std::ops::Deref for Fs {
    type Target = dyn Filesystem;
    fn deref(&self) -> &(dyn Filesystem + 'static) {
        *self.0
    }
}

impl PartialEq for Fs {
    fn eq(&self, other: &Fs) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Fs {}

impl std::hash::Hash for Fs {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name().hash(h)
    }
}

impl std::fmt::Debug for Fs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for Fs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Fs {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Fs, ConfigError> {
        Fs::named(s).ok_or_else(|| ConfigError::UnknownKind(s.to_string()))
    }
}

impl serde::Serialize for Fs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Fs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Fs, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl From<Fs> for FsName {
    fn from(f: Fs) -> FsName {
        f.fs_name()
    }
}

impl PartialEq<Fs> for FsName {
    fn eq(&self, other: &Fs) -> bool {
        self.as_str() == other.name()
    }
}

impl PartialEq<FsName> for Fs {
    fn eq(&self, other: &FsName) -> bool {
        self.name() == other.as_str()
    }
}

impl PartialEq<&str> for Fs {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// Every registered filesystem, in the registry's order.
pub fn all() -> impl Iterator<Item = Fs> {
    FILESYSTEMS.iter().map(Fs)
}

/// The registered names, comma-separated, for messages.
pub fn names() -> String {
    all().map(|f| f.name()).collect::<Vec<_>>().join(", ")
}

/// What [`Filesystem::make`] returns besides the resources it pushed into [`Build`].
pub struct Made {
    /// The mkfs or `zpool create` command line run (none for tmpfs).
    pub mkfs_cmdline: Option<String>,
    /// Commands run after it (`zfs set`).
    pub post_create_cmdlines: Vec<String>,
    /// How the engine makes a phase uncached on this filesystem.
    pub cache: Box<dyn CacheControl>,
    /// Filesystem properties in effect (zfs), for the environment record.
    pub zfs_properties: Vec<(String, String)>,
}

impl Made {
    /// A filesystem made by `mkfs_cmdline` (if any) whose cache is `cache`.
    pub fn new(mkfs_cmdline: Option<String>, cache: Box<dyn CacheControl>) -> Made {
        Made { mkfs_cmdline, post_create_cmdlines: Vec::new(), cache, zfs_properties: Vec::new() }
    }
}

/// Where and with what a plug-in makes its filesystem: the configuration, the devices fsbench
/// made (or the real one), the mount point, and the testbed's guards, into which every
/// resource the plug-in creates goes (so it is recorded, torn down in reverse order, and found
/// by `fsbench testbed cleanup` after a crash).
pub struct Build<'a> {
    /// The configuration being built.
    pub cfg: &'a FsConfig,
    /// The testbed options (`--size`, `--remount-to-evict`, ...).
    pub opts: &'a TestbedOptions,
    /// Where the resources are recorded.
    pub state: &'a StateDir,
    /// The testbed's directory (`WORKDIR/tb-PID-N`).
    pub base: &'a Path,
    /// Where the filesystem is to be mounted.
    pub mountpoint: PathBuf,
    /// The block devices (loop devices over the images, or the real device), in order.
    pub devices: &'a [PathBuf],
    /// The testbed's sequence number in this process (`tb-PID-N`'s N).
    pub seq: usize,
    /// How the filesystem is backed, in words (the images and loop devices); a plug-in may
    /// say more.
    pub backing: String,
    /// Size of each device (or of the memory filesystem) in bytes; a plug-in may correct it
    /// from what is in effect.
    pub device_size_bytes: u64,
    guards: &'a mut Vec<Owned>,
}

impl<'a> Build<'a> {
    pub(super) fn new(
        cfg: &'a FsConfig,
        opts: &'a TestbedOptions,
        state: &'a StateDir,
        base: &'a Path,
        mountpoint: PathBuf,
        devices: &'a [PathBuf],
        guards: &'a mut Vec<Owned>,
    ) -> Build<'a> {
        Build {
            cfg,
            opts,
            state,
            base,
            mountpoint,
            devices,
            seq: 0,
            backing: String::new(),
            device_size_bytes: opts.size_bytes,
            guards,
        }
    }

    /// The same build for another configuration and mount point (a filesystem made under
    /// another one, such as overlay's backing filesystem). Resources still go to this
    /// testbed's guards.
    pub fn for_config<'b>(&'b mut self, cfg: &'b FsConfig, mountpoint: PathBuf) -> Build<'b> {
        Build {
            cfg,
            opts: self.opts,
            state: self.state,
            base: self.base,
            mountpoint,
            devices: self.devices,
            seq: self.seq,
            backing: self.backing.clone(),
            device_size_bytes: self.device_size_bytes,
            guards: &mut *self.guards,
        }
    }

    /// Make directory `name` in the testbed's directory (recorded, marked, removed at
    /// teardown).
    pub fn dir(&mut self, name: &str) -> Result<PathBuf> {
        let d = WorkDir::create(&self.base.join(name), self.state)?;
        let path = d.path().to_path_buf();
        self.guards.push(Owned::Dir(d));
        Ok(path)
    }

    /// Record and mount `spec` (unmounted at teardown). A failure with `user_options` given is
    /// reported as those options rejected.
    pub fn mount(&mut self, spec: MountSpec, user_options: &[String]) -> Result<()> {
        let m = Mount::create(spec, self.state)
            .map_err(|e| super::rejected("mount", user_options, e))?;
        self.guards.push(Owned::Mount(m));
        Ok(())
    }

    /// Keep `owned` with the testbed's other resources.
    pub(super) fn own(&mut self, owned: Owned) {
        self.guards.push(owned);
    }

    /// Run `cmd`, the configuration's mkfs; a failure is reported as the user's mkfs options
    /// rejected, if there were any.
    pub fn run_mkfs(&self, cmd: &Cmd) -> Result<()> {
        cmd.run().map(drop).map_err(|e| {
            super::rejected(
                "mkfs",
                &self.cfg.mkfs_opts,
                TestbedError::cmd(format!("mkfs for {}", self.cfg.label), e),
            )
        })
    }
}

/// The way of every kernel filesystem on block devices: its mkfs over the devices, then
/// `mount -t NAME DEV MNT` with the configuration's options (and, over several devices, every
/// member named with `device=`, as there is no udev here to register them). Eviction is the
/// page cache's, optionally followed by a remount (`--remount-to-evict`).
pub(super) fn make_on_devices(fs: &dyn Filesystem, b: &mut Build<'_>) -> Result<Made> {
    let cmd = fs.mkfs(b.cfg, b.devices).ok_or_else(|| {
        TestbedError::Check(format!("{} has no mkfs to make it on a device", fs.name()))
    })?;
    let cmdline = cmd.cmdline();
    b.run_mkfs(&cmd)?;
    let first = b
        .devices
        .first()
        .ok_or_else(|| TestbedError::Check(format!("{} needs a device", fs.name())))?;
    let mut options = b.cfg.mount_opts.clone();
    if b.devices.len() > 1 {
        options.extend(b.devices.iter().map(|d| format!("device={}", d.display())));
    }
    let spec = MountSpec {
        source: first.display().to_string(),
        target: b.mountpoint.clone(),
        fstype: fs.name().to_string(),
        options: (!options.is_empty()).then(|| options.join(",")),
    };
    b.mount(spec.clone(), &b.cfg.mount_opts.clone())?;
    let cache = super::evict::KernelFsCache {
        remount: b.opts.remount_to_evict.then_some(spec),
        drop_all: b.opts.drop_caches,
    };
    Ok(Made::new(Some(cmdline), Box::new(cache)))
}

/// The version of a tool: the first line `program flag` prints, else dpkg's version of
/// `package` (mke2fs prints its version on stderr; zfs-fuse has no version flag: pass an empty
/// `program`).
pub(super) fn tool_version(program: &str, flag: &str, package: &str) -> Option<String> {
    if !program.is_empty() {
        if let Ok(out) = Cmd::new(program).arg(flag).run() {
            if let Some(line) = out.lines().map(str::trim).find(|l| !l.is_empty()) {
                return Some(line.to_string());
            }
        }
    }
    Cmd::new("dpkg-query")
        .args(["-W", "-f", "${Version}", package])
        .run()
        .ok()
        .map(|v| format!("{package} {} (dpkg)", v.trim()))
}

/// A filesystem on one device: a `devices=` other than 1 is refused.
pub(super) fn one_device(name: &str, given: &mut Given) -> Result<(), ConfigError> {
    if given.devices.take().is_some_and(|n| n != 1) {
        return Err(ConfigError::Invalid(format!(
            "{name} lives on one device; multi-device layouts are zfs and btrfs"
        )));
    }
    Ok(())
}

/// `program` as an interruptible mkfs (Ctrl-C during mkfs stops fsbench at once; the device is
/// torn down after), with the package to install when it is missing.
pub(super) fn mkfs_cmd(program: &str, package: &str) -> Cmd {
    Cmd::new(program).hint(format!("install the Debian package {package}")).interruptible()
}

/// Copy `device` of the testbed at `offset_bytes` (its image file).
pub(super) fn copy_on(
    tb: &Testbed,
    device: usize,
    offset_bytes: u64,
) -> Result<BlockCopy, MetaError> {
    let image = tb.image_paths().get(device).cloned().ok_or(MetaError::NoImage { device })?;
    Ok(BlockCopy { device, image, offset_bytes })
}

/// The telling lines of a checker's output (see [`FsIntegrity::telling_line`]), at most 3,
/// whitespace squeezed, joined with ` | `; the `$ COMMAND` lines are not counted.
pub fn telling_lines(fs: &dyn FsIntegrity, out: &str) -> String {
    out.lines()
        .filter(|l| !l.starts_with("$ "))
        .filter(|l| fs.telling_line(l))
        .take(3)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Run `cmd` for a locating step, logging the command line and its output into `log`; a
/// failure is an error with the output.
pub(super) fn run_logged(cmd: Cmd, log: &mut String) -> Result<String, MetaError> {
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

/// Append a command's output to a check run, as `$ CMDLINE` and its text.
pub(super) fn add_output(run: &mut CheckRun, o: &crate::sys::cmd::CmdOutput) {
    run.commands.push(o.cmdline.clone());
    if !run.output.is_empty() {
        run.output.push('\n');
    }
    run.output.push_str(&format!("$ {}\n{}", o.cmdline, o.text()));
}

/// An offline check of the first loop device with `cmd` (it only reads): unmount, run, mount
/// again; errors reported when it exits non-zero.
pub(super) fn check_offline(tb: &mut Testbed, run: &mut CheckRun, cmd: Cmd) -> Result<()> {
    let dev = tb
        .loop_devices()
        .into_iter()
        .next()
        .ok_or_else(|| TestbedError::Check("no loop device to check".into()))?;
    tb.offline()?;
    // Ctrl-C stops the check at once (it only reads).
    let o = cmd
        .arg(&dev)
        .interruptible()
        .output()
        .map_err(|e| TestbedError::cmd("checking the filesystem", e));
    tb.online()?;
    let o = o?;
    add_output(run, &o);
    run.status = o.status.clone();
    run.errors_reported = !o.success();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_names_each_filesystem_once_and_round_trips() {
        let names: Vec<&str> = all().map(|f| f.name()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        for f in all() {
            assert_eq!(f.name().parse::<Fs>().unwrap(), f);
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{}\"", f.name()));
            assert_eq!(f.fs_name(), f);
            // A result written with the old enum (`"kind": "ext4"`) reads as the same name.
            let back: FsName = serde_json::from_str(&format!("\"{}\"", f.name())).unwrap();
            assert_eq!(back, f);
        }
        assert!(matches!("ext5".parse::<Fs>(), Err(ConfigError::UnknownKind(_))));
    }

    #[test]
    fn every_filesystem_names_its_tools_and_a_minimum_size() {
        for f in all() {
            let cfg = FsConfig::new(f);
            assert!(f.min_device_bytes(&cfg) >= 1 << 20, "{f}");
            for (program, package) in f.tools(&cfg) {
                assert!(!program.is_empty() && !package.is_empty(), "{f}");
            }
        }
    }
}
