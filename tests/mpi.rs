//! Multi-client runs under `mpirun` (cargo feature `mpi`; `make test` runs these with it).
//! Each test skips with the reason when fsbench was built without MPI or mpirun is missing.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fsbench"))
}

fn skip_reason() -> Option<&'static str> {
    if !cfg!(feature = "mpi") {
        return Some("fsbench built without --features mpi (make test runs these with it)");
    }
    let ok = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return Some("mpirun not found (scripts/install-deps.sh mpi installs Open MPI)");
    }
    None
}

macro_rules! need_mpi {
    () => {
        if let Some(r) = skip_reason() {
            eprintln!("skipped: {r}");
            return;
        }
    };
}

struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Scratch {
        std::fs::create_dir_all("/var/tmp/fsbench-tests").unwrap();
        Scratch(tempfile::tempdir_in("/var/tmp/fsbench-tests").unwrap())
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
    /// This test's own state directory (`FSBENCH_STATE_DIR`).
    fn state(&self) -> std::path::PathBuf {
        self.path().join("state")
    }
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".fsbench-"))
            .collect()
    }
}

fn mpirun(np: u32, args: &[&str]) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-np", &np.to_string()]);
    c.arg(bin()).arg("run").arg("--mpi").arg("--no-store").args(args);
    c
}

/// `compare --mpi` of directories, without the store.
fn mpirun_compare(np: u32, args: &[&str]) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-np", &np.to_string()]);
    c.arg(bin()).args(["compare", "--mpi", "--no-store"]).args(args);
    c
}

fn workload(dir: &Path, body: &str) -> String {
    let p = dir.join("w.toml");
    std::fs::write(&p, format!("[suite]\nname = \"mpi\"\ndescription = \"mpi tests\"\n{body}"))
        .unwrap();
    p.to_string_lossy().into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}; stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&o.stdout), err(o))
    })
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const WRITE: &str = r#"
[[test]]
id = "w"
name = "write"
description = "two threads write one 8 MiB file per rank"
threads = 2
file = { size = "8M", prefill = false }
[[test.phase]]
name = "write"
open = ["create", "trunc"]
pattern = [{ op = "write", size = "1M", offset = "sequential" }]
amount = { passes = 1 }
sync = { at_end = "fsync" }
"#;

