//! The fio options fsbench reads, in one table (as fio's own `options.c`): name, aliases and what
//! fsbench makes of it. An option not in this table is refused with its line; the table drives
//! the "supported: ..." list in that error and `docs/reference/fio.md`'s table is checked
//! against it.

/// One supported fio option.
#[derive(Debug, Clone, Copy)]
pub struct FioOption {
    /// fio's name.
    pub name: &'static str,
    /// Other names fio accepts for it.
    pub aliases: &'static [&'static str],
    /// What fsbench does with it (one line, shown in docs).
    pub meaning: &'static str,
}

/// Every option fsbench understands.
pub const OPTIONS: &[FioOption] = &[
    FioOption { name: "name", aliases: &[], meaning: "the test's name (default: the section name)" },
    FioOption { name: "description", aliases: &[], meaning: "the test's description" },
    FioOption {
        name: "rw",
        aliases: &["readwrite"],
        meaning: "read, write, randread, randwrite, randrw (fixed interleave by rwmixread); rw/readwrite, trim and `:N` suffixes are refused",
    },
    FioOption { name: "rwmixread", aliases: &[], meaning: "read share of randrw, in percent (default 50)" },
    FioOption { name: "rwmixwrite", aliases: &[], meaning: "write share of randrw (100 - rwmixread)" },
    FioOption {
        name: "bs",
        aliases: &["blocksize"],
        meaning: "transfer size; `bs=R,W` gives reads and writes their own",
    },
    FioOption {
        name: "bsrange",
        aliases: &["blocksize_range"],
        meaning: "only `A-A` (one size): fio draws multiples of the minimum, which fsbench cannot",
    },
    FioOption { name: "bssplit", aliases: &[], meaning: "only one entry (`4k/100`): a fixed size" },
    FioOption { name: "blockalign", aliases: &["ba"], meaning: "alignment of random offsets (default: bs)" },
    FioOption { name: "numjobs", aliases: &[], meaning: "threads" },
    FioOption { name: "size", aliases: &[], meaning: "file size and bytes moved per thread" },
    FioOption { name: "filesize", aliases: &[], meaning: "file size (size then only sets the bytes moved)" },
    FioOption { name: "io_size", aliases: &["io_limit"], meaning: "bytes moved per thread" },
    FioOption { name: "nrfiles", aliases: &["nr_files"], meaning: "only 1" },
    FioOption {
        name: "filename",
        aliases: &[],
        meaning: "a plain name: the numjobs threads share one file; paths and devices are refused (fsbench makes its files in --dir)",
    },
    FioOption { name: "directory", aliases: &[], meaning: "the run directory when neither --dir nor --fs is given" },
    FioOption { name: "direct", aliases: &[], meaning: "O_DIRECT" },
    FioOption { name: "sync", aliases: &[], meaning: "0/none, 1/sync (O_SYNC), dsync (O_DSYNC)" },
    FioOption { name: "fsync", aliases: &[], meaning: "fsync every N writes" },
    FioOption { name: "fdatasync", aliases: &[], meaning: "fdatasync every N writes" },
    FioOption { name: "end_fsync", aliases: &[], meaning: "fsync after the last write, timed" },
    FioOption { name: "fsync_on_close", aliases: &[], meaning: "fsync before close, timed (same as end_fsync here)" },
    FioOption { name: "iodepth", aliases: &[], meaning: "queue depth (above 1 needs ioengine=io_uring)" },
    FioOption {
        name: "iodepth_batch",
        aliases: &["iodepth_batch_submit"],
        meaning: "io_uring: submit once this many requests are queued",
    },
    FioOption {
        name: "iodepth_batch_complete",
        aliases: &["iodepth_batch_complete_min"],
        meaning: "io_uring: wait for at least this many completions per reap",
    },
    FioOption { name: "sqthread_poll", aliases: &[], meaning: "io_uring: sqpoll = true" },
    FioOption { name: "hipri", aliases: &[], meaning: "io_uring: iopoll = true (needs direct=1)" },
    FioOption {
        name: "fixedbufs",
        aliases: &[],
        meaning: "io_uring: fixedbufs = true (buffers registered, READ_FIXED/WRITE_FIXED)",
    },
    FioOption {
        name: "registerfiles",
        aliases: &[],
        meaning: "io_uring: registerfiles (fio's default 0 is kept: without it fsbench names the file by descriptor too; sqthread_poll implies it)",
    },
    FioOption {
        name: "ioengine",
        aliases: &[],
        meaning: "psync, sync and pvsync run as psync; io_uring; libaio runs as io_uring (said so); mmap",
    },
    FioOption { name: "runtime", aliases: &["timeout"], meaning: "seconds, with time_based" },
    FioOption { name: "time_based", aliases: &[], meaning: "run for runtime seconds" },
    FioOption { name: "ramp_time", aliases: &[], meaning: "an untimed phase of this many seconds first" },
    FioOption { name: "norandommap", aliases: &[], meaning: "offsets drawn with replacement (fsbench's way)" },
    FioOption { name: "randrepeat", aliases: &[], meaning: "1: the same offsets each run (fsbench's fixed --seed)" },
    FioOption { name: "offset", aliases: &[], meaning: "only 0" },
    FioOption { name: "thread", aliases: &[], meaning: "fsbench always uses threads" },
    FioOption { name: "group_reporting", aliases: &[], meaning: "fsbench reports a test's threads together" },
    FioOption {
        name: "invalidate",
        aliases: &[],
        meaning: "1 (default): buffered reads start uncached (verified); 0: any",
    },
    FioOption { name: "stonewall", aliases: &["wait_for_previous"], meaning: "run after the jobs before" },
    FioOption { name: "verify", aliases: &[], meaning: "only 0/none" },
];

/// The table entry for `key` (by name or alias).
pub fn lookup(key: &str) -> Option<&'static FioOption> {
    OPTIONS.iter().find(|o| o.name == key || o.aliases.contains(&key))
}

/// The supported names, comma-separated, for errors.
pub fn names() -> String {
    // Each with its aliases, as the user may have written either.
    OPTIONS
        .iter()
        .map(|o| match o.aliases {
            [] => o.name.to_string(),
            a => format!("{} ({})", o.name, a.join(", ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The supported name or alias nearest to a misspelled `key`, when one is near (Jaro-Winkler
/// similarity above 0.85, as near as clap asks of a flag).
pub fn closest(key: &str) -> Option<&'static str> {
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|n| (strsim::jaro_winkler(key, n), n))
        .filter(|(s, _)| *s > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_gets_the_supported_name_and_nothing_far_does() {
        assert_eq!(closest("iodeph"), Some("iodepth"));
        assert_eq!(closest("rwmixred"), Some("rwmixread"));
        assert_eq!(closest("ioengin"), Some("ioengine"));
        assert_eq!(closest("cpus_allowed"), None);
        assert_eq!(closest("zonemode"), None);
        assert!(names().contains("stonewall (wait_for_previous)"), "{}", names());
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = OPTIONS.iter().flat_map(|o| o.aliases.iter().copied()).collect();
        all.extend(OPTIONS.iter().map(|o| o.name));
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a name or alias appears twice");
        assert_eq!(lookup("readwrite").map(|o| o.name), Some("rw"));
        assert!(lookup("exitall").is_none());
    }
}
