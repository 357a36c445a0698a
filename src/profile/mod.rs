//! `fsbench profile -- CMD`: what a command reads from disk, from which files, in what order,
//! and how much faster it starts when those are preloaded (the method of the
//! flash-netbook study: blktrace + seekwatcher + e2block2file + a preload, in one command).
//!
//! - [`scope`]: which filesystems and block devices are watched.
//! - [`spawn`]: starting the command held until tracing is on; exit code, Ctrl-C, `--duration`.
//! - [`opens`]: files opened (fanotify).
//! - [`record`]: one run under the recorders (block instance, process instance, fanotify).
//! - [`files`]: one row per file: kind, first open, pages brought in by cause.
//! - [`syscalls`]: exact bytes through read and write syscalls per file.
//! - [`attribute`]: blocks to files (FIEMAP) and metadata (ext geometry, REQ_META).
//! - [`summary`]: the summary and its text.
//! - [`html`]: the page with the pictures and the per-file table (`--html`).
//! - [`cold`]: emptying the page cache before a cold start, verified.
//! - [`overhead`]: cold wall time with and without profiling.
//! - [`preload`]: the preload list, `fsbench preload`, and the measured comparison.

pub mod attribute;
pub mod cold;
pub mod files;
pub mod opens;
pub mod overhead;
pub mod preload;
pub mod record;
pub mod scope;
pub mod spawn;
pub mod summary;
pub mod syscalls;

use crate::observe::trace::pagecache::PageKind;
use crate::observe::trace::{TraceError, TraceOptions};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Why a profile could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The command does not exist (exit code 2, nothing traced).
    #[error("command not found: {0} (not a path and not in PATH)")]
    CommandNotFound(String),
    /// The command exists but cannot be executed.
    #[error("{} is not an executable file (check its permissions)", .0.display())]
    NotExecutable(PathBuf),
    /// Bad arguments.
    #[error("{0}")]
    BadInput(String),
    /// Profiling cannot work here.
    #[error("profiling unavailable: {0}")]
    Unavailable(String),
    /// Starting or waiting for the command failed.
    #[error("running the command: {0}")]
    Spawn(String),
    /// Tracing failed.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A preload list with a line that is not `path<TAB>offset<TAB>length`.
    #[error("{}: {source}", path.display())]
    List {
        /// The list.
        path: PathBuf,
        /// The line and what is wrong with it.
        source: preload::ListError,
    },
    /// A file (preload list, JSON) could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl crate::sys::classify::Classify for ProfileError {
    /// Whether the user's input is at fault (exit code 2).
    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ProfileError::CommandNotFound(_)
                | ProfileError::NotExecutable(_)
                | ProfileError::BadInput(_)
                | ProfileError::List { .. }
        )
    }
}

/// What to profile and how.
#[derive(Debug, Clone)]
pub struct ProfileOptions {
    /// The command and its arguments.
    pub argv: Vec<String>,
    /// Directories whose filesystems are watched; empty: every block-device filesystem.
    pub mounts: Vec<PathBuf>,
    /// Write back and evict the page cache before each run (verified).
    pub cold: bool,
    /// Runs; the first is profiled in detail, all are timed.
    pub repeat: usize,
    /// Stop the command after this long.
    pub duration: Option<Duration>,
    /// Trace settings (buffer size, state directory).
    pub trace: TraceOptions,
}

/// A range of a file the command brought into the page cache, in first-touch order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Touched {
    /// Row in `files`.
    pub file: usize,
    /// Offset in bytes.
    pub offset_bytes: u64,
    /// Length in bytes.
    pub length_bytes: u64,
}

/// A profile: the summary, every file and every request with its attribution.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    /// The command.
    pub command: Vec<String>,
    /// Watched filesystems.
    pub filesystems: Vec<scope::Watched>,
    /// The cache check before the (first) run, with `--cold`.
    pub cold: Option<cold::ColdCheck>,
    /// How the command ended (first run).
    pub exit: spawn::Exit,
    /// Wall time of every run, seconds.
    pub runs_wall_seconds: Vec<f64>,
    /// The summary of the first run.
    pub summary: summary::Summary,
    /// Every file of the first run.
    pub files: Vec<files::FileProfile>,
    /// Every device request of the first run with its attribution.
    pub requests: Vec<attribute::Request>,
    /// Page ranges brought into the cache, first-touch order (the preload list).
    pub touched: Vec<Touched>,
    /// What the reader should know (devices shared, FIEMAP missing, events lost ...).
    pub notes: Vec<String>,
}

