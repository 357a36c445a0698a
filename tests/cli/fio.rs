//! `--fio`: fio job files in, and `suite show --as-fio` out.

use crate::util::*;
use std::process::Command;

/// A job file in the style of fio's examples folder: a [global] section, several jobs separated
/// by `stonewall`, `${VAR}`s from the environment.
const EXAMPLE: &str = "; like fio's examples/ssd-test.fio
[global]
bs=4k
ioengine=psync
iodepth=1
size=${FSB_SIZE}
filesize=${FSB_SIZE}
io_size=2m
norandommap
randrepeat=1
group_reporting
thread
invalidate=0

[seq-read]
rw=read
stonewall

[rand-read]
rw=randread
numjobs=2
stonewall

[seq-write]
rw=write
bs=64k
fsync=8
end_fsync=1
stonewall

[rand-mixed]
rw=randrw
rwmixread=75
filename=shared.dat
numjobs=2
time_based
runtime=300ms
stonewall
";

#[test]
fn examples_style_job_file_runs_end_to_end() {
    let dir = TestDir::new();
    let job = dir.write("ssd.fio", EXAMPLE);
    let work = TestDir::new();
    let mut c = command();
    c.env("FSB_SIZE", "8m").args([
        "run",
        "--fio",
        job.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--no-store",
        "--format",
        "json",
    ]);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> =
        v["tests"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["seq-read", "rand-read", "seq-write", "rand-mixed"]);
    for t in v["tests"].as_array().unwrap() {
        assert_eq!(t["status"]["state"], "ok", "{t}");
    }
    let rep = |id: &str| test_by_id(&v, id)["reps"][0].clone();
    // io_size=2m per thread: 512 reads of 4K for one thread, 1024 for two.
    assert_eq!(rep("seq-read")["bytes"], 2 << 20);
    assert_eq!(rep("seq-read")["data_ops"], 512);
    assert_eq!(rep("rand-read")["data_ops"], 1024);
    assert_eq!(test_by_id(&v, "rand-read")["threads"], 2);
    let lat = |id: &str, op: &str| {
        rep(id)["latency"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["op"] == op)
            .map(|l| l["count"].as_u64().unwrap())
    };
    // 32 writes of 64K, an fsync every 8 writes and one at the end.
    assert_eq!(lat("seq-write", "write"), Some(32));
    assert!(lat("seq-write", "fsync").unwrap() >= 4, "{}", rep("seq-write"));
    let (r, w) = (lat("rand-mixed", "read").unwrap(), lat("rand-mixed", "write").unwrap());
    // Each op's direction is drawn (75% reads, as fio): the writes' share within 3 standard
    // deviations of 25%.
    let n = (r + w) as f64;
    let share = w as f64 / n;
    assert!(r > 0 && w > 0, "reads {r} writes {w}");
    assert!((share - 0.25).abs() < 3.0 * (0.25 * 0.75 / n).sqrt() + 0.005, "reads {r} writes {w}");
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");
    // Every job here means what it means in fio: no note says fsbench differs (a write job's
    // file is laid out as fio's, with fallocate).
    assert!(!stderr(&o).contains("differs from fio"), "{}", stderr(&o));
}

#[test]
fn print_workload_shows_the_translation_and_it_loads_as_a_workload() {
    let dir = TestDir::new();
    let job = dir.write("ssd.fio", EXAMPLE);
    let mut c = command();
    c.env("FSB_SIZE", "8m").args(["run", "--fio", job.to_str().unwrap(), "--print-workload"]);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    // randrw draws each op's direction (write_percent), as fio: no interleave to note.
    assert!(text.contains("write_percent = 25"), "{text}");
    assert!(!text.contains("randrw-interleave"), "{text}");
    let toml = dir.write("t.toml", &text);
    let o = fsbench(&["run", "--workload", toml.to_str().unwrap(), "--print-workload"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), text);
}

