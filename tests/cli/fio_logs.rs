//! fio's averaged logs (`write_bw_log`, `write_iops_log`, `write_lat_log` with `log_avg_msec`):
//! `fsbench fio` and fio 3.33 run the same paced job file, each with its own current
//! directory, and their log files are read by the same code: the same file names (the job's
//! number counting an earlier job's clones), written in the current directory and not in
//! `directory=`, the same columns, line counts within one (fio's timer thread may take a
//! window late or not at all), and IOPS near the job's `rate_iops=200` in both (timing: a busy
//! machine can fall short); mean latencies in ns, of the same order in both (timing again:
//! only a broad factor is asserted, which still tells ns from µs).
//!
//! fio's per-I/O logs (no `log_avg_msec`): the same size-bound jobs run by both tools give the
//! same files, a line per I/O (as many as the report's `total_ios` of each direction, op-exact),
//! the same columns, sizes and set of offsets (`log_offset=1`; each block once, fio's random
//! map), and latencies in ns of the same order (timing: a broad factor again).

use crate::util::*;
use std::path::Path;
use std::process::Command;

/// `fsbench fio --no-store ARGS FILE` run in `work` (where fio writes its logs).
fn fsbench_fio_in(work: &TestDir, args: &[&str], file: &Path) -> std::process::Output {
    command()
        .args(["fio", "--no-store"])
        .args(args)
        .arg(file)
        .current_dir(work.path())
        .output()
        .expect("run")
}

/// A first job of two clones (so the logged job is fio's thread 3), then the paced one.
const JOB: &str = "[first]\nrw=read\nbs=4k\nsize=256k\nnumjobs=2\n\
[paced]\nstonewall\nrw=randread\nbs=4k\nsize=4m\nrate_iops=200\ntime_based\nruntime=2\n\
log_avg_msec=500\nwrite_bw_log=pfx\nwrite_iops_log=pfx\n";

/// One line of a log: time (ms), value, direction, block size, then the priority, or with
/// `log_offset=1` the offset and the priority.
type Line = Vec<u64>;

/// A log file's lines, each checked to have fio's comma-separated whole numbers: five, or six
/// with `log_offset=1` (`offset`).
fn parse(path: &Path, offset: bool) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let columns = if offset { 6 } else { 5 };
    text.lines()
        .map(|l| {
            let v: Vec<u64> = l
                .split(", ")
                .map(|f| f.parse().unwrap_or_else(|_| panic!("{}: `{l}`", path.display())))
                .collect();
            assert_eq!(v.len(), columns, "{}: `{l}`", path.display());
            v
        })
        .collect()
}

/// The log files `fsbench fio` (or fio) writes for `job`: name and lines, sorted by name.
fn logs_of(job: &str, fio: bool) -> Vec<(String, Vec<Line>)> {
    run_logs(job, fio).0
}

/// The log files `fsbench fio` (or fio) writes for `job` (name and lines, sorted by name), and
/// its JSON report.
fn run_logs(job: &str, fio: bool) -> (Vec<(String, Vec<Line>)>, serde_json::Value) {
    let work = TestDir::new();
    let file = work.write("job.fio", job);
    let data = TestDir::new();
    let dir = format!("--directory={}", data.path().display());
    let o = if fio {
        Command::new("fio")
            .args([dir.as_str(), "--output-format=json"])
            .arg(&file)
            .current_dir(work.path())
            .output()
    } else {
        command()
            .args(["fio", dir.as_str(), "--output-format=json", "--no-store"])
            .arg(&file)
            .current_dir(work.path())
            .output()
    }
    .expect("run");
    assert!(o.status.success(), "{}", stderr(&o));
    let who = if fio { "fio" } else { "fsbench" };
    assert!(
        data.entries().iter().all(|e| !e.ends_with(".log")),
        "{who}: a log in directory=: {:?}",
        data.entries()
    );
    let offset = job.contains("log_offset=1");
    let logs = work
        .entries()
        .into_iter()
        .filter(|e| e != "job.fio")
        .map(|e| {
            let lines = parse(&work.path().join(&e), offset);
            (e, lines)
        })
        .collect();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{who}: JSON: {e}"));
    (logs, v)
}

