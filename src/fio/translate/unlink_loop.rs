//! fio's `unlink_each_loop` onto the timed phase's `unlink_each_pass`. A module of its own
//! because the option is about fio's loops, which fsbench runs as one amount of `loops` passes:
//! fio 3.33 (`backend.c`, `thread_main`) starts every loop after the first by closing the
//! job's files and unlinking them (`unlink_all_files`), and the loop's open creates each again
//! (`O_CREAT`, no lay-out: an empty file the writes fill). Checked under strace with `loops=3`
//! on a 1 MiB write job: after the lay-out, open, 256 writes, close, unlink, open, 256
//! writes, close, unlink, open, 256 writes: two unlinks, the last loop's file left. A job that
//! reads fails in fio 3.33 (its second loop opens the unlinked file without `O_CREAT`: ENOENT,
//! exit 1), so fsbench refuses it; with one loop, or with `time_based` (one loop that wraps),
//! it does nothing, as in fio.

use super::{Dir, Engine, Files, FioError, Job};
use crate::workload::spec::PhaseSpec;

/// The job's `unlink_each_loop` onto its timed phase.
pub(super) fn unlink_each_loop(
    job: &Job,
    rw: Dir,
    files: &Files,
    engine: &Engine,
    timed: &mut PhaseSpec,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    if !job.bool("unlink_each_loop")?.unwrap_or(false) {
        return Ok(());
    }
    let line = job.line("unlink_each_loop");
    let err = |m: String| job.err("unlink_each_loop", line, m);
    let loops = job.int("loops")?.map_or(1, |(n, _)| n);
    if job.bool("time_based")?.unwrap_or(false) || loops <= 1 {
        notes.push("unlink_each_loop without loops > 1 (or with time_based, one loop): no effect, as in fio".into());
        return Ok(());
    }
    match (rw.reads(), rw.writes()) {
        (true, false) => return Err(err("with a job that reads: fio 3.33 fails it (its second loop opens the unlinked file without O_CREAT: ENOENT); drop unlink_each_loop or loops".into())),
        (true, true) => return Err(err("with a job that reads and writes: the file made again after each loop is empty, so the reads would find no data; drop unlink_each_loop, or write only".into())),
        _ => {}
    }
    if files.named.is_some() {
        return Err(err("with a filename that is a path: fsbench unlinks only files it makes in its work directory; use a plain filename or none".into()));
    }
    if files.shared && files.threads > 1 {
        return Err(err(format!("with {} threads sharing one filename: each would unlink the file under the others; drop filename (a file per thread) or unlink_each_loop", files.threads)));
    }
    if !matches!(engine.name, "psync" | "libaio") {
        return Err(err(format!("with ioengine={}: fsbench opens the file again only for psync, sync, pvsync and libaio, which name it by its descriptor in each request", engine.name)));
    }
    timed.unlink_each_pass = true;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::fio::translate::tests::one;

    fn error(text: &str) -> String {
        crate::fio::translate::translate(text, "t.fio", "t", &|_| None).unwrap_err().to_string()
    }

    #[test]
    fn a_looping_write_job_unlinks_each_pass() {
        let (t, _) = one("[w]\nrw=write\nsize=1m\nloops=3\nunlink_each_loop=1\n");
        let timed = t.phases.last().unwrap();
        assert!(timed.unlink_each_pass && timed.invalidate_each_pass, "{timed:?}");
        let (t, _) = one("[w]\nrw=randwrite\nsize=1m\nloops=2\nunlink_each_loop\nnorandommap\n");
        assert!(t.phases[0].unlink_each_pass);
        for text in [
            "[w]\nrw=write\nsize=1m\nunlink_each_loop=1\n",
            "[w]\nrw=write\nsize=1m\nloops=3\nunlink_each_loop=1\ntime_based\nruntime=1\n",
        ] {
            let (t, notes) = one(text);
            assert!(!t.phases.iter().any(|p| p.unlink_each_pass), "{text}");
            assert!(notes.iter().any(|n| n.contains("no effect, as in fio")), "{notes:?}");
        }
        let (t, _) = one("[w]\nrw=write\nsize=1m\nloops=3\nunlink_each_loop=0\n");
        assert!(!t.phases[0].unlink_each_pass);
    }

    #[test]
    fn what_fio_fails_or_fsbench_cannot_unlink_is_refused_with_the_line() {
        for (text, says) in [
            ("[r]\nrw=read\nsize=1m\nloops=3\nunlink_each_loop=1\n", "fio 3.33 fails it"),
            (
                "[r]\nrw=randrw\nsize=1m\nloops=3\nunlink_each_loop=1\n",
                "the reads would find no data",
            ),
            ("[w]\nrw=write\nsize=1m\nloops=3\nunlink_each_loop=1\nfilename=/tmp/x\n", "a path"),
            (
                "[w]\nrw=write\nsize=1m\nloops=3\nunlink_each_loop=1\nnumjobs=2\nfilename=f\n",
                "sharing one filename",
            ),
            (
                "[w]\nrw=write\nsize=1m\nloops=3\nunlink_each_loop=1\nioengine=io_uring\n",
                "ioengine=io_uring",
            ),
        ] {
            let e = error(text);
            assert!(e.starts_with("t.fio:5: ") && e.contains(says), "{text}: {e}");
        }
    }
}
