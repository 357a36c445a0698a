//! Why a test failed: the engine's typed error ([`EngineError`]) and the words a result keeps
//! ([`Reason`], the `reason` of [`crate::model::result::TestStatus::Failed`]).
//!
//! The error is the engine's (`crate::engine` produces every one), but it lives here, in the
//! model, because the test status carries it and the model is below the engine: a result keeps
//! the typed error it was failed with, so the command line can map it to an exit code in one
//! place ([`EngineError::is_bad_input`], [`Reason::is_bad_input`]) without parsing words.
//! Only the words are serialised (JSON, the store and a multi-client run's messages keep
//! `reason` as it always was); a result read back has the words and no typed error.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How the engine failed a test (or a phase of it).
///
/// Each variant renders into the words shown as the test's `reason`; [`EngineError::At`]
/// prefixes where it happened (`phase `read``, `setup`, `prefill`, `role `writer``).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Making or preparing the test's files, or starting an engine, failed: the system's doing,
    /// not the workload's (a directory that cannot be made, a test file that cannot be opened).
    #[error("{what}: {reason}")]
    Setup {
        /// What was being done (`creating /x/t1.set`).
        what: String,
        /// The system's words.
        reason: String,
        /// errno, when there is one.
        errno: Option<i32>,
    },
    /// The workload asks for what this target or machine cannot do, found before the test's
    /// first operation: O_DIRECT refused or misaligned on this filesystem, absolute paths under a
    /// directory others can write, an io_uring feature the kernel refuses. The user's to change.
    #[error("{reason}")]
    Unsupported {
        /// What cannot be done here, and how to change the test.
        reason: String,
    },
    /// An operation failed: which (the op and where, e.g. `write of 4096 bytes at offset 0`),
    /// on which file when it is named apart from the op, and the system's error.
    #[error("{op}{}: {reason}", path_words(.path))]
    Io {
        /// The op, with its size and offset or its relative path.
        op: String,
        /// The file, when the op's words do not name it.
        path: Option<PathBuf>,
        /// errno, when there is one.
        errno: Option<i32>,
        /// The system's words (`No such file or directory (os error 2)`).
        reason: String,
    },
    /// The filesystem has no room: ENOSPC during an op, or (no op: found before any file was
    /// made) a set that is created whole and cannot fit.
    #[error("{}{reason}", op_words(.op))]
    NoSpace {
        /// The op that met ENOSPC; `None` when found before the test started.
        op: Option<String>,
        /// What was full, and how to make the test fit.
        reason: String,
    },
    /// `--verify`: what was read back is not what was written.
    #[error("verify: {}{}: expected {expected}, found {found}{more}", .path.display(), offset_words(.offset))]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Offset of the first bad 4 KiB block (`None`: the file's length is wrong).
        offset: Option<u64>,
        /// What should be there (`the block of file 0 offset 4096 generation 1`, `9000 bytes`).
        expected: String,
        /// What is there.
        found: String,
        /// More about the damage (` (3 bad 4 KiB blocks in this file)`), or empty.
        more: String,
    },
    /// Something outside the engine at the edge of a phase failed it: the suite driver's hooks
    /// (a multi-client run's barrier, or other processes' failures it agreed on).
    #[error("{reason}")]
    Hook {
        /// The hook's words.
        reason: String,
        /// What failed was bad input (every process that failed, failed so).
        bad_input: bool,
    },
    /// Where `error` happened, and what the state was then.
    #[error("{place}: {error}{note}")]
    At {
        /// `phase `read``, `setup`, `prefill`, `setup of role `writer``, ...
        place: String,
        /// What happened there.
        error: Box<EngineError>,
        /// The state when it stopped (a fileset's files), starting with `; `, or empty.
        note: String,
    },
}

fn path_words(p: &Option<PathBuf>) -> String {
    p.as_ref().map(|p| format!(" {}", p.display())).unwrap_or_default()
}

fn op_words(op: &Option<String>) -> String {
    op.as_ref().map(|o| format!("{o}: ")).unwrap_or_default()
}

fn offset_words(o: &Option<u64>) -> String {
    o.map(|o| format!(" at offset {o}")).unwrap_or_default()
}

impl EngineError {
    /// Whether the test could not run as written here, before it did anything: the user's input
    /// (the workload, `--scale`, the directory) is what to change. Every other failure happened
    /// while the test ran.
    pub fn is_bad_input(&self) -> bool {
        match self {
            EngineError::Unsupported { .. } => true,
            EngineError::NoSpace { op, .. } => op.is_none(),
            EngineError::At { error, .. } => error.is_bad_input(),
            EngineError::Hook { bad_input, .. } => *bad_input,
            EngineError::Setup { .. } | EngineError::Io { .. } | EngineError::Corrupt { .. } => {
                false
            }
        }
    }

    /// A failed system call while doing `op` (on `path`, when the op's words do not name it):
    /// ENOSPC is [`EngineError::NoSpace`], anything else [`EngineError::Io`].
    pub fn io(op: impl Into<String>, path: Option<PathBuf>, e: &std::io::Error) -> EngineError {
        let op = op.into();
        if e.raw_os_error() == Some(libc_enospc()) {
            let op = Some(format!("{op}{}", path_words(&path)));
            return EngineError::NoSpace { op, reason: e.to_string() };
        }
        EngineError::Io { op, path, errno: e.raw_os_error(), reason: e.to_string() }
    }

