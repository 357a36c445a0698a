//! fio's meaning in the engine, checked op by op through the real binary: a translated fio job
//! does the operations fio's job does (the random map: each block once per pass;
//! `random_distribution`: fio's hit count per block).

use crate::util::*;
use std::collections::BTreeMap;
use std::process::Command;

/// The offsets of `pread64` calls of `size` bytes in an `strace -f` log.
fn pread_offsets(log: &std::path::Path, size: u64) -> Vec<u64> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .filter_map(|l| {
            // "1234  pread64(5, ..., 4096, 8192) = 4096"
            let (_, call) = l.split_once("pread64(")?;
            let (args, _) = call.rsplit_once(')')?;
            let args: Vec<&str> = args.split(", ").collect();
            let len: u64 = args.get(2)?.parse().ok()?;
            (len == size).then(|| args.get(3)?.parse().ok())?
        })
        .collect()
}

/// fio reads each block of a randread job once per pass (its random map, the default); so does
/// the translated job: 512 reads of 4 KiB over a 2 MiB file, each block exactly once, in an
/// order that is not the file's.
#[test]
fn a_fio_randread_job_reads_each_block_once() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let job = d.write("rr.fio", "[rr]\nrw=randread\nbs=4k\nsize=2m\n");
    let log = d.path().join("strace.log");
    let run_dir = d.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let mut c = Command::new("strace");
    let o = isolate(&mut c)
        .args(["-f", "-qq", "-e", "trace=pread64", "-e", "signal=none", "-s", "0", "-o"])
        .arg(&log)
        .arg(bin())
        .args(["run", "--fio"])
        .arg(&job)
        .args(["--no-store", "--min-time", "0", "--dir"])
        .arg(&run_dir)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let offs = pread_offsets(&log, 4096);
    assert_eq!(offs.len(), 512, "one pass of 2M in 4K reads");
    let mut hits: BTreeMap<u64, u32> = BTreeMap::new();
    for &off in &offs {
        *hits.entry(off).or_default() += 1;
    }
    let want: Vec<u64> = (0..512).map(|k| k * 4096).collect();
    assert_eq!(hits.keys().copied().collect::<Vec<_>>(), want, "every block read");
    assert!(hits.values().all(|&n| n == 1), "each block once");
    let in_order = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
    assert!(in_order < 50, "random order, not sequential: {in_order} steps of one block");
    assert!(!stderr(&o).contains("random map"), "no note about the random map: {}", stderr(&o));
}

/// Hits per block of `offs`, sorted from the hottest, with `blocks` entries (untouched: 0).
fn sorted_hits(offs: &[u64], blocks: usize) -> Vec<u32> {
    let mut hits = vec![0u32; blocks];
    for &o in offs {
        hits[(o / 4096) as usize] += 1;
    }
    hits.sort_unstable_by(|a, b| b.cmp(a));
    hits
}

/// Share of the hits in the hottest `frac` of the blocks.
fn top_share(hits: &[u32], frac: f64) -> f64 {
    let k = ((hits.len() as f64 * frac) as usize).max(1);
    let all: u32 = hits.iter().sum();
    f64::from(hits[..k].iter().sum::<u32>()) / f64::from(all)
}

/// `strace -f` of `cmd` (run in `dir`): the offsets of its 4 KiB `pread64` calls.
fn traced_reads(dir: &std::path::Path, name: &str, cmd: &mut Command) -> Vec<u64> {
    let log = dir.join(format!("{name}.strace"));
    let prog = cmd.get_program().to_owned();
    let args: Vec<_> = cmd.get_args().map(|a| a.to_owned()).collect();
    let mut c = Command::new("strace");
    let o = isolate(&mut c)
        .current_dir(dir)
        .args(["-f", "-qq", "-e", "trace=pread64", "-e", "signal=none", "-s", "0", "-o"])
        .arg(&log)
        .arg(prog)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    pread_offsets(&log, 4096)
}

