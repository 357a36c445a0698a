//! Testbed integration tests: every filesystem kind up and down on loop-backed images, cache
//! eviction actually reaching the devices (zfs-fuse included), refused devices, bad options
//! leaving nothing behind, and cleanup after a `kill -9`.
//!
//! These need root, loop devices and the mkfs tools; each test prints `skipped: <reason>` to
//! stderr and returns when something is missing. zfs tests are serialised (one zfs-fuse daemon).

use fsbench::engine::{CacheControl, Scope};
use fsbench::testbed::{self, FsConfig, Refusal, Testbed, TestbedError, TestbedOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// xfs needs 300 MiB; the images are fallocated (no data written), so this costs little.
const SIZE: u64 = 300 * MIB;

/// zfs-fuse is one daemon for the machine: zfs tests (and the crash test, which may start and
/// stop it) take turns.
static ZFS_LOCK: Mutex<()> = Mutex::new(());

fn zfs_lock() -> std::sync::MutexGuard<'static, ()> {
    ZFS_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn which(program: &str) -> bool {
    ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).exists())
}

/// Why the test cannot run here, if it cannot.
fn skip_reason(programs: &[&str]) -> Option<String> {
    if !fsbench::sys::is_root() {
        return Some("needs root (loop devices, mkfs, mount)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control".into());
    }
    for p in ["losetup", "mount", "umount", "findmnt"].iter().chain(programs) {
        if !which(p) {
            return Some(format!("{p} not installed"));
        }
    }
    None
}

