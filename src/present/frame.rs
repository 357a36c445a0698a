//! The frame every terminal table and paragraph of fsbench shares: the terminal's width, UTF-8
//! borders, columns of words wrapped to the width, figures never broken across lines, and a
//! table too wide for the terminal stacked as panels that each repeat its key column (the
//! test). Nothing is cut: words wrap, figures move to the next panel.

use comfy_table::{
    presets::{NOTHING, UTF8_FULL_CONDENSED},
    Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table, Width,
};

/// Width assumed when stdout is not a terminal, or one that reports no usable width (mpirun
/// gives ranks a pty of width 0).
pub const NOT_A_TERMINAL: usize = 100;

/// Narrowest width fsbench lays text out for: below it not even a test id and one figure fit.
pub const MIN_WIDTH: usize = 40;

/// The width to lay text out for: `COLUMNS` if set to a number, else the terminal's width if
/// stdout is a terminal, else [`NOT_A_TERMINAL`]; never below [`MIN_WIDTH`].
pub fn terminal_width() -> usize {
    let columns = std::env::var("COLUMNS").ok();
    width_from(columns.as_deref(), || {
        use std::io::IsTerminal;
        let out = std::io::stdout();
        if !out.is_terminal() {
            return None;
        }
        terminal_size::terminal_size_of(&out).map(|(w, _)| usize::from(w.0))
    })
}

/// [`terminal_width`] from the value of `COLUMNS` and the terminal's width (asked only when
/// `COLUMNS` says nothing).
fn width_from(columns: Option<&str>, terminal: impl FnOnce() -> Option<usize>) -> usize {
    let parsed = columns.and_then(|c| c.trim().parse::<usize>().ok()).filter(|w| *w > 0);
    parsed.or_else(|| terminal().filter(|w| *w > 0)).unwrap_or(NOT_A_TERMINAL).max(MIN_WIDTH)
}

/// Display width of a text (its widest line), as a terminal shows it.
pub fn text_width(s: &str) -> usize {
    s.lines().map(textwrap::core::display_width).max().unwrap_or(0)
}

/// Narrowest a column of words gets, in characters, when its content is wider.
pub const MIN_WRAP_WIDTH: usize = 12;

/// Longest word a column of words keeps whole (a test's name, a label); a longer one (a path)
/// may be broken over lines.
pub const LONGEST_WHOLE_WORD: usize = 40;

/// Width a column of words is counted at when a table is split into panels anyway.
pub const COMFORTABLE_WRAP_WIDTH: usize = 40;

/// Widening a figure's column by this many characters to put its header on one line comes
/// before widening descriptions.
pub const CHEAP_HEADER: usize = 6;

/// What a column holds, which decides how it may be laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Names the row (a test id): repeated in every panel, never wrapped.
    Key,
    /// Words that may wrap to fit (descriptions, names, verdicts).
    Words,
    /// A figure: right-aligned, never wrapped (its header may be).
    Figure,
    /// A short text kept whole, left-aligned (an operation's name).
    Text,
}

#[derive(Debug, Clone)]
struct Column {
    header: String,
    kind: Kind,
    /// Kept in the panel of the column before it (a verdict beside its figure).
    glued: bool,
}

/// A table laid out for a width: one table when it fits, else panels of columns, each with the
/// key columns first. Columns of [`Kind::Words`] wrap; others keep their cells whole.
#[derive(Debug, Clone, Default)]
pub struct Grid {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
    plain: bool,
}

impl Grid {
    /// A table with fsbench's UTF-8 borders.
    pub fn new() -> Grid {
        Grid::default()
    }

    /// A table without borders (columns apart by spaces), as `history` lists runs.
    pub fn plain() -> Grid {
        Grid { plain: true, ..Grid::default() }
    }

    /// Add a column.
    pub fn column(&mut self, header: impl Into<String>, kind: Kind) -> &mut Grid {
        self.columns.push(Column { header: header.into(), kind, glued: false });
        self
    }

