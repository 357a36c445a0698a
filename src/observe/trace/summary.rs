//! What a trace says, computed once after the phase from the time-sorted events.
//!
//! Method notes:
//! - Totals count events as blktrace's `blkparse` totals do (see docs/design/tracing.md for the
//!   mapping): `Q` -> `bios_queued`, `M`/`F` -> `bio_backmerges`/`bio_frontmerges`
//!   ("Write Merges" is their sum), `D` -> `requests_issued` ("Write Dispatches"), `C` ->
//!   `requests_completed` ("Writes Completed").
//! - A completion is matched to its issue by (device, start sector), first in first out;
//!   zero-length requests (flushes) by device alone, as the kernel reports their completion at
//!   sector -1. Unmatched completions (issued before tracing started, or the flush machinery
//!   completing the request that carried a preflush) count in the totals but not in latency or
//!   queue depth.
//! - Queue depth is the number of issued, not yet completed requests; its mean is weighted by
//!   time (the integral of depth over the interval divided by its length).
//! - Device latency is issue -> complete, recorded in an HdrHistogram with 3 significant digits
//!   ([`crate::stats::latency`]): percentiles are within 0.1%.
//! - Seek distance is the gap in sectors between the end of one issued request and the start of
//!   the next one issued on the same device; 0 is sequential. The median is exact.
//! - The offset-vs-time series keeps every k-th issued request (k = ceil(n / max points)), which
//!   keeps the shape of seekwatcher's scatter plot without its millions of points.

use super::event::{Event, Kind};
use crate::model::trace::*;
use crate::stats::latency::new_histogram;
use hdrhistogram::Histogram;
use std::collections::{HashMap, VecDeque};

/// Tuning of [`summarize`].
#[derive(Debug, Clone, Copy)]
pub struct SummaryOptions {
    /// Shortest queue-depth sample interval; widened so there are at most `max_points` samples.
    pub depth_interval_nanos: u64,
    /// Upper bound for the queue-depth series and the offset series.
    pub max_points: usize,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions { depth_interval_nanos: 10_000_000, max_points: 5000 }
    }
}

