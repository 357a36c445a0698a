//! fio's `nice`, `prio`/`prioclass` and `cpus_allowed`/`cpumask` with `cpus_allowed_policy`
//! through the real binary: each worker thread of the job makes fio's calls on itself once
//! when it starts (`sched_setaffinity`, `ioprio_set`, then glibc's `nice`, which is
//! `setpriority`), with fio's values, one set per thread (numjobs clone), checked under strace
//! beside fio 3.33's job processes when fio is installed. A setting the system refuses fails
//! the test with its reason.

use crate::util::*;
use std::collections::BTreeMap;

/// The scheduling calls of each thread that made one, as strace prints them (the pid argument
/// of `sched_setaffinity`, fio's own pid where fsbench passes 0, written `_`), sorted by thread.
/// With `fio`, fio's job processes only: those that call `setpriority` (fio calls `nice(0)` in
/// every job; that call is left out unless the job file writes `nice=0`), not its
/// clock-calibration threads, which pin themselves to each CPU.
fn calls(job: &str, fio: bool) -> Vec<Vec<String>> {
    let text = strace_fio_job(job, fio, "setpriority,ioprio_set,sched_setaffinity");
    let mut by_pid: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let Some((pid, rest)) = line.split_once(char::is_whitespace) else { continue };
        let rest = rest.trim();
        if rest.starts_with("<...") {
            continue;
        }
        let call = match rest.split_once(" <unfinished") {
            Some((c, _)) => format!("{c})"),
            None => rest.rsplit_once(" = ").map_or(rest, |(c, _)| c).trim().to_string(),
        };
        let call = match call.strip_prefix("sched_setaffinity(") {
            Some(args) => format!("sched_setaffinity(_{}", &args[args.find(',').unwrap_or(0)..]),
            None => call,
        };
        by_pid.entry(pid.to_string()).or_default().push(call);
    }
    let nice0 = "setpriority(PRIO_PROCESS, 0, 0)";
    let mut out: Vec<Vec<String>> = by_pid
        .into_values()
        .filter(|c| !fio || c.iter().any(|c| c.starts_with("setpriority(")))
        .map(|mut c| {
            if fio && !job.contains("nice=0") {
                c.retain(|c| c != nice0);
            }
            c
        })
        .filter(|c| !c.is_empty())
        .collect();
    out.sort();
    out
}

fn each(n: usize, calls: &[&str]) -> Vec<Vec<String>> {
    vec![calls.iter().map(|c| c.to_string()).collect(); n]
}

/// Each thread makes the calls fio's job processes make, with fio's arguments: numjobs=2 with
/// nice=5 is two `setpriority(.., 5)`; prio=3 is best effort level 3 as fio encodes it;
/// prioclass=3 alone is idle level 0; cpus_allowed with split gives each thread one CPU in
/// turn, shared the whole set; cpumask is the same set; a job run as a role beside another
/// takes its own; and a job without them makes none.
#[test]
fn fio_scheduling_calls_are_fios() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let two_cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    let base = "[a]\nrw=read\nbs=4k\nsize=256k\nnumjobs=2\n";
    let be3 = "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 3))";
    let idle0 = "ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0))";
    let mut cases: Vec<(String, Vec<Vec<String>>)> = vec![
        (format!("{base}nice=5\n"), each(2, &["setpriority(PRIO_PROCESS, 0, 5)"])),
        (format!("{base}prio=3\n"), each(2, &[be3])),
        (format!("{base}prioclass=3\n"), each(2, &[idle0])),
        (
            format!("{base}cpus_allowed=0\ncpus_allowed_policy=split\n"),
            each(2, &["sched_setaffinity(_, 128, [0])"]),
        ),
        (
            format!("{base}cpus_allowed=0\ncpus_allowed_policy=shared\nprio=3\nnice=2\n"),
            each(2, &["sched_setaffinity(_, 128, [0])", be3, "setpriority(PRIO_PROCESS, 0, 2)"]),
        ),
        (base.to_string(), vec![]),
        // Two jobs of one group: the second runs as a role beside the first, with its own.
        (
            "[a]\nrw=read\nbs=4k\nsize=256k\nnice=3\n[b]\nrw=read\nbs=4k\nsize=256k\nprio=1\n"
                .into(),
            vec![
                vec!["ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 1))"
                    .into()],
                vec!["setpriority(PRIO_PROCESS, 0, 3)".into()],
            ],
        ),
    ];
    if two_cpus {
        cases.push((
            format!("{base}cpus_allowed=0-1\ncpus_allowed_policy=split\n"),
            vec![
                vec!["sched_setaffinity(_, 128, [0])".to_string()],
                vec!["sched_setaffinity(_, 128, [1])".to_string()],
            ],
        ));
        cases
            .push((format!("{base}cpumask=0x3\n"), each(2, &["sched_setaffinity(_, 128, [0 1])"])));
    } else {
        skip("one CPU: the split over two CPUs and cpumask=0x3 are not checked");
    }
    for (job, want) in &cases {
        assert_eq!(&calls(job, false), want, "fsbench on:\n{job}");
    }
    if !have("fio") {
        skip("fio not installed (apt-get install fio): fsbench's calls checked alone");
        return;
    }
    for (job, want) in &cases {
        assert_eq!(&calls(job, true), want, "fio 3.33 on:\n{job}");
    }
}

/// A negative nice without CAP_SYS_NICE (root with the capability out of its bounding set,
/// through setpriv) fails the test before any I/O, with the setting and the system's error in
/// its status, as fio fails the job (`func=nice, error=Operation not permitted`); the run does
/// not panic.
#[test]
fn a_refused_nice_fails_the_test_with_its_reason() {
    if !is_root() || !have("setpriv") {
        skip("needs root and setpriv (util-linux) to drop CAP_SYS_NICE");
        return;
    }
    let d = TestDir::new();
    let job = d.write("n.fio", "[a]\nrw=read\nbs=4k\nsize=256k\nnice=-5\n");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut c = std::process::Command::new("setpriv");
    isolate(&mut c).args(["--bounding-set=-sys_nice"]).arg(bin());
    c.args(["run", "--fio"]).arg(&job);
    c.args(["--no-store", "--format", "json", "--dir"]).arg(&data);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &v["tests"][0];
    assert_eq!(t["status"]["state"], "failed", "{t}");
    let reason = t["status"]["reason"].as_str().unwrap_or("");
    for want in ["nice = -5", "Operation not permitted", "CAP_SYS_NICE"] {
        assert!(reason.contains(want), "{want}: {reason}");
    }
}

/// A CPU this machine does not have is refused before anything runs, with the job file's line
/// and exit code 2 (bad input), as fio refuses it ("CPU N too large"); so is a nice outside
/// fio's -20 to 19.
#[test]
fn a_cpu_not_on_this_machine_is_refused_with_its_line() {
    let cpus = fsbench::sys::sched::configured_cpus();
    let d = TestDir::new();
    for (text, want) in [
        (
            format!("[a]\nrw=read\nsize=1m\ncpus_allowed={cpus}\n"),
            format!("CPU {cpus} is not on this machine"),
        ),
        ("[a]\nrw=read\nsize=1m\nnice=-21\n".to_string(), "-20 to 19".to_string()),
    ] {
        let job = d.write("c.fio", &text);
        let o = command()
            .args(["run", "--fio"])
            .arg(&job)
            .args(["--no-store", "--dir"])
            .arg(d.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("c.fio:4") && e.contains(&want), "{e}");
    }
}
