//! JSON: the whole report, every repetition and phase. A run's JSON is its one target's part
//! ([`crate::model::result::RunReport`]), as `fsbench run` has always printed it.

use super::Exporter;
use crate::model::report::Report;

/// Pretty-printed JSON.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        let mut v = match super::single(report) {
            Some(run) => serde_json::to_vec_pretty(run)?,
            None => serde_json::to_vec_pretty(report)?,
        };
        v.push(b'\n');
        Ok(v)
    }
}
