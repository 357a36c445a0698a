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
    assert!(st.iter().all(|(_, s)| s == "ok"), "{st:?}");
    // tmpfs cannot evict: uncached tests must say their precondition failed, never pass silently.
    for id in ["5", "6", "11", "13"] {
        let t = test_by_id(&v, id);
        let c = &timed_phase(t)["cache"];
        assert_eq!(c["required"], "uncached");
        assert_eq!(c["met"], false, "test {id} on tmpfs: {c}");
        let w = t["warnings"].to_string();
        assert!(w.contains("this is not an uncached figure"), "test {id}: {w}");
    }
    for id in ["4", "7", "9", "10", "12", "14"] {
        assert_eq!(timed_phase(test_by_id(&v, id))["cache"]["met"], true, "test {id}");
    }
    assert!(std::fs::read_dir(fs.path()).unwrap().next().is_none(), "nothing left on the tmpfs");
}
