//! `fsbench integrity`'s matrix in the terminal: per configuration, block type × fault with each
//! case's outcome (a cell that differs from the expected truth says so), then one evidence line
//! per case, all laid out for the terminal's width.

use super::frame::{self, Grid, Kind};
use crate::integrity::matrix::{evidence_line, ConfigMatrix, Outcome};

/// The matrix as a terminal table, then one evidence line per case, for `width` columns. A cell
/// that differs from the expected truth says so (`silent (expected detected)`).
pub fn render(m: &ConfigMatrix, width: usize) -> String {
    let head = format!("{} (seed {}, {:.0} s)", m.config, m.seed, m.elapsed_seconds);
    let mut s = frame::wrap(&head, width, "", "  ");
    if let Some(e) = &m.error {
        s.push_str(&frame::wrap(&format!("not run: {e}"), width, "  ", "    "));
        return s;
    }
    let (targets, faults) = m.axes();
    let mut g = Grid::new();
    g.column("block \\ fault", Kind::Key);
    for f in &faults {
        g.column(f.name(), Kind::Words);
    }
    for target in &targets {
        let mut row = vec![target.describe().to_string()];
        for f in &faults {
            row.push(match (m.outcome(*target, *f), m.expected(*target)) {
                (None, _) => "-".to_string(),
                (Some(o), Some(e)) if o != e && o != Outcome::NotRun => {
                    format!("{} (expected {})", o.name(), e.name())
                }
                (Some(o), _) => o.name().to_string(),
            });
        }
        g.row(row);
    }
    s.push_str(&g.render(width));
    for c in &m.cases {
        s.push_str(&frame::wrap(&evidence_line(c), width, "  ", "    "));
    }
    s
}
