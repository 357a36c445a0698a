//! The workload language as written: TOML, deserialised with unknown keys rejected.
//!
//! A file holds one suite of tests. Each test names its file(s), its thread count, and one or
//! more phases; each phase has a cache precondition, open flags, a *pattern* of operations that
//! is repeated until the phase's amount of work is done, and a sync policy. For example, the
//! study's test 12 ("3 reads at random 8K-aligned offsets, then a write to the last block read"):
//!
//! ```toml
//! [[test]]
//! id = "12"
//! name = "rw-3r1w-8k"
//! threads = 1
//! file = { size = "1G" }
//!
//! [[test.phase]]
//! name = "mixed"
//! cache = "cached"
//! amount = { bytes = "128M" }
//! pattern = [
//!   { op = "read",  size = "8K", offset = "random", align = "8K", repeat = 3 },
//!   { op = "write", size = "8K", offset = "last" },
//! ]
//! ```
//!
//! See `docs/reference/workloads.md` for every key. [`super::model`] holds the validated form.

use super::size::{Bytes, SizeDistSpec, SizeExpr};
pub use crate::model::job::CacheReq;
use crate::model::job::OptValue;
use serde::{Deserialize, Serialize};

/// A suite file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteSpec {
    /// Suite metadata (optional for a single workload file).
    #[serde(default)]
    pub suite: SuiteMeta,
    /// The tests, in order.
    #[serde(rename = "test", default)]
    pub tests: Vec<TestSpec>,
}

/// `[suite]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteMeta {
    /// Suite name, e.g. `unit14`.
    #[serde(default)]
    pub name: Option<String>,
    /// One-paragraph description.
    #[serde(default)]
    pub description: Option<String>,
}

/// `[[test]]`. Read by [`TestSpec`]'s own `Deserialize`: its keys are the key table's
/// ([`super::keys::keys`]), engines' keys included, so an engine adds keys without a field here.
#[derive(Debug, Clone, Serialize)]
pub struct TestSpec {
    /// Short id used by `--test` (e.g. "4").
    pub id: String,
    /// Short name (e.g. `seqread-32k-cached`).
    pub name: String,
    /// What the test does, in words.
    pub description: String,
    /// Said with the test's results (every output's notes, the store).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Worker threads (default 1).
    pub threads: u32,
    /// I/O engine: one of [`super::engines::ENGINES`] (default `psync`).
    pub engine: Option<String>,
    /// Requests each thread keeps in flight (default 1).
    pub iodepth: Option<u32>,
    /// What the test is ranked on: `mib_per_s` or `ops_per_s` (default: by its kind).
    pub figure: Option<String>,
    /// Open the test's files with O_DIRECT in every phase (default false).
    pub direct: Option<bool>,
    /// `false`: `--min-time` does not lengthen this test (default true).
    pub min_time: Option<bool>,
    /// fio's random map: random offsets visit each aligned offset once per pass (default
    /// false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_map: Option<bool>,
    /// fsbench's data check for this test, as `--verify` (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// The test's own seed instead of the run's `--seed` (fio's `randseed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// fio's `random_distribution`, in fio's syntax (`"zipf:1.2"`, `"zoned:60/10:40/90"`):
    /// random offsets drawn from a skewed law (default uniform).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<String>,
    /// The engines' own keys as written (io_uring's `iodepth_batch`, `sqpoll`, ...), typed by
    /// the key table; which engine they belong to is validation's to check.
    #[serde(flatten)]
    pub engine_keys: EngineKeys,
    /// The test's file(s) (data tests). Exactly one of `file` and `fileset`.
    pub file: Option<FileSpec>,
    /// A set of many files (metadata tests). Exactly one of `file` and `fileset`.
    pub fileset: Option<FilesetSpec>,
    /// Phases, run in order; at least one must be timed.
    #[serde(rename = "phase")]
    pub phases: Vec<PhaseSpec>,
    /// Roles: threads with a file and a pattern of their own that run beside every timed
    /// phase until the test's own threads are done (e.g. a streaming writer beside a reader).
    #[serde(rename = "role", skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleSpec>,
    /// fio's `exitall` of the test's own threads: when the first of them ends, the jobs of
    /// the test it stops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exitall: Option<ExitSpec>,
}

