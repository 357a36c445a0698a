//! Every key of the workload language, declared once: name, type, accepted values, default,
//! bounds and help, as fio's `struct fio_option` table.
//!
//! The table drives:
//! - the "known: ..." lists of validation errors ([`Key::known`]) and the numeric bounds the
//!   validator enforces ([`Key::max`]);
//! - the key reference in `docs/reference/workloads.md`: each `<!-- keys:SECTION -->` block
//!   there is [`render`]ed from this table, and a test fails when the two differ (run it with
//!   `FSBENCH_BLESS=1` to rewrite the blocks after changing the table);
//! - a test that every key the TOML parser accepts ([`super::spec`]) is in the table, and only
//!   those, so neither can gain a key the other lacks.
//!
//! An engine's own keys (io_uring's batching and polling) are declared by the engine
//! ([`super::engines`]) and take their place in the table after `direct` ([`keys`]); the parser
//! of `[[test]]` reads them by the table, and the `engine` key's values and help are the
//! engines' names and summaries.
//!
//! Adding a key: add it to [`super::spec`] (parsing), here (documentation, values, bounds), and
//! to the validator (meaning); the tests say what is missing. An engine's key: only its
//! engine's file.

/// Where a key is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// `[[test]]` (with `file = { ... }`).
    Test,
    /// `[[test.phase]]` (with `amount` and `sync`).
    Phase,
    /// An entry of a data test's `pattern`.
    Entry,
    /// `fileset = { ... }`.
    Fileset,
    /// An entry of a fileset test's `pattern`.
    FilesetEntry,
}

impl Section {
    /// Every section, in document order.
    pub const ALL: [Section; 5] =
        [Section::Test, Section::Phase, Section::Entry, Section::Fileset, Section::FilesetEntry];

    /// The name of the section's block in `docs/reference/workloads.md` (`<!-- keys:NAME -->`).
    pub fn name(self) -> &'static str {
        match self {
            Section::Test => "test",
            Section::Phase => "phase",
            Section::Entry => "entry",
            Section::Fileset => "fileset",
            Section::FilesetEntry => "fileset-entry",
        }
    }
}

/// A value's type, as the reference shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// A string.
    Str,
    /// A non-negative integer.
    Int,
    /// A number (may have a fraction).
    Float,
    /// `true` or `false`.
    Bool,
    /// Bytes: an integer or a string with a binary unit (`"8K"`).
    Size,
    /// A size or a distribution of sizes (`"4K"`, `{ uniform = [...] }`, `{ lognormal = ... }`).
    SizeDist,
    /// One of [`Key::values`].
    Choice,
    /// A list of [`Key::values`].
    Flags,
    /// An inline table or list described in the help.
    Table,
}

/// One key.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// Where it is written.
    pub section: Section,
    /// Its name (dotted inside inline tables: `file.size`, `sync.every_bytes`).
    pub name: &'static str,
    /// Its type.
    pub ty: Type,
    /// The words it accepts ([`Type::Choice`], [`Type::Flags`]), in the order errors list them.
    pub values: &'static [&'static str],
    /// The default as written in a workload; `None`: required, or absent means "none".
    pub default: Option<&'static str>,
    /// Inclusive bounds of integers.
    pub bounds: Option<(u64, u64)>,
    /// What it means.
    pub help: &'static str,
}

impl Key {
    /// The accepted words, comma-separated, for "known: ..." in errors.
    pub fn known(&self) -> String {
        self.values.join(", ")
    }

    /// The largest integer accepted.
    pub const fn max(&self) -> u64 {
        match self.bounds {
            Some((_, hi)) => hi,
            None => u64::MAX,
        }
    }

    /// Whether `word` is one of the accepted values.
    pub fn accepts(&self, word: &str) -> bool {
        self.values.contains(&word)
    }
}

/// A key with no values, default or bounds.
pub const fn key(section: Section, name: &'static str, ty: Type, help: &'static str) -> Key {
    Key { section, name, ty, values: &[], default: None, bounds: None, help }
}

/// `k` with a default.
pub const fn with_default(mut k: Key, d: &'static str) -> Key {
    k.default = Some(d);
    k
}

/// `k` with its accepted words.
pub const fn with_values(mut k: Key, v: &'static [&'static str]) -> Key {
    k.values = v;
    k
}

/// `k` with inclusive integer bounds.
pub const fn with_bounds(mut k: Key, lo: u64, hi: u64) -> Key {
    k.bounds = Some((lo, hi));
    k
}

use Section::*;
use Type::*;

