//! `fsbench fio`'s output in fio's own shapes: the JSON fio 3.33 writes with
//! `--output-format=json` (the fields scripts read, at fio's paths and in fio's units) and a
//! text close to fio's normal output. Both come from the one result type; fsbench's own facts
//! (cache state, device counters, notes on where its meaning differs, the run id) go under the
//! one key `fsbench` (JSON) or after fio's text, so a fio script reads the rest unchanged.
//!
//! Units as fio's: `bw` in KiB/s, `bw_bytes` in B/s, `runtime` and `job_runtime` in ms,
//! latencies in ns (`*_ns`), `usr_cpu`/`sys_cpu` in percent of `job_runtime`, which is the
//! job's threads' run times added up, as fio's (a `group_reporting` job of 4 threads that ran
//! 2 s each: 8000 ms, and CPU percentages of one thread's scale). A
//! synchronous fsbench operation is timed from its call to its return, which is fio's
//! completion latency of a synchronous engine: `clat_ns` and `lat_ns` carry it, and `slat_ns`
//! is zero with `N` 0, as fio reports for psync. An engine that submits apart (io_uring,
//! libaio) has its submission timed apart too ([`crate::model::submit`]): `slat_ns` to the
//! return of the call that submitted the op, `clat_ns` from there, `lat_ns` the op's whole
//! time, as fio's (and the text's `slat`, `clat` and `lat` lines).
//!
//! A job of `numjobs` threads without `group_reporting` is one `jobs[]` entry (and one text
//! block) per thread, as fio reports each clone: same name and group, each from its thread's
//! own record ([`crate::model::result::ThreadResult`]). A record without them (made before
//! they were kept, or with `--min-time` passes added up) is reported as one job, its threads'
//! figures summed, and its `fsbench.clones_merged` says so.

use super::Exporter;
use crate::fio::LatPercentiles;
use crate::model::job::OpKind;
use crate::model::report::Report;
use crate::model::result::{
    DeviceDelta, OpLatency, PhaseResult, RepResult, RusageCounts, TestResult, TestStatus,
    ThreadLatency, ThreadResult,
};
use crate::model::series::{RateSamples, SteadyMeasures, SteadyMetric, ThreadWindows};
use crate::model::submit::{DepthCounts, SplitLatency, ThreadSplit};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// fio's default `percentile_list`.
pub use crate::model::latency::FIO_PERCENTILES;

/// What a fio run adds to the report: things the report does not hold.
#[derive(Debug, Clone, Default)]
pub struct FioContext {
    /// The run's id in the results database (None with --no-store).
    pub run_id: Option<i64>,
    /// The job options of the command line's and job files' `[global]`, as fio's
    /// `global options`.
    pub global_options: Vec<(String, String)>,
    /// Per test id: where fsbench's meaning differs from fio's (the translation's notes).
    pub differences: BTreeMap<String, Vec<String>>,
    /// Each fio job: its test, its role there (None: the test's own threads), its `groupid`
    /// and `group_reporting`. Empty: one job per test, each its own group.
    pub jobs: Vec<crate::fio::JobPlace>,
    /// The fio jobs that never ran (after a job with `exit_what=all`): listed after the others
    /// with no I/O, as fio lists them, and `fsbench.ran` false.
    pub unrun: Vec<crate::fio::UnrunJob>,
    /// fio's `bw_avg_time` (= `iops_avg_time`) of the jobs, ms: the window of the bandwidth
    /// and IOPS samples (0: fio's default, 500).
    pub sample_window_ms: u64,
}

/// The text or JSON format of `fsbench fio`.
pub struct FioExporter {
    /// JSON (true) or fio's normal text (false).
    pub json: bool,
    /// What the report does not hold.
    pub context: FioContext,
}

impl Exporter for FioExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        if self.json {
            let mut v = serde_json::to_vec_pretty(&fio_json(report, &self.context))?;
            v.push(b'\n');
            Ok(v)
        } else {
            Ok(fio_text(report, &self.context).into_bytes())
        }
    }
}

/// One direction's figures over a repetition's timed phases.
#[derive(Default)]
struct Dir {
    bytes: u64,
    ops: u64,
    wall_nanos: u64,
    lat: Option<hdrhistogram::Histogram<u64>>,
    /// A clone's latency: its thread's summary (a thread keeps no histogram).
    summary: Option<ThreadLatency>,
    min: u64,
    max: u64,
    /// fio's file-operation engines: the op is recorded as completion latency alone (fio's
    /// `lat_ns` has `N` 0 for them).
    clat_only: bool,
    /// Engines that submit apart (io_uring, libaio): the submission latency (fio's `slat`) of
    /// the parts that have it.
    slat: crate::model::submit::Moments,
    /// And their completion latency from the submission's return (fio's `clat`); the
    /// direction's own latency is then fio's `lat`.
    clat: Option<Box<Dir>>,
}

/// A direction's latency as fio reports it.
struct LatFigures {
    n: u64,
    min: u64,
    max: u64,
    mean: f64,
    stddev: f64,
    /// The percentiles asked for (the job's `percentile_list`, else [`FIO_PERCENTILES`]).
    quantiles: Vec<f64>,
    /// At `quantiles`, in order.
    percentiles: Vec<u64>,
    /// Ops in each of fio's buckets ([`crate::model::latency::fio_buckets`]).
    buckets: Vec<u64>,
}

impl Dir {
    fn add(&mut self, bytes: u64, wall_nanos: u64, l: Option<&OpLatency>) {
        self.bytes += bytes;
        self.wall_nanos = self.wall_nanos.max(wall_nanos);
        if let Some(l) = l {
            self.ops += l.count;
            self.min = if self.ops == l.count { l.min_nanos } else { self.min.min(l.min_nanos) };
            self.max = self.max.max(l.max_nanos);
            if let Some(h) = crate::stats::latency::decode(&l.histogram_b64) {
                match &mut self.lat {
                    Some(acc) => {
                        let _ = acc.add(&h);
                    }
                    None => self.lat = Some(h),
                }
            }
        }
    }

    /// A part's submission and completion latency apart (engines that submit apart).
    fn add_split(&mut self, s: Option<&SplitLatency>) {
        if let Some(s) = s {
            self.slat.merge(&s.slat);
            self.clat.get_or_insert_with(Box::default).add(0, 0, Some(&s.clat));
        }
    }

    /// A thread's submission and completion latency apart.
    fn add_thread_split(&mut self, s: Option<&ThreadSplit>) {
        if let Some(s) = s {
            self.slat.merge(&s.slat);
            self.clat.get_or_insert_with(Box::default).add_thread(0, 0, Some(&s.clat));
        }
    }

    /// Its submission latency and completion latency apart, when every op of it has them
    /// (fio's `slat` and `clat` of an engine that submits apart); `None`: a synchronous
    /// engine, whose one latency is fio's `clat` and `lat` both.
    fn split(&self) -> Option<(&crate::model::submit::Moments, &Dir)> {
        let c = self.clat.as_deref()?;
        (self.ops > 0 && c.ops == self.ops && self.slat.count == self.ops)
            .then_some((&self.slat, c))
    }

