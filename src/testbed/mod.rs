//! Testbeds: filesystems on loop-backed image files (or explicitly named devices), their
//! lifecycle, and cleanup of what a crash left behind.
//!
//! [`Testbed::up`] checks first (root, tools, loop devices, host space), then creates, in order,
//! and records each step in the state file ([`state`]) before it happens:
//!
//! 1. a directory `WORKDIR/tb-PID-N/` with a mount point `mnt/`;
//! 2. per device a sparse image `devI.img` and a loop device over it with direct I/O
//!    ([`loopdev`]), or the one real device the user named with `--destroy-data`
//!    ([`device::validate_real_device`]);
//! 3. the filesystem, made and mounted by its plug-in ([`fs`]: mkfs and [`mount`] for kernel
//!    filesystems; for zfs the zfs-fuse daemon if it is not running and a pool `fsbench_PID_N`
//!    mounted on `mnt/` ([`zfs`]); for tmpfs only the mount; for overlay a backing filesystem
//!    and the overlay mount over it).
//!
//! Every step is owned by a guard. [`Testbed::down`] (also run by `Drop`, so on errors, panics
//! and after Ctrl-C's flag stops a run) tears them down in reverse order and removes the record.
//! A `kill -9` leaves the record, which [`cleanup_leftovers`] (`fsbench testbed cleanup`) uses.
//!
//! Default: one fresh filesystem per `Testbed`; callers choose per test or per suite by how
//! often they call `up`.

use crate::model::testbed::TestbedEnv;
pub mod cleanup;
pub mod config;
pub mod device;
pub mod env;
pub mod error;
pub mod evict;
pub mod fs;
pub mod fsopts;
pub mod image;
pub mod loopdev;
pub mod mark;
pub mod mount;
/// See [`crate::sys::mountinfo`] (the one parser).
pub use crate::sys::mountinfo;
mod offline;
pub mod preflight;
pub mod sched;
pub mod sizing;
pub mod zfs;
pub mod zfs_watch;

/// The state records (a library part of its own, [`crate::state`]; re-exported here).
pub use crate::state::process;
/// See [`crate::state::record`].
pub use crate::state::record as state;
pub use cleanup::CleanupReport;
pub use config::{ConfigError, FsConfig, ZfsLayout, ZfsOpts};
pub use device::{validate_real_device, Refusal};

pub use error::TestbedError;
pub use state::{default_state_dir, Resource, StateDir};

use crate::engine::CacheControl;
use crate::sys::cmd::Cmd;
use error::Result;
pub use image::ImageAlloc;
use image::{ImageFile, WorkDir};
use loopdev::LoopDevice;
use mount::Mount;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use zfs::{ZfsDaemon, ZfsPool};

/// Default work directory for images and mount points.
pub const DEFAULT_WORKDIR: &str = "/var/tmp/fsbench";
/// Default size of each image (and of a tmpfs).
pub const DEFAULT_SIZE_BYTES: u64 = 1 << 30;

/// How to build a testbed, beyond the filesystem configuration.
#[derive(Debug, Clone)]
pub struct TestbedOptions {
    /// Where images and mount points go (`--workdir`).
    pub workdir: PathBuf,
    /// Size of each image, or of the tmpfs (`--size`).
    pub size_bytes: u64,
    /// A real device to use instead of images (`--device`); needs `destroy_data`.
    pub device: Option<PathBuf>,
    /// The user agreed that `device`'s contents are destroyed (`--destroy-data`).
    pub destroy_data: bool,
    /// Overwrite a device that carries a filesystem or partition-table signature (`--force`).
    pub force: bool,
    /// State directory; `None`: [`default_state_dir`].
    pub state_dir: Option<PathBuf>,
    /// Kernel filesystems: evict by unmounting and mounting again as well as by page-cache
    /// eviction (drops inodes and dentries too).
    pub remount_to_evict: bool,
    /// Kernel filesystems: an uncached data phase also drops every clean page, dentry and inode
    /// of the machine (`drop_caches`), not only the test's files' pages (`--drop-caches`).
    pub drop_caches: bool,
    /// How image files are allocated on the host once the filesystem is made (`--image-alloc`).
    pub image_alloc: ImageAlloc,
}

