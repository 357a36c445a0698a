//! Fixed-rate load (open loop) and think time, in the worker's hot loop.
//!
//! Why: a closed loop issues the next op when the last completes, so a stall delays the ops
//! that would have been issued during it and they are never measured late: the stall shows
//! as one slow op (coordinated omission, as Gil Tene describes it for HdrHistogram and wrk2
//! corrects for it). Under a fixed rate each op has a *scheduled* start, `origin + k × period`,
//! and its latency is measured from there, so the ops a stall held back count with the time
//! they waited.
//!
//! Cost: nothing per op but a comparison with the schedule and an addition; when the worker
//! is ahead of its schedule it sleeps until the next start with one absolute
//! `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` (the timer slack of a paced thread is set
//! to 1 µs once, so the wake-up is close). When ops are in flight and the next start is not
//! due, the worker reaps instead of sleeping. An absolute schedule does not drift: a late
//! wake-up is made up by the next op, and when the device cannot keep up the worker falls
//! behind and issues as fast as it can, each op still timed from its scheduled start; the
//! phase then reports the shortfall ([`crate::model::series::RateOutcome`]).
//!
//! Poisson arrivals (`rate_process = "poisson"`, fio's): the gap to the next scheduled start
//! is drawn from an exponential distribution with the period as its mean (`-ln(u) × period`,
//! `u` uniform in (0, 1] from the worker's own xorshift generator, seeded from the worker's
//! seed ([`PacePlan::seeded`]: its own per phase, role and thread), so a run repeats and two
//! jobs do not draw the same arrivals). The cost per op is one logarithm and a few integer
//! operations; nothing is allocated or locked. The schedule stays absolute, so the mean rate
//! is the one asked.
//!
//! Think time (`thinktime`, `thinktime_blocks`, fio's): after every `think_every` ops the
//! worker waits until nothing is in flight, then pauses; the pause is in no op's latency.
//!
//! Per direction (`rate=R,W` on a mixed job, fio's): reads and writes each have their own
//! absolute schedule ([`DirPacer`], used by the data source, which draws each op's direction).
//! As fio's `rate_ddir`: the drawn direction goes if it is due; if it is ahead and the other
//! is due (or not limited), the op goes the other way; if both are ahead the worker waits for
//! the earlier one and issues that direction. So each direction keeps its own rate and the
//! mix follows the rates, as in fio. The cost per op is the same comparisons and addition as
//! one schedule's.

