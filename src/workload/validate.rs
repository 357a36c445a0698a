//! From the written spec to the typed model: resolve sizes, check every value, before any I/O.
//!
//! Each error names where it is (test, phase, pattern entry) and how to fix it.

use super::model::*;
use super::scale::Scale;
use super::size::{fmt_bytes, SizeDistSpec};
use super::spec::{AmountSpec, OpSpec, PhaseSpec, SuiteSpec, SyncSpec, TestSpec};
use super::WorkloadError;

/// What resolution needs from the outside world.
#[derive(Debug, Clone, Copy)]
pub struct ResolveCtx {
    /// Size scaling.
    pub scale: Scale,
    /// Bytes of free memory (for `freemem/N` sizes).
    pub free_memory: u64,
}

/// Largest thread count accepted.
pub const MAX_THREADS: u32 = 1024;
/// Largest single transfer accepted.
pub const MAX_OP_BYTES: u64 = 256 << 20;

pub(super) struct Loc<'a> {
    pub(super) origin: &'a str,
    pub(super) test: &'a str,
    pub(super) phase: Option<&'a str>,
    pub(super) entry: Option<usize>,
}

impl Loc<'_> {
    pub(super) fn err(&self, message: impl Into<String>) -> WorkloadError {
        let mut location = format!("test {}", self.test);
        if let Some(p) = self.phase {
            location.push_str(&format!(", phase `{p}`"));
        }
        if let Some(i) = self.entry {
            location.push_str(&format!(", pattern entry {}", i + 1));
        }
        WorkloadError::Invalid {
            origin: self.origin.to_string(),
            location,
            message: message.into(),
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
        if !seen.insert(t.id.as_str()) {
            return Err(Loc { origin, test: &t.id, phase: None, entry: None }
                .err("duplicate test id; give every [[test]] its own id"));
        }
        tests.push(resolve_test(t, origin, ctx)?);
    }
    Ok(Suite {
        name: spec.suite.name.clone().unwrap_or_else(|| origin.to_string()),
        description: spec.suite.description.clone().unwrap_or_default(),
        tests,
    })
}

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
    let file_spec = match (&t.file, &t.fileset) {
        (Some(f), None) => f,
        (None, Some(fs)) => return super::fileset::resolve_test(t, fs, origin, ctx),
        (Some(_), Some(_)) => {
            return Err(loc.err(
                "a test has either `file` (one data file) or `fileset` (many files), not both",
            ))
        }
        (None, None) => {
            return Err(loc.err(
                "missing `file` or `fileset`: add file = { size = \"128M\" } for a data test or fileset = { count = 1000, flat = true, size = \"4K\" } for a metadata test",
            ))
        }
    };
    let (engine, iodepth) = resolve_engine(t).map_err(|m| loc.err(m))?;
    let direct = t.direct.unwrap_or(false);
    let raw_size = file_spec.size.resolve(ctx.free_memory);
    let size_bytes = ctx.scale.apply(raw_size);
    if size_bytes == 0 {
        return Err(loc.err("file size is 0: give the file a size such as \"128M\""));
    }
    let file = FileDef { size_bytes, shared: file_spec.shared, prefill: file_spec.prefill };
    if engine == EngineKind::Mmap && !file.prefill {
        return Err(loc.err("engine = \"mmap\" maps the file as it is when a phase starts, so it needs file.prefill = true (a file that grows would need a new mapping per write)"));
    }
    if t.phases.is_empty() {
        return Err(loc.err("no phases: add a [[test.phase]] with a pattern and an amount"));
    }
    let mut phases = Vec::with_capacity(t.phases.len());
    // Whether the file holds data before each phase: prefilled, or written by an earlier phase.
    let mut has_data = file.prefill;
    for p in &t.phases {
        let ploc = Loc { origin, test: &t.id, phase: Some(&p.name), entry: None };
        let sizes = (raw_size, size_bytes);
        let mut phase = resolve_phase(p, &file, t.threads, ctx, sizes, &ploc, origin, &t.id)?;
        phase.open.direct |= direct;
        phase.cache = match (phase.open.direct, phase.cache) {
            (true, CacheReq::Any | CacheReq::Direct) => CacheReq::Direct,
            (true, c) => {
                return Err(ploc.err(format!(
                    "cache = \"{}\" with O_DIRECT: direct I/O bypasses the page cache, so there is nothing to prepare; leave cache out (it is reported as \"direct\")",
                    if c == CacheReq::Cached { "cached" } else { "uncached" }
                )))
            }
            (false, CacheReq::Direct) => {
                return Err(ploc.err(
                    "cache = \"direct\" needs O_DIRECT: set direct = true on the test (or open = [\"direct\"])",
                ))
            }
            (false, c) => c,
        };
        check_caps(engine, iodepth, &phase).map_err(|m| ploc.err(m))?;
        let reads = phase.pattern.iter().any(|o| o.kind == OpKind::Read);
        if reads && !has_data && !phase.open.trunc {
            return Err(ploc.err(
                "this phase reads a file nothing has written: set file.prefill = true or add a writing phase before it",
            ));
        }
        if phase.pattern.iter().any(|o| o.kind == OpKind::Write) {
            has_data = true;
        }
        phases.push(phase);
    }
    if !phases.iter().any(|p| p.timed) {
        return Err(loc.err("no timed phase: set timed = true on at least one phase"));
    }
    Ok(TestDef {
        id: t.id.clone(),
        name: t.name.clone(),
        description: t.description.clone(),
        threads: t.threads,
        engine,
        iodepth,
        file,
        fileset: None,
        phases,
    })
}

