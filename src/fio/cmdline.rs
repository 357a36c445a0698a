//! fio's own command line (`fio --name=a --rw=read job.fio ...`), read into the same sections
//! a job file gives, so `fsbench fio ARGS` and `fsbench run --fio FILE` share one translator.
//!
//! fio's rules: a job option before the first `--name` is global; each `--name=X` starts a
//! job and the options after it are that job's; an argument without `--` is a job file. The
//! command-line globals come first, as a `[global]` section the job files' own sections
//! follow (a job file's `[global]` or job options therefore win over the command line's). fio's
//! own options (`--output`, `--output-format`, `--section`, ...) are read here and kept apart.
//! An entry's "line" is its argument's position (1 for the first argument), so errors read
//! `command line:3: ...`.

use super::ini::{self, Entry, Inputs, Parsed, Section};
use super::FioError;
use std::path::PathBuf;

/// How errors name the command line as a file.
pub const COMMAND_LINE: &str = "command line";

/// fio's `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// fio's text (and fsbench's facts after it).
    #[default]
    Normal,
    /// fio's JSON (with fsbench's facts under `fsbench`).
    Json,
    /// `json+`: fio's JSON with the latency bins; fsbench writes the JSON with its percentiles
    /// (said in `fsbench.differences`).
    JsonPlus,
}

/// Job options as given: name, value (None for a bare `--flag`), argument position.
pub type Opts = Vec<(String, Option<String>, usize)>;

/// A fio command line, read.
#[derive(Debug, Clone, Default)]
pub struct FioCommand {
    /// Job options before the first `--name`, with their argument positions.
    pub globals: Opts,
    /// Jobs started by `--name=X`: the name, its line, and its options.
    pub jobs: Vec<(String, usize, Opts)>,
    /// Job files, in order.
    pub files: Vec<PathBuf>,
    /// `--output=FILE`: where the report goes instead of stdout.
    pub output: Option<PathBuf>,
    /// `--output-format`.
    pub format: OutputFormat,
    /// `--parse-only`: check and print nothing, run nothing.
    pub parse_only: bool,
    /// `--section=NAME` (repeatable): run only these jobs of the job files.
    pub sections: Vec<String>,
    /// `--version`.
    pub version: bool,
}

/// fio's own options (not job options) fsbench reads, and those it takes without effect.
const QUIET: &[&str] = &["eta", "eta-newline", "eta-interval", "status-interval", "warnings-fatal"];

/// Read fio's arguments (`args` without the program name).
pub fn parse(args: &[String]) -> Result<FioCommand, FioError> {
    let mut c = FioCommand::default();
    let bad = |line: usize, message: String| FioError::Syntax {
        file: COMMAND_LINE.into(),
        line,
        message,
    };
    for (i, a) in args.iter().enumerate() {
        let pos = i + 1;
        let Some(opt) =
            a.strip_prefix("--").or_else(|| a.strip_prefix('-').filter(|_| a.len() > 1))
        else {
            c.files.push(PathBuf::from(a));
            continue;
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (opt, None),
        };
        match (key, value) {
            ("output", Some(v)) => c.output = Some(PathBuf::from(v)),
            ("output-format", Some(v)) => {
                c.format = match v.as_str() {
                    "normal" => OutputFormat::Normal,
                    "json" => OutputFormat::Json,
                    "json+" => OutputFormat::JsonPlus,
                    "terse" => return Err(bad(pos, "--output-format=terse: fsbench does not write fio's terse (semicolon) format; use normal, json or json+".into())),
                    f if f.contains(',') => return Err(bad(pos, format!("--output-format={f}: fsbench writes one format at a time; pick normal, json or json+"))),
                    f => return Err(bad(pos, format!("--output-format={f}: use normal, json or json+"))),
                }
            }
            ("minimal", None) => return Err(bad(pos, "--minimal (fio's terse format): fsbench does not write it; use --output-format=json".into())),
            ("parse-only", None) => c.parse_only = true,
            ("section", Some(v)) => c.sections.push(v),
            ("version", None) => c.version = true,
            (k, _) if QUIET.contains(&k) => {}
            ("name", None) => {
                return Err(bad(pos, "--name needs a value: --name=JOB".into()))
            }
            ("name", Some(v)) => c.jobs.push((v, pos, Vec::new())),
            (k, _) if k.contains('-') || k.is_empty() => {
                return Err(bad(pos, format!("`{a}`: not a fio option fsbench reads (fio's own options it takes: --output, --output-format, --parse-only, --section, --version, --eta; job options are --NAME=VALUE)")))
            }
            (k, v) => match c.jobs.last_mut() {
                Some((_, _, opts)) => opts.push((k.to_string(), v, pos)),
                None => c.globals.push((k.to_string(), v, pos)),
            },
        }
    }
    Ok(c)
}

impl FioCommand {
    /// Whether the command names any work (a job file or a `--name`).
    pub fn has_jobs(&self) -> bool {
        !self.files.is_empty() || !self.jobs.is_empty()
    }

