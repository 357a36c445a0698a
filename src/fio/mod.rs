//! fio job files in: `fsbench run --fio job.fio`.
//!
//! A job file is translated into fsbench's workload language (the TOML of [`crate::workload`])
//! and then loaded through the normal loader, so a fio job means exactly what its printed
//! translation (`--print-workload`) means, and every check the workload language has applies.
//! [`ini`] reads fio's syntax, [`options`] is the table of the options fsbench understands,
//! [`value`] reads fio's sizes and times, [`translate`] maps a job onto a test. An option outside the table, or a combination fsbench
//! cannot express (jobs that fio would run at the same time, `bssplit` with several sizes, ...),
//! is an error naming the file, line and option: nothing is silently ignored. Where fsbench's
//! meaning differs in a detail from fio's (offsets drawn with replacement, a fixed read/write
//! interleave), the translation says so in a note that is printed and kept in the test's
//! description. [`export`] goes the other way: a fsbench test as a fio job.

pub mod export;
pub mod ini;
pub mod options;
pub mod translate;
pub mod value;

pub use translate::{translate, Translation};

use crate::model::job::Suite;
use crate::workload::{self, ResolveCtx};
use std::path::Path;

/// Errors in a fio job file: all are the user's to fix (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    /// The job file could not be read.
    #[error("cannot read fio job file {path}: {source}")]
    Read {
        /// The path given.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A line that is not fio's ini syntax.
    #[error("{file}:{line}: {message}")]
    Syntax {
        /// The job file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// `${VAR}` of a variable that is not set.
    #[error("{file}:{line}: environment variable `{var}` (written `${{{var}}}`) is not set: export it or write the value")]
    Env {
        /// The job file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The variable's name.
        var: String,
    },
    /// An option fsbench does not support.
    #[error("{file}:{line}: fio option `{option}` is not supported by fsbench{hint}; remove it or run the job with fio itself (supported: {supported})")]
    Unsupported {
        /// The job file.
        file: String,
        /// 1-based line.
        line: usize,
        /// ` (did you mean `iodepth`?)` for a near miss of a supported name, else empty.
        hint: String,
        /// The option as written.
        option: String,
        /// The supported options.
        supported: String,
    },
    /// A supported option with a value or combination fsbench cannot run.
    #[error("{file}:{line}: `{option}`: {message}")]
    Value {
        /// The job file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The option (or `[job]` for a whole job).
        option: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The translated workload did not validate (a combination only the workload checks see).
    #[error("{file}: as translated (see --print-workload): {source}")]
    Workload {
        /// The job file.
        file: String,
        /// The workload error.
        source: workload::WorkloadError,
    },
}

impl crate::sys::classify::Classify for FioError {
    /// Every error in a job file is the user's to fix.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Read and translate a job file, with `${VAR}`s from the process environment.
pub fn translate_file(path: &Path) -> Result<Translation, FioError> {
    let text = crate::sys::regular::read_to_string(path)
        .map_err(|source| FioError::Read { path: path.display().to_string(), source })?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    translate(&text, &path.display().to_string(), &name, &|v| std::env::var(v).ok())
}

/// Load a translation through the workload loader (TOML text, then validation), so the job
/// means what its printed translation means.
pub fn load(t: &Translation, ctx: &ResolveCtx) -> Result<Suite, FioError> {
    let origin = format!("{} (translated)", t.file);
    let text = t.to_toml();
    let wrap = |source| FioError::Workload { file: t.file.clone(), source };
    let spec = workload::spec::parse(&text, &origin).map_err(wrap)?;
    workload::validate::resolve(&spec, &origin, ctx).map_err(wrap)
}
