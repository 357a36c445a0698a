//! `fsbench suite list|show`.

use super::ExitCode;
use crate::workload::suites;
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum SuiteCmd {
    /// List the embedded suites.
    List,
    /// Print a suite's TOML definition (copy it, change it, run it with --workload FILE).
    Show {
        /// Suite name, e.g. unit14.
        name: String,
        /// Print the suite as a fio job file instead (at the sizes as written), one job per test;
        /// a test fio cannot express is a comment saying why. Run it with fio to check fsbench
        /// against fio.
        #[arg(long)]
        as_fio: bool,
    },
}

pub fn run(cmd: SuiteCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        SuiteCmd::List => {
            for s in suites::SUITES {
                let n = s.toml.matches("[[test]]").count();
                super::out(&format!("{:<10} {:>3} tests  {}\n", s.name, n, s.summary))?;
            }
        }
        SuiteCmd::Show { name, as_fio: true } => {
            let mem = crate::sys::meminfo::MemInfo::read()?;
            let ctx = crate::workload::ResolveCtx {
                scale: crate::model::scale::Scale::Paper,
                free_memory: mem.free_memory(),
            };
            let suite = crate::workload::load(&crate::workload::SuiteSource::Embedded(name), &ctx)?;
            super::out(&crate::fio::export::suite_to_fio(&suite))?;
        }
        SuiteCmd::Show { name, as_fio: false } => {
            let s = suites::get(&name).ok_or_else(|| {
                super::UserError(format!(
                    "unknown suite `{name}`; known suites: {}",
                    suites::names().join(", ")
                ))
            })?;
            super::out(s.toml)?;
        }
    }
    Ok(ExitCode::Success)
}
