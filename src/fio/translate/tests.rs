use super::*;
use crate::workload::spec::SuiteSpec;

fn env(name: &str) -> Option<String> {
    match name {
        "SIZE" => Some("64m".into()),
        "RUNTIME" => Some("30".into()),
        _ => None,
    }
}

fn tr(text: &str) -> Result<Translation, FioError> {
    translate(text, "t.fio", "t", &env)
}

fn err(text: &str) -> String {
    tr(text).unwrap_err().to_string()
}

/// A job file of one test: the test and the notes (also for the translator's submodules' tests).
pub(super) fn one(text: &str) -> (TestSpec, Vec<String>) {
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.spec.tests.len(), 1);
    (t.spec.tests[0].clone(), t.notes)
}

/// Whether the test's notes say fsbench differs from fio on `option`, as the difference `id`.
fn is_diff(t: &TestSpec, option: &str, id: &str) -> bool {
    t.notes.iter().any(|n| n.contains(option) && n.contains(&format!("[differs from fio: {id}]")))
}

fn op(t: &TestSpec, phase: usize, i: usize) -> &OpSpec {
    &t.phases[phase].pattern[i]
}

fn fixed(o: &OpSpec) -> u64 {
    match o.size {
        Some(SizeDistSpec::Fixed(b)) => b.0,
        ref other => panic!("not fixed: {other:?}"),
    }
}

fn bytes(a: &AmountSpec) -> u64 {
    match a.bytes {
        Some(SizeExpr::Bytes(b)) => b,
        ref other => panic!("not bytes: {other:?}"),
    }
}

#[test]
fn sizes_follow_fio() {
    assert_eq!(parse_size("4096").unwrap(), 4096);
    assert_eq!(parse_size("4k").unwrap(), 4096);
    assert_eq!(parse_size("4K").unwrap(), 4096);
    assert_eq!(parse_size("1kb").unwrap(), 1024);
    assert_eq!(parse_size("1KB").unwrap(), 1024);
    assert_eq!(parse_size("1Ki").unwrap(), 1024);
    // fio 3.33 with its default kb_base=1024: bs=1KiB moves 1000 bytes (measured).
    assert_eq!(parse_size("1KiB").unwrap(), 1000);
    assert_eq!(parse_size("64m").unwrap(), 64 << 20);
    assert_eq!(parse_size("2g").unwrap(), 2 << 30);
    assert_eq!(parse_size("1t").unwrap(), 1 << 40);
    assert!(parse_size("10%").unwrap_err().to_string().contains("percentages"));
    assert!(parse_size("abc").is_err());
    assert_eq!(parse_time("30").unwrap(), 30.0);
    assert_eq!(parse_time("2m").unwrap(), 120.0);
    assert_eq!(parse_time("500ms").unwrap(), 0.5);
    assert_eq!(parse_time("1h").unwrap(), 3600.0);
    assert!(parse_time("3 fortnights").is_err());
}

#[test]
fn a_random_read_job() {
    let (t, notes) = one("[global]\nbs=4k\nsize=${SIZE}\n[rr]\nrw=randread\nnumjobs=2\nnorandommap\nrandrepeat=1\nthread\ngroup_reporting\nioengine=psync\niodepth=1\nverify=0\noffset=0\nnrfiles=1\n");
    assert_eq!(t.id, "rr");
    assert_eq!(t.threads, 2);
    let f = t.file.as_ref().unwrap();
    assert_eq!(f.size, SizeExpr::Bytes(64 << 20));
    assert!(!f.shared, "numjobs without filename: one file per thread, as fio's clones");
    assert!(f.prefill);
    assert_eq!(t.phases.len(), 1);
    let p = &t.phases[0];
    assert!(p.timed);
    assert_eq!(p.cache, CacheReq::Uncached, "invalidate=1 is fio's default");
    assert_eq!(bytes(&p.amount), 64 << 20);
    let o = op(&t, 0, 0);
    assert_eq!(o.op.as_deref(), Some("read"));
    assert_eq!(o.offset.as_deref(), Some("random"));
    assert_eq!(fixed(o), 4096);
    assert_eq!(o.align.map(|b| b.0), Some(4096), "blockalign defaults to bs");
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn sequential_write_with_syncs_and_flags() {
    let (t, notes) = one("[w]\nreadwrite=write\nblocksize=128k\nsize=16m\nio_size=8m\nfsync=4\nend_fsync=1\ndirect=1\nsync=dsync\nfilename=data.bin\n");
    let f = t.file.as_ref().unwrap();
    assert!(f.shared && !f.prefill);
    let p = &t.phases[0];
    assert_eq!(t.direct, Some(true));
    assert_eq!(p.open, vec!["dsync", "create"]);
    assert_eq!(p.sync.every_ops, Some(4));
    assert_eq!(p.sync.call, None);
    assert_eq!(p.sync.at_end.as_deref(), Some("fsync"));
    assert_eq!(p.cache, CacheReq::Any);
    assert_eq!(bytes(&p.amount), 8 << 20);
    let o = op(&t, 0, 0);
    assert_eq!(
        (o.op.as_deref(), o.offset.as_deref(), fixed(o)),
        (Some("write"), Some("sequential"), 128 << 10)
    );
    assert_eq!(o.align, None);
    // Laid out as fio's (fallocate), so no note says the file starts empty.
    assert_eq!(t.file.as_ref().and_then(|f| f.preallocate.as_deref()), Some("fallocate"));
    assert!(!notes.iter().any(|n| n.contains("write-file-")), "{notes:?}");

    let (t, _) = one("[w]\nrw=write\nsize=1m\nfdatasync=8\nfsync_on_close=1\nsync=1\n");
    let p = &t.phases[0];
    assert_eq!(p.sync.every_ops, Some(8));
    assert_eq!(p.sync.call.as_deref(), Some("fdatasync"));
    assert_eq!(p.sync.at_end.as_deref(), Some("fsync"));
    assert!(p.open.contains(&"sync".to_string()));
}

#[test]
fn time_based_ramp_and_filesize() {
    let (t, notes) = one("[r]\nrw=read\nbs=64k\nfilesize=32m\nsize=1g\ntime_based\nruntime=${RUNTIME}\nramp_time=2s\ninvalidate=0\n");
    assert_eq!(t.file.as_ref().unwrap().size, SizeExpr::Bytes(32 << 20));
    assert_eq!(t.phases.len(), 2);
    let (ramp, main) = (&t.phases[0], &t.phases[1]);
    assert!(!ramp.timed && main.timed);
    assert_eq!(ramp.amount.seconds, Some(2.0));
    assert_eq!(main.amount.seconds, Some(30.0));
    assert_eq!(main.cache, CacheReq::Any);
    assert!(notes.iter().any(|n| n.contains("ramp_time")), "{notes:?}");
}

#[test]
fn randrw_mix_and_split_block_sizes() {
    let (t, notes) = one("[m]\nrw=randrw\nrwmixread=70\nbs=4k,16k\nblockalign=8k\nsize=8m\n");
    let (r, w) = (op(&t, 0, 0), op(&t, 0, 1));
    assert_eq!((r.op.as_deref(), r.repeat, fixed(r)), (Some("read"), Some(7), 4096));
    assert_eq!((w.op.as_deref(), w.repeat, fixed(w)), (Some("write"), Some(3), 16384));
    assert_eq!(r.align.map(|b| b.0), Some(8192));
    assert_eq!(w.align.map(|b| b.0), Some(8192), "one blockalign value applies to both directions");
    assert!(notes.iter().any(|n| n.contains("7 read(s) then 3 write(s)")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("norandommap")), "{notes:?}");
    let (t, _) = one("[m]\nrw=randrw\nrwmixwrite=100\nsize=8m\n");
    assert_eq!(t.phases[0].pattern.len(), 1);
    assert_eq!(op(&t, 0, 0).op.as_deref(), Some("write"));
    let (t, _) = one("[m]\nrw=randread\nbsrange=8k-8k\nsize=8m\n");
    assert_eq!(fixed(op(&t, 0, 0)), 8192);
    let (t, _) = one("[m]\nrw=randread\nbssplit=16k/100\nsize=8m\n");
    assert_eq!(fixed(op(&t, 0, 0)), 16384);
}

#[test]
fn engines_map_and_say_so() {
    let (t, notes) = one("[a]\nioengine=io_uring\niodepth=32\nsize=1m\n");
    assert_eq!((t.engine.as_deref(), t.iodepth), (Some("io_uring"), Some(32)));
    assert!(notes.is_empty(), "{notes:?}");
    let (t, _) = one("[a]\nioengine=io_uring\niodepth=32\niodepth_batch_submit=8\niodepth_batch_complete=4\nsqthread_poll=1\nhipri\ndirect=1\nsize=1m\n");
    assert_eq!((int(&t, "iodepth_batch"), int(&t, "iodepth_batch_complete")), (Some(8), Some(4)));
    assert_eq!((flag(&t, "sqpoll"), flag(&t, "iopoll")), (Some(true), Some(true)));
    // libaio is fsbench's libaio engine at the job's depth, direct or buffered, with no note:
    // the same system calls as fio's engine.
    let (t, notes) = one("[a]\nioengine=libaio\niodepth=8\ndirect=1\nsize=1m\n");
    assert_eq!((t.engine.as_deref(), t.iodepth, t.direct), (Some("libaio"), Some(8), Some(true)));
    assert!(notes.is_empty(), "{notes:?}");
    let (t, notes) = one("[a]\nioengine=libaio\niodepth=16\nsize=1m\n");
    assert_eq!((t.engine.as_deref(), t.iodepth, t.direct), (Some("libaio"), Some(16), None));
    assert!(notes.is_empty(), "{notes:?}");
    assert!(t.engine_keys.iter().next().is_none(), "no io_uring keys: {:?}", t.engine_keys);
    let e = err("[a]\nioengine=libaio\niodepth=x\nsize=1m\n");
    assert!(e.starts_with("t.fio:3: `iodepth`"), "{e}");
    let (t, _) = one("[a]\nsize=1m\n");
    assert_eq!((t.engine.as_deref(), t.iodepth, t.direct), (None, None, None));
    let (t, _) = one("[a]\nioengine=mmap\nsize=1m\n");
    assert_eq!(t.engine.as_deref(), Some("mmap"));
    let (_, notes) = one("[a]\nioengine=sync\nsize=1m\n");
    assert!(notes.iter().any(|n| n.contains("runs as psync")), "{notes:?}");
    let (_, notes) = one("[a]\nioengine=pvsync\nsize=1m\n");
    assert!(notes.iter().any(|n| n.contains("pvsync")), "{notes:?}");
}

#[test]
fn stonewalled_jobs_become_tests_in_order() {
    let t = tr("[global]\nsize=1m\nstonewall\n[a]\nrw=write\n[b]\nrw=read\n[a]\nrw=randread\n")
        .unwrap();
    let ids: Vec<&str> = t.spec.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "a-2"]);
    let t = tr("[a]\nsize=1m\ndirectory=/tmp/x\n[b]\nstonewall\nsize=1m\n").unwrap();
    assert_eq!(t.directory.as_deref(), Some("/tmp/x"));
    // The translation loads through the workload language.
    let text = t.to_toml();
    let spec: SuiteSpec = crate::workload::spec::parse(&text, "x").unwrap();
    assert_eq!(spec.tests.len(), 2);
}

#[test]
fn unsupported_options_name_file_line_and_option() {
    let e = err("[global]\nsize=1m\n\n[job]\nrw=read\nexitall_on_error\n");
    assert!(e.starts_with("t.fio:6: fio option `exitall_on_error` is not supported"), "{e}");
    assert!(e.contains("supported: name,"), "{e}");
    let e = err("[job]\nsize=1m\nlog_prio=1\n");
    assert!(e.starts_with("t.fio:3:") && e.contains("`log_prio`"), "{e}");
}

