//! The one result type. The terminal table, JSON, CSV, the SQLite store and the HTML report are
//! all produced from these structs; units are in the field names.
//!
//! Every test has a figure of merit ([`Figure`]): MiB/s for data tests, operations per second
//! for fileset (metadata and application) tests, whose phases may move no bytes at all. Every
//! output, `compare`'s rule, `diff`, the store and the charts rank by it; the elapsed seconds of
//! the timed phases are reported beside it.

use crate::model::job::{CacheReq, OpKind, TestDef};
use crate::stats::summary::{stats, Stats};
pub use crate::sys::rusage::RusageCounts;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A timed total shorter than this gets a warning: scheduler noise is on the order of ms.
pub const SHORT_PHASE: Duration = Duration::from_millis(200);
/// Repetitions varying more than this (coefficient of variation) get a warning.
pub const NOISY_CV: f64 = 0.10;

/// What a test is ranked on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Bytes read + written in the timed phases per second of their wall time, in MiB/s.
    #[default]
    MibPerS,
    /// Operations per second: fileset operations (create, stat, unlink, ...) for fileset tests,
    /// read/write operations for data tests.
    OpsPerS,
}

impl Figure {
    /// The figure a test is ranked on: what it declares (`figure = ...`), else
    /// [`Figure::of_kind`].
    pub fn of_test(test: &TestDef) -> Figure {
        test.figure.unwrap_or_else(|| Figure::of_kind(test))
    }

    /// The figure a test's kind implies: ops/s for fileset tests (metadata and application
    /// workloads, whose phases may move no bytes), MiB/s for data tests.
    pub fn of_kind(test: &TestDef) -> Figure {
        if test.is_fileset() {
            Figure::OpsPerS
        } else {
            Figure::MibPerS
        }
    }

    /// The unit as printed: `MiB/s` or `ops/s`.
    pub fn unit(self) -> &'static str {
        match self {
            Figure::MibPerS => "MiB/s",
            Figure::OpsPerS => "ops/s",
        }
    }

    /// The name used in JSON, CSV and the store: `mib_per_s` or `ops_per_s`.
    pub fn key(self) -> &'static str {
        match self {
            Figure::MibPerS => "mib_per_s",
            Figure::OpsPerS => "ops_per_s",
        }
    }

    /// This figure of one repetition.
    pub fn value(self, rep: &RepResult) -> f64 {
        match self {
            Figure::MibPerS => rep.mib_per_s,
            Figure::OpsPerS => rep.ops_per_s,
        }
    }

    /// This figure's statistics in a summary.
    pub fn stats(self, s: &Summary) -> &Stats {
        match self {
            Figure::MibPerS => &s.mib_per_s,
            Figure::OpsPerS => &s.ops_per_s,
        }
    }
}

/// Something the user should know about a test's figures, carried in the result and worded by
/// its [`std::fmt::Display`] (every output prints the same words).
///
/// As JSON: an object with `kind` (the variant in snake case), its fields, and `message`, the
/// words every output prints (ignored when read back). `remote = "Self"` makes the derived code
/// inherent functions, which the `Serialize`/`Deserialize` impls below wrap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// Repetitions vary by more than [`NOISY_CV`].
    Noisy {
        /// Coefficient of variation of the figure of merit (0.25 = 25%).
        cv: f64,
    },
    /// The timed phases of a repetition lasted less than [`SHORT_PHASE`].
    ShortPhase {
        /// Their wall time.
        wall_nanos: u64,
    },
    /// A phase's cache precondition did not hold.
    CacheNotMet {
        /// Phase name.
        phase: String,
        /// What it required.
        required: CacheReq,
        /// Resident share after trying.
        resident_fraction: f64,
        /// What was done.
        method: String,
        /// Measured on a sample of a fileset's files (true) or on the test's data files.
        sampled: bool,
    },
    /// `--trace` was asked for and cannot run here.
    TraceUnavailable {
        /// Why.
        reason: String,
    },
    /// The block trace of a phase could not be read.
    TraceLost {
        /// Phase name.
        phase: String,
        /// Why.
        error: String,
    },
    /// The block trace of a phase dropped events.
    TraceIncomplete {
        /// Phase name.
        phase: String,
        /// Events the ring buffer lost.
        events_lost: u64,
        /// Events beyond the in-memory limit.
        events_over_limit: u64,
    },
    /// `--verify` checked a repetition's files after its last phase (outside the timing).
    Verified {
        /// Repetition (1-based).
        repetition: u32,
        /// 4 KiB blocks checked intact.
        blocks_intact: u64,
        /// Blocks that read as zeros in a file that was not prefilled: never written.
        blocks_unwritten: u64,
        /// Time the check took.
        nanos: u64,
    },
    /// `--verify` checked a fileset test's files as they were read, inside the phases (the
    /// time is each phase's `verify_nanos`, outside the op latencies).
    VerifiedOnRead {
        /// Repetition (1-based).
        repetition: u32,
        /// Bytes read and checked.
        bytes_checked: u64,
        /// Time spent making and checking verified data over the repetition's phases.
        nanos: u64,
    },
    /// `--verify` cannot check this test.
    NotVerified {
        /// Why.
        reason: String,
    },
    /// A multi-client run's stonewall (`--stonewall`) ended the timed phases: the figure
    /// counts the work every rank completed.
    Stonewalled,
    /// `--repeat auto`: how many repetitions the test got and what stopped adding more.
    Repetitions {
        /// Completed repetitions.
        count: u32,
        /// `ci` (the confidence interval reached the target), `max`, `budget` or `failed`.
        stopped_by: String,
        /// The widest 95% CI half-width of the figure over the configurations, relative
        /// (0.05 = ±5%); None when it could not be computed.
        ci: Option<f64>,
        /// The target half-width.
        target_ci: f64,
        /// `noisy` or `budget`: the time budget (seconds of the whole run's repetitions) the
        /// test would have needed to settle, as forecast from its noise and cost; None when no
        /// number of repetitions is expected to settle it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        needed_budget_s: Option<f64>,
        /// The widest coefficient of variation of the figure over the configurations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cv: Option<f64>,
    },
    /// Repetitions whose stated precondition (a phase's cache state) did not hold even after
    /// retrying them: they are not in the test's figures. One per test and phase, with the count;
    /// recomputed from the repetitions by [`TestResult::finalize`].
    PreconditionNotMet {
        /// The first timed phase that missed it.
        phase: String,
        /// What it required.
        required: CacheReq,
        /// Repetitions that missed it (left out of the figures).
        unmet: u32,
        /// Completed repetitions.
        of: u32,
        /// Attempts discarded and run again because the precondition did not hold.
        #[serde(default)]
        retried: u32,
        /// Resident share after trying, in the first repetition that missed it.
        resident_fraction: f64,
        /// What was done, in that repetition.
        method: String,
    },
    /// Free text: what fsbench 0.1 stored (its warnings were text).
    Note {
        /// The text.
        text: String,
    },
}

