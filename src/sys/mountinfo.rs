//! /proc/self/mountinfo: what is mounted where, with the options actually in effect. The one
//! parser of it (testbeds verify their mounts and clean up by it, the engine describes a
//! target's filesystem, the tracer finds tracefs).

use std::path::{Path, PathBuf};

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountEntry {
    /// `major:minor` of the mounted filesystem.
    pub dev: String,
    /// Mount point.
    pub mountpoint: PathBuf,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// Filesystem type (`ext4`, `fuse.zfs`, ...).
    pub fstype: String,
    /// Mount source (`/dev/loop3`, `tmpfs`, a pool name).
    pub source: String,
    /// Per-superblock options (`rw,data=writeback`).
    pub super_options: String,
}

/// Read and parse /proc/self/mountinfo.
pub fn read() -> std::io::Result<Vec<MountEntry>> {
    Ok(parse(&std::fs::read_to_string("/proc/self/mountinfo")?))
}

/// The entry mounted at `mountpoint` (the last, topmost one if stacked).
pub fn find(entries: &[MountEntry], mountpoint: &Path) -> Option<MountEntry> {
    entries.iter().rev().find(|e| e.mountpoint == mountpoint).cloned()
}

/// Whether something is mounted at `mountpoint` now.
pub fn is_mounted(mountpoint: &Path) -> bool {
    read().map(|e| find(&e, mountpoint).is_some()).unwrap_or(false)
}

impl MountEntry {
    /// Per-mount and per-superblock options together, each once (`rw,relatime,data=ordered`:
    /// both lists say `rw`).
    pub fn options(&self) -> String {
        let mut seen: Vec<&str> = Vec::new();
        for o in self.mount_options.split(',').chain(self.super_options.split(',')) {
            if !o.is_empty() && !seen.contains(&o) {
                seen.push(o);
            }
        }
        seen.join(",")
    }
}

/// The mount that holds `dir`: the last mount whose device matches and whose mount point is a
/// prefix of the resolved path.
pub fn mount_of(dir: &Path) -> Option<MountEntry> {
    use std::os::unix::fs::MetadataExt;
    let dir = dir.canonicalize().ok()?;
    let dev = std::fs::metadata(&dir).ok()?.dev();
    let key = format!("{}:{}", libc::major(dev), libc::minor(dev));
    read()
        .ok()?
        .into_iter()
        .filter(|m| m.dev == key && dir.starts_with(&m.mountpoint))
        .max_by_key(|m| m.mountpoint.as_os_str().len())
}

/// Parse mountinfo text; malformed lines are skipped.
pub fn parse(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    // id parent major:minor root mountpoint options [optional fields...] - fstype source superopts
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 2 {
        return None;
    }
    Some(MountEntry {
        dev: l[2].to_string(),
        mountpoint: PathBuf::from(unescape(l[4])),
        mount_options: l[5].to_string(),
        fstype: r[0].to_string(),
        source: unescape(r[1]),
        super_options: r.get(2).map(|s| s.to_string()).unwrap_or_default(),
    })
}

/// Undo the kernel's octal escapes (`\040` for space, `\011`, `\012`, `\134`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            if let Some(Ok(v)) = s.get(i + 1..i + 4).map(|o| u8::from_str_radix(o, 8)) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
42 27 0:39 / /var/tmp/fsbench/mnt\\040x rw,relatime - fuse.zfs fsbench_1 rw,user_id=0,group_id=0
50 22 7:3 / /var/tmp/fsbench/tb/mnt rw,noatime shared:7 master:1 - xfs /dev/loop3 rw,attr2,inode64,logbufs=8,logbsize=256k,noquota
";

    #[test]
    fn parses_lines_and_optional_fields() {
        let e = parse(SAMPLE);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].source, "/dev/vda");
        assert_eq!(e[0].dev, "254:0");
        assert_eq!(e[1].mountpoint, Path::new("/var/tmp/fsbench/mnt x"));
        assert_eq!(e[1].fstype, "fuse.zfs");
        assert_eq!(e[2].mount_options, "rw,noatime");
        assert!(e[2].super_options.contains("logbsize=256k"));
        assert_eq!(find(&e, Path::new("/var/tmp/fsbench/tb/mnt")).unwrap().source, "/dev/loop3");
        assert!(find(&e, Path::new("/nope")).is_none());
    }

    #[test]
    fn finds_root_and_joins_options() {
        let m = mount_of(Path::new("/")).expect("root is mounted");
        assert_eq!(m.mountpoint, Path::new("/"));
        let e = parse(SAMPLE);
        // Both lists say rw: once.
        assert_eq!(e[0].options(), "rw,relatime");
        assert_eq!(
            MountEntry {
                mount_options: "rw,noatime".into(),
                super_options: "rw,logbsize=256k,noatime".into(),
                ..Default::default()
            }
            .options(),
            "rw,noatime,logbsize=256k"
        );
    }

    #[test]
    fn unescapes_octal() {
        assert_eq!(unescape("a\\040b\\134c"), "a b\\c");
        assert_eq!(unescape("trailing\\"), "trailing\\");
    }
}
