//! The result of a `run` or a `compare`: each configuration's results, each test across them
//! with its verdicts and the facts that explain them, and the study's summary lines. One
//! configuration is a `run`; several are a `compare`. Every output (terminal, JSON, CSV, bonnie,
//! HTML, the store) is made from [`Report`]; [`crate::analysis::compare`] builds it.

use crate::model::explanation::Explanation;
use crate::model::facts::Facts;
use crate::model::host::HostInfo;
use crate::model::result::{Figure, RunReport};
use crate::model::testbed::TestbedEnv;
use crate::model::verdict::{untested_mark, Rule, Verdict, UNSETTLED_WORDS};
use serde::{Deserialize, Serialize};

/// One configuration's part of a comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigResult {
    /// Label used in every output.
    pub label: String,
    /// How the filesystem was made and mounted (None for existing directories).
    pub env: Option<TestbedEnv>,
    /// Its results, as `fsbench run` would report them.
    pub run: RunReport,
}

/// One test across configurations.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestRow {
    /// Test id.
    pub id: String,
    /// Test name.
    pub name: String,
    /// What the test is ranked on; `vs_baseline` compares this figure.
    #[serde(default)]
    pub figure: Figure,
    /// Median MiB/s per configuration (None when it has no figure).
    pub median_mib_per_s: Vec<Option<f64>>,
    /// Median operations per second per configuration.
    #[serde(default)]
    pub median_ops_per_s: Vec<Option<f64>>,
    /// Median elapsed seconds of the timed phases per configuration.
    #[serde(default)]
    pub median_elapsed_s: Vec<Option<f64>>,
    /// Verdict of configuration i against the baseline (None at the baseline's index).
    pub vs_baseline: Vec<Option<Verdict>>,
    /// What each configuration did underneath (its median repetition).
    pub facts: Vec<Option<Facts>>,
    /// Why the winner of configuration i against the baseline won (empty: no winner, or
    /// nothing observed explains it; see `explained`).
    pub why: Vec<Vec<Explanation>>,
    /// Whether configuration i's win against the baseline is unsettled: significant, but not
    /// beyond the minimum effect at the strict level at which `--repeat auto` stops a test
    /// ([`decision::settled`]), so an identical run may well call it a draw.
    #[serde(default)]
    pub unsettled: Vec<bool>,
    /// `--curve`: each step of each curved phase, configuration i against the baseline, on
    /// the step's p99 ([`crate::model::curve::StepVerdict`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve_verdicts: Vec<crate::model::curve::StepVerdict>,
}

impl TestRow {
    /// Median of the figure of merit of configuration `i`.
    pub fn median(&self, i: usize) -> Option<f64> {
        let v = match self.figure {
            Figure::MibPerS => &self.median_mib_per_s,
            Figure::OpsPerS => &self.median_ops_per_s,
        };
        v.get(i).copied().flatten()
    }
}

/// The study's summary of one pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairSummary {
    /// The baseline's label.
    pub a: String,
    /// The other configuration's label.
    pub b: String,
    /// Tests `a` won.
    pub a_wins: u32,
    /// Arithmetic mean of `a`'s winning factors (the study's "mean factor").
    pub a_mean_factor: Option<f64>,
    /// Tests `b` won.
    pub b_wins: u32,
    /// Arithmetic mean of `b`'s winning factors.
    pub b_mean_factor: Option<f64>,
    /// Draws.
    pub draws: u32,
    /// Tests not compared, with why.
    pub not_compared: Vec<(String, String)>,
    /// The summary in words.
    pub lines: Vec<String>,
}

/// A whole comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// fsbench version.
    pub fsbench_version: String,
    /// Start, seconds since the epoch.
    pub started_unix_s: u64,
    /// The machine.
    pub host: HostInfo,
    /// Suite name.
    pub suite: String,
    /// `--scale`.
    pub scale: String,
    /// Repetitions per test and configuration.
    pub repeat: u32,
    /// Fresh filesystem per test (true) or per suite (false).
    pub fresh_per_test: bool,
    /// The decision rule used.
    pub rule: Rule,
    /// Index of the baseline configuration (the first).
    pub baseline: usize,
    /// Per configuration.
    pub configs: Vec<ConfigResult>,
    /// Per test.
    pub tests: Vec<TestRow>,
    /// Baseline against each other configuration.
    pub pairs: Vec<PairSummary>,
    /// Stopped by Ctrl-C/SIGTERM.
    pub interrupted: bool,
    /// Where the time went: timed phases, each kind of untimed work, per test (None: stored
    /// before fsbench measured it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<crate::model::time::TimeSplit>,
}

impl Report {
    /// The report with the time split of its repetitions alone ([`TimeSplit::of_reps`]), for
    /// a report built from results (the command that ran it adds its testbeds and driver).
    ///
    /// [`TimeSplit::of_reps`]: crate::model::time::TimeSplit::of_reps
    pub fn with_time_of_reps(mut self) -> Report {
        let runs: Vec<&crate::model::result::RunReport> =
            self.configs.iter().map(|c| &c.run).collect();
        self.time = crate::model::time::TimeSplit::of_reps(&runs);
        self
    }

    /// "8 repetitions", or with `--repeat auto`, which gives tests different counts, "5 to 8
    /// repetitions": what the tests got (tests without any left out); none: what was asked.
    pub fn repetitions(&self) -> String {
        let done = self.configs.iter().flat_map(|c| &c.run.tests).map(|t| t.reps.len() as u32);
        let (least, most) =
            done.filter(|&n| n > 0).fold((u32::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
        let count = |n: u32| format!("{n} repetition{}", if n == 1 { "" } else { "s" });
        match (least, most) {
            (_, 0) => count(self.repeat),
            (lo, hi) if lo < hi => format!("{lo} to {hi} repetitions"),
            (_, hi) => count(hi),
        }
    }
}

/// The mark after configuration `i`'s verdict in row `row`: untested (one repetition) or
/// unsettled; empty otherwise.
pub fn verdict_mark(row: &TestRow, i: usize) -> String {
    match row.vs_baseline.get(i).and_then(|v| v.as_ref()) {
        Some(v @ Verdict::Win { tested: false, .. }) => untested_mark(v),
        Some(Verdict::Win { .. }) if row.unsettled.get(i).copied().unwrap_or(false) => {
            format!(" ({UNSETTLED_WORDS})")
        }
        _ => String::new(),
    }
}
