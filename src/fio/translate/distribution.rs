//! fio's `random_distribution` for one job: checked as fio 3.33 checks it, then handed to the
//! test's `random_distribution` (fsbench draws from the same law; see `engine::skew`).
//!
//! Kept apart from the rest of the translator because it owns one option and its rules: a
//! skewed law turns fio's random map off, needs one block size (its slots), and is ignored by
//! a sequential job, as fio ignores it.

use super::{Blocks, Dir, Files, Job};
use crate::fio::options;
use crate::fio::FioError;
use crate::model::job::SizeDist;
use crate::model::skew::{RandomDist, ZoneSize};

/// The job's distribution in fio's syntax for the test (`None`: uniform), and whether it turns
/// the random map off (fio keeps no map with a skewed law).
pub(super) fn random_distribution(
    job: &Job,
    rw: Dir,
    b: &Blocks,
    files: &Files,
    notes: &mut Vec<String>,
) -> Result<Option<String>, FioError> {
    let Some((text, line)) = job.str("random_distribution")? else {
        return Ok(None);
    };
    let err = |m: String| job.err("random_distribution", line, m);
    let Some(dist) = RandomDist::parse(text).map_err(err)? else {
        return Ok(None);
    };
    if !rw.random() {
        // fio draws no random offsets for a sequential job, so the law has nothing to do.
        notes.push(format!("random_distribution={text}: no effect on a sequential job, as in fio"));
        return Ok(None);
    }
    let drawn = |d: SizeDist| !matches!(d, SizeDist::Fixed(_));
    let mixed = rw == Dir::RandMix && (b.read, b.read_align) != (b.write, b.write_align);
    if (rw.reads() && drawn(b.read_dist)) || (rw.writes() && drawn(b.write_dist)) || mixed {
        return Err(err(format!("`{text}` with several block sizes or alignments (bssplit, bsrange, bs=R,W): fsbench draws the law over slots of one size; give one bs")));
    }
    match &dist {
        RandomDist::Zoned { zones } => {
            let end: u64 = zones
                .iter()
                .map(|z| match z.size {
                    ZoneSize::Bytes(n) => n,
                    ZoneSize::Percent(_) => 0,
                })
                .sum();
            if end > files.file_bytes {
                return Err(err(format!("`{text}`: the zones end at {end} bytes, past the file's {} (fio fails such a job too)", files.file_bytes)));
            }
        }
        RandomDist::Zipf { center: Some(_), .. }
        | RandomDist::Pareto { center: Some(_), .. }
        | RandomDist::Normal { center: Some(_), .. } => {
            notes.push(format!(
                "random_distribution={text}: {}",
                options::difference("skew-placement")
            ));
        }
        _ => {}
    }
    Ok(Some(text.trim().to_string()))
}
