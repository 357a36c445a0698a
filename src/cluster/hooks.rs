//! The engine's phase hooks for a multi-client run: a barrier before each phase (so phases
//! start together), each phase's window on the global clock, and agreement after it (one rank
//! failing fails it on every rank, named with its host, instead of leaving the others waiting).

use super::clock::GlobalClock;
use super::model::{ClockSync, PhaseWindow};
use super::{ClusterError, Comm};
use crate::engine::hooks::{PhaseHooks, PhaseOutcome};
use crate::workload::TestDef;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A phase window of this rank, keyed by test and repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedWindow {
    /// Test id.
    pub test: String,
    /// Repetition.
    pub rep: u32,
    /// The window.
    pub window: PhaseWindow,
}

/// How far ahead of the barrier rank 0 sets the common start of a phase.
pub const START_MARGIN: Duration = Duration::from_millis(50);

/// The hooks of one rank.
pub struct ClusterHooks {
    comm: Arc<dyn Comm>,
    clock: ClockSync,
    stonewall: Option<Duration>,
    shared: bool,
    windows: Mutex<Vec<RecordedWindow>>,
}

#[derive(Serialize, Deserialize)]
enum Wire {
    Ok,
    Failed(String),
    Interrupted,
}

impl ClusterHooks {
    /// Hooks over `comm` with this rank's measured `clock`; `shared`: all ranks work in one
    /// directory and share each test's shared file (`--mpi-shared`).
    pub fn new(
        comm: Arc<dyn Comm>,
        clock: ClockSync,
        stonewall: Option<Duration>,
        shared: bool,
    ) -> Self {
        ClusterHooks { comm, clock, stonewall, shared, windows: Mutex::new(Vec::new()) }
    }

    /// A barrier, then a start at one instant: leaving a barrier is not simultaneous (each rank
    /// must be scheduled to see it complete, and a rank that leaves first and starts its I/O
    /// takes the CPU from those still leaving; measured here: up to 0.45 s apart with 4 ranks on
    /// 2 cores). So rank 0 names a start time [`START_MARGIN`] ahead on the common clock and every
    /// rank sleeps until then.
    fn start_together(&self, at: &str) -> Result<(), ClusterError> {
        self.comm.barrier(at)?;
        if self.comm.size() == 1 {
            return Ok(());
        }
        let clock = GlobalClock::new(&*self.comm, &self.clock);
        let t = if self.comm.rank() == 0 { clock.now() + START_MARGIN.as_secs_f64() } else { 0.0 };
        let b = self.comm.broadcast(t.to_le_bytes().to_vec())?;
        let t = <[u8; 8]>::try_from(&b[..])
            .map(f64::from_le_bytes)
            .map_err(|_| ClusterError::Decode { rank: 0, reason: "start time".into() })?;
        clock.sleep_until(t);
        Ok(())
    }

    /// The windows recorded so far.
    pub fn windows(&self) -> Vec<RecordedWindow> {
        self.windows.lock().map(|w| w.clone()).unwrap_or_default()
    }
}

