//! fio's file-operation engines (`filecreate`, `filestat`, `filedelete`, `dircreate`,
//! `dirstat`, `dirdelete`) through the real binary: under strace, fsbench (`run --fio`) makes
//! the calls fio 3.33 makes on the job's files, as many and on as many distinct names, the
//! untimed setup before the timed calls; and `fsbench fio --output-format=json` reports one
//! fake I/O per file in fio's direction, read by the code that reads fio 3.33's JSON. fio 3.33
//! has the three file engines; the directory engines (fio 3.37) are checked against the calls
//! fio's source makes.

use crate::fio::{fio_json, fio_view};
use crate::util::*;
use std::collections::{BTreeMap, BTreeSet};

/// Which calls are a test's timed op.
type Timed = fn(&Call) -> bool;

/// The calls the tests look at.
const TRACE: &str = "openat,newfstatat,statx,unlink,unlinkat,mkdir,mkdirat,rmdir";

/// One system call on a job's file (fio's `t0.0.3`, fsbench's `f3`), with the thread that
/// made it.
#[derive(Debug, Clone)]
struct Call {
    /// Thread id.
    tid: String,
    /// Whether the thread is the process's first (fio's setup, fsbench's cache checks and
    /// teardown); the others are the jobs' threads (fio) and the phases' workers (fsbench).
    main: bool,
    /// `openat`, `newfstatat`, ...
    name: String,
    /// The file's name (the path's last part).
    file: String,
    /// The arguments after the path, as strace prints them.
    args: String,
    /// It returned 0 or a descriptor.
    ok: bool,
}

/// Whether a path's last part names a job's file: fsbench's `fN`, or fio's `JOB.N.N`.
fn job_file(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(n) = name.strip_prefix('f') {
        return digits(n);
    }
    let parts: Vec<&str> = name.split('.').collect();
    matches!(parts[..], [job, a, b] if job.starts_with('t') && digits(a) && digits(b))
}

/// The calls of `job` on the job's files (fio's with `fio`), in the log's order, a call strace
/// split (`<unfinished ...>`, `<... resumed>`) joined again.
fn calls(job: &str, fio: bool) -> Vec<Call> {
    let text = strace_fio_job(job, fio, TRACE);
    let main = text.split_whitespace().next().unwrap_or("").to_string();
    let mut pending: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((tid, rest)) = line.split_once(char::is_whitespace) else { continue };
        let rest = rest.trim();
        let whole = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(tid.to_string(), head.to_string());
            continue;
        } else if rest.starts_with("<... ") {
            let Some(head) = pending.remove(tid) else { continue };
            let tail = rest.split_once("resumed>").map_or("", |(_, t)| t);
            format!("{head}{tail}")
        } else {
            rest.to_string()
        };
        let Some((name, args)) = whole.split_once('(') else { continue };
        let Some((_, after)) = args.split_once('"') else { continue };
        let Some((path, tail)) = after.split_once('"') else { continue };
        let file = path.rsplit('/').next().unwrap_or(path);
        if !job_file(file) || path.starts_with("/proc/") {
            continue;
        }
        let ret = tail.rsplit_once(" = ").map_or("", |(_, r)| r.trim());
        out.push(Call {
            tid: tid.to_string(),
            main: tid == main,
            name: name.to_string(),
            file: file.to_string(),
            args: tail.to_string(),
            ok: ret.parse::<i64>().is_ok_and(|r| r >= 0),
        });
    }
    out
}

/// An `openat` that creates (O_CREAT).
fn creates(c: &Call) -> bool {
    c.name == "openat" && c.args.contains("O_CREAT") && c.ok
}

/// Its flags (O_LARGEFILE left out: rustix passes it, and it means nothing on 64-bit Linux)
/// and mode.
fn open_flags(c: &Call) -> (BTreeSet<String>, String) {
    let mut parts = c.args.trim_start_matches(", ").split(", ");
    let flags = parts.next().unwrap_or("").split('|').filter(|f| *f != "O_LARGEFILE");
    let mode = parts.next().unwrap_or("").split(')').next().unwrap_or("").to_string();
    (flags.map(String::from).collect(), mode)
}

