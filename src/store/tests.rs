use super::write::ConfigStart;
use super::*;
use crate::model::job::{CacheReq, OpKind};
use crate::model::latency::OpHistograms;
use crate::model::result::*;
use crate::model::run::{RunKind, RunStatus};

fn rep(mib: f64) -> RepResult {
    let mut h = OpHistograms::default();
    for v in 1..1000u64 {
        h.record(OpKind::Write, v * 1000);
    }
    RepResult {
        complete: true,
        wall_nanos: 1_000_000_000,
        bytes: (mib * 1048576.0) as u64,
        data_ops: 999,
        mib_per_s: mib,
        ops_per_s: 999.0,
        cpu_user_nanos: 1_000,
        cpu_sys_nanos: 2_000,
        cpu_pct_per_thread: 1.5,
        latency: h.summaries(),
        phases: vec![PhaseResult {
            name: "w".into(),
            timed: true,
            threads: 1,
            wall_nanos: 1_000_000_000,
            bytes_read: 0,
            bytes_written: (mib * 1048576.0) as u64,
            data_ops: 999,
            cpu_user_nanos: 1_000,
            cpu_sys_nanos: 2_000,
            latency: h.summaries(),
            cache: CacheCheck {
                required: CacheReq::Any,
                resident_fraction: 0.0,
                method: "none".into(),
                met: true,
            },
            device: Some(DeviceDelta {
                devices: vec!["vdb".into()],
                write_bytes: 42,
                ..Default::default()
            }),
            sync_nanos: 0,
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn test_result(id: &str, mibs: &[f64]) -> TestResult {
    let mut t = TestResult {
        id: id.into(),
        name: format!("name-{id}"),
        description: "desc".into(),
        threads: 1,
        status: TestStatus::Ok,
        reps: mibs.iter().map(|m| rep(*m)).collect(),
        complete_reps: mibs.len() as u32,
        summary: None,
        figure: Figure::MibPerS,
        warnings: vec![Warning::Note { text: "a note".into() }],
    };
    t.finalize();
    t
}

fn test_def(id: &str) -> crate::model::job::TestDef {
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Quick,
        free_memory: 1 << 30,
    };
    let src = crate::workload::SuiteSource::Embedded("unit14".into());
    let mut s = crate::workload::load(&src, &ctx).expect("embedded suite");
    let mut t = s.tests.remove(0);
    t.id = id.into();
    t.name = format!("name-{id}");
    t
}

fn meta() -> RunMeta {
    RunMeta {
        kind: RunKind::Run,
        started_unix_s: 1_700_000_000,
        suite: "mine".into(),
        scale: "paper".into(),
        repeat: 3,
        host: crate::model::host::HostInfo { hostname: "h".into(), ..Default::default() },
        command_line: "fsbench run".into(),
        options: RunOptions::default(),
    }
}

fn config() -> ConfigStart {
    ConfigStart {
        label: "/mnt/x".into(),
        env: None,
        target: TargetInfo { label: "/mnt/x".into(), fs_type: "ext4".into(), ..Default::default() },
    }
}

#[test]
fn new_database_is_migrated_to_the_latest_version_in_wal_mode() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("sub/dir/results.sqlite");
    let s = Store::open(&p).unwrap();
    assert_eq!(s.version().unwrap(), schema::latest_version());
    let mode: String = s.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    drop(s);
    // Opening again is a no-op migration.
    let s = Store::open(&p).unwrap();
    assert_eq!(s.version().unwrap(), schema::latest_version());
    assert!(s.history(&HistoryFilter::default()).unwrap().is_empty());
}

#[test]
fn run_report_round_trips() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.sqlite");
    let defs = vec![test_def("1"), test_def("2"), test_def("3")];
    let mut rec = Store::open(&p).unwrap().begin(&meta(), &[config()], &defs).unwrap();
    let t1 = test_result("1", &[100.0, 110.0, 105.0]);
    rec.record_test(0, 0, &t1).unwrap();
    // A later call with more repetitions appends only the new ones.
    let mut t2 = test_result("2", &[50.0]);
    rec.record_test(0, 1, &t2).unwrap();
    t2.merge(test_result("2", &[52.0]));
    rec.record_test(0, 1, &t2).unwrap();
    let id = rec.run_id();
    drop(rec);

    // Before finish: the unreached test reads as skipped, the run as unfinished.
    let s = Store::open_read_only(&p).unwrap();
    let r = s.load(id).unwrap();
    assert!(r.unfinished());
    assert!(
        matches!(&r.configs[0].tests[2].status, TestStatus::Skipped { reason } if reason.contains("killed"))
    );
    let h = s.history(&HistoryFilter::default()).unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!((h[0].tests_done, h[0].tests_total), (2, 3));

    let r = r.run_report(0).unwrap();
    let a = serde_json::to_value(&t1).unwrap();
    let b = serde_json::to_value(&r.tests[0]).unwrap();
    assert_eq!(a, b, "a test comes back exactly, histograms included");
    assert_eq!(r.tests[1].reps.len(), 2);
    assert_eq!(r.target.fs_type, "ext4");
    let hist = &r.tests[0].reps[0].latency[0].histogram_b64;
    assert_eq!(crate::stats::latency::decode(hist).unwrap().len(), 999);
}

#[test]
fn the_time_split_is_stored_and_shown_again() {
    use crate::model::time::{TimeSplit, Untimed};
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("t.sqlite");
    let mut rec = Store::open(&p).unwrap().begin(&meta(), &[config()], &[test_def("1")]).unwrap();
    let mut t = test_result("1", &[100.0, 110.0]);
    for r in &mut t.reps {
        r.untimed = Some(Untimed { layout_nanos: 2_000_000_000, ..Default::default() });
    }
    rec.record_test(0, 0, &t).unwrap();
    let id = rec.run_id();
    // Before the command stored its split, a report has the repetitions' own.
    let s = Store::open_read_only(&p).unwrap();
    let from_reps = s.load(id).unwrap().report().time.unwrap();
    assert!((from_reps.layout_s - 4.0).abs() < 1e-9, "{from_reps:?}");
    assert_eq!(s.load(id).unwrap().time, None);
    let split = TimeSplit { total_s: 30.0, timed_s: 20.0, testbed_s: 3.0, ..from_reps };
    rec.record_time(&split).unwrap();
    rec.finish(&[(&config(), std::slice::from_ref(&t))], RunStatus::Ok, 1_700_000_100).unwrap();
    let r = s.load(id).unwrap();
    assert_eq!(r.time.as_ref(), Some(&split));
    // `show` prints it as the run did: on the report and on the run's own part (its JSON).
    assert_eq!(r.report().time.as_ref(), Some(&split));
    assert_eq!(r.run_report(0).unwrap().time.as_ref(), Some(&split));
}

/// `--repeat auto` is recorded at its least (5) when the run begins; what the run did is stored
/// at the end: the most repetitions any test got, never fewer than asked.
#[test]
fn finish_records_the_repetitions_repeat_auto_gave() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.sqlite");
    let defs = vec![test_def("1"), test_def("2")];
    let c = config();
    for (asked, reps, stored) in [(5, [6, 8], 8), (5, [2, 1], 5)] {
        let mut m = meta();
        m.repeat = asked;
        let mut rec = Store::open(&p).unwrap().begin(&m, std::slice::from_ref(&c), &defs).unwrap();
        let t = [test_result("1", &vec![1.0; reps[0]]), test_result("2", &vec![1.0; reps[1]])];
        rec.finish(&[(&c, &t)], RunStatus::Ok, 1_700_000_100).unwrap();
        let id = rec.run_id();
        drop(rec);
        let s = Store::open_read_only(&p).unwrap();
        let h = s.history(&HistoryFilter::default()).unwrap();
        assert_eq!(h[0].repeat, stored, "{reps:?}");
        assert_eq!(s.load(id).unwrap().repeat, stored);
    }
}

