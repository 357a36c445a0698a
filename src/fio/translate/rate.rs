//! fio's `rate=R,W` and `rate_iops=R,W` on a mixed job (`randrw`, `rw`): fio limits reads and
//! writes each on its own (`rate_bps[ddir]`, `rate_next_io_time[ddir]`; a direction without a
//! value is not limited, so `rate=,W` limits only the writes; one value is both directions').
//! fsbench paces them as the phase's `rate_read` and `rate_write` (bytes per second of each
//! thread), on the engine's per-direction schedules ([`crate::engine::pace::DirPacer`]).
//! `rate_iops` becomes bytes as fio makes it (ops times the block size).

use super::{Dir, FioError, Job};
use crate::fio::value::{parse_size_expr, split_rw};
use crate::workload::size::{SizeDistSpec, SizeExpr};
use crate::workload::spec::PhaseSpec;

/// The per-direction rate of mixed job `job` (`rw` mixed) on its timed phase, with its note;
/// `Ok(false)`: the job has no rate.
pub(super) fn per_direction(
    job: &Job,
    rw: Dir,
    timed: &mut PhaseSpec,
    notes: &mut Vec<String>,
) -> Result<bool, FioError> {
    let read = |name: &str| -> Result<Option<(u64, u64, &str, usize)>, FioError> {
        let Some((v, line)) = job.str(name)? else {
            return Ok(None);
        };
        let (r, w) = split_rw(v, 0, parse_size_expr).map_err(|m| job.err(name, line, m))?;
        Ok((r > 0 || w > 0).then_some((r, w, v, line)))
    };
    let (iops, bytes) = (read("rate_iops")?, read("rate")?);
    let (r, w, v, name, line) = match (iops, bytes) {
        (None, None) => return Ok(false),
        (Some(_), Some(_)) => {
            return Err(job.err(
                "rate_iops",
                job.line("rate_iops"),
                "give one of rate and rate_iops",
            ))
        }
        (None, Some((r, w, v, line))) => (r, w, v, "rate", line),
        (Some((r, w, v, line)), None) => {
            // fio's bytes per second of a direction: its ops times its block size.
            let bs = match timed.pattern.as_slice() {
                [o] => match o.size {
                    Some(SizeDistSpec::Fixed(b)) => Some(b.0),
                    _ => None,
                },
                _ => None,
            };
            let Some(bs) = bs else {
                return Err(job.err("rate_iops", line, format!("`{v}` with {}: fsbench paces each direction in bytes, and this job's reads and writes have several sizes; give one bs, or use rate=R,W", rw.phase_name())));
            };
            (r * bs, w * bs, v, "rate_iops", line)
        }
    };
    let mixed = matches!(timed.pattern.as_slice(), [o] if o.write_percent.is_some_and(|p| p > 0 && p < 100));
    if !mixed {
        return Err(job.err(name, line, format!("`{v}` with {}: with reads and writes of different sizes (or rwmixread 0 or 100) fsbench issues them in a fixed order and cannot pace each direction on its own; give one bs, or the job one direction", rw.phase_name())));
    }
    if let Ok(Some(("poisson", _))) = job.str("rate_process") {
        return Err(job.err("rate_process", job.line("rate_process"), format!("poisson with {name}=R,W on {}: fsbench paces each direction at a fixed period; use rate_process=linear", rw.phase_name())));
    }
    timed.rate_read = (r > 0).then_some(SizeExpr::Bytes(r));
    timed.rate_write = (w > 0).then_some(SizeExpr::Bytes(w));
    let each = |b: u64| if b > 0 { format!("{b} B/s") } else { "no limit".into() };
    notes.push(format!("{name}={v} on {}: reads ({}) and writes ({}) of each thread each on their own schedule, as fio's (an op drawn in a direction ahead of its schedule goes the other way when that one is due, so the mix follows the rates)", rw.phase_name(), each(r), each(w)));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::translate;
    use crate::workload::size::SizeExpr;

    fn env(_: &str) -> Option<String> {
        None
    }

    fn timed(text: &str) -> crate::workload::spec::PhaseSpec {
        let t = translate(text, "t.fio", "t", &env).unwrap_or_else(|e| panic!("{e}"));
        t.spec.tests[0].phases.last().cloned().expect("a timed phase")
    }

    fn err(text: &str) -> String {
        translate(text, "t.fio", "t", &env).unwrap_err().to_string()
    }

    /// `rate=R,W` on randrw and rw: each direction's bytes per second (a missing one not
    /// limited, one value both); `rate_iops=R,W` in bytes as fio makes them (ops times bs);
    /// nothing on the phase's one-schedule keys.
    #[test]
    fn a_mixed_jobs_rates_are_each_directions() {
        let base = "[j]\nsize=1m\nbs=4k\nrw=randrw\n";
        let p = timed(&format!("{base}rate=2m,1m\n"));
        assert_eq!(
            (p.rate_read, p.rate_write),
            (Some(SizeExpr::Bytes(2 << 20)), Some(SizeExpr::Bytes(1 << 20)))
        );
        assert_eq!((p.rate, p.rate_iops), (None, None));
        let p = timed(&format!("{base}rate=,1m\n"));
        assert_eq!((p.rate_read, p.rate_write), (None, Some(SizeExpr::Bytes(1 << 20))));
        let p = timed(&format!("{base}rate=500k\n"));
        assert_eq!(
            (p.rate_read, p.rate_write),
            (Some(SizeExpr::Bytes(500 << 10)), Some(SizeExpr::Bytes(500 << 10)))
        );
        let p = timed(&format!("{base}rate_iops=300,100\n"));
        assert_eq!(
            (p.rate_read, p.rate_write),
            (Some(SizeExpr::Bytes(300 * 4096)), Some(SizeExpr::Bytes(100 * 4096)))
        );
        let p = timed("[j]\nsize=1m\nbs=4k\nrw=rw\nrate=300,300,300\n");
        assert_eq!(
            (p.rate_read, p.rate_write),
            (Some(SizeExpr::Bytes(300)), Some(SizeExpr::Bytes(300)))
        );
        let p = timed(&format!("{base}rate=0,0\n"));
        assert_eq!((p.rate_read, p.rate_write, p.rate), (None, None, None), "0: no rate, as fio");
        // Resolved: each direction's ops per second of each thread.
        let t = translate(&format!("{base}rate=2m,1m\n"), "t.fio", "t", &env).unwrap();
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
        let load = &suite.tests[0].phases.last().unwrap().load;
        let dir = load.dir_ops_per_s.expect("per-direction rates");
        assert_eq!((dir.read, dir.write, load.thread_ops_per_s), (Some(512.0), Some(256.0), None));
    }

    /// A mixed job beside the first of its group (a role) keeps each direction's rate.
    #[test]
    fn a_mixed_job_in_a_group_keeps_each_directions_rate() {
        let text = "[a]\nsize=1m\n[b]\nsize=1m\nbs=4k\nrw=randrw\nrate=,1m\n";
        let t = translate(text, "t.fio", "t", &env).unwrap_or_else(|e| panic!("{e}"));
        let r = &t.spec.tests[0].roles[0];
        assert_eq!((r.rate_read, r.rate_write), (None, Some(SizeExpr::Bytes(1 << 20))));
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let suite = crate::fio::load(&t, &ctx).unwrap_or_else(|e| panic!("{e}"));
        let d = suite.tests[0].roles[0].phase.load.dir_ops_per_s.expect("per direction");
        assert_eq!((d.read, d.write), (None, Some(256.0)));
    }

    /// Where fsbench cannot pace each direction as fio, the job is refused with the way out.
    #[test]
    fn a_mixed_rate_fsbench_cannot_pace_is_refused() {
        let e = err("[j]\nsize=1m\nbs=4k,8k\nrw=randrw\nrate=1m,1m\n");
        assert!(e.contains("t.fio:5") && e.contains("cannot pace each direction"), "{e}");
        let e = err("[j]\nsize=1m\nbssplit=4k/50:8k/50\nrw=randrw\nrate_iops=10,10\nnorandommap\n");
        assert!(e.contains("t.fio:5: `rate_iops`") && e.contains("several sizes"), "{e}");
        let e = err("[j]\nsize=1m\nrw=randrw\nrate=1m,1m\nrate_process=poisson\n");
        assert!(e.contains("t.fio:5") && e.contains("rate_process=linear"), "{e}");
        let e = err("[j]\nsize=1m\nrw=randrw\nrate=1m,1m\nrate_iops=5\n");
        assert!(e.contains("give one of rate and rate_iops"), "{e}");
    }
}
