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
use std::io::Read;
use std::path::Path;

/// Longest test id.
pub const MAX_ID_LEN: usize = 64;
/// Longest timed phase allowed without `--allow-long` (one day).
pub const MAX_SECONDS: f64 = 86_400.0;
/// Most bytes per thread and phase without `--allow-long` (1 TiB).
pub const MAX_BYTES: u64 = 1 << 40;
/// Most operations per thread and phase without `--allow-long`.
pub const MAX_OPS: u64 = 10_000_000_000;

/// A test id: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with `.` or `-` (so never `..`, a
/// hidden name or an option).
pub fn check_id(id: &str) -> Result<(), String> {
    let shown = escape_controls(&id.chars().take(40).collect::<String>());
    if id.is_empty() {
        return Err("id must not be empty".into());
    }
    if id.len() > MAX_ID_LEN {
        return Err(format!("id {shown}... is {} characters long; at most {MAX_ID_LEN}", id.len()));
    }
    if let Some(c) = id.chars().find(|c| !(c.is_ascii_alphanumeric() || "._-".contains(*c))) {
        return Err(format!(
            "id {shown:?} contains {:?}; ids may hold only letters, digits, '.', '_' and '-'",
            c
        ));
    }
    if id.starts_with('.') || id.starts_with('-') {
        return Err(format!("id {shown:?} must not start with '.' or '-'"));
    }
    Ok(())
}

/// Refuse amounts that cannot finish in bounded time (see the limits above) unless allowed.
pub fn check_bounded(t: &TestDef) -> Result<(), String> {
    for p in &t.phases {
        let over = match p.amount {
            Amount::Seconds(s) if s.is_nan() || s > MAX_SECONDS => Some(format!("seconds = {s}")),
            Amount::Bytes(b) if b > MAX_BYTES => Some(format!("bytes = {b}")),
            Amount::Ops(n) if n > MAX_OPS => Some(format!("ops = {n}")),
            _ => None,
        };
        if let Some(what) = over {
            return Err(format!(
                "test {}, phase {}: amount {what} may run for days (limits without --allow-long: {} s, {} bytes, {} ops per thread); lower it, or pass --allow-long if you mean it",
                escape_controls(&t.id),
                escape_controls(&p.name),
                MAX_SECONDS,
                MAX_BYTES,
                MAX_OPS
            ));
        }
    }
    Ok(())
}

/// [`check_bounded`] for every test of a suite, unless `allow_long`.
pub fn check_suite_bounded(suite: &Suite, allow_long: bool) -> Result<(), String> {
    if allow_long {
        return Ok(());
    }
    suite.tests.iter().try_for_each(check_bounded)
}

/// Refuse tests whose files cannot fit in `dir` (statvfs: bytes available to this user), before
/// any I/O. Fill phases fill whatever they are given and are not counted.
/// `remedy` ends the message ([`DIR_REMEDY`] or [`BED_REMEDY`]).
pub fn check_space(suite: &Suite, dir: &Path, remedy: &str) -> Result<(), String> {
    let Ok(st) = rustix::fs::statvfs(dir) else {
        return Ok(());
    };
    let available = st.f_bavail.saturating_mul(st.f_frsize);
    for t in suite.tests.iter().filter(|t| !fills(t)) {
        let need = t.footprint_bytes();
        if need > available {
            return Err(format!(
                "test {} ({}) needs {} of files, but {} has {} free; {remedy} (--no-space-check runs it anyway, to see the filesystem run full)",
                escape_controls(&t.id),
                t.name,
                crate::model::units::fmt_bytes(need),
                dir.display(),
                crate::model::units::fmt_bytes(available)
            ));
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
pub fn check_fits(suite: &Suite, image_bytes: u64, label: &str) -> Result<(), String> {
    for t in suite.tests.iter().filter(|t| !fills(t)) {
        let need = t.footprint_bytes();
        if need > image_bytes {
            return Err(format!(
                "test {} ({}) needs {} of files, but the {label} testbed's image is {}; {BED_REMEDY} (--no-space-check runs it anyway, to see the filesystem run full)",
                escape_controls(&t.id),
                t.name,
                crate::model::units::fmt_bytes(need),
                crate::model::units::fmt_bytes(image_bytes),
            ));
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
            let e = check_id(bad).unwrap_err();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
        let e = check_id(&"a".repeat(10_000)).unwrap_err();
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