/// `exitall = { stops = "group", group = 1 }` of a test or a role (fio's `exitall` with
/// `exit_what`): when the first thread of the job ends, it stops the test's jobs whose
/// `exitall` has the same `group` (`stops = "group"`) or every job of the test
/// (`stops = "test"`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExitSpec {
    /// `group` or `test`.
    pub stops: String,
    /// The job's exit group (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
}

/// Engine keys of a test as written, in the order written: `(key, value)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineKeys(Vec<(String, OptValue)>);

impl EngineKeys {
    /// Keys and values, in order.
    pub fn from_pairs(pairs: Vec<(String, OptValue)>) -> EngineKeys {
        EngineKeys(pairs)
    }

    /// The value of `key`, if written.
    pub fn get(&self, key: &str) -> Option<&OptValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Set `key` (replacing an earlier value, else at the end).
    pub fn set(&mut self, key: &str, v: OptValue) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = v,
            None => self.0.push((key.to_string(), v)),
        }
    }

    /// The keys and values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &OptValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// No engine key was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for EngineKeys {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The keys `[[test]]` accepts, in the table's order (for "expected one of" in errors): the key
/// table's `[[test]]` keys (engines' included) that are not inside an inline table, then
/// `phase`.
fn test_fields() -> &'static [&'static str] {
    static FIELDS: std::sync::LazyLock<&'static [&'static str]> = std::sync::LazyLock::new(|| {
        let mut v: Vec<&'static str> = Vec::new();
        for k in super::keys::keys().iter().filter(|k| k.section == super::keys::Section::Test) {
            let top = k.name.split('.').next().unwrap_or(k.name);
            if !v.contains(&top) {
                v.push(top);
            }
        }
        v.push("phase");
        Vec::leak(v)
    });
    &FIELDS
}

/// A key of `[[test]]`: one of the struct's own, or an engine's.
enum TestField {
    Own(&'static str),
    Engine(&'static super::keys::Key),
}

struct TestFieldSeed;

impl<'de> serde::de::DeserializeSeed<'de> for TestFieldSeed {
    type Value = TestField;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<TestField, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl serde::de::Visitor<'_> for TestFieldSeed {
    type Value = TestField;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key of [[test]]")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<TestField, E> {
        if let Some((_, k)) = super::engines::owner_of(key) {
            return Ok(TestField::Engine(k));
        }
        match test_fields().iter().find(|f| **f == key) {
            Some(f) => Ok(TestField::Own(f)),
            None => Err(E::unknown_field(key, test_fields())),
        }
    }
}

impl<'de> Deserialize<'de> for TestSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TestSpec, D::Error> {
        d.deserialize_struct("TestSpec", test_fields(), TestVisitor)
    }
}

struct TestVisitor;

