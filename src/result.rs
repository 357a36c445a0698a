//! The one result type. The terminal table, JSON, CSV, the SQLite store and the HTML report are
//! all produced from these structs; units are in the field names.

use crate::workload::{CacheReq, OpKind};
use serde::{Deserialize, Serialize};

/// A whole `fsbench run`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// fsbench version that produced this.
    pub fsbench_version: String,
    /// Start time, seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// The machine.
    pub host: crate::observe::host::HostInfo,
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
    pub cluster: Option<crate::cluster::model::ClusterInfo>,
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
    /// A repetition failed; `reason` says how (e.g. ENOSPC at which offset).
    Failed {
        /// Human-readable cause.
        reason: String,
    },
    /// Stopped by Ctrl-C/SIGTERM; figures are what was measured so far.
    Interrupted,
    /// Not run (e.g. the run was interrupted before it).
    Skipped {
        /// Why.
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
    /// Statistics of throughput over the completed repetitions.
    pub summary: Option<Summary>,
    /// Things the user should know about these figures.
    pub warnings: Vec<String>,
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
    /// data_ops / wall.
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
    pub extents: Option<crate::observe::extents::ExtentSummary>,
    /// Fileset tests: pattern operations in timed phases; `ops_per_s` is these per second.
    #[serde(default)]
    pub file_ops: u64,
    /// Multi-client runs (`--mpi`): each rank's share, the spread and the per-host breakdown;
    /// the figures above are the aggregate over all ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::cluster::model::ClusterRep>,
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
    /// Latency per op kind.
    pub latency: Vec<OpLatency>,
    /// The cache state checked before the phase.
    pub cache: CacheCheck,
    /// Block-device counter changes over the phase, when the target has devices.
    pub device: Option<DeviceDelta>,
    /// Time spent inside fsync/fdatasync, summed over threads.
    pub sync_nanos: u64,
    /// Page cache, dirty and writeback memory (and a filesystem daemon's RSS) around the phase.
    pub memory: Option<crate::observe::memory::MemDelta>,
    /// Block-layer trace of the phase (`--trace`).
    pub trace: Option<crate::observe::trace::TraceSummary>,
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
    pub histogram_b64: String,
}

/// The cache precondition as checked.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// Time the device was busy (io_ticks), milliseconds.
    pub busy_ms: u64,
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
    }
}

/// Repetition statistics of the throughput (MiB/s).
///
/// The confidence interval is for the mean, from Student's t distribution (two-sided 95%), which
/// assumes roughly normal repetition-to-repetition noise; with one repetition there is none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Repetitions counted.
    pub n: u32,
    /// Median MiB/s.
    pub median: f64,
    /// Mean MiB/s.
    pub mean: f64,
    /// Minimum MiB/s.
    pub min: f64,
    /// Maximum MiB/s.
    pub max: f64,
    /// Sample standard deviation / mean (0 with one repetition).
    pub cv: f64,
    /// 95% CI of the mean, low end (None with one repetition).
    pub ci95_low: Option<f64>,
    /// 95% CI of the mean, high end.
    pub ci95_high: Option<f64>,
    /// Median ops/s.
    pub ops_per_s_median: f64,
}

impl TestResult {
    /// The repetition whose throughput is the median (for per-test detail columns).
    pub fn median_rep(&self) -> Option<&RepResult> {
        let mut idx: Vec<usize> = (0..self.reps.len()).filter(|i| self.reps[*i].complete).collect();
        if idx.is_empty() {
            return self.reps.last();
        }
        idx.sort_by(|a, b| self.reps[*a].mib_per_s.total_cmp(&self.reps[*b].mib_per_s));
        idx.get(idx.len().saturating_sub(1) / 2).map(|i| &self.reps[*i])
    }

    /// Whether the test produced trustworthy figures.
    pub fn is_ok(&self) -> bool {
        self.status == TestStatus::Ok
    }
}

impl RepResult {
    /// The figure a comparison ranks: MiB/s for data tests, ops/s for fileset tests (a stat or
    /// unlink phase moves no bytes).
    pub fn figure(&self) -> f64 {
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
