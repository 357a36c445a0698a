//! What a timed phase did over time, and how its load was paced: the interval series
//! ([`PhaseSeries`]), a fixed rate's outcome ([`RateOutcome`]) and a steady-state criterion's
//! ([`SteadyOutcome`]); and the load a phase asks for ([`Load`]), as validation leaves it.
//!
//! A phase total hides *when* the work slowed (a writer stalling at the dirty limit, a device
//! pausing); the series keeps one point per interval. It is kept compact in JSON and in the
//! store: one array of numbers per quantity, not one object per point, so a phase of 200
//! points costs a few kilobytes.
//!
//! Latency percentiles per interval come from a coarse log-linear histogram (4 sub-buckets per
//! power of two; a value is reported as its bucket's midpoint, within 12.5% of the true
//! value); the phase's own percentiles ([`super::result::OpLatency`]) stay exact to 0.1%.

use serde::{Deserialize, Serialize};

/// Shortest interval of a series: shorter ones cost more than they show.
pub const MIN_INTERVAL_NANOS: u64 = 10_000_000;

/// One phase over time: point `i` covers `[i * interval_nanos, (i + 1) * interval_nanos)` from
/// the release of the phase's workers (the last point may be partial: it ends with the phase).
/// Every array has one entry per point; the sampled ones (`dirty_bytes`, `writeback_bytes`)
/// hold the last sample taken by the end of the interval. The sampled counters (device
/// requests and busy time, the process's CPU) hold what changed in the interval, the runner
/// thread's readings interpolated linearly to the interval's bounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSeries {
    /// Length of one interval.
    pub interval_nanos: u64,
    /// Bytes read that completed in each interval.
    #[serde(default)]
    pub read_bytes: Vec<u64>,
    /// Bytes written.
    #[serde(default)]
    pub write_bytes: Vec<u64>,
    /// Reads completed.
    #[serde(default)]
    pub read_ops: Vec<u64>,
    /// Writes completed.
    #[serde(default)]
    pub write_ops: Vec<u64>,
    /// Every op completed (reads, writes, syncs, file-set ops).
    #[serde(default)]
    pub ops: Vec<u64>,
    /// Median latency of the ops completed in the interval (0 when none).
    #[serde(default)]
    pub p50_nanos: Vec<u64>,
    /// 99th percentile.
    #[serde(default)]
    pub p99_nanos: Vec<u64>,
    /// Longest latency (exact).
    #[serde(default)]
    pub max_nanos: Vec<u64>,
    /// Sum of the latencies of the reads completed in each interval (ns), so that with
    /// `read_ops` a window's mean is exact ([`PhaseSeries::mean_lat_nanos`]); empty when the
    /// phase completed no read, and in runs stored before fsbench kept it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_lat_sum_nanos: Vec<u64>,
    /// Sum of the latencies of the writes, as `read_lat_sum_nanos`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_lat_sum_nanos: Vec<u64>,
    /// `Dirty` of `/proc/meminfo`, sampled by the phase's runner thread (empty when unread).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirty_bytes: Vec<u64>,
    /// `Writeback` of `/proc/meminfo`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writeback_bytes: Vec<u64>,
    /// Read requests completed by the target's block devices (`/sys/block/DEV/stat`, summed
    /// over them); empty when the target has no block device of its own (a directory, tmpfs,
    /// FUSE) or its counters were not read, and in runs stored before fsbench sampled them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_read_requests: Vec<u64>,
    /// Write requests completed (flushes are not counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_write_requests: Vec<u64>,
    /// Time the busiest of the target's devices had I/O in flight (`io_ticks`), ns, at most
    /// the interval: divided by `interval_nanos`, its utilisation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_busy_nanos: Vec<u64>,
    /// User-mode CPU time of the fsbench process (every thread: workers, roles, the runner),
    /// ns; empty in runs stored before fsbench sampled it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_user_nanos: Vec<u64>,
    /// Kernel-mode CPU time of the process, ns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_sys_nanos: Vec<u64>,
    /// Dirty bytes above which the kernel throttles writers (`balance_dirty_pages`): halfway
    /// between `/proc/vmstat`'s `nr_dirty_background_threshold` and `nr_dirty_threshold`, read
    /// when the phase ended (0: not read, or stored before fsbench read it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dirty_throttle_bytes: u64,
    /// Engines that submit apart (io_uring, libaio): the sums per interval of the submission
    /// and completion latencies apart ([`crate::model::submit`]); absent otherwise and in runs
    /// stored before fsbench kept them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitSums>,
}

/// Sums per interval of the submission latencies (fio's `slat`) and the completion latencies
/// from the submission's return (fio's `clat`) of the reads and the writes completed in it,
/// ns: with `read_ops` and `write_ops`, a window's means (fio's `_slat` and `_clat` logs). A
/// direction without ops has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitSums {
    /// Submission latencies of the reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_slat_sum_nanos: Vec<u64>,
    /// Of the writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_slat_sum_nanos: Vec<u64>,
    /// Completion latencies of the reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_clat_sum_nanos: Vec<u64>,
    /// Of the writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_clat_sum_nanos: Vec<u64>,
}

impl SplitSums {
    /// Its four arrays, in the field order.
    fn all_mut(&mut self) -> [&mut Vec<u64>; 4] {
        [
            &mut self.read_slat_sum_nanos,
            &mut self.write_slat_sum_nanos,
            &mut self.read_clat_sum_nanos,
            &mut self.write_clat_sum_nanos,
        ]
    }

    /// Its four arrays, in the field order.
    fn all(&self) -> [&Vec<u64>; 4] {
        [
            &self.read_slat_sum_nanos,
            &self.write_slat_sum_nanos,
            &self.read_clat_sum_nanos,
            &self.write_clat_sum_nanos,
        ]
    }

    /// Pairs of points added up (a series widened to twice its interval).
    fn widen(&self) -> SplitSums {
        let sum = |v: &Vec<u64>| v.chunks(2).map(|c| c.iter().sum()).collect::<Vec<u64>>();
        SplitSums {
            read_slat_sum_nanos: sum(&self.read_slat_sum_nanos),
            write_slat_sum_nanos: sum(&self.write_slat_sum_nanos),
            read_clat_sum_nanos: sum(&self.read_clat_sum_nanos),
            write_clat_sum_nanos: sum(&self.write_clat_sum_nanos),
        }
    }
}

