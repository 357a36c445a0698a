//! fio's offset modifier, `rw=WORD:N`, and `rw_sequencer`: why a module of its own is that
//! the modifier means two different things. On a sequential job N is a size skipped after
//! each I/O (negative: backwards, `rw=read:-8k`), which the pattern entry's `skip` carries and
//! which changes how many bytes a size-bound job moves (fio ends such a job when an I/O ends
//! exactly at the end of the file, and a skip past the end starts again at the start); on a
//! random job N is how many I/Os share one random offset: `rw_sequencer=identical` sends the
//! same offset N times (a random entry, then N-1 at the `last` offset), and
//! `rw_sequencer=sequential` (fio's default) runs N-1 sequential I/Os on from it, which
//! fsbench cannot say (refused).
//!
//! Checked against fio 3.33 under strace on a 64 KiB file with bs=4k: `read:8k` reads at 0,
//! 12k, ... 60k and stops (6 reads); `write:4k` writes at 0, 8k, ... 56k and again from 0
//! (16 writes); `read:-8k` reads at 0, then 56k, 52k, ... 0 (16 reads);
//! `randread:4` with `rw_sequencer=identical` reads each of 4 random offsets 4 times.

use super::{read_share, Blocks, Dir, Files, FioError, Job};
use crate::model::job::SizeDist;
use crate::workload::size::SizeExpr;
use crate::workload::spec::{AmountSpec, OpSpec};

/// The `:N` of a job's `rw`, as fsbench runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Modifier {
    /// Sequential jobs: bytes skipped after each I/O (negative: backwards).
    pub skip: i64,
    /// Random jobs: each random offset is used this many times (`rw_sequencer=identical`).
    pub identical: u32,
}

/// The job's `rw` suffix and `rw_sequencer`, for the direction `rw` (the word before `:`).
pub(super) fn modifier(job: &Job, rw: Dir) -> Result<Modifier, FioError> {
    let identical = match job.str("rw_sequencer")? {
        None | Some(("sequential", _)) => false,
        Some(("identical", _)) => true,
        Some((v, line)) => {
            return Err(job.err(
                "rw_sequencer",
                line,
                format!("`{v}`: use sequential or identical"),
            ))
        }
    };
    let Some((v, line)) = job.str("rw")? else {
        return Ok(Modifier::default());
    };
    let Some((word, n)) = v.split_once(':') else {
        return Ok(Modifier::default());
    };
    let n = n.trim();
    if rw.random() {
        let count: u32 = n.parse().map_err(|_| {
            job.err("rw", line, format!("`{v}`: after a random rw, `:N` is a count of I/Os"))
        })?;
        return match count {
            0 | 1 => Ok(Modifier::default()),
            _ if rw == Dir::RandMix => Err(job.err("rw", line, format!("`{v}`: fsbench draws each op's direction of randrw on its own and cannot give several of them one offset; use randread:{count} or randwrite:{count}"))),
            _ if identical => Ok(Modifier { skip: 0, identical: count }),
            _ => Err(job.err("rw", line, format!("`{v}` with rw_sequencer=sequential (fio's default): fio runs {} I/Os on sequentially from each random offset, and fsbench cannot continue sequentially from a random offset; use rw_sequencer=identical (the same offset {count} times) or drop `:{count}`", count - 1))),
        };
    }
    let (neg, mag) = match n.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, n.strip_prefix('+').unwrap_or(n)),
    };
    let bytes = super::parse_size(mag).map_err(|m| job.err("rw", line, format!("`{v}`: {m}")))?;
    let skip = i64::try_from(bytes)
        .map_err(|_| job.err("rw", line, format!("`{v}`: the skip is too large")))?;
    let skip = if neg { -skip } else { skip };
    if skip != 0 && rw == Dir::SeqMix {
        return Err(job.err("rw", line, format!("`{word}:{n}`: fsbench skips within reads and writes alike but cannot yet check fio's skip of a mixed job; use rw={word} without `:N`, or separate read:N and write:N jobs")));
    }
    if skip != 0 && identical {
        return Err(job.err("rw_sequencer", job.line("rw_sequencer"), format!("identical with the sequential `{v}`: fsbench skips after each I/O (rw_sequencer=sequential); remove rw_sequencer")));
    }
    Ok(Modifier { skip, identical: 0 })
}

/// `offset` (a size; a percentage is refused) and `offset_increment`, checked; `offset_align`
/// only read (fio aligns only a percentage offset).
pub(super) fn offsets(job: &Job) -> Result<(u64, u64), FioError> {
    let offset = match job.str("offset")? {
        None => 0,
        Some((v, line)) if v.trim_end().ends_with('%') => {
            return Err(job.err("offset", line, format!("`{v}`: fio takes a percentage of the file's real size, which fsbench does not know before the run; give a size (offset=64m)")))
        }
        Some((v, line)) => super::parse_size_expr(v).map_err(|m| job.err("offset", line, m))?,
    };
    let increment = job.size("offset_increment")?.map_or(0, |v| v.0);
    job.size("offset_align")?;
    Ok((offset, increment))
}

/// The pattern with the modifier: the skip on its sequential entries, or each random entry
/// followed by `identical - 1` ops at its offset.
pub(super) fn apply(m: Modifier, pattern: Vec<OpSpec>) -> Vec<OpSpec> {
    if m.identical > 1 {
        return pattern
            .into_iter()
            .flat_map(|o| {
                let again = OpSpec {
                    size: None,
                    offset: Some("last".into()),
                    align: None,
                    repeat: Some(m.identical - 1),
                    ..o.clone()
                };
                [o, again]
            })
            .collect();
    }
    if m.skip != 0 {
        return pattern.into_iter().map(|o| OpSpec { skip: Some(m.skip), ..o }).collect();
    }
    pattern
}

