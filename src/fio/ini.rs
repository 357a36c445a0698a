//! fio's job-file syntax, read as fio 3.33 reads it (`init.c`, `parse.c`, `options.c`):
//! `[section]` headers, `key=value` or bare `key` lines, full-line comments starting with `;` or
//! `#` and comments after a value (fio cuts a value at its first `;` or `#`), `include FILE`
//! (relative to the including file, no sections inside, nested includes allowed), `${VAR}`
//! replaced by the environment variable's value, and the reserved keywords `$pagesize`,
//! `$mb_memory` and `$ncpus` replaced by the host's figures (a value with a keyword is then
//! evaluated as arithmetic, as fio's `bc_calc` does). Every entry keeps its file and line for
//! errors, and every problem of the file is collected (not only the first), so one run of
//! fsbench lists all a user has to fix.

use super::FioError;

/// Deepest `include` nesting followed (fio has no limit; a loop would recurse forever).
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// One `key[=value]` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Option name as written (fio option names are case-sensitive lower-case).
    pub key: String,
    /// The value after `=`, comment cut, `${VAR}` and keywords expanded; `None` for a bare
    /// `key` (a boolean set).
    pub value: Option<String>,
    /// The file the line is in (an included file's own name).
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// Its value named an unset `${VAR}` and came out empty: the error is reported, and the
    /// option counts as given (so nothing else asks for it again).
    pub unset: bool,
}

/// One `[name]` section and its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets (`global` for global options).
    pub name: String,
    /// The file the header is in.
    pub file: String,
    /// Line of the header.
    pub line: usize,
    /// Entries in order (those of included files where the `include` line is).
    pub entries: Vec<Entry>,
}

/// The host's figures behind fio's reserved keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keywords {
    /// `$ncpus`: online CPUs.
    pub ncpus: u64,
    /// `$mb_memory`: total memory in MiB.
    pub mb_memory: u64,
    /// `$pagesize`: the page size in bytes.
    pub pagesize: u64,
}

impl Keywords {
    /// This host's figures.
    pub fn current() -> Keywords {
        let host = crate::model::host::HostInfo::current();
        Keywords {
            ncpus: host.cpus as u64,
            mb_memory: host.memory_bytes >> 20,
            pagesize: rustix::param::page_size() as u64,
        }
    }
}

/// Reads `include NAME` of the file `from`: the included file's name and text, or why not.
pub type IncludeFn<'a> = &'a dyn Fn(&str, &str) -> Result<(String, String), String>;

/// Where a job file's outside values come from: the environment, the host, included files.
pub struct Inputs<'a> {
    /// Looks up `${VAR}`s.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// `$ncpus`, `$mb_memory`, `$pagesize`.
    pub keywords: Keywords,
    /// Reads `include NAME` of the file `from`: the included file's name (for messages and
    /// its own includes) and text, or why not.
    pub include: IncludeFn<'a>,
}

/// What [`parse`] found: the sections, notes on what fio's rules did, and every problem.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Sections in order.
    pub sections: Vec<Section>,
    /// Things to know (an unset `${VAR}` replaced by nothing, as fio does).
    pub notes: Vec<String>,
    /// Every syntax problem, in file order.
    pub errors: Vec<FioError>,
}

/// Split `text` (the file `file`) into sections, collecting every problem.
pub fn parse(text: &str, file: &str, inputs: &Inputs) -> Parsed {
    let mut p = Parsed::default();
    let mut stack = vec![file.to_string()];
    read_lines(text, file, inputs, &mut p, &mut stack, false);
    p
}

fn syntax(file: &str, line: usize, message: impl Into<String>) -> FioError {
    FioError::Syntax { file: file.into(), line, message: message.into() }
}

