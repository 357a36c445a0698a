//! fio's `unlink_each_loop` through the real binary, side by side with fio 3.33 under strace:
//! a 1 MiB write job with `loops=3` unlinks its file and opens it again with `O_CREAT` before
//! each loop after the first (two of each while it writes), in both tools, and writes the
//! same 768 blocks.

use crate::util::*;

/// The first quoted path of a call.
fn path(call: &str) -> Option<&str> {
    call.split('"').nth(1)
}

/// Of the job's writes (4 KiB `pwrite64`s) and what comes between its first and last: the
/// writes, the successful unlinks, and the `O_CREAT` opens of an unlinked path.
fn counts(job: &str, fio: bool) -> (usize, usize, usize) {
    let log = strace_fio_job(job, fio, "openat,unlink,unlinkat,pwrite64");
    let c = strace_calls(&log);
    let writes: Vec<usize> = (0..c.len())
        .filter(|&i| c[i].starts_with("pwrite64(") && c[i].ends_with("= 4096"))
        .collect();
    let (Some(&a), Some(&b)) = (writes.first(), writes.last()) else {
        panic!("{}: no writes", if fio { "fio" } else { "fsbench" })
    };
    let window = &c[a..=b];
    let unlinked: Vec<&str> = window
        .iter()
        .filter(|l| l.starts_with("unlink") && l.ends_with("= 0"))
        .filter_map(|l| path(l))
        .collect();
    let reopened = window
        .iter()
        .filter(|l| l.starts_with("openat(") && l.contains("O_CREAT") && !l.contains("= -1"))
        .filter(|l| path(l).is_some_and(|p| unlinked.contains(&p)))
        .count();
    (writes.len(), unlinked.len(), reopened)
}

#[test]
fn unlink_each_loop_unlinks_and_reopens_as_fio() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let job = "[w]\nrw=write\nbs=4k\nsize=1m\nloops=3\nunlink_each_loop=1\n";
    let plain = "[w]\nrw=write\nbs=4k\nsize=1m\nloops=3\n";
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (apt-get install fio): fsbench's calls checked alone");
    }
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        assert_eq!(counts(job, fio), (768, 2, 2), "{who}: writes, unlinks, O_CREAT opens");
        assert_eq!(counts(plain, fio).1, 0, "{who}: unlinks without unlink_each_loop");
    }
}