impl<'de> serde::de::Visitor<'de> for TestVisitor {
    type Value = TestSpec;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a [[test]] table")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<TestSpec, A::Error> {
        use serde::de::Error;
        let mut t = TestSpec {
            id: String::new(),
            name: String::new(),
            description: String::new(),
            notes: Vec::new(),
            threads: one(),
            engine: None,
            iodepth: None,
            figure: None,
            direct: None,
            min_time: None,
            random_map: None,
            verify: None,
            seed: None,
            random_distribution: None,
            engine_keys: EngineKeys::default(),
            file: None,
            fileset: None,
            phases: Vec::new(),
            roles: Vec::new(),
            exitall: None,
        };
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(field) = m.next_key_seed(TestFieldSeed)? {
            let key = match field {
                TestField::Own(k) => k,
                TestField::Engine(k) => k.name,
            };
            if seen.contains(&key) {
                return Err(A::Error::duplicate_field(key));
            }
            seen.push(key);
            match field {
                TestField::Engine(k) => {
                    let v = match k.ty {
                        super::keys::Type::Int => OptValue::Int(m.next_value()?),
                        super::keys::Type::Bool => OptValue::Bool(m.next_value()?),
                        _ => OptValue::Str(m.next_value()?),
                    };
                    t.engine_keys.set(k.name, v);
                }
                TestField::Own("id") => t.id = m.next_value()?,
                TestField::Own("name") => t.name = m.next_value()?,
                TestField::Own("description") => t.description = m.next_value()?,
                TestField::Own("notes") => t.notes = m.next_value()?,
                TestField::Own("threads") => t.threads = m.next_value()?,
                TestField::Own("engine") => t.engine = Some(m.next_value()?),
                TestField::Own("iodepth") => t.iodepth = Some(m.next_value()?),
                TestField::Own("figure") => t.figure = Some(m.next_value()?),
                TestField::Own("direct") => t.direct = Some(m.next_value()?),
                TestField::Own("min_time") => t.min_time = Some(m.next_value()?),
                TestField::Own("random_map") => t.random_map = Some(m.next_value()?),
                TestField::Own("verify") => t.verify = Some(m.next_value()?),
                TestField::Own("seed") => t.seed = Some(m.next_value()?),
                TestField::Own("random_distribution") => {
                    t.random_distribution = Some(m.next_value()?)
                }
                TestField::Own("file") => t.file = Some(m.next_value()?),
                TestField::Own("fileset") => t.fileset = Some(m.next_value()?),
                TestField::Own("phase") => t.phases = m.next_value()?,
                TestField::Own("role") => t.roles = m.next_value()?,
                TestField::Own("exitall") => t.exitall = Some(m.next_value()?),
                TestField::Own(other) => {
                    return Err(A::Error::custom(format!(
                        "`{other}` is in the key table but the parser does not read it"
                    )))
                }
            }
        }
        for required in ["id", "name", "phase"] {
            if !seen.contains(&required) {
                return Err(A::Error::missing_field(required));
            }
        }
        Ok(t)
    }
}