/// Read the lines of one file into `p`; `nested` for an included file (no sections).
fn read_lines(
    text: &str,
    file: &str,
    inputs: &Inputs,
    p: &mut Parsed,
    stack: &mut Vec<String>,
    nested: bool,
) {
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        // A comment before any `=` ends the line (`thread ; a=b`); after it, the value's own
        // reading cuts it (a `${VAR}` may come first).
        let l = match (l.find([';', '#']), l.find('='), l.starts_with('[')) {
            (_, _, true) => header_without_comment(l),
            (Some(c), Some(e), _) if c < e => l[..c].trim_end(),
            (Some(c), None, _) => l[..c].trim_end(),
            _ => l,
        };
        if let Some(rest) = l.strip_prefix('[') {
            if nested {
                p.errors.push(syntax(file, line, format!("`{l}`: an included file may not start a section (fio: \"No new sections in included files\")")));
                continue;
            }
            let Some(name) = rest.strip_suffix(']') else {
                p.errors.push(syntax(file, line, format!("`{l}`: a section header is `[name]`")));
                continue;
            };
            let name = name.trim();
            if name.is_empty() {
                p.errors.push(syntax(
                    file,
                    line,
                    "empty section name `[]`: name the job, e.g. `[randread]`",
                ));
                continue;
            }
            p.sections.push(Section {
                name: name.to_string(),
                file: file.into(),
                line,
                entries: Vec::new(),
            });
            continue;
        }
        if p.sections.is_empty() {
            p.errors.push(syntax(
                file,
                line,
                format!(
                    "`{}` comes before any section: put options under [global] or a [job]",
                    short(l)
                ),
            ));
            continue;
        }
        if let Some(name) = l.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
            include(name.trim(), file, line, inputs, p, stack);
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => match value(v, file, line, inputs, &mut p.notes) {
                Ok(v) => (k.trim(), Some(v)),
                Err(e) => {
                    let unset = matches!(e, FioError::Env { .. });
                    p.errors.push(e);
                    if let (true, Some(s)) = (unset, p.sections.last_mut()) {
                        let key = k.trim().to_string();
                        s.entries.push(Entry { key, value: None, file: file.into(), line, unset });
                    }
                    continue;
                }
            },
            None => (l, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            p.errors.push(syntax(
                file,
                line,
                format!("`{}`: an option is `name=value` or `name`", short(l)),
            ));
            continue;
        }
        if let Some(s) = p.sections.last_mut() {
            s.entries.push(Entry {
                key: key.to_string(),
                value,
                file: file.into(),
                line,
                unset: false,
            });
        }
    }
}

/// `[name] ; comment` without the comment (a name may hold `;` or `#` itself).
fn header_without_comment(l: &str) -> &str {
    match l.rfind(']') {
        Some(close) if cut_comment(&l[close + 1..]).trim().is_empty() => &l[..=close],
        _ => l,
    }
}

/// A line shown in a message: at most 60 characters (a junk file's lines can be long).
fn short(l: &str) -> String {
    match l.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &l[..i]),
        None => l.to_string(),
    }
}

/// `include NAME` at `file:line`: its lines go where the include is.
fn include(
    name: &str,
    file: &str,
    line: usize,
    inputs: &Inputs,
    p: &mut Parsed,
    stack: &mut Vec<String>,
) {
    let (path, text) = match (inputs.include)(file, name) {
        Ok(x) => x,
        Err(why) => {
            p.errors.push(syntax(file, line, format!("include {name}: {why}")));
            return;
        }
    };
    if stack.contains(&path) || stack.len() > MAX_INCLUDE_DEPTH {
        p.errors.push(syntax(
            file,
            line,
            format!("include {name}: an include loop ({} -> {path})", stack.join(" -> ")),
        ));
        return;
    }
    stack.push(path.clone());
    read_lines(&text, &path, inputs, p, stack, true);
    stack.pop();
}

/// The text before a value's first `;` or `#` (fio's `__trim`).
fn cut_comment(v: &str) -> &str {
    match v.find([';', '#']) {
        Some(i) => &v[..i],
        None => v,
    }
}

/// A value as fio reads it: the comment cut, `${VAR}` replaced, then the keywords.
fn value(
    raw: &str,
    file: &str,
    line: usize,
    inputs: &Inputs,
    notes: &mut Vec<String>,
) -> Result<String, FioError> {
    let v = expand(raw.trim(), file, line, inputs.env, notes)?;
    let v = cut_comment(&v).trim().to_string();
    Ok(keywords(&v, inputs.keywords))
}

