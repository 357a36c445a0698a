//! Verified data (`--verify`): what a data test writes is a pure function of (seed, file,
//! offset), in 4 KiB cells made by [`crate::model::block`] (a header with the offset, the
//! seed and a CRC-32, then incompressible bytes), so any byte range written, by any write size
//! or offset, is consistent with every other, and a file can be checked after the fact without
//! remembering what was written. fio's `verify=crc32c` has the same shape (a header per
//! `verify_interval` block).
//!
//! Data tests: the check reads every test file once after the repetition's last phase, outside
//! every timed phase, and its time is reported as a warning line. Cells that read as zeros are
//! counted as never written, except in prefilled files, where every cell was written. Fileset
//! tests: each whole-file read is checked as it is read, against the content of the file the
//! slot holds ([`super::fileset::Content`]).
//!
//! Cost: writes generate their data inside the timed phase (one 4 KiB cell per cell touched, no
//! allocation), and fileset reads are checked there; the worker times both apart
//! (`verify_nanos` of the phase: in its wall time, outside every op's latency).

use crate::model::block::{self, BlockId, Found, BLOCK_BYTES};
use crate::model::failure::EngineError;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

/// The generation of every verified cell (a data test rewrites a cell with the same bytes).
pub const GENERATION: u64 = 1;

/// The cell at `cell_offset` of file `file`.
pub fn cell_id(seed: u64, file: u64, cell_offset: u64) -> BlockId {
    BlockId { seed, file, offset: cell_offset, generation: GENERATION }
}

/// Fill `out` with the verified content of bytes `[off, off + out.len())` of file `file`,
/// generating each cell touched into `cell` (a scratch of [`BLOCK_BYTES`]). No allocation.
#[inline]
pub fn fill_range(out: &mut [u8], cell: &mut [u8], seed: u64, file: u64, off: u64) {
    let cs = BLOCK_BYTES as u64;
    let mut done = 0usize;
    while done < out.len() {
        let pos = off + done as u64;
        let c = pos / cs * cs;
        block::fill(cell_id(seed, file, c), &mut cell[..BLOCK_BYTES]);
        let from = (pos - c) as usize;
        let n = (BLOCK_BYTES - from).min(out.len() - done);
        out[done..done + n].copy_from_slice(&cell[from..from + n]);
        done += n;
    }
}

/// What a check of one file found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCheck {
    /// Cells checked intact.
    pub intact: u64,
    /// Cells that read as zeros and were taken as never written.
    pub unwritten: u64,
    /// The first bad cell: offset, expected, found.
    pub first_bad: Option<(u64, BlockId, String)>,
    /// Bad cells.
    pub bad: u64,
}

/// Read `path` (file `file` of the test) and check every cell. `prefilled`: zero cells are bad.
pub fn check_file(
    path: &Path,
    seed: u64,
    file: u64,
    prefilled: bool,
) -> std::io::Result<FileCheck> {
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut cell = vec![0u8; BLOCK_BYTES];
    let mut r = FileCheck::default();
    let mut pos = 0u64;
    loop {
        let mut n = 0;
        while n < buf.len() {
            let k = f.read(&mut buf[n..])?;
            if k == 0 {
                break;
            }
            n += k;
        }
        if n == 0 {
            break;
        }
        for chunk in buf[..n].chunks(BLOCK_BYTES) {
            let id = cell_id(seed, file, pos);
            let found = if chunk.len() == BLOCK_BYTES {
                block::check(id, chunk)
            } else {
                // The file's last, partial cell: its bytes are a prefix of the cell.
                block::fill(id, &mut cell);
                if chunk == &cell[..chunk.len()] {
                    Found::Intact
                } else {
                    Found::NoHeader
                }
            };
            match found {
                Found::Intact => r.intact += 1,
                Found::Zeroed if !prefilled => r.unwritten += 1,
                other => {
                    r.bad += 1;
                    if r.first_bad.is_none() {
                        r.first_bad = Some((pos, id, other.to_string()));
                    }
                }
            }
            pos += chunk.len() as u64;
        }
        if n < buf.len() {
            break;
        }
    }
    Ok(r)
}

