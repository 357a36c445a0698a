//! fio's direct I/O at the file's own alignment, through the real binary: 512-byte and 1 KiB
//! O_DIRECT ops are issued as such (checked under strace on an ext4 testbed, whose loop device
//! has 512-byte logical blocks), and a size the file cannot do is refused before any I/O with
//! the file's alignment (ext4: statx's 512; btrfs: no statx alignment and no block device, so
//! 4096).

use crate::util::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A kept testbed of `fs` (`testbed up`), removed by [`Testbed::down`] or on a panic.
struct Testbed {
    mnt: String,
    name: String,
    _work: TestDir,
    _guard: DownOnPanic,
}

impl Testbed {
    fn up(fs: &str) -> Testbed {
        let work = TestDir::new();
        let o = fsbench(&["testbed", "up", fs, "--workdir", work.path().to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let name = name_of_kept(&stderr(&o));
        let guard = DownOnPanic(name.clone());
        Testbed { mnt: stdout(&o).trim().to_string(), name, _work: work, _guard: guard }
    }

    /// What is in the mount point besides mkfs's own `lost+found`.
    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.mnt)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "lost+found")
            .collect();
        v.sort();
        v
    }

    fn down(self) {
        let o = fsbench(&["testbed", "down", &self.name]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    }
}

/// One `pread64`/`pwrite64` of the strace log: (call, fd, length, offset).
type Call = (String, u32, u64, u64);

/// The data calls of the threads that opened the job's file (`d.0.0`, as fio names it) with
/// O_DIRECT, and those opens.
/// A call another thread interrupted is read from its `<unfinished ...>` line, which has the
/// arguments.
fn direct_calls(log: &Path) -> (Vec<Call>, Vec<String>) {
    let text = std::fs::read_to_string(log).unwrap();
    let pid = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
    let opens: Vec<&str> =
        text.lines().filter(|l| l.contains("openat(") && l.contains("d.0.0\"")).collect();
    let direct: BTreeSet<String> =
        opens.iter().filter(|l| l.contains("O_DIRECT")).map(|l| pid(l)).collect();
    let mut calls = Vec::new();
    for l in text.lines().filter(|l| direct.contains(&pid(l))) {
        for call in ["pread64", "pwrite64"] {
            let Some((_, rest)) = l.split_once(&format!("{call}(")) else { continue };
            let args = rest.split(" <unfinished").next().unwrap_or(rest);
            let args = args.rsplit_once(')').map_or(args, |(a, _)| a);
            let a: Vec<&str> = args.split(", ").map(str::trim).collect();
            let n = a.len();
            if n < 4 {
                continue;
            }
            if let (Ok(fd), Ok(len), Ok(off)) = (a[0].parse(), a[n - 2].parse(), a[n - 1].parse()) {
                calls.push((call.to_string(), fd, len, off));
            }
        }
    }
    let direct_opens = opens.iter().filter(|l| direct.contains(&pid(l))).map(|l| l.to_string());
    (calls, direct_opens.collect())
}