impl PhaseSeries {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// No points.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// MiB/s (read + written) of each point; the last, partial point is scaled by the share of
    /// the interval the phase lasted, `last_fraction`.
    pub fn mib_per_s(&self, last_fraction: f64) -> Vec<f64> {
        let secs = self.interval_nanos as f64 / 1e9;
        let n = self.len();
        (0..n)
            .map(|i| {
                let b = self.read_bytes.get(i).copied().unwrap_or(0)
                    + self.write_bytes.get(i).copied().unwrap_or(0);
                let s = if i + 1 == n { secs * last_fraction.clamp(0.01, 1.0) } else { secs };
                b as f64 / (1u64 << 20) as f64 / s
            })
            .collect()
    }

    /// The mean latency of the reads (`write` false) or writes completed in point `i`, ns,
    /// rounded half up: the sum of their latencies over their count, in whole numbers. `None`
    /// when none completed, or the series keeps no latency sums (stored before it did).
    pub fn mean_lat_nanos(&self, i: usize, write: bool) -> Option<u64> {
        let (sums, ops) = if write {
            (&self.write_lat_sum_nanos, &self.write_ops)
        } else {
            (&self.read_lat_sum_nanos, &self.read_ops)
        };
        let n = *ops.get(i).filter(|n| **n > 0)? as u128;
        let sum = *sums.get(i)? as u128;
        // (sum / n + 1/2), truncated, without floating point.
        Some(((2 * sum + n) / (2 * n)) as u64)
    }

    /// The mean submission latency (`slat` true) or completion latency from the submission's
    /// return of the reads (`write` false) or writes completed in point `i`, ns, rounded half
    /// up as [`Self::mean_lat_nanos`]; `None` when none completed or the series keeps no such
    /// sums (a synchronous engine's).
    pub fn mean_split_nanos(&self, i: usize, write: bool, slat: bool) -> Option<u64> {
        let x = self.split.as_ref()?;
        let (sums, ops) = match (write, slat) {
            (false, true) => (&x.read_slat_sum_nanos, &self.read_ops),
            (true, true) => (&x.write_slat_sum_nanos, &self.write_ops),
            (false, false) => (&x.read_clat_sum_nanos, &self.read_ops),
            (true, false) => (&x.write_clat_sum_nanos, &self.write_ops),
        };
        let n = *ops.get(i).filter(|n| **n > 0)? as u128;
        let sum = *sums.get(i)? as u128;
        Some(((2 * sum + n) / (2 * n)) as u64)
    }

    /// Stalls: runs of consecutive intervals in which no op completed, between intervals that
    /// had completions (so ops were in flight), as (first interval, length in intervals).
    pub fn stalls(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut i = 0;
        let n = self.ops.len();
        while i < n {
            if self.ops[i] == 0 && i > 0 {
                let start = i;
                while i < n && self.ops[i] == 0 {
                    i += 1;
                }
                if i < n {
                    v.push((start, i - start));
                }
            } else {
                i += 1;
            }
        }
        v
    }
}

/// Several ranks' series of one phase on the common clock (a multi-client run): `parts` are
/// each rank's series and its release after the earliest one's, in ns. Each is brought to the
/// coarsest interval (intervals are the base doubled, so they nest) and shifted by its start;
/// bytes, ops and latency sums add up, `max` is the largest, and p50/p99 are the largest of the
/// ranks' (an upper bound: ranks keep no per-interval histograms to merge). Dirty and writeback
/// bytes add up over `hosts`' first rank (the host-wide counters of each host once).
pub fn merge_ranks(parts: &[(&PhaseSeries, u64, bool)]) -> Option<PhaseSeries> {
    let interval = parts.iter().map(|p| p.0.interval_nanos).max().filter(|i| *i > 0)?;
    let mut out = PhaseSeries { interval_nanos: interval, ..PhaseSeries::default() };
    // Dirty bytes add up over hosts, and so do their throttling thresholds.
    out.dirty_throttle_bytes = parts.iter().filter(|p| p.2).map(|p| p.0.dirty_throttle_bytes).sum();
    let widened: Vec<(PhaseSeries, usize, bool)> = parts
        .iter()
        .map(|(s, off, first)| (s.widen(interval), (*off / interval) as usize, *first))
        .collect();
    let n = widened.iter().map(|(s, o, _)| s.len() + o).max().unwrap_or(0);
    let mem = widened.iter().any(|(s, _, f)| *f && !s.dirty_bytes.is_empty());
    let dev = widened.iter().any(|(s, _, f)| *f && !s.device_busy_nanos.is_empty());
    let cpu = widened.iter().any(|(s, _, _)| !s.cpu_user_nanos.is_empty());
    let read_lat = widened.iter().any(|(s, _, _)| !s.read_lat_sum_nanos.is_empty());
    let write_lat = widened.iter().any(|(s, _, _)| !s.write_lat_sum_nanos.is_empty());
    let grow = |v: &mut Vec<u64>| v.resize(n, 0);
    for v in [
        &mut out.read_bytes,
        &mut out.write_bytes,
        &mut out.read_ops,
        &mut out.write_ops,
        &mut out.ops,
        &mut out.p50_nanos,
        &mut out.p99_nanos,
        &mut out.max_nanos,
    ] {
        grow(v);
    }
    if mem {
        grow(&mut out.dirty_bytes);
        grow(&mut out.writeback_bytes);
    }
    if dev {
        grow(&mut out.device_read_requests);
        grow(&mut out.device_write_requests);
        grow(&mut out.device_busy_nanos);
    }
    if cpu {
        grow(&mut out.cpu_user_nanos);
        grow(&mut out.cpu_sys_nanos);
    }
    if read_lat {
        grow(&mut out.read_lat_sum_nanos);
    }
    if write_lat {
        grow(&mut out.write_lat_sum_nanos);
    }
    if widened.iter().any(|(s, _, _)| s.split.is_some()) {
        let mut sums = SplitSums::default();
        for v in sums.all_mut() {
            grow(v);
        }
        out.split = Some(sums);
    }
    for (s, off, first) in &widened {
        for i in 0..s.len() {
            let j = i + off;
            let at = |v: &Vec<u64>| v.get(i).copied().unwrap_or(0);
            out.read_bytes[j] += at(&s.read_bytes);
            out.write_bytes[j] += at(&s.write_bytes);
            out.read_ops[j] += at(&s.read_ops);
            out.write_ops[j] += at(&s.write_ops);
            out.ops[j] += at(&s.ops);
            out.p50_nanos[j] = out.p50_nanos[j].max(at(&s.p50_nanos));
            out.p99_nanos[j] = out.p99_nanos[j].max(at(&s.p99_nanos));
            out.max_nanos[j] = out.max_nanos[j].max(at(&s.max_nanos));
            // Each rank's latencies add up, as its ops do.
            if read_lat {
                out.read_lat_sum_nanos[j] += at(&s.read_lat_sum_nanos);
            }
            if write_lat {
                out.write_lat_sum_nanos[j] += at(&s.write_lat_sum_nanos);
            }
            if let (Some(o), Some(q)) = (out.split.as_mut(), s.split.as_ref()) {
                for (a, b) in o.all_mut().into_iter().zip(q.all()) {
                    a[j] += b.get(i).copied().unwrap_or(0);
                }
            }
            if mem && *first {
                out.dirty_bytes[j] += at(&s.dirty_bytes);
                out.writeback_bytes[j] += at(&s.writeback_bytes);
            }
            // A host's devices once (its first rank's readings): requests add up over hosts,
            // busy time is the busiest host's.
            if dev && *first {
                out.device_read_requests[j] += at(&s.device_read_requests);
                out.device_write_requests[j] += at(&s.device_write_requests);
                out.device_busy_nanos[j] = out.device_busy_nanos[j].max(at(&s.device_busy_nanos));
            }
            // Each rank is a process of its own: CPU adds up over all of them.
            if cpu {
                out.cpu_user_nanos[j] += at(&s.cpu_user_nanos);
                out.cpu_sys_nanos[j] += at(&s.cpu_sys_nanos);
            }
        }
    }
    // A direction no rank kept split sums of keeps none (compact JSON).
    if let Some(o) = out.split.as_mut() {
        for (k, v) in o.all_mut().into_iter().enumerate() {
            let kept = widened
                .iter()
                .any(|(s, _, _)| s.split.as_ref().is_some_and(|x| !x.all()[k].is_empty()));
            if !kept {
                v.clear();
            }
        }
    }
    Some(out)
}

