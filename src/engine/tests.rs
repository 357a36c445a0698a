//! The queued path of the worker, driven at depth 16 with the `null` engine (through the
//! runner, as a workload) and with a counting engine (through the worker, to see the queue).

use super::hooks::NoHooks;
use super::ioengine::{Completion, Io, IoEngine, IoKind, Null};
use super::worker::{self, FileWork, PaddedCounter, StopFlags, Work, WorkerPlan};
use super::{run_test, EngineOptions, NoProgress, Target};
use crate::model::job::OpKind;
use crate::model::result::{PhaseResult, TestStatus};
use crate::model::scale::Scale;
use crate::workload::engines::EngineSpec;
use crate::workload::{self, ResolveCtx};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;

const QD16: &str = r#"
[[test]]
id = "q"
name = "null-qd16"
threads = 2
engine = "null"
iodepth = 16
file = { size = "4M" }

[[test.phase]]
name = "randread"
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K" }]
amount = { ops = 5000 }

[[test.phase]]
name = "write"
pattern = [{ op = "write", size = "4K" }]
amount = { passes = 1 }
sync = { every_ops = 100, at_end = "fsync" }
"#;

fn suite(text: &str) -> crate::model::job::Suite {
    let spec = workload::spec::parse(text, "qd16.toml").unwrap();
    let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
    workload::validate::resolve(&spec, "qd16.toml", &ctx).unwrap()
}

/// A temporary file of `size` bytes: its directory (remove it by dropping) and its path.
fn data_file(size: usize) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![1u8; size]).unwrap();
    (dir, path)
}

/// One worker of engine `E`, alone (its own barrier, stop flags and progress counter), doing
/// `phase` over the whole of `path` (`size` bytes) at `iodepth`, drawing from `seed`.
fn run_alone<E: IoEngine<Options = ()>>(
    phase: &crate::model::job::PhaseDef,
    path: &std::path::Path,
    size: u64,
    iodepth: u32,
    seed: u64,
) -> worker::WorkerOutput {
    let stop_phase = AtomicBool::new(false);
    let stop = StopFlags { phase: &stop_phase, signal: &AtomicBool::new(false) };
    let ctr = PaddedCounter::default();
    let work = FileWork {
        path,
        file_size: size,
        region_start: 0,
        region_len: size,
        verify: None,
        nofollow: false,
        random_in_region: false,
        more: None,
    };
    let mut plan = WorkerPlan {
        phase,
        seed,
        compress_percent: 0,
        iodepth,
        work: Work::File(work),
        over_time: Default::default(),
        thread_index: 0,
    };
    worker::run::<E>(&mut plan, &(), &Barrier::new(1), &stop, &ctr.0)
}

fn count(p: &PhaseResult, k: OpKind) -> u64 {
    p.latency.iter().find(|l| l.op == k).map(|l| l.count).unwrap_or(0)
}

#[test]
fn null_engine_at_depth_16_does_every_op_and_records_each_latency() {
    let s = suite(QD16);
    let t = &s.tests[0];
    assert_eq!((t.engine.name(), t.iodepth), ("null", 16));
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let opts = EngineOptions::default();
    let r = run_test(t, &target, &[], dir.path(), &opts, 0, 0..1, &NoProgress, &NoHooks);
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let rep = &r.reps[0];
    let read = &rep.phases[0];
    // 2 threads × 5000 ops, each recorded once, each 4 KiB.
    assert_eq!(read.data_ops, 10_000);
    assert_eq!(read.bytes_read, 10_000 * 4096);
    assert_eq!(count(read, OpKind::Read), 10_000);
    assert_eq!((count(read, OpKind::Open), count(read, OpKind::Close)), (2, 2));
    let l = read.latency.iter().find(|l| l.op == OpKind::Read).unwrap();
    assert!(l.max_nanos < 1_000_000_000 && l.mean_nanos > 0.0, "{l:?}");
    let write = &rep.phases[1];
    // One pass over each thread's 2 MiB region: 512 writes; a sync every 100 writes (5) and
    // one at the end, per thread.
    assert_eq!(write.data_ops, 1024);
    assert_eq!(write.bytes_written, 4 << 20);
    assert_eq!(count(write, OpKind::Write), 1024);
    assert_eq!(count(write, OpKind::Fsync), 2 * (5 + 1));
    assert!(write.sync_nanos > 0);
    // Nothing was read or written on disk: the file is still the prefill's.
    assert!(rep.complete);
}

/// The null engine, counting what is in flight and checking that syncs see an empty queue.
struct Counting {
    inner: Null,
    inflight: usize,
    most: usize,
    queued: u64,
}

static MOST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static SYNCS_WITH_IO_IN_FLIGHT: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// A test engine's declaration: the null engine's, under its own name.
const fn test_spec(name: &'static str) -> EngineSpec {
    EngineSpec { name, ..crate::workload::engines::null::SPEC }
}

