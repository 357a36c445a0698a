//! Flow control among the jobs that run at the same time (fio's `flow`, `flow_id`,
//! `flow_sleep`): the threads of every job in one flow keep their op counts in the ratio of
//! their jobs' weights.
//!
//! Why: fio users cap one job against another this way (a 1:8 mix of writes and reads on one
//! file, two directions of a butterfly seek); without it the faster job simply runs away.
//!
//! The rule is fio's (its `flow.c`, read, not copied): each flow has a shared op counter,
//! starting at 1, and the sum of its threads' weights; a thread whose own count over the
//! shared count is above its weight over the sum is ahead, and instead of its next op it
//! waits `flow_sleep` (after its requests in flight complete) or, without one, spins and
//! tries again at once, keeping its CPU as fio's job loop does (a yield instead let the
//! kernel's I/O work run on that CPU: butterfly.fio's two direct readers made 1.18-1.30x fio's
//! ops); otherwise the op counts, once in the shared counter and once in its own. A
//! thread that ends takes its count and weight out, so the ones left share the flow among
//! themselves.
//!
//! Cost: nothing in a phase without a flow (the worker's pacer is off). With one, each op
//! does two relaxed atomic loads, a comparison of two 128-bit products and one relaxed
//! atomic add; no lock, no allocation. The weights of every thread are summed before any
//! starts ([`Flows::of`]), as fio sums its jobs' weights when it sets them up, and the
//! threads of the flows start their I/O together ([`FlowGate::join`]), as fio starts a group.

use crate::model::job::{PhaseDef, TestDef};
use crate::model::series::Flow;
use std::sync::atomic::{AtomicU64, Ordering};

/// One flow's shared counters.
#[derive(Debug)]
struct Counter {
    id: u32,
    /// Ops counted by every thread of the flow (+ 1, as fio's).
    ops: AtomicU64,
    /// Sum of the weights of the flow's threads still running.
    weights: AtomicU64,
}

/// The flows of one timed phase of a test: its own threads' and its roles'.
#[derive(Debug, Default)]
pub struct Flows {
    counters: Vec<Counter>,
    /// Threads of any flow that have not started yet ([`FlowGate::join`]).
    waiting: AtomicU64,
}

impl Flows {
    /// The flows of `phase` (the test's own threads) and of `test`'s roles, each weight
    /// counted once per thread.
    pub fn of(test: &TestDef, phase: &PhaseDef) -> Flows {
        let mut flows = Flows::default();
        let own = std::iter::once((phase.load.flow, test.threads));
        let roles = test.roles.iter().map(|r| (r.phase.load.flow, r.threads));
        for (flow, threads) in own.chain(roles) {
            if let Some(f) = flow {
                flows.add(f, threads);
            }
        }
        flows
    }

    fn add(&mut self, f: Flow, threads: u32) {
        self.waiting.fetch_add(u64::from(threads), Ordering::Relaxed);
        let w = u64::from(f.weight) * u64::from(threads);
        match self.counters.iter().find(|c| c.id == f.id) {
            Some(c) => {
                c.weights.fetch_add(w, Ordering::Relaxed);
            }
            None => self.counters.push(Counter {
                id: f.id,
                ops: AtomicU64::new(1),
                weights: AtomicU64::new(w),
            }),
        }
    }

    /// A thread's place in `flow` (none without a flow, or for one not set up here).
    pub fn plan(&self, flow: Option<Flow>) -> Option<FlowPlan<'_>> {
        let f = flow?;
        let counter = self.counters.iter().find(|c| c.id == f.id)?;
        Some(FlowPlan {
            counter,
            weight: u64::from(f.weight),
            sleep_nanos: f.sleep_nanos,
            waiting: &self.waiting,
        })
    }
}

/// How long a thread of a flow waits for the others to start ([`FlowGate::join`]) before it
/// starts anyway (one of them failed to set up).
const JOIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What a worker is given of its flow (see [`FlowGate`]).
#[derive(Debug, Clone, Copy)]
pub struct FlowPlan<'a> {
    counter: &'a Counter,
    weight: u64,
    sleep_nanos: u64,
    waiting: &'a AtomicU64,
}

