//! `fsbench testbed cleanup` and `fsbench testbed down`: remove what fsbench left, and nothing
//! else.
//!
//! `cleanup` reads only records of processes that are gone (pid absent, or reused by a process
//! with another start time) and never a kept testbed's record (`fsbench testbed up`); `down`
//! reads only kept records. Resources are removed in reverse creation order, each one only when
//! the record names it *and* the system confirms it is fsbench's:
//!
//! - a directory or image only inside a directory tree only root can change
//!   ([`crate::sys::secure::open_trusted_dir`]), removed through directory fds; an image must be
//!   a regular `.img` file directly inside a directory of the same record; a directory loses only
//!   the symlinks fsbench made in it (never their targets) and must otherwise be empty;
//! - nothing without fsbench's mark ([`super::mark`]), written when it was made: an image must
//!   carry it (or its directory), a directory must be empty or carry it;
//! - a loop device only if its backing file is a marked image of the same record, directly in
//!   a directory of the record;
//! - a mount only on a directory of the same record, with the recorded type, and (loop mounts)
//!   a source backed by an image of the record;
//! - a pool only with the `fsbench_` prefix and devices that are links in a directory of the
//!   same record; a tracing instance only under
//!   `.../tracing/instances/fsbench-`;
//! - a work directory in `--dir` only if it is still the very directory made (device and inode),
//!   removed through fds without following links or entering mounts.
//!
//! The zfs-fuse daemon is not a per-process resource: it has one shared record, and it is
//! stopped only when no live fsbench process uses it and no pool is imported (see [`zfs`]).

use super::error::{Result, TestbedError};
use super::loopdev;
use super::mountinfo;
use super::state::{ProcessRecord, Resource, StateDir};
use super::zfs;
use crate::sys::secure;
use serde::Serialize;
use std::ffi::OsStr;
use std::fmt;
use std::os::fd::AsFd;
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
    /// Testbeds kept by `fsbench testbed up`, left alone (`fsbench testbed down NAME` removes one).
    pub kept: Vec<String>,
}

impl CleanupReport {
    /// Add another cleanup's findings.
    pub fn merge(&mut self, o: CleanupReport) {
        self.removed.extend(o.removed);
        self.already_gone.extend(o.already_gone);
        self.not_ours.extend(o.not_ours);
        self.failed.extend(o.failed);
        self.live_processes.extend(o.live_processes);
        self.kept.extend(o.kept);
    }

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
        if !self.kept.is_empty() {
            writeln!(
                f,
                "untouched: testbeds kept by `fsbench testbed up`: {} (remove with `fsbench testbed down NAME`)",
                self.kept.join(", ")
            )?;
        }
        Ok(())
    }
}

enum Outcome {
    Removed,
    Gone,
    NotOurs(String),
}

/// Which records to act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Records of processes that are gone (`fsbench testbed cleanup`); kept testbeds are left.
    Crashed,
    /// The kept testbed of this name (`fsbench testbed down NAME`).
    Kept(String),
    /// Every kept testbed (`fsbench testbed down --all`).
    AllKept,
}

/// Names of the testbeds kept by `fsbench testbed up`, with their records.
pub fn kept_testbeds(state: &StateDir) -> Result<Vec<(String, ProcessRecord)>> {
    let records =
        state.read_all().map_err(|e| TestbedError::io("reading state in", state.path(), e))?;
    Ok(records.into_iter().filter_map(|(_, r)| r.kept.clone().map(|n| (n, r))).collect())
}

/// Clean up the records in `state` of processes that are no longer running.
pub fn cleanup(state: &StateDir) -> Result<CleanupReport> {
    clean(state, &Scope::Crashed)
}

