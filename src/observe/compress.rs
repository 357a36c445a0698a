//! What compression achieved: zfs's `compressratio` of the dataset under a test's files, read
//! after the last phase of a repetition (outside every timing), while the files still exist.
//!
//! fsbench writes random bytes ([`crate::engine::buffer`]), so a ratio near 1.00x is expected
//! and says the figures are not inflated by compressible data (seed 003: zeros made
//! compression look 28 times faster). btrfs has no ratio without `compsize`, so none is shown.

use crate::model::result::TestResult;
use crate::sys::cmd::Cmd;
use std::path::Path;

/// `compressratio` of the zfs dataset mounted at or above `dir`; None on any other filesystem
/// or when zfs cannot say. zfs-fuse takes only a dataset name, so it is the mount's source.
pub fn ratio(dir: &Path) -> Option<f64> {
    let m = crate::sys::mountinfo::mount_of(dir)?;
    if m.fstype != "zfs" && m.fstype != "fuse.zfs" {
        return None;
    }
    let out = Cmd::new("zfs").args(["get", "-H", "-o", "value", "compressratio", &m.source]).run();
    parse(&out.ok()?)
}

/// `1.03x` -> 1.03.
fn parse(text: &str) -> Option<f64> {
    text.trim().strip_suffix('x')?.parse().ok()
}

/// The ratio of each test's median repetition, in words, or None when no test has one:
/// `compression achieved (zfs compressratio after each test): 1.00x in tests 1-9, 1.03x in 10`.
pub fn words(tests: &[TestResult]) -> Option<String> {
    let mut by: Vec<(String, Vec<&str>)> = Vec::new();
    for t in tests {
        let Some(r) = t.median_rep().and_then(|r| r.compress_ratio) else { continue };
        let k = format!("{r:.2}x");
        match by.iter_mut().find(|(x, _)| *x == k) {
            Some((_, ids)) => ids.push(&t.id),
            None => by.push((k, vec![&t.id])),
        }
    }
    if by.is_empty() {
        return None;
    }
    let parts: Vec<String> = by
        .iter()
        .map(|(k, ids)| {
            format!("{k} in test{} {}", if ids.len() == 1 { "" } else { "s" }, ids.join(", "))
        })
        .collect();
    Some(format!(
        "compression achieved (zfs compressratio after each test's last phase): {}",
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_zfs_ratios_and_groups_tests() {
        assert_eq!(parse("1.03x\n"), Some(1.03));
        assert_eq!(parse("-"), None);
        let t = |id: &str, r: Option<f64>| {
            let mut t = TestResult {
                id: id.into(),
                name: id.into(),
                description: String::new(),
                threads: 1,
                status: crate::model::result::TestStatus::Ok,
                reps: vec![crate::model::result::RepResult {
                    complete: true,
                    compress_ratio: r,
                    ..Default::default()
                }],
                complete_reps: 1,
                figure: Default::default(),
                summary: None,
                warnings: vec![],
            };
            t.finalize();
            t
        };
        let tests = [t("1", Some(1.0)), t("2", Some(1.03)), t("3", Some(1.0)), t("4", None)];
        assert_eq!(
            words(&tests).unwrap(),
            "compression achieved (zfs compressratio after each test's last phase): 1.00x in tests 1, 3; 1.03x in test 2"
        );
        assert_eq!(words(&tests[3..]), None);
    }

    #[test]
    fn no_ratio_off_zfs() {
        assert_eq!(ratio(Path::new("/")), None);
    }
}
