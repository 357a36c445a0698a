//! The workload language: TOML suites ([`spec`]), their validation ([`validate`]) into typed
//! tests ([`crate::model::job`]), size scaling ([`scale`]), the suites embedded in the binary
//! ([`suites`]), and the I/O engines' declarations ([`engines`]: names, capabilities, keys).

pub mod engines;
pub mod keys;
pub mod limits;
pub mod load;

pub mod size;
pub mod spec;
pub mod suites;
pub mod validate;

use crate::model::job::Suite;
pub use validate::ResolveCtx;

/// Errors in a workload: every one is the user's to fix, so each says where and how.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// Malformed TOML or a value of the wrong type.
    #[error("{origin}:{line}:{col}: {message}")]
    Parse {
        /// File name (or `suite NAME` for embedded suites).
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What was wrong and what was expected.
        message: String,
    },
    /// A value that parses but cannot be run.
    #[error("{origin}: {location}: {message}")]
    Invalid {
        /// File name.
        origin: String,
        /// Test / phase / pattern entry.
        location: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A test's engine refused what the test asks of it: an unknown engine, another engine's
    /// key, or a depth, O_DIRECT use, kind of files or option it cannot run.
    #[error("{origin}: {location}: {source}")]
    Engine {
        /// File name.
        origin: String,
        /// Test / phase.
        location: String,
        /// What the engine refused, and how to fix it (boxed: the other variants are small).
        source: Box<engines::EngineCheckError>,
    },
    /// A test id fsbench cannot use (it names files and directories).
    #[error("{origin}: [[test]] id: {source}")]
    Id {
        /// File name.
        origin: String,
        /// What is wrong with the id (boxed: the other variants are small).
        source: Box<limits::LimitError>,
    },
    /// The workload file could not be read.
    #[error("cannot read workload file {path}: {source}")]
    Read {
        /// The path given.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// `--suite` named no embedded suite.
    #[error("unknown suite `{name}`; known suites: {known} (see `fsbench suite list`)")]
    UnknownSuite {
        /// What was asked for.
        name: String,
        /// Comma-separated list.
        known: String,
    },
    /// `--test` named ids the suite does not have.
    #[error("suite `{suite}` has no test {missing}; its tests are {known}")]
    UnknownTest {
        /// Suite name.
        suite: String,
        /// The ids not found.
        missing: String,
        /// The suite's ids.
        known: String,
    },
}

impl crate::sys::classify::Classify for WorkloadError {
    /// Every workload error is the user's to fix.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Load a suite: an embedded one by name, or a TOML file by path, resolved with `ctx`.
pub fn load(source: &SuiteSource, ctx: &ResolveCtx) -> Result<Suite, WorkloadError> {
    let (text, origin) = match source {
        SuiteSource::Embedded(name) => {
            let s = suites::get(name).ok_or_else(|| WorkloadError::UnknownSuite {
                name: name.clone(),
                known: suites::names().join(", "),
            })?;
            (s.toml.to_string(), format!("suite {name}"))
        }
        SuiteSource::File(path) => {
            let text = limits::read_regular(path).map_err(|source| WorkloadError::Read {
                path: path.display().to_string(),
                source,
            })?;
            (text, path.display().to_string())
        }
    };
    let spec = spec::parse(&text, &origin)?;
    let mut suite = validate::resolve(&spec, &origin, ctx)?;
    limits::escape_suite_names(&mut suite);
    Ok(suite)
}

/// Where a suite comes from.
#[derive(Debug, Clone)]
pub enum SuiteSource {
    /// An embedded suite by name.
    Embedded(String),
    /// A TOML file.
    File(std::path::PathBuf),
}

impl Suite {
    /// Keep only the tests whose ids are listed (in suite order); error on unknown ids.
    pub fn select(mut self, ids: &[String]) -> Result<Suite, WorkloadError> {
        if ids.is_empty() {
            return Ok(self);
        }
        let missing: Vec<&String> =
            ids.iter().filter(|id| !self.tests.iter().any(|t| &t.id == *id)).collect();
        if !missing.is_empty() {
            return Err(WorkloadError::UnknownTest {
                suite: self.name.clone(),
                missing: missing.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                known: self.tests.iter().map(|t| t.id.as_str()).collect::<Vec<_>>().join(", "),
            });
        }
        self.tests.retain(|t| ids.contains(&t.id));
        Ok(self)
    }
}