impl Default for TestbedOptions {
    fn default() -> Self {
        TestbedOptions {
            workdir: PathBuf::from(DEFAULT_WORKDIR),
            size_bytes: DEFAULT_SIZE_BYTES,
            device: None,
            destroy_data: false,
            force: false,
            state_dir: None,
            remount_to_evict: false,
            drop_caches: false,
            image_alloc: ImageAlloc::default(),
        }
    }
}

/// One created resource, owned; dropped (torn down) in reverse creation order.
#[derive(Debug)]
enum Owned {
    Dir(WorkDir),
    Image(ImageFile),
    Loop(LoopDevice),
    Mount(Mount),
    Daemon(ZfsDaemon),
    Pool(ZfsPool),
    Sched(sched::Restore),
}

impl Owned {
    fn teardown(self) -> Result<()> {
        match self {
            Owned::Dir(g) => g.teardown(),
            Owned::Image(g) => g.teardown(),
            Owned::Loop(g) => g.teardown(),
            Owned::Mount(g) => g.teardown(),
            Owned::Daemon(g) => g.release(),
            Owned::Pool(g) => g.teardown(),
            Owned::Sched(g) => g.teardown(),
        }
    }

    /// Leave the resource in place; its record's handle (the daemon has none: it is shared and
    /// stays while an imported pool uses it).
    fn keep(self) -> Option<crate::state::RecordId> {
        match self {
            Owned::Dir(g) => g.keep(),
            Owned::Image(g) => g.keep(),
            Owned::Loop(g) => g.keep(),
            Owned::Mount(g) => g.keep(),
            Owned::Daemon(g) => {
                std::mem::forget(g);
                None
            }
            Owned::Pool(g) => g.keep(),
            // A kept testbed keeps its scheduler; nothing is recorded to restore it later.
            Owned::Sched(g) => {
                std::mem::forget(g);
                None
            }
        }
    }
}

static TESTBED_SEQ: AtomicUsize = AtomicUsize::new(0);

/// A mounted filesystem built for benchmarking, torn down when dropped.
pub struct Testbed {
    config: FsConfig,
    mountpoint: PathBuf,
    block_devices: Vec<String>,
    env: Option<TestbedEnv>,
    cache: Box<dyn CacheControl>,
    guards: Vec<Owned>,
    state: StateDir,
    name: String,
    /// Last: removed after everything in them is torn down.
    _made_dirs: MadeDirs,
}

/// Directories of `--workdir` that did not exist and were made for a testbed; removed (only if
/// empty: another testbed may use them now) when it is torn down or fails, deepest first.
#[derive(Debug, Default)]
struct MadeDirs(Vec<PathBuf>);

impl Drop for MadeDirs {
    fn drop(&mut self) {
        for d in self.0.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Make `--workdir` and the parents it lacks, remembering which were made. A path that exists
/// and is not a directory is bad input.
fn make_workdir(dir: &Path) -> Result<MadeDirs, TestbedError> {
    let not_dir = |p: &Path| {
        TestbedError::Config(ConfigError::Invalid(format!(
            "--workdir {}: {} is not a directory; give a directory (missing ones are created)",
            dir.display(),
            p.display()
        )))
    };
    let mut missing = Vec::new();
    let mut p = dir;
    loop {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => return Err(not_dir(p)),
            Err(_) => missing.push(p.to_path_buf()),
        }
        match p.parent() {
            Some(q) if !q.as_os_str().is_empty() => p = q,
            _ => break,
        }
    }
    let mut made = MadeDirs::default();
    for m in missing.into_iter().rev() {
        match std::fs::create_dir(&m) {
            Ok(()) => made.0.push(m),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // `made` is dropped: what was made so far is removed.
            Err(e) => return Err(TestbedError::io("creating workdir", &m, e)),
        }
    }
    Ok(made)
}

impl std::fmt::Debug for Testbed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Testbed")
            .field("label", &self.config.label)
            .field("mountpoint", &self.mountpoint)
            .field("block_devices", &self.block_devices)
            .finish_non_exhaustive()
    }
}

