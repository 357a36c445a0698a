//! Output of `fsbench compare`: the head-to-head table, the study's summary lines, JSON and CSV,
//! all from [`Report`].

use super::frame::{self, Grid, Kind};
use crate::model::facts::Facts;
use crate::model::report::{ConfigResult, Report, TestRow};
use crate::model::result::{Figure, TestStatus, Warning};
use crate::model::units::sig3;
use crate::model::verdict::Verdict;

/// Short text of a verdict of `other` against the baseline, with its mark
/// ([`crate::model::report::verdict_mark`]).
fn verdict_cell(v: &Verdict, base: &str, other: &str, two: bool, mark: &str) -> String {
    match v {
        Verdict::Win { winner, factor, .. } => {
            let w = if *winner == 0 { base } else { other };
            if two {
                format!("{w} / {factor:.1}X")
            } else if *winner == 1 {
                format!("{factor:.2}X faster")
            } else {
                format!("{factor:.2}X slower")
            }
        }
        Verdict::Draw { .. } => "draw".into(),
        Verdict::NotCompared { .. } => "not compared".into(),
    }
    .to_string()
        + match v {
            Verdict::Win { tested: false, .. } => " (untested)",
            Verdict::Win { .. } => mark,
            _ => "",
        }
}

/// A loud line when a verdict rests on a single repetition (no noise estimate).
fn untested_warning(r: &Report) -> String {
    let n = r
        .tests
        .iter()
        .flat_map(|t| t.vs_baseline.iter().flatten())
        .filter(|v| {
            matches!(v, Verdict::Win { tested: false, .. } | Verdict::Draw { tested: false, .. })
        })
        .count();
    if n == 0 {
        return String::new();
    }
    format!(
        "WARNING: {n} verdicts rest on a single repetition: there is NO noise estimate, wins marked (untested) may be noise. Use --repeat auto (the default) or --repeat 5 or more.\n"
    )
}

/// A configuration's figure: the median, its unit when the header has none, and for ops/s tests
/// the elapsed seconds of the timed phases.
fn figure_cell(row: &TestRow, i: usize, median: f64, with_unit: bool) -> String {
    let mut s = sig3(median);
    if with_unit {
        s.push(' ');
        s.push_str(row.figure.unit());
    }
    if row.figure == Figure::OpsPerS {
        if let Some(e) = row.median_elapsed_s.get(i).copied().flatten() {
            s.push_str(&format!(" in {} s", sig3(e)));
        }
    }
    s
}

/// Render the comparison for a terminal of `width` columns; `details` adds each
/// configuration's observed facts per test.
pub fn render(r: &Report, details: bool, width: usize) -> String {
    let mut out = frame::wrap(&headline(r), width, "", "  ");
    out.push_str(&head_to_head(r).render(width));
    out.push_str(&rule_lines(r, width));
    for p in &r.pairs {
        out.push('\n');
        for l in &p.lines {
            out.push_str(&frame::wrap(l, width, "  ", "    "));
        }
    }
    let groups: Vec<(&str, &[crate::model::result::TestResult])> =
        r.configs.iter().map(|c| (c.label.as_str(), c.run.tests.as_slice())).collect();
    let verdicts: Vec<&[crate::model::curve::StepVerdict]> =
        r.tests.iter().map(|t| t.curve_verdicts.as_slice()).collect();
    out.push_str(&super::curve::section(&groups, &verdicts, width));
    out.push_str(&why_section(r, width));
    out.push_str(&super::roles::section(
        r.configs.iter().map(|c| (c.label.as_str(), c.run.tests.as_slice())),
        width,
    ));
    if details {
        out.push_str(&details_section(r, width));
        out.push_str(&super::reps::section(r, width));
    }
    let notes = notes(r);
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(&frame::bullets("Notes:", &notes, width));
    }
    out.push_str(&configurations(r, width));
    out
}

/// The line above the table.
fn headline(r: &Report) -> String {
    format!(
        "fsbench {} compare: suite {}, scale {}, {} per configuration, interleaved, {} filesystem per {}",
        r.fsbench_version,
        r.suite,
        r.scale,
        r.repetitions(),
        if r.configs.iter().any(|c| c.env.is_some()) { "fresh" } else { "existing" },
        if r.fresh_per_test { "test" } else { "suite" },
    )
}

