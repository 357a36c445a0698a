//! `fsbench run`: each unit14 test does what its definition says, checked from the JSON result
//! and, op by op, from the system calls themselves (strace).

use crate::util::*;
use std::process::Command;

const M: u64 = 1 << 20;

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[test]
fn unit14_counts_match_definitions() {
    let d = TestDir::new();
    let (v, o) = run_json(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--scale",
        "1/32",
        "--test",
        "1,2,3,4,7,8,9,10,11,12,14",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.entries().is_empty(), "test files removed: {:?}", d.entries());

    let rep = |id: &str| test_by_id(&v, id)["reps"][0].clone();

    // 1: 128M/32 = 4M (the floor) written with 1M writes, no sync.
    let r = rep("1");
    assert_eq!(u(&r["bytes"]), 4 * M);
    assert_eq!(u(&lat(&r, "write").unwrap()["count"]), 4);
    assert!(lat(&r, "fsync").is_none());
    assert_eq!(u(&lat(&r, "open").unwrap()["count"]), 1);
    assert_eq!(u(&lat(&r, "close").unwrap()["count"]), 1);

    // 2: 5M file in 128K O_DSYNC writes (5M is above the 4M floor only by scaling: 4M).
    let r = rep("2");
    assert_eq!(u(&r["bytes"]), 4 * M);
    assert_eq!(u(&lat(&r, "write").unwrap()["count"]), 32);

    // 3: file of 50M/32 rounded to 64K, fsync every 10M/32: five fsyncs, sizes 1K..8K.
    let r = rep("3");
    assert_eq!(u(&lat(&r, "fsync").unwrap()["count"]), 5);
    let w = lat(&r, "write").unwrap();
    let mean = r["bytes"].as_f64().unwrap() / w["count"].as_f64().unwrap();
    assert!((3500.0..5700.0).contains(&mean), "mean write size {mean} should be ~4.5K");

    // 4: one sequential pass of 32K reads over the whole (cached) file.
    let t4 = test_by_id(&v, "4");
    let r = &t4["reps"][0];
    let file = 32 * M; // 1G / 32
    assert_eq!(u(&r["bytes"]), file);
    assert_eq!(u(&lat(r, "read").unwrap()["count"]), file / (32 << 10));
    let ph = &r["phases"][0];
    assert_eq!(ph["cache"]["required"], "cached");
    assert!(ph["cache"]["resident_fraction"].as_f64().unwrap() > 0.95);

    // 7: rewrite of a cached file, 1K..8K writes, no sync.
    let r = rep("7");
    assert_eq!(u(&r["phases"][0]["bytes_written"]), 1000 * M / 32);
    assert!(lat(&r, "fsync").is_none());

    // 8: write the file once, then read it twice; both phases timed.
    let r = rep("8");
    let phases = r["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    let size = u(&phases[0]["bytes_written"]);
    assert!(size > 4 * M);
    assert_eq!(u(&phases[1]["bytes_read"]), 2 * size);
    assert_eq!(u(&r["bytes"]), 3 * size);

    // 9: 128M/32 = 4M of 8K writes, then exactly one fsync.
    let r = rep("9");
    assert_eq!(u(&lat(&r, "write").unwrap()["count"]), 4 * M / 8192);
    assert_eq!(u(&lat(&r, "fsync").unwrap()["count"]), 1);

    // 10 and 11: 1M of 2K writes per thread (below the floor: not scaled).
    assert_eq!(u(&lat(&rep("10"), "write").unwrap()["count"]), 512);
    let t11 = test_by_id(&v, "11");
    assert_eq!(t11["threads"], 4);
    assert_eq!(u(&lat(&t11["reps"][0], "write").unwrap()["count"]), 4 * 512);

    // 12: three reads per write, 8K each, 4M in all.
    let r = rep("12");
    let reads = u(&lat(&r, "read").unwrap()["count"]);
    let writes = u(&lat(&r, "write").unwrap()["count"]);
    assert_eq!(reads, 3 * writes);
    assert_eq!((reads + writes) * 8192, 4 * M);

    // 14: 4 threads × 4M of 2K preads, cached.
    let t14 = test_by_id(&v, "14");
    assert_eq!(u(&lat(&t14["reps"][0], "read").unwrap()["count"]), 4 * 2048);
    assert!(t14["reps"][0]["cpu_pct_per_thread"].as_f64().unwrap() > 0.0);
}

/// Parse `strace -f` lines into (syscall, args) tuples.
fn strace_calls(path: &std::path::Path) -> Vec<(String, Vec<String>, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| {
            // "1234  pread64(5, "..."..., 8192, 1234) = 8192"
            let l = l.split_once(' ').map(|(_, r)| r.trim_start()).unwrap_or(l);
            let (name, rest) = l.split_once('(')?;
            let (args, ret) = rest.rsplit_once(')')?;
            let ret = ret.trim().strip_prefix('=')?.trim();
            let args: Vec<String> = args.split(", ").map(|s| s.to_string()).collect();
            Some((name.to_string(), args, ret.split_whitespace().next().unwrap_or("").to_string()))
        })
        .collect()
}

