//! What an error says about who can fix it, so the command line can pick an exit code without
//! knowing every error type's variants.
//!
//! Every library error type implements [`Classify`]; `cli::exit_code` walks an error's chain of
//! causes and maps the first classified one to the README's exit-code table (2 for bad input,
//! 130 for an interruption, 1 for anything else). The trait lives in the lowest layer so that
//! every layer's errors can implement it.

/// Whether an error is the user's to fix (bad input) or a failure while running.
pub trait Classify {
    /// Whether what the user gave is at fault (arguments, a workload or job file, options the
    /// tools refuse, a database path, a run id): nothing was run, and the exit code is 2.
    fn is_bad_input(&self) -> bool;

    /// Whether the work stopped because of Ctrl-C or SIGTERM (exit code 130).
    fn is_interrupted(&self) -> bool {
        false
    }
}

impl Classify for super::cmd::CmdError {
    /// A command that failed is a failure of the system; where the options given to it were
    /// refused, the caller's error says so (e.g. the testbed's `Rejected`).
    fn is_bad_input(&self) -> bool {
        false
    }
}

impl Classify for super::secure::UnsafeDir {
    /// fsbench's own record directory is unsafe: the system's state, not the command's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}
