//! The validated, typed form of a workload: every size resolved to bytes, every name to an enum.
//! The engine only ever sees these types, so it never has to re-check its input.

use serde::{Deserialize, Serialize};

/// Cache state required before a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheReq {
    /// No requirement; residency is still measured and recorded.
    #[default]
    Any,
    /// File pages resident before the phase (read once, then verified).
    Cached,
    /// File pages not resident (evicted, then verified).
    Uncached,
    /// O_DIRECT: the page cache is bypassed, so its state does not matter. Every phase that
    /// opens with O_DIRECT has it (set by validation); residency is still measured.
    Direct,
}

/// A suite ready to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Suite {
    /// Suite name.
    pub name: String,
    /// Description.
    pub description: String,
    /// The `--scale` its sizes were resolved with.
    pub scale: super::scale::Scale,
    /// Tests in order.
    pub tests: Vec<TestDef>,
}

/// One test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestDef {
    /// Id used by `--test`.
    pub id: String,
    /// Short name.
    pub name: String,
    /// Description in words.
    pub description: String,
    /// Said with the test's results (`notes`): each becomes a [`crate::model::result::Warning::Note`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Worker threads.
    pub threads: u32,
    /// How operations reach the kernel (`engine`).
    pub engine: EngineKind,
    /// Requests each thread keeps in flight (`iodepth`).
    #[serde(default = "one")]
    pub iodepth: u32,
    /// The engine's own options (its keys, e.g. io_uring's batching and polling), opaque here.
    #[serde(default)]
    pub engine_options: EngineOptions,
    /// What the test is ranked on (`figure`; by default from its kind, see
    /// [`crate::model::result::Figure::of_kind`]).
    #[serde(default)]
    pub figure: Option<crate::model::result::Figure>,
    /// Whether `--min-time` may run the test's phases again (`min_time = false`: never; the
    /// test's work is one pass, as the peer tool it copies does it). Records made before the
    /// key existed read as `true`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub min_time: bool,
    /// The test's own data check (`verify`, as `--verify` for this test only; a translated
    /// fio job's `verify=`). Records made before the key existed read as `false`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub verify: bool,
    /// The test's own seed (`seed`, fio's `randseed`): its offsets, sizes and arrivals are
    /// drawn from it instead of the run's `--seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The set of files the test works on.
    pub files: FileSet,
    /// Phases in order.
    pub phases: Vec<PhaseDef>,
    /// Roles that run beside each timed phase ([`RoleDef`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleDef>,
    /// fio's `exitall` of the test's own threads: when the first of them ends, the jobs it
    /// stops (`exitall`). Records made before the key existed read as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exitall: Option<ExitAll>,
}

/// fio's `exitall` (with `exit_what`) of one job of a test (its own threads or a role): when
/// the first of its threads ends, for any reason, it stops other jobs of the test, each of
/// which keeps the work it did before. A job it stops ends too, and stops what its own
/// `exitall` says (fio's cascade).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitAll {
    /// Which jobs its end stops.
    pub stops: ExitStops,
    /// Its exit group (fio's `groupid`), whatever it stops itself: a job's
    /// [`ExitStops::Group`] stops the jobs of the test with an `exitall` of the same group.
    #[serde(default)]
    pub group: u32,
}

/// Which jobs the end of a job with [`ExitAll`] stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitStops {
    /// The jobs of the test whose `exitall` has the same group (fio's `exit_what=group`).
    Group,
    /// Every job of the test (fio's `exit_what=stonewall` and `all`, within their group).
    Test,
}

/// A role: `threads` threads, each on a data file of its own, doing `phase`'s pattern beside
/// every timed phase of the test until the test's own threads are done (`phase.amount` is
/// then only a bound). Its figures are reported apart from the test's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoleDef {
    /// Name (`writer`).
    pub name: String,
    /// Threads.
    pub threads: u32,
    /// Size of each thread's file, bytes.
    pub file_bytes: u64,
    /// Filled before the first phase (untimed).
    pub prefill: bool,
    /// Laid out before the first phase when not prefilled (untimed; fio's `fallocate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preallocate: Option<Preallocate>,
    /// Seconds it runs before the test's own threads are released.
    #[serde(default)]
    pub lead_seconds: f64,
    /// Open flags, pattern and sync policy (not timed as a phase of its own).
    pub phase: PhaseDef,
    /// How its operations reach the kernel (`engine`; records made before the key existed ran
    /// psync).
    #[serde(default = "psync")]
    pub engine: EngineKind,
    /// Requests each of its threads keeps in flight (`iodepth`).
    #[serde(default = "one")]
    pub iodepth: u32,
    /// The engine's own options (the engine's defaults: a role has no engine keys).
    #[serde(default)]
    pub engine_options: EngineOptions,
    /// Seconds after its release before its threads start (`delay`, fio's `startdelay`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_seconds: f64,
    /// It moves its own amount (`phase.amount`) and the phase waits for it, as fio's jobs of
    /// one group (`amount`); false: it runs until the test's own threads are done.
    #[serde(default, skip_serializing_if = "is_false")]
    pub own_amount: bool,
    /// Its files' cached pages are dropped (fsync + fadvise DONTNEED) in each timed phase as
    /// each of its threads starts, after its wait and delay (`uncached`, fio's `invalidate=1`,
    /// done when the job starts).
    #[serde(default, skip_serializing_if = "is_false")]
    pub uncached: bool,
    /// It starts once these are done (`after`, fio's `wait_for`): the test's own threads, or an
    /// earlier role (by index); its delay counts from then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<RoleWait>,
    /// fio's `exitall`: when its first thread ends, the jobs of the test it stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exitall: Option<ExitAll>,
    /// Its threads share one file of their own (`file.whole`), each working on all of it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shared_file: bool,
    /// Its threads do their I/O on another's file (`same_file`, fio's jobs of one group naming
    /// one `filename`): the test's one file, or the one file of an earlier role (by index; that
    /// role owns it: `shared_file`). The owner lays the file out; nothing of this role's is
    /// made or removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_file: Option<RoleWait>,
}

/// What a role waits for before it starts ([`RoleDef::after`]), or whose file it works on
/// ([`RoleDef::same_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoleWait {
    /// The test's own threads.
    Test,
    /// The role at this index, earlier in the list.
    Role(usize),
}

