//! fio's `percentage_random=R[,W[,T]]` onto the phases' `random_percent`. A module of its own
//! because the option reads like a mix of jobs but is a per-op draw inside one: in fio 3.33
//! (`io_u.c`, `get_next_block` and `should_do_random`) each I/O of a random job draws 1 to
//! 100 from a generator of its direction and is random when the draw is at most the
//! direction's share; otherwise it starts where the job's previous I/O of that direction
//! ended (`last_pos`), takes nothing from the random map, and falls back to a random offset at
//! the end of the file (a time-based job starts over at the file's start). A sequential job
//! never draws (no effect, as in fio). One value is every direction's; `R,W` gives reads and
//! writes their own (the trim share is read and checked, fsbench does no trims).

use super::{Dir, FioError, Job};
use crate::workload::spec::{PhaseSpec, RandomPercent};

/// The job's `percentage_random` onto every phase of a random job (`random_percent`); a note
/// when it changes nothing (a sequential job, or 100).
pub(super) fn percentage_random(
    job: &Job,
    rw: Dir,
    phases: &mut [PhaseSpec],
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    let Some((v, line)) = job.str("percentage_random")? else {
        return Ok(());
    };
    let shares = parse(v).map_err(|m| job.err("percentage_random", line, m))?;
    let [read, write] = [shares[0], shares[1]];
    let used = match (rw.reads(), rw.writes()) {
        (true, false) => read < 100,
        (false, true) => write < 100,
        _ => read < 100 || write < 100,
    };
    if !rw.random() {
        notes.push(format!("percentage_random={v} on a sequential job: no effect, as in fio (only a random rw draws random or sequential per I/O)"));
        return Ok(());
    }
    if !used {
        return Ok(());
    }
    // fio starts each loop from the file's start; loops do nothing in a time-based job.
    let time_based = job.bool("time_based")?.unwrap_or(false);
    if !time_based && job.int("loops")?.is_some_and(|(n, _)| n > 1) {
        notes.push(crate::fio::options::difference("random-share-loops"));
    }
    let share = if read == write {
        RandomPercent::Both(u64::from(read))
    } else {
        RandomPercent::PerDirection(vec![u64::from(read), u64::from(write)])
    };
    for p in phases {
        p.random_percent = Some(share.clone());
    }
    Ok(())
}

/// `R[,W[,T]]`, each a whole percentage 0 to 100, as fio's parser reads it: one value is every
/// direction's, and a missing last one takes the one before it (`30,60` gives trims 60); an
/// empty one keeps fio's default, 100.
fn parse(v: &str) -> Result<[u8; 3], String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!("`{v}`: at most three shares, reads,writes,trims (30,60)"));
    }
    let mut out = [100u8; 3];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() {
            continue;
        }
        let n: u64 = p.parse().map_err(|_| {
            format!("`{v}`: `{p}` is not a whole percentage; give 0 to 100 (30, or 30,60 for reads and writes)")
        })?;
        if n > 100 {
            return Err(format!("`{v}`: {n} is above 100 (fio's maximum)"));
        }
        out[i] = n as u8;
    }
    for i in parts.len()..3 {
        out[i] = out[i - 1];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::fio::translate::tests::one;
    use crate::workload::spec::RandomPercent;

    fn error(text: &str) -> String {
        crate::fio::translate::translate(text, "t.fio", "t", &|_| None).unwrap_err().to_string()
    }

    #[test]
    fn shares_are_read_as_fios_parser_stores_them() {
        assert_eq!(parse("30"), Ok([30, 30, 30]));
        assert_eq!(parse("30,60"), Ok([30, 60, 60]));
        assert_eq!(parse("0,100,5"), Ok([0, 100, 5]));
        assert_eq!(parse(" 25 "), Ok([25; 3]));
        assert!(parse("101").unwrap_err().contains("above 100"), "{:?}", parse("101"));
        assert!(parse("3x").unwrap_err().contains("not a whole percentage"));
        assert!(parse("-1").is_err());
        assert!(parse("1,2,3,4").unwrap_err().contains("at most three"));
    }

    #[test]
    fn a_random_job_carries_its_shares_on_every_phase_and_a_sequential_one_notes_it() {
        let (t, _) = one("[a]\nrw=randread\nsize=1m\npercentage_random=30\nramp_time=1\n");
        assert_eq!(t.phases.len(), 2, "ramp and timed");
        for p in &t.phases {
            assert_eq!(p.random_percent, Some(RandomPercent::Both(30)), "{}", p.name);
        }
        let (t, _) = one("[a]\nrw=randrw\nsize=1m\npercentage_random=30,60\n");
        assert_eq!(t.phases[0].random_percent, Some(RandomPercent::PerDirection(vec![30, 60])));
        // A write job with only the read share below 100 draws nothing.
        let (t, _) = one("[a]\nrw=randwrite\nsize=1m\npercentage_random=30,100\n");
        assert_eq!(t.phases[0].random_percent, None);
        let (t, _) = one("[a]\nrw=randread\nsize=1m\npercentage_random=100\n");
        assert_eq!(t.phases[0].random_percent, None);
        let (t, notes) = one("[a]\nrw=read\nsize=1m\npercentage_random=30\n");
        assert_eq!(t.phases[0].random_percent, None);
        assert!(
            notes
                .iter()
                .any(|n| n
                    .contains("percentage_random=30 on a sequential job: no effect, as in fio")),
            "{notes:?}"
        );
        assert!(!notes.iter().any(|n| crate::fio::options::is_difference(n)), "{notes:?}");
        let (t, _) = one("[a]\nrw=randread\nsize=1m\npercentage_random=30\nloops=2\n");
        assert!(t.notes.iter().any(|n| n.contains("[differs from fio: random-share-loops]")));
        let (t, _) = one("[a]\nrw=randread\nsize=1m\npercentage_random=30\n");
        assert!(!t.notes.iter().any(|n| crate::fio::options::is_difference(n)), "{:?}", t.notes);
    }

    #[test]
    fn bad_shares_are_refused_with_the_line() {
        let e = error("[a]\nrw=randread\nsize=1m\npercentage_random=101\n");
        assert!(e.starts_with("t.fio:4: "), "{e}");
        assert!(e.contains("percentage_random") && e.contains("above 100"), "{e}");
        let e = error("[a]\nrw=randread\nsize=1m\n\npercentage_random=half\n");
        assert!(e.starts_with("t.fio:5: ") && e.contains("not a whole percentage"), "{e}");
    }

    #[test]
    fn the_translated_workload_resolves_to_the_phases_shares() {
        let text = "[a]\nrw=randrw\nsize=1m\npercentage_random=30,60\n";
        let t = crate::fio::translate::translate(text, "t.fio", "t", &|_| None).unwrap();
        let ctx = crate::workload::validate::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let suite = crate::workload::validate::resolve(&t.spec, "t.fio", &ctx).unwrap();
        assert_eq!(suite.tests[0].phases[0].random_percent, Some([30, 60]));
    }
}