/// The distinct file names of `calls`; fails if one is named twice.
fn distinct(calls: &[&Call], what: &str) -> BTreeSet<String> {
    let names: BTreeSet<String> = calls.iter().map(|c| c.file.clone()).collect();
    assert_eq!(names.len(), calls.len(), "{what}: a file named twice: {calls:#?}");
    names
}

/// How many of `calls` each thread made, sorted.
fn per_thread(calls: &[&Call]) -> Vec<usize> {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for c in calls {
        *by.entry(&c.tid).or_default() += 1;
    }
    let mut n: Vec<usize> = by.into_values().collect();
    n.sort();
    n
}

fn can_trace(with_fio: bool) -> Option<bool> {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return None;
    }
    if with_fio && !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fsbench's calls checked alone");
        return Some(false);
    }
    Some(with_fio)
}

/// filecreate with nrfiles=20: each tool creates 20 distinct files, each with one
/// `open(O_CREAT|O_RDWR, 0600)` (no O_EXCL, no O_TRUNC), and creates nothing else.
#[test]
fn filecreate_makes_fios_creates() {
    let Some(fio) = can_trace(true) else { return };
    let job =
        "[global]\nioengine=filecreate\ncreate_on_open=1\nopenfiles=1\nfallocate=none\nfilesize=4k\nnrfiles=20\n[t0]\n";
    for tool in [false, true].into_iter().filter(|t| !*t || fio) {
        let all = calls(job, tool);
        let made: Vec<&Call> = all.iter().filter(|c| creates(c)).collect();
        let who = if tool { "fio" } else { "fsbench" };
        assert_eq!(made.len(), 20, "{who}: {all:#?}");
        distinct(&made, who);
        for c in &made {
            let (flags, mode) = open_flags(c);
            let want: BTreeSet<String> = ["O_RDWR", "O_CREAT"].map(String::from).into();
            assert_eq!((flags, mode.as_str()), (want, "0600"), "{who}: {c:?}");
        }
        let mkdirs = all.iter().filter(|c| c.name.starts_with("mkdir")).count();
        assert_eq!(mkdirs, 0, "{who}: {all:#?}");
    }
}

/// filestat with nrfiles=20: 20 files created in setup, then 20 timed stats of them (one
/// each, by a job's thread, not the setup's), in both tools; `stat_type=lstat` and `statx`
/// make those calls instead (`AT_SYMLINK_NOFOLLOW`, `statx(.., STATX_ALL)`). Two jobs of one
/// group: each job's thread stats its own 10 files, in both.
#[test]
fn filestat_stats_each_file_once_after_setup_as_fio() {
    let Some(fio) = can_trace(true) else { return };
    let base = "[global]\nioengine=filestat\nfilesize=4k\nthread\n";
    // (job lines, what, the timed call, the calls per timed thread)
    type Case = (&'static str, &'static str, Timed, Vec<usize>);
    let cases: [Case; 4] = [
        (
            "nrfiles=20\n[t0]\n",
            "stat",
            |c| c.name == "newfstatat" && c.args.ends_with(", 0) = 0"),
            vec![20],
        ),
        (
            "nrfiles=20\nstat_type=lstat\n[t0]\n",
            "lstat",
            |c| c.name == "newfstatat" && c.args.ends_with(", AT_SYMLINK_NOFOLLOW) = 0"),
            vec![20],
        ),
        (
            "nrfiles=20\nstat_type=statx\n[t0]\n",
            "statx",
            |c| c.name == "statx" && c.args.contains("STATX_ALL") && c.ok,
            vec![20],
        ),
        (
            "nrfiles=10\n[t0]\n[t1]\n",
            "stat, two jobs",
            |c| c.name == "newfstatat" && c.args.ends_with(", 0) = 0"),
            vec![10, 10],
        ),
    ];
    for (rest, what, timed, threads) in cases {
        let job = format!("{base}{rest}");
        for tool in [false, true].into_iter().filter(|t| !*t || fio) {
            let who = format!("{} {what}", if tool { "fio" } else { "fsbench" });
            let all = calls(&job, tool);
            let made: Vec<&Call> = all.iter().filter(|c| creates(c)).collect();
            let stats: Vec<&Call> = all.iter().filter(|c| !c.main && timed(c)).collect();
            assert_eq!(made.len(), 20, "{who}: {all:#?}");
            assert_eq!(distinct(&stats, &who), distinct(&made, &who), "{who}");
            assert_eq!(per_thread(&stats), threads, "{who}: {stats:#?}");
            let last_create = all.iter().rposition(creates).unwrap_or(0);
            let first_stat = all.iter().position(|c| !c.main && timed(c)).unwrap_or(0);
            assert!(last_create < first_stat, "{who}: setup before the timed stats: {all:#?}");
            // Nothing else on the files in the timed threads.
            let timed_tids: BTreeSet<&str> = stats.iter().map(|c| c.tid.as_str()).collect();
            let other: Vec<&Call> =
                all.iter().filter(|c| timed_tids.contains(c.tid.as_str()) && !timed(c)).collect();
            assert!(other.is_empty(), "{who}: {other:#?}");
        }
    }
}

