//! Facts derived from what a repetition observed: the numbers an explanation can cite.

use crate::model::extents::ExtentSummary;
use crate::model::job::OpKind;
use crate::model::result::{DeviceDelta, PhaseResult, RepResult};
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
    /// Filesystem CPU per operation: the threads' system CPU, plus a FUSE daemon's whole CPU
    /// (a FUSE filesystem does in its daemon the work an in-kernel one does in system time).
    pub sys_nanos_per_op: f64,
    /// CPU (user + system) the filesystem daemon used over the timed phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_cpu_nanos: Option<u64>,
    /// Where the threads' time went (data calls, syncs, open/close/metadata, off CPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<TimeSplit>,
    /// Time inside fsync/fdatasync / (wall × threads).
    pub sync_share: f64,
    /// Dirty page cache the last timed phase left: `Dirty` at its end minus `Dirty` at its start
    /// (0 if it fell), so dirty data earlier tests left behind is not counted; None when the
    /// rise is more than the phase could have dirtied ([`phase_dirty`]): `Dirty` is machine-wide,
    /// and another process wrote it.
    pub dirty_after_bytes: Option<u64>,
    /// Resident memory of the filesystem daemon at the end.
    pub daemon_rss_bytes: Option<u64>,
    /// CPU the filesystem daemon used over the timed phases / their wall time (1.0 = one core).
    pub daemon_cpu_share: Option<f64>,
    /// Extents of the test files.
    pub extents: Option<ExtentSummary>,
    /// From the block trace, when the run was traced.
    pub trace: Option<TraceFacts>,
    /// What the threads waited for while off CPU, over the timed phases, when traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offcpu: Option<crate::model::trace::OffCpuBreakdown>,
    /// A timed phase required a cached file and did not get it (something else evicted it):
    /// its device reads are not the filesystem's doing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache_not_met: bool,
    /// Intervals of the timed phases' series with no completion while ops were in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<crate::model::series::Stalls>,
    /// A timed phase's write throughput fell when dirty page cache reached its peak.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_cliff: Option<crate::model::series::DirtyCliff>,
    /// A timed phase that wrote saw writeback in bursts at a regular period (in its own
    /// devices' write requests, else in the host's writeback bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_bursts: Option<crate::model::series::WritebackBursts>,
}

impl Facts {
    /// The device counters are device-wide (a user's directory on a shared device): they
    /// include other processes' I/O.
    pub fn device_shared(&self) -> bool {
        self.device.as_ref().is_some_and(|d| d.shared)
    }
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

/// Where the threads' time went over the timed phases, from the per-kind latency histograms of
/// each phase: count × mean of each kind (the HdrHistogram's mean is within its 0.1% bucket
/// bound). The kinds are disjoint: a create's or append's own fsync is recorded as `fsync`, not
/// as `create`, and a create's new directories as `mkdir`. Nothing is added to the hot loop.
/// With queued I/O (io_uring above depth 1) requests overlap: a phase's call times are scaled
/// down to fill at most its thread time.
///
/// "Blocked on the device" is not measured per thread (delay accounting would need a global
/// sysctl, a read in every worker and gives 10 ms ticks); off CPU time and the device's busy
/// share ([`Facts::device_busy_share`]) stand for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeSplit {
    /// Wall time × threads of the timed phases: the time there was to spend.
    pub thread_nanos: u64,
    /// In `read()` and `write()` (files not opened O_DSYNC/O_SYNC).
    pub data_nanos: u64,
    /// In fsync, fdatasync, syncfs, a directory's fsync, and `write()` to files opened
    /// O_DSYNC/O_SYNC (each waits for the device).
    pub sync_nanos: u64,
    /// In open, close and metadata calls: create, unlink, stat, readdir, mkdir, rmdir, rename,
    /// and the whole-file operations (replace, append, read-whole), each with its own I/O.
    pub meta_nanos: u64,
    /// CPU (user + system) the threads used.
    pub cpu_nanos: u64,
}

