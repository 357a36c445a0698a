//! Validation of fileset (metadata) tests: `fileset = { ... }` and patterns of file operations.
//!
//! A fileset is `count` slots; each slot holds a file or not. Slots live flat in one directory
//! or in a tree (`depth` levels of `fanout` directories, `files_per_dir` files per leaf). The
//! checks here run before any I/O, like those of data tests, and say how to fix the input.

use super::model::*;
use super::size::fmt_bytes;
use super::spec::{AmountSpec, FilesetSpec, OpSpec, PhaseSpec, SyncSpec, TestSpec};
use super::validate::{parse_call, resolve_size_dist, Loc, MAX_OP_BYTES};
use super::{ResolveCtx, WorkloadError};

/// Largest number of files in a fileset (the slot bitsets stay small: 12.5 MB at this count).
pub const MAX_FILES: u64 = 100_000_000;
/// Largest file in a fileset.
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// Default chunk of whole-file writes and reads.
pub const DEFAULT_WRITE_SIZE: u64 = 64 << 10;

pub(super) fn resolve_test(
    t: &TestSpec,
    fs: &FilesetSpec,
    origin: &str,
    ctx: &ResolveCtx,
) -> Result<TestDef, WorkloadError> {
    let loc = Loc { origin, test: &t.id, phase: None, entry: None };
    let (engine, iodepth) = super::validate::resolve_engine(t).map_err(|m| loc.err(m))?;
    if matches!(engine, EngineKind::IoUring | EngineKind::Mmap) {
        return Err(loc.err(format!("engine = \"{}\" applies to data tests (file = ...); the ops of a fileset test are system calls of their own (psync, or null for the harness's cost)", engine.name())));
    }
    if iodepth != 1 {
        return Err(loc.err("iodepth applies to data tests; the ops of a fileset test are synchronous (use threads for concurrency)"));
    }
    if t.direct == Some(true) {
        return Err(loc.err("direct = true applies to data tests; fileset ops read and write whole files through the page cache"));
    }
    let fileset = resolve_fileset(fs, t.threads, ctx).map_err(|m| loc.err(m))?;
    if t.phases.is_empty() {
        return Err(loc.err("no phases: add a [[test.phase]] with a pattern and an amount"));
    }
    let mut has_files = fileset.prefill;
    let mut phases = Vec::with_capacity(t.phases.len());
    for p in &t.phases {
        let ploc = Loc { origin, test: &t.id, phase: Some(&p.name), entry: None };
        let phase = resolve_phase(p, &fileset, t.threads, origin, &t.id, &ploc)?;
        let ops: Vec<OpKind> = phase
            .fileset_pattern
            .iter()
            .flat_map(|e| e.choices.iter().map(|(_, o)| o.kind))
            .collect();
        let creates = ops.contains(&OpKind::Create);
        let needs = ops.iter().find(|k| needs_file(**k));
        if let (Some(k), false, false) = (needs, has_files, creates) {
            return Err(ploc.err(format!(
                "this phase does `{}` on files nothing has created: set fileset.prefill = true or add a phase that creates them",
                k.name()
            )));
        }
        has_files |= creates;
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
        file: FileDef { size_bytes: 0, shared: true, prefill: false },
        fileset: Some(fileset),
        phases,
    })
}

/// Ops that need an existing file in their slot.
fn needs_file(k: OpKind) -> bool {
    matches!(
        k,
        OpKind::Unlink
            | OpKind::Stat
            | OpKind::Rename
            | OpKind::Replace
            | OpKind::Append
            | OpKind::Readwhole
    )
}

