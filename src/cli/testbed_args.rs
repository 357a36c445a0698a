//! Options shared by every command that builds testbeds (the sizing rule: [`crate::testbed::sizing`]; how images are allocated: [`crate::testbed::ImageAlloc`]).

use crate::model::job::Suite;
use crate::testbed::{FsConfig, ImageAlloc, TestbedOptions, DEFAULT_WORKDIR};
use clap::Args;
use std::path::PathBuf;

/// Where and how big the loop-backed images are.
#[derive(Debug, Clone, Args)]
pub struct TestbedArgs {
    /// Directory for image files and mount points (what fsbench makes there is removed
    /// afterwards).
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

    /// Testbeds of kernel filesystems: make a data test's phase uncached by also dropping every
    /// clean page, dentry and inode of the machine (`drop_caches`), as file sets always do.
    /// Without it only the test's own files' pages are dropped (fsync + fadvise DONTNEED, as
    /// fio's `invalidate`; verified with mincore, and `drop_caches` when they stayed resident),
    /// and other tests' cached files stay cached.
    #[arg(long)]
    pub drop_caches: bool,

    /// How image files are allocated on the host once mkfs is done: `allocate` reserves every
    /// hole with fallocate (no data written; the host allocates no block during the benchmark,
    /// first writes still convert unwritten extents), `zero` writes zeros into every hole (every
    /// block allocated and written before the benchmark; costs writing the image once), `sparse`
    /// leaves the holes (fsbench 0.1: the first repetition pays for the host's allocation).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = ImageAlloc::Allocate)]
    pub image_alloc: ImageAlloc,
}

fn parse_size(s: &str) -> Result<u64, String> {
    match crate::workload::size::parse_bytes(s).map_err(|e| e.to_string())? {
        // Was silently raised to the filesystem's minimum.
        0 => Err(format!("`{s}`: an image of 0 bytes holds no filesystem; give a size such as 512M (or leave --size out)")),
        n => Ok(n),
    }
}

impl TestbedArgs {
    /// Testbed options for `config`, sized for `suite` ([`crate::testbed::sizing`]).
    pub fn options(&self, config: &FsConfig, suite: Option<&Suite>) -> TestbedOptions {
        TestbedOptions {
            workdir: self.workdir.clone(),
            size_bytes: crate::testbed::sizing::image_bytes(config, suite, self.size),
            remount_to_evict: self.remount_evict,
            drop_caches: self.drop_caches,
            image_alloc: self.image_alloc,
            ..TestbedOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_carry_the_size_rule_and_the_image_allocation() {
        let a = TestbedArgs {
            workdir: "/var/tmp/x".into(),
            size: None,
            remount_evict: false,
            drop_caches: false,
            image_alloc: ImageAlloc::Zero,
        };
        let cfg = FsConfig::parse("xfs").unwrap();
        let o = a.options(&cfg, None);
        assert_eq!(o.image_alloc, ImageAlloc::Zero);
        assert_eq!(o.size_bytes, crate::testbed::sizing::image_bytes(&cfg, None, None));
        let fixed = TestbedArgs { size: Some(1 << 30), image_alloc: ImageAlloc::Sparse, ..a };
        let o = fixed.options(&FsConfig::parse("ext4").unwrap(), None);
        assert_eq!((o.size_bytes, o.image_alloc), (1 << 30, ImageAlloc::Sparse));
    }
}

/// `testbed up`'s options: a kept testbed has no suite to size it for and no phases to evict.
#[derive(Debug, Clone, Args)]
pub struct UpArgs {
    /// Directory for the image files and the mount point (kept until `fsbench testbed down`).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_WORKDIR)]
    pub workdir: PathBuf,

    /// Size of each image (e.g. 2G). Default: 1 GiB, or the filesystem's minimum if larger.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub size: Option<u64>,

    /// How image files are allocated on the host once mkfs is done: `allocate` (fallocate every
    /// hole, no data written), `zero` (write zeros into every hole) or `sparse` (leave them).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = ImageAlloc::Allocate)]
    pub image_alloc: ImageAlloc,
}

impl UpArgs {
    /// The shared testbed options these stand for.
    pub fn testbed(&self) -> TestbedArgs {
        TestbedArgs {
            workdir: self.workdir.clone(),
            size: self.size,
            remount_evict: false,
            drop_caches: false,
            image_alloc: self.image_alloc,
        }
    }
}