use super::flow::{FlowGate, FlowPlan};
use super::worker::now_ns;
use crate::model::series::Load;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a worker's pacing is asked to do (plain numbers, from the phase's [`Load`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PacePlan {
    /// Nanoseconds between scheduled starts; 0: not paced by a rate.
    pub period_nanos: u64,
    /// This worker's first start after the release: its share of one period when the rate is
    /// the test's, split over its threads (so they do not issue in step); 0 otherwise.
    pub offset_nanos: u64,
    /// Think time, ns (0: none).
    pub think_nanos: u64,
    /// Ops between think times.
    pub think_every: u64,
    /// Exponential gaps with mean `period_nanos` instead of a fixed period (Poisson arrivals).
    pub poisson: bool,
    /// Seed of the gaps' generator (Poisson arrivals): each worker its own.
    pub seed: u64,
    /// Nanoseconds between a mixed phase's scheduled reads and writes (`[read, write]`), each
    /// direction on its own schedule ([`DirPacer`]); 0: that direction is not limited.
    pub dir_period_nanos: [u64; 2],
    /// This worker's first scheduled read and write after the release (`[read, write]`), as
    /// `offset_nanos`.
    pub dir_offset_nanos: [u64; 2],
    /// The phase's time from the worker's start (a time-based amount, or the time cap beside
    /// a size): a wait that would pass it waits only until then, and the worker ends there,
    /// as fio's job does not start an op after its runtime. `None`: no time limit.
    pub limit_nanos: Option<u64>,
    /// A paced op is timed from when it is issued (the clock after any wait for its start),
    /// as fio's, instead of from its scheduled start.
    pub from_issue: bool,
}

impl PacePlan {
    /// Worker `k` of `threads`' pacing under `load`.
    pub fn of(load: &Load, k: u32, threads: u32) -> PacePlan {
        let period_nanos = match load.thread_ops_per_s {
            Some(r) if r > 0.0 => (1e9 / r).round().max(1.0) as u64,
            _ => 0,
        };
        let period = |r: Option<f64>| match r {
            Some(r) if r > 0.0 => (1e9 / r).round().max(1.0) as u64,
            _ => 0,
        };
        let dir = load.dir_ops_per_s.unwrap_or_default();
        let dir_period_nanos = [period(dir.read), period(dir.write)];
        // Only a test's rate split over its threads spreads their starts over one period;
        // each thread's own rate starts at once (fio's jobs and clones do).
        let share = |p: u64| if load.staggered { p * k as u64 / threads.max(1) as u64 } else { 0 };
        PacePlan {
            dir_period_nanos,
            dir_offset_nanos: [share(dir_period_nanos[0]), share(dir_period_nanos[1])],
            period_nanos,
            offset_nanos: share(period_nanos),
            think_nanos: load.think_nanos,
            think_every: if load.think_nanos > 0 { load.think_every.max(1) } else { 0 },
            poisson: load.poisson && period_nanos > 0,
            seed: splitmix64(0x5eed_0000 + k as u64),
            limit_nanos: None,
            from_issue: load.latency_from_issue,
        }
    }

    /// The same plan with the gaps' generator seeded from the worker's own seed (which
    /// differs per phase, role and thread, and follows the run's `--seed`, fio's `randseed`),
    /// so two jobs' Poisson arrivals are not the same draw.
    pub fn seeded(mut self, worker_seed: u64) -> PacePlan {
        self.seed = splitmix64(worker_seed ^ 0x5eed_0000);
        self
    }

    /// The same plan, limited to `phase`'s time: its seconds, or its time cap.
    pub fn limited_to(self, phase: &crate::model::job::PhaseDef) -> PacePlan {
        let secs = match phase.amount {
            crate::model::job::Amount::Seconds(s) => Some(s),
            _ => phase.max_seconds,
        };
        self.limited(secs)
    }

    /// The same plan, limited to `seconds` from the worker's start.
    pub fn limited(mut self, seconds: Option<f64>) -> PacePlan {
        self.limit_nanos = seconds.filter(|s| s.is_finite() && *s >= 0.0).map(|s| (s * 1e9) as u64);
        self
    }

    /// Neither a rate nor think time: the closed loop.
    pub fn is_closed(&self) -> bool {
        self.period_nanos == 0 && self.think_nanos == 0
    }
}

/// A worker's pacing state (see the module doc), and its gate into its flow
/// ([`super::flow`]), which is checked at the same point.
pub struct Pacer<'a> {
    plan: PacePlan,
    /// Flow control (fio's `flow`): asked after the schedule, before each op.
    flow: Option<FlowGate<'a>>,
    /// The flow held the next op back at least once since the last op it let through.
    flow_held: bool,
    /// Paced at all (checked first, so the closed loop pays one predictable branch).
    pub on: bool,
    /// Next scheduled start (ns).
    next: u64,
    /// Ops issued since the last think time.
    since_think: u64,
    think_due: bool,
    /// Ops issued (paced phases).
    pub issued: u64,
    /// When the phase's time is up (ns; `u64::MAX`: no limit), from [`PacePlan::limit_nanos`].
    end: u64,
    /// The next op would start after the phase's time: the worker ends.
    pub expired: bool,
    /// State of the Poisson gaps' xorshift generator (never 0).
    rng: u64,
}

