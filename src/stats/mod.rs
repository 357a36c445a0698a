//! Statistics: latency histograms ([`latency`]), repetition summaries ([`summary`]) and the
//! significance tests behind verdicts ([`significance`]).

pub mod latency;
pub mod significance;
pub mod summary;
