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
