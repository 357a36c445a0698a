//! One fio job becomes one fsbench test: `numjobs` threads, one file (shared when the job names
//! it with `filename`, else one per thread, as fio's clones have, named as fio names them:
//! [`name_format`]), a timed phase of the job's
//! operations (after an untimed `ramp_time` phase), the amount from `size`/`io_size` or
//! `runtime` with `time_based`.
//!
//! fio semantics followed (checked against fio 3.33's HOWTO and runs of fio itself):
//! - sizes: `k`/`m`/`g`/`t` (with or without `b`, any case) are powers of 1024, and `KiB`-style
//!   suffixes are powers of 1000 (fio's default `kb_base=1024` inverts the IEC meaning);
//! - jobs run *at the same time* unless a `stonewall` separates them: such a group is one test,
//!   its first job the test's own threads and each other job a role beside them ([`groups`]);
//! - `blockalign` defaults to the block size; `bsrange` draws multiples of its minimum, and
//!   `bssplit` sizes are rounded down to one, unless `bs_unaligned` ([`unaligned`]);
//! - without `norandommap` fio touches each block once per pass (its random map), and so does
//!   fsbench (the test's `random_map`), in an order of its own; `random_generator=lfsr` walks
//!   every block once even with `norandommap`;
//! - `invalidate=1` (the default) drops the file's cached pages before the job: a buffered read
//!   phase gets `cache = "uncached"`, which fsbench verifies with mincore; a time-based buffered
//!   job drops them again each time it wraps (`invalidate_each_pass`);
//! - a write-only job's file is fallocated by fio; fsbench starts from an empty file (noted).

use super::ini::{self, Entry, Inputs};
use super::options::{self, Kind};
pub use super::value::{parse_size, parse_time, ValueError};
use super::value::{parse_size_expr, size_range, size_split, split_rw};
use super::FioError;
use crate::model::job::{OptValue, SizeDist};
use crate::workload::engines::uring;
use crate::workload::keys::Key;
use crate::workload::size::{Bytes, SizeDistSpec, SizeExpr, SplitSpec};
use crate::workload::spec::{
    AmountSpec, CacheReq, EngineKeys, FileSpec, OpSpec, PhaseSpec, SuiteMeta, SuiteSpec, SyncSpec,
    TestSpec,
};
use groups::{one_group, run_groups};
pub use logs::mark_op_logs;
pub use logs::{JobLogs, LogKind};
pub use samples::DEFAULT_WINDOW_MS as DEFAULT_SAMPLE_WINDOW_MS;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A translated job file.
#[derive(Debug, Clone)]
pub struct Translation {
    /// The job file's name (for messages).
    pub file: String,
    /// The suite: one test per job.
    pub spec: SuiteSpec,
    /// Where fsbench's meaning differs in a detail from fio's, or fio options that have no
    /// effect: printed to stderr and in `--print-workload`.
    pub notes: Vec<String>,
    /// `directory=` of the jobs (all must agree): the run directory when `--dir` is not given.
    pub directory: Option<String>,
    /// Each fio job, in the file's order: where it runs and its reporting group.
    pub jobs: Vec<JobPlace>,
    /// The jobs that never run (after a job with `exit_what=all`), in the file's order: not in
    /// `spec` or `jobs`, and listed by `fsbench fio` with no I/O, as fio lists them.
    pub unrun: Vec<UnrunJob>,
    /// The plain `filename`s (no path) of the jobs: fsbench's own files in the run directory,
    /// where fio uses `DIRECTORY/NAME` as it finds it.
    pub plain_files: Vec<String>,
    /// fio's logs (`write_bw_log`, `write_iops_log`, `write_lat_log`; averaged with
    /// `log_avg_msec`, else per I/O) the jobs ask for, in the file's order: `fsbench fio`
    /// writes them after the run.
    pub logs: Vec<JobLogs>,
    /// fio's `bw_avg_time` (= `iops_avg_time`) of every job, ms: the window of the rate
    /// samples `fsbench fio` reports ([`samples`]).
    pub sample_window_ms: u64,
    /// The `[global]` sections' options given with a value (the command line's, then the job
    /// files'), by fio's name, as fio's JSON lists them under `global options`.
    pub global_options: Vec<(String, String)>,
}

/// A fio job that never runs: a job of an earlier run group has `exit_what=all` (with
/// `exitall`), which stops every job not started yet. fio 3.33 still lists it in its report,
/// with zero figures.
#[derive(Debug, Clone, PartialEq)]
pub struct UnrunJob {
    /// fio's job name (the section's).
    pub name: String,
    /// fio's `groupid`.
    pub group: u32,
    /// `group_reporting` of the job.
    pub group_reporting: bool,
    /// Threads (`numjobs`).
    pub threads: u32,
    /// The job whose `exit_what=all` stopped it.
    pub stopped_by: String,
    /// Its own options ([`JobPlace::options`]).
    pub options: Vec<(String, String)>,
}

/// Where one fio job runs: the test (a group of jobs that run at the same time is one test),
/// as the test's own threads or as one of its roles, and fio's reporting group.
#[derive(Debug, Clone, PartialEq)]
pub struct JobPlace {
    /// fio's job name (the section's).
    pub name: String,
    /// The test it runs in.
    pub test_id: String,
    /// The role it is, or None for the test's own threads (the group's first job).
    pub role: Option<String>,
    /// fio's `groupid`: counted from 0, one more at each `stonewall` or `new_group`.
    pub group: u32,
    /// `group_reporting` of the job: its group is reported as one job.
    pub group_reporting: bool,
    /// Threads (`numjobs`).
    pub threads: u32,
    /// Which latencies `fsbench fio` reports percentiles of (`clat_percentiles`,
    /// `lat_percentiles`).
    pub percentiles: LatPercentiles,
    /// `percentile_list`, sorted (None: fio's default list).
    pub percentile_list: Option<Vec<f64>>,
    /// The options of its own section given with a value, by fio's name (`readwrite` is
    /// `rw`), in order, as fio's JSON lists them under `job options` (bare flags such as
    /// `thread` are not listed, as in fio's).
    pub options: Vec<(String, String)>,
    /// Its first thread among the test's own: a group of fio's file-operation jobs is one test
    /// whose threads are the jobs' in turn (0 for any other job).
    pub first_thread: u32,
    /// A job of fio's file-operation engines (`filecreate`, ...): what its report shows.
    pub fileop: Option<FileOpReport>,
}

/// How `fsbench fio` reports a job of fio's file-operation engines ([`fileops`]): the timed
/// op as fio's fake I/O, one per file, in the direction fio records it (`read` for a job that
/// reads, the default, else `write`), each of `bytes` (the job's `bs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileOpReport {
    /// The op fsbench times (fio's completion latency).
    pub op: crate::model::job::OpKind,
    /// Reported as writes (else reads).
    pub write: bool,
    /// Bytes of each fake I/O (fio's `io_bytes` per op).
    pub bytes: u64,
}

/// fio's `clat_percentiles` (default on) and `lat_percentiles` (default off), each off with
/// its `disable_clat`/`disable_lat`: which of a job's latencies its report gives percentiles
/// of (fio's JSON `clat_ns.percentile`, `lat_ns.percentile`; a sync's with either).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatPercentiles {
    /// Completion latency (`clat_ns`).
    pub clat: bool,
    /// Total latency (`lat_ns`).
    pub lat: bool,
}

impl Default for LatPercentiles {
    fn default() -> LatPercentiles {
        LatPercentiles { clat: true, lat: false }
    }
}

impl LatPercentiles {
    /// The job's, as fio 3.33 sets them (`init.c`: `disable_clat` turns `clat_percentiles`
    /// off, `disable_lat` `lat_percentiles`). A bad value is reported by the translation.
    fn of(job: &Job) -> LatPercentiles {
        let flag = |k: &str| job.bool(k).ok().flatten();
        LatPercentiles {
            clat: flag("clat_percentiles").unwrap_or(true) && flag("disable_clat") != Some(true),
            lat: flag("lat_percentiles").unwrap_or(false) && flag("disable_lat") != Some(true),
        }
    }
}

impl Translation {
    /// Per test id, the notes that are differences from fio's meaning (see
    /// [`options::DIFFERENCES`]), without the stored notes' prefix.
    pub fn differences(&self) -> BTreeMap<String, Vec<String>> {
        self.spec
            .tests
            .iter()
            .map(|t| {
                let d = t
                    .notes
                    .iter()
                    .filter(|n| options::is_difference(n))
                    .map(|n| n.trim_start_matches("fio job file: ").to_string());
                (t.id.clone(), d.collect())
            })
            .collect()
    }

    /// `--fio-strict`: refuse the translation when a job's meaning differs from fio's.
    pub fn check_strict(&self) -> Result<(), FioError> {
        for t in &self.spec.tests {
            if let Some(n) = t.notes.iter().find(|n| options::is_difference(n)) {
                return Err(FioError::Strict {
                    file: self.file.clone(),
                    job: t.name.clone(),
                    note: n.trim_start_matches("fio job file: ").to_string(),
                });
            }
        }
        Ok(())
    }