/// Remove what the records chosen by `scope` name (see the module docs).
pub fn clean(state: &StateDir, scope: &Scope) -> Result<CleanupReport> {
    let _lock =
        state.lock_for_cleanup().map_err(|e| TestbedError::io("locking", state.path(), e))?;
    let mut report = CleanupReport::default();
    // State writes a `kill -9` cut short.
    match state.remove_stale_temps() {
        Ok(names) => report.removed.extend(
            names
                .into_iter()
                .map(|n| format!("unfinished state write {}", state.path().join(n).display())),
        ),
        Err(e) => report
            .failed
            .push(format!("unfinished state writes in {}: {e}", state.path().display())),
    }
    let records =
        state.read_all().map_err(|e| TestbedError::io("reading state in", state.path(), e))?;
    // What a kept record names is never touched through another record (a crash while a
    // testbed was being kept leaves its entries in both).
    let kept_resources: Vec<Resource> = records
        .iter()
        .filter(|(_, r)| r.kept.is_some())
        .flat_map(|(_, r)| r.entries.iter().map(|e| e.resource.clone()))
        .collect();
    let mut chosen: Vec<(PathBuf, ProcessRecord)> = Vec::new();
    for (path, rec) in records {
        match (&rec.kept, scope) {
            (Some(name), Scope::Crashed) => report.kept.push(name.clone()),
            (Some(name), Scope::Kept(want)) if name != want => {}
            (Some(_), _) => chosen.push((path, rec)),
            (None, Scope::Crashed) if rec.owner.is_alive() => {
                report.live_processes.push(rec.owner.pid)
            }
            (None, Scope::Crashed) => chosen.push((path, rec)),
            (None, _) => {}
        }
    }
    if let Scope::Kept(name) = scope {
        if chosen.is_empty() {
            let names: Vec<String> = kept_testbeds(state)?.into_iter().map(|(n, _)| n).collect();
            return Err(TestbedError::Check(format!(
                "no kept testbed named {name:?}; kept: {}",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            )));
        }
    }
    for (path, rec) in &chosen {
        let mut keep = Vec::new();
        for e in rec.entries.iter().rev() {
            if rec.kept.is_none() && kept_resources.contains(&e.resource) {
                continue;
            }
            if let Resource::ZfsDaemon { process, pidfile } = &e.resource {
                // Records written before the daemon had a shared record: hand the daemon over
                // to the shared record (so it is never left unrecorded), then the shared rule
                // below decides whether it stops.
                if let Err(err) = zfs::adopt_daemon(state, *process, pidfile) {
                    report.failed.push(format!("{}: {err}", e.resource));
                    keep.push(e.clone());
                }
                continue;
            }
            if !settle(&e.resource, remove(&e.resource, rec), &mut report) {
                keep.push(e.clone());
            }
        }
        keep.reverse();
        let res = if keep.is_empty() {
            state.remove_file(path)
        } else {
            state.write_record(path, &ProcessRecord { entries: keep, ..rec.clone() })
        };
        res.map_err(|e| TestbedError::io("updating state", path, e))?;
    }
    // The shared zfs-fuse daemon: stopped only if fsbench started it and nobody uses it now.
    match zfs::stop_unused_daemon(state) {
        Ok(Some(what)) => report.removed.push(what),
        Ok(None) => {}
        Err(e) => report.failed.push(format!("zfs-fuse daemon: {e}")),
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

fn recorded_dirs(rec: &ProcessRecord) -> Vec<&Path> {
    rec.entries
        .iter()
        .filter_map(|e| match &e.resource {
            Resource::Directory { path } => Some(path.as_path()),
            _ => None,
        })
        .collect()
}

fn recorded_images(rec: &ProcessRecord) -> Vec<&Path> {
    rec.entries
        .iter()
        .filter_map(|e| match &e.resource {
            Resource::ImageFile { path } => Some(path.as_path()),
            _ => None,
        })
        .collect()
}

/// Why a recorded path's parent directory is not trusted (the entry is then left alone as not
/// fsbench's, with this as the reason).
#[derive(Debug, thiserror::Error)]
enum Untrusted {
    /// The path has no parent directory or no file name.
    #[error("not a path fsbench makes")]
    NotOurPath,
    /// The parent directory could not be opened, or others than root can change it.
    #[error(transparent)]
    Parent(std::io::Error),
}

impl crate::sys::classify::Classify for Untrusted {
    /// A record's path, not the command's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// The parent directory (opened, checked as only root can change it) and the file name.
fn trusted_parent(path: &Path) -> std::result::Result<(std::os::fd::OwnedFd, &OsStr), Untrusted> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Untrusted::NotOurPath);
    };
    let fd = secure::open_trusted_dir(parent, false).map_err(Untrusted::Parent)?;
    Ok((fd, name))
}

