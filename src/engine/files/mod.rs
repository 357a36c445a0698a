//! A test's files, behind one trait ([`TestFiles`]): a data test's one shared file or one per
//! thread ([`data::DataFiles`]), or a fileset's directory of slots ([`set::SetFiles`]). The
//! runner, the phase loop and the cache preconditions ask the trait (make, set up, the workers'
//! shares of a phase, residency, remove) and never which kind of files a test has.

mod data;
mod set;

pub(crate) use data::sized_from_run_file;
pub use data::{one_file, preallocate, prefill};
pub use set::{absolute_base, remove_set, RESIDENCY_SAMPLE};

use super::phase::PhaseRun;
use super::runner::{EngineOptions, Progress};
use super::worker::{Work, WorkerOutput};
use crate::model::failure::EngineError;
use crate::model::job::{PhaseDef, TestDef};
use crate::model::result::{PhaseResult, RepResult, Warning};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

/// What the untimed set-up of a test's files needs.
pub struct SetUp<'a> {
    /// The test.
    pub test: &'a TestDef,
    /// The run's options.
    pub opts: &'a EngineOptions,
    /// The repetition's seed.
    pub seed: u64,
    /// The repetition.
    pub rep: u32,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
}

/// One worker's share of a phase, and the counter its progress is read from.
pub type WorkerShare<'a> = (Work<'a>, &'a AtomicU64);

/// What `--min-time` runs again to lengthen a short timed phase: the phase itself on the same
/// files, or the whole repetition on new ones (see [`super::min_time`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The phase again, on the same files (a data test's files stay what they were).
    Phase,
    /// The whole test again, set-up included (a fileset's phases change the set: a create
    /// phase leaves no free slot for another pass).
    Repetition,
}

/// The files of one repetition of a test.
pub trait TestFiles {
    /// Checks before anything is made (a data test's O_DIRECT on this filesystem).
    fn preflight(&self, _test: &TestDef) -> Result<(), EngineError> {
        Ok(())
    }

    /// The untimed set-up: fill a data test's files, or check a fileset's space and create its
    /// files. `Ok(false)`: interrupted.
    fn set_up(&mut self, cx: &SetUp<'_>) -> Result<bool, EngineError>;

    /// The seed of phase `pi`'s workers.
    fn phase_seed(&self, seed: u64, pi: usize) -> u64;

    /// Tell `progress` that `phase` starts, with what it is counted in (bytes or ops).
    fn start_progress(&self, test: &TestDef, rep: u32, phase: &PhaseDef, progress: &dyn Progress);

    /// Whether every file the phase starts with exists (a data phase may create its file).
    fn all_exist(&self) -> bool;

    /// The files whose page-cache residency stands for the test's.
    fn residency_files(&self) -> Vec<PathBuf>;

    /// Whether [`TestFiles::residency_files`] is a sample (of a fileset's files), not all.
    fn sampled(&self) -> bool;

    /// Whether the files are an earlier repetition's, reused without a new lay-out
    /// ([`crate::engine::keep`]).
    fn reused(&self) -> bool {
        false
    }

    /// Before an eviction: make the files evictable (a fileset's dirty files are synced) and
    /// say which to evict one by one (the target's eviction then runs for the rest).
    fn evictable(&self) -> &[PathBuf];

    /// What an uncached phase must empty besides [`TestFiles::evictable`]'s pages: by default
    /// everything (a file set's directories and inodes are part of what it measures).
    fn eviction_scope(&self) -> super::Scope {
        super::Scope::Everything
    }

    /// Before an eviction that unmounts: let go of every descriptor held on the files (a
    /// fileset's root); [`TestFiles::reanchor`] takes them again.
    fn release(&self) -> std::io::Result<()> {
        Ok(())
    }

    /// After an eviction that unmounted (and the work directory was taken again): take the
    /// descriptors again, checked to be the same directories.
    fn reanchor(&self) -> std::io::Result<()> {
        Ok(())
    }

    /// Each worker's share of `phase`, and its progress counter, for the `threads` workers of
    /// this process. Everything a phase's workers share is made here.
    fn shares<'a>(
        &'a mut self,
        test: &'a TestDef,
        phase: &'a PhaseDef,
        opts: &'a EngineOptions,
    ) -> Vec<WorkerShare<'a>>;

    /// After the phase's workers ended, inside the phase's timing where it says so: a fileset
    /// phase's fill series and its end-of-phase syncfs.
    fn end_phase(&mut self, _phase: &PhaseDef, _run: &mut PhaseRun) {}

    /// For a failure message: the state of the files when a phase stopped (`; ...`), or
    /// nothing.
    fn state_note(&self, _outs: &[WorkerOutput]) -> String {
        String::new()
    }

    /// Whether the set-up laid the files out without data (`file.preallocate`): the first
    /// phase writes them as if it created them.
    fn laid_out_empty(&self) -> bool {
        false
    }

    /// Between two `--min-time` passes of a phase that creates its files: put them back as the
    /// set-up left them (removed, or laid out again by `file.preallocate`), untimed.
    fn renew_created(&self, _test: &TestDef, _opts: &EngineOptions) -> Result<(), EngineError> {
        Ok(())
    }

    /// `--verify`, after the repetition's last phase (outside every timing): what was checked.
    fn verify(
        &self,
        test: &TestDef,
        opts: &EngineOptions,
        rep: u32,
        phases: &[PhaseResult],
    ) -> Result<Warning, EngineError>;

    /// Complete the repetition's result while the files exist (a data test's extents, a
    /// fileset's figure).
    fn finish_result(&self, complete: bool, r: &mut RepResult);

    /// Remove every file (and a fileset's directories).
    fn remove(self: Box<Self>, test: &TestDef, opts: &EngineOptions);
}

/// Name (and, for a fileset, make) the files of repetition `rep` of `test` under `dir`; nothing
/// is written yet. `kept`: an earlier repetition left a data test's files laid out there for
/// this one ([`crate::engine::keep`]).
pub fn make<'t>(
    test: &'t TestDef,
    dir: &Path,
    opts: &EngineOptions,
    rep: u32,
    kept: bool,
) -> Result<Box<dyn TestFiles + 't>, EngineError> {
    if test.is_fileset() {
        Ok(Box::new(set::SetFiles::make(test, dir, opts, rep)?))
    } else {
        Ok(Box::new(data::DataFiles::make(test, dir, opts, kept)?))
    }
}

/// What a `--min-time` pass of `test` is, before its files are made.
pub fn pass_of(test: &TestDef) -> Pass {
    if test.is_fileset() {
        Pass::Repetition
    } else {
        Pass::Phase
    }
}

/// Whether this process removes the test's files: a file shared by several processes is
/// removed by the first only (the others may still be reading its extent map).
pub fn removes_files(test: &TestDef, opts: &EngineOptions) -> bool {
    !(test.files.shared && opts.share.is_some_and(|s| s.index > 0))
}