impl IoEngine for Counting {
    const SPEC: &'static EngineSpec = &test_spec("counting");
    type Options = ();
    fn options(_: &crate::model::job::EngineOptions) {}
    fn setup(depth: u32, _: &()) -> std::io::Result<Self> {
        Ok(Counting { inner: Null::setup(depth, &())?, inflight: 0, most: 0, queued: 0 })
    }
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        if matches!(io.kind, IoKind::Fsync | IoKind::Fdatasync) && self.inflight > 0 {
            SYNCS_WITH_IO_IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.inflight += 1;
        self.queued += 1;
        self.most = self.most.max(self.inflight);
        MOST.fetch_max(self.most, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.queue(io) }
    }
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> std::io::Result<usize> {
        let n = self.inner.reap(min, out)?;
        self.inflight -= n;
        Ok(n)
    }
}

#[test]
fn the_worker_keeps_16_requests_in_flight_and_drains_before_a_sync() {
    let s = suite(QD16);
    let t = &s.tests[0];
    let (_dir, path) = data_file(4 << 20);
    for (phase, ops) in [(&t.phases[0], 5000), (&t.phases[1], 1024)] {
        let out = run_alone::<Counting>(phase, &path, 4 << 20, 16, 7);
        assert!(out.error.is_none(), "{:?}", out.error.map(|e| e.to_string()));
        assert_eq!(out.data_ops, ops);
        let recorded: u64 =
            [OpKind::Read, OpKind::Write].iter().map(|k| out.hist.0[k.index()].len()).sum();
        assert_eq!(recorded, ops, "one latency record per op");
    }
    assert_eq!(MOST.load(std::sync::atomic::Ordering::Relaxed), 16);
    assert_eq!(SYNCS_WITH_IO_IN_FLIGHT.load(std::sync::atomic::Ordering::Relaxed), 0);
}

const MD: &str = r#"
[[test]]
id = "md"
name = "md-absolute"
threads = 1
fileset = { tree = { depth = 2, fanout = 2, files_per_dir = 13 }, size = "0", paths = "PATHS", name_prefix = "NAME" }

[[test.phase]]
name = "create"
pattern = [{ op = "create" }]
amount = { passes = 1 }

[[test.phase]]
name = "stat"
pattern = [{ op = "stat" }]
amount = { passes = 1 }

[[test.phase]]
name = "remove"
pattern = [{ op = "unlink" }]
amount = { passes = 1 }
"#;

/// The psync engine's calls, recording the paths they were given.
struct PathsSeen;

static PATHS_SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn seen(p: &std::ffi::CStr) {
    PATHS_SEEN.lock().unwrap().push(p.to_string_lossy().into_owned());
}

impl IoEngine for PathsSeen {
    const SPEC: &'static EngineSpec = &test_spec("paths-seen");
    type Options = ();
    fn options(_: &crate::model::job::EngineOptions) {}
    fn setup(_: u32, _: &()) -> std::io::Result<Self> {
        Ok(PathsSeen)
    }
    unsafe fn queue(&mut self, _: Io) -> std::io::Result<()> {
        unreachable!("fileset ops do not queue")
    }
    fn reap(&mut self, _: usize, _: &mut [Completion]) -> std::io::Result<usize> {
        Ok(0)
    }
    fn openat(
        &mut self,
        dir: std::os::fd::BorrowedFd<'_>,
        path: &std::ffi::CStr,
        flags: rustix::fs::OFlags,
        mode: rustix::fs::Mode,
    ) -> Result<std::os::fd::OwnedFd, rustix::io::Errno> {
        seen(path);
        rustix::fs::openat(dir, path, flags, mode)
    }
    fn statat(
        &mut self,
        dir: std::os::fd::BorrowedFd<'_>,
        path: &std::ffi::CStr,
    ) -> Result<u64, rustix::io::Errno> {
        seen(path);
        rustix::fs::statat(dir, path, rustix::fs::AtFlags::empty()).map(|s| s.st_size as u64)
    }
    fn unlinkat(
        &mut self,
        dir: std::os::fd::BorrowedFd<'_>,
        path: &std::ffi::CStr,
        flags: rustix::fs::AtFlags,
    ) -> Result<(), rustix::io::Errno> {
        seen(path);
        rustix::fs::unlinkat(dir, path, flags)
    }
}

