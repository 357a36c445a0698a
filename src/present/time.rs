//! The one line that says where a `run` or `compare` spent its time (below the table): the
//! whole, the share inside timed phases, each kind of untimed work, and the tests that took
//! most. Its figures are [`crate::model::time::TimeSplit`]'s (also in the JSON and the store).

use crate::model::time::TimeSplit;

/// Tests named on the line: the ones that took most.
const MOST: usize = 3;

/// Seconds for people, without a space (a wrapped line never parts a figure from its unit):
/// `0.4s`, `12s`, `10m12s`.
fn secs(s: f64) -> String {
    if s >= 600.0 {
        let whole = s.round() as u64;
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else if s >= 10.0 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

/// "Time: 10m12s in all; 405s (66%) in timed phases; outside them 207s: lay-out 80s, ...;
/// most: test 8 190s (188s timed), ..."
pub fn line(t: &TimeSplit) -> String {
    let pct = |x: f64| if t.total_s > 0.0 { 100.0 * x / t.total_s } else { 0.0 };
    let kinds = [
        ("lay-out", t.layout_s),
        ("cache", t.cache_s),
        ("sync", t.sync_s),
        ("removing files", t.cleanup_s),
        ("--min-time passes", t.min_time_s),
        ("--curve steps", t.curve_s),
        ("testbeds", t.testbed_s),
        ("decisions", t.decision_s),
        ("other", t.other_s),
    ];
    // Every kind that took a measurable time, largest first.
    let mut shown: Vec<(&str, f64)> = kinds.into_iter().filter(|(_, s)| *s >= 0.05).collect();
    shown.sort_by(|a, b| b.1.total_cmp(&a.1));
    let parts: Vec<String> = shown.iter().map(|(k, s)| format!("{k} {}", secs(*s))).collect();
    let mut out = format!(
        "Time: {} in all; {} ({:.0}%) in timed phases; outside them {}",
        secs(t.total_s),
        secs(t.timed_s),
        pct(t.timed_s),
        secs(t.untimed_s()),
    );
    if !parts.is_empty() {
        out.push_str(&format!(": {}", parts.join(", ")));
    }
    if t.reused_layouts > 0 {
        let n = t.reused_layouts;
        out.push_str(&format!(" ({n} repetition{} reused laid-out files)", plural(n)));
    }
    let most: Vec<String> = t
        .tests
        .iter()
        .take(MOST)
        .filter(|x| x.total_s() > 0.0)
        .map(|x| format!("test {} {} ({} timed)", x.id, secs(x.total_s()), secs(x.timed_s)))
        .collect();
    if !most.is_empty() {
        out.push_str(&format!("; most: {}", most.join(", ")));
    }
    out.push('.');
    out
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::time::TestTime;

    #[test]
    fn the_line_gives_the_whole_each_kind_largest_first_and_the_costliest_tests() {
        let test = |id: &str, timed_s: f64, untimed_s: f64| TestTime {
            id: id.into(),
            name: String::new(),
            reps: 10,
            timed_s,
            untimed_s,
            layout_s: 0.0,
            cache_s: 0.0,
        };
        let t = TimeSplit {
            total_s: 612.0,
            timed_s: 405.0,
            layout_s: 80.0,
            cache_s: 60.0,
            sync_s: 0.01,
            cleanup_s: 20.0,
            testbed_s: 15.0,
            decision_s: 0.2,
            other_s: 31.8,
            reused_layouts: 2,
            tests: vec![test("8", 190.0, 2.0), test("5", 10.0, 30.0), test("4", 5.0, 20.0)],
            ..Default::default()
        };
        assert_eq!(
            line(&t),
            "Time: 10m12s in all; 405s (66%) in timed phases; outside them 207s: lay-out 80s, \
             cache 60s, other 32s, removing files 20s, testbeds 15s, decisions 0.2s \
             (2 repetitions reused laid-out files); most: test 8 192s (190s timed), test 5 40s \
             (10s timed), test 4 25s (5.0s timed)."
        );
    }
}