/// The same files from both tools, fio's columns, one line per 500 ms window of reads at
/// about 200 IOPS (800 KiB/s).
#[test]
fn fsbench_fio_writes_fios_averaged_logs() {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's log files not compared");
    }
    let mut counts = Vec::new();
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let logs = logs_of(JOB, fio);
        let names: Vec<&str> = logs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["pfx_bw.3.log", "pfx_iops.3.log"], "{who}");
        let (bw, iops) = (&logs[0].1, &logs[1].1);
        // 2 s of 500 ms windows: 4, or 3 when the window the job ends in is left out (fio).
        assert!((3..=4).contains(&iops.len()), "{who}: {iops:?}");
        assert_eq!(bw.len(), iops.len(), "{who}: {bw:?} {iops:?}");
        for (b, i) in bw.iter().zip(iops) {
            // Reads only; averaged lines carry 0 for bs and offset.
            assert_eq!((i[2], i[3], i[4]), (0, 0, 0), "{who}: {i:?}");
            assert_eq!((b[0], b[2], b[3], b[4]), (i[0], 0, 0, 0), "{who}: {b:?} {i:?}");
            // A rate per second, not a count per window (100), though a window a loaded
            // machine delayed and the one that caught up may each be well off 200.
            assert!((40..=400).contains(&i[1]), "{who}: {i:?} is not a rate near 200 IOPS");
            // 4 KiB ops: KiB/s is four times the IOPS (whole-number rounding of each aside;
            // fio's timer closes its two windows apart, a few ms off on a loaded machine: 800
            // KiB/s beside 202 IOPS was seen).
            assert!(b[1].abs_diff(4 * i[1]) <= 4 + b[1] / 50, "{who}: {b:?} against {i:?}");
        }
        let mean = iops.iter().map(|i| i[1]).sum::<u64>() / iops.len() as u64;
        assert!((150..=250).contains(&mean), "{who}: {iops:?}: a mean of {mean} IOPS, not 200");
        // Window ends, increasing; fsbench's are exact multiples of log_avg_msec.
        assert!(iops.windows(2).all(|w| w[0][0] < w[1][0]), "{who}: {iops:?}");
        if !fio {
            let times: Vec<u64> = iops.iter().map(|l| l[0]).collect();
            assert_eq!(times, [500, 1000, 1500, 2000][..times.len()], "{who}");
        }
        counts.push(iops.len());
    }
    if let [ours, fios] = counts[..] {
        assert!(ours.abs_diff(fios) <= 1, "fsbench {ours} lines, fio {fios}");
    }
}

/// A paced psync job's latency logs: 2 s of reads at 200 a second in 500 ms windows.
const LAT_JOB: &str = "[paced]\nrw=randread\nbs=4k\nsize=4m\nrate_iops=200\ntime_based\n\
runtime=2\nlog_avg_msec=500\nwrite_lat_log=x\n";

