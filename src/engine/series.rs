//! The interval series of a timed phase, recorded by each worker in its hot loop and merged
//! after the phase ([`merge`]) into a [`PhaseSeries`].
//!
//! Why this shape: a phase total hides when the work slowed, but the hot loop may not pay for
//! the answer. Each worker owns a [`SeriesRecorder`], allocated before the start barrier: an
//! inline coarse histogram for the interval in progress and a fixed ring of closed intervals.
//! Per op it costs one bucket increment, a max and an add of the latency to its kind's sum
//! ([`SeriesRecorder::record`]; the bucket is a `leading_zeros`, a shift and a mask; the sums
//! give each interval's exact mean latency per direction, fio's averaged latency log), and per
//! reap one comparison of the clock already read against the next interval boundary. Bytes and ops per direction are not counted per op at
//! all: when an interval closes ([`SeriesRecorder::roll`], out of line, once per interval) the
//! worker's cumulative counters are differenced. No allocation, lock or formatting.
//!
//! Intervals adapt: the series starts at the base interval (`--interval`, else 10 ms) and,
//! when the ring is full, neighbouring intervals are merged in pairs and the interval doubles,
//! so a phase of any length ends with between `cap / 2` and `cap` points (100 to 200 by
//! default) and never an interval under 10 ms. Every worker of a phase counts from one origin
//! (the first worker released), so merging is a sum per point once every worker is at the
//! coarsest interval any of them reached.
//!
//! The coarse histogram has 4 sub-buckets per power of two (values up to 2^40 ns, about 18
//! minutes, above that in the last bucket); a percentile is reported as its bucket's midpoint,
//! within 12.5% of the true value. The maximum is exact.

use super::worker::WorkerOutput;
use crate::model::job::{OpKind, OP_KINDS};
use crate::model::latency::OpHistograms;
use crate::model::series::{PhaseSeries, ThreadWindows, MIN_INTERVAL_NANOS};
use crate::observe::blockstat::BlockStat;
use crate::sys::rusage::CpuTime;
use std::sync::atomic::{AtomicU64, Ordering};

/// Buckets of the coarse histogram.
const BUCKETS: usize = 160;

/// Points kept before pairs are merged (the series ends with `CAP / 2` to `CAP` points).
pub const CAP: usize = 200;

/// The coarse bucket of a latency: exact below 4 ns, then 4 sub-buckets per power of two.
#[inline(always)]
fn bucket(d: u64) -> usize {
    if d < 4 {
        return d as usize;
    }
    let e = 63 - d.leading_zeros() as usize; // >= 2
    let sub = ((d >> (e - 2)) & 3) as usize;
    ((e - 1) * 4 + sub).min(BUCKETS - 1)
}

/// The midpoint of bucket `i` (its value for percentiles).
fn bucket_mid(i: usize) -> u64 {
    if i < 4 {
        return i as u64;
    }
    let e = i / 4 + 1;
    let sub = (i % 4) as u64;
    let lo = (4 + sub) << (e - 2);
    lo + (1u64 << (e - 2)) / 2
}

/// The value at quantile `q` of a coarse histogram of `total` counts.
fn quantile(h: &[u32], total: u64, q: f64) -> u64 {
    if total == 0 {
        return 0;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0u64;
    for (i, c) in h.iter().enumerate() {
        seen += *c as u64;
        if seen >= rank {
            return bucket_mid(i);
        }
    }
    bucket_mid(h.len() - 1)
}

/// How a phase's workers record their series: the common origin (0 until the first worker is
/// released, which sets it), the base interval and the ring's size.
#[derive(Clone, Copy)]
pub struct SeriesPlan<'a> {
    /// `CLOCK_MONOTONIC` ns of the first release (set once by the first worker).
    pub origin: &'a AtomicU64,
    /// First interval (at least [`MIN_INTERVAL_NANOS`]).
    pub interval_nanos: u64,
    /// Points kept before pairs are merged (even, at least 2).
    pub cap: usize,
}

impl SeriesPlan<'_> {
    /// The ring a phase of `seconds` (when time-based) needs: [`CAP`] points, or, for a fixed
    /// `interval` the user set, enough for the whole phase (up to 100 000 points) so the
    /// interval stays what was asked.
    pub fn cap_for(interval_nanos: u64, fixed: bool, seconds: Option<f64>) -> usize {
        match (fixed, seconds) {
            (true, Some(s)) => {
                let n = (s * 1e9 / interval_nanos as f64).ceil() as usize + 2;
                (n.div_ceil(2) * 2).clamp(CAP, 100_000)
            }
            _ => CAP,
        }
    }
}

