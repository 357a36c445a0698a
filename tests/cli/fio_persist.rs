//! A plain `filename` that several jobs of a job file name is one file for all of them, as
//! fio's: a later job (after a `stonewall`) finds what an earlier one wrote, and the file is
//! removed with the run's other files. Checked by fsbench's own block check: a read job with
//! `verify=` passes on blocks a write job wrote for it and fails on a write job's ordinary
//! data (before, each test had a new file of its own and the read job laid out its own
//! checkable blocks, so both passed); on a small testbed, a job without `size` reads back what
//! a `fill_device` job wrote, the size the fill left.

use crate::util::*;

/// A write job then a read job on one plain file, with `verify=crc32c` on both and the read
/// job's `do_verify` (fio 3.33 reads the write job's data and verifies it: error 0).
const WRITE_THEN_READ: &str = "[global]\nfilename=shared.dat\nbs=4k\nsize=2m\nverify=crc32c\n\n[w]\nrw=write\ndo_verify=0\n\n[r]\nstonewall\nrw=read\ndo_verify=1\n";

fn run_on(job: &std::path::Path, dir: &std::path::Path, repeat: &str) -> serde_json::Value {
    let (v, o) = run_json(&[
        "run",
        "--fio",
        job.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
        "--repeat",
        repeat,
        "--no-store",
    ]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    v
}

/// The read job reads what the write job wrote (its check passes on every block, and it lays
/// nothing out: its repetitions reuse the file); a write job without verify leaves ordinary
/// data, and the read job's check fails on it, as fio's would; the file is gone after either
/// run; no `filename-reuse` note.
#[test]
fn a_later_job_reads_what_an_earlier_job_wrote_on_one_plain_file() {
    write_then_read(WRITE_THEN_READ);
}

/// The same with the jobs' files named by one `filename_format` instead of a `filename`: both
/// jobs' one file is `data.0`, so the read job reads the write job's (fio 3.33 too).
#[test]
fn a_later_job_reads_what_an_earlier_job_wrote_on_a_file_of_the_same_format() {
    write_then_read(
        &WRITE_THEN_READ.replace("filename=shared.dat", "filename_format=data.$filenum"),
    );
}

/// [`a_later_job_reads_what_an_earlier_job_wrote_on_one_plain_file`] for the job file `text`
/// (a write job `w`, a read job `r` on one file, as [`WRITE_THEN_READ`]).
fn write_then_read(text: &str) {
    let dir = TestDir::new();
    let work = TestDir::new();
    let job = dir.write("wr.fio", text);
    let v = run_on(&job, work.path(), "2");
    let r = test_by_id(&v, "r");
    assert_eq!(r["status"]["state"], "ok", "{r}");
    assert_eq!(r["complete_reps"], 2, "{r}");
    for rep in r["reps"].as_array().unwrap() {
        assert_eq!(rep["untimed"]["reused_layout"], true, "nothing laid out: {rep}");
    }
    let checked: Vec<_> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "verified")
        .map(|w| w["blocks_intact"].as_u64().unwrap())
        .collect();
    assert_eq!(checked, [512, 512], "2 MiB of 4 KiB blocks intact in each repetition");
    assert_eq!(test_by_id(&v, "w")["status"]["state"], "ok");
    assert!(!v.to_string().contains("filename-reuse"), "no difference note");
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
    // The write job's ordinary data (no verify on it): the read job's check finds it.
    let ordinary = text.replace("verify=crc32c\n", "").replace("do_verify=1", "verify=crc32c");
    let job = dir.write("ordinary.fio", &ordinary);
    let v = run_on(&job, work.path(), "1");
    let r = test_by_id(&v, "r");
    assert_eq!(r["status"]["state"], "failed", "{r}");
    assert!(r["status"]["reason"].to_string().contains("verify"), "{r}");
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
    // fio 3.33 on the same job file: the read job verifies what the write job wrote.
    if have("fio") {
        let f = TestDir::new();
        // In the temp directory: fio writes its verify state file where it runs.
        let o = std::process::Command::new("fio")
            .current_dir(f.path())
            .arg(format!("--directory={}", f.path().display()))
            .arg("--output-format=json")
            .arg(dir.path().join("wr.fio"))
            .output()
            .unwrap();
        assert!(o.status.success(), "fio: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        let v: serde_json::Value =
            serde_json::from_str(&text[text.find('{').unwrap_or(0)..]).unwrap();
        assert_eq!(v["jobs"][1]["error"], 0, "{v}");
        assert_eq!(v["jobs"][1]["read"]["io_bytes"], 2 << 20, "{v}");
    } else {
        skip("fio not installed: not compared with fio");
    }
}

/// On a small ext4 testbed: a fill then a job without `size` (create_serialize=0, as fio's
/// surface-scan example) reads back the whole fill, the size the fill left rounded down to
/// `bs`, and its check passes on every block the fill wrote; nothing is left behind.
#[test]
fn a_job_without_size_reads_back_what_a_fill_wrote() {
    if skip_testbeds(&["mkfs.ext4"]) {
        return;
    }
    let dir = TestDir::new();
    let work = TestDir::new();
    let text = "[global]\nbs=64k\ndirect=1\nverify=crc32c\n\n[fill]\nfilename=data.tmp\nrw=write\nfill_device=1\ndo_verify=0\n\n[check]\nstonewall\ncreate_serialize=0\nfilename=data.tmp\nrw=read\ndo_verify=1\n";
    let job = dir.write("fill.fio", text);
    let (v, o) = run_fio_on_small_ext4(&job, work.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let fill = test_by_id(&v, "fill");
    assert_eq!(fill["status"]["state"], "ok", "{fill}");
    let last = |t: &serde_json::Value| t["reps"][0]["phases"].as_array().unwrap().last().cloned();
    let written = last(fill).unwrap()["data_ops"].as_u64().unwrap() * (64 << 10);
    let check = test_by_id(&v, "check");
    assert_eq!(check["status"]["state"], "ok", "{check}");
    let ph = last(check).unwrap();
    let read = ph["data_ops"].as_u64().unwrap() * (64 << 10);
    // The fill's last write may be short (ENOSPC): the size is rounded down to bs.
    assert!(read > 16 << 20 && read <= written, "read {read} of the {written} bytes filled");
    let intact: u64 = check["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "verified")
        .map(|w| w["blocks_intact"].as_u64().unwrap())
        .sum();
    assert_eq!(intact * 4096, read, "every block the fill wrote checked intact");
    assert!(work.entries().is_empty(), "left behind: {:?}", work.entries());
}

/// `compare --fresh per-test` gives each test a new filesystem, where a later job would find
/// no file: exit 2 before any testbed is made, saying why.
#[test]
fn a_fresh_filesystem_per_test_is_refused_for_a_file_later_jobs_read() {
    let dir = TestDir::new();
    let job = dir.write("wr.fio", WRITE_THEN_READ);
    let o = fsbench(&[
        "compare",
        "ext4",
        "xfs",
        "--fio",
        job.to_str().unwrap(),
        "--fresh",
        "per-test",
        "--no-store",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("--fresh per-test: test r works on the file `shared.dat`"), "{e}");
}
