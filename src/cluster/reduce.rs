//! Rank 0 turns every rank's results into one.
//!
//! The aggregate is computed as IOR computes it (IOR's `GetTimeStamp`/`ReduceIterResults`):
//! bytes and operations summed over ranks, time from the earliest start of any rank to the
//! latest end of any rank on the common clock, figure = total / time. Per-rank figures (each
//! rank's bytes over its own time) are kept with their spread. Latency histograms are merged
//! (HdrHistogram addition is exact: the merged percentiles are those of all operations). CPU is
//! summed, and kept per host; device counters and memory (page cache, dirty, writeback) are
//! observations of a host, not of a rank: they are taken from the first rank of each host
//! (ranks on one host see the same devices and memory), kept per host and summed over hosts.
//!
//! Stonewalling (IOR `-D`): the ranks stopped at the stonewall with different amounts of work
//! done. The figure counts only the work every rank completed (the smallest rank's bytes times
//! the number of ranks) over the whole span, so a fast rank that did more does not inflate it;
//! the work really done is in `total_bytes`.

use super::hooks::RecordedWindow;
use crate::engine::runner::STONEWALLED;
use crate::model::cluster::{
    ClusterRep, HostPhase, HostShare, PhaseWindow, RankFigure, RankInfo, Spread,
};
use crate::model::job::OpKind;
use crate::model::memory::{MemDelta, MemSample};
use crate::model::result::{
    DeviceDelta, OpLatency, PhaseResult, RepResult, RunReport, TestResult, TestStatus,
};
use crate::stats::latency;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one rank sends to rank 0 at the end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankReport {
    /// Who.
    pub info: RankInfo,
    /// Its own runs, one per target, as a single-process run would report them.
    pub runs: Vec<RunReport>,
    /// Its timed-phase windows on the common clock.
    pub windows: Vec<RecordedWindow>,
}

/// Merge the ranks' results on target `target` (ranks in rank order, rank 0 first) into one
/// run's tests. `shared`: the ranks shared their files (`--mpi-shared`), so rank 0's extent
/// map is the files' map.
pub fn reduce(ranks: &[RankReport], target: usize, shared: bool) -> Vec<TestResult> {
    let Some(first) = ranks.first().and_then(|r| r.runs.get(target)) else { return Vec::new() };
    let label = first.target.label.as_str();
    (0..first.tests.len())
        .map(|i| {
            let parts: Vec<(&RankReport, &TestResult)> = ranks
                .iter()
                .filter_map(|r| r.runs.get(target).and_then(|run| run.tests.get(i)).map(|t| (r, t)))
                .collect();
            let mut t = reduce_test(&parts, label);
            if shared {
                for (k, rep) in t.reps.iter_mut().enumerate() {
                    rep.extents = parts[0].1.reps.get(k).and_then(|r| r.extents.clone());
                }
            }
            t
        })
        .collect()
}

fn reduce_test(parts: &[(&RankReport, &TestResult)], label: &str) -> TestResult {
    let base = parts[0].1;
    let mut out = TestResult {
        id: base.id.clone(),
        name: base.name.clone(),
        description: base.description.clone(),
        threads: parts.iter().map(|(_, t)| t.threads).sum(),
        status: TestStatus::Ok,
        reps: Vec::new(),
        complete_reps: 0,
        summary: None,
        warnings: Vec::new(),
        figure: base.figure,
    };
    // The worst status wins; a failure names its rank unless the agreement already did.
    for (r, t) in parts {
        match &t.status {
            TestStatus::Failed { reason } if !matches!(out.status, TestStatus::Failed { .. }) => {
                let reason = if reason.contains("rank ") {
                    reason.clone()
                } else {
                    format!("rank {} (host {}): {reason}", r.info.rank, r.info.host).into()
                };
                out.status = TestStatus::Failed { reason };
            }
            TestStatus::Interrupted if out.status == TestStatus::Ok => {
                out.status = TestStatus::Interrupted
            }
            TestStatus::Skipped { reason } if out.status == TestStatus::Ok => {
                out.status = TestStatus::Skipped { reason: reason.clone() }
            }
            _ => {}
        }
        for w in &t.warnings {
            if !out.warnings.contains(w) {
                out.warnings.push(w.clone());
            }
        }
    }
    let nreps = parts.iter().map(|(_, t)| t.reps.len()).min().unwrap_or(0);
    for k in 0..nreps {
        out.reps.push(reduce_rep(parts, label, k));
    }
    out.complete_reps = out.reps.iter().filter(|r| r.complete).count() as u32;
    out.finalize();
    if out.reps.iter().any(|r| r.cluster.as_ref().is_some_and(|c| c.stonewalled)) {
        out.warnings.push(crate::model::result::Warning::Stonewalled);
    }
    out
}

