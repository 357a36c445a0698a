//! fio's file-operation engines (`filecreate`, `filestat`, `filedelete`, `dircreate`,
//! `dirstat`, `dirdelete`, fio's `engines/fileoperations.c`) as fsbench fileset tests. These
//! engines do no I/O: each of a job's `nrfiles` files gets one fake I/O, and the call fio makes
//! when it "opens" the file is what fio times (its completion latency):
//!
//! | engine | untimed setup | timed, per file | fsbench op |
//! |---|---|---|---|
//! | filecreate | none | `open(O_CREAT\|O_RDWR, 0600)`, then an untimed `close` | `opencreate` |
//! | filestat | the files written at `filesize` | `stat`/`lstat`/`statx` (`stat_type`) | `stat`, `lstat`, `statx` |
//! | filedelete | the files written at `filesize` | `unlink` | `unlink` |
//! | dircreate | none | `mkdir(S_IFDIR)` | `mkdirslot` |
//! | dirstat | the directories made | `stat`/`lstat`/`statx` | `stat`, `lstat`, `statx` |
//! | dirdelete | the directories made | `rmdir` | `rmdirslot` |
//!
//! A job is a flat fileset of `nrfiles` files per thread (`numjobs`), each thread on its own
//! files, every file once per pass (`loops` passes for the stat engines), named by absolute
//! path as fio names them. fio reports the op in the job's direction (`init`: read for a job
//! that reads, the default `rw=read`, else write), one I/O of `bs` bytes per file; the
//! translation keeps that in the job's [`super::FileOpReport`] for `fsbench fio`'s report.
//!
//! The jobs of one run group (fio runs them at the same time) are one test whose threads are
//! all the jobs' threads ([`one_group`]), each job a range of them: a fileset job cannot be a
//! role (a role works on a data file), so the group's jobs must be the same file operation on
//! the same shape of files.

use super::options;
use super::{FileOpReport, FioError, Job, JobPlace, LatPercentiles};
use crate::model::job::OpKind;
use crate::workload::size::{Bytes, SizeDistSpec};
use crate::workload::spec::{AmountSpec, FilesetSpec, OpSpec, PhaseSpec, TestSpec};

/// One of fio's file-operation engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileOp {
    /// `filecreate`.
    FileCreate,
    /// `filestat`.
    FileStat,
    /// `filedelete`.
    FileDelete,
    /// `dircreate`.
    DirCreate,
    /// `dirstat`.
    DirStat,
    /// `dirdelete`.
    DirDelete,
}

/// The engines, by fio's name.
const ENGINES: [(&str, FileOp); 6] = [
    ("filecreate", FileOp::FileCreate),
    ("filestat", FileOp::FileStat),
    ("filedelete", FileOp::FileDelete),
    ("dircreate", FileOp::DirCreate),
    ("dirstat", FileOp::DirStat),
    ("dirdelete", FileOp::DirDelete),
];

impl FileOp {
    fn name(self) -> &'static str {
        ENGINES.iter().find(|(_, o)| *o == self).map_or("filecreate", |(n, _)| n)
    }

    fn stats(self) -> bool {
        matches!(self, FileOp::FileStat | FileOp::DirStat)
    }

    fn dirs(self) -> bool {
        matches!(self, FileOp::DirCreate | FileOp::DirStat | FileOp::DirDelete)
    }
}

/// The options a file-operation job takes besides those of every job's grouping and
/// reporting; any other is refused, naming the engine (fio's engine ignores most of them,
/// and fsbench would otherwise seem to honour them).
const TAKEN: &[&str] = &[
    "name",
    "description",
    "ioengine",
    "nrfiles",
    "filesize",
    "size",
    "bs",
    "rw",
    "numjobs",
    "thread",
    "directory",
    "create_on_open",
    "openfiles",
    "fallocate",
    "unlink",
    "stat_type",
    "loops",
    "group_reporting",
    "stonewall",
    "new_group",
    "clat_percentiles",
    "lat_percentiles",
    "percentile_list",
    "disable_slat",
];

/// The options of [`TAKEN`] that shape the job, as the refusal of another lists them.
const SHAPING: &str = "nrfiles, filesize (or size), bs, rw, numjobs, thread, directory, create_on_open, openfiles, fallocate, unlink, stat_type and loops";

/// Options that leave fio's file-operation engines no latency to report: the engine records
/// its call only when latencies are kept (fio's example job files say not to set them).
const NO_LATENCY: &[&str] = &["disable_lat", "disable_clat", "gtod_reduce"];

