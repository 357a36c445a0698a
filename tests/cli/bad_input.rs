//! Bad input: clear messages, exit code 2, and no I/O done.

use crate::util::*;

fn expect_bad(args: &[&str], needles: &[&str]) {
    let o = fsbench(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr:\n{err}");
    for n in needles {
        assert!(err.contains(n), "stderr should mention {n:?}:\n{err}");
    }
}

const GOOD_HEAD: &str = "[[test]]\nid = \"w\"\nname = \"w\"\n";

fn workload_case(body: &str, needles: &[&str]) {
    let d = TestDir::new();
    let run_dir = TestDir::new();
    let f = d.write("w.toml", &format!("{GOOD_HEAD}{body}"));
    expect_bad(
        &["run", "--dir", run_dir.path().to_str().unwrap(), "--workload", f.to_str().unwrap()],
        needles,
    );
    assert!(
        run_dir.entries().is_empty(),
        "no I/O may happen on bad input: {:?}",
        run_dir.entries()
    );
}

#[test]
fn malformed_toml_gives_file_line_column() {
    let d = TestDir::new();
    let run_dir = TestDir::new();
    let f = d.write("bad.toml", "[[test]]\nid = \"1\"\nname = \"x\"\nthreads = [1,\nfile = 3\n");
    let o = fsbench(&[
        "run",
        "--dir",
        run_dir.path().to_str().unwrap(),
        "--workload",
        f.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.toml:5:"), "file:line:col expected:\n{err}");
    assert!(run_dir.entries().is_empty());
}

#[test]
fn wrong_type_names_expected_type() {
    workload_case(
        "threads = \"four\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n",
        &["w.toml:4:", "invalid type", "expected"],
    );
}

#[test]
fn block_size_zero() {
    workload_case(
        "file = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = 0 }]\namount = { passes = 1 }\n",
        &["block size 0", "phase `r`", "pattern entry 1"],
    );
}

#[test]
fn op_larger_than_file() {
    workload_case(
        "file = { size = \"64K\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"1M\", offset = \"random\" }]\namount = { ops = 10 }\n",
        &["larger than the file", "make the file bigger"],
    );
}

#[test]
fn zero_threads() {
    workload_case(
        "threads = 0\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n",
        &["threads = 0", "at least one thread"],
    );
}

#[test]
fn unknown_op_and_flag() {
    workload_case(
        "file = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"scribble\", size = \"4K\" }]\namount = { passes = 1 }\n",
        &["unknown op `scribble`", "read, write, fsync, fdatasync"],
    );
    workload_case(
        "file = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\nopen = [\"turbo\"]\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n",
        &["unknown open flag `turbo`", "dsync"],
    );
}

#[test]
fn unknown_key_is_an_error_not_ignored() {
    workload_case(
        "file = { size = \"1M\", sise = 3 }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { passes = 1 }\n",
        &["sise"],
    );
}

#[test]
fn last_offset_needs_a_previous_op() {
    workload_case(
        "file = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"write\", size = \"4K\", offset = \"last\" }]\namount = { ops = 3 }\n",
        &["offset = \"last\" needs a read or write before it"],
    );
}

#[test]
fn amount_needs_exactly_one_key() {
    workload_case(
        "file = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { ops = 3, bytes = \"1M\" }\n",
        &["exactly one of bytes, ops, seconds, passes"],
    );
}

/// O_DIRECT with sizes drawn from a range (any number of bytes) is refused at validation; a
/// fixed size's alignment is the file's, checked when the test starts (`fio_direct`).
#[test]
fn direct_io_alignment() {
    workload_case(
        "file = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\nopen = [\"direct\"]\npattern = [{ op = \"read\", size = { uniform = [\"1000\", \"8K\"] } }]\namount = { passes = 1 }\n",
        &["O_DIRECT needs fixed sizes", "direct-I/O alignment"],
    );
}

#[test]
fn missing_directory() {
    expect_bad(
        &["run", "--dir", "/nonexistent/fsbench-here", "--test", "4"],
        &["/nonexistent/fsbench-here", "No such file"],
    );
}

#[test]
fn directory_is_a_file() {
    let d = TestDir::new();
    let f = d.write("plain", "x");
    expect_bad(&["run", "--dir", f.to_str().unwrap(), "--test", "4"], &["not a directory"]);
}

#[test]
fn read_only_directory() {
    // Root ignores permission bits, so as root use a read-only tmpfs; otherwise chmod.
    if is_root() {
        let Some(t) = Tmpfs::mount("1M", true) else {
            skip("could not mount a read-only tmpfs");
            return;
        };
        expect_bad(&["run", "--dir", t.path().to_str().unwrap(), "--test", "4"], &["not writable"]);
    } else {
        use std::os::unix::fs::PermissionsExt;
        let d = TestDir::new();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o500)).unwrap();
        expect_bad(&["run", "--dir", d.path().to_str().unwrap(), "--test", "4"], &["not writable"]);
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

#[test]
fn unknown_test_and_suite() {
    let d = TestDir::new();
    let p = d.path().to_str().unwrap();
    expect_bad(&["run", "--dir", p, "--test", "99"], &["no test 99", "1, 2, 3"]);
    expect_bad(&["run", "--dir", p, "--suite", "nosuch"], &["unknown suite `nosuch`", "unit14"]);
    expect_bad(&["run", "--dir", p, "--scale", "0"], &["scale"]);
    assert!(d.entries().is_empty());
}

#[test]
fn compress_percent_out_of_range() {
    let d = TestDir::new();
    expect_bad(
        &["run", "--dir", d.path().to_str().unwrap(), "--compress-percent", "101"],
        &["compress-percent"],
    );
    assert!(d.entries().is_empty());
}

#[test]
fn mpi_without_the_feature_says_how_to_build_it() {
    if cfg!(feature = "mpi") {
        skip("built with --features mpi: tests/mpi.rs covers --mpi");
        return;
    }
    let d = TestDir::new();
    expect_bad(
        &["run", "--mpi", "--dir", d.path().to_str().unwrap()],
        &["--features mpi", "scripts/install-deps.sh mpi", "mpirun"],
    );
    assert!(d.entries().is_empty(), "{:?}", d.entries());
}
