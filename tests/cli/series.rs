//! Over time: the interval series of a timed phase, fixed-rate load (asked against achieved,
//! latency from the schedule or, fio's, from the issue), think time, steady state, and their bad input.

use crate::util::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A one-test workload of 4 KiB random reads of an 8 MiB file, with `extra` phase keys.
fn reads(amount: &str, extra: &str) -> String {
    format!(
        "[[test]]\nid = \"r\"\nname = \"reads\"\nfile = {{ size = \"8M\" }}\n[[test.phase]]\nname = \"read\"\npattern = [{{ op = \"read\", size = \"4K\", offset = \"random\" }}]\namount = {amount}\n{extra}\n"
    )
}

/// The first timed phase of the report's only test.
fn phase(v: &serde_json::Value) -> &serde_json::Value {
    let p = &test_by_id(v, "r")["reps"][0]["phases"];
    p.as_array().unwrap().iter().find(|p| p["timed"] == true).expect("a timed phase")
}

fn nums(v: &serde_json::Value) -> Vec<u64> {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().unwrap()).collect()
}

#[test]
fn a_fixed_rate_is_held_and_the_series_counts_every_op() {
    let d = TestDir::new();
    let w = d.write("w.toml", &reads("{ seconds = 4 }", "rate_iops = 500"));
    let (v, o) =
        run_json(&["run", "--dir", d.path().to_str().unwrap(), "--workload", w.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = phase(&v);
    let rate = &p["load"]["rate"];
    assert_eq!(rate["asked_ops_per_s"], 500.0);
    let got = rate["achieved_ops_per_s"].as_f64().unwrap();
    assert!((490.0..=510.0).contains(&got), "asked 500/s, achieved {got}/s");
    let s = &p["series"];
    let ops = nums(&s["ops"]);
    // 4 s adapt to 20 ms points: 100 to 200 of them.
    assert!((100..=200).contains(&ops.len()), "{} points", ops.len());
    assert!(s["interval_nanos"].as_u64().unwrap() >= 10_000_000);
    assert_eq!(ops.iter().sum::<u64>(), p["data_ops"].as_u64().unwrap());
    assert_eq!(nums(&s["read_ops"]), ops);
    let bytes: u64 = nums(&s["read_bytes"]).iter().sum();
    assert_eq!(bytes, p["bytes_read"].as_u64().unwrap());
    for k in ["p50_nanos", "p99_nanos", "max_nanos", "dirty_bytes", "writeback_bytes"] {
        assert_eq!(nums(&s[k]).len(), ops.len(), "{k}");
    }
    // Every read's latency in its interval's sum: their mean is the phase's (whose histogram
    // keeps it within 0.1%); no writes, no write sums.
    let sums = nums(&s["read_lat_sum_nanos"]);
    assert_eq!(sums.len(), ops.len());
    let mean = sums.iter().sum::<u64>() as f64 / ops.iter().sum::<u64>() as f64;
    let phase_mean = lat(p, "read").expect("read latency")["mean_nanos"].as_f64().unwrap();
    assert!((mean / phase_mean - 1.0).abs() < 0.01, "series {mean} ns, phase {phase_mean} ns");
    assert!(s.get("write_lat_sum_nanos").is_none(), "{s}");
    // The process's CPU per interval, sampled by the runner thread: some in every second of a
    // phase reading 500 times a second, and no more than the two CPUs a point could use.
    let interval = s["interval_nanos"].as_u64().unwrap();
    let (user, sys) = (nums(&s["cpu_user_nanos"]), nums(&s["cpu_sys_nanos"]));
    assert_eq!((user.len(), sys.len()), (ops.len(), ops.len()));
    let cpu: Vec<u64> = user.iter().zip(&sys).map(|(u, k)| u + k).collect();
    let per_s = (1e9 / interval as f64) as usize;
    assert!(cpu.chunks_exact(per_s).all(|c| c.iter().sum::<u64>() > 0), "{cpu:?}");
    let cpus = std::thread::available_parallelism().map_or(64, |n| n.get() as u64);
    assert!(cpu.iter().all(|c| *c <= interval * cpus + interval / 2), "{cpu:?}");
    // The directory's device (shared with the rest of the machine): its requests and busy
    // time per interval, when the directory is on a whole block device fsbench can read.
    if p["device"].is_object() {
        for k in ["device_read_requests", "device_write_requests", "device_busy_nanos"] {
            assert_eq!(nums(&s[k]).len(), ops.len(), "{k}");
        }
        assert!(nums(&s["device_busy_nanos"]).iter().all(|b| *b <= interval + interval / 2));
    }
    // Paced evenly: the typical interval holds 500/s worth of ops (10 per 20 ms). (Single
    // intervals vary on a loaded machine: a thread not scheduled for 20 ms catches up after.)
    let per = 500.0 * s["interval_nanos"].as_u64().unwrap() as f64 / 1e9;
    let mut sorted = ops.clone();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2] as f64;
    assert!(
        (median - per).abs() <= per * 0.1,
        "median {median} ops per interval, not {per}: {ops:?}"
    );
    assert!(!stdout(&o).contains("fell short"));
}

/// Run `workload` and stop the whole fsbench process with SIGSTOP for `stall` once its timed
/// phase has run a second; the JSON report.
fn run_with_stall(workload: &str, stall: Duration) -> serde_json::Value {
    let d = TestDir::new();
    let w = d.write("w.toml", workload);
    let run_dir = TestDir::new();
    let mut child = command()
        .args(["run", "--dir", run_dir.path().to_str().unwrap(), "--workload"])
        .args([w.to_str().unwrap(), "--format", "json", "--no-store"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the report as it comes: one larger than the pipe's 64 KiB would block fsbench.
    let mut out = child.stdout.take().expect("piped stdout");
    let report = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut buf);
        buf
    });
    let t = Instant::now();
    while run_dir.entries().is_empty() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: signalling the child we spawned, by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGSTOP) };
    std::thread::sleep(stall);
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
    wait_within(&mut child, Duration::from_secs(60), "fsbench with a stall");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&report.join().expect("stdout reader")).expect("JSON")
}

