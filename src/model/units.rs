//! The words for quantities: durations, rates, sizes and dates as every output writes them.

/// `850ns`, `12.3µs`, `4.10ms`, `1.20s`.
pub fn nanos(n: u64) -> String {
    let f = n as f64;
    if n < 1_000 {
        format!("{n}ns")
    } else if n < 1_000_000 {
        format!("{:.1}µs", f / 1e3)
    } else if n < 1_000_000_000 {
        format!("{:.2}ms", f / 1e6)
    } else {
        format!("{:.2}s", f / 1e9)
    }
}

/// [`sig3`] without trailing zeros: `25`, `12.5`, `3`, `0.25`.
pub fn short(x: f64) -> String {
    let s = sig3(x);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Three significant digits: `0.117`, `42.8`, `1757`.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// `2025-03-01 14:05 UTC` from seconds since the epoch (proleptic Gregorian calendar; days to
/// date after Howard Hinnant's `civil_from_days`).
pub fn utc(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", secs / 3600, secs % 3600 / 60)
}

/// Format bytes the way the inputs are written: `128M`, `8K`, `1.5G`, `1000`.
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [(&str, u64); 4] =
        [("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)];
    for (u, n) in UNITS {
        if b >= n {
            if b % n == 0 {
                return format!("{}{u}", b / n);
            }
            let v = b as f64 / n as f64;
            return format!("{}{u}", trim_float(v));
        }
    }
    b.to_string()
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(nanos(850), "850ns");
        assert_eq!(nanos(12_345), "12.3µs");
        assert_eq!(nanos(4_100_000), "4.10ms");
        assert_eq!(nanos(1_200_000_000), "1.20s");
        assert_eq!(sig3(0.117925), "0.118");
        assert_eq!(sig3(42.75), "42.8");
        assert_eq!(sig3(1756.57), "1757");
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400 + 3_660), "2000-02-29 01:01 UTC");
        assert_eq!(utc(1_700_000_000), "2023-11-14 22:13 UTC");
    }
}