/// The cumulative counters a closed interval is differenced against.
#[derive(Clone, Copy, Default)]
struct Cum {
    read_bytes: u64,
    write_bytes: u64,
    read_ops: u64,
    write_ops: u64,
}

impl Cum {
    fn of(bytes_read: u64, bytes_written: u64, hist: &OpHistograms) -> Cum {
        Cum {
            read_bytes: bytes_read,
            write_bytes: bytes_written,
            read_ops: hist.0[OpKind::Read.index()].len(),
            write_ops: hist.0[OpKind::Write.index()].len(),
        }
    }
}

/// One closed interval of one worker.
#[derive(Clone, Copy, Default)]
struct Point {
    read_bytes: u64,
    write_bytes: u64,
    read_ops: u64,
    write_ops: u64,
    ops: u64,
    max: u64,
    /// Sums of the reads' and the writes' latencies, ns.
    read_lat: u64,
    write_lat: u64,
    /// Engines that submit apart: sums of the submission (`[0]` reads, `[1]` writes) and
    /// completion latencies.
    slat: [u64; 2],
    clat: [u64; 2],
}

impl Point {
    fn add(&mut self, o: &Point) {
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.read_ops += o.read_ops;
        self.write_ops += o.write_ops;
        self.ops += o.ops;
        self.max = self.max.max(o.max);
        self.read_lat += o.read_lat;
        self.write_lat += o.write_lat;
        for d in 0..2 {
            self.slat[d] += o.slat[d];
            self.clat[d] += o.clat[d];
        }
    }
}

/// One worker's series (see the module doc). A default recorder records nothing that is kept:
/// its boundary is never reached.
pub struct SeriesRecorder {
    origin: u64,
    interval: u64,
    next_tick: u64,
    /// Index of the interval in progress.
    cur: usize,
    /// The interval in progress.
    hist: [u32; BUCKETS],
    max: u64,
    /// Sum of the latencies of each kind of op, ns (indexed as [`OpKind::index`]: a branch-free
    /// add; only reads and writes are kept when the interval closes).
    lat_sum: [u64; OP_KINDS],
    /// Engines that submit apart: the interval's sums of submission and completion latencies
    /// (`[0]` reads, `[1]` writes), and whether any was recorded.
    slat_sum: [u64; 2],
    clat_sum: [u64; 2],
    split: bool,
    last: Cum,
    /// Closed intervals: `cap` points and `cap * BUCKETS` counts.
    points: Box<[Point]>,
    hists: Box<[u32]>,
    /// Points filled when the worker finished.
    len: usize,
}

impl Default for SeriesRecorder {
    fn default() -> Self {
        SeriesRecorder {
            origin: 0,
            interval: MIN_INTERVAL_NANOS,
            next_tick: u64::MAX,
            cur: 0,
            hist: [0; BUCKETS],
            max: 0,
            lat_sum: [0; OP_KINDS],
            slat_sum: [0; 2],
            clat_sum: [0; 2],
            split: false,
            last: Cum::default(),
            points: Box::default(),
            hists: Box::default(),
            len: 0,
        }
    }
}

impl SeriesRecorder {
    /// A recorder of `cap` points starting at `interval_nanos`, allocated now (before the
    /// barrier); [`Self::start`] arms it.
    pub fn new(interval_nanos: u64, cap: usize) -> SeriesRecorder {
        let cap = cap.max(2) / 2 * 2;
        SeriesRecorder {
            interval: interval_nanos.max(MIN_INTERVAL_NANOS),
            points: vec![Point::default(); cap].into(),
            hists: vec![0u32; cap * BUCKETS].into(),
            ..SeriesRecorder::default()
        }
    }

