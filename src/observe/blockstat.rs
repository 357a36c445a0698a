//! Block-device counters from `/sys/block/DEV/stat` (Documentation/block/stat.rst).
//!
//! Fields: read I/Os, read merges, read sectors, read ticks, write I/Os, write merges, write
//! sectors, write ticks, in_flight, io_ticks, time_in_queue, ... Sectors are always 512 bytes.

use crate::model::result::DeviceDelta;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A snapshot of one device's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockStat {
    /// Reads completed.
    pub reads: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    /// Milliseconds reads spent from issue to completion, added up over the reads.
    pub read_ticks: u64,
    /// Writes completed.
    pub writes: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// 512-byte sectors written.
    pub write_sectors: u64,
    /// Milliseconds writes spent, added up.
    pub write_ticks: u64,
    /// Milliseconds the device had I/O in flight.
    pub io_ticks: u64,
    /// Milliseconds of I/O in flight weighted by how many were (`time_in_queue`).
    pub queue_ticks: u64,
}

impl BlockStat {
    /// Parse the one-line stat file.
    pub fn parse(text: &str) -> Option<BlockStat> {
        let v: Vec<u64> = text.split_whitespace().map(|x| x.parse().ok()).collect::<Option<_>>()?;
        if v.len() < 11 {
            return None;
        }
        Some(BlockStat {
            reads: v[0],
            read_merges: v[1],
            read_sectors: v[2],
            read_ticks: v[3],
            writes: v[4],
            write_merges: v[5],
            write_sectors: v[6],
            write_ticks: v[7],
            io_ticks: v[9],
            queue_ticks: v[10],
        })
    }

    /// Read `/sys/block/NAME/stat` (or a partition's stat via /sys/class/block).
    pub fn read(dev: &str) -> Option<BlockStat> {
        let p = format!("/sys/class/block/{dev}/stat");
        Self::parse(&std::fs::read_to_string(p).ok()?)
    }
}

/// Snapshots of several devices, to diff over a phase.
#[derive(Debug, Clone)]
pub struct Snapshot(Vec<(String, BlockStat)>, std::time::Instant);

/// Slack for `io_ticks` against the time between two readings: the counter moves in jiffies.
const TICK_SLACK_MS: u64 = 20;

impl Snapshot {
    /// Read all `devices` now (unreadable ones are skipped).
    pub fn take(devices: &[String]) -> Snapshot {
        Snapshot(
            devices.iter().filter_map(|d| BlockStat::read(d).map(|s| (d.clone(), s))).collect(),
            std::time::Instant::now(),
        )
    }

    /// What changed from `self` to `later`, summed over devices.
    pub fn delta(&self, later: &Snapshot) -> Option<DeviceDelta> {
        let window = later.1.saturating_duration_since(self.1).as_millis() as u64;
        self.delta_within(later, window)
    }

    /// [`Snapshot::delta`] for readings `window_ms` apart. A device cannot have been busy for
    /// longer than that; where its `io_ticks` grew by more (seen in compares on this project's
    /// VM: 4.5 s in a phase of under 1 s), the counter took in time from outside the window, so
    /// the busy time is capped at the window and marked [`DeviceDelta::busy_overcounted`].
    fn delta_within(&self, later: &Snapshot, window_ms: u64) -> Option<DeviceDelta> {
        if self.0.is_empty() {
            return None;
        }
        let mut d = DeviceDelta::default();
        for (name, a) in &self.0 {
            let Some((_, b)) = later.0.iter().find(|(n, _)| n == name) else {
                continue;
            };
            d.devices.push(name.clone());
            d.reads_completed += b.reads.saturating_sub(a.reads);
            d.reads_merged += b.read_merges.saturating_sub(a.read_merges);
            d.read_bytes += b.read_sectors.saturating_sub(a.read_sectors) * 512;
            d.writes_completed += b.writes.saturating_sub(a.writes);
            d.writes_merged += b.write_merges.saturating_sub(a.write_merges);
            d.write_bytes += b.write_sectors.saturating_sub(a.write_sectors) * 512;
            d.read_ticks_ms += b.read_ticks.saturating_sub(a.read_ticks);
            d.write_ticks_ms += b.write_ticks.saturating_sub(a.write_ticks);
            d.queue_ms += b.queue_ticks.saturating_sub(a.queue_ticks);
            let busy = b.io_ticks.saturating_sub(a.io_ticks);
            if busy > window_ms + TICK_SLACK_MS {
                d.busy_overcounted = true;
            }
            d.busy_ms += busy.min(window_ms);
        }
        Some(d)
    }
}

/// The block device holding `dir` (kernel name, e.g. `loop3` or `vda1`), if it is a real block
/// device (not tmpfs, overlay or FUSE).
pub fn device_of(dir: &Path) -> Option<String> {
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        return None; // anonymous device: tmpfs, btrfs subvolume, FUSE, overlay
    }
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    link.file_name().map(|n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_delta() {
        let a = BlockStat::parse("10 1 80 5 20 2 160 7 0 30 40 0 0 0 0").unwrap();
        let b = BlockStat::parse("15 1 120 5 30 4 400 7 0 50 40 0 0 0 0").unwrap();
        let now = std::time::Instant::now();
        let s1 = Snapshot(vec![("x".into(), a)], now);
        let s2 = Snapshot(vec![("x".into(), b)], now);
        let d = s1.delta_within(&s2, 1000).unwrap();
        assert!(!d.busy_overcounted);
        assert_eq!(d.reads_completed, 5);
        assert_eq!(d.read_bytes, 40 * 512);
        assert_eq!(d.writes_completed, 10);
        assert_eq!(d.writes_merged, 2);
        assert_eq!(d.write_bytes, 240 * 512);
        assert_eq!(d.busy_ms, 20);
        assert_eq!((d.read_ticks_ms, d.write_ticks_ms, d.queue_ms), (0, 0, 0));
        let c = BlockStat::parse("15 1 120 9 30 4 400 19 0 50 52 0 0 0 0").unwrap();
        let d = s1.delta_within(&Snapshot(vec![("x".into(), c)], now), 1000).unwrap();
        assert_eq!((d.read_ticks_ms, d.write_ticks_ms, d.queue_ms), (4, 12, 12));
        assert!(BlockStat::parse("1 2 3").is_none());
        // 20 ms of io_ticks between readings 5 ms apart: within the slack (jiffies).
        assert!(!s1.delta_within(&s2, 5).unwrap().busy_overcounted);
        // 4,484 ms between readings 959 ms apart: capped and marked.
        let c = BlockStat { io_ticks: 30 + 4484, ..b };
        let d = s1.delta_within(&Snapshot(vec![("x".into(), c)], now), 959).unwrap();
        assert!(d.busy_overcounted);
        assert_eq!(d.busy_ms, 959);
    }

    #[test]
    fn no_devices_no_delta() {
        assert!(Snapshot::take(&[]).delta(&Snapshot::take(&[])).is_none());
    }
}
