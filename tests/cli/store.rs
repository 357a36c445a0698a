//! The results store and what reads it: every run and compare is recorded, `history` lists them,
//! `show` prints the same table again, `diff` finds regressions with compare's rule, a kill -9
//! leaves a readable database, and `report` renders in a real browser.

use crate::util::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// One test writing 1 MiB in 4 KiB writes; `flags` are added to the open flags.
fn write_workload(flags: &str) -> String {
    format!(
        "[[test]]\nid = \"w\"\nname = \"write-4k\"\nfile = {{ size = \"1M\", prefill = false }}\n[[test.phase]]\nname = \"w\"\nopen = [\"create\", \"trunc\"{flags}]\npattern = [{{ op = \"write\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n"
    )
}

/// Run ids in the database, newest first, from the library (the tests link it).
fn run_ids(db: &Path) -> Vec<i64> {
    let s = fsbench::store::Store::open_read_only(db).unwrap();
    s.history(&Default::default()).unwrap().iter().map(|r| r.id).collect()
}

#[test]
fn a_compare_is_recorded_and_show_reproduces_its_table() {
    let (a, b, d) = (TestDir::new(), TestDir::new(), TestDir::new());
    let db = d.path().join("results.sqlite");
    let report = d.path().join("cmp.html");
    let o = fsbench(&[
        "compare",
        p(a.path()),
        p(b.path()),
        "--test",
        "10,14",
        "--scale",
        "1/64",
        "--repeat",
        "2",
        "--db",
        p(&db),
        "--report",
        p(&report),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("stored as run 1"), "{err}");
    assert!(err.contains(&format!("report written to {}", report.display())), "{err}");
    assert!(std::fs::read_to_string(&report).unwrap().contains("Head to head"));

    let h = fsbench(&["history", "--db", p(&db)]);
    assert!(h.status.success(), "{}", stderr(&h));
    let hist = stdout(&h);
    // The run's line and the lines its configurations wrap onto (a path may be broken over
    // them: the pieces are put back together).
    let mut lines = hist.lines().skip_while(|l| !l.trim_start().starts_with("1 "));
    let first = lines.next().expect(&hist);
    let rest: String = lines.map(str::trim).collect();
    let line = format!("{first}{rest}");
    for want in ["compare", "unit14", "ok", "4/4", p(a.path()), p(b.path())] {
        assert!(line.contains(want), "{want} in {line}");
    }

    let s = fsbench(&["show", "1", "--db", p(&db)]);
    assert!(s.status.success(), "{}", stderr(&s));
    assert_eq!(stdout(&s), stdout(&o), "show prints the table compare printed");

    // Filters.
    let none = fsbench(&["history", "--db", p(&db), "--suite", "other"]);
    assert!(stdout(&none).trim().is_empty(), "{}", stdout(&none));
    let lab = fsbench(&["history", "--db", p(&db), "--label", p(b.path())]);
    assert!(stdout(&lab).contains("compare"));
}

#[test]
fn a_run_is_recorded_and_show_reproduces_its_table() {
    let (dir, d) = (TestDir::new(), TestDir::new());
    let db = d.path().join("r.sqlite");
    let o = fsbench(&[
        "run",
        "--dir",
        p(dir.path()),
        "--test",
        "4,14",
        "--scale",
        "1/64",
        "--db",
        p(&db),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = fsbench(&["show", "1", "--db", p(&db)]);
    assert_eq!(stdout(&s), stdout(&o));
    let (v, _) = run_json(&["show", "1", "--db", p(&db)]);
    assert_eq!(v["tests"].as_array().unwrap().len(), 2);
    // The histograms are stored, and shown only when asked (they are most of the JSON).
    assert!(v["tests"][0]["reps"][0]["latency"][0].get("histogram_b64").is_none());
    assert!(v["tests"][0]["reps"][0]["latency"][0]["p99_nanos"].as_u64().is_some());
    let (v, _) = run_json(&["show", "1", "--db", p(&db), "--histograms"]);
    assert!(v["tests"][0]["reps"][0]["latency"][0]["histogram_b64"].as_str().unwrap().len() > 10);
}

#[test]
fn diff_finds_no_regression_against_itself_and_one_against_a_slowed_run() {
    let (dir, d) = (TestDir::new(), TestDir::new());
    let db = d.path().join("r.sqlite");
    // The same 256 writes paced at 2000 and at 200 a second: a tenfold slowdown that a loaded
    // machine cannot hide (unpaced, a 1 MiB write into the page cache takes about a millisecond,
    // and on a machine busy with builds its repetitions varied so much that a fivefold gap was
    // not significant). Five repetitions, so one outlying repetition on either side is trimmed
    // by the test and cannot turn the regression into a draw.
    let paced = |iops: u32| {
        write_workload("").replace(
            "amount = { passes = 1 }",
            &format!("amount = {{ passes = 1 }}\nrate_iops = {iops}"),
        )
    };
    let fast = d.write("fast.toml", &paced(2000));
    let slow = d.write("slow.toml", &paced(200));
    for wl in [&fast, &slow] {
        let o = fsbench(&[
            "run",
            "--dir",
            p(dir.path()),
            "--workload",
            p(wl),
            "--repeat",
            "5",
            "--db",
            p(&db),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let same = fsbench(&["diff", "1", "1", "--db", p(&db)]);
    assert_eq!(same.status.code(), Some(0), "{}{}", stdout(&same), stderr(&same));
    assert!(stdout(&same).contains("0 regressed significantly"), "{}", stdout(&same));

    let worse = fsbench(&["diff", "1", "2", "--db", p(&db)]);
    let out = stdout(&worse);
    assert_eq!(worse.status.code(), Some(1), "{out}{}", stderr(&worse));
    assert!(out.contains("REGRESSION") && out.contains("1 regressed significantly"), "{out}");

    let better = fsbench(&["diff", "2", "1", "--db", p(&db)]);
    assert_eq!(better.status.code(), Some(0), "{}", stdout(&better));
    assert!(stdout(&better).contains("improved"), "{}", stdout(&better));
}

const THREE: &str = "[[test]]\nid = \"a\"\nname = \"quick-a\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n\n[[test]]\nid = \"b\"\nname = \"quick-b\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n\n[[test]]\nid = \"long\"\nname = \"long-randread\"\nfile = { size = \"8M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\", offset = \"random\" }]\namount = { seconds = 60 }\n";

#[test]
fn kill_9_during_a_compare_leaves_a_readable_database_with_the_finished_tests() {
    let (a, b, d) = (TestDir::new(), TestDir::new(), TestDir::new());
    let db = d.path().join("r.sqlite");
    let wl = d.write("three.toml", THREE);
    let mut child = command()
        .args([
            "compare",
            p(a.path()),
            p(b.path()),
            "--workload",
            p(&wl),
            "--db",
            p(&db),
            "--no-report",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until both quick tests are stored on both sides (the long one is then running).
    let t = Instant::now();
    loop {
        let done = fsbench::store::Store::open_read_only(&db)
            .and_then(|s| s.history(&Default::default()))
            .map(|h| h.first().map(|r| r.tests_done).unwrap_or(0))
            .unwrap_or(0);
        if done >= 4 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "the quick tests were not stored in time");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: killing the child we spawned, by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();

    let h = fsbench(&["history", "--db", p(&db)]);
    assert!(h.status.success(), "{}", stderr(&h));
    assert!(stdout(&h).contains("incomplete"), "{}", stdout(&h));
    let (v, s) = run_json(&["show", "1", "--db", p(&db)]);
    assert!(s.status.success(), "{}", stderr(&s));
    assert!(stderr(&s).contains("did not finish"), "{}", stderr(&s));
    for c in v["configs"].as_array().unwrap() {
        let tests = c["run"]["tests"].as_array().unwrap();
        assert_eq!(tests[0]["status"]["state"], "ok");
        assert_eq!(tests[1]["status"]["state"], "ok");
        assert_eq!(tests[0]["complete_reps"], 1);
        assert_eq!(tests[2]["status"]["state"], "skipped", "{}", tests[2]);
    }
    // The database is still writable: another run is recorded after it.
    let o = fsbench(&[
        "run",
        "--dir",
        p(a.path()),
        "--workload",
        p(&wl),
        "--test",
        "a",
        "--db",
        p(&db),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(run_ids(&db), vec![2, 1]);
}

#[test]
fn unusable_databases_and_unknown_runs_are_clear_errors() {
    let (dir, d) = (TestDir::new(), TestDir::new());
    let notes = d.write("notes.txt", &"my notes\n".repeat(100));
    let o = fsbench(&[
        "run",
        "--dir",
        p(dir.path()),
        "--test",
        "4",
        "--scale",
        "1/64",
        "--db",
        p(&notes),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not an SQLite database"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--no-store"), "says how to go on: {}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n".repeat(100));
    assert!(dir.entries().is_empty(), "nothing ran");

    let db = d.path().join("r.sqlite");
    let missing = fsbench(&["history", "--db", p(&db)]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("no results database"), "{}", stderr(&missing));

    let o =
        fsbench(&["run", "--dir", p(dir.path()), "--test", "4", "--scale", "1/64", "--db", p(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [vec!["show", "42"], vec!["diff", "1", "42"], vec!["report", "42"]] {
        let mut a = args.clone();
        a.extend(["--db", p(&db)]);
        let o = fsbench(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("no run 42") && stderr(&o).contains("fsbench history"),
            "{}",
            stderr(&o)
        );
    }
    let o = fsbench(&["show", "latest", "--db", p(&db)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("fsbench history"), "{}", stderr(&o));
}

#[test]
fn no_store_and_the_default_database_location() {
    let (dir, data) = (TestDir::new(), TestDir::new());
    let o = command()
        .env("XDG_DATA_HOME", data.path())
        .args(["run", "--dir", p(dir.path()), "--test", "4", "--scale", "1/64", "--no-store"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(data.entries().is_empty(), "--no-store writes no database");
    let o = command()
        .env("XDG_DATA_HOME", data.path())
        .args(["run", "--dir", p(dir.path()), "--test", "4", "--scale", "1/64"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(data.path().join("fsbench/results.sqlite").exists());
}

/// Headless Chromium, if installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| have(c))
}

fn chromium_cmd(program: &str, profile: &Path) -> Command {
    let mut c = Command::new("timeout");
    c.args(["120", program, "--headless", "--no-sandbox", "--disable-gpu"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .args(["--no-first-run", "--window-size=1280,2000"])
        .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn the_report_renders_in_headless_chromium() {
    let (a, b, d) = (TestDir::new(), TestDir::new(), TestDir::new());
    let db = d.path().join("r.sqlite");
    let o = fsbench(&[
        "compare",
        p(a.path()),
        p(b.path()),
        "--test",
        "4,10",
        "--scale",
        "1/64",
        "--repeat",
        "3",
        "--db",
        p(&db),
        "--no-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = d.path().join("report.html");
    let svgs = d.path().join("svg");
    let o = fsbench(&["report", "1", "-o", p(&html), "--svg-dir", p(&svgs), "--db", p(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    // Self-contained: nothing is loaded from anywhere.
    for bad in ["<script", "<link", "src=", "@import", "url("] {
        assert!(!text.contains(bad), "report contains {bad}");
    }
    let files: Vec<String> = std::fs::read_dir(&svgs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for want in ["run1-test4-throughput.svg", "run1-test4-latency.svg", "run1-test10-latency.svg"] {
        assert!(files.iter().any(|f| f == want), "{want} in {files:?}");
    }

    let Some(browser) = chromium() else {
        skip("chromium not installed (scripts/install-deps.sh test installs it)");
        return;
    };
    let profile = TestDir::new();
    let url = format!("file://{}", html.display());
    let dom = chromium_cmd(browser, profile.path()).args(["--dump-dom", &url]).output().unwrap();
    assert!(dom.status.success(), "chromium: {}", stderr(&dom));
    let dom = stdout(&dom);
    assert!(dom.contains("<table class=\"h2h\">"), "head-to-head table in the DOM");
    assert!(dom.contains("Head to head") && dom.contains("CPU per operation"));
    assert!(dom.contains("Block devices") && dom.contains("Environment"));
    assert!(dom.contains("outpaces") || dom.contains("equals"), "summary lines");
    assert!(dom.matches("<svg").count() >= 4, "a bar chart and a latency curve per test");
    assert!(dom.contains("<polyline") || dom.contains("<path"), "curves are drawn");

    let shot = d.path().join("report.png");
    let o = chromium_cmd(browser, profile.path())
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium: {}", stderr(&o));
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "a rendered page");
    if let Ok(keep) = std::env::var("FSBENCH_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// A reader that closes the pipe (`fsbench history | head -1`) ends the output quietly with
/// exit 141 (128 + SIGPIPE), never a panic and never "error: writing to stdout".
#[test]
fn a_closed_stdout_pipe_ends_quietly_with_141() {
    let (dir, d) = (TestDir::new(), TestDir::new());
    let db = d.path().join("results.sqlite");
    let wl = d.write("w.toml", &write_workload(""));
    let o = fsbench(&["run", "--dir", p(dir.path()), "--workload", p(&wl), "--db", p(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [
        vec!["history", "--db", p(&db)],
        vec!["show", "1", "--format", "json", "--db", p(&db)],
        vec!["show", "1", "--db", p(&db)],
    ] {
        // The read end is closed before fsbench starts: its first write meets EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = command().args(&args).stdout(writer).stderr(Stdio::piped()).output().unwrap();
        let err = stderr(&o);
        assert!(!err.contains("panicked") && !err.contains("error"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(141), "{args:?}: {err}");
    }
}

/// Two runs with no test in common: an error naming both runs and suites (exit 2), not an
/// empty table that reads as "no change".
#[test]
fn diff_of_runs_with_no_tests_in_common_is_refused() {
    let (dir, d) = (TestDir::new(), TestDir::new());
    let db = d.path().join("results.sqlite");
    let wl = d.write("w.toml", &write_workload(""));
    let o = fsbench(&["run", "--dir", p(dir.path()), "--workload", p(&wl), "--db", p(&db)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fsbench(&[
        "run",
        "--dir",
        p(dir.path()),
        "--test",
        "14",
        "--scale",
        "1/64",
        "--db",
        p(&db),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fsbench(&["diff", "1", "2", "--db", p(&db)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}\n{}", stdout(&o));
    let want = format!(
        "no tests in common between run 1 (suite {}) and run 2 (suite unit14)",
        wl.display()
    );
    assert!(err.contains(&want), "{err}");
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    // A run against itself still compares.
    let same = fsbench(&["diff", "1", "1", "--db", p(&db)]);
    assert!(same.status.success() && stdout(&same).contains("1 compared"), "{}", stdout(&same));
}

/// Every line of `o`'s stdout at most `width` characters, none lost to a cut (the text is
/// checked elsewhere).
fn assert_fits(o: &std::process::Output, width: usize, what: &str) {
    assert!(o.status.success() || o.status.code() == Some(1), "{what}: {}", stderr(o));
    let out = stdout(o);
    assert!(!out.is_empty(), "{what} printed nothing");
    for l in out.lines() {
        assert!(l.chars().count() <= width, "{what} at COLUMNS={width}: {l:?}\n{out}");
    }
}

#[test]
fn stored_runs_fit_the_terminals_width() {
    // fsbench 0.1's database: runs 1 and 2 (run), 3 (compare).
    let d = TestDir::new();
    let db = d.path().join("fx.sqlite");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/results-v0.1.sqlite"), &db)
        .unwrap();
    for width in [60, 100] {
        let columns = width.to_string();
        let show = |args: &[&str]| {
            command().env("COLUMNS", &columns).args(args).args(["--db", p(&db)]).output().unwrap()
        };
        for run in ["1", "2", "3"] {
            assert_fits(&show(&["show", run]), width, &format!("show {run}"));
            assert_fits(
                &show(&["show", run, "--details"]),
                width,
                &format!("show {run} --details"),
            );
        }
        assert_fits(&show(&["diff", "2", "3"]), width, "diff");
        assert_fits(&show(&["history"]), width, "history");
    }
    // Not a terminal, no COLUMNS: 100.
    let o = command().env_remove("COLUMNS").args(["show", "3", "--db", p(&db)]).output().unwrap();
    assert_fits(&o, 100, "show 3 without COLUMNS");
    let wide =
        command().env("COLUMNS", "250").args(["show", "3", "--db", p(&db)]).output().unwrap();
    assert!(stdout(&wide).lines().any(|l| l.chars().count() > 100), "{}", stdout(&wide));
}
