//! fio's `verify` family onto fsbench's own data check (the test's `verify`, as `--verify`):
//! a job that verifies writes blocks fsbench can check (each 4 KiB carries its file, offset,
//! seed and a CRC-32) and, after the job, reads its file back and checks every block; a bad
//! block fails the job, naming the file and offset (fio's `error` in `fsbench fio`'s JSON).
//!
//! Why a module of its own: the options are many and mostly say *how* fio checks (the
//! algorithm, the header's place, the interval); fsbench has one check, so this module decides,
//! option by option, whether the difference is one a user can see (a DIFFERENCES note, refused
//! by `--fio-strict`), only a remark, or a refusal.
//!
//! fio semantics followed (fio 3.33, checked by running it): `verify_pattern` without `verify`
//! turns verification on (`verify=pattern`); fio's verify reads are counted as the job's
//! reads; `do_verify=0` writes the verify data but never reads it back; `verify=1` is not a
//! fio value (refused, as fio does).

use super::{Dir, Job};
use crate::fio::options;
use crate::fio::FioError;
use std::path::Path;

/// fio's `verify` values that turn the check on (fio 3.33's list, `null` aside).
const ALGORITHMS: &[&str] = &[
    "md5",
    "crc64",
    "crc32",
    "crc32c",
    "crc32c-intel",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "pattern",
];

/// Options of the family that only matter when the job verifies.
const FAMILY: &[&str] = &[
    "do_verify",
    "verify_only",
    "verify_fatal",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_interval",
    "verify_offset",
    "verify_dump",
    "verify_async",
];

/// What a job's verify options ask of fsbench.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Check {
    /// The test's own check (`verify = true`).
    pub on: bool,
    /// `verify_only`: the job reads its (named, existing) file in its order and checks it;
    /// it writes nothing.
    pub only: bool,
}

/// `verify_only`'s file must be there at its size when the job file is read: fsbench lays out
/// an absent or short file before a read job (with blocks that pass its check), which would
/// check nothing of what an earlier run wrote.
pub(super) fn only_file(job: &Job, named: Option<&Path>, bytes: u64) -> Result<(), FioError> {
    let Some(path) = named else { return Ok(()) };
    let len = std::fs::symlink_metadata(path).map(|m| m.len());
    match len {
        Ok(n) if n >= bytes => Ok(()),
        found => Err(job.err(
            "verify_only",
            job.line("verify_only"),
            format!(
                "checks what an earlier job or run wrote, and {} {}: run the job that writes it first, in an earlier fsbench run (fsbench lays out no file for a check)",
                path.display(),
                match found {
                    Ok(n) => format!("has {n} bytes of the job's {bytes}"),
                    Err(_) => "does not exist".to_string(),
                }
            ),
        )),
    }
}

