//! The filesystem's own verdict: its scrub or checker, and what the kernel logged.
//!
//! | kind | tool | runs on | "errors reported" when |
//! | --- | --- | --- | --- |
//! | ext2/3/4 | `e2fsck -fn DEV` | the unmounted device | exit status is not 0 |
//! | xfs | `xfs_repair -n DEV` | the unmounted device | exit status is not 0 |
//! | btrfs | `btrfs scrub start -B MNT`, then `btrfs device stats MNT` | the mounted filesystem | the scrub reports errors or exits non-zero, or a device's error counter is not 0 |
//! | zfs | `zpool scrub POOL`, then `zpool status -v POOL` until it is done | the imported pool | a READ/WRITE/CKSUM counter is not 0, or known data errors are listed |
//!
//! Each filesystem's plug-in runs its own ([`crate::testbed::fs::FsIntegrity::check`]).
//! `-n` everywhere: the checkers only report; repair is the filesystem's own business (btrfs
//! and zfs repair from a good copy during scrub).

use crate::sys::cmd::Cmd;
use crate::testbed::{Testbed, TestbedError};

pub use crate::model::integrity::CheckRun;

/// Run the filesystem's scrub or checker on `tb` (which is online before and after), and keep
/// the telling lines of its output.
pub fn scrub_or_check(tb: &mut Testbed) -> Result<CheckRun, TestbedError> {
    let kind = tb.config().kind;
    let fs = kind
        .integrity()
        .map_err(|_| TestbedError::Check(format!("{kind} has no scrub or checker")))?;
    let mut run = CheckRun::default();
    fs.check(tb, &mut run)?;
    run.summary = crate::testbed::fs::telling_lines(fs, &run.output);
    Ok(run)
}

/// A point in the kernel log, to quote what the kernel said during one case.
#[derive(Debug)]
pub struct KernelLog {
    marker: String,
}

/// Patterns of a kernel in trouble: the case is a crash whatever the data did.
const OOPS: [&str; 6] =
    ["Oops", "BUG:", "kernel BUG", "general protection fault", "Call Trace", "WARNING: CPU"];

impl KernelLog {
    /// Write a marker line into the kernel log (`/dev/kmsg`, needs root).
    pub fn mark(label: &str) -> KernelLog {
        let marker = format!("fsbench-integrity: {label} pid {}", std::process::id());
        let _ = std::fs::write("/dev/kmsg", format!("<6>{marker}\n"));
        KernelLog { marker }
    }

    /// Kernel log lines since the marker that concern `names` (loop devices, pool) or report a
    /// kernel problem. At most 40 lines.
    pub fn lines_since(&self, names: &[String]) -> Vec<String> {
        let Ok(out) = Cmd::new("dmesg").output() else {
            return vec!["(dmesg could not be run)".into()];
        };
        let lines: Vec<&str> = out.stdout.lines().collect();
        let Some(start) = lines.iter().rposition(|l| l.contains(&self.marker)) else {
            return Vec::new();
        };
        lines[start + 1..]
            .iter()
            .filter(|l| names.iter().any(|n| mentions(l, n)) || OOPS.iter().any(|p| l.contains(p)))
            .take(40)
            .map(|l| l.to_string())
            .collect()
    }
}

/// Whether `line` names device `name` as a word (`loop3` but not `loop30`).
fn mentions(line: &str, name: &str) -> bool {
    line.match_indices(name)
        .any(|(i, _)| !line[i + name.len()..].chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// Whether kernel log lines show a kernel problem (oops, BUG, warning with a trace).
pub fn kernel_trouble(lines: &[String]) -> bool {
    lines.iter().any(|l| OOPS.iter().any(|p| l.contains(p)))
}

/// What a kernel filesystem logs when it meets a bad block (btrfs "csum failed", "read error
/// corrected", ext4 "EXT4-fs error", xfs "Metadata corruption detected", a block-layer I/O
/// error).
const DETECTED: [&str; 11] = [
    "csum failed",
    "checksum error",
    "checksum mismatch",
    "read error corrected",
    "fixed up error",
    "unable to fixup",
    "bad tree block",
    "EXT4-fs error",
    "corruption detected",
    "Corruption of in-memory data",
    "I/O error",
];

/// Whether kernel log lines show that the filesystem detected a bad block itself.
pub fn kernel_detected(lines: &[String]) -> bool {
    lines.iter().any(|l| DETECTED.iter().any(|p| l.contains(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_match_whole() {
        assert!(mentions("BTRFS warning (device loop3): csum failed", "loop3"));
        assert!(!mentions("BTRFS warning (device loop30): csum failed", "loop3"));
        assert!(kernel_detected(&["BTRFS warning (device loop3): csum failed root 5".into()]));
        assert!(!kernel_detected(&[
            "BTRFS info (device loop0): using crc32c (crc32c-lib) checksum algorithm".into()
        ]));
        assert!(kernel_trouble(&["BUG: unable to handle page fault".into()]));
        assert!(!kernel_trouble(&["EXT4-fs (loop3): mounted filesystem".into()]));
    }
}
