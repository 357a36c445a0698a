//! A fsbench test as a fio job (`fsbench suite show NAME --as-fio`), so people can run the same
//! I/O with fio and check fsbench against it. A test fio cannot express (a fileset, several timed
//! phases, `offset = "last"`, syncs inside the pattern, ...) is printed as a comment that says
//! why; details fio does differently are comments inside the job.

use crate::model::job::{Amount, OffsetMode, OpKind, SizeDist, SyncCall, TestDef};
use crate::model::job::{CacheReq, OpDef, Pattern, PhaseDef, Suite};
use crate::model::units::fmt_bytes;

/// The suite as a fio job file: a `[global]` section, then one job per test (with `stonewall`,
/// as fsbench runs tests one after another), or a comment for each test that cannot be one.
pub fn suite_to_fio(suite: &Suite) -> String {
    let mut out = format!(
        "; fio job file for fsbench suite `{}`, written by fsbench (fsbench suite show {} --as-fio).\n; Run it with: fio --directory=DIR THIS.fio\n[global]\nioengine=psync\nthread\ngroup_reporting\nstonewall\n",
        suite.name, suite.name
    );
    for t in &suite.tests {
        out.push('\n');
        match test_to_fio(t) {
            Ok(job) => out.push_str(&job),
            Err(why) => {
                out.push_str(&format!(
                    "; test {} ({}) cannot be expressed as a fio job:\n",
                    t.id, t.name
                ));
                for w in why {
                    out.push_str(&format!(";   {w}\n"));
                }
            }
        }
    }
    out
}

fn size(b: u64) -> String {
    fmt_bytes(b).to_lowercase()
}

/// One test as a fio job section, or the reasons it cannot be one. Each part of the job is
/// written by its own function; the reasons and comments come in the job's order.
pub fn test_to_fio(t: &TestDef) -> Result<String, Vec<String>> {
    let mut why = Vec::new();
    let mut comments = Vec::new();
    let (p, ramp) = timed_phase(t, &mut why)?;
    let ops = Ops::of(p, &mut why);
    if t.threads > 1 && t.files.shared && !t.files.whole && !ops.random {
        why.push("its threads share one file and each takes its own part sequentially (fio's jobs on one file each cover all of it)".into());
    }
    if t.files.prefill && ops.reads.is_empty() {
        comments.push("fsbench writes the whole file before this test; fio only lays it out (fallocate), so fio's writes are first writes where fsbench's overwrite".into());
    }
    if p.open.append {
        why.push("it opens the file with O_APPEND".into());
    }
    let mut job = format!("[{}]\n", t.id);
    job.push_str(&format!("description={}\n", t.name));
    job.push_str(&format!("rw={}\n", ops.rw));
    job.push_str(&engine_lines(t));
    job.push_str(&block_lines(&ops, &mut why, &mut comments));
    job.push_str(&amount_lines(t, p, ramp, &mut why));
    job.push_str(&sync_lines(p, ops.wbs, &mut why));
    job.push_str(&cache_lines(p, &mut comments));
    if !why.is_empty() {
        return Err(why);
    }
    let mut text = String::new();
    for c in comments {
        text.push_str(&format!("; {c}\n"));
    }
    text.push_str(&job);
    Ok(text)
}

/// The one timed phase, and the seconds of an untimed ramp of the same operations before it.
/// A fileset test, or one with several timed phases, is refused at once.
fn timed_phase<'t>(
    t: &'t TestDef,
    why: &mut Vec<String>,
) -> Result<(&'t PhaseDef, Option<f64>), Vec<String>> {
    if matches!(t.phases.first().map(|p| &p.pattern), Some(Pattern::Files(_))) {
        return Err(vec!["it works on a set of many files (fio's file-set options do not create, stat and unlink files in a pattern)".into()]);
    }
    let timed: Vec<_> = t.phases.iter().filter(|p| p.timed).collect();
    if timed.len() != 1 {
        why.push(format!("it has {} timed phases; a fio job has one", timed.len()));
        return Err(std::mem::take(why));
    }
    let p = timed[0];
    let mut ramp = None;
    for u in t.phases.iter().filter(|u| !u.timed) {
        match u.amount {
            Amount::Seconds(s) if u.pattern == p.pattern => ramp = Some(s),
            _ => why.push(format!(
                "untimed phase `{}` is not a ramp of the timed phase's operations",
                u.name
            )),
        }
    }
    Ok((p, ramp))
}

