//! Tests across the renderers: what every output shows of one report, and that text fits the
//! width it is laid out for.

use crate::analysis::compare::tests::config;
use crate::analysis::compare::{build_report, CompareOptions};
use crate::model::report::Report;
use crate::model::verdict::{Verdict, UNTESTED_WORDS};

/// Wide enough that no line of these tests' reports wraps.
const WIDE: usize = 250;

fn opts() -> CompareOptions {
    CompareOptions { engine: Default::default(), rule: Default::default(), fresh_per_test: false }
}

fn html(r: &Report) -> String {
    let run = crate::present::html::ReportRun {
        id: None,
        kind: crate::model::run::RunKind::Compare,
        command_line: String::new(),
        report: r.clone(),
    };
    crate::present::html::render(&[run]).unwrap().0
}

#[test]
fn a_draw_with_a_large_gap_shows_its_facts_marked_not_significant() {
    // Medians 1.8x apart, but one side is so noisy that the test cannot tell: a draw.
    let configs = vec![
        config("ext4", &[100.0, 30.0, 300.0], 900_000_000),
        config("xfs", &[180.0, 185.0, 175.0], 100_000_000),
    ];
    let r = build_report(configs, &opts(), 0, false);
    assert!(matches!(r.tests[0].vs_baseline[1], Some(Verdict::Draw { .. })), "{:?}", r.tests[0]);
    let text = crate::present::compare::render(&r, false, WIDE);
    assert!(text.contains("xfs 1.8X faster than ext4 in medians: NOT SIGNIFICANT"), "{text}");
    assert!(text.contains("fsync"), "{text}");
    // Where each side's time went, after the reasons.
    assert!(
        text.contains("    - where the time went (share of wall time × threads): ext4: "),
        "{text}"
    );
}

#[test]
fn untested_wins_are_marked_wherever_they_are_quoted() {
    // One repetition each, twice as fast: a win, but with no noise estimate.
    let configs = vec![config("ext4", &[100.0], 900_000_000), config("xfs", &[200.0], 100_000_000)];
    let r = build_report(configs, &opts(), 0, false);
    assert!(
        matches!(r.tests[0].vs_baseline[1], Some(Verdict::Win { tested: false, .. })),
        "{:?}",
        r.tests[0].vs_baseline
    );
    let mark = format!("({UNTESTED_WORDS})");
    let line = r.pairs[0].lines.iter().find(|l| l.starts_with("xfs outpaces")).unwrap();
    let text = crate::present::compare::render(&r, false, WIDE);
    assert!(text.contains(&format!("xfs 2.0X faster than ext4 {mark}")), "{text}");
    assert!(text.contains(line.as_str()), "{text}");
    let plain = crate::present::html::plain::summary(&r, "fsbench compare");
    assert!(plain.contains("untested: one repetition"), "{plain}");
    let html = html(&r);
    assert!(html.contains(&format!("xfs 2.0× faster than ext4 {mark}")), "no mark in the HTML Why");
    assert!(
        html.contains(&format!("by a mean factor of 2.0 {mark}")),
        "no mark in the HTML summary"
    );
}