/// The figure of merit of every test, when they share one (the header then gives the unit).
fn common_unit(r: &Report) -> Option<Figure> {
    match r.tests.first().map(|t| t.figure) {
        Some(f) if r.tests.iter().all(|t| t.figure == f) => Some(f),
        None => Some(Figure::MibPerS),
        _ => None,
    }
}

/// The head-to-head table: a row per test, a figure per configuration, the verdicts.
fn head_to_head(r: &Report) -> Grid {
    let labels: Vec<&str> = r.configs.iter().map(|c| c.label.as_str()).collect();
    let two = labels.len() == 2;
    let base = labels.first().copied().unwrap_or("");
    // One unit in the header when every test has the same figure of merit; else each cell says.
    let unit = common_unit(r);
    let in_header = unit.map(|u| format!(" {}", u.unit())).unwrap_or_default();
    let mut g = Grid::new();
    // The description and the verdicts may wrap; the figures may not.
    g.column("test", Kind::Key).column("description", Kind::Words);
    for (i, l) in labels.iter().enumerate() {
        if i == r.baseline && !two {
            g.column(format!("{l} (baseline){in_header}"), Kind::Figure);
        } else {
            g.column(format!("{l}{in_header}"), Kind::Figure);
        }
        if i != r.baseline && !two {
            g.glued(format!("{l} vs {base}"), Kind::Words);
        }
    }
    if two {
        g.column("winning FS / delta", Kind::Words);
    }
    for (ti, row) in r.tests.iter().enumerate() {
        g.row(head_to_head_row(r, ti, row, unit.is_none()));
    }
    g
}

/// One test's row of [`head_to_head`].
fn head_to_head_row(r: &Report, ti: usize, row: &TestRow, with_unit: bool) -> Vec<String> {
    let two = r.configs.len() == 2;
    let base = r.configs.first().map(|c| c.label.as_str()).unwrap_or("");
    // The engine, depth and O_DIRECT when not psync at depth 1, buffered (as in `run`).
    let bt = &r.configs[0].run.tests[ti];
    let desc = match bt.timed_phase().map(|p| p.io_label()) {
        Some(l) if !l.is_empty() => format!("{} [{l}]", bt.description),
        _ => bt.description.clone(),
    };
    // The passes --min-time fixed for the test (the same on every configuration).
    let desc = format!("{desc}{}", bt.passes_words());
    let mut cells = vec![row.id.clone(), desc];
    for (i, c) in r.configs.iter().enumerate() {
        let tr = &c.run.tests[ti];
        let fig = match (&tr.status, row.median(i)) {
            (TestStatus::Failed { .. }, _) => "FAILED".to_string(),
            (TestStatus::Skipped { .. }, _) => "skipped".to_string(),
            // Over the repetitions that met the precondition, marked; none: no figure.
            (TestStatus::NotMet { .. }, Some(m)) => {
                format!("{}{}", figure_cell(row, i, m, with_unit), super::table::NOT_MET_MARK)
            }
            (TestStatus::NotMet { .. }, None) => super::table::NOT_MET.to_string(),
            (_, Some(m)) => figure_cell(row, i, m, with_unit),
            (_, None) => "-".to_string(),
        };
        cells.push(fig);
        if i != r.baseline && !two {
            let mark = crate::model::report::verdict_mark(row, i);
            let v =
                row.vs_baseline[i].as_ref().map(|v| verdict_cell(v, base, &c.label, false, &mark));
            cells.push(v.unwrap_or_default());
        }
    }
    if two {
        let mark = crate::model::report::verdict_mark(row, 1);
        let other = &r.configs[1].label;
        let v = row.vs_baseline[1].as_ref().map(|v| verdict_cell(v, base, other, true, &mark));
        cells.push(v.unwrap_or_default());
    }
    cells
}

