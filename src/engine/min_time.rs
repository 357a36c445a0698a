//! `--min-time`, one implementation for every test: a timed phase shorter than the minimum is
//! run again, and the passes are added up, until together they last the minimum
//! ([`lengthen`]). What a pass is comes from the test's files ([`super::files::Pass`]): a data
//! test's phase runs again on the same files (its pattern, not the test's set-up); a fileset
//! test, whose phases change the set they work on, runs again whole, on a new set (set-up
//! untimed). Either way the figures are sums over the passes
//! ([`crate::model::result::PhaseResult::passes`]), and the same rule says when to stop.

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

/// Run `again` and add what it returns to `first` while the passes are shorter than `min`,
/// fewer than [`MAX_PASSES`], and the last one went well; a signal stops it too.
pub fn lengthen<P: Passes>(first: P, min: Duration, mut again: impl FnMut() -> P) -> P {
    let mut all = first;
    while all.timed_wall() < min
        && all.passes() < MAX_PASSES
        && all.went_well()
        && !crate::sys::signals::interrupted()
    {
        let more = again();
        all.add(more);
    }
    all
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
        assert_eq!(lengthen(one(true), min, || one(true)).n, 4, "30 ms × 4 ≥ 100 ms");
        let long = Fake { ms: 200, n: 1, ok: true };
        assert_eq!(lengthen(long, min, || unreachable!("long enough")).n, 1);
        let mut k = 0;
        let r = lengthen(one(true), min, || {
            k += 1;
            one(k < 2)
        });
        assert_eq!((r.n, r.ok), (3, false), "no pass after the one that went wrong");
        assert_eq!(lengthen(one(false), min, || unreachable!("a failed first pass")).n, 1);
        let tiny = |_| Fake { ms: 0, n: 1, ok: true };
        assert_eq!(lengthen(tiny(()), min, || tiny(())).n, MAX_PASSES, "capped");
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
