//! A job without `size` (or `filesize`): fio takes the size of the file it works on. Why a
//! module of its own: the answer depends on what is outside the job, the file on disk when the
//! job file is read and the jobs before it in the same file, which nothing else in the
//! translation looks at.
//!
//! fio 3.33's behaviour, checked on small job files (bs=4k, a 1 MiB file):
//! - the file exists: the job's size is the file's size less `offset` (`offset=256k` reads
//!   768 KiB), rounded down to the block size (a 10000-byte file reads 8192 bytes); with
//!   `numjobs` and `offset_increment` each clone gets the rest of the file from its own offset;
//!   `io_size` still sets the bytes moved (3 MiB read from the 1 MiB file);
//! - an earlier job of the same job file names the file with a size: the file it laid out,
//!   `offset + size` bytes of that job (a write job of 256 KiB at offset 256 KiB leaves 512 KiB,
//!   a `randwrite` with a smaller `io_size` lays out the whole size); with or without a
//!   `stonewall` between them (fio lays files out before a group starts);
//! - no such file, or an empty one: `you need to specify size=` (error 22, exit 1);
//! - `offset` past the end: `you need to specify valid offset=`; less than one block left
//!   (`offset` at the end, a file smaller than `bs`): `blocksize is larger than data set range`,
//!   and the job does nothing (exit 1).
//!
//! fsbench does the same at translate time: a file named by a path is looked at then (it may
//! change before the run; the run uses the file as it finds it), and a job's file as an
//! earlier job lays it out is [`Laid`]'s record. A plain `filename` is fsbench's own file in its
//! work directory (one file for every job naming it, see [`super::run_file`]), new when the
//! job file is read, so only an earlier job gives it a size (or, after a `fill_device` job,
//! the fill when the job starts: [`taken_at_run`]).

use super::{FioError, Job};
use crate::workload::size::{Bytes, SizeExpr};
use crate::workload::spec::TestSpec;
use std::collections::BTreeMap;
use std::path::Path;

/// The files earlier jobs of the job file lay out, by [`key`]: where each ends.
#[derive(Debug, Default)]
pub(super) struct Laid {
    ends: BTreeMap<String, End>,
}

/// Where a file an earlier job lays out ends.
#[derive(Debug, Clone, PartialEq)]
enum End {
    /// At this many bytes.
    Bytes(u64),
    /// Where the filesystem filled up: the job (named) has `fill_device`, and the size is
    /// known only when it ends.
    Filled(String),
}

impl Laid {
    /// Record the file `test` (the job `job`'s translation) lays out: it reaches the end of its
    /// last thread's region, as fio's clones each lay it out to their own `offset + size`. A
    /// file already recorded larger stays so (fio does not shrink a file it lays out).
    pub(super) fn record(&mut self, job: &Job, test: &TestSpec) {
        let (Some(k), Some(f)) = (key(job), &test.file) else {
            return;
        };
        if test.phases.iter().any(|p| p.amount.fill.is_some()) {
            self.ends.insert(k, End::Filled(job.name.clone()));
            return;
        }
        let SizeExpr::Bytes(size) = f.size else {
            return;
        };
        let offset = f.offset.map_or(0, |Bytes(b)| b);
        let inc = f.offset_increment.map_or(0, |Bytes(b)| b);
        let last = u64::from(test.threads.saturating_sub(1)).saturating_mul(inc);
        let end = offset.saturating_add(last).saturating_add(size);
        let e = self.ends.entry(k).or_insert(End::Bytes(0));
        match e {
            End::Bytes(b) => *b = (*b).max(end),
            // A file filled and then laid out again by a job with a size: the layout extends
            // a file only when it is shorter, and the filled one is as long as it could be.
            End::Filled(_) => {}
        }
    }

    /// Where an earlier job laid the job's file out to, if one did.
    fn end(&self, job: &Job) -> Option<End> {
        key(job).and_then(|k| self.ends.get(&k).cloned())
    }
}

/// The name that makes two jobs' files one: a path as it resolves (see
/// [`super::named_path`]), a plain name with the job's `directory` (fio's file is
/// `directory/filename`). A job without `filename` has its own file (fio names it after the
/// job and its clone), which no other job names.
fn key(job: &Job) -> Option<String> {
    let (f, line) = job.str("filename").ok().flatten()?;
    if super::named_in(job) {
        return super::named_path(job, f, line).ok().map(|p| p.to_string_lossy().into_owned());
    }
    let dir = job.str("directory").ok().flatten().map_or("", |(d, _)| d);
    Some(format!("{dir}\0{f}"))
}

