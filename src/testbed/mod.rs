//! Testbeds: filesystems on loop-backed image files (or explicitly named devices), their
//! lifecycle, and cleanup of what a crash left behind.