/// Replace every `${VAR}` in `v` by the variable's value. As fio, an unset variable is the
/// empty string (with a note); a value that is then empty is an error, as fio's would be.
fn expand(
    v: &str,
    file: &str,
    line: usize,
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
) -> Result<String, FioError> {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    let mut unset = None;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| syntax(file, line, format!("`{v}`: `${{` without a closing `}}`")))?;
        let name = &after[..end];
        match env(name) {
            Some(value) => out.push_str(&value),
            None => unset = Some(name.to_string()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if let Some(var) = unset {
        if cut_comment(&out).trim().is_empty() {
            return Err(FioError::Env { file: file.into(), line, var });
        }
        notes.push(format!("{file}:{line}: `${{{var}}}` is not set: replaced by nothing, as fio does (`{v}` became `{out}`)"));
    }
    Ok(out)
}

/// Replace fio's reserved keywords; a value with one is evaluated as arithmetic (fio's
/// `bc_calc`), which here means wrapped in parentheses for [`eval`].
fn keywords(v: &str, k: Keywords) -> String {
    let words = [("$pagesize", k.pagesize), ("$mb_memory", k.mb_memory), ("$ncpus", k.ncpus)];
    if !words.iter().any(|(w, _)| v.contains(w)) {
        return v.to_string();
    }
    let mut out = v.to_string();
    for (w, n) in words {
        out = out.replace(w, &n.to_string());
    }
    // Only a value with an operator is arithmetic (`8*$mb_memory`); `$ncpus` alone is a number.
    if out.starts_with('(') || !out.contains(['+', '-', '*', '/', '%', '^']) {
        out
    } else {
        format!("({out})")
    }
}

/// Evaluate fio's arithmetic (a numeric value in parentheses): `+ - * / % ^` and parentheses
/// over whole numbers, each with an optional unit read by `unit` (a size or a time suffix).
/// Returns `None` when `v` is not in parentheses.
pub fn eval(v: &str, unit: &dyn Fn(&str) -> Result<f64, String>) -> Option<Result<f64, String>> {
    let inner = v.trim();
    if !(inner.starts_with('(') && inner.ends_with(')')) {
        return None;
    }
    let mut p = Arith { s: inner.as_bytes(), i: 0, unit };
    Some(p.expr().and_then(|x| {
        p.skip_ws();
        if p.i == p.s.len() {
            Ok(x)
        } else {
            Err(format!("`{v}`: unexpected `{}`", &inner[p.i..]))
        }
    }))
}

/// A recursive-descent reader of fio's arithmetic (precedence: `^` over `* / %` over `+ -`).
struct Arith<'a> {
    s: &'a [u8],
    i: usize,
    unit: &'a dyn Fn(&str) -> Result<f64, String>,
}

