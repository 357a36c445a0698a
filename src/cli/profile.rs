//! `fsbench profile -- CMD` and `fsbench preload FILE`.

use super::{ExitCode, UserError};
use crate::observe::trace::TraceOptions;
use crate::profile::{self, preload, ProfileOptions};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `fsbench profile`.
#[derive(Debug, Args)]
#[command(after_help = PROFILE_EXAMPLES)]
pub struct ProfileArgs {
    /// Write back and evict the page cache before each run (checked with mincore), so the
    /// command starts cold. Without it the start is as warm as the cache happens to be.
    #[arg(long)]
    pub cold: bool,
    /// Run the command this many times; the first run is profiled, all are timed. Default 1;
    /// with --compare-preload or --measure-overhead, the cold starts each way (default 10).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: Option<u32>,
    /// Stop the command (SIGTERM to its process group) after this many seconds.
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Watch the filesystem holding DIR (repeatable). Default: every mounted filesystem on a
    /// block device.
    #[arg(long = "mount", value_name = "DIR")]
    pub mounts: Vec<PathBuf>,
    /// Write the whole profile as JSON (every file, every request and its attribution) to
    /// FILE, `-` for stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write an HTML page: the summary, device offset against time coloured by kind of file
    /// (seekwatcher's plot), throughput and IOPS over time, and the per-file table.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the files and page ranges the run brought into the cache, in first-touch order,
    /// as a preload list (`path<TAB>offset<TAB>length` lines) for `fsbench preload`.
    #[arg(long, value_name = "FILE")]
    pub preload_list: Option<PathBuf>,
    /// Measure cold starts with and without preloading FILE (a preload list), interleaved,
    /// --repeat times each (default 10), and decide with compare's rule. Implies --cold.
    #[arg(long, value_name = "FILE")]
    pub compare_preload: Option<PathBuf>,
    /// Measure what profiling costs: cold runs with and without the recorders, interleaved,
    /// --repeat times each (default 10), decided with compare's rule.
    #[arg(long, conflicts_with = "compare_preload")]
    pub measure_overhead: bool,
    /// Results database and --no-store: the profile is recorded as a run of kind `profile`
    /// (`fsbench history`, `show ID`, `report ID`).
    #[command(flatten)]
    pub record: super::record::RecordArgs,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

const PROFILE_EXAMPLES: &str = "\
The summary goes to stderr (the command keeps stdout); its exit code is reported and fsbench
exits 1 when it is not 0. Needs root (tracefs, fanotify).

Examples:
  fsbench profile --cold --mount /mnt/app -- /mnt/app/bin/start
  fsbench profile --cold --mount /mnt/app --json prof.json --preload-list app.list -- app
  fsbench preload app.list
  fsbench profile --compare-preload app.list --repeat 10 --mount /mnt/app -- app";

/// Arguments of `fsbench preload`.
#[derive(Debug, Args)]
pub struct PreloadArgs {
    /// A preload list written by `fsbench profile --preload-list`.
    #[arg(value_name = "FILE")]
    pub list: PathBuf,
}

/// `fsbench profile`.
pub fn run(a: ProfileArgs) -> anyhow::Result<ExitCode> {
    let duration = match a.duration {
        Some(s) if s.is_finite() && s > 0.0 && s <= 365.0 * 86_400.0 => Some(
            Duration::try_from_secs_f64(s)
                .map_err(|e| UserError(format!("--duration {s}: {e}")))?,
        ),
        Some(s) if s.is_finite() && s > 0.0 => {
            return Err(UserError(format!(
                "--duration {s}: more than a year; give a number of seconds up to 31536000"
            ))
            .into())
        }
        Some(s) => {
            return Err(
                UserError(format!("--duration {s}: give a positive number of seconds")).into()
            )
        }
        None => None,
    };
    let opts = ProfileOptions {
        argv: a.command.clone(),
        mounts: a.mounts.clone(),
        cold: a.cold || a.compare_preload.is_some(),
        repeat: a.repeat.unwrap_or(1) as usize,
        duration,
        trace: TraceOptions { buffer_kib_per_cpu: 32 * 1024, ..TraceOptions::default() },
    };
    if a.measure_overhead {
        let repeat = a.repeat.unwrap_or(10) as usize;
        let o = profile::overhead::measure(&opts, repeat)?;
        eprint!("{}", fit(&o.render()));
        if let Some(j) = &a.json {
            write_json(j, &o)?;
        }
        return Ok(ExitCode::Success);
    }
    if let Some(list) = &a.compare_preload {
        let repeat = a.repeat.unwrap_or(10) as usize;
        let c = preload::compare(&opts, list, repeat)?;
        eprint!("{}", fit(&c.render()));
        if let Some(j) = &a.json {
            write_json(j, &c)?;
        }
        return Ok(if crate::sys::signals::interrupted() {
            ExitCode::Interrupted
        } else {
            ExitCode::Success
        });
    }
    // The command, the scope and root are checked first (a missing command is bad input,
    // nothing traced; without root, the reason); then the database is opened before anything
    // runs, so one that cannot be used stops the command before any I/O (as `run` does).
    profile::preflight(&opts)?;
    let mut store = a.record.open()?;
    let started = super::record::now_unix_s();
    let p = profile::run(&opts)?;
    eprint!("{}", fit(&p.render()));
    let mut stored = true;
    if let Some(s) = store.as_mut() {
        match s.record_profile(&p, started) {
            Ok(id) => eprintln!(
                "fsbench: recorded as run {id} in {} (fsbench show {id}, fsbench report {id})",
                s.path().display()
            ),
            Err(e) => {
                eprintln!("fsbench: the profile could not be stored: {e}");
                stored = false;
            }
        }
    }
    if let Some(j) = &a.json {
        write_json(j, &p)?;
    }
    if let Some(h) = &a.html {
        let page = crate::present::html::profile::render(&p).context("drawing the charts")?;
        crate::sys::outfile::replace(h, page.as_bytes())
            .with_context(|| format!("writing {}", h.display()))?;
        eprintln!("fsbench: HTML written to {}", h.display());
    }
    if let Some(l) = &a.preload_list {
        let n = preload::write_list(&p, l).with_context(|| format!("writing {}", l.display()))?;
        eprintln!("fsbench: preload list of {n} ranges written to {}", l.display());
    }
    Ok(if p.exit.stopped_by == Some(profile::spawn::StopReason::Interrupted) {
        ExitCode::Interrupted
    } else if p.exit.code != 0 && p.exit.stopped_by.is_none() {
        eprintln!("fsbench: the command exited with code {}", p.exit.code);
        ExitCode::TestFailed
    } else if !stored {
        ExitCode::TestFailed
    } else {
        ExitCode::Success
    })
}

/// Text for the terminal, its long lines wrapped to its width.
fn fit(text: &str) -> String {
    crate::present::frame::fit(text, crate::present::frame::terminal_width())
}

fn write_json<T: serde::Serialize>(path: &std::path::Path, v: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(v)?;
    if path.as_os_str() == "-" {
        super::out(&format!("{text}\n"))?;
    } else {
        crate::sys::outfile::replace(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// `fsbench preload`.
pub fn preload(a: PreloadArgs) -> anyhow::Result<ExitCode> {
    let list = preload::read_list(&a.list)?;
    let r = preload::preload(&list);
    eprint!("{}", fit(&r.render()));
    Ok(ExitCode::Success)
}
