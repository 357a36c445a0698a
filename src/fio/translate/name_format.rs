//! fio's file names: a data job without `filename` works on files fio names by
//! `filename_format` (default `$jobname.$jobnum.$filenum`) in `directory`, and fsbench names
//! its own files (in its work directory, removed with the run) the same way, so that a job's
//! files have the names fio's have. A module of its own because the names span jobs: fio's
//! jobs whose names come out the same use the same file, which fsbench expresses with a plain
//! `filename` (one shared file) or refuses.
//!
//! fio 3.33's meaning (`init.c`: `make_filename`, `add_job`; `filesetup.c`: `add_file`),
//! checked by running it:
//! - each keyword is replaced wherever it is, matched in any case, in the order `$jobname`
//!   (the section's name, not `name=`), `$jobnum` (the clone's number, 0 for the job itself),
//!   `$filenum`, `$clientuid` (the client's address, empty outside client/server mode); a `$`
//!   word that is none of them stays as written;
//! - `filename` wins: beside it `filename_format` has no effect; an empty format is refused
//!   ("failed parsing");
//! - a `numjobs` clone whose file name a job with `numjobs` > 1 already has gets no file
//!   ("clean cloned siblings using existing files"): with a format without `$jobnum` the
//!   clones after the first do no I/O (fio 3.33 lists them with none);
//! - a later job whose names are an earlier job's opens the same files: a read job after a
//!   write job with `filename_format=data.$filenum` reads what was written.

use super::{options, FioError, Job, Val};
use crate::model::job::{NAME_FILE, NAME_THREAD};
use std::collections::BTreeMap;

/// fio's default `filename_format`.
pub(super) const DEFAULT: &str = "$jobname.$jobnum.$filenum";

/// fio's keywords, in the order `make_filename` replaces them.
const JOBNAME: &str = "$jobname";
const JOBNUM: &str = "$jobnum";
const FILENUM: &str = "$filenum";
const CLIENTUID: &str = "$clientuid";

/// Most names a job file's jobs are checked for sharing with ([`share`]): a job of more
/// threads × files than this beside other jobs is refused.
const MOST_NAMES: u64 = 1 << 20;

/// `text` with every `keyword` replaced by `value`, matched in any case, one at a time from
/// the start as fio's `make_filename` does (`value` must not hold the keyword).
fn replace_all(text: &str, keyword: &str, value: &str) -> String {
    let mut out = text.to_string();
    // ASCII lowercasing keeps every byte where it is, so positions carry over.
    while let Some(at) = out.to_ascii_lowercase().find(keyword) {
        out = format!("{}{value}{}", &out[..at], &out[at + keyword.len()..]);
    }
    out
}

/// Whether `text` holds `keyword` in any case.
fn holds(text: &str, keyword: &str) -> bool {
    text.to_ascii_lowercase().contains(keyword)
}

/// The names of a job's files ([`template`]).
pub(super) struct Names {
    /// The workload's `file.name_format`: `{thread}` and `{file}` for fio's `$jobnum` and
    /// `$filenum`.
    pub(super) template: String,
    /// The job's own files are named by it; false: its one name is the `filename` [`share`]
    /// gave the job (a file other jobs have too).
    pub(super) own: bool,
}