/// `threads`.
pub const THREADS: Key = with_bounds(
    with_default(
        key(Test, "threads", Int, "worker threads; they start together behind a barrier"),
        "1",
    ),
    1,
    1024,
);
/// `figure`.
pub const FIGURE: Key = with_values(
    key(Test, "figure", Choice, "the figure of merit every output, `compare` and `diff` rank the test on: `mib_per_s` (bytes read + written per second) or `ops_per_s` (operations per second: file-set operations for a fileset test, reads and writes for a data test), always shown with the elapsed seconds; default: `ops_per_s` for a fileset test, `mib_per_s` for a data test"),
    &["mib_per_s", "ops_per_s"],
);
/// `iodepth`.
pub const IODEPTH: Key = with_bounds(
    with_default(
        key(Test, "iodepth", Int, "requests each thread keeps in flight (data tests); above 1 needs an engine that queues (`io_uring`, `libaio`, `null`); a sync waits until the queue is empty"),
        "1",
    ),
    1,
    4096,
);
/// `direct`.
pub const DIRECT: Key = with_default(
    key(
        Test,
        "direct",
        Bool,
        "open the test's files with O_DIRECT in every phase (as `open = [\"direct\"]`; data tests; sizes fixed or a split, not drawn from a range). At the start of the test, before any I/O, fsbench checks that the file accepts O_DIRECT and the alignment it needs (`statx(STATX_DIOALIGN)` on the file, else the logical block size of the device under it, else 4096 bytes; 512 on ext4 and xfs on most devices): every op's size, random offsets' `align`, `skip` and the threads' parts of the file must be multiples of it, or only that test fails, saying why; the phases' cache precondition is reported as `direct`",
    ),
    "false",
);
/// `open`.
pub const OPEN: Key = with_values(
    with_default(
        key(Phase, "open", Flags, "open flags: `create`, `trunc`, `append`, `dsync` (O_DSYNC), `sync` (O_SYNC), `direct` (O_DIRECT); data tests"),
        "[]",
    ),
    &["create", "trunc", "append", "dsync", "sync", "direct"],
);
/// `op` of a data pattern entry.
pub const DATA_OP: Key = with_values(
    key(Entry, "op", Choice, "`read` (pread), `write` (pwrite), `fsync`, `fdatasync`"),
    &["read", "write", "fsync", "fdatasync"],
);
/// `offset`.
pub const OFFSET: Key = with_values(
    with_default(
        key(Entry, "offset", Choice, "`sequential` (continues per thread), `random` (uniform, the transfer fits in the file), `last` (the previous operation's offset)"),
        "sequential",
    ),
    &["sequential", "random", "last"],
);
/// `op` of a fileset pattern entry.
pub const FILESET_OP: Key = with_values(
    key(FilesetEntry, "op", Choice, "`create` (open O_CREAT\\|O_EXCL, write its size, close), `unlink`, `stat`, `readdir` (open a leaf directory, read all entries with getdents64, close), `mkdir`, `rmdir`, `rename` (to a free slot), `replace` (durable replace: write `fN.tmp` beside `fN`, fsync, rename over it), `append` (open O_APPEND, write, close), `readwhole` (open, read to EOF, close), `fsyncdir` (fsync a leaf directory); fio's file operations: `opencreate` (open O_CREAT\\|O_RDWR 0600, close, no data; the open timed), `lstat`, `statx`, `mkdirslot` (a free slot made a directory), `rmdirslot` (a slot's directory removed)"),
    &[
        "create", "unlink", "stat", "readdir", "mkdir", "rmdir", "rename", "replace", "append",
        "readwhole", "fsyncdir", "opencreate", "lstat", "statx", "mkdirslot", "rmdirslot",
    ],
);
/// `paths` of a fileset.
pub const PATHS: Key = with_values(
    with_default(
        key(Fileset, "paths", Choice, "how ops name a file: `relative` (the set's directory fd and the name below it, `fstatat(dirfd, \"d3/f12\")`: the kernel walks only the components below the set) or `absolute` (`stat(\"/mnt/x/set/d3/f12\")`, as mdtest and most programs call: every call walks the whole path; refused under a directory others can write without the sticky bit, where a swapped name could redirect the calls)"),
        "relative",
    ),
    &["relative", "absolute"],
);
/// `file.preallocate`.
pub const FILE_PREALLOCATE: Key = with_values(
    key(Test, "file.preallocate", Choice, "with `file.prefill = false`: lay the file out before the first phase, untimed, when it is absent or shorter than `file.size` (fio's `fallocate` for a write job's file): `fallocate` (`fallocate(fd, 0, 0, size)`: blocks reserved as unwritten extents, the file has its size; fio's default, `native`), `keep-size` (`FALLOC_FL_KEEP_SIZE`: blocks reserved, length unchanged) or `truncate` (`ftruncate`: the size, no blocks). A filesystem without fallocate (EOPNOTSUPP) leaves the file as it was, as fio does. Default: none, the first write creates the file"),
    &["fallocate", "keep-size", "truncate"],
);
/// `pick`.
pub const PICK: Key = with_values(
    with_default(
        key(FilesetEntry, "pick", Choice, "`next` (the thread's slots in order), `random` (a random slot; if it does not suit, the next one that does), `shuffle` (every slot once per pass in a random order: a keyed permutation, no memory)"),
        "next",
    ),
    &["next", "random", "shuffle"],
);
/// `sync.call`.
pub const SYNC_CALL: Key = with_values(
    with_default(key(Phase, "sync.call", Choice, "the periodic sync's call"), "fsync"),
    &["fsync", "fdatasync"],
);
/// `sync.at_end`.
pub const SYNC_AT_END: Key = with_values(
    with_default(
        key(Phase, "sync.at_end", Choice, "a sync after the last operation, inside the timing (fileset phases: `none` or `syncfs`, one syncfs(2) after the last thread)"),
        "none",
    ),
    &["none", "fsync", "fdatasync", "syncfs"],
);
/// `random_map`.
pub const RANDOM_MAP: Key = with_default(
    key(
        Test,
        "random_map",
        Bool,
        "fio's random map (data tests): each phase's random offsets visit every aligned offset of the file once per pass, in a keyed pseudo-random order (each thread its own order, restarted with a new order after each pass), instead of being drawn with replacement; the phase's random ops must then have one fixed size and one `align`. Off by default, so fsbench's own suites (unit14) do what they always did; on in every translated fio job unless it sets `norandommap` (fio's default). A buffered random read without it re-reads blocks it has cached",
    ),
    "false",
);
/// `random_distribution`.
pub const RANDOM_DISTRIBUTION: Key = key(
    Test,
    "random_distribution",
    Str,
    "fio's `random_distribution` in fio's syntax (data tests): `\"random\"` (uniform, the default), `\"zipf:θ[:center]\"`, `\"pareto:h[:center]\"`, `\"normal:dev[:center]\"`, `\"zoned:A/S:A/S...\"` (A% of the accesses to the next S% of the file, uniform inside a zone) or `\"zoned_abs:A/SIZE:...\"`. The law is fio's; zipf, pareto and normal spread their hot blocks over the file by a hash, so the hit count per block matches fio's, not which block is hot. Draws with replacement (not with `random_map = true`, as fio keeps no map then); the phase's random ops need one fixed size and one `align`",
);
/// `repeat`.
pub const REPEAT: Key = with_bounds(
    with_default(key(Entry, "repeat", Int, "this entry N times in a row"), "1"),
    1,
    u32::MAX as u64,
);
/// `tree.depth`.
pub const TREE_DEPTH: Key =
    with_bounds(key(Fileset, "tree.depth", Int, "directory levels below the set's root"), 1, 8);
