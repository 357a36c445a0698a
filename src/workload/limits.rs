//! Limits on what a workload may ask, checked once before any I/O: each check is a small
//! function the validator and the command line call with a one-line hook.
//!
//! - Test ids become file and directory names and appear in messages: a safe character set and
//!   length ([`check_id`]).
//! - Amounts whose duration cannot be bounded (`bytes = "1E"`, `seconds = 1e12`) need an explicit
//!   `--allow-long` ([`check_bounded`]).
//! - Files must fit where they are written ([`check_space`]).
//! - Workload files must be regular files: a FIFO or device would block or never end
//!   ([`read_regular`]).
//! - Names shown on the terminal have control characters escaped ([`escape_controls`]).

use crate::model::job::{Amount, Suite, TestDef};
use crate::model::units::fmt_bytes;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Longest test id.
pub const MAX_ID_LEN: usize = 64;
/// Longest timed phase allowed without `--allow-long` (one day).
pub const MAX_SECONDS: f64 = 86_400.0;
/// Most bytes per thread and phase without `--allow-long` (1 TiB).
pub const MAX_BYTES: u64 = 1 << 40;
/// Most operations per thread and phase without `--allow-long`.
pub const MAX_OPS: u64 = 10_000_000_000;

/// A workload over one of the limits above: what, where, and how to fix it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    /// An empty test id.
    #[error("id must not be empty")]
    EmptyId,
    /// A test id longer than [`MAX_ID_LEN`].
    #[error("id {shown}... is {len} characters long; at most {MAX_ID_LEN}", MAX_ID_LEN = MAX_ID_LEN)]
    IdTooLong {
        /// Its first 40 characters, control characters escaped.
        shown: String,
        /// Its length in bytes.
        len: usize,
    },
    /// A test id with a character outside `A-Z a-z 0-9 . _ -`.
    #[error(
        "id {shown:?} contains {found:?}; ids may hold only letters, digits, '.', '_' and '-'"
    )]
    IdChar {
        /// The id (its first 40 characters), control characters escaped.
        shown: String,
        /// The first character not allowed.
        found: char,
    },
    /// A test id that would be a hidden name or an option.
    #[error("id {shown:?} must not start with '.' or '-'")]
    IdStart {
        /// The id (its first 40 characters), control characters escaped.
        shown: String,
    },
    /// An amount that may not finish in bounded time, without `--allow-long`.
    #[error(
        "test {test}, phase {phase}: amount {what} may run for days (limits without --allow-long: {} s, {} bytes, {} ops per thread); lower it, or pass --allow-long if you mean it",
        MAX_SECONDS, MAX_BYTES, MAX_OPS
    )]
    Unbounded {
        /// The test's id, escaped.
        test: String,
        /// The phase's name, escaped.
        phase: String,
        /// The amount as written, e.g. `seconds = 1e12`.
        what: String,
    },
    /// A test whose files need more than the directory has free.
    #[error(
        "test {test} ({name}) needs {} of files, but {} has {} free; {remedy} (--no-space-check runs it anyway, to see the filesystem run full)",
        fmt_bytes(*need), dir.display(), fmt_bytes(*available)
    )]
    NoSpace {
        /// The test's id, escaped.
        test: String,
        /// The test's name.
        name: String,
        /// Bytes its files need.
        need: u64,
        /// The directory.
        dir: PathBuf,
        /// Bytes available there to this user.
        available: u64,
        /// What to do ([`DIR_REMEDY`] or [`BED_REMEDY`]).
        remedy: &'static str,
    },
    /// A test whose files need more than a testbed's image.
    #[error(
        "test {test} ({name}) needs {} of files, but the {label} testbed's image is {}; {} (--no-space-check runs it anyway, to see the filesystem run full)",
        fmt_bytes(*need), fmt_bytes(*image), BED_REMEDY
    )]
    DoesNotFit {
        /// The test's id, escaped.
        test: String,
        /// The test's name.
        name: String,
        /// Bytes its files need.
        need: u64,
        /// The testbed's label.
        label: String,
        /// Bytes of the image.
        image: u64,
    },
}

