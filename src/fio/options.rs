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
        meaning: "read, write, randread, randwrite, randrw (each op's direction drawn by rwmixread, as fio; a fixed interleave when reads and writes differ in size), rw/readwrite (sequential, each op's direction drawn by rwmixread, reads and writes each with their own position, as fio; one size for both); `:N`: after a sequential word N bytes skipped after each I/O (negative backwards, `read:-8k`; a size-bound job stops where fio's does, when an I/O ends at the end of the file; not with rw), after a random word N I/Os per offset with rw_sequencer=identical (the sequential default is refused); trim is refused",
    },
    FioOption { name: "rwmixread",
        kind: Kind::Count, aliases: &[], meaning: "read share of randrw and rw, in percent (default 50)" },
    FioOption { name: "rwmixwrite",
        kind: Kind::Count, aliases: &[], meaning: "write share of randrw and rw (100 - rwmixread)" },
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
        meaning: "`MIN-MAX` (`R,W` per direction): sizes drawn per op by fio 3.33's law (MIN + MAX × u rounded down to a multiple of MIN, at most MAX: 4k-16k draws 4k, 8k, 12k and 16k a quarter each; 4k-10k 4k and 8k 40% each, 10k 20%), as the workload's size = { split = [...] }, so at most 16 sizes; random offsets aligned to MIN and drawn with replacement, as with bssplit (noted); `A-A` is one size",
    },
    FioOption { name: "bssplit",
        kind: Kind::Text, aliases: &[], meaning: "sizes drawn by percentage per op (`4k/60:64k/40`, `R,W` per direction; a blank percentage shares what is left), up to 16 sizes: the workload's size = { split = [...] }, each size rounded down to a multiple of the smallest as fio does unless bs_unaligned; random offsets aligned to the smallest size, drawn with replacement (noted)" },
    FioOption { name: "bs_unaligned",
        kind: Kind::Flag, aliases: &["blocksize_unaligned"], meaning: "1 (the name alone): drawn sizes are not rounded down to a multiple of the smallest, as fio 3.33: bsrange=MIN-MAX draws MIN + ⌊MAX × u⌋ bytes, at most MAX, any byte count (4k-16k: every size from 4096 to 16383 bytes 1/16384 each, 16384 a quarter of the time; the workload's size = { unaligned_range = [...] }), and bssplit's sizes are taken as given; sequential offsets follow on unaligned, random ones stay multiples of blockalign (MIN); a sequential job's end differs (noted); refused with bsrange and direct=1 (fio 3.33 fails the job: EINVAL); no effect with one bs. 0 (default): fio's rounding, for bssplit too (bssplit=4k/50:6k/50 issues 4 KiB ops only)" },
    FioOption { name: "blockalign",
        kind: Kind::Sizes, aliases: &["ba"], meaning: "alignment of random offsets (default: bs)" },
    FioOption { name: "numjobs",
        kind: Kind::Count, aliases: &[], meaning: "threads, fio's clones: `fsbench fio` without group_reporting reports each as a job of its own, as fio (one jobs[] entry and one text block per clone, each with its thread's own figures)" },
    FioOption { name: "size",
        kind: Kind::Size, aliases: &[], meaning: "file size and bytes moved per thread; left out (no filesize either), as fio 3.33: the size of the file the job names (a path, as it is when the job file is read, or as an earlier job of the file lays it out: that job's offset + size) less offset, rounded down to the block; refused with fio's reason where fio refuses (no such file or an empty one: \"you need to specify size=\"; offset past the end; less than a block left)" },
    FioOption { name: "filesize",
        kind: Kind::Size, aliases: &[], meaning: "file size (size then only sets the bytes moved); with nrfiles > 1 on a data job, each file's size, and the job moves size, at most nrfiles × filesize (that sum without size), as fio's setup_files; with fio's file-operation engines, the size of each file filestat and filedelete write in setup, and it must equal bs (one fake I/O per file, as fio's examples)" },
    FioOption { name: "io_size",
        kind: Kind::Size, aliases: &["io_limit"], meaning: "bytes moved per thread" },
    FioOption { name: "nrfiles",
        kind: Kind::Count, aliases: &["nr_files"], meaning: "a data job's files of each thread (each numjobs clone its own N): the workload's file.per_thread, each file size/nrfiles bytes (or filesize), laid out as one file is, opened at the timed phase's start (each open timed) and closed at its end, each with its own sequential position and random map (each block of each file once per pass), each I/O going to the file file_service_type picks; fsbench names them as fio does (filename_format, by default jobname.jobnum.filenum), in its work directory. Refused with filename, offset, offset_increment, fill_device, percentage_random, random_distribution, unlink_each_loop, verify, ioengine=mmap, registerfiles, in a group of jobs (without stonewall), or with openfiles below nrfiles. With fio's file-operation engines (filecreate, filestat, filedelete, dircreate, dirstat, dirdelete): the files (or directories) of each thread, in a directory of the test, named by fsbench (f0, f1, ... where fio names them jobname.jobnum.filenum)" },
    FioOption {
        name: "filename",
        kind: Kind::Text,
        aliases: &[],
        meaning: "a plain name: the numjobs threads share one file that fsbench makes in its work directory (laid out once), each thread covering the whole file from its start as fio's (file.whole); a file of that name already in the directory is left as it is, and `fsbench fio` says so (fio would run on it as it finds it: to do that, name it by its path); a plain name several jobs name is one file for all of them, as fio's (file.run_file): the first job's test starts each repetition without it, later jobs (after a stonewall) find it as the earlier ones left it (laid out only if absent or shorter, a write job overwrites it, a read job reads what earlier jobs wrote), and it is removed with the work directory at the end of the run (or after a job with unlink=1); fsbench's repetitions: each repetition of a later test sees the file as the earlier tests' last repetition left it (a write test's second repetition overwrites its first's data); a path (absolute, or relative to `directory`): that regular file, as fio uses it (created if absent, laid out before a read job only if absent or shorter, written into by a write job, kept unless unlink=1, opened with O_NOFOLLOW, shared by every job naming it); a symlink, FIFO, directory, socket or device is refused",
    },
    FioOption {
        name: "filename_format",
        kind: Kind::Text,
        aliases: &[],
        meaning: "the names of a data job's own files (without filename), as fio 3.33's make_filename makes them: $jobname the section's name, $jobnum the thread's number (the numjobs clone's, from 0), $filenum the file's among the thread's nrfiles (from 0), each matched in any case; another $ word stays as written (noted); default $jobname.$jobnum.$filenum, so every data job's files have fio's names (the workload's file.name_format). The files are fsbench's own, in its work directory (the run directory: --dir, --fs or directory=), laid out and removed with the test as its other files. Beside filename, fio ignores the format, and so does fsbench (noted). A format without $jobnum and numjobs > 1: fio 3.33 gives the clones after the first no file (their names are the first's) and they do no I/O; fsbench runs the job as one thread (filename-format-clones). Jobs whose names come out the same use the same file, as fio's: a job of one file (one thread, nrfiles=1) whose name another job has too (by its format or a plain filename) runs as a plain filename of that name, one file for all of them (file.run_file, named run.NAME in the work directory: a read job after a write job with filename_format=data.$filenum reads what it wrote; jobs run at the same time as plain filename: filename-reuse); a job of several files one of which is another job's is refused (fsbench shares one file between jobs, not a set). Refused, with the line: an empty format (fio refuses it), $clientuid (fio's client/server address), a `/` (fio makes directories), braces, a job name holding one of fio's $ words, with fio's file-operation engines (fsbench names their files: fileops-names), and on a job run beside its group's first job (fsbench names such a job's files t<test>.role-<name>.<thread>.dat, with or without the default format)",
    },
    FioOption { name: "unlink",
        kind: Kind::Flag, aliases: &[], meaning: "1: remove a file named by a path after the job (0, the default, keeps it); fsbench removes its own files either way" },
    FioOption { name: "unlink_each_loop",
        kind: Kind::Flag, aliases: &[], meaning: "1 with loops > 1 on a job that only writes: before each loop after the first the job's file is closed, unlinked and opened again with O_CREAT (empty, not laid out), as fio 3.33 (the phase's unlink_each_pass; outside every op's latency); the last loop's file is left (removed with fsbench's work directory). Refused with a job that reads (fio 3.33 fails it: ENOENT at its second loop), a filename path, threads sharing a filename, and ioengines other than psync/sync/pvsync and libaio; no effect with loops=1 or time_based, as in fio" },
    FioOption { name: "fallocate",
        kind: Kind::Text, aliases: &[], meaning: "how a write-only job's file is laid out before the job, untimed (the workload's file.preallocate), as fio's: native (the default) and posix: fallocate(fd, 0, 0, size), the blocks reserved as unwritten extents and the file at its size; keep: FALLOC_FL_KEEP_SIZE; truncate: ftruncate to the size, no blocks; none (0): the job's first write creates the file. Only when the file is absent or shorter than the job; a filesystem without fallocate leaves the file as it is (fio's native mode too; glibc's posix_fallocate would write a byte in every block instead, said in a note). A job that reads gets a file written out (prefilled), as fio writes one; a fill_device job's file starts empty, as fio's. A job of the same group reading a file a write job laid out to its size (native, posix, truncate) reads it as it is, unwritten blocks as zeros without a device read, as fio's; after keep or none it writes it out first, as fio's lay-out of a short file does; no effect with fio's file-operation engines (filestat's and filedelete's files are written in an untimed setup, as fio writes them)" },
    FioOption { name: "create_serialize",
        kind: Kind::Flag, aliases: &[], meaning: "1 (default): fsbench lays out a job's files one after another before the test, as fio; 0: fio's clones lay out their own files when they start, at the same time (a difference when a reading job has several files: numjobs > 1 without filename), and a later job without size takes the size a fill_device job left on its plain filename, which fsbench takes when the job starts (file.take_size; one thread from the start of the file); with one file, the same file either way" },
    FioOption { name: "fill_device",
        kind: Kind::Flag, aliases: &["fill_fs"], meaning: "1 with rw=write: the job writes sequentially from the start of its file until the filesystem is full; ENOSPC (or EDQUOT) ends it without an error and the bytes written are the job's (the workload's amount = { fill = 1 }) when the job gives no size; with size fio writes that size, and so does fsbench (fill-capped: at ENOSPC first fio ends without an error, fsbench refuses a run whose files do not fit before any I/O); without size, only on a testbed fsbench made (--fs, compare, or --directory/--dir on the mount point of a testbed kept by `fsbench testbed up`, checked against its state record: the mount point's st_dev and its loop device over the record's image): on any other directory the run is refused before any I/O (translation accepts it with a note); refused with another rw, a skip, a filename path, one shared file for numjobs > 1, runtime, time_based, ramp_time, io_size, number_ios, loops, or verify with do_verify=1; a later job without size on the filled file takes the size the fill left when it starts with create_serialize=0, as fio (file.take_size), and is refused with the default create_serialize=1, as fio refuses it" },
    FioOption { name: "directory",
        kind: Kind::Text, aliases: &[], meaning: "the run directory when neither --dir nor --fs is given" },
    FioOption { name: "direct",
        kind: Kind::Flag, aliases: &[], meaning: "O_DIRECT, with any block size fio takes (512-byte and 1 KiB ops too): before any I/O the sizes and offsets are checked against the job's file's direct-I/O alignment (statx STATX_DIOALIGN, else the device's logical block size, else 4096; 512 on ext4 and xfs on most devices, 4096 on btrfs), and a job the file cannot do is refused naming that alignment, where fio fails at its first I/O (EINVAL); sizes that are not multiples of 512 are noted when translated" },
    FioOption { name: "buffered",
        kind: Kind::Flag, aliases: &[], meaning: "the inverse of direct: buffered=0 is direct=1 (both given: the later line counts, as in fio)" },
    FioOption { name: "sync",
        kind: Kind::Text, aliases: &[], meaning: "0/none, 1/sync (O_SYNC), dsync (O_DSYNC)" },
    FioOption { name: "fsync",
        kind: Kind::Count, aliases: &[], meaning: "fsync every N writes, before the next write as fio (none after the job's last write: 64 writes with fsync=8 make 7 fsyncs, as fio 3.33 under strace; sync.before_next)" },
    FioOption { name: "fdatasync",
        kind: Kind::Count, aliases: &[], meaning: "fdatasync every N writes, before the next write as fsync=N" },
    FioOption { name: "end_fsync",
        kind: Kind::Flag, aliases: &[], meaning: "fsync after the last write, timed" },
    FioOption { name: "fsync_on_close",
        kind: Kind::Flag, aliases: &[], meaning: "fsync before close, timed (same as end_fsync here)" },
    FioOption { name: "iodepth",
        kind: Kind::Count, aliases: &[], meaning: "queue depth (above 1 needs ioengine=io_uring or libaio)" },
    FioOption {
        name: "iodepth_batch",
        kind: Kind::Count,
        aliases: &["iodepth_batch_submit"],
        meaning: "io_uring: submit once this many requests are queued; libaio: only fio's default 1 (each request submitted as it is queued), other values refused",
    },
    FioOption {
        name: "iodepth_batch_complete",
        kind: Kind::Count,
        aliases: &["iodepth_batch_complete_min"],
        meaning: "io_uring: wait for at least this many completions per reap; libaio: only fio's default 1, other values refused",
    },
    FioOption {
        name: "userspace_reap",
        kind: Kind::Flag,
        aliases: &[],
        meaning: "libaio: no effect, as in fio when it waits for at least one completion (fio reads the ring in user space only with iodepth_batch_complete_min=0, which is refused); with another ioengine refused",
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
        meaning: "psync, sync and pvsync run as psync; io_uring; libaio: fsbench's libaio engine at the job's iodepth, buffered or direct (Linux native AIO by the same system calls as fio's: one io_submit per request as it is queued, one io_getevents per completion; on a buffered file the kernel does the I/O inside io_submit, in fio too); with io_uring and libaio `fsbench fio` reports fio's three latencies apart, with fio's meaning: slat_ns from an op's start to the return of the call that submitted it (io_submit, io_uring_enter), clat_ns from there to its completion, lat_ns the two (io_uring at iodepth 1 without iodepth_batch submits in the io_uring_enter that waits for the request, so its submission is not timed apart: slat_ns N 0, clat_ns = lat_ns, as a synchronous engine's); mmap; fio's file operations as a fileset test of nrfiles files per thread, each once per pass, the call fio times timed alone and reported in fio's direction (read for a job that reads, the default rw=read, else write; total_ios = files, io_bytes = files × bs, clat_ns the call): filecreate (open O_CREAT|O_RDWR 0600 of each file, then close, untimed: op opencreate; needs create_on_open=1 and, with nrfiles > 1, openfiles=1), filestat (stat, lstat or statx per stat_type of files written in untimed setup), filedelete (unlink of files written in setup), dircreate (mkdir: op mkdirslot), dirstat (stat of directories made in setup), dirdelete (rmdir of directories made in setup: op rmdirslot); filesize must equal bs (one fake I/O per file); disable_lat, disable_clat and gtod_reduce are refused with them (fio then records nothing of the call); the jobs of one group (no stonewall) run as one test of all their threads and must be the same operation on the same files; dircreate, dirstat and dirdelete are fio 3.37's (fio 3.33 has the three file engines)",
    },
    FioOption { name: "runtime",
        kind: Kind::Time, aliases: &["timeout"], meaning: "seconds, with time_based; without it a time cap on the size (amount.seconds beside amount.bytes: whichever comes first, as fio)" },
    FioOption { name: "loops",
        kind: Kind::Count, aliases: &[], meaning: "the job's bytes (io_size, else size) this many times, a buffered file's pages dropped at each pass (invalidate); no effect with time_based, as in fio. With rw=rw (sequential reads and writes) fio 3.33 ends a loop when an op is drawn for a direction that has reached the file's end and starts both directions over; fsbench starts each direction over on its own when it reaches the end (the same bytes and op counts, checked beside fio; the lagging direction's offsets and the moments of the page drops differ)" },
    FioOption { name: "number_ios",
        kind: Kind::Count, aliases: &[], meaning: "a cap of this many ops per thread and loop (amount.ops: number_ios times loops, when it comes before the size, as fio 3.33's exceeds_number_ios); needs one block size; no effect with time_based (noted), as in fio 3.33, whose job loop runs until the runtime" },
    FioOption { name: "time_based",
        kind: Kind::Flag, aliases: &[], meaning: "run for runtime seconds" },
    FioOption { name: "ramp_time",
        kind: Kind::Time, aliases: &[], meaning: "an untimed phase of this many seconds first" },
    FioOption { name: "steadystate",
        kind: Kind::Text, aliases: &["ss"], meaning: "fio 3.33's criterion, with steadystate_duration (without it no effect, as in fio): `iops:N%`/`bw:N%` (the largest distance of a 1 s sample from the window's mean below N% of the mean), `iops_slope:N%`/`bw_slope:N%` (the least-squares slope of the samples, per second, below N% of the mean in size); default iops_slope:0.01%; the timed phase's ss, judged on the job's threads together (the sum, as fio's group with group_reporting), and the job ends when it holds; `fsbench fio` reports fio's `steadystate` object and text line. Refused: a limit without % (fio's absolute limit), iops criteria with several op sizes, numjobs > 1 without group_reporting, a job sharing its run group, ramp_time, number_ios, a job that is not time_based" },
    FioOption { name: "steadystate_duration",
        kind: Kind::Time, aliases: &["ss_dur"], meaning: "the steady-state window, whole seconds as fio (a fraction dropped), at least 2; 0 (fio's default) turns steady state off; with steadystate_ramp_time at most runtime (else fio never attains and fsbench refuses)" },
    FioOption { name: "steadystate_ramp_time",
        kind: Kind::Time, aliases: &["ss_ramp"], meaning: "whole seconds of samples skipped before the window (the phase's ss_ramp; fio begins collecting one second after it)" },
    FioOption { name: "norandommap",
        kind: Kind::Flag, aliases: &[], meaning: "offsets drawn with replacement (random_map = false); without it each block once per pass (random_map = true, in fsbench's own order)" },
    FioOption { name: "random_generator",
        kind: Kind::Text, aliases: &[], meaning: "tausworthe, tausworthe64: offsets as norandommap says; lfsr: each block once per pass even with norandommap (fsbench's own order, not fio's LFSR sequence)" },
    FioOption { name: "random_distribution",
        kind: Kind::Text, aliases: &[], meaning: "random, zipf:θ[:center], pareto:h[:center], normal:dev[:center], zoned:A/S:..., zoned_abs:A/SIZE:... (the test's random_distribution): fio's law, drawn with replacement (no random map, as fio); zipf, pareto and normal spread hot blocks by a hash, so the hit count per block is fio's and which blocks are hot is fsbench's own; one bs; fio 3.33 refuses gauss, zoned_abs=, a set per direction and sequence, and so does fsbench; no effect on sequential jobs" },
    FioOption { name: "percentage_random",
        kind: Kind::Text, aliases: &[], meaning: "`R[,W[,T]]`, 0 to 100 (default 100; one value for every direction): a random job's share of random I/Os per direction, as fio 3.33: each I/O draws once and is random (random map, random_distribution as usual) with that probability, else it starts where the thread's previous I/O of its direction ended (fio's last_pos; a random offset at the end of the file, the file's start in a time-based job) and takes nothing from the random map (the phase's random_percent); T is checked, fsbench does no trims; no effect on a sequential job, as in fio" },
    FioOption { name: "randrepeat",
        kind: Kind::Flag, aliases: &[], meaning: "1: the same offsets each run (fsbench's fixed --seed)" },
    FioOption { name: "create_on_open",
        kind: Kind::Flag, aliases: &[], meaning: "1 with a job that only writes: the file is not laid out (no fallocate, no truncate, whatever fallocate says), as fio's; its writes create and fill it (file.preallocate none). fsbench opens the file just before the timed phase, fio at the job's first I/O (one open inside its run time). Refused with a job that reads (fio 3.33 fails it: the file is empty). filecreate and dircreate need create_on_open=1, so that the creates are the job's timed I/O (fio's examples)" },
    FioOption { name: "pre_read",
        kind: Kind::Flag, aliases: &[], meaning: "1: the job's file is read into the page cache before its I/O, untimed, and invalidate is off (no drop at the start or at a time-based job's passes), as fio's; fsbench's `cached` precondition does the read and then checks that at least 95% of the file is resident (by mincore) and refuses the figure if not, which fio does not check. Refused with direct=1 (fio 3.33 fails such a job: exit 1)" },
    FioOption { name: "randseed",
        kind: Kind::Count, aliases: &[], meaning: "the job's seed (the test's `seed`, instead of the run's --seed): its random offsets, sizes and Poisson arrivals are drawn from it, so the same randseed repeats the same operations and another gives another draw, as fio's documentation says and fio 3.35 and later do (fio 3.33 uses randseed only with randrepeat=0: checked under strace, randseed=1, 2 and 12345 read the same offsets; fio's commit 95282650 fixed it); the sequences are fsbench's generators', not fio's. A job run at the same time as its group's first job takes the group's seed (randseed-group)" },
    FioOption { name: "rw_sequencer",
        kind: Kind::Text, aliases: &[], meaning: "identical: a random job's `:N` I/Os at one offset (a random op, then N-1 at its offset); sequential (fio's default): no effect without `:N` or on a sequential job, and refused with a random `:N` (fio goes on sequentially from each random offset; fsbench cannot)" },
    FioOption { name: "offset",
        kind: Kind::Text, aliases: &["fileoffset"], meaning: "a size: the job's I/O region is [offset, offset + size) of its file (file.offset; sequential and random ops alike, the file laid out to the region's end); a percentage is refused" },
    FioOption { name: "offset_increment",
        kind: Kind::Size, aliases: &[], meaning: "thread k of numjobs works on [offset + k * offset_increment, + size) (file.offset_increment), of one shared file (filename) or of its own" },
    FioOption { name: "offset_align",
        kind: Kind::Size, aliases: &[], meaning: "read; no effect, as in fio, since only a percentage offset is aligned (and fsbench refuses those)" },
    FioOption { name: "mem_align",
        kind: Kind::Size, aliases: &["iomem_align"], meaning: "0 (fio's default) or a multiple of 4096: no effect, fsbench's buffers are always page-aligned, as fio's are with direct=1 or with this option at a multiple of the page; other values refused. With 0 on a buffered job fio's buffers sit where malloc puts them, 16 bytes past a page boundary (fio --debug=mem), and on this machine the kernel's copy into such a buffer took about twice as long: fio-seq-RW.fio ran 1.2-1.35x faster in fsbench, and as fast in fio with mem_align=4096. Give mem_align=4096 to compare buffered jobs like for like" },
    FioOption { name: "thread",
        kind: Kind::Flag, aliases: &[], meaning: "fsbench always uses threads" },
    FioOption { name: "stat_type",
        kind: Kind::Text, aliases: &[], meaning: "filestat and dirstat: stat (default; fstatat), lstat (fstatat AT_SYMLINK_NOFOLLOW) or statx (STATX_ALL), as fio's; refused with another engine" },
    FioOption { name: "threads",
        kind: Kind::Count, aliases: &[], meaning: "checked, no effect, as in fio 3.33: there it is the tiobench profile's thread count, which does nothing without profile=tiobench (the jobs still run as processes, not threads; `thread` makes them threads), and fsbench runs threads either way (noted)" },
    FioOption { name: "rate",
        kind: Kind::Sizes, aliases: &[], meaning: "fixed rate in bytes per second of each thread, open loop (the phase's `rate`, with `latency_from = \"issue\"`: each op's latency counts from when it is issued, after its wait for the rate, as fio's); every thread (each numjobs clone) issues its first op at the start, as fio's; the job's direction's value; on a mixed job (randrw, rw) R,W limits reads and writes each on its own schedule as fio (`rate_read`/`rate_write`; one value both, a missing one not limited: rate=,W limits only the writes; refused with reads and writes of different sizes)" },
    FioOption { name: "rate_iops",
        kind: Kind::Sizes, aliases: &[], meaning: "fixed rate in ops per second of each thread, as rate (the phase's `rate_iops`); on a mixed job R,W in bytes as fio makes them (ops times bs: `rate_read`/`rate_write`; refused with several sizes)" },
    FioOption { name: "rate_min",
        kind: Kind::Sizes, aliases: &["ratemin"], meaning: "read, not enforced: fio ends a job whose bandwidth falls below it, fsbench runs the job to its end and reports the rate asked and achieved (noted)" },
    FioOption { name: "rate_iops_min",
        kind: Kind::Sizes, aliases: &[], meaning: "as rate_min, in ops per second" },
    FioOption { name: "rate_process",
        kind: Kind::Text, aliases: &[], meaning: "linear (fio's default): a fixed interval; poisson: the gaps between scheduled starts drawn from an exponential distribution with the rate's mean (the phase's `rate_process`; each thread its own seeded draw, so a run repeats); no effect without rate or rate_iops, as in fio" },
    FioOption { name: "io_submit_mode",
        kind: Kind::Text, aliases: &[], meaning: "inline (fio's default); offload: accepted, fsbench submits from the job's own thread (noted)" },
    FioOption { name: "dedupe_percentage",
        kind: Kind::Count, aliases: &[], meaning: "0-100, checked; above 0 accepted with fsbench's own data (noted)" },
    FioOption { name: "dedupe_mode",
        kind: Kind::Text, aliases: &[], meaning: "repeat or working_set, checked; fsbench writes its own data (see dedupe_percentage)" },
    FioOption { name: "dedupe_working_set_percentage",
        kind: Kind::Count, aliases: &[], meaning: "0-100, checked; fsbench writes its own data (see dedupe_percentage)" },
    FioOption { name: "dedupe_global",
        kind: Kind::Flag, aliases: &[], meaning: "read; fsbench writes its own data (see dedupe_percentage)" },
    FioOption { name: "buffer_compress_percentage",
        kind: Kind::Count, aliases: &[], meaning: "0-100, checked; above 0 accepted with fsbench's own incompressible data (noted): `--compress-percent N` zeroes that share of each 4 KiB block as fio does" },
    FioOption { name: "buffer_compress_chunk",
        kind: Kind::Size, aliases: &[], meaning: "checked; fsbench's compressible share is per 4 KiB block (`--compress-percent`)" },
    FioOption { name: "refill_buffers",
        kind: Kind::Flag, aliases: &[], meaning: "1: accepted with fsbench's own data (noted): fsbench does not refill per write" },
    FioOption { name: "scramble_buffers",
        kind: Kind::Flag, aliases: &[], meaning: "read: fsbench's consecutive writes carry different bytes anyway" },
    FioOption { name: "thinktime",
        kind: Kind::Text, aliases: &[], meaning: "a pause after every thinktime_blocks ops, outside their latency (the phase's `thinktime`); microseconds unless a unit is given, as fio" },
    FioOption { name: "thinktime_blocks",
        kind: Kind::Count, aliases: &[], meaning: "ops between think times (default 1)" },
    FioOption { name: "thinktime_spin",
        kind: Kind::Text, aliases: &[], meaning: "only 0: fsbench sleeps through the whole think time" },
    FioOption { name: "gtod_reduce",
        kind: Kind::Flag, aliases: &[], meaning: "reporting only: the I/O is the same; fsbench still times every op and reports the latencies fio would leave out (noted)" },
    FioOption { name: "disable_lat",
        kind: Kind::Flag, aliases: &[], meaning: "reporting only, as gtod_reduce" },
    FioOption { name: "disable_clat",
        kind: Kind::Flag, aliases: &[], meaning: "reporting only, as gtod_reduce" },
    FioOption { name: "disable_slat",
        kind: Kind::Flag, aliases: &[], meaning: "reporting only, as gtod_reduce" },
    FioOption { name: "clat_percentiles",
        kind: Kind::Flag, aliases: &[], meaning: "1 (default): `fsbench fio` reports completion-latency percentiles (JSON `clat_ns.percentile`, the text's `clat percentiles`); 0, or disable_clat=1: none, as fio's" },
    FioOption { name: "lat_percentiles",
        kind: Kind::Flag, aliases: &[], meaning: "1: `fsbench fio` reports total-latency percentiles too (JSON `lat_ns.percentile`, the text's `lat percentiles`), as fio's; fsbench's total latency is its completion latency (no submission step timed apart), so the values are the same; 0 (default), or disable_lat=1: none" },
    FioOption { name: "openfiles",
        kind: Kind::Count, aliases: &[], meaning: "how many of a job's files may be open at once: no effect with one file per job (nrfiles=1), as in fio; noted. A data job with nrfiles > 1: nrfiles or more (fio's default, every file open for the job), as fsbench opens them all for the phase; fewer is refused. filecreate with nrfiles > 1 needs openfiles=1 (each file closed after its create, as fsbench does); no effect with the other file-operation engines, which open nothing" },
    FioOption { name: "file_service_type",
        kind: Kind::Text, aliases: &[], meaning: "which of a job's files the next I/O goes to, as fio 3.33's get_next_file, for a data job with nrfiles > 1: roundrobin (default; the next file after each I/O, roundrobin:N after N), sequential (one file until it has had its size of I/O, then the next; fio ignores a :N), random (a file drawn uniformly per I/O, random:N per N); a file that has had its size of I/O in the pass (fio's done file) is passed over until every file has; fio opens each file at its first I/O (and with sequential closes each when it is done), fsbench opens every file at the phase's start and closes them at its end (the same reads and writes); zipf, pareto, normal and gauss are refused. No effect with one file per job (nrfiles=1), as in fio; checked and noted" },
    FioOption { name: "percentile_list",
        kind: Kind::Text, aliases: &[], meaning: "the percentiles `fsbench fio` reports (JSON `clat_ns.percentile` keys and the text's table), up to 20 in [0, 100] separated by `:`, sorted, as fio's; computed from the job's latency histogram. With numjobs > 1 it needs group_reporting (a clone reported on its own keeps fio's default list only)" },
    FioOption { name: "group_reporting",
        kind: Kind::Flag, aliases: &[], meaning: "`fsbench fio` reports each group as one job (its jobs and their numjobs clones merged, as fio's); without it, each job and each of its clones is a job of its own, as fio's" },
    FioOption {
        name: "fadvise_hint",
        kind: Kind::Flag,
        aliases: &[],
        meaning: "1 (default): after opening its file each thread advises `POSIX_FADV_RANDOM` (no readahead) for a random job, else `POSIX_FADV_SEQUENTIAL`, as fio (the phase's fadvise_hint); 0: no hint. fio's `sequential`/`random` values are refused",
    },
    FioOption {
        name: "invalidate",
        kind: Kind::Flag,
        aliases: &[],
        meaning: "1 (default): buffered reads start uncached (verified; a job after the first of its group drops its file's pages when it starts, after wait_for and startdelay, as fio does when it opens the file), and a time-based buffered job drops the file's pages at each pass (invalidate_each_pass); 0: any",
    },
    FioOption { name: "flow",
        kind: Kind::Count, aliases: &[], meaning: "0 (default): none; 1 to 1000: the job's weight in its flow (the phase's or role's `flow`): the threads of the jobs of one flow keep their op counts in the ratio of their weights, a thread ahead of its share waiting flow_sleep (or spinning, as fio's job loop does) before its next op, by fio's rule (shared atomic counters, checked at the op's pacing point; weights summed before the jobs start and taken out as each ends). Within one group: a flow across groups, or with wait_for, is refused (fio would hold jobs back for ones not running)" },
    FioOption { name: "flow_id",
        kind: Kind::Count, aliases: &[], meaning: "the flow a job's `flow` weight counts in (default 0); no effect without flow, as in fio" },
    FioOption { name: "flow_sleep",
        kind: Kind::Count, aliases: &[], meaning: "microseconds a thread ahead of its flow share waits (after its requests in flight complete) before it tries again; 0 (default): it keeps its CPU and tries again at once, as fio's job loop does (a busy wait, which takes CPU from the kernel's I/O work as fio's does); no effect without flow" },
    FioOption { name: "nice",
        kind: Kind::Text, aliases: &[], meaning: "-20 to 19: each thread of the job (each numjobs clone) calls `nice(N)` on itself once when it starts, before the job's clock, as fio's job process does (glibc's nice: getpriority, then setpriority(PRIO_PROCESS, 0, value + N), which Linux applies to the calling thread only; the phase's `nice`); a negative value without CAP_SYS_NICE fails the job before its first op" },
    FioOption { name: "prio",
        kind: Kind::Count, aliases: &[], meaning: "0 to 7: each thread sets its I/O priority level once when it starts, `ioprio_set(IOPRIO_WHO_PROCESS, 0, class << 13 | prio)` as fio (the calling thread's; the phase's `ioprio`), in prioclass's class, best effort without it as fio" },
    FioOption { name: "prioclass",
        kind: Kind::Count, aliases: &[], meaning: "1 realtime (needs CAP_SYS_ADMIN), 2 best effort, 3 idle (0: best effort, as fio): the class of prio's `ioprio_set` (level 0 without prio); the I/O scheduler decides what it does" },
    FioOption { name: "cpus_allowed",
        kind: Kind::Text, aliases: &[], meaning: "fio's CPU list (`0,2-3`): each thread of the job calls `sched_setaffinity(0, sizeof(cpu_set_t), set)` on itself once when it starts (the phase's `cpus`); a CPU this machine does not have is refused, as fio refuses it" },
    FioOption { name: "cpumask",
        kind: Kind::Text, aliases: &[], meaning: "a bit mask of CPUs 0 to 31 (decimal or 0x hex), as cpus_allowed (the later of the two counts, as in fio)" },
    FioOption { name: "cpus_allowed_policy",
        kind: Kind::Text, aliases: &[], meaning: "shared (default): every thread on the whole set; split: each thread on one CPU of the set in turn (the phase's `cpus_policy`), as fio's clones; fio deals them by thread number across the job file, fsbench from each job's first thread (noted where they differ); no effect without cpus_allowed or cpumask, as in fio" },
    FioOption { name: "stonewall",
        kind: Kind::Flag, aliases: &["wait_for_previous"], meaning: "start a new group: run after every job before it (jobs without it run at the same time as the ones before, in one test: the group's first job is the test's own threads, the others roles beside it, each with its own engine, depth, file, amount and figures)" },
    FioOption { name: "new_group",
        kind: Kind::Flag, aliases: &[], meaning: "a new reporting group (groupid) without waiting for the jobs before" },
    FioOption { name: "exitall",
        kind: Kind::Flag, aliases: &[], meaning: "as fio's, for every job of the file once any job sets it: when the first thread of a job ends (also when stopped), the jobs its exit_what names are stopped within a few ms (the test's or role's `exitall`; the phase's ended_by is `exitall`); each reports the work it did before" },
    FioOption { name: "exit_what",
        kind: Kind::Text, aliases: &[], meaning: "with exitall: group (default): the jobs of its groupid (new_group starts another); stonewall: every job of its run group (refused when a job of the group starts late: fio spares it); all: every job of its run group, and the later groups never run: `fsbench fio` lists their jobs with no I/O, as fio 3.33 does (fio's zero figures; `fsbench.ran` false with the reason), `run --fio`'s report leaves them out (noted); no effect without exitall, as in fio" },
    FioOption { name: "startdelay",
        kind: Kind::Time, aliases: &[], meaning: "seconds after its group starts before the job does (one value; a range is refused)" },
    FioOption { name: "wait_for",
        kind: Kind::Text, aliases: &[], meaning: "a job of an earlier group: met (that group has ended); a job of the same group: the job starts once that one is done (its role's `after`)" },
    FioOption { name: "verify",
        kind: Kind::Text, aliases: &[], meaning: "0/none: off; md5, crc64, crc32, crc32c, crc32c-intel, crc16, crc7, sha1, sha256, sha512, sha3-*, xxhash, meta, pattern: fsbench's own check (the test's `verify`): the job writes blocks fsbench can check (a read job's file is laid out so by fsbench), and after the job its file is read back and every 4 KiB block checked; a bad block fails the job (`error` in `fsbench fio`'s JSON) naming the file and offset; the algorithm and on-disk format are fsbench's (said so); null: no check, as fio" },
    FioOption { name: "do_verify",
        kind: Kind::Flag, aliases: &[], meaning: "0: the job is not checked (no read back); 1 (default): checked after the job" },
    FioOption { name: "verify_only",
        kind: Kind::Flag, aliases: &[], meaning: "1: the job reads its file (named by a path: written by an earlier job or run with verify) in its order, writes nothing, and checks it; refused on fsbench's own files (new for each test)" },
    FioOption { name: "verify_fatal",
        kind: Kind::Flag, aliases: &[], meaning: "no change: fsbench's check names the first bad block and counts the others; the job fails either way" },
    FioOption { name: "verify_backlog",
        kind: Kind::Count, aliases: &[], meaning: "read, checked after the job instead of every N blocks while writing (said so)" },
    FioOption { name: "verify_backlog_batch",
        kind: Kind::Count, aliases: &[], meaning: "read, no effect (as verify_backlog)" },
    FioOption { name: "verify_pattern",
        kind: Kind::Text, aliases: &[], meaning: "turns the check on (fio's verify=pattern when verify is not given); fsbench writes its own blocks, not the pattern (the check's content is fsbench's: see verify)" },
    FioOption { name: "verify_interval",
        kind: Kind::Size, aliases: &[], meaning: "read (a multiple of 512): fsbench checks 4 KiB blocks whatever the interval" },
    FioOption { name: "verify_offset",
        kind: Kind::Size, aliases: &[], meaning: "read: where fio puts its header; no change to fsbench's blocks" },
    FioOption { name: "verify_dump",
        kind: Kind::Flag, aliases: &[], meaning: "ignored: fsbench names the bad block in its error and dumps no files" },
    FioOption { name: "verify_async",
        kind: Kind::Count, aliases: &[], meaning: "ignored: fsbench checks after the job, in its own thread" },
    FioOption { name: "write_bw_log",
        kind: Kind::Text, aliases: &[], meaning: "`fsbench fio` writes fio 3.33's bandwidth log, PREFIX_bw.N.log (N the job's number, as fio; PREFIX_bw.log with per_job_logs=0; the option alone: the job's name as PREFIX, as fio) in the current directory. Without log_avg_msec (or 0), fio's per-I/O log: one line `time_ms, value, ddir, bs, prio` per read and write, in the order they completed: time_ms the op's completion in ms since the release of the timed phase's worker (fio's: since the job's start, which also takes in the file's open), the value its bytes × 1000000 over its completion latency in ns (fio's integer formula: 1000-byte units per second; the completion latency runs from the submission's return with io_uring and libaio, and is the op's whole time with a synchronous engine, as fio's clat), bs the bytes it moved, prio 1 for prioclass=1 (real time) else 0 (fio 3.33's column without log_prio), and its offset after bs with log_offset=1; empty with gtod_reduce, as fio's. The worker records each op into memory (in chunks of 65536 records, all allocated before the I/O for a job bound by its size, one at a time during a time_based one; no lock or formatting per op; nothing at all in a job without a per-I/O log) and the lines are written after the run; a job bound by its size (size/bs × loops) that could do more than 4194304 I/Os (16 GiB of 4 KiB ops, 160 MiB of records) is refused at the option's line; a time_based job that does more has its records stop there and `fsbench fio` writes no log for it and exits 1 after its report. With log_avg_msec: fio's averaged log, one line `time_ms, KiB/s, ddir, 0, 0` per window and direction with I/O, from the job's series at that interval (windows counted by fsbench's clock from the release of the timed phase's workers, fio's from the job's start; only windows that end before the phase does, as fio's; bs and priority 0, as fio 3.33's averaged lines, and an offset 0 between them with log_offset=1); a job that is not time_based keeps 200 windows at most (100 s at 500 ms): a longer one's series is widened and `fsbench fio` writes no log for it and exits 1 after its report; `run --fio` refuses both; both refused with numjobs > 1, ramp_time, or beside other jobs of its group" },
    FioOption { name: "write_iops_log",
        kind: Kind::Text, aliases: &[], meaning: "fio's IOPS log, PREFIX_iops.N.log, named, recorded and refused as write_bw_log: without log_avg_msec one line `time_ms, 1, ddir, bs, prio` per I/O (empty with gtod_reduce, as fio's); with log_avg_msec I/Os per second per window and direction" },
    FioOption { name: "write_lat_log",
        kind: Kind::Text, aliases: &[], meaning: "fio's latency logs, PREFIX_lat.N.log, PREFIX_slat.N.log and PREFIX_clat.N.log (each left out by its disable_lat, disable_slat, disable_clat, or by gtod_reduce, as fio), named, recorded and refused as write_bw_log. Without log_avg_msec, fio's per-I/O logs: one line `time_ms, ns, ddir, bs, prio` per read and write (offset after bs with log_offset=1): lat the op's latency from its start to its completion, clat its completion latency (see write_bw_log), both stamped at its completion; slat, with io_uring and libaio, its submission latency, stamped at the submission's return and in the order of the submissions, as fio logs it when it submits; with a synchronous engine the slat file is empty, as fio's. With log_avg_msec, fio's averaged latency logs: one line `time_ms, mean_ns, ddir, 0, 0` per window and direction with I/O: the window's mean latency in ns (the sum of its ops' latencies over their count, rounded half up, as fio's), every window with I/O including the last, partial one (stamped with the phase's end), as fio's. fsbench times each op once, from its start (its call; under a rate, when it is issued after its wait, as fio's) to its completion: fio's total latency (lat); with a synchronous engine (psync, sync, pvsync, mmap, null) the clat file carries the same time (fio's leaves out the op's preparation, under a microsecond) and the slat file is empty, as fio's (no submission step); with io_uring and libaio, whose submission fsbench times apart as fio does (see ioengine), the slat file has the window's mean submission latency and the clat file its mean completion latency from the submission's return, as fio's (fio's slat file may lack the last, partial window's line: it closes a window at its next submission); io_uring at iodepth 1 without iodepth_batch (submitted in the call that waits for it) and fio's null engine at an iodepth above 1 are refused unless disable_slat=1 and disable_clat=1 leave the lat file alone" },
    FioOption { name: "log_avg_msec",
        kind: Kind::Count, aliases: &[], meaning: "the window of write_bw_log, write_iops_log and write_lat_log in ms (at least 10; the run's series interval, so every job with an averaged log gives the same); 0 or not given: fio's per-I/O logs, a line per I/O (see write_bw_log); no effect without a log, as in fio" },
    FioOption { name: "bwavgtime",
        kind: Kind::Count, aliases: &[], meaning: "the window of the bandwidth samples behind `fsbench fio`'s bw_min, bw_max, bw_agg, bw_mean, bw_dev, bw_samples and its text's `bw (KiB/s):` line, in ms (fio's bw_avg_time; default 500, at least 10): the run's series interval, so every job gives the same, and equal to iopsavgtime; with a log, a multiple of log_avg_msec when given (its windows added up; at fio's default beside a log_avg_msec that does not divide 500, the samples are the log's windows, said so in the job's `fsbench.rate_samples`)" },
    FioOption { name: "iopsavgtime",
        kind: Kind::Count, aliases: &[], meaning: "the window of the IOPS samples (iops_min, iops_max, iops_mean, iops_stddev, iops_samples and the text's `iops:` line), as bwavgtime, which it must equal" },
    FioOption { name: "per_job_logs",
        kind: Kind::Flag, aliases: &[], meaning: "1 (default): the job's number in its log file names, as fio; 0: PREFIX_bw.log" },
    FioOption { name: "log_offset",
        kind: Kind::Flag, aliases: &[], meaning: "1: each line of write_bw_log, write_iops_log and write_lat_log has an offset column after the size, `time_ms, value, ddir, bs, offset, prio`, as fio 3.33's: a per-I/O line's op offset in its file (bytes), an averaged line's 0; 0 (default): no offset column" },
];

