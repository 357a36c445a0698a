//! fio's `fill_device`: a write job that goes on until the filesystem is full. fsbench does it
//! only on a testbed it made: on a directory the run is refused before any I/O; on a small
//! ext4 testbed the job ends at ENOSPC without an error, having written the filesystem's free
//! space (as many bytes as fio 3.33 writes on the same filesystem, when fio is installed).

use crate::util::*;
use std::path::Path;
use std::process::Command;

const FILL: &str = "[fill]\nrw=write\nbs=64k\nfill_device=1\n";

/// `run --fio`, `fsbench fio` and `compare` on directories (the machine's own filesystem):
/// exit 2 with the reason and the remedy, and nothing written there.
#[test]
fn fill_device_is_refused_off_a_testbed_before_any_io() {
    let dir = TestDir::new();
    let work = TestDir::new();
    let job = dir.write("fill.fio", FILL);
    let o = fsbench(&[
        "run",
        "--fio",
        job.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--no-store",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("test fill (fill) writes until the filesystem is full"), "{e}");
    assert!(e.contains("it fills only a testbed it made; nothing was run"), "{e}");
    assert!(e.contains("run it with --fs"), "{e}");
    assert!(work.entries().is_empty(), "written to: {:?}", work.entries());
    let d = format!("--directory={}", work.path().display());
    let o = fsbench(&["fio", &d, job.to_str().unwrap(), "--no-store"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("fills only a testbed it made"), "{}", stderr(&o));
    assert!(work.entries().is_empty(), "written to: {:?}", work.entries());
    // compare on two directories: the same refusal.
    let other = TestDir::new();
    let o = fsbench(&[
        "compare",
        work.path().to_str().unwrap(),
        other.path().to_str().unwrap(),
        "--fio",
        job.to_str().unwrap(),
        "--no-store",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("fills only a testbed it made"), "{}", stderr(&o));
    assert!(work.entries().is_empty() && other.entries().is_empty());
    // Translation alone accepts it, saying it needs a testbed.
    let o = fsbench(&["run", "--fio", job.to_str().unwrap(), "--print-workload"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("fill = 1.0"), "{}", stdout(&o));
    assert!(stderr(&o).contains("only on a testbed it made"), "{}", stderr(&o));
}

/// A testbed kept by `fsbench testbed up`, taken down when dropped (also when a test fails).
struct Kept {
    name: String,
    mount: String,
}

impl Kept {
    fn up(work: &Path, size: &str) -> Kept {
        let o = fsbench(&[
            "testbed",
            "up",
            "ext4",
            "--workdir",
            work.to_str().unwrap(),
            "--size",
            size,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let mount = stdout(&o).trim().to_string();
        let name = name_of_kept(&stderr(&o));
        Kept { name, mount }
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        let o = fsbench(&["testbed", "down", &self.name]);
        if !o.status.success() {
            eprintln!("testbed down {}: {}", self.name, stderr(&o));
        }
    }
}

/// Bytes a root process can still write on the filesystem at `dir` (root may use the blocks
/// ext4 reserves).
fn free_bytes(dir: &str) -> u64 {
    let s = rustix::fs::statvfs(dir).unwrap();
    s.f_bfree * s.f_frsize
}

/// On a 64 MiB ext4 testbed of `run --fs`: the job ends at ENOSPC (the phase's `ended_by`),
/// without an error, having written within 3% of the free space of such a filesystem, the same
/// bytes as fio 3.33 on the same filesystem; nothing is left behind.
#[test]
fn fill_device_on_a_testbed_writes_until_enospc() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let work = TestDir::new();
    let dir = TestDir::new();
    // The free space of a fresh 64 MiB ext4 testbed, and what fio writes there.
    let (free, by_fio) = {
        let kept = Kept::up(work.path(), "64M");
        let free = free_bytes(&kept.mount);
        let by_fio = if have("fio") {
            let job = dir.write(
                "fio.fio",
                &format!("[fill]\ndirectory={}\nfilename=fill.dat\n{}", kept.mount, &FILL[7..]),
            );
            let o = Command::new("fio").arg("--output-format=json").arg(&job).output().unwrap();
            assert!(o.status.success(), "fio: {}", stderr(&o));
            let text = String::from_utf8_lossy(&o.stdout);
            let v: serde_json::Value =
                serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).unwrap();
            assert_eq!(v["jobs"][0]["error"], 0, "{v}");
            Some(v["jobs"][0]["write"]["io_bytes"].as_u64().unwrap())
        } else {
            skip("fio not installed: fsbench's bytes not compared with fio's");
            None
        };
        (free, by_fio)
    };
    let job = dir.write("fill.fio", FILL);
    let (v, o) = run_fio_on_small_ext4(&job, work.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let t = test_by_id(&v, "fill");
    assert_eq!(t["status"]["state"], "ok", "{t}");
    let ph = t["reps"][0]["phases"].as_array().unwrap().last().unwrap();
    assert_eq!(ph["ended_by"], "filesystem full (ENOSPC)", "{ph}");
    assert_eq!(ph["bytes_read"], 0);
    let written = ph["bytes_written"].as_u64().unwrap();
    assert!(
        written <= free && written as f64 >= free as f64 * 0.97,
        "wrote {written} bytes of {free} free"
    );
    if let Some(f) = by_fio {
        let r = written as f64 / f as f64;
        assert!((0.99..=1.01).contains(&r), "fsbench wrote {written} bytes, fio {f}");
    }
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
}

/// A testbed kept by `fsbench testbed up` is one fsbench made: `fsbench fio --directory` on its
/// mount point fills it (the job ends without an error, having written within 3% of its free
/// space), and so does `run --fio --dir` (its phase ended by ENOSPC); `testbed down` then
/// removes it; a plain directory beside it is still
/// refused before any I/O, with the kept-testbed way in the message.
#[test]
fn fill_device_on_a_kept_testbed_writes_until_enospc() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let (work, dir, plain) = (TestDir::new(), TestDir::new(), TestDir::new());
    let job = dir.write("fill.fio", FILL);
    let job = job.to_str().unwrap();
    let fio = |directory: &str| {
        let d = format!("--directory={directory}");
        fsbench(&["fio", &d, "--output-format=json", "--no-store", job])
    };
    {
        let kept = Kept::up(work.path(), "64M");
        let free = free_bytes(&kept.mount);
        let o = fio(&kept.mount);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&o)));
        let j = &v["jobs"][0];
        assert_eq!(j["error"], 0, "{j}");
        // Ended by ENOSPC without an error: the fill's file took the free space.
        assert_eq!(j["fsbench"]["status"]["state"], "ok", "{j}");
        let written = j["write"]["io_bytes"].as_u64().unwrap();
        assert!(
            written <= free && written as f64 >= free as f64 * 0.97,
            "wrote {written} bytes of {free} free"
        );
        // fsbench's own file is gone: the testbed's free space is back.
        assert!(free_bytes(&kept.mount) as f64 >= free as f64 * 0.99, "the fill's file was left");
        // `run --fio --dir` on it too: the phase says ENOSPC ended it.
        let (v, o) = run_json(&["run", "--fio", job, "--dir", &kept.mount, "--no-store"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let ph =
            test_by_id(&v, "fill")["reps"][0]["phases"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(ph["ended_by"], "filesystem full (ENOSPC)", "{ph}");
        let written = ph["bytes_written"].as_u64().unwrap();
        assert!(written as f64 >= free as f64 * 0.97, "wrote {written} bytes of {free} free");
    }
    let o = fsbench(&["testbed", "down"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains(work.path().to_str().unwrap()), "still kept: {}", stdout(&o));
    let o = fio(plain.path().to_str().unwrap());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("fills only a testbed it made"), "{e}");
    assert!(e.contains("a testbed kept by `fsbench testbed up`"), "{e}");
    assert!(plain.entries().is_empty(), "written to: {:?}", plain.entries());
}
