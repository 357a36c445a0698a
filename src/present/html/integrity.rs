//! The HTML report of `fsbench integrity` runs (`fsbench report RUN`, `fsbench show RUN
//! --format html`): one self-contained page (inline CSS, no scripts) with IRON's table per
//! configuration, block type × fault, each cell coloured by its outcome, its evidence line on
//! hover, and below the table every case unfolded on click: the evidence line, where the
//! block's copies are, the tools' location output, the scrub/check output and the kernel log.
//! A cell whose outcome differs from the expected truth ([`crate::integrity::matrix::expected`]) is marked,
//! and its case is unfolded from the start, so the evidence is what a reader sees first.

use crate::integrity::matrix::{evidence_line, Case, ConfigMatrix, Outcome};
use crate::model::units::utc;
use crate::present::html::esc;
use std::fmt::Write as _;

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

/// The whole page.
pub fn render(runs: &[IntegrityRun]) -> String {
    let mut h = String::new();
    let title = match runs {
        [one] => format!("fsbench integrity report: {}", run_title(one, 0)),
        _ => format!("fsbench integrity report: {} runs", runs.len()),
    };
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    h.push_str("<p class=\"legend\">");
    for o in [
        Outcome::Silent,
        Outcome::Detected,
        Outcome::Repaired,
        Outcome::Unavailable,
        Outcome::Crash,
        Outcome::Unaffected,
    ] {
        let _ = write!(h, "<span style=\"background:{}\">{}</span>", colour(o), o.name());
    }
    h.push_str(
        "<br>silent: wrong data returned without an error; detected: an error, the data stays \
         lost; repaired: an error, the data reads back correct in the end; unavailable: mount or \
         open failed; crash: the daemon died or the kernel logged an oops/BUG/warning. A cell \
         framed in red differs from the expected truth; its evidence is unfolded below. Hover a \
         cell for its evidence line; click it for the case.</p>\n",
    );
    for (ri, r) in runs.iter().enumerate() {
        run_section(&mut h, r, ri);
    }
    let _ = write!(
        h,
        "<footer class=\"sub\">Made by fsbench {}. Self-contained: no scripts, nothing from the network.</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    h
}

fn run_title(r: &IntegrityRun, i: usize) -> String {
    let id = r.id.map(|id| format!("run {id}")).unwrap_or_else(|| format!("#{}", i + 1));
    let labels: Vec<&str> = r.configs.iter().map(|c| c.config.as_str()).collect();
    format!("{id}: integrity {} ({})", labels.join(", "), utc(r.started_unix_s))
}

fn run_section(h: &mut String, r: &IntegrityRun, ri: usize) {
    let _ = write!(
        h,
        "<section id=\"run-{ri}\">\n<h2>{}</h2>\n<p class=\"sub\">Status: {}. Command: <code>{}</code></p>\n",
        esc(&run_title(r, ri)),
        esc(&r.status),
        esc(&r.command_line)
    );
    for (ci, m) in r.configs.iter().enumerate() {
        config_section(h, m, &format!("r{ri}-c{ci}"));
    }
    h.push_str("</section>\n");
}

fn config_section(h: &mut String, m: &ConfigMatrix, anchor: &str) {
    let _ = writeln!(
        h,
        "<h3>{} <span class=\"sub\">(seed {}, {:.0} s)</span></h3>",
        esc(&m.config),
        m.seed,
        m.elapsed_seconds
    );
    if let Some(env) = &m.environment {
        let mut how = env.mkfs_cmdline.clone().unwrap_or_default();
        for c in &env.post_create_cmdlines {
            let _ = write!(how, "; {c}");
        }
        let _ = writeln!(
            h,
            "<p class=\"sub\">{}; {} device(s) of {} MiB; <code>{}</code></p>",
            esc(&env.backing),
            env.devices,
            env.device_size_bytes >> 20,
            esc(&how)
        );
    }
    if let Some(e) = &m.error {
        let _ = writeln!(h, "<p><strong>Stopped:</strong> {}</p>", esc(e));
    }
    let (targets, faults) = m.axes();
    if !m.cases.is_empty() {
        h.push_str("<table class=\"m\">\n<tr><th>block \\ fault</th>");
        for f in &faults {
            let _ = write!(h, "<th>{}</th>", f.name());
        }
        h.push_str("</tr>\n");
        for t in &targets {
            let _ = write!(h, "<tr><th>{}</th>", esc(t.describe()));
            for f in &faults {
                match m.cases.iter().position(|c| c.target == *t && c.fault == *f) {
                    None => h.push_str("<td>-</td>"),
                    Some(k) => {
                        let c = &m.cases[k];
                        let exp = differs(m, c);
                        let _ = write!(
                            h,
                            "<td class=\"o o-{}{}\" style=\"background:{}\" title=\"{}\"><a href=\"#{anchor}-k{k}\">{}{}</a></td>",
                            c.outcome.name().replace(' ', "-"),
                            if exp.is_some() { " differs" } else { "" },
                            colour(c.outcome),
                            esc(&evidence_line(c)),
                            c.outcome.name(),
                            exp.map(|e| format!(" (expected {})", e.name())).unwrap_or_default()
                        );
                    }
                }
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
    }
    for (k, c) in m.cases.iter().enumerate() {
        case_details(h, m, c, &format!("{anchor}-k{k}"));
    }
}

/// The expected outcome if the case's differs from it.
fn differs(m: &ConfigMatrix, c: &Case) -> Option<Outcome> {
    m.expected(c.target).filter(|e| *e != c.outcome && c.outcome != Outcome::NotRun)
}

fn case_details(h: &mut String, m: &ConfigMatrix, c: &Case, id: &str) {
    let exp = differs(m, c);
    let _ = write!(
        h,
        "<details id=\"{id}\"{}{}><summary><strong>{}/{}</strong>: {}{} — {}</summary>\n<p>{}</p>\n",
        if exp.is_some() { " class=\"differs\"" } else { "" },
        if exp.is_some() { " open" } else { "" },
        c.target.name(),
        c.fault.name(),
        c.outcome.name(),
        exp.map(|e| format!(" (expected {})", e.name())).unwrap_or_default(),
        esc(&c.block),
        esc(&evidence_line(c))
    );
    if !c.copies.is_empty() {
        h.push_str("<p>Copies found: ");
        for (i, cp) in c.copies.iter().enumerate() {
            let damaged = c.damaged.contains(cp);
            let _ = write!(
                h,
                "{}dev{} ({}) at byte {}{}",
                if i > 0 { "; " } else { "" },
                cp.device,
                esc(&cp.image.display().to_string()),
                cp.offset_bytes,
                if damaged { " <strong>damaged</strong>" } else { "" }
            );
        }
        h.push_str("</p>\n");
    }
    let block = |h: &mut String, what: &str, text: &str| {
        if !text.trim().is_empty() {
            let _ = write!(h, "<p>{what}:</p>\n<pre>{}</pre>\n", esc(text.trim_end()));
        }
    };
    if let Some(t) = &c.tool_location {
        block(h, &format!("Located with {}", t.method), &t.output);
    }
    if let Some(e) = &c.online_error {
        block(h, "Mount/import failed", e);
    }
    if let Some(ch) = &c.check {
        block(h, &format!("Scrub/check ({})", ch.status), &ch.output);
    }
    block(h, "Kernel log during the case", &c.kernel_log.join("\n"));
    if let Some(n) = &c.hung {
        block(h, "zfs-fuse stopped answering", n);
    }
    if let Some(n) = &c.note {
        block(h, "Note", n);
    }
    h.push_str("</details>\n");
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
