//! Options that choose and shape the workload, shared by `run` and `compare`, and the one place
//! that turns them into a validated suite.

use crate::model::job::Suite;
use crate::model::scale::Scale;
use crate::sys::meminfo::MemInfo;
use crate::workload::{self, ResolveCtx, SuiteSource};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Which tests, at which size.
#[derive(Debug, Clone, Args)]
pub struct SuiteArgs {
    /// Embedded suite (see `fsbench suite list`).
    #[arg(long, default_value = "unit14", conflicts_with = "workload")]
    pub suite: String,

    /// A workload file (TOML) instead of an embedded suite. `fsbench suite show unit14` prints
    /// one to start from.
    #[arg(long, value_name = "FILE.toml", conflicts_with = "fio")]
    pub workload: Option<PathBuf>,

    /// A fio job file instead of a suite: each job becomes a test (jobs must be separated by
    /// `stonewall`, as fsbench runs tests one after another). Options fsbench runs differently in
    /// a detail (sync as psync, ...) get a note; those it cannot run are refused with their
    /// line; `--print-workload` shows the translation and its notes. See docs/reference/fio.md.
    #[arg(long, value_name = "JOB.fio", conflicts_with = "suite")]
    pub fio: Option<PathBuf>,

    /// With --fio: refuse a job whose meaning in fsbench differs from fio's (each such
    /// difference is otherwise a note; see docs/reference/fio.md).
    #[arg(long, requires = "fio")]
    pub fio_strict: bool,

    /// Print the suite as workload TOML (for --fio: the translation, with its notes) and exit
    /// without running anything.
    #[arg(long)]
    pub print_workload: bool,

    /// Only these test ids, comma-separated (e.g. 4,5,13).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub test: Vec<String>,

    /// Size scale: `paper` (the sizes as written), `quick` (1/4, never below 4 MiB), or a factor
    /// such as 0.25 or 1/8. Op sizes, flags and thread counts never scale.
    #[arg(long, default_value = "paper", value_parser = |s: &str| s.parse::<Scale>())]
    pub scale: Scale,

    /// Allow phases that may run for days: more than 86400 seconds, 1 TiB or 10^10 operations
    /// per thread. Without it such amounts are refused as a likely typo.
    #[arg(long)]
    pub allow_long: bool,

    /// Run tests whose files do not fit in the directory's free space (by default refused
    /// before any I/O), e.g. to see how a filesystem behaves when it runs full.
    #[arg(long)]
    pub no_space_check: bool,

    #[command(flatten)]
    pub curve: CurveArgs,
}

/// `--curve` and its steps: latency against load.
#[derive(Debug, Clone, Args)]
pub struct CurveArgs {
    /// Latency against load: after each time-based timed data phase (its closed-loop pass,
    /// whose rate is the maximum) run the phase again at fixed rates of 10%, 20%, ... 100% of
    /// that maximum, each for --curve-step-time, with latency timed from each op's scheduled
    /// start; each step reports the rate asked and achieved, the shortfall and p50/p99/p99.9,
    /// and the curve its knee (the highest achieved rate before the first step whose p99
    /// exceeds --curve-knee × the lowest step's p99). Adds steps × step time to every such
    /// phase of every repetition: 10 × 2 s = 20 s by default (10 × 1 s with --scale quick).
    /// Every selected test needs a timed phase bound by time (amount = { seconds = N })
    /// without a fixed rate; see examples/curve.toml. Workload key: curve_steps.
    #[arg(long)]
    pub curve: bool,

    /// With --curve: the steps, a count (`5`: 20%, 40%, ... 100%) or percentages of the
    /// closed-loop maximum (`10,50,90,100`); at least 2, each in (0, 100]. Default 10.
    #[arg(long, value_name = "N|P,P,..", requires = "curve")]
    pub curve_steps: Option<String>,

    /// With --curve: how long each step runs (`500ms`, `2s`; at least 100ms). Default 2s, 1s
    /// with --scale quick.
    #[arg(long, value_name = "DURATION", requires = "curve")]
    pub curve_step_time: Option<String>,

    /// With --curve: the knee's p99 limit as a multiple of the unloaded p99 (the lowest
    /// step's). Default 3.
    #[arg(long, value_name = "MULTIPLE", requires = "curve")]
    pub curve_knee: Option<f64>,
}

