//! Explanations: which observed facts differ most between the winner and the loser of a test,
//! in words and numbers.
//!
//! Every rule lives in [`RULES`]. A rule looks at the two sides' [`Facts`] and either stays
//! silent or returns a sentence with a weight. Rules are directional: a fact explains a loss only
//! when the loser is worse on it (smaller requests, more amplification, more device reads, more
//! extents, more time in fsync), never merely because the two sides differ. The weight is (how strongly the fact differs, on a log scale, so
//! "4 KiB vs 512 KiB requests" outweighs "1.2x the CPU"). `compare` prints the heaviest three.
//! When no rule fires, it says that nothing observed explains the gap.

use crate::model::explanation::Explanation;
use crate::model::facts::Facts;
use crate::model::units::fmt_bytes;

/// A rule: winner's facts, loser's facts, their labels.
pub type Rule = fn(&Side<'_>, &Side<'_>) -> Option<(f64, String)>;

/// One side of a comparison.
pub struct Side<'a> {
    /// Configuration label.
    pub label: &'a str,
    /// Its facts.
    pub facts: &'a Facts,
}

/// All rules, by name.
pub const RULES: &[(&str, Rule)] = &[
    ("bio_merging", bio_merging),
    ("device_wait", device_wait),
    ("daemon_cpu", daemon_cpu),
    ("device_busy", device_busy),
    ("request_size", request_size),
    ("write_amplification", write_amplification),
    ("cache_reads", cache_reads),
    ("cpu_bound", cpu_bound),
    ("sys_cpu_per_op", sys_cpu_per_op),
    ("sync_share", sync_share),
    ("extents", extents),
    ("dirty_held", dirty_held),
    ("off_cpu", off_cpu),
    ("stalls", stalls),
    ("dirty_cliff", dirty_cliff),
    ("writeback_bursts", writeback_bursts),
];

/// Rules that cite device counters or the block trace.
pub const DEVICE_RULES: &[&str] = &[
    "bio_merging",
    "device_wait",
    "device_busy",
    "request_size",
    "write_amplification",
    "cache_reads",
];

/// Rules that cite device reads.
pub const READ_RULES: &[&str] = &["device_wait", "cache_reads"];

/// Explanations for `winner` beating `loser`, heaviest first (at most `max`). Empty when
/// nothing observed differs enough.
pub fn explain(winner: &Side<'_>, loser: &Side<'_>, max: usize) -> Vec<Explanation> {
    let sides = [winner, loser];
    let shared = sides.iter().any(|s| s.facts.device_shared());
    let cache_lost = sides.iter().any(|s| s.facts.cache_not_met);
    let mut v: Vec<Explanation> = RULES
        .iter()
        // Device-wide counters (a shared device) include other processes' I/O, and the device
        // reads of a side whose cached file was evicted by something else are not its
        // filesystem's doing: neither is cited as the filesystem's behaviour.
        .filter(|(name, _)| !(shared && DEVICE_RULES.contains(name)))
        .filter(|(name, _)| !(cache_lost && READ_RULES.contains(name)))
        .filter_map(|(name, rule)| {
            rule(winner, loser).map(|(weight, text)| Explanation {
                rule: name.to_string(),
                weight,
                text,
            })
        })
        .collect();
    v.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    v.truncate(max);
    v
}

/// A role's throughput changed between two configurations by more than this factor (either
/// way): the why names it whatever the test's own figure decided (a scheduler whose reader
/// wins while the writer beside it falls from 1036 to 603 MiB/s).
pub const ROLE_FACTOR: f64 = 1.25;

