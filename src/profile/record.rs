//! Recording one run of the command: two tracing instances and an open watcher around it.
//!
//! - The *block* instance traces `block_rq_issue` / `block_rq_complete` on the watched devices,
//!   filtered by device only: the requests of a process's reads are often issued and always
//!   completed in other contexts (the plug flush, the interrupt, writeback and journal threads),
//!   so a pid filter would lose them. A testbed's device has no other users; on a shared
//!   device other processes' requests are included (the profile says which devices).
//! - The *process* instance traces the page-cache events and forks of the command and its
//!   descendants only: `set_event_pid` holds the command's pid, `options/event-fork` adds each
//!   child as it is forked. Filemap events are also filtered to the watched filesystems.
//! - The *syscall* instance traces the read/write/close/open syscalls of the same tree, for
//!   the exact bytes per file ([`super::syscalls`]).
//! - fanotify reports the opens.

use super::opens::{OpenWatcher, Opens};
use super::scope::Watched;
use super::spawn::{self, Exit};
use super::syscalls::{SysDecoder, SysEvent, SysKind, REQUIRED, SYSCALLS};
use super::ProfileError;
use crate::observe::trace::event::{Decoder, Event, Kind};
use crate::observe::trace::pagecache::{PageDecoder, PageEvent, PageKind};
use crate::observe::trace::recording::{configure, event_format, Recording};
use crate::observe::trace::tracefs::Instance;
use crate::observe::trace::tracer::{dev_ts, now_mono_ns};
use crate::observe::trace::{TraceError, TraceOptions};
use crate::testbed::state::StateDir;
use std::time::Duration;

/// Everything one run left, before attribution.
#[derive(Debug)]
pub struct Raw {
    /// Issue and complete events of the watched devices, in time order; `Event::dev` indexes
    /// `block_devices`.
    pub block: Vec<Event>,
    /// Kernel names of the traced devices, one per watched filesystem with a block device.
    pub block_devices: Vec<String>,
    /// Page-cache and fork events of the command's process tree, in time order.
    pub pages: Vec<PageEvent>,
    /// Opens on the watched mounts (all processes).
    pub opens: Opens,
    /// The command's pid.
    pub root_pid: u32,
    /// Release and end of the command, CLOCK_MONOTONIC nanoseconds.
    pub t0_ns: u64,
    /// End.
    pub t1_ns: u64,
    /// How the command ended.
    pub exit: Exit,
    /// Block events lost in the ring buffer.
    pub lost_block: u64,
    /// Page-cache events lost in the ring buffer.
    pub lost_pages: u64,
    /// Events over the in-memory cap.
    pub over_limit: u64,
    /// Read/write/close/open syscall events of the command's tree, in time order; `Err`: why
    /// they could not be traced (then syscall bytes are counted in whole pages).
    pub sys: Result<Vec<SysEvent>, ProfileError>,
    /// Syscall events lost in the ring buffer.
    pub lost_sys: u64,
}

/// The syscall instance: the [`SYSCALLS`] tracepoints of the command's tree (`set_event_pid`
/// and `event-fork`, as the process instance), exits of reads and writes only when they moved
/// bytes.
fn syscall_instance(
    state: &StateDir,
    pid: u32,
    opts: &TraceOptions,
) -> Result<Recording<SysDecoder>, ProfileError> {
    let inst = Instance::create(state)?;
    let mut formats = Vec::new();
    for &(name, field, kind) in SYSCALLS {
        match event_format(&inst, "syscalls", name) {
            Ok(t) => formats.push((kind, field, t, name)),
            Err(e) if REQUIRED.contains(&name) => return Err(e.into()),
            Err(_) => {}
        }
    }
    let refs: Vec<(SysKind, &str, &str)> =
        formats.iter().map(|(k, f, t, _)| (*k, *f, t.as_str())).collect();
    let decoder = SysDecoder::new(&refs)
        .map_err(|e| TraceError::Unavailable(format!("unexpected tracepoint format: {e}")))?;
    configure(&inst, opts)?;
    inst.write("set_event_pid", &pid.to_string())?;
    inst.write("options/event-fork", "1")?;
    for (kind, _, _, name) in &formats {
        if matches!(kind, SysKind::ExitRead | SysKind::ExitWrite) {
            inst.write(&format!("events/syscalls/{name}/filter"), "ret > 0")?;
        }
        inst.write(&format!("events/syscalls/{name}/enable"), "1")?;
    }
    Ok(Recording::start(inst, decoder, opts)?)
}

