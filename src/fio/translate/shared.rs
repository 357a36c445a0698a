//! fio's jobs of one group that name the same `filename`: fio opens the one file in each of
//! them, lays it out once (the first job that needs it: a job that reads finds the data) and
//! lets each do its own pattern, block size and engine on it. fsbench says so with the role's
//! `same_file` (the group's first job's file, or an earlier role's), and gives a role that is
//! the first of its group to name a plain file one file its threads share (`file.whole`), as
//! fio's `numjobs` on one `filename`.
//!
//! Why a module of its own: it is the one place that knows which jobs of a group share a file
//! and who lays it out; [`super::groups`] only asks it.

use super::Job;
use crate::workload::size::SizeExpr;
use crate::workload::spec::{FileSpec, RoleSpec, TestSpec};

/// The file a job names, as a key two jobs of a group match on: the resolved path of a
/// `filename` with a path, else the plain name (fsbench's own file in the work directory).
fn key(job: &Job, file: Option<&FileSpec>) -> Option<String> {
    if let Some(p) = file.and_then(|f| f.path.as_ref()) {
        return Some(format!("path:{p}"));
    }
    match job.str("filename") {
        Ok(Some((f, _))) if !f.contains('/') && !f.contains(':') => Some(format!("name:{f}")),
        _ => None,
    }
}

/// Who lays out one file of the group.
struct Owner {
    key: String,
    /// The test's id (the group's first job) or the owner role's name.
    runs_as: String,
    /// Its job's name, for messages.
    job: String,
    /// The owner's file size, bytes.
    size: Option<u64>,
    /// Index of the owner in the test's roles; `None`: the test itself.
    role: Option<usize>,
}

/// How a role job works on its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Share {
    /// Files of its own, one per thread (it names no file, or one with a path no earlier job
    /// of the group names: refused by the caller).
    Own,
    /// The first of the group to name this plain file: one file its threads share.
    Whole,
    /// An earlier job of the group names the same file: that one (index into the owners).
    Same(usize),
}

/// The files of one group and their owners, in the group's order.
#[derive(Default)]
pub(super) struct Files {
    owners: Vec<Owner>,
}

fn bytes(f: &FileSpec) -> Option<u64> {
    match f.size {
        SizeExpr::Bytes(b) => Some(b),
        _ => None,
    }
}

/// Whether a file's lay-out gives it its size without writing it (fio's `fallocate` native,
/// posix or truncate): a later job of the group that reads finds it long enough, as fio's.
fn sized_layout(f: &FileSpec) -> bool {
    !f.prefill && matches!(f.preallocate.as_deref(), Some("fallocate" | "truncate"))
}

impl Files {
    /// The group's first job (`test`): it owns the file it names.
    pub(super) fn first(job: &Job, test: &TestSpec) -> Files {
        let mut files = Files::default();
        if let Some(f) = test.file.as_ref().filter(|f| f.shared) {
            if let Some(key) = key(job, Some(f)) {
                files.owners.push(Owner {
                    key,
                    runs_as: test.id.clone(),
                    job: job.name.clone(),
                    size: bytes(f),
                    role: None,
                });
            }
        }
        files
    }

    /// Whether `share` puts a role on the group's first job's file (the test's own: a file of
    /// the run when its plain name is).
    pub(super) fn on_first_jobs(&self, share: Share) -> bool {
        matches!(share, Share::Same(i) if self.owners.get(i).is_some_and(|o| o.role.is_none()))
    }

    /// How the role job `job` (translated as `t`, before it becomes a role) works on its file.
    pub(super) fn share_of(&self, job: &Job, t: &TestSpec) -> Share {
        let file = t.file.as_ref();
        let Some(key) = key(job, file) else {
            return Share::Own;
        };
        match self.owners.iter().position(|o| o.key == key) {
            Some(i) => Share::Same(i),
            None if key.starts_with("name:") => Share::Whole,
            None => Share::Own,
        }
    }

    /// Make `role` (the `job` that `share` says) work on its shared file, in `test`: on an
    /// owner's, which lays it out (before the phase, when this job reads it), or as the
    /// owner of its own (`index`: where it goes in the test's roles).
    pub(super) fn place(
        &mut self,
        job: &Job,
        (role, index): (&mut RoleSpec, usize),
        share: Share,
        test: &mut TestSpec,
    ) -> Result<(), super::FioError> {
        match share {
            Share::Own => Ok(()),
            Share::Whole => {
                role.file.whole = Some(true);
                if let Some(key) = key(job, None) {
                    self.owners.push(Owner {
                        key,
                        runs_as: role.name.clone(),
                        job: job.name.clone(),
                        size: bytes(&role.file),
                        role: Some(index),
                    });
                }
                Ok(())
            }
            Share::Same(i) => {
                let Some(o) = self.owners.get_mut(i) else { return Ok(()) };
                if let (Some(mine), Some(theirs)) = (bytes(&role.file), o.size) {
                    if mine > theirs {
                        let k = if job.get("filesize").is_some() { "filesize" } else { "size" };
                        return Err(job.err(k, job.line(k), format!("{mine} bytes: [{}] names the file of [{}] ({theirs} bytes), which fsbench lays out once at that size; give [{}] at most that size, or add `stonewall` to run it on its own", job.name, o.job, job.name)));
                    }
                }
                let reads_only = matches!(job.str("rw"), Ok(None))
                    || matches!(job.str("rw"), Ok(Some((rw, _))) if rw.starts_with("read") || rw.starts_with("randread"));
                if o.role.is_none() && test.verify == Some(true) && !reads_only {
                    return Err(job.err("filename", job.line("filename"), format!("in [{}], which writes into the file of [{}]: [{}] checks its file (verify), which these writes would change; give [{}] a file of its own, or add `stonewall` to run it on its own", job.name, o.job, o.job, job.name)));
                }
                role.same_file = Some(o.runs_as.clone());
                // A job that reads finds the file as fio's lay-out leaves it: fio lays out each
                // file before the group, in job order, and a job finding it short lays it out
                // anew. An owner that fallocates it to its size (or truncates it) leaves a file
                // a later reader takes as it is (unwritten blocks read as zeros); otherwise the
                // reader writes it out, so the owner prefills it.
                let owner_file = match o.role {
                    Some(r) => test.roles.get_mut(r).map(|owner| &mut owner.file),
                    None => test.file.as_mut(),
                };
                if let Some(f) = owner_file.filter(|_| role.file.prefill) {
                    if !sized_layout(f) {
                        f.prefill = true;
                        f.preallocate = None;
                    }
                }
                role.file.prefill = false;
                role.file.preallocate = None;
                Ok(())
            }
        }
    }
}
