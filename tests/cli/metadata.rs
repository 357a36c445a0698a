//! Fileset (metadata) tests: every metadata suite does what its definition says, counted from the
//! JSON latency histograms; the system calls of a durable replace and of a mail delivery, from
//! strace; fill phases stop at their target and record the series; ENOSPC outside a fill phase
//! is a clean failure that says how far the run got; Ctrl-C in a large run stops within a
//! second and removes everything.

use crate::util::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Count of `op` in a phase (0 when absent).
fn n(phase: &serde_json::Value, op: &str) -> u64 {
    lat(phase, op).map(|l| u(&l["count"])).unwrap_or(0)
}

fn phase<'a>(test: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    test["reps"][0]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

fn run_suite(dir: &std::path::Path, suite: &str, scale: &str) -> serde_json::Value {
    let (v, o) =
        run_json(&["run", "--dir", dir.to_str().unwrap(), "--suite", suite, "--scale", scale]);
    assert!(o.status.success(), "{suite}: {}", stderr(&o));
    for t in v["tests"].as_array().unwrap() {
        assert_eq!(t["status"]["state"], "ok", "{suite} {}: {}", t["id"], t["status"]);
    }
    v
}

#[test]
fn metadata_suite_counts() {
    let d = TestDir::new();
    // 1/200: the tree keeps its 1,000 leaves with 1 file each; flat: 1,000 files (the floor).
    let v = run_suite(d.path(), "metadata", "1/200");
    for id in ["tree", "flat"] {
        let t = test_by_id(&v, id);
        assert_eq!(n(phase(t, "create"), "create"), 1000, "{id}");
        assert_eq!(n(phase(t, "stat"), "stat"), 1000, "{id}");
        let read = phase(t, "read");
        assert_eq!(n(read, "readwhole"), 1000, "{id}");
        assert_eq!(u(&read["bytes_read"]), 1000 * 4096, "{id}: every file read once");
        assert_eq!(n(phase(t, "delete"), "unlink"), 1000, "{id}");
        assert_eq!(n(phase(t, "delete"), "syncfs"), 1, "{id}");
        assert_eq!(u(&t["reps"][0]["file_ops"]), 4000, "{id}");
    }
    let tree = phase(test_by_id(&v, "tree"), "create");
    assert_eq!(n(tree, "mkdir"), 1110, "10 + 100 + 1000 directories made on the way");
    assert_eq!(n(phase(test_by_id(&v, "flat"), "create"), "mkdir"), 0);
    assert!(d.entries().is_empty(), "removed: {:?}", d.entries());
}

#[test]
fn postmark_mail_rm_untar_rmtree_counts() {
    let d = TestDir::new();
    let v = run_suite(d.path(), "postmark", "quick");
    let t = test_by_id(&v, "postmark");
    assert_eq!(n(phase(t, "create"), "create"), 500);
    let tr = phase(t, "transactions");
    assert_eq!(u(&tr["file_ops"]) + u(&tr["skipped_ops"]), 1000, "500 transactions of 2 ops");
    assert_eq!(n(tr, "readwhole") + n(tr, "append"), 500, "the pool is never empty");
    assert_eq!(n(tr, "create") + n(tr, "unlink") + u(&tr["skipped_ops"]), 500);
    let left = 500 + n(tr, "create") - n(tr, "unlink");
    assert_eq!(n(phase(t, "delete"), "unlink"), left, "delete removes what is left");

    let v = run_suite(d.path(), "mail", "1/16");
    let m = phase(test_by_id(&v, "mail"), "mail");
    assert_eq!(u(&m["file_ops"]) + u(&m["skipped_ops"]), 16 * 500);
    assert_eq!(n(m, "fsync"), n(m, "create") + n(m, "append"), "create and append fsync");
    assert!(n(m, "readwhole") >= 2 * 16 * 100 - u(&m["skipped_ops"]));

    let v = run_suite(d.path(), "rm65536", "1/64");
    let rm = phase(test_by_id(&v, "rm65536"), "rm");
    assert_eq!(n(rm, "unlink"), 1024);
    assert_eq!(n(rm, "syncfs"), 1, "sync inside the timing");

    let v = run_suite(d.path(), "untar", "1/64");
    let un = phase(test_by_id(&v, "untar"), "untar");
    assert_eq!(n(un, "create"), 4096, "one file in each of the 4,096 leaves");
    assert_eq!(n(un, "mkdir"), 16 + 256 + 4096);
    assert_eq!(n(un, "syncfs"), 1);

    let v = run_suite(d.path(), "rmtree", "1/64");
    let t = test_by_id(&v, "rmtree");
    assert_eq!(n(phase(t, "unlink"), "unlink"), 4096);
    assert_eq!(n(phase(t, "rmdir"), "rmdir"), 16 + 256 + 4096);
    assert_eq!(u(&phase(t, "rmdir")["skipped_ops"]), 0, "every directory was there");
    assert_eq!(n(phase(t, "rmdir"), "syncfs"), 1);
    assert!(d.entries().is_empty(), "removed: {:?}", d.entries());
}

