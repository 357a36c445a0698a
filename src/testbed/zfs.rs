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
//! The daemon is shared by every zfs testbed of every fsbench process: within a process by a
//! reference count, across processes by a shared `flock` each user holds on
//! `zfs-fuse.users` in root's state directory, with one record (`zfs-fuse.daemon`) for the daemon
//! itself, written before it is started. fsbench starts it only if it is not running; the last
//! user (the one that gets the lock exclusively, under a second lock that serialises start and
//! stop decisions) stops a daemon fsbench started, unless some pool is imported then (another
//! user's, or a kept testbed's), in which case it is left running, still recorded, and a note
//! is printed. A user that crashes drops its lock with its last file descriptor, so
//! `fsbench testbed cleanup` can apply the same rule later.

use super::config::ZfsLayout;
use super::error::{Result, TestbedError};
use super::process::ProcessId;
use super::state::{Resource, StateDir};
use super::zfs_watch as watch;
use crate::state::{Guard, Recorded, Release};
use crate::sys::cmd::Cmd;
use serde::{Deserialize, Serialize};
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
    let out = watch::run(watch::zcmd("zpool").args(["list", "-H", "-o", "name"]), None)
        .map_err(|e| TestbedError::cmd("listing zfs pools", e))?;
    Ok(out.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect())
}

/// The shared record of a zfs-fuse daemon fsbench started (`zfs-fuse.daemon` in root's state
/// directory): one per daemon, not per process, so whichever fsbench process is the last user
/// stops it, and it is never left running without a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonRecord {
    /// The daemon, once its pid file is read.
    pub process: Option<ProcessId>,
    /// The pid file passed with `zfs-fuse -p`.
    pub pidfile: PathBuf,
    /// The fsbench process that started it.
    pub started_by: ProcessId,
}

const DAEMON_RECORD: &str = "zfs-fuse.daemon";
/// Held exclusively while deciding to start or stop the daemon.
const DAEMON_LOCK: &str = "zfs-fuse.lock";
/// Held shared by every fsbench process using the daemon (the kernel drops it when a process
/// dies, so a crashed user never keeps the daemon alive): whoever gets it exclusively is alone.
const USERS_LOCK: &str = "zfs-fuse.users";

/// Where the daemon's record and locks live: the daemon is one per machine, so always root's
/// state directory when root (whatever state directory a testbed records in), else `state`.
fn daemon_state_dir(state: &StateDir) -> StateDir {
    if crate::sys::is_root() {
        StateDir::new(crate::state::ROOT_STATE_DIR)
    } else {
        state.clone()
    }
}

struct DaemonState {
    refs: usize,
    users: Option<std::fs::File>,
    dir: Option<StateDir>,
}

static DAEMON: Mutex<DaemonState> = Mutex::new(DaemonState { refs: 0, users: None, dir: None });

fn daemon_state() -> MutexGuard<'static, DaemonState> {
    DAEMON.lock().unwrap_or_else(|p| p.into_inner())
}

fn state_err(dir: &StateDir) -> impl FnOnce(std::io::Error) -> TestbedError + '_ {
    move |e| TestbedError::io("zfs-fuse record in", dir.path(), e)
}

fn read_record(dir: &StateDir) -> Option<DaemonRecord> {
    dir.read_file(DAEMON_RECORD).ok().and_then(|b| serde_json::from_slice(&b).ok())
}

fn write_record(dir: &StateDir, r: &DaemonRecord) -> std::io::Result<()> {
    dir.write_file(DAEMON_RECORD, &serde_json::to_vec_pretty(r).map_err(std::io::Error::other)?)
}

fn pid_from_file(pidfile: &Path) -> Option<ProcessId> {
    std::fs::read_to_string(pidfile)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .and_then(ProcessId::of)
}

/// A reference to a running zfs-fuse daemon, shared by every zfs testbed of every fsbench
/// process (see [`DaemonRecord`]). The last user stops a daemon fsbench started.
#[derive(Debug)]
pub struct ZfsDaemon {
    released: bool,
}

