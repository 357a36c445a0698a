//! How a data phase's random offsets are spread over the file (fio's `random_distribution`).
//!
//! This is plain data shared by the workload (which parses and checks it), the fio translator
//! (which writes it) and the engine (which precomputes a table from it before the timed phase
//! and draws from that table per op). Written in fio's own syntax so a workload can say
//! `random_distribution = "zipf:1.2"` exactly as a fio job does.

use serde::{Deserialize, Serialize};

/// A skewed distribution of random offsets. Uniform (fio's `random`) is the absence of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum RandomDist {
    /// fio's `zipf:θ[:center]`: block ranks drawn from a Zipf law of exponent `theta`.
    Zipf {
        /// The exponent (fio's "Zipf theta"), > 0 and != 1.
        theta: f64,
        /// Where rank 0 lands, as a fraction of the file (`None`: at random, fio's default).
        center: Option<f64>,
    },
    /// fio's `pareto:h[:center]`: block ranks from a Pareto power law.
    Pareto {
        /// fio's "Pareto power", in (0, 1).
        h: f64,
        /// Where rank 0 lands, as a fraction of the file (`None`: at random).
        center: Option<f64>,
    },
    /// fio's `normal:dev[:center]`: block ranks around the middle.
    Normal {
        /// fio's deviation, a percentage in [0, 100].
        dev: f64,
        /// Where the middle lands, as a fraction of the file (`None`: fio's 0.5).
        center: Option<f64>,
    },
    /// fio's `zoned:` and `zoned_abs:`: each zone gets a share of the accesses, uniform
    /// inside the zone; zones follow each other from the start of the file.
    Zoned {
        /// The zones in file order.
        zones: Vec<Zone>,
    },
}

/// One zone of a zoned distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Percentage of the accesses (the zones' sum to 100).
    pub access: u32,
    /// The zone's extent.
    pub size: ZoneSize,
}

/// A zone's extent: part of the file (`zoned`) or bytes (`zoned_abs`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneSize {
    /// Percent of the file.
    Percent(f64),
    /// Bytes.
    Bytes(u64),
}

impl RandomDist {
    /// Parse fio's syntax for one direction: `random` (uniform: `None`), `zipf:θ[:c]`,
    /// `pareto:h[:c]`, `normal:d[:c]`, `zoned:A/S:A/S...`, `zoned_abs:A/SIZE:...`. A zone
    /// without a size shares what the sized zones leave, as fio's. What fio 3.33 refuses is
    /// refused too: `gauss`, `zoned_abs=`, one set per direction (`,`), `sequence`. The error
    /// says what is wrong, for a message that names the option.
    pub fn parse(text: &str) -> Result<Option<RandomDist>, String> {
        let text = text.trim();
        if text.to_ascii_lowercase().starts_with("sequence") {
            return Err(format!("`{text}`: fio 3.33 has no `sequence` distribution (a newer fio's), and fio 3.33 refuses it too"));
        }
        if text.contains(',') {
            return Err(format!("`{text}`: one distribution for every direction; fio 3.33 refuses a set per direction (`,`) too"));
        }
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = kind.trim().to_ascii_lowercase();
        let floats = |what: &str| -> Result<(f64, Option<f64>), String> {
            let mut it = rest.split(':');
            let v = it.next().unwrap_or("").trim();
            let v: f64 =
                v.parse().map_err(|_| format!("`{kind}` needs {what}, e.g. `{kind}:1.2`"))?;
            let center = match it.next() {
                None => None,
                Some(c) => {
                    let c: f64 = c.trim().parse().map_err(|_| {
                        format!("`{c}`: the second value of `{kind}` is a center in [0, 1]")
                    })?;
                    if !(0.0..=1.0).contains(&c) {
                        return Err(format!("center {c}: give a value in [0, 1]"));
                    }
                    Some(c)
                }
            };
            if it.next().is_some() {
                return Err(format!("`{text}`: `{kind}` takes at most two values"));
            }
            Ok((v, center))
        };
        match kind.as_str() {
            "random" if rest.is_empty() => Ok(None),
            "zipf" => {
                let (theta, center) = floats("a theta")?;
                if theta.is_nan() || theta <= 0.0 || theta == 1.0 || !theta.is_finite() {
                    return Err(format!("zipf theta {theta}: give a value > 0 other than 1"));
                }
                Ok(Some(RandomDist::Zipf { theta, center }))
            }
            "pareto" => {
                let (h, center) = floats("a power")?;
                if !(h > 0.0 && h < 1.0) {
                    return Err(format!("pareto power {h}: give a value between 0 and 1"));
                }
                Ok(Some(RandomDist::Pareto { h, center }))
            }
            "normal" => {
                let (dev, center) = floats("a deviation")?;
                if !(0.0..=100.0).contains(&dev) {
                    return Err(format!("normal deviation {dev}: give 0 to 100"));
                }
                Ok(Some(RandomDist::Normal { dev, center }))
            }
            "zoned" | "zoned_abs" => zones(rest, kind == "zoned_abs").map(Some),
            _ => Err(format!(
                "`{text}`: give random, zipf:θ, pareto:h, normal:dev, zoned:... or zoned_abs:... (fio 3.33 refuses gauss, zoned_abs= and sequence too)"
            )),
        }
    }
}

