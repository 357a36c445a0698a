//! Op-exact checks of fio's offset modifier (`rw=read:N`, `rw_sequencer=identical`) and of
//! `rw=rw`, from the fio job through the translation and the worker: the offsets the worker
//! gives the engine, against the sequences fio 3.33 issued under strace on the same jobs
//! (64 KiB file, bs=4k; see `fio::translate::sequence`).

use super::ioengine::{Completion, Io, IoEngine, IoKind, Null};
use super::worker::{self, FileWork, PaddedCounter, StopFlags, Work, WorkerPlan};
use crate::model::scale::Scale;
use crate::workload::engines::EngineSpec;
use crate::workload::ResolveCtx;
use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::Barrier;

thread_local! {
    /// The (write?, offset) of every data op this thread's [`OpLog`] was given.
    static LOG: RefCell<Vec<(bool, u64)>> = const { RefCell::new(Vec::new()) };
}

/// The null engine, logging each data op's direction and offset (the worker runs in the
/// test's thread, so the log is the test's own).
struct OpLog {
    inner: Null,
}

const SPEC: EngineSpec = EngineSpec { name: "op-log", ..crate::workload::engines::null::SPEC };

impl IoEngine for OpLog {
    const SPEC: &'static EngineSpec = &SPEC;
    type Options = ();
    fn options(_: &crate::model::job::EngineOptions) {}
    fn setup(depth: u32, _: &()) -> std::io::Result<Self> {
        Ok(OpLog { inner: Null::setup(depth, &())? })
    }
    unsafe fn queue(&mut self, io: Io) -> std::io::Result<()> {
        if matches!(io.kind, IoKind::Read | IoKind::Write) {
            LOG.with(|l| l.borrow_mut().push((io.kind == IoKind::Write, io.offset)));
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.inner.queue(io) }
    }
    fn reap(&mut self, min: usize, out: &mut [Completion]) -> std::io::Result<usize> {
        self.inner.reap(min, out)
    }
}