/// `[[test.role]]`: threads with a file and a pattern of their own that run beside each timed
/// phase of the test, from its start until the test's own threads (the foreground) are done.
/// Their figures (latency per op, bytes) are reported apart; the test is ranked on its own
/// threads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleSpec {
    /// Role name, e.g. `writer`.
    pub name: String,
    /// Threads of the role (default 1), each on its own file.
    #[serde(default = "one")]
    pub threads: u32,
    /// The role's file: its size (scaled by `--scale`) and whether it is filled before the
    /// first phase (`shared` is ignored: each role thread has its own file, unless `whole`:
    /// then its threads share one file, each working on all of it, as fio's `numjobs` on one
    /// `filename`).
    pub file: FileSpec,
    /// Open flags: `create`, `trunc`, `append`, `dsync`, `sync`.
    #[serde(default)]
    pub open: Vec<String>,
    /// The operations, repeated in order while the foreground runs (sequential offsets wrap
    /// at the end of the file).
    pub pattern: Vec<OpSpec>,
    /// When to call fsync/fdatasync.
    #[serde(default)]
    pub sync: SyncSpec,
    /// Seconds the role runs before the test's own threads are released (default 0), so
    /// they meet it in its steady state.
    #[serde(default)]
    pub lead: Option<f64>,
    /// I/O engine of its threads (default `psync`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Requests each thread keeps in flight (default 1; above 1 needs a queueing engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth: Option<u32>,
    /// O_DIRECT (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<bool>,
    /// Its own amount: given, the role moves it and the phase waits for the role (fio's jobs of
    /// one group); absent, the role runs until the test's own threads are done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<AmountSpec>,
    /// Seconds after its release before its threads start (fio's `startdelay`; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<f64>,
    /// Drop its files' cached pages in each timed phase when it starts, after its `after` and
    /// `delay` (fio's `invalidate=1` on a buffered read, done at the job's start; default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncached: Option<bool>,
    /// Drop its file's cached pages each time it wraps (as a phase's `invalidate_each_pass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalidate_each_pass: Option<bool>,
    /// Advise the kernel of its access pattern after opening its file (as a phase's
    /// `fadvise_hint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fadvise_hint: Option<bool>,
    /// The share of its random-offset ops that are random (as a phase's `random_percent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_percent: Option<RandomPercent>,
    /// Random offsets from fio's random map, each block once per pass (as a test's `random_map`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_map: Option<bool>,
    /// Random offsets from a skewed law (as a test's `random_distribution`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<String>,
    /// Fixed rate and think time, as a phase's (`rate_iops`, `rate`, `thinktime`,
    /// `thinktime_blocks`; each thread's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
    /// Fixed rate in bytes per second of each thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<SizeExpr>,
    /// How the rate's starts are spaced, as a phase's `rate_process`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_process: Option<String>,
    /// Where a paced op's latency starts, as a phase's `latency_from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_from: Option<String>,
    /// Reads per second in bytes of each thread, as a phase's `rate_read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_read: Option<SizeExpr>,
    /// Writes per second in bytes of each thread, as a phase's `rate_write`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_write: Option<SizeExpr>,
    /// Pause after every `thinktime_blocks` ops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<super::load::DurationText>,
    /// Ops between pauses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_blocks: Option<u64>,
    /// Flow weight, id and sleep, as a phase's (`flow`, `flow_id`, `flow_sleep`): its
    /// threads share the flow with the phase's and the other roles' of the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<u32>,
    /// The flow's id (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<u32>,
    /// Microseconds a thread ahead of its share waits (default 0: it spins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_sleep: Option<u64>,
    /// Start once these are done (fio's `wait_for`): the test's id (its own threads) or the name
    /// of an earlier role; `delay` counts from then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Do the I/O on another's file (fio's jobs of one group naming one `filename`): the test's
    /// id (its one file, `file.shared`) or the name of an earlier role whose threads share one
    /// file (`file.whole`, or a `same_file` of its own). That file is laid out once, by its
    /// owner (prefilled before the phase when any job on it reads); every thread of this role
    /// works on `[0, file.size)` of it, which must not pass the owner's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_file: Option<String>,
    /// io_uring's `registerfiles` for the role's threads (the one engine key a role takes;
    /// the engine's other keys keep their defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registerfiles: Option<bool>,
    /// fio's `exitall`, as a test's: when the role's first thread ends, the jobs it stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exitall: Option<ExitSpec>,
    /// Raise each thread's CPU nice value by this much, -20 to 19 (fio's `nice`), as a phase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// Each thread's I/O priority, `CLASS[:LEVEL]`: `"be:4"`, `"idle"`, `"rt:0"` (fio's
    /// `prioclass` and `prio`), as a phase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioprio: Option<String>,
    /// The CPUs each thread may run on, `"0,2-3"` (fio's `cpus_allowed`), as a phase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// `shared` (default: every thread on all of `cpus`) or `split` (thread k on the k-th CPU of
    /// `cpus` alone, in turn; fio's `cpus_allowed_policy`), as a phase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_policy: Option<String>,
}

fn one() -> u32 {
    1
}

