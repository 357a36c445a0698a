//! fio's bandwidth and IOPS sample statistics (`bw_min` ... `bw_samples`, `iops_min` ...
//! `iops_samples`, and the text's `bw (  KiB/s):` and `iops        :` lines): `fsbench fio` and
//! fio 3.33 run the same paced job, and both JSONs are read by the same code. A 3 s job in
//! 500 ms windows has 6 samples, or 5 when the last window ends a hair after the job (fio's
//! timer); the rates are near the job's `rate_iops=200` in both (timing: a busy machine can
//! fall short, so the bounds are broad).

use crate::util::*;
use std::process::Command;

/// One thread at 200 reads of 4 KiB a second for 3 s.
const JOB: &str = "[paced]\nrw=randread\nbs=4k\nsize=4m\nrate_iops=200\ntime_based\nruntime=3\n";

/// The job's output from `fsbench fio` (or fio) in `format`.
fn run(format: &str, fio: bool) -> String {
    run_job(JOB, format, fio)
}

/// `job`'s output from `fsbench fio` (or fio) in `format`.
fn run_job(job: &str, format: &str, fio: bool) -> String {
    let work = TestDir::new();
    let file = work.write("job.fio", job);
    let dir = format!("--directory={}", work.path().display());
    let fmt = format!("--output-format={format}");
    let o = if fio {
        Command::new("fio").args([dir.as_str(), fmt.as_str()]).arg(&file).output()
    } else {
        command().args(["fio", dir.as_str(), fmt.as_str(), "--no-store"]).arg(&file).output()
    }
    .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `jobs[0].read`'s sample keys, each checked to be there: (bw_mean, bw_samples, iops_mean,
/// iops_samples, bw_min, bw_max).
fn samples(json: &str, who: &str) -> (f64, u64, f64, u64, u64, u64) {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{who}: {e}"));
    let r = &v["jobs"][0]["read"];
    for k in [
        "bw_min",
        "bw_max",
        "bw_agg",
        "bw_mean",
        "bw_dev",
        "bw_samples",
        "iops_min",
        "iops_max",
        "iops_mean",
        "iops_stddev",
        "iops_samples",
    ] {
        assert!(r.get(k).is_some_and(|x| x.is_number()), "{who}: no `{k}` in {r}");
    }
    let f = |k: &str| r[k].as_f64().unwrap_or(-1.0);
    let u = |k: &str| r[k].as_u64().unwrap_or(u64::MAX);
    assert!(u("iops_min") <= u("iops_max") && f("bw_agg") <= 100.0, "{who}: {r}");
    (f("bw_mean"), u("bw_samples"), f("iops_mean"), u("iops_samples"), u("bw_min"), u("bw_max"))
}

#[test]
fn fsbench_fio_reports_fios_rate_samples() {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's samples not compared");
    }
    let mut counts = Vec::new();
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let (bw_mean, bw_n, iops_mean, iops_n, bw_min, bw_max) = samples(&run("json", fio), who);
        assert!((5..=6).contains(&iops_n), "{who}: {iops_n} IOPS samples in 3 s of 500 ms");
        assert_eq!(bw_n, iops_n, "{who}");
        assert!((150.0..=250.0).contains(&iops_mean), "{who}: iops_mean {iops_mean}");
        // 4 KiB ops: KiB/s is four times the IOPS.
        let want = iops_mean * 4096.0 / 1024.0;
        assert!((bw_mean - want).abs() <= want * 0.1, "{who}: bw_mean {bw_mean}, {want} wanted");
        assert!(bw_min as f64 <= bw_mean && bw_mean <= bw_max as f64, "{who}");
        counts.push(iops_n);
    }
    if let [ours, fios] = counts[..] {
        assert!(ours.abs_diff(fios) <= 1, "fsbench {ours} samples, fio {fios}");
    }
    let text = run("normal", false);
    let line = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no `{start}`: {text}"))
    };
    let bw = line("   bw (  KiB/s): min=");
    assert!(bw.contains(", per=100.00%, avg=") && bw.contains(", samples="), "{bw}");
    let iops = line("   iops        : min=");
    assert!(iops.contains(", avg=") && iops.contains(", stdev="), "{iops}");
}

/// Two clones at 200 reads a second each for 2 s: without `group_reporting` each clone's entry
/// has its own thread's samples (3-4 of 500 ms, a mean near 200 IOPS); with it, one entry
/// whose statistics are the clones' added up as fio adds them (the samples counted together,
/// the mean near 400: the group's rate). The same code reads fio 3.33's JSON when installed.
#[test]
fn each_clone_has_its_threads_samples_and_group_reporting_adds_them_up() {
    let job =
        "[paced]\nrw=randread\nbs=4k\nsize=4m\nrate_iops=200\ntime_based\nruntime=2\nnumjobs=2\n";
    let grouped = format!("{job}group_reporting\n");
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's clones not compared");
    }
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let v: serde_json::Value = serde_json::from_str(&run_job(job, "json", fio)).expect("JSON");
        let jobs = v["jobs"].as_array().expect("jobs");
        assert_eq!(jobs.len(), 2, "{who}: one entry per clone");
        for j in jobs {
            let (_, _, mean, n, _, _) =
                samples(&serde_json::json!({ "jobs": [j] }).to_string(), who);
            let r = &j["read"];
            assert!((3..=4).contains(&n), "{who}: a clone's {n} samples in 2 s of 500 ms: {r}");
            assert!((150.0..=250.0).contains(&mean), "{who}: a clone's iops_mean {mean}");
            // Its mean bandwidth is about half its group's aggregate.
            let agg = r["bw_agg"].as_f64().unwrap_or(0.0);
            assert!((35.0..=65.0).contains(&agg), "{who}: a clone's bw_agg {agg}");
        }
        let v: serde_json::Value =
            serde_json::from_str(&run_job(&grouped, "json", fio)).expect("JSON");
        let (_, _, mean, n, _, _) = samples(&v.to_string(), who);
        let r = &v["jobs"][0]["read"];
        assert!((6..=8).contains(&n), "{who}: both clones' samples counted: {r}");
        assert!((300.0..=500.0).contains(&mean), "{who}: the clones' means added: {mean}");
    }
}