fn psync() -> EngineKind {
    EngineKind::named("psync")
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn one() -> u32 {
    1
}

fn is_true(b: &bool) -> bool {
    *b
}

/// How the io_uring engine batches, polls and registers (the test's `iodepth_batch`,
/// `iodepth_batch_complete`, `sqpoll`, `iopoll`, `fixedbufs`, `registerfiles`; fio's options of
/// the same names, `sqthread_poll` and `hipri` for the polling ones). A test holds them in its
/// opaque [`EngineOptions`], which the io_uring engine parses into this; it is here, in the
/// model, because results record it (`uring` of an io_uring phase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UringOpts {
    /// Submit once this many requests are queued; 0: everything queued goes in at each reap
    /// (the default at iodepth 1; above it the default is 1, fio's).
    pub batch_submit: u32,
    /// Wait for at least this many completions per reap (at most the requests in flight).
    pub batch_complete: u32,
    /// IORING_SETUP_SQPOLL: a kernel thread polls the submission queue.
    pub sqpoll: bool,
    /// IORING_SETUP_IOPOLL: completions are polled (O_DIRECT on a device with poll queues).
    pub iopoll: bool,
    /// IORING_REGISTER_BUFFERS: the worker's data buffers are registered once, and reads and
    /// writes are READ_FIXED/WRITE_FIXED (no page pinning per op).
    #[serde(default)]
    pub fixedbufs: bool,
    /// IORING_REGISTER_FILES: the file is registered once and named by index (no file-table
    /// lookup per op). Results stored before the option existed had it on.
    #[serde(default = "yes")]
    pub registerfiles: bool,
}

fn yes() -> bool {
    true
}

impl Default for UringOpts {
    fn default() -> Self {
        UringOpts {
            batch_submit: 0,
            batch_complete: 1,
            sqpoll: false,
            iopoll: false,
            fixedbufs: false,
            registerfiles: true,
        }
    }
}

/// The I/O engine of a test (`engine = "..."`), by name: one of the engines declared in
/// `crate::workload::engines` (validation admits no other), run by `crate::engine::ioengine`.
/// A name rather than an enum of the engines, because the list of engines is declared above this
/// layer, in one registry line per engine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EngineKind(String);

impl EngineKind {
    /// The engine called `name` (validation checks that it is declared).
    pub fn named(name: &str) -> EngineKind {
        EngineKind(name.to_string())
    }

    /// The name written in workloads.
    pub fn name(&self) -> &str {
        &self.0
    }
}

/// A value of an engine's own option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptValue {
    /// `true` or `false`.
    Bool(bool),
    /// A non-negative integer.
    Int(u64),
    /// A word.
    Str(String),
}

/// An engine's own options: its workload keys, checked and with their defaults, by key name.
/// Opaque to everything but the engine: its declaration (`crate::workload::engines`) makes
/// them, its runtime (`crate::engine::ioengine`) parses them into its own type, once per phase,
/// before the workers start. Empty for an engine without keys.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EngineOptions(pub std::collections::BTreeMap<String, OptValue>);

impl EngineOptions {
    /// The integer `key`, if set.
    pub fn int(&self, key: &str) -> Option<u64> {
        match self.0.get(key) {
            Some(OptValue::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// The bool `key`, if set.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.0.get(key) {
            Some(OptValue::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// Set `key`.
    pub fn set(&mut self, key: &str, v: OptValue) {
        self.0.insert(key.to_string(), v);
    }
}

/// The files a test works on. Every test works on a set of files: `file = { ... }` with
/// `shared = true` is a set of one file that every thread works on (each in its own region for
/// sequential ops); with `shared = false` a set of one file per thread; `fileset = { ... }` a set
/// of `count` slots, each holding a file or not, that the threads partition (thread k of T owns
/// files k, k+T, ...; one file per thread is the case count = T).
///
/// What the test does with its files is in its phases' [`Pattern`]: data ops on files opened
/// for the phase, or whole-file and namespace ops on slots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSet {
    /// Number of files (after scaling): 1 (shared), the thread count, or a fileset's slots.
    pub count: u64,
    /// Every thread works on every file (a shared data file); otherwise threads partition them.
    pub shared: bool,
    /// Where the files live: flat in one directory, or a tree.
    pub layout: Layout,
    /// Size of each file (a data file's is fixed; a fileset's is drawn per create).
    pub size: SizeDist,
    /// Made (data files: filled and fsynced; slots: created) before the first phase, untimed.
    pub prefill: bool,
    /// Chunk size of whole-file writes (create, append, replace) and reads (readwhole).
    pub write_size: u64,
    /// How fileset ops name their files (results of older versions: relative).
    #[serde(default)]
    pub paths: PathMode,
    /// File names are this and the slot number (`f12`).
    #[serde(default = "default_name_prefix")]
    pub name_prefix: String,
    /// A data test's one file at a path the job names (fio's `filename=/mnt/x.dat`) instead of
    /// fsbench's own file in its work directory (results of older versions: fsbench's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub named: Option<NamedFile>,
    /// A shared data file that every thread works on whole, from its start (fio's jobs naming
    /// one `filename`); otherwise each thread's sequential ops cover its own part of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole: bool,
    /// fio's `offset`/`offset_increment`: each thread's region of its data file, for
    /// sequential and random ops alike (results of older versions: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<Region>,
    /// A data test's one file shared with the run's other tests that name it (fio's plain
    /// `filename` named by several jobs), in fsbench's work directory (results of older
    /// versions: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_file: Option<RunFile>,
    /// A data file that is not prefilled is laid out this way before the first phase, untimed
    /// (fio's `fallocate` for a write job's file); `None`: the test's first write creates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preallocate: Option<Preallocate>,
    /// A data test's files per thread when more than one (fio's `nrfiles`): each thread opens
    /// its own, and each op goes to the one the service picks (results of older versions and
    /// one file per thread: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_thread: Option<PerThread>,
    /// The names of a data test's own files in fsbench's work directory, one per thread and
    /// file, from this template of `{thread}` and `{file}` (fio's `filename_format` with the
    /// job's name put in: `w.{thread}.{file}` for fio's default); `None`: fsbench's
    /// `t<ID>.<thread>.dat` (results of older versions: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_format: Option<String>,
}

impl FileSet {
    /// The name of thread `thread`'s file `file` by [`FileSet::name_format`], if the test has
    /// one.
    pub fn own_name(&self, thread: u32, file: u32) -> Option<String> {
        let f = self.name_format.as_ref()?;
        Some(f.replace(NAME_THREAD, &thread.to_string()).replace(NAME_FILE, &file.to_string()))
    }
}

/// The thread's number in [`FileSet::name_format`] (fio's `$jobnum`).
pub const NAME_THREAD: &str = "{thread}";

/// The file's number among its thread's in [`FileSet::name_format`] (fio's `$filenum`).
pub const NAME_FILE: &str = "{file}";

/// A data test's several files per thread (fio's `nrfiles` > 1): how many, and which of them
/// each next op goes to. Each file is laid out as a thread's one file is, `FileSet::size`
/// bytes, with its own sequential position and random map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerThread {
    /// Files of each thread (at least 2).
    pub files: u32,
    /// Which file the next op goes to (fio's `file_service_type`).
    pub service: FileService,
}

/// Which of a thread's files the next op goes to (fio's `file_service_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileService {
    /// The next file in order after every `n` ops (fio's `roundrobin:N`, default 1).
    RoundRobin(u32),
    /// One file until it has had a file's size of ops, then the next (fio's `sequential`).
    Sequential,
    /// A file drawn uniformly after every `n` ops (fio's `random:N`, default 1).
    Random(u32),
}

impl FileService {
    /// Parse the workload's (and fio's) words: `roundrobin`, `roundrobin:N`, `sequential`,
    /// `random`, `random:N` (N ≥ 1).
    pub fn parse(text: &str) -> Result<FileService, String> {
        let (kind, n) = match text.split_once(':') {
            Some((k, n)) => (k.trim(), Some(n.trim())),
            None => (text.trim(), None),
        };
        let n = match n {
            None => 1,
            Some(n) => match n.parse::<u32>() {
                Ok(v) if v >= 1 => v,
                _ => {
                    return Err(format!(
                        "`{n}`: give the ops per file as a whole number, at least 1"
                    ))
                }
            },
        };
        match kind {
            "roundrobin" => Ok(FileService::RoundRobin(n)),
            "random" => Ok(FileService::Random(n)),
            "sequential" if n == 1 => Ok(FileService::Sequential),
            "sequential" => Err("sequential takes no :N (one file until it is done)".into()),
            _ => Err(format!("`{kind}`: give roundrobin, sequential or random (roundrobin and random with an optional :N)")),
        }
    }