/// The roles of `other` whose throughput differs from `base`'s same role (by name) by more than
/// [`ROLE_FACTOR`], one line each: `writer: 1036 → 603 MiB/s from mq-deadline to bfq (1.72×
/// lower)`. Each side is its label and its roles' (name, MiB/s) of the median repetition.
pub fn role_changes(
    base: (&str, &[(String, f64)]),
    other: (&str, &[(String, f64)]),
) -> Vec<Explanation> {
    let mut v = Vec::new();
    for (name, b) in base.1 {
        let Some((_, o)) = other.1.iter().find(|(n, _)| n == name) else { continue };
        let (hi, lo) = (b.max(*o), b.min(*o));
        if hi <= 0.0 || hi < lo * ROLE_FACTOR {
            continue;
        }
        let factor = if lo > 0.0 { format!("{:.2}×", hi / lo) } else { "∞×".into() };
        let way = if o < b { "lower" } else { "higher" };
        v.push(Explanation {
            rule: crate::model::explanation::ROLE_CHANGE.into(),
            weight: if lo > 0.0 { (hi / lo).ln() } else { 10.0 },
            text: format!(
                "{name}: {} → {} MiB/s from {} to {} ({factor} {way}; the test's figure is its own threads', not the role's)",
                mib(*b),
                mib(*o),
                base.0,
                other.0
            ),
        });
    }
    v
}

/// A role's MiB/s as the role lines show it: whole from 10, one decimal from 1, else 3
/// significant digits (0 as 0).
fn mib(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.1}")
    } else if x == 0.0 {
        "0".into()
    } else {
        crate::model::units::sig3(x)
    }
}

/// Context for a gap, shown after the reasons whether or not a rule fired: where each side's
/// threads spent their time (data calls, syncs, open/close/metadata, off CPU, a FUSE daemon's
/// CPU), and with `--trace` what the threads waited for off CPU and what the block layer saw (bios queued and merged, request sizes,
/// queue depth, device latency). Weight 0: never outranks a reason.
pub fn context(winner: &Side<'_>, loser: &Side<'_>) -> Vec<Explanation> {
    let mut v = Vec::new();
    let line = |rule: &str, text: String| Explanation { rule: rule.into(), weight: 0.0, text };
    let time: Vec<String> = [loser, winner]
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.label, time_words(s.facts)?)))
        .collect();
    if !time.is_empty() {
        v.push(line(
            "time_split",
            format!("where the time went (share of wall time × threads): {}", time.join("; ")),
        ));
    }
    let offcpu: Vec<String> = [loser, winner]
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.label, s.facts.offcpu.as_ref()?.words())))
        .collect();
    if !offcpu.is_empty() {
        v.push(line(
            "offcpu_reasons",
            format!(
                "off CPU, what the threads waited for (the scheduler's account): {}",
                offcpu.join("; ")
            ),
        ));
    }
    let trace: Vec<String> = [loser, winner]
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.label, trace_words(s.facts.trace.as_ref()?))))
        .collect();
    if !trace.is_empty() {
        v.push(line("block_trace", format!("block trace: {}", trace.join("; "))));
    }
    v
}

/// One side's time split, with its FUSE daemon's CPU beside the threads' own.
fn time_words(f: &Facts) -> Option<String> {
    let t = f.time.as_ref()?;
    let mut s = t.words();
    if let Some(d) = f.daemon_cpu_share {
        s.push_str(&format!(", FUSE daemon {:.0}% of a core", d * 100.0));
    }
    Some(s)
}

/// What the block trace saw, reads and writes that happened.
fn trace_words(t: &crate::model::facts::TraceFacts) -> String {
    let mut parts = Vec::new();
    for (what, d) in [("write", &t.writes), ("read", &t.reads)] {
        if d.bios == 0 && d.requests == 0 {
            continue;
        }
        let avg =
            |bytes: u64, n: u64| bytes.checked_div(n).map(fmt_bytes).unwrap_or_else(|| "-".into());
        parts.push(format!(
            "{} {what} bios of {} ({} merged) issued as {} requests of {}",
            count(d.bios),
            avg(d.bio_bytes, d.bios),
            count(d.bio_merges),
            count(d.requests),
            avg(d.request_bytes, d.requests)
        ));
    }
    if parts.is_empty() {
        parts.push("no block I/O".into());
    }
    parts.push(format!("queue depth up to {}", t.max_queue_depth));
    if let Some(p) = t.device_p99_nanos {
        parts.push(format!("device latency p99 {}", crate::model::units::nanos(p)));
    }
    parts.join(", ")
}