    /// Add a column that stays in the panel of the one before it.
    pub fn glued(&mut self, header: impl Into<String>, kind: Kind) -> &mut Grid {
        self.columns.push(Column { header: header.into(), kind, glued: true });
        self
    }

    /// Add a row; missing cells are blank.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn cell(&self, row: usize, col: usize) -> &str {
        self.rows[row].get(col).map(String::as_str).unwrap_or("")
    }

    /// The width of column `col` with nothing wrapped.
    fn natural(&self, col: usize) -> usize {
        let cells = (0..self.rows.len()).map(|r| text_width(self.cell(r, col))).max().unwrap_or(0);
        cells.max(text_width(&self.columns[col].header)).max(1)
    }

    /// The narrowest column `col` may be: its widest cell for columns kept whole (the header
    /// wraps at its spaces, a word of it longer than the cells and [`MIN_WRAP_WIDTH`] breaks);
    /// for words [`MIN_WRAP_WIDTH`], or its longest word up to
    /// [`LONGEST_WHOLE_WORD`] (a test's name such as `randread-2k-cached-4t` stays whole).
    fn min_width(&self, col: usize) -> usize {
        let c = &self.columns[col];
        let longest = |s: &str| s.split_whitespace().map(textwrap::core::display_width).max();
        match c.kind {
            Kind::Words => {
                let word = (0..self.rows.len())
                    .filter_map(|r| longest(self.cell(r, col)))
                    .chain(longest(&c.header))
                    .max()
                    .unwrap_or(0);
                self.natural(col).min(MIN_WRAP_WIDTH.max(word.min(LONGEST_WHOLE_WORD)))
            }
            _ => {
                // A header's words longer than the cells (a label that is a path) may break.
                let cells =
                    (0..self.rows.len()).map(|r| text_width(self.cell(r, col))).max().unwrap_or(0);
                let word = longest(&c.header).unwrap_or(0).min(cells.max(MIN_WRAP_WIDTH));
                cells.max(word).max(1)
            }
        }
    }

    /// The width of column `col` with every word of it whole (up to [`LONGEST_WHOLE_WORD`]),
    /// its header's too.
    fn whole_width(&self, col: usize) -> usize {
        let longest = |s: &str| s.split_whitespace().map(textwrap::core::display_width).max();
        match self.columns[col].kind {
            Kind::Words => self.min_width(col),
            _ => {
                let word = longest(&self.columns[col].header).unwrap_or(0);
                self.min_width(col).max(word.min(LONGEST_WHOLE_WORD))
            }
        }
    }

    /// The width column `col` is counted at when filling panels: its narrowest; for words,
    /// [`MIN_WRAP_WIDTH`] when `tight` (long words may break), else their longest word or
    /// [`COMFORTABLE_WRAP_WIDTH`], whichever is more.
    fn width_of(&self, col: usize, tight: bool) -> usize {
        match self.columns[col].kind {
            Kind::Words if tight => self.natural(col).min(MIN_WRAP_WIDTH),
            Kind::Words => self.natural(col).min(self.min_width(col).max(COMFORTABLE_WRAP_WIDTH)),
            _ => self.min_width(col),
        }
    }

    /// Columns of each panel: the key columns, then as many of the others (glued ones kept
    /// together, in their order) as fit `width`. One panel when every column fits at its
    /// narrowest; else the panels are filled leaving columns of words room to read
    /// ([`Grid::width_of`]): the table is split anyway.
    fn panels(&self, width: usize) -> Vec<Vec<usize>> {
        let panels = self.pack(width, true);
        if panels.len() > 1 {
            return self.pack(width, false);
        }
        panels
    }

    fn pack(&self, width: usize, tight: bool) -> Vec<Vec<usize>> {
        let per_column = if self.plain { 2 } else { 3 };
        let cost = |c: usize| self.width_of(c, tight) + per_column;
        let keys: Vec<usize> =
            (0..self.columns.len()).filter(|c| self.columns[*c].kind == Kind::Key).collect();
        let base = usize::from(!self.plain) + keys.iter().map(|c| cost(*c)).sum::<usize>();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for c in (0..self.columns.len()).filter(|c| self.columns[*c].kind != Kind::Key) {
            match groups.last_mut() {
                Some(g) if self.columns[c].glued => g.push(c),
                _ => groups.push(vec![c]),
            }
        }
        // Glued columns too wide together for any panel go one by one.
        let groups: Vec<Vec<usize>> = groups
            .into_iter()
            .flat_map(|g| {
                if base + g.iter().map(|c| cost(*c)).sum::<usize>() > width {
                    g.into_iter().map(|c| vec![c]).collect()
                } else {
                    vec![g]
                }
            })
            .collect();
        // First fit: each group goes to the first panel with room for it, so a narrow column
        // late in the table fills a gap rather than opening a panel of its own.
        let mut panels: Vec<(usize, Vec<usize>)> = Vec::new();
        for g in groups {
            let need: usize = g.iter().map(|c| cost(*c)).sum();
            match panels.iter_mut().find(|(used, _)| used + need <= width) {
                Some((used, p)) => {
                    p.extend(g);
                    *used += need;
                }
                None => panels.push((base + need, g)),
            }
        }
        let mut panels: Vec<Vec<usize>> = panels.into_iter().map(|(_, p)| p).collect();
        if panels.is_empty() {
            panels.push(Vec::new());
        }
        panels.into_iter().map(|p| keys.iter().copied().chain(p).collect()).collect()
    }

    /// The table laid out for `width` columns, each panel's lines ending in a newline.
    pub fn render(&self, width: usize) -> String {
        let mut out = String::new();
        for panel in self.panels(width) {
            let t = self.panel_table(&panel, width);
            for line in t.to_string().lines() {
                out.push_str(if self.plain { line.trim_end() } else { line });
                out.push('\n');
            }
        }
        out
    }

    /// The widths of a panel's columns `cols` within `width`. Every column starts at its
    /// narrowest (words at [`MIN_WRAP_WIDTH`]); then the room left goes, in turn, to words kept
    /// whole (a name, a label; in cells, then in headers), to columns of words short enough for
    /// one line, to the headers of the columns kept whole that a few characters put on one
    /// line ([`CHEAP_HEADER`]), to the other columns of words (descriptions) up to
    /// [`COMFORTABLE_WRAP_WIDTH`] evenly, to the other headers (each on one line or left as
    /// it is), and to the descriptions up to their full width.
    fn widths(&self, cols: &[usize], width: usize) -> Vec<usize> {
        let overhead = if self.plain { 2 * cols.len() } else { 3 * cols.len() + 1 };
        let room = width.saturating_sub(overhead);
        let words: Vec<usize> =
            (0..cols.len()).filter(|i| self.columns[cols[*i]].kind == Kind::Words).collect();
        let fixed: Vec<usize> =
            (0..cols.len()).filter(|i| self.columns[cols[*i]].kind != Kind::Words).collect();
        let natural: Vec<usize> = cols.iter().map(|c| self.natural(*c)).collect();
        let min: Vec<usize> = cols.iter().map(|c| self.min_width(*c)).collect();
        let mut w: Vec<usize> = (0..cols.len())
            .map(|i| if words.contains(&i) { natural[i].min(MIN_WRAP_WIDTH) } else { min[i] })
            .collect();
        // Words whole where the room allows, the smallest need first: in the words' columns,
        // then in the headers of the others (labels: all of them or none, so that no
        // configuration's header reads better than another's).
        let whole: Vec<usize> = cols.iter().map(|c| self.whole_width(*c)).collect();
        grant(&mut w, &words, &whole, room);
        let need: usize = fixed.iter().map(|i| whole[*i] - w[*i]).sum();
        if w.iter().sum::<usize>() + need <= room {
            for i in &fixed {
                w[*i] = whole[*i];
            }
        }
        // Short words' columns (a name, a verdict) on one line, then headers on one line,
        // then descriptions.
        let short: Vec<usize> =
            words.iter().copied().filter(|i| natural[*i] <= COMFORTABLE_WRAP_WIDTH).collect();
        grant(&mut w, &short, &natural, room);
        let cheap: Vec<usize> =
            fixed.iter().copied().filter(|i| natural[*i] <= w[*i] + CHEAP_HEADER).collect();
        grant(&mut w, &cheap, &natural, room);
        let comfortable: Vec<usize> =
            natural.iter().map(|n| (*n).min(COMFORTABLE_WRAP_WIDTH)).collect();
        fill(&mut w, &words, &comfortable, room);
        grant(&mut w, &fixed, &natural, room);
        fill(&mut w, &words, &natural, room);
        w
    }

    /// The comfy-table of one panel: columns kept whole at their widths, words wrapped in the
    /// rest of the width.
    fn panel_table(&self, cols: &[usize], width: usize) -> Table {
        let mut t = Table::new();
        t.load_preset(if self.plain { NOTHING } else { UTF8_FULL_CONDENSED })
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(width).unwrap_or(u16::MAX));
        t.set_header(cols.iter().map(|c| Cell::new(&self.columns[*c].header)));
        for r in 0..self.rows.len() {
            t.add_row(cols.iter().map(|c| {
                let cell = Cell::new(self.cell(r, *c));
                match self.columns[*c].kind {
                    Kind::Figure => cell.set_alignment(CellAlignment::Right),
                    _ => cell,
                }
            }));
        }
        // comfy-table's widths include the padding, a space on either side.
        for (i, w) in self.widths(cols, width).into_iter().enumerate() {
            let w = Width::Fixed(u16::try_from(w + 2).unwrap_or(u16::MAX));
            if let Some(col) = t.column_mut(i) {
                col.set_constraint(ColumnConstraint::Absolute(w));
            }
        }
        t
    }
}

