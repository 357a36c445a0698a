//! Results: one [`Case`] per (target, fault) with its evidence, its [`Outcome`], and the
//! matrix per configuration (IRON's table: block type × fault).

use super::check::CheckRun;
use super::dataset::ReadBack;
use super::fault::Fault;
use super::locate::{BlockCopy, ToolLocation};
use super::target::Target;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// What the filesystem did with a fault, the one word in a matrix cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Wrong data was returned without an error, at some read (including a directory listing
    /// that lacks entries).
    Silent,
    /// An error was reported (EIO, a checksum error from the scrub or checker, in the kernel
    /// log) and the data stayed unreadable.
    Detected,
    /// An error was reported and the data read back correct in the end (from another copy, on
    /// read or by the scrub).
    Repaired,
    /// The filesystem could not be mounted or imported, or opening or listing files or
    /// directories failed with an error.
    Unavailable,
    /// The filesystem daemon died, or the kernel logged an oops, BUG or warning with a trace.
    Crash,
    /// Nothing was reported and every read was correct: the fault had no visible effect.
    Unaffected,
    /// The case could not be run (the block was not found, a tool failed); see its note.
    NotRun,
}

impl Outcome {
    /// The word shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Silent => "silent",
            Outcome::Detected => "detected",
            Outcome::Repaired => "repaired",
            Outcome::Unavailable => "unavailable",
            Outcome::Crash => "crash",
            Outcome::Unaffected => "unaffected",
            Outcome::NotRun => "not run",
        }
    }
}

/// Everything one case saw.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    /// What was damaged.
    pub target: Target,
    /// How.
    pub fault: Fault,
    /// The outcome.
    pub outcome: Outcome,
    /// The block: a file's path and offset, or the metadata structure.
    pub block: String,
    /// Every copy the scan of the images found.
    pub copies: Vec<BlockCopy>,
    /// The copies the fault was written to.
    pub damaged: Vec<BlockCopy>,
    /// Where the filesystem's tools said the block is (cross-check of the scan).
    pub tool_location: Option<ToolLocation>,
    /// Whether the tools' location agrees with the scan (`None`: no tool location).
    pub locations_agree: Option<bool>,
    /// The mount or import after the injection failed: its error.
    pub online_error: Option<String>,
    /// The first read of the whole data set after the injection.
    pub first_read: Option<ReadBack>,
    /// The scrub or check.
    pub check: Option<CheckRun>,
    /// The read after the scrub or check, with cold caches.
    pub second_read: Option<ReadBack>,
    /// Kernel log lines during the case about the testbed's devices, or about a kernel problem.
    pub kernel_log: Vec<String>,
    /// Whether the zfs-fuse daemon was gone after the case.
    pub daemon_died: bool,
    /// The zfs-fuse watchdog cut a file operation of the case off (the daemon stopped
    /// answering; the pool's FUSE connection was aborted): what it said.
    #[serde(default)]
    pub hung: Option<String>,
    /// Why the case could not be run, or what else went wrong (teardown).
    pub note: Option<String>,
}

/// The outcome from the evidence. Precedence: crash (the daemon died or hung, a kernel oops), mount failure (unavailable), silent, lost
/// files (unavailable), repaired, detected, unaffected; "silent" wins over a later detection because wrong data was already returned.
pub fn classify(case: &Case, kernel_trouble: bool, kernel_detected: bool) -> Outcome {
    if case.daemon_died || case.hung.is_some() || kernel_trouble {
        return Outcome::Crash;
    }
    let (Some(first), Some(second)) = (&case.first_read, &case.second_read) else {
        return if case.online_error.is_some() { Outcome::Unavailable } else { Outcome::NotRun };
    };
    if case.online_error.is_some() {
        return Outcome::Unavailable;
    }
    // Wrong data, or a directory listing missing entries, without an error.
    let silent =
        |r: &ReadBack| !r.mismatches.is_empty() || r.lost.iter().any(|l| l.errno.is_none());
    if silent(first) || silent(second) {
        return Outcome::Silent;
    }
    if !first.lost.is_empty() || !second.lost.is_empty() {
        return Outcome::Unavailable;
    }
    let reported = !first.read_errors.is_empty()
        || !second.read_errors.is_empty()
        || case.check.as_ref().is_some_and(|c| c.errors_reported)
        || kernel_detected;
    match (reported, second.all_intact()) {
        (true, true) => Outcome::Repaired,
        (true, false) => Outcome::Detected,
        (false, _) => Outcome::Unaffected,
    }
}