/// [`strace_calls`] of the threads that issued `pwrite64` (the test's I/O threads): fsbench's own
/// bookkeeping on the main thread (its state record, fsync'd) is not the test's I/O.
fn strace_calls_of_writers(path: &std::path::Path) -> Vec<(String, Vec<String>, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let tid = |l: &str| l.split_once(' ').map(|(t, _)| t.to_string()).unwrap_or_default();
    let writers: std::collections::HashSet<String> =
        text.lines().filter(|l| l.contains(" pwrite64(")).map(tid).collect();
    let kept: String =
        text.lines().filter(|l| writers.contains(&tid(l))).map(|l| format!("{l}\n")).collect();
    let only = path.with_extension("writers");
    std::fs::write(&only, kept).unwrap();
    strace_calls(&only)
}

#[test]
fn test12_pattern_op_by_op() {
    if !crate::util::have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let log = d.path().join("strace.log");
    let run_dir = d.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let o = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=pread64,pwrite64,fsync",
            "-e",
            "signal=none",
            "-s",
            "0",
            "-o",
        ])
        .arg(&log)
        .arg(bin())
        .args([
            "run",
            // strace counts every pwrite of the process; the results store would add SQLite's.
            "--no-store",
            // One pass of the pattern (the default --min-time would repeat it).
            "--min-time",
            "0",
            "--dir",
            run_dir.to_str().unwrap(),
            "--test",
            "12",
            "--scale",
            "1/256",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let calls = strace_calls(&log);
    // The timed phase is the run of preads/pwrites of 8192 bytes (set-up uses 1M writes and
    // the cache warm-up uses read(2), not pread).
    let ops: Vec<_> = calls
        .iter()
        .filter(|(n, a, _)| {
            (n == "pread64" || n == "pwrite64") && a.get(2).map(|s| s.as_str()) == Some("8192")
        })
        .collect();
    assert!(ops.len() >= 400, "expected many 8K ops, got {}", ops.len());
    for chunk in ops.chunks_exact(4) {
        let names: Vec<&str> = chunk.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["pread64", "pread64", "pread64", "pwrite64"]);
        let off = |i: usize| chunk[i].1[3].parse::<u64>().unwrap();
        for i in 0..4 {
            assert_eq!(off(i) % 8192, 0, "8K-aligned offsets");
        }
        assert_eq!(off(3), off(2), "the write goes to the last block read");
    }
    let distinct: std::collections::HashSet<_> = ops.iter().map(|(_, a, _)| a[3].clone()).collect();
    assert!(distinct.len() > ops.len() / 4, "offsets are random, not repeated");
}