#[test]
fn bonnie_suite_counts_and_table() {
    let d = TestDir::new();
    let v = run_suite(d.path(), "bonnie", "1/64");
    // bonnie++ 2.00a's Per Chr: 3 MiB one byte per call at every scale, fsync at the end.
    let c = test_by_id(&v, "char");
    assert_eq!(n(phase(c, "putc"), "write"), 3 << 20);
    assert_eq!(n(phase(c, "putc"), "fsync"), 1);
    assert_eq!(n(phase(c, "getc"), "read"), 3 << 20);
    let b = test_by_id(&v, "block");
    let chunks = (16u64 << 20) / 8192; // 1G / 64 in 8K chunks
    assert_eq!(n(phase(b, "write"), "write"), chunks);
    assert_eq!(n(phase(b, "write"), "fsync"), 1);
    assert_eq!(n(phase(b, "rewrite"), "read"), chunks);
    assert_eq!(n(phase(b, "rewrite"), "write"), chunks);
    assert_eq!(n(phase(b, "rewrite"), "fsync"), 1);
    assert_eq!(n(phase(b, "read"), "read"), chunks);
    for p in ["rewrite", "read"] {
        assert_eq!(phase(b, p)["cache"]["required"], "uncached", "{p}");
    }
    // Seeks: bonnie++'s 5 seeker threads, 8,192 seeks (here 8,195), a tenth written back, each
    // seeker's fsync at its end.
    let k = test_by_id(&v, "seeks");
    assert_eq!(phase(k, "seeks")["threads"], 5);
    assert_eq!(n(phase(k, "seeks"), "read"), 8195);
    assert_eq!(n(phase(k, "seeks"), "write"), 815);
    assert_eq!(n(phase(k, "seeks"), "fsync"), 5);
    for id in ["files-seq", "files-rand"] {
        let t = test_by_id(&v, id);
        for (p, op) in [("create", "create"), ("stat", "stat"), ("delete", "unlink")] {
            assert_eq!(n(phase(t, p), op), 1000, "{id} {p}");
        }
        assert_eq!(n(phase(t, "create"), "syncfs"), 1, "{id}");
        assert_eq!(n(phase(t, "delete"), "syncfs"), 1, "{id}");
    }
    // --min-time does not change bonnie's work: one pass of every phase, the same counts (it
    // ran 2-4 passes of the block file, and counted every pass's files, before).
    let (v, o) = run_json(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--suite",
        "bonnie",
        "--scale",
        "1/64",
        "--test",
        "block,files-seq",
        "--min-time",
        "3s",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = test_by_id(&v, "block");
    for p in ["write", "rewrite", "read"] {
        assert_eq!(phase(b, p)["passes"], 1, "block {p}");
    }
    assert_eq!(n(phase(b, "write"), "write"), chunks);
    assert_eq!(u(&phase(b, "write")["bytes_written"]), 16 << 20);
    let f = test_by_id(&v, "files-seq");
    assert_eq!(phase(f, "create")["passes"], 1);
    assert_eq!(u(&phase(f, "create")["files_created"]), 1000);
    let o = fsbench(&[
        "run",
        "--dir",
        d.path().to_str().unwrap(),
        "--suite",
        "bonnie",
        "--scale",
        "1/64",
        "--test",
        "files-seq",
        "--format",
        "bonnie",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("------Sequential Create------"), "{out}");
    assert!(out.contains("-Create-- --Read--- -Delete--"), "{out}");
    // The row (named by the machine, as bonnie++ does) after the header: files in units of 1024.
    let lines: Vec<&str> = out.lines().collect();
    let head = lines.iter().position(|l| l.contains("files  /sec %CP")).expect("file table");
    assert_eq!(lines[head + 1].split_whitespace().nth(1), Some("1"), "files column: {out}");
}

/// Parse `strace -f` output into (syscall, args) per line.
fn calls(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            // "1234  openat(3, "f1", ...) = 4": drop the pid, keep name and the rest.
            let l = l.trim_start();
            let l = match l.split_once(' ') {
                Some((pid, rest)) if pid.chars().all(|c| c.is_ascii_digit()) => rest.trim_start(),
                _ => l,
            };
            let (name, rest) = l.split_once('(')?;
            Some((name.to_string(), rest.to_string()))
        })
        .collect()
}

