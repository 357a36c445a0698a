//! `fsbench fio ARGS...`: fio's own command line, so `fsbench` can be put in front of a `fio`
//! command. The arguments are read as fio reads them ([`crate::fio::cmdline`]), translated by
//! the one translator `run --fio` uses, run in the job's `directory=` (fio's default: the
//! current directory) like `fsbench run --dir`, stored like any run (unless `--no-store`,
//! which fio does not have and fsbench reads among fio's arguments), and reported in fio's
//! shapes ([`crate::present::fio`]).

use super::ExitCode;
use crate::fio::cmdline::{self, OutputFormat};
use crate::present::fio::{FioContext, FioExporter};
use crate::present::Exporter;
use anyhow::Context;
use clap::{Args, FromArgMatches};

/// Arguments of `fsbench fio`: fio's, as fio takes them.
#[derive(Debug, Args)]
#[command(disable_version_flag = true)]
pub struct FioArgs {
    /// fio's arguments: job files and `--name=JOB --rw=... --size=...` (options before the
    /// first --name are global), `--directory`, `--filename` (a plain name, or a path: the job's own file), `--output`,
    /// `--output-format=normal|json|json+`, `--section`, `--parse-only`, `--eta=never`,
    /// `--version`. fsbench's own: `--no-store` (do not record the run), `--fio-strict`
    /// (refuse jobs whose meaning differs from fio's in a detail, instead of noting it).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        num_args = 0..,
        value_name = "FIO ARGS"
    )]
    pub args: Vec<String>,
}

/// fsbench's own words among fio's arguments.
#[derive(Debug, Default)]
struct Own {
    no_store: bool,
    strict: bool,
}

pub fn run(a: FioArgs) -> anyhow::Result<ExitCode> {
    let mut own = Own::default();
    let fio_args: Vec<String> = a
        .args
        .into_iter()
        .filter(|x| match x.as_str() {
            "--no-store" => {
                own.no_store = true;
                false
            }
            "--fio-strict" => {
                own.strict = true;
                false
            }
            _ => true,
        })
        .collect();
    let cmd = cmdline::parse(&fio_args)?;
    if cmd.version {
        super::out(&format!("fio-3.33 (fsbench {}, fio-compatible)\n", env!("CARGO_PKG_VERSION")))?;
        return Ok(ExitCode::Success);
    }
    if !cmd.has_jobs() {
        return Err(super::UserError(
            "no jobs: give a job file or --name=JOB with its options (as for fio)".into(),
        )
        .into());
    }
    // Stage 1: everything is validated before any I/O.
    let t = crate::fio::translate_command(&cmd)?;
    if own.strict {
        t.check_strict()?;
    }
    let dir = match &t.directory {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    if !dir.is_dir() {
        return Err(super::UserError(format!(
            "directory={}: no such directory (fio would not create it either)",
            dir.display()
        ))
        .into());
    }
    // fio would use a file of a plain name it finds in the directory; fsbench makes its own.
    for name in &t.plain_files {
        let p = dir.join(name);
        if p.symlink_metadata().is_ok() {
            eprintln!(
                "fsbench: note: {}: filename={name}: {} exists; fio would run on it as it is (its data and layout) and keep it, fsbench runs on a file of its own in the directory, laid out for the run and removed after it, and leaves {} as it is. To run on that file, name it by its path: filename={}",
                t.file,
                p.display(),
                p.display(),
                p.display()
            );
        }
    }
    // The same arguments `fsbench run --dir DIR` has, at their defaults.
    // --min-time 0: fio moves the size once, however short that is.
    let mut argv = vec![
        "run".to_string(),
        "--dir".into(),
        dir.display().to_string(),
        "--min-time".into(),
        "0".into(),
    ];
    if own.no_store {
        argv.push("--no-store".into());
    }
    // fio's averaged logs are the timed phases' series at log_avg_msec (one for the run: the
    // translation checks that every job with a log gives the same); without a log, the series
    // is at bw_avg_time, the window of fio's bandwidth and IOPS samples (whole log windows
    // make one sample with a log: the translation checks it divides).
    argv.push("--interval".into());
    // (A per-I/O log, without log_avg_msec, is the phase's per-op records, not its series.)
    match t.logs.iter().find_map(|l| l.avg_msec) {
        Some(avg) => argv.push(format!("{avg}ms")),
        None => argv.push(format!("{}ms", t.sample_window_ms)),
    }
    let m = super::run::RunArgs::augment_args(clap::Command::new("run"))
        .try_get_matches_from(&argv)
        .context("building the run's options")?;
    let run_args = super::run::RunArgs::from_arg_matches(&m)?;
    let mem = crate::sys::meminfo::MemInfo::read().context("reading /proc/meminfo")?;
    let ctx = crate::workload::ResolveCtx {
        scale: crate::model::scale::Scale::Paper,
        free_memory: mem.free_memory(),
    };
    let suite = crate::fio::load(&t, &ctx)?;
    crate::workload::limits::check_suite_bounded(&suite, false)?;
    for n in &t.notes {
        eprintln!("fsbench: note: {}: {n}", t.file);
    }
    if cmd.parse_only {
        return Ok(ExitCode::Success);
    }
    let Some((report, status, mut recording)) = super::run::execute(&run_args, &suite, None)?
    else {
        return Ok(ExitCode::Interrupted);
    };

    // Stage 3: output, in fio's shapes.
    let context = FioContext {
        run_id: recording.run_id(),
        global_options: t.global_options.clone(),
        differences: t.differences(),
        jobs: t.jobs.clone(),
        unrun: t.unrun.clone(),
        sample_window_ms: t.sample_window_ms,
    };
    let json = matches!(cmd.format, OutputFormat::Json | OutputFormat::JsonPlus);
    let bytes = FioExporter { json, context }.export(&report)?;
    let written = match &cmd.output {
        Some(p) => std::fs::write(p, &bytes).with_context(|| format!("writing {}", p.display())),
        None => super::out_bytes(&bytes).context("writing to stdout"),
    };
    if status != crate::model::run::RunStatus::Interrupted {
        recording.outcome()?;
    }
    written?;
    // A run that failed or was stopped may have no series to log: said, and its exit status kept.
    match write_logs(&t.logs, &report) {
        Err(e) if status != crate::model::run::RunStatus::Ok => {
            eprintln!("fsbench: warning: {e:#}");
        }
        r => r?,
    }
    Ok(ExitCode::of(status))
}

/// fio's log files of `logs` (`write_bw_log`, `write_iops_log`, `write_lat_log`, averaged or
/// per I/O), in the current directory as fio writes them (not `directory=`), each replacing a
/// file of its name as fio's.
fn write_logs(
    logs: &[crate::fio::JobLogs],
    report: &crate::model::report::Report,
) -> anyhow::Result<()> {
    if logs.is_empty() {
        return Ok(());
    }
    let tests = report.configs.first().map(|c| c.run.tests.as_slice()).unwrap_or(&[]);
    // A per-I/O log's lines go to its file as they are made: never one text of them all.
    for (name, text) in crate::present::fio_log::log_outputs(logs, tests)? {
        let write = || -> std::io::Result<()> {
            let mut w = std::io::BufWriter::new(std::fs::File::create(&name)?);
            text.write_to(&mut w)?;
            std::io::Write::flush(&mut w)
        };
        write().with_context(|| format!("writing fio log file {name}"))?;
    }
    Ok(())
}