/// Summarise `events` (sorted by time, stably: same-time events keep their per-CPU order)
/// traced from `t0_ns` to `t1_ns`.
pub fn summarize(
    events: &[Event],
    devices: &[String],
    t0_ns: u64,
    t1_ns: u64,
    opts: SummaryOptions,
) -> TraceSummary {
    let t0 = events.first().map_or(t0_ns, |e| e.ts_ns.min(t0_ns));
    let t1 = events.last().map_or(t1_ns, |e| e.ts_ns.max(t1_ns)).max(t0);
    let mut s = TraceSummary {
        devices: devices.to_vec(),
        duration_nanos: t1 - t0,
        events_recorded: events.len() as u64,
        ..Default::default()
    };
    let mut sizes = [[0u64; 64]; 2];
    let mut inflight: HashMap<(u8, u64), VecDeque<u64>> = HashMap::new();
    let mut hist = [new_histogram(), new_histogram(), new_histogram()];
    let mut depth = DepthTracker::new(t0, t1, opts);
    let mut last_end: Vec<Option<u64>> = vec![None; devices.len().max(1)];
    let mut gaps: Vec<u64> = Vec::new();
    let issued_data = events.iter().filter(|e| e.kind == Kind::RqIssue && e.nr_sector > 0).count();
    let stride = issued_data.div_ceil(opts.max_points.max(1)).max(1) as u64;
    s.offsets.stride = stride;
    let mut issued_seen = 0u64;

    for e in events {
        // By operation, data-less writes included: /sys/block counts the empty write that
        // carried a preflush as a completed write too (it is completed by the flush machinery
        // without ever being issued; the flush itself is a separate `F` request).
        let c = match e.op {
            Op::Read => &mut s.reads,
            Op::Write => &mut s.writes,
            _ => &mut s.other,
        };
        let key = if e.nr_sector == 0 { (e.dev, u64::MAX) } else { (e.dev, e.sector) };
        match e.kind {
            Kind::BioQueue => {
                c.bios_queued += 1;
                c.bios_queued_bytes += e.bytes();
            }
            Kind::BioBackmerge => c.bio_backmerges += 1,
            Kind::BioFrontmerge => c.bio_frontmerges += 1,
            Kind::Split => c.splits += 1,
            Kind::RqInsert => c.requests_inserted += 1,
            Kind::RqMerge => c.request_merges += 1,
            Kind::RqIssue => {
                if let Some(q) = inflight.get_mut(&key).filter(|_| e.nr_sector > 0) {
                    // The same request again (a virtio disk that was full requeues it): one
                    // request, timed from its last issue. Seen in `profile` on this VM's disk:
                    // 12 of libpython's 24 requests appeared twice, the second never completed.
                    if let Some(t) = q.back_mut() {
                        *t = e.ts_ns;
                    }
                    s.requests_reissued += 1;
                    continue;
                }
                c.requests_issued += 1;
                c.requests_issued_bytes += e.bytes();
                inflight.entry(key).or_default().push_back(e.ts_ns);
                depth.change(e.ts_ns, 1);
                if e.nr_sector > 0 {
                    if let Some(dir) = match e.op {
                        Op::Read => Some(0),
                        Op::Write => Some(1),
                        _ => None,
                    } {
                        sizes[dir][63 - e.bytes().leading_zeros() as usize] += 1;
                    }
                    let last = last_end.len() - 1;
                    let slot = &mut last_end[usize::from(e.dev).min(last)];
                    if let Some(end) = *slot {
                        gaps.push(e.sector.abs_diff(end));
                    }
                    *slot = Some(e.sector + u64::from(e.nr_sector));
                    if issued_seen % stride == 0 {
                        s.offsets.points.push(OffsetPoint {
                            t_ms: (e.ts_ns - t0) as f64 / 1e6,
                            dev: e.dev,
                            offset_bytes: e.sector * 512,
                            bytes: e.bytes(),
                            op: e.op,
                        });
                    }
                    issued_seen += 1;
                }
            }
            Kind::RqComplete => {
                c.requests_completed += 1;
                c.requests_completed_bytes += e.bytes();
                let issued = match inflight.get_mut(&key) {
                    Some(q) => {
                        let t = q.pop_front();
                        if q.is_empty() {
                            inflight.remove(&key);
                        }
                        t
                    }
                    None => None,
                };
                match issued {
                    Some(t) => {
                        depth.change(e.ts_ns, -1);
                        let lat = e.ts_ns.saturating_sub(t).max(1);
                        hist[2].saturating_record(lat);
                        match e.op {
                            Op::Read => hist[0].saturating_record(lat),
                            Op::Write => hist[1].saturating_record(lat),
                            _ => {}
                        }
                    }
                    None => s.completions_unmatched += 1,
                }
            }
        }
    }
    s.request_sizes_read = buckets(&sizes[0]);
    s.request_sizes_write = buckets(&sizes[1]);
    s.queue_depth = depth.finish();
    s.device_latency = DeviceLatency {
        reads: latency(&hist[0]),
        writes: latency(&hist[1]),
        all: latency(&hist[2]),
    };
    s.seek = seek(&mut gaps);
    s
}

fn buckets(counts: &[u64; 64]) -> Vec<SizeBucket> {
    counts
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| SizeBucket {
            from_bytes: 1 << k,
            to_bytes: 1u64.checked_shl(k as u32 + 1).unwrap_or(u64::MAX),
            requests: *n,
        })
        .collect()
}

fn latency(h: &Histogram<u64>) -> Option<LatencySummary> {
    (!h.is_empty()).then(|| LatencySummary {
        count: h.len(),
        mean_nanos: h.mean(),
        p50_nanos: h.value_at_quantile(0.50),
        p90_nanos: h.value_at_quantile(0.90),
        p99_nanos: h.value_at_quantile(0.99),
        max_nanos: h.max(),
    })
}

fn seek(gaps: &mut [u64]) -> SeekSummary {
    if gaps.is_empty() {
        return SeekSummary::default();
    }
    let n = gaps.len();
    let mean = gaps.iter().map(|g| *g as f64).sum::<f64>() / n as f64;
    let sequential = gaps.iter().filter(|g| **g == 0).count();
    // Exact median: the lower middle for an even count.
    let (_, median, _) = gaps.select_nth_unstable((n - 1) / 2);
    SeekSummary {
        gaps: n as u64,
        mean_sectors: mean,
        median_sectors: *median,
        sequential_share: sequential as f64 / n as f64,
    }
}

