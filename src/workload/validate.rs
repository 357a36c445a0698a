//! From the written spec to the typed model: resolve sizes, check every value, before any I/O.
//! One validator for every test: a test works on a set of files, one file (shared by the
//! threads), one per thread, or a fileset of many slots; what differs between them is checked
//! where it differs (the files, the ops of a pattern) and everything else (ids, threads, the
//! engine, phases, amounts, syncs, cache preconditions) by the same functions. Accepted words,
//! bounds and defaults come from the key table ([`super::keys`]).
//!
//! Each error names where it is (test, phase, pattern entry) and how to fix it.

use super::engines::EngineCheckError;
use super::keys;
use super::size::SizeDistSpec;
use super::spec::{
    AmountSpec, EngineKeys, FileSpec, FilesetSpec, OpSpec, PhaseSpec, RoleSpec, SuiteSpec,
    SyncSpec, TestSpec,
};
use super::WorkloadError;
use crate::model::job::*;
use crate::model::scale::Scale;
use crate::model::sched::{parse_cpu_list, CpuAffinity, IoPrio, ThreadSched};
use crate::model::units::fmt_bytes;

/// What resolution needs from the outside world.
#[derive(Debug, Clone, Copy)]
pub struct ResolveCtx {
    /// Size scaling.
    pub scale: Scale,
    /// Bytes of free memory (for `freemem/N` sizes).
    pub free_memory: u64,
}

/// Largest thread count accepted.
pub const MAX_THREADS: u32 = keys::THREADS.max() as u32;
/// Largest single transfer accepted.
pub const MAX_OP_BYTES: u64 = 256 << 20;

/// Largest number of files in a fileset (the slot bitsets stay small: 12.5 MB at this count).
pub const MAX_FILES: u64 = keys::FILESET_COUNT.max();
/// Largest file in a fileset.
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// Default chunk of whole-file writes and reads.
pub const DEFAULT_WRITE_SIZE: u64 = 64 << 10;

/// What kind of files a test works on, which decides the ops its patterns may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// One file, or one per thread, read and written at offsets.
    Data,
    /// A set of many slots, with whole-file and namespace ops.
    Fileset,
}

struct Loc<'a> {
    origin: &'a str,
    test: &'a str,
    phase: Option<&'a str>,
    entry: Option<usize>,
}

impl Loc<'_> {
    /// Where this is, in words (`test 1, phase `read`, pattern entry 2`).
    fn location(&self) -> String {
        let mut location = format!("test {}", self.test);
        if let Some(p) = self.phase {
            location.push_str(&format!(", phase `{p}`"));
        }
        if let Some(i) = self.entry {
            location.push_str(&format!(", pattern entry {}", i + 1));
        }
        location
    }

    fn err(&self, message: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::Invalid {
            origin: self.origin.to_string(),
            location: self.location(),
            message: message.to_string(),
        }
    }

    /// The engine's refusal, here.
    fn engine_err(&self, source: EngineCheckError) -> WorkloadError {
        WorkloadError::Engine {
            origin: self.origin.to_string(),
            location: self.location(),
            source: Box::new(source),
        }
    }
}

/// Validate and resolve a whole suite.
pub fn resolve(spec: &SuiteSpec, origin: &str, ctx: &ResolveCtx) -> Result<Suite, WorkloadError> {
    if spec.tests.is_empty() {
        return Err(WorkloadError::Invalid {
            origin: origin.into(),
            location: "file".into(),
            message: "no tests: add at least one [[test]] table".into(),
        });
    }
    let mut seen = std::collections::HashSet::new();
    let mut tests = Vec::with_capacity(spec.tests.len());
    for t in &spec.tests {
        super::limits::check_id(&t.id)
            .map_err(|e| WorkloadError::Id { origin: origin.into(), source: Box::new(e) })?;
        if !seen.insert(t.id.as_str()) {
            return Err(Loc { origin, test: &t.id, phase: None, entry: None }
                .err("duplicate test id; give every [[test]] its own id"));
        }
        let mut def = resolve_test(t, origin, ctx)?;
        if let Some(note) = scaled_note(&def, ctx.scale) {
            def.description = if def.description.is_empty() {
                note
            } else {
                format!("{} [{note}]", def.description)
            };
        }
        tests.push(def);
    }
    // The first test naming a file of the run starts each repetition without it.
    let mut named = std::collections::HashSet::new();
    for t in &mut tests {
        if let Some(r) = &mut t.files.run_file {
            r.first = named.insert(r.name.clone());
        }
    }
    Ok(Suite {
        name: spec.suite.name.clone().unwrap_or_else(|| origin.to_string()),
        description: spec.suite.description.clone().unwrap_or_default(),
        scale: ctx.scale,
        tests,
    })
}

/// What a test works on at a scale other than the one its description was written for (the
/// paper's): descriptions quote the paper's sizes, and a reader of a `--scale quick` table must
/// not take them for what was measured. `None` at the paper's scale.
fn scaled_note(t: &TestDef, scale: crate::model::scale::Scale) -> Option<String> {
    if scale.factor() == 1.0 {
        return None;
    }
    let b = |n: u64| {
        let s = crate::model::units::fmt_bytes(n);
        match s.strip_suffix(['K', 'M', 'G', 'T']) {
            Some(num) => format!("{num} {}iB", &s[num.len()..]),
            None => format!("{s} bytes"),
        }
    };
    let mut parts = Vec::new();
    match (t.files.size, t.files.count) {
        (SizeDist::Fixed(0), n) => parts.push(format!("{n} empty files")),
        (SizeDist::Fixed(s), 1) => parts.push(format!("a {} file", b(s))),
        (SizeDist::Fixed(s), n) => parts.push(format!("{n} files of {}", b(s))),
        (_, n) => parts.push(format!("{n} files")),
    }
    for p in t.phases.iter().filter(|p| p.timed) {
        if let Amount::Bytes(n) = p.amount {
            let timed = t.phases.iter().filter(|p| p.timed).count();
            let of = if timed > 1 { format!(" in {}", p.name) } else { String::new() };
            parts.push(format!("{} of I/O{of}", b(n)));
        }
    }
    Some(format!("at scale {scale}: {}", parts.join(", ")))
}

/// One test: its threads and engine, its files, its phases in order, its roles.
fn resolve_test(t: &TestSpec, origin: &str, ctx: &ResolveCtx) -> Result<TestDef, WorkloadError> {
    let loc = Loc { origin, test: &t.id, phase: None, entry: None };
    if t.id.trim().is_empty() || t.id.contains(',') {
        return Err(loc.err("id must be non-empty and contain no comma"));
    }
    if t.threads == 0 {
        return Err(loc.err("threads = 0: a test needs at least one thread"));
    }
    if t.threads > MAX_THREADS {
        return Err(loc.err(format!("threads = {} is more than {MAX_THREADS}", t.threads)));
    }
    let iodepth = resolve_iodepth(t, &loc)?;
    let direct = t.direct.unwrap_or(false);
    let written = written_files(t, &loc)?;
    let (engine, engine_options) = resolve_engine(t, &written, iodepth, direct, &loc)?;
    let files = resolve_files(t, written, iodepth, direct, ctx, &loc)?;
    if t.phases.is_empty() {
        return Err(loc.err("no phases: add a [[test.phase]] with a pattern and an amount"));
    }
    let phases = resolve_phases(t, &files, (&engine, iodepth, direct), ctx, origin)?;
    if !phases.iter().any(|p| p.timed) {
        return Err(loc.err("no timed phase: set timed = true on at least one phase"));
    }
    let mut roles: Vec<RoleDef> = Vec::with_capacity(t.roles.len());
    for r in &t.roles {
        let mut role = resolve_role(r, origin, &t.id, ctx)?;
        role.exitall = resolve_exitall(r.exitall.as_ref(), &loc, &format!("role `{}`", r.name))?;
        role.after = match r.after.as_deref() {
            None => None,
            Some(a) if a == t.id => Some(RoleWait::Test),
            Some(a) => match roles.iter().position(|o| o.name == a) {
                Some(i) => Some(RoleWait::Role(i)),
                None => {
                    return Err(loc.err(format!("role `{}`: after = \"{a}\" is neither the test's id nor an earlier role's name", r.name)))
                }
            },
        };
        let late = role.after.is_some() || role.delay_seconds > 0.0 || role.lead_seconds > 0.0;
        if late && role.phase.load.flow.is_some() {
            return Err(loc.err(format!("role `{}`: flow with after, delay or lead: the threads of a flow start together (a flow counts every weight from the start, as fio's), so one that starts at another time would hold the others back; leave out one of them", r.name)));
        }
        if let Some(a) = r.same_file.as_deref() {
            let test_file = t.file.is_some().then_some(&files.set);
            let owner = same_file(a, &role, (&t.id, test_file, t.verify == Some(true)), &roles)
                .map_err(|why| loc.err(format!("role `{}`: same_file = \"{a}\": {why}", r.name)))?;
            role.same_file = Some(owner);
        }
        roles.push(role);
        if t.roles.iter().filter(|o| o.name == r.name).count() > 1 {
            return Err(
                loc.err(format!("two roles are named `{}`: give each its own name", r.name))
            );
        }
    }
    let test = TestDef {
        id: t.id.clone(),
        name: t.name.clone(),
        description: t.description.clone(),
        notes: t.notes.clone(),
        threads: t.threads,
        engine,
        iodepth,
        engine_options,
        figure: resolve_figure(t, &loc)?,
        min_time: t.min_time.unwrap_or(true),
        verify: t.verify.unwrap_or(false),
        seed: t.seed,
        files: files.set,
        phases,
        roles,
        exitall: resolve_exitall(t.exitall.as_ref(), &loc, "the test")?,
    };
    // `curve_steps` only where a curve can run (its phase, the test's roles).
    for p in test.phases.iter().filter(|p| p.curve.is_some()) {
        if let Some(why) = super::load::curve_refusal(&test, p) {
            let ploc = Loc { origin, test: &t.id, phase: Some(&p.name), entry: None };
            return Err(ploc.err(format!("curve_steps: {why}")));
        }
    }
    Ok(test)
}