impl Warning {
    /// Statistical warnings are recomputed from the repetitions by [`TestResult::finalize`].
    pub fn is_statistical(&self) -> bool {
        matches!(
            self,
            Warning::Noisy { .. } | Warning::ShortPhase { .. } | Warning::PreconditionNotMet { .. }
        )
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::Noisy { cv } => write!(
                f,
                "repetitions vary by {:.0}% (coefficient of variation); treat differences smaller than that as noise or use more --repeat",
                cv * 100.0
            ),
            Warning::ShortPhase { wall_nanos } => write!(
                f,
                "timed phase lasted only {:.1} ms; below {} ms start-up and scheduler noise dominate the figure: use --min-time (the default 0.5s lengthens it) or a larger --scale",
                *wall_nanos as f64 / 1e6,
                SHORT_PHASE.as_millis()
            ),
            Warning::CacheNotMet { phase, required, resident_fraction, method, sampled } => {
                let (word, figure) = match required {
                    CacheReq::Uncached => ("uncached", "an uncached"),
                    CacheReq::Cached => ("cached", "a cached"),
                    CacheReq::Any => ("any", "a cached"),
                    CacheReq::Direct => ("direct", "a direct"),
                };
                let of = if *sampled { "of sampled files were" } else { "of the file was" };
                write!(
                    f,
                    "phase `{phase}`: {word} required but {:.0}% {of} resident after {method}; this is not {figure} figure",
                    resident_fraction * 100.0
                )
            }
            Warning::TraceUnavailable { reason } => f.write_str(reason),
            Warning::TraceLost { phase, error } => {
                write!(f, "block trace of phase `{phase}` lost: {error}")
            }
            Warning::TraceIncomplete { phase, events_lost, events_over_limit } => write!(
                f,
                "block trace of phase `{phase}` is incomplete: {events_lost} events lost, {events_over_limit} over the in-memory limit; its counts are lower bounds"
            ),
            Warning::Verified { repetition, blocks_intact, blocks_unwritten, nanos } => {
                write!(f, "repetition {repetition}: verify: {blocks_intact} blocks of 4 KiB checked intact")?;
                if *blocks_unwritten > 0 {
                    write!(f, ", {blocks_unwritten} never written (zeros)")?;
                }
                write!(f, " in {:.0} ms, after the last phase (outside the timing)", *nanos as f64 / 1e6)
            }
            Warning::VerifiedOnRead { repetition, bytes_checked, nanos } => write!(
                f,
                "repetition {repetition}: verify: {} of file data checked intact as it was read; {:.0} ms making and checking verified data inside the phases (in their wall time, outside the op latencies)",
                crate::model::units::fmt_bytes(*bytes_checked),
                *nanos as f64 / 1e6
            ),
            Warning::NotVerified { reason } => write!(f, "--verify: {reason}"),
            Warning::Stonewalled => f.write_str(
                "stonewalled: the timed phases stopped at the stonewall; the figure counts the work every rank completed (smallest rank × ranks)",
            ),
            Warning::Repetitions { count, stopped_by, ci, target_ci, needed_budget_s, cv } => {
                let ci = match ci {
                    // Of the 20%-trimmed mean of the log figures, the widest of the test over
                    // the configurations compared: one number for the test, not this side's.
                    Some(c) => format!(
                        "the test's 95% CI ±{:.1}% (trimmed mean; the widest over the configurations compared)",
                        c * 100.0
                    ),
                    None => "95% CI unknown".into(),
                };
                let why = match stopped_by.as_str() {
                    "ci" => format!("{ci}, within the target ±{:.0}%", target_ci * 100.0),
                    "settled" => format!(
                        "{ci}: the verdict is settled (a win beyond the minimum effect at the strict level, 1% over every test and round, or a draw within it at 95%)"
                    ),
                    "max" => format!("{ci}: stopped at the most repetitions (--max-repeat)"),
                    "budget" => format!("{ci}: stopped by the time budget (--time-budget)"),
                    "noisy" => {
                        let cv = cv.map(|c| format!(": CV {:.0}%", c * 100.0)).unwrap_or_default();
                        match needed_budget_s {
                            Some(s) => format!(
                                "{ci}: too noisy to decide at this budget{cv}; --time-budget {:.0}s would be needed",
                                s.ceil()
                            ),
                            None => format!(
                                "{ci}: too noisy to decide at this budget{cv}, and its gap is too close to the minimum effect for more repetitions to settle it"
                            ),
                        }
                    }
                    _ => format!("{ci}: stopped ({stopped_by})"),
                };
                write!(f, "--repeat auto: {count} repetitions, {why}")
            }
            Warning::PreconditionNotMet {
                phase,
                required,
                unmet,
                of,
                retried,
                resident_fraction,
                method,
            } => {
                let word = cache_word(*required);
                write!(
                    f,
                    "precondition not met: phase `{phase}` required {word} but {:.0}% was resident after {method}, in {unmet} of {of} repetitions; they are left out of the figures",
                    resident_fraction * 100.0
                )?;
                if *retried > 0 {
                    write!(f, " ({retried} attempts retried)")?;
                }
                Ok(())
            }
            Warning::Note { text } => f.write_str(text),
        }
    }
}