fn lnratio(a: f64, b: f64) -> f64 {
    if a <= 0.0 || b <= 0.0 {
        return 0.0;
    }
    (a / b).ln().abs()
}

fn count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 10_000 {
        format!("{}K", n / 1000)
    } else {
        n.to_string()
    }
}

/// From the block trace: one side submitted many small bios that the block layer had to merge
/// (seed 001: "Writes Queued: 2,621K" for ext4 against 122K for XFS).
fn bio_merging(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (tw, tl) = (w.facts.trace.as_ref()?, l.facts.trace.as_ref()?);
    let mut best: Option<(f64, String)> = None;
    for (what, a, b) in [("write", &tw.writes, &tl.writes), ("read", &tw.reads, &tl.reads)] {
        // Only more (smaller) bios on the loser's side explain a loss.
        let (hi, lo) = (b.bios, a.bios.max(1));
        if hi < 1000 || hi < 4 * lo {
            continue;
        }
        let avg =
            |bytes: u64, n: u64| bytes.checked_div(n).map(fmt_bytes).unwrap_or_else(|| "-".into());
        let text = format!(
            "{} queued {} {what} bios of {} merged into {} requests of {}; {} queued {} bios of {} into {} requests",
            l.label,
            count(b.bios),
            avg(b.bio_bytes, b.bios),
            count(b.requests),
            avg(b.request_bytes, b.requests),
            w.label,
            count(a.bios),
            avg(a.bio_bytes, a.bios),
            count(a.requests)
        );
        // Slightly above request_size, which sees the same story from the completed side.
        let weight = (hi as f64 / lo as f64).ln() + 0.1;
        if best.as_ref().is_none_or(|(bw, _)| weight > *bw) {
            best = Some((weight, text));
        }
    }
    best
}

/// The loser waited on its device (little CPU, many device requests) and the winner hardly used
/// one: synchronous writes or reads that the other side served from memory.
fn device_wait(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let dl = l.facts.device.as_ref()?;
    let nl = dl.writes_completed + dl.reads_completed;
    let nw = w.facts.device.as_ref().map(|d| d.writes_completed + d.reads_completed).unwrap_or(0);
    if nl < 16 || nl < 10 * nw.max(1) || l.facts.cpu_pct_per_thread >= 50.0 {
        return None;
    }
    let busy = l
        .facts
        .device_busy_share
        .map(|b| format!(", device busy {:.0}% of the phase", b * 100.0))
        .unwrap_or_default();
    Some((
        2.0,
        format!(
            "{} waited on its device: {} requests ({} written, {} read){busy}, {:.0}% of a core per thread; {}: {} requests",
            l.label,
            count(nl),
            fmt_bytes(dl.write_bytes),
            fmt_bytes(dl.read_bytes),
            l.facts.cpu_pct_per_thread,
            w.label,
            count(nw)
        ),
    ))
}

/// A FUSE filesystem works in its daemon (zfs-fuse), not in the benchmark's threads: its CPU
/// time is the cost the threads' own figures do not show.
fn daemon_cpu(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let d = l.facts.daemon_cpu_share?;
    if d < 0.3 || w.facts.daemon_cpu_share.unwrap_or(0.0) * 2.0 > d {
        return None;
    }
    Some((
        1.2 + d.min(2.0) / 2.0,
        format!(
            "{}: its filesystem daemon (user space, FUSE) used {:.0}% of a core during the phase, beside the test's own {:.0}% per thread; {} runs in the kernel",
            l.label,
            d * 100.0,
            l.facts.cpu_pct_per_thread,
            w.label
        ),
    ))
}