/// The same three files from both tools (a synchronous engine's slat log empty in both), fio's
/// columns, one line per 500 ms window of reads with the window's mean latency in ns; the two
/// tools' mean latencies within a broad factor of each other (a ns/µs mix-up is 1000).
#[test]
fn fsbench_fio_writes_fios_averaged_latency_logs() {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's latency logs not compared");
    }
    let mut runs = Vec::new();
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let logs = logs_of(LAT_JOB, fio);
        let names: Vec<&str> = logs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x_clat.1.log", "x_lat.1.log", "x_slat.1.log"], "{who}");
        let (clat, lat, slat) = (&logs[0].1, &logs[1].1, &logs[2].1);
        assert!(slat.is_empty(), "{who}: a psync job's slat log has no line: {slat:?}");
        // 2 s of 500 ms windows, the last one partial (written at the job's end, by both).
        assert!((3..=5).contains(&lat.len()), "{who}: {lat:?}");
        assert_eq!(clat.len(), lat.len(), "{who}: {clat:?} {lat:?}");
        for (c, l) in clat.iter().zip(lat) {
            // Reads only; averaged lines carry 0 for bs and offset.
            assert_eq!((l[2], l[3], l[4]), (0, 0, 0), "{who}: {l:?}");
            assert_eq!((c[2], c[3], c[4]), (0, 0, 0), "{who}: {c:?}");
            // The same windows: fsbench's stamps are the same; fio stamps each log when it
            // closes it, which a loaded machine can make a few ms apart (500 and 501).
            let apart = if fio { 5 } else { 0 };
            assert!(c[0].abs_diff(l[0]) <= apart, "{who}: {c:?} {l:?}");
            // A mean 4 KiB read in ns: above 100 ns, below a second; clat within lat.
            assert!((100..1_000_000_000).contains(&l[1]), "{who}: {l:?} is not a latency in ns");
            assert!(c[1] > 0 && c[1] <= l[1], "{who}: clat {c:?} against lat {l:?}");
        }
        // Window ends, increasing, the first one at log_avg_msec (fio: at the first read
        // after it).
        assert!(lat.windows(2).all(|w| w[0][0] < w[1][0]), "{who}: {lat:?}");
        assert!((500..600).contains(&lat[0][0]), "{who}: {lat:?}");
        if !fio {
            let times: Vec<u64> = lat.iter().take(3).map(|l| l[0]).collect();
            assert_eq!(times, [500, 1000, 1500], "{who}");
        }
        let mean = lat.iter().map(|l| l[1] as f64).sum::<f64>() / lat.len() as f64;
        eprintln!("{who}: {} lines, mean latency {mean:.0} ns: {lat:?}", lat.len());
        runs.push((lat.len(), mean));
    }
    if let [(ours, ours_ns), (fios, fios_ns)] = runs[..] {
        assert!(ours.abs_diff(fios) <= 1, "fsbench {ours} lines, fio {fios}");
        let ratio = ours_ns / fios_ns;
        assert!((0.05..=20.0).contains(&ratio), "fsbench {ours_ns} ns, fio {fios_ns} ns");
    }
}

/// A direct libaio job at iodepth 8: 2 s of reads in 500 ms windows.
const ASYNC_LAT_JOB: &str = "[aio]\nrw=randread\nbs=4k\nsize=4m\nioengine=libaio\niodepth=8\n\
direct=1\ntime_based\nruntime=2\nlog_avg_msec=500\nwrite_lat_log=x\n";

/// An engine that submits apart gets fio's slat and clat logs with lines, in both tools: per
/// window, the mean submission latency and the mean completion latency from its return, each
/// within the window's mean total latency; fsbench's add up to it (each op's lat is its slat
/// plus its clat: the means of one window's sums, each rounded, within 1 ns).
#[test]
fn fsbench_fio_writes_fios_slat_and_clat_logs_for_libaio() {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's slat and clat logs not compared");
    }
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let logs = logs_of(ASYNC_LAT_JOB, fio);
        let names: Vec<&str> = logs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x_clat.1.log", "x_lat.1.log", "x_slat.1.log"], "{who}");
        let (clat, lat, slat) = (&logs[0].1, &logs[1].1, &logs[2].1);
        assert!((3..=5).contains(&lat.len()), "{who}: {lat:?}");
        // fio closes a log's window at its next sample: its slat log (sampled at submission)
        // may lack the last, partial window's line.
        assert_eq!(clat.len(), lat.len(), "{who}: {clat:?} {lat:?}");
        assert!(lat.len() - slat.len() <= usize::from(fio), "{who}: {slat:?} {lat:?}");
        for ((s, c), l) in slat.iter().zip(clat).zip(lat) {
            // fio stamps each log's window at its own closing sample (a ms apart at most).
            let near = |a: u64, b: u64| if fio { a.abs_diff(b) <= 2 } else { a == b };
            assert!(near(s[0], l[0]) && near(c[0], l[0]), "{who}: {s:?} {c:?} {l:?}");
            assert_eq!((s[2], c[2]), (0, 0), "{who}: reads: {s:?} {c:?}");
            assert!(s[1] > 0 && s[1] <= l[1], "{who}: slat {s:?} against lat {l:?}");
            assert!(c[1] > 0 && c[1] <= l[1], "{who}: clat {c:?} against lat {l:?}");
            if !fio {
                assert!((s[1] + c[1]).abs_diff(l[1]) <= 1, "{who}: {s:?} + {c:?} != {l:?}");
            }
        }
        // Direct reads: the device's time is after the submission, in every window.
        let mean = |v: &[Line]| v.iter().map(|l| l[1] as f64).sum::<f64>() / v.len() as f64;
        assert!(mean(slat) < mean(clat), "{who}: {slat:?} {clat:?}");
        eprintln!("{who}: slat {slat:?} clat {clat:?} lat {lat:?}");
    }
}

