//! All 14 unit tests on tmpfs and on an ext4 loop mount.

use crate::util::*;

fn statuses(v: &serde_json::Value) -> Vec<(String, String)> {
    v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["status"]["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn timed_phase(t: &serde_json::Value) -> &serde_json::Value {
    t["reps"][0]["phases"].as_array().unwrap().iter().find(|p| p["timed"] == true).unwrap()
}

#[test]
fn unit14_on_tmpfs_flags_uncached_tests() {
    let Some(fs) = Tmpfs::mount("3G", false) else {
        skip("needs root to mount tmpfs");
        return;
    };
    let (v, o) = run_json(&["run", "--dir", fs.path().to_str().unwrap(), "--scale", "1/64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["target"]["fs_type"], "tmpfs");
    let st = statuses(&v);
    assert_eq!(st.len(), 14);
    // tmpfs cannot evict: uncached tests must say their precondition failed, never pass
    // silently: their status is `not_met`, they have no figure, and one note says why.
    let uncached = ["5", "6", "11", "13"];
    for (id, s) in &st {
        let want = if uncached.contains(&id.as_str()) { "not_met" } else { "ok" };
        assert_eq!(s, want, "test {id}: {st:?}");
    }
    for id in uncached {
        let t = test_by_id(&v, id);
        let c = &timed_phase(t)["cache"];
        assert_eq!(c["required"], "uncached");
        assert_eq!(c["met"], false, "test {id} on tmpfs: {c}");
        assert!(t["summary"].is_null(), "test {id}: no figure from a cached read");
        let w = t["warnings"].to_string();
        assert!(w.contains("precondition not met: phase"), "test {id}: {w}");
        assert_eq!(w.matches("precondition not met").count(), 1, "one note: {w}");
    }
    for id in ["4", "7", "9", "10", "12", "14"] {
        assert_eq!(timed_phase(test_by_id(&v, id))["cache"]["met"], true, "test {id}");
    }
    assert!(std::fs::read_dir(fs.path()).unwrap().next().is_none(), "nothing left on the tmpfs");
}

#[test]
fn unit14_on_ext4_loop_reads_uncached_data_from_the_device() {
    use fsbench::testbed::{FsConfig, Testbed, TestbedOptions};
    if !is_root() || !have("mkfs.ext4") || !std::path::Path::new("/dev/loop-control").exists() {
        skip("needs root, loop devices and mkfs.ext4 (e2fsprogs)");
        return;
    }
    let work = TestDir::new();
    let opts = TestbedOptions {
        workdir: work.path().to_path_buf(),
        size_bytes: 1 << 30,
        ..TestbedOptions::default()
    };
    let tb = Testbed::up(&FsConfig::parse("ext4").unwrap(), &opts).expect("ext4 testbed");
    let dir = tb.mountpoint().to_str().unwrap().to_string();
    let (v, o) = run_json(&["run", "--dir", &dir, "--scale", "1/64"]);
    let loopdev = tb.block_devices()[0].clone();
    // The cached read test 4 barely touches the device: judged on a run of it alone during which
    // nobody dropped the page cache (other tests of this suite do, and drop_caches is global; in
    // the full run above, tests 5 and 13 do it too).
    let mut cached = None;
    for _ in 0..5 {
        let drops = drop_pagecache_count();
        let (v4, o4) = run_json(&["run", "--dir", &dir, "--scale", "1/64", "--test", "4"]);
        assert!(o4.status.success(), "{}", stderr(&o4));
        if drop_pagecache_count() == drops {
            cached = Some(v4);
            break;
        }
    }
    tb.teardown().expect("testbed teardown");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["target"]["fs_type"], "ext4");
    assert_eq!(v["target"]["devices"][0], loopdev.as_str());
    let st = statuses(&v);
    assert_eq!(st.len(), 14);
    assert!(st.iter().all(|(_, s)| s == "ok"), "{st:?}");
    // Every cache precondition holds on ext4, cached and uncached.
    for t in v["tests"].as_array().unwrap() {
        for p in t["reps"][0]["phases"].as_array().unwrap() {
            assert_eq!(
                p["cache"]["met"], true,
                "test {} phase {}: {}",
                t["id"], p["name"], p["cache"]
            );
        }
    }
    // 5 and 13: nothing resident before the phase, and the data came from the device.
    for id in ["5", "13"] {
        let ph = timed_phase(test_by_id(&v, id));
        let resident = ph["cache"]["resident_fraction"].as_f64().unwrap();
        assert!(resident < 0.02, "test {id}: {resident}");
        let read = ph["bytes_read"].as_u64().unwrap();
        let dev_read = ph["device"]["read_bytes"].as_u64().unwrap();
        assert!(
            dev_read >= read * 9 / 10,
            "test {id}: device read {dev_read} for {read} bytes read"
        );
    }
    let v4 =
        cached.expect("5 runs of test 4, each with the page cache dropped by someone during it");
    let ph = timed_phase(test_by_id(&v4, "4"));
    assert!(ph["device"]["read_bytes"].as_u64().unwrap() < ph["bytes_read"].as_u64().unwrap() / 10);
    // Test 2's O_DSYNC writes reach the device inside the phase.
    let ph = timed_phase(test_by_id(&v, "2"));
    assert!(ph["device"]["write_bytes"].as_u64().unwrap() >= ph["bytes_written"].as_u64().unwrap());
}

/// Writes to /proc/sys/vm/drop_caches so far, by anyone (`drop_pagecache` in /proc/vmstat).
fn drop_pagecache_count() -> u64 {
    let text = std::fs::read_to_string("/proc/vmstat").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("drop_pagecache "))
        .and_then(|n| n.trim().parse().ok())
        .expect("drop_pagecache in /proc/vmstat")
}

/// On zfs (with a property set, as the user ran it) the bonnie block test's
/// uncached read meets its precondition in 3 of 3 repetitions (it was 0 of 3, status `ok`,
/// because fsbench's own work directory kept `zpool export` from running).
#[test]
fn zfs_meets_the_uncached_read_in_every_repetition() {
    if skip_testbeds(&["zfs-fuse", "zpool", "zfs"]) {
        return;
    }
    let _zfs = zfs_serial();
    let work = TestDir::new();
    let (v, o) = run_json(&[
        "run",
        "--fs",
        "zfs:compression=on",
        "--suite",
        "bonnie",
        "--test",
        "block",
        "--scale",
        "quick",
        "--repeat",
        "3",
        "--no-store",
        "--workdir",
        work.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = &v["tests"][0];
    assert_eq!(t["status"]["state"], "ok", "{}", t["status"]);
    let reps = t["reps"].as_array().unwrap();
    assert_eq!(reps.len(), 3);
    for (i, r) in reps.iter().enumerate() {
        let read = r["phases"].as_array().unwrap().iter().find(|p| p["name"] == "read").unwrap();
        let c = &read["cache"];
        assert_eq!(c["required"], "uncached", "{c}");
        assert_eq!(c["met"], true, "repetition {i}: {c}");
        assert!(c["method"].as_str().unwrap().contains("zpool export"), "{c}");
        assert!(r.get("retried").is_none(), "met at the first attempt: {r}");
    }
    assert!(work.entries().is_empty(), "{:?}", work.entries());
}

/// An unmet cache precondition, forced (tmpfs keeps file data only in
/// memory: unit14's uncached read, test 5, cannot be made uncached, and retrying does not help),
/// is marked in every output of the run and of the stored run (`show` as table, CSV, JSON,
/// HTML; `diff`, which does not compare it), with one note, and no figure comes from it.
#[test]
fn a_forced_unmet_precondition_is_marked_in_every_output() {
    let Some(fs) = Tmpfs::mount("1G", false) else {
        skip("needs root to mount tmpfs");
        return;
    };
    let dbdir = TestDir::new();
    let db = dbdir.path().join("results.sqlite");
    let run = |format: &str| {
        fsbench(&[
            "run",
            "--dir",
            fs.path().to_str().unwrap(),
            "--test",
            "5",
            "--scale",
            "1/64",
            "--repeat",
            "2",
            "--db",
            db.to_str().unwrap(),
            "--format",
            format,
        ])
    };
    let o = run("json");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &v["tests"][0];
    assert_eq!(t["status"]["state"], "not_met", "{}", t["status"]);
    assert!(t["summary"].is_null(), "no figure: {}", t["summary"]);
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("in 2 of 2 repetitions") && reason.contains("4 attempts retried"),
        "{reason}"
    );
    let o = run("table");
    let table = stdout(&o);
    assert!(table.contains("NOT MET"), "{table}");
    assert_eq!(table.matches("test 5: precondition not met").count(), 1, "one note: {table}");
    let show = |args: &[&str]| {
        let mut a = vec!["show"];
        a.extend_from_slice(args);
        a.extend(["--db", db.to_str().unwrap()]);
        let o = fsbench(&a);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let shown = show(&["1"]);
    assert!(shown.contains("NOT MET"), "{shown}");
    assert_eq!(shown.matches("test 5: precondition not met").count(), 1, "one note: {shown}");
    let csv = show(&["1", "--format", "csv"]);
    assert!(csv.lines().nth(1).is_some_and(|l| l.contains(",not_met,")), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&show(&["1", "--format", "json"])).unwrap();
    assert_eq!(json["tests"][0]["status"]["state"], "not_met", "{json}");
    let html = show(&["1", "--format", "html"]);
    assert!(html.contains("NOT MET"), "no mark in the HTML");
    let o = fsbench(&["diff", "1", "2", "--db", db.to_str().unwrap()]);
    let diff = stdout(&o);
    assert!(diff.contains("NOT MET"), "{diff}");
    assert!(diff.contains("not compared"), "{diff}");
    assert!(std::fs::read_dir(fs.path()).unwrap().next().is_none(), "nothing left on the tmpfs");
}