/// What a test says it works on: one file (or one per thread), or a fileset; never both.
#[derive(Clone, Copy)]
enum Written<'a> {
    /// `file = { ... }`.
    Data(&'a FileSpec),
    /// `fileset = { ... }`.
    Fileset(&'a FilesetSpec),
}

/// The test's `file` or `fileset`, whichever it has (the engine's check needs to know which).
fn written_files<'a>(t: &'a TestSpec, loc: &Loc<'_>) -> Result<Written<'a>, WorkloadError> {
    match (&t.file, &t.fileset) {
        (Some(f), None) => Ok(Written::Data(f)),
        (None, Some(fs)) => Ok(Written::Fileset(fs)),
        (Some(_), Some(_)) => Err(loc.err(
            "a test has either `file` (one data file) or `fileset` (many files), not both",
        )),
        (None, None) => Err(loc.err(
            "missing `file` or `fileset`: add file = { size = \"128M\" } for a data test or fileset = { count = 1000, flat = true, size = \"4K\" } for a metadata test",
        )),
    }
}

/// The test's engine and its options: the engine's declaration ([`super::engines`]) checks its
/// name, its own keys and what it can do with this test's files.
fn resolve_engine(
    t: &TestSpec,
    written: &Written<'_>,
    iodepth: u32,
    direct: bool,
    loc: &Loc<'_>,
) -> Result<(EngineKind, EngineOptions), WorkloadError> {
    let ectx = super::engines::TestCtx {
        iodepth,
        direct,
        fileset: matches!(written, Written::Fileset(_)),
        prefill: matches!(written, Written::Data(f) if f.prefill),
    };
    super::engines::resolve(t.engine.as_deref(), &t.engine_keys, &ectx)
        .map_err(|e| loc.engine_err(e))
}

/// A test's files as resolved, with what its phases are checked against.
struct TestFiles {
    /// Data (one file, or one per thread) or a fileset.
    kind: Kind,
    set: FileSet,
    /// The data file's size before scaling (0 for a fileset): sync intervals scale with it.
    raw_size: u64,
}

/// The test's files: one shared file or one per thread (`file`), or a fileset (whose ops are
/// synchronous and go through the page cache).
fn resolve_files(
    t: &TestSpec,
    written: Written<'_>,
    iodepth: u32,
    direct: bool,
    ctx: &ResolveCtx,
    loc: &Loc<'_>,
) -> Result<TestFiles, WorkloadError> {
    match written {
        Written::Data(f) => {
            let raw_size = f.size.resolve(ctx.free_memory);
            let size_bytes = ctx.scale.apply(raw_size);
            if size_bytes == 0 {
                return Err(loc.err("file size is 0: give the file a size such as \"128M\""));
            }
            let named = named_file(f, loc)?;
            if f.whole == Some(true) && !f.shared {
                return Err(loc.err(
                    "file.whole = true needs file.shared = true: each thread has a file of its own",
                ));
            }
            let region = file_region(f, size_bytes, t.threads, loc)?;
            // With regions the file reaches the end of the last thread's.
            let file_bytes = region.map_or(size_bytes, |r| r.start(t.threads as u64 - 1) + r.len);
            // One file that every thread works on, or one per thread.
            let per_thread = per_thread(t, f, loc)?;
            let files_each = per_thread.map_or(1, |p| u64::from(p.files));
            let set = FileSet {
                count: if f.shared { 1 } else { t.threads as u64 * files_each },
                shared: f.shared,
                layout: Layout::Flat,
                size: SizeDist::Fixed(file_bytes),
                prefill: f.prefill,
                write_size: DEFAULT_WRITE_SIZE,
                paths: PathMode::Relative,
                name_prefix: DEFAULT_NAME_PREFIX.to_string(),
                named,
                whole: f.shared && f.whole.unwrap_or(false),
                region,
                run_file: run_file(f, loc)?,
                preallocate: preallocate(f, loc)?,
                per_thread,
                name_format: name_format(t, f, per_thread, loc)?,
            };
            Ok(TestFiles { kind: Kind::Data, set, raw_size })
        }
        Written::Fileset(fs) => {
            if iodepth != 1 {
                return Err(loc.err("iodepth applies to data tests; the ops of a fileset test are synchronous (use threads for concurrency)"));
            }
            if direct {
                return Err(loc.err("direct = true applies to data tests; fileset ops read and write whole files through the page cache"));
            }
            let set = resolve_fileset(fs, t.threads, ctx, loc)?;
            Ok(TestFiles { kind: Kind::Fileset, set, raw_size: 0 })
        }
    }
}

/// The phases in order: each resolved, given the test's O_DIRECT and its cache precondition,
/// checked against the engine, and refused when it uses files nothing has made yet.
fn resolve_phases(
    t: &TestSpec,
    files: &TestFiles,
    (engine, iodepth, direct): (&EngineKind, u32, bool),
    ctx: &ResolveCtx,
    origin: &str,
) -> Result<Vec<PhaseDef>, WorkloadError> {
    let kind = files.kind;
    let mut phases = Vec::with_capacity(t.phases.len());
    // Whether the files exist, with data, before each phase: prefilled, or made by an earlier
    // phase.
    let mut has_files = files.set.prefill;
    let sizes = (files.raw_size, files.set.size_bytes());
    for p in &t.phases {
        let ploc = Loc { origin, test: &t.id, phase: Some(&p.name), entry: None };
        let mut phase = resolve_phase(p, kind, &files.set, t.threads, ctx, sizes, &ploc)?;
        phase.random_map = random_map(t.random_map.unwrap_or(false), kind, &phase, &ploc)?;
        phase.random_distribution =
            random_distribution(t.random_distribution.as_deref(), kind, &phase, &ploc)?;
        phase.open.direct |= direct;
        phase.cache = direct_cache(phase.open.direct, phase.cache, &ploc)?;
        check_unlink_each_pass(t, engine, &phase, &ploc)?;
        if kind == Kind::Data {
            check_caps(engine, iodepth, &phase, &ploc)?;
            check_data_fill(t, engine, &phase, &ploc)?;
            check_per_thread(files.set.per_thread, engine, &phase, &ploc)?;
        }
        let (needs, makes) = uses_files(&phase);
        // A fileset phase may create the files it then uses; a data phase's reads need data
        // from before it (or O_TRUNC, which reads what the phase itself writes).
        let excused = match kind {
            Kind::Data => phase.open.trunc,
            Kind::Fileset => makes,
        };
        match needs {
            Some(k) if !has_files && !excused => {
                return Err(ploc.err(match kind {
                    Kind::Data => "this phase reads a file nothing has written: set file.prefill = true or add a writing phase before it".to_string(),
                    Kind::Fileset => format!(
                        "this phase does `{}` on files nothing has created: set fileset.prefill = true or add a phase that creates them",
                        k.name()
                    ),
                }));
            }
            _ => {}
        }
        has_files |= makes;
        phases.push(phase);
    }
    Ok(phases)
}

/// A data file's fill (writes until ENOSPC) through an engine that writes with system calls
/// (a mapped file cannot grow past its mapping), and without `verify` (the check reads back a
/// file of the test's size; a fill's size is known only when it ends).
fn check_data_fill(
    t: &TestSpec,
    engine: &EngineKind,
    phase: &PhaseDef,
    loc: &Loc<'_>,
) -> Result<(), WorkloadError> {
    if !matches!(phase.amount, Amount::Fill(_)) {
        return Ok(());
    }
    if engine.name() == "mmap" {
        return Err(loc.err("amount.fill with engine mmap: a mapped file cannot grow until the filesystem is full; use psync or io_uring"));
    }
    if t.verify == Some(true) {
        return Err(loc.err("amount.fill with verify: fsbench checks a file of the test's size after the phase, and a fill's size is known only when ENOSPC ends it; leave verify out"));
    }
    Ok(())
}

/// `file.per_thread` and `file.service` (fio's `nrfiles` and `file_service_type`): several
/// files of each thread's own, each laid out as a thread's one file. Only fsbench's own files
/// in its work directory, one set per thread, without regions (a region is of one file), and
/// without the test-wide checks that read one file per thread (`verify`) or roles (whose
/// threads open one file each). `None`: one file per thread (or a shared file).
fn per_thread(
    t: &TestSpec,
    f: &FileSpec,
    loc: &Loc<'_>,
) -> Result<Option<PerThread>, WorkloadError> {
    let n = f.per_thread.unwrap_or(1);
    if n == 0 {
        return Err(loc.err("file.per_thread = 0: give at least 1 file per thread"));
    }
    if n > 4096 {
        return Err(
            loc.err(format!("file.per_thread = {n}: fsbench opens at most 4096 files per thread"))
        );
    }
    let service = match f.service.as_deref() {
        None => FileService::RoundRobin(1),
        Some(text) => FileService::parse(text)
            .map_err(|e| loc.err(format!("file.service = \"{text}\": {e}")))?,
    };
    if n == 1 {
        return Ok(None);
    }
    let refuse = |what: &str| {
        loc.err(format!("file.per_thread = {n} with {what}: several files per thread are fsbench's own files, one set per thread, each worked on whole; leave {what} out or set file.per_thread = 1"))
    };
    if f.shared {
        return Err(refuse("file.shared = true (the default)"));
    }
    for (set, what) in [
        (f.path.is_some(), "file.path"),
        (f.run_file.is_some(), "file.run_file"),
        (f.offset.is_some() || f.offset_increment.is_some(), "file.offset"),
        (f.take_size.is_some(), "file.take_size"),
        (f.verify_writes == Some(true), "file.verify_writes"),
        (t.verify == Some(true), "verify (the check reads one file per thread)"),
        (!t.roles.is_empty(), "roles (a role's threads open one file each)"),
        (t.random_distribution.is_some(), "random_distribution"),
    ] {
        if set {
            return Err(refuse(what));
        }
    }
    Ok(Some(PerThread { files: n, service }))
}

/// `file.name_format` (fio's `filename_format`): the names of a data test's own files, one per
/// thread and file. Each name must be a plain file name of its own: with several threads the
/// template needs `{thread}` and with several files per thread `{file}` (fio's clones on one
/// name would share the file, which fsbench expresses with `shared = true`), and braces other
/// than the two words are refused so that a name reads back as written.
fn name_format(
    t: &TestSpec,
    f: &FileSpec,
    per_thread: Option<PerThread>,
    loc: &Loc<'_>,
) -> Result<Option<String>, WorkloadError> {
    use crate::model::job::{NAME_FILE, NAME_THREAD};
    let Some(text) = &f.name_format else { return Ok(None) };
    let refuse = |why: &str| loc.err(format!("file.name_format = {text:?}: {why}"));
    if f.shared || f.path.is_some() || f.run_file.is_some() {
        return Err(refuse("names a test's own files, one per thread: set file.shared = false, without file.path or file.run_file"));
    }
    let rest = text.replace(NAME_THREAD, "").replace(NAME_FILE, "");
    if rest.contains(['{', '}']) {
        return Err(refuse("give `{thread}` and `{file}` as the only words in braces"));
    }
    if text.contains(['/', '\0']) {
        return Err(refuse("a file name in the work directory, without `/`"));
    }
    // The longest name: the numbers at their widest.
    let most = |n: u64| n.saturating_sub(1).to_string();
    let files = per_thread.map_or(1, |p| u64::from(p.files));
    let longest =
        text.replace(NAME_THREAD, &most(u64::from(t.threads))).replace(NAME_FILE, &most(files));
    if longest.is_empty() || longest == "." || longest == ".." || longest.len() > 255 {
        return Err(refuse("each name must be a file name of 1 to 255 bytes, not `.` or `..`"));
    }
    if t.threads > 1 && !text.contains(NAME_THREAD) {
        return Err(refuse("several threads would have one name: add `{thread}` (or share one file with file.shared = true)"));
    }
    if per_thread.is_some() && !text.contains(NAME_FILE) {
        return Err(refuse("a thread's files would have one name: add `{file}`"));
    }
    Ok(Some(text.clone()))
}

/// A phase of a test with several files per thread: each op goes to the file the service
/// picks, so what is kept for one file (a random-percent run's last position, a skewed law,
/// passes over the file, an op at the last offset) and an engine that maps one file at a
/// time (`mmap`, which would map anew at every switch) are refused.
fn check_per_thread(
    per_thread: Option<PerThread>,
    engine: &EngineKind,
    phase: &PhaseDef,
    loc: &Loc<'_>,
) -> Result<(), WorkloadError> {
    let Some(p) = per_thread else { return Ok(()) };
    let last = phase.pattern.data().iter().any(|o| o.offset == OffsetMode::Last);
    for (set, what) in [
        (engine.name() == "mmap", "engine mmap (one mapping at a time)"),
        (matches!(phase.amount, Amount::Passes(_)), "amount.passes"),
        (matches!(phase.amount, Amount::Fill(_)), "amount.fill"),
        (phase.unlink_each_pass, "unlink_each_pass"),
        (phase.random_percent.is_some(), "random_percent"),
        (last, "an op at offset = \"last\""),
    ] {
        if set {
            return Err(loc.err(format!(
                "file.per_thread = {} with {what}: not supported with several files per thread; set file.per_thread = 1",
                p.files
            )));
        }
    }
    Ok(())
}

/// Whether a phase draws its random offsets from a random map (the test's `random_map`): only
/// a data test can, and the map's slots are one size at one alignment, so every random op of
/// the phase must have the same fixed size and the same `align`. A phase without random ops
/// has nothing to map (off).
fn random_map(
    on: bool,
    kind: Kind,
    phase: &PhaseDef,
    loc: &Loc<'_>,
) -> Result<bool, WorkloadError> {
    if !on {
        return Ok(false);
    }
    if kind == Kind::Fileset {
        return Err(loc.err("random_map applies to data tests (file = { ... }); a fileset's ops pick their slots with pick = \"shuffle\" (every slot once per pass)"));
    }
    let mut random = phase.pattern.data().iter().filter(|o| o.offset == OffsetMode::Random);
    let Some(first) = random.next() else {
        return Ok(false);
    };
    let SizeDist::Fixed(_) = first.size else {
        return Err(loc.err("random_map needs a fixed size for random ops (each slot of the map is one op's size); give size = \"4K\" or set random_map = false"));
    };
    if random.any(|o| o.size != first.size || o.align != first.align) {
        return Err(loc.err("random_map needs one size and one align for every random op of a phase (the map's slots); make them equal or set random_map = false"));
    }
    Ok(true)
}

/// A phase's skewed law for random offsets (the test's `random_distribution`, fio's syntax):
/// data tests only, not with the random map (fio keeps none with a skewed law), and, as for
/// the map, one fixed size and one `align` for the phase's random ops (the law's slots).
fn random_distribution(
    text: Option<&str>,
    kind: Kind,
    phase: &PhaseDef,
    loc: &Loc<'_>,
) -> Result<Option<crate::model::skew::RandomDist>, WorkloadError> {
    let Some(text) = text else {
        return Ok(None);
    };
    let dist = crate::model::skew::RandomDist::parse(text)
        .map_err(|e| loc.err(format!("random_distribution = \"{text}\": {e}")))?;
    if dist.is_none() {
        return Ok(None);
    }
    if kind == Kind::Fileset {
        return Err(loc.err("random_distribution applies to data tests (file = { ... })"));
    }
    if phase.random_map {
        return Err(loc.err("random_distribution draws offsets with replacement: set random_map = false (fio keeps no random map with a skewed distribution either)"));
    }
    let mut random = phase.pattern.data().iter().filter(|o| o.offset == OffsetMode::Random);
    let Some(first) = random.next() else {
        return Ok(None);
    };
    let SizeDist::Fixed(_) = first.size else {
        return Err(loc.err("random_distribution needs a fixed size for random ops (its slots are one op's size); give size = \"4K\""));
    };
    if random.any(|o| o.size != first.size || o.align != first.align) {
        return Err(loc.err("random_distribution needs one size and one align for every random op of a phase (its slots); make them equal"));
    }
    Ok(dist)
}

/// A phase's `random_percent` (fio's `percentage_random`) as `[reads, writes]`: each share 0 to
/// 100, one for both directions or a list of two; only a data phase with random-offset ops
/// has something to share out. 100 for both (the default) is `None`: every random op random.
fn random_percent(
    spec: Option<&super::spec::RandomPercent>,
    kind: Kind,
    pattern: &[OpDef],
    loc: &Loc<'_>,
) -> Result<Option<[u8; 2]>, WorkloadError> {
    use super::spec::RandomPercent;
    let Some(spec) = spec else {
        return Ok(None);
    };
    let both = match spec {
        RandomPercent::Both(n) => [*n, *n],
        RandomPercent::PerDirection(v) => match v[..] {
            [r, w] => [r, w],
            _ => {
                return Err(loc.err(format!(
                    "random_percent = {v:?}: give one share (30) or [reads, writes] ([30, 60])"
                )))
            }
        },
    };
    if let Some(bad) = both.iter().find(|&&n| n > 100) {
        return Err(loc.err(format!("random_percent = {bad}: a share is 0 to 100 percent")));
    }
    if kind == Kind::Fileset {
        return Err(loc.err("random_percent applies to data tests (random offsets in a file)"));
    }
    if !pattern.iter().any(|o| o.offset == OffsetMode::Random && o.kind.is_data()) {
        return Err(loc.err("random_percent shares out the phase's random-offset ops, and it has none: add offset = \"random\" to an entry or remove random_percent"));
    }
    Ok((both != [100, 100]).then(|| both.map(|n| n as u8)))
}

/// A phase's `unlink_each_pass` (fio's `unlink_each_loop`): only a data test's own file, one
/// per thread (threads sharing a file would unlink it under each other), written and never
/// read (the file opened again is empty), through an engine that names the file by its
/// descriptor in each request (psync, libaio: io_uring may have registered the old file, mmap
/// has mapped it).
fn check_unlink_each_pass(
    t: &TestSpec,
    engine: &EngineKind,
    phase: &PhaseDef,
    loc: &Loc<'_>,
) -> Result<(), WorkloadError> {
    if !phase.unlink_each_pass {
        return Ok(());
    }
    let Some(file) = t.file.as_ref() else {
        return Err(loc.err("unlink_each_pass applies to data tests (file = { ... })"));
    };
    if file.path.is_some() {
        return Err(loc.err("unlink_each_pass with file.path: fsbench unlinks only files it makes; leave file.path out"));
    }
    if file.shared && t.threads > 1 {
        return Err(loc.err("unlink_each_pass with a file the threads share: each would unlink it under the others; give each thread its own file (file.shared = false)"));
    }
    if phase.pattern.data().iter().any(|o| o.issues(OpKind::Read)) {
        return Err(loc.err("unlink_each_pass with reads: the file opened again after each pass is empty; write only"));
    }
    if !matches!(engine.name(), "psync" | "libaio") {
        return Err(loc.err(format!("unlink_each_pass with engine = \"{}\": take psync or libaio, which name the file by its descriptor in each request (io_uring may have registered the old file, mmap has mapped it)", engine.name())));
    }
    Ok(())
}

/// A phase's cache precondition given whether it is O_DIRECT: direct I/O has none to prepare
/// (reported as `direct`), and `direct` needs O_DIRECT.
fn direct_cache(direct: bool, cache: CacheReq, loc: &Loc<'_>) -> Result<CacheReq, WorkloadError> {
    match (direct, cache) {
        (true, CacheReq::Any | CacheReq::Direct) => Ok(CacheReq::Direct),
        (true, c) => Err(loc.err(format!(
            "cache = \"{}\" with O_DIRECT: direct I/O bypasses the page cache, so there is nothing to prepare; leave cache out (it is reported as \"direct\")",
            if c == CacheReq::Cached { "cached" } else { "uncached" }
        ))),
        (false, CacheReq::Direct) => Err(loc.err(
            "cache = \"direct\" needs O_DIRECT: set direct = true on the test (or open = [\"direct\"])",
        )),
        (false, c) => Ok(c),
    }
}

/// A role's file and pattern, checked like a data test's phase; it runs until the foreground
/// is done, so its amount is only a bound ([`ROLE_BOUND_SECONDS`]).
fn resolve_role(
    r: &RoleSpec,
    origin: &str,
    test: &str,
    ctx: &ResolveCtx,
) -> Result<RoleDef, WorkloadError> {
    let name = format!("role {}", r.name);
    let loc = Loc { origin, test, phase: Some(&name), entry: None };
    if r.name.trim().is_empty()
        || !r.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(loc.err("a role's name is 1 or more of A-Z a-z 0-9 - _ (it names its files)"));
    }
    if r.threads == 0 || r.threads > MAX_THREADS {
        return Err(loc.err(format!("threads = {}: give a role 1 to {MAX_THREADS}", r.threads)));
    }
    let raw_size = r.file.size.resolve(ctx.free_memory);
    let size = ctx.scale.apply(raw_size);
    if size == 0 {
        return Err(loc.err("file size is 0: give the role's file a size such as \"64M\""));
    }
    let files = FileSet {
        count: 1,
        shared: false,
        layout: Layout::Flat,
        size: SizeDist::Fixed(size),
        prefill: r.file.prefill,
        write_size: DEFAULT_WRITE_SIZE,
        paths: PathMode::Relative,
        name_prefix: DEFAULT_NAME_PREFIX.to_string(),
        named: None,
        whole: false,
        region: None,
        run_file: None,
        preallocate: preallocate(&r.file, &loc)?,
        per_thread: None,
        name_format: None,
    };
    if r.file.per_thread.is_some_and(|n| n != 1) || r.file.service.is_some() {
        return Err(loc.err(
            "file.per_thread and file.service are a test's: a role's threads have one file each",
        ));
    }
    if r.file.name_format.is_some() {
        return Err(loc.err(
            "file.name_format is a test's: a role's files are named by fsbench (t<ID>.role-<NAME>.<thread>.dat)",
        ));
    }
    // Without an amount of its own a role runs until the foreground is done: its amount is
    // only a bound.
    let bound = AmountSpec { seconds: Some(ROLE_BOUND_SECONDS), ..Default::default() };
    let spec = PhaseSpec {
        name: r.name.clone(),
        timed: true,
        cache: CacheReq::Any,
        open: r.open.clone(),
        pattern: r.pattern.clone(),
        amount: r.amount.clone().unwrap_or(bound),
        sync: r.sync.clone(),
        invalidate_each_pass: r.invalidate_each_pass.unwrap_or(false),
        fadvise_hint: r.fadvise_hint.unwrap_or(false),
        random_percent: r.random_percent.clone(),
        rate_iops: r.rate_iops,
        rate: r.rate,
        rate_process: r.rate_process.clone(),
        latency_from: r.latency_from.clone(),
        rate_read: r.rate_read,
        rate_write: r.rate_write,
        thinktime: r.thinktime.clone(),
        thinktime_blocks: r.thinktime_blocks,
        flow: r.flow,
        flow_id: r.flow_id,
        flow_sleep: r.flow_sleep,
        nice: r.nice,
        ioprio: r.ioprio.clone(),
        cpus: r.cpus.clone(),
        cpus_policy: r.cpus_policy.clone(),
        ..PhaseSpec::default()
    };
    let mut phase = resolve_phase(&spec, Kind::Data, &files, 1, ctx, (raw_size, size), &loc)?;
    if !matches!(phase.amount, Amount::Bytes(_) | Amount::Ops(_) | Amount::Seconds(_)) {
        return Err(loc.err("a role's amount is bytes, ops or seconds"));
    }
    phase.random_map = random_map(r.random_map.unwrap_or(false), Kind::Data, &phase, &loc)?;
    phase.random_distribution =
        random_distribution(r.random_distribution.as_deref(), Kind::Data, &phase, &loc)?;
    phase.open.direct |= r.direct.unwrap_or(false);
    phase.cache = direct_cache(phase.open.direct, phase.cache, &loc)?;
    let iodepth = r.iodepth.unwrap_or(1);
    if iodepth == 0 || iodepth > MAX_IODEPTH {
        return Err(loc.err(format!("iodepth = {iodepth}: give 1 to {MAX_IODEPTH}")));
    }
    let ectx = super::engines::TestCtx {
        iodepth,
        direct: phase.open.direct,
        fileset: false,
        prefill: r.file.prefill,
    };
    let keys = match r.registerfiles {
        Some(b) => EngineKeys::from_pairs(vec![("registerfiles".into(), OptValue::Bool(b))]),
        None => EngineKeys::default(),
    };
    let (engine, engine_options) = super::engines::resolve(r.engine.as_deref(), &keys, &ectx)
        .map_err(|e| loc.engine_err(e))?;
    check_caps(&engine, iodepth, &phase, &loc)?;
    let (needs, _) = uses_files(&phase);
    // A role on another's file (`same_file`) has it laid out by its owner (checked by the
    // caller, [`same_file`]).
    let prefill = r.file.prefill && r.same_file.is_none();
    if needs.is_some() && !prefill && !phase.open.trunc && r.same_file.is_none() {
        return Err(loc.err("this role reads a file nothing has written: set file.prefill = true"));
    }
    let seconds = |key: &str, v: Option<f64>| {
        let s = v.unwrap_or(0.0);
        if s.is_finite() && (0.0..=3600.0).contains(&s) {
            Ok(s)
        } else {
            Err(loc.err(format!("{key} = {s}: give 0 to 3600 seconds")))
        }
    };
    let lead_seconds = seconds("lead", r.lead)?;
    let delay_seconds = seconds("delay", r.delay)?;
    let uncached = r.uncached.unwrap_or(false);
    if uncached && phase.open.direct {
        return Err(loc.err("uncached = true with O_DIRECT: direct I/O bypasses the page cache, so there is nothing to drop"));
    }
    Ok(RoleDef {
        lead_seconds,
        name: r.name.clone(),
        threads: r.threads,
        file_bytes: size,
        prefill,
        // A role on another's file has it laid out by its owner.
        preallocate: files.preallocate.filter(|_| r.same_file.is_none()),
        phase,
        engine,
        iodepth,
        engine_options,
        delay_seconds,
        own_amount: r.amount.is_some(),
        uncached,
        after: None,
        exitall: None,
        shared_file: r.file.whole.unwrap_or(false) && r.same_file.is_none(),
        same_file: None,
    })
}

