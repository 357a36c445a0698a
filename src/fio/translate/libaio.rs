//! fio's `ioengine=libaio` beside the options that tune how an engine queues: the job runs on
//! fsbench's own `libaio` engine (Linux native AIO by the same system calls as fio's engine, at
//! the job's `iodepth`, buffered or direct), which does what fio's does with fio's defaults.
//! Kept apart from the engine choice because it is the one place that says which of fio's
//! batch options that engine can honour exactly.

use super::{FioError, Job};

/// fio's batch options with `ioengine=libaio`. fsbench's libaio engine hands each request to
/// `io_submit` as it is queued and takes one completion per `io_getevents`: fio's defaults
/// (`iodepth_batch_submit=1`, `iodepth_batch_complete_min=1`, and
/// `iodepth_batch_complete_max`, which defaults to the min). Those values, written
/// out, are accepted; other values would change the system calls, so they are refused with
/// the way out (io_uring takes them), never run with another meaning.
pub(super) fn batch_options(job: &Job) -> Result<(), FioError> {
    let depth = job.int("iodepth")?.map_or(1, |(d, _)| d);
    for (name, default) in [("iodepth_batch", 1), ("iodepth_batch_complete", 1)] {
        let Some((v, line)) = job.int(name)? else { continue };
        // fio: iodepth_batch_submit=0 means the job's iodepth.
        let v_eff = if v == 0 && name == "iodepth_batch" { depth } else { v };
        if v_eff != default {
            let what = match name {
                "iodepth_batch" => "submits each request as it is queued (fio's default, iodepth_batch_submit=1)",
                _ => "waits for at least one completion per io_getevents (fio's default, iodepth_batch_complete_min=1)",
            };
            return Err(job.err(
                name,
                line,
                format!("{v} with ioengine=libaio: fsbench's libaio engine {what}; another value needs ioengine=io_uring, which takes it, or remove the option"),
            ));
        }
    }
    Ok(())
}

/// fio's `userspace_reap` (libaio only): fio 3.33 reads completions from the ring in user space
/// instead of calling `io_getevents` only when it waits for none (`iodepth_batch_complete_min=0`,
/// which [`batch_options`] refuses), so in every job fsbench takes it has no effect, in fio as
/// here. With another engine it is refused, as the io_uring options are with libaio.
pub(super) fn userspace_reap(job: &Job, engine: &str) -> Result<(), FioError> {
    if job.bool("userspace_reap")?.is_none() || engine == "libaio" {
        return Ok(());
    }
    let e = job.str("ioengine")?.map(|v| v.0).unwrap_or("psync");
    Err(job.err(
        "userspace_reap",
        job.line("userspace_reap"),
        format!("an option of ioengine=libaio, and this job's ioengine is {e}: set ioengine=libaio or remove it"),
    ))
}