    /// One thread's figures (a clone has one timed phase: [`clones_kept`]).
    fn add_thread(&mut self, bytes: u64, wall_nanos: u64, l: Option<&ThreadLatency>) {
        self.bytes += bytes;
        self.wall_nanos = self.wall_nanos.max(wall_nanos);
        if let Some(l) = l {
            self.ops += l.count;
            self.min = l.min_nanos;
            self.max = l.max_nanos;
            self.summary = Some(l.clone());
        }
    }

    /// Its latency figures, when it has operations and a record of their latency, with the
    /// percentiles at `list` (a clone's summary has fio's default list only, which the
    /// translation ensures is the one asked for).
    fn figures(&self, list: &[f64]) -> Option<LatFigures> {
        if self.ops == 0 {
            return None;
        }
        if let Some(h) = &self.lat {
            return Some(LatFigures {
                n: self.ops,
                min: self.min,
                max: self.max,
                mean: h.mean(),
                stddev: h.stdev(),
                quantiles: list.to_vec(),
                percentiles: list.iter().map(|q| h.value_at_quantile(q / 100.0)).collect(),
                buckets: crate::model::latency::fio_buckets(h),
            });
        }
        self.summary.as_ref().map(|s| LatFigures {
            n: s.count,
            min: s.min_nanos,
            max: s.max_nanos,
            mean: s.mean_nanos,
            stddev: s.stddev_nanos,
            quantiles: FIO_PERCENTILES.to_vec(),
            percentiles: s.percentiles_nanos.clone(),
            buckets: s.fio_buckets.clone(),
        })
    }

    fn runtime_ms(&self) -> u64 {
        self.wall_nanos / 1_000_000
    }

    fn bw_bytes(&self) -> u64 {
        if self.wall_nanos == 0 {
            0
        } else {
            (self.bytes as f64 * 1e9 / self.wall_nanos as f64) as u64
        }
    }

    fn iops(&self) -> f64 {
        if self.wall_nanos == 0 {
            0.0
        } else {
            self.ops as f64 * 1e9 / self.wall_nanos as f64
        }
    }

    /// fio's `{min, max, mean, stddev, N, percentile}` of a latency, in ns.
    fn lat_json(&self, percentiles: bool, list: &[f64]) -> Value {
        let Some(f) = self.figures(list) else {
            return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
        };
        let mut v = json!({
            "min": f.min, "max": f.max, "mean": f.mean, "stddev": f.stddev, "N": f.n,
        });
        if percentiles {
            let p: Map<String, Value> = f
                .quantiles
                .iter()
                .zip(&f.percentiles)
                .map(|(q, v)| (format!("{q:.6}"), json!(v)))
                .collect();
            v["percentile"] = Value::Object(p);
        }
        v
    }

    fn json(&self, pct: LatPercentiles, list: &[f64]) -> Value {
        json!({
            "io_bytes": self.bytes,
            "io_kbytes": self.bytes / 1024,
            "bw_bytes": self.bw_bytes(),
            "bw": self.bw_bytes() / 1024,
            "iops": self.iops(),
            "runtime": self.runtime_ms(),
            "total_ios": self.ops,
            "short_ios": 0,
            "drop_ios": 0,
            "slat_ns": match self.split() {
                Some((m, _)) => json!({
                    "min": m.min_nanos, "max": m.max_nanos, "mean": m.mean_nanos,
                    "stddev": m.stddev_nanos, "N": m.count,
                }),
                None => json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}),
            },
            "clat_ns": match self.split() {
                Some((_, c)) => c.lat_json(pct.clat, list),
                None => self.lat_json(pct.clat, list),
            },
            "lat_ns": if self.clat_only {
                json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
            } else {
                self.lat_json(pct.lat, list)
            },
        })
    }
}

/// The figures of one fio job (or of a group, merged with `group_reporting`) in its test's last
/// complete repetition (the one a single fio run would show).
#[derive(Default)]
struct Job<'a> {
    /// fio's job name (the group's first with `group_reporting`).
    name: String,
    /// fio's `groupid`.
    group: u32,
    /// Threads (fio's `jobs=`).
    threads: u32,
    /// The tests and roles it is made of: `(test, role)`.
    parts: Vec<(&'a TestResult, Option<&'a str>)>,
    read: Dir,
    write: Dir,
    sync: Dir,
    trim: Dir,
    /// Its run time: the longest of its parts' (ns).
    wall: u64,
    /// Its threads' run times added up (ns): fio's `job_runtime` of a job of several threads
    /// (`group_reporting`), and what its CPU percentages are of.
    thread_wall: u64,
    usr: u64,
    sys: u64,
    /// Its threads' context switches and page faults (fio's `ctx`, `majf`, `minf`).
    rusage: RusageCounts,
    /// A part failed.
    failed: bool,
    /// It never ran: the job whose `exit_what=all` stopped it before it started.
    unrun: Option<&'a str>,
    /// One of the job's clones: `(index, clones)`; its figures are that thread's alone.
    clone: Option<(usize, u32)>,
    /// The job's first thread among its test's (a group of fio's file-operation jobs is one
    /// test, each job a range of its threads); its clone `i` is the test's thread `first + i`.
    first: usize,
    /// A job of fio's file-operation engines: its op reported as fio's fake I/O.
    fileop: Option<crate::fio::FileOpReport>,
    /// Its threads are reported together although fio would list each (the record has no
    /// figures per thread).
    clones_merged: bool,
    /// Which latencies get percentiles (the job's `clat_percentiles`, `lat_percentiles`).
    pct: LatPercentiles,
    /// The job's `percentile_list` (None: fio's default).
    plist: Option<Vec<f64>>,
    /// Its own section's options (fio's `job options`; a merged group's: its first job's).
    options: &'a [(String, String)],
    /// Its threads' queue-depth counts (fio's `iodepth_level`, `iodepth_submit`,
    /// `iodepth_complete`).
    depths: DepthCounts,
}

impl Job<'_> {
    /// The percentiles its report gives: its `percentile_list`, or fio's default.
    fn quantiles(&self) -> &[f64] {
        self.plist.as_deref().unwrap_or(&FIO_PERCENTILES)
    }
}

/// One timed phase's figures of a job: the phase's or role's own, or one thread's.
struct Figures<'p> {
    bytes_read: u64,
    bytes_written: u64,
    wall_nanos: u64,
    /// Its threads' run times added up.
    thread_nanos: u64,
    usr: u64,
    sys: u64,
    rusage: RusageCounts,
    latency: Lat<'p>,
    /// Engines that submit apart: submission and completion latency apart.
    split: Split<'p>,
    /// fio's queue-depth distributions.
    depths: DepthCounts,
}

/// A phase's or role's split latencies ([`SplitLatency`]), or a thread's.
enum Split<'p> {
    Merged(&'p [SplitLatency]),
    Thread(&'p [ThreadSplit]),
}

/// A phase's or role's latency histograms, or a thread's summaries.
enum Lat<'p> {
    Merged(&'p [OpLatency]),
    Thread(&'p [ThreadLatency]),
}

impl<'p> Figures<'p> {
    fn of_thread(t: &'p ThreadResult) -> Self {
        Figures {
            bytes_read: t.bytes_read,
            bytes_written: t.bytes_written,
            wall_nanos: t.wall_nanos,
            thread_nanos: t.wall_nanos,
            usr: t.cpu_user_nanos,
            sys: t.cpu_sys_nanos,
            rusage: t.rusage,
            latency: Lat::Thread(&t.latency),
            split: Split::Thread(&t.submission),
            depths: t.depths,
        }
    }
}

/// The threads' own records of `role` (None: the test's own threads) in phase `p`.
fn threads_of<'p>(p: &'p PhaseResult, role: Option<&str>) -> Option<&'p [ThreadResult]> {
    match role {
        None => Some(&p.per_thread),
        Some(name) => p.roles.iter().find(|r| r.name == name).map(|r| r.per_thread.as_slice()),
    }
}