impl RandomDist {
    /// The distribution in fio's syntax (what [`RandomDist::parse`] reads back), for a fio job
    /// written from a workload.
    pub fn fio_text(&self) -> String {
        let center = |c: &Option<f64>| c.map(|c| format!(":{c}")).unwrap_or_default();
        match self {
            RandomDist::Zipf { theta, center: c } => format!("zipf:{theta}{}", center(c)),
            RandomDist::Pareto { h, center: c } => format!("pareto:{h}{}", center(c)),
            RandomDist::Normal { dev, center: c } => format!("normal:{dev}{}", center(c)),
            RandomDist::Zoned { zones } => {
                let abs = zones.iter().any(|z| matches!(z.size, ZoneSize::Bytes(_)));
                let parts: Vec<String> = zones
                    .iter()
                    .map(|z| match z.size {
                        ZoneSize::Percent(p) => format!("{}/{p}", z.access),
                        ZoneSize::Bytes(b) => format!("{}/{b}", z.access),
                    })
                    .collect();
                format!("{}:{}", if abs { "zoned_abs" } else { "zoned" }, parts.join(":"))
            }
        }
    }
}

/// `A/S:A/S...` into zones; access percentages sum to 100, percent sizes at most 100.
fn zones(text: &str, absolute: bool) -> Result<RandomDist, String> {
    let mut zones = Vec::new();
    let mut missing = 0u32;
    let mut sized = 0.0;
    for part in text.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, s) = part.split_once('/').unwrap_or((part, ""));
        let access: u32 = a
            .trim()
            .parse()
            .ok()
            .filter(|&a| a <= 100)
            .ok_or_else(|| format!("zone `{part}`: the access share is a percentage 0-100"))?;
        let s = s.trim();
        let size = if s.is_empty() {
            missing += 1;
            ZoneSize::Percent(-1.0)
        } else if absolute {
            ZoneSize::Bytes(bytes(s).ok_or_else(|| format!("zone `{part}`: `{s}` is not a size"))?)
        } else {
            let p: f64 = s
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=100.0).contains(p))
                .ok_or_else(|| format!("zone `{part}`: the size is a percentage 0-100"))?;
            sized += p;
            ZoneSize::Percent(p)
        };
        zones.push(Zone { access, size });
    }
    if zones.is_empty() {
        return Err("no zones: give e.g. zoned:60/10:40/90".into());
    }
    if zones.len() > 256 {
        return Err(format!("{} zones: fio allows up to 256", zones.len()));
    }
    let total: u32 = zones.iter().map(|z| z.access).sum();
    if total != 100 {
        return Err(format!("the access percentages add up to {total}, not 100"));
    }
    if sized > 100.0 + 1e-9 {
        return Err(format!("the zone sizes add up to {sized}%, more than the file"));
    }
    if missing > 0 {
        if absolute {
            return Err("zoned_abs: every zone needs a size".into());
        }
        let share = (100.0 - sized) / f64::from(missing);
        for z in &mut zones {
            if z.size == ZoneSize::Percent(-1.0) {
                z.size = ZoneSize::Percent(share);
            }
        }
    }
    Ok(RandomDist::Zoned { zones })
}