#[test]
fn finish_sets_status_and_history_filters() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.sqlite");
    let defs = vec![test_def("1")];
    for (suite, label) in [("a", "/mnt/one"), ("b", "/mnt/two")] {
        let mut m = meta();
        m.suite = suite.into();
        let mut c = config();
        c.label = label.into();
        let mut rec = Store::open(&p).unwrap().begin(&m, &[c.clone()], &defs).unwrap();
        let t = [test_result("1", &[1.0])];
        rec.finish(&[(&c, &t)], RunStatus::Ok, 1_700_000_100).unwrap();
    }
    let s = Store::open_read_only(&p).unwrap();
    let all = s.history(&HistoryFilter::default()).unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[0].id > all[1].id, "newest first");
    assert_eq!(all[0].status_text(), "ok");
    let only = s.history(&HistoryFilter { suite: Some("a".into()), ..Default::default() }).unwrap();
    assert_eq!(only.len(), 1);
    let lab =
        s.history(&HistoryFilter { label: Some("two".into()), ..Default::default() }).unwrap();
    assert_eq!(lab[0].labels, vec!["/mnt/two".to_string()]);
    let lim = s.history(&HistoryFilter { limit: Some(1), ..Default::default() }).unwrap();
    assert_eq!(lim.len(), 1);
    assert!(matches!(s.load(999), Err(StoreError::UnknownRun { id: 999, .. })));
}