#[test]
fn test3_sizes_and_fsync_points_op_by_op() {
    if !crate::util::have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let log = d.path().join("strace.log");
    let run_dir = d.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let o = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=pwrite64,fsync", "-e", "signal=none", "-s", "0", "-o"])
        .arg(&log)
        .arg(bin())
        .args([
            "run",
            // strace counts every pwrite of the process; the results store would add SQLite's.
            "--no-store",
            // One pass of the pattern (the default --min-time would repeat it).
            "--min-time",
            "0",
            "--dir",
            run_dir.to_str().unwrap(),
            "--test",
            "3",
            "--scale",
            "1/8",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let calls = strace_calls_of_writers(&log);
    // 50M/8 = 6400K (a multiple of 64K, above the 4M floor); the interval keeps its ratio: 10M/8.
    let file: u64 = 50 * M / 8;
    let interval: u64 = 10 * M / 8;
    let mut written = 0u64;
    let mut last_size = 0u64;
    let mut fsyncs = 0u64;
    let mut expect_off = 0u64;
    for (name, args, ret) in &calls {
        match name.as_str() {
            "pwrite64" => {
                let size: u64 = args[2].parse().unwrap();
                let off: u64 = args[3].parse().unwrap();
                assert_eq!(off, expect_off, "sequential");
                assert!(
                    size <= 8192 && (size >= 1024 || off + size == file),
                    "size {size} in [1K,8K]"
                );
                assert_eq!(ret.parse::<u64>().unwrap(), size);
                expect_off += size;
                written += size;
                last_size = size;
            }
            "fsync" => {
                // fsync right after the write that crossed the next 1.25M mark.
                fsyncs += 1;
                let mark = fsyncs * interval;
                assert!(
                    written >= mark && written - last_size < mark,
                    "fsync {fsyncs} at {written}, mark {mark}"
                );
            }
            _ => {}
        }
    }
    assert_eq!(written, file, "file written exactly once");
    assert_eq!(fsyncs, 5, "fsync every 10M of 50M");
}

#[test]
fn repeat_gives_statistics_and_table() {
    let d = TestDir::new();
    let o = fsbench(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--test",
        "14",
        "--scale",
        "1/16",
        "--repeat",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("95% CI") && out.contains("CV"), "{out}");
    assert!(out.contains("randread-2k-cached-4t"));
    // Where the time went, last (test 14 reads its file cached: laid out every time).
    assert!(out.contains("\nTime: ") && out.contains("in timed phases"), "{out}");
    assert!(!out.contains("reused laid-out files"), "{out}");
    let (v, _) = run_json(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--test",
        "14",
        "--scale",
        "1/16",
        "--repeat",
        "3",
    ]);
    let sm = &v["tests"][0]["summary"];
    assert_eq!(sm["n"], 3);
    assert_eq!(sm["figure"], "mib_per_s");
    assert!(sm["elapsed_s"]["median"].as_f64().unwrap() > 0.0);
    let s = &sm["mib_per_s"];
    let (lo, med, hi) =
        (s["min"].as_f64().unwrap(), s["median"].as_f64().unwrap(), s["max"].as_f64().unwrap());
    assert!(lo <= med && med <= hi);
    let (cl, ch) = (s["ci95_low"].as_f64().unwrap(), s["ci95_high"].as_f64().unwrap());
    assert!(0.0 < cl && cl <= ch, "{s}");
    assert_eq!(v["tests"][0]["reps"].as_array().unwrap().len(), 3);
    let t = &v["time"];
    assert!(t["total_s"].as_f64().unwrap() >= t["timed_s"].as_f64().unwrap(), "{t}");
    assert_eq!(t["tests"][0]["reps"], 3, "{t}");
    assert!(t["layout_s"].as_f64().unwrap() > 0.0, "{t}");
}

#[test]
fn csv_has_one_row_per_test() {
    let d = TestDir::new();
    let o = fsbench(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--test",
        "10,14",
        "--scale",
        "1/64",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("target,test,name,status"));
    assert!(lines[1].contains(",10,randwrite-2k-dsync,ok,"));
}

#[test]
fn short_phase_warns() {
    let d = TestDir::new();
    let o =
        fsbench(&["run", "--dir", d.path().to_str().unwrap(), "--test", "14", "--scale", "1/64"]);
    assert!(stdout(&o).contains("start-up and scheduler noise dominate"), "{}", stdout(&o));
}

#[test]
fn without_a_terminal_each_test_start_is_a_line_on_stderr() {
    let d = TestDir::new();
    let dir = d.path().to_str().unwrap();
    let o = fsbench(&["run", "--dir", dir, "--test", "1,10", "--scale", "1/64", "--no-store"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    let lines: Vec<&str> = e.lines().filter(|l| l.starts_with("fsbench: [")).collect();
    assert_eq!(lines.len(), 2, "one line per test: {e}");
    assert!(lines[0].starts_with(&format!("fsbench: [1/2] {dir}: test 1 ")), "{e}");
    assert!(lines[1].starts_with(&format!("fsbench: [2/2] {dir}: test 10 ")), "{e}");
    assert!(lines.iter().all(|l| l.ends_with(" elapsed)")), "{e}");
}

const TINY: &str = "[[test]]\nid = \"w\"\nname = \"write-64k\"\nfile = { size = \"64K\", prefill = false }\n[[test.phase]]\nname = \"w\"\nopen = [\"create\", \"trunc\"]\npattern = [{ op = \"write\", size = \"4K\" }]\namount = { passes = 1 }\n";

#[test]
fn min_time_lengthens_a_short_phase_by_default() {
    let (dir, d) = (TestDir::new(), TestDir::new());
    let wl = d.write("tiny.toml", TINY);
    let args = ["run", "--dir", dir.path().to_str().unwrap(), "--workload", wl.to_str().unwrap()];
    let args = [&args[..], &["--no-store"]].concat();
    let run = |extra: &[&str]| {
        // Without the test suite's FSBENCH_MIN_TIME=0: the default applies.
        let o = command()
            .env_remove("FSBENCH_MIN_TIME")
            .args(&args)
            .args(extra)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["tests"][0]["reps"][0]["phases"][0].clone()
    };
    // Writing 64 KiB into the page cache takes well under a millisecond: the default 0.5 s
    // makes it run many times, and its figures count every pass.
    let p = run(&[]);
    assert!(u(&p["passes"]) > 10, "{p}");
    // At least 0.5 s, unless the cap of 1000 passes came first.
    assert!(u(&p["wall_nanos"]) >= 500_000_000 || u(&p["passes"]) == 1000, "{p}");
    assert_eq!(u(&p["bytes_written"]), 64 * 1024 * u(&p["passes"]));
    let p = run(&["--min-time", "0"]);
    assert_eq!((u(&p["passes"]), u(&p["bytes_written"])), (1, 64 * 1024), "{p}");
    let p = run(&["--min-time", "20ms"]);
    assert!(u(&p["wall_nanos"]) >= 20_000_000, "{p}");
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}

#[test]
fn repeat_auto_says_per_test_how_many_repetitions_and_why() {
    let (dir, d) = (TestDir::new(), TestDir::new());
    let wl = d.write("tiny.toml", TINY);
    let (dp, wp) = (dir.path().to_str().unwrap(), wl.to_str().unwrap());
    let base = ["run", "--dir", dp, "--workload", wp, "--no-store"];
    // Any interval meets a target of ±10^12 %: the first 5 repetitions, stopped by the CI.
    // (±100000% was not enough once: on a loaded machine one of five 64 KiB writes stalled
    // for long enough to put the interval beyond a factor of 1000.)
    let mut a = base.to_vec();
    a.extend(["--repeat", "auto", "--target-ci", "1e12"]);
    let (v, o) = run_json(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = &v["tests"][0];
    assert_eq!(t["reps"].as_array().unwrap().len(), 5);
    let w = t["warnings"].as_array().unwrap().iter().find(|w| w["kind"] == "repetitions");
    let w = w.unwrap_or_else(|| panic!("{}", t["warnings"]));
    assert_eq!((u(&w["count"]), w["stopped_by"].as_str()), (5, Some("ci")), "{w}");
    assert!(w["message"].as_str().unwrap().contains("--repeat auto: 5 repetitions"), "{w}");
    // A target no figure meets: up to --max-repeat.
    let mut a = base.to_vec();
    a.extend(["--repeat", "auto", "--target-ci", "0.0000001", "--max-repeat", "6"]);
    let (v, _) = run_json(&a);
    let w = &v["tests"][0]["warnings"];
    assert!(w.to_string().contains("\"stopped_by\":\"max\""), "{w}");
    assert_eq!(v["tests"][0]["reps"].as_array().unwrap().len(), 6);
    let table =
        stdout(&fsbench(&[&base[..], &["--repeat", "auto", "--target-ci", "1e12"]].concat()));
    assert!(table.contains("--repeat auto: 5 repetitions"), "{table}");
    // Bad values are refused before anything runs.
    for bad in [
        &["--repeat", "0"][..],
        &["--repeat", "often"],
        &["--min-time", "-1"],
        &["--time-budget", "soon"],
        &["--target-ci", "0"],
        &["--target-ci", "-5"],
    ] {
        let o = fsbench(&[&base[..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
    }
}

/// A directory on a device fsbench did not make (/var/tmp, the machine's own disk): its device
/// counters include other processes' I/O, and every output says so.
#[test]
fn device_counters_of_a_users_directory_are_labelled_device_wide() {
    let d = TestDir::new();
    let wl = d.write("w.toml", TINY);
    let (dp, wp) = (d.path().to_str().unwrap(), wl.to_str().unwrap());
    let o = fsbench(&["run", "--dir", dp, "--workload", wp, "--no-store", "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mut rows = csv::Reader::from_reader(out.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let row = rows.records().next().unwrap().unwrap();
    if row[col("device_read_bytes")].is_empty() {
        println!("skipped: the test directory is on no block device (tmpfs, overlay)");
        return;
    }
    assert_eq!(&row[col("device_wide")], "true", "{out}");
    let o = fsbench(&["run", "--dir", dp, "--workload", wp, "--no-store", "--details"]);
    let text = stdout(&o);
    assert!(text.contains("are device-wide") && text.contains("other processes' I/O"), "{text}");
    assert!(text.contains("*: device-wide"), "{text}");
}