impl<'a> Pacer<'a> {
    /// A pacer for `plan`, not yet started.
    pub fn new(plan: PacePlan) -> Pacer<'a> {
        Pacer {
            plan,
            flow: None,
            flow_held: false,
            on: !plan.is_closed(),
            next: 0,
            since_think: 0,
            think_due: false,
            issued: 0,
            end: u64::MAX,
            expired: false,
            rng: plan.seed | 1,
        }
    }

    /// The worker's place in a flow (none: no flow control): the pacer is on with one.
    pub fn with_flow(mut self, flow: Option<FlowPlan<'a>>) -> Pacer<'a> {
        self.flow = flow.map(FlowGate::new);
        self.on |= self.flow.is_some();
        self
    }

    /// After the barrier, before the worker's clock starts: wait for the other threads of its
    /// flow ([`FlowGate::join`]); nothing without a flow.
    pub fn join_flow(&self) {
        if let Some(gate) = &self.flow {
            gate.join();
        }
    }

    /// The phase starts at `start_ns` (after the barrier): the schedule counts from here.
    pub fn start(&mut self, start_ns: u64) {
        if !self.on || self.plan.is_closed() {
            return;
        }
        // SAFETY: PR_SET_TIMERSLACK takes integers only; a failure leaves the default slack.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64);
        }
        self.next = start_ns + self.plan.offset_nanos;
        if let Some(l) = self.plan.limit_nanos {
            self.end = start_ns.saturating_add(l);
        }
    }

    /// Wait until `t`, unless that passes the phase's time: then wait until its end and mark
    /// the pacer expired. Whether the wait reached `t`.
    #[inline(never)]
    fn wait_until(&mut self, t: u64) -> bool {
        if t >= self.end {
            sleep_until(self.end);
            self.expired = true;
            return false;
        }
        sleep_until(t);
        true
    }

    /// The start time of the next op, waiting for it when ahead: `t0` is the clock at the
    /// last reap, `inflight` the requests in flight. `None`: not due yet and requests are in
    /// flight, so reap first (or think time waits for the queue to drain); or the thread is
    /// ahead of its flow share (it waited when nothing was in flight): ask again.
    #[inline(always)]
    pub fn next_start(&mut self, t0: u64, inflight: usize) -> Option<u64> {
        let start = self.scheduled(t0, inflight)?;
        let Some(gate) = &mut self.flow else {
            return Some(start);
        };
        if !gate.admit(inflight) {
            self.flow_held = true;
            return None;
        }
        // Held back by its flow: the op is issued now, and its latency counts from there, as
        // fio checks its flow before it prepares (and stamps) the op; a rate's schedule
        // (latency from the schedule) still says when it was due.
        if std::mem::take(&mut self.flow_held)
            && (self.plan.period_nanos == 0 || self.plan.from_issue)
        {
            return Some(start.max(now_ns()));
        }
        Some(start)
    }

    /// [`Self::next_start`] by the rate and think time alone.
    #[inline(always)]
    fn scheduled(&mut self, t0: u64, inflight: usize) -> Option<u64> {
        if self.think_due {
            if inflight > 0 {
                return None;
            }
            if !self.wait_until(now_ns() + self.plan.think_nanos) {
                return None;
            }
            self.think_due = false;
            let now = now_ns();
            if self.plan.period_nanos == 0 {
                return Some(now);
            }
            self.next = self.next.max(now);
        }
        if self.plan.period_nanos == 0 {
            return Some(t0);
        }
        let due = self.next;
        // When the op is issued: now, read only when the schedule is ahead of the last reap.
        let mut at = t0;
        if due > t0 {
            let now = now_ns();
            at = now;
            if due > now {
                if inflight > 0 {
                    return None;
                }
                if !self.wait_until(due) {
                    return None;
                }
                if self.plan.from_issue {
                    at = now_ns();
                }
            }
        }
        Some(if self.plan.from_issue { at } else { due })
    }

    /// An op was issued at the start [`Self::next_start`] gave.
    #[inline(always)]
    pub fn issued(&mut self) {
        self.issued += 1;
        self.next += if self.plan.poisson { self.exp_gap() } else { self.plan.period_nanos };
        if self.plan.think_every > 0 {
            self.since_think += 1;
            if self.since_think >= self.plan.think_every {
                self.since_think = 0;
                self.think_due = true;
            }
        }
    }
}