fn resolve_fileset(fs: &FilesetSpec, threads: u32, ctx: &ResolveCtx) -> Result<FilesetDef, String> {
    let layout = match (fs.flat, fs.tree) {
        (Some(true), None) => {
            let Some(count) = fs.count else {
                return Err("a flat fileset needs a count, e.g. fileset = { count = 10000, flat = true, size = \"4K\" }".into());
            };
            if count == 0 {
                return Err("fileset.count = 0: give the set at least one file".into());
            }
            Layout::Flat
        }
        (None | Some(false), Some(tr)) => {
            if tr.depth == 0 || tr.depth > 8 {
                return Err(format!("tree.depth = {} must be 1..8 (use flat = true for one directory)", tr.depth));
            }
            if tr.fanout == 0 {
                return Err("tree.fanout = 0: each directory needs at least one subdirectory".into());
            }
            if tr.files_per_dir == 0 {
                return Err("tree.files_per_dir = 0: each leaf directory needs at least one file".into());
            }
            let leaves = (tr.fanout as u128).pow(tr.depth);
            let total = leaves * tr.files_per_dir as u128;
            if total > MAX_FILES as u128 {
                return Err(format!(
                    "the tree holds {total} files (fanout^depth × files_per_dir), more than {MAX_FILES}; make it smaller"
                ));
            }
            if let Some(c) = fs.count {
                if c as u128 != total {
                    return Err(format!(
                        "count = {c} but the tree holds {}^{} × {} = {total} files; fix count or leave it out",
                        tr.fanout, tr.depth, tr.files_per_dir
                    ));
                }
            }
            Layout::Tree { depth: tr.depth, fanout: tr.fanout, files_per_dir: tr.files_per_dir }
        }
        (Some(_), Some(_)) => {
            return Err("a fileset is either flat = true or a tree = { ... }, not both".into())
        }
        (Some(false), None) | (None, None) => {
            return Err("say how the files are laid out: flat = true (one directory) or tree = { depth = 3, fanout = 10, files_per_dir = 100 }".into())
        }
    };
    let (count, layout) = match layout {
        Layout::Flat => {
            let c = ctx.scale.apply_count(fs.count.unwrap_or(0));
            if c > MAX_FILES {
                return Err(format!("fileset.count = {c} is more than {MAX_FILES}"));
            }
            (c, Layout::Flat)
        }
        Layout::Tree { depth, fanout, files_per_dir } => {
            let leaves = layout.leaves();
            let per = ctx.scale.apply_files_per_dir(files_per_dir, leaves);
            if (leaves as u128) * (per as u128) > MAX_FILES as u128 {
                return Err(format!("the scaled tree holds more than {MAX_FILES} files"));
            }
            (leaves * per, Layout::Tree { depth, fanout, files_per_dir: per })
        }
    };
    if count < threads as u64 {
        return Err(format!(
            "{count} files for {threads} threads: each thread needs at least one file slot; raise count or lower threads"
        ));
    }
    let size = resolve_size_dist(&fs.size)?;
    if size.max() > MAX_FILE_BYTES {
        return Err(format!(
            "file size up to {} is more than the {} limit for fileset files; use a file test for big files",
            fmt_bytes(size.max()),
            fmt_bytes(MAX_FILE_BYTES)
        ));
    }
    let write_size = fs.write_size.map(|b| b.0).unwrap_or(DEFAULT_WRITE_SIZE);
    if write_size == 0 || write_size > MAX_OP_BYTES {
        return Err(format!(
            "fileset.write_size = {} must be between 1 byte and {}",
            fmt_bytes(write_size),
            fmt_bytes(MAX_OP_BYTES)
        ));
    }
    Ok(FilesetDef { count, layout, size, prefill: fs.prefill, write_size })
}

fn resolve_phase(
    p: &PhaseSpec,
    fs: &FilesetDef,
    threads: u32,
    origin: &str,
    test: &str,
    loc: &Loc<'_>,
) -> Result<PhaseDef, WorkloadError> {
    if !p.open.is_empty() {
        return Err(loc.err("`open` flags are for file tests; fileset ops open their files themselves (use fsync = true for durability)"));
    }
    if p.cache == CacheReq::Cached || p.cache == CacheReq::Direct {
        return Err(loc.err("cache = \"cached\" is for file tests; a fileset phase takes \"any\" or \"uncached\" (drop caches before the phase)"));
    }
    if p.pattern.is_empty() {
        return Err(loc.err(
            "empty pattern: list at least one operation, e.g. { op = \"create\", pick = \"next\" }",
        ));
    }
    let mut pattern = Vec::new();
    for (i, o) in p.pattern.iter().enumerate() {
        let eloc = Loc { origin, test, phase: Some(&p.name), entry: Some(i) };
        let entry = resolve_entry(o, fs, threads, &eloc)?;
        let repeat = o.repeat.unwrap_or(1);
        if repeat == 0 {
            return Err(eloc.err("repeat = 0 would remove the entry; use repeat >= 1"));
        }
        for _ in 0..repeat {
            pattern.push(entry.clone());
        }
    }
    let amount = resolve_amount(&p.amount).map_err(|m| loc.err(m))?;
    if let Amount::Fill(_) = amount {
        let creates =
            pattern.iter().flat_map(|e| e.choices.iter()).any(|(_, o)| o.kind == OpKind::Create);
        if !creates {
            return Err(loc.err("amount.fill needs a create in the pattern: only creating files fills the filesystem"));
        }
    }
    let sync = resolve_sync(&p.sync).map_err(|m| loc.err(m))?;
    Ok(PhaseDef {
        name: p.name.clone(),
        timed: p.timed,
        cache: p.cache,
        open: OpenFlags::default(),
        pattern: Vec::new(),
        amount,
        sync,
        fileset_pattern: pattern,
    })
}

