//! A data test's files: one file shared by every thread (each taking its own region for
//! sequential ops), or one per thread, or several per thread (fio's `nrfiles`, thread-major
//! in `paths`); opened by each phase's workers and read and written at
//! offsets through the engine's queue. A thread's own files are named `t<ID>.<thread>.dat`
//! (`t<ID>.<thread>.<file>.dat`), or by the test's `name_format` (fio's `filename_format`).
//!
//! The file is fsbench's own, named and removed by it in its work directory, or one the job
//! names ([`NamedFile`], fio's `filename=/mnt/x.dat`): the user's, used where it is, laid out
//! only if absent or shorter (as fio), opened without following a final symlink, and kept
//! unless the job says `unlink`.

use super::{removes_files, SetUp, TestFiles, WorkerShare};
use crate::engine::runner::{EngineOptions, Progress};
use crate::engine::worker::{FileWork, MoreFiles, PaddedCounter, Work};
use crate::model::failure::EngineError;
use crate::model::job::{Amount, NamedFile, PhaseDef, Preallocate, TestDef};
use crate::model::result::{PhaseResult, RepResult, Warning};
use std::path::{Path, PathBuf};

/// A data test's files.
pub(super) struct DataFiles {
    /// Their paths: one (shared) or one per thread of this process.
    paths: Vec<PathBuf>,
    /// Per thread, the counter its progress (bytes) is read from; made for each phase.
    counters: Vec<PaddedCounter>,
    /// The files are an earlier repetition's, laid out and intact: the set-up has nothing to
    /// write ([`crate::engine::keep`]).
    laid_out: bool,
    /// The set-up laid them out without data (`file.preallocate`, fio's fallocate).
    preallocated: bool,
}

