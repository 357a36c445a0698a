//! The state file: every resource fsbench creates is written down before (or, when its name is
//! only known afterwards, also just after) it exists, so `fsbench testbed cleanup` can remove
//! what a crash or `kill -9` left behind.
//!
//! Layout: one JSON file per live fsbench process, `STATE_DIR/PID.json`, holding the owner's pid
//! and start time and the resources in creation order. Each write goes to a temporary file that
//! is fsync'd and renamed over the record, then the directory is fsync'd: a crash at any point
//! leaves either the old or the new record, never a torn one. Several testbeds in one process
//! (tests run in threads) share the process's record through an in-process registry.
//!
//! The default state directory is [`default_state_dir`], independent of `--workdir`, so one
//! `fsbench testbed cleanup` finds everything whatever work directory a crashed run used.

use super::process::ProcessId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Where records live unless the caller says otherwise.
pub fn default_state_dir() -> PathBuf {
    PathBuf::from("/var/tmp/fsbench/state")
}

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
    /// A zfs-fuse daemon fsbench started. `process` is `None` until its pid file is read.
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
            Resource::ZfsDaemon { process: Some(p), .. } => {
                write!(f, "zfs-fuse daemon pid {}", p.pid)
            }
            Resource::ZfsDaemon { process: None, pidfile } => {
                write!(f, "zfs-fuse daemon (pid file {})", pidfile.display())
            }
            Resource::TracingInstance { path } => write!(f, "tracing instance {}", path.display()),
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

/// The record of one fsbench process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessRecord {
    /// The process that created the resources.
    pub owner: ProcessId,
    /// Resources in creation order.
    pub entries: Vec<Entry>,
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

/// A state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    dir: PathBuf,
}

impl Default for StateDir {
    fn default() -> Self {
        StateDir::new(default_state_dir())
    }
}

impl StateDir {
    /// Records under `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> StateDir {
        StateDir { dir: dir.into() }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The record file of this process.
    pub fn own_file(&self) -> PathBuf {
        self.dir.join(format!("{}.json", std::process::id()))
    }

    /// Append `resource` to this process's record and persist it before returning.
    pub fn record(&self, resource: Resource) -> io::Result<RecordId> {
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut reg = registry();
        if !reg.contains_key(&self.dir) {
            self.claim_own_file()?;
            reg.insert(
                self.dir.clone(),
                ProcessRecord { owner: ProcessId::current(), entries: Vec::new() },
            );
        }
        let rec = reg.get_mut(&self.dir).expect("inserted above");
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
            match fs::remove_file(self.own_file()) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            return sync_dir(&self.dir);
        }
        let snapshot = rec.clone();
        self.write_own(&snapshot)
    }

    /// Every record file in the directory (this process's included), with its path.
    pub fn read_all(&self) -> io::Result<Vec<(PathBuf, ProcessRecord)>> {
        let mut out = Vec::new();
        let rd = match fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(e),
        };
        for ent in rd {
            let path = ent?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = fs::read_to_string(&path)?;
            let rec: ProcessRecord = serde_json::from_str(&text).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))
            })?;
            out.push((path, rec));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Write `rec` to `path` atomically (temp file, fsync, rename, fsync directory).
    pub fn write_record(&self, path: &Path, rec: &ProcessRecord) -> io::Result<()> {
        let json = serde_json::to_vec_pretty(rec).map_err(io::Error::other)?;
        let tmp = path.with_extension("json.tmp");
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&json)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        sync_dir(&self.dir)
    }

    fn write_own(&self, rec: &ProcessRecord) -> io::Result<()> {
        self.write_record(&self.own_file(), rec)
    }

    /// Create the directory; move aside a record left by an earlier process with our pid.
    fn claim_own_file(&self) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let own = self.own_file();
        if let Ok(text) = fs::read_to_string(&own) {
            let stale = serde_json::from_str::<ProcessRecord>(&text)
                .map(|r| r.owner != ProcessId::current())
                .unwrap_or(true);
            if stale {
                let aside = self.dir.join(format!(
                    "{}-{}.json",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_nanos())
                        .unwrap_or(0)
                ));
                fs::rename(&own, aside)?;
            }
        }
        Ok(())
    }

    /// An exclusive lock serialising cleanups of this directory (held until dropped).
    pub fn lock_for_cleanup(&self) -> io::Result<File> {
        fs::create_dir_all(&self.dir)?;
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(".cleanup.lock"))?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)?;
        Ok(f)
    }
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir) {
        Ok(d) => d.sync_all(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
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
        let sd = StateDir::new(tmp.path());
        let old = ProcessRecord {
            owner: ProcessId { pid: std::process::id(), start_ticks: 1 },
            entries: vec![Entry {
                id: 1,
                resource: Resource::ZfsPool { name: "fsbench_old".into() },
            }],
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