/// Both used the device, but the loser kept it busy much longer for the same work: more requests
/// (journal and metadata writes) or slower ones.
fn device_busy(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (dw, dl) = (w.facts.device.as_ref()?, l.facts.device.as_ref()?);
    if dw.busy_overcounted || dl.busy_overcounted {
        return None;
    }
    if dl.busy_ms < 20 || (dl.busy_ms as f64) < 1.5 * dw.busy_ms.max(1) as f64 {
        return None;
    }
    let (nw, nl) =
        (dw.writes_completed + dw.reads_completed, dl.writes_completed + dl.reads_completed);
    let lat = match (&w.facts.trace, &l.facts.trace) {
        (Some(a), Some(b)) => match (a.device_p99_nanos, b.device_p99_nanos) {
            (Some(x), Some(y)) => format!(
                "; device latency p99 {} vs {}",
                crate::model::units::nanos(y),
                crate::model::units::nanos(x)
            ),
            _ => String::new(),
        },
        _ => String::new(),
    };
    Some((
        (dl.busy_ms as f64 / dw.busy_ms.max(1) as f64).ln().min(3.0),
        format!(
            "{} kept its device busy {} ms against {} ms on {} ({} requests vs {}, {} written vs {}){lat}",
            l.label,
            dl.busy_ms,
            dw.busy_ms,
            w.label,
            count(nl),
            count(nw),
            fmt_bytes(dl.write_bytes),
            fmt_bytes(dw.write_bytes)
        ),
    ))
}

/// Device requests of very different sizes for the same work (seed 001: ext4 queued 4 KiB bios,
/// XFS large ones).
fn request_size(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let mut best: Option<(f64, String)> = None;
    for (what, get, bytes) in [
        (
            "wrote",
            (|f: &Facts| f.avg_write_request_bytes) as fn(&Facts) -> Option<f64>,
            (|d: &crate::model::result::DeviceDelta| (d.write_bytes, d.writes_completed))
                as fn(&crate::model::result::DeviceDelta) -> (u64, u64),
        ),
        (
            "read",
            |f: &Facts| f.avg_read_request_bytes,
            |d: &crate::model::result::DeviceDelta| (d.read_bytes, d.reads_completed),
        ),
    ] {
        let (Some(a), Some(b)) = (get(w.facts), get(l.facts)) else { continue };
        let (Some(dw), Some(dl)) = (&w.facts.device, &l.facts.device) else { continue };
        let ((bw, nw), (bl, nl)) = (bytes(dw), bytes(dl));
        // Only smaller requests on the loser's side explain a loss.
        if bw.max(bl) < (1 << 20) || b >= a || lnratio(a, b) < 2f64.ln() {
            continue;
        }
        let text = format!(
            "{} {what} {} in {} requests of {} on average; {} {} in {} requests of {}",
            l.label,
            fmt_bytes(bl),
            count(nl),
            fmt_bytes(b as u64),
            w.label,
            fmt_bytes(bw),
            count(nw),
            fmt_bytes(a as u64)
        );
        let weight = lnratio(a, b);
        if best.as_ref().is_none_or(|(bw, _)| weight > *bw) {
            best = Some((weight, text));
        }
    }
    best
}

fn write_amplification(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (a, b) = (w.facts.write_amplification?, l.facts.write_amplification?);
    // Only the loser writing more per byte explains a loss.
    let (hi, lo) = (b, a.max(0.01));
    if hi < 1.2 || hi / lo < 1.3 || w.facts.bytes_written.max(l.facts.bytes_written) < (1 << 20) {
        return None;
    }
    Some((
        (hi / lo).ln(),
        format!(
            "write amplification (device bytes written / bytes written): {} {b:.2}x, {} {a:.2}x",
            l.label, w.label
        ),
    ))
}

/// One side served reads from memory, the other went to the device.
fn cache_reads(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (a, b) = (w.facts.device_read_share?, l.facts.device_read_share?);
    // Only the loser going to the device more explains a loss.
    if w.facts.bytes_read.max(l.facts.bytes_read) < (1 << 20) || b - a < 0.4 {
        return None;
    }
    let (dev_w, dev_l) = (w.facts.device.as_ref()?.read_bytes, l.facts.device.as_ref()?.read_bytes);
    Some((
        1.0 + (b - a),
        format!(
            "{} read {} from the device ({:.0}% of what the test read), {} read {} ({:.0}%)",
            l.label,
            fmt_bytes(dev_l),
            b * 100.0,
            w.label,
            fmt_bytes(dev_w),
            a * 100.0
        ),
    ))
}