    /// The suite as workload TOML, the notes as comments at the top.
    pub fn to_toml(&self) -> String {
        let mut out = format!("# Translated from the fio job file {} by fsbench.\n", self.file);
        for n in &self.notes {
            out.push_str(&format!("# note: {n}\n"));
        }
        if let Some(d) = &self.directory {
            out.push_str(&format!(
                "# directory={d}: the run directory unless --dir or --fs is given\n"
            ));
        }
        out.push('\n');
        // Serialising plain data types cannot fail; an error here would be a bug in the types.
        out.push_str(&toml::to_string(&self.spec).unwrap_or_else(|e| format!("# error: {e}\n")));
        out
    }
}

/// An option's value as written, with its file and line.
#[derive(Debug, Clone)]
struct Val {
    value: Option<String>,
    file: String,
    line: usize,
}

/// The options in force for one job: the globals before it, then its own.
struct Job<'a> {
    name: String,
    line: usize,
    file: &'a str,
    opts: BTreeMap<&'static str, Val>,
    /// Options given with a value that named an unset `${VAR}` (reported already): counted as
    /// given, so no later check asks for them again.
    unset: BTreeSet<&'static str>,
    /// Its own section's options given with a value ([`JobPlace::options`]).
    own: Vec<(String, String)>,
}

impl Job<'_> {
    /// A value error of `option`, at `line` of the file the option is written in.
    fn err(&self, option: &str, line: usize, message: impl std::fmt::Display) -> FioError {
        let file = match self.opts.get(option) {
            Some(v) if v.line == line => v.file.clone(),
            _ => self.file.to_string(),
        };
        FioError::Value { file, line, option: option.into(), message: message.to_string() }
    }

    /// An error of the whole job, at its section's line.
    fn job_err(&self, message: impl std::fmt::Display) -> FioError {
        self.err(&format!("[{}]", self.name), self.line, message)
    }

    fn get(&self, name: &str) -> Option<&Val> {
        self.opts.get(name)
    }

    fn line(&self, name: &str) -> usize {
        self.get(name).map(|v| v.line).unwrap_or(self.line)
    }

    /// The value of `name` as written and its line, for a caller that reads it as one of
    /// `kinds`: the option table's kind of `name` must be one of them (checked in debug builds,
    /// which every test of an option runs).
    fn raw(&self, name: &str, kinds: &[Kind]) -> Result<Option<(&str, usize)>, FioError> {
        debug_assert!(
            options::lookup(name).is_some_and(|o| kinds.contains(&o.kind)),
            "fio option `{name}` is read as {kinds:?}, and the option table says otherwise"
        );
        match self.get(name) {
            None => Ok(None),
            Some(Val { value: Some(v), line, .. }) => Ok(Some((v.as_str(), *line))),
            Some(Val { value: None, line, .. }) => {
                Err(self.err(name, *line, format!("needs a value: `{name}=...`")))
            }
        }
    }

    /// A [`Kind::Text`] or [`Kind::Sizes`] option, checked by its caller.
    fn str(&self, name: &str) -> Result<Option<(&str, usize)>, FioError> {
        self.raw(name, &[Kind::Text, Kind::Sizes])
    }

    /// A [`Kind::Flag`] option: `name` alone is 1.
    fn bool(&self, name: &str) -> Result<Option<bool>, FioError> {
        if self.get(name).is_some_and(|v| v.value.is_none()) {
            return Ok(Some(true));
        }
        match self.raw(name, &[Kind::Flag])? {
            None => Ok(None),
            Some(("1" | "true" | "on" | "yes", _)) => Ok(Some(true)),
            Some(("0" | "false" | "off" | "no", _)) => Ok(Some(false)),
            Some((v, line)) => {
                Err(self.err(name, line, format!("`{v}` is not {}", Kind::Flag.syntax())))
            }
        }
    }

    /// A [`Kind::Count`] option.
    fn int(&self, name: &str) -> Result<Option<(u64, usize)>, FioError> {
        match self.raw(name, &[Kind::Count])? {
            None => Ok(None),
            Some((v, line)) => {
                let n = match ini::eval(v, &|w| {
                    parse_size(w).map(|n| n as f64).map_err(|e| e.to_string())
                }) {
                    Some(x) => whole(v, x).map_err(|m| self.err(name, line, m))?,
                    None => v.parse::<u64>().map_err(|_| {
                        self.err(name, line, format!("`{v}` is not {}", Kind::Count.syntax()))
                    })?,
                };
                Ok(Some((n, line)))
            }
        }
    }

    /// A [`Kind::Size`] option (or arithmetic in parentheses).
    fn size(&self, name: &str) -> Result<Option<(u64, usize)>, FioError> {
        match self.raw(name, &[Kind::Size])? {
            None => Ok(None),
            Some((v, line)) => {
                parse_size_expr(v).map(|n| Some((n, line))).map_err(|m| self.err(name, line, m))
            }
        }
    }

    /// A [`Kind::Time`] option, in seconds.
    fn seconds(&self, name: &str) -> Result<Option<(f64, usize)>, FioError> {
        match self.raw(name, &[Kind::Time])? {
            None => Ok(None),
            // In an expression a bare number is microseconds (fio's HOWTO).
            Some((v, line)) => match ini::eval(v, &|w| match w.parse::<f64>() {
                Ok(us) => Ok(us),
                Err(_) => parse_time(w).map(|s| s * 1e6).map_err(|e| e.to_string()),
            })
            .map(|r| r.map(|us| us / 1e6))
            {
                Some(Ok(s)) if s >= 0.0 => Ok(Some((s, line))),
                Some(Ok(s)) => Err(self.err(name, line, format!("`{v}` is {s} s, below 0"))),
                Some(Err(m)) => Err(self.err(name, line, format!("`{v}`: {m}"))),
                None => parse_time(v).map(|n| Some((n, line))).map_err(|m| self.err(name, line, m)),
            },
        }
    }
}

