//! Roles (`[[test.role]]`): threads with their own file and pattern beside a timed phase, and
//! the `starve` suite built on them.

use crate::util::*;
use std::path::Path;
use std::process::Command;

const ROLES: &str = r#"
[[test]]
id = "r"
name = "reader-beside-writer"
file = { size = "8M" }
[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K" }]
amount = { seconds = 1 }
[[test.role]]
name = "writer"
file = { size = "16M", prefill = false }
open = ["create"]
pattern = [{ op = "write", size = "64K", offset = "sequential" }]
sync = { every_bytes = "1M", call = "fsync" }
lead = 0.3
"#;

/// The role runs beside the timed phase and is reported apart: the phase's own figures are the
/// reader's (no byte written), the role's are the writer's (its writes and fsyncs); it stops
/// when the reader is done, and its files are removed.
#[test]
fn a_role_runs_beside_the_phase_and_is_reported_apart() {
    let dir = TestDir::new();
    let wl = dir.write("roles.toml", ROLES);
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let (v, o) = run_json(&[
        "run",
        "--dir",
        work.to_str().unwrap(),
        "--workload",
        wl.to_str().unwrap(),
        "--no-store",
        "--repeat",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = test_by_id(&v, "r");
    assert_eq!(t["complete_reps"], 2, "{t}");
    for rep in t["reps"].as_array().unwrap() {
        let phase = rep["phases"].as_array().unwrap().iter().find(|p| p["timed"] == true).unwrap();
        assert_eq!(phase["bytes_written"], 0, "the phase's figures are the reader's: {phase}");
        assert!(phase["bytes_read"].as_u64().unwrap() > 0);
        assert!(lat(phase, "write").is_none(), "{phase}");
        let roles = phase["roles"].as_array().unwrap();
        assert_eq!(roles.len(), 1);
        let w = &roles[0];
        assert_eq!((w["name"].as_str(), w["threads"].as_u64()), (Some("writer"), Some(1)));
        assert!(w["bytes_written"].as_u64().unwrap() >= 1 << 20, "{w}");
        assert_eq!(w["bytes_read"], 0);
        assert!(lat(w, "write").is_some() && lat(w, "fsync").is_some(), "{w}");
        // It ran for the lead plus the reader's time, and was stopped soon after the reader
        // (a wide bound: one fsync of at most 1 MiB may still be in flight on a loaded disk).
        let (role_s, phase_s) = (
            w["wall_nanos"].as_u64().unwrap() as f64 / 1e9,
            phase["wall_nanos"].as_u64().unwrap() as f64 / 1e9,
        );
        assert!(role_s >= phase_s, "role {role_s} s, phase {phase_s} s");
        assert!(role_s < phase_s + 20.0, "role {role_s} s, phase {phase_s} s: not stopped");
    }
    let left: Vec<_> = std::fs::read_dir(&work).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Bad role definitions are refused before anything runs, saying what to fix.
#[test]
fn bad_roles_are_refused_with_the_fix() {
    let dir = TestDir::new();
    for (bad, want) in [
        (ROLES.replace("name = \"writer\"", "name = \"a/b\""), "role's name"),
        (ROLES.replace("lead = 0.3", "lead = -1"), "lead = -1"),
        (ROLES.replace("[{ op = \"write\", size = \"64K\"", "[{ op = \"read\", size = \"64K\""), "prefill"),
        (format!("{ROLES}\n[[test.role]]\nname = \"writer\"\nfile = {{ size = \"1M\" }}\npattern = [{{ op = \"read\", size = \"4K\" }}]\n"), "two roles"),
    ] {
        let wl = dir.write("bad.toml", &bad);
        let o = fsbench(&["run", "--dir", dir.path().to_str().unwrap(), "--workload", wl.to_str().unwrap(), "--no-store"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{want}: {}", stderr(&o));
    }
}

/// `compare ext4:sched=A ext4:sched=B --suite starve` answers the study's question: the
/// reader's latency per scheduler beside the writer, and a verdict per test.
#[test]
fn starve_compares_io_schedulers() {
    if !is_root() {
        skip("needs root (loop devices, mkfs, mount)");
        return;
    }
    if !Path::new("/dev/loop-control").exists() || !have("mkfs.ext4") {
        skip("no loop devices or no mkfs.ext4");
        return;
    }
    // What the kernel offers for loop devices (any loop device shows the same list).
    let offered = std::fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("loop"))
        .find_map(|e| std::fs::read_to_string(e.path().join("queue/scheduler")).ok())
        .unwrap_or_default();
    let Some(other) = ["mq-deadline", "bfq", "kyber"].into_iter().find(|s| offered.contains(s))
    else {
        skip(&format!("loop devices offer only `{}`", offered.trim()));
        return;
    };
    let dir = TestDir::new();
    let (a, b) = ("ext4:sched=none".to_string(), format!("ext4:sched={other}"));
    let o = command()
        .args(["compare", &a, &b, "--suite", "starve", "--scale", "quick", "--repeat", "1"])
        .args(["--no-store", "--no-report", "--workdir", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let section = out
        .split("Latency of each test's own threads beside its roles")
        .nth(1)
        .unwrap_or_else(|| panic!("no latency section:\n{out}"));
    // Each test and configuration: a line, with its continuation lines when it wraps.
    let entries: Vec<String> = section.lines().fold(Vec::new(), |mut v, l| {
        match v.last_mut() {
            Some(e) if l.starts_with("    ") => e.push_str(&format!(" {}", l.trim())),
            _ => v.push(l.to_string()),
        }
        v
    });
    for test in ["rand4k", "whole"] {
        for label in [&a, &b] {
            let line = entries
                .iter()
                .find(|l| l.contains(test) && l.contains(label.as_str()))
                .unwrap_or_else(|| panic!("no line for {test} on {label}:\n{out}"));
            assert!(line.contains("read p50") && line.contains("p99 "), "{line}");
            assert!(line.contains("[writer:") && line.contains("fsync p99"), "{line}");
        }
    }
    // A verdict for each test (a single repetition: a win is marked untested, or a draw).
    let table = out.split("Latency of each").next().unwrap();
    for test in ["rand4k", "whole"] {
        // The row's line and the lines its wrapped cells go on to (their test cell blank).
        let mut lines = table.lines().skip_while(|l| !l.contains(&format!("│ {test} ")));
        let first = lines.next().unwrap();
        let rest = lines.take_while(|l| l.starts_with("│  ") && !l.starts_with("│ ─"));
        // The verdict is the last column: its pieces joined.
        let last = |l: &str| l.trim_end_matches('│').rsplit('┆').next().unwrap().trim().to_string();
        let verdict: Vec<String> = std::iter::once(first).chain(rest).map(last).collect();
        let verdict = verdict.join(" ");
        assert!(verdict.contains("X (untested)") || verdict.contains("draw"), "{first}\n{verdict}");
    }
    // The environment records the scheduler.
    assert!(out.contains(&format!("I/O scheduler {other}")), "{out}");
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let d = dir.path().to_str().unwrap();
    assert!(!String::from_utf8_lossy(&loops.stdout).contains(d), "loop devices left");
}
