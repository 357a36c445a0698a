//! How a stored run came about and how it ended.

/// What produced a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// `fsbench run`.
    Run,
    /// `fsbench compare`.
    Compare,
    /// `fsbench profile` (schema 3 and later).
    Profile,
    /// `fsbench integrity` (schema 3 and later).
    Integrity,
}

impl RunKind {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Run => "run",
            RunKind::Compare => "compare",
            RunKind::Profile => "profile",
            RunKind::Integrity => "integrity",
        }
    }

    /// As stored; `None` for a kind this fsbench does not know.
    pub fn parse(s: &str) -> Option<RunKind> {
        [RunKind::Run, RunKind::Compare, RunKind::Profile, RunKind::Integrity]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    /// Not finished: still running, or the process was killed.
    Running,
    /// Every test ran and none failed.
    Ok,
    /// A test failed.
    Failed,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted,
}

impl RunStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> RunStatus {
        match s {
            "ok" => RunStatus::Ok,
            "failed" => RunStatus::Failed,
            "interrupted" => RunStatus::Interrupted,
            _ => RunStatus::Running,
        }
    }
}
