//! The layer order of `src/`, enforced.
//!
//! Every top-level module of the crate sits in one layer; code may use a module of a *lower*
//! layer only (modules of one layer do not use each other). This test reads every source file
//! under `src/` (comments, string literals and `#[cfg(test)]` code left out: tests may reach
//! up to check what a layer's output looks like), collects the `crate::` paths (and `super::`
//! paths that leave their top-level module) and fails on any import against the order, naming
//! the file and the path. It also fails when a top-level module is in no layer, and when
//! `docs/design/architecture.md` states another order than [`LAYERS`].
//!
//! Why a test and not one crate per layer (as uv does): the layers share many `pub(crate)`
//! items and one binary's tests; a test states the same rule, names the offending line, and
//! costs a fraction of a second, where splitting into crates would touch every visibility.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module may use modules of earlier entries only.
const LAYERS: &[&[&str]] = &[
    &["sys"],
    &["state"],
    &["stats"],
    &["model"],
    &["workload", "decision"],
    &["fio"],
    &["observe"],
    &["engine"],
    &["testbed"],
    &["driver", "integrity", "profile"],
    &["store", "cluster"],
    &["analysis"],
    &["present"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The order as one line: `sys < state < ... < workload, decision < ... < cli`.
fn order_line() -> String {
    LAYERS.iter().map(|l| l.join(", ")).collect::<Vec<_>>().join(" < ")
}

/// Source text with comments, string and char literals replaced by spaces (line breaks kept,
/// so positions still name the right line).
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && (next == Some(b'"') || next == Some(b'#'))
            && !b.get(i.wrapping_sub(1)).is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_')
        {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"'
                    && b[j + 1..].iter().take(hashes).filter(|h| **h == b'#').count() == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            for &x in &b[i..j.min(b.len())] {
                blank(&mut out, x);
            }
            i = j;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                if b[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            for &x in &b[i..(j + 1).min(b.len())] {
                blank(&mut out, x);
            }
            i = j + 1;
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\u{..}'), or a lifetime ('a) which is kept.
            let close = if next == Some(b'\\') {
                b[i + 2..].iter().position(|x| *x == b'\'').map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(j) => {
                    for &x in &b[i..=j] {
                        blank(&mut out, x);
                    }
                    i = j + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8(out).expect("ASCII blanks keep UTF-8 valid")
}

/// `text` without `#[cfg(test)]` items; also the names of modules declared `#[cfg(test)] mod
/// NAME;` (their files are test code).
fn without_tests(text: &str) -> (String, Vec<String>) {
    let b = text.as_bytes();
    let mut out = text.as_bytes().to_vec();
    let mut test_mods = Vec::new();
    let mut from = 0;
    while let Some(p) = text[from..].find("#[cfg(test)]") {
        let start = from + p;
        let mut i = start + "#[cfg(test)]".len();
        // Skip further attributes and whitespace.
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if b.get(i) == Some(&b'#') {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'[' {
                        depth += 1;
                    } else if b[i] == b']' {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    i += 1;
                }
            } else {
                break;
            }
        }
        let item_start = i;
        // The item ends at its matching `}` or at a `;` before any `{`.
        let mut depth = 0;
        let mut end = b.len();
        while i < b.len() {
            match b[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let item = &text[item_start..end];
        if let Some(rest) =
            item.trim_start_matches("pub(crate) ").trim_start_matches("pub ").strip_prefix("mod ")
        {
            if let Some(name) = rest.strip_suffix(';') {
                test_mods.push(name.trim().to_string());
            }
        }
        for x in &mut out[start..end] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
        from = end.max(start + 1);
    }
    (String::from_utf8(out).expect("ASCII blanks keep UTF-8 valid"), test_mods)
}

/// One use of another top-level module.
#[derive(Debug)]
struct Use {
    file: PathBuf,
    line: usize,
    path: String,
    target: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/ is readable")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under src/: `src/engine/ioengine/uring.rs` -> [engine, ioengine,
/// uring]; `mod.rs` and `lib.rs` name their directory.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir()).expect("under src/");
    let mut parts: Vec<String> =
        rel.iter().map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The top-level modules each `crate::` (or escaping `super::`) path in `code` names, with the
/// path as written. `use crate::{a::x, b}` names `a` and `b`.
fn uses_in(code: &str, here: &[String]) -> Vec<(usize, String, String)> {
    let b = code.as_bytes();
    let mut found = Vec::new();
    let line_of = |pos: usize| code[..pos].bytes().filter(|c| *c == b'\n').count() + 1;
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !is_ident(b[i - 1]) && b[i - 1] != b':';
        if at_word && code[i..].starts_with("crate::") {
            let mut j = i + "crate::".len();
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if b.get(j) == Some(&b'{') {
                // A group: each top-level entry names a module.
                let mut depth = 0;
                let mut k = j;
                let mut entry_start = j + 1;
                while k < b.len() {
                    match b[k] {
                        b'{' => depth += 1,
                        b'}' | b',' if depth == 1 => {
                            let entry = code[entry_start..k].trim();
                            let name: String = entry
                                .bytes()
                                .take_while(|c| is_ident(*c))
                                .map(char::from)
                                .collect();
                            if !name.is_empty() {
                                found.push((line_of(i), format!("crate::{entry}"), name));
                            }
                            entry_start = k + 1;
                            if b[k] == b'}' {
                                break;
                            }
                        }
                        b'}' => depth -= 1,
                        _ => {}
                    }
                    k += 1;
                }
                i = k + 1;
                continue;
            }
            let name: String =
                b[j..].iter().take_while(|c| is_ident(**c)).map(|c| char::from(*c)).collect();
            let end = j + name.len();
            let tail: String = b[end..]
                .iter()
                .take_while(|c| is_ident(**c) || **c == b':')
                .map(|c| char::from(*c))
                .collect();
            found.push((line_of(i), format!("crate::{name}{tail}"), name));
            i = end;
            continue;
        }
        if at_word && code[i..].starts_with("super::") {
            // super::super::x from src/a/b/c.rs is src/a/x: it leaves `a` only when the number of
            // supers reaches the depth of the file's module path.
            let mut j = i;
            let mut ups = 0;
            while code[j..].starts_with("super::") {
                ups += 1;
                j += "super::".len();
            }
            if ups >= here.len() {
                let name: String =
                    b[j..].iter().take_while(|c| is_ident(**c)).map(|c| char::from(*c)).collect();
                found.push((line_of(i), code[i..j + name.len()].to_string(), name));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    found
}

/// Every use of another top-level module in non-test code under src/.
fn crate_uses() -> (Vec<Use>, BTreeSet<String>) {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    // Files that are test modules: `#[cfg(test)] mod x;` in their parent.
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut code_of: BTreeMap<PathBuf, String> = BTreeMap::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("source is readable");
        let (code, test_mods) = without_tests(&strip(&src));
        let dir = if matches!(
            f.file_name().and_then(|n| n.to_str()),
            Some("mod.rs" | "lib.rs" | "main.rs")
        ) {
            f.parent().expect("has a parent").to_path_buf()
        } else {
            f.with_extension("")
        };
        for m in test_mods {
            test_files.insert(dir.join(format!("{m}.rs")));
            test_files.insert(dir.join(&m).join("mod.rs"));
        }
        code_of.insert(f.clone(), code);
    }
    let mut top = BTreeSet::new();
    let mut uses = Vec::new();
    for (f, code) in &code_of {
        let path = module_path(f);
        let Some(me) = path.first() else { continue };
        top.insert(me.clone());
        if test_files.iter().any(|t| f.starts_with(t.with_extension("")) || f == t) {
            continue;
        }
        for (line, p, target) in uses_in(code, &path) {
            if &target != me {
                uses.push(Use { file: f.clone(), line, path: p, target });
            }
        }
    }
    (uses, top)
}

#[test]
fn imports_go_down_the_layers_only() {
    let (uses, top) = crate_uses();
    let mut against = Vec::new();
    for u in &uses {
        let me = module_path(&u.file)[0].clone();
        let (Some(a), Some(b)) = (layer_of(&me), layer_of(&u.target)) else { continue };
        if b >= a {
            against.push(format!(
                "{}:{}: `{}` uses `{}` ({}), which is not below it",
                u.file.strip_prefix(src_dir().parent().unwrap()).unwrap().display(),
                u.line,
                me,
                u.path,
                if a == b { "same layer" } else { "a higher layer" }
            ));
        }
    }
    assert!(
        against.is_empty(),
        "imports against the layer order\n  {}\n\n{}",
        order_line(),
        against.join("\n")
    );
    // Every top-level module has its layer.
    let unplaced: Vec<&String> = top.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(unplaced.is_empty(), "modules in no layer (add them to LAYERS): {unplaced:?}");
    // And the test sees the crate: a real import of each kind is found.
    assert!(
        uses.iter().any(|u| u.target == "model"),
        "no use of the model found: the reader is broken"
    );
}

#[test]
fn the_architecture_doc_states_this_order() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/design/architecture.md"),
    )
    .expect("docs/design/architecture.md exists");
    let line = order_line();
    assert!(
        doc.contains(&line),
        "docs/design/architecture.md should state the layer order as\n{line}"
    );
}

#[test]
fn the_reader_finds_what_it_should() {
    // Comments, strings and test code are not imports; groups and escaping supers are.
    let src = r#"
use crate::{model::job::TestDef, sys};
// use crate::cli;
/* crate::present */
const S: &str = "crate::store";
fn f<'a>(x: &'a str) -> char { 'c' }
#[cfg(test)]
mod tests { use crate::cli::main; }
fn g() { crate::engine::run(); super::super::driver::x(); }
"#;
    let (code, _) = without_tests(&strip(src));
    let here = vec!["testbed".to_string(), "zfs".to_string()];
    let names: Vec<String> = uses_in(&code, &here).into_iter().map(|(_, _, n)| n).collect();
    assert_eq!(names, vec!["model", "sys", "engine", "driver"]);
    let (_, mods) = without_tests(&strip("#[cfg(test)]\nmod tests;\n"));
    assert_eq!(mods, vec!["tests"]);
}