/// Where fsbench runs a job it accepts with a meaning that differs from fio's: one entry per
/// kind of difference, which the translation tags its note with (` [differs from fio: ID]`),
/// `--fio-strict` refuses, `fsbench fio` lists in a job's `differences`, and
/// `docs/reference/fio.md` lists.
#[derive(Debug, Clone, Copy)]
pub struct Difference {
    /// Short id, in the tag.
    pub id: &'static str,
    /// The fio options concerned.
    pub options: &'static [&'static str],
    /// What differs (one line, shown in docs).
    pub what: &'static str,
}

/// Every kind of difference (see [`Difference`]).
pub const DIFFERENCES: &[Difference] = &[
    Difference { id: "random-map", options: &["rw", "norandommap"], what: "fio touches each block once per pass (its random map) counting blocks of the smallest size; with reads and writes of different sizes or alignments, or several sizes (bssplit), fsbench draws random offsets with replacement, as fio's norandommap. fio's map also cuts an op short where the blocks after its offset were already touched, so with bssplit fio's mean op is smaller than the split's (fio's iometer example: 4.9 KiB per op with its map, 11.4 KiB with norandommap, fsbench 11.4 KiB, the split's mean): compare bandwidth over the same bytes, not IOPS" },
    Difference { id: "randrw-interleave", options: &["rwmixread", "rwmixwrite"], what: "with reads and writes of different sizes (bs=R,W), fio draws each op's direction at random and fsbench issues a fixed interleave of reads and writes (of one size, fsbench draws each direction too)" },
    Difference { id: "write-file-shorter", options: &["fallocate", "filename"], what: "a write job's file that exists but is shorter than the job (a file named by a path, or a plain filename an earlier job left shorter): fio removes it and lays out a new one; fsbench keeps the file's data and lays out the rest (fallocate keeps what is there)" },
    Difference { id: "fileops-names", options: &["nrfiles", "ioengine"], what: "fio's file-operation engines: fio names each file jobname.jobnum.filenum in `directory` and leaves behind what filecreate and dircreate made; fsbench names them f0, f1, ... in a directory of the test and removes them at the end. Untimed setup differs (filestat, filedelete: fsbench writes each file with open(O_CREAT|O_EXCL), write, close, fio with unlink, open(O_TRUNC), fallocate, ftruncate, write, close; dirstat, dirdelete: mode 0 instead of fio's 0700); the timed calls are fio's. fio's job time, and so its IOPS, also holds fio's own work between files, which grows with nrfiles (filecreate, one job: 47-52 µs per file at 1,000 files, 236-273 µs at 8,000, each create 16-26 µs of it), where fsbench's is the calls' (18 µs per create, about 51,000 creates/s at 4,000 files against fio's 8,300-14,200): compare the latencies (clat), not the IOPS" },
    Difference { id: "statx-realpath", options: &["stat_type"], what: "stat_type=statx: fio resolves the file's path with realpath(3) inside the timed part, then calls statx(-1, path, 0, STATX_ALL); fsbench calls statx alone on the absolute path (the same call, without realpath's cost)" },
    Difference { id: "sync-as-psync", options: &["ioengine"], what: "ioengine=sync (lseek + read/write) runs as psync (pread/pwrite): one system call per op instead of two" },
    Difference { id: "pvsync-as-psync", options: &["ioengine"], what: "ioengine=pvsync (preadv/pwritev of one buffer) runs as psync (pread/pwrite)" },
    Difference { id: "fsync-once", options: &["end_fsync", "fsync_on_close"], what: "end_fsync and fsync_on_close: fsbench issues one fsync per thread at the end" },
    Difference { id: "skew-placement", options: &["random_distribution"], what: "zipf, pareto and normal with a center: the law and the hit count per block are fio's, and zipf and pareto put the hottest block at the center, but the other hot blocks (and all of normal's) are placed by fsbench's own hash and offset, not fio's" },
    Difference { id: "unaligned-end", options: &["bs_unaligned", "bsrange"], what: "a sequential job with bs_unaligned and bsrange: at the end of the file fio draws again a size that would run past it, and ends the job when less than MIN is left, leaving those bytes (up to MIN - 1) unmoved; fsbench cuts the op that reaches the end short and moves the job's whole size (checked under strace, 64 MiB with bsrange=4k-16k: fio read 64 MiB less 3702 bytes in 5739 ops, fsbench all of it); every other op's size is drawn alike" },
    Difference { id: "random-share-loops", options: &["percentage_random", "loops"], what: "percentage_random below 100 with loops > 1: fio starts each loop's sequential I/Os at the file's start again (and its random map afresh); fsbench runs the loops as one amount of bytes, so a sequential I/O after the file's last block takes a random offset instead and the random map carries on (checked under strace with percentage_random=0, loops=3 on a 64 KiB file: fio reads blocks 0 to 15 three times, fsbench 0 to 15, then on from random blocks)" },
    Difference { id: "randrepeat", options: &["randrepeat"], what: "randrepeat=0: fsbench's offsets repeat from run to run unless --seed changes" },
    Difference { id: "ramp-restart", options: &["ramp_time"], what: "ramp_time: the timed phase starts again at the beginning of the file (fio carries on where the ramp stopped)" },
    Difference { id: "latency-reported", options: &["gtod_reduce", "disable_lat", "disable_clat", "disable_slat"], what: "fio leaves these latencies out of its report (and saves the clock reads); fsbench times every op anyway and reports them: the I/O is the same" },
    Difference { id: "rate-min", options: &["rate_min", "rate_iops_min"], what: "fio ends a job whose rate falls below its minimum (an error); fsbench runs the job to its end and reports the rate asked and achieved" },
    Difference { id: "submit-offload", options: &["io_submit_mode"], what: "fio submits from a separate thread on the rate's schedule whatever the completions do; fsbench submits from the job's own thread, which between scheduled starts waits for a completion, so with the queue full a submission can go out after its start (timed from when it goes out, as fio's own ops); at most iodepth ops are in flight in both" },
    Difference { id: "data-content", options: &["dedupe_percentage", "buffer_compress_percentage", "refill_buffers"], what: "fsbench writes its own data: random bytes from a pool of about 1 MiB per thread (consecutive blocks differ, the pool repeats), incompressible unless --compress-percent N; fio's dedupe and compression shares are not reproduced. The I/O is the same; only a filesystem or device that compresses or dedupes (btrfs with compress, zfs compression or dedup, VDO) stores and times it differently" },
    Difference { id: "verify-own-check", options: &["verify", "verify_pattern"], what: "the check is fsbench's own, not fio's algorithm: every 4 KiB block holds fsbench's header (file, offset, seed, CRC-32) and incompressible bytes, not fio's header or verify_pattern, so a file written by fsbench cannot be verified by fio and a file written by fio fails fsbench's check; the read back comes after the job and outside its figures (fio counts its verify reads as the job's reads)" },
    Difference { id: "verify-after", options: &["verify_backlog"], what: "fio checks every N written blocks while the job writes (its verify reads in the job's timing); fsbench checks the whole file once after the job, so the job's timing has no verify reads and a bad block is found at the end" },
    Difference { id: "fill-capped", options: &["fill_device", "size"], what: "fill_device with size: fio writes the size (its file not fallocated), and a filesystem that fills up first ends the job at ENOSPC without an error; fsbench writes the size as any write job, and refuses before any I/O a run whose files do not fit" },
    Difference { id: "layout-serial", options: &["create_serialize"], what: "create_serialize=0 with several files (numjobs > 1, each thread its own file, a job that reads): fio's clones lay out their files at the same time, so their extents may interleave on disk; fsbench lays them out one after another before the test (fio's default), untimed either way" },
    Difference { id: "exit-during-wait", options: &["exitall", "exit_what"], what: "a job that another job's end stops (exitall) while it waits for its rate's next op or its thinktime: fsbench stops it within a few ms; fio 3.33 notices at the end of its current sleep, which it sleeps in steps of 1 to 2 s (the whole wait when under 1 s is left), so fio's job runs on for up to 2 s and its runtime (its group's, with group_reporting) is longer and its IOPS lower (exitwhat.fio: fio's 300 B/s jobs ran 4.0 s after the job that stopped them ended at 2.0 s; fsbench's 2.0 s)" },
    Difference { id: "randseed-group", options: &["randseed"], what: "a job that runs at the same time as its group's first job (no stonewall) with another randseed: fsbench draws the whole group from the first job's seed, so that job's own randseed does not change its draw" },
    Difference { id: "cpus-split", options: &["cpus_allowed_policy"], what: "cpus_allowed_policy=split in a job after others: fio gives its clone the CPU of its thread number across the whole job file (the first clone takes the CPU after the previous job's last clone's), fsbench deals the job's CPUs from its own first thread, so a job's threads may sit on other CPUs of the set than fio's (each still on one CPU of it)" },
    Difference { id: "filename-format-clones", options: &["filename_format", "numjobs"], what: "numjobs clones whose file names do not depend on $jobnum: fio 3.33 gives the clones after the first no file (their names are the first's) and lists them with no I/O; fsbench runs the job as one thread, listed as one job" },
    Difference { id: "filename-reuse", options: &["filename"], what: "a job that runs at the same time as its group's first job (no stonewall) and names a plain `filename` other jobs name too gets a file of its own in fsbench's work directory, where fio's jobs share the one file (jobs run one after another share it as fio's, and a `filename` with a path is always shared)" },
];

