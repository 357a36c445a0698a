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
    let work = TestDir::new();
    let file = work.write("job.fio", JOB);
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
