//! fio's three latencies of an engine that submits apart (libaio, io_uring): `slat_ns` from an
//! op's start to the return of the call that submitted it, `clat_ns` from there to its
//! completion, `lat_ns` the two together; a synchronous engine (psync) has no submission step
//! and `slat_ns.N` 0. And fio's queue-depth distributions (`iodepth_level`, `iodepth_submit`,
//! `iodepth_complete`). The same jobs run by `fsbench fio` and by fio 3.33 (when installed),
//! and both JSONs read by the same code.

use crate::util::*;

/// One direction's figures: total_ios, and (N, mean) of slat_ns, clat_ns and lat_ns.
#[derive(Debug)]
struct Three {
    total: u64,
    slat: (u64, f64),
    clat: (u64, f64),
    lat: (u64, f64),
}

/// The read figures of the first job of a fio-shaped JSON.
fn three(v: &serde_json::Value) -> Three {
    let r = &v["jobs"][0]["read"];
    let nm = |k: &str| {
        let n = r[k]["N"].as_u64().unwrap_or_else(|| panic!("no {k}.N in {r}"));
        let m = r[k]["mean"].as_f64().unwrap_or_else(|| panic!("no {k}.mean in {r}"));
        (n, m)
    };
    let total = r["total_ios"].as_u64().unwrap_or_else(|| panic!("no total_ios in {r}"));
    Three { total, slat: nm("slat_ns"), clat: nm("clat_ns"), lat: nm("lat_ns") }
}