/// Read `verify` and its family for one job. `named`: the job's file is one it names by a
/// path (kept between jobs and runs, so a later job can check what an earlier one wrote).
pub(super) fn verify(job: &Job, named: bool, notes: &mut Vec<String>) -> Result<Check, FioError> {
    let alg = match job.str("verify")? {
        None => None,
        Some(("0" | "none", _)) => None,
        Some(("null", _)) => {
            notes.push(
                "verify=null: fio only pretends to verify, and fsbench does no check (as in fio)"
                    .into(),
            );
            None
        }
        Some((v, _)) if ALGORITHMS.contains(&v) => Some(v.to_string()),
        Some((v, line)) => {
            return Err(job.err(
                "verify",
                line,
                format!("`{v}` is not one of fio's values: 0, {}, null", ALGORITHMS.join(", ")),
            ))
        }
    };
    // fio: a verify_pattern without verify is verify=pattern.
    let pattern = job.str("verify_pattern")?;
    if let Some(("", line)) = pattern {
        return Err(job.err("verify_pattern", line, "needs a pattern (0x... or \"text\")"));
    }
    let alg = alg.or_else(|| {
        (pattern.is_some() && job.str("verify").ok().flatten().is_none())
            .then(|| "pattern".to_string())
    });
    // Well-formed whether or not they matter.
    let do_verify = job.bool("do_verify")?.unwrap_or(true);
    let only = job.bool("verify_only")?.unwrap_or(false);
    job.bool("verify_fatal")?;
    job.bool("verify_dump")?;
    job.int("verify_async")?;
    let backlog = job.int("verify_backlog")?.filter(|(n, _)| *n > 0);
    job.int("verify_backlog_batch")?;
    let interval = job.size("verify_interval")?;
    let offset = job.size("verify_offset")?.filter(|(n, _)| *n > 0);
    let Some(alg) = alg else {
        let given: Vec<&str> = FAMILY.iter().copied().filter(|k| job.get(k).is_some()).collect();
        if !given.is_empty() {
            notes.push(format!("{} without verify: no effect (as in fio)", given.join(", ")));
        }
        return Ok(Check::default());
    };
    if let Some((n, line)) = interval {
        if n == 0 || n % 512 != 0 {
            return Err(job.err(
                "verify_interval",
                line,
                format!("{n}: fio's interval is a multiple of 512 bytes"),
            ));
        }
    }
    if let Some((n, line)) = offset {
        if interval.is_some_and(|(i, _)| n >= i) {
            return Err(job.err(
                "verify_offset",
                line,
                format!("{n}: past the end of verify_interval"),
            ));
        }
    }
    if only {
        if !named {
            return Err(job.err(
                "verify_only",
                job.line("verify_only"),
                "checks what an earlier job or run left in the file; fsbench's own files (a plain `filename`, or none) are new for each test: name the file by a path (filename=/mnt/x/data) written by a job with the same verify",
            ));
        }
        notes.push(format!("verify_only with verify={alg}: fsbench reads the file in the job's order (writing nothing) and checks every 4 KiB block it holds against fsbench's own check; the file must be at its size when the job file is read (written by an earlier run)"));
    } else if !do_verify {
        // fio writes its headers and never reads them back here: nothing of it to check.
        notes.push(format!("verify={alg} with do_verify=0: the job writes fsbench's ordinary data and reads nothing back (fio would write its verify headers for a later job; fsbench's check of a later job covers only blocks it wrote with its own check)"));
        return Ok(Check::default());
    }
    // `rw`'s own problems are reported by its reader.
    let job_writes = super::direction(job).is_ok_and(Dir::writes) && !only;
    notes.push(format!(
        "verify={alg}: {}{}",
        if job_writes {
            "the job writes blocks fsbench can check and, after it, reads its file back and checks every block; "
        } else if only {
            ""
        } else {
            "fsbench lays out the job's file itself with blocks it can check (untimed), and after the job reads it back and checks every block; "
        },
        options::difference("verify-own-check")
    ));
    if let Some((n, _)) = backlog {
        notes.push(format!("verify_backlog={n}: {}", options::difference("verify-after")));
    }
    if pattern.is_some() || interval.is_some() || offset.is_some() {
        let set: Vec<&str> = ["verify_pattern", "verify_interval", "verify_offset"]
            .into_iter()
            .filter(|k| job.get(k).is_some())
            .collect();
        notes.push(format!("{}: fio's layout of its verify data; fsbench writes its own blocks (4 KiB, its own header), so these change nothing it writes or checks (the file's content differs from fio's: see verify)", set.join(", ")));
    }
    let ignored: Vec<&str> =
        ["verify_dump", "verify_async", "verify_fatal", "verify_backlog_batch"]
            .into_iter()
            .filter(|k| job.get(k).is_some())
            .collect();
    if !ignored.is_empty() {
        notes.push(format!("{}: no change to what is checked (fsbench stops the job at the end of its check, names the first bad block and counts the others; it dumps no blocks and checks in the job's thread)", ignored.join(", ")));
    }
    Ok(Check { on: true, only })
}

#[cfg(test)]
mod tests {
    use crate::fio::translate::{translate, Translation};

    fn tr(text: &str) -> Result<Translation, String> {
        translate(text, "t.fio", "s", &|_| None).map_err(|e| e.to_string())
    }

    #[test]
    fn every_fio_algorithm_turns_the_check_on_and_says_the_difference() {
        for alg in super::ALGORITHMS {
            let t = tr(&format!("[w]\nrw=write\nsize=1m\nverify={alg}\n")).unwrap();
            let test = &t.spec.tests[0];
            assert_eq!(test.verify, Some(true), "{alg}");
            assert!(
                t.notes.iter().any(|n| n.contains(&format!("verify={alg}: the job writes blocks"))
                    && n.ends_with("[differs from fio: verify-own-check]")),
                "{alg}: {:?}",
                t.notes
            );
            let e = t.check_strict().unwrap_err().to_string();
            assert!(e.contains("verify-own-check"), "{e}");
        }
        for off in ["0", "none", "null"] {
            let t = tr(&format!("[w]\nsize=1m\nverify={off}\n")).unwrap();
            assert_eq!(t.spec.tests[0].verify, None, "{off}");
        }
        let e = tr("[w]\nsize=1m\nverify=1\n").unwrap_err();
        assert!(e.starts_with("t.fio:3: `verify`") && e.contains("crc32c-intel"), "{e}");
    }