#[test]
fn newer_schema_is_refused_and_nothing_is_written() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.sqlite");
    drop(Store::open(&p).unwrap());
    {
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch(&format!("PRAGMA user_version = {};", schema::latest_version() + 1))
            .unwrap();
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;").unwrap();
    }
    let before = std::fs::read(&p).unwrap();
    let e = Store::open(&p).err().expect("refused");
    assert!(matches!(e, StoreError::Newer { .. }), "{e}");
    assert!(e.to_string().contains("newer fsbench"), "{e}");
    assert!(Store::open_read_only(&p).is_err());
    assert_eq!(std::fs::read(&p).unwrap(), before, "file untouched");
}

#[test]
fn non_sqlite_and_corrupt_files_are_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("notes.txt");
    std::fs::write(&p, "these are my notes, not a database\n".repeat(50)).unwrap();
    let e = Store::open(&p).err().expect("refused");
    assert!(matches!(e, StoreError::NotSqlite { .. }), "{e}");
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "these are my notes, not a database\n".repeat(50)
    );

    // A real database with its pages overwritten after the header.
    let q = d.path().join("broken.sqlite");
    {
        let s = Store::open(&q).unwrap();
        let mut rec = s.begin(&meta(), &[config()], &[test_def("1")]).unwrap();
        rec.record_test(0, 0, &test_result("1", &[1.0, 2.0, 3.0])).unwrap();
        rec.store
            .conn
            .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;")
            .unwrap();
    }
    let mut bytes = std::fs::read(&q).unwrap();
    assert!(bytes.len() > 8192);
    for b in &mut bytes[4096..8192] {
        *b = 0xa5;
    }
    std::fs::write(&q, &bytes).unwrap();
    let e = Store::open(&q).err().expect("refused");
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    assert_eq!(std::fs::read(&q).unwrap(), bytes, "file untouched");
    assert!(!d.path().join("broken.sqlite-wal").exists(), "no WAL file created");

    // Someone else's SQLite database.
    let o = d.path().join("other.sqlite");
    rusqlite::Connection::open(&o).unwrap().execute_batch("CREATE TABLE t (x);").unwrap();
    let before = std::fs::read(&o).unwrap();
    assert!(matches!(Store::open(&o), Err(StoreError::Foreign { .. })));
    assert_eq!(std::fs::read(&o).unwrap(), before);
}

#[test]
fn default_path_follows_xdg() {
    // Only checks the shape: the environment is shared by every test thread.
    if let Ok(p) = default_path() {
        assert!(p.ends_with("fsbench/results.sqlite"), "{}", p.display());
    }
}