impl crate::sys::classify::Classify for LimitError {
    /// Every limit is on what the user asked for.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// A test id: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.` or `-` (so never `..`, a
/// hidden name or an option).
pub fn check_id(id: &str) -> Result<(), LimitError> {
    let shown = escape_controls(&id.chars().take(40).collect::<String>());
    if id.is_empty() {
        return Err(LimitError::EmptyId);
    }
    if id.len() > MAX_ID_LEN {
        return Err(LimitError::IdTooLong { shown, len: id.len() });
    }
    if let Some(c) = id.chars().find(|c| !(c.is_ascii_alphanumeric() || "._-".contains(*c))) {
        return Err(LimitError::IdChar { shown, found: c });
    }
    if id.starts_with('.') || id.starts_with('-') {
        return Err(LimitError::IdStart { shown });
    }
    Ok(())
}

/// Refuse amounts that cannot finish in bounded time (see the limits above) unless allowed.
pub fn check_bounded(t: &TestDef) -> Result<(), LimitError> {
    for p in &t.phases {
        let over = match p.amount {
            Amount::Seconds(s) if s.is_nan() || s > MAX_SECONDS => Some(format!("seconds = {s}")),
            Amount::Bytes(b) if b > MAX_BYTES => Some(format!("bytes = {b}")),
            Amount::Ops(n) if n > MAX_OPS => Some(format!("ops = {n}")),
            _ => None,
        };
        if let Some(what) = over {
            return Err(LimitError::Unbounded {
                test: escape_controls(&t.id),
                phase: escape_controls(&p.name),
                what,
            });
        }
    }
    Ok(())
}

/// [`check_bounded`] for every test of a suite, unless `allow_long`.
pub fn check_suite_bounded(suite: &Suite, allow_long: bool) -> Result<(), LimitError> {
    if allow_long {
        return Ok(());
    }
    suite.tests.iter().try_for_each(check_bounded)
}

/// Refuse tests whose files cannot fit in `dir` (statvfs: bytes available to this user), before
/// any I/O. Fill phases fill whatever they are given and are not counted. A directory whose
/// free space cannot be read is not checked (the run then finds out).
/// `remedy` ends the message ([`DIR_REMEDY`] or [`BED_REMEDY`]).
pub fn check_space(suite: &Suite, dir: &Path, remedy: &'static str) -> Result<(), LimitError> {
    let Ok(st) = rustix::fs::statvfs(dir) else {
        return Ok(());
    };
    let available = st.f_bavail.saturating_mul(st.f_frsize);
    for t in suite.tests.iter().filter(|t| !fills(t)) {
        let need = t.footprint_bytes();
        if need > available {
            return Err(LimitError::NoSpace {
                test: escape_controls(&t.id),
                name: t.name.clone(),
                need,
                dir: dir.to_path_buf(),
                available,
                remedy,
            });
        }
    }
    Ok(())
}

/// Whether a phase of `t` fills the filesystem it is given (its size is the filesystem's).
fn fills(t: &crate::model::job::TestDef) -> bool {
    t.phases.iter().any(|p| matches!(p.amount, crate::model::job::Amount::Fill(_)))
}

/// What to do when a directory is too small.
pub const DIR_REMEDY: &str = "use a smaller --scale or size, or another directory";
/// What to do when a testbed is too small.
pub const BED_REMEDY: &str = "use a smaller --scale, or a larger --size (or leave --size out: the testbed is then sized for the suite)";

/// Refuse tests whose files cannot fit in a testbed image of `image_bytes` (`label`'s), before
/// it is made. The filesystem's own metadata takes more, which the check after mounting sees.
pub fn check_fits(suite: &Suite, image_bytes: u64, label: &str) -> Result<(), LimitError> {
    for t in suite.tests.iter().filter(|t| !fills(t)) {
        let need = t.footprint_bytes();
        if need > image_bytes {
            return Err(LimitError::DoesNotFit {
                test: escape_controls(&t.id),
                name: t.name.clone(),
                need,
                label: label.to_string(),
                image: image_bytes,
            });
        }
    }
    Ok(())
}

/// Read a workload file, refusing anything but a regular file (opened without blocking, so a
/// FIFO cannot hang fsbench).
pub fn read_regular(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or directory); give a TOML file",
        ));
    }
    let mut text = String::new();
    f.read_to_string(&mut text)?;
    Ok(text)
}

/// `s` with control characters (ANSI escapes, newlines, NUL, ...) shown as `\u{1b}` escapes, so
/// a name from a workload file cannot drive the terminal.
pub fn escape_controls(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
        .collect()
}

/// Escape control characters in every name and description of `suite` (they are shown on the
/// terminal, in CSV and in reports); ids are already limited by [`check_id`].
pub fn escape_suite_names(suite: &mut Suite) {
    suite.name = escape_controls(&suite.name);
    suite.description = escape_controls(&suite.description);
    for t in &mut suite.tests {
        t.name = escape_controls(&t.name);
        t.description = escape_controls(&t.description);
        for p in &mut t.phases {
            p.name = escape_controls(&p.name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        for ok in ["1", "t14", "rand-write_4k.v2"] {
            check_id(ok).unwrap();
        }
        for (bad, why) in [
            ("a/b", "contains '/'"),
            ("..", "must not start"),
            (".hidden", "must not start"),
            ("-x", "must not start"),
            ("a\0b", "contains '\\0'"),
            ("a\u{1b}[31m", "contains '\\u{1b}'"),
            ("", "empty"),
        ] {
            let e = check_id(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
        let e = check_id(&"a".repeat(10_000)).unwrap_err().to_string();
        assert!(e.contains("10000 characters"), "{e}");
    }

    #[test]
    fn controls_are_escaped() {
        assert_eq!(escape_controls("ok"), "ok");
        assert_eq!(escape_controls("a\u{1b}[2Jb\n"), "a\\u{1b}[2Jb\\n");
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("w.toml");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_regular(&p).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(read_regular(t.path()).is_err());
    }
}
