//! What a block trace yields for one traced interval: request counts per direction, request
//! sizes, queue depth, device latency, seeks and a downsampled offset series. The method is
//! stated where it is computed, [`crate::observe::trace::summary`].

use serde::{Deserialize, Serialize};

/// The operation of a bio or request, from the `rwbs` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum Op {
    /// `R`.
    #[serde(rename = "R")]
    Read,
    /// `W`.
    #[serde(rename = "W")]
    Write,
    /// `D` (discard, secure erase).
    #[serde(rename = "D")]
    Discard,
    /// `F` as the operation (a flush request, no data).
    #[serde(rename = "F")]
    Flush,
    /// `N` or anything else.
    #[serde(rename = "N")]
    Other,
}

/// Counts for one direction (reads, writes, or other: flushes, discards).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    /// `block_bio_queue` events (blktrace `Q`, "Writes Queued").
    pub bios_queued: u64,
    /// Bytes of those bios.
    pub bios_queued_bytes: u64,
    /// Bios appended to a request (`M`).
    pub bio_backmerges: u64,
    /// Bios prepended to a request (`F`).
    pub bio_frontmerges: u64,
    /// Bios split (`X`).
    pub splits: u64,
    /// Requests inserted into a scheduler or dispatch list (`I`; with the `none` scheduler and
    /// direct issue the kernel skips this step).
    pub requests_inserted: u64,
    /// Requests merged with another request in the scheduler (`block_rq_merge`).
    pub request_merges: u64,
    /// Requests handed to the driver (`D`, "Write Dispatches").
    pub requests_issued: u64,
    /// Bytes of those requests.
    pub requests_issued_bytes: u64,
    /// Requests the driver completed (`C`, "Writes Completed").
    pub requests_completed: u64,
    /// Bytes of those requests.
    pub requests_completed_bytes: u64,
}

/// One bucket of the request-size histogram: requests with `from_bytes <= size < to_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeBucket {
    /// Lower bound (a power of two), inclusive.
    pub from_bytes: u64,
    /// Upper bound (the next power of two), exclusive.
    pub to_bytes: u64,
    /// Issued requests of that size.
    pub requests: u64,
}

/// One sample of the queue depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DepthSample {
    /// Start of the interval, milliseconds since the tracer started.
    pub t_ms: f64,
    /// Time-weighted mean depth over the interval.
    pub mean: f64,
    /// Highest depth reached in the interval.
    pub max: u32,
}

/// Requests in flight at the device (issued, not completed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueDepth {
    /// Highest depth.
    pub max: u32,
    /// Time-weighted mean over the whole trace.
    pub mean: f64,
    /// Width of each sample's interval, nanoseconds.
    pub interval_nanos: u64,
    /// One sample per interval.
    pub series: Vec<DepthSample>,
}

/// Issue -> complete latency.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Requests measured.
    pub count: u64,
    /// Mean.
    pub mean_nanos: f64,
    /// Median.
    pub p50_nanos: u64,
    /// 90th percentile.
    pub p90_nanos: u64,
    /// 99th percentile.
    pub p99_nanos: u64,
    /// Maximum.
    pub max_nanos: u64,
}

/// Device latency by direction (`None` when no request of that kind was matched).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceLatency {
    /// Reads.
    pub reads: Option<LatencySummary>,
    /// Writes.
    pub writes: Option<LatencySummary>,
    /// Every request, flushes and discards included.
    pub all: Option<LatencySummary>,
}

/// Distance between consecutive issued requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeekSummary {
    /// Gaps measured (issued data requests minus one per device).
    pub gaps: u64,
    /// Mean gap, 512-byte sectors.
    pub mean_sectors: f64,
    /// Median gap, 512-byte sectors.
    pub median_sectors: u64,
    /// Share of gaps that are 0 (the request starts where the previous one ended), 0..=1.
    pub sequential_share: f64,
}

/// One point of the offset-vs-time plot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffsetPoint {
    /// Issue time, milliseconds since the tracer started.
    pub t_ms: f64,
    /// Device index (into [`TraceSummary::devices`]).
    pub dev: u8,
    /// Start of the request on the device, bytes (sector × 512).
    pub offset_bytes: u64,
    /// Request size.
    pub bytes: u64,
    /// Direction.
    pub op: Op,
}

/// Downsampled issued requests, for an offset-vs-time plot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OffsetSeries {
    /// Every `stride`-th issued request was kept.
    pub stride: u64,
    /// The kept requests, in time order (left out of the JSON output unless `--raw`).
    #[serde(default)]
    pub points: Vec<OffsetPoint>,
}