macro_rules! skip_unless {
    ($($p:expr),*) => {
        if let Some(why) = skip_reason(&[$($p),*]) {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

fn workdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fsbench-it-")
        .tempdir_in("/var/tmp")
        .expect("tempdir in /var/tmp")
}

fn opts(dir: &Path) -> TestbedOptions {
    TestbedOptions { workdir: dir.to_path_buf(), size_bytes: SIZE, ..Default::default() }
}

fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn zpool_names() -> Vec<String> {
    if !which("zpool") {
        return Vec::new();
    }
    run("zpool", &["list", "-H", "-o", "name"]).lines().map(str::to_string).collect()
}

/// Assert nothing of the testbed that lived in `tb_dir` (with `pool`) is left on the system.
fn assert_nothing_left(tb_dir: &Path, mountpoint: &Path, pool: Option<&str>) {
    let loops = run("losetup", &["-a"]);
    let tb = tb_dir.to_string_lossy();
    assert!(!loops.contains(tb.as_ref()), "loop device left for {tb}:\n{loops}");
    let mounts = run("findmnt", &["-rn", "-o", "TARGET"]);
    assert!(
        !mounts.lines().any(|l| Path::new(l) == mountpoint),
        "still mounted: {}",
        mountpoint.display()
    );
    if let Some(p) = pool {
        assert!(!zpool_names().iter().any(|n| n == p), "pool {p} left");
    }
    assert!(!tb_dir.exists(), "{} left", tb_dir.display());
}

/// Read counter (sectors) of the block devices.
fn sectors_read(devs: &[String]) -> u64 {
    devs.iter()
        .map(|d| {
            let s = std::fs::read_to_string(format!("/sys/block/{d}/stat")).unwrap();
            s.split_whitespace().nth(2).unwrap().parse::<u64>().unwrap()
        })
        .sum()
}

fn write_file(path: &Path, bytes: usize) {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk: Vec<u8> = (0..MIB as usize).map(|i| (i * 31 % 251) as u8).collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    f.sync_all().unwrap();
}

fn read_file(path: &Path) -> usize {
    std::fs::read(path).unwrap().len()
}

/// Bring `spec` up, write a file, check findmnt and the environment record, tear down, and
/// check that nothing is left.
/// Bytes allocated on the host of each `dev*.img` in `tb_dir`.
fn image_bytes_allocated(tb_dir: &Path) -> Vec<(String, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut v: Vec<(String, u64)> = std::fs::read_dir(tb_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".img"))
        .map(|e| {
            (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().blocks() * 512)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn sparse_images_on_request() {
    skip_unless!("mkfs.ext4");
    let dir = workdir();
    let o = TestbedOptions { image_alloc: testbed::ImageAlloc::Sparse, ..opts(dir.path()) };
    let tb = Testbed::up(&FsConfig::parse("ext4").unwrap(), &o).unwrap();
    let tb_dir = tb.mountpoint().parent().unwrap().to_path_buf();
    let imgs = image_bytes_allocated(&tb_dir);
    assert!(tb.environment().backing.contains("sparse"), "{}", tb.environment().backing);
    assert!(imgs[0].1 < SIZE / 2, "{imgs:?}");
    tb.teardown().unwrap();
}

fn up_write_down(spec: &str, expect_fstype: &str) {
    let dir = workdir();
    let cfg = FsConfig::parse(spec).unwrap();
    let tb = Testbed::up(&cfg, &opts(dir.path())).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let mp = tb.mountpoint().to_path_buf();
    let tb_dir = mp.parent().unwrap().to_path_buf();
    write_file(&mp.join("hello"), 4 * MIB as usize);
    assert_eq!(read_file(&mp.join("hello")), 4 * MIB as usize);

    let fm = run("findmnt", &["-n", "-o", "FSTYPE", "-M", mp.to_str().unwrap()]);
    assert_eq!(fm.trim(), expect_fstype, "findmnt for {spec}");

    let env = tb.environment();
    assert_eq!(env.label, spec);
    assert_eq!(env.kind, cfg.kind);
    assert_eq!(env.fstype, expect_fstype);
    assert_eq!(env.devices, cfg.devices);
    assert_eq!(tb.block_devices().len(), cfg.devices);
    for d in tb.block_devices() {
        assert!(d.starts_with("loop") && Path::new("/sys/block").join(&d).exists(), "{d}");
    }
    if cfg.kind != "tmpfs" {
        assert!(env.tool_version.is_some(), "{env:?}");
        assert!(env.mkfs_cmdline.is_some(), "{env:?}");
        assert!(env.backing.contains("loop direct I/O"), "{}", env.backing);
        // Every image's blocks are reserved on the host (after mkfs discarded them), so the
        // first repetition does not pay for the host's allocation.
        assert!(env.backing.contains("fallocated"), "{}", env.backing);
        assert_eq!(image_bytes_allocated(&tb_dir).len(), cfg.devices);
        for (img, bytes) in image_bytes_allocated(&tb_dir) {
            assert!(bytes >= SIZE, "{spec}: {img} has only {bytes} bytes allocated");
        }
    }
    for o in &cfg.mount_opts {
        let effective = format!("{},{}", env.mount_options, env.super_options);
        assert!(effective.contains(o.as_str()), "{o} not in effect: {effective}");
    }
    let pool = (cfg.kind == "zfs").then(|| env.mount_source.clone());
    if let Some(p) = &pool {
        assert!(p.starts_with("fsbench_"), "{p}");
        assert!(zpool_names().contains(p));
    }
    let json = serde_json::to_string(&env).unwrap();
    assert!(json.contains("\"mount_options\""));
    eprintln!("environment of {spec}: {json}");

    tb.teardown().unwrap_or_else(|e| panic!("teardown {spec}: {e}"));
    assert_nothing_left(&tb_dir, &mp, pool.as_deref());
}

#[test]
fn ext2_up_down() {
    skip_unless!("mkfs.ext2");
    up_write_down("ext2", "ext2");
}

#[test]
fn ext3_up_down() {
    skip_unless!("mkfs.ext3");
    up_write_down("ext3", "ext3");
}

#[test]
fn ext4_with_mount_options_up_down() {
    skip_unless!("mkfs.ext4");
    up_write_down("ext4:mount=data=writeback,noatime", "ext4");
}

#[test]
fn xfs_up_down() {
    skip_unless!("mkfs.xfs");
    up_write_down("xfs:mkfs=-l size=64m:mount=logbsize=256k", "xfs");
}

#[test]
fn btrfs_up_down() {
    skip_unless!("mkfs.btrfs");
    up_write_down("btrfs", "btrfs");
}

/// overlay over ext4 with overlay's own mount options: the mount is `overlay`, the options are
/// in effect, and teardown removes the overlay, the ext4 under it, its loop device and image.
#[test]
fn overlay_on_ext4_with_options_up_down() {
    skip_unless!("mkfs.ext4");
    up_write_down("overlay:on=ext4:mount=index=on,redirect_dir=on", "overlay");
}

#[test]
fn btrfs_raid1_up_down() {
    skip_unless!("mkfs.btrfs");
    up_write_down("btrfs:profile=raid1:devices=2", "btrfs");
}

#[test]
fn tmpfs_up_down() {
    skip_unless!();
    up_write_down("tmpfs", "tmpfs");
}

#[test]
fn zfs_single_up_down() {
    skip_unless!("zfs-fuse", "zpool", "zfs");
    let _g = zfs_lock();
    up_write_down("zfs:compression=lzjb:recordsize=8k", "fuse.zfs");
}

#[test]
fn zfs_mirror_up_down() {
    skip_unless!("zfs-fuse", "zpool", "zfs");
    let _g = zfs_lock();
    up_write_down("zfs:layout=mirror:devices=2", "fuse.zfs");
}

/// The zfs-fuse ARC survives `drop_caches`; the testbed's eviction (export/import) empties it:
/// after `evict`, re-reading the file reads its bytes from the loop devices again.
#[test]
fn zfs_eviction_reaches_the_devices() {
    skip_unless!("zfs-fuse", "zpool", "zfs");
    let _g = zfs_lock();
    let dir = workdir();
    let tb = Testbed::up(&FsConfig::parse("zfs").unwrap(), &opts(dir.path())).unwrap();
    let f = tb.mountpoint().join("data");
    let len = 16 * MIB as usize;
    write_file(&f, len);
    read_file(&f);
    let devs = tb.block_devices();

    // Page-cache eviction alone: zfs-fuse answers from its ARC, the device sees (almost) nothing.
    let before = sectors_read(&devs);
    fsbench::engine::PageCacheEvictor.evict(std::slice::from_ref(&f), Scope::Everything).unwrap();
    read_file(&f);
    let arc_hit = (sectors_read(&devs) - before) * 512;
    eprintln!("zfs: bytes read from device after drop_caches only: {arc_hit}");

    // The testbed's eviction: the whole file comes from the device.
    let what = tb.cache_control().evict(std::slice::from_ref(&f), Scope::Everything).unwrap();
    assert!(what.contains("export"), "{what}");
    let before = sectors_read(&devs);
    assert_eq!(read_file(&f), len);
    let device_bytes = (sectors_read(&devs) - before) * 512;
    eprintln!("zfs: bytes read from device after testbed eviction: {device_bytes}");
    assert!(
        device_bytes >= len as u64,
        "after eviction only {device_bytes} of {len} bytes came from the device"
    );
    assert!(
        arc_hit < len as u64 / 2,
        "drop_caches alone should not empty the ARC ({arc_hit} bytes read)"
    );
    tb.teardown().unwrap();
}

/// Fsbench's own work directory (the descriptors it holds on the mount for link-safe
/// I/O) made `zpool export` fail with "target is busy", so every "uncached" phase on zfs ran on
/// a file still cached. The testbed's eviction alone still fails while the directory is held
/// (the cause, reproduced); through the target, with the work directory as its anchor, the
/// descriptors are let go around the export and taken again: the same path reaches the same
/// directory, and the file is read from the devices.
#[test]
fn zfs_eviction_lets_go_of_the_work_directory_and_takes_it_again() {
    skip_unless!("zfs-fuse", "zpool", "zfs");
    let _g = zfs_lock();
    let dir = workdir();
    let tb = Testbed::up(&FsConfig::parse("zfs").unwrap(), &opts(dir.path())).unwrap();
    let ws = fsbench::engine::Workspace::create(tb.mountpoint()).unwrap();
    let f = ws.path().join("data");
    let len = 16 * MIB as usize;
    write_file(&f, len);
    read_file(&f);
    let e = tb.cache_control().evict(std::slice::from_ref(&f), Scope::Everything).unwrap_err();
    assert!(e.to_string().contains("busy"), "the work directory holds the mount: {e}");

    let mut target = tb.target();
    target.anchor = Some(&*ws);
    let what = target.evict(std::slice::from_ref(&f), Scope::Everything).unwrap().unwrap();
    assert!(what.contains("export"), "{what}");
    let devs = tb.block_devices();
    let before = sectors_read(&devs);
    assert_eq!(read_file(&f), len, "the same path, the same directory");
    let device_bytes = (sectors_read(&devs) - before) * 512;
    assert!(device_bytes >= len as u64, "only {device_bytes} of {len} bytes from the devices");
    // Twice: the directory taken again can be let go again.
    target.evict(std::slice::from_ref(&f), Scope::Everything).unwrap().unwrap();
    assert_eq!(read_file(&f), len);
    drop(ws);
    tb.teardown().unwrap();
}

/// Every way a kernel filesystem is made uncached reads the whole file from the device again:
/// the test's own pages only (a data test's default, as fio's `invalidate`), everything
/// (`drop_caches`: a file set, `--drop-caches`), and either with a remount. The files-only
/// eviction leaves another file cached.
#[test]
fn kernel_fs_eviction_reaches_the_device_for_every_scope_with_and_without_remount() {
    skip_unless!("mkfs.ext4", "mkfs.xfs");
    for (fs, remount, scope) in [
        ("ext4", false, Scope::Files),
        ("ext4", false, Scope::Everything),
        ("ext4", true, Scope::Files),
        ("xfs", false, Scope::Files),
    ] {
        let dir = workdir();
        let o = TestbedOptions { remount_to_evict: remount, ..opts(dir.path()) };
        let tb = Testbed::up(&FsConfig::parse(fs).unwrap(), &o).unwrap();
        let f = tb.mountpoint().join("data");
        let other = tb.mountpoint().join("other");
        let len = 8 * MIB as usize;
        write_file(&f, len);
        write_file(&other, len);
        read_file(&f);
        read_file(&other);
        let what = tb.cache_control().evict(std::slice::from_ref(&f), scope).unwrap();
        assert_eq!(what.contains("umount"), remount, "{what}");
        assert_eq!(what.contains("drop_caches"), scope == Scope::Everything, "{what}");
        let case = format!("{fs} remount={remount} {scope:?}");
        assert!(fsbench::sys::cache::resident_fraction(&f).unwrap() < 0.02, "{case}");
        let other_left = fsbench::sys::cache::resident_fraction(&other).unwrap();
        if scope == Scope::Files && !remount {
            assert!(other_left > 0.95, "{case}: the other file was evicted ({other_left})");
        }
        let before = sectors_read(&tb.block_devices());
        assert_eq!(read_file(&f), len);
        let got = (sectors_read(&tb.block_devices()) - before) * 512;
        assert!(got >= len as u64, "{case}: only {got} bytes read from the device");
        tb.teardown().unwrap();
    }
}

#[test]
fn tmpfs_eviction_is_refused() {
    skip_unless!();
    let dir = workdir();
    let tb = Testbed::up(&FsConfig::parse("tmpfs").unwrap(), &opts(dir.path())).unwrap();
    assert!(tb.cache_control().evict(&[], Scope::Everything).is_err());
}

/// An invalid mount option fails with mount's own message and leaves nothing behind; so does a
/// zfs property that zfs-fuse does not know (it has no lz4).
#[test]
fn bad_options_leave_nothing_behind() {
    skip_unless!("mkfs.ext4");
    let dir = workdir();
    let e = Testbed::up(
        &FsConfig::parse("ext4:mount=inode_readahead_blks=3").unwrap(),
        &opts(dir.path()),
    )
    .unwrap_err();
    let msg = e.to_string();
    // The user's option is named as the cause (bad input, exit 2), with mount's own words.
    assert!(
        matches!(&e, TestbedError::Rejected { source, .. } if matches!(**source, TestbedError::Cmd { .. })),
        "{msg}"
    );
    assert!(msg.contains("mount -t ext4 -o inode_readahead_blks=3"), "{msg}");
    let e = Testbed::up(&FsConfig::parse("xfs:mkfs=-b size=3").unwrap(), &opts(dir.path()))
        .unwrap_err();
    assert!(e.to_string().contains("mkfs.xfs"), "{e}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "workdir not empty");
    assert!(!run("losetup", &["-a"]).contains(dir.path().to_str().unwrap()));

    if skip_reason(&["zfs-fuse", "zpool", "zfs"]).is_none() {
        let _g = zfs_lock();
        // Only this process's pools (`fsbench_PID_N`): other fsbench processes share the daemon.
        let own = || {
            let prefix = format!("fsbench_{}_", std::process::id());
            zpool_names().into_iter().filter(|n| n.starts_with(&prefix)).collect::<Vec<_>>()
        };
        let pools_before = own();
        let e = Testbed::up(&FsConfig::parse("zfs:compression=lz4").unwrap(), &opts(dir.path()))
            .unwrap_err();
        assert!(e.to_string().contains("compression=lz4"), "{e}");
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "workdir not empty");
        assert_eq!(own(), pools_before);
    }
}

#[test]
fn too_small_and_no_space_are_clear_errors() {
    skip_unless!("mkfs.xfs");
    let dir = workdir();
    let o = TestbedOptions { size_bytes: 100 * MIB, ..opts(dir.path()) };
    let e = Testbed::up(&FsConfig::parse("xfs").unwrap(), &o).unwrap_err();
    assert!(matches!(e, TestbedError::TooSmall { .. }), "{e}");
    let o = TestbedOptions { size_bytes: 1 << 60, ..opts(dir.path()) };
    let e = Testbed::up(&FsConfig::parse("ext4").unwrap(), &o).unwrap_err();
    assert!(matches!(e, TestbedError::HostSpace { .. }), "{e}");
}

/// A loop device this test attached itself, detached (and its image removed) on drop.
struct OwnLoop {
    dev: String,
    _dir: tempfile::TempDir,
    mnt: Option<PathBuf>,
}

impl OwnLoop {
    fn with_ext4() -> OwnLoop {
        let dir = workdir();
        let img = dir.path().join("own.img");
        std::fs::File::create(&img).unwrap().set_len(64 * MIB).unwrap();
        let dev = run("losetup", &["--find", "--show", img.to_str().unwrap()]).trim().to_string();
        assert!(dev.starts_with("/dev/loop"), "losetup gave {dev:?}");
        let me = OwnLoop { dev, _dir: dir, mnt: None };
        let st = Command::new("mkfs.ext4").args(["-F", "-q", &me.dev]).status().unwrap();
        assert!(st.success());
        me
    }
}

impl Drop for OwnLoop {
    fn drop(&mut self) {
        if let Some(m) = &self.mnt {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn refused_devices() {
    skip_unless!("mkfs.ext4", "wipefs");
    let mut own = OwnLoop::with_ext4();
    let dev = PathBuf::from(&own.dev);

    // Carries an ext4 signature: refused without --force, accepted with it.
    let e = testbed::validate_real_device(&dev, false).unwrap_err();
    match &e {
        TestbedError::DeviceRefused { reason: Refusal::Signature(s), .. } => {
            assert!(s.contains("ext4"), "{s}")
        }
        other => panic!("expected a signature refusal, got {other}"),
    }
    assert!(testbed::validate_real_device(&dev, true).is_ok());

    // Testbed::up refuses it too, and creates nothing.
    let dir = workdir();
    let o = TestbedOptions { device: Some(dev.clone()), destroy_data: true, ..opts(dir.path()) };
    let e = Testbed::up(&FsConfig::parse("ext4").unwrap(), &o).unwrap_err();
    assert!(e.to_string().contains("signatures"), "{e}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());

    // Mounted: refused even with --force.
    let mnt = own._dir.path().join("m");
    std::fs::create_dir(&mnt).unwrap();
    assert!(Command::new("mount").arg(&dev).arg(&mnt).status().unwrap().success());
    own.mnt = Some(mnt.clone());
    let e = testbed::validate_real_device(&dev, true).unwrap_err();
    assert!(matches!(e, TestbedError::DeviceRefused { reason: Refusal::Mounted(_), .. }), "{e}");

    // The root disk (/dev/vda here) is refused too; that is tested on recorded facts in
    // src/testbed/device.rs, never by pointing fsbench at the real root disk.
}

/// Used by a real device end to end: a loop device the test made stands in for a disk.
#[test]
fn real_device_testbed_with_force() {
    skip_unless!("mkfs.ext4", "wipefs");
    let own = OwnLoop::with_ext4();
    let dir = workdir();
    let o = TestbedOptions {
        device: Some(PathBuf::from(&own.dev)),
        destroy_data: true,
        force: true,
        ..opts(dir.path())
    };
    let tb = Testbed::up(&FsConfig::parse("ext4").unwrap(), &o).unwrap();
    assert_eq!(tb.block_devices(), [own.dev.trim_start_matches("/dev/").to_string()]);
    assert!(tb.environment().backing.contains("real device"));
    let mp = tb.mountpoint().to_path_buf();
    tb.teardown().unwrap();
    assert_nothing_left(mp.parent().unwrap(), &mp, None);
}

const CHILD_ENV: &str = "FSBENCH_TESTBED_CRASH_CHILD";

/// Not a test on its own: the crash test runs this test binary again with `CHILD_ENV` set, and
/// this brings testbeds up, says so, and waits to be killed.
#[test]
fn crash_child() {
    let Ok(workdir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let o = TestbedOptions { workdir: workdir.into(), size_bytes: SIZE, ..Default::default() };
    let mut beds = vec![Testbed::up(&FsConfig::parse("ext4").unwrap(), &o).unwrap()];
    beds.push(Testbed::up(&FsConfig::parse("tmpfs").unwrap(), &o).unwrap());
    if std::env::var("FSBENCH_TESTBED_CRASH_ZFS").is_ok() {
        beds.push(Testbed::up(&FsConfig::parse("zfs:layout=mirror").unwrap(), &o).unwrap());
    }
    for b in &beds {
        println!("FSBENCH_MOUNT {}", b.mountpoint().display());
    }
    println!("FSBENCH_READY");
    std::io::stdout().flush().unwrap();
    // Never torn down normally: the parent kills us. Exit on our own after a while anyway.
    std::thread::sleep(Duration::from_secs(60));
    std::mem::forget(beds);
    std::process::exit(3);
}

/// kill -9 of a process with testbeds up leaves mounts, loop devices, images (and a pool), and
/// `cleanup_leftovers()` removes them all, plus the state record.
#[test]
fn cleanup_after_kill_9() {
    skip_unless!("mkfs.ext4");
    let zfs = skip_reason(&["zfs-fuse", "zpool", "zfs"]).is_none();
    let _g = zfs_lock();
    let dir = workdir();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if zfs {
        cmd.env("FSBENCH_TESTBED_CRASH_ZFS", "1");
    }
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut mounts = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(l) if l == "FSBENCH_READY" => break,
            Ok(l) => {
                if let Some(m) = l.strip_prefix("FSBENCH_MOUNT ") {
                    mounts.push(PathBuf::from(m));
                }
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = testbed::cleanup_leftovers();
                panic!("child did not bring its testbeds up in time");
            }
        }
    }
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();

    let record = testbed::default_state_dir().join(format!("{pid}.json"));
    assert!(record.exists(), "the crashed process's record should be there");
    let mounted = run("findmnt", &["-rn", "-o", "TARGET"]);
    for m in &mounts {
        assert!(
            mounted.lines().any(|l| Path::new(l) == m),
            "crash should leave {} mounted",
            m.display()
        );
    }
    assert!(run("losetup", &["-a"]).contains(dir.path().to_str().unwrap()));

    let report = testbed::cleanup_leftovers().unwrap();
    eprintln!("{report}");
    assert!(report.is_clean(), "{report}");
    assert!(!record.exists(), "record should be gone after cleanup");
    for m in &mounts {
        assert_nothing_left(m.parent().unwrap(), m, None);
    }
    assert!(!run("losetup", &["-a"]).contains(dir.path().to_str().unwrap()));
    assert!(!zpool_names().iter().any(|p| p.starts_with(&format!("fsbench_{pid}_"))));
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "workdir not empty after cleanup"
    );
}

fn fusectl_mounted() -> bool {
    fsbench::sys::pseudofs::is_mounted("fusectl", "/sys/fs/fuse/connections")
}

/// The zfs-fuse watchdog's abort path, without a real deadlock: a watch with a tiny limit over
/// a stretch that outlasts it aborts the FUSE connection of this testbed's pool only; the
/// mount then fails with ENOTCONN instead of hanging, and the teardown still removes
/// everything.
#[test]
fn zfs_watchdog_aborts_only_its_pools_fuse_connection_and_teardown_still_runs() {
    use fsbench::testbed::zfs_watch::{connections, Watch};
    skip_unless!("zfs-fuse", "zpool", "zfs");
    let _g = zfs_lock();
    let dir = workdir();
    let cfg = FsConfig::parse("zfs").unwrap();
    let tb = Testbed::up(&cfg, &TestbedOptions { size_bytes: 128 * MIB, ..opts(dir.path()) })
        .unwrap_or_else(|e| panic!("zfs: {e}"));
    let mp = tb.mountpoint().to_path_buf();
    let tb_dir = mp.parent().unwrap().to_path_buf();
    let pool = tb.zfs_pool().unwrap().to_string();
    write_file(&mp.join("hello"), MIB as usize);
    let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let conns = connections(&mi, &pool);
    assert_eq!(conns.len(), 1, "{pool}: {conns:?}");
    assert_eq!(conns[0].0, mp);
    // A fresh machine may not have fusectl mounted: the abort mounts it and unmounts it after.
    let fusectl_before = fusectl_mounted();
    let w = Watch::arm_for(&pool, "reading the data set", Duration::from_millis(50));
    std::thread::sleep(Duration::from_millis(1500));
    let msg = w.finish().expect("the watch fired");
    assert!(msg.contains("reading the data set did not finish within 1 s"), "{msg}");
    assert!(
        msg.contains(&format!("aborted FUSE connection {} of pool {pool}", conns[0].1)),
        "{msg}"
    );
    let e = std::fs::read_dir(&mp).map(drop).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOTCONN), "{e}");
    assert_eq!(fusectl_mounted(), fusectl_before, "fusectl is left as it was found");
    tb.teardown().unwrap_or_else(|e| panic!("teardown after the abort: {e}"));
    assert_nothing_left(&tb_dir, &mp, Some(&pool));
}