    /// Arm the recorder at the phase's common origin: the first caller's `now` becomes it.
    pub fn start(&mut self, origin: &AtomicU64, now: u64) {
        if self.points.is_empty() {
            return;
        }
        let o = match origin.compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => now,
            Err(o) => o,
        };
        self.origin = o;
        self.next_tick = o + self.interval;
    }

    /// Record one op's latency in the interval in progress.
    #[inline(always)]
    pub fn record(&mut self, kind: OpKind, nanos: u64) {
        self.hist[bucket(nanos)] += 1;
        self.max = self.max.max(nanos);
        self.lat_sum[kind.index()] += nanos;
    }

    /// Record one data op's submission and completion latency (engines that submit apart),
    /// beside its latency ([`Self::record`]).
    #[inline(always)]
    pub fn record_split(&mut self, write: bool, slat: u64, clat: u64) {
        let d = usize::from(write);
        self.slat_sum[d] += slat;
        self.clat_sum[d] += clat;
        self.split = true;
    }

    /// The clock `t` reached the next boundary ([`Self::due`]): close every interval that ended
    /// by `t`, with the worker's counters as they were before the completions read at `t`.
    #[inline(always)]
    pub fn due(&self, t: u64) -> bool {
        t >= self.next_tick
    }

    /// Close the intervals that ended by `t` (see [`Self::due`]).
    #[inline(never)]
    pub fn roll(&mut self, t: u64, bytes_read: u64, bytes_written: u64, hist: &OpHistograms) {
        let now = Cum::of(bytes_read, bytes_written, hist);
        while t >= self.next_tick {
            self.close(now);
            self.next_tick += self.interval;
            self.cur += 1;
            if self.cur == self.points.len() {
                self.coalesce();
            }
        }
    }

    /// Store the interval in progress at `cur`, differenced against the last close.
    fn close(&mut self, now: Cum) {
        let p = Point {
            read_bytes: now.read_bytes - self.last.read_bytes,
            write_bytes: now.write_bytes - self.last.write_bytes,
            read_ops: now.read_ops - self.last.read_ops,
            write_ops: now.write_ops - self.last.write_ops,
            ops: self.hist.iter().map(|c| *c as u64).sum(),
            max: self.max,
            read_lat: self.lat_sum[OpKind::Read.index()],
            write_lat: self.lat_sum[OpKind::Write.index()],
            slat: self.slat_sum,
            clat: self.clat_sum,
        };
        self.points[self.cur] = p;
        let at = self.cur * BUCKETS;
        self.hists[at..at + BUCKETS].copy_from_slice(&self.hist);
        self.hist = [0; BUCKETS];
        self.max = 0;
        self.lat_sum = [0; OP_KINDS];
        self.slat_sum = [0; 2];
        self.clat_sum = [0; 2];
        self.last = now;
    }

    /// The ring is full: merge pairs, double the interval.
    fn coalesce(&mut self) {
        let half = self.points.len() / 2;
        for i in 0..half {
            let mut p = self.points[2 * i];
            p.add(&self.points[2 * i + 1]);
            self.points[i] = p;
            for b in 0..BUCKETS {
                self.hists[i * BUCKETS + b] =
                    self.hists[2 * i * BUCKETS + b] + self.hists[(2 * i + 1) * BUCKETS + b];
            }
        }
        for p in &mut self.points[half..] {
            *p = Point::default();
        }
        self.hists[half * BUCKETS..].fill(0);
        self.cur = half;
        self.interval *= 2;
        self.next_tick = self.origin + (half as u64 + 1) * self.interval;
    }

    /// The worker ended at `t`: close what ended before it and the partial last interval.
    pub fn finish(&mut self, t: u64, out: &WorkerOutput) {
        if self.points.is_empty() || self.next_tick == u64::MAX {
            return;
        }
        self.roll(t, out.bytes_read, out.bytes_written, &out.hist);
        // The interval in progress counts when the worker ran into it or something completed
        // in it (a phase that ends on a boundary has no empty last point).
        let started = self.next_tick - self.interval;
        if t > started || self.hist.iter().any(|c| *c > 0) {
            let now = Cum::of(out.bytes_read, out.bytes_written, &out.hist);
            self.close(now);
            self.len = self.cur + 1;
        } else {
            self.len = self.cur;
        }
    }

    /// Merge pairs until the interval is `interval` (a multiple by a power of two).
    fn widen_to(&mut self, interval: u64) {
        while self.interval < interval {
            let n = self.len.div_ceil(2);
            for i in 0..n {
                let mut p = self.points[2 * i];
                for b in 0..BUCKETS {
                    self.hists[i * BUCKETS + b] = self.hists[2 * i * BUCKETS + b];
                }
                if 2 * i + 1 < self.len {
                    p.add(&self.points[2 * i + 1]);
                    for b in 0..BUCKETS {
                        self.hists[i * BUCKETS + b] += self.hists[(2 * i + 1) * BUCKETS + b];
                    }
                }
                self.points[i] = p;
            }
            self.len = n;
            self.interval *= 2;
        }
    }

    /// Its own bytes and ops per direction in each window (at the interval it is at: after
    /// [`merge`], the phase's), for fio's per-thread rate samples; the last may be partial.
    pub fn windows(&self) -> ThreadWindows {
        let pts = &self.points[..self.len.min(self.points.len())];
        let col = |f: fn(&Point) -> u64| pts.iter().map(f).collect::<Vec<u64>>();
        ThreadWindows {
            read_bytes: col(|p| p.read_bytes),
            read_ops: col(|p| p.read_ops),
            write_bytes: col(|p| p.write_bytes),
            write_ops: col(|p| p.write_ops),
        }
    }

    /// Bytes of memory the recorder holds (for the report of state per phase).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<SeriesRecorder>()
            + self.points.len() * std::mem::size_of::<Point>()
            + self.hists.len() * 4
    }
}

