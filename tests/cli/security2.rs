//! Issue "Safe as root, round two: fsbench touches nothing it did not make": each case of the
//! reliability probe, against stand-ins (files, directories and loop devices this test makes
//! in its own directory), with `nobody` (through `setpriv`) as the attacker where there is one.

use crate::security::{as_nobody, fsbench_in, intact, s, skip_unless_root_and_setpriv, victim};
use crate::util::{have, is_root, skip, skip_testbeds, stderr, TestDir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device over an image file of the test's own, with a marker at the start and at
/// 64 KiB (where btrfs, xfs and ext4 put their superblocks); detached on drop.
struct StandInDevice {
    dev: String,
    img: PathBuf,
}

const MARK: &[u8] = b"stand-in device: must stay as it is";

impl StandInDevice {
    fn new(dir: &Path) -> StandInDevice {
        let img = dir.join("standin.img");
        let mut bytes = vec![0u8; 320 << 20];
        for off in [0usize, 1024, 64 << 10] {
            bytes[off..off + MARK.len()].copy_from_slice(MARK);
        }
        std::fs::write(&img, &bytes).unwrap();
        let o = Command::new("losetup").args(["--find", "--show", s(&img)]).output().unwrap();
        assert!(o.status.success(), "losetup: {}", stderr(&o));
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert!(dev.starts_with("/dev/loop"), "{dev}");
        StandInDevice { dev, img }
    }

    fn intact(&self) {
        let _ = Command::new("blockdev").args(["--flushbufs", &self.dev]).status();
        let bytes = std::fs::read(&self.img).unwrap();
        for off in [0usize, 1024, 64 << 10] {
            assert_eq!(&bytes[off..off + MARK.len()], MARK, "the stand-in changed at {off}");
        }
    }
}

impl Drop for StandInDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// Item 1: `mkfs=`, `mount=` and zfs options that name a device or path are refused when the
/// configuration is parsed (exit 2), before anything is made; the stand-in is untouched.
#[test]
fn mkfs_and_mount_options_naming_a_device_are_refused_before_anything() {
    if skip_testbeds(&["mkfs.btrfs", "mkfs.xfs", "mkfs.ext4"]) {
        return;
    }
    let t = TestDir::new();
    let standin = StandInDevice::new(t.path());
    let work = TestDir::new();
    let state = t.path().join("state");
    let d = standin.dev.as_str();
    for fs in [
        format!("btrfs:mkfs={d}"),
        format!("xfs:mkfs=-l logdev={d},size=64m"),
        format!("xfs:mkfs=-r rtdev={d}"),
        format!("ext4:mkfs=-J device={d}"),
        format!("ext4:mkfs=-b 4096 {d}"),
        format!("ext4:mount=journal_path={d}"),
        format!("xfs:mount=logdev={d}"),
        format!("zfs:compression={d}"),
    ] {
        let o = fsbench_in(
            &state,
            &["run", "--fs", &fs, "--test", "1", "--scale", "1/16", "--workdir", s(work.path())],
        );
        assert_eq!(o.status.code(), Some(2), "{fs}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("remove or change it"), "{fs}: {e}");
        standin.intact();
        assert!(work.entries().is_empty(), "{fs}: {:?}", work.entries());
    }
    // What users pass still works (the allow-list is not a deny-all).
    let o = fsbench_in(
        &state,
        &[
            "run",
            "--fs",
            "ext4:mkfs=-b 4096 -m 0:mount=data=writeback,noatime",
            "--test",
            "10",
            "--scale",
            "1/64",
            "--no-store",
            "--workdir",
            s(work.path()),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    standin.intact();
}

#[allow(dead_code)]
fn unused(_: &Path) {
    let _ = (as_nobody, intact, victim, skip_unless_root_and_setpriv, have, is_root, skip);
}

/// Item 7: an index that lost a row (`quick_check` says ok, `integrity_check` does not) is
/// found before anything is written, and the database is left as it was (exit 2).
#[test]
fn a_database_with_a_damaged_index_is_refused_untouched() {
    let t = TestDir::new();
    let db = t.path().join("db.sqlite");
    let dir = TestDir::new();
    let run = || {
        crate::util::fsbench(&[
            "run",
            "--dir",
            s(dir.path()),
            "--test",
            "10",
            "--scale",
            "1/64",
            "--db",
            s(&db),
        ])
    };
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    {
        // Hide the index from SQLite, change the indexed column, show the index again: the
        // index keeps the old value, so the row is missing from it.
        let c = rusqlite::Connection::open(&db).unwrap();
        let (root, sql): (i64, String) = c
            .query_row(
                "SELECT rootpage, sql FROM sqlite_master WHERE name = 'runs_started'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        c.execute_batch(
            "PRAGMA writable_schema = ON; DELETE FROM sqlite_master WHERE name = 'runs_started';",
        )
        .unwrap();
        drop(c);
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute("UPDATE runs SET started_unix_s = started_unix_s + 12345", []).unwrap();
        c.execute_batch("PRAGMA writable_schema = ON;").unwrap();
        c.execute(
            "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES ('index', 'runs_started', 'runs', ?1, ?2)",
            rusqlite::params![root, sql],
        )
        .unwrap();
        drop(c);
        let c = rusqlite::Connection::open(&db).unwrap();
        let q: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0)).unwrap();
        assert_eq!(q, "ok", "the damage must be one quick_check misses");
        let i: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert!(i.contains("missing from index runs_started"), "{i}");
        c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("is damaged") && e.contains("missing from index runs_started"), "{e}");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database was written to");
}

/// Item 2: profile JSON/HTML/preload lists, SVG directories and the database are written the
/// way reports are: a link `nobody` planted (dangling or not, as the file or as a directory on
/// the way) is never written through, and nothing appears where it points.
#[test]
fn planted_links_for_profile_outputs_svg_dirs_and_the_database_are_not_followed() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    let t = TestDir::new();
    let state = t.path().join("state");
    let pub_dir = crate::security::world_dir(t.path(), "pub", 0o1777);
    let root_only = t.path().join("root-only");
    std::fs::create_dir(&root_only).unwrap();
    let precious = victim(&t.path().join("root-0644"));
    std::fs::set_permissions(&precious, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .unwrap();
    as_nobody(&format!(
        "mkdir {p}/x && ln -s {v} {p}/x/p.json && ln -s {r}/made.html {p}/x/p.html \
         && ln -s {v} {p}/x/p.list && ln -s {r} {p}/x/svgs && ln -s {r}/made.sqlite {p}/x/db.sqlite \
         && ln -s {r} {p}/x/dbdir",
        p = s(&pub_dir),
        v = s(&precious),
        r = s(&root_only),
    ));
    let x = pub_dir.join("x");
    // A database to report from, in a safe place.
    let dir = TestDir::new();
    let good_db = t.path().join("good.sqlite");
    let run = |db: &Path| {
        fsbench_in(
            &state,
            &["run", "--dir", s(dir.path()), "--test", "10", "--scale", "1/64", "--db", s(db)],
        )
    };
    let o = run(&good_db);
    assert!(o.status.success(), "{}", stderr(&o));
    // --svg-dir through a link of nobody's: refused, nothing written there.
    let o = fsbench_in(
        &state,
        &[
            "report",
            "1",
            "--db",
            s(&good_db),
            "-o",
            s(&t.path().join("r.html")),
            "--svg-dir",
            s(&x.join("svgs")),
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link of uid"), "{}", stderr(&o));
    // --db as a dangling link, and in a linked directory: refused, nothing created.
    let o = run(&x.join("db.sqlite"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(&x.join("dbdir/new.sqlite"));
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    // profile's outputs (needs tracefs: skipped with the reason when it cannot trace).
    let o = fsbench_in(
        &state,
        &[
            "profile",
            "--no-store",
            "--json",
            s(&x.join("p.json")),
            "--html",
            s(&x.join("p.html")),
            "--preload-list",
            s(&x.join("p.list")),
            "--",
            "true",
        ],
    );
    if o.status.success() {
        // The links were replaced by root's files (rename), never written through.
        for f in ["p.json", "p.html", "p.list"] {
            let m = x.join(f).symlink_metadata().unwrap();
            assert!(m.file_type().is_file(), "{f} is still a link");
        }
    } else {
        eprintln!("note: profile could not run here: {}", stderr(&o));
    }
    std::fs::set_permissions(&precious, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .unwrap();
    intact(&precious);
    let left: Vec<_> = std::fs::read_dir(&root_only).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "written into the root-only directory: {left:?}");
}

const ABSOLUTE_SET: &str = r#"
[[test]]
id = "md"
name = "md-absolute"
threads = 1
fileset = { tree = { depth = 1, fanout = 2, files_per_dir = 20 }, size = "0", paths = "absolute" }

[[test.phase]]
name = "create"
pattern = [{ op = "create" }]
amount = { passes = 1 }

[[test.phase]]
name = "remove"
pattern = [{ op = "unlink" }]
amount = { passes = 1 }
"#;

/// Item 3: with `--dir` in a directory of `nobody`'s, `paths = "absolute"` file sets would name
/// files through a path nobody may rename parts of: refused, and what nobody swaps in (a link
/// to root's directory) is never created in or deleted from.
#[test]
fn absolute_file_sets_in_another_users_directory_are_refused() {
    if skip_unless_root_and_setpriv() {
        return;
    }
    let t = TestDir::new();
    let state = t.path().join("state");
    let roots = t.path().join("roots-dir");
    std::fs::create_dir(&roots).unwrap();
    let keep = victim(&roots.join("keep"));
    let home = t.path().join("nobodys");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    let wl = t.write("md.toml", ABSOLUTE_SET);
    let mut attacker = crate::security::nobody_cmd(&format!(
        "cd {d} || exit 1; while :; do for w in .fsbench-*; do if [ -d \"$w\" ] && [ ! -L \"$w\" ]; then mv \"$w\" \"moved$w$$\" 2>/dev/null && ln -s {r} \"$w\"; fi; done; done",
        d = s(&home),
        r = s(&roots)
    ))
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let o = fsbench_in(&state, &["run", "--dir", s(&home), "--workload", s(&wl), "--no-store"]);
    attacker.kill().unwrap(); // by pid: setpriv execs sh
    attacker.wait().unwrap();
    intact(&keep);
    assert_eq!(std::fs::read_dir(&roots).unwrap().count(), 1, "nothing added or removed");
    let all = format!("{}{}", stderr(&o), crate::util::stdout(&o));
    assert!(!o.status.success(), "{all}");
    assert!(all.contains("belongs to uid 65534"), "{all}");
}

/// `args` exits 2 with every needle in stderr, within `secs` seconds (a FIFO must not hang it).
fn expect_2(args: &[&str], needles: &[&str]) {
    let mut c = crate::util::command();
    c.args(args).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    crate::util::wait_within(&mut child, std::time::Duration::from_secs(60), &args.join(" "));
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    for n in needles {
        assert!(e.contains(n), "{args:?}: stderr should mention {n:?}:\n{e}");
    }
}

/// Item 6: input that got through (an overflow, a panic, exit 1 for bad input) is exit 2 with
/// a message, before any I/O.
#[test]
fn bad_input_that_got_through_is_exit_2() {
    let t = TestDir::new();
    let dir = TestDir::new();
    let d = s(dir.path());
    let w = |name: &str, text: &str| t.write(name, text);
    let per_thread = w(
        "big.toml",
        "[[test]]\nid = \"big\"\nname = \"big\"\nthreads = 4\nfile = { size = \"4E\", shared = false }\n[[test.phase]]\nname = \"w\"\npattern = [{ op = \"write\", size = \"1M\" }]\namount = { passes = 1 }\n",
    );
    expect_2(&["run", "--dir", d, "--no-store", "--workload", s(&per_thread)], &["needs"]);
    let neg = w(
        "neg.toml",
        "[[test]]\nid = \"neg\"\nname = \"neg\"\nfile = { size = -1 }\n[[test.phase]]\nname = \"w\"\npattern = [{ op = \"write\", size = \"1M\" }]\namount = { passes = 1 }\n",
    );
    expect_2(
        &["run", "--dir", d, "--no-store", "--workload", s(&neg)],
        &["-1: a size cannot be negative"],
    );
    for (name, job, needle) in [
        ("big.fio", "[j]\nrw=write\nsize=16p\nnumjobs=1024\nbs=1m\n", "--allow-long"),
        ("long.fio", "[j]\nrw=randread\nsize=4m\nruntime=2d\ntime_based\n", "--allow-long"),
        (
            "ramp.fio",
            "[j]\nrw=randread\nsize=4m\nramp_time=99999999999\nruntime=10\ntime_based\n",
            "--allow-long",
        ),
    ] {
        let f = w(name, job);
        expect_2(&["run", "--dir", d, "--no-store", "--fio", s(&f)], &[needle]);
    }
    for budget in [
        &["--time-budget", "1e30s"][..],
        &["--repeat", "auto", "--time-budget", "99999999999999999999s"],
    ] {
        let mut a = vec!["run", "--dir", d, "--no-store", "--test", "10"];
        a.extend_from_slice(budget);
        expect_2(&a, &["longer than a year"]);
    }
    expect_2(&["profile", "--no-store", "--duration", "1e30", "--", "true"], &["--duration"]);
    expect_2(&["preload", "/nonexistent.list"], &["/nonexistent.list"]);
    assert!(dir.entries().is_empty(), "{:?}", dir.entries());
}

/// Item 6, the cases that need root (testbeds, integrity, `chattr`).
#[test]
fn bad_testbed_input_is_exit_2_and_leaves_nothing() {
    if skip_testbeds(&["mkfs.ext4", "chattr"]) {
        return;
    }
    let t = TestDir::new();
    let file = t.write("a-file", "x");
    let work = TestDir::new();
    let w = s(work.path());
    expect_2(
        &["run", "--fs", "ext4", "--size", "0", "--test", "10", "--no-store", "--workdir", w],
        &["0 bytes"],
    );
    expect_2(
        &["run", "--fs", "ext4", "--test", "10", "--no-store", "--workdir", s(&file)],
        &["not a directory"],
    );
    expect_2(&["integrity", "ext4", "--size", "100T", "--no-store", "--workdir", w], &["space"]);
    expect_2(&["integrity", "ext4", "--no-store", "--workdir", s(&file)], &["not a directory"]);
    expect_2(&["integrity", "ext4:mkfs=-b size=1", "--no-store", "--workdir", w], &["-b"]);
    // An immutable database: refused before the run, not after it.
    let db = t.path().join("i.sqlite");
    let dir = TestDir::new();
    let o = crate::util::fsbench(&[
        "run",
        "--dir",
        s(dir.path()),
        "--test",
        "10",
        "--scale",
        "1/64",
        "--db",
        s(&db),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Command::new("chattr").arg("+i").arg(&db).status().unwrap().success());
    let o = crate::util::fsbench(&[
        "run",
        "--dir",
        s(dir.path()),
        "--test",
        "10",
        "--scale",
        "1/64",
        "--db",
        s(&db),
    ]);
    let _ = Command::new("chattr").arg("-i").arg(&db).status();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("immutable"), "{}", stderr(&o));
    assert!(work.entries().is_empty(), "{:?}", work.entries());
}

/// Item 5: `--workdir x/nope/deeper` removes the directories it made.
#[test]
fn a_workdir_made_for_a_run_is_removed_with_it() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let t = TestDir::new();
    let deep = t.path().join("x/nope/deeper");
    let o = crate::util::fsbench(&[
        "run",
        "--fs",
        "ext4",
        "--test",
        "10",
        "--scale",
        "1/64",
        "--no-store",
        "--workdir",
        s(&deep),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(t.entries().is_empty(), "left: {:?}", t.entries());
}

/// Item 4: a record written by root into the checked state directory, naming a stand-in loop
/// device, its image, and a non-empty directory (none of them made by fsbench), makes
/// `testbed cleanup` act on nothing: the loop device stays, the files and directories stay.
#[test]
fn a_forged_state_record_makes_cleanup_act_on_nothing_fsbench_did_not_make() {
    use fsbench::state::{Entry, ProcessId, ProcessRecord, Resource, StateDir};
    if skip_testbeds(&[]) {
        return;
    }
    let t = TestDir::new();
    let img_dir = t.path().join("probe-img");
    std::fs::create_dir(&img_dir).unwrap();
    let standin = StandInDevice::new(&img_dir);
    let mnt_dir = t.path().join("probe-mnt/victim");
    std::fs::create_dir_all(&mnt_dir).unwrap();
    let keep = victim(&mnt_dir.join("keep"));
    let state = t.path().join("state");
    let sd = StateDir::new(&state);
    let forged = ProcessRecord {
        kept: None,
        owner: ProcessId { pid: 1, start_ticks: u64::MAX },
        entries: vec![
            Entry { id: 1, resource: Resource::Directory { path: img_dir.clone() } },
            Entry { id: 2, resource: Resource::Directory { path: mnt_dir.clone() } },
            Entry { id: 3, resource: Resource::ImageFile { path: standin.img.clone() } },
            Entry {
                id: 4,
                resource: Resource::LoopDevice {
                    device: Some(standin.dev.clone().into()),
                    backing_file: standin.img.clone(),
                },
            },
        ],
    };
    sd.write_record(&state.join("1.json"), &forged).unwrap();
    let o = fsbench_in(&state, &["testbed", "cleanup"]);
    let out = format!("{}{}", crate::util::stdout(&o), stderr(&o));
    assert!(!out.contains("removed: loop device"), "{out}");
    assert!(!out.contains("removed: directory"), "{out}");
    assert!(!out.contains("FAILED"), "no removal was even tried: {out}");
    let attached = Command::new("losetup").args(["-n", "-O", "BACK-FILE", &standin.dev]).output();
    let back = String::from_utf8_lossy(&attached.unwrap().stdout).trim().to_string();
    assert_eq!(back, s(&standin.img), "the stand-in loop device was detached: {out}");
    standin.intact();
    intact(&keep);
    assert!(img_dir.is_dir() && mnt_dir.is_dir(), "{out}");
}

/// Pids of processes whose command line is exactly `argv`.
fn pids_running(argv: &[&str]) -> Vec<i32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|p| std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == want))
        .collect()
}

/// Item 5: `kill -9` of `fsbench profile` leaves neither the profiled command running (it dies
/// with fsbench) nor what it started in its group nor its tracing instances once
/// `testbed cleanup` ran: all were recorded before they existed.
#[test]
fn kill_9_of_profile_leaves_nothing_running_after_cleanup() {
    if !is_root() {
        skip("needs root (tracefs)");
        return;
    }
    let t = TestDir::new();
    let state = t.path().join("state");
    let token = format!("{}.{}", 3000 + std::process::id() % 1000, std::process::id());
    let (bg, fg) = (format!("{token}1"), format!("{token}2"));
    let script = format!("sleep {bg} & exec sleep {fg}");
    let mut child = crate::util::command()
        .env("FSBENCH_STATE_DIR", &state)
        .args(["profile", "--no-store", "--", "sh", "-c", &script])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while pids_running(&["sleep", &fg]).is_empty() || pids_running(&["sleep", &bg]).is_empty() {
        if let Some(st) = child.try_wait().unwrap() {
            skip(&format!("profile could not run here ({st})"));
            return;
        }
        assert!(t0.elapsed().as_secs() < 60, "the profiled command never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL, by pid: our own child
    child.wait().unwrap();
    // The command itself dies with fsbench (PR_SET_PDEATHSIG).
    let t0 = std::time::Instant::now();
    while !pids_running(&["sleep", &fg]).is_empty() {
        assert!(t0.elapsed().as_secs() < 10, "the profiled command outlived fsbench");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = fsbench_in(&state, &["testbed", "cleanup"]);
    let out = format!("{}{}", crate::util::stdout(&o), stderr(&o));
    let left = pids_running(&["sleep", &bg]);
    // Whatever happens, end what this test started (by pid).
    for p in &left {
        let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    assert!(o.status.success(), "{out}");
    assert!(left.is_empty(), "the command's background process survived cleanup: {out}");
    assert!(out.contains("removed: profiled command"), "{out}");
    assert!(out.contains("tracing instance"), "{out}");
    let records: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert!(records.is_empty(), "{records:?}: {out}");
}