/// `file = { ... }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    /// File size (scaled by `--scale`): "1G", or "freemem/2".
    pub size: SizeExpr,
    /// One file shared by all threads (default) or one file per thread.
    #[serde(default = "yes")]
    pub shared: bool,
    /// Create and fill the file in the untimed setup (default true). `false` for tests whose
    /// timed phase creates the file.
    #[serde(default = "yes")]
    pub prefill: bool,
    /// The file at this absolute path instead of fsbench's own in its work directory (fio's
    /// `filename=/mnt/x.dat`): created if absent, laid out only if absent or shorter, kept
    /// afterwards unless `unlink`; one file shared by the threads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// With `path`: remove the file after the test (default: keep it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlink: Option<bool>,
    /// With `shared`: every thread works on the whole file from its start (fio's jobs naming
    /// one file), not each on its own part (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<bool>,
    /// Where thread 0's region starts (fio's `offset`): each thread then works on `size` bytes
    /// from its region's start, sequential and random ops alike, and the file reaches the end
    /// of the last thread's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<Bytes>,
    /// How much further each next thread's region starts (fio's `offset_increment`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_increment: Option<Bytes>,
    /// A file of the run (fio's plain `filename` named by several jobs): fsbench's own file of
    /// this name in its work directory, one for every test of the run that names it. The first
    /// such test starts each repetition without it; later tests find it as the tests before
    /// them left it (laid out only if absent or shorter, written into, read back); it is
    /// removed with the work directory at the end of the run (or after a test with `unlink`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_file: Option<String>,
    /// With `run_file`: the file's size is the run file's length when the test starts, rounded
    /// down to this many bytes (fio's job without `size` after a `fill_device` job on the
    /// file); `size` is then only the nominal size checked before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take_size: Option<Bytes>,
    /// With `run_file`: the test writes blocks fsbench's check can read, and does not check
    /// them itself (fio's `verify=` with `do_verify=0`: a later test's `verify` checks them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_writes: Option<bool>,
    /// Without `prefill`: lay the file out before the first phase, untimed: "fallocate",
    /// "keep-size" or "truncate" (fio's `fallocate` for a write job's file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preallocate: Option<String>,
    /// With `shared = false`: files of each thread (fio's `nrfiles`), each `size` bytes, each
    /// op going to the one `service` picks (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_thread: Option<u32>,
    /// With `per_thread`: which of a thread's files each next op goes to (fio's
    /// `file_service_type`): "roundrobin" (default), "roundrobin:N", "sequential", "random",
    /// "random:N".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// With `shared = false`: the names of the test's files in fsbench's work directory, from
    /// `{thread}` (the thread's number) and `{file}` (the file's among the thread's), e.g.
    /// "w.{thread}.{file}" (fio's `filename_format`); default `t<ID>.<thread>.dat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_format: Option<String>,
}

fn yes() -> bool {
    true
}

/// `fileset = { ... }`: many files, flat in one directory or in a tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesetSpec {
    /// Number of files (scaled by `--scale`). With a tree, it must equal
    /// fanout^depth × files_per_dir (or be left out).
    #[serde(default)]
    pub count: Option<u64>,
    /// All files in one directory.
    #[serde(default)]
    pub flat: Option<bool>,
    /// A directory tree.
    #[serde(default)]
    pub tree: Option<TreeSpec>,
    /// Size of each file: fixed, uniform or lognormal.
    pub size: SizeDistSpec,
    /// Create every file (untimed) before the first phase (default false).
    #[serde(default)]
    pub prefill: bool,
    /// Chunk of whole-file writes and reads (default 64K).
    #[serde(default)]
    pub write_size: Option<Bytes>,
    /// How ops name files: "relative" (default) or "absolute".
    #[serde(default)]
    pub paths: Option<String>,
    /// File names: this and the slot number (default "f").
    #[serde(default)]
    pub name_prefix: Option<String>,
}

/// `tree = { depth, fanout, files_per_dir }`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeSpec {
    /// Directory levels below the set's root.
    pub depth: u32,
    /// Subdirectories per directory.
    pub fanout: u32,
    /// Files per leaf directory (scaled by `--scale`, at least 1).
    pub files_per_dir: u64,
}

