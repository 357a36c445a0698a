//! A plain `filename` (no path) that several jobs of a job file name: one file for all of
//! them, as fio's (a later job finds what an earlier one wrote), where fsbench otherwise gives
//! each test its own new file. A module of its own because it spans jobs: which jobs name the
//! file is known only once every job is translated, and a job after a `fill_device` job on the
//! file takes its size when it starts.
//!
//! fio 3.33's meaning, checked side by side (a write job, a stonewall, a read job with
//! `do_verify` on one plain name): the read job reads what the write job wrote, nothing is laid
//! out between them; the file stays until the end of the job file. fsbench's file of the run
//! ([`crate::model::job::RunFile`]) does the same for tests run one after another; its
//! repetitions are described there and in the `filename` row of the reference.

use super::{FioError, Job};
use crate::workload::spec::TestSpec;
use std::collections::BTreeMap;

/// A plain `filename` (no path) that several jobs name is one file for all of them, as fio's:
/// a file of the run ([`crate::model::job::RunFile`]), laid out by the first test that needs
/// it, kept for the later ones (`counts`: the jobs naming each plain name).
pub(super) fn share_plain_files(
    jobs: &[Job],
    translated: &mut [Option<TestSpec>],
    counts: &BTreeMap<String, usize>,
    notes: &mut Vec<String>,
) {
    // Per name, where the earlier tests on it leave the file's end.
    let mut ends: BTreeMap<String, u64> = BTreeMap::new();
    for (job, t) in jobs.iter().zip(translated.iter_mut()) {
        let Some(t) = t.as_mut() else { continue };
        let Some(file) = t.file.as_mut() else { continue };
        let Ok(Some((f, _))) = job.str("filename") else { continue };
        if f.contains('/') || counts.get(f).is_none_or(|&n| n <= 1) {
            continue;
        }
        file.run_file = Some(f.to_string());
        file.unlink = job.bool("unlink").ok().flatten().filter(|u| *u);
        let end = file_end(t);
        let earlier = ends.get(f).copied();
        let mut edit = Notes { test: &mut t.notes, all: notes, tag: format!("[{}] ", job.name) };
        // verify= with do_verify=0 (the verify module's note says the job writes ordinary
        // data): on a file a later job reads, the blocks are written for its check, as fio
        // writes its headers for a later job's.
        if edit.replace(ORDINARY, Some(verified_note(job))) {
            if let Some(file) = t.file.as_mut() {
                file.verify_writes = Some(true);
            }
        }
        let mut edit = Notes { test: &mut t.notes, all: notes, tag: format!("[{}] ", job.name) };
        if let Some(before) = earlier {
            // A read job's file is the earlier jobs', not one fsbench lays out for it.
            edit.rewrite(LAYS_OUT, FINDS);
            // A write job overwrites what the earlier jobs laid out, as fio's, up to their end;
            // past it fio lays out a new file (`layout::preallocate`).
            let writes = t.file.as_ref().is_some_and(|f| f.preallocate.is_some());
            if before < end && writes {
                edit.add(crate::fio::options::difference("write-file-shorter"));
            }
        }
        let e = ends.entry(f.to_string()).or_insert(0);
        *e = (*e).max(end);
    }
}

/// Where a test leaves its file's end: the end of its last thread's region, the whole
/// filesystem for a fill, nothing known for a size taken when it starts.
fn file_end(t: &TestSpec) -> u64 {
    use crate::workload::size::{Bytes, SizeExpr};
    if t.phases.iter().any(|p| p.amount.fill.is_some()) {
        return u64::MAX;
    }
    let Some(f) = &t.file else { return 0 };
    let SizeExpr::Bytes(size) = f.size else { return 0 };
    if f.take_size.is_some() {
        return 0;
    }
    let offset = f.offset.map_or(0, |Bytes(b)| b);
    let inc = f.offset_increment.map_or(0, |Bytes(b)| b);
    let last = u64::from(t.threads.saturating_sub(1)).saturating_mul(inc);
    offset.saturating_add(last).saturating_add(size)
}

/// A test's notes (`fio job file: ...`) and the translation's (`[job] ...`), edited together.
struct Notes<'a> {
    test: &'a mut Vec<String>,
    all: &'a mut Vec<String>,
    tag: String,
}