/// The loser was CPU-bound and the winner was not (seed 001: "is dd CPU bound?").
fn cpu_bound(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    if !l.facts.cpu_bound || w.facts.cpu_bound {
        return None;
    }
    Some((
        1.0,
        format!(
            "{}: CPU-bound ({:.0}% of a core per thread, {:.0}% system); {}: {:.0}%",
            l.label,
            l.facts.cpu_pct_per_thread,
            l.facts.sys_share * 100.0,
            w.label,
            w.facts.cpu_pct_per_thread
        ),
    ))
}

/// More kernel CPU per operation (seed 000: a small ZFS cached write took 3x the locks).
fn sys_cpu_per_op(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (a, b) = (w.facts.sys_nanos_per_op, l.facts.sys_nanos_per_op);
    if a <= 0.0 || b / a < 1.3 || w.facts.data_ops.min(l.facts.data_ops) < 16 {
        return None;
    }
    let fmt = |n: f64| crate::model::units::nanos(n as u64);
    // A FUSE filesystem works in its daemon: its CPU is counted as the filesystem's.
    let daemon = match (l.facts.daemon_cpu_nanos, w.facts.daemon_cpu_nanos) {
        (Some(_), Some(_)) => "; both counting their FUSE daemon's CPU",
        (Some(_), None) => "; its FUSE daemon's CPU counted as system CPU",
        (None, Some(_)) => "; the winner's FUSE daemon's CPU counted as system CPU",
        (None, None) => "",
    };
    Some((
        (b / a).ln(),
        format!(
            "{} spent {:.1}x the system CPU per operation ({} vs {}{daemon})",
            l.label,
            b / a,
            fmt(b),
            fmt(a)
        ),
    ))
}

/// The loser's threads spent a much larger share of their time off CPU: blocked (on the device,
/// the journal, locks or a FUSE daemon) rather than working. Where the time went, when no finer
/// fact separates the two (a metadata test on xfs against ext4: off CPU 36% against 16%, for the
/// same CPU per operation). With `--trace` it says what the loser's threads waited for.
fn off_cpu(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (tw, tl) = (w.facts.time.as_ref()?, l.facts.time.as_ref()?);
    let (a, b) = (tw.share(tw.off_cpu_nanos()), tl.share(tl.off_cpu_nanos()));
    if b < 1.5 * a || b - a < 0.15 {
        return None;
    }
    let fmt = |n: f64| crate::model::units::nanos(n as u64);
    // The CPU per operation beside it, unless its own rule says it (no line twice).
    let cpu = if sys_cpu_per_op(w, l).is_some() {
        String::new()
    } else {
        format!(
            "; system CPU per operation {} vs {}",
            fmt(l.facts.sys_nanos_per_op),
            fmt(w.facts.sys_nanos_per_op)
        )
    };
    Some((
        (b / a.max(0.01)).ln().min(2.0),
        format!(
            "{} was off CPU {:.0}% of its threads' time against {:.0}% on {} (blocked on the device, the journal or locks, or waiting for a CPU){cpu}",
            l.label,
            b * 100.0,
            a * 100.0,
            w.label,
        ) + &l
            .facts
            .offcpu
            .as_ref()
            .filter(|o| o.total_nanos > 0)
            .map(|o| format!("; {} waited for: {}", l.label, o.words()))
            .unwrap_or_default(),
    ))
}

/// Time inside fsync (seed 000: ZFS holding data until fsync, then bursting).
fn sync_share(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (a, b) = (w.facts.sync_share, l.facts.sync_share);
    if b < 0.2 || b < 1.5 * a {
        return None;
    }
    Some((
        lnratio(b, a.max(0.01)).min(3.0),
        format!(
            "{}: {:.0}% of the phase inside fsync/fdatasync; {}: {:.0}%",
            l.label,
            b * 100.0,
            w.label,
            a * 100.0
        ),
    ))
}

