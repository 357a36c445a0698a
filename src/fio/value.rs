//! fio's value syntax: sizes (`4k`, `1KiB`), times (`500ms`), `R,W,T` lists and the one-size
//! forms of `bsrange` and `bssplit`, each with a typed error that says how to write the value.
//! [`mod@super::translate`] puts the error in a [`super::FioError::Value`] with the file, line and
//! option.

use crate::model::job::SizeDist;
use crate::model::units::fmt_bytes;

/// A value of a fio option that fsbench cannot read: the text as written and how to write it.
/// The translation puts it in a [`super::FioError::Value`] with the file, line and option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a number with an optional unit.
    #[error("`{0}` is not a size: write a whole number with an optional unit (4k, 64m, 1g)")]
    NotASize(String),
    /// A unit letter fio has but fsbench does not read (or `%`).
    #[error("`{text}`: unknown unit `{unit}`; fsbench reads k, m, g, t, p (powers of 1024) and kib, mib, ... (powers of 1000, as fio); percentages are not supported")]
    UnknownSizeUnit {
        /// The value as written.
        text: String,
        /// The unit, lowercased.
        unit: String,
    },
    /// A known unit letter with an unknown ending (`4kx`).
    #[error("`{text}`: unknown unit `{unit}`")]
    UnknownSizeSuffix {
        /// The value as written.
        text: String,
        /// The unit, lowercased.
        unit: String,
    },
    /// An arithmetic expression (a value in parentheses) that does not evaluate to a size.
    #[error("`{text}`: {why}")]
    Expression {
        /// The value as written.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// A size beyond 2^64 bytes.
    #[error("`{0}` is too large")]
    TooLarge(String),
    /// Not a number with an optional time unit.
    #[error("`{0}` is not a time: write seconds, or a number with us, ms, s, m, h or d")]
    NotATime(String),
    /// A time unit fsbench does not read.
    #[error("`{text}`: unknown time unit `{unit}`; use us, ms, s, m, h or d")]
    UnknownTimeUnit {
        /// The value as written.
        text: String,
        /// The unit.
        unit: String,
    },
    /// `R,W,T,...`: more than one value per direction.
    #[error("`{0}`: at most three values (read,write,trim)")]
    TooManyValues(String),
    /// A `bsrange` part without a `-`.
    #[error("`{0}` is not a range such as 4k-4k")]
    NotARange(String),
    /// A `bsrange` that is not MIN-MAX with MIN at most MAX, or of more sizes than a split has.
    #[error("`{range}`: give MIN-MAX with MIN at most MAX and at most 16 multiples of MIN up to MAX (fio draws multiples of the minimum; fsbench draws them as a split of at most 16 sizes); or one size (bs={bs})")]
    SizeRange {
        /// The range as written.
        range: String,
        /// Its minimum, as fio writes sizes.
        bs: String,
    },
    /// A `bssplit` whose percentages cannot be fio's.
    #[error("`{0}`: the percentages of a bssplit add up to at most 100, with at least one size above 0% (a blank percentage shares what is left)")]
    SplitShare(String),
    /// A `bssplit` of more sizes than fsbench draws from.
    #[error("`{0}`: at most {max} sizes", max = crate::model::job::MAX_SPLIT)]
    SplitSizes(String),
}

impl crate::sys::classify::Classify for ValueError {
    /// Values come from the user's job file.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Parse fio's size syntax: a number and an optional unit. `k`, `m`, `g`, `t`, `p` (any case,
/// with an optional `b`) are powers of 1024; `kib`-style units are powers of 1000, as fio does
/// with its default `kb_base=1024` (measured with fio 3.33: `bs=1KiB` moves 1000 bytes).
pub fn parse_size(v: &str) -> Result<u64, ValueError> {
    let s = v.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(digits);
    let n: u64 = num.parse().map_err(|_| ValueError::NotASize(v.to_string()))?;
    let unit = unit.trim().to_ascii_lowercase();
    let (letter, rest) = match unit.chars().next() {
        None => return Ok(n),
        Some(c) => (c, &unit[1..]),
    };
    let pow = match letter {
        'b' if rest.is_empty() => return Ok(n),
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        _ => return Err(ValueError::UnknownSizeUnit { text: v.to_string(), unit }),
    };
    let base: u64 = match rest {
        "" | "b" | "i" => 1024,
        "ib" => 1000,
        _ => return Err(ValueError::UnknownSizeSuffix { text: v.to_string(), unit }),
    };
    base.checked_pow(pow)
        .and_then(|m| n.checked_mul(m))
        .ok_or_else(|| ValueError::TooLarge(v.to_string()))
}

/// Parse fio's time syntax: seconds by default, or `us`, `ms`, `s`, `m`, `h`, `d`.
pub fn parse_time(v: &str) -> Result<f64, ValueError> {
    let s = v.trim().to_ascii_lowercase();
    let digits = s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len());
    let (num, unit) = s.split_at(digits);
    let n: f64 = num.parse().map_err(|_| ValueError::NotATime(v.to_string()))?;
    let mult = match unit.trim() {
        "" | "s" => 1.0,
        "us" => 1e-6,
        "ms" => 1e-3,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        u => return Err(ValueError::UnknownTimeUnit { text: v.to_string(), unit: u.to_string() }),
    };
    Ok(n * mult)
}

