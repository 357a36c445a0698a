//! The errors of the plug-ins' `fsbench integrity` side ([`super::FsIntegrity`]): a filesystem
//! that cannot be tested, and why a metadata block could not be located. They are not
//! [`crate::testbed::TestbedError`]s because they never stop a testbed: an untestable
//! filesystem is refused before anything is built, and a block that is not located ends one
//! case, whose note says why (with what the tools printed).

use crate::sys::cmd::CmdError;
use std::path::PathBuf;

/// A filesystem `fsbench integrity` cannot test, and what to test instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{fs} {why}; {instead}")]
pub struct Untestable {
    /// The filesystem (`tmpfs`).
    pub fs: &'static str,
    /// Why its blocks cannot be damaged, after its name (`has no device to corrupt`).
    pub why: &'static str,
    /// What to test instead.
    pub instead: &'static str,
}

impl crate::sys::classify::Classify for Untestable {
    /// Which filesystem to test is the user's choice: nothing is run (exit code 2).
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Why a metadata block could not be located (recorded as the case's note).
#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    /// The filesystem is not tested at all.
    #[error(transparent)]
    Untestable(#[from] Untestable),
    /// The filesystem's plug-in does not locate blocks of this kind.
    #[error("{target} blocks are not located on {fs}")]
    NotLocated {
        /// The kind of block (`indirect`).
        target: &'static str,
        /// The filesystem.
        fs: &'static str,
    },
    /// The testbed has no loop device for the tools to read.
    #[error("the testbed has no loop device for {tool} to read")]
    NoDevice {
        /// The tool that would have read it.
        tool: &'static str,
    },
    /// A tool named a device the testbed has no image for.
    #[error("the testbed has no image for device {device}")]
    NoImage {
        /// The device's index.
        device: usize,
    },
    /// A zfs testbed whose pool (or the directory of its device links) is not known.
    #[error("a zfs testbed without a pool")]
    NoPool,
    /// A tool could not be run (with why: not installed, timed out, interrupted).
    #[error(transparent)]
    Cmd(#[from] CmdError),
    /// A tool ran and failed.
    #[error("`{cmdline}` failed ({status}): {output}")]
    Failed {
        /// The command line.
        cmdline: String,
        /// Its exit status.
        status: String,
        /// What it printed (stdout and stderr).
        output: String,
    },
    /// The tools' output does not name the block: what is missing, with what they said.
    #[error("{0}")]
    Unlocated(String),
    /// An image's size could not be read.
    #[error("reading the size of {path}: {source}")]
    Image {
        /// The image.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A copy the tools named could not be read back from its image.
    #[error("{what} {path}: {source}")]
    Read {
        /// What was being done (`opening`, `reading`).
        what: &'static str,
        /// The image.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl crate::sys::classify::Classify for MetaError {
    /// The tools and images of fsbench's own testbed, not the user's input (but a filesystem
    /// that is not tested at all is the user's choice).
    fn is_bad_input(&self) -> bool {
        matches!(self, MetaError::Untestable(_))
    }
}