#[test]
fn combinations_fsbench_cannot_express_are_refused() {
    let cases: &[(&str, &str, &str)] = &[
        ("[a]\nsize=1m\n[b]\nsize=1m\nwait_for=zz\n", "t.fio:5: `wait_for`", "no job before [b]"),
        (
            "[a]\nsize=1m\n[b]\nsize=1m\nfilename=/tmp/x.dat\n",
            "t.fio:5: `filename`",
            "files of its own",
        ),
        ("[a]\nsize=1m\nramp_time=1\n[b]\nsize=1m\n", "t.fio:3: `ramp_time`", "without a ramp"),
        (
            "[a]\nsize=1m\n[b]\nsize=1m\nioengine=io_uring\nfixedbufs=1\n",
            "t.fio:6: `fixedbufs`",
            "fsbench's defaults",
        ),
        ("[a]\nsize=1m\nbssplit=4k/50:64k/60\n", "t.fio:3: `bssplit`", "at most 100"),
        ("[a]\nsize=1m\nbssplit=4k/0\n", "t.fio:3: `bssplit`", "above 0%"),
        ("[a]\nsize=1m\nbsrange=4k-128k\n", "t.fio:3: `bsrange`", "at most 16 multiples"),
        ("[a]\nsize=1m\nbsrange=16k-4k\n", "t.fio:3: `bsrange`", "MIN at most MAX"),
        ("[a]\nsize=1m\nbs=4k\nbsrange=4k-4k\n", "t.fio:4: `bsrange`", "one of bs"),
        ("[a]\nsize=1m\nrw=rw\nbs=4k,8k\n", "t.fio:4: `bs`", "one size"),
        ("[a]\nsize=1m\nrw=randread:8\n", "t.fio:3: `rw`", "rw_sequencer=identical"),
        ("[a]\nsize=1m\nrw=randrw:8\nrw_sequencer=identical\n", "t.fio:3: `rw`", "randread:8"),
        ("[a]\nsize=1m\nrw=rw:8k\n", "t.fio:3: `rw`", "without `:N`"),
        (
            "[a]\nsize=1m\nrw=read:8k\nrw_sequencer=identical\n",
            "t.fio:4: `rw_sequencer`",
            "skips after each",
        ),
        ("[a]\nsize=1m\nrw=read:8x\n", "t.fio:3: `rw`", "`read:8x`"),
        ("[a]\nsize=1m\nrw=read:4k\nbssplit=4k/50:8k/50\n", "t.fio:3: `rw`", "one size"),
        ("[a]\nsize=1m\nrw=trim\n", "t.fio:3: `rw`", "not supported"),
        ("[a]\nsize=1m\nloops=0\n", "t.fio:3: `loops`", "at least once"),
        (
            "[a]\nsize=1m\nbs=4k,8k\nrw=randrw\nrate=1m\n",
            "t.fio:5: `rate`",
            "cannot pace each direction",
        ),
        ("[a]\nsize=1m\nrate_iops=5\nrate_process=bursty\n", "t.fio:4: `rate_process`", "poisson"),
        ("[a]\nsize=1m\nthinktime=5\nthinktime_spin=2\n", "t.fio:4: `thinktime_spin`", "sleeps"),
        ("[a]\nsize=1m\nrate=1m\nrate_iops=5\n", "`rate_iops`", "one of rate"),
        ("[a]\nsize=1m\nrw=randrw\nbs=4k,8k\nnumber_ios=9\n", "t.fio:5: `number_ios`", "one size"),
        ("[a]\nsize=1m\ntime_based\n", "t.fio:3: `time_based`", "runtime"),
        ("[a]\nsize=1m\nmem_align=512\n", "t.fio:3: `mem_align`", "multiple of 4096"),
        ("[a]\nsize=1m\niomem_align=100\n", "t.fio:3: `mem_align`", "page-aligned"),
        ("[a]\nsize=1m\niodepth=16\n", "t.fio:3: `iodepth`", "io_uring"),
        ("[a]\nsize=1m\nnrfiles=4\nopenfiles=2\n", "t.fio:4: `openfiles`", "openfiles=4"),
        ("[a]\nsize=1m\noffset=10%\n", "t.fio:3: `offset`", "percentage"),
        ("[a]\nsize=1m\n[b]\nsize=1m\noffset=4k\n", "t.fio:5: `offset`", "start of their files"),
        ("[a]\nsize=1m\nfilename=/dev/sda\n", "t.fio:3: `filename`", "block devices it made"),
        ("[a]\nsize=1m\nverify=1\n", "t.fio:3: `verify`", "not one of fio's values"),
        ("[a]\nsize=1m\nfsync=1\nfdatasync=1\n", "t.fio:4: `fdatasync`", "one of"),
        ("[a]\nsize=1m\nrw=randrw\nrwmixread=60\nrwmixwrite=30\n", "`rwmixwrite`", "add up to 100"),
        ("[a]\nsize=1m\nioengine=windowsaio\n", "t.fio:3: `ioengine`", "not supported"),
        ("[a]\nsize=1m\nsync=async\n", "t.fio:3: `sync`", "dsync"),
        ("[a]\nsize=1m\ndirect=maybe\n", "t.fio:3: `direct`", "not 0 or 1"),
        ("[a]\nsize=10%\n", "t.fio:2: `size`", "percentages"),
        ("[a]\nrw=read\n", "t.fio:1: `[a]`", "no size"),
        ("[a]\nsize=1m\nnumjobs=0\n", "t.fio:3: `numjobs`", "1 to 1024"),
        (
            "[a]\nsize=1m\ndirectory=/x\n[b]\nstonewall\nsize=1m\ndirectory=/y\n",
            "t.fio:7: `directory`",
            "one directory",
        ),
        ("[global]\nsize=1m\n", "t.fio:1:", "no job"),
    ];
    for (text, at, says) in cases {
        let e = err(text);
        assert!(e.contains(at) && e.contains(says), "for {text:?}: {e}");
    }
}

#[test]
fn notes_for_options_without_effect() {
    let (_, notes) =
        one("[a]\nsize=1m\nrw=read\nrwmixread=30\nfsync=2\nrandrepeat=0\nblockalign=8k\n");
    for want in ["rwmixread", "fsync/fdatasync=N", "randrepeat=0", "blockalign"] {
        assert!(notes.iter().any(|n| n.contains(want)), "{want}: {notes:?}");
    }
}

