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
    },
}

pub fn run(cmd: SuiteCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        SuiteCmd::List => {
            for s in suites::SUITES {
                let n = s.toml.matches("[[test]]").count();
                println!("{:<10} {:>3} tests  {}", s.name, n, s.summary);
            }
        }
        SuiteCmd::Show { name } => {
            let s = suites::get(&name).ok_or_else(|| {
                super::UserError(format!(
                    "unknown suite `{name}`; known suites: {}",
                    suites::names().join(", ")
                ))
            })?;
            print!("{}", s.toml);
        }
    }
    Ok(ExitCode::Success)
}
