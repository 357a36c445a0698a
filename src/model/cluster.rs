//! What a multi-client run adds to the result: who ran, on which clock, and each rank's share.

use crate::model::memory::MemDelta;
use crate::model::result::DeviceDelta;
use serde::{Deserialize, Serialize};

/// How ranks' timestamps were made comparable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockSync {
    /// `MPI_WTIME_IS_GLOBAL` (the MPI library promises one clock), `ping-pong against rank 0`
    /// (Cristian's method, the offset with the shortest round trip of several), or `single
    /// process`.
    pub method: String,
    /// Seconds added to this rank's `MPI_Wtime` to get rank 0's clock.
    pub offset_s: f64,
    /// Half the round trip of the exchange the offset came from: the offset is within
    /// ± this of the truth (assuming the clocks do not drift during the run).
    pub uncertainty_s: f64,
}

/// One rank of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankInfo {
    /// MPI rank.
    pub rank: u32,
    /// Host name (`MPI_Get_processor_name`).
    pub host: String,
    /// Process id on that host.
    pub pid: u32,
    /// Its work directory.
    pub dir: String,
    /// Its clock against rank 0's.
    pub clock: ClockSync,
    /// CLOCK_MONOTONIC minus the common clock, seconds, read together after the clock
    /// synchronisation: equal (within the uncertainties) on ranks of one host if the offsets
    /// are right, since they share CLOCK_MONOTONIC.
    #[serde(default)]
    pub monotonic_minus_common_s: f64,
}

/// The cluster part of a run report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterInfo {
    /// Number of ranks.
    pub ranks: u32,
    /// Distinct hosts, in rank order of first appearance.
    pub hosts: Vec<String>,
    /// `file-per-process` (a work directory per rank).
    pub mode: String,
    /// Stonewall in seconds, when set.
    pub stonewall_s: Option<f64>,
    /// Every rank.
    pub rank_info: Vec<RankInfo>,
    /// The largest clock uncertainty of any rank, seconds.
    pub clock_uncertainty_s: f64,
    /// A check of the offsets: on each host with several ranks, the spread (max - min) of
    /// their [`RankInfo::monotonic_minus_common_s`]; the largest over hosts. None when no host
    /// has two ranks.
    #[serde(default)]
    pub clock_check_same_host_s: Option<f64>,
}

impl ClusterInfo {
    /// [`ClusterInfo::clock_check_same_host_s`] from the ranks' readings.
    pub fn same_host_check(ranks: &[RankInfo]) -> Option<f64> {
        let mut worst: Option<f64> = None;
        for r in ranks {
            let same: Vec<f64> = ranks
                .iter()
                .filter(|o| o.host == r.host)
                .map(|o| o.monotonic_minus_common_s)
                .collect();
            if same.len() < 2 {
                continue;
            }
            let hi = same.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lo = same.iter().copied().fold(f64::INFINITY, f64::min);
            worst = Some(worst.unwrap_or(0.0).max(hi - lo));
        }
        worst
    }
}

/// One rank's share of one repetition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFigure {
    /// MPI rank.
    pub rank: u32,
    /// Its host.
    pub host: String,
    /// Bytes read + written in timed phases.
    pub bytes: u64,
    /// Operations in timed phases (data ops, or fileset ops for fileset tests).
    pub ops: u64,
    /// Each timed phase: when its first worker started and its last one ended, in seconds on
    /// rank 0's clock.
    pub windows: Vec<PhaseWindow>,
    /// Sum of this rank's own timed-phase wall times, nanoseconds.
    pub wall_nanos: u64,
    /// bytes / its own wall time, MiB/s.
    pub mib_per_s: f64,
    /// ops / its own wall time.
    pub ops_per_s: f64,
    /// User + system CPU of its timed phases, nanoseconds.
    pub cpu_nanos: u64,
}

/// A timed phase on one rank, on the global clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseWindow {
    /// Phase name.
    pub phase: String,
    /// First worker released, seconds on rank 0's clock.
    pub start_s: f64,
    /// Last worker done, seconds on rank 0's clock.
    pub end_s: f64,
}

/// Spread of the per-rank figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Lowest per-rank figure (MiB/s, or ops/s for fileset tests).
    pub min: f64,
    /// Median per-rank figure.
    pub median: f64,
    /// Highest per-rank figure.
    pub max: f64,
    /// The rank with the lowest figure.
    pub slowest_rank: u32,
    /// Its host.
    pub slowest_host: String,
}

/// One host's share of a repetition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostShare {
    /// Host name.
    pub host: String,
    /// Ranks on it.
    pub ranks: Vec<u32>,
    /// Bytes read + written by its ranks in timed phases.
    pub bytes: u64,
    /// User CPU of its ranks' timed phases.
    pub cpu_user_nanos: u64,
    /// System CPU of its ranks' timed phases.
    pub cpu_sys_nanos: u64,
    /// Its block devices over the timed phases (read once per host: ranks on one host share
    /// them).
    pub device: Option<DeviceDelta>,
    /// Its observations per phase (timed or not): memory and devices, read by its first rank.
    #[serde(default)]
    pub phases: Vec<HostPhase>,
}

/// What one host's observers saw during one phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostPhase {
    /// Phase name.
    pub phase: String,
    /// Whether it counts in the figures.
    pub timed: bool,
    /// Page cache, dirty and writeback memory of the host before and after it.
    pub memory: Option<MemDelta>,
    /// The host's block devices over it.
    pub device: Option<DeviceDelta>,
}

/// What a multi-client repetition adds: its aggregate is over all ranks, these are the parts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterRep {
    /// Number of ranks.
    pub ranks: u32,
    /// Every rank's figures.
    pub per_rank: Vec<RankFigure>,
    /// Spread of per-rank figures.
    pub spread: Spread,
    /// Per host.
    pub per_host: Vec<HostShare>,
    /// A stonewall ended the timed phases.
    pub stonewalled: bool,
    /// Bytes all ranks moved in timed phases (with stonewalling, more than the figure counts).
    pub total_bytes: u64,
    /// Operations all ranks did in timed phases.
    pub total_ops: u64,
}
