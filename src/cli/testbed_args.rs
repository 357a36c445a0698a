//! Options shared by every command that builds testbeds, and the sizing rule.

use crate::testbed::{FsConfig, TestbedOptions, DEFAULT_WORKDIR};
use crate::workload::Suite;
use clap::Args;
use std::path::PathBuf;

/// Where and how big the loop-backed images are.
#[derive(Debug, Clone, Args)]
pub struct TestbedArgs {
    /// Directory for image files and mount points (sparse images; removed afterwards).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_WORKDIR)]
    pub workdir: PathBuf,

    /// Size of each image (e.g. 2G). Default: what the suite's largest test needs × 1.5 + 256 MiB,
    /// and for many-file tests at least 20 KiB per file (ext2/3/4 make one inode per 16 KiB at
    /// mkfs time), and at least the filesystem's minimum.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub size: Option<u64>,

    /// Kernel filesystems: also unmount and mount again to make a phase uncached (drops inodes
    /// and dentries as well as data pages). zfs always exports and imports its pool.
    #[arg(long)]
    pub remount_evict: bool,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::workload::size::parse_bytes(s)
}

impl TestbedArgs {
    /// Testbed options for `config`, sized for `suite` ([`crate::testbed::sizing`]).
    pub fn options(&self, config: &FsConfig, suite: Option<&Suite>) -> TestbedOptions {
        TestbedOptions {
            workdir: self.workdir.clone(),
            size_bytes: crate::testbed::sizing::image_bytes(config, suite, self.size),
            remount_to_evict: self.remount_evict,
            ..TestbedOptions::default()
        }
    }
}
