//! The `fsbench` command line: argument definitions (clap derive) and the glue that turns them
//! into a validated job for the library.

mod compare;
mod exit;
mod fio_cmd;
mod integrity;
mod mpi_args;
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
pub use exit::{exit_code, ExitCode, UserError};

/// Write `text` to standard output. A closed pipe is returned as an error (`main` turns it
/// into a quiet exit 141), never a panic as with `print!`.
pub(crate) fn out(text: &str) -> std::io::Result<()> {
    out_bytes(text.as_bytes())
}

/// [`out`] for bytes.
pub(crate) fn out_bytes(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    o.write_all(bytes)?;
    o.flush()
}

/// `report written to fsbench-report-3.html (84 KB)`: what was written where, and its size (a
/// report's size is worth knowing before it is mailed or checked in). The size is left out if
/// the file cannot be read back.
pub(crate) fn written(what: &str, path: &std::path::Path) -> String {
    let size =
        std::fs::metadata(path).map(|m| format!(" ({})", size_words(m.len()))).unwrap_or_default();
    format!("fsbench: {what} written to {}{size}", path.display())
}

/// `84 KB`, `1.2 MB`, `512 bytes`: a file's size in decimal units, as file managers say it.
fn size_words(n: u64) -> String {
    match n {
        0..=999 => format!("{n} bytes"),
        1_000..=999_999 => format!("{} KB", (n + 500) / 1000),
        _ => format!("{:.1} MB", n as f64 / 1e6),
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
    /// List the recorded runs, comparisons, profiles and integrity runs, newest first.
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
    /// Run fio's command line (`fsbench fio --name=x --rw=randread --size=64m`, or job files):
    /// fio's options and output formats (normal, json), fsbench's engine, stored like any run.
    Fio(fio_cmd::FioArgs),
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
        Command::Run(a) if a.mpi.mpi => mpi_run::run(a),
        Command::Run(a) => run::run(a),
        Command::Suite(c) => suite::run(c),
        Command::Compare(a) if a.mpi.mpi => mpi_run::compare(a),
        Command::Compare(a) => compare::run(a),
        Command::Testbed(c) => testbed::run(c),
        Command::History(a) => results::history(a),
        Command::Show(a) => results::show(a),
        Command::Diff(a) => results::diff(a),
        Command::Report(a) => results::report(a),
        Command::Integrity(a) => integrity::run(a),
        Command::Profile(a) => profile::run(a),
        Command::Preload(a) => profile::preload(a),
        Command::Fio(a) => fio_cmd::run(a),
    };
    match r {
        Ok(code) => code as i32,
        Err(e) => {
            let code = exit_code(&e);
            // A closed pipe stops the output quietly.
            if code != ExitCode::BrokenPipe {
                print_error(&e);
            }
            code as i32
        }
    }
}

/// Print an error with its whole chain of causes.
fn print_error(e: &anyhow::Error) {
    for l in error_lines(e) {
        eprintln!("{l}");
    }
}

/// The lines of an error: the error, then each cause whose text an earlier line does not
/// already hold (a step that quotes its command's failure, then that failure again, would
/// print the command's output several times).
pub fn error_lines(e: &anyhow::Error) -> Vec<String> {
    let mut shown = vec![e.to_string()];
    let mut out = vec![format!("fsbench: error: {e}")];
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if shown.iter().any(|s| s.contains(&text)) {
            continue;
        }
        out.push(format!("  caused by: {text}"));
        shown.push(text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::cmd::CmdError;
    use crate::testbed::TestbedError;
    use anyhow::Context;

    #[test]
    fn a_rejected_mount_prints_the_commands_output_once() {
        let failed = CmdError::Failed {
            cmdline: "mount -t ext4 -o bogusopt /dev/loop9 /x".into(),
            status: "exit status: 32".into(),
            stderr: "mount: /x: wrong fs type, bad option\nkernel log: ext4: Unknown parameter 'bogusopt'".into(),
        };
        let e = TestbedError::Rejected {
            step: "mount".into(),
            options: "bogusopt".into(),
            source: Box::new(TestbedError::cmd("mount", failed)),
        };
        let e = Err::<(), _>(e).context("setting up ext4").unwrap_err();
        let lines = error_lines(&e).join("\n");
        assert_eq!(lines.matches("wrong fs type").count(), 1, "{lines}");
        assert_eq!(lines.matches("Unknown parameter 'bogusopt'").count(), 1, "{lines}");
        assert!(lines.starts_with("fsbench: error: setting up ext4"), "{lines}");
        assert!(lines.contains("caused by: mount refused the options given (bogusopt)"), "{lines}");
    }
}

#[cfg(test)]
mod written_tests {
    #[test]
    fn a_written_file_is_named_with_its_size() {
        assert_eq!(super::size_words(512), "512 bytes");
        assert_eq!(super::size_words(84_200), "84 KB");
        assert_eq!(super::size_words(20_400_000), "20.4 MB");
        let dir = std::env::temp_dir().join(format!("fsbench-written-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("r.html");
        std::fs::write(&f, vec![b'x'; 2048]).unwrap();
        let line = super::written("report", &f);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(line, format!("fsbench: report written to {} (2 KB)", f.display()));
    }
}
