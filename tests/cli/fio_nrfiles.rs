//! fio's `nrfiles` for a data job through the real binary, side by side with fio 3.33 under
//! strace: a 64 KiB read job of 4 KiB blocks on 4 files reads 16 blocks, each file's 4 once,
//! the file changing after each read (`file_service_type=roundrobin`, the default) or after
//! each file's 4 (`sequential`), each file's offsets in order (`rw=read`) or each block once
//! in any order (`randread` with the random map), in both tools.

use crate::util::*;

/// The job's 4 KiB reads, in order, as (file, offset): `file` numbers the job's files as
/// their names sort (`j.0.0` to `j.0.3` in both tools: fsbench names them as fio), each
/// read's descriptor resolved by the open that returned it last.
fn reads(job: &str, fio: bool) -> Vec<(usize, u64)> {
    reads_of(job, fio, 4)
}

/// [`reads`] of a job of `files` files in all (its threads' together).
fn reads_of(job: &str, fio: bool, files: usize) -> Vec<(usize, u64)> {
    let log = strace_fio_job(job, fio, "openat,pread64");
    let mut fds = std::collections::HashMap::<String, String>::new();
    let mut out = Vec::new();
    for c in strace_calls(&log) {
        if c.starts_with("openat(") {
            let name = c.split('"').nth(1).unwrap_or("").rsplit('/').next().unwrap_or("");
            let ours = name.starts_with("j.");
            if let (true, Some(fd)) = (ours, c.rsplit("= ").next()) {
                fds.insert(fd.trim().to_string(), name.to_string());
            }
        } else if c.starts_with("pread64(") && c.ends_with("= 4096") {
            let fd = c["pread64(".len()..].split(',').next().unwrap_or("").to_string();
            let Some(name) = fds.get(&fd) else { continue };
            // pread64(fd, buf, 4096, OFFSET) = 4096
            let head = c.rsplit_once(") = ").map_or("", |x| x.0);
            let off: u64 = head.rsplit(", ").next().unwrap_or("").trim().parse().unwrap();
            out.push((name.clone(), off));
        }
    }
    let mut names: Vec<String> = out.iter().map(|r| r.0.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        files,
        "{}: files read: {names:?}",
        if fio { "fio" } else { "fsbench" }
    );
    out.iter().map(|(n, o)| (names.iter().position(|x| x == n).unwrap(), *o)).collect()
}

/// The tools to compare: fsbench, and fio 3.33 when installed.
fn tools() -> Option<Vec<bool>> {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return None;
    }
    let mut tools = vec![false];
    if have("fio") {
        tools.push(true);
    } else {
        skip("fio not installed (apt-get install fio): fsbench's calls checked alone");
    }
    Some(tools)
}

const JOB: &str = "[j]\nbs=4k\nsize=64k\nnrfiles=4\nioengine=psync\n";

/// Each file's offsets, in the order they were read.
fn per_file(r: &[(usize, u64)]) -> Vec<Vec<u64>> {
    (0..4).map(|f| r.iter().filter(|x| x.0 == f).map(|x| x.1).collect()).collect()
}

#[test]
fn nrfiles_round_robin_reads_each_file_in_turn_as_fio() {
    let Some(tools) = tools() else { return };
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = reads(&format!("{JOB}rw=read\n"), fio);
        assert_eq!(r.len(), 16, "{who}: {r:?}");
        let order: Vec<usize> = r.iter().map(|x| x.0).collect();
        // The file changes after each read, in order, from whichever comes first.
        let first = order[0];
        let want: Vec<usize> = (0..16).map(|i| (first + i) % 4).collect();
        assert_eq!(order, want, "{who}: files in turn");
        for (f, offs) in per_file(&r).iter().enumerate() {
            assert_eq!(offs, &[0, 4096, 8192, 12288], "{who}: file {f} in order");
        }
    }
}

#[test]
fn nrfiles_sequential_service_reads_one_file_then_the_next_as_fio() {
    let Some(tools) = tools() else { return };
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = reads(&format!("{JOB}rw=read\nfile_service_type=sequential\n"), fio);
        assert_eq!(r.len(), 16, "{who}: {r:?}");
        let order: Vec<usize> = r.iter().map(|x| x.0).collect();
        let want: Vec<usize> = (0..16).map(|i| (order[0] + i / 4) % 4).collect();
        assert_eq!(order, want, "{who}: 4 reads of one file, then the next");
        for (f, offs) in per_file(&r).iter().enumerate() {
            assert_eq!(offs, &[0, 4096, 8192, 12288], "{who}: file {f} in order");
        }
    }
}

