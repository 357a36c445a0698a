//! `direct=1` with small or odd block sizes. fio issues O_DIRECT ops of any size it is given
//! (512-byte and 1 KiB ones in its iometer example) and the kernel accepts them when they are
//! multiples of the file's direct-I/O alignment: 512 bytes on ext4 and xfs on most devices,
//! 4096 on btrfs and on 4Kn devices. The target is not known when a job file is translated, so
//! fsbench checks the sizes and offsets against the job's file when the job starts, before any
//! I/O (`engine::direct`); fio fails at its first I/O instead (EINVAL). Sizes that no block
//! device can take (not a multiple of 512) get a note here, so `--print-workload` says so.

use super::{Blocks, Dir};

/// The smallest logical block size of a Linux block device (the kernel's `SECTOR_SIZE`).
const SECTOR: u64 = 512;

/// A note for a direct job whose sizes or random-offset alignment are not multiples of 512
/// bytes, for the directions it issues; nothing otherwise.
pub(super) fn note(direct: bool, rw: Dir, b: &Blocks, notes: &mut Vec<String>) {
    if !direct {
        return;
    }
    let mut odd = Vec::new();
    for (on, word, dist, align) in [
        (rw.reads(), "reads", &b.read_dist, b.read_align),
        (rw.writes(), "writes", &b.write_dist, b.write_align),
    ] {
        if !on {
            continue;
        }
        // Every size of a bssplit is a multiple of their greatest common divisor.
        let g = dist.granule().unwrap_or(1);
        if g % SECTOR != 0 {
            odd.push(format!("{word} in multiples of {g} bytes"));
        } else if rw.random() && align % SECTOR != 0 {
            odd.push(format!("{word} at offsets aligned to {align} bytes"));
        }
    }
    if !odd.is_empty() {
        notes.push(format!(
            "direct=1 with {}: O_DIRECT needs sizes and offsets in multiples of the file's direct-I/O alignment (512 bytes or more on every block device); fsbench checks them against the job's file before any I/O and refuses the job, naming that alignment, where fio fails at its first I/O (EINVAL)",
            odd.join(" and ")
        ));
    }
}

#[cfg(test)]
mod tests {

    use crate::fio::translate::tests::one;

    #[test]
    fn only_sizes_no_device_can_take_get_a_note() {
        // 512-byte and 1 KiB direct ops (fio's iometer job): accepted as they are, no note.
        let (t, notes) = one("[a]\nrw=randrw\nbssplit=512/10:1k/5:4k/85\ndirect=1\nsize=1m\n");
        assert_eq!(t.direct, Some(true));
        assert!(!notes.iter().any(|n| n.contains("direct=1 with")), "{notes:?}");
        let (_, notes) = one("[a]\nrw=randread\nbs=512\ndirect=1\nsize=1m\n");
        assert!(notes.is_empty(), "{notes:?}");
        // 100 bytes: accepted, with a note saying the file's alignment decides at run time.
        let (t, notes) = one("[a]\nrw=randread\nbs=100\ndirect=1\nsize=1m\n");
        assert_eq!(t.direct, Some(true));
        let n = notes.iter().find(|n| n.contains("direct=1 with")).expect("a note");
        assert!(
            n.contains("reads in multiples of 100 bytes") && n.contains("before any I/O"),
            "{n}"
        );
        assert!(!crate::fio::options::is_difference(n), "not a difference of meaning: {n}");
        // An odd alignment of random offsets, and only the directions the job issues.
        let (_, notes) =
            one("[a]\nrw=randwrite\nbs=4k,100\nblockalign=4k,1000\ndirect=1\nsize=1m\n");
        let n = notes.iter().find(|n| n.contains("direct=1 with")).expect("a note");
        assert!(n.contains("writes in multiples of 100 bytes") && !n.contains("reads"), "{n}");
        let (_, notes) = one("[a]\nrw=randwrite\nbs=4k\nblockalign=1000\ndirect=1\nsize=1m\n");
        assert!(
            notes.iter().any(|n| n.contains("writes at offsets aligned to 1000 bytes")),
            "{notes:?}"
        );
        // Buffered: no note.
        let (_, notes) = one("[a]\nrw=randread\nbs=100\nsize=1m\n");
        assert!(!notes.iter().any(|n| n.contains("direct=1 with")), "{notes:?}");
    }
}