impl DataFiles {
    /// Name the test's files under `dir` (and remove what an earlier run left there, unless
    /// `kept`: an earlier repetition left them laid out for this one, which are used when
    /// every one is there at its full size). With several processes in one directory
    /// ([`EngineOptions::share`]), a shared file is one for all of them; files of one thread
    /// get the process's index in their names. A named file is checked ([`check_named`]) and
    /// never removed here.
    pub(super) fn make(
        test: &TestDef,
        dir: &Path,
        opts: &EngineOptions,
        kept: bool,
    ) -> Result<DataFiles, EngineError> {
        if let Some(named) = &test.files.named {
            // Its content is the user's, not the verified pattern (unless the test itself asks
            // for the check, as a fio job with `verify=` on a file it wrote); and it is one file
            // for one process.
            if (opts.verify && !test.verify) || opts.share.is_some() {
                return Err(EngineError::unsupported(format!(
                    "{}: a file the job names cannot be used with --verify (a test's own `verify = true` can) or several processes; leave the path out (fsbench's own file)",
                    named.path.display()
                )));
            }
            let len = check_named(named)?;
            on_target(named, dir)?;
            let size = file_size(test, opts);
            let laid_out = len.is_some_and(|len| len >= size);
            return Ok(DataFiles {
                paths: vec![named.path.clone()],
                counters: Vec::new(),
                laid_out,
                preallocated: false,
            });
        }
        if let Some(run) = &test.files.run_file {
            return run_file(test, run, dir, opts);
        }
        let paths: Vec<PathBuf> = if test.files.shared {
            vec![one_file(test, dir)]
        } else if let Some(p) = test.files.per_thread {
            // Several files per thread (fio's nrfiles): thread k's file j, thread-major.
            if opts.verify {
                return Err(EngineError::unsupported(
                    "--verify with several files per thread (file.per_thread): the check reads one file per thread; leave --verify out or set file.per_thread = 1".to_string(),
                ));
            }
            let r = opts.share.map(|s| format!("r{}.", s.index)).unwrap_or_default();
            (0..test.threads)
                .flat_map(|k| (0..p.files).map(move |j| (k, j)))
                .map(|(k, j)| match test.files.own_name(k, j) {
                    Some(name) => dir.join(format!("{r}{name}")),
                    None => dir.join(format!("t{}.{r}{k}.{j}.dat", test.id)),
                })
                .collect()
        } else if test.files.name_format.is_some() {
            // The test's names (fio's `filename_format`); a process sharing the directory
            // with others puts its index first, as fio's client prefix (`unique_filename`).
            let r = opts.share.map(|s| format!("r{}.", s.index)).unwrap_or_default();
            (0..test.threads)
                .filter_map(|k| test.files.own_name(k, 0))
                .map(|name| dir.join(format!("{r}{name}")))
                .collect()
        } else if let Some(s) = opts.share {
            let i = s.index;
            (0..test.threads).map(|k| dir.join(format!("t{}.r{i}.{k}.dat", test.id))).collect()
        } else {
            (0..test.threads).map(|k| dir.join(format!("t{}.{k}.dat", test.id))).collect()
        };
        let size = file_size(test, opts);
        let intact = |p: &PathBuf| {
            std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.len() == size)
        };
        let laid_out = kept && paths.iter().all(intact);
        let files = DataFiles { paths, counters: Vec::new(), laid_out, preallocated: false };
        if !laid_out {
            files.remove_created_by(test, opts);
        }
        Ok(files)
    }

    /// Remove the files fsbench made (never a named file: it is the user's; nor a file of the
    /// run: the later tests find it).
    fn remove_created_by(&self, test: &TestDef, opts: &EngineOptions) {
        let own = test.files.named.is_none() && test.files.run_file.is_none();
        if own && removes_files(test, opts) {
            for p in &self.paths {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

impl TestFiles for DataFiles {
    fn preflight(&self, test: &TestDef) -> Result<(), EngineError> {
        let direct = test.phases.iter().any(|p| p.open.direct)
            || test.roles.iter().any(|r| r.phase.open.direct);
        if !direct {
            return Ok(());
        }
        // O_DIRECT refused or misaligned: this test's failure, before any file is made. The
        // test's files (and its roles') are in one directory: the first one's alignment.
        let Some(file) = self.paths.first() else { return Ok(()) };
        // fsbench's own files are named by their name (their directory's path here is the
        // work directory's `/proc/self/fd/N`); a file the job names by its path.
        let shown = match (&test.files.named, file.file_name()) {
            (None, Some(name)) => Path::new(name),
            _ => file.as_path(),
        };
        crate::engine::direct::file_align(file, shown)
            .and_then(|a| crate::engine::direct::check_test(test, &a, shown))
    }

    fn set_up(&mut self, cx: &SetUp<'_>) -> Result<bool, EngineError> {
        let (test, opts) = (cx.test, cx.opts);
        // A file shared by several processes is prefilled once, whole, by the first.
        let others_fill = test.files.shared && opts.share.is_some_and(|s| s.index > 0);
        if others_fill || self.laid_out {
            return Ok(true);
        }
        if !test.files.prefill {
            // fio's `fallocate` of a write job's file (untimed, before the job).
            if let Some(how) = test.files.preallocate {
                let size = file_size(test, opts);
                preallocate(&self.paths, size, how, test.files.named.is_some())
                    .map_err(|e| e.at("setup"))?;
                self.preallocated = true;
            }
            return Ok(true);
        }
        cx.progress.phase_start(test, cx.rep, "setup", Some(test.footprint_bytes()));
        let size = file_size(test, opts);
        let verify = opts.verify.then_some(opts.seed);
        let named = test.files.named.is_some();
        let r = fill(&self.paths, size, opts.compress_percent, cx.seed, verify, cx.progress, named);
        cx.progress.phase_end();
        r.map_err(|e| e.at("setup"))
    }

    fn phase_seed(&self, seed: u64, _pi: usize) -> u64 {
        // Every data phase of a repetition has the repetition's seed (kept, so that runs
        // repeat their operations).
        seed
    }

    fn start_progress(&self, test: &TestDef, rep: u32, phase: &PhaseDef, progress: &dyn Progress) {
        progress.phase_start(test, rep, &phase.name, expected_bytes(test, phase))
    }

    fn all_exist(&self) -> bool {
        self.paths.iter().all(|p| p.exists())
    }

    fn residency_files(&self) -> Vec<PathBuf> {
        self.paths.clone()
    }

    fn sampled(&self) -> bool {
        false
    }

    fn reused(&self) -> bool {
        self.laid_out
    }

    fn evictable(&self) -> &[PathBuf] {
        &self.paths
    }

    /// A data test's files' pages, as fio's `invalidate` (the engine verifies their residency
    /// and empties everything when that was not enough).
    fn eviction_scope(&self) -> crate::engine::Scope {
        crate::engine::Scope::Files
    }

    fn shares<'a>(
        &'a mut self,
        test: &'a TestDef,
        _phase: &'a PhaseDef,
        opts: &'a EngineOptions,
    ) -> Vec<WorkerShare<'a>> {
        let n = test.threads as usize;
        self.counters = (0..n).map(|_| PaddedCounter::default()).collect();
        let size = file_size(test, opts);
        // Threads of all processes sharing the file, and this process's first among them.
        let (first, all) = match opts.share {
            Some(s) if test.files.shared => (s.index as usize * n, s.count as usize * n),
            _ => (0, n),
        };
        let (paths, counters) = (&self.paths, &self.counters);
        (0..n)
            .map(|k| {
                let (path, region_start, region_len) = if let Some(r) = test.files.region {
                    // fio's offset and offset_increment: thread k's own region.
                    let path = if test.files.shared { &paths[0] } else { &paths[k] };
                    let g = if test.files.shared { first + k } else { k };
                    (path, r.start(g as u64), r.len)
                } else if test.files.whole {
                    // Every thread the whole file, as fio's jobs on one file.
                    (&paths[0], 0, size)
                } else if test.files.shared {
                    let g = first + k;
                    let per = size / all as u64;
                    // The last thread takes the remainder.
                    let len = if g == all - 1 { size - per * g as u64 } else { per };
                    (&paths[0], per * g as u64, len)
                } else if let Some(p) = test.files.per_thread {
                    (&paths[k * p.files as usize], 0, size)
                } else {
                    (&paths[k], 0, size)
                };
                // Several files per thread: thread k's, in order.
                let more = test.files.per_thread.map(|p| {
                    let n = p.files as usize;
                    MoreFiles { paths: &paths[k * n..(k + 1) * n], service: p.service }
                });
                // A shared file is file 0; otherwise thread k's file is file k.
                let file = if test.files.shared { 0 } else { k as u64 };
                let verify = opts.verify.then_some((opts.seed, file));
                let nofollow = test.files.named.is_some();
                let random_in_region = test.files.region.is_some();
                let work = FileWork {
                    path,
                    file_size: size,
                    region_start,
                    region_len,
                    verify,
                    nofollow,
                    random_in_region,
                    more,
                };
                (Work::File(work), &counters[k].0)
            })
            .collect()
    }

    fn laid_out_empty(&self) -> bool {
        self.preallocated
    }

    fn renew_created(&self, test: &TestDef, opts: &EngineOptions) -> Result<(), EngineError> {
        self.remove_created_by(test, opts);
        match test.files.preallocate {
            Some(how) if !test.files.prefill => {
                let named = test.files.named.is_some();
                preallocate(&self.paths, file_size(test, opts), how, named)
            }
            _ => Ok(()),
        }
    }

    fn verify(
        &self,
        test: &TestDef,
        opts: &EngineOptions,
        rep: u32,
        _phases: &[PhaseResult],
    ) -> Result<Warning, EngineError> {
        let c = crate::engine::verify::check_files(&self.paths, opts.seed, test.files.prefill)?;
        Ok(Warning::Verified {
            repetition: rep + 1,
            blocks_intact: c.intact,
            blocks_unwritten: c.unwritten,
            nanos: c.nanos,
        })
    }

    fn finish_result(&self, complete: bool, r: &mut RepResult) {
        if complete && self.all_exist() {
            // After the last phase, outside every timing: FIEMAP with its sync flag.
            r.extents = Some(crate::observe::extents::summarize(&self.paths));
        }
    }

    fn remove(self: Box<Self>, test: &TestDef, opts: &EngineOptions) {
        match &test.files.named {
            // `unlink=1`: the job asked for its file to go; only while it is a regular file.
            Some(named) if named.unlink => {
                if std::fs::symlink_metadata(&named.path).is_ok_and(|m| m.is_file()) {
                    let _ = std::fs::remove_file(&named.path);
                }
            }
            Some(_) => {}
            None => match &test.files.run_file {
                // Kept for the run's later tests, removed with the work directory.
                Some(run) if run.unlink => {
                    for p in &self.paths {
                        let _ = std::fs::remove_file(p);
                    }
                }
                Some(_) => {}
                None => self.remove_created_by(test, opts),
            },
        }
    }
}

/// The one file of a test whose threads share it (`files.shared`): the named file, else the
/// file of the run it is ([`run_file`]), else `t<ID>.dat` in `dir` (one for every process
/// sharing the directory). A role on the test's file (`same_file`) opens this one.
pub fn one_file(test: &TestDef, dir: &Path) -> PathBuf {
    match (&test.files.named, &test.files.run_file) {
        (Some(named), _) => named.path.clone(),
        (None, Some(run)) => dir.join(run.file_name()),
        (None, None) => dir.join(format!("t{}.dat", test.id)),
    }
}

/// A file of the run ([`crate::model::job::RunFile`]), `run.NAME` in the work directory: the
/// first test naming it starts without it (what an earlier repetition left is removed); a
/// later test uses it as the tests before it left it, laid out only if absent or shorter than
/// the test's size, as fio lays out a file a job finds.
fn run_file(
    test: &TestDef,
    run: &crate::model::job::RunFile,
    dir: &Path,
    opts: &EngineOptions,
) -> Result<DataFiles, EngineError> {
    let path = one_file(test, dir);
    // Its content is the earlier tests', not the pattern --verify checks (a test's own
    // `verify = true`, as a fio job's `verify=`, checks what the jobs wrote); and the tests
    // sharing it run in one process's order.
    if (opts.verify && !test.verify && !run.verify_writes) || opts.share.is_some() {
        return Err(EngineError::unsupported(format!(
            "the run's file {}: a file the run's tests share cannot be used with --verify (a test's own `verify = true` can) or several processes",
            run.name
        )));
    }
    if run.first {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(EngineError::io("removing", Some(path), &e)),
        }
    }
    let len = match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() => Some(m.len()),
        Ok(_) => {
            return Err(EngineError::Setup {
                what: format!("the run's file {}", path.display()),
                reason: "is not a regular file".into(),
                errno: None,
            })
        }
        Err(_) => None,
    };
    let laid_out = len.is_some_and(|len| len >= file_size(test, opts));
    Ok(DataFiles { paths: vec![path], counters: Vec::new(), laid_out, preallocated: false })
}