/// What the expected truths say `config` does with a damaged `target` (file data and
/// parity only; `None` for metadata and for configurations without a stated expectation):
/// filesystems without data checksums (ext2/3/4, xfs) return damaged data silently; those with
/// them (btrfs, zfs) detect it;
/// a btrfs mirror and a zfs mirror or raidz repair one damaged copy (or parity), and detect
/// damage to every copy.
pub fn expected(config: &crate::testbed::FsConfig, target: Target) -> Option<Outcome> {
    let fs = config.kind.integrity().ok()?;
    let redundant = fs.data_copies(config) > 1 || fs.parity_protected(config);
    match (fs.checksums_data(), target) {
        (false, Target::Data) => Some(Outcome::Silent),
        (true, Target::Data | Target::Parity) => {
            Some(if redundant { Outcome::Repaired } else { Outcome::Detected })
        }
        (true, Target::DataAllCopies) => Some(Outcome::Detected),
        _ => None,
    }
}

/// One configuration's cases.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigMatrix {
    /// The configuration's label.
    pub config: String,
    /// The testbed environment of the first case (mkfs command, mount options, zfs properties).
    pub environment: Option<crate::model::testbed::TestbedEnv>,
    /// The run's seed.
    pub seed: u64,
    /// Cases, in target then fault order.
    pub cases: Vec<Case>,
    /// Why the configuration could not be run at all.
    pub error: Option<String>,
    /// Wall time of this configuration, seconds.
    pub elapsed_seconds: f64,
}

impl ConfigMatrix {
    /// The outcome for (target, fault), if that case ran.
    pub fn outcome(&self, target: Target, fault: Fault) -> Option<Outcome> {
        self.cases.iter().find(|c| c.target == target && c.fault == fault).map(|c| c.outcome)
    }

    /// The expected outcome of a case of this configuration ([`expected`]), if stated.
    pub fn expected(&self, target: Target) -> Option<Outcome> {
        let config = crate::testbed::FsConfig::parse(&self.config).ok()?;
        expected(&config, target)
    }

    /// The faults and the targets of the cases, in the order they ran.
    pub fn axes(&self) -> (Vec<Target>, Vec<Fault>) {
        let mut faults: Vec<Fault> = Vec::new();
        let mut targets: Vec<Target> = Vec::new();
        for c in &self.cases {
            if !faults.contains(&c.fault) {
                faults.push(c.fault);
            }
            if !targets.contains(&c.target) {
                targets.push(c.target);
            }
        }
        (targets, faults)
    }
}