impl PhaseSeries {
    /// This series at `interval` (a multiple by a power of two of its own): pairs of points
    /// merged (sums, latency sums, device and CPU time too; the larger percentile and max; the
    /// later memory sample).
    pub fn widen(&self, interval: u64) -> PhaseSeries {
        let mut s = self.clone();
        while s.interval_nanos > 0 && s.interval_nanos < interval {
            let sum = |v: &Vec<u64>| v.chunks(2).map(|c| c.iter().sum()).collect::<Vec<u64>>();
            let max = |v: &Vec<u64>| {
                v.chunks(2).map(|c| c.iter().copied().max().unwrap_or(0)).collect::<Vec<u64>>()
            };
            let last = |v: &Vec<u64>| v.chunks(2).map(|c| c[c.len() - 1]).collect::<Vec<u64>>();
            s = PhaseSeries {
                interval_nanos: s.interval_nanos * 2,
                read_bytes: sum(&s.read_bytes),
                write_bytes: sum(&s.write_bytes),
                read_ops: sum(&s.read_ops),
                write_ops: sum(&s.write_ops),
                ops: sum(&s.ops),
                p50_nanos: max(&s.p50_nanos),
                p99_nanos: max(&s.p99_nanos),
                max_nanos: max(&s.max_nanos),
                read_lat_sum_nanos: sum(&s.read_lat_sum_nanos),
                write_lat_sum_nanos: sum(&s.write_lat_sum_nanos),
                dirty_bytes: last(&s.dirty_bytes),
                writeback_bytes: last(&s.writeback_bytes),
                device_read_requests: sum(&s.device_read_requests),
                device_write_requests: sum(&s.device_write_requests),
                device_busy_nanos: sum(&s.device_busy_nanos),
                cpu_user_nanos: sum(&s.cpu_user_nanos),
                cpu_sys_nanos: sum(&s.cpu_sys_nanos),
                dirty_throttle_bytes: s.dirty_throttle_bytes,
                split: s.split.as_ref().map(SplitSums::widen),
            };
        }
        s
    }
}

/// Stalls of a phase: runs of intervals in which no op completed between intervals that had
/// completions ([`PhaseSeries::stalls`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stalls {
    /// Runs.
    pub count: u32,
    /// The longest, ns.
    pub longest_nanos: u64,
    /// All of them, ns.
    pub total_nanos: u64,
}

/// A write-throughput cliff that coincides with dirty page cache at its peak: writers
/// throttled at the dirty limit (`balance_dirty_pages`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DirtyCliff {
    /// Mean MiB/s written before it.
    pub before_mib_per_s: f64,
    /// Mean MiB/s written from it to the end of the phase.
    pub after_mib_per_s: f64,
    /// Seconds into the phase.
    pub at_secs: f64,
    /// Dirty bytes at that moment (dirty and under writeback, as the kernel counts them
    /// against its dirty limit).
    pub dirty_bytes: u64,
}

impl PhaseSeries {
    /// The stalls, summed; `None` when there were none.
    pub fn stall_summary(&self) -> Option<Stalls> {
        let st = self.stalls();
        let longest = st.iter().map(|x| x.1).max()? as u64;
        Some(Stalls {
            count: st.len() as u32,
            longest_nanos: longest * self.interval_nanos,
            total_nanos: st.iter().map(|x| x.1 as u64).sum::<u64>() * self.interval_nanos,
        })
    }

    /// The point after which the written MiB/s stays below 60% of what it was before (the
    /// deepest such drop against the rest of the phase: a throttled writer's pauses later on
    /// drop its rate steeply for a moment, but not for good), with dirty bytes at 85% of their
    /// peak (or of the threshold, when the peak is above it) or more, and that peak where
    /// the kernel throttles writers (at least 90% of [`PhaseSeries::dirty_throttle_bytes`]: a
    /// drop at a lower peak is something else, an O_DSYNC write's own waits for one); `None`
    /// when the series is short (under 10 points), wrote nothing, has no memory samples or no
    /// throttling threshold.
    ///
    /// "Dirty bytes" here are dirty plus under writeback, as `balance_dirty_pages` counts them
    /// against its thresholds: a device slower than the writer keeps pages under writeback
    /// (queued for it) long after they stopped being dirty, and the writer is throttled on the
    /// sum while `Dirty` alone stays far below the threshold.
    pub fn dirty_cliff(&self) -> Option<DirtyCliff> {
        let n = self.len();
        if n < 10 || self.dirty_bytes.len() != n || self.write_bytes.iter().all(|b| *b == 0) {
            return None;
        }
        let held: Vec<u64> = (0..n)
            .map(|i| self.dirty_bytes[i] + self.writeback_bytes.get(i).copied().unwrap_or(0))
            .collect();
        let peak = held.iter().copied().max().unwrap_or(0);
        let throttled = self.dirty_throttle_bytes > 0
            && peak as u128 * 10 >= self.dirty_throttle_bytes as u128 * 9;
        if peak < 16 << 20 || !throttled {
            return None;
        }
        // At the drop, dirty bytes at 85% of their peak, or of the threshold when the peak is
        // above it: the counters are the machine's, and another process's burst of dirty pages
        // (a build linking a binary) can raise the peak for a moment far above where the
        // throttled writer holds them.
        let level = peak.min(self.dirty_throttle_bytes);
        let secs = self.interval_nanos as f64 / 1e9;
        let mib: Vec<f64> = self.write_bytes.iter().map(|b| *b as f64 / 1048576.0 / secs).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let k = (n / 20).max(3);
        // Where the drop from the `k` points before to the rest of the phase is deepest, among
        // the points where the `k` after and the rest are both below 60% of the `k` before (the
        // last point may be partial: left out).
        let mut best: Option<(f64, DirtyCliff)> = None;
        for i in k..n - k {
            let before = mean(&mib[i - k..i]);
            let (next, rest) = (mean(&mib[i..i + k]), mean(&mib[i..n - 1]));
            let at_peak = held[i] * 100 >= level * 85;
            if before > 0.0 && next < 0.6 * before && rest < 0.6 * before && at_peak {
                let drop = before / rest.max(1e-9);
                if best.as_ref().is_none_or(|b| drop > b.0) {
                    let c = DirtyCliff {
                        before_mib_per_s: before,
                        after_mib_per_s: rest,
                        at_secs: i as f64 * secs,
                        dirty_bytes: held[i],
                    };
                    best = Some((drop, c));
                }
            }
        }
        best.map(|b| b.1)
    }
}

