//! `--scale`: shrink or grow a suite's file sizes and byte amounts by one factor.
//!
//! Operation sizes, alignments, thread counts and op counts never scale: a quick run does the
//! same *kind* of I/O as the paper, on less data. File sizes and amounts are not reduced below
//! 4 MiB (so test 10's "1 MB worth of 2K O_DSYNC writes" keeps its 512 operations and test 2 keeps
//! 32 O_DSYNC writes); scaled sizes are rounded up to a multiple of 64 KiB. Sync intervals
//! (`sync.every_bytes`) keep their ratio to the test's file, so a test keeps its number of syncs
//! (test 3 always issues five fsyncs).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The fraction used by `--scale quick`. Chosen so the whole unit14 suite runs in about a minute
/// on a 2-core VM with loop-backed ext4 (README.md, Quick start, has a measured time).
pub const QUICK_FRACTION: f64 = 1.0 / 4.0;

/// A scale factor for sizes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Scale {
    /// The sizes as written (the paper's).
    Paper,
    /// [`QUICK_FRACTION`].
    Quick,
    /// Any positive factor.
    Factor(f64),
}

/// File counts below this are kept as written when scaling down, and scaled counts never go
/// below it: the same philosophy as the 4 MiB floor on sizes (a 500-file postmark pool stays
/// 500 files; a 65,536-file removal shrinks but keeps enough files to be a metadata test).
pub const COUNT_FLOOR: u64 = 1000;

impl Scale {
    /// Scale a flat fileset's file count (with the [`COUNT_FLOOR`]).
    pub fn apply_count(self, count: u64) -> u64 {
        let f = self.factor();
        if f == 1.0 {
            return count;
        }
        let scaled = ((count as f64 * f).round() as u64).max(1);
        if f < 1.0 {
            scaled.max(count.min(COUNT_FLOOR))
        } else {
            scaled
        }
    }

    /// Scale a tree's files per leaf directory: depth and fan-out keep the tree's shape; at
    /// least 1 file per leaf, and the total not below `min(total, COUNT_FLOOR)`.
    pub fn apply_files_per_dir(self, per_dir: u64, leaves: u64) -> u64 {
        let f = self.factor();
        if f == 1.0 {
            return per_dir;
        }
        let scaled = ((per_dir as f64 * f).round() as u64).max(1);
        if f < 1.0 {
            let floor = per_dir.saturating_mul(leaves).min(COUNT_FLOOR);
            scaled.max(floor.div_ceil(leaves.max(1))).min(per_dir)
        } else {
            scaled
        }
    }

    /// The multiplier.
    pub fn factor(self) -> f64 {
        match self {
            Scale::Paper => 1.0,
            Scale::Quick => QUICK_FRACTION,
            Scale::Factor(f) => f,
        }
    }

    /// Apply to a file size or amount (with the 4 MiB floor).
    pub fn apply(self, bytes: u64) -> u64 {
        self.apply_with_floor(bytes, true)
    }

    fn apply_with_floor(self, bytes: u64, floor: bool) -> u64 {
        let f = self.factor();
        if f == 1.0 {
            return bytes;
        }
        const FLOOR: u64 = 4 << 20;
        const ROUND: u64 = 64 << 10;
        let scaled = (bytes as f64 * f).round() as u64;
        let scaled = scaled.div_ceil(ROUND) * ROUND;
        if f < 1.0 && floor {
            scaled.max(bytes.min(FLOOR))
        } else {
            scaled
        }
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scale::Paper => f.write_str("paper"),
            Scale::Quick => f.write_str("quick"),
            Scale::Factor(x) => write!(f, "{x}"),
        }
    }
}

/// A `--scale` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScaleError {
    /// Not a word, number or fraction.
    #[error("scale `{0}` is not `paper`, `quick`, a number (0.25) or a fraction (1/8)")]
    NotAScale(String),
    /// A factor outside (0, 64].
    #[error("scale `{0}` must be a factor in (0, 64], e.g. 0.25 or 1/8")]
    OutOfRange(String),
}

impl crate::sys::classify::Classify for ScaleError {
    /// The scale is the user's (`--scale`).
    fn is_bad_input(&self) -> bool {
        true
    }
}

impl FromStr for Scale {
    type Err = ScaleError;
    fn from_str(s: &str) -> Result<Scale, ScaleError> {
        match s {
            "paper" | "1" => Ok(Scale::Paper),
            "quick" => Ok(Scale::Quick),
            _ => {
                let v = if let Some((a, b)) = s.split_once('/') {
                    let a: f64 = a.trim().parse().map_err(|_| bad(s))?;
                    let b: f64 = b.trim().parse().map_err(|_| bad(s))?;
                    a / b
                } else {
                    s.parse::<f64>().map_err(|_| bad(s))?
                };
                if v.is_finite() && v > 0.0 && v <= 64.0 {
                    Ok(Scale::Factor(v))
                } else {
                    Err(ScaleError::OutOfRange(s.to_string()))
                }
            }
        }
    }
}

fn bad(s: &str) -> ScaleError {
    ScaleError::NotAScale(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        assert_eq!("paper".parse::<Scale>().unwrap(), Scale::Paper);
        assert_eq!("quick".parse::<Scale>().unwrap(), Scale::Quick);
        assert_eq!("1/8".parse::<Scale>().unwrap(), Scale::Factor(0.125));
        assert_eq!("0.5".parse::<Scale>().unwrap(), Scale::Factor(0.5));
        assert!("0".parse::<Scale>().is_err());
        assert!("-1".parse::<Scale>().is_err());
        assert!("big".parse::<Scale>().is_err());
    }

    #[test]
    fn small_sizes_are_kept_large_ones_scale() {
        let q = Scale::Quick;
        assert_eq!(q.apply(1 << 30), 256 << 20);
        assert_eq!(q.apply(10 << 20), 4 << 20, "4 MiB is the floor");
        assert_eq!(q.apply(1 << 20), 1 << 20, "below the floor: unchanged");
        assert_eq!(Scale::Paper.apply(12345), 12345);
        assert_eq!(Scale::Factor(2.0).apply(1 << 20), 2 << 20);
        assert_eq!(q.apply(5 << 20) % (64 << 10), 0);
    }

    #[test]
    fn counts_scale_with_a_floor() {
        let q = Scale::Quick;
        assert_eq!(q.apply_count(65536), 16384);
        assert_eq!(q.apply_count(500), 500, "below the floor: unchanged");
        assert_eq!(q.apply_count(2000), 1000, "never below the floor");
        assert_eq!(Scale::Paper.apply_count(7), 7);
        assert_eq!(Scale::Factor(2.0).apply_count(500), 1000);
        // Trees scale files per leaf, keep at least one, and the floor on the total.
        assert_eq!(q.apply_files_per_dir(100, 10_000), 25);
        assert_eq!(Scale::Factor(0.001).apply_files_per_dir(100, 10_000), 1);
        assert_eq!(Scale::Factor(0.01).apply_files_per_dir(100, 10), 100, "floor: 1000 files");
        assert_eq!(Scale::Factor(0.1).apply_files_per_dir(10, 10), 10, "small trees kept");
    }
}
