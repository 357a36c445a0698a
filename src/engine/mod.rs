//! The engine: runs validated tests against a [`Target`] and returns results.

mod target;

pub use target::{CacheControl, EvictError, PageCacheEvictor, Target};
