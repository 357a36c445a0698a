//! fio's options on how ops are spaced and submitted (`rate_process`, `io_submit_mode`) and on
//! what the written data looks like (`dedupe_*`, `buffer_compress_*`, `refill_buffers`,
//! `scramble_buffers`). They live apart from the rest of the translation because none of them
//! changes which ops run: they change when a paced op starts, which thread submits it, and the
//! bytes it carries, so each is either mapped onto the pacer or accepted with an honest note.

use super::{FioError, Job};
use crate::fio::options;
use crate::workload::spec::PhaseSpec;

/// `rate_process`: `linear` (fio's default) keeps the fixed period; `poisson` draws the gaps
/// between scheduled starts from an exponential distribution (the phase's `rate_process`).
/// Without a rate fio paces nothing, and neither does fsbench (said so).
pub(super) fn rate_process(
    job: &Job,
    timed: &mut PhaseSpec,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    match job.str("rate_process")? {
        None | Some(("linear", _)) => {}
        Some(("poisson", _)) if timed.rate_iops.is_none() && timed.rate.is_none() => notes
            .push("rate_process=poisson without rate or rate_iops: no effect, as in fio".into()),
        Some(("poisson", _)) => timed.rate_process = Some("poisson".into()),
        Some((v, line)) => {
            return Err(job.err(
                "rate_process",
                line,
                format!("`{v}`: write linear (a fixed interval) or poisson (exponential gaps)"),
            ))
        }
    }
    Ok(())
}

/// `io_submit_mode`: `inline` is fsbench's own way; `offload` (fio submits from a separate
/// thread, on schedule whatever the completions do) is accepted with the difference noted.
pub(super) fn submit_mode(
    job: &Job,
    timed: &PhaseSpec,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    match job.str("io_submit_mode")? {
        None | Some(("inline", _)) => {}
        Some(("offload", _)) => {
            let rated = timed.rate_read.is_some() || timed.rate_write.is_some();
            let paced = if timed.rate_iops.is_some() || timed.rate.is_some() || rated {
                ""
            } else {
                " (without a rate the job runs as fio's inline submission)"
            };
            notes.push(format!(
                "io_submit_mode=offload{paced}: {}",
                options::difference("submit-offload")
            ));
        }
        Some((v, line)) => {
            return Err(job.err("io_submit_mode", line, format!("`{v}`: write inline or offload")))
        }
    }
    Ok(())
}

/// The data-content options: checked as fio checks them, then accepted with the difference
/// noted when they ask for content other than fsbench's (which only a filesystem or device
/// that compresses or dedupes can tell apart).
pub(super) fn content(job: &Job, notes: &mut Vec<String>) -> Result<(), FioError> {
    let mut asked: Vec<String> = Vec::new();
    for name in ["dedupe_percentage", "dedupe_working_set_percentage", "buffer_compress_percentage"]
    {
        if let Some((n, line)) = job.int(name)? {
            if n > 100 {
                return Err(job.err(name, line, format!("{n}: give a percentage, 0 to 100")));
            }
            // The working set's size only matters once some blocks are duplicates.
            if n > 0 && name != "dedupe_working_set_percentage" {
                asked.push(format!("{name}={n}"));
            }
        }
    }
    match job.str("dedupe_mode")? {
        None | Some(("repeat" | "working_set", _)) => {}
        Some((v, line)) => {
            return Err(job.err("dedupe_mode", line, format!("`{v}`: write repeat or working_set")))
        }
    }
    if let Some((n, line)) = job.size("buffer_compress_chunk")? {
        if n == 0 {
            return Err(job.err("buffer_compress_chunk", line, "give a size above 0"));
        }
    }
    // dedupe_global and scramble_buffers shape content only together with the options above;
    // refill_buffers=1 asks for fresh random data per write.
    job.bool("dedupe_global")?;
    job.bool("scramble_buffers")?;
    if job.bool("refill_buffers")? == Some(true) {
        asked.push("refill_buffers=1".into());
    }
    if !asked.is_empty() {
        notes.push(format!("{}: {}", asked.join(", "), options::difference("data-content")));
    }
    Ok(())
}

/// `threads=N`: fio 3.33 knows it only as the tiobench profile's thread count (checked there
/// with `fio --parse-only` and under strace: a job file with `threads=1` and no
/// `profile=tiobench` still forks one process per job), so it changes nothing; fsbench checks
/// the number and says so.
pub(super) fn tiobench_threads(job: &Job, notes: &mut Vec<String>) -> Result<(), FioError> {
    if let Some((n, _)) = job.int("threads")? {
        notes.push(format!("threads={n}: no effect, as in fio 3.33 (the tiobench profile's option; the jobs do not become threads: that is `thread`, and fsbench runs threads either way)"));
    }
    Ok(())
}

