//! Tests across the renderers: what every output shows of one report, and that text fits the
//! width it is laid out for.

use crate::analysis::compare::tests::config;
use crate::analysis::compare::{build_report, CompareOptions};
use crate::model::report::Report;
use crate::model::verdict::{Verdict, UNTESTED_WORDS};

/// Wide enough that no line of these tests' reports wraps.
const WIDE: usize = 250;

fn opts() -> CompareOptions {
    CompareOptions { engine: Default::default(), rule: Default::default(), fresh_per_test: false }
}

fn html(r: &Report) -> String {
    let run = crate::present::html::ReportRun {
        id: None,
        kind: crate::model::run::RunKind::Compare,
        command_line: String::new(),
        report: r.clone(),
    };
    crate::present::html::render(&[run]).unwrap().0
}

#[test]
fn a_draw_with_a_large_gap_shows_its_facts_marked_not_significant() {
    // Medians 1.8x apart, but one side is so noisy that the test cannot tell: a draw.
    let configs = vec![
        config("ext4", &[100.0, 30.0, 300.0], 900_000_000),
        config("xfs", &[180.0, 185.0, 175.0], 100_000_000),
    ];
    let r = build_report(configs, &opts(), 0, false);
    assert!(matches!(r.tests[0].vs_baseline[1], Some(Verdict::Draw { .. })), "{:?}", r.tests[0]);
    let text = crate::present::compare::render(&r, false, WIDE);
    assert!(text.contains("xfs 1.8X faster than ext4 in medians: NOT SIGNIFICANT"), "{text}");
    assert!(text.contains("fsync"), "{text}");
    // Where each side's time went, after the reasons.
    assert!(
        text.contains("    - where the time went (share of wall time × threads): ext4: "),
        "{text}"
    );
}

#[test]
fn untested_wins_are_marked_wherever_they_are_quoted() {
    // One repetition each, twice as fast: a win, but with no noise estimate.
    let configs = vec![config("ext4", &[100.0], 900_000_000), config("xfs", &[200.0], 100_000_000)];
    let r = build_report(configs, &opts(), 0, false);
    assert!(
        matches!(r.tests[0].vs_baseline[1], Some(Verdict::Win { tested: false, .. })),
        "{:?}",
        r.tests[0].vs_baseline
    );
    let mark = format!("({UNTESTED_WORDS})");
    let line = r.pairs[0].lines.iter().find(|l| l.starts_with("xfs outpaces")).unwrap();
    let text = crate::present::compare::render(&r, false, WIDE);
    assert!(text.contains(&format!("xfs 2.0X faster than ext4 {mark}")), "{text}");
    assert!(text.contains(line.as_str()), "{text}");
    let plain = crate::present::html::plain::summary(&r, "fsbench compare");
    assert!(plain.contains("untested: one repetition"), "{plain}");
    let html = html(&r);
    assert!(html.contains(&format!("xfs 2.0× faster than ext4 {mark}")), "no mark in the HTML Why");
    assert!(
        html.contains(&format!("by a mean factor of 2.0 {mark}")),
        "no mark in the HTML summary"
    );
}

fn fits(text: &str, width: usize) -> Result<(), String> {
    match text.lines().find(|l| l.chars().count() > width) {
        Some(l) => Err(format!("a line over {width}: {l:?}\n{text}")),
        None => Ok(()),
    }
}