/// filedelete with nrfiles=20: 20 files written in setup, then 20 timed unlinks of them, one
/// each, in both tools.
#[test]
fn filedelete_unlinks_each_file_once_as_fio() {
    let Some(fio) = can_trace(true) else { return };
    let job = "[global]\nioengine=filedelete\nfilesize=4k\nnrfiles=20\nunlink=0\n[t0]\n";
    for tool in [false, true].into_iter().filter(|t| !*t || fio) {
        let who = if tool { "fio" } else { "fsbench" };
        let all = calls(job, tool);
        let made: Vec<&Call> = all.iter().filter(|c| creates(c)).collect();
        let unlinked = |c: &Call| {
            !c.main
                && c.ok
                && (c.name == "unlink" || c.name == "unlinkat" && !c.args.contains("REMOVEDIR"))
        };
        let gone: Vec<&Call> = all.iter().filter(|c| unlinked(c)).collect();
        assert_eq!(made.len(), 20, "{who}: {all:#?}");
        assert_eq!(distinct(&gone, who), distinct(&made, who), "{who}");
        assert_eq!(per_thread(&gone), [20], "{who}");
        let last_create = all.iter().rposition(creates).unwrap_or(0);
        assert!(last_create < all.iter().position(unlinked).unwrap_or(0), "{who}: {all:#?}");
    }
}

/// The directory engines (fio 3.37's; fio 3.33 has none): dircreate makes 20 directories in
/// the timed threads with mode 0 (fio passes `S_IFDIR`, a type the kernel drops: mode 0 too); dirstat makes 20 in setup, then stats
/// each once; dirdelete makes 20 in setup, then removes each once (`rmdir`).
#[test]
fn directory_engines_make_fios_calls() {
    if can_trace(false).is_none() {
        return;
    }
    let mkdir = |c: &Call| c.name.starts_with("mkdir") && c.ok;
    let base = "[global]\nfilesize=4k\nnrfiles=20\n";
    let all = calls(&format!("{base}ioengine=dircreate\ncreate_on_open=1\n[t0]\n"), false);
    let made: Vec<&Call> = all.iter().filter(|c| mkdir(c)).collect();
    assert_eq!(made.len(), 20, "{all:#?}");
    distinct(&made, "dircreate");
    assert!(made.iter().all(|c| !c.main && c.args.starts_with(", 000)")), "{made:#?}");
    assert!(!all.iter().any(creates), "{all:#?}");

    let timed: [(&str, Timed); 2] = [
        ("dirstat", |c| {
            c.name == "newfstatat" && c.args.contains("S_IFDIR") && c.args.ends_with(", 0) = 0")
        }),
        ("dirdelete", |c| (c.name == "rmdir" || c.args.contains("AT_REMOVEDIR")) && c.ok),
    ];
    for (engine, op) in timed {
        let all = calls(&format!("{base}ioengine={engine}\n[t0]\n"), false);
        let made: Vec<&Call> = all.iter().filter(|c| mkdir(c)).collect();
        let done: Vec<&Call> = all.iter().filter(|c| !c.main && op(c)).collect();
        assert_eq!(made.len(), 20, "{engine}: {all:#?}");
        assert_eq!(distinct(&done, engine), distinct(&made, engine), "{engine}");
        let last_mkdir = all.iter().rposition(mkdir).unwrap_or(0);
        let first = all.iter().position(|c| !c.main && op(c)).unwrap_or(0);
        assert!(last_mkdir < first, "{engine}: setup first: {all:#?}");
    }
}

