//! The report's tables after the charts: CPU per operation, block-device counters, block-trace
//! totals, the environment (host and each configuration's filesystem) and the notes.

use super::{charts, swatch, ReportRun};
use crate::model::report::Report;
use crate::model::result::{DeviceDelta, RepResult, TestStatus};
use crate::model::units::{nanos, sig3, utc};
use crate::model::verdict::Verdict;
use maud::{html, Markup};

/// A table cell with a bar behind its text, as long as `value` is of `max`.
fn bar_cell(value: f64, max: f64, i: usize, text: &str, title: &str) -> Markup {
    let pct = if max > 0.0 { (value / max * 100.0).clamp(0.0, 100.0) } else { 0.0 };
    html! {
        // The bar is inside a box of the cell's width (`.bw`, clipped): it never reaches into
        // the next column.
        td.barcell title=(title) {
            div.bw {
                div.hbar style={ "width:" (format!("{pct:.1}")) "%;background:" (charts::css_colour(i)) } {}
                span { (text) }
            }
        }
    }
}

/// CPU per operation of each test's median repetition, per configuration.
pub(super) fn cpu(r: &Report) -> Markup {
    html! {
        h3 { "CPU per operation" }
        p.rule { "User + system CPU time of all threads over the timed phases, plus a FUSE daemon's (zfs-fuse) CPU, divided by the read/write operations, or the file operations of a file-set test (median repetition). Lower is cheaper." }
        table.panel {
            thead {
                tr {
                    th { "test" }
                    @for (i, c) in r.configs.iter().enumerate() {
                        th { (swatch(i)) (c.label) " " span.unit { "µs/op" } }
                    }
                }
            }
            tbody { @for ti in 0..r.tests.len() { (cpu_row(r, ti)) } }
        }
    }
}

fn cpu_row(r: &Report, ti: usize) -> Markup {
    let row = &r.tests[ti];
    let per_op: Vec<Option<(f64, &RepResult)>> = r
        .configs
        .iter()
        .map(|c| {
            let m = c.run.tests[ti].median_rep()?;
            // File-set tests: per file operation (create, unlink, ...); a FUSE daemon's CPU is
            // the filesystem's and counts.
            let ops = if m.file_ops > 0 { m.file_ops } else { m.data_ops };
            let daemon = crate::model::facts::daemon_cpu_nanos(m).unwrap_or(0);
            (ops > 0).then(|| {
                ((m.cpu_user_nanos + m.cpu_sys_nanos + daemon) as f64 / ops as f64 / 1e3, m)
            })
        })
        .collect();
    let max = per_op.iter().flatten().map(|x| x.0).fold(0.0, f64::max);
    html! {
        tr {
            td.id { (row.id) " " span.muted { (row.name) } }
            @for (i, v) in per_op.iter().enumerate() {
                @match v {
                    Some((us, m)) => (bar_cell(*us, max, i, &sig3(*us), &cpu_title(m))),
                    None => td.muted { "–" },
                }
            }
        }
    }
}

/// The hover text of a CPU cell: user and system time, share of a core, a FUSE daemon's time.
fn cpu_title(m: &RepResult) -> String {
    let daemon = crate::model::facts::daemon_cpu_nanos(m)
        .map(|d| format!(", FUSE daemon {:.3} s", d as f64 / 1e9))
        .unwrap_or_default();
    format!(
        "user {:.3} s, system {:.3} s, {:.0}% of a core per thread{daemon}",
        m.cpu_user_nanos as f64 / 1e9,
        m.cpu_sys_nanos as f64 / 1e9,
        m.cpu_pct_per_thread
    )
}

