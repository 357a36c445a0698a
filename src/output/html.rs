//! `--format html`: the self-contained HTML report ([`crate::report`]) on stdout.

use super::Exporter;
use crate::model::report::Report;

/// The HTML report of this one run.
pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        let kind = if report.configs.len() == 1 {
            crate::model::run::RunKind::Run
        } else {
            crate::model::run::RunKind::Compare
        };
        let run = crate::report::ReportRun {
            id: None,
            kind,
            command_line: String::new(),
            report: report.clone(),
        };
        Ok(crate::report::render(&[run])?.0.into_bytes())
    }
}