/// A test whose file of the run takes its size from the file (`take_size`): the test with the
/// file's length in the work directory `dir`, rounded down to the block, as its file's size
/// (fio's job without `size` after a `fill_device` job on its file). `None`: the test has a
/// size of its own. Refused, as fio refuses it, when the file is absent or shorter than one
/// block.
pub(crate) fn sized_from_run_file(
    test: &TestDef,
    dir: &Path,
) -> Option<Result<TestDef, EngineError>> {
    let run = test.files.run_file.as_ref()?;
    let block = run.take_size?;
    let path = dir.join(run.file_name());
    let len = std::fs::symlink_metadata(&path).ok().filter(|m| m.is_file()).map_or(0, |m| m.len());
    let size = len / block * block;
    if size == 0 {
        return Some(Err(EngineError::Setup {
            what: format!("the run's file {}", run.name),
            reason: format!(
                "has {len} bytes, less than one block of {block}, and the test takes its size from it (fio: \"you need to specify size=\"); the earlier test that fills it wrote nothing"
            ),
            errno: None,
        }));
    }
    let mut t = test.clone();
    t.files.size = crate::model::job::SizeDist::Fixed(size);
    Some(Ok(t))
}

/// A named file must be on the filesystem under test (the work directory's): the target's
/// eviction, device counters and the results' filesystem are that one's, and `compare` runs
/// each configuration on its own target, where one fixed path would measure one filesystem for
/// all of them.
fn on_target(named: &NamedFile, dir: &Path) -> Result<(), EngineError> {
    use std::os::unix::fs::MetadataExt;
    let parent = named.path.parent().unwrap_or(Path::new("/"));
    let dev = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.dev())
            .map_err(|e| EngineError::io("checking the directory", Some(p.to_path_buf()), &e))
    };
    if dev(parent)? != dev(dir)? {
        return Err(EngineError::unsupported(format!(
            "the job's file {} is not on the filesystem under test: run in a directory on its filesystem (--dir, or the job's directory=), or give the file a plain name",
            named.path.display()
        )));
    }
    Ok(())
}