/// fio's sizes: a number with an optional k/m/g/t suffix (powers of 1024; `KiB`, `kb`, ...).
fn bytes(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &lower[digits.len()..];
    let n: u64 = digits.parse().ok()?;
    let mult: u64 = match suffix.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_syntax_parses_to_the_distribution() {
        assert_eq!(RandomDist::parse("random"), Ok(None));
        assert_eq!(
            RandomDist::parse("zipf:1.2"),
            Ok(Some(RandomDist::Zipf { theta: 1.2, center: None }))
        );
        assert_eq!(
            RandomDist::parse("zipf:0.5:0.25"),
            Ok(Some(RandomDist::Zipf { theta: 0.5, center: Some(0.25) }))
        );
        assert_eq!(
            RandomDist::parse("pareto:0.3"),
            Ok(Some(RandomDist::Pareto { h: 0.3, center: None }))
        );
        assert_eq!(
            RandomDist::parse("normal:5:0.2"),
            Ok(Some(RandomDist::Normal { dev: 5.0, center: Some(0.2) }))
        );
        // rand-zones.fio's last zone has no size: it gets the rest of the file.
        let Ok(Some(RandomDist::Zoned { zones })) = RandomDist::parse("zoned:50/5:30/15:20/")
        else {
            panic!("zoned");
        };
        let sizes: Vec<ZoneSize> = zones.iter().map(|z| z.size).collect();
        assert_eq!(
            sizes,
            [ZoneSize::Percent(5.0), ZoneSize::Percent(15.0), ZoneSize::Percent(80.0)]
        );
        let Ok(Some(RandomDist::Zoned { zones })) = RandomDist::parse("zoned_abs:60/20G:40/1m")
        else {
            panic!("zoned_abs");
        };
        assert_eq!(zones[0].size, ZoneSize::Bytes(20 << 30));
        assert_eq!(zones[1], Zone { access: 40, size: ZoneSize::Bytes(1 << 20) });
    }

    #[test]
    fn fio_text_reads_back_as_the_same_distribution() {
        for t in [
            "zipf:1.2",
            "pareto:0.3:0.5",
            "normal:10",
            "zoned:50/5:30/15:20/",
            "zoned_abs:60/20G:40/1m",
        ] {
            let d = RandomDist::parse(t).unwrap().unwrap();
            assert_eq!(
                RandomDist::parse(&d.fio_text()),
                Ok(Some(d.clone())),
                "{t}: {}",
                d.fio_text()
            );
        }
        let d = RandomDist::parse("zoned:50/5:30/15:20/").unwrap().unwrap();
        assert_eq!(d.fio_text(), "zoned:50/5:30/15:20/80");
    }

    #[test]
    fn what_fio_refuses_is_refused_with_the_reason() {
        let e = |s: &str| RandomDist::parse(s).unwrap_err();
        assert!(e("zoned:50/5:30/15").contains("add up to 80"));
        assert!(e("zipf:1").contains("other than 1"));
        assert!(e("zipf").contains("needs a theta"));
        assert!(e("pareto:1.5").contains("between 0 and 1"));
        assert!(e("zipf:1.2:2").contains("[0, 1]"));
        assert!(e("pattern:2").contains("give random, zipf"));
        assert!(e("sequence:2,0,1").contains("no `sequence` distribution"));
        assert!(e("zoned:50/60:50/60").contains("more than the file"));
        // fio 3.33 refuses these as well.
        assert!(e("gauss:5").contains("fio 3.33 refuses"));
        assert!(e("zoned_abs=60/1m:40/1m").contains("fio 3.33 refuses"));
        assert!(e("zoned:60/10:40/90,50/50:50/50").contains("fio 3.33 refuses"));
    }
}