/// A job's `exitall = { stops, group }` (fio's `exitall` with `exit_what`); `whose` names the
/// job in an error.
fn resolve_exitall(
    e: Option<&super::spec::ExitSpec>,
    loc: &Loc<'_>,
    whose: &str,
) -> Result<Option<ExitAll>, WorkloadError> {
    let Some(e) = e else {
        return Ok(None);
    };
    let stops = match e.stops.as_str() {
        "group" => ExitStops::Group,
        "test" => ExitStops::Test,
        other => {
            return Err(loc.err(format!("{whose}: exitall.stops = \"{other}\": give \"group\" (the jobs whose exitall has the same group) or \"test\" (every job of the test)")))
        }
    };
    Ok(Some(ExitAll { stops, group: e.group.unwrap_or(0) }))
}

/// Whose file a role with `same_file = "NAME"` works on: the test's (`NAME` is its id;
/// `test` is its id, its one data file when it has one, and whether it verifies its file: then
/// the role may only read it) or
/// an earlier role's in `before` that owns a shared file (or works on one itself: then that
/// file's owner). The role's size must not pass the owner's, and a role that reads needs the
/// owner to lay the file out. `Err`: why not, for the message.
fn same_file(
    name: &str,
    role: &RoleDef,
    (id, test_file, verify): (&str, Option<&FileSet>, bool),
    before: &[RoleDef],
) -> Result<RoleWait, String> {
    let (owner, size, sized) = if name == id {
        let Some(f) = test_file.filter(|f| f.count == 1 && f.shared) else {
            return Err("the test has no one file its threads share (`file` with `shared = true`); a role can work on that file only".into());
        };
        if verify && uses_files(&role.phase).1 {
            return Err("the test checks its file's content (`verify`), which the role's writes would change; leave verify out or give the role a file of its own".into());
        }
        (RoleWait::Test, f.size_bytes(), laid_out(f.prefill, f.preallocate))
    } else {
        let Some(i) = before.iter().position(|o| o.name == name) else {
            return Err("neither the test's id nor an earlier role's name".into());
        };
        let o = &before[i];
        match o.same_file {
            Some(RoleWait::Role(j)) => {
                let b = &before[j];
                (RoleWait::Role(j), b.file_bytes, laid_out(b.prefill, b.preallocate))
            }
            Some(RoleWait::Test) => return same_file(id, role, (id, test_file, verify), before),
            None if o.shared_file => {
                (RoleWait::Role(i), o.file_bytes, laid_out(o.prefill, o.preallocate))
            }
            None => {
                return Err(format!("role `{name}` gives each of its threads a file of its own; set file.whole = true on it (one file its threads share)"))
            }
        }
    };
    if role.file_bytes > size {
        return Err(format!(
            "the role's file size ({} bytes) passes its owner's ({size} bytes), who lays the file out; give it at most that size",
            role.file_bytes
        ));
    }
    if uses_files(&role.phase).0.is_some() && !sized {
        return Err("the role reads the file but its owner does not lay it out to its size: set file.prefill = true (or file.preallocate = \"fallocate\" or \"truncate\": the role reads zeros) on the owner".into());
    }
    Ok(owner)
}

/// Whether an owner's file is there at its size before the phase, for a role that reads it:
/// written (prefilled), or given its size without data (fallocate, truncate: reads return
/// zeros, as from fio's file laid out by a write job).
fn laid_out(prefill: bool, preallocate: Option<Preallocate>) -> bool {
    prefill || matches!(preallocate, Some(Preallocate::Fallocate | Preallocate::Truncate))
}

/// The bound on a role's work: it is stopped when the foreground is done, long before.
pub const ROLE_BOUND_SECONDS: f64 = 30.0 * 24.0 * 3600.0;

/// The test's `figure`, if it declares one.
fn resolve_figure(
    t: &TestSpec,
    loc: &Loc<'_>,
) -> Result<Option<crate::model::result::Figure>, WorkloadError> {
    use crate::model::result::Figure;
    match t.figure.as_deref() {
        None => Ok(None),
        Some("mib_per_s") => Ok(Some(Figure::MibPerS)),
        Some("ops_per_s") => Ok(Some(Figure::OpsPerS)),
        Some(f) => Err(loc.err(format!("unknown figure `{f}`; known: {}", keys::FIGURE.known()))),
    }
}

/// The first op of a phase that needs existing files (with data), and whether the phase makes
/// them (writes a data file, creates fileset files).
fn uses_files(phase: &PhaseDef) -> (Option<OpKind>, bool) {
    let ops = phase.pattern.kinds();
    let needs = ops.iter().copied().find(|k| {
        matches!(
            k,
            OpKind::Read
                | OpKind::Unlink
                | OpKind::Stat
                | OpKind::Rename
                | OpKind::Replace
                | OpKind::Append
                | OpKind::Readwhole
                | OpKind::Lstat
                | OpKind::Statx
                | OpKind::Rmdirslot
        )
    });
    let makes = |k: &OpKind| {
        matches!(k, OpKind::Write | OpKind::Create | OpKind::Opencreate | OpKind::Mkdirslot)
    };
    (needs, ops.iter().any(makes))
}

/// One phase of either kind: name, timing, cache precondition, open flags, the pattern (its
/// entries by kind, each repeated `repeat` times), the amount and the syncs.
#[allow(clippy::too_many_arguments)]
fn resolve_phase(
    p: &PhaseSpec,
    kind: Kind,
    files: &FileSet,
    threads: u32,
    ctx: &ResolveCtx,
    (raw_file, scaled_file): (u64, u64),
    loc: &Loc<'_>,
) -> Result<PhaseDef, WorkloadError> {
    if kind == Kind::Fileset {
        if !p.open.is_empty() {
            return Err(loc.err("`open` flags are for file tests; fileset ops open their files themselves (use fsync = true for durability)"));
        }
        if p.cache == CacheReq::Cached || p.cache == CacheReq::Direct {
            return Err(loc.err("cache = \"cached\" is for file tests; a fileset phase takes \"any\" or \"uncached\" (drop caches before the phase)"));
        }
    }
    let open = parse_open(&p.open, loc)?;
    if p.pattern.is_empty() {
        let example = match kind {
            Kind::Data => "{ op = \"read\", size = \"4K\" }",
            Kind::Fileset => "{ op = \"create\", pick = \"next\" }",
        };
        return Err(loc.err(format!("empty pattern: list at least one operation, e.g. {example}")));
    }
    let (pattern, fileset_pattern) = resolve_pattern(p, kind, files, threads, loc)?;
    let sequential = pattern.iter().any(|o| o.offset == OffsetMode::Sequential && o.kind.is_data());
    let amount = resolve_amount(&p.amount, kind, ctx, sequential, loc)?;
    match amount {
        Amount::Passes(_) if kind == Kind::Data => {
            let size = files.size_bytes();
            let region = if files.shared { size / threads as u64 } else { size };
            if region == 0 {
                return Err(loc.err(format!(
                    "the file ({}) split over {threads} threads leaves no bytes per thread",
                    fmt_bytes(size)
                )));
            }
        }
        Amount::Fill(_) if kind == Kind::Data => {
            let seq_writes = pattern.iter().filter(|o| o.kind.is_data()).all(|o| {
                o.kind == OpKind::Write && o.offset == OffsetMode::Sequential && o.skip == 0
            });
            if !seq_writes || !pattern.iter().any(|o| o.kind.is_data()) {
                return Err(loc.err("amount.fill in a file test needs a pattern of sequential writes (no skip): the file grows from its region's start until the filesystem is full"));
            }
        }
        Amount::Fill(_) => {
            let creates = fileset_pattern
                .iter()
                .flat_map(|e| e.choices.iter())
                .any(|(_, o)| o.kind == OpKind::Create);
            if !creates {
                return Err(loc.err("amount.fill needs a create in the pattern: only creating files fills the filesystem"));
            }
        }
        _ => {}
    }
    if kind == Kind::Data
        && matches!(amount, Amount::Bytes(_) | Amount::Passes(_))
        && !pattern.iter().any(|o| o.kind.is_data())
    {
        return Err(loc.err("a pattern of only syncs never moves bytes: use amount = { ops = N } or add a read/write"));
    }
    let sync = resolve_sync(&p.sync, kind, ctx, (raw_file, scaled_file), loc)?;
    if p.fadvise_hint && kind == Kind::Fileset {
        return Err(loc.err("fadvise_hint applies to data tests (one open data file)"));
    }
    let random_percent = random_percent(p.random_percent.as_ref(), kind, &pattern, loc)?;
    if p.invalidate_each_pass && kind == Kind::Fileset {
        return Err(loc.err("invalidate_each_pass applies to data tests (a pass over a data file); a fileset phase takes cache = \"uncached\" before it"));
    }
    let mean_op = {
        let data: Vec<f64> =
            pattern.iter().filter(|o| o.kind.is_data()).map(|o| o.size.mean()).collect();
        (!data.is_empty()).then(|| data.iter().sum::<f64>() / data.len() as f64)
    };
    let load = super::load::resolve(p, &amount, threads, mean_op).map_err(|m| loc.err(m))?;
    let curve = super::load::phase_curve(p, ctx.scale).map_err(|m| loc.err(m))?;
    Ok(PhaseDef {
        name: p.name.clone(),
        timed: p.timed,
        cache: p.cache,
        open,
        pattern: match kind {
            Kind::Data => Pattern::Data(pattern),
            Kind::Fileset => Pattern::Files(fileset_pattern),
        },
        amount,
        sync,
        random_map: false,
        random_distribution: None,
        invalidate_each_pass: p.invalidate_each_pass,
        fadvise_hint: p.fadvise_hint,
        random_percent,
        unlink_each_pass: p.unlink_each_pass,
        sched: thread_sched(p, loc)?,
        load,
        max_seconds: time_cap(&p.amount),
        curve,
        op_log: false,
    })
}

