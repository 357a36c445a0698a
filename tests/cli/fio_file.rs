//! `filename=` with a path: the job's own file, used where it says as fio uses it (created if
//! absent, laid out only if absent or short, kept unless `unlink=1`, shared by the jobs naming
//! it), never through a symlink and never anything but a regular file; and `buffered=`.

use crate::util::*;
use std::path::Path;

/// Run `job` (a fio job file's text) with `run --fio` in the scratch directory `work`: the
/// report and the command's output.
fn run_fio(dir: &TestDir, work: &TestDir, job: &str) -> (serde_json::Value, std::process::Output) {
    let f = dir.write("job.fio", job);
    run_json(&[
        "run",
        "--fio",
        f.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--no-store",
        "--seed",
        "7",
    ])
}

fn bytes_of(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn a_named_file_is_created_where_the_job_says_and_kept_unless_unlink() {
    let (dir, work, user) = (TestDir::new(), TestDir::new(), TestDir::new());
    let data = user.path().join("uring.dat");
    let job = format!("[w]\nrw=write\nbs=64k\nsize=1m\nfilename={}\n", data.display());
    let (v, o) = run_fio(&dir, &work, &job);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["tests"][0]["status"]["state"], "ok", "{}", v["tests"][0]);
    assert_eq!(v["tests"][0]["reps"][0]["bytes"], 1 << 20);
    // Written where the job says, kept afterwards; fsbench's own work directory is gone.
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 1 << 20);
    assert!(bytes_of(&data).iter().any(|b| *b != 0), "the write job wrote the file");
    assert_eq!(work.entries(), Vec::<String>::new(), "fsbench left files in --dir");
    assert_eq!(user.entries(), ["uring.dat"]);

    // A relative path is relative to `directory=`; unlink=1 removes the file after the job.
    let job = format!(
        "[r]\nrw=read\nbs=64k\nsize=1m\ndirectory={}\nfilename=sub/gone.dat\nunlink=1\n",
        user.path().display()
    );
    std::fs::create_dir(user.path().join("sub")).unwrap();
    let (v, o) = run_fio(&dir, &work, &job);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["tests"][0]["reps"][0]["bytes"], 1 << 20, "{}", v["tests"][0]);
    assert!(!user.path().join("sub/gone.dat").exists(), "unlink=1 removes the file");
    assert_eq!(user.entries(), ["sub", "uring.dat"], "only the job's file went");
}

#[test]
fn a_read_job_finds_what_is_there_and_what_a_write_job_wrote() {
    let (dir, work, user) = (TestDir::new(), TestDir::new(), TestDir::new());
    let data = user.path().join("shared.dat");
    // A file already at its size is read as it is (fio lays out only an absent or short file).
    std::fs::write(&data, vec![0xab_u8; 1 << 20]).unwrap();
    let job = format!("[r]\nrw=randread\nbs=4k\nsize=1m\nfilename={}\n", data.display());
    let (v, o) = run_fio(&dir, &work, &job);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["tests"][0]["reps"][0]["bytes"], 1 << 20);
    assert_eq!(v["tests"][0]["reps"][0]["untimed"]["reused_layout"], true, "{}", v["tests"][0]);
    assert!(bytes_of(&data).iter().all(|b| *b == 0xab), "a read job rewrote the user's file");

    // A write job, then a read job on the same file: the read finds what the write wrote (it
    // lays nothing out), and the file ends as the write job alone leaves it.
    let both = format!(
        "[w]\nrw=write\nbs=64k\nsize=1m\nfilename={f}\n[r]\nstonewall\nrw=read\nbs=64k\nsize=1m\nfilename={f}\n",
        f = data.display()
    );
    let (v, o) = run_fio(&dir, &work, &both);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = test_by_id(&v, "r");
    assert_eq!(r["reps"][0]["bytes"], 1 << 20);
    assert_eq!(r["reps"][0]["untimed"]["reused_layout"], true, "{r}");
    let after_both = bytes_of(&data);
    assert!(after_both.iter().any(|b| *b != 0xab), "the write job wrote into the file");
    assert!(!stderr(&o).contains("filename-reuse"), "{}", stderr(&o));
    std::fs::write(&data, vec![0xab_u8; 1 << 20]).unwrap();
    let only_w = format!("[w]\nrw=write\nbs=64k\nsize=1m\nfilename={}\n", data.display());
    let (_, o) = run_fio(&dir, &work, &only_w);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(bytes_of(&data) == after_both, "the read job changed what the write job wrote");
    assert_eq!(work.entries(), Vec::<String>::new());
}

