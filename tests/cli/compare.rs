//! `fsbench compare` and `fsbench testbed`: head-to-head results, option sweeps, refusals, and
//! nothing left behind after success, bad options, Ctrl-C or kill -9.

use crate::util::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `testbed cleanup`/`down` remove the records of every fsbench process that has exited, which
/// includes a testbed another test brought up with `testbed up`: those tests take turns.
static CLEANUP_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cleanup_lock() -> std::sync::MutexGuard<'static, ()> {
    CLEANUP_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Loop devices whose backing file is under `dir`, and mounts under it.
fn leftovers(dir: &Path) -> Vec<String> {
    let d = dir.to_str().unwrap();
    let mut v = Vec::new();
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    for l in String::from_utf8_lossy(&loops.stdout).lines() {
        if l.contains(d) {
            v.push(format!("loop: {l}"));
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    for l in mounts.lines() {
        if l.contains(d) {
            v.push(format!("mount: {l}"));
        }
    }
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            v.push(format!("file: {}", e.path().display()));
        }
    }
    v
}

#[test]
fn compare_two_directories_without_root() {
    let a = TestDir::new();
    let b = TestDir::new();
    let (v, o) = run_json(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
        "--test",
        "10,14",
        "--scale",
        "1/64",
        "--repeat",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["configs"].as_array().unwrap().len(), 2);
    assert_eq!(v["configs"][0]["label"], a.path().to_str().unwrap());
    assert!(v["configs"][0]["env"].is_null(), "existing directories have no testbed env");
    let rows = v["tests"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert!(r["vs_baseline"][0].is_null());
        let outcome = r["vs_baseline"][1]["outcome"].as_str().unwrap();
        assert!(["win", "draw"].contains(&outcome), "{outcome}");
    }
    // Both sides ran each test twice, interleaved.
    for c in v["configs"].as_array().unwrap() {
        for t in c["run"]["tests"].as_array().unwrap() {
            assert_eq!(t["complete_reps"], 2);
        }
    }
    // Observed facts per configuration ride along with every row.
    for r in rows {
        let f = &r["facts"][1];
        assert!(f["cpu_pct_per_thread"].as_f64().unwrap() > 0.0, "{f}");
        assert!(f["extents"]["files"].as_u64().unwrap() >= 1, "{f}");
    }
    let lines = v["pairs"][0]["lines"].as_array().unwrap();
    assert!(lines[0].as_str().unwrap().starts_with("of 2 tests compared between"));
    assert!(a.entries().is_empty() && b.entries().is_empty());
    // Where the time went: the parts add up to the whole; both tests lay out their files.
    let t = &v["time"];
    let f = |k: &str| t[k].as_f64().unwrap_or_else(|| panic!("{k} in {t}"));
    assert!(f("total_s") > 0.0 && f("timed_s") > 0.0 && f("layout_s") > 0.0, "{t}");
    let kinds = ["timed_s", "layout_s", "cache_s", "sync_s", "cleanup_s", "min_time_s"];
    let more = ["testbed_s", "decision_s", "other_s"];
    let parts: f64 = kinds.iter().chain(&more).map(|k| f(k)).sum();
    assert!((parts - f("total_s")).abs() < 1e-6, "{parts} {t}");
    let ids: Vec<&str> =
        t["tests"].as_array().unwrap().iter().map(|x| x["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{t}");
    // Test 14 reads its file cached and test 10 rewrites its file: laid out every time.
    assert_eq!(t["reused_layouts"], 0, "{t}");
    for c in v["configs"].as_array().unwrap() {
        for id in ["10", "14"] {
            let reps = test_by_id(&c["run"], id)["reps"].as_array().unwrap().clone();
            assert!(reps.iter().all(|r| r["untimed"]["layout_nanos"].as_u64().unwrap() > 0));
            assert!(reps.iter().all(|r| r["untimed"].get("reused_layout").is_none()));
        }
    }
    // Test 13 only reads its file, uncached: laid out once per directory, reused by the second
    // round, its precondition made and verified as always.
    let (v, o) = run_json(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
        "--test",
        "13",
        "--scale",
        "1/64",
        "--repeat",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["time"]["reused_layouts"], 2, "{}", v["time"]);
    for c in v["configs"].as_array().unwrap() {
        let reps = test_by_id(&c["run"], "13")["reps"].as_array().unwrap().clone();
        let reused: Vec<bool> =
            reps.iter().map(|r| r["untimed"]["reused_layout"].as_bool().unwrap_or(false)).collect();
        assert_eq!(reused, [false, true]);
        assert!(reps[1]["untimed"]["cache_nanos"].as_u64().unwrap() > 0, "{}", reps[1]);
        assert_eq!(reps[1]["phases"][0]["cache"]["required"], "uncached");
        let cache = &reps[1]["phases"][0]["cache"];
        // As root the eviction holds; without root (no drop_caches) it may not, and says so.
        if is_root() {
            assert_eq!(cache["met"], true, "{cache}");
        }
    }
    assert!(a.entries().is_empty() && b.entries().is_empty(), "kept files removed at the end");

    let o = fsbench(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
        "--test",
        "14",
        "--scale",
        "1/64",
    ]);
    let out = stdout(&o);
    assert!(out.contains("winning FS / delta"), "{out}");
    assert!(out.contains("\nTime: ") && out.contains("in timed phases"), "{out}");
    let o = fsbench(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
        "--test",
        "14",
        "--scale",
        "1/64",
        "--details",
    ]);
    assert!(stdout(&o).contains("Details (median repetition"), "{}", stdout(&o));
    assert!(out.contains("outpaces"), "{out}");
}

