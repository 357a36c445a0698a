//! `/proc/meminfo` reader.

use std::collections::BTreeMap;

/// Parsed `/proc/meminfo`, values in bytes.
#[derive(Debug, Clone, Default)]
pub struct MemInfo(pub BTreeMap<String, u64>);

impl MemInfo {
    /// Read `/proc/meminfo` now.
    pub fn read() -> std::io::Result<MemInfo> {
        Ok(Self::parse(&std::fs::read_to_string("/proc/meminfo")?))
    }

    /// Parse the text of `/proc/meminfo` (lines like `MemFree:   123 kB`).
    pub fn parse(text: &str) -> MemInfo {
        let mut m = BTreeMap::new();
        for line in text.lines() {
            let Some((k, rest)) = line.split_once(':') else {
                continue;
            };
            let mut it = rest.split_whitespace();
            let Some(v) = it.next().and_then(|v| v.parse::<u64>().ok()) else {
                continue;
            };
            let mult = if it.next() == Some("kB") { 1024 } else { 1 };
            m.insert(k.trim().to_string(), v * mult);
        }
        MemInfo(m)
    }

    /// A field in bytes, 0 when absent.
    pub fn get(&self, key: &str) -> u64 {
        self.0.get(key).copied().unwrap_or(0)
    }

    /// What the study called "freemem": memory available to a new workload without swapping
    /// (`MemAvailable`, which counts reclaimable page cache; `MemFree` on old kernels).
    pub fn free_memory(&self) -> u64 {
        match self.0.get("MemAvailable") {
            Some(v) => *v,
            None => self.get("MemFree"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kb_lines() {
        let m = MemInfo::parse("MemTotal:  1000 kB\nMemAvailable: 10 kB\nHugePages_Total: 3\n");
        assert_eq!(m.get("MemTotal"), 1_024_000);
        assert_eq!(m.free_memory(), 10_240);
        assert_eq!(m.get("HugePages_Total"), 3);
        assert_eq!(m.get("Nope"), 0);
    }
}