#[test]
fn concurrent_first_opens_migrate_once() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.sqlite");
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let p = p.clone();
            std::thread::spawn(move || Store::open(&p).map(|s| s.version().unwrap()))
        })
        .collect();
    for h in handles {
        let v = h.join().unwrap().expect("every concurrent open succeeds");
        assert_eq!(v, schema::latest_version());
    }
}

/// A database written by fsbench 0.1 (schema 1, result model 1): `run --suite unit14 --test 1`
/// and `run --suite postmark` with 2 repetitions each, and `compare a b --suite postmark`, all on
/// directories at `--scale quick`. Made by the 0.1 binary (commit d5d48f3) with:
/// `fsbench run --dir a --suite unit14 --test 1 --scale quick --repeat 2 --db fx.sqlite`, ...
const V01_DB: &[u8] = include_bytes!("../../tests/fixtures/results-v0.1.sqlite");

fn v01_copy(d: &tempfile::TempDir) -> std::path::PathBuf {
    let p = d.path().join("v01.sqlite");
    std::fs::write(&p, V01_DB).unwrap();
    p
}

fn check_v01(s: &Store) {
    // Run 1: a data test, ranked on MiB/s; its summary is rebuilt from the stored repetitions.
    let r1 = s.load(1).unwrap();
    assert_eq!(r1.kind, RunKind::Run);
    // Stored before the time split was measured: none, in the record and the report.
    assert_eq!(r1.time, None);
    assert_eq!(r1.report().time, None);
    let t = &r1.configs[0].tests[0];
    assert_eq!((t.id.as_str(), t.figure, t.complete_reps), ("1", Figure::MibPerS, 2));
    let mibs: Vec<f64> = t.reps.iter().map(|r| r.mib_per_s).collect();
    let sm = t.summary.as_ref().unwrap();
    assert_eq!(sm.n, 2);
    assert!((sm.mib_per_s.median - (mibs[0] + mibs[1]) / 2.0).abs() < 1e-9, "{sm:?} {mibs:?}");
    assert_eq!(t.median(), Some(sm.mib_per_s.median));
    assert!(sm.elapsed_s.median > 0.0);
    // Run 2: postmark, a file-set test: 0.1 ranked it on ops/s (and showed MiB/s); now ops/s
    // is its figure everywhere.
    let r2 = s.load(2).unwrap();
    let t = &r2.configs[0].tests[0];
    assert_eq!((t.id.as_str(), t.figure), ("postmark", Figure::OpsPerS));
    assert!(t.reps.iter().all(|r| r.file_ops > 0));
    let ops: Vec<f64> = t.reps.iter().map(|r| r.ops_per_s).collect();
    assert!((t.median().unwrap() - (ops[0] + ops[1]) / 2.0).abs() < 1e-6);
    // 0.1's text warnings: the statistical ones are worded again from the repetitions, none
    // is doubled.
    let texts: Vec<String> = t.warnings.iter().map(|w| w.to_string()).collect();
    let short = texts.iter().filter(|w| w.starts_with("timed phase lasted only")).count();
    assert!(short <= 1, "{texts:?}");
    // Run 3: a comparison of two directories; the verdict is on ops/s.
    let r3 = s.load(3).unwrap();
    assert_eq!(r3.kind, RunKind::Compare);
    let c = r3.report();
    assert_eq!(c.configs.len(), 2);
    assert_eq!(c.tests[0].figure, Figure::OpsPerS);
    assert!(c.tests[0].median(0).unwrap() > 0.0 && c.tests[0].median(1).unwrap() > 0.0);
    assert!(c.tests[0].vs_baseline[1].is_some());
    // Every output renders, for a run and for a comparison.
    use crate::present::{exporter, ExportOptions, Format};
    for report in [r1.report(), r2.report(), c.clone()] {
        for f in [Format::Table, Format::Json, Format::Csv, Format::Bonnie, Format::Html] {
            let out = exporter(f, ExportOptions { details: true, width: Some(100), raw: false })
                .export(&report)
                .unwrap();
            assert!(!out.is_empty(), "{f:?}");
        }
    }
    let table = crate::present::compare::render(&c, true, 100);
    assert!(table.contains("ops/s"), "{table}");
    // diff between 0.1's runs works, on the figure of merit.
    let d = crate::analysis::diff::diff_runs(
        &r2,
        &r3,
        &crate::model::verdict::Rule::default(),
        &Default::default(),
    );
    assert_eq!(d.rows.len(), 1);
    assert_eq!(d.rows[0].figure, Figure::OpsPerS);
    let text =
        crate::present::diff::render(&d, &r2, &r3, &crate::model::verdict::Rule::default(), 100);
    assert!(text.contains("ops/s"), "{text}");
}