/// The tag a note of the difference `id` ends with.
pub fn difference_tag(id: &str) -> String {
    debug_assert!(DIFFERENCES.iter().any(|d| d.id == id), "no difference `{id}` in the table");
    format!(" [differs from fio: {id}]")
}

/// The table's text of the difference `id`, with its tag.
pub fn difference(id: &str) -> String {
    let what = DIFFERENCES.iter().find(|d| d.id == id).map(|d| d.what).unwrap_or("");
    format!("{what}{}", difference_tag(id))
}

/// Whether a translation note is a difference from fio's meaning (not a remark such as
/// "no effect, as in fio").
pub fn is_difference(note: &str) -> bool {
    note.contains(" [differs from fio: ")
}

/// Why fsbench refuses a real fio option it does not take, by name (aliases included); an
/// option of fio 3.33 not listed here gets [`DEFAULT_WHY`]. The reasons are shown in errors
/// and in `docs/reference/fio.md`.
pub const REFUSED: &[(&str, &str)] = &[
    ("exitall_on_error", "a failed job fails its whole group (one test) in fsbench"),
    ("write_hist_log", "fsbench has no histogram log in fio's format"),
    ("log_prio", "fsbench writes fio 3.33's last column without log_prio (1 for a job of prioclass=1, real time, else 0), not the priority's value"),
    ("log_compression", "fsbench writes its logs as plain text"),
    ("disable_bw_measurement", "fsbench always measures bandwidth"),
    ("zonemode", "fsbench runs on files in a filesystem, not on zoned devices"),
    ("ioscheduler", "set the scheduler of a testbed with fsbench testbed (--scheduler)"),
    ("lockmem", "fsbench does not lock memory away"),
    ("mem", "fsbench allocates its own aligned buffers"),
    ("iomem", "fsbench allocates its own aligned buffers"),
    ("buffer_pattern", "fsbench fills its buffers with its own pattern"),
    ("zero_buffers", "fsbench fills its buffers with its own data"),
];

