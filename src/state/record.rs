//! State records: every resource fsbench creates is written down before (or, when its name is
//! only known afterwards, also just after) it exists, so `fsbench testbed cleanup` can remove
//! what a crash or `kill -9` left behind.
//!
//! Layout: one JSON file per live fsbench process, `STATE_DIR/PID.json`, holding the owner's pid
//! and start time and the resources in creation order; a testbed kept by `fsbench testbed up`
//! moves to a record of its own, `STATE_DIR/kept-NAME.json`, which only `fsbench testbed down`
//! removes. Each write goes to an `O_EXCL | O_NOFOLLOW` temporary file that is fsync'd and
//! renamed over the record, then the directory is fsync'd: a crash at any point leaves either the
//! old or the new record, never a torn one, and a planted link is never written through. Every
//! use checks the directory first ([`crate::sys::secure`]). Several testbeds in one process (tests run
//! in threads) share the process's record through an in-process registry.

use super::process::ProcessId;
use crate::sys::secure;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Where records live unless the caller says otherwise.
///
/// `$FSBENCH_STATE_DIR` if set ([`STATE_DIR_ENV`]); for root: `/var/lib/fsbench/state`. `/var/lib` is where the FHS puts a program's persistent
/// state, writable only by root; persistent (not `/run`) because some recorded resources
/// survive a reboot (image files and work directories on disk) and must still be found and
/// removed afterwards, while loop devices, mounts and daemons that a reboot took are simply
/// found gone. Not `/var/tmp` or `/tmp`: anyone can create a name there first.
///
/// For other users (who can run `fsbench run --dir` without root): `$XDG_STATE_HOME/fsbench/state`,
/// else `~/.local/state/fsbench/state` (the XDG base directory rule).
pub fn default_state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(STATE_DIR_ENV).map(PathBuf::from) {
        if d.is_absolute() {
            return d;
        }
    }
    if rustix::process::geteuid().is_root() {
        return PathBuf::from(ROOT_STATE_DIR);
    }
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from) {
        if x.is_absolute() {
            return x.join("fsbench").join("state");
        }
    }
    match std::env::var_os("HOME").map(PathBuf::from) {
        Some(h) if h.is_absolute() => h.join(".local/state/fsbench/state"),
        _ => PathBuf::from(ROOT_STATE_DIR),
    }
}

/// Environment variable naming another state directory (absolute; checked like the default).
/// For tests and for several independent fsbench installations; the zfs-fuse daemon's shared
/// record stays in [`ROOT_STATE_DIR`] whatever it says, since there is one daemon per machine.
pub const STATE_DIR_ENV: &str = "FSBENCH_STATE_DIR";

/// Where fsbench 0.1 kept its records (see [`StateDir::legacy`]).
pub const LEGACY_STATE_DIR: &str = "/var/tmp/fsbench/state";

/// Root's state directory (see [`default_state_dir`]).
pub const ROOT_STATE_DIR: &str = "/var/lib/fsbench/state";