impl Notes<'_> {
    /// Replace (or, with `None`, remove) every note of the job containing `words`; whether
    /// there was one.
    fn replace(&mut self, words: &str, by: Option<String>) -> bool {
        let hit = self.test.iter().any(|n| n.contains(words));
        let mine =
            |n: &String, tag: &str| n.contains(words) && (tag.is_empty() || n.starts_with(tag));
        match by {
            Some(b) => {
                for n in self.test.iter_mut().filter(|n| mine(n, "")) {
                    *n = format!("fio job file: {b}");
                }
                let tag = self.tag.clone();
                for n in self.all.iter_mut().filter(|n| mine(n, &tag)) {
                    *n = format!("{tag}{b}");
                }
            }
            None => {
                self.test.retain(|n| !mine(n, ""));
                let tag = self.tag.clone();
                self.all.retain(|n| !mine(n, &tag));
            }
        }
        hit
    }

    /// Add a note of the job.
    fn add(&mut self, note: String) {
        self.test.push(format!("fio job file: {note}"));
        self.all.push(format!("{}{note}", self.tag));
    }

    /// Replace `words` by `by` inside every note of the job.
    fn rewrite(&mut self, words: &str, by: &str) {
        let tag = self.tag.clone();
        let all = self.all.iter_mut().filter(|n| n.starts_with(&tag));
        for n in self.test.iter_mut().chain(all).filter(|n| n.contains(words)) {
            *n = n.replace(words, by);
        }
    }
}

/// The verify module's words on a read job's file, and what they become on a file earlier
/// jobs of the run left.
const LAYS_OUT: &str = "fsbench lays out the job's file itself with blocks it can check (untimed), and after the job reads it back";
const FINDS: &str = "the job reads the file the earlier jobs naming it left (fsbench lays it out with blocks it can check, untimed, only if it is absent or shorter), and after the job fsbench reads it back";

/// The words of the verify module's note on `verify=` with `do_verify=0`.
const ORDINARY: &str = "with do_verify=0: the job writes fsbench's ordinary data";

/// The note of a job with `verify=` and `do_verify=0` on a file of the run.
fn verified_note(job: &Job) -> String {
    let alg = job.str("verify").ok().flatten().map_or("pattern", |(a, _)| a);
    format!("verify={alg} with do_verify=0 on a file later jobs read: the job writes blocks fsbench's check can read (fsbench's own check, not fio's headers) and reads nothing back; a later job's do_verify checks them")
}

/// A job without `size` on a plain filename an earlier job fills (`fill_device`, with
/// `create_serialize=0`): its file's size is what the fill left, known when the job starts
/// (fio lays the job's file out then); rounded down to `bs` (4096 when the job's blocks are
/// not one size). One thread from the start of the file: several threads or an `offset` would
/// each need a share of a size not yet known, which fsbench does not compute at run time.
pub(super) fn taken_size(
    job: &Job,
    threads: u32,
    offset: u64,
    increment: u64,
    bs: Option<u64>,
) -> Result<Option<u64>, FioError> {
    if threads > 1 || offset > 0 || increment > 0 {
        let k = if threads > 1 {
            "numjobs"
        } else if offset > 0 {
            "offset"
        } else {
            "offset_increment"
        };
        return Err(job.err(k, job.line(k), "without size= on a file an earlier job fills (fill_device), fsbench takes the file's size when the job starts, for one thread from the start of the file; give size="));
    }
    Ok(Some(bs.unwrap_or(4096)))
}

#[cfg(test)]
mod tests {
    use super::super::{translate, Translation};
    use crate::model::job::Suite;

    fn tr(text: &str) -> Translation {
        translate(text, "t.fio", "t", &|_| None).unwrap_or_else(|e| panic!("{e}"))
    }