#[test]
fn tables_and_prose_fit_60_and_100_columns() {
    use crate::present::{exporter, ExportOptions, Format};
    let labels = ["ext4:mount=data=writeback,noatime", "xfs:mkfs=-l size=64m", "btrfs"];
    let reps: [&[f64]; 3] = [
        &[100.0, 30.0, 300.0, 120.0, 90.0],
        &[180.0, 185.0, 175.0, 181.0, 179.0],
        &[100.0, 101.0, 99.0, 100.5, 99.5],
    ];
    let three: Vec<_> = labels.iter().zip(reps).map(|(l, r)| config(l, r, 500_000_000)).collect();
    let two: Vec<_> = three[..2].to_vec();
    let one: Vec<_> = three[..1].to_vec();
    for configs in [three, two, one] {
        let r = build_report(configs, &opts(), 0, false);
        for width in [60, 100] {
            for details in [false, true] {
                let o = ExportOptions { details, width: Some(width), raw: false };
                let text = exporter(Format::Table, o).export(&r).unwrap();
                let text = String::from_utf8(text).unwrap();
                fits(&text, width).unwrap();
                // Nothing cut: every figure and label is there whole.
                for t in &r.tests {
                    for i in 0..r.configs.len() {
                        let m = crate::model::units::sig3(t.median(i).unwrap());
                        assert!(text.contains(&m), "{m} whole at {width}:\n{text}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_label_with_markup_is_escaped_everywhere_it_appears() {
    let evil = "<script>alert(\"x&y\")</script>'q'";
    let escaped = "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;'q'";
    let mut configs = vec![config(evil, &[100.0, 101.0, 99.0], 0), config("xfs", &[230.0], 0)];
    for c in &mut configs {
        c.run.tests[0].name = format!("name {evil}");
        c.run.tests[0].description = format!("description {evil}");
    }
    let r = build_report(configs, &opts(), 0, false);
    let run = crate::present::html::ReportRun {
        id: Some(1),
        kind: crate::model::run::RunKind::Compare,
        command_line: format!("fsbench compare '{evil}' xfs"),
        report: r,
    };
    let (page, charts) = crate::present::html::render(&[run]).unwrap();
    assert!(!page.contains("<script") && !page.contains("</script"), "{page}");
    for (what, n) in [
        (format!("name {escaped}"), 3),
        (format!("description {escaped}"), 2),
        (format!("fsbench compare '{escaped}' xfs"), 1),
    ] {
        assert!(page.matches(&what).count() >= n, "{what} {n} times:\n{page}");
    }
    // The label: the title, the legend, the head-to-head header, summaries, tables, the
    // environment.
    assert!(page.matches(escaped).count() >= 10, "{page}");
    for c in &charts {
        assert!(!c.svg.contains("<script"), "{}", c.svg);
    }

    // The integrity page: the configuration and the command line.
    let m = crate::integrity::matrix::ConfigMatrix {
        config: evil.into(),
        environment: None,
        seed: 1,
        cases: Vec::new(),
        error: Some(format!("cannot parse {evil}")),
        elapsed_seconds: 1.0,
    };
    let run = crate::present::html::integrity::IntegrityRun {
        id: Some(2),
        command_line: format!("fsbench integrity '{evil}'"),
        started_unix_s: 0,
        status: "failed".into(),
        configs: vec![m],
    };
    let page = crate::present::html::integrity::render(&[run]);
    assert!(!page.contains("<script"), "{page}");
    assert!(page.matches(escaped).count() >= 4, "{page}");

    // The profile page: the command and a file's path.
    let p = crate::profile::Profile {
        command: vec!["cat".into(), evil.into()],
        filesystems: Vec::new(),
        cold: None,
        exit: crate::profile::spawn::Exit { code: 0, signal: None, stopped_by: None },
        runs_wall_seconds: vec![0.5],
        summary: Default::default(),
        files: vec![crate::profile::files::FileProfile {
            path: format!("/data/{evil}"),
            kind: "data".into(),
            first_open_ms: Some(1.0),
            ..Default::default()
        }],
        requests: Vec::new(),
        touched: Vec::new(),
        notes: Vec::new(),
    };
    let page = crate::present::html::profile::render(&p).unwrap();
    assert!(!page.contains("<script"), "{page}");
    assert!(page.contains(&format!("<td>/data/{escaped}</td>")), "{page}");
    assert!(page.contains(&format!("cat {escaped}")), "the command in the summary: {page}");
}

/// The starve report's discrepancy: the terminal's section on roles took the median
/// over repetitions of each repetition's p50, the HTML the median repetition's, and the HTML
/// left out the writer. Here the two differ (p50s 50, 900, 10 µs; the median repetition, by
/// throughput, is the 900 µs one): every output must show the median repetition's figures,
/// the role's included.
#[test]
fn the_terminal_and_the_html_show_one_latency_and_the_roles_figures() {
    use crate::model::job::OpKind;
    use crate::model::result::RoleResult;
    let lat = |op: OpKind, us: u64| {
        let mut h = crate::stats::latency::new_histogram();
        h.record_n(us * 1000, 100).unwrap();
        crate::model::latency::summarize(op, &h)
    };
    let mut c = config("mq-deadline", &[100.0, 200.0, 300.0], 0);
    for (rep, (p50_us, writer_mib)) in
        c.run.tests[0].reps.iter_mut().zip([(50, 11.0), (900, 22.0), (10, 33.0)])
    {
        rep.latency = vec![lat(OpKind::Read, p50_us)];
        rep.phases[0].roles = vec![RoleResult {
            name: "writer".into(),
            threads: 1,
            wall_nanos: 1_000_000_000,
            bytes_read: 0,
            bytes_written: 1 << 20,
            data_ops: 16,
            mib_per_s: writer_mib,
            latency: vec![lat(OpKind::Write, p50_us * 2), lat(OpKind::Fsync, 7000)],
            per_thread: Vec::new(),
            cpu_user_nanos: 0,
            cpu_sys_nanos: 0,
            rusage: Default::default(),
            submission: Vec::new(),
            depths: Default::default(),
        }];
    }
    let r = build_report(vec![c], &opts(), 0, false);
    let t = &r.configs[0].run.tests[0];
    assert_eq!(t.main_latency().map(|l| l.p50_nanos / 1000), Some(900), "median repetition");
    use crate::model::units::nanos;
    use crate::present::Exporter;
    let p50 = nanos(t.main_latency().unwrap().p50_nanos);
    let (_, writer) = t.roles()[0];
    assert_eq!(writer.mib_per_s, 22.0, "the median repetition's writer");
    let w50 = nanos(writer.main_op().unwrap().p50_nanos);
    let text = crate::present::compare::render(&r, false, WIDE);
    let line = text.lines().find(|l| l.contains("[writer:")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(&format!("read p50 {p50} ")), "{p50}: {line}");
    assert!(line.contains(&format!("[writer: 22.0 MiB/s, write p50 {w50} ")), "{line}");
    let page = html(&r);
    let figures = page.split("latency-figures").nth(1).unwrap_or_else(|| panic!("{page}"));
    let figures = figures.split("</table>").next().unwrap();
    assert!(figures.contains(&format!(">{p50}<")) && !figures.contains(">50.0µs<"), "{figures}");
    let roles = page.split("class=\"small roles\"").nth(1).expect("the writer's figures");
    let roles = roles.split("</table>").next().unwrap();
    assert!(roles.contains(">22.0<") && roles.contains(&format!(">{w50}<")), "{roles}");
    // The CSV: the test's row and the writer's.
    let csv = String::from_utf8(crate::present::csv::CsvExporter.export(&r).unwrap()).unwrap();
    let p50_ns = t.main_latency().unwrap().p50_nanos;
    assert!(csv.lines().any(|l| l.contains(&format!(",read,{p50_ns},"))), "{csv}");
    assert!(csv.lines().any(|l| l.contains(",writer,22.000000,write,")), "{csv}");
}

/// The page starts with the command line and the verdict table; the plain-text summary comes
/// after them, folded (open, it filled the first screen); headers never break inside a word.
#[test]
fn the_report_opens_on_the_command_and_the_verdicts() {
    let configs = vec![config("ext4", &[100.0], 900_000_000), config("xfs", &[200.0], 100_000_000)];
    let r = build_report(configs, &opts(), 0, false);
    let page = html(&r);
    let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("<pre class=\"cmd\">") < at("Head to head"));
    assert!(at("Head to head") < at("<details class=\"plain\">"));
    assert!(!page.contains("<details class=\"plain\" open"), "folded");
    assert!(!page.contains("overflow-wrap:anywhere"), "a header may break inside a word");
}

/// A configuration two of whose three repetitions missed their cache
/// precondition (the file stayed resident through the "uncached" read) has its figure from the
/// one that met it, and every output says the test was not met: the terminal table (a mark in
/// the cell, one note with the count), CSV `status`, JSON, HTML; the decision rule (which
/// `diff` uses too) does not compare it; no output shows the unmet repetitions' figure.
#[test]
fn an_unmet_precondition_is_marked_in_every_output_and_in_no_figure() {
    use crate::model::result::TestStatus;
    use crate::model::units::sig3;
    use crate::present::{exporter, ExportOptions, Format};
    let met = config("ext2", &[100.0, 101.0, 99.0], 100_000_000);
    let mut zfs = config("zfs", &[98.0, 100.0, 100.0], 100_000_000);
    {
        let t = &mut zfs.run.tests[0];
        // Served from the cache: 7,777 and 7,788 MiB/s, not figures of an uncached read.
        for (i, mib) in [(1, 7777.0), (2, 7788.0)] {
            let r = &mut t.reps[i];
            r.mib_per_s = mib;
            r.bytes = (mib * 1048576.0) as u64;
            r.phases[0].cache.met = false;
            r.phases[0].cache.resident_fraction = 1.0;
            r.phases[0].cache.method = "eviction failed: umount: target is busy".into();
        }
        t.reps[2].retried = 2;
        t.finalize();
        assert!(matches!(&t.status, TestStatus::NotMet { reason } if reason.contains("2 of 3")));
        let s = t.summary.as_ref().unwrap();
        assert_eq!((s.n, s.mib_per_s.median), (1, 98.0), "only the repetition that met it");
    }
    let r = build_report(vec![met, zfs], &opts(), 0, false);
    assert!(
        matches!(&r.tests[0].vs_baseline[1], Some(Verdict::NotCompared { .. })),
        "one repetition of three met it: not compared, {:?}",
        r.tests[0].vs_baseline[1]
    );
    let out = |f: Format| {
        let o = ExportOptions { details: true, width: Some(WIDE), raw: false };
        String::from_utf8(exporter(f, o).export(&r).unwrap()).unwrap()
    };
    let unmet_figures = [sig3(7777.0), sig3(7788.0), "7777".into(), "7788".into()];
    let table = out(Format::Table);
    assert!(table.contains(&format!("{}{}", sig3(98.0), super::table::NOT_MET_MARK)), "{table}");
    assert_eq!(table.matches("precondition not met").count(), 1, "one note:\n{table}");
    assert!(
        table.contains("in 2 of 3 repetitions") && table.contains("2 attempts retried"),
        "{table}"
    );
    assert!(table.contains(" zfs                      98.0 unmet unmet"), "--details: {table}");
    let csv = out(Format::Csv);
    let zfs_row = csv.lines().find(|l| l.contains(",zfs,")).unwrap_or_else(|| panic!("{csv}"));
    assert!(zfs_row.contains(",zfs,not_met,"), "{zfs_row}");
    let ext2_row = csv.lines().find(|l| l.contains(",ext2,")).unwrap();
    assert!(ext2_row.contains(",ext2,ok,"), "{ext2_row}");
    let json: serde_json::Value = serde_json::from_str(&out(Format::Json)).unwrap();
    let t = &json["configs"][1]["run"]["tests"][0];
    assert_eq!(t["status"]["state"], "not_met", "{}", t["status"]);
    assert_eq!(t["summary"]["mib_per_s"]["median"], 98.0);
    let html = out(Format::Html);
    assert!(html.contains("(not met)"), "no mark in the HTML table");
    assert_eq!(html.matches("<li>zfs test 1: precondition not met").count(), 1, "one note");
    for text in [&table, &csv, &html] {
        for f in &unmet_figures {
            assert!(!text.contains(f.as_str()), "unmet figure {f} shown:\n{text}");
        }
    }
    // None met it: no figure at all, and the cell says so.
    let mut none = r.configs[1].run.tests[0].clone();
    for rep in &mut none.reps {
        rep.phases[0].cache.met = false;
    }
    none.finalize();
    assert!(none.summary.is_none() && none.median_rep().is_none(), "{:?}", none.summary);
    assert!(none.is_not_met());
}

/// A test whose phases `--min-time` ran more than once says how many times
/// where it is named, in the run's table and the comparison's.
#[test]
fn passes_above_one_are_said_in_the_description() {
    use crate::present::{exporter, ExportOptions, Format};
    let mut configs = vec![config("ext4", &[100.0, 101.0], 1), config("xfs", &[90.0, 91.0], 1)];
    for c in &mut configs {
        for r in &mut c.run.tests[0].reps {
            r.phases[0].passes = 3;
        }
    }
    let o = ExportOptions { details: false, width: Some(WIDE), raw: false };
    let run = crate::present::table::render(&configs[0].run, WIDE);
    assert!(run.contains("t (3 passes)"), "{run}");
    let r = build_report(configs, &opts(), 0, false);
    let text = String::from_utf8(exporter(Format::Table, o).export(&r).unwrap()).unwrap();
    assert!(text.contains("(3 passes)"), "{text}");
    let one = build_report(vec![config("ext4", &[100.0, 101.0], 1)], &opts(), 0, false);
    let text = String::from_utf8(exporter(Format::Table, o).export(&one).unwrap()).unwrap();
    assert!(!text.contains("passes)"), "one pass is not said: {text}");
}

/// `fsbench fio`'s JSON of a group of fio jobs run as one test: one `jobs[]` entry per job with
/// its own bytes, ops and fio's `groupid` (the test's own threads, then each role), and with
/// `group_reporting` one entry for the group, its bytes summed, its run time the longest and
/// its `job_runtime` its threads' run times added up (fio's).
#[test]
fn fio_json_reports_each_job_of_a_group_and_merges_them_with_group_reporting() {
    use crate::fio::JobPlace;
    use crate::model::job::OpKind;
    use crate::model::result::RoleResult;
    use crate::present::fio::{fio_json, fio_text, FioContext};
    let lat = |op: OpKind, n: u64| {
        let mut h = crate::stats::latency::new_histogram();
        h.record_n(50_000, n).unwrap();
        crate::model::latency::summarize(op, &h)
    };
    let mut c = config("ext4", &[100.0], 0);
    let p = &mut c.run.tests[0].reps[0].phases[0];
    p.bytes_read = 4 << 20;
    p.bytes_written = 0;
    p.wall_nanos = 2_000_000_000;
    p.latency = vec![lat(OpKind::Read, 1024)];
    p.roles = vec![RoleResult {
        name: "w".into(),
        threads: 2,
        wall_nanos: 3_000_000_000,
        bytes_read: 0,
        bytes_written: 8 << 20,
        data_ops: 2048,
        mib_per_s: 8.0 / 3.0,
        latency: vec![lat(OpKind::Write, 2048)],
        per_thread: Vec::new(),
        cpu_user_nanos: 300_000_000,
        cpu_sys_nanos: 600_000_000,
        rusage: Default::default(),
        submission: Vec::new(),
        depths: Default::default(),
    }];
    let r = build_report(vec![c], &opts(), 0, false);
    let place = |name: &str, role: Option<&str>, threads, reporting| JobPlace {
        name: name.into(),
        test_id: "1".into(),
        role: role.map(str::to_string),
        group: 0,
        group_reporting: reporting,
        threads,
        percentiles: Default::default(),
        percentile_list: None,
        options: Vec::new(),
        first_thread: 0,
        fileop: None,
    };
    let ctx = |reporting| FioContext {
        jobs: vec![place("r", None, 1, reporting), place("w", Some("w"), 2, reporting)],
        ..FioContext::default()
    };
    let v = fio_json(&r, &ctx(false));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{v}");
    assert_eq!((jobs[0]["jobname"].as_str(), jobs[1]["jobname"].as_str()), (Some("r"), Some("w")));
    assert_eq!((jobs[0]["groupid"].as_u64(), jobs[1]["groupid"].as_u64()), (Some(0), Some(0)));
    assert_eq!(jobs[0]["read"]["io_bytes"], 4 << 20);
    assert_eq!(jobs[0]["read"]["total_ios"], 1024);
    assert_eq!(jobs[1]["write"]["io_bytes"], 8 << 20);
    assert_eq!(jobs[1]["write"]["total_ios"], 2048);
    assert_eq!(jobs[1]["read"]["io_bytes"], 0);
    // fio's job_runtime of a job reported as one: its two threads' run times added up.
    assert_eq!(jobs[1]["job_runtime"], 6000, "the role's threads' run times");
    assert_eq!(jobs[1]["write"]["runtime"], 3000, "the role's own run time");
    // The role's own CPU, in percent of that (it was 0 for a role reported merged).
    assert_eq!((jobs[1]["usr_cpu"].as_f64(), jobs[1]["sys_cpu"].as_f64()), (Some(5.0), Some(10.0)));
    assert_eq!(jobs[1]["fsbench"]["role"], "w");
    // fio's default: completion-latency percentiles, none of the total latency.
    assert!(jobs[1]["write"]["clat_ns"].get("percentile").is_some(), "{}", jobs[1]);
    assert!(jobs[1]["write"]["lat_ns"].get("percentile").is_none(), "{}", jobs[1]);
    // clat_percentiles=0, lat_percentiles=1 on [w]: the other way round, as fio's.
    let mut c = ctx(false);
    c.jobs[1].percentiles = crate::fio::LatPercentiles { clat: false, lat: true };
    let v = fio_json(&r, &c);
    let w = &v["jobs"][1]["write"];
    assert!(
        w["clat_ns"].get("percentile").is_none() && w["lat_ns"].get("percentile").is_some(),
        "{w}"
    );
    assert!(fio_text(&r, &c).contains("    lat percentiles (usec):"));
    // percentile_list=50:99.5: those keys, as fio writes them.
    c.jobs[1].percentile_list = Some(vec![50.0, 99.5]);
    let v = fio_json(&r, &c);
    let p = v["jobs"][1]["write"]["lat_ns"]["percentile"].as_object().unwrap();
    assert_eq!(p.keys().collect::<Vec<_>>(), ["50.000000", "99.500000"], "{p:?}");
    assert!(fio_text(&r, &c).contains("99.50th=["));
    let v = fio_json(&r, &ctx(true));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "one entry for the group: {v}");
    assert_eq!(jobs[0]["jobname"], "r");
    assert_eq!(
        (jobs[0]["read"]["io_bytes"].as_u64(), jobs[0]["write"]["io_bytes"].as_u64()),
        (Some(4 << 20), Some(8 << 20))
    );
    assert_eq!(jobs[0]["write"]["runtime"], 3000, "the group's longest job");
    assert_eq!(jobs[0]["job_runtime"], 2000 + 2 * 3000, "its threads' run times, as fio's");
    assert_eq!(jobs[0]["fsbench"]["parts"].as_array().map(|p| p.len()), Some(2));
    let text = fio_text(&r, &ctx(false));
    assert!(
        text.contains("r: (groupid=0, jobs=1)") && text.contains("w: (groupid=0, jobs=2)"),
        "{text}"
    );
    assert!(text.contains("Run status group 0 (all jobs):"), "{text}");
    assert!(text.contains("WRITE: bw=") && text.contains("io=8.0MiB, run=3000-3000msec"), "{text}");
}

/// A job of 2 threads without `group_reporting` is 2 `jobs[]` entries and 2 text blocks, each
/// from its thread's record (its own bytes, I/Os, latencies, run time and CPU); a role's
/// threads likewise. With `group_reporting`, one entry with the sums. A record without
/// figures per thread (an older run) is one entry with its threads' sums, and says so.
#[test]
fn fio_json_reports_each_clone_from_its_threads_record_and_old_records_merged() {
    use crate::fio::JobPlace;
    use crate::model::job::OpKind;
    use crate::model::result::{RoleResult, ThreadResult};
    use crate::present::fio::{fio_json, fio_text, FioContext};
    let hist = |n: u64, nanos: u64| {
        let mut h = crate::stats::latency::new_histogram();
        h.record_n(nanos, n).unwrap();
        h
    };
    let lat =
        |op: OpKind, n: u64, nanos: u64| crate::model::latency::summarize(op, &hist(n, nanos));
    let thread = |ops: u64, nanos: u64, wall_ms: u64, op: OpKind| ThreadResult {
        wall_nanos: wall_ms * 1_000_000,
        bytes_read: if op == OpKind::Read { ops * 4096 } else { 0 },
        bytes_written: if op == OpKind::Write { ops * 4096 } else { 0 },
        data_ops: ops,
        cpu_user_nanos: wall_ms * 100_000,
        cpu_sys_nanos: wall_ms * 200_000,
        // Made-up counts that differ per thread: ops switches, one major fault, ms minor.
        rusage: crate::model::result::RusageCounts {
            voluntary_switches: ops - 1,
            involuntary_switches: 1,
            major_faults: 1,
            minor_faults: wall_ms,
        },
        latency: vec![crate::model::latency::thread_latency(op, &hist(ops, nanos))],
        windows: Default::default(),
        submission: Vec::new(),
        depths: Default::default(),
    };
    let mut c = config("ext4", &[100.0], 0);
    c.run.tests[0].threads = 2;
    let p = &mut c.run.tests[0].reps[0].phases[0];
    p.threads = 2;
    p.bytes_read = (100 + 300) * 4096;
    p.bytes_written = 0;
    p.wall_nanos = 2_000_000_000;
    p.cpu_user_nanos = 0;
    p.cpu_sys_nanos = 0;
    p.latency = vec![lat(OpKind::Read, 400, 40_000)];
    p.per_thread =
        vec![thread(100, 20_000, 1000, OpKind::Read), thread(300, 60_000, 2000, OpKind::Read)];
    p.roles = vec![RoleResult {
        name: "w".into(),
        threads: 2,
        wall_nanos: 3_000_000_000,
        bytes_read: 0,
        bytes_written: 30 * 4096,
        data_ops: 30,
        mib_per_s: 0.1,
        latency: vec![lat(OpKind::Write, 30, 9_000)],
        per_thread: vec![
            thread(10, 9_000, 2500, OpKind::Write),
            thread(20, 9_000, 3000, OpKind::Write),
        ],
        cpu_user_nanos: 0,
        cpu_sys_nanos: 0,
        rusage: crate::model::result::RusageCounts { voluntary_switches: 30, ..Default::default() },
        submission: Vec::new(),
        depths: Default::default(),
    }];
    p.rusage.voluntary_switches = 400;
    let old = {
        let mut o = c.clone();
        let p = &mut o.run.tests[0].reps[0].phases[0];
        p.per_thread.clear();
        p.roles[0].per_thread.clear();
        build_report(vec![o], &opts(), 0, false)
    };
    let r = build_report(vec![c], &opts(), 0, false);
    let place = |name: &str, role: Option<&str>, reporting| JobPlace {
        name: name.into(),
        test_id: "1".into(),
        role: role.map(str::to_string),
        group: 0,
        group_reporting: reporting,
        threads: 2,
        percentiles: Default::default(),
        percentile_list: None,
        options: Vec::new(),
        first_thread: 0,
        fileop: None,
    };
    let ctx = |reporting| FioContext {
        jobs: vec![place("r", None, reporting), place("w", Some("w"), reporting)],
        ..FioContext::default()
    };
    let v = fio_json(&r, &ctx(false));
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().filter_map(|j| j["jobname"].as_str()).collect();
    assert_eq!(names, ["r", "r", "w", "w"], "{v}");
    let want = [(100, 20_000, 1000, 10.0, 20.0), (300, 60_000, 2000, 10.0, 20.0)];
    for (i, (ops, nanos, ms, usr, sys)) in want.into_iter().enumerate() {
        let j = &jobs[i];
        assert_eq!(j["groupid"], 0);
        assert_eq!(j["read"]["io_bytes"], ops * 4096, "{j}");
        assert_eq!(j["read"]["total_ios"], ops, "{j}");
        assert_eq!(j["read"]["clat_ns"]["N"], ops, "{j}");
        assert_eq!(j["read"]["clat_ns"]["min"], nanos, "{j}");
        assert_eq!(
            (j["read"]["runtime"].as_u64(), j["job_runtime"].as_u64()),
            (Some(ms), Some(ms))
        );
        assert_eq!(j["read"]["iops"].as_f64().map(f64::round), Some((ops * 1000 / ms) as f64));
        assert_eq!((j["usr_cpu"].as_f64(), j["sys_cpu"].as_f64()), (Some(usr), Some(sys)));
        assert_eq!(
            (j["ctx"].as_u64(), j["majf"].as_u64(), j["minf"].as_u64()),
            (Some(ops), Some(1), Some(ms))
        );
        assert_eq!(j["fsbench"]["clone"], serde_json::json!({"index": i, "of": 2}));
    }
    assert_eq!(
        (jobs[2]["write"]["total_ios"].as_u64(), jobs[3]["write"]["total_ios"].as_u64()),
        (Some(10), Some(20))
    );
    assert_eq!(jobs[3]["job_runtime"], 3000, "the role thread's own run time");
    let text = fio_text(&r, &ctx(false));
    assert_eq!(text.matches("r: (groupid=0, jobs=1)").count(), 2, "{text}");
    assert_eq!(text.matches("w: (groupid=0, jobs=1)").count(), 2, "{text}");
    assert!(text.contains("READ: bw=") && text.contains("io=1.6MiB, run=1000-2000msec"), "{text}");
    // fio's range of the clones' rates: 100 ops of 4 KiB in 1 s, 300 in 2 s.
    assert!(text.contains(", 400.0KiB/s-600.0KiB/s (409.6kB/s-614.4kB/s), io="), "{text}");
    assert!(!text.contains("reported as one job"), "{text}");
    assert!(text.contains("sys=20.00%, ctx=300, majf=1, minf=2000\n"), "{text}");

    // group_reporting: one entry, the sums (as before).
    let v = fio_json(&r, &ctx(true));
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{v}");
    assert_eq!(jobs[0]["read"]["total_ios"], 400);
    assert_eq!(jobs[0]["write"]["total_ios"], 30);
    assert!(jobs[0]["fsbench"].get("clones_merged").is_none(), "{v}");
    // The group's counts: the phase's threads' and the role's added up.
    assert_eq!(jobs[0]["ctx"], 400 + 30, "{v}");

    // An older record, without figures per thread: merged, and said so.
    let v = fio_json(&old, &ctx(false));
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().filter_map(|j| j["jobname"].as_str()).collect();
    assert_eq!(names, ["r", "w"], "{v}");
    assert_eq!(
        (jobs[0]["read"]["total_ios"].as_u64(), jobs[1]["write"]["total_ios"].as_u64()),
        (Some(400), Some(30))
    );
    for j in jobs {
        let why = j["fsbench"]["clones_merged"].as_str().unwrap_or_else(|| panic!("{j}"));
        assert!(why.contains("its 2 threads are reported as one job"), "{why}");
        assert!(j["fsbench"].get("clone").is_none(), "{j}");
    }
    let text = fio_text(&old, &ctx(false));
    assert!(
        text.contains("r: (groupid=0, jobs=2)") && text.contains("w: (groupid=0, jobs=2)"),
        "{text}"
    );
    assert!(text.contains("  r: its 2 threads are reported as one job"), "{text}");
}

/// Jobs that never ran (after an `exit_what=all`) follow the jobs that ran in `fsbench fio`'s
/// JSON, each with its groupid and every figure zero, `fsbench.ran` false and why; with
/// `group_reporting` their group is one entry (threads summed), as for jobs that ran. The text
/// has no block for them, only their groups' lines and a line each under `fsbench:`.
#[test]
fn fio_json_lists_jobs_that_never_ran_with_zeros() {
    use crate::fio::{JobPlace, UnrunJob};
    use crate::present::fio::{fio_json, fio_text, FioContext};
    let r = build_report(vec![config("ext4", &[100.0], 0)], &opts(), 0, false);
    let unrun = |name: &str, group, group_reporting, threads| UnrunJob {
        name: name.into(),
        group,
        group_reporting,
        threads,
        stopped_by: "r".into(),
        options: vec![("size".into(), format!("{threads}m"))],
    };
    let ctx = FioContext {
        jobs: vec![JobPlace {
            name: "r".into(),
            test_id: "1".into(),
            role: None,
            group: 0,
            group_reporting: false,
            threads: 1,
            percentiles: Default::default(),
            percentile_list: None,
            options: vec![("rw".into(), "write".into()), ("bs".into(), "8k".into())],
            first_thread: 0,
            fileop: None,
        }],
        unrun: vec![unrun("a", 1, true, 2), unrun("b", 1, false, 1), unrun("c", 2, false, 1)],
        ..FioContext::default()
    };
    let v = fio_json(&r, &ctx);
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().filter_map(|j| j["jobname"].as_str()).collect();
    assert_eq!(names, ["r", "a", "c"], "{v}");
    assert!(jobs[0]["write"]["io_bytes"].as_u64() > Some(0), "{v}");
    assert!(jobs[0]["fsbench"].get("ran").is_none(), "a job that ran: {v}");
    assert_eq!(jobs[0]["job options"], serde_json::json!({"rw": "write", "bs": "8k"}), "{v}");
    assert_eq!(jobs[0]["latency_target"], 0, "{v}");
    // A merged group's options are its first job's.
    assert_eq!(jobs[1]["job options"], serde_json::json!({"size": "2m"}), "{v}");
    for (j, group, threads) in [(&jobs[1], 1, 3), (&jobs[2], 2, 1)] {
        assert_eq!(j["groupid"], group, "{j}");
        assert_eq!(j["error"], 0, "{j}");
        for d in ["read", "write", "trim"] {
            for k in ["io_bytes", "bw_bytes", "total_ios", "runtime"] {
                assert_eq!(j[d][k], 0, "{d}.{k}: {j}");
            }
            assert_eq!(j[d]["clat_ns"]["N"], 0, "{j}");
        }
        assert_eq!((j["job_runtime"].as_u64(), j["usr_cpu"].as_f64()), (Some(0), Some(0.0)));
        assert_eq!(j["fsbench"]["ran"], false, "{j}");
        assert!(j.get("latency_target").is_none(), "fio 3.33 leaves it out: {j}");
        assert_eq!(j["fsbench"]["threads"], threads, "{j}");
        assert!(j["fsbench"]["why"].as_str().unwrap().starts_with("[r] has exit_what=all"));
    }
    let text = fio_text(&r, &ctx);
    assert!(text.contains("r: (groupid=0") && !text.contains("a: (groupid"), "{text}");
    assert!(text.contains("Run status group 1 (all jobs):"), "{text}");
    assert!(text.contains("Run status group 2 (all jobs):"), "{text}");
    assert!(text.contains("  c: never ran ([r] has exit_what=all)"), "{text}");
}

/// Two configurations of a test whose one role, a writer, did `writer` MiB/s in every
/// repetition; the test's own figure `mibs`.
fn with_writer(label: &str, mibs: &[f64], writer: f64) -> crate::model::report::ConfigResult {
    use crate::model::result::RoleResult;
    let mut c = config(label, mibs, 0);
    for rep in &mut c.run.tests[0].reps {
        rep.phases[0].timed = true;
        rep.phases[0].roles = vec![RoleResult {
            name: "writer".into(),
            threads: 1,
            wall_nanos: 1_000_000_000,
            bytes_read: 0,
            bytes_written: 1 << 30,
            data_ops: 1024,
            mib_per_s: writer,
            latency: Vec::new(),
            per_thread: Vec::new(),
            cpu_user_nanos: 0,
            cpu_sys_nanos: 0,
            rusage: Default::default(),
            submission: Vec::new(),
            depths: Default::default(),
        }];
    }
    c
}

#[test]
fn a_role_whose_throughput_fell_is_named_beside_the_win_and_the_draw() {
    // bfq wins the test's own figure; its writer fell from 1036 to 603 MiB/s.
    let configs = vec![
        with_writer("mq-deadline", &[100.0, 101.0, 99.0, 100.0, 100.0], 1036.0),
        with_writer("bfq", &[300.0, 301.0, 299.0, 300.0, 300.0], 603.0),
    ];
    let r = build_report(configs, &opts(), 0, false);
    assert!(matches!(r.tests[0].vs_baseline[1], Some(Verdict::Win { winner: 1, .. })));
    let why = &r.tests[0].why[1];
    let role = why.iter().position(|e| e.rule == "role_throughput").expect("the role line");
    let line = "writer: 1036 → 603 MiB/s from mq-deadline to bfq (1.72× lower";
    assert!(why[role].text.starts_with(line), "{why:?}");
    // After the reasons, before the context lines.
    assert!(why[..role].iter().all(|e| e.is_reason()), "{why:?}");
    assert!(why[role + 1..].iter().all(|e| e.is_context()), "{why:?}");
    let text = crate::present::compare::render(&r, false, WIDE);
    let at = text.find("Why (observed").unwrap_or_else(|| panic!("{text}"));
    assert!(text[at..].contains(&format!("- {line}")), "{text}");
    assert!(html(&r).contains(line));
    // The same figure on both (a draw): the role line alone, under a draw's heading.
    let configs = vec![
        with_writer("mq-deadline", &[100.0, 101.0, 99.0, 100.0, 100.0], 1036.0),
        with_writer("bfq", &[100.0, 100.5, 99.5, 100.0, 100.0], 603.0),
    ];
    let r = build_report(configs, &opts(), 0, false);
    assert!(matches!(r.tests[0].vs_baseline[1], Some(Verdict::Draw { .. })), "{:?}", r.tests[0]);
    let why = &r.tests[0].why[1];
    assert_eq!(why.len(), 1, "{why:?}");
    let text = crate::present::compare::render(&r, false, WIDE);
    assert!(
        text.contains("a draw between mq-deadline and bfq; a role beside it changed"),
        "{text}"
    );
    assert!(text.contains(&format!("- {line}")) && !text.contains("NOT SIGNIFICANT"), "{text}");
    let page = html(&r);
    assert!(page.contains("a draw between mq-deadline and bfq") && page.contains(line), "{page}");
    // A writer within the factor: nothing to say about a draw.
    let configs = vec![
        with_writer("mq-deadline", &[100.0, 101.0, 99.0, 100.0, 100.0], 1036.0),
        with_writer("bfq", &[100.0, 100.5, 99.5, 100.0, 100.0], 900.0),
    ];
    let r = build_report(configs, &opts(), 0, false);
    assert!(r.tests[0].why[1].is_empty(), "{:?}", r.tests[0].why[1]);
}

/// fio's disk stats come from the timed phases' device counters: `disk_util[]` in the JSON
/// (read and write ticks and time in queue from `/sys/block/DEV/stat`, no longer 0) and the
/// `Disk stats (read/write):` block of the text, in fio's words.
#[test]
fn fio_disk_stats_are_the_phases_device_counters() {
    use crate::model::result::DeviceDelta;
    use crate::present::fio::{fio_json, fio_text, FioContext};
    let mut c = config("ext4", &[100.0], 0);
    c.run.tests[0].reps[0].phases[0].device = Some(DeviceDelta {
        devices: vec!["loop3".into()],
        reads_completed: 100,
        writes_completed: 7,
        reads_merged: 2,
        writes_merged: 3,
        read_ticks_ms: 50,
        write_ticks_ms: 9,
        queue_ms: 61,
        busy_ms: 500,
        ..Default::default()
    });
    let r = build_report(vec![c], &opts(), 0, false);
    let v = fio_json(&r, &FioContext::default());
    let d = &v["disk_util"][0];
    assert_eq!(d["name"], "loop3", "{v}");
    let n = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k}: {d}"));
    assert_eq!(
        [n("read_ios"), n("write_ios"), n("read_merges"), n("write_merges")],
        [100, 7, 2, 3]
    );
    assert_eq!([n("read_ticks"), n("write_ticks"), n("in_queue")], [50, 9, 61]);
    assert_eq!(d["util"].as_f64(), Some(50.0), "500 ms busy of a 1 s phase");
    let text = fio_text(&r, &FioContext::default());
    assert!(
        text.contains(
            "Disk stats (read/write):\n  loop3: ios=100/7, merge=2/3, ticks=50/9, in_queue=61, util=50.00%\n"
        ),
        "{text}"
    );
}

/// fio's bandwidth and IOPS samples from made-up series windows of 500 ms: each clone's from
/// its thread's full windows (a window without I/O and the partial last one are no sample),
/// `group_reporting` adds the threads' statistics up as fio does, a job of one thread reads
/// the phase's series, and a job with no full window writes zeros and no text line.
#[test]
fn fio_json_and_text_have_fios_rate_samples() {
    use crate::fio::JobPlace;
    use crate::model::result::ThreadResult;
    use crate::model::series::{PhaseSeries, ThreadWindows};
    use crate::present::fio::{fio_json, fio_text, FioContext};
    let win = |ops: &[u64]| ThreadWindows {
        read_bytes: ops.iter().map(|n| n * 4096).collect(),
        read_ops: ops.to_vec(),
        ..ThreadWindows::default()
    };
    // A: 3.0 s, 6 full windows (one without I/O), then a partial one; B: 1.2 s, 2 full.
    let (a, b) = ([100, 101, 0, 99, 100, 100, 7], [50, 52, 10]);
    let thread = |ops: &[u64], wall_ms: u64| ThreadResult {
        wall_nanos: wall_ms * 1_000_000,
        bytes_read: ops.iter().sum::<u64>() * 4096,
        data_ops: ops.iter().sum(),
        windows: win(ops),
        latency: vec![crate::model::latency::thread_latency(crate::model::job::OpKind::Read, &{
            let mut h = crate::stats::latency::new_histogram();
            h.record_n(50_000, ops.iter().sum()).expect("in range");
            h
        })],
        ..ThreadResult::default()
    };
    let mut c = config("ext4", &[100.0], 0);
    c.run.tests[0].threads = 2;
    let p = &mut c.run.tests[0].reps[0].phases[0];
    p.threads = 2;
    p.bytes_read = (507 + 112) * 4096;
    p.bytes_written = 0;
    p.wall_nanos = 3_000_000_000;
    p.per_thread = vec![thread(&a, 3000), thread(&b, 1200)];
    p.series = Some(PhaseSeries {
        interval_nanos: 500_000_000,
        read_bytes: vec![0; 7],
        read_ops: vec![0; 7],
        ..PhaseSeries::default()
    });
    let place = |reporting| JobPlace {
        name: "r".into(),
        test_id: "1".into(),
        role: None,
        group: 0,
        group_reporting: reporting,
        threads: 2,
        percentiles: Default::default(),
        percentile_list: None,
        options: Vec::new(),
        first_thread: 0,
        fileop: None,
    };
    let ctx = |reporting| FioContext {
        jobs: vec![place(reporting)],
        sample_window_ms: 500,
        ..FioContext::default()
    };
    let r = build_report(vec![c.clone()], &opts(), 0, false);
    let v = fio_json(&r, &ctx(false));
    let (ja, jb) = (&v["jobs"][0]["read"], &v["jobs"][1]["read"]);
    // A: 200, 202, 198, 200, 200 IOPS (800, 808, 792, 800, 800 KiB/s).
    assert_eq!(
        (ja["iops_samples"].as_u64(), ja["iops_min"].as_u64()),
        (Some(5), Some(198)),
        "{ja}"
    );
    assert_eq!((ja["iops_max"].as_u64(), ja["iops_mean"].as_f64()), (Some(202), Some(200.0)));
    assert_eq!(ja["iops_stddev"].as_f64(), Some(2f64.sqrt()));
    assert_eq!((ja["bw_samples"].as_u64(), ja["bw_min"].as_u64()), (Some(5), Some(792)));
    assert_eq!((ja["bw_max"].as_u64(), ja["bw_mean"].as_f64()), (Some(808), Some(800.0)));
    assert_eq!(ja["bw_dev"].as_f64(), Some(32f64.sqrt()));
    // per=: 800 KiB/s of the group's (507 + 112) * 4 KiB over its longest job's 3000 ms.
    let agg = ((507 + 112) * 4096 * 1000 / 3000u64) as f64 / 1024.0;
    assert_eq!(ja["bw_agg"].as_f64(), Some(800.0 * 100.0 / agg));
    assert_eq!((jb["iops_samples"].as_u64(), jb["iops_mean"].as_f64()), (Some(2), Some(102.0)));
    assert_eq!(v["jobs"][0]["trim"]["bw_samples"], 0);
    let text = fio_text(&r, &ctx(false));
    assert!(
        text.contains(
            "   iops        : min=  198, max=  202, avg=200.00, stdev= 1.41, samples=5\n"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("   bw (  KiB/s): min=  792, max=  808, per={:.2}%, avg=800.00, stdev= 5.66, samples=5\n", 800.0 * 100.0 / agg)), "{text}");
    // group_reporting: counts, min, max, means and squared deviations added up (fio's).
    let v = fio_json(&r, &ctx(true));
    let g = &v["jobs"][0]["read"];
    assert_eq!((g["iops_samples"].as_u64(), g["iops_min"].as_u64()), (Some(7), Some(298)), "{g}");
    assert_eq!((g["iops_max"].as_u64(), g["iops_mean"].as_f64()), (Some(306), Some(302.0)));
    assert_eq!(g["iops_stddev"].as_f64(), Some((16f64 / 6.0).sqrt()));
    assert_eq!(g["bw_agg"].as_f64(), Some(100.0), "the summed mean is capped at 100%");
    // One thread: the phase's series; a job shorter than a window: zeros and no line.
    let mut one = c.clone();
    one.run.tests[0].threads = 1;
    let p = &mut one.run.tests[0].reps[0].phases[0];
    p.threads = 1;
    p.bytes_read = 507 * 4096;
    p.per_thread.clear();
    let w = win(&a);
    p.series = Some(PhaseSeries {
        interval_nanos: 500_000_000,
        read_bytes: w.read_bytes,
        read_ops: w.read_ops,
        ..PhaseSeries::default()
    });
    let single = |p: &JobPlace| JobPlace { threads: 1, ..p.clone() };
    let ctx1 = FioContext { jobs: vec![single(&place(false))], ..ctx(false) };
    let r = build_report(vec![one.clone()], &opts(), 0, false);
    let v = fio_json(&r, &ctx1);
    assert_eq!(v["jobs"][0]["read"]["iops_samples"], 5, "{v}");
    assert_eq!(v["jobs"][0]["read"]["bw_agg"], 100.0);
    one.run.tests[0].reps[0].phases[0].wall_nanos = 400_000_000;
    let r = build_report(vec![one], &opts(), 0, false);
    let v = fio_json(&r, &ctx1);
    let z = &v["jobs"][0]["read"];
    for k in ["bw_min", "bw_max", "bw_samples", "iops_min", "iops_max", "iops_samples"] {
        assert_eq!(z[k], 0, "{k}: {z}");
    }
    for k in ["bw_agg", "bw_mean", "bw_dev", "iops_mean", "iops_stddev"] {
        assert_eq!(z[k], 0.0, "{k}: {z}");
    }
    let text = fio_text(&r, &ctx1);
    assert!(!text.contains("iops        :") && !text.contains("bw ("), "{text}");
    assert!(!text.contains("no bandwidth or IOPS samples"), "{text}");
    assert!(v["jobs"][0]["fsbench"].get("rate_samples").is_none(), "{v}");
    // A series widened past bwavgtime (a long job that is not time_based): samples of its
    // windows, said so. Without windows per thread: zeros, said so.
    let mut wide = c.clone();
    let p = &mut wide.run.tests[0].reps[0].phases[0];
    p.series.as_mut().expect("set above").interval_nanos = 1_000_000_000;
    let r = build_report(vec![wide.clone()], &opts(), 0, false);
    let v = fio_json(&r, &ctx(true));
    let note = v["jobs"][0]["fsbench"]["rate_samples"].as_str().unwrap_or("");
    assert!(note.contains("of 1000 ms windows, not bwavgtime's 500 ms"), "{v}");
    // A: 3 full windows read as 1 s (100, 101, 0: one without I/O), B: 1.
    assert_eq!(v["jobs"][0]["read"]["iops_samples"], 2 + 1, "{v}");
    wide.run.tests[0].reps[0].phases[0].per_thread[1].windows = ThreadWindows::default();
    let r = build_report(vec![wide], &opts(), 0, false);
    let v = fio_json(&r, &ctx(true));
    assert_eq!(v["jobs"][0]["read"]["iops_samples"], 0, "{v}");
    let note = v["jobs"][0]["fsbench"]["rate_samples"].as_str().unwrap_or("");
    assert!(note.starts_with("no bandwidth or IOPS samples"), "{v}");
    assert!(fio_text(&r, &ctx(true)).contains("r: no bandwidth or IOPS samples"));
}

/// `fsbench fio`'s `steadystate` object and text line, as fio 3.33's `stat.c` writes them:
/// the criterion as fio prints it, the window's samples in bytes and ops per second (ops over
/// the phase's op size), fio's means (the sum over the duration, whole units), the criterion
/// value in percent and the one measure the metric uses (the other 0); a window that never
/// filled keeps fio's zeros.
#[test]
fn fio_json_has_fios_steadystate_object_and_text_line() {
    use crate::model::series::{LoadOutcome, Steady, SteadyMetric, SteadyOutcome};
    use crate::present::fio::{fio_json, fio_text, FioContext};
    let with = |metric, held: Option<f64>, window: Vec<f64>| {
        let mut c = config("ext4", &[100.0], 0);
        let p = &mut c.run.tests[0].reps[0].phases[0];
        assert!(p.timed);
        p.bytes_read = 4096 * 600;
        p.bytes_written = 0;
        p.data_ops = 600;
        p.load = Some(LoadOutcome {
            rate: None,
            steady: Some(SteadyOutcome {
                criterion: Steady { metric, limit_percent: 20.0, window_secs: 3, ramp_secs: 0 },
                held_at_secs: held,
                window_bytes_per_s: window,
            }),
        });
        build_report(vec![c], &opts(), 0, false)
    };
    let r = with(SteadyMetric::Iops, Some(3.0), vec![819200.0, 4096.0 * 210.0, 4096.0 * 190.0]);
    let v = fio_json(&r, &FioContext::default());
    let ss = &v["jobs"][0]["steadystate"];
    assert_eq!(ss["ss"], "iops:20.000000%", "{ss}");
    assert_eq!((ss["duration"].as_u64(), ss["attained"].as_u64()), (Some(3), Some(1)));
    assert_eq!(ss["criterion"], "5.000000%", "{ss}");
    assert_eq!((ss["max_deviation"].as_f64(), ss["slope"].as_f64()), (Some(10.0), Some(0.0)));
    assert_eq!(ss["data"]["iops"], serde_json::json!([200, 210, 190]));
    assert_eq!(ss["data"]["bw"], serde_json::json!([819200, 860160, 778240]));
    assert_eq!(
        (ss["data"]["iops_mean"].as_u64(), ss["data"]["bw_mean"].as_u64()),
        (Some(200), Some(819200))
    );
    let text = fio_text(&r, &FioContext::default());
    assert!(
        text.contains("  steadystate  : attained=yes, bw=800.0KiB/s (819.2kB/s), iops=200, iops mean dev=5.000%"),
        "{text}"
    );
    // A falling slope that never held: fio's signed criterion, the slope in the metric's unit.
    let r = with(SteadyMetric::BwSlope, None, vec![3000.0, 2000.0, 1000.0]);
    let ss = &fio_json(&r, &FioContext::default())["jobs"][0]["steadystate"];
    assert_eq!((ss["attained"].as_u64(), ss["criterion"].as_str()), (Some(0), Some("-50.000000%")));
    assert_eq!((ss["max_deviation"].as_f64(), ss["slope"].as_f64()), (Some(0.0), Some(-1000.0)));
    assert!(fio_text(&r, &FioContext::default())
        .contains("attained=no, bw=2.0KiB/s (2.0kB/s), iops=0, bw slope=-50.000%"));
    // A window cut short by the end of the phase: fio's zeros, no criterion yet.
    let r = with(SteadyMetric::Iops, None, vec![4096.0 * 100.0]);
    let ss = &fio_json(&r, &FioContext::default())["jobs"][0]["steadystate"];
    assert_eq!(ss["data"]["iops"], serde_json::json!([100, 0, 0]));
    assert_eq!(
        (ss["criterion"].as_str(), ss["data"]["iops_mean"].as_u64()),
        (Some("0.000000%"), Some(33))
    );
    // A phase without a criterion has no steadystate object, as fio's job without ss_dur.
    let c = config("ext4", &[100.0], 0);
    let v = fio_json(&build_report(vec![c], &opts(), 0, false), &FioContext::default());
    assert!(v["jobs"][0].get("steadystate").is_none(), "{}", v["jobs"][0]);
}
