//! fio's averaged logs (`write_bw_log`, `write_iops_log`, `write_lat_log` with `log_avg_msec`):
//! `fsbench fio` and fio 3.33 run the same paced job file, each with its own current
//! directory, and their log files are read by the same code: the same file names (the job's
//! number counting an earlier job's clones), written in the current directory and not in
//! `directory=`, the same columns, line counts within one (fio's timer thread may take a
//! window late or not at all), and IOPS near the job's `rate_iops=200` in both (timing: a busy
//! machine can fall short); mean latencies in ns, of the same order in both (timing again:
//! only a broad factor is asserted, which still tells ns from µs).

use crate::util::*;
use std::path::Path;
use std::process::Command;

/// A first job of two clones (so the logged job is fio's thread 3), then the paced one.
const JOB: &str = "[first]\nrw=read\nbs=4k\nsize=256k\nnumjobs=2\n\
[paced]\nstonewall\nrw=randread\nbs=4k\nsize=4m\nrate_iops=200\ntime_based\nruntime=2\n\
log_avg_msec=500\nwrite_bw_log=pfx\nwrite_iops_log=pfx\n";

/// One line of a log: time (ms), value, direction, block size, offset.
type Line = [u64; 5];

/// A log file's lines, each checked to have fio's five comma-separated whole numbers.
fn parse(path: &Path) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let v: Vec<u64> = l
                .split(", ")
                .map(|f| f.parse().unwrap_or_else(|_| panic!("{}: `{l}`", path.display())))
                .collect();
            v.try_into().unwrap_or_else(|_| panic!("{}: not 5 columns: `{l}`", path.display()))
        })
        .collect()
}

/// The log files `fsbench fio` (or fio) writes for `job`: name and lines, sorted by name.
fn logs_of(job: &str, fio: bool) -> Vec<(String, Vec<Line>)> {
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
    work.entries()
        .into_iter()
        .filter(|e| e != "job.fio")
        .map(|e| {
            let lines = parse(&work.path().join(&e));
            (e, lines)
        })
        .collect()
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
/// log without log_avg_msec (fio's per-I/O log), an asynchronous engine's latency logs, and
/// any log under `run --fio`.
#[test]
fn logs_fsbench_cannot_write_exit_2_with_the_line() {
    let work = TestDir::new();
    let file = work.write("job.fio", "[j]\nrw=read\nsize=1m\nwrite_iops_log=p\n");
    let o = command()
        .args(["fio", "--no-store"])
        .arg(&file)
        .current_dir(work.path())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job.fio:4") && stderr(&o).contains("log_avg_msec"),
        "{}",
        stderr(&o)
    );
    // io_uring's slat and clat logs at iodepth 1, where fsbench submits in the call that waits
    // for the request and does not time the submission apart.
    let file = work.write(
        "job.fio",
        "[j]\nrw=read\nsize=1m\nioengine=io_uring\nlog_avg_msec=100\nwrite_lat_log=p\n",
    );
    let o = command()
        .args(["fio", "--no-store"])
        .arg(&file)
        .current_dir(work.path())
        .output()
        .expect("run");
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
    let o = command()
        .args(["fio", "--no-store", "--output-format=json"])
        .arg(format!("--directory={}", data.path().display()))
        .arg(&file)
        .current_dir(work.path())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not log_avg_msec=10"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the report, in JSON");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 600, "{v}");
    assert_eq!(work.entries(), ["job.fio"], "no log file");
}
