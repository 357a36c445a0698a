//! Hooks around each phase of a repetition: the one place where something outside the engine
//! acts at the edges of a timed phase. The suite driver ([`crate::driver::drive`]) hands them to
//! the engine for every unit of work; a multi-client run ([`crate::cluster::hooks`]) puts its
//! barrier, its global clock stamps and its agreement on the outcome there. A single-process
//! run uses [`NoHooks`], whose methods do nothing.

use crate::model::failure::EngineError;
use crate::model::job::TestDef;
use std::time::Instant;

/// How a phase (or the untimed set-up, or a repetition) ended on this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseOutcome {
    /// Done.
    Ok,
    /// Failed; the error says how (and whether it was bad input).
    Failed(EngineError),
    /// Stopped by Ctrl-C / SIGTERM.
    Interrupted,
}

/// One phase of one repetition, as the hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct PhasePoint<'a> {
    /// Label of the target.
    pub target: &'a str,
    /// The test.
    pub test: &'a TestDef,
    /// Repetition index.
    pub rep: u32,
    /// Phase name (`setup` for the test's untimed file preparation).
    pub phase: &'a str,
}

/// Called by the engine on every process of a run, in the same order on each: `before_phase`
/// and `after_phase` once for the set-up of each repetition (phase `setup`, also when there is
/// nothing to prepare: the processes agree their files are ready) and once for every phase,
/// for as long as the outcome they agree on is [`PhaseOutcome::Ok`].
pub trait Hooks: Sync {
    /// Just before the phase's workers are released (after its cache precondition is made).
    /// An error (a [`EngineError::Hook`]) abandons the repetition with that reason.
    fn before_phase(&self, _at: &PhasePoint<'_>) -> Result<(), EngineError> {
        Ok(())
    }
    /// After the phase: `window` is when its first worker started and its last one ended (None
    /// for the set-up); `local` is this process's outcome. Returns the outcome every process
    /// goes on with (a multi-client run fails everywhere when one client failed).
    fn after_phase(
        &self,
        _at: &PhasePoint<'_>,
        _window: Option<(Instant, Instant)>,
        local: PhaseOutcome,
    ) -> PhaseOutcome {
        local
    }
}

/// Hooks that do nothing (a single-process run).
pub struct NoHooks;
impl Hooks for NoHooks {}

/// Several processes share one work directory (`--mpi-shared`): this is process `index` of
/// `count`. A test's shared file is then one file for all of them, `count` times the size,
/// each thread of each process taking its own region (IOR's shared-file mode); only process 0
/// prefills and removes it. Files of one thread get the process's index in their names; a
/// fileset is one set for all, its slots partitioned over every thread of every process
/// (mdtest's shared-directory mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// This process.
    pub index: u32,
    /// Processes sharing the directory.
    pub count: u32,
}