    /// The workload's word for it.
    pub fn name(self) -> String {
        match self {
            FileService::RoundRobin(1) => "roundrobin".into(),
            FileService::RoundRobin(n) => format!("roundrobin:{n}"),
            FileService::Sequential => "sequential".into(),
            FileService::Random(1) => "random".into(),
            FileService::Random(n) => format!("random:{n}"),
        }
    }
}

/// How a data file that is not prefilled is laid out before the test (fio lays out a write
/// job's file with its `fallocate` option, `native` by default): the space, the size, or both.
/// Done only when the file is absent or shorter than its size; untimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preallocate {
    /// `fallocate(fd, 0, 0, size)`: the blocks are reserved (unwritten extents) and the file
    /// has its size (fio's `fallocate=native`, its default on Linux, and `posix`).
    Fallocate,
    /// `fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, size)`: the blocks are reserved, the length is
    /// unchanged (fio's `fallocate=keep`).
    KeepSize,
    /// `ftruncate(fd, size)`: the file has its size and no blocks, a sparse file (fio's
    /// `fallocate=truncate`).
    Truncate,
}

impl Preallocate {
    /// The workload's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Preallocate::Fallocate => "fallocate",
            Preallocate::KeepSize => "keep-size",
            Preallocate::Truncate => "truncate",
        }
    }
}

/// A file of the run: fsbench's own file in its work directory that every test naming it
/// shares, in the run's order, as fio's jobs share a plain `filename`. The first test naming
/// it starts each repetition without it (so its repetitions start alike, as fio's first job
/// finds no file); later tests find it as the earlier ones left it, laid out only if absent or
/// shorter. It is kept from test to test and removed with the work directory (success, error
/// or Ctrl-C), or after a test with `unlink`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFile {
    /// The name the tests share (the file is `run.NAME` in the work directory).
    pub name: String,
    /// This test is the first of the suite to name the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub first: bool,
    /// Remove the file after the test (fio's `unlink=1`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unlink: bool,
    /// The file's size is its length when the test starts, rounded down to this many bytes
    /// (fio's job without `size` after a `fill_device` job): the test's size is nominal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take_size: Option<u64>,
    /// The test writes blocks fsbench's check can read (as `--verify` writes them) and does
    /// not check them itself: a later test's check does (fio's `verify=` with `do_verify=0`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify_writes: bool,
}

impl RunFile {
    /// The file's name in the work directory.
    pub fn file_name(&self) -> String {
        format!("run.{}", self.name)
    }
}

/// Thread k's region of a data file: `[offset + k * increment, + len)` (fio's `offset`,
/// `offset_increment` and `size`); the file reaches the end of the last thread's region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    /// Start of thread 0's region.
    pub offset: u64,
    /// How much further each next thread's region starts.
    pub increment: u64,
    /// Each thread's region's length.
    pub len: u64,
}

impl Region {
    /// Start of thread `k`'s region.
    pub fn start(&self, k: u64) -> u64 {
        self.offset.saturating_add(k.saturating_mul(self.increment))
    }
}

/// A data file where the job says: the user's file, used where it is. It is created if absent,
/// laid out (written to its size) before a phase that reads only if it is absent or shorter, as
/// fio lays out its files, opened without following a final symlink, and kept afterwards unless
/// `unlink`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedFile {
    /// The file's absolute path.
    pub path: std::path::PathBuf,
    /// Remove the file after the test (fio's `unlink=1`); otherwise it is kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unlink: bool,
}

/// Longest `name_prefix` of a fileset (the path buffers are sized for it).
pub const MAX_NAME_PREFIX: usize = 32;

/// The name prefix of fileset files unless a test sets `name_prefix`.
pub const DEFAULT_NAME_PREFIX: &str = "f";

fn default_name_prefix() -> String {
    DEFAULT_NAME_PREFIX.to_string()
}

/// How a fileset's namespace ops name their files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathMode {
    /// The set's directory fd and the name below it: `fstatat(dirfd, "d3/f12")`. The kernel
    /// walks only the components below the set's root.
    #[default]
    Relative,
    /// The file's absolute path: `stat("/mnt/x/set/d3/f12")`, as mdtest and most applications
    /// call. Every call walks the whole path from `/`.
    Absolute,
}

impl FileSet {
    /// A data file's size in bytes (the largest file of a fileset).
    pub fn size_bytes(&self) -> u64 {
        self.size.max()
    }
}