#[test]
fn nrfiles_random_reads_with_the_map_read_each_block_of_each_file_once_as_fio() {
    let Some(tools) = tools() else { return };
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = reads(&format!("{JOB}rw=randread\n"), fio);
        assert_eq!(r.len(), 16, "{who}: {r:?}");
        let order: Vec<usize> = r.iter().map(|x| x.0).collect();
        let want: Vec<usize> = (0..16).map(|i| (order[0] + i) % 4).collect();
        assert_eq!(order, want, "{who}: files in turn");
        for (f, offs) in per_file(&r).iter().enumerate() {
            let mut o = offs.clone();
            o.sort();
            assert_eq!(o, [0, 4096, 8192, 12288], "{who}: file {f}'s blocks once each");
        }
        // Random: some file's blocks out of order (a fixed seed in each tool).
        let sorted = per_file(&r).iter().all(|o| o.windows(2).all(|w| w[0] < w[1]));
        assert!(!sorted, "{who}: random offsets in order: {r:?}");
    }
}

/// `roundrobin:2` moves on after two reads of a file, in fsbench as in fio.
#[test]
fn nrfiles_round_robin_of_two_reads_each_file_twice_in_turn() {
    let Some(tools) = tools() else { return };
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = reads(&format!("{JOB}rw=read\nfile_service_type=roundrobin:2\n"), fio);
        let order: Vec<usize> = r.iter().map(|x| x.0).collect();
        let want: Vec<usize> = (0..16).map(|i| (order[0] + i / 2) % 4).collect();
        assert_eq!(order, want, "{who}: two reads per file in turn");
    }
}

/// `random:2`: each draw picks a file uniformly among those not done and reads two blocks of
/// it, so the reads come in pairs of one file, not in a fixed turn, and with the random map
/// each file's 256 blocks are read once each (a file done is passed over, as fio's
/// `get_next_file` passes over a file `fio_file_done`), in both tools.
#[test]
fn nrfiles_random_service_draws_among_files_not_done_as_fio() {
    let Some(tools) = tools() else { return };
    let job =
        "[j]\nbs=4k\nsize=4m\nnrfiles=4\nioengine=psync\nrw=randread\nfile_service_type=random:2\n";
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = reads(job, fio);
        assert_eq!(r.len(), 1024, "{who}");
        for (f, offs) in per_file(&r).iter().enumerate() {
            let mut o = offs.clone();
            o.sort();
            let want: Vec<u64> = (0..256).map(|k| k * 4096).collect();
            assert_eq!(o, want, "{who}: file {f}'s blocks once each");
        }
        assert!(r.chunks(2).all(|p| p[0].0 == p[1].0), "{who}: two reads per draw");
        // Not in a fixed order: some draw repeats the file before it, or skips one.
        let pairs: Vec<usize> = r.chunks(2).map(|p| p[0].0).collect();
        let in_turn = pairs.windows(2).all(|w| w[1] == (w[0] + 1) % 4);
        assert!(!in_turn, "{who}: files in a fixed turn");
    }
}

/// With numjobs=2 each clone reads its own 4 files (8 in all), each file's 4 blocks in order.
#[test]
fn nrfiles_with_numjobs_gives_each_clone_its_own_files_as_fio() {
    let Some(tools) = tools() else { return };
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let r = reads_of(&format!("{JOB}rw=read\nnumjobs=2\nthread\n"), fio, 8);
        assert_eq!(r.len(), 32, "{who}");
        for f in 0..8 {
            let offs: Vec<u64> = r.iter().filter(|x| x.0 == f).map(|x| x.1).collect();
            assert_eq!(offs, [0, 4096, 8192, 12288], "{who}: file {f} in order");
        }
    }
}