/// A cache requirement as a word.
fn cache_word(req: CacheReq) -> &'static str {
    match req {
        CacheReq::Uncached => "uncached",
        CacheReq::Cached => "cached",
        CacheReq::Any => "any",
        CacheReq::Direct => "direct",
    }
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct WithMessage<'a> {
            #[serde(flatten, serialize_with = "tagged")]
            detail: &'a Warning,
            message: String,
        }
        fn tagged<S: serde::Serializer>(w: &&Warning, s: S) -> Result<S::Ok, S::Error> {
            Warning::serialize(w, s)
        }
        WithMessage { detail: self, message: self.to_string() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Unknown fields, `message` among them, are ignored by the tagged form.
        Warning::deserialize(d)
    }
}

/// A whole `fsbench run`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// fsbench version that produced this.
    pub fsbench_version: String,
    /// Start time, seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// The machine.
    pub host: crate::model::host::HostInfo,
    /// Where the tests ran.
    pub target: TargetInfo,
    /// Suite name.
    pub suite: String,
    /// `--scale` as given.
    pub scale: String,
    /// Repetitions per test.
    pub repeat: u32,
    /// Per-test results, in run order.
    pub tests: Vec<TestResult>,
    /// True when the run was stopped by Ctrl-C/SIGTERM.
    pub interrupted: bool,
    /// Multi-client runs (`--mpi`): ranks, hosts and their clocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::model::cluster::ClusterInfo>,
    /// `fsbench run`: where the run's time went (a comparison has it on the whole report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<crate::model::time::TimeSplit>,
}

/// Where tests ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Label used in output.
    pub label: String,
    /// Directory under which test files were made.
    pub dir: String,
    /// Filesystem type from /proc/self/mountinfo (e.g. `ext4`).
    pub fs_type: String,
    /// Mount source (device) from mountinfo.
    pub mount_source: String,
    /// Mount options in effect.
    pub mount_options: String,
    /// Block devices whose counters were read.
    pub devices: Vec<String>,
}

/// Outcome of one test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TestStatus {
    /// All repetitions completed.
    Ok,
    /// A repetition failed; `reason` says how (e.g. ENOSPC at which offset). Serialised as
    /// words; in the process that ran the test it also holds the engine's typed error
    /// ([`crate::model::failure::Reason`]).
    Failed {
        /// Human-readable cause (and, before it was stored, the typed error).
        reason: crate::model::failure::Reason,
    },
    /// Stopped by Ctrl-C/SIGTERM; figures are what was measured so far.
    Interrupted,
    /// Not run (e.g. the run was interrupted before it).
    Skipped {
        /// Why.
        reason: String,
    },
    /// Every repetition completed, but in some a stated precondition (a phase's cache state)
    /// did not hold even after retrying: those are left out of the figures, which are over
    /// the others (none when none met it).
    NotMet {
        /// Which precondition, in how many repetitions, and what was found.
        reason: String,
    },
}

/// One test over all its repetitions.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestResult {
    /// Test id.
    pub id: String,
    /// Short name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Thread count.
    pub threads: u32,
    /// Outcome.
    pub status: TestStatus,
    /// Each repetition that produced figures (completed, or partial when failed/interrupted).
    pub reps: Vec<RepResult>,
    /// How many of `reps` completed (only those count in `summary`).
    pub complete_reps: u32,
    /// What the test is ranked on (MiB/s or ops/s).
    #[serde(default)]
    pub figure: Figure,
    /// Statistics over the completed repetitions.
    pub summary: Option<Summary>,
    /// Things the user should know about these figures.
    pub warnings: Vec<Warning>,
}

/// One repetition: figures over all timed phases together, and each phase on its own.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RepResult {
    /// False for a repetition cut short by a failure or an interrupt (partial figures).
    pub complete: bool,
    /// Sum of the timed phases' wall times.
    pub wall_nanos: u64,
    /// Bytes read + written in timed phases.
    pub bytes: u64,
    /// Read/write operations in timed phases.
    pub data_ops: u64,
    /// bytes / wall, in MiB/s.
    pub mib_per_s: f64,
    /// Operations / wall: `file_ops` for fileset tests, `data_ops` for data tests.
    pub ops_per_s: f64,
    /// User CPU over timed phases, all threads.
    pub cpu_user_nanos: u64,
    /// System CPU over timed phases, all threads.
    pub cpu_sys_nanos: u64,
    /// CPU time / (wall × threads), in % of one core per thread.
    pub cpu_pct_per_thread: f64,
    /// Latency per op kind, merged over timed phases.
    pub latency: Vec<OpLatency>,
    /// Every phase (timed and set-up).
    pub phases: Vec<PhaseResult>,
    /// Extent map of the test files after the last phase (FIEMAP).
    pub extents: Option<crate::model::extents::ExtentSummary>,
    /// Fileset tests: pattern operations in timed phases; `ops_per_s` is these per second.
    #[serde(default)]
    pub file_ops: u64,
    /// The figure its test is ranked on (set by [`TestResult::finalize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figure: Option<Figure>,
    /// Multi-client runs (`--mpi`): each rank's share, the spread and the per-host breakdown;
    /// the figures above are the aggregate over all ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::model::cluster::ClusterRep>,
    /// zfs: the dataset's `compressratio` after the last phase ([`crate::observe::compress`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_ratio: Option<f64>,
    /// The repetition's untimed work by kind (None: stored before fsbench measured it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed: Option<crate::model::time::Untimed>,
    /// Attempts at this repetition discarded because a phase's cache precondition did not hold
    /// (each was run again; their untimed cost is in the run's time, not in any figure).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub retried: u32,
}

