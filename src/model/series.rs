//! What a timed phase did over time, and how its load was paced: the interval series
//! ([`PhaseSeries`]), a fixed rate's outcome ([`RateOutcome`]) and a steady-state criterion's
//! ([`SteadyOutcome`]); and the load a phase asks for ([`Load`]), as validation leaves it.
//!
//! A phase total hides *when* the work slowed (a writer stalling at the dirty limit, a device
//! pausing); the series keeps one point per interval. It is kept compact in JSON and in the
//! store: one array of numbers per quantity, not one object per point, so a phase of 200
//! points costs a few kilobytes.
//!
//! Latency percentiles per interval come from a coarse log-linear histogram (4 sub-buckets per
//! power of two; a value is reported as its bucket's midpoint, within 12.5% of the true
//! value); the phase's own percentiles ([`super::result::OpLatency`]) stay exact to 0.1%.

use serde::{Deserialize, Serialize};

/// Shortest interval of a series: shorter ones cost more than they show.
pub const MIN_INTERVAL_NANOS: u64 = 10_000_000;

/// One phase over time: point `i` covers `[i * interval_nanos, (i + 1) * interval_nanos)` from
/// the release of the phase's workers (the last point may be partial: it ends with the phase).
/// Every array has one entry per point; the sampled ones (`dirty_bytes`, `writeback_bytes`)
/// hold the last sample taken by the end of the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSeries {
    /// Length of one interval.
    pub interval_nanos: u64,
    /// Bytes read that completed in each interval.
    #[serde(default)]
    pub read_bytes: Vec<u64>,
    /// Bytes written.
    #[serde(default)]
    pub write_bytes: Vec<u64>,
    /// Reads completed.
    #[serde(default)]
    pub read_ops: Vec<u64>,
    /// Writes completed.
    #[serde(default)]
    pub write_ops: Vec<u64>,
    /// Every op completed (reads, writes, syncs, file-set ops).
    #[serde(default)]
    pub ops: Vec<u64>,
    /// Median latency of the ops completed in the interval (0 when none).
    #[serde(default)]
    pub p50_nanos: Vec<u64>,
    /// 99th percentile.
    #[serde(default)]
    pub p99_nanos: Vec<u64>,
    /// Longest latency (exact).
    #[serde(default)]
    pub max_nanos: Vec<u64>,
    /// `Dirty` of `/proc/meminfo`, sampled by the phase's runner thread (empty when unread).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirty_bytes: Vec<u64>,
    /// `Writeback` of `/proc/meminfo`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writeback_bytes: Vec<u64>,
}

impl PhaseSeries {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// No points.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// MiB/s (read + written) of each point; the last, partial point is scaled by the share of
    /// the interval the phase lasted, `last_fraction`.
    pub fn mib_per_s(&self, last_fraction: f64) -> Vec<f64> {
        let secs = self.interval_nanos as f64 / 1e9;
        let n = self.len();
        (0..n)
            .map(|i| {
                let b = self.read_bytes.get(i).copied().unwrap_or(0)
                    + self.write_bytes.get(i).copied().unwrap_or(0);
                let s = if i + 1 == n { secs * last_fraction.clamp(0.01, 1.0) } else { secs };
                b as f64 / (1u64 << 20) as f64 / s
            })
            .collect()
    }

    /// Stalls: runs of consecutive intervals in which no op completed, between intervals that
    /// had completions (so ops were in flight), as (first interval, length in intervals).
    pub fn stalls(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut i = 0;
        let n = self.ops.len();
        while i < n {
            if self.ops[i] == 0 && i > 0 {
                let start = i;
                while i < n && self.ops[i] == 0 {
                    i += 1;
                }
                if i < n {
                    v.push((start, i - start));
                }
            } else {
                i += 1;
            }
        }
        v
    }
}

/// How a phase's load is paced: closed loop (none of these), a fixed rate (open loop), and
/// think time; and when a time-based phase may end early (a steady-state criterion).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Ops per second asked of each thread (`rate_iops` / `rate` divided by the op size, per
    /// thread or split over the test's threads by `rate_per`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_ops_per_s: Option<f64>,
    /// The rate as written: ops per second of the test (every thread together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_ops_per_s: Option<f64>,
    /// Pause after every `think_every` ops (`thinktime`), nanoseconds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_nanos: u64,
    /// Ops between pauses (`thinktime_blocks`, default 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub think_every: u64,
    /// Steady-state criterion (`ss`), with `ss_dur` and `ss_ramp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<Steady>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Load {
    /// Nothing paced: the closed loop.
    pub fn is_closed(&self) -> bool {
        self.thread_ops_per_s.is_none() && self.think_nanos == 0
    }
}