    fn resolved(t: &Translation) -> Suite {
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        crate::workload::validate::resolve(&t.spec, "t.fio", &ctx).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Jobs one after another on one plain filename share one file of the run: the first
    /// names it first (each of its repetitions starts without it), the later ones find it; a
    /// plain name one job names, a path, or no filename stay as they were.
    #[test]
    fn a_plain_filename_several_jobs_name_is_one_file_of_the_run() {
        let text = "[global]\nfilename=f.dat\nbs=4k\nsize=1m\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n[rw]\nstonewall\nrw=randwrite\nunlink=1\n[own]\nstonewall\nfilename=g.dat\nrw=read\n";
        let t = tr(text);
        let s = resolved(&t);
        let run: Vec<_> = s.tests.iter().map(|t| t.files.run_file.clone()).collect();
        let first: Vec<_> = run.iter().map(|r| r.as_ref().map(|r| r.first)).collect();
        assert_eq!(first, [Some(true), Some(false), Some(false), None]);
        let r = run[0].as_ref().unwrap();
        assert_eq!((r.name.as_str(), r.file_name().as_str()), ("f.dat", "run.f.dat"));
        let unlink: Vec<_> = run.iter().map(|r| r.as_ref().map(|r| r.unlink)).collect();
        assert_eq!(unlink, [Some(false), Some(false), Some(true), None], "unlink=1 is the job's");
        assert!(s.tests[1].files.prefill, "a read job's file is laid out if absent or short");
        assert!(!t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
        // Write jobs lay out the file as fio's (fallocate; a no-op on a file the earlier jobs
        // left long enough): no difference; a later read job's verify note says it reads the
        // earlier jobs' file.
        let alloc: Vec<_> = t
            .spec
            .tests
            .iter()
            .map(|t| t.file.as_ref().and_then(|f| f.preallocate.clone()))
            .collect();
        let fallocate = Some("fallocate".to_string());
        assert_eq!(alloc, [fallocate.clone(), None, fallocate, None]);
        assert!(!t.notes.iter().any(|n| n.contains("write-file-")), "{:?}", t.notes);
        let t = tr("[global]\nfilename=f.dat\nbs=4k\nverify=crc32c\n[w]\nrw=write\nsize=1m\ndo_verify=0\n[r]\nstonewall\nrw=read\nsize=1m\n[w2]\nstonewall\nrw=write\nsize=2m\n");
        let f = |i: usize| t.spec.tests[i].file.clone().unwrap();
        assert_eq!((f(0).verify_writes, f(1).verify_writes), (Some(true), None));
        let says = |i: usize, w: &str| t.spec.tests[i].notes.iter().any(|n| n.contains(w));
        assert!(says(
            0,
            "on a file later jobs read: the job writes blocks fsbench's check can read"
        ));
        assert!(says(1, "the job reads the file the earlier jobs naming it left"));
        assert!(!says(1, "fsbench lays out the job's file itself"));
        assert!(t
            .notes
            .iter()
            .any(|n| n.starts_with("[r] verify=crc32c: the job reads the file the earlier")));
        // A write past the end the earlier jobs left: fio lays out a new file, fsbench keeps
        // the data and lays out the rest: said so.
        assert!(says(2, "write-file-shorter"), "{:?}", t.spec.tests[2].notes);
        // A job that runs beside its group's first job works on that job's file, the run's.
        let t = tr("[global]\nfilename=f.dat\nsize=1m\n[w]\nrw=write\n[r]\nrw=read\n");
        assert!(!t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
        let test = &t.spec.tests[0];
        assert_eq!(test.file.as_ref().and_then(|f| f.run_file.as_deref()), Some("f.dat"));
        assert_eq!(test.roles[0].same_file.as_deref(), Some("w"));
        // One that is the first of its group to name the name has its own file: said so.
        let t = tr("[global]\nsize=1m\n[a]\nfilename=f.dat\nrw=write\n[b]\nstonewall\nrw=write\n[c]\nfilename=f.dat\nrw=read\n");
        assert!(t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
    }

    /// The workload form says what is wrong with a file of the run.
    #[test]
    fn a_run_file_is_checked_where_it_is_written() {
        let base = "[[test]]\nid = \"a\"\nname = \"a\"\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { bytes = \"1M\" }\n";
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        for (file, why) in [
            ("{ size = \"1M\", run_file = \"a/b\" }", "without `/`"),
            ("{ size = \"1M\", run_file = \"\" }", "without `/`"),
            ("{ size = \"1M\", run_file = \"x\", path = \"/tmp/x\" }", "name two files"),
            ("{ size = \"1M\", run_file = \"x\", shared = false }", "shared = true"),
            ("{ size = \"1M\", take_size = \"4K\" }", "file.run_file"),
            ("{ size = \"1M\", run_file = \"x\", take_size = 0 }", "take_size = 0"),
        ] {
            let text = base.replace("name = \"a\"\n", &format!("name = \"a\"\nfile = {file}\n"));
            let s = crate::workload::spec::parse(&text, "w.toml").unwrap_or_else(|e| panic!("{e}"));
            let e = crate::workload::validate::resolve(&s, "w.toml", &ctx).unwrap_err().to_string();
            assert!(e.contains(why), "{file}: {e}");
        }
        let text = base.replace(
            "name = \"a\"\n",
            "name = \"a\"\nfile = { size = \"1M\", run_file = \"x\", unlink = true }\n",
        );
        let s = crate::workload::spec::parse(&text, "w.toml").unwrap();
        let s = crate::workload::validate::resolve(&s, "w.toml", &ctx).unwrap();
        assert!(s.tests[0].files.run_file.as_ref().is_some_and(|r| r.unlink && r.first));
    }
}
