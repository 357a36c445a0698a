//! Result types.
