//! fio's `ioengine=libaio` runs on fsbench's libaio engine, checked under strace against what
//! fio 3.33's libaio engine does with its defaults: one `io_submit` of one request as each is
//! queued and one `io_getevents(ctx, 1, 1, ...)` per completion, at any depth; with O_DIRECT
//! the requests are in flight together, up to the job's `iodepth`.

use crate::util::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The AIO calls strace's summary (`-c`) counted, by name.
fn summary(log: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut calls = BTreeMap::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        // "% time  seconds  usecs/call  calls  [errors]  syscall"
        if w.len() >= 5 && w[w.len() - 1].starts_with("io_") {
            if let Ok(n) = w[3].parse::<u64>() {
                calls.insert(w[w.len() - 1].to_string(), n);
            }
        }
    }
    calls
}

/// strace with `args` in front of `program`, made to leave the user's database alone.
fn strace(args: &[&str], log: &Path) -> Command {
    let mut c = Command::new("strace");
    isolate(&mut c).args(["-f"]).args(args).arg("-o").arg(log);
    c
}

/// `run --fio job` on `dir` under `strace -f -c` of the AIO calls: the summary and the report.
fn fsbench_counts(
    job: &Path,
    dir: &Path,
    log: &Path,
) -> (BTreeMap<String, u64>, serde_json::Value) {
    let o = strace(&["-c", "-e", "trace=io_setup,io_submit,io_getevents,io_destroy"], log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(job)
        .args(["--no-store", "--format", "json", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    (summary(log), v)
}

/// A buffered libaio write at iodepth 16 (1,024 ops of 4 KiB): one io_submit per op and one
/// io_getevents per completion, in one AIO context, as fio's job makes them. fio 3.33 on the
/// same job: 1,024 io_submit and 1,010 io_getevents (it takes the last 15 completions in one
/// call at the end, fsbench one by one), so the counts agree within the depth.
#[test]
fn a_buffered_libaio_job_makes_one_io_submit_per_op_and_one_io_getevents_per_completion_as_fio() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let job = d.write("b.fio", "[w]\nrw=randwrite\nbs=4k\nsize=4m\nioengine=libaio\niodepth=16\n");
    let work = TestDir::new();
    let (c, v) = fsbench_counts(&job, work.path(), &d.path().join("fsbench.strace"));
    let t = test_by_id(&v, "w");
    assert_eq!(t["status"]["state"], "ok", "{t}");
    assert!(t["warnings"].to_string().matches("libaio").count() == 0, "no libaio note: {t}");
    assert_eq!(c.get("io_setup"), Some(&1), "one context: {c:?}");
    assert_eq!(c.get("io_destroy"), Some(&1), "destroyed: {c:?}");
    assert_eq!(c.get("io_submit"), Some(&1024), "one io_submit per op: {c:?}");
    assert_eq!(c.get("io_getevents"), Some(&1024), "one io_getevents per op: {c:?}");
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());

    if !have("fio") {
        skip("fio not installed: fsbench's counts checked alone (apt-get install fio)");
        return;
    }
    let fio_dir = TestDir::new();
    let log = d.path().join("fio.strace");
    let o = strace(&["-c", "-e", "trace=io_setup,io_submit,io_getevents,io_destroy"], &log)
        .arg("fio")
        .arg("--output=/dev/null")
        .arg(format!("--directory={}", fio_dir.path().display()))
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "fio: {}", stderr(&o));
    let f = summary(&log);
    assert_eq!(f.get("io_submit"), c.get("io_submit"), "fio {f:?}, fsbench {c:?}");
    let (fio_reaps, ours) = (f["io_getevents"], c["io_getevents"]);
    assert!(fio_reaps <= ours && ours - fio_reaps < 16, "fio {f:?}, fsbench {c:?}");
}

/// One AIO call of a strace log: the thread, whether it is io_submit, and the count it
/// asked for and the count it got (io_submit: requests; io_getevents: `min`, `max` and events).
struct AioCall {
    pid: String,
    submit: bool,
    args: Vec<u64>,
    ret: u64,
}

fn aio_calls(text: &str) -> Vec<AioCall> {
    let mut calls = Vec::new();
    for l in text.lines() {
        let pid = l.split_whitespace().next().unwrap_or("").to_string();
        let (submit, rest) = match (l.split_once("io_submit("), l.split_once("io_getevents(")) {
            (Some((_, r)), _) => (true, r),
            (_, Some((_, r))) => (false, r),
            _ => continue,
        };
        assert!(!l.contains("unfinished") && !l.contains("resumed"), "one thread's call: {l}");
        let args: Vec<u64> =
            rest.split(", ").skip(1).take(2).filter_map(|a| a.trim().parse().ok()).collect();
        let ret = l.rsplit_once(" = ").and_then(|(_, r)| r.trim().parse().ok()).unwrap();
        calls.push(AioCall { pid, submit, args, ret });
    }
    calls
}