/// Translate the text of a job file. `file` names it in messages, `suite_name` names the suite,
/// `env` looks up `${VAR}`s.
pub fn translate(
    text: &str,
    file: &str,
    suite_name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Translation, FioError> {
    let no_include = |_: &str, _: &str| -> Result<(String, String), String> {
        Err("include needs a job file on disk (fsbench run --fio FILE)".into())
    };
    let inputs = Inputs { env, keywords: ini::Keywords::current(), include: &no_include };
    translate_with(text, file, suite_name, &inputs)
}

/// Translate the text of a job file with its outside values from `inputs`. Every problem of
/// the file is found before this returns: one is returned as itself, several as
/// [`FioError::Problems`] (engine and device problems first, then in file order).
pub fn translate_with(
    text: &str,
    file: &str,
    suite_name: &str,
    inputs: &Inputs,
) -> Result<Translation, FioError> {
    from_parsed(ini::parse(text, file, inputs), file, suite_name)
}

/// Translate sections already read (a job file's, or a fio command line's with its job
/// files'); `file` names the whole in messages.
pub fn from_parsed(
    parsed: ini::Parsed,
    file: &str,
    suite_name: &str,
) -> Result<Translation, FioError> {
    let mut errors = parsed.errors;
    let mut globals: BTreeMap<&'static str, Val> = BTreeMap::new();
    let mut global_unset: BTreeSet<&'static str> = BTreeSet::new();
    let mut jobs: Vec<Job> = Vec::new();
    let mut global_options = Vec::new();
    for s in &parsed.sections {
        let mut own = BTreeMap::new();
        let mut own_unset = BTreeSet::new();
        // fio reads a command line's `--name=X` as an option of the job, and lists it.
        let mut given = match s.file == super::cmdline::COMMAND_LINE && s.name != "global" {
            true => vec![("name".to_string(), s.name.clone())],
            false => Vec::new(),
        };
        for Entry { key, value, file: in_file, line, unset } in &s.entries {
            match options::lookup(key) {
                Some(opt) if *unset => {
                    own_unset.insert(opt.name);
                }
                Some(opt) => {
                    own.insert(
                        opt.name,
                        Val { value: value.clone(), file: in_file.clone(), line: *line },
                    );
                    if let Some(v) = value {
                        given.push((opt.name.to_string(), v.clone()));
                    }
                }
                None => errors.push(options::unsupported(key, in_file, *line)),
            }
        }
        if s.name == "global" {
            globals.extend(own);
            global_unset.extend(own_unset);
            global_options.append(&mut given);
        } else {
            let mut opts = globals.clone();
            opts.extend(own);
            let mut unset = global_unset.clone();
            unset.extend(own_unset);
            let (name, line, file) = (s.name.clone(), s.line, s.file.as_str());
            jobs.push(Job { name, line, file, opts, unset, own: given });
        }
    }
    if jobs.is_empty() && errors.is_empty() {
        return Err(FioError::Syntax {
            file: file.into(),
            line: parsed.sections.last().map(|s| s.line).unwrap_or(1),
            message: "no job: add a section such as `[randread]` after [global]".into(),
        });
    }

    let mut notes = parsed.notes;
    let mut directory: Option<(String, usize)> = None;
    let mut filenames: BTreeMap<String, usize> = BTreeMap::new();
    let mut ids: BTreeMap<String, usize> = BTreeMap::new();
    // Jobs whose files' names come out the same share them, as fio's.
    name_format::share(&mut jobs, &mut errors, &mut notes);
    let groups = run_groups(&jobs, &mut errors);
    // The files earlier jobs lay out: a later job without `size` takes its file's size.
    let mut laid = file_size::Laid::default();
    let exits = exit::plan(&jobs, &groups, &mut errors, &mut notes);
    flow::check_groups(&jobs, &groups, &mut errors);
    steady::check_groups(&jobs, &groups, &mut errors);
    // Each job as a test of its own first; a group of several becomes one test below.
    let mut translated: Vec<Option<TestSpec>> = Vec::with_capacity(jobs.len());
    for job in &jobs {
        match job.str("directory") {
            Ok(Some((d, line))) => match &directory {
                Some((prev, _)) if prev != d => errors.push(job.err(
                    "directory",
                    line,
                    format!("`{d}` differs from `{prev}` of an earlier job; fsbench runs a job file in one directory (or give --dir)"),
                )),
                _ => directory = Some((d.to_string(), line)),
            },
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
        // A path is the one file of every job naming it, as fio's; a plain name several jobs
        // name is one file of the run (`run_file::share_plain_files`).
        if let Ok(Some((f, _))) = job.str("filename") {
            if !f.contains('/') {
                *filenames.entry(f.to_string()).or_default() += 1;
            }
        }
        // A test id is a file name: fio's job names may hold spaces, `%` or anything else.
        let base = test_id(&job.name);
        let n = ids.entry(base.clone()).or_default();
        *n += 1;
        let id = if *n == 1 { base } else { format!("{base}-{n}") };
        match translate_job(job, id, &laid) {
            Ok((test, job_notes)) => {
                laid.record(job, &test);
                notes.extend(job_notes.into_iter().map(|n| format!("[{}] {n}", job.name)));
                translated.push(Some(test));
            }
            Err(e) => {
                errors.extend(e);
                translated.push(None);
            }
        }
    }
    run_file::share_plain_files(&jobs, &mut translated, &filenames, &mut notes);
    sched::split_order(&jobs, &mut translated, &mut notes);
    let mut tests = Vec::new();
    let mut places = Vec::new();
    let mut unrun = Vec::new();
    // The test of each job that runs alone in its group (the only ones a log can be of).
    let mut solo: BTreeMap<usize, String> = BTreeMap::new();
    for (gi, g) in groups.iter().enumerate() {
        if let Some(by) = exits.never_runs(gi, g, &jobs, &mut notes) {
            let threads = |i: usize| translated[i].as_ref().map_or(1, |t| t.threads);
            unrun.extend(exit::unrun(g, &jobs, by, threads, &mut errors));
            continue;
        }
        // A job that did not translate has its errors already; the rest of its group is still
        // checked as a group, so the file's every problem is found in one pass.
        let (mut members, mut sub) = (Vec::new(), groups::Group::default());
        for (&i, &report) in g.jobs.iter().zip(&g.report) {
            if let Some(t) = translated[i].take() {
                members.push((i, t));
                sub.jobs.push(i);
                sub.report.push(report);
            }
        }
        if members.is_empty() {
            continue;
        }
        match one_group(&jobs, &sub, members, &mut notes) {
            Ok((mut test, mut p)) => {
                exits.apply(gi, &sub, &jobs, &mut test, &p, &mut notes);
                if let [only] = sub.jobs[..] {
                    solo.insert(only, test.id.clone());
                }
                tests.push(test);
                places.append(&mut p);
            }
            Err(e) => errors.extend(e),
        }
    }
    let logs = logs::plan(&jobs, &groups, &solo, &mut errors);
    let sample_window_ms = samples::plan(&jobs, &logs, &mut errors);
    if !errors.is_empty() {
        return Err(FioError::problems(file, errors));
    }
    if tests.iter().any(|t| t.notes.iter().any(|n| n.contains("filename-reuse"))) {
        notes.push(options::difference("filename-reuse"));
    }
    let spec = SuiteSpec {
        suite: SuiteMeta {
            name: Some(suite_name.to_string()),
            description: Some(format!("fio job file {file}")),
        },
        tests,
    };
    Ok(Translation {
        file: file.into(),
        spec,
        notes,
        directory: directory.map(|(d, _)| d),
        jobs: places,
        unrun,
        plain_files: filenames.into_keys().collect(),
        logs,
        sample_window_ms,
        global_options,
    })
}

/// A test id for fio's job `name`: letters, digits, `.`, `_` and `-` kept, anything else
/// (a space, `%`, ...) as `_`, at most [`crate::workload::limits::MAX_ID_LEN`] characters.
fn test_id(name: &str) -> String {
    let id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .take(crate::workload::limits::MAX_ID_LEN - 6)
        .collect();
    if id.is_empty() {
        "job".into()
    } else {
        id
    }
}

/// An expression's value as a whole number of 0 or more.
fn whole(v: &str, x: Result<f64, String>) -> Result<u64, String> {
    match x {
        Ok(x) if x.is_finite() && (0.0..1.8e19).contains(&x) => Ok(x as u64),
        Ok(x) => Err(format!("`{v}` is {x}, not a whole number of 0 or more")),
        Err(m) => Err(format!("`{v}`: {m}")),
    }
}

/// Directions and order of a job's operations.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dir {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandMix,
    /// `rw`/`readwrite`: sequential reads and writes, each direction drawn by `rwmixread` and
    /// each with its own position, as fio's.
    SeqMix,
}

impl Dir {
    fn random(self) -> bool {
        matches!(self, Dir::RandRead | Dir::RandWrite | Dir::RandMix)
    }

    fn reads(self) -> bool {
        matches!(self, Dir::Read | Dir::RandRead | Dir::RandMix | Dir::SeqMix)
    }

    fn writes(self) -> bool {
        matches!(self, Dir::Write | Dir::RandWrite | Dir::RandMix | Dir::SeqMix)
    }

    /// The reads of the same order (`verify_only`).
    fn as_read(self) -> Dir {
        if self.random() {
            Dir::RandRead
        } else {
            Dir::Read
        }
    }

    /// The timed phase's name: fio's `rw` word.
    fn phase_name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::RandRead => "randread",
            Dir::RandWrite => "randwrite",
            Dir::RandMix => "randrw",
            Dir::SeqMix => "rw",
        }
    }
}

