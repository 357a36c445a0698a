//! The figure of merit: file-set tests (rm65536, metadata, mail, postmark, untar, bonnie's file
//! phases) are ranked on ops/s, with elapsed seconds beside it, in every output: run's table,
//! JSON and CSV, `--format bonnie`, compare, `show`, `diff` and the HTML report. Before, they
//! showed MiB/s = 0.000 and every comparison of them was a draw.

use crate::util::*;

fn p(path: &std::path::Path) -> &str {
    path.to_str().unwrap()
}

/// A number printed by sig3 in a table cell: positive, never `0.000`.
fn positive(cell: &str) -> bool {
    cell.split_whitespace().next().and_then(|n| n.parse::<f64>().ok()).is_some_and(|x| x > 0.0)
}

/// The cells of the table row of test `id`.
/// The cells of the table row (or header, `test`) of `id`. A table wider than the terminal
/// comes in panels that each start with the test: the row is every panel's line for `id`, the
/// test once.
fn row<'a>(out: &'a str, id: &'a str) -> Vec<&'a str> {
    let mut cells: Vec<&str> = Vec::new();
    for line in out.lines().filter(|l| l.starts_with('│')) {
        let mut c = line.trim_matches('│').split('┆').map(str::trim);
        if c.next() == Some(id) {
            if cells.is_empty() {
                cells.push(id);
            }
            cells.extend(c);
        }
    }
    assert!(!cells.is_empty(), "no row for {id}: {out}");
    cells
}