/// `R[,W[,T]]` → (read, write); an empty part keeps `default`.
pub(super) fn split_rw<T: Copy>(
    v: &str,
    default: T,
    parse: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<(T, T), ValueError> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err(ValueError::TooManyValues(v.to_string()));
    }
    let get = |i: usize| -> Result<Option<T>, ValueError> {
        match parts.get(i).map(|s| s.trim()) {
            None | Some("") => Ok(None),
            Some(p) => parse(p).map(Some),
        }
    };
    let r = get(0)?;
    let w = get(1)?;
    // A single value applies to every direction, as in fio.
    let r_val = r.unwrap_or(default);
    let w_val = if parts.len() == 1 { r_val } else { w.unwrap_or(default) };
    Ok((r_val, w_val))
}

/// One part of `bsrange`, `MIN-MAX`, as fio 3.33 draws from it (`io_u.c`,
/// `get_next_buflen`): `MIN + MAX × u` bytes for `u` uniform in [0, 1), rounded down to a
/// multiple of MIN, and MAX at most. So each multiple `k × MIN` up to MAX is drawn with the
/// weight of the MIN bytes of `MAX × u` that round to it, and MAX takes what rounds past it
/// (`MAX mod MIN` bytes when MAX is not a multiple, all of the last step's when it is): 4k-16k
/// draws 4k, 8k, 12k and 16k a quarter each; 4k-10k draws 4k and 8k 40% each, 10k 20%. A
/// range of more than [`crate::model::job::MAX_SPLIT`] sizes is refused.
pub(super) fn size_range(p: &str) -> Result<SizeDist, ValueError> {
    let (lo, hi) = p.split_once('-').ok_or_else(|| ValueError::NotARange(p.to_string()))?;
    let (lo, hi) = (parse_size(lo.trim())?, parse_size(hi.trim())?);
    if lo == hi || lo == 0 {
        return Ok(SizeDist::Fixed(lo));
    }
    let range_err =
        || ValueError::SizeRange { range: p.to_string(), bs: fmt_bytes(lo.min(hi)).to_lowercase() };
    if lo > hi {
        return Err(range_err());
    }
    // The bytes of MAX × u that give each size: MIN for each whole step, then the rest.
    let mut entries: Vec<(u64, u64)> = Vec::new();
    let mut at = 0u64;
    while at < hi {
        let size = (lo + at - at % lo).min(hi);
        let w = lo.min(hi - at);
        match entries.last_mut() {
            Some(e) if e.0 == size => e.1 += w,
            _ => entries.push((size, w)),
        }
        at += lo;
    }
    // Weights in the smallest unit that divides them all (so they fit the split's u32).
    let g = entries.iter().fold(0, |g, e| gcd(g, e.1)).max(1);
    let weights: Vec<(u64, u32)> =
        entries.iter().map(|&(s, w)| (s, u32::try_from(w / g).unwrap_or(u32::MAX))).collect();
    SizeDist::split(&weights).ok_or_else(range_err)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One part of `bssplit`: one entry, `4k` or `4k/100`.
/// `bssplit`'s part for one direction, `SIZE/PCT:SIZE/PCT:...`, as fio reads it: a blank
/// percentage shares what the given ones leave, a 0% size is never drawn.
pub(super) fn size_split(p: &str) -> Result<SizeDist, ValueError> {
    let mut given: Vec<(u64, Option<u32>)> = Vec::new();
    for e in p.split(':') {
        let (size, pct) = match e.split_once('/') {
            Some((s, pc)) if !pc.trim().is_empty() => {
                let pc = pc.trim().parse::<u32>().map_err(|_| ValueError::SplitShare(p.into()))?;
                (s, Some(pc))
            }
            Some((s, _)) => (s, None),
            None => (e, None),
        };
        given.push((parse_size(size.trim())?, pct));
    }
    let set: u32 = given.iter().filter_map(|g| g.1).sum();
    let blank = given.iter().filter(|g| g.1.is_none()).count() as u32;
    if set > 100 {
        return Err(ValueError::SplitShare(p.into()));
    }
    // fio shares what the given percentages leave evenly over the blank ones.
    let (each, mut extra) = match blank {
        0 => (0, 0),
        b => ((100 - set) / b, (100 - set) % b),
    };
    let mut entries = Vec::new();
    for (size, pct) in given {
        let w = pct.unwrap_or_else(|| {
            let e = u32::from(extra > 0);
            extra = extra.saturating_sub(1);
            each + e
        });
        if w > 0 {
            entries.push((size, w));
        }
    }
    match entries.as_slice() {
        [] => return Err(ValueError::SplitShare(p.into())),
        [(size, _)] => return Ok(SizeDist::Fixed(*size)),
        _ => {}
    }
    SizeDist::split(&entries).ok_or_else(|| ValueError::SplitSizes(p.into()))
}

/// A size, or fio's arithmetic in parentheses over sizes (`(2k+2k)`, `(64m*2)`).
pub fn parse_size_expr(v: &str) -> Result<u64, ValueError> {
    let unit = |w: &str| parse_size(w).map(|n| n as f64).map_err(|e| e.to_string());
    match super::ini::eval(v, &unit) {
        None => parse_size(v),
        Some(Ok(x)) if x.is_finite() && (0.0..1.8e19).contains(&x) => Ok(x as u64),
        Some(Ok(x)) => Err(ValueError::Expression {
            text: v.into(),
            why: format!("{x} is not a size of 0 or more"),
        }),
        Some(Err(why)) => Err(ValueError::Expression { text: v.into(), why }),
    }
}