/// Whether `role` of `test` can be reported one job per thread: more than one thread, and a
/// record of each in the one timed phase of the shown repetition (a fio job has one; a
/// thread's latency summaries of two phases would not add up).
fn clones_kept(test: &TestResult, role: Option<&str>, threads: u32) -> bool {
    threads > 1 && threads_kept(test, role, |n| n == threads as usize)
}

/// Whether the shown repetition of `test` has one timed phase whose record of `role`'s
/// threads has a count that `enough` takes (a slice of a test's threads, `first..first + n`:
/// at least `first + n`).
fn threads_kept(test: &TestResult, role: Option<&str>, enough: impl Fn(usize) -> bool) -> bool {
    let phases: Vec<&PhaseResult> = timed(shown(test)).collect();
    matches!(phases[..], [p] if threads_of(p, role).is_some_and(|t| enough(t.len())))
}

fn timed(rep: Option<&RepResult>) -> impl Iterator<Item = &PhaseResult> {
    rep.into_iter().flat_map(|r| r.phases.iter()).filter(|p| p.timed)
}

/// The repetition a single fio run would show: the last complete one.
fn shown(test: &TestResult) -> Option<&RepResult> {
    test.reps.iter().rev().find(|r| r.complete).or(test.reps.last())
}

impl<'a> Job<'a> {
    /// Add `role` of `test` (None: the test's own threads) to the job's figures: of its
    /// [`Job::clone`] thread alone when it is one.
    fn add(&mut self, test: &'a TestResult, role: Option<&'a str>) {
        self.parts.push((test, role));
        self.failed |= !matches!(test.status, TestStatus::Ok);
        let mut wall = 0;
        for p in timed(shown(test)) {
            let f = match (self.clone, role) {
                (Some((i, _)), _) => {
                    match threads_of(p, role).and_then(|t| t.get(self.first + i)) {
                        Some(t) => Figures::of_thread(t),
                        None => continue,
                    }
                }
                (None, None) => Figures {
                    bytes_read: p.bytes_read,
                    bytes_written: p.bytes_written,
                    wall_nanos: p.wall_nanos,
                    thread_nanos: thread_nanos(&p.per_thread, p.wall_nanos, test.threads),
                    usr: p.cpu_user_nanos,
                    sys: p.cpu_sys_nanos,
                    rusage: p.rusage,
                    latency: Lat::Merged(&p.latency),
                    split: Split::Merged(&p.submission),
                    depths: p.depths,
                },
                (None, Some(name)) => {
                    let Some(r) = p.roles.iter().find(|r| r.name == name) else {
                        continue;
                    };
                    Figures {
                        bytes_read: r.bytes_read,
                        bytes_written: r.bytes_written,
                        wall_nanos: r.wall_nanos,
                        thread_nanos: thread_nanos(&r.per_thread, r.wall_nanos, r.threads),
                        usr: r.cpu_user_nanos,
                        sys: r.cpu_sys_nanos,
                        rusage: r.rusage,
                        latency: Lat::Merged(&r.latency),
                        split: Split::Merged(&r.submission),
                        depths: r.depths,
                    }
                }
            };
            let (r, w, t) = (f.bytes_read, f.bytes_written, f.wall_nanos);
            if let Some(op) = self.fileop {
                self.add_fileop(op, &f);
            } else {
                match f.latency {
                    Lat::Merged(l) => {
                        let lat = |k: OpKind| l.iter().find(|l| l.op == k);
                        self.read.add(r, t, lat(OpKind::Read));
                        self.write.add(w, t, lat(OpKind::Write));
                        self.sync.add(0, t, lat(OpKind::Fsync).or(lat(OpKind::Fdatasync)));
                    }
                    Lat::Thread(l) => {
                        let lat = |k: OpKind| l.iter().find(|l| l.op == k);
                        self.read.add_thread(r, t, lat(OpKind::Read));
                        self.write.add_thread(w, t, lat(OpKind::Write));
                        self.sync.add_thread(0, t, lat(OpKind::Fsync).or(lat(OpKind::Fdatasync)));
                    }
                }
                match f.split {
                    Split::Merged(l) => {
                        let at = |k: OpKind| l.iter().find(|l| l.op == k);
                        self.read.add_split(at(OpKind::Read));
                        self.write.add_split(at(OpKind::Write));
                    }
                    Split::Thread(l) => {
                        let at = |k: OpKind| l.iter().find(|l| l.op == k);
                        self.read.add_thread_split(at(OpKind::Read));
                        self.write.add_thread_split(at(OpKind::Write));
                    }
                }
            }
            wall += f.wall_nanos;
            self.depths.add(&f.depths);
            self.thread_wall += f.thread_nanos;
            self.usr += f.usr;
            self.sys += f.sys;
            self.rusage.add(&f.rusage);
        }
        self.wall = self.wall.max(wall);
    }
}

impl Job<'_> {
    /// A file-operation job's figures: its op's count and latency as fio's fake I/O, one per
    /// file of `bytes`, in the direction fio records it (`clat_ns` the op, `iops` ops per
    /// second of the job's run time, `io_bytes` ops × bs).
    fn add_fileop(&mut self, op: crate::fio::FileOpReport, f: &Figures<'_>) {
        let dir = if op.write { &mut self.write } else { &mut self.read };
        dir.clat_only = true;
        let t = f.wall_nanos;
        match f.latency {
            Lat::Merged(l) => {
                let l = l.iter().find(|l| l.op == op.op);
                dir.add(l.map_or(0, |l| l.count * op.bytes), t, l);
            }
            Lat::Thread(l) => {
                let l = l.iter().find(|l| l.op == op.op);
                dir.add_thread(l.map_or(0, |l| l.count * op.bytes), t, l);
            }
        }
    }
}

/// The run times of a phase's (or role's) threads added up: each thread's as recorded, or the
/// phase's for each of its `threads` when the record has none per thread.
fn thread_nanos(per_thread: &[ThreadResult], wall: u64, threads: u32) -> u64 {
    if per_thread.is_empty() {
        wall.saturating_mul(u64::from(threads.max(1)))
    } else {
        per_thread.iter().map(|t| t.wall_nanos).sum()
    }
}