#[test]
fn databases_of_fsbench_0_1_read_as_they_are() {
    let d = tempfile::tempdir().unwrap();
    let p = v01_copy(&d);
    let s = Store::open_read_only(&p).unwrap();
    assert_eq!(s.version().unwrap(), 1, "read-only opening does not migrate");
    check_v01(&s);
    assert_eq!(std::fs::read(&p).unwrap(), V01_DB, "reading left the file as it was");
}

#[test]
fn databases_of_fsbench_0_1_migrate_and_take_new_runs() {
    let d = tempfile::tempdir().unwrap();
    let p = v01_copy(&d);
    let s = Store::open(&p).unwrap();
    assert_eq!(s.version().unwrap(), schema::latest_version());
    check_v01(&s);
    // A new run in the migrated database is stored in the new model next to the old ones.
    let mut rec = s.begin(&meta(), &[config()], &[test_def("1")]).unwrap();
    let t = test_result("1", &[100.0, 120.0]);
    rec.record_test(0, 0, &t).unwrap();
    rec.finish(&[(&config(), std::slice::from_ref(&t))], RunStatus::Ok, 1_700_000_100).unwrap();
    let id = rec.run_id();
    drop(rec);
    let s = Store::open_read_only(&p).unwrap();
    let back = &s.load(id).unwrap().configs[0].tests[0];
    assert_eq!(back.summary.as_ref().unwrap().mib_per_s.median, 110.0);
    assert_eq!(back.warnings, t.warnings);
    check_v01(&s);
}

#[test]
fn migration_3_rebuilds_runs_without_losing_rows_and_takes_the_new_kinds() {
    let d = tempfile::tempdir().unwrap();
    let p = v01_copy(&d);
    let s = Store::open(&p).unwrap();
    assert!(schema::latest_version() >= 3);
    // The rebuild of `runs` kept every configuration and repetition that references it.
    check_v01(&s);
    let c = rusqlite::Connection::open(&p).unwrap();
    let orphans: i64 = c
        .query_row(
            "SELECT count(*) FROM configs WHERE run_id NOT IN (SELECT id FROM runs)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
    for kind in ["profile", "integrity"] {
        c.execute(
            "INSERT INTO runs (kind, started_unix_s, status, pid, fsbench_version, suite, scale, repeat, host_json, command_line, options_json)
             VALUES (?1, 1, 'ok', 1, 'x', 's', 'quick', 1, '{}', 'c', '{}')",
            [kind],
        )
        .unwrap();
    }
    assert!(c
        .execute(
            "INSERT INTO runs (kind, started_unix_s, status, pid, fsbench_version, suite, scale, repeat, host_json, command_line, options_json)
             VALUES ('bogus', 1, 'ok', 1, 'x', 's', 'quick', 1, '{}', 'c', '{}')",
            [],
        )
        .is_err());
    // The store turns foreign keys back on after migrating.
    let on: i64 = s.conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0)).unwrap();
    assert_eq!(on, 1);
}

