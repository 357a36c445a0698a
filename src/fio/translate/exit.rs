//! fio's `exitall` and `exit_what`: when a job ends, fio stops other jobs. fio 3.33's meaning
//! (`backend.c`, `libfio.c`'s `fio_terminate_threads`): `exitall` in any job turns it on for
//! every job of the file; then each job, when it ends (for any reason, also when stopped),
//! stops by its own `exit_what`:
//!
//! - `group` (the default): the jobs of its reporting group (`groupid`, which `new_group`
//!   and `stonewall` count up), so a job after `new_group` in the same run group goes on;
//! - `stonewall`: every job that is running, which is its run group (one test in fsbench);
//! - `all`: every job, also those not started yet: the run groups after its own never run
//!   (fio 3.33 lists them with no I/O).
//!
//! A run group is one test ([`super::groups`]); each of its jobs gets the test's or its role's
//! `exitall` (`stops = "group"` with its `groupid`, or `stops = "test"`), which the engine
//! acts on. Since every job ends, a job with `exit_what=all` always stops the later groups:
//! they are left out of the translation's tests and kept in its `unrun` list, which `fsbench
//! fio` reports as fio does (each job with no I/O).

use super::groups::Group;
use super::{FioError, Job, JobPlace, UnrunJob};
use crate::workload::spec::{ExitSpec, TestSpec};

/// fio's `exit_what` of one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    Group,
    Stonewall,
    All,
}

/// What `exitall` does in a job file: on or off (fio's flag is global), and each job's
/// `exit_what`.
#[derive(Debug, Default)]
pub(super) struct ExitPlan {
    on: bool,
    what: Vec<What>,
    /// The first run group (index) that never runs, and the `exit_what=all` job that stops it.
    stops_from: Option<(usize, usize)>,
}

/// Read `exitall` and `exit_what` of every job of `groups`.
pub(super) fn plan(
    jobs: &[Job],
    groups: &[Group],
    errors: &mut Vec<FioError>,
    notes: &mut Vec<String>,
) -> ExitPlan {
    let mut on = false;
    let mut what = Vec::with_capacity(jobs.len());
    for job in jobs {
        match job.bool("exitall") {
            Ok(b) => on |= b.unwrap_or(false),
            Err(e) => errors.push(e),
        }
        what.push(match job.str("exit_what") {
            Ok(None) => What::Group,
            Ok(Some((v, line))) => match v.trim() {
                "group" => What::Group,
                "stonewall" => What::Stonewall,
                "all" => What::All,
                other => {
                    errors.push(job.err(
                        "exit_what",
                        line,
                        format!("`{other}`: fio takes group, stonewall or all"),
                    ));
                    What::Group
                }
            },
            Err(e) => {
                errors.push(e);
                What::Group
            }
        });
    }
    if !on {
        if let Some(job) = jobs.iter().find(|j| j.get("exit_what").is_some()) {
            notes.push(format!("[{}] exit_what without exitall: no effect, as in fio", job.name));
        }
        return ExitPlan { on, what, stops_from: None };
    }
    let mut stops_from = None;
    for (gi, g) in groups.iter().enumerate() {
        // fio's `stonewall` spares a job of the group that has not started yet (startdelay,
        // wait_for); fsbench's stop would reach it before it starts.
        let late = g.jobs.iter().find(|&&i| {
            jobs[i].get("wait_for").is_some()
                || jobs[i].seconds("startdelay").ok().flatten().is_some_and(|(s, _)| s > 0.0)
        });
        let sw = g.jobs.iter().find(|&&i| what[i] == What::Stonewall && g.jobs.len() > 1);
        if let (Some(&l), Some(&s)) = (late, sw) {
            let job = &jobs[s];
            errors.push(job.err("exit_what", job.line("exit_what"), format!("stonewall in [{}], whose group has [{}] starting late (startdelay or wait_for): fio stops only the jobs already running and starts that one afterwards, fsbench would stop it before it starts; use exit_what=group, or add `stonewall` to [{}]", job.name, jobs[l].name, jobs[l].name)));
        }
        if stops_from.is_none() && gi + 1 < groups.len() {
            if let Some(&a) = g.jobs.iter().find(|&&i| what[i] == What::All) {
                stops_from = Some((gi + 1, a));
            }
        }
    }
    ExitPlan { on, what, stops_from }
}

impl ExitPlan {
    /// Whether run group `gi` never runs (a job of an earlier group has `exit_what=all`):
    /// the index of that job; the group's jobs are named in `notes`.
    pub(super) fn never_runs(
        &self,
        gi: usize,
        g: &Group,
        jobs: &[Job],
        notes: &mut Vec<String>,
    ) -> Option<usize> {
        let (_, by) = self.stops_from.filter(|(from, _)| gi >= *from)?;
        for &i in &g.jobs {
            notes.push(format!("[{}] never runs: [{}] has exit_what=all (with exitall), so fio stops it before it starts (fio lists it with no I/O, and so does `fsbench fio`; `run --fio` leaves it out)", jobs[i].name, jobs[by].name));
        }
        Some(by)
    }