/// A write job lays out each of its files before the job as fio does (one
/// `fallocate(fd, 0, 0, 16384)` per file: size=32k over 2 files), then writes them in turn,
/// each file's blocks in order, in both tools.
#[test]
fn nrfiles_write_lays_out_each_file_and_writes_them_in_turn_as_fio() {
    let Some(tools) = tools() else { return };
    let job = "[j]\nbs=4k\nsize=32k\nnrfiles=2\nioengine=psync\nrw=write\n";
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        let log = strace_fio_job(job, fio, "openat,pwrite64,fallocate");
        let c = strace_calls(&log);
        let laid = c.iter().filter(|l| l.starts_with("fallocate(") && l.contains(", 0, 0, 16384)"));
        assert_eq!(laid.count(), 2, "{who}: one fallocate per file");
        let writes: Vec<(String, u64)> = c
            .iter()
            .filter(|l| l.starts_with("pwrite64(") && l.ends_with("= 4096"))
            .map(|l| {
                let fd = l["pwrite64(".len()..].split(',').next().unwrap_or("").to_string();
                let head = l.rsplit_once(") = ").map_or("", |x| x.0);
                let off = head.rsplit(',').next().unwrap_or("").trim().parse();
                (fd, off.unwrap_or_else(|e| panic!("{who}: {e}: no offset in {l:?}\n{log}")))
            })
            .collect();
        assert_eq!(writes.len(), 8, "{who}: {writes:?}");
        let fds: Vec<&str> = writes.iter().map(|w| w.0.as_str()).collect();
        assert!(fds[0] != fds[1], "{who}: {fds:?}");
        for (i, w) in writes.iter().enumerate() {
            assert_eq!(w.0, fds[i % 2], "{who}: files in turn: {fds:?}");
            assert_eq!(w.1, (i as u64 / 2) * 4096, "{who}: each file in order: {writes:?}");
        }
    }
}

/// The basenames of the job's files both tools open (the successful `openat`s in the data
/// directory: fio's `--directory`, fsbench's work directory under it, which it reaches by
/// `/proc/self/fd/N`), sorted, once each.
fn opened_names(job: &str, fio: bool) -> Vec<String> {
    let log = strace_fio_job(job, fio, "openat");
    let mut names: Vec<String> = strace_calls(&log)
        .iter()
        .filter(|c| c.starts_with("openat(") && !c.contains("O_DIRECTORY") && !c.contains("= -1"))
        .filter_map(|c| c.split('"').nth(1).map(std::path::Path::new))
        .filter(|p| {
            let dir = p.parent().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
            let own = dir.strip_prefix("/proc/self/fd/").is_some_and(|n| n.parse::<u32>().is_ok());
            dir.ends_with("/data") || own
        })
        .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// fio's names for a job's files (`filename_format`, default `$jobname.$jobnum.$filenum`):
/// with `nrfiles=2 numjobs=2` both tools open `j.0.0`, `j.0.1`, `j.1.0` and `j.1.1` (and
/// `j.0.0`, `j.1.0` with one file per thread); with
/// `filename_format=f.$filenum` both open `f.0` and `f.1` only, and read each file's blocks
/// once: fio 3.33 gives the second clone no file (its names are the first's), fsbench runs the
/// job as one thread.
#[test]
fn a_jobs_files_have_the_names_fio_gives_them() {
    let Some(tools) = tools() else { return };
    let job = "[j]\nbs=4k\nsize=16k\nnrfiles=2\nnumjobs=2\nioengine=psync\nrw=read\nthread\n";
    let shared = format!("{job}filename_format=f.$filenum\n");
    for fio in tools {
        let who = if fio { "fio" } else { "fsbench" };
        assert_eq!(opened_names(job, fio), ["j.0.0", "j.0.1", "j.1.0", "j.1.1"], "{who}");
        let one = job.replace("nrfiles=2\n", "");
        assert_eq!(opened_names(&one, fio), ["j.0.0", "j.1.0"], "{who}: one file per thread");
        assert_eq!(opened_names(&shared, fio), ["f.0", "f.1"], "{who}");
        let log = strace_fio_job(&shared, fio, "openat,pread64");
        let reads = strace_calls(&log)
            .iter()
            .filter(|c| c.starts_with("pread64(") && c.ends_with("= 4096"))
            .count();
        assert_eq!(reads, 4, "{who}: 16 KiB over the two files, by one clone");
    }
}
