//! The summary a person reads first ("465 files, 96 .so, 19 s") and its text form.
//!
//! Definitions:
//! - *time with a read in flight*: the union of the intervals between issue and completion of
//!   the traced read requests (device busy with reads). It bounds from above how long the
//!   command can have waited for reads.
//!   Computed per device and over all devices (the union of every device's intervals), and
//!   clipped to the command's wall time (tracing starts before and ends after the command).
//! - *seek total*: the sum over consecutive issued data requests on a device of
//!   |start of this one - end of the previous one|, in bytes (0 for back-to-back requests).
//!   Per device only: the distance between requests on two devices means nothing.
//!   *Sorted*: the same sum had the same requests been issued in device-offset order, which is
//!   what a preload sorted by offset, or a layout that stores the files in the order they are
//!   read, would approach.

use super::attribute::{Owner, Request};
use super::files::{page_bytes, FileProfile};
use crate::model::trace::Op;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bytes of one direction by owner class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// Bytes in the files' extents.
    pub files_bytes: u64,
    /// Bytes in filesystem metadata, by structure.
    pub metadata_bytes: BTreeMap<String, u64>,
    /// Bytes nothing claims.
    pub unattributed_bytes: u64,
}

impl Attribution {
    /// All bytes.
    pub fn total(&self) -> u64 {
        self.files_bytes + self.metadata_total() + self.unattributed_bytes
    }
    /// Metadata bytes, all structures.
    pub fn metadata_total(&self) -> u64 {
        self.metadata_bytes.values().sum()
    }
}

/// One row of a top list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopFile {
    /// File name as printed.
    pub name: String,
    /// Bytes read from the device for it.
    pub device_read_bytes: u64,
    /// Requests that carried some of it.
    pub requests: u64,
    /// Pages it brought into the cache.
    pub pages_in: u64,
}

/// One traced device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSummary {
    /// Kernel name (`loop3`, `vda`).
    pub device: String,
    /// Other processes use it (the root disk): its counts include their I/O.
    pub shared: bool,
    /// Bytes read.
    pub read_bytes: u64,
    /// Read requests.
    pub read_requests: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Write requests.
    pub write_requests: u64,
    /// Time with a read in flight on this device, seconds (within the wall time).
    pub read_in_flight_seconds: f64,
    /// Seek total in issue order, bytes.
    pub seek_total_bytes: u64,
    /// Seek total if sorted by offset, bytes.
    pub seek_sorted_bytes: u64,
}

/// The length of the union of the intervals `(start, end)`, each clipped to `[lo, hi]`.
pub fn union_length(intervals: &mut [(f64, f64)], lo: f64, hi: f64) -> f64 {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut until = lo;
    for &(a, b) in intervals.iter() {
        let (a, b) = (a.max(until), b.min(hi));
        if b > a {
            total += b - a;
            until = b;
        }
    }
    total
}

