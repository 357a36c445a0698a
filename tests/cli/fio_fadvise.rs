//! fio's `fadvise_hint` (on by default in fio) through the real binary: each thread advises
//! the kernel of its pattern right after opening its file, `POSIX_FADV_RANDOM` for a random
//! job and `POSIX_FADV_SEQUENTIAL` otherwise, as fio 3.33 does (checked under strace); with
//! `fadvise_hint=0` neither. On a buffered random read the hint turns readahead off, which
//! is what fio's fio-rand-read example measures (without it fio moves about twice the ops).

use crate::util::*;

/// The `fadvise64` calls of a `run --fio` of `job` under strace, as strace prints them.
fn advice_calls(job: &str) -> Vec<String> {
    let text = strace_fio_job(job, false, "fadvise64");
    text.lines().filter(|l| l.contains("fadvise64(")).map(str::to_string).collect()
}

fn count(calls: &[String], advice: &str) -> usize {
    calls.iter().filter(|l| l.contains(advice)).count()
}

/// A random read gets one RANDOM hint per thread, a sequential read one SEQUENTIAL hint per
/// thread, and `fadvise_hint=0` none of either (the cache drops, DONTNEED, stay).
#[test]
fn fio_fadvise_hint_is_given_as_fio_gives_it() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let calls = advice_calls("[r]\nrw=randread\nbs=4k\nsize=1m\nnumjobs=2\n");
    assert_eq!(count(&calls, "POSIX_FADV_RANDOM"), 2, "{calls:#?}");
    assert_eq!(count(&calls, "POSIX_FADV_SEQUENTIAL"), 0, "{calls:#?}");
    let calls = advice_calls("[s]\nrw=read\nbs=4k\nsize=1m\n");
    assert_eq!(count(&calls, "POSIX_FADV_SEQUENTIAL"), 1, "{calls:#?}");
    assert_eq!(count(&calls, "POSIX_FADV_RANDOM"), 0, "{calls:#?}");
    let calls = advice_calls("[n]\nrw=randread\nbs=4k\nsize=1m\nfadvise_hint=0\n");
    assert_eq!(count(&calls, "POSIX_FADV_RANDOM") + count(&calls, "POSIX_FADV_SEQUENTIAL"), 0);
    assert!(count(&calls, "POSIX_FADV_DONTNEED") > 0, "the uncached start still drops: {calls:#?}");
}
