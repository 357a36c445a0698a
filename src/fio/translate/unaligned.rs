//! fio's `bs_unaligned` (alias `blocksize_unaligned`): whether a drawn block size is rounded
//! down to a multiple of the job's smallest block size. A module of its own because the flag
//! reaches both ways fio draws sizes: in fio 3.33 (`io_u.c`, `get_next_buflen`) a `bsrange`
//! draw `MIN + ⌊MAX × u⌋` and a `bssplit` size are both rounded down to a multiple of the
//! direction's smallest size (`min_bs`: `bsrange`'s MIN, the smallest size `bssplit` names,
//! 0% ones too) unless `bs_unaligned` is set, then capped at MAX. So without it
//! `bssplit=4k/50:6k/50` issues 4 KiB ops only (checked under strace: 16 MiB read in 4096
//! ops of 4 KiB), and with it `bsrange=4k-16k` issues every byte count from 4096 to 16383
//! and 16384 a quarter of the time (the model's [`SizeDist::UnalignedRange`]), sequential
//! offsets following on unaligned and random ones still multiples of `blockalign` (MIN).
//! A single block size is never rounded (no effect).

use super::{Dir, FioError, Job};
use crate::fio::options;
use crate::fio::value::{parse_size, split_rw};
use crate::model::job::SizeDist;

/// The job's read and write size laws, `dists` as `bs`, `bsrange` or `bssplit` (`given`) made
/// them, with fio's rounding, or without it under `bs_unaligned`.
pub(super) fn sizes(
    job: &Job,
    rw: Dir,
    given: Option<&str>,
    dists: (SizeDist, SizeDist),
    notes: &mut Vec<String>,
) -> Result<(SizeDist, SizeDist), FioError> {
    let unaligned = job.bool("bs_unaligned")?.unwrap_or(false);
    match given {
        Some("bsrange") if unaligned => {
            if !rw.random() {
                notes.push(options::difference("unaligned-end"));
            }
            Ok((unaligned_range(dists.0), unaligned_range(dists.1)))
        }
        Some("bssplit") if !unaligned => {
            let (v, line) = job.str("bssplit")?.unwrap_or(("", 0));
            let smallest =
                split_rw(v, None, |p| Ok(smallest(p))).map_err(|m| job.err("bssplit", line, m))?;
            let (r, w) = (round_split(dists.0, smallest.0), round_split(dists.1, smallest.1));
            for (was, now, dir) in [(dists.0, r, rw.reads()), (dists.1, w, rw.writes())] {
                if dir && was != now {
                    notes.push(format!("bssplit={v}: without bs_unaligned fio rounds each size down to a multiple of the smallest ({} B here), and so does fsbench: sizes {:?} with weights as given", now.min(), now.entries().iter().map(|e| e.0).collect::<Vec<_>>()));
                }
            }
            Ok((r, w))
        }
        _ => {
            if unaligned && given != Some("bssplit") {
                notes.push("bs_unaligned with one block size: no effect, as in fio (only bsrange and bssplit sizes are rounded)".into());
            }
            Ok(dists)
        }
    }
}

/// fio 3.33 fails a job whose unaligned `bsrange` sizes meet O_DIRECT (EINVAL at its first
/// I/O of an odd size, after "bs_unaligned may not work with raw io"); refused before it runs.
pub(super) fn check_direct(job: &Job, direct: bool) -> Result<(), FioError> {
    let unaligned = job.bool("bs_unaligned")?.unwrap_or(false);
    if direct && unaligned && job.get("bsrange").is_some() {
        return Err(job.err("bs_unaligned", job.line("bs_unaligned"), "with bsrange and direct=1: the sizes are any number of bytes, and fio 3.33 fails such a job at its first I/O of an odd size (EINVAL, after \"bs_unaligned may not work with raw io\"); drop bs_unaligned or direct"));
    }
    Ok(())
}

/// A `bsrange` part as fio draws it unaligned: its aligned split spans MIN to MAX.
fn unaligned_range(d: SizeDist) -> SizeDist {
    match (d.min(), d.max()) {
        (min, max) if min < max => SizeDist::UnalignedRange { min, max },
        _ => d,
    }
}

/// The smallest size a `bssplit` part names, a 0% one too (fio's `min_bs`); None when one does
/// not parse (the split's own parse said so already).
fn smallest(part: &str) -> Option<u64> {
    part.split(':')
        .map(|e| e.split('/').next().unwrap_or("").trim())
        .map(|s| parse_size(s).ok())
        .try_fold(u64::MAX, |m, s| s.map(|s| m.min(s)))
        .filter(|m| *m > 0 && *m != u64::MAX)
}

