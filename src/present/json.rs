//! JSON: the whole report, every repetition and phase. A run's JSON is its one target's part
//! ([`crate::model::result::RunReport`]), as `fsbench run` has always printed it.
//!
//! The JSON is the stored report as readers want it, not byte for byte the stored form:
//! - the raw data is left out unless asked (`--raw`): the latency histograms (`histogram_b64`,
//!   base64 HdrHistograms: 20 MB for one test on 4 configurations) and a traced phase's request
//!   points (`trace.offsets.points`, 300 KB a phase), and each thread's own figures
//!   (`per_thread`, kept for `fsbench fio`'s report per clone); every other field keeps its name;
//! - each test says which repetition its per-repetition figures come from (`median_rep`, an
//!   index into `reps`: [`TestResult::median_rep_index`]), so a reader finds the latency, CPU
//!   and role figures the table, CSV and HTML show;
//! - a win against the baseline names its winner by label (`vs_baseline[].winner`) and index
//!   into `configs` (`winner_index`); the stored verdict keeps the pairwise side (0 baseline,
//!   1 the other) it always had, so old databases read as before.

use super::Exporter;
use crate::model::report::Report;
use crate::model::result::TestResult;
use serde_json::Value;

/// Pretty-printed JSON.
pub struct JsonExporter {
    /// Keep the raw data: latency histograms (`histogram_b64`), traced request points and each
    /// thread's figures (`per_thread`).
    pub raw: bool,
}

impl Exporter for JsonExporter {
    fn export(&self, report: &Report) -> anyhow::Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(&value(report, self.raw)?)?;
        v.push(b'\n');
        Ok(v)
    }
}

/// The report as the JSON output shows it (see the module's doc).
pub fn value(report: &Report, raw: bool) -> anyhow::Result<Value> {
    let mut v = match super::single(report) {
        Some(run) => {
            let mut v = serde_json::to_value(run)?;
            mark_median_reps(&mut v["tests"], &run.tests);
            v
        }
        None => {
            let mut v = serde_json::to_value(report)?;
            for (ci, c) in report.configs.iter().enumerate() {
                mark_median_reps(&mut v["configs"][ci]["run"]["tests"], &c.run.tests);
            }
            name_winners(&mut v, report);
            v
        }
    };
    if !raw {
        drop_key(&mut v, "histogram_b64");
        drop_key(&mut v, "per_thread");
        drop_trace_points(&mut v);
    }
    Ok(v)
}

/// Each test's `median_rep`.
fn mark_median_reps(tests: &mut Value, results: &[TestResult]) {
    for (t, r) in tests.as_array_mut().into_iter().flatten().zip(results) {
        if let (Some(o), Some(i)) = (t.as_object_mut(), r.median_rep_index()) {
            o.insert("median_rep".into(), i.into());
        }
    }
}

/// `vs_baseline[i].winner`: the winning configuration's label; `winner_index`: its index.
fn name_winners(v: &mut Value, report: &Report) {
    use crate::model::verdict::Verdict;
    for (ti, row) in report.tests.iter().enumerate() {
        for (i, verdict) in row.vs_baseline.iter().enumerate() {
            let Some(Verdict::Win { winner, .. }) = verdict else { continue };
            let idx = if *winner == 0 { report.baseline } else { i };
            let Some(label) = report.configs.get(idx).map(|c| c.label.clone()) else { continue };
            if let Some(o) = v["tests"][ti]["vs_baseline"][i].as_object_mut() {
                o.insert("winner".into(), label.into());
                o.insert("winner_index".into(), idx.into());
            }
        }
    }
}

/// Remove `key` from every object in `v`.
/// Every `trace.offsets.points` (a traced phase's requests, one point each), anywhere in `v`.
fn drop_trace_points(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(off)) = o.get_mut("trace").and_then(|t| t.get_mut("offsets"))
            {
                off.remove("points");
            }
            o.values_mut().for_each(drop_trace_points);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_trace_points),
        _ => {}
    }
}

fn drop_key(v: &mut Value, key: &str) {
    match v {
        Value::Object(o) => {
            o.remove(key);
            o.values_mut().for_each(|x| drop_key(x, key));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| drop_key(x, key)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::tests::config;
    use crate::analysis::compare::{build_report, CompareOptions};
    use crate::model::verdict::Verdict;

    fn report() -> Report {
        let configs = vec![
            config("ext4", &[100.0, 101.0, 99.0], 900_000_000),
            config("xfs", &[200.0, 201.0, 199.0], 100_000_000),
        ];
        let opts = CompareOptions {
            engine: Default::default(),
            rule: Default::default(),
            fresh_per_test: false,
        };
        build_report(configs, &opts, 0, false)
    }

    #[test]
    fn a_win_names_its_winner_by_label_and_index() {
        let r = report();
        assert!(matches!(r.tests[0].vs_baseline[1], Some(Verdict::Win { winner: 1, .. })));
        let v = value(&r, false).unwrap();
        let w = &v["tests"][0]["vs_baseline"][1];
        assert_eq!(w["winner"], "xfs", "{w}");
        assert_eq!(w["winner_index"], 1, "{w}");
        assert_eq!(w["outcome"], "win", "{w}");
    }

    #[test]
    fn raw_data_is_left_out_unless_asked_and_each_test_names_its_median_rep() {
        use crate::model::trace::{OffsetPoint, Op, TraceSummary};
        let mut r = report();
        let mut h = crate::stats::latency::new_histogram();
        h.record(1000).unwrap();
        for c in &mut r.configs {
            for rep in &mut c.run.tests[0].reps {
                rep.latency =
                    vec![crate::model::latency::summarize(crate::model::job::OpKind::Read, &h)];
                let mut trace = TraceSummary::default();
                trace.offsets.stride = 1;
                trace.offsets.points = vec![OffsetPoint {
                    t_ms: 5.0,
                    dev: 0,
                    offset_bytes: 77_777_777,
                    bytes: 4096,
                    op: Op::Read,
                }];
                rep.phases[0].trace = Some(trace);
            }
        }
        let lean = value(&r, false).unwrap().to_string();
        let full = value(&r, true).unwrap().to_string();
        assert!(!lean.contains("histogram_b64") && full.contains("histogram_b64"));
        assert!(!lean.contains("77777777") && full.contains("77777777"), "request points");
        assert!(lean.contains("\"stride\":1"), "the rest of the trace stays: {lean}");
        assert!(lean.contains("p50_nanos"), "{lean}");
        assert!(lean.len() < full.len());
        let v = value(&r, false).unwrap();
        let t = &r.configs[1].run.tests[0];
        assert_eq!(
            v["configs"][1]["run"]["tests"][0]["median_rep"].as_u64(),
            t.median_rep_index().map(|i| i as u64)
        );
        // A configuration's results read back without the histograms.
        let back: crate::model::result::RunReport =
            serde_json::from_value(v["configs"][1]["run"].clone()).unwrap();
        assert!(back.tests[0].reps[0].latency[0].histogram_b64.is_empty());
        let trace = back.tests[0].reps[0].phases[0].trace.as_ref().unwrap();
        assert!(trace.offsets.points.is_empty() && trace.offsets.stride == 1);
    }
}