#[test]
fn totals_are_the_sum_of_ranks_over_first_start_to_last_end() {
    need_mpi!();
    let d = Scratch::new();
    let w = workload(d.path(), WRITE);
    let dir = d.path().to_str().unwrap();
    let o = mpirun(4, &["--dir", dir, "--workload", &w, "--format", "json", "--repeat", "2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let r = json(&o);
    assert_eq!(r["cluster"]["ranks"], 4);
    assert_eq!(r["cluster"]["rank_info"].as_array().unwrap().len(), 4);
    // The measured offsets are right: ranks on this one host share CLOCK_MONOTONIC, so on the
    // common clock they read it alike (Open MPI's MPI_Wtime has a per-process origin, so
    // without the offsets they would differ by the ranks' start-up times).
    // Each offset is within ± its uncertainty, so two ranks agree within the sum of theirs
    // (plus the two clock reads, which are not simultaneous).
    let check = r["cluster"]["clock_check_same_host_s"].as_f64().unwrap();
    let unc = r["cluster"]["clock_uncertainty_s"].as_f64().unwrap();
    assert!(check <= 2.0 * unc + 0.001, "ranks disagree by {check} s (offsets ± {unc} s)");
    let t = &r["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{t}");
    assert_eq!(t["threads"], 8);
    for rep in t["reps"].as_array().unwrap() {
        let c = &rep["cluster"];
        let ranks = c["per_rank"].as_array().unwrap();
        assert_eq!(ranks.len(), 4);
        let sum: u64 = ranks.iter().map(|x| x["bytes"].as_u64().unwrap()).sum();
        assert_eq!(sum, rep["bytes"].as_u64().unwrap(), "sum of ranks = aggregate");
        assert_eq!(sum, 4 * (8 << 20), "every rank wrote its 8 MiB file");
        // The aggregate time is the last end minus the first start on the common clock.
        let w: Vec<&Value> = ranks.iter().map(|x| &x["windows"][0]).collect();
        let first = w.iter().map(|x| x["start_s"].as_f64().unwrap()).fold(f64::MAX, f64::min);
        let last = w.iter().map(|x| x["end_s"].as_f64().unwrap()).fold(f64::MIN, f64::max);
        let wall = rep["wall_nanos"].as_u64().unwrap() as f64;
        assert!(((last - first) * 1e9 - wall).abs() <= 1.0, "{} vs {wall}", (last - first) * 1e9);
        let mib = rep["mib_per_s"].as_f64().unwrap();
        assert!((mib - sum as f64 / 1048576.0 / (wall / 1e9)).abs() < 1e-6 * mib);
        // Each rank's own time (its monotonic clock) is its window on the common clock, up to
        // the conversion (two clocks read one after the other: microseconds), and fits in the
        // span.
        for x in ranks {
            let own = x["wall_nanos"].as_u64().unwrap() as f64;
            let w = &x["windows"][0];
            let on_common = (w["end_s"].as_f64().unwrap() - w["start_s"].as_f64().unwrap()) * 1e9;
            assert!(
                (own - on_common).abs() < 100e3,
                "rank {}: {own} ns vs {on_common} ns",
                x["rank"]
            );
            assert!(own <= wall + 100e3, "{own} > {wall}");
        }
        let s = &c["spread"];
        assert!(s["min"].as_f64().unwrap() <= s["median"].as_f64().unwrap());
        assert!(s["median"].as_f64().unwrap() <= s["max"].as_f64().unwrap());
        assert_eq!(c["per_host"].as_array().unwrap().len(), 1);
        let lat = rep["latency"].as_array().unwrap();
        let writes = lat.iter().find(|l| l["op"] == "write").unwrap();
        assert_eq!(writes["count"], 32, "histograms of all ranks merged");
    }
    assert!(d.leftovers().is_empty(), "{:?}", d.leftovers());
}

#[test]
fn stonewall_stops_every_rank() {
    need_mpi!();
    let d = Scratch::new();
    // Rewrites a 4 MiB file 100000 times: far longer than the stonewall.
    let w = workload(
        d.path(),
        r#"
[[test]]
id = "s"
name = "rewrite"
description = "rewrite a small file for a long time"
threads = 1
file = { size = "4M", prefill = false }
[[test.phase]]
name = "write"
open = ["create"]
pattern = [{ op = "write", size = "64K", offset = "sequential" }]
amount = { passes = 100000 }
"#,
    );
    let t0 = Instant::now();
    let o = mpirun(
        4,
        &[
            "--dir",
            d.path().to_str().unwrap(),
            "--workload",
            &w,
            "--format",
            "json",
            "--stonewall",
            "1",
        ],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert!(t0.elapsed() < Duration::from_secs(120), "{:?}", t0.elapsed());
    let r = json(&o);
    let t = &r["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{t}");
    let rep = &t["reps"][0];
    let c = &rep["cluster"];
    assert_eq!(c["stonewalled"], true);
    assert_eq!(rep["phases"][0]["ended_by"], "stonewall");
    let ranks = c["per_rank"].as_array().unwrap();
    let min = ranks.iter().map(|x| x["bytes"].as_u64().unwrap()).min().unwrap();
    assert!(min > 0);
    for x in ranks {
        let w = &x["windows"][0];
        let secs = w["end_s"].as_f64().unwrap() - w["start_s"].as_f64().unwrap();
        // Stopped at the next 64 KiB write 1 s after the phase's common start (which comes
        // before the workers' buffer set-up, so a window can be a little shorter), far before
        // the 100000 passes.
        assert!(secs > 0.3 && secs < 30.0, "rank {} ran {secs} s", x["rank"]);
        assert!(x["bytes"].as_u64().unwrap() < 100000 * (4 << 20));
    }
    assert_eq!(rep["bytes"].as_u64().unwrap(), 4 * min, "the figure counts the common work");
    assert!(c["total_bytes"].as_u64().unwrap() >= rep["bytes"].as_u64().unwrap());
    assert!(t["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "stonewalled"
            && w["message"].as_str().unwrap().starts_with("stonewalled")));
    assert!(d.leftovers().is_empty(), "{:?}", d.leftovers());
}

/// Start a long run of 4 ranks; return mpirun, its stderr lines, and the ranks' pids.
fn start_long_run(
    d: &Scratch,
) -> (std::process::Child, std::sync::mpsc::Receiver<String>, Vec<String>, Vec<String>) {
    let w = workload(
        d.path(),
        r#"
[[test]]
id = "k"
name = "rewrite"
description = "rewrite a small file for a long time"
threads = 2
file = { size = "4M", prefill = true }
[[test.phase]]
name = "write"
open = ["create"]
pattern = [{ op = "write", size = "64K", offset = "sequential" }]
amount = { passes = 1000000 }
"#,
    );
    let mut child = mpirun(4, &["--dir", d.path().to_str().unwrap(), "--workload", &w])
        // The ranks' state records go to this test's own directory (a killed rank leaves its
        // record there, and `testbed cleanup` in the same directory removes what it names).
        .env("FSBENCH_STATE_DIR", d.state())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // "fsbench: rank R of 4 on HOST (pid N) runs in ..."
    let mut seen = Vec::new();
    let mut pids = vec![String::new(); 4];
    let deadline = Instant::now() + Duration::from_secs(60);
    while pids.iter().any(|p| p.is_empty()) && Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            if let Some(rest) = l.strip_prefix("fsbench: rank ") {
                let r: usize = rest.split(' ').next().unwrap().parse().unwrap();
                let pid = rest.split("(pid ").nth(1).and_then(|s| s.split(')').next()).unwrap();
                pids[r] = pid.to_string();
            }
            seen.push(l);
        }
    }
    if pids.iter().any(|p| p.is_empty()) {
        let _ = child.kill();
        panic!("not every rank announced itself: {seen:?}");
    }
    (child, rx, pids, seen)
}

fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            panic!("the run did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn ctrl_c_under_mpirun_stops_every_rank_and_removes_their_files() {
    need_mpi!();
    let d = Scratch::new();
    let (mut child, _rx, _pids, _seen) = start_long_run(&d);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(d.leftovers().len(), 4, "each rank has its work directory: {:?}", d.leftovers());
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    assert!(!status.success());
    assert!(d.leftovers().is_empty(), "left behind: {:?}", d.leftovers());
}

#[test]
fn a_killed_rank_fails_the_run_in_bounded_time_and_is_named() {
    need_mpi!();
    let d = Scratch::new();
    let (mut child, rx, pids, mut seen) = start_long_run(&d);
    let pid = pids[2].clone();
    std::thread::sleep(Duration::from_secs(2));
    let killed = Instant::now();
    assert!(Command::new("kill").args(["-9", &pid]).status().unwrap().success());
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    assert!(killed.elapsed() < Duration::from_secs(60));
    while let Ok(l) = rx.recv_timeout(Duration::from_secs(2)) {
        seen.push(l);
    }
    assert!(!status.success());
    let all = seen.join("\n");
    assert!(all.contains("rank 2"), "{all}");
    assert!(all.contains("Killed") || all.contains("signal 9"), "{all}");
    // The killed rank could not remove its work directory; its record names it, and
    // `testbed cleanup` removes it.
    let o = Command::new(bin())
        .args(["testbed", "cleanup"])
        .env("FSBENCH_STATE_DIR", d.state())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.leftovers().is_empty(), "left behind after cleanup: {:?}", d.leftovers());
}