/// One phase of one repetition.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PhaseResult {
    /// Phase name.
    pub name: String,
    /// Timed or set-up.
    pub timed: bool,
    /// Threads that ran.
    pub threads: u32,
    /// From release of the threads to the last one's close.
    pub wall_nanos: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Read/write operations.
    pub data_ops: u64,
    /// User CPU, all threads.
    pub cpu_user_nanos: u64,
    /// System CPU, all threads.
    pub cpu_sys_nanos: u64,
    /// Context switches and page faults of its threads, from their release to their end (zero
    /// in records made before fsbench read them).
    #[serde(default, skip_serializing_if = "RusageCounts::is_zero")]
    pub rusage: RusageCounts,
    /// Latency per op kind.
    pub latency: Vec<OpLatency>,
    /// The cache state checked before the phase.
    pub cache: CacheCheck,
    /// The I/O engine the phase ran on (`psync`, `io_uring`, `libaio`, `mmap`, `null`).
    #[serde(default = "default_engine")]
    pub engine: String,
    /// Requests each thread kept in flight.
    #[serde(default = "default_iodepth")]
    pub iodepth: u32,
    /// Files opened with O_DIRECT: the page cache was bypassed.
    #[serde(default)]
    pub direct: bool,
    /// Files opened with O_DSYNC or O_SYNC: every write waited for the device, so time in
    /// `write()` is time in a sync.
    #[serde(default)]
    pub sync_writes: bool,
    /// io_uring phases: the ring's batching, polling and registration options as run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uring: Option<crate::model::job::UringOpts>,
    /// Block-device counter changes over the phase, when the target has devices.
    pub device: Option<DeviceDelta>,
    /// Time spent inside fsync/fdatasync, summed over threads.
    pub sync_nanos: u64,
    /// `--verify`: time spent making verified write data and checking data as it was read,
    /// summed over threads; inside `wall_nanos`, outside every op's latency. 0 without
    /// `--verify`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verify_nanos: u64,
    /// `--verify`: bytes checked as they were read (fileset tests; a data test's files are
    /// checked after the repetition).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verified_bytes: u64,
    /// Page cache, dirty and writeback memory (and a filesystem daemon's RSS) around the phase.
    pub memory: Option<crate::model::memory::MemDelta>,
    /// Block-layer trace of the phase (`--trace`).
    pub trace: Option<crate::model::trace::TraceSummary>,
    /// Fileset tests: pattern operations done (create, stat, unlink, ...), skipped ones not
    /// counted; directories a create had to make are in `latency` as `mkdir`, not here.
    #[serde(default)]
    pub file_ops: u64,
    /// Fileset tests: operations that found no suitable slot (e.g. unlink when no file is left)
    /// and made no system call.
    #[serde(default)]
    pub skipped_ops: u64,
    /// Fileset tests: files created.
    #[serde(default)]
    pub files_created: u64,
    /// Fill phases: throughput over each 10% step of filesystem fill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_series: Option<Vec<FillPoint>>,
    /// Fill phases: how full the filesystem was (used / (used + available)) at the start and
    /// at the end of the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_range: Option<(f64, f64)>,
    /// Fill phases: what ended the phase (`fill target reached`, `filesystem full (ENOSPC)`,
    /// `no free file slot`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<String>,
    /// Timed passes of the phase's pattern (`--min-time`): a short phase is run again, and its
    /// figures (time, bytes, operations, CPU, latency) are the sums over every pass. 0 in
    /// records made before this field existed: read it with [`PhaseResult::passes`].
    #[serde(default = "default_passes")]
    pub passes: u32,
    /// The test's roles that ran beside this phase (`[[test.role]]`), each with its figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleResult>,
    /// Timed phases: what the phase did over time, one point per interval (the first pass's,
    /// under `--min-time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<crate::model::series::PhaseSeries>,
    /// A paced phase's rate (asked and achieved) and a steady-state criterion's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<crate::model::series::LoadOutcome>,
    /// `--curve`: latency against load, the phase at fixed fractions of this (closed-loop)
    /// pass's rate ([`crate::model::curve`]); the figures above are the closed-loop pass's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<crate::model::curve::PhaseCurve>,
    /// Timed phases of more than one thread: each thread's own figures, in thread order (fio
    /// reports each of a job's `numjobs` clones as a job of its own). Empty for one thread, for
    /// records made before this field existed, after `--min-time` passes were added up (a
    /// thread's passes are not kept apart) and in a cluster run's merged phase: read the merged
    /// figures then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_thread: Vec<ThreadResult>,
    /// Asynchronous engines (io_uring, libaio): each data op kind's submission latency and
    /// completion latency from the submission's return, apart (fio's `slat` and `clat`;
    /// `latency` is their sum, fio's `lat`). Empty for synchronous engines and in records made
    /// before fsbench timed them apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub submission: Vec<crate::model::submit::SplitLatency>,
    /// fio's queue-depth distributions over its threads (`iodepth_level`, `iodepth_submit`,
    /// `iodepth_complete`); absent in records made before fsbench counted them.
    #[serde(default, skip_serializing_if = "crate::model::submit::DepthCounts::is_empty")]
    pub depths: crate::model::submit::DepthCounts,
    /// A timed phase of a fio job that asked for a per-I/O log (`PhaseDef::op_log`): each
    /// data op's record, for `fsbench fio` to write after the run. Never stored or
    /// serialised (millions of records; what the log files are for).
    #[serde(skip)]
    pub op_log: Option<crate::model::oplog::OpLog>,
}

/// What one thread of a phase (or of a role) did, for a report per thread (fio's clones):
/// about 0.5 KB of JSON a thread for one data op kind, 0.9 KB for reads and writes, and with a
/// fixed `--interval` (`fsbench fio`) its windows: four numbers per window (a 60 s job at
/// 500 ms, about 2 KB more).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ThreadResult {
    /// From the thread's release to its end (after its last completion and close).
    pub wall_nanos: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Read + write operations.
    pub data_ops: u64,
    /// User CPU of the thread.
    pub cpu_user_nanos: u64,
    /// System CPU of the thread.
    pub cpu_sys_nanos: u64,
    /// Context switches and page faults of the thread.
    #[serde(default, skip_serializing_if = "RusageCounts::is_zero")]
    pub rusage: RusageCounts,
    /// fio's figures of its reads, writes and syncs (the kinds it recorded).
    pub latency: Vec<ThreadLatency>,
    /// Its bytes and ops per window of the phase's series, with a fixed `--interval` (fio's
    /// bandwidth and IOPS samples of each clone); empty otherwise.
    #[serde(default, skip_serializing_if = "crate::model::series::ThreadWindows::is_empty")]
    pub windows: crate::model::series::ThreadWindows,
    /// Asynchronous engines: its reads' and writes' submission and completion latency apart
    /// ([`PhaseResult::submission`]); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub submission: Vec<crate::model::submit::ThreadSplit>,
    /// Its queue-depth distributions ([`PhaseResult::depths`]).
    #[serde(default, skip_serializing_if = "crate::model::submit::DepthCounts::is_empty")]
    pub depths: crate::model::submit::DepthCounts,
}

