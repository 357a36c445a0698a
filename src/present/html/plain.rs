//! The plain-text summary at the top of each run in the HTML report: ASCII columns that survive
//! being pasted into a mailing list or an issue (no box drawing, no colour, fixed width).

use super::names::Names;
use crate::model::report::{Report, TestRow};
use crate::model::units::sig3;
use crate::model::verdict::Verdict;

/// The summary of a comparison (or of a single run: one configuration, no verdicts).
pub fn summary(r: &Report, command_line: &str) -> String {
    let mut out = format!(
        "fsbench {}: suite {}, scale {}, {} per configuration\n",
        r.fsbench_version,
        r.suite,
        r.scale,
        r.repetitions(),
    );
    if !command_line.is_empty() {
        out.push_str(&format!("$ {command_line}\n"));
    }
    out.push('\n');
    // Long labels (`ext4:mount=data=writeback,noatime`) would push the table past a mail's
    // width: the columns are then named A, B, C... with a key above.
    let max = if r.configs.len() > 1 { 12 } else { usize::MAX };
    let n = Names::new(r.configs.iter().map(|c| c.label.as_str()), max);
    let key = n.key(usize::MAX);
    if !key.is_empty() {
        for l in key {
            out.push_str(&l);
            out.push('\n');
        }
        out.push('\n');
    }
    out.push_str(&table(r, &n.short));
    out.push_str(&footer(r));
    out
}

/// The columns: test, name, each configuration's median, the verdicts.
fn table(r: &Report, names: &[String]) -> String {
    let width = |s: &str| s.chars().count();
    let name_w = r.tests.iter().map(|t| width(&t.name)).max().unwrap_or(4).max(4);
    // Ids as long as a fio job's name (`randread-4k`) widen their column.
    let id_w = r.tests.iter().map(|t| width(&t.id)).max().unwrap_or(4).max(4);
    let cols: Vec<String> = names.iter().map(|n| format!("{n} (median)")).collect();
    let mut header = format!("{:<id_w$}  {:<name_w$}", "test", "name");
    for c in &cols {
        header.push_str(&format!("  {c:>12}"));
    }
    if r.configs.len() > 1 {
        header.push_str("  verdict against ");
        header.push_str(&names[r.baseline]);
    }
    let mut out = String::from(header.trim_end());
    out.push('\n');
    for row in &r.tests {
        let mut line = format!("{:<id_w$}  {:<name_w$}", row.id, row.name);
        for (i, c) in cols.iter().enumerate() {
            let v = row.median(i).map(sig3);
            line.push_str(&format!(
                "  {:>w$}",
                v.unwrap_or_else(|| "-".into()),
                w = width(c).max(12)
            ));
        }
        let verdicts = verdicts(r, row, names);
        if !verdicts.is_empty() {
            line.push_str("  ");
            line.push_str(&verdicts.join("; "));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// A test's verdicts against the baseline, in words.
fn verdicts(r: &Report, row: &TestRow, names: &[String]) -> Vec<String> {
    row.vs_baseline
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let label = &names[i];
            Some(match v.as_ref()? {
                Verdict::Win { winner, factor, tested } => format!(
                    "{} {factor:.2}x faster{}",
                    if *winner == 0 { &names[r.baseline] } else { label },
                    if *tested {
                        crate::model::report::verdict_mark(row, i)
                    } else {
                        " (UNTESTED: one repetition)".into()
                    }
                ),
                Verdict::Draw { .. } => format!("{label}: draw"),
                Verdict::NotCompared { reason } => format!("{label}: not compared ({reason})"),
            })
        })
        .collect()
}

/// Under the table: what the figures are, the rule, the summary lines, the configurations.
fn footer(r: &Report) -> String {
    let mut out =
        String::from("\nFigures: MiB/s (ops/s for file-set tests), median over repetitions.\n");
    if r.configs.len() > 1 {
        out.push_str(&wrap(&crate::model::verdict::rule_text(&r.rule), 96));
    }
    if r.tests.iter().any(|t| t.unsettled.contains(&true)) {
        out.push_str(&wrap(&format!("({})", crate::model::verdict::UNSETTLED_NOTE), 96));
    }
    for p in &r.pairs {
        out.push('\n');
        for l in &p.lines {
            out.push_str(&format!("  {l}\n"));
        }
    }
    out.push_str("\nConfigurations:\n");
    for c in &r.configs {
        match &c.env {
            // Wrapped like the rest, for a mail.
            Some(e) => {
                out.push_str(&indent(&wrap(&format!("{}: {}", c.label, e.summary_line()), 94)))
            }
            None => out.push_str(&format!(
                "  {}: existing directory on {} ({})\n",
                c.label, c.run.target.fs_type, c.run.target.mount_options
            )),
        }
        if let Some(w) = crate::observe::compress::words(&c.run.tests) {
            out.push_str(&indent(&wrap(&w, 94)));
        }
    }
    out
}

/// `text` with two spaces before every line, continuation lines four.
fn indent(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| format!("{}{l}\n", if i == 0 { "  " } else { "    " }))
        .collect()
}