/// Runs `job` (a fio job file's text) on `dir` under strace; the log and the JSON report.
fn traced(d: &TestDir, dir: &str, job: &str) -> (PathBuf, serde_json::Value) {
    let file = d.write("j.fio", job);
    let log = d.path().join("strace.log");
    let mut c = Command::new("strace");
    let o = isolate(&mut c)
        .args(["-f", "-qq", "-e", "trace=openat,pread64,pwrite64", "-e", "signal=none"])
        .args(["-s", "0", "-o"])
        .arg(&log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(&file)
        .args(["--no-store", "--min-time", "0", "--format", "json", "--dir", dir])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    (log, v)
}

/// The shares of fio's iometer-like split, per cent by size.
const SPLIT: [(u64, f64); 4] = [(512, 10.0), (1024, 5.0), (2048, 5.0), (4096, 80.0)];

/// fio's bssplit with 512-byte and 1 KiB ops and direct=1 on ext4 (512-byte logical blocks):
/// every timed op goes to the file opened with O_DIRECT, at its drawn size, at offsets that
/// are multiples of 512 bytes (most of them not of 4096), in the split's proportions within
/// 2.5 points. fio 3.33 on the same job and testbed (norandommap, 3,629 ops) issued 11.0%,
/// 4.8%, 4.6%, 79.6% (fsbench: 9.3%, 5.0%, 4.7%, 81.0% of 3,516). A 100-byte job is refused
/// at its start, naming the file's alignment, with nothing read, written or left.
#[test]
fn direct_ops_of_512_bytes_and_1k_are_issued_as_fio_issues_them() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let tb = Testbed::up("ext4");
    let d = TestDir::new();
    let job = "[d]\nrw=randrw\nrwmixread=50\nbssplit=512/10:1k/5:2k/5:4k/80\ndirect=1\nnorandommap\nsize=4m\nio_size=12m\n";
    let (log, v) = traced(&d, &tb.mnt, job);
    assert_eq!(test_by_id(&v, "d")["status"]["state"], "ok", "{v}");
    let (calls, opens) = direct_calls(&log);
    assert!(!opens.is_empty() && opens.iter().all(|l| l.contains("O_DIRECT")), "{opens:?}");
    // About 12 MiB / 3.4 KiB per op on average.
    assert!(calls.len() > 3000, "{} calls", calls.len());
    let mut by_size: BTreeMap<u64, usize> = BTreeMap::new();
    for (call, _, len, off) in &calls {
        assert!(off % 512 == 0, "{call} of {len} at {off}: not 512-aligned");
        assert!(off + len <= 4 << 20, "{call} of {len} at {off}: past the file");
        *by_size.entry(*len).or_default() += 1;
    }
    let sizes: Vec<u64> = by_size.keys().copied().collect();
    assert_eq!(sizes, [512, 1024, 2048, 4096], "{by_size:?}");
    let n = calls.len() as f64;
    for (size, want) in SPLIT {
        let got = 100.0 * by_size[&size] as f64 / n;
        assert!((got - want).abs() <= 2.5, "{size}: {got:.1}% of {n} ops, want {want}%");
    }
    // Offsets at 512-byte steps: most are not 4 KiB-aligned (with 4 KiB slots none would be).
    let odd = calls.iter().filter(|c| c.3 % 4096 != 0).count();
    assert!(odd as f64 > n * 0.8, "{odd} of {n} offsets off 4 KiB");
    // randrw with rwmixread=50.
    let writes = calls.iter().filter(|c| c.0 == "pwrite64").count() as f64;
    assert!((writes / n - 0.5).abs() < 0.05, "{writes} writes of {n}");
    std::fs::remove_file(d.path().join("strace.log")).unwrap();

    // 100-byte ops: the file needs 512 (statx), so the job fails at its start, saying so.
    let file = d.write("b.fio", "[b]\nrw=randread\nbs=100\ndirect=1\nsize=1m\n");
    let (v, o) =
        run_json(&["run", "--fio", file.to_str().unwrap(), "--no-store", "--dir", &tb.mnt]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = test_by_id(&v, "b");
    assert_eq!(t["status"]["state"], "failed");
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("O_DIRECT on b.0.0 needs sizes and offsets in multiples of 512 bytes (statx(STATX_DIOALIGN))")
            && reason.contains("read of 100 bytes: use multiples of 512"),
        "{reason}"
    );
    assert_eq!(t["reps"].as_array().unwrap().len(), 0, "no repetition ran: {t}");
    assert!(tb.files().is_empty(), "nothing left: {:?}", tb.files());

    // A file the job names, already there: its own statx answers (no probe file is made),
    // and the refusal names it by its path; it is not opened, written or removed.
    let named = Path::new(&tb.mnt).join("named.dat");
    std::fs::write(&named, vec![7u8; 1 << 20]).unwrap();
    let job =
        format!("[n]\nrw=randread\nbs=100\ndirect=1\nsize=1m\nfilename={}\n", named.display());
    let file = d.write("n.fio", &job);
    let log = d.path().join("named.log");
    let mut c = Command::new("strace");
    let o = isolate(&mut c)
        .args(["-f", "-qq", "-e", "trace=statx,openat,pread64,pwrite64", "-e", "signal=none"])
        .args(["-s", "256", "-o"])
        .arg(&log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(&file)
        .args(["--no-store", "--format", "json", "--dir", &tb.mnt])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reason = test_by_id(&v, "n")["status"]["reason"].as_str().unwrap().to_string();
    let want = format!(
        "O_DIRECT on {} needs sizes and offsets in multiples of 512 bytes (statx(STATX_DIOALIGN))",
        named.display()
    );
    assert!(reason.contains(&want), "{reason}");
    let text = std::fs::read_to_string(&log).unwrap();
    let path = format!("\"{}\"", named.display());
    assert!(
        text.lines()
            .any(|l| l.contains("statx(") && l.contains(&path) && l.contains("STATX_DIOALIGN")),
        "no statx of the file with STATX_DIOALIGN:\n{text}"
    );
    assert!(!text.contains(".fsbench-direct-probe"), "a probe file was made:\n{text}");
    // Never opened for I/O (with O_DIRECT or otherwise).
    let opened: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("openat(") && l.contains(&path) && !l.contains("O_PATH"))
        .collect();
    assert!(opened.is_empty(), "{opened:?}");
    assert_eq!(std::fs::read(&named).unwrap(), vec![7u8; 1 << 20], "the file is untouched");
    std::fs::remove_file(&named).unwrap();
    tb.down();
}