/// Under the table: what the figures are, the decision rule, the unsettled and untested words.
fn rule_lines(r: &Report, width: usize) -> String {
    let what = match common_unit(r) {
        Some(Figure::MibPerS) => "MiB/s: median over repetitions",
        Some(Figure::OpsPerS) => "ops/s: median over repetitions (file-set operations; s: elapsed seconds of the timed phases)",
        None => "MiB/s for data tests, ops/s for file-set tests (s: elapsed seconds of the timed phases): median over repetitions",
    };
    let rule = format!("{what}. {}", crate::model::verdict::rule_text(&r.rule));
    let mut out = frame::wrap(&rule, width, "", "");
    if r.tests.iter().any(|t| t.unsettled.contains(&true)) {
        let note = format!("({})", crate::model::verdict::UNSETTLED_NOTE);
        out.push_str(&frame::wrap(&note, width, "", ""));
    }
    out.push_str(&frame::wrap(&untested_warning(r), width, "", ""));
    out
}

/// The notes under a comparison: --repeat auto's counts first, then per configuration its
/// failures, warnings, noisy and short tests, then the machine's.
fn notes(r: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    // --repeat auto's note per configuration (the same on every one when they were compared
    // in the same rounds: then said once).
    let mut auto_notes: Vec<(&str, String)> = Vec::new();
    for c in &r.configs {
        if let Some(n) = config_notes(c, &mut notes) {
            auto_notes.push((&c.label, n));
        }
    }
    notes.extend(super::host::notes(&r.host, r.configs.iter().flat_map(|c| c.run.tests.iter())));
    let same = auto_notes.len() == r.configs.len()
        && auto_notes.len() > 1
        && auto_notes.iter().all(|(_, t)| *t == auto_notes[0].1);
    let auto_lines: Vec<String> = if same {
        vec![format!("every configuration: {}", auto_notes[0].1)]
    } else {
        auto_notes.iter().map(|(l, t)| format!("{l}: {t}")).collect()
    };
    notes.splice(0..0, auto_lines);
    if r.interrupted {
        notes.push("comparison interrupted: figures are what was measured before the stop".into());
    }
    notes
}

/// One configuration's notes, added to `notes`; its --repeat auto note is returned.
fn config_notes(c: &ConfigResult, notes: &mut Vec<String>) -> Option<String> {
    notes.extend(super::reps::first_rep_note(Some(&c.label), &c.run.tests));
    let mut short = Vec::new();
    let mut noisy = Vec::new();
    let mut auto: Vec<((u32, String), Vec<String>)> = Vec::new();
    for tr in &c.run.tests {
        if let TestStatus::Failed { reason } = &tr.status {
            notes.push(format!("{} test {} failed: {reason}", c.label, tr.id));
        }
        for n in super::series::load_notes(tr) {
            notes.push(format!("{} {n}", c.label));
        }
        for w in &tr.warnings {
            match w {
                Warning::ShortPhase { .. } => short.push(tr.id.clone()),
                Warning::Noisy { cv } => noisy.push(format!("{} ({:.0}%)", tr.id, cv * 100.0)),
                Warning::Repetitions { count, stopped_by, ci, needed_budget_s, .. } => {
                    let key = (*count, stopped_by.clone());
                    let mut detail: Vec<String> =
                        ci.iter().map(|c| format!("±{:.1}%", c * 100.0)).collect();
                    if stopped_by == "noisy" {
                        detail.push(match needed_budget_s {
                            Some(s) => format!("needs --time-budget {:.0}s", s.ceil()),
                            None => "no budget would settle it".into(),
                        });
                    }
                    let item = if detail.is_empty() {
                        tr.id.clone()
                    } else {
                        format!("{} ({})", tr.id, detail.join(", "))
                    };
                    match auto.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, v)) => v.push(item),
                        None => auto.push((key, vec![item])),
                    }
                }
                _ => notes.push(format!("{} test {}: {w}", c.label, tr.id)),
            }
        }
    }
    let auto_note = auto_note(c, auto);
    if !noisy.is_empty() {
        notes.push(format!(
            "{}: repetitions vary by more than {:.0}% (coefficient of variation) in test{} {}; differences smaller than that are noise",
            c.label,
            crate::model::result::NOISY_CV * 100.0,
            if noisy.len() == 1 { "" } else { "s" },
            noisy.join(", ")
        ));
    }
    if !short.is_empty() {
        notes.push(format!(
            "{}: timed phase under {} ms in test{} {} (start-up and scheduler noise weigh on these figures; use --min-time or a larger --scale)",
            c.label,
            crate::model::result::SHORT_PHASE.as_millis(),
            if short.len() == 1 { "" } else { "s" },
            short.join(", ")
        ));
    }
    auto_note
}