/// Check a named file before anything touches it: the path's directories exist and none is a
/// symlink in a directory another user can write (who could swap it, as the work directory's
/// checks guard against in [`crate::engine::workspace`]); the file itself, if it exists, is a
/// regular file and no symlink. Its length, if it exists.
pub(super) fn check_named(named: &NamedFile) -> Result<Option<u64>, EngineError> {
    use std::os::unix::fs::MetadataExt;
    let path = &named.path;
    let what = format!("the job's file {}", path.display());
    let refuse = |reason: String| EngineError::Setup { what: what.clone(), reason, errno: None };
    let me = rustix::process::geteuid().as_raw();
    let mut here = PathBuf::from("/");
    let parent = path.parent().unwrap_or(Path::new("/"));
    for c in parent.components().skip(1) {
        let dir = here.clone();
        here.push(c);
        let m = std::fs::symlink_metadata(&here)
            .map_err(|e| EngineError::io("checking the directory", Some(here.clone()), &e))?;
        if !m.file_type().is_symlink() {
            if !m.is_dir() {
                return Err(refuse(format!("{} is not a directory", here.display())));
            }
            continue;
        }
        let d = std::fs::metadata(&dir)
            .map_err(|e| EngineError::io("checking the directory", Some(dir.clone()), &e))?;
        let others = (d.uid() != 0 && d.uid() != me) || d.mode() & 0o022 != 0;
        if others {
            return Err(refuse(format!("{} is a symlink in {}, which another user can write: they could point it elsewhere and redirect fsbench's writes; name the path without it", here.display(), dir.display())));
        }
        // A link of ours (or root's): follow it, and check what it leads to as well.
        here = std::fs::canonicalize(&here)
            .map_err(|e| EngineError::io("resolving", Some(here.clone()), &e))?;
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(EngineError::io("checking", Some(path.clone()), &e)),
        Ok(m) if m.file_type().is_symlink() => Err(refuse(
            "is a symbolic link: fsbench opens a named file without following a link".into(),
        )),
        Ok(m) if !m.is_file() => Err(refuse(format!(
            "is not a regular file ({})",
            crate::sys::regular::kind(&m.file_type())
        ))),
        Ok(m) => Ok(Some(m.len())),
    }
}