impl TimeSplit {
    /// The split of the timed phases among `phases` run with `threads` threads.
    pub fn of<'a>(phases: impl IntoIterator<Item = &'a PhaseResult>, threads: u32) -> TimeSplit {
        let mut t = TimeSplit::default();
        for p in phases.into_iter().filter(|p| p.timed) {
            let n = if p.threads > 0 { p.threads } else { threads.max(1) };
            let phase_nanos = p.wall_nanos * u64::from(n);
            t.thread_nanos += phase_nanos;
            t.cpu_nanos += p.cpu_user_nanos + p.cpu_sys_nanos;
            let before = (t.data_nanos, t.sync_nanos, t.meta_nanos);
            for l in &p.latency {
                let ns = (l.mean_nanos * l.count as f64) as u64;
                let slot = match l.op {
                    OpKind::Read => &mut t.data_nanos,
                    OpKind::Write if p.sync_writes => &mut t.sync_nanos,
                    OpKind::Write => &mut t.data_nanos,
                    OpKind::Fsync | OpKind::Fdatasync | OpKind::Fsyncdir | OpKind::Syncfs => {
                        &mut t.sync_nanos
                    }
                    OpKind::Open
                    | OpKind::Close
                    | OpKind::Create
                    | OpKind::Unlink
                    | OpKind::Stat
                    | OpKind::Readdir
                    | OpKind::Mkdir
                    | OpKind::Rmdir
                    | OpKind::Rename
                    | OpKind::Replace
                    | OpKind::Append
                    | OpKind::Readwhole
                    | OpKind::Opencreate
                    | OpKind::Lstat
                    | OpKind::Statx
                    | OpKind::Mkdirslot
                    | OpKind::Rmdirslot => &mut t.meta_nanos,
                };
                *slot += ns;
            }
            // Queued I/O (io_uring at a depth above 1): requests overlap, so their latencies
            // add up to more than the time there was; the phase's calls fill at most its time.
            let spent =
                (t.data_nanos - before.0) + (t.sync_nanos - before.1) + (t.meta_nanos - before.2);
            if spent > phase_nanos {
                let scale = phase_nanos as f64 / spent as f64;
                let fit = |now: u64, was: u64| was + ((now - was) as f64 * scale) as u64;
                t.data_nanos = fit(t.data_nanos, before.0);
                t.sync_nanos = fit(t.sync_nanos, before.1);
                t.meta_nanos = fit(t.meta_nanos, before.2);
            }
        }
        t
    }

    /// `x` as a share of the threads' time (0 when there was none).
    pub fn share(&self, x: u64) -> f64 {
        if self.thread_nanos == 0 {
            0.0
        } else {
            x as f64 / self.thread_nanos as f64
        }
    }

    /// Time outside the recorded calls: the benchmark's own loop between calls, and threads
    /// that finished early waiting for the last one.
    pub fn other_nanos(&self) -> u64 {
        self.thread_nanos.saturating_sub(self.data_nanos + self.sync_nanos + self.meta_nanos)
    }

    /// Time the threads were not on a CPU: blocked on the device, on locks or on a FUSE daemon,
    /// or waiting for a CPU on a busy machine.
    pub fn off_cpu_nanos(&self) -> u64 {
        self.thread_nanos.saturating_sub(self.cpu_nanos)
    }

    /// In words: `syncs 71%, read/write 20%, open/close/metadata 4%, elsewhere 5%; off CPU 80%`,
    /// largest first, shares under 1% left out.
    pub fn words(&self) -> String {
        let mut parts = [
            ("read/write", self.data_nanos),
            ("syncs", self.sync_nanos),
            ("open/close/metadata", self.meta_nanos),
            ("elsewhere", self.other_nanos()),
        ];
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        let v: Vec<String> = parts
            .iter()
            .map(|(n, x)| (n, self.share(*x)))
            .filter(|(_, s)| *s >= 0.01)
            .map(|(n, s)| format!("{n} {:.0}%", s * 100.0))
            .collect();
        format!("{}; off CPU {:.0}%", v.join(", "), self.share(self.off_cpu_nanos()) * 100.0)
    }
}