fn a_profile() -> crate::profile::Profile {
    use crate::profile::{files::FileProfile, spawn::Exit, summary::Summary, Profile};
    Profile {
        command: vec!["cat".into(), "/mnt/a b".into()],
        filesystems: Vec::new(),
        cold: None,
        exit: Exit { code: 3, signal: None, stopped_by: None },
        runs_wall_seconds: vec![0.25, 0.5],
        summary: Summary {
            wall_seconds: 0.25,
            exit_code: 3,
            files_opened: 1,
            device_read_bytes: 8192,
            device_read_requests: 2,
            ..Default::default()
        },
        files: vec![FileProfile {
            path: "/mnt/a b".into(),
            kind: "no extension".into(),
            read_syscall_bytes: 1234,
            ..Default::default()
        }],
        requests: Vec::new(),
        touched: Vec::new(),
        notes: vec!["a note".into()],
    }
}

#[test]
fn a_profile_is_a_run_of_kind_profile_in_a_migrated_0_1_database() {
    let d = tempfile::tempdir().unwrap();
    let p = v01_copy(&d);
    // Read-only, 0.1's database has no profiles table: nothing is a profile, nothing fails.
    let s = Store::open_read_only(&p).unwrap();
    assert_eq!(s.load_profile(1).unwrap().map(|p| p.command), None);
    assert_eq!(s.history(&HistoryFilter::default()).unwrap().len(), 3);
    drop(s);
    let mut s = Store::open(&p).unwrap();
    assert_eq!(s.version().unwrap(), schema::latest_version());
    let prof = a_profile();
    let id = s.record_profile(&prof, 1_800_000_000).unwrap();
    drop(s);
    let s = Store::open_read_only(&p).unwrap();
    check_v01(&s);
    let rec = s.load(id).unwrap();
    assert_eq!(rec.kind, RunKind::Profile);
    assert_eq!(rec.status, RunStatus::Failed, "the command exited 3");
    assert_eq!((rec.suite.as_str(), rec.repeat), ("profile", 2));
    assert!(rec.configs.is_empty());
    let back = s.load_profile(id).unwrap().expect("stored profile");
    assert_eq!(back.command, prof.command);
    assert_eq!(back.summary, prof.summary);
    assert_eq!(back.files, prof.files);
    assert_eq!(s.load_profile(1).unwrap().map(|p| p.command), None, "run 1 is no profile");
    let h = s.history(&HistoryFilter::default()).unwrap();
    assert_eq!(h.len(), 4);
    let row = h.iter().find(|r| r.id == id).unwrap();
    assert_eq!((row.kind, row.labels.clone()), (RunKind::Profile, vec!["cat /mnt/a b".into()]));
    assert_eq!((row.tests_done, row.tests_total), (0, 0));
    // The summary columns hold the figures.
    let c = rusqlite::Connection::open(&p).unwrap();
    let (bytes, reqs, exit): (i64, i64, i64) = c
        .query_row(
            "SELECT device_read_bytes, device_read_requests, exit_code FROM profiles WHERE run_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((bytes, reqs, exit), (8192, 2, 3));
    // Deleting the run deletes its profile (foreign key, cascade).
    c.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    c.execute("DELETE FROM runs WHERE id = ?1", [id]).unwrap();
    let left: i64 = c.query_row("SELECT count(*) FROM profiles", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0);
}

/// A database briefly held exclusively by another connection is waited for, not refused, by
/// the recording open and the read-only one alike.
#[test]
fn opening_waits_for_a_database_briefly_held_exclusively() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.sqlite");
    drop(Store::open(&p).unwrap());
    // Held when this returns; released 400 ms later.
    let hold = || {
        let holder = Connection::open(&p).unwrap();
        holder.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE;").unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(400));
            holder.execute_batch("COMMIT;").unwrap();
        })
    };
    for read_only in [true, false] {
        let release = hold();
        let t0 = std::time::Instant::now();
        let opened = if read_only { Store::open_read_only(&p) } else { Store::open(&p) };
        let waited = t0.elapsed();
        release.join().unwrap();
        assert!(opened.is_ok(), "read-only {read_only}: {:?}", opened.err());
        assert!(
            waited >= std::time::Duration::from_millis(300),
            "read-only {read_only}: {waited:?}"
        );
    }
}