/// Every option of the table (and every alias) is read: each has a job here that uses it, which
/// translates, and a check of what it became. An option added to the table without a line here
/// fails the test.
#[test]
fn every_supported_option_and_alias_is_read() {
    type Check = fn(&TestSpec, &[String], &Translation) -> bool;
    let cases: &[(&str, &str, Check)] = &[
        ("name", "name=nice\n", |t, _, _| t.name == "nice"),
        ("description", "description=words\n", |t, _, _| t.description == "words"),
        ("rw", "rw=randwrite\n", |t, _, _| op(t, 0, 0).op.as_deref() == Some("write")),
        ("readwrite", "readwrite=randread\n", |t, _, _| {
            op(t, 0, 0).offset.as_deref() == Some("random")
        }),
        ("rwmixread", "rw=randrw\nrwmixread=75\n", |t, _, _| {
            op(t, 0, 0).write_percent == Some(25) && t.phases[0].pattern.len() == 1
        }),
        ("rwmixwrite", "rw=randrw\nrwmixwrite=75\n", |t, _, _| {
            op(t, 0, 0).write_percent == Some(75)
        }),
        ("bs", "bs=8k\n", |t, _, _| fixed(op(t, 0, 0)) == 8192),
        ("blocksize", "blocksize=16k\n", |t, _, _| fixed(op(t, 0, 0)) == 16384),
        ("bsrange", "bsrange=2k-2k\n", |t, _, _| fixed(op(t, 0, 0)) == 2048),
        ("blocksize_range", "blocksize_range=2k-2k\n", |t, _, _| fixed(op(t, 0, 0)) == 2048),
        ("bssplit", "bssplit=32k/100\n", |t, _, _| fixed(op(t, 0, 0)) == 32768),
        ("blockalign", "rw=randread\nblockalign=512\n", |t, _, _| {
            op(t, 0, 0).align.map(|b| b.0) == Some(512)
        }),
        ("ba", "rw=randread\nba=1k\n", |t, _, _| op(t, 0, 0).align.map(|b| b.0) == Some(1024)),
        ("numjobs", "numjobs=3\n", |t, _, _| t.threads == 3),
        ("size", "", |t, _, _| t.file.as_ref().map(|f| f.size) == Some(SizeExpr::Bytes(1 << 20))),
        ("filesize", "filesize=2m\n", |t, _, _| {
            t.file.as_ref().map(|f| f.size) == Some(SizeExpr::Bytes(2 << 20))
        }),
        ("io_size", "io_size=256k\n", |t, _, _| bytes(&t.phases[0].amount) == 256 << 10),
        ("io_limit", "io_limit=128k\n", |t, _, _| bytes(&t.phases[0].amount) == 128 << 10),
        ("nrfiles", "nrfiles=1\n", |t, _, _| t.file.is_some()),
        ("nr_files", "nr_files=1\n", |t, _, _| t.file.is_some()),
        ("filename", "filename=data\n", |t, _, _| t.file.as_ref().is_some_and(|f| f.shared)),
        ("filename_format", "filename_format=d.$jobnum.$filenum\n", |t, _, _| {
            t.file.as_ref().and_then(|f| f.name_format.as_deref()) == Some("d.{thread}.{file}")
        }),
        ("unlink", "filename=/tmp/fsbench-unit-unlink.dat\nunlink=1\n", |t, _, _| {
            t.file.as_ref().is_some_and(|f| {
                f.path.as_deref() == Some("/tmp/fsbench-unit-unlink.dat") && f.unlink == Some(true)
            })
        }),
        ("buffered", "buffered=0\n", |t, _, _| t.direct == Some(true)),
        ("create_serialize", "create_serialize=1\n", |t, _, _| t.notes.is_empty()),
        ("fill_device", "rw=write\nfill_device=1\n", |t, _, _| {
            t.phases[0].amount.fill.is_none() && is_diff(t, "fill_device with size", "fill-capped")
        }),
        // The cases' size=1m caps it: fio writes the size (fill-capped).
        ("fill_fs", "rw=write\nfill_fs=1\n", |t, _, _| {
            t.phases[0].amount.fill.is_none() && is_diff(t, "fill_device with size", "fill-capped")
        }),
        ("directory", "directory=/srv/x\n", |_, _, tr| tr.directory.as_deref() == Some("/srv/x")),
        ("direct", "direct=1\n", |t, _, _| t.direct == Some(true)),
        ("sync", "rw=write\nsync=dsync\n", |t, _, _| t.phases[0].open.contains(&"dsync".into())),
        ("fsync", "rw=write\nfsync=4\n", |t, _, _| t.phases[0].sync.every_ops == Some(4)),
        ("fdatasync", "rw=write\nfdatasync=2\n", |t, _, _| {
            t.phases[0].sync.call.as_deref() == Some("fdatasync")
        }),
        ("end_fsync", "rw=write\nend_fsync=1\n", |t, _, _| {
            t.phases[0].sync.at_end.as_deref() == Some("fsync")
        }),
        ("fsync_on_close", "rw=write\nfsync_on_close=1\n", |t, _, _| {
            t.phases[0].sync.at_end.as_deref() == Some("fsync")
        }),
        ("iodepth", "ioengine=io_uring\niodepth=8\n", |t, _, _| t.iodepth == Some(8)),
        ("iodepth_batch", "ioengine=io_uring\niodepth=8\niodepth_batch=4\n", |t, _, _| {
            int(t, "iodepth_batch") == Some(4)
        }),
        (
            "iodepth_batch_submit",
            "ioengine=io_uring\niodepth=8\niodepth_batch_submit=2\n",
            |t, _, _| int(t, "iodepth_batch") == Some(2),
        ),
        (
            "iodepth_batch_complete",
            "ioengine=io_uring\niodepth=8\niodepth_batch_complete=3\n",
            |t, _, _| int(t, "iodepth_batch_complete") == Some(3),
        ),
        (
            "iodepth_batch_complete_min",
            "ioengine=io_uring\niodepth=8\niodepth_batch_complete_min=5\n",
            |t, _, _| int(t, "iodepth_batch_complete") == Some(5),
        ),
        ("userspace_reap", "ioengine=libaio\niodepth=4\nuserspace_reap\n", |t, n, _| {
            t.engine.as_deref() == Some("libaio") && t.iodepth == Some(4) && n.is_empty()
        }),
        ("sqthread_poll", "ioengine=io_uring\nsqthread_poll=1\n", |t, _, _| {
            flag(t, "sqpoll") == Some(true) && flag(t, "registerfiles") == Some(true)
        }),
        ("hipri", "ioengine=io_uring\ndirect=1\nhipri\n", |t, _, _| {
            flag(t, "iopoll") == Some(true)
        }),
        ("fixedbufs", "ioengine=io_uring\nfixedbufs=1\n", |t, _, _| {
            flag(t, "fixedbufs") == Some(true)
        }),
        ("registerfiles", "ioengine=io_uring\nregisterfiles=1\n", |t, _, _| {
            flag(t, "registerfiles") == Some(true)
        }),
        ("ioengine", "ioengine=io_uring\n", |t, _, _| {
            // fio's default: the file is not registered.
            t.engine.as_deref() == Some("io_uring") && flag(t, "registerfiles") == Some(false)
        }),
        ("runtime", "time_based\nruntime=2s\n", |t, _, _| t.phases[0].amount.seconds == Some(2.0)),
        ("timeout", "time_based\ntimeout=500ms\n", |t, _, _| {
            t.phases[0].amount.seconds == Some(0.5)
        }),
        ("time_based", "time_based=1\nruntime=1m\n", |t, _, _| {
            t.phases[0].amount.seconds == Some(60.0)
        }),
        ("ramp_time", "ramp_time=1\n", |t, _, _| t.phases.len() == 2 && !t.phases[0].timed),
        (
            "steadystate",
            "time_based\nruntime=10\nsteadystate=bw:5%\nss_dur=4\nss_ramp=1\n",
            |t, _, _| t.phases.last().and_then(|p| p.ss.as_deref()) == Some("bw:5%"),
        ),
        (
            "ss",
            "time_based\nruntime=10\nss=bw:5%\nsteadystate_duration=4\nss_ramp=1\n",
            |t, _, _| t.phases.last().and_then(|p| p.ss.as_deref()) == Some("bw:5%"),
        ),
        (
            "steadystate_duration",
            "time_based\nruntime=10\nss=bw:5%\nsteadystate_duration=4\n",
            |t, _, _| t.phases.last().and_then(|p| p.ss_dur) == Some(4.0),
        ),
        ("ss_dur", "time_based\nruntime=10\nss=bw:5%\nss_dur=4\n", |t, _, _| {
            t.phases.last().and_then(|p| p.ss_dur) == Some(4.0)
        }),
        (
            "steadystate_ramp_time",
            "time_based\nruntime=10\nss=bw:5%\nss_dur=4\nsteadystate_ramp_time=2\n",
            |t, _, _| t.phases.last().and_then(|p| p.ss_ramp) == Some(2.0),
        ),
        ("ss_ramp", "time_based\nruntime=10\nss=bw:5%\nss_dur=4\nss_ramp=2\n", |t, _, _| {
            t.phases.last().and_then(|p| p.ss_ramp) == Some(2.0)
        }),
        ("norandommap", "rw=randread\nnorandommap\n", |t, n, _| {
            t.random_map.is_none() && !n.iter().any(|n| n.contains("random map"))
        }),
        ("random_generator", "rw=randread\nnorandommap\nrandom_generator=lfsr\n", |t, n, _| {
            t.random_map == Some(true) && n.iter().any(|n| n.contains("lfsr"))
        }),
        ("random_distribution", "rw=randread\nrandom_distribution=zipf:1.2\n", |t, _, _| {
            t.random_distribution.as_deref() == Some("zipf:1.2") && t.random_map.is_none()
        }),
        ("bs_unaligned", "bsrange=4k-8k\nbs_unaligned\n", |t, _, _| {
            matches!(op(t, 0, 0).size, Some(SizeDistSpec::UnalignedRange { .. }))
        }),
        ("blocksize_unaligned", "bsrange=4k-8k\nblocksize_unaligned=1\n", |t, _, _| {
            matches!(op(t, 0, 0).size, Some(SizeDistSpec::UnalignedRange { .. }))
        }),
        ("unlink_each_loop", "rw=write\nloops=2\nunlink_each_loop=1\n", |t, _, _| {
            t.phases[0].unlink_each_pass
        }),
        ("percentage_random", "rw=randread\npercentage_random=30\n", |t, _, _| {
            t.phases[0].random_percent == Some(crate::workload::spec::RandomPercent::Both(30))
        }),
        ("randrepeat", "randrepeat=0\n", |_, n, _| n.iter().any(|n| n.contains("randrepeat=0"))),
        ("randseed", "rw=randread\nrandseed=5\n", |t, _, _| t.seed == Some(5)),
        ("openfiles", "openfiles=4\n", |_, n, _| {
            n.iter().any(|n| n.contains("openfiles=4: no effect"))
        }),
        ("file_service_type", "file_service_type=random:4\n", |_, n, _| {
            n.iter().any(|n| n.contains("file_service_type=random:4: no effect"))
        }),
        ("percentile_list", "percentile_list=99:50\n", |_, _, tr| {
            tr.jobs[0].percentile_list == Some(vec![50.0, 99.0])
        }),
        ("rw_sequencer", "rw=randread:4\nrw_sequencer=identical\n", |t, _, _| {
            op(t, 0, 1).offset.as_deref() == Some("last") && op(t, 0, 1).repeat == Some(3)
        }),
        ("offset", "offset=0\n", |t, _, _| t.file.as_ref().is_some_and(|f| f.offset.is_none())),
        ("fileoffset", "fileoffset=8k\n", |t, _, _| {
            t.file.as_ref().is_some_and(|f| f.offset.map(|b| b.0) == Some(8192))
        }),
        ("offset_increment", "numjobs=2\noffset_increment=1m\n", |t, _, _| {
            t.file.as_ref().is_some_and(|f| f.offset_increment.map(|b| b.0) == Some(1 << 20))
        }),
        ("offset_align", "offset_align=4k\n", |t, _, _| t.file.is_some()),
        ("thread", "thread\n", |t, _, _| t.threads == 1),
        ("mem_align", "mem_align=4096\n", |t, _, _| t.threads == 1),
        ("iomem_align", "iomem_align=8k\n", |t, _, _| t.threads == 1),
        ("flow", "flow=3\n", |t, _, _| t.phases[0].flow == Some(3)),
        ("flow_id", "flow=1\nflow_id=7\n", |t, _, _| t.phases[0].flow_id == Some(7)),
        ("flow_sleep", "flow=1\nflow_sleep=250\n", |t, _, _| t.phases[0].flow_sleep == Some(250)),
        ("threads", "threads=4\n", |t, n, _| {
            t.threads == 1 && n.iter().any(|n| n.contains("threads=4: no effect"))
        }),
        ("group_reporting", "group_reporting\n", |t, _, _| t.threads == 1),
        ("invalidate", "invalidate=0\n", |t, _, _| t.phases[0].cache == CacheReq::Any),
        ("create_on_open", "rw=write\ncreate_on_open=1\n", |t, _, _| {
            t.file.as_ref().is_some_and(|f| f.preallocate.is_none() && !f.prefill)
        }),
        ("pre_read", "rw=read\npre_read=1\n", |t, _, _| {
            t.phases[0].cache == CacheReq::Cached && !t.phases[0].invalidate_each_pass
        }),
        ("fadvise_hint", "fadvise_hint=0\n", |t, _, _| !t.phases[0].fadvise_hint),
        ("stonewall", "stonewall\n", |t, _, _| t.file.is_some()),
        ("nice", "nice=5\n", |t, _, _| t.phases[0].nice == Some(5)),
        ("prio", "prio=3\n", |t, _, _| t.phases[0].ioprio.as_deref() == Some("be:3")),
        ("prioclass", "prioclass=3\n", |t, _, _| t.phases[0].ioprio.as_deref() == Some("idle:0")),
        ("cpus_allowed", "cpus_allowed=0\n", |t, _, _| t.phases[0].cpus.as_deref() == Some("0")),
        ("cpumask", "cpumask=0x1\n", |t, _, _| t.phases[0].cpus.as_deref() == Some("0")),
        ("cpus_allowed_policy", "cpus_allowed=0\ncpus_allowed_policy=split\n", |t, _, _| {
            t.phases[0].cpus_policy.as_deref() == Some("split")
        }),
        ("exitall", "exitall\n", |t, _, _| {
            t.exitall.as_ref().is_some_and(|e| e.stops == "group" && e.group == Some(0))
        }),
        ("exit_what", "exitall\nexit_what=stonewall\n", |t, _, _| {
            t.exitall.as_ref().is_some_and(|e| e.stops == "test")
        }),
        ("rate_min", "rate=2m\nrate_min=1m\n", |t, _, _| is_diff(t, "rate_min=1m", "rate-min")),
        ("ratemin", "rate=2m\nratemin=1m\n", |t, _, _| is_diff(t, "rate_min=1m", "rate-min")),
        ("rate_iops_min", "rate_iops=9\nrate_iops_min=5\n", |t, _, _| {
            is_diff(t, "rate_iops_min=5", "rate-min")
        }),
        // A paced op's latency from when it is issued, after its wait, as fio's.
        ("rate", "rate=1m\n", |t, _, _| {
            let p = &t.phases[0];
            p.rate == Some(SizeExpr::Bytes(1 << 20)) && p.latency_from.as_deref() == Some("issue")
        }),
        ("rate_iops", "rate_iops=,500\nrw=write\n", |t, _, _| {
            let p = &t.phases[0];
            p.rate_iops == Some(500.0) && p.latency_from.as_deref() == Some("issue")
        }),
        ("rate_process", "rate_iops=100\nrate_process=linear\n", |t, _, _| {
            t.phases[0].rate_iops == Some(100.0)
        }),
        ("io_submit_mode", "rate_iops=100\nio_submit_mode=offload\n", |t, n, _| {
            t.phases[0].rate_iops == Some(100.0) && n.iter().any(|n| n.contains("submit-offload"))
        }),
        ("dedupe_percentage", "rw=write\ndedupe_percentage=30\n", |_, n, _| {
            n.iter().any(|n| n.contains("dedupe_percentage=30") && n.contains("data-content"))
        }),
        ("dedupe_mode", "dedupe_mode=repeat\n", |t, _, _| t.file.is_some()),
        ("dedupe_working_set_percentage", "dedupe_working_set_percentage=20\n", |t, _, _| {
            t.file.is_some()
        }),
        ("dedupe_global", "dedupe_global=1\n", |t, _, _| t.file.is_some()),
        ("buffer_compress_percentage", "rw=write\nbuffer_compress_percentage=40\n", |_, n, _| {
            n.iter().any(|n| n.contains("buffer_compress_percentage=40"))
        }),
        ("buffer_compress_chunk", "buffer_compress_chunk=512\n", |t, _, _| t.file.is_some()),
        ("refill_buffers", "rw=write\nrefill_buffers\n", |_, n, _| {
            n.iter().any(|n| n.contains("refill_buffers=1"))
        }),
        ("scramble_buffers", "scramble_buffers=0\n", |_, n, _| n.is_empty()),
        ("thinktime", "thinktime=250\n", |t, _, _| {
            t.phases[0].thinktime == Some(crate::workload::load::DurationText::Micros(250))
        }),
        ("thinktime_blocks", "thinktime=2ms\nthinktime_blocks=8\n", |t, _, _| {
            t.phases[0].thinktime == Some(crate::workload::load::DurationText::Micros(2000))
                && t.phases[0].thinktime_blocks == Some(8)
        }),
        ("thinktime_spin", "thinktime=100\nthinktime_spin=0\n", |t, _, _| {
            t.phases[0].thinktime.is_some()
        }),
        ("gtod_reduce", "gtod_reduce=1\n", |t, _, _| is_diff(t, "gtod_reduce", "latency-reported")),
        ("disable_lat", "disable_lat=1\n", |t, _, _| is_diff(t, "disable_lat", "latency-reported")),
        ("disable_clat", "disable_clat\n", |t, _, _| {
            is_diff(t, "disable_clat", "latency-reported")
        }),
        ("disable_slat", "disable_slat=1\n", |t, _, _| {
            is_diff(t, "disable_slat", "latency-reported")
        }),
        ("clat_percentiles", "clat_percentiles=1\n", |t, _, _| t.notes.is_empty()),
        ("lat_percentiles", "lat_percentiles=0\n", |t, _, _| t.notes.is_empty()),
        ("loops", "loops=3\n", |t, _, _| bytes(&t.phases[0].amount) == 3 << 20),
        ("number_ios", "number_ios=5\n", |t, _, _| t.phases[0].amount.ops == Some(5)),
        ("new_group", "[b]\nsize=1m\nnew_group\n", |t, _, tr| {
            t.roles.len() == 1 && tr.jobs.iter().map(|j| j.group).collect::<Vec<_>>() == [0, 1]
        }),
        ("startdelay", "[b]\nsize=1m\nstartdelay=2\n", |t, _, _| t.roles[0].delay == Some(2.0)),
        ("wait_for", "[b]\nstonewall\nsize=1m\nwait_for=job\n", |_, _, tr| {
            tr.spec.tests.len() == 2 && tr.jobs[1].group == 1
        }),
        ("wait_for_previous", "wait_for_previous\n", |t, _, _| t.file.is_some()),
        ("verify", "verify=0\n", |t, _, _| t.file.is_some() && t.verify.is_none()),
        ("do_verify", "rw=write\nverify=md5\ndo_verify=0\n", |t, _, _| t.verify.is_none()),
        ("verify_only", "verify=md5\nverify_only=0\n", |t, _, _| t.verify == Some(true)),
        ("verify_fatal", "verify=sha1\nverify_fatal=1\n", |t, _, _| t.verify == Some(true)),
        ("verify_backlog", "rw=write\nverify=crc32c\nverify_backlog=8\n", |t, _, _| {
            is_diff(t, "verify_backlog", "verify-after")
        }),
        ("verify_backlog_batch", "verify=md5\nverify_backlog_batch=4\n", |t, _, _| {
            t.verify == Some(true)
        }),
        ("verify_pattern", "verify_pattern=0xaa555aa5\n", |t, _, _| {
            t.verify == Some(true) && is_diff(t, "verify=pattern", "verify-own-check")
        }),
        ("verify_interval", "verify=meta\nverify_interval=512\n", |t, _, _| t.verify == Some(true)),
        ("verify_offset", "verify=md5\nverify_interval=4k\nverify_offset=8\n", |t, _, _| {
            t.verify == Some(true)
        }),
        ("verify_dump", "verify=md5\nverify_dump=1\n", |t, _, _| t.verify == Some(true)),
        ("verify_async", "verify=md5\nverify_async=4\n", |t, _, _| t.verify == Some(true)),
        ("write_bw_log", "write_bw_log=p\nlog_avg_msec=100\n", |_, _, tr| {
            tr.logs[0].files == [(LogKind::Bw, "p_bw.1.log".to_string())]
        }),
        ("write_iops_log", "write_iops_log=p\nlog_avg_msec=100\n", |_, _, tr| {
            tr.logs[0].files == [(LogKind::Iops, "p_iops.1.log".to_string())]
        }),
        ("write_lat_log", "write_lat_log=p\nlog_avg_msec=100\ndisable_slat=1\n", |_, _, tr| {
            tr.logs[0].files
                == [(LogKind::Lat, "p_lat.1.log".into()), (LogKind::Clat, "p_clat.1.log".into())]
        }),
        ("log_avg_msec", "write_iops_log=p\nlog_avg_msec=250\n", |_, _, tr| {
            tr.logs[0].avg_msec == Some(250)
        }),
        ("log_offset", "write_iops_log=p\nlog_offset=1\n", |_, _, tr| {
            tr.logs[0].offset && tr.logs[0].avg_msec.is_none()
        }),
        ("bwavgtime", "bwavgtime=250\n", |_, _, tr| tr.sample_window_ms == 250),
        ("iopsavgtime", "iopsavgtime=1000\n", |_, _, tr| tr.sample_window_ms == 1000),
        ("per_job_logs", "write_iops_log=p\nlog_avg_msec=100\nper_job_logs=0\n", |_, _, tr| {
            tr.logs[0].files == [(LogKind::Iops, "p_iops.log".to_string())]
        }),
        ("fallocate", "rw=write\nfallocate=keep\n", |t, _, _| {
            t.file.as_ref().and_then(|f| f.preallocate.as_deref()) == Some("keep-size")
        }),
        (
            "stat_type",
            "ioengine=filestat\nfilesize=4k\nnrfiles=256\nstat_type=lstat\n",
            |t, _, _| t.phases.last().and_then(|p| p.pattern[0].op.as_deref()) == Some("lstat"),
        ),
    ];
    for (name, lines, check) in cases {
        let text = format!("[job]\nsize=1m\n{lines}");
        let t = tr(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let test = &t.spec.tests[0];
        assert!(check(test, &t.notes, &t), "{name}: {test:?} {:?}", t.notes);
    }
    let covered: Vec<&str> = cases.iter().map(|c| c.0).collect();
    for o in options::OPTIONS {
        for n in std::iter::once(&o.name).chain(o.aliases) {
            assert!(covered.contains(n), "option `{n}` has no case in this test");
        }
    }
}

/// fio's batch options with libaio: fio's defaults (1; iodepth_batch_submit=0 is the depth,
/// so 1 at iodepth 1) are what fsbench's libaio engine does; other values are refused with
/// their line and the way out, never run with another meaning.
#[test]
fn libaio_takes_fios_default_batches_and_refuses_others() {
    for ok in [
        "iodepth=8\niodepth_batch_submit=1\niodepth_batch_complete_min=1\n",
        "iodepth=1\niodepth_batch=0\n",
        "iodepth=4\niodepth_batch_complete=1\n",
    ] {
        let (t, notes) = one(&format!("[a]\nsize=1m\nioengine=libaio\n{ok}"));
        assert_eq!(t.engine.as_deref(), Some("libaio"), "{ok}");
        assert!(notes.is_empty(), "{ok}: {notes:?}");
        assert!(t.engine_keys.iter().next().is_none(), "{ok}: {:?}", t.engine_keys);
    }
    // Errors name an option by fio's main name (`iodepth_batch` for `iodepth_batch_submit`).
    for (opt, name, said) in [
        ("iodepth_batch_submit=4", "iodepth_batch", "submits each request as it is queued"),
        ("iodepth_batch=0", "iodepth_batch", "submits each request as it is queued"),
        ("iodepth_batch_complete_min=0", "iodepth_batch_complete", "at least one completion"),
        ("iodepth_batch_complete=8", "iodepth_batch_complete", "at least one completion"),
    ] {
        let e = err(&format!("[a]\nsize=1m\nioengine=libaio\niodepth=8\n{opt}\n"));
        assert!(e.starts_with(&format!("t.fio:5: `{name}`")), "{e}");
        assert!(e.contains(said) && e.contains("ioengine=io_uring"), "{e}");
    }
    // userspace_reap: libaio's own option (no effect at fio's default batch, in fio too).
    let (t, notes) = one("[a]\nsize=1m\nioengine=libaio\nuserspace_reap\n");
    assert_eq!(t.engine.as_deref(), Some("libaio"));
    assert!(notes.is_empty(), "{notes:?}");
    for (opt, engine) in [("userspace_reap", "psync"), ("userspace_reap=1", "io_uring")] {
        let e = err(&format!("[a]\nsize=1m\nioengine={engine}\n{opt}\n"));
        assert!(e.starts_with("t.fio:4: `userspace_reap`"), "{e}");
        assert!(
            e.contains(&format!(
                "an option of ioengine=libaio, and this job's ioengine is {engine}"
            )),
            "{e}"
        );
    }
}

/// fio 3.33's libaio engine does `fdatasync=N` as fdatasync(2) (synchronously, once nothing
/// is unsubmitted): the translation keeps the call, with no note.
#[test]
fn libaio_fdatasync_stays_fdatasync() {
    let (t, notes) = one("[w]\nrw=write\nsize=1m\nioengine=libaio\niodepth=4\nfdatasync=8\n");
    let p = &t.phases[0];
    assert_eq!((p.sync.every_ops, p.sync.call.as_deref()), (Some(8), Some("fdatasync")));
    assert!(notes.iter().all(|n| !n.contains("sync")), "{notes:?}");
}

#[test]
fn io_uring_options_with_another_engine_are_refused_with_their_line() {
    for (opt, engine) in [
        ("fixedbufs=1", "psync"),
        ("registerfiles=1", "libaio"),
        ("sqthread_poll=1", "sync"),
        ("hipri", "psync"),
    ] {
        let e = err(&format!("[a]\nsize=1m\nioengine={engine}\n{opt}\n"));
        let name = opt.split('=').next().unwrap();
        assert!(e.starts_with(&format!("t.fio:4: `{name}`")), "{e}");
        assert!(e.contains(&format!("ioengine is {engine}")), "{e}");
    }
}

/// `docs/reference/fio.md`'s option table names every option of the table, and no other.
#[test]
fn docs_table_lists_the_supported_options() {
    let doc = include_str!("../../../docs/reference/fio.md");
    let mut documented = Vec::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let first = line.split('|').nth(1).unwrap_or("");
        documented.extend(first.split('`').skip(1).step_by(2).map(|n| n.to_string()));
    }
    for o in options::OPTIONS {
        assert!(
            documented.iter().any(|d| d == o.name),
            "docs/reference/fio.md does not list `{}`",
            o.name
        );
    }
    for d in &documented {
        let known = d.starts_with('[') || options::lookup(d).is_some();
        assert!(known, "docs/reference/fio.md lists `{d}`, which the option table does not have");
    }
}