/// The job's files' names, or `None` for a job that has a `filename` of its own (fio ignores
/// the format then: noted when it is given). Refused, at the option's line: an empty format
/// (fio refuses it), `$clientuid` (fio's client/server address), a `/` (fio makes the
/// directories of a path; fsbench's files are in its work directory), braces (the workload's
/// own words), and a job name holding one of fio's words where the format puts it (fio would
/// replace it too, or loop). A `$` word that is not fio's stays as written, in both (noted).
pub(super) fn template(job: &Job, notes: &mut Vec<String>) -> Result<Option<Names>, FioError> {
    let given = job.str("filename_format")?;
    // A filename that `share` put in is at the format's line (the section's for the default):
    // no filename a user writes is.
    let format_line = given.map_or(job.line, |g| g.1);
    let own = match job.get("filename") {
        None => true,
        Some(f) if f.line == format_line => false,
        Some(_) => {
            if given.is_some() {
                notes.push("filename_format has no effect beside filename: fio names the file by filename (as fio 3.33)".into());
            }
            return Ok(None);
        }
    };
    let (format, line) = match given {
        Some((f, line)) => (f, line),
        None => (DEFAULT, job.line),
    };
    let refuse = |why: String| Err(job.err("filename_format", line, format!("`{format}`: {why}")));
    if format.is_empty() {
        return refuse("empty (fio 3.33 refuses it: \"failed parsing filename_format\"); give a format, or leave the option out for fio's $jobname.$jobnum.$filenum".into());
    }
    let uses_name = holds(format, JOBNAME);
    if uses_name && [JOBNAME, JOBNUM, FILENUM, CLIENTUID].iter().any(|k| holds(&job.name, k)) {
        return refuse(format!("the job's name [{}] holds one of fio's $ words, which fio would replace inside the name too (or loop on); rename the job", job.name));
    }
    let named = replace_all(format, JOBNAME, &job.name);
    let out = replace_all(&replace_all(&named, JOBNUM, NAME_THREAD), FILENUM, NAME_FILE);
    if holds(&out, CLIENTUID) {
        return refuse("$clientuid is the address of a fio client in client/server mode, which fsbench does not run; leave it out".into());
    }
    let rest = out.replace(NAME_THREAD, "").replace(NAME_FILE, "");
    if rest.contains(['{', '}']) {
        let what = if uses_name && job.name.contains(['{', '}']) {
            "the job's name"
        } else {
            "the format"
        };
        return refuse(format!("{what} holds a brace, which fsbench's workload form of the names (file.name_format) keeps for the thread's and the file's numbers; leave braces out"));
    }
    if out.contains('/') {
        return refuse("a path: fio makes its directories under `directory`; fsbench makes its files in its work directory, one name each; give a name without `/`".into());
    }
    if let Some(word) = unknown_word(&rest) {
        notes.push(format!("filename_format: `${word}` is none of fio's $jobname, $jobnum, $filenum, $clientuid: fio keeps it in the names as written, and so does fsbench"));
    }
    Ok(Some(Names { template: out, own }))
}

/// The first `$` word of `text` (what is left after fio's keywords are replaced).
fn unknown_word(text: &str) -> Option<String> {
    let (_, after) = text.split_once('$')?;
    let word: String =
        after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!word.is_empty()).then_some(word)
}

/// The threads of a job of `nrfiles` files each named by `template`. Names that do not depend
/// on `$jobnum`: fio 3.33 gives the clones after the first no file (the first's names are
/// theirs), so they do no I/O; fsbench runs the job as one thread (said so, a difference: fio
/// lists the clones with no I/O). Several files without `$filenum` are refused: a thread's
/// files would have one name (fio 3.33 opens and lays out the one file as each of them).
pub(super) fn threads(
    job: &Job,
    template: &str,
    (threads, nrfiles): (u32, u32),
    notes: &mut Vec<String>,
) -> Result<u32, FioError> {
    if nrfiles > 1 && !template.contains(NAME_FILE) {
        let line = job.line("filename_format");
        return Err(job.err("filename_format", line, format!("without $filenum, the job's nrfiles={nrfiles} files of a thread have one name (fio 3.33 lays out and opens the one file as each of them); add $filenum")));
    }
    if threads > 1 && !template.contains(NAME_THREAD) {
        notes.push(options::difference("filename-format-clones"));
        return Ok(1);
    }
    Ok(threads)
}

/// The names a data job's files have, its threads' in turn, or `None` for a job fsbench does
/// not name this way (a file-operation engine, a `filename` with a path, a format refused:
/// [`template`] reports it). A plain `filename` is one name.
fn names_of(job: &Job) -> Option<Vec<String>> {
    if super::fileops::engine_of(job).is_some() {
        return None;
    }
    if let Ok(Some((f, _))) = job.str("filename") {
        return (!f.contains(['/', ':'])).then(|| vec![f.to_string()]);
    }
    let t = template(job, &mut Vec::new()).ok().flatten()?.template;
    let count = |k: &str| match job.int(k) {
        Ok(None) => Some(1),
        Ok(Some((n, _))) if n >= 1 => Some(n),
        _ => None,
    };
    let (jobs, files) = (count("numjobs")?, count("nrfiles")?);
    let jobs = if t.contains(NAME_THREAD) { jobs } else { 1 };
    if jobs.saturating_mul(files) > MOST_NAMES {
        return Some(Vec::new());
    }
    let one =
        |k: u64, j: u64| t.replace(NAME_THREAD, &k.to_string()).replace(NAME_FILE, &j.to_string());
    Some((0..jobs).flat_map(|k| (0..files).map(move |j| (k, j))).map(|(k, j)| one(k, j)).collect())
}