/// `paths = "absolute"` names every file from `/` (as mdtest's `stat(path)` does), through the
/// set's tree; the default names it below the set's directory fd. Both do every op, on files
/// named by `name_prefix`.
#[test]
fn fileset_paths_are_absolute_or_relative_to_the_sets_directory() {
    use super::files::absolute_base;
    use super::fileset::{FsCounters, SlotState, SlotWork};
    for (mode, name) in [("absolute", "file.mdtest.0."), ("relative", "f")] {
        let s = suite(&MD.replace("PATHS", mode).replace("NAME", name));
        let t = &s.tests[0];
        let dir = tempfile::tempdir().unwrap();
        // Canonical (TMPDIR may hold a symlink): the absolute paths are where the set really is.
        let real = dir.path().canonicalize().unwrap().join("set");
        std::fs::create_dir(&real).unwrap();
        let root: std::os::fd::OwnedFd = std::fs::File::open(&real).unwrap().into();
        // As the runner names a set's root: through its workspace's fd, a magic link whose
        // lookups cost far more than a directory's (absolute paths must not go through it).
        let root_path = std::path::PathBuf::from(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&root)
        ));
        let mut slots = SlotState::new(t.files.count);
        let counters = [FsCounters::default()];
        let stop_phase = AtomicBool::new(false);
        let stop = StopFlags { phase: &stop_phase, signal: &AtomicBool::new(false) };
        let ctr = PaddedCounter::default();
        PATHS_SEEN.lock().unwrap().clear();
        let base = match mode {
            "absolute" => Some(absolute_base(std::os::fd::AsFd::as_fd(&root)).unwrap()),
            _ => None,
        };
        for phase in &t.phases {
            let work = SlotWork {
                fileset: &t.files,
                root: &root,
                root_path: &root_path,
                absolute: base.as_deref(),
                verify: None,
                thread: 0,
                threads: 1,
                fill: None,
                counters: &counters,
                slots: &mut slots,
            };
            let mut plan = WorkerPlan {
                phase,
                seed: 7,
                compress_percent: 0,
                iodepth: 1,
                work: Work::Slots(work),
                over_time: Default::default(),
                thread_index: 0,
            };
            let out = worker::run::<PathsSeen>(&mut plan, &(), &Barrier::new(1), &stop, &ctr.0);
            assert!(out.error.is_none(), "{mode}: {:?}", out.error.map(|e| e.to_string()));
        }
        let paths = std::mem::take(&mut *PATHS_SEEN.lock().unwrap());
        // 52 slots in 4 leaves (13 files per leaf): a create, a stat and an unlink each, and
        // the first create of each leaf twice (it finds no directory, makes it, and retries).
        let files: Vec<&String> = paths.iter().filter(|p| p.contains("/f")).collect();
        assert_eq!(files.len(), 3 * 52 + 4, "{mode}: {paths:?}");
        let real_s = real.to_str().unwrap();
        for p in &files {
            match mode {
                "absolute" => assert!(p.starts_with(&format!("{real_s}/d")), "{p}"),
                _ => assert!(p.starts_with('d') && !p.contains(real_s), "{p}"),
            }
        }
        let last = format!("d1/d0/{name}12");
        assert!(paths.iter().any(|p| p.ends_with(&last)), "{mode}: {paths:?}");
        assert_eq!(std::fs::read_dir(real.join("d1/d0")).unwrap().count(), 0, "{mode}");
    }
}

/// `paths = "absolute"` gives up the directory fd's protection against a swapped name, so a set
/// under a directory others can write without the sticky bit, or one another user owns, is
/// refused, as is a set whose directory is gone; under a sticky one (as /tmp) it runs.
#[test]
fn absolute_paths_are_refused_where_another_user_could_redirect_them() {
    use super::files::absolute_base;
    use std::os::fd::AsFd;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().canonicalize().unwrap().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let set = shared.join("set");
    std::fs::create_dir(&set).unwrap();
    let open =
        |p: &std::path::Path| -> std::os::fd::OwnedFd { std::fs::File::open(p).unwrap().into() };
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = absolute_base(open(&set).as_fd()).unwrap_err();
    assert!(e.is_bad_input(), "the workload's to change: {e:?}");
    let e = e.to_string();
    assert!(e.contains("writable by others without the sticky bit") && e.contains("shared"), "{e}");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    assert_eq!(absolute_base(open(&set).as_fd()).unwrap(), set);
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(absolute_base(open(&set).as_fd()).unwrap(), set);
    let fd = open(&set);
    std::fs::remove_dir(&set).unwrap();
    let e = absolute_base(fd.as_fd()).unwrap_err().to_string();
    assert!(e.contains("no longer reachable"), "{e}");
    // A directory of another user's on the way (its owner may swap what is in it): refused.
    if rustix::process::geteuid().is_root() {
        std::fs::create_dir(&set).unwrap();
        std::os::unix::fs::chown(&shared, Some(65534), Some(65534)).unwrap();
        let e = absolute_base(open(&set).as_fd()).unwrap_err();
        assert!(e.is_bad_input(), "the workload's to change: {e:?}");
        let e = e.to_string();
        assert!(e.contains("belongs to uid 65534") && e.contains("shared"), "{e}");
    }
}

/// A data test whose phase opens a file nothing made (O_TRUNC without O_CREAT).
const OPENS_NOTHING: &str = r#"
[[test]]
id = "o"
name = "opens-nothing"
file = { size = "1M", prefill = false }

[[test.phase]]
name = "r"
open = ["trunc"]
pattern = [{ op = "read", size = "4K" }]
amount = { ops = 1 }
"#;

