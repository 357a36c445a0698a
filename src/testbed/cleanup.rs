//! `fsbench testbed cleanup`: remove what crashed fsbench processes left, and nothing else.
//!
//! Only records of processes that are gone (pid absent, or reused by a process with another
//! start time) are read. Their resources are removed in reverse creation order, each one only
//! after checking it is fsbench's: a loop device only if its backing file is an image in the
//! same record, a mount only if its source and type match the record, a pool only if its name
//! has the `fsbench_` prefix, a daemon only if pid, start time and name match, a tracing
//! instance only under `.../tracing/instances/fsbench-`. zfs-fuse daemons are handled last, once
//! every dead record's pools are gone, and only stopped when no pool at all is imported.

use super::error::{Result, TestbedError};
use super::loopdev;
use super::mountinfo;
use super::process::ProcessId;
use super::state::{Entry, ProcessRecord, Resource, StateDir};
use super::zfs;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// What a cleanup did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct CleanupReport {
    /// Resources removed.
    pub removed: Vec<String>,
    /// Recorded resources that no longer existed.
    pub already_gone: Vec<String>,
    /// Recorded resources left alone because they could not be verified as fsbench's, with why.
    pub not_ours: Vec<String>,
    /// Resources whose removal failed (kept in the record for a later attempt), with the error.
    pub failed: Vec<String>,
    /// Pids of fsbench processes still running, whose records were not touched.
    pub live_processes: Vec<u32>,
}

impl CleanupReport {
    /// Whether nothing failed.
    pub fn is_clean(&self) -> bool {
        self.failed.is_empty()
    }
}

impl fmt::Display for CleanupReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.removed.is_empty() && self.failed.is_empty() && self.not_ours.is_empty() {
            writeln!(f, "nothing to clean up")?;
        }
        for (title, list) in [
            ("removed", &self.removed),
            ("already gone", &self.already_gone),
            ("left alone (not verifiably fsbench's)", &self.not_ours),
            ("FAILED", &self.failed),
        ] {
            for item in list {
                writeln!(f, "{title}: {item}")?;
            }
        }
        if !self.live_processes.is_empty() {
            let pids: Vec<String> = self.live_processes.iter().map(u32::to_string).collect();
            writeln!(f, "untouched: resources of running fsbench processes {}", pids.join(", "))?;
        }
        Ok(())
    }
}

enum Outcome {
    Removed,
    Gone,
    NotOurs(String),
}

/// Clean up the records in `state` of processes that are no longer running.
pub fn cleanup(state: &StateDir) -> Result<CleanupReport> {
    let _lock =
        state.lock_for_cleanup().map_err(|e| TestbedError::io("locking", state.path(), e))?;
    let mut report = CleanupReport::default();
    let records =
        state.read_all().map_err(|e| TestbedError::io("reading state in", state.path(), e))?;
    let mut dead: Vec<(PathBuf, ProcessRecord)> = Vec::new();
    for (path, rec) in records {
        if rec.owner.is_alive() {
            report.live_processes.push(rec.owner.pid);
        } else {
            dead.push((path, rec));
        }
    }
    // Pass 1: everything but daemons, newest first. Pass 2: daemons.
    let mut remaining: Vec<Vec<Entry>> = Vec::new();
    for (_, rec) in &dead {
        let images: Vec<&Path> = rec
            .entries
            .iter()
            .filter_map(|e| match &e.resource {
                Resource::ImageFile { path } => Some(path.as_path()),
                _ => None,
            })
            .collect();
        let mut keep = Vec::new();
        for e in rec.entries.iter().rev() {
            if matches!(e.resource, Resource::ZfsDaemon { .. }) {
                keep.push(e.clone());
                continue;
            }
            if !settle(&e.resource, remove(&e.resource, &images, state), &mut report) {
                keep.push(e.clone());
            }
        }
        remaining.push(keep);
    }
    for keep in &mut remaining {
        keep.retain(|e| match &e.resource {
            Resource::ZfsDaemon { .. } => {
                !settle(&e.resource, remove(&e.resource, &[], state), &mut report)
            }
            _ => true,
        });
        keep.reverse();
    }
    for ((path, rec), keep) in dead.iter().zip(remaining) {
        let res = if keep.is_empty() {
            std::fs::remove_file(path)
        } else {
            state.write_record(path, &ProcessRecord { owner: rec.owner, entries: keep })
        };
        res.map_err(|e| TestbedError::io("updating state", path, e))?;
    }
    Ok(report)
}