#[test]
fn strace_shows_durable_replace_and_mail_delivery() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let w = d.write(
        "replace.toml",
        "[[test]]\nid = \"r\"\nname = \"replace\"\nfileset = { count = 3, flat = true, size = \"10K\", prefill = true, write_size = \"4K\" }\n[[test.phase]]\nname = \"replace\"\npattern = [{ op = \"replace\", fsync_dir = true }]\namount = { passes = 1 }\n\n[[test]]\nid = \"m\"\nname = \"deliver\"\nfileset = { count = 2, flat = true, size = \"5K\", write_size = \"4K\" }\n[[test.phase]]\nname = \"deliver\"\npattern = [{ op = \"create\", fsync = true, fsync_dir = true }]\namount = { passes = 1 }\n",
    );
    let run_dir = TestDir::new();
    let log = d.path().join("strace.log");
    let st = isolate(&mut Command::new("strace"))
        .args(["-f", "-qq", "-o", log.to_str().unwrap(), "-e", "trace=%file,write,fsync,close"])
        .arg(bin())
        .args(["run", "--dir", run_dir.path().to_str().unwrap(), "--workload", w.to_str().unwrap()])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&log).unwrap();
    let c = calls(&text);
    // Durable replace of f1: open f1.tmp (create, trunc), write 10K in 4K chunks, fsync, close,
    // rename over f1, then fsync the directory.
    let open_tmp = c
        .iter()
        .position(|(n, a)| n == "openat" && a.contains("\"f1.tmp\"") && a.contains("O_TRUNC"))
        .unwrap_or_else(|| panic!("no open of f1.tmp:\n{text}"));
    let seq: Vec<&str> = c[open_tmp..].iter().take(8).map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        seq,
        ["openat", "write", "write", "write", "fsync", "close", "renameat", "openat"],
        "{text}"
    );
    assert!(c[open_tmp + 6].1.contains("\"f1.tmp\"") && c[open_tmp + 6].1.contains("\"f1\""));
    assert!(c[open_tmp + 7].1.contains("O_DIRECTORY"), "then the directory: {:?}", c[open_tmp + 7]);
    assert_eq!(c[open_tmp + 8].0, "fsync");
    // Mail delivery of f0: open O_CREAT|O_EXCL, write 5K (4K + 1K), fsync, close, fsync dir.
    let create = c
        .iter()
        .rposition(|(n, a)| n == "openat" && a.contains("\"f0\"") && a.contains("O_EXCL"))
        .unwrap_or_else(|| panic!("no exclusive create of f0:\n{text}"));
    let seq: Vec<&str> = c[create..].iter().take(7).map(|(n, _)| n.as_str()).collect();
    assert_eq!(seq, ["openat", "write", "write", "fsync", "close", "openat", "fsync"], "{text}");
    assert!(c[create + 1].1.ends_with("4096) = 4096") && c[create + 2].1.ends_with("1024) = 1024"));
}