/// A phase's `nice`, `ioprio`, `cpus` and `cpus_policy`: what each of its threads sets on
/// itself when it starts (fio's `nice`, `prio`/`prioclass`, `cpus_allowed`). A CPU that this
/// machine does not have is refused here, before any test runs.
fn thread_sched(p: &PhaseSpec, loc: &Loc<'_>) -> Result<ThreadSched, WorkloadError> {
    if let Some(n) = p.nice.filter(|n| !(-20..=19).contains(n)) {
        return Err(loc.err(format!("nice = {n}: give -20 (highest priority) to 19 (lowest)")));
    }
    let ioprio = match p.ioprio.as_deref() {
        Some(t) => Some(IoPrio::parse(t).map_err(|m| loc.err(format!("ioprio = {m}")))?),
        None => None,
    };
    let split = match p.cpus_policy.as_deref() {
        None | Some("shared") => false,
        Some("split") => true,
        Some(o) => {
            return Err(loc.err(format!(
                "cpus_policy = \"{o}\": write \"shared\" (every thread on all of cpus) or \"split\" (one CPU each, in turn)"
            )))
        }
    };
    let cpus = match p.cpus.as_deref() {
        Some(t) => {
            let limit = crate::sys::sched::configured_cpus();
            let cpus = parse_cpu_list(t, limit).map_err(|m| loc.err(format!("cpus = {m}")))?;
            Some(CpuAffinity { cpus, split })
        }
        None if p.cpus_policy.is_some() => {
            return Err(loc.err("cpus_policy without cpus: give the CPUs (`cpus = \"0-3\"`)"))
        }
        None => None,
    };
    Ok(ThreadSched { nice: p.nice, ioprio, cpus })
}

/// A phase's pattern, by kind (data ops, or fileset entries), each entry repeated `repeat`
/// times.
fn resolve_pattern(
    p: &PhaseSpec,
    kind: Kind,
    files: &FileSet,
    threads: u32,
    loc: &Loc<'_>,
) -> Result<(Vec<OpDef>, Vec<MetaEntry>), WorkloadError> {
    let mut pattern = Vec::new();
    let mut fileset_pattern = Vec::new();
    let mut prev: Option<OpDef> = None;
    for (i, o) in p.pattern.iter().enumerate() {
        let eloc = Loc { origin: loc.origin, test: loc.test, phase: Some(&p.name), entry: Some(i) };
        let repeat = o.repeat.unwrap_or(1);
        match kind {
            Kind::Data => {
                let op = resolve_op(o, prev.as_ref(), files.size_bytes(), &eloc)?;
                if op.kind.is_data() {
                    prev = Some(op);
                }
                pattern.push(op);
            }
            Kind::Fileset => fileset_pattern.push(resolve_entry(o, files, threads, &eloc)?),
        }
        if repeat == 0 {
            return Err(eloc.err("repeat = 0 would remove the entry; use repeat >= 1"));
        }
        for _ in 1..repeat {
            match kind {
                Kind::Data => pattern.push(*pattern.last().expect("pushed above")),
                Kind::Fileset => {
                    let e = fileset_pattern.last().expect("pushed above").clone();
                    fileset_pattern.push(e);
                }
            }
        }
    }
    Ok((pattern, fileset_pattern))
}

fn parse_open(flags: &[String], loc: &Loc<'_>) -> Result<OpenFlags, WorkloadError> {
    let mut f = OpenFlags::default();
    for n in flags {
        match n.as_str() {
            "create" => f.create = true,
            "trunc" => f.trunc = true,
            "append" => f.append = true,
            "dsync" => f.dsync = true,
            "sync" => f.sync = true,
            "direct" => f.direct = true,
            other => {
                return Err(
                    loc.err(format!("unknown open flag `{other}`; known: {}", keys::OPEN.known()))
                )
            }
        }
    }
    Ok(f)
}

fn resolve_op(
    o: &OpSpec,
    prev: Option<&OpDef>,
    file_size: u64,
    loc: &Loc<'_>,
) -> Result<OpDef, WorkloadError> {
    let Some(name) = o.op.as_deref() else {
        return Err(loc.err(
            "missing op: write e.g. { op = \"read\", size = \"4K\" } (choose is for fileset tests)",
        ));
    };
    let kind = data_op_kind(name, loc)?;
    for (set, key) in [
        (o.pick.is_some(), "pick"),
        (o.fsync.is_some(), "fsync"),
        (o.fsync_dir.is_some(), "fsync_dir"),
        (o.choose.is_some(), "choose"),
        (o.weight.is_some(), "weight"),
    ] {
        if set {
            return Err(loc.err(format!(
                "`{key}` applies to fileset tests only; a data test's pattern has op, size, offset, align, repeat"
            )));
        }
    }
    if !kind.is_data() {
        if o.size.is_some() || o.offset.is_some() || o.align.is_some() {
            return Err(loc.err(format!("`{}` takes no size, offset or align", kind.name())));
        }
        if o.write_percent.is_some() {
            return Err(loc.err("write_percent applies to a read"));
        }
        if o.skip.is_some() {
            return Err(loc.err("skip applies to a sequential read or write"));
        }
        return Ok(OpDef {
            kind,
            size: SizeDist::Fixed(0),
            offset: OffsetMode::Sequential,
            align: 1,
            write_percent: 0,
            skip: 0,
        });
    }
    let offset = match o.offset.as_deref().unwrap_or("sequential") {
        "sequential" | "seq" => OffsetMode::Sequential,
        "random" | "rand" => OffsetMode::Random,
        "last" => OffsetMode::Last,
        other => {
            return Err(loc.err(format!(
                "unknown offset `{other}`; known: {} (last: the previous operation's offset)",
                keys::OFFSET.known()
            )))
        }
    };
    let size = match (&o.size, offset, prev) {
        (Some(spec), ..) => resolve_size_dist(spec, loc)?,
        (None, OffsetMode::Last, Some(p)) => p.size,
        (None, ..) => {
            return Err(loc
                .err("missing size, e.g. size = \"8K\" or size = { uniform = [\"1K\", \"8K\"] }"))
        }
    };
    if size.min() == 0 {
        return Err(loc.err("block size 0 is impossible; use a size such as \"4K\""));
    }
    if size.max() > MAX_OP_BYTES {
        return Err(loc.err(format!(
            "op size {} is larger than the {} limit",
            fmt_bytes(size.max()),
            fmt_bytes(MAX_OP_BYTES)
        )));
    }
    if size.max() > file_size {
        return Err(loc.err(format!(
            "op size {} is larger than the file ({}); make the file bigger or the op smaller",
            fmt_bytes(size.max()),
            fmt_bytes(file_size)
        )));
    }
    if offset == OffsetMode::Last && prev.is_none() {
        return Err(loc.err("offset = \"last\" needs a read or write before it in the pattern"));
    }
    let align = o.align.map(|b| b.0).unwrap_or(1);
    if align == 0 {
        return Err(loc
            .err("align = 0 is impossible; use 1 for unaligned offsets or a size such as \"8K\""));
    }
    if align > 1 && offset != OffsetMode::Random {
        return Err(loc.err("align only applies to offset = \"random\""));
    }
    let write_percent = o.write_percent.unwrap_or(0);
    if write_percent > 0 && kind != OpKind::Read {
        return Err(
            loc.err("write_percent applies to a read: its ops become writes with that probability")
        );
    }
    if write_percent > 100 {
        return Err(loc.err(format!("write_percent = {write_percent}: a percentage is 0 to 100")));
    }
    let skip = o.skip.unwrap_or(0);
    if skip != 0 && offset != OffsetMode::Sequential {
        return Err(loc.err("skip only applies to offset = \"sequential\""));
    }
    if skip.unsigned_abs() >= file_size {
        return Err(loc.err(format!(
            "skip = {skip}: the skip must be smaller than the file ({})",
            fmt_bytes(file_size)
        )));
    }
    Ok(OpDef { kind, size, offset, align, write_percent, skip })
}

/// The kind of a data op by name; fileset ops are refused with what to change.
fn data_op_kind(name: &str, loc: &Loc<'_>) -> Result<OpKind, WorkloadError> {
    Ok(match name {
        "read" => OpKind::Read,
        "write" => OpKind::Write,
        "fsync" => OpKind::Fsync,
        "fdatasync" => OpKind::Fdatasync,
        other if OpKind::from_name(other).is_some_and(|k| k.is_fileset()) => {
            return Err(loc.err(format!(
                "`{other}` is an op of fileset tests; give the test a fileset = {{ ... }} instead of file = {{ ... }}"
            )))
        }
        other => {
            return Err(loc.err(format!("unknown op `{other}`; known: {}", keys::DATA_OP.known())))
        }
    })
}

/// Largest queue depth accepted by any engine.
pub const MAX_IODEPTH: u32 = keys::IODEPTH.max() as u32;

/// The test's `iodepth`, in the bounds of every engine (its fit to the test's engine is
/// [`check_caps`]'s).
fn resolve_iodepth(t: &TestSpec, loc: &Loc<'_>) -> Result<u32, WorkloadError> {
    let iodepth = t.iodepth.unwrap_or(1);
    if iodepth == 0 || iodepth > MAX_IODEPTH {
        return Err(loc.err(format!(
            "iodepth = {iodepth} must be 1..{MAX_IODEPTH} (requests each thread keeps in flight)"
        )));
    }
    Ok(iodepth)
}

/// A phase's use of queue depth and O_DIRECT against the engine's capabilities, once, here.
fn check_caps(
    engine: &EngineKind,
    iodepth: u32,
    phase: &PhaseDef,
    loc: &Loc<'_>,
) -> Result<(), WorkloadError> {
    let mut sizes = phase.pattern.data().iter().filter(|o| o.kind.is_data()).map(|o| {
        // A split's sizes are aligned when their common divisor is.
        (o.size.granule(), (o.offset == OffsetMode::Random).then_some(o.align))
    });
    super::engines::spec_of(engine)
        .caps
        .check(engine.name(), iodepth, phase.open.direct, &mut sizes)
        .map_err(|e| loc.engine_err(e))?;
    let most = phase.pattern.data().iter().map(|o| o.size.max()).max().unwrap_or(0);
    if most.saturating_mul(iodepth as u64) > MAX_OP_BYTES * 4 {
        return Err(loc.err(format!(
            "iodepth = {iodepth} × ops of up to {} needs more than {} of buffers per thread; lower iodepth or the op size",
            fmt_bytes(most),
            fmt_bytes(MAX_OP_BYTES * 4)
        )));
    }
    Ok(())
}

/// A size distribution as written, checked: ranges not reversed, log-normal bounds that hold
/// enough of the distribution for redrawing to be cheap.
fn resolve_size_dist(spec: &SizeDistSpec, loc: &Loc<'_>) -> Result<SizeDist, WorkloadError> {
    Ok(match spec {
        SizeDistSpec::Fixed(b) => SizeDist::Fixed(b.0),
        SizeDistSpec::Uniform { uniform: [lo, hi] } => {
            if lo.0 > hi.0 {
                return Err(loc.err(format!(
                    "uniform range [{}, {}] is reversed; write [min, max]",
                    fmt_bytes(lo.0),
                    fmt_bytes(hi.0)
                )));
            }
            SizeDist::Uniform(lo.0, hi.0)
        }
        SizeDistSpec::LogNormal { lognormal: l } => {
            let (median, min, max) = (l.median.0, l.min.0, l.max.0);
            if !(l.sigma.is_finite() && l.sigma > 0.0 && l.sigma <= 4.0) {
                return Err(loc.err(format!(
                    "lognormal sigma = {} must be in (0, 4]; 0.5 to 1 gives the usual skew of file sizes",
                    l.sigma
                )));
            }
            if median == 0 {
                return Err(loc.err("lognormal median = 0: give a size such as \"20K\""));
            }
            if !(min <= median && median <= max && min < max) {
                return Err(loc.err(format!(
                    "lognormal bounds must satisfy min <= median <= max with min < max; got min {}, median {}, max {}",
                    fmt_bytes(min),
                    fmt_bytes(median),
                    fmt_bytes(max)
                )));
            }
            let d = SizeDist::LogNormal { median, sigma: l.sigma, min, max };
            let mass = d.mass_in_bounds();
            if mass < 0.01 {
                return Err(loc.err(format!(
                    "only {:.2}% of this lognormal lies within [min, max]; widen the bounds or change sigma (sizes outside are redrawn)",
                    mass * 100.0
                )));
            }
            d
        }
        SizeDistSpec::Split { split } => {
            let entries: Vec<(u64, u32)> = split.iter().map(|e| (e.size.0, e.weight)).collect();
            if entries.iter().any(|e| e.0 == 0 || e.1 == 0) {
                return Err(loc.err("a split's sizes and weights are at least 1"));
            }
            SizeDist::split(&entries).ok_or_else(|| {
                loc.err(format!(
                    "a split has 1 to {MAX_SPLIT} sizes (this one has {})",
                    entries.len()
                ))
            })?
        }
        SizeDistSpec::UnalignedRange { unaligned_range: [lo, hi] } => {
            if lo.0 == 0 || lo.0 > hi.0 {
                return Err(loc.err(format!(
                    "unaligned_range [{}, {}]: write [min, max] with 1 <= min <= max",
                    fmt_bytes(lo.0),
                    fmt_bytes(hi.0)
                )));
            }
            if lo.0 == hi.0 {
                SizeDist::Fixed(lo.0)
            } else {
                SizeDist::UnalignedRange { min: lo.0, max: hi.0 }
            }
        }
    })
}

/// The amount of work of a phase: exactly one key, of those the test's kind accepts.
/// `amount.seconds` given beside bytes, ops or passes: a time cap on them.
fn time_cap(a: &AmountSpec) -> Option<f64> {
    a.seconds.filter(|_| a.bytes.is_some() || a.ops.is_some() || a.passes.is_some())
}

