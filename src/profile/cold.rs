//! A cold start: write back and evict the page cache, then check it, as the uncached tests do
//! (`mincore` residency of the files afterwards; see `sys::cache`).
//!
//! Method: `sync` + `drop_caches = 3` (page cache, dentries and inodes: the next run reads
//! directories and inodes from the device too), then the residency of up to
//! [`CHECK_FILES`] regular files of each watched filesystem, then `drop_caches = 3` once more
//! (the check's own walk read directories and inodes; the second drop can only lower what it
//! measured). Pages a running process has
//! mapped (a shared library every process uses) cannot be dropped; the check names them.

use super::scope::Watched;
use super::ProfileError;
use crate::sys::cache;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;

/// Most files checked per filesystem.
pub const CHECK_FILES: usize = 20_000;

/// What the check found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ColdCheck {
    /// What was done.
    pub method: String,
    /// Files checked.
    pub files_checked: u64,
    /// Their bytes.
    pub bytes_checked: u64,
    /// Bytes still resident.
    pub resident_bytes: u64,
    /// The files with the most resident bytes (up to 5).
    pub still_cached: Vec<(String, u64)>,
}

impl ColdCheck {
    /// Share of the checked bytes still resident.
    pub fn resident_share(&self) -> f64 {
        if self.bytes_checked == 0 {
            0.0
        } else {
            self.resident_bytes as f64 / self.bytes_checked as f64
        }
    }

    /// A warning when more than 1% stayed cached.
    pub fn warning(&self) -> Option<String> {
        (self.resident_share() > 0.01).then(|| {
            let names: Vec<String> = self
                .still_cached
                .iter()
                .map(|(p, b)| format!("{p} ({})", super::summary::human(*b)))
                .collect();
            format!(
                "not fully cold: {:.1}% of {} checked stayed cached after {} (mapped by running \
                 processes?): {}",
                self.resident_share() * 100.0,
                super::summary::human(self.bytes_checked),
                self.method,
                names.join(", ")
            )
        })
    }
}

/// Evict and check.
pub fn make_cold(watched: &[Watched]) -> Result<ColdCheck, ProfileError> {
    cache::drop_all_caches().map_err(|e| {
        ProfileError::Unavailable(format!("dropping the page cache (needs root): {e}"))
    })?;
    let mut c = ColdCheck {
        method: "sync + drop_caches=3, checked, dropped again".into(),
        ..Default::default()
    };
    let mut cached: Vec<(String, u64)> = Vec::new();
    for w in watched {
        let mut stack = vec![w.mountpoint.clone()];
        let mut n = 0usize;
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                let Ok(m) = e.metadata() else { continue };
                if m.dev() != w.st_dev {
                    continue;
                }
                if m.is_dir() {
                    stack.push(e.path());
                } else if m.is_file() && n < CHECK_FILES {
                    n += 1;
                    c.files_checked += 1;
                    c.bytes_checked += m.len();
                    if let Ok(f) = cache::resident_fraction(&e.path()) {
                        let b = (f * m.len() as f64) as u64;
                        if b > 0 {
                            c.resident_bytes += b;
                            cached.push((e.path().to_string_lossy().into_owned(), b));
                        }
                    }
                }
            }
            if n >= CHECK_FILES {
                break;
            }
        }
    }
    // The check itself read directories and inodes (and opened every file): drop again, so the
    // run starts with cold metadata too. This can only lower what the check measured.
    cache::drop_all_caches()
        .map_err(|e| ProfileError::Unavailable(format!("dropping the page cache: {e}")))?;
    cached.sort_by_key(|x| std::cmp::Reverse(x.1));
    cached.truncate(5);
    c.still_cached = cached;
    Ok(c)
}