/// The size of a job without `size`/`filesize`, as fio takes it: the bytes from `offset` to
/// the end of the file (`named`, the path it names, as it is now; else as an earlier job lays
/// it out, whichever is larger), rounded down to `bs` (the smallest block of the job's
/// directions, when known). Refused with fio's own reason where fio refuses; a file fio would
/// give each of `threads` clones a different size (`offset_increment`) is refused because
/// fsbench gives every thread one size.
pub(super) fn from_file(
    job: &Job,
    named: Option<&Path>,
    laid: &Laid,
    offset: u64,
    increment: u64,
    threads: u32,
    bs: Option<u64>,
) -> Result<u64, FioError> {
    let on_disk = match named {
        Some(p) => std::fs::metadata(p).ok().filter(|m| m.is_file()).map(|m| m.len()),
        None => None,
    };
    let earlier = match laid.end(job) {
        Some(End::Filled(by)) => return Err(after_fill(job, &by)),
        Some(End::Bytes(b)) => Some(b),
        None => None,
    };
    let file = match (on_disk, earlier) {
        (Some(a), Some(b)) => a.max(b),
        (a, b) => a.or(b).unwrap_or(0),
    };
    let what = match named {
        Some(p) => format!("{}", p.display()),
        None if job.get("filename").is_some() => {
            "the plain filename (fsbench makes its own new file for it)".to_string()
        }
        None => "the job's own file (fsbench makes a new one)".to_string(),
    };
    if file == 0 {
        let state = match (named, on_disk) {
            (Some(_), Some(0)) => "is empty",
            (Some(_), _) => "does not exist",
            (None, _) => "is new",
        };
        return Err(job.job_err(format!(
            "no size: {what} {state} and no earlier job of this file lays it out, so there is no size to take (fio 3.33 refuses it too: \"you need to specify size=\"); give the file's size with size= (and, optionally, the bytes to move with io_size=)"
        )));
    }
    if offset > file {
        return Err(job.err("offset", job.line("offset"), format!(
            "{offset} is past the end of {what} ({file} bytes), and the job has no size= (fio 3.33: \"you need to specify valid offset=\"); give a smaller offset or size="
        )));
    }
    let left = file - offset;
    let bs = bs.unwrap_or(1).max(1);
    if left < bs {
        return Err(job.job_err(format!(
            "no size: {what} has {left} bytes from offset {offset}, less than one block of {bs} (fio 3.33: \"blocksize is larger than data set range\", and the job does nothing); give size= or a smaller bs"
        )));
    }
    if threads > 1 && increment > 0 {
        return Err(job.err("offset_increment", job.line("offset_increment"), format!(
            "without size=, fio gives each of the {threads} threads the rest of {what} from its own offset (thread k: {left} - k * {increment} bytes), and fsbench gives every thread one size; give size="
        )));
    }
    Ok(left / bs * bs)
}

/// Whether a job without `size` takes its file's size when it starts (the block size to round
/// it down to): its plain filename (a file of the run, not a path) is one an earlier job fills
/// with `fill_device`, and with `create_serialize=0` fio lays the job's file out when the job
/// starts, taking the size the fill left (with the default, fio refuses it: [`after_fill`]).
pub(super) fn taken_at_run(job: &Job, named: Option<&Path>, laid: &Laid) -> bool {
    named.is_none()
        && matches!(laid.end(job), Some(End::Filled(_)))
        && matches!(job.bool("create_serialize"), Ok(Some(false)))
}

/// A job without `size` on the file the earlier job `by` fills (`fill_device`): fio refuses
/// it by default, and takes the size the fill left with `create_serialize=0`, which fsbench
/// does on a plain filename ([`taken_at_run`], checked first), not on a path.
fn after_fill(job: &Job, by: &str) -> FioError {
    if matches!(job.bool("create_serialize"), Ok(Some(false))) {
        return job.job_err(format!(
            "no size: [{by}] fills this job's file with fill_device, and with create_serialize=0 fio takes the size the fill left when this job starts; fsbench takes it so only for a plain filename (a file the run's jobs share), not for a file named by a path: give size="
        ));
    }
    job.job_err(format!(
        "no size: [{by}] fills this job's file with fill_device, and fio lays out every job's file before any job runs (create_serialize=1, the default), when the filled file does not exist yet (fio 3.33 refuses it too: \"you need to specify size=\"); give size="
    ))
}

