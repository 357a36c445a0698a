//! The testbed's error type: which step failed, and the tool's own words when a command failed.

use super::config::ConfigError;
use super::device::Refusal;
use crate::sys::cmd::CmdError;
use std::path::PathBuf;

/// Everything that can go wrong while building, using or removing a testbed.
#[derive(Debug, thiserror::Error)]
pub enum TestbedError {
    /// The filesystem configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Not running as root.
    #[error(
        "{what} needs root (loop devices, mkfs, mount, zfs-fuse); run fsbench as root, or \
         compare directories that are already mounted, which works without root"
    )]
    NotRoot {
        /// What was attempted.
        what: String,
    },
    /// A program the testbed needs is not installed.
    #[error(
        "`{program}` not found: install the Debian package {package} (apt-get install {package})"
    )]
    MissingTool {
        /// The program looked up in PATH (plus the sbin directories).
        program: String,
        /// The Debian package that provides it.
        package: &'static str,
    },
    /// The host has no free loop device.
    #[error("no free loop device ({detail}); detach unused ones with `losetup -d` or run `fsbench testbed cleanup`")]
    NoLoopDevice {
        /// What `losetup --find` said.
        detail: String,
    },
    /// The work directory's filesystem cannot hold the images.
    #[error(
        "not enough space in {dir} for the testbed images: need {needed_bytes} bytes \
         ({needed_mib} MiB), {available_bytes} bytes ({available_mib} MiB) available; \
         use a smaller --size or another --workdir",
        needed_mib = needed_bytes >> 20,
        available_mib = available_bytes >> 20
    )]
    HostSpace {
        /// The work directory.
        dir: PathBuf,
        /// Bytes the images may grow to.
        needed_bytes: u64,
        /// Bytes available to root on that filesystem.
        available_bytes: u64,
    },
    /// An image is smaller than the filesystem kind accepts.
    #[error("{kind} needs devices of at least {min_mib} MiB, the image size is {size_mib} MiB; use a larger --size")]
    TooSmall {
        /// Filesystem kind name.
        kind: &'static str,
        /// Minimum size in MiB.
        min_mib: u64,
        /// Requested size in MiB.
        size_mib: u64,
    },
    /// A real device was refused.
    #[error("refusing to use {device}: {reason}")]
    DeviceRefused {
        /// The device as named by the user.
        device: PathBuf,
        /// Why.
        reason: Refusal,
    },
    /// An external command failed during a step; the command's stderr is in `source`.
    #[error("{step}: {source}")]
    Cmd {
        /// What fsbench was doing ("mkfs", "mount", "zpool create", ...).
        step: String,
        /// The failed command, with its stderr.
        #[source]
        source: CmdError,
    },
    /// A filesystem operation failed.
    #[error("{step} {}: {source}", path.display())]
    Io {
        /// What fsbench was doing.
        step: String,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A tool refused options the user gave (mkfs, mount or zfs options): bad input, exit 2.
    #[error("{step} refused the options given ({options}): {source}")]
    Rejected {
        /// What fsbench was doing.
        step: String,
        /// The user's options.
        options: String,
        /// The failed command, with its stderr.
        #[source]
        source: Box<TestbedError>,
    },
    /// A check of the system's state failed (something is not what fsbench created or expected).
    #[error("{0}")]
    Check(String),
    /// Several errors during teardown (each one is listed; teardown went on after each).
    #[error("teardown left errors:\n{}", .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Teardown(Vec<TestbedError>),
}

impl TestbedError {
    /// Whether the error is about what the user asked for (options, sizes, a device), so nothing
    /// was run and the exit code is 2.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            TestbedError::Config(_)
                | TestbedError::HostSpace { .. }
                | TestbedError::TooSmall { .. }
                | TestbedError::DeviceRefused { .. }
                | TestbedError::Rejected { .. }
        )
    }

    /// Wrap a failed command with the step it belonged to.
    pub fn cmd(step: impl Into<String>, source: CmdError) -> TestbedError {
        TestbedError::Cmd { step: step.into(), source }
    }

    /// Wrap an I/O error with the step and path.
    pub fn io(
        step: impl Into<String>,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> TestbedError {
        TestbedError::Io { step: step.into(), path: path.into(), source }
    }
}

/// Result alias for the testbed layer.
pub type Result<T, E = TestbedError> = std::result::Result<T, E>;

impl crate::sys::classify::Classify for TestbedError {
    fn is_bad_input(&self) -> bool {
        TestbedError::is_bad_input(self)
    }
}

impl crate::sys::classify::Classify for ConfigError {
    /// A configuration is what the user typed.
    fn is_bad_input(&self) -> bool {
        true
    }
}

impl crate::sys::classify::Classify for Refusal {
    /// A device the user named that fsbench refuses to touch.
    fn is_bad_input(&self) -> bool {
        true
    }
}
