//! Every way a result is shown. Each format is one module behind [`Exporter`]; all read the one
//! report type, [`crate::model::report::Report`] (a `run` is a comparison of one target).
//!
//! For a report of one target (a `run`) the table, JSON, CSV and bonnie formats show that
//! target's results as `fsbench run` always has (the JSON is the target's part of the report);
//! for several they show the comparison.

pub mod bonnie;
pub mod compare;
pub mod csv;
pub mod curve;
pub mod diff;
pub mod fio;
pub mod fio_log;
pub mod frame;
pub mod history;
pub mod host;
pub mod html;
pub mod integrity;
pub mod json;
pub mod reps;
pub mod roles;
pub mod series;
pub mod table;
pub mod time;

use crate::model::report::Report;

/// Turns a report into bytes for stdout or a file.
pub trait Exporter {
    /// Serialise the whole report.
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>>;
}

/// Output formats of `run`, `compare` and `show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people (a comparison: the head-to-head table and summary), notes below it.
    Table,
    /// The full result, every repetition and phase, as JSON (latency histograms and traced
    /// request points only with `--raw`).
    Json,
    /// One row per test (and configuration), for spreadsheets.
    Csv,
    /// bonnie++'s two tables (for the `bonnie` suite), one pair per configuration.
    Bonnie,
    /// The self-contained HTML report with charts.
    Html,
}

/// Options of the exporters.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportOptions {
    /// Tables of a comparison: also each configuration's observed facts per test.
    pub details: bool,
    /// Columns to lay text out for; `None`: the terminal's ([`frame::terminal_width`]).
    pub width: Option<usize>,
    /// JSON: keep the raw data, latency histograms and traced request points (left out by
    /// default: most of the size).
    pub raw: bool,
}

/// The exporter for a format.
pub fn exporter(f: Format, opts: ExportOptions) -> Box<dyn Exporter> {
    match f {
        Format::Table => Box::new(table::TableExporter {
            details: opts.details,
            width: opts.width.unwrap_or_else(frame::terminal_width),
        }),
        Format::Json => Box::new(json::JsonExporter { raw: opts.raw }),
        Format::Csv => Box::new(csv::CsvExporter),
        Format::Bonnie => Box::new(bonnie::BonnieExporter),
        Format::Html => Box::new(html::export::HtmlExporter),
    }
}

/// The results of a report of one target, if it is one.
pub fn single(report: &Report) -> Option<&crate::model::result::RunReport> {
    match report.configs.as_slice() {
        [one] => Some(&one.run),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
