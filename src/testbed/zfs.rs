//! ZFS through zfs-fuse: the daemon, pools, and emptying the daemon's ARC.
//!
//! **Vdevs are loop devices**, not the image files zfs-fuse would also accept: with loop devices
//! the pool is backed exactly like every kernel filesystem here (direct-I/O loop over a sparse
//! image), the host page cache holds no copy of the image, and `/sys/block/loopN/stat` counts
//! the pool's real device I/O, which is how eviction is verified. The pool is created on
//! symlinks `DEVDIR/devN -> /dev/loopN` in a directory of the testbed's own, so
//! `zpool import -d DEVDIR` scans only our devices (never `/dev`, which holds the host's disks).
//!
//! Pools are created and imported with `cachefile=none`: zfs-fuse never writes them to
//! `/var/lib/zfs/zpool.cache`, so a crashed run's pool does not come back when the daemon next
//! starts.
//!
//! The daemon is shared by every zfs testbed in the process (reference counted under one lock).
//! fsbench starts it only if it is not running, and stops the one it started when the last zfs
//! testbed is gone, unless some other pool is imported then (another user's), in which case it
//! is left running and a note is printed.

use super::config::ZfsLayout;
use super::error::{Result, TestbedError};
use super::process::ProcessId;
use super::state::{RecordId, Resource, StateDir};
use crate::sys::cmd::Cmd;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// zfs-fuse's control socket.
pub const SOCKET: &str = "/var/run/zfs/zfs_socket";
/// Every pool fsbench creates has a name starting with this; cleanup touches no other pool.
pub const POOL_PREFIX: &str = "fsbench_";
const HINT: &str = "install the Debian package zfs-fuse";

/// Whether the zfs-fuse daemon answers on its socket.
pub fn daemon_running() -> bool {
    std::os::unix::net::UnixStream::connect(SOCKET).is_ok()
}

/// Names of imported pools (`zpool list -H -o name`).
pub fn imported_pools() -> Result<Vec<String>> {
    let out = Cmd::new("zpool")
        .args(["list", "-H", "-o", "name"])
        .hint(HINT)
        .run()
        .map_err(|e| TestbedError::cmd("listing zfs pools", e))?;
    Ok(out.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect())
}

struct Started {
    process: ProcessId,
    pidfile: PathBuf,
    state: StateDir,
    rec: RecordId,
}

struct DaemonState {
    refs: usize,
    started: Option<Started>,
}

static DAEMON: Mutex<DaemonState> = Mutex::new(DaemonState { refs: 0, started: None });

fn daemon_state() -> MutexGuard<'static, DaemonState> {
    DAEMON.lock().unwrap_or_else(|p| p.into_inner())
}

/// A reference to a running zfs-fuse daemon. The last reference stops the daemon if fsbench
/// started it (see the module docs).
#[derive(Debug)]
pub struct ZfsDaemon {
    released: bool,
}