/// --repeat auto: how many repetitions each test of `c` got, and what stopped it (grouped by
/// what stopped it, then by count); `None` without --repeat auto.
fn auto_note(c: &ConfigResult, mut auto: Vec<((u32, String), Vec<String>)>) -> Option<String> {
    let target = c.run.tests.iter().flat_map(|t| &t.warnings).find_map(|w| match w {
        Warning::Repetitions { target_ci, .. } => Some(*target_ci),
        _ => None,
    })?;
    let rank =
        |why: &str| ["settled", "ci", "max", "budget", "noisy"].iter().position(|w| *w == why);
    auto.sort_by_key(|((n, why), _)| (rank(why).unwrap_or(usize::MAX), *n));
    let groups: Vec<String> = auto
        .iter()
        .map(|((n, why), ids)| {
            let why = match why.as_str() {
                "ci" => "CI within target".to_string(),
                "settled" => "verdict settled".into(),
                "max" => "--max-repeat reached".into(),
                "budget" => "--time-budget spent".into(),
                "noisy" => "too noisy to settle in the budget left".into(),
                w => w.to_string(),
            };
            format!(
                "{n} ({why}) in test{} {}",
                if ids.len() == 1 { "" } else { "s" },
                ids.join(", ")
            )
        })
        .collect();
    Some(format!(
        "--repeat auto (a test stops when its 95% CI is within ±{:.0}% or its verdict is settled, or when even an optimistic forecast cannot settle it in the budget left; ± is the widest CI of the test over the configurations compared): {}",
        target * 100.0,
        groups.join("; ")
    ))
}

/// How each configuration was made and mounted.
fn configurations(r: &Report, width: usize) -> String {
    let mut out = String::from("\nConfigurations:\n");
    for c in &r.configs {
        let line = match &c.env {
            Some(e) => format!("{}: {}", c.label, e.summary_line()),
            None => format!(
                "{}: existing directory on {} ({})",
                c.label, c.run.target.fs_type, c.run.target.mount_options
            ),
        };
        out.push_str(&frame::wrap(&line, width, "  ", "      "));
        if let Some(w) = crate::observe::compress::words(&c.run.tests) {
            out.push_str(&frame::wrap(&w, width, "    ", "      "));
        }
    }
    out
}

/// JSON of the whole comparison, as `--format json` prints it ([`super::json::value`]: no
/// histograms, winners by label, each test's median repetition).
pub fn json(r: &Report) -> anyhow::Result<Vec<u8>> {
    let mut v = serde_json::to_vec_pretty(&super::json::value(r, false)?)?;
    v.push(b'\n');
    Ok(v)
}

/// The compare CSV's columns before the role columns ([`super::csv::ROLE_HEADER`]); a role's
/// row fills the first three (test, name, config) and the role's.
const COMPARE_HEADER: &[&str] = &[
    "test",
    "name",
    "config",
    "status",
    "reps",
    "mib_per_s_median",
    "mib_per_s_ci95_low",
    "mib_per_s_ci95_high",
    "ops_per_s_median",
    "figure",
    "figure_median",
    "figure_ci95_low",
    "figure_ci95_high",
    "elapsed_s_median",
    "baseline",
    "vs_baseline",
    "winner",
    "factor",
    "tested",
    "unsettled",
    "reason",
    "engine",
    "iodepth",
    "direct",
    "main_op",
    "lat_p50_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "cpu_pct_per_thread",
];

