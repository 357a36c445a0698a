//! The model: plain data that every layer above shares, and nothing else.
//!
//! What a test is ([`job`]: suites, tests, phases, ops, as validation leaves them), what a run
//! found ([`result`]: the one result type every output is made from; [`failure`]: why a test
//! failed), what was observed around it ([`host`], [`facts`], [`memory`], [`extents`],
//! [`trace`]), what a comparison decided ([`verdict`], [`explanation`], [`report`]), what it ran
//! on ([`testbed`], [`cluster`]), how its threads are scheduled ([`sched`]), where its time
//! went ([`time`]), how a stored run ended ([`run`]), and the words for units ([`units`]).
//!
//! This layer imports only [`crate::sys`], [`crate::state`] and [`crate::stats`] (the layer
//! order is in `docs/design/architecture.md` and is checked by a test); code that *produces*
//! these values (reading `/proc`, tracing, running mkfs) lives in the layers above, often as an
//! `impl` block beside the code that measures.

pub mod block;
pub mod cluster;
pub mod curve;
pub mod explanation;
pub mod extents;
pub mod facts;
pub mod failure;
pub mod host;
pub mod integrity;
pub mod job;
pub mod latency;
pub mod memory;
pub mod oplog;
pub mod report;
pub mod result;
pub mod run;
pub mod scale;
pub mod sched;
pub mod series;
pub mod skew;
pub mod submit;
pub mod testbed;
pub mod time;
pub mod trace;
pub mod units;
pub mod verdict;
