//! The `fsbench` command line.

/// Entry point of the binary; returns the process exit code.
pub fn main() -> i32 {
    0
}