/// Integrates the in-flight count over fixed intervals.
struct DepthTracker {
    t0: u64,
    t1: u64,
    interval: u64,
    depth: u32,
    last: u64,
    /// Per interval: integral of depth (depth × ns) and the maximum.
    area: Vec<u128>,
    max: Vec<u32>,
}

impl DepthTracker {
    fn new(t0: u64, t1: u64, opts: SummaryOptions) -> DepthTracker {
        let span = (t1 - t0).max(1);
        let interval = opts.depth_interval_nanos.max(span.div_ceil(opts.max_points.max(1) as u64));
        let n = span.div_ceil(interval) as usize;
        DepthTracker { t0, t1, interval, depth: 0, last: t0, area: vec![0; n], max: vec![0; n] }
    }

    fn slot(&self, t: u64) -> usize {
        (((t - self.t0) / self.interval) as usize).min(self.area.len() - 1)
    }

    /// Account the current depth up to `t`.
    fn advance(&mut self, t: u64) {
        let t = t.clamp(self.last, self.t1);
        let mut from = self.last;
        while from < t {
            let i = self.slot(from);
            let slot_end = (self.t0 + (i as u64 + 1) * self.interval).min(t);
            let until = if slot_end <= from { t } else { slot_end };
            self.area[i] += u128::from(self.depth) * u128::from(until - from);
            self.max[i] = self.max[i].max(self.depth);
            from = until;
        }
        self.last = t;
    }

    fn change(&mut self, t: u64, by: i32) {
        self.advance(t);
        self.depth = self.depth.saturating_add_signed(by);
        let i = self.slot(t.clamp(self.t0, self.t1));
        self.max[i] = self.max[i].max(self.depth);
    }