/// A phase's operations, repeated in order (entries with `repeat = n` are expanded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Pattern {
    /// Reads, writes and syncs at offsets of the files open for the phase (`file` tests).
    Data(Vec<OpDef>),
    /// Whole-file and namespace ops on slots (`fileset` tests).
    Files(Vec<MetaEntry>),
}

impl Pattern {
    /// The data ops (empty for a fileset pattern).
    pub fn data(&self) -> &[OpDef] {
        match self {
            Pattern::Data(ops) => ops,
            Pattern::Files(_) => &[],
        }
    }

    /// The fileset entries (empty for a data pattern).
    pub fn entries(&self) -> &[MetaEntry] {
        match self {
            Pattern::Data(_) => &[],
            Pattern::Files(e) => e,
        }
    }

    /// Every op kind the pattern can issue.
    pub fn kinds(&self) -> Vec<OpKind> {
        match self {
            // A mixed read (`write_percent`) issues writes too.
            Pattern::Data(ops) => ops
                .iter()
                .flat_map(|o| {
                    std::iter::once(o.kind).chain((o.write_percent > 0).then_some(OpKind::Write))
                })
                .collect(),
            Pattern::Files(es) => {
                es.iter().flat_map(|e| e.choices.iter().map(|(_, o)| o.kind)).collect()
            }
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        match self {
            Pattern::Data(ops) => ops.len(),
            Pattern::Files(es) => es.len(),
        }
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a fileset's slots map to directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    /// All files in one directory.
    Flat,
    /// `depth` levels of `fanout` subdirectories, `files_per_dir` files in each leaf directory.
    Tree {
        /// Directory levels below the set's root (>= 1).
        depth: u32,
        /// Subdirectories per directory.
        fanout: u32,
        /// Files in each leaf directory.
        files_per_dir: u64,
    },
}

impl Layout {
    /// Leaf directories (1 for flat: the root).
    pub fn leaves(&self) -> u64 {
        match *self {
            Layout::Flat => 1,
            Layout::Tree { depth, fanout, .. } => (fanout as u64).pow(depth),
        }
    }

    /// Directories below the root (0 for flat): fanout + fanout^2 + ... + fanout^depth.
    pub fn dirs(&self) -> u64 {
        match *self {
            Layout::Flat => 0,
            Layout::Tree { depth, fanout, .. } => (1..=depth).map(|l| (fanout as u64).pow(l)).sum(),
        }
    }
}

/// Which slot an operation takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pick {
    /// The next slot in order (per entry, per thread).
    Next,
    /// A uniformly random slot (the nearest suitable one after it, if it is not suitable).
    Random,
    /// Every slot once per pass, in a pseudo-random order (a keyed permutation, no memory).
    Shuffle,
}

/// One operation of a fileset pattern.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MetaOp {
    /// What to do.
    pub kind: OpKind,
    /// Which slot.
    pub pick: Pick,
    /// fsync the file before close (create, append).
    pub fsync: bool,
    /// fsync the parent directory after the operation (create, unlink, rename, replace).
    pub fsync_dir: bool,
    /// Bytes appended (append); `None`: drawn from the fileset's size distribution.
    pub size: Option<SizeDist>,
}

/// One entry of a fileset pattern: one op, or a weighted choice drawn per execution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetaEntry {
    /// `(weight, op)`; a plain entry has one choice.
    pub choices: Vec<(u32, MetaOp)>,
}

/// One phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseDef {
    /// Name.
    pub name: String,
    /// Timed or set-up.
    pub timed: bool,
    /// Cache precondition.
    pub cache: CacheReq,
    /// Open flags.
    pub open: OpenFlags,
    /// Operations, repeated in order.
    pub pattern: Pattern,
    /// Work per thread.
    pub amount: Amount,
    /// Sync policy.
    pub sync: SyncPolicy,
    /// fio's random map (the test's `random_map`): a data phase's random offsets visit every
    /// aligned offset of the file once per pass, in a keyed pseudo-random order, instead of
    /// being drawn with replacement. Off unless the test sets it (results of older versions:
    /// off, which is what they did).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub random_map: bool,
    /// fio's `random_distribution` (the test's `random_distribution`): a data phase's random
    /// offsets drawn from this skewed law instead of uniformly (never with `random_map`; fio
    /// keeps no map then either). `None`: uniform, as results of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<crate::model::skew::RandomDist>,
    /// `invalidate_each_pass`: each thread drops its file's cached pages
    /// (`posix_fadvise(DONTNEED)`) each time it completes a pass over the file (a sequential
    /// wrap, the end of a random map's pass, or a file size of random bytes), as fio does for a
    /// time-based buffered job with `invalidate=1`. A time-based phase on one file drops at the
    /// wrap with requests still in flight, as fio's (the drop is in their completion latency);
    /// other phases wait for the pass's requests first, as fio's loops do. Off unless the phase
    /// sets it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalidate_each_pass: bool,
    /// `fadvise_hint`: each thread advises the kernel of its access pattern right after it
    /// opens its file, as fio's `fadvise_hint=1` (fio's default) does: `POSIX_FADV_RANDOM`
    /// (no readahead) when the phase has random-offset ops, else `POSIX_FADV_SEQUENTIAL`
    /// (twice the readahead window). Off unless the phase sets it (results of older versions:
    /// off, which is what they did).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fadvise_hint: bool,
    /// fio's `percentage_random` (the phase's `random_percent`), `[reads, writes]`: each
    /// random-offset op of the phase is random with this probability (one draw from the
    /// thread's generator), and otherwise starts where the thread's previous op of its
    /// direction ended (fio's `last_pos`), or at the region's start before the first; such a
    /// sequential op takes nothing from the random map. `None`: every one random (results of
    /// older versions: what they did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_percent: Option<[u8; 2]>,
    /// `unlink_each_pass` (fio's `unlink_each_loop`): each time a thread completes a pass over
    /// its file (as `invalidate_each_pass` counts them) and more work is left, it closes the
    /// file, unlinks it and opens it again with `O_CREAT`: an empty file, not laid out. Off
    /// unless the phase sets it (results of older versions: off, which is what they did).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unlink_each_pass: bool,
    /// Each worker thread's CPU nice value, I/O priority and CPUs (fio's `nice`, `prio`,
    /// `prioclass`, `cpus_allowed`), set by the thread on itself before the start barrier.
    /// None by default (results of older versions: none, which is what they did).
    #[serde(default, skip_serializing_if = "crate::model::sched::ThreadSched::is_none")]
    pub sched: crate::model::sched::ThreadSched,
    /// Pacing (fixed rate, think time) and a steady-state end; closed loop by default.
    #[serde(default)]
    pub load: crate::model::series::Load,
    /// A time cap on an amount of bytes, ops or passes (`amount.seconds` beside one of them):
    /// the phase ends at whichever comes first, as fio's `size` and `runtime` without
    /// `time_based`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_seconds: Option<f64>,
    /// A latency-versus-load curve after the phase (`--curve`, `curve_steps`): time-based
    /// timed data phases only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<crate::model::curve::CurvePlan>,
    /// Keep a record of each data op of the phase ([`crate::model::oplog`]): a timed phase of
    /// a fio job with a per-I/O log (`write_lat_log` without `log_avg_msec`), set by
    /// `crate::fio::load`, never by the workload language. Off: nothing is recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub op_log: bool,
}