/// Jobs whose files' names come out the same use the same files in fio. Where each job has one
/// file of that name (a plain `filename`, or a format that names one file), the jobs share it
/// as jobs naming one plain `filename` do: a job named by its format gets that `filename`
/// (the run's file, [`super::run_file`]), at the format's line. Where a job has several
/// files (threads or `nrfiles`) and one of them is another job's, fsbench has no file set that
/// several tests share: refused at the format's line, with the other job named.
pub(super) fn share(jobs: &mut [Job], errors: &mut Vec<FioError>, notes: &mut Vec<String>) {
    if jobs.len() < 2 {
        return;
    }
    let names: Vec<Option<Vec<String>>> = jobs.iter().map(names_of).collect();
    // Per name, the jobs having it (in the file's order).
    let mut owners: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        for name in n.iter().flatten() {
            let o = owners.entry(name.as_str()).or_default();
            if o.last() != Some(&i) {
                o.push(i);
            }
        }
    }
    let mut refused = vec![false; jobs.len()];
    let mut shared: BTreeMap<usize, String> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        match n.as_deref() {
            Some([]) => {
                let job = &jobs[i];
                let line = job.line("filename_format");
                errors.push(job.err("filename_format", line, format!("numjobs × nrfiles is more than {MOST_NAMES} files, too many for fsbench to check their names against the other jobs'; run the job in a job file of its own")));
                refused[i] = true;
            }
            Some([one]) => {
                let others = &owners[one.as_str()];
                let several =
                    others.iter().any(|&o| names[o].as_ref().is_some_and(|n| n.len() > 1));
                if others.len() > 1 && !several && jobs[i].get("filename").is_none() {
                    shared.insert(i, one.clone());
                }
            }
            _ => {}
        }
    }
    // A name of a job of several files that another job has too: the later job is refused if
    // it has several files, else the earlier one that has (one error per job).
    let several = |o: usize| names[o].as_ref().is_some_and(|n| n.len() > 1);
    for (name, o) in &owners {
        let Some(&blame) = o.iter().rev().find(|&&j| several(j)) else { continue };
        let Some(&other) = o.iter().find(|&&j| j != blame) else { continue };
        if refused[blame] {
            continue;
        }
        let job = &jobs[blame];
        let line = job.line("filename_format");
        errors.push(job.err("filename_format", line, format!("the job's file {name} is also job [{}]'s (fio's jobs share files whose names come out the same); fsbench shares one file between jobs (as one plain filename), not a job's set of several: give the jobs formats whose names differ, or one file each (numjobs=1, nrfiles=1)", jobs[other].name)));
        refused[blame] = true;
    }
    for (i, name) in shared {
        let job = &mut jobs[i];
        let (file, line) = match job.get("filename_format") {
            Some(v) => (v.file.clone(), v.line),
            None => (job.file.to_string(), job.line),
        };
        notes.push(format!("[{}] filename_format names one file, {name}, that other jobs name too: one file for them all, as a plain filename={name} (fsbench's file of the run)", job.name));
        job.opts.insert("filename", Val { value: Some(name), file, line });
    }
}

#[cfg(test)]
mod tests {
    use super::super::{translate, Translation};

    fn tr(text: &str) -> Result<Translation, String> {
        translate(text, "t.fio", "t", &|_| None).map_err(|e| e.to_string())
    }

    fn format_of(t: &Translation, i: usize) -> Option<String> {
        t.spec.tests[i].file.as_ref().and_then(|f| f.name_format.clone())
    }

    /// A job's names follow fio's format: the default is `$jobname.$jobnum.$filenum`, the
    /// section's name (not `name=`) put in, the keywords matched in any case, a `$` word that
    /// is not fio's kept as written (noted).
    #[test]
    fn a_jobs_files_are_named_as_fio_names_them() {
        let t = tr("[w]\nname=other\nsize=64k\nnrfiles=2\nnumjobs=2\n").unwrap();
        assert_eq!(format_of(&t, 0).as_deref(), Some("w.{thread}.{file}"));
        let t = tr("[w]\nsize=64k\nnumjobs=2\nfilename_format=x.$JobNum.$FILENUM.$foo\n").unwrap();
        assert_eq!(format_of(&t, 0).as_deref(), Some("x.{thread}.{file}.$foo"));
        assert!(t.notes.iter().any(|n| n.contains("`$foo` is none of fio's")), "{:?}", t.notes);
        let t = tr("[w]\nsize=64k\nfilename=plain\nfilename_format=z.$filenum\n").unwrap();
        assert_eq!(format_of(&t, 0), None, "filename wins");
        assert!(t.notes.iter().any(|n| n.contains("no effect beside filename")), "{:?}", t.notes);
    }

