//! What a comparison decides between two configurations: the rule's thresholds ([`Rule`]) and
//! its outcome ([`Verdict`]), with the words every output uses for them. The rule itself is
//! [`crate::decision`].

use serde::{Deserialize, Serialize};

/// Thresholds of the rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Minimum effect for a significant difference to count (0.05 = 5%).
    pub min_effect: f64,
    /// Minimum effect when a side has one repetition (no test possible).
    pub single_run_effect: f64,
    /// How far a test's ratio may move between identical runs beyond what one run's rounds
    /// show (0.05 = 5%): a win is settled only when its gap is beyond the minimum effect *and*
    /// this much more, at the strict level ([`crate::decision`]'s `settled`). Each compare makes
    /// new testbeds (new image files, new placement on the host's disk), so the two sides'
    /// ratio shifts from run to run by more than its rounds' spread: measured over 10 identical
    /// compares, by 2-7% (the standard deviation of the per-run shift beyond the within-run
    /// standard error; bench/results/2026-11-27-run-drift.md). Stored runs made before it read
    /// as 0 (the rule then had none).
    #[serde(default)]
    pub run_drift: f64,
    /// `diff`: how far one test's figure is assumed to move between runs of one setup made at
    /// different times, beyond what a run's repetitions show (0.06 = 6%), when the results
    /// database holds too few earlier runs of the test to measure it (`crate::decision`'s
    /// `RunSpread`). Stored runs made before it read as 0.
    #[serde(default)]
    pub run_spread: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule { min_effect: 0.05, single_run_effect: 0.10, run_drift: 0.03, run_spread: 0.06 }
    }
}

impl Rule {
    /// The margin a settled win's gap must be beyond, on log figures:
    /// ln(1 + `min_effect`) + ln(1 + `run_drift`).
    pub fn settle_win_margin(&self) -> f64 {
        (1.0 + self.min_effect).ln() + (1.0 + self.run_drift.max(0.0)).ln()
    }
}

/// How a test between two configurations came out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Verdict {
    /// `winner` (0 = first side, 1 = second) is faster by `factor`.
    Win {
        /// 0 or 1.
        winner: usize,
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test backed it (false with single repetitions).
        tested: bool,
    },
    /// No significant difference, or below the minimum effect.
    Draw {
        /// Larger median / smaller median.
        factor: f64,
        /// Whether a significance test was made.
        tested: bool,
    },
    /// The test could not be compared.
    NotCompared {
        /// Why.
        reason: String,
    },
}

/// The rule in one line, for the notes under a table (terminal, HTML, `diff`).
pub fn rule_text(rule: &Rule) -> String {
    format!(
        "Winner: median figure over repetitions; Yuen's 20%-trimmed t-test on log figures (compare: on each round's ratio; diff: two samples; no trimming below 5 repetitions) that the gap is beyond {:.0}%, two-sided, significant when Benjamini-Hochberg keeps it at a 5% false discovery rate over all tests compared. With one repetition there is NO noise estimate: a win needs {:.0}% and is marked untested. Otherwise: draw.",
        rule.min_effect * 100.0,
        rule.single_run_effect * 100.0
    )
}

/// What a sentence quoting a win adds when the win rests on a single repetition: it is not a
/// tested difference. One wording for the summary lines, the "Why" headings and the HTML.
pub const UNTESTED_WORDS: &str = "untested: one repetition, no noise estimate";

/// ` (untested: ...)` after a quoted verdict that is an untested win, else nothing.
pub fn untested_mark(v: &Verdict) -> String {
    match v {
        Verdict::Win { tested: false, .. } => format!(" ({UNTESTED_WORDS})"),
        _ => String::new(),
    }
}

/// What an unsettled win is marked with ([`TestRow::unsettled`]).
pub const UNSETTLED_WORDS: &str = "unsettled";

/// What every output says about an unsettled win, once, under the table.
pub const UNSETTLED_NOTE: &str = "unsettled: significant, but its gap is not yet beyond the minimum effect plus the drift between identical runs at the strict level (1% over every test and round) at which --repeat auto calls a verdict settled; an identical run may call it a draw. Such a gap is close to the minimum effect for the noise measured: a quieter machine, a larger --scale (longer phases) or a larger --time-budget and --max-repeat are what settle it.";