/// fio's `openfiles` and `file_service_type`: how many of a job's files are open at once and
/// which one the next I/O goes to. A job has one file in fsbench (nrfiles=1), where both have
/// no effect in fio either; the values are checked as fio reads them.
pub(super) fn one_file_options(job: &Job, notes: &mut Vec<String>) -> Result<(), FioError> {
    if let Some((n, line)) = job.int("openfiles")? {
        if n == 0 {
            return Err(job.err(
                "openfiles",
                line,
                "0: give how many files may be open at once, at least 1",
            ));
        }
        notes.push(format!("openfiles={n}: no effect with one file per job, as in fio"));
    }
    if let Some((v, line)) = job.str("file_service_type")? {
        let kind = v.split(':').next().unwrap_or("").trim();
        let known = ["random", "roundrobin", "sequential", "zipf", "pareto", "normal", "gauss"];
        if !known.contains(&kind) {
            return Err(job.err(
                "file_service_type",
                line,
                format!("`{v}`: fio takes {}, each with an optional :N", known.join(", ")),
            ));
        }
        notes.push(format!("file_service_type={v}: no effect with one file per job, as in fio"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::fio::translate::translate;
    use crate::workload::spec::TestSpec;

    use crate::fio::translate::tests::one;

    fn err(text: &str) -> String {
        match translate(text, "t.fio", "t", &|_| None) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    /// numjobs > 1 without group_reporting is fio's meaning now (`fsbench fio` reports each
    /// clone as a job of its own): no difference is said, with or without group_reporting.
    #[test]
    fn clones_are_no_difference() {
        for text in [
            "[j]\nrw=read\nsize=1m\nnumjobs=4\n",
            "[j]\nrw=read\nsize=1m\nnumjobs=4\ngroup_reporting\n",
        ] {
            let t = one(text).0;
            assert!(!t.notes.iter().any(|n| n.contains("numjobs")), "{:?}", t.notes);
            assert!(!t.notes.iter().any(|n| n.contains("differs from fio")), "{:?}", t.notes);
        }
    }

    /// The test's notes say fsbench differs from fio on `what`, as the difference `id`.
    fn is_diff(t: &TestSpec, what: &str, id: &str) -> bool {
        t.notes.iter().any(|n| n.contains(what) && n.contains(&format!("[differs from fio: {id}]")))
    }

    #[test]
    fn poisson_sets_the_phase_rate_process_and_linear_or_no_rate_does_not() {
        let (t, _) = one("[j]\nrw=randread\nsize=1m\nrate_iops=50\nrate_process=poisson\n");
        let timed = t.phases.last().expect("a timed phase");
        assert_eq!(timed.rate_process.as_deref(), Some("poisson"));
        assert_eq!(timed.rate_iops, Some(50.0));
        assert!(!t.notes.iter().any(|n| n.contains("differs from fio")), "{:?}", t.notes);
        let (t, _) = one("[j]\nrw=randread\nsize=1m\nrate_iops=50\nrate_process=linear\n");
        assert_eq!(t.phases.last().and_then(|p| p.rate_process.clone()), None);
        let (t, _) = one("[j]\nrw=randread\nsize=1m\nrate_process=poisson\n");
        assert_eq!(t.phases.last().and_then(|p| p.rate_process.clone()), None);
        assert!(t.notes.iter().any(|n| n.contains("no effect, as in fio")), "{:?}", t.notes);
        let e = err("[j]\nrw=read\nsize=1m\nrate_iops=5\nrate_process=bursty\n");
        assert!(e.contains("t.fio:5") && e.contains("`bursty`: write linear"), "{e}");
    }

    #[test]
    fn offload_submission_is_accepted_with_the_difference_and_bad_modes_refused() {
        let (t, _) = one("[j]\nrw=read\nsize=1m\nrate_iops=1000\nio_submit_mode=offload\n");
        assert!(is_diff(&t, "io_submit_mode=offload", "submit-offload"), "{:?}", t.notes);
        let (t, _) = one("[j]\nrw=read\nsize=1m\nio_submit_mode=inline\n");
        assert!(!t.notes.iter().any(|n| n.contains("io_submit_mode")), "{:?}", t.notes);
        let e = err("[j]\nrw=read\nsize=1m\nio_submit_mode=async\n");
        assert!(e.contains("t.fio:4") && e.contains("write inline or offload"), "{e}");
    }

    #[test]
    fn data_content_options_are_checked_and_noted_as_a_difference() {
        let (t, _) = one("[j]\nrw=write\nsize=1m\ndedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=50\nbuffer_compress_percentage=50\ndedupe_working_set_percentage=50\n");
        assert!(is_diff(&t, "dedupe_percentage=50", "data-content"), "{:?}", t.notes);
        assert!(is_diff(&t, "buffer_compress_percentage=50", "data-content"), "{:?}", t.notes);
        // Zero asks for nothing fsbench does not do already: no note.
        let (t, _) = one("[j]\nrw=write\nsize=1m\ndedupe_percentage=0\nscramble_buffers=1\n");
        assert!(!t.notes.iter().any(|n| n.contains("data-content")), "{:?}", t.notes);
        let e = err("[j]\nrw=write\nsize=1m\ndedupe_percentage=101\n");
        assert!(e.contains("t.fio:4") && e.contains("0 to 100"), "{e}");
        let e = err("[j]\nrw=write\nsize=1m\ndedupe_mode=sometimes\n");
        assert!(e.contains("write repeat or working_set"), "{e}");
    }
}