    /// Clones on the first's names get no file in fio 3.33 and do no I/O: one thread, noted
    /// as a difference.
    #[test]
    fn clones_without_jobnum_run_as_one_thread() {
        let t = tr("[w]\nsize=64k\nnrfiles=2\nnumjobs=3\nfilename_format=f.$filenum\n").unwrap();
        assert_eq!(t.spec.tests[0].threads, 1);
        assert_eq!(format_of(&t, 0).as_deref(), Some("f.{file}"));
        assert!(t.notes.iter().any(|n| n.contains("filename-format-clones")), "{:?}", t.notes);
        let t = tr("[w]\nsize=64k\nnumjobs=3\nfilename_format=f.$jobnum\n").unwrap();
        assert_eq!(t.spec.tests[0].threads, 3);
    }

    /// Jobs one of whose names is another's: one file each, shared as a plain filename (the
    /// run's file); several files each, refused at the format's line naming the other job.
    #[test]
    fn jobs_with_the_same_names_share_one_file_or_are_refused() {
        let t = tr("[global]\nsize=64k\nfilename_format=data.$filenum\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n").unwrap();
        let run: Vec<_> =
            t.spec.tests.iter().map(|t| t.file.as_ref().and_then(|f| f.run_file.clone())).collect();
        assert_eq!(run, [Some("data.0".to_string()), Some("data.0".to_string())]);
        assert_eq!(format_of(&t, 0), None);
        // Clones of a job on another job's name do nothing in fio: one thread.
        let t = tr("[global]\nsize=64k\nfilename_format=data.$filenum\n[w]\nrw=write\nnumjobs=2\n[r]\nstonewall\nrw=read\n").unwrap();
        assert_eq!(t.spec.tests[0].threads, 1);
        assert!(t.spec.tests[0].notes.iter().any(|n| n.contains("filename-format-clones")));
        // Jobs at the same time on one name: as a plain filename, the role on the first's file.
        let t =
            tr("[global]\nsize=64k\nfilename_format=data.$filenum\n[w]\nrw=write\n[r]\nrw=read\n")
                .unwrap();
        assert_eq!(t.spec.tests[0].roles[0].same_file.as_deref(), Some("w"));
        // A plain filename of another job is the same file too.
        let t = tr("[global]\nsize=64k\n[w]\nrw=write\nfilename=r.0.0\n[r]\nstonewall\nrw=read\n")
            .unwrap();
        assert_eq!(
            t.spec.tests[1].file.as_ref().and_then(|f| f.run_file.clone()).as_deref(),
            Some("r.0.0")
        );
        let e = tr("[global]\nsize=64k\nnrfiles=2\n[w]\nrw=write\nfilename_format=d.$filenum\n[r]\nstonewall\nrw=read\nfilename_format=d.$filenum\n").unwrap_err();
        assert!(e.contains("t.fio:10: `filename_format`") && e.contains("also job [w]'s"), "{e}");
        // Names that differ are each job's own.
        let t = tr("[global]\nsize=64k\n[w]\nrw=write\n[r]\nstonewall\nrw=read\n").unwrap();
        assert_eq!(format_of(&t, 1).as_deref(), Some("r.{thread}.{file}"));
    }

    /// What fsbench cannot name as fio does is refused at the option's line, with why.
    #[test]
    fn formats_fsbench_cannot_follow_are_refused_with_the_line() {
        for (text, why) in [
            ("filename_format=\n", "fio 3.33 refuses it"),
            ("filename_format=f.$clientuid.$filenum\n", "$clientuid"),
            ("filename_format=a/b.$filenum\n", "without `/`"),
            ("filename_format=f{x}.$filenum\n", "brace"),
            ("nrfiles=2\nfilename_format=f.$jobnum\n", "add $filenum"),
            ("ioengine=filecreate\ncreate_on_open=1\nfilesize=4k\nbs=4k\nfilename_format=f.$filenum\n", "not taken with ioengine=filecreate"),
        ] {
            let e = tr(&format!("[w]\nsize=64k\n{text}")).unwrap_err();
            assert!(e.contains("`filename_format`") && e.contains(why), "{text}: {e}");
        }
        // A job beside its group's first job: its files are fsbench's (fio's default kept).
        let e = tr(
            "[global]\nsize=64k\n[a]\nrw=write\n[b]\nrw=read\nfilename_format=x.$jobnum.$filenum\n",
        )
        .unwrap_err();
        assert!(e.contains("t.fio:7: `filename_format`") && e.contains("group's later job"), "{e}");
        tr("[global]\nsize=64k\nfilename_format=$jobname.$jobnum.$filenum\n[a]\nrw=write\n[b]\nrw=read\n").unwrap();
        let e = tr("[a$JobNum]\nsize=64k\n").unwrap_err();
        assert!(e.contains("holds one of fio's $ words"), "{e}");
    }
}
