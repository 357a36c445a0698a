//! Issue 28's done-when for the dirty-limit cliff: a buffered writer passes a small
//! `vm.dirty_bytes` on an fsbench testbed, the interval series shows its throughput falling
//! where dirty and writeback bytes reach the kernel's throttling threshold, and compare's why
//! names the dirty limit.
//!
//! Its own test binary, not a module of `tests/cli`: the dirty limit is machine-wide, and
//! the cli tests run in parallel threads, each dirtying page cache of its own that would move
//! the writer's cliff (and be slowed by the small limit). It needs root, loop devices,
//! mkfs.ext4 and the cgroup v1 blkio throttle; it prints `skipped: <reason>` and returns when
//! one is missing. The sysctls and the throttle are restored by guards on drop, also when an
//! assertion fails, and the testbed is removed.

#[allow(dead_code)]
#[path = "cli/util.rs"]
mod util;

#[path = "common/dirty_limits.rs"]
mod dirty_limits;

use dirty_limits::DirtyLimits;
use util::*;

fn nums(v: &serde_json::Value) -> Vec<u64> {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().unwrap()).collect()
}

/// A write-bandwidth limit on one block device through the cgroup v1 blkio throttle of the
/// root cgroup (where the flusher threads that write back page cache run), removed on drop,
/// also when the test panics.
struct WriteThrottle {
    /// `MAJ:MIN` of the device.
    dev: String,
}

impl WriteThrottle {
    const FILE: &'static str = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device";

    /// Why the throttle cannot be set here, if it cannot.
    fn unavailable() -> Option<String> {
        (!std::path::Path::new(Self::FILE).exists()).then(|| {
            format!(
                "no {} (needs cgroup v1 blkio with throttling: a device slower than the writer)",
                Self::FILE
            )
        })
    }

    /// Limit writes to the block device that `mountpoint` is mounted from to `bytes_per_s`.
    fn set(mountpoint: &str, bytes_per_s: u64) -> WriteThrottle {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        let source = mounts
            .lines()
            .map(|l| l.split(' ').collect::<Vec<_>>())
            .find(|f| f.len() > 1 && f[1] == mountpoint)
            .map(|f| f[0].to_string())
            .unwrap_or_else(|| panic!("{mountpoint} is not a mount point"));
        let name = source.rsplit('/').next().unwrap();
        let dev = std::fs::read_to_string(format!("/sys/block/{name}/dev")).unwrap();
        let g = WriteThrottle { dev: dev.trim().to_string() };
        std::fs::write(Self::FILE, format!("{} {bytes_per_s}", g.dev)).expect("blkio throttle");
        g
    }
}

impl Drop for WriteThrottle {
    fn drop(&mut self) {
        if let Err(e) = std::fs::write(Self::FILE, format!("{} 0", self.dev)) {
            eprintln!("removing the write throttle of {}: {e}", self.dev);
        }
    }
}