#[test]
fn fill_stops_at_target_and_records_the_series() {
    let Some(fs) = Tmpfs::mount("64M", false) else {
        skip("needs root to mount a small tmpfs");
        return;
    };
    let (v, o) = run_json(&[
        "run",
        "--dir",
        fs.path().to_str().unwrap(),
        "--suite",
        "images",
        "--scale",
        "1/100",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = test_by_id(&v, "images");
    assert_eq!(t["status"]["state"], "ok");
    let fill = phase(t, "fill");
    assert_eq!(fill["ended_by"], "fill target reached");
    let end = fill["fill_range"][1].as_f64().unwrap();
    assert!((0.9..0.95).contains(&end), "stops at the target: {end}");
    let series = fill["fill_series"].as_array().unwrap();
    let marks: Vec<f64> = series.iter().map(|p| p["fill"].as_f64().unwrap()).collect();
    assert_eq!(&marks[..9], &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], "{marks:?}");
    assert!(series
        .iter()
        .all(|p| p["mib_per_s"].as_f64().unwrap() >= 0.0 && p["files_per_s"].is_number()));
    let written: u64 = series.iter().map(|p| u(&p["bytes_written"])).sum();
    assert!(written <= u(&fill["bytes_written"]));
    // Purge removes a random fifth of the slots' files; refill goes back to 90%.
    let created = u(&fill["files_created"]);
    let purged = n(phase(t, "purge"), "unlink");
    let share = purged as f64 / created as f64;
    assert!((0.15..0.25).contains(&share), "purged {purged} of {created}");
    let refill = phase(t, "refill");
    assert!(refill["fill_series"].is_array());
    assert!(refill["fill_range"][1].as_f64().unwrap() >= 0.9);
    let left: Vec<_> = std::fs::read_dir(fs.path()).unwrap().collect();
    assert!(left.is_empty(), "files cleaned up");
}

#[test]
fn enospc_outside_fill_fails_cleanly_with_progress() {
    let Some(fs) = Tmpfs::mount("4M", false) else {
        skip("needs root to mount a small tmpfs");
        return;
    };
    let d = TestDir::new();
    // ops amount: no up-front space check, so ENOSPC comes during the run.
    let w = d.write(
        "full.toml",
        "[[test]]\nid = \"full\"\nname = \"full\"\nfileset = { count = 5000, flat = true, size = \"4K\" }\n[[test.phase]]\nname = \"create\"\npattern = [{ op = \"create\" }]\namount = { ops = 5000 }\n\n[[test]]\nid = \"big\"\nname = \"too-big\"\nfileset = { count = 5000, flat = true, size = \"4K\" }\n[[test.phase]]\nname = \"create\"\npattern = [{ op = \"create\" }]\namount = { passes = 1 }\n",
    );
    let (v, o) = run_json(&[
        "run",
        "--dir",
        fs.path().to_str().unwrap(),
        "--workload",
        w.to_str().unwrap(),
        "--no-space-check",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let full = test_by_id(&v, "full");
    assert_eq!(full["status"]["state"], "failed");
    let reason = full["status"]["reason"].as_str().unwrap();
    assert!(reason.contains("No space left on device"), "{reason}");
    assert!(
        reason.contains("files created") && reason.contains("create (write f"),
        "how far: {reason}"
    );
    assert!(full["reps"][0]["phases"][0]["files_created"].as_u64().unwrap() > 100);
    // A set that cannot fit when it is created whole: refused before any file is made.
    let big = test_by_id(&v, "big");
    let reason = big["status"]["reason"].as_str().unwrap();
    assert!(reason.contains("nothing was created") && reason.contains("available"), "{reason}");
    assert!(big["reps"].as_array().unwrap().is_empty());
    let left: Vec<_> = std::fs::read_dir(fs.path()).unwrap().collect();
    assert!(left.is_empty(), "files cleaned up");
}

#[test]
fn ctrl_c_in_a_large_run_stops_within_a_second_and_removes_everything() {
    let tmpfs = Tmpfs::mount("4G", false);
    let fallback = TestDir::new();
    let dir = tmpfs.as_ref().map(|t| t.path()).unwrap_or(fallback.path());
    let d = TestDir::new();
    let w = d.write(
        "million.toml",
        "[[test]]\nid = \"m\"\nname = \"million\"\nfileset = { tree = { depth = 2, fanout = 100, files_per_dir = 200 }, size = 0 }\n[[test.phase]]\nname = \"create\"\npattern = [{ op = \"create\" }]\namount = { passes = 1 }\n",
    );
    let mut child = isolate(&mut Command::new(bin()))
        .args(["run", "--dir", dir.to_str().unwrap(), "--workload", w.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read stderr on a thread, stamping each line.
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, String)>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send((Instant::now(), line));
        }
    });
    // Interrupt once the run has made more than 1000 files (a fixed sleep is too short on a
    // loaded machine), or after a minute at most.
    fn count(p: &Path, cap: usize, n: &mut usize) {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        for e in rd.flatten() {
            if *n > cap {
                return;
            }
            *n += 1;
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                count(&e.path(), cap, n);
            }
        }
    }
    let waited = Instant::now();
    while waited.elapsed() < Duration::from_secs(60) {
        let mut n = 0;
        count(dir, 1200, &mut n);
        if n > 1200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let sent = Instant::now();
    // SAFETY: signalling the child we spawned, by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_within(&mut child, Duration::from_secs(600), "the run after Ctrl-C");
    let exited = sent.elapsed();
    reader.join().unwrap();
    let lines: Vec<(Instant, String)> = rx.try_iter().collect();
    let stop = lines
        .iter()
        .find(|(_, l)| l.contains("interrupted: stopped; removing"))
        .unwrap_or_else(|| panic!("no stop message: {lines:?}"));
    let took = stop.0 - sent;
    // About a millisecond when the machine is idle; the margin is for a loaded machine.
    assert!(took < Duration::from_secs(3), "workers stopped {took:?} after Ctrl-C");
    let removing: u64 = stop
        .1
        .split("removing ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(removing > 1000, "the run had made files: {removing}");
    assert!(exited < Duration::from_secs(30), "removal is bounded: {exited:?}");
    assert_eq!(status.code(), Some(130));
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(left.is_empty(), "everything removed: {left:?}");
}

#[test]
fn verify_checks_fileset_reads_and_reports_its_time_in_json_and_details() {
    let d = TestDir::new();
    let dir = d.path().to_str().unwrap();
    let args = ["run", "--dir", dir, "--suite", "postmark", "--scale", "quick", "--verify"];
    let (v, o) = run_json(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = test_by_id(&v, "postmark");
    assert_eq!(t["status"]["state"], "ok", "{}", t["status"]);
    let tx = phase(t, "transactions");
    assert!(n(tx, "readwhole") > 0);
    assert_eq!(u(&tx["verified_bytes"]), u(&tx["bytes_read"]), "every byte read is checked");
    assert!(u(&tx["verify_nanos"]) > 0);
    assert!(u(&phase(t, "create")["verify_nanos"]) > 0, "making verified data is timed apart");
    let w = t["warnings"].as_array().unwrap();
    assert!(w.iter().any(|w| w["kind"] == "verified_on_read"), "{w:?}");
    // `compare --details` shows the time per test and configuration.
    let (c1, c2) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&c1).unwrap();
    std::fs::create_dir(&c2).unwrap();
    let (c1s, c2s) = (c1.to_str().unwrap(), c2.to_str().unwrap());
    let o = fsbench(&[
        "compare",
        c1s,
        c2s,
        "--no-store",
        "--suite",
        "postmark",
        "--scale",
        "quick",
        "--verify",
        "--details",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(&format!("verify: postmark on {c1s}: ")), "{out}");
    std::fs::remove_dir(&c1).unwrap();
    std::fs::remove_dir(&c2).unwrap();
    // Without --verify: no such fields in the JSON.
    let (v, _) = run_json(&["run", "--dir", dir, "--suite", "postmark", "--scale", "quick"]);
    assert!(phase(test_by_id(&v, "postmark"), "transactions").get("verify_nanos").is_none());
    assert!(d.entries().is_empty(), "removed: {:?}", d.entries());
}
