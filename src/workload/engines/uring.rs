//! `io_uring`, declared: requests queued in a submission ring, up to `iodepth` in flight, with
//! fio's batching, polling and registration options as keys of its own. The runtime half is
//! `crate::engine::ioengine::uring`; it reads the options through [`uring_opts`].

use super::{bool_or, int_or, Caps, EngineCheckError, EngineKeys, EngineSpec, TestCtx};
use crate::model::job::{EngineOptions, OptValue, UringOpts};
use crate::workload::keys::{key, with_bounds, with_default, Key, Section::Test, Type};

/// Largest queue depth (entries of the ring; fio's io_uring engine allows 4096 too).
pub const URING_MAX_DEPTH: u32 = 4096;

/// The `io_uring` engine.
pub const SPEC: EngineSpec = EngineSpec {
    name: "io_uring",
    summary: "requests queued in a ring, `iodepth` in flight, each submitted as it is queued (see `iodepth_batch`) and reaped as they complete, the file registered, completions posted when the thread waits for them (DEFER_TASKRUN, as fio; older kernels: COOP_TASKRUN or none; with `sqpoll`, none); short transfers resubmitted; data tests",
    caps: Caps {
        max_depth: URING_MAX_DEPTH,
        sync_io: false,
        direct: true,
        direct_align: 1,
        fileset: false,
    },
    keys: KEYS,
    options,
};

/// `iodepth_batch`.
pub const IODEPTH_BATCH: Key = with_bounds(
    key(Test, "iodepth_batch", Type::Int, "io_uring: submit once this many requests are queued (fio's `iodepth_batch`); default 1 as in fio (each request is submitted as soon as it is queued); at iodepth 1 the request is submitted with the wait for it, in one system call; iodepth_batch = iodepth submits everything queued at each reap"),
    1,
    4096,
);
/// `iodepth_batch_complete`.
pub const IODEPTH_BATCH_COMPLETE: Key = with_bounds(
    with_default(
        key(Test, "iodepth_batch_complete", Type::Int, "io_uring: wait for at least this many completions per reap (at most those in flight; fio's `iodepth_batch_complete_min`)"),
        "1",
    ),
    1,
    4096,
);
/// `sqpoll`.
pub const SQPOLL: Key = with_default(
    key(Test, "sqpoll", Type::Bool, "io_uring: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL; fio's `sqthread_poll`): no system call to submit; the poller's CPU is not in the test's CPU figures"),
    "false",
);
/// `iopoll`.
pub const IOPOLL: Key = with_default(
    key(Test, "iopoll", Type::Bool, "io_uring: completions are polled (IORING_SETUP_IOPOLL; fio's `hipri`); needs `direct = true` and a device with poll queues, else the test fails saying so"),
    "false",
);
/// `fixedbufs`.
pub const FIXEDBUFS: Key = with_default(
    key(Test, "fixedbufs", Type::Bool, "io_uring: register the worker's data buffers with the ring once (IORING_REGISTER_BUFFERS; fio's `fixedbufs`), so reads and writes are READ_FIXED/WRITE_FIXED and the kernel does not map and pin the pages per op. The buffers are locked in memory: without CAP_IPC_LOCK they must fit in `ulimit -l`, else the test fails saying so"),
    "false",
);
/// `registerfiles`.
pub const REGISTERFILES: Key = with_default(
    key(Test, "registerfiles", Type::Bool, "io_uring: register the test's file with the ring (IORING_REGISTER_FILES; fio's `registerfiles`), so requests name it by index and skip the file-table lookup per op; `false` names it by descriptor, as fio does by default"),
    "true",
);

/// The engine's keys, in the order the docs show them.
pub const KEYS: &[Key] =
    &[IODEPTH_BATCH, IODEPTH_BATCH_COMPLETE, SQPOLL, IOPOLL, FIXEDBUFS, REGISTERFILES];

/// The options, checked against the depth and O_DIRECT, with fio's defaults.
fn options(given: &EngineKeys, t: &TestCtx) -> Result<EngineOptions, EngineCheckError> {
    let iodepth = t.iodepth;
    // fio's default: each request goes to the kernel as soon as it is queued, so the device
    // never waits while the worker handles completions (at iodepth 16 on a RAM-backed loop
    // device, submitting at each reap instead gave 0.78x fio's IOPS; see
    // bench/results/2026-11-23-uring-vs-fio.md).
    // At depth 1 the one request goes in with the wait for it, in one system call.
    let batch_submit = int_or(given, IODEPTH_BATCH.name, u64::from(iodepth > 1));
    let batch_complete = int_or(given, IODEPTH_BATCH_COMPLETE.name, 1);
    for (k, v) in [(IODEPTH_BATCH.name, batch_submit), (IODEPTH_BATCH_COMPLETE.name, batch_complete)]
    {
        if v > u64::from(iodepth) {
            return Err(EngineCheckError::options(SPEC.name, format!("{k} = {v} is more than iodepth = {iodepth}: at most iodepth requests are ever queued")));
        }
    }
    if batch_complete == 0 {
        return Err(EngineCheckError::options(
            SPEC.name,
            "iodepth_batch_complete = 0 would never wait for a completion; use 1 or more",
        ));
    }
    let iopoll = bool_or(given, IOPOLL.name, false);
    if iopoll && !t.direct {
        return Err(EngineCheckError::options(
            SPEC.name,
            "iopoll = true polls for completions of O_DIRECT requests only; set direct = true",
        ));
    }
    let mut o = EngineOptions::default();
    o.set(IODEPTH_BATCH.name, OptValue::Int(batch_submit));
    o.set(IODEPTH_BATCH_COMPLETE.name, OptValue::Int(batch_complete));
    o.set(SQPOLL.name, OptValue::Bool(bool_or(given, SQPOLL.name, false)));
    o.set(IOPOLL.name, OptValue::Bool(iopoll));
    o.set(FIXEDBUFS.name, OptValue::Bool(bool_or(given, FIXEDBUFS.name, false)));
    o.set(REGISTERFILES.name, OptValue::Bool(bool_or(given, REGISTERFILES.name, true)));
    Ok(o)
}

/// The ring's options as [`options`] made them (an option missing: its default); the runtime
/// half and the fio export read them through this.
pub fn uring_opts(o: &EngineOptions) -> UringOpts {
    let d = UringOpts::default();
    let int = |k: &Key, d: u32| o.int(k.name).map_or(d, |n| n.min(u64::from(u32::MAX)) as u32);
    UringOpts {
        batch_submit: int(&IODEPTH_BATCH, d.batch_submit),
        batch_complete: int(&IODEPTH_BATCH_COMPLETE, d.batch_complete),
        sqpoll: o.bool(SQPOLL.name).unwrap_or(d.sqpoll),
        iopoll: o.bool(IOPOLL.name).unwrap_or(d.iopoll),
        fixedbufs: o.bool(FIXEDBUFS.name).unwrap_or(d.fixedbufs),
        registerfiles: o.bool(REGISTERFILES.name).unwrap_or(d.registerfiles),
    }
}