/// Writeback in bursts at a regular period while a phase wrote: the flusher waking every
/// `dirty_writeback_centisecs` (5 s by default) and writing what expired, or a filesystem's
/// own periodic commit, instead of a steady stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WritebackBursts {
    /// Seconds from one burst's start to the next (their mean).
    pub period_secs: f64,
    /// Bursts seen.
    pub bursts: u32,
    /// Seen in the target's device write requests (true) or, without them, in the host's
    /// writeback bytes.
    pub device: bool,
}

impl PhaseSeries {
    /// Periodic writeback bursts in a phase that wrote: in the target's device write requests
    /// per interval when `device` and the series has them (else the host's writeback bytes), at
    /// least 3 bursts (a point at half the peak or more, after a fall below a quarter of it),
    /// the bursts at least 3 points apart and every gap within 30% of their median, the bursts
    /// on at most half the points and what lies between them below a quarter of their mean: a
    /// rhythm, not noise or a steady stream. `None` otherwise.
    pub fn writeback_bursts(&self, device: bool) -> Option<WritebackBursts> {
        let use_dev = device && !self.device_write_requests.is_empty();
        let x = if use_dev { &self.device_write_requests } else { &self.writeback_bytes };
        let n = x.len();
        if n < 10 || self.write_bytes.iter().all(|b| *b == 0) {
            return None;
        }
        let peak = x.iter().copied().max().unwrap_or(0) as f64;
        if peak <= 0.0 {
            return None;
        }
        let (hi, lo) = (peak * 0.5, peak * 0.25);
        let mut starts = Vec::new();
        let mut inside = false;
        for (i, v) in x.iter().map(|v| *v as f64).enumerate() {
            if !inside && v >= hi {
                starts.push(i);
                inside = true;
            } else if inside && v < lo {
                inside = false;
            }
        }
        if starts.len() < 3 {
            return None;
        }
        let mut gaps: Vec<usize> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        let mean_gap = gaps.iter().sum::<usize>() as f64 / gaps.len() as f64;
        gaps.sort_unstable();
        let median = gaps[gaps.len() / 2] as f64;
        let regular = gaps.iter().all(|g| (*g as f64 - median).abs() <= 0.3 * median);
        let high: Vec<bool> = x.iter().map(|v| *v as f64 >= lo).collect();
        let on = high.iter().filter(|h| **h).count();
        let mean = |keep: bool| {
            let v: Vec<f64> =
                x.iter().zip(&high).filter(|(_, h)| **h == keep).map(|(v, _)| *v as f64).collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        if median < 3.0 || !regular || on * 2 > n || mean(false) >= 0.25 * mean(true) {
            return None;
        }
        Some(WritebackBursts {
            period_secs: mean_gap * self.interval_nanos as f64 / 1e9,
            bursts: starts.len() as u32,
            device: use_dev,
        })
    }
}

/// How a phase's load is paced: closed loop (none of these), a fixed rate (open loop), and
/// think time; and when a time-based phase may end early (a steady-state criterion).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Ops per second asked of each thread (`rate_iops` / `rate` divided by the op size, per
    /// thread or split over the test's threads by `rate_per`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_ops_per_s: Option<f64>,
    /// The rate as written: ops per second of the test (every thread together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_ops_per_s: Option<f64>,
    /// Pause after every `think_every` ops (`thinktime`), nanoseconds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_nanos: u64,
    /// Ops between pauses (`thinktime_blocks`, default 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_every: u64,
    /// Steady-state criterion (`ss`), with `ss_dur` and `ss_ramp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
    /// Poisson arrivals (`rate_process = "poisson"`, fio's): the gaps between scheduled
    /// starts are drawn from an exponential distribution with the rate's mean, instead of
    /// one fixed period.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub poisson: bool,
    /// Reads and writes of a mixed phase paced each on its own schedule (fio's `rate=R,W`),
    /// each thread's ops per second; instead of `thread_ops_per_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir_ops_per_s: Option<DirRates>,
    /// Flow control among the jobs that run at the same time (`flow`, fio's): each thread
    /// keeps its share of the flow's ops at its weight's share of the flow's weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
    /// The rate is the test's, split over its threads (`rate_per = "test"`): each thread's
    /// schedule starts its share of one period later, so the test's ops come evenly spaced.
    /// Otherwise each thread has its own rate and issues its first op at the start, as each
    /// of fio's jobs and clones does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub staggered: bool,
    /// A paced op's latency starts when it is issued, after any wait for its start
    /// (`latency_from = "issue"`, fio's), not at its scheduled start.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub latency_from_issue: bool,
}

/// Each direction's rate of a mixed phase (fio's `rate=R,W`, `rate_iops=R,W`): ops per second
/// of each thread; `None`: that direction is not limited (fio's `rate=,W`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DirRates {
    /// Reads per second of each thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<f64>,
    /// Writes per second of each thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<f64>,
}