/// Why fsbench refuses a fio option that [`REFUSED`] does not list.
pub const DEFAULT_WHY: &str =
    "fsbench has no equivalent (see docs/reference/fio.md for what it takes)";

/// Why fsbench refuses the real fio option `name`.
pub fn why_refused(name: &str) -> &'static str {
    REFUSED.iter().find(|(n, _)| *n == name).map(|(_, w)| *w).unwrap_or(DEFAULT_WHY)
}

/// The error for an option fsbench's table does not have, at `file:line`: a real fio option
/// is named as one fsbench does not support, with why; any other name is a misspelling, with a
/// "did you mean" only when a name is close.
pub fn unsupported(key: &str, file: &str, line: usize) -> super::FioError {
    if super::fio_names::is_fio_option(key) {
        return super::FioError::NotSupported {
            file: file.into(),
            line,
            option: key.into(),
            why: why_refused(key).into(),
            tail: format!("; remove it or run the job with fio itself (supported: {})", names()),
        };
    }
    let hint = match closest(key) {
        Some(n) => format!(" (did you mean `{n}`?)"),
        None => closest_among(key, super::fio_names::FIO_OPTION_NAMES.iter().copied())
            .map(|n| {
                format!(
                    " (did you mean fio's `{n}`? fsbench does not support it: {})",
                    why_refused(n)
                )
            })
            .unwrap_or_default(),
    };
    super::FioError::Unsupported {
        file: file.into(),
        line,
        hint,
        option: key.into(),
        supported: names(),
    }
}