impl Profile {
    /// The text summary.
    pub fn render(&self) -> String {
        let mut notes = self.notes.clone();
        if self.runs_wall_seconds.len() > 1 {
            let mut v = self.runs_wall_seconds.clone();
            v.sort_by(f64::total_cmp);
            notes.push(format!(
                "{} runs: wall time min {:.3} s, median {:.3} s, max {:.3} s",
                v.len(),
                v[0],
                crate::stats::summary::median(&v),
                v[v.len() - 1]
            ));
        }
        summary::render(&self.command.join(" "), &self.summary, &notes)
    }
}

impl Profile {
    /// One row per file (first-touch order as recorded), for spreadsheets: path, kind, the
    /// pages brought in by cause, the bytes through syscalls and from the device.
    pub fn files_csv(&self) -> Result<Vec<u8>, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([
            "path",
            "kind",
            "directory",
            "deleted",
            "size_bytes",
            "first_open_ms",
            "opened_by_pid",
            "opens",
            "first_touch_ms",
            "pages_read",
            "pages_fault",
            "pages_readahead",
            "pages_other",
            "read_syscall_bytes",
            "write_syscall_bytes",
            "dirtied_bytes",
            "device_read_bytes",
            "device_write_bytes",
            "device_requests",
        ])?;
        let opt = |v: Option<String>| v.unwrap_or_default();
        for f in &self.files {
            w.write_record([
                f.display_name(),
                f.kind.clone(),
                f.is_dir.to_string(),
                f.deleted.to_string(),
                f.size_bytes.to_string(),
                opt(f.first_open_ms.map(|m| format!("{m:.3}"))),
                opt(f.opened_by.map(|p| p.to_string())),
                f.opens.to_string(),
                opt(f.first_touch_ms.map(|m| format!("{m:.3}"))),
                f.pages_read.to_string(),
                f.pages_fault.to_string(),
                f.pages_readahead.to_string(),
                f.pages_other.to_string(),
                f.read_syscall_bytes.to_string(),
                f.write_syscall_bytes.to_string(),
                f.dirtied_bytes.to_string(),
                f.device_read_bytes.to_string(),
                f.device_write_bytes.to_string(),
                f.device_requests.to_string(),
            ])?;
        }
        w.into_inner().map_err(|e| csv::Error::from(e.into_error()))
    }
}

/// First-touch ranges from the insertions (coalesced while they extend the previous range of
/// the same file).
fn touched(
    pages: &[crate::observe::trace::pagecache::PageEvent],
    index: &std::collections::HashMap<files::FileKey, usize>,
    watched: &[scope::Watched],
) -> Vec<Touched> {
    let pb = files::page_bytes();
    let mut out: Vec<Touched> = Vec::new();
    let mut last_of: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for e in pages.iter().filter(|e| e.kind == PageKind::AddToCache) {
        let Some(fs) = watched.iter().position(|w| w.fs_dev == e.dev) else { continue };
        let Some(&file) = index.get(&(fs, e.ino)) else { continue };
        let (off, len) = (e.index * pb, (e.last - e.index + 1) * pb);
        if let Some(&i) = last_of.get(&file) {
            let t = &mut out[i];
            if t.offset_bytes + t.length_bytes == off {
                t.length_bytes += len;
                continue;
            }
        }
        last_of.insert(file, out.len());
        out.push(Touched { file, offset_bytes: off, length_bytes: len });
    }
    out
}