/// The summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Wall time of the command, seconds.
    pub wall_seconds: f64,
    /// Exit code (128 + signal when a signal ended it).
    pub exit_code: i32,
    /// Processes in the command's tree (the command and what it forked, threads included).
    pub processes: usize,
    /// Regular files the tree opened on the watched filesystems.
    pub files_opened: usize,
    /// Directories it opened.
    pub directories_opened: usize,
    /// Files with pages brought in or device bytes, opened or not.
    pub files_touched: usize,
    /// Opened files by kind, most first.
    pub kinds: Vec<(String, usize)>,
    /// Bytes read from the devices.
    pub device_read_bytes: u64,
    /// Read requests.
    pub device_read_requests: u64,
    /// Bytes written to the devices.
    pub device_write_bytes: u64,
    /// Write requests.
    pub device_write_requests: u64,
    /// Flush requests.
    pub flushes: u64,
    /// Time with at least one read request in flight, seconds.
    pub read_in_flight_seconds: f64,
    /// Mean read latency (issue to complete), µs.
    pub read_latency_mean_us: Option<f64>,
    /// Where the bytes read went.
    pub read_attribution: Attribution,
    /// Where the bytes written went.
    pub write_attribution: Attribution,
    /// Pages brought into the page cache, by cause, in bytes: read, fault, readahead, other.
    pub pages_in_bytes: [u64; 4],
    /// Seek total of the data requests in issue order, bytes, when one device was traced
    /// (with more, see `devices`: seeks are never summed across devices).
    pub seek_total_bytes: Option<u64>,
    /// Seek total had they been issued sorted by offset, bytes (one device, as above).
    pub seek_sorted_bytes: Option<u64>,
    /// Per traced device.
    #[serde(default)]
    pub devices: Vec<DeviceSummary>,
    /// Top files by device bytes read.
    pub top_by_bytes: Vec<TopFile>,
    /// Top files by requests.
    pub top_by_requests: Vec<TopFile>,
    /// Events lost in the kernel ring buffers (block + page cache) or over the memory cap.
    pub events_lost: u64,
    /// Opens lost to a full fanotify queue.
    pub opens_lost: u64,
}

impl Summary {
    /// Share (0..=1) of the bytes read that belong to named files.
    pub fn named_share(&self) -> f64 {
        share(self.read_attribution.files_bytes, self.read_attribution.total())
    }
    /// Share of the bytes read that belong to named files or metadata.
    pub fn named_or_metadata_share(&self) -> f64 {
        share(
            self.read_attribution.files_bytes + self.read_attribution.metadata_total(),
            self.read_attribution.total(),
        )
    }
    /// Whether every event was recorded.
    pub fn complete(&self) -> bool {
        self.events_lost == 0 && self.opens_lost == 0
    }
}

