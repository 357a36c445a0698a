//! Observation: what happened underneath a test (block-device counters; block tracing on request).

pub mod blockstat;
pub mod host;
pub mod mountinfo;
pub mod trace;
