//! Steady state for time-based phases (fio's `ss`, `ss_dur`, `ss_ramp`): the phase's runner
//! thread samples the bytes its workers completed once a second ([`SteadyWatch::sample`]), and
//! the phase ends as soon as the last `ss_dur` seconds meet the criterion, or runs its time and
//! says the criterion never held.
//!
//! The criteria, as fio states them: `iops:N%` / `bw:N%`: every sample of the window within
//! N% of the window's mean; `iops_slope:N%` / `bw_slope:N%`: the least-squares slope of the
//! window's samples (per second) within N% of its mean. Both are relative to the mean, so they
//! are checked on bytes per second; ops per second is the same series divided by the op size
//! (exactly so for fixed sizes; with mixed sizes the byte rate stands in for it). Samples come
//! from the workers' progress counters (already published per reap), so the hot loop pays
//! nothing for them.

use crate::model::series::{Steady, SteadyMetric};

/// The runner's view of a steady-state criterion during a phase.
pub struct SteadyWatch {
    criterion: Steady,
    /// Bytes per second of each whole second since the release.
    rates: Vec<f64>,
    last_bytes: u64,
}

impl SteadyWatch {
    /// Watch `criterion`.
    pub fn new(criterion: Steady) -> SteadyWatch {
        SteadyWatch { criterion, rates: Vec::new(), last_bytes: 0 }
    }

    /// Whole seconds sampled.
    pub fn seconds(&self) -> usize {
        self.rates.len()
    }

    /// The workers had completed `bytes` when second `rates.len() + 1` ended; `true` when the
    /// criterion now holds.
    pub fn sample(&mut self, bytes: u64) -> bool {
        self.rates.push(bytes.saturating_sub(self.last_bytes) as f64);
        self.last_bytes = bytes;
        holds(&self.rates, &self.criterion)
    }
}

/// Whether the last `window_secs` of `rates` (after `ramp_secs`) meet `c`.
pub fn holds(rates: &[f64], c: &Steady) -> bool {
    let w = c.window_secs.max(2) as usize;
    if rates.len() < c.ramp_secs as usize + w {
        return false;
    }
    let win = &rates[rates.len() - w..];
    let mean = win.iter().sum::<f64>() / w as f64;
    if mean <= 0.0 {
        return false;
    }
    let limit = c.limit_percent / 100.0 * mean;
    match c.metric {
        SteadyMetric::Iops | SteadyMetric::Bw => win.iter().all(|r| (r - mean).abs() <= limit),
        SteadyMetric::IopsSlope | SteadyMetric::BwSlope => {
            // Least squares over x = 0..w.
            let xm = (w as f64 - 1.0) / 2.0;
            let (mut sxy, mut sxx) = (0.0, 0.0);
            for (i, r) in win.iter().enumerate() {
                let dx = i as f64 - xm;
                sxy += dx * (r - mean);
                sxx += dx * dx;
            }
            (sxy / sxx).abs() <= limit
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(metric: SteadyMetric, pct: f64, window: u32, ramp: u32) -> Steady {
        Steady { metric, limit_percent: pct, window_secs: window, ramp_secs: ramp }
    }

    #[test]
    fn spread_within_the_limit_of_the_mean() {
        let flat = [100.0, 103.0, 98.0, 101.0];
        assert!(holds(&flat, &c(SteadyMetric::Iops, 5.0, 4, 0)));
        assert!(!holds(&flat, &c(SteadyMetric::Iops, 1.0, 4, 0)));
        // Not enough seconds after the ramp yet.
        assert!(!holds(&flat, &c(SteadyMetric::Bw, 5.0, 4, 1)));
        // Only the last window counts: a slow start is forgotten.
        let settling = [10.0, 50.0, 100.0, 101.0, 99.0];
        assert!(holds(&settling, &c(SteadyMetric::Bw, 5.0, 3, 0)));
    }

    #[test]
    fn slope_within_the_limit_of_the_mean() {
        let rising = [100.0, 110.0, 120.0, 130.0];
        // Slope 10/s on a mean of 115: 8.7%.
        assert!(!holds(&rising, &c(SteadyMetric::IopsSlope, 5.0, 4, 0)));
        assert!(holds(&rising, &c(SteadyMetric::BwSlope, 10.0, 4, 0)));
        // A noisy but level series has a small slope while its spread is large.
        let level = [80.0, 120.0, 80.0, 120.0, 80.0, 120.0];
        assert!(holds(&level, &c(SteadyMetric::IopsSlope, 5.0, 6, 0)));
        assert!(!holds(&level, &c(SteadyMetric::Iops, 5.0, 6, 0)));
    }

    #[test]
    fn the_watch_samples_per_second_deltas() {
        let mut w = SteadyWatch::new(c(SteadyMetric::Bw, 1.0, 2, 0));
        assert!(!w.sample(1000));
        assert!(w.sample(2000));
        assert_eq!(w.seconds(), 2);
        assert!(!w.sample(5000));
    }
}