/// Push `role` of `test` (None: the test's own threads) as a job of `threads` threads: with
/// `split` (no `group_reporting`), one job per thread as fio lists its clones when the record
/// has each thread's figures, else one job with their figures summed (said so).
#[allow(clippy::too_many_arguments)]
fn push_job<'a>(
    out: &mut Vec<Job<'a>>,
    name: &str,
    group: u32,
    threads: u32,
    split: bool,
    test: &'a TestResult,
    role: Option<&'a str>,
    (first, fileop): (u32, Option<crate::fio::FileOpReport>),
) {
    // A job that is some of its test's threads (a group of file-operation jobs) is reported
    // from those threads' own records, one by one.
    let slice = role.is_none() && (first > 0 || threads < test.threads);
    let kept = clones_kept(test, role, threads)
        || slice && threads_kept(test, role, |n| n >= (first + threads) as usize);
    if split && kept {
        for i in 0..threads as usize {
            let mut j = Job {
                name: name.to_string(),
                group,
                threads: 1,
                clone: Some((i, threads)),
                first: first as usize,
                fileop,
                ..Job::default()
            };
            j.add(test, role);
            out.push(j);
        }
        return;
    }
    let mut j = Job {
        name: name.to_string(),
        group,
        threads,
        clones_merged: split && threads > 1,
        fileop,
        ..Job::default()
    };
    j.add(test, role);
    out.push(j);
}

/// The jobs to report: one per fio job (`ctx.jobs`, else one per test), those of a group with
/// `group_reporting` merged into one.
fn fio_jobs<'a>(tests: &'a [TestResult], ctx: &'a FioContext) -> Vec<Job<'a>> {
    let mut out = ran_jobs(tests, ctx);
    unrun_jobs(&mut out, ctx);
    out
}

/// The jobs that ran, as [`fio_jobs`] lists them.
fn ran_jobs<'a>(tests: &'a [TestResult], ctx: &'a FioContext) -> Vec<Job<'a>> {
    let mut out: Vec<Job<'a>> = Vec::new();
    if ctx.jobs.is_empty() {
        for (i, t) in tests.iter().enumerate() {
            push_job(&mut out, &t.name, i as u32, t.threads, true, t, None, (0, None));
        }
        return out;
    }
    let merged: std::collections::BTreeSet<u32> =
        ctx.jobs.iter().filter(|p| p.group_reporting).map(|p| p.group).collect();
    for p in &ctx.jobs {
        let Some(t) = tests.iter().find(|t| t.id == p.test_id) else {
            continue;
        };
        let role = p.role.as_deref();
        match out.last_mut() {
            Some(j) if merged.contains(&p.group) && j.group == p.group => {
                j.threads += p.threads;
                // The jobs of a group of file-operation jobs are one test: added once.
                if !j.parts.iter().any(|(pt, pr)| pt.id == t.id && *pr == role) {
                    j.add(t, role);
                }
            }
            _ => {
                let split = !merged.contains(&p.group);
                let first = out.len();
                let part = (p.first_thread, p.fileop);
                push_job(&mut out, &p.name, p.group, p.threads, split, t, role, part);
                for j in &mut out[first..] {
                    j.pct = p.percentiles;
                    j.plist.clone_from(&p.percentile_list);
                    j.options = &p.options;
                }
            }
        }
    }
    out
}

/// Append the jobs that never ran (`ctx.unrun`, after every job that ran in fio's order too:
/// they are the groups after an `exit_what=all`), with no figures; a group with
/// `group_reporting` as one job, as the jobs that ran.
fn unrun_jobs<'a>(out: &mut Vec<Job<'a>>, ctx: &'a FioContext) {
    let merged: std::collections::BTreeSet<u32> =
        ctx.unrun.iter().filter(|u| u.group_reporting).map(|u| u.group).collect();
    for u in &ctx.unrun {
        match out.last_mut() {
            Some(j) if j.unrun.is_some() && merged.contains(&u.group) && j.group == u.group => {
                j.threads += u.threads;
            }
            _ => out.push(Job {
                name: u.name.clone(),
                group: u.group,
                threads: u.threads,
                unrun: Some(&u.stopped_by),
                options: &u.options,
                ..Job::default()
            }),
        }
    }
}

/// fio's latency buckets from the ops in each ([`crate::model::latency::fio_buckets`]; empty:
/// none), as percent of all: `latency_ns`, `latency_us`, `latency_ms`.
fn buckets(counts: &[u64]) -> (Value, Value, Value) {
    const BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let total: u64 = counts.iter().sum();
    let share = |i: usize| -> f64 {
        match counts.get(i) {
            Some(n) if total > 0 => *n as f64 * 100.0 / total as f64,
            _ => 0.0,
        }
    };
    let scale = |first: usize| -> Map<String, Value> {
        BOUNDS.iter().enumerate().map(|(k, b)| (b.to_string(), json!(share(first + k)))).collect()
    };
    let mut ms = scale(20);
    ms.insert("2000".into(), json!(share(30)));
    ms.insert(">=2000".into(), json!(share(31)));
    (Value::Object(scale(0)), Value::Object(scale(10)), Value::Object(ms))
}

