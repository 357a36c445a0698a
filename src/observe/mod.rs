//! Observation: what happened underneath a test. Always on and cheap: block-device counters
//! ([`blockstat`]), memory ([`memory`]), extent maps ([`extents`]). On request (`--trace`):
//! block-layer tracing through a tracefs instance of fsbench's own ([`trace`]). The facts derived
//! from them ([`facts`]) feed the explanations of `compare`.

pub mod blockstat;
pub mod compress;
pub mod extents;
pub mod memory;
/// See [`crate::sys::mountinfo`] (the one parser).
pub use crate::sys::mountinfo;
pub mod trace;