/// One reading of the phase's runner thread, on its tick (never a worker's): the host's dirty
/// and writeback bytes, the target's devices' counters and the process's CPU time. Memory is
/// a level (the last reading stands for its interval); the counters are cumulative (an
/// interval gets what changed in it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// `CLOCK_MONOTONIC` ns when taken; [`merge`] wants it relative to the phase's origin.
    pub at_nanos: u64,
    /// `Dirty` and `Writeback` of `/proc/meminfo` (`None`: unreadable).
    pub memory: Option<(u64, u64)>,
    /// `/sys/block/DEV/stat` of each of the target's devices, in its order (`None`: it has
    /// none, or one was unreadable).
    pub devices: Option<Vec<BlockStat>>,
    /// The process's CPU time so far (`None`: unreadable).
    pub cpu: Option<CpuTime>,
}

impl Sample {
    /// Read everything now, `devices` being the target's (names under `/sys/class/block`).
    pub fn take(devices: &[String]) -> Sample {
        let memory =
            crate::sys::meminfo::MemInfo::read().ok().map(|m| (m.get("Dirty"), m.get("Writeback")));
        let devices = (!devices.is_empty())
            .then(|| devices.iter().map(|d| BlockStat::read(d)).collect::<Option<Vec<_>>>())
            .flatten();
        let cpu = CpuTime::process();
        Sample { at_nanos: super::worker::now_ns(), memory, devices, cpu }
    }
}

/// Per point of `n` (of `interval` ns), what the cumulative counter `f` of the samples grew by
/// in it: the counter at each bound interpolated linearly between the samples around it (held
/// at the first before it and at the last after it), so a tick that is not aligned with the
/// intervals does not leave one point empty and double the next. `None` when a sample lacks
/// the counter.
fn deltas(
    samples: &[Sample],
    n: usize,
    interval: u64,
    f: impl Fn(&Sample) -> Option<u64>,
) -> Option<Vec<u64>> {
    let v: Vec<(u64, u64)> =
        samples.iter().map(|s| Some((s.at_nanos, f(s)?))).collect::<Option<_>>()?;
    let first = v.first()?;
    let at = |t: u64| -> f64 {
        let k = v.partition_point(|x| x.0 <= t);
        if k == 0 {
            return first.1 as f64;
        }
        let (t0, c0) = v[k - 1];
        match v.get(k) {
            Some(&(t1, c1)) if t1 > t0 => {
                c0 as f64 + (c1 as f64 - c0 as f64) * (t - t0) as f64 / (t1 - t0) as f64
            }
            _ => c0 as f64,
        }
    };
    let mut out = Vec::with_capacity(n);
    let mut prev = at(0);
    for i in 0..n {
        let now = at((i as u64 + 1) * interval);
        out.push((now - prev).max(0.0).round() as u64);
        prev = now;
    }
    Some(out)
}