impl ZfsDaemon {
    /// Use the running daemon, or start one (`zfs-fuse -p PIDFILE --no-kstat-mount`), recording it.
    pub fn ensure(state: &StateDir) -> Result<ZfsDaemon> {
        let mut st = daemon_state();
        if st.refs > 0 || daemon_running() {
            st.refs += 1;
            return Ok(ZfsDaemon { released: false });
        }
        let pidfile = state.path().join(format!("zfs-fuse-{}.pid", std::process::id()));
        let rec = state
            .record(Resource::ZfsDaemon { process: None, pidfile: pidfile.clone() })
            .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        let _ = std::fs::remove_file(&pidfile);
        // --no-kstat-mount: otherwise the daemon mounts /zfs-kstat, one more thing to clean up.
        // zfs-fuse daemonises; the command returns once the child is forked.
        if let Err(e) =
            Cmd::new("zfs-fuse").arg("-p").arg(&pidfile).arg("--no-kstat-mount").hint(HINT).run()
        {
            let _ = state.forget(&rec);
            return Err(TestbedError::cmd("starting zfs-fuse", e));
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        let mut process = None;
        loop {
            if process.is_none() {
                process = std::fs::read_to_string(&pidfile)
                    .ok()
                    .and_then(|s| s.trim().parse::<u32>().ok())
                    .and_then(ProcessId::of);
                if let Some(p) = process {
                    state
                        .update(
                            &rec,
                            Resource::ZfsDaemon { process: Some(p), pidfile: pidfile.clone() },
                        )
                        .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
                }
            }
            if process.is_some() && daemon_running() && imported_pools().is_ok() {
                break;
            }
            if Instant::now() > deadline {
                if let Some(p) = process {
                    p.terminate(Duration::from_secs(5));
                }
                let _ = std::fs::remove_file(&pidfile);
                let _ = state.forget(&rec);
                return Err(TestbedError::Check(format!(
                    "zfs-fuse was started but its socket {SOCKET} did not answer within 15 s"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let process = process.expect("loop exits with a process");
        st.started = Some(Started { process, pidfile, state: state.clone(), rec });
        st.refs = 1;
        Ok(ZfsDaemon { released: false })
    }

    /// Whether this process started the running daemon.
    pub fn started_by_us(&self) -> bool {
        daemon_state().started.is_some()
    }

    /// Release this reference; the last one stops a daemon fsbench started.
    pub fn release(mut self) -> Result<()> {
        self.down()
    }

    fn down(&mut self) -> Result<()> {
        if self.released {
            return Ok(());
        }
        self.released = true;
        let mut st = daemon_state();
        st.refs = st.refs.saturating_sub(1);
        if st.refs > 0 {
            return Ok(());
        }
        let Some(started) = st.started.take() else {
            return Ok(());
        };
        let pools = imported_pools().unwrap_or_default();
        if !pools.is_empty() {
            eprintln!(
                "fsbench: leaving zfs-fuse (pid {}) running: pools {} are imported",
                started.process.pid,
                pools.join(", ")
            );
        } else if !stop_daemon(&started.process) {
            st.started = Some(started);
            return Err(TestbedError::Check(
                "zfs-fuse did not stop after SIGTERM and SIGKILL".into(),
            ));
        }
        let _ = std::fs::remove_file(&started.pidfile);
        started
            .state
            .forget(&started.rec)
            .map_err(|e| TestbedError::io("updating state in", started.state.path(), e))
    }
}

impl Drop for ZfsDaemon {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("fsbench: {e}");
        }
    }
}

/// Stop a zfs-fuse process fsbench started (verified by pid, start time and name) and wait for
/// its socket to go. Returns whether it is gone.
pub fn stop_daemon(p: &ProcessId) -> bool {
    match p.comm() {
        Some(c) if c == "zfs-fuse" => {}
        _ => return !p.is_alive(),
    }
    if !p.terminate(Duration::from_secs(10)) {
        return false;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while daemon_running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// A zfs pool fsbench created; destroyed on teardown.
#[derive(Debug)]
pub struct ZfsPool {
    name: String,
    mountpoint: PathBuf,
    devdir: PathBuf,
    state: StateDir,
    rec: Option<RecordId>,
}

impl ZfsPool {
    /// `zpool create -f -o cachefile=none -m MOUNTPOINT NAME [mirror|raidz|raidz2] VDEVS...`, then
    /// `zfs set` for each property. `vdevs` are paths inside `devdir` (see the module docs).
    pub fn create(
        name: &str,
        layout: ZfsLayout,
        vdevs: &[PathBuf],
        devdir: &Path,
        mountpoint: &Path,
        properties: &[(String, String)],
        state: &StateDir,
    ) -> Result<ZfsPool> {
        if !name.starts_with(POOL_PREFIX) {
            return Err(TestbedError::Check(format!(
                "pool name {name} lacks the {POOL_PREFIX} prefix"
            )));
        }
        let rec = state
            .record(Resource::ZfsPool { name: name.to_string() })
            .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        let guard = ZfsPool {
            name: name.to_string(),
            mountpoint: mountpoint.to_path_buf(),
            devdir: devdir.to_path_buf(),
            state: state.clone(),
            rec: Some(rec),
        };
        let cmd = create_command(name, layout, vdevs, mountpoint);
        // On failure the guard's Drop destroys a pool that came into being anyway.
        cmd.run().map_err(|e| TestbedError::cmd("creating zfs pool", e))?;
        for (k, v) in properties {
            Cmd::new("zfs")
                .arg("set")
                .arg(format!("{k}={v}"))
                .arg(name)
                .hint(HINT)
                .run()
                .map_err(|e| TestbedError::cmd(format!("setting zfs property {k}={v}"), e))?;
        }
        Ok(guard)
    }

    /// The pool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Export and re-import the pool: the daemon drops everything it cached for it (ARC), and
    /// the FUSE mount (and its kernel page cache) goes away and comes back. Between the two,
    /// the host's caches are dropped so the vdevs' block-device pages go too.
    pub fn export_import(&self) -> Result<()> {
        export_import(&self.name, &self.devdir)
    }

    /// The directory of symlinks to the pool's devices (for `zpool import -d`).
    pub fn devdir(&self) -> &Path {
        &self.devdir
    }

    /// Destroy the pool (unmounting its datasets) and forget the record.
    pub fn teardown(mut self) -> Result<()> {
        self.down()
    }

    fn down(&mut self) -> Result<()> {
        let Some(rec) = self.rec.take() else {
            return Ok(());
        };
        // On failure the record stays in the state file for `fsbench testbed cleanup`.
        destroy_verified(&self.name)?;
        if super::mountinfo::is_mounted(&self.mountpoint) {
            return Err(TestbedError::Check(format!(
                "{} is still mounted after destroying pool {}",
                self.mountpoint.display(),
                self.name
            )));
        }
        self.state
            .forget(&rec)
            .map_err(|e| TestbedError::io("updating state in", self.state.path(), e))
    }
}

impl Drop for ZfsPool {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("fsbench: {e}");
        }
    }
}

/// The `zpool create` command line for a layout.
pub fn create_command(name: &str, layout: ZfsLayout, vdevs: &[PathBuf], mountpoint: &Path) -> Cmd {
    let mut cmd = Cmd::new("zpool")
        .args(["create", "-f", "-o", "cachefile=none", "-m"])
        .arg(mountpoint)
        .arg(name)
        .hint(HINT);
    if let Some(kw) = layout.vdev_keyword() {
        cmd = cmd.arg(kw);
    }
    cmd.args(vdevs)
}

/// See [`ZfsPool::export_import`].
pub fn export_import(name: &str, devdir: &Path) -> Result<()> {
    export(name)?;
    if crate::sys::is_root() {
        crate::sys::cache::drop_all_caches()
            .map_err(|e| TestbedError::io("drop_caches", "/proc/sys/vm/drop_caches", e))?;
    }
    import(name, devdir)
}

/// `zpool export NAME`, retrying "busy" briefly (a file closed a moment ago may still be held
/// by FUSE).
pub fn export(name: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match Cmd::new("zpool").args(["export", name]).run() {
            Ok(_) => return Ok(()),
            Err(crate::sys::cmd::CmdError::Failed { ref stderr, .. })
                if stderr.contains("busy") && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => return Err(TestbedError::cmd(format!("exporting zfs pool {name}"), e)),
        }
    }
}

/// `zpool import -o cachefile=none -d DEVDIR NAME`: only the testbed's own devices are scanned.
pub fn import(name: &str, devdir: &Path) -> Result<()> {
    Cmd::new("zpool")
        .args(["import", "-o", "cachefile=none", "-d"])
        .arg(devdir)
        .arg(name)
        .run()
        .map(drop)
        .map_err(|e| TestbedError::cmd(format!("importing zfs pool {name}"), e))
}

/// Destroy pool `name` if it is imported and is fsbench's (name prefix). Returns whether it was.
pub fn destroy_verified(name: &str) -> Result<bool> {
    if !name.starts_with(POOL_PREFIX) {
        return Err(TestbedError::Check(format!(
            "not destroying pool {name}: not an fsbench pool"
        )));
    }
    if !daemon_running() || !imported_pools()?.iter().any(|p| p == name) {
        return Ok(false);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match Cmd::new("zpool").args(["destroy", "-f", name]).run() {
            Ok(_) => return Ok(true),
            Err(crate::sys::cmd::CmdError::Failed { ref stderr, .. })
                if stderr.contains("busy") && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(100))
            }
            Err(e) => return Err(TestbedError::cmd(format!("destroying zfs pool {name}"), e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_command_per_layout() {
        let v: Vec<PathBuf> =
            vec!["/t/zdevs/dev0".into(), "/t/zdevs/dev1".into(), "/t/zdevs/dev2".into()];
        assert_eq!(
            create_command("fsbench_1_0", ZfsLayout::Raidz(3), &v, Path::new("/t/mnt")).cmdline(),
            "zpool create -f -o cachefile=none -m /t/mnt fsbench_1_0 raidz /t/zdevs/dev0 /t/zdevs/dev1 /t/zdevs/dev2"
        );
        assert_eq!(
            create_command("fsbench_1_0", ZfsLayout::Stripe(3), &v, Path::new("/t/mnt")).cmdline(),
            "zpool create -f -o cachefile=none -m /t/mnt fsbench_1_0 /t/zdevs/dev0 /t/zdevs/dev1 /t/zdevs/dev2"
        );
    }

    #[test]
    fn foreign_pools_are_never_destroyed() {
        assert!(destroy_verified("tank").is_err());
    }
}