    /// The sections of the command line and its job files, in fio's order, with every problem
    /// of each; `read` gives a job file's text (or the error reading it).
    pub fn sections(
        &self,
        inputs: &Inputs,
        read: &dyn Fn(&std::path::Path) -> Result<String, FioError>,
    ) -> Parsed {
        let mut p = Parsed::default();
        let entries = |opts: &[(String, Option<String>, usize)], p: &mut Parsed| {
            opts.iter()
                .filter_map(|(k, v, line)| {
                    // The values go through the job-file reading (comments, ${VAR}, keywords).
                    let text = match v {
                        Some(v) => format!("[x]\n{k}={v}\n"),
                        None => format!("[x]\n{k}\n"),
                    };
                    let mut one = ini::parse(&text, COMMAND_LINE, inputs);
                    p.notes.append(&mut one.notes);
                    for e in one.errors {
                        p.errors.push(at_line(e, *line));
                    }
                    let mut e = one.sections.pop()?.entries.pop()?;
                    e.line = *line;
                    Some(e)
                })
                .collect::<Vec<Entry>>()
        };
        if !self.globals.is_empty() {
            let e = entries(&self.globals, &mut p);
            p.sections.push(Section {
                name: "global".into(),
                file: COMMAND_LINE.into(),
                line: 1,
                entries: e,
            });
        }
        for f in &self.files {
            match read(f) {
                Ok(text) => {
                    let mut one = ini::parse(&text, &f.display().to_string(), inputs);
                    if !self.sections.is_empty() {
                        one.sections
                            .retain(|s| s.name == "global" || self.sections.contains(&s.name));
                    }
                    p.sections.append(&mut one.sections);
                    p.notes.append(&mut one.notes);
                    p.errors.append(&mut one.errors);
                }
                Err(e) => p.errors.push(e),
            }
        }
        for (name, line, opts) in &self.jobs {
            let e = entries(opts, &mut p);
            p.sections.push(Section {
                name: name.clone(),
                file: COMMAND_LINE.into(),
                line: *line,
                entries: e,
            });
        }
        p
    }
}

/// A command-line value's error at its argument's position.
fn at_line(e: FioError, at: usize) -> FioError {
    match e {
        FioError::Syntax { file, message, .. } => FioError::Syntax { file, line: at, message },
        FioError::Env { file, var, .. } => FioError::Env { file, line: at, var },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globals_before_the_first_name_jobs_after_and_files_anywhere() {
        let c = parse(&args(&[
            "--directory=/tmp",
            "--size=8m",
            "--name=one",
            "--rw=read",
            "job.fio",
            "--name=two",
            "--rw=write",
            "--direct",
            "--output-format=json",
            "--output=out.json",
            "--eta=never",
            "--section=x",
            "--parse-only",
        ]))
        .unwrap();
        assert_eq!(
            c.globals,
            [("directory".into(), Some("/tmp".into()), 1), ("size".into(), Some("8m".into()), 2)]
        );
        assert_eq!(c.jobs.len(), 2);
        assert_eq!(c.jobs[0].0, "one");
        assert_eq!(c.jobs[0].2, [("rw".into(), Some("read".into()), 4)]);
        assert_eq!(
            c.jobs[1].2,
            [("rw".into(), Some("write".into()), 7), ("direct".into(), None, 8)]
        );
        assert_eq!(c.files, [PathBuf::from("job.fio")]);
        assert_eq!(c.format, OutputFormat::Json);
        assert_eq!(c.output, Some(PathBuf::from("out.json")));
        assert_eq!(c.sections, ["x"]);
        assert!(c.parse_only);
    }

    #[test]
    fn terse_and_unknown_fio_options_are_refused_with_their_position() {
        let e = parse(&args(&["--name=a", "--output-format=terse"])).unwrap_err().to_string();
        assert!(e.starts_with("command line:2:") && e.contains("terse"), "{e}");
        let e = parse(&args(&["--minimal"])).unwrap_err().to_string();
        assert!(e.contains("--minimal"), "{e}");
        let e = parse(&args(&["--write-lat-log"])).unwrap_err().to_string();
        assert!(e.contains("`--write-lat-log`: not a fio option fsbench reads"), "{e}");
    }

    #[test]
    fn command_line_jobs_become_sections_with_positions() {
        let c = parse(&args(&["--size=1m", "--name=a b", "--rw=randread", "--bs=4k ; c"])).unwrap();
        let env = |_: &str| None;
        let no = |_: &str, _: &str| -> Result<(String, String), String> { Err("no".into()) };
        let inputs = Inputs { env: &env, keywords: ini::Keywords::current(), include: &no };
        let p = c.sections(&inputs, &|_| unreachable!("no files"));
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        assert_eq!(p.sections.len(), 2);
        assert_eq!(p.sections[0].name, "global");
        assert_eq!(p.sections[1].name, "a b");
        assert_eq!(p.sections[1].line, 2);
        let e: Vec<(&str, Option<&str>, usize)> = p.sections[1]
            .entries
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_deref(), e.line))
            .collect();
        assert_eq!(e, [("rw", Some("randread"), 3), ("bs", Some("4k"), 4)]);
    }
}
