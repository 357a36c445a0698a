//! Latency against load (`--curve`, `curve_steps`): the steps in the JSON (asked rates rising,
//! achieved within them), the text table and the knee, compare's chart and per-step verdicts,
//! and bad input (exit 2 with the fix). Every run here is in a plain temporary directory with
//! `cache = "any"` phases: nothing machine-wide is touched.

use crate::util::*;

/// A one-test workload of 4 KiB random reads of an 8 MiB file, bound by `amount`, with
/// `extra` phase keys.
fn reads(amount: &str, extra: &str) -> String {
    format!(
        "[[test]]\nid = \"r\"\nname = \"reads\"\nfile = {{ size = \"8M\" }}\n[[test.phase]]\nname = \"read\"\npattern = [{{ op = \"read\", size = \"4K\", offset = \"random\" }}]\namount = {amount}\n{extra}\n"
    )
}

/// The curve of the first timed phase of test `r` in repetition `rep` of `test`.
fn curve(test: &serde_json::Value, rep: usize) -> &serde_json::Value {
    let phases = test["reps"][rep]["phases"].as_array().expect("phases");
    let p = phases.iter().find(|p| p["timed"] == true).expect("a timed phase");
    &p["curve"]
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn a_curve_runs_each_step_at_its_share_of_the_closed_loop_rate() {
    let d = TestDir::new();
    let w = d.write("w.toml", &reads("{ seconds = 0.5 }", ""));
    let run = TestDir::new();
    let args = [
        "run",
        "--dir",
        run.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--no-store",
        "--curve",
        "--curve-steps",
        "20,50,100",
        "--curve-step-time",
        "300ms",
    ];
    let (v, o) = run_json(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let c = curve(test_by_id(&v, "r"), 0);
    let max = f(&c["closed_loop_ops_per_s"]);
    assert!(max > 0.0, "{c}");
    let steps = c["steps"].as_array().expect("steps");
    let percents: Vec<f64> = steps.iter().map(|s| f(&s["percent"])).collect();
    assert_eq!(percents, vec![20.0, 50.0, 100.0]);
    let mut last = 0.0;
    for s in steps {
        let (asked, achieved) = (f(&s["asked_ops_per_s"]), f(&s["achieved_ops_per_s"]));
        assert!(asked > last, "asked rates rise: {c}");
        last = asked;
        assert!((asked - max * f(&s["percent"]) / 100.0).abs() < 1e-6 * max, "{s}");
        // Issued ops over the step's wall time: within the schedule (a step may issue the op
        // due at its very end, so 1% above the asked rate is allowed).
        assert!(achieved <= asked * 1.01, "achieved {achieved}/s above asked {asked}/s");
        assert!(achieved > 0.0, "{s}");
        let wall = s["wall_nanos"].as_u64().unwrap();
        assert!((250_000_000..3_000_000_000).contains(&wall), "a 300 ms step took {wall} ns");
        let (p50, p99, p999) =
            (s["p50_nanos"].as_u64(), s["p99_nanos"].as_u64(), s["p999_nanos"].as_u64());
        assert!(p50 > Some(0) && p50 <= p99 && p99 <= p999, "{s}");
        assert!(f(&s["shortfall_percent"]) >= 0.0);
    }
    // The unloaded p99 is the lowest step's; the knee is a step.
    assert_eq!(c["unloaded_p99_nanos"], steps[0]["p99_nanos"]);
    assert!(c["knee"].as_u64().unwrap() < 3);
    assert_eq!(f(&c["knee_multiple"]), 3.0);
    // The closed-loop pass is the phase's own figures; the steps' time is in the split.
    let phase = &test_by_id(&v, "r")["reps"][0]["phases"];
    let timed = phase.as_array().unwrap().iter().find(|p| p["timed"] == true).unwrap();
    assert!(timed["wall_nanos"].as_u64().unwrap() < 2_000_000_000, "{timed}");
    let untimed = &test_by_id(&v, "r")["reps"][0]["untimed"];
    assert!(untimed["curve_nanos"].as_u64().unwrap() >= 900_000_000, "{untimed}");

    // The text table: a row per step, the knee marked, its definition.
    let o = fsbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(out.contains("Latency against load, test r phase read"), "{out}");
    assert!(out.contains("% ◆"), "the knee's step is marked: {out}");
    assert!(out.contains("◆ knee:"), "{out}");
    assert!(out.contains("exceeds 3× the unloaded p99 (the lowest step's)"), "{out}");
    assert!(out.contains("--curve steps"), "the time split names the steps: {out}");
}

#[test]
fn curve_steps_in_the_workload_and_compare_draws_both_curves() {
    let d = TestDir::new();
    let extra = "curve_steps = 2\ncurve_step_time = \"200ms\"\ncurve_knee = 5";
    let w = d.write("w.toml", &reads("{ seconds = 0.3 }", extra));
    let (a, b) = (TestDir::new(), TestDir::new());
    let report = d.path().join("r.html");
    let (v, o) = run_json(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--repeat",
        "1",
        "--no-store",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for cfg in v["configs"].as_array().unwrap() {
        let t = &cfg["run"]["tests"][0];
        let c = curve(t, 0);
        let p: Vec<f64> = c["steps"].as_array().unwrap().iter().map(|s| f(&s["percent"])).collect();
        assert_eq!(p, vec![50.0, 100.0], "curve_steps = 2");
        assert_eq!(f(&c["knee_multiple"]), 5.0);
    }
    // One repetition per step: each step says it was not decided.
    let verdicts = v["tests"][0]["curve_verdicts"].as_array().expect("curve_verdicts");
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    for s in verdicts {
        assert_eq!(s["verdict"]["outcome"], "not_compared", "{s}");
        assert!(s["verdict"]["reason"].as_str().unwrap().contains("not decided"), "{s}");
        assert_eq!(s["config"], 1);
    }
    // Two repetitions: each step is decided (win or draw) by the rule.
    let (v2, o) = run_json(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--repeat",
        "2",
        "--no-store",
        "--no-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for s in v2["tests"][0]["curve_verdicts"].as_array().expect("curve_verdicts") {
        let outcome = s["verdict"]["outcome"].as_str().unwrap();
        assert!(outcome == "win" || outcome == "draw", "decided with 2 repetitions: {s}");
        assert_eq!(s["verdict"]["tested"], true, "{s}");
    }
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("test r phase read: latency against load"), "one chart");
    assert!(html.contains("achieved rate (ops/s)") && html.contains("(ms, log)"), "axes");
    assert_eq!(html.matches(" p99\n</text>").count(), 2, "both configurations in the legend");
    assert!(html.contains(">\nknee "), "a knee is marked");
}

#[test]
fn bad_curves_exit_2_with_the_fix() {
    let d = TestDir::new();
    let run = TestDir::new();
    let dir = run.path().to_str().unwrap().to_string();
    let try_run = |workload: &str, extra: &[&str]| {
        let w = d.write("w.toml", workload);
        let mut a = vec!["run", "--dir", &dir, "--workload", w.to_str().unwrap(), "--no-store"];
        a.extend(extra);
        let o = fsbench(&a);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(run.entries().is_empty(), "nothing ran: {:?}", run.entries());
        stderr(&o)
    };
    let timed = reads("{ seconds = 1 }", "");
    let e = try_run(&timed, &["--curve", "--curve-steps", "1"]);
    assert!(e.contains("at least 2 steps") && e.contains("rate_iops"), "{e}");
    let e = try_run(&timed, &["--curve", "--curve-steps", "50,150"]);
    assert!(e.contains("150% is outside (0, 100]"), "{e}");
    let e = try_run(&timed, &["--curve", "--curve-steps", "0,50"]);
    assert!(e.contains("outside (0, 100]"), "{e}");
    let e = try_run(&timed, &["--curve", "--curve-step-time", "10ms"]);
    assert!(e.contains("from 100ms"), "{e}");
    let e = try_run(&timed, &["--curve", "--curve-knee", "1"]);
    assert!(e.contains("--curve-knee = 1") && e.contains("above 1"), "{e}");
    // A phase bound by size: no rate over a time to start from.
    let e = try_run(&reads("{ bytes = \"1M\" }", ""), &["--curve"]);
    assert!(e.contains("bound by size or count") && e.contains("amount = { seconds = N }"), "{e}");
    // A fixed rate of its own.
    let e = try_run(&reads("{ seconds = 1 }", "rate_iops = 100"), &["--curve"]);
    assert!(e.contains("fixed rate") && e.contains("remove the phase's rate"), "{e}");
    let e = try_run(&reads("{ seconds = 1 }", "rate_iops = 100\ncurve_steps = 4"), &[]);
    assert!(e.contains("curve_steps") && e.contains("remove the phase's rate"), "{e}");
    // The same through the workload's keys.
    let e = try_run(&reads("{ seconds = 1 }", "curve_steps = 1"), &[]);
    assert!(e.contains("curve_steps = 1") && e.contains("at least 2 steps"), "{e}");
    let e = try_run(&reads("{ seconds = 1 }", "curve_steps = [20, 101]"), &[]);
    assert!(e.contains("outside (0, 100]"), "{e}");
    let e = try_run(&reads("{ ops = 100 }", "curve_steps = 4"), &[]);
    assert!(e.contains("bound by size or count"), "{e}");
    let e = try_run(&reads("{ seconds = 1 }", "curve_knee = 2"), &[]);
    assert!(e.contains("without curve_steps"), "{e}");
    // A suite whose tests have no time-based phase (unit14's are bound by size).
    let o = fsbench(&["run", "--dir", &dir, "--no-store", "--test", "4", "--curve"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--test"), "{}", stderr(&o));
    // A step option without --curve.
    let o = fsbench(&["run", "--dir", &dir, "--no-store", "--curve-steps", "4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--curve"), "{}", stderr(&o));
}