/// fio's `global options` or `job options`: each option's value by its name (a later one of
/// the same name wins, as in fio).
fn options_json(options: &[(String, String)]) -> Value {
    Value::Object(options.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

/// The percentage of `nanos` of `wall`.
fn pct(nanos: u64, wall: u64) -> f64 {
    if wall == 0 {
        0.0
    } else {
        nanos as f64 * 100.0 / wall as f64
    }
}

/// fio's disk stats: per device of the timed phases, its counters over them and their run
/// time (ms), by the device's name.
fn disk_stats(tests: &[TestResult]) -> BTreeMap<String, (DeviceDelta, u64)> {
    let mut disks: BTreeMap<String, (DeviceDelta, u64)> = BTreeMap::new();
    for t in tests {
        for p in timed(shown(t)) {
            if let Some(d) = &p.device {
                for dev in &d.devices {
                    let e = disks.entry(dev.trim_start_matches("/dev/").to_string()).or_default();
                    e.0.add(d);
                    e.1 += p.wall_nanos / 1_000_000;
                }
            }
        }
    }
    disks
}

/// fio's JSON of the report's first configuration (a `fsbench fio` run has one).
pub fn fio_json(report: &Report, ctx: &FioContext) -> Value {
    let run = report.configs.first().map(|c| &c.run);
    let tests: &[TestResult] = run.map(|r| r.tests.as_slice()).unwrap_or(&[]);
    let mut jobs = Vec::new();
    let disks = disk_stats(tests);
    let all = fio_jobs(tests, ctx);
    let aggs = group_aggs(&all);
    for j in &all {
        let facts = match j.unrun {
            Some(by) => json!({
                "ran": false,
                "why": format!("[{by}] has exit_what=all (with exitall): fio stops every job not started yet, so this one never ran"),
                "threads": j.threads,
            }),
            None => job_facts(j, ctx),
        };
        let mut v = job_json(j, facts);
        add_rates_json(&mut v, j, ctx, aggs.get(&j.group).copied().unwrap_or_default());
        jobs.push(v);
    }
    let disk_util: Vec<Value> = disks
        .iter()
        .map(|(name, (d, wall_ms))| {
            json!({
                "name": name,
                "read_ios": d.reads_completed, "write_ios": d.writes_completed,
                "read_merges": d.reads_merged, "write_merges": d.writes_merged,
                "read_ticks": d.read_ticks_ms, "write_ticks": d.write_ticks_ms,
                "in_queue": d.queue_ms,
                "util": pct(d.busy_ms, *wall_ms).min(100.0),
            })
        })
        .collect();
    let started = report.started_unix_s;
    json!({
        "fio version": format!("fsbench-{} (fio-3.33 JSON)", report.fsbench_version),
        "timestamp": started,
        "timestamp_ms": started * 1000,
        "time": crate::model::units::utc(started),
        "global options": options_json(&ctx.global_options),
        "jobs": jobs,
        "disk_util": disk_util,
        "fsbench": {
            "run_id": ctx.run_id,
            "target": run.map(|r| serde_json::to_value(&r.target).unwrap_or(Value::Null)),
            "interrupted": report.interrupted,
            "repeat": report.repeat,
        },
    })
}

/// Why a job's threads are one entry where fio lists each clone.
fn merged_words(threads: u32) -> String {
    format!("its {threads} threads are reported as one job, their figures summed, where fio lists each clone: this record has no figures per thread of one timed phase (made before fsbench kept them, with --min-time passes added up, or with several timed phases)")
}

/// fsbench's own facts of a job that ran (its `fsbench` key): of its one part, or of each part
/// of a merged group.
fn job_facts(j: &Job<'_>, ctx: &FioContext) -> Value {
    let parts: Vec<Value> = j
        .parts
        .iter()
        .map(|(t, role)| {
            let phases: Vec<Value> = shown(t)
                .into_iter()
                .flat_map(|r| r.phases.iter())
                .map(|p| {
                    json!({
                        "name": p.name, "timed": p.timed, "engine": p.engine, "iodepth": p.iodepth,
                        "direct": p.direct, "cache": serde_json::to_value(&p.cache).unwrap_or(Value::Null),
                        "device": serde_json::to_value(&p.device).unwrap_or(Value::Null),
                        "bytes_read": p.bytes_read, "bytes_written": p.bytes_written,
                    })
                })
                .collect();
            json!({
                "test_id": t.id,
                "role": role,
                "status": serde_json::to_value(&t.status).unwrap_or(Value::Null),
                "threads": t.threads,
                "differences": ctx.differences.get(&t.id).cloned().unwrap_or_default(),
                "warnings": serde_json::to_value(&t.warnings).unwrap_or(Value::Null),
                "phases": phases,
            })
        })
        .collect();
    // One part: its facts at the top of `fsbench` (as before groups); a merged group: each.
    let mut facts = match <[Value; 1]>::try_from(parts) {
        Ok([one]) => one,
        Err(parts) => json!({ "parts": parts }),
    };
    if let Some((i, n)) = j.clone.filter(|(_, n)| *n > 1) {
        facts["clone"] = json!({ "index": i, "of": n });
    }
    if j.clones_merged {
        facts["clones_merged"] = json!(merged_words(j.threads));
    }
    facts
}

/// fio 3.33's entry of a job, with `facts` under `fsbench`. A job that never ran has every
/// figure zero and no latency target keys, as fio leaves them out.
fn job_json(j: &Job<'_>, facts: Value) -> Value {
    // Reads' and writes' buckets together, as fio's.
    let mut all: Vec<u64> = Vec::new();
    for f in [j.read.figures(j.quantiles()), j.write.figures(j.quantiles())].into_iter().flatten() {
        all.resize(f.buckets.len().max(all.len()), 0);
        for (a, n) in all.iter_mut().zip(&f.buckets) {
            *a += n;
        }
    }
    let (ns, us, ms) = buckets(&all);
    let mut v = json!({
        "jobname": j.name,
        "groupid": j.group,
        "error": u8::from(j.failed),
        "eta": 0,
        "elapsed": j.wall / 1_000_000_000,
        "job options": options_json(j.options),
        "read": j.read.json(j.pct, j.quantiles()),
        "write": j.write.json(j.pct, j.quantiles()),
        "trim": j.trim.json(j.pct, j.quantiles()),
        "sync": {
            "total_ios": j.sync.ops,
            "lat_ns": j.sync.lat_json(j.pct.clat || j.pct.lat, j.quantiles()),
        },
        "job_runtime": j.thread_wall / 1_000_000,
        "usr_cpu": pct(j.usr, j.thread_wall),
        "sys_cpu": pct(j.sys, j.thread_wall),
        "ctx": j.rusage.switches(),
        "majf": j.rusage.major_faults,
        "minf": j.rusage.minor_faults,
        "iodepth_level": {},
        "latency_ns": ns,
        "latency_us": us,
        "latency_ms": ms,
        "latency_depth": 1,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
        "fsbench": facts,
    });
    if !j.depths.is_empty() {
        let d = &j.depths;
        let keys = |names: [&str; 7], map: &[u64; 7], total: u64| -> Value {
            let p = DepthCounts::percents(map, total);
            Value::Object(names.iter().zip(p).map(|(k, v)| (k.to_string(), json!(v))).collect())
        };
        const LEVEL: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
        const COUNT: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];
        v["iodepth_level"] = keys(LEVEL, &d.level, j.read.ops + j.write.ops);
        v["iodepth_submit"] = keys(COUNT, &d.submit, d.submit.iter().sum());
        v["iodepth_complete"] = keys(COUNT, &d.complete, d.complete.iter().sum());
    }
    if j.unrun.is_some() {
        if let Some(o) = v.as_object_mut() {
            for k in ["latency_depth", "latency_target", "latency_percentile", "latency_window"] {
                o.remove(k);
            }
        }
    }
    if let (Some(ss), Some(o)) = (steady_of(j), v.as_object_mut()) {
        o.insert("steadystate".into(), ss.json());
    }
    v
}

/// A job's steady state in fio 3.33's terms (`stat.c`'s `steadystate` object and text line):
/// the window's samples in bytes and ops per second, fio's criterion value, and its measures
/// in the criterion's unit (ops or bytes per second).
struct FioSteady {
    /// `iops:20.000000%`.
    ss: String,
    duration: u32,
    attained: bool,
    metric: SteadyMetric,
    /// fio's criterion value, percent (0 while fio's window was not yet full).
    criterion: f64,
    max_deviation: f64,
    slope: f64,
    bw: Vec<u64>,
    iops: Vec<u64>,
}

impl FioSteady {
    /// fio's mean of a window: the sum over the duration, in whole units.
    fn mean(&self, v: &[u64]) -> u64 {
        v.iter().sum::<u64>() / u64::from(self.duration.max(1))
    }

    fn json(&self) -> Value {
        json!({
            "ss": self.ss,
            "duration": self.duration,
            "attained": u8::from(self.attained),
            "criterion": format!("{:.6}%", self.criterion as f32),
            "max_deviation": self.max_deviation,
            "slope": self.slope,
            "data": {
                "bw_mean": self.mean(&self.bw),
                "iops_mean": self.mean(&self.iops),
                "iops": self.iops,
                "bw": self.bw,
            },
        })
    }

    /// `  steadystate  : attained=yes, bw=800KiB/s (819kB/s), iops=200, iops mean dev=0.000%`.
    fn line(&self) -> String {
        let (what, how) = match self.metric {
            SteadyMetric::Iops => ("iops", "mean dev"),
            SteadyMetric::IopsSlope => ("iops", "slope"),
            SteadyMetric::Bw => ("bw", "mean dev"),
            SteadyMetric::BwSlope => ("bw", "slope"),
        };
        let iops = self.mean(&self.iops) as f64;
        let (n, unit) = scale(iops, 1000.0, &["", "k", "M", "G"]);
        let iops = if unit.is_empty() { format!("{n:.0}") } else { format!("{n:.1}{unit}") };
        format!(
            "  steadystate  : attained={}, bw={}, iops={iops}, {what} {how}={:.3}%",
            if self.attained { "yes" } else { "no" },
            bw_words(self.mean(&self.bw)),
            self.criterion
        )
    }
}

/// The steady state of a job of one part (a translated fio job with steadystate is alone in
/// its group and its threads are judged together: `fio::translate`'s steady module), from
/// its timed phase's outcome; ops per second are the bytes over the phase's mean op size.
fn steady_of(j: &Job<'_>) -> Option<FioSteady> {
    let [(test, None)] = j.parts[..] else {
        return None;
    };
    let (p, s) = timed(shown(test)).find_map(|p| Some((p, p.load.as_ref()?.steady.as_ref()?)))?;
    let c = &s.criterion;
    let bytes = p.bytes_read + p.bytes_written;
    let op = if p.data_ops > 0 { bytes as f64 / p.data_ops as f64 } else { 0.0 };
    let duration = c.window_secs;
    let mut bw: Vec<u64> = s.window_bytes_per_s.iter().map(|b| *b as u64).collect();
    let mut iops: Vec<u64> = s
        .window_bytes_per_s
        .iter()
        .map(|b| if op > 0.0 { (b / op).round() as u64 } else { 0 })
        .collect();
    // fio's window not yet full: its criterion and measures stay 0, its unfilled samples 0.
    let full = bw.len() >= duration as usize;
    bw.resize(duration as usize, 0);
    iops.resize(duration as usize, 0);
    let on_iops = matches!(c.metric, SteadyMetric::Iops | SteadyMetric::IopsSlope);
    let series: Vec<f64> = if on_iops { &iops } else { &bw }.iter().map(|v| *v as f64).collect();
    let m = SteadyMeasures::of(&series).filter(|_| full);
    let slope_metric = matches!(c.metric, SteadyMetric::IopsSlope | SteadyMetric::BwSlope);
    let (criterion, max_deviation, slope) = match m {
        Some(m) if slope_metric => (m.criterion_percent(c.metric), 0.0, m.slope),
        Some(m) => (m.criterion_percent(c.metric), m.max_deviation, 0.0),
        None => (0.0, 0.0, 0.0),
    };
    Some(FioSteady {
        ss: format!("{}:{:.6}%", c.metric.name(), c.limit_percent as f32),
        duration,
        attained: s.held_at_secs.is_some(),
        metric: c.metric,
        criterion: if criterion.is_finite() { criterion } else { 0.0 },
        max_deviation,
        slope,
        bw,
        iops,
    })
}

/// fio's size words: `1.5MiB/s (1573kB/s)`-style with binary and decimal units.
fn bw_words(bytes_per_s: u64) -> String {
    let (bin, dec) = bw_units(bytes_per_s);
    format!("{bin} ({dec})")
}

/// A rate in binary and in decimal units: `1.5MiB/s`, `1.6MB/s`.
fn bw_units(bytes_per_s: u64) -> (String, String) {
    let b = bytes_per_s as f64;
    let (bin, bu) = scale(b, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB"]);
    let (dec, du) = scale(b, 1000.0, &["B", "kB", "MB", "GB", "TB"]);
    (format!("{bin:.1}{bu}/s"), format!("{dec:.1}{du}/s"))
}

/// fio's range of its jobs' rates on a group line: `54.1MiB/s-55.4MiB/s (56.7MB/s-58.1MB/s)`.
fn bw_range(lo: u64, hi: u64) -> String {
    let ((lb, ld), (hb, hd)) = (bw_units(lo), bw_units(hi));
    format!("{lb}-{hb} ({ld}-{hd})")
}

fn scale(mut v: f64, step: f64, units: &[&'static str]) -> (f64, &'static str) {
    let mut i = 0;
    while v >= step && i + 1 < units.len() {
        v /= step;
        i += 1;
    }
    (v, units[i])
}

/// Text close to fio's normal output, then fsbench's facts.
pub fn fio_text(report: &Report, ctx: &FioContext) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let tests: &[TestResult] =
        report.configs.first().map(|c| c.run.tests.as_slice()).unwrap_or(&[]);
    let all = fio_jobs(tests, ctx);
    let aggs = group_aggs(&all);
    // A job that never ran has no block of its own (as in fio's text); its group's line stays.
    for j in all.iter().filter(|j| j.unrun.is_none()) {
        let err = u8::from(j.failed);
        let _ = writeln!(
            o,
            "{}: (groupid={}, jobs={}): err={err:>2}: pid={}",
            j.name,
            j.group,
            j.threads,
            std::process::id()
        );
        for (word, d) in [("read", &j.read), ("write", &j.write)] {
            if d.ops == 0 {
                continue;
            }
            let _ = writeln!(
                o,
                "  {word}: IOPS={:.0}, BW={}({:.1}MiB/{}msec)",
                d.iops(),
                bw_words(d.bw_bytes()),
                d.bytes as f64 / 1048576.0,
                d.runtime_ms()
            );
            if let Some(f) = d.figures(j.quantiles()) {
                let us = |n: f64| n / 1000.0;
                let line = |o: &mut String, kind: &str, min: u64, max: u64, mean: f64, sd: f64| {
                    let _ = writeln!(
                        o,
                        "    {kind:>4} (usec): min={:.0}, max={:.0}, avg={:.2}, stdev={:.2}",
                        us(min as f64),
                        us(max as f64),
                        us(mean),
                        us(sd)
                    );
                };
                // An engine that submits apart: fio's three lines, and the clat table from
                // the completion latency; otherwise fsbench's clat is its lat (no submission
                // step is timed apart): one table, under each name the job asks for.
                let clat = d.split().and_then(|(m, c)| Some((m, c.figures(j.quantiles())?)));
                match &clat {
                    Some((m, c)) => {
                        line(
                            &mut o,
                            "slat",
                            m.min_nanos,
                            m.max_nanos,
                            m.mean_nanos,
                            m.stddev_nanos,
                        );
                        line(&mut o, "clat", c.min, c.max, c.mean, c.stddev);
                        line(&mut o, "lat", f.min, f.max, f.mean, f.stddev);
                    }
                    None => line(&mut o, "clat", f.min, f.max, f.mean, f.stddev),
                }
                for (on, kind) in [(j.pct.clat, "clat"), (j.pct.lat, "lat")] {
                    if !on {
                        continue;
                    }
                    let f = match (&clat, kind) {
                        (Some((_, c)), "clat") => c,
                        _ => &f,
                    };
                    let _ = writeln!(o, "    {kind} percentiles (usec):");
                    let at: Vec<(&f64, &u64)> = f.quantiles.iter().zip(&f.percentiles).collect();
                    for row in at.chunks(4) {
                        let cells: Vec<String> = row
                            .iter()
                            .map(|(q, v)| format!("{q:5.2}th=[{:>6}]", (*v + 500) / 1000))
                            .collect();
                        let _ = writeln!(o, "     | {},", cells.join(", "));
                    }
                }
            }
            let agg = aggs.get(&j.group).copied().unwrap_or_default();
            let rates = job_rates(j, ctx.sample_window_ms).unwrap_or_default();
            let k = usize::from(word == "write");
            o.push_str(&rate_lines(&rates[k], agg[k]));
        }
        let _ = writeln!(
            o,
            "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
            pct(j.usr, j.thread_wall),
            pct(j.sys, j.thread_wall),
            j.rusage.switches(),
            j.rusage.major_faults,
            j.rusage.minor_faults
        );
        if !j.depths.is_empty() {
            // fio's three lines of its depth distributions, one decimal.
            let d = &j.depths;
            let line = |names: [&str; 7], map: &[u64; 7], total: u64| -> String {
                let p = DepthCounts::percents(map, total);
                names
                    .iter()
                    .zip(p)
                    .map(|(k, v)| format!("{k}={v:.1}%"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let level = ["1", "2", "4", "8", "16", "32", ">=64"];
            let count = ["0", "4", "8", "16", "32", "64", ">=64"];
            let (ops, subs, comps) =
                (j.read.ops + j.write.ops, d.submit.iter().sum(), d.complete.iter().sum());
            let _ = writeln!(o, "  IO depths    : {}", line(level, &d.level, ops));
            let _ = writeln!(o, "     submit    : {}", line(count, &d.submit, subs));
            let _ = writeln!(o, "     complete  : {}", line(count, &d.complete, comps));
        }
        if let Some(ss) = steady_of(j) {
            let _ = writeln!(o, "{}", ss.line());
        }
        for (t, _) in &j.parts {
            if let TestStatus::Failed { reason } = &t.status {
                let _ = writeln!(o, "  error: {reason}");
            }
        }
        let _ = writeln!(o);
    }
    // fio's group lines: the group's bytes over its longest job's time, and the shortest and
    // longest job's run time.
    let mut groups: BTreeMap<u32, Vec<&Job<'_>>> = BTreeMap::new();
    for j in &all {
        groups.entry(j.group).or_default().push(j);
    }
    for (g, members) in &groups {
        let _ = writeln!(o, "Run status group {g} (all jobs):");
        for word in ["READ", "WRITE"] {
            let dirs: Vec<&Dir> = members
                .iter()
                .map(|j| if word == "READ" { &j.read } else { &j.write })
                .filter(|d| d.ops > 0)
                .collect();
            if dirs.is_empty() {
                continue;
            }
            let bytes: u64 = dirs.iter().map(|d| d.bytes).sum();
            let longest = dirs.iter().map(|d| d.wall_nanos).max().unwrap_or(0);
            let shortest = dirs.iter().map(|d| d.runtime_ms()).min().unwrap_or(0);
            let bw = if longest == 0 { 0 } else { (bytes as f64 * 1e9 / longest as f64) as u64 };
            // fio's slowest and fastest job (each clone a job) after the group's rate.
            let lo = dirs.iter().map(|d| d.bw_bytes()).min().unwrap_or(0);
            let hi = dirs.iter().map(|d| d.bw_bytes()).max().unwrap_or(0);
            let _ = writeln!(
                o,
                "  {word:>5}: bw={}, {}, io={:.1}MiB, run={shortest}-{}msec",
                bw_words(bw),
                bw_range(lo, hi),
                bytes as f64 / 1048576.0,
                longest / 1_000_000
            );
        }
    }
    let disks = disk_stats(tests);
    if !disks.is_empty() {
        let _ = writeln!(o, "\nDisk stats (read/write):");
        for (name, (d, wall_ms)) in &disks {
            let _ = writeln!(
                o,
                "  {name}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
                d.reads_completed,
                d.writes_completed,
                d.reads_merged,
                d.writes_merged,
                d.read_ticks_ms,
                d.write_ticks_ms,
                d.queue_ms,
                pct(d.busy_ms, *wall_ms).min(100.0)
            );
        }
    }
    let _ = writeln!(o, "\nfsbench:");
    match ctx.run_id {
        Some(id) => {
            let _ = writeln!(o, "  run id {id} (fsbench show {id})");
        }
        None => {
            let _ = writeln!(o, "  not stored (--no-store)");
        }
    }
    for t in tests {
        for p in timed(shown(t)) {
            let c = &p.cache;
            let _ = writeln!(
                o,
                "  {} / {}: cache {:?} ({}, {:.0}% resident, {}), {} qd{}{}",
                t.name,
                p.name,
                c.required,
                if c.met { "met" } else { "NOT met" },
                c.resident_fraction * 100.0,
                c.method,
                p.engine,
                p.iodepth,
                if p.direct { " direct" } else { " buffered" }
            );
            if let Some(d) = &p.device {
                let _ = writeln!(
                    o,
                    "    device: {} read requests ({:.1} MiB), {} write requests ({:.1} MiB), busy {} ms",
                    d.reads_completed,
                    d.read_bytes as f64 / 1048576.0,
                    d.writes_completed,
                    d.write_bytes as f64 / 1048576.0,
                    d.busy_ms
                );
                if d.shared {
                    let _ = writeln!(o, "      (device-wide: the target is a directory on a device fsbench did not make, so these count other processes' I/O too)");
                }
                if d.busy_overcounted {
                    let _ = writeln!(o, "      (busy time not measured: the kernel's io_ticks took in time from outside the phase)");
                }
            }
        }
        for d in ctx.differences.get(&t.id).into_iter().flatten() {
            let _ = writeln!(o, "  {}: differs from fio: {d}", t.name);
        }
    }
    for j in &all {
        if let Some(by) = j.unrun {
            let _ = writeln!(o, "  {}: never ran ([{by}] has exit_what=all)", j.name);
        }
        if j.clones_merged {
            let _ = writeln!(o, "  {}: {}", j.name, merged_words(j.threads));
        }
        if let Some(note) = rate_note(j, ctx.sample_window_ms) {
            let _ = writeln!(o, "  {}: {note}", j.name);
        }
    }
    o
}

/// Why a job has no bandwidth and IOPS samples where fio would have some.
const NO_RATE_SAMPLES: &str = "no bandwidth or IOPS samples (bw_*, iops_* are 0): this record keeps no series windows of the job's threads (a job that runs as a role beside its group's first job, a record made before fsbench kept them, or a run without a fixed --interval)";

/// Each group's aggregate bandwidth per direction (reads, writes), B/s, as fio's `agg`: the
/// group's bytes over its longest job's run time in whole ms.
fn group_aggs(jobs: &[Job<'_>]) -> BTreeMap<u32, [u64; 2]> {
    let mut parts: BTreeMap<u32, [(u64, u64); 2]> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.unrun.is_none()) {
        let e = parts.entry(j.group).or_default();
        for (k, d) in [&j.read, &j.write].into_iter().enumerate() {
            if d.bytes > 0 {
                e[k].0 += d.bytes;
                e[k].1 = e[k].1.max(d.runtime_ms());
            }
        }
    }
    parts
        .into_iter()
        .map(|(g, p)| {
            (g, p.map(|(bytes, ms)| bytes.saturating_mul(1000).checked_div(ms).unwrap_or(0)))
        })
        .collect()
}

/// fio's rate samples (reads, writes) of one thread's `windows` of `interval_nanos`: its full
/// windows (those that end within its `wall_nanos`), `window_ms` / interval of them to a
/// sample (one, when the series interval does not divide the window: a series widened past
/// it).
fn thread_rates(
    w: &ThreadWindows,
    interval_nanos: u64,
    wall_nanos: u64,
    window_ms: u64,
) -> [RateSamples; 2] {
    let interval_ms = (interval_nanos / 1_000_000).max(1);
    let group = if window_ms >= interval_ms && window_ms % interval_ms == 0 {
        (window_ms / interval_ms) as usize
    } else {
        1
    };
    let full = (wall_nanos / interval_nanos.max(1)) as usize;
    [
        RateSamples::of_windows(interval_ms, group, full, &w.read_bytes, &w.read_ops),
        RateSamples::of_windows(interval_ms, group, full, &w.write_bytes, &w.write_ops),
    ]
}

/// fio's bandwidth and IOPS samples of a job (reads, writes), from its timed phases' series:
/// a clone's from its thread's windows, a job of one thread from the phase's series, a job of
/// several threads (`group_reporting`) its threads' added up as fio adds them
/// ([`RateSamples::summed`]). `None` when the record has no windows for it
/// ([`NO_RATE_SAMPLES`]).
fn job_rates(j: &Job<'_>, window_ms: u64) -> Option<[RateSamples; 2]> {
    let window_ms = if window_ms == 0 { crate::fio::DEFAULT_SAMPLE_WINDOW_MS } else { window_ms };
    let mut acc = [RateSamples::default(); 2];
    let mut add = |r: [RateSamples; 2]| {
        for (a, r) in acc.iter_mut().zip(r) {
            *a = a.summed(&r);
        }
    };
    for (test, role) in &j.parts {
        if role.is_some() {
            return None;
        }
        for p in timed(shown(test)) {
            let s = p.series.as_ref()?;
            let rates = |t: &ThreadResult| {
                (!t.windows.is_empty())
                    .then(|| thread_rates(&t.windows, s.interval_nanos, t.wall_nanos, window_ms))
            };
            match j.clone {
                Some((i, _)) => add(rates(p.per_thread.get(j.first + i)?)?),
                None if p.per_thread.is_empty() => {
                    let w = ThreadWindows {
                        read_bytes: s.read_bytes.clone(),
                        read_ops: s.read_ops.clone(),
                        write_bytes: s.write_bytes.clone(),
                        write_ops: s.write_ops.clone(),
                    };
                    add(thread_rates(&w, s.interval_nanos, p.wall_nanos, window_ms));
                }
                None => {
                    for t in &p.per_thread {
                        add(rates(t)?);
                    }
                }
            }
        }
    }
    Some(acc)
}

/// fio's `bw_agg` (`per=`): a direction's mean sample (truncated to whole KiB/s, as fio's)
/// in percent of its group's aggregate bandwidth `agg` (B/s), at most 100; 100 when the
/// aggregate is 1 KiB/s or less, 0 without samples.
fn bw_agg(r: &RateSamples, agg: u64) -> f64 {
    if r.kib_per_s.samples == 0 {
        return 0.0;
    }
    if agg <= 1024 {
        return 100.0;
    }
    (r.kib_per_s.mean.trunc() * 100.0 / (agg as f64 / 1024.0)).min(100.0)
}

/// fio 3.33's sample keys of one direction (`bw_min` ... `iops_samples`), zero without samples
/// as fio writes them.
fn rates_json(r: &RateSamples, agg: u64) -> Map<String, Value> {
    let (b, i) = (&r.kib_per_s, &r.iops);
    let v = json!({
        "bw_min": b.min, "bw_max": b.max, "bw_agg": bw_agg(r, agg), "bw_mean": b.mean,
        "bw_dev": b.stddev(), "bw_samples": b.samples,
        "iops_min": i.min, "iops_max": i.max, "iops_mean": i.mean,
        "iops_stddev": i.stddev(), "iops_samples": i.samples,
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Add the sample keys to a job's `read`, `write` and `trim` (always none: fsbench does not
/// trim) of `v`, and say under `fsbench` where they differ ([`rate_note`]).
fn add_rates_json(v: &mut Value, j: &Job<'_>, ctx: &FioContext, agg: [u64; 2]) {
    let rates = job_rates(j, ctx.sample_window_ms);
    let r = rates.unwrap_or_default();
    for (key, r, agg) in
        [("read", &r[0], agg[0]), ("write", &r[1], agg[1]), ("trim", &RateSamples::default(), 0)]
    {
        if let Some(d) = v.get_mut(key).and_then(Value::as_object_mut) {
            d.extend(rates_json(r, agg));
        }
    }
    if let Some(note) = rate_note(j, ctx.sample_window_ms) {
        v["fsbench"]["rate_samples"] = json!(note);
    }
}

/// What differs in a job's rate samples, if anything: none kept ([`NO_RATE_SAMPLES`]), or
/// samples of other windows than `bwavgtime`'s: the series' own, when its interval does not
/// divide the window (a log's `log_avg_msec` such as 300 or 1000 beside fio's default, or a
/// series widened past it: a job that is not `time_based` keeps 200 windows at most, 100 s at
/// 500 ms).
fn rate_note(j: &Job<'_>, window_ms: u64) -> Option<String> {
    if j.unrun.is_some() {
        return None;
    }
    if job_rates(j, window_ms).is_none() {
        return Some(NO_RATE_SAMPLES.to_string());
    }
    let window_ms = if window_ms == 0 { crate::fio::DEFAULT_SAMPLE_WINDOW_MS } else { window_ms };
    let widest = j
        .parts
        .iter()
        .flat_map(|(t, _)| timed(shown(t)))
        .filter_map(|p| p.series.as_ref())
        .map(|s| s.interval_nanos / 1_000_000)
        .max()?;
    (widest > window_ms || window_ms % widest.max(1) != 0).then(|| {
        format!("bandwidth and IOPS samples of {widest} ms windows, not bwavgtime's {window_ms} ms: the job's series is at {widest} ms (a log's log_avg_msec that does not divide bwavgtime, or a series widened to fit a job that is not time_based: 200 windows at most)")
    })
}

/// fio's text lines of a direction's samples (`bw (  KiB/s): ...`, `iops        : ...`), as
/// `show_ddir_status` prints them: none without samples; in MiB/s when the mean passes
/// 1 GiB/s.
fn rate_lines(r: &RateSamples, agg: u64) -> String {
    let mut o = String::new();
    let b = &r.kib_per_s;
    if b.samples > 0 {
        let (mut min, mut max, mut mean, mut dev, mut unit) =
            (b.min as f64, b.max as f64, b.mean, b.stddev(), "KiB");
        if mean > 1024.0 * 1024.0 {
            (min, max, mean, dev, unit) =
                (min / 1024.0, max / 1024.0, mean / 1024.0, dev / 1024.0, "MiB");
        }
        o.push_str(&format!(
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={:3.2}%, avg={mean:5.2}, stdev={dev:5.2}, samples={}\n",
            min as u64,
            max as u64,
            bw_agg(r, agg),
            b.samples
        ));
    }
    let i = &r.iops;
    if i.samples > 0 {
        o.push_str(&format!(
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}\n",
            i.min,
            i.max,
            i.mean,
            i.stddev(),
            i.samples
        ));
    }
    o
}