/// What fsbench cannot write is refused before any I/O, exit 2, with the job file's line: a
/// per-I/O log of a job that could do more I/Os than fsbench keeps records of, io_uring's
/// latency logs at iodepth 1, and any log under `run --fio`.
#[test]
fn logs_fsbench_cannot_write_exit_2_with_the_line() {
    let work = TestDir::new();
    // A per-I/O log of a job whose size could pass the records fsbench keeps (8 Mi ops).
    let file = work.write("job.fio", "[j]\nrw=read\nbs=4k\nsize=32g\nwrite_iops_log=p\n");
    let o = fsbench_fio_in(&work, &[], &file);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job.fio:5")
            && stderr(&o).contains("8388608 I/Os")
            && stderr(&o).contains("log_avg_msec"),
        "{}",
        stderr(&o)
    );
    // io_uring's slat and clat logs at iodepth 1, where fsbench submits in the call that waits
    // for the request and does not time the submission apart.
    let file = work.write(
        "job.fio",
        "[j]\nrw=read\nsize=1m\nioengine=io_uring\nlog_avg_msec=100\nwrite_lat_log=p\n",
    );
    let o = fsbench_fio_in(&work, &[], &file);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job.fio:6") && stderr(&o).contains("disable_slat=1"),
        "{}",
        stderr(&o)
    );
    let file = work.write("job.fio", "[j]\nrw=read\nsize=1m\nwrite_iops_log=p\nlog_avg_msec=100\n");
    let o = command()
        .args(["run", "--no-store", "--fio"])
        .arg(&file)
        .arg("--dir")
        .arg(work.path())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job.fio:4") && stderr(&o).contains("fsbench fio"),
        "{}",
        stderr(&o)
    );
    assert_eq!(work.entries(), ["job.fio"], "nothing left behind");
}

/// A job that is not time-based and outlasts the series' 200 windows has its series widened:
/// `fsbench fio` still reports, writes no log at the wrong window, and exits 1 saying why.
#[test]
fn a_widened_series_writes_no_log_and_exits_1() {
    let work = TestDir::new();
    let data = TestDir::new();
    // 600 reads at 200 a second: 3 s, 300 windows of 10 ms.
    let file = work.write(
        "job.fio",
        "[j]\nrw=read\nbs=4k\nsize=2400k\nrate_iops=200\nlog_avg_msec=10\nwrite_iops_log=p\n",
    );
    let dir = format!("--directory={}", data.path().display());
    let o = fsbench_fio_in(&work, &["--output-format=json", &dir], &file);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not log_avg_msec=10"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the report, in JSON");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 600, "{v}");
    assert_eq!(work.entries(), ["job.fio"], "no log file");
}