/// One job as one test. Each option group is read by its own function, all of them even
/// after one fails, so a job with several mistakes gets them all; the notes collect where
/// fsbench's meaning differs from fio's.
fn translate_job(
    job: &Job,
    id: String,
    laid: &file_size::Laid,
) -> Result<(TestSpec, Vec<String>), Vec<FioError>> {
    let mut notes = Vec::new();
    let mut errs = Vec::new();
    // Each group is read even when an earlier one failed, so the job's every problem is found;
    // a group that needs another's result is skipped when that one failed.
    macro_rules! keep {
        ($e:expr) => {
            match $e {
                Ok(v) => Some(v),
                Err(e) => {
                    errs.push(e);
                    None
                }
            }
        };
    }
    if let Some(op) = fileops::engine_of(job) {
        return fileops::translate(job, op, id);
    }
    let engine = keep!(engine(job, &mut notes));
    let check = keep!(verify::verify(job, named_in(job), &mut notes));
    // `verify_only` reads what the job would write, in its order, and writes nothing.
    let rw =
        keep!(direction(job)).map(|d| if check.is_some_and(|c| c.only) { d.as_read() } else { d });
    let dir = rw.unwrap_or(Dir::Read);
    let blocks = keep!(block_sizes(job, dir, &mut notes));
    // The smallest block of the job's directions: a size taken from a file is rounded to it.
    let bs = blocks.as_ref().map(|b| match (dir.reads(), dir.writes()) {
        (true, false) => b.read,
        (false, true) => b.write,
        _ => b.read.min(b.write),
    });
    let files = keep!(files(job, laid, bs, engine.is_some()));
    // fio's names of the job's files (`filename_format`); clones on the first's names do
    // nothing in fio.
    let file_names = keep!(name_format::template(job, &mut notes)).flatten();
    let files = match (files, &file_names) {
        (Some(mut f), Some(n)) => {
            let t = &n.template;
            f.threads = keep!(name_format::threads(job, t, (f.threads, f.nrfiles), &mut notes))
                .unwrap_or(f.threads);
            Some(f)
        }
        (f, _) => f,
    };
    let own_names = file_names.filter(|n| n.own).map(|n| n.template);
    let flags = keep!(open_flags(job, dir));
    let named_size = files.as_ref().and_then(|f| Some((f.named.as_deref()?, f.file_bytes)));
    let preallocate = keep!(layout::preallocate(job, dir, named_size, &mut notes));
    let sync = keep!(syncs(job, dir, &mut notes));
    let amount = match &files {
        Some(f) => keep!(amount(job, f, blocks.as_ref(), dir, &mut notes)),
        None => None,
    };
    let random_map = match &blocks {
        Some(b) => keep!(offsets_and_checks(job, dir, b, &mut notes)),
        None => None,
    };
    let skew = match (&blocks, &files) {
        (Some(b), Some(f)) => {
            keep!(distribution::random_distribution(job, dir, b, f, &mut notes)).flatten()
        }
        _ => None,
    };
    let modifier = keep!(sequence::modifier(job, dir));
    let pattern = match (&blocks, modifier) {
        (Some(b), Some(m)) => {
            keep!(pattern(job, dir, b, &mut notes)).map(|p| sequence::apply(m, p))
        }
        _ => None,
    };
    let texts = keep!(names(job));
    let keys = match &engine {
        Some(e) => keep!(engine_keys(job, e)),
        None => None,
    };
    let (
        Some(rw),
        Some(engine),
        Some(files),
        Some((open, direct)),
        Some(sync),
        Some(amount),
        Some(pattern),
        Some((name, description)),
        Some(engine_keys),
    ) = (rw, engine, files, flags, sync, amount, pattern, texts, keys)
    else {
        return Err(errs);
    };
    if !errs.is_empty() {
        return Err(errs);
    }
    let check = check.unwrap_or_default();
    let fill = layout::fill_device(job, rw, &files, check.on, &mut notes).map_err(|e| vec![e])?;
    layout::create_serialize(job, rw, &files, &mut notes).map_err(|e| vec![e])?;
    if check.only {
        verify::only_file(job, files.named.as_deref(), files.file_bytes).map_err(|e| vec![e])?;
    }
    // fio keeps no random map with a skewed distribution.
    let random_map = random_map.unwrap_or(false) && skew.is_none();
    let mut amount = amount;
    // fio does not lay out a file it fills: it starts empty.
    let preallocate = match fill {
        layout::Fill::No => preallocate.flatten(),
        layout::Fill::UntilFull(_) | layout::Fill::Capped => None,
    };
    if let layout::Fill::UntilFull(fill) = fill {
        amount = fill;
    }
    if let (Some(m), Some(b)) = (modifier, &blocks) {
        sequence::fio_amount(job, m, rw, b, &files, &mut amount).map_err(|e| vec![e])?;
    }
    let mut phases =
        phases(job, rw, direct, open, pattern, amount, sync, &mut notes).map_err(|e| vec![e])?;
    if let Some(timed) = phases.last_mut() {
        pacing(job, rw, timed, &mut notes).map_err(|e| vec![e])?;
        flow::flow(job, timed, &mut notes).map_err(|e| vec![e])?;
        unlink_loop::unlink_each_loop(job, rw, &files, &engine, timed, &mut notes)
            .map_err(|e| vec![e])?;
        let one_size = blocks.as_ref().is_some_and(|b| {
            let used: Vec<&SizeDist> = [(rw.reads(), &b.read_dist), (rw.writes(), &b.write_dist)]
                .into_iter()
                .filter_map(|(on, d)| on.then_some(d))
                .collect();
            matches!(used[..], [SizeDist::Fixed(_)])
                || matches!(used[..], [SizeDist::Fixed(r), SizeDist::Fixed(w)] if r == w)
        });
        steady::steady(job, one_size, files.threads, timed, &mut notes).map_err(|e| vec![e])?;
    }
    sched::sched(job, &mut phases, &mut notes).map_err(|e| vec![e])?;
    percentage::percentage_random(job, rw, &mut phases, &mut notes).map_err(|e| vec![e])?;
    misc::content(job, &mut notes).map_err(|e| vec![e])?;
    if let Some(b) = &blocks {
        direct::note(direct, rw, b, &mut notes);
    }
    unaligned::check_direct(job, direct).map_err(|e| vec![e])?;
    misc::tiobench_threads(job, &mut notes).map_err(|e| vec![e])?;
    let service = if files.nrfiles > 1 {
        nrfiles::check(job, files.nrfiles, &engine).map_err(|e| vec![e])?
    } else {
        misc::one_file_options(job, &mut notes).map_err(|e| vec![e])?;
        None
    };
    let test = TestSpec {
        id,
        name,
        description,
        // Stored with the results, so a report still says where the run differs from fio's.
        notes: notes.iter().map(|n| format!("fio job file: {n}")).collect(),
        threads: files.threads,
        engine: (engine.name != "psync").then(|| engine.name.to_string()),
        iodepth: engine.iodepth,
        direct: direct.then_some(true),
        min_time: None,
        random_map: random_map.then_some(true),
        verify: check.on.then_some(true),
        seed: job.int("randseed").map_err(|e| vec![e])?.map(|(s, _)| s),
        random_distribution: skew,
        engine_keys,
        figure: None,
        file: Some(FileSpec {
            size: SizeExpr::Bytes(files.file_bytes),
            shared: files.shared,
            // verify_only's file is one an earlier job left at its size (checked by
            // `only_file`): a read job's file, laid out only when absent or short.
            prefill: rw.reads(),
            path: files.named.as_ref().map(|p| p.to_string_lossy().into_owned()),
            unlink: (files.named.is_some() && files.unlink).then_some(true),
            whole: (files.shared && files.threads > 1).then_some(true),
            offset: (files.offset > 0).then_some(Bytes(files.offset)),
            offset_increment: (files.increment > 0).then_some(Bytes(files.increment)),
            // Set for a plain filename other jobs name too (`run_file::share_plain_files`).
            run_file: None,
            take_size: files.take.map(Bytes),
            verify_writes: None,
            preallocate: preallocate.map(|p| p.name().to_string()),
            per_thread: (files.nrfiles > 1).then_some(files.nrfiles),
            service,
            name_format: own_names,
        }),
        fileset: None,
        phases,
        roles: Vec::new(),
        exitall: None,
    };
    Ok((test, notes))
}

/// `name` and `description` (defaults: the section name, and where the job comes from).
fn names(job: &Job) -> Result<(String, String), FioError> {
    let name = job.str("name")?.map(|v| v.0.to_string()).unwrap_or_else(|| job.name.clone());
    let description = job
        .str("description")?
        .map(|v| v.0.to_string())
        .unwrap_or_else(|| format!("fio job [{}] of {} (line {})", job.name, job.file, job.line));
    Ok((name, description))
}

/// The io_uring keys of the job.
fn engine_keys(job: &Job, engine: &Engine) -> Result<EngineKeys, FioError> {
    if engine.name == "libaio" {
        libaio::batch_options(job)?;
        return Ok(EngineKeys::default());
    }
    Ok(uring_keys([
        (&uring::IODEPTH_BATCH, uring_int(job, "iodepth_batch")?.map(OptValue::Int)),
        (
            &uring::IODEPTH_BATCH_COMPLETE,
            uring_int(job, "iodepth_batch_complete")?.map(OptValue::Int),
        ),
        (&uring::SQPOLL, engine.sqpoll.map(OptValue::Bool)),
        (&uring::IOPOLL, job.bool("hipri")?.filter(|b| *b).map(OptValue::Bool)),
        (&uring::FIXEDBUFS, job.bool("fixedbufs")?.filter(|b| *b).map(OptValue::Bool)),
        (&uring::REGISTERFILES, engine.registerfiles.map(OptValue::Bool)),
    ]))
}

/// `rw` (default `read`).
fn direction(job: &Job) -> Result<Dir, FioError> {
    let Some((v, line)) = job.str("rw")? else {
        return Ok(Dir::Read);
    };
    // `WORD:N`: the offset modifier is read by [`sequence::modifier`].
    let word = v.split_once(':').map_or(v, |(w, _)| w).trim();
    Ok(match word {
        "read" => Dir::Read,
        "write" => Dir::Write,
        "randread" => Dir::RandRead,
        "randwrite" => Dir::RandWrite,
        "randrw" => Dir::RandMix,
        "rw" | "readwrite" => Dir::SeqMix,
        _ => return Err(job.err("rw", line, format!("`{v}` is not supported; use read, write, randread, randwrite, randrw or rw (readwrite), each with an optional `:N`"))),
    })
}

/// Block sizes and alignments of reads and writes.
struct Blocks {
    /// The smallest read and write sizes (the only ones, but with `bssplit`).
    read: u64,
    write: u64,
    /// The sizes of reads and writes: fixed, or a `bssplit`.
    read_dist: SizeDist,
    write_dist: SizeDist,
    read_align: u64,
    write_align: u64,
}