fn resolve_entry(
    o: &OpSpec,
    fs: &FilesetDef,
    threads: u32,
    loc: &Loc<'_>,
) -> Result<MetaEntry, WorkloadError> {
    match (&o.op, &o.choose) {
        (Some(_), None) => {
            if o.weight.is_some() {
                return Err(loc.err("weight only applies to the ops inside choose = [...]"));
            }
            Ok(MetaEntry { choices: vec![(1, resolve_op(o, fs, threads, loc)?)] })
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
                choices.push((w, resolve_op(c, fs, threads, loc)?));
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

const FILESET_OPS: &str =
    "create, unlink, stat, readdir, mkdir, rmdir, rename, replace, append, readwhole, fsyncdir";

fn resolve_op(
    o: &OpSpec,
    fs: &FilesetDef,
    threads: u32,
    loc: &Loc<'_>,
) -> Result<MetaOp, WorkloadError> {
    let name = o.op.as_deref().unwrap_or_default();
    let kind = match OpKind::from_name(name) {
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
        _ => return Err(loc.err(format!("unknown op `{name}`; fileset ops are {FILESET_OPS}"))),
    };
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
                "unknown pick `{other}`; known: next (slots in order), random, shuffle (each slot once per pass, in random order)"
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
            let d = resolve_size_dist(spec).map_err(|m| loc.err(m))?;
            if d.max() > MAX_FILE_BYTES {
                return Err(
                    loc.err(format!("append size is more than {}", fmt_bytes(MAX_FILE_BYTES)))
                );
            }
            Some(d)
        }
    };
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
        )
    {
        return Err(loc.err(
            "fsync_dir = true applies to create, unlink, rename, replace, mkdir and rmdir (ops that change a directory)",
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
    Ok(MetaOp { kind, pick, fsync, fsync_dir, size })
}

fn resolve_amount(a: &AmountSpec) -> Result<Amount, String> {
    if a.bytes.is_some() {
        return Err("amount.bytes is for file tests; a fileset phase takes ops, seconds, passes (every slot once), share (of a pass) or fill".into());
    }
    let given = [
        a.ops.is_some(),
        a.seconds.is_some(),
        a.passes.is_some(),
        a.fill.is_some(),
        a.share.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if given != 1 {
        return Err("amount needs exactly one of ops, seconds, passes, share, fill, e.g. amount = { passes = 1 }".into());
    }
    if let Some(f) = a.share {
        if !(f.is_finite() && f > 0.0 && f <= 1.0) {
            return Err(format!(
                "amount.share = {f}: give the share of one pass, in (0, 1], e.g. 0.2"
            ));
        }
        return Ok(Amount::Share(f));
    }
    if let Some(r) = super::validate::ops_or_seconds(a) {
        return r;
    }
    if let Some(p) = a.passes {
        if p == 0 {
            return Err("amount.passes = 0: nothing would be done".into());
        }
        return Ok(Amount::Passes(p));
    }
    let f = a.fill.unwrap_or(0.0);
    if !(f.is_finite() && f > 0.0 && f <= 1.0) {
        return Err(format!(
            "amount.fill = {f}: give the share of the filesystem to fill, in (0, 1], e.g. 0.9"
        ));
    }
    Ok(Amount::Fill(f))
}

fn resolve_sync(s: &SyncSpec) -> Result<SyncPolicy, String> {
    if s.every_bytes.is_some() || s.every_ops.is_some() || s.call.is_some() {
        return Err("periodic sync (every_bytes, every_ops, call) is for file tests; in a fileset phase use fsync = true on ops, fsyncdir, or sync.at_end = \"syncfs\"".into());
    }
    let at_end = match &s.at_end {
        Some(c) => parse_call(c, "sync.at_end")?,
        None => None,
    };
    if matches!(at_end, Some(SyncCall::Fsync | SyncCall::Fdatasync)) {
        return Err("sync.at_end in a fileset phase is `none` or `syncfs` (the whole filesystem); per-file fsync is fsync = true on the op".into());
    }
    Ok(SyncPolicy { every_bytes: None, every_ops: None, call: None, at_end })
}

#[cfg(test)]
mod tests {
    use crate::workload::{model::*, spec, validate, ResolveCtx, Scale};

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

    #[test]
    fn tree_fileset_resolves_and_scales() {
        let t = test(
            "{ tree = { depth = 2, fanout = 10, files_per_dir = 100 }, size = { lognormal = { median = \"20K\", sigma = 0.6, min = \"10K\", max = \"150K\" } } }",
            "[{ op = \"create\", fsync = true, fsync_dir = true }, { op = \"stat\", pick = \"shuffle\" }]",
            "{ passes = 1 }",
        );
        let s = load(&t, Scale::Paper).unwrap();
        let fs = s.tests[0].fileset.as_ref().unwrap();
        assert_eq!(fs.count, 10_000);
        assert_eq!(fs.write_size, 64 << 10);
        let p = &s.tests[0].phases[0];
        assert_eq!(p.fileset_pattern.len(), 2);
        let c = p.fileset_pattern[0].choices[0].1;
        assert!(c.fsync && c.fsync_dir && c.pick == Pick::Next);
        assert_eq!(p.fileset_pattern[1].choices[0].1.pick, Pick::Shuffle);
        let q = load(&t, Scale::Quick).unwrap();
        assert_eq!(q.tests[0].fileset.as_ref().unwrap().count, 2500, "files_per_dir 100 -> 25");
    }

    #[test]
    fn choose_entries_and_weights() {
        let t = test(
            "{ count = 100, flat = true, size = { uniform = [\"500\", \"9K\"] } }",
            "[{ op = \"create\" }, { choose = [{ op = \"create\", weight = 5 }, { op = \"unlink\", weight = 3, pick = \"random\" }] }]",
            "{ ops = 10 }",
        );
        let s = load(&t, Scale::Paper).unwrap();
        let e = &s.tests[0].phases[0].fileset_pattern[1];
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
