//! The documented commands parse: every `fsbench ...` command line in GUIDE.md's, README.md's
//! and docs/reference/*.md's shell code blocks (and `$ fsbench ...` lines of their sample
//! outputs) names a subcommand that exists and only options that subcommand's `--help` defines.
//! Nothing is run but `--help`, so this is fast; whether a recipe does what its text says is
//! checked by running it. Commands that only print (`--print-workload`) are cheap, so they are
//! run as written, with the line's `VAR=value` environment, from the repository's root.

use super::util::command;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// A documented command: where it was found, the `VAR=value` assignments before it, and its
/// words after `fsbench`.
#[derive(Debug)]
struct DocCommand {
    at: String,
    env: Env,
    args: Vec<String>,
}

/// Split a shell line into words, honouring single and double quotes; operators (`&&`, `||`,
/// `|`, `;`, `&`, redirections) are words of their own.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    cur.push(q);
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '&' | '|' | ';' | '>' | '<' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
                let mut op = c.to_string();
                while let Some(&n) = chars.peek() {
                    if matches!(n, '&' | '|' | '>') {
                        op.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                words.push(op);
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

fn is_operator(w: &str) -> bool {
    w.starts_with(['&', '|', ';', '>', '<'])
}

fn is_fsbench(w: &str) -> bool {
    Path::new(w).file_name().is_some_and(|n| n == "fsbench")
}

/// `VAR=value` assignments before a command.
type Env = Vec<(String, String)>;

/// The fsbench invocations of one shell line: a simple command whose program is fsbench (after
/// `VAR=value` assignments), or one started through a wrapper such as `mpirun` or `sudo`.
fn invocations(line: &str) -> Vec<(Env, Vec<String>)> {
    let words = shell_words(line);
    let mut out = Vec::new();
    for simple in words.split(|w| is_operator(w)) {
        let assignment = |w: &&String| w.contains('=') && !w.starts_with('-');
        let env: Env = simple
            .iter()
            .take_while(assignment)
            .filter_map(|w| w.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        let mut rest = simple.iter().skip_while(assignment);
        let Some(program) = rest.next() else { continue };
        let args: Vec<String> = if is_fsbench(program) {
            rest.cloned().collect()
        } else if ["mpirun", "mpiexec", "sudo", "time", "timeout", "nice", "env"]
            .contains(&program.as_str())
        {
            match rest.position(|w| is_fsbench(w)) {
                Some(_) => rest.cloned().collect(),
                None => continue,
            }
        } else {
            continue;
        };
        out.push((env, args));
    }
    out
}

/// Every documented fsbench command of a markdown file: shell code blocks (`sh`, `bash`,
/// `console`; in the reference pages also blocks without a language), with `\` continuations
/// joined, and `$ ` lines of other code blocks.
fn doc_commands(name: &str, text: &str) -> Vec<DocCommand> {
    let plain_is_shell = name.starts_with("docs/reference/");
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    let mut pending = String::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("```") {
            fence = match fence {
                None => Some(rest.trim().to_string()),
                Some(_) => None,
            };
            pending.clear();
            continue;
        }
        let Some(lang) = &fence else { continue };
        let shell = matches!(lang.as_str(), "sh" | "bash" | "console" | "shell")
            || (plain_is_shell && lang.is_empty());
        let cmd = if shell {
            t.strip_prefix("$ ").unwrap_or(t)
        } else if let Some(c) = t.strip_prefix("$ ") {
            c
        } else {
            continue;
        };
        if let Some(head) = cmd.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        let full = std::mem::take(&mut pending) + cmd;
        for (env, args) in invocations(&full) {
            out.push(DocCommand { at: format!("{name}:{}", n + 1), env, args });
        }
    }
    out
}

/// The options a (sub)command's `--help` defines: the flags at the start of its option lines.
fn defined_options(help: &str) -> BTreeSet<String> {
    let mut opts = BTreeSet::new();
    for line in help.lines() {
        let t = line.trim_start();
        if !t.starts_with('-') {
            continue;
        }
        for word in t.split([' ', ',']) {
            let w = word.split(['=', '<', '[']).next().unwrap_or("");
            if w.starts_with("--") && w.len() > 2 || w.len() == 2 && w.starts_with('-') {
                opts.insert(w.to_string());
            } else if !w.is_empty() {
                break;
            }
        }
    }
    opts
}

/// `fsbench ARGS... --help`, or None when fsbench does not know the (sub)command.
fn help_of(path: &[&str]) -> Option<String> {
    let o = command().args(path).arg("--help").output().expect("run fsbench --help");
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The subcommands a `--help` lists under "Commands:".
fn subcommands(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| l.as_bytes().get(2).is_some_and(|b| b.is_ascii_lowercase()))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Checks documented commands against fsbench's own `--help`, caching each help text.
#[derive(Default)]
struct Checker {
    helps: HashMap<Vec<String>, Option<String>>,
}

impl Checker {
    fn help(&mut self, path: &[&str]) -> Option<String> {
        let key: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        self.helps.entry(key).or_insert_with(|| help_of(path)).clone()
    }

    /// Why `args` (the words after `fsbench`) would not parse, if they would not.
    fn check(&mut self, args: &[String]) -> Result<(), String> {
        let top = self.help(&[]).expect("fsbench --help");
        let Some(sub) = args.first() else { return Err("no subcommand".into()) };
        if !subcommands(&top).contains(sub) {
            return Err(format!("unknown subcommand `{sub}`"));
        }
        let mut path = vec![sub.as_str()];
        let mut help = self.help(&path).ok_or(format!("`fsbench {sub} --help` failed"))?;
        let nested = subcommands(&help);
        let mut rest = &args[1..];
        if !nested.is_empty() {
            let Some(inner) = rest.first() else {
                return Err(format!("`fsbench {sub}` needs a subcommand"));
            };
            if !nested.contains(inner) {
                return Err(format!("unknown subcommand `{sub} {inner}`"));
            }
            path.push(inner);
            help = self.help(&path).ok_or(format!("`fsbench {sub} {inner} --help` failed"))?;
            rest = &rest[1..];
        }
        if path == ["fio"] {
            // Its options are fio's (`--name=x --rw=read`), read by the fio translator, whose
            // own tests and generated option list (docs/reference/fio.md) cover them.
            return Ok(());
        }
        let known = defined_options(&help);
        for a in rest {
            if a == "--" {
                break; // the rest is a command for `profile`
            }
            if !a.starts_with('-') || a == "-" {
                continue;
            }
            let flag = a.split('=').next().unwrap_or(a);
            if !known.contains(flag) {
                return Err(format!("`fsbench {}` has no option `{flag}`", path.join(" ")));
            }
        }
        Ok(())
    }
}

/// GUIDE.md and README.md (in that order), then every page of docs/reference.
fn docs() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = vec!["GUIDE.md".into(), "README.md".into()];
    let mut reference: Vec<String> = std::fs::read_dir(root.join("docs/reference"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/reference/{n}"))
        .collect();
    reference.sort();
    names.extend(reference);
    names
        .into_iter()
        .map(|f| {
            let p = root.join(&f);
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (f, text)
        })
        .collect()
}

#[test]
fn every_documented_command_names_a_real_subcommand_and_real_options() {
    let mut checker = Checker::default();
    let mut found = 0;
    let mut bad = Vec::new();
    for (name, text) in docs() {
        for c in doc_commands(&name, &text) {
            found += 1;
            if let Err(e) = checker.check(&c.args) {
                bad.push(format!("{}: fsbench {}: {e}", c.at, c.args.join(" ")));
            }
        }
    }
    // Every recipe has commands; finding few means the extraction broke, not that all is well.
    assert!(found >= 20, "only {found} documented fsbench commands found");
    assert!(bad.is_empty(), "documented commands that would not parse:\n{}", bad.join("\n"));
}

/// The documented commands that only print (`--print-workload`) run as written: the fio page's
/// own example once failed ("`RUNTIME` is not set").
#[test]
fn every_documented_print_workload_command_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut ran = Vec::new();
    let mut bad = Vec::new();
    for (name, text) in docs() {
        for c in doc_commands(&name, &text) {
            if !c.args.iter().any(|a| a == "--print-workload") {
                continue;
            }
            // A file the command names that the docs leave to the reader (`my.toml`) is not
            // the repository's: such a command is checked for its flags only.
            let missing = c
                .args
                .iter()
                .any(|a| (a.ends_with(".toml") || a.ends_with(".fio")) && !root.join(a).exists());
            if missing {
                continue;
            }
            let o = command()
                .current_dir(root)
                .envs(c.env.iter().map(|(k, v)| (k, v)))
                .args(&c.args)
                .output()
                .unwrap();
            ran.push(c.at.clone());
            if !o.status.success() {
                bad.push(format!(
                    "{}: fsbench {}: {}",
                    c.at,
                    c.args.join(" "),
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
        }
    }
    assert!(ran.iter().any(|a| a.starts_with("docs/reference/fio.md")), "{ran:?}");
    assert!(bad.is_empty(), "documented commands that fail:\n{}", bad.join("\n"));
}

#[test]
fn every_guide_recipe_has_a_command() {
    let guide = &docs()[0].1;
    for section in guide.split("\n## ").skip(1) {
        let title = section.lines().next().unwrap_or("");
        assert!(
            !doc_commands("GUIDE.md", section).is_empty(),
            "recipe `{title}` has no fsbench command in a shell code block"
        );
    }
}

#[test]
fn the_check_catches_a_misspelt_option_or_subcommand() {
    let mut checker = Checker::default();
    let doc = "```sh\nfsbench run --fs ext4 --scael quick\nfsbench comapre ext4 xfs\n\
               SIZE=1m fsbench testbed up ext4 --sise 1G\n\
               mpirun -np 2 target/release/fsbench run --mpi --dirr /x\n\
               fsbench profile --cold -- ls --not-checked\n```\n";
    let cmds = doc_commands("t.md", doc);
    assert_eq!(cmds.len(), 5, "{cmds:?}");
    let errs: Vec<String> =
        cmds.iter().map(|c| checker.check(&c.args).err().unwrap_or_default()).collect();
    assert!(errs[0].contains("no option `--scael`"), "{errs:?}");
    assert!(errs[1].contains("unknown subcommand `comapre`"), "{errs:?}");
    assert!(errs[2].contains("`fsbench testbed up` has no option `--sise`"), "{errs:?}");
    assert!(errs[3].contains("no option `--dirr`"), "{errs:?}");
    assert!(errs[4].is_empty(), "options after `--` belong to the profiled command: {errs:?}");
    // Not commands of fsbench: a directory named fsbench, a mention in a comment.
    assert!(doc_commands(
        "t.md",
        "```sh\ngit clone x fsbench && cd fsbench # fsbench run --bad\n```\n"
    )
    .is_empty());
}