/// `fsbench fio --output-format=json` on a filecreate job of nrfiles=20: one fake I/O per
/// created file in fio's direction (read: the job's default rw=read), `io_bytes` 20 × 4 KiB,
/// `clat_ns` one sample per create and `lat_ns` none, read by the code that reads fio 3.33's
/// JSON of the same job, which reports the same.
#[test]
fn fsbench_fio_reports_a_filecreate_job_as_fio_333() {
    let job = [
        "--name=t0",
        "--ioengine=filecreate",
        "--create_on_open=1",
        "--openfiles=1",
        "--filesize=4k",
        "--nrfiles=20",
    ];
    let work = TestDir::new();
    let dir_arg = format!("--directory={}", work.path().display());
    let mut args = vec!["fio", dir_arg.as_str(), "--output-format=json", "--no-store"];
    args.extend(job);
    let o = fsbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    let ours = fio_view(&v);
    assert_eq!(ours.len(), 1, "{v}");
    let fields = |f: &crate::fio::FioView| (f.read_ios, f.read_clat_n, f.read_bytes, f.write_bytes);
    assert_eq!(fields(&ours[0]), (20, 20, 20 * 4096, 0), "{v}");
    assert_eq!(v["jobs"][0]["read"]["lat_ns"]["N"], 0, "fio records the open as clat only");
    assert!(v["jobs"][0]["read"]["iops"].as_f64().is_some_and(|x| x > 0.0), "{v}");
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");

    // Two jobs of one group: each its own 20 creates (its own thread's figures).
    let two = work.write("two.fio", "[global]\nioengine=filecreate\ncreate_on_open=1\nopenfiles=1\nfilesize=4k\nnrfiles=20\n[a]\n[b]\n");
    let o = fsbench(&[
        "fio",
        dir_arg.as_str(),
        "--output-format=json",
        "--no-store",
        two.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let ours = fio_view(&v);
    let names: Vec<&str> = ours.iter().map(|f| f.jobname.as_str()).collect();
    assert_eq!(names, ["a", "b"], "{v}");
    assert!(ours.iter().all(|f| fields(f) == (20, 20, 20 * 4096, 0)), "{ours:?}");

    if !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's JSON not checked");
        return;
    }
    let mut theirs = fio_json(&[&job]);
    // fio 3.33 writes no `disk_util` for an engine without files on a disk (FIO_DISKLESSIO);
    // fio_view asks for it, fsbench writes it.
    if theirs["disk_util"].is_null() {
        theirs["disk_util"] = serde_json::json!([]);
    }
    let theirs = fio_view(&theirs);
    assert_eq!(theirs.len(), 1);
    assert_eq!(fields(&theirs[0]), (20, 20, 20 * 4096, 0));
}

/// A file-operation job fsbench cannot run as fio does is bad input: exit 2, before any I/O,
/// naming the file, the line and the reason.
#[test]
fn a_refused_file_operation_job_exits_2_with_its_line() {
    let d = TestDir::new();
    let job = d.write("j.fio", "[global]\nioengine=filestat\nfilesize=8k\nnrfiles=4\n[t0]\n");
    let work = TestDir::new();
    let o = fsbench(&[
        "run",
        "--fio",
        job.to_str().unwrap(),
        "--no-store",
        "--dir",
        work.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("j.fio:3: `filesize`") && e.contains("equal to bs"), "{e}");
    assert_eq!(work.entries(), Vec::<String>::new(), "nothing made");
}