    fn finish(mut self) -> QueueDepth {
        self.advance(self.t1);
        let span = self.t1 - self.t0;
        let total: u128 = self.area.iter().sum();
        let mut series = Vec::with_capacity(self.area.len());
        for (i, (a, m)) in self.area.iter().zip(&self.max).enumerate() {
            let start = i as u64 * self.interval;
            let width = self.interval.min(span.saturating_sub(start)).max(1);
            series.push(DepthSample {
                t_ms: start as f64 / 1e6,
                mean: *a as f64 / width as f64,
                max: *m,
            });
        }
        QueueDepth {
            max: self.max.iter().copied().max().unwrap_or(0),
            mean: if span == 0 { 0.0 } else { total as f64 / span as f64 },
            interval_nanos: self.interval,
            series,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(ts_ns: u64, kind: Kind, op: Op, sector: u64, nr_sector: u32) -> Event {
        Event { ts_ns, sector, nr_sector, dev: 0, kind, op, flags: 0 }
    }

    #[test]
    fn a_request_issued_again_while_in_flight_is_one_request() {
        use Kind::*;
        let ms = 1_000_000;
        // A read issued, given back by the driver and issued again, then completed once.
        let events = vec![
            ev(ms, RqIssue, Op::Read, 2_165_816, 4064),
            ev(2 * ms, RqIssue, Op::Read, 2_165_816, 4064),
            ev(5 * ms, RqComplete, Op::Read, 2_165_816, 4064),
        ];
        let s = summarize(&events, &["vda".into()], 0, 10 * ms, SummaryOptions::default());
        assert_eq!(s.reads.requests_issued, 1);
        assert_eq!(s.reads.requests_issued_bytes, 4064 * 512);
        assert_eq!(s.requests_reissued, 1);
        assert_eq!(s.completions_unmatched, 0);
        let r = s.device_latency.reads.as_ref().unwrap();
        assert!((3 * ms..3 * ms + 3000).contains(&r.p50_nanos), "from the last issue: {r:?}");
        assert_eq!(s.queue_depth.max, 1);
    }

    #[test]
    fn counts_latency_depth_seek() {
        use Kind::*;
        let ms = 1_000_000;
        let events = vec![
            ev(0, BioQueue, Op::Write, 0, 8),
            ev(ms, BioQueue, Op::Write, 8, 8),
            ev(ms, BioBackmerge, Op::Write, 8, 8),
            ev(2 * ms, RqIssue, Op::Write, 0, 16),
            ev(3 * ms, RqIssue, Op::Write, 16, 8),
            ev(5 * ms, RqComplete, Op::Write, 0, 16),
            ev(7 * ms, RqComplete, Op::Write, 16, 8),
            ev(8 * ms, RqIssue, Op::Read, 1000, 128),
            ev(9 * ms, RqComplete, Op::Read, 1000, 128),
            ev(9 * ms, RqIssue, Op::Flush, 0, 0),
            ev(10 * ms, RqComplete, Op::Flush, u64::MAX, 0),
            ev(10 * ms, RqComplete, Op::Write, 0, 0), // the preflush carrier: no issue
        ];
        let s = summarize(&events, &["loop0".into()], 0, 20 * ms, SummaryOptions::default());
        assert_eq!(s.writes.bios_queued, 2);
        assert_eq!(s.writes.bios_queued_bytes, 8192);
        assert_eq!(s.writes.bio_merges(), 1);
        assert_eq!(s.writes.requests_issued, 2);
        assert_eq!(s.writes.requests_issued_bytes, 12288);
        assert_eq!(s.writes.requests_completed, 3);
        assert_eq!(s.writes.requests_completed_bytes, 12288);
        assert_eq!(s.reads.requests_completed, 1);
        assert_eq!(s.other.requests_completed, 1);
        assert_eq!(s.completions_unmatched, 1);
        assert_eq!(
            s.request_sizes_write,
            vec![
                SizeBucket { from_bytes: 4096, to_bytes: 8192, requests: 1 },
                SizeBucket { from_bytes: 8192, to_bytes: 16384, requests: 1 }
            ]
        );
        assert_eq!(s.request_sizes_read[0].from_bytes, 65536);
        let w = s.device_latency.writes.as_ref().unwrap();
        assert_eq!(w.count, 2);
        assert!((3 * ms..3 * ms + 3000).contains(&w.p50_nanos), "{w:?}");
        assert!((4 * ms..4 * ms + 5000).contains(&w.max_nanos), "{w:?}");
        assert_eq!(s.device_latency.all.as_ref().unwrap().count, 4);
        // Depth: 1 over [2,3), 2 over [3,5), 1 over [5,7), 1 over [8,9), 1 over [9,10).
        assert_eq!(s.queue_depth.max, 2);
        let area = 1 + 2 * 2 + 2 + 1 + 1;
        assert!((s.queue_depth.mean - area as f64 / 20.0).abs() < 1e-9, "{:?}", s.queue_depth);
        assert_eq!(s.queue_depth.series.len(), 2);
        assert!((s.queue_depth.series[0].mean - area as f64 / 10.0).abs() < 1e-9);
        assert_eq!(s.queue_depth.series[0].max, 2);
        assert_eq!(s.queue_depth.series[1].mean, 0.0);
        // Seeks: 0->16 ends at 16, next starts at 16 (sequential); then 1000 - 24 = 976.
        assert_eq!(s.seek.gaps, 2);
        assert_eq!(s.seek.sequential_share, 0.5);
        assert_eq!(s.seek.median_sectors, 0);
        assert_eq!(s.seek.mean_sectors, 488.0);
        assert_eq!(s.offsets.stride, 1);
        assert_eq!(s.offsets.points.len(), 3);
        assert_eq!(s.offsets.points[2].offset_bytes, 512_000);
        assert_eq!(s.offsets.points[2].t_ms, 8.0);
    }

    #[test]
    fn series_are_bounded() {
        let mut events = Vec::new();
        for i in 0..20_000u64 {
            events.push(ev(i * 1000, Kind::RqIssue, Op::Write, i * 8, 8));
            events.push(ev(i * 1000 + 500, Kind::RqComplete, Op::Write, i * 8, 8));
        }
        let opts = SummaryOptions { depth_interval_nanos: 1, max_points: 5000 };
        let s = summarize(&events, &["x".into()], 0, 20_000_000, opts);
        assert!(s.offsets.points.len() <= 5000 && s.offsets.points.len() >= 4999);
        assert_eq!(s.offsets.stride, 4);
        assert!(s.queue_depth.series.len() <= 5000);
        assert!((s.queue_depth.mean - 0.5).abs() < 1e-6, "{}", s.queue_depth.mean);
        assert_eq!(s.seek.sequential_share, 1.0);
    }

    #[test]
    fn empty_trace() {
        let s = summarize(&[], &[], 5, 5, SummaryOptions::default());
        assert_eq!(s.events_recorded, 0);
        assert_eq!(s.queue_depth.max, 0);
        assert!(s.device_latency.all.is_none());
        let j = serde_json::to_string(&s).unwrap();
        assert!(j.contains("\"requests_issued_bytes\":0"));
    }
}