/// A buffered writer passes the dirty limit. With `vm.dirty_bytes` at 128 MiB (background
/// 16 MiB, so `balance_dirty_pages` throttles from 72 MiB of dirty and writeback pages) and
/// the ext4 testbed's device held to 50 MiB/s, a 288 MiB streaming write of 4 KiB asked to run
/// at 300 MiB/s (a fixed rate: the same before the limit in a debug and a release build, and
/// on a busy machine) holds it until the page cache reaches the threshold, then falls to the
/// device's pace. tmpfs (no writeback: never throttled) is the other side. The series of the
/// ext4 repetitions shows the cliff where dirty + writeback bytes reach the threshold, and
/// compare's why (from the median repetition) names the dirty limit for ext4.
///
/// The sizes: between the threshold and the limit the page cache still takes (limit -
/// threshold) = 56 MiB at a falling rate, so the write goes on well past that (216 MiB after
/// the threshold) for the rate after it to be the device's. The dirty counters are the
/// machine's: another process's burst of dirty pages (a build linking a binary) can reach the
/// threshold for a moment, or before the writer does and throttle a repetition from its start.
/// So the writer's crossing is where the threshold is held for three points, two of the three
/// repetitions must show the cliff, and the why reads the median one. Measured in 12 runs on
/// the shared 2-core VM (4 of them with another process writing 200 MiB every second): before
/// the threshold 230-300 MiB/s, after it 52-66; the assertion asks for after < 40% of before.
#[test]
fn a_buffered_writer_past_the_dirty_limit_shows_the_cliff_and_the_why_names_it() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    if let Some(why) = WriteThrottle::unavailable() {
        skip(&why);
        return;
    }
    let Some(tmpfs) = Tmpfs::mount("512m", false) else {
        skip("could not mount a tmpfs");
        return;
    };
    let work = TestDir::new();
    let wdir = work.path().to_str().unwrap();
    let up = fsbench(&["testbed", "up", "ext4", "--workdir", wdir, "--size", "600M"]);
    assert!(up.status.success(), "{}", stderr(&up));
    let name = name_of_kept(&stderr(&up));
    let down = DownOnPanic(name.clone());
    let mnt = stdout(&up).trim().to_string();
    let d = TestDir::new();
    let w = d.write(
        "w.toml",
        "[[test]]\nid = \"w\"\nname = \"stream-write\"\nfile = { size = \"288M\", prefill = false }\n[[test.phase]]\nname = \"write\"\nopen = [\"create\", \"trunc\"]\npattern = [{ op = \"write\", size = \"4K\", offset = \"sequential\" }]\namount = { passes = 1 }\nrate = \"300M\"\n",
    );
    let mib = 1u64 << 20;
    let (v, o) = {
        let _slow = WriteThrottle::set(&mnt, 50 * mib);
        let _limits = DirtyLimits::set(128 * mib, 16 * mib);
        let tmp = tmpfs.path().to_str().unwrap();
        run_json(&["compare", tmp, &mnt, "--workload", w.to_str().unwrap(), "--repeat", "3"])
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let ext4 = &v["configs"][1];
    assert_eq!(ext4["run"]["target"]["fs_type"], "ext4", "{}", ext4["run"]["target"]);
    let reps = ext4["run"]["tests"][0]["reps"].as_array().unwrap();
    assert_eq!(reps.len(), 3);
    let mut shown = Vec::new();
    for (r, rep) in reps.iter().enumerate() {
        let s = &rep["phases"].as_array().unwrap().iter().find(|p| p["timed"] == true).unwrap()
            ["series"];
        let (wrote, dirty, wb) =
            (nums(&s["write_bytes"]), nums(&s["dirty_bytes"]), nums(&s["writeback_bytes"]));
        let threshold = s["dirty_throttle_bytes"].as_u64().unwrap();
        assert!((64 * mib..=80 * mib).contains(&threshold), "threshold {threshold}");
        let secs = s["interval_nanos"].as_u64().unwrap() as f64 / 1e9;
        let rate = |v: &[u64]| v.iter().sum::<u64>() as f64 / mib as f64 / (v.len() as f64 * secs);
        // The first point from which dirty + writeback bytes stay at the threshold for three
        // points (another process's burst is shorter: flushed at once to another device).
        let n = wrote.len();
        let held = |i: usize| dirty[i] + wb[i] >= threshold;
        let Some(at) = (0..n.saturating_sub(2)).find(|&i| held(i) && held(i + 1) && held(i + 2))
        else {
            eprintln!("rep {r}: never at the threshold: dirty {dirty:?}, writeback {wb:?}");
            continue;
        };
        if at < 2 || at + 3 >= n {
            eprintln!("rep {r}: at the threshold at point {at} of {n}: {dirty:?} {wb:?}");
            continue;
        }
        // Before it, and after it (the point itself straddles; the last may be partial).
        let (before, after) = (rate(&wrote[..at]), rate(&wrote[at + 1..n - 1]));
        eprintln!("rep {r}: {before:.0} MiB/s before, {after:.0} after (point {at} of {n})");
        if after < 0.4 * before {
            shown.push(r);
        }
    }
    assert!(shown.len() >= 2, "the cliff in repetitions {shown:?} only (see above)");
    let row = test_by_id(&v, "w");
    let why = row["why"][1].as_array().unwrap();
    let cliff = why.iter().find(|e| e["rule"] == "dirty_cliff");
    let cliff = cliff.unwrap_or_else(|| panic!("no dirty_cliff in the why: {why:#?}"));
    let text = cliff["text"].as_str().unwrap();
    eprintln!("{text}");
    assert!(text.starts_with(&format!("{mnt}'s writes fell from ")), "{text}");
    assert!(text.contains("writers throttled at the dirty limit"), "{text}");
    drop(down);
    let o = fsbench(&["testbed", "down", &name]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}
