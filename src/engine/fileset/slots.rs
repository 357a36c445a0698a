//! A fileset thread's slots: which of them hold a file ([`SlotState`], a bitset kept across
//! the phases of a repetition), what each file holds under `--verify` ([`Content`]), which slots a
//! thread owns ([`slots_of`]), and the keyed permutation `pick = "shuffle"` walks
//! ([`Permutation`]).

/// Which slots of one thread hold a file. Kept across the phases of a repetition.
#[derive(Debug, Clone)]
pub struct SlotState {
    bits: Vec<u64>,
    n: u64,
    live: u64,
    /// `--verify`: per slot, whose verified content its file holds and how long it is.
    contents: Vec<Content>,
}

/// `--verify`: what a slot's file holds: the verified content of file `file`
/// ([`crate::engine::verify`]), `size` bytes of it. A file keeps its content when renamed to another
/// slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Content {
    /// The file id the content was made for (the global slot it was created in).
    pub file: u64,
    /// Bytes written.
    pub size: u64,
}

impl SlotState {
    /// `n` empty slots.
    pub fn new(n: u64) -> SlotState {
        SlotState { bits: vec![0; n.div_ceil(64) as usize], n, live: 0, contents: Vec::new() }
    }

    /// `n` empty slots that also remember their files' verified content (`--verify`).
    pub fn verified(n: u64) -> SlotState {
        SlotState { contents: vec![Content::default(); n as usize], ..SlotState::new(n) }
    }

    /// The verified content of slot `s`'s file (`--verify` only).
    #[inline]
    pub fn content(&self, s: u64) -> Content {
        self.contents.get(s as usize).copied().unwrap_or_default()
    }

    /// Record slot `s`'s content (no-op without `--verify`).
    #[inline]
    pub fn set_content(&mut self, s: u64, c: Content) {
        if let Some(x) = self.contents.get_mut(s as usize) {
            *x = c;
        }
    }

    /// Number of slots.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// No slots at all.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Slots holding a file.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// Whether slot `s` holds a file.
    #[inline]
    pub fn get(&self, s: u64) -> bool {
        self.bits[(s / 64) as usize] & (1 << (s % 64)) != 0
    }

    /// Mark slot `s`.
    #[inline]
    pub fn set(&mut self, s: u64, present: bool) {
        let w = &mut self.bits[(s / 64) as usize];
        let m = 1u64 << (s % 64);
        if present && *w & m == 0 {
            *w |= m;
            self.live += 1;
        } else if !present && *w & m != 0 {
            *w &= !m;
            self.live -= 1;
        }
    }

    /// The first slot at or after `from` (wrapping) whose state is `want`, scanning a word at a
    /// time.
    pub fn find_from(&self, from: u64, want: bool) -> Option<u64> {
        if self.n == 0 || (want && self.live == 0) || (!want && self.live == self.n) {
            return None;
        }
        let from = from % self.n;
        let words = self.bits.len();
        let start_w = (from / 64) as usize;
        for k in 0..=words {
            let wi = (start_w + k) % words;
            let mut w = if want { self.bits[wi] } else { !self.bits[wi] };
            if k == 0 {
                w &= !0u64 << (from % 64);
            }
            if wi == words - 1 && self.n % 64 != 0 {
                w &= (1u64 << (self.n % 64)) - 1;
            }
            if w != 0 {
                return Some(wi as u64 * 64 + w.trailing_zeros() as u64);
            }
            if k == words {
                break;
            }
        }
        // The part of the first word before `from`.
        let w0 = if want { self.bits[start_w] } else { !self.bits[start_w] };
        let low = w0 & ((1u64 << (from % 64)) - 1);
        (low != 0).then(|| start_w as u64 * 64 + low.trailing_zeros() as u64)
    }

    /// Local slots holding a file, in order (for cleanup).
    pub fn iter_live(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.n).filter(|s| self.get(*s))
    }
}

/// A keyed pseudo-random permutation of `0..n` (a 4-round Feistel network on the smallest
/// even-bit domain holding n, with cycle walking): `pick = "shuffle"` visits every slot once per
/// pass, in random order, with no memory.
#[derive(Debug, Clone, Copy)]
pub struct Permutation {
    n: u64,
    half: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// A permutation of `0..n` chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half = bits.div_ceil(2).max(1);
        let mut r = fastrand::Rng::with_seed(seed);
        Permutation { n, half, keys: [r.u64(..), r.u64(..), r.u64(..), r.u64(..)] }
    }

    /// n: the permutation is of `0..n`.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Of nothing (n = 0).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn round(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half) - 1;
        let (mut l, mut r) = (x >> self.half, x & mask);
        for k in self.keys {
            let f = (r ^ k).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    /// The image of `i` (< n).
    pub fn get(&self, i: u64) -> u64 {
        let mut x = i;
        loop {
            x = self.round(x);
            if x < self.n {
                return x;
            }
        }
    }
}

/// Slots thread `k` of `t` owns out of `count` (slots k, k+t, ...).
pub fn slots_of(count: u64, k: u64, t: u64) -> u64 {
    if k >= count {
        0
    } else {
        (count - k).div_ceil(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_partition_the_set() {
        for (count, t) in [(10u64, 3u64), (1, 1), (7, 7), (1_000_000, 16)] {
            let sum: u64 = (0..t).map(|k| slots_of(count, k, t)).sum();
            assert_eq!(sum, count);
        }
        assert_eq!(slots_of(10, 0, 3), 4);
        assert_eq!(slots_of(10, 2, 3), 3);
    }

    #[test]
    fn bitset_finds_in_both_directions() {
        let mut s = SlotState::new(130);
        assert_eq!(s.find_from(0, true), None);
        assert_eq!(s.find_from(5, false), Some(5));
        s.set(3, true);
        s.set(129, true);
        assert_eq!(s.live(), 2);
        assert_eq!(s.find_from(4, true), Some(129));
        assert_eq!(s.find_from(129, true), Some(129));
        assert_eq!(s.find_from(130, true), Some(3), "wraps");
        for k in 0..130 {
            s.set(k, true);
        }
        assert_eq!(s.find_from(7, false), None);
        s.set(2, false);
        assert_eq!(s.find_from(7, false), Some(2), "wraps to the part before `from`");
        assert_eq!(s.iter_live().count(), 129);
    }

    #[test]
    fn permutation_visits_every_index_once() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.get(i);
                assert!(x < n);
                assert!(!seen[x as usize], "n={n}: {x} twice");
                seen[x as usize] = true;
            }
        }
        let p = Permutation::new(1000, 1);
        let moved = (0..1000).filter(|i| p.get(*i) != *i).count();
        assert!(moved > 900, "a shuffle, not the identity: {moved}");
    }
}
