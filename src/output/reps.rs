//! Per-repetition figures in the terminal: the figure of each repetition in the order run, and a
//! note when the first repetition stands out from the others
//! ([`crate::stats::summary::first_rep_stands_out`]).

use super::units::sig3;
use crate::compare::Report;
use crate::result::TestResult;
use crate::stats::summary::first_rep_stands_out;

/// Figures of the completed repetitions of `t`, in the order run.
pub fn figures(t: &TestResult) -> Vec<f64> {
    t.reps.iter().filter(|r| r.complete).map(|r| t.figure.value(r)).collect()
}

/// The figures as text, `a b c`; a first repetition that stands out is marked `!`.
pub fn strip(t: &TestResult) -> String {
    let xs = figures(t);
    let odd = first_rep_stands_out(&xs).is_some();
    xs.iter()
        .enumerate()
        .map(|(i, x)| format!("{}{}", sig3(*x), if i == 0 && odd { "!" } else { "" }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One note for `label`'s tests whose first repetition stands out, or `None`.
pub fn first_rep_note(label: Option<&str>, tests: &[TestResult]) -> Option<String> {
    let odd: Vec<String> = tests
        .iter()
        .filter_map(|t| {
            first_rep_stands_out(&figures(t))
                .map(|r| format!("{} ({r:.2}x the others' median)", t.id))
        })
        .collect();
    if odd.is_empty() {
        return None;
    }
    Some(format!(
        "{}the first repetition stands out from the others in test{} {}: a cost only the first pays (a fresh testbed's first touch, a cold cache, a daemon starting) or a disturbance; the median is robust to it, but check with `--details` or more repetitions",
        label.map(|l| format!("{l}: ")).unwrap_or_default(),
        if odd.len() == 1 { "" } else { "s" },
        odd.join(", ")
    ))
}

/// What the HTML's environment says of a host that reports free memory.
pub const PAGE_REPORTING_WORDS: &str =
    "yes (virtio balloon): memory freed a while ago costs a host fault per page on its next touch";

/// Bytes of new page cache a repetition's timed, buffered (not O_DIRECT) phases took, at most:
/// per pass, what they wrote and what they read of files not resident before.
fn buffered_bytes(t: &TestResult) -> u64 {
    t.reps
        .iter()
        .map(|r| {
            r.phases
                .iter()
                .filter(|p| p.timed && !p.direct)
                .map(|p| {
                    let cold = 1.0 - p.cache.resident_fraction.clamp(0.0, 1.0);
                    (p.bytes_written + (p.bytes_read as f64 * cold) as u64) / p.passes() as u64
                })
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

/// Below this per repetition, a phase's page cache is too small for the first-touch cost to show.
const FIRST_TOUCH_SHOWS: u64 = 1 << 30;

/// The note under a table when the machine reports free memory to its host and a test moved
/// enough buffered data for that to weigh: why its repetitions may be bimodal.
pub fn page_reporting_note<'a>(
    host: &crate::observe::host::HostInfo,
    tests: impl Iterator<Item = &'a TestResult>,
) -> Option<String> {
    if !host.free_page_reporting {
        return None;
    }
    let mut ids: Vec<&str> = Vec::new();
    for t in tests.filter(|t| buffered_bytes(t) >= FIRST_TOUCH_SHOWS) {
        if !ids.contains(&t.id.as_str()) {
            ids.push(&t.id);
        }
    }
    if ids.is_empty() {
        return None;
    }
    Some(format!(
        "this VM reports free memory to its host (virtio balloon free page reporting): memory freed a while ago costs a host fault per page on its next touch, so a phase that fills a GiB or more of page cache is slow or fast by what ran before it (test{} {} here; on this kind of VM up to 5x). That is the VM, not the filesystem: the spread is in each test's noise and CI (docs/noise.md).",
        if ids.len() == 1 { "" } else { "s" },
        ids.join(", ")
    ))
}

/// `--details` of a comparison: each repetition's figure per test and configuration.
pub fn section(r: &Report) -> String {
    let mut out =
        String::from("\nRepetitions (figure of each, in the order run; ! = first stands out):\n");
    for (ti, row) in r.tests.iter().enumerate() {
        for c in &r.configs {
            let t = &c.run.tests[ti];
            out.push_str(&format!("  test {:<4} {:<24} {}\n", row.id, c.label, strip(t)));
        }
    }
    out
}

/// `run --details`: each repetition's figure per test.
pub fn run_section(tests: &[TestResult]) -> String {
    let mut out =
        String::from("\nRepetitions (figure of each, in the order run; ! = first stands out):\n");
    for t in tests {
        out.push_str(&format!("  test {:<14} {} {}\n", t.id, strip(t), t.figure.unit()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Figure, RepResult, TestStatus};

    fn test(id: &str, mibs: &[f64]) -> TestResult {
        TestResult {
            id: id.into(),
            name: "t".into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            complete_reps: mibs.len() as u32,
            reps: mibs
                .iter()
                .map(|m| RepResult { complete: true, mib_per_s: *m, ..Default::default() })
                .collect(),
            figure: Figure::MibPerS,
            summary: None,
            warnings: vec![],
        }
    }

    #[test]
    fn a_slow_first_repetition_is_marked_and_noted() {
        let t =
            vec![test("1", &[387.0, 4000.0, 3950.0, 4100.0]), test("2", &[10.0, 11.0, 9.5, 10.2])];
        assert_eq!(strip(&t[0]), "387! 4000 3950 4100");
        assert_eq!(strip(&t[1]), "10.0 11.0 9.50 10.2");
        let n = first_rep_note(Some("ext4"), &t).unwrap();
        assert!(
            n.starts_with("ext4: the first repetition stands out") && n.contains("test 1 (0.10x"),
            "{n}"
        );
        assert!(!n.contains("test 2"), "{n}");
        assert!(first_rep_note(None, &t[1..]).is_none());
    }

    #[test]
    fn file_set_tests_show_their_ops_per_second() {
        let mut t = test("9", &[0.0, 0.0, 0.0, 0.0]);
        t.figure = Figure::OpsPerS;
        for (r, ops) in t.reps.iter_mut().zip([120.0, 1000.0, 990.0, 1010.0]) {
            r.ops_per_s = ops;
        }
        assert_eq!(strip(&t), "120! 1000 990 1010");
        assert!(first_rep_note(None, std::slice::from_ref(&t)).unwrap().contains("test 9"));
    }

    #[test]
    fn a_host_reporting_free_memory_is_noted_for_the_tests_that_fill_gibs_of_cache() {
        use crate::result::PhaseResult;
        let phase = |bytes: u64, direct: bool| PhaseResult {
            timed: true,
            bytes_written: bytes,
            direct,
            ..Default::default()
        };
        let with = |id: &str, p: PhaseResult| {
            let mut t = test(id, &[100.0, 100.0]);
            t.reps[1].phases.push(p);
            t
        };
        // Test 4: a cached 256 MiB file read 16 times over (--min-time): nothing new in memory.
        let mut cached = phase(0, false);
        (cached.bytes_read, cached.passes, cached.cache.resident_fraction) = (4 << 30, 16, 1.0);
        let tests = [
            with("8", phase(3 << 30, false)),
            with("2", phase(64 << 20, false)),
            with("5", phase(4 << 30, true)),
            with("4", cached),
        ];
        let mut host = crate::observe::host::HostInfo::default();
        assert_eq!(page_reporting_note(&host, tests.iter()), None, "a host that does not report");
        host.free_page_reporting = true;
        let n = page_reporting_note(&host, tests.iter().chain(tests.iter())).unwrap();
        assert!(n.contains("(test 8 here;"), "only the test filling GiBs of cache, once: {n}");
        assert_eq!(page_reporting_note(&host, tests[1..].iter()), None, "small or O_DIRECT");
    }
}