/// Flags for `open(2)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenFlags {
    /// `O_CREAT`.
    pub create: bool,
    /// `O_TRUNC`.
    pub trunc: bool,
    /// `O_APPEND`.
    pub append: bool,
    /// `O_DSYNC`.
    pub dsync: bool,
    /// `O_SYNC`.
    pub sync: bool,
    /// `O_DIRECT`.
    pub direct: bool,
}

impl OpenFlags {
    /// The flags as written in a workload, e.g. `create,dsync`.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        for (on, n) in [
            (self.create, "create"),
            (self.trunc, "trunc"),
            (self.append, "append"),
            (self.dsync, "dsync"),
            (self.sync, "sync"),
            (self.direct, "direct"),
        ] {
            if on {
                v.push(n);
            }
        }
        v
    }
}

/// Kinds of operation: data operations on one file, and the operations of fileset tests. New
/// kinds are appended, so the index of an existing kind never changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// `pread(2)`.
    Read,
    /// `pwrite(2)`.
    Write,
    /// `fsync(2)`.
    Fsync,
    /// `fdatasync(2)`.
    Fdatasync,
    /// `open(2)` (timed once per thread per phase).
    Open,
    /// `close(2)` (timed once per thread per phase).
    Close,
    /// open(O_CREAT|O_EXCL), write the file's size in chunks, close.
    Create,
    /// `unlink(2)`.
    Unlink,
    /// `stat(2)` (`fstatat`).
    Stat,
    /// Open a directory, read all its entries (`getdents64`), close.
    Readdir,
    /// `mkdir(2)`.
    Mkdir,
    /// `rmdir(2)`.
    Rmdir,
    /// `rename(2)` of a file to a free slot.
    Rename,
    /// Durable replace: write a temporary file, fsync it, rename it over an existing file.
    Replace,
    /// open(O_APPEND), write, close.
    Append,
    /// open, read to end of file, close.
    Readwhole,
    /// fsync of a directory.
    Fsyncdir,
    /// `syncfs(2)` of the filesystem under the test.
    Syncfs,
    /// fio's `filecreate`: open(O_CREAT|O_RDWR, 0600) of a free slot, no data, close; only
    /// the open is timed, as fio times it (no O_EXCL, no write, unlike `create`).
    Opencreate,
    /// `lstat(2)` (`fstatat` with `AT_SYMLINK_NOFOLLOW`): fio's `filestat` with
    /// `stat_type=lstat`.
    Lstat,
    /// `statx(2)` with `STATX_ALL`: fio's `filestat` with `stat_type=statx`.
    Statx,
    /// A free slot made a directory (`mkdir(2)`): fio's `dircreate` (unlike `mkdir`, which
    /// makes the directories of a tree).
    Mkdirslot,
    /// A slot's directory removed (`rmdir(2)`): fio's `dirdelete` (unlike `rmdir`, which
    /// removes the directories of a tree).
    Rmdirslot,
}

impl OpKind {
    /// Every kind, in the order histograms are indexed.
    pub const ALL: [OpKind; 23] = [
        OpKind::Read,
        OpKind::Write,
        OpKind::Fsync,
        OpKind::Fdatasync,
        OpKind::Open,
        OpKind::Close,
        OpKind::Create,
        OpKind::Unlink,
        OpKind::Stat,
        OpKind::Readdir,
        OpKind::Mkdir,
        OpKind::Rmdir,
        OpKind::Rename,
        OpKind::Replace,
        OpKind::Append,
        OpKind::Readwhole,
        OpKind::Fsyncdir,
        OpKind::Syncfs,
        OpKind::Opencreate,
        OpKind::Lstat,
        OpKind::Statx,
        OpKind::Mkdirslot,
        OpKind::Rmdirslot,
    ];

    /// Index into per-kind arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Fsync => "fsync",
            OpKind::Fdatasync => "fdatasync",
            OpKind::Open => "open",
            OpKind::Close => "close",
            OpKind::Create => "create",
            OpKind::Unlink => "unlink",
            OpKind::Stat => "stat",
            OpKind::Readdir => "readdir",
            OpKind::Mkdir => "mkdir",
            OpKind::Rmdir => "rmdir",
            OpKind::Rename => "rename",
            OpKind::Replace => "replace",
            OpKind::Append => "append",
            OpKind::Readwhole => "readwhole",
            OpKind::Fsyncdir => "fsyncdir",
            OpKind::Syncfs => "syncfs",
            OpKind::Opencreate => "opencreate",
            OpKind::Lstat => "lstat",
            OpKind::Statx => "statx",
            OpKind::Mkdirslot => "mkdirslot",
            OpKind::Rmdirslot => "rmdirslot",
        }
    }

    /// The kind named `name` (as written in workloads and JSON).
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether the op is a pattern operation of fileset tests.
    pub fn is_fileset(self) -> bool {
        (self as usize) >= OpKind::Create as usize && self != OpKind::Syncfs
    }

    /// Whether the op is one fio's file-operation engines time (`filecreate`, `filestat`,
    /// `filedelete`, `dircreate`, `dirstat`, `dirdelete`): `fsbench fio` reports it per thread,
    /// as fio reports each clone.
    pub fn fio_fake_io(self) -> bool {
        matches!(
            self,
            OpKind::Opencreate
                | OpKind::Stat
                | OpKind::Lstat
                | OpKind::Statx
                | OpKind::Unlink
                | OpKind::Mkdirslot
                | OpKind::Rmdirslot
        )
    }

    /// Whether the op moves data (counts toward bytes and the main throughput).
    pub fn is_data(self) -> bool {
        matches!(self, OpKind::Read | OpKind::Write)
    }
}

