//! Statistics: latency histograms ([`latency`]) and repetition summaries ([`summary`]).

pub mod latency;
pub mod summary;
