//! The fio options fsbench reads, in one table (as fio's own `options.c`): name, aliases, the
//! kind of value and what fsbench makes of it. The kind decides how the translation reads the
//! value (a flag, a count, a size, a time) and the message when it does not parse. An option
//! not in this table is refused with its line; the table drives the "supported: ..." list in
//! that error, and `docs/reference/fio.md`'s table is checked against it.

/// How an option's value is written, which decides how it is read (fio's option types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `0`/`1` (or `true`/`false`, `on`/`off`, `yes`/`no`); the name alone means 1.
    Flag,
    /// A whole number.
    Count,
    /// A size with fio's units: `4k`, `64m` (powers of 1024), `4KiB` (powers of 1000).
    Size,
    /// Sizes for reads, writes and trims: `R[,W[,T]]`, one size for all.
    Sizes,
    /// Seconds, or a number with `us`, `ms`, `s`, `m`, `h` or `d`.
    Time,
    /// A word or text that the option's own translation checks.
    Text,
}

impl Kind {
    /// How a value of this kind is written, for messages and docs.
    pub fn syntax(self) -> &'static str {
        match self {
            Kind::Flag => "0 or 1",
            Kind::Count => "a whole number",
            Kind::Size => "a size (4k, 64m, 1g)",
            Kind::Sizes => "a size, or read,write sizes (4k,64k)",
            Kind::Time => "seconds, or a number with us, ms, s, m, h or d",
            Kind::Text => "text",
        }
    }
}

/// One supported fio option.
#[derive(Debug, Clone, Copy)]
pub struct FioOption {
    /// fio's name.
    pub name: &'static str,
    /// How its value is written; [`mod@crate::fio::translate`] reads it so.
    pub kind: Kind,
    /// Other names fio accepts for it.
    pub aliases: &'static [&'static str],
    /// What fsbench does with it (one line, shown in docs).
    pub meaning: &'static str,
}

