//! `psync`, declared: synchronous `pread(2)`/`pwrite(2)`, one op at a time; no keys of its own.
//! The runtime half is `crate::engine::ioengine::psync`.

use super::{Caps, EngineSpec};

/// The `psync` engine.
pub const SPEC: EngineSpec = EngineSpec {
    name: "psync",
    summary: "pread/pwrite, one op at a time",
    caps: Caps { max_depth: 1, sync_io: true, direct: true, direct_align: 1, fileset: true },
    keys: &[],
    options: super::no_options,
};