/// File the outcome in the report; returns whether the entry is done with.
fn settle(r: &Resource, outcome: Result<Outcome>, report: &mut CleanupReport) -> bool {
    match outcome {
        Ok(Outcome::Removed) => report.removed.push(r.to_string()),
        Ok(Outcome::Gone) => report.already_gone.push(r.to_string()),
        Ok(Outcome::NotOurs(why)) => report.not_ours.push(format!("{r}: {why}")),
        Err(e) => {
            report.failed.push(format!("{r}: {e}"));
            return false;
        }
    }
    true
}

fn remove(r: &Resource, images: &[&Path], state: &StateDir) -> Result<Outcome> {
    match r {
        Resource::TracingInstance { path } => {
            let ok = [
                "/sys/kernel/tracing/instances/fsbench-",
                "/sys/kernel/debug/tracing/instances/fsbench-",
            ]
            .iter()
            .any(|p| path.to_string_lossy().starts_with(p));
            if !ok {
                return Ok(Outcome::NotOurs("not an fsbench tracing instance path".into()));
            }
            // Mounts tracefs for the look if it is not mounted: an instance outlives an unmount.
            let removed = crate::observe::trace::remove_leftover_instance(path)
                .map_err(|e| TestbedError::io("removing tracing instance", path, e))?;
            Ok(if removed { Outcome::Removed } else { Outcome::Gone })
        }
        Resource::ZfsDaemon { process, pidfile } => {
            let process = process.or_else(|| {
                std::fs::read_to_string(pidfile)
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .and_then(ProcessId::of)
            });
            let outcome = match process {
                None => Outcome::Gone,
                Some(p) if !p.is_alive() => Outcome::Gone,
                Some(p) if p.comm().as_deref() != Some("zfs-fuse") => {
                    Outcome::NotOurs(format!("pid {} is not zfs-fuse", p.pid))
                }
                Some(p) => {
                    let pools = zfs::imported_pools()?;
                    if !pools.is_empty() {
                        Outcome::NotOurs(format!(
                            "left running: pools {} are imported",
                            pools.join(", ")
                        ))
                    } else if zfs::stop_daemon(&p) {
                        Outcome::Removed
                    } else {
                        return Err(TestbedError::Check(format!(
                            "zfs-fuse pid {} did not stop",
                            p.pid
                        )));
                    }
                }
            };
            if pidfile.parent() == Some(state.path()) {
                let _ = std::fs::remove_file(pidfile);
            }
            Ok(outcome)
        }
        Resource::ZfsPool { name } => {
            if !name.starts_with(zfs::POOL_PREFIX) {
                return Ok(Outcome::NotOurs("name lacks the fsbench_ prefix".into()));
            }
            Ok(if zfs::destroy_verified(name)? { Outcome::Removed } else { Outcome::Gone })
        }
        Resource::Mount { mountpoint, source, fstype } => {
            let entries = mountinfo::read()
                .map_err(|e| TestbedError::io("reading", "/proc/self/mountinfo", e))?;
            let Some(m) = mountinfo::find(&entries, mountpoint) else {
                return Ok(Outcome::Gone);
            };
            if &m.fstype != fstype {
                return Ok(Outcome::NotOurs(format!(
                    "{} is now {} on {}",
                    mountpoint.display(),
                    m.fstype,
                    m.source
                )));
            }
            // A loop mount is ours if the loop device is backed by an image of this record
            // (btrfs may show another member device than the one recorded); anything else
            // (tmpfs, a named real device) must match the recorded source exactly.
            let ours = if m.source.starts_with("/dev/loop") {
                let backing = loopdev::backing_file(&loopdev::kernel_name(Path::new(&m.source)));
                backing.as_deref().is_some_and(|b| images.contains(&b))
            } else {
                &m.source == source
            };
            if !ours {
                return Ok(Outcome::NotOurs(format!(
                    "{} is not backed by an fsbench image",
                    m.source
                )));
            }
            super::mount::umount(mountpoint)?;
            Ok(Outcome::Removed)
        }
        Resource::LoopDevice { backing_file, .. } => {
            if !images.contains(&backing_file.as_path()) {
                return Ok(Outcome::NotOurs(
                    "backing file is not an image in the same record".into(),
                ));
            }
            let mut any = false;
            for dev in loopdev::find_by_backing(backing_file) {
                any |= loopdev::detach_verified(&dev, backing_file)?;
            }
            Ok(if any { Outcome::Removed } else { Outcome::Gone })
        }
        Resource::ImageFile { path } => {
            let md = match std::fs::symlink_metadata(path) {
                Ok(md) => md,
                Err(_) => return Ok(Outcome::Gone),
            };
            if !md.is_file() || path.extension().and_then(|e| e.to_str()) != Some("img") {
                return Ok(Outcome::NotOurs("not a regular .img file".into()));
            }
            if !loopdev::find_by_backing(path).is_empty() {
                return Err(TestbedError::Check("still attached to a loop device".into()));
            }
            std::fs::remove_file(path).map_err(|e| TestbedError::io("removing image", path, e))?;
            Ok(Outcome::Removed)
        }
        Resource::Directory { path } => {
            if !path.exists() {
                return Ok(Outcome::Gone);
            }
            if mountinfo::is_mounted(path) {
                return Err(TestbedError::Check("still a mount point".into()));
            }
            super::image::remove_owned_dir(path)
                .map_err(|e| TestbedError::io("removing directory", path, e))?;
            Ok(Outcome::Removed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_record_is_cleaned_and_live_one_untouched() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        let tb = tmp.path().join("tb");
        std::fs::create_dir(&tb).unwrap();
        let img = tb.join("dev0.img");
        std::fs::write(&img, b"").unwrap();
        std::os::unix::fs::symlink("/dev/null", tb.join("link")).unwrap();
        let foreign = tmp.path().join("user.txt");
        std::fs::write(&foreign, b"keep").unwrap();
        let dead = ProcessRecord {
            // pid 1's start time is never 1 tick after boot: treated as gone.
            owner: ProcessId { pid: 1, start_ticks: u64::MAX },
            entries: vec![
                Entry { id: 1, resource: Resource::Directory { path: tb.clone() } },
                Entry { id: 2, resource: Resource::ImageFile { path: img.clone() } },
                Entry { id: 3, resource: Resource::ImageFile { path: foreign.clone() } },
                Entry { id: 4, resource: Resource::ZfsPool { name: "tank".into() } },
                Entry {
                    id: 5,
                    resource: Resource::TracingInstance {
                        path: "/sys/kernel/tracing/instances/other".into(),
                    },
                },
                Entry {
                    id: 6,
                    resource: Resource::Mount {
                        mountpoint: tmp.path().join("never-mounted"),
                        source: "/dev/loop99".into(),
                        fstype: "ext4".into(),
                    },
                },
            ],
        };
        std::fs::create_dir_all(sd.path()).unwrap();
        let dead_file = sd.path().join("1.json");
        sd.write_record(&dead_file, &dead).unwrap();
        let live = sd.record(Resource::ZfsPool { name: "fsbench_live".into() }).unwrap();

        let report = cleanup(&sd).unwrap();
        assert!(report.is_clean(), "{report}");
        assert!(!img.exists() && !tb.exists(), "{report}");
        assert_eq!(std::fs::read(&foreign).unwrap(), b"keep", "a .txt is never deleted");
        assert_eq!(report.removed.len(), 2, "{report}");
        assert_eq!(report.not_ours.len(), 3, "{report}");
        assert_eq!(report.already_gone.len(), 1, "{report}");
        assert_eq!(report.live_processes, [std::process::id()]);
        assert!(!dead_file.exists());
        assert!(sd.own_file().exists(), "the live record stays");
        sd.forget(&live).unwrap();
    }
}