/// A thread's place in a flow (fio's `flow_id`, `flow`, `flow_sleep`): the threads of every
/// job with the same id keep their op counts in the ratio of their weights; a thread ahead of
/// its share waits (`sleep_nanos`, or spins when 0) before its next op.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// The flow's id (fio's `flow_id`, default 0).
    #[serde(default)]
    pub id: u32,
    /// This job's weight (fio's `flow`), 1 or more.
    pub weight: u32,
    /// How long a thread ahead of its share waits before it tries again, ns (fio's
    /// `flow_sleep`, µs); 0: it keeps its CPU and tries again at once (fio's loop).
    #[serde(default)]
    pub sleep_nanos: u64,
}

/// One thread's bytes and ops of each direction in each window of its phase's series
/// ([`PhaseSeries::interval_nanos`]), kept with a fixed `--interval` (as `fsbench fio` runs)
/// so that fio's per-thread bandwidth and IOPS samples can be told ([`RateSamples`]); empty
/// otherwise, and in records made before fsbench kept it. The last window may be partial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadWindows {
    /// Bytes read in each window.
    #[serde(default)]
    pub read_bytes: Vec<u64>,
    /// Reads completed.
    #[serde(default)]
    pub read_ops: Vec<u64>,
    /// Bytes written.
    #[serde(default)]
    pub write_bytes: Vec<u64>,
    /// Writes completed.
    #[serde(default)]
    pub write_ops: Vec<u64>,
}

impl ThreadWindows {
    /// No window kept.
    pub fn is_empty(&self) -> bool {
        self.read_ops.is_empty() && self.write_ops.is_empty()
    }
}

/// Statistics of a list of whole-number samples as fio keeps them (its `struct io_stat`):
/// count, smallest, largest, mean and the sum of squared deviations from the mean (Welford's
/// streaming method, which fio uses), so that the standard deviation is the sample one,
/// `sqrt(S / (n - 1))`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SampleStats {
    /// Samples.
    pub samples: u64,
    /// Smallest sample (0 without samples).
    pub min: u64,
    /// Largest sample.
    pub max: u64,
    /// Their mean.
    pub mean: f64,
    /// Sum of squared deviations from the mean.
    pub sq_dev_sum: f64,
}

impl SampleStats {
    /// The statistics of `values`.
    pub fn of(values: impl IntoIterator<Item = u64>) -> SampleStats {
        let mut s = SampleStats::default();
        for v in values {
            s.samples += 1;
            s.min = if s.samples == 1 { v } else { s.min.min(v) };
            s.max = s.max.max(v);
            let delta = v as f64 - s.mean;
            s.mean += delta / s.samples as f64;
            s.sq_dev_sum += delta * (v as f64 - s.mean);
        }
        s
    }

    /// The sample standard deviation (0 with fewer than two samples, as fio's).
    pub fn stddev(&self) -> f64 {
        if self.samples < 2 {
            0.0
        } else {
            (self.sq_dev_sum / (self.samples - 1) as f64).sqrt()
        }
    }

    /// fio's `group_reporting` merge of two threads' rate statistics (`sum_stat` with
    /// `pure_sum`): counts, minimums, maximums, means and squared deviations are added, so
    /// the merged mean is the threads' mean rates added up (the group's rate) and min and max
    /// the sums of the threads'. A side without samples adds nothing.
    pub fn summed(&self, o: &SampleStats) -> SampleStats {
        if o.samples == 0 {
            return *self;
        }
        if self.samples == 0 {
            return *o;
        }
        SampleStats {
            samples: self.samples + o.samples,
            min: self.min + o.min,
            max: self.max + o.max,
            mean: self.mean + o.mean,
            sq_dev_sum: self.sq_dev_sum + o.sq_dev_sum,
        }
    }
}

/// fio's bandwidth and IOPS samples of one direction: one sample per full window of
/// `bw_avg_time` in which the direction moved data (a window without any is no sample, as in
/// fio's `__add_samples`), bandwidth in KiB/s and IOPS in ops/s, each a whole number truncated
/// as fio computes it (`bytes * 1000 / window_ms / 1024`, `ops * 1000 / window_ms`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RateSamples {
    /// KiB/s of each window.
    pub kib_per_s: SampleStats,
    /// Ops/s of each window.
    pub iops: SampleStats,
}

impl RateSamples {
    /// The samples of one thread's direction from its series windows of `interval_ms`:
    /// `bytes[i]`, `ops[i]`, of which the first `full` ended before the thread did (a partial
    /// last window is no sample, as fio takes none at a thread's end). `group` consecutive
    /// windows make one sample window (`bw_avg_time` a multiple of the series interval, as
    /// when a log's `log_avg_msec` sets it); a partial group is left out too.
    pub fn of_windows(
        interval_ms: u64,
        group: usize,
        full: usize,
        bytes: &[u64],
        ops: &[u64],
    ) -> RateSamples {
        let group = group.max(1);
        let window_ms = (interval_ms * group as u64).max(1);
        let n = full.min(bytes.len()).min(ops.len()) / group;
        let sums: Vec<(u64, u64)> = (0..n)
            .map(|k| {
                let r = k * group..(k + 1) * group;
                (bytes[r.clone()].iter().sum::<u64>(), ops[r].iter().sum::<u64>())
            })
            .filter(|(b, _)| *b > 0)
            .collect();
        RateSamples {
            kib_per_s: SampleStats::of(sums.iter().map(|(b, _)| b * 1000 / window_ms / 1024)),
            iops: SampleStats::of(sums.iter().map(|(_, o)| o * 1000 / window_ms)),
        }
    }

    /// fio's `group_reporting` merge ([`SampleStats::summed`]).
    pub fn summed(&self, o: &RateSamples) -> RateSamples {
        RateSamples {
            kib_per_s: self.kib_per_s.summed(&o.kib_per_s),
            iops: self.iops.summed(&o.iops),
        }
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Load {
    /// Nothing paced: the closed loop.
    pub fn is_closed(&self) -> bool {
        self.thread_ops_per_s.is_none() && self.think_nanos == 0 && self.dir_ops_per_s.is_none()
    }
}

/// fio's steady-state metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyMetric {
    /// Every 1 s sample of ops/s less than the limit away from the window's mean.
    Iops,
    /// The least-squares slope of ops/s over the window, per second, less than the limit (of
    /// the mean) in size.
    IopsSlope,
    /// As `Iops`, on bytes per second.
    Bw,
    /// As `IopsSlope`, on bytes per second.
    BwSlope,
}

impl SteadyMetric {
    /// The name as written (`iops_slope`).
    pub fn name(self) -> &'static str {
        match self {
            SteadyMetric::Iops => "iops",
            SteadyMetric::IopsSlope => "iops_slope",
            SteadyMetric::Bw => "bw",
            SteadyMetric::BwSlope => "bw_slope",
        }
    }
}

