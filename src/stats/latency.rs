//! Latency recording.
//!
//! HdrHistogram (Gil Tene's design, the `hdrhistogram` crate) with 3 significant digits: every
//! recorded value lands in a bucket whose width is at most 0.1% of the value, so every reported
//! percentile is within 0.1% of the true one. Range 1 ns .. 1 hour; longer values saturate at the
//! top. Recording is an index computation and an increment: no allocation, no lock. Each worker
//! owns its histograms; they are merged after the phase.

use crate::model::job::{OpKind, OP_KINDS};
use crate::model::result::OpLatency;
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

/// One histogram per [`OpKind`].
pub struct OpHistograms(pub [Histogram<u64>; OP_KINDS]);

impl Default for OpHistograms {
    fn default() -> Self {
        OpHistograms(std::array::from_fn(|_| new_histogram()))
    }
}

impl OpHistograms {
    /// Record one operation's latency. Never allocates.
    #[inline(always)]
    pub fn record(&mut self, op: OpKind, nanos: u64) {
        self.0[op.index()].saturating_record(nanos.max(1));
    }

    /// Add another set (same bounds, so this cannot fail).
    pub fn merge(&mut self, other: &OpHistograms) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            a.add(b).expect("histograms share bounds");
        }
    }

    /// Summaries of the kinds that were recorded.
    pub fn summaries(&self) -> Vec<OpLatency> {
        OpKind::ALL
            .iter()
            .filter(|k| !self.0[k.index()].is_empty())
            .map(|k| summarize(*k, &self.0[k.index()]))
            .collect()
    }
}

/// Percentile summary of one histogram.
pub fn summarize(op: OpKind, h: &Histogram<u64>) -> OpLatency {
    OpLatency {
        op,
        count: h.len(),
        mean_nanos: h.mean(),
        min_nanos: h.min(),
        p50_nanos: h.value_at_quantile(0.50),
        p90_nanos: h.value_at_quantile(0.90),
        p99_nanos: h.value_at_quantile(0.99),
        p999_nanos: h.value_at_quantile(0.999),
        max_nanos: h.max(),
        histogram_b64: encode(h),
    }
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
    fn percentiles_within_error_bound() {
        let mut h = OpHistograms::default();
        for v in 1..=100_000u64 {
            h.record(OpKind::Read, v * 10);
        }
        let s = &h.summaries()[0];
        assert_eq!(s.count, 100_000);
        let within = |got: u64, want: f64| ((got as f64 - want) / want).abs() <= 0.001 + 1e-9;
        assert!(within(s.p50_nanos, 500_000.0), "{}", s.p50_nanos);
        assert!(within(s.p99_nanos, 990_000.0), "{}", s.p99_nanos);
        assert!(within(s.max_nanos, 1_000_000.0), "{}", s.max_nanos);
    }

    #[test]
    fn merge_and_roundtrip() {
        let mut a = OpHistograms::default();
        let mut b = OpHistograms::default();
        a.record(OpKind::Write, 1000);
        b.record(OpKind::Write, 3000);
        b.record(OpKind::Fsync, 5_000_000);
        a.merge(&b);
        let s = a.summaries();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].count, 2);
        let back = decode(&s[0].histogram_b64).expect("decodes");
        assert_eq!(back.len(), 2);
        assert_eq!(back.max(), a.0[OpKind::Write.index()].max());
    }

    #[test]
    fn huge_values_saturate() {
        let mut a = OpHistograms::default();
        a.record(OpKind::Read, u64::MAX);
        assert_eq!(a.summaries()[0].count, 1);
    }

    #[test]
    fn base64_roundtrip() {
        for n in 0..20 {
            let d: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&d)).unwrap(), d);
        }
    }
}