#[test]
fn a_failed_open_fails_the_test_with_a_typed_error_in_its_status() {
    use crate::model::failure::EngineError;
    let s = suite(OPENS_NOTHING);
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let opts = EngineOptions::default();
    let r = run_test(&s.tests[0], &target, &[], dir.path(), &opts, 0, 0..1, &NoProgress, &NoHooks);
    let TestStatus::Failed { reason } = &r.status else { panic!("{:?}", r.status) };
    let path = dir.path().join("to.dat");
    let words =
        format!("phase `r`: open {}: No such file or directory (os error 2)", path.display());
    assert_eq!(reason.as_str(), words, "the words users read, as before");
    let e = reason.error().expect("the typed error travels in the status");
    assert_eq!(e.errno(), Some(libc::ENOENT));
    assert!(
        matches!(e.root(), EngineError::Io { op, path: Some(p), .. } if op == "open" && *p == path)
    );
    assert!(!reason.is_bad_input(), "the test ran and an op failed");
    let json = serde_json::to_value(&r.status).unwrap();
    assert_eq!(json, serde_json::json!({ "state": "failed", "reason": words }), "JSON as before");
}

#[test]
fn absolute_paths_refused_here_fail_the_test_as_bad_input() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let s = suite(&MD.replace("PATHS", "absolute").replace("NAME", "f"));
    let target = Target::dir(&open);
    let opts = EngineOptions::default();
    let r = run_test(&s.tests[0], &target, &[], &open, &opts, 0, 0..1, &NoProgress, &NoHooks);
    let TestStatus::Failed { reason } = &r.status else { panic!("{:?}", r.status) };
    assert!(reason.contains("writable by others without the sticky bit"), "{reason}");
    assert!(reason.is_bad_input(), "nothing ran: the workload's to change: {:?}", reason.error());
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0, "nothing left behind");
}

const MAPPED: &str = r#"
[[test]]
id = "m"
name = "randread-map"
threads = 1
random_map = MAP
file = { size = "1M" }

[[test.phase]]
name = "randread"
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K" }]
amount = { bytes = "BYTES" }
"#;

/// The null engine, recording the offset of every read it is given.
struct Offsets {
    inner: Null,
}

static READ_OFFSETS: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

impl IoEngine for Offsets {
    const SPEC: &'static EngineSpec = &test_spec("offsets");
    type Options = ();
    fn options(_: &crate::model::job::EngineOptions) {}
    fn setup(depth: u32, _: &()) -> std::io::Result<Self> {
        Ok(Offsets { inner: Null::setup(depth, &())? })
    }
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        if io.kind == IoKind::Read {
            READ_OFFSETS.lock().unwrap().push(io.offset);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.queue(io) }
    }
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> std::io::Result<usize> {
        self.inner.reap(min, out)
    }
}

/// The read offsets of one run of MAPPED's phase, as `random_map` and the amount say, counted
/// per 4 KiB block of the 1 MiB file (256 blocks).
fn hits_per_block(map: bool, bytes: &str) -> Vec<u32> {
    let text = MAPPED.replace("MAP", &map.to_string()).replace("BYTES", bytes);
    let s = suite(&text);
    let phase = &s.tests[0].phases[0];
    assert_eq!(phase.random_map, map);
    let (_dir, path) = data_file(1 << 20);
    READ_OFFSETS.lock().unwrap().clear();
    let out = run_alone::<Offsets>(phase, &path, 1 << 20, 1, 11);
    assert!(out.error.is_none(), "{:?}", out.error.map(|e| e.to_string()));
    let offs = std::mem::take(&mut *READ_OFFSETS.lock().unwrap());
    let mut hits = vec![0u32; 256];
    for o in offs {
        assert_eq!(o % 4096, 0, "aligned: {o}");
        hits[(o / 4096) as usize] += 1;
    }
    hits
}

/// Op-exact: with `random_map`, a pass of random reads (the file's size in bytes) reads every
/// block exactly once, and two passes read each exactly twice; without it (the offsets drawn
/// with replacement) the same pass misses blocks and reads others twice.
#[test]
fn a_random_map_reads_each_block_once_per_pass() {
    let one = hits_per_block(true, "1M");
    assert!(one.iter().all(|&h| h == 1), "each block once: {one:?}");
    let two = hits_per_block(true, "2M");
    assert!(two.iter().all(|&h| h == 2), "each block twice in two passes: {two:?}");
    let drawn = hits_per_block(false, "1M");
    assert_eq!(drawn.iter().sum::<u32>(), 256);
    let missed = drawn.iter().filter(|&&h| h == 0).count();
    // Drawn with replacement, about 256/e = 94 blocks are never read.
    assert!(missed > 50, "with replacement some blocks are missed: {missed} of 256");
}

