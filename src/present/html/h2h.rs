//! The report's head-to-head table (a figure per configuration, the winner's cell marked, the
//! verdicts), the rule and summary lines under it, and the "Why" panel.

use super::swatch;
use crate::model::report::{Report, TestRow};
use crate::model::result::{Figure, TestStatus};
use crate::model::units::sig3;
use crate::model::verdict::Verdict;
use maud::{html, Markup};

/// The figure of merit of every test, when they share one (the header then gives the unit).
fn common_unit(r: &Report) -> Option<Figure> {
    match r.tests.first().map(|t| t.figure) {
        Some(f) if r.tests.iter().all(|t| t.figure == f) => Some(f),
        None => Some(Figure::MibPerS),
        _ => None,
    }
}

/// The table, then what its figures are, the decision rule and the summary lines.
pub(super) fn head_to_head(r: &Report) -> Markup {
    // One unit in the header when all tests have the same figure of merit; else each cell says.
    let unit = common_unit(r);
    let n = r.configs.len();
    let base = &r.configs[r.baseline].label;
    let what = match unit {
        Some(Figure::MibPerS) => "MiB/s",
        Some(Figure::OpsPerS) => {
            "ops/s (file-set operations; s: elapsed seconds of the timed phases)"
        }
        None => "MiB/s for data tests, ops/s for file-set tests (s: elapsed seconds of the timed phases)",
    };
    let estimator = "median over repetitions (small: 95% confidence interval of the geometric mean, Student's t on the logs).";
    html! {
        h3 { "Head to head" }
        table.h2h {
            thead {
                tr {
                    th { "test" }
                    th { "description" }
                    th title="engine, queue depth per thread, O_DIRECT or buffered" { "I/O" }
                    @for (i, c) in r.configs.iter().enumerate() {
                        th.num {
                            (swatch(i)) (c.label)
                            @if let Some(u) = unit { " " span.unit { (u.unit()) } }
                        }
                        @if n > 2 && i != r.baseline { th { "vs " (base) } }
                    }
                    @if n == 2 { th { "winner / factor" } }
                }
            }
            tbody {
                @for (ti, row) in r.tests.iter().enumerate() { (test_row(r, ti, row, unit)) }
            }
        }
        @if n > 1 {
            p.rule { (what) ": " (estimator) " " (crate::model::verdict::rule_text(&r.rule)) }
            div.summary {
                @for p in &r.pairs {
                    p {
                        @for (k, l) in p.lines.iter().enumerate() {
                            @if k > 0 { br; }
                            (l)
                        }
                    }
                }
            }
        } @else {
            p.rule { (what) ": " (estimator) }
        }
    }
}

/// A test's row: id, description, I/O, each configuration's figure (and verdict).
fn test_row(r: &Report, ti: usize, row: &TestRow, unit: Option<Figure>) -> Markup {
    let n = r.configs.len();
    let two = n == 2;
    let desc = r.configs.first().map(|c| c.run.tests[ti].description.as_str()).unwrap_or("");
    // Engine, depth and O_DIRECT come from the workload: the same in every configuration.
    let io = r.configs.iter().find_map(|c| c.run.tests[ti].io_words()).unwrap_or_default();
    // The winner's cell is highlighted.
    let winner = match row.vs_baseline.iter().flatten().next() {
        Some(Verdict::Win { winner, .. }) if two => Some(if *winner == 0 { r.baseline } else { 1 }),
        _ => None,
    };
    let base = &r.configs[r.baseline].label;
    html! {
        tr {
            td.id { (row.id) }
            td { (desc) }
            td.io { (io) }
            @for (i, c) in r.configs.iter().enumerate() {
                td class=(if winner == Some(i) { "num win" } else { "num" }) {
                    (figure(r, ti, row, i, unit.is_none()))
                }
                @if n > 2 && i != r.baseline {
                    td {
                        (verdict(row.vs_baseline.get(i).cloned().flatten().as_ref(), base, &c.label, false, i))
                        (unsettled(row, i))
                    }
                }
            }
            @if two {
                td {
                    (verdict(row.vs_baseline.get(1).cloned().flatten().as_ref(), &r.configs[0].label, &r.configs[1].label, true, 1))
                    (unsettled(row, 1))
                }
            }
        }
    }
}

/// Configuration `i`'s figure of test `ti`: the median, its confidence interval, the elapsed
/// time of an ops/s test; or why there is none.
fn figure(r: &Report, ti: usize, row: &TestRow, i: usize, with_unit: bool) -> Markup {
    let t = &r.configs[i].run.tests[ti];
    let ci = t.summary.as_ref().and_then(|s| Some((s.merit().ci95_low?, s.merit().ci95_high?)));
    let elapsed = match row.figure {
        Figure::OpsPerS => row.median_elapsed_s.get(i).copied().flatten(),
        Figure::MibPerS => None,
    };
    html! {
        @match (&t.status, row.median(i)) {
            (TestStatus::Failed { reason }, _) => span.bad title=(reason) { "FAILED" },
            (TestStatus::Skipped { reason }, _) => span.muted title=(reason) { "not run" },
            (TestStatus::NotMet { reason }, None) => span.bad title=(reason) { "NOT MET" },
            (_, Some(m)) => {
                (sig3(m))
                @if let TestStatus::NotMet { reason } = &t.status {
                    " " span.bad title=(reason) { "(not met)" }
                }
                @if with_unit { " " span.unit { (row.figure.unit()) } }
                @if let Some((lo, hi)) = ci {
                    br;
                    span.ci title="95% confidence interval of the geometric mean" {
                        (sig3(lo)) "–" (sig3(hi))
                    }
                }
                @if let Some(e) = elapsed {
                    br;
                    span.ci title="elapsed seconds of the timed phases" { (sig3(e)) " s" }
                }
            },
            (_, None) => "–",
        }
    }
}

