//! Integration tests that drive the real `fsbench` binary. One module per feature area; every
//! test gets its own directory from [`util::TestDir`].

mod bad_input;
mod compare;
mod figure;
mod fsruns;
mod gaps;
mod metadata;
mod run;
mod security;
mod signals;
mod store;
mod suite;
mod util;