/// `fileset.count`.
pub const FILESET_COUNT: Key = with_bounds(
    key(Fileset, "count", Int, "number of files (with a tree, optional: it must equal fanout^depth × files_per_dir); required for `flat`"),
    1,
    100_000_000,
);

/// The keys declared here, in document order: the engines' own keys go after `direct`, and
/// `engine` is made from the engines ([`keys`]).
const OWN_KEYS: &[Key] = &[
    key(Test, "id", Str, "short id, used by `--test`: 1-64 of `A-Z a-z 0-9 . _ -`, not starting with `.` or `-`; required"),
    key(Test, "name", Str, "short name shown in tables; required"),
    with_default(key(Test, "description", Str, "what the test does, in words"), "\"\""),
    with_default(key(Test, "notes", Table, "a list of strings said with the test's results: in every output's notes and the store (a translated fio job's differences from fio are written here)"), "[]"),
    THREADS,
    ENGINE_SLOT,
    IODEPTH,
    FIGURE,
    DIRECT,
    with_default(key(Test, "min_time", Bool, "`false`: `--min-time` never runs this test's phases again, whatever their length: each repetition does the test's work once (a peer's test, such as bonnie++'s, whose figures are of one pass)"), "true"),
    RANDOM_MAP,
    key(Test, "seed", Int, "the test's own seed for its random offsets, sizes and Poisson arrivals, instead of the run's `--seed` (fio's `randseed`): the same seed, the same operations; another seed, another draw"),
    with_default(key(Test, "verify", Bool, "fsbench's data check for this test alone, as `--verify` does for every test: written blocks carry their file, offset, seed and a CRC-32, and after each repetition the test's files are read back and every block checked (a bad block fails the test, naming its file and offset); a translated fio job with `verify=` sets it. Allowed with `file.path`: the file is then checked as written by fsbench's own check (a file of other content fails)"), "false"),
    RANDOM_DISTRIBUTION,
    key(Test, "file.size", Size, "file size, or `\"freemem/N\"` (MemAvailable / N when the suite is loaded); required in `file`"),
    with_default(key(Test, "file.shared", Bool, "one file shared by all threads (`true`), or one file per thread"), "true"),
    key(Test, "file.offset", Size, "where thread 0's region of the file starts (fio's `offset`): each thread works on `file.size` bytes from its region's start, sequential and random ops alike; the file reaches the end of the last thread's region"),
    with_default(key(Test, "file.offset_increment", Size, "how much further each next thread's region starts (fio's `offset_increment`: thread k's region starts at `file.offset` + k × this)"), "0"),
    with_default(key(Test, "file.whole", Bool, "with `file.shared`: every thread works on the whole file from its start (fio's jobs naming one `filename`), instead of each thread sequentially on its own part of it"), "false"),
    with_default(key(Test, "file.prefill", Bool, "create and fill the file (incompressible data, fsync) before the first phase, untimed"), "true"),
    FILE_PREALLOCATE,
    key(Test, "file.path", Str, "the file at this absolute path instead of fsbench's own in its work directory (fio's `filename=/mnt/x.dat`): the user's file, created if absent, prefilled only if absent or shorter than `file.size`, opened with `O_NOFOLLOW` (a symlink, FIFO, directory or device is refused), kept afterwards; one file shared by the threads; on the filesystem under test; not with `--verify` (the test's own `verify` is allowed) or several processes"),
    with_default(key(Test, "file.unlink", Bool, "with `file.path` or `file.run_file`: remove the file after the test"), "false"),
    key(Test, "file.run_file", Str, "a file of the run (fio's plain `filename` named by several jobs): fsbench's own file of this name (no `/`) in its work directory, one for every test of the run naming it; the first such test starts each repetition without it, later tests find it as the earlier ones left it (prefilled only if absent or shorter than `file.size`); removed with the work directory at the end of the run; one file shared by the threads; not with `--verify` (the test's own `verify` is allowed), several processes or `compare --fresh per-test`"),
    key(Test, "file.take_size", Size, "with `file.run_file`: the file's size is the file's length when the test starts, rounded down to this block (fio's job without `size` after a `fill_device` job); `file.size` is then nominal"),
    with_default(key(Test, "file.per_thread", Int, "with `file.shared = false`: files of each thread (fio's `nrfiles`), each `file.size` bytes (`t<ID>.<thread>.<file>.dat`), opened at the phase's start and closed at its end, each with its own sequential position and random map; each op goes to the file `file.service` picks. Not with `file.path`, `file.run_file`, `file.offset`, `file.take_size`, roles, engine `mmap`, `verify` or `--verify`, `random_distribution`, `random_percent`, an op at `offset = \"last\"`, `amount.passes`, `amount.fill` or `unlink_each_pass`; with `invalidate_each_pass` a pass ends when every file has had its size of ops, and every file's pages are dropped"), "1"),
    with_default(key(Test, "file.service", Choice, "with `file.per_thread`: which of a thread's files each next op goes to (fio's `file_service_type`): `roundrobin` (the next file after each op; `roundrobin:N` after N), `sequential` (one file until it has had `file.size` bytes of ops, then the next) or `random` (a file drawn uniformly for each op; `random:N` for every N). A file that has had `file.size` bytes of ops in the pass is passed over until every file has (fio's done files), when the next pass starts"), "\"roundrobin\""),
    key(Test, "file.name_format", Str, "with `file.shared = false`: the names of the test's files in fsbench's work directory, from `{thread}` (the thread's number, from 0) and `{file}` (the file's among the thread's, from 0), as fio's `filename_format` names them (`\"w.{thread}.{file}\"` for fio's default of a job `w`); the files stay fsbench's own, removed after the test. Each thread's files need names of their own: `{thread}` with several threads, `{file}` with `file.per_thread` > 1; no `/` and no other braces. Default: `t<ID>.<thread>.dat` (`t<ID>.<thread>.<file>.dat` with `file.per_thread`). Not in a role's file"),
    with_default(key(Test, "file.verify_writes", Bool, "with `file.run_file`: the test writes blocks fsbench's check can read, without checking them itself (fio's `verify=` with `do_verify=0`: a later test's `verify` checks them)"), "false"),
    key(Test, "fileset", Table, "instead of `file`: many files (see [Filesets](#filesets))"),
    key(Test, "role", Table, "`[[test.role]]`, repeatable: threads with a file, a pattern and (optionally) an engine, depth and amount of their own that run beside every timed phase until the test's own threads are done, or until they have moved their own amount (see [Roles](#roles)); the test is ranked on its own threads"),
    key(Test, "exitall", Table, "fio's `exitall` with `exit_what`, also on a role (`[[test.role]]`): `{ stops = \"group\", group = N }` or `{ stops = \"test\", group = N }`. When the first thread of the job (the test's own threads, or the role) ends, for any reason, it stops the test's jobs whose `exitall` has the same `group` (default 0; fio's `groupid`), or every job of the test; a job it stops keeps the work it did, ends within about 5 ms plus its op in flight, and stops what its own `exitall` says. The phase then reports `ended_by = \"exitall\"`"),
    key(Phase, "name", Str, "phase name; required"),
    with_default(key(Phase, "timed", Bool, "`false` makes it untimed set-up"), "true"),
    with_values(
        with_default(
            key(Phase, "cache", Choice, "precondition checked (and recorded) before the phase: `any`, `cached` (file read once, then ≥ 95% resident by `mincore`; data tests), `uncached` (a data test: fsync + `fadvise(DONTNEED)` of its files, as fio's `invalidate`, and `drop_caches` only when that left them resident or with `--drop-caches`; a file set: also `drop_caches` as root; or the testbed's own method such as zpool export/import; then ≤ 2% resident); O_DIRECT phases are `direct` (the page cache is bypassed; residency is still recorded)"),
            "any",
        ),
        &["any", "cached", "uncached", "direct"],
    ),
    OPEN,
    key(Phase, "pattern", Table, "list of operations, repeated in order until `amount` is done; required"),
    key(Phase, "amount.bytes", Size, "per thread: bytes read + written (data tests)"),
    key(Phase, "amount.ops", Int, "per thread: operations"),
    key(Phase, "amount.seconds", Float, "per thread: seconds of work; beside bytes, ops or passes a time cap: the phase ends at whichever comes first (fio's size and runtime without time_based)"),
    key(Phase, "amount.passes", Int, "per thread: full sequential passes over the thread's region (the pattern cycle that completes the last pass is finished, so a rewrite's last write is done); fileset: every slot the thread owns once per pass"),
    key(Phase, "amount.share", Float, "fileset tests: this share, in (0, 1], of one pass (with `pick = \"shuffle\"`, a random part of the slots)"),
    key(Phase, "amount.fill", Float, "fileset tests: until the filesystem is this full, in (0, 1] (statvfs: used / (used + available), as `df` shows it); ENOSPC ends the phase normally. Data tests (fio's `fill_device`): only 1, with a pattern of sequential writes (no skip), not with engine `mmap` or `verify`: the writes go on past `file.size` until ENOSPC (or EDQUOT), which ends the phase normally (`ended_by`: \"filesystem full (ENOSPC)\"); such a test runs only on a testbed fsbench made (`--fs`, `compare`, or `--dir` on the mount point of a testbed kept by `fsbench testbed up`) and is refused on any other `--dir` before any I/O"),
    key(Phase, "sync.every_bytes", Size, "sync each time the thread's written bytes reach the next multiple (data tests)"),
    key(Phase, "sync.every_ops", Int, "sync each time the thread's write count reaches the next multiple (data tests)"),
    with_default(key(Phase, "sync.before_next", Bool, "the periodic sync goes before the thread's next write, as fio's `fsync=N` (so none follows the phase's last write: 64 writes with `every_ops = 8` make 7 syncs), instead of right after the write that reaches the mark (8)"), "false"),
    SYNC_CALL,
    SYNC_AT_END,
    with_default(key(Phase, "invalidate_each_pass", Bool, "data tests: each thread drops its file's cached pages (`posix_fadvise(DONTNEED)`, inside the timed phase) each time it completes a pass over the file: a sequential wrap, a pass of the random map (`random_map`), or, for random ops without a map, each file size of bytes moved. A time-based phase on one file drops at the wrap, with the requests still in flight, whose completion latency then holds the drop (as fio's); other phases first wait for them (as fio's loops), and the drop is in no op's latency. fio does this for a time-based buffered job with `invalidate=1` (its default), so every pass reads from the device; a translated fio job sets it then"), "false"),
    with_default(key(Phase, "fadvise_hint", Bool, "data tests: each thread advises the kernel of its access pattern right after opening its file (outside every op's latency): `posix_fadvise(POSIX_FADV_RANDOM)` (no readahead) when the phase has random-offset ops, else `POSIX_FADV_SEQUENTIAL` (a doubled readahead window). fio does this by default (`fadvise_hint=1`); a translated fio job sets it"), "false"),
    with_default(key(Phase, "unlink_each_pass", Bool, "data tests that only write, each thread its own file, engine psync or libaio: each time a thread completes a pass over its file (as `invalidate_each_pass` counts them) and the phase has work left, it closes the file, unlinks it and opens it again with `O_CREAT`, an empty file not laid out (then drops its pages with `invalidate_each_pass` and gives its `fadvise_hint`), inside the timed phase and outside every op's latency. fio's `unlink_each_loop` between a job's loops"), "false"),
    with_default(key(Phase, "random_percent", Table, "data tests: the share, in percent, of the phase's random-offset ops (`offset = \"random\"`) that are random: one share for reads and writes (`30`) or `[reads, writes]` (`[30, 60]`), each 0 to 100. Each such op draws once from the thread's generator: random with this probability (from the random map or the distribution, as usual), else it starts where the thread's previous op of its direction ended (at the region's start before the first; drawn at random instead when it would run past the region's end, or, in a time-based phase, at the region's start again: a pass, after which `invalidate_each_pass` drops the file's cached pages, where fio drops them just before that op), and takes nothing from the random map. fio's `percentage_random`"), "100"),
    key(Phase, "rate_iops", Float, "fixed rate (open loop), ops per second of each thread (or of the test, `rate_per = \"test\"`): each op has a scheduled start and its latency is measured from it, so a stall counts the ops it held back (coordinated omission); the worker sleeps when ahead; the phase reports the rate asked and achieved and says when it fell short. Timed phases; fio's `rate_iops`"),
    key(Phase, "rate", Size, "fixed rate in bytes per second (`\"100M\"`), paced as `rate_iops` at the pattern's mean transfer size; not with `rate_iops`. fio's `rate`"),
    with_values(
        with_default(key(Phase, "rate_per", Choice, "whose rate `rate_iops`/`rate` is: each thread's (fio's: every thread issues its first op at the start, so threads at one rate issue in step, as fio's clones do) or the test's, split evenly over its threads, each thread's schedule starting its share of one period later so the test's ops come evenly spaced"), "thread"),
        &["thread", "test"],
    ),
    with_values(
        with_default(key(Phase, "latency_from", Choice, "under a fixed rate, where each op's latency starts: `schedule`, its scheduled start, so an op held back by a slow one counts the time it waited (no coordinated omission); or `issue`, when it is issued, after any wait for its start (fio's meaning, which `fsbench fio` and `run --fio` use)"), "schedule"),
        &["schedule", "issue"],
    ),
    with_values(
        with_default(key(Phase, "rate_process", Choice, "how a fixed rate's starts are spaced: `linear`, one fixed period, or `poisson`, gaps drawn from an exponential distribution with the same mean (each thread's own seeded draw; the coefficient of variation of the gaps is 1), so arrivals come in bursts as real request streams do. fio's `rate_process`"), "linear"),
        &["linear", "poisson"],
    ),
    key(Phase, "rate_read", Size, "reads of a mixed phase in bytes per second of each thread, on their own schedule (open loop, as `rate`): the pattern is one entry that mixes reads and writes (`write_percent`); an op drawn in a direction that is ahead of its schedule goes the other way when that one is due, so each direction keeps its rate (fio's `rate=R,W`); not with `rate` or `rate_iops`. A direction without one is not limited"),
    key(Phase, "rate_write", Size, "writes of a mixed phase in bytes per second of each thread, as `rate_read` (fio's `rate=,W` alone limits only the writes)"),
    key(Phase, "thinktime", Str, "pause after every `thinktime_blocks` ops (once nothing is in flight), outside every op's latency: microseconds (`500`) or `\"500us\"`, `\"2ms\"`, `\"1s\"`. fio's `thinktime`"),
    with_default(key(Phase, "thinktime_blocks", Int, "ops between pauses of `thinktime`"), "1"),
    key(Phase, "flow", Int, "flow weight, 1 to 1000 (fio's `flow`): the threads of this timed phase and of the test's roles with the same `flow_id` keep their op counts in the ratio of their weights; a thread ahead of its share waits `flow_sleep` (or spins) before its next op. Shared atomic counters, checked only when a flow is set"),
    with_default(key(Phase, "flow_id", Int, "the flow `flow` counts in (fio's `flow_id`)"), "0"),
    with_default(key(Phase, "flow_sleep", Int, "microseconds a thread ahead of its flow share waits before it tries again (fio's `flow_sleep`); 0: it keeps its CPU and tries again at once, as fio's job loop does"), "0"),
    key(Phase, "nice", Int, "each thread of the phase (and of a role that sets it) raises its CPU nice value by this much, -20 to 19 (negative lowers it, which needs CAP_SYS_NICE), once when it starts, before the phase's clock: glibc's `nice(N)`, as fio's `nice` (Linux keeps the value per thread, so only the phase's own threads change)"),
    key(Phase, "ioprio", Str, "each thread's I/O priority, `CLASS[:LEVEL]`: class `rt` (realtime, needs CAP_SYS_ADMIN), `be` (best effort) or `idle`, level 0 (highest) to 7 (default 0): `\"be:4\"`. Set once when the thread starts with `ioprio_set(IOPRIO_WHO_PROCESS, 0, class << 13 | level)`, as fio's `prioclass` and `prio`; the I/O scheduler decides what it means (mq-deadline and bfq honour classes, none ignores them)"),
    key(Phase, "cpus", Str, "the CPUs each thread may run on, a list such as `\"0,2-3\"` (each on this machine), set once when the thread starts with `sched_setaffinity`, as fio's `cpus_allowed`"),
    with_default(with_values(key(Phase, "cpus_policy", Choice, "how `cpus` is given to the threads: `shared`, every thread on all of them; `split`, thread k on the (k mod n)-th CPU of the list alone (fio's `cpus_allowed_policy`)"), &["shared", "split"]), "shared"),
    key(Phase, "ss", Str, "steady state (time-based phases): the phase ends once the last `ss_dur` seconds meet `METRIC:LIMIT%`: `iops`/`bw` (every 1 s sample less than LIMIT% of the window's mean away from it) or `iops_slope`/`bw_slope` (the least-squares slope, per second, less than LIMIT% of the mean in size; strictly less, as fio's); else it runs its time and says the criterion never held. fio's `steadystate`"),
    with_default(key(Phase, "ss_dur", Float, "steady-state window, whole seconds (≥ 2)"), "30"),
    with_default(key(Phase, "ss_ramp", Float, "seconds ignored before the steady-state window"), "0"),
    key(Phase, "curve_steps", Table, "latency against load (as `--curve`; time-based timed data phases, not with a fixed rate): after the phase (the closed-loop pass, its maximum) the phase runs again at fixed rates of these percentages of that maximum, each `curve_step_time`: a count (`10`: 10%, 20%, ... 100%) or a list (`[25, 50, 75, 100]`), at least 2 steps in (0, 100]; each step reports asked and achieved rate and p50/p99/p99.9 timed from the schedule, and the curve its knee"),
    with_default(key(Phase, "curve_step_time", Str, "time of one curve step (`\"500ms\"`, `\"2s\"`; at least 100ms; `--scale quick`: 1s)"), "2s"),
    with_default(key(Phase, "curve_knee", Float, "the knee: the highest achieved rate before the first step whose p99 exceeds this multiple of the unloaded p99 (the lowest step's)"), "3"),
    DATA_OP,
    key(Entry, "size", SizeDist, "`\"8K\"`, or `{ uniform = [\"1K\", \"8K\"] }` or `{ split = [{ size = \"4K\", weight = 60 }, { size = \"64K\", weight = 40 }] }` (fio's bssplit, up to 16 sizes) or `{ unaligned_range = [\"4K\", \"16K\"] }` (fio's bsrange with bs_unaligned: min + ⌊max × u⌋ bytes, at most max, any byte count: every size from 4096 to 16383 bytes 1/16384 each and 16384 a quarter of the time) drawn per operation; defaults to the previous entry's for `offset = \"last\"`"),
    OFFSET,
    with_default(key(Entry, "align", Size, "alignment of random offsets (1: unaligned)"), "1"),
    with_default(key(Entry, "write_percent", Int, "a read entry's ops are writes instead with this probability, drawn per op (fio's `randrw` with `rwmixread`; on a sequential entry fio's `rw=rw`: reads and writes each keep their own position, as fio's)"), "0"),
    with_default(key(Entry, "skip", Int, "sequential entries: bytes skipped after each op (fio's `rw=read:N`); negative moves backwards (`-8192` with 4K ops reads the file from its end to its start, as fio's `rw=read:-8k`). Past the end of the thread's region the position goes back to its start, below its start to its end less the skip; only reaching the end exactly ends a pass"), "0"),
    REPEAT,
    FILESET_COUNT,
    key(Fileset, "flat", Bool, "`true`: all files in one directory (`f0`, `f1`, ...)"),
    key(Fileset, "tree", Table, "`{ depth = D, fanout = F, files_per_dir = N }`: D levels of F directories, N files per leaf (`d3/d0/d7/f12`)"),
    TREE_DEPTH,
    key(Fileset, "tree.fanout", Int, "subdirectories per directory (≥ 1)"),
    key(Fileset, "tree.files_per_dir", Int, "files per leaf directory (≥ 1; scaled by `--scale`)"),
    key(Fileset, "size", SizeDist, "file size: `\"4K\"`, `{ uniform = [\"500\", \"10000\"] }` or `{ lognormal = { median = \"20K\", sigma = 0.6, min = \"10K\", max = \"150K\" } }`; required"),
    with_default(key(Fileset, "prefill", Bool, "create every file (untimed, before the first phase)"), "false"),
    with_default(key(Fileset, "write_size", Size, "chunk of whole-file writes (create, append, replace) and reads (readwhole)"), "\"64K\""),
    PATHS,
    with_default(key(Fileset, "name_prefix", Str, "file names are this and the slot number (`f12`); letters, digits, `.`, `_`, `-`, up to 32 bytes, not starting with `.` or `-`. Names matter: on ext4 here, creating 20,000 files named like mdtest's (`file.mdtest.0.12`) ran 15-20% faster than named `f12` (`bench/create-names.c`)"), "\"f\""),
    FILESET_OP,
    PICK,
    with_default(key(FilesetEntry, "fsync", Bool, "fsync the file before close (create, append)"), "false"),
    with_default(key(FilesetEntry, "fsync_dir", Bool, "fsync the parent directory after the op (create, unlink, rename, replace, mkdir, rmdir)"), "false"),
    key(FilesetEntry, "size", SizeDist, "bytes appended (append only); default: the fileset's `size`"),
    key(FilesetEntry, "choose", Table, "instead of `op`: `[{ op = \"create\", weight = 5 }, { op = \"unlink\", weight = 5 }]`, one drawn by weight each time the entry runs (postmark's transactions)"),
    with_default(key(FilesetEntry, "weight", Int, "weight of an op inside `choose` (≥ 1)"), "1"),
    REPEAT_FS,
];