/// The per-I/O logs of `job` by one tool (`fio`): every file fio 3.33 writes (`x_` prefix;
/// the slat file empty for a synchronous engine), each `lat`, `clat`, `bw` and `iops` file a
/// line per I/O of the report's `total_ios` in each direction, fio's six columns with
/// `log_offset=1` (the size 4096, the priority 0), each file's lines in one order (the same
/// offsets line by line), times increasing from 0, latencies in ns (above 100 ns, below a
/// second; clat within lat), iops 1 and bw the bytes over the clat (fio's formula, exact in
/// both tools). Returns the files by name and the I/O counts (reads, writes).
fn per_io_logs(job: &str, fio: bool) -> (Vec<(String, Vec<Line>)>, [usize; 2]) {
    let who = if fio { "fio" } else { "fsbench" };
    let (logs, v) = run_logs(job, fio);
    let names: Vec<&str> = logs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["x_bw.1.log", "x_clat.1.log", "x_iops.1.log", "x_lat.1.log", "x_slat.1.log"],
        "{who}"
    );
    let ios = |dir: &str| v["jobs"][0][dir]["total_ios"].as_u64().unwrap_or(0) as usize;
    let counts = [ios("read"), ios("write")];
    let file = |name: &str| &logs.iter().find(|(n, _)| n == name).expect(name).1;
    let (bw, clat, iops, lat) =
        (file("x_bw.1.log"), file("x_clat.1.log"), file("x_iops.1.log"), file("x_lat.1.log"));
    for (name, lines) in [("bw", bw), ("clat", clat), ("iops", iops), ("lat", lat)] {
        for (ddir, want) in counts.iter().enumerate() {
            let n = lines.iter().filter(|l| l[2] == ddir as u64).count();
            assert_eq!(n, *want, "{who}: {name}: {n} lines of ddir {ddir}, total_ios {want}");
        }
        assert_eq!(lines.len(), counts[0] + counts[1], "{who}: {name}: {lines:?}");
        assert!(lines.iter().all(|l| l[3] == 4096 && l[5] == 0), "{who}: {name}: {lines:?}");
        assert!(lines.windows(2).all(|w| w[0][0] <= w[1][0]), "{who}: {name}: times go back");
        assert!(lines[0][0] < 1000, "{who}: {name}: {:?} is not ms since the start", lines[0]);
    }
    // One order in every completion-stamped file: the same op on each line.
    let ops = |v: &[Line]| v.iter().map(|l| (l[2], l[4])).collect::<Vec<_>>();
    assert_eq!(ops(clat), ops(lat), "{who}");
    assert_eq!(ops(bw), ops(lat), "{who}");
    assert_eq!(ops(iops), ops(lat), "{who}");
    for (((b, c), i), l) in bw.iter().zip(clat).zip(iops).zip(lat) {
        assert!((100..1_000_000_000).contains(&l[1]), "{who}: {l:?} is not a latency in ns");
        assert!(c[1] > 0 && c[1] <= l[1], "{who}: clat {c:?} against lat {l:?}");
        assert_eq!(i[1], 1, "{who}: {i:?}");
        assert_eq!(b[1], 4096 * 1_000_000 / c[1], "{who}: bw {b:?} against clat {c:?}");
    }
    (logs, counts)
}

/// The median of a log's values.
fn median(lines: &[Line]) -> u64 {
    let mut v: Vec<u64> = lines.iter().map(|l| l[1]).collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// The offsets of a log's lines of direction `ddir`, sorted.
fn offsets(lines: &[Line], ddir: u64) -> Vec<u64> {
    let mut v: Vec<u64> = lines.iter().filter(|l| l[2] == ddir).map(|l| l[4]).collect();
    v.sort_unstable();
    v
}

/// Both tools' median latencies within a broad factor (a ns/µs mix-up is 1000).
fn comparable(name: &str, ours: u64, fios: u64) {
    let ratio = ours as f64 / fios.max(1) as f64;
    eprintln!("{name}: median fsbench {ours} ns, fio {fios} ns");
    assert!((0.02..=50.0).contains(&ratio), "{name}: fsbench {ours} ns, fio {fios} ns");
}

/// A psync random write of 256 KiB in 4 KiB ops with fio's per-I/O logs and offsets.
const PER_IO_JOB: &str = "[j]\nrw=randwrite\nbs=4k\nsize=256k\nioengine=psync\nlog_offset=1\n\
write_lat_log=x\nwrite_bw_log=x\nwrite_iops_log=x\n";

/// fio's per-I/O logs of a size-bound psync job, from both tools: 64 writes, so 64 lines in
/// each file (op-exact), the slat file empty (no submission step), and the 64 offsets of the
/// file once each in both (fio's random map and fsbench's); median latencies comparable.
#[test]
fn fsbench_fio_writes_fios_per_io_logs() {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's per-I/O logs not compared");
    }
    let every_block: Vec<u64> = (0..64).map(|i| i * 4096).collect();
    let mut medians = Vec::new();
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let (logs, counts) = per_io_logs(PER_IO_JOB, fio);
        assert_eq!(counts, [0, 64], "{who}");
        let lat = &logs[3].1;
        assert!(logs[4].1.is_empty(), "{who}: a psync job's slat log: {:?}", logs[4].1);
        assert_eq!(offsets(lat, 1), every_block, "{who}");
        medians.push(median(lat));
    }
    if let [ours, fios] = medians[..] {
        comparable("psync randwrite lat", ours, fios);
    }
}