/// The option table's kind of each option is how the translation reads it: a value that is
/// not of that kind is refused with the kind's wording and the option's name.
#[test]
fn every_option_is_read_as_its_tables_kind() {
    use options::Kind;
    for o in options::OPTIONS {
        let (bad, says) = match o.kind {
            Kind::Flag => ("maybe", "is not 0 or 1"),
            Kind::Count => ("many", "is not a whole number"),
            Kind::Size | Kind::Sizes => ("lots", "is not a size"),
            Kind::Time => ("ages", "is not a time"),
            Kind::Text => continue,
        };
        // A second, stonewalled randrw job on io_uring reads every option.
        let text = format!(
            "[a]\nsize=1m\n[b]\nrw=randrw\nioengine=io_uring\nstonewall\nsize=1m\n{}={bad}\n",
            o.name
        );
        let e = err(&text);
        assert!(e.contains(&format!("`{}`", o.name)) && e.contains(says), "{}: {e}", o.name);
    }
}

/// The integer engine key `k` of a translated test.
fn int(t: &TestSpec, k: &str) -> Option<u64> {
    match t.engine_keys.get(k) {
        Some(crate::model::job::OptValue::Int(n)) => Some(*n),
        _ => None,
    }
}

/// The bool engine key `k` of a translated test.
fn flag(t: &TestSpec, k: &str) -> Option<bool> {
    match t.engine_keys.get(k) {
        Some(crate::model::job::OptValue::Bool(b)) => Some(*b),
        _ => None,
    }
}

/// fio's default random map becomes the test's `random_map`: on for random jobs unless
/// `norandommap` (and tausworthe) asks otherwise, off for sequential ones, and off with a note
/// for a randrw whose reads and writes differ in size (fsbench's map has one slot size).
#[test]
fn random_map_follows_norandommap_and_the_generator() {
    let map = |lines: &str| one(&format!("[j]\nsize=1m\n{lines}")).0.random_map;
    assert_eq!(map("rw=randread\n"), Some(true));
    assert_eq!(map("rw=randwrite\nrandom_generator=tausworthe64\n"), Some(true));
    assert_eq!(map("rw=randrw\nbs=8k\n"), Some(true));
    assert_eq!(map("rw=randread\nnorandommap=1\n"), None);
    assert_eq!(map("rw=randread\nnorandommap\nrandom_generator=tausworthe\n"), None);
    assert_eq!(map("rw=randread\nnorandommap\nrandom_generator=lfsr\n"), Some(true));
    assert_eq!(map("rw=read\n"), None);
    assert_eq!(map("rw=randrw\nbs=4k,16k\nrwmixread=100\n"), Some(true), "reads only");
    let (t, notes) = one("[j]\nsize=1m\nrw=randrw\nbs=4k,16k\n");
    assert_eq!(t.random_map, None);
    assert!(notes.iter().any(|n| n.contains("different sizes")), "{notes:?}");
    let e = err("[j]\nsize=1m\nrw=randread\nrandom_generator=mt\n");
    assert!(e.starts_with("t.fio:4: `random_generator`"), "{e}");
    // The translation loads as a workload, its random phase mapped.
    let t = tr("[j]\nsize=1m\nrw=randrw\n").unwrap();
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let s = crate::workload::validate::resolve(&t.spec, "t.fio", &ctx).unwrap();
    assert!(s.tests[0].phases.iter().all(|p| p.random_map));
}

/// fio drops a buffered file's pages each time a time-based job wraps (invalidate=1): the
/// translation asks for it on the time-based phases (the ramp's too), not with direct=1,
/// invalidate=0 or a job bound by its size.
#[test]
fn a_time_based_buffered_job_drops_the_cache_each_pass() {
    let each = |lines: &str| {
        let (t, _) = one(&format!("[j]\nsize=1m\nrw=randread\n{lines}"));
        t.phases.iter().map(|p| p.invalidate_each_pass).collect::<Vec<_>>()
    };
    assert_eq!(each("time_based\nruntime=2\n"), [true]);
    assert_eq!(each("time_based\nruntime=2\nramp_time=1\n"), [true, true]);
    assert_eq!(each("time_based\nruntime=2\ndirect=1\n"), [false]);
    assert_eq!(each("time_based\nruntime=2\ninvalidate=0\n"), [false]);
    assert_eq!(each(""), [false]);
}

fn with_host(text: &str) -> Result<Translation, FioError> {
    let no_include =
        |_: &str, n: &str| -> Result<(String, String), String> { Err(format!("no {n}")) };
    let inputs = Inputs {
        env: &env,
        keywords: ini::Keywords { ncpus: 3, mb_memory: 100, pagesize: 4096 },
        include: &no_include,
    };
    translate_with(text, "t.fio", "t", &inputs)
}