const REPEAT_FS: Key = Key { section: FilesetEntry, ..REPEAT };

/// Where `engine` goes in [`OWN_KEYS`]; [`keys`] puts [`engine_key`] there.
const ENGINE_SLOT: Key = key(Test, "engine", Choice, "");

/// `engine`: one of the engines ([`super::engines::ENGINES`]), each described by its summary.
pub fn engine_key() -> &'static Key {
    static ENGINE: std::sync::LazyLock<Key> = std::sync::LazyLock::new(|| {
        let engines = super::engines::ENGINES;
        let each: Vec<String> =
            engines.iter().map(|e| format!("`{}` ({})", e.name, e.summary)).collect();
        let help = format!("how ops reach the kernel: {}", each.join(", "));
        let values: Vec<&'static str> = engines.iter().map(|e| e.name).collect();
        Key {
            values: Vec::leak(values),
            help: String::leak(help),
            ..with_default(ENGINE_SLOT, super::engines::DEFAULT_ENGINE)
        }
    });
    &ENGINE
}

/// Every key, in document order: those declared here, with `engine` made from the engines and
/// each engine's own keys after `direct`. Built once (the engine parts are only known as the
/// list of engines; the few bytes it makes live as long as the program).
pub fn keys() -> &'static [Key] {
    static KEYS: std::sync::LazyLock<&'static [Key]> = std::sync::LazyLock::new(|| {
        let mut all = Vec::with_capacity(OWN_KEYS.len() + 8);
        for k in OWN_KEYS {
            all.push(if k.name == ENGINE_SLOT.name && k.section == Test {
                *engine_key()
            } else {
                *k
            });
            if k.name == DIRECT.name && k.section == Test {
                all.extend(super::engines::ENGINES.iter().flat_map(|e| e.keys.iter().copied()));
            }
        }
        Vec::leak(all)
    });
    &KEYS
}

