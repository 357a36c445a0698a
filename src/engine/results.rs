//! What the workers measured, as results: a phase's ([`phase_result`]), a repetition's
//! ([`rep_result`]), and a fileset test's figure ([`set_fileset_figure`]).

use super::phase::PhaseRun;
use super::worker::WorkerOutput;
use crate::model::job::{Amount, OpKind, PhaseDef, TestDef};
use crate::model::latency::OpHistograms;
use crate::model::result::{CacheCheck, PhaseResult, RepResult, RusageCounts, ThreadResult};
use std::time::Instant;

/// `ended_by` of a timed phase that the stonewall stopped.
pub const STONEWALLED: &str = "stonewall";
/// `ended_by` of a timed phase whose amount's time cap (`max_seconds`) came first.
pub const TIME_CAP: &str = "time cap (amount.seconds)";
/// `ended_by` of a phase another job's end stopped (fio's `exitall`).
pub const EXITALL: &str = "exitall";

/// One phase's result from its workers' outputs: sums over the workers, its wall time from the
/// first worker's release to the last one's end (or the end-of-phase syncfs), its latencies, and
/// why it ended when it was not its amount. The engine records what it ran with; the probe's
/// observations and the roles are added by the caller.
pub fn phase_result(
    test: &TestDef,
    phase: &PhaseDef,
    run: &PhaseRun,
    cache: CacheCheck,
) -> PhaseResult {
    let outs = &run.outs;
    let start = outs.iter().map(|o| o.start).min().unwrap_or_else(Instant::now);
    let end = outs.iter().map(|o| o.end).max().unwrap_or(start);
    let end = run.synced.as_ref().map(|s| s.0.max(end)).unwrap_or(end);
    let mut pr = PhaseResult {
        name: phase.name.clone(),
        timed: phase.timed,
        threads: test.threads,
        wall_nanos: (end - start).as_nanos() as u64,
        bytes_read: outs.iter().map(|o| o.bytes_read).sum(),
        bytes_written: outs.iter().map(|o| o.bytes_written).sum(),
        data_ops: outs.iter().map(|o| o.data_ops).sum(),
        cpu_user_nanos: outs.iter().map(|o| o.cpu.user_nanos).sum(),
        cpu_sys_nanos: outs.iter().map(|o| o.cpu.sys_nanos).sum(),
        rusage: rusage(outs.iter()),
        latency: run.hist.summaries(),
        cache,
        engine: test.engine.name().to_string(),
        iodepth: test.iodepth,
        direct: phase.open.direct,
        sync_writes: phase.open.dsync || phase.open.sync,
        uring: None,
        device: None,
        verify_nanos: outs.iter().map(|o| o.verify_nanos).sum(),
        verified_bytes: outs.iter().map(|o| o.verified_bytes).sum(),
        sync_nanos: outs.iter().map(|o| o.sync_nanos).sum::<u64>()
            + run.hist.0[OpKind::Syncfs.index()].max() * run.synced.is_some() as u64,
        memory: None,
        trace: None,
        file_ops: outs.iter().map(|o| o.file_ops).sum(),
        skipped_ops: outs.iter().map(|o| o.skipped_ops).sum(),
        files_created: outs.iter().map(|o| o.creates).sum(),
        fill_series: run.series.clone(),
        fill_range: run.fill_range,
        ended_by: ended_by(phase, run),
        passes: 1,
        roles: Vec::new(),
        series: run.over_time.clone(),
        load: load_outcome(phase, run, end - start),
        curve: None,
        per_thread: if phase.timed {
            per_thread(&outs.iter().collect::<Vec<_>>())
        } else {
            Vec::new()
        },
        submission: super::submit::SplitRecorder::of(outs.iter().map(|o| o.split.as_deref())),
        depths: depths(outs.iter()),
        op_log: None,
    };
    super::ioengine::record(&test.engine, &test.engine_options, &mut pr);
    pr
}

/// The workers' per-op records ([`super::oplog`]), taken out of their outputs (not copied):
/// one log, worker after worker; `None` when no worker kept one.
pub fn take_op_log(outs: &mut [WorkerOutput]) -> Option<crate::model::oplog::OpLog> {
    let mut logs = outs.iter_mut().filter_map(|o| o.op_log.take());
    let mut log = logs.next()?.into_log();
    logs.for_each(|r| log.append(r.into_log()));
    Some(log)
}

/// The workers' queue-depth counts added up.
pub fn depths<'o>(
    outs: impl Iterator<Item = &'o WorkerOutput>,
) -> crate::model::submit::DepthCounts {
    let mut c = crate::model::submit::DepthCounts::default();
    outs.for_each(|o| c.add(&o.depths));
    c
}

/// The workers' context switches and page faults added up.
pub fn rusage<'o>(outs: impl Iterator<Item = &'o WorkerOutput>) -> RusageCounts {
    let mut c = RusageCounts::default();
    outs.for_each(|o| c.add(&o.rusage));
    c
}