impl CurveArgs {
    /// `--curve` on every phase of `suite` that can have one (flags override the workload's
    /// `curve_steps`); bad steps, or a selected test that cannot have a curve: bad input with
    /// the fix.
    pub fn apply(&self, suite: &mut Suite, scale: Scale) -> anyhow::Result<()> {
        if !self.curve {
            return Ok(());
        }
        let bad = |m: String| anyhow::Error::from(super::UserError(m));
        let steps = match self.curve_steps.as_deref().map(str::trim) {
            None => None,
            Some(s) if !s.contains(',') && !s.contains('.') => match s.parse::<u32>() {
                Ok(n) => Some(workload::spec::CurveSteps::Count(n)),
                Err(_) => return Err(bad(format!("--curve-steps `{s}`: give a count such as 10, or percentages such as 25,50,75,100"))),
            },
            Some(s) => {
                let list: Result<Vec<f64>, _> =
                    s.split(',').map(|p| p.trim().trim_end_matches('%').parse::<f64>()).collect();
                match list {
                    Ok(l) => Some(workload::spec::CurveSteps::List(l)),
                    Err(_) => return Err(bad(format!("--curve-steps `{s}`: give a count such as 10, or percentages such as 25,50,75,100"))),
                }
            }
        };
        let step = self
            .curve_step_time
            .as_deref()
            .map(|s| workload::load::step_time(s, "--curve-step-time"))
            .transpose()
            .map_err(bad)?;
        let what = ("--curve-steps", "--curve-knee");
        let plan = workload::load::curve_plan(steps.as_ref(), step, self.curve_knee, scale, what)
            .map_err(bad)?;
        workload::load::apply_curve(suite, &plan).map_err(bad)
    }
}

impl SuiteArgs {
    /// Load, resolve (sizes, `freemem`) and validate the suite, and keep the selected tests.
    /// No I/O on the target happens before this succeeds.
    pub fn load(&self) -> anyhow::Result<Suite> {
        let mem = MemInfo::read().context("reading /proc/meminfo")?;
        let ctx = ResolveCtx { scale: self.scale, free_memory: mem.free_memory() };
        if let Some(t) = self.fio_translation()? {
            if self.fio_strict {
                t.check_strict()?;
            }
            // fio's log files are `fsbench fio`'s output; a run here would not write them.
            if let Some(l) = t.logs.first() {
                let option = l.files.first().map_or("write_bw_log", |(k, _)| k.option());
                return Err(crate::fio::FioError::Value {
                    file: l.file.clone(),
                    line: l.line,
                    option: option.into(),
                    message: "fio's log files are written by `fsbench fio JOBFILE`, not by `run --fio`: run the job file with `fsbench fio`, or remove the option (the run's series is in its JSON with --interval)".into(),
                }
                .into());
            }
            for n in &t.notes {
                eprintln!("fsbench: note: {}: {n}", t.file);
            }
            let mut suite = crate::fio::load(&t, &ctx)?.select(&self.test)?;
            self.curve.apply(&mut suite, self.scale)?;
            // A job file is a source of work like any other: runtime=2d needs --allow-long.
            workload::limits::check_suite_bounded(&suite, self.allow_long)?;
            return Ok(suite);
        }
        let source = match &self.workload {
            Some(p) => SuiteSource::File(p.clone()),
            None => SuiteSource::Embedded(self.suite.clone()),
        };
        let mut suite = workload::load(&source, &ctx)?.select(&self.test)?;
        self.curve.apply(&mut suite, self.scale)?;
        workload::limits::check_suite_bounded(&suite, self.allow_long)?;
        Ok(suite)
    }
}

impl SuiteArgs {
    /// The translation of `--fio`, if given.
    pub fn fio_translation(&self) -> anyhow::Result<Option<crate::fio::Translation>> {
        Ok(match &self.fio {
            Some(p) => Some(crate::fio::translate_file(p)?),
            None => None,
        })
    }

    /// `--print-workload`: the suite's TOML (a fio job file's translation), printed to stdout.
    /// Returns whether it printed (and the command should stop).
    pub fn print_workload(&self) -> anyhow::Result<bool> {
        if !self.print_workload {
            return Ok(false);
        }
        let text = match (self.fio_translation()?, &self.workload) {
            (Some(t), _) => t.to_toml(),
            (None, Some(p)) => workload::limits::read_regular(p).map_err(|source| {
                workload::WorkloadError::Read { path: p.display().to_string(), source }
            })?,
            (None, None) => workload::suites::get(&self.suite)
                .ok_or_else(|| workload::WorkloadError::UnknownSuite {
                    name: self.suite.clone(),
                    known: workload::suites::names().join(", "),
                })?
                .toml
                .to_string(),
        };
        // Check it loads, so what is printed is what would run.
        self.load()?;
        super::out(&text)?;
        Ok(true)
    }
}

