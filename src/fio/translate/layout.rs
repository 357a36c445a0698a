//! How fio lays out a job's file and how far a write job goes: `create_serialize` and
//! `fill_device`. A module of its own because both are about the file outside the job's own
//! I/O: when it is laid out (before the run, one file after another, or when the job starts)
//! and whether its end is the job's size or the filesystem's.
//!
//! fio 3.33, checked on a 16 MiB tmpfs with bs=64k:
//! - `fill_device=1` with `rw=write` writes from offset 0 until a write fails with ENOSPC
//!   (`io_u error ... No space left on device`), and the job ends without an error
//!   (`error: 0`, exit 0) having written the filesystem's free space (16 MiB); no fallocate,
//!   and `size` has no effect (fio sets it to "something really large");
//! - a later job without `size` reading that file: with `create_serialize=1` (the default)
//!   fio lays out every job's file before any job runs, when the filled file does not exist,
//!   and refuses the job ("you need to specify size="); with `create_serialize=0` the job's
//!   file is set up when the job starts, and it reads the 16 MiB the fill left
//!   (surface-scan.fio's verify-phase);
//! - `create_serialize=0` otherwise changes only when files are laid out: each clone lays out
//!   its own when it starts, at the same time as the others.

use super::{Dir, Files, FioError, Job};
use crate::fio::options;
use crate::model::job::Preallocate;
use crate::workload::spec::AmountSpec;

/// `create_serialize` (default 1): fsbench lays out a job's files one after another before
/// the test, fio's default. With 0, fio's clones lay out their own files at the same time,
/// which differs only when the job has several files to lay out (numjobs > 1 without a shared
/// `filename`, a job that reads: fsbench prefills them).
pub(super) fn create_serialize(
    job: &Job,
    rw: Dir,
    files: &Files,
    notes: &mut Vec<String>,
) -> Result<bool, FioError> {
    let serial = job.bool("create_serialize")?.unwrap_or(true);
    if !serial {
        if files.threads > 1 && !files.shared && rw.reads() {
            notes.push(options::difference("layout-serial"));
        } else {
            notes.push("create_serialize=0: fio lays out this job's one file when the job starts; fsbench lays it out before the test, the same file of the same size (without size, after a fill_device job on a plain filename: the size the fill left, taken when the test starts, see fill_device)".into());
        }
    }
    Ok(serial)
}

/// fio's `fallocate` (default `native`): how fio lays out a write-only job's file before the
/// job (fio's `extend_file`: the file is removed, created and, by default, given its blocks
/// with `fallocate(fd, 0, 0, size)`, then written into). A job that reads gets a prefilled
/// file instead (fio writes it out), and a `fill_device` job none (fio skips it too: the caller
/// drops it). Returns the workload's `file.preallocate`. `named`: the job's file at a path,
/// with the job's `size`, for the one case fio and fsbench lay out differently.
pub(super) fn preallocate(
    job: &Job,
    rw: Dir,
    named: Option<(&std::path::Path, u64)>,
    notes: &mut Vec<String>,
) -> Result<Option<Preallocate>, FioError> {
    let how = match job.str("fallocate")? {
        None | Some(("native", _)) => Some(Preallocate::Fallocate),
        Some(("posix" | "1", _)) => {
            if !rw.reads() {
                notes.push("fallocate=posix: fsbench calls fallocate(fd, 0, 0, size), what glibc's posix_fallocate does on a filesystem that has it; on one without (EOPNOTSUPP) glibc writes a byte into every block, fsbench leaves the file as it is, as fio's native mode does".into());
            }
            Some(Preallocate::Fallocate)
        }
        Some(("keep", _)) => Some(Preallocate::KeepSize),
        Some(("truncate", _)) => Some(Preallocate::Truncate),
        Some(("none" | "0", _)) => None,
        Some((v, line)) => {
            return Err(job.err(
                "fallocate",
                line,
                format!("`{v}`: fio takes none (0), native, posix (1), keep or truncate"),
            ))
        }
    };
    // fio's create_on_open: no lay-out at all; the job's open creates the file (O_CREAT, no
    // O_TRUNC) and its writes fill it. A job that reads would read an empty file: fio 3.33
    // fails it.
    if job.bool("create_on_open")? == Some(true) {
        if rw.reads() {
            return Err(job.err("create_on_open", job.line("create_on_open"), "with a job that reads: the file is not laid out, so it is empty when the job reads it; fio 3.33 fails such a job (exit 1); remove create_on_open"));
        }
        return Ok(None);
    }
    if rw.reads() {
        return Ok(None);
    }
    if let Some((path, size)) = named {
        if std::fs::metadata(path).is_ok_and(|m| m.len() < size) {
            notes.push(options::difference("write-file-shorter"));
        }
    }
    Ok(how)
}

