//! One figure per thing: a stored compare rendered as terminal text (`show --details`), CSV,
//! JSON (`show`) and HTML (`report`) shows the same number for every figure in each: the
//! figure of merit, the main operation's p50/p99/p99.9, CPU per thread, and each role's
//! throughput and latency. The JSON (full precision) is the reference; the other formats are
//! parsed and may differ from it only by their own rounding.

use crate::util::*;
use serde_json::Value;
use std::path::Path;

/// A reader with a writer role beside it (a starve-like test), and a plain write test.
const WORKLOAD: &str = r#"
[[test]]
id = "r"
name = "reader-beside-writer"
file = { size = "8M" }
[[test.phase]]
name = "read"
pattern = [{ op = "read", size = "4K", offset = "random", align = "4K" }]
amount = { seconds = 0.3 }
[[test.role]]
name = "writer"
file = { size = "4M", prefill = false }
open = ["create"]
pattern = [{ op = "write", size = "64K", offset = "sequential" }]
sync = { every_bytes = "1M", call = "fsync" }
lead = 0.1

[[test]]
id = "w"
name = "write-4k"
file = { size = "2M", prefill = false }
[[test.phase]]
name = "w"
open = ["create", "trunc"]
pattern = [{ op = "write", size = "4K" }]
amount = { passes = 1 }
"#;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A figure as shown (`1.2µs`, `40.57ms`, `249`, `87.4`, `8%`): its value (durations in ns)
/// and half a unit of its last digit, the most the rounding can account for.
fn shown(text: &str) -> (f64, f64) {
    let t = text.trim().trim_end_matches('%');
    let (num, scale) = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k)))
        .unwrap_or((t, 1.0));
    let v: f64 = num.trim().parse().unwrap_or_else(|_| panic!("not a figure: `{text}`"));
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    (v * scale, 0.5 * 10f64.powi(-decimals) * scale * 1.0001)
}

/// `what` shows `exact` (up to its rounding).
fn same(what: &str, text: &str, exact: f64) {
    let (v, slack) = shown(text);
    assert!((v - exact).abs() <= slack, "{what}: shows `{text}`, the JSON says {exact}");
}

/// The figures of one test and configuration, from the JSON.
struct Exact {
    figure: f64,
    op: String,
    p: [f64; 3],
    cpu_pct: f64,
    /// The writer role's MiB/s, write p50/p99/p99.9 and fsync p99 (tests with roles).
    role: Option<(f64, [f64; 3], f64)>,
}

fn lat_of<'a>(lat: &'a Value, op: &str) -> Option<&'a Value> {
    lat.as_array()?.iter().find(|l| l["op"] == op && l["count"].as_u64() > Some(0))
}

fn pcts(l: &Value) -> [f64; 3] {
    ["p50_nanos", "p99_nanos", "p999_nanos"].map(|k| l[k].as_f64().unwrap())
}

