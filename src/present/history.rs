//! `fsbench history`: the stored runs, newest first, one row each, without borders (a list to
//! scan and grep); the configurations wrap to the terminal's width.

use super::frame::{Grid, Kind};
use crate::model::run::RunKind;
use crate::model::units::utc;
use crate::store::RunSummary;

/// The list of `runs` laid out for `width` columns.
pub fn render(runs: &[RunSummary], width: usize) -> String {
    let mut g = Grid::plain();
    g.column("id", Kind::Figure).column("started (UTC)", Kind::Text).column("kind", Kind::Text);
    g.column("suite", Kind::Words).column("scale", Kind::Words);
    g.column("reps", Kind::Figure).column("tests", Kind::Figure);
    g.column("status", Kind::Text).column("configurations", Kind::Words);
    for r in runs {
        let date = utc(r.started_unix_s);
        // An integrity run has no scale: it stores its fault list there, shown after the
        // configurations instead.
        let (scale, configs) = match r.kind {
            RunKind::Integrity => {
                ("-".to_string(), format!("{} (faults: {})", r.labels.join(" vs "), r.scale))
            }
            _ => (r.scale.clone(), r.labels.join(" vs ")),
        };
        g.row(vec![
            r.id.to_string(),
            date.trim_end_matches(" UTC").to_string(),
            r.kind.as_str().to_string(),
            r.suite.clone(),
            scale,
            r.repeat.to_string(),
            format!("{}/{}", r.tests_done, r.tests_total),
            r.status_text().to_string(),
            configs,
        ]);
    }
    g.render(width)
}
