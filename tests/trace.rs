//! Block tracing against the real kernel: the trace's request counts and bytes agree with
//! /sys/block/loopN/stat over the same interval, sequential writes show up as large merged
//! requests, and an instance left by a `kill -9` is removed by `cleanup_leftovers()`.
//!
//! These need root, loop devices and tracefs; each test prints `skipped: <reason>` to stderr and
//! returns when something is missing. Each test attaches its own loop device to a sparse image
//! in its own temporary directory and detaches it at the end.
//!
//! The off-CPU test also sets a small `vm.dirty_bytes` (machine-wide, for a few seconds) and
//! restores the four dirty-limit sysctls on drop, so a failing assertion restores them too.

use fsbench::engine::buffer::AlignedBuf;
use fsbench::model::trace::TraceSummary;
use fsbench::observe::blockstat::BlockStat;
use fsbench::observe::trace::{TraceError, TraceOptions, Tracer};
use fsbench::testbed::loopdev::LoopDevice;
use fsbench::testbed::{self, StateDir};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/dirty_limits.rs"]
mod dirty_limits;
use dirty_limits::DirtyLimits;

const MIB: u64 = 1 << 20;
const CHILD_ENV: &str = "FSBENCH_TRACE_CHILD_DEVICE";

fn skip_reason() -> Option<String> {
    if !fsbench::sys::is_root() {
        return Some("needs root (loop devices, tracefs)".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control".into());
    }
    if !fsbench::sys::cmd::have_program("losetup") {
        return Some("losetup not installed".into());
    }
    None
}

macro_rules! skip_unless_ready {
    () => {
        if let Some(why) = skip_reason() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

/// A loop device over a sparse image in a fresh temporary directory (both removed on drop,
/// the device first).
struct Scratch {
    dev: Option<LoopDevice>,
    _dir: tempfile::TempDir,
}

impl Scratch {
    fn new(size: u64) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("fsbench-trace-it-")
            .tempdir_in("/var/tmp")
            .expect("tempdir in /var/tmp");
        let img = dir.path().join("dev0.img");
        File::create(&img).and_then(|f| f.set_len(size)).expect("image");
        let dev = LoopDevice::attach(&img, &StateDir::default()).expect("losetup");
        // udev probes a new device (blkid reads it); let that finish before we count.
        let _ = Command::new("udevadm").args(["settle", "--timeout=10"]).status();
        std::thread::sleep(Duration::from_millis(200));
        Scratch { dev: Some(dev), _dir: dir }
    }

    fn name(&self) -> String {
        self.dev.as_ref().map(|d| d.kernel_name()).unwrap_or_default()
    }

    fn path(&self) -> &Path {
        self.dev.as_ref().map(|d| d.device()).unwrap_or(Path::new("/nonexistent"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(d) = self.dev.take() {
            d.teardown().expect("detaching the loop device");
        }
    }
}

/// Start a tracer, or print why not and return `None`.
fn start(devices: &[String]) -> Option<Tracer> {
    match Tracer::start(devices, TraceOptions::default()) {
        Ok(t) => Some(t),
        Err(TraceError::Unavailable(why)) => {
            eprintln!("skipped: tracing unavailable: {why}");
            None
        }
        Err(e) => panic!("starting the tracer: {e}"),
    }
}

/// Buffered sequential write of `bytes` in 1 MiB chunks, then fsync: writeback builds large
/// requests.
fn sequential_write(dev: &Path, bytes: u64) {
    let f = File::options().write(true).open(dev).expect("open for write");
    let buf = vec![0x5au8; MIB as usize];
    let mut off = 0;
    while off < bytes {
        f.write_all_at(&buf, off).expect("write");
        off += MIB;
    }
    f.sync_all().expect("fsync");
}

/// `count` O_DIRECT 4 KiB reads at pseudo-random 4 KiB-aligned offsets below `span`.
fn random_reads(dev: &Path, span: u64, count: u64) {
    let f =
        File::options().read(true).custom_flags(libc::O_DIRECT).open(dev).expect("open O_DIRECT");
    let mut buf = AlignedBuf::new(4096);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let off = (x % (span / 4096)) * 4096;
        f.read_exact_at(&mut buf.as_mut_slice()[..4096], off).expect("pread");
    }
}

fn show(s: &TraceSummary) {
    let mut s = s.clone();
    s.offsets.points.truncate(3);
    s.queue_depth.series.truncate(3);
    eprintln!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
}

/// Within `slack` of each other (absolute).
fn close(a: u64, b: u64, slack: u64) -> bool {
    a.abs_diff(b) <= slack
}

/// The trace and /sys/block count the same requests, bytes and merges over one interval.
///
/// Both sides come from the same kernel code paths (blk_account_io_done / _completion /
/// _merge_bio sit beside the rq_complete / bio_backmerge tracepoints), so on an otherwise idle
/// loop device they should agree exactly. The slack of 2 requests covers a stray read by udev
/// or another prober between the counter snapshot and the start of tracing; it has not been
/// needed in practice. Note the fsync: its empty preflush write is counted as a completed write
/// by both sides but never issued, so writes completed = writes issued + 1.
#[test]
fn trace_agrees_with_sys_block() {
    skip_unless_ready!();
    let scratch = Scratch::new(256 * MIB);
    let name = scratch.name();
    let devices = vec![name.clone()];

    // Sequential write phase.
    let before = BlockStat::read(&name).expect("stat");
    let Some(tracer) = start(&devices) else { return };
    sequential_write(scratch.path(), 64 * MIB);
    let w = tracer.stop().expect("stop");
    let after = BlockStat::read(&name).expect("stat");
    show(&w);

    assert_eq!(w.events_lost, 0, "ring buffer overran");
    let d_writes = after.writes - before.writes;
    let d_wbytes = (after.write_sectors - before.write_sectors) * 512;
    let d_wmerges = after.write_merges - before.write_merges;
    eprintln!(
        "sequential write: writes completed trace {} / sys {d_writes}; bytes trace {} / sys \
         {d_wbytes}; merges trace {}+{} / sys {d_wmerges}",
        w.writes.requests_completed,
        w.writes.requests_completed_bytes,
        w.writes.bio_merges(),
        w.writes.request_merges
    );
    assert!(
        close(w.writes.requests_completed, d_writes, 2),
        "trace {} vs /sys/block {d_writes} writes completed",
        w.writes.requests_completed
    );
    assert!(
        close(w.writes.requests_completed_bytes, d_wbytes, 2 * 4096),
        "trace {} vs /sys/block {d_wbytes} bytes written",
        w.writes.requests_completed_bytes
    );
    assert_eq!(w.writes.requests_completed_bytes, 64 * MIB, "exactly what we wrote");
    let merges = w.writes.bio_merges() + w.writes.request_merges;
    assert!(close(merges, d_wmerges, 2), "trace {merges} vs /sys/block {d_wmerges} merges");
    assert_eq!(w.writes.bios_queued_bytes, 64 * MIB);
    // Sequential writeback: large requests, nearly all sequential.
    assert!(
        w.writes.mean_issued_request_bytes() >= 128.0 * 1024.0,
        "mean write request {} bytes",
        w.writes.mean_issued_request_bytes()
    );
    assert!(w.request_sizes_write.iter().any(|b| b.from_bytes >= 128 * 1024));
    assert!(w.seek.sequential_share > 0.9, "{:?}", w.seek);
    assert!(w.writes.requests_issued < w.writes.bios_queued || w.writes.bios_queued < 100);
    assert!(w.device_latency.writes.as_ref().is_some_and(|l| l.count > 0));
    assert!(w.queue_depth.max >= 1);
    assert!(!w.offsets.points.is_empty());

    // Random read phase.
    let before = BlockStat::read(&name).expect("stat");
    let Some(tracer) = start(&devices) else { return };
    random_reads(scratch.path(), 256 * MIB, 2000);
    let r = tracer.stop().expect("stop");
    let after = BlockStat::read(&name).expect("stat");
    show(&r);

    assert_eq!(r.events_lost, 0);
    let d_reads = after.reads - before.reads;
    let d_rbytes = (after.read_sectors - before.read_sectors) * 512;
    eprintln!(
        "random read: reads completed trace {} / sys {d_reads}; bytes trace {} / sys {d_rbytes}",
        r.reads.requests_completed, r.reads.requests_completed_bytes
    );
    assert!(
        close(r.reads.requests_completed, d_reads, 2),
        "trace {} vs /sys/block {d_reads} reads completed",
        r.reads.requests_completed
    );
    assert!(close(r.reads.requests_completed_bytes, d_rbytes, 2 * 4096));
    assert!(close(r.reads.requests_completed, 2000, 2), "{}", r.reads.requests_completed);
    assert_eq!(r.request_sizes_read.len(), 1, "all 4 KiB: {:?}", r.request_sizes_read);
    assert_eq!(r.request_sizes_read[0].from_bytes, 4096);
    assert!(r.seek.sequential_share < 0.05, "{:?}", r.seek);
    assert!(r.seek.mean_sectors > 1000.0, "{:?}", r.seek);
    let lat = r.device_latency.reads.as_ref().expect("read latency");
    assert!(lat.count >= 1990 && lat.p50_nanos > 0 && lat.p50_nanos <= lat.p99_nanos);
    assert_eq!(r.writes.requests_completed, 0);
}

#[test]
fn unknown_device_is_a_typed_error() {
    skip_unless_ready!();
    match Tracer::start(&["no-such-device".to_string()], TraceOptions::default()) {
        Err(TraceError::Device { name, .. }) => assert_eq!(name, "no-such-device"),
        Err(TraceError::Unavailable(why)) => eprintln!("skipped: tracing unavailable: {why}"),
        other => panic!("expected a device error, got {other:?}"),
    }
    match Tracer::start(&["../sda".to_string()], TraceOptions::default()) {
        Err(TraceError::Device { .. }) => {}
        other => panic!("expected a device error, got {other:?}"),
    }
}

/// Dropping a tracer without `stop` removes its instance and its state record.
#[test]
fn drop_removes_the_instance() {
    skip_unless_ready!();
    let scratch = Scratch::new(16 * MIB);
    let Some(tracer) = start(&[scratch.name()]) else { return };
    let path = tracer.instance_path().expect("instance").to_path_buf();
    assert!(path.is_dir());
    drop(tracer);
    assert!(!path.exists(), "{} left behind", path.display());
}

/// Run only as the child of `kill_9_leaves_an_instance_cleanup_removes`: start a tracer on
/// the device named in the environment, say where the instance is, and wait to be killed.
#[test]
fn trace_crash_child() {
    let Ok(device) = std::env::var(CHILD_ENV) else { return };
    let tracer = Tracer::start(&[device], TraceOptions::default()).expect("child tracer");
    println!("FSBENCH_INSTANCE {}", tracer.instance_path().expect("path").display());
    println!("FSBENCH_READY");
    let _ = std::io::stdout().flush();
    std::thread::sleep(Duration::from_secs(60));
    std::mem::forget(tracer);
    std::process::exit(3);
}

/// `kill -9` of a process that is tracing leaves its instance (still recording) and its state
/// record; `cleanup_leftovers()` removes both.
#[test]
fn kill_9_leaves_an_instance_cleanup_removes() {
    skip_unless_ready!();
    let scratch = Scratch::new(16 * MIB);
    if start(&[scratch.name()]).is_none() {
        return;
    }
    // Hold tracefs mounted across the child's life: a child that mounted it itself would leave
    // the mount behind when killed (harmless, but not ours to leave). Unmounted on drop if this
    // process mounted it.
    let _tracefs = fsbench::observe::trace::tracefs::TracefsRef::acquire().expect("tracefs");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["trace_crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, scratch.name())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut instance = None;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            // libtest may print "test trace_crash_child ... " on the same line first.
            Ok(l) if l.ends_with("FSBENCH_READY") => break,
            Ok(l) => {
                if let Some((_, p)) = l.split_once("FSBENCH_INSTANCE ") {
                    instance = Some(std::path::PathBuf::from(p.trim()));
                }
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = testbed::cleanup_leftovers();
                panic!("child did not start tracing in time");
            }
        }
    }
    child.kill().expect("SIGKILL the child we started"); // no destructor runs
    child.wait().expect("reap");
    let instance = instance.expect("child printed its instance");
    assert!(instance.is_dir(), "the crash should leave {}", instance.display());
    let record = testbed::default_state_dir().join(format!("{pid}.json"));
    assert!(record.exists(), "the crashed process's record should be there");

    let report = testbed::cleanup_leftovers().expect("cleanup");
    eprintln!("{report}");
    assert!(report.is_clean(), "{report}");
    assert!(report.removed.iter().any(|r| r.contains(&instance.display().to_string())), "{report}");
    assert!(!instance.exists(), "{} still there", instance.display());
    assert!(!record.exists(), "record should be gone after cleanup");
}

/// A buffered writer past a small `vm.dirty_bytes` spends most of its off-CPU time throttled in
/// balance_dirty_pages, and the off-CPU trace says so (the stacks are classified with the
/// table in `observe::trace::offcpu`).
#[test]
fn offcpu_names_dirty_throttling() {
    use fsbench::observe::trace::offcpu::OffCpuTracer;
    skip_unless_ready!();
    let scratch = Scratch::new(512 * MIB);
    let dev = scratch.path().to_path_buf();
    let limits = DirtyLimits::set(4 * MIB, MIB);
    let tracer = match OffCpuTracer::start(&TraceOptions::default()) {
        Ok(t) => t,
        Err(TraceError::Unavailable(why)) => {
            eprintln!("skipped: off-CPU tracing unavailable: {why}");
            return;
        }
        Err(e) => panic!("starting the off-CPU trace: {e}"),
    };
    // A thread spawned after the start, as the phase's workers are.
    let writer = std::thread::spawn(move || {
        let f = File::options().write(true).open(&dev).expect("open for write");
        let buf = vec![0x5au8; MIB as usize];
        for i in 0..256 {
            f.write_all_at(&buf, i * MIB).expect("write");
        }
    });
    writer.join().expect("writer");
    let b = tracer.stop().expect("stopping the off-CPU trace");
    drop(limits);
    eprintln!("{}\n{}", b.words(), serde_json::to_string_pretty(&b).unwrap_or_default());
    assert!(b.switches > 0 && b.total_nanos > 0, "no off-CPU time seen: {b:?}");
    // Of the time asleep (preemption on this shared 2-core machine is the scheduler's, not
    // the writer's doing), throttling is most; and a large share of all the off-CPU time.
    let share = b.share("throttled in balance_dirty_pages");
    let asleep = 1.0 - b.share(fsbench::observe::trace::offcpu::PREEMPTED);
    assert!(share >= 0.3, "balance_dirty_pages only {:.0}%: {}", share * 100.0, b.words());
    assert!(
        share / asleep >= 0.6,
        "balance_dirty_pages {:.0}% of the sleeps: {}",
        share / asleep * 100.0,
        b.words()
    );
    let top = b.reasons.iter().find(|r| r.reason != fsbench::observe::trace::offcpu::PREEMPTED);
    assert_eq!(top.map(|r| r.reason.as_str()), Some("throttled in balance_dirty_pages"));
}
