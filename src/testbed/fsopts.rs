//! Which mkfs, mount and zfs options fsbench passes on: one declarative table per filesystem.
//!
//! fsbench runs mkfs as root on devices it made. An option that names another path or device
//! (`mkfs.btrfs /dev/loop11`, `mkfs.xfs -l logdev=/dev/sdb`, `mke2fs -J device=...`, `-d DIR`,
//! a mount's `journal_path=`) would make root format, write or read something fsbench did not
//! make, around `--device`, `--destroy-data` and the root-disk guard. So every option is
//! checked against the tables below when the configuration is parsed: its name must be listed
//! for that filesystem, and its value must be of the listed kind (a size, a number, one of
//! known words...). Nothing that takes a path or a device is listed, and no value may contain
//! `/`. fsbench's own devices are made after the options are checked (their names are not
//! known yet), so an option naming one is refused too.
//!
//! Each table is `&[OptSpec]` (name, value kind, help), owned by its filesystem's plug-in
//! ([`super::fs`]: `EXT4_MKFS` and `EXT4_MOUNT` in `fs/ext.rs`, `XFS_MKFS` in `fs/xfs.rs`, ...);
//! this module has the mechanism that checks options against them, and the VFS's mount
//! options every filesystem shares.

use super::config::ConfigError;
use super::fs::Fs;

/// What an option's value may be.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// No value (`-q`, `noatime`).
    Flag,
    /// An optional `0`/`1` (or no value): `barrier`, `lazy_itable_init=0`.
    OptBool,
    /// A whole number, optionally with a unit suffix (`4096`, `64m`, `1G`, `50%` when `pct`).
    Size,
    /// A plain number (digits, optionally one decimal point).
    Number,
    /// A number in octal (`mode=1777`).
    Octal,
    /// One of the listed words; `*` at the end of a listed word allows any suffix of letters,
    /// digits and `-` (`gzip-9`, `zstd:3`).
    Words(&'static [&'static str]),
    /// A short name: letters, digits, `_`, `-`, `.` (labels, usage types).
    Name,
    /// A UUID, or a word such as `clear`, `random`, `time`.
    Uuid,
    /// `uid:gid` (numbers), or nothing.
    UidGid,
    /// A comma list of features, each optionally preceded by `^` (`-O ^has_journal,huge_file`).
    Features,
    /// An SELinux context (`system_u:object_r:tmp_t:s0`).
    Context,
    /// A comma list of sub-options, each checked against the table.
    Sub(&'static [OptSpec]),
}

/// One option: its name (`-b`, `--csum`, `data`, `compression`), its value and a line of help.
#[derive(Debug, Clone, Copy)]
pub struct OptSpec {
    /// The name as typed.
    pub name: &'static str,
    /// What its value may be.
    pub kind: Kind,
    /// What it does, for messages.
    pub help: &'static str,
}

/// An [`OptSpec`], for the tables.
pub const fn o(name: &'static str, kind: Kind, help: &'static str) -> OptSpec {
    OptSpec { name, kind, help }
}

use Kind::*;

/// `on` or `off`.
pub const ONOFF: &[&str] = &["on", "off"];

/// Mount options shared by every filesystem (mount(8), the VFS).
pub const VFS_MOUNT: &[OptSpec] = &[
    o("async", Flag, ""),
    o("sync", Flag, ""),
    o("dirsync", Flag, ""),
    o("atime", Flag, ""),
    o("noatime", Flag, ""),
    o("diratime", Flag, ""),
    o("nodiratime", Flag, ""),
    o("relatime", Flag, ""),
    o("norelatime", Flag, ""),
    o("strictatime", Flag, ""),
    o("nostrictatime", Flag, ""),
    o("lazytime", Flag, ""),
    o("nolazytime", Flag, ""),
    o("dev", Flag, ""),
    o("nodev", Flag, ""),
    o("exec", Flag, ""),
    o("noexec", Flag, ""),
    o("suid", Flag, ""),
    o("nosuid", Flag, ""),
    o("iversion", Flag, ""),
    o("noiversion", Flag, ""),
    o("rw", Flag, ""),
    o("silent", Flag, ""),
    o("loud", Flag, ""),
    o("context", Context, "SELinux context"),
    o("fscontext", Context, "SELinux context"),
    o("defcontext", Context, "SELinux context"),
    o("rootcontext", Context, "SELinux context"),
];