#[test]
fn a_symlink_fifo_or_directory_at_the_path_is_refused_with_its_line() {
    let (dir, work, user) = (TestDir::new(), TestDir::new(), TestDir::new());
    let target = user.path().join("precious");
    std::fs::write(&target, b"keep me").unwrap();
    let link = user.path().join("link.dat");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = user.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let sub = user.path().join("subdir");
    std::fs::create_dir(&sub).unwrap();
    for (path, says) in
        [(&link, "is a symbolic link"), (&fifo, "is a FIFO"), (&sub, "is a directory")]
    {
        for rw in ["write", "read"] {
            let job = format!("[j]\nrw={rw}\nsize=64k\nfilename={}\n", path.display());
            let f = dir.write("job.fio", &job);
            let w = work.path().to_str().unwrap();
            let o = fsbench(&["run", "--fio", f.to_str().unwrap(), "--dir", w, "--no-store"]);
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            let e = stderr(&o);
            assert!(e.contains("job.fio:4: `filename`") && e.contains(says), "{e}");
        }
    }
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me", "the link's target was touched");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(work.entries(), Vec::<String>::new());
    let mut left = user.entries();
    left.sort();
    assert_eq!(left, ["fifo", "link.dat", "precious", "subdir"]);
    assert!(std::fs::read_dir(&sub).unwrap().next().is_none(), "nothing made in the directory");
}

/// The engine checks the path again (a workload names it with `file.path`, or it changed after
/// the translation): a symlink is refused and its target untouched.
#[test]
fn the_engine_refuses_a_symlink_at_a_workloads_file_path() {
    let (dir, work, user) = (TestDir::new(), TestDir::new(), TestDir::new());
    let target = user.path().join("precious");
    std::fs::write(&target, b"keep me").unwrap();
    let link = user.path().join("link.dat");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let w = dir.write(
        "w.toml",
        &format!(
            "[[test]]\nid = \"w\"\nname = \"w\"\nfile = {{ size = \"64K\", prefill = false, path = \"{}\" }}\n[[test.phase]]\nname = \"w\"\nopen = [\"create\"]\npattern = [{{ op = \"write\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n",
            link.display()
        ),
    );
    let (v, _) = run_json(&[
        "run",
        "--workload",
        w.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--no-store",
    ]);
    let t = &v["tests"][0];
    assert_ne!(t["status"]["state"], "ok", "{t}");
    assert!(t.to_string().contains("symbolic link"), "{t}");
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me", "the link's target was touched");
    assert_eq!(work.entries(), Vec::<String>::new());
}

#[test]
fn buffered_0_is_direct_1() {
    let dir = TestDir::new();
    let show = |text: &str| {
        let f = dir.write("j.fio", text);
        let o = fsbench(&["run", "--fio", f.to_str().unwrap(), "--print-workload"]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let direct = show("[j]\nrw=randread\nbs=4k\nsize=1m\ndirect=1\n");
    assert!(direct.contains("direct = true"), "{direct}");
    assert_eq!(show("[j]\nrw=randread\nbs=4k\nsize=1m\nbuffered=0\n"), direct);
    let buffered = show("[j]\nrw=randread\nbs=4k\nsize=1m\nbuffered=1\n");
    assert_eq!(buffered, show("[j]\nrw=randread\nbs=4k\nsize=1m\n"));
    assert!(!buffered.contains("direct = true"), "{buffered}");
}

/// A named file on another filesystem than the one under test is refused (the target's
/// eviction, counters and results are that filesystem's), and nothing is made there.
#[test]
fn a_named_file_off_the_filesystem_under_test_is_refused() {
    let (dir, work) = (TestDir::new(), TestDir::new());
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let data = shm.path().join("x.dat");
    let w = dir.write(
        "w.toml",
        &format!(
            "[[test]]\nid = \"w\"\nname = \"w\"\nfile = {{ size = \"64K\", path = \"{}\" }}\n[[test.phase]]\nname = \"r\"\npattern = [{{ op = \"read\", size = \"4K\" }}]\namount = {{ passes = 1 }}\n",
            data.display()
        ),
    );
    let (v, _) = run_json(&[
        "run",
        "--workload",
        w.to_str().unwrap(),
        "--dir",
        work.path().to_str().unwrap(),
        "--no-store",
    ]);
    let t = &v["tests"][0];
    assert_ne!(t["status"]["state"], "ok", "{t}");
    assert!(t.to_string().contains("not on the filesystem under test"), "{t}");
    assert!(!data.exists(), "the file was made off the target");
    assert_eq!(work.entries(), Vec::<String>::new());
}