/// The data ops (write?, offset) the worker issues for the fio job `job` on a file of the
/// job's size, one thread.
fn ops_of(job: &str) -> Vec<(bool, u64)> {
    let tr = crate::fio::translate::translate(job, "t.fio", "t", &|_| None)
        .unwrap_or_else(|e| panic!("{e}"));
    let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
    let s = crate::workload::validate::resolve(&tr.spec, "t.fio", &ctx)
        .unwrap_or_else(|e| panic!("{e}"));
    let t = &s.tests[0];
    let size = t.files.size.max();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::File::create(&path).and_then(|f| f.set_len(size)).unwrap();
    let stop_phase = AtomicBool::new(false);
    let stop = StopFlags { phase: &stop_phase, signal: &AtomicBool::new(false) };
    let ctr = PaddedCounter::default();
    let work = FileWork {
        path: &path,
        file_size: size,
        region_start: 0,
        region_len: size,
        verify: None,
        nofollow: false,
        random_in_region: false,
        more: None,
    };
    let phase = t.phases.last().unwrap();
    let mut plan = WorkerPlan {
        phase,
        seed: 5,
        compress_percent: 0,
        iodepth: 1,
        work: Work::File(work),
        over_time: Default::default(),
        thread_index: 0,
    };
    LOG.with(|l| l.borrow_mut().clear());
    let out = worker::run::<OpLog>(&mut plan, &(), &Barrier::new(1), &stop, &ctr.0);
    assert!(out.error.is_none(), "{:?}", out.error.map(|e| e.to_string()));
    LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

/// The offsets, in 4 KiB blocks.
fn blocks(ops: &[(bool, u64)]) -> Vec<u64> {
    ops.iter().map(|&(_, o)| o / 4096).collect()
}

#[test]
fn read_backwards_as_fio() {
    // fio 3.33, rw=read:-8k: 0, then from the end down to 0.
    let ops = ops_of("[a]\nsize=64k\nbs=4k\nrw=read:-8k\n");
    let want: Vec<u64> = std::iter::once(0).chain((0..15).rev()).collect();
    assert_eq!(blocks(&ops), want);
    assert!(ops.iter().all(|&(w, _)| !w));
}

#[test]
fn skips_forward_as_fio() {
    // fio 3.33, rw=read:8k: 0, 3, 6, ... 15 and the job ends (6 reads).
    assert_eq!(blocks(&ops_of("[a]\nsize=64k\nbs=4k\nrw=read:8k\n")), vec![0, 3, 6, 9, 12, 15]);
    // fio 3.33, rw=write:4k: 0, 2, ... 14, then again from 0 (16 writes, the job's size).
    let ops = ops_of("[a]\nsize=64k\nbs=4k\nrw=write:4k\n");
    let pass: Vec<u64> = (0..8).map(|b| b * 2).collect();
    assert_eq!(blocks(&ops), [pass.clone(), pass].concat());
    assert!(ops.iter().all(|&(w, _)| w));
}

#[test]
fn identical_sequencer_repeats_each_random_offset() {
    let ops = ops_of("[a]\nsize=64k\nbs=4k\nrw=randread:4\nrw_sequencer=identical\n");
    assert_eq!(ops.len(), 16);
    let b = blocks(&ops);
    for group in b.chunks(4) {
        assert!(group.iter().all(|&x| x == group[0]), "{b:?}");
    }
    // The random map: the 4 offsets are different blocks.
    let mut firsts: Vec<u64> = b.chunks(4).map(|g| g[0]).collect();
    firsts.sort();
    firsts.dedup();
    assert_eq!(firsts.len(), 4, "{b:?}");
}

#[test]
fn rw_mixes_within_2_percent_each_direction_with_its_own_position() {
    // 20,000 ops of 4 KiB over a 128 MiB file (sparse): no wrap, so each direction's offsets are exactly
    // 0, 4k, 8k, ... in order (fio's last_pos[ddir]).
    let ops = ops_of("[a]\nsize=128m\nbs=4k\nrw=rw\nrwmixread=60\nnumber_ios=20000\n");
    assert_eq!(ops.len(), 20_000);
    let reads: Vec<u64> = ops.iter().filter(|o| !o.0).map(|o| o.1).collect();
    let writes: Vec<u64> = ops.iter().filter(|o| o.0).map(|o| o.1).collect();
    let share = reads.len() as f64 / 20_000.0;
    assert!((share - 0.60).abs() < 0.02, "{} reads of 20000", reads.len());
    for (dir, offs) in [("reads", &reads), ("writes", &writes)] {
        assert!(
            offs.iter().enumerate().all(|(i, &o)| o == i as u64 * 4096),
            "{dir} do not each advance by one block from 0"
        );
    }
}

/// fio's `percentage_random=0` on a random job: every read starts where the previous one
/// ended, from the file's start (fio's `last_pos`), so a size-bound job reads the file in
/// order, as fio 3.33 does.
#[test]
fn percentage_random_0_reads_on_from_the_last_read() {
    let ops = ops_of("[a]\nsize=64k\nbs=4k\nrw=randread\npercentage_random=0\n");
    assert_eq!(blocks(&ops), (0..16).collect::<Vec<u64>>());
}

/// `percentage_random=R,W` per direction: with 0,100 a randrw's reads each start where the
/// previous read ended (whatever writes came between, fio's `last_pos[ddir]`), and its writes
/// are all random (the random map: each block at most once).
#[test]
fn percentage_random_shares_are_per_direction() {
    let ops = ops_of("[a]\nsize=1m\nbs=4k\nrw=randrw\npercentage_random=0,100\n");
    assert_eq!(ops.len(), 256);
    let reads: Vec<u64> = ops.iter().filter(|o| !o.0).map(|o| o.1 / 4096).collect();
    let mut writes: Vec<u64> = ops.iter().filter(|o| o.0).map(|o| o.1 / 4096).collect();
    assert!(reads.len() > 90 && writes.len() > 90, "{} reads", reads.len());
    assert_eq!(reads, (0..reads.len() as u64).collect::<Vec<u64>>());
    let in_order = writes.windows(2).filter(|w| w[1] == w[0] + 1).count();
    assert!(in_order < 10, "{in_order} of {} writes follow the previous one", writes.len());
    writes.sort();
    let n = writes.len();
    writes.dedup();
    assert_eq!(writes.len(), n, "a write block twice: not from the random map");
}

/// At the end of the file a sequential draw of a size-bound job takes a random offset instead
/// (fio's `get_next_block` with no position left), and goes on from there: with loops=3 (one
/// amount of 3 × 64 KiB in fsbench, where fio starts each loop over: the difference
/// `random-share-loops`) every read continues the previous one but those after a read of the
/// file's last block.
#[test]
fn percentage_random_falls_back_to_random_at_the_end() {
    let b = blocks(&ops_of("[a]\nsize=64k\nbs=4k\nrw=randread\npercentage_random=0\nloops=3\n"));
    assert_eq!(b.len(), 48);
    let mut restarts = 0;
    for w in b.windows(2) {
        if w[0] == 15 {
            restarts += 1;
        } else {
            assert_eq!(w[1], w[0] + 1, "{b:?}");
        }
    }
    assert!(restarts >= 2, "{b:?}");
}

/// Where a sequential draw starts: the previous end while the op fits in the region; past
/// its end a random offset (`None`), or in a time-based phase the region's start again (a pass).
#[test]
fn a_sequential_draw_starts_at_the_last_end_or_over() {
    use super::worker::continue_at;
    let region = (8192, 65536);
    assert_eq!(continue_at(8192, 4096, region, false), Some((8192, false)));
    assert_eq!(continue_at(69632, 4096, region, false), Some((69632, false)));
    assert_eq!(continue_at(73728, 4096, region, false), None);
    assert_eq!(continue_at(73728, 4096, region, true), Some((8192, true)));
    assert_eq!(continue_at(71680, 4096, region, true), Some((8192, true)), "no room for the op");
    assert_eq!(continue_at(0, 4096, region, false), None, "before the region");
}