/// fio's steady-state metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyMetric {
    /// Every 1 s sample of ops/s within the limit of the window's mean.
    Iops,
    /// The least-squares slope of ops/s over the window, per second, within the limit of the
    /// mean.
    IopsSlope,
    /// As `Iops`, on bytes per second.
    Bw,
    /// As `IopsSlope`, on bytes per second.
    BwSlope,
}

impl SteadyMetric {
    /// The name as written (`iops_slope`).
    pub fn name(self) -> &'static str {
        match self {
            SteadyMetric::Iops => "iops",
            SteadyMetric::IopsSlope => "iops_slope",
            SteadyMetric::Bw => "bw",
            SteadyMetric::BwSlope => "bw_slope",
        }
    }
}

/// A steady-state criterion: the phase ends once `metric` stays within `limit_percent` over
/// the last `window_secs` seconds (after `ramp_secs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    /// What is checked.
    pub metric: SteadyMetric,
    /// Limit, percent of the window's mean.
    pub limit_percent: f64,
    /// Window (`ss_dur`), whole seconds.
    pub window_secs: u32,
    /// Seconds ignored at the start (`ss_ramp`).
    pub ramp_secs: u32,
}

/// A fixed rate's outcome: asked against achieved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RateOutcome {
    /// Ops per second asked (every thread together).
    pub asked_ops_per_s: f64,
    /// Ops per second achieved (ops completed over the phase's wall time).
    pub achieved_ops_per_s: f64,
}

impl RateOutcome {
    /// Achieved over asked (1.0 when met).
    pub fn ratio(&self) -> f64 {
        if self.asked_ops_per_s > 0.0 {
            self.achieved_ops_per_s / self.asked_ops_per_s
        } else {
            1.0
        }
    }

    /// Fell short of the asked rate by more than 2% (the pacing's own tolerance).
    pub fn short(&self) -> bool {
        self.ratio() < 0.98
    }

    /// `asked 500/s, achieved 431/s (86%)`.
    pub fn words(&self) -> String {
        format!(
            "asked {:.0}/s, achieved {:.0}/s ({:.0}%)",
            self.asked_ops_per_s,
            self.achieved_ops_per_s,
            100.0 * self.ratio()
        )
    }
}

/// A steady-state criterion's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyOutcome {
    /// The criterion.
    pub criterion: Steady,
    /// Seconds into the phase at which it held (the phase ended there); `None`: it never did.
    pub held_at_secs: Option<f64>,
}

impl SteadyOutcome {
    /// `steady state (iops within 5% over 10 s) held at 24 s` / `... never held`.
    pub fn words(&self) -> String {
        let c = &self.criterion;
        let what = format!(
            "steady state ({} within {}% over {} s)",
            c.metric.name(),
            c.limit_percent,
            c.window_secs
        );
        match self.held_at_secs {
            Some(s) => format!("{what} held at {s:.1} s"),
            None => format!("{what} never held"),
        }
    }
}

/// What a paced or steady-state phase reports about its load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadOutcome {
    /// The fixed rate, asked and achieved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateOutcome>,
    /// The steady-state criterion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyOutcome>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_are_empty_runs_between_completions() {
        let s = PhaseSeries { ops: vec![5, 0, 0, 4, 0, 3, 0], ..PhaseSeries::default() };
        // The trailing empty interval has nothing after it: the phase ended, not a stall.
        assert_eq!(s.stalls(), vec![(1, 2), (4, 1)]);
    }

    #[test]
    fn rate_words_say_the_shortfall() {
        let r = RateOutcome { asked_ops_per_s: 500.0, achieved_ops_per_s: 431.0 };
        assert_eq!(r.words(), "asked 500/s, achieved 431/s (86%)");
        assert!(r.short());
        assert!(!RateOutcome { asked_ops_per_s: 500.0, achieved_ops_per_s: 495.0 }.short());
    }

    #[test]
    fn old_records_read_without_series() {
        let s: PhaseSeries = serde_json::from_str(r#"{"interval_nanos": 20000000}"#).unwrap();
        assert!(s.is_empty());
    }
}