/// Everything a block trace yields for one traced interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Traced devices (kernel names).
    pub devices: Vec<String>,
    /// From the start of tracing to its stop.
    pub duration_nanos: u64,
    /// Events decoded and kept.
    pub events_recorded: u64,
    /// Events the kernel lost because the ring buffer was full (per-CPU `overrun` + `dropped
    /// events`). When non-zero every count below is a lower bound.
    pub events_lost: u64,
    /// Events decoded but not kept because the in-memory limit was reached.
    pub events_over_limit: u64,
    /// Reads.
    pub reads: OpCounts,
    /// Writes.
    pub writes: OpCounts,
    /// Flushes, discards and anything else.
    pub other: OpCounts,
    /// Completions with no matching issue in the trace.
    pub completions_unmatched: u64,
    /// Issues of a request already in flight (same device, sector, size and direction, not yet
    /// completed): a driver that gave the request back (requeue) and had it issued again. Counted
    /// here, not as new requests; its latency runs from the last issue.
    #[serde(default)]
    pub requests_reissued: u64,
    /// Sizes of issued read requests (non-empty buckets, ascending).
    pub request_sizes_read: Vec<SizeBucket>,
    /// Sizes of issued write requests.
    pub request_sizes_write: Vec<SizeBucket>,
    /// Queue depth over time.
    pub queue_depth: QueueDepth,
    /// Issue -> complete latency.
    pub device_latency: DeviceLatency,
    /// Seek distance.
    pub seek: SeekSummary,
    /// Offset vs time (what seekwatcher plotted).
    pub offsets: OffsetSeries,
    /// What the test's threads waited for while off CPU (the scheduler's account), when it was
    /// traced; absent in runs made before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offcpu: Option<OffCpuBreakdown>,
}

/// Off-CPU time of the test's threads by reason, from `sched:sched_switch` and the kernel stack
/// at each switch-out (see `observe::trace::offcpu` for the table of kernel functions).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OffCpuBreakdown {
    /// Switch-outs of the test's threads seen.
    pub switches: u64,
    /// Off-CPU time summed over the test's threads (switch-out to switch-in).
    pub total_nanos: u64,
    /// Per reason, largest first.
    pub reasons: Vec<OffCpuReason>,
    /// Trace events the kernel dropped (buffer full): when non-zero the times are lower bounds.
    #[serde(default)]
    pub events_lost: u64,
}

/// One reason's share of [`OffCpuBreakdown`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OffCpuReason {
    /// In words, e.g. `throttled in balance_dirty_pages`.
    pub reason: String,
    /// Off-CPU time for this reason.
    pub nanos: u64,
    /// Switch-outs for this reason.
    pub switches: u64,
}

impl OffCpuBreakdown {
    /// Add `other` (another phase) into this one, keeping reasons largest first.
    pub fn add(&mut self, other: &OffCpuBreakdown) {
        self.switches += other.switches;
        self.total_nanos += other.total_nanos;
        self.events_lost += other.events_lost;
        for r in &other.reasons {
            match self.reasons.iter_mut().find(|m| m.reason == r.reason) {
                Some(m) => {
                    m.nanos += r.nanos;
                    m.switches += r.switches;
                }
                None => self.reasons.push(r.clone()),
            }
        }
        self.reasons.sort_by(|a, b| b.nanos.cmp(&a.nanos).then(a.reason.cmp(&b.reason)));
    }

    /// Share of the off-CPU time `reason` took (0 when absent or nothing was off CPU).
    pub fn share(&self, reason: &str) -> f64 {
        let n = self.reasons.iter().find(|r| r.reason == reason).map_or(0, |r| r.nanos);
        if self.total_nanos == 0 {
            0.0
        } else {
            n as f64 / self.total_nanos as f64
        }
    }

    /// In words, the reasons of at least 1%, largest first: `throttled in balance_dirty_pages
    /// 58%, waiting on the journal 20%, other 3%`.
    pub fn words(&self) -> String {
        let v: Vec<String> = self
            .reasons
            .iter()
            .map(|r| (r, self.share(&r.reason)))
            .filter(|(_, s)| *s >= 0.01)
            .map(|(r, s)| format!("{} {:.0}%", r.reason, s * 100.0))
            .collect();
        if v.is_empty() {
            "nothing off CPU".into()
        } else {
            v.join(", ")
        }
    }
}

impl OpCounts {
    /// Bio merges of both kinds (blktrace's "Write Merges").
    pub fn bio_merges(&self) -> u64 {
        self.bio_backmerges + self.bio_frontmerges
    }

    /// Mean size of an issued request, bytes.
    pub fn mean_issued_request_bytes(&self) -> f64 {
        if self.requests_issued == 0 {
            0.0
        } else {
            self.requests_issued_bytes as f64 / self.requests_issued as f64
        }
    }
}