impl Testbed {
    /// Check, create, mkfs and mount `config`; every step recorded and guarded. On error,
    /// everything created so far is torn down before the error is returned.
    pub fn up(config: &FsConfig, opts: &TestbedOptions) -> Result<Testbed, TestbedError> {
        let real = match &opts.device {
            Some(dev) if !opts.destroy_data => {
                return Err(TestbedError::DeviceRefused {
                    device: dev.clone(),
                    reason: Refusal::Inspect(
                        "its data would be destroyed: add --destroy-data to allow that".into(),
                    ),
                })
            }
            Some(dev) => Some(dev),
            None => None,
        };
        preflight::check(config, opts.size_bytes, real.is_some())?;
        let real = real.map(|d| validate_real_device(d, opts.force)).transpose()?;
        let state = StateDir::new(opts.state_dir.clone().unwrap_or_else(default_state_dir));
        let made_dirs = make_workdir(&opts.workdir)?;
        let workdir = std::fs::canonicalize(&opts.workdir)
            .map_err(|e| TestbedError::io("resolving workdir", &opts.workdir, e))?;
        // Images and mount points go here, and cleanup deletes by path: nobody but root may be
        // able to rename or plant anything in it (a /var/tmp/fsbench made first by another user
        // is refused, not trusted).
        crate::sys::secure::open_trusted_dir(&workdir, false)
            .map_err(|e| TestbedError::io("checking workdir", &workdir, e))?;
        if config.kind.needs_devices() && real.is_none() {
            image::check_space(&workdir, opts.size_bytes.saturating_mul(config.devices as u64))?;
        }

        let seq = TESTBED_SEQ.fetch_add(1, Ordering::Relaxed);
        let mut tb = Testbed {
            config: config.clone(),
            mountpoint: PathBuf::new(),
            block_devices: Vec::new(),
            env: None,
            cache: Box::new(evict::TmpfsCache),
            guards: Vec::new(),
            state: state.clone(),
            name: format!("tb-{}-{seq}", std::process::id()),
            _made_dirs: made_dirs,
        };
        // On any error below, dropping `tb` tears down what exists so far.
        tb.build(&workdir, seq, real, opts, &state)?;
        Ok(tb)
    }

    fn build(
        &mut self,
        workdir: &Path,
        seq: usize,
        real: Option<PathBuf>,
        opts: &TestbedOptions,
        state: &StateDir,
    ) -> Result<()> {
        let cfg = self.config.clone();
        let dir = WorkDir::create(&workdir.join(&self.name), state)?;
        let base = dir.path().to_path_buf();
        self.guards.push(Owned::Dir(dir));
        let mnt = WorkDir::create(&base.join("mnt"), state)?;
        self.mountpoint = mnt.path().to_path_buf();
        self.guards.push(Owned::Dir(mnt));
        let (devices, backing) = self.make_devices(&base, real.as_deref(), opts, state)?;
        if let Some(sc) = &cfg.io_scheduler {
            for d in &self.block_devices {
                let restore = sched::set(d, sc)?;
                self.guards.push(Owned::Sched(restore));
            }
        }
        let mountpoint = self.mountpoint.clone();
        let mut b =
            fs::Build::new(&cfg, opts, state, &base, mountpoint, &devices, &mut self.guards);
        (b.seq, b.backing) = (seq, backing);
        b.device_size_bytes = match &real {
            Some(dev) => device_size(dev),
            None => opts.size_bytes,
        };
        let made = cfg.kind.make(&mut b)?;
        let (backing, device_size_bytes) = (b.backing, b.device_size_bytes);
        self.cache = made.cache;
        // Fill the images' holes (mkfs has discarded them) so the host allocates no block during
        // the benchmark: without it the first repetition is slower than the others.
        for g in &self.guards {
            if let Owned::Image(img) = g {
                img.fill_holes(opts.image_alloc)?;
            }
        }
        let env = Described {
            mkfs_cmdline: made.mkfs_cmdline,
            post_create_cmdlines: made.post_create_cmdlines,
            zfs_properties: made.zfs_properties,
            device_size_bytes,
            devices: devices.len(),
            backing,
        };
        self.env = Some(self.describe(env)?);
        Ok(())
    }