#[test]
fn an_injected_stall_shows_in_the_series_and_only_the_fixed_rate_p99_counts_the_held_back_ops() {
    let stall = Duration::from_millis(500);
    let longest_gap = |p: &serde_json::Value| {
        let s = &p["series"];
        let ops = nums(&s["ops"]);
        let iv = s["interval_nanos"].as_u64().unwrap();
        let mut run = 0u64;
        let mut best = 0u64;
        for n in &ops[..ops.len() - 1] {
            run = if *n == 0 { run + 1 } else { 0 };
            best = best.max(run);
        }
        best * iv
    };
    // Open loop, 1000/s: the ~500 ops scheduled during the stall are issued late and timed
    // from their schedule, so the p99 is hundreds of ms.
    let paced = run_with_stall(&reads("{ seconds = 3 }", "rate_iops = 1000"), stall);
    let p = phase(&paced);
    let gap = longest_gap(p);
    assert!(gap >= 300_000_000, "a stall of 500 ms shows as {gap} ns without completions");
    let p99 = lat(p, "read").unwrap()["p99_nanos"].as_u64().unwrap();
    assert!(p99 >= 100_000_000, "fixed-rate p99 {p99} ns hides the stall");
    // The series' own p99 shows it too, in the intervals right after it.
    let worst = nums(&p["series"]["p99_nanos"]).into_iter().max().unwrap();
    assert!(worst >= 200_000_000, "series p99 at most {worst} ns");

    // Closed loop: the stall is one slow op (the max), the p99 stays low.
    let closed = run_with_stall(&reads("{ seconds = 3 }", ""), stall);
    let p = phase(&closed);
    assert!(longest_gap(p) >= 300_000_000, "the closed loop's series shows the stall too");
    let l = lat(p, "read").unwrap();
    let (p99, max) = (l["p99_nanos"].as_u64().unwrap(), l["max_nanos"].as_u64().unwrap());
    assert!(max >= 300_000_000, "the op in flight during the stall took {max} ns");
    assert!(p99 < 20_000_000, "closed-loop p99 {p99} ns: the held-back ops were never issued");

    // Open loop timed from each op's issue (fio's meaning, `fsbench fio`'s): the held-back
    // ops go out at once after the stall and each is timed from then, so, as in fio, the
    // p99 stays low; the thread was most likely waiting for its next start when stopped, so
    // no op need show the stall at all. Only the series does.
    let issue = run_with_stall(
        &reads("{ seconds = 3 }", "rate_iops = 1000\nlatency_from = \"issue\""),
        stall,
    );
    let p = phase(&issue);
    assert!(longest_gap(p) >= 300_000_000, "the series shows the stall");
    let p99 = lat(p, "read").unwrap()["p99_nanos"].as_u64().unwrap();
    assert!(p99 < 20_000_000, "p99 {p99} ns from the ops' issue");
}