fn exact(json: &Value, config: usize, test: &str) -> Exact {
    let t = json["configs"][config]["run"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == test)
        .unwrap();
    let key = t["figure"].as_str().unwrap();
    let rep = &t["reps"][t["median_rep"].as_u64().expect("median_rep") as usize];
    // The main operation: the data op with the most operations.
    let main = rep["latency"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["op"] == "read" || l["op"] == "write")
        .max_by_key(|l| l["count"].as_u64())
        .unwrap();
    let role = rep["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["timed"] == true)
        .flat_map(|p| p["roles"].as_array().cloned().unwrap_or_default())
        .next()
        .map(|r| {
            let w = pcts(lat_of(&r["latency"], "write").unwrap());
            let sync = lat_of(&r["latency"], "fsync").unwrap()["p99_nanos"].as_f64().unwrap();
            (r["mib_per_s"].as_f64().unwrap(), w, sync)
        });
    Exact {
        figure: t["summary"][key]["median"].as_f64().unwrap(),
        op: main["op"].as_str().unwrap().to_string(),
        p: pcts(main),
        cpu_pct: rep["cpu_pct_per_thread"].as_f64().unwrap(),
        role,
    }
}

/// The cells of a table row of the terminal's grid (`│ a ┆ b │`), trimmed.
fn grid_cells(line: &str) -> Vec<String> {
    line.trim().trim_matches('│').split('┆').map(|c| c.trim().to_string()).collect()
}

/// The text of each `<td>` of an HTML row.
fn html_cells(row: &str) -> Vec<String> {
    row.split("<td")
        .skip(1)
        .map(|c| {
            let inner = &c[c.find('>').unwrap() + 1..];
            let inner = inner.split("</td>").next().unwrap();
            // The text before a line break (a figure's CI and elapsed time follow it).
            let inner = inner.split("<br>").next().unwrap();
            let mut out = String::new();
            let mut tag = false;
            for ch in inner.chars() {
                match ch {
                    '<' => tag = true,
                    '>' => tag = false,
                    c if !tag => out.push(c),
                    _ => {}
                }
            }
            out.trim().to_string()
        })
        .collect()
}

/// The rows (cells) of the HTML tables whose opening tag contains `class`.
fn html_rows(html: &str, class: &str) -> Vec<Vec<String>> {
    html.split(&format!("<table class=\"{class}"))
        .skip(1)
        .flat_map(|t| {
            let t = t.split("</table>").next().unwrap();
            t.split("<tr").skip(1).map(html_cells).collect::<Vec<_>>()
        })
        .collect()
}

/// Of a figure card (`id="run1-test-ID"`), the rows of its tables with `class`.
fn card_rows(html: &str, test: &str, class: &str) -> Vec<Vec<String>> {
    let card = html
        .split(&format!("id=\"run1-test-{test}\""))
        .nth(1)
        .unwrap_or_else(|| panic!("no card for test {test}"));
    let card = card.split("</figure>").next().unwrap();
    html_rows(card, class)
}

#[test]
fn a_stored_compare_shows_the_same_figures_in_every_format() {
    let (a, b, d) = (TestDir::new(), TestDir::new(), TestDir::new());
    let wl = d.write("wl.toml", WORKLOAD);
    let db = d.path().join("r.sqlite");
    let o = command()
        .args(["compare", s(a.path()), s(b.path()), "--workload", s(&wl), "--repeat", "3"])
        .args(["--db", s(&db), "--no-report"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let show = |format: &str| {
        let o = command()
            .env("COLUMNS", "400")
            .args(["show", "1", "--details", "--db", s(&db), "--format", format])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let (table, csv, json) = (show("table"), show("csv"), show("json"));
    let json: Value = serde_json::from_str(&json).unwrap();
    let page = d.path().join("r.html");
    let o = command().args(["report", "1", "--db", s(&db), "-o", s(&page)]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(" KB)"), "the size of what was written: {}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();

    let labels: Vec<String> = json["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap().into())
        .collect();
    let mut csv_rows = csv::Reader::from_reader(csv.as_bytes());
    let head: Vec<String> = csv_rows.headers().unwrap().iter().map(String::from).collect();
    let col =
        |name: &str| head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name}"));
    let rows: Vec<Vec<String>> =
        csv_rows.records().map(|r| r.unwrap().iter().map(String::from).collect()).collect();

    for test in ["r", "w"] {
        for (ci, label) in labels.iter().enumerate() {
            let e = exact(&json, ci, test);
            let at = format!("test {test} on {label}");
            // CSV: the test's row and its role's.
            let row = rows
                .iter()
                .find(|r| {
                    r[col("test")] == test
                        && r[col("config")] == *label
                        && r[col("role")].is_empty()
                })
                .unwrap_or_else(|| panic!("no CSV row for {at}:\n{csv}"));
            same(&format!("CSV figure, {at}"), &row[col("figure_median")], e.figure);
            assert_eq!(row[col("main_op")], e.op, "CSV op, {at}");
            for (k, name) in ["lat_p50_ns", "lat_p99_ns", "lat_p999_ns"].iter().enumerate() {
                same(&format!("CSV {name}, {at}"), &row[col(name)], e.p[k]);
            }
            same(&format!("CSV CPU, {at}"), &row[col("cpu_pct_per_thread")], e.cpu_pct);

            // Terminal: the head-to-head cell, the details' CPU, the roles section.
            let h2h = table
                .lines()
                .map(grid_cells)
                .find(|c| c.first().map(String::as_str) == Some(test))
                .unwrap_or_else(|| panic!("no table row for {test}:\n{table}"));
            same(&format!("terminal figure, {at}"), &h2h[2 + ci], e.figure);
            let details = table
                .lines()
                .map(grid_cells)
                .find(|c| c.len() > 6 && c[0] == test && c[1] == *label)
                .unwrap_or_else(|| panic!("no details row for {at}:\n{table}"));
            let cpu = details[6].split_whitespace().next().unwrap();
            same(&format!("terminal CPU, {at}"), cpu, e.cpu_pct);

            // HTML: the head-to-head cell, the CPU cell's title, the latency table.
            let h2h = html_rows(&html, "h2h")
                .into_iter()
                .find(|c| c.first().map(String::as_str) == Some(test))
                .unwrap_or_else(|| panic!("no HTML head-to-head row for {test}"));
            same(&format!("HTML figure, {at}"), &h2h[3 + ci], e.figure);
            let cpu_title = html
                .split("<h3>CPU per operation</h3>")
                .nth(1)
                .unwrap()
                .split(&format!("<td class=\"id\">{test} "))
                .nth(1)
                .unwrap()
                .split("title=\"")
                .nth(1 + ci)
                .unwrap();
            let pct = cpu_title.split("% of a core").next().unwrap().rsplit(' ').next().unwrap();
            same(&format!("HTML CPU, {at}"), pct, e.cpu_pct);
            let lat = card_rows(&html, test, "small latency-figures")
                .into_iter()
                .find(|c| c.first() == Some(label))
                .unwrap_or_else(|| panic!("no HTML latency row for {at}"));
            assert_eq!(lat[1], e.op, "HTML op, {at}");
            for k in 0..3 {
                same(&format!("HTML percentile {k}, {at}"), &lat[2 + k], e.p[k]);
            }

            let Some((mib, w, sync)) = e.role else {
                assert_eq!(test, "w");
                continue;
            };
            // The terminal's roles section: the test's percentiles, then the writer's.
            let line = table
                .lines()
                .find(|l| {
                    l.trim_start().starts_with(&format!("{test} "))
                        && l.contains(label.as_str())
                        && l.contains("[writer:")
                })
                .unwrap_or_else(|| panic!("no roles line for {at}:\n{table}"));
            let (own, role) = line.split_once("[writer:").unwrap();
            let words = |s: &str| {
                s.split_whitespace()
                    .map(|w| w.trim_end_matches(&[',', ']'][..]).to_string())
                    .collect::<Vec<_>>()
            };
            let after = |ws: &[String], key: &str| {
                ws[ws.iter().position(|w| w == key).unwrap() + 1].clone()
            };
            let own = words(own);
            assert!(own.contains(&e.op), "{line}");
            for (k, key) in ["p50", "p99", "p99.9"].iter().enumerate() {
                same(&format!("terminal {key}, {at}"), &after(&own, key), e.p[k]);
            }
            let role = words(role);
            same(&format!("terminal writer MiB/s, {at}"), &role[0], mib);
            let fsync_at = role.iter().position(|w| w == "fsync").unwrap();
            for (k, key) in ["p50", "p99", "p99.9"].iter().enumerate() {
                same(&format!("terminal writer {key}, {at}"), &after(&role[..fsync_at], key), w[k]);
            }
            same(&format!("terminal fsync p99, {at}"), &after(&role[fsync_at..], "p99"), sync);

            // CSV: the role's row.
            let rr = rows
                .iter()
                .find(|r| {
                    r[col("test")] == test
                        && r[col("config")] == *label
                        && r[col("role")] == "writer"
                })
                .unwrap_or_else(|| panic!("no CSV role row for {at}:\n{csv}"));
            same(&format!("CSV writer MiB/s, {at}"), &rr[col("role_mib_per_s")], mib);
            assert_eq!(rr[col("role_op")], "write");
            for (k, name) in
                ["role_lat_p50_ns", "role_lat_p99_ns", "role_lat_p999_ns"].iter().enumerate()
            {
                same(&format!("CSV {name}, {at}"), &rr[col(name)], w[k]);
            }
            same(&format!("CSV fsync p99, {at}"), &rr[col("role_sync_p99_ns")], sync);
            assert!(rr[col("figure_median")].is_empty(), "a role's row has no test figures");

            // HTML: the roles table.
            let hr = card_rows(&html, test, "small roles")
                .into_iter()
                .find(|c| c.first() == Some(label))
                .unwrap_or_else(|| {
                    panic!("no HTML roles row for {at}: the writer's figures are missing")
                });
            assert_eq!(hr[1], "writer");
            same(&format!("HTML writer MiB/s, {at}"), &hr[2], mib);
            for k in 0..3 {
                same(&format!("HTML writer percentile {k}, {at}"), &hr[4 + k], w[k]);
            }
            same(&format!("HTML fsync p99, {at}"), &hr[7], sync);
        }
    }
    // Histograms only when asked: they are most of the JSON's size.
    let o = command()
        .args(["show", "1", "--db", s(&db), "--format", "json", "--histograms"])
        .output()
        .unwrap();
    let full = stdout(&o);
    assert!(full.contains("histogram_b64") && !json.to_string().contains("histogram_b64"));
    assert!(json.to_string().len() < full.len());
}

/// `compare --help` lists every configuration key the parser accepts (the common ones and each
/// filesystem's own, from the tables the parser reads), each with an example.
#[test]
fn compare_help_lists_every_configuration_key_with_an_example() {
    let o = fsbench(&["compare", "--help"]);
    let help = stdout(&o);
    let own = fsbench::testbed::fs::all().flat_map(|f| f.own_keys().iter());
    for a in fsbench::testbed::config::COMMON_AXES.iter().chain(own) {
        let key = if a.key == "*" { "PROPERTY=".to_string() } else { format!("{}=", a.key) };
        assert!(help.contains(&format!("  {key} ")), "{key} missing:\n{help}");
        assert!(help.contains(&format!("e.g. {}", a.example)), "{}:\n{help}", a.example);
    }
    for key in ["mount=", "mkfs=", "sched=", "devices=", "layout=", "on=", "PROPERTY="] {
        assert!(help.contains(key), "{key}:\n{help}");
    }
}