    /// The block devices: the real one, or per device an image and a loop device over it
    /// (none for a filesystem in memory). Returns them and how they back the filesystem, in
    /// words.
    fn make_devices(
        &mut self,
        base: &Path,
        real: Option<&Path>,
        opts: &TestbedOptions,
        state: &StateDir,
    ) -> Result<(Vec<PathBuf>, String)> {
        let cfg = &self.config;
        let mut devices: Vec<PathBuf> = Vec::new();
        let backing = if let Some(dev) = real {
            devices.push(dev.to_path_buf());
            format!("real device {}", dev.display())
        } else if cfg.kind.needs_devices() {
            let mut direct_io = true;
            for i in 0..cfg.devices {
                let img =
                    ImageFile::create(&base.join(format!("dev{i}.img")), opts.size_bytes, state)?;
                let path = img.path().to_path_buf();
                self.guards.push(Owned::Image(img));
                let lo = LoopDevice::attach(&path, state)?;
                direct_io &= lo.direct_io();
                devices.push(lo.device().to_path_buf());
                self.guards.push(Owned::Loop(lo));
            }
            let names: Vec<String> = devices.iter().map(|d| loopdev::kernel_name(d)).collect();
            format!(
                "{} {} image(s) of {} MiB in {} on {} ({})",
                cfg.devices,
                match opts.image_alloc {
                    ImageAlloc::Sparse => "sparse",
                    ImageAlloc::Allocate => "fallocated",
                    ImageAlloc::Zero => "zero-filled",
                },
                opts.size_bytes >> 20,
                base.display(),
                names.join(", "),
                if direct_io {
                    "loop direct I/O"
                } else {
                    "loop buffered I/O: direct I/O unavailable"
                }
            )
        } else {
            String::new()
        };
        self.block_devices = devices.iter().map(|d| loopdev::kernel_name(d)).collect();
        Ok((devices, backing))
    }

    /// Verify that the filesystem is mounted and describe it: the environment record.
    fn describe(&self, d: Described) -> Result<TestbedEnv> {
        let cfg = &self.config;
        let entries = mountinfo::read()
            .map_err(|e| TestbedError::io("reading", "/proc/self/mountinfo", e))?;
        let m = mountinfo::find(&entries, &self.mountpoint).ok_or_else(|| {
            TestbedError::Check(format!(
                "{} is not mounted after setting up {}",
                self.mountpoint.display(),
                cfg.label
            ))
        })?;
        Ok(TestbedEnv {
            kind: cfg.kind.fs_name(),
            label: cfg.label.clone(),
            config: cfg.short_form(),
            mkfs_cmdline: d.mkfs_cmdline,
            post_create_cmdlines: d.post_create_cmdlines,
            tool_version: cfg.kind.tool_version(cfg),
            fstype: m.fstype,
            mount_source: m.source,
            mount_options: m.mount_options,
            super_options: m.super_options,
            zfs_properties: d.zfs_properties,
            device_size_bytes: d.device_size_bytes,
            devices: d.devices,
            backing: d.backing,
            block_devices: self.block_devices.clone(),
            io_scheduler: self.block_devices.first().and_then(|d| sched::active(d)),
        })
    }

