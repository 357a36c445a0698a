//! [`Tracer`]: start block tracing on some devices, stop it and get a [`TraceSummary`].

use super::event::{kernel_dev_t, Decoder, Kind};
use super::reader::{self, Collected, ReaderConfig};
use super::ringbuf::PageLayout;
use super::summary::{summarize, SummaryOptions, TraceSummary};
use super::tracefs::Instance;
use super::{TraceError, TraceOptions};
use crate::state::StateDir;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A running block trace. [`Tracer::stop`] ends it; dropping it without `stop` removes the
/// instance too (and discards what was traced).
#[derive(Debug)]
pub struct Tracer {
    instance: Option<Instance>,
    reader: Option<JoinHandle<Result<Collected, TraceError>>>,
    stop: Arc<AtomicBool>,
    devices: Vec<String>,
    opts: TraceOptions,
    t0_ns: u64,
}

fn now_mono_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The kernel dev_t values to filter on for a device: its own, and its whole disk's when it is
/// a partition (request events carry the disk, bio events the partition).
fn dev_ts(name: &str) -> Result<Vec<u32>, TraceError> {
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
        let events_dir = inst.path().join("events/block");
        let mut formats = Vec::new();
        for (kind, name) in Kind::ALL {
            match std::fs::read_to_string(events_dir.join(name).join("format")) {
                Ok(t) => formats.push((kind, t)),
                Err(e) => {
                    return Err(TraceError::Unavailable(format!(
                        "the kernel lacks the tracepoint block:{name} ({e})"
                    )))
                }
            }
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
        let layout = std::fs::read_to_string(inst.path().join("../../events/header_page"))
            .ok()
            .and_then(|t| PageLayout::from_header_page(&t))
            .unwrap_or_default();
        let page_bytes = inst
            .read("buffer_subbuf_size_kb")
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
            .map_or(rustix::param::page_size(), |kb| kb * 1024)
            .max(rustix::param::page_size());

        inst.write("tracing_on", "0")?;
        inst.write("buffer_size_kb", &opts.buffer_kib_per_cpu.to_string())?;
        // CLOCK_MONOTONIC, comparable across CPUs and with the caller's own clock.
        inst.write("trace_clock", "mono")?;
        // Keep the oldest events when full: the count of lost ones is then exact ("dropped
        // events") and what was kept is one contiguous stretch from the start.
        inst.write("options/overwrite", "0")?;
        let filter: Vec<String> = flat.iter().map(|d| format!("dev == {d}")).collect();
        let filter = filter.join(" || ");
        for (_, name) in Kind::ALL {
            inst.write(&format!("events/block/{name}/filter"), &filter)?;
            inst.write(&format!("events/block/{name}/enable"), "1")?;
        }
        let files = reader::open_cpus(inst.path())?;
        let stop = Arc::new(AtomicBool::new(false));
        let cfg = ReaderConfig {
            instance: inst.path().to_path_buf(),
            page_bytes,
            layout,
            decoder,
            poll: opts.poll_interval,
            max_events: opts.max_events,
        };
        let stop2 = Arc::clone(&stop);
        let reader = std::thread::Builder::new()
            .name("fsbench-trace".into())
            .spawn(move || reader::run(cfg, files, stop2))
            .map_err(|source| TraceError::Io {
                action: "starting the trace reader for",
                path: Path::new("trace_pipe_raw").to_path_buf(),
                source,
            })?;
        let t0_ns = now_mono_ns();
        inst.write("tracing_on", "1")?;
        Ok(Tracer {
            instance: Some(inst),
            reader: Some(reader),
            stop,
            devices: devices.to_vec(),
            opts,
            t0_ns,
        })
    }

    /// The instance directory (for diagnostics).
    pub fn instance_path(&self) -> Option<&Path> {
        self.instance.as_ref().map(|i| i.path())
    }

    /// Stop tracing, read what is left, remove the instance and summarise.
    pub fn stop(mut self) -> Result<TraceSummary, TraceError> {
        let t1_ns = now_mono_ns();
        let inst = self.instance.take().ok_or(TraceError::ReaderFailed)?;
        let off = inst.write("tracing_on", "0");
        self.stop.store(true, Ordering::Release);
        let collected = match self.reader.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err(TraceError::ReaderFailed),
        };
        let lost = lost_events(inst.path());
        inst.remove()?;
        off?;
        let collected = collected?;
        let mut events: Vec<_> = collected.per_cpu.into_iter().flatten().collect();
        // Stable: same-time events of one CPU keep their order (issue before complete).
        events.sort_by_key(|e| e.ts_ns);
        let mut s = summarize(
            &events,
            &self.devices,
            self.t0_ns,
            t1_ns,
            SummaryOptions {
                depth_interval_nanos: self.opts.depth_interval.as_nanos() as u64,
                max_points: self.opts.max_points,
            },
        );
        s.events_lost = lost.max(collected.missed_in_pages);
        s.events_over_limit = collected.over_limit;
        Ok(s)
    }
}

/// Sum of `overrun` and `dropped events` over the instance's per-CPU `stats` files.
fn lost_events(instance: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(instance.join("per_cpu")) else {
        return 0;
    };
    let mut lost = 0;
    for e in rd.flatten() {
        let Ok(text) = std::fs::read_to_string(e.path().join("stats")) else {
            continue;
        };
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == "overrun" || k.trim() == "dropped events" {
                    lost += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
    }
    lost
}

impl Drop for Tracer {
    fn drop(&mut self) {
        if let Some(inst) = self.instance.take() {
            let _ = inst.write("tracing_on", "0");
            self.stop.store(true, Ordering::Release);
            if let Some(r) = self.reader.take() {
                let _ = r.join();
            }
            if let Err(e) = inst.remove() {
                eprintln!("fsbench: {e}");
            }
        }
    }
}
