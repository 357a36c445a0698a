//! fio's `exitall` / `exit_what` run by `fsbench fio`: when a job ends, the jobs it names stop
//! (each with the work it did), checked from the run's own figures (`job_runtime`, bytes) and
//! side by side with fio 3.33 on the same job file.

use crate::util::*;
use std::process::Command;

/// A slow job (20 reads, 20 ms think time after each: about 0.4 s) beside a fast time-based
/// one of 2 s in its group and another in a group of its own (`new_group`).
const SLOW_AND_FAST: &str = "[global]
bs=4k
size=1m
EXITALL
[slow]
rw=read
number_ios=20
thinktime=20000
[fast]
rw=randread
time_based
runtime=2
[other group]
new_group=1
rw=randread
time_based
runtime=2
";

/// Each job of fio's JSON (`jobs[]`): name, read bytes, `job_runtime` (ms).
fn jobs(v: &serde_json::Value) -> Vec<(String, u64, u64)> {
    v["jobs"]
        .as_array()
        .unwrap_or_else(|| panic!("no jobs[] in {v}"))
        .iter()
        .map(|j| {
            let name = j["jobname"].as_str().unwrap_or_default().to_string();
            let bytes = j["read"]["io_bytes"].as_u64().unwrap_or_else(|| panic!("{j}"));
            (name, bytes, j["job_runtime"].as_u64().unwrap_or_else(|| panic!("{j}")))
        })
        .collect()
}

/// `fsbench fio` (or fio itself) on `text` in a directory of its own: its JSON's jobs.
fn run(fio: bool, text: &str) -> Vec<(String, u64, u64)> {
    let work = TestDir::new();
    let file = work.write("job.fio", text);
    let data = TestDir::new();
    let dir = format!("--directory={}", data.path().display());
    let o = if fio {
        Command::new("fio").args([dir.as_str(), "--output-format=json"]).arg(&file).output()
    } else {
        let mut c = command();
        c.args(["fio", dir.as_str(), "--output-format=json", "--no-store"]).arg(&file);
        c.output()
    }
    .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    if !fio {
        assert_eq!(data.entries(), Vec::<String>::new(), "fsbench left files behind");
    }
    jobs(&v)
}

/// The stop's bound: the watcher's poll (2 ms), the op in flight and a loaded machine's
/// scheduling; timing is noisy, so generous against the 2 s the job would run.
const BOUND_MS: u64 = 300;

/// With exitall, the fast job of the slow one's group stops within the bound after the slow
/// one ends (whichever of them is the test's own threads), with the work it did; the job of
/// another group (new_group) runs its 2 s. Without exitall, every job runs its own amount.
/// fio 3.33 does the same with the same file.
#[test]
fn exitall_stops_the_fast_job_of_the_slow_ones_group_when_it_ends() {
    let check = |who: &str, j: &[(String, u64, u64)]| {
        let get = |n: &str| j.iter().find(|x| x.0 == n).unwrap_or_else(|| panic!("{who}: no {n}"));
        let (slow, fast, other) = (get("slow"), get("fast"), get("other group"));
        assert_eq!(slow.1, 20 * 4096, "{who}: {j:?}");
        assert!((300..1500).contains(&slow.2), "{who}: the slow job runs about 0.4 s: {j:?}");
        assert!(fast.1 > 0, "{who}: the fast job reports the work it did: {j:?}");
        assert!(fast.2 <= slow.2 + BOUND_MS, "{who}: the fast job stops with the slow one: {j:?}");
        assert!(other.2 >= 1900, "{who}: another group's job is not stopped: {j:?}");
    };
    let on = SLOW_AND_FAST.replace("EXITALL", "exitall");
    check("fsbench", &run(false, &on));
    // The fast job as the test's own threads, the slow one a role.
    let fast_first = on.replace(
        "[slow]\nrw=read\nnumber_ios=20\nthinktime=20000\n[fast]\nrw=randread\ntime_based\nruntime=2\n",
        "[fast]\nrw=randread\ntime_based\nruntime=2\n[slow]\nrw=read\nnumber_ios=20\nthinktime=20000\n",
    );
    assert!(fast_first.find("[fast]") < fast_first.find("[slow]"), "{fast_first}");
    check("fsbench, fast first", &run(false, &fast_first));
    let off = SLOW_AND_FAST.replace("EXITALL", "");
    let j = run(false, &off);
    let fast = j.iter().find(|x| x.0 == "fast").expect("fast");
    assert!(fast.2 >= 1900, "without exitall the fast job runs its 2 s: {j:?}");
    if !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's exitall not compared");
        return;
    }
    check("fio 3.33", &run(true, &on));
}

/// exit_what=all: the group after the job never runs; fsbench leaves it out of its report
/// (fio lists it with no I/O) and says so, and --fio-strict refuses the file.
#[test]
fn exit_what_all_leaves_the_later_groups_out() {
    let text = "[global]\nbs=4k\nsize=256k\nexitall\n[first]\nrw=read\nexit_what=all\n[later]\nstonewall\nrw=read\n";
    let work = TestDir::new();
    let file = work.write("job.fio", text);
    let data = TestDir::new();
    let dir = format!("--directory={}", data.path().display());
    let o = command()
        .args(["fio", dir.as_str(), "--output-format=json", "--no-store"])
        .arg(&file)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("[later] never runs: [first] has exit_what=all"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let j = jobs(&v);
    assert_eq!(j.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["first"], "{j:?}");
    assert_eq!(j[0].1, 256 << 10);
    let o = command()
        .args(["fio", dir.as_str(), "--fio-strict", "--no-store"])
        .arg(&file)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("exit-all-unrun"), "{}", stderr(&o));
}

/// The test's own threads stopped by a role's end (exitall): the phase says `ended_by =
/// "exitall"` and its figures are the work it did (not an interruption, not a failure).
#[test]
fn a_phase_stopped_by_exitall_says_so() {
    let text = "[global]\nbs=4k\nsize=1m\nexitall\n[fast]\nrw=randread\ntime_based\nruntime=5\n[slow]\nrw=read\nnumber_ios=10\nthinktime=20000\n";
    let work = TestDir::new();
    let file = work.write("job.fio", text);
    let data = TestDir::new();
    let o = command()
        .args(["run", "--fio"])
        .arg(&file)
        .arg("--dir")
        .arg(data.path())
        .args(["--format", "json", "--no-store"])
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let p = &v["tests"][0]["reps"][0]["phases"][0];
    assert_eq!(p["ended_by"], "exitall", "{p}");
    let wall = p["wall_nanos"].as_u64().unwrap_or_else(|| panic!("no wall_nanos in {p}"));
    assert!(wall < 2_000_000_000, "stopped with the slow job (about 0.2 s), not at 5 s: {wall} ns");
    assert!(p["bytes_read"].as_u64().unwrap_or(0) > 0, "{p}");
    assert_eq!(v["tests"][0]["status"]["state"], "ok", "{}", v["tests"][0]["status"]);
    assert_eq!(data.entries(), Vec::<String>::new(), "fsbench left files behind");
}