#[allow(clippy::too_many_arguments)]
fn resolve_phase(
    p: &PhaseSpec,
    file: &FileDef,
    threads: u32,
    ctx: &ResolveCtx,
    (raw_file, scaled_file): (u64, u64),
    loc: &Loc<'_>,
    origin: &str,
    test: &str,
) -> Result<PhaseDef, WorkloadError> {
    let open = parse_open(&p.open).map_err(|m| loc.err(m))?;
    if p.pattern.is_empty() {
        return Err(loc.err(
            "empty pattern: list at least one operation, e.g. { op = \"read\", size = \"4K\" }",
        ));
    }
    let mut pattern = Vec::new();
    let mut prev: Option<OpDef> = None;
    for (i, o) in p.pattern.iter().enumerate() {
        let eloc = Loc { origin, test, phase: Some(&p.name), entry: Some(i) };
        let op = resolve_op(o, prev.as_ref(), file, &eloc)?;
        let repeat = o.repeat.unwrap_or(1);
        if repeat == 0 {
            return Err(eloc.err("repeat = 0 would remove the entry; use repeat >= 1"));
        }
        for _ in 0..repeat {
            pattern.push(op);
        }
        if op.kind.is_data() {
            prev = Some(op);
        }
    }
    let sequential = pattern.iter().any(|o| o.offset == OffsetMode::Sequential && o.kind.is_data());
    let amount = resolve_amount(&p.amount, ctx, sequential).map_err(|m| loc.err(m))?;
    if let Amount::Passes(_) = amount {
        let region = if file.shared { file.size_bytes / threads as u64 } else { file.size_bytes };
        if region == 0 {
            return Err(loc.err(format!(
                "the file ({}) split over {threads} threads leaves no bytes per thread",
                fmt_bytes(file.size_bytes)
            )));
        }
    }
    if matches!(amount, Amount::Bytes(_) | Amount::Passes(_))
        && !pattern.iter().any(|o| o.kind.is_data())
    {
        return Err(loc.err("a pattern of only syncs never moves bytes: use amount = { ops = N } or add a read/write"));
    }
    let sync = resolve_sync(&p.sync, ctx, raw_file, scaled_file).map_err(|m| loc.err(m))?;
    Ok(PhaseDef {
        name: p.name.clone(),
        timed: p.timed,
        cache: p.cache,
        open,
        pattern,
        amount,
        sync,
        fileset_pattern: Vec::new(),
    })
}

fn parse_open(flags: &[String]) -> Result<OpenFlags, String> {
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
                return Err(format!(
                    "unknown open flag `{other}`; known: create, trunc, append, dsync, sync, direct"
                ))
            }
        }
    }
    Ok(f)
}