/// btrfs reports no direct-I/O alignment through statx and its `st_dev` is no block device:
/// fsbench assumes 4096 (btrfs would quietly do a misaligned "direct" op through the page
/// cache), so a 512-byte direct job is refused there, saying where the figure came from, and
/// a 4 KiB one runs.
#[test]
fn direct_ops_below_4k_on_btrfs_are_refused_with_the_assumed_alignment() {
    if skip_testbeds(&["mkfs.btrfs"]) {
        return;
    }
    let tb = Testbed::up("btrfs");
    let d = TestDir::new();
    let file = d.write("s.fio", "[s]\nrw=randread\nbs=512\ndirect=1\nsize=1m\n");
    let (v, o) =
        run_json(&["run", "--fio", file.to_str().unwrap(), "--no-store", "--dir", &tb.mnt]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = test_by_id(&v, "s");
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("multiples of 4096 bytes (no statx alignment and no block device under the filesystem: 4096 assumed; btrfs, for one, quietly does smaller O_DIRECT ops through the page cache)")
            && reason.contains("read of 512 bytes"),
        "{reason}"
    );
    assert_eq!(t["reps"].as_array().unwrap().len(), 0, "{t}");
    let file = d.write("f.fio", "[f]\nrw=randread\nbs=4k\ndirect=1\nsize=1m\nio_size=256k\n");
    let (v, o) =
        run_json(&["run", "--fio", file.to_str().unwrap(), "--no-store", "--dir", &tb.mnt]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(test_by_id(&v, "f")["status"]["state"], "ok");
    assert!(tb.files().is_empty(), "nothing left: {:?}", tb.files());
    tb.down();
}

/// A workload's O_DIRECT op of 1000 bytes (no device's multiple) validates, and fails its test
/// at the start on the work directory's filesystem, naming the alignment there; nothing is
/// left. (Before, validation refused it for not being a multiple of 4 KiB.)
#[test]
fn a_direct_op_the_file_cannot_do_fails_its_test_before_any_io() {
    let d = TestDir::new();
    let run_dir = TestDir::new();
    let w = d.write("w.toml", "[[test]]\nid = \"w\"\nname = \"w\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\nopen = [\"direct\"]\npattern = [{ op = \"read\", size = \"1000\" }]\namount = { passes = 1 }\n");
    let dir = run_dir.path().to_str().unwrap();
    let (v, o) = run_json(&["run", "--workload", w.to_str().unwrap(), "--no-store", "--dir", dir]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = test_by_id(&v, "w");
    let reason = t["status"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("phase `r`: O_DIRECT on tw.dat needs sizes and offsets in multiples of")
            || reason.contains("refuses O_DIRECT"),
        "{reason}"
    );
    assert!(
        reason.contains("read of 1000 bytes") || reason.contains("refuses O_DIRECT"),
        "{reason}"
    );
    assert_eq!(t["reps"].as_array().unwrap().len(), 0, "{t}");
    assert!(run_dir.entries().is_empty(), "{:?}", run_dir.entries());
}