impl ZfsDaemon {
    /// Use the running daemon, or start one (`zfs-fuse -p PIDFILE --no-kstat-mount`), recording it.
    pub fn ensure(state: &StateDir) -> Result<ZfsDaemon> {
        let mut st = daemon_state();
        if st.refs > 0 {
            st.refs += 1;
            return Ok(ZfsDaemon { released: false });
        }
        let dir = daemon_state_dir(state);
        let _decide = dir
            .lock(DAEMON_LOCK, rustix::fs::FlockOperation::LockExclusive)
            .map_err(state_err(&dir))?;
        if !daemon_running() {
            start_daemon(&dir)?;
        }
        let users = dir
            .lock(USERS_LOCK, rustix::fs::FlockOperation::LockShared)
            .map_err(state_err(&dir))?;
        st.users = Some(users);
        st.dir = Some(dir);
        st.refs = 1;
        Ok(ZfsDaemon { released: false })
    }

    /// Whether fsbench started the running daemon (it has a record).
    pub fn started_by_us(&self) -> bool {
        daemon_state().dir.as_ref().and_then(read_record).is_some()
    }

    /// Release this reference; the last user of all processes stops a daemon fsbench started.
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
        let Some(dir) = st.dir.take() else {
            return Ok(());
        };
        let _decide = dir
            .lock(DAEMON_LOCK, rustix::fs::FlockOperation::LockExclusive)
            .map_err(state_err(&dir))?;
        st.users = None;
        match stop_if_unused_locked(&dir)? {
            Stop::Stopped(_) | Stop::NotOurs | Stop::InUse => Ok(()),
            Stop::PoolsImported(pools, pid) => {
                eprintln!(
                    "fsbench: leaving zfs-fuse (pid {pid}) running: pools {} are imported",
                    pools.join(", ")
                );
                Ok(())
            }
        }
    }
}

impl Drop for ZfsDaemon {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("fsbench: {e}");
        }
    }
}