#[test]
fn unsupported_option_and_unset_variable_exit_2_with_the_line() {
    let dir = TestDir::new();
    let work = TestDir::new();
    let job = dir.write("bad.fio", "[global]\nsize=8m\n\n[job]\nrw=randread\nzonemode=zbd\n");
    let o =
        fsbench(&["run", "--fio", job.to_str().unwrap(), "--dir", work.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("bad.fio:6: fio option `zonemode` is not supported by fsbench: fsbench runs on files in a filesystem"),
        "{e}"
    );
    let job = dir.write("typo.fio", "[job]\nsize=8m\niodeph=8\n");
    let o =
        fsbench(&["run", "--fio", job.to_str().unwrap(), "--dir", work.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "typo.fio:3: fio option `iodeph` is not supported by fsbench (did you mean `iodepth`?)"
        ),
        "{e}"
    );

    let job = dir.write("env.fio", "[job]\nsize=${FSB_NOT_SET_ANYWHERE}\n");
    let o =
        fsbench(&["run", "--fio", job.to_str().unwrap(), "--dir", work.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("env.fio:2: environment variable `FSB_NOT_SET_ANYWHERE`"),
        "{}",
        stderr(&o)
    );

    let job = dir.write("two.fio", "[a]\nsize=8m\n[b]\nsize=8m\nwait_for=zz\n");
    let o =
        fsbench(&["run", "--fio", job.to_str().unwrap(), "--dir", work.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("two.fio:5: `wait_for`: no job before [b] is named `zz`"),
        "{}",
        stderr(&o)
    );
    assert_eq!(work.entries(), Vec::<String>::new());
}

#[test]
fn engine_depth_and_direct_show_in_table_and_csv() {
    let dir = TestDir::new();
    let work = TestDir::new();
    let job = dir.write(
        "u.fio",
        "[u]\nioengine=io_uring\niodepth=8\nrw=randread\nsize=8m\nio_size=2m\ninvalidate=0\n",
    );
    let args = |fmt: &'static str| {
        fsbench(&[
            "run",
            "--fio",
            job.to_str().unwrap(),
            "--dir",
            work.path().to_str().unwrap(),
            "--no-store",
            "--format",
            fmt,
        ])
    };
    let o = args("table");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("u [io_uring qd8 unregistered-files]"), "{}", stdout(&o));
    let o = args("csv");
    let text = stdout(&o);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!((col("engine"), col("iodepth"), col("direct")), ("io_uring", "8", "false"));
    let o = args("bonnie");
    assert!(o.status.success(), "{}", stderr(&o));
    // Not the bonnie suite: the tables are blank, and the I/O line names no bonnie test.
    assert!(!stdout(&o).contains("I/O (engine"), "{}", stdout(&o));
    let o = args("html");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("<td class=\"io\">io_uring qd8 buffered unregistered-files</td>"));
    // The store keeps them: the recorded run's JSON, and its HTML report.
    let db = dir.path().join("results.sqlite");
    let db = db.to_str().unwrap();
    let (_, o) = run_json(&[
        "run",
        "--fio",
        job.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--db",
        db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = fsbench(&["show", "1", "--db", db, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ph = &v["tests"][0]["reps"][0]["phases"][0];
    assert_eq!(
        (ph["engine"].as_str(), ph["iodepth"].as_u64(), ph["direct"].as_bool()),
        (Some("io_uring"), Some(8), Some(false)),
        "{ph}"
    );
    assert_eq!(ph["uring"]["registerfiles"], false, "fio's default: no registered file");
    let html = dir.path().join("r.html");
    let o = fsbench(&["report", "1", "--db", db, "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("<td class=\"io\">io_uring qd8 buffered unregistered-files</td>"));
}

#[test]
fn bonnie_format_names_each_tests_engine_depth_and_direct() {
    let work = TestDir::new();
    let o = fsbench(&[
        "run",
        "--suite",
        "bonnie",
        "--scale",
        "0.01",
        "--test",
        "block",
        "--dir",
        work.path().to_str().unwrap(),
        "--no-store",
        "--format",
        "bonnie",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("I/O (engine, depth, O_DIRECT): block psync qd1 buffered\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_translated_job_goes_back_to_fio_with_its_engine() {
    // fio job -> fsbench workload (--print-workload) -> fio job (suite show --as-fio needs an
    // embedded suite, so the export is checked through the library here).
    let t = fsbench::fio::translate(
        "[q]\nioengine=io_uring\niodepth=16\niodepth_batch_submit=4\ndirect=1\nrw=randread\nsize=64m\nio_size=8m\n",
        "q.fio",
        "q",
        &|_| None,
    )
    .unwrap();
    let ctx = fsbench::workload::ResolveCtx {
        scale: fsbench::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let suite = fsbench::fio::load(&t, &ctx).unwrap();
    let job = fsbench::fio::export::test_to_fio(&suite.tests[0]).unwrap();
    for want in [
        "rw=randread\n",
        "ioengine=io_uring\n",
        "iodepth=16\n",
        "iodepth_batch_submit=4\n",
        "direct=1\n",
        "bs=4k\n",
        "size=64m\n",
        "io_size=8m\n",
    ] {
        assert!(job.contains(want), "{want:?} missing in:\n{job}");
    }
}

#[test]
fn directory_from_the_job_file_when_no_dir() {
    let work = TestDir::new();
    let dir = TestDir::new();
    let job = dir.write(
        "d.fio",
        &format!("[j]\nsize=4m\nio_size=1m\ninvalidate=0\ndirectory={}\n", work.path().display()),
    );
    let (v, o) = run_json(&["run", "--fio", job.to_str().unwrap(), "--no-store"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["tests"][0]["reps"][0]["bytes"], 1 << 20);
    assert!(v["target"].to_string().contains(work.path().to_str().unwrap()), "{}", v["target"]);
    let job = dir.write("nodir.fio", "[j]\nsize=4m\n");
    let o = fsbench(&["run", "--fio", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("give --dir"), "{}", stderr(&o));
    // A directory= that does not exist is named as the job file's, not as --dir.
    let gone = work.path().join("gone");
    let job = dir.write("gone.fio", &format!("[j]\nsize=4m\ndirectory={}\n", gone.display()));
    let o = fsbench(&["run", "--fio", job.to_str().unwrap(), "--no-store"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let want = format!("directory={} in the fio job file: no such directory", gone.display());
    assert!(stderr(&o).contains(&want) && !stderr(&o).contains("--dir /"), "{}", stderr(&o));
}

#[test]
fn suite_as_fio_is_a_job_file_fio_accepts() {
    let o = fsbench(&["suite", "show", "unit14", "--as-fio"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("[5]\ndescription=seqread-32k-uncached\nrw=read\nbs=32k\n"), "{text}");
    assert!(text.contains("; test 8 (create-halfmem-2reads) cannot be expressed as a fio job:\n;   it has 2 timed phases"), "{text}");
    if std::process::Command::new("fio").arg("--version").output().is_err() {
        skip("fio is not installed (scripts/install-deps.sh bench): not cross-checked with fio");
        return;
    }
    let dir = TestDir::new();
    let f = dir.write("u14.fio", &text);
    let o = std::process::Command::new("fio").arg("--parse-only").arg(&f).output().unwrap();
    assert!(o.status.success(), "fio refused it: {}", stderr(&o));
}

/// `compare --fio`: one job file on two fresh filesystems, interleaved, end to end.
#[test]
fn compare_runs_a_job_file_on_two_configurations() {
    if !is_root() || !std::path::Path::new("/dev/loop-control").exists() || !have("mkfs.ext4") {
        skip("needs root, loop devices and mkfs.ext4 (e2fsprogs)");
        return;
    }
    let dir = TestDir::new();
    let work = TestDir::new();
    let job = dir.write(
        "two.fio",
        "[global]\nsize=${FSB_SIZE}\nio_size=1m\nstonewall\n\n[qd8-direct]\nioengine=io_uring\niodepth=8\ndirect=1\nrw=randread\n\n[seq-write]\nrw=write\nbs=64k\nend_fsync=1\n",
    );
    let mut c = command();
    c.env("FSB_SIZE", "8m").args([
        "compare",
        "ext4",
        "tmpfs",
        "--fio",
        job.to_str().unwrap(),
        "--workdir",
        work.path().to_str().unwrap(),
        "--size",
        "128M",
        "--no-store",
        "--no-report",
        "--format",
        "json",
    ]);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}); stderr:\n{}", stderr(&o)));
    let configs = v["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    for c in configs {
        let tests = c["run"]["tests"].as_array().unwrap();
        let ids: Vec<&str> = tests.iter().map(|t| t["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["qd8-direct", "seq-write"], "{}", c["label"]);
        for t in tests {
            assert_eq!(t["status"]["state"], "ok", "{} {t}", c["label"]);
        }
        let ph = &tests[0]["reps"][0]["phases"].as_array().unwrap().last().unwrap();
        assert_eq!(
            (ph["engine"].as_str(), ph["iodepth"].as_u64(), ph["direct"].as_bool()),
            (Some("io_uring"), Some(8), Some(true)),
            "{}",
            c["label"]
        );
        assert_eq!(ph["bytes_read"], 1 << 20);
    }
    // Each test was decided between the two: a winner or a draw.
    for r in v["tests"].as_array().unwrap() {
        let outcome = r["vs_baseline"][1]["outcome"].as_str().unwrap_or("");
        assert!(["win", "draw"].contains(&outcome), "{r}");
    }
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
}

#[test]
fn a_translation_note_is_kept_with_the_results() {
    let work = TestDir::new();
    let dir = TestDir::new();
    let job =
        dir.write("sync.fio", "[sync]\nioengine=sync\nrw=randread\nbs=4k\nsize=4m\nio_size=1m\n");
    let (v, o) = run_json(&[
        "run",
        "--fio",
        job.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let w = &v["tests"][0]["warnings"];
    let note = w.as_array().unwrap().iter().find(|w| w["kind"] == "note");
    let text = note.map(|n| n["message"].to_string()).unwrap_or_default();
    assert!(text.contains("fio job file: ioengine=sync (lseek + read/write) runs as psync"), "{w}");
}

/// Like for like: a compare of a durable streaming write (fio's `end_fsync`)
/// over three configurations runs the same number of `--min-time` passes on every one of them,
/// in every repetition (the first repetition chose it), and each pass writes a new file laid
/// out as fio lays it out: strace sees the file unlinked and laid out again between every two
/// opens of a pass, and one such open per pass.
#[test]
fn an_end_fsync_write_runs_equal_passes_on_every_configuration_each_on_a_new_file() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let dirs = [TestDir::new(), TestDir::new(), TestDir::new()];
    let scratch = TestDir::new();
    let job = scratch.write("w.fio", "[w]\nrw=write\nbs=1m\nsize=4m\nend_fsync=1\n");
    let log = scratch.path().join("strace.log");
    let o = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=open,openat,unlink,unlinkat", "-e", "signal=none"])
        .arg("-o")
        .arg(&log)
        .arg(bin())
        .args(["compare"])
        .args(dirs.iter().map(|d| d.path().to_str().unwrap()))
        .args(["--fio", job.to_str().unwrap(), "--min-time", "0.3s", "--repeat", "2"])
        .args(["--no-store", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut passes = Vec::new();
    for c in v["configs"].as_array().unwrap() {
        for rep in c["run"]["tests"][0]["reps"].as_array().unwrap() {
            for p in rep["phases"].as_array().unwrap().iter().filter(|p| p["timed"] == true) {
                passes.push(p["passes"].as_u64().unwrap_or(1));
            }
        }
    }
    assert_eq!(passes.len(), 3 * 2, "one timed phase, 2 repetitions, 3 configurations");
    assert!(passes[0] > 1, "a 4 MiB write lasts less than 0.3 s: more passes ({passes:?})");
    assert!(passes.iter().all(|n| *n == passes[0]), "equal passes everywhere: {passes:?}");

    // Each pass writes a new file, laid out as fio's: between two opens of the test's file by
    // a pass (O_RDWR), it is unlinked (successfully) and laid out again (the set-up's
    // O_WRONLY|O_CREAT open, then fallocate).
    let text = std::fs::read_to_string(&log).unwrap();
    let quoted = |l: &str| l.split('"').nth(1).map(str::to_string);
    let (mut creates, mut layouts) = (0u64, 0u64);
    #[derive(Debug, PartialEq)]
    enum State {
        Gone,
        Laid,
        Written,
    }
    let mut files: std::collections::HashMap<String, State> = Default::default();
    // The job's file, named as fio names it (`w.0.0`).
    for l in text.lines().filter(|l| l.contains("w.0.0\"")) {
        let Some(path) = quoted(l) else { continue };
        let state = files.entry(path).or_insert(State::Gone);
        if (l.contains(" openat(") || l.contains(" open(")) && l.contains("O_CREAT") {
            assert!(!l.contains("= -1"), "{l}");
            if l.contains("O_WRONLY") {
                assert_eq!(*state, State::Gone, "laid out over a file still there: {l}");
                *state = State::Laid;
                layouts += 1;
            } else {
                assert_eq!(*state, State::Laid, "a pass on a file not new and laid out: {l}");
                *state = State::Written;
                creates += 1;
            }
        } else if (l.contains(" unlink(") || l.contains(" unlinkat("))
            && l.trim_end().ends_with("= 0")
        {
            *state = State::Gone;
        }
    }
    assert_eq!(creates, passes.iter().sum::<u64>(), "one new file per pass");
    assert_eq!(layouts, creates, "each laid out before its pass");
}

/// What a script reads from fio's JSON, by fio's field paths; any missing field fails. The same
/// function reads fsbench's and fio 3.33's output.
#[derive(Debug)]
pub(crate) struct FioView {
    pub(crate) jobname: String,
    pub(crate) read_bytes: u64,
    pub(crate) write_bytes: u64,
    pub(crate) read_ios: u64,
    pub(crate) read_clat_n: u64,
    pub(crate) read_p99_ns: u64,
}

pub(crate) fn fio_view(v: &serde_json::Value) -> Vec<FioView> {
    let num = |x: &serde_json::Value, path: &str| -> f64 {
        let mut at = x;
        for k in path.split('/') {
            at = match k.parse::<usize>() {
                Ok(i) if at.is_array() => &at[i],
                _ => &at[k],
            };
        }
        at.as_f64().unwrap_or_else(|| panic!("no number at {path} in {x}"))
    };
    assert!(v["fio version"].is_string(), "{v}");
    assert!(v["timestamp"].is_u64(), "{v}");
    assert!(v["global options"].is_object(), "{v}");
    assert!(v["disk_util"].is_array(), "{v}");
    let jobs = v["jobs"].as_array().unwrap_or_else(|| panic!("no jobs[] in {v}"));
    jobs.iter()
        .map(|j| {
            num(j, "groupid");
            assert_eq!(num(j, "error"), 0.0, "{j}");
            for d in ["read", "write", "trim"] {
                for f in ["io_bytes", "io_kbytes", "bw", "bw_bytes", "iops", "runtime", "total_ios"]
                {
                    num(j, &format!("{d}/{f}"));
                }
                for l in ["slat_ns", "clat_ns", "lat_ns"] {
                    for f in ["min", "max", "mean", "stddev", "N"] {
                        num(j, &format!("{d}/{l}/{f}"));
                    }
                }
            }
            for f in ["usr_cpu", "sys_cpu", "job_runtime", "latency_us/250", "latency_ms/2000"] {
                num(j, f);
            }
            FioView {
                jobname: j["jobname"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no jobname in {j}"))
                    .into(),
                read_bytes: num(j, "read/io_bytes") as u64,
                write_bytes: num(j, "write/io_bytes") as u64,
                read_ios: num(j, "read/total_ios") as u64,
                read_clat_n: num(j, "read/clat_ns/N") as u64,
                // fio writes percentiles only for a direction that has I/O.
                read_p99_ns: if num(j, "read/clat_ns/N") > 0.0 {
                    num(j, "read/clat_ns/percentile/99.000000") as u64
                } else {
                    0
                },
            }
        })
        .collect()
}

#[test]
fn fsbench_fio_writes_fios_json_and_the_same_code_reads_fio_333s() {
    let work = TestDir::new();
    let job = ["--name=seq read", "--rw=read", "--bs=4k", "--size=1m"];
    let mut args = vec!["fio", "--directory", "--output-format=json", "--no-store"];
    let dir_arg = format!("--directory={}", work.path().display());
    args[1] = &dir_arg;
    args.extend(job);
    let o = fsbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    let ours = fio_view(&v);
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].jobname, "seq read");
    assert_eq!((ours[0].read_bytes, ours[0].write_bytes, ours[0].read_ios), (1 << 20, 0, 256));
    assert_eq!(ours[0].read_clat_n, 256);
    assert!(ours[0].read_p99_ns > 0, "{:?}", ours[0]);
    assert_eq!(v["global options"]["directory"], work.path().display().to_string());
    assert!(v["fsbench"].is_object() && v["jobs"][0]["fsbench"]["phases"].is_array(), "{v}");
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");

    if !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's JSON not checked");
        return;
    }
    let theirs = fio_view(&fio_json(&[&job]));
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].jobname, "seq read");
    assert_eq!(
        (theirs[0].read_bytes, theirs[0].write_bytes, theirs[0].read_ios),
        (1 << 20, 0, 256)
    );
    assert_eq!(theirs[0].read_clat_n, 256);
}

/// `numjobs=3` without `group_reporting`: fio's JSON has one `jobs[]` entry per clone, all
/// named `j` in group 0, each with its own bytes and I/Os (their sums the job's); so has
/// fsbench's, each from its thread's own record, and its text one block per clone. With
/// `group_reporting`, one entry. fio 3.33 on the same command gives as many entries, read
/// through the same field paths.
#[test]
fn fsbench_fio_reports_each_numjobs_clone_as_fio_does() {
    let job = ["--name=j", "--rw=randread", "--bs=4k", "--size=4m", "--numjobs=3"];
    let run = |extra: &[&str], fmt: &str| {
        let work = TestDir::new();
        let dir_arg = format!("--directory={}", work.path().display());
        let mut args = vec!["fio", dir_arg.as_str(), fmt, "--no-store"];
        args.extend(job);
        args.extend(extra);
        let o = fsbench(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");
        o
    };
    let o = run(&[], "--output-format=json");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    let ours = fio_view(&v);
    assert_eq!(ours.len(), 3, "one entry per clone: {v}");
    let jobs = v["jobs"].as_array().expect("jobs[]");
    for (i, (c, j)) in ours.iter().zip(jobs).enumerate() {
        assert_eq!(c.jobname, "j");
        assert_eq!(j["groupid"], 0, "{j}");
        assert_eq!(j["fsbench"]["clone"]["index"], i, "{j}");
        assert!(j["fsbench"].get("clones_merged").is_none(), "{j}");
        // Each clone reads its own 4 MiB file once, as fio's do.
        assert_eq!((c.read_bytes, c.read_ios, c.read_clat_n), (4 << 20, 1024, 1024), "{c:?}");
        assert_eq!(j["read"]["runtime"], j["job_runtime"], "its own run time: {j}");
    }
    let phase = &v["jobs"][0]["fsbench"]["phases"];
    let timed = phase.as_array().and_then(|p| p.iter().find(|p| p["timed"] == true));
    let timed = timed.unwrap_or_else(|| panic!("no timed phase: {phase}"));
    let sum = |f: fn(&FioView) -> u64| ours.iter().map(f).sum::<u64>();
    assert_eq!(Some(sum(|c| c.read_bytes)), timed["bytes_read"].as_u64(), "clones sum to the job");
    assert_eq!(sum(|c| c.read_ios), 3 * 1024);
    let text = stdout(&run(&[], "--output-format=normal"));
    assert_eq!(text.matches("j: (groupid=0, jobs=1)").count(), 3, "{text}");
    assert!(text.contains("Run status group 0 (all jobs):"), "{text}");

    let o = run(&["--group_reporting"], "--output-format=json");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let merged = fio_view(&v);
    assert_eq!(merged.len(), 1, "group_reporting: one entry: {v}");
    assert_eq!((merged[0].read_bytes, merged[0].read_ios), (3 * (4 << 20), 3 * 1024));

    if !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's clones not compared");
        return;
    }
    for (extra, n) in [(&[][..], 3), (&["--group_reporting"][..], 1)] {
        let theirs = fio_view(&fio_json(&[&job, extra]));
        assert_eq!(theirs.len(), n, "fio 3.33 {extra:?}: {theirs:?}");
        assert!(theirs.iter().all(|c| c.jobname == "j"));
        let per = 4u64 << 20;
        let want = if n == 1 { 3 * per } else { per };
        assert!(theirs.iter().all(|c| c.read_bytes == want), "{theirs:?}");
    }
}

#[test]
fn fsbench_fio_text_output_file_parse_only_and_refusals() {
    let work = TestDir::new();
    let out = TestDir::new();
    let d = format!("--directory={}", work.path().display());
    let o = fsbench(&[
        "fio",
        &d,
        "--name=w",
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--ioengine=sync",
        "--no-store",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("w: (groupid=0, jobs=1): err= 0: pid="), "{text}");
    assert!(text.contains("  write: IOPS=") && text.contains("(1.0MiB/"), "{text}");
    assert!(text.contains("clat percentiles (usec):") && text.contains("99.00th=["), "{text}");
    assert!(
        text.contains("\nfsbench:\n") && text.contains("differs from fio: ioengine=sync"),
        "{text}"
    );

    let f = out.path().join("r.json");
    let of = format!("--output={}", f.display());
    let o = fsbench(&[
        "fio",
        &d,
        "--name=r",
        "--size=1m",
        "--output-format=json",
        &of,
        "--no-store",
        "--eta=never",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "", "the report goes to --output");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
    assert_eq!(fio_view(&v)[0].read_bytes, 1 << 20);

    let o = fsbench(&["fio", &d, "--name=p", "--size=1m", "--parse-only"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let o = fsbench(&["fio", &d, "--name=p", "--size=1m", "--output-format=terse"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("command line:4: --output-format=terse"), "{}", stderr(&o));
    let o = fsbench(&["fio", &d, "--name=p", "--size=1m", "--zonemode=zbd", "--iodeph=2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("command line: 2 problems"), "{e}");
    assert!(
        e.contains("command line:4: fio option `zonemode` is not supported by fsbench: "),
        "{e}"
    );
    assert!(e.contains("command line:5: fio option `iodeph` is not supported by fsbench (did you mean `iodepth`?)"), "{e}");
    let o = fsbench(&["fio", "--version"]);
    assert!(o.status.success() && stdout(&o).starts_with("fio-3.33"), "{}", stdout(&o));
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");
}

/// `clat_percentiles=0` and `lat_percentiles=1`: the read's `lat_ns` has percentiles and its
/// `clat_ns` none, in fsbench's JSON as in fio 3.33's on the same command line; by default the
/// other way round.
#[test]
fn fsbench_fio_gives_the_latency_percentiles_the_job_asks_for() {
    let work = TestDir::new();
    let d = format!("--directory={}", work.path().display());
    let keys = |fio: bool, more: &[&str]| {
        let mut args = vec![d.as_str(), "--name=r", "--size=64k", "--output-format=json"];
        args.extend_from_slice(more);
        let o = if fio {
            std::process::Command::new("fio").args(&args).output().unwrap()
        } else {
            let mut a = vec!["fio", "--no-store"];
            a.extend_from_slice(&args);
            fsbench(&a)
        };
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = &v["jobs"][0]["read"];
        let has = |k: &str| r[k].get("percentile").is_some();
        (has("clat_ns"), has("lat_ns"))
    };
    let asked = ["--clat_percentiles=0", "--lat_percentiles=1"];
    assert_eq!(keys(false, &[]), (true, false), "fio's default");
    assert_eq!(keys(false, &asked), (false, true));
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's keys checked alone");
        return;
    }
    assert_eq!(keys(true, &[]), (true, false), "fio 3.33's default");
    assert_eq!(keys(true, &asked), (false, true), "fio 3.33's");
}

/// `percentile_list=99.9:50:90`: the read's `clat_ns.percentile` has those keys, sorted, written
/// as fio 3.33 writes them, in fsbench's JSON as in fio's.
#[test]
fn fsbench_fio_reports_the_percentile_list_with_fios_keys() {
    let work = TestDir::new();
    let d = format!("--directory={}", work.path().display());
    let args = [
        d.as_str(),
        "--name=r",
        "--size=64k",
        "--output-format=json",
        "--percentile_list=99.9:50:90",
    ];
    let keys = |o: std::process::Output| {
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let p = v["jobs"][0]["read"]["clat_ns"]["percentile"].as_object().cloned();
        p.map(|p| p.keys().cloned().collect::<Vec<_>>()).unwrap_or_default()
    };
    let mut ours = vec!["fio", "--no-store"];
    ours.extend_from_slice(&args);
    let want = ["50.000000", "90.000000", "99.900000"];
    assert_eq!(keys(fsbench(&ours)), want);
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's keys checked alone");
        return;
    }
    assert_eq!(keys(std::process::Command::new("fio").args(args).output().unwrap()), want);
}

/// A plain `filename` that exists in the directory: fio would run on it; fsbench runs on its own
/// file and says so, leaving the user's file as it was.
#[test]
fn fsbench_fio_says_when_a_plain_filename_exists_in_the_directory() {
    let work = TestDir::new();
    let d = format!("--directory={}", work.path().display());
    let job = ["fio", &d, "--name=r", "--filename=data", "--size=64k", "--no-store"];
    let o = fsbench(&job);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("exists; fio would"), "no file, no note: {}", stderr(&o));
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");
    let mine = work.write("data", "the user's own data\n");
    let o = fsbench(&job);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    let path = mine.display().to_string();
    assert!(e.contains(&format!("filename=data: {path} exists; fio would run on it")), "{e}");
    assert!(e.contains(&format!("name it by its path: filename={path}")), "{e}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "the user's own data\n");
    assert_eq!(work.entries(), ["data"], "only the user's file is left");
}

#[test]
fn job_files_with_includes_comments_and_every_problem_at_once() {
    let dir = TestDir::new();
    let work = TestDir::new();
    dir.write("common.inc", "bs=8k ; block\nsize=1m\n");
    let job = dir.write("inc.fio", "[global]\ninclude common.inc\n[my job]\nrw=read # seq\n");
    let o = fsbench(&[
        "fio",
        &format!("--directory={}", work.path().display()),
        "--output-format=json",
        "--no-store",
        job.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &fio_view(&v)[0];
    assert_eq!((j.jobname.as_str(), j.read_bytes, j.read_ios), ("my job", 1 << 20, 128));

    let bad = dir.write("bad.fio", "[global]\nsize=1m\n[a]\nrw=randread\nzonemode=zbd\nnumjobs=100000\nioengine=spdk\n[b]\nrw=read\nwait_for=zz\n");
    let o =
        fsbench(&["run", "--fio", bad.to_str().unwrap(), "--dir", work.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    let at: Vec<usize> = [
        "bad.fio:7: `ioengine`",
        "bad.fio:5: fio option `zonemode`",
        "bad.fio:6: `numjobs`",
        "bad.fio:10: `wait_for`",
    ]
    .iter()
    .map(|w| e.find(w).unwrap_or_else(|| panic!("{w} missing in {e}")))
    .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "engine first, then file order: {e}");
    // The same file behind fio's command line: each problem still names the job file.
    let o = fsbench(&[
        "fio",
        &format!("--directory={}", work.path().display()),
        "--bs=4k",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad.fio:10: `wait_for`")
            && stderr(&o).contains("bad.fio:6: `numjobs`"),
        "{}",
        stderr(&o)
    );
    assert_eq!(work.entries(), Vec::<String>::new());
}

#[test]
fn bad_job_files_exit_2_with_file_and_line_and_touch_nothing() {
    let dir = TestDir::new();
    let work = TestDir::new();
    let fifo = dir.path().join("fifo.fio");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let sub = dir.path().join("a-directory.fio");
    std::fs::create_dir(&sub).unwrap();
    let mut junk: Vec<u8> = Vec::with_capacity(10 << 20);
    let mut x: u32 = 12345;
    while junk.len() < 10 << 20 {
        x = x.wrapping_mul(1103515245).wrapping_add(12345);
        junk.push((x >> 16) as u8);
    }
    let junk_path = dir.path().join("junk.fio");
    std::fs::write(&junk_path, &junk).unwrap();
    let text_junk = dir.write("textjunk.fio", &"lorem ipsum = dolor\n".repeat(100));
    dir.write("loop.inc", "include loop.inc\n");
    let looped = dir.write("loop.fio", "[a]\nsize=1m\ninclude loop.inc\n");
    let many = dir.write("many.fio", "[a]\nsize=1m\nnumjobs=100000\n");
    let cases: Vec<(std::path::PathBuf, &str)> = vec![
        (fifo, "is a FIFO"),
        (sub, "is a directory"),
        (junk_path.clone(), "junk.fio:"),
        (text_junk, "textjunk.fio:1: `lorem ipsum = dolor` comes before any section"),
        (looped, "loop.inc:1: include loop.inc: an include loop"),
        (many, "many.fio:3: `numjobs`: 100000"),
    ];
    for (path, says) in cases {
        for cmd in [
            vec!["run", "--fio", path.to_str().unwrap(), "--dir", work.path().to_str().unwrap()],
            vec!["fio", path.to_str().unwrap()],
        ] {
            let o = fsbench(&cmd);
            assert_eq!(o.status.code(), Some(2), "{cmd:?}: {}", stderr(&o));
            assert!(stderr(&o).contains(says), "{cmd:?}: want {says:?} in {}", stderr(&o));
        }
    }
    assert_eq!(work.entries(), Vec::<String>::new());

    // Sizes past the free space: refused before any I/O.
    let Some(small) = Tmpfs::mount("8m", false) else {
        skip("needs root for a small tmpfs: the free-space case is not checked");
        return;
    };
    let big = dir.write("big.fio", "[big]\nrw=write\nsize=64m\n");
    let o =
        fsbench(&["run", "--fio", big.to_str().unwrap(), "--dir", small.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = fsbench(&[
        "fio",
        &format!("--directory={}", small.path().display()),
        big.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("big"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(small.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn fio_strict_refuses_a_difference_and_null_runs() {
    let work = TestDir::new();
    let d = format!("--directory={}", work.path().display());
    let o = fsbench(&[
        "fio",
        &d,
        "--name=rr",
        "--rw=randread",
        "--ioengine=sync",
        "--size=1m",
        "--fio-strict",
        "--no-store",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job `rr`: --fio-strict refuses it")
            && stderr(&o).contains("[differs from fio: sync-as-psync]"),
        "{}",
        stderr(&o)
    );
    let job = work.write("w.fio", "[w]\nrw=write\nsize=1m\nverify=crc32c\n");
    let o = fsbench(&[
        "run",
        "--fio",
        job.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--fio-strict",
        "--no-store",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("verify-own-check"), "{}", stderr(&o));
    std::fs::remove_file(&job).unwrap();
    // A job without a difference runs under --fio-strict; ioengine=null is fsbench's null engine.
    let o = fsbench(&[
        "fio",
        &d,
        "--name=n",
        "--rw=randread",
        "--norandommap",
        "--ioengine=null",
        "--size=1m",
        "--fio-strict",
        "--no-store",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 256, "{v}");
    assert_eq!(v["jobs"][0]["fsbench"]["differences"], serde_json::json!([]), "{v}");
    assert_eq!(v["jobs"][0]["fsbench"]["phases"][0]["engine"], "null", "{v}");
    assert_eq!(work.entries(), Vec::<String>::new());
}

/// fio's jobs without a `stonewall` between them run at the same time: `fsbench fio` reports
/// each job with its own bytes and fio's groupid (the stonewalled job starts group 1), and
/// with `--group_reporting` one entry per group, its jobs merged; fio 3.33's JSON of the same
/// command line gives the same jobs, groups and bytes through the same reader.
/// Two jobs of the same group (no stonewall), each with numjobs=2: four entries in fio's order
/// (a job's clones right after it), each clone its own thread's figures, the second job's
/// (a role beside the first's threads) too; fio 3.33 lists the same names in the same order.
#[test]
fn fsbench_fio_reports_the_clones_of_jobs_that_run_together() {
    let work = TestDir::new();
    let dir_arg = format!("--directory={}", work.path().display());
    let jobs = [
        "--bs=4k",
        "--numjobs=2",
        "--name=reader",
        "--rw=randread",
        "--size=1m",
        "--name=writer",
        "--rw=write",
        "--size=2m",
    ];
    let mut args = vec!["fio", dir_arg.as_str(), "--output-format=json", "--no-store"];
    args.extend(jobs);
    let o = fsbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
    let ours = fio_view(&v);
    let seen: Vec<(&str, u64, u64)> =
        ours.iter().map(|j| (j.jobname.as_str(), j.read_bytes, j.write_bytes)).collect();
    let want = [
        ("reader", 1 << 20, 0),
        ("reader", 1 << 20, 0),
        ("writer", 0, 2 << 20),
        ("writer", 0, 2 << 20),
    ];
    assert_eq!(seen, want, "{v}");
    for (i, j) in v["jobs"].as_array().unwrap().iter().enumerate() {
        assert_eq!(j["groupid"], 0, "{j}");
        assert_eq!(j["fsbench"]["clone"]["index"], i % 2, "{j}");
        let dir = if i < 2 { "read" } else { "write" };
        assert_eq!(j[dir]["total_ios"], if i < 2 { 256 } else { 512 }, "{j}");
        assert_eq!(j[dir]["clat_ns"]["N"], j[dir]["total_ios"], "{j}");
    }
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");

    if !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's order not compared");
        return;
    }
    let theirs = fio_view(&fio_json(&[&jobs]));
    let seen: Vec<(&str, u64, u64)> =
        theirs.iter().map(|j| (j.jobname.as_str(), j.read_bytes, j.write_bytes)).collect();
    assert_eq!(seen, want, "fio 3.33");
}

#[test]
fn fsbench_fio_runs_jobs_without_stonewall_together_each_with_its_figures() {
    let work = TestDir::new();
    let dir_arg = format!("--directory={}", work.path().display());
    let jobs = [
        "--bs=4k",
        "--name=reader",
        "--rw=read",
        "--size=1m",
        "--name=writer",
        "--rw=write",
        "--size=2m",
        "--name=after",
        "--stonewall",
        "--rw=randread",
        "--size=1m",
    ];
    let run = |extra: &[&str]| {
        let mut args = vec!["fio", dir_arg.as_str(), "--output-format=json", "--no-store"];
        args.extend(extra);
        args.extend(jobs);
        let o = fsbench(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
        let groups: Vec<u64> =
            v["jobs"].as_array().unwrap().iter().map(|j| j["groupid"].as_u64().unwrap()).collect();
        (fio_view(&v), groups, v)
    };
    let (ours, groups, v) = run(&[]);
    let seen: Vec<(&str, u64, u64)> =
        ours.iter().map(|j| (j.jobname.as_str(), j.read_bytes, j.write_bytes)).collect();
    assert_eq!(seen, [("reader", 1 << 20, 0), ("writer", 0, 2 << 20), ("after", 1 << 20, 0)]);
    assert_eq!(groups, [0, 0, 1], "{v}");
    assert_eq!(ours[1].read_ios, 0);
    assert_eq!(v["jobs"][1]["write"]["total_ios"], 512, "{v}");
    assert_eq!(v["jobs"][1]["fsbench"]["role"], "writer", "{v}");
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");

    let (merged, groups, v) = run(&["--group_reporting"]);
    let seen: Vec<(&str, u64, u64)> =
        merged.iter().map(|j| (j.jobname.as_str(), j.read_bytes, j.write_bytes)).collect();
    assert_eq!(seen, [("reader", 1 << 20, 2 << 20), ("after", 1 << 20, 0)], "{v}");
    assert_eq!(groups, [0, 1]);
    assert_eq!(v["jobs"][0]["fsbench"]["parts"].as_array().map(|p| p.len()), Some(2), "{v}");

    if !have("fio") {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's groups not checked");
        return;
    }
    let fio_dir = TestDir::new();
    let o = Command::new("fio")
        .arg(format!("--directory={}", fio_dir.path().display()))
        .arg("--output-format=json")
        .args(jobs)
        .output()
        .expect("run fio");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("fio's JSON");
    let theirs = fio_view(&v);
    let seen: Vec<(&str, u64, u64)> =
        theirs.iter().map(|j| (j.jobname.as_str(), j.read_bytes, j.write_bytes)).collect();
    assert_eq!(seen, [("reader", 1 << 20, 0), ("writer", 0, 2 << 20), ("after", 1 << 20, 0)]);
    let groups: Vec<u64> =
        v["jobs"].as_array().unwrap().iter().map(|j| j["groupid"].as_u64().unwrap()).collect();
    assert_eq!(groups, [0, 0, 1]);
}

/// fio 3.33's JSON of `args` (slices of its command line, joined), run in a directory of its
/// own.
pub(crate) fn fio_json(args: &[&[&str]]) -> serde_json::Value {
    let fio_dir = TestDir::new();
    let o = std::process::Command::new("fio")
        .arg(format!("--directory={}", fio_dir.path().display()))
        .arg("--output-format=json")
        .args(args.concat())
        .output()
        .expect("run fio");
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("fio's JSON")
}

/// `ctx`, `majf` and `minf` are the job's threads' own counts (`getrusage(RUSAGE_THREAD)` over
/// the I/O, as fio's): 300 O_DIRECT reads each wait for the device, so each is a context switch
/// at least, in fsbench's JSON and text as in fio 3.33's on the same command line (they were
/// always 0 in fsbench's).
#[test]
fn fsbench_fio_counts_the_jobs_context_switches_as_fio_does() {
    let work = TestDir::new();
    let d = format!("--directory={}", work.path().display());
    let job =
        ["--name=r", "--rw=randread", "--bs=4k", "--size=4m", "--direct=1", "--number_ios=300"];
    let counts = |v: &serde_json::Value| {
        let j = &v["jobs"][0];
        assert_eq!(j["read"]["total_ios"], 300, "{j}");
        let n = |k: &str| j[k].as_u64().unwrap_or_else(|| panic!("no {k} in {j}"));
        (n("ctx"), n("majf"), n("minf"))
    };
    let mut args = vec!["fio", "--no-store", d.as_str(), "--output-format=json"];
    args.extend(job);
    let o = fsbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let (ctx, _, minf) = counts(&serde_json::from_slice(&o.stdout).unwrap());
    assert!((270..3000).contains(&ctx), "fsbench's ctx {ctx} for 300 waits");
    assert!(minf < 10_000, "fsbench's minf {minf}: the loop allocates nothing per op");
    args[3] = "--output-format=normal";
    let o = fsbench(&args);
    let text = stdout(&o);
    assert!(text.contains(", ctx=") && !text.contains("ctx=0,"), "{text}");
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files behind");
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's counts checked alone");
        return;
    }
    let (ctx, _, _) = counts(&fio_json(&[&job]));
    assert!((270..3000).contains(&ctx), "fio 3.33's ctx {ctx} for 300 waits");
}

/// fio's `global options` and `job options`: the `[global]` sections' and each job's own
/// options given with a value, by fio's name (`readwrite` is `rw`), comments cut, bare flags
/// left out; fio 3.33's JSON of the same command line and file has the same objects.
#[test]
fn fsbench_fio_lists_global_and_job_options_as_fio_does() {
    let work = TestDir::new();
    let file = work.write(
        "g.fio",
        "[global]\nbs=8k\nthread\n[a]\nreadwrite=read\nsize=1m   ; a comment\ntime_based=0\n",
    );
    let data = TestDir::new();
    let d = format!("--directory={}", data.path().display());
    let file = file.display().to_string();
    let options =
        |v: &serde_json::Value| (v["global options"].clone(), v["jobs"][0]["job options"].clone());
    let o = fsbench(&["fio", "--no-store", d.as_str(), "--output-format=json", file.as_str()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = options(&serde_json::from_slice(&o.stdout).unwrap());
    let want_global =
        serde_json::json!({"directory": data.path().display().to_string(), "bs": "8k"});
    let want_job = serde_json::json!({"rw": "read", "size": "1m", "time_based": "0"});
    assert_eq!(ours, (want_global.clone(), want_job.clone()));
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's options checked alone");
        return;
    }
    let o = std::process::Command::new("fio")
        .args([d.as_str(), "--output-format=json", file.as_str()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(options(&serde_json::from_slice(&o.stdout).unwrap()), (want_global, want_job));

    // A command line's job lists its name too, as fio reads `--name` as one of its options.
    let job = ["--bs=8k", "--name=x", "--size=1m", "--numjobs=2", "--group_reporting"];
    let want = (
        serde_json::json!({"directory": data.path().display().to_string(), "bs": "8k"}),
        serde_json::json!({"name": "x", "size": "1m", "numjobs": "2"}),
    );
    let mut args = vec!["fio", "--no-store", d.as_str(), "--output-format=json"];
    args.extend(job);
    let o = fsbench(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(options(&serde_json::from_slice(&o.stdout).unwrap()), want);
    let o = std::process::Command::new("fio")
        .args([d.as_str(), "--output-format=json"])
        .args(job)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(options(&serde_json::from_slice(&o.stdout).unwrap()), want);
}