/// `[[test.phase]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// Phase name, shown in details (e.g. `write`, `read`).
    pub name: String,
    /// Whether the phase is timed (default true). Untimed phases are set-up.
    #[serde(default = "yes")]
    pub timed: bool,
    /// Cache precondition checked before the phase: `any` (default), `cached`, `uncached`.
    #[serde(default)]
    pub cache: CacheReq,
    /// Open flags: `create`, `trunc`, `append`, `dsync`, `sync`, `direct`.
    #[serde(default)]
    pub open: Vec<String>,
    /// The operations, repeated in order until `amount` is done.
    pub pattern: Vec<OpSpec>,
    /// How much work each thread does.
    pub amount: AmountSpec,
    /// When to call fsync/fdatasync during and after the phase.
    #[serde(default)]
    pub sync: SyncSpec,
    /// Drop the file's cached pages each time a thread completes a pass over it (default
    /// false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalidate_each_pass: bool,
    /// Advise the kernel of the access pattern (`POSIX_FADV_RANDOM` or `_SEQUENTIAL`) after
    /// opening the file, as fio's `fadvise_hint=1` (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fadvise_hint: bool,
    /// The share of the random-offset ops that are random, in percent (fio's
    /// `percentage_random`): one for reads and writes, or `[reads, writes]`; the others
    /// continue sequentially from the previous op of their direction (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_percent: Option<RandomPercent>,
    /// Unlink the file and open it again, empty, after each pass over it (fio's
    /// `unlink_each_loop`; default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unlink_each_pass: bool,
    /// Fixed rate, ops per second (open loop; see [`super::load`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<f64>,
    /// Fixed rate, bytes per second (`"100M"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<SizeExpr>,
    /// Whether the rate is each thread's (`thread`, fio's) or the test's (`test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per: Option<String>,
    /// How the rate's starts are spaced: `linear` (a fixed period, the default) or `poisson`
    /// (exponential gaps with the same mean; fio's `rate_process`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_process: Option<String>,
    /// Under a rate, where each op's latency starts: `schedule` (its scheduled start, the
    /// default: an op held back by a slow one counts the time it waited) or `issue` (when it
    /// is issued, after any wait: fio's meaning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_from: Option<String>,
    /// Each thread's reads per second in bytes, on their own schedule (fio's `rate=R,W`): one
    /// entry that mixes reads and writes (`write_percent`); not with `rate` or `rate_iops`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_read: Option<SizeExpr>,
    /// Each thread's writes per second in bytes, as `rate_read`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_write: Option<SizeExpr>,
    /// Pause between ops: microseconds, or `"500us"`, `"2ms"`, `"1s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<super::load::DurationText>,
    /// Ops between pauses (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime_blocks: Option<u64>,
    /// Flow weight (fio's `flow`): the phase's threads and the roles' threads of the same
    /// `flow_id` keep their op counts in the ratio of their weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<u32>,
    /// The flow's id (fio's `flow_id`, default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<u32>,
    /// Microseconds a thread ahead of its flow share waits (fio's `flow_sleep`; default 0: it
    /// spins and tries again at once, as fio's job loop does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_sleep: Option<u64>,
    /// Raise each thread's CPU nice value by this much, -20 to 19 (fio's `nice`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// Each thread's I/O priority, `CLASS[:LEVEL]`: `"be:4"`, `"idle"`, `"rt:0"` (fio's
    /// `prioclass` and `prio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioprio: Option<String>,
    /// The CPUs each thread may run on, `"0,2-3"` (fio's `cpus_allowed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// `shared` (default: every thread on all of `cpus`) or `split` (thread k on the k-th CPU of
    /// `cpus` alone, in turn; fio's `cpus_allowed_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_policy: Option<String>,
    /// Steady-state criterion: `"iops:5%"`, `"iops_slope:0.5%"`, `"bw:5%"`, `"bw_slope:1%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ss: Option<String>,
    /// Steady-state window, seconds (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ss_dur: Option<f64>,
    /// Seconds ignored before the window (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ss_ramp: Option<f64>,
    /// Latency against load after the phase: a step count or a list of percentages of the
    /// closed-loop maximum (see [`super::load::curve_plan`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve_steps: Option<CurveSteps>,
    /// Time of one curve step: `"2s"`, `"500ms"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve_step_time: Option<String>,
    /// The knee's p99 limit, a multiple of the unloaded p99 (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve_knee: Option<f64>,
}

/// `random_percent = 30` (reads and writes) or `random_percent = [30, 60]` (reads, writes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RandomPercent {
    /// One share for both directions.
    Both(u64),
    /// `[reads, writes]`.
    PerDirection(Vec<u64>),
}