/// A steady-state criterion: the phase ends once `metric` stays within `limit_percent` over
/// the last `window_secs` seconds (after `ramp_secs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    /// What is checked.
    pub metric: SteadyMetric,
    /// Limit, percent of the window's mean.
    pub limit_percent: f64,
    /// Window (`ss_dur`), whole seconds.
    pub window_secs: u32,
    /// Seconds ignored at the start (`ss_ramp`).
    pub ramp_secs: u32,
}

/// A fixed rate's outcome: asked against achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RateOutcome {
    /// Ops per second asked (every thread together).
    pub asked_ops_per_s: f64,
    /// Ops per second achieved (ops completed over the phase's wall time).
    pub achieved_ops_per_s: f64,
}

impl RateOutcome {
    /// Achieved over asked (1.0 when met).
    pub fn ratio(&self) -> f64 {
        if self.asked_ops_per_s > 0.0 {
            self.achieved_ops_per_s / self.asked_ops_per_s
        } else {
            1.0
        }
    }

    /// Fell short of the asked rate by more than 2% (the pacing's own tolerance).
    pub fn short(&self) -> bool {
        self.ratio() < 0.98
    }

    /// `asked 500/s, achieved 431/s (86%)`.
    pub fn words(&self) -> String {
        format!(
            "asked {:.0}/s, achieved {:.0}/s ({:.0}%)",
            self.asked_ops_per_s,
            self.achieved_ops_per_s,
            100.0 * self.ratio()
        )
    }
}

/// A steady-state criterion's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyOutcome {
    /// The criterion.
    pub criterion: Steady,
    /// Seconds into the phase at which it held (the phase ended there); `None`: it never did.
    pub held_at_secs: Option<f64>,
    /// The last window the criterion was judged on (the one that held, else the phase's last
    /// `window_secs` seconds after the ramp, fewer if it ran out first): the bytes completed
    /// in each second, oldest first (fio's `data.bw`). Empty in records made before fsbench
    /// kept it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub window_bytes_per_s: Vec<f64>,
}

/// fio's steady-state measures of a window of 1 s samples (fio 3.33's `steadystate.c`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyMeasures {
    /// The samples' mean.
    pub mean: f64,
    /// The largest distance of a sample from the mean (the `iops`/`bw` criteria).
    pub max_deviation: f64,
    /// The least-squares slope over x = 0, 1, ..., per second (the `*_slope` criteria), fio's
    /// closed form with equally spaced samples.
    pub slope: f64,
}

impl SteadyMeasures {
    /// The measures of `window` (`None` when it is empty).
    pub fn of(window: &[f64]) -> Option<SteadyMeasures> {
        if window.is_empty() {
            return None;
        }
        let n = window.len() as f64;
        let mean = window.iter().sum::<f64>() / n;
        let max_deviation = window.iter().map(|r| (r - mean).abs()).fold(0.0, f64::max);
        let xm = (n - 1.0) / 2.0;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for (i, r) in window.iter().enumerate() {
            let dx = i as f64 - xm;
            sxy += dx * (r - mean);
            sxx += dx * dx;
        }
        let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        Some(SteadyMeasures { mean, max_deviation, slope })
    }

    /// fio's criterion value for `metric`, in percent of the mean: the slope's (signed, as
    /// fio reports it) or the largest deviation's. NaN when the mean is 0, as fio's.
    pub fn criterion_percent(&self, metric: SteadyMetric) -> f64 {
        let v = match metric {
            SteadyMetric::Iops | SteadyMetric::Bw => self.max_deviation,
            SteadyMetric::IopsSlope | SteadyMetric::BwSlope => self.slope,
        };
        100.0 * v / self.mean
    }
}

impl SteadyOutcome {
    /// `steady state (iops within 5% over 10 s) held at 24 s` / `... never held`.
    pub fn words(&self) -> String {
        let c = &self.criterion;
        let what = format!(
            "steady state ({} within {}% over {} s)",
            c.metric.name(),
            c.limit_percent,
            c.window_secs
        );
        match self.held_at_secs {
            Some(s) => format!("{what} held at {s:.1} s"),
            None => format!("{what} never held"),
        }
    }
}