/// Number of [`OpKind`]s.
pub const OP_KINDS: usize = OpKind::ALL.len();

/// One operation of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpDef {
    /// What to do.
    pub kind: OpKind,
    /// Transfer size (ignored for syncs).
    pub size: SizeDist,
    /// Where.
    pub offset: OffsetMode,
    /// Alignment of random offsets (1 = unaligned).
    pub align: u64,
    /// A read whose each op is a write instead with this probability, percent (`write_percent`,
    /// fio's randrw); 0 in records made before the key existed.
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub write_percent: u8,
    /// Sequential ops: bytes skipped after each op (fio's `rw=read:N`); negative moves
    /// backwards (`rw=read:-8k`). 0 in records made before the key existed.
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub skip: i64,
}

fn is_zero_u8(x: &u8) -> bool {
    *x == 0
}

fn is_zero_i64(x: &i64) -> bool {
    *x == 0
}

impl OpDef {
    /// The kinds of op this entry issues: its own, and a write for a mixed read.
    pub fn issues(&self, kind: OpKind) -> bool {
        self.kind == kind || (kind == OpKind::Write && self.write_percent > 0)
    }
}

/// Whether a sequential op wrapped around its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// The next op follows on.
    No,
    /// The op reached the region's end: a pass, the next op at the start.
    End,
    /// The skip went past the end (next op at the start) or below the start (next op at the
    /// end less the skip).
    Skip,
}

/// The sequential position after an op of `len` bytes at `pos` in a region of `region_len`
/// bytes, with `skip` bytes skipped after it (fio's `rw=read:N`, negative backwards), and how
/// it wrapped. As fio's `get_next_seq_offset`: reaching the end exactly starts a new pass, a
/// skip past the end goes back to the start, one below the start goes to the end less the
/// skip's size.
#[inline(always)]
pub fn next_sequential(pos: u64, len: u64, skip: i64, region_len: u64) -> (u64, Wrap) {
    let after = pos + len;
    if after >= region_len {
        return (0, Wrap::End);
    }
    if skip >= 0 {
        let next = after.saturating_add(skip as u64);
        return if next >= region_len { (0, Wrap::Skip) } else { (next, Wrap::No) };
    }
    match after.checked_sub(skip.unsigned_abs()) {
        Some(n) => (n, Wrap::No),
        None => (region_len.saturating_sub(skip.unsigned_abs()), Wrap::Skip),
    }
}

/// Transfer or file size distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SizeDist {
    /// Always this many bytes.
    Fixed(u64),
    /// Uniform over `[min, max]` bytes.
    Uniform(u64, u64),
    /// Log-normal with this median and sigma (of ln size), truncated to `[min, max]` by
    /// redrawing: the shape inside the bounds is kept and no mass piles up at the bounds, which
    /// clamping would do. Validation ensures at least 1% of the mass lies inside, so a draw
    /// needs fewer than 100 tries on average; after 1000 failed tries the median is used.
    LogNormal {
        /// Median in bytes.
        median: u64,
        /// Standard deviation of ln(size).
        sigma: f64,
        /// Lower bound in bytes.
        min: u64,
        /// Upper bound in bytes.
        max: u64,
    },
    /// One of `n` sizes drawn by weight (fio's `bssplit`): `sizes[i]` when a draw in
    /// `[0, cum[n - 1])` falls below `cum[i]` and not below `cum[i - 1]`. Fixed-size arrays keep
    /// the type `Copy` and the draw free of allocation.
    Split {
        /// Sizes used (1 to [`MAX_SPLIT`]).
        n: u8,
        /// The sizes, bytes.
        sizes: [u64; MAX_SPLIT],
        /// Cumulative weights.
        cum: [u32; MAX_SPLIT],
    },
    /// fio's `bsrange=MIN-MAX` with `bs_unaligned` (`io_u.c`, `get_next_buflen`): `min + ⌊max × u⌋`
    /// bytes for `u` uniform in [0, 1), at most `max`, not rounded to a multiple of `min`. So
    /// each byte count from `min` to `max - 1` has probability `1 / max` and `max` takes the
    /// rest, `min / max` (4k-16k: every size from 4096 to 16383 bytes, and 16384 a quarter of
    /// the time).
    UnalignedRange {
        /// Smallest size, bytes (≥ 1).
        min: u64,
        /// Largest size, bytes (> `min`).
        max: u64,
    },
}

/// Most sizes of a [`SizeDist::Split`].
pub const MAX_SPLIT: usize = 16;

impl SizeDist {
    /// A split of `(size, weight)` entries (weights > 0, 1 to [`MAX_SPLIT`] entries), or None.
    pub fn split(entries: &[(u64, u32)]) -> Option<SizeDist> {
        if entries.is_empty() || entries.len() > MAX_SPLIT || entries.iter().any(|e| e.1 == 0) {
            return None;
        }
        let (mut sizes, mut cum) = ([0u64; MAX_SPLIT], [0u32; MAX_SPLIT]);
        let mut total = 0u32;
        for (i, (s, w)) in entries.iter().enumerate() {
            total = total.checked_add(*w)?;
            sizes[i] = *s;
            cum[i] = total;
        }
        Some(SizeDist::Split { n: entries.len() as u8, sizes, cum })
    }

    /// What every size is a multiple of: the size, or the split's sizes' greatest common
    /// divisor; None for a drawn size (which may be anything in its range).
    pub fn granule(&self) -> Option<u64> {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        match *self {
            SizeDist::Fixed(n) => Some(n),
            SizeDist::Split { n, sizes, .. } => {
                Some(sizes[..n as usize].iter().fold(0, |g, s| gcd(g, *s)))
            }
            _ => None,
        }
    }