impl Pacer<'_> {
    /// The next Poisson gap: exponential with mean `period_nanos` (at least 1 ns).
    #[inline(always)]
    fn exp_gap(&mut self) -> u64 {
        // xorshift64*, then 53 bits as u in (0, 1]: -ln(u) is finite and >= 0.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        let bits = x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        let u = (bits + 1) as f64 / (1u64 << 53) as f64;
        ((-u.ln() * self.plan.period_nanos as f64) as u64).max(1)
    }
}

/// A mixed phase's reads and writes, each on its own schedule (see the module doc).
pub struct DirPacer<'a> {
    /// `[read, write]` periods (0: not limited).
    period: [u64; 2],
    /// `[read, write]` next scheduled starts.
    next: [u64; 2],
    /// This worker's first scheduled starts after the release (`PacePlan::dir_offset_nanos`).
    stagger: [u64; 2],
    /// The phase's stop flag: a long wait for the next start ends when it is set.
    stop: &'a AtomicBool,
    /// Ops are timed from when they are issued, not their scheduled start ([`PacePlan`]).
    from_issue: bool,
}

/// What [`DirPacer::pick`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Issue an op in this direction (`write`), timed from `stamp` (its scheduled start).
    Go { write: bool, stamp: u64 },
    /// Not due, and requests are in flight: reap first.
    Reap,
    /// The stop flag was set while waiting.
    Stopped,
}

/// The longest single sleep while waiting for a scheduled start: the stop flag is looked at
/// between sleeps, so a slow rate does not hold a stopped phase.
const STOP_POLL_NANOS: u64 = 5_000_000;

impl<'a> DirPacer<'a> {
    /// A worker's per-direction pacing under `plan`; `None` when no direction is limited.
    /// `stop` is the phase's stop flag.
    pub fn of(plan: &PacePlan, stop: &'a AtomicBool) -> Option<DirPacer<'a>> {
        let period = plan.dir_period_nanos;
        if period == [0, 0] {
            return None;
        }
        let (next, stagger, from_issue) = ([0; 2], plan.dir_offset_nanos, plan.from_issue);
        Some(DirPacer { period, next, stagger, stop, from_issue })
    }

    /// The phase starts at `start_ns`: both schedules count from here.
    pub fn start(&mut self, start_ns: u64) {
        // SAFETY: PR_SET_TIMERSLACK takes integers only; a failure leaves the default slack.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64);
        }
        self.next = [start_ns + self.stagger[0], start_ns + self.stagger[1]];
    }

    /// The direction and scheduled start of the next op, the drawn one being `write`; `mixed`:
    /// the other direction may take its place (fio's `rwmix` share of it is not 0). `t0` is
    /// the clock at the last reap, `inflight` the requests in flight.
    #[inline(always)]
    pub fn pick(&mut self, write: bool, mixed: bool, t0: u64, inflight: usize) -> Pick {
        let d = usize::from(write);
        let o = 1 - d;
        if self.period[d] == 0 {
            return Pick::Go { write, stamp: t0 };
        }
        // Behind its schedule, an op is issued at once: at `t0` by fio's clock.
        let behind = |due: u64| if self.from_issue { t0 } else { due };
        if self.next[d] <= t0 {
            return Pick::Go { write, stamp: behind(self.next[d]) };
        }
        if mixed {
            if self.period[o] == 0 {
                return Pick::Go { write: !write, stamp: t0 };
            }
            if self.next[o] <= t0 {
                return Pick::Go { write: !write, stamp: behind(self.next[o]) };
            }
        }
        let c = if mixed && self.next[o] < self.next[d] { o } else { d };
        let due = self.next[c];
        let now = now_ns();
        let mut at = now;
        if due > now {
            if inflight > 0 {
                return Pick::Reap;
            }
            if !self.wait(due) {
                return Pick::Stopped;
            }
            if self.from_issue {
                at = now_ns();
            }
        }
        Pick::Go { write: c == 1, stamp: if self.from_issue { at } else { due } }
    }