fn windows_of<'a>(r: &'a RankReport, label: &str, test: &str, rep: u32) -> Vec<&'a PhaseWindow> {
    r.windows
        .iter()
        .filter(|w| w.target == label && w.test == test && w.rep == rep)
        .map(|w| &w.window)
        .collect()
}

fn reduce_rep(parts: &[(&RankReport, &TestResult)], label: &str, k: usize) -> RepResult {
    let test_id = &parts[0].1.id;
    let reps: Vec<&RepResult> = parts.iter().map(|(_, t)| &t.reps[k]).collect();
    let nphases = reps.iter().map(|r| r.phases.len()).min().unwrap_or(0);
    let first_of_host = first_rank_per_host(parts);
    let fileset = reps.iter().any(|r| r.file_ops > 0);
    let mut phases = Vec::with_capacity(nphases);
    let mut stonewalled = false;
    for j in 0..nphases {
        let ps: Vec<&PhaseResult> = reps.iter().map(|r| &r.phases[j]).collect();
        let mut p = ps[0].clone();
        p.threads = ps.iter().map(|x| x.threads).sum();
        p.bytes_read = ps.iter().map(|x| x.bytes_read).sum();
        p.bytes_written = ps.iter().map(|x| x.bytes_written).sum();
        p.data_ops = ps.iter().map(|x| x.data_ops).sum();
        p.cpu_user_nanos = ps.iter().map(|x| x.cpu_user_nanos).sum();
        p.cpu_sys_nanos = ps.iter().map(|x| x.cpu_sys_nanos).sum();
        p.sync_nanos = ps.iter().map(|x| x.sync_nanos).sum();
        p.file_ops = ps.iter().map(|x| x.file_ops).sum();
        p.skipped_ops = ps.iter().map(|x| x.skipped_ops).sum();
        p.files_created = ps.iter().map(|x| x.files_created).sum();
        p.latency = merge_latency(ps.iter().map(|x| &x.latency[..]));
        // Submission and completion latency apart, and the depth counts, of every rank.
        p.submission = Vec::new();
        p.depths = Default::default();
        for x in &ps {
            crate::model::submit::merge_splits(&mut p.submission, &x.submission);
            p.depths.add(&x.depths);
        }
        // Each thread's own figures are a local run's (the first rank's alone would mislead).
        p.per_thread.clear();
        p.cache.met = ps.iter().all(|x| x.cache.met);
        p.cache.resident_fraction =
            ps.iter().map(|x| x.cache.resident_fraction).sum::<f64>() / ps.len() as f64;
        let hosts = || ps.iter().enumerate().filter(|(i, _)| first_of_host[*i]).map(|(_, x)| *x);
        p.device = sum_devices(hosts());
        p.memory = sum_memory(hosts());
        if ps.iter().any(|x| x.ended_by.as_deref() == Some(STONEWALLED)) {
            p.ended_by = Some(STONEWALLED.into());
            stonewalled |= p.timed;
        }
        // Time: the earliest start to the latest end over all ranks, on the common clock.
        let win: Vec<&PhaseWindow> = parts
            .iter()
            .filter_map(|(r, _)| {
                windows_of(r, label, test_id, k as u32).into_iter().find(|w| w.phase == p.name)
            })
            .collect();
        if win.len() == parts.len() {
            let start = win.iter().map(|w| w.start_s).fold(f64::INFINITY, f64::min);
            let end = win.iter().map(|w| w.end_s).fold(f64::NEG_INFINITY, f64::max);
            p.wall_nanos = ((end - start).max(0.0) * 1e9).round() as u64;
            // The ranks' series on the common clock, each shifted by its release.
            let series: Vec<(&crate::model::series::PhaseSeries, u64, bool)> = ps
                .iter()
                .zip(&win)
                .enumerate()
                .filter_map(|(i, (x, w))| {
                    let off = ((w.start_s - start).max(0.0) * 1e9) as u64;
                    Some((x.series.as_ref()?, off, first_of_host[i]))
                })
                .collect();
            p.series = crate::model::series::merge_ranks(&series);
        } else {
            p.wall_nanos = ps.iter().map(|x| x.wall_nanos).max().unwrap_or(0);
        }
        // A paced phase's rate over every rank: asked and achieved add up.
        let rates: Vec<_> =
            ps.iter().filter_map(|x| x.load.as_ref().and_then(|l| l.rate)).collect();
        if let (Some(l), false) = (p.load.as_mut(), rates.is_empty()) {
            l.rate = Some(crate::model::series::RateOutcome {
                asked_ops_per_s: rates.iter().map(|r| r.asked_ops_per_s).sum(),
                achieved_ops_per_s: rates.iter().map(|r| r.achieved_ops_per_s).sum(),
            });
        }
        phases.push(p);
    }
    let timed: Vec<&PhaseResult> = phases.iter().filter(|p| p.timed).collect();
    let wall_nanos: u64 = timed.iter().map(|p| p.wall_nanos).sum();
    let total_bytes: u64 = timed.iter().map(|p| p.bytes_read + p.bytes_written).sum();
    let data_ops: u64 = timed.iter().map(|p| p.data_ops).sum();
    let file_ops: u64 = timed.iter().map(|p| p.file_ops).sum();
    let cpu_user_nanos: u64 = timed.iter().map(|p| p.cpu_user_nanos).sum();
    let cpu_sys_nanos: u64 = timed.iter().map(|p| p.cpu_sys_nanos).sum();
    let threads: u32 = parts.iter().map(|(_, t)| t.threads).sum();
    let latency = merge_latency(timed.iter().map(|p| &p.latency[..]));

    let per_rank: Vec<RankFigure> = parts
        .iter()
        .zip(&reps)
        .map(|((r, _), rep)| {
            let ops = if fileset { rep.file_ops } else { rep.data_ops };
            let secs = rep.wall_nanos as f64 / 1e9;
            let per = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
            RankFigure {
                rank: r.info.rank,
                host: r.info.host.clone(),
                bytes: rep.bytes,
                ops,
                windows: windows_of(r, label, test_id, k as u32).into_iter().cloned().collect(),
                wall_nanos: rep.wall_nanos,
                mib_per_s: per(rep.bytes as f64 / (1u64 << 20) as f64),
                ops_per_s: per(ops as f64),
                cpu_nanos: rep.cpu_user_nanos + rep.cpu_sys_nanos,
            }
        })
        .collect();
    let n = per_rank.len() as u64;
    let ops_total = if fileset { file_ops } else { data_ops };
    // With a stonewall, the figure counts the work every rank completed.
    let (bytes, ops) = if stonewalled {
        (
            per_rank.iter().map(|r| r.bytes).min().unwrap_or(0) * n,
            per_rank.iter().map(|r| r.ops).min().unwrap_or(0) * n,
        )
    } else {
        (total_bytes, ops_total)
    };
    let secs = wall_nanos as f64 / 1e9;
    let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    let spread = spread(&per_rank, fileset);
    let per_host = per_host(parts, &reps);
    RepResult {
        complete: reps.iter().all(|r| r.complete),
        wall_nanos,
        bytes,
        data_ops: if fileset { data_ops } else { ops },
        mib_per_s: per_sec(bytes as f64 / (1u64 << 20) as f64),
        ops_per_s: per_sec(ops as f64),
        cpu_user_nanos,
        cpu_sys_nanos,
        cpu_pct_per_thread: if wall_nanos > 0 && threads > 0 {
            100.0 * (cpu_user_nanos + cpu_sys_nanos) as f64 / (wall_nanos as f64 * threads as f64)
        } else {
            0.0
        },
        latency,
        phases,
        extents: None,
        compress_ratio: None,
        retried: 0,
        file_ops: if fileset { ops } else { 0 },
        figure: reps[0].figure,
        // Rank 0's own untimed work (each rank measures its own).
        untimed: reps[0].untimed,
        cluster: Some(ClusterRep {
            ranks: n as u32,
            per_rank,
            spread,
            per_host,
            stonewalled,
            total_bytes,
            total_ops: ops_total,
        }),
    }
}