/// Fragmented files (seed 001: 13 extents vs 1).
fn extents(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (a, b) = (w.facts.extents.as_ref()?, l.facts.extents.as_ref()?);
    if a.extents == 0 || b.extents == 0 {
        return None;
    }
    // Only a more fragmented file on the loser's side explains a loss.
    let (hi, lo) = (b.extents, a.extents);
    if hi < 8 || hi < 4 * lo {
        return None;
    }
    Some((
        ((hi as f64) / (lo as f64)).ln() / 2.0,
        format!(
            "test file(s) in {} extent{} on {} (largest {}), {} on {} (largest {})",
            b.extents,
            if b.extents == 1 { "" } else { "s" },
            l.label,
            fmt_bytes(b.largest_bytes),
            a.extents,
            w.label,
            fmt_bytes(a.largest_bytes)
        ),
    ))
}

/// Dirty data the phase left in memory (its own, not earlier tests'): one side deferred the
/// writing.
fn dirty_held(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let (a, b) = (w.facts.dirty_after_bytes?, l.facts.dirty_after_bytes?);
    let written = w.facts.bytes_written.max(l.facts.bytes_written);
    let (hi, lo) = (a.max(b), a.min(b));
    if written < (4 << 20) || hi < written / 4 || hi < 4 * lo.max(1 << 20) {
        return None;
    }
    Some((
        0.8,
        format!(
            "dirty page cache the phase left: {} {}, {} {} (of {} written): one side defers writeback",
            l.label,
            fmt_bytes(b),
            w.label,
            fmt_bytes(a),
            fmt_bytes(written)
        ),
    ))
}

/// The loser stalled (no op completed for 100 ms or more while ops were in flight, from the
/// interval series) and the winner did not, or for at most a quarter as long.
fn stalls(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let ls = l.facts.stalls?;
    let wl = w.facts.stalls.map(|s| s.longest_nanos).unwrap_or(0);
    if ls.longest_nanos < 100_000_000 || wl * 4 > ls.longest_nanos {
        return None;
    }
    let ms = |n: u64| format!("{:.0} ms", n as f64 / 1e6);
    let winner = match w.facts.stalls {
        Some(s) => format!("{}: longest {}", w.label, ms(s.longest_nanos)),
        None => format!("{}: none", w.label),
    };
    let weight = 0.5 + (ls.longest_nanos as f64 / wl.max(10_000_000) as f64).ln() / 3.0;
    Some((
        weight,
        format!(
            "{} stalled: no operation completed for {} at the longest ({} stall{}, {} in all) while operations were in flight; {winner}",
            l.label,
            ms(ls.longest_nanos),
            ls.count,
            if ls.count == 1 { "" } else { "s" },
            ms(ls.total_nanos)
        ),
    ))
}

/// The loser's write throughput fell when dirty page cache reached its peak (writers throttled
/// at the dirty limit) and the winner's did not.
fn dirty_cliff(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let c = l.facts.dirty_cliff?;
    if w.facts.dirty_cliff.is_some() {
        return None;
    }
    let weight = (c.before_mib_per_s / c.after_mib_per_s.max(0.1)).ln().max(0.3);
    Some((
        weight,
        format!(
            "{}'s writes fell from {:.0} to {:.0} MiB/s at {:.1} s, when dirty and writeback page cache reached {} (its peak: writers throttled at the dirty limit); {} kept its rate",
            l.label,
            c.before_mib_per_s,
            c.after_mib_per_s,
            c.at_secs,
            fmt_bytes(c.dirty_bytes),
            w.label
        ),
    ))
}

/// The loser's writeback came in bursts at a regular period (the flusher's periodic wake-up,
/// a journal's commit interval) and the winner's did not: the writes waited in the page cache
/// and went to the device in rushes.
fn writeback_bursts(w: &Side<'_>, l: &Side<'_>) -> Option<(f64, String)> {
    let b = l.facts.writeback_bursts?;
    if w.facts.writeback_bursts.is_some() {
        return None;
    }
    let seen = if b.device { "its device's write requests" } else { "the host's writeback bytes" };
    Some((
        0.4,
        format!(
            "{}'s writeback came in bursts every {:.1} s ({} bursts in {seen}), {}'s did not",
            l.label, b.period_secs, b.bursts, w.label
        ),
    ))
}

#[cfg(test)]
mod tests;