impl Arith<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    fn expr(&mut self) -> Result<f64, String> {
        let mut x = self.term()?;
        while let Some(c @ (b'+' | b'-')) = self.peek() {
            self.i += 1;
            let y = self.term()?;
            x = if c == b'+' { x + y } else { x - y };
        }
        Ok(x)
    }

    fn term(&mut self) -> Result<f64, String> {
        let mut x = self.power()?;
        while let Some(c @ (b'*' | b'/' | b'%')) = self.peek() {
            self.i += 1;
            let y = self.power()?;
            if c != b'*' && y == 0.0 {
                return Err("division by zero".into());
            }
            x = match c {
                b'*' => x * y,
                b'/' => (x / y).trunc(),
                _ => x % y,
            };
        }
        Ok(x)
    }

    fn power(&mut self) -> Result<f64, String> {
        let x = self.atom()?;
        if self.peek() == Some(b'^') {
            self.i += 1;
            let y = self.power()?;
            return Ok(x.powf(y));
        }
        Ok(x)
    }

    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'(') => {
                self.i += 1;
                let x = self.expr()?;
                if self.peek() != Some(b')') {
                    return Err("a `(` without its `)`".into());
                }
                self.i += 1;
                Ok(x)
            }
            Some(b'-') => {
                self.i += 1;
                Ok(-self.atom()?)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => {
                let start = self.i;
                while self.s.get(self.i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.') {
                    self.i += 1;
                }
                let word = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                (self.unit)(&word)
            }
            Some(c) => Err(format!("`{}` where a number belongs", c as char)),
            None => Err("the expression ends where a number belongs".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "SIZE" => Some("64m".into()),
            "DEPTH" => Some("16".into()),
            _ => None,
        }
    }

    const HOST: Keywords = Keywords { ncpus: 4, mb_memory: 2048, pagesize: 4096 };

    fn no_include(_: &str, name: &str) -> Result<(String, String), String> {
        Err(format!("no file {name}"))
    }

    fn parse_ok(text: &str) -> Vec<Section> {
        let p = parse(text, "j.fio", &Inputs { env: &env, keywords: HOST, include: &no_include });
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        p.sections
    }

    fn errors(text: &str) -> Vec<String> {
        let p = parse(text, "j.fio", &Inputs { env: &env, keywords: HOST, include: &no_include });
        p.errors.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn sections_entries_comments_and_lines() {
        let text = "; a comment\n[global]\nbs=4k\n# another\n\n[job one]\nrw = randread\ntime_based\nsize=${SIZE}\n";
        let s = parse_ok(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "global");
        assert_eq!(
            s[0].entries[0],
            Entry {
                key: "bs".into(),
                value: Some("4k".into()),
                file: "j.fio".into(),
                line: 3,
                unset: false
            }
        );
        assert_eq!(s[1].name, "job one");
        assert_eq!(s[1].line, 6);
        assert_eq!(s[1].entries[0].value.as_deref(), Some("randread"));
        assert_eq!(s[1].entries[1].key, "time_based");
        assert_eq!(s[1].entries[1].value, None);
        assert_eq!(s[1].entries[1].line, 8);
        assert_eq!(s[1].entries[2].value.as_deref(), Some("64m"));
    }

    #[test]
    fn comments_after_values_are_cut_as_fio_cuts_them() {
        let s = parse_ok(
            "[j] ; the job\nnumjobs=4 ; four of them\nbs=8k# eight\nthread ; bare\nrw=read;x\n",
        );
        let v: Vec<(&str, Option<&str>)> =
            s[0].entries.iter().map(|e| (e.key.as_str(), e.value.as_deref())).collect();
        assert_eq!(
            v,
            [("numjobs", Some("4")), ("bs", Some("8k")), ("thread", None), ("rw", Some("read"))]
        );
    }

    #[test]
    fn env_expansion_follows_fio_an_unset_variable_is_empty() {
        let s = parse_ok("[j]\nfilename=f-${DEPTH}-${SIZE}.dat\n");
        assert_eq!(s[0].entries[0].value.as_deref(), Some("f-16-64m.dat"));
        let p = parse(
            "[j]\nfilename=f${NOPE}.dat\n",
            "j.fio",
            &Inputs { env: &env, keywords: HOST, include: &no_include },
        );
        assert!(p.errors.is_empty());
        assert_eq!(p.sections[0].entries[0].value.as_deref(), Some("f.dat"));
        assert!(p.notes[0].contains("j.fio:2: `${NOPE}` is not set"), "{:?}", p.notes);
        // A value that is nothing but an unset variable is an error (fio's would fail too).
        let e = errors("[j]\n\nsize=${NOPE}\n");
        assert!(e[0].contains("j.fio:3") && e[0].contains("NOPE"), "{e:?}");
        let e = errors("[j]\nsize=${SIZE\n");
        assert!(e[0].contains("j.fio:2") && e[0].contains("closing"), "{e:?}");
    }

    #[test]
    fn keywords_become_the_hosts_figures_and_arithmetic() {
        let s = parse_ok("[j]\nnumjobs=$ncpus\nsize=8*$mb_memory\nbs=$pagesize\n");
        let v: Vec<Option<&str>> = s[0].entries.iter().map(|e| e.value.as_deref()).collect();
        assert_eq!(v, [Some("4"), Some("(8*2048)"), Some("4096")]);
        let unit = |w: &str| w.parse::<f64>().map_err(|e| e.to_string());
        assert_eq!(eval("(8*2048)", &unit), Some(Ok(16384.0)));
        assert_eq!(eval("(1 + 2 * 3 ^ 2 - 10 % 4)", &unit), Some(Ok(17.0)));
        assert_eq!(eval("((1+2)*3)", &unit), Some(Ok(9.0)));
        assert_eq!(eval("(7/2)", &unit), Some(Ok(3.0)));
        assert_eq!(eval("4k", &unit), None);
        assert!(eval("(1/0)", &unit).unwrap().is_err());
        assert!(eval("(1+)", &unit).unwrap().is_err());
        assert!(eval("(1+2))", &unit).unwrap().is_err());
    }

    #[test]
    fn includes_nest_refuse_sections_and_loops() {
        let files = |from: &str, name: &str| -> Result<(String, String), String> {
            let _ = from;
            match name {
                "a.inc" => Ok(("a.inc".into(), "bs=8k\ninclude b.inc\n".into())),
                "b.inc" => Ok(("b.inc".into(), "\niodepth=4\n".into())),
                "sec.inc" => Ok(("sec.inc".into(), "[x]\n".into())),
                "loop.inc" => Ok(("loop.inc".into(), "include loop.inc\n".into())),
                _ => Err("no such file".into()),
            }
        };
        let inputs = Inputs { env: &env, keywords: HOST, include: &files };
        let p = parse("[g]\ninclude a.inc\nrw=read\n", "j.fio", &inputs);
        assert!(p.errors.is_empty(), "{:?}", p.errors);
        let e: Vec<(&str, &str, usize)> = p.sections[0]
            .entries
            .iter()
            .map(|e| (e.key.as_str(), e.file.as_str(), e.line))
            .collect();
        assert_eq!(e, [("bs", "a.inc", 1), ("iodepth", "b.inc", 2), ("rw", "j.fio", 3)]);
        let p = parse("[g]\ninclude sec.inc\ninclude loop.inc\ninclude none\n", "j.fio", &inputs);
        let e: Vec<String> = p.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e[0].starts_with("sec.inc:1:") && e[0].contains("may not start a section"));
        assert!(e[1].starts_with("loop.inc:1:") && e[1].contains("include loop"), "{e:?}");
        assert!(e[2].starts_with("j.fio:4:") && e[2].contains("no such file"), "{e:?}");
    }

    #[test]
    fn syntax_errors_name_the_line_and_all_are_collected() {
        let e = errors("bs=4k\n[j]\n[oops\n=4k\nrw=read\n");
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e[0].contains("j.fio:1") && e[0].contains("before any section"), "{e:?}");
        assert!(e[1].contains("j.fio:3"), "{e:?}");
        assert!(e[2].contains("j.fio:4"), "{e:?}");
    }
}
