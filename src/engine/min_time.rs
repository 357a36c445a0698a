//! `--min-time`, one implementation for every test: a timed phase shorter than the minimum is
//! run again, and the passes are added up, until together they last the minimum
//! ([`lengthen`]). What a pass is comes from the test's files ([`super::files::Pass`]): a data
//! test's phase runs again on the same files (its pattern, not the test's set-up); a fileset
//! test, whose phases change the set they work on, runs again whole, on a new set (set-up
//! untimed). Either way the figures are sums over the passes
//! ([`crate::model::result::PhaseResult::passes`]), and the same rule says when to stop.
//!
//! The count is chosen once per test: by the minimum in the test's first repetition (on the
//! first configuration of a compare), then fixed for every other repetition and configuration
//! ([`EngineOptions::passes`]), so that they all do the same work (a configuration that writes
//! faster must not run more first writes, or more overwrites, than another).

use super::runner::EngineOptions;
use crate::model::job::{Amount, TestDef};
use std::time::Duration;

/// Most passes of one phase, or runs of one fileset test, that `--min-time` adds (a phase of
/// next to nothing would otherwise loop for a long time).
pub const MAX_PASSES: u32 = 1000;

/// Whether `--min-time` may lengthen the test: not when the test says `min_time = false` (its
/// work is one pass, as the peer it copies does it), not in a multi-client run (one phase is one
/// window across processes), not for a fill phase (it ends at a fill level, not a count), and
/// not for a test with roles (they run beside the phase: a pass without them would measure
/// something else).
pub fn applies(test: &TestDef, opts: &EngineOptions) -> bool {
    !opts.min_time.is_zero()
        && test.min_time
        && test.roles.is_empty()
        && opts.share.is_none()
        && opts.stonewall.is_none()
        && !test.phases.iter().any(|p| matches!(p.amount, Amount::Fill(_)))
        && test.phases.iter().all(|p| p.max_seconds.is_none())
}

/// Something `--min-time` can run again and add up: a phase's passes, or a test's runs.
pub trait Passes {
    /// The timed wall time of every pass so far.
    fn timed_wall(&self) -> Duration;
    /// Passes so far.
    fn passes(&self) -> u32;
    /// The last pass did all its work (no error, no stop): another may follow.
    fn went_well(&self) -> bool;
    /// Add one more pass (it becomes the last).
    fn add(&mut self, more: Self);
}

/// Run `again` and add what it returns to `first`: with `fixed`, until there are that many
/// passes (the count the test's first repetition chose, so that every repetition on every
/// configuration does the same work); without, while the passes are shorter than `min` and
/// fewer than [`MAX_PASSES`]. Either way only while the last one went well and no signal came.
pub fn lengthen<P: Passes>(
    first: P,
    min: Duration,
    fixed: Option<u32>,
    mut again: impl FnMut() -> P,
) -> P {
    let mut all = first;
    let more_wanted = |all: &P| match fixed {
        Some(n) => all.passes() < n.min(MAX_PASSES),
        None => all.timed_wall() < min && all.passes() < MAX_PASSES,
    };
    while more_wanted(&all) && all.went_well() && !crate::sys::signals::interrupted() {
        let more = again();
        all.add(more);
    }
    all
}

/// The passes each phase of a test ran in `rep` (by phase index): what every later repetition
/// of the test, on every configuration, runs ([`EngineOptions::passes`]). `None` for a
/// repetition that did not complete.
pub fn chosen(rep: &crate::model::result::RepResult) -> Option<Vec<u32>> {
    rep.complete.then(|| rep.phases.iter().map(|p| p.passes()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` passes of `ms` milliseconds each; `ok`: whether the last one went well.
    struct Fake {
        ms: u64,
        n: u32,
        ok: bool,
    }

    impl Passes for Fake {
        fn timed_wall(&self) -> Duration {
            Duration::from_millis(self.ms * self.n as u64)
        }
        fn passes(&self) -> u32 {
            self.n
        }
        fn went_well(&self) -> bool {
            self.ok
        }
        fn add(&mut self, more: Fake) {
            self.n += more.n;
            self.ok = more.ok;
        }
    }

    #[test]
    fn passes_are_added_until_the_minimum_or_the_cap_or_a_failure() {
        let min = Duration::from_millis(100);
        let one = |ok| Fake { ms: 30, n: 1, ok };
        assert_eq!(lengthen(one(true), min, None, || one(true)).n, 4, "30 ms × 4 ≥ 100 ms");
        let long = Fake { ms: 200, n: 1, ok: true };
        assert_eq!(lengthen(long, min, None, || unreachable!("long enough")).n, 1);
        let mut k = 0;
        let r = lengthen(one(true), min, None, || {
            k += 1;
            one(k < 2)
        });
        assert_eq!((r.n, r.ok), (3, false), "no pass after the one that went wrong");
        assert_eq!(lengthen(one(false), min, None, || unreachable!("a failed first pass")).n, 1);
        let tiny = |_| Fake { ms: 0, n: 1, ok: true };
        assert_eq!(lengthen(tiny(()), min, None, || tiny(())).n, MAX_PASSES, "capped");
    }

    #[test]
    fn a_fixed_count_is_run_whatever_the_passes_last() {
        let min = Duration::from_millis(100);
        let pass = |ms| Fake { ms, n: 1, ok: true };
        // Faster than the minimum: still exactly the fixed count, not more.
        assert_eq!(lengthen(pass(1), min, Some(3), || pass(1)).n, 3);
        // Slower than the minimum: still the fixed count, not fewer.
        assert_eq!(lengthen(pass(500), min, Some(3), || pass(500)).n, 3);
        assert_eq!(lengthen(pass(500), min, Some(1), || unreachable!("one is fixed")).n, 1);
        let mut k = 0;
        let r = lengthen(pass(1), min, Some(5), || {
            k += 1;
            Fake { ms: 1, n: 1, ok: k < 2 }
        });
        assert_eq!((r.n, r.ok), (3, false), "no pass after the one that went wrong");
    }

    #[test]
    fn it_applies_to_a_plain_run_only() {
        let suite = crate::workload::load(
            &crate::workload::SuiteSource::Embedded("unit14".into()),
            &crate::workload::ResolveCtx { scale: "quick".parse().unwrap(), free_memory: 1 << 30 },
        )
        .unwrap();
        let t = &suite.tests[0];
        let opts = EngineOptions { min_time: Duration::from_secs(1), ..Default::default() };
        assert!(applies(t, &opts));
        assert!(!applies(t, &EngineOptions::default()), "no minimum by default here");
        let stonewalled = EngineOptions { stonewall: Some(Duration::from_secs(1)), ..opts.clone() };
        assert!(!applies(t, &stonewalled));
        let share = Some(crate::engine::Share { index: 0, count: 2 });
        assert!(!applies(t, &EngineOptions { share, ..opts.clone() }));
        let once = crate::model::job::TestDef { min_time: false, ..t.clone() };
        assert!(!applies(&once, &opts), "a test that says min_time = false");
    }
}
