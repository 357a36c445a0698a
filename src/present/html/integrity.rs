//! The HTML report of `fsbench integrity` runs (`fsbench report RUN`, `fsbench show RUN
//! --format html`): one self-contained page (inline CSS, no scripts) with IRON's table per
//! configuration, block type × fault, each cell coloured by its outcome, its evidence line on
//! hover, and below the table every case unfolded on click: the evidence line, where the
//! block's copies are, the tools' location output, the scrub/check output and the kernel log.
//! A cell whose outcome differs from the expected truth ([`crate::integrity::matrix::expected`]) is marked,
//! and its case is unfolded from the start, so the evidence is what a reader sees first.

use crate::integrity::matrix::{evidence_line, Case, ConfigMatrix, Outcome};
use crate::model::units::utc;
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// One integrity run as the report shows it.
#[derive(Debug, Clone)]
pub struct IntegrityRun {
    /// Its id in the results database (None when not stored).
    pub id: Option<i64>,
    /// The command line that made it.
    pub command_line: String,
    /// Start, seconds since the epoch.
    pub started_unix_s: u64,
    /// How it ended (`ok`, `failed`, `interrupted`, `incomplete`).
    pub status: String,
    /// The matrices, in configuration order.
    pub configs: Vec<ConfigMatrix>,
}