/// Each worker's own figures, in worker order, when there is more than one (fio reports each
/// of a job's `numjobs` clones as a job of its own). The workers' histograms are summarised
/// here, after the phase: nothing changes in the hot loop.
pub fn per_thread(outs: &[&WorkerOutput]) -> Vec<ThreadResult> {
    if outs.len() < 2 {
        return Vec::new();
    }
    outs.iter()
        .map(|o| ThreadResult {
            wall_nanos: o.end.saturating_duration_since(o.start).as_nanos() as u64,
            bytes_read: o.bytes_read,
            bytes_written: o.bytes_written,
            data_ops: o.data_ops,
            cpu_user_nanos: o.cpu.user_nanos,
            cpu_sys_nanos: o.cpu.sys_nanos,
            rusage: o.rusage,
            latency: o.hist.thread_latencies(),
            windows: o.windows.clone(),
            submission: o.split.as_ref().map(|r| r.thread_splits()).unwrap_or_default(),
            depths: o.depths,
        })
        .collect()
}

/// A paced phase's rate, asked against achieved (ops issued over the phase's wall time), and a
/// steady-state criterion's outcome; `None` for a closed-loop phase without one.
fn load_outcome(
    phase: &PhaseDef,
    run: &PhaseRun,
    wall: std::time::Duration,
) -> Option<crate::model::series::LoadOutcome> {
    let rate = phase.load.test_ops_per_s.filter(|_| phase.timed).map(|asked| {
        let ops: u64 = run.outs.iter().map(|o| o.paced_ops).sum();
        let secs = wall.as_secs_f64();
        let achieved = if secs > 0.0 { ops as f64 / secs } else { 0.0 };
        crate::model::series::RateOutcome { asked_ops_per_s: asked, achieved_ops_per_s: achieved }
    });
    let steady = run.steady.clone();
    (rate.is_some() || steady.is_some())
        .then_some(crate::model::series::LoadOutcome { rate, steady })
}

/// Why a fill phase ended: full, at its target, or out of free slots.
fn ended_by(phase: &PhaseDef, run: &PhaseRun) -> Option<String> {
    let outs = &run.outs;
    match phase.amount {
        Amount::Fill(_) if outs.iter().any(|o| o.enospc) => {
            Some("filesystem full (ENOSPC)".to_string())
        }
        Amount::Fill(_) if run.fill_reached => Some("fill target reached".to_string()),
        Amount::Fill(_) if outs.iter().all(|o| !o.interrupted && o.error.is_none()) => Some(
            "no free file slot: every slot holds a file; raise the fileset's count to fill further"
                .to_string(),
        ),
        _ => run.steady.as_ref().and_then(|s| s.held_at_secs.map(|_| s.words())),
    }
}

/// A repetition's result: its phases, and its figures over the timed ones.
pub fn rep_result(
    test: &TestDef,
    phases: Vec<PhaseResult>,
    timed_hist: &OpHistograms,
    complete: bool,
) -> RepResult {
    let timed: Vec<&PhaseResult> = phases.iter().filter(|p| p.timed).collect();
    let wall_nanos: u64 = timed.iter().map(|p| p.wall_nanos).sum();
    let bytes: u64 = timed.iter().map(|p| p.bytes_read + p.bytes_written).sum();
    let data_ops: u64 = timed.iter().map(|p| p.data_ops).sum();
    let cpu_user_nanos: u64 = timed.iter().map(|p| p.cpu_user_nanos).sum();
    let cpu_sys_nanos: u64 = timed.iter().map(|p| p.cpu_sys_nanos).sum();
    let secs = wall_nanos as f64 / 1e9;
    let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    RepResult {
        complete,
        wall_nanos,
        bytes,
        data_ops,
        mib_per_s: per_sec(bytes as f64 / (1u64 << 20) as f64),
        ops_per_s: per_sec(data_ops as f64),
        cpu_user_nanos,
        cpu_sys_nanos,
        cpu_pct_per_thread: if wall_nanos > 0 {
            100.0 * (cpu_user_nanos + cpu_sys_nanos) as f64
                / (wall_nanos as f64 * test.threads as f64)
        } else {
            0.0
        },
        latency: timed_hist.summaries(),
        phases,
        extents: None,
        file_ops: 0,
        cluster: None,
        compress_ratio: None,
        retried: 0,
        figure: Some(crate::model::result::Figure::of_test(test)),
        untimed: None,
    }
}

/// A fileset's figure is its file operations per second.
pub fn set_fileset_figure(r: &mut RepResult) {
    r.file_ops = r.phases.iter().filter(|p| p.timed).map(|p| p.file_ops).sum();
    let secs = r.wall_nanos as f64 / 1e9;
    r.ops_per_s = if secs > 0.0 { r.file_ops as f64 / secs } else { 0.0 };
}

/// Add another pass of the same phase (`--min-time`) to `p`, whose latencies are `h`: figures
/// summed, latency histograms merged, device counters added when both have them.
pub fn add_pass(p: &mut PhaseResult, h: &mut OpHistograms, q: &PhaseResult, k: &OpHistograms) {
    p.add_pass(q);
    h.merge(k);
    p.latency = h.summaries();
    if let (Some(d), Some(e)) = (p.device.as_mut(), q.device.as_ref()) {
        d.add(e);
    }
}