/// Concurrent first opens of one database by separate processes failed now and then with
/// "database is locked" (2 of 120 `fsbench run`s, 6 at a time on a new database): a step of the
/// open got `SQLITE_BUSY` without SQLite's busy handler. The open is now retried like a write:
/// busy results are retried, any other error ends at once.
#[test]
fn busy_results_are_retried_and_other_errors_are_not() {
    let p = std::path::Path::new("x.sqlite");
    let busy = || StoreError::Sqlite {
        path: p.into(),
        source: rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        ),
    };
    let mut tries = 0;
    let r = patiently(p, || {
        tries += 1;
        if tries < 3 {
            Err(busy())
        } else {
            Ok(tries)
        }
    });
    assert_eq!(r.unwrap(), 3);
    let mut tries = 0;
    let r: Result<()> = patiently(p, || {
        tries += 1;
        Err(StoreError::Missing { path: p.into() })
    });
    assert!(matches!(r, Err(StoreError::Missing { .. })));
    assert_eq!(tries, 1, "a non-busy error is not retried");
}

#[test]
fn a_curve_is_stored_and_loads_back() {
    use crate::model::curve::{CurveStep, PhaseCurve};
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("c.sqlite");
    let defs = vec![test_def("1")];
    let mut rec = Store::open(&p).unwrap().begin(&meta(), &[config()], &defs).unwrap();
    let mut t = test_result("1", &[100.0]);
    let step = |percent: f64, p99: u64| CurveStep {
        percent,
        asked_ops_per_s: percent * 10.0,
        achieved_ops_per_s: percent * 9.9,
        p99_nanos: p99,
        ..CurveStep::default()
    };
    let curve = PhaseCurve::of((1000.0, 5000), 3.0, vec![step(50.0, 100), step(100.0, 900)], false);
    t.reps[0].phases[0].curve = Some(curve.clone());
    rec.record_test(0, 0, &t).unwrap();
    let id = rec.run_id();
    drop(rec);
    let s = Store::open_read_only(&p).unwrap();
    let back = s.load(id).unwrap();
    assert_eq!(back.configs[0].tests[0].reps[0].phases[0].curve.as_ref(), Some(&curve));
    assert_eq!(curve.knee, Some(0), "900 ns is over 3 × 100 ns: the knee is the 50% step");
}

/// `diff`'s other runs of a test: the same configuration label, test id and definition, a
/// completed test, newest first; another label, another definition or the run itself are not.
#[test]
fn same_test_runs_match_label_id_and_definition() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("r.sqlite");
    let mut other_def = test_def("1");
    other_def.description = "another definition".into();
    let other_label = ConfigStart { label: "/mnt/y".into(), ..config() };
    let runs: [(&ConfigStart, crate::model::job::TestDef); 5] = [
        (&config(), test_def("1")),
        (&config(), test_def("1")),
        (&other_label, test_def("1")),
        (&config(), other_def),
        (&config(), test_def("1")),
    ];
    for (c, def) in &runs {
        let mut rec = Store::open(&p)
            .unwrap()
            .begin(&meta(), std::slice::from_ref(*c), std::slice::from_ref(def))
            .unwrap();
        let t = [test_result("1", &[1.0, 1.1])];
        rec.finish(&[(*c, &t)], RunStatus::Ok, 1_700_000_100).unwrap();
    }
    let s = Store::open_read_only(&p).unwrap();
    assert_eq!(s.same_test_runs(1, "/mnt/x", "1", 10).unwrap(), vec![5, 2]);
    assert_eq!(s.same_test_runs(1, "/mnt/x", "1", 1).unwrap(), vec![5]);
    assert_eq!(s.same_test_runs(3, "/mnt/y", "1", 10).unwrap(), Vec::<i64>::new());
    assert_eq!(s.same_test_runs(1, "/mnt/x", "2", 10).unwrap(), Vec::<i64>::new());
}