/// A resource fsbench created and must remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Resource {
    /// A directory fsbench created (removed only if empty but for symlinks it made).
    Directory {
        /// Absolute path.
        path: PathBuf,
    },
    /// A sparse image file.
    ImageFile {
        /// Absolute path.
        path: PathBuf,
    },
    /// A loop device attached to one of our images. `device` is `None` between the record and
    /// `losetup` printing the name; cleanup then finds it by backing file.
    LoopDevice {
        /// `/dev/loopN`, once known.
        device: Option<PathBuf>,
        /// The image it is attached to: cleanup detaches only a device backed by this file.
        backing_file: PathBuf,
    },
    /// A mount fsbench made.
    Mount {
        /// Mount point.
        mountpoint: PathBuf,
        /// Mount source (`/dev/loopN`, or `fsbench` for tmpfs).
        source: String,
        /// Filesystem type.
        fstype: String,
    },
    /// A zfs pool (name always starts with `fsbench_`).
    ZfsPool {
        /// Pool name.
        name: String,
    },
    /// A zfs-fuse daemon fsbench started (records of fsbench before the shared daemon record,
    /// see [`crate::testbed::zfs`]). `process` is `None` until its pid file is read.
    ZfsDaemon {
        /// The daemon's identity once known.
        process: Option<ProcessId>,
        /// The pid file passed with `zfs-fuse -p`.
        pidfile: PathBuf,
    },
    /// A tracing instance (`/sys/kernel/tracing/instances/fsbench-*`).
    TracingInstance {
        /// Its directory.
        path: PathBuf,
    },
    /// A command fsbench runs (`fsbench profile`'s), leader of its own process group. Recorded
    /// before it is started (`process` is `None` until its pid is known): after a `kill -9` of
    /// fsbench, cleanup kills what is left of its group, if the leader is still that process.
    Command {
        /// The group leader's identity, once started.
        process: Option<ProcessId>,
        /// The command, for messages.
        argv0: String,
    },
    /// The work directory a run makes in `--dir` (`.fsbench-PID-N`), recorded before it is made.
    /// `dev`/`ino` identify it once made: cleanup removes only that very directory (through fds,
    /// never following a link), and without them only an empty one.
    Workspace {
        /// Absolute path.
        path: PathBuf,
        /// Device number, once made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dev: Option<u64>,
        /// Inode number, once made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ino: Option<u64>,
    },
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Directory { path } => write!(f, "directory {}", path.display()),
            Resource::ImageFile { path } => write!(f, "image {}", path.display()),
            Resource::LoopDevice { device: Some(d), backing_file } => {
                write!(f, "loop device {} ({})", d.display(), backing_file.display())
            }
            Resource::LoopDevice { device: None, backing_file } => {
                write!(f, "loop device for {}", backing_file.display())
            }
            Resource::Mount { mountpoint, source, fstype } => {
                write!(f, "{fstype} mount {} of {source}", mountpoint.display())
            }
            Resource::ZfsPool { name } => write!(f, "zfs pool {name}"),
            Resource::Command { process: Some(p), argv0 } => {
                write!(f, "profiled command {argv0} (process group {})", p.pid)
            }
            Resource::Command { process: None, argv0 } => {
                write!(f, "profiled command {argv0} (not started)")
            }
            Resource::ZfsDaemon { process: Some(p), .. } => {
                write!(f, "zfs-fuse daemon pid {}", p.pid)
            }
            Resource::ZfsDaemon { process: None, pidfile } => {
                write!(f, "zfs-fuse daemon (pid file {})", pidfile.display())
            }
            Resource::TracingInstance { path } => write!(f, "tracing instance {}", path.display()),
            Resource::Workspace { path, .. } => write!(f, "work directory {}", path.display()),
        }
    }
}

/// One recorded resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Identifier within the owner's record.
    pub id: u64,
    /// The resource.
    pub resource: Resource,
}

/// The record of one fsbench process, or of one kept testbed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessRecord {
    /// The process that created the resources.
    pub owner: ProcessId,
    /// Resources in creation order.
    pub entries: Vec<Entry>,
    /// Set for a testbed kept by `fsbench testbed up`: its name. Such a record is removed only
    /// by `fsbench testbed down NAME` (or `--all`), never by `cleanup`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
}

impl ProcessRecord {
    /// An empty record of `owner`.
    pub fn new(owner: ProcessId, entries: Vec<Entry>) -> ProcessRecord {
        ProcessRecord { owner, entries, kept: None }
    }
}

/// Handle to one recorded resource, used to update or forget it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordId {
    dir: PathBuf,
    id: u64,
}

/// This process's records, keyed by state directory. One lock serialises all writes.
static REGISTRY: Mutex<BTreeMap<PathBuf, ProcessRecord>> = Mutex::new(BTreeMap::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn registry() -> MutexGuard<'static, BTreeMap<PathBuf, ProcessRecord>> {
    // A panic while holding the lock leaves the map consistent (every write is whole).
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Prefix of the record file of a kept testbed.
pub const KEPT_PREFIX: &str = "kept-";

/// A state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    dir: PathBuf,
    /// A state directory of fsbench 0.1 (`/var/tmp/fsbench/state`, made 0755): trusted only if
    /// nobody but root could have written it ([`secure::open_trusted_dir`]), never created.
    legacy: bool,
}

