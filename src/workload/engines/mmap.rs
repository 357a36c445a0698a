//! `mmap`, declared: reads and writes through a shared mapping of the file, one op at a time;
//! data tests whose file is prefilled (the mapping covers the file as a phase finds it); no
//! keys of its own. The runtime half is `crate::engine::ioengine::mmap`.

use super::{Caps, EngineCheckError, EngineKeys, EngineSpec, TestCtx};
use crate::model::job::EngineOptions;

/// The `mmap` engine.
pub const SPEC: EngineSpec = EngineSpec {
    name: "mmap",
    summary: "reads and writes copy from and into a shared mapping of the file, syncs are msync; data tests with `file.prefill = true`",
    caps: Caps { max_depth: 1, sync_io: true, direct: false, direct_align: 4096, fileset: false },
    keys: &[],
    options,
};

/// A data test's file must be prefilled: the mapping covers the file as a phase finds it.
fn options(_given: &EngineKeys, t: &TestCtx) -> Result<EngineOptions, EngineCheckError> {
    if !t.fileset && !t.prefill {
        return Err(EngineCheckError::options(SPEC.name, "engine = \"mmap\" maps the file as it is when a phase starts, so it needs file.prefill = true (a file that grows would need a new mapping per write)"));
    }
    Ok(EngineOptions::default())
}