/// The job's file-operation engine, if its `ioengine` names one.
pub(super) fn engine_of(job: &Job) -> Option<FileOp> {
    let (e, _) = job.str("ioengine").ok().flatten()?;
    ENGINES.iter().find(|(n, _)| *n == e).map(|(_, o)| *o)
}

/// What a job of the engine reports and runs, read once from its options.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    op: FileOp,
    /// Files (or directories) per thread.
    nrfiles: u64,
    /// Bytes of each file (filestat, filedelete write them in setup).
    file_bytes: u64,
    /// The timed op.
    kind: OpKind,
    /// Passes over the files.
    loops: u32,
    /// fio's direction: write (else read).
    write: bool,
}

/// The engine's fsbench op for `stat_type` (stat engines) or its own.
fn kind_of(job: &Job, op: FileOp) -> Result<OpKind, FioError> {
    let stat_type = job.str("stat_type")?;
    if !op.stats() {
        if let Some((_, line)) = stat_type {
            return Err(job.err(
                "stat_type",
                line,
                format!(
                    "is an option of fio's filestat and dirstat engines, not of ioengine={}",
                    op.name()
                ),
            ));
        }
    }
    Ok(match op {
        FileOp::FileCreate => OpKind::Opencreate,
        FileOp::FileDelete => OpKind::Unlink,
        FileOp::DirCreate => OpKind::Mkdirslot,
        FileOp::DirDelete => OpKind::Rmdirslot,
        FileOp::FileStat | FileOp::DirStat => match stat_type {
            None | Some(("stat", _)) => OpKind::Stat,
            Some(("lstat", _)) => OpKind::Lstat,
            Some(("statx", _)) => OpKind::Statx,
            Some((v, line)) => {
                return Err(job.err(
                    "stat_type",
                    line,
                    format!("`{v}` is not a stat_type; fio takes stat, lstat or statx"),
                ))
            }
        },
    })
}

/// Read the job's options into its [`Shape`], refusing what fsbench cannot run as fio does.
fn shape(job: &Job, op: FileOp, notes: &mut Vec<String>) -> Result<Shape, FioError> {
    let engine = op.name();
    for (name, v) in &job.opts {
        if NO_LATENCY.contains(name) {
            if job.bool(name)? == Some(false) {
                continue;
            }
            return Err(job.err(name, v.line, format!("with ioengine={engine}: fio then records no latency of the call, which is all the engine reports; leave {name} out")));
        }
        if !TAKEN.contains(name) {
            return Err(job.err(name, v.line, format!("is not taken with ioengine={engine}: fsbench runs fio's file operations as a fileset test, with {}", SHAPING)));
        }
    }
    let kind = kind_of(job, op)?;
    let nrfiles = match job.int("nrfiles")? {
        None => 1,
        Some((0, line)) => return Err(job.err("nrfiles", line, "0 files: give at least 1")),
        Some((n, _)) => n,
    };
    let (bs, bs_line) = match job.str("bs")? {
        None => (4096, job.line),
        Some((v, line)) => match super::parse_size(v) {
            Ok(b) if b > 0 && !v.contains(',') => (b, line),
            _ => {
                return Err(job.err("bs", line, format!("`{v}` with ioengine={engine}: give one block size (fio counts one fake I/O of bs bytes per file)")))
            }
        },
    };
    let file_bytes = match (job.size("filesize")?, job.size("size")?) {
        (Some((f, _)), None) => f,
        (Some((f, line)), Some((s, _))) if s != f.saturating_mul(nrfiles) => {
            return Err(job.err("filesize", line, format!("with size={s}: fio then does size's bytes of fake I/O over the files, not one per file; with ioengine={engine} leave size out (or give nrfiles × filesize)")))
        }
        (Some((f, _)), Some(_)) => f,
        (None, Some((s, _))) => s / nrfiles,
        (None, None) => {
            return Err(job.job_err(format!("ioengine={engine} needs filesize (fio: \"you need to specify size=\"); fio's examples give filesize=4k")))
        }
    };
    if file_bytes != bs {
        let (o, line) = match job.size("filesize")? {
            Some((_, l)) => ("filesize", l),
            None => ("bs", bs_line),
        };
        return Err(job.err(o, line, format!("each file of {file_bytes} bytes is {} fake I/Os of bs={bs} in fio, whose iops then counts those I/Os, not the {engine} calls; fsbench runs one call per file: give filesize equal to bs (4k, as fio's examples)", file_bytes as f64 / bs as f64)));
    }
    let rw = super::direction(job)?;
    let write = !rw.reads();
    let loops = match job.int("loops")? {
        None | Some((1, _)) => 1,
        Some((n, line)) if op.stats() && n > 1 => {
            u32::try_from(n).map_err(|_| job.err("loops", line, "too many loops"))?
        }
        Some((n, line)) => {
            return Err(job.err("loops", line, format!("loops={n} with ioengine={engine}: fio's second pass fails or finds the files it made (the first pass {} them); only filestat and dirstat take loops", if matches!(op, FileOp::FileDelete | FileOp::DirDelete) { "removed" } else { "made" })))
        }
    };
    let create_on_open = job.bool("create_on_open")?.unwrap_or(false);
    if matches!(op, FileOp::FileCreate | FileOp::DirCreate) && !create_on_open {
        let line = job.line("create_on_open");
        return Err(job.err("create_on_open", line, format!("ioengine={engine} needs create_on_open=1 in fsbench: without it fio creates every file when the job starts, before its I/O loop, and keeps them open; fio's example sets create_on_open=1 so that the creates happen in the timed run")));
    }
    if let Some((n, line)) = job.int("openfiles")? {
        if op == FileOp::FileCreate && n != 1 {
            return Err(job.err("openfiles", line, format!("openfiles={n} with filecreate: fio then keeps up to {n} created files open and closes them later; fsbench closes each at once, as fio with openfiles=1 (its example's)")));
        }
    } else if op == FileOp::FileCreate && nrfiles > 1 {
        let line = job.line;
        return Err(job.err("openfiles", line, "filecreate with nrfiles > 1 needs openfiles=1 (fio's example's): with fio's default (openfiles = nrfiles) fio keeps every created file open to the job's end, and fsbench closes each at once"));
    }
    if job.bool("unlink")? == Some(true) {
        notes.push(format!(
            "unlink=1: fsbench removes the {} it made at the end of the test either way",
            if op.dirs() { "directories" } else { "files" }
        ));
    }
    notes.push(options::difference("fileops-names"));
    if kind == OpKind::Statx {
        notes.push(options::difference("statx-realpath"));
    }
    Ok(Shape { op, nrfiles, file_bytes, kind, loops, write })
}

