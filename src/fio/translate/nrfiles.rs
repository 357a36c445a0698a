//! fio's `nrfiles` > 1 for a data job: each thread (each `numjobs` clone) works on files of
//! its own, `size/nrfiles` bytes each (or `filesize`), and each I/O goes to the file
//! `file_service_type` picks (fio 3.33's `get_next_file`: `roundrobin`, the default, moves on
//! after each I/O or `:N`; `sequential` stays on a file until its bytes are done; `random`
//! draws one uniformly). It becomes the workload's `file.per_thread` and `file.service`.
//!
//! Why a module: the count, the sizes and the refusals of what fsbench does not do with
//! several files (a named file, regions, the verify check, a fill, a skewed or partly
//! sequential offset law, fio's file-picking laws other than uniform) are one concern, each
//! refused with its line and reason. fio names the files by `filename_format` (default
//! `jobname.jobnum.filenum`) in `directory`; fsbench names its own the same way in its work
//! directory ([`super::name_format`]).

use super::{Engine, Job};
use crate::fio::FioError;

/// `nrfiles` (1 if absent): 0 is refused as fio refuses it.
pub(super) fn count(job: &Job) -> Result<u32, FioError> {
    match job.int("nrfiles")? {
        None => Ok(1),
        Some((0, line)) => Err(job.err("nrfiles", line, "0 files: give at least 1")),
        Some((n, line)) if n > 4096 => Err(job.err(
            "nrfiles",
            line,
            format!("{n}: fsbench opens at most 4096 files per thread"),
        )),
        Some((n, _)) => Ok(n as u32),
    }
}

/// `size` and `filesize` for `n` files, as fio's `setup_files` takes them: each file is
/// `filesize` bytes, else `size / n`; the job moves `size`, at most the files' sum, and the
/// files' sum without `size`. One file: as given.
pub(super) fn sizes(
    job: &Job,
    n: u32,
    size: Option<u64>,
    filesize: Option<u64>,
) -> Result<(Option<u64>, Option<u64>), FioError> {
    if n == 1 {
        return Ok((size, filesize));
    }
    let n64 = u64::from(n);
    match (size, filesize) {
        (s, Some(f)) => {
            let all = f.checked_mul(n64).ok_or_else(|| {
                job.err("filesize", job.line("filesize"), format!("{n} files of {f} bytes is too many bytes"))
            })?;
            Ok((Some(s.map_or(all, |s| s.min(all))), Some(f)))
        }
        (Some(s), None) if s / n64 == 0 => Err(job.err(
            "size",
            job.line("size"),
            format!("{s} bytes over nrfiles={n}: each file would be empty; give a larger size"),
        )),
        (Some(s), None) => Ok((Some(s), Some(s / n64))),
        (None, None) => Err(job.err(
            "nrfiles",
            job.line("nrfiles"),
            format!("{n} files without size or filesize: give size (split over the files) or filesize (each file's)"),
        )),
    }
}

/// The options a job with `n` > 1 files must not have, with why; `openfiles` (at least `n`:
/// fsbench opens them all for the phase) and `file_service_type` (uniform laws only). The
/// workload's `file.service`, `None` for fio's default (round robin, one I/O per file).
pub(super) fn check(job: &Job, n: u32, engine: &Engine) -> Result<Option<String>, FioError> {
    const WHY: &str = "fsbench runs nrfiles > 1 on files of its own, each thread its set, each file worked on whole";
    for (option, what) in [
        ("filename", "the files it names (fsbench names its own)"),
        ("offset", "an offset (fsbench's files are worked on whole)"),
        ("offset_increment", "an offset_increment (fsbench's files are worked on whole)"),
        ("fill_device", "fill_device (one file fills the filesystem)"),
        ("fill_fs", "fill_fs (one file fills the filesystem)"),
        ("percentage_random", "percentage_random (its sequential runs are kept for one file)"),
        ("random_distribution", "random_distribution (fio keeps each file's law; fsbench one)"),
        ("unlink_each_loop", "unlink_each_loop (fsbench remakes one file)"),
        ("verify", "verify (fsbench's check reads one file per thread)"),
        ("verify_only", "verify_only (fsbench's check reads one file per thread)"),
    ] {
        if job.get(option).is_some() && !defaulted(job, option) {
            return Err(job.err(
                option,
                job.line(option),
                format!("{what} with nrfiles={n}: {WHY}; remove {option} or use nrfiles=1"),
            ));
        }
    }
    if engine.name == "mmap" {
        return Err(job.err("ioengine", job.line("ioengine"), format!("mmap with nrfiles={n}: fsbench's mmap engine maps one file at a time (it would map anew at each switch); use psync, io_uring or libaio")));
    }
    if engine.registerfiles == Some(true) {
        return Err(job.err("registerfiles", job.line("registerfiles"), format!("with nrfiles={n}: fsbench's io_uring registers one file at a time (it would register anew at each switch); remove registerfiles")));
    }
    if let Some((k, line)) = job.int("openfiles")? {
        if k < u64::from(n) {
            return Err(job.err("openfiles", line, format!("{k} with nrfiles={n}: fsbench opens each thread's {n} files for the whole phase (fio's default, openfiles = nrfiles); give openfiles={n} or more, or leave it out")));
        }
    }
    let Some((v, line)) = job.str("file_service_type")? else { return Ok(None) };
    let kind = v.split(':').next().unwrap_or("").trim();
    match kind {
        "roundrobin" | "sequential" | "random" => {}
        "zipf" | "pareto" | "normal" | "gauss" => {
            return Err(job.err("file_service_type", line, format!("`{v}`: fsbench picks files in order or uniformly (roundrobin, sequential, random); fio's skewed laws over files are not implemented")));
        }
        _ => {
            return Err(job.err("file_service_type", line, format!("`{v}`: fio takes random, roundrobin, sequential, zipf, pareto, normal, gauss, each with an optional :N")));
        }
    }
    // fio 3.33 reads `sequential:N` and then ignores N (a file is kept until it is done).
    let text = if kind == "sequential" { "sequential" } else { v.trim() };
    crate::model::job::FileService::parse(text)
        .map_err(|e| job.err("file_service_type", line, format!("`{v}`: {e}")))?;
    Ok(Some(text.to_string()))
}

