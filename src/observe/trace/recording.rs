//! [`Recording`]: a configured tracing instance plus the reader thread draining it, for any
//! [`Decode`]r. [`super::Tracer`] (block requests) and the profiler's page-cache and process
//! events both use it, so there is one reader and one teardown path.

use super::event::Decode;
use super::reader::{self, Collected, ReaderConfig};
use super::ringbuf::PageLayout;
use super::tracefs::Instance;
use super::{TraceError, TraceOptions};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// What a stopped recording holds.
#[derive(Debug)]
pub struct Recorded<E> {
    /// Every event of every CPU, in time order.
    pub events: Vec<E>,
    /// Events the kernel could not store (ring buffer full): `overrun` + `dropped events` of
    /// the per-CPU stats, or the page headers' count when larger.
    pub lost: u64,
    /// Events decoded but not kept (the `max_events` cap).
    pub over_limit: u64,
}

/// A running recording. [`Recording::stop`] ends it; dropping it removes the instance too.
#[derive(Debug)]
pub struct Recording<D: Decode> {
    instance: Option<Instance>,
    reader: Option<JoinHandle<Result<Collected<D::Out>, TraceError>>>,
    stop: Arc<AtomicBool>,
}

/// Switch `inst` off and give it the buffer settings every fsbench trace uses: `buffer_kib`
/// per CPU, CLOCK_MONOTONIC time stamps (comparable across CPUs and with the caller's clock),
/// and no overwriting (when full, new events are dropped and counted, never silently replaced).
pub fn configure(inst: &Instance, opts: &TraceOptions) -> Result<(), TraceError> {
    inst.write("tracing_on", "0")?;
    inst.write("buffer_size_kb", &opts.buffer_kib_per_cpu.to_string())?;
    inst.write("trace_clock", "mono")?;
    inst.write("options/overwrite", "0")
}

/// The text of the format file of `group/event` in `inst`, or [`TraceError::Unavailable`]
/// naming the missing tracepoint.
pub fn event_format(inst: &Instance, group: &str, event: &str) -> Result<String, TraceError> {
    std::fs::read_to_string(inst.path().join("events").join(group).join(event).join("format"))
        .map_err(|e| {
            TraceError::Unavailable(format!(
                "the kernel lacks the tracepoint {group}:{event} ({e})"
            ))
        })
}

impl<D: Decode> Recording<D> {
    /// Start reading `inst` (already [`configure`]d, its events enabled) with `decoder`, then
    /// switch tracing on.
    pub fn start(inst: Instance, decoder: D, opts: &TraceOptions) -> Result<Self, TraceError> {
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
        let rec = Recording { instance: Some(inst), reader: Some(reader), stop };
        if let Some(i) = rec.instance.as_ref() {
            i.write("tracing_on", "1")?;
        }
        // On error above, `rec` is dropped: the reader is joined and the instance removed.
        Ok(rec)
    }

    /// The instance (to read or write its control files while recording).
    pub fn instance(&self) -> Option<&Instance> {
        self.instance.as_ref()
    }

    /// Stop, read what is left, count the lost events and remove the instance.
    pub fn stop(mut self) -> Result<Recorded<D::Out>, TraceError> {
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
        let mut events: Vec<D::Out> = collected.per_cpu.into_iter().flatten().collect();
        // Stable: same-time events of one CPU keep their order (issue before complete).
        events.sort_by_key(D::time_of);
        Ok(Recorded {
            events,
            lost: lost.max(collected.missed_in_pages),
            over_limit: collected.over_limit,
        })
    }
}

impl<D: Decode> Drop for Recording<D> {
    fn drop(&mut self) {
        if let Some(inst) = self.instance.take() {
            let _ = inst.write("tracing_on", "0");
            self.stop.store(true, Ordering::Release);
            // The reader holds the buffers open; rmdir fails with EBUSY until it is gone.
            if let Some(r) = self.reader.take() {
                let _ = r.join();
            }
            if let Err(e) = inst.remove() {
                eprintln!("fsbench: {e}");
            }
        }
    }
}

/// Sum of `overrun` and `dropped events` over the instance's per-CPU `stats` files.
pub fn lost_events(instance: &Path) -> u64 {
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