/// A psync mixed random job: reads and writes in fio's default 50:50.
const PER_IO_MIXED_JOB: &str = "[j]\nrw=randrw\nbs=4k\nsize=256k\nioengine=psync\n\
log_offset=1\nwrite_lat_log=x\nwrite_bw_log=x\nwrite_iops_log=x\n";

/// A mixed job's per-I/O logs: each direction's lines as many as its total_ios (op-exact), and
/// the reads' and writes' offsets together the file's 64 blocks once each, in both tools (the
/// split between directions is each tool's random draw, so not compared).
#[test]
fn fsbench_fio_writes_fios_per_io_logs_of_a_mixed_job() {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's per-I/O logs not compared");
    }
    let every_block: Vec<u64> = (0..64).map(|i| i * 4096).collect();
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let (logs, counts) = per_io_logs(PER_IO_MIXED_JOB, fio);
        assert_eq!(counts[0] + counts[1], 64, "{who}");
        assert!(counts[0] > 0 && counts[1] > 0, "{who}: {counts:?}");
        let lat = &logs[3].1;
        let mut both = offsets(lat, 0);
        both.extend(offsets(lat, 1));
        both.sort_unstable();
        assert_eq!(both, every_block, "{who}");
    }
}

/// A direct random read at iodepth 4 with `ioengine=` to follow.
const PER_IO_ASYNC_JOB: &str = "[j]\nrw=randread\nbs=4k\nsize=256k\n\
iodepth=4\ndirect=1\nlog_offset=1\nwrite_lat_log=x\nwrite_bw_log=x\nwrite_iops_log=x\n\
ioengine=";

/// The engines that submit apart (libaio, io_uring at a depth): the slat file has a line per
/// I/O too, stamped at the submission (times increasing), each op's slat within its lat;
/// fsbench's slat and clat add up to its lat exactly (one clock read each); the offsets of
/// the file once each; median slat and lat comparable between the tools.
#[test]
fn fsbench_fio_writes_fios_per_io_slat_logs_for_libaio_and_io_uring() {
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (scripts/install-deps.sh): fio 3.33's per-I/O logs not compared");
    }
    let every_block: Vec<u64> = (0..64).map(|i| i * 4096).collect();
    for engine in ["libaio", "io_uring"] {
        let job = format!("{PER_IO_ASYNC_JOB}{engine}\n");
        slat_logs_of(&job, engine, &tools, &every_block);
    }
}

/// [`fsbench_fio_writes_fios_per_io_slat_logs_for_libaio_and_io_uring`] for one `engine`.
fn slat_logs_of(job: &str, engine: &str, tools: &[bool], every_block: &[u64]) {
    let mut medians = Vec::new();
    for &fio in tools {
        let who = format!("{engine}: {}", if fio { "fio" } else { "fsbench" });
        let (logs, counts) = per_io_logs(job, fio);
        assert_eq!(counts, [64, 0], "{who}");
        let (clat, lat, slat) = (&logs[1].1, &logs[3].1, &logs[4].1);
        assert_eq!(slat.len(), 64, "{who}: {slat:?}");
        assert_eq!(offsets(slat, 0), every_block, "{who}");
        assert!(slat.windows(2).all(|w| w[0][0] <= w[1][0]), "{who}: {slat:?}");
        // Each op's lines, by its offset (each block once).
        let by_offset = |v: &[Line]| {
            let mut v: Vec<(u64, u64)> = v.iter().map(|l| (l[4], l[1])).collect();
            v.sort_unstable();
            v
        };
        for ((s, c), l) in by_offset(slat).iter().zip(by_offset(clat)).zip(by_offset(lat)) {
            assert!(s.1 > 0 && s.1 <= l.1, "{who}: slat {s:?} against lat {l:?}");
            if !fio {
                assert_eq!(s.1 + c.1, l.1, "{who}: slat {s:?} + clat {c:?} != lat {l:?}");
            }
        }
        medians.push((median(slat), median(lat)));
    }
    if let [(our_s, our_l), (fio_s, fio_l)] = medians[..] {
        comparable(&format!("{engine} slat"), our_s, fio_s);
        comparable(&format!("{engine} lat"), our_l, fio_l);
    }
}