/// Whether `image` is directly inside a directory of the record and carries fsbench's mark (its
/// own, or its directory's); see [`super::mark`].
fn image_marked(image: &Path, dirs: &[&Path]) -> bool {
    if !image.parent().is_some_and(|p| dirs.contains(&p)) {
        return false;
    }
    match trusted_parent(image) {
        Ok((dir, name)) => super::mark::image_is_ours(dir.as_fd(), name),
        Err(_) => false,
    }
}

/// Kill what is left of a profiled command's process group: only while its leader is still the
/// very process started (pid and start time; an exited leader's group may live on, but its
/// number could then be anyone's, so it is left).
fn kill_command_group(process: Option<&crate::state::ProcessId>) -> Outcome {
    let Some(p) = process else { return Outcome::Gone };
    let Some(pid) = rustix::process::Pid::from_raw(p.pid as i32) else {
        return Outcome::NotOurs("not a process id".into());
    };
    if p.is_alive() {
        if rustix::process::getpgid(Some(pid)).ok() != Some(pid) {
            return Outcome::NotOurs("no longer leads its own process group".into());
        }
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        return Outcome::Removed;
    }
    // The leader is gone (killed with fsbench): what it started may live on in its group.
    // A process with the leader's pid that is another process means the number was reused
    // (the leader's own zombie, not yet reaped by whoever inherited it, is still the leader).
    if crate::state::process::start_ticks(p.pid).is_some_and(|t| t != p.start_ticks) {
        return Outcome::Gone;
    }
    let left: Vec<i32> = group_members(p.pid, p.start_ticks);
    for m in &left {
        if let Some(m) = rustix::process::Pid::from_raw(*m) {
            let _ = rustix::process::kill_process(m, rustix::process::Signal::KILL);
        }
    }
    if left.is_empty() {
        Outcome::Gone
    } else {
        Outcome::Removed
    }
}

/// Processes of process group `pgid` that started no earlier than its leader did (so not of a
/// later group that reused the number).
fn group_members(pgid: u32, leader_start: u64) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // After the command name (in parentheses, which may hold anything): state is field 3.
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // f[0] = state (3), f[2] = pgrp (5), f[19] = starttime (22).
        let (Some(pgrp), Some(start)) = (f.get(2), f.get(19)) else { continue };
        if pgrp.parse::<u32>().ok() == Some(pgid)
            && start.parse::<u64>().is_ok_and(|s| s >= leader_start)
        {
            out.push(pid);
        }
    }
    out
}

fn remove(r: &Resource, rec: &ProcessRecord) -> Result<Outcome> {
    let images = recorded_images(rec);
    let dirs = recorded_dirs(rec);
    match r {
        Resource::TracingInstance { path } => remove_tracing_instance(path),
        Resource::ZfsDaemon { .. } => Ok(Outcome::NotOurs("handled by the shared record".into())),
        Resource::Command { process, .. } => Ok(kill_command_group(process.as_ref())),
        Resource::ZfsPool { name } => remove_pool(name, &dirs),
        Resource::Mount { mountpoint, source, fstype } => {
            remove_mount(mountpoint, source, fstype, &images, &dirs)
        }
        Resource::LoopDevice { backing_file, .. } => remove_loop(backing_file, &images, &dirs),
        Resource::ImageFile { path } => remove_image(path, &dirs),
        Resource::Directory { path } => remove_dir(path),
        Resource::Workspace { path, dev, ino } => {
            use crate::engine::workspace::{remove_leftover, Leftover};
            match remove_leftover(path, dev.zip(*ino))
                .map_err(|e| TestbedError::io("removing work directory", path, e))?
            {
                Leftover::Removed => Ok(Outcome::Removed),
                Leftover::Gone => Ok(Outcome::Gone),
                Leftover::NotOurs(why) => Ok(Outcome::NotOurs(why)),
            }
        }
    }
}