/// Word-wrap `text` at `width` columns, each line ending in a newline.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for w in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_summary_is_ascii_columns_with_verdicts() {
        use crate::analysis::compare::tests::config;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let configs = vec![
            config("ext4", &[100.0, 101.0, 99.0], 0),
            config("xfs", &[230.0, 228.0, 232.0], 0),
        ];
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let s = summary(&r, "fsbench compare ext4 xfs");
        assert!(s.contains("$ fsbench compare ext4 xfs"), "{s}");
        let row = s.lines().find(|l| l.starts_with("1 ")).unwrap();
        assert!(
            row.contains("100") && row.contains("230") && row.contains("xfs 2.30x faster"),
            "{s}"
        );
        assert!(!s.contains('│') && !s.contains('┆'), "no box drawing: {s}");
        assert!(s.contains("Benjamini-Hochberg"), "{s}");
        assert!(s.lines().filter(|l| !l.starts_with('$')).all(|l| l.chars().count() <= 100), "{s}");
        assert!(s.starts_with(&format!("fsbench {}: suite", r.fsbench_version)), "{s}");
        assert!(s.lines().next().unwrap().ends_with(", 3 repetitions per configuration"), "{s}");
        // --repeat auto: tests got different counts, and the header says so.
        let configs = vec![
            config("ext4", &[100.0, 101.0, 99.0, 100.0, 98.0], 0),
            config("xfs", &[230.0, 228.0, 232.0, 231.0, 229.0, 230.0, 233.0, 227.0], 0),
        ];
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        assert_eq!(r.repetitions(), "5 to 8 repetitions");
        let out = crate::present::compare::render(&r, false, 250);
        assert!(out.contains("5 to 8 repetitions per configuration, interleaved"), "{out}");
        // An id longer than the header's `test` (a fio job's name) keeps the columns aligned.
        let mut configs = vec![config("ext4", &[100.0], 0), config("xfs", &[230.0], 0)];
        for c in &mut configs {
            c.run.tests[0].id = "randread-4k".into();
        }
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let s = summary(&r, "fsbench compare ext4 xfs");
        let head = s.lines().find(|l| l.starts_with("test ")).unwrap();
        let row = s.lines().find(|l| l.starts_with("randread-4k ")).unwrap();
        assert_eq!(head.find("name"), row.find(&r.tests[0].name), "{s}");
    }

    #[test]
    fn a_win_that_is_not_settled_is_marked_in_every_output() {
        use crate::analysis::compare::tests::config;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        // 1.3x apart in about 15% noise, 8 repetitions, rounds independent: significant, not
        // settled.
        let ext4 = [100.0, 125.0, 80.0, 110.0, 90.0, 120.0, 85.0, 105.0];
        let modest = [144.0, 157.0, 164.0, 138.0, 105.0, 131.0, 111.0, 118.0];
        let r = crate::analysis::compare::build_report(
            vec![config("ext4", &ext4, 0), config("xfs", &modest, 0)],
            &opts,
            0,
            false,
        );
        assert!(matches!(r.tests[0].vs_baseline[1], Some(Verdict::Win { winner: 1, .. })));
        assert_eq!(r.tests[0].unsettled, [false, true]);
        let term = crate::present::compare::render(&r, false, 250);
        assert!(term.contains("xfs / 1.3X (unsettled)"), "{term}");
        assert!(term.contains("an identical run may call it a draw"), "{term}");
        let plain = summary(&r, "");
        assert!(plain.contains("xfs 1.31x faster (unsettled)"), "{plain}");
        let run = crate::present::html::ReportRun {
            id: None,
            kind: crate::model::run::RunKind::Compare,
            command_line: String::new(),
            report: r.clone(),
        };
        let (html, _) = crate::present::html::render(&[run]).unwrap();
        assert!(html.contains("(unsettled)</span>"), "{html}");
        // 2.3x in 1% noise: settled, no mark anywhere.
        let clear = [230.0, 228.0, 232.0, 231.0, 229.0, 230.0, 233.0, 227.0];
        let tight = [100.0, 101.0, 99.0, 100.0, 98.0, 100.5, 99.5, 101.5];
        let r = crate::analysis::compare::build_report(
            vec![config("ext4", &tight, 0), config("xfs", &clear, 0)],
            &opts,
            0,
            false,
        );
        assert_eq!(r.tests[0].unsettled, [false, false]);
        let term = crate::present::compare::render(&r, false, 250);
        assert!(term.contains("xfs / 2.3X") && !term.contains("unsettled"), "{term}");
    }

    #[test]
    fn long_labels_are_lettered_with_a_legend_and_lines_fit_a_mail() {
        use crate::analysis::compare::tests::config;
        let opts = crate::analysis::compare::CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        let configs = vec![
            config("ext4:mount=data=writeback,noatime", &[100.0, 101.0, 99.0], 0),
            config("ext4:mount=nodelalloc", &[230.0, 228.0, 232.0], 0),
            config("xfs:mkfs=-l size=64m", &[100.0, 102.0, 99.0], 0),
        ];
        let r = crate::analysis::compare::build_report(configs, &opts, 0, false);
        let s = summary(&r, "");
        assert!(s.contains("A = ext4:mount=data=writeback,noatime\nB = ext4:mount=nodelalloc\nC = xfs:mkfs=-l size=64m\n"), "{s}");
        let row = s.lines().find(|l| l.starts_with("1 ")).unwrap();
        assert!(row.contains("B 2.30x faster") && row.contains("C: draw"), "{s}");
        assert!(s.lines().all(|l| l.chars().count() <= 100), "{s}");
    }
}