/// For each test with a winner: the observed facts that differ most (the same rules as the
/// terminal's "Why" section).
pub(super) fn why_panel(r: &Report) -> Markup {
    let items: Vec<Markup> = r
        .tests
        .iter()
        .enumerate()
        .flat_map(|(ti, row)| {
            (0..row.vs_baseline.len()).filter_map(move |i| why_item(r, ti, row, i))
        })
        .collect();
    if items.is_empty() {
        return html! {};
    }
    html! {
        h3 { "Why" }
        p.rule {
            "Observed facts that differ most between winner and loser (device requests, CPU, time in fsync, extents, memory); in grey, where each side's time went and, with "
            code { "--trace" } ", what the block layer saw."
        }
        ul.why { @for item in &items { (item) } }
    }
}

/// The facts of configuration `i` against the baseline in test `ti`: for wins, and for draws
/// whose medians lie further apart than the minimum effect (their facts are filled by the
/// rule), marked not significant.
fn why_item(r: &Report, ti: usize, row: &TestRow, i: usize) -> Option<Markup> {
    let mark = crate::model::report::verdict_mark(row, i);
    let why = row.why.get(i).map(Vec::as_slice).unwrap_or_default();
    let roles_only =
        !why.is_empty() && why.iter().all(|e| e.rule == crate::model::explanation::ROLE_CHANGE);
    if matches!(&row.vs_baseline[i], Some(Verdict::Draw { .. })) && roles_only {
        // A draw on the test's own figure; a role beside it changed.
        return Some(html! {
            li {
                b { "Test " (row.id) " " (r.configs[0].run.tests[ti].name) }
                ": a draw between " (r.configs[r.baseline].label) " and " (r.configs[i].label)
                (mark) "; a role beside it changed"
                ul { @for e in why { li { (e.text) } } }
            }
        });
    }
    let (winner, factor, significant) = match &row.vs_baseline[i] {
        Some(Verdict::Win { winner, factor, .. }) => (*winner, *factor, true),
        Some(Verdict::Draw { factor, .. }) if row.why.get(i).is_some_and(|w| !w.is_empty()) => {
            let (a, b) = (row.median(r.baseline), row.median(i));
            (usize::from(b > a), *factor, false)
        }
        _ => return None,
    };
    let (w, l) = if winner == 0 { (r.baseline, i) } else { (i, r.baseline) };
    Some(html! {
        li {
            b { "Test " (row.id) " " (r.configs[0].run.tests[ti].name) }
            ": " (r.configs[w].label) " " (format!("{factor:.1}")) "× faster than "
            (r.configs[l].label) (mark)
            @if !significant {
                " in medians: " b { "not significant" } " (a draw; the facts may be noise too)"
            }
            ul {
                @if !why.iter().any(|e| e.is_reason()) {
                    li.muted { (crate::model::explanation::NOTHING) }
                }
                @for e in why {
                    li class=[e.is_context().then_some("muted")] { (e.text) }
                }
            }
        }
    })
}

/// The unsettled mark of configuration `i`'s win ([`crate::model::report::TestRow::unsettled`]).
fn unsettled(row: &TestRow, i: usize) -> Markup {
    html! {
        @if row.unsettled.get(i).copied().unwrap_or(false) {
            " "
            span.muted title=(crate::model::verdict::UNSETTLED_NOTE) {
                "(" (crate::model::verdict::UNSETTLED_WORDS) ")"
            }
        }
    }
}

/// A verdict against the baseline: with two configurations the winner and factor, with more
/// how much faster or slower the other is.
fn verdict(v: Option<&Verdict>, base: &str, other: &str, two: bool, other_idx: usize) -> Markup {
    html! {
        @match v {
            Some(Verdict::Win { winner, factor, tested }) => {
                @let (w, wi) = if *winner == 0 { (base, 0) } else { (other, other_idx) };
                @if two {
                    (swatch(wi)) b { (w) } " " (format!("{factor:.1}")) "×"
                } @else if *winner == 1 {
                    b.good { (format!("{factor:.2}")) "× faster" }
                } @else {
                    b.bad { (format!("{factor:.2}")) "× slower" }
                }
                @if !tested {
                    " " span.muted title="one repetition: no significance test" { "(1 rep)" }
                }
            },
            Some(Verdict::Draw { factor, .. }) => {
                "draw " span.muted { "(" (format!("{factor:.2}")) "×)" }
            },
            Some(Verdict::NotCompared { reason }) => {
                span.muted title=(reason) { "not compared" }
            },
            None => {},
        }
    }
}