/// Every option fsbench understands.
pub const OPTIONS: &[FioOption] = &[
    FioOption { name: "name",
        kind: Kind::Text, aliases: &[], meaning: "the test's name (default: the section name)" },
    FioOption { name: "description",
        kind: Kind::Text, aliases: &[], meaning: "the test's description" },
    FioOption {
        name: "rw",
        kind: Kind::Text,
        aliases: &["readwrite"],
        meaning: "read, write, randread, randwrite, randrw (fixed interleave by rwmixread); rw/readwrite, trim and `:N` suffixes are refused",
    },
    FioOption { name: "rwmixread",
        kind: Kind::Count, aliases: &[], meaning: "read share of randrw, in percent (default 50)" },
    FioOption { name: "rwmixwrite",
        kind: Kind::Count, aliases: &[], meaning: "write share of randrw (100 - rwmixread)" },
    FioOption {
        name: "bs",
        kind: Kind::Sizes,
        aliases: &["blocksize"],
        meaning: "transfer size; `bs=R,W` gives reads and writes their own",
    },
    FioOption {
        name: "bsrange",
        kind: Kind::Text,
        aliases: &["blocksize_range"],
        meaning: "only `A-A` (one size): fio draws multiples of the minimum, which fsbench cannot",
    },
    FioOption { name: "bssplit",
        kind: Kind::Text, aliases: &[], meaning: "only one entry (`4k/100`): a fixed size" },
    FioOption { name: "blockalign",
        kind: Kind::Sizes, aliases: &["ba"], meaning: "alignment of random offsets (default: bs)" },
    FioOption { name: "numjobs",
        kind: Kind::Count, aliases: &[], meaning: "threads" },
    FioOption { name: "size",
        kind: Kind::Size, aliases: &[], meaning: "file size and bytes moved per thread" },
    FioOption { name: "filesize",
        kind: Kind::Size, aliases: &[], meaning: "file size (size then only sets the bytes moved)" },
    FioOption { name: "io_size",
        kind: Kind::Size, aliases: &["io_limit"], meaning: "bytes moved per thread" },
    FioOption { name: "nrfiles",
        kind: Kind::Count, aliases: &["nr_files"], meaning: "only 1" },
    FioOption {
        name: "filename",
        kind: Kind::Text,
        aliases: &[],
        meaning: "a plain name: the numjobs threads share one file; paths and devices are refused (fsbench makes its files in --dir)",
    },
    FioOption { name: "directory",
        kind: Kind::Text, aliases: &[], meaning: "the run directory when neither --dir nor --fs is given" },
    FioOption { name: "direct",
        kind: Kind::Flag, aliases: &[], meaning: "O_DIRECT" },
    FioOption { name: "sync",
        kind: Kind::Text, aliases: &[], meaning: "0/none, 1/sync (O_SYNC), dsync (O_DSYNC)" },
    FioOption { name: "fsync",
        kind: Kind::Count, aliases: &[], meaning: "fsync every N writes" },
    FioOption { name: "fdatasync",
        kind: Kind::Count, aliases: &[], meaning: "fdatasync every N writes" },
    FioOption { name: "end_fsync",
        kind: Kind::Flag, aliases: &[], meaning: "fsync after the last write, timed" },
    FioOption { name: "fsync_on_close",
        kind: Kind::Flag, aliases: &[], meaning: "fsync before close, timed (same as end_fsync here)" },
    FioOption { name: "iodepth",
        kind: Kind::Count, aliases: &[], meaning: "queue depth (above 1 needs ioengine=io_uring)" },
    FioOption {
        name: "iodepth_batch",
        kind: Kind::Count,
        aliases: &["iodepth_batch_submit"],
        meaning: "io_uring: submit once this many requests are queued",
    },
    FioOption {
        name: "iodepth_batch_complete",
        kind: Kind::Count,
        aliases: &["iodepth_batch_complete_min"],
        meaning: "io_uring: wait for at least this many completions per reap",
    },
    FioOption { name: "sqthread_poll",
        kind: Kind::Flag, aliases: &[], meaning: "io_uring: sqpoll = true" },
    FioOption { name: "hipri",
        kind: Kind::Flag, aliases: &[], meaning: "io_uring: iopoll = true (needs direct=1)" },
    FioOption {
        name: "fixedbufs",
        kind: Kind::Flag,
        aliases: &[],
        meaning: "io_uring: fixedbufs = true (buffers registered, READ_FIXED/WRITE_FIXED)",
    },
    FioOption {
        name: "registerfiles",
        kind: Kind::Flag,
        aliases: &[],
        meaning: "io_uring: registerfiles (fio's default 0 is kept: without it fsbench names the file by descriptor too; sqthread_poll implies it)",
    },
    FioOption {
        name: "ioengine",
        kind: Kind::Text,
        aliases: &[],
        meaning: "psync, sync and pvsync run as psync; io_uring; libaio: on a buffered file as psync (the kernel completes it in io_submit), with direct=1 as io_uring at the same depth (said so); mmap",
    },
    FioOption { name: "runtime",
        kind: Kind::Time, aliases: &["timeout"], meaning: "seconds, with time_based" },
    FioOption { name: "time_based",
        kind: Kind::Flag, aliases: &[], meaning: "run for runtime seconds" },
    FioOption { name: "ramp_time",
        kind: Kind::Time, aliases: &[], meaning: "an untimed phase of this many seconds first" },
    FioOption { name: "norandommap",
        kind: Kind::Flag, aliases: &[], meaning: "offsets drawn with replacement (random_map = false); without it each block once per pass (random_map = true, in fsbench's own order)" },
    FioOption { name: "random_generator",
        kind: Kind::Text, aliases: &[], meaning: "tausworthe, tausworthe64: offsets as norandommap says; lfsr: each block once per pass even with norandommap (fsbench's own order, not fio's LFSR sequence)" },
    FioOption { name: "randrepeat",
        kind: Kind::Flag, aliases: &[], meaning: "1: the same offsets each run (fsbench's fixed --seed)" },
    FioOption { name: "offset",
        kind: Kind::Text, aliases: &[], meaning: "only 0" },
    FioOption { name: "thread",
        kind: Kind::Flag, aliases: &[], meaning: "fsbench always uses threads" },
    FioOption { name: "group_reporting",
        kind: Kind::Flag, aliases: &[], meaning: "fsbench reports a test's threads together" },
    FioOption {
        name: "invalidate",
        kind: Kind::Flag,
        aliases: &[],
        meaning: "1 (default): buffered reads start uncached (verified), and a time-based buffered job drops the file's pages at each pass (invalidate_each_pass); 0: any",
    },
    FioOption { name: "stonewall",
        kind: Kind::Flag, aliases: &["wait_for_previous"], meaning: "run after the jobs before" },
    FioOption { name: "verify",
        kind: Kind::Text, aliases: &[], meaning: "only 0/none" },
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
