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
    /// Why the case could not be run, or what else went wrong (teardown).
    pub note: Option<String>,
}

/// The outcome from the evidence. Precedence: crash, mount failure (unavailable), silent, lost
/// files (unavailable), repaired, detected, unaffected; "silent" wins over a later detection because wrong data was already returned.
pub fn classify(case: &Case, kernel_trouble: bool, kernel_detected: bool) -> Outcome {
    if case.daemon_died || kernel_trouble {
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

/// One configuration's cases.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConfigMatrix {
    /// The configuration's label.
    pub config: String,
    /// The testbed environment of the first case (mkfs command, mount options, zfs properties).
    pub environment: Option<crate::testbed::TestbedEnv>,
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

    /// The matrix as a terminal table, then one evidence line per case.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{} (seed {}, {:.0} s)", self.config, self.seed, self.elapsed_seconds);
        if let Some(e) = &self.error {
            let _ = writeln!(s, "  not run: {e}");
            return s;
        }
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
        let mut t = comfy_table::Table::new();
        t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
        let mut header = vec!["block \\ fault".to_string()];
        header.extend(faults.iter().map(|f| f.name().to_string()));
        t.set_header(header);
        for target in &targets {
            let mut row = vec![target.describe().to_string()];
            for f in &faults {
                row.push(self.outcome(*target, *f).map(Outcome::name).unwrap_or("-").to_string());
            }
            t.add_row(row);
        }
        let _ = writeln!(s, "{t}");
        for c in &self.cases {
            let _ = writeln!(s, "  {}", evidence_line(c));
        }
        s
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
    use super::super::block::{BlockId, Found};
    use super::super::dataset::{Mismatch, ReadError};
    use super::*;

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
}