/// One file-operation job as one test of `numjobs` threads.
pub(super) fn translate(
    job: &Job,
    op: FileOp,
    id: String,
) -> Result<(TestSpec, Vec<String>), Vec<FioError>> {
    let mut notes = Vec::new();
    let s = shape(job, op, &mut notes).map_err(|e| vec![e])?;
    let threads = match job.int("numjobs").map_err(|e| vec![e])? {
        None => 1,
        Some((0, line)) => {
            return Err(vec![job.err("numjobs", line, "0 threads: give at least 1")])
        }
        Some((n, line)) => {
            u32::try_from(n).map_err(|_| vec![job.err("numjobs", line, "too many threads")])?
        }
    };
    let (name, description) = super::names(job).map_err(|e| vec![e])?;
    let test = TestSpec {
        id,
        name,
        description,
        notes: notes.iter().map(|n| format!("fio job file: {n}")).collect(),
        threads,
        engine: None,
        iodepth: None,
        direct: None,
        min_time: None,
        random_map: None,
        verify: None,
        seed: None,
        random_distribution: None,
        engine_keys: Default::default(),
        figure: None,
        file: None,
        fileset: Some(fileset(&s, threads)),
        phases: phases(&s),
        roles: Vec::new(),
        exitall: None,
    };
    Ok((test, notes))
}

/// The job's files: `nrfiles` per thread, flat, by absolute path (as fio names them).
fn fileset(s: &Shape, threads: u32) -> FilesetSpec {
    FilesetSpec {
        count: Some(s.nrfiles * u64::from(threads)),
        flat: Some(true),
        tree: None,
        size: SizeDistSpec::Fixed(Bytes(s.file_bytes)),
        // filestat and filedelete find the files fio wrote in its setup.
        prefill: matches!(s.op, FileOp::FileStat | FileOp::FileDelete),
        write_size: None,
        paths: Some("absolute".into()),
        name_prefix: None,
    }
}

