//! `fsbench integrity CONFIG...`: what each filesystem does with corrupted blocks.

use super::record::{now_unix_s, RecordArgs};
use super::{ExitCode, UserError};
use crate::integrity::{self, Fault, IntegrityOptions};
use crate::model::run::RunStatus;
use crate::store::{IntegrityRecorder, RunMeta, StoreError};
use crate::testbed::{FsConfig, TestbedOptions, DEFAULT_WORKDIR};
use anyhow::Context;
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

    /// Also damage metadata blocks (directory blocks, inodes, tree nodes; on zfs the ZAP, dnode
    /// and indirect blocks zdb names). These cases exercise the kernel's error paths for
    /// corrupted metadata: a kernel filesystem bug there can oops or hang the machine. Run them
    /// on a machine you can afford to reboot.
    #[arg(long)]
    pub metadata: bool,

    /// Faults to inject (comma-separated): zero, bitflip, garbage, stale.
    #[arg(long, value_delimiter = ',', default_value = "zero,bitflip,garbage,stale")]
    pub faults: Vec<Fault>,

    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = IntegrityFormat::Table)]
    pub format: IntegrityFormat,

    /// Directory for image files and mount points (images fallocated; removed afterwards).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_WORKDIR)]
    pub workdir: PathBuf,

    /// Size of each image.
    #[arg(long, value_name = "SIZE", default_value = "512M", value_parser = parse_size)]
    pub size: u64,

    #[command(flatten)]
    pub record: RecordArgs,
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
  fsbench integrity btrfs --faults zero --seed 7 --format json > btrfs.json

Each run is stored in the results database (unless --no-store): `fsbench history` lists it,
`fsbench show RUN` prints its matrix again (table, json, csv, html), `fsbench report RUN` writes
the HTML report (a matrix per configuration, cells coloured by outcome, the evidence of each
case on hover and unfolded below).";

fn parse_size(s: &str) -> Result<u64, String> {
    match crate::workload::size::parse_bytes(s).map_err(|e| e.to_string())? {
        // Was silently raised to the filesystem's minimum.
        0 => Err(format!("`{s}`: an image of 0 bytes holds no filesystem; give a size such as 512M (or leave --size out)")),
        n => Ok(n),
    }
}

/// Bad input found before anything is built (exit 2): a `--workdir` that is a file, or images
/// the host cannot hold (`--size 100T`), instead of every case failing one by one.
fn check_room(a: &IntegrityArgs, configs: &[FsConfig]) -> anyhow::Result<()> {
    let mut dir = a.workdir.as_path();
    loop {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => {
                return Err(UserError(format!(
                    "--workdir {}: {} is not a directory",
                    a.workdir.display(),
                    dir.display()
                ))
                .into())
            }
            Err(_) => match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => dir = p,
                _ => return Ok(()),
            },
        }
    }
    for cfg in configs.iter().filter(|c| c.kind.needs_devices()) {
        let size = crate::testbed::sizing::image_bytes(cfg, None, Some(a.size));
        crate::testbed::image::check_space(dir, size.saturating_mul(cfg.devices as u64))?;
    }
    Ok(())
}

pub fn run(a: IntegrityArgs) -> anyhow::Result<ExitCode> {
    let configs = a
        .configs
        .iter()
        .map(|c| FsConfig::parse(c).map_err(|e| UserError(format!("{c}: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    for c in &configs {
        integrity::validate(c)?;
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
    check_room(&a, &configs)?;
    // The database is opened (and checked) before anything is built.
    let store = a.record.open()?;
    let faults: Vec<&str> = a.faults.iter().map(|f| f.name()).collect();
    let meta = RunMeta::integrity(a.seed, &faults.join(","));
    let labels: Vec<String> = configs.iter().map(|c| c.label.clone()).collect();
    let mut rec = match store {
        Some(s) => {
            let path = s.path().to_path_buf();
            Some(
                s.begin_integrity(&meta, &labels)
                    .with_context(|| format!("recording the run in {}", path.display()))?,
            )
        }
        None => None,
    };
    let mut failed: Option<anyhow::Error> = None;
    let mut record = |rec: &mut Option<IntegrityRecorder>, r: Result<(), StoreError>| {
        if let Err(e) = r {
            eprintln!("fsbench: warning: recording stopped, results are no longer stored: {e}");
            let path = rec.take().map(|r| r.path().display().to_string()).unwrap_or_default();
            failed = Some(anyhow::Error::new(e).context(format!(
                "the results above are complete, but they are not all stored in {path}"
            )));
        }
    };
    let mut results = Vec::new();
    let width = crate::present::frame::terminal_width();
    let mut out = std::io::stdout().lock();
    for (ci, cfg) in configs.iter().enumerate() {
        let size = crate::testbed::sizing::image_bytes(cfg, None, Some(a.size));
        let opts = IntegrityOptions {
            testbed: TestbedOptions { size_bytes: size, ..opts.testbed.clone() },
            ..opts.clone()
        };
        eprintln!("fsbench integrity: {} ...", cfg.label);
        let m = integrity::run_config(cfg, &opts, &mut |i, case| {
            let line = integrity::matrix::evidence_line(case);
            eprint!("{}", crate::present::frame::wrap(&line, width, "  ", "    "));
            if let Some(r) = rec.as_mut() {
                let done = r.record_case(ci, i, case);
                record(&mut rec, done);
            }
        });
        if let Some(r) = rec.as_mut() {
            let done = r.finish_config(ci, &m);
            record(&mut rec, done);
        }
        if a.format == IntegrityFormat::Table {
            // Printed as each configuration ends, so a later failure loses nothing.
            writeln!(out, "{}", crate::present::integrity::render(&m, width))?;
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
    let interrupted = crate::sys::signals::interrupted();
    let status = if interrupted {
        RunStatus::Interrupted
    } else if results.iter().any(|m| m.error.is_some()) {
        RunStatus::Failed
    } else {
        RunStatus::Ok
    };
    if let Some(r) = rec.as_mut() {
        match r.finish(status, now_unix_s()) {
            Ok(()) => eprintln!(
                "fsbench: stored as run {} in {} (fsbench show {}; fsbench report {})",
                r.run_id(),
                r.path().display(),
                r.run_id(),
                r.run_id()
            ),
            Err(e) => record(&mut rec, Err(e)),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if interrupted {
        return Ok(ExitCode::Interrupted);
    }
    if results.iter().any(|m| m.error.is_some()) {
        return Ok(ExitCode::TestFailed);
    }
    Ok(ExitCode::Success)
}