/// The entry of `table` called `name`.
pub fn find(table: &'static [OptSpec], name: &str) -> Option<&'static OptSpec> {
    table.iter().find(|s| s.name == name)
}

/// The names of `table`, comma-separated.
pub fn names(table: &[OptSpec]) -> String {
    table.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

fn is_size(v: &str, pct: bool) -> bool {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let unit = v[digits..].to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b').filter(|u| !u.is_empty()))
        .unwrap_or(&unit);
    matches!(unit, "" | "k" | "m" | "g" | "t" | "p" | "e" | "s" | "b") || (pct && unit == "%")
}

fn word_matches(w: &str, v: &str) -> bool {
    match w.strip_suffix('*') {
        Some(prefix) => v.strip_prefix(prefix).is_some_and(|rest| {
            rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':' || c == ',')
        }),
        None => w == v,
    }
}

fn is_name(v: &str) -> bool {
    !v.is_empty()
        && !v.starts_with('-')
        && v.len() <= 64
        && v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

/// What is wrong with an option's value (the option itself is named by [`refuse`], which
/// wraps this).
#[derive(Debug, thiserror::Error)]
pub enum OptValueError {
    /// The value names a path or a device.
    #[error(
        "`{0}` is a path: fsbench passes no path or device to mkfs, mount or zfs (it makes and names its own devices)"
    )]
    Path(String),
    /// A flag was given a value.
    #[error("takes no value")]
    Unexpected,
    /// No value was given to an option that needs one.
    #[error("needs a value{}", choices(words))]
    Missing {
        /// The words it takes (empty: not a choice of words).
        words: &'static [&'static str],
    },
    /// A sub-option not in the option's table (`-l logdev=...`).
    #[error("`{name}` is not one of: {valid}")]
    UnknownSub {
        /// The sub-option's name.
        name: String,
        /// The names the table has, comma-separated.
        valid: String,
    },
    /// A sub-option's value is wrong.
    #[error("`{part}`: {source}")]
    Sub {
        /// The sub-option as given (`size=x`).
        part: String,
        /// What is wrong with its value.
        source: Box<OptValueError>,
    },
    /// The value is not of the option's kind.
    #[error("`{value}` is not {}", describe(*kind))]
    NotKind {
        /// The value given.
        value: String,
        /// What it should be.
        kind: Kind,
    },
}

/// `: WORD, WORD` (the words an option takes), or nothing.
fn choices(words: &[&str]) -> String {
    if words.is_empty() {
        String::new()
    } else {
        format!(": {}", words.join(", "))
    }
}

