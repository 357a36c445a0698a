//! `fsbench integrity`: the expected truths for file data, which are the test of the tool.
//!
//! - ext4 and xfs have no data checksums: a damaged data block reads back wrong, silently;
//! - btrfs and a zfs stripe checksum data: they return an error and cannot repair;
//! - a btrfs raid1 and a zfs mirror repair one damaged copy from the other (on read or by
//!   scrub), and detect, without repairing, damage to every copy;
//! - a zfs raidz1 rebuilds a damaged data block from parity, and damaged parity from data.

use crate::util::*;
use serde_json::Value;

const FAULTS: &str = "zero,bitflip,garbage,stale";
/// zfs-fuse cases take a few seconds each: the fault that leaves a block with a wrong checksum
/// and the one that leaves a valid-looking older block.
const ZFS_FAULTS: &str = "bitflip,stale";

/// Run `fsbench integrity CONFIGS` as JSON in its own work directory; `None` (with the reason
/// printed) when the machine cannot.
fn integrity(configs: &[&str], faults: &str, tools: &[(&str, &str)]) -> Option<Vec<Value>> {
    if !is_root() || !std::path::Path::new("/dev/loop-control").exists() {
        skip("needs root and loop devices");
        return None;
    }
    for (program, package) in tools {
        if !have(program) {
            skip(&format!("needs {program} (Debian package {package})"));
            return None;
        }
    }
    let _zfs = configs.iter().any(|c| c.starts_with("zfs")).then(zfs_serial);
    let work = TestDir::new();
    let mut args = vec!["integrity"];
    args.extend(configs);
    args.extend(["--seed", "3", "--faults", faults, "--workdir", work.path().to_str().unwrap()]);
    let (v, o) = run_json(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
    Some(v.as_array().unwrap().clone())
}

/// Outcome per (target, fault) of one configuration, checking every case's evidence first.
fn outcomes(m: &Value) -> Vec<(String, String, String)> {
    assert!(m["error"].is_null(), "{}: {}", m["config"], m["error"]);
    let cases = m["cases"].as_array().unwrap();
    cases
        .iter()
        .map(|c| {
            // The block was found by the scan, and where a tool names it, at the same place.
            assert!(!c["copies"].as_array().unwrap().is_empty(), "{c}");
            assert_ne!(c["locations_agree"], false, "scan and tools disagree: {c}");
            (
                c["target"].as_str().unwrap().to_string(),
                c["fault"].as_str().unwrap().to_string(),
                c["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn assert_all(m: &Value, target: &str, faults: &str, want: &str) {
    let o: Vec<_> = outcomes(m).into_iter().filter(|(t, _, _)| t == target).collect();
    let faults: Vec<&str> = faults.split(',').collect();
    let ran: Vec<&str> = o.iter().map(|(_, f, _)| f.as_str()).collect();
    assert_eq!(ran, faults, "{}: one case per fault", m["config"]);
    for (_, fault, outcome) in &o {
        assert_eq!(outcome, want, "{} {target}/{fault}", m["config"]);
    }
}

#[test]
fn ext4_and_xfs_return_damaged_data_silently() {
    let Some(v) = integrity(
        &["ext4", "xfs"],
        FAULTS,
        &[("mkfs.ext4", "e2fsprogs"), ("mkfs.xfs", "xfsprogs")],
    ) else {
        return;
    };
    for m in &v {
        assert_all(m, "data", FAULTS, "silent");
        for c in m["cases"].as_array().unwrap() {
            // FIEMAP's physical offset is where the scan found the block.
            assert_eq!(c["locations_agree"], true, "{c}");
            let first = &c["first_read"];
            assert_eq!(first["mismatches"].as_array().unwrap().len(), 1, "{c}");
            assert!(first["read_errors"].as_array().unwrap().is_empty());
            // The checker has nothing to say about file data.
            assert_eq!(c["check"]["errors_reported"], false, "{}", c["check"]);
        }
        let stale = m["cases"].as_array().unwrap().iter().find(|c| c["fault"] == "stale").unwrap();
        assert_eq!(stale["first_read"]["mismatches"][0]["found"]["found"], "other_generation");
    }
}

#[test]
fn btrfs_detects_and_raid1_repairs() {
    let Some(v) = integrity(
        &["btrfs", "btrfs:profile=raid1:devices=2"],
        FAULTS,
        &[("mkfs.btrfs", "btrfs-progs")],
    ) else {
        return;
    };
    assert_all(&v[0], "data", FAULTS, "detected");
    assert_all(&v[1], "data", FAULTS, "repaired");
    assert_all(&v[1], "data-all-copies", FAULTS, "detected");
    for c in v[0]["cases"].as_array().unwrap() {
        assert!(!c["first_read"]["read_errors"].as_array().unwrap().is_empty(), "EIO: {c}");
        assert_eq!(c["copies"].as_array().unwrap().len(), 1);
    }
    for c in v[1]["cases"].as_array().unwrap() {
        assert_eq!(c["copies"].as_array().unwrap().len(), 2, "raid1 keeps two copies: {c}");
    }
}

#[test]
fn zfs_stripe_detects_and_mirror_repairs() {
    let Some(v) = integrity(
        &["zfs", "zfs:layout=mirror:devices=2", "zfs:layout=raidz"],
        ZFS_FAULTS,
        &[("zfs-fuse", "zfs-fuse")],
    ) else {
        return;
    };
    assert_all(&v[0], "data", ZFS_FAULTS, "detected");
    assert_all(&v[1], "data", ZFS_FAULTS, "repaired");
    assert_all(&v[1], "data-all-copies", ZFS_FAULTS, "detected");
    // raidz1 rebuilds a damaged data block from parity, and a damaged parity block from data.
    assert_all(&v[2], "data", ZFS_FAULTS, "repaired");
    assert_all(&v[2], "parity", ZFS_FAULTS, "repaired");
    // Nothing is compressed by default: the block was found whole on the device.
    let props = v[0]["environment"]["zfs_properties"].to_string();
    assert!(props.contains(r#"["compression","off"]"#), "{props}");
    for c in v[1]["cases"].as_array().unwrap() {
        assert_eq!(c["copies"].as_array().unwrap().len(), 2, "a mirror keeps two copies: {c}");
        assert!(c["check"]["output"].as_str().unwrap().contains("zpool status"), "{c}");
    }
}

#[test]
fn bad_configurations_are_refused_before_anything_is_built() {
    for (args, want) in [
        (vec!["integrity", "tmpfs"], "no device"),
        (vec!["integrity", "ext4", "--faults", "melt"], "unknown fault"),
        (vec!["integrity", "nosuchfs"], "unknown filesystem"),
    ] {
        let o = fsbench(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    let o = fsbench(&["integrity", "--help"]);
    assert!(stdout(&o).contains("kernel's error paths"), "{}", stdout(&o));
}

#[test]
fn metadata_cases_run_only_when_asked_and_keep_the_machine_up() {
    let Some(v) = integrity(
        &["ext4", "btrfs"],
        "zero",
        &[("debugfs", "e2fsprogs"), ("mkfs.btrfs", "btrfs-progs")],
    ) else {
        return;
    };
    // Without --metadata, no metadata target.
    assert!(v[0]["cases"].as_array().unwrap().iter().all(|c| c["target"] == "data"));
    let Some(v) = integrity(
        &["ext4", "btrfs", "--metadata"],
        "zero",
        &[("debugfs", "e2fsprogs"), ("mkfs.btrfs", "btrfs-progs")],
    ) else {
        return;
    };
    let case = |m: &Value, t: &str| -> Value {
        m["cases"].as_array().unwrap().iter().find(|c| c["target"] == t).unwrap().clone()
    };
    // ext4 checksums its metadata (metadata_csum): a zeroed directory block is refused with
    // EBADMSG, and e2fsck reports it.
    let dir = case(&v[0], "directory");
    assert_eq!(dir["outcome"], "unavailable", "{dir}");
    assert_eq!(dir["first_read"]["lost"][0]["errno"], 74, "EBADMSG: {dir}");
    assert_eq!(dir["check"]["errors_reported"], true, "{dir}");
    assert!(dir["tool_location"]["output"].as_str().unwrap().contains("debugfs"), "{dir}");
    // btrfs keeps two copies of metadata on one device (DUP): with one copy zeroed, the data
    // stays correct and readable (repaired, or unaffected when the damaged copy was never read).
    let leaf = case(&v[1], "inode");
    assert_eq!(leaf["copies"].as_array().unwrap().len(), 2, "{leaf}");
    let o = leaf["outcome"].as_str().unwrap();
    assert!(o == "repaired" || o == "unaffected", "{leaf}");
    for m in &v {
        for c in m["cases"].as_array().unwrap() {
            assert_ne!(c["outcome"], "crash", "{c}");
        }
    }
}

#[test]
fn a_run_is_stored_and_history_show_and_report_give_its_matrix() {
    if !is_root() || !std::path::Path::new("/dev/loop-control").exists() {
        skip("needs root and loop devices");
        return;
    }
    let work = TestDir::new();
    let db = work.path().join("results.sqlite");
    let db = db.to_str().unwrap();
    let img = work.path().join("imgs");
    std::fs::create_dir(&img).unwrap();
    let o = fsbench(&[
        "integrity",
        "ext4",
        "--faults",
        "zero",
        "--seed",
        "5",
        "--workdir",
        img.to_str().unwrap(),
        "--db",
        db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let printed = stdout(&o);
    assert!(stderr(&o).contains("stored as run 1"), "{}", stderr(&o));

    let h = fsbench(&["history", "--db", db]);
    let h = stdout(&h);
    let line = h.lines().find(|l| l.contains("integrity")).unwrap_or_else(|| panic!("{h}"));
    assert!(line.contains("ext4") && line.contains("1/1") && line.contains(" ok"), "{h}");
    // The fault list is not in the scale column (an integrity run has no scale).
    assert!(line.contains("ext4 (faults: zero)"), "{h}");
    let cols: Vec<&str> = line.split_whitespace().collect();
    let head: Vec<&str> = h.lines().next().unwrap().split_whitespace().collect();
    // "started (UTC)" and the date are both two words: the columns line up.
    let scale = head.iter().position(|c| *c == "scale").unwrap();
    assert_eq!(cols[scale], "-", "{h}");

    // show: the same matrix as printed; JSON as `integrity --format json`; a CSV row per case.
    let t = fsbench(&["show", "1", "--db", db]);
    assert!(t.status.success(), "{}", stderr(&t));
    assert_eq!(stdout(&t), printed);
    let (v, _) = run_json(&["show", "1", "--db", db]);
    assert_eq!(v[0]["config"], "ext4");
    let c = &v[0]["cases"][0];
    assert_eq!((c["target"].as_str(), c["fault"].as_str()), (Some("data"), Some("zero")));
    assert_eq!(c["outcome"], "silent", "ext4 has no data checksums: {c}");
    assert!(c["damaged"][0]["offset_bytes"].as_u64().unwrap() > 0, "{c}");
    assert!(!c["tool_location"]["output"].as_str().unwrap().is_empty(), "tool output kept: {c}");
    let csv = stdout(&fsbench(&["show", "1", "--db", db, "--format", "csv"]));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows[1].starts_with("ext4,data,zero,silent,silent,"), "{csv}");
    let b = fsbench(&["show", "1", "--db", db, "--format", "bonnie"]);
    assert_eq!(b.status.code(), Some(2), "{}", stderr(&b));

    // report: the HTML matrix, the cell coloured and carrying its evidence.
    let html = work.path().join("r.html");
    let r = fsbench(&["report", "1", "--db", db, "-o", html.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("<tr><th>file data (one copy)</th><td class=\"o o-silent\""), "{html}");
    assert!(html.contains("title=\"data/zero: "), "{html}");
    assert!(html.contains("<details id=\"r0-c0-k0\">"), "{html}");
    // diff has nothing to compare in a matrix.
    let d = fsbench(&["diff", "1", "1", "--db", db]);
    assert_eq!(d.status.code(), Some(2), "{}", stderr(&d));
    assert!(stderr(&d).contains("integrity run"), "{}", stderr(&d));

    // --no-store leaves the database as it was.
    let o = fsbench(&[
        "integrity",
        "ext4",
        "--faults",
        "zero",
        "--workdir",
        img.to_str().unwrap(),
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("stored as run"), "{}", stderr(&o));
    let h = stdout(&fsbench(&["history", "--db", db]));
    assert_eq!(h.lines().filter(|l| l.contains("integrity")).count(), 1, "{h}");
    assert!(std::fs::read_dir(&img).unwrap().next().is_none(), "images left behind");
}

#[test]
fn zfs_metadata_blocks_are_located_with_zdb_and_one_ditto_copy_never_loses_data() {
    let Some(v) =
        integrity(&["zfs", "--metadata"], "zero", &[("zfs-fuse", "zfs-fuse"), ("zdb", "zfs-fuse")])
    else {
        return;
    };
    let cases = v[0]["cases"].as_array().unwrap();
    let targets: Vec<&str> = cases.iter().map(|c| c["target"].as_str().unwrap()).collect();
    assert_eq!(targets, ["data", "directory", "inode", "indirect"]);
    for c in cases.iter().filter(|c| c["target"] != "data") {
        // zdb named the block; its two DVAs (ditto copies, on the one device) hold the same
        // bytes, past the front labels; one of them was damaged.
        let out = c["tool_location"]["output"].as_str().unwrap();
        assert!(out.contains("zdb -e -p") && out.contains("copies hold the same"), "{c}");
        let copies = c["copies"].as_array().unwrap();
        assert_eq!(copies.len(), 2, "{c}");
        for cp in copies {
            assert!(cp["offset_bytes"].as_u64().unwrap() >= 4 << 20, "in the labels: {c}");
        }
        assert_eq!(c["damaged"].as_array().unwrap().len(), 1, "{c}");
        // zfs reads the other copy (and rewrites the bad one): the data set stays intact.
        // "unaffected" when the damaged copy was freed (rewritten elsewhere) before any read.
        let o = c["outcome"].as_str().unwrap();
        assert!(o == "repaired" || o == "unaffected", "{c}");
        assert_eq!(c["second_read"]["read_errors"].as_array().unwrap().len(), 0, "{c}");
        assert_eq!(c["second_read"]["mismatches"].as_array().unwrap().len(), 0, "{c}");
    }
}
