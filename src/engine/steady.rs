//! Steady state for time-based phases (fio's `ss`, `ss_dur`, `ss_ramp`): the phase's runner
//! thread samples the bytes its workers completed once a second ([`SteadyWatch::sample`]), and
//! the phase ends as soon as the last `ss_dur` seconds meet the criterion, or runs its time and
//! says the criterion never held.
//!
//! The criteria, as fio 3.33's `steadystate.c` computes them: `iops:N%` / `bw:N%`: the
//! largest distance of a sample of the window from the window's mean is less than N% of the
//! mean; `iops_slope:N%` / `bw_slope:N%`: the least-squares slope of the window's samples
//! (per second) is less than N% of its mean in size (strictly less, as fio's `<`). Both are
//! relative to the mean, so they are checked on bytes per second; ops per second is the same
//! series divided by the op size (exactly so for fixed sizes; with mixed sizes the byte rate
//! stands in for it, and `fsbench fio` refuses fio's iops criteria there). Samples come
//! from the workers' progress counters (already published per reap), so the hot loop pays
//! nothing for them.

use crate::model::series::{Steady, SteadyMeasures};

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

    /// The last window (fio's): the last `window_secs` samples after the ramp, fewer when
    /// fewer were taken; bytes per second, oldest first.
    pub fn window(&self) -> Vec<f64> {
        let w = self.criterion.window_secs.max(2) as usize;
        let after = self.rates.get(self.criterion.ramp_secs as usize..).unwrap_or(&[]);
        after[after.len().saturating_sub(w)..].to_vec()
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
    let Some(m) = SteadyMeasures::of(&rates[rates.len() - w..]) else {
        return false;
    };
    if m.mean <= 0.0 {
        return false;
    }
    // fio: `criterion < limit` (a NaN, from a zero mean, never holds).
    m.criterion_percent(c.metric).abs() < c.limit_percent
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::series::SteadyMetric;

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
        assert_eq!(w.window(), vec![1000.0, 3000.0]);
    }

    #[test]
    fn a_deviation_or_slope_equal_to_the_limit_does_not_hold_as_in_fio() {
        // Mean 100, largest deviation 10: 10% is not below a 10% limit (fio's `<`).
        let edge = [90.0, 110.0, 100.0, 100.0];
        assert!(!holds(&edge, &c(SteadyMetric::Iops, 10.0, 4, 0)));
        assert!(holds(&edge, &c(SteadyMetric::Iops, 10.001, 4, 0)));
        // Slope 10/s on a mean of 100 (90, 100, 110): exactly 10%.
        let rising = [90.0, 100.0, 110.0];
        assert!(!holds(&rising, &c(SteadyMetric::BwSlope, 10.0, 3, 0)));
        assert!(holds(&rising, &c(SteadyMetric::BwSlope, 10.001, 3, 0)));
        // A falling series is judged on the slope's size.
        let falling = [110.0, 100.0, 90.0];
        assert!(holds(&falling, &c(SteadyMetric::IopsSlope, 10.001, 3, 0)));
    }

    #[test]
    fn the_window_skips_the_ramp_and_keeps_the_last_seconds() {
        let mut w = SteadyWatch::new(c(SteadyMetric::Bw, 0.5, 3, 2));
        for b in [100, 300, 600, 1000, 1500] {
            w.sample(b);
        }
        // Samples 100, 200, 300, 400, 500; the ramp's two skipped, the last three kept.
        assert_eq!(w.window(), vec![300.0, 400.0, 500.0]);
        let mut short = SteadyWatch::new(c(SteadyMetric::Bw, 0.5, 4, 1));
        short.sample(10);
        short.sample(30);
        assert_eq!(short.window(), vec![20.0]);
    }
}