fn block_instance(
    state: &StateDir,
    devices: &[String],
    opts: &TraceOptions,
) -> Result<Recording<Decoder>, ProfileError> {
    let mut flat = Vec::new();
    let mut index = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        for t in dev_ts(d)? {
            flat.push(t);
            index.push(i);
        }
    }
    let inst = Instance::create(state)?;
    let kinds = [(Kind::RqIssue, "block_rq_issue"), (Kind::RqComplete, "block_rq_complete")];
    let mut formats = Vec::new();
    for (k, name) in kinds {
        formats.push((k, event_format(&inst, "block", name)?));
    }
    let refs: Vec<(Kind, &str)> = formats.iter().map(|(k, t)| (*k, t.as_str())).collect();
    let decoder = Decoder::new_with_index(&refs, flat.clone(), index)
        .map_err(|e| TraceError::Unavailable(format!("unexpected tracepoint format: {e}")))?;
    configure(&inst, opts)?;
    let filter: Vec<String> = flat.iter().map(|d| format!("dev == {d}")).collect();
    let filter = filter.join(" || ");
    for (_, name) in kinds {
        inst.write(&format!("events/block/{name}/filter"), &filter)?;
        inst.write(&format!("events/block/{name}/enable"), "1")?;
    }
    Ok(Recording::start(inst, decoder, opts)?)
}

fn process_instance(
    state: &StateDir,
    watched: &[Watched],
    pid: u32,
    opts: &TraceOptions,
) -> Result<Recording<PageDecoder>, ProfileError> {
    let inst = Instance::create(state)?;
    let mut formats = Vec::new();
    for (k, group, name) in PageKind::ALL {
        formats.push((k, event_format(&inst, group, name)?));
    }
    let refs: Vec<(PageKind, &str)> = formats.iter().map(|(k, t)| (*k, t.as_str())).collect();
    let decoder = PageDecoder::new(&refs)
        .map_err(|e| TraceError::Unavailable(format!("unexpected tracepoint format: {e}")))?;
    configure(&inst, opts)?;
    inst.write("set_event_pid", &pid.to_string())?;
    inst.write("options/event-fork", "1")?;
    let devs: Vec<String> = watched.iter().map(|w| format!("s_dev == {}", w.fs_dev)).collect();
    let devs = devs.join(" || ");
    for (k, group, name) in PageKind::ALL {
        if group == "filemap" {
            inst.write(&format!("events/{group}/{name}/filter"), &devs)?;
        }
        let _ = k;
        inst.write(&format!("events/{group}/{name}/enable"), "1")?;
    }
    Ok(Recording::start(inst, decoder, opts)?)
}

/// Run `argv` once under the recorders. `argv[0]` must already be resolved (so a missing
/// command fails before anything is traced).
pub fn record(
    argv: &[String],
    watched: &[Watched],
    limit: Option<Duration>,
    opts: &TraceOptions,
) -> Result<Raw, ProfileError> {
    let state = StateDir::new(&opts.state_dir);
    let block_devices: Vec<String> =
        watched.iter().filter_map(|w| w.block_device.clone()).collect();
    let mounts: Vec<&std::path::Path> = watched.iter().map(|w| w.mountpoint.as_path()).collect();
    let opens = OpenWatcher::start(&mounts)?;
    let block = if block_devices.is_empty() {
        None
    } else {
        Some(block_instance(&state, &block_devices, opts)?)
    };
    let mut held = spawn::spawn_held_recorded(argv, &state)?;
    let root_pid = held.pid();
    let pages = process_instance(&state, watched, root_pid, opts)?;
    let sys = syscall_instance(&state, root_pid, opts);
    let t0_ns = now_mono_ns();
    held.release()?;
    let exit = held.wait(limit)?;
    let t1_ns = now_mono_ns();
    let pages = pages.stop()?;
    let (sys, lost_sys) = match sys {
        Ok(r) => match r.stop() {
            Ok(r) => (Ok(r.events), r.lost + r.over_limit),
            Err(e) => (Err(ProfileError::from(e)), 0),
        },
        Err(e) => (Err(e), 0),
    };
    let block = match block {
        Some(b) => Some(b.stop()?),
        None => None,
    };
    let opens = opens.stop();
    let (block_events, lost_block, over_b) = match block {
        Some(b) => (b.events, b.lost, b.over_limit),
        None => (Vec::new(), 0, 0),
    };
    Ok(Raw {
        block: block_events,
        block_devices,
        pages: pages.events,
        opens,
        root_pid,
        t0_ns,
        t1_ns,
        exit,
        lost_block,
        lost_pages: pages.lost,
        over_limit: over_b + pages.over_limit,
        sys,
        lost_sys,
    })
}