fn first_rank_per_host(parts: &[(&RankReport, &TestResult)]) -> Vec<bool> {
    let mut seen = Vec::new();
    parts
        .iter()
        .map(|(r, _)| {
            if seen.contains(&&r.info.host) {
                false
            } else {
                seen.push(&r.info.host);
                true
            }
        })
        .collect()
}

fn sum_devices<'a>(ps: impl Iterator<Item = &'a PhaseResult>) -> Option<DeviceDelta> {
    let mut acc: Option<DeviceDelta> = None;
    for d in ps.filter_map(|p| p.device.as_ref()) {
        acc.get_or_insert_with(DeviceDelta::default).add(d);
    }
    acc
}

/// Memory of several hosts around a phase: each sample summed over the hosts (a daemon's RSS
/// and CPU too, when every host reports one).
fn sum_memory<'a>(ps: impl Iterator<Item = &'a PhaseResult>) -> Option<MemDelta> {
    fn add(a: &mut MemSample, b: &MemSample) {
        a.cached_bytes += b.cached_bytes;
        a.dirty_bytes += b.dirty_bytes;
        a.writeback_bytes += b.writeback_bytes;
        a.daemon_rss_bytes = a.daemon_rss_bytes.zip(b.daemon_rss_bytes).map(|(x, y)| x + y);
        a.daemon_cpu_nanos = a.daemon_cpu_nanos.zip(b.daemon_cpu_nanos).map(|(x, y)| x + y);
    }
    let mut acc: Option<MemDelta> = None;
    for m in ps.filter_map(|p| p.memory.as_ref()) {
        match &mut acc {
            None => acc = Some(*m),
            Some(a) => {
                add(&mut a.before, &m.before);
                add(&mut a.after, &m.after);
            }
        }
    }
    acc
}