/// `invalidate_each_pass` drops the file's pages once per completed pass and not after the
/// last one (the phase is over): a sequential pass, a pass of the random map, and without a map
/// each file size of random bytes; without the key, never.
#[test]
fn invalidate_each_pass_drops_the_cache_once_per_pass() {
    let cases = [
        ("true", "", "[{ op = \"read\", size = \"4K\" }]", "3M", 2),
        (
            "true",
            "random_map = true",
            "[{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }]",
            "3M",
            2,
        ),
        (
            "true",
            "",
            "[{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\" }]",
            "5M",
            4,
        ),
        ("true", "", "[{ op = \"read\", size = \"4K\" }]", "1M", 0),
        ("false", "", "[{ op = \"read\", size = \"4K\" }]", "3M", 0),
    ];
    for (on, test_keys, pattern, bytes, drops) in cases {
        let text = format!("[[test]]\nid = \"i\"\nname = \"i\"\n{test_keys}\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"p\"\ninvalidate_each_pass = {on}\npattern = {pattern}\namount = {{ bytes = \"{bytes}\" }}\n");
        let s = suite(&text);
        let phase = &s.tests[0].phases[0];
        let (_dir, path) = data_file(1 << 20);
        let out = run_alone::<Null>(phase, &path, 1 << 20, 1, 3);
        assert!(out.error.is_none(), "{:?}", out.error.map(|e| e.to_string()));
        assert_eq!(out.invalidations, drops, "{on} {test_keys} {pattern} {bytes}");
    }
}

/// The null engine handing back one completion per reap, oldest first: fio's libaio on a
/// buffered file (`io_getevents(ctx, 1, 1)`, every request done inside its submission).
struct OneAtATime(Null);

impl IoEngine for OneAtATime {
    const SPEC: &'static EngineSpec = &test_spec("one-at-a-time");
    type Options = ();
    fn options(_: &crate::model::job::EngineOptions) {}
    fn setup(depth: u32, _: &()) -> std::io::Result<Self> {
        Ok(OneAtATime(Null::setup(depth, &())?))
    }
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.0.queue(io) }
    }
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> std::io::Result<usize> {
        self.0.reap(min, &mut out[..1])
    }
}

/// A time-based phase drops its file's pages at the wrap with the pass's last requests still
/// in flight, as fio's time-based job does (the queue stays full: one op issued at depth 1,
/// the first); a phase of bytes (fio's loops) waits for them first (the queue refills from
/// empty after each drop).
#[test]
fn a_time_based_phase_drops_at_the_wrap_with_requests_in_flight() {
    for (amount, drained) in [("seconds = 0.2", false), ("bytes = \"8M\"", true)] {
        let text = format!("[[test]]\nid = \"i\"\nname = \"i\"\nfile = {{ size = \"64K\" }}\n[[test.phase]]\nname = \"p\"\ninvalidate_each_pass = true\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ {amount} }}\n");
        let s = suite(&text);
        let phase = &s.tests[0].phases[0];
        let (_dir, path) = data_file(64 << 10);
        let out = run_alone::<OneAtATime>(phase, &path, 64 << 10, 4, 3);
        assert!(out.error.is_none(), "{:?}", out.error.map(|e| e.to_string()));
        let drops = out.invalidations;
        assert!(drops >= 10, "{amount}: {drops} drops");
        // Ops issued with nothing in flight: the first, and after each drained drop.
        let from_empty = out.depths.level[0];
        let want = if drained { drops + 1 } else { 1 };
        assert_eq!(from_empty, want, "{amount}: {drops} drops, {:?}", out.depths);
    }
}

/// fio's jobs of one group as roles: a role with an amount of its own moves all of it on its
/// own engine and depth (the phase waits for it, long after the foreground is done), one
/// without is stopped with the foreground, and a role's `delay` holds its start back.
const GROUP: &str = r#"
[[test]]
id = "g"
name = "group"
engine = "null"
file = { size = "1M" }