impl crate::sys::classify::Classify for OptValueError {
    /// Options are what the user typed.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Check `value` (`None`: none given) against `kind`; `Err` is what is wrong with it.
pub fn check_value(kind: Kind, value: Option<&str>) -> Result<(), OptValueError> {
    if let Some(v) = value {
        if v.contains('/') {
            return Err(OptValueError::Path(v.to_string()));
        }
    }
    let ok = match (kind, value) {
        (Flag, None) => true,
        (Flag, Some(_)) => return Err(OptValueError::Unexpected),
        (OptBool, None) => true,
        (OptBool, Some(v)) => v == "0" || v == "1",
        (Words(ws), None) => return Err(OptValueError::Missing { words: ws }),
        (Words(ws), Some(v)) => ws.iter().any(|w| word_matches(w, v)),
        (_, None) if matches!(kind, UidGid) => true,
        (_, None) => return Err(OptValueError::Missing { words: &[] }),
        (Size, Some(v)) => is_size(v, true) || v == "none",
        (Number, Some(v)) => {
            !v.is_empty()
                && v.bytes().filter(|&b| b == b'.').count() <= 1
                && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && v.bytes().next().is_some_and(|b| b.is_ascii_digit())
        }
        (Octal, Some(v)) => {
            !v.is_empty() && v.len() <= 5 && v.bytes().all(|b| (b'0'..=b'7').contains(&b))
        }
        (Name, Some(v)) => is_name(v),
        (Uuid, Some(v)) => {
            ["clear", "random", "time", "null", "generate"].contains(&v)
                || (v.len() <= 36 && v.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
        }
        (UidGid, Some(v)) => match v.split_once(':') {
            Some((u, g)) => {
                !u.is_empty()
                    && !g.is_empty()
                    && u.bytes().chain(g.bytes()).all(|b| b.is_ascii_digit())
            }
            None => false,
        },
        (Features, Some(v)) => v.split(',').all(|f| {
            let f = f.strip_prefix('^').unwrap_or(f);
            is_name(f)
        }),
        (Context, Some(v)) => {
            !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "_-.:,\"".contains(c))
        }
        (Sub(table), Some(v)) => {
            for part in v.split(',').filter(|p| !p.is_empty()) {
                let (k, sv) = match part.split_once('=') {
                    Some((k, sv)) => (k, Some(sv)),
                    None => (part, None),
                };
                let Some(spec) = find(table, k) else {
                    return Err(OptValueError::UnknownSub {
                        name: k.to_string(),
                        valid: names(table),
                    });
                };
                check_value(spec.kind, sv).map_err(|e| OptValueError::Sub {
                    part: part.to_string(),
                    source: Box::new(e),
                })?;
            }
            true
        }
    };
    if ok {
        Ok(())
    } else {
        Err(OptValueError::NotKind { value: value.unwrap_or("").to_string(), kind })
    }
}

fn describe(kind: Kind) -> String {
    match kind {
        Flag => "empty".into(),
        OptBool => "0 or 1".into(),
        Size => "a size (a number, optionally with k, m, g, t)".into(),
        Number => "a number".into(),
        Octal => "an octal number".into(),
        Words(ws) => format!("one of: {}", ws.join(", ").replace('*', "[-N]")),
        Name => "a name of letters, digits, `_`, `-`, `.`".into(),
        Uuid => "a UUID".into(),
        UidGid => "UID:GID".into(),
        Features => "a comma list of feature names".into(),
        Context => "an SELinux context".into(),
        Sub(t) => format!("a comma list of: {}", names(t)),
    }
}

/// The error for option `opt` of `kind`'s `what` (`mkfs`, `mount`, `property`).
pub fn refuse(kind: &str, what: &str, opt: &str, why: String) -> ConfigError {
    ConfigError::Invalid(format!(
        "{kind} {what} option `{opt}`: {why}. fsbench passes on only options that stay on the testbed it makes; remove or change it"
    ))
}

/// Check mkfs arguments (one argv entry each) against `kind`'s table (none: nothing to
/// check here).
pub fn check_mkfs(kind: Fs, args: &[String]) -> Result<(), ConfigError> {
    let Some(table) = kind.mkfs_table() else {
        return Ok(());
    };
    let kind = kind.name();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let (name, attached): (&str, Option<&str>) = if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some((n, v)) => (&a[..n.len() + 2], Some(v)),
                None => (a.as_str(), None),
            }
        } else if a.starts_with('-') && a.len() > 2 {
            (&a[..2], Some(&a[2..]))
        } else {
            (a.as_str(), None)
        };
        if !name.starts_with('-') || name == "-" {
            return Err(refuse(
                kind,
                "mkfs",
                a,
                "is not an option: mkfs would take it as a device, a path or a size (fsbench gives the devices)".into(),
            ));
        }
        let Some(spec) = find(table, name) else {
            return Err(refuse(
                kind,
                "mkfs",
                a,
                format!("is not an option fsbench passes to mkfs.{kind}; valid: {}", names(table)),
            ));
        };
        let value = match (spec.kind, attached) {
            (Flag, Some(_)) if !name.starts_with("--") => {
                return Err(refuse(kind, "mkfs", a, "give single-letter flags one by one".into()))
            }
            (Flag, v) => v,
            (_, Some(v)) => Some(v),
            (OptBool, None) => None,
            (_, None) => {
                i += 1;
                match args.get(i) {
                    Some(v) => Some(v.as_str()),
                    None => {
                        return Err(refuse(
                            kind,
                            "mkfs",
                            a,
                            format!("needs a value: {}", describe(spec.kind)),
                        ))
                    }
                }
            }
        };
        check_value(spec.kind, value).map_err(|why| {
            let shown = match value {
                Some(v) if attached.is_none() => format!("{name} {v}"),
                _ => a.clone(),
            };
            refuse(kind, "mkfs", &shown, format!("{why} ({})", spec.help))
        })?;
        i += 1;
    }
    Ok(())
}