/// The timed phase's reads and writes as fio sees them.
struct Ops<'p> {
    reads: Vec<&'p OpDef>,
    writes: Vec<&'p OpDef>,
    /// The reads' size, when fixed.
    rbs: Option<u64>,
    /// The writes' size, when fixed.
    wbs: Option<u64>,
    random: bool,
    /// Random offsets each once per pass (fio's random map, its default).
    random_map: bool,
    /// fio's `random_distribution` (a skewed law), in fio's syntax.
    dist: Option<String>,
    /// fio's `percentage_random`, `[reads, writes]` (the phase's `random_percent`).
    random_percent: Option<[u8; 2]>,
    /// fio's `rw`.
    rw: &'static str,
    /// The one entry is a read whose ops are writes with this probability (fio's randrw).
    write_percent: Option<u8>,
}

impl<'p> Ops<'p> {
    /// The operations of `p`, with a reason in `why` for each thing fio cannot do with them.
    fn of(p: &'p PhaseDef, why: &mut Vec<String>) -> Ops<'p> {
        let data: Vec<&OpDef> = p.pattern.data().iter().filter(|o| o.kind.is_data()).collect();
        if data.len() != p.pattern.data().len() {
            why.push(
                "its pattern has syncs between operations (fio syncs by count: fsync=N)".into(),
            );
        }
        if p.unlink_each_pass {
            why.push("it unlinks and remakes its file after each pass (unlink_each_pass: fio's unlink_each_loop works per loop, and the export writes no loops)".into());
        }
        let reads: Vec<&OpDef> = data.iter().copied().filter(|o| o.kind == OpKind::Read).collect();
        let mut writes: Vec<&OpDef> =
            data.iter().copied().filter(|o| o.kind == OpKind::Write).collect();
        // A drawn read/write entry is fio's randrw when it is the only entry.
        let write_percent = match data.as_slice() {
            [o] if o.write_percent > 0 => {
                writes.push(o);
                Some(o.write_percent)
            }
            _ => {
                if data.iter().any(|o| o.write_percent > 0) {
                    why.push("it draws reads and writes in one entry beside other entries".into());
                }
                None
            }
        };
        let fixed = |o: &&OpDef| match o.size {
            SizeDist::Fixed(n) => Some(n),
            _ => None,
        };
        let all_same = |v: &[&OpDef]| v.windows(2).all(|w| w[0] == w[1]);
        if !all_same(&reads) || !all_same(&writes) {
            why.push("its reads (or writes) differ from one another in size or offset".into());
        }
        if data.iter().any(|o| o.skip != 0) {
            why.push("it skips bytes after sequential operations (skip; the export writes no `rw=...:N`)".into());
        }
        if data.iter().any(|o| o.offset == OffsetMode::Last) {
            why.push(
                "it uses offset = \"last\" (fio has no \"same offset as the previous op\")".into(),
            );
        }
        let rbs = reads.first().and_then(fixed);
        let wbs = writes.first().and_then(fixed);
        if (!reads.is_empty() && rbs.is_none()) || (!writes.is_empty() && wbs.is_none()) {
            why.push("its op sizes are drawn from a distribution (fio's bsrange draws multiples of the minimum, bssplit fixed shares)".into());
        }
        let random = data.first().map(|o| o.offset == OffsetMode::Random).unwrap_or(false);
        if data.iter().any(|o| (o.offset == OffsetMode::Random) != random) {
            why.push("it mixes sequential and random operations".into());
        }
        let rw = match (reads.is_empty(), writes.is_empty(), random) {
            (false, true, false) => "read",
            (false, true, true) => "randread",
            (true, false, false) => "write",
            (true, false, true) => "randwrite",
            (false, false, true) => "randrw",
            (false, false, false) => {
                why.push(
                    "it mixes sequential reads and writes (fio's rw keeps a position per direction)"
                        .into(),
                );
                "rw"
            }
            (true, true, _) => {
                why.push("it has no reads or writes".into());
                "read"
            }
        };
        let dist = p.random_distribution.as_ref().map(|d| d.fio_text());
        Ops {
            reads,
            writes,
            rbs,
            wbs,
            random,
            random_map: p.random_map,
            dist,
            random_percent: p.random_percent,
            rw,
            write_percent,
        }
    }
}

/// `ioengine`, `iodepth` and io_uring's options.
fn engine_lines(t: &TestDef) -> String {
    let mut job = String::new();
    if t.engine.name() != "psync" {
        // fio's engines of the same names (fio's `null` is fsbench's `null`).
        job.push_str(&format!("ioengine={}\n", t.engine.name()));
    }
    if t.iodepth > 1 {
        job.push_str(&format!("iodepth={}\n", t.iodepth));
    }
    let u = crate::workload::engines::uring::uring_opts(&t.engine_options);
    // fio submits each request as it is queued (iodepth_batch_submit=1), as fsbench does by
    // default above depth 1; at depth 1 there is only ever one request to submit.
    if u.batch_submit > 1 {
        job.push_str(&format!("iodepth_batch_submit={}\n", u.batch_submit));
    }
    if u.batch_complete > 1 {
        job.push_str(&format!("iodepth_batch_complete_min={}\n", u.batch_complete));
    }
    if u.sqpoll {
        job.push_str("sqthread_poll=1\n");
    }
    if u.iopoll {
        job.push_str("hipri=1\n");
    }
    if t.engine.name() == crate::workload::engines::uring::SPEC.name {
        if u.fixedbufs {
            job.push_str("fixedbufs=1\n");
        }
        // fio registers no file unless asked (fsbench's default is to register).
        if u.registerfiles && !u.sqpoll {
            job.push_str("registerfiles=1\n");
        }
    }
    job
}

/// `bs`, the alignment of random offsets and randrw's mix.
fn block_lines(ops: &Ops<'_>, why: &mut Vec<String>, comments: &mut Vec<String>) -> String {
    let mut job = String::new();
    match (ops.rbs, ops.wbs) {
        (Some(r), Some(w)) if r != w => job.push_str(&format!("bs={},{}\n", size(r), size(w))),
        (Some(b), _) | (None, Some(b)) => job.push_str(&format!("bs={}\n", size(b))),
        _ => {}
    }
    if ops.random {
        let ra = ops.reads.first().map(|o| o.align);
        let wa = ops.writes.first().map(|o| o.align);
        let align = ra.or(wa).unwrap_or(1);
        if ra.is_some() && wa.is_some() && ra != wa {
            why.push("its reads and writes have different alignments".into());
        }
        if Some(align) != ops.rbs.or(ops.wbs) {
            job.push_str(&format!("blockalign={}\n", size(align)));
        }
        if !ops.random_map {
            job.push_str("norandommap\n");
        }
        if let Some(d) = &ops.dist {
            job.push_str(&format!("random_distribution={d}\n"));
        }
        match ops.random_percent {
            Some([r, w]) if r == w => job.push_str(&format!("percentage_random={r}\n")),
            Some([r, w]) => job.push_str(&format!("percentage_random={r},{w}\n")),
            None => {}
        }
    }
    if let (Some(wp), "randrw") = (ops.write_percent, ops.rw) {
        job.push_str(&format!("rwmixread={}\n", 100 - u64::from(wp)));
    } else if ops.rw == "randrw" {
        let (nr, nw) = (ops.reads.len() as u64, ops.writes.len() as u64);
        if (nr * 100) % (nr + nw) != 0 {
            why.push(format!("its {nr} reads to {nw} writes is not a whole percentage"));
        }
        job.push_str(&format!("rwmixread={}\n", nr * 100 / (nr + nw)));
        comments.push("fsbench issues reads and writes in a fixed order; fio draws each direction at random with this ratio".to_string());
    }
    job
}

/// Threads, the file, the amount and the ramp.
fn amount_lines(t: &TestDef, p: &PhaseDef, ramp: Option<f64>, why: &mut Vec<String>) -> String {
    let mut job = String::new();
    if t.threads > 1 {
        job.push_str(&format!("numjobs={}\n", t.threads));
    }
    if t.files.shared {
        job.push_str(&format!("filename=fsbench-{}.dat\n", t.id));
    }
    match t.files.per_thread {
        // fio's size is the job's, over its files: each file size/nrfiles.
        Some(pt) => {
            let all = t.files.size_bytes().saturating_mul(u64::from(pt.files));
            job.push_str(&format!("size={}\nnrfiles={}\n", size(all), pt.files));
            if pt.service != crate::model::job::FileService::RoundRobin(1) {
                job.push_str(&format!("file_service_type={}\n", pt.service.name()));
            }
        }
        None => job.push_str(&format!("size={}\n", size(t.files.size_bytes()))),
    }
    match p.amount {
        Amount::Bytes(b) => job.push_str(&format!("io_size={}\n", size(b))),
        Amount::Seconds(s) => job.push_str(&format!("time_based\nruntime={s}\n")),
        Amount::Ops(n) => job.push_str(&format!("number_ios={n}\n")),
        Amount::Passes(n) if !t.files.shared || t.threads == 1 => {
            job.push_str(&format!("io_size={}\n", size(t.files.size_bytes() * u64::from(n))))
        }
        ref other => why.push(format!("its amount {other:?} has no fio equivalent")),
    }
    if let Some(s) = ramp {
        job.push_str(&format!("ramp_time={s}\n"));
    }
    job
}

/// Open flags and syncs: `direct`, `sync`, `fsync`/`fdatasync=N`, `end_fsync`.
fn sync_lines(p: &PhaseDef, wbs: Option<u64>, why: &mut Vec<String>) -> String {
    let mut job = String::new();
    if p.open.direct {
        job.push_str("direct=1\n");
    }
    if p.open.sync {
        job.push_str("sync=1\n");
    } else if p.open.dsync {
        job.push_str("sync=dsync\n");
    }
    let call = match p.sync.call.unwrap_or(SyncCall::Fsync) {
        SyncCall::Fdatasync => "fdatasync",
        _ => "fsync",
    };
    if let Some(n) = p.sync.every_ops {
        job.push_str(&format!("{call}={n}\n"));
    }
    if let Some(b) = p.sync.every_bytes {
        match wbs {
            Some(w) if b % w == 0 => job.push_str(&format!("{call}={}\n", b / w)),
            _ => why.push("it syncs every N bytes, not every N writes of one size".into()),
        }
    }
    match p.sync.at_end {
        None => {}
        Some(SyncCall::Fsync) => job.push_str("end_fsync=1\n"),
        Some(k) => {
            why.push(format!("it ends with {} (fio's end_fsync is an fsync)", k.kind().name()))
        }
    }
    job
}

/// The cache precondition as fio's `invalidate`.
fn cache_lines(p: &PhaseDef, comments: &mut Vec<String>) -> String {
    match p.cache {
        CacheReq::Uncached => "invalidate=1\n".into(),
        CacheReq::Any => "invalidate=0\n".into(),
        CacheReq::Direct => String::new(),
        CacheReq::Cached => {
            comments.push("fsbench reads the file into the cache first and checks it; fio only keeps what is cached (after laying the file out it usually is)".into());
            "invalidate=0\n".into()
        }
    }
}

#[cfg(test)]
mod tests {
    /// A phase's `random_percent` is written back as fio's `percentage_random` (one value when
    /// reads and writes share it), so the exported job draws as the test does.
    #[test]
    fn random_percent_is_exported_as_percentage_random() {
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        for (share, want) in
            [("30,60", "percentage_random=30,60\n"), ("25", "percentage_random=25\n")]
        {
            let text = format!("[a]\nrw=randrw\nsize=1m\npercentage_random={share}\n");
            let t = crate::fio::translate::translate(&text, "t.fio", "t", &|_| None).unwrap();
            let suite = crate::workload::validate::resolve(&t.spec, "t.fio", &ctx).unwrap();
            let job = super::suite_to_fio(&suite);
            assert!(job.contains(want), "{job}");
        }
    }

    /// Several files per thread are exported as fio's nrfiles (size over all of them) and a
    /// service other than the default as file_service_type, so the job reads back the same.
    #[test]
    fn several_files_per_thread_are_exported_as_nrfiles() {
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        for (fst, want) in
            [("", ""), ("file_service_type=random:2\n", "file_service_type=random:2\n")]
        {
            let text = format!("[a]\nrw=read\nbs=4k\nsize=64k\nnrfiles=4\n{fst}");
            let t = crate::fio::translate::translate(&text, "t.fio", "t", &|_| None).unwrap();
            let suite = crate::workload::validate::resolve(&t.spec, "t.fio", &ctx).unwrap();
            let job = super::suite_to_fio(&suite);
            assert!(job.contains("size=64k\nnrfiles=4\n") && job.contains(want), "{job}");
            assert_eq!(job.contains("file_service_type"), !want.is_empty(), "{job}");
            let back = crate::fio::translate::translate(&job, "e.fio", "e", &|_| None).unwrap();
            let f = back.spec.tests[0].file.as_ref().unwrap();
            assert_eq!(
                (f.per_thread, f.service.as_deref()),
                (Some(4), want.strip_prefix("file_service_type=").map(|w| w.trim()))
            );
        }
    }
}