[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K" }]
amount = { seconds = 0.1 }

[[test.role]]
name = "own"
threads = 2
engine = "null"
iodepth = 8
delay = 0.3
file = { size = "1M" }
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K" }]
amount = { ops = 20000 }

[[test.role]]
name = "beside"
file = { size = "1M", prefill = false }
open = ["create"]
pattern = [{ op = "write", size = "4K" }]
"#;

#[test]
fn a_role_with_its_own_amount_is_waited_for_on_its_own_engine_after_its_delay() {
    let s = suite(GROUP);
    let t = &s.tests[0];
    let own = &t.roles[0];
    assert_eq!((own.engine.name(), own.iodepth, own.own_amount), ("null", 8, true));
    assert_eq!((t.roles[1].engine.name(), t.roles[1].own_amount), ("psync", false));
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let opts = EngineOptions::default();
    let t0 = std::time::Instant::now();
    let r = run_test(t, &target, &[], dir.path(), &opts, 0, 0..1, &NoProgress, &NoHooks);
    let took = t0.elapsed();
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let p = &r.reps[0].phases[0];
    let fg = p.wall_nanos as f64 / 1e9;
    assert!((0.09..0.25).contains(&fg), "the foreground ran its own 0.1 s: {fg}");
    let (own, beside) = (&p.roles[0], &p.roles[1]);
    assert_eq!(own.data_ops, 2 * 20_000, "each thread of the role moved all of its amount");
    assert_eq!(own.bytes_read, 2 * 20_000 * 4096);
    assert!(took >= std::time::Duration::from_millis(300), "the role's delay: {took:?}");
    assert!(beside.data_ops > 0 && beside.bytes_written > 0, "{beside:?}");
    // The foreground's 0.1 s end well before the other role's 0.3 s delay.
    assert!(
        beside.wall_nanos < 300_000_000,
        "a role without an amount stops with the foreground, not with the group: {beside:?}"
    );
}

/// `amount.seconds` beside bytes is a time cap (fio's size and runtime without time_based):
/// a phase (and a role with its own amount) far from its bytes ends at the cap, and says so.
#[test]
fn a_time_cap_ends_a_phase_and_a_role_before_their_bytes() {
    let text = r#"
[[test]]
id = "c"
name = "capped"
engine = "null"
file = { size = "1M" }

[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K" }]
amount = { bytes = "64T", seconds = 0.3 }

[[test.role]]
name = "w"
engine = "null"
file = { size = "1M", prefill = false }
open = ["create"]
pattern = [{ op = "write", size = "4K" }]
amount = { bytes = "64T", seconds = 0.5 }
"#;
    let s = suite(text);
    let t = &s.tests[0];
    assert_eq!(t.phases[0].max_seconds, Some(0.3));
    assert_eq!(t.roles[0].phase.max_seconds, Some(0.5));
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let t0 = std::time::Instant::now();
    let r = run_test(
        t,
        &target,
        &[],
        dir.path(),
        &EngineOptions::default(),
        0,
        0..1,
        &NoProgress,
        &NoHooks,
    );
    let took = t0.elapsed();
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let p = &r.reps[0].phases[0];
    assert_eq!(p.ended_by.as_deref(), Some(super::results::TIME_CAP));
    let secs = p.wall_nanos as f64 / 1e9;
    // The cap counts from the workers' spawn, before their set-up: a little of it is untimed.
    assert!((0.1..5.0).contains(&secs), "the phase ran {secs} s");
    assert!(p.bytes_read > 0 && p.bytes_read < 64 << 40);
    let w = &p.roles[0];
    assert!(w.bytes_written > 0 && w.bytes_written < 64 << 40, "{w:?}");
    // Longer than the foreground's 0.3 s cap (each counts from its spawn, before set-up).
    assert!(w.wall_nanos >= 350_000_000, "the role ran to its own cap: {w:?}");
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
}

/// A read entry with `write_percent` (fio's randrw) issues writes with that probability, drawn
/// per op: 30% of 20,000 ops within 2%, every op counted once.
#[test]
fn a_mixed_read_draws_each_ops_direction() {
    let text = r#"
[[test]]
id = "m"
name = "mixed"
engine = "null"
file = { size = "1M" }

[[test.phase]]
name = "randrw"
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K", write_percent = 30 }]
amount = { ops = 20000 }
"#;
    let s = suite(text);
    let t = &s.tests[0];
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let r = run_test(
        t,
        &target,
        &[],
        dir.path(),
        &EngineOptions::default(),
        0,
        0..1,
        &NoProgress,
        &NoHooks,
    );
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let p = &r.reps[0].phases[0];
    let (reads, writes) = (count(p, OpKind::Read), count(p, OpKind::Write));
    assert_eq!(reads + writes, 20_000);
    let share = writes as f64 / 20_000.0;
    assert!((share - 0.30).abs() < 0.02, "{writes} writes of 20000");
    assert_eq!(p.bytes_written, writes * 4096);
    assert_eq!(p.bytes_read, reads * 4096);
}

/// A role is paced as a phase: 30 ops at 100 per second take about 0.3 s.
#[test]
fn a_role_keeps_its_fixed_rate() {
    let text = r#"
[[test]]
id = "p"
name = "paced"
engine = "null"
file = { size = "1M" }

[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "4K" }]
amount = { ops = 1 }

[[test.role]]
name = "slow"
engine = "null"
file = { size = "1M" }
pattern = [{ op = "read", size = "4K" }]
amount = { ops = 30 }
rate_iops = 100
"#;
    let s = suite(text);
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let t = &s.tests[0];
    let r = run_test(
        t,
        &target,
        &[],
        dir.path(),
        &EngineOptions::default(),
        0,
        0..1,
        &NoProgress,
        &NoHooks,
    );
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let role = &r.reps[0].phases[0].roles[0];
    assert_eq!(role.data_ops, 30);
    let secs = role.wall_nanos as f64 / 1e9;
    assert!(secs >= 0.28, "30 ops at 100/s ran in {secs} s: not paced");
}

/// `rate_process = "poisson"` reaches the pacer of a phase and of a role (fio's
/// `rate_process`), and a Poisson-paced phase keeps its mean rate: 200 ops at 2000 per second
/// take about 0.1 s (the sum of 200 exponential gaps of 0.5 ms: standard deviation about 7 ms).
#[test]
fn poisson_arrivals_reach_phase_and_role_and_keep_the_mean_rate() {
    let text = r#"
[[test]]
id = "p"
name = "poisson"
engine = "null"
file = { size = "1M" }

[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "4K" }]
amount = { ops = 200 }
rate_iops = 2000
rate_process = "poisson"

[[test.role]]
name = "beside"
engine = "null"
file = { size = "1M" }
pattern = [{ op = "read", size = "4K" }]
amount = { ops = 20 }
rate_iops = 1000
rate_process = "poisson"
"#;
    let s = suite(text);
    let t = &s.tests[0];
    assert!(t.phases[0].load.poisson, "{:?}", t.phases[0].load);
    assert!(t.roles[0].phase.load.poisson, "{:?}", t.roles[0].phase.load);
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let r = run_test(
        t,
        &target,
        &[],
        dir.path(),
        &EngineOptions::default(),
        0,
        0..1,
        &NoProgress,
        &NoHooks,
    );
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let p = &r.reps[0].phases[0];
    assert_eq!(p.data_ops, 200);
    assert_eq!(p.roles[0].data_ops, 20);
    let secs = p.wall_nanos as f64 / 1e9;
    assert!(secs >= 0.07, "200 ops at a mean of 2000/s ran in {secs} s: not paced");
}