impl Default for StateDir {
    fn default() -> Self {
        StateDir::new(default_state_dir())
    }
}

fn name_of(path: &Path) -> io::Result<&str> {
    path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("bad record path {}", path.display()))
    })
}

impl StateDir {
    /// Records under `dir` (created 0700 on first write; checked on every use).
    pub fn new(dir: impl Into<PathBuf>) -> StateDir {
        StateDir { dir: dir.into(), legacy: false }
    }

    /// The state directory of fsbench 0.1 ([`LEGACY_STATE_DIR`]), for `fsbench testbed cleanup`
    /// after an upgrade: read and cleaned only if root alone could have written it.
    pub fn legacy() -> StateDir {
        StateDir { dir: PathBuf::from(LEGACY_STATE_DIR), legacy: true }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Open the directory after checking it (owner, mode, no links, safe parents); creates it
    /// when `create`. See [`secure::open_private_dir`].
    pub fn open(&self, create: bool) -> io::Result<OwnedFd> {
        if self.legacy {
            return secure::open_trusted_dir(&self.dir, false);
        }
        secure::open_private_dir(&self.dir, create)
    }

    /// The record file of this process.
    pub fn own_file(&self) -> PathBuf {
        self.dir.join(own_name())
    }

    /// Append `resource` to this process's record and persist it before returning.
    pub fn record(&self, resource: Resource) -> io::Result<RecordId> {
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut reg = registry();
        if !reg.contains_key(&self.dir) {
            self.claim_own_file()?;
            reg.insert(self.dir.clone(), ProcessRecord::new(ProcessId::current(), Vec::new()));
        }
        let rec = reg.get_mut(&self.dir).ok_or_else(|| io::Error::other("registry"))?;
        rec.entries.push(Entry { id, resource });
        let snapshot = rec.clone();
        if let Err(e) = self.write_own(&snapshot) {
            if let Some(rec) = reg.get_mut(&self.dir) {
                rec.entries.retain(|e| e.id != id);
            }
            return Err(e);
        }
        Ok(RecordId { dir: self.dir.clone(), id })
    }

    /// Replace a recorded resource (e.g. once a loop device's name is known).
    pub fn update(&self, rid: &RecordId, resource: Resource) -> io::Result<()> {
        let mut reg = registry();
        let Some(rec) = reg.get_mut(&rid.dir) else {
            return Ok(());
        };
        if let Some(e) = rec.entries.iter_mut().find(|e| e.id == rid.id) {
            e.resource = resource;
        }
        let snapshot = rec.clone();
        self.write_own(&snapshot)
    }

    /// Drop a resource from the record (it has been removed). The file goes when it is empty.
    pub fn forget(&self, rid: &RecordId) -> io::Result<()> {
        let mut reg = registry();
        let Some(rec) = reg.get_mut(&rid.dir) else {
            return Ok(());
        };
        rec.entries.retain(|e| e.id != rid.id);
        if rec.entries.is_empty() {
            reg.remove(&rid.dir);
            let dir = self.open(false)?;
            secure::unlink(dir.as_fd(), &own_name())?;
            return rustix::fs::fsync(&dir).map_err(Into::into);
        }
        let snapshot = rec.clone();
        self.write_own(&snapshot)
    }

    /// Move the resources `ids` of this process to a record of their own named `name`
    /// (`kept-NAME.json`) that outlives the process and that `cleanup` leaves alone. The kept
    /// record is written before the entries leave this process's record, so a crash in between
    /// leaves them in both (cleanup skips what a kept record names).
    pub fn keep(&self, ids: &[RecordId], name: &str) -> io::Result<PathBuf> {
        let mut reg = registry();
        let Some(rec) = reg.get_mut(&self.dir) else {
            return Err(io::Error::other("nothing recorded to keep"));
        };
        let entries: Vec<Entry> =
            rec.entries.iter().filter(|e| ids.iter().any(|i| i.id == e.id)).cloned().collect();
        let kept =
            ProcessRecord { owner: ProcessId::current(), entries, kept: Some(name.to_string()) };
        let path = self.dir.join(format!("{KEPT_PREFIX}{name}.json"));
        self.write_record(&path, &kept)?;
        rec.entries.retain(|e| !ids.iter().any(|i| i.id == e.id));
        if rec.entries.is_empty() {
            reg.remove(&self.dir);
            let dir = self.open(false)?;
            secure::unlink(dir.as_fd(), &own_name())?;
        } else {
            let snapshot = rec.clone();
            self.write_own(&snapshot)?;
        }
        Ok(path)
    }

    /// Every record file in the directory (this process's included), with its path.
    pub fn read_all(&self) -> io::Result<Vec<(PathBuf, ProcessRecord)>> {
        let mut out = Vec::new();
        let dir = match self.open(false) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for (name, _) in secure::list(dir.as_fd())? {
            if !name.ends_with(".json") || name.starts_with('.') {
                continue;
            }
            let path = self.dir.join(&name);
            // Trusted only if written by us (root): a record another uid owns was not.
            match rustix::fs::statat(&dir, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if st.st_uid != rustix::process::geteuid().as_raw() => {
                    eprintln!(
                        "fsbench: warning: {} belongs to uid {}, not to fsbench's uid: ignored",
                        path.display(),
                        st.st_uid
                    );
                    continue;
                }
                _ => {}
            }
            let text = match secure::read_regular(dir.as_fd(), &name) {
                Ok(t) => t,
                // Its process ended and removed it between the listing and the read.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
            };
            let rec: ProcessRecord = serde_json::from_slice(&text).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))
            })?;
            out.push((path, rec));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Remove the temporary files (`.NAME.PID.N.tmp`, see [`secure::create_temp`]) of state
    /// writes that never finished: their writer is gone (`kill -9` during the write), or they
    /// are older than 10 minutes (a write takes milliseconds). A record is written before what
    /// it names is made, so an unfinished write named nothing that exists. Returns their names.
    pub fn remove_stale_temps(&self) -> io::Result<Vec<String>> {
        let dir = match self.open(false) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let mut removed = Vec::new();
        for (name, ft) in secure::list(dir.as_fd())? {
            if ft != rustix::fs::FileType::RegularFile
                || !name.starts_with('.')
                || !name.ends_with(".tmp")
            {
                continue;
            }
            // `.NAME.PID.RAND.tmp`: the pid is the second field from the end.
            let mut parts = name.rsplit('.');
            let pid = parts.nth(2).and_then(|p| p.parse::<i32>().ok());
            let alive = pid.is_some_and(|p| {
                rustix::process::Pid::from_raw(p)
                    .is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
            });
            let old =
                rustix::fs::statat(&dir, name.as_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| now - st.st_mtime > 600);
            if !alive || old {
                secure::unlink(dir.as_fd(), &name)?;
                removed.push(name);
            }
        }
        Ok(removed)
    }

    /// Write `rec` to `path` (a file in this directory) atomically.
    pub fn write_record(&self, path: &Path, rec: &ProcessRecord) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(rec).map_err(io::Error::other)?;
        self.write_file(name_of(path)?, &json)
    }

    /// Write the file `name` in this directory atomically (see [`secure::write_atomic`]).
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let dir = self.open(true)?;
        secure::write_atomic(dir.as_fd(), name, bytes, 0o600)
    }

    /// Read the regular file `name` in this directory (never through a link).
    pub fn read_file(&self, name: &str) -> io::Result<Vec<u8>> {
        let dir = self.open(false)?;
        secure::read_regular(dir.as_fd(), name)
    }

    /// Remove the file at `path` (in this directory); a missing file is fine.
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        let dir = match self.open(false) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        secure::unlink(dir.as_fd(), name_of(path)?)?;
        rustix::fs::fsync(&dir).map_err(Into::into)
    }

    fn write_own(&self, rec: &ProcessRecord) -> io::Result<()> {
        self.write_record(&self.own_file(), rec)
    }

    /// Create the directory; move aside a record left by an earlier process with our pid.
    fn claim_own_file(&self) -> io::Result<()> {
        let dir = self.open(true)?;
        if let Ok(text) = secure::read_regular(dir.as_fd(), &own_name()) {
            let stale = serde_json::from_slice::<ProcessRecord>(&text)
                .map(|r| r.owner != ProcessId::current())
                .unwrap_or(true);
            if stale {
                let aside = format!(
                    "{}-{}.json",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_nanos())
                        .unwrap_or(0)
                );
                rustix::fs::renameat(&dir, own_name().as_str(), &dir, aside.as_str())?;
            }
        }
        Ok(())
    }

    /// An exclusive lock serialising cleanups of this directory (held until dropped).
    pub fn lock_for_cleanup(&self) -> io::Result<File> {
        self.lock(".cleanup.lock", rustix::fs::FlockOperation::LockExclusive)
    }

    /// Open (creating) the lock file `name` in this directory, never through a link, and take
    /// the `flock` `op` on it (held until the file is dropped).
    pub fn lock(&self, name: &str, op: rustix::fs::FlockOperation) -> io::Result<File> {
        let dir = self.open(true)?;
        let f = secure::open_lock(dir.as_fd(), name)?;
        rustix::fs::flock(&f, op)?;
        Ok(f)
    }
}

