//! fio's job-file syntax: `[section]` headers, `key=value` or bare `key` lines, full-line
//! comments starting with `;` or `#`, and `${VAR}` replaced by the environment variable's value
//! (as fio does before parsing an option). Every entry keeps its line number for errors.

use super::FioError;

/// One `key[=value]` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Option name, lower-case, as written (fio option names are case-sensitive lower-case).
    pub key: String,
    /// The value after `=`, with `${VAR}` expanded; `None` for a bare `key` (a boolean set).
    pub value: Option<String>,
    /// 1-based line number.
    pub line: usize,
}

/// One `[name]` section and its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets (`global` for global options).
    pub name: String,
    /// Line of the header.
    pub line: usize,
    /// Entries in order.
    pub entries: Vec<Entry>,
}

/// Split `text` into sections. `env` looks up `${VAR}`s.
pub fn parse(
    text: &str,
    file: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, FioError> {
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let name = rest.strip_suffix(']').ok_or_else(|| FioError::Syntax {
                file: file.into(),
                line,
                message: format!("`{l}`: a section header is `[name]`"),
            })?;
            let name = name.trim();
            if name.is_empty() {
                return Err(FioError::Syntax {
                    file: file.into(),
                    line,
                    message: "empty section name `[]`: name the job, e.g. `[randread]`".into(),
                });
            }
            sections.push(Section { name: name.to_string(), line, entries: Vec::new() });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            return Err(FioError::Syntax {
                file: file.into(),
                line,
                message: format!(
                    "`{l}` comes before any section: put options under [global] or a [job]"
                ),
            });
        };
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(expand(v.trim(), file, line, env)?)),
            None => (l, None),
        };
        if key.is_empty() {
            return Err(FioError::Syntax {
                file: file.into(),
                line,
                message: format!("`{l}`: an option is `name=value` or `name`"),
            });
        }
        section.entries.push(Entry { key: key.to_string(), value, line });
    }
    Ok(sections)
}

/// Replace every `${VAR}` in `v` by the variable's value; an unset variable is an error (fio
/// would pass the text on literally, which then fails or, worse, means something else).
fn expand(
    v: &str,
    file: &str,
    line: usize,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, FioError> {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| FioError::Syntax {
            file: file.into(),
            line,
            message: format!("`{v}`: `${{` without a closing `}}`"),
        })?;
        let name = &after[..end];
        let value = env(name).ok_or_else(|| FioError::Env {
            file: file.into(),
            line,
            var: name.to_string(),
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
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

    #[test]
    fn sections_entries_comments_and_lines() {
        let text = "; a comment\n[global]\nbs=4k\n# another\n\n[job one]\nrw = randread\ntime_based\nsize=${SIZE}\n";
        let s = parse(text, "j.fio", &env).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "global");
        assert_eq!(s[0].entries[0], Entry { key: "bs".into(), value: Some("4k".into()), line: 3 });
        assert_eq!(s[1].name, "job one");
        assert_eq!(s[1].line, 6);
        assert_eq!(s[1].entries[0].value.as_deref(), Some("randread"));
        assert_eq!(s[1].entries[1], Entry { key: "time_based".into(), value: None, line: 8 });
        assert_eq!(s[1].entries[2].value.as_deref(), Some("64m"));
    }

    #[test]
    fn env_expansion_inside_text_and_unset_variable() {
        let s = parse("[j]\nfilename=f-${DEPTH}-${SIZE}.dat\n", "j.fio", &env).unwrap();
        assert_eq!(s[0].entries[0].value.as_deref(), Some("f-16-64m.dat"));
        let e = parse("[j]\n\nsize=${NOPE}\n", "j.fio", &env).unwrap_err().to_string();
        assert!(e.contains("j.fio:3") && e.contains("NOPE"), "{e}");
        let e = parse("[j]\nsize=${SIZE\n", "j.fio", &env).unwrap_err().to_string();
        assert!(e.contains("j.fio:2") && e.contains("closing"), "{e}");
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let e = parse("bs=4k\n", "j.fio", &env).unwrap_err().to_string();
        assert!(e.contains("j.fio:1") && e.contains("before any section"), "{e}");
        let e = parse("[j]\n[oops\n", "j.fio", &env).unwrap_err().to_string();
        assert!(e.contains("j.fio:2"), "{e}");
        let e = parse("[j]\n=4k\n", "j.fio", &env).unwrap_err().to_string();
        assert!(e.contains("j.fio:2"), "{e}");
    }
}