/// Start zfs-fuse, recorded in the shared record before it exists. Called with the decision
/// lock held.
fn start_daemon(dir: &StateDir) -> Result<()> {
    let pidfile = dir.path().join(format!("zfs-fuse-{}.pid", std::process::id()));
    let mut rec =
        DaemonRecord { process: None, pidfile: pidfile.clone(), started_by: ProcessId::current() };
    write_record(dir, &rec).map_err(state_err(dir))?;
    let _ = dir.remove_file(&pidfile);
    // --no-kstat-mount: otherwise the daemon mounts /zfs-kstat, one more thing to clean up.
    // zfs-fuse daemonises; the command returns once the child is forked.
    if let Err(e) = Cmd::new("zfs-fuse")
        .arg("-p")
        .arg(&pidfile)
        .arg("--no-kstat-mount")
        .hint(HINT)
        .timeout(watch::limit())
        .run()
    {
        let _ = dir.remove_file(&dir.path().join(DAEMON_RECORD));
        return Err(TestbedError::cmd("starting zfs-fuse", e));
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if rec.process.is_none() {
            rec.process = pid_from_file(&pidfile);
            if rec.process.is_some() {
                write_record(dir, &rec).map_err(state_err(dir))?;
            }
        }
        if rec.process.is_some() && daemon_running() && imported_pools().is_ok() {
            return Ok(());
        }
        if Instant::now() > deadline {
            if let Some(p) = rec.process {
                p.terminate(Duration::from_secs(5));
            }
            if rec.process.is_none_or(|p| !p.is_alive()) {
                let _ = dir.remove_file(&pidfile);
                let _ = dir.remove_file(&dir.path().join(DAEMON_RECORD));
            }
            return Err(TestbedError::Check(format!(
                "zfs-fuse was started but its socket {SOCKET} did not answer within 15 s"
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

enum Stop {
    /// Stopped (or found gone); what it was.
    Stopped(String),
    /// No record: not started by fsbench (or already handled).
    NotOurs,
    /// Another fsbench process uses it.
    InUse,
    /// Pools are imported (someone else's, or a kept testbed's): left running.
    PoolsImported(Vec<String>, u32),
}

/// With the decision lock held: stop the recorded daemon if no fsbench process uses it and no
/// pool is imported; drop the record when the daemon is gone.
fn stop_if_unused_locked(dir: &StateDir) -> Result<Stop> {
    let Some(rec) = read_record(dir) else {
        return Ok(Stop::NotOurs);
    };
    let alone = match dir.lock(USERS_LOCK, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(f) => Some(f),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
        Err(e) => return Err(state_err(dir)(e)),
    };
    if alone.is_none() {
        return Ok(Stop::InUse);
    }
    let process = rec.process.or_else(|| pid_from_file(&rec.pidfile));
    let forget = |what: String| -> Result<Stop> {
        let _ = dir.remove_file(&rec.pidfile);
        dir.remove_file(&dir.path().join(DAEMON_RECORD)).map_err(state_err(dir))?;
        Ok(Stop::Stopped(what))
    };
    match process {
        None if rec.started_by.is_alive() => Ok(Stop::InUse),
        None => forget("zfs-fuse record (daemon gone)".into()),
        Some(p) if !p.is_alive() => forget(format!("zfs-fuse record (pid {} gone)", p.pid)),
        Some(p) if p.comm().as_deref() != Some("zfs-fuse") => {
            forget(format!("zfs-fuse record (pid {} is another program now)", p.pid))
        }
        Some(p) => {
            let pools = imported_pools()?;
            if !pools.is_empty() {
                return Ok(Stop::PoolsImported(pools, p.pid));
            }
            if !stop_daemon(&p) {
                return Err(TestbedError::Check(format!(
                    "zfs-fuse pid {} did not stop after SIGTERM and SIGKILL",
                    p.pid
                )));
            }
            forget(format!("zfs-fuse daemon pid {}", p.pid))
        }
    }
}

/// For `fsbench testbed cleanup`: stop the recorded daemon if no live fsbench process uses it
/// and no pool is imported. Returns what was removed.
pub fn stop_unused_daemon(state: &StateDir) -> Result<Option<String>> {
    let dir = daemon_state_dir(state);
    if read_record(&dir).is_none() {
        return Ok(None);
    }
    let _decide = dir
        .lock(DAEMON_LOCK, rustix::fs::FlockOperation::LockExclusive)
        .map_err(state_err(&dir))?;
    match stop_if_unused_locked(&dir)? {
        Stop::Stopped(what) => Ok(Some(what)),
        _ => Ok(None),
    }
}

/// Take over a daemon named by a per-process record of an older fsbench into the shared record,
/// unless a shared record exists already.
pub fn adopt_daemon(state: &StateDir, process: Option<ProcessId>, pidfile: &Path) -> Result<()> {
    let dir = daemon_state_dir(state);
    let _decide = dir
        .lock(DAEMON_LOCK, rustix::fs::FlockOperation::LockExclusive)
        .map_err(state_err(&dir))?;
    if read_record(&dir).is_some() {
        return Ok(());
    }
    let process = process.or_else(|| pid_from_file(pidfile));
    match process {
        Some(p) if p.is_alive() && p.comm().as_deref() == Some("zfs-fuse") => write_record(
            &dir,
            &DaemonRecord { process: Some(p), pidfile: pidfile.to_path_buf(), started_by: p },
        )
        .map_err(state_err(&dir)),
        _ => Ok(()),
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
pub type ZfsPool = Guard<Pool>;

/// What a [`ZfsPool`] owns.
#[derive(Debug)]
pub struct Pool {
    name: String,
    mountpoint: PathBuf,
    devdir: PathBuf,
}

impl Release for Pool {
    type Error = TestbedError;
    fn release(&mut self) -> Result<()> {
        destroy_verified(&self.name)?;
        if super::mountinfo::is_mounted(&self.mountpoint) {
            return Err(TestbedError::Check(format!(
                "{} is still mounted after destroying pool {}",
                self.mountpoint.display(),
                self.name
            )));
        }
        Ok(())
    }
    fn state_error(dir: &Path, e: std::io::Error) -> TestbedError {
        TestbedError::io("updating state in", dir, e)
    }
}

impl Guard<Pool> {
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
        let rec = Recorded::new(state, Resource::ZfsPool { name: name.to_string() })
            .map_err(|e| TestbedError::io("recording state in", state.path(), e))?;
        let guard = Guard::new(
            Pool {
                name: name.to_string(),
                mountpoint: mountpoint.to_path_buf(),
                devdir: devdir.to_path_buf(),
            },
            rec,
        );
        let cmd = create_command(name, layout, vdevs, mountpoint);
        // On failure the guard's Drop destroys a pool that came into being anyway.
        watch::run(cmd, Some(name)).map_err(|e| TestbedError::cmd("creating zfs pool", e))?;
        for (k, v) in properties {
            let set = watch::zcmd("zfs").arg("set").arg(format!("{k}={v}")).arg(name);
            watch::run(set, Some(name))
                .map_err(|e| TestbedError::cmd(format!("setting zfs property {k}={v}"), e))?;
        }
        Ok(guard)
    }
}

impl Pool {
    /// The pool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The directory of symlinks to the pool's devices (for `zpool import -d`).
    pub fn devdir(&self) -> &Path {
        &self.devdir
    }

    /// Export and re-import the pool: the daemon drops everything it cached for it (ARC), and
    /// the FUSE mount (and its kernel page cache) goes away and comes back. Between the two,
    /// the host's caches are dropped so the vdevs' block-device pages go too.
    pub fn export_import(&self) -> Result<()> {
        export_import(&self.name, &self.devdir)
    }
}

/// The `zpool create` command line for a layout.
pub fn create_command(name: &str, layout: ZfsLayout, vdevs: &[PathBuf], mountpoint: &Path) -> Cmd {
    let mut cmd = watch::zcmd("zpool")
        .args(["create", "-f", "-o", "cachefile=none", "-m"])
        .arg(mountpoint)
        .arg(name);
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
        match watch::run(watch::zcmd("zpool").args(["export", name]), Some(name)) {
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
    let cmd =
        watch::zcmd("zpool").args(["import", "-o", "cachefile=none", "-d"]).arg(devdir).arg(name);
    watch::run(cmd, Some(name))
        .map(drop)
        .map_err(|e| TestbedError::cmd(format!("importing zfs pool {name}"), e))
}

/// The leaf devices of imported pool `name` as `zpool status` names them (fsbench's pools are
/// made on `DEVDIR/devN` links, so these are paths); `None` if the pool is not imported.
pub fn pool_vdevs(name: &str) -> Result<Option<Vec<PathBuf>>> {
    if !daemon_running() || !imported_pools()?.iter().any(|p| p == name) {
        return Ok(None);
    }
    let out = watch::run(watch::zcmd("zpool").args(["status", name]), Some(name))
        .map_err(|e| TestbedError::cmd(format!("reading the devices of zfs pool {name}"), e))?;
    Ok(Some(parse_vdevs(&out)))
}

/// Leaf device paths from `zpool status` output (the config lines that start with `/`).
fn parse_vdevs(status: &str) -> Vec<PathBuf> {
    status
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect()
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
        match watch::run(watch::zcmd("zpool").args(["destroy", "-f", name]), Some(name)) {
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
    fn vdevs_from_status() {
        let st = "  pool: fsbench_1_0\n state: ONLINE\nconfig:\n\n\tNAME  STATE\n\tfsbench_1_0  ONLINE\n\t  raidz1-0  ONLINE\n\t    /t/zdevs/dev0  ONLINE 0 0 0\n\t    /t/zdevs/dev1  ONLINE 0 0 0\n\nerrors: No known data errors\n";
        assert_eq!(
            parse_vdevs(st),
            [PathBuf::from("/t/zdevs/dev0"), PathBuf::from("/t/zdevs/dev1")]
        );
    }

    #[test]
    fn foreign_pools_are_never_destroyed() {
        assert!(destroy_verified("tank").is_err());
    }
}