/// Size of a test's file: a shared file used by several processes is as many times larger.
fn file_size(test: &TestDef, opts: &EngineOptions) -> u64 {
    match opts.share {
        Some(s) if test.files.shared && !test.files.whole => {
            test.files.size_bytes() * s.count as u64
        }
        _ => test.files.size_bytes(),
    }
}

/// Bytes a data phase moves over all threads, when known (for progress).
fn expected_bytes(test: &TestDef, phase: &PhaseDef) -> Option<u64> {
    let t = test.threads as u64;
    match phase.amount {
        Amount::Bytes(b) => Some(b * t),
        Amount::Passes(p) => Some(test.footprint_bytes() * p as u64),
        Amount::Ops(k) => {
            let data: Vec<_> = phase.pattern.data().iter().filter(|o| o.kind.is_data()).collect();
            if data.is_empty() {
                return None;
            }
            let mean = data.iter().map(|o| o.size.mean()).sum::<f64>() / data.len() as f64;
            let share = data.len() as f64 / phase.pattern.len() as f64;
            Some((k as f64 * share * mean) as u64 * t)
        }
        Amount::Seconds(_) | Amount::Fill(_) | Amount::Share(_) => None,
    }
}

/// Write each file sequentially with 1 MiB writes and fsync it (with `verify`: the verified
/// content of its seed). `Ok(false)` if interrupted.
pub fn prefill(
    paths: &[PathBuf],
    size: u64,
    compress_percent: u8,
    seed: u64,
    verify: Option<u64>,
    progress: &dyn Progress,
) -> Result<bool, EngineError> {
    fill(paths, size, compress_percent, seed, verify, progress, false)
}

