//! fio's steady state (`ss`, `ss_dur`) run by `fsbench fio` and by fio 3.33 on the same job
//! file, both JSONs read by the same code (`steadystate` at fio's paths): a job paced at 200
//! IOPS settles at once and ends after its 3 s window, long before its runtime; a slope limit
//! no real series meets runs the whole runtime and says it never attained. Times are wall-clock
//! and the machine is shared: the bounds are wide (ended before half the runtime; ran at least
//! 95% of it).

use crate::util::*;
use std::time::{Duration, Instant};

/// The JSON of `fsbench fio` (or fio) on the job file `job`, each in a directory of its own,
/// and how long the command took.
fn run_job(fio: bool, job: &str) -> (serde_json::Value, Duration) {
    let start = Instant::now();
    let o = fio_job_output(fio, job, "json");
    let took = start.elapsed();
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    (v, took)
}

/// The normal text of `fsbench fio` (or fio) on the job file `job`.
fn run_text(fio: bool, job: &str) -> String {
    stdout(&fio_job_output(fio, job, "normal"))
}

/// What a script reads of a job's steady state, at fio 3.33's paths.
#[derive(Debug)]
struct Steady {
    ss: String,
    duration: u64,
    attained: u64,
    iops_mean: u64,
    samples: usize,
    /// The read direction's run time, ms.
    runtime_ms: u64,
}

fn steady(v: &serde_json::Value) -> Steady {
    let j = &v["jobs"][0];
    let s = &j["steadystate"];
    let int = |x: &serde_json::Value| x.as_u64().unwrap_or_else(|| panic!("{s}"));
    Steady {
        ss: s["ss"].as_str().unwrap_or_else(|| panic!("no steadystate.ss: {j}")).to_string(),
        duration: int(&s["duration"]),
        attained: int(&s["attained"]),
        iops_mean: int(&s["data"]["iops_mean"]),
        samples: s["data"]["iops"].as_array().map_or(0, Vec::len),
        runtime_ms: int(&j["read"]["runtime"]),
    }
}

fn tools() -> Vec<bool> {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's steady state not compared");
    }
    tools
}

/// `rate_iops=200`, `ss=iops:20%`, `ss_dur=3` on a 30 s job: each second has about 200 ops, so
/// the first full window holds and the job ends after about 3 s, in both.
#[test]
fn a_paced_job_attains_steady_state_and_ends_early_as_fios() {
    let job = "[j]\nrw=randread\nbs=4k\nsize=16m\ntime_based\nruntime=30\nrate_iops=200\nss=iops:20%\nss_dur=3\n";
    for fio in tools() {
        let who = if fio { "fio 3.33" } else { "fsbench" };
        let (v, took) = run_job(fio, job);
        let s = steady(&v);
        assert_eq!(s.ss, "iops:20.000000%", "{who}: {s:?}");
        assert_eq!((s.duration, s.attained, s.samples), (3, 1, 3), "{who}: {s:?}");
        assert!((150..=250).contains(&s.iops_mean), "{who}: {s:?}");
        assert!(s.runtime_ms < 15_000, "{who}: ran {} ms of its 30 s: {s:?}", s.runtime_ms);
        assert!(took < Duration::from_secs(20), "{who}: took {took:?}");
        // fio's text line, with the criterion's name and value.
        let text = run_text(fio, job);
        let line = text
            .lines()
            .find(|l| l.contains("steadystate  :"))
            .unwrap_or_else(|| panic!("{who}: {text}"));
        assert!(line.starts_with("  steadystate  : attained=yes, bw="), "{who}: {line}");
        assert!(line.contains(", iops=") && line.contains(", iops mean dev="), "{who}: {line}");
        assert!(line.ends_with('%'), "{who}: {line}");
    }
}

/// `ss=iops_slope:0.0001%` over 2 s windows of an unpaced job: two seconds never have the same
/// op count to a millionth, so the job runs its 4 s and says it never attained, in both.
#[test]
fn a_criterion_never_met_runs_the_whole_runtime_and_says_so_as_fios() {
    let job = "[j]\nrw=randread\nbs=4k\nsize=16m\ntime_based\nruntime=4\nss=iops_slope:0.0001%\nss_dur=2\n";
    for fio in tools() {
        let who = if fio { "fio 3.33" } else { "fsbench" };
        let (v, _) = run_job(fio, job);
        let s = steady(&v);
        assert_eq!(s.ss, "iops_slope:0.000100%", "{who}: {s:?}");
        assert_eq!((s.duration, s.attained, s.samples), (2, 0, 2), "{who}: {s:?}");
        assert!(s.runtime_ms >= 3_800, "{who}: ran {} ms of its 4 s: {s:?}", s.runtime_ms);
        let c = v["jobs"][0]["steadystate"]["criterion"].as_str().unwrap_or("");
        assert!(c.ends_with('%') && c != "0.000000%", "{who}: criterion {c}");
    }
}

/// `numjobs=2` with `group_reporting`, each clone at 100 IOPS: fio 3.33 judges the group's sum
/// (200 IOPS a second) and so does fsbench (the test's threads together); one `jobs[]` entry
/// whose window has the sum, not one clone's 100.
#[test]
fn a_group_is_judged_on_its_sum_as_fios() {
    let job = "[j]\nrw=randread\nbs=4k\nsize=16m\ntime_based\nruntime=30\nrate_iops=100\nnumjobs=2\ngroup_reporting\nss=iops:20%\nss_dur=3\n";
    for fio in tools() {
        let who = if fio { "fio 3.33" } else { "fsbench" };
        let (v, _) = run_job(fio, job);
        assert_eq!(v["jobs"].as_array().map(Vec::len), Some(1), "{who}: {v}");
        let s = steady(&v);
        assert_eq!((s.duration, s.attained, s.samples), (3, 1, 3), "{who}: {s:?}");
        assert!((150..=250).contains(&s.iops_mean), "{who}: the sum of two 100/s clones: {s:?}");
        assert!(s.runtime_ms < 15_000, "{who}: ran {} ms of its 30 s: {s:?}", s.runtime_ms);
    }
}
