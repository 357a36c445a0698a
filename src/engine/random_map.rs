//! fio's random map for a data file's random offsets (the test's `random_map`).
//!
//! Without it fsbench draws each random offset with replacement, so in a pass over a file of
//! n blocks about n/e blocks are never touched and as many are touched twice or more; a
//! buffered random read then re-reads blocks it has just cached, which fio (whose default is
//! to keep a map of the blocks done and touch each once per pass) does not. That made a
//! buffered `randread` run 40 times faster under fsbench than under fio on the same job.
//!
//! fio keeps a bitmap (or walks an LFSR); fsbench walks a keyed permutation of the file's
//! slots ([`Permutation`], the one `pick = "shuffle"` uses): no memory beyond four keys, no
//! allocation, a few multiplications per op, and exactly one visit per slot per pass. After
//! the last slot of a pass it starts again with a permutation keyed anew, as fio's map is
//! cleared and refilled in another order. The order is fsbench's own, not fio's: the set of
//! offsets of each pass is the same.

use super::fileset::Permutation;

/// One thread's map over one file: which slot comes next, in which order.
#[derive(Debug, Clone, Copy)]
pub struct RandomMap {
    perm: Permutation,
    /// Bytes between slots (the ops' `align`).
    align: u64,
    /// Index of the next slot of this pass in the permutation.
    next: u64,
    /// Passes completed.
    passes: u64,
    seed: u64,
}

impl RandomMap {
    /// The map of a file whose random ops of `size` bytes start at multiples of `align`
    /// (`size <= file_size`, `align >= 1`, checked by validation): slots
    /// `0, align, 2 align, ...` as long as the op fits in the file.
    pub fn new(file_size: u64, size: u64, align: u64, seed: u64) -> RandomMap {
        let align = align.max(1);
        let slots = file_size.saturating_sub(size) / align + 1;
        RandomMap { perm: Permutation::new(slots, seed), align, next: 0, passes: 0, seed }
    }

    /// Slots per pass.
    pub fn slots(&self) -> u64 {
        self.perm.len()
    }

    /// Passes completed.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Whether the offset just drawn was the last of a pass.
    #[inline]
    pub fn pass_done(&self) -> bool {
        self.next == 0 && self.passes > 0
    }

    /// The next offset: each slot's once per pass.
    #[inline]
    pub fn next_offset(&mut self) -> u64 {
        let slot = self.perm.get(self.next);
        self.next += 1;
        if self.next == self.perm.len() {
            self.next = 0;
            self.passes += 1;
            // A new order for the next pass (four draws of a seeded generator, no allocation).
            let key = self.seed ^ self.passes.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            self.perm = Permutation::new(self.perm.len(), key);
        }
        slot * self.align
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_slot_once_per_pass_and_each_pass_in_a_new_order() {
        // 1 MiB of 4 KiB blocks: 256 slots.
        let mut m = RandomMap::new(1 << 20, 4096, 4096, 9);
        assert_eq!(m.slots(), 256);
        let mut orders = Vec::new();
        for pass in 0..3 {
            let offs: Vec<u64> = (0..256).map(|_| m.next_offset()).collect();
            let mut sorted = offs.clone();
            sorted.sort();
            let want: Vec<u64> = (0..256).map(|k| k * 4096).collect();
            assert_eq!(sorted, want, "pass {pass}: every block once");
            assert_eq!(m.passes(), pass + 1);
            orders.push(offs);
        }
        assert_ne!(orders[0], orders[1], "a new order each pass");
        let in_place = orders[0].iter().enumerate().filter(|(k, o)| **o == *k as u64 * 4096);
        assert!(in_place.count() < 16, "a shuffle, not the file's order");
    }

    #[test]
    fn slots_are_the_aligned_offsets_where_the_op_fits() {
        // 8K ops at 4K alignment in a 40K file: offsets 0..=32K, 9 slots.
        let mut m = RandomMap::new(40 << 10, 8 << 10, 4 << 10, 1);
        assert_eq!(m.slots(), 9);
        let mut offs: Vec<u64> = (0..9).map(|_| m.next_offset()).collect();
        offs.sort();
        assert_eq!(offs, (0..9).map(|k| k * 4096).collect::<Vec<_>>());
        // A partial last block is not a slot (fio's map ignores it too).
        assert_eq!(RandomMap::new(10_000, 4096, 4096, 1).slots(), 2);
        assert_eq!(RandomMap::new(4096, 4096, 4096, 1).slots(), 1);
    }
}