    /// The `(size, weight)` entries of a split (one entry for a fixed size, none otherwise).
    pub fn entries(&self) -> Vec<(u64, u32)> {
        match *self {
            SizeDist::Fixed(n) => vec![(n, 1)],
            SizeDist::Split { n, sizes, cum } => (0..n as usize)
                .map(|i| (sizes[i], cum[i] - if i == 0 { 0 } else { cum[i - 1] }))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Smallest possible size.
    pub fn min(&self) -> u64 {
        match *self {
            SizeDist::Fixed(n) => n,
            SizeDist::Uniform(lo, _) => lo,
            SizeDist::LogNormal { min, .. } => min,
            SizeDist::UnalignedRange { min, .. } => min,
            SizeDist::Split { n, sizes, .. } => {
                sizes[..n as usize].iter().copied().min().unwrap_or(0)
            }
        }
    }

    /// Largest possible size.
    pub fn max(&self) -> u64 {
        match *self {
            SizeDist::Fixed(n) => n,
            SizeDist::Uniform(_, hi) => hi,
            SizeDist::LogNormal { max, .. } => max,
            SizeDist::UnalignedRange { max, .. } => max,
            SizeDist::Split { n, sizes, .. } => {
                sizes[..n as usize].iter().copied().max().unwrap_or(0)
            }
        }
    }

    /// Mean size (for the truncated log-normal, the closed form of the truncated mean).
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Fixed(n) => n as f64,
            SizeDist::Uniform(lo, hi) => (lo + hi) as f64 / 2.0,
            SizeDist::LogNormal { median, sigma, min, max } => {
                let mu = (median as f64).ln();
                let (a, b) = ((min as f64).ln(), (max.max(1) as f64).ln());
                let mass = normal_cdf((b - mu) / sigma) - normal_cdf((a - mu) / sigma);
                if mass <= 0.0 {
                    return median as f64;
                }
                let s2 = sigma * sigma;
                (mu + s2 / 2.0).exp()
                    * (normal_cdf((b - mu - s2) / sigma) - normal_cdf((a - mu - s2) / sigma))
                    / mass
            }
            SizeDist::Split { .. } => {
                let e = self.entries();
                let total: f64 = e.iter().map(|x| x.1 as f64).sum();
                e.iter().map(|(s, w)| *s as f64 * *w as f64).sum::<f64>() / total.max(1.0)
            }
            // The sizes min..max-1, 1/max each, and max with min/max.
            SizeDist::UnalignedRange { min, max } => {
                let (lo, hi) = (min as f64, max.max(1) as f64);
                (lo + hi - 1.0) * (hi - lo) / 2.0 / hi + lo
            }
        }
    }

    /// Draw one size. No allocation; a few floating-point operations for the log-normal.
    #[inline]
    pub fn sample(&self, rng: &mut fastrand::Rng) -> u64 {
        match *self {
            SizeDist::Fixed(n) => n,
            SizeDist::Uniform(lo, hi) => rng.u64(lo..=hi),
            SizeDist::LogNormal { median, sigma, min, max } => {
                for _ in 0..1000 {
                    let x = (median as f64 * (sigma * std_normal(rng)).exp()).round();
                    if x >= min as f64 && x <= max as f64 {
                        return x as u64;
                    }
                }
                median.clamp(min, max)
            }
            SizeDist::Split { n, sizes, cum } => {
                let n = (n as usize).clamp(1, MAX_SPLIT);
                let r = rng.u32(0..cum[n - 1].max(1));
                let mut i = 0;
                while i + 1 < n && r >= cum[i] {
                    i += 1;
                }
                sizes[i]
            }
            SizeDist::UnalignedRange { min, max } => (min + rng.u64(0..max.max(1))).min(max),
        }
    }

    /// Share of a log-normal's mass inside its bounds (1 for the other distributions).
    pub fn mass_in_bounds(&self) -> f64 {
        match *self {
            SizeDist::LogNormal { median, sigma, min, max } => {
                let mu = (median.max(1) as f64).ln();
                let a = if min == 0 { f64::NEG_INFINITY } else { (min as f64).ln() };
                let b = (max.max(1) as f64).ln();
                normal_cdf((b - mu) / sigma) - normal_cdf((a - mu) / sigma)
            }
            _ => 1.0,
        }
    }
}

/// A standard normal variate (Box-Muller; one of the pair is discarded for simplicity).
fn std_normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = 1.0 - rng.f64(); // (0, 1]: ln is finite
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Standard normal CDF via erf (Abramowitz and Stegun 7.1.26, absolute error < 1.5e-7).
pub fn normal_cdf(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    if x == f64::INFINITY {
        return 1.0;
    }
    let z = x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    let erf = if z < 0.0 { -erf } else { erf };
    0.5 * (1.0 + erf)
}

/// Offset selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OffsetMode {
    /// Continue where the previous sequential operation ended (per thread).
    Sequential,
    /// Uniformly random, aligned to `align`, such that the transfer fits in the file.
    Random,
    /// Same offset as the previous operation.
    Last,
}

/// Work per thread for a phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Amount {
    /// Bytes read + written.
    Bytes(u64),
    /// Operations (reads + writes + explicit syncs in the pattern).
    Ops(u64),
    /// Wall-clock seconds.
    Seconds(f64),
    /// Full sequential passes over the thread's part of the file; for a fileset, every slot
    /// the thread owns once per pass.
    Passes(u32),
    /// Fileset only: this share (0..1] of one pass: `share = 0.2` visits a fifth of the slots
    /// (with `pick = "shuffle"`, a random fifth).
    Share(f64),
    /// A fileset: until the filesystem is this full (0..1, statvfs: used / (used + available),
    /// as `df` shows it); ENOSPC ends the phase normally. A data file (only 1, sequential
    /// writes: fio's `fill_device`): its writes go on past the file's size until ENOSPC (or
    /// EDQUOT), which ends the phase normally; runs only on a testbed fsbench made (its own
    /// or one kept by `fsbench testbed up`).
    Fill(f64),
}

/// Which sync call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncCall {
    /// `fsync(2)`.
    Fsync,
    /// `fdatasync(2)`.
    Fdatasync,
    /// `syncfs(2)`: everything dirty on the test's filesystem.
    Syncfs,
}

impl SyncCall {
    /// The op kind whose histogram records this call.
    pub fn kind(self) -> OpKind {
        match self {
            SyncCall::Fsync => OpKind::Fsync,
            SyncCall::Fdatasync => OpKind::Fdatasync,
            SyncCall::Syncfs => OpKind::Syncfs,
        }
    }
}

/// When a phase syncs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncPolicy {
    /// Sync each time the bytes this thread has written reach the next multiple of this (so "every
    /// 10 MB" of a 50 MB file is five syncs, at the 10, 20, 30, 40 and 50 MB marks).
    pub every_bytes: Option<u64>,
    /// Sync each time this thread's write count reaches the next multiple of this.
    pub every_ops: Option<u64>,
    /// The periodic call.
    pub call: Option<SyncCall>,
    /// Sync at the end of the phase (inside the timing).
    pub at_end: Option<SyncCall>,
    /// The periodic sync goes before the next write, as fio's `fsync=N`: none follows the last
    /// write of the phase (64 writes with a sync every 8: 7 syncs, where the default, a sync
    /// right after the write that reaches the mark, makes 8).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_next: bool,
}

