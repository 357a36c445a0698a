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

fn one(text: &str) -> (TestSpec, Vec<String>) {
    let t = tr(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.spec.tests.len(), 1);
    (t.spec.tests[0].clone(), t.notes)
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
    assert!(parse_size("10%").unwrap_err().contains("percentages"));
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
    assert!(notes.iter().any(|n| n.contains("fallocate")), "{notes:?}");

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
    assert_eq!(
        (t.iodepth_batch, t.iodepth_batch_complete, t.sqpoll, t.iopoll),
        (Some(8), Some(4), Some(true), Some(true))
    );
    let (t, notes) = one("[a]\nioengine=libaio\niodepth=1\nsize=1m\n");
    assert_eq!((t.engine.as_deref(), t.iodepth), (Some("io_uring"), None));
    assert!(notes.iter().any(|n| n.contains("libaio runs as io_uring")), "{notes:?}");
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
    let e = err("[global]\nsize=1m\n\n[job]\nrw=read\nexitall\n");
    assert!(e.starts_with("t.fio:6: fio option `exitall` is not supported"), "{e}");
    assert!(e.contains("supported: name,"), "{e}");
    let e = err("[job]\nsize=1m\nloops=3\n");
    assert!(e.starts_with("t.fio:3:") && e.contains("`loops`"), "{e}");
}

#[test]
fn combinations_fsbench_cannot_express_are_refused() {
    let cases: &[(&str, &str, &str)] = &[
        ("[a]\nsize=1m\n[b]\nsize=1m\n", "t.fio:3: `[b]`", "stonewall"),
        (
            "[a]\nsize=1m\nrw=randread\nbssplit=4k/50:64k/50\n",
            "t.fio:4: `bssplit`",
            "several block sizes",
        ),
        ("[a]\nsize=1m\nbsrange=4k-16k\n", "t.fio:3: `bsrange`", "multiples of the minimum"),
        ("[a]\nsize=1m\nbs=4k\nbsrange=4k-4k\n", "t.fio:4: `bsrange`", "one of bs"),
        ("[a]\nsize=1m\nrw=rw\n", "t.fio:3: `rw`", "randrw"),
        ("[a]\nsize=1m\nrw=randread:8\n", "t.fio:3: `rw`", ":N"),
        ("[a]\nsize=1m\nrw=trim\n", "t.fio:3: `rw`", "not supported"),
        ("[a]\nsize=1m\nruntime=10\n", "t.fio:3: `runtime`", "time_based=1"),
        ("[a]\nsize=1m\ntime_based\n", "t.fio:3: `time_based`", "runtime"),
        ("[a]\nsize=1m\niodepth=16\n", "t.fio:3: `iodepth`", "io_uring"),
        ("[a]\nsize=1m\nnrfiles=4\n", "t.fio:3: `nrfiles`", "nrfiles=1"),
        ("[a]\nsize=1m\noffset=4k\n", "t.fio:3: `offset`", "offset 0"),
        (
            "[a]\nsize=1m\nfilename=/dev/sda\n",
            "t.fio:3: `filename`",
            "never opens a path or device",
        ),
        ("[a]\nsize=1m\nfilename=f\nnumjobs=4\n", "t.fio:3: `filename`", "whole file"),
        ("[a]\nsize=1m\nverify=md5\n", "t.fio:3: `verify`", "does not verify"),
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