/// What a paced or steady-state phase reports about its load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadOutcome {
    /// The fixed rate, asked and achieved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateOutcome>,
    /// The steady-state criterion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyOutcome>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_are_empty_runs_between_completions() {
        let s = PhaseSeries { ops: vec![5, 0, 0, 4, 0, 3, 0], ..PhaseSeries::default() };
        // The trailing empty interval has nothing after it: the phase ended, not a stall.
        assert_eq!(s.stalls(), vec![(1, 2), (4, 1)]);
    }

    #[test]
    fn ranks_merge_on_the_common_clock() {
        let a = PhaseSeries {
            interval_nanos: 10,
            read_bytes: vec![1, 2, 3, 4],
            read_ops: vec![1, 1, 1, 1],
            ops: vec![1, 1, 1, 1],
            p99_nanos: vec![5, 9, 1, 1],
            max_nanos: vec![5, 9, 1, 1],
            dirty_bytes: vec![7, 8, 9, 10],
            writeback_bytes: vec![0, 0, 0, 1],
            device_read_requests: vec![1, 1, 2, 2],
            device_write_requests: vec![0, 1, 0, 1],
            device_busy_nanos: vec![4, 6, 1, 2],
            cpu_user_nanos: vec![1, 2, 3, 4],
            cpu_sys_nanos: vec![5, 5, 5, 5],
            ..PhaseSeries::default()
        };
        let b = PhaseSeries {
            interval_nanos: 20,
            read_bytes: vec![10],
            read_ops: vec![2],
            ops: vec![2],
            p99_nanos: vec![3],
            max_nanos: vec![3],
            dirty_bytes: vec![100],
            writeback_bytes: vec![100],
            device_read_requests: vec![100],
            device_write_requests: vec![100],
            device_busy_nanos: vec![20],
            cpu_user_nanos: vec![7],
            cpu_sys_nanos: vec![9],
            ..PhaseSeries::default()
        };
        // b started one (widened) interval after a, on a host a already counts.
        let m = merge_ranks(&[(&a, 0, true), (&b, 20, false)]).unwrap();
        assert_eq!(m.interval_nanos, 20);
        assert_eq!(m.read_bytes, vec![3, 17]);
        assert_eq!(m.ops, vec![2, 4]);
        assert_eq!(m.p99_nanos, vec![9, 3]);
        assert_eq!(m.dirty_bytes, vec![8, 10]);
        assert_eq!(m.writeback_bytes, vec![0, 1]);
        // The host's devices once (b shares a's host); CPU from both processes.
        assert_eq!(m.device_read_requests, vec![2, 4]);
        assert_eq!(m.device_write_requests, vec![1, 1]);
        assert_eq!(m.device_busy_nanos, vec![10, 3]);
        assert_eq!(m.cpu_user_nanos, vec![3, 14]);
        assert_eq!(m.cpu_sys_nanos, vec![10, 19]);
    }

    #[test]
    fn a_cliff_at_the_dirty_peak_is_found_and_one_without_it_is_not() {
        let mib = 1u64 << 20;
        // 100 ms points: 100 MiB/s (10 MiB a point) while dirty grows to 200 MiB, then 20 MiB/s.
        let mut s = PhaseSeries { interval_nanos: 100_000_000, ..PhaseSeries::default() };
        for i in 0..40u64 {
            let (w, d) = if i < 20 { (10 * mib, (i + 1) * 10 * mib) } else { (2 * mib, 200 * mib) };
            s.write_bytes.push(w);
            s.write_ops.push(1);
            s.ops.push(1);
            s.dirty_bytes.push(d);
            s.writeback_bytes.push(0);
        }
        // Not without the kernel's throttling threshold, nor with one the peak is far below
        // (an O_DSYNC writer's own waits drop its rate at any dirty level).
        assert_eq!(s.dirty_cliff(), None, "no threshold read");
        s.dirty_throttle_bytes = 1000 * mib;
        assert_eq!(s.dirty_cliff(), None, "peak 200 MiB, throttling from 1000 MiB");
        s.dirty_throttle_bytes = 210 * mib;
        let c = s.dirty_cliff().expect("a cliff");
        assert!((c.at_secs - 2.0).abs() < 0.35, "at {} s", c.at_secs);
        assert!(c.before_mib_per_s > 80.0 && c.after_mib_per_s < 30.0, "{c:?}");
        assert!(c.dirty_bytes >= 170 * mib);
        // Pages under writeback count as the kernel counts them: the same drop when a slow
        // device holds most of the 200 MiB under writeback and `Dirty` alone stays at 30 MiB.
        let (dirty, wb) = (s.dirty_bytes.clone(), s.writeback_bytes.clone());
        s.writeback_bytes = s.dirty_bytes.iter().map(|d| d.saturating_sub(30 * mib)).collect();
        s.dirty_bytes = s.dirty_bytes.iter().map(|d| (*d).min(30 * mib)).collect();
        let c = s.dirty_cliff().expect("a cliff on dirty + writeback");
        assert!((c.at_secs - 2.0).abs() < 0.35 && c.dirty_bytes >= 170 * mib, "{c:?}");
        (s.dirty_bytes, s.writeback_bytes) = (dirty, wb);
        // A throttled writer's pause later on (nothing written for 0.4 s, then the same pace)
        // is a steeper drop for a moment, not the cliff.
        for i in 30..34 {
            s.write_bytes[i] = 0;
        }
        let c = s.dirty_cliff().expect("a cliff");
        assert!((c.at_secs - 2.0).abs() < 0.35, "at {} s, not at the pause: {c:?}", c.at_secs);
        s.write_bytes[30..34].fill(2 * mib);
        // Another process's burst of dirty pages for one point raises the peak to 400 MiB;
        // the writer still holds 200 MiB, at the threshold, where its rate fell.
        s.dirty_bytes[35] = 400 * mib;
        let c = s.dirty_cliff().expect("a cliff despite the burst");
        assert!((c.at_secs - 2.0).abs() < 0.35, "at {} s", c.at_secs);
        s.dirty_bytes[35] = 200 * mib;
        // The same drop with dirty bytes far from their peak is not the dirty limit.
        s.dirty_bytes = (0..40).map(|i| if i < 5 { 300 * mib } else { 10 * mib }).collect();
        assert_eq!(s.dirty_cliff(), None);
    }

    /// A 30 s buffered write at 100 ms points: written at a steady 100 MiB/s, and the device
    /// writes `at(i)` per point.
    fn writer(at: impl Fn(usize) -> u64) -> PhaseSeries {
        let mib = 1u64 << 20;
        let n = 300;
        PhaseSeries {
            interval_nanos: 100_000_000,
            write_bytes: vec![10 * mib; n],
            write_ops: vec![10; n],
            ops: vec![10; n],
            device_write_requests: (0..n).map(&at).collect(),
            writeback_bytes: (0..n).map(|i| at(i) * mib).collect(),
            ..PhaseSeries::default()
        }
    }

    #[test]
    fn periodic_writeback_bursts_are_found_with_their_period() {
        // Every 5 s (50 points) the flusher writes for 0.4 s, a little noise between.
        let s = writer(|i| {
            if i % 50 >= 10 && i % 50 < 14 {
                800 + (i % 3) as u64 * 40
            } else {
                i as u64 % 4
            }
        });
        let b = s.writeback_bursts(true).expect("bursts");
        assert!((b.period_secs - 5.0).abs() < 0.05, "{b:?}");
        assert_eq!((b.bursts, b.device), (6, true));
        // The same in the host's writeback bytes when the device is not the target's own.
        let b = s.writeback_bursts(false).expect("bursts in writeback bytes");
        assert!((b.period_secs - 5.0).abs() < 0.05 && !b.device, "{b:?}");
        // A period that drifts a little (4.6 to 5.4 s) is still one.
        let starts = [8usize, 54, 108, 158, 204, 258];
        let s = writer(|i| if starts.iter().any(|&t| i >= t && i < t + 3) { 500 } else { 0 });
        assert!(s.writeback_bursts(true).is_some());
    }

    #[test]
    fn steady_or_irregular_writeback_is_not_periodic() {
        // A steady stream (device writes every point, some noise).
        let s = writer(|i| 400 + (i * 37 % 100) as u64);
        assert_eq!(s.writeback_bursts(true), None);
        // Bursts at irregular times.
        let starts = [5usize, 20, 90, 110, 200, 280];
        let s = writer(|i| if starts.iter().any(|&t| i >= t && i < t + 3) { 500 } else { 0 });
        assert_eq!(s.writeback_bursts(true), None);
        // Two bursts: not yet a rhythm.
        let s = writer(|i| if i == 50 || i == 100 { 500 } else { 0 });
        assert_eq!(s.writeback_bursts(true), None);
        // Bursts, but the phase read: no writer to speak of.
        let mut s = writer(|i| if i % 50 < 3 { 500 } else { 0 });
        assert!(s.writeback_bursts(true).is_some());
        s.write_bytes.fill(0);
        assert_eq!(s.writeback_bursts(true), None);
        // Every other point high: half the time writing back is a stream with gaps, and the
        // gap (2 points) too short to call a period.
        let s = writer(|i| if i % 2 == 0 { 500 } else { 0 });
        assert_eq!(s.writeback_bursts(true), None);
    }

    /// The mean latency of a window and direction is its sum over its count, rounded half up
    /// in whole numbers (fio's `mean + 0.5`, truncated); no mean without ops or without sums.
    #[test]
    fn mean_latency_is_the_sum_over_the_count_rounded_half_up() {
        let s = PhaseSeries {
            interval_nanos: 500_000_000,
            ops: vec![6, 1, 3, 2, 1],
            read_ops: vec![4, 0, 3, 2, 1],
            read_lat_sum_nanos: vec![4_000_002, 0, 1_000, 5, 7],
            write_ops: vec![2, 1],
            ..PhaseSeries::default()
        };
        // 1_000_000.5 rounds up; 333.33 down; 2.5 up; one op is its own latency.
        assert_eq!(s.mean_lat_nanos(0, false), Some(1_000_001));
        assert_eq!(s.mean_lat_nanos(1, false), None, "no reads in the window");
        assert_eq!(s.mean_lat_nanos(2, false), Some(333));
        assert_eq!(s.mean_lat_nanos(3, false), Some(3));
        assert_eq!(s.mean_lat_nanos(4, false), Some(7));
        assert_eq!(s.mean_lat_nanos(5, false), None, "past the last point");
        // A sum near u64::MAX does not overflow the rounding.
        let big = PhaseSeries {
            read_ops: vec![1, 3],
            read_lat_sum_nanos: vec![u64::MAX, u64::MAX],
            ..PhaseSeries::default()
        };
        assert_eq!(big.mean_lat_nanos(0, false), Some(u64::MAX));
        assert_eq!(big.mean_lat_nanos(1, false), Some(u64::MAX / 3));
        // Writes without sums (a series stored before fsbench kept them): no mean, not 0.
        assert_eq!(s.mean_lat_nanos(0, true), None);
        // Widened, pairs of sums and counts add up, so the mean stays exact.
        let w = s.widen(1_000_000_000);
        assert_eq!(w.read_lat_sum_nanos, [4_000_002, 1_005, 7]);
        assert_eq!(w.read_ops, [4, 5, 1]);
        assert_eq!(w.mean_lat_nanos(1, false), Some(201));
        // Ranks' sums add up on the common clock.
        let m = merge_ranks(&[(&s, 0, true), (&s, 0, false)]).expect("merged");
        assert_eq!(m.read_lat_sum_nanos[0], 8_000_004);
        assert_eq!(m.mean_lat_nanos(0, false), Some(1_000_001));
    }

    #[test]
    fn rate_words_say_the_shortfall() {
        let r = RateOutcome { asked_ops_per_s: 500.0, achieved_ops_per_s: 431.0 };
        assert_eq!(r.words(), "asked 500/s, achieved 431/s (86%)");
        assert!(r.short());
        assert!(!RateOutcome { asked_ops_per_s: 500.0, achieved_ops_per_s: 495.0 }.short());
    }

    #[test]
    fn old_records_read_without_series() {
        let s: PhaseSeries = serde_json::from_str(r#"{"interval_nanos": 20000000}"#).unwrap();
        assert!(s.is_empty());
        // A series stored before the device and CPU samples: read, and written back without
        // them (no empty arrays).
        let old = r#"{"interval_nanos":20000000,"read_bytes":[1],"write_bytes":[0],"read_ops":[1],"write_ops":[0],"ops":[1],"p50_nanos":[5],"p99_nanos":[5],"max_nanos":[5],"dirty_bytes":[3],"writeback_bytes":[0]}"#;
        let s: PhaseSeries = serde_json::from_str(old).unwrap();
        assert!(s.device_busy_nanos.is_empty() && s.cpu_user_nanos.is_empty());
        assert_eq!(serde_json::to_string(&s).unwrap(), old);
    }

    #[test]
    fn rate_samples_are_fios_per_window_figures() {
        // 500 ms windows: 100, 101, 0 (no sample), 99 reads of 4 KiB, then a partial window.
        let ops = [100, 101, 0, 99, 40];
        let bytes: Vec<u64> = ops.iter().map(|n| n * 4096).collect();
        let r = RateSamples::of_windows(500, 1, 4, &bytes, &ops);
        // IOPS: 200, 202, 198 (ops * 1000 / 500); KiB/s: 800, 808, 792.
        assert_eq!((r.iops.samples, r.iops.min, r.iops.max), (3, 198, 202));
        assert_eq!(r.iops.mean, 200.0);
        assert_eq!(r.iops.stddev(), 2.0, "sqrt((4 + 0 + 4) / (3 - 1))");
        assert_eq!((r.kib_per_s.samples, r.kib_per_s.min, r.kib_per_s.max), (3, 792, 808));
        assert_eq!(r.kib_per_s.mean, 800.0);
        assert_eq!(r.kib_per_s.stddev(), 8.0);
        // Truncated as fio's integer arithmetic: 1000 bytes in 300 ms is 3333 B/s, 3 KiB/s.
        let t = RateSamples::of_windows(300, 1, 1, &[1000], &[1]);
        assert_eq!((t.kib_per_s.min, t.iops.min), (3, 3));
        // Five 100 ms windows make one 500 ms sample; the partial group is left out.
        let g = RateSamples::of_windows(100, 5, 7, &[4096; 7], &[1; 7]);
        assert_eq!((g.iops.samples, g.iops.min, g.kib_per_s.min), (1, 10, 40));
        // No full window: no sample, everything 0 (fio's short job).
        let none = RateSamples::of_windows(500, 1, 0, &[4096], &[1]);
        assert_eq!(none, RateSamples::default());
        assert_eq!(none.iops.stddev(), 0.0);
        // One sample: standard deviation 0, as fio's.
        assert_eq!(RateSamples::of_windows(500, 1, 1, &[4096], &[1]).iops.stddev(), 0.0);
    }

    #[test]
    fn group_reporting_adds_threads_rate_statistics_up() {
        let a = SampleStats::of([200, 202, 198]);
        let b = SampleStats::of([100, 104]);
        let s = a.summed(&b);
        assert_eq!((s.samples, s.min, s.max), (5, 298, 306));
        assert_eq!(s.mean, 302.0);
        // S: 8 + 8; over 5 - 1.
        assert_eq!(s.stddev(), 2.0);
        assert_eq!(SampleStats::default().summed(&b), b);
        assert_eq!(a.summed(&SampleStats::default()), a);
    }
}