impl TestDef {
    /// Whether the test works on fileset slots (its patterns are whole-file and namespace ops)
    /// rather than on data files opened for each phase.
    pub fn is_fileset(&self) -> bool {
        self.phases.first().is_some_and(|p| matches!(p.pattern, Pattern::Files(_)))
    }

    /// Bytes a test's files occupy (for sizing a testbed).
    pub fn footprint_bytes(&self) -> u64 {
        // Saturating: per-thread sizes times threads (`size = "4E"`, 4 threads) must not wrap
        // around to a small number that passes the space check.
        // A role on another's file (`same_file`) lays out nothing; one whose threads share a
        // file (`shared_file`) lays out that one file.
        let roles: u64 = self
            .roles
            .iter()
            .map(|r| match (r.same_file, r.shared_file) {
                (Some(_), _) => 0,
                (None, true) => r.file_bytes,
                (None, false) => r.file_bytes.saturating_mul(r.threads as u64),
            })
            .fold(0, u64::saturating_add);
        roles.saturating_add(self.own_footprint_bytes())
    }

    /// Bytes the test's own files occupy (without its roles' files).
    fn own_footprint_bytes(&self) -> u64 {
        let fs = &self.files;
        if !self.is_fileset() {
            return fs.size_bytes().saturating_mul(fs.count);
        }
        if self.phases.iter().any(|p| matches!(p.amount, Amount::Fill(_))) {
            // A fill phase fills whatever filesystem it is given, so a testbed sized for
            // the whole set would make the run as long as the set is big. 4 KiB per slot
            // keeps a testbed (and so a --scale quick run) small: the fill stops at the
            // filesystem's target, not at the slots.
            return fs.count.saturating_mul(4096);
        }
        // Mean file size plus half a 4 KiB block per file (the last block's average waste)
        // and 256 bytes for its directory entry; a 4 KiB block per directory. Empty files
        // take no data blocks.
        let slack = if fs.size.max() == 0 { 256.0 } else { 2048.0 + 256.0 };
        let per_file = fs.size.mean() + slack;
        // `as u64` saturates a float; the directories' share saturates too.
        ((fs.count as f64 * per_file) as u64).saturating_add(fs.layout.dirs().saturating_mul(4096))
    }

    /// Inodes the test's files and directories need at most (a fileset's slots and directories;
    /// the data files of a data test), for sizing filesystems that fix their inode count at
    /// mkfs time.
    pub fn inodes_needed(&self) -> u64 {
        // A fill phase stops at a share of whatever filesystem it is given (see
        // footprint_bytes), so its slots say nothing about the inodes it will use.
        if self.is_fileset() && self.phases.iter().any(|p| matches!(p.amount, Amount::Fill(_))) {
            return 0;
        }
        self.files.count + self.files.layout.dirs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lognormal_draws_stay_in_bounds_and_keep_their_shape() {
        let d = SizeDist::LogNormal { median: 20 << 10, sigma: 0.6, min: 10 << 10, max: 150 << 10 };
        let mut rng = fastrand::Rng::with_seed(7);
        let mut v: Vec<u64> = (0..200_000).map(|_| d.sample(&mut rng)).collect();
        assert!(v.iter().all(|x| (10 << 10..=150 << 10).contains(x)));
        v.sort_unstable();
        // Truncation below the median raises the median of what is drawn a little: the mass
        // below 10K (12.5%) is redrawn. Median of the truncated law: exp(mu + sigma * z) with
        // Phi(z) = Phi(a) + (Phi(b) - Phi(a)) / 2.
        let med = v[v.len() / 2] as f64;
        assert!((21_000.0..23_500.0).contains(&med), "median {med}");
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((mean - d.mean()).abs() / d.mean() < 0.01, "mean {mean} vs {}", d.mean());
        assert!((d.mass_in_bounds() - 0.8745).abs() < 0.005, "{}", d.mass_in_bounds());
    }

    /// fio's unaligned bsrange law: every byte count from MIN to MAX - 1 about equally often
    /// (1/MAX each), MAX with MIN/MAX, the mean as [`SizeDist::mean`] says.
    #[test]
    fn an_unaligned_range_draws_fios_law() {
        let d = SizeDist::UnalignedRange { min: 4096, max: 16384 };
        let mut rng = fastrand::Rng::with_seed(3);
        let v: Vec<u64> = (0..400_000).map(|_| d.sample(&mut rng)).collect();
        assert!(v.iter().all(|x| (4096..=16384).contains(x)));
        let at_max = v.iter().filter(|&&x| x == 16384).count() as f64 / v.len() as f64;
        assert!((at_max - 0.25).abs() < 0.005, "{at_max}");
        // Not rounded: most sizes are not multiples of 512.
        let odd = v.iter().filter(|&&x| x % 512 != 0).count() as f64 / v.len() as f64;
        assert!(odd > 0.70, "{odd}");
        // Each quarter of [4096, 16384) gets a quarter of 75%.
        let q = v.iter().filter(|&&x| (4096..7168).contains(&x)).count() as f64 / v.len() as f64;
        assert!((q - 0.1875).abs() < 0.005, "{q}");
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        assert!((mean - d.mean()).abs() < 20.0, "{mean} vs {}", d.mean());
        assert!((d.mean() - 11_775.625).abs() < 0.01, "{}", d.mean());
        assert_eq!((d.min(), d.max(), d.granule()), (4096, 16384, None));
    }

    #[test]
    fn normal_cdf_matches_known_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975).abs() < 1e-4);
        assert!((normal_cdf(-1.0) - 0.158_655).abs() < 1e-5);
    }

    #[test]
    fn op_kinds_keep_their_indices_and_names() {
        assert_eq!(OpKind::Read.index(), 0);
        assert_eq!(OpKind::Close.index(), 5);
        for k in OpKind::ALL {
            assert_eq!(OpKind::from_name(k.name()), Some(k));
            assert_eq!(OpKind::ALL[k.index()], k);
        }
        assert!(OpKind::Create.is_fileset() && !OpKind::Syncfs.is_fileset());
        assert!(!OpKind::Read.is_fileset());
    }
}
