//! Notes about the machine under the results: what a VM adds to some figures, and which tests it
//! touched. Each note names the tests it concerns and is left out when none is.
//!
//! - [`page_reporting_note`]: the first touch of memory the guest gave back to its host.
//! - [`idle_wake_note`]: a vCPU that halts at once when idle, woken again for each request.

use crate::model::host::HostInfo;
use crate::model::result::{PhaseResult, TestResult};

/// Every note that applies to `tests` on `host`, in a fixed order.
pub fn notes<'a>(
    host: &HostInfo,
    tests: impl Iterator<Item = &'a TestResult> + Clone,
) -> Vec<String> {
    page_reporting_note(host, tests.clone())
        .into_iter()
        .chain(idle_wake_note(host, tests))
        .collect()
}

/// The ids of `tests` for which `hit` holds, each once, in order.
fn ids<'a>(
    tests: impl Iterator<Item = &'a TestResult>,
    hit: impl Fn(&TestResult) -> bool,
) -> Vec<&'a str> {
    let mut ids: Vec<&str> = Vec::new();
    for t in tests.filter(|t| hit(t)) {
        if !ids.contains(&t.id.as_str()) {
            ids.push(&t.id);
        }
    }
    ids
}

fn plural(ids: &[&str]) -> String {
    format!("test{} {}", if ids.len() == 1 { "" } else { "s" }, ids.join(", "))
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
    host: &HostInfo,
    tests: impl Iterator<Item = &'a TestResult>,
) -> Option<String> {
    if !host.free_page_reporting {
        return None;
    }
    let ids = ids(tests, |t| buffered_bytes(t) >= FIRST_TOUCH_SHOWS);
    if ids.is_empty() {
        return None;
    }
    Some(format!(
        "this VM reports free memory to its host (virtio balloon free page reporting): memory freed a while ago costs a host fault per page on its next touch, so a phase that fills a GiB or more of page cache is slow or fast by what ran before it ({} here; on this kind of VM up to 5x). That is the VM, not the filesystem: the spread is in each test's noise and CI (docs/design/noise.md).",
        plural(&ids)
    ))
}

/// What the HTML's environment says of the CPUs' idle policy, when it is known.
pub fn idle_words(host: &HostInfo) -> Option<String> {
    if host.cpuidle_driver.is_empty() {
        return None;
    }
    Some(match host.guest_halt_poll_ns {
        Some(0) => format!(
            "{}, guest_halt_poll_ns 0: an idle vCPU halts at once, and waking it is a host round trip",
            host.cpuidle_driver
        ),
        Some(ns) => format!("{}, guest_halt_poll_ns {ns}", host.cpuidle_driver),
        None => host.cpuidle_driver.clone(),
    })
}

/// Requests with a median latency under this pay a vCPU wake-up (about 15–30 µs on the VM
/// measured) as a tenth or more of their time.
const WAKE_WEIGHS_BELOW_NANOS: u64 = 250_000;

/// Off-CPU time per request from which a thread is taken to have slept on it.
const SLEPT_NANOS: u64 = 10_000;

/// Whether a timed phase's threads slept on each request, and the requests are short enough for
/// a vCPU wake-up to weigh: one request in flight per thread, most operations reaching the
/// device (O_DIRECT, O_DSYNC, reads of uncached data), the median of its most frequent data
/// operation at least [`SLEPT_NANOS`] above the CPU time per operation (the thread waited
/// off CPU; not so for writes into the page cache, whose device requests come from a later
/// sync), and under [`WAKE_WEIGHS_BELOW_NANOS`].
fn sleeps_on_short_requests(p: &PhaseResult) -> bool {
    let Some(dev) = &p.device else { return false };
    let Some(lat) = p.latency.iter().filter(|l| l.count > 0).max_by_key(|l| l.count) else {
        return false;
    };
    if !p.timed || p.iodepth > 1 || p.data_ops == 0 {
        return false;
    }
    let cpu_per_op = (p.cpu_user_nanos + p.cpu_sys_nanos) / p.data_ops;
    2 * (dev.reads_completed + dev.writes_completed) >= p.data_ops
        && lat.p50_nanos >= cpu_per_op + SLEPT_NANOS
        && lat.p50_nanos < WAKE_WEIGHS_BELOW_NANOS
}