impl FlowPlan<'_> {
    /// A thread that could not start (its engine failed to set up): out of the flow, and no
    /// longer waited for.
    pub fn never_started(&self) {
        self.counter.weights.fetch_sub(self.weight, Ordering::Relaxed);
        self.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A worker thread's gate into its flow; dropping it takes the thread's count and weight out
/// of the flow.
#[derive(Debug)]
pub struct FlowGate<'a> {
    plan: FlowPlan<'a>,
    /// Ops this thread counted.
    mine: u64,
    /// Found ahead with a `flow_sleep` while requests were in flight: they all complete
    /// before it sleeps and asks again (fio's `io_u_quiesce`), whatever the others do
    /// meanwhile.
    draining: bool,
}

impl<'a> FlowGate<'a> {
    /// The gate of a thread with `plan`.
    pub fn new(plan: FlowPlan<'a>) -> FlowGate<'a> {
        FlowGate { plan, mine: 0, draining: false }
    }

    /// After its set-up (and its own barrier): wait until every thread of the phase's flows
    /// has arrived, so they start together as fio's jobs of one group do. Without it a job
    /// whose threads were set up first would run out its time first, and the one left would
    /// run alone, outside the ratio, for the difference (on a busy machine, tens of ms). Gives
    /// up after [`JOIN_LIMIT`] or a signal.
    pub fn join(&self) {
        let waiting = self.plan.waiting;
        waiting.fetch_sub(1, Ordering::AcqRel);
        let t0 = std::time::Instant::now();
        while waiting.load(Ordering::Acquire) > 0
            && t0.elapsed() < JOIN_LIMIT
            && !crate::sys::signals::interrupted()
        {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }

    /// Whether the thread may issue its next op now: counted if so. When it is ahead of its
    /// share it says no and waits, as fio's job does: with a `flow_sleep`, once every request
    /// in flight has completed (`inflight > 0`: the caller reaps, and asks again), it sleeps;
    /// without one, it spins once nothing is in flight.
    #[inline(always)]
    pub fn admit(&mut self, inflight: usize) -> bool {
        if self.draining {
            if inflight > 0 {
                return false;
            }
            self.draining = false;
            self.hold();
            return false;
        }
        let c = self.plan.counter;
        let ops = c.ops.load(Ordering::Relaxed);
        let weights = c.weights.load(Ordering::Relaxed);
        // mine / ops > weight / weights, without a division.
        if u128::from(self.mine) * u128::from(weights)
            > u128::from(self.plan.weight) * u128::from(ops)
        {
            if inflight == 0 {
                self.hold();
            } else if self.plan.sleep_nanos > 0 {
                // fio quiesces before it sleeps: every request in flight completes first.
                self.draining = true;
            }
            return false;
        }
        c.ops.fetch_add(1, Ordering::Relaxed);
        self.mine += 1;
        true
    }

    /// Ahead of its share: wait `flow_sleep`, or spin (fio's loop checks again at once).
    #[inline(never)]
    fn hold(&self) {
        if self.plan.sleep_nanos > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(self.plan.sleep_nanos));
        } else {
            std::hint::spin_loop();
        }
    }
}