/// Run `args` (fio's command line, without the output format) with fio 3.33 (`fio`) or
/// `fsbench fio`, in `dir`, and read its JSON.
fn run(fio: bool, dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let d = format!("--directory={}", dir.display());
    let mut a = vec![d.as_str(), "--output-format=json"];
    a.extend_from_slice(args);
    let o = if fio {
        std::process::Command::new("fio").args(&a).output().unwrap()
    } else {
        let mut f = vec!["fio", "--no-store"];
        f.extend_from_slice(&a);
        fsbench(&f)
    };
    assert!(o.status.success(), "fio={fio}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

/// The tools to compare: fsbench, and fio 3.33 when installed.
fn tools() -> Vec<bool> {
    if have("fio") {
        vec![false, true]
    } else {
        skip("fio not installed (apt-get install fio): fsbench's figures checked alone");
        vec![false]
    }
}

/// Every op has its three latencies, and lat (their sum per op) is at least each of the other
/// two on average (0.2% for histogram rounding).
fn every_op_split(who: &str, t: &Three) {
    assert!(t.total > 0, "{who}: {t:?}");
    assert_eq!((t.slat.0, t.clat.0, t.lat.0), (t.total, t.total, t.total), "{who}: {t:?}");
    assert!(t.lat.1 * 1.002 >= t.slat.1 && t.lat.1 * 1.002 >= t.clat.1, "{who}: {t:?}");
    assert!(t.slat.1 > 0.0 && t.clat.1 > 0.0, "{who}: {t:?}");
}

/// Buffered libaio reads of a cached file at iodepth 1: the kernel copies the data inside
/// `io_submit`, so the submission latency is the op's time and the completion latency only the
/// `io_getevents` that collects it: slat mean above clat mean, in both tools (64 KiB reads:
/// the copy, some 15 µs, is well above what a preemption on a busy machine adds to a mean of
/// 1024 ops, and the `io_getevents`, under a µs). At a deeper queue a completed op waits for
/// its turn to be reaped, and fio's clat is then the larger.
#[test]
fn buffered_libaio_on_a_cached_file_spends_its_time_in_submission_in_both_tools() {
    let args = [
        "--name=a",
        "--rw=randread",
        "--bs=64k",
        "--size=64m",
        "--ioengine=libaio",
        "--iodepth=1",
        "--pre_read=1",
    ];
    for fio in tools() {
        let work = TestDir::new();
        let who = if fio { "fio 3.33" } else { "fsbench" };
        let t = three(&run(fio, work.path(), &args));
        assert_eq!(t.total, 1024, "{who}: {t:?}");
        every_op_split(who, &t);
        assert!(t.slat.1 > t.clat.1, "{who}: slat mean above clat mean: {t:?}");
    }
}

/// io_uring with O_DIRECT at iodepth 8: the device's time is after the submission returns, so
/// the completion latency is the larger, in both tools; and every op has all three.
#[test]
fn direct_io_uring_spends_its_time_after_submission_in_both_tools() {
    let args = [
        "--name=u",
        "--rw=randread",
        "--bs=4k",
        "--size=4m",
        "--ioengine=io_uring",
        "--iodepth=8",
        "--direct=1",
    ];
    for fio in tools() {
        let work = TestDir::new();
        let who = if fio { "fio 3.33" } else { "fsbench" };
        let v = run(fio, work.path(), &args);
        let t = three(&v);
        assert_eq!(t.total, 1024, "{who}: {t:?}");
        every_op_split(who, &t);
        assert!(t.clat.1 > t.slat.1, "{who}: clat mean above slat mean: {t:?}");
        let r = &v["jobs"][0]["read"];
        assert!(r["clat_ns"].get("percentile").is_some(), "{who}: clat percentiles: {r}");
        assert!(r["slat_ns"].get("percentile").is_none(), "{who}: no slat percentiles: {r}");
    }
}

/// psync has no submission step: `slat_ns.N` 0, and clat and lat both every op, in both.
#[test]
fn psync_has_no_submission_latency_in_both_tools() {
    let args = ["--name=p", "--rw=randread", "--bs=4k", "--size=2m"];
    for fio in tools() {
        let work = TestDir::new();
        let who = if fio { "fio 3.33" } else { "fsbench" };
        let t = three(&run(fio, work.path(), &args));
        assert_eq!((t.slat.0, t.clat.0, t.lat.0), (0, 512, 512), "{who}: {t:?}");
    }
}

/// `fsbench fio`'s text gives an asynchronous job fio's slat, clat and lat lines, in fio's
/// order, and a psync job its clat line alone; and fio's `IO depths`, `submit` and `complete`
/// lines.
#[test]
fn the_text_has_fios_three_latency_lines_for_libaio() {
    let work = TestDir::new();
    let d = format!("--directory={}", work.path().display());
    let common = [d.as_str(), "--no-store", "--rw=randread", "--bs=4k", "--size=1m"];
    let mut a = vec!["fio", "--name=a", "--ioengine=libaio", "--iodepth=4"];
    a.extend_from_slice(&common);
    let o = fsbench(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let at = |k: &str| text.find(k).unwrap_or_else(|| panic!("no `{k}` in {text}"));
    assert!(at("    slat (usec): min=") < at("    clat (usec): min="), "{text}");
    assert!(at("    clat (usec): min=") < at("     lat (usec): min="), "{text}");
    assert!(at("     lat (usec): min=") < at("    clat percentiles (usec):"), "{text}");
    let mut a = vec!["fio", "--name=p"];
    a.extend_from_slice(&common);
    let o = fsbench(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("    clat (usec): min="), "{text}");
    // fio's depth lines: one request in flight, submitted and reaped one at a time.
    assert!(
        text.contains(
            "  IO depths    : 1=100.0%, 2=0.0%, 4=0.0%, 8=0.0%, 16=0.0%, 32=0.0%, >=64=0.0%\n"
        ),
        "{text}"
    );
    assert!(text.contains("     submit    : 0=0.0%, 4=100.0%, 8=0.0%,"), "{text}");
    assert!(text.contains("     complete  : 0=0.0%, 4=100.0%, 8=0.0%,"), "{text}");
    assert!(!text.contains("slat (usec)") && !text.contains(" lat (usec): min="), "{text}");
}

/// A job's `iodepth_level`, `iodepth_submit` or `iodepth_complete`: key and percent.
fn dist(v: &serde_json::Value, key: &str) -> Vec<(String, f64)> {
    let o = v["jobs"][0][key].as_object().unwrap_or_else(|| panic!("no {key} in {v}"));
    o.iter().map(|(k, p)| (k.clone(), p.as_f64().unwrap_or_else(|| panic!("{key}.{k}")))).collect()
}

/// fio's queue-depth distributions, in both tools: psync keeps one request in flight and
/// submits and reaps one at a time ("1": 100, "4": 100, "4": 100); direct libaio at iodepth
/// 16 queues almost every request with 16 in flight (all but the 15 of the ramp up), one
/// io_submit of one each, in both.
#[test]
fn iodepth_distributions_are_fios_for_psync_and_direct_libaio() {
    let level = ["1", "2", "4", "8", "16", "32", ">=64"];
    let count = ["0", "4", "8", "16", "32", "64", ">=64"];
    let psync = ["--name=p", "--rw=randread", "--bs=4k", "--size=1m"];
    let aio = [
        "--name=a",
        "--rw=randread",
        "--bs=4k",
        "--size=4m",
        "--ioengine=libaio",
        "--iodepth=16",
        "--direct=1",
    ];
    for fio in tools() {
        let who = if fio { "fio 3.33" } else { "fsbench" };
        let work = TestDir::new();
        let v = run(fio, work.path(), &psync);
        let l = dist(&v, "iodepth_level");
        assert_eq!(l.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), level, "{who}");
        assert_eq!(l[0].1, 100.0, "{who}: {l:?}");
        let s = dist(&v, "iodepth_submit");
        assert_eq!(s.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), count, "{who}");
        assert_eq!(s[1].1, 100.0, "{who}: {s:?}");
        assert_eq!(dist(&v, "iodepth_complete")[1].1, 100.0, "{who}");
        let v = run(fio, work.path(), &aio);
        let l = dist(&v, "iodepth_level");
        // 1024 requests, the first 15 at depths 1 to 15: 1, 2, 4 and 8 of them.
        let want = [1.0 / 1024.0, 2.0 / 1024.0, 4.0 / 1024.0, 8.0 / 1024.0, 1009.0 / 1024.0];
        for (i, w) in want.iter().enumerate() {
            let w = (w * 100.0f64).max(0.1);
            assert!((l[i].1 - w).abs() < 1e-3, "{who}: {} {l:?}", level[i]);
        }
        assert_eq!(dist(&v, "iodepth_submit")[1].1, 100.0, "{who}: one request per io_submit");
        let c = dist(&v, "iodepth_complete");
        assert!(c[1].1 > 99.0, "{who}: io_getevents one at a time: {c:?}");
    }
}
