//! The `fsbench` command line: argument definitions (clap derive) and the glue that turns them
//! into a validated job for the library.

mod compare;
mod integrity;
mod mpi_run;
mod profile;
mod progress;
mod record;
mod results;
mod run;
mod suite;
mod suite_args;
mod testbed;
mod testbed_args;

use clap::{Parser, Subcommand};

/// Exit codes, like fd's typed `ExitCode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Everything ran and succeeded.
    Success = 0,
    /// At least one test failed (its reason is in the output).
    TestFailed = 1,
    /// Bad input: arguments, workload file, directory. Nothing was run.
    BadInput = 2,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted = 130,
}

impl ExitCode {
    /// The exit code of a run or comparison that ended so.
    pub fn of(status: crate::store::read::RunStatus) -> ExitCode {
        use crate::store::read::RunStatus;
        match status {
            RunStatus::Interrupted => ExitCode::Interrupted,
            RunStatus::Failed => ExitCode::TestFailed,
            RunStatus::Ok | RunStatus::Running => ExitCode::Success,
        }
    }
}

/// fsbench: filesystem benchmarks with honest statistics and explanations.
///
/// Runs workloads (the 14 unit tests of the 2005 ZFS/UFS study and your own TOML workloads)
/// against a directory, with cache state verified, latency percentiles, CPU cost and repeated
/// runs.
#[derive(Debug, Parser)]
#[command(name = "fsbench", version, about, long_about = None, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  fsbench compare ext4 xfs --scale quick
  fsbench run --fs xfs --test 4,5 --repeat 3
  fsbench run --dir /mnt/test --suite unit14 --scale quick
  fsbench run --dir /mnt/test --test 5,13 --repeat 5 --format json > uncached.json
  fsbench suite show unit14 > my.toml && fsbench run --dir /mnt/test --workload my.toml
  fsbench history                      # every run and compare is recorded (--no-store: not)
  fsbench show 12; fsbench diff 11 12; fsbench report 12 -o report.html";

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a suite or a workload file in a directory, or on a fresh filesystem (--fs).
    Run(run::RunArgs),
    /// Run a suite on several filesystem configurations (or directories), interleaved, and
    /// print the head-to-head table: winner and factor, or draw, per test.
    Compare(compare::CompareArgs),
    /// Build, keep, remove and clean up loop-backed test filesystems.
    #[command(subcommand)]
    Testbed(testbed::TestbedCmd),
    /// List embedded suites or print one as TOML.
    #[command(subcommand)]
    Suite(suite::SuiteCmd),
    /// List the recorded runs and comparisons, newest first.
    History(results::HistoryArgs),
    /// Print a recorded run's table (or JSON/CSV) again, from the results database.
    Show(results::ShowArgs),
    /// Compare two recorded runs test by test with compare's decision rule; exit code 1 when a
    /// test regressed significantly.
    Diff(results::DiffArgs),
    /// Write recorded runs as one self-contained HTML report with charts.
    Report(results::ReportArgs),
    /// Inject faults (zeroed, flipped, garbage, stale blocks) into fresh filesystems' images
    /// and report what each filesystem did: silent, detected, repaired, unavailable, crash.
    Integrity(integrity::IntegrityArgs),
    /// Run a command and show what it read from disk: files, pages, device requests mapped to
    /// files and metadata, seeks; write a preload list and measure the preload.
    Profile(profile::ProfileArgs),
    /// Bring the files and ranges of a preload list into the page cache, sorted by device
    /// offset (readahead).
    Preload(profile::PreloadArgs),
}

/// Entry point of the binary; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { ExitCode::BadInput as i32 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    if let Err(e) = crate::sys::signals::install() {
        eprintln!("fsbench: warning: cannot install the Ctrl-C handler: {e}");
    }
    let r = match cli.command {
        Command::Run(a) => run::run(a),
        Command::Suite(c) => suite::run(c),
        Command::Compare(a) => compare::run(a),
        Command::Testbed(c) => testbed::run(c),
        Command::History(a) => results::history(a),
        Command::Show(a) => results::show(a),
        Command::Diff(a) => results::diff(a),
        Command::Report(a) => results::report(a),
        Command::Integrity(a) => integrity::run(a),
        Command::Profile(a) => profile::run(a),
        Command::Preload(a) => profile::preload(a),
    };
    match r {
        Ok(code) => code as i32,
        Err(e) => {
            print_error(&e);
            match e.downcast_ref::<UserError>() {
                Some(_) => ExitCode::BadInput as i32,
                None if e.chain().any(|c| c.is::<crate::driver::TargetError>()) => {
                    ExitCode::BadInput as i32
                }
                None if e.chain().any(|c| {
                    c.is::<crate::workload::WorkloadError>() || c.is::<crate::fio::FioError>()
                }) =>
                {
                    ExitCode::BadInput as i32
                }
                None if e.chain().any(|c| {
                    c.downcast_ref::<crate::store::StoreError>().is_some_and(|s| s.is_bad_input())
                        || c.downcast_ref::<crate::testbed::TestbedError>()
                            .is_some_and(|t| t.is_bad_input())
                }) =>
                {
                    ExitCode::BadInput as i32
                }
                None => ExitCode::TestFailed as i32,
            }
        }
    }
}

/// An error in what the user asked for (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UserError(pub String);

/// Print an error with its whole chain of causes.
fn print_error(e: &anyhow::Error) {
    eprintln!("fsbench: error: {e}");
    for cause in e.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
}