fn resolve_op(
    o: &OpSpec,
    prev: Option<&OpDef>,
    file: &FileDef,
    loc: &Loc<'_>,
) -> Result<OpDef, WorkloadError> {
    let Some(name) = o.op.as_deref() else {
        return Err(loc.err(
            "missing op: write e.g. { op = \"read\", size = \"4K\" } (choose is for fileset tests)",
        ));
    };
    let kind = match name {
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
            return Err(
                loc.err(format!("unknown op `{other}`; known: read, write, fsync, fdatasync"))
            )
        }
    };
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
        return Ok(OpDef {
            kind,
            size: SizeDist::Fixed(0),
            offset: OffsetMode::Sequential,
            align: 1,
        });
    }
    let offset = match o.offset.as_deref().unwrap_or("sequential") {
        "sequential" | "seq" => OffsetMode::Sequential,
        "random" | "rand" => OffsetMode::Random,
        "last" => OffsetMode::Last,
        other => {
            return Err(loc.err(format!(
                "unknown offset `{other}`; known: sequential, random, last (the previous operation's offset)"
            )))
        }
    };
    let size = match (&o.size, offset, prev) {
        (Some(spec), ..) => resolve_size_dist(spec).map_err(|m| loc.err(m))?,
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
    if size.max() > file.size_bytes {
        return Err(loc.err(format!(
            "op size {} is larger than the file ({}); make the file bigger or the op smaller",
            fmt_bytes(size.max()),
            fmt_bytes(file.size_bytes)
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
    Ok(OpDef { kind, size, offset, align })
}

/// Largest queue depth accepted by any engine.
pub const MAX_IODEPTH: u32 = crate::engine::ioengine::NULL_MAX_DEPTH;

/// The test's `engine` and `iodepth`, parsed (their fit to the engine is [`check_caps`]'s).
pub(super) fn resolve_engine(t: &TestSpec) -> Result<(EngineKind, u32), String> {
    let engine = match t.engine.as_deref() {
        None => EngineKind::default(),
        Some(n) => EngineKind::from_name(n).ok_or_else(|| {
            let known: Vec<&str> = EngineKind::ALL.iter().map(|e| e.name()).collect();
            format!("unknown engine `{n}`; known: {}", known.join(", "))
        })?,
    };
    let iodepth = t.iodepth.unwrap_or(1);
    if iodepth == 0 || iodepth > MAX_IODEPTH {
        return Err(format!(
            "iodepth = {iodepth} must be 1..{MAX_IODEPTH} (requests each thread keeps in flight)"
        ));
    }
    Ok((engine, iodepth))
}

/// A phase's use of queue depth and O_DIRECT against the engine's capabilities, once, here.
fn check_caps(engine: EngineKind, iodepth: u32, phase: &PhaseDef) -> Result<(), String> {
    let mut sizes = phase.pattern.iter().filter(|o| o.kind.is_data()).map(|o| {
        let size = match o.size {
            SizeDist::Fixed(n) => Some(n),
            _ => None,
        };
        (size, (o.offset == OffsetMode::Random).then_some(o.align))
    });
    engine.caps().check(engine.name(), iodepth, phase.open.direct, &mut sizes)?;
    let most = phase.pattern.iter().map(|o| o.size.max()).max().unwrap_or(0);
    if most.saturating_mul(iodepth as u64) > MAX_OP_BYTES * 4 {
        return Err(format!(
            "iodepth = {iodepth} × ops of up to {} needs more than {} of buffers per thread; lower iodepth or the op size",
            fmt_bytes(most),
            fmt_bytes(MAX_OP_BYTES * 4)
        ));
    }
    Ok(())
}

/// A size distribution as written, checked: ranges not reversed, log-normal bounds that hold
/// enough of the distribution for redrawing to be cheap.
pub fn resolve_size_dist(spec: &SizeDistSpec) -> Result<SizeDist, String> {
    Ok(match spec {
        SizeDistSpec::Fixed(b) => SizeDist::Fixed(b.0),
        SizeDistSpec::Uniform { uniform: [lo, hi] } => {
            if lo.0 > hi.0 {
                return Err(format!(
                    "uniform range [{}, {}] is reversed; write [min, max]",
                    fmt_bytes(lo.0),
                    fmt_bytes(hi.0)
                ));
            }
            SizeDist::Uniform(lo.0, hi.0)
        }
        SizeDistSpec::LogNormal { lognormal: l } => {
            let (median, min, max) = (l.median.0, l.min.0, l.max.0);
            if !(l.sigma.is_finite() && l.sigma > 0.0 && l.sigma <= 4.0) {
                return Err(format!(
                    "lognormal sigma = {} must be in (0, 4]; 0.5 to 1 gives the usual skew of file sizes",
                    l.sigma
                ));
            }
            if median == 0 {
                return Err("lognormal median = 0: give a size such as \"20K\"".into());
            }
            if !(min <= median && median <= max && min < max) {
                return Err(format!(
                    "lognormal bounds must satisfy min <= median <= max with min < max; got min {}, median {}, max {}",
                    fmt_bytes(min),
                    fmt_bytes(median),
                    fmt_bytes(max)
                ));
            }
            let d = SizeDist::LogNormal { median, sigma: l.sigma, min, max };
            let mass = d.mass_in_bounds();
            if mass < 0.01 {
                return Err(format!(
                    "only {:.2}% of this lognormal lies within [min, max]; widen the bounds or change sigma (sizes outside are redrawn)",
                    mass * 100.0
                ));
            }
            d
        }
    })
}

/// `amount.ops` or `amount.seconds`, checked, when given: shared by data and fileset tests.
pub(super) fn ops_or_seconds(a: &AmountSpec) -> Option<Result<Amount, String>> {
    if let Some(n) = a.ops {
        return Some(if n == 0 {
            Err("amount.ops = 0: nothing would be done".into())
        } else {
            Ok(Amount::Ops(n))
        });
    }
    let s = a.seconds?;
    Some(if s.is_finite() && s > 0.0 {
        Ok(Amount::Seconds(s))
    } else {
        Err(format!("amount.seconds = {s}: use a positive number of seconds"))
    })
}

fn resolve_amount(a: &AmountSpec, ctx: &ResolveCtx, sequential: bool) -> Result<Amount, String> {
    if a.share.is_some() {
        return Err("amount.share is for fileset tests (a share of the file slots); use bytes, ops, seconds or passes".into());
    }
    if a.fill.is_some() {
        return Err("amount.fill is for fileset tests (it fills the filesystem with files); use bytes, ops, seconds or passes".into());
    }
    let given = [a.bytes.is_some(), a.ops.is_some(), a.seconds.is_some(), a.passes.is_some()]
        .iter()
        .filter(|x| **x)
        .count();
    if given != 1 {
        return Err("amount needs exactly one of bytes, ops, seconds, passes, e.g. amount = { bytes = \"128M\" }".into());
    }
    if let Some(b) = a.bytes {
        let b = ctx.scale.apply(b.resolve(ctx.free_memory));
        if b == 0 {
            return Err("amount.bytes = 0: nothing would be done".into());
        }
        return Ok(Amount::Bytes(b));
    }
    if let Some(r) = ops_or_seconds(a) {
        return r;
    }
    let p = a.passes.unwrap_or(0);
    if p == 0 {
        return Err("amount.passes = 0: nothing would be done".into());
    }
    if !sequential {
        return Err("amount.passes needs a sequential read or write in the pattern; use bytes or ops for random patterns".into());
    }
    Ok(Amount::Passes(p))
}

pub(super) fn parse_call(s: &str, what: &str) -> Result<Option<SyncCall>, String> {
    match s {
        "none" => Ok(None),
        "fsync" => Ok(Some(SyncCall::Fsync)),
        "fdatasync" => Ok(Some(SyncCall::Fdatasync)),
        "syncfs" => Ok(Some(SyncCall::Syncfs)),
        other => Err(format!("{what} = `{other}`; known: none, fsync, fdatasync, syncfs")),
    }
}

/// Sync intervals scale with the test's file (`scaled_file / raw_file`), not with `--scale`
/// directly, so the 4 MiB floor on files cannot change how many syncs a test issues.
fn resolve_sync(
    s: &SyncSpec,
    ctx: &ResolveCtx,
    raw_file: u64,
    scaled_file: u64,
) -> Result<SyncPolicy, String> {
    let every_bytes = match s.every_bytes {
        Some(b) => {
            let raw = b.resolve(ctx.free_memory) as u128;
            let b = if raw_file == 0 {
                raw as u64
            } else {
                (raw * scaled_file as u128 / raw_file as u128) as u64
            };
            if b == 0 {
                return Err("sync.every_bytes = 0: use a positive size such as \"10M\"".into());
            }
            Some(b)
        }
        None => None,
    };
    if s.every_ops == Some(0) {
        return Err("sync.every_ops = 0: use a positive count".into());
    }
    let periodic = every_bytes.is_some() || s.every_ops.is_some();
    let call = match &s.call {
        Some(c) => parse_call(c, "sync.call")?,
        None if periodic => Some(SyncCall::Fsync),
        None => None,
    };
    if call == Some(SyncCall::Syncfs) {
        return Err("sync.call = \"syncfs\" is not a periodic sync; use fsync or fdatasync (syncfs is for at_end)".into());
    }
    if periodic && call.is_none() {
        return Err(
            "sync.call = \"none\" with every_bytes/every_ops: pick fsync or fdatasync".into()
        );
    }
    let at_end = match &s.at_end {
        Some(c) => parse_call(c, "sync.at_end")?,
        None => None,
    };
    Ok(SyncPolicy { every_bytes, every_ops: s.every_ops, call, at_end })
}