/// `bs`, or a `bsrange` (fio's law over its sizes), or a `bssplit`; then `blockalign`.
fn block_sizes(job: &Job, rw: Dir, notes: &mut Vec<String>) -> Result<Blocks, FioError> {
    let given: Vec<&str> =
        ["bs", "bsrange", "bssplit"].into_iter().filter(|k| job.get(k).is_some()).collect();
    if given.len() > 1 {
        let k = given[1];
        return Err(job.err(
            k,
            job.line(k),
            format!("give one of bs, bsrange and bssplit (this job has {})", given.join(" and ")),
        ));
    }
    let fixed = |(r, w): (u64, u64)| (SizeDist::Fixed(r), SizeDist::Fixed(w));
    let (read_dist, write_dist) = if let Some((v, line)) = job.str("bs")? {
        fixed(split_rw(v, 4096, parse_size_expr).map_err(|m| job.err("bs", line, m))?)
    } else if let Some((v, line)) = job.str("bsrange")? {
        split_rw(v, SizeDist::Fixed(4096), size_range).map_err(|m| job.err("bsrange", line, m))?
    } else if let Some((v, line)) = job.str("bssplit")? {
        split_rw(v, SizeDist::Fixed(4096), size_split).map_err(|m| job.err("bssplit", line, m))?
    } else {
        fixed((4096, 4096))
    };
    // fio rounds drawn sizes down to a multiple of the smallest, unless bs_unaligned.
    let (read_dist, write_dist) =
        unaligned::sizes(job, rw, given.first().copied(), (read_dist, write_dist), notes)?;
    // fio aligns random offsets to the smallest size (blockalign's default, min_bs).
    let (read, write) = (read_dist.min(), write_dist.min());
    let bs_opt = given.first().copied().unwrap_or("bs");
    if (rw.reads() && read == 0) || (rw.writes() && write == 0) {
        return Err(job.err(bs_opt, job.line(bs_opt), "block size 0"));
    }
    let (read_align, write_align) = match job.str("blockalign")? {
        None => (read, write),
        Some((v, line)) => split_rw(v, 0, parse_size_expr)
            .map(|(r, w)| (if r == 0 { read } else { r }, if w == 0 { write } else { w }))
            .map_err(|m| job.err("blockalign", line, m))?,
    };
    if !rw.random() && job.get("blockalign").is_some() {
        notes.push("blockalign has no effect on sequential I/O (as in fio)".into());
    }
    Ok(Blocks { read, write, read_dist, write_dist, read_align, write_align })
}

/// The job's threads and its file.
struct Files {
    threads: u32,
    /// One file the threads share (`filename`), else one per thread.
    shared: bool,
    file_bytes: u64,
    /// `size`, the default of the bytes moved.
    size: Option<u64>,
    /// `io_size`, the bytes moved.
    io_size: Option<u64>,
    /// `filename` as a path: the job's own file, used where it is (absolute).
    named: Option<PathBuf>,
    /// `unlink=1`: remove a named file after the job (fsbench removes its own files anyway).
    unlink: bool,
    /// `offset` and `offset_increment`: thread k's region starts at offset + k * increment.
    offset: u64,
    increment: u64,
    /// Without `size` on a plain filename an earlier job fills: the size is the file's when
    /// the test starts, rounded down to this block (`file_bytes` is then nominal).
    take: Option<u64>,
    /// `nrfiles`: files of each thread (each `file_bytes`), 1 but for [`nrfiles`]'s jobs.
    nrfiles: u32,
}

/// `numjobs`, `nrfiles`, `offset`, `filename` and the sizes; without `size`, the size of the
/// file as it is or as an earlier job lays it out (`laid`), rounded down to `bs`
/// ([`file_size`]). `engine_ok`: fsbench takes the job's engine; an engine it refuses (whose
/// error is reported) has its own size rules in fio (a device's, a server's, none for an
/// engine without files), so a missing size is not reported beside it.
fn files(
    job: &Job,
    laid: &file_size::Laid,
    bs: Option<u64>,
    engine_ok: bool,
) -> Result<Files, FioError> {
    let threads = match job.int("numjobs")? {
        None => 1,
        Some((n, _)) if (1..=1024).contains(&n) => n as u32,
        Some((n, line)) => {
            return Err(job.err("numjobs", line, format!("{n}: fsbench runs 1 to 1024 threads")))
        }
    };
    let nrfiles = nrfiles::count(job)?;
    let (offset, increment) = sequence::offsets(job)?;
    let mut named = None;
    let shared = match job.str("filename")? {
        None => false,
        Some((f, line)) => {
            if f.contains(':') {
                return Err(job.err("filename", line, format!("`{f}`: fio's list of files (`a:b`) or a device; fsbench runs a job on one file: name one regular file")));
            }
            if f.contains('/') {
                named = Some(named_path(job, f, line)?);
            }
            true
        }
    };
    // With numjobs on one file each fio thread covers the whole file from its start, and so
    // does each of fsbench's (`file.whole`, set by `translate_job`).
    let size = job.size("size")?.map(|v| v.0);
    let filesize = job.size("filesize")?.map(|v| v.0);
    let io_size = job.size("io_size")?.map(|v| v.0);
    // fio's files of nrfiles > 1: size/nrfiles each, or filesize; the job moves size, at most
    // the files' sum (their sum without size).
    let (size, filesize) = nrfiles::sizes(job, nrfiles, size, filesize)?;
    // A plain filename an earlier job fills: its size is the fill's, taken when the job starts.
    let take = match filesize.or(size) {
        None if engine_ok && file_size::taken_at_run(job, named.as_deref(), laid) => {
            run_file::taken_size(job, threads, offset, increment, bs)?
        }
        _ => None,
    };
    let file_bytes = match filesize.or(size) {
        _ if take.is_some() => bs.unwrap_or(4096),
        // fio's fill_device sets the size "to something really large" and ignores the job's:
        // the file's nominal size is one block (its footprint), and the fill writes past it.
        _ if layout::fills(job) => bs.unwrap_or(4096),
        Some(b) => b,
        None if !engine_ok => bs.unwrap_or(4096),
        // Written `${SIZE}` with SIZE unset: that error is reported; no "no size" besides it.
        None if ["size", "filesize"].iter().any(|k| job.unset.contains(k)) => bs.unwrap_or(4096),
        None => file_size::from_file(job, named.as_deref(), laid, offset, increment, threads, bs)?,
    };
    if file_bytes == 0 {
        return Err(job.job_err("size 0: give the file a size"));
    }
    let unlink = job.bool("unlink")?.unwrap_or(false);
    Ok(Files {
        threads,
        shared,
        file_bytes,
        size,
        io_size,
        named,
        unlink,
        offset,
        increment,
        take,
        nrfiles,
    })
}

/// Whether `filename` names a file by a path (see [`named_path`]), as [`files`] decides.
fn named_in(job: &Job) -> bool {
    matches!(job.str("filename"), Ok(Some((f, _))) if f.contains('/') && !f.contains(':'))
}

/// `filename` naming a path (absolute, or relative to `directory`, else to the current
/// directory, as fio): the file must be a regular file or not exist yet, in a directory that
/// exists; a symlink, FIFO, directory, socket or device is refused here (the engine checks it
/// again, and opens it with `O_NOFOLLOW`). A block device stays refused: fsbench writes only
/// to devices it made.
fn named_path(job: &Job, f: &str, line: usize) -> Result<PathBuf, FioError> {
    use std::path::Component;
    let refuse = |why: String| job.err("filename", line, format!("`{f}`: {why}"));
    let given = Path::new(f);
    if given.components().any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        || given.file_name().is_none()
    {
        return Err(refuse("name the file by a path without `.` or `..`".into()));
    }
    // Never a file among the kernel's and the devices' own (fio would make one there).
    for top in ["/dev", "/proc", "/sys"] {
        if given.starts_with(top) {
            return Err(refuse(format!("fsbench makes no file under {top} and writes only to block devices it made (fsbench testbed); name a regular file elsewhere")));
        }
    }
    let path = if given.is_absolute() {
        given.to_path_buf()
    } else {
        let base = match job.str("directory")? {
            Some((d, _)) => PathBuf::from(d),
            None => std::env::current_dir()
                .map_err(|e| refuse(format!("reading the current directory: {e}")))?,
        };
        let base = if base.is_absolute() {
            base
        } else {
            std::env::current_dir()
                .map_err(|e| refuse(format!("reading the current directory: {e}")))?
                .join(base)
        };
        base.join(given)
    };
    // A relative name is said with where it led.
    let at = if given.is_absolute() { String::new() } else { format!("{} ", path.display()) };
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => Err(refuse(format!(
            "{at}is a symbolic link: fsbench opens a file the job names without following a link; name the file itself"
        ))),
        Ok(m) if std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()) => Err(refuse(format!(
            "{at}is a block device: fsbench writes only to devices it made (fsbench testbed); name a regular file, or run on a testbed with --fs"
        ))),
        Ok(m) if !m.is_file() => Err(refuse(format!(
            "{at}is {}: fsbench uses a file the job names only if it is a regular file",
            crate::sys::regular::kind(&m.file_type())
        ))),
        Ok(_) => Ok(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = path.parent().unwrap_or(Path::new("/"));
            if std::fs::metadata(parent).is_ok_and(|m| m.is_dir()) {
                Ok(path)
            } else {
                Err(refuse(format!(
                    "{}: no such directory (fio would not create it either)",
                    parent.display()
                )))
            }
        }
        Err(e) => Err(refuse(format!("{}: {e}", path.display()))),
    }
}

/// Whether the job is O_DIRECT: `direct`, or its inverse `buffered` (`buffered=0` is
/// `direct=1`); both given, the later line counts, as in fio (each sets the same flag).
fn is_direct(job: &Job) -> Result<bool, FioError> {
    match (job.bool("direct")?, job.bool("buffered")?) {
        (Some(_), Some(b)) if job.line("buffered") > job.line("direct") => Ok(!b),
        (Some(d), _) => Ok(d),
        (None, Some(b)) => Ok(!b),
        (None, None) => Ok(false),
    }
}