/// The type column of the reference.
fn type_text(k: &Key) -> String {
    let words = || k.values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ");
    let t = match k.ty {
        Str => "string".to_string(),
        Int => "integer".to_string(),
        Float => "number".to_string(),
        Bool => "bool".to_string(),
        Size => "size".to_string(),
        SizeDist => "size or distribution".to_string(),
        Choice => format!("one of {}", words()),
        Flags => format!("list of {}", words()),
        Table => "table".to_string(),
    };
    match k.bounds {
        Some((lo, hi)) if hi < u32::MAX as u64 => format!("{t}, {lo}..{hi}"),
        Some((lo, _)) => format!("{t}, ≥ {lo}"),
        None => t,
    }
}

/// The markdown table of one section's keys, as `docs/reference/workloads.md` holds it.
pub fn render(section: Section) -> String {
    let mut s = String::from("| key | type | default | meaning |\n|---|---|---|---|\n");
    for k in keys().iter().filter(|k| k.section == section) {
        let d = k.default.map(|d| format!("`{d}`")).unwrap_or_default();
        s.push_str(&format!("| `{}` | {} | {d} | {} |\n", k.name, type_text(k), k.help));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys serde accepts in one table of the spec: from the "unknown field" error, which
    /// lists every expected field.
    fn accepted(toml_text: &str) -> Vec<String> {
        let e = super::super::spec::parse(toml_text, "k.toml").unwrap_err().to_string();
        let list = e.split("expected one of ").nth(1).unwrap_or_else(|| panic!("{e}"));
        list.split(", ").map(|w| w.trim().trim_matches('`').to_string()).collect()
    }

    fn names(section: Section, prefix: &str) -> Vec<String> {
        let mut v: Vec<String> = keys()
            .iter()
            .filter(|k| k.section == section)
            .filter_map(|k| {
                let n = k.name.strip_prefix(prefix).unwrap_or(k.name);
                (prefix.is_empty() || k.name.starts_with(prefix)).then(|| n.to_string())
            })
            .filter(|n| !n.contains('.'))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    #[test]
    fn the_table_lists_exactly_the_keys_the_parser_accepts() {
        let t = "[[test]]\nid = \"1\"\nname = \"x\"\nbogus = 1\n";
        let mut test_keys = names(Test, "");
        test_keys.extend(["file".to_string(), "phase".to_string()]);
        assert_eq!(sorted(accepted(t)), sorted(test_keys));
        let f = "[[test]]\nid = \"1\"\nname = \"x\"\nfile = { size = \"1M\", bogus = 1 }\n";
        assert_eq!(sorted(accepted(f)), names(Test, "file."));
        let p = "[[test]]\nid = \"1\"\nname = \"x\"\n[[test.phase]]\nbogus = 1\n";
        let mut phase_keys = names(Phase, "");
        phase_keys.extend(["amount".to_string(), "sync".to_string()]);
        assert_eq!(sorted(accepted(p)), sorted(phase_keys));
        let a = "[[test]]\nid = \"1\"\nname = \"x\"\n[[test.phase]]\namount = { bogus = 1 }\n";
        assert_eq!(sorted(accepted(a)), names(Phase, "amount."));
        let s = "[[test]]\nid = \"1\"\nname = \"x\"\n[[test.phase]]\nsync = { bogus = 1 }\n";
        assert_eq!(sorted(accepted(s)), names(Phase, "sync."));
        let e = "[[test]]\nid = \"1\"\nname = \"x\"\n[[test.phase]]\npattern = [{ bogus = 1 }]\n";
        let mut entry_keys = names(Entry, "");
        entry_keys.extend(names(FilesetEntry, ""));
        entry_keys.sort();
        entry_keys.dedup();
        assert_eq!(sorted(accepted(e)), entry_keys);
        let fs = "[[test]]\nid = \"1\"\nname = \"x\"\nfileset = { bogus = 1 }\n";
        assert_eq!(sorted(accepted(fs)), names(Fileset, ""));
        let tr = "[[test]]\nid = \"1\"\nname = \"x\"\nfileset = { tree = { bogus = 1 } }\n";
        assert_eq!(sorted(accepted(tr)), names(Fileset, "tree."));
    }

    #[test]
    fn engine_values_are_the_engines() {
        let names = super::super::engines::names();
        assert_eq!(engine_key().values, names.as_slice());
        assert_eq!(engine_key().default, Some("psync"));
        let deepest = super::super::engines::ENGINES.iter().map(|e| e.caps.max_depth).max();
        assert_eq!(Some(IODEPTH.max() as u32), deepest, "iodepth's bound is the deepest engine's");
        let t: Vec<&str> = keys().iter().filter(|k| k.section == Test).map(|k| k.name).collect();
        let at = |n: &str| t.iter().position(|k| *k == n).unwrap();
        assert_eq!(at("iodepth_batch"), at("direct") + 1, "engine keys follow direct: {t:?}");
        for op in DATA_OP.values.iter().chain(FILESET_OP.values) {
            assert!(crate::model::job::OpKind::from_name(op).is_some(), "{op}");
        }
    }

    /// `docs/reference/workloads.md`'s key reference is this table. `FSBENCH_BLESS=1` rewrites it.
    #[test]
    fn docs_key_reference_is_generated_from_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference/workloads.md");
        let mut doc = std::fs::read_to_string(path).unwrap();
        let mut stale = Vec::new();
        for s in Section::ALL {
            let (open, close) = (format!("<!-- keys:{} -->\n", s.name()), "<!-- /keys -->");
            let a = doc.find(&open).unwrap_or_else(|| panic!("{path}: no {open}")) + open.len();
            let b = a + doc[a..].find(close).unwrap_or_else(|| panic!("{path}: no {close}"));
            let want = render(s);
            if doc[a..b] != want {
                stale.push(s.name());
                doc.replace_range(a..b, &want);
            }
        }
        if std::env::var_os("FSBENCH_BLESS").is_some() {
            std::fs::write(path, doc).unwrap();
            return;
        }
        assert!(
            stale.is_empty(),
            "docs/reference/workloads.md key reference differs from src/workload/keys.rs in {stale:?}; run FSBENCH_BLESS=1 cargo test --lib keys"
        );
    }
}