/// A size-bound job's per-I/O records are allocated before its timed phase: 160 Ki writes of
/// 512 bytes (three chunks of records) with a per-I/O log, traced: the worker thread makes no
/// memory call (mmap, munmap, mremap, brk) between its first and its last write, only the
/// writes, and its log has a line per write.
#[test]
fn a_size_bound_per_io_log_allocates_nothing_while_the_job_runs() {
    if !have("strace") {
        skip("strace not installed: the worker's system calls not checked");
        return;
    }
    let work = TestDir::new();
    let data = TestDir::new();
    let file = work
        .write("job.fio", "[j]\nrw=write\nbs=512\nsize=80m\nioengine=psync\nwrite_iops_log=x\n");
    let log = work.path().join("strace.log");
    let mut c = Command::new("strace");
    isolate(&mut c)
        .args(["-f", "-qq", "-e", "trace=pwrite64,mmap,munmap,mremap,brk", "-e", "signal=none"])
        .arg("-o")
        .arg(&log)
        .arg(bin())
        .args(["fio", "--no-store", "--output-format=json"])
        .arg(format!("--directory={}", data.path().display()))
        .arg(&file)
        .current_dir(work.path());
    let o = c.output().expect("strace");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&log).expect("strace log");
    let calls: Vec<(&str, &str)> =
        text.lines().filter_map(|l| l.split_once(' ')).map(|(p, r)| (p, r.trim_start())).collect();
    // The worker: the thread that wrote the data file (160 Ki writes of 512 bytes).
    let worker = calls
        .iter()
        .find(|(_, c)| c.starts_with("pwrite64(") && c.contains(", 512, "))
        .map(|(p, _)| *p)
        .expect("the worker's writes");
    let mine: Vec<&str> = calls.iter().filter(|(p, _)| *p == worker).map(|(_, c)| *c).collect();
    let first = mine.iter().position(|c| c.starts_with("pwrite64(")).unwrap_or(0);
    let last = mine.iter().rposition(|c| c.starts_with("pwrite64(")).unwrap_or(0);
    let during = &mine[first..=last];
    let writes = during.iter().filter(|c| c.starts_with("pwrite64(")).count();
    assert_eq!(writes, 163_840, "the job's writes");
    let other: Vec<&&str> = during.iter().filter(|c| !c.starts_with("pwrite64(")).collect();
    assert!(other.is_empty(), "memory calls while the job ran: {:?}", &other[..other.len().min(5)]);
    let lines = parse(&work.path().join("x_iops.1.log"), false);
    assert_eq!(lines.len(), 163_840);
}

/// A time-based job's per-I/O log has no count known before it runs: its records stop at
/// 4194304 and, when the job did more I/Os, `fsbench fio` still reports them all, writes no
/// log (a cut log would look like a job that ended early) and exits 1 saying so. fio's null
/// engine does several million ops in 6 s in a test build; a machine too slow for that gets
/// its whole log, a line per I/O (said on stderr).
#[test]
fn a_time_based_per_io_log_past_the_cap_is_not_written_and_exits_1() {
    let work = TestDir::new();
    let data = TestDir::new();
    let file = work.write(
        "job.fio",
        "[j]\nioengine=null\nrw=randread\nbs=4k\nsize=1m\ntime_based\nruntime=6\nwrite_iops_log=p\n",
    );
    let dir = format!("--directory={}", data.path().display());
    let o = fsbench_fio_in(&work, &["--output-format=json", &dir], &file);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the report, in JSON");
    let ios = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap_or(0);
    const CAP: u64 = 4_194_304;
    if ios > CAP {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let why = format!("cut at {CAP} I/Os ({} more were done", ios - CAP);
        assert!(stderr(&o).contains(&why), "{why}: {}", stderr(&o));
        assert_eq!(work.entries(), ["job.fio"], "no log file");
    } else {
        eprintln!("only {ios} I/Os in 6 s: the cap was not reached, the whole log checked");
        assert!(o.status.success(), "{}", stderr(&o));
        let lines = parse(&work.path().join("p_iops.1.log"), false);
        assert_eq!(lines.len() as u64, ios);
    }
}