/// Record and analyse one run.
pub fn profile_once(
    opts: &ProfileOptions,
    watched: &[scope::Watched],
) -> Result<Profile, ProfileError> {
    let mut notes = Vec::new();
    let cold = if opts.cold { Some(cold::make_cold(watched)?) } else { None };
    if let Some(c) = &cold {
        if let Some(w) = c.warning() {
            notes.push(w);
        }
    }
    let raw = record::record(&opts.argv, watched, opts.duration, &opts.trace)?;
    let tree = files::process_tree(raw.root_pid, &raw.pages);
    let (mut rows, index) = files::build(watched, &raw.opens, &raw.pages, &tree, raw.t0_ns);
    match &raw.sys {
        Ok(sys) => {
            let b = syscalls::attribute(sys, &raw.pages, watched, &index);
            for r in rows.iter_mut() {
                r.read_syscall_bytes = 0;
            }
            for (row, (rd, wr)) in b.per_file {
                rows[row].read_syscall_bytes = rd;
                rows[row].write_syscall_bytes = wr;
            }
        }
        Err(e) => notes.push(format!(
            "syscall tracepoints unavailable ({e}): bytes read through syscalls are counted in \
             whole pages, bytes written are not counted"
        )),
    }
    let mut maps = Vec::new();
    for (i, w) in watched.iter().enumerate() {
        let held = |row: usize| {
            let f = &rows[row];
            raw.opens.held_path(watched[f.fs].st_dev, f.ino)
        };
        let m = attribute::device_map(i, w, &rows, &held);
        notes.extend(m.notes.iter().cloned());
        if w.block_device.is_none() {
            notes.push(format!(
                "{} ({}) has no block device of its own: its files are those read, its device \
                 requests are not traced{}",
                w.mountpoint.display(),
                w.fs_type,
                if w.fs_type.contains("zfs") {
                    " (zfs-fuse: no FIEMAP; attribution is through the files read)"
                } else {
                    ""
                }
            ));
        }
        maps.push(m);
    }
    let dev_fs: Vec<usize> = raw
        .block_devices
        .iter()
        .map(|d| watched.iter().position(|w| w.block_device.as_deref() == Some(d)).unwrap_or(0))
        .collect();
    let requests =
        attribute::requests(&raw.block, &raw.block_devices, &dev_fs, watched, &maps, raw.t0_ns);
    let touched = touched(&raw.pages, &index, watched);
    let shared: Vec<String> =
        watched.iter().filter(|w| w.shared).filter_map(|w| w.block_device.clone()).collect();
    let wall_seconds = raw.t1_ns.saturating_sub(raw.t0_ns) as f64 / 1e9;
    let mut s = summary::summarize(&mut rows, &requests, tree.len(), wall_seconds, &shared);
    s.exit_code = raw.exit.code;
    s.events_lost = raw.lost_block + raw.lost_pages + raw.over_limit + raw.lost_sys;
    s.opens_lost = raw.opens.overflows;
    if raw.opens.not_held > 0 {
        notes.push(format!(
            "{} opened files were not kept open for mapping (at most {} are, within the \
             open-file limit): any of them deleted during the run could not be mapped to blocks",
            raw.opens.not_held, raw.opens.held_limit
        ));
    }
    if !raw.block_devices.is_empty() {
        notes.push(format!(
            "device requests of {} are traced from every process (the command's own I/O is \
             issued and completed in other contexts too)",
            raw.block_devices.join(", ")
        ));
    }
    let deleted: Vec<String> =
        rows.iter().filter(|f| f.deleted).map(|f| f.display_name()).collect();
    if !deleted.is_empty() {
        notes.push(format!(
            "{} file{} deleted or renamed away during the run: {}{}",
            deleted.len(),
            if deleted.len() == 1 { "" } else { "s" },
            deleted.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            if deleted.len() > 5 { ", ..." } else { "" }
        ));
    }
    if let Some(r) = raw.exit.stopped_by {
        notes.push(format!(
            "the command was stopped by fsbench ({r:?}); what was recorded is shown"
        ));
    }
    Ok(Profile {
        command: opts.argv.clone(),
        filesystems: watched.to_vec(),
        cold,
        exit: raw.exit,
        runs_wall_seconds: vec![s.wall_seconds],
        summary: s,
        files: rows,
        requests,
        touched,
        notes,
    })
}

/// What is checked before anything is traced (or recorded): the command exists and is
/// executable, the watched filesystems, root. Returns the watched filesystems.
pub fn preflight(opts: &ProfileOptions) -> Result<Vec<scope::Watched>, ProfileError> {
    let first = opts.argv.first().ok_or_else(|| {
        ProfileError::BadInput("no command given: fsbench profile [OPTIONS] -- CMD ARGS...".into())
    })?;
    spawn::resolve(first)?;
    let watched = scope::resolve(&opts.mounts)?;
    if !crate::sys::is_root() {
        return Err(ProfileError::Unavailable(
            "fsbench profile needs root: it reads the kernel's tracing buffers (tracefs) and \
             watches opens with fanotify (CAP_SYS_ADMIN)"
                .into(),
        ));
    }
    Ok(watched)
}

/// `fsbench profile`: check the command and the scope (nothing is traced when either is
/// wrong), then profile `repeat` runs.
pub fn run(opts: &ProfileOptions) -> Result<Profile, ProfileError> {
    let watched = preflight(opts)?;
    let mut p = profile_once(opts, &watched)?;
    for _ in 1..opts.repeat.max(1) {
        if crate::sys::signals::interrupted() {
            break;
        }
        if opts.cold {
            cold::make_cold(&watched)?;
        }
        let t = std::time::Instant::now();
        let mut h = spawn::spawn_held(&opts.argv)?;
        h.release()?;
        h.wait(opts.duration)?;
        p.runs_wall_seconds.push(t.elapsed().as_secs_f64());
    }
    Ok(p)
}