/// CSV: one row per test and configuration, each test with roles followed by a row per role.
pub fn csv(r: &Report) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COMPARE_HEADER.iter().chain(super::csv::ROLE_HEADER))?;
    let base = &r.configs[r.baseline].label;
    for (ti, row) in r.tests.iter().enumerate() {
        for (i, c) in r.configs.iter().enumerate() {
            let tr = &c.run.tests[ti];
            let s = tr.summary.as_ref();
            let status = match &tr.status {
                TestStatus::Ok => "ok",
                TestStatus::Failed { .. } => "failed",
                TestStatus::Interrupted => "interrupted",
                TestStatus::Skipped { .. } => "skipped",
                TestStatus::NotMet { .. } => "not_met",
            };
            let [verdict, winner, factor, tested, reason] =
                verdict_columns(row.vs_baseline[i].as_ref(), base, &c.label);
            let f = |x: Option<f64>| x.map(|v| format!("{v:.6}")).unwrap_or_default();
            let unsettled = match row.vs_baseline[i] {
                Some(Verdict::Win { tested: true, .. }) => {
                    row.unsettled.get(i).copied().unwrap_or(false).to_string()
                }
                _ => String::new(),
            };
            let io = tr.timed_phase();
            let main = tr.main_latency();
            w.write_record(
                [
                    row.id.clone(),
                    row.name.clone(),
                    c.label.clone(),
                    status.into(),
                    tr.complete_reps.to_string(),
                    f(s.map(|s| s.mib_per_s.median)),
                    f(s.and_then(|s| s.mib_per_s.ci95_low)),
                    f(s.and_then(|s| s.mib_per_s.ci95_high)),
                    f(s.map(|s| s.ops_per_s.median)),
                    tr.figure.key().into(),
                    f(s.map(|s| s.merit().median)),
                    f(s.and_then(|s| s.merit().ci95_low)),
                    f(s.and_then(|s| s.merit().ci95_high)),
                    f(s.map(|s| s.elapsed_s.median)),
                    base.clone(),
                    verdict,
                    winner,
                    factor,
                    tested,
                    unsettled,
                    reason,
                    io.map(|p| p.engine.clone()).unwrap_or_default(),
                    io.map(|p| p.iodepth.to_string()).unwrap_or_default(),
                    io.map(|p| p.direct.to_string()).unwrap_or_default(),
                    main.map(|m| m.op.name().to_string()).unwrap_or_default(),
                    main.map(|m| m.p50_nanos.to_string()).unwrap_or_default(),
                    main.map(|m| m.p99_nanos.to_string()).unwrap_or_default(),
                    main.map(|m| m.p999_nanos.to_string()).unwrap_or_default(),
                    f(tr.median_rep().map(|m| m.cpu_pct_per_thread)),
                ]
                .into_iter()
                .chain(super::csv::ROLE_HEADER.iter().map(|_| String::new())),
            )?;
            for cells in super::csv::role_cells(tr) {
                let mut role_row = vec![row.id.clone(), row.name.clone(), c.label.clone()];
                role_row.resize(COMPARE_HEADER.len(), String::new());
                role_row.extend(cells);
                w.write_record(&role_row)?;
            }
        }
    }
    Ok(w.into_inner()?)
}

/// The CSV's verdict columns of a configuration against the baseline `base`: verdict, winner,
/// factor, tested, reason.
fn verdict_columns(v: Option<&Verdict>, base: &str, label: &str) -> [String; 5] {
    match v {
        Some(Verdict::Win { winner, factor, tested }) => [
            "win".into(),
            if *winner == 0 { base.to_string() } else { label.to_string() },
            format!("{factor:.4}"),
            tested.to_string(),
            String::new(),
        ],
        Some(Verdict::Draw { factor, tested }) => [
            "draw".into(),
            String::new(),
            format!("{factor:.4}"),
            tested.to_string(),
            String::new(),
        ],
        Some(Verdict::NotCompared { reason }) => {
            ["not_compared".into(), String::new(), String::new(), String::new(), reason.clone()]
        }
        None => Default::default(),
    }
}

