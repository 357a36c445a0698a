//! A phase's cache precondition, made and verified on the test's files before the phase
//! ([`prepare`]). A repetition in which it does not hold is run again by the runner
//! ([`super::runner`]), and left out of the test's figures when it still does not.
//!
//! - `cached`: read the files once, then require ≥ [`CACHED_MIN`] resident (`mincore`); another
//!   process (drop_caches, memory pressure) can evict in between on a shared machine, so read
//!   again, up to three times, and say so.
//! - `uncached`: the files are made evictable (a fileset's filesystem is synced: its dirty
//!   files cannot be evicted), then the target's eviction runs ([`super::CacheControl`]) with
//!   the files' [`Scope`]: a data test's own pages only (as fio's `invalidate`; other tests'
//!   cached files stay cached), a file set's everything; require ≤ [`UNCACHED_MAX`]. When a data
//!   test's files alone stayed resident, everything is emptied and residency measured again.
//! - `any`: nothing is done; residency is still measured and recorded.

use super::files::TestFiles;
use super::target::{Scope, Target};
use crate::model::failure::EngineError;
use crate::model::job::CacheReq;
use crate::model::result::{CacheCheck, CREATED};
use crate::model::time::Untimed;
use crate::sys::cache;
use std::path::PathBuf;
use std::time::Instant;

/// Resident share at or above which a file counts as cached.
pub const CACHED_MIN: f64 = 0.95;
/// Resident share required once something else was seen evicting the files (a second read
/// was needed): full, but for rounding of a partly cached last page.
pub const CACHED_FULL: f64 = 0.995;
/// Resident share at or below which a file counts as uncached.
pub const UNCACHED_MAX: f64 = 0.02;

/// Make and verify phase `phase`'s cache precondition `req` on `files` (every file of a data
/// test; a sample of a fileset's). Whether it held is in the check; the test's result says so
/// once, with the count of repetitions that missed it
/// ([`crate::model::result::Warning::PreconditionNotMet`]), and leaves them out of its figures.
/// The time it took is added to `spent` (a sync before an eviction as `sync_nanos`, the rest as
/// `cache_nanos`). An error when the test's directories could not be taken again after an eviction that
/// unmounted (the phase cannot run).
pub fn prepare(
    req: CacheReq,
    files: &dyn TestFiles,
    target: &Target<'_>,
    spent: &mut Untimed,
) -> Result<CacheCheck, EngineError> {
    let t0 = Instant::now();
    let mut sync_nanos = 0;
    let check = establish(req, files, target, &mut sync_nanos);
    spent.sync_nanos += sync_nanos;
    spent.cache_nanos += (t0.elapsed().as_nanos() as u64).saturating_sub(sync_nanos);
    check
}

/// The precondition, made and measured; an error when the test's directories could not be taken
/// again after an eviction that unmounted. The time spent making the files evictable (a sync)
/// goes to `sync_nanos`.
fn establish(
    req: CacheReq,
    files: &dyn TestFiles,
    target: &Target<'_>,
    sync_nanos: &mut u64,
) -> Result<CacheCheck, EngineError> {
    if !files.all_exist() {
        return Ok(CacheCheck {
            required: req,
            resident_fraction: 0.0,
            method: CREATED.into(),
            met: req != CacheReq::Cached,
        });
    }
    let paths = files.residency_files();
    // Something else evicted pages between reading the files and checking them.
    let mut evicted = false;
    let (method, resident) = match req {
        CacheReq::Cached => {
            let mut tries = 0;
            loop {
                tries += 1;
                if let Some(e) = paths.iter().find_map(|p| cache::warm_file(p).err()) {
                    break (format!("read once failed: {e}"), residency(&paths));
                }
                let r = residency(&paths);
                if r >= CACHED_MIN || tries == 3 {
                    let how = if tries == 1 {
                        "read once".into()
                    } else {
                        format!("read {tries} times (evicted by something else in between)")
                    };
                    evicted = tries > 1;
                    break (how, r);
                }
            }
        }
        CacheReq::Uncached => {
            // An eviction that unmounts fails while a descriptor is open on the filesystem:
            // the files' own are let go here, the work directory's by the target.
            let unmounts = target.cache.unmounts();
            let lost = |e: std::io::Error| {
                EngineError::setup("the test's files around an eviction that unmounts", &e)
            };
            if unmounts {
                files.release().map_err(lost)?;
            }
            let t0 = Instant::now();
            let evictable = files.evictable();
            *sync_nanos = t0.elapsed().as_nanos() as u64;
            let scope = files.eviction_scope();
            let mut evicted = target.evict(evictable, scope).map_err(lost)?;
            if unmounts {
                files.reanchor().map_err(lost)?;
            }
            let mut resident = residency(&paths);
            // The files' own pages were not enough (pages pinned by another opener, a
            // filesystem that ignores the advice): empty everything, as a file set does. (An
            // eviction that unmounts empties everything whatever the scope.)
            if scope == Scope::Files && !unmounts && evicted.is_ok() && resident > UNCACHED_MAX {
                let left = resident;
                evicted = target
                    .evict(evictable, Scope::Everything)
                    .map_err(lost)?
                    .map(|m| format!("{m} (the files alone left {:.0}% resident)", left * 100.0));
                resident = residency(&paths);
            }
            let m = match evicted {
                Ok(m) => m,
                Err(e) => format!("eviction failed: {e}"),
            };
            (m, resident)
        }
        CacheReq::Any => ("none".into(), residency(&paths)),
        CacheReq::Direct => ("O_DIRECT: the page cache is bypassed".into(), residency(&paths)),
    };
    let met = met(req, resident, evicted);
    let method = if files.sampled() {
        format!("{method}; residency sampled over {} files", paths.len())
    } else {
        method
    };
    Ok(CacheCheck { required: req, resident_fraction: resident, method, met })
}

/// Whether a cache precondition holds at `resident`; `evicted`: a `cached` precondition needed
/// a second read because something else evicted the files in between.
fn met(req: CacheReq, resident: f64, evicted: bool) -> bool {
    match req {
        CacheReq::Any | CacheReq::Direct => true,
        // Once something else was seen evicting the files, it may go on during the phase:
        // anything short of full residency counts as not met.
        CacheReq::Cached => resident >= if evicted { CACHED_FULL } else { CACHED_MIN },
        CacheReq::Uncached => resident <= UNCACHED_MAX,
    }
}

/// Size-weighted resident fraction of several files.
fn residency(paths: &[PathBuf]) -> f64 {
    let mut total = 0u64;
    let mut res = 0.0;
    for p in paths {
        let len = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let f = cache::resident_fraction(p).unwrap_or(0.0);
        total += len;
        res += f * len as f64;
    }
    if total == 0 {
        0.0
    } else {
        res / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_evicted_by_something_else_must_be_fully_resident() {
        // Read once, 96% resident: met (a file a little larger than what stays cached).
        assert!(met(CacheReq::Cached, 0.9565, false));
        // Read twice because something else evicted it, 96% resident at the end: not met.
        assert!(!met(CacheReq::Cached, 0.9565, true));
        assert!(met(CacheReq::Cached, 1.0, true));
        assert!(!met(CacheReq::Cached, 0.9, false));
        assert!(met(CacheReq::Uncached, 0.01, false));
        assert!(!met(CacheReq::Uncached, 0.5, false));
    }
}