/// What [`check_files`] found when every block was intact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// 4 KiB blocks checked intact.
    pub intact: u64,
    /// Blocks taken as never written (zeros, in files that were not prefilled).
    pub unwritten: u64,
    /// Time the check took.
    pub nanos: u64,
}

/// Check every existing file of a data test (`paths[i]` is file `i`). The error names the
/// file, offset, expected and found block of the first bad one ([`EngineError::Corrupt`]).
pub fn check_files(
    paths: &[std::path::PathBuf],
    seed: u64,
    prefilled: bool,
) -> Result<Checked, EngineError> {
    let t0 = Instant::now();
    let (mut intact, mut unwritten) = (0u64, 0u64);
    for (i, p) in paths.iter().enumerate() {
        if !p.exists() {
            continue;
        }
        let r = check_file(p, seed, i as u64, prefilled)
            .map_err(|e| EngineError::io("verify: reading", Some(p.clone()), &e))?;
        if let Some((off, id, found)) = r.first_bad {
            return Err(EngineError::Corrupt {
                path: p.clone(),
                offset: Some(off),
                expected: format!("the block of {id}"),
                found,
                more: format!(" ({} bad 4 KiB blocks in this file)", r.bad),
            });
        }
        intact += r.intact;
        unwritten += r.unwritten;
    }
    Ok(Checked { intact, unwritten, nanos: t0.elapsed().as_nanos() as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn any_write_pattern_makes_the_same_file() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let mut cell = vec![0u8; BLOCK_BYTES];
        let size = 40_000u64;
        // a: one write; b: odd sizes at odd offsets, overlapping, out of order.
        let mut whole = vec![0u8; size as usize];
        fill_range(&mut whole, &mut cell, 9, 3, 0);
        std::fs::write(&a, &whole).unwrap();
        let fb = File::create(&b).unwrap();
        for (off, len) in
            [(30_001u64, 9_999usize), (0, 1000), (1000, 4097), (5000, 26_000), (777, 3000)]
        {
            let mut part = vec![0u8; len];
            fill_range(&mut part, &mut cell, 9, 3, off);
            fb.write_all_at(&part, off).unwrap();
        }
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        let r = check_file(&b, 9, 3, true).unwrap();
        assert_eq!(r.bad, 0, "{r:?}");
        assert_eq!(r.intact, size.div_ceil(BLOCK_BYTES as u64));
    }

    #[test]
    fn a_damaged_block_is_named_with_file_offset_expected_and_found() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = tmp.path().join("f");
        let mut cell = vec![0u8; BLOCK_BYTES];
        let mut data = vec![0u8; 64 << 10];
        fill_range(&mut data, &mut cell, 1, 0, 0);
        std::fs::write(&p, &data).unwrap();
        let ok = check_files(std::slice::from_ref(&p), 1, true).unwrap();
        assert_eq!((ok.intact, ok.unwritten), (16, 0));
        File::options().write(true).open(&p).unwrap().write_all_at(&[0xff; 3], 20_000).unwrap();
        let e = check_files(std::slice::from_ref(&p), 1, true).unwrap_err();
        assert!(matches!(e, EngineError::Corrupt { offset: Some(16384), .. }), "{e:?}");
        assert!(!e.is_bad_input());
        let e = e.to_string();
        assert!(e.contains("at offset 16384"), "{e}");
        assert!(e.contains("expected the block of file 0 offset 16384"), "{e}");
        assert!(e.contains("bits changed"), "{e}");
        // Zeros: never written in a file that was not prefilled, bad in one that was.
        File::options().write(true).open(&p).unwrap().write_all_at(&[0; 4096], 20_480).unwrap();
        let e = check_files(std::slice::from_ref(&p), 1, true).unwrap_err().to_string();
        assert!(e.contains("2 bad"), "{e}");
    }

    /// A data test whose file is written, then read; a [`Progress`] that damages the file
    /// between the two phases.
    const WRITE_THEN_READ: &str = r#"
[[test]]
id = "v"
name = "write-then-read"
file = { size = "1M" }

[[test.phase]]
name = "write"
pattern = [{ op = "write", size = "64K" }]
amount = { passes = 1 }
sync = { at_end = "fsync" }

[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "64K" }]
amount = { passes = 1 }
"#;

    struct Corrupter {
        dir: std::path::PathBuf,
        at: Option<u64>,
        /// The phase before which the damage is done.
        before: &'static str,
        /// Files expected in the test's directory then (None: any number; the first by name
        /// is damaged).
        files: Option<usize>,
    }

    impl crate::engine::Progress for Corrupter {
        fn phase_start(
            &self,
            _t: &crate::model::job::TestDef,
            _r: u32,
            phase: &str,
            _b: Option<u64>,
        ) {
            let Some(at) = self.at else { return };
            if phase != self.before {
                return;
            }
            fn files(d: &Path, out: &mut Vec<std::path::PathBuf>) {
                for e in std::fs::read_dir(d).unwrap().flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        files(&p, out)
                    } else {
                        out.push(p)
                    }
                }
            }
            let mut v = Vec::new();
            files(&self.dir, &mut v);
            v.sort();
            if let Some(n) = self.files {
                assert_eq!(v.len(), n, "{v:?}");
            }
            assert!(!v.is_empty());
            File::options().write(true).open(&v[0]).unwrap().write_all_at(b"oops", at).unwrap();
        }
    }

    fn run(at: Option<u64>, verify: bool) -> crate::model::result::TestResult {
        run_on(
            WRITE_THEN_READ,
            Corrupter { dir: Default::default(), at, before: "read", files: Some(1) },
            verify,
        )
    }

    fn run_on(text: &str, mut p: Corrupter, verify: bool) -> crate::model::result::TestResult {
        use crate::model::scale::Scale;
        use crate::workload::{self, ResolveCtx};
        let spec = workload::spec::parse(text, "v.toml").unwrap();
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        let suite = workload::validate::resolve(&spec, "v.toml", &ctx).unwrap();
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let target = crate::engine::Target::dir(dir.path());
        let opts = crate::engine::EngineOptions { verify, ..Default::default() };
        p.dir = dir.path().to_path_buf();
        let hooks = crate::engine::hooks::NoHooks;
        crate::engine::run_test(
            &suite.tests[0],
            &target,
            &[],
            dir.path(),
            &opts,
            0,
            0..1,
            &p,
            &hooks,
        )
    }

    #[test]
    fn a_corruption_between_the_write_and_read_phases_fails_the_test() {
        use crate::model::result::TestStatus;
        let clean = run(None, true);
        assert_eq!(clean.status, TestStatus::Ok, "{:?}", clean.status);
        assert!(
            clean
                .warnings
                .iter()
                .any(|w| w.to_string().contains("256 blocks of 4 KiB checked intact")),
            "{:?}",
            clean.warnings
        );
        let bad = run(Some(300_000), true);
        let TestStatus::Failed { reason } = &bad.status else {
            panic!("not failed: {:?}", bad.status)
        };
        // File, offset, expected and found.
        assert!(reason.contains("at offset 299008"), "{reason}");
        assert!(reason.contains("expected the block of file 0 offset 299008"), "{reason}");
        assert!(reason.contains("bits changed"), "{reason}");
        // Without --verify the same damage goes unnoticed.
        assert_eq!(run(Some(300_000), false).status, TestStatus::Ok);
        // Making the verified data is timed apart from the writes: in the write phase's
        // `verify_nanos`, not in a phase that made none.
        let phases = &clean.reps[0].phases;
        assert!(phases[0].verify_nanos > 0, "{:?}", phases[0].verify_nanos);
        assert_eq!(phases[1].verify_nanos, 0);
        assert_eq!(run(None, false).reps[0].phases[0].verify_nanos, 0);
    }

    /// A fileset test: files of uneven sizes, written in pieces that do not fall on 4 KiB
    /// blocks, appended to, renamed and replaced, then read back whole.
    const FILESET_WRITE_THEN_READ: &str = r#"
