//! `fsbench suite list|show`.

use crate::util::*;

#[test]
fn list_names_unit14() {
    let o = fsbench(&["suite", "list"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("unit14") && out.contains("14 tests"), "{out}");
}

#[test]
fn show_prints_runnable_toml() {
    let o = fsbench(&["suite", "show", "unit14"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("[[test]]"));
    // What `show` prints runs as a workload file, unchanged, with the same tests.
    let d = TestDir::new();
    let f = d.write("copy.toml", &text);
    let run_dir = TestDir::new();
    let (v, o) = run_json(&[
        "run",
        "--dir",
        run_dir.path().to_str().unwrap(),
        "--workload",
        f.to_str().unwrap(),
        "--test",
        "10",
        "--scale",
        "1/64",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["tests"][0]["id"], "10");
}

#[test]
fn show_unknown_suite_fails() {
    let o = fsbench(&["suite", "show", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("known suites: unit14"));
}
