//! Facts derived from what a repetition observed: the numbers an explanation can cite.

use crate::observe::extents::ExtentSummary;
use crate::result::{DeviceDelta, RepResult};
use serde::{Deserialize, Serialize};

/// Share of one core per thread at or above which a test counts as CPU-bound.
pub const CPU_BOUND_PCT: f64 = 85.0;

/// What one configuration did underneath one test (its median repetition, timed phases).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// Throughput.
    pub mib_per_s: f64,
    /// Bytes the workload wrote.
    pub bytes_written: u64,
    /// Bytes the workload read.
    pub bytes_read: u64,
    /// Read + write operations.
    pub data_ops: u64,
    /// Device counters over the timed phases, when the target has devices.
    pub device: Option<DeviceDelta>,
    /// Device bytes written / workload bytes written.
    pub write_amplification: Option<f64>,
    /// Device bytes read / workload bytes read.
    pub device_read_share: Option<f64>,
    /// Mean size of a completed write request on the device.
    pub avg_write_request_bytes: Option<f64>,
    /// Mean size of a completed read request on the device.
    pub avg_read_request_bytes: Option<f64>,
    /// Device busy time / wall time.
    pub device_busy_share: Option<f64>,
    /// CPU (user + system) per thread, % of one core.
    pub cpu_pct_per_thread: f64,
    /// System share of the CPU time.
    pub sys_share: f64,
    /// CPU-bound (at least [`CPU_BOUND_PCT`]).
    pub cpu_bound: bool,
    /// System CPU per data operation.
    pub sys_nanos_per_op: f64,
    /// Time inside fsync/fdatasync / (wall × threads).
    pub sync_share: f64,
    /// Dirty page cache the last timed phase left: `Dirty` at its end minus `Dirty` at its start
    /// (0 if it fell), so dirty data earlier tests left behind is not counted.
    pub dirty_after_bytes: Option<u64>,
    /// Resident memory of the filesystem daemon at the end.
    pub daemon_rss_bytes: Option<u64>,
    /// CPU the filesystem daemon used over the timed phases / their wall time (1.0 = one core).
    pub daemon_cpu_share: Option<f64>,
    /// Extents of the test files.
    pub extents: Option<ExtentSummary>,
    /// From the block trace, when the run was traced.
    pub trace: Option<TraceFacts>,
}

/// Block-trace totals over the timed phases (reads or writes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceDir {
    /// bios queued (block_bio_queue).
    pub bios: u64,
    /// Their bytes.
    pub bio_bytes: u64,
    /// bios merged into an existing request (back + front).
    pub bio_merges: u64,
    /// Requests issued to the driver (block_rq_issue).
    pub requests: u64,
    /// Their bytes.
    pub request_bytes: u64,
}

/// What the block trace adds to the facts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceFacts {
    /// Reads.
    pub reads: TraceDir,
    /// Writes.
    pub writes: TraceDir,
    /// Highest queue depth seen.
    pub max_queue_depth: u32,
    /// Device latency (issue to complete), p99 over all requests.
    pub device_p99_nanos: Option<u64>,
}

