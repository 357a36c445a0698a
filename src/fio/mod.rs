//! fio job files in: `fsbench run --fio job.fio`.
//!
//! A job file is translated into fsbench's workload language (the TOML of [`crate::workload`])
//! and then loaded through the normal loader, so a fio job means exactly what its printed
//! translation (`--print-workload`) means, and every check the workload language has applies.
//! [`ini`] reads fio's syntax, [`options`] is the table of the options fsbench understands,
//! [`value`] reads fio's sizes and times, [`translate`] maps a job onto a test. An option outside the table, or a combination fsbench
//! cannot express (a `filename` path shared by jobs that run at the same time, `rw=...:N`, ...),
//! is an error naming the file, line and option: nothing is silently ignored. Where fsbench's
//! meaning differs in a detail from fio's (offsets drawn with replacement for several block sizes, a write
//! job's file starting empty), the translation says so in a note that is printed and kept in the test's
//! description. [`export`] goes the other way: a fsbench test as a fio job.

pub mod cmdline;
pub mod export;
pub mod fio_names;
pub mod ini;
pub mod options;
pub mod translate;
pub mod value;

pub use translate::{
    from_parsed, translate, translate_with, FileOpReport, JobLogs, JobPlace, LatPercentiles,
    LogKind, Translation, UnrunJob, DEFAULT_SAMPLE_WINDOW_MS,
};

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
    /// A real fio option (fio 3.33 has it) that fsbench does not take, and why.
    #[error("{file}:{line}: fio option `{option}` is not supported by fsbench: {why}{tail}")]
    NotSupported {
        /// The job file.
        file: String,
        /// 1-based line.
        line: usize,
        /// The option as written.
        option: String,
        /// Why fsbench does not take it (from [`options::REFUSED`]).
        why: String,
        /// What to do and the supported options; empty inside [`FioError::Problems`], which
        /// says it once.
        tail: String,
    },
    /// Several problems in one file, all found in one pass: engine and device problems
    /// first, then in file order.
    #[error("{file}: {count} problems (fix them all, then run again):\n{list}{more}\n(the fio options fsbench takes: {supported})", count = .list.len(), list = render(.list), more = more(.list))]
    Problems {
        /// The job file.
        file: String,
        /// Each problem, ordered.
        list: Vec<FioError>,
        /// The supported options.
        supported: String,
    },
    /// `--fio-strict`: a job fsbench would run with a meaning that differs from fio's.
    #[error("{file}: job `{job}`: --fio-strict refuses it, as fsbench's meaning differs from fio's: {note}")]
    Strict {
        /// The job file.
        file: String,
        /// The job (section) name.
        job: String,
        /// The difference, from [`options::DIFFERENCES`].
        note: String,
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

/// Problems shown in a [`FioError::Problems`] message; the rest are counted.
pub const MAX_SHOWN_PROBLEMS: usize = 50;

impl FioError {
    /// `errors` of `file` as one error: the one itself, or [`FioError::Problems`] with engine
    /// and device problems first, then in file order, each once.
    pub fn problems(file: &str, mut errors: Vec<FioError>) -> FioError {
        errors.sort_by_key(|e| (!e.is_engine_or_device(), e.line()));
        let mut seen = std::collections::BTreeSet::new();
        errors.retain(|e| seen.insert(e.to_string()));
        if errors.len() == 1 {
            if let Some(e) = errors.pop() {
                return e;
            }
        }
        for e in &mut errors {
            if let FioError::NotSupported { tail, .. } = e {
                tail.clear();
            }
        }
        FioError::Problems { file: file.into(), list: errors, supported: options::names() }
    }

    /// The line the error is at, if it is at one.
    pub fn line(&self) -> usize {
        match self {
            FioError::Syntax { line, .. }
            | FioError::Env { line, .. }
            | FioError::Unsupported { line, .. }
            | FioError::NotSupported { line, .. }
            | FioError::Value { line, .. } => *line,
            _ => 0,
        }
    }

    /// A problem of the engine or the target (reported first: it decides whether the rest
    /// matters).
    fn is_engine_or_device(&self) -> bool {
        match self {
            FioError::Value { option, .. } => {
                matches!(option.as_str(), "ioengine" | "filename" | "directory")
            }
            FioError::NotSupported { option, .. } => option == "ioengine",
            _ => false,
        }
    }
}

/// The first [`MAX_SHOWN_PROBLEMS`] problems, one a line.
fn render(list: &[FioError]) -> String {
    list.iter().take(MAX_SHOWN_PROBLEMS).map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n")
}

/// How many problems [`render`] left out.
fn more(list: &[FioError]) -> String {
    match list.len().checked_sub(MAX_SHOWN_PROBLEMS) {
        Some(n) if n > 0 => format!("\n  ... and {n} more"),
        _ => String::new(),
    }
}

impl crate::sys::classify::Classify for FioError {
    /// Every error in a job file is the user's to fix.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Largest job file (or included file) read: fio's job files are a few KiB; 10 MB of junk is
/// refused before it is parsed.
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;

/// Read and translate a job file, with `${VAR}`s from the process environment, the host's
/// figures for fio's keywords, and `include`s read from disk.
pub fn translate_file(path: &Path) -> Result<Translation, FioError> {
    let file = path.display().to_string();
    let text = read_job_text(path)?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let env = |v: &str| std::env::var(v).ok();
    let include = |from: &str, name: &str| read_include(from, name);
    let inputs = ini::Inputs { env: &env, keywords: ini::Keywords::current(), include: &include };
    translate_with(&text, &file, &name, &inputs)
}

/// Translate a fio command line and its job files (read from disk, with the environment
/// and the host's figures, as [`translate_file`]).
pub fn translate_command(cmd: &cmdline::FioCommand) -> Result<Translation, FioError> {
    let env = |v: &str| std::env::var(v).ok();
    let include = |from: &str, name: &str| read_include(from, name);
    let inputs = ini::Inputs { env: &env, keywords: ini::Keywords::current(), include: &include };
    let read = |p: &Path| read_job_text(p);
    let parsed = cmd.sections(&inputs, &read);
    let name = match (cmd.files.first(), cmd.jobs.first()) {
        (Some(f), _) => f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        (None, Some((j, _, _))) => j.clone(),
        (None, None) => "fio".into(),
    };
    let file = match cmd.files.as_slice() {
        [f] if cmd.jobs.is_empty() && cmd.globals.is_empty() => f.display().to_string(),
        _ => cmdline::COMMAND_LINE.to_string(),
    };
    from_parsed(parsed, &file, &name)
}

/// A job file's text, or the error naming it.
fn read_job_text(path: &Path) -> Result<String, FioError> {
    let file = path.display().to_string();
    read_job_file(path).map_err(|e| match e {
        ReadProblem::Io(source) => FioError::Read { path: file.clone(), source },
        ReadProblem::Text { line, message } => {
            FioError::Syntax { file: file.clone(), line, message }
        }
    })
}

/// `include NAME` of the file `from`, read from disk: its path and text.
fn read_include(from: &str, name: &str) -> Result<(String, String), String> {
    let p = include_path(from, name);
    let text = read_job_file(&p).map_err(|e| match e {
        ReadProblem::Io(e) => format!("cannot read {}: {e}", p.display()),
        ReadProblem::Text { line, message } => format!("{}:{line}: {message}", p.display()),
    })?;
    Ok((p.display().to_string(), text))
}

/// Where fio finds `include NAME` of `from`: the name as given if it exists, else next to
/// `from` (fio's `parse_jobs_ini`).
fn include_path(from: &str, name: &str) -> std::path::PathBuf {
    let given = Path::new(name);
    if given.is_absolute() || given.exists() {
        return given.to_path_buf();
    }
    match Path::new(from).parent() {
        Some(dir) => dir.join(name),
        None => given.to_path_buf(),
    }
}

/// Why a job file could not be read as text.
enum ReadProblem {
    /// Not a regular file, unreadable, or too large.
    Io(std::io::Error),
    /// Not text: the line of the first byte that is not UTF-8 (or NUL).
    Text { line: usize, message: String },
}

/// A job file's text: a regular file (never a FIFO, device or directory: see
/// [`crate::sys::regular`]) of at most [`MAX_JOB_FILE_BYTES`], in UTF-8 without NUL bytes.
fn read_job_file(path: &Path) -> Result<String, ReadProblem> {
    use std::io::Read;
    let f = crate::sys::regular::open(path).map_err(ReadProblem::Io)?;
    let mut bytes = Vec::new();
    f.take(MAX_JOB_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(ReadProblem::Io)?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        let line = bytes.iter().filter(|b| **b == b'\n').count() + 1;
        return Err(ReadProblem::Text {
            line,
            message: format!(
                "the file goes on past {} KiB: not a fio job file (fio's are a few KiB)",
                MAX_JOB_FILE_BYTES >> 10
            ),
        });
    }
    let bad = match std::str::from_utf8(&bytes) {
        Ok(t) => t.find('\0'),
        Err(e) => Some(e.valid_up_to()),
    };
    if let Some(at) = bad {
        let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
        return Err(ReadProblem::Text {
            line,
            message: "not text (a byte that is not UTF-8, or NUL): not a fio job file".into(),
        });
    }
    String::from_utf8(bytes).map_err(|e| ReadProblem::Io(std::io::Error::other(e)))
}

/// Load a translation through the workload loader (TOML text, then validation), so the job
/// means what its printed translation means.
pub fn load(t: &Translation, ctx: &ResolveCtx) -> Result<Suite, FioError> {
    let origin = format!("{} (translated)", t.file);
    let text = t.to_toml();
    let wrap = |source| FioError::Workload { file: t.file.clone(), source };
    let spec = workload::spec::parse(&text, &origin).map_err(wrap)?;
    let mut suite = workload::validate::resolve(&spec, &origin, ctx).map_err(wrap)?;
    // fio's per-I/O logs: a record per op, which no workload key asks for.
    translate::mark_op_logs(&t.logs, &mut suite)?;
    Ok(suite)
}