#[cfg(test)]
mod tests {
    use super::super::{translate, FioError, Translation};
    use crate::workload::size::{Bytes, SizeExpr};
    use crate::workload::spec::FileSpec;
    use std::path::PathBuf;

    fn tr(text: &str) -> Result<Translation, FioError> {
        translate(text, "t.fio", "t", &|_| None)
    }

    /// A file of `len` bytes in the temp directory, removed when dropped (also when a test
    /// fails).
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str, len: u64) -> TempFile {
            let p = std::env::temp_dir()
                .join(format!("fsbench-unit-size-{}-{name}", std::process::id()));
            let f = std::fs::File::create(&p).expect("creating a temp file");
            f.set_len(len).expect("sizing the temp file");
            TempFile(p)
        }

        fn path(&self) -> String {
            self.0.to_string_lossy().into_owned()
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// A name in the temp directory that no file has.
    fn absent(name: &str) -> String {
        let p = std::env::temp_dir()
            .join(format!("fsbench-unit-size-{}-{name}-absent", std::process::id()));
        assert!(!p.exists());
        p.to_string_lossy().into_owned()
    }

    fn file(t: &Translation, i: usize) -> FileSpec {
        t.spec.tests[i].file.clone().expect("a data test has a file")
    }

    fn size(f: &FileSpec) -> u64 {
        match f.size {
            SizeExpr::Bytes(b) => b,
            other => panic!("not bytes: {other:?}"),
        }
    }

    fn moved(t: &Translation, i: usize) -> u64 {
        match t.spec.tests[i].phases.last().and_then(|p| p.amount.bytes) {
            Some(SizeExpr::Bytes(b)) => b,
            other => panic!("not bytes: {other:?}"),
        }
    }

    /// An existing file named by a path gives a job without `size` its size, as fio 3.33's:
    /// all of it, the rest after `offset`, rounded down to the block, `io_size` still the bytes
    /// moved; a write job writes over the file's size.
    #[test]
    fn a_job_without_size_takes_its_files_size() {
        let f = TempFile::new("exist", (1 << 20) + 100);
        let p = f.path();
        let t = tr(&format!("[r]\nfilename={p}\nrw=read\nbs=4k\n")).unwrap();
        assert_eq!(size(&file(&t, 0)), 1 << 20, "1 MiB + 100 bytes, rounded down to 4k");
        assert_eq!(moved(&t, 0), 1 << 20);
        let t = tr(&format!("[r]\nfilename={p}\nrw=randread\nbs=4k\noffset=256k\n")).unwrap();
        assert_eq!(size(&file(&t, 0)), 768 << 10, "the rest after offset");
        assert_eq!(file(&t, 0).offset, Some(Bytes(256 << 10)));
        assert_eq!(moved(&t, 0), 768 << 10);
        let t = tr(&format!("[r]\nfilename={p}\nrw=read\nbs=64k\nio_size=3m\n")).unwrap();
        assert_eq!(size(&file(&t, 0)), 1 << 20);
        assert_eq!(moved(&t, 0), 3 << 20, "io_size is still the bytes moved");
        let t = tr(&format!("[w]\nfilename={p}\nrw=write\nbs=4k\n")).unwrap();
        assert_eq!(moved(&t, 0), 1 << 20);
        // A tab before a comment after the value, as surface-scan.fio writes it.
        let t = tr(&format!("[r]\nfilename={p}\t; or use a full disk\nrw=read\n")).unwrap();
        assert_eq!(file(&t, 0).path.as_deref(), Some(p.as_str()));
        assert_eq!(size(&file(&t, 0)), 1 << 20);
        // fio gives each clone the rest from its own offset: one size per thread cannot say it.
        let e = tr(&format!("[r]\nfilename={p}\nnumjobs=2\noffset_increment=256k\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.fio:4: `offset_increment`") && e.contains("give size="), "{e}");
        // numjobs on the one named file: each thread covers the whole file, as fio's.
        let t = tr(&format!("[r]\nfilename={p}\nnumjobs=2\n")).unwrap();
        assert_eq!(size(&file(&t, 0)), 1 << 20);
    }

    /// A file an earlier job of the file lays out gives a later job without `size` the bytes
    /// that job gave it (`offset + size`), with or without a stonewall between them, named
    /// by a path or (fsbench's own file, prefilled) by a plain name.
    #[test]
    fn a_job_without_size_takes_the_size_an_earlier_job_gives_its_file() {
        let p = absent("later");
        let text = format!("[w]\nfilename={p}\nrw=write\nbs=4k\nsize=256k\noffset=256k\n[r]\nstonewall\nfilename={p}\nrw=read\nbs=4k\n");
        let t = tr(&text).unwrap();
        assert_eq!(size(&file(&t, 1)), 512 << 10, "fio 3.33 reads 512 KiB");
        assert_eq!(moved(&t, 1), 512 << 10);
        // The same file a second time, from an offset of its own.
        let text = format!("{text}[r2]\nstonewall\nfilename={p}\nrw=read\nbs=4k\noffset=64k\n");
        let t = tr(&text).unwrap();
        assert_eq!(size(&file(&t, 2)), 448 << 10);
        // A plain name: fsbench's own file of the size the earlier job gives it.
        let text = "[global]\nfilename=plain\n[w]\nrw=write\nsize=128k\n[r]\nstonewall\nrw=read\n";
        let t = tr(text).unwrap();
        assert_eq!(size(&file(&t, 1)), 128 << 10);
        assert!(file(&t, 1).prefill, "laid out before the read, as fio's");
        // A later job's size does not flow back to an earlier one.
        let text = format!(
            "[r]\nfilename={p}\nrw=read\n[w]\nstonewall\nfilename={p}\nrw=write\nsize=1m\n"
        );
        let e = tr(&text).unwrap_err().to_string();
        assert!(e.contains("t.fio:1: `[r]`") && e.contains("you need to specify size="), "{e}");
    }

    /// Where fio 3.33 refuses a job without `size`, fsbench does, with fio's reason: no file,
    /// an empty one, an offset past the end, less than a block left.
    #[test]
    fn without_size_fsbench_refuses_where_fio_does() {
        let empty = TempFile::new("empty", 0);
        let small = TempFile::new("small", 1000);
        let big = TempFile::new("big", 1 << 20);
        let cases = [
            (
                format!("[a]\nfilename={}\nrw=read\n", absent("none")),
                "does not exist",
                "you need to specify size=",
            ),
            (
                format!("[a]\nfilename={}\nrw=read\n", empty.path()),
                "is empty",
                "you need to specify size=",
            ),
            ("[a]\nrw=read\n".to_string(), "is new", "you need to specify size="),
            (
                "[a]\nfilename=plain\nrw=read\n".to_string(),
                "plain filename",
                "you need to specify size=",
            ),
            (
                format!("[a]\nfilename={}\nrw=read\n", small.path()),
                "less than one block",
                "blocksize is larger than data set range",
            ),
            (
                format!("[a]\nfilename={}\nrw=read\noffset=1m\n", big.path()),
                "less than one block",
                "blocksize is larger than data set range",
            ),
            (
                format!("[a]\nfilename={}\nrw=read\noffset=2m\n", big.path()),
                "past the end",
                "you need to specify valid offset=",
            ),
        ];
        for (text, why, fio_says) in cases {
            let e = tr(&text).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(fio_says), "{text}: {e}");
        }
    }

    /// A job whose engine fsbench refuses gets that refusal alone: fio's engines without files
    /// (cpuio) or with a size of their own (a device, a server) need no `size`.
    #[test]
    fn an_engine_fsbench_refuses_is_not_also_asked_for_a_size() {
        let e = tr("[burn]\nioengine=cpuio\nrw=read\n").unwrap_err().to_string();
        assert!(e.contains("t.fio:2: `ioengine`") && e.contains("cpuio"), "{e}");
        assert!(!e.contains("no size"), "{e}");
        // With an engine fsbench takes, the missing size is still reported.
        let e = tr("[a]\nioengine=psync\nrw=read\n").unwrap_err().to_string();
        assert!(e.contains("no size"), "{e}");
    }
}