/// `curve_steps = 10` (10%, 20%, ... 100%) or `curve_steps = [25, 50, 75, 100]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CurveSteps {
    /// Even steps up to 100%.
    Count(u32),
    /// Percentages of the closed-loop maximum.
    List(Vec<f64>),
}

/// One entry of a phase's pattern.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpSpec {
    /// `read`, `write`, `fsync` or `fdatasync` (file tests); `create`, `unlink`, `stat`, ...
    /// (fileset tests). Absent only for a `choose` entry.
    #[serde(default)]
    pub op: Option<String>,
    /// Fileset tests: `next`, `random` or `shuffle`: which slot the op takes.
    #[serde(default)]
    pub pick: Option<String>,
    /// Fileset tests: fsync the file before close.
    #[serde(default)]
    pub fsync: Option<bool>,
    /// Fileset tests: fsync the parent directory after the op.
    #[serde(default)]
    pub fsync_dir: Option<bool>,
    /// Fileset tests: a weighted choice, one drawn each time the entry runs.
    #[serde(default)]
    pub choose: Option<Vec<OpSpec>>,
    /// Weight of an op inside `choose` (default 1).
    #[serde(default)]
    pub weight: Option<u32>,
    /// Transfer size, fixed ("8K") or `{ uniform = ["1K", "8K"] }`. Defaults to the previous
    /// entry's size for `offset = "last"`; required otherwise for read/write.
    #[serde(default)]
    pub size: Option<SizeDistSpec>,
    /// `sequential` (default), `random`, or `last` (the previous operation's offset).
    #[serde(default)]
    pub offset: Option<String>,
    /// Alignment of random offsets in bytes (default 1: unaligned).
    #[serde(default)]
    pub align: Option<Bytes>,
    /// How many times this entry repeats before the next (default 1).
    #[serde(default)]
    pub repeat: Option<u32>,
    /// A read entry whose each op is a write instead with this probability, in percent, drawn
    /// per op (fio's `randrw` with `rwmixread`; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_percent: Option<u8>,
    /// Sequential entries: bytes skipped after each op (fio's `rw=read:N`), negative to move
    /// backwards (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip: Option<i64>,
}

/// `amount = { ... }`: exactly one key, per thread.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AmountSpec {
    /// Bytes read + written per thread (scaled by `--scale`).
    #[serde(default)]
    pub bytes: Option<SizeExpr>,
    /// Operations per thread.
    #[serde(default)]
    pub ops: Option<u64>,
    /// Seconds of work.
    #[serde(default)]
    pub seconds: Option<f64>,
    /// Full sequential passes over the thread's part of the file (fileset: every slot once).
    #[serde(default)]
    pub passes: Option<u32>,
    /// Fileset tests: this share of one pass (0..1], e.g. 0.2 with pick = "shuffle" for a random
    /// fifth of the slots.
    #[serde(default)]
    pub share: Option<f64>,
    /// Fileset tests: until the filesystem is this full (0..1).
    #[serde(default)]
    pub fill: Option<f64>,
}

/// `sync = { ... }`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncSpec {
    /// Sync after every N bytes written (scaled by `--scale`).
    #[serde(default)]
    pub every_bytes: Option<SizeExpr>,
    /// Sync after every N write operations.
    #[serde(default)]
    pub every_ops: Option<u64>,
    /// Which call the periodic sync uses: `fsync` (default) or `fdatasync`.
    #[serde(default)]
    pub call: Option<String>,
    /// A sync at the end of the phase, inside the timing: `none` (default), `fsync`, `fdatasync`,
    /// `syncfs`.
    #[serde(default)]
    pub at_end: Option<String>,
    /// The periodic sync goes before the next write (fio's `fsync=N`): none after the phase's
    /// last write (default false: right after the write that reaches the mark).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_next: Option<bool>,
}

/// Parse a suite from TOML text. `origin` names the file in error messages.
pub fn parse(text: &str, origin: &str) -> Result<SuiteSpec, crate::workload::WorkloadError> {
    toml::from_str(text).map_err(|e| {
        let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
        crate::workload::WorkloadError::Parse {
            origin: origin.to_string(),
            line,
            col,
            message: e.message().to_string(),
        }
    })
}