/// A split with each size rounded down to a multiple of `min`, sizes that meet merged.
fn round_split(d: SizeDist, min: Option<u64>) -> SizeDist {
    let (SizeDist::Split { .. }, Some(min)) = (d, min) else {
        return d;
    };
    let mut entries: Vec<(u64, u32)> = Vec::new();
    for (size, w) in d.entries() {
        let size = (size - size % min).max(min);
        match entries.iter_mut().find(|e| e.0 == size) {
            Some(e) => e.1 += w,
            None => entries.push((size, w)),
        }
    }
    match entries.as_slice() {
        [(size, _)] => SizeDist::Fixed(*size),
        _ => SizeDist::split(&entries).unwrap_or(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::translate::tests::one;
    use crate::workload::size::{Bytes, SizeDistSpec};

    fn error(text: &str) -> String {
        crate::fio::translate::translate(text, "t.fio", "t", &|_| None).unwrap_err().to_string()
    }

    #[test]
    fn bssplit_sizes_round_down_to_the_smallest_unless_unaligned() {
        let split = SizeDist::split(&[(4096, 50), (6144, 30), (8192, 20)]).unwrap();
        let r = round_split(split, Some(4096));
        assert_eq!(r.entries(), vec![(4096, 80), (8192, 20)]);
        assert_eq!(round_split(split, Some(2048)), split);
        assert_eq!(
            round_split(SizeDist::split(&[(4096, 50), (6144, 50)]).unwrap(), Some(4096)),
            SizeDist::Fixed(4096)
        );
        assert_eq!(smallest("4k/50:6k/50"), Some(4096));
        assert_eq!(smallest("8k/100:2k/0"), Some(2048), "a 0% size counts, as fio's min_bs");
        let (t, notes) = one("[a]\nrw=read\nsize=1m\nbssplit=4k/50:6k/50\n");
        assert_eq!(t.phases[0].pattern[0].size, Some(SizeDistSpec::Fixed(Bytes(4096))));
        assert!(notes.iter().any(|n| n.contains("rounds each size down")), "{notes:?}");
        let (t, _) = one("[a]\nrw=read\nsize=1m\nbssplit=4k/50:6k/50\nbs_unaligned\n");
        let Some(SizeDistSpec::Split { split }) = &t.phases[0].pattern[0].size else {
            panic!("{:?}", t.phases[0].pattern[0].size)
        };
        assert_eq!(split.iter().map(|e| e.size.0).collect::<Vec<_>>(), [4096, 6144]);
    }

    #[test]
    fn an_unaligned_bsrange_is_fios_law_and_a_noted_end() {
        let (t, _) = one("[a]\nrw=read\nsize=1m\nbsrange=4k-16k\nblocksize_unaligned=1\n");
        assert_eq!(
            t.phases[0].pattern[0].size,
            Some(SizeDistSpec::UnalignedRange { unaligned_range: [Bytes(4096), Bytes(16384)] })
        );
        assert!(t.notes.iter().any(|n| n.contains("[differs from fio: unaligned-end]")));
        let (t, _) = one("[a]\nrw=randread\nsize=1m\nbsrange=4k-16k\nbs_unaligned\n");
        assert!(matches!(t.phases[0].pattern[0].size, Some(SizeDistSpec::UnalignedRange { .. })));
        assert_eq!(t.phases[0].pattern[0].align.map(|a| a.0), Some(4096), "offsets stay aligned");
        assert!(!t.notes.iter().any(|n| n.contains("unaligned-end")), "{:?}", t.notes);
        // One size: nothing to round.
        let (t, notes) = one("[a]\nrw=read\nsize=1m\nbs=6k\nbs_unaligned\n");
        assert_eq!(t.phases[0].pattern[0].size, Some(SizeDistSpec::Fixed(Bytes(6144))));
        assert!(notes.iter().any(|n| n.contains("no effect, as in fio")), "{notes:?}");
    }

    #[test]
    fn direct_unaligned_ranges_and_bad_flags_are_refused_with_the_line() {
        let e = error("[a]\nrw=read\nsize=1m\nbsrange=4k-16k\nbs_unaligned\ndirect=1\n");
        assert!(e.starts_with("t.fio:5: ") && e.contains("EINVAL"), "{e}");
        let e = error("[a]\nrw=read\nsize=1m\nbsrange=4k-16k\nbs_unaligned=maybe\n");
        assert!(e.starts_with("t.fio:5: ") && e.contains("is not 0 or 1"), "{e}");
    }
}