/// Whether the job asks for `fill_device=1` (checked by [`fill_device`]) without a `size`:
/// fio then sets the size "to something really large" and writes until ENOSPC. With a size,
/// fio writes that size (stopping early only at ENOSPC).
pub(super) fn fills(job: &Job) -> bool {
    matches!(job.bool("fill_device"), Ok(Some(true))) && job.get("size").is_none()
}

/// What `fill_device` makes of the job.
#[derive(Debug)]
pub(super) enum Fill {
    /// No `fill_device`.
    No,
    /// Until the filesystem is full: the timed phase's amount.
    UntilFull(AmountSpec),
    /// With `size`: a write of that size, its file not laid out (fio skips its fallocate).
    Capped,
}

/// `fill_device=1`: the timed phase writes sequentially from the start of the job's file until
/// the filesystem is full (`amount = { fill = 1 }`: ENOSPC ends it normally, and the bytes
/// written are the job's). fsbench does it only on a testbed it made (`--fs`, `compare`, or a
/// directory on a testbed kept by `fsbench testbed up`): the run refuses it on any other
/// directory before any I/O. Refused where fsbench cannot give fio's
/// meaning or would fill a filesystem that is not a testbed. `verifies`: the job is checked
/// after it ends (`verify` with `do_verify=1`). With `size`, fio writes that size: a plain
/// write of it ([`Fill::Capped`], a stated difference at ENOSPC).
pub(super) fn fill_device(
    job: &Job,
    rw: Dir,
    files: &Files,
    verifies: bool,
    notes: &mut Vec<String>,
) -> Result<Fill, FioError> {
    if !job.bool("fill_device")?.unwrap_or(false) {
        return Ok(Fill::No);
    }
    if !fills(job) && rw == Dir::Write {
        // fio (init.c) makes the size "really large" only when the job gives none.
        notes.push(options::difference("fill-capped"));
        return Ok(Fill::Capped);
    }
    let line = job.line("fill_device");
    let refuse = |why: String| Err(job.err("fill_device", line, why));
    if rw != Dir::Write {
        return refuse(format!("with rw={}: fsbench fills a file with sequential writes (rw=write), the only use fio's HOWTO gives fill_device", rw.phase_name()));
    }
    if job.str("rw")?.is_some_and(|(v, _)| v.contains(':')) {
        return refuse(
            "with rw=write:N: fsbench fills a file with writes that follow on (no skip)".into(),
        );
    }
    if let Some(p) = &files.named {
        return refuse(format!("with filename={}: a file named by a path is on the machine's own filesystem, and fsbench fills only a testbed it made; use a plain filename (fsbench's own file, on the testbed of --fs, or with --directory on the mount point of a testbed kept by `fsbench testbed up`)", p.display()));
    }
    if files.shared && files.threads > 1 {
        return refuse("with numjobs > 1 on one shared filename: fsbench's threads would write the same blocks of one file; give each thread its own file (leave filename out)".into());
    }
    for other in ["runtime", "time_based", "ramp_time", "io_size", "number_ios", "loops"] {
        if job.get(other).is_some() {
            return refuse(format!("with {other}: fsbench's fill ends only when the filesystem is full (ENOSPC); leave {other} out"));
        }
    }
    if verifies {
        return refuse("with verify and do_verify=1: fsbench checks a file of a known size after the job, and a fill's size is known only when it ends; set do_verify=0 (a later read job may verify)".into());
    }
    if job.get("filesize").is_some() {
        notes.push("filesize has no effect with fill_device without size (as in fio: the job writes until the filesystem is full)".into());
    }
    notes.push("fill_device=1: writes until the filesystem is full (ENOSPC ends the job without an error; the bytes written are the job's), as fio; fsbench does this only on a testbed it made (--fs, compare, or --directory/--dir on the mount point of a testbed kept by `fsbench testbed up`): run on any other directory it refuses before any I/O".into());
    Ok(Fill::UntilFull(AmountSpec { fill: Some(1.0), ..AmountSpec::default() }))
}