/// Whether `option` is set to what changes nothing here (`verify=0`, `fill_device=0`, `percentage_random=100`, `random_distribution=random`,
/// `offset=0`, `unlink_each_loop=0`, `verify_only=0`).
fn defaulted(job: &Job, option: &str) -> bool {
    let Some(v) = job.get(option) else { return true };
    // A flag written alone (`fill_device`) is on.
    let t = v.value.as_deref().unwrap_or("1").trim();
    match option {
        "verify" => t == "0" || t == "none",
        "random_distribution" => t == "random",
        "percentage_random" => t.split(',').all(|p| p.trim() == "100"),
        "filename" => false,
        _ => t == "0",
    }
}

#[cfg(test)]
mod tests {
    use crate::fio::translate::tests::one;
    use crate::fio::translate::translate;
    use crate::workload::size::SizeExpr;
    use crate::workload::spec::TestSpec;

    fn err(text: &str) -> String {
        match translate(text, "t.fio", "t", &|_| None) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    /// The file's size, files per thread, service and the bytes the timed phase moves.
    fn shape(t: &TestSpec) -> (u64, Option<u32>, Option<String>, Option<SizeExpr>) {
        let f = t.file.as_ref().expect("a data test");
        let SizeExpr::Bytes(size) = f.size else { panic!("{:?}", f.size) };
        let moved = t.phases.last().and_then(|p| p.amount.bytes);
        (size, f.per_thread, f.service.clone(), moved)
    }

    /// `size` is split over the files (each size/nrfiles), `filesize` fixes each file and
    /// caps the bytes moved at the files' sum (their sum without size), as fio's setup_files;
    /// the files are each thread's own; the service is fio's word (default: none written).
    #[test]
    fn nrfiles_splits_size_over_each_threads_own_files() {
        let (t, _) = one("[j]\nrw=read\nbs=4k\nsize=64k\nnrfiles=4\nnumjobs=2\n");
        assert_eq!(shape(&t), (16384, Some(4), None, Some(SizeExpr::Bytes(65536))));
        assert_eq!((t.threads, t.file.as_ref().unwrap().shared), (2, false));
        let (t, _) = one("[j]\nrw=read\nfilesize=8k\nnrfiles=3\n");
        assert_eq!(shape(&t), (8192, Some(3), None, Some(SizeExpr::Bytes(24576))));
        let (t, _) = one("[j]\nrw=read\nfilesize=8k\nsize=1m\nnrfiles=3\n");
        assert_eq!(shape(&t).3, Some(SizeExpr::Bytes(24576)), "size capped at the files' sum");
        let (t, _) = one("[j]\nrw=read\nfilesize=8k\nsize=10k\nnrfiles=3\n");
        assert_eq!(shape(&t).3, Some(SizeExpr::Bytes(10240)), "size below the sum: moved");
        for (fst, want) in [
            ("sequential", "sequential"),
            ("sequential:3", "sequential"),
            ("roundrobin:2", "roundrobin:2"),
            ("random", "random"),
            ("random:4", "random:4"),
        ] {
            let (t, _) =
                one(&format!("[j]\nrw=read\nsize=64k\nnrfiles=4\nfile_service_type={fst}\n"));
            assert_eq!(shape(&t).2.as_deref(), Some(want), "{fst}");
        }
        let (t, _) = one("[j]\nrw=read\nsize=64k\nnrfiles=4\nopenfiles=4\n");
        assert_eq!(shape(&t).1, Some(4));
        // One file: as before (no per_thread key written).
        let (t, _) = one("[j]\nrw=read\nsize=64k\nnrfiles=1\n");
        assert_eq!(shape(&t).1, None);
    }

    /// What fsbench does not do with several files is refused at the option's line, with why.
    #[test]
    fn nrfiles_refuses_what_it_does_not_do_at_the_options_line() {
        for (text, at, why) in [
            ("[j]\nsize=64k\nnrfiles=0\n", "t.fio:3: `nrfiles`", "at least 1"),
            ("[j]\nnrfiles=4\n", "t.fio:2: `nrfiles`", "without size or filesize"),
            ("[j]\nsize=64k\nnrfiles=4\nopenfiles=2\n", "t.fio:4: `openfiles`", "openfiles=4"),
            (
                "[j]\nsize=64k\nnrfiles=4\nfile_service_type=zipf:1.2\n",
                "t.fio:4: `file_service_type`",
                "skewed laws",
            ),
            (
                "[j]\nsize=64k\nnrfiles=4\nfile_service_type=best\n",
                "t.fio:4: `file_service_type`",
                "fio takes",
            ),
            (
                "[j]\nsize=64k\nnrfiles=4\nfile_service_type=random:0\n",
                "t.fio:4: `file_service_type`",
                "at least 1",
            ),
            ("[j]\nsize=64k\nnrfiles=4\nfilename=f.dat\n", "t.fio:4: `filename`", "names its own"),
            ("[j]\nsize=64k\nnrfiles=4\noffset=4k\n", "t.fio:4: `offset`", "worked on whole"),
            (
                "[j]\nrw=randread\nsize=64k\nnrfiles=4\npercentage_random=50\n",
                "t.fio:5: `percentage_random`",
                "one file",
            ),
            (
                "[j]\nrw=randread\nsize=64k\nnrfiles=4\nrandom_distribution=zipf:1.2\n",
                "t.fio:5: `random_distribution`",
                "each file's law",
            ),
            (
                "[j]\nrw=write\nsize=64k\nnrfiles=4\nverify=crc32c\n",
                "t.fio:5: `verify`",
                "one file per thread",
            ),
            (
                "[j]\nrw=write\nsize=64k\nnrfiles=4\nloops=2\nunlink_each_loop=1\n",
                "t.fio:6: `unlink_each_loop`",
                "remakes one file",
            ),
            (
                "[j]\nsize=64k\nnrfiles=4\nioengine=mmap\n",
                "t.fio:4: `ioengine`",
                "one file at a time",
            ),
            (
                "[j]\nsize=64k\nnrfiles=4\nioengine=io_uring\nregisterfiles=1\n",
                "t.fio:5: `registerfiles`",
                "register",
            ),
            (
                "[j]\nsize=64k\nnrfiles=4\nfilename_format=f.$jobnum\n",
                "t.fio:4: `filename_format`",
                "add $filenum",
            ),
            ("[a]\nsize=64k\nnrfiles=4\n[b]\nsize=64k\n", "t.fio:3: `nrfiles`", "stonewall"),
            ("[a]\nsize=64k\n[b]\nsize=64k\nnrfiles=4\n", "t.fio:5: `nrfiles`", "stonewall"),
        ] {
            let e = err(text);
            assert!(e.contains(at) && e.contains(why), "{text}: {e}");
        }
    }

    /// The translated test resolves: several files per thread in the workload, with the
    /// service, and a time-based job drops every file's pages per pass (invalidate=1).
    #[test]
    fn nrfiles_jobs_resolve_to_several_files_per_thread() {
        let t = crate::fio::translate::translate(
            "[j]\nrw=randread\nbs=4k\nsize=64k\nnrfiles=4\nnumjobs=2\nfile_service_type=random:2\ntime_based\nruntime=1\n",
            "t.fio",
            "t",
            &|_| None,
        )
        .unwrap();
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let s = crate::workload::validate::resolve(&t.spec, "t.fio", &ctx).unwrap();
        let f = &s.tests[0].files;
        assert_eq!((f.count, f.shared, f.size_bytes()), (8, false, 16384));
        assert_eq!(
            f.per_thread,
            Some(crate::model::job::PerThread {
                files: 4,
                service: crate::model::job::FileService::Random(2)
            })
        );
        assert_eq!(s.tests[0].footprint_bytes(), 8 * 16384);
        assert!(s.tests[0].phases.last().unwrap().invalidate_each_pass);
    }
}