/// The note under a table when idle vCPUs halt without polling and a test's thread slept on
/// short requests one at a time: its figures carry a wake-up of the VM's CPU per request.
pub fn idle_wake_note<'a>(
    host: &HostInfo,
    tests: impl Iterator<Item = &'a TestResult>,
) -> Option<String> {
    if !host.halts_without_polling() {
        return None;
    }
    let ids = ids(tests, |t| t.reps.iter().any(|r| r.phases.iter().any(sleeps_on_short_requests)));
    if ids.is_empty() {
        return None;
    }
    Some(format!(
        "this VM halts an idle vCPU at once (cpuidle haltpoll, guest_halt_poll_ns 0), so waking a thread that slept on a request can cost a host round trip: {} sent short requests one at a time per thread, and each may carry one. On such a VM, 4K O_DIRECT reads at depth 1 ran 1.3-1.4x faster from a disk-backed loop device and 2-3.5x from a RAM-backed one with guest_halt_poll_ns 200000. That is the VM, not the filesystem: compare these figures only with runs on the same VM settings (docs/design/noise.md).",
        plural(&ids)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::OpKind;
    use crate::model::result::{DeviceDelta, Figure, RepResult, TestStatus};

    fn test(id: &str, phase: PhaseResult) -> TestResult {
        TestResult {
            id: id.into(),
            name: "t".into(),
            description: String::new(),
            threads: 1,
            status: TestStatus::Ok,
            complete_reps: 2,
            reps: vec![
                RepResult { complete: true, mib_per_s: 100.0, ..Default::default() },
                RepResult {
                    complete: true,
                    mib_per_s: 100.0,
                    phases: vec![phase],
                    ..Default::default()
                },
            ],
            figure: Figure::MibPerS,
            summary: None,
            warnings: vec![],
        }
    }

    #[test]
    fn a_host_reporting_free_memory_is_noted_for_the_tests_that_fill_gibs_of_cache() {
        let phase = |bytes: u64, direct: bool| PhaseResult {
            timed: true,
            bytes_written: bytes,
            direct,
            ..Default::default()
        };
        // Test 4: a cached 256 MiB file read 16 times over (--min-time): nothing new in memory.
        let mut cached = phase(0, false);
        (cached.bytes_read, cached.passes, cached.cache.resident_fraction) = (4 << 30, 16, 1.0);
        let tests = [
            test("8", phase(3 << 30, false)),
            test("2", phase(64 << 20, false)),
            test("5", phase(4 << 30, true)),
            test("4", cached),
        ];
        let mut host = HostInfo::default();
        assert_eq!(page_reporting_note(&host, tests.iter()), None, "a host that does not report");
        host.free_page_reporting = true;
        let n = page_reporting_note(&host, tests.iter().chain(tests.iter())).unwrap();
        assert!(n.contains("(test 8 here;"), "only the test filling GiBs of cache, once: {n}");
        assert_eq!(page_reporting_note(&host, tests[1..].iter()), None, "small or O_DIRECT");
    }

    /// A timed phase of `ops` reads at `depth` with a median latency of `p50_us`, of which
    /// `device_reads` reached the device.
    fn reads(ops: u64, depth: u32, p50_us: u64, device_reads: u64) -> PhaseResult {
        let mut h = crate::stats::latency::new_histogram();
        h.record_n(p50_us * 1000, ops).unwrap();
        PhaseResult {
            timed: true,
            data_ops: ops,
            iodepth: depth,
            latency: vec![crate::model::latency::summarize(OpKind::Read, &h)],
            device: Some(DeviceDelta { reads_completed: device_reads, ..Default::default() }),
            ..Default::default()
        }
    }

    #[test]
    fn a_guest_that_halts_without_polling_is_noted_for_short_requests_one_at_a_time() {
        let tests = [
            // 35 us per read, 14 of them on CPU: asleep for 21 us of each.
            test(
                "direct-qd1",
                PhaseResult { cpu_sys_nanos: 90_000 * 14_000, ..reads(90_000, 1, 35, 90_000) },
            ),
            test("cached", reads(90_000, 1, 2, 0)),
            test("qd16", reads(200_000, 16, 70, 200_000)),
            test("slow-disk", reads(400, 1, 5_000, 400)),
            test("no-device", PhaseResult { device: None, ..reads(90_000, 1, 35, 90_000) }),
            // Writes into the page cache (30 us each, 25 of them on CPU), flushed by syncs: as
            // many device writes as operations, but the writer hardly slept on them.
            test(
                "cached-writes",
                PhaseResult {
                    cpu_sys_nanos: 30_000 * 25_000,
                    device: Some(DeviceDelta { writes_completed: 30_000, ..Default::default() }),
                    ..reads(30_000, 1, 30, 0)
                },
            ),
        ];
        let mut host = HostInfo { cpuidle_driver: "haltpoll".into(), ..Default::default() };
        assert_eq!(idle_wake_note(&host, tests.iter()), None, "haltpoll, polling time unknown");
        host.guest_halt_poll_ns = Some(200_000);
        assert_eq!(idle_wake_note(&host, tests.iter()), None, "a guest that polls first");
        assert_eq!(idle_words(&host).unwrap(), "haltpoll, guest_halt_poll_ns 200000");
        host.guest_halt_poll_ns = Some(0);
        let n = idle_wake_note(&host, tests.iter().chain(tests.iter())).unwrap();
        assert!(n.contains(": test direct-qd1 sent short requests"), "that test only, once: {n}");
        assert!(idle_words(&host).unwrap().contains("halts at once"));
        assert_eq!(idle_wake_note(&host, tests[1..].iter()), None);
        assert_eq!(notes(&host, tests.iter()).len(), 1);
        host.cpuidle_driver = "intel_idle".into();
        assert_eq!(idle_wake_note(&host, tests.iter()), None, "not a haltpoll guest");
        assert_eq!(idle_words(&HostInfo::default()), None);
    }
}