/// CPU (user + system) a filesystem daemon (zfs-fuse) used over the timed phases of `rep`; None
/// when there is no daemon (or a phase could not read it).
pub fn daemon_cpu_nanos(rep: &RepResult) -> Option<u64> {
    if !rep.phases.iter().any(|p| p.timed) {
        return None;
    }
    rep.phases
        .iter()
        .filter(|p| p.timed)
        .map(|p| {
            p.memory.and_then(|m| {
                Some(m.after.daemon_cpu_nanos?.saturating_sub(m.before.daemon_cpu_nanos?))
            })
        })
        .sum()
}

/// Pages a phase can dirty beyond its own bytes: journal, inode tables, directories, and a
/// partly written page counting whole (a 2 KiB write dirties 4 KiB).
const DIRTY_SLACK_BYTES: u64 = 8 << 20;

/// The rise of `Dirty` over phase `p`, or None when it is more than `p` could have dirtied
/// (2 × its bytes written + 4 KiB per file operation + [`DIRTY_SLACK_BYTES`]): the counter is
/// machine-wide, and on a shared machine other processes' writes land in it too.
pub fn phase_dirty(p: &PhaseResult) -> Option<u64> {
    let m = p.memory?;
    let rise = m.after.dirty_bytes.saturating_sub(m.before.dirty_bytes);
    let most = 2 * p.bytes_written + 4096 * (p.file_ops + p.files_created) + DIRTY_SLACK_BYTES;
    (rise <= most).then_some(rise)
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
    let daemon_cpu = daemon_cpu_nanos(rep);
    let mut trace: Option<TraceFacts> = None;
    let mut offcpu: Option<crate::model::trace::OffCpuBreakdown> = None;
    for p in &timed {
        if let Some(o) = p.trace.as_ref().and_then(|t| t.offcpu.as_ref()) {
            offcpu.get_or_insert_with(Default::default).add(o);
        }
        // A summary with no devices holds only the off-CPU account (`--offcpu` alone).
        if let Some(t) = p.trace.as_ref().filter(|t| !t.devices.is_empty()) {
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
            .filter(|d| !d.busy_overcounted)
            .and_then(|d| ratio(d.busy_ms * 1_000_000, rep.wall_nanos)),
        device,
        cpu_pct_per_thread: rep.cpu_pct_per_thread,
        sys_share: if cpu > 0 { rep.cpu_sys_nanos as f64 / cpu as f64 } else { 0.0 },
        cpu_bound: rep.cpu_pct_per_thread >= CPU_BOUND_PCT,
        sys_nanos_per_op: if ops > 0 {
            (rep.cpu_sys_nanos + daemon_cpu.unwrap_or(0)) as f64 / ops as f64
        } else {
            0.0
        },
        daemon_cpu_nanos: daemon_cpu,
        time: Some(TimeSplit::of(&rep.phases, threads)).filter(|t| t.thread_nanos > 0),
        sync_share: if rep.wall_nanos > 0 {
            sync as f64 / (rep.wall_nanos as f64 * threads.max(1) as f64)
        } else {
            0.0
        },
        dirty_after_bytes: last.and_then(|p| phase_dirty(p)),
        daemon_rss_bytes: last.and_then(|p| p.memory.and_then(|m| m.after.daemon_rss_bytes)),
        daemon_cpu_share: daemon_cpu
            .filter(|_| rep.wall_nanos > 0)
            .map(|c| c as f64 / rep.wall_nanos as f64),
        extents: rep.extents.clone(),
        trace,
        offcpu,
        cache_not_met: timed
            .iter()
            .any(|p| p.cache.required == crate::model::job::CacheReq::Cached && !p.cache.met),
        stalls: timed.iter().filter_map(|p| p.series.as_ref()?.stall_summary()).reduce(|a, b| {
            crate::model::series::Stalls {
                count: a.count + b.count,
                longest_nanos: a.longest_nanos.max(b.longest_nanos),
                total_nanos: a.total_nanos + b.total_nanos,
            }
        }),
        dirty_cliff: timed.iter().find_map(|p| p.series.as_ref()?.dirty_cliff()),
        // A shared device's requests are everyone's: then the host's writeback bytes.
        writeback_bursts: timed.iter().find_map(|p| {
            let own = p.device.as_ref().is_some_and(|d| !d.shared);
            p.series.as_ref()?.writeback_bursts(own)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory::{MemDelta, MemSample};
    use crate::model::result::PhaseResult;

    fn lat(op: OpKind, count: u64, mean_nanos: f64) -> crate::model::result::OpLatency {
        crate::model::result::OpLatency {
            op,
            count,
            mean_nanos,
            min_nanos: 0,
            p50_nanos: 0,
            p90_nanos: 0,
            p99_nanos: 0,
            p999_nanos: 0,
            max_nanos: 0,
            histogram_b64: String::new(),
        }
    }

    #[test]
    fn time_split_from_the_latency_of_each_kind() {
        let ms = 1_000_000u64;
        // 2 threads × 100 ms: 50 ms in writes, 120 ms in fsync, 10 ms in open/close.
        let phase = |sync_writes: bool| PhaseResult {
            timed: true,
            threads: 2,
            wall_nanos: 100 * ms,
            cpu_sys_nanos: 30 * ms,
            cpu_user_nanos: 10 * ms,
            sync_writes,
            latency: vec![
                lat(OpKind::Write, 100, 500_000.0),
                lat(OpKind::Fsync, 4, 30_000_000.0),
                lat(OpKind::Open, 2, 4_000_000.0),
                lat(OpKind::Close, 2, 1_000_000.0),
            ],
            ..Default::default()
        };
        let set_up = PhaseResult { timed: false, wall_nanos: 900 * ms, ..phase(false) };
        let t = TimeSplit::of(&[set_up.clone(), phase(false)], 2);
        assert_eq!(
            (t.thread_nanos, t.data_nanos, t.sync_nanos, t.meta_nanos, t.cpu_nanos),
            (200 * ms, 50 * ms, 120 * ms, 10 * ms, 40 * ms)
        );
        assert_eq!(t.other_nanos(), 20 * ms);
        assert_eq!(t.off_cpu_nanos(), 160 * ms);
        assert_eq!(
            t.words(),
            "syncs 60%, read/write 25%, elsewhere 10%, open/close/metadata 5%; off CPU 80%"
        );
        // O_DSYNC: every write waits for the device, its time is sync time.
        let t = TimeSplit::of(&[phase(true)], 2);
        assert_eq!((t.data_nanos, t.sync_nanos), (0, 170 * ms));
        // Queued reads overlap (depth 8): 400 ms of latency in 200 ms of thread time fill it,
        // no share above 100%.
        let mut q = phase(false);
        q.latency = vec![lat(OpKind::Read, 800, 500_000.0)];
        let t = TimeSplit::of(&[q], 2);
        assert_eq!((t.data_nanos, t.other_nanos()), (200 * ms, 0));
    }

    #[test]
    fn a_fuse_daemons_cpu_is_the_filesystems_cpu() {
        use crate::model::memory::{MemDelta, MemSample};
        let ms = 1_000_000u64;
        let cpu = |n: u64| MemSample { daemon_cpu_nanos: Some(n), ..Default::default() };
        let rep = RepResult {
            wall_nanos: 1000 * ms,
            data_ops: 1000,
            cpu_sys_nanos: 10 * ms,
            phases: vec![PhaseResult {
                timed: true,
                threads: 1,
                wall_nanos: 1000 * ms,
                memory: Some(MemDelta { before: cpu(5000 * ms), after: cpu(5470 * ms) }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let f = of(&rep, 1);
        assert_eq!(f.daemon_cpu_nanos, Some(470 * ms));
        assert_eq!(f.daemon_cpu_share, Some(0.47));
        // (10 ms of the threads' system CPU + 470 ms of the daemon's) / 1000 operations.
        assert_eq!(f.sys_nanos_per_op, 480_000.0);
        // No daemon: the threads' system CPU alone.
        let plain = RepResult {
            phases: vec![PhaseResult { memory: None, ..rep.phases[0].clone() }],
            ..rep
        };
        assert_eq!(
            (of(&plain, 1).daemon_cpu_nanos, of(&plain, 1).sys_nanos_per_op),
            (None, 10_000.0)
        );
    }

    #[test]
    fn off_cpu_reasons_add_over_timed_phases_without_a_block_trace() {
        use crate::model::trace::{OffCpuBreakdown, OffCpuReason, TraceSummary};
        let r = |reason: &str, nanos| OffCpuReason { reason: reason.into(), nanos, switches: 1 };
        let phase = |timed: bool, reasons: Vec<OffCpuReason>| {
            let total_nanos = reasons.iter().map(|r| r.nanos).sum();
            let o = OffCpuBreakdown { switches: 1, total_nanos, reasons, events_lost: 0 };
            // `--offcpu` alone: a summary with no devices, only the off-CPU account.
            let t = TraceSummary { offcpu: Some(o), ..Default::default() };
            PhaseResult { timed, trace: Some(t), ..Default::default() }
        };
        let rep = RepResult {
            phases: vec![
                phase(false, vec![r("lock", 900)]),
                phase(true, vec![r("waiting on the journal", 100), r("lock", 50)]),
                phase(true, vec![r("throttled in balance_dirty_pages", 250)]),
            ],
            ..Default::default()
        };
        let f = of(&rep, 1);
        let o = f.offcpu.clone().expect("off-CPU facts");
        assert_eq!(o.total_nanos, 400);
        assert_eq!(
            o.words(),
            "throttled in balance_dirty_pages 62%, waiting on the journal 25%, lock 12%"
        );
        // No block trace was taken: no block-trace facts.
        assert_eq!(f.trace, None);
        // A run stored before the field existed reads.
        let mut v = serde_json::to_value(&f).expect("json");
        v.as_object_mut().expect("object").remove("offcpu");
        let back: Facts = serde_json::from_value(v).expect("old facts read");
        assert_eq!(back.offcpu, None);
    }

    #[test]
    fn a_cached_phase_whose_cache_was_not_met_is_flagged() {
        use crate::model::job::CacheReq;
        use crate::model::result::CacheCheck;
        let phase = |required: CacheReq, met: bool, timed: bool| PhaseResult {
            timed,
            cache: CacheCheck { required, resident_fraction: 0.9565, method: String::new(), met },
            ..Default::default()
        };
        let rep = |phases| RepResult { phases, ..Default::default() };
        assert!(of(&rep(vec![phase(CacheReq::Cached, false, true)]), 1).cache_not_met);
        assert!(!of(&rep(vec![phase(CacheReq::Cached, true, true)]), 1).cache_not_met);
        // An untimed phase's, or an uncached phase's, does not concern device reads of a cache.
        assert!(!of(&rep(vec![phase(CacheReq::Cached, false, false)]), 1).cache_not_met);
        assert!(!of(&rep(vec![phase(CacheReq::Uncached, false, true)]), 1).cache_not_met);
    }

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
        // A rise of 239 MiB during a 4 MiB phase is another process's (the counter is
        // machine-wide): not this phase's, so not a fact.
        let rep = RepResult { phases: vec![phase(mib, 240 * mib)], ..Default::default() };
        assert_eq!(of(&rep, 1).dirty_after_bytes, None);
    }

    #[test]
    fn writeback_bursts_come_from_the_targets_own_device_else_the_hosts_writeback() {
        use crate::model::result::DeviceDelta;
        use crate::model::series::PhaseSeries;
        let n = 200;
        // The device writes every 5 s (50 points of 100 ms); the host's writeback is steady.
        let series = PhaseSeries {
            interval_nanos: 100_000_000,
            write_bytes: vec![1 << 20; n],
            ops: vec![1; n],
            device_write_requests: (0..n).map(|i| if i % 50 < 3 { 900 } else { 0 }).collect(),
            writeback_bytes: vec![8 << 20; n],
            ..PhaseSeries::default()
        };
        let phase = |shared| PhaseResult {
            timed: true,
            series: Some(series.clone()),
            device: Some(DeviceDelta { shared, ..Default::default() }),
            ..Default::default()
        };
        let rep = |shared| RepResult { phases: vec![phase(shared)], ..Default::default() };
        let b = of(&rep(false), 1).writeback_bursts.expect("bursts in the device's writes");
        assert!(b.device && (b.period_secs - 5.0).abs() < 0.01 && b.bursts == 4, "{b:?}");
        // A shared device's requests are not the target's: the host's steady writeback says no.
        assert_eq!(of(&rep(true), 1).writeback_bursts, None);
    }
}
