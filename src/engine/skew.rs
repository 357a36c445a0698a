//! Skewed random offsets (fio's `random_distribution`), drawn from tables made at setup.
//!
//! A data phase with a [`RandomDist`] draws each random op's slot from it instead of
//! uniformly. Everything that costs (Zipf's normalising sum over every slot, the zoned
//! percentage table) is computed once in [`Skew::new`], before the barrier; a draw is a few
//! floating-point operations or table look-ups with the worker's own generator: no
//! allocation, no lock.
//!
//! The law is fio's: the same ranks with the same probabilities (Gray et al.'s quick Zipf
//! approximation for `zipf`, the power transform for `pareto`, the mean of twelve uniform
//! draws plus a bounded deviation for `normal`, a percentage table for `zoned`). As in fio a
//! rank is spread over the file by a multiplicative hash (modulo the slot count; for a
//! power-of-two count every rank gets its own slot) and shifted by an offset (the center, or
//! a random one), so the hot blocks are scattered, not at the start. Which block is hot is
//! fsbench's own; the sorted hit count per block, the part a cache sees, is fio's.

use crate::model::skew::{RandomDist, ZoneSize};

/// The golden-ratio multiplier of Linux's 64-bit `hash_64` (which fio's hash follows): a
/// multiplication by it spreads ranks, with the same collisions modulo a slot count.
const SPREAD: u64 = 0x61c8_8646_80b5_83eb;

/// Uniform draws averaged by `normal` (fio's count).
const NORMAL_DRAWS: u64 = 12;

/// One thread's precomputed distribution over `slots` slots.
#[derive(Debug, Clone)]
pub struct Skew {
    slots: u64,
    law: Law,
}

#[derive(Debug, Clone)]
enum Law {
    Zipf {
        zetan: f64,
        alpha: f64,
        eta: f64,
        second: f64,
        off: u64,
    },
    Pareto {
        pow: f64,
        off: u64,
    },
    Normal {
        stddev: u64,
        off: u64,
    },
    /// Per access percent (100 entries): the zone's first slot and its slot count.
    Zoned {
        table: Box<[(u64, u64)]>,
    },
}