#[test]
fn file_set_tests_are_ranked_on_ops_per_second_in_run_outputs() {
    let (d, db) = (TestDir::new(), TestDir::new());
    let db = db.path().join("r.sqlite");
    let dir = p(d.path());
    // Two repetitions where the table's CV and CI are checked, one elsewhere (time).
    for (suite, scale, reps) in [
        ("rm65536", "1/64", "2"),
        ("metadata", "1/500", "1"),
        ("mail", "1/64", "1"),
        ("postmark", "quick", "1"),
        ("untar", "1/256", "1"),
    ] {
        let (v, o) = run_json(&[
            "run",
            "--dir",
            dir,
            "--suite",
            suite,
            "--scale",
            scale,
            "--repeat",
            reps,
            "--db",
            p(&db),
        ]);
        assert!(o.status.success(), "{suite}: {}", stderr(&o));
        for t in v["tests"].as_array().unwrap() {
            assert_eq!(t["figure"], "ops_per_s", "{suite} {}", t["id"]);
            let s = &t["summary"];
            assert_eq!(s["figure"], "ops_per_s");
            assert!(s["ops_per_s"]["median"].as_f64().unwrap() > 0.0, "{suite}: {s}");
            assert!(s["ops_per_s"]["cv"].as_f64().is_some());
            assert!(s["elapsed_s"]["median"].as_f64().unwrap() > 0.0, "{suite}: {s}");
            for rep in t["reps"].as_array().unwrap() {
                for ph in rep["phases"].as_array().unwrap() {
                    assert!(ph["wall_nanos"].as_u64().unwrap() > 0, "every phase has its time");
                }
            }
        }
    }
    // The table of the rm65536 run (the first recorded): ops/s and seconds, and the CI is of ops/s.
    let o = fsbench(&["show", "1", "--db", p(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = row(&out, "test");
    let cells = row(&out, "rm65536");
    let col = |name: &str| {
        header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}: {out}"))
    };
    assert!(positive(cells[col("ops/s")]), "{out}");
    assert_eq!(cells[col("MiB/s")], "-", "no bytes moved, no 0.000: {out}");
    assert!(positive(cells[col("s")]), "{out}");
    assert!(cells[col("95% CI")].ends_with("ops/s"), "{out}");
    // CSV names the figure and its median.
    let o = fsbench(&["show", "1", "--db", p(&db), "--format", "csv"]);
    let csv = stdout(&o);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rec: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| head.iter().position(|h| *h == name).unwrap_or_else(|| panic!("{name}"));
    assert_eq!(rec[at("figure")], "ops_per_s");
    assert!(rec[at("figure_median")].parse::<f64>().unwrap() > 0.0, "{csv}");
    assert!(rec[at("elapsed_s_median")].parse::<f64>().unwrap() > 0.0, "{csv}");
    // diff of two recorded runs of the same test compares ops/s, with seconds.
    let o = fsbench(&[
        "run",
        "--dir",
        dir,
        "--suite",
        "rm65536",
        "--scale",
        "1/64",
        "--repeat",
        "2",
        "--db",
        p(&db),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fsbench(&["diff", "1", "6", "--db", p(&db)]);
    let out = stdout(&o);
    assert!(out.contains("run 1 ops/s") && out.contains("run 6 ops/s"), "{out}");
    let cells = row(&out, "rm65536");
    assert!(positive(cells[3]) && positive(cells[4]), "{out}");
    assert!(cells[3].ends_with(" s") && cells[4].ends_with(" s"), "seconds beside: {out}");
    // The HTML report charts ops/s.
    let html = d.path().join("r.html");
    let o = fsbench(&["report", "1", "6", "--db", p(&db), "-o", p(&html)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    std::fs::remove_file(&html).unwrap();
    assert!(text.contains("ops/s (median)"), "bar chart axis");
    assert!(!text.contains("No throughput figures"));
}

#[test]
fn bonnie_file_phases_show_ops_per_second_and_seconds() {
    let d = TestDir::new();
    let o = fsbench(&[
        "run",
        "--dir",
        p(d.path()),
        "--suite",
        "bonnie",
        "--scale",
        "1/64",
        "--test",
        "files-seq,files-rand",
        "--format",
        "bonnie",
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let files = lines.iter().position(|l| l.contains("files  /sec %CP")).expect("file table");
    // The row's name, files, then create/read/delete × (rate, %CP) for sequential and random.
    let rates: Vec<&str> = lines[files + 1].split_whitespace().skip(1).collect();
    assert_eq!(rates.len(), 13, "{out}");
    for k in 0..6 {
        let r = rates[1 + 2 * k];
        let n = r.strip_suffix('k').unwrap_or(r);
        assert!(n.parse::<f64>().unwrap() > 0.0, "phase {k}: {out}");
    }
    let elapsed = lines.iter().rev().find(|l| l.starts_with("Elapsed")).expect("elapsed row");
    let secs: Vec<&str> = elapsed.split_whitespace().skip(1).collect();
    assert_eq!(secs.len(), 6, "{out}");
    assert!(secs.iter().all(|s| s.trim_end_matches('s').parse::<f64>().unwrap() > 0.0), "{out}");
}

#[test]
fn compare_ranks_file_set_tests_on_ops_per_second() {
    let (a, b, d) = (TestDir::new(), TestDir::new(), TestDir::new());
    let o = fsbench(&[
        "compare",
        p(a.path()),
        p(b.path()),
        "--suite",
        "postmark",
        "--scale",
        "quick",
        "--repeat",
        "2",
        "--db",
        p(&d.path().join("r.sqlite")),
        "--report",
        p(&d.path().join("c.html")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let head: String = out.lines().take_while(|l| !l.starts_with('╞')).collect();
    assert!(head.contains("ops/s") && !head.contains("MiB/s"), "{out}");
    let cells = row(&out, "postmark");
    assert!(positive(cells[2]) && positive(cells[3]), "{out}");
    assert!(cells[2].ends_with(" s"), "elapsed seconds beside: {out}");
    let html = std::fs::read_to_string(d.path().join("c.html")).unwrap();
    assert!(html.contains("ops/s (median)"), "bar chart axis");
    let (v, o) = run_json(&["show", "1", "--db", p(&d.path().join("r.sqlite"))]);
    assert!(o.status.success());
    let t = &v["tests"][0];
    assert_eq!(t["figure"], "ops_per_s");
    // show takes every format of run and compare.
    for (format, expect) in [
        ("html", "ops/s (median)"),
        // A postmark comparison has no bonnie results: said, with no empty tables before.
        ("bonnie", "No bonnie results in this report"),
        ("csv", "ops_per_s"),
    ] {
        let o = fsbench(&["show", "1", "--db", p(&d.path().join("r.sqlite")), "--format", format]);
        assert!(o.status.success() && stdout(&o).contains(expect), "{format}: {}", stderr(&o));
        if format == "bonnie" {
            assert!(!stdout(&o).contains("-Create--"), "{}", stdout(&o));
        }
        if format == "html" {
            // The stored run's page, with its id, as `fsbench report 1` makes it.
            assert!(stdout(&o).contains("<title>fsbench report: run 1: "), "{}", stdout(&o));
        }
    }
    assert!(
        t["median_ops_per_s"][0].as_f64().unwrap() > 0.0
            && t["median_elapsed_s"][1].as_f64().unwrap() > 0.0
    );
}

#[test]
fn run_details_show_facts_time_split_and_every_repetition() {
    let d = TestDir::new();
    let o = fsbench(&[
        "run",
        "--dir",
        p(d.path()),
        "--suite",
        "rm65536",
        "--scale",
        "1/64",
        "--repeat",
        "2",
        "--details",
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let (table, details) =
        out.split_once("Details (median repetition, timed phases):").expect(&out);
    // Unlinking moves no data: residency means nothing there.
    let resident = row(table, "test").iter().position(|h| *h == "resident").expect(&out);
    assert_eq!(row(table, "rm65536")[resident], "-", "{out}");
    // Headers fit on their line, unbroken.
    assert!(details.contains("rw/sync/md") && details.contains("dev/read"), "{out}");
    let cells = row(details, "rm65536");
    // test, config, ..., rw/sync/md, off CPU: unlinks are metadata calls, the syncfs a sync.
    let split = cells.iter().find(|c| c.matches('/').count() == 2 && c.ends_with('%'));
    let split: Vec<f64> = split
        .unwrap_or_else(|| panic!("rw/sync/md cell: {out}"))
        .trim_end_matches('%')
        .split('/')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(split[2] > 0.0, "time in unlink: {out}");
    // Every repetition, in the order run, in ops/s.
    let reps = out.lines().find(|l| l.trim_start().starts_with("test rm65536")).expect(&out);
    let figs: Vec<&str> = reps.split_whitespace().skip(2).collect();
    assert_eq!(figs.len(), 3, "two figures and the unit: {out}");
    assert!(positive(figs[0]) && positive(figs[1]) && figs[2] == "ops/s", "{out}");
}

#[test]
fn compare_bonnie_is_one_table_a_row_per_configuration() {
    let (a, b) = (TestDir::new(), TestDir::new());
    let o = fsbench(&[
        "compare",
        p(a.path()),
        p(b.path()),
        "--suite",
        "bonnie",
        "--scale",
        "1/64",
        "--test",
        "files-seq",
        "--format",
        "bonnie",
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches("------Sequential Create------").count(), 1, "{out}");
    for dir in [a.path(), b.path()] {
        let r: Vec<&str> = out
            .lines()
            .find(|l| l.starts_with(p(dir)) && !l.contains(':'))
            .unwrap_or_else(|| panic!("no file row named {}: {out}", dir.display()))
            .split_whitespace()
            .collect();
        // name, files, then create, stat, delete (rate, %CP) of the sequential half.
        for k in [2, 4, 6] {
            let n = r[k].strip_suffix('k').unwrap_or(r[k]);
            assert!(n.parse::<f64>().unwrap() > 0.0, "{k}: {out}");
        }
    }
}

/// `diff` finds a real change in a file-set test, on ops/s: rm65536 on ext4 against ext4 mounted
/// `dirsync` (every unlink waits for its directory block on the device; measured 50,706 against
/// 1,279 ops/s at --scale quick). The issue's own example, `data=writeback,noatime`, changes
/// nothing for the unlinks of empty files (no data, no atime): three interleaved pairs of 10
/// repetitions measured 0.98-1.06x, and `diff` rightly calls it no significant change.
#[test]
fn diff_finds_a_file_set_regression_on_ops_per_second() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let (work, d) = (TestDir::new(), TestDir::new());
    let db = d.path().join("r.sqlite");
    for fs in ["ext4", "ext4:mount=dirsync"] {
        let o = fsbench(&[
            "run",
            "--fs",
            fs,
            "--suite",
            "rm65536",
            "--scale",
            "1/64",
            "--repeat",
            "5",
            "--workdir",
            p(work.path()),
            "--db",
            p(&db),
        ]);
        assert!(o.status.success(), "{fs}: {}", stderr(&o));
    }
    assert!(work.entries().is_empty(), "testbeds removed: {:?}", work.entries());
    let o = fsbench(&["diff", "1", "2", "--db", p(&db)]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "a regression exits 1: {out}{}", stderr(&o));
    assert!(out.contains("run 1 ops/s") && out.contains("run 2 ops/s"), "{out}");
    let cells = row(&out, "rm65536");
    let verdict = cells.last().unwrap();
    assert!(verdict.starts_with("REGRESSION"), "{out}");
    assert!(out.contains("1 regressed significantly"), "{out}");
}