#[test]
fn a_shared_file_with_disjoint_offsets_is_written_exactly_once() {
    need_mpi!();
    let d = Scratch::new();
    // 4 ranks × 2 threads share one file of 4 × 8 MiB, each thread writing its own region in
    // 64 KiB writes, then reading it back.
    let w = workload(
        d.path(),
        r#"
[[test]]
id = "sh"
name = "shared"
description = "one file for all ranks, disjoint regions"
threads = 2
file = { size = "8M", prefill = false, shared = true }
[[test.phase]]
name = "write"
open = ["create"]
pattern = [{ op = "write", size = "64K", offset = "sequential" }]
amount = { passes = 1 }
sync = { at_end = "fsync" }
[[test.phase]]
name = "read"
cache = "any"
pattern = [{ op = "read", size = "64K", offset = "sequential" }]
amount = { passes = 1 }
"#,
    );
    let dir = d.path().to_str().unwrap();
    let o = mpirun(
        4,
        &["--mpi-shared", "--dir", dir, "--workload", &w, "--format", "json", "--verify"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let r = json(&o);
    assert_eq!(r["cluster"]["mode"], "shared");
    let t = &r["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{t}");
    let rep = &t["reps"][0];
    let size = 4 * (8u64 << 20);
    let write = &rep["phases"][0];
    let read = &rep["phases"][1];
    // Writes total exactly the file's size ...
    assert_eq!(write["bytes_written"].as_u64().unwrap(), size);
    for x in rep["cluster"]["per_rank"].as_array().unwrap() {
        assert_eq!(
            x["bytes"].as_u64().unwrap(),
            2 * (8 << 20),
            "rank {} wrote and read its share",
            x["rank"]
        );
    }
    // ... and the file, read back with FIEMAP after the run (rank 0, after every rank's last
    // phase), is one file whose every byte is allocated, none beyond: no region was left out,
    // so none was written twice.
    let e = &rep["extents"];
    assert_eq!(e["files"], 1, "{e}");
    assert_eq!(e["mapped_bytes"].as_u64().unwrap(), size, "{e}");
    // Reading every region back found the data (a hole or a short file would end it early).
    assert_eq!(read["bytes_read"].as_u64().unwrap(), size);
    // --verify read the whole file back once (rank 0, after every rank's last phase): every
    // 4 KiB block holds what its writer wrote for that offset, none was left unwritten.
    let verified: Vec<&Value> =
        t["warnings"].as_array().unwrap().iter().filter(|w| w["kind"] == "verified").collect();
    assert_eq!(verified.len(), 1, "{}", t["warnings"]);
    assert_eq!(verified[0]["blocks_intact"].as_u64().unwrap(), size / 4096, "{}", verified[0]);
    assert_eq!(verified[0]["blocks_unwritten"], 0, "{}", verified[0]);
    assert!(d.leftovers().is_empty(), "{:?}", d.leftovers());
}

#[test]
fn compare_mpi_runs_every_directory_from_every_rank_and_reduces_each() {
    need_mpi!();
    let d = Scratch::new();
    let w = workload(d.path(), WRITE);
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let html = d.path().join("r.html");
    let args = ["--workload", &w, "--format", "json", "--repeat", "2", "--report"];
    let o = mpirun_compare(4, &[&[a, b][..], &args[..], &[html.to_str().unwrap()]].concat())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let r = json(&o);
    let configs = r["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    for (c, label) in configs.iter().zip([a, b]) {
        assert_eq!(c["label"], label);
        let run = &c["run"];
        assert_eq!(run["cluster"]["ranks"], 4);
        let t = &run["tests"][0];
        assert_eq!(t["status"]["state"], "ok", "{t}");
        assert_eq!(t["reps"].as_array().unwrap().len(), 2);
        for rep in t["reps"].as_array().unwrap() {
            let ranks = rep["cluster"]["per_rank"].as_array().unwrap();
            assert_eq!(ranks.len(), 4);
            let sum: u64 = ranks.iter().map(|x| x["bytes"].as_u64().unwrap()).sum();
            assert_eq!(sum, rep["bytes"].as_u64().unwrap(), "sum of ranks = aggregate");
            assert_eq!(sum, 4 * (8 << 20));
            // Each rank's windows are this directory's, one for the timed phase, and the
            // aggregate time spans them.
            let first = ranks
                .iter()
                .map(|x| x["windows"][0]["start_s"].as_f64().unwrap())
                .fold(f64::MAX, f64::min);
            let last = ranks
                .iter()
                .map(|x| x["windows"][0]["end_s"].as_f64().unwrap())
                .fold(f64::MIN, f64::max);
            assert!(ranks.iter().all(|x| x["windows"].as_array().unwrap().len() == 1));
            let wall = rep["wall_nanos"].as_u64().unwrap() as f64;
            assert!(((last - first) * 1e9 - wall).abs() <= 1.0, "{} vs {wall}", last - first);
        }
    }
    // The comparison itself: one line per test with both medians.
    assert_eq!(r["tests"].as_array().unwrap().len(), 1, "{}", r["tests"]);
    // The HTML report (rank 0 only) has the per-rank bars and the per-host table.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Clients (MPI)") && page.contains("4 ranks on 1 host(s)"));
    for rank in 0..4 {
        assert_eq!(page.matches(&format!("rank {rank} (")).count(), 2, "a bar per directory");
    }
    assert!(page.contains("<th>host</th>"));
    for dir in [a, b] {
        let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
        assert!(left.is_empty(), "{dir}: {left:?}");
    }
}

#[test]
fn compare_mpi_takes_directories_only() {
    need_mpi!();
    let d = Scratch::new();
    let w = workload(d.path(), WRITE);
    let o =
        mpirun_compare(2, &[d.path().to_str().unwrap(), "ext4", "--workload", &w, "--no-report"])
            .output()
            .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("`ext4` is not a directory"), "{}", err(&o));
}

#[test]
fn a_shared_fileset_is_one_directory_holding_every_ranks_own_files() {
    need_mpi!();
    let d = Scratch::new();
    // 4 ranks × 2 threads, 100 files each rank (400 in the shared set), made before the phase;
    // the stat phase runs until the stonewall, while this test looks at the directory.
    let w = workload(
        d.path(),
        r#"
[[test]]
id = "md"
name = "shared-md"
description = "one fileset for all ranks"
threads = 2
fileset = { count = 100, flat = true, size = "0", prefill = true }
[[test.phase]]
name = "stat"
pattern = [{ op = "stat", pick = "next" }]
amount = { passes = 1000000 }
"#,
    );
    let dir = d.path().to_str().unwrap();
    let child = mpirun(
        4,
        &["--mpi-shared", "--dir", dir, "--workload", &w, "--format", "json", "--stonewall", "5"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // One work directory (rank 0's), one set in it, with f0..f399: every rank's files, under
    // names no other rank used.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut seen = None;
    while Instant::now() < deadline && seen.is_none() {
        std::thread::sleep(Duration::from_millis(100));
        let ws = d.leftovers();
        if ws.len() != 1 {
            continue;
        }
        let set = d.path().join(&ws[0]).join("tmd.rep0.set");
        let Ok(rd) = std::fs::read_dir(&set) else { continue };
        let mut names: Vec<String> = rd
            .map_while(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if names.len() >= 400 {
            names.sort();
            seen = Some((ws, names));
        }
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let (ws, names) = seen.expect("the shared set never held 400 files");
    assert_eq!(ws.len(), 1, "one work directory for all ranks: {ws:?}");
    let mut want: Vec<String> = (0..400).map(|i| format!("f{i}")).collect();
    want.sort();
    assert_eq!(names, want, "each slot once, no other names");
    let r = json(&o);
    assert_eq!(r["cluster"]["mode"], "shared");
    let t = &r["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{t}");
    let rep = &t["reps"][0];
    let ranks = rep["cluster"]["per_rank"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    assert!(ranks.iter().all(|x| x["ops"].as_u64().unwrap() > 0), "every rank worked: {ranks:?}");
    assert!(d.leftovers().is_empty(), "{:?}", d.leftovers());
}

/// A small tmpfs (root only), unmounted on drop.
struct SmallFs(Scratch);

impl SmallFs {
    fn mount(size: &str) -> Option<SmallFs> {
        if !rustix::process::geteuid().is_root() {
            return None;
        }
        let d = Scratch::new();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(d.path())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallFs(d))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_rank_that_runs_out_of_space_fails_the_run_on_every_rank_with_rank_and_host() {
    need_mpi!();
    let Some(fs) = SmallFs::mount("10m") else {
        eprintln!("skipped: needs root to mount a small tmpfs");
        return;
    };
    // 4 ranks × 4 MiB on 10 MiB: at most two ranks fit.
    let w = workload(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        r#"
[[test]]
id = "full"
name = "enospc"
description = "more than fits"
threads = 1
file = { size = "4M", prefill = false }
[[test.phase]]
name = "write"
open = ["create", "trunc"]
pattern = [{ op = "write", size = "64K", offset = "sequential" }]
amount = { passes = 1 }
[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "64K", offset = "sequential" }]
amount = { passes = 1 }
"#,
    );
    let t0 = Instant::now();
    let o =
        mpirun(4, &["--dir", fs.0.path().to_str().unwrap(), "--workload", &w, "--format", "json"])
            .output()
            .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(120));
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let r = json(&o);
    let t = &r["tests"][0];
    assert_eq!(t["status"]["state"], "failed", "{t}");
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(reason.contains("rank ") && reason.contains("(host "), "{reason}");
    assert!(reason.contains("No space left on device"), "{reason}");
    // Every rank stopped after the write phase: the read phase ran nowhere.
    assert_eq!(t["reps"][0]["phases"].as_array().unwrap().len(), 1, "{t}");
    assert!(fs.0.leftovers().is_empty(), "{:?}", fs.0.leftovers());
}

#[test]
fn a_stored_multi_client_run_keeps_its_clients_for_a_later_report() {
    need_mpi!();
    let d = Scratch::new();
    let w = workload(d.path(), WRITE);
    let dir = d.path().join("w");
    std::fs::create_dir(&dir).unwrap();
    let db = d.path().join("results.sqlite");
    let (dir, db) = (dir.to_str().unwrap(), db.to_str().unwrap());
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-np", "2"]);
    c.arg(bin()).args(["run", "--mpi", "--db", db, "--dir", dir, "--workload", &w]);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", err(&o));
    // The report made later from the database has the per-rank bars and the per-host table.
    let html = d.path().join("later.html");
    let o = Command::new(bin())
        .args(["report", "1", "--db", db, "-o", html.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Clients (MPI)") && page.contains("2 ranks on 1 host(s)"), "no panel");
    for rank in 0..2 {
        assert!(page.contains(&format!("rank {rank} (")), "no bar of rank {rank}");
    }
    assert!(page.contains("<th>host</th>"));
}
