//! fio's amounts through `fsbench fio`, beside fio 3.33 on the same job file: `number_ios`
//! counts once per loop (fio's `exceeds_number_ios` caps at number_ios times loops), and has no
//! effect on a `time_based` job (fio's job loop runs until the runtime).

use crate::util::*;

/// The read ops of the one job of `fsbench fio` (or fio) on `job`.
fn reads(fio: bool, job: &str) -> u64 {
    let o = fio_job_output(fio, job, "json");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    v["jobs"][0]["read"]["total_ios"].as_u64().unwrap_or_else(|| panic!("{v}"))
}

#[test]
fn number_ios_counts_per_loop_and_not_with_time_based() {
    let job = |extra: &str| format!("[j]\nrw=read\nbs=64k\nsize=1m\n{extra}");
    // 16 blocks a loop: 10 ios a loop come first (30), 40 do not (the 48 blocks of 3 loops).
    let per_loop = [("number_ios=10\nloops=3\n", 30), ("number_ios=40\nloops=3\n", 48)];
    let fio = have("fio");
    if !fio {
        skip("fio not installed (apt-get install fio): fsbench's counts checked alone");
    }
    for (extra, want) in per_loop {
        assert_eq!(reads(false, &job(extra)), want, "{extra}");
        if fio {
            assert_eq!(reads(true, &job(extra)), want, "fio's, {extra}");
        }
    }
    // A time-based job runs its runtime: far more than 4 ops of a cached 1 MiB file in 0.3 s.
    let timed = job("number_ios=4\ntime_based\nruntime=300ms\n");
    let n = reads(false, &timed);
    assert!(n > 40, "fsbench stopped at {n} ops");
    if fio {
        let n = reads(true, &timed);
        assert!(n > 40, "fio stopped at {n} ops");
    }
}
