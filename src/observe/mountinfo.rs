//! `/proc/self/mountinfo`: which filesystem a directory is on, and its options in effect.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One mount, as the kernel reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mount {
    /// Mount point.
    pub target: String,
    /// Filesystem type.
    pub fs_type: String,
    /// Source (device).
    pub source: String,
    /// Per-mount options plus superblock options.
    pub options: String,
    /// major:minor of the filesystem.
    pub dev: String,
}

/// Parse mountinfo text.
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            if l.len() < 6 || r.len() < 3 {
                return None;
            }
            Some(Mount {
                target: unescape(l[4]),
                dev: l[2].to_string(),
                fs_type: r[0].to_string(),
                source: unescape(r[1]),
                options: format!("{},{}", l[5], r[2]),
            })
        })
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

/// The mount that holds `dir`: the last mount whose device matches and whose target is a prefix.
pub fn mount_of(dir: &Path) -> Option<Mount> {
    let dir = dir.canonicalize().ok()?;
    let dev = std::fs::metadata(&dir).ok()?.dev();
    let key = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    parse(&text)
        .into_iter()
        .filter(|m| m.dev == key && dir.starts_with(&m.target))
        .max_by_key(|m| m.target.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_line() {
        let t =
            "36 25 7:3 / /mnt/my\\040dir rw,relatime shared:1 - ext4 /dev/loop3 rw,data=ordered\n";
        let m = &parse(t)[0];
        assert_eq!(m.target, "/mnt/my dir");
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, "/dev/loop3");
        assert_eq!(m.options, "rw,relatime,rw,data=ordered");
        assert_eq!(m.dev, "7:3");
    }

    #[test]
    fn finds_root() {
        let m = mount_of(Path::new("/")).expect("root is mounted");
        assert_eq!(m.target, "/");
    }
}