/// What is written, and which random operations are drawn.
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// Percentage (0-100) of each written 4 KiB block that is zeros. The default 0 writes
    /// incompressible data, so compressing filesystems are not flattered.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub compress_percent: u8,

    /// Seed for random offsets and sizes (same seed, same operations).
    #[arg(long, default_value_t = 0x00f5_be4c)]
    pub seed: u64,

    /// Trace the block layer of the filesystem's devices during timed phases (tracefs instance
    /// of fsbench's own; needs root): bios queued and merged, requests issued and completed,
    /// request sizes, queue depth, device latency, seek distance, offset over time. Costs a few
    /// percent at high IOPS (docs/design/tracing.md).
    #[arg(long)]
    pub trace: bool,

    /// Name what the test's threads waited for while off CPU during timed phases, from the
    /// scheduler's account (sched_switch and the kernel stack of each sleep, in a tracefs
    /// instance of fsbench's own; needs root): "throttled in balance_dirty_pages 58%, waiting
    /// on the journal 20%, ...". Costs a stack walk per sleep (docs/design/tracing.md).
    #[arg(long)]
    pub offcpu: bool,

    /// Write verified data (every 4 KiB carries its file, offset, seed and a CRC-32; the
    /// bytes are a function of the seed and offset, and stay incompressible) and check what is
    /// read back: a mismatch fails the test with the file, offset, expected and found block.
    /// Data tests: after each repetition, their files are read back and every block checked,
    /// outside the timing (its time is printed). Fileset tests: every whole-file read checks
    /// its bytes as it reads, inside the timed phase (`verify_nanos` in the JSON). Generating
    /// the data is inside the timed writes.
    #[arg(long)]
    pub verify: bool,

    /// Shortest timed phase: a data test's timed phase that ends sooner is run again on the
    /// same files (its pattern, not the set-up; cache precondition made again, untimed) until
    /// its passes last this long together; a file-set test is run again whole. Figures are
    /// totals over the passes (the JSON's `passes`). 0 runs every phase once (fsbench 0.1).
    /// The test suite sets FSBENCH_MIN_TIME=0 to keep its runs short.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "0.5s",
        env = "FSBENCH_MIN_TIME",
        value_parser = parse_min_time
    )]
    pub min_time: std::time::Duration,

    /// Lay out every repetition's files afresh. By default a data test that only reads its
    /// prefilled files, uncached (unit14's tests 5 and 13), lays them out once per configuration
    /// and its later repetitions reuse them while they stay intact and the filesystem keeps
    /// room for the largest test beside them; each phase's cache precondition is still made
    /// and verified (mincore) every time.
    #[arg(long)]
    pub fresh_layout: bool,
    /// Interval of each timed phase's series (throughput, ops and latency over time; in the
    /// JSON's `series`, the HTML report and `--details`): `20ms`, `1s`. At least 10 ms. By
    /// default it adapts: 10 ms, doubled until the phase fits in 100 to 200 points.
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Option<std::time::Duration>,
}

/// `--interval`: a duration of at least 10 ms.
fn parse_interval(s: &str) -> Result<std::time::Duration, String> {
    let d = parse_min_time(s)
        .map_err(|_| format!("`{s}` is not a duration: write e.g. 20ms or 1s (at least 10ms)"))?;
    if d.as_nanos() < crate::model::series::MIN_INTERVAL_NANOS as u128 {
        return Err(format!(
            "{s} is shorter than 10ms: an interval series samples at most every 10 ms (shorter intervals cost more than they show); write --interval 10ms or longer, or leave it out to adapt"
        ));
    }
    Ok(d)
}

/// `0.5s`, `500ms`, `2` (seconds), `0`.
fn parse_min_time(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * scale <= 3600.0 => {
            Ok(std::time::Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!(
            "`{s}` is not a duration from 0 to 1 hour: write e.g. 0.5s, 500ms or 0 (every phase once)"
        )),
    }
}

impl DataArgs {
    /// Engine options with `repeat` repetitions per test.
    pub fn engine(&self, repeat: u32) -> crate::engine::EngineOptions {
        crate::engine::EngineOptions {
            repeat,
            compress_percent: self.compress_percent,
            seed: self.seed,
            trace: self.trace,
            offcpu: self.offcpu,
            verify: self.verify,
            stonewall: None,
            share: None,
            min_time: self.min_time,
            reuse_layout: !self.fresh_layout,
            passes: None,
            interval: self.interval,
        }
    }
}

