//! Per-repetition figures in the terminal: the figure of each repetition in the order run, and a
//! note when the first repetition stands out from the others
//! ([`crate::stats::summary::first_rep_stands_out`]).

use super::frame::wrap;
use crate::model::report::Report;
use crate::model::result::TestResult;
use crate::model::units::sig3;
use crate::stats::summary::first_rep_stands_out;

/// Figures of the completed repetitions of `t` that met their preconditions, in the order run.
pub fn figures(t: &TestResult) -> Vec<f64> {
    t.reps.iter().filter(|r| r.counts()).map(|r| t.figure.value(r)).collect()
}

/// What stands for a completed repetition that missed its precondition: it measured
/// something else, so it has no figure here (the JSON keeps what it measured).
pub const UNMET_REP: &str = "unmet";

/// The figures as text, `a b c`; a first repetition that stands out is marked `!`; one that
/// missed its precondition is [`UNMET_REP`].
pub fn strip(t: &TestResult) -> String {
    let odd = first_rep_stands_out(&figures(t)).is_some();
    let mut first = true;
    t.reps
        .iter()
        .filter(|r| r.complete)
        .map(|r| {
            if !r.preconditions_met() {
                return UNMET_REP.to_string();
            }
            let mark = if first && odd { "!" } else { "" };
            first = false;
            format!("{}{mark}", sig3(t.figure.value(r)))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One note for `label`'s tests whose first repetition stands out, or `None`.
pub fn first_rep_note(label: Option<&str>, tests: &[TestResult]) -> Option<String> {
    let odd: Vec<String> = tests
        .iter()
        .filter_map(|t| {
            first_rep_stands_out(&figures(t))
                .map(|r| format!("{} ({r:.2}x the others' median)", t.id))
        })
        .collect();
    if odd.is_empty() {
        return None;
    }
    Some(format!(
        "{}the first repetition stands out from the others in test{} {}: a cost only the first pays (a fresh testbed's first touch, a cold cache, a daemon starting) or a disturbance; the median is robust to it, but check with `--details` or more repetitions",
        label.map(|l| format!("{l}: ")).unwrap_or_default(),
        if odd.len() == 1 { "" } else { "s" },
        odd.join(", ")
    ))
}

/// The heading of the section.
const HEADING: &str = "Repetitions (figure of each, in the order run; ! = first stands out):";

/// `--details` of a comparison: each repetition's figure per test and configuration, lines
/// wrapped to `width`.
pub fn section(r: &Report, width: usize) -> String {
    let mut out = String::from("\n");
    out.push_str(&wrap(HEADING, width, "", ""));
    for (ti, row) in r.tests.iter().enumerate() {
        for c in &r.configs {
            let t = &c.run.tests[ti];
            let line = format!("test {:<4} {:<24} {}", row.id, c.label, strip(t));
            out.push_str(&wrap(&line, width, "  ", "      "));
        }
    }
    out
}

/// `run --details`: each repetition's figure per test, lines wrapped to `width`.
pub fn run_section(tests: &[TestResult], width: usize) -> String {
    let mut out = String::from("\n");
    out.push_str(&wrap(HEADING, width, "", ""));
    for t in tests {
        let line = format!("test {:<14} {} {}", t.id, strip(t), t.figure.unit());
        out.push_str(&wrap(&line, width, "  ", "      "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::result::{Figure, RepResult, TestStatus};

    fn test(id: &str, mibs: &[f64]) -> TestResult {
        TestResult {
            id: id.into(),
            name: "t".into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            complete_reps: mibs.len() as u32,
            reps: mibs
                .iter()
                .map(|m| RepResult { complete: true, mib_per_s: *m, ..Default::default() })
                .collect(),
            figure: Figure::MibPerS,
            summary: None,
            warnings: vec![],
        }
    }

    #[test]
    fn a_slow_first_repetition_is_marked_and_noted() {
        let t =
            vec![test("1", &[387.0, 4000.0, 3950.0, 4100.0]), test("2", &[10.0, 11.0, 9.5, 10.2])];
        assert_eq!(strip(&t[0]), "387! 4000 3950 4100");
        assert_eq!(strip(&t[1]), "10.0 11.0 9.50 10.2");
        let n = first_rep_note(Some("ext4"), &t).unwrap();
        assert!(
            n.starts_with("ext4: the first repetition stands out") && n.contains("test 1 (0.10x"),
            "{n}"
        );
        assert!(!n.contains("test 2"), "{n}");
        assert!(first_rep_note(None, &t[1..]).is_none());
    }

    #[test]
    fn file_set_tests_show_their_ops_per_second() {
        let mut t = test("9", &[0.0, 0.0, 0.0, 0.0]);
        t.figure = Figure::OpsPerS;
        for (r, ops) in t.reps.iter_mut().zip([120.0, 1000.0, 990.0, 1010.0]) {
            r.ops_per_s = ops;
        }
        assert_eq!(strip(&t), "120! 1000 990 1010");
        assert!(first_rep_note(None, std::slice::from_ref(&t)).unwrap().contains("test 9"));
    }
}