/// Widen each of the columns `which` of `w` to its `target` while the room allows, the
/// smallest need first (a short column is given its whole width before a long one its share).
fn grant(w: &mut [usize], which: &[usize], target: &[usize], room: usize) {
    let mut needs = which.to_vec();
    needs.sort_by_key(|i| target[*i].saturating_sub(w[*i]));
    for i in needs {
        let spare = room.saturating_sub(w.iter().sum());
        if target[i].saturating_sub(w[i]) <= spare {
            w[i] = w[i].max(target[i]);
        }
    }
}

/// Widen the columns `which` of `w` evenly, a character at a time to the narrowest, each up to
/// its `limit`, while their sum is below `room`.
fn fill(w: &mut [usize], which: &[usize], limit: &[usize], room: usize) {
    while w.iter().sum::<usize>() < room {
        match which.iter().copied().filter(|i| w[*i] < limit[*i]).min_by_key(|i| w[*i]) {
            Some(i) => w[i] += 1,
            None => break,
        }
    }
}

/// `text` wrapped to `width`: its first line starts with `first`, the others with `rest`; each
/// line ends in a newline. Words longer than a line are broken, never cut; line breaks in
/// `text` are kept.
pub fn wrap(text: &str, width: usize, first: &str, rest: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let opts = textwrap::Options::new(width)
            .initial_indent(if i == 0 { first } else { rest })
            .subsequent_indent(rest)
            .break_words(true)
            .word_splitter(textwrap::WordSplitter::NoHyphenation);
        for l in textwrap::wrap(line, opts) {
            out.push_str(l.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Text laid out in lines of its own (a profile's summary, a preload's report) fitted to
/// `width`: a line that fits is kept as it is; a longer one wraps, its continuation indented
/// under the text after an aligned label (`  device:    read ...`) when it has one, else two
/// spaces deeper than the line.
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if textwrap::core::display_width(line) <= width {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let body = line.trim_start();
        let lead = &line[..line.len() - body.len()];
        let hang = match body.split_once(':') {
            Some((label, rest))
                if label.trim().len() <= 20
                    && !label.trim().contains("  ")
                    && rest.starts_with("  ") =>
            {
                let text = rest.trim_start();
                textwrap::core::display_width(&line[..line.len() - text.len()])
            }
            _ => textwrap::core::display_width(lead) + 2,
        };
        let rest = " ".repeat(hang.min(width / 2));
        out.push_str(&wrap(body, width, lead, &rest));
    }
    out
}

/// `- note` lines under a heading, each wrapped with its continuation under the text.
pub fn bullets(heading: &str, notes: &[String], width: usize) -> String {
    let mut out = format!("{heading}\n");
    for n in notes {
        out.push_str(&wrap(n, width, "  - ", "    "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(s: &str, width: usize) -> bool {
        s.lines().all(|l| l.chars().count() <= width)
    }

    #[test]
    fn the_width_is_columns_else_the_terminal_else_100() {
        assert_eq!(width_from(Some("120"), || Some(80)), 120);
        assert_eq!(width_from(Some(" 72 "), || None), 72);
        assert_eq!(width_from(None, || Some(80)), 80);
        assert_eq!(width_from(Some("wide"), || Some(90)), 90);
        assert_eq!(width_from(None, || None), NOT_A_TERMINAL);
        // mpirun's pty of width 0, COLUMNS=0.
        assert_eq!(width_from(Some("0"), || Some(0)), NOT_A_TERMINAL);
        assert_eq!(width_from(Some("20"), || None), MIN_WIDTH);
    }

    #[test]
    fn at_80_columns_words_wrap_and_numbers_stay_whole() {
        let mut g = Grid::new();
        g.column("test", Kind::Key).column("description", Kind::Words);
        g.column("ext4 MiB/s", Kind::Figure).column("xfs MiB/s", Kind::Figure);
        g.column("winner", Kind::Words);
        let long = "write a file of 1 GiB in 128 KiB writes, then fsync it, timing the fsync too";
        g.row(vec![
            "10".into(),
            long.into(),
            "123456.789".into(),
            "98765.432".into(),
            "ext4 1.25x faster (p < 0.01)".into(),
        ]);
        let s = g.render(80);
        assert!(s.lines().count() > 5, "the description wraps:\n{s}");
        for n in ["123456.789", "98765.432"] {
            assert!(s.contains(n), "{n} whole:\n{s}");
        }
        assert!(fits(&s, 80), "fits 80 columns:\n{s}");
        // Too many figures for 80 columns: panels, each with the test, every figure whole,
        // and the description keeps a readable width.
        let mut g = Grid::new();
        g.column("test", Kind::Key).column("description", Kind::Words);
        for i in 0..8 {
            g.column(format!("ext{i} MiB/s"), Kind::Figure);
        }
        let mut row = vec!["10".to_string(), long.to_string()];
        row.extend((0..8).map(|i| format!("123456{i}.8")));
        g.row(row);
        let s = g.render(80);
        assert!(fits(&s, 80), "{s}");
        for i in 0..8 {
            assert!(s.contains(&format!("123456{i}.8")), "{s}");
        }
        let panels = s.lines().filter(|l| l.starts_with('┌')).count();
        assert!(panels > 1, "{s}");
        assert_eq!(s.lines().filter(|l| l.starts_with("│ 10 ")).count(), panels, "{s}");
        let first = s.lines().next().unwrap();
        let segments: Vec<usize> = first
            .trim_matches(|c| c == '┌' || c == '┐')
            .split('┬')
            .map(|x| x.chars().count())
            .collect();
        assert!(segments[1] >= MIN_WRAP_WIDTH + 2, "description at least readable:\n{s}");
    }

    #[test]
    fn labels_too_long_for_all_headers_break_in_every_header_alike() {
        let (a, b) = ("/var/tmp/fsbench-tests/.tmpKpRyng", "/var/tmp/fsbench-tests/.tmpOGvAVh");
        let mut g = Grid::new();
        g.column("test", Kind::Key).column("description", Kind::Words);
        g.column(format!("{a} MiB/s"), Kind::Figure).column(format!("{b} MiB/s"), Kind::Figure);
        g.column("winning FS / delta", Kind::Words);
        let desc = "5 MB worth of pread(2K) per thread within a shared 1024 MB file, random offset";
        g.row(["14", desc, "424", "420", "draw"].map(String::from).to_vec());
        let s = g.render(100);
        assert!(fits(&s, 100), "{s}");
        assert!(s.contains("winning FS / delta"), "a short header whole:\n{s}");
        let head: Vec<&str> = s.lines().nth(1).unwrap().split('┆').collect();
        assert_eq!(head[2].len(), head[3].len(), "both labels' columns alike:\n{s}");
        // With room for both, both labels are whole.
        let s = g.render(130);
        assert!(s.contains(a) && s.contains(b), "{s}");
    }

    #[test]
    fn glued_columns_share_a_panel() {
        let mut g = Grid::new();
        g.column("test", Kind::Key);
        for c in ["a", "b", "c", "d"] {
            g.column(format!("{c} MiB/s"), Kind::Figure);
            g.glued(format!("{c} vs base"), Kind::Words);
        }
        g.row(
            ["1", "100", "", "200", "2.00X faster", "300", "3.00X faster", "50", "2.00X slower"]
                .map(String::from)
                .to_vec(),
        );
        let s = g.render(50);
        assert!(fits(&s, 50), "{s}");
        for head in s.lines().filter(|l| l.starts_with('│') && l.contains("test")) {
            assert_eq!(head.matches("MiB/s").count(), head.matches(" vs ").count(), "{s}");
        }
    }

    #[test]
    fn long_lines_of_a_summary_wrap_under_their_label() {
        let text = "profile of `cat x`: 3 files\n  device:    read 4.00 MiB in 12 requests, wrote 0 B in 0 requests, 0 flushes\n    loop5:   read 4.00 MiB in 12 requests with a long tail of words\n  cache in:  44.0 MiB by read, 4.00 KiB by fault, 589 MiB by readahead\n";
        let s = fit(text, 50);
        assert!(fits(&s, 50), "{s}");
        assert!(s.starts_with("profile of `cat x`: 3 files\n  device:    read 4.00"), "{s}");
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines[2].starts_with("             ") && !lines[2].starts_with("              "));
        let cache = lines.iter().position(|l| l.starts_with("  cache in:")).unwrap();
        assert!(lines[cache + 1].starts_with("             589 MiB"), "{s}");
        assert_eq!(
            s.split_whitespace().collect::<Vec<_>>(),
            text.split_whitespace().collect::<Vec<_>>()
        );
        assert_eq!(fit(text, 200), text, "lines that fit are kept as they are");
    }

    #[test]
    fn prose_wraps_with_its_indents_and_loses_nothing() {
        let text = "a note that is rather longer than the line it is given to fit into, with \
                    /a/very/long/path/that/cannot/fit/on/any/line/of/this/width at the end";
        let s = wrap(text, 30, "  - ", "    ");
        assert!(fits(&s, 30), "{s}");
        assert!(s.starts_with("  - a note") && s.lines().skip(1).all(|l| l.starts_with("    ")));
        let back: String = s.lines().map(|l| l.trim_start_matches(['-', ' '])).collect();
        assert_eq!(back.replace(' ', ""), text.replace(' ', ""));
    }
}