fn share(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Fill in the per-file device columns from the requests and compute the summary.
/// `wall_seconds` bounds the time with a read in flight; `shared` names the traced devices
/// other processes use.
pub fn summarize(
    files: &mut [FileProfile],
    requests: &[Request],
    processes: usize,
    wall_seconds: f64,
    shared: &[String],
) -> Summary {
    let mut s = Summary { processes, wall_seconds, ..Default::default() };
    let mut devs: BTreeMap<&str, DeviceSummary> = BTreeMap::new();
    let mut busy: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    let mut lat_sum = 0f64;
    let mut lat_n = 0u64;
    let mut last_end: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_dev: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    let wall_ms = wall_seconds * 1e3;
    for r in requests {
        // On a shared device, what was issued before the command started (`t_ms` is 0 for
        // those: the time is counted from the start) or after it ended is other processes'.
        if shared.contains(&r.device) && !(r.t_ms > 0.0 && r.t_ms <= wall_ms) {
            continue;
        }
        let read = r.op == Op::Read;
        let d = devs.entry(r.device.as_str()).or_insert_with(|| DeviceSummary {
            device: r.device.clone(),
            shared: shared.contains(&r.device),
            ..Default::default()
        });
        match r.op {
            Op::Read => {
                s.device_read_bytes += r.bytes;
                s.device_read_requests += 1;
                d.read_bytes += r.bytes;
                d.read_requests += 1;
            }
            Op::Write => {
                s.device_write_bytes += r.bytes;
                s.device_write_requests += 1;
                d.write_bytes += r.bytes;
                d.write_requests += 1;
            }
            Op::Flush => s.flushes += 1,
            _ => {}
        }
        if !matches!(r.op, Op::Read | Op::Write) || r.bytes == 0 {
            continue;
        }
        let start = r.sector * 512;
        if let Some(prev) = last_end.insert(r.device.as_str(), start + r.bytes) {
            d.seek_total_bytes += start.abs_diff(prev);
        }
        by_dev.entry(r.device.as_str()).or_default().push((start, r.bytes));
        if read {
            if let Some(l) = r.latency_us {
                lat_sum += l;
                lat_n += 1;
                busy.entry(r.device.as_str()).or_default().push((r.t_ms, r.t_ms + l / 1e3));
            }
        }
        let att = if read { &mut s.read_attribution } else { &mut s.write_attribution };
        let mut counted: Vec<usize> = Vec::new();
        for p in &r.parts {
            match &p.owner {
                Owner::File { file, .. } => {
                    // An opened directory is named, but it is filesystem metadata.
                    if files.get(*file).is_some_and(|f| f.is_dir) {
                        *att.metadata_bytes.entry("directory".into()).or_default() += p.bytes;
                    } else {
                        att.files_bytes += p.bytes;
                    }
                    if let Some(f) = files.get_mut(*file) {
                        if read {
                            f.device_read_bytes += p.bytes;
                        } else {
                            f.device_write_bytes += p.bytes;
                        }
                        if !counted.contains(file) {
                            f.device_requests += 1;
                            counted.push(*file);
                        }
                    }
                }
                Owner::Metadata { what } => {
                    *att.metadata_bytes.entry(what.clone()).or_default() += p.bytes
                }
                Owner::Unattributed => att.unattributed_bytes += p.bytes,
            }
        }
    }
    for (dev, reqs) in by_dev.iter_mut() {
        reqs.sort_unstable();
        let d = devs.get_mut(dev).expect("every device with requests has a summary");
        for w in reqs.windows(2) {
            d.seek_sorted_bytes += w[1].0.abs_diff(w[0].0 + w[0].1);
        }
    }
    let mut all: Vec<(f64, f64)> = Vec::new();
    for (dev, v) in busy.iter_mut() {
        all.extend_from_slice(v);
        if let Some(d) = devs.get_mut(dev) {
            d.read_in_flight_seconds = union_length(v, 0.0, wall_ms) / 1e3;
        }
    }
    s.read_in_flight_seconds = union_length(&mut all, 0.0, wall_ms) / 1e3;
    s.devices = devs.into_values().collect();
    let with_data: Vec<&DeviceSummary> =
        s.devices.iter().filter(|d| d.read_requests + d.write_requests > 0).collect();
    if let [d] = with_data[..] {
        s.seek_total_bytes = Some(d.seek_total_bytes);
        s.seek_sorted_bytes = Some(d.seek_sorted_bytes);
    }
    s.read_latency_mean_us = (lat_n > 0).then(|| lat_sum / lat_n as f64);
    let pb = page_bytes();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for f in files.iter() {
        if f.first_open_ms.is_some() {
            if f.is_dir {
                s.directories_opened += 1;
            } else {
                s.files_opened += 1;
                *kinds.entry(f.kind.clone()).or_default() += 1;
            }
        }
        if f.pages_in() > 0 || f.device_read_bytes + f.device_write_bytes > 0 {
            s.files_touched += 1;
        }
        s.pages_in_bytes[0] += f.pages_read * pb;
        s.pages_in_bytes[1] += f.pages_fault * pb;
        s.pages_in_bytes[2] += f.pages_readahead * pb;
        s.pages_in_bytes[3] += f.pages_other * pb;
    }
    s.kinds = kinds.into_iter().collect();
    s.kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let top = |key: &dyn Fn(&FileProfile) -> u64| {
        let mut v: Vec<&FileProfile> = files.iter().filter(|f| key(f) > 0).collect();
        v.sort_by_key(|f| std::cmp::Reverse(key(f)));
        v.into_iter()
            .take(10)
            .map(|f| TopFile {
                name: f.display_name(),
                device_read_bytes: f.device_read_bytes,
                requests: f.device_requests,
                pages_in: f.pages_in(),
            })
            .collect::<Vec<_>>()
    };
    s.top_by_bytes = top(&|f| f.device_read_bytes);
    s.top_by_requests = top(&|f| f.device_requests);
    s
}

/// Bytes as a person reads them (KiB/MiB/GiB, three significant digits).
pub fn human(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else if x >= 100.0 {
        format!("{x:.0} {}", UNITS[u])
    } else if x >= 10.0 {
        format!("{x:.1} {}", UNITS[u])
    } else {
        format!("{x:.2} {}", UNITS[u])
    }
}

fn pct(a: u64, b: u64) -> String {
    format!("{:.1}%", share(a, b) * 100.0)
}

/// A command line cut to 72 characters for a headline.
pub fn short_command(command: &str) -> String {
    if command.chars().count() > 72 {
        format!("{}...", command.chars().take(69).collect::<String>())
    } else {
        command.to_string()
    }
}

/// The text a person reads first.
pub fn render(command: &str, s: &Summary, notes: &[String]) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let command = short_command(command);
    let kinds: Vec<String> = s.kinds.iter().take(8).map(|(k, n)| format!("{n} {k}")).collect();
    let _ = writeln!(
        o,
        "profile of `{command}`: {} files, {:.2} s, exit {}",
        s.files_opened, s.wall_seconds, s.exit_code
    );
    let _ = writeln!(
        o,
        "  opened:    {} files ({}), {} directories, by {} process{}",
        s.files_opened,
        if kinds.is_empty() { "none".into() } else { kinds.join(", ") },
        s.directories_opened,
        s.processes,
        if s.processes == 1 { "" } else { "es" }
    );
    let lat = s
        .read_latency_mean_us
        .map(|l| format!(", mean read latency {l:.0} µs"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "  device:    read {} in {} requests, wrote {} in {} requests, {} flushes",
        human(s.device_read_bytes),
        s.device_read_requests,
        human(s.device_write_bytes),
        s.device_write_requests,
        s.flushes
    );
    let many = s.devices.len() > 1;
    let _ = writeln!(
        o,
        "  blocked:   {:.3} s with a read in flight{} ({:.0}% of the wall time){lat}",
        s.read_in_flight_seconds,
        if many { " on any watched device" } else { "" },
        if s.wall_seconds > 0.0 { s.read_in_flight_seconds / s.wall_seconds * 100.0 } else { 0.0 }
    );
    if many || s.devices.iter().any(|d| d.shared) {
        for d in &s.devices {
            let _ = writeln!(
                o,
                "    {:<8} read {} in {} requests, wrote {} in {} requests, {:.3} s with a read \
                 in flight, seeks {} in issue order, {} if sorted{}",
                format!("{}:", d.device),
                human(d.read_bytes),
                d.read_requests,
                human(d.write_bytes),
                d.write_requests,
                d.read_in_flight_seconds,
                human(d.seek_total_bytes),
                human(d.seek_sorted_bytes),
                if d.shared { "; shared: its counts include other processes' I/O" } else { "" }
            );
        }
    }
    let a = &s.read_attribution;
    let meta: Vec<String> =
        a.metadata_bytes.iter().map(|(k, v)| format!("{k} {}", human(*v))).collect();
    let _ = writeln!(
        o,
        "  reads:     {} to named files, {} metadata{}, {} unattributed",
        pct(a.files_bytes, a.total()),
        pct(a.metadata_total(), a.total()),
        if meta.is_empty() { String::new() } else { format!(" ({})", meta.join(", ")) },
        pct(a.unattributed_bytes, a.total())
    );
    let w = &s.write_attribution;
    if w.total() > 0 {
        let meta: Vec<String> =
            w.metadata_bytes.iter().map(|(k, v)| format!("{k} {}", human(*v))).collect();
        let _ = writeln!(
            o,
            "  writes:    {} to named files, {} metadata{}, {} unattributed",
            pct(w.files_bytes, w.total()),
            pct(w.metadata_total(), w.total()),
            if meta.is_empty() { String::new() } else { format!(" ({})", meta.join(", ")) },
            pct(w.unattributed_bytes, w.total())
        );
    }
    let [pr, pf, pa, po] = s.pages_in_bytes;
    let _ = writeln!(
        o,
        "  cache in:  {} by read, {} by fault, {} by readahead, {} other; {} files touched",
        human(pr),
        human(pf),
        human(pa),
        human(po),
        s.files_touched
    );
    if let (Some(t), Some(so)) = (s.seek_total_bytes, s.seek_sorted_bytes) {
        let _ = writeln!(
            o,
            "  seeks:     {} in issue order, {} if sorted by offset",
            human(t),
            human(so)
        );
    } else if many {
        let _ = writeln!(o, "  seeks:     per device (above); not summed across devices");
    }
    let _ = writeln!(
        o,
        "  complete:  {}",
        if s.complete() {
            "yes, no event lost".to_string()
        } else {
            format!(
                "NO: {} trace events and {} opens lost; counts are lower bounds",
                s.events_lost, s.opens_lost
            )
        }
    );
    for (title, list) in [("by device bytes", &s.top_by_bytes), ("by requests", &s.top_by_requests)]
    {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(o, "  top files {title}:");
        for t in list {
            let _ = writeln!(
                o,
                "    {:>10} {:>6} req  {}",
                human(t.device_read_bytes),
                t.requests,
                t.name
            );
        }
    }
    for n in notes {
        let _ = writeln!(o, "  note: {n}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::attribute::Part;

    fn req(t_ms: f64, sector: u64, bytes: u64, lat_us: f64, parts: Vec<Part>) -> Request {
        Request {
            t_ms,
            device: "loop0".into(),
            op: Op::Read,
            sector,
            bytes,
            latency_us: Some(lat_us),
            meta: false,
            readahead: false,
            parts,
        }
    }

    #[test]
    fn seeks_busy_time_and_shares() {
        let mut files = vec![FileProfile {
            path: "/m/a.so".into(),
            kind: "shared object".into(),
            first_open_ms: Some(0.0),
            ..Default::default()
        }];
        let f = |b| Part { owner: Owner::File { file: 0, offset_bytes: 0 }, bytes: b };
        let m = |b| Part { owner: Owner::Metadata { what: "inode table".into() }, bytes: b };
        let reqs = vec![
            // [0, 4096) at t=0..1 ms
            req(0.0, 0, 4096, 1000.0, vec![f(4096)]),
            // far away: 1 MiB further, overlapping in time (0.5..1.5 ms)
            req(0.5, 2048, 4096, 1000.0, vec![m(4096)]),
            // back near the start
            req(
                3.0,
                8,
                8192,
                500.0,
                vec![f(4096), Part { owner: Owner::Unattributed, bytes: 4096 }],
            ),
        ];
        let s = summarize(&mut files, &reqs, 1, 1.0, &[]);
        assert_eq!(s.device_read_bytes, 16384);
        assert_eq!(s.device_read_requests, 3);
        // |1 MiB - 4096| + |4096 - (1 MiB + 4096)|
        assert_eq!(s.seek_total_bytes, Some((1 << 20) - 4096 + (1 << 20)));
        // sorted: [0,4096) [4096,12288) [1 MiB, ..): 0 + (1 MiB - 12288)
        assert_eq!(s.seek_sorted_bytes, Some((1 << 20) - 12288));
        assert!((s.read_in_flight_seconds - 0.002).abs() < 1e-9);
        assert_eq!(s.read_attribution.files_bytes, 8192);
        assert!((s.named_share() - 0.5).abs() < 1e-12);
        assert!((s.named_or_metadata_share() - 0.75).abs() < 1e-12);
        assert_eq!(files[0].device_read_bytes, 8192);
        assert_eq!(files[0].device_requests, 2);
        assert_eq!(s.kinds, vec![("shared object".to_string(), 1)]);
        let text = render("x", &s, &[]);
        assert!(text.contains("1 files"), "{text}");
        assert!(text.contains("50.0% to named files"), "{text}");
    }

    #[test]
    fn read_in_flight_is_a_union_within_the_wall_time() {
        // Unsorted, nested and overlapping intervals: union of [0,3) and [5,6) = 4.
        let mut v = vec![(5.0, 6.0), (0.0, 2.0), (1.0, 3.0), (0.5, 1.0)];
        assert!((union_length(&mut v, 0.0, 100.0) - 4.0).abs() < 1e-12);
        // Clipped to [0, 2.5]: [0, 2.5) only.
        assert!((union_length(&mut v, 0.0, 2.5) - 2.5).abs() < 1e-12);
        // Requests issued before the command and completed after it, on two devices, out of
        // time order: never more than the wall time.
        let mut files: Vec<FileProfile> = Vec::new();
        let mut a = req(0.0, 0, 4096, 5e6, vec![]);
        a.device = "vda".into();
        let b = req(10.0, 0, 4096, 5e6, vec![]);
        let mut c = req(2.0, 64, 4096, 3e6, vec![]);
        c.device = "vda".into();
        let s = summarize(&mut files, &[b, a, c], 1, 1.0, &[]);
        assert!(s.read_in_flight_seconds <= 1.0 + 1e-9, "{}", s.read_in_flight_seconds);
        assert!((s.read_in_flight_seconds - 1.0).abs() < 1e-9);
        for d in &s.devices {
            assert!(d.read_in_flight_seconds <= 1.0 + 1e-9, "{d:?}");
        }
    }

    #[test]
    fn seeks_are_per_device_and_shared_devices_say_so() {
        let mut files: Vec<FileProfile> = Vec::new();
        // loop0: 0 then 8 (back to back: 4096 = 8 sectors): no seek.
        // vda: 1 GiB away from everything on loop0, 0 then 16 (4096 bytes gap).
        let gib = (1u64 << 30) / 512;
        let mut v1 = req(0.5, gib, 4096, 100.0, vec![]);
        v1.device = "vda".into();
        let mut v2 = req(1.5, gib + 16, 4096, 100.0, vec![]);
        v2.device = "vda".into();
        let reqs = vec![req(0.0, 0, 4096, 100.0, vec![]), v1, req(1.0, 8, 4096, 100.0, vec![]), v2];
        let s = summarize(&mut files, &reqs, 1, 1.0, &["vda".to_string()]);
        assert_eq!(s.devices.len(), 2);
        let by = |n: &str| s.devices.iter().find(|d| d.device == n).unwrap().clone();
        assert_eq!(by("loop0").seek_total_bytes, 0);
        assert_eq!(by("vda").seek_total_bytes, 4096);
        assert_eq!(by("vda").seek_sorted_bytes, 4096);
        assert!(by("vda").shared && !by("loop0").shared);
        assert_eq!(by("vda").read_bytes, 8192);
        // On the shared device, requests issued before the command started (t_ms 0) or after
        // it ended are other processes' and not counted; on fsbench's own device they are.
        let mut before = req(0.0, 0, 4096, 100.0, vec![]);
        before.device = "vda".into();
        let mut after = req(1500.0, 0, 4096, 100.0, vec![]);
        after.device = "vda".into();
        let mut all = reqs.clone();
        all.extend([before, after, req(1500.0, 64, 4096, 100.0, vec![])]);
        let s2 = summarize(&mut files, &all, 1, 1.0, &["vda".to_string()]);
        let by2 = |n: &str| s2.devices.iter().find(|d| d.device == n).unwrap().clone();
        assert_eq!(by2("vda").read_requests, 2);
        assert_eq!(by2("loop0").read_requests, 3);
        // Not summed across devices.
        assert_eq!(s.seek_total_bytes, None);
        let text = render("x", &s, &[]);
        assert!(text.contains("not summed across devices"), "{text}");
        assert!(text.contains("vda:") && text.contains("include other processes' I/O"), "{text}");
        assert!(!text.contains("GiB"), "{text}");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(1536), "1.50 KiB");
        assert_eq!(human(200 << 20), "200 MiB");
    }
}
