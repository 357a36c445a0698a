//! Exit codes, and the one place an error becomes one.
//!
//! The README's table: 0 success; 1 a test failed or the system failed; 2 bad input, nothing
//! run; 130 interrupted; 141 standard output was a pipe its reader closed. A command returns
//! `Ok(ExitCode)` for the first and the ones a run decides itself, and an error otherwise;
//! [`exit_code`] maps an error through [`Classify`], which every library error implements.

use crate::sys::classify::Classify;

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
    /// Standard output was a pipe its reader closed (`fsbench history | head -1`): the output
    /// stopped quietly, after every testbed was torn down. 128 + SIGPIPE, as a shell reports a
    /// tool that SIGPIPE ended; fsbench keeps SIGPIPE ignored so that teardown always runs.
    BrokenPipe = 141,
}

impl ExitCode {
    /// The exit code of a run or comparison that ended so.
    pub fn of(status: crate::model::run::RunStatus) -> ExitCode {
        use crate::model::run::RunStatus;
        match status {
            RunStatus::Interrupted => ExitCode::Interrupted,
            RunStatus::Failed => ExitCode::TestFailed,
            RunStatus::Ok | RunStatus::Running => ExitCode::Success,
        }
    }
}

/// An error in what the user asked for that only the command line sees (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UserError(pub String);

impl Classify for UserError {
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// The exit code of a command that ended with `e`.
///
/// A closed pipe anywhere in the chain is 141 (the output stopped quietly). Otherwise the first
/// error of the chain that classifies itself decides (the outermost knows most about what was
/// being done): interrupted 130, bad input 2, anything else 1. An error no library type
/// classifies (an I/O error with context only) is a failure, 1.
pub fn exit_code(e: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(e) {
        return ExitCode::BrokenPipe;
    }
    match e.chain().find_map(classified) {
        Some(c) if c.is_interrupted() => ExitCode::Interrupted,
        Some(c) if c.is_bad_input() => ExitCode::BadInput,
        _ => ExitCode::TestFailed,
    }
}

/// Whether `e` was caused by writing to a pipe whose reader has gone.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `e` as a [`Classify`]: the list of every library error type (a trait object cannot be
/// recovered from `dyn Error` on stable Rust, so each type is named once, here).
fn classified<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a dyn Classify> {
    macro_rules! first_of {
        ($($t:ty),* $(,)?) => {
            $(
                if let Some(c) = e.downcast_ref::<$t>() {
                    return Some(c);
                }
            )*
        };
    }
    first_of!(
        UserError,
        crate::sys::cmd::CmdError,
        crate::sys::secure::UnsafeDir,
        crate::workload::WorkloadError,
        crate::workload::limits::LimitError,
        crate::workload::size::SizeError,
        crate::workload::engines::EngineCheckError,
        crate::model::scale::ScaleError,
        crate::model::failure::EngineError,
        crate::fio::FioError,
        crate::fio::value::ValueError,
        crate::observe::trace::TraceError,
        crate::observe::trace::ringbuf::PageError,
        crate::observe::trace::format::FormatError,
        crate::engine::EvictError,
        crate::testbed::TestbedError,
        crate::testbed::ConfigError,
        crate::testbed::Refusal,
        crate::testbed::fsopts::OptValueError,
        crate::testbed::fs::Untestable,
        crate::testbed::fs::MetaError,
        crate::driver::TargetError,
        crate::integrity::IntegrityError,
        crate::integrity::fault::InjectError,
        crate::integrity::fault::UnknownFault,
        crate::profile::ProfileError,
        crate::profile::preload::ListError,
        crate::store::StoreError,
        crate::cluster::ClusterError,
        crate::present::html::ReportError,
        crate::present::html::charts::ChartError,
        crate::present::fio_log::LogError,
    );
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    fn code<E: std::error::Error + Send + Sync + 'static>(e: E) -> ExitCode {
        exit_code(&anyhow::Error::new(e).context("doing something"))
    }

    #[test]
    fn bad_input_anywhere_under_context_is_2_and_a_plain_failure_is_1() {
        assert_eq!(code(UserError("--repeat 0".into())), ExitCode::BadInput);
        let w = crate::workload::WorkloadError::UnknownSuite {
            name: "x".into(),
            known: "unit14".into(),
        };
        assert_eq!(code(w), ExitCode::BadInput);
        let io = std::io::Error::other("disk on fire");
        assert_eq!(code(io), ExitCode::TestFailed);
        let cmd = crate::sys::cmd::CmdError::Failed {
            cmdline: "mkfs.xfs /dev/loop9".into(),
            status: "exit status: 1".into(),
            stderr: String::new(),
        };
        assert_eq!(code(cmd), ExitCode::TestFailed);
    }

