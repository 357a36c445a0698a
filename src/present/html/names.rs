//! Names of the configurations where room is short (a chart's rows and legends, the columns of
//! the plain-text summary): every label as it is when all of them fit, else letters (A, B, ...)
//! with a key that gives each label whole. A label is never cut: two configurations that differ
//! only in the part cut away (`ext3:mount=data=writeback,noatime` and
//! `ext4:mount=data=writeback,noatime` keep the same end) would look like one.

use crate::model::report::Report;

/// What each configuration is called where room is short.
#[derive(Debug, Clone, PartialEq)]
pub struct Names {
    /// The name of configuration `i`: its label, or its letter.
    pub short: Vec<String>,
    /// The labels, whole.
    full: Vec<String>,
}

impl Names {
    /// Letters for all when any label is longer than `max` characters, else the labels.
    pub fn new<'a>(labels: impl IntoIterator<Item = &'a str>, max: usize) -> Names {
        let full: Vec<String> = labels.into_iter().map(str::to_string).collect();
        let lettered = full.iter().any(|l| l.chars().count() > max);
        let short = full
            .iter()
            .enumerate()
            .map(|(i, l)| if lettered { letter(i) } else { l.clone() })
            .collect();
        Names { short, full }
    }

    /// The names of a report's configurations in its charts: rows of at most
    /// [`super::charts::BAR_LABEL_CHARS`] characters.
    pub fn of(r: &Report) -> Names {
        Names::new(r.configs.iter().map(|c| c.label.as_str()), super::charts::BAR_LABEL_CHARS)
    }

    /// Whether the names are letters (and a key is needed).
    pub fn lettered(&self) -> bool {
        self.short != self.full
    }

    /// The key: `A = label`, one entry per configuration, each label whole and wrapped into
    /// lines of at most `width` characters, after a space or separator (`,` `:` `=`) where one is near (else
    /// within a word); continuation lines are indented with no-break spaces, which an SVG
    /// `<text>` keeps. Empty when the names are the labels.
    pub fn key(&self, width: usize) -> Vec<String> {
        if !self.lettered() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for (s, l) in self.short.iter().zip(&self.full) {
            let head = format!("{s} = ");
            let indent = "\u{a0}".repeat(head.chars().count());
            let room = width.saturating_sub(head.chars().count()).max(8);
            let mut rest: Vec<char> = l.chars().collect();
            let mut first = true;
            loop {
                let cut = if rest.len() <= room {
                    rest.len()
                } else {
                    // The last space or separator in the line's second half, if any.
                    (room / 2..room)
                        .rev()
                        .find(|&i| BREAK_AFTER.contains(&rest[i]))
                        .map_or(room, |i| i + 1)
                };
                let piece: String = rest.drain(..cut).collect();
                lines.push(format!("{}{piece}", if first { &head } else { &indent }));
                first = false;
                if rest.is_empty() {
                    break;
                }
            }
        }
        lines
    }
}

/// Where a key line may end: a label's option lists are separated by these.
const BREAK_AFTER: [char; 4] = [' ', ',', ':', '='];

/// Letter of configuration `i`: A, B, ... Z, then A2, B2, ...
pub fn letter(i: usize) -> String {
    let c = (b'A' + (i % 26) as u8) as char;
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_that_fit_are_kept_and_one_too_long_letters_them_all() {
        let n = Names::new(["ext4", "xfs"], 22);
        assert_eq!(n.short, ["ext4", "xfs"]);
        assert!(!n.lettered() && n.key(60).is_empty());

        let long =
            ["ext3:mount=data=writeback,noatime", "ext4:mount=data=writeback,noatime", "xfs"];
        let n = Names::new(long, 22);
        assert_eq!(n.short, ["A", "B", "C"]);
        assert!(n.lettered());
        assert_eq!(
            n.key(60),
            [
                "A = ext3:mount=data=writeback,noatime",
                "B = ext4:mount=data=writeback,noatime",
                "C = xfs"
            ]
        );
        assert_eq!(letter(25), "Z");
        assert_eq!(letter(26), "A2");
    }

    #[test]
    fn a_key_wraps_a_long_label_without_losing_a_character() {
        let label = "ext4:mkfs=-O ^has_journal -E lazy_itable_init=0,lazy_journal_init=0:mount=data=writeback,noatime,nodiratime,commit=60";
        let n = Names::new([label, "ext4"], 22);
        let key = n.key(40);
        assert!(key.len() > 2, "{key:?}");
        assert!(key.iter().all(|l| l.chars().count() <= 40), "{key:?}");
        assert!(key[0].starts_with("A = ") && key[1].starts_with("\u{a0}\u{a0}\u{a0}\u{a0}"));
        assert_eq!(key.last().unwrap(), "B = ext4");
        let whole: String =
            key[..key.len() - 1].iter().map(|l| l.chars().skip(4).collect::<String>()).collect();
        assert_eq!(whole, label);
        // Lines end after a space or separator where the label has one near.
        assert_eq!(key[0], "A = ext4:mkfs=-O ^has_journal -E ");
        assert!(key[..key.len() - 2].iter().all(|l| l.ends_with(BREAK_AFTER)), "{key:?}");
    }
}