/// Every rank's `local` outcome, combined on rank 0 and sent back: a failure on any rank (named
/// with its rank, host and pid) wins over an interrupt, which wins over success. Collective.
pub fn agree(comm: &dyn Comm, local: PhaseOutcome) -> Result<PhaseOutcome, ClusterError> {
    let wire = match local {
        PhaseOutcome::Ok => Wire::Ok,
        PhaseOutcome::Failed(r) => Wire::Failed(r),
        PhaseOutcome::Interrupted => Wire::Interrupted,
    };
    let me = serde_json::to_vec(&(comm.host(), std::process::id(), wire))
        .map_err(|e| ClusterError::Mpi(e.to_string()))?;
    // Ranks that finished early wait here without spinning (a blocking gather busy-polls and
    // would take CPU from ranks still running their phase on the same host).
    comm.barrier("the agreement after a phase")?;
    let all = comm.gather(&me)?;
    let mut verdict = Wire::Ok;
    if comm.rank() == 0 {
        let mut interrupted = false;
        let mut failures = Vec::new();
        for (rank, bytes) in all.iter().enumerate() {
            let (host, pid, w): (String, u32, Wire) = serde_json::from_slice(bytes)
                .map_err(|e| ClusterError::Decode { rank: rank as u32, reason: e.to_string() })?;
            match w {
                Wire::Ok => {}
                Wire::Interrupted => interrupted = true,
                Wire::Failed(reason) => {
                    failures.push(format!("rank {rank} (host {host}, pid {pid}): {reason}"))
                }
            }
        }
        verdict = if !failures.is_empty() {
            let n = failures.len();
            let mut msg = failures.join("; ");
            if n > 1 {
                msg = format!("{n} ranks failed: {msg}");
            }
            Wire::Failed(msg)
        } else if interrupted {
            Wire::Interrupted
        } else {
            Wire::Ok
        };
    }
    let v = serde_json::to_vec(&verdict).map_err(|e| ClusterError::Mpi(e.to_string()))?;
    let v = comm.broadcast(v)?;
    let w: Wire = serde_json::from_slice(&v)
        .map_err(|e| ClusterError::Decode { rank: 0, reason: e.to_string() })?;
    Ok(match w {
        Wire::Ok => PhaseOutcome::Ok,
        Wire::Failed(r) => PhaseOutcome::Failed(r),
        Wire::Interrupted => PhaseOutcome::Interrupted,
    })
}

fn place(test: &TestDef, rep: u32, phase: &str) -> String {
    format!("phase `{phase}` of test {} (repetition {})", test.id, rep + 1)
}

impl PhaseHooks for ClusterHooks {
    fn before_phase(&self, test: &TestDef, rep: u32, phase: &str) -> Result<(), String> {
        let at = format!("the barrier before {}", place(test, rep, phase));
        self.start_together(&at).map_err(|e| e.to_string())
    }

    fn after_phase(
        &self,
        test: &TestDef,
        rep: u32,
        phase: &str,
        window: Option<(Instant, Instant)>,
        local: PhaseOutcome,
    ) -> PhaseOutcome {
        if let Some((start, end)) = window {
            let clock = GlobalClock::new(&*self.comm, &self.clock);
            let w = RecordedWindow {
                test: test.id.clone(),
                rep,
                window: PhaseWindow {
                    phase: phase.to_string(),
                    start_s: clock.at(start),
                    end_s: clock.at(end),
                },
            };
            if let Ok(mut v) = self.windows.lock() {
                v.push(w);
            }
        }
        match agree(&*self.comm, local) {
            Ok(o) => o,
            Err(ClusterError::Interrupted { .. }) => PhaseOutcome::Interrupted,
            Err(e) => PhaseOutcome::Failed(format!("rank {}: {e}", self.comm.rank())),
        }
    }

    fn stonewall(&self) -> Option<Duration> {
        self.stonewall
    }

    fn share(&self) -> Option<(u32, u32)> {
        self.shared.then(|| (self.comm.rank(), self.comm.size()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Single;

    fn test_def() -> TestDef {
        let suite = crate::workload::load(
            &crate::workload::SuiteSource::Embedded("unit14".into()),
            &crate::workload::ResolveCtx { scale: "quick".parse().unwrap(), free_memory: 1 << 30 },
        )
        .unwrap();
        suite.tests[0].clone()
    }

    #[test]
    fn one_rank_agrees_with_itself_and_records_windows() {
        let h = ClusterHooks::new(Arc::new(Single::default()), ClockSync::default(), None, false);
        let t = test_def();
        assert_eq!(h.before_phase(&t, 0, "write"), Ok(()));
        let a = Instant::now();
        let b = a + Duration::from_millis(10);
        let o = h.after_phase(&t, 0, "write", Some((a, b)), PhaseOutcome::Failed("ENOSPC".into()));
        match o {
            PhaseOutcome::Failed(r) => {
                assert!(r.starts_with("rank 0 (host "), "{r}");
                assert!(r.ends_with("): ENOSPC"), "{r}");
            }
            other => panic!("{other:?}"),
        }
        let w = h.windows();
        assert_eq!(w.len(), 1);
        assert!((w[0].window.end_s - w[0].window.start_s - 0.010).abs() < 1e-6);
        assert_eq!(
            h.after_phase(&t, 0, "read", None, PhaseOutcome::Interrupted),
            PhaseOutcome::Interrupted
        );
    }
}