/// 1-based line and column of byte offset `pos` in `text`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let before = &text[..pos.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_line_and_column() {
        let text =
            "[[test]]\nid = \"1\"\nname = \"x\"\nfile = { size = \"1M\" }\nthreads = \"two\"\n";
        match parse(text, "w.toml") {
            Err(crate::workload::WorkloadError::Parse { line, col, message, origin }) => {
                assert_eq!(origin, "w.toml");
                assert_eq!(line, 5, "{message}");
                assert_eq!(col, 11);
                assert!(message.contains("expected u32"), "{message}");
            }
            other => panic!("expected parse error, got {other:?}"),
        }
    }

    #[test]
    fn unknown_key_is_rejected() {
        let text = "[[test]]\nid = \"1\"\nname = \"x\"\nfile = { size = \"1M\", colour = 1 }\n";
        let err = parse(text, "w.toml").unwrap_err().to_string();
        assert!(err.contains("colour"), "{err}");
        assert!(err.contains("w.toml:4:"), "{err}");
    }

    #[test]
    fn an_engine_key_is_read_by_its_type_where_it_is_written() {
        let head = "[[test]]\nid = \"1\"\nname = \"x\"\nfile = { size = \"1M\" }\n";
        let tail = "[[test.phase]]\nname = \"p\"\npattern = []\namount = { ops = 1 }\n";
        let t =
            parse(&format!("{head}sqpoll = true\niodepth_batch = 4\n{tail}"), "w.toml").unwrap();
        let keys: Vec<(&str, &OptValue)> = t.tests[0].engine_keys.iter().collect();
        assert_eq!(
            keys,
            [("sqpoll", &OptValue::Bool(true)), ("iodepth_batch", &OptValue::Int(4))],
            "typed by the key table, in the order written"
        );
        match parse(&format!("{head}sqpoll = 3\n{tail}"), "w.toml") {
            Err(crate::workload::WorkloadError::Parse { line, col, message, .. }) => {
                assert_eq!((line, col), (5, 10), "{message}");
                assert!(message.contains("expected a boolean"), "{message}");
            }
            other => panic!("expected a parse error, got {other:?}"),
        }
        let e = parse(&format!("{head}colour = 1\n{tail}"), "w.toml").unwrap_err().to_string();
        assert!(e.contains("w.toml:5:1: unknown field `colour`"), "{e}");
        assert!(e.contains("`direct`, `iodepth_batch`"), "engine keys are listed: {e}");
    }

    #[test]
    fn every_test_key_of_the_table_is_read() {
        // A value of each top-level [[test]] key's kind; the parser must read every one the key
        // table lists (an engine's included), not just accept its name.
        let value = |k: &str| -> &str {
            match k {
                "notes" => "[\"n\"]",
                "file" => "{ size = \"1M\" }",
                "fileset" => "{ count = 1, flat = true, size = \"0\" }",
                "role" => "[]",
                "min_time" => "false",
                "exitall" => "{ stops = \"test\" }",
                _ => match super::super::engines::owner_of(k).map(|(_, key)| key.ty) {
                    Some(crate::workload::keys::Type::Int) => "1",
                    Some(crate::workload::keys::Type::Bool) => "true",
                    _ if ["threads", "iodepth", "seed"].contains(&k) => "1",
                    _ if ["direct", "random_map", "verify"].contains(&k) => "true",
                    _ => "\"x\"",
                },
            }
        };
        for k in test_fields().iter().filter(|k| !["id", "name", "phase"].contains(k)) {
            let v = value(k);
            let text = format!("[[test]]\nid = \"1\"\nname = \"x\"\n{k} = {v}\n[[test.phase]]\nname = \"p\"\npattern = []\namount = {{ ops = 1 }}\n");
            if let Err(e) = parse(&text, "w.toml") {
                panic!("`{k} = {v}`: {e}");
            }
        }
    }
}