/// `direct` (or `buffered`) and `sync` as open flags, and `create` for a job that only writes;
/// whether the job is O_DIRECT.
fn open_flags(job: &Job, rw: Dir) -> Result<(Vec<String>, bool), FioError> {
    let mut open = Vec::new();
    let direct = is_direct(job)?;
    match job.str("sync")? {
        None => {}
        Some(("0" | "none", _)) => {}
        Some(("1" | "sync", _)) => open.push("sync".into()),
        Some(("dsync", _)) => open.push("dsync".into()),
        Some((v, line)) => {
            return Err(job.err(
                "sync",
                line,
                format!("`{v}`: use 0/none, 1/sync (O_SYNC) or dsync (O_DSYNC)"),
            ))
        }
    }
    // A job that reads gets a prefilled file (see `translate_job`); a write job's file is laid
    // out as fio's `fallocate` says (`layout::preallocate`), and an existing named file is
    // written into, as fio's (O_CREAT, no O_TRUNC).
    if !rw.reads() {
        open.push("create".into());
    }
    Ok((open, direct))
}

/// The engine and what it is given.
struct Engine {
    /// fsbench's engine.
    name: &'static str,
    /// The queue depth, when above 1.
    iodepth: Option<u32>,
    sqpoll: Option<bool>,
    /// Set with io_uring only.
    registerfiles: Option<bool>,
}

/// What a null-engine job measures: each tool's own cost per op, not I/O.
const NULL_COST: &str = "ioengine=null does no I/O, in fio and fsbench: the job's IOPS and latencies are each tool's own cost per op, not comparable with fio's (on a 2-core VM fsbench's loop did about 1.8x fio's IOPS, and 2.5x to 3x with random_distribution=zipf, whose draw costs fio more; fsbench's null-op latency includes its offset draw)";

/// `ioengine`, `iodepth` and io_uring's own options.
fn engine(job: &Job, notes: &mut Vec<String>) -> Result<Engine, FioError> {
    let name = match job.str("ioengine")? {
        None => "psync",
        Some(("psync", _)) => "psync",
        Some(("sync", _)) => {
            notes.push(options::difference("sync-as-psync"));
            "psync"
        }
        Some(("pvsync", _)) => {
            notes.push(options::difference("pvsync-as-psync"));
            "psync"
        }
        Some(("io_uring", _)) => "io_uring",
        Some(("mmap", _)) => "mmap",
        // fsbench's null engine: no I/O, as fio's (the job measures the harness).
        Some(("null", _)) => {
            notes.push(NULL_COST.into());
            "null"
        }
        // fsbench's own libaio engine, at the job's depth, buffered or direct: the same system
        // calls as fio's (on a buffered file the kernel does each I/O inside io_submit, in both).
        Some(("libaio", _)) => "libaio",
        Some((e, line)) => {
            return Err(job.err(
                "ioengine",
                line,
                format!(
                "`{e}` is not supported; use psync, sync, pvsync, io_uring, libaio, mmap, null, or fio's file operations filecreate, filestat, filedelete, dircreate, dirstat, dirdelete"
            ),
            ))
        }
    };
    libaio::userspace_reap(job, name)?;
    let iodepth = iodepth(job, name)?;
    let (sqpoll, registerfiles) = uring_options(job, name, notes)?;
    Ok(Engine { name, iodepth, sqpoll, registerfiles })
}

/// `iodepth`: above 1 only with a queueing engine.
fn iodepth(job: &Job, engine: &str) -> Result<Option<u32>, FioError> {
    let Some((d, line)) = job.int("iodepth")? else {
        return Ok(None);
    };
    let mut iodepth = None;
    if d > 1 {
        iodepth = Some(
            u32::try_from(d).map_err(|_| job.err("iodepth", line, format!("{d} is too large")))?,
        );
    }
    if d == 0 {
        return Err(job.err("iodepth", line, "0: the queue depth is at least 1"));
    }
    if d > 1 && engine == "psync" {
        return Err(job.err("iodepth", line, format!("{d} with {}: a synchronous engine has one I/O in flight (fio would quietly run at depth 1); pick ioengine=io_uring or libaio for a queue depth", job.str("ioengine")?.map(|v| format!("ioengine={}", v.0)).unwrap_or_else(|| "no ioengine= (psync, fio's default)".into()))));
    }
    Ok(iodepth)
}

/// io_uring's own options: fio knows them only with ioengine=io_uring (the batch options are
/// fio's, for every engine that queues). Returns `sqpoll` and `registerfiles`.
fn uring_options(
    job: &Job,
    engine: &str,
    notes: &mut Vec<String>,
) -> Result<(Option<bool>, Option<bool>), FioError> {
    let uring_opts = ["sqthread_poll", "hipri", "fixedbufs", "registerfiles"];
    if engine != "io_uring" {
        if let Some(k) = uring_opts.into_iter().find(|k| job.get(k).is_some()) {
            let e = job.str("ioengine")?.map(|v| v.0).unwrap_or("psync");
            return Err(job.err(k, job.line(k), format!("an option of ioengine=io_uring, and this job's ioengine is {e}: set ioengine=io_uring or remove it")));
        }
    }
    let sqpoll = job.bool("sqthread_poll")?.filter(|b| *b);
    // fio registers the file only when asked (registerfiles=1) or with sqthread_poll, which
    // needs it; fsbench's default is to register, so the translation always says which.
    let registerfiles = (engine == "io_uring")
        .then_some(job.bool("registerfiles")?.unwrap_or(false) || sqpoll.is_some());
    if job.bool("registerfiles")? == Some(false) && sqpoll.is_some() {
        notes.push(
            "registerfiles=0 with sqthread_poll: fio registers the file anyway, so does fsbench"
                .into(),
        );
    }
    Ok((sqpoll, registerfiles))
}

/// `fsync`, `fdatasync`, `end_fsync` and `fsync_on_close`.
fn syncs(job: &Job, rw: Dir, notes: &mut Vec<String>) -> Result<SyncSpec, FioError> {
    let every_fsync = job.int("fsync")?.filter(|(n, _)| *n > 0);
    let every_fdatasync = job.int("fdatasync")?.filter(|(n, _)| *n > 0);
    let mut sync = SyncSpec::default();
    match (every_fsync, every_fdatasync) {
        (Some(_), Some((_, line))) => {
            return Err(job.err("fdatasync", line, "give one of fsync=N and fdatasync=N"))
        }
        (Some((n, _)), None) => sync.every_ops = Some(n),
        (None, Some((n, _))) => {
            sync.every_ops = Some(n);
            sync.call = Some("fdatasync".into());
        }
        (None, None) => {}
    }
    // fio issues the sync when the job asks for its next op: none after the last write.
    sync.before_next = sync.every_ops.map(|_| true);
    if sync.every_ops.is_some() && !rw.writes() {
        notes.push("fsync/fdatasync=N has no effect without writes (as in fio)".into());
        sync.every_ops = None;
        sync.call = None;
        sync.before_next = None;
    }
    let end_fsync = job.bool("end_fsync")?.unwrap_or(false);
    let on_close = job.bool("fsync_on_close")?.unwrap_or(false);
    if (end_fsync || on_close) && rw.writes() {
        sync.at_end = Some("fsync".into());
        if end_fsync && on_close {
            notes.push(options::difference("fsync-once"));
        }
    }
    Ok(sync)
}

