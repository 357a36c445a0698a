//! How big a testbed's images are made for a suite.
//!
//! The rule: what the suite's largest test needs × 1.5 + 256 MiB; for many-file tests at least
//! 20 KiB per file (ext2/3/4 fix one inode per 16 KiB of device at mkfs time, mke2fs's default
//! `inode_ratio`; 20 KiB per inode leaves room for the journal, metadata and reserved blocks);
//! and at least the filesystem's minimum.

use super::FsConfig;
use crate::model::job::Suite;

/// Image size for `config` running `suite` (None: no suite known yet), unless `fixed` (the
/// user's `--size`) says otherwise; never below the filesystem's minimum.
pub fn image_bytes(config: &FsConfig, suite: Option<&Suite>, fixed: Option<u64>) -> u64 {
    let need =
        suite.map(|s| s.tests.iter().map(|t| t.footprint_bytes()).max().unwrap_or(0)).unwrap_or(0);
    let inodes =
        suite.map(|s| s.tests.iter().map(|t| t.inodes_needed()).max().unwrap_or(0)).unwrap_or(0);
    let auto = ((need as f64 * 1.5) as u64 + (256 << 20)).max(inodes * (20 << 10));
    fixed.unwrap_or(auto).max(config.kind.min_device_bytes(config))
}

/// One line describing a testbed's size, for messages.
pub fn describe(opts: &super::TestbedOptions, config: &FsConfig) -> String {
    format!(
        "{} on {} × {} image in {}",
        config.label,
        config.devices.max(1),
        crate::model::units::fmt_bytes(opts.size_bytes),
        opts.workdir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scale::Scale;
    use crate::workload::{ResolveCtx, SuiteSource};

    fn suite(name: &str) -> Suite {
        let ctx = ResolveCtx { scale: Scale::Quick, free_memory: 8 << 30 };
        crate::workload::load(&SuiteSource::Embedded(name.into()), &ctx).unwrap()
    }

    fn cfg(s: &str) -> FsConfig {
        FsConfig::parse(s).unwrap()
    }

    #[test]
    fn many_files_get_room_for_inodes() {
        let s = suite("metadata");
        let most = s.tests.iter().map(|t| t.inodes_needed()).max().unwrap();
        assert!(most >= 50_000, "{most}");
        let size = image_bytes(&cfg("ext4"), Some(&s), None);
        // ext4 makes one inode per 16 KiB: the image must hold them all.
        assert!(size / (16 << 10) > most, "{size} bytes for {most} inodes");
    }

    #[test]
    fn fill_tests_are_not_inflated_by_their_slot_count() {
        let s = suite("images");
        let need = s.tests.iter().map(|t| t.footprint_bytes()).max().unwrap();
        assert_eq!(
            image_bytes(&cfg("ext4"), Some(&s), None),
            (need as f64 * 1.5) as u64 + (256 << 20)
        );
    }

    #[test]
    fn data_tests_are_sized_by_bytes_and_the_minimum() {
        let s = suite("unit14");
        let need = s.tests.iter().map(|t| t.footprint_bytes()).max().unwrap();
        assert!(image_bytes(&cfg("xfs"), Some(&s), None) >= need + need / 2);
        assert!(image_bytes(&cfg("xfs"), None, None) >= 300 << 20, "xfs minimum");
        assert_eq!(image_bytes(&cfg("ext4"), Some(&s), Some(1 << 30)), 1 << 30);
    }
}