    #[test]
    fn a_read_job_checks_the_file_fsbench_lays_out_and_a_group_member_cannot_verify() {
        let t = tr("[r]\nrw=randread\nsize=1m\nverify=sha256\n").unwrap();
        let test = &t.spec.tests[0];
        assert_eq!(test.verify, Some(true));
        assert_eq!(test.file.as_ref().map(|f| f.prefill), Some(true));
        assert!(t.notes.iter().any(|n| n.contains("fsbench lays out the job's file itself")));
        // Jobs that run at the same time: only the group's first job's file is checked.
        let e = tr("[a]\nsize=1m\n[b]\nsize=1m\nrw=write\nverify=md5\n").unwrap_err();
        assert!(e.contains("t.fio:6: `verify`") && e.contains("add `stonewall`"), "{e}");
        let t = tr("[a]\nsize=1m\n[b]\nstonewall\nsize=1m\nrw=write\nverify=md5\n").unwrap();
        assert_eq!(t.spec.tests[1].verify, Some(true));
    }

    #[test]
    fn do_verify_0_and_the_family_without_verify_check_nothing() {
        let t = tr("[w]\nrw=write\nsize=1m\nverify=crc32c\ndo_verify=0\n").unwrap();
        assert_eq!(t.spec.tests[0].verify, None);
        assert!(
            t.notes.iter().any(|n| n.contains(
                "do_verify=0: the job writes fsbench's ordinary data and reads nothing back"
            )),
            "{:?}",
            t.notes
        );
        assert!(!t.notes.iter().any(|n| n.contains("verify-own-check")), "{:?}", t.notes);
        let t = tr("[w]\nsize=1m\nverify_backlog=4\ndo_verify=1\n").unwrap();
        assert_eq!(t.spec.tests[0].verify, None);
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("do_verify, verify_backlog without verify: no effect")),
            "{:?}",
            t.notes
        );
    }

    #[test]
    fn bad_values_of_the_family_are_refused_with_their_line() {
        for (text, at, why) in [
            ("verify=md5\nverify_interval=1000\n", "t.fio:4: `verify_interval`", "multiple of 512"),
            (
                "verify=md5\nverify_interval=4k\nverify_offset=8k\n",
                "t.fio:5: `verify_offset`",
                "past the end",
            ),
            ("verify=md5\nverify_fatal=maybe\n", "t.fio:4: `verify_fatal`", "not 0 or 1"),
            ("verify=md5\nverify_only=1\n", "t.fio:4: `verify_only`", "name the file by a path"),
        ] {
            let e = tr(&format!("[w]\nsize=1m\n{text}")).unwrap_err();
            assert!(e.starts_with(at) && e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn verify_only_reads_a_named_file_in_the_jobs_order_and_needs_it_written() {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = d.path().join("data");
        let job = format!(
            "[c]\nrw=randwrite\nbs=8k\nsize=64k\nverify=md5\nverify_only=1\nfilename={}\n",
            p.display()
        );
        let e = tr(&job).unwrap_err();
        assert!(e.contains("does not exist") && e.contains("t.fio:6: `verify_only`"), "{e}");
        std::fs::write(&p, vec![1u8; 32 << 10]).unwrap();
        let e = tr(&job).unwrap_err();
        assert!(e.contains("has 32768 bytes of the job's 65536"), "{e}");
        std::fs::write(&p, vec![1u8; 64 << 10]).unwrap();
        let t = tr(&job).unwrap();
        let test = &t.spec.tests[0];
        assert_eq!(test.verify, Some(true));
        let phase = &test.phases[0];
        assert_eq!(phase.name, "randread", "the job's order, as reads");
        assert!(!phase.open.iter().any(|o| o == "create"), "{:?}", phase.open);
        assert_eq!(phase.pattern[0].op.as_deref(), Some("read"));
        assert_eq!(phase.pattern[0].offset.as_deref(), Some("random"));
    }
}