/// The phase's series from its workers' recorders, on one clock: each at the coarsest interval
/// any reached, summed per point, percentiles from the summed histograms; `None` when no
/// worker recorded one. `samples` are the runner's readings ([`Sample`], `at_nanos` since the
/// origin, in order).
pub fn merge(recs: &mut [&mut SeriesRecorder], samples: &[Sample]) -> Option<PhaseSeries> {
    let live: Vec<&mut &mut SeriesRecorder> = recs.iter_mut().filter(|r| r.len > 0).collect();
    let interval = live.iter().map(|r| r.interval).max()?;
    let mut live = live;
    for r in live.iter_mut() {
        r.widen_to(interval);
    }
    let n = live.iter().map(|r| r.len).max().unwrap_or(0);
    let mut s = PhaseSeries { interval_nanos: interval, ..PhaseSeries::default() };
    let mut split = live.iter().any(|r| r.split).then(crate::model::series::SplitSums::default);
    let mut h = vec![0u32; BUCKETS];
    for i in 0..n {
        let mut p = Point::default();
        h.fill(0);
        for r in live.iter().filter(|r| i < r.len) {
            p.add(&r.points[i]);
            for (a, b) in h.iter_mut().zip(&r.hists[i * BUCKETS..(i + 1) * BUCKETS]) {
                *a = a.saturating_add(*b);
            }
        }
        s.read_bytes.push(p.read_bytes);
        s.write_bytes.push(p.write_bytes);
        s.read_ops.push(p.read_ops);
        s.write_ops.push(p.write_ops);
        s.ops.push(p.ops);
        s.p50_nanos.push(quantile(&h, p.ops, 0.50));
        s.p99_nanos.push(quantile(&h, p.ops, 0.99));
        s.max_nanos.push(p.max);
        s.read_lat_sum_nanos.push(p.read_lat);
        s.write_lat_sum_nanos.push(p.write_lat);
        if let Some(x) = split.as_mut() {
            x.read_slat_sum_nanos.push(p.slat[0]);
            x.write_slat_sum_nanos.push(p.slat[1]);
            x.read_clat_sum_nanos.push(p.clat[0]);
            x.write_clat_sum_nanos.push(p.clat[1]);
        }
    }
    if let Some(x) = split.as_mut() {
        if s.read_ops.iter().all(|n| *n == 0) {
            x.read_slat_sum_nanos.clear();
            x.read_clat_sum_nanos.clear();
        }
        if s.write_ops.iter().all(|n| *n == 0) {
            x.write_slat_sum_nanos.clear();
            x.write_clat_sum_nanos.clear();
        }
    }
    s.split = split;
    // A direction without ops keeps no sums (compact JSON); with `*_ops` they give the mean.
    if s.read_ops.iter().all(|n| *n == 0) {
        s.read_lat_sum_nanos.clear();
    }
    if s.write_ops.iter().all(|n| *n == 0) {
        s.write_lat_sum_nanos.clear();
    }
    let mem: Vec<(u64, (u64, u64))> =
        samples.iter().filter_map(|x| Some((x.at_nanos, x.memory?))).collect();
    if !mem.is_empty() {
        // Each point holds the last sample taken by its end (the first sample before it).
        let mut k = 0;
        for i in 0..n {
            let end = (i as u64 + 1) * interval;
            while k + 1 < mem.len() && mem[k + 1].0 <= end {
                k += 1;
            }
            s.dirty_bytes.push(mem[k].1 .0);
            s.writeback_bytes.push(mem[k].1 .1);
        }
        s.dirty_throttle_bytes = dirty_throttle_bytes().unwrap_or(0);
    }
    let dev = |f: fn(&BlockStat) -> u64| {
        move |x: &Sample| Some(x.devices.as_ref()?.iter().map(f).sum::<u64>())
    };
    let (reads, writes) = (dev(|d| d.reads), dev(|d| d.writes));
    if let (Some(r), Some(w)) =
        (deltas(samples, n, interval, reads), deltas(samples, n, interval, writes))
    {
        // The busiest device's time per point (each device's own, then the largest).
        let ndev = samples.first().and_then(|x| x.devices.as_ref()).map_or(0, |d| d.len());
        let busy: Option<Vec<Vec<u64>>> = (0..ndev)
            .map(|d| {
                let ticks = |x: &Sample| Some(x.devices.as_ref()?.get(d)?.io_ticks * 1_000_000);
                deltas(samples, n, interval, ticks)
            })
            .collect();
        if let Some(busy) = busy.filter(|b| !b.is_empty()) {
            s.device_read_requests = r;
            s.device_write_requests = w;
            // At most the interval: `io_ticks` can take in time from outside the readings
            // (see `observe::blockstat`), and a device is never busier than all the time.
            s.device_busy_nanos = (0..n)
                .map(|i| busy.iter().map(|b| b[i]).max().unwrap_or(0).min(interval))
                .collect();
        }
    }
    let user = deltas(samples, n, interval, |x| Some(x.cpu?.user_nanos));
    let sys = deltas(samples, n, interval, |x| Some(x.cpu?.sys_nanos));
    if let (Some(u), Some(k)) = (user, sys) {
        (s.cpu_user_nanos, s.cpu_sys_nanos) = (u, k);
    }
    Some(s)
}