/// fio's `wait_for` inside a group: a role with `after` starts once the test's own threads (or
/// the role it names) are done, so its run begins after theirs ended.
#[test]
fn a_role_after_another_starts_when_it_is_done() {
    let text = r#"
[[test]]
id = "a"
name = "after"
engine = "null"
file = { size = "1M" }

[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "4K" }]
amount = { seconds = 0.2 }

[[test.role]]
name = "second"
engine = "null"
file = { size = "1M" }
pattern = [{ op = "read", size = "4K" }]
amount = { seconds = 0.2 }
after = "a"

[[test.role]]
name = "third"
engine = "null"
file = { size = "1M" }
pattern = [{ op = "read", size = "4K" }]
amount = { ops = 10 }
after = "second"
"#;
    let s = suite(text);
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let t0 = std::time::Instant::now();
    let r = run_test(
        &s.tests[0],
        &target,
        &[],
        dir.path(),
        &EngineOptions::default(),
        0,
        0..1,
        &NoProgress,
        &NoHooks,
    );
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let p = &r.reps[0].phases[0];
    assert_eq!(p.roles[1].data_ops, 10);
    // 0.2 s of the test's threads, then 0.2 s of the second, then the third: one after another.
    assert!(took >= 0.4, "the roles waited for nothing: {took} s");
}

/// The null engine submitting apart in batches of 4, each submission taking at least
/// [`BATCH_NANOS`] (a spin): fio's libaio with `iodepth_batch_submit=4`, with a known cost.
struct Batching {
    inner: Null,
    unsubmitted: usize,
}

/// How long each batch's submission takes, at least.
const BATCH_NANOS: u64 = 100_000;

/// The time [`Batching`]'s submissions took in all, and their number (only the test of
/// submission latency runs it).
static BATCH_SPENT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static BATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl IoEngine for Batching {
    const SPEC: &'static EngineSpec = &test_spec("batching");
    const SUBMITS_APART: bool = true;
    type Options = ();
    fn options(_: &crate::model::job::EngineOptions) {}
    fn setup(depth: u32, _: &()) -> std::io::Result<Self> {
        Ok(Batching { inner: Null::setup(depth, &())?, unsubmitted: 0 })
    }
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.queue(io)? };
        self.unsubmitted += 1;
        if self.unsubmitted == 4 {
            let t = std::time::Instant::now();
            while t.elapsed().as_nanos() < u128::from(BATCH_NANOS) {
                std::hint::spin_loop();
            }
            BATCH_SPENT.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            BATCHES.fetch_add(1, Ordering::Relaxed);
            self.unsubmitted = 0;
        }
        Ok(())
    }
    fn unsubmitted(&self) -> usize {
        self.unsubmitted
    }
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> std::io::Result<usize> {
        self.unsubmitted = 0;
        self.inner.reap(min, out)
    }
}

/// An engine that submits apart gets each op's submission latency (start to the return of the
/// call that submitted it) and completion latency (from there) recorded apart, once per op,
/// beside its latency, which is their sum; a synchronous engine records none.
#[test]
fn an_engine_that_submits_apart_records_each_ops_submission_and_completion_latency() {
    let s = suite(QD16);
    let phase = &s.tests[0].phases[0];
    let (_dir, path) = data_file(4 << 20);
    let out = run_alone::<Batching>(phase, &path, 4 << 20, 16, 7);
    assert!(out.error.is_none(), "{:?}", out.error.map(|e| e.to_string()));
    assert_eq!(out.data_ops, 5000);
    let split = out.split.as_ref().expect("a recorder for an engine that submits apart");
    let reads = split.splits();
    assert_eq!(reads.len(), 1, "reads only");
    let r = &reads[0];
    assert_eq!((r.op, r.slat.count, r.clat.count), (OpKind::Read, 5000, 5000));
    // Every op waited at least for its batch's submission.
    assert!(r.slat.min_nanos >= BATCH_NANOS, "{:?}", r.slat);
    // And for no earlier batch's: an op queued after a submission starts at its return (fio
    // stamps each request as it is prepared), not at the last reap, which would put 1 to 4
    // batches in the slat of each round's ops (a mean of 2.5 batches).
    let batch = BATCH_SPENT.load(Ordering::Relaxed) as f64 / BATCHES.load(Ordering::Relaxed) as f64;
    assert!(r.slat.mean_nanos < 1.5 * batch + 20_000.0, "{:?}, a batch {batch} ns", r.slat);
    // lat = slat + clat for every op, so for the means (histograms within 0.1%).
    let lat = &out.hist.summaries().into_iter().find(|l| l.op == OpKind::Read).unwrap();
    let sum = r.slat.mean_nanos + r.clat.mean_nanos;
    assert!((lat.mean_nanos - sum).abs() <= 0.002 * lat.mean_nanos + 2.0, "{lat:?} {r:?}");
    assert!(r.slat.max_nanos <= lat.max_nanos + lat.max_nanos / 500, "{lat:?} {r:?}");
    // fio's depth counts: 312 rounds of 16 requests queued at depths 1 to 16 and one of 8
    // (5000 in all); each batch of 4 one submit call; each reap takes what is done (all of a
    // round).
    let d = &out.depths;
    assert_eq!(d.level, [313, 626, 1252, 2497, 312, 0, 0], "{d:?}");
    assert_eq!(d.submit, [0, 1250, 0, 0, 0, 0, 0], "{d:?}");
    assert_eq!(d.complete, [0, 0, 1, 312, 0, 0, 0], "{d:?}");
    // The null engine, synchronous: nothing apart; each op a submission of one.
    let out = run_alone::<Null>(phase, &path, 4 << 20, 16, 7);
    assert!(out.error.is_none() && out.split.is_none());
    assert_eq!(out.depths.submit, [0, 5000, 0, 0, 0, 0, 0], "{:?}", out.depths);
}

