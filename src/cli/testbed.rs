//! `fsbench testbed up|down|cleanup`.

use super::testbed_args::UpArgs;
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
        testbed: UpArgs,
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
    /// Remove a testbed kept by `testbed up` (by the name it printed), or all of them with
    /// --all. Without either, lists the kept testbeds.
    Down {
        /// The kept testbed's name (`tb-PID-N`).
        name: Option<String>,
        /// Remove every kept testbed.
        #[arg(long, conflicts_with = "name")]
        all: bool,
    },
    /// Remove what crashed fsbench runs left behind (loop devices, mounts, pools, images, work
    /// directories, tracing instances) and nothing else: each item is checked against fsbench's
    /// state records and the system. Testbeds kept by `testbed up` and resources of running
    /// fsbench processes are left alone.
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
            let cfg = FsConfig::parse(&config)?;
            let ta = ta.testbed();
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
            let name = bed.name().to_string();
            let mnt = bed.keep().context("keeping the testbed")?;
            let said = format!(
                "fsbench: {} is mounted ({}; {}).",
                env.label, env.backing, env.mount_options
            );
            let width = crate::present::frame::terminal_width();
            eprint!("{}", crate::present::frame::wrap(&said, width, "", "  "));
            // The command on a line of its own, never wrapped, so it can be copied whole.
            eprintln!("fsbench: remove it with `fsbench testbed down {name}`");
            super::out(&format!("{}\n", mnt.display()))?;
        }
        TestbedCmd::Down { name: None, all: false } => {
            let kept = testbed::cleanup::kept_testbeds(&testbed::StateDir::default())
                .context("reading the kept testbeds")?;
            if kept.is_empty() {
                super::out("no kept testbeds\n")?;
            }
            for (name, rec) in kept {
                let mnt = rec.entries.iter().find_map(|e| match &e.resource {
                    testbed::Resource::Mount { mountpoint, fstype, .. } => {
                        Some(format!("{fstype} on {}", mountpoint.display()))
                    }
                    testbed::Resource::ZfsPool { name } => Some(format!("zfs pool {name}")),
                    _ => None,
                });
                super::out(&format!(
                    "{name}\t{}\n",
                    mnt.unwrap_or_else(|| "(not mounted)".into())
                ))?;
            }
            eprintln!("fsbench: remove one with `fsbench testbed down NAME`, all with --all");
        }
        TestbedCmd::Down { name, all } => {
            let scope = match name {
                Some(n) if !all => testbed::cleanup::Scope::Kept(n),
                _ => testbed::cleanup::Scope::AllKept,
            };
            let report = match testbed::down_kept(&scope) {
                Err(e @ testbed::TestbedError::Check(_)) => {
                    return Err(UserError(e.to_string()).into())
                }
                r => r.context("removing kept testbeds")?,
            };
            super::out(&report.to_string())?;
            if !report.is_clean() {
                return Ok(ExitCode::TestFailed);
            }
        }
        TestbedCmd::Cleanup => {
            let report = testbed::cleanup_leftovers().context("cleaning up")?;
            super::out(&report.to_string())?;
            if !report.is_clean() {
                return Ok(ExitCode::TestFailed);
            }
        }
    }
    Ok(ExitCode::Success)
}