/// A direct libaio read at iodepth 16: the worker submits 16 requests (one io_submit each)
/// before its first io_getevents, then keeps 16 in flight, one io_getevents(ctx, 1, 1) and one
/// io_submit per op, as fio 3.33 under strace on the same job (16 submits, then alternating).
#[test]
fn a_direct_libaio_job_keeps_its_iodepth_in_flight() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    // /var/tmp takes O_DIRECT on a disk filesystem; tmpfs would refuse it.
    let probe = d.path().join("probe");
    {
        use std::os::unix::fs::OpenOptionsExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe);
        if let Err(e) = f {
            skip(&format!("{} refuses O_DIRECT ({e})", d.path().display()));
            return;
        }
    }
    std::fs::remove_file(&probe).unwrap();
    let job = d.write(
        "d.fio",
        "[r]\nrw=randread\nbs=4k\nsize=4m\ndirect=1\nioengine=libaio\niodepth=16\n",
    );
    let work = TestDir::new();
    let log = d.path().join("d.strace");
    let o = strace(&["-qq", "-e", "trace=io_submit,io_getevents", "-e", "signal=none"], &log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--no-store", "--format", "json", "--dir"])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(test_by_id(&v, "r")["status"]["state"], "ok", "{v}");
    let text = std::fs::read_to_string(&log).unwrap();
    let calls = aio_calls(&text);
    assert!(text.contains("IOCB_CMD_PREAD"), "reads by AIO:\n{}", &text[..text.len().min(2000)]);
    let pids: std::collections::BTreeSet<&str> = calls.iter().map(|c| c.pid.as_str()).collect();
    assert_eq!(pids.len(), 1, "one worker thread: {pids:?}");
    let (mut inflight, mut most, mut submits, mut reaps) = (0u64, 0u64, 0, 0);
    for c in &calls {
        if c.submit {
            assert_eq!((c.args.first(), c.ret), (Some(&1), 1), "one request per io_submit");
            inflight += c.ret;
            submits += 1;
        } else {
            assert_eq!(c.args, [1, 1], "io_getevents(ctx, 1, 1, ...)");
            assert_eq!(c.ret, 1);
            inflight -= c.ret;
            reaps += 1;
        }
        most = most.max(inflight);
    }
    assert_eq!(most, 16, "up to the job's iodepth in flight");
    assert!(calls[..16].iter().all(|c| c.submit) && !calls[16].submit, "16 submitted first");
    assert_eq!((submits, reaps), (1024, 1024), "4 MiB in 4 KiB ops");
    assert_eq!(inflight, 0, "every request reaped");
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
}

/// What a strace log (`-y`) shows of the AIO commands submitted and of the fdatasync calls
/// on files under `dir`: counts by `IOCB_CMD_*` name, and `fdatasync` for the calls.
fn submitted_and_synced(log: &Path, dir: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut by_call = BTreeMap::new();
    for l in text.lines() {
        if l.contains("io_submit(") {
            for cmd in l.split("aio_lio_opcode=").skip(1) {
                let name = cmd.split([',', '}']).next().unwrap_or("").to_string();
                *by_call.entry(name).or_insert(0) += 1;
            }
        } else if l.contains("fdatasync(") && l.contains(&format!("<{}/", dir.display())) {
            *by_call.entry("fdatasync".to_string()).or_insert(0) += 1;
        }
    }
    by_call
}

/// fdatasync=8 on a libaio write of 60 blocks: 60 IOCB_CMD_PWRITE through io_submit and 7
/// fdatasync(2) calls made by the worker itself, none submitted as AIO: fio 3.33's libaio
/// engine does every sync so (synchronously, once nothing is left unsubmitted), and fio 3.33 on
/// the same job, when installed, makes the same calls. (60 writes: a sync after the 8th, 16th, ... 56th; at a
/// multiple of N neither tool syncs after the last write, see tests/cli/fio_sync.rs.)
#[test]
fn a_libaio_jobs_fdatasync_is_a_system_call_of_its_own_as_in_fio() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let job = d.write(
        "f.fio",
        "[w]\nrw=write\nbs=4k\nsize=240k\nioengine=libaio\niodepth=4\nfdatasync=8\n",
    );
    let args = ["-qq", "-y", "-e", "trace=io_submit,fdatasync", "-e", "signal=none"];
    let work = TestDir::new();
    let log = d.path().join("fsbench.strace");
    let o = strace(&args, &log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--no-store", "--format", "json", "--dir"])
        .arg(work.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = submitted_and_synced(&log, work.path());
    let want: BTreeMap<String, usize> =
        [("IOCB_CMD_PWRITE".to_string(), 60), ("fdatasync".to_string(), 7)].into();
    assert_eq!(ours, want);
    if !have("fio") {
        skip("fio not installed: fsbench's calls checked alone (apt-get install fio)");
        return;
    }
    let fio_dir = TestDir::new();
    let log = d.path().join("fio.strace");
    let o = strace(&args, &log)
        .arg("fio")
        .arg("--output=/dev/null")
        .arg(format!("--directory={}", fio_dir.path().display()))
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "fio: {}", stderr(&o));
    assert_eq!(submitted_and_synced(&log, fio_dir.path()), ours, "fio's calls");
}
