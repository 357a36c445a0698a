//! Options shared by every command that builds testbeds, and the sizing rule.

use crate::testbed::{FsConfig, ImageAlloc, TestbedOptions, DEFAULT_WORKDIR};
use crate::workload::{size::fmt_bytes, Suite};
use clap::Args;
use std::path::PathBuf;

/// Where and how big the loop-backed images are.
#[derive(Debug, Clone, Args)]
pub struct TestbedArgs {
    /// Directory for image files and mount points (removed afterwards).
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

    /// How image files are allocated on the host once mkfs is done: `allocate` reserves every
    /// hole with fallocate (no data written; the host allocates no block during the benchmark,
    /// first writes still convert unwritten extents), `zero` writes zeros into every hole (every
    /// block allocated and written before the benchmark; costs writing the image once), `sparse`
    /// leaves the holes (fsbench 0.1: the first repetition pays for the host's allocation).
    #[arg(long, value_name = "MODE", value_enum, default_value = "allocate")]
    pub image_alloc: ImageAllocArg,
}

/// `--image-alloc` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImageAllocArg {
    /// fallocate the holes.
    Allocate,
    /// Write zeros into every hole.
    Zero,
    /// Leave the image sparse.
    Sparse,
}

impl From<ImageAllocArg> for ImageAlloc {
    fn from(a: ImageAllocArg) -> ImageAlloc {
        match a {
            ImageAllocArg::Zero => ImageAlloc::Zero,
            ImageAllocArg::Allocate => ImageAlloc::Allocate,
            ImageAllocArg::Sparse => ImageAlloc::Sparse,
        }
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::workload::size::parse_bytes(s)
}

impl TestbedArgs {
    /// Testbed options for `config`, sized for `suite`.
    pub fn options(&self, config: &FsConfig, suite: Option<&Suite>) -> TestbedOptions {
        let need = suite
            .map(|s| s.tests.iter().map(|t| t.footprint_bytes()).max().unwrap_or(0))
            .unwrap_or(0);
        let inodes = suite
            .map(|s| s.tests.iter().map(|t| t.inodes_needed()).max().unwrap_or(0))
            .unwrap_or(0);
        // ext2/3/4 fix one inode per 16 KiB of device at mkfs (mke2fs's default inode_ratio); 20
        // KiB per inode leaves room for the journal, metadata and reserved blocks.
        let auto = ((need as f64 * 1.5) as u64 + (256 << 20)).max(inodes * (20 << 10));
        let size = self.size.unwrap_or(auto).max(config.kind.min_device_bytes());
        TestbedOptions {
            workdir: self.workdir.clone(),
            size_bytes: size,
            remount_to_evict: self.remount_evict,
            image_alloc: self.image_alloc.into(),
            ..TestbedOptions::default()
        }
    }
}

/// One line describing a testbed's size, for messages.
pub fn describe(opts: &TestbedOptions, config: &FsConfig) -> String {
    format!(
        "{} on {} × {} image in {}",
        config.label,
        config.devices.max(1),
        fmt_bytes(opts.size_bytes),
        opts.workdir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{ResolveCtx, Scale, SuiteSource};

    fn args() -> TestbedArgs {
        TestbedArgs {
            workdir: "/var/tmp/x".into(),
            size: None,
            remount_evict: false,
            image_alloc: ImageAllocArg::Allocate,
        }
    }

    fn suite(name: &str) -> Suite {
        let ctx = ResolveCtx { scale: Scale::Quick, free_memory: 8 << 30 };
        crate::workload::load(&SuiteSource::Embedded(name.into()), &ctx).unwrap()
    }

    #[test]
    fn many_files_get_room_for_inodes() {
        let s = suite("metadata");
        let most = s.tests.iter().map(|t| t.inodes_needed()).max().unwrap();
        assert!(most >= 50_000, "{most}");
        let o = args().options(&FsConfig::parse("ext4").unwrap(), Some(&s));
        // ext4 makes one inode per 16 KiB: the image must hold them all.
        assert!(o.size_bytes / (16 << 10) > most, "{} bytes for {most} inodes", o.size_bytes);
    }

    #[test]
    fn fill_tests_are_not_inflated_by_their_slot_count() {
        let s = suite("images");
        let o = args().options(&FsConfig::parse("ext4").unwrap(), Some(&s));
        let need = s.tests.iter().map(|t| t.footprint_bytes()).max().unwrap();
        assert_eq!(o.size_bytes, (need as f64 * 1.5) as u64 + (256 << 20));
    }

    #[test]
    fn data_tests_are_sized_by_bytes_and_the_minimum() {
        let s = suite("unit14");
        let o = args().options(&FsConfig::parse("xfs").unwrap(), Some(&s));
        let need = s.tests.iter().map(|t| t.footprint_bytes()).max().unwrap();
        assert!(o.size_bytes >= need + need / 2);
        let o = args().options(&FsConfig::parse("xfs").unwrap(), None);
        assert!(o.size_bytes >= 300 << 20, "xfs minimum");
        let fixed = TestbedArgs { size: Some(1 << 30), ..args() };
        assert_eq!(fixed.options(&FsConfig::parse("ext4").unwrap(), Some(&s)).size_bytes, 1 << 30);
    }
}
