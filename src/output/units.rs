//! Human formatting of durations, rates and sizes.

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
    }
}