/// Where `balance_dirty_pages` starts throttling writers: halfway between the background and
/// the hard dirty threshold (`/proc/vmstat`, pages), in bytes.
fn dirty_throttle_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/vmstat").ok()?;
    let get = |key: &str| -> Option<u64> {
        text.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
    };
    let (limit, background) = (get("nr_dirty_threshold")?, get("nr_dirty_background_threshold")?);
    let page = rustix::param::page_size() as u64;
    Some((limit + background) / 2 * page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_within_an_eighth() {
        for d in [4u64, 7, 100, 999, 12_345, 1_000_000, 77_777_777, 5_000_000_000] {
            let m = bucket_mid(bucket(d));
            let err = (m as f64 - d as f64).abs() / d as f64;
            assert!(err <= 0.125 + 1e-9, "{d}: bucket mid {m}, error {err}");
        }
        assert!(bucket(u64::MAX) == BUCKETS - 1);
        // Monotonic: a larger value never falls in a smaller bucket.
        let mut last = 0;
        for d in 0..100_000u64 {
            let b = bucket(d * 37);
            assert!(b >= last);
            last = b;
        }
    }

    fn worker(origin: &AtomicU64, cap: usize) -> (SeriesRecorder, WorkerOutput) {
        let mut r = SeriesRecorder::new(MIN_INTERVAL_NANOS, cap);
        r.start(origin, 1_000_000_000);
        (r, WorkerOutput::at(std::time::Instant::now()))
    }

    /// A read of `len` bytes and `lat` ns completing at `t`, as the hot loop records it.
    fn read(r: &mut SeriesRecorder, out: &mut WorkerOutput, t: u64, lat: u64, len: u64) {
        if r.due(t) {
            r.roll(t, out.bytes_read, out.bytes_written, &out.hist);
        }
        out.hist.record(OpKind::Read, lat);
        out.bytes_read += len;
        r.record(OpKind::Read, lat);
    }

    #[test]
    fn intervals_count_what_completed_in_them_and_show_a_stall() {
        let origin = AtomicU64::new(0);
        let (mut r, mut out) = worker(&origin, 200);
        let t0 = 1_000_000_000;
        let ms = 1_000_000;
        // 10 reads in the first interval, none in the next three (a stall), 5 in the fifth.
        for i in 0..10 {
            read(&mut r, &mut out, t0 + i * ms, 1000, 4096);
        }
        for i in 0..5 {
            read(&mut r, &mut out, t0 + 40 * ms + i * ms, 35 * ms, 4096);
        }
        r.finish(t0 + 45 * ms, &out);
        let s = merge(&mut [&mut r], &[]).expect("a series");
        assert_eq!(s.interval_nanos, 10 * ms);
        assert_eq!(s.ops, vec![10, 0, 0, 0, 5]);
        assert_eq!(s.read_ops, vec![10, 0, 0, 0, 5]);
        assert_eq!(s.read_bytes, vec![40960, 0, 0, 0, 20480]);
        assert_eq!(s.max_nanos, vec![1000, 0, 0, 0, 35 * ms]);
        assert!((s.p99_nanos[4] as f64 / (35 * ms) as f64 - 1.0).abs() <= 0.125);
        assert_eq!(s.stalls(), vec![(1, 3)]);
    }

    /// Each interval keeps the exact sum of its reads' and its writes' latencies apart (a sync
    /// counts in neither), through a ring that merges pairs and a merge of two workers; a
    /// direction without ops keeps no sums.
    #[test]
    fn latency_sums_per_direction_give_each_intervals_exact_mean() {
        let origin = AtomicU64::new(0);
        let t0 = 1_000_000_000;
        let ms = 1_000_000;
        let (mut a, mut oa) = worker(&origin, 4);
        let (mut b, mut ob) = worker(&origin, 200);
        // a: in each 10 ms a read of 1000 ns and one of 2001 ns, a write of 7 µs, a fsync of
        // 1 ms; for 60 ms, so its ring of 4 merges pairs (20 ms intervals).
        for i in 0..6 {
            let t = t0 + i * 10 * ms;
            read(&mut a, &mut oa, t + ms, 1000, 4096);
            read(&mut a, &mut oa, t + 2 * ms, 2001, 4096);
            oa.hist.record(OpKind::Write, 7000);
            oa.bytes_written += 4096;
            a.record(OpKind::Write, 7000);
            oa.hist.record(OpKind::Fsync, ms);
            a.record(OpKind::Fsync, ms);
        }
        // b: reads only, 10 µs each, one per 10 ms for 20 ms.
        for i in 0..2 {
            read(&mut b, &mut ob, t0 + i * 10 * ms + 5 * ms, 10_000, 4096);
        }
        a.finish(t0 + 60 * ms, &oa);
        b.finish(t0 + 20 * ms, &ob);
        let s = merge(&mut [&mut a, &mut b], &[]).expect("a series");
        assert_eq!(s.interval_nanos, 20 * ms);
        assert_eq!(s.read_ops, vec![6, 4, 4]);
        assert_eq!(s.read_lat_sum_nanos, vec![2 * 3001 + 20_000, 2 * 3001, 2 * 3001]);
        assert_eq!(s.write_ops, vec![2, 2, 2]);
        assert_eq!(s.write_lat_sum_nanos, vec![14_000, 14_000, 14_000]);
        // (6002 + 20000) / 6 = 4333.67; 6002 / 4 = 1500.5, half up.
        assert_eq!(s.mean_lat_nanos(0, false), Some(4334));
        assert_eq!(s.mean_lat_nanos(1, false), Some(1501));
        assert_eq!(s.mean_lat_nanos(2, true), Some(7000));
        // Reads only: no write sums, and none in the JSON.
        let (mut c, mut oc) = worker(&AtomicU64::new(0), 200);
        for i in 0..2 {
            read(&mut c, &mut oc, t0 + i * 10 * ms + 5 * ms, 10_000, 4096);
        }
        c.finish(t0 + 20 * ms, &oc);
        let s = merge(&mut [&mut c], &[]).expect("a series");
        assert_eq!(s.read_lat_sum_nanos, vec![10_000, 10_000]);
        assert!(s.write_lat_sum_nanos.is_empty());
        let json = serde_json::to_string(&s).expect("json");
        assert!(json.contains("\"read_lat_sum_nanos\":[10000,10000]"), "{json}");
        assert!(!json.contains("write_lat_sum_nanos"), "{json}");
        assert!(s.split.is_none() && !json.contains("split"), "no split recorded: {json}");
    }

    /// An engine that submits apart: each interval keeps the sums of its reads' submission and
    /// completion latencies, through a ring that merges pairs and a merge with a worker that
    /// recorded none; a direction without ops keeps none.
    #[test]
    fn split_sums_per_interval_give_each_intervals_slat_and_clat_means() {
        let origin = AtomicU64::new(0);
        let t0 = 1_000_000_000;
        let ms = 1_000_000;
        let (mut a, mut oa) = worker(&origin, 4);
        let (mut b, mut ob) = worker(&origin, 200);
        // a: one read per 10 ms for 60 ms (its ring of 4 merges pairs: 20 ms intervals), each
        // 3000 ns: 1000 submitting, 2000 from there.
        for i in 0..6 {
            read(&mut a, &mut oa, t0 + i * 10 * ms + ms, 3000, 4096);
            a.record_split(false, 1000, 2000);
        }
        // b: a synchronous engine's reads, no split.
        read(&mut b, &mut ob, t0 + 5 * ms, 10_000, 4096);
        a.finish(t0 + 60 * ms, &oa);
        b.finish(t0 + 20 * ms, &ob);
        let s = merge(&mut [&mut a, &mut b], &[]).expect("a series");
        assert_eq!(s.interval_nanos, 20 * ms);
        assert_eq!(s.read_ops, vec![3, 2, 2]);
        let x = s.split.as_ref().expect("split sums");
        assert_eq!(x.read_slat_sum_nanos, vec![2000, 2000, 2000]);
        assert_eq!(x.read_clat_sum_nanos, vec![4000, 4000, 4000]);
        assert!(x.write_slat_sum_nanos.is_empty() && x.write_clat_sum_nanos.is_empty());
        assert_eq!(s.mean_split_nanos(1, false, true), Some(1000));
        assert_eq!(s.mean_split_nanos(1, false, false), Some(2000));
        assert_eq!(s.mean_split_nanos(1, true, true), None);
        // Widened, and merged as ranks (a cluster run's), the sums add up.
        let w = s.widen(40 * ms);
        assert_eq!(w.split.as_ref().unwrap().read_slat_sum_nanos, vec![4000, 2000]);
        let m = crate::model::series::merge_ranks(&[(&s, 0, true), (&s, 0, false)]).unwrap();
        let ms = m.split.as_ref().unwrap();
        assert_eq!(ms.read_clat_sum_nanos, vec![8000, 8000, 8000]);
        assert!(ms.write_slat_sum_nanos.is_empty(), "{ms:?}");
    }

    #[test]
    fn a_full_ring_merges_pairs_and_keeps_every_op() {
        let origin = AtomicU64::new(0);
        let (mut r, mut out) = worker(&origin, 8);
        let t0 = 1_000_000_000;
        // One read per ms for 100 ms: 10 intervals of 10 ms do not fit in 8 points.
        for i in 0..100 {
            read(&mut r, &mut out, t0 + i * 1_000_000, 500, 512);
        }
        r.finish(t0 + 100 * 1_000_000, &out);
        let s = merge(&mut [&mut r], &[]).expect("a series");
        assert_eq!(s.interval_nanos, 20_000_000);
        assert_eq!(s.ops.iter().sum::<u64>(), 100);
        assert_eq!(s.read_bytes.iter().sum::<u64>(), 100 * 512);
        assert!(s.len() <= 8 && s.len() >= 4, "{} points", s.len());
        assert_eq!(s.ops[0], 20);
    }

    #[test]
    fn workers_at_different_intervals_merge_on_one_clock() {
        let origin = AtomicU64::new(0);
        let (mut a, mut oa) = worker(&origin, 4);
        let (mut b, mut ob) = worker(&origin, 200);
        let t0 = 1_000_000_000;
        for i in 0..60 {
            read(&mut a, &mut oa, t0 + i * 1_000_000, 100, 1);
        }
        for i in 0..30 {
            read(&mut b, &mut ob, t0 + i * 1_000_000, 100, 1);
        }
        a.finish(t0 + 60_000_000, &oa);
        b.finish(t0 + 30_000_000, &ob);
        let mem = |at_nanos, d, w| Sample { at_nanos, memory: Some((d, w)), ..Sample::default() };
        let s = merge(&mut [&mut a, &mut b], &[mem(0, 7, 1), mem(25_000_000, 9, 2)]).unwrap();
        assert_eq!(s.interval_nanos, 20_000_000);
        assert_eq!(s.ops, vec![40, 30, 20]);
        assert_eq!(s.dirty_bytes, vec![7, 9, 9]);
        assert_eq!(s.writeback_bytes, vec![1, 2, 2]);
        // No device or CPU readings: no arrays for them.
        assert!(s.device_busy_nanos.is_empty() && s.cpu_user_nanos.is_empty());
    }

    /// A sample at `ms` with two devices' stat lines and the process's CPU.
    fn probe(ms: u64, lines: [&str; 2], user_ms: u64, sys_ms: u64) -> Sample {
        let ms_ns = 1_000_000;
        Sample {
            at_nanos: ms * ms_ns,
            memory: Some((0, 0)),
            devices: Some(
                lines.iter().map(|l| BlockStat::parse(l).expect("a stat line")).collect(),
            ),
            cpu: Some(CpuTime { user_nanos: user_ms * ms_ns, sys_nanos: sys_ms * ms_ns }),
        }
    }

    #[test]
    fn device_requests_busy_time_and_cpu_per_interval_from_two_stat_lines() {
        let origin = AtomicU64::new(0);
        let (mut r, mut out) = worker(&origin, 200);
        let t0 = 1_000_000_000;
        let ms = 1_000_000;
        for i in 0..20 {
            read(&mut r, &mut out, t0 + i * ms, 100, 4096);
        }
        r.finish(t0 + 20 * ms, &out);
        // /sys/block/DEV/stat: reads, read merges, sectors, ticks, writes, write merges,
        // sectors, ticks, in flight, io_ticks, time in queue, (discards, flushes ...).
        let a = ["100 5 800 40 200 10 1600 90 0 120 130 0 0 0 0 7 3", "1 0 8 1 2 0 16 1 0 50 2"];
        let b =
            ["130 5 1040 52 270 12 2160 120 1 128 170 0 0 0 0 9 4", "11 0 88 5 2 0 16 1 0 53 6"];
        // Two readings exactly on the bounds of the first interval: its deltas, all of them.
        let s = merge(&mut [&mut r], &[probe(0, a, 50, 20), probe(10, b, 53, 27)]).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s.device_read_requests, vec![30 + 10, 0]);
        assert_eq!(s.device_write_requests, vec![70, 0]);
        // The busier device: 8 ms of the 10 (the other was busy 3 ms).
        assert_eq!(s.device_busy_nanos, vec![8 * ms, 0]);
        assert_eq!(s.cpu_user_nanos, vec![3 * ms, 0]);
        assert_eq!(s.cpu_sys_nanos, vec![7 * ms, 0]);
        // Readings 20 ms apart, not on the bounds: each interval gets its share.
        let (mut r2, mut out2) = worker(&AtomicU64::new(0), 200);
        for i in 0..20 {
            read(&mut r2, &mut out2, t0 + i * ms, 100, 4096);
        }
        r2.finish(t0 + 20 * ms, &out2);
        let s = merge(&mut [&mut r2], &[probe(0, a, 50, 20), probe(20, b, 54, 28)]).unwrap();
        assert_eq!(s.device_read_requests, vec![20, 20]);
        assert_eq!(s.device_write_requests, vec![35, 35]);
        assert_eq!(s.device_busy_nanos, vec![4 * ms, 4 * ms]);
        assert_eq!(s.cpu_user_nanos, vec![2 * ms, 2 * ms]);
        // A device that could not be read in one sample: no device arrays, CPU still there.
        let mut c = probe(20, b, 54, 28);
        c.devices = None;
        let (mut r3, mut out3) = worker(&AtomicU64::new(0), 200);
        read(&mut r3, &mut out3, t0 + ms, 100, 4096);
        r3.finish(t0 + 20 * ms, &out3);
        let s = merge(&mut [&mut r3], &[probe(0, a, 50, 20), c]).unwrap();
        assert!(s.device_read_requests.is_empty() && s.device_busy_nanos.is_empty());
        assert_eq!(s.cpu_sys_nanos, vec![4 * ms, 4 * ms]);
    }

    #[test]
    fn a_user_interval_on_a_timed_phase_keeps_its_length() {
        assert_eq!(SeriesPlan::cap_for(10_000_000, true, Some(60.0)), 6002);
        assert_eq!(SeriesPlan::cap_for(10_000_000, false, Some(60.0)), CAP);
        assert_eq!(SeriesPlan::cap_for(10_000_000, true, None), CAP);
    }
}