#[test]
fn job_names_with_spaces_or_percent_become_safe_ids_and_keep_their_name() {
    let t = tr("[job one]\nsize=1m\n[j%d]\nstonewall\nsize=1m\n[job one]\nstonewall\nsize=1m\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<(&str, &str)> =
        t.spec.tests.iter().map(|t| (t.id.as_str(), t.name.as_str())).collect();
    assert_eq!(ids, [("job_one", "job one"), ("j_d", "j%d"), ("job_one-2", "job one")]);
    // And the translation loads as a workload (ids are checked there).
    let text = t.to_toml();
    let spec: SuiteSpec = crate::workload::spec::parse(&text, "x").unwrap();
    assert_eq!(spec.tests[1].id, "j_d");
}

#[test]
fn comments_keywords_and_arithmetic_in_values() {
    let t = with_host("[a]\nnumjobs=$ncpus ; one per cpu\nsize=(${SIZE}*2)\nbs=(2k+2k) # four\nfilesize=$mb_memory*4/100\ntime_based\nruntime=(500000*4)\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let t = &t.spec.tests[0];
    assert_eq!(t.threads, 3);
    assert_eq!(t.file.as_ref().unwrap().size, SizeExpr::Bytes(4), "filesize=100*4/100 bytes");
    assert_eq!(fixed(op(t, 0, 0)), 4096);
    assert_eq!(t.phases[0].amount.seconds, Some(2.0), "a bare number in a time expression is µs");
    let e = with_host("[a]\nsize=(1m/0)\n").unwrap_err().to_string();
    assert!(e.contains("t.fio:2: `size`") && e.contains("division by zero"), "{e}");
}

#[test]
fn every_problem_in_one_pass_engine_first_then_in_file_order() {
    let text = "[global]\nsize=1m\nzonemode=zbd\n[a]\nrw=randread\niodeph=8\nbs=lots\nioengine=windowsaio\n[b]\nwait_for=zz\nnumjobs=0\n";
    let e = err(text);
    let lines: Vec<&str> = e.lines().collect();
    assert!(lines[0].starts_with("t.fio: 6 problems"), "{e}");
    let at: Vec<&str> =
        lines[1..7].iter().map(|l| l.trim().split(": ").next().unwrap_or("")).collect();
    assert_eq!(at, ["t.fio:8", "t.fio:3", "t.fio:6", "t.fio:7", "t.fio:10", "t.fio:11"], "{e}");
    assert!(lines[1].contains("`ioengine`"), "{e}");
    assert!(
        lines[2].contains("fio option `zonemode` is not supported by fsbench: ")
            && !lines[2].contains("did you mean")
            && !lines[2].contains("supported: name"),
        "a refused real option says why, once, and the supported list comes once at the end: {e}"
    );
    assert!(lines[3].contains("(did you mean `iodepth`?)"), "{e}");
    assert!(lines[5].contains("`wait_for`") && lines[5].contains("no job before [b]"), "{e}");
    assert!(e.trim_end().ends_with(')') && e.contains("(the fio options fsbench takes: name,"));
    assert_eq!(e.matches("zonemode").count(), 1, "a global's problem is listed once: {e}");
}

#[test]
fn a_long_list_of_problems_is_cut_and_counted() {
    let mut text = String::from("[a]\nsize=1m\n");
    for i in 0..60 {
        text.push_str(&format!("junk{i}=1\n"));
    }
    let e = err(&text);
    assert!(e.starts_with("t.fio: 60 problems"), "{e}");
    assert!(e.contains("  ... and 10 more"), "{e}");
}

/// `filename` with a path: the job's file where it says (relative to `directory`), shared by
/// every job naming it (no `filename-reuse` note); `.`/`..`, the kernel's and devices'
/// directories are refused with their line.
#[test]
fn a_filename_path_is_the_jobs_own_file() {
    let t = tr("[w]\nrw=write\nsize=1m\ndirectory=/tmp\nfilename=sub/../x.dat\n");
    assert!(t.is_err(), "`..` refused");
    let t = tr("[w]\nrw=write\nsize=1m\ndirectory=/tmp\nfilename=./fsbench-unit-rel.dat\n");
    assert!(t.unwrap_err().to_string().contains("t.fio:5: `filename`"));
    let text = "[w]\nrw=write\nsize=1m\nfilename=/tmp/fsbench-unit-shared.dat\n[r]\nstonewall\nrw=read\nsize=1m\nfilename=/tmp/fsbench-unit-shared.dat\n";
    let t = tr(text).unwrap();
    for test in &t.spec.tests {
        let f = test.file.as_ref().unwrap();
        assert_eq!(f.path.as_deref(), Some("/tmp/fsbench-unit-shared.dat"));
        assert_eq!(f.unlink, None, "kept by default");
    }
    assert!(!t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
    // A plain name shared by two jobs one after another is one file of the run, as fio's,
    // without the difference note.
    let t =
        tr("[w]\nrw=write\nsize=1m\nfilename=d\n[r]\nstonewall\nsize=1m\nfilename=d\n").unwrap();
    assert!(!t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
    for test in &t.spec.tests {
        assert_eq!(test.file.as_ref().unwrap().run_file.as_deref(), Some("d"));
    }
    // direct and buffered set one flag: the later line counts, as in fio.
    assert_eq!(one("[a]\nsize=1m\ndirect=0\nbuffered=0\n").0.direct, Some(true));
    assert_eq!(one("[a]\nsize=1m\nbuffered=0\ndirect=0\n").0.direct, None);
    for (text, says) in [
        ("[a]\nsize=1m\nfilename=/proc/x\n", "t.fio:3: `filename`"),
        ("[a]\nsize=1m\nfilename=/nonexistent-dir-fsbench/x.dat\n", "no such directory"),
        ("[a]\nsize=1m\nfilename=/tmp\n", "is a directory"),
    ] {
        let e = err(text);
        assert!(e.contains(says), "{text}: {e}");
    }
}

/// Jobs without a `stonewall` between them run at the same time in fio: one test, the first
/// job its own threads, each other job a role with its own engine, depth, direction, file,
/// amount and delay; fio's groupid counts `stonewall` and `new_group`.
#[test]
fn jobs_at_the_same_time_become_one_test_with_a_role_per_job() {
    let text = "[global]\nsize=4m\nbs=4k\n\
        [reader]\nrw=randread\ndirect=1\nioengine=libaio\niodepth=8\n\
        [writer]\nrw=write\nnumjobs=2\nstartdelay=1\nio_size=1m\n\
        [late]\nnew_group\nrw=randwrite\nruntime=3\ntime_based\n\
        [after]\nstonewall\nrw=read\nwait_for=writer\n";
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.spec.tests.len(), 2, "two run groups: {:?}", t.spec.tests);
    let g = &t.spec.tests[0];
    assert_eq!(
        (g.id.as_str(), g.engine.as_deref(), g.iodepth),
        ("reader", Some("libaio"), Some(8))
    );
    assert_eq!(g.roles.len(), 2);
    let (w, l) = (&g.roles[0], &g.roles[1]);
    assert_eq!((w.name.as_str(), w.threads, w.engine.as_deref()), ("writer", 2, None));
    assert_eq!(w.pattern[0].op.as_deref(), Some("write"));
    assert_eq!(w.pattern[0].offset.as_deref(), Some("sequential"));
    assert_eq!(w.amount.as_ref().map(bytes), Some(1 << 20), "its own amount: io_size");
    assert_eq!(w.delay, Some(1.0));
    assert!(!w.file.prefill && w.file.path.is_none());
    assert_eq!(l.amount.as_ref().and_then(|a| a.seconds), Some(3.0));
    assert_eq!(l.pattern[0].offset.as_deref(), Some("random"));
    assert_eq!(l.random_map, Some(true), "fio's random map, as the job's own");
    assert_eq!(l.invalidate_each_pass, Some(true), "a time-based buffered job drops at each wrap");
    let places: Vec<(&str, &str, Option<&str>, u32)> = t
        .jobs
        .iter()
        .map(|j| (j.name.as_str(), j.test_id.as_str(), j.role.as_deref(), j.group))
        .collect();
    assert_eq!(
        places,
        [
            ("reader", "reader", None, 0),
            ("writer", "reader", Some("writer"), 0),
            ("late", "reader", Some("late"), 1),
            ("after", "after", None, 2),
        ]
    );
    assert!(t.spec.tests[1].roles.is_empty());
    assert!(t.notes.iter().any(|n| n.contains("[reader], [writer], [late] run at the same time")));
    // The translation loads: the roles validate with their engines and amounts.
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
    let r = &suite.tests[0].roles;
    assert_eq!((r[0].own_amount, r[0].delay_seconds, r[0].iodepth), (true, 1.0, 1));
    assert!(r[1].phase.random_map && r[1].phase.invalidate_each_pass);
    assert!(
        matches!(suite.tests[0].roles[0].phase.amount, crate::model::job::Amount::Bytes(b) if b == 1 << 20)
    );
}

/// A reading job beside another starts from a prefilled, uncached file (fio lays it out and
/// invalidates it); a direct one on io_uring keeps its depth and fio's registerfiles=0.
#[test]
fn a_reading_role_is_prefilled_and_uncached_and_a_uring_one_keeps_its_depth() {
    let text = "[global]\nsize=2m\n[w]\nrw=write\n[r]\nrw=randread\n[d]\nrw=read\ndirect=1\nioengine=io_uring\niodepth=4\n";
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    let roles = &t.spec.tests[0].roles;
    assert!(roles[0].file.prefill && roles[0].uncached == Some(true));
    assert_eq!(
        (roles[1].engine.as_deref(), roles[1].iodepth, roles[1].direct),
        (Some("io_uring"), Some(4), Some(true))
    );
    assert_eq!(roles[1].uncached, None, "O_DIRECT has no cache to drop");
    assert_eq!(roles[1].registerfiles, Some(false), "fio registers no file unless asked");
    let suite = crate::fio::load(
        &t,
        &crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let d = &suite.tests[0].roles[1];
    assert_eq!((d.engine.name(), d.iodepth, d.phase.open.direct), ("io_uring", 4, true));
    let uring = crate::workload::engines::uring::uring_opts(&d.engine_options);
    assert!(!uring.registerfiles, "{uring:?}");
    assert!(suite.tests[0].roles[0].uncached);
}

/// fio's `fadvise_hint` is on by default: every phase of a job that opens a file advises the
/// kernel (the engine picks RANDOM or SEQUENTIAL from the pattern), `fadvise_hint=0` turns it
/// off, and the null engine (no file in fio) gives none; the ramp phase has it too.
#[test]
fn fadvise_hint_is_fios_default() {
    for text in ["[a]\nrw=randread\n", "[a]\nrw=read\ndirect=1\n", "[a]\nrw=write\n"] {
        let (t, _) = one(&format!("{text}size=1m\n"));
        assert!(t.phases.iter().all(|p| p.fadvise_hint), "{text}: {:?}", t.phases);
    }
    let (t, _) = one("[a]\nrw=randread\nsize=1m\nruntime=2\ntime_based\nramp_time=1\n");
    assert_eq!(t.phases.len(), 2);
    assert!(t.phases.iter().all(|p| p.fadvise_hint), "{:?}", t.phases);
    let (t, _) = one("[a]\nrw=randread\nsize=1m\nfadvise_hint=0\n");
    assert!(!t.phases[0].fadvise_hint);
    let (t, _) = one("[a]\nrw=randread\nsize=1m\nioengine=null\n");
    assert!(!t.phases[0].fadvise_hint, "fio's null engine opens no file");
}

/// fio's amounts: `runtime` without `time_based` caps the size (whichever comes first, the
/// workload's `seconds` beside `bytes`); `loops` repeats the job's bytes and drops a buffered
/// file's pages at each pass; `number_ios` caps the ops when it comes before the size (and
/// the runtime of a time-based job).
#[test]
fn runtime_without_time_based_loops_and_number_ios_are_fios_amounts() {
    let (t, _) = one("[a]\nsize=1m\nruntime=10\n");
    assert_eq!((bytes(&t.phases[0].amount), t.phases[0].amount.seconds), (1 << 20, Some(10.0)));
    let (t, _) = one("[a]\nsize=1m\nio_size=2m\nloops=3\nrw=randread\n");
    assert_eq!(bytes(&t.phases[0].amount), 6 << 20, "io_size times loops");
    assert!(t.phases[0].invalidate_each_pass, "fio drops the pages at each loop");
    let (t, _) = one("[a]\nsize=1m\nloops=3\ndirect=1\n");
    assert!(!t.phases[0].invalidate_each_pass, "O_DIRECT has no pages to drop");
    let (t, notes) = one("[a]\nsize=1m\nloops=3\nruntime=5\ntime_based\n");
    assert_eq!(t.phases[0].amount.seconds, Some(5.0));
    assert!(notes.iter().any(|n| n.contains("loops=3 has no effect")), "{notes:?}");
    // 1 MiB of 4 KiB ops is 256: 100 ios come first, 1000 do not.
    let (t, _) = one("[a]\nsize=1m\nnumber_ios=100\n");
    assert_eq!((t.phases[0].amount.ops, t.phases[0].amount.bytes.is_none()), (Some(100), true));
    let (t, _) = one("[a]\nsize=1m\nnumber_ios=1000\n");
    assert_eq!((bytes(&t.phases[0].amount), t.phases[0].amount.ops), (1 << 20, None));
    // fio 3.33 counts number_ios once per loop: 10 ios at loops=3 are 30 (its 16 blocks a
    // loop come later), 40 at loops=3 are the size first (48 blocks).
    let (t, _) = one("[a]\nsize=1m\nbs=64k\nnumber_ios=10\nloops=3\n");
    assert_eq!((t.phases[0].amount.ops, t.phases[0].amount.bytes.is_none()), (Some(30), true));
    let (t, _) = one("[a]\nsize=1m\nbs=64k\nnumber_ios=40\nloops=3\n");
    assert_eq!((bytes(&t.phases[0].amount), t.phases[0].amount.ops), (3 << 20, None));
    // With time_based, fio 3.33 runs its runtime whatever number_ios says.
    let (t, notes) = one("[a]\nsize=1m\nnumber_ios=100\nruntime=7\ntime_based\n");
    let a = &t.phases[0].amount;
    assert_eq!((a.ops, a.seconds), (None, Some(7.0)), "the runtime alone");
    assert!(notes.iter().any(|n| n.contains("number_ios=100 has no effect")), "{notes:?}");
    // The workload loader takes the cap: the phase ends at the first of the two.
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let t = tr("[a]\nsize=1m\nruntime=10\n").unwrap();
    let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
    let p = &suite.tests[0].phases[0];
    assert_eq!((p.amount, p.max_seconds), (crate::model::job::Amount::Bytes(1 << 20), Some(10.0)));
}

/// `bssplit` with several sizes: each op's size drawn by fio's percentages (a blank one shares
/// what is left), per direction; random offsets aligned to the smallest size and drawn with
/// replacement (noted: fio's map counts blocks of the smallest size).
#[test]
fn bssplit_draws_each_size_by_its_percentage() {
    let (t, _) = one("[a]\nsize=1m\nrw=randrw\nbssplit=4k/10:64k/:32k/40,8k\n");
    let split = |o: &OpSpec| match &o.size {
        Some(SizeDistSpec::Split { split }) => {
            split.iter().map(|e| (e.size.0, e.weight)).collect::<Vec<_>>()
        }
        other => panic!("not a split: {other:?}"),
    };
    assert_eq!(split(op(&t, 0, 0)), [(4096, 10), (65536, 50), (32768, 40)]);
    assert_eq!(op(&t, 0, 0).align.map(|b| b.0), Some(4096), "aligned to the smallest size");
    assert_eq!(fixed(op(&t, 0, 1)), 8192, "writes have their own");
    assert!(is_diff(&t, "random map", "random-map"), "{:?}", t.notes);
    let (t, _) = one("[a]\nsize=1m\nbssplit=4k/:8k/:16k/\n");
    assert_eq!(split(op(&t, 0, 0)), [(4096, 34), (8192, 33), (16384, 33)], "the rest, shared");
    // The loader draws them so: proportions within 2% over 100,000 draws.
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let tr = tr("[a]\nsize=1m\nrw=randread\nbssplit=512/10:4k/60:64k/30\n").unwrap();
    let suite = crate::fio::load(&tr, &ctx).unwrap_or_else(|e| panic!("{e}"));
    let d = suite.tests[0].phases[0].pattern.data()[0].size;
    let mut rng = fastrand::Rng::with_seed(7);
    let n = 100_000;
    let mut hits = std::collections::BTreeMap::new();
    for _ in 0..n {
        *hits.entry(d.sample(&mut rng)).or_insert(0u32) += 1;
    }
    for (size, pct) in [(512u64, 10.0), (4096, 60.0), (65536, 30.0)] {
        let got = hits.get(&size).copied().unwrap_or(0) as f64 * 100.0 / n as f64;
        assert!((got - pct).abs() < 2.0, "{size}: {got}% for {pct}%");
    }
    assert_eq!(hits.len(), 3);
    assert!(!suite.tests[0].phases[0].random_map);
}

/// randrw with one size: one read entry whose ops are writes with fio's probability, drawn per
/// op (no interleave note); with reads and writes of different sizes, the fixed interleave
/// (noted).
#[test]
fn randrw_draws_each_direction_by_rwmixread() {
    let (t, notes) = one("[a]\nsize=1m\nrw=randrw\nrwmixread=70\n");
    assert_eq!(t.phases[0].pattern.len(), 1);
    assert_eq!((op(&t, 0, 0).op.as_deref(), op(&t, 0, 0).write_percent), (Some("read"), Some(30)));
    assert!(!notes.iter().any(|n| n.contains("randrw-interleave")), "{notes:?}");
    assert_eq!(t.random_map, Some(true), "one size: fio's random map");
    let (t, _) = one("[a]\nsize=1m\nrw=randrw\nrwmixread=0\n");
    assert_eq!((op(&t, 0, 0).op.as_deref(), op(&t, 0, 0).write_percent), (Some("write"), None));
    let (t, notes) = one("[a]\nsize=1m\nrw=randrw\nrwmixread=70\nbs=4k,8k\n");
    assert_eq!(t.phases[0].pattern.len(), 2);
    assert!(notes.iter().any(|n| n.contains("randrw-interleave")), "{notes:?}");
}

/// A drawn randrw goes back to fio as itself: `rw=randrw` with its `rwmixread`, no note of an
/// interleave.
#[test]
fn a_drawn_randrw_exports_as_fios_randrw() {
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let t = tr("[a]\nsize=1m\nrw=randrw\nrwmixread=70\n").unwrap();
    let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
    let job = crate::fio::export::test_to_fio(&suite.tests[0]).unwrap_or_else(|w| panic!("{w:?}"));
    assert!(job.contains("rw=randrw\n") && job.contains("rwmixread=70\n"), "{job}");
    assert!(!job.contains("fixed order"), "{job}");
}

/// A job beside the first of its group keeps its rate and think time (a role is paced as a
/// phase).
#[test]
fn a_paced_job_in_a_group_keeps_its_rate() {
    let t = tr("[a]\nsize=1m\n[b]\nsize=1m\nrw=write\nrate_iops=50\nthinktime=10\n").unwrap();
    let r = &t.spec.tests[0].roles[0];
    assert_eq!(r.rate_iops, Some(50.0));
    assert_eq!(r.thinktime, Some(crate::workload::load::DurationText::Micros(10)));
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
    let load = &suite.tests[0].roles[0].phase.load;
    assert_eq!((load.thread_ops_per_s, load.think_nanos), (Some(50.0), 10_000));
}

/// A job of a group that does not translate does not hide the group's other problems: they are
/// all listed in one pass.
#[test]
fn a_groups_problems_are_listed_with_a_failed_jobs() {
    let e = err("[a]\nsize=1m\n[b]\nsize=1m\nrw=trim\n[c]\nsize=1m\nfilename=/tmp/x.dat\n");
    assert!(e.contains("t.fio:5: `rw`") && e.contains("t.fio:8: `filename`"), "{e}");
}

/// `wait_for` naming a job of the same group: the role starts once that job is done (the
/// test's own threads, or an earlier role), as fio's.
#[test]
fn wait_for_inside_a_group_waits_for_the_job() {
    let t = tr("[global]\nsize=1m\n[w]\nrw=write\n[r]\nwait_for=w\n[r2]\nnew_group\nwait_for=r\n")
        .unwrap();
    let roles = &t.spec.tests[0].roles;
    assert_eq!((roles[0].after.as_deref(), roles[1].after.as_deref()), (Some("w"), Some("r")));
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
    use crate::model::job::RoleWait;
    let r = &suite.tests[0].roles;
    assert_eq!((r[0].after, r[1].after), (Some(RoleWait::Test), Some(RoleWait::Role(0))));
}

/// fio's `random_distribution`: the law goes to the test in fio's syntax and turns the random
/// map off (fio keeps none with a skewed law); `random` is uniform with the map; a sequential
/// job ignores it (noted); what fio 3.33 refuses, or fsbench cannot draw, is refused at the
/// option's line; a center is a stated difference.
#[test]
fn random_distribution_is_fio_law_without_the_map() {
    let get = |lines: &str| one(&format!("[j]\nsize=1m\nbs=4k\n{lines}"));
    for d in
        ["zipf:0.5", "pareto:0.3", "normal:10", "zoned:50/5:30/15:20/", "zoned_abs:60/64k:40/512k"]
    {
        let (t, notes) = get(&format!("rw=randread\nrandom_distribution={d}\n"));
        assert_eq!(t.random_distribution.as_deref(), Some(d));
        assert_eq!(t.random_map, None, "{d}: no random map");
        assert!(!notes.iter().any(|n| options::is_difference(n)), "{d}: {notes:?}");
    }
    let (t, _) = get("rw=randwrite\nrandom_distribution=random\n");
    assert_eq!((t.random_distribution, t.random_map), (None, Some(true)));
    let (t, notes) = get("rw=read\nrandom_distribution=zipf:1.2\n");
    assert_eq!(t.random_distribution, None);
    assert!(notes.iter().any(|n| n.contains("no effect on a sequential job")), "{notes:?}");
    let (t, notes) = get("rw=randread\nrandom_distribution=zipf:1.2:0.25\n");
    assert_eq!(t.random_distribution.as_deref(), Some("zipf:1.2:0.25"));
    assert!(notes.iter().any(|n| n.contains("[differs from fio: skew-placement]")), "{notes:?}");
    for (lines, want) in [
        ("rw=randread\nrandom_distribution=gauss:5\n", "fio 3.33 refuses"),
        ("rw=randread\nrandom_distribution=zoned:60/10:40/90,50/50:50/50\n", "fio 3.33 refuses"),
        ("rw=randread\nrandom_distribution=zoned:50/5:30/15\n", "add up to 80"),
        ("rw=randread\nrandom_distribution=zoned_abs:60/1m:40/1m\n", "past the file"),
        ("rw=randread\nbssplit=4k/50:8k/50\nrandom_distribution=zipf:1.2\n", "one bs"),
    ] {
        let e = err(&format!("[j]\nsize=1m\n{lines}"));
        assert!(
            e.contains("t.fio:") && e.contains("random_distribution") && e.contains(want),
            "{e}"
        );
    }
}

/// A skewed job loads into a phase that draws from the law without the map, goes back to fio
/// as itself, and a job beside the first of its group (a role) keeps its law too.
#[test]
fn a_skewed_job_loads_exports_and_keeps_its_law_as_a_role() {
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    let t = tr("[a]\nsize=1m\nrw=randread\nrandom_distribution=zipf:1.2\n").unwrap();
    let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
    let phase = suite.tests[0].phases.last().unwrap();
    assert_eq!(
        phase.random_distribution,
        Some(crate::model::skew::RandomDist::Zipf { theta: 1.2, center: None })
    );
    assert!(!phase.random_map, "no map with a skewed law");
    let job = crate::fio::export::test_to_fio(&suite.tests[0]).unwrap_or_else(|w| panic!("{w:?}"));
    assert!(
        job.contains("random_distribution=zipf:1.2\n") && job.contains("norandommap\n"),
        "{job}"
    );
    let t = tr("[a]\nsize=1m\n[b]\nsize=1m\nrw=randread\nrandom_distribution=zoned:60/10:40/90\n")
        .unwrap();
    let r = &t.spec.tests[0].roles[0];
    assert_eq!(r.random_distribution.as_deref(), Some("zoned:60/10:40/90"));
    let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
    let roles = &suite.tests[0].roles;
    assert!(matches!(
        roles[0].phase.random_distribution,
        Some(crate::model::skew::RandomDist::Zoned { .. })
    ));
}

/// `rw=read:N`: the skip on the sequential entry, and the bytes fio 3.33 moves (measured under
/// strace on a 64 KiB file with bs=4k: read:8k reads 6 blocks and stops, write:4k writes 16,
/// wrapping at the end, read:-8k reads 16 backwards).
#[test]
fn sequential_offset_modifier_skips_and_moves_fios_bytes() {
    let cases: &[(&str, i64, u64)] = &[
        ("read:8k", 8192, 24 << 10),
        ("write:4k", 4096, 64 << 10),
        ("read:-8k", -8192, 64 << 10),
        ("read:+4k", 4096, 64 << 10),
        ("read:0", 0, 64 << 10),
    ];
    for &(rw, skip, moved) in cases {
        let (t, _) = one(&format!("[a]\nsize=64k\nbs=4k\nrw={rw}\n"));
        let o = op(&t, 0, 0);
        assert_eq!(o.skip, (skip != 0).then_some(skip), "{rw}");
        assert_eq!(o.offset.as_deref(), Some("sequential"), "{rw}");
        assert_eq!(bytes(&t.phases[0].amount), moved, "{rw}");
    }
    // Each of fio's loops stops where the first does.
    let (t, _) = one("[a]\nsize=64k\nbs=4k\nrw=read:8k\nloops=3\n");
    assert_eq!(bytes(&t.phases[0].amount), 3 * (24 << 10));
    // A time-based job wraps (the engine's rule) and keeps its time.
    let (t, _) = one("[a]\nsize=64k\nrw=read:8k\ntime_based\nruntime=2\n");
    assert_eq!(t.phases[0].amount.seconds, Some(2.0));
    assert_eq!(op(&t, 0, 0).skip, Some(8192));
}

/// `rw=randread:N` with `rw_sequencer=identical`: a random op, then N-1 at its offset.
#[test]
fn random_offset_modifier_identical_repeats_the_offset() {
    let (t, _) = one("[a]\nsize=64k\nbs=4k\nrw=randwrite:4\nrw_sequencer=identical\n");
    let p = &t.phases[0].pattern;
    assert_eq!(p.len(), 2);
    assert_eq!((p[0].op.as_deref(), p[0].offset.as_deref()), (Some("write"), Some("random")));
    assert_eq!((p[1].op.as_deref(), p[1].offset.as_deref()), (Some("write"), Some("last")));
    assert_eq!(p[1].repeat, Some(3));
    assert_eq!(bytes(&t.phases[0].amount), 64 << 10);
    // `:1` and a sequencer without `:N` change nothing.
    let (t, _) = one("[a]\nsize=64k\nrw=randread:1\nrw_sequencer=sequential\n");
    assert_eq!(t.phases[0].pattern.len(), 1);
}

/// `rw=rw` (and `readwrite=rw`/`readwrite`): one sequential entry drawing each op's direction by
/// rwmixread, on a prefilled file (fio lays it out), the phase named as fio's word.
#[test]
fn sequential_mixed_reads_and_writes() {
    for text in ["rw=rw\nrwmixread=60\n", "readwrite=readwrite\nrwmixwrite=40\n"] {
        let (t, notes) = one(&format!("[a]\nsize=1m\nbs=8k\n{text}"));
        let o = op(&t, 0, 0);
        assert_eq!(o.op.as_deref(), Some("read"), "{text}");
        assert_eq!(o.offset.as_deref(), Some("sequential"), "{text}");
        assert_eq!(o.write_percent, Some(40), "{text}");
        assert_eq!(t.phases[0].name, "rw");
        assert!(t.file.as_ref().is_some_and(|f| f.prefill));
        assert!(!notes.iter().any(|n| n.contains("no effect")), "{notes:?}");
    }
    let (t, _) = one("[a]\nsize=1m\nrw=rw\nrwmixread=0\n");
    assert_eq!(op(&t, 0, 0).op.as_deref(), Some("write"));
    assert_eq!(op(&t, 0, 0).write_percent, None);
}

/// numjobs on one `filename`: one shared file that every thread covers whole (fio's jobs naming
/// one file), sequential or random; one thread, or no filename, keeps its own file.
#[test]
fn numjobs_on_one_filename_share_the_whole_file() {
    for rw in ["read", "write", "rw", "randread"] {
        let (t, _) = one(&format!("[a]\nsize=1m\nfilename=f\nnumjobs=4\nrw={rw}\n"));
        let f = t.file.as_ref().unwrap();
        assert!(f.shared && f.whole == Some(true), "{rw}: {f:?}");
        assert_eq!(t.threads, 4);
    }
    let (t, _) = one("[a]\nsize=1m\nfilename=f\n");
    assert_eq!(t.file.as_ref().unwrap().whole, None);
    let (t, _) = one("[a]\nsize=1m\nnumjobs=4\n");
    let f = t.file.as_ref().unwrap();
    assert!(!f.shared && f.whole.is_none());
}

/// The suite of a translation, validated as `run --fio` does.
fn loaded(t: &Translation) -> crate::model::job::Suite {
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: 1 << 30,
    };
    crate::fio::load(t, &ctx).unwrap_or_else(|e| panic!("{e}"))
}

/// Jobs of one group naming one plain `filename` work on one file, as fio's: the later job's
/// role is on the first job's file (`same_file`), which the first job lays out before the
/// phase as fio's does (a write job: fallocated to its size, which the later reader finds long
/// enough; with `fallocate=none` the reader finds no file, so it is written out); no
/// `filename-reuse` difference within a group; each keeps its own pattern and block size.
#[test]
fn jobs_of_a_group_naming_one_file_share_it() {
    let text = "[global]\nfilename=d\nsize=1m\n[w]\nrw=write\nbs=4k\n[r]\nnew_group\nwait_for=w\nrw=randread\nbs=8k\n";
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    let test = &t.spec.tests[0];
    let r = &test.roles[0];
    assert_eq!(r.same_file.as_deref(), Some("w"));
    assert!(!r.file.prefill, "the owner lays the file out, not the role");
    let f = test.file.as_ref().unwrap();
    assert!(f.shared && !f.prefill, "fallocated by the writer, as fio's");
    assert_eq!(f.preallocate.as_deref(), Some("fallocate"));
    assert!(fixed(&r.pattern[0]) == 8192 && fixed(op(test, 0, 0)) == 4096);
    let all: Vec<&String> = t.notes.iter().chain(&test.notes).collect();
    assert!(!all.iter().any(|n| n.contains("filename-reuse")), "{all:?}");
    assert_eq!(r.file.preallocate, None, "the owner lays the file out");
    let t = tr(&text.replace("[w]\n", "[w]\nfallocate=none\n")).unwrap();
    let f = t.spec.tests[0].file.as_ref().unwrap();
    assert!(f.prefill && f.preallocate.is_none(), "written out for the reader: {f:?}");
    let suite = loaded(&t);
    use crate::model::job::RoleWait;
    assert_eq!(suite.tests[0].roles[0].same_file, Some(RoleWait::Test));
    // Two writers: nothing reads, so the first lays the file out as fio's (fallocate), once.
    let t = tr("[global]\nfilename=d\nsize=1m\nrw=write\n[a]\n[b]\nbs=8k\n").unwrap();
    let f = t.spec.tests[0].file.as_ref().unwrap();
    assert!(!f.prefill && f.preallocate.as_deref() == Some("fallocate"));
    assert_eq!(t.spec.tests[0].roles[0].same_file.as_deref(), Some("a"));
    assert_eq!(t.spec.tests[0].roles[0].file.preallocate, None);
    // Across groups a plain name is one file of the run, as fio's (no difference).
    let t = tr("[global]\nfilename=d\nsize=1m\n[a]\nrw=write\n[b]\nstonewall\nrw=read\n").unwrap();
    assert!(!t.notes.iter().any(|n| n.contains("filename-reuse")), "{:?}", t.notes);
    let run = |i: usize| t.spec.tests[i].file.as_ref().and_then(|f| f.run_file.clone());
    assert_eq!((run(0), run(1)), (Some("d".into()), Some("d".into())));
}

/// A later job of a group that is the first to name a plain file owns it: its numjobs threads
/// share that one file (`file.whole`), and a job after it naming the file works on it; the
/// owner, a role, writes it out when a job on it reads and its own lay-out leaves it short. The validated roles say the same by index.
#[test]
fn a_role_can_own_the_shared_file() {
    let text = "[global]\nsize=1m\n[a]\nrw=write\n[b]\nfilename=x\nnumjobs=4\nrw=write\nfallocate=keep\n[c]\nfilename=x\nrw=read\n";
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    let roles = &t.spec.tests[0].roles;
    assert_eq!(roles[0].file.whole, Some(true));
    assert!(roles[0].file.prefill, "kept at length 0 by [b]: written out for [c], which reads");
    assert_eq!(roles[1].same_file.as_deref(), Some("b"));
    let suite = loaded(&t);
    use crate::model::job::RoleWait;
    let r = &suite.tests[0].roles;
    assert!(r[0].shared_file && r[0].same_file.is_none());
    assert_eq!(r[1].same_file, Some(RoleWait::Role(0)));
    let paths = crate::engine::roles::paths(&suite.tests[0], std::path::Path::new("/d"), None);
    assert_eq!(paths[0].len(), 4);
    assert!(paths[0].iter().chain(&paths[1]).all(|p| *p == paths[0][0]), "{paths:?}");
}

/// What a shared file cannot give is refused at its line: a later job larger than the file's
/// owner (fsbench lays the file out once, at the owner's size); a later job naming by path a
/// file no earlier job of its group names (fsbench would give it files of its own).
#[test]
fn a_shared_file_larger_than_its_owner_is_refused() {
    let e = err("[global]\nfilename=d\n[a]\nsize=1m\n[b]\nsize=2m\n");
    assert!(e.contains("t.fio:6: `size`") && e.contains("at most that size"), "{e}");
    let e = err("[a]\nsize=1m\n[b]\nsize=1m\nfilename=/tmp/x.dat\n");
    assert!(e.contains("t.fio:5: `filename`") && e.contains("files of its own"), "{e}");
    // The first job checks its file: a later job may read it, not write into it.
    let text = "[global]\nfilename=d\nsize=1m\n[a]\nrw=write\nverify=crc32c\n[b]\nrw=randwrite\n";
    let e = err(text);
    assert!(e.contains("t.fio:2: `filename`") && e.contains("checks its file"), "{e}");
    let t = tr(&text.replace("rw=randwrite", "rw=randread")).unwrap_or_else(|e| panic!("{e}"));
    loaded(&t);
}

/// fio's own waitfor.fio shape (paths, numjobs=4 each, `threads=1`, `new_group` +
/// `wait_for`) translates: every later job on the first job's named file, each waiting for the
/// one before; `threads=1` is no effect (noted, as in fio 3.33), and a count it must be.
#[test]
fn waitfor_shaped_jobs_translate_onto_one_named_file() {
    let mut text = String::from(
        "[global]\nthreads=1\ngroup_reporting\nfilename=/tmp/fsbench-unit-waitfor.dat\nfilesize=4m\n[writers]\nrw=write\nbs=128k\nnumjobs=4\nruntime=10\n",
    );
    for (name, prev, rw) in
        [("readers", "writers", "randread"), ("writers2", "readers", "randwrite")]
    {
        text.push_str(&format!(
            "[{name}]\nnew_group\nwait_for={prev}\nrw={rw}\nbs=4k\nnumjobs=4\nruntime=10\n"
        ));
    }
    let t = tr(&text).unwrap_or_else(|e| panic!("{e}"));
    let test = &t.spec.tests[0];
    assert_eq!(
        test.file.as_ref().and_then(|f| f.path.as_deref()),
        Some("/tmp/fsbench-unit-waitfor.dat")
    );
    for r in &test.roles {
        assert_eq!((r.same_file.as_deref(), r.threads), (Some("writers"), 4), "{}", r.name);
    }
    assert!(t.notes.iter().any(|n| n.contains("threads=1: no effect, as in fio 3.33")));
    assert!(!t.notes.iter().any(|n| options::is_difference(n)), "{:?}", t.notes);
    let suite = loaded(&t);
    let paths = crate::engine::roles::paths(&suite.tests[0], std::path::Path::new("/d"), None);
    assert!(paths.iter().flatten().all(|p| p.to_str() == Some("/tmp/fsbench-unit-waitfor.dat")));
    let e = err("[a]\nsize=1m\nthreads=x\n");
    assert!(e.contains("t.fio:3: `threads`"), "{e}");
}

/// fio's `flow`, `flow_id`, `flow_sleep`: the weight, id and sleep go to the timed phase of
/// the group's first job and to each other job's role, and the validated loads carry them
/// (sleep in ns); `flow=0` is none, and `flow_id`/`flow_sleep` without a weight change
/// nothing (noted, as in fio); a weight past fio's 1000 is refused.
#[test]
fn flow_goes_to_the_phase_and_the_roles() {
    let text = "[global]\nfilename=f\nsize=1m\nbs=4k\ntime_based\nruntime=1\nflow_sleep=1000\n[w]\nrw=write\nflow=1\n[r]\nrw=randread\nflow=8\nflow_id=0\n";
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    let test = &t.spec.tests[0];
    let p = test.phases.last().unwrap();
    assert_eq!((p.flow, p.flow_id, p.flow_sleep), (Some(1), None, Some(1000)));
    let r = &test.roles[0];
    assert_eq!((r.flow, r.flow_sleep), (Some(8), Some(1000)));
    let suite = loaded(&t);
    use crate::model::series::Flow;
    let want = |weight| Some(Flow { id: 0, weight, sleep_nanos: 1_000_000 });
    assert_eq!(suite.tests[0].phases.last().unwrap().load.flow, want(1));
    assert_eq!(suite.tests[0].roles[0].phase.load.flow, want(8));
    let (t, notes) = one("[a]\nsize=1m\nflow=0\nflow_sleep=10\n");
    assert_eq!(t.phases[0].flow, None);
    assert!(notes.iter().any(|n| n.contains("without flow: no effect, as in fio")), "{notes:?}");
    let e = err("[a]\nsize=1m\nflow=1001\n");
    assert!(e.contains("t.fio:3: `flow`") && e.contains("0 to 1000"), "{e}");
}

/// A flow fsbench cannot run as fio does is refused at the job's `flow` line: jobs of one flow
/// in several groups (fio holds a group back to its share of jobs not running), a job of a
/// flow that waits for another, or one in a group with a startdelay.
#[test]
fn a_flow_across_groups_or_with_waits_is_refused() {
    let cases = [
        ("[global]\nsize=1m\nflow=1\n[a]\n[b]\nstonewall\n", "t.fio:3: `flow`", "several groups"),
        (
            "[global]\nsize=1m\n[a]\nflow=1\n[b]\nflow=2\nwait_for=a\n",
            "t.fio:6: `flow`",
            "wait_for",
        ),
        (
            "[global]\nsize=1m\n[a]\nflow=1\nstartdelay=1\n[b]\nflow=2\n",
            "t.fio:4: `flow`",
            "startdelay",
        ),
    ];
    for (text, at, why) in cases {
        let e = err(text);
        assert!(e.contains(at) && e.contains(why), "{text}: {e}");
    }
    // Different ids in different groups are fine.
    tr("[global]\nsize=1m\n[a]\nflow=1\n[b]\nstonewall\nflow=1\nflow_id=2\n").unwrap();
}

/// `size=${SIZE}` with SIZE unset is one problem, the variable's: no "no size" beside it (the
/// option was given), in every job that writes it.
#[test]
fn an_unset_size_variable_is_reported_once() {
    let e = err("[j]\nrw=read\nsize=${NOPE_UNSET}\nbs=4k\n[k]\nstonewall\nrw=read\nfilesize=${NOPE_UNSET}\n");
    assert!(e.contains("t.fio:3") && e.contains("NOPE_UNSET"), "{e}");
    assert!(e.contains("t.fio:8"), "{e}");
    assert!(!e.contains("no size"), "{e}");
    // Without the variable's line, the missing size is still said.
    assert!(err("[j]\nrw=read\nbs=4k\n").contains("no size"));
}

/// Jobs of a group on one file lay it out once: the test's footprint (the space check, a
/// testbed's size) counts the file once, not once per job and thread (fio's waitfor.fio was
/// refused for 3.25G on a 2.7G testbed with one 256 MiB file).
#[test]
fn jobs_sharing_a_file_count_it_once() {
    let text = "[global]\nfilename=d\nsize=1m\nnumjobs=4\n[w]\nrw=write\n[r]\nnew_group\nwait_for=w\nrw=randread\n";
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    let suite = loaded(&t);
    assert_eq!(suite.tests[0].roles.len(), 1);
    assert_eq!(suite.tests[0].footprint_bytes(), 1 << 20);
}

/// `randseed` is the test's own seed (its draws come from it instead of the run's --seed);
/// a job run beside the group's first with another randseed is a stated difference (the
/// group draws from the first job's seed), with the same one none.
#[test]
fn randseed_is_the_tests_seed_and_a_group_draws_from_its_first_jobs() {
    let (t, _) = one("[j]\nrw=randread\nsize=1m\nrandseed=7\n");
    assert_eq!(t.seed, Some(7));
    assert_eq!(
        loaded(&tr("[j]\nrw=randread\nsize=1m\nrandseed=7\n").unwrap()).tests[0].seed,
        Some(7)
    );
    let (t, _) = one("[j]\nrw=randread\nsize=1m\n");
    assert_eq!(t.seed, None, "the run's --seed");
    assert!(err("[j]\nrw=randread\nsize=1m\nrandseed=x\n").contains("t.fio:4"));
    let t = tr("[a]\nrw=randread\nsize=1m\nrandseed=1\n[b]\nrw=randread\nsize=1m\nrandseed=2\n")
        .unwrap();
    assert!(is_diff(&t.spec.tests[0], "[b]", "randseed-group"), "{:?}", t.spec.tests[0].notes);
    assert!(t.check_strict().is_err());
    let t =
        tr("[global]\nrandseed=3\n[a]\nrw=randread\nsize=1m\n[b]\nrw=randread\nsize=1m\n").unwrap();
    assert!(t.check_strict().is_ok(), "{:?}", t.spec.tests[0].notes);
}

/// `clat_percentiles` (default 1) and `lat_percentiles` (default 0) reach the job's report;
/// `disable_clat`/`disable_lat` turn them off, as fio's init.c does.
#[test]
fn latency_percentile_options_reach_the_jobs_report() {
    use super::LatPercentiles;
    let pct = |text: &str| tr(text).unwrap_or_else(|e| panic!("{e}")).jobs[0].percentiles;
    let l = |clat, lat| LatPercentiles { clat, lat };
    assert_eq!(pct("[j]\nsize=1m\n"), l(true, false));
    assert_eq!(pct("[j]\nsize=1m\nclat_percentiles=0\nlat_percentiles=1\n"), l(false, true));
    assert_eq!(
        pct("[j]\nsize=1m\nlat_percentiles=1\ndisable_lat=1\ndisable_clat=1\n"),
        l(false, false)
    );
}

/// `pre_read` is refused with `direct=1` (fio 3.33 fails the job) and in a job that runs beside
/// its group's first (fsbench pre-reads the first job's files only); a time-based buffered job
/// with it keeps its pages at each pass (fio turns invalidate off).
#[test]
fn pre_read_is_cached_and_refused_where_fsbench_cannot_do_it() {
    let e = err("[j]\nrw=read\nsize=1m\ndirect=1\npre_read=1\n");
    assert!(e.contains("t.fio:5") && e.contains("direct=1"), "{e}");
    let e = err("[a]\nrw=read\nsize=1m\n[b]\nrw=read\nsize=1m\npre_read=1\n");
    assert!(e.contains("t.fio:7") && e.contains("first job only"), "{e}");
    let (t, _) = one("[j]\nrw=read\nsize=1m\ntime_based\nruntime=1\npre_read=1\n");
    assert_eq!(t.phases[0].cache, CacheReq::Cached);
    assert!(!t.phases[0].invalidate_each_pass);
}

/// `create_on_open`: a write job's file is not laid out (fallocate ignored); a job that reads
/// is refused (fio 3.33 fails it).
#[test]
fn create_on_open_lays_nothing_out_and_refuses_a_reader() {
    let (t, _) = one("[w]\nrw=write\nsize=1m\nfallocate=native\ncreate_on_open=1\n");
    assert_eq!(t.file.as_ref().map(|f| f.preallocate.clone()), Some(None));
    let (t, _) = one("[w]\nrw=write\nsize=1m\n");
    assert!(t.file.as_ref().is_some_and(|f| f.preallocate.is_some()), "fio's default lays out");
    let e = err("[r]\nrw=randrw\nsize=1m\ncreate_on_open=1\n");
    assert!(e.contains("t.fio:4") && e.contains("create_on_open"), "{e}");
}

/// fio's `nice`, `prio`/`prioclass` and `cpus_allowed`/`cpumask` with `cpus_allowed_policy`
/// become every phase's (a ramp's too) and a role's `nice`, `ioprio`, `cpus` and `cpus_policy`,
/// with fio's defaults: class best effort when only prio is given, level 0 when only the class
/// is, class 0 as best effort; the later of cpus_allowed and cpumask counts.
#[test]
fn scheduling_options_reach_each_phase_and_role() {
    let (t, _) = one("[a]\nrw=read\nsize=1m\nramp_time=1\nnice=-3\nprio=6\nprioclass=1\n");
    assert_eq!(t.phases.len(), 2);
    for p in &t.phases {
        assert_eq!((p.nice, p.ioprio.as_deref()), (Some(-3), Some("rt:6")), "{}", p.name);
    }
    let (t, _) = one("[a]\nrw=read\nsize=1m\nprioclass=0\nprio=2\n");
    assert_eq!(t.phases[0].ioprio.as_deref(), Some("be:2"));
    let (t, _) = one("[a]\nrw=read\nsize=1m\n");
    let p = &t.phases[0];
    assert!(p.nice.is_none() && p.ioprio.is_none() && p.cpus.is_none() && p.cpus_policy.is_none());
    let (t, _) =
        one("[a]\nrw=read\nsize=1m\ncpus_allowed=0\ncpumask=1\ncpus_allowed_policy=shared\n");
    assert_eq!(
        (t.phases[0].cpus.as_deref(), t.phases[0].cpus_policy.as_deref()),
        (Some("0"), None)
    );
    let (_, notes) = one("[a]\nrw=read\nsize=1m\ncpus_allowed_policy=split\n");
    assert!(
        notes.iter().any(|n| n.contains("cpus_allowed_policy without cpus_allowed")),
        "{notes:?}"
    );
    // A job of the same group runs as a role: it takes its own settings.
    let (t, _) = one("[a]\nrw=read\nsize=1m\n[b]\nrw=read\nsize=1m\nnice=4\nprio=1\ncpus_allowed=0\ncpus_allowed_policy=split\n");
    let r = &t.roles[0];
    assert_eq!(
        (r.nice, r.ioprio.as_deref(), r.cpus.as_deref(), r.cpus_policy.as_deref()),
        (Some(4), Some("be:1"), Some("0"), Some("split"))
    );
    assert!(t.phases[0].nice.is_none());
}

/// Values fio 3.33 refuses are refused with their file and line (exit 2 as bad input), and so
/// is a CPU this machine does not have (fio: "CPU N too large").
#[test]
fn bad_scheduling_values_are_refused_with_their_line() {
    let beyond = crate::sys::sched::configured_cpus();
    let cases = [
        ("nice=20\n", "t.fio:4", "-20 to 19"),
        ("nice=-21\n", "t.fio:4", "-20 to 19"),
        ("nice=x\n", "t.fio:4", "not a whole number"),
        ("prio=8\n", "t.fio:4", "0 (highest) to 7"),
        ("prioclass=4\n", "t.fio:4", "prioclass is 1"),
        ("cpus_allowed_policy=spread\n", "t.fio:4", "not shared or split"),
        ("cpus_allowed=2-1\n", "t.fio:4", "is empty"),
        ("cpus_allowed=zero\n", "t.fio:4", "not a CPU number"),
        ("cpumask=0\n", "t.fio:4", "at least one bit"),
        ("cpumask=0x100000000\n", "t.fio:4", "CPUs 0 to 31"),
    ];
    for (line, at, want) in cases {
        let e = tr(&format!("[a]\nrw=read\nsize=1m\n{line}")).unwrap_err();
        assert!(crate::sys::classify::Classify::is_bad_input(&e), "{line}: {e}");
        let m = e.to_string();
        assert!(m.contains(at) && m.contains(want), "{line}: {m}");
    }
    let m = err(&format!("[a]\nrw=read\nsize=1m\n\ncpus_allowed=0,{beyond}\n"));
    assert!(
        m.contains("t.fio:5") && m.contains(&format!("CPU {beyond} is not on this machine")),
        "{m}"
    );
    if beyond < 32 {
        let m = err(&format!("[a]\nrw=read\nsize=1m\ncpumask={}\n", 1u64 << beyond));
        assert!(
            m.contains("t.fio:4") && m.contains(&format!("CPU {beyond} is not on this machine")),
            "{m}"
        );
    }
}

/// fio deals split CPUs by thread number over the file: a job whose earlier jobs' threads are
/// not a multiple of its CPUs is noted as a difference; the first job, or one after a multiple,
/// is not.
#[test]
fn split_after_other_jobs_is_a_noted_difference() {
    let job = "[a]\nrw=read\nsize=1m\nstonewall\n[b]\nrw=read\nsize=1m\nstonewall\ncpus_allowed=0\ncpus_allowed_policy=split\n";
    let t = tr(job).unwrap();
    assert!(!t.spec.tests[1].notes.iter().any(|n| n.contains("cpus-split")), "one CPU: the same");
    if crate::sys::sched::configured_cpus() >= 2 {
        let t = tr(&job.replace("cpus_allowed=0\n", "cpus_allowed=0-1\n")).unwrap();
        assert!(
            is_diff(&t.spec.tests[1], "cpus_allowed_policy", "cpus-split"),
            "{:?}",
            t.spec.tests[1].notes
        );
        assert!(!t.spec.tests[0].notes.iter().any(|n| n.contains("cpus-split")));
        let two = job
            .replace("[a]\n", "[a]\nnumjobs=2\n")
            .replace("cpus_allowed=0\n", "cpus_allowed=0-1\n");
        let t = tr(&two).unwrap();
        assert!(
            !t.spec.tests[1].notes.iter().any(|n| n.contains("cpus-split")),
            "2 threads before, 2 CPUs"
        );
    }
}

/// `bsrange` draws fio 3.33's law over the multiples of its minimum: 4k-16k a quarter each,
/// 4k-10k 40/40/20 (10k past the last whole step), each direction its own; `A-A` one size.
#[test]
fn bsrange_draws_fios_law_over_the_multiples_of_its_minimum() {
    let shares = |o: &OpSpec| -> Vec<(u64, f64)> {
        let Some(SizeDistSpec::Split { split }) = &o.size else { panic!("not a split: {o:?}") };
        let total: u32 = split.iter().map(|e| e.weight).sum();
        split.iter().map(|e| (e.size.0, f64::from(e.weight) / f64::from(total))).collect()
    };
    let (t, _) = one("[a]\nsize=1m\nrw=randrw\nbsrange=4k-16k,4k-10k\n");
    assert_eq!(shares(op(&t, 0, 0)), [(4096, 0.25), (8192, 0.25), (12288, 0.25), (16384, 0.25)]);
    assert_eq!(shares(op(&t, 0, 1)), [(4096, 0.4), (8192, 0.4), (10240, 0.2)]);
    assert_eq!(op(&t, 0, 0).align.map(|b| b.0), Some(4096), "aligned to the minimum");
    let (t, _) = one("[a]\nsize=1m\nbsrange=8k-8k\n");
    assert_eq!(fixed(op(&t, 0, 0)), 8192);
}

/// `percentile_list`: fio's syntax (`:`-separated, sorted, a 0 ends it, up to 20), to the job's
/// report; refused out of range, and with clones reported one by one.
#[test]
fn percentile_list_reaches_the_report_sorted_and_is_refused_where_fsbench_cannot() {
    let list =
        |text: &str| tr(text).unwrap_or_else(|e| panic!("{e}")).jobs[0].percentile_list.clone();
    assert_eq!(list("[j]\nsize=1m\n"), None);
    assert_eq!(list("[j]\nsize=1m\npercentile_list=99.9:50:90\n"), Some(vec![50.0, 90.0, 99.9]));
    assert_eq!(list("[j]\nsize=1m\npercentile_list=50:0:99\n"), Some(vec![50.0]));
    assert_eq!(
        list("[j]\nsize=1m\nnumjobs=2\ngroup_reporting\npercentile_list=50\n"),
        Some(vec![50.0])
    );
    for (text, why) in [
        ("[j]\nsize=1m\npercentile_list=101\n", "between 0 and 100"),
        ("[j]\nsize=1m\npercentile_list=a\n", "not a number"),
        ("[j]\nsize=1m\nnumjobs=2\npercentile_list=50\n", "group_reporting"),
    ] {
        let e = err(text);
        assert!(e.contains("`percentile_list`") && e.contains(why), "{text}: {e}");
    }
}

/// `openfiles` and `file_service_type` are checked as fio reads them (no effect on one file).
#[test]
fn one_file_options_are_checked() {
    assert!(err("[j]\nsize=1m\nopenfiles=0\n").contains("t.fio:3"));
    let e = err("[j]\nsize=1m\nfile_service_type=best\n");
    assert!(e.contains("t.fio:3") && e.contains("roundrobin"), "{e}");
    let (t, _) = one("[j]\nsize=1m\nfile_service_type=roundrobin\nopenfiles=1\n");
    assert!(!t.notes.iter().any(|n| n.contains("[differs from fio")), "{:?}", t.notes);
}
