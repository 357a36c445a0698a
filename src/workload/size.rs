//! Byte sizes ("128M", "2K", "1G", "4096") and size expressions ("freemem/2", "freemem*2").
//!
//! Units are binary: `K` = 1024, `M` = 1024², `G` = 1024³ (the study's "1 MB" writes are 1 MiB).

use crate::model::units::fmt_bytes;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A size that does not parse: the text as written, and how to write one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not a number with a unit.
    #[error("`{text}` is not a size ({reason}); write a number with an optional unit: 4096, 8K, 128M, 1G")]
    NotASize {
        /// The text as written.
        text: String,
        /// What the size parser said.
        reason: parse_size::Error,
    },
    /// `freemem/N` or `freemem*N` with an `N` that is not a whole number (at least 1).
    #[error("`{text}`: write freemem/N or freemem*N with N a whole number, e.g. freemem/2")]
    FreememDivisor {
        /// The text as written.
        text: String,
    },
    /// `freemem/0`.
    #[error("`{text}`: division by zero")]
    DivisionByZero {
        /// The text as written.
        text: String,
    },
    /// A negative number.
    #[error("{value}: a size cannot be negative; write bytes (8192) or a size such as \"8K\"")]
    Negative {
        /// The number as written.
        value: i64,
    },
    /// A fractional number of bytes.
    #[error("{value}: a size is a whole number of bytes (8192) or a size such as \"1.5M\"")]
    Fraction {
        /// The number as written.
        value: String,
    },
}

impl crate::sys::classify::Classify for SizeError {
    /// Sizes come from the user (workload files, `--size`).
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Parse a byte size such as `"128M"`, `"8K"`, `"1G"`, `"1 MiB"` or `"4096"`.
pub fn parse_bytes(s: &str) -> Result<u64, SizeError> {
    let cfg = parse_size::Config::new().with_binary();
    cfg.parse_size(s.trim()).map_err(|reason| SizeError::NotASize { text: s.to_string(), reason })
}

/// A size as written in a workload: a number of bytes, or a fraction of free memory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SizeText", into = "SizeText")]
pub enum SizeExpr {
    /// A fixed number of bytes.
    Bytes(u64),
    /// `freemem/N`: free memory (MemAvailable) divided by N, resolved when the test runs.
    FreeMemDiv(u64),
    /// `freemem*N`: N times the free memory, for a file the page cache cannot hold (seed 001's
    /// streaming write past RAM).
    FreeMemMul(u64),
}

impl SizeExpr {
    /// Resolve to bytes given the free memory.
    pub fn resolve(self, free_memory: u64) -> u64 {
        match self {
            SizeExpr::Bytes(b) => b,
            SizeExpr::FreeMemDiv(d) => free_memory / d.max(1),
            SizeExpr::FreeMemMul(m) => free_memory.saturating_mul(m),
        }
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeExpr::Bytes(b) => f.write_str(&fmt_bytes(*b)),
            SizeExpr::FreeMemDiv(d) => write!(f, "freemem/{d}"),
            SizeExpr::FreeMemMul(m) => write!(f, "freemem*{m}"),
        }
    }
}

/// Serde helper: sizes are written as strings ("8K") or plain integers (8192).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizeText {
    /// An integer number of bytes.
    Int(u64),
    /// A negative integer: refused with a message of its own (serde's untagged enums say only
    /// "did not match any variant").
    Negative(i64),
    /// A fractional number: refused likewise.
    Float(f64),
    /// A string such as "8K" or "freemem/2".
    Text(String),
}

impl TryFrom<SizeText> for SizeExpr {
    type Error = SizeError;
    fn try_from(t: SizeText) -> Result<Self, SizeError> {
        match t {
            SizeText::Int(b) => Ok(SizeExpr::Bytes(b)),
            SizeText::Negative(n) => Err(SizeError::Negative { value: n }),
            SizeText::Float(f) => Err(SizeError::Fraction { value: f.to_string() }),
            SizeText::Text(s) => {
                if let Some(d) = s.trim().strip_prefix("freemem/") {
                    let d: u64 = d
                        .trim()
                        .parse()
                        .map_err(|_| SizeError::FreememDivisor { text: s.clone() })?;
                    if d == 0 {
                        return Err(SizeError::DivisionByZero { text: s });
                    }
                    Ok(SizeExpr::FreeMemDiv(d))
                } else if let Some(m) = s.trim().strip_prefix("freemem*") {
                    match m.trim().parse::<u64>() {
                        Ok(m) if m >= 1 => Ok(SizeExpr::FreeMemMul(m)),
                        _ => Err(SizeError::FreememDivisor { text: s.clone() }),
                    }
                } else if s.trim() == "freemem" {
                    Ok(SizeExpr::FreeMemDiv(1))
                } else {
                    parse_bytes(&s).map(SizeExpr::Bytes)
                }
            }
        }
    }
}

impl From<SizeExpr> for SizeText {
    fn from(s: SizeExpr) -> SizeText {
        SizeText::Text(s.to_string())
    }
}

/// A byte size that must be fixed (an operation size, an alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "SizeText", into = "SizeText")]
pub struct Bytes(pub u64);

impl TryFrom<SizeText> for Bytes {
    type Error = SizeError;
    fn try_from(t: SizeText) -> Result<Self, SizeError> {
        match t {
            SizeText::Int(b) => Ok(Bytes(b)),
            SizeText::Text(s) => parse_bytes(&s).map(Bytes),
            other => SizeExpr::try_from(other).map(|_| Bytes(0)),
        }
    }
}

impl From<Bytes> for SizeText {
    fn from(b: Bytes) -> SizeText {
        SizeText::Text(fmt_bytes(b.0))
    }
}