/// Merge latency summaries of the same op kinds by adding their histograms.
pub fn merge_latency<'a>(sets: impl Iterator<Item = &'a [OpLatency]>) -> Vec<OpLatency> {
    let mut by_op: BTreeMap<OpKind, hdrhistogram::Histogram<u64>> = BTreeMap::new();
    for set in sets {
        for l in set {
            let Some(h) = latency::decode(&l.histogram_b64) else { continue };
            let acc = by_op.entry(l.op).or_insert_with(latency::new_histogram);
            // Same bounds everywhere (new_histogram); a foreign histogram that does not fit is
            // left out rather than corrupting the merge.
            let _ = acc.add(&h);
        }
    }
    by_op.iter().map(|(op, h)| crate::model::latency::summarize(*op, h)).collect()
}

fn spread(per_rank: &[RankFigure], fileset: bool) -> Spread {
    let fig = |r: &RankFigure| if fileset { r.ops_per_s } else { r.mib_per_s };
    let mut v: Vec<&RankFigure> = per_rank.iter().collect();
    v.sort_by(|a, b| fig(a).total_cmp(&fig(b)));
    let Some(slowest) = v.first() else { return Spread::default() };
    let vals: Vec<f64> = v.iter().map(|r| fig(r)).collect();
    let m = vals.len();
    let median = if m % 2 == 1 { vals[m / 2] } else { (vals[m / 2 - 1] + vals[m / 2]) / 2.0 };
    Spread {
        min: vals[0],
        median,
        max: vals[m - 1],
        slowest_rank: slowest.rank,
        slowest_host: slowest.host.clone(),
    }
}