/// `--repeat N` or `--repeat auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Exactly this many repetitions of every test.
    Count(u32),
    /// At least 5, more until each test's figure is known well enough ([`AutoArgs`]).
    Auto,
}

impl std::str::FromStr for Repeat {
    type Err = String;
    fn from_str(s: &str) -> Result<Repeat, String> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(Repeat::Auto);
        }
        match s.parse::<u32>() {
            Ok(n) if (1..=1000).contains(&n) => Ok(Repeat::Count(n)),
            _ => Err(format!("`{s}`: give a count from 1 to 1000, or `auto`")),
        }
    }
}

impl std::fmt::Display for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Repeat::Count(n) => write!(f, "{n}"),
            Repeat::Auto => f.write_str("auto"),
        }
    }
}

/// The options of `--repeat auto`.
#[derive(Debug, Args)]
pub struct AutoArgs {
    /// With --repeat auto: stop adding repetitions to a test once the 95% confidence interval
    /// of its figure is within ± this many percent on every configuration. compare also stops
    /// once the test's verdict is settled (a win beyond --min-effect at a strict one-sided
    /// level, 1% split over every test and round; or a draw within it at 95%, an equivalence
    /// test); the time goes to the undecided tests.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = parse_target_ci)]
    pub target_ci: f64,

    /// With --repeat auto: the most repetitions of a test (at least 5, the least it starts with).
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(5..=1000))]
    pub max_repeat: u32,

    /// With --repeat auto: start no repetition beyond the first 5 once the run has lasted this
    /// long (e.g. 5min, 300s; 0: no budget). The first 5 always run; rounds beyond them run only
    /// when at least 80% of the time the first 5 took is left (a little time left decides some
    /// tests in one run and not in an identical other). Rounds go to the tests expected to settle
    /// soonest per second, and a test that cannot settle in what is left is given up, so a
    /// default compare ends well before the 10 minutes: see
    /// bench/results/2026-11-27-compare-flips-10.md.
    #[arg(long, value_name = "DURATION", default_value = "10min", value_parser = parse_budget)]
    pub time_budget: std::time::Duration,
}

impl AutoArgs {
    /// The driver's plan for `repeat` (None for a fixed count), checked.
    pub fn plan(
        &self,
        repeat: Repeat,
    ) -> Result<Option<crate::decision::AutoRepeat>, super::UserError> {
        if !(self.target_ci > 0.0 && self.target_ci.is_finite()) {
            return Err(super::UserError(format!(
                "--target-ci {} must be a percentage above 0",
                self.target_ci
            )));
        }
        Ok(match repeat {
            Repeat::Count(_) => None,
            Repeat::Auto => Some(crate::decision::AutoRepeat {
                max: self.max_repeat,
                target_ci: self.target_ci / 100.0,
                budget: (!self.time_budget.is_zero()).then_some(self.time_budget),
                ..Default::default()
            }),
        })
    }
}

impl Repeat {
    /// Repetitions known before the run: the count, or auto's minimum.
    pub fn least(self) -> u32 {
        match self {
            Repeat::Count(n) => n,
            Repeat::Auto => crate::decision::AutoRepeat::default().min,
        }
    }
}

/// `90s`, `10min`, `1h`, `300` (seconds), `0` (none).
fn parse_target_ci(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a percentage above 0: write e.g. 5 (±5%) or 2.5")),
    }
}

/// The longest `--time-budget` taken: a year (beyond it, arithmetic on instants may overflow).
const MAX_BUDGET: std::time::Duration = std::time::Duration::from_secs(365 * 86_400);

fn parse_budget(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let units = [("ms", 1e-3), ("min", 60.0), ("m", 60.0), ("h", 3600.0), ("s", 1.0)];
    let (num, scale) =
        units.iter().find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k))).unwrap_or((t, 1.0));
    // try_from: a value past what a Duration holds (1e30s) is bad input, not a panic.
    let v = num.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    match v.map(|v| std::time::Duration::try_from_secs_f64(v * scale)) {
        Some(Ok(d)) if d <= MAX_BUDGET => Ok(d),
        Some(_) => Err(format!(
            "`{s}` is longer than a year, the most fsbench takes: write e.g. 300s, 10min, 1h or 0 (none)"
        )),
        None => Err(format!("`{s}` is not a duration: write e.g. 300s, 10min, 1h or 0 (none)")),
    }
}
