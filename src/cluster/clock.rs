//! One clock for all ranks.
//!
//! When the MPI library sets `MPI_WTIME_IS_GLOBAL`, `MPI_Wtime` already is one clock. Otherwise
//! each rank measures its offset to rank 0 with Cristian's algorithm (F. Cristian, "Probabilistic
//! clock synchronization", Distributed Computing 3, 1989): the rank sends its time `t0`, rank 0
//! answers with its time `ts`, the rank reads `t1` on arrival; rank 0's clock read `ts` somewhere
//! in `[t0, t1]`, so `offset = ts - (t0 + t1) / 2` is within `± (t1 - t0) / 2`. Of
//! [`ROUNDS`] exchanges or more (until the bound is below [`GOOD_ENOUGH_S`], at most
//! [`MAX_ROUNDS`]) the one with the shortest round trip is kept. Ranks are served one at a
//! time so rank 0 answers at once. Drift during the run is not corrected: on hosts kept in step
//! by NTP/PTP it is microseconds per minute, far below the phases' lengths.

use super::{ClusterError, Comm};
use crate::model::cluster::ClockSync;
use std::time::Instant;

/// Exchanges per rank, at least.
pub const ROUNDS: usize = 16;
/// More exchanges (up to [`MAX_ROUNDS`]) while the best bound is wider than this: on a loaded
/// host a round trip can wait for the scheduler for milliseconds.
pub const GOOD_ENOUGH_S: f64 = 50e-6;
/// Exchanges per rank, at most.
pub const MAX_ROUNDS: usize = 1000;

/// Measure this rank's clock against rank 0's. Collective: every rank calls it.
pub fn sync(comm: &dyn Comm) -> Result<ClockSync, ClusterError> {
    if comm.size() == 1 {
        return Ok(ClockSync { method: "single process".into(), ..Default::default() });
    }
    if comm.wtime_is_global() {
        return Ok(ClockSync { method: "MPI_WTIME_IS_GLOBAL".into(), ..Default::default() });
    }
    let me = comm.rank();
    let mut best = ClockSync {
        method: "ping-pong against rank 0".into(),
        offset_s: 0.0,
        uncertainty_s: f64::INFINITY,
    };
    if me == 0 {
        best.uncertainty_s = 0.0;
        for r in 1..comm.size() {
            // The rank says when it has enough with a NaN instead of its time.
            loop {
                let t0 = comm.recv_f64(r)?;
                if t0.is_nan() {
                    break;
                }
                comm.send_f64(r, comm.wtime())?;
            }
        }
    } else {
        let mut rounds = 0;
        while rounds < ROUNDS || (best.uncertainty_s > GOOD_ENOUGH_S && rounds < MAX_ROUNDS) {
            let t0 = comm.wtime();
            comm.send_f64(0, t0)?;
            let ts = comm.recv_f64(0)?;
            let t1 = comm.wtime();
            let (offset, err) = estimate(t0, ts, t1);
            if err < best.uncertainty_s {
                best.offset_s = offset;
                best.uncertainty_s = err;
            }
            rounds += 1;
        }
        comm.send_f64(0, f64::NAN)?;
    }
    comm.barrier("the clock synchronisation")?;
    Ok(best)
}

/// Cristian's estimate from one exchange: (offset to add to the local clock, its bound).
pub fn estimate(t0: f64, ts: f64, t1: f64) -> (f64, f64) {
    (ts - (t0 + t1) / 2.0, (t1 - t0) / 2.0)
}

/// Turns this process's `Instant`s into seconds on rank 0's clock.
pub struct GlobalClock<'a> {
    comm: &'a dyn Comm,
    offset_s: f64,
}

impl<'a> GlobalClock<'a> {
    /// A clock with the offset measured by [`sync`].
    pub fn new(comm: &'a dyn Comm, sync: &ClockSync) -> Self {
        GlobalClock { comm, offset_s: sync.offset_s }
    }

    /// Rank 0's clock now.
    pub fn now(&self) -> f64 {
        self.comm.wtime() + self.offset_s
    }

    /// Sleep until rank 0's clock reads `t` (at once if it is past): a sleep to 2 ms before,
    /// then polling the clock.
    pub fn sleep_until(&self, t: f64) {
        loop {
            let left = t - self.now();
            if left <= 0.0 {
                return;
            }
            if left > 0.002 {
                std::thread::sleep(std::time::Duration::from_secs_f64(left - 0.002));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// `t` (an earlier instant of this process) on rank 0's clock: both clocks are read now and
    /// the elapsed time since `t` is subtracted.
    pub fn at(&self, t: Instant) -> f64 {
        let now = Instant::now();
        let g = self.now();
        if t <= now {
            g - (now - t).as_secs_f64()
        } else {
            g + (t - now).as_secs_f64()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cristian_estimate_bounds_the_true_offset() {
        // Rank 0's clock is 5 s ahead; the request takes 1 ms, the answer 3 ms.
        let true_offset = 5.0;
        let t0 = 100.0;
        let ts = t0 + 0.001 + true_offset;
        let t1 = t0 + 0.004;
        let (off, err) = estimate(t0, ts, t1);
        assert!((off - true_offset).abs() <= err + 1e-12, "{off} ± {err}");
        assert!((err - 0.002).abs() < 1e-12);
    }

    #[test]
    fn single_process_needs_no_offset() {
        let c = super::super::Single::default();
        let s = sync(&c).unwrap();
        assert_eq!(s.method, "single process");
        assert_eq!(s.offset_s, 0.0);
        let g = GlobalClock::new(&c, &s);
        let t = Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let later = g.now();
        let then = g.at(t);
        assert!(later - then >= 0.019, "{then} {later}");
    }
}