    /// Give the jobs of run group `gi`, translated as `test` with the jobs of `g` at `places`
    /// (in the group's order), their `exitall`.
    pub(super) fn apply(
        &self,
        gi: usize,
        g: &Group,
        jobs: &[Job],
        test: &mut TestSpec,
        places: &[JobPlace],
        notes: &mut Vec<String>,
    ) {
        if !self.on {
            return;
        }
        for (&i, place) in g.jobs.iter().zip(places) {
            // Every job is in its groupid, whatever its own end stops.
            let stops = if self.what[i] == What::Group { "group" } else { "test" };
            let spec = ExitSpec { stops: stops.into(), group: Some(place.group) };
            match &place.role {
                None => test.exitall = Some(spec),
                Some(r) => {
                    if let Some(role) = test.roles.iter_mut().find(|x| &x.name == r) {
                        role.exitall = Some(spec);
                    }
                }
            }
        }
        if g.jobs.len() > 1 {
            let list = g.jobs.iter().map(|&i| format!("[{}]", jobs[i].name)).collect::<Vec<_>>();
            notes.push(format!("{} (exitall): when the first thread of a job ends, fsbench stops the jobs its exit_what names (group: those of its groupid; stonewall, all: every job of the group) within a few ms; each reports the work it did", list.join(", ")));
        }
        if let Some(i) = self.stopped_in_a_sleep(g, jobs, places) {
            let d = crate::fio::options::difference("exit-during-wait");
            test.notes.push(format!("fio job file: [{}] {d}", jobs[i].name));
        }
        if let Some((_, by)) = self.stops_from.filter(|(from, _)| *from == gi + 1) {
            test.notes.push(format!(
                "fio job file: [{}] exit_what=all: the later jobs never run, in fio and fsbench (`fsbench fio` lists them with no I/O, as fio)",
                jobs[by].name,
            ));
        }
    }
}

impl ExitPlan {
    /// A job of run group `g` (jobs at `places`) that sleeps between ops (a rate, thinktime)
    /// and that another job's end, or a clone's, stops: fio notices the stop only when its
    /// sleep ends (`exit-during-wait`).
    fn stopped_in_a_sleep(&self, g: &Group, jobs: &[Job], places: &[JobPlace]) -> Option<usize> {
        let sleeps =
            |i: usize| ["rate", "rate_iops", "thinktime"].iter().any(|k| jobs[i].get(k).is_some());
        let members = || g.jobs.iter().copied().zip(places);
        let stopped = |x: usize, px: &JobPlace| {
            let clones = jobs[x].int("numjobs").ok().flatten().is_some_and(|(n, _)| n > 1);
            clones
                || members()
                    .any(|(y, py)| y != x && (self.what[y] != What::Group || py.group == px.group))
        };
        members().find(|&(x, px)| sleeps(x) && stopped(x, px)).map(|(x, _)| x)
    }
}