    #[test]
    fn the_outermost_classified_error_decides() {
        use crate::testbed::TestbedError;
        let failed = crate::sys::cmd::CmdError::Failed {
            cmdline: "mount -o bogus".into(),
            status: "exit status: 32".into(),
            stderr: String::new(),
        };
        // The command's failure alone is the system's; the mount refusing the user's options
        // is bad input.
        let refused = TestbedError::Rejected {
            step: "mount".into(),
            options: "bogus".into(),
            source: Box::new(TestbedError::cmd("mount", failed)),
        };
        assert_eq!(code(refused), ExitCode::BadInput);
    }

    #[test]
    fn an_untestable_filesystem_is_bad_input_and_a_tool_that_failed_is_not() {
        let tmpfs = crate::testbed::fs::Fs::named("tmpfs").unwrap().integrity().err().unwrap();
        assert_eq!(code(tmpfs.clone()), ExitCode::BadInput);
        assert_eq!(code(crate::integrity::IntegrityError::from(tmpfs)), ExitCode::BadInput);
        let failed = crate::testbed::fs::MetaError::Failed {
            cmdline: "xfs_db -r -c 'convert inode 131 fsbyte' /dev/loop9".into(),
            status: "exit status: 1".into(),
            output: "xfs_db: /dev/loop9 is not a valid XFS filesystem".into(),
        };
        assert_eq!(code(failed), ExitCode::TestFailed);
        let value =
            crate::testbed::fsopts::check_value(crate::testbed::fsopts::Kind::Flag, Some("1"));
        assert_eq!(code(value.unwrap_err()), ExitCode::BadInput);
    }

    #[test]
    fn an_engines_error_is_bad_input_only_when_the_test_could_not_run_as_written() {
        use crate::model::failure::EngineError;
        let refused = EngineError::unsupported("O_DIRECT refused here").at("setup");
        assert_eq!(code(refused), ExitCode::BadInput);
        let e = std::io::Error::from_raw_os_error(5);
        let failed = EngineError::io("write of 4096 bytes at offset 0", None, &e).at("phase `w`");
        assert_eq!(code(failed), ExitCode::TestFailed);
        assert_eq!(
            code(crate::engine::EvictError("drop_caches: EIO".into())),
            ExitCode::TestFailed
        );
        let check = crate::workload::engines::EngineCheckError::Misaligned { align: 4096 };
        assert_eq!(code(check), ExitCode::BadInput);
    }

    #[test]
    fn an_interruption_is_130_and_a_closed_pipe_141() {
        let i = crate::cluster::ClusterError::Interrupted { at: "the barrier".into() };
        assert_eq!(code(i), ExitCode::Interrupted);
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let e = anyhow::Error::new(UserError("x".into())).context("y");
        assert_eq!(exit_code(&e), ExitCode::BadInput);
        let e = Err::<(), _>(pipe).context("writing the table").unwrap_err();
        assert_eq!(exit_code(&e), ExitCode::BrokenPipe);
    }

    /// Every error type of the library (`thiserror`) implements [`Classify`], and every public
    /// one is in [`classified`]'s list, so a new error type cannot fall through to exit code 1
    /// unnoticed.
    #[test]
    fn every_library_error_type_is_classified_and_listed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    files.push(p);
                }
            }
        }
        let texts: Vec<(std::path::PathBuf, String)> =
            files.into_iter().map(|p| (p.clone(), std::fs::read_to_string(p).unwrap())).collect();
        let all: String = texts.iter().map(|(_, t)| t.as_str()).collect();
        let table = std::fs::read_to_string(root.join("cli/exit.rs")).unwrap();
        let table = &table[table.find("first_of!(").unwrap()..];
        let mut types = Vec::new();
        for (path, text) in &texts {
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                if !(l.trim_start().starts_with("#[derive(") && l.contains("thiserror::Error")) {
                    continue;
                }
                let decl = lines[i + 1..]
                    .iter()
                    .map(|l| l.trim())
                    .find(|l| !l.starts_with("#[") && !l.starts_with("//"))
                    .unwrap();
                let public = decl.starts_with("pub ");
                let name = decl
                    .trim_start_matches("pub ")
                    .trim_start_matches("enum ")
                    .trim_start_matches("struct ")
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .next()
                    .unwrap()
                    .to_string();
                types.push((path.clone(), name, public));
            }
        }
        assert!(types.len() > 20, "{types:?}");
        for (path, name, public) in types {
            let implemented = all.lines().any(|l| {
                l.contains("impl ")
                    && l.contains("Classify for ")
                    && (l.contains(&format!("::{name} {{")) || l.contains(&format!(" {name} {{")))
            });
            assert!(implemented, "{name} ({}) does not implement Classify", path.display());
            let listed =
                table.contains(&format!("::{name},")) || table.contains(&format!(" {name},"));
            assert!(!public || listed, "{name} ({}) is not in cli::exit's list", path.display());
        }
    }
}
