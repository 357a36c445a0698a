//! fio's `fallocate` through the real binary: a write-only job's file is laid out before the
//! job as fio 3.33 lays it out (`fallocate(fd, 0, 0, size)` by default, `FALLOC_FL_KEEP_SIZE`
//! with `keep`, `ftruncate` with `truncate`, nothing with `none`), checked under strace, and
//! side by side with fio's own calls when fio is installed. A job that reads gets its file
//! written out instead (no fallocate).

use crate::util::*;

/// The `fallocate` and `ftruncate` calls of fsbench (`run --fio`), or of fio with `fio`, on
/// `job`, each reduced to its arguments after the fd.
fn layout_calls(job: &str, fio: bool) -> Vec<String> {
    let text = strace_fio_job(job, fio, "fallocate,ftruncate");
    text.lines()
        .filter_map(|l| {
            let (call, rest) = l.split_once('(')?;
            let call = call.rsplit(' ').next()?;
            matches!(call, "fallocate" | "ftruncate").then_some(())?;
            // "fallocate(5, 0, 0, 1048576) = 0": drop the pid and the fd.
            let args = rest.split_once(", ")?.1;
            Some(format!("{call}({args}").split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect()
}

/// fsbench lays out a write job's files as fio's `fallocate` modes say: once per file, before
/// the job, with fio's calls; a read job's file is written out, not fallocated.
#[test]
fn fio_fallocate_lays_out_a_write_jobs_file_as_fio() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let native = "fallocate(0, 0, 1048576) = 0";
    let calls = layout_calls("[w]\nrw=randwrite\nbs=4k\nsize=1m\nnumjobs=2\n", false);
    assert_eq!(calls, [native, native], "one per thread's file");
    let calls = layout_calls("[w]\nrw=write\nbs=4k\nsize=1m\nfallocate=keep\n", false);
    assert_eq!(calls, ["fallocate(FALLOC_FL_KEEP_SIZE, 0, 1048576) = 0"]);
    let calls = layout_calls("[w]\nrw=write\nbs=4k\nsize=1m\nfallocate=truncate\n", false);
    assert_eq!(calls, ["ftruncate(1048576) = 0"]);
    let calls = layout_calls("[w]\nrw=write\nbs=4k\nsize=1m\nfallocate=none\n", false);
    assert!(calls.is_empty(), "{calls:?}");
    // create_on_open: no lay-out, whatever fallocate says.
    let on_open = "[w]\nrw=write\nbs=4k\nsize=1m\nfallocate=native\ncreate_on_open=1\n";
    let calls = layout_calls(on_open, false);
    assert!(calls.is_empty(), "{calls:?}");
    let calls = layout_calls("[r]\nrw=randread\nbs=4k\nsize=1m\n", false);
    assert!(calls.iter().all(|c| !c.starts_with("fallocate")), "{calls:?}");
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's calls checked alone");
        return;
    }
    for job in [
        "[w]\nrw=randwrite\nbs=4k\nsize=1m\nnumjobs=2\n",
        "[w]\nrw=write\nbs=4k\nsize=1m\nfallocate=keep\n",
        "[w]\nrw=write\nbs=4k\nsize=1m\nfallocate=none\n",
        on_open,
    ] {
        let (ours, fios) = (layout_calls(job, false), layout_calls(job, true));
        assert_eq!(ours, fios, "{job}");
    }
}