/// Lay out each file that is absent or shorter than `size` as `how` says (fio's `fallocate`
/// for a write job's file), untimed: created (`O_CREAT`, never truncated), then given its
/// blocks, its size or both. A filesystem without fallocate (EOPNOTSUPP) leaves the file as it
/// is, as fio's native mode does. `named`: the files are the job's (`O_NOFOLLOW`).
pub fn preallocate(
    paths: &[PathBuf],
    size: u64,
    how: Preallocate,
    named: bool,
) -> Result<(), EngineError> {
    use rustix::fs::FallocateFlags;
    use std::os::unix::fs::OpenOptionsExt;
    for p in paths {
        let mut oo = std::fs::OpenOptions::new();
        oo.write(true).create(true).mode(0o644);
        if named {
            oo.custom_flags(libc::O_NOFOLLOW);
        }
        let f = oo.open(p).map_err(|e| EngineError::io("creating", Some(p.clone()), &e))?;
        let m = f.metadata().map_err(|e| EngineError::io("fstat", Some(p.clone()), &e))?;
        if !m.is_file() || (m.len() >= size && how != Preallocate::KeepSize) {
            // Not a regular file: the phase's own open says so. Long enough: written into.
            continue;
        }
        let r = match how {
            Preallocate::Fallocate => rustix::fs::fallocate(&f, FallocateFlags::empty(), 0, size),
            Preallocate::KeepSize => rustix::fs::fallocate(&f, FallocateFlags::KEEP_SIZE, 0, size),
            Preallocate::Truncate => rustix::fs::ftruncate(&f, size),
        };
        match r {
            Ok(()) | Err(rustix::io::Errno::OPNOTSUPP) => {}
            Err(e) => {
                let what = format!("laying out ({})", how.name());
                return Err(EngineError::io(&what, Some(p.clone()), &e.into()));
            }
        }
    }
    Ok(())
}