/// The generated part of `docs/reference/fio.md`: every fio 3.33 option with what fsbench
/// does with it, then every difference; a test checks the document has exactly this text.
pub fn reference_section() -> String {
    let mut o = String::from("<!-- generated from src/fio/options.rs and src/fio/fio_names.rs by options::reference_section; a test checks it -->\n\n### Every fio 3.33 option\n\n");
    for &n in super::fio_names::FIO_OPTION_NAMES {
        let line = match lookup(n) {
            Some(opt) if opt.name == n => format!("- `{n}`: supported: {}", opt.meaning),
            Some(opt) => format!("- `{n}`: supported, as `{}`", opt.name),
            None => format!("- `{n}`: refused: {}", why_refused(n)),
        };
        o.push_str(&line);
        o.push('\n');
    }
    o.push_str("\n### Where fsbench's meaning differs (noted; refused with --fio-strict)\n\n");
    for d in DIFFERENCES {
        o.push_str(&format!("- `{}` ({}): {}\n", d.id, d.options.join(", "), d.what));
    }
    o
}

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

/// The supported name or alias nearest to a misspelled `key`, when one is a close
/// misspelling (see [`closest_among`]).
pub fn closest(key: &str) -> Option<&'static str> {
    closest_among(
        key,
        OPTIONS.iter().flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied())),
    )
}