    /// Where the filesystem is mounted.
    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// Kernel names of the block devices under the filesystem (`loop3`), for /sys/block counters.
    pub fn block_devices(&self) -> Vec<String> {
        self.block_devices.clone()
    }

    /// How to make the engine's "uncached" precondition hold here (see [`evict`]).
    pub fn cache_control(&self) -> &dyn CacheControl {
        self.cache.as_ref()
    }

    /// The configuration this testbed was built from.
    pub fn config(&self) -> &FsConfig {
        &self.config
    }

    /// The environment record (kind, label, mkfs command, tool version, mount options, backing).
    pub fn environment(&self) -> TestbedEnv {
        self.env.clone().expect("set at the end of a successful up()")
    }

    /// A [`crate::engine::Target`] for the engine.
    pub fn target(&self) -> crate::engine::Target<'_> {
        crate::engine::Target {
            dir: self.mountpoint.clone(),
            label: self.config.label.clone(),
            devices: self.block_devices.clone(),
            cache: self.cache.as_ref(),
            daemon: self.config.kind.daemon(),
            anchor: None,
        }
    }

    /// Unmount, destroy, detach and delete, newest first, going on past errors and reporting
    /// them all. Idempotent: a second call does nothing.
    pub fn down(&mut self) -> Result<(), TestbedError> {
        // The cache controller may refer to the pool; make it inert first.
        self.cache = Box::new(evict::TmpfsCache);
        let mut errors = Vec::new();
        while let Some(g) = self.guards.pop() {
            if let Err(e) = g.teardown() {
                errors.push(e);
            }
        }
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(TestbedError::Teardown(errors)),
        }
    }

    /// Leave the testbed up after this process exits (`fsbench testbed up`): the guards are
    /// released without teardown and the records move to a kept record named [`Testbed::name`],
    /// which `fsbench testbed down NAME` removes (and `cleanup` leaves alone). Returns the
    /// mount point. If the records cannot be moved, the testbed is torn down and that is the
    /// error.
    pub fn keep(mut self) -> Result<PathBuf, TestbedError> {
        let ids: Vec<_> = self
            .guards
            .iter()
            .filter_map(|g| match g {
                Owned::Dir(g) => g.record_id().cloned(),
                Owned::Image(g) => g.record_id().cloned(),
                Owned::Loop(g) => g.record_id().cloned(),
                Owned::Mount(g) => g.record_id().cloned(),
                Owned::Pool(g) => g.record_id().cloned(),
                Owned::Daemon(_) | Owned::Sched(_) => None,
            })
            .collect();
        self.state
            .keep(&ids, &self.name)
            .map_err(|e| TestbedError::io("recording the kept testbed in", self.state.path(), e))?;
        for g in std::mem::take(&mut self.guards) {
            let _ = g.keep();
        }
        Ok(self.mountpoint.clone())
    }

    /// The testbed's name (`tb-PID-N`, the name of its directory; a kept testbed is removed by
    /// this name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// [`Testbed::down`], consuming the testbed.
    pub fn teardown(mut self) -> Result<(), TestbedError> {
        self.down()
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("fsbench: tearing down testbed {}: {e}", self.config.label);
        }
    }
}

/// A failed step that had user-given options: the options are the likely cause (bad input),
/// unless the step failed because of Ctrl-C.
fn rejected(step: &str, options: &[String], e: TestbedError) -> TestbedError {
    if options.is_empty()
        || crate::sys::signals::interrupted()
        || !matches!(e, TestbedError::Cmd { source: crate::sys::cmd::CmdError::Failed { .. }, .. })
    {
        return e;
    }
    TestbedError::Rejected {
        step: step.to_string(),
        options: options.join(" "),
        source: Box::new(e),
    }
}