/// `rw=rw` (`readwrite`): one sequential entry (`read`, the sequential `entry`) whose each op is
/// a write with fio's probability; the engine keeps the writes' position apart from the
/// reads', as fio's `last_pos[ddir]` (fio 3.33 under strace, rwmixread=50: reads at 0, 4k, 8k,
/// writes at 0, 4k, ...). Reads and writes of different sizes are refused.
pub(super) fn mixed(job: &Job, b: &Blocks, entry: OpSpec) -> Result<Vec<OpSpec>, FioError> {
    if (b.read_dist, b.read_align) != (b.write_dist, b.write_align) {
        let k = if job.get("bssplit").is_some() { "bssplit" } else { "bs" };
        return Err(job.err(k, job.line(k), "rw (sequential reads and writes) with reads and writes of different sizes: fsbench draws the direction of each op of one size; give one size"));
    }
    Ok(vec![match read_share(job)? {
        0 => OpSpec { op: Some("write".into()), ..entry },
        100 => entry,
        r => OpSpec { write_percent: Some((100 - r) as u8), ..entry },
    }])
}

/// A size-bound sequential job with a skip: the bytes fio moves before it stops (see
/// [`fio_bytes`]) on the job's file, each of its `loops`. A time-based job wraps as fio's does
/// and needs nothing here.
pub(super) fn fio_amount(
    job: &Job,
    m: Modifier,
    rw: Dir,
    b: &Blocks,
    files: &Files,
    amount: &mut AmountSpec,
) -> Result<(), FioError> {
    if m.skip == 0 {
        return Ok(());
    }
    let dist = if rw.reads() { b.read_dist } else { b.write_dist };
    let SizeDist::Fixed(bs) = dist else {
        return Err(job.err("rw", job.line("rw"), "a skip (`:N`) with several block sizes: fsbench cannot count where fio's job stops; give bs one size"));
    };
    let Some(SizeExpr::Bytes(total)) = amount.bytes else {
        return Ok(());
    };
    let once = files.io_size.or(files.size).unwrap_or(files.file_bytes);
    let loops = total.checked_div(once).unwrap_or(1).max(1);
    let moved = fio_bytes(files.file_bytes, bs, m.skip, once);
    amount.bytes = Some(SizeExpr::Bytes(moved.saturating_mul(loops)));
    Ok(())
}

/// The bytes a size-bound sequential job of `bs`-byte I/Os with `skip` moves in a region of
/// `region` bytes before fio stops it, at most `cap`: fio ends the job when an I/O ends at the
/// region's end (`read:8k` on 64 KiB reads 6 blocks); when a skip jumps past the end first the
/// job starts again at 0 and runs to its `cap`, and a job that moves backwards never ends early.
pub(super) fn fio_bytes(region: u64, bs: u64, skip: i64, cap: u64) -> u64 {
    if bs >= region {
        return cap.min(region);
    }
    let step = bs as i128 + skip as i128;
    if step <= 0 {
        return cap;
    }
    let (region_i, bs_i) = (region as i128, bs as i128);
    // The first I/O that reaches the end, and the first whose skip jumps past it.
    let end_at = (region_i - bs_i + step - 1) / step;
    let jump_at = (region_i + step - 1) / step - 1;
    if skip > 0 && jump_at < end_at {
        return cap;
    }
    let last = (region_i - end_at * step).min(bs_i);
    let total = end_at * bs_i + last;
    cap.min(u64::try_from(total).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::fio_bytes;
    use crate::model::job::{next_sequential, Wrap};

    /// The bytes the engine moves, I/O by I/O, until an I/O reaches the end or `cap`.
    fn simulate(region: u64, bs: u64, skip: i64, cap: u64) -> u64 {
        let (mut pos, mut bytes) = (0, 0);
        loop {
            let len = bs.min(region - pos);
            bytes += len;
            let (next, wrap) = next_sequential(pos, len, skip, region);
            if bytes >= cap || wrap == Wrap::End {
                return bytes.min(cap);
            }
            pos = next;
        }
    }

    const K: u64 = 1024;

    #[test]
    fn fio_bytes_match_fio_3_33_runs() {
        // Measured with strace on fio 3.33, 64 KiB file, bs=4k.
        assert_eq!(fio_bytes(64 * K, 4 * K, 8 * 1024, 64 * K), 24 * K, "read:8k: 6 reads");
        assert_eq!(fio_bytes(64 * K, 4 * K, 4 * 1024, 64 * K), 64 * K, "write:4k wraps");
        assert_eq!(fio_bytes(64 * K, 4 * K, -8 * 1024, 64 * K), 64 * K, "read:-8k");
        assert_eq!(fio_bytes(64 * K, 4 * K, 0, 64 * K), 64 * K);
        // Each case agrees with stepping the engine's own rule I/O by I/O.
        for region in [64 * K, 100 * K, 129 * K] {
            for bs in [K, 4 * K, 12 * K] {
                for skip in [-20_000i64, -8192, -2048, 0, 1000, 4096, 8192, 30_000] {
                    assert_eq!(
                        fio_bytes(region, bs, skip, 10 * region),
                        simulate(region, bs, skip, 10 * region),
                        "region {region} bs {bs} skip {skip}"
                    );
                }
            }
        }
    }
}
