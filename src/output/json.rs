//! JSON: the whole [`RunReport`], every repetition and phase.

use super::Exporter;
use crate::result::RunReport;

/// Pretty-printed JSON.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn serialize(&self, report: &RunReport) -> anyhow::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(report)?;
        v.push(b'\n');
        Ok(v)
    }
}