/// [`prefill`]; `named`: the files are the job's (opened with `O_NOFOLLOW`, and checked to be
/// regular files once open).
fn fill(
    paths: &[PathBuf],
    size: u64,
    compress_percent: u8,
    seed: u64,
    verify: Option<u64>,
    progress: &dyn Progress,
    named: bool,
) -> Result<bool, EngineError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    const CHUNK: usize = 1 << 20;
    let mut done = 0u64;
    for (i, p) in paths.iter().enumerate() {
        let mut pool = match verify {
            Some(vseed) => crate::engine::buffer::WritePool::verified(CHUNK, 1, vseed, i as u64),
            None => crate::engine::buffer::WritePool::new(CHUNK, compress_percent, seed ^ 0xf111),
        };
        let mut oo = std::fs::OpenOptions::new();
        oo.write(true).create(true).truncate(true);
        if named {
            oo.custom_flags(libc::O_NOFOLLOW);
        }
        let mut f = oo.open(p).map_err(|e| EngineError::io("creating", Some(p.clone()), &e))?;
        if named {
            let m = f.metadata().map_err(|e| EngineError::io("fstat", Some(p.clone()), &e))?;
            if !m.is_file() {
                return Err(EngineError::Setup {
                    what: format!("the job's file {}", p.display()),
                    reason: format!(
                        "is not a regular file ({})",
                        crate::sys::regular::kind(&m.file_type())
                    ),
                    errno: None,
                });
            }
        }
        let mut left = size;
        while left > 0 {
            if crate::sys::signals::interrupted() {
                return Ok(false);
            }
            let n = left.min(CHUNK as u64) as usize;
            f.write_all(pool.window_at(0, size - left, n))
                .map_err(|e| EngineError::io("writing", Some(p.clone()), &e))?;
            left -= n as u64;
            done += n as u64;
            progress.phase_progress(done);
        }
        f.sync_all().map_err(|e| EngineError::io("fsync", Some(p.clone()), &e))?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// `preallocate` gives an absent file its blocks, its size or both, as the mode says, and
    /// keeps what a file already holds: a shorter one gets the rest, a long enough one is left
    /// alone.
    #[test]
    fn preallocate_lays_out_absent_and_short_files_and_keeps_their_data() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let size = 1u64 << 20;
        let at = |name: &str| d.path().join(name);
        let laid = |name: &str, how| {
            preallocate(&[at(name)], size, how, false).unwrap();
            let m = std::fs::metadata(at(name)).unwrap();
            (m.len(), m.blocks() * 512)
        };
        let (len, bytes) = laid("f", Preallocate::Fallocate);
        assert!(len == size && bytes >= size, "{len} {bytes}");
        let (len, bytes) = laid("k", Preallocate::KeepSize);
        assert!(len == 0 && bytes >= size, "{len} {bytes}");
        assert_eq!(laid("t", Preallocate::Truncate), (size, 0));
        std::fs::write(at("short"), [7u8; 4096]).unwrap();
        let (len, bytes) = laid("short", Preallocate::Fallocate);
        assert!(len == size && bytes >= size, "{len} {bytes}");
        let data = std::fs::read(at("short")).unwrap();
        assert!(data[..4096].iter().all(|&b| b == 7) && data[4096..].iter().all(|&b| b == 0));
        std::fs::write(at("long"), vec![9u8; 2 << 20]).unwrap();
        assert_eq!(laid("long", Preallocate::Truncate).0, 2 << 20, "a longer file is left alone");
    }

    fn named(p: PathBuf) -> NamedFile {
        NamedFile { path: p, unlink: false }
    }

    /// Two tests on one file of the run, resolved as a suite (the first names it first).
    fn run_file_tests(extra: &str) -> Vec<TestDef> {
        let one = |id: &str, file: &str| {
            format!("[[test]]\nid = \"{id}\"\nname = \"{id}\"\nfile = {{ size = \"64K\", run_file = \"d.dat\"{file} }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ bytes = \"64K\" }}\n")
        };
        let text = format!("{}{}", one("a", ""), one("b", extra));
        let spec = crate::workload::spec::parse(&text, "w.toml").unwrap();
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        crate::workload::validate::resolve(&spec, "w.toml", &ctx).unwrap().tests
    }

    /// A file of the run: the first test naming it starts without it (what a repetition left
    /// is removed), a later test finds it and lays nothing out when it is long enough (and
    /// lays it out when shorter); neither removes it, unless `unlink`. A test taking its size
    /// from the file gets the file's length rounded down to the block, and fails without one.
    #[test]
    fn a_file_of_the_run_is_kept_from_test_to_test() {
        let t = tempfile::tempdir().unwrap();
        let opts = EngineOptions::default();
        let tests = run_file_tests("");
        let (a, b) = (&tests[0], &tests[1]);
        let path = t.path().join("run.d.dat");
        std::fs::write(&path, vec![1u8; 64 << 10]).unwrap();
        let f = DataFiles::make(a, t.path(), &opts, false).unwrap();
        assert!(!path.exists() && !f.laid_out, "the first test starts without it");
        std::fs::write(&path, vec![1u8; 64 << 10]).unwrap();
        let f = DataFiles::make(b, t.path(), &opts, false).unwrap();
        assert!(f.laid_out && path.exists(), "a later test finds it laid out");
        Box::new(f).remove(b, &opts);
        assert!(path.exists(), "kept for the run's later tests");
        std::fs::write(&path, vec![1u8; 4 << 10]).unwrap();
        let f = DataFiles::make(b, t.path(), &opts, false).unwrap();
        assert!(!f.laid_out, "shorter than the test's size: laid out");
        let tests = run_file_tests(", unlink = true");
        Box::new(f).remove(&tests[1], &opts);
        assert!(!path.exists(), "unlink=1 removes it");
        let tests = run_file_tests(", take_size = \"4K\"");
        let e = sized_from_run_file(&tests[1], t.path()).unwrap().unwrap_err().to_string();
        assert!(e.contains("less than one block"), "{e}");
        std::fs::write(&path, vec![1u8; (1 << 20) + 100]).unwrap();
        let sized = sized_from_run_file(&tests[1], t.path()).unwrap().unwrap();
        assert_eq!(sized.files.size_bytes(), 1 << 20, "rounded down to 4K");
        assert!(sized_from_run_file(&tests[0], t.path()).is_none(), "a size of its own");
    }

    /// A symlinked directory on the path is refused where another user could swap it (its
    /// directory is writable by others), and followed where only we can; the file itself is
    /// never a symlink or anything but a regular file.
    #[test]
    fn a_named_file_is_checked_before_it_is_touched() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::os::unix::fs::symlink(&real, open.join("link")).unwrap();
        let e = check_named(&named(open.join("link/f.dat"))).unwrap_err().to_string();
        assert!(e.contains("which another user can write"), "{e}");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check_named(&named(open.join("link/f.dat"))).unwrap(), None);
        std::fs::write(real.join("f.dat"), b"1234").unwrap();
        assert_eq!(check_named(&named(open.join("link/f.dat"))).unwrap(), Some(4));
        std::os::unix::fs::symlink(real.join("f.dat"), real.join("l.dat")).unwrap();
        let e = check_named(&named(real.join("l.dat"))).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = check_named(&named(real.clone())).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let e = check_named(&named(real.join("f.dat/x"))).unwrap_err().to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }
}
