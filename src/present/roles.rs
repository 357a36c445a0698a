//! The section on tests with roles (`[[test.role]]`, e.g. the `starve` suite): the latency of
//! the test's own threads, which is what such a test asks about, beside what each role did.
//!
//! Every figure is the median repetition's ([`TestResult::main_latency`],
//! [`TestResult::roles`]), as in the table above it, the CSV, the JSON (`median_rep`) and the
//! HTML report: one number for one thing in every output.

use crate::model::result::{OpLatency, RoleResult, TestResult};
use crate::model::units::{nanos, sig3};

/// `write p50 1.2 ms  p99 3 ms  p99.9 9 ms`: an op's percentiles as the section shows them.
fn percentiles(l: &OpLatency) -> String {
    format!(
        "{} p50 {}  p99 {}  p99.9 {}",
        l.op.name(),
        nanos(l.p50_nanos),
        nanos(l.p99_nanos),
        nanos(l.p999_nanos)
    )
}

/// `[writer: 12.3 MiB/s, write p50 ...  p99.9 ..., fsync p99 40 ms]`: one role's figures.
pub fn role_words(name: &str, r: &RoleResult) -> String {
    let mut s = format!("[{name}: {} MiB/s", sig3(r.mib_per_s));
    if let Some(l) = r.main_op() {
        s.push_str(&format!(", {}", percentiles(l)));
    }
    if let Some(l) = r.sync_latency() {
        s.push_str(&format!(", {} p99 {}", l.op.name(), nanos(l.p99_nanos)));
    }
    s.push(']');
    s
}

/// A role's name as the outputs show it: with its phase's when the test has several timed
/// phases with roles (`read/writer`).
pub fn role_name(t: &TestResult, phase: &str, role: &RoleResult) -> String {
    let roles = t.roles();
    let phases = roles.iter().map(|(p, _)| *p).collect::<std::collections::BTreeSet<_>>();
    if phases.len() > 1 {
        format!("{phase}/{}", role.name)
    } else {
        role.name.clone()
    }
}

/// One line per configuration of a test with roles (unwrapped, not indented), or nothing when
/// it has none.
fn lines(label: &str, t: &TestResult) -> Option<String> {
    let roles = t.roles();
    if roles.is_empty() {
        return None;
    }
    let own = t.main_latency().map(percentiles).unwrap_or_else(|| "no latency".into());
    let mut s = format!("{:<8} {:<24} {own}", t.id, label);
    for (phase, role) in roles {
        s.push_str("   ");
        s.push_str(&role_words(&role_name(t, phase, role), role));
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
    let head = "Latency of each test's own threads beside its roles (the median repetition's \
                percentiles, as in every output):";
    format!("\n{}{out}", super::frame::wrap(head, width, "", ""))
}