/// Check mount options (one `NAME[=VALUE]` each) against `kind`'s table and the VFS's (no
/// table: nothing to check here).
pub fn check_mount(kind: Fs, opts: &[String]) -> Result<(), ConfigError> {
    let Some(table) = kind.mount_table() else {
        return Ok(());
    };
    let kind = kind.name();
    for opt in opts {
        let (k, v) = match opt.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (opt.as_str(), None),
        };
        let Some(spec) = find(table, k).or_else(|| find(VFS_MOUNT, k)) else {
            return Err(refuse(
                kind,
                "mount",
                opt,
                format!(
                    "is not a mount option fsbench passes for {kind}; valid: {}, {}",
                    names(table),
                    names(VFS_MOUNT)
                ),
            ));
        };
        // `dax`, `compress`, `discard`, `space_cache` also stand alone.
        if v.is_none() && matches!(spec.kind, Words(_)) && spec.help.contains("or no value") {
            continue;
        }
        check_value(spec.kind, v).map_err(|why| refuse(kind, "mount", opt, why.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(name: &str) -> Fs {
        name.parse().unwrap()
    }

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn what_users_pass_is_accepted() {
        for (k, a) in [
            (fs("ext4"), "-b 4096"),
            (fs("ext4"), "-m 0"),
            (fs("ext4"), "-E stride=16"),
            (fs("ext4"), "-O ^has_journal -E lazy_itable_init=0,lazy_journal_init=0"),
            (fs("ext4"), "-E root_owner=0:0"),
            (fs("ext4"), "-E root_owner"),
            (fs("ext4"), "-J size=16 -I 256 -i 16384 -N 1000 -T news -L lab"),
            (fs("ext4"), "-b4096"),
            (fs("xfs"), "-l size=64m"),
            (fs("xfs"), "-b size=3"),
            (fs("xfs"), "-m crc=1,reflink=0 -d agcount=4 -i size=512 -n ftype=1"),
            (fs("btrfs"), "-n 16k --csum xxhash -M -O ^no-holes"),
            (fs("btrfs"), "--csum=sha256"),
        ] {
            check_mkfs(k, &v(a)).unwrap_or_else(|e| panic!("{k} {a}: {e}"));
        }
        for (k, a) in [
            (fs("ext4"), "data=writeback,nobarrier,noatime,nodelalloc,commit=60,dirsync"),
            (fs("ext4"), "context=system_u:object_r:tmp_t:s0,barrier=0,dax"),
            (fs("xfs"), "logbsize=256k,inode64,allocsize=64k"),
            (fs("btrfs"), "compress=zstd:3,space_cache=v2,ssd,compress"),
            (fs("tmpfs"), "size=3M,mode=1777,huge=within_size,size=50%"),
        ] {
            let opts: Vec<String> = a.split(',').map(str::to_string).collect();
            check_mount(k, &opts).unwrap_or_else(|e| panic!("{k} {a}: {e}"));
        }
    }

    /// What is wrong with a value, word for word as users read it after the option's name.
    #[test]
    fn a_value_error_says_what_is_wrong() {
        let why = |kind, v: Option<&str>| check_value(kind, v).unwrap_err().to_string();
        assert_eq!(why(Flag, Some("1")), "takes no value");
        assert_eq!(why(Number, None), "needs a value");
        assert_eq!(why(Words(ONOFF), None), "needs a value: on, off");
        assert_eq!(why(Octal, Some("9")), "`9` is not an octal number");
        assert!(why(Size, Some("/dev/loop1")).starts_with("`/dev/loop1` is a path: "));
        const SUB: &[OptSpec] = &[o("size", Size, ""), o("crc", OptBool, "")];
        assert_eq!(
            why(Sub(SUB), Some("crc=1,size=x")),
            "`size=x`: `x` is not a size (a number, optionally with k, m, g, t)"
        );
        assert_eq!(why(Sub(SUB), Some("logdev=y")), "`logdev` is not one of: size, crc");
        // A path anywhere in the value is refused as a path, before its sub-options are read.
        assert!(matches!(check_value(Sub(SUB), Some("size=1/2")), Err(OptValueError::Path(_))));
        assert!(matches!(
            check_value(Sub(SUB), Some("crc=2")),
            Err(OptValueError::Sub { source, .. }) if matches!(*source, OptValueError::NotKind { .. })
        ));
    }

    #[test]
    fn paths_devices_and_unknown_options_are_refused() {
        for (k, a, want) in [
            (fs("btrfs"), "/dev/loop11", "not an option"),
            (fs("btrfs"), "-r /etc", "not an option"),
            (fs("btrfs"), "--rootdir=/etc", "not an option"),
            (fs("xfs"), "-l logdev=/dev/loop11,size=64m", "path"),
            (fs("xfs"), "-l size=64m,logdev=x", "`logdev` is not one of"),
            (fs("xfs"), "-d name=/dev/loop11", "path"),
            (fs("xfs"), "-p /etc/protofile", "not an option"),
            (fs("ext4"), "-J device=/dev/loop11", "path"),
            (fs("ext4"), "-d /etc", "not an option"),
            (fs("ext4"), "-z /tmp/undo", "not an option"),
            (fs("ext4"), "-b 4096 12345", "not an option"),
            (fs("ext4"), "-b size=1", "is not one of"),
            (fs("ext4"), "-Z", "not an option"),
            (fs("ext4"), "-qF", "one by one"),
            (fs("ext4"), "-b", "needs a value"),
        ] {
            let e = check_mkfs(k, &v(a)).unwrap_err().to_string();
            assert!(e.contains(want), "{k} {a}: {e}");
            assert!(e.contains("remove or change it"), "{e}");
        }
        for (k, a) in [
            (fs("ext4"), "journal_path=/dev/loop11"),
            (fs("ext4"), "journal_dev=1234"),
            (fs("ext4"), "data=writeback,no_such_option"),
            (fs("xfs"), "logdev=/dev/loop11"),
            (fs("xfs"), "rtdev=/dev/loop11"),
            (fs("btrfs"), "device=/dev/loop11"),
            (fs("btrfs"), "subvol=/x"),
            (fs("tmpfs"), "mpol=bind:/x"),
            (fs("ext4"), "commit=1/2"),
        ] {
            let opts: Vec<String> = a.split(',').map(str::to_string).collect();
            assert!(check_mount(k, &opts).is_err(), "{k} {a}");
        }
    }
}