/// `runtime` with `time_based`, or the bytes of `io_size` (else `size`, else the file) times
/// `loops`, capped by `runtime` without `time_based` (whichever comes first, as fio) and by
/// `number_ios` times `loops` (as an op count, with one block size; fio 3.33's
/// `exceeds_number_ios`). With `time_based`, `loops` and `number_ios` have no effect: fio's
/// job loop runs on until the runtime.
fn amount(
    job: &Job,
    files: &Files,
    b: Option<&Blocks>,
    rw: Dir,
    notes: &mut Vec<String>,
) -> Result<AmountSpec, FioError> {
    let time_based = job.bool("time_based")?.unwrap_or(false);
    let runtime = job.seconds("runtime")?.filter(|(s, _)| *s > 0.0);
    let loops = match job.int("loops")? {
        None => 1,
        Some((0, line)) => return Err(job.err("loops", line, "0: a job runs at least once")),
        Some((n, _)) => n,
    };
    let number_ios = job.int("number_ios")?.filter(|(n, _)| *n > 0);
    // One block size for every op: the size that turns bytes into ops.
    let one = |d: SizeDist| match d {
        SizeDist::Fixed(n) => Some(n),
        _ => None,
    };
    let bs = b.and_then(|b| match rw {
        Dir::Read | Dir::RandRead => one(b.read_dist),
        Dir::Write | Dir::RandWrite => one(b.write_dist),
        Dir::RandMix | Dir::SeqMix => one(b.read_dist).filter(|_| b.read_dist == b.write_dist),
    });
    let mut a = match (time_based, runtime) {
        (true, Some((s, _))) => {
            if loops > 1 {
                notes.push(format!("loops={loops} has no effect with time_based (as in fio: the job runs for runtime)"));
            }
            AmountSpec { seconds: Some(s), ..Default::default() }
        }
        (true, None) => {
            return Err(job.err(
                "time_based",
                job.line("time_based"),
                "time_based needs runtime=SECONDS (fsbench will not run without end)",
            ))
        }
        // The file's size, taken when the job starts: one pass over it per loop.
        (false, runtime) if files.take.is_some() && files.io_size.is_none() => AmountSpec {
            passes: Some(u32::try_from(loops).unwrap_or(u32::MAX)),
            seconds: runtime.map(|(s, _)| s),
            ..Default::default()
        },
        (false, runtime) => {
            let once = files.io_size.or(files.size).unwrap_or(files.file_bytes);
            let bytes = once.checked_mul(loops).ok_or_else(|| {
                job.err(
                    "loops",
                    job.line("loops"),
                    format!("{loops} times {once} bytes is too many"),
                )
            })?;
            AmountSpec {
                bytes: Some(SizeExpr::Bytes(bytes)),
                // Without time_based, runtime caps the size: whichever comes first.
                seconds: runtime.map(|(s, _)| s),
                ..Default::default()
            }
        }
    };
    match number_ios {
        Some((n, _)) if time_based => notes.push(format!(
            "number_ios={n} has no effect with time_based (as in fio 3.33: the job runs for runtime)"
        )),
        Some((n, line)) => {
            let Some(bs) = bs else {
                return Err(job.err("number_ios", line, "with reads and writes of different sizes: fsbench counts ops of one size; give bs one size"));
            };
            // fio's cap is number_ios for each loop: number_ios times loops in all.
            let cap = n.saturating_mul(loops);
            match a.bytes {
                // The size comes first: nothing to cap.
                Some(SizeExpr::Bytes(bytes)) if bytes.div_ceil(bs) <= cap => {}
                _ => {
                    a.bytes = None;
                    a.ops = Some(cap);
                }
            }
        }
        None => {}
    }
    Ok(a)
}

/// The random map (`norandommap`, `random_generator`), `randrepeat` (a note), and the options that only need to be well-formed (`thread`, `group_reporting`).
/// Returns whether the test gets a random map.
fn offsets_and_checks(
    job: &Job,
    rw: Dir,
    b: &Blocks,
    notes: &mut Vec<String>,
) -> Result<bool, FioError> {
    let lfsr = match job.str("random_generator")? {
        None | Some(("tausworthe" | "tausworthe64", _)) => false,
        Some(("lfsr", _)) => true,
        Some((v, line)) => {
            return Err(job.err(
                "random_generator",
                line,
                format!("`{v}`: use tausworthe, tausworthe64 or lfsr"),
            ))
        }
    };
    let norandommap = job.bool("norandommap")?.unwrap_or(false);
    // fio's LFSR visits every block once per cycle whether or not a map is kept.
    let mut random_map = rw.random() && (lfsr || !norandommap);
    if lfsr && norandommap && rw.random() {
        notes.push("random_generator=lfsr with norandommap: fio's LFSR still touches each block once per pass, and so does fsbench (random_map)".into());
    }
    // fsbench's map has one slot size; fio's map counts blocks of the smallest size and a
    // larger op marks several.
    let mixed = rw == Dir::RandMix && (b.read, b.read_align) != (b.write, b.write_align);
    let drawn = |d: SizeDist| !matches!(d, SizeDist::Fixed(_));
    let split = (rw.reads() && drawn(b.read_dist)) || (rw.writes() && drawn(b.write_dist));
    if random_map && ((mixed && read_share(job)? % 100 != 0) || split) {
        random_map = false;
        notes.push(options::difference("random-map"));
    }
    if let Some(false) = job.bool("randrepeat")? {
        notes.push(options::difference("randrepeat"));
    }
    for k in ["thread", "group_reporting", "clat_percentiles", "lat_percentiles"] {
        job.bool(k)?;
    }
    // fsbench's buffers are page-aligned: fio's with mem_align at a multiple of the page.
    if let Some((n, line)) = job.size("mem_align")? {
        if n % 4096 != 0 {
            return Err(job.err("mem_align", line, format!("{n}: fsbench's buffers are page-aligned; fio's would start {n} bytes past a page (give 0 or a multiple of 4096)")));
        }
    }
    percentile_list(job)?;
    let mut off = Vec::new();
    for k in ["gtod_reduce", "disable_lat", "disable_clat", "disable_slat"] {
        if job.bool(k)? == Some(true) {
            off.push(k);
        }
    }
    if !off.is_empty() {
        notes.push(format!("{}: {}", off.join(", "), options::difference("latency-reported")));
    }
    Ok(random_map)
}

/// The pattern: one read or write entry; randrw as one read entry whose ops are writes with
/// fio's probability (`write_percent`), or, when reads and writes differ in size, a fixed
/// interleave by `rwmixread` (noted).
fn pattern(
    job: &Job,
    rw: Dir,
    b: &Blocks,
    notes: &mut Vec<String>,
) -> Result<Vec<OpSpec>, FioError> {
    let random = rw.random();
    let entry = |op: &str, bs: SizeDist, align: u64, repeat: u32| OpSpec {
        op: Some(op.into()),
        pick: None,
        fsync: None,
        fsync_dir: None,
        choose: None,
        weight: None,
        size: Some(size_spec(bs)),
        offset: Some(if random { "random" } else { "sequential" }.into()),
        align: if random { Some(Bytes(align)) } else { None },
        repeat: if repeat > 1 { Some(repeat) } else { None },
        write_percent: None,
        skip: None,
    };
    let mix_given = job.get("rwmixread").is_some() || job.get("rwmixwrite").is_some();
    let pattern = match rw {
        Dir::Read | Dir::RandRead => vec![entry("read", b.read_dist, b.read_align, 1)],
        Dir::Write | Dir::RandWrite => vec![entry("write", b.write_dist, b.write_align, 1)],
        // Reads and writes of one size and alignment: one entry whose each op is a write with
        // fio's probability, drawn per op as fio draws it.
        Dir::RandMix if (b.read_dist, b.read_align) == (b.write_dist, b.write_align) => {
            let read_pct = read_share(job)?;
            let (op, write_percent) = match read_pct {
                0 => ("write", None),
                100 => ("read", None),
                r => ("read", Some((100 - r) as u8)),
            };
            vec![OpSpec { write_percent, ..entry(op, b.read_dist, b.read_align, 1) }]
        }
        Dir::SeqMix => sequence::mixed(job, b, entry("read", b.read_dist, 1, 1))?,
        Dir::RandMix => {
            let read_pct = read_share(job)?;
            let g = gcd(read_pct, 100 - read_pct).max(1);
            let (nr, nw) = ((read_pct / g) as u32, ((100 - read_pct) / g) as u32);
            let mut p = Vec::new();
            if nr > 0 {
                p.push(entry("read", b.read_dist, b.read_align, nr));
            }
            if nw > 0 {
                p.push(entry("write", b.write_dist, b.write_align, nw));
            }
            if nr > 0 && nw > 0 {
                notes.push(format!("randrw with {read_pct}% reads and reads and writes of different sizes: fio draws each op's direction at random; fsbench issues {nr} read(s) then {nw} write(s), over and over{}", options::difference_tag("randrw-interleave")));
            }
            p
        }
    };
    if mix_given && !matches!(rw, Dir::RandMix | Dir::SeqMix) {
        notes.push("rwmixread/rwmixwrite have no effect without randrw or rw (as in fio)".into());
    }
    Ok(pattern)
}

/// A size as the workload writes it: fixed, a split (fio's `bssplit`), or fio's unaligned
/// `bsrange`.
fn size_spec(d: SizeDist) -> SizeDistSpec {
    match d {
        SizeDist::Fixed(n) => SizeDistSpec::Fixed(Bytes(n)),
        SizeDist::UnalignedRange { min, max } => {
            SizeDistSpec::UnalignedRange { unaligned_range: [Bytes(min), Bytes(max)] }
        }
        d => SizeDistSpec::Split {
            split: d
                .entries()
                .into_iter()
                .map(|(size, weight)| SplitSpec { size: Bytes(size), weight })
                .collect(),
        },
    }
}

/// randrw's share of reads in percent, from `rwmixread` or `rwmixwrite` (default 50).
fn read_share(job: &Job) -> Result<u64, FioError> {
    let r = job.int("rwmixread")?;
    let w = job.int("rwmixwrite")?;
    let read_pct = match (r, w) {
        (Some((r, line)), Some((w, _))) if r + w != 100 => {
            return Err(job.err(
                "rwmixwrite",
                line.max(job.line("rwmixwrite")),
                format!("rwmixread={r} and rwmixwrite={w} do not add up to 100"),
            ))
        }
        (Some((r, _)), _) => r,
        (None, Some((w, _))) => 100u64.saturating_sub(w),
        (None, None) => 50,
    };
    if read_pct > 100 {
        return Err(job.err(
            "rwmixread",
            job.line("rwmixread"),
            format!("{read_pct}: a percentage is 0 to 100"),
        ));
    }
    Ok(read_pct)
}