    /// A failure while making or preparing files (`what`: what was being done).
    pub fn setup(what: impl Into<String>, e: &std::io::Error) -> EngineError {
        EngineError::Setup { what: what.into(), reason: e.to_string(), errno: e.raw_os_error() }
    }

    /// What the workload asks and this target cannot do.
    pub fn unsupported(reason: impl Into<String>) -> EngineError {
        EngineError::Unsupported { reason: reason.into() }
    }

    /// A hook's failure (not bad input).
    pub fn hook(reason: impl Into<String>) -> EngineError {
        EngineError::Hook { reason: reason.into(), bad_input: false }
    }

    /// This error, as having happened at `place` (`phase `read``, `setup`, ...).
    pub fn at(self, place: impl Into<String>) -> EngineError {
        EngineError::At { place: place.into(), error: Box::new(self), note: String::new() }
    }

    /// The error without its places: what happened.
    pub fn root(&self) -> &EngineError {
        match self {
            EngineError::At { error, .. } => error.root(),
            e => e,
        }
    }

    /// errno of the failed system call, when there is one.
    pub fn errno(&self) -> Option<i32> {
        match self.root() {
            EngineError::Setup { errno, .. } | EngineError::Io { errno, .. } => *errno,
            EngineError::NoSpace { op: Some(_), .. } => Some(libc_enospc()),
            _ => None,
        }
    }
}

impl crate::sys::classify::Classify for EngineError {
    /// [`EngineError::is_bad_input`]: the test could not run as written here (the workload, the
    /// directory or `--scale` is what to change), or it failed while it ran.
    fn is_bad_input(&self) -> bool {
        EngineError::is_bad_input(self)
    }
}

/// ENOSPC (the model does not depend on `libc`; the value is the same on every Linux).
const fn libc_enospc() -> i32 {
    28
}

/// Why a test failed, as shown and stored: the words, and, when the engine failed the test,
/// the typed error they were rendered from. Serialised as the words alone (the `reason`
/// string of JSON and the store, as always); read back, it has no typed error. Two reasons are
/// equal when their words are.
#[derive(Debug, Clone)]
pub struct Reason {
    text: String,
    error: Option<EngineError>,
}

impl Reason {
    /// The words.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The typed error, when the engine failed the test in this process.
    pub fn error(&self) -> Option<&EngineError> {
        self.error.as_ref()
    }

    /// Whether the failure was bad input ([`EngineError::is_bad_input`]); `false` for words
    /// without a typed error.
    pub fn is_bad_input(&self) -> bool {
        self.error.as_ref().is_some_and(EngineError::is_bad_input)
    }
}

impl From<EngineError> for Reason {
    fn from(e: EngineError) -> Reason {
        Reason { text: e.to_string(), error: Some(e) }
    }
}

impl From<String> for Reason {
    fn from(text: String) -> Reason {
        Reason { text, error: None }
    }
}

impl From<&str> for Reason {
    fn from(text: &str) -> Reason {
        Reason { text: text.to_string(), error: None }
    }
}

impl std::ops::Deref for Reason {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for Reason {
    fn eq(&self, other: &Reason) -> bool {
        self.text == other.text
    }
}

impl Eq for Reason {}

impl Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Reason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Reason, D::Error> {
        String::deserialize(d).map(Reason::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_renders_the_words_of_its_place_and_keeps_its_kind() {
        let e = std::io::Error::from_raw_os_error(2);
        let open = EngineError::io("open", Some("/x/t1.dat".into()), &e).at("phase `read`");
        assert_eq!(open.to_string(), format!("phase `read`: open /x/t1.dat: {e}"));
        assert_eq!(open.errno(), Some(2));
        assert!(!open.is_bad_input(), "an op that failed while the test ran");
        let full = std::io::Error::from_raw_os_error(28);
        let w = EngineError::io("write of 4096 bytes at offset 0", None, &full);
        assert!(matches!(w, EngineError::NoSpace { op: Some(_), .. }), "{w:?}");
        assert_eq!(w.to_string(), format!("write of 4096 bytes at offset 0: {full}"));
        assert!(!w.is_bad_input(), "ENOSPC while running: the test ran");
        let fit = EngineError::NoSpace { op: None, reason: "the fileset needs 2G".into() };
        assert!(fit.at("setup").is_bad_input(), "a set that cannot fit, found before it started");
        assert!(EngineError::unsupported("O_DIRECT refused").at("setup").is_bad_input());
        let c = EngineError::Corrupt {
            path: "/x/f".into(),
            offset: Some(4096),
            expected: "the block of file 0 offset 4096 generation 1".into(),
            found: "zeroes".into(),
            more: String::new(),
        };
        assert_eq!(
            c.to_string(),
            "verify: /x/f at offset 4096: expected the block of file 0 offset 4096 generation 1, found zeroes"
        );
    }

    #[test]
    fn a_reason_serialises_as_its_words_and_compares_by_them() {
        let e = EngineError::unsupported("O_DIRECT refused here").at("setup");
        let r = Reason::from(e.clone());
        assert_eq!(serde_json::to_string(&r).unwrap(), "\"setup: O_DIRECT refused here\"");
        assert!(r.is_bad_input() && r.error() == Some(&e));
        let back: Reason = serde_json::from_str("\"setup: O_DIRECT refused here\"").unwrap();
        assert_eq!(back, r, "equal words");
        assert!(back.error().is_none() && !back.is_bad_input(), "words only, read back");
    }
}