fn resolve_amount(
    a: &AmountSpec,
    kind: Kind,
    ctx: &ResolveCtx,
    sequential: bool,
    loc: &Loc<'_>,
) -> Result<Amount, WorkloadError> {
    match kind {
        Kind::Data => {
            if a.share.is_some() {
                return Err(loc.err("amount.share is for fileset tests (a share of the file slots); use bytes, ops, seconds or passes"));
            }
            // A file test fills its filesystem to the end: its writes go on until ENOSPC.
            if let Some(f) = a.fill.filter(|f| *f != 1.0) {
                return Err(loc.err(format!("amount.fill = {f}: a file test writes until the filesystem is full (ENOSPC): use fill = 1 (a share of the filesystem is for fileset tests)")));
            }
        }
        Kind::Fileset => {
            if a.bytes.is_some() {
                return Err(loc.err("amount.bytes is for file tests; a fileset phase takes ops, seconds, passes (every slot once), share (of a pass) or fill"));
            }
        }
    }
    // `seconds` beside bytes, ops or passes is a time cap (see `max_seconds`).
    let capped = time_cap(a).is_some();
    let given = [
        a.bytes.is_some(),
        a.ops.is_some(),
        a.seconds.is_some() && !capped,
        a.passes.is_some(),
        a.share.is_some(),
        a.fill.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if given != 1 {
        return Err(loc.err(match kind {
            Kind::Data => "amount needs exactly one of bytes, ops, seconds, passes, fill = 1 (seconds may go beside bytes, ops or passes as a time cap: whichever comes first), e.g. amount = { bytes = \"128M\" }",
            Kind::Fileset => "amount needs exactly one of ops, seconds, passes, share, fill, e.g. amount = { passes = 1 }",
        }));
    }
    if let Some(s) = time_cap(a).filter(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(loc.err(format!("amount.seconds = {s}: use a positive number of seconds")));
    }
    if let Some(b) = a.bytes {
        let b = ctx.scale.apply(b.resolve(ctx.free_memory));
        if b == 0 {
            return Err(loc.err("amount.bytes = 0: nothing would be done"));
        }
        return Ok(Amount::Bytes(b));
    }
    if let Some(n) = a.ops {
        if n == 0 {
            return Err(loc.err("amount.ops = 0: nothing would be done"));
        }
        return Ok(Amount::Ops(n));
    }
    if let Some(s) = a.seconds {
        if !(s.is_finite() && s > 0.0) {
            return Err(loc.err(format!("amount.seconds = {s}: use a positive number of seconds")));
        }
        if !capped {
            return Ok(Amount::Seconds(s));
        }
    }
    if let Some(p) = a.passes {
        if p == 0 {
            return Err(loc.err("amount.passes = 0: nothing would be done"));
        }
        if kind == Kind::Data && !sequential {
            return Err(loc.err("amount.passes needs a sequential read or write in the pattern; use bytes or ops for random patterns"));
        }
        return Ok(Amount::Passes(p));
    }
    if let Some(f) = a.share {
        if !(f.is_finite() && f > 0.0 && f <= 1.0) {
            return Err(loc.err(format!(
                "amount.share = {f}: give the share of one pass, in (0, 1], e.g. 0.2"
            )));
        }
        return Ok(Amount::Share(f));
    }
    let f = a.fill.unwrap_or(0.0);
    if !(f.is_finite() && f > 0.0 && f <= 1.0) {
        return Err(loc.err(format!(
            "amount.fill = {f}: give the share of the filesystem to fill, in (0, 1], e.g. 0.9"
        )));
    }
    Ok(Amount::Fill(f))
}

fn parse_call(s: &str, what: &str, loc: &Loc<'_>) -> Result<Option<SyncCall>, WorkloadError> {
    match s {
        "none" => Ok(None),
        "fsync" => Ok(Some(SyncCall::Fsync)),
        "fdatasync" => Ok(Some(SyncCall::Fdatasync)),
        "syncfs" => Ok(Some(SyncCall::Syncfs)),
        other => Err(loc.err(format!("{what} = `{other}`; known: {}", keys::SYNC_AT_END.known()))),
    }
}

/// The syncs of a phase. Data phases: periodic (`every_bytes`, `every_ops`, `call`) and at the
/// end; fileset phases: only `at_end = "syncfs"` (per-file syncs are the ops' `fsync`).
///
/// Sync intervals scale with the test's file (`scaled_file / raw_file`), not with `--scale`
/// directly, so the 4 MiB floor on files cannot change how many syncs a test issues.
fn resolve_sync(
    s: &SyncSpec,
    kind: Kind,
    ctx: &ResolveCtx,
    (raw_file, scaled_file): (u64, u64),
    loc: &Loc<'_>,
) -> Result<SyncPolicy, WorkloadError> {
    let periodic_given = s.every_bytes.is_some() || s.every_ops.is_some() || s.call.is_some();
    if kind == Kind::Fileset && periodic_given {
        return Err(loc.err("periodic sync (every_bytes, every_ops, call) is for file tests; in a fileset phase use fsync = true on ops, fsyncdir, or sync.at_end = \"syncfs\""));
    }
    let every_bytes = match s.every_bytes {
        Some(b) => {
            let raw = b.resolve(ctx.free_memory) as u128;
            let b = if raw_file == 0 {
                raw as u64
            } else {
                (raw * scaled_file as u128 / raw_file as u128) as u64
            };
            if b == 0 {
                return Err(loc.err("sync.every_bytes = 0: use a positive size such as \"10M\""));
            }
            Some(b)
        }
        None => None,
    };
    if s.every_ops == Some(0) {
        return Err(loc.err("sync.every_ops = 0: use a positive count"));
    }
    let periodic = every_bytes.is_some() || s.every_ops.is_some();
    let call = match &s.call {
        Some(c) => parse_call(c, "sync.call", loc)?,
        None if periodic => Some(SyncCall::Fsync),
        None => None,
    };
    if call == Some(SyncCall::Syncfs) {
        return Err(loc.err("sync.call = \"syncfs\" is not a periodic sync; use fsync or fdatasync (syncfs is for at_end)"));
    }
    if periodic && call.is_none() {
        return Err(
            loc.err("sync.call = \"none\" with every_bytes/every_ops: pick fsync or fdatasync")
        );
    }
    let at_end = match &s.at_end {
        Some(c) => parse_call(c, "sync.at_end", loc)?,
        None => None,
    };
    if kind == Kind::Fileset && matches!(at_end, Some(SyncCall::Fsync | SyncCall::Fdatasync)) {
        return Err(loc.err("sync.at_end in a fileset phase is `none` or `syncfs` (the whole filesystem); per-file fsync is fsync = true on the op"));
    }
    let before_next = s.before_next.unwrap_or(false);
    if before_next && !periodic {
        return Err(loc.err("sync.before_next applies to a periodic sync: give sync.every_ops or sync.every_bytes, or leave it out"));
    }
    Ok(SyncPolicy { every_bytes, every_ops: s.every_ops, call, at_end, before_next })
}

/// A fileset: its layout (flat or a tree), its scaled count, its file sizes.
fn resolve_fileset(
    fs: &FilesetSpec,
    threads: u32,
    ctx: &ResolveCtx,
    loc: &Loc<'_>,
) -> Result<FileSet, WorkloadError> {
    let (count, layout) = scaled_layout(fileset_layout(fs, loc)?, fs, ctx, loc)?;
    if count < threads as u64 {
        return Err(loc.err(format!(
            "{count} files for {threads} threads: each thread needs at least one file slot; raise count or lower threads"
        )));
    }
    let size = resolve_size_dist(&fs.size, loc)?;
    if size.max() > MAX_FILE_BYTES {
        return Err(loc.err(format!(
            "file size up to {} is more than the {} limit for fileset files; use a file test for big files",
            fmt_bytes(size.max()),
            fmt_bytes(MAX_FILE_BYTES)
        )));
    }
    let write_size = fs.write_size.map(|b| b.0).unwrap_or(DEFAULT_WRITE_SIZE);
    if write_size == 0 || write_size > MAX_OP_BYTES {
        return Err(loc.err(format!(
            "fileset.write_size = {} must be between 1 byte and {}",
            fmt_bytes(write_size),
            fmt_bytes(MAX_OP_BYTES)
        )));
    }
    let (paths, name_prefix) = fileset_names(fs, loc)?;
    Ok(FileSet {
        count,
        shared: false,
        layout,
        size,
        prefill: fs.prefill,
        write_size,
        paths,
        name_prefix,
        named: None,
        whole: false,
        region: None,
        run_file: None,
        preallocate: None,
        per_thread: None,
        name_format: None,
    })
}

/// `file.offset` and `file.offset_increment` (fio's): each thread's region of `size` bytes,
/// or None when neither is given (or both are 0).
fn file_region(
    f: &FileSpec,
    size: u64,
    threads: u32,
    loc: &Loc<'_>,
) -> Result<Option<Region>, WorkloadError> {
    let offset = f.offset.map_or(0, |b| b.0);
    let increment = f.offset_increment.map_or(0, |b| b.0);
    if offset == 0 && increment == 0 {
        return Ok(None);
    }
    let end = increment
        .checked_mul(u64::from(threads.saturating_sub(1)))
        .and_then(|x| x.checked_add(offset))
        .and_then(|x| x.checked_add(size));
    if end.is_none() {
        return Err(
            loc.err("file.offset + (threads - 1) x file.offset_increment + file.size is too large")
        );
    }
    Ok(Some(Region { offset, increment, len: size }))
}

/// `file.preallocate`: how a file that is not prefilled is laid out before the test.
fn preallocate(f: &FileSpec, loc: &Loc<'_>) -> Result<Option<Preallocate>, WorkloadError> {
    let Some(word) = f.preallocate.as_deref() else { return Ok(None) };
    let how = match word {
        "fallocate" => Preallocate::Fallocate,
        "keep-size" => Preallocate::KeepSize,
        "truncate" => Preallocate::Truncate,
        other => {
            return Err(loc.err(format!(
                "unknown file.preallocate `{other}`; known: {}",
                keys::FILE_PREALLOCATE.known()
            )))
        }
    };
    if f.prefill {
        return Err(loc.err(format!("file.preallocate = \"{word}\" lays out a file that is not prefilled, and the prefill writes every block: set file.prefill = false, or leave preallocate out")));
    }
    Ok(Some(how))
}

/// `file.run_file` (and `file.unlink`, `file.take_size`): a file the run's tests share, one
/// name in fsbench's work directory. Which test is the first to name it is set by [`resolve`].
fn run_file(f: &FileSpec, loc: &Loc<'_>) -> Result<Option<RunFile>, WorkloadError> {
    let Some(name) = &f.run_file else {
        if f.take_size.is_some() || f.verify_writes.is_some() {
            return Err(loc.err(
                "file.take_size and file.verify_writes apply to a file of the run (file.run_file)",
            ));
        }
        return Ok(None);
    };
    if name.is_empty() || name.len() > 200 || name.contains(['/', '\0']) {
        return Err(loc.err(format!(
            "file.run_file = {name:?}: give a file name of 1 to 200 bytes without `/`"
        )));
    }
    if f.path.is_some() {
        return Err(loc.err("file.run_file and file.path name two files: give one"));
    }
    if !f.shared {
        return Err(
            loc.err("file.run_file names one file: it is shared by the threads (shared = true)")
        );
    }
    let take_size = match f.take_size {
        Some(super::size::Bytes(0)) => {
            return Err(loc
                .err("file.take_size = 0: give the block size to round the file's length down to"))
        }
        Some(super::size::Bytes(b)) => Some(b),
        None => None,
    };
    Ok(Some(RunFile {
        name: name.clone(),
        first: false,
        unlink: f.unlink.unwrap_or(false),
        take_size,
        verify_writes: f.verify_writes.unwrap_or(false),
    }))
}

/// `file.path` (and `file.unlink`): a data file where the workload says, one file shared by
/// the threads, named by an absolute path.
fn named_file(f: &FileSpec, loc: &Loc<'_>) -> Result<Option<NamedFile>, WorkloadError> {
    let Some(path) = &f.path else {
        if f.unlink.is_some() && f.run_file.is_none() {
            return Err(loc.err(
                "file.unlink applies to a file at file.path (fsbench removes its own files)",
            ));
        }
        return Ok(None);
    };
    let p = std::path::Path::new(path);
    if !p.is_absolute() || p.file_name().is_none() {
        return Err(loc.err(format!(
            "file.path = {path:?}: give the file's absolute path, e.g. \"/mnt/test/data.dat\""
        )));
    }
    if !f.shared {
        return Err(
            loc.err("file.path names one file: it is shared by the threads (shared = true)")
        );
    }
    Ok(Some(NamedFile { path: p.to_path_buf(), unlink: f.unlink.unwrap_or(false) }))
}

/// A fileset's layout as written: flat with a count, or a tree whose count, if given, agrees.
fn fileset_layout(fs: &FilesetSpec, loc: &Loc<'_>) -> Result<Layout, WorkloadError> {
    Ok(match (fs.flat, fs.tree) {
        (Some(true), None) => {
            let Some(count) = fs.count else {
                return Err(loc.err("a flat fileset needs a count, e.g. fileset = { count = 10000, flat = true, size = \"4K\" }"));
            };
            if count == 0 {
                return Err(loc.err("fileset.count = 0: give the set at least one file"));
            }
            Layout::Flat
        }
        (None | Some(false), Some(tr)) => {
            if tr.depth == 0 || tr.depth as u64 > keys::TREE_DEPTH.max() {
                return Err(loc.err(format!("tree.depth = {} must be 1..8 (use flat = true for one directory)", tr.depth)));
            }
            if tr.fanout == 0 {
                return Err(loc.err("tree.fanout = 0: each directory needs at least one subdirectory"));
            }
            if tr.files_per_dir == 0 {
                return Err(loc.err("tree.files_per_dir = 0: each leaf directory needs at least one file"));
            }
            let leaves = (tr.fanout as u128).pow(tr.depth);
            let total = leaves * tr.files_per_dir as u128;
            if total > MAX_FILES as u128 {
                return Err(loc.err(format!(
                    "the tree holds {total} files (fanout^depth × files_per_dir), more than {MAX_FILES}; make it smaller"
                )));
            }
            if let Some(c) = fs.count {
                if c as u128 != total {
                    return Err(loc.err(format!(
                        "count = {c} but the tree holds {}^{} × {} = {total} files; fix count or leave it out",
                        tr.fanout, tr.depth, tr.files_per_dir
                    )));
                }
            }
            Layout::Tree { depth: tr.depth, fanout: tr.fanout, files_per_dir: tr.files_per_dir }
        }
        (Some(_), Some(_)) => {
            return Err(loc.err("a fileset is either flat = true or a tree = { ... }, not both"))
        }
        (Some(false), None) | (None, None) => {
            return Err(loc.err("say how the files are laid out: flat = true (one directory) or tree = { depth = 3, fanout = 10, files_per_dir = 100 }"))
        }
    })
}

/// The number of files and the layout at the scale of the run (a tree keeps its shape and
/// scales its files per directory).
fn scaled_layout(
    layout: Layout,
    fs: &FilesetSpec,
    ctx: &ResolveCtx,
    loc: &Loc<'_>,
) -> Result<(u64, Layout), WorkloadError> {
    Ok(match layout {
        Layout::Flat => {
            let c = ctx.scale.apply_count(fs.count.unwrap_or(0));
            if c > MAX_FILES {
                return Err(loc.err(format!("fileset.count = {c} is more than {MAX_FILES}")));
            }
            (c, Layout::Flat)
        }
        Layout::Tree { depth, fanout, files_per_dir } => {
            let leaves = layout.leaves();
            let per = ctx.scale.apply_files_per_dir(files_per_dir, leaves);
            if (leaves as u128) * (per as u128) > MAX_FILES as u128 {
                return Err(loc.err(format!("the scaled tree holds more than {MAX_FILES} files")));
            }
            (leaves * per, Layout::Tree { depth, fanout, files_per_dir: per })
        }
    })
}

/// How the fileset's calls name files (`paths`) and the prefix of its file names.
fn fileset_names(fs: &FilesetSpec, loc: &Loc<'_>) -> Result<(PathMode, String), WorkloadError> {
    let paths = match fs.paths.as_deref().unwrap_or("relative") {
        "relative" => PathMode::Relative,
        "absolute" => PathMode::Absolute,
        other => {
            return Err(loc.err(format!(
                "unknown fileset.paths `{other}`; known: {} (absolute: every call names the file from `/`, as mdtest does)",
                keys::PATHS.known()
            )))
        }
    };
    let name_prefix = fs.name_prefix.clone().unwrap_or_else(|| DEFAULT_NAME_PREFIX.to_string());
    let name_ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name_prefix.is_empty()
        || name_prefix.len() > MAX_NAME_PREFIX
        || name_prefix.starts_with(['.', '-'])
        || !name_prefix.chars().all(name_ok)
    {
        return Err(loc.err(format!(
            "fileset.name_prefix = {name_prefix:?}: use 1 to {MAX_NAME_PREFIX} letters, digits, `.`, `_` or `-`, not starting with `.` or `-` (e.g. \"file.mdtest.0.\")"
        )));
    }
    Ok((paths, name_prefix))
}

/// One entry of a fileset pattern: an op, or a weighted `choose` of ops.
fn resolve_entry(
    o: &OpSpec,
    fs: &FileSet,
    threads: u32,
    loc: &Loc<'_>,
) -> Result<MetaEntry, WorkloadError> {
    match (&o.op, &o.choose) {
        (Some(_), None) => {
            if o.weight.is_some() {
                return Err(loc.err("weight only applies to the ops inside choose = [...]"));
            }
            Ok(MetaEntry { choices: vec![(1, resolve_meta_op(o, fs, threads, loc)?)] })
        }
        (None, Some(list)) => {
            if o.pick.is_some() || o.fsync.is_some() || o.fsync_dir.is_some() || o.size.is_some()
            {
                return Err(loc.err("put pick, fsync, fsync_dir and size on the ops inside choose = [...], not on the choose entry"));
            }
            if list.is_empty() {
                return Err(loc.err("choose = []: list at least one { op = \"...\", weight = N }"));
            }
            let mut choices = Vec::with_capacity(list.len());
            for c in list {
                if c.choose.is_some() {
                    return Err(loc.err("choose inside choose: flatten it into one list of weighted ops"));
                }
                if c.op.is_none() {
                    return Err(loc.err("every entry of choose needs an op, e.g. { op = \"create\", weight = 5 }"));
                }
                if c.repeat.is_some() {
                    return Err(loc.err("repeat applies to the choose entry, not to the ops inside it"));
                }
                let w = c.weight.unwrap_or(1);
                if w == 0 {
                    return Err(loc.err("weight = 0 would never be chosen; remove the op or give it weight >= 1"));
                }
                choices.push((w, resolve_meta_op(c, fs, threads, loc)?));
            }
            Ok(MetaEntry { choices })
        }
        (Some(_), Some(_)) => {
            Err(loc.err("an entry has either op or choose = [...], not both"))
        }
        (None, None) => Err(loc.err(
            "missing op: write e.g. { op = \"create\" } or { choose = [{ op = \"create\", weight = 1 }, { op = \"unlink\", weight = 1 }] }",
        )),
    }
}

/// One op of a fileset pattern.
fn resolve_meta_op(
    o: &OpSpec,
    fs: &FileSet,
    threads: u32,
    loc: &Loc<'_>,
) -> Result<MetaOp, WorkloadError> {
    let kind = fileset_op_kind(o.op.as_deref().unwrap_or_default(), loc)?;
    if o.offset.is_some() || o.align.is_some() {
        return Err(
            loc.err("offset and align apply to data tests; fileset ops work on whole files")
        );
    }
    let pick = match o.pick.as_deref().unwrap_or("next") {
        "next" => Pick::Next,
        "random" => Pick::Random,
        "shuffle" => Pick::Shuffle,
        other => {
            return Err(loc.err(format!(
                "unknown pick `{other}`; known: {} (next: slots in order; shuffle: each slot once per pass, in random order)",
                keys::PICK.known()
            )))
        }
    };
    let size = match &o.size {
        None => None,
        Some(_) if kind != OpKind::Append => {
            return Err(loc.err(format!(
                "`{}` takes no size: created files get fileset.size; size applies to append",
                kind.name()
            )))
        }
        Some(spec) => {
            let d = resolve_size_dist(spec, loc)?;
            if d.max() > MAX_FILE_BYTES {
                return Err(
                    loc.err(format!("append size is more than {}", fmt_bytes(MAX_FILE_BYTES)))
                );
            }
            Some(d)
        }
    };
    let (fsync, fsync_dir) = meta_syncs(o, kind, fs, threads, loc)?;
    Ok(MetaOp { kind, pick, fsync, fsync_dir, size })
}

/// The kind of a fileset op by name; data ops and syncs of an open file are refused with
/// what to use instead.
fn fileset_op_kind(name: &str, loc: &Loc<'_>) -> Result<OpKind, WorkloadError> {
    Ok(match OpKind::from_name(name) {
        Some(k) if k.is_fileset() => k,
        Some(OpKind::Read | OpKind::Write) => {
            return Err(loc.err(format!(
                "`{name}` is a data op of file tests; fileset tests read and write whole files: readwhole, create, append, replace"
            )))
        }
        Some(OpKind::Fsync | OpKind::Fdatasync) => {
            return Err(loc.err(format!(
                "`{name}` needs an open file; in fileset tests set fsync = true on create or append, or use fsyncdir"
            )))
        }
        _ => {
            return Err(loc.err(format!(
                "unknown op `{name}`; fileset ops are {}",
                keys::FILESET_OP.known()
            )))
        }
    })
}

/// `fsync` and `fsync_dir` of a fileset op, checked against its kind; and the directory ops,
/// which need a tree and one thread.
fn meta_syncs(
    o: &OpSpec,
    kind: OpKind,
    fs: &FileSet,
    threads: u32,
    loc: &Loc<'_>,
) -> Result<(bool, bool), WorkloadError> {
    let fsync = o.fsync.unwrap_or(false);
    if fsync && !matches!(kind, OpKind::Create | OpKind::Append) {
        return Err(loc.err(format!(
            "fsync = true applies to create and append{}",
            if kind == OpKind::Replace {
                " (replace always fsyncs its temporary file)"
            } else {
                ""
            }
        )));
    }
    let fsync_dir = o.fsync_dir.unwrap_or(false);
    if fsync_dir
        && !matches!(
            kind,
            OpKind::Create
                | OpKind::Unlink
                | OpKind::Rename
                | OpKind::Replace
                | OpKind::Mkdir
                | OpKind::Rmdir
                | OpKind::Opencreate
                | OpKind::Mkdirslot
                | OpKind::Rmdirslot
        )
    {
        return Err(loc.err(
            "fsync_dir = true applies to create, opencreate, unlink, rename, replace, mkdir, rmdir, mkdirslot and rmdirslot (ops that change a directory)",
        ));
    }
    if matches!(kind, OpKind::Mkdir | OpKind::Rmdir) {
        if fs.layout == Layout::Flat {
            return Err(loc.err(format!(
                "`{}` works on the directories of a tree; this fileset is flat",
                kind.name()
            )));
        }
        if threads != 1 {
            return Err(loc.err(format!(
                "`{}` needs threads = 1: a directory's parent must exist before it and be empty after it, which threads sharing the tree cannot promise (create makes missing directories itself)",
                kind.name()
            )));
        }
    }
    Ok((fsync, fsync_dir))
}

#[cfg(test)]
mod fileset_tests {
    use crate::model::job::*;
    use crate::model::scale::Scale;
    use crate::model::sched::CpuAffinity;
    use crate::workload::{spec, validate, ResolveCtx};

    fn load(text: &str, scale: Scale) -> Result<Suite, String> {
        let ctx = ResolveCtx { scale, free_memory: 1 << 30 };
        let s = spec::parse(text, "w.toml").map_err(|e| e.to_string())?;
        validate::resolve(&s, "w.toml", &ctx).map_err(|e| e.to_string())
    }

    fn test(fileset: &str, pattern: &str, amount: &str) -> String {
        format!(
            "[[test]]\nid = \"m\"\nname = \"m\"\nfileset = {fileset}\n[[test.phase]]\nname = \"p\"\npattern = {pattern}\namount = {amount}\n"
        )
    }

    /// A phase's (and a role's) `nice`, `ioprio`, `cpus` and `cpus_policy` resolve to what each
    /// thread sets; values out of range, a CPU this machine lacks and a policy without CPUs are
    /// refused before anything runs.
    #[test]
    fn thread_scheduling_keys_resolve_and_are_checked() {
        let data = |keys: &str| {
            format!("[[test]]\nid = \"d\"\nname = \"d\"\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ bytes = \"1M\" }}\n{keys}\n[[test.role]]\nname = \"w\"\nfile = {{ size = \"1M\" }}\npattern = [{{ op = \"write\", size = \"4K\" }}]\nioprio = \"idle\"\n")
        };
        let s = load(
            &data("nice = -2\nioprio = \"be:5\"\ncpus = \"0\"\ncpus_policy = \"split\""),
            Scale::Paper,
        )
        .unwrap();
        let p = &s.tests[0].phases[0].sched;
        assert_eq!(p.nice, Some(-2));
        assert_eq!(p.ioprio.map(|i| i.value()), Some(2 << 13 | 5));
        assert_eq!(p.cpus, Some(CpuAffinity { cpus: vec![0], split: true }));
        let r = &s.tests[0].roles[0].phase.sched;
        assert_eq!(r.ioprio.map(|i| i.value()), Some(3 << 13));
        assert!(r.nice.is_none() && r.cpus.is_none());
        let none = load(&data(""), Scale::Paper).unwrap();
        assert!(none.tests[0].phases[0].sched.is_none());
        let beyond = crate::sys::sched::configured_cpus();
        for (keys, want) in [
            ("nice = 20".to_string(), "nice = 20: give -20"),
            ("ioprio = \"be:8\"".into(), "the level is 0"),
            ("ioprio = \"top\"".into(), "the class is rt, be or idle"),
            (format!("cpus = \"{beyond}\""), "is not on this machine"),
            ("cpus_policy = \"split\"".into(), "cpus_policy without cpus"),
            ("cpus = \"0\"\ncpus_policy = \"half\"".into(), "write \"shared\""),
        ] {
            let e = load(&data(&keys), Scale::Paper).unwrap_err().to_string();
            assert!(e.contains(want), "{keys}: {e}");
        }
    }

    /// `file.per_thread` and `file.service`: several files of each thread's own (the set is
    /// threads × files), the service parsed; what several files cannot do is refused, with
    /// the key that asks for it.
    #[test]
    fn several_files_per_thread_resolve_and_are_checked() {
        let data = |file: &str, test: &str, phase: &str| {
            format!("[[test]]\nid = \"d\"\nname = \"d\"\nthreads = 2\n{test}\nfile = {{ size = \"64K\"{file} }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\", offset = \"random\" }}]\namount = {{ bytes = \"64K\" }}\n{phase}\n")
        };
        let s = load(
            &data(", shared = false, per_thread = 4, service = \"random:2\"", "", ""),
            Scale::Paper,
        )
        .unwrap();
        let f = &s.tests[0].files;
        assert_eq!((f.count, f.size_bytes()), (8, 65536));
        assert_eq!(f.per_thread, Some(PerThread { files: 4, service: FileService::Random(2) }));
        let one = load(&data(", shared = false, per_thread = 1", "", ""), Scale::Paper).unwrap();
        assert_eq!((one.tests[0].files.count, one.tests[0].files.per_thread), (2, None));
        for (file, test, phase, want) in [
            (", shared = false, per_thread = 0", "", "", "at least 1 file"),
            (
                ", shared = false, per_thread = 2, service = \"zipf\"",
                "",
                "",
                "give roundrobin, sequential or random",
            ),
            (", shared = false, per_thread = 2, service = \"sequential:2\"", "", "", "takes no :N"),
            (", per_thread = 2, shared = true", "", "", "file.shared = true"),
            (", shared = false, per_thread = 2, offset = \"4K\"", "", "", "with file.offset"),
            (", shared = false, per_thread = 2", "verify = true", "", "with verify"),
            (
                ", shared = false, per_thread = 2",
                "random_distribution = \"zipf:1.2\"",
                "",
                "random_distribution",
            ),
            (", shared = false, per_thread = 2", "engine = \"mmap\"", "", "engine mmap"),
            (", shared = false, per_thread = 2", "", "random_percent = 50", "random_percent"),
        ] {
            let e = load(&data(file, test, phase), Scale::Paper).unwrap_err().to_string();
            assert!(e.contains(want), "{file} {test} {phase}: {e}");
        }
    }

    /// `file.name_format`: a test's own files named by the template, each thread's file or
    /// files a name of its own; what would give two files one name, a path or a shared file
    /// is refused with why.
    #[test]
    fn own_files_are_named_by_the_template_and_checked() {
        let data = |file: &str| {
            format!("[[test]]\nid = \"d\"\nname = \"d\"\nthreads = 2\nfile = {{ size = \"64K\", shared = false{file} }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ bytes = \"64K\" }}\n")
        };
        let s = load(&data(", per_thread = 2, name_format = \"w.{thread}.{file}\""), Scale::Paper)
            .unwrap();
        let f = &s.tests[0].files;
        assert_eq!(
            (f.own_name(1, 0).as_deref(), f.own_name(0, 1).as_deref()),
            (Some("w.1.0"), Some("w.0.1"))
        );
        let s = load(&data(", name_format = \"x{thread}\""), Scale::Paper).unwrap();
        assert_eq!(s.tests[0].files.own_name(1, 0).as_deref(), Some("x1"));
        for (file, want) in [
            (", name_format = \"w.{file}\"", "add `{thread}`"),
            (", per_thread = 2, name_format = \"w.{thread}\"", "add `{file}`"),
            (", name_format = \"d/w.{thread}\"", "without `/`"),
            (", name_format = \"w{x}.{thread}\"", "only words in braces"),
            (", name_format = \"\"", "1 to 255 bytes"),
        ] {
            let e = load(&data(file), Scale::Paper).unwrap_err().to_string();
            assert!(e.contains(want), "{file}: {e}");
        }
        let shared =
            data(", name_format = \"w.{thread}\"").replace("shared = false", "shared = true");
        let e = load(&shared, Scale::Paper).unwrap_err().to_string();
        assert!(e.contains("file.shared = false"), "{e}");
    }

    #[test]
    fn tree_fileset_resolves_and_scales() {
        let t = test(
            "{ tree = { depth = 2, fanout = 10, files_per_dir = 100 }, size = { lognormal = { median = \"20K\", sigma = 0.6, min = \"10K\", max = \"150K\" } } }",
            "[{ op = \"create\", fsync = true, fsync_dir = true }, { op = \"stat\", pick = \"shuffle\" }]",
            "{ passes = 1 }",
        );
        let s = load(&t, Scale::Paper).unwrap();
        let fs = &s.tests[0].files;
        assert_eq!(fs.count, 10_000);
        assert_eq!(fs.write_size, 64 << 10);
        let p = &s.tests[0].phases[0];
        assert_eq!(p.pattern.len(), 2);
        let c = p.pattern.entries()[0].choices[0].1;
        assert!(c.fsync && c.fsync_dir && c.pick == Pick::Next);
        assert_eq!(p.pattern.entries()[1].choices[0].1.pick, Pick::Shuffle);
        let q = load(&t, Scale::Quick).unwrap();
        assert_eq!(q.tests[0].files.count, 2500, "files_per_dir 100 -> 25");
    }

    #[test]
    fn a_scaled_description_says_what_is_measured_at_that_scale() {
        let data = "[suite]\nname = \"s\"\n[[test]]\nid = \"d\"\nname = \"d\"\ndescription = \"write 1 GB into a 128 MB file\"\nfile = { size = \"128M\" }\n[[test.phase]]\nname = \"w\"\npattern = [{ op = \"write\", size = \"1M\" }]\namount = { bytes = \"1G\" }\n";
        let paper = load(data, Scale::Paper).unwrap();
        assert_eq!(paper.tests[0].description, "write 1 GB into a 128 MB file");
        let quick = load(data, Scale::Quick).unwrap();
        assert_eq!(
            quick.tests[0].description,
            "write 1 GB into a 128 MB file [at scale quick: a 32 MiB file, 256 MiB of I/O]"
        );
        let t = test(
            "{ count = 65536, flat = true, size = \"0\", prefill = true }",
            "[{ op = \"unlink\" }]",
            "{ passes = 1 }",
        );
        let q = load(&t, Scale::Quick).unwrap();
        assert_eq!(q.tests[0].description, "at scale quick: 16384 empty files");
    }

    #[test]
    fn choose_entries_and_weights() {
        let t = test(
            "{ count = 100, flat = true, size = { uniform = [\"500\", \"9K\"] } }",
            "[{ op = \"create\" }, { choose = [{ op = \"create\", weight = 5 }, { op = \"unlink\", weight = 3, pick = \"random\" }] }]",
            "{ ops = 10 }",
        );
        let s = load(&t, Scale::Paper).unwrap();
        let e = &s.tests[0].phases[0].pattern.entries()[1];
        assert_eq!(e.choices.len(), 2);
        assert_eq!(e.choices[0].0, 5);
        assert_eq!(e.choices[1].1.kind, OpKind::Unlink);
        assert_eq!(e.choices[1].1.pick, Pick::Random);
    }

    fn err(fileset: &str, pattern: &str, amount: &str) -> String {
        load(&test(fileset, pattern, amount), Scale::Paper).unwrap_err()
    }

    const FLAT: &str = "{ count = 100, flat = true, size = \"4K\" }";

    #[test]
    fn errors_name_the_problem_and_the_fix() {
        let e = err("{ count = 10, size = \"4K\" }", "[{ op = \"create\" }]", "{ passes = 1 }");
        assert!(e.contains("flat = true") && e.contains("tree"), "{e}");
        let e = err(
            "{ count = 5, tree = { depth = 2, fanout = 3, files_per_dir = 4 }, size = \"1K\" }",
            "[{ op = \"create\" }]",
            "{ passes = 1 }",
        );
        assert!(e.contains("3^2 × 4 = 36"), "{e}");
        let e = err(FLAT, "[{ op = \"read\", size = \"4K\" }]", "{ ops = 1 }");
        assert!(e.contains("readwhole"), "{e}");
        let e = err(
            "{ count = 10, flat = true, size = \"0\", paths = \"full\" }",
            "[{ op = \"create\" }]",
            "{ passes = 1 }",
        );
        assert!(e.contains("`full`") && e.contains("relative, absolute"), "{e}");
        for bad in ["", ".hidden", "-x", "a/b", "x y", &"n".repeat(33)] {
            let e = err(
                &format!("{{ count = 10, flat = true, size = \"0\", name_prefix = {bad:?} }}"),
                "[{ op = \"create\" }]",
                "{ passes = 1 }",
            );
            assert!(e.contains("name_prefix") && e.contains("letters, digits"), "{bad}: {e}");
        }
        let e = err(FLAT, "[{ op = \"stat\" }]", "{ passes = 1 }");
        assert!(e.contains("prefill = true"), "{e}");
        let e = err(FLAT, "[{ op = \"mkdir\" }]", "{ passes = 1 }");
        assert!(e.contains("flat"), "{e}");
        let e = err(FLAT, "[{ op = \"create\", pick = \"any\" }]", "{ passes = 1 }");
        assert!(e.contains("unknown pick `any`") && e.contains("pattern entry 1"), "{e}");
        let e = err(FLAT, "[{ op = \"create\" }]", "{ bytes = \"1M\" }");
        assert!(e.contains("fill"), "{e}");
        let e = err(FLAT, "[{ op = \"create\" }]", "{ fill = 1.5 }");
        assert!(e.contains("(0, 1]"), "{e}");
        let e = err(FLAT, "[{ op = \"stat\" }]", "{ fill = 0.5 }");
        assert!(e.contains("create"), "{e}");
        let e = err(FLAT, "[{ op = \"unlink\", fsync = true }]", "{ ops = 1 }");
        assert!(e.contains("create and append"), "{e}");
        let e = err(FLAT, "[{ choose = [] }]", "{ ops = 1 }");
        assert!(e.contains("choose = []"), "{e}");
        let e = err(FLAT, "[{ choose = [{ op = \"create\", weight = 0 }] }]", "{ ops = 1 }");
        assert!(e.contains("weight = 0"), "{e}");
        let e = err(FLAT, "[{ op = \"stat\", size = \"4K\" }]", "{ ops = 1 }");
        assert!(e.contains("takes no size"), "{e}");
        let e = err(
            "{ count = 100, flat = true, size = { lognormal = { median = \"20K\", sigma = 0.6, min = \"1M\", max = \"2M\" } } }",
            "[{ op = \"create\" }]",
            "{ passes = 1 }",
        );
        assert!(e.contains("min <= median"), "{e}");
        let e = err(
            "{ count = 100, flat = true, size = { lognormal = { median = \"20K\", sigma = 4, min = \"19.5K\", max = \"20.5K\" } } }",
            "[{ op = \"create\" }]",
            "{ passes = 1 }",
        );
        assert!(e.contains("lies within"), "{e}");
        let e = err(
            "{ count = 100, flat = true, size = { gamma = 2 } }",
            "[{ op = \"create\" }]",
            "{ passes = 1 }",
        );
        assert!(e.contains("unknown size distribution `gamma`") && e.contains("w.toml:4"), "{e}");
        let e = err(
            "{ count = 100, flat = true, size = { lognormal = { median = \"20K\", sigma = 0.6, mni = \"1K\", max = \"2M\" } } }",
            "[{ op = \"create\" }]",
            "{ passes = 1 }",
        );
        assert!(e.contains("mni"), "{e}");
    }

    #[test]
    fn file_and_fileset_keys_do_not_mix() {
        let t = "[[test]]\nid = \"x\"\nname = \"x\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"p\"\npattern = [{ op = \"create\" }]\namount = { ops = 1 }\n";
        let e = load(t, Scale::Paper).unwrap_err();
        assert!(e.contains("fileset = {"), "{e}");
        let t = "[[test]]\nid = \"x\"\nname = \"x\"\n[[test.phase]]\nname = \"p\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { ops = 1 }\n";
        let e = load(t, Scale::Paper).unwrap_err();
        assert!(e.contains("missing `file` or `fileset`"), "{e}");
        let t = "[[test]]\nid = \"x\"\nname = \"x\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"p\"\npattern = [{ op = \"read\", size = \"4K\", pick = \"random\" }]\namount = { ops = 1 }\n";
        let e = load(t, Scale::Paper).unwrap_err();
        assert!(e.contains("`pick` applies to fileset tests"), "{e}");
    }
}

#[cfg(test)]
mod model_tests {
    use crate::model::job::*;
    use crate::model::scale::Scale;
    use crate::workload::{spec, validate, ResolveCtx};

    fn load(text: &str) -> Suite {
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        validate::resolve(&spec::parse(text, "w.toml").unwrap(), "w.toml", &ctx).unwrap()
    }

    #[test]
    fn a_shared_file_is_a_set_of_one_and_one_per_thread_a_set_of_n() {
        let t = |shared: bool| {
            format!("[[test]]\nid = \"d\"\nname = \"d\"\nthreads = 4\nfile = {{ size = \"8M\", shared = {shared} }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n")
        };
        let one = &load(&t(true)).tests[0];
        assert_eq!((one.files.count, one.files.shared), (1, true));
        assert_eq!(one.files.size, SizeDist::Fixed(8 << 20));
        assert_eq!((one.footprint_bytes(), one.inodes_needed()), (8 << 20, 1));
        assert!(!one.is_fileset());
        let n = &load(&t(false)).tests[0];
        assert_eq!((n.files.count, n.files.shared), (4, false));
        assert_eq!((n.footprint_bytes(), n.inodes_needed()), (32 << 20, 4));
        assert!(matches!(n.phases[0].pattern, Pattern::Data(_)));
    }
}

#[cfg(test)]
mod engine_tests {
    use crate::model::scale::Scale;
    use crate::sys::classify::Classify;
    use crate::workload::engines::EngineCheckError;
    use crate::workload::{spec, validate, ResolveCtx, WorkloadError};

    fn refusal(test_keys: &str, file: &str, phase_keys: &str) -> WorkloadError {
        let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\n{test_keys}\nfile = {file}\n[[test.phase]]\nname = \"p\"\n{phase_keys}\namount = {{ ops = 1 }}\n");
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx).unwrap_err()
    }

    /// `sync.before_next` needs a periodic sync to move.
    #[test]
    fn sync_before_next_needs_a_periodic_sync() {
        let write = |sync: &str| {
            format!("open = [\"create\"]\npattern = [{{ op = \"write\", size = \"4K\" }}]\nsync = {{ {sync} }}")
        };
        let e = refusal("", "{ size = \"1M\", prefill = false }", &write("before_next = true"));
        assert!(e.to_string().contains("applies to a periodic sync"), "{e}");
        let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\nfile = {{ size = \"1M\", prefill = false }}\n[[test.phase]]\nname = \"p\"\n{}\namount = {{ ops = 1 }}\n", write("every_ops = 8, before_next = true"));
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        let s = validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx).unwrap();
        assert!(s.tests[0].phases[0].sync.before_next);
    }

    /// `file.preallocate` takes its three words, lays out only a file that is not prefilled
    /// (with a prefill it is refused, saying why), and reaches the resolved file set.
    #[test]
    fn file_preallocate_is_checked_and_resolved() {
        let write = "open = [\"create\"]\npattern = [{ op = \"write\", size = \"4K\" }]";
        let e = refusal("", "{ size = \"1M\", preallocate = \"fallocate\" }", write);
        assert!(e.to_string().contains("set file.prefill = false"), "{e}");
        let e = refusal("", "{ size = \"1M\", prefill = false, preallocate = \"zero\" }", write);
        assert!(e.to_string().contains("known: fallocate, keep-size, truncate"), "{e}");
        for (word, want) in [
            ("fallocate", crate::model::job::Preallocate::Fallocate),
            ("keep-size", crate::model::job::Preallocate::KeepSize),
            ("truncate", crate::model::job::Preallocate::Truncate),
        ] {
            let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\nfile = {{ size = \"1M\", prefill = false, preallocate = \"{word}\" }}\n[[test.phase]]\nname = \"p\"\n{write}\namount = {{ ops = 1 }}\n");
            let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
            let s =
                validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx).unwrap();
            assert_eq!(s.tests[0].files.preallocate, Some(want));
        }
    }

    /// What an engine refuses comes back typed, where it is (the test, or the phase whose use of
    /// the engine's capabilities it is), and as bad input; the words are the ones users saw.
    #[test]
    fn an_engines_refusal_is_typed_and_placed() {
        let read = "pattern = [{ op = \"read\", size = \"4K\" }]";
        let e = refusal("sqpoll = true", "{ size = \"1M\" }", read);
        assert!(e.is_bad_input());
        assert_eq!(
            e.to_string(),
            "w.toml: test e: sqpoll is an option of the io_uring engine; set engine = \"io_uring\" or remove it"
        );
        match e {
            WorkloadError::Engine { location, source, .. } => {
                assert_eq!(location, "test e");
                assert_eq!(
                    *source,
                    EngineCheckError::ForeignKey { key: "sqpoll".into(), owner: "io_uring" }
                );
            }
            other => panic!("{other:?}"),
        }
        let e = refusal("engine = \"mmap\"", "{ size = \"1M\", prefill = false }", read);
        match &e {
            WorkloadError::Engine { source, .. } => {
                assert!(matches!(**source, EngineCheckError::Options { engine: "mmap", .. }))
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("needs file.prefill = true"), "{e}");
        // O_DIRECT sizes are the file's to judge (when the test starts): 512-byte and 6K ops
        // validate; sizes drawn from a range (any number of bytes) do not.
        let odd = "pattern = [{ op = \"read\", size = \"6K\" }, { op = \"write\", size = \"512\", offset = \"random\", align = \"512\" }]\nopen = [\"direct\"]";
        let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"p\"\n{odd}\namount = {{ ops = 1 }}\n");
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        let s = validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx).unwrap();
        assert!(s.tests[0].phases[0].open.direct);
        let drawn = "pattern = [{ op = \"read\", size = { uniform = [\"4K\", \"8K\"] } }]\nopen = [\"direct\"]";
        match refusal("", "{ size = \"1M\" }", drawn) {
            WorkloadError::Engine { location, source, .. } => {
                assert_eq!(location, "test e, phase `p`", "a phase's use of the engine");
                assert_eq!(*source, EngineCheckError::DrawnSizes);
            }
            other => panic!("{other:?}"),
        }
        match refusal("iodepth = 8", "{ size = \"1M\" }", read) {
            WorkloadError::Engine { source, .. } => {
                assert_eq!(*source, EngineCheckError::Depth { engine: "psync".into(), max: 1 })
            }
            other => panic!("{other:?}"),
        }
    }

    /// `exitall` of a test and of a role resolve to the engine's stop (group 0 by default);
    /// an unknown `stops` is refused, saying why.
    #[test]
    fn exitall_of_a_test_and_a_role_resolves_or_is_refused() {
        use crate::model::job::{ExitAll, ExitStops};
        let load = |test_keys: &str, role_keys: &str| {
            let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\n{test_keys}\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"p\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ ops = 1 }}\n[[test.role]]\nname = \"w\"\nfile = {{ size = \"1M\" }}\nopen = [\"create\"]\npattern = [{{ op = \"write\", size = \"4K\" }}]\n{role_keys}\n");
            let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
            validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx)
                .map_err(|e| e.to_string())
        };
        let s =
            load("exitall = { stops = \"test\" }", "exitall = { stops = \"group\", group = 2 }")
                .unwrap();
        assert_eq!(s.tests[0].exitall, Some(ExitAll { stops: ExitStops::Test, group: 0 }));
        assert_eq!(
            s.tests[0].roles[0].exitall,
            Some(ExitAll { stops: ExitStops::Group, group: 2 })
        );
        let s = load("", "").unwrap();
        assert_eq!((s.tests[0].exitall, s.tests[0].roles[0].exitall), (None, None));
        let e = load("exitall = { stops = \"all\" }", "").unwrap_err();
        assert!(e.contains("the test: exitall.stops = \"all\": give \"group\""), "{e}");
        // A job that stops the test is still in its group, for the others' group stops.
        let s = load("", "exitall = { stops = \"test\", group = 1 }").unwrap();
        assert_eq!(s.tests[0].roles[0].exitall, Some(ExitAll { stops: ExitStops::Test, group: 1 }));
    }

    /// `unlink_each_pass` (fio's `unlink_each_loop`) is taken on a data test whose threads each
    /// write their own file of the run through psync or libaio, and refused, saying why, with
    /// reads, a shared file, a path, another engine or a fileset.
    #[test]
    fn unlink_each_pass_needs_writes_to_own_files_by_descriptor() {
        let load = |test_keys: &str, file: &str, pattern: &str| {
            let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\n{test_keys}\nfile = {{ size = \"1M\"{file} }}\n[[test.phase]]\nname = \"p\"\npattern = {pattern}\namount = {{ bytes = \"3M\" }}\nunlink_each_pass = true\n");
            let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
            spec::parse(&text, "w.toml")
                .map_err(|e| e.to_string())
                .and_then(|s| validate::resolve(&s, "w.toml", &ctx).map_err(|e| e.to_string()))
        };
        let write = "[{ op = \"write\", size = \"4K\" }]";
        let s = load("threads = 2", ", shared = false", write).unwrap();
        assert!(s.tests[0].phases[0].unlink_each_pass);
        assert!(load("engine = \"libaio\"", "", write).is_ok());
        for (keys, file, pattern, why) in [
            ("", "", "[{ op = \"read\", size = \"4K\" }]", "with reads"),
            ("threads = 2", ", shared = true", write, "a file the threads share"),
            ("", ", path = \"/tmp/fsbench-never\"", write, "unlinks only files it makes"),
            ("engine = \"io_uring\"", "", write, "engine = \"io_uring\""),
            ("engine = \"mmap\"", ", prefill = true", write, "engine = \"mmap\""),
        ] {
            let e = load(keys, file, pattern).unwrap_err();
            assert!(e.contains(why), "{keys} {file}: {e}");
        }
        let text = "[[test]]\nid = \"f\"\nname = \"f\"\nfileset = { count = 10, flat = true, size = \"4K\", prefill = true }\n[[test.phase]]\nname = \"p\"\npattern = [{ op = \"stat\", pick = \"random\" }]\namount = { ops = 1 }\nunlink_each_pass = true\n";
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        let e =
            validate::resolve(&spec::parse(text, "w.toml").unwrap(), "w.toml", &ctx).unwrap_err();
        assert!(e.to_string().contains("unlink_each_pass applies to data tests"), "{e}");
    }

    /// `{ unaligned_range = [MIN, MAX] }` (fio's bsrange with bs_unaligned) resolves to the
    /// model's law, one size when MIN = MAX, and is refused reversed or from 0.
    #[test]
    fn an_unaligned_range_resolves_and_is_checked() {
        let load = |size: &str| {
            let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"p\"\npattern = [{{ op = \"read\", size = {size} }}]\namount = {{ ops = 1 }}\n");
            let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
            spec::parse(&text, "w.toml")
                .map_err(|e| e.to_string())
                .and_then(|s| validate::resolve(&s, "w.toml", &ctx).map_err(|e| e.to_string()))
                .map(|s| s.tests[0].phases[0].pattern.data()[0].size)
        };
        assert_eq!(
            load("{ unaligned_range = [\"4K\", \"16K\"] }"),
            Ok(crate::model::job::SizeDist::UnalignedRange { min: 4096, max: 16384 })
        );
        assert_eq!(
            load("{ unaligned_range = [\"4K\", \"4K\"] }"),
            Ok(crate::model::job::SizeDist::Fixed(4096))
        );
        for bad in ["[\"16K\", \"4K\"]", "[0, \"4K\"]"] {
            let e = load(&format!("{{ unaligned_range = {bad} }}")).unwrap_err();
            assert!(e.contains("write [min, max] with 1 <= min <= max"), "{bad}: {e}");
        }
    }

    /// `random_percent` (fio's `percentage_random`) resolves to `[reads, writes]` on a data
    /// phase with random ops (one value both, 100 none), on a role too, and is refused, saying
    /// why, out of range, as a list of other than two, without random ops and on a fileset.
    #[test]
    fn random_percent_is_a_share_per_direction_of_random_ops() {
        let load = |keys: &str, pattern: &str| {
            let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"p\"\npattern = {pattern}\namount = {{ ops = 1 }}\n{keys}\n");
            let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
            validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx)
                .map_err(|e| e.to_string())
        };
        let rand = "[{ op = \"read\", size = \"4K\", offset = \"random\", write_percent = 50 }]";
        let share = |keys: &str| load(keys, rand).map(|s| s.tests[0].phases[0].random_percent);
        assert_eq!(share("random_percent = 30"), Ok(Some([30, 30])));
        assert_eq!(share("random_percent = [0, 60]"), Ok(Some([0, 60])));
        assert_eq!(share("random_percent = 100"), Ok(None));
        assert_eq!(share(""), Ok(None));
        for (keys, why) in [
            ("random_percent = 101", "random_percent = 101: a share is 0 to 100"),
            ("random_percent = [30, 120]", "random_percent = 120"),
            ("random_percent = [30]", "give one share (30) or [reads, writes]"),
            ("random_percent = [1, 2, 3]", "give one share (30) or [reads, writes]"),
        ] {
            let e = share(keys).unwrap_err();
            assert!(e.contains(why), "{keys}: {e}");
        }
        let seq = "[{ op = \"read\", size = \"4K\" }]";
        let e = load("random_percent = 30", seq).unwrap_err();
        assert!(e.contains("it has none: add offset = \"random\""), "{e}");
        let text = "[[test]]\nid = \"f\"\nname = \"f\"\nfileset = { count = 10, flat = true, size = \"4K\", prefill = true }\n[[test.phase]]\nname = \"p\"\npattern = [{ op = \"stat\", pick = \"random\" }]\namount = { ops = 1 }\nrandom_percent = 30\n";
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        let e =
            validate::resolve(&spec::parse(text, "w.toml").unwrap(), "w.toml", &ctx).unwrap_err();
        assert!(e.to_string().contains("random_percent applies to data tests"), "{e}");
        let role = "[[test]]\nid = \"d\"\nname = \"d\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { bytes = \"1M\" }\n[[test.role]]\nname = \"w\"\nfile = { size = \"1M\" }\npattern = [{ op = \"write\", size = \"4K\", offset = \"random\" }]\nrandom_percent = [100, 25]\n";
        let s = validate::resolve(&spec::parse(role, "w.toml").unwrap(), "w.toml", &ctx).unwrap();
        assert_eq!(s.tests[0].roles[0].phase.random_percent, Some([100, 25]));
    }

    /// `random_map` maps the random ops of a data phase that all have one fixed size and one
    /// alignment, is off for a phase without random ops, and is refused, saying why, elsewhere.
    #[test]
    fn random_map_needs_one_fixed_size_and_a_data_test() {
        let load = |test_keys: &str, pattern: &str| {
            let text = format!("[[test]]\nid = \"e\"\nname = \"e\"\n{test_keys}\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"p\"\npattern = {pattern}\namount = {{ ops = 1 }}\n");
            let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
            validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx)
        };
        let mixed = "[{ op = \"read\", size = \"4K\", offset = \"random\", align = \"4K\", repeat = 3 }, { op = \"write\", size = \"4K\", offset = \"last\" }]";
        let s = load("random_map = true", mixed).unwrap();
        assert!(s.tests[0].phases[0].random_map);
        let s = load("", mixed).unwrap();
        assert!(!s.tests[0].phases[0].random_map, "off unless the test sets it");
        let seq = "[{ op = \"read\", size = \"4K\" }]";
        assert!(!load("random_map = true", seq).unwrap().tests[0].phases[0].random_map);
        let two = "[{ op = \"read\", size = \"4K\", offset = \"random\" }, { op = \"write\", size = \"8K\", offset = \"random\" }]";
        let e = load("random_map = true", two).unwrap_err();
        assert!(e.to_string().contains("one size and one align"), "{e}");
        let drawn =
            "[{ op = \"read\", size = { uniform = [\"1K\", \"8K\"] }, offset = \"random\" }]";
        let e = load("random_map = true", drawn).unwrap_err();
        assert!(e.to_string().contains("needs a fixed size"), "{e}");
        let text = "[[test]]\nid = \"f\"\nname = \"f\"\nrandom_map = true\nfileset = { count = 10, flat = true, size = \"4K\", prefill = true }\n[[test.phase]]\nname = \"p\"\npattern = [{ op = \"stat\", pick = \"random\" }]\namount = { ops = 1 }\n";
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        let e =
            validate::resolve(&spec::parse(text, "w.toml").unwrap(), "w.toml", &ctx).unwrap_err();
        assert!(e.to_string().contains("applies to data tests"), "{e}");
    }

    /// A role's own engine, depth, O_DIRECT and amount are checked as a test's.
    #[test]
    fn a_roles_engine_depth_and_amount_are_checked_as_a_tests() {
        let role = |keys: &str| {
            let text = format!("[[test]]\nid = \"r\"\nname = \"r\"\nfile = {{ size = \"1M\" }}\n[[test.phase]]\nname = \"p\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ ops = 1 }}\n[[test.role]]\nname = \"x\"\nfile = {{ size = \"1M\" }}\npattern = [{{ op = \"read\", size = \"4K\" }}]\n{keys}\n");
            let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
            validate::resolve(&spec::parse(&text, "w.toml").unwrap(), "w.toml", &ctx)
                .map(|s| s.tests[0].roles[0].clone())
                .map_err(|e| e.to_string())
        };
        let r = role("engine = \"io_uring\"\niodepth = 8\ndirect = true\nregisterfiles = false\namount = { bytes = \"2M\" }\ndelay = 0.5").unwrap();
        assert_eq!((r.engine.name(), r.iodepth, r.phase.open.direct), ("io_uring", 8, true));
        assert_eq!(r.phase.cache, crate::model::job::CacheReq::Direct);
        assert!(!crate::workload::engines::uring::uring_opts(&r.engine_options).registerfiles);
        assert!(
            r.own_amount
                && matches!(r.phase.amount, crate::model::job::Amount::Bytes(b) if b == 2 << 20)
        );
        assert_eq!(r.delay_seconds, 0.5);
        let bound = role("").unwrap();
        assert!(!bound.own_amount && bound.engine.name() == "psync" && bound.iodepth == 1);
        let e = role("iodepth = 8").unwrap_err();
        assert!(e.contains("iodepth"), "a synchronous engine has one I/O in flight: {e}");
        let e = role("direct = true\nuncached = true").unwrap_err();
        assert!(e.contains("nothing to drop"), "{e}");
        let e = role("delay = -1").unwrap_err();
        assert!(e.contains("delay = -1"), "{e}");
        let e = role("amount = { passes = 1 }").unwrap_err();
        assert!(e.contains("bytes, ops or seconds"), "{e}");
    }
}