fn once(op: OpKind, passes: u32) -> (Vec<OpSpec>, AmountSpec) {
    let pattern =
        vec![OpSpec { op: Some(op.name().into()), pick: Some("next".into()), ..OpSpec::default() }];
    (pattern, AmountSpec { passes: Some(passes), ..AmountSpec::default() })
}

/// An untimed setup (the directories of dirstat and dirdelete, as fio's `setup_dirs`), then
/// the timed op over every file, `loops` times.
fn phases(s: &Shape) -> Vec<PhaseSpec> {
    let mut out = Vec::new();
    if matches!(s.op, FileOp::DirStat | FileOp::DirDelete) {
        let (pattern, amount) = once(OpKind::Mkdirslot, 1);
        out.push(PhaseSpec {
            name: "setup".into(),
            timed: false,
            pattern,
            amount,
            ..PhaseSpec::default()
        });
    }
    let (pattern, amount) = once(s.kind, s.loops);
    out.push(PhaseSpec {
        name: s.op.name().into(),
        timed: true,
        pattern,
        amount,
        ..PhaseSpec::default()
    });
    out
}

/// What `fsbench fio` reports of a file-operation job: its op, in fio's direction, one I/O of
/// `bs` bytes each. None for another job.
pub(super) fn fake_io(job: &Job) -> Option<FileOpReport> {
    let op = engine_of(job)?;
    let s = shape(job, op, &mut Vec::new()).ok()?;
    Some(FileOpReport { op: s.kind, write: s.write, bytes: s.file_bytes })
}