/// The name of `names` nearest to `key` when it is a close misspelling: at most 2 edits, and
/// at most one per 4 characters (so `zonesize` never suggests `size`).
pub fn closest_among(key: &str, names: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    let allowed = (key.chars().count() / 4).clamp(1, 2);
    names
        .map(|n| (strsim::levenshtein(key, n), n))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
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
        assert_eq!(closest("log_compression"), None);
        assert_eq!(closest("zonemode"), None);
        assert_eq!(closest("zonesize"), None, "a different real option is no misspelling");
        assert_eq!(closest("bs"), Some("bs"));
        assert_eq!(closest("xy"), None);
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
        assert!(lookup("exitall_on_error").is_none());
    }

    #[test]
    fn the_reference_lists_every_fio_option_and_difference_as_the_tables_say() {
        let doc = include_str!("../../docs/reference/fio.md");
        let start = "<!-- generated from src/fio/options.rs";
        let end = "<!-- end of generated part -->";
        let want = reference_section();
        let got =
            doc.find(start).and_then(|a| doc[a..].find(end).map(|b| &doc[a..a + b])).unwrap_or("");
        if got != want {
            let p = std::env::temp_dir().join("fsbench-fio-reference.md");
            let _ = std::fs::write(&p, &want);
            panic!("docs/reference/fio.md's generated part differs from the tables: the expected text is in {} (paste it before `{end}`)", p.display());
        }
        assert!(want.contains("- `zonemode`: refused: fsbench runs on files"));
        assert!(want.contains("- `iodepth`: supported: "));
        assert!(want.contains("- `random-map` (rw, norandommap): "));
    }

    #[test]
    fn real_fio_options_are_refused_with_why_and_misspellings_get_a_hint() {
        let e = unsupported("zonemode", "j.fio", 3).to_string();
        assert!(
            e.starts_with(
                "j.fio:3: fio option `zonemode` is not supported by fsbench: fsbench runs on files"
            ),
            "{e}"
        );
        assert!(!e.contains("did you mean"), "{e}");
        let e = unsupported("iodeph", "j.fio", 4).to_string();
        assert!(e.contains("(did you mean `iodepth`?)"), "{e}");
        let e = unsupported("zonemod", "j.fio", 4).to_string();
        assert!(e.contains("did you mean fio's `zonemode`? fsbench does not support it"), "{e}");
        let e = unsupported("frobnicate", "j.fio", 4).to_string();
        assert!(!e.contains("did you mean"), "{e}");
        for (n, _) in REFUSED {
            assert!(
                crate::fio::fio_names::is_fio_option(n),
                "REFUSED lists `{n}`, not a fio 3.33 option"
            );
            assert!(lookup(n).is_none(), "REFUSED lists `{n}`, which the table supports");
        }
        for o in OPTIONS {
            assert!(
                crate::fio::fio_names::is_fio_option(o.name),
                "`{}` is not a fio 3.33 option",
                o.name
            );
        }
    }
}
