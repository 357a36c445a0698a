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
    notes: &mut [String],
) {
    for (job, t) in jobs.iter().zip(translated.iter_mut()) {
        let Some(t) = t.as_mut() else { continue };
        let Some(file) = t.file.as_mut() else { continue };
        let Ok(Some((f, _))) = job.str("filename") else { continue };
        if f.contains('/') || counts.get(f).is_none_or(|&n| n <= 1) {
            continue;
        }
        file.run_file = Some(f.to_string());
        file.unlink = job.bool("unlink").ok().flatten().filter(|u| *u);
        // verify= with do_verify=0 (the verify module's note says the job writes ordinary
        // data): on a file a later job reads, the blocks are written for its check, as fio
        // writes its headers for a later job's.
        let unchecked = |n: &String| n.contains(ORDINARY);
        if t.notes.iter().any(unchecked) {
            file.verify_writes = Some(true);
            for n in t.notes.iter_mut().filter(|n| unchecked(n)) {
                *n = format!("fio job file: {}", verified_note(job));
            }
            let tag = format!("[{}] ", job.name);
            for n in notes.iter_mut().filter(|n| n.starts_with(&tag) && unchecked(n)) {
                *n = format!("{tag}{}", verified_note(job));
            }
        }
    }
}

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
        // A job that runs beside its group's first job has a file of its own, and says so.
        let t = tr("[global]\nfilename=f.dat\nsize=1m\n[w]\nrw=write\n[r]\nrw=read\n");
        assert!(t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
        assert!(t.spec.tests[0].roles.iter().all(|r| r.file.run_file.is_none()));
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