/// What fio reports of one thread's latency of one op kind: a summary, not a histogram, to
/// keep a thread's record small. From a histogram of 3 significant digits (see
/// [`crate::stats::latency`]): every percentile within 0.1%.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ThreadLatency {
    /// Operation.
    pub op: OpKind,
    /// Number of operations.
    pub count: u64,
    /// Minimum.
    pub min_nanos: u64,
    /// Maximum.
    pub max_nanos: u64,
    /// Mean.
    pub mean_nanos: f64,
    /// Standard deviation.
    pub stddev_nanos: f64,
    /// At fio's default percentiles ([`crate::model::latency::FIO_PERCENTILES`]), in order.
    pub percentiles_nanos: Vec<u64>,
    /// Operations in each of fio's latency buckets
    /// ([`crate::model::latency::FIO_BUCKET_BOUNDS_NANOS`], then the one above).
    pub fio_buckets: Vec<u64>,
}

fn default_passes() -> u32 {
    1
}

/// What a role (threads with their own file and pattern beside a timed phase) did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoleResult {
    /// Role name.
    pub name: String,
    /// Its threads.
    pub threads: u32,
    /// From the release of its threads to the last one's close (it is stopped when the
    /// phase's own threads are done).
    pub wall_nanos: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Read + write operations.
    pub data_ops: u64,
    /// (bytes read + written) / wall time.
    pub mib_per_s: f64,
    /// Latency per op kind (its writes, fsyncs, ...).
    pub latency: Vec<OpLatency>,
    /// Roles of more than one thread: each thread's own figures, in thread order (empty in
    /// records made before this field existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_thread: Vec<ThreadResult>,
    /// User CPU time of the role's threads, ns (0 in records made before this field existed).
    #[serde(default)]
    pub cpu_user_nanos: u64,
    /// System CPU time of the role's threads, ns (0 in records made before this field existed).
    #[serde(default)]
    pub cpu_sys_nanos: u64,
    /// Context switches and page faults of the role's threads.
    #[serde(default, skip_serializing_if = "RusageCounts::is_zero")]
    pub rusage: RusageCounts,
    /// Asynchronous engines: submission and completion latency apart
    /// ([`PhaseResult::submission`]); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub submission: Vec<crate::model::submit::SplitLatency>,
    /// Its threads' queue-depth distributions ([`PhaseResult::depths`]).
    #[serde(default, skip_serializing_if = "crate::model::submit::DepthCounts::is_empty")]
    pub depths: crate::model::submit::DepthCounts,
}

impl RoleResult {
    /// The role's main operation: its data op with the most operations (its writes for a
    /// streaming writer).
    pub fn main_op(&self) -> Option<&OpLatency> {
        self.latency.iter().filter(|l| l.op.is_data() && l.count > 0).max_by_key(|l| l.count)
    }

    /// Its fsync (or fdatasync) latency, if it synced.
    pub fn sync_latency(&self) -> Option<&OpLatency> {
        self.latency
            .iter()
            .find(|l| matches!(l.op, OpKind::Fsync | OpKind::Fdatasync) && l.count > 0)
    }
}

/// One step of a fill phase's throughput-versus-fill series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FillPoint {
    /// Filesystem fill (0..1) at the end of the step: a multiple of 0.1, or the level at the
    /// end of the phase for a last, partial step.
    pub fill: f64,
    /// Time since the phase started, at the end of the step.
    pub elapsed_nanos: u64,
    /// Bytes written during the step.
    pub bytes_written: u64,
    /// Files created during the step.
    pub files_created: u64,
    /// bytes_written / step duration, MiB/s.
    pub mib_per_s: f64,
    /// files_created / step duration.
    pub files_per_s: f64,
}

/// Latency summary of one op kind (from an HdrHistogram with 3 significant digits: each
/// percentile is within 0.1% of the true value).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpLatency {
    /// Operation.
    pub op: OpKind,
    /// Number of operations.
    pub count: u64,
    /// Mean.
    pub mean_nanos: f64,
    /// Minimum.
    pub min_nanos: u64,
    /// Median.
    pub p50_nanos: u64,
    /// 90th percentile.
    pub p90_nanos: u64,
    /// 99th percentile.
    pub p99_nanos: u64,
    /// 99.9th percentile.
    pub p999_nanos: u64,
    /// Maximum.
    pub max_nanos: u64,
    /// The histogram, HdrHistogram V2 compressed + base64, for later merging and plotting.
    /// Stored always; the JSON output leaves it out unless asked (`--histograms`): it is most
    /// of a report's size.
    #[serde(default)]
    pub histogram_b64: String,
}

/// Results written before engines existed ran on psync at depth 1.
fn default_engine() -> String {
    "psync".into()
}

fn default_iodepth() -> u32 {
    1
}

impl PhaseResult {
    /// Timed passes of the pattern (at least 1).
    pub fn passes(&self) -> u32 {
        self.passes.max(1)
    }

    /// Add another pass of the same phase (`--min-time`): times, bytes, operations, CPU and
    /// sync time are summed, so per-byte and per-operation figures stay right. Latency, device
    /// counters, memory and trace are the caller's (they span every pass).
    pub fn add_pass(&mut self, o: &PhaseResult) {
        self.wall_nanos += o.wall_nanos;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.data_ops += o.data_ops;
        self.cpu_user_nanos += o.cpu_user_nanos;
        self.cpu_sys_nanos += o.cpu_sys_nanos;
        self.rusage.add(&o.rusage);
        self.sync_nanos += o.sync_nanos;
        self.file_ops += o.file_ops;
        self.skipped_ops += o.skipped_ops;
        self.files_created += o.files_created;
        self.passes = self.passes() + o.passes();
        crate::model::submit::merge_splits(&mut self.submission, &o.submission);
        self.depths.add(&o.depths);
        // A thread's passes are not kept apart: its figures would be one pass's.
        self.per_thread.clear();
        if !o.cache.met && self.cache.met {
            self.cache = o.cache.clone();
        }
    }

