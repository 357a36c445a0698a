//! The filesystem's own verdict: its scrub or checker, and what the kernel logged.
//!
//! | kind | tool | runs on | "errors reported" when |
//! | --- | --- | --- | --- |
//! | ext2/3/4 | `e2fsck -fn DEV` | the unmounted device | exit status is not 0 |
//! | xfs | `xfs_repair -n DEV` | the unmounted device | exit status is not 0 |
//! | btrfs | `btrfs scrub start -B MNT`, then `btrfs device stats MNT` | the mounted filesystem | the scrub reports errors or exits non-zero, or a device's error counter is not 0 |
//! | zfs | `zpool scrub POOL`, then `zpool status -v POOL` until it is done | the imported pool | a READ/WRITE/CKSUM counter is not 0, or known data errors are listed |
//!
//! `-n` everywhere: the checkers only report; repair is the filesystem's own business (btrfs
//! and zfs repair from a good copy during scrub).

use crate::model::testbed::FsKind;
use crate::sys::cmd::{Cmd, CmdOutput};
use crate::testbed::{Testbed, TestbedError};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// One scrub or check and what it said.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// The command lines run.
    pub commands: Vec<String>,
    /// Their output (stdout and stderr), in order.
    pub output: String,
    /// Exit status of the scrub or check itself.
    pub status: String,
    /// Whether the tool reported errors (see the module table).
    pub errors_reported: bool,
    /// The lines of the output that say what was found (for the evidence line).
    pub summary: String,
}

/// The telling lines of a tool's output: error counts, non-zero counters, findings. At most 3.
fn telling_lines(kind: FsKind, out: &str) -> String {
    let keep = |l: &str| -> bool {
        let t = l.trim();
        match kind {
            FsKind::Btrfs => {
                t.starts_with("Error summary:")
                    || ((t.starts_with("Corrected:") || t.starts_with("Uncorrectable:"))
                        && !t.ends_with(" 0"))
                    || (t.starts_with('[') && !t.ends_with(" 0"))
            }
            FsKind::Zfs => {
                t.starts_with("scrub:")
                    || t.starts_with("scan:")
                    || (t.starts_with("errors:") && !t.contains("No known data errors"))
                    || {
                        let w: Vec<&str> = t.split_whitespace().collect();
                        w.len() >= 5
                            && matches!(w[1], "ONLINE" | "DEGRADED" | "FAULTED" | "UNAVAIL")
                            && w[2..5].iter().any(|c| *c != "0")
                            && w[2..5].iter().all(|c| c.chars().all(|ch| ch.is_ascii_digit()))
                    }
            }
            _ => {
                let l = t.to_ascii_lowercase();
                ["corrupt", "error", "bad ", "invalid", "would ", "salvage", "checksum"]
                    .iter()
                    .any(|p| l.contains(p))
            }
        }
    };
    out.lines()
        .filter(|l| !l.starts_with("$ "))
        .filter(|l| keep(l))
        .take(3)
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn add(run: &mut CheckRun, o: &CmdOutput) {
    run.commands.push(o.cmdline.clone());
    if !run.output.is_empty() {
        run.output.push('\n');
    }
    run.output.push_str(&format!("$ {}\n{}", o.cmdline, o.text()));
}

/// Run the filesystem's scrub or check on `tb` (which is online before and after).
pub fn scrub_or_check(tb: &mut Testbed) -> Result<CheckRun, TestbedError> {
    let mut run = CheckRun::default();
    let kind = tb.config().kind;
    match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 | FsKind::Xfs => {
            let dev = tb
                .loop_devices()
                .into_iter()
                .next()
                .ok_or_else(|| TestbedError::Check("no loop device to check".into()))?;
            tb.offline()?;
            let cmd = if kind == FsKind::Xfs {
                Cmd::new("xfs_repair")
                    .arg("-n")
                    .arg(&dev)
                    .hint("install the Debian package xfsprogs")
            } else {
                Cmd::new("e2fsck").arg("-fn").arg(&dev).hint("install the Debian package e2fsprogs")
            };
            // Ctrl-C stops the check at once (it only reads).
            let o = cmd
                .interruptible()
                .output()
                .map_err(|e| TestbedError::cmd("checking the filesystem", e));
            tb.online()?;
            let o = o?;
            add(&mut run, &o);
            run.status = o.status.clone();
            run.errors_reported = !o.success();
        }
        FsKind::Btrfs => {
            let mnt = tb.mountpoint().to_path_buf();
            let o = Cmd::new("btrfs")
                .args(["scrub", "start", "-B"])
                .arg(&mnt)
                .interruptible()
                .output()
                .map_err(|e| TestbedError::cmd("btrfs scrub", e))?;
            add(&mut run, &o);
            run.status = o.status.clone();
            run.errors_reported = !o.success() || btrfs_scrub_found_errors(&o.text());
            let s = Cmd::new("btrfs")
                .args(["device", "stats"])
                .arg(&mnt)
                .output()
                .map_err(|e| TestbedError::cmd("btrfs device stats", e))?;
            add(&mut run, &s);
            run.errors_reported |= btrfs_stats_nonzero(&s.stdout);
        }
        FsKind::Zfs => {
            let pool = tb
                .zfs_pool()
                .ok_or_else(|| TestbedError::Check("zfs testbed without a pool".into()))?
                .to_string();
            use crate::testbed::zfs_watch as watch;
            let o = watch::output(watch::zcmd("zpool").args(["scrub", &pool]), Some(&pool))
                .map_err(|e| TestbedError::cmd("zpool scrub", e))?;
            add(&mut run, &o);
            run.status = o.status.clone();
            let deadline = Instant::now() + Duration::from_secs(300);
            let status = loop {
                let s =
                    watch::output(watch::zcmd("zpool").args(["status", "-v", &pool]), Some(&pool))
                        .map_err(|e| TestbedError::cmd("zpool status", e))?;
                if !s.stdout.contains("in progress")
                    || Instant::now() > deadline
                    || crate::sys::signals::interrupted()
                {
                    break s;
                }
                std::thread::sleep(Duration::from_millis(200));
            };
            add(&mut run, &status);
            run.errors_reported = !o.success() || zpool_status_errors(&status.stdout);
        }
        FsKind::Tmpfs => {
            return Err(TestbedError::Check("tmpfs has no scrub or checker".into()));
        }
    }
    run.summary = telling_lines(kind, &run.output);
    Ok(run)
}

