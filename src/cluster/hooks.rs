//! The suite driver's phase hooks ([`crate::driver::Hooks`]) for a multi-client run: a barrier
//! before each phase (so phases start together), each phase's window on the global clock, and
//! agreement after it (one rank failing fails it on every rank, named with its host, instead of
//! leaving the others waiting).

use super::clock::GlobalClock;
use super::{ClusterError, Comm};
use crate::driver::{Hooks, PhaseOutcome, PhasePoint};
use crate::engine::EngineError;
use crate::model::cluster::{ClockSync, PhaseWindow};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A phase window of this rank, keyed by target, test and repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedWindow {
    /// Label of the target.
    #[serde(default)]
    pub target: String,
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
    windows: Mutex<Vec<RecordedWindow>>,
}

#[derive(Serialize, Deserialize)]
enum Wire {
    Ok,
    /// The words of the failure, and whether it was bad input
    /// ([`crate::engine::EngineError::is_bad_input`]).
    Failed(String, bool),
    Interrupted,
}

impl ClusterHooks {
    /// Hooks over `comm` with this rank's measured `clock`.
    pub fn new(comm: Arc<dyn Comm>, clock: ClockSync) -> Self {
        ClusterHooks { comm, clock, windows: Mutex::new(Vec::new()) }
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
/// with its rank, host and pid) wins over an interrupt, which wins over success. The agreed
/// failure is a hook's ([`EngineError::Hook`]), bad input when every failing rank's was.
/// Collective.
pub fn agree(comm: &dyn Comm, local: PhaseOutcome) -> Result<PhaseOutcome, ClusterError> {
    let wire = match local {
        PhaseOutcome::Ok => Wire::Ok,
        PhaseOutcome::Failed(e) => Wire::Failed(e.to_string(), e.is_bad_input()),
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
        let mut bad_input = true;
        for (rank, bytes) in all.iter().enumerate() {
            let (host, pid, w): (String, u32, Wire) = serde_json::from_slice(bytes)
                .map_err(|e| ClusterError::Decode { rank: rank as u32, reason: e.to_string() })?;
            match w {
                Wire::Ok => {}
                Wire::Interrupted => interrupted = true,
                Wire::Failed(reason, bad) => {
                    failures.push(format!("rank {rank} (host {host}, pid {pid}): {reason}"));
                    bad_input &= bad;
                }
            }
        }
        verdict = if !failures.is_empty() {
            let n = failures.len();
            let mut msg = failures.join("; ");
            if n > 1 {
                msg = format!("{n} ranks failed: {msg}");
            }
            Wire::Failed(msg, bad_input)
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
        Wire::Failed(reason, bad_input) => {
            PhaseOutcome::Failed(EngineError::Hook { reason, bad_input })
        }
        Wire::Interrupted => PhaseOutcome::Interrupted,
    })
}

fn place(at: &PhasePoint<'_>) -> String {
    format!(
        "phase `{}` of test {} (repetition {}) on {}",
        at.phase,
        at.test.id,
        at.rep + 1,
        at.target
    )
}

impl Hooks for ClusterHooks {
    fn before_phase(&self, at: &PhasePoint<'_>) -> Result<(), EngineError> {
        let place = format!("the barrier before {}", place(at));
        self.start_together(&place).map_err(|e| EngineError::hook(e.to_string()))
    }

    fn after_phase(
        &self,
        at: &PhasePoint<'_>,
        window: Option<(Instant, Instant)>,
        local: PhaseOutcome,
    ) -> PhaseOutcome {
        if let Some((start, end)) = window {
            let clock = GlobalClock::new(&*self.comm, &self.clock);
            let w = RecordedWindow {
                target: at.target.to_string(),
                test: at.test.id.clone(),
                rep: at.rep,
                window: PhaseWindow {
                    phase: at.phase.to_string(),
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
            Err(e) => {
                PhaseOutcome::Failed(EngineError::hook(format!("rank {}: {e}", self.comm.rank())))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Single;

    fn test_def() -> crate::model::job::TestDef {
        let suite = crate::workload::load(
            &crate::workload::SuiteSource::Embedded("unit14".into()),
            &crate::workload::ResolveCtx { scale: "quick".parse().unwrap(), free_memory: 1 << 30 },
        )
        .unwrap();
        suite.tests[0].clone()
    }

    #[test]
    fn one_rank_agrees_with_itself_and_records_windows() {
        let h = ClusterHooks::new(Arc::new(Single::default()), ClockSync::default());
        let t = test_def();
        let at = PhasePoint { target: "/mnt", test: &t, rep: 0, phase: "write" };
        assert_eq!(h.before_phase(&at), Ok(()));
        let a = Instant::now();
        let b = a + Duration::from_millis(10);
        let full = EngineError::NoSpace { op: None, reason: "ENOSPC".into() };
        let o = h.after_phase(&at, Some((a, b)), PhaseOutcome::Failed(full));
        match o {
            PhaseOutcome::Failed(e) => {
                assert!(e.is_bad_input(), "the one failing rank's was bad input: {e:?}");
                let r = e.to_string();
                assert!(r.starts_with("rank 0 (host "), "{r}");
                assert!(r.ends_with("): ENOSPC"), "{r}");
            }
            other => panic!("{other:?}"),
        }
        let w = h.windows();
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].target.as_str(), w[0].window.phase.as_str()), ("/mnt", "write"));
        assert!((w[0].window.end_s - w[0].window.start_s - 0.010).abs() < 1e-6);
        let read = PhasePoint { phase: "read", ..at };
        assert_eq!(
            h.after_phase(&read, None, PhaseOutcome::Interrupted),
            PhaseOutcome::Interrupted
        );
    }
}