/// A tracing instance, if its path is one fsbench names.
fn remove_tracing_instance(path: &Path) -> Result<Outcome> {
    let ok =
        ["/sys/kernel/tracing/instances/fsbench-", "/sys/kernel/debug/tracing/instances/fsbench-"]
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

/// A zfs pool, if it has fsbench's prefix and its devices are links in a directory of the record.
fn remove_pool(name: &str, dirs: &[&Path]) -> Result<Outcome> {
    if !name.starts_with(zfs::POOL_PREFIX) {
        return Ok(Outcome::NotOurs("name lacks the fsbench_ prefix".into()));
    }
    // Its devices must be the links in a directory of the same record.
    let Some(vdevs) = zfs::pool_vdevs(name)? else {
        return Ok(Outcome::Gone);
    };
    if vdevs.is_empty() || !vdevs.iter().all(|v| v.parent().is_some_and(|p| dirs.contains(&p))) {
        return Ok(Outcome::NotOurs(format!(
            "its devices ({}) are not in a directory of the same record",
            vdevs.iter().map(|v| v.display().to_string()).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(if zfs::destroy_verified(name)? { Outcome::Removed } else { Outcome::Gone })
}

/// A mount, if its mount point is a directory of the record and it is still what was mounted
/// there (the same type, on an image of the record or the recorded source).
fn remove_mount(
    mountpoint: &Path,
    source: &str,
    fstype: &str,
    images: &[&Path],
    dirs: &[&Path],
) -> Result<Outcome> {
    match recorded_mount(mountpoint, source, fstype, images, dirs)? {
        Some(not_removable) => Ok(not_removable),
        None => {
            super::mount::umount(mountpoint)?;
            Ok(Outcome::Removed)
        }
    }
}

/// Whether a recorded mount is still there and fsbench's: `None` when it is (mounted on a
/// directory of the same record, with the recorded type, and for a loop mount from a loop
/// device backed by a marked image of the record), else what it is instead (gone, or why it
/// is not verifiably fsbench's).
fn recorded_mount(
    mountpoint: &Path,
    source: &str,
    fstype: &str,
    images: &[&Path],
    dirs: &[&Path],
) -> Result<Option<Outcome>> {
    let entries =
        mountinfo::read().map_err(|e| TestbedError::io("reading", "/proc/self/mountinfo", e))?;
    let Some(m) = mountinfo::find(&entries, mountpoint) else {
        return Ok(Some(Outcome::Gone));
    };
    if !dirs.contains(&mountpoint) {
        return Ok(Some(Outcome::NotOurs(
            "the mount point is not a directory of the same record".into(),
        )));
    }
    if m.fstype != fstype {
        return Ok(Some(Outcome::NotOurs(format!(
            "{} is now {} on {}",
            mountpoint.display(),
            m.fstype,
            m.source
        ))));
    }
    // A loop mount is ours if the loop device is backed by an image of this record
    // (btrfs may show another member device than the one recorded); anything else
    // (tmpfs, a named real device) must match the recorded source exactly.
    let ours = if m.source.starts_with("/dev/loop") {
        let backing = loopdev::backing_file(&loopdev::kernel_name(Path::new(&m.source)));
        backing.as_deref().is_some_and(|b| images.contains(&b) && image_marked(b, dirs))
    } else {
        m.source == source
    };
    if !ours {
        return Ok(Some(Outcome::NotOurs(format!(
            "{} is not backed by an fsbench image",
            m.source
        ))));
    }
    Ok(None)
}

/// A testbed kept by `fsbench testbed up` that holds a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptMount {
    /// The kept testbed's name (`fsbench testbed down NAME`).
    pub name: String,
    /// Its mount point.
    pub mountpoint: PathBuf,
}

/// The testbed kept by `fsbench testbed up` whose filesystem `dir` is on: `dir` has the
/// `st_dev` of a mount point a kept record names, and that mount point is still mounted as
/// `testbed down` would verify before unmounting it (same record, type and, for a loop mount,
/// a loop device backed by the record's marked image). `None` when `dir` is on no such
/// testbed (or is gone); a kept zfs pool is not looked at. Lets a caller treat a kept
/// testbed as one fsbench made (`fill_device` fills only those).
pub fn kept_testbed_holding(state: &StateDir, dir: &Path) -> Result<Option<KeptMount>> {
    use std::os::unix::fs::MetadataExt;
    let Ok(dev) = std::fs::metadata(dir).map(|m| m.dev()) else {
        return Ok(None);
    };
    for (name, rec) in kept_testbeds(state)? {
        let (images, dirs) = (recorded_images(&rec), recorded_dirs(&rec));
        for e in &rec.entries {
            let Resource::Mount { mountpoint, source, fstype } = &e.resource else { continue };
            if recorded_mount(mountpoint, source, fstype, &images, &dirs)?.is_some() {
                continue;
            }
            if std::fs::metadata(mountpoint).is_ok_and(|m| m.dev() == dev) {
                return Ok(Some(KeptMount { name, mountpoint: mountpoint.clone() }));
            }
        }
    }
    Ok(None)
}

/// The loop devices over an image of the record that carries fsbench's mark.
fn remove_loop(backing_file: &Path, images: &[&Path], dirs: &[&Path]) -> Result<Outcome> {
    if !images.contains(&backing_file) {
        return Ok(Outcome::NotOurs("backing file is not an image in the same record".into()));
    }
    if !image_marked(backing_file, dirs) {
        if loopdev::find_by_backing(backing_file).is_empty() {
            return Ok(Outcome::Gone);
        }
        return Ok(Outcome::NotOurs(format!(
            "its backing file {} does not carry fsbench's mark (not made by fsbench)",
            backing_file.display()
        )));
    }
    let mut any = false;
    for dev in loopdev::find_by_backing(backing_file) {
        any |= loopdev::detach_verified(&dev, backing_file)?;
    }
    Ok(if any { Outcome::Removed } else { Outcome::Gone })
}

/// An image file of the record, if it carries fsbench's mark and no loop device uses it.
fn remove_image(path: &Path, dirs: &[&Path]) -> Result<Outcome> {
    if path.extension().and_then(|e| e.to_str()) != Some("img")
        || !path.parent().is_some_and(|p| dirs.contains(&p))
    {
        return Ok(Outcome::NotOurs(
            "not a .img file inside a directory of the same record".into(),
        ));
    }
    let (dir, name) = match trusted_parent(path) {
        Ok(x) => x,
        Err(_) if std::fs::symlink_metadata(path).is_err() => return Ok(Outcome::Gone),
        Err(why) => return Ok(Outcome::NotOurs(why.to_string())),
    };
    let st = match rustix::fs::statat(&dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(_) => return Ok(Outcome::Gone),
    };
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Ok(Outcome::NotOurs("not a regular file".into()));
    }
    if !super::mark::image_is_ours(dir.as_fd(), name) {
        return Ok(Outcome::NotOurs("does not carry fsbench's mark".into()));
    }
    if !loopdev::find_by_backing(path).is_empty() {
        return Err(TestbedError::Check("still attached to a loop device".into()));
    }
    secure::unlink(dir.as_fd(), &name.to_string_lossy())
        .map_err(|e| TestbedError::io("removing image", path, e))?;
    Ok(Outcome::Removed)
}

/// A directory of the record: empty, or carrying fsbench's mark.
fn remove_dir(path: &Path) -> Result<Outcome> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Outcome::Gone);
    }
    if mountinfo::is_mounted(path) {
        return Err(TestbedError::Check("still a mount point".into()));
    }
    let (dir, name) = match trusted_parent(path) {
        Ok(x) => x,
        Err(why) => return Ok(Outcome::NotOurs(why.to_string())),
    };
    // Only an empty directory, or one carrying fsbench's mark (whose links and mark
    // file go with it; anything else in it still stops the removal).
    let marked = super::mark::open_nofollow(dir.as_fd(), name)
        .is_ok_and(|fd| super::mark::dir_has(fd.as_fd()));
    if !marked {
        return match rustix::fs::unlinkat(&dir, name, rustix::fs::AtFlags::REMOVEDIR) {
            Ok(()) => Ok(Outcome::Removed),
            Err(rustix::io::Errno::NOENT) => Ok(Outcome::Gone),
            Err(_) => Ok(Outcome::NotOurs(
                "not empty, and does not carry fsbench's mark: left as it is".into(),
            )),
        };
    }
    super::image::remove_owned_dir_at(dir.as_fd(), name)
        .map_err(|e| TestbedError::io("removing directory", path, e))?;
    Ok(Outcome::Removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Entry, ProcessId};

    /// A kept record naming the mount that holds a directory makes the directory a kept
    /// testbed's only while that mount is still mounted from the recorded source: the same
    /// `st_dev` with another source (a loop device that is not the one mounted), or a mount
    /// point no longer mounted, is no kept testbed.
    #[test]
    fn a_directory_is_on_a_kept_testbed_only_while_its_recorded_mount_is_there() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let Some(m) = mountinfo::mount_of(tmp.path()) else {
            panic!("no mount holds {}", tmp.path().display());
        };
        if m.source.starts_with("/dev/loop") {
            eprintln!(
                "skipped: /var/tmp is on a loop device, which the check follows to its image"
            );
            return;
        }
        let sd = StateDir::new(tmp.path().join("state"));
        let gone = tmp.path().join("never-mounted");
        std::fs::create_dir(&gone).unwrap();
        let kept = |name: &str, mountpoint: &Path, source: &str| {
            let rec = ProcessRecord {
                kept: Some(name.into()),
                owner: ProcessId::current(),
                entries: vec![
                    Entry { id: 1, resource: Resource::Directory { path: mountpoint.into() } },
                    Entry {
                        id: 2,
                        resource: Resource::Mount {
                            mountpoint: mountpoint.into(),
                            source: source.into(),
                            fstype: m.fstype.clone(),
                        },
                    },
                ],
            };
            let path = sd.path().join(format!("{}{name}.json", crate::state::record::KEPT_PREFIX));
            sd.write_record(&path, &rec).unwrap();
            path
        };
        let other = kept("other", &m.mountpoint, "/dev/loop99");
        let unmounted = kept("unmounted", &gone, &m.source);
        assert_eq!(kept_testbed_holding(&sd, tmp.path()).unwrap(), None);
        assert_eq!(kept_testbed_holding(&sd, &gone).unwrap(), None);
        // The record naming what is mounted there: the directory is on it.
        std::fs::remove_file(other).unwrap();
        std::fs::remove_file(unmounted).unwrap();
        kept("same", &m.mountpoint, &m.source);
        let on = kept_testbed_holding(&sd, tmp.path()).unwrap();
        assert_eq!(on, Some(KeptMount { name: "same".into(), mountpoint: m.mountpoint.clone() }));
        assert_eq!(kept_testbed_holding(&sd, &tmp.path().join("absent")).unwrap(), None);
    }

    #[test]
    fn dead_record_is_cleaned_and_live_one_untouched() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        let tb = tmp.path().join("tb");
        std::fs::create_dir(&tb).unwrap();
        let img = tb.join("dev0.img");
        std::fs::write(&img, b"").unwrap();
        // What fsbench makes carries its mark; the rest of this test's stand-ins do not.
        let tbfd = std::fs::File::open(&tb).unwrap();
        super::super::mark::set_dir(tbfd.as_fd()).unwrap();
        std::os::unix::fs::symlink("/dev/null", tb.join("link")).unwrap();
        let foreign = tmp.path().join("user.txt");
        std::fs::write(&foreign, b"keep").unwrap();
        let dead = ProcessRecord {
            kept: None,
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
        let dead_file = sd.path().join("1.json");
        sd.write_record(&dead_file, &dead).unwrap();
        let live = sd.record(Resource::ZfsPool { name: "fsbench_live".into() }).unwrap();

        let report = cleanup(&sd).unwrap();
        assert!(report.is_clean(), "{report}");
        assert!(!img.exists() && !tb.exists(), "{report}");
        assert_eq!(std::fs::read(&foreign).unwrap(), b"keep", "a .txt is never deleted");
        // The zfs-fuse daemon's record is machine-wide (root's state directory, whatever
        // directory a testbed records in), so a stale one left by another run may be removed
        // here too: count only what this test's record named.
        let ours = report.removed.iter().filter(|r| !r.starts_with("zfs-fuse")).count();
        assert_eq!(ours, 2, "{report}");
        assert_eq!(report.not_ours.len(), 3, "{report}");
        assert_eq!(report.already_gone.len(), 1, "{report}");
        assert_eq!(report.live_processes, [std::process::id()]);
        assert!(!dead_file.exists());
        assert!(sd.own_file().exists(), "the live record stays");
        sd.forget(&live).unwrap();
    }

    /// An image in a directory others can write to is left as not fsbench's, and the reason
    /// says which directory and what is wrong with it; a path without a parent is not one
    /// fsbench makes.
    #[test]
    fn an_untrusted_parent_is_the_reason_an_entry_is_left() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let img = open.join("dev0.img");
        std::fs::write(&img, b"img").unwrap();
        let Ok(Outcome::NotOurs(why)) = remove_image(&img, &[open.as_path()]) else {
            panic!("an image in a world-writable directory was not left alone");
        };
        assert!(why.contains(&open.display().to_string()) && why.contains("mode 777"), "{why}");
        assert_eq!(std::fs::read(&img).unwrap(), b"img");
        let root = trusted_parent(Path::new("/")).err().map(|e| e.to_string());
        assert_eq!(root.as_deref(), Some("not a path fsbench makes"));
    }
}

