//! Every way a result is shown. Each format is one module behind [`Exporter`]; all read the same
//! [`crate::result::RunReport`].

pub mod bonnie;
pub mod compare;
pub mod csv;
pub mod json;
pub mod reps;
pub mod table;
pub mod units;

use crate::result::RunReport;

/// Turns a report into bytes for stdout or a file.
pub trait Exporter {
    /// Serialise the whole report.
    fn serialize(&self, report: &RunReport) -> anyhow::Result<Vec<u8>>;
}

/// Output formats of `fsbench run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people (stdout), notes and warnings below it.
    Table,
    /// The full result, every repetition and phase, as JSON.
    Json,
    /// One row per test, for spreadsheets.
    Csv,
    /// bonnie++'s two tables (for the `bonnie` suite).
    Bonnie,
}

/// The exporter for a format.
pub fn exporter(f: Format) -> Box<dyn Exporter> {
    match f {
        Format::Table => Box::new(table::TableExporter),
        Format::Json => Box::new(json::JsonExporter),
        Format::Csv => Box::new(csv::CsvExporter),
        Format::Bonnie => Box::new(bonnie::BonnieExporter),
    }
}