#[cfg(test)]
mod tests {
    use super::super::{translate, FioError, Translation};
    use crate::workload::spec::TestSpec;

    fn tr(text: &str) -> Result<Translation, FioError> {
        translate(text, "t.fio", "t", &|_| None)
    }

    fn err(text: &str) -> String {
        tr(text).unwrap_err().to_string()
    }

    fn is_diff(t: &TestSpec, id: &str) -> bool {
        t.notes.iter().any(|n| n.contains(&format!("[differs from fio: {id}]")))
    }

    /// fio's `fallocate`: a write-only job's file is laid out by the mode fio names (native,
    /// the default, and posix: fallocate; keep; truncate; none), a job that reads is prefilled
    /// instead, a value fio does not take is refused, and a named file shorter than the job
    /// gets the `write-file-shorter` difference (fio replaces it, fsbench extends it).
    #[test]
    fn fallocate_lays_out_a_write_jobs_file_as_fio_names() {
        let how = |extra: &str| {
            let t = tr(&format!("[w]\nrw=randwrite\nsize=1m\n{extra}")).unwrap();
            t.spec.tests[0].file.as_ref().unwrap().preallocate.clone()
        };
        let s = |w: &str| Some(w.to_string());
        assert_eq!(how(""), s("fallocate"));
        assert_eq!(how("fallocate=native\n"), s("fallocate"));
        assert_eq!(how("fallocate=posix\n"), s("fallocate"));
        assert_eq!(how("fallocate=1\n"), s("fallocate"));
        assert_eq!(how("fallocate=keep\n"), s("keep-size"));
        assert_eq!(how("fallocate=truncate\n"), s("truncate"));
        assert_eq!(how("fallocate=none\n"), None);
        assert_eq!(how("fallocate=0\n"), None);
        let t = tr("[r]\nrw=randrw\nsize=1m\n").unwrap();
        let f = t.spec.tests[0].file.as_ref().unwrap();
        assert!(f.prefill && f.preallocate.is_none(), "a job that reads is written out");
        assert!(err("[w]\nrw=write\nsize=1m\nfallocate=yes\n")
            .contains("fio takes none (0), native, posix (1), keep or truncate"));
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("short.dat");
        std::fs::write(&p, [7u8; 4096]).unwrap();
        let t = tr(&format!("[w]\nrw=write\nsize=1m\nfilename={}\n", p.display())).unwrap();
        assert!(is_diff(&t.spec.tests[0], "write-file-shorter"), "{:?}", t.spec.tests[0].notes);
        std::fs::write(&p, vec![7u8; 1 << 20]).unwrap();
        let t = tr(&format!("[w]\nrw=write\nsize=1m\nfilename={}\n", p.display())).unwrap();
        assert!(!is_diff(&t.spec.tests[0], "write-file-shorter"), "{:?}", t.spec.tests[0].notes);
    }