impl Drop for FlowGate<'_> {
    fn drop(&mut self) {
        let c = self.plan.counter;
        c.ops.fetch_sub(self.mine, Ordering::Relaxed);
        c.weights.fetch_sub(self.plan.weight, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(weights: &[(u32, u32)]) -> Flows {
        let mut f = Flows::default();
        for &(w, threads) in weights {
            f.add(Flow { id: 0, weight: w, sleep_nanos: 0 }, threads);
        }
        f
    }

    /// Two threads of weights 1 and 8 that each try an op in turn end up 1:8, exactly up to
    /// the one op a thread may be ahead; the one that is ahead is told to wait.
    /// With a `flow_sleep`, a thread found ahead while requests are in flight waits for all of
    /// them before it sleeps, even when the others catch up meanwhile (fio quiesces), and only
    /// then asks again.
    #[test]
    fn a_thread_ahead_with_flow_sleep_drains_then_sleeps() {
        let mut f = Flows::default();
        let flow = |w| Flow { id: 0, weight: w, sleep_nanos: 1_000 };
        f.add(flow(1), 1);
        f.add(flow(1), 1);
        let (mut a, mut b) = (
            FlowGate::new(f.plan(Some(flow(1))).unwrap()),
            FlowGate::new(f.plan(Some(flow(1))).unwrap()),
        );
        assert!(a.admit(0) && a.admit(1), "a's first two ops");
        assert!(!a.admit(2), "a is ahead of its half");
        for _ in 0..4 {
            assert!(b.admit(0), "b catches up and passes a");
        }
        assert!(!a.admit(1), "a still drains its requests in flight");
        assert!(!a.admit(0), "drained: a sleeps, then asks again");
        assert!(a.admit(0), "behind b now: admitted");
    }

    #[test]
    fn admitted_ops_follow_the_weights() {
        let f = flows(&[(1, 1), (8, 1)]);
        let flow = |w| Some(Flow { id: 0, weight: w, sleep_nanos: 0 });
        let (mut a, mut b) =
            (FlowGate::new(f.plan(flow(1)).unwrap()), FlowGate::new(f.plan(flow(8)).unwrap()));
        let (mut na, mut nb) = (0u64, 0u64);
        for _ in 0..9000 {
            // In flight: the gate says no without waiting.
            na += u64::from(a.admit(1));
            nb += u64::from(b.admit(1));
        }
        assert_eq!(nb, 9000, "the heavier thread is never held back here");
        let ratio = nb as f64 / na as f64;
        assert!((ratio - 8.0).abs() < 0.01 * 8.0, "{na}:{nb}");
        // Another flow id is not this one.
        assert!(f.plan(Some(Flow { id: 3, weight: 1, sleep_nanos: 0 })).is_none());
    }

    /// The threads of a flow start together: a thread's join waits for the other's (here 50
    /// ms later), and not for one that never started (its engine failed).
    #[test]
    fn threads_of_a_flow_start_together_and_not_for_a_failed_one() {
        let f = flows(&[(1, 1), (8, 1)]);
        let flow = |w| Some(Flow { id: 0, weight: w, sleep_nanos: 0 });
        let a = FlowGate::new(f.plan(flow(1)).unwrap());
        let b = FlowGate::new(f.plan(flow(8)).unwrap());
        let t0 = std::time::Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                b.join();
            });
            a.join();
        });
        let waited = t0.elapsed();
        assert!(waited >= std::time::Duration::from_millis(45), "{waited:?}");
        let f = flows(&[(1, 1), (8, 1)]);
        let a = FlowGate::new(f.plan(flow(1)).unwrap());
        f.plan(flow(8)).unwrap().never_started();
        let t0 = std::time::Instant::now();
        a.join();
        assert!(t0.elapsed() < JOIN_LIMIT / 2, "not held for a thread that never started");
        assert_eq!(f.counters[0].weights.load(Ordering::Relaxed), 1);
    }

    /// A thread that ends takes its count and weight out: the one left runs freely.
    #[test]
    fn a_thread_that_ends_leaves_the_flow() {
        let f = flows(&[(1, 1), (8, 1)]);
        let flow = |w| Some(Flow { id: 0, weight: w, sleep_nanos: 0 });
        let mut a = FlowGate::new(f.plan(flow(1)).unwrap());
        {
            let mut b = FlowGate::new(f.plan(flow(8)).unwrap());
            for _ in 0..80 {
                b.admit(1);
            }
        }
        assert_eq!(f.counters[0].weights.load(Ordering::Relaxed), 1);
        assert_eq!(f.counters[0].ops.load(Ordering::Relaxed), 1);
        assert!((0..100).all(|_| a.admit(1)), "alone in its flow, never ahead");
    }
}
