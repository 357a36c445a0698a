//! `fsbench testbed up|down|cleanup`.

use super::testbed_args::TestbedArgs;
use super::{ExitCode, UserError};
use crate::testbed::{self, FsConfig, Testbed};
use anyhow::Context;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum TestbedCmd {
    /// Build a filesystem on loop-backed images (or a named device) and leave it mounted, to
    /// poke at or to run `fsbench run --dir` on. Prints the mount point.
    Up {
        /// Filesystem configuration, e.g. `xfs` or `ext4:mount=data=writeback`.
        config: String,
        #[command(flatten)]
        testbed: TestbedArgs,
        /// Use this block device instead of image files. Its data is destroyed; needs
        /// --destroy-data. Refused if mounted, holding a mounted partition, the root device, or
        /// carrying a filesystem or partition-table signature (unless --force).
        #[arg(long, value_name = "DEV", requires = "destroy_data")]
        device: Option<PathBuf>,
        /// Agree that everything on --device is destroyed.
        #[arg(long)]
        destroy_data: bool,
        /// Overwrite a --device that carries a filesystem or partition-table signature.
        #[arg(long, requires = "device")]
        force: bool,
    },
    /// Remove every testbed left by `testbed up` or by fsbench processes that are gone.
    Down,
    /// Remove what crashed fsbench runs left behind (loop devices, mounts, pools, images,
    /// tracing instances) and nothing else: each item is checked against fsbench's state records.
    Cleanup,
}

pub fn run(cmd: TestbedCmd) -> anyhow::Result<ExitCode> {
    if !crate::sys::is_root() {
        return Err(
            UserError("testbed commands need root (loop devices, mkfs, mount)".into()).into()
        );
    }
    match cmd {
        TestbedCmd::Up { config, testbed: ta, device, destroy_data, force } => {
            let cfg = FsConfig::parse(&config).map_err(|e| UserError(e.to_string()))?;
            let mut opts = ta.options(&cfg, None);
            if ta.size.is_none() {
                opts.size_bytes = opts.size_bytes.max(testbed::DEFAULT_SIZE_BYTES);
            }
            opts.device = device;
            opts.destroy_data = destroy_data;
            opts.force = force;
            let bed =
                Testbed::up(&cfg, &opts).with_context(|| format!("setting up {}", cfg.label))?;
            let env = bed.environment();
            let mnt = bed.keep();
            eprintln!(
                "fsbench: {} is mounted ({}; {}). Remove it with `fsbench testbed down`.",
                env.label, env.backing, env.mount_options
            );
            println!("{}", mnt.display());
        }
        TestbedCmd::Down | TestbedCmd::Cleanup => {
            let report = testbed::cleanup_leftovers().context("cleaning up")?;
            print!("{report}");
            if !report.is_clean() {
                return Ok(ExitCode::TestFailed);
            }
        }
    }
    Ok(ExitCode::Success)
}
