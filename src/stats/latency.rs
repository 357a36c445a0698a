//! Latency recording.
//!
//! HdrHistogram (Gil Tene's design, the `hdrhistogram` crate) with 3 significant digits: every
//! recorded value lands in a bucket whose width is at most 0.1% of the value, so every reported
//! percentile is within 0.1% of the true one. Range 1 ns .. 1 hour; longer values saturate at the
//! top. Recording is an index computation and an increment: no allocation, no lock. Each worker
//! owns its histograms; they are merged after the phase.

use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Highest trackable latency: one hour in nanoseconds.
const MAX_NANOS: u64 = 3_600_000_000_000;
/// Significant digits (error bound 10^-3).
const SIGFIG: u8 = 3;

/// A new latency histogram (nanoseconds).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NANOS, SIGFIG).expect("static histogram bounds are valid")
}

/// Serialise (V2 + deflate, base64) for storage.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64_encode(&buf),
        Err(_) => String::new(),
    }
}

/// Decode what [`encode`] produced.
pub fn decode(b64: &str) -> Option<Histogram<u64>> {
    let bytes = base64_decode(b64)?;
    hdrhistogram::serialization::Deserializer::new().deserialize(&mut &bytes[..]).ok()
}

fn base64_encode(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_roundtrip() {
        for n in 0..20 {
            let d: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&d)).unwrap(), d);
        }
    }
}