#[test]
fn option_sweep_labels_and_effective_options() {
    if skip_testbeds(&["mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    let work = TestDir::new();
    let (v, o) = run_json(&[
        "compare",
        "ext4:mount=data=writeback,nobarrier",
        "ext4:mount=nodelalloc",
        "xfs",
        "--test",
        "10",
        "--scale",
        "1/64",
        "--workdir",
        work.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let labels: Vec<&str> =
        v["configs"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["ext4:mount=data=writeback,nobarrier", "ext4:mount=nodelalloc", "xfs"]);
    let opts = |i: usize| {
        let e = &v["configs"][i]["env"];
        format!("{} {}", e["mount_options"].as_str().unwrap(), e["super_options"].as_str().unwrap())
    };
    assert!(opts(0).contains("data=writeback"), "{}", opts(0));
    assert!(opts(1).contains("nodelalloc"), "{}", opts(1));
    assert_eq!(v["configs"][2]["env"]["fstype"], "xfs");
    // Three configurations: two pair summaries against the baseline.
    assert_eq!(v["pairs"].as_array().unwrap().len(), 2);
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

#[test]
fn unknown_filesystem_is_bad_input() {
    let o = fsbench(&["compare", "ext4", "fat99"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("fat99") && e.contains("xfs") && e.contains("zfs"), "{e}");
}

#[test]
fn invalid_mount_option_shows_the_tools_error_and_leaves_nothing() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let work = TestDir::new();
    let o = fsbench(&[
        "compare",
        "ext4",
        "ext4:mount=inode_readahead_blks=3",
        "--test",
        "10",
        "--scale",
        "1/64",
        "--workdir",
        work.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("mount") && e.contains("inode_readahead_blks=3"), "{e}");
    assert!(
        e.contains("bad option") || e.contains("wrong fs type") || e.contains("Invalid argument"),
        "the tool's own message: {e}"
    );
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

#[test]
fn invalid_mkfs_option_shows_the_tools_error() {
    if skip_testbeds(&["mkfs.xfs"]) {
        return;
    }
    let work = TestDir::new();
    let o = fsbench(&[
        "compare",
        "ext4",
        "xfs:mkfs=-b size=3",
        "--test",
        "10",
        "--workdir",
        work.path().to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("mkfs.xfs"), "{e}");
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

#[test]
fn not_root_says_what_needs_root() {
    if !is_root() || !have("runuser") {
        skip("needs root to switch to an unprivileged user with runuser");
        return;
    }
    // A copy of the binary that `nobody` can run wherever the checkout lies (a checkout in a
    // 0700 directory is not reachable for other users), started from `/`.
    // The copy's directory is made right under /var/tmp (mode 1777), not under TestDir's
    // /var/tmp/fsbench-tests, which a umask of 077 makes 0700 too.
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::Builder::new().prefix("fsbench-nobody-").tempdir_in("/var/tmp").unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = d.path().join("fsbench");
    std::fs::copy(bin(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(&exe)
        .args(["compare", "ext4", "xfs", "--test", "10"])
        .current_dir("/")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("needs root") && e.contains("fsbench compare /mnt/a /mnt/b"), "{e}");
}

const LONG: &str = "[[test]]\nid = \"long\"\nname = \"long\"\nfile = { size = \"8M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\", offset = \"random\" }]\namount = { seconds = 60 }\n";

/// Start a compare of ext4 and tmpfs on a long workload; wait until it is running its test.
fn start_long_compare(work: &Path, wl: &Path) -> std::process::Child {
    let child = command()
        .args(["compare", "ext4", "tmpfs", "--workload", wl.to_str().unwrap(), "--workdir"])
        .arg(work)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        let running = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter(|l| l.contains(work.to_str().unwrap()))
            .count()
            >= 2;
        if running || t.elapsed() > Duration::from_secs(30) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(800));
    child
}

#[test]
fn ctrl_c_mid_compare_leaves_nothing() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let work = TestDir::new();
    let d = TestDir::new();
    let wl = d.write("long.toml", LONG);
    let child = start_long_compare(work.path(), &wl);
    let sent = Instant::now();
    // SAFETY: signalling the child we spawned, by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "stopped and tore down in {:?}",
        sent.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stdout(&o).contains("comparison interrupted"), "{}", stdout(&o));
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

#[test]
fn kill_9_mid_compare_then_cleanup_removes_everything() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let _turn = cleanup_lock();
    let work = TestDir::new();
    let d = TestDir::new();
    let wl = d.write("long.toml", LONG);
    let mut child = start_long_compare(work.path(), &wl);
    child.kill().unwrap(); // SIGKILL, by pid
    child.wait().unwrap();
    assert!(!leftovers(work.path()).is_empty(), "a kill -9 leaves the testbeds");
    let o = fsbench(&["testbed", "cleanup"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("removed"), "{}", stdout(&o));
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

#[test]
fn testbed_up_stays_until_down() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let work = TestDir::new();
    let o = fsbench(&[
        "testbed",
        "up",
        "ext4",
        "--workdir",
        work.path().to_str().unwrap(),
        "--size",
        "300M",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o_up = o;
    // A failed assertion below must not leave the kept testbed mounted.
    let _down = DownOnPanic(name_of_kept(&stderr(&o_up)));
    let mnt = stdout(&o_up).trim().to_string();
    assert!(mnt.starts_with(work.path().to_str().unwrap()), "{mnt}");
    // Usable after fsbench exited.
    std::fs::write(Path::new(&mnt).join("x"), b"hello").unwrap();
    let (v, o) = run_json(&["run", "--dir", &mnt, "--test", "10", "--scale", "1/64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["target"]["fs_type"], "ext4");
    // `cleanup` never removes a kept testbed.
    let o = fsbench(&["testbed", "cleanup"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read(Path::new(&mnt).join("x")).unwrap(), b"hello");
    let name = name_of_kept(&stderr(&o_up));
    let o = fsbench(&["testbed", "down"]);
    assert!(stdout(&o).contains(&name), "listed: {}", stdout(&o));
    let o = fsbench(&["testbed", "down", "tb-no-such"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no kept testbed named"), "{}", stderr(&o));
    let o = fsbench(&["testbed", "down", &name]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

const SEQWRITE: &str = "[[test]]\nid = \"sw\"\nname = \"seqwrite-fsync\"\nfile = { size = \"32M\", prefill = false }\n[[test.phase]]\nname = \"w\"\nopen = [\"create\", \"trunc\"]\npattern = [{ op = \"write\", size = \"1M\" }]\namount = { passes = 1 }\nsync = { at_end = \"fsync\" }\n";

#[test]
fn trace_agrees_with_block_counters() {
    if skip_testbeds(&["mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    if !Path::new("/sys/kernel/tracing").exists()
        && !Path::new("/sys/kernel/debug/tracing").exists()
    {
        skip("no tracefs in this kernel");
        return;
    }
    let work = TestDir::new();
    let d = TestDir::new();
    let wl = d.write("sw.toml", SEQWRITE);
    let (v, o) = run_json(&[
        "compare",
        "ext4",
        "xfs",
        "--workload",
        wl.to_str().unwrap(),
        "--trace",
        "--repeat",
        "1",
        "--workdir",
        work.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for c in v["configs"].as_array().unwrap() {
        let t = &c["run"]["tests"][0];
        assert!(!t["warnings"].to_string().contains("tracing unavailable"), "{}", t["warnings"]);
        let ph = &t["reps"][0]["phases"][0];
        let (tr, dev) = (&ph["trace"], &ph["device"]);
        let n = |x: &serde_json::Value| x.as_u64().unwrap();
        assert_eq!(n(&tr["events_lost"]), 0);
        // Completed writes and bytes: the trace and /sys/block count the same requests (a
        // preflush may complete between the counter snapshot and the tracer's stop: slack 2).
        let (tw, dw) = (n(&tr["writes"]["requests_completed"]), n(&dev["writes_completed"]));
        assert!(tw.abs_diff(dw) <= 2, "{}: trace {tw} vs /sys/block {dw} writes", c["label"]);
        let (tb, db) = (n(&tr["writes"]["requests_completed_bytes"]), n(&dev["write_bytes"]));
        assert!(tb.abs_diff(db) <= 2 << 20, "{}: trace {tb} vs /sys/block {db} bytes", c["label"]);
        // At least the 32 MiB written were queued as bios, and merged into fewer, larger requests.
        assert!(n(&tr["writes"]["bios_queued_bytes"]) >= 32 << 20);
        assert!(
            n(&tr["writes"]["requests_issued"]) < n(&tr["writes"]["bios_queued"])
                || n(&tr["writes"]["bios_queued"]) <= 64
        );
        assert!(!tr["request_sizes_write"].as_array().unwrap().is_empty());
    }
    // The facts the explanations cite carry the trace and where the time went, per side; a
    // gap with reasons ("Why") ends with them.
    let row = &v["tests"][0];
    for f in row["facts"].as_array().unwrap() {
        assert!(f["trace"]["writes"]["bios"].as_u64().unwrap() > 0, "{f}");
        assert!(f["trace"]["max_queue_depth"].as_u64().unwrap() > 0, "{f}");
        let t = &f["time"];
        assert!(t["thread_nanos"].as_u64().unwrap() > 0, "{f}");
        assert!(t["data_nanos"].as_u64().unwrap() + t["sync_nanos"].as_u64().unwrap() > 0, "{f}");
    }
    let why = row["why"][1].as_array().unwrap();
    if !why.is_empty() {
        let rules: Vec<&str> = why.iter().map(|e| e["rule"].as_str().unwrap()).collect();
        assert!(rules.ends_with(&["time_split", "block_trace"]), "{rules:?}");
    }
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
    let inst: Vec<_> = std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("fsbench-"))
                // Left behind = its process (fsbench-PID-N) has ended; other tests' fsbench
                // processes trace at the same time.
                .filter(|n| {
                    let pid = n.split('-').nth(1).unwrap_or("");
                    !std::path::Path::new("/proc").join(pid).exists()
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(inst.is_empty(), "{inst:?}");
}

/// `--offcpu` alone: each configuration's timed phase says what its thread waited for while off
/// CPU (sleeps paired with wake-ups, reasons from the stacks), in the phase's trace, the facts
/// and the HTML report, without a block trace; no tracing instance is left.
#[test]
fn offcpu_names_what_the_threads_waited_for() {
    if skip_testbeds(&["mkfs.ext4", "mkfs.xfs"]) {
        return;
    }
    if !Path::new("/sys/kernel/tracing/events/sched/sched_switch").exists() {
        skip("no sched:sched_switch tracepoint in this kernel");
        return;
    }
    let work = TestDir::new();
    let d = TestDir::new();
    let wl = d.write("sw.toml", SEQWRITE);
    let report = d.path().join("offcpu.html");
    let (v, o) = run_json(&[
        "compare",
        "ext4",
        "xfs",
        "--workload",
        wl.to_str().unwrap(),
        "--offcpu",
        "--repeat",
        "1",
        "--workdir",
        work.path().to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let known = [
        "throttled in balance_dirty_pages",
        "waiting on the journal",
        "fsync/sync waiting",
        "waiting for writeback",
        "waiting for direct I/O",
        "waiting for a read",
        "lock",
        "waiting for a CPU",
        "other",
    ];
    for c in v["configs"].as_array().unwrap() {
        let t = &c["run"]["tests"][0];
        assert!(!t["warnings"].to_string().contains("unavailable"), "{}", t["warnings"]);
        let tr = &t["reps"][0]["phases"][0]["trace"];
        // No block trace was asked for: only the off-CPU account.
        assert!(tr["devices"].as_array().unwrap().is_empty(), "{tr}");
        let off = &tr["offcpu"];
        let n = |x: &serde_json::Value| x.as_u64().unwrap();
        // 32 MiB written and fsynced: the thread sleeps at least once (the fsync).
        assert!(n(&off["switches"]) > 0 && n(&off["total_nanos"]) > 0, "{off}");
        let reasons = off["reasons"].as_array().unwrap();
        let sum: u64 = reasons.iter().map(|r| n(&r["nanos"])).sum();
        assert_eq!(sum, n(&off["total_nanos"]), "{off}");
        for r in reasons {
            assert!(known.contains(&r["reason"].as_str().unwrap()), "{r}");
        }
        // The fsync inside the phase waits for the device: a sync, journal or writeback wait.
        let waits: u64 = reasons
            .iter()
            .filter(|r| {
                ["waiting on the journal", "fsync/sync waiting", "waiting for writeback"]
                    .contains(&r["reason"].as_str().unwrap())
            })
            .map(|r| n(&r["nanos"]))
            .sum();
        assert!(waits > 0, "{}: {off}", c["label"]);
    }
    let row = &v["tests"][0];
    for f in row["facts"].as_array().unwrap() {
        assert!(f["offcpu"]["total_nanos"].as_u64().unwrap() > 0, "{f}");
        assert!(f["trace"].is_null(), "{f}");
    }
    let why = row["why"][1].as_array().unwrap();
    if !why.is_empty() {
        let rules: Vec<&str> = why.iter().map(|e| e["rule"].as_str().unwrap()).collect();
        assert!(rules.contains(&"offcpu_reasons"), "{rules:?}");
    }
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("Off CPU: what the threads waited for"));
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

#[test]
fn aging_fill_series_is_in_json_and_report() {
    if !is_root() {
        skip("needs root (tmpfs testbeds)");
        return;
    }
    let work = TestDir::new();
    let d = TestDir::new();
    let report = d.path().join("fill.html");
    let (v, o) = run_json(&[
        "compare",
        "tmpfs",
        "tmpfs:label=tmpfs-2",
        "--suite",
        "images",
        "--scale",
        "quick",
        "--size",
        "64M",
        "--workdir",
        work.path().to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let phases = &v["configs"][0]["run"]["tests"][0]["reps"][0]["phases"];
    let fill = phases.as_array().unwrap().iter().find(|p| p["name"] == "fill").unwrap();
    let series = fill["fill_series"].as_array().unwrap();
    assert!(series.len() >= 8, "a point per 10% of fill: {series:?}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("Phase <b>fill</b>: throughput over each 10% step of filesystem fill"));
    assert!(leftovers(work.path()).is_empty(), "{:?}", leftovers(work.path()));
}

#[test]
fn without_a_terminal_each_repetition_of_a_compare_is_a_line() {
    // One test, two rounds: round 2 starts with the configuration round 1 ended with, so the
    // same test on the same directory runs twice in a row; each is a line of its own.
    let a = TestDir::new();
    let b = TestDir::new();
    let o = fsbench(&[
        "compare",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
        "--test",
        "10",
        "--scale",
        "1/64",
        "--repeat",
        "2",
        "--no-store",
        "--no-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    let lines: Vec<&str> = e.lines().filter(|l| l.starts_with("fsbench: [")).collect();
    assert_eq!(lines.len(), 4, "{e}");
    for (i, l) in lines.iter().enumerate() {
        assert!(l.starts_with(&format!("fsbench: [{}/4] ", i + 1)), "{e}");
    }
}

/// The container-storage question, "overlay on xfs, or plain xfs?", at a small scale: the
/// unit14 suite (a cached write, the uncached reads 5 and 13) and the metadata suite run on
/// both; the overlay was in effect (its environment says overlay, with the layers in its
/// superblock options, over xfs on the testbed's image); an uncached phase on the overlay met
/// its precondition (the engine's `mincore` check); and nothing is left (mounts, loop devices,
/// images).
#[test]
fn overlay_on_xfs_against_xfs_runs_unit14_and_metadata_and_leaves_nothing() {
    if skip_testbeds(&["mkfs.xfs"]) {
        return;
    }
    let work = TestDir::new();
    let dir = work.path().to_str().unwrap();
    for (suite, tests) in [("unit14", "1,5,13"), ("metadata", "tree")] {
        let (v, o) = run_json(&[
            "compare",
            "xfs",
            "overlay:on=xfs",
            "--suite",
            suite,
            "--test",
            tests,
            "--scale",
            "1/16",
            "--repeat",
            "2",
            "--workdir",
            dir,
        ]);
        assert!(o.status.success(), "{suite}: {}", stderr(&o));
        let (plain, over) = (&v["configs"][0]["env"], &v["configs"][1]["env"]);
        assert_eq!(plain["fstype"], "xfs");
        assert_eq!((&over["kind"], &over["fstype"]), (&"overlay".into(), &"overlay".into()));
        assert_eq!(over["config"], "overlay:on=xfs");
        let layers = over["super_options"].as_str().unwrap();
        for l in ["lowerdir=", "upperdir=", "workdir="] {
            assert!(layers.contains(l), "{suite}: {l} not in {layers}");
        }
        let backing = over["backing"].as_str().unwrap();
        assert!(backing.contains(") on xfs at ") && backing.contains("image(s)"), "{backing}");
        assert!(over["mkfs_cmdline"].as_str().unwrap().starts_with("mkfs.xfs"), "{over}");
        assert!(over["block_devices"][0].as_str().unwrap().starts_with("loop"), "{over}");
        let n = tests.split(',').count();
        assert_eq!(v["tests"].as_array().unwrap().len(), n, "{suite}");
        for c in v["configs"].as_array().unwrap() {
            let ts = c["run"]["tests"].as_array().unwrap();
            assert_eq!(ts.len(), n, "{suite}");
            for t in ts {
                assert_eq!(t["status"]["state"], "ok", "{suite} {}: {}", c["label"], t["status"]);
                assert_eq!(t["complete_reps"], 2, "{suite} {}", c["label"]);
            }
        }
        if suite == "unit14" {
            // 5 and 13 read uncached: on the overlay, eviction worked like xfs's and the engine
            // saw (mincore) nothing of the file resident when the phase began.
            for id in ["5", "13"] {
                let t = v["configs"][1]["run"]["tests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["id"] == id)
                    .unwrap();
                for rep in t["reps"].as_array().unwrap() {
                    let ph = rep["phases"].as_array().unwrap().iter().find(|p| p["timed"] == true);
                    let c = &ph.unwrap()["cache"];
                    assert_eq!(c["required"], "uncached", "test {id}: {c}");
                    assert_eq!(c["met"], true, "test {id} on overlay: {c}");
                    assert!(c["resident_fraction"].as_f64().unwrap() < 0.02, "test {id}: {c}");
                }
            }
        }
        assert!(leftovers(work.path()).is_empty(), "{suite}: {:?}", leftovers(work.path()));
    }
}
