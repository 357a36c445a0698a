//! The frame every terminal table of fsbench shares: UTF-8 borders, columns of words wrapped
//! to the terminal, numbers never broken across lines.

use comfy_table::{
    presets::UTF8_FULL_CONDENSED, ColumnConstraint, ContentArrangement, Table, Width,
};

/// Width assumed when stdout is not a terminal, or one that reports no usable width (mpirun
/// gives ranks a pty of width 0).
pub const DEFAULT_WIDTH: u16 = 150;

/// An empty table in fsbench's style, as wide as the terminal (else [`DEFAULT_WIDTH`]).
pub fn table() -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Dynamic);
    if t.width().is_none_or(|w| w < 40) {
        t.set_width(DEFAULT_WIDTH);
    }
    t
}

/// Narrowest a wrapped column gets, in characters (else comfy-table may give it one).
pub const MIN_WRAP_WIDTH: u16 = 16;

/// Only the columns in `wrap` (descriptions, verdicts) may be wrapped to fit the width, and not
/// below [`MIN_WRAP_WIDTH`]; every other column keeps its content's width, so a figure is never
/// split over two lines. A table that cannot fit even so (many configurations on a narrow
/// terminal) comes out wider than the terminal, which then folds its lines. Call after the
/// header is set.
pub fn wrap_only(t: &mut Table, wrap: &[usize]) {
    for (i, c) in t.column_iter_mut().enumerate() {
        c.set_constraint(if wrap.contains(&i) {
            ColumnConstraint::LowerBoundary(Width::Fixed(MIN_WRAP_WIDTH))
        } else {
            ColumnConstraint::ContentWidth
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_80_columns_words_wrap_and_numbers_stay_whole() {
        let mut t = table();
        t.set_width(80);
        t.set_header(["test", "description", "ext4 MiB/s", "xfs MiB/s", "winner"]);
        let long = "write a file of 1 GiB in 128 KiB writes, then fsync it, timing the fsync too";
        t.add_row(["10", long, "123456.789", "98765.432", "ext4 1.25x faster (p < 0.01)"]);
        wrap_only(&mut t, &[1, 4]);
        let s = t.to_string();
        assert!(s.lines().count() > 5, "the description wraps:\n{s}");
        for n in ["123456.789", "98765.432", "ext4 MiB/s", "xfs MiB/s"] {
            assert!(s.contains(n), "{n} whole:\n{s}");
        }
        assert!(s.lines().all(|l| l.chars().count() <= 80), "fits 80 columns:\n{s}");
        // Too many figures for 80 columns: the description keeps a readable width.
        let mut t = table();
        t.set_width(80);
        let figs = ["1234567.8"; 8];
        let mut header = vec!["description"];
        header.extend(["ext4 MiB/s"; 8]);
        t.set_header(header);
        let mut row = vec![long];
        row.extend(figs);
        t.add_row(row);
        wrap_only(&mut t, &[0]);
        let s = t.to_string();
        let first = s.lines().next().unwrap();
        let w = first.chars().skip(1).take_while(|c| *c == '─').count();
        assert!(w >= MIN_WRAP_WIDTH as usize, "at least {MIN_WRAP_WIDTH} wide:\n{s}");
        assert!(s.contains("1234567.8"), "{s}");
    }
}