/// A phase with a per-I/O log (`op_log`) gets a record of each data op, no sync, from every
/// worker, in the phase's result; a phase without has no recorder at all and no records.
#[test]
fn a_phase_with_a_per_io_log_records_each_data_op_and_no_other_phase_does() {
    let mut s = suite(QD16);
    s.tests[0].phases[1].op_log = true;
    let t = &s.tests[0];
    let dir = tempfile::tempdir().unwrap();
    let target = Target::dir(dir.path());
    let opts = EngineOptions::default();
    let r = run_test(t, &target, &[], dir.path(), &opts, 0, 0..1, &NoProgress, &NoHooks);
    assert_eq!(r.status, TestStatus::Ok, "{:?}", r.status);
    let (read, write) = (&r.reps[0].phases[0], &r.reps[0].phases[1]);
    assert!(read.op_log.is_none(), "{:?}", read.op_log);
    let log = write.op_log.as_ref().expect("the write phase's records");
    // 2 threads × 512 writes; their 12 fsyncs are not logged (fio logs reads and writes).
    assert_eq!((log.len(), log.dropped), (1024, 0));
    assert!(log.iter().all(|r| r.write && r.bytes == 4096 && r.offset % 4096 == 0));
    // Each thread writes its 2 MiB region once: every block of the file once.
    let mut offsets: Vec<u64> = log.iter().map(|r| r.offset).collect();
    offsets.sort_unstable();
    assert_eq!(offsets, (0..1024).map(|i| i * 4096).collect::<Vec<u64>>());
}

/// The worker's records of an engine that submits apart: one per op, in completion order,
/// each with its submission latency (at least the batch's) within its latency; the null
/// engine's are not apart; without `op_log` the worker has no recorder.
#[test]
fn the_worker_records_each_op_with_its_submission_when_asked() {
    let s = suite(QD16);
    let mut phase = s.tests[0].phases[0].clone();
    let (_dir, path) = data_file(4 << 20);
    let run = |phase: &crate::model::job::PhaseDef, batching: bool| {
        if batching {
            run_alone::<Batching>(phase, &path, 4 << 20, 16, 7)
        } else {
            run_alone::<Null>(phase, &path, 4 << 20, 16, 7)
        }
    };
    let out = run(&phase, true);
    assert!(out.error.is_none() && out.op_log.is_none(), "no log asked, no recorder");
    phase.op_log = true;
    let mut out = run(&phase, true);
    assert!(out.error.is_none(), "{:?}", out.error.map(|e| e.to_string()));
    let log = out.op_log.take().expect("a recorder").into_log();
    assert_eq!((log.len(), log.dropped), (5000, 0));
    assert!(log.iter().all(|r| !r.write && r.bytes == 4096 && r.offset < 4 << 20));
    assert!(log.iter().all(|r| r.apart() && r.slat_nanos >= BATCH_NANOS), "every op apart");
    assert!(log.iter().all(|r| r.slat_nanos + r.clat_nanos() == r.lat_nanos));
    let done: Vec<u64> = log.iter().map(|r| r.done_nanos).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "completion order");
    // Times count from the worker's release: the last op within the phase's wall time.
    let wall = out.end.duration_since(out.start).as_nanos() as u64;
    assert!(done[done.len() - 1] <= wall, "{} > {wall}", done[done.len() - 1]);
    let mut out = run(&phase, false);
    let log = out.op_log.take().expect("a recorder").into_log();
    assert_eq!(log.len(), 5000);
    assert!(log.iter().all(|r| !r.apart() && r.clat_nanos() == r.lat_nanos));
}
