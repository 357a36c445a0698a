//! Hooks around each phase of a repetition: where a multi-client run (`crate::cluster`) puts
//! its barrier, its global clock and its agreement on the outcome. A single-process run uses
//! [`NoHooks`], whose methods do nothing.

use crate::workload::TestDef;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a phase (or the untimed set-up) ended on this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseOutcome {
    /// Done.
    Ok,
    /// Failed; the reason says how.
    Failed(String),
    /// Stopped by Ctrl-C / SIGTERM.
    Interrupted,
}

/// Called by the runner on every process of a run, in the same order on each: `before_phase`
/// and `after_phase` once for the set-up (phase name `setup`, only when the test has one) and
/// once for every phase, for as long as the outcome they agree on is [`PhaseOutcome::Ok`].
pub trait PhaseHooks: Send + Sync {
    /// Just before the phase's workers are released (after its cache precondition is made).
    /// An error abandons the repetition with that reason.
    fn before_phase(&self, _test: &TestDef, _rep: u32, _phase: &str) -> Result<(), String> {
        Ok(())
    }
    /// After the phase: `window` is when its first worker started and its last one ended (None
    /// for the set-up); `local` is this process's outcome. Returns the outcome every process
    /// goes on with (a multi-client run fails everywhere when one client failed).
    fn after_phase(
        &self,
        _test: &TestDef,
        _rep: u32,
        _phase: &str,
        _window: Option<(Instant, Instant)>,
        local: PhaseOutcome,
    ) -> PhaseOutcome {
        local
    }
    /// Stonewalling: stop each timed phase at the next operation boundary after this long,
    /// and count it as complete (IOR's `-D`).
    fn stonewall(&self) -> Option<Duration> {
        None
    }
    /// Several processes share the work directory: `Some((index, count))` for process
    /// `index` of `count`. A test's shared file is then one file for all processes, `count`
    /// times the size, each thread of each process taking its own region (IOR's shared-file
    /// mode); only process 0 prefills it. Files of one thread and filesets get the process's
    /// index in their names.
    fn share(&self) -> Option<(u32, u32)> {
        None
    }
}

/// Hooks that do nothing (a single-process run).
pub struct NoHooks;
impl PhaseHooks for NoHooks {}

/// The hooks of a run, carried in the engine options.
#[derive(Clone)]
pub struct Hooks(pub Arc<dyn PhaseHooks>);

impl Default for Hooks {
    fn default() -> Self {
        Hooks(Arc::new(NoHooks))
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hooks")
    }
}