/// One line of evidence for a case: where, what the reads and the tool saw.
pub fn evidence_line(c: &Case) -> String {
    let mut s = format!("{}/{}: {}", c.target.name(), c.fault, c.block);
    let at: Vec<String> =
        c.damaged.iter().map(|d| format!("dev{}@{}", d.device, d.offset_bytes)).collect();
    if !at.is_empty() {
        let _ =
            write!(s, " at {} ({} of {} copies)", at.join(","), c.damaged.len(), c.copies.len());
    }
    match c.locations_agree {
        Some(true) => s.push_str(", tools agree"),
        Some(false) => s.push_str(", TOOLS DISAGREE"),
        None => {}
    }
    if let Some(e) = &c.online_error {
        let _ = write!(s, "; mount/import failed: {}", first_line(e));
    }
    if let Some(r) = &c.first_read {
        let _ = write!(s, "; read: {}", read_summary(r));
    }
    if let Some(ch) = &c.check {
        let _ = write!(
            s,
            "; {}: {}",
            ch.commands
                .first()
                .map(|x| x.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
            if ch.errors_reported { "errors" } else { "clean" }
        );
        if ch.errors_reported && !ch.summary.is_empty() {
            let _ = write!(s, " ({})", ch.summary);
        }
    }
    if let Some(r) = &c.second_read {
        let _ = write!(s, "; read again: {}", read_summary(r));
    }
    // The kernel's most telling line: trouble first, then a detection; routine mount lines
    // are only in the JSON.
    let telling = c
        .kernel_log
        .iter()
        .find(|l| super::check::kernel_trouble(std::slice::from_ref(*l)))
        .or_else(|| {
            c.kernel_log.iter().find(|l| super::check::kernel_detected(std::slice::from_ref(*l)))
        });
    if let Some(l) = telling {
        let _ = write!(s, "; kernel: {}", strip_timestamp(l));
    }
    if c.daemon_died {
        s.push_str("; zfs-fuse DIED");
    }
    if let Some(h) = &c.hung {
        let _ = write!(s, "; HUNG: {h}");
    }
    if let Some(n) = &c.note {
        let _ = write!(s, "; note: {}", first_line(n));
    }
    s
}

fn strip_timestamp(l: &str) -> &str {
    match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((_, rest)) => rest,
        None => l,
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

fn read_summary(r: &ReadBack) -> String {
    if r.all_intact() {
        return "all intact".into();
    }
    let mut parts = Vec::new();
    if let Some(m) = r.mismatches.first() {
        parts.push(format!(
            "{} wrong without error ({} offset {}: {})",
            r.mismatches.len(),
            m.file.display(),
            m.offset,
            m.found
        ));
    }
    if let Some(e) = r.read_errors.first() {
        parts.push(format!("{} read errors ({})", r.read_errors.len(), e.message));
    }
    if let Some(e) = r.lost.first() {
        parts.push(format!("{} lost ({} {}: {})", r.lost.len(), e.op, e.path.display(), e.message));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::super::dataset::{Mismatch, ReadError};
    use super::*;
    use crate::model::block::{BlockId, Found};

    fn case() -> Case {
        Case {
            target: Target::Data,
            fault: Fault::Zero,
            outcome: Outcome::NotRun,
            block: "d0/f1 offset 4096".into(),
            copies: vec![],
            damaged: vec![],
            tool_location: None,
            locations_agree: None,
            online_error: None,
            first_read: Some(ReadBack { intact_blocks: 10, ..Default::default() }),
            check: Some(CheckRun::default()),
            second_read: Some(ReadBack { intact_blocks: 10, ..Default::default() }),
            kernel_log: vec![],
            daemon_died: false,
            hung: None,
            note: None,
        }
    }

    fn eio() -> ReadError {
        ReadError {
            path: "d0/f1".into(),
            op: "read".into(),
            offset: Some(4096),
            errno: Some(5),
            message: "Input/output error".into(),
        }
    }

    #[test]
    fn outcomes_follow_the_evidence() {
        let c = case();
        assert_eq!(classify(&c, false, false), Outcome::Unaffected);
        let mut silent = case();
        silent.first_read.as_mut().unwrap().mismatches.push(Mismatch {
            file: "d0/f1".into(),
            offset: 4096,
            expected: BlockId { seed: 1, file: 1, offset: 4096, generation: 1 },
            found: Found::Zeroed,
        });
        assert_eq!(classify(&silent, false, true), Outcome::Silent);
        let mut detected = case();
        detected.first_read.as_mut().unwrap().read_errors.push(eio());
        detected.second_read.as_mut().unwrap().read_errors.push(eio());
        assert_eq!(classify(&detected, false, false), Outcome::Detected);
        let mut repaired = case();
        repaired.first_read.as_mut().unwrap().read_errors.push(eio());
        assert_eq!(classify(&repaired, false, false), Outcome::Repaired);
        let mut scrubbed = case();
        scrubbed.check.as_mut().unwrap().errors_reported = true;
        assert_eq!(classify(&scrubbed, false, false), Outcome::Repaired);
        assert_eq!(classify(&case(), false, true), Outcome::Repaired, "kernel said it fixed it");
        assert_eq!(classify(&case(), true, false), Outcome::Crash);
        let mut hung = case();
        hung.hung = Some("reading the data set did not finish within 300 s".into());
        assert_eq!(classify(&hung, false, false), Outcome::Crash);
        let mut gone = case();
        gone.online_error = Some("mount: wrong fs type".into());
        gone.first_read = None;
        gone.second_read = None;
        assert_eq!(classify(&gone, false, false), Outcome::Unavailable);
        let mut unlisted = case();
        let mut missing = eio();
        missing.errno = None;
        missing.message = "missing from its directory's listing".into();
        unlisted.first_read.as_mut().unwrap().lost.push(missing);
        assert_eq!(classify(&unlisted, false, false), Outcome::Silent);
        let mut unreadable_dir = case();
        unreadable_dir.first_read.as_mut().unwrap().lost.push(eio());
        assert_eq!(classify(&unreadable_dir, false, false), Outcome::Unavailable);
    }

    #[test]
    fn expected_truths_per_configuration() {
        let e = |c: &str, t| expected(&crate::testbed::FsConfig::parse(c).unwrap(), t);
        assert_eq!(e("ext4", Target::Data), Some(Outcome::Silent));
        assert_eq!(e("xfs", Target::Data), Some(Outcome::Silent));
        assert_eq!(e("btrfs", Target::Data), Some(Outcome::Detected));
        assert_eq!(e("zfs", Target::Data), Some(Outcome::Detected));
        assert_eq!(e("btrfs:profile=raid1:devices=2", Target::Data), Some(Outcome::Repaired));
        assert_eq!(e("zfs:layout=mirror:devices=2", Target::Data), Some(Outcome::Repaired));
        assert_eq!(
            e("zfs:layout=mirror:devices=2", Target::DataAllCopies),
            Some(Outcome::Detected)
        );
        assert_eq!(e("zfs:layout=raidz", Target::Parity), Some(Outcome::Repaired));
        assert_eq!(e("ext4", Target::Inode), None, "no stated truth for metadata");
        // The terminal matrix marks a cell that differs from the truth.
        let mut m = ConfigMatrix {
            config: "zfs".into(),
            environment: None,
            seed: 1,
            cases: vec![case()],
            error: None,
            elapsed_seconds: 1.0,
        };
        m.cases[0].outcome = Outcome::Silent;
        let text = crate::present::integrity::render(&m, 100);
        assert!(text.contains("silent (expected detected)"), "{text}");
        m.cases[0].outcome = Outcome::Detected;
        let text = crate::present::integrity::render(&m, 100);
        assert!(!text.contains("expected"), "{text}");
    }
}
