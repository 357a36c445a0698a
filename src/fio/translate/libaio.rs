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