/// fio's `random_distribution=zipf:1.2`, `pareto:0.3`, `normal:10` and `normal:40` (the
/// deviation changes the spread): 20480 buffered 4 KiB reads over a
/// 8 MiB file (2048 blocks) hit the blocks as fio's do. Counted op by op under strace, the
/// hottest 1% and 10% of the blocks take the same share of the reads as under fio 3.33 on the
/// same job (within 3 points; draws are random), and as Zipf's law says for zipf. Without fio
/// the comparison is to the law alone (printed).
#[test]
fn a_fio_zipf_job_hits_blocks_as_fio_does() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let law = |theta: f64, k: u64| {
        let w = |i: u64| (i as f64).powf(-theta);
        (1..=k).map(w).sum::<f64>() / (1..=2048).map(w).sum::<f64>()
    };
    for dist in ["zipf:1.2", "pareto:0.3", "normal:10", "normal:40"] {
        let d = TestDir::new();
        let body =
            format!("rw=randread\nbs=4k\nsize=8m\nio_size=80m\nrandom_distribution={dist}\n");
        let job = d.write("z.fio", &format!("[z]\n{body}"));
        let run_dir = d.path().join("run");
        std::fs::create_dir(&run_dir).unwrap();
        let mut c = Command::new(bin());
        c.args(["run", "--fio"]).arg(&job).args(["--no-store", "--min-time", "0", "--dir"]);
        c.arg(&run_dir).args(["--format", "json"]);
        let ours = traced_reads(d.path(), "fsbench", &mut c);
        assert_eq!(ours.len(), 20480, "{dist}: io_size of 4K reads");
        let ours = sorted_hits(&ours, 2048);
        let mut want = Vec::new();
        if have("fio") {
            let fio_dir = d.path().join("fio");
            std::fs::create_dir(&fio_dir).unwrap();
            let mut f = Command::new("fio");
            f.args(["--name=z", "--ioengine=psync", "--rw=randread", "--bs=4k", "--size=8m"]);
            f.args(["--io_size=80m", "--eta=never", "--output=/dev/null"]);
            f.arg(format!("--random_distribution={dist}"))
                .arg(format!("--directory={}", fio_dir.display()));
            let theirs = traced_reads(d.path(), "fio", &mut f);
            assert_eq!(theirs.len(), 20480, "{dist}: fio's reads");
            let theirs = sorted_hits(&theirs, 2048);
            want.push(("fio 3.33", top_share(&theirs, 0.01), top_share(&theirs, 0.1)));
        } else {
            skip("fio not installed: comparing to Zipf's law only");
        }
        if dist == "zipf:1.2" {
            want.push(("Zipf's law", law(1.2, 20), law(1.2, 204)));
        }
        assert!(!want.is_empty() || dist != "zipf:1.2");
        let (t1, t10) = (top_share(&ours, 0.01), top_share(&ours, 0.1));
        for (who, w1, w10) in want {
            eprintln!("{dist}: fsbench top 1% {t1:.3}, 10% {t10:.3}; {who} {w1:.3}, {w10:.3}");
            assert!((t1 - w1).abs() < 0.03, "{dist} top 1%: fsbench {t1:.3}, {who} {w1:.3}");
            assert!((t10 - w10).abs() < 0.03, "{dist} top 10%: fsbench {t10:.3}, {who} {w10:.3}");
        }
    }
}

/// `random_distribution=zoned:50/5:30/15:20/` (fio's rand-zones example, the last zone taking
/// the rest): counted op by op, each zone gets its share of 20480 reads within 2 points, and
/// every read is inside the file.
#[test]
fn a_fio_zoned_job_gives_each_zone_its_share() {
    if !have("strace") {
        skip("strace not installed (apt-get install strace)");
        return;
    }
    let d = TestDir::new();
    let job = d.write(
        "z.fio",
        "[z]\nrw=randread\nbs=4k\nsize=8m\nio_size=80m\nrandom_distribution=zoned:50/5:30/15:20/\n",
    );
    let run_dir = d.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    let mut c = Command::new(bin());
    c.args(["run", "--fio"]).arg(&job).args(["--no-store", "--min-time", "0", "--dir"]);
    c.arg(&run_dir).args(["--format", "json"]);
    let offs = traced_reads(d.path(), "fsbench", &mut c);
    assert_eq!(offs.len(), 20480);
    // Zones of 2048 blocks: [0, 102), [102, 409), [409, 2048).
    let mut per = [0u32; 3];
    for o in offs {
        let b = o / 4096;
        assert!(b < 2048, "offset {o} past the file");
        per[if b < 102 {
            0
        } else if b < 409 {
            1
        } else {
            2
        }] += 1;
    }
    for (got, want) in per.iter().zip([0.5, 0.3, 0.2]) {
        let got = f64::from(*got) / 20480.0;
        assert!((got - want).abs() < 0.02, "zone shares {per:?}, want 50/30/20%");
    }
}
