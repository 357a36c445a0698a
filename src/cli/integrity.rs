//! `fsbench integrity CONFIG...`: what each filesystem does with corrupted blocks.

use super::{ExitCode, UserError};
use crate::integrity::{self, Fault, IntegrityOptions};
use crate::testbed::{FsConfig, TestbedOptions, DEFAULT_WORKDIR};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

/// Output format of `fsbench integrity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IntegrityFormat {
    /// A matrix per configuration (block type × fault) and a line of evidence per case.
    Table,
    /// Every case with its evidence: block, offsets, copies, reads, tool output, kernel log.
    Json,
}

#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct IntegrityArgs {
    /// Filesystem configurations, e.g. `ext4 btrfs:profile=raid1:devices=2
    /// zfs:layout=mirror:devices=2 zfs:layout=raidz` (ext2/3/4, xfs, btrfs, zfs). Mirrors also
    /// get a row with every copy damaged; a 3-device raidz1 a row with the parity damaged.
    #[arg(required = true, value_name = "CONFIG")]
    pub configs: Vec<String>,

    /// Seed of the data set, the blocks chosen and the faults' bytes: the same seed repeats
    /// the same cases.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Also damage metadata blocks (directory blocks, inodes, tree nodes). These cases exercise
    /// the kernel's error paths for corrupted metadata: a kernel filesystem bug there can oops
    /// or hang the machine. Run them on a machine you can afford to reboot.
    #[arg(long)]
    pub metadata: bool,

    /// Faults to inject (comma-separated): zero, bitflip, garbage, stale.
    #[arg(long, value_delimiter = ',', default_value = "zero,bitflip,garbage,stale")]
    pub faults: Vec<Fault>,

    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = IntegrityFormat::Table)]
    pub format: IntegrityFormat,

    /// Directory for image files and mount points (sparse images; removed afterwards).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_WORKDIR)]
    pub workdir: PathBuf,

    /// Size of each image.
    #[arg(long, value_name = "SIZE", default_value = "512M", value_parser = parse_size)]
    pub size: u64,
}

const AFTER_HELP: &str = "\
For each configuration and each fault, on a fresh loop-backed testbed: write a known data set
(directories and files whose every 4 KiB block carries a header and checksum), unmount (or
export the pool), find the target block's copies in the image files by scanning for its header
(cross-checked with FIEMAP and btrfs map-logical), write the fault into fsbench's own image file,
mount again with cold caches, read everything back, run the filesystem's scrub or check
(e2fsck -fn, xfs_repair -n, btrfs scrub, zpool scrub), and read again.

Outcomes:
  silent       wrong data was returned without an error (or a listing lacked entries)
  detected     an error was reported (EIO, scrub/check, kernel log) and the data stayed lost
  repaired     an error was reported and the data read back correct in the end
  unavailable  mount/import failed, or opening/listing files or directories failed
  crash        zfs-fuse died, or the kernel logged an oops/BUG/warning
  unaffected   nothing was reported and every read was correct

Only image files fsbench created for the run are written to, only while the filesystem is
offline. Needs root. Examples:
  fsbench integrity ext4 xfs btrfs btrfs:profile=raid1:devices=2 zfs zfs:layout=mirror:devices=2
  fsbench integrity btrfs --faults zero --seed 7 --format json > btrfs.json";

fn parse_size(s: &str) -> Result<u64, String> {
    crate::workload::size::parse_bytes(s)
}

pub fn run(a: IntegrityArgs) -> anyhow::Result<ExitCode> {
    let configs = a
        .configs
        .iter()
        .map(|c| FsConfig::parse(c).map_err(|e| UserError(format!("{c}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    for c in &configs {
        integrity::validate(c).map_err(|e| UserError(e.to_string()))?;
    }
    if !crate::sys::is_root() {
        return Err(UserError(
            "integrity needs root (loop devices, mkfs, mount, zfs-fuse, writing into images)"
                .into(),
        )
        .into());
    }
    let opts = IntegrityOptions {
        seed: a.seed,
        metadata: a.metadata,
        faults: a.faults.clone(),
        testbed: TestbedOptions {
            workdir: a.workdir.clone(),
            size_bytes: a.size,
            ..TestbedOptions::default()
        },
    };
    let mut results = Vec::new();
    let mut out = std::io::stdout().lock();
    for cfg in &configs {
        let size = a.size.max(cfg.kind.min_device_bytes());
        let opts = IntegrityOptions {
            testbed: TestbedOptions { size_bytes: size, ..opts.testbed.clone() },
            ..opts.clone()
        };
        eprintln!("fsbench integrity: {} ...", cfg.label);
        let m = integrity::run_config(cfg, &opts, &mut |line| eprintln!("  {line}"));
        if a.format == IntegrityFormat::Table {
            // Printed as each configuration ends, so a later failure loses nothing.
            writeln!(out, "{}", m.render())?;
            out.flush()?;
        }
        results.push(m);
        if crate::sys::signals::interrupted() {
            break;
        }
    }
    if a.format == IntegrityFormat::Json {
        serde_json::to_writer_pretty(&mut out, &results)?;
        writeln!(out)?;
    }
    if crate::sys::signals::interrupted() {
        return Ok(ExitCode::Interrupted);
    }
    if results.iter().any(|m| m.error.is_some()) {
        return Ok(ExitCode::TestFailed);
    }
    Ok(ExitCode::Success)
}