/// "Why" per test with a winner: the observed facts that differ most.
fn why_section(r: &Report, width: usize) -> String {
    let mut out = String::new();
    for (ti, row) in r.tests.iter().enumerate() {
        for (i, v) in row.vs_baseline.iter().enumerate() {
            // Wins, and draws whose medians differ by more than the minimum effect (the rule
            // filled `why` for those; the faster median is the "winner" of the facts).
            let mark = crate::model::report::verdict_mark(row, i);
            let why = &row.why[i];
            let roles_only = !why.is_empty()
                && why.iter().all(|e| e.rule == crate::model::explanation::ROLE_CHANGE);
            if matches!(v, Some(Verdict::Draw { .. })) && roles_only {
                // A draw on the test's own figure; a role beside it changed.
                if out.is_empty() {
                    out.push_str("\nWhy (observed facts that differ most):\n");
                }
                let head = format!(
                    "test {} ({}): a draw between {} and {}{mark}; a role beside it changed",
                    row.id,
                    r.configs[0].run.tests[ti].name,
                    r.configs[r.baseline].label,
                    r.configs[i].label
                );
                out.push_str(&frame::wrap(&head, width, "  ", "    "));
                for e in why {
                    out.push_str(&frame::wrap(&e.text, width, "    - ", "      "));
                }
                continue;
            }
            let (winner, factor, significant) = match v {
                Some(Verdict::Win { winner, factor, .. }) => (*winner, *factor, true),
                Some(Verdict::Draw { factor, .. }) if !row.why[i].is_empty() => {
                    let (a, b) = (row.median(r.baseline), row.median(i));
                    (usize::from(b > a), *factor, false)
                }
                _ => continue,
            };
            let (w, l) = if winner == 0 { (r.baseline, i) } else { (i, r.baseline) };
            if out.is_empty() {
                out.push_str("\nWhy (observed facts that differ most):\n");
            }
            let head = format!(
                "test {} ({}): {} {:.1}X faster than {}{mark}{}",
                row.id,
                r.configs[0].run.tests[ti].name,
                r.configs[w].label,
                factor,
                r.configs[l].label,
                if significant {
                    ""
                } else {
                    " in medians: NOT SIGNIFICANT (a draw; the facts may be noise too)"
                }
            );
            out.push_str(&frame::wrap(&head, width, "  ", "    "));
            if !why.iter().any(|e| e.is_reason()) {
                out.push_str(&frame::wrap(
                    crate::model::explanation::NOTHING,
                    width,
                    "    - ",
                    "      ",
                ));
            }
            for e in why {
                out.push_str(&frame::wrap(&e.text, width, "    - ", "      "));
            }
        }
    }
    out
}

/// Per test, per configuration: block, CPU, memory and extent facts.
fn details_section(r: &Report, width: usize) -> String {
    let mut rows = Vec::new();
    for row in &r.tests {
        for (i, c) in r.configs.iter().enumerate() {
            if let Some(f) = &row.facts[i] {
                rows.push((row.id.as_str(), c.label.as_str(), f));
            }
        }
    }
    let configs: Vec<(&str, &[crate::model::result::TestResult])> =
        r.configs.iter().map(|c| (c.label.as_str(), c.run.tests.as_slice())).collect();
    let mut out = details_table(&rows, width) + &verify_lines(&configs, width);
    out.push_str(&super::series::details_section(&configs, width));
    out
}