/// The phases: an untimed one of `ramp_time` seconds, if given, then the timed one, with the
/// cache precondition of fio's `invalidate=1` (the default drops the file's pages first).
#[allow(clippy::too_many_arguments)]
fn phases(
    job: &Job,
    rw: Dir,
    direct: bool,
    open: Vec<String>,
    pattern: Vec<OpSpec>,
    amount: AmountSpec,
    sync: SyncSpec,
    notes: &mut Vec<String>,
) -> Result<Vec<PhaseSpec>, FioError> {
    // fio's pre_read reads the job's files into the page cache before its I/O and turns
    // invalidate off (init.c); fsbench's `cached` precondition reads them and checks they stayed.
    let pre_read = job.bool("pre_read")?.unwrap_or(false);
    if pre_read && direct {
        return Err(job.err("pre_read", job.line("pre_read"), "with direct=1: fio 3.33 fails such a job (its pre-read reads the O_DIRECT file into an unaligned buffer and exits 1), and O_DIRECT reads bypass the cache anyway; drop pre_read or direct"));
    }
    let invalidate = !pre_read && job.bool("invalidate")?.unwrap_or(true);
    let cache = if pre_read {
        CacheReq::Cached
    } else if rw.reads() && !direct && invalidate {
        CacheReq::Uncached
    } else {
        CacheReq::Any
    };
    // A time-based job wraps at the end of its file (or of its random map's pass), and fio
    // drops a buffered file's pages each time (invalidate=1), so every pass reads the device.
    let loops = job.int("loops")?.map_or(1, |(n, _)| n);
    let each_pass = invalidate && !direct && (amount.seconds.is_some() || loops > 1);
    let hint = fadvise_hint(job)?;
    let mut phases = Vec::new();
    let mut timed_cache = cache;
    if let Some((s, _)) = job.seconds("ramp_time")? {
        if s > 0.0 {
            phases.push(PhaseSpec {
                name: "ramp".into(),
                timed: false,
                cache,
                open: open.clone(),
                pattern: pattern.clone(),
                amount: AmountSpec { seconds: Some(s), ..Default::default() },
                sync: sync.clone(),
                invalidate_each_pass: invalidate && !direct,
                fadvise_hint: hint,
                ..PhaseSpec::default()
            });
            timed_cache = CacheReq::Any;
            if !rw.random() {
                notes.push(options::difference("ramp-restart"));
            }
        }
    }
    phases.push(PhaseSpec {
        name: rw.phase_name().into(),
        timed: true,
        cache: timed_cache,
        open,
        pattern,
        amount,
        sync,
        invalidate_each_pass: each_pass,
        fadvise_hint: hint,
        ..PhaseSpec::default()
    });
    Ok(phases)
}

/// fio's `fadvise_hint`: 1 (fio's default) advises `POSIX_FADV_RANDOM` for a random job and
/// `POSIX_FADV_SEQUENTIAL` otherwise, when the file is opened; 0 gives no hint. On a buffered
/// random read the hint turns readahead off, which changes what reaches the device (fio's
/// fio-rand-read example moves about twice the ops with `fadvise_hint=0`).
/// fio gives no hint with the null engine (it opens no file).
fn fadvise_hint(job: &Job) -> Result<bool, FioError> {
    let null = matches!(job.str("ioengine")?, Some(("null", _)));
    Ok(job.bool("fadvise_hint")?.unwrap_or(true) && !null)
}

/// fio's `rate`, `rate_iops` (each thread's, open loop), `rate_process` and the think time, on
/// the timed phase.
fn pacing(
    job: &Job,
    rw: Dir,
    timed: &mut PhaseSpec,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    // fio's R,W values: the job's one direction's.
    let one_dir = |name: &str| -> Result<Option<u64>, FioError> {
        let Some((v, line)) = job.str(name)? else {
            return Ok(None);
        };
        let (r, w) = split_rw(v, 0, parse_size_expr).map_err(|m| job.err(name, line, m))?;
        match rw {
            // Each direction on its own schedule: rate::per_direction.
            Dir::RandMix | Dir::SeqMix => Ok(None),
            _ if rw.reads() => Ok((r > 0).then_some(r)),
            _ => Ok((w > 0).then_some(w)),
        }
    };
    if matches!(rw, Dir::RandMix | Dir::SeqMix) {
        rate::per_direction(job, rw, timed, notes)?;
    }
    let iops = one_dir("rate_iops")?;
    let bytes = one_dir("rate")?;
    if let (Some(_), Some(_)) = (iops, bytes) {
        return Err(job.err("rate_iops", job.line("rate_iops"), "give one of rate and rate_iops"));
    }
    timed.rate_iops = iops.map(|n| n as f64);
    timed.rate = bytes.map(SizeExpr::Bytes);
    // fio times a paced op from when it is issued, after its wait for the rate.
    let paced = timed.rate_iops.is_some() || timed.rate.is_some();
    if paced || timed.rate_read.is_some() || timed.rate_write.is_some() {
        timed.latency_from = Some("issue".into());
    }
    for k in ["rate_min", "rate_iops_min"] {
        if let Some((v, line)) = job.str(k)? {
            let (r, w) = split_rw(v, 0, parse_size_expr).map_err(|m| job.err(k, line, m))?;
            if r > 0 || w > 0 {
                notes.push(format!("{k}={v}: {}", options::difference("rate-min")));
            }
        }
    }
    misc::rate_process(job, timed, notes)?;
    misc::submit_mode(job, timed, notes)?;
    let blocks = job.int("thinktime_blocks")?;
    if let Some((v, line)) = job.str("thinktime")? {
        // A bare number is microseconds, as fio.
        let us = match v.trim().parse::<u64>() {
            Ok(us) => us,
            Err(_) => parse_time(v)
                .map(|s| (s * 1e6).round() as u64)
                .map_err(|m| job.err("thinktime", line, m))?,
        };
        if us > 0 {
            timed.thinktime = Some(crate::workload::load::DurationText::Micros(us));
            timed.thinktime_blocks = blocks.map(|(n, _)| n.max(1));
        }
    }
    if let Some((v, line)) = job.str("thinktime_spin")? {
        let spin =
            v.trim().parse::<u64>().ok().or_else(|| parse_time(v).ok().map(|s| (s * 1e6) as u64));
        if spin != Some(0) {
            return Err(job.err(
                "thinktime_spin",
                line,
                format!("`{v}`: fsbench sleeps through the whole think time; use thinktime_spin=0"),
            ));
        }
    }
    Ok(())
}

/// A batch option as a count (fio's 0 means "the default").
fn uring_int(job: &Job, name: &str) -> Result<Option<u64>, FioError> {
    match job.int(name)? {
        None | Some((0, _)) => Ok(None),
        Some((n, line)) => u32::try_from(n)
            .map(|n| Some(u64::from(n)))
            .map_err(|_| job.err(name, line, format!("{n} is too large"))),
    }
}

/// The io_uring engine's keys that the job sets, in the engine's order.
fn uring_keys<const N: usize>(set: [(&Key, Option<OptValue>); N]) -> EngineKeys {
    let mut keys = EngineKeys::default();
    for (k, v) in set {
        if let Some(v) = v {
            keys.set(k.name, v);
        }
    }
    keys
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

mod direct;
mod distribution;
mod exit;
mod file_size;
mod fileops;
mod flow;
mod groups;
mod layout;
mod libaio;
mod logs;
mod misc;
mod name_format;
mod nrfiles;
mod percentage;
mod rate;
mod run_file;
mod samples;
mod sched;
mod sequence;
mod shared;
mod steady;
mod unaligned;
mod unlink_loop;
mod verify;

#[cfg(test)]
mod tests;

/// The job's `percentile_list` (fio's syntax: up to 20 values in [0, 100] separated by `:`, a
/// 0 ending the list), sorted as fio sorts it; None without one. A clone reported on its own
/// keeps only fio's default list, so with `numjobs` > 1 it needs `group_reporting`.
fn percentile_list(job: &Job) -> Result<Option<Vec<f64>>, FioError> {
    let Some((v, line)) = job.str("percentile_list")? else { return Ok(None) };
    let mut list = Vec::new();
    for part in v.split(':') {
        let x: f64 = part.trim().parse().map_err(|_| {
            job.err(
                "percentile_list",
                line,
                format!("`{part}` is not a number: write percentiles such as 50:99:99.9"),
            )
        })?;
        if !(0.0..=100.0).contains(&x) {
            return Err(job.err(
                "percentile_list",
                line,
                format!("{x}: a percentile is between 0 and 100"),
            ));
        }
        if x == 0.0 {
            break;
        }
        list.push(x);
    }
    if list.len() > 20 {
        return Err(job.err("percentile_list", line, "at most 20 percentiles, as fio"));
    }
    let threads = job.int("numjobs")?.map_or(1, |(n, _)| n);
    if threads > 1 && job.bool("group_reporting")? != Some(true) {
        return Err(job.err("percentile_list", line, format!("with numjobs={threads} and no group_reporting: fsbench keeps each clone's percentiles at fio's default list only; add group_reporting, or remove percentile_list")));
    }
    list.sort_by(f64::total_cmp);
    Ok(Some(list))
}