/// The jobs of run group `g`, which never runs because job `by` has `exit_what=all`, as fio
/// still lists them (`threads`: each job's numjobs, by index).
pub(super) fn unrun(
    g: &Group,
    jobs: &[Job],
    by: usize,
    threads: impl Fn(usize) -> u32,
    errors: &mut Vec<FioError>,
) -> Vec<UnrunJob> {
    let mut out = Vec::with_capacity(g.jobs.len());
    for (&i, &group) in g.jobs.iter().zip(&g.report) {
        let group_reporting = jobs[i].bool("group_reporting").unwrap_or_else(|e| {
            errors.push(e);
            None
        });
        out.push(UnrunJob {
            name: jobs[i].name.clone(),
            group,
            group_reporting: group_reporting.unwrap_or(false),
            threads: threads(i),
            stopped_by: jobs[by].name.clone(),
            options: jobs[i].own.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::translate;
    use crate::model::job::{ExitAll, ExitStops};

    fn env(_: &str) -> Option<String> {
        None
    }

    fn tr(text: &str) -> Result<super::super::Translation, super::FioError> {
        translate(text, "t.fio", "t", &env)
    }

    /// A job that sleeps between ops (a rate) and that another job's end stops is a stated
    /// difference (fio notices the stop only after its sleep); a sleeping job nothing stops
    /// (its own end stops only its groupid, the other job is in another) is none.
    #[test]
    fn a_job_stopped_while_it_sleeps_for_its_rate_is_a_difference() {
        let text = "[global]\nsize=1m\nexitall=1\n\
            [slow1]\nrw=read\nnumber_ios=10\nthinktime=2000\nexit_what=stonewall\n\
            [fast1]\nnew_group=1\nrw=randrw\nrate=300,300\n";
        let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
        let n = &t.spec.tests[0].notes;
        assert!(n.iter().any(|n| n.contains("[fast1]") && n.contains("exit-during-wait")), "{n:?}");
        assert!(t.check_strict().is_err());
        let text = "[global]\nsize=1m\nexitall=1\n\
            [slow1]\nrw=read\nnumber_ios=10\nthinktime=2000\n\
            [fast1]\nnew_group=1\nrw=randread\n";
        let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
        assert!(t.check_strict().is_ok(), "{:?}", t.spec.tests[0].notes);
    }

    /// exitall in [global]: every job gets fio's stop by its exit_what; `group` names its
    /// groupid (new_group starts another), `stonewall` and `all` the whole test; the groups
    /// after an `all` job never run (left out of the tests, noted, and listed as unrun jobs with
    /// their groupid, numjobs, group_reporting and the job that stopped them, which fio lists
    /// too: no difference, so --fio-strict takes the file).
    #[test]
    fn exitall_gives_each_job_its_stop_and_all_drops_the_later_groups() {
        let text = "[global]\nsize=1m\nexitall=1\n\
            [slow1]\nrw=read\nnumber_ios=10\nthinktime=2000\nexit_what=stonewall\n\
            [fast1]\nnew_group=1\nrw=randread\ntime_based\nruntime=10\n\
            [slow2]\nstonewall\nrw=read\nnumber_ios=10\nexit_what=all\n\
            [fast2]\nrw=randread\ntime_based\nruntime=10\n\
            [later]\nstonewall\nrw=read\nnumjobs=3\ngroup_reporting\n";
        let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.spec.tests.len(), 2, "the group after [slow2] never runs");
        let (a, b) = (&t.spec.tests[0], &t.spec.tests[1]);
        let stops = |e: &Option<crate::workload::spec::ExitSpec>| {
            e.as_ref().map(|e| (e.stops.clone(), e.group))
        };
        assert_eq!(stops(&a.exitall), Some(("test".into(), Some(0))));
        // fast1's groupid is 1 (new_group): its own end stops its group only.
        assert_eq!(stops(&a.roles[0].exitall), Some(("group".into(), Some(1))));
        assert_eq!(stops(&b.exitall), Some(("test".into(), Some(2))));
        // fast2 has slow2's groupid (2: one stonewall and one new_group before it).
        assert_eq!(stops(&b.roles[0].exitall), Some(("group".into(), Some(2))));
        assert!(
            t.notes.iter().any(|n| n.starts_with("[later] never runs: [slow2]")),
            "{:?}",
            t.notes
        );
        assert!(t.jobs.iter().all(|p| p.name != "later"));
        let later = super::UnrunJob {
            name: "later".into(),
            group: 3,
            group_reporting: true,
            threads: 3,
            stopped_by: "slow2".into(),
            // Its own section's options with a value, by fio's name (no bare flags).
            options: vec![("rw".into(), "read".into()), ("numjobs".into(), "3".into())],
        };
        assert_eq!(t.unrun, [later]);
        assert!(
            b.notes.iter().any(|n| n.contains("exit_what=all: the later jobs never run")),
            "{:?}",
            b.notes
        );
        assert!(!b.notes.iter().any(|n| n.contains("[differs from fio")), "{:?}", b.notes);
        assert!(t.check_strict().is_ok(), "{:?}", t.notes);
        // Resolved: the engine's ExitAll of each job.
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(suite.tests[0].exitall, Some(ExitAll { stops: ExitStops::Test, group: 0 }));
        let r = &suite.tests[0].roles[0];
        assert_eq!(r.exitall, Some(ExitAll { stops: ExitStops::Group, group: 1 }));
    }

    /// Without exitall nothing is stopped, and exit_what alone has no effect (as fio); `all`
    /// in the last group drops nothing; a bad exit_what is refused with its line.
    #[test]
    fn exit_what_without_exitall_is_noted_and_bad_values_refused() {
        let t = tr("[a]\nsize=1m\nexit_what=all\n[b]\nsize=1m\n[c]\nstonewall\nsize=1m\n").unwrap();
        assert_eq!(t.spec.tests.len(), 2);
        assert!(t
            .spec
            .tests
            .iter()
            .all(|x| x.exitall.is_none() && x.roles.iter().all(|r| r.exitall.is_none())));
        assert!(
            t.notes.iter().any(|n| n == "[a] exit_what without exitall: no effect, as in fio"),
            "{:?}",
            t.notes
        );
        let t = tr("[a]\nsize=1m\nexitall\n[b]\nsize=1m\nexit_what=all\n").unwrap();
        assert_eq!(t.spec.tests.len(), 1);
        assert!(t.check_strict().is_ok(), "nothing later to leave out");
        assert_eq!(t.spec.tests[0].exitall.as_ref().map(|e| e.group), Some(Some(0)));
        let e = tr("[a]\nsize=1m\nexitall\nexit_what=some\n").unwrap_err().to_string();
        assert!(
            e.contains("t.fio:4") && e.contains("`some`: fio takes group, stonewall or all"),
            "{e}"
        );
    }

    /// fio's `stonewall` spares a job of the group not started yet; fsbench would stop it
    /// before it starts, so the pair is refused with the way out.
    #[test]
    fn exit_what_stonewall_with_a_late_job_is_refused() {
        let e = tr("[a]\nsize=1m\nexitall\nexit_what=stonewall\n[b]\nsize=1m\nstartdelay=1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.fio:4") && e.contains("[b] starting late"), "{e}");
        let ok = tr("[a]\nsize=1m\nexitall\nexit_what=stonewall\n[b]\nsize=1m\n");
        assert!(ok.is_ok());
    }
}