    /// `fill_device=1` on a sequential write: the timed phase's amount is `fill = 1` (no
    /// bytes), the file starts empty as fio's (no `file.preallocate`), the note says
    /// it needs a testbed, `size` has no effect (said so), and `fill_fs` is its alias.
    #[test]
    fn fill_device_writes_until_the_filesystem_is_full() {
        for text in [
            "[f]\nrw=write\nbs=64k\nfill_device=1\n",
            "[f]\nrw=write\nbs=64k\nfill_fs=1\nfilesize=1m\n",
            "[f]\nfilename=data.tmp\nrw=write\nbs=64k\nfill_device\n",
        ] {
            let t = tr(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let test = &t.spec.tests[0];
            let a = &test.phases.last().unwrap().amount;
            assert_eq!((a.fill, a.bytes, a.seconds), (Some(1.0), None, None), "{text}");
            assert_eq!(test.file.as_ref().unwrap().preallocate, None, "{text}");
            assert!(test.notes.iter().any(|n| n.contains("only on a testbed it made")), "{text}");
            assert!(!test.file.as_ref().unwrap().prefill);
            assert_eq!(
                text.contains("filesize=1m"),
                test.notes.iter().any(|n| n.contains("filesize has no effect with fill_device")),
                "{text}"
            );
        }
        // Off: the job's size as always.
        let t = tr("[f]\nrw=write\nsize=1m\nfill_device=0\n").unwrap();
        assert_eq!(t.spec.tests[0].phases[0].amount.fill, None);
        // With a size fio writes that size (fio 3.33 with size=8m: 8 MiB, on a filesystem with
        // more free): a write of it, its file not fallocated, the ENOSPC case stated.
        let t = tr("[f]\nrw=write\nbs=64k\nfill_device=1\nsize=1m\n").unwrap();
        let test = &t.spec.tests[0];
        let a = &test.phases.last().unwrap().amount;
        let one_mib = Some(crate::workload::size::SizeExpr::Bytes(1 << 20));
        assert!(a.fill.is_none() && a.bytes == one_mib, "{a:?}");
        assert_eq!(
            test.file.as_ref().map(|f| (f.size, f.preallocate.clone())),
            Some((crate::workload::size::SizeExpr::Bytes(1 << 20), None))
        );
        assert!(is_diff(test, "fill-capped"), "{:?}", test.notes);
        assert!(!test.notes.iter().any(|n| n.contains("only on a testbed")), "{:?}", test.notes);
    }

    /// Where fsbench cannot fill as fio does, or would fill a filesystem that is not a testbed,
    /// the option is refused at its line with why.
    #[test]
    fn fill_device_is_refused_where_fsbench_cannot_give_its_meaning() {
        for (extra, why) in [
            ("rw=read\n", "with rw=read"),
            ("rw=randwrite\n", "with rw=randwrite"),
            ("rw=write:4k\n", "no skip"),
            ("rw=write\nfilename=/tmp/fsbench-unit-fill.dat\n", "machine's own filesystem"),
            ("rw=write\nfilename=f\nnumjobs=2\n", "one shared filename"),
            ("rw=write\nruntime=10\n", "leave runtime out"),
            ("rw=write\nio_size=1m\n", "leave io_size out"),
            ("rw=write\nverify=crc32c\n", "do_verify=0"),
        ] {
            let e = err(&format!("[f]\nfill_device=1\n{extra}"));
            assert!(e.contains("t.fio:2: `fill_device`") && e.contains(why), "{extra}: {e}");
        }
        // verify with do_verify=0 is not checked after the job: accepted.
        assert!(tr("[f]\nfill_device=1\nrw=write\nverify=crc32c\ndo_verify=0\n").is_ok());
    }

    /// A later job without `size` on the file a fill_device job fills: fio 3.33 refuses it with
    /// create_serialize=1 ("you need to specify size="); with create_serialize=0 fio takes
    /// the size the fill left, which fsbench says it cannot. With `size=` it runs.
    #[test]
    fn a_job_after_a_fill_without_size_is_refused_with_why() {
        let fill = "[w]\nfilename=data.tmp\nrw=write\nbs=64k\nfill_device=1\n";
        let e = err(&format!("{fill}[r]\nstonewall\nfilename=data.tmp\nrw=read\n"));
        assert!(e.contains("t.fio:6: `[r]`") && e.contains("you need to specify size="), "{e}");
        assert!(e.contains("[w] fills this job's file"), "{e}");
        // With create_serialize=0 fio takes the size the fill left when the job starts, and so
        // does fsbench: the file of the run's length, rounded down to bs, one pass over it.
        let t =
            tr(&format!("{fill}[r]\nstonewall\ncreate_serialize=0\nfilename=data.tmp\nrw=read\n"))
                .unwrap_or_else(|e| panic!("{e}"));
        let f = t.spec.tests[1].file.as_ref().unwrap();
        assert_eq!(f.run_file.as_deref(), Some("data.tmp"));
        assert_eq!(
            f.take_size,
            Some(crate::workload::size::Bytes(4096)),
            "rounded to its bs (fio's 4k)"
        );
        let a = &t.spec.tests[1].phases.last().unwrap().amount;
        assert_eq!((a.passes, a.bytes.is_none()), (Some(1), true), "{a:?}");
        // Several threads, or an offset, would each need a share of a size not yet known.
        for (extra, key) in [("numjobs=2\n", "numjobs"), ("offset=64k\n", "offset")] {
            let e = err(&format!(
                "{fill}[r]\nstonewall\ncreate_serialize=0\nfilename=data.tmp\nrw=read\n{extra}"
            ));
            assert!(e.contains(&format!("`{key}`")) && e.contains("give size="), "{e}");
        }
        // With size= it runs, on the file the fill left.
        let t = tr(&format!("{fill}[r]\nstonewall\nfilename=data.tmp\nrw=read\nsize=8m\n"));
        assert!(t.is_ok(), "{:?}", t.err().map(|e| e.to_string()));
    }

    /// surface-scan.fio's own lines (a tab before a comment after a value, verify=meta with
    /// verify_pattern and verify_interval, do_verify per job, create_serialize=0): the write
    /// phase fills and is not checked, the read phase (given a size here) is checked, and
    /// create_serialize=0 on one file is a plain note, not a difference.
    #[test]
    fn surface_scans_options_translate_as_fios() {
        let text = "[global]\nthread\nbs=64k\ndirect=1\nioengine=sync\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\n\n[write-phase]\nfilename=datafile.tmp\t; or use a full disk, for example /dev/sda\nrw=write\nfill_device=1\ndo_verify=0\n\n[verify-phase]\nstonewall\ncreate_serialize=0\nfilename=datafile.tmp\nrw=read\ndo_verify=1\nsize=32m\n";
        let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
        let (w, r) = (&t.spec.tests[0], &t.spec.tests[1]);
        assert_eq!(w.phases.last().unwrap().amount.fill, Some(1.0));
        assert_eq!(w.verify, None, "do_verify=0: not checked");
        assert_eq!(r.verify, Some(true), "do_verify=1: checked");
        assert_eq!(w.direct, Some(true));
        assert!(!is_diff(r, "layout-serial"), "{:?}", r.notes);
        assert!(r.notes.iter().any(|n| n.contains("create_serialize=0")), "{:?}", r.notes);
        // The tab and the comment are not part of the name: both jobs name one file, the
        // run's, as fio's (no difference note).
        assert!(!t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
        for test in &t.spec.tests {
            assert_eq!(test.file.as_ref().unwrap().run_file.as_deref(), Some("datafile.tmp"));
        }
        // Without its size, as the example has it: the size the fill left, at run time.
        let t = tr(&text.replace("size=32m\n", "")).unwrap_or_else(|e| panic!("{e}"));
        let f = t.spec.tests[1].file.as_ref().unwrap();
        assert_eq!(f.take_size, Some(crate::workload::size::Bytes(64 << 10)));
    }

    /// create_serialize: 1 (default) is fsbench's own order, without a note; 0 with several
    /// files to lay out (numjobs threads each with its own file, read) is a difference.
    #[test]
    fn create_serialize_is_fsbenchs_order_or_a_stated_difference() {
        let t = tr("[r]\nrw=read\nsize=1m\nnumjobs=2\n").unwrap();
        assert!(!t.spec.tests[0].notes.iter().any(|n| n.contains("create_serialize")));
        let t = tr("[r]\nrw=read\nsize=1m\nnumjobs=2\ncreate_serialize=1\n").unwrap();
        assert!(!t.spec.tests[0].notes.iter().any(|n| n.contains("create_serialize")));
        let t = tr("[r]\nrw=read\nsize=1m\nnumjobs=2\ncreate_serialize=0\n").unwrap();
        assert!(is_diff(&t.spec.tests[0], "layout-serial"), "{:?}", t.spec.tests[0].notes);
        assert!(t.check_strict().is_err(), "--fio-strict refuses a difference");
        // Written by the job itself (nothing laid out), or one file: no difference.
        for text in [
            "[w]\nrw=write\nsize=1m\nnumjobs=2\ncreate_serialize=0\n",
            "[r]\nrw=read\nsize=1m\nfilename=f\nnumjobs=2\ncreate_serialize=0\n",
        ] {
            let t = tr(text).unwrap();
            assert!(!is_diff(&t.spec.tests[0], "layout-serial"), "{text}");
        }
        let e = err("[r]\nrw=read\nsize=1m\ncreate_serialize=maybe\n");
        assert!(e.contains("t.fio:4: `create_serialize`"), "{e}");
    }
}
