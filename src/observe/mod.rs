//! Observation: what happened underneath a test (block-device counters today).

pub mod blockstat;
pub mod host;
pub mod mountinfo;