/// Block-trace totals per test and configuration (`--trace`), as blktrace summarised them.
pub(super) fn trace(r: &Report) -> Markup {
    use crate::model::units::fmt_bytes;
    let any = r.tests.iter().any(|row| row.facts.iter().flatten().any(|f| f.trace.is_some()));
    if !any {
        return html! {};
    }
    html! {
        h3 { "Block trace" }
        p.rule { "From fsbench's tracefs instance over the timed phases of the median repetition: bios queued (block_bio_queue), merged into existing requests, and requests issued to the driver, with their average sizes; highest queue depth; device latency (issue to complete) p99." }
        table.panel {
            thead {
                tr {
                    th { "test" } th { "configuration" }
                    @for h in ["write bios", "merged", "write requests", "avg request", "read bios", "read requests", "max depth", "device p99"] {
                        th.num { (h) }
                    }
                }
            }
            tbody {
                @for row in &r.tests {
                    @for (i, c) in r.configs.iter().enumerate() {
                        @if let Some(t) = row.facts.get(i).and_then(|f| f.as_ref()).and_then(|f| f.trace) {
                            tr {
                                td { (row.id) }
                                td { (swatch(i)) (c.label) }
                                td.num { (t.writes.bios) }
                                td.num { (t.writes.bio_merges) }
                                td.num { (t.writes.requests) }
                                td.num {
                                    (t.writes.request_bytes.checked_div(t.writes.requests).map(fmt_bytes).unwrap_or_else(|| "–".into()))
                                }
                                td.num { (t.reads.bios) }
                                td.num { (t.reads.requests) }
                                td.num { (t.max_queue_depth) }
                                td.num { (t.device_p99_nanos.map(nanos).unwrap_or_else(|| "–".into())) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What the threads waited for while off CPU per test and configuration (`--trace`): the
/// scheduler's account, stacks at switch-out classified by kernel function.
pub(super) fn offcpu(r: &Report) -> Markup {
    let any = r.tests.iter().any(|row| row.facts.iter().flatten().any(|f| f.offcpu.is_some()));
    if !any {
        return html! {};
    }
    html! {
        h3 { "Off CPU: what the threads waited for" }
        p.rule { "From sched:sched_switch for the test's threads over the timed phases of the median repetition: each sleep from switch-out to switch-in, by the kernel function on its stack (balance_dirty_pages, the journal, fsync, writeback, reads, locks); preempted threads wait for a CPU. Shares of the off-CPU time." }
        table.panel {
            thead {
                tr {
                    th { "test" } th { "configuration" } th.num { "off CPU" } th.num { "switch-outs" } th { "by reason" }
                }
            }
            tbody {
                @for row in &r.tests {
                    @for (i, c) in r.configs.iter().enumerate() {
                        @if let Some(o) = row.facts.get(i).and_then(|f| f.as_ref()).and_then(|f| f.offcpu.as_ref()) {
                            tr {
                                td { (row.id) }
                                td { (swatch(i)) (c.label) }
                                td.num { (nanos(o.total_nanos)) }
                                td.num { (o.switches) }
                                td { (o.words()) @if o.events_lost > 0 { " (" (o.events_lost) " events lost: lower bounds)" } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A row of the block-device table: test, configuration, the counters summed over the timed
/// phases, and the write amplification.
struct DeviceRow<'a> {
    id: &'a str,
    config: usize,
    label: &'a str,
    delta: DeviceDelta,
    amplification: Option<f64>,
}

fn device_rows(r: &Report) -> Vec<DeviceRow<'_>> {
    let mut rows = Vec::new();
    for (ti, row) in r.tests.iter().enumerate() {
        for (i, c) in r.configs.iter().enumerate() {
            let Some(m) = c.run.tests[ti].median_rep() else { continue };
            let mut d = DeviceDelta::default();
            let mut app_written = 0u64;
            let mut seen = false;
            for p in m.phases.iter().filter(|p| p.timed) {
                app_written += p.bytes_written;
                if let Some(x) = &p.device {
                    seen = true;
                    d.add(x);
                }
            }
            if !seen {
                continue;
            }
            // Device-wide counters include other processes' writes: no amplification.
            let amplification =
                (app_written > 0 && !d.shared).then(|| d.write_bytes as f64 / app_written as f64);
            rows.push(DeviceRow {
                id: &row.id,
                config: i,
                label: &c.label,
                delta: d,
                amplification,
            });
        }
    }
    rows
}

/// Changes of the block devices' counters over the timed phases of the median repetition.
pub(super) fn devices(r: &Report) -> Markup {
    let any = r.configs.iter().any(|c| {
        c.run
            .tests
            .iter()
            .any(|t| t.reps.iter().any(|rep| rep.phases.iter().any(|p| p.device.is_some())))
    });
    if !any {
        return html! {
            h3 { "Block devices" }
            p.muted { "No block-device counters: the targets have no block device fsbench could read (/sys/block/DEV/stat), e.g. tmpfs." }
        };
    }
    let rows = device_rows(r);
    let amp_max = rows.iter().filter_map(|d| d.amplification).fold(0.0f64, f64::max);
    let amp = says_something(&rows);
    html! {
        h3 { "Block devices" }
        p.rule {
            "Changes of /sys/block/DEV/stat over the timed phases of the median repetition. Busy: n/a where the kernel's counter grew by more than the phase lasted (it took in time from outside the phase). "
            @if amp {
                "Write amplification: bytes the device wrote / bytes the test wrote (– where the test wrote nothing or the counters are device-wide)."
            } @else {
                "Write amplification is not shown: every test's is within 1.00–1.05× (the device wrote what the test wrote), or unknown."
            }
        }
        table.panel {
            thead {
                tr {
                    th { "test" } th { "configuration" } th { "device" }
                    @for h in ["reads", "read MiB", "writes", "write MiB", "avg write", "merged", "busy"] {
                        th.num { (h) }
                    }
                    @if amp { th { "write amplification" } }
                }
            }
            tbody { @for row in &rows { (device_row(row, amp.then_some(amp_max))) } }
        }
    }
}

/// Whether the write amplification column says something: some test's is outside 1.00–1.05×
/// (within it, the device wrote what the test wrote: the column would be 1.00× everywhere).
fn says_something(rows: &[DeviceRow<'_>]) -> bool {
    rows.iter().filter_map(|d| d.amplification).any(|a| !(AMP_PLAIN.0..=AMP_PLAIN.1).contains(&a))
}

/// Write amplification that says nothing: the device wrote what the test wrote.
const AMP_PLAIN: (f64, f64) = (0.995, 1.05);

/// A row of the device table; the amplification cell when `amp_max` is given (the column is
/// shown).
fn device_row(row: &DeviceRow<'_>, amp_max: Option<f64>) -> Markup {
    let d = &row.delta;
    let mib = |b: u64| if b == 0 { "0".into() } else { sig3(b as f64 / 1048576.0) };
    let avg = if d.writes_completed > 0 {
        format!("{} KiB", sig3(d.write_bytes as f64 / d.writes_completed as f64 / 1024.0))
    } else {
        "–".into()
    };
    let devices = d.devices.join(",") + if d.shared { " (device-wide)" } else { "" };
    html! {
        tr {
            td.id { (row.id) }
            td { (swatch(row.config)) (row.label) }
            td { (devices) }
            td.num { (d.reads_completed) }
            td.num { (mib(d.read_bytes)) }
            td.num { (d.writes_completed) }
            td.num { (mib(d.write_bytes)) }
            td.num { (avg) }
            td.num { (d.reads_merged + d.writes_merged) }
            td.num {
                @if d.busy_overcounted { "n/a" } @else { (d.busy_ms) " ms" }
            }
            @match (amp_max, row.amplification) {
                (None, _) => {},
                (Some(max), Some(a)) => (bar_cell(a, max, row.config, &format!("{a:.2}×"), "device bytes written / bytes written by the test")),
                (Some(_), None) => td.muted { "–" },
            }
        }
    }
}

/// The host, and per configuration how its filesystem was made, mounted and backed.
pub(super) fn environment(run: &ReportRun) -> Markup {
    let r = &run.report;
    let h = &r.host;
    let mut kv: Vec<(&str, String)> = vec![
        ("host", h.hostname.clone()),
        ("kernel", h.kernel.clone()),
        ("CPU", format!("{} × {}", h.cpus, h.cpu_model)),
        ("memory", crate::model::units::fmt_bytes(h.memory_bytes)),
    ];
    if h.free_page_reporting {
        kv.push(("free page reporting", crate::present::host::PAGE_REPORTING_WORDS.into()));
    }
    if let Some(w) = crate::present::host::idle_words(h) {
        kv.push(("CPU idle", w));
    }
    kv.push(("started", utc(r.started_unix_s)));
    kv.push(("fsbench", r.fsbench_version.clone()));
    if r.configs.len() > 1 {
        let fresh = if r.fresh_per_test {
            "fresh for every test"
        } else {
            "one per configuration for the suite"
        };
        kv.push(("filesystems", fresh.into()));
    }
    html! {
        h3 { "Environment" }
        table.kv { @for (k, v) in &kv { tr { th { (k) } td { (v) } } } }
        table.panel.env {
            thead {
                tr {
                    th { "configuration" } th { "filesystem" } th { "made with" }
                    th { "mount options in effect" } th { "backing" }
                }
            }
            tbody {
                @for (i, c) in r.configs.iter().enumerate() {
                    @let (fs, made, opts, backing) = filesystem(c);
                    tr {
                        td { (swatch(i)) (c.label) }
                        td { (fs) }
                        td { pre { (made) } }
                        td { pre { (opts) } }
                        td { (backing) }
                    }
                }
            }
        }
    }
}

/// A configuration's filesystem, how it was made, its options in effect and what backs it.
fn filesystem(c: &crate::model::report::ConfigResult) -> (String, String, String, String) {
    let t = &c.run.target;
    let Some(e) = &c.env else {
        let devices = if t.devices.is_empty() {
            String::new()
        } else {
            format!(" ({})", t.devices.join(","))
        };
        return (
            t.fs_type.clone(),
            "existing directory".into(),
            t.mount_options.clone(),
            format!("{} on {}{devices}", t.dir, t.mount_source),
        );
    };
    let mut made = e.mkfs_cmdline.clone().unwrap_or_else(|| "–".into());
    for p in &e.post_create_cmdlines {
        made.push('\n');
        made.push_str(p);
    }
    if let Some(v) = &e.tool_version {
        made.push_str(&format!("\n({v})"));
    }
    let mut opts = e.mount_options.clone();
    if !e.super_options.is_empty() {
        opts.push_str(&format!("\nsuper: {}", e.super_options));
    }
    for (k, v) in &e.zfs_properties {
        opts.push_str(&format!("\n{k}={v}"));
    }
    if let Some(w) = crate::observe::compress::words(&c.run.tests) {
        opts.push_str(&format!("\n{w}"));
    }
    let backing = format!(
        "{} ({} device{}, {} each)",
        e.backing,
        e.devices,
        if e.devices == 1 { "" } else { "s" },
        crate::model::units::fmt_bytes(e.device_size_bytes)
    );
    (e.fstype.clone(), made, opts, backing)
}

/// Failures, skipped tests, warnings, tests not compared and the machine's notes.
pub(super) fn notes(r: &Report) -> Markup {
    let mut notes = Vec::new();
    for c in &r.configs {
        for t in &c.run.tests {
            match &t.status {
                TestStatus::Failed { reason } => {
                    notes.push(format!("{} test {} failed: {reason}", c.label, t.id))
                }
                TestStatus::Skipped { reason } => {
                    notes.push(format!("{} test {} not run: {reason}", c.label, t.id))
                }
                _ => {}
            }
            for w in &t.warnings {
                notes.push(format!("{} test {}: {w}", c.label, t.id));
            }
        }
    }
    for row in &r.tests {
        for v in row.vs_baseline.iter().flatten() {
            if let Verdict::NotCompared { reason } = v {
                notes.push(format!("test {} not compared: {reason}", row.id));
            }
        }
    }
    // What the machine adds to some figures, as under the terminal's tables.
    notes.extend(crate::present::host::notes(
        &r.host,
        r.configs.iter().flat_map(|c| c.run.tests.iter()),
    ));
    if notes.is_empty() {
        return html! {};
    }
    html! {
        h3 { "Notes" }
        ul.notes { @for n in &notes { li { (n) } } }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::compare::tests::config;
    use crate::analysis::compare::{build_report, CompareOptions};
    use crate::model::result::DeviceDelta;

    /// A comparison whose devices wrote `written` times what each test wrote (64 MiB).
    fn report(amplification: [f64; 2]) -> crate::model::report::Report {
        let mut configs = vec![config("ext4", &[100.0; 3], 0), config("xfs", &[110.0; 3], 0)];
        for (c, a) in configs.iter_mut().zip(amplification) {
            for r in &mut c.run.tests[0].reps {
                r.phases[0].device = Some(DeviceDelta {
                    devices: vec!["loop0".into()],
                    writes_completed: 100,
                    write_bytes: (a * (64u64 << 20) as f64) as u64,
                    ..Default::default()
                });
            }
        }
        let opts = CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        build_report(configs, &opts, 0, false)
    }

    /// Write amplification is shown where it says something: not when every test's is within
    /// 1.00–1.05× (it was "1.00×" everywhere), and when one's is not.
    #[test]
    fn write_amplification_is_shown_only_where_it_says_something() {
        let plain = super::devices(&report([1.0, 1.03])).into_string();
        assert!(!plain.contains("<th>write amplification</th>"), "{plain}");
        assert!(!plain.contains("1.00×") && plain.contains("is not shown"), "{plain}");
        let telling = super::devices(&report([1.0, 3.06])).into_string();
        assert!(telling.contains("<th>write amplification</th>"), "{telling}");
        assert!(telling.contains("3.06×") && telling.contains("1.00×"), "{telling}");
    }

    /// A CPU bar is drawn inside a box of its cell's width, so it cannot reach the next column.
    #[test]
    fn a_bar_stays_inside_its_cell() {
        let cell = super::bar_cell(5.0, 2.0, 0, "5", "t").into_string();
        assert!(
            cell.contains("<div class=\"bw\"><div class=\"hbar\" style=\"width:100.0%"),
            "{cell}"
        );
    }
}
