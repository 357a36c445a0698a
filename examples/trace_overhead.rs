//! Tracing overhead: 4 KiB random O_DIRECT writes on a block device, alternating runs with and
//! without a block trace (ABBA order per pair of rounds, so drift cancels), then the ratio of
//! throughputs. Run through bench/trace-overhead.sh, which makes and removes a loop device.
//!
//! Usage: trace_overhead DEVICE_NAME SECONDS_PER_RUN ROUNDS [THREADS]
//! (DEVICE_NAME is a kernel name such as loop3; the device is overwritten.)
//! `FSBENCH_TRACE_BUFFER_KIB` overrides the per-CPU ring buffer size.
//!
//! Three figures, because a shared 2-core machine is noisy: the ratio of mean throughputs, the
//! median of the per-round ratios (each round runs both variants back to back), and the ratio
//! of the best runs (interference only ever slows a run down, so the best run of each variant
//! is the closest to its undisturbed speed).

use fsbench::engine::buffer::AlignedBuf;
use fsbench::observe::trace::{TraceOptions, Tracer};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::{Duration, Instant};

fn run(dev: &str, secs: f64, threads: usize, seed: u64) -> std::io::Result<f64> {
    let path = format!("/dev/{dev}");
    let size = std::fs::read_to_string(format!("/sys/class/block/{dev}/size"))?
        .trim()
        .parse::<u64>()
        .map_err(std::io::Error::other)?
        * 512;
    let blocks = size / 4096;
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let ops: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let path = path.clone();
                s.spawn(move || -> std::io::Result<u64> {
                    let f = std::fs::File::options()
                        .write(true)
                        .custom_flags(libc::O_DIRECT)
                        .open(&path)?;
                    let mut buf = AlignedBuf::new(4096);
                    buf.as_mut_slice().fill(0xa5);
                    let mut rng = fastrand::Rng::with_seed(seed ^ ((t as u64) << 32));
                    let mut n = 0;
                    while n % 64 != 0 || Instant::now() < deadline {
                        f.write_all_at(&buf.as_slice()[..4096], rng.u64(0..blocks) * 4096)?;
                        n += 1;
                    }
                    Ok(n)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("writer thread").unwrap_or(0)).sum()
    });
    Ok(ops as f64 / start.elapsed().as_secs_f64())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        anyhow::bail!("usage: trace_overhead DEVICE_NAME SECONDS_PER_RUN ROUNDS [THREADS]");
    }
    let dev = &args[1];
    let secs: f64 = args[2].parse()?;
    let rounds: usize = args[3].parse()?;
    let threads: usize = args.get(4).map(|t| t.parse()).transpose()?.unwrap_or(1);
    // Warm-up: the first writes to a fresh image cost more (block allocation on the host).
    run(dev, secs, threads, 0)?;
    let (mut plain, mut traced) = (Vec::new(), Vec::new());
    let mut events = 0;
    let mut lost = 0;
    for round in 0..rounds {
        let traced_first = round % 2 == 1;
        for traced_now in [traced_first, !traced_first] {
            let seed = round as u64 + 1;
            if traced_now {
                let mut opts = TraceOptions::default();
                if let Ok(kib) = std::env::var("FSBENCH_TRACE_BUFFER_KIB") {
                    opts.buffer_kib_per_cpu = kib.parse()?;
                }
                let t = Tracer::start(std::slice::from_ref(dev), opts)?;
                let iops = run(dev, secs, threads, seed)?;
                let s = t.stop()?;
                events += s.events_recorded;
                lost += s.events_lost;
                traced.push(iops);
            } else {
                plain.push(run(dev, secs, threads, seed)?);
            }
        }
        println!(
            "round {}: plain {:.0} IOPS, traced {:.0} IOPS, ratio {:.3}",
            round + 1,
            plain[round],
            traced[round],
            traced[round] / plain[round]
        );
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let mut ratios: Vec<f64> = plain.iter().zip(&traced).map(|(p, t)| t / p).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    println!(
        "plain mean {:.0} IOPS, traced mean {:.0} IOPS; traced/plain: mean-of-means {:.3}, \
         median of per-round ratios {:.3} (range {:.3}..{:.3}); slowdown {:.1}%",
        mean(&plain),
        mean(&traced),
        mean(&traced) / mean(&plain),
        median,
        ratios[0],
        ratios[ratios.len() - 1],
        (1.0 - mean(&traced) / mean(&plain)) * 100.0
    );
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!(
        "best plain {:.0} IOPS, best traced {:.0} IOPS: ratio {:.3}",
        best(&plain),
        best(&traced),
        best(&traced) / best(&plain)
    );
    println!("events traced {events}, lost {lost}");
    Ok(())
}