/// The details table: one row per (test id, configuration label, facts of its median
/// repetition), laid out for `width` columns. A FUSE daemon's CPU is shown beside the
/// threads' own.
pub fn details_table(rows: &[(&str, &str, &Facts)], width: usize) -> String {
    let mut g = Grid::new();
    // Configurations wrap; counts and sizes stay whole.
    g.column("test", Kind::Key).column("config", Kind::Words);
    for h in [
        "dev writes (avg)",
        "dev reads (avg)",
        "write amp",
        "dev/read",
        "CPU/thr (sys)",
        "fs CPU/op",
        "rw/sync/md",
        "off CPU",
        "dirty after",
        "extents (largest)",
    ] {
        g.column(h, Kind::Figure);
    }
    for (id, label, f) in rows {
        g.row(details_row(id, label, f));
    }
    let wide = if rows.iter().any(|(_, _, f)| f.device_shared()) {
        "*: device-wide, other processes' I/O included (a directory on a device fsbench did not make).\n"
    } else {
        ""
    };
    let legend = format!(
        "{wide}CPU/thr: the threads' CPU, % of a core per thread (system share); +daemon: a FUSE daemon's CPU, % of one core.\ndev writes, dev reads: requests completed (mean size). dev/read: bytes read from the device / bytes the test read. fs CPU/op: system CPU per operation, a FUSE daemon's CPU included. rw/sync/md: share of wall time × threads in read/write, in syncs (fsync, fdatasync, O_DSYNC writes), in open/close/metadata calls. off CPU: blocked (device, locks, FUSE daemon) or waiting for a CPU. dirty after: dirty page cache the phase itself left."
    );
    format!(
        "\n{}{}{}",
        frame::wrap("Details (median repetition, timed phases):", width, "", ""),
        g.render(width),
        frame::wrap(&legend, width, "", "")
    )
}

/// One row of [`details_table`].
fn details_row(id: &str, label: &str, f: &Facts) -> Vec<String> {
    use crate::model::units::fmt_bytes;
    let d = f.device.as_ref();
    let wide = if f.device_shared() { "*" } else { "" };
    let req = |n: Option<u64>, avg: Option<f64>| match (n, avg) {
        (Some(n), Some(a)) => format!("{n} ({})", fmt_bytes(a as u64)),
        (Some(n), None) => n.to_string(),
        _ => "-".into(),
    };
    let opt = |x: Option<f64>, suffix: &str| {
        x.map(|v| format!("{v:.2}{suffix}")).unwrap_or_else(|| "-".into())
    };
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let (split, off) = match &f.time {
        Some(tm) => (
            format!(
                "{:.0}/{:.0}/{:.0}%",
                tm.share(tm.data_nanos) * 100.0,
                tm.share(tm.sync_nanos) * 100.0,
                tm.share(tm.meta_nanos) * 100.0
            ),
            pct(tm.share(tm.off_cpu_nanos())),
        ),
        None => (format!("-/{}/-", pct(f.sync_share)), "-".into()),
    };
    vec![
        id.to_string(),
        label.to_string(),
        req(d.map(|d| d.writes_completed), f.avg_write_request_bytes) + wide,
        req(d.map(|d| d.reads_completed), f.avg_read_request_bytes) + wide,
        opt(f.write_amplification, "x"),
        opt(f.device_read_share, ""),
        format!(
            "{:.0}% ({:.0}%){}{}",
            f.cpu_pct_per_thread,
            f.sys_share * 100.0,
            if f.cpu_bound { " bound" } else { "" },
            f.daemon_cpu_share.map(|d| format!(" +daemon {:.0}%", d * 100.0)).unwrap_or_default()
        ),
        crate::model::units::nanos(f.sys_nanos_per_op as u64),
        split,
        off,
        f.dirty_after_bytes.map(fmt_bytes).unwrap_or_else(|| "-".into()),
        match &f.extents {
            Some(e) if e.note.is_none() => {
                format!("{} ({})", e.extents, fmt_bytes(e.largest_bytes))
            }
            Some(e) => e.note.clone().unwrap_or_default(),
            None => "-".into(),
        },
    ]
}