#[cfg(test)]
mod data_fill_tests {
    use crate::model::job::Amount;
    use crate::model::scale::Scale;
    use crate::workload::{spec, validate, ResolveCtx};

    fn load(
        test_keys: &str,
        pattern: &str,
        fill: &str,
    ) -> Result<crate::model::job::Suite, String> {
        let text = format!("[[test]]\nid = \"f\"\nname = \"f\"\n{test_keys}\nfile = {{ size = \"64K\", prefill = false }}\n[[test.phase]]\nname = \"p\"\nopen = [\"create\"]\npattern = {pattern}\namount = {{ fill = {fill} }}\n");
        let ctx = ResolveCtx { scale: Scale::Paper, free_memory: 1 << 30 };
        let s = spec::parse(&text, "w.toml").map_err(|e| e.to_string())?;
        validate::resolve(&s, "w.toml", &ctx).map_err(|e| e.to_string())
    }

    /// A data test's `amount.fill` (fio's fill_device) is 1 with sequential writes only, through
    /// an engine of system calls and without `verify`; anything else is refused with why.
    #[test]
    fn a_data_fill_is_sequential_writes_until_full() {
        let seq = "[{ op = \"write\", size = \"64K\" }]";
        let s = load("", seq, "1").unwrap();
        assert!(matches!(s.tests[0].phases[0].amount, Amount::Fill(f) if f == 1.0));
        assert!(load("engine = \"io_uring\"\niodepth = 4", seq, "1").is_ok());
        for (keys, pattern, fill, why) in [
            ("", seq, "0.5", "use fill = 1"),
            (
                "",
                "[{ op = \"write\", size = \"4K\", offset = \"random\" }]",
                "1",
                "sequential writes",
            ),
            ("", "[{ op = \"read\", size = \"4K\" }]", "1", "sequential writes"),
            ("", "[{ op = \"write\", size = \"4K\", skip = 4096 }]", "1", "no skip"),
            // (the engine refuses a file that grows first; the fill check would too)
            ("engine = \"mmap\"", seq, "1", "mmap"),
            ("verify = true", seq, "1", "leave verify out"),
        ] {
            let e = load(keys, pattern, fill).unwrap_err();
            assert!(e.contains(why), "{keys} {pattern} {fill}: {e}");
        }
    }
}
