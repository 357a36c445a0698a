//! [`Tracer`]: start block tracing on some devices, stop it and get a [`TraceSummary`].

use super::event::{kernel_dev_t, Decoder, Kind};
use super::recording::{configure, event_format, Recording};
use super::summary::{summarize, SummaryOptions};
use super::tracefs::Instance;
use super::{TraceError, TraceOptions};
use crate::model::trace::TraceSummary;
use crate::state::StateDir;
use std::path::Path;

/// A running block trace. [`Tracer::stop`] ends it; dropping it without `stop` removes the
/// instance too (and discards what was traced).
#[derive(Debug)]
pub struct Tracer {
    recording: Option<Recording<Decoder>>,
    devices: Vec<String>,
    opts: TraceOptions,
    t0_ns: u64,
}

/// CLOCK_MONOTONIC now, in nanoseconds (the clock of the trace's time stamps).
pub fn now_mono_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The kernel dev_t values to filter on for a device: its own, and its whole disk's when it is
/// a partition (request events carry the disk, bio events the partition).
pub fn dev_ts(name: &str) -> Result<Vec<u32>, TraceError> {
    let read_dev = |p: &Path| -> Result<u32, TraceError> {
        let text = std::fs::read_to_string(p).map_err(|e| TraceError::Device {
            name: name.to_string(),
            reason: format!("{}: {e}", p.display()),
        })?;
        let (ma, mi) = text.trim().split_once(':').ok_or_else(|| TraceError::Device {
            name: name.to_string(),
            reason: format!("{}: unexpected {text:?}", p.display()),
        })?;
        let parse = |s: &str| {
            s.parse::<u32>().map_err(|e| TraceError::Device {
                name: name.to_string(),
                reason: format!("{}: {e}", p.display()),
            })
        };
        Ok(kernel_dev_t(parse(ma)?, parse(mi)?))
    };
    if name.is_empty() || name.contains('/') {
        return Err(TraceError::Device {
            name: name.to_string(),
            reason: "expected a kernel name such as loop3".into(),
        });
    }
    let base = Path::new("/sys/class/block").join(name);
    let mut out = vec![read_dev(&base.join("dev"))?];
    if base.join("partition").exists() {
        out.push(read_dev(&base.join("../dev"))?);
    }
    Ok(out)
}

impl Tracer {
    /// Start tracing the block devices `devices` (kernel names like `loop3`).
    ///
    /// Fails with [`TraceError::Unavailable`] when tracing cannot work here (not root, no
    /// tracefs, no block tracepoints): callers report that once and go on without a trace.
    pub fn start(devices: &[String], opts: TraceOptions) -> Result<Tracer, TraceError> {
        if !crate::sys::is_root() {
            return Err(TraceError::Unavailable("needs root (tracefs)".into()));
        }
        if devices.is_empty() {
            return Err(TraceError::Device { name: String::new(), reason: "no devices".into() });
        }
        let mut devs = Vec::new();
        for d in devices {
            devs.push(dev_ts(d)?);
        }
        let state = StateDir::new(&opts.state_dir);
        let inst = Instance::create(&state)?;
        let mut formats = Vec::new();
        for (kind, name) in Kind::ALL {
            formats.push((kind, event_format(&inst, "block", name)?));
        }
        let formats_ref: Vec<(Kind, &str)> =
            formats.iter().map(|(k, t)| (*k, t.as_str())).collect();
        // Event index = position in `devices`; a partition's disk maps to the same index.
        let mut flat = Vec::new();
        let mut index_of = Vec::new();
        for (i, ds) in devs.iter().enumerate() {
            for d in ds {
                flat.push(*d);
                index_of.push(i);
            }
        }
        let decoder = Decoder::new_with_index(&formats_ref, flat.clone(), index_of)
            .map_err(|e| TraceError::Unavailable(format!("unexpected tracepoint format: {e}")))?;
        configure(&inst, &opts)?;
        let filter: Vec<String> = flat.iter().map(|d| format!("dev == {d}")).collect();
        let filter = filter.join(" || ");
        for (_, name) in Kind::ALL {
            inst.write(&format!("events/block/{name}/filter"), &filter)?;
            inst.write(&format!("events/block/{name}/enable"), "1")?;
        }
        let t0_ns = now_mono_ns();
        let recording = Recording::start(inst, decoder, &opts)?;
        Ok(Tracer { recording: Some(recording), devices: devices.to_vec(), opts, t0_ns })
    }

    /// The instance directory (for diagnostics).
    pub fn instance_path(&self) -> Option<&Path> {
        self.recording.as_ref().and_then(|r| r.instance()).map(|i| i.path())
    }

    /// Stop tracing, read what is left, remove the instance and summarise.
    pub fn stop(mut self) -> Result<TraceSummary, TraceError> {
        let t1_ns = now_mono_ns();
        let rec = self.recording.take().ok_or(TraceError::ReaderFailed)?.stop()?;
        let mut s = summarize(
            &rec.events,
            &self.devices,
            self.t0_ns,
            t1_ns,
            SummaryOptions {
                depth_interval_nanos: self.opts.depth_interval.as_nanos() as u64,
                max_points: self.opts.max_points,
            },
        );
        s.events_lost = rec.lost;
        s.events_over_limit = rec.over_limit;
        Ok(s)
    }
}