[[test]]
id = "fv"
name = "fileset-write-then-read"
fileset = { count = 64, flat = true, size = { uniform = ["5000", "20000"] }, write_size = "3000" }

[[test.phase]]
name = "create"
pattern = [{ op = "create", pick = "next" }]
amount = { ops = 40 }

[[test.phase]]
name = "churn"
pattern = [
  { op = "append", pick = "random", size = { uniform = ["1", "5000"] } },
  { op = "rename", pick = "random" },
  { op = "replace", pick = "random" },
]
amount = { ops = 60 }

[[test.phase]]
name = "read"
pattern = [{ op = "readwhole", pick = "shuffle" }]
amount = { passes = 1 }
"#;

    fn run_fileset(at: Option<u64>, verify: bool) -> crate::model::result::TestResult {
        let p = Corrupter { dir: Default::default(), at, before: "read", files: None };
        run_on(FILESET_WRITE_THEN_READ, p, verify)
    }

    #[test]
    fn a_corruption_between_the_write_and_read_phases_fails_a_fileset_test() {
        use crate::model::job::OpKind;
        use crate::model::result::{TestStatus, Warning};
        let clean = run_fileset(None, true);
        assert_eq!(clean.status, TestStatus::Ok, "{:?}", clean.status);
        let phases = &clean.reps[0].phases;
        let read = phases.iter().find(|p| p.name == "read").unwrap();
        // Every byte read was checked, and checking took time apart from the reads'.
        assert!(read.bytes_read > 40 * 5000, "{}", read.bytes_read);
        assert_eq!(read.verified_bytes, read.bytes_read);
        assert!(read.verify_nanos > 0);
        let churn = phases.iter().find(|p| p.name == "churn").unwrap();
        for k in [OpKind::Append, OpKind::Rename, OpKind::Replace] {
            let n = churn.latency.iter().find(|l| l.op == k).map_or(0, |l| l.count);
            assert!(n > 0, "the churn phase did {k:?}: {:?}", churn.latency);
        }
        let create = phases.iter().find(|p| p.name == "create").unwrap();
        assert!(create.verify_nanos > 0, "making verified data is timed in the writing phase");
        assert!(
            clean.warnings.iter().any(|w| matches!(w, Warning::VerifiedOnRead { bytes_checked, .. } if *bytes_checked == read.bytes_read)),
            "{:?}",
            clean.warnings
        );
        // 4 bytes at offset 5000 of one file: its second 4 KiB block (whole in every file).
        let bad = run_fileset(Some(5000), true);
        let TestStatus::Failed { reason } = &bad.status else {
            panic!("not failed: {:?}", bad.status)
        };
        // File, offset, expected and found.
        assert!(reason.contains("phase `read`: verify: "), "{reason}");
        assert!(reason.contains(".set/"), "names the file: {reason}");
        assert!(reason.contains("at offset 4096: expected the block of file "), "{reason}");
        assert!(reason.contains(" offset 4096 generation 1"), "{reason}");
        assert!(reason.contains("bits changed"), "{reason}");
        // Without --verify the same damage goes unnoticed, and nothing is timed as verify.
        let plain = run_fileset(Some(5000), false);
        assert_eq!(plain.status, TestStatus::Ok, "{:?}", plain.status);
        assert!(plain.reps[0].phases.iter().all(|p| p.verify_nanos == 0 && p.verified_bytes == 0));
    }
}
