//! `--format html`: the self-contained HTML report ([`crate::present::html`]) on stdout.

use crate::model::report::Report;
use crate::present::Exporter;

/// The HTML report of this one run.
pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        let kind = if report.configs.len() == 1 {
            crate::model::run::RunKind::Run
        } else {
            crate::model::run::RunKind::Compare
        };
        let run = crate::present::html::ReportRun {
            id: None,
            kind,
            command_line: String::new(),
            report: report.clone(),
        };
        Ok(crate::present::html::render(&[run])?.0.into_bytes())
    }
}