impl Skew {
    /// The tables for `dist` over a file of `slots` slots of `align` bytes (`slots >= 1`);
    /// `seed` places the hot ranks when the distribution gives no center.
    pub fn new(dist: &RandomDist, slots: u64, align: u64, seed: u64) -> Skew {
        let slots = slots.max(1);
        let n = slots as f64;
        let off = |center: Option<f64>| match center {
            Some(c) => ((c * n) as u64).min(slots - 1),
            None => fastrand::Rng::with_seed(seed ^ 0x05e3_da11).u64(0..slots),
        };
        let law = match *dist {
            RandomDist::Zipf { theta, center } => {
                // Summed from the smallest terms up, for precision on large files.
                let zetan: f64 = (1..=slots).rev().map(|i| (i as f64).powf(-theta)).sum();
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                let eta = (1.0 - (2.0 / n).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let alpha = 1.0 / (1.0 - theta);
                Law::Zipf { zetan, alpha, eta, second: zeta2, off: off(center) }
            }
            RandomDist::Pareto { h, center } => {
                Law::Pareto { pow: h.ln() / (1.0 - h).ln(), off: off(center) }
            }
            RandomDist::Normal { dev, center } => {
                let stddev =
                    if dev > 0.0 { ((n * dev / 100.0).ceil() as u64).min(slots / 2) } else { 0 };
                Law::Normal { stddev, off: center.map_or(0, |c| off(Some(c))) }
            }
            RandomDist::Zoned { ref zones } => {
                let mut table = Vec::with_capacity(100);
                let mut start = 0u64;
                for z in zones {
                    let len = match z.size {
                        ZoneSize::Percent(p) => (n * p / 100.0) as u64,
                        ZoneSize::Bytes(b) => b / align.max(1),
                    };
                    // A zone past the file's end is cut at it; one with accesses keeps a slot.
                    let first = start.min(slots - 1);
                    let len = len.min(slots - first).max(1);
                    for _ in 0..z.access {
                        table.push((first, len));
                    }
                    start = start.saturating_add(len);
                }
                Law::Zoned { table: table.into() }
            }
        };
        Skew { slots, law }
    }

    /// Slots the distribution spans.
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// The next slot (multiply by the ops' `align` for the offset).
    #[inline]
    pub fn next_slot(&self, rng: &mut fastrand::Rng) -> u64 {
        let n = self.slots;
        match self.law {
            Law::Zipf { zetan, alpha, eta, second, off } => {
                let u = rng.f64();
                let z = u * zetan;
                let rank = if z < 1.0 {
                    0
                } else if z < second {
                    1
                } else {
                    ((n as f64) * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                spread(rank, off, n)
            }
            Law::Pareto { pow, off } => {
                let rank = ((n - 1) as f64 * rng.f64().powf(pow)) as u64;
                spread(rank, off, n)
            }
            Law::Normal { stddev, off } => {
                let mut sum = 0u64;
                for _ in 0..NORMAL_DRAWS {
                    sum += rng.u64(0..=n);
                }
                let mut mid = sum.div_ceil(NORMAL_DRAWS) as i64;
                if stddev > 0 {
                    let mut dev = rng.u64(0..stddev) as i64 - (stddev / 2) as i64;
                    while dev + mid >= n as i64 {
                        dev /= 2;
                    }
                    mid = (mid + dev).max(0);
                }
                spread(mid as u64, off, n)
            }
            Law::Zoned { ref table } => {
                let (first, len) = table[rng.usize(0..table.len())];
                first + rng.u64(0..len)
            }
        }
    }
}

/// A rank's slot: hashed over the file and shifted, modulo the slot count.
#[inline]
fn spread(rank: u64, off: u64, n: u64) -> u64 {
    (rank.wrapping_mul(SPREAD) % n + off) % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::skew::Zone;

    /// Hits per slot of `draws` draws, sorted from the hottest.
    fn curve(s: &Skew, draws: u32) -> Vec<u32> {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut hits = vec![0u32; s.slots() as usize];
        for _ in 0..draws {
            hits[s.next_slot(&mut rng) as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        hits
    }

    /// Share of the hits in the hottest `frac` of the slots.
    fn top(hits: &[u32], frac: f64) -> f64 {
        let k = ((hits.len() as f64 * frac) as usize).max(1);
        let all: u32 = hits.iter().sum();
        f64::from(hits[..k].iter().sum::<u32>()) / f64::from(all)
    }

    /// The exact Zipf law's share of the `k` most probable of `n` ranks.
    fn zipf_share(theta: f64, n: u64, k: u64) -> f64 {
        let w = |i: u64| (i as f64).powf(-theta);
        (1..=k).map(w).sum::<f64>() / (1..=n).map(w).sum::<f64>()
    }

    #[test]
    fn zipf_hits_follow_the_zipf_law() {
        // 4096 slots (a power of two: every rank its own slot), 200k draws.
        let s = Skew::new(&RandomDist::Zipf { theta: 1.2, center: None }, 4096, 4096, 3);
        let c = curve(&s, 200_000);
        for frac in [0.01, 0.1] {
            let want = zipf_share(1.2, 4096, (4096.0 * frac) as u64);
            let got = top(&c, frac);
            assert!((got - want).abs() < 0.03, "top {frac}: {got:.3} vs the law's {want:.3}");
        }
        // The hottest slot is rank 0's: 1/zeta(n) of the draws.
        let want = zipf_share(1.2, 4096, 1);
        let got = f64::from(c[0]) / 200_000.0;
        assert!((got - want).abs() < 0.01, "hottest {got:.3} vs {want:.3}");
    }

    #[test]
    fn hot_slots_are_spread_over_the_file_and_the_center_moves_them() {
        let at = |center| {
            let s = Skew::new(&RandomDist::Zipf { theta: 1.2, center }, 1024, 4096, 3);
            let mut rng = fastrand::Rng::with_seed(1);
            let mut hits = vec![0u32; 1024];
            for _ in 0..50_000 {
                hits[s.next_slot(&mut rng) as usize] += 1;
            }
            let mut order: Vec<usize> = (0..1024).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(hits[i]));
            order
        };
        let c0 = at(Some(0.0));
        assert_eq!(c0[0], 0, "rank 0 at the center 0");
        let apart = c0[..4].windows(2).all(|w| w[0].abs_diff(w[1]) > 8);
        assert!(apart, "the next hottest are spread, not adjacent: {:?}", &c0[..4]);
        assert_eq!(at(Some(0.5))[0], 512, "rank 0 at the center 0.5");
    }

    #[test]
    fn pareto_and_normal_are_skewed_and_stay_in_the_file() {
        let p =
            curve(&Skew::new(&RandomDist::Pareto { h: 0.2, center: None }, 1000, 1, 1), 100_000);
        // pareto:0.2 (fio's classic "80/20"-like power law): a small part takes most hits.
        assert!(top(&p, 0.2) > 0.6, "pareto top 20%: {}", top(&p, 0.2));
        let g =
            curve(&Skew::new(&RandomDist::Normal { dev: 0.0, center: None }, 1024, 1, 1), 100_000);
        // The mean of twelve uniform draws: sd n/12, so the hottest 10% of the slots (±0.6 sd)
        // hold ~46% and 60% of them (±3.7 sd) nearly all.
        assert!(top(&g, 0.6) > 0.99, "{}", top(&g, 0.6));
        assert!((0.38..0.54).contains(&top(&g, 0.1)), "{}", top(&g, 0.1));
        assert_eq!(p.len(), 1000);
    }

    #[test]
    fn each_zone_gets_its_share_within_two_percent() {
        let zones = vec![
            Zone { access: 50, size: ZoneSize::Percent(5.0) },
            Zone { access: 30, size: ZoneSize::Percent(15.0) },
            Zone { access: 20, size: ZoneSize::Percent(80.0) },
        ];
        let s = Skew::new(&RandomDist::Zoned { zones }, 1000, 4096, 1);
        let mut rng = fastrand::Rng::with_seed(5);
        let mut per = [0u32; 3];
        for _ in 0..100_000 {
            let k = s.next_slot(&mut rng);
            assert!(k < 1000);
            per[if k < 50 {
                0
            } else if k < 200 {
                1
            } else {
                2
            }] += 1;
        }
        for (got, want) in per.iter().zip([0.5, 0.3, 0.2]) {
            let got = f64::from(*got) / 100_000.0;
            assert!((got - want).abs() < 0.02, "{per:?}");
        }
        // zoned_abs: bytes in slots of `align`; a zone past the end is cut at it.
        let zones = vec![
            Zone { access: 60, size: ZoneSize::Bytes(8192) },
            Zone { access: 40, size: ZoneSize::Bytes(1 << 30) },
        ];
        let s = Skew::new(&RandomDist::Zoned { zones }, 16, 4096, 1);
        let low = (0..10_000).filter(|_| s.next_slot(&mut rng) < 2).count();
        assert!((5800..6200).contains(&low), "{low}");
    }
}