/// btrfs-progs 6.x prints "Error summary:    no errors found", or the error kinds and counts.
fn btrfs_scrub_found_errors(out: &str) -> bool {
    out.lines().any(|l| {
        let l = l.trim();
        (l.starts_with("Error summary:") && !l.contains("no errors found"))
            || ((l.starts_with("Corrected:") || l.starts_with("Uncorrectable:"))
                && l.split_whitespace().nth(1).is_some_and(|n| n != "0"))
    })
}

/// `[/dev/loop3].corruption_errs   1`: any counter not 0.
fn btrfs_stats_nonzero(out: &str) -> bool {
    out.lines().any(|l| l.split_whitespace().nth(1).is_some_and(|n| n != "0"))
}

/// Any non-zero READ/WRITE/CKSUM counter in the config table, or listed data errors.
fn zpool_status_errors(out: &str) -> bool {
    let mut in_table = false;
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.first() == Some(&"NAME") && w.contains(&"CKSUM") {
            in_table = true;
            continue;
        }
        if in_table {
            if w.is_empty() {
                in_table = false;
                continue;
            }
            if w.len() >= 5 && w[2..5].iter().any(|c| *c != "0") {
                return true;
            }
        }
        if line.trim_start().starts_with("errors:") && !line.contains("No known data errors") {
            return true;
        }
    }
    false
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
    fn btrfs_scrub_summaries() {
        assert!(!btrfs_scrub_found_errors("Status: finished\nError summary:    no errors found\n"));
        assert!(btrfs_scrub_found_errors(
            "Error summary:    csum=1\n  Corrected:      1\n  Uncorrectable:  0\n"
        ));
        assert!(btrfs_stats_nonzero("[/dev/loop3].corruption_errs   1\n"));
        assert!(!btrfs_stats_nonzero(
            "[/dev/loop3].corruption_errs   0\n[/dev/loop3].write_io_errs 0\n"
        ));
    }

    #[test]
    fn summaries_quote_the_findings() {
        let z = "$ zpool status -v p\n scrub: scrub completed after 0h0m with 0 errors\nconfig:\n\tNAME STATE READ WRITE CKSUM\n\tp ONLINE 0 0 0\n\t  mirror-0 ONLINE 0 0 0\n\t    /t/dev0 ONLINE 0 0 0\n\t    /t/dev1 ONLINE 0 0 1  4K repaired\n\nerrors: No known data errors\n";
        assert_eq!(
            telling_lines(FsKind::Zfs, z),
            "scrub: scrub completed after 0h0m with 0 errors | /t/dev1 ONLINE 0 0 1 4K repaired"
        );
        let b = "Error summary:    csum=1\n  Corrected:      1\n  Uncorrectable:  0\n[/dev/loop1].corruption_errs  1\n[/dev/loop1].read_io_errs 0\n";
        assert_eq!(
            telling_lines(FsKind::Btrfs, b),
            "Error summary: csum=1 | Corrected: 1 | [/dev/loop1].corruption_errs 1"
        );
        let e = "Pass 2: Checking directory structure\nDirectory inode 8193, block #0, offset 0: directory corrupted\nSalvage? no\n";
        assert_eq!(
            telling_lines(FsKind::Ext4, e),
            "Directory inode 8193, block #0, offset 0: directory corrupted | Salvage? no"
        );
    }

    #[test]
    fn zpool_status_counters_and_errors() {
        let clean = "  pool: p\n state: ONLINE\nconfig:\n\n\tNAME STATE READ WRITE CKSUM\n\tp ONLINE 0 0 0\n\t  /t/dev0 ONLINE 0 0 0\n\nerrors: No known data errors\n";
        assert!(!zpool_status_errors(clean));
        let bad = clean.replace("/t/dev0 ONLINE 0 0 0", "/t/dev0 ONLINE 0 0 2  4K repaired");
        assert!(zpool_status_errors(&bad));
        let lost = clean.replace("No known data errors", "Permanent errors have been detected");
        assert!(zpool_status_errors(&lost));
    }

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