/// `--verify`: per test and configuration, the time spent making and checking verified data
/// inside the timed phases (in their wall time, outside the op latencies), mean per
/// repetition over all threads. Empty without `--verify`.
pub fn verify_lines(
    configs: &[(&str, &[crate::model::result::TestResult])],
    width: usize,
) -> String {
    let mut out = String::new();
    for (label, tests) in configs {
        for t in tests.iter() {
            let timed = || t.reps.iter().flat_map(|rep| rep.phases.iter().filter(|p| p.timed));
            let nanos: u64 = timed().map(|p| p.verify_nanos).sum();
            if nanos == 0 || t.reps.is_empty() {
                continue;
            }
            let thread_nanos: u64 = timed().map(|p| p.wall_nanos * p.threads as u64).sum();
            let line = format!(
                "verify: {} on {}: {} per repetition making and checking verified data in the timed phases ({:.1}% of the threads' time; in the wall time, not in op latencies)",
                t.id,
                label,
                crate::model::units::nanos(nanos / t.reps.len() as u64),
                100.0 * nanos as f64 / thread_nanos.max(1) as f64
            );
            out.push_str(&frame::wrap(&line, width, "", "  "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::analysis::compare::tests::config;

    #[test]
    fn the_table_and_csv_name_each_tests_engine_depth_and_direct() {
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let mut configs = vec![
            config("ext4", &[100.0, 101.0, 99.0, 100.0, 98.0], 0),
            config("xfs", &[230.0, 228.0, 232.0, 231.0, 229.0], 0),
        ];
        for c in &mut configs {
            for r in &mut c.run.tests[0].reps {
                for p in &mut r.phases {
                    (p.engine, p.iodepth, p.direct) = ("io_uring".into(), 16, true);
                }
            }
        }
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let table = super::render(&r, false, 250);
        assert!(table.contains("[io_uring qd16 direct]"), "{table}");
        let csv = String::from_utf8(super::csv(&r).unwrap()).unwrap();
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!((col("engine"), col("iodepth"), col("direct")), ("io_uring", "16", "true"));
        // The baseline's row has no verdict, so nothing to be settled or not.
        assert_eq!(col("unsettled"), "", "{csv}");
        let row2: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col2 = |name: &str| row2[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!((col2("vs_baseline"), col2("unsettled")), ("win", "false"), "{csv}");
    }

    #[test]
    fn the_repeat_auto_note_is_said_once_when_every_configuration_has_the_same() {
        use crate::model::result::Warning;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let note = |stopped_by: &str| Warning::Repetitions {
            count: 5,
            stopped_by: stopped_by.into(),
            ci: Some(0.1),
            target_ci: 0.05,
            needed_budget_s: None,
            cv: None,
        };
        let build = |second: &str| {
            let mut configs = vec![
                config("ext4", &[100.0, 101.0, 99.0, 100.0, 98.0], 0),
                config("xfs", &[230.0, 228.0, 232.0, 231.0, 229.0], 0),
            ];
            configs[0].run.tests[0].warnings.push(note("settled"));
            configs[1].run.tests[0].warnings.push(note(second));
            let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
            super::render(&r, false, 1000)
        };
        let out = build("settled");
        assert_eq!(out.matches("--repeat auto (").count(), 1, "{out}");
        assert!(out.contains("every configuration: --repeat auto ("), "{out}");
        assert!(out.contains("5 (verdict settled) in test 1 (±10.0%)"), "{out}");
        let out = build("budget");
        assert!(out.contains("ext4: --repeat auto (") && out.contains("xfs: --repeat auto ("));
    }

    #[test]
    fn a_test_given_up_as_too_noisy_says_what_budget_it_would_need() {
        use crate::model::result::Warning;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let noisy = |needed| Warning::Repetitions {
            count: 5,
            stopped_by: "noisy".into(),
            ci: Some(0.8),
            target_ci: 0.05,
            needed_budget_s: needed,
            cv: Some(0.8),
        };
        for (needed, words) in
            [(Some(1234.2), "needs --time-budget 1235s"), (None, "no budget would settle it")]
        {
            let mut configs = vec![
                config("ext4", &[100.0, 180.0, 60.0, 140.0, 90.0], 0),
                config("xfs", &[120.0, 70.0, 190.0, 100.0, 150.0], 0),
            ];
            for c in &mut configs {
                c.run.tests[0].warnings.push(noisy(needed));
            }
            let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
            let out = super::render(&r, false, 1000);
            assert!(out.contains("5 (too noisy to settle in the budget left) in test 1"), "{out}");
            assert!(out.contains(words), "{out}");
            // The test's own warning, as JSON and `show` word it, says the same with its CV.
            let w = noisy(needed).to_string();
            assert!(w.contains("too noisy to decide at this budget: CV 80%"), "{w}");
        }
    }
}
