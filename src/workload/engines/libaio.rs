//! `libaio`, declared: Linux native AIO (`io_submit(2)`/`io_getevents(2)`), up to `iodepth` in
//! flight, as fio's `libaio` engine with its defaults; no keys of its own. The runtime half is
//! `crate::engine::ioengine::libaio`.
//!
//! Linux completes native AIO asynchronously only on files opened with O_DIRECT: on a buffered
//! file the kernel does the I/O inside `io_submit`, so such a test has one I/O being worked on
//! at a time whatever its `iodepth` (fio's job too: the engine is the same system calls).

use super::{Caps, EngineSpec};

/// Largest queue depth (the AIO context's events; fio's libaio takes any `iodepth`, the
/// kernel's `/proc/sys/fs/aio-max-nr` bounds what all contexts together may hold).
pub const LIBAIO_MAX_DEPTH: u32 = 4096;

/// The `libaio` engine.
pub const SPEC: EngineSpec = EngineSpec {
    name: "libaio",
    summary: "Linux native AIO (io_submit/io_getevents, as fio's libaio): `iodepth` in flight, each request submitted as it is queued, completions reaped one per io_getevents, syncs done inline (fio 3.33's engine with its defaults); asynchronous only with `direct = true` (on a buffered file the kernel does the I/O inside io_submit); data tests",
    caps: Caps {
        max_depth: LIBAIO_MAX_DEPTH,
        sync_io: false,
        direct: true,
        direct_align: 1,
        fileset: false,
    },
    keys: &[],
    options: super::no_options,
};