#[test]
fn a_rate_the_device_cannot_do_says_how_far_short_it_fell() {
    let d = TestDir::new();
    let w = d.write("w.toml", &reads("{ seconds = 1 }", "rate_iops = 100000000"));
    let o = fsbench(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("fixed rate asked 100000000/s, achieved"), "{out}");
    assert!(out.contains("fell short by"), "{out}");
}

#[test]
fn think_time_pauses_between_ops_outside_their_latency() {
    let d = TestDir::new();
    let w = d.write("w.toml", &reads("{ ops = 100 }", "thinktime = \"2ms\"\nthinktime_blocks = 2"));
    let (v, o) =
        run_json(&["run", "--dir", d.path().to_str().unwrap(), "--workload", w.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = phase(&v);
    let wall = p["wall_nanos"].as_u64().unwrap();
    assert!(wall >= 98_000_000, "50 pauses of 2 ms in {wall} ns");
    let p50 = lat(p, "read").unwrap()["p50_nanos"].as_u64().unwrap();
    assert!(p50 < 1_000_000, "a read's latency {p50} ns includes the pause");
}

#[test]
fn a_steady_state_ends_a_time_based_phase_early() {
    let d = TestDir::new();
    let extra = "rate_iops = 400\nss = \"iops:20%\"\nss_dur = 2";
    let w = d.write("w.toml", &reads("{ seconds = 30 }", extra));
    let t = Instant::now();
    let (v, o) =
        run_json(&["run", "--dir", d.path().to_str().unwrap(), "--workload", w.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(20), "ran {:?} of 30 s", t.elapsed());
    let p = phase(&v);
    let held = p["load"]["steady"]["held_at_secs"].as_f64().expect("held");
    assert!((2.0..=10.0).contains(&held), "held at {held} s");
    assert!(p["ended_by"]
        .as_str()
        .unwrap()
        .contains("steady state (iops within 20% over 2 s) held"));
    assert_eq!(
        test_by_id(&v, "r")["status"]["state"],
        "ok",
        "a steady-state end is a complete phase"
    );
}

#[test]
fn bad_intervals_and_criteria_exit_2_with_the_fix() {
    let d = TestDir::new();
    let w = d.write("w.toml", &reads("{ seconds = 1 }", ""));
    let o = fsbench(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--interval",
        "5ms",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("write --interval 10ms or longer"), "{}", stderr(&o));
    let o = fsbench(&["compare", "--interval", "2ms", "ext4", "xfs"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    let w = d.write("ss.toml", &reads("{ bytes = \"1M\" }", "ss = \"iops:5%\""));
    let o =
        fsbench(&["run", "--dir", d.path().to_str().unwrap(), "--workload", w.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("amount = { seconds = N }"), "{}", stderr(&o));
}

#[test]
fn a_fixed_interval_is_kept_and_details_draw_a_sparkline() {
    let d = TestDir::new();
    let w = d.write("w.toml", &reads("{ seconds = 1 }", "rate_iops = 200"));
    let dir = d.path().to_str().unwrap();
    let o = fsbench(&[
        "run",
        "--dir",
        dir,
        "--workload",
        w.to_str().unwrap(),
        "--interval",
        "50ms",
        "--details",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &phase(&v)["series"];
    assert_eq!(s["interval_nanos"], 50_000_000);
    assert!((19..=21).contains(&nums(&s["ops"]).len()));
    let o = fsbench(&[
        "run",
        "--dir",
        dir,
        "--workload",
        w.to_str().unwrap(),
        "--details",
        "--no-store",
    ]);
    let out = stdout(&o);
    let line =
        out.lines().find(|l| l.contains("r read over time")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("MiB/s ") && line.contains("p99 "), "{line}");
    assert!(line.chars().any(|c| ('▁'..='█').contains(&c)), "{line}");
}