/// Derive the facts of one repetition of a test run with `threads` threads.
pub fn of(rep: &RepResult, threads: u32) -> Facts {
    let timed: Vec<_> = rep.phases.iter().filter(|p| p.timed).collect();
    let bytes_written: u64 = timed.iter().map(|p| p.bytes_written).sum();
    let bytes_read: u64 = timed.iter().map(|p| p.bytes_read).sum();
    let mut device: Option<DeviceDelta> = None;
    for p in &timed {
        if let Some(d) = &p.device {
            device.get_or_insert_with(DeviceDelta::default).add(d);
        }
    }
    let ratio = |a: u64, b: u64| (b > 0).then(|| a as f64 / b as f64);
    let cpu = rep.cpu_user_nanos + rep.cpu_sys_nanos;
    let sync: u64 = timed.iter().map(|p| p.sync_nanos).sum();
    let last = timed.last();
    // Data operations, or a fileset test's file operations (create, stat, unlink...).
    let ops = rep.data_ops + rep.file_ops;
    let daemon_cpu: Option<u64> = timed
        .iter()
        .map(|p| {
            p.memory.and_then(|m| {
                Some(m.after.daemon_cpu_nanos?.saturating_sub(m.before.daemon_cpu_nanos?))
            })
        })
        .sum();
    let mut trace: Option<TraceFacts> = None;
    for p in &timed {
        if let Some(t) = &p.trace {
            let acc = trace.get_or_insert_with(TraceFacts::default);
            for (d, c) in [(&mut acc.reads, &t.reads), (&mut acc.writes, &t.writes)] {
                d.bios += c.bios_queued;
                d.bio_bytes += c.bios_queued_bytes;
                d.bio_merges += c.bio_backmerges + c.bio_frontmerges;
                d.requests += c.requests_issued;
                d.request_bytes += c.requests_issued_bytes;
            }
            acc.max_queue_depth = acc.max_queue_depth.max(t.queue_depth.max);
            let p99 = t.device_latency.all.as_ref().map(|l| l.p99_nanos);
            acc.device_p99_nanos = acc.device_p99_nanos.max(p99);
        }
    }
    Facts {
        mib_per_s: rep.mib_per_s,
        bytes_written,
        bytes_read,
        data_ops: ops,
        write_amplification: device.as_ref().and_then(|d| ratio(d.write_bytes, bytes_written)),
        device_read_share: device.as_ref().and_then(|d| ratio(d.read_bytes, bytes_read)),
        avg_write_request_bytes: device
            .as_ref()
            .and_then(|d| ratio(d.write_bytes, d.writes_completed)),
        avg_read_request_bytes: device
            .as_ref()
            .and_then(|d| ratio(d.read_bytes, d.reads_completed)),
        device_busy_share: device
            .as_ref()
            .and_then(|d| ratio(d.busy_ms * 1_000_000, rep.wall_nanos)),
        device,
        cpu_pct_per_thread: rep.cpu_pct_per_thread,
        sys_share: if cpu > 0 { rep.cpu_sys_nanos as f64 / cpu as f64 } else { 0.0 },
        cpu_bound: rep.cpu_pct_per_thread >= CPU_BOUND_PCT,
        sys_nanos_per_op: if rep.data_ops > 0 {
            rep.cpu_sys_nanos as f64 / rep.data_ops as f64
        } else {
            0.0
        },
        sync_share: if rep.wall_nanos > 0 {
            sync as f64 / (rep.wall_nanos as f64 * threads.max(1) as f64)
        } else {
            0.0
        },
        dirty_after_bytes: last.and_then(|p| {
            p.memory.map(|m| m.after.dirty_bytes.saturating_sub(m.before.dirty_bytes))
        }),
        daemon_rss_bytes: last.and_then(|p| p.memory.and_then(|m| m.after.daemon_rss_bytes)),
        daemon_cpu_share: daemon_cpu
            .filter(|_| rep.wall_nanos > 0)
            .map(|c| c as f64 / rep.wall_nanos as f64),
        extents: rep.extents.clone(),
        trace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::memory::{MemDelta, MemSample};
    use crate::result::PhaseResult;

    #[test]
    fn dirty_data_is_what_the_phase_left_not_what_earlier_tests_left() {
        let mib = 1u64 << 20;
        let phase = |before: u64, after: u64| PhaseResult {
            timed: true,
            bytes_written: 4 * mib,
            memory: Some(MemDelta {
                before: MemSample { dirty_bytes: before, ..Default::default() },
                after: MemSample { dirty_bytes: after, ..Default::default() },
            }),
            ..Default::default()
        };
        // 139 MiB dirty left by earlier tests, 3 MiB added by this 4 MiB phase.
        let rep = RepResult { phases: vec![phase(139 * mib, 142 * mib)], ..Default::default() };
        assert_eq!(of(&rep, 1).dirty_after_bytes, Some(3 * mib));
        // Writeback of earlier data during the phase: the counter fell, nothing is left.
        let rep = RepResult { phases: vec![phase(139 * mib, 100 * mib)], ..Default::default() };
        assert_eq!(of(&rep, 1).dirty_after_bytes, Some(0));
    }
}
