//! The reader thread: drains every CPU's `trace_pipe_raw` of the instance into per-CPU event
//! lists until told to stop, then drains once more.
//!
//! Files are opened `O_NONBLOCK` and polled (every `poll` interval while idle) instead of
//! blocking: a blocked read cannot be interrupted cleanly, and the ring buffer (tens of MiB per
//! CPU) absorbs far more than one poll interval of events. One thread serves all CPUs, so
//! tracing costs one mostly-sleeping thread. Each read returns one whole sub-buffer; parsing
//! appends to a `Vec` (amortised, no per-event allocation).

use super::event::Decode;
use super::ringbuf::{parse_page, PageLayout};
use super::TraceError;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the reader collected.
#[derive(Debug)]
pub struct Collected<E> {
    /// Events per CPU, each list in time order.
    pub per_cpu: Vec<Vec<E>>,
    /// Events not kept because of the limit.
    pub over_limit: u64,
    /// Events the kernel flagged as missed in page headers (a lower bound; the per-CPU `stats`
    /// files have the full count).
    pub missed_in_pages: u64,
    /// Records skipped (other events or devices; normally 0 thanks to the filter).
    pub skipped: u64,
}

/// Settings of the reader.
#[derive(Debug, Clone)]
pub struct ReaderConfig<D> {
    /// The instance directory.
    pub instance: PathBuf,
    /// Sub-buffer size (one read returns at most this much).
    pub page_bytes: usize,
    /// Page header layout.
    pub layout: PageLayout,
    /// Record decoder.
    pub decoder: D,
    /// Sleep between polls when there was nothing to read.
    pub poll: Duration,
    /// Most events kept in memory.
    pub max_events: usize,
}

/// Open `per_cpu/cpuN/trace_pipe_raw` of every CPU of the instance.
pub fn open_cpus(instance: &Path) -> Result<Vec<File>, TraceError> {
    let dir = instance.join("per_cpu");
    let rd = std::fs::read_dir(&dir).map_err(|source| TraceError::Io {
        action: "listing",
        path: dir.clone(),
        source,
    })?;
    let mut cpus: Vec<u32> = rd
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    let mut files = Vec::with_capacity(cpus.len());
    for c in cpus {
        let p = dir.join(format!("cpu{c}/trace_pipe_raw"));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .map_err(|source| TraceError::Io { action: "opening", path: p, source })?;
        files.push(f);
    }
    if files.is_empty() {
        return Err(TraceError::Unavailable(format!("no CPUs under {}", dir.display())));
    }
    Ok(files)
}

/// Run until `stop` is set, then drain what is left. `files` come from [`open_cpus`].
pub fn run<D: Decode>(
    cfg: ReaderConfig<D>,
    mut files: Vec<File>,
    stop: Arc<AtomicBool>,
) -> Result<Collected<D::Out>, TraceError> {
    let mut out = Collected {
        per_cpu: (0..files.len()).map(|_| Vec::new()).collect(),
        over_limit: 0,
        missed_in_pages: 0,
        skipped: 0,
    };
    let mut page = vec![0u8; cfg.page_bytes];
    let mut total = 0usize;
    loop {
        // Read the flag before draining: events written before the stop are then all read.
        let stopping = stop.load(Ordering::Acquire);
        let mut got = false;
        for (cpu, f) in files.iter_mut().enumerate() {
            loop {
                match f.read(&mut page) {
                    Ok(0) => break,
                    Ok(n) => {
                        got = true;
                        let list = &mut out.per_cpu[cpu];
                        let before = list.len();
                        let limit = cfg.max_events.saturating_sub(total) + before;
                        let info = parse_page(
                            &page[..n],
                            cfg.layout,
                            &cfg.decoder,
                            list,
                            limit,
                            &mut out.over_limit,
                        )
                        .map_err(|e| TraceError::Parse(format!("cpu{cpu}: {e}")))?;
                        total += list.len() - before;
                        out.skipped += info.skipped;
                        out.missed_in_pages += info.missed;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(source) => {
                        return Err(TraceError::Io {
                            action: "reading",
                            path: cfg.instance.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw")),
                            source,
                        })
                    }
                }
            }
        }
        if stopping {
            return Ok(out);
        }
        if !got {
            std::thread::sleep(cfg.poll);
        }
    }
}