#[cfg(test)]
mod mark_tests {
    use super::*;
    use crate::state::{Entry, ProcessId};

    /// A record (of root's, in the checked directory) naming things fsbench did not make: an
    /// image and a directory without fsbench's mark are left alone, a non-empty directory is
    /// not even tried; a stale temporary file of a state write is removed.
    #[test]
    fn a_forged_record_makes_cleanup_act_on_nothing_unmarked() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let sd = StateDir::new(tmp.path().join("state"));
        let standin = tmp.path().join("victim-dir");
        std::fs::create_dir(&standin).unwrap();
        std::fs::write(standin.join("keep"), b"k").unwrap();
        let img = standin.join("victim.img");
        std::fs::write(&img, b"img").unwrap();
        let forged = ProcessRecord {
            kept: None,
            owner: ProcessId { pid: 1, start_ticks: u64::MAX },
            entries: vec![
                Entry { id: 1, resource: Resource::Directory { path: standin.clone() } },
                Entry { id: 2, resource: Resource::ImageFile { path: img.clone() } },
            ],
        };
        sd.write_record(&sd.path().join("1.json"), &forged).unwrap();
        // A state write cut short by kill -9: its writer's pid is gone.
        let dir = sd.open(false).unwrap();
        let tmpname = ".999999999.json.999999999.0123456789abcdef.tmp";
        secure::write_atomic(dir.as_fd(), "x", b"{}", 0o600).unwrap();
        rustix::fs::renameat(&dir, "x", &dir, tmpname).unwrap();
        let report = cleanup(&sd).unwrap();
        assert!(report.removed.iter().any(|r| r.contains(tmpname)), "{report}");
        assert!(!sd.path().join(tmpname).exists());
        assert!(report.removed.iter().all(|r| !r.contains("victim")), "{report}");
        assert_eq!(report.not_ours.len(), 2, "{report}");
        assert!(report.failed.is_empty(), "{report}");
        assert_eq!(std::fs::read(standin.join("keep")).unwrap(), b"k");
        assert_eq!(std::fs::read(&img).unwrap(), b"img");
    }
}