/// A run group of file-operation jobs as one test: the first job's, with every job's threads
/// (each job a range of them, on files of its own) and their files. The group's jobs must
/// all be the same operation on the same files (a fileset job cannot run beside other jobs as
/// a role); returns the test and where each job runs.
pub(super) fn one_group(
    jobs: &[Job],
    g: &super::groups::Group,
    members: Vec<(usize, TestSpec)>,
    notes: &mut Vec<String>,
) -> Result<(TestSpec, Vec<JobPlace>), Vec<FioError>> {
    let mut it = members.into_iter().zip(g.report.iter().copied());
    let Some(((first, mut test), report)) = it.next() else {
        return Err(Vec::new());
    };
    let fjob = &jobs[first];
    let reporting = |job: &Job| job.bool("group_reporting").ok().flatten().unwrap_or(false);
    let fshape = engine_of(fjob).and_then(|op| shape(fjob, op, &mut Vec::new()).ok());
    let place = |job: &Job, test: &TestSpec, threads: u32, first_thread: u32| JobPlace {
        name: job.name.clone(),
        test_id: test.id.clone(),
        role: None,
        group: report,
        group_reporting: reporting(job),
        threads,
        percentiles: LatPercentiles::of(job),
        percentile_list: super::percentile_list(job).ok().flatten(),
        options: job.own.clone(),
        first_thread,
        fileop: fake_io(job),
    };
    let mut places = vec![place(fjob, &test, test.threads, 0)];
    let mut errs = Vec::new();
    for ((i, t), _) in it {
        let job = &jobs[i];
        let shape_i = engine_of(job).and_then(|op| shape(job, op, &mut Vec::new()).ok());
        if t.fileset.is_none() || fshape.is_none() || shape_i != fshape {
            let why = if fshape.is_none() || t.fileset.is_none() {
                "a job of fio's file-operation engines runs as a fileset test, which cannot run beside a job on a data file (fsbench runs the other jobs of a group as roles, each on a data file)".to_string()
            } else {
                format!("fsbench runs a group of file-operation jobs as one fileset test, so they must be the same operation on the same files (engine, stat_type, nrfiles, filesize, rw, loops) as [{}]", fjob.name)
            };
            errs.push(job.job_err(format!("runs at the same time as [{}] (no stonewall between them): {why}; add `stonewall` to [{}] to run it after", fjob.name, job.name)));
            continue;
        }
        places.push(place(job, &test, t.threads, test.threads));
        test.threads += t.threads;
        // Its notes are the first job's (the same shape): said once, for the first.
        let own: Vec<String> = t
            .notes
            .iter()
            .filter_map(|n| n.strip_prefix("fio job file: "))
            .map(|n| format!("[{}] {n}", job.name))
            .collect();
        notes.retain(|n| !own.contains(n));
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    if let (Some(fs), Some(s)) = (test.fileset.as_mut(), fshape) {
        fs.count = Some(s.nrfiles * u64::from(test.threads));
    }
    if places.len() > 1 {
        let names: Vec<&str> = places.iter().map(|p| p.name.as_str()).collect();
        test.notes.push(format!("fio job file: the jobs {} of one group run as this one test of {} threads, each job's threads on files of their own", names.join(", "), test.threads));
    }
    Ok((test, places))
}

#[cfg(test)]
mod tests {
    use super::super::{translate, FioError, Translation};
    use crate::model::job::OpKind;

    fn tr(text: &str) -> Result<Translation, FioError> {
        translate(text, "t.fio", "t", &|_| None)
    }

    fn err(text: &str) -> String {
        tr(text).unwrap_err().to_string()
    }

    /// The ops of each phase: (name, timed, op, passes).
    fn phases(t: &Translation) -> Vec<(String, bool, String, u32)> {
        t.spec.tests[0]
            .phases
            .iter()
            .map(|p| {
                let op = p.pattern[0].op.clone().unwrap_or_default();
                (p.name.clone(), p.timed, op, p.amount.passes.unwrap_or(0))
            })
            .collect()
    }

    const G: &str = "[global]\nfilesize=4k\nnrfiles=20\n";

    /// Each engine is the fileset test of its calls: setup where fio sets up, the timed op,
    /// nrfiles files per thread by absolute path, and the job's report in fio's direction.
    #[test]
    fn each_engine_is_a_fileset_test_of_its_call() {
        // (engine lines, prefill, its phases: (name, timed, op))
        type Case = (&'static str, bool, &'static [(&'static str, bool, &'static str)]);
        let cases: [Case; 6] = [
            (
                "filecreate\ncreate_on_open=1\nopenfiles=1",
                false,
                &[("filecreate", true, "opencreate")],
            ),
            ("filestat", true, &[("filestat", true, "stat")]),
            ("filedelete", true, &[("filedelete", true, "unlink")]),
            ("dircreate\ncreate_on_open=1", false, &[("dircreate", true, "mkdirslot")]),
            ("dirstat", false, &[("setup", false, "mkdirslot"), ("dirstat", true, "stat")]),
            (
                "dirdelete",
                false,
                &[("setup", false, "mkdirslot"), ("dirdelete", true, "rmdirslot")],
            ),
        ];
        for (engine, prefill, want) in cases {
            let t = tr(&format!("{G}ioengine={engine}\nnumjobs=3\n[j]\n"))
                .unwrap_or_else(|e| panic!("{engine}: {e}"));
            let test = &t.spec.tests[0];
            let fs = test.fileset.as_ref().expect("a fileset test");
            assert_eq!(
                (fs.count, fs.flat, fs.prefill),
                (Some(60), Some(true), prefill),
                "{engine}"
            );
            assert_eq!(fs.paths.as_deref(), Some("absolute"), "{engine}");
            assert!(test.file.is_none() && test.threads == 3, "{engine}");
            let got: Vec<(String, bool, String, u32)> = phases(&t);
            let want: Vec<(String, bool, String, u32)> = want
                .iter()
                .map(|(n, timed, op)| (n.to_string(), *timed, op.to_string(), 1))
                .collect();
            assert_eq!(got, want, "{engine}");
            let r = t.jobs[0].fileop.expect("reported as fio's fake I/O");
            assert!(!r.write && r.bytes == 4096, "{engine}: {r:?}");
        }
        // rw=write: fio records the call as a write.
        let t = tr(&format!("{G}ioengine=filestat\nrw=write\n[j]\n")).unwrap();
        assert!(t.jobs[0].fileop.is_some_and(|r| r.write && r.op == OpKind::Stat));
    }

    /// stat_type picks the call; loops repeats a stat engine's pass.
    #[test]
    fn stat_type_and_loops() {
        for (st, op) in [("stat", "stat"), ("lstat", "lstat"), ("statx", "statx")] {
            let t = tr(&format!("{G}ioengine=dirstat\nstat_type={st}\nloops=3\n[j]\n")).unwrap();
            assert_eq!(phases(&t)[1].2, op);
            assert_eq!(phases(&t)[1].3, 3);
        }
        let t = tr(&format!("{G}ioengine=filestat\nstat_type=statx\n[j]\n")).unwrap();
        assert!(
            t.notes.iter().any(|n| n.contains("[differs from fio: statx-realpath]")),
            "{:?}",
            t.notes
        );
    }

    /// The jobs of one group are one test: their threads in turn, each job's place a range of
    /// them, the files nrfiles per thread; notes said once.
    #[test]
    fn a_group_of_jobs_is_one_test_of_their_threads() {
        let t =
            tr(&format!("{G}ioengine=filestat\n[a]\nnumjobs=2\n[b]\n[c]\nnumjobs=3\n")).unwrap();
        assert_eq!(t.spec.tests.len(), 1);
        let test = &t.spec.tests[0];
        assert_eq!(test.threads, 6);
        assert_eq!(test.fileset.as_ref().and_then(|f| f.count), Some(120));
        let places: Vec<(&str, u32, u32)> =
            t.jobs.iter().map(|p| (p.name.as_str(), p.first_thread, p.threads)).collect();
        assert_eq!(places, [("a", 0, 2), ("b", 2, 1), ("c", 3, 3)]);
        assert!(t.jobs.iter().all(|p| p.role.is_none() && p.test_id == test.id));
        let named = t.notes.iter().filter(|n| n.contains("fileops-names")).count();
        assert_eq!(named, 1, "{:?}", t.notes);
        // After a stonewall, a test of its own.
        let t = tr(&format!("{G}ioengine=filestat\n[a]\n[b]\nstonewall\n")).unwrap();
        assert_eq!(t.spec.tests.len(), 2);
        assert_eq!(t.jobs[1].first_thread, 0);
    }

    /// What fsbench cannot run as fio does is refused at its line, saying why.
    #[test]
    fn refusals_name_the_line_and_the_reason() {
        let cases: [(&str, &str, &str); 14] = [
            (
                "ioengine=filestat\nfilesize=8k\nnrfiles=2\n[j]\n",
                "t.fio:3: `filesize`",
                "equal to bs",
            ),
            ("ioengine=filestat\nnrfiles=2\n[j]\n", "t.fio:4: `[j]`", "needs filesize"),
            (
                "ioengine=filestat\nfilesize=4k\nstat_type=fstat\n[j]\n",
                "t.fio:4: `stat_type`",
                "stat, lstat or statx",
            ),
            (
                "ioengine=filedelete\nfilesize=4k\nstat_type=lstat\n[j]\n",
                "t.fio:4: `stat_type`",
                "filestat and dirstat",
            ),
            ("ioengine=filecreate\nfilesize=4k\n[j]\n", "`create_on_open`", "create_on_open=1"),
            (
                "ioengine=dircreate\nfilesize=4k\ncreate_on_open=0\n[j]\n",
                "t.fio:4: `create_on_open`",
                "timed run",
            ),
            (
                "ioengine=filecreate\nfilesize=4k\ncreate_on_open=1\nnrfiles=4\n[j]\n",
                "`openfiles`",
                "openfiles=1",
            ),
            (
                "ioengine=filecreate\nfilesize=4k\ncreate_on_open=1\nnrfiles=4\nopenfiles=2\n[j]\n",
                "t.fio:6: `openfiles`",
                "closes each at once",
            ),
            (
                "ioengine=filedelete\nfilesize=4k\nloops=2\n[j]\n",
                "t.fio:4: `loops`",
                "only filestat and dirstat",
            ),
            (
                "ioengine=filestat\nfilesize=4k\nruntime=5\n[j]\n",
                "t.fio:4: `runtime`",
                "not taken with ioengine=filestat",
            ),
            (
                "ioengine=filestat\nfilesize=4k\nsize=1m\n[j]\n",
                "t.fio:3: `filesize`",
                "nrfiles × filesize",
            ),
            (
                "ioengine=filedelete\nfilesize=4k\ngtod_reduce=1\n[j]\n",
                "t.fio:4: `gtod_reduce`",
                "records no latency",
            ),
            (
                "filesize=4k\n[a]\nioengine=filestat\n[b]\nioengine=filedelete\n",
                "t.fio:5: `[b]`",
                "same operation",
            ),
            (
                "filesize=4k\n[a]\nioengine=filestat\n[b]\nsize=1m\n",
                "t.fio:5: `[b]`",
                "cannot run beside a job on a data file",
            ),
        ];
        for (body, at, why) in cases {
            let e = err(&format!("[global]\n{body}"));
            assert!(e.contains(at) && e.contains(why), "{body}: {e}");
        }
        // A data job first, a file-operation job beside it: refused too.
        let e = err("[global]\nfilesize=4k\n[a]\nsize=1m\n[b]\nioengine=filestat\n");
        assert!(e.contains("`[b]`") && e.contains("stonewall"), "{e}");
    }
}
