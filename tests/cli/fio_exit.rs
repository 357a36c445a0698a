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

/// exit_what=all: the run groups after the job never run. `fsbench fio --output-format=json`
/// lists their jobs after the others as fio 3.33 does: the same jobname, groupid and error, every
/// figure zero at fio's paths, no fields fio leaves out of a job that never ran (the latency
/// target's), and `fsbench.ran` false with the job that stopped them. The normal text has no
/// block for them but their group's line, as fio's. Nothing here differs from fio, so
/// --fio-strict takes the file. fio 3.33's JSON of the same file is read by the same code.
#[test]
fn exit_what_all_lists_the_later_groups_jobs_unrun_as_fio() {
    let text = "[global]\nbs=4k\nsize=256k\nexitall\n[first]\nrw=read\nexit_what=all\n[later]\nstonewall\nrw=read\n[later2]\nrw=write\n[last]\nstonewall\nrw=read\n";
    let work = TestDir::new();
    let file = work.write("job.fio", text);
    let data = TestDir::new();
    let dir = format!("--directory={}", data.path().display());
    let fsbench_fio = |extra: &[&str]| {
        command().args(["fio", dir.as_str(), "--no-store"]).args(extra).arg(&file).output()
    };
    let o = fsbench_fio(&["--output-format=json"]).expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("[later] never runs: [first] has exit_what=all"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let j = jobs(&v);
    let names: Vec<&str> = j.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["first", "later", "later2", "last"], "{j:?}");
    assert_eq!(j[0].1, 256 << 10);
    /// What a script reads of a job that never ran, at fio's paths.
    fn unrun(j: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
        let mut out = Vec::new();
        for k in ["jobname", "groupid", "error", "job_runtime", "usr_cpu", "sys_cpu"] {
            out.push((k.to_string(), j[k].clone()));
        }
        for d in ["read", "write", "trim"] {
            for k in ["io_bytes", "io_kbytes", "bw", "bw_bytes", "iops", "runtime", "total_ios"] {
                out.push((format!("{d}.{k}"), j[d][k].clone()));
            }
            for l in ["slat_ns", "clat_ns", "lat_ns"] {
                for k in ["min", "max", "mean", "stddev", "N"] {
                    out.push((format!("{d}.{l}.{k}"), j[d][l][k].clone()));
                }
            }
        }
        out.push(("sync.total_ios".into(), j["sync"]["total_ios"].clone()));
        out
    }
    let jobs_of = |v: &serde_json::Value| v["jobs"].as_array().unwrap().clone();
    let ours = jobs_of(&v);
    for (k, x) in unrun(&ours[1]).into_iter().skip(1) {
        let zero = x.as_f64() == Some(0.0) || (k == "groupid" && x.as_u64() == Some(1));
        assert!(zero, "{k} of a job that never ran: {x}");
    }
    assert_eq!((ours[2]["groupid"].as_u64(), ours[3]["groupid"].as_u64()), (Some(1), Some(2)));
    for u in &ours[1..] {
        assert_eq!(u["fsbench"]["ran"], false, "{u}");
        assert!(u["fsbench"]["why"].as_str().unwrap().starts_with("[first] has exit_what=all"));
        assert!(u.get("latency_depth").is_none() && u.get("latency_target").is_none(), "{u}");
    }
    assert!(ours[0].get("latency_depth").is_some(), "a job that ran has fio's latency target");
    let text_out = fsbench_fio(&[]).expect("run");
    assert!(text_out.status.success(), "{}", stderr(&text_out));
    let t = stdout(&text_out);
    assert!(t.contains("first: (groupid=0") && !t.contains("later: (groupid"), "{t}");
    assert!(t.contains("Run status group 1 (all jobs):\nRun status group 2 (all jobs):"), "{t}");
    assert!(t.contains("later2: never ran ([first] has exit_what=all)"), "{t}");
    let o = fsbench_fio(&["--fio-strict", "--output-format=json"]).expect("run");
    assert!(o.status.success(), "no difference left: {}", stderr(&o));
    if !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's listing not compared");
        return;
    }
    let fio_data = TestDir::new();
    let o = Command::new("fio")
        .current_dir(fio_data.path())
        .arg("--output-format=json")
        .arg(&file)
        .output()
        .expect("fio");
    assert!(o.status.success(), "{}", stderr(&o));
    let f: serde_json::Value = serde_json::from_slice(&o.stdout).expect("fio's JSON");
    let theirs = jobs_of(&f);
    assert_eq!(jobs(&f).iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), names);
    for (a, b) in ours.iter().zip(&theirs).skip(1) {
        let num =
            |x: &serde_json::Value| x.as_f64().map(|n| serde_json::json!(n)).unwrap_or(x.clone());
        let (a, b): (Vec<_>, Vec<_>) = (
            unrun(a).into_iter().map(|(k, x)| (k, num(&x))).collect(),
            unrun(b).into_iter().map(|(k, x)| (k, num(&x))).collect(),
        );
        assert_eq!(a, b, "fsbench's and fio 3.33's job that never ran");
        let keys =
            |j: &serde_json::Value| j.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let fio_keys = keys(&theirs[1]);
        let extra: Vec<String> = keys(&ours[1])
            .into_iter()
            .filter(|k| k != "fsbench" && !fio_keys.contains(k))
            .collect();
        assert!(
            extra.is_empty(),
            "fields fio 3.33 does not write for a job that never ran: {extra:?}"
        );
    }
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