/// What [`Testbed::build`] learnt while making the filesystem, for its environment record.
struct Described {
    mkfs_cmdline: Option<String>,
    post_create_cmdlines: Vec<String>,
    zfs_properties: Vec<(String, String)>,
    device_size_bytes: u64,
    devices: usize,
    backing: String,
}

/// Size of a real device in bytes (0 when `blockdev` cannot say).
fn device_size(dev: &Path) -> u64 {
    Cmd::new("blockdev")
        .args(["--getsize64"])
        .arg(dev)
        .run()
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// The mkfs command of `cfg`'s filesystem over `devices` (its plug-in's, [`fs::Filesystem::mkfs`];
/// `true` for a filesystem made without one).
///
/// ext*: `-E lazy_itable_init=0,lazy_journal_init=0` unless the user passes their own `-E`
/// (mke2fs keeps only the last `-E`): lazy init would otherwise write inode tables in the
/// background during the benchmark.
pub fn mkfs_command(cfg: &FsConfig, devices: &[PathBuf]) -> Cmd {
    cfg.kind.mkfs(cfg, devices).unwrap_or_else(|| Cmd::new("true"))
}

/// Remove what crashed fsbench processes left (records in [`default_state_dir`]); kept
/// testbeds and live processes' resources are left alone.
pub fn cleanup_leftovers() -> Result<CleanupReport, TestbedError> {
    let mut report = cleanup::cleanup(&StateDir::default())?;
    // Records of fsbench 0.1, if root alone could have written them (else they are left, and
    // said so: acting on records another user could forge is what this version stopped).
    let legacy = StateDir::legacy();
    if std::env::var_os(crate::state::STATE_DIR_ENV).is_none() && legacy.path().exists() {
        match cleanup::cleanup(&legacy) {
            Ok(r) => report.merge(r),
            Err(e) => report
                .not_ours
                .push(format!("records of fsbench 0.1 in {}: {e}", legacy.path().display())),
        }
    }
    Ok(report)
}

/// Remove kept testbeds (`fsbench testbed down NAME` or `--all`).
pub fn down_kept(scope: &cleanup::Scope) -> Result<CleanupReport, TestbedError> {
    cleanup::clean(&StateDir::default(), scope)
}

/// [`cleanup_leftovers`] for another state directory.
pub fn cleanup_leftovers_in(state_dir: &Path) -> Result<CleanupReport, TestbedError> {
    cleanup::cleanup(&StateDir::new(state_dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkfs_command_lines() {
        let dev = vec![PathBuf::from("/dev/loop3")];
        let c = FsConfig::parse("ext4:mkfs=-b 4096").unwrap();
        assert_eq!(
            mkfs_command(&c, &dev).cmdline(),
            "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -b 4096 /dev/loop3"
        );
        let c = FsConfig::parse("ext4:mkfs=-E stride=16").unwrap();
        assert_eq!(mkfs_command(&c, &dev).cmdline(), "mkfs.ext4 -F -q -E stride=16 /dev/loop3");
        let c = FsConfig::parse("xfs:mkfs=-l size=64m").unwrap();
        assert_eq!(mkfs_command(&c, &dev).cmdline(), "mkfs.xfs -f -q -l size=64m /dev/loop3");
        let c = FsConfig::parse("btrfs:profile=raid1").unwrap();
        let two = vec![PathBuf::from("/dev/loop3"), PathBuf::from("/dev/loop4")];
        assert_eq!(
            mkfs_command(&c, &two).cmdline(),
            "mkfs.btrfs -f -q -d raid1 -m raid1 /dev/loop3 /dev/loop4"
        );
    }

    #[test]
    fn device_without_destroy_data_is_refused_before_anything() {
        let opts = TestbedOptions { device: Some("/dev/loop0".into()), ..Default::default() };
        let e = Testbed::up(&FsConfig::parse("ext4").unwrap(), &opts).unwrap_err();
        assert!(e.to_string().contains("--destroy-data"), "{e}");
    }
}