fn own_name() -> String {
    format!("{}.json", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_in_order_and_forget_removes_file() {
        let tmp = tempfile::tempdir().unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        let img = sd.record(Resource::ImageFile { path: "/var/tmp/x/dev0.img".into() }).unwrap();
        let lo = sd
            .record(Resource::LoopDevice {
                device: None,
                backing_file: "/var/tmp/x/dev0.img".into(),
            })
            .unwrap();
        sd.update(
            &lo,
            Resource::LoopDevice {
                device: Some("/dev/loop7".into()),
                backing_file: "/var/tmp/x/dev0.img".into(),
            },
        )
        .unwrap();
        let pool = sd.record(Resource::ZfsPool { name: "fsbench_1_0".into() }).unwrap();

        let all = sd.read_all().unwrap();
        assert_eq!(all.len(), 1);
        let (path, rec) = &all[0];
        assert_eq!(path, &sd.own_file());
        assert_eq!(rec.owner, ProcessId::current());
        let kinds: Vec<_> = rec.entries.iter().map(|e| e.resource.clone()).collect();
        assert_eq!(
            kinds,
            [
                Resource::ImageFile { path: "/var/tmp/x/dev0.img".into() },
                Resource::LoopDevice {
                    device: Some("/dev/loop7".into()),
                    backing_file: "/var/tmp/x/dev0.img".into()
                },
                Resource::ZfsPool { name: "fsbench_1_0".into() },
            ]
        );
        assert!(!sd.dir.join(format!("{}.json.tmp", std::process::id())).exists());

        sd.forget(&pool).unwrap();
        sd.forget(&img).unwrap();
        assert_eq!(sd.read_all().unwrap()[0].1.entries.len(), 1);
        sd.forget(&lo).unwrap();
        assert!(!sd.own_file().exists(), "an empty record is removed");
        assert!(sd.read_all().unwrap().is_empty());
    }

    #[test]
    fn stale_record_with_our_pid_is_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        let old = ProcessRecord {
            owner: ProcessId { pid: std::process::id(), start_ticks: 1 },
            entries: vec![Entry {
                id: 1,
                resource: Resource::ZfsPool { name: "fsbench_old".into() },
            }],
            kept: None,
        };
        sd.write_record(&sd.own_file(), &old).unwrap();
        let id = sd.record(Resource::Directory { path: "/var/tmp/fsbench/tb".into() }).unwrap();
        let all = sd.read_all().unwrap();
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(all.iter().any(|(_, r)| r == &old));
        sd.forget(&id).unwrap();
        assert_eq!(
            sd.read_all().unwrap(),
            vec![(all.iter().find(|(_, r)| r == &old).unwrap().0.clone(), old)]
        );
    }

    #[test]
    fn json_shape_is_tagged() {
        let r = Resource::Mount {
            mountpoint: "/m".into(),
            source: "/dev/loop1".into(),
            fstype: "xfs".into(),
        };
        let j = serde_json::to_string(&r).unwrap();
        assert!(j.contains("\"type\":\"mount\""), "{j}");
        assert_eq!(serde_json::from_str::<Resource>(&j).unwrap(), r);
    }
}
