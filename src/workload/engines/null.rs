//! `null`, declared: every data and sync op completes at once without a system call (the
//! harness's own cost per op); any queue depth; no keys of its own. The runtime half is
//! `crate::engine::ioengine::null`.

use super::{Caps, EngineSpec};

/// Largest queue depth the null engine accepts (as the workload's `iodepth` bound).
pub const NULL_MAX_DEPTH: u32 = 4096;

/// The `null` engine.
pub const SPEC: EngineSpec = EngineSpec {
    name: "null",
    summary: "no I/O: every data and sync op completes at once, so the time per op is fsbench's own cost; opens and fileset ops stay real",
    caps: Caps {
        max_depth: NULL_MAX_DEPTH,
        sync_io: true,
        direct: true,
        direct_align: 1,
        fileset: true,
    },
    keys: &[],
    options: super::no_options,
};