fn per_host(parts: &[(&RankReport, &TestResult)], reps: &[&RepResult]) -> Vec<HostShare> {
    let mut hosts: Vec<HostShare> = Vec::new();
    for ((r, _), rep) in parts.iter().zip(reps) {
        let first = !hosts.iter().any(|h| h.host == r.info.host);
        if first {
            hosts.push(HostShare { host: r.info.host.clone(), ..Default::default() });
        }
        let Some(h) = hosts.iter_mut().find(|h| h.host == r.info.host) else { continue };
        h.ranks.push(r.info.rank);
        h.bytes += rep.bytes;
        h.cpu_user_nanos += rep.cpu_user_nanos;
        h.cpu_sys_nanos += rep.cpu_sys_nanos;
        if first {
            h.device = sum_devices(rep.phases.iter().filter(|p| p.timed));
            h.phases = rep
                .phases
                .iter()
                .map(|p| HostPhase {
                    phase: p.name.clone(),
                    timed: p.timed,
                    memory: p.memory,
                    device: p.device.clone(),
                })
                .collect();
        }
    }
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::latency::OpHistograms;

    fn phase(bytes: u64, wall: u64, lat: &[u64], ended_by: Option<&str>) -> PhaseResult {
        let mut h = OpHistograms::default();
        for l in lat {
            h.record(OpKind::Write, *l);
        }
        PhaseResult {
            name: "write".into(),
            timed: true,
            threads: 1,
            wall_nanos: wall,
            bytes_written: bytes,
            data_ops: bytes / 4096,
            cpu_sys_nanos: 1000,
            latency: h.summaries(),
            ended_by: ended_by.map(String::from),
            memory: Some(MemDelta {
                before: MemSample { dirty_bytes: 1 << 20, ..Default::default() },
                after: MemSample { dirty_bytes: bytes, ..Default::default() },
            }),
            ..Default::default()
        }
    }

    fn rank(r: u32, host: &str, p: PhaseResult, start: f64, end: f64) -> RankReport {
        let secs = p.wall_nanos as f64 / 1e9;
        let rep = RepResult {
            complete: true,
            wall_nanos: p.wall_nanos,
            bytes: p.bytes_written,
            data_ops: p.data_ops,
            mib_per_s: p.bytes_written as f64 / (1u64 << 20) as f64 / secs,
            cpu_sys_nanos: p.cpu_sys_nanos,
            latency: p.latency.clone(),
            phases: vec![p],
            ..Default::default()
        };
        let test = TestResult {
            id: "1".into(),
            name: "w".into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            reps: vec![rep],
            complete_reps: 1,
            summary: None,
            warnings: Vec::new(),
            figure: Default::default(),
        };
        RankReport {
            info: RankInfo { rank: r, host: host.into(), ..Default::default() },
            runs: vec![RunReport {
                fsbench_version: String::new(),
                started_unix_s: 0,
                host: Default::default(),
                target: Default::default(),
                suite: "s".into(),
                scale: "1".into(),
                repeat: 1,
                tests: vec![test],
                interrupted: false,
                cluster: None,
                time: None,
            }],
            windows: vec![RecordedWindow {
                target: String::new(),
                test: "1".into(),
                rep: 0,
                window: PhaseWindow { phase: "write".into(), start_s: start, end_s: end },
            }],
        }
    }

    #[test]
    fn aggregate_is_total_over_first_start_to_last_end() {
        let ranks = vec![
            rank(0, "a", phase(8 << 20, 1_000_000_000, &[100, 200], None), 10.0, 11.0),
            rank(1, "a", phase(4 << 20, 2_000_000_000, &[300], None), 10.5, 12.5),
            rank(2, "b", phase(4 << 20, 1_000_000_000, &[400], None), 10.2, 11.2),
        ];
        let t = &reduce(&ranks, 0, false)[0];
        let r = &t.reps[0];
        assert_eq!(r.bytes, 16 << 20);
        assert_eq!(r.wall_nanos, 2_500_000_000);
        assert!((r.mib_per_s - 16.0 / 2.5).abs() < 1e-9);
        assert_eq!(t.threads, 3);
        let w = r.latency_of(OpKind::Write).unwrap();
        assert_eq!(w.count, 4);
        assert!(w.max_nanos >= 400 && w.min_nanos <= 100);
        let c = r.cluster.as_ref().unwrap();
        assert_eq!(c.per_rank.iter().map(|x| x.bytes).sum::<u64>(), r.bytes);
        assert_eq!(c.spread.slowest_rank, 1);
        assert!((c.spread.min - 2.0).abs() < 1e-9 && (c.spread.max - 8.0).abs() < 1e-9);
        assert!((c.spread.median - 4.0).abs() < 1e-9);
        assert_eq!(c.per_host.len(), 2);
        assert_eq!(c.per_host[0].ranks, vec![0, 1]);
        assert_eq!(c.per_host[0].bytes, 12 << 20);
        assert_eq!(r.cpu_sys_nanos, 3000);
        assert!(!c.stonewalled);
        // Memory is a host's: read from the first rank of each host, kept per host, summed
        // over hosts in the aggregate (rank 1 shares host a's memory and is not counted again).
        let dirty = |h: &HostShare| h.phases[0].memory.unwrap().after.dirty_bytes;
        assert_eq!((dirty(&c.per_host[0]), dirty(&c.per_host[1])), (8 << 20, 4 << 20));
        assert_eq!(c.per_host[0].phases[0].phase, "write");
        let m = r.phases[0].memory.unwrap();
        assert_eq!((m.before.dirty_bytes, m.after.dirty_bytes), (2 << 20, 12 << 20));
    }

    /// Every rank's submission latencies and depth counts are in the merged phase, not the
    /// first rank's alone.
    #[test]
    fn split_latency_and_depth_counts_add_up_over_ranks() {
        use crate::model::submit::{DepthCounts, Moments, SplitLatency};
        let with = |n: u64, mean: f64| {
            let mut p = phase(4 << 20, 1_000_000_000, &[100], None);
            let mut clat = p.latency[0].clone();
            clat.count = n;
            p.submission = vec![SplitLatency {
                op: OpKind::Write,
                slat: Moments {
                    count: n,
                    min_nanos: 5,
                    max_nanos: 50,
                    mean_nanos: mean,
                    stddev_nanos: 0.0,
                },
                clat,
            }];
            p.depths = DepthCounts { level: [0, 0, 0, n, 0, 0, 0], ..Default::default() };
            p
        };
        let ranks =
            vec![rank(0, "a", with(1, 10.0), 10.0, 11.0), rank(1, "b", with(3, 30.0), 10.0, 11.0)];
        let t = &reduce(&ranks, 0, false)[0];
        let p = &t.reps[0].phases[0];
        assert_eq!(p.submission.len(), 1);
        assert_eq!(p.submission[0].slat.count, 4);
        assert!((p.submission[0].slat.mean_nanos - 25.0).abs() < 1e-9);
        assert_eq!(p.depths.level[3], 4);
    }

    #[test]
    fn stonewalled_figure_counts_common_work() {
        let ranks = vec![
            rank(0, "a", phase(8 << 20, 1_000_000_000, &[100], Some(STONEWALLED)), 0.0, 1.0),
            rank(1, "a", phase(2 << 20, 1_000_000_000, &[100], Some(STONEWALLED)), 0.0, 1.0),
        ];
        let t = &reduce(&ranks, 0, false)[0];
        let r = &t.reps[0];
        let c = r.cluster.as_ref().unwrap();
        assert!(c.stonewalled);
        assert_eq!(c.total_bytes, 10 << 20);
        assert_eq!(r.bytes, 4 << 20);
        assert!((r.mib_per_s - 4.0).abs() < 1e-9);
        assert!(t.warnings.contains(&crate::model::result::Warning::Stonewalled));
    }

    #[test]
    fn a_failed_rank_is_named() {
        let mut ranks = vec![
            rank(0, "a", phase(1 << 20, 1, &[1], None), 0.0, 1.0),
            rank(1, "b", phase(1 << 20, 1, &[1], None), 0.0, 1.0),
        ];
        ranks[1].runs[0].tests[0].status = TestStatus::Failed { reason: "EIO".into() };
        let t = &reduce(&ranks, 0, false)[0];
        assert_eq!(t.status, TestStatus::Failed { reason: "rank 1 (host b): EIO".into() });
    }
}