    /// `io_uring qd16 direct`: the engine, its depth when above 1, and O_DIRECT; empty for the
    /// default (psync, depth 1, buffered).
    pub fn io_label(&self) -> String {
        let mut v = Vec::new();
        if !self.engine.is_empty() && self.engine != "psync" {
            v.push(self.engine.clone());
        }
        if self.iodepth > 1 {
            v.push(format!("qd{}", self.iodepth));
        }
        if self.direct {
            v.push("direct".into());
        }
        v.extend(self.uring_flags().map(String::from));
        v.join(" ")
    }

    /// `psync qd1 buffered`, `io_uring qd16 direct sqpoll`: the engine, depth and O_DIRECT
    /// always, and io_uring's polling and registration options that differ from the default.
    pub fn io_words(&self) -> String {
        let engine = if self.engine.is_empty() { "psync" } else { self.engine.as_str() };
        let mut s = format!(
            "{engine} qd{} {}",
            self.iodepth,
            if self.direct { "direct" } else { "buffered" }
        );
        for f in self.uring_flags() {
            s.push(' ');
            s.push_str(f);
        }
        s
    }

    /// io_uring options that differ from the default, as words.
    fn uring_flags(&self) -> impl Iterator<Item = &'static str> {
        let u = self.uring.unwrap_or_default();
        [
            (u.sqpoll, "sqpoll"),
            (u.iopoll, "iopoll"),
            (u.fixedbufs, "fixedbufs"),
            (!u.registerfiles, "unregistered-files"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
    }
}

/// The cache precondition as checked.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheCheck {
    /// What the phase required.
    pub required: CacheReq,
    /// Fraction of the files' pages resident just before the phase (mincore).
    pub resident_fraction: f64,
    /// What was done to achieve it ("read once", "fsync+fadvise+drop_caches", ...).
    pub method: String,
    /// Whether the requirement holds (always true for `any`).
    pub met: bool,
}

/// No requirement (`any`), so met: nothing checked, nothing missed.
impl Default for CacheCheck {
    fn default() -> Self {
        CacheCheck {
            required: CacheReq::Any,
            resident_fraction: 0.0,
            method: String::new(),
            met: true,
        }
    }
}

/// Change of /sys/block/DEV/stat over a phase, summed over the target's devices.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceDelta {
    /// Devices summed.
    pub devices: Vec<String>,
    /// Read requests completed.
    pub reads_completed: u64,
    /// Read requests merged.
    pub reads_merged: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Write requests completed.
    pub writes_completed: u64,
    /// Write requests merged.
    pub writes_merged: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Time the device was busy (io_ticks), milliseconds; at most the time between the readings.
    pub busy_ms: u64,
    /// Milliseconds the reads took from issue to completion, added up over them (`read ticks`:
    /// divided by `reads_completed`, the device's mean read time); 0 in records made before
    /// fsbench read it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_ticks_ms: u64,
    /// The writes' (`write ticks`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_ticks_ms: u64,
    /// Milliseconds of requests in flight, weighted by how many were (`time_in_queue`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queue_ms: u64,
    /// `io_ticks` grew by more than the time between the readings on some device: the kernel's
    /// counter took in time from outside the phase, so `busy_ms` (capped) is not a measurement
    /// and nothing is explained by it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub busy_overcounted: bool,
    /// Device-wide: the target is a directory on a device fsbench did not make (shared with the
    /// rest of the machine), so these counters include other processes' I/O.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
}

impl DeviceDelta {
    /// Add another phase's (or device's) counters to these.
    pub fn add(&mut self, o: &DeviceDelta) {
        if self.devices.is_empty() {
            self.devices = o.devices.clone();
        }
        self.reads_completed += o.reads_completed;
        self.reads_merged += o.reads_merged;
        self.read_bytes += o.read_bytes;
        self.writes_completed += o.writes_completed;
        self.writes_merged += o.writes_merged;
        self.write_bytes += o.write_bytes;
        self.busy_ms += o.busy_ms;
        self.read_ticks_ms += o.read_ticks_ms;
        self.write_ticks_ms += o.write_ticks_ms;
        self.queue_ms += o.queue_ms;
        self.busy_overcounted |= o.busy_overcounted;
        self.shared |= o.shared;
    }
}

/// Repetition statistics of a test: of its throughput, its operation rate and the elapsed time
/// of its timed phases. [`Summary::figure`] says which of them the test is ranked on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Repetitions counted.
    pub n: u32,
    /// The figure of merit (which of the statistics below ranks the test).
    pub figure: Figure,
    /// Bytes read + written / wall time of the timed phases, MiB/s.
    pub mib_per_s: Stats,
    /// Operations per second (fileset operations for fileset tests, read/write operations
    /// for data tests).
    pub ops_per_s: Stats,
    /// Wall time of the timed phases, seconds.
    pub elapsed_s: Stats,
}

impl Summary {
    /// The statistics of the figure of merit.
    pub fn merit(&self) -> &Stats {
        self.figure.stats(self)
    }
}

impl TestResult {
    /// A result for `test` with no repetitions yet (status `Ok`, ranked on the test's figure).
    pub fn new(test: &TestDef) -> TestResult {
        TestResult {
            id: test.id.clone(),
            name: test.name.clone(),
            description: test.description.clone(),
            threads: test.threads,
            status: TestStatus::Ok,
            reps: Vec::new(),
            complete_reps: 0,
            figure: Figure::of_test(test),
            summary: None,
            warnings: test.notes.iter().map(|n| Warning::Note { text: n.clone() }).collect(),
        }
    }

    /// A test that was not run, with why.
    pub fn skipped(test: &TestDef, reason: &str) -> TestResult {
        TestResult {
            status: TestStatus::Skipped { reason: reason.into() },
            ..TestResult::new(test)
        }
    }

    /// How the test's I/O ran ([`PhaseResult::io_words`] of the median repetition's first
    /// timed phase); None when no repetition ran.
    pub fn io_words(&self) -> Option<String> {
        self.median_rep()?.phases.iter().find(|p| p.timed).map(|p| p.io_words())
    }

    /// The repetition whose figure of merit is the median (the lower one of an even count),
    /// or the last when none completed. Every figure an output shows besides the figure of
    /// merit's statistics (latency percentiles, CPU, device counters, the roles' figures) is
    /// this repetition's, so that the terminal, CSV, JSON and HTML show one number for one
    /// thing: see [`TestResult::main_latency`] and [`TestResult::roles`].
    pub fn median_rep(&self) -> Option<&RepResult> {
        self.median_rep_index().map(|i| &self.reps[i])
    }