/// Background colour of an outcome's cells: red for data returned wrong without an error, amber
/// for detected loss, green for repaired, grey for no effect.
fn colour(o: Outcome) -> &'static str {
    match o {
        Outcome::Silent => "#f4a6a6",
        Outcome::Detected => "#f7d58b",
        Outcome::Repaired => "#a8dba8",
        Outcome::Unavailable => "#c9b3e6",
        Outcome::Crash => "#d9534f",
        Outcome::Unaffected => "#e4e4e4",
        Outcome::NotRun => "#ffffff",
    }
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:80em}\
h1{font-size:1.5em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccc}h3{font-size:1.05em;margin-top:1.5em}\
table.m{border-collapse:collapse;margin:.5em 0}table.m th,table.m td{border:1px solid #999;padding:.3em .7em;text-align:left}\
table.m td.o a{color:#111;text-decoration:none;display:block}table.m td.differs{outline:3px solid #b00;outline-offset:-3px}\
.sub{color:#555}code,pre{font-family:ui-monospace,monospace;font-size:.85em}pre{background:#f6f6f6;padding:.5em;overflow-x:auto;white-space:pre-wrap}\
details{margin:.3em 0;border-left:4px solid #ccc;padding-left:.5em}details.differs{border-left-color:#b00}summary{cursor:pointer}\
.legend span{display:inline-block;padding:.1em .5em;margin-right:.3em;border:1px solid #999}";

/// What the outcomes mean, under the legend.
const LEGEND: &str = "silent: wrong data returned without an error; detected: an error, the data stays lost; repaired: an error, the data reads back correct in the end; unavailable: mount or open failed; crash: the daemon died or the kernel logged an oops/BUG/warning. A cell framed in red differs from the expected truth; its evidence is unfolded below. Hover a cell for its evidence line; click it for the case.";

/// The whole page.
pub fn render(runs: &[IntegrityRun]) -> String {
    let title = match runs {
        [one] => format!("fsbench integrity report: {}", run_title(one, 0)),
        _ => format!("fsbench integrity report: {} runs", runs.len()),
    };
    let outcomes = [
        Outcome::Silent,
        Outcome::Detected,
        Outcome::Repaired,
        Outcome::Unavailable,
        Outcome::Crash,
        Outcome::Unaffected,
    ];
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                // fsbench's own stylesheet, as it is (it has no quotes to escape, but a
                // stylesheet is not text).
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { (title) }
                p.legend {
                    @for o in outcomes {
                        span style={ "background:" (colour(o)) } { (o.name()) }
                    }
                    br;
                    (LEGEND)
                }
                @for (ri, r) in runs.iter().enumerate() { (run_section(r, ri)) }
                footer.sub {
                    "Made by fsbench " (env!("CARGO_PKG_VERSION"))
                    ". Self-contained: no scripts, nothing from the network."
                }
            }
        }
    };
    let mut h = page.into_string();
    h.push('\n');
    h
}

fn run_title(r: &IntegrityRun, i: usize) -> String {
    let id = r.id.map(|id| format!("run {id}")).unwrap_or_else(|| format!("#{}", i + 1));
    let labels: Vec<&str> = r.configs.iter().map(|c| c.config.as_str()).collect();
    format!("{id}: integrity {} ({})", labels.join(", "), utc(r.started_unix_s))
}

fn run_section(r: &IntegrityRun, ri: usize) -> Markup {
    html! {
        section id={ "run-" (ri) } {
            h2 { (run_title(r, ri)) }
            p.sub { "Status: " (r.status) ". Command: " code { (r.command_line) } }
            @for (ci, m) in r.configs.iter().enumerate() {
                (config_section(m, &format!("r{ri}-c{ci}")))
            }
        }
    }
}

fn config_section(m: &ConfigMatrix, anchor: &str) -> Markup {
    html! {
        h3 { (m.config) " " span.sub { "(seed " (m.seed) ", " (format!("{:.0}", m.elapsed_seconds)) " s)" } }
        @if let Some(env) = &m.environment {
            @let how = std::iter::once(env.mkfs_cmdline.clone().unwrap_or_default())
                .chain(env.post_create_cmdlines.iter().cloned())
                .collect::<Vec<_>>()
                .join("; ");
            p.sub {
                (env.backing) "; " (env.devices) " device(s) of " (env.device_size_bytes >> 20)
                " MiB; " code { (how) }
            }
        }
        @if let Some(e) = &m.error { p { strong { "Stopped:" } " " (e) } }
        @if !m.cases.is_empty() { (matrix(m, anchor)) }
        @for (k, c) in m.cases.iter().enumerate() { (case_details(m, c, &format!("{anchor}-k{k}"))) }
    }
}

/// Block type × fault, each cell coloured by its outcome, linked to its case.
fn matrix(m: &ConfigMatrix, anchor: &str) -> Markup {
    let (targets, faults) = m.axes();
    html! {
        table.m {
            tr { th { "block \\ fault" } @for f in &faults { th { (f.name()) } } }
            @for t in &targets {
                tr {
                    th { (t.describe()) }
                    @for f in &faults {
                        @match m.cases.iter().position(|c| c.target == *t && c.fault == *f) {
                            None => td { "-" },
                            Some(k) => (cell(m, &m.cases[k], &format!("{anchor}-k{k}"))),
                        }
                    }
                }
            }
        }
    }
}

/// A case's cell: its outcome (and the expected one where it differs), its evidence on hover.
fn cell(m: &ConfigMatrix, c: &Case, id: &str) -> Markup {
    let exp = differs(m, c);
    let class = format!(
        "o o-{}{}",
        c.outcome.name().replace(' ', "-"),
        if exp.is_some() { " differs" } else { "" }
    );
    html! {
        td class=(class) style={ "background:" (colour(c.outcome)) } title=(evidence_line(c)) {
            a href={ "#" (id) } {
                (c.outcome.name())
                @if let Some(e) = exp { " (expected " (e.name()) ")" }
            }
        }
    }
}

/// The expected outcome if the case's differs from it.
fn differs(m: &ConfigMatrix, c: &Case) -> Option<Outcome> {
    m.expected(c.target).filter(|e| *e != c.outcome && c.outcome != Outcome::NotRun)
}

fn case_details(m: &ConfigMatrix, c: &Case, id: &str) -> Markup {
    let exp = differs(m, c);
    let mut blocks: Vec<(String, &str)> = Vec::new();
    if let Some(t) = &c.tool_location {
        blocks.push((format!("Located with {}", t.method), &t.output));
    }
    if let Some(e) = &c.online_error {
        blocks.push(("Mount/import failed".into(), e));
    }
    if let Some(ch) = &c.check {
        blocks.push((format!("Scrub/check ({})", ch.status), &ch.output));
    }
    let kernel = c.kernel_log.join("\n");
    blocks.push(("Kernel log during the case".into(), &kernel));
    if let Some(n) = &c.hung {
        blocks.push(("zfs-fuse stopped answering".into(), n));
    }
    if let Some(n) = &c.note {
        blocks.push(("Note".into(), n));
    }
    html! {
        details id=(id) class=[exp.is_some().then_some("differs")] open[exp.is_some()] {
            summary {
                strong { (c.target.name()) "/" (c.fault.name()) } ": " (c.outcome.name())
                @if let Some(e) = exp { " (expected " (e.name()) ")" }
                " — " (c.block)
            }
            p { (evidence_line(c)) }
            @if !c.copies.is_empty() {
                p {
                    "Copies found: "
                    @for (i, cp) in c.copies.iter().enumerate() {
                        @if i > 0 { "; " }
                        "dev" (cp.device) " (" (cp.image.display()) ") at byte " (cp.offset_bytes)
                        @if c.damaged.contains(cp) { " " strong { "damaged" } }
                    }
                }
            }
            @for (what, text) in &blocks {
                @if !text.trim().is_empty() {
                    p { (what) ":" }
                    pre { (text.trim_end()) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrity::check::CheckRun;
    use crate::integrity::dataset::ReadBack;
    use crate::integrity::locate::BlockCopy;
    use crate::integrity::{Fault, Target};

    fn case(target: Target, fault: Fault, outcome: Outcome) -> Case {
        let copy = BlockCopy { device: 0, image: "/w/dev0.img".into(), offset_bytes: 135921664 };
        Case {
            target,
            fault,
            outcome,
            block: "d0/d3/f10 block 27 (offset 110592)".into(),
            copies: vec![copy.clone()],
            damaged: vec![copy],
            tool_location: None,
            locations_agree: Some(true),
            online_error: None,
            first_read: Some(ReadBack { intact_blocks: 10, ..Default::default() }),
            check: Some(CheckRun {
                commands: vec!["btrfs scrub start -B /mnt".into()],
                output: "Error summary: csum=1 <&>".into(),
                status: "exit status: 3".into(),
                errors_reported: true,
                summary: "csum=1".into(),
            }),
            second_read: Some(ReadBack { intact_blocks: 10, ..Default::default() }),
            kernel_log: vec!["[1.0] BTRFS warning (device loop5): csum failed".into()],
            daemon_died: false,
            hung: None,
            note: None,
        }
    }

    #[test]
    fn cells_are_coloured_by_outcome_and_a_differing_case_is_unfolded() {
        let m = ConfigMatrix {
            config: "btrfs".into(),
            environment: None,
            seed: 1,
            cases: vec![
                case(Target::Data, Fault::Zero, Outcome::Detected),
                case(Target::Data, Fault::Bitflip, Outcome::Silent),
            ],
            error: None,
            elapsed_seconds: 6.0,
        };
        let run = IntegrityRun {
            id: Some(7),
            command_line: "fsbench integrity btrfs".into(),
            started_unix_s: 0,
            status: "ok".into(),
            configs: vec![m],
        };
        let h = render(&[run]);
        assert!(h.starts_with("<!DOCTYPE html>"), "{h}");
        assert!(!h.contains("<script"), "no scripts");
        // One row (file data), two columns, each cell with its outcome's colour and evidence.
        assert_eq!(h.matches("<tr><th>file data (one copy)</th>").count(), 1, "{h}");
        assert!(h.contains(&format!("background:{}", colour(Outcome::Detected))), "{h}");
        assert!(h.contains(&format!("background:{}", colour(Outcome::Silent))), "{h}");
        assert!(h.contains("title=\"data/zero: d0/d3/f10 block 27"), "{h}");
        // btrfs is expected to detect: the silent cell is marked, its case unfolded; the
        // detected one is folded.
        assert!(h.contains("silent (expected detected)</a></td>"), "{h}");
        assert!(h.contains("<details id=\"r0-c0-k1\" class=\"differs\" open>"), "{h}");
        assert!(h.contains("<details id=\"r0-c0-k0\"><summary>"), "{h}");
        // Tool output is escaped, kernel lines kept.
        assert!(h.contains("csum=1 &lt;&amp;&gt;"), "{h}");
        assert!(h.contains("BTRFS warning (device loop5): csum failed"), "{h}");
        assert!(h.contains("dev0 (/w/dev0.img) at byte 135921664 <strong>damaged</strong>"), "{h}");
    }
}
