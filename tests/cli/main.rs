//! Integration tests that drive the real `fsbench` binary. One module per feature area; every
//! test gets its own directory from [`util::TestDir`].

mod bad_input;
mod compare;
mod curve;
mod figure;
mod fio;
mod fio_direct;
mod fio_exit;
mod fio_fadvise;
mod fio_fallocate;
mod fio_file;
mod fio_fill;
mod fio_libaio;
mod fio_persist;
mod fio_rate;
mod fio_sem;
mod fio_seq;
mod fio_share;
mod fio_sync;
mod fio_verify;
mod fsruns;
mod gaps;
mod guide;
mod integrity;
mod metadata;
mod outputs;
mod roles;
mod run;
mod security;
mod security2;
mod series;
mod signals;
mod store;
mod suite;
mod uring;
mod util;
