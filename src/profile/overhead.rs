//! The cost of profiling: cold wall times of the command with and without the recorders,
//! interleaved (ABBA), each after the same verified cache drop, decided with compare's rule.
//! Both sides go through the same [`cold::make_cold`] and the same held start, so the only
//! difference is the tracing instances and the open watcher.

use super::{cold, preload, scope, ProfileError, ProfileOptions};
use crate::decision::decide_samples;
use crate::model::verdict::{Rule, Verdict};
use serde::{Deserialize, Serialize};

/// Wall times with and without profiling.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Overhead {
    /// The command.
    pub command: Vec<String>,
    /// Cold wall times without profiling, seconds.
    pub plain_seconds: Vec<f64>,
    /// Cold wall times of the command while profiled, seconds.
    pub profiled_seconds: Vec<f64>,
    /// fsbench's own time per profiled run (recording set-up, the run, analysis), seconds.
    pub profile_total_seconds: Vec<f64>,
    /// Decision on 1 / wall time; side 0 = plain, side 1 = profiled.
    pub verdict: Verdict,
}

impl Overhead {
    /// Text for a person.
    pub fn render(&self) -> String {
        let med = |v: &[f64]| crate::stats::summary::median(v);
        let (p, q) = (med(&self.plain_seconds), med(&self.profiled_seconds));
        let verdict = match &self.verdict {
            Verdict::Win { winner: 0, factor, .. } => {
                format!("profiling slows the command down {factor:.2}x (significant)")
            }
            Verdict::Win { factor, .. } => {
                format!("the profiled runs were {factor:.2}x faster (significant; noise?)")
            }
            Verdict::Draw { factor, .. } => {
                format!("draw: no significant difference (factor {factor:.2})")
            }
            Verdict::NotCompared { reason } => format!("not compared: {reason}"),
        };
        format!(
            "profiling overhead of `{}` ({} cold runs each, interleaved):\n  without: median \
             {p:.3} s\n  with:    median {q:.3} s (ratio {:.3}); fsbench profile in all: median \
             {:.3} s\n  verdict: {verdict}\n",
            super::summary::short_command(&self.command.join(" ")),
            self.plain_seconds.len(),
            q / p,
            med(&self.profile_total_seconds),
        )
    }
}

/// Measure.
pub fn measure(opts: &ProfileOptions, repeat: usize) -> Result<Overhead, ProfileError> {
    let first =
        opts.argv.first().ok_or_else(|| ProfileError::BadInput("no command given".into()))?;
    super::spawn::resolve(first)?;
    let watched = scope::resolve(&opts.mounts)?;
    if !crate::sys::is_root() {
        return Err(ProfileError::Unavailable("measuring the overhead needs root".into()));
    }
    let mut o = Overhead {
        command: opts.argv.clone(),
        plain_seconds: Vec::new(),
        profiled_seconds: Vec::new(),
        profile_total_seconds: Vec::new(),
        verdict: Verdict::NotCompared { reason: "not run".into() },
    };
    let cold_opts = ProfileOptions { cold: true, ..opts.clone() };
    'outer: for i in 0..repeat {
        let order = if i % 2 == 0 { [false, true] } else { [true, false] };
        for traced in order {
            if crate::sys::signals::interrupted() {
                break 'outer;
            }
            if traced {
                let t = std::time::Instant::now();
                let p = super::profile_once(&cold_opts, &watched)?;
                o.profile_total_seconds.push(t.elapsed().as_secs_f64());
                o.profiled_seconds.push(p.summary.wall_seconds);
            } else {
                cold::make_cold(&watched)?;
                o.plain_seconds.push(preload::timed_run(&opts.argv)?);
            }
        }
    }
    let n = o.plain_seconds.len().min(o.profiled_seconds.len());
    let inv = |v: &[f64]| v[..n].iter().map(|t| 1.0 / t).collect::<Vec<f64>>();
    o.verdict = decide_samples(&inv(&o.plain_seconds), &inv(&o.profiled_seconds), &Rule::default());
    Ok(o)
}
