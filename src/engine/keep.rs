//! Files laid out once and reused: a data test that only reads its files, uncached, finds them
//! as an earlier repetition on the same target left them, so its untimed lay-out (writing and
//! syncing the whole file) runs once per configuration instead of once per repetition.
//!
//! Why this is safe: such a test never changes its files' bytes, size or extents, so a later
//! repetition starts from the same files as the first, and each repetition's `uncached`
//! precondition is made and verified (`mincore`) before every phase exactly as for a new file
//! ([`super::cache`]); a clean file is also evicted faster than a just-written one. A test that
//! writes, creates, truncates or appends, a fileset test, a test with roles, `--verify` (whose
//! content depends on the repetition) and a multi-client run lay out their files afresh every
//! time, as before. So does a read test whose precondition is not `uncached`: with `any` a
//! reused file would start in another cache state than a new one (nothing re-establishes it),
//! and with `cached` a reused file, evicted in between by other tests' preconditions, must be
//! read back from the device, which measured slower than laying it out again (the lay-out
//! leaves it cached): bench/results/2026-11-27-time-split.md. A kept file takes space on the
//! target, so a file is kept only while the filesystem keeps room for the suite's largest test
//! beside it.

use super::runner::EngineOptions;
use crate::model::job::{CacheReq, OpKind, TestDef};
use std::path::Path;

/// Whether `test`'s files may be laid out once and reused by its later repetitions: a data
/// test with prefilled files whose every phase only reads them, from an uncached start (not a
/// file the job names: it is laid out only when absent or short anyway, and removed or kept as
/// the job says).
pub fn reusable(test: &TestDef, opts: &EngineOptions) -> bool {
    opts.reuse_layout
        && !test.is_fileset()
        && test.files.prefill
        && test.files.named.is_none()
        && test.files.run_file.is_none()
        && test.roles.is_empty()
        && !opts.verify
        && opts.share.is_none()
        && test.phases.iter().all(|p| {
            p.cache == CacheReq::Uncached
                && !(p.open.create || p.open.trunc || p.open.append)
                && p.pattern.kinds().iter().all(|k| *k == OpKind::Read)
        })
}

/// The tests whose files a target's work directory holds between repetitions, laid out and
/// intact. Owned beside the work directory: removing the directory removes the files.
#[derive(Debug)]
pub struct LayoutKeep {
    /// Free bytes the filesystem must keep beside the kept files (the suite's largest test).
    room: u64,
    /// The tests whose files are kept.
    kept: Vec<String>,
}

impl LayoutKeep {
    /// Keep files while the filesystem still has `room` bytes free beside them.
    pub fn new(room: u64) -> LayoutKeep {
        LayoutKeep { room, kept: Vec::new() }
    }

    /// Keeps nothing.
    pub fn none() -> LayoutKeep {
        LayoutKeep::new(u64::MAX)
    }

    /// Whether `test`'s files were kept; they are no longer kept from here on (until
    /// [`LayoutKeep::keep`] says so again): a repetition that fails leaves them removed.
    pub fn take(&mut self, test: &TestDef) -> bool {
        let before = self.kept.len();
        self.kept.retain(|id| *id != test.id);
        self.kept.len() < before
    }

    /// After a repetition that went well: keep `test`'s files in `dir` when the filesystem
    /// still has room for the largest test beside them. Returns whether they are kept (if not,
    /// the caller removes them).
    pub fn keep(&mut self, test: &TestDef, dir: &Path) -> bool {
        let free = rustix::fs::statvfs(dir).map(|v| v.f_bavail.saturating_mul(v.f_frsize));
        if free.is_ok_and(|f| f >= self.room) {
            self.kept.push(test.id.clone());
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite() -> crate::model::job::Suite {
        crate::workload::load(
            &crate::workload::SuiteSource::Embedded("unit14".into()),
            &crate::workload::ResolveCtx { scale: "quick".parse().unwrap(), free_memory: 1 << 30 },
        )
        .unwrap()
    }

    #[test]
    fn only_tests_that_read_their_prefilled_files_reuse_them() {
        let s = suite();
        let opts = EngineOptions::default();
        let reused: Vec<&str> =
            s.tests.iter().filter(|t| reusable(t, &opts)).map(|t| t.id.as_str()).collect();
        // Tests 5 (sequential reads) and 13 (random reads), uncached; 4 and 14 read their
        // files cached, and every other unit14 test writes its file (1-3, 8: a new one; 6, 7,
        // 9-12: rewrites in place).
        assert_eq!(reused, ["5", "13"]);
        let t = &s.tests[4];
        assert!(!reusable(t, &EngineOptions { verify: true, ..opts.clone() }));
        assert!(!reusable(t, &EngineOptions { reuse_layout: false, ..opts.clone() }));
        let share = Some(crate::engine::Share { index: 0, count: 2 });
        assert!(!reusable(t, &EngineOptions { share, ..opts }));
    }

    #[test]
    fn files_are_kept_only_with_room_beside_them_and_taken_once() {
        let s = suite();
        let t = &s.tests[4];
        let d = tempfile::tempdir().unwrap();
        let mut none = LayoutKeep::none();
        assert!(!none.keep(t, d.path()), "no filesystem has u64::MAX bytes free");
        assert!(!none.take(t));
        let mut k = LayoutKeep::new(0);
        assert!(!k.take(t), "nothing kept yet");
        assert!(k.keep(t, d.path()));
        assert!(k.take(t));
        assert!(!k.take(t), "taken: a repetition that fails does not leave it kept");
    }
}