/// An operation or file size: fixed, or drawn per operation from a distribution.
///
/// Written as `"8K"` (or `8192`), `{ uniform = ["1K", "8K"] }` or
/// `{ lognormal = { median = "20K", sigma = 0.6, min = "10K", max = "150K" } }`. The parser is
/// hand-written (not serde's `untagged`) so a mistake names the key that is wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SizeDistSpec {
    /// Every operation has this size.
    Fixed(Bytes),
    /// `{ uniform = ["1K", "8K"] }`: uniform over the closed range, in bytes.
    Uniform {
        /// `[min, max]`, inclusive.
        uniform: [Bytes; 2],
    },
    /// `{ lognormal = { median, sigma, min, max } }`: log-normal, truncated to `[min, max]`.
    LogNormal {
        /// The parameters.
        lognormal: LogNormalSpec,
    },
    /// `{ split = [{ size = "4K", weight = 60 }, { size = "64K", weight = 40 }] }`: one of the
    /// sizes, drawn by weight (fio's `bssplit`).
    Split {
        /// The entries.
        split: Vec<SplitSpec>,
    },
    /// `{ unaligned_range = ["4K", "16K"] }`: fio's `bsrange` with `bs_unaligned`, `min +
    /// ⌊max × u⌋` bytes, at most `max` (any byte count, not a multiple of `min`).
    UnalignedRange {
        /// `[min, max]`.
        unaligned_range: [Bytes; 2],
    },
}

/// One size of a split and its weight.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitSpec {
    /// The size.
    pub size: Bytes,
    /// Its weight (≥ 1; the share is weight / sum of weights).
    pub weight: u32,
}

/// Parameters of a bounded log-normal size distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogNormalSpec {
    /// Median (e^mu). The mode (peak) is `median * e^(-sigma^2)`.
    pub median: Bytes,
    /// Standard deviation of ln(size).
    pub sigma: f64,
    /// Smallest size drawn (draws below are redrawn).
    pub min: Bytes,
    /// Largest size drawn (draws above are redrawn).
    pub max: Bytes,
}

const SIZE_FORMS: &str = "a size such as \"8K\", { uniform = [\"1K\", \"8K\"] }, { lognormal = { median = \"20K\", sigma = 0.6, min = \"10K\", max = \"150K\" } } { split = [{ size = \"4K\", weight = 60 }, { size = \"64K\", weight = 40 }] } or { unaligned_range = [\"4K\", \"16K\"] }";

impl<'de> Deserialize<'de> for SizeDistSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SizeDistSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(SIZE_FORMS)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SizeDistSpec, E> {
                Ok(SizeDistSpec::Fixed(Bytes(v)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SizeDistSpec, E> {
                u64::try_from(v)
                    .map(|v| SizeDistSpec::Fixed(Bytes(v)))
                    .map_err(|_| E::custom(format!("size {v} is negative; write {SIZE_FORMS}")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SizeDistSpec, E> {
                parse_bytes(v).map(|b| SizeDistSpec::Fixed(Bytes(b))).map_err(E::custom)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<SizeDistSpec, A::Error> {
                use serde::de::Error;
                let Some(key) = m.next_key::<String>()? else {
                    return Err(A::Error::custom(format!("empty size table; write {SIZE_FORMS}")));
                };
                let out = match key.as_str() {
                    "uniform" => SizeDistSpec::Uniform { uniform: m.next_value()? },
                    "lognormal" => SizeDistSpec::LogNormal { lognormal: m.next_value()? },
                    "split" => SizeDistSpec::Split { split: m.next_value()? },
                    "unaligned_range" => {
                        SizeDistSpec::UnalignedRange { unaligned_range: m.next_value()? }
                    }
                    other => {
                        return Err(A::Error::custom(format!(
                            "unknown size distribution `{other}`; write {SIZE_FORMS}"
                        )))
                    }
                };
                if let Some(k) = m.next_key::<String>()? {
                    return Err(A::Error::custom(format!(
                        "a size table has one key, found `{key}` and `{k}`; write {SIZE_FORMS}"
                    )));
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_binary_units() {
        assert_eq!(parse_bytes("8K").unwrap(), 8192);
        assert_eq!(parse_bytes("128M").unwrap(), 128 << 20);
        assert_eq!(parse_bytes("1G").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("1 MiB").unwrap(), 1 << 20);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert!(parse_bytes("lots").unwrap_err().to_string().contains("not a size"));
    }

    #[test]
    fn formats_round_trip() {
        for b in [1u64, 1000, 2048, 8192, 128 << 20, 1 << 30, 1536] {
            assert_eq!(parse_bytes(&fmt_bytes(b)).unwrap(), b, "{}", fmt_bytes(b));
        }
        assert_eq!(fmt_bytes(1 << 20), "1M");
    }

    #[test]
    fn freemem_expression() {
        let e = SizeExpr::try_from(SizeText::Text("freemem/2".into())).unwrap();
        assert_eq!(e.resolve(1000), 500);
        assert!(SizeExpr::try_from(SizeText::Text("freemem/0".into())).is_err());
        assert!(SizeExpr::try_from(SizeText::Text("freemem/x".into())).is_err());
        // Twice the free memory: a file the page cache cannot hold; written back as read.
        let m = SizeExpr::try_from(SizeText::Text("freemem*2".into())).unwrap();
        assert_eq!(m.resolve(1000), 2000);
        assert_eq!(m.to_string(), "freemem*2");
        assert_eq!(SizeExpr::FreeMemMul(3).resolve(u64::MAX / 2), u64::MAX, "saturates");
        for bad in ["freemem*0", "freemem*x", "freemem*-1", "freemem*1.5"] {
            assert!(SizeExpr::try_from(SizeText::Text(bad.into())).is_err(), "{bad}");
        }
    }
}