    /// The index in `reps` of [`TestResult::median_rep`] (the JSON's `median_rep`).
    pub fn median_rep_index(&self) -> Option<usize> {
        let mut idx: Vec<usize> = (0..self.reps.len()).filter(|i| self.reps[*i].counts()).collect();
        if idx.is_empty() {
            // A partial repetition stands for a failed or interrupted test; one that missed
            // its precondition stands for nothing.
            let last = self.reps.len().checked_sub(1)?;
            let r = &self.reps[last];
            return (r.preconditions_met() || !r.complete).then_some(last);
        }
        let f = self.figure;
        idx.sort_by(|a, b| f.value(&self.reps[*a]).total_cmp(&f.value(&self.reps[*b])));
        idx.get(idx.len().saturating_sub(1) / 2).copied()
    }

    /// The test's latency as every output shows it: the main operation
    /// ([`RepResult::main_op`]) of the median repetition.
    pub fn main_latency(&self) -> Option<&OpLatency> {
        self.median_rep()?.main_op()
    }

    /// What the test's roles did, as every output shows it: the roles beside the median
    /// repetition's timed phases, with the name of the phase each ran beside.
    pub fn roles(&self) -> Vec<(&str, &RoleResult)> {
        self.median_rep()
            .map(|r| {
                r.phases
                    .iter()
                    .filter(|p| p.timed)
                    .flat_map(|p| p.roles.iter().map(move |role| (p.name.as_str(), role)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The first timed phase of the median repetition: its engine, depth and O_DIRECT are what
    /// the outputs name the test's I/O by ([`PhaseResult::io_label`]).
    pub fn timed_phase(&self) -> Option<&PhaseResult> {
        self.median_rep().and_then(|r| r.phases.iter().find(|p| p.timed))
    }

    /// The median of the figure of merit over the completed repetitions that met their
    /// preconditions.
    pub fn median(&self) -> Option<f64> {
        self.summary.as_ref().map(|s| s.merit().median)
    }

    /// Add a warning unless it is there already.
    pub fn warn(&mut self, w: Warning) {
        note_once(&mut self.warnings, w);
    }

    /// Add `more` (later repetitions of the same test) and recompute the statistics.
    pub fn merge(&mut self, more: TestResult) {
        if matches!(self.status, TestStatus::Ok | TestStatus::NotMet { .. }) {
            self.status = more.status;
        }
        self.complete_reps += more.complete_reps;
        self.reps.extend(more.reps);
        for w in more.warnings {
            self.warn(w);
        }
        self.finalize();
    }

    /// Recompute the summary (over completed repetitions that met their preconditions), the
    /// status (ok or not met) and the warnings computed from the repetitions.
    pub fn finalize(&mut self) {
        for r in &mut self.reps {
            r.figure = Some(self.figure);
        }
        self.warnings.retain(|w| !w.is_statistical());
        let unmet = self.not_met();
        if matches!(self.status, TestStatus::Ok | TestStatus::NotMet { .. }) {
            self.status = match &unmet {
                Some(w) => TestStatus::NotMet { reason: w.to_string() },
                None => TestStatus::Ok,
            };
        }
        if let Some(w) = unmet {
            self.warnings.push(w);
        }
        let done: Vec<&RepResult> = self.reps.iter().filter(|r| r.counts()).collect();
        self.summary = summarize(self.figure, &done);
        if let Some(s) = &self.summary {
            let cv = s.merit().cv;
            if s.n >= 2 && cv > NOISY_CV {
                self.warnings.push(Warning::Noisy { cv });
            }
        }
        if let Some(r) = done.first() {
            if Duration::from_nanos(r.wall_nanos) < SHORT_PHASE {
                self.warnings.push(Warning::ShortPhase { wall_nanos: r.wall_nanos });
            }
        }
    }

    /// Whether the test produced trustworthy figures.
    pub fn is_ok(&self) -> bool {
        self.status == TestStatus::Ok
    }

    /// The passes `--min-time` ran of the test's timed phases (the most of any phase, over the
    /// repetitions that count; the same in every one of them), when above 1.
    pub fn passes(&self) -> Option<u32> {
        let reps = self.reps.iter().filter(|r| r.counts());
        let n = reps.flat_map(|r| r.phases.iter()).filter(|p| p.timed).map(|p| p.passes()).max()?;
        (n > 1).then_some(n)
    }

    /// How a test's name or description says it ran more than one pass: ` (N passes)`.
    pub fn passes_words(&self) -> String {
        self.passes().map(|n| format!(" ({n} passes)")).unwrap_or_default()
    }

    /// Whether some completed repetition missed a stated precondition (and is left out of the
    /// figures).
    pub fn is_not_met(&self) -> bool {
        matches!(self.status, TestStatus::NotMet { .. })
    }

    /// The one note on the completed repetitions that missed their precondition (with their
    /// count), or `None` when every one met it.
    fn not_met(&self) -> Option<Warning> {
        let done: Vec<&RepResult> = self.reps.iter().filter(|r| r.complete).collect();
        let missed: Vec<&RepResult> =
            done.iter().copied().filter(|r| !r.preconditions_met()).collect();
        let first = missed.first()?;
        let p = first.phases.iter().find(|p| p.timed && !p.cache.met)?;
        Some(Warning::PreconditionNotMet {
            phase: p.name.clone(),
            required: p.cache.required,
            unmet: missed.len() as u32,
            of: done.len() as u32,
            retried: self.reps.iter().map(|r| r.retried).sum(),
            resident_fraction: p.cache.resident_fraction,
            method: p.cache.method.clone(),
        })
    }
}

/// Push `w` unless it is in `warnings` already.
pub fn note_once(warnings: &mut Vec<Warning>, w: Warning) {
    if !warnings.contains(&w) {
        warnings.push(w);
    }
}

impl RepResult {
    /// Whether every timed phase had its cache precondition.
    pub fn preconditions_met(&self) -> bool {
        self.phases.iter().all(|p| !p.timed || p.cache.met)
    }

    /// Whether the repetition is part of its test's figures: completed, every precondition met.
    pub fn counts(&self) -> bool {
        self.complete && self.preconditions_met()
    }

    /// The figure a comparison ranks: MiB/s for data tests, ops/s for fileset tests (a stat or
    /// unlink phase moves no bytes), or what the test declares: [`Figure::value`] with the test's
    /// [`TestResult::figure`] once [`TestResult::finalize`] has run.
    pub fn figure(&self) -> f64 {
        if let Some(f) = self.figure {
            return f.value(self);
        }
        if self.file_ops > 0 {
            self.ops_per_s
        } else {
            self.mib_per_s
        }
    }

    /// Latency of one op kind, if any were done.
    pub fn latency_of(&self, op: OpKind) -> Option<&OpLatency> {
        self.latency.iter().find(|l| l.op == op)
    }

    /// The main op: the data op with the most operations, or for a fileset test the fileset
    /// op with the most.
    pub fn main_op(&self) -> Option<&OpLatency> {
        self.latency
            .iter()
            .filter(|l| l.op.is_data())
            .max_by_key(|l| l.count)
            .or_else(|| self.latency.iter().filter(|l| l.op.is_fileset()).max_by_key(|l| l.count))
    }
}

/// serde: leave a zero counter out of the JSON.
fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// serde: leave a zero count out of the JSON.
fn is_zero_u32(x: &u32) -> bool {
    *x == 0
}

/// Summarise completed repetitions: throughput, operation rate and elapsed seconds, ranked on
/// `figure`.
pub fn summarize(figure: Figure, reps: &[&RepResult]) -> Option<Summary> {
    let col = |f: &dyn Fn(&RepResult) -> f64| stats(&reps.iter().map(|r| f(r)).collect::<Vec<_>>());
    Some(Summary {
        n: reps.len() as u32,
        figure,
        mib_per_s: col(&|r| r.mib_per_s)?,
        ops_per_s: col(&|r| r.ops_per_s)?,
        elapsed_s: col(&|r| r.wall_nanos as f64 / 1e9)?,
    })
}

/// The cache method of a phase whose files it creates (nothing can be resident).
pub const CREATED: &str = "file created by this phase";

#[cfg(test)]
mod tests {
    use super::*;

    /// A phase stored before threads had records of their own reads with none, and one with
    /// them writes and reads them back; a phase without any writes no `per_thread` key.
    #[test]
    fn per_thread_records_are_optional_and_round_trip() {
        let old = serde_json::to_value(PhaseResult::default()).expect("serialises");
        assert!(old.get("per_thread").is_none(), "{old}");
        let back: PhaseResult = serde_json::from_value(old).expect("an old phase reads");
        assert!(back.per_thread.is_empty());
        let mut h = crate::stats::latency::new_histogram();
        h.record_n(70_000, 10).expect("in range");
        let t = ThreadResult {
            wall_nanos: 5,
            bytes_read: 40960,
            data_ops: 10,
            latency: vec![crate::model::latency::thread_latency(OpKind::Read, &h)],
            ..ThreadResult::default()
        };
        let p = PhaseResult { per_thread: vec![t.clone(), t], ..PhaseResult::default() };
        let v = serde_json::to_value(&p).expect("serialises");
        let back: PhaseResult = serde_json::from_value(v).expect("reads back");
        assert_eq!(back.per_thread.len(), 2);
        let l = &back.per_thread[1].latency[0];
        assert_eq!((l.count, l.percentiles_nanos.len(), l.fio_buckets.len()), (10, 17, 32));
        assert_eq!(l.fio_buckets[15], 10, "70 µs: fio's (50, 100] µs bucket");
        // --min-time passes added up: a thread's passes are not kept apart, so none is kept.
        let mut summed = back.clone();
        summed.add_pass(&back);
        assert!(summed.per_thread.is_empty() && summed.passes() == 2);
    }

    #[test]
    fn warnings_are_json_objects_with_kind_fields_and_message_and_read_back() {
        let ws = vec![
            Warning::Noisy { cv: 0.25 },
            Warning::TraceIncomplete {
                phase: "write".into(),
                events_lost: 3,
                events_over_limit: 0,
            },
            Warning::Stonewalled,
            Warning::Note { text: "old words".into() },
        ];
        let v = serde_json::to_value(&ws).unwrap();
        assert_eq!(v[0]["kind"], "noisy");
        assert_eq!(v[0]["cv"], 0.25);
        assert_eq!(v[0]["message"], ws[0].to_string());
        assert_eq!(v[1]["kind"], "trace_incomplete");
        assert_eq!(v[1]["events_lost"], 3);
        assert_eq!(v[2]["kind"], "stonewalled");
        assert_eq!(v[2]["message"], ws[2].to_string());
        assert_eq!(v[3]["text"], "old words");
        let back: Vec<Warning> = serde_json::from_value(v).unwrap();
        assert_eq!(back, ws);
        // `message` may be missing (it is only for readers).
        let w: Warning = serde_json::from_str(r#"{"kind":"short_phase","wall_nanos":5}"#).unwrap();
        assert_eq!(w, Warning::ShortPhase { wall_nanos: 5 });
    }

    #[test]
    fn summary_ranks_on_the_figure_and_reports_elapsed_seconds() {
        assert!(summarize(Figure::MibPerS, &[]).is_none());
        let rep = |mib: f64, ops: f64, secs: f64| RepResult {
            complete: true,
            mib_per_s: mib,
            ops_per_s: ops,
            wall_nanos: (secs * 1e9) as u64,
            ..Default::default()
        };
        let reps = [rep(0.0, 100.0, 2.0), rep(0.0, 300.0, 1.0), rep(0.0, 200.0, 1.5)];
        let refs: Vec<&RepResult> = reps.iter().collect();
        let s = summarize(Figure::OpsPerS, &refs).unwrap();
        assert_eq!(s.n, 3);
        assert_eq!(s.merit().median, 200.0);
        assert_eq!(s.mib_per_s.median, 0.0);
        assert_eq!(s.elapsed_s.median, 1.5);
        assert_eq!((s.elapsed_s.min, s.elapsed_s.max), (1.0, 2.0));
        let s = summarize(Figure::MibPerS, &refs).unwrap();
        assert_eq!(s.merit().median, 0.0);
    }
}