    /// An op in direction `write` was issued at the start [`Self::pick`] gave.
    #[inline(always)]
    pub fn issued(&mut self, write: bool) {
        let d = usize::from(write);
        self.next[d] += self.period[d];
    }

    /// Sleep until `due`, in steps of at most [`STOP_POLL_NANOS`]; `false`: stopped first.
    #[inline(never)]
    fn wait(&self, due: u64) -> bool {
        loop {
            if self.stop.load(Ordering::Relaxed) || crate::sys::signals::interrupted() {
                return false;
            }
            let now = now_ns();
            if now >= due {
                return true;
            }
            sleep_until(due.min(now + STOP_POLL_NANOS));
        }
    }
}

/// A well-mixed 64-bit value from `x` (splitmix64's finaliser), for seeds.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Sleep until `CLOCK_MONOTONIC` reaches `t` ns (again after a signal).
#[inline(never)]
fn sleep_until(t: u64) {
    let ts = rustix::time::Timespec {
        tv_sec: (t / 1_000_000_000) as i64,
        tv_nsec: (t % 1_000_000_000) as _,
    };
    while let Err(rustix::io::Errno::INTR) =
        rustix::thread::clock_nanosleep_absolute(rustix::time::ClockId::Monotonic, &ts)
    {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rate: Option<f64>, think_nanos: u64, think_every: u64) -> Load {
        Load { thread_ops_per_s: rate, think_nanos, think_every, ..Load::default() }
    }

    /// A paced worker does not start an op after its phase's time, as fio's job does not
    /// after its runtime: at 100 ops/s for 25 ms, ops at 0, 10 and 20 ms, then the wait for
    /// the fourth (30 ms) stops at the limit and the pacer has expired.
    #[test]
    fn no_op_starts_after_the_phases_time() {
        let plan = PacePlan::of(&load(Some(100.0), 0, 0), 0, 1).limited(Some(0.025));
        let mut p = Pacer::new(plan);
        let t = now_ns();
        p.start(t);
        for k in 0..3u64 {
            assert_eq!(p.next_start(now_ns(), 0), Some(t + k * 10_000_000));
            p.issued();
        }
        // The wait for the fourth op ends at the limit: expired, with no op (had it waited for
        // the 30 ms slot, it would give that op). A loaded machine may wake it late, so only
        // the lower bound is a check of time.
        assert_eq!(p.next_start(now_ns(), 0), None);
        assert!(p.expired);
        let at = now_ns() - t;
        assert!(at >= 25_000_000, "gave up at {at} ns, before the phase's 25 ms");
    }

    /// A test's rate split over its threads spreads their first starts over one period; each
    /// thread's own rate (fio's) starts every thread at once.
    #[test]
    fn threads_are_staggered_over_one_period_only_under_a_tests_rate() {
        let l = Load { staggered: true, ..load(Some(1000.0), 0, 0) };
        assert_eq!(PacePlan::of(&l, 0, 4).offset_nanos, 0);
        assert_eq!(PacePlan::of(&l, 2, 4).offset_nanos, 500_000);
        assert_eq!(PacePlan::of(&l, 2, 4).period_nanos, 1_000_000);
        let own = load(Some(1000.0), 0, 0);
        assert_eq!(PacePlan::of(&own, 2, 4).offset_nanos, 0);
        assert!(PacePlan::of(&load(None, 0, 0), 0, 1).is_closed());
    }

    #[test]
    fn a_paced_worker_keeps_its_schedule_and_stamps_late_ops_with_it() {
        let mut p = Pacer::new(PacePlan::of(&load(Some(2000.0), 0, 0), 0, 1));
        let t = now_ns();
        p.start(t);
        // 20 ops at 2000/s: the schedule is t, t + 0.5 ms, ...; each start is its slot.
        for k in 0..20u64 {
            let s = p.next_start(now_ns(), 0).expect("nothing in flight: it sleeps");
            assert_eq!(s, t + k * 500_000);
            p.issued();
        }
        let took = now_ns() - t;
        assert!((9_500_000..30_000_000).contains(&took), "20 ops at 2000/s took {took} ns");
        // Behind schedule (a stall of 5 ms): the next op is stamped with its scheduled start,
        // in the past, so its latency counts the wait.
        std::thread::sleep(std::time::Duration::from_millis(5));
        let now = now_ns();
        let s = p.next_start(now, 0).expect("due");
        assert_eq!(s, t + 20 * 500_000);
        assert!(s + 4_000_000 < now);
        // Not yet due with ops in flight: reap first.
        let mut q = Pacer::new(PacePlan::of(&load(Some(1.0), 0, 0), 0, 1));
        q.start(now_ns());
        q.issued();
        assert_eq!(q.next_start(now_ns(), 1), None);
    }

    /// `latency_from = "issue"` (fio's): an op is stamped with the clock when it is issued,
    /// after its wait (not its slot), and behind schedule with the clock at the last reap (not
    /// its slot in the past); the schedule itself is the same. Per direction too.
    #[test]
    fn from_issue_stamps_an_op_when_it_is_issued_not_at_its_slot() {
        let l = Load { latency_from_issue: true, ..load(Some(2000.0), 0, 0) };
        let mut p = Pacer::new(PacePlan::of(&l, 0, 1));
        let t = now_ns();
        p.start(t);
        for k in 0..5u64 {
            let s = p.next_start(now_ns(), 0).expect("nothing in flight: it sleeps");
            assert!(s >= t + k * 500_000, "op {k}: stamped {s} before its slot");
            p.issued();
        }
        // Behind schedule by 5 ms: stamped with the clock the caller passes (its last reap),
        // so the 5 ms are in no op's latency.
        std::thread::sleep(std::time::Duration::from_millis(5));
        let now = now_ns();
        assert_eq!(p.next_start(now, 0), Some(now));
        p.issued();
        assert_eq!(p.next, t + 6 * 500_000, "the schedule is the same");

        let stop = AtomicBool::new(false);
        let d = Load {
            dir_ops_per_s: Some(crate::model::series::DirRates { read: Some(2000.0), write: None }),
            latency_from_issue: true,
            ..Load::default()
        };
        let mut dp = DirPacer::of(&PacePlan::of(&d, 0, 1), &stop).expect("a limited direction");
        let t = now_ns();
        dp.start(t);
        dp.issued(false);
        std::thread::sleep(std::time::Duration::from_millis(3));
        let now = now_ns();
        assert_eq!(dp.pick(false, false, now, 0), Pick::Go { write: false, stamp: now });
        dp.issued(false);
        dp.issued(false);
        dp.issued(false);
        dp.issued(false);
        dp.issued(false);
        dp.issued(false);
        // Its slot is t + 3.5 ms: ahead, it waits and is stamped after it; behind (a slow
        // machine), with the clock passed, which is past the slot too.
        let before = now_ns();
        match dp.pick(false, false, before, 0) {
            Pick::Go { write: false, stamp } => assert!(stamp >= t + 3_500_000 && stamp >= before),
            other => panic!("{other:?}"),
        }
    }

    /// The gaps between the scheduled starts of `n` ops (no sleeping: the schedule only).
    fn gaps(plan: PacePlan, n: usize) -> Vec<f64> {
        let mut p = Pacer::new(plan);
        p.start(1_000_000_000);
        let mut prev = p.next;
        (0..n)
            .map(|_| {
                p.issued();
                let g = (p.next - prev) as f64;
                prev = p.next;
                g
            })
            .collect()
    }

    fn mean_cv(g: &[f64]) -> (f64, f64) {
        let m = g.iter().sum::<f64>() / g.len() as f64;
        let var = g.iter().map(|x| (x - m).powi(2)).sum::<f64>() / g.len() as f64;
        (m, var.sqrt() / m)
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_rate_as_mean_and_linear_ones_fixed() {
        let mut l = load(Some(1000.0), 0, 0);
        let (m, cv) = mean_cv(&gaps(PacePlan::of(&l, 0, 1), 20_000));
        assert_eq!((m, cv), (1_000_000.0, 0.0), "linear: one fixed period");
        l.poisson = true;
        let plan = PacePlan::of(&l, 0, 1);
        let g = gaps(plan, 20_000);
        let (m, cv) = mean_cv(&g);
        // Exponential: mean = period, coefficient of variation 1 (20000 draws: within a few %).
        assert!((m / 1e6 - 1.0).abs() < 0.03, "mean gap {m} ns, want 1 ms");
        assert!((cv - 1.0).abs() < 0.05, "coefficient of variation {cv}, want 1");
        // Memoryless: about e^-1 of the gaps exceed the mean.
        let above = g.iter().filter(|x| **x > 1e6).count() as f64 / g.len() as f64;
        assert!((above - (-1f64).exp()).abs() < 0.02, "share above the mean {above}");
        // Each worker its own draw; the same worker the same draw (a run repeats).
        assert_ne!(g[..50], gaps(PacePlan::of(&l, 1, 2), 50)[..]);
        assert_eq!(g[..50], gaps(plan, 50)[..]);
        // Thread 0 of a role and of the phase have their own workers' seeds: their own draws.
        let (a, b) = (PacePlan::of(&l, 0, 1).seeded(7), PacePlan::of(&l, 0, 1).seeded(8));
        assert_ne!(gaps(a, 50), gaps(b, 50));
        assert_eq!(gaps(a, 50), gaps(PacePlan::of(&l, 0, 1).seeded(7), 50));
        // Poisson without a rate is no pacing.
        let none = Load { poisson: true, ..Load::default() };
        assert!(PacePlan::of(&none, 0, 1).is_closed());
        assert!(!PacePlan::of(&none, 0, 1).poisson);
    }

    /// fio's rate_ddir on the schedule alone: the drawn direction goes when due; ahead, the
    /// other goes if due or not limited (only in a mixed job); both ahead, the earlier one
    /// after the wait (or reap first with ops in flight). Each direction's starts step by its
    /// own period, from the start for every thread (each thread's own rate, fio's).
    #[test]
    fn each_direction_keeps_its_own_schedule_and_an_op_ahead_goes_the_other_way() {
        let dir = |r: Option<f64>, w: Option<f64>| Load {
            dir_ops_per_s: Some(crate::model::series::DirRates { read: r, write: w }),
            ..Load::default()
        };
        let plan = PacePlan::of(&dir(Some(1000.0), Some(500.0)), 1, 2);
        assert_eq!(
            (plan.dir_period_nanos, plan.dir_offset_nanos),
            ([1_000_000, 2_000_000], [0, 0])
        );
        assert!(plan.is_closed(), "the worker's one schedule is off");
        let stop = AtomicBool::new(false);
        let mut p =
            DirPacer::of(&PacePlan::of(&dir(Some(1000.0), Some(500.0)), 0, 1), &stop).unwrap();
        let t = 1u64 << 62; // far ahead of the clock (the schedule is checked without sleeping)
        p.start(t - 10_000_000);
        let s = t - 10_000_000;
        // Due: the drawn direction, stamped with its slot.
        assert_eq!(p.pick(true, true, t, 0), Pick::Go { write: true, stamp: s });
        p.issued(true);
        assert_eq!(p.pick(false, true, t, 0), Pick::Go { write: false, stamp: s });
        p.issued(false);
        // Writes ahead of t (their next slot is s + 2 ms, t is s + 10 ms: still due).
        assert_eq!(p.pick(true, true, t, 0), Pick::Go { write: true, stamp: s + 2_000_000 });
        // Now with the clock at the slots: write's next is s + 4 ms, read's s + 1 ms.
        p.issued(true);
        let now = s + 1_500_000;
        assert_eq!(
            p.pick(true, true, now, 1),
            Pick::Go { write: false, stamp: s + 1_000_000 },
            "an op ahead goes the other way"
        );
        p.issued(false);
        // Both ahead (read s + 2 ms, write s + 4 ms) with ops in flight: reap first; not mixed:
        // no switch either.
        assert_eq!(p.pick(true, true, now, 1), Pick::Reap);
        assert_eq!(p.pick(true, false, now, 1), Pick::Reap);
        // A direction without a limit always goes; in a mixed job an op ahead goes that way.
        let mut w = DirPacer::of(&PacePlan::of(&dir(None, Some(1000.0)), 0, 1), &stop).unwrap();
        w.start(t);
        w.issued(true);
        assert_eq!(w.pick(false, true, 7, 3), Pick::Go { write: false, stamp: 7 });
        assert_eq!(w.pick(true, true, 7, 3), Pick::Go { write: false, stamp: 7 });
        assert_eq!(w.pick(true, false, 7, 3), Pick::Reap);
        assert!(DirPacer::of(&PacePlan::of(&Load::default(), 0, 1), &stop).is_none());
        // Waiting for a far slot with nothing in flight ends when the stop flag is set.
        stop.store(true, Ordering::Relaxed);
        assert_eq!(w.pick(true, false, 7, 0), Pick::Stopped);
    }

    /// Paced for real: 40 reads at 2000/s and writes at 1000/s drawn at random each take their
    /// own time (20 ms for the reads); the mix follows the rates.
    #[test]
    fn a_paced_mix_issues_each_direction_at_its_rate() {
        let l = Load {
            dir_ops_per_s: Some(crate::model::series::DirRates {
                read: Some(2000.0),
                write: Some(1000.0),
            }),
            ..Load::default()
        };
        let stop = AtomicBool::new(false);
        let mut p = DirPacer::of(&PacePlan::of(&l, 0, 1), &stop).unwrap();
        let t = now_ns();
        p.start(t);
        let mut n = [0u64; 2];
        let mut x = 0x1234_5678u64;
        while n[0] < 40 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match p.pick(x % 2 == 0, true, now_ns(), 0) {
                Pick::Go { write, .. } => {
                    p.issued(write);
                    n[usize::from(write)] += 1;
                }
                other => panic!("{other:?}"),
            }
        }
        let took = now_ns() - t;
        assert!((19_000_000..60_000_000).contains(&took), "40 reads at 2000/s took {took} ns");
        assert!((19..=21).contains(&n[1]), "writes at half the reads' rate: {n:?}");
    }

    #[test]
    fn think_time_pauses_after_every_n_ops_outside_latency() {
        let mut p = Pacer::new(PacePlan::of(&load(None, 3_000_000, 2), 0, 1));
        p.start(now_ns());
        let t = now_ns();
        assert_eq!(p.next_start(t, 0), Some(t));
        p.issued();
        assert_eq!(p.next_start(t, 0), Some(t));
        p.issued();
        // Two ops: a think is due, after the queue drains.
        assert_eq!(p.next_start(t, 1), None);
        let s = p.next_start(t, 0).expect("after the pause");
        assert!(s >= t + 3_000_000, "the start after a think is after it");
    }
}
