//! The section on tests with roles (`[[test.role]]`, e.g. the `starve` suite): the latency of
//! the test's own threads, which is what such a test asks about, beside what each role did.
//! Each figure is the median over the complete repetitions of that repetition's figure (p50,
//! p99, p99.9 of the read latency from the repetition's merged histogram).

use crate::model::job::OpKind;
use crate::model::result::{OpLatency, RepResult, TestResult};
use crate::model::units::nanos;

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(crate::stats::summary::median(&v))
}

fn lat(r: &RepResult, op: OpKind) -> Option<&OpLatency> {
    r.latency.iter().find(|l| l.op == op && l.count > 0)
}

/// One line per configuration of a test with roles (unwrapped, not indented), or nothing when
/// it has none.
fn lines(label: &str, t: &TestResult) -> Option<String> {
    let reps: Vec<&RepResult> = t.reps.iter().filter(|r| r.complete).collect();
    let roles: Vec<&crate::model::result::RoleResult> =
        reps.iter().flat_map(|r| r.phases.iter().flat_map(|p| p.roles.iter())).collect();
    if roles.is_empty() {
        return None;
    }
    let op = if reps.iter().any(|r| lat(r, OpKind::Read).is_some()) {
        OpKind::Read
    } else {
        OpKind::Write
    };
    let pick = |f: fn(&OpLatency) -> u64| {
        median(reps.iter().filter_map(|r| lat(r, op)).map(|l| f(l) as f64).collect())
            .map(|v| nanos(v as u64))
            .unwrap_or_else(|| "-".into())
    };
    let mut s = format!(
        "{:<8} {:<24} {} p50 {}  p99 {}  p99.9 {}",
        t.id,
        label,
        op.name(),
        pick(|l| l.p50_nanos),
        pick(|l| l.p99_nanos),
        pick(|l| l.p999_nanos)
    );
    let mut names: Vec<&str> = roles.iter().map(|r| r.name.as_str()).collect();
    names.dedup();
    for name in names {
        let mine: Vec<_> = roles.iter().filter(|r| r.name == name).collect();
        let mib = median(mine.iter().map(|r| r.mib_per_s).collect()).unwrap_or(0.0);
        let sync = median(
            mine.iter()
                .filter_map(|r| {
                    r.latency.iter().find(|l| matches!(l.op, OpKind::Fsync | OpKind::Fdatasync))
                })
                .map(|l| l.p99_nanos as f64)
                .collect(),
        );
        s.push_str(&format!("   [{name}: {mib:.1} MiB/s"));
        if let Some(p) = sync {
            s.push_str(&format!(", fsync p99 {}", nanos(p as u64)));
        }
        s.push(']');
    }
    Some(s)
}

/// The section, lines wrapped to `width`; empty when no test has roles.
pub fn section<'a>(
    configs: impl Iterator<Item = (&'a str, &'a [TestResult])> + Clone,
    width: usize,
) -> String {
    let mut ids: Vec<&str> = Vec::new();
    for (_, tests) in configs.clone() {
        for t in tests {
            if !ids.contains(&t.id.as_str()) {
                ids.push(&t.id);
            }
        }
    }
    let mut out = String::new();
    for id in ids {
        for (label, tests) in configs.clone() {
            if let Some(l) = tests.iter().find(|t| t.id == id).and_then(|t| lines(label, t)) {
                out.push_str(&super::frame::wrap(&l, width, "  ", "      "));
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    let head = "Latency of each test's own threads beside its roles (median over repetitions of \
                each repetition's percentile):";
    format!("\n{}{out}", super::frame::wrap(head, width, "", ""))
}
