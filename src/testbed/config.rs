//! Filesystem configurations: what to create, in a short CLI form and a TOML form.
//!
//! Short form: `KIND[:KEY=VALUE]...`, for example
//!
//! - `ext4`, `ext4:mount=data=writeback,nobarrier`, `ext4:mkfs=-E stride=16`
//! - `xfs:mkfs=-l size=64m:mount=logbsize=256k`
//! - `zfs:layout=raidz:devices=3:compression=lzjb:recordsize=8k`
//! - `btrfs:profile=raid1:devices=2` (`profile=DATA` or `profile=DATA/META`)
//! - any of them with `label=NAME`
//!
//! Keys: `label`, `mkfs` (split on whitespace, may repeat), `mount` (comma list, may repeat),
//! `devices`, `sched` (the I/O scheduler of the testbed's loop devices: `none`, `mq-deadline`,
//! `kyber`, `bfq`; checked against what the kernel offers when the testbed is built),
//! `layout` (zfs), `profile` (btrfs). For zfs every other `KEY=VALUE` is a dataset
//! property set with `zfs set` after the pool is created (zfs-fuse rejects properties it does not
//! know, such as `compression=lz4`, and its message is shown). A `:` segment without `=` is taken
//! as part of the previous value, so SELinux contexts such as `context=a:b:c:s0` survive.
//!
//! Every mkfs argument, mount option and zfs property is checked against the filesystem's
//! allow-list in [`super::fsopts`] when the configuration is parsed: an unknown option, or one
//! that names a path or a device (an external log or journal, another device, a directory to
//! copy in), is refused there (exit 2), before anything is made. mkfs arguments are argv
//! entries (the short form splits `mkfs=` on whitespace; the TOML form gives the list as is).
//!
//! The default label is the whole short string, so a sweep like
//! `ext4:mount=data=writeback,nobarrier ext4:mount=nodelalloc xfs` is distinguishable in output.
//!
//! TOML form (same fields, same validation):
//!
//! ```toml
//! label = "zfs-raidz"          # optional; default: the canonical short form
//! kind = "zfs"
//! mkfs_opts = []
//! mount_opts = []
//! devices = 3                  # optional; default from layout/profile
//! [zfs]
//! layout = "raidz"
//! properties = { compression = "lzjb", recordsize = "8k" }
//! ```

use super::fs::Fs;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// How a zfs pool's vdevs are arranged; the number is the device count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZfsLayout {
    /// One device.
    Single,
    /// Dynamic stripe over n devices.
    Stripe(usize),
    /// One n-way mirror.
    Mirror(usize),
    /// One raidz1 vdev of n devices.
    Raidz(usize),
    /// One raidz2 vdev of n devices.
    Raidz2(usize),
}

impl ZfsLayout {
    /// Layout names accepted by `layout=`.
    pub const NAMES: [&'static str; 5] = ["single", "stripe", "mirror", "raidz", "raidz2"];

    /// The layout's name (`single`, `stripe`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ZfsLayout::Single => "single",
            ZfsLayout::Stripe(_) => "stripe",
            ZfsLayout::Mirror(_) => "mirror",
            ZfsLayout::Raidz(_) => "raidz",
            ZfsLayout::Raidz2(_) => "raidz2",
        }
    }

    /// Number of devices the layout uses.
    pub fn devices(self) -> usize {
        match self {
            ZfsLayout::Single => 1,
            ZfsLayout::Stripe(n)
            | ZfsLayout::Mirror(n)
            | ZfsLayout::Raidz(n)
            | ZfsLayout::Raidz2(n) => n,
        }
    }

    /// The `zpool create` vdev keyword (`mirror`, `raidz`, ...), if any.
    pub fn vdev_keyword(self) -> Option<&'static str> {
        match self {
            ZfsLayout::Single | ZfsLayout::Stripe(_) => None,
            ZfsLayout::Mirror(_) => Some("mirror"),
            ZfsLayout::Raidz(_) => Some("raidz"),
            ZfsLayout::Raidz2(_) => Some("raidz2"),
        }
    }

    /// Build a layout from its name and an optional device count, checking the minimum.
    pub fn build(name: &str, devices: Option<usize>) -> Result<ZfsLayout, ConfigError> {
        // (default count, minimum count)
        let (default, min) = match name {
            "single" => (1, 1),
            "stripe" => (2, 1),
            "mirror" => (2, 2),
            "raidz" => (3, 2),
            "raidz2" => (4, 3),
            other => {
                return Err(ConfigError::Invalid(format!(
                    "unknown zfs layout `{other}`; valid: {}",
                    ZfsLayout::NAMES.join(", ")
                )))
            }
        };
        let n = devices.unwrap_or(default);
        if n < min || (name == "single" && n != 1) {
            return Err(ConfigError::Invalid(format!(
                "zfs layout {name} needs {}{min} devices, got {n}",
                if name == "single" { "exactly " } else { "at least " }
            )));
        }
        Ok(match name {
            "single" => ZfsLayout::Single,
            "stripe" => ZfsLayout::Stripe(n),
            "mirror" => ZfsLayout::Mirror(n),
            "raidz" => ZfsLayout::Raidz(n),
            _ => ZfsLayout::Raidz2(n),
        })
    }
}

/// zfs pool layout and dataset properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZfsOpts {
    /// Vdev layout.
    pub layout: ZfsLayout,
    /// Dataset properties (`compression`, `checksum`, `recordsize`, ...) set with `zfs set`.
    pub properties: Vec<(String, String)>,
}

impl Default for ZfsOpts {
    fn default() -> Self {
        ZfsOpts { layout: ZfsLayout::Single, properties: Vec::new() }
    }
}

/// One filesystem configuration: what to create and how, plus the label used in all output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawFsConfig", into = "RawFsConfig")]
pub struct FsConfig {
    /// Label used in all output; default: the short form as typed.
    pub label: String,
    /// The filesystem (its plug-in, [`super::fs`]).
    pub kind: Fs,
    /// Extra mkfs arguments, appended after fsbench's own (`-F`/`-f`, quiet).
    pub mkfs_opts: Vec<String>,
    /// Mount options (`-o`), one option per element.
    pub mount_opts: Vec<String>,
    /// zfs layout and properties (ignored for other kinds).
    pub zfs: ZfsOpts,
    /// Btrfs data and metadata profile (`mkfs.btrfs -d DATA -m META`).
    pub btrfs_profile: Option<(String, String)>,
    /// Number of devices (images) the filesystem spans; 0 for tmpfs.
    pub devices: usize,
    /// I/O scheduler for the testbed's block devices (`sched=`); `None`: the kernel's default.
    pub io_scheduler: Option<String>,
    /// The filesystem's own keys, as given and checked by its plug-in (overlay's `on=xfs`), in
    /// order; TOML: `options = { on = "xfs" }`.
    pub options: Vec<(String, String)>,
}

/// Scheduler names `sched=` accepts (blk-mq's; which ones a kernel offers is checked when the
/// testbed is built).
pub const IO_SCHEDULERS: [&str; 4] = ["none", "mq-deadline", "kyber", "bfq"];

/// A key of the short form (`KIND:KEY=VALUE`): what it sets and an example. The keys every
/// filesystem takes are [`COMMON_AXES`]; a filesystem's own are its plug-in's
/// ([`super::fs::Filesystem::own_keys`]). The parser takes its keys from these tables, and
/// `compare --help` lists them ([`axes_help`]), so the help names every key the parser accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Axis {
    /// The key; `*`: any other key (zfs: a dataset property).
    pub key: &'static str,
    /// What it sets.
    pub what: &'static str,
    /// A configuration using it.
    pub example: &'static str,
}

/// The keys every filesystem's short form takes (`sched` and `devices` where it has devices).
pub const COMMON_AXES: &[Axis] = &[
    Axis {
        key: "label",
        what: "the name every output uses (default: the whole configuration string)",
        example: "ext4:label=baseline",
    },
    Axis {
        key: "mkfs",
        what: "mkfs arguments, split on whitespace (checked against an allow-list)",
        example: "ext4:mkfs=-E stride=16",
    },
    Axis {
        key: "mount",
        what: "mount options, a comma list (checked against an allow-list)",
        example: "ext4:mount=data=writeback,nobarrier",
    },
    Axis {
        key: "devices",
        what: "how many loop devices (image files) the filesystem spans",
        example: "btrfs:profile=raid1:devices=2",
    },
    Axis {
        key: "sched",
        what: "I/O scheduler of the loop devices: none, mq-deadline, kyber, bfq",
        example: "ext4:sched=mq-deadline",
    },
];

/// The configuration keys for `compare --help`: the common ones, then each filesystem's own,
/// each with an example, from [`COMMON_AXES`] and the plug-ins' tables.
pub fn axes_help() -> String {
    let line = |key: &str, what: &str, example: &str| {
        format!(
            "  {key:<14} {what}
  {:<14} e.g. {example}
",
            ""
        )
    };
    let mut s = String::from("Configurations: KIND or KIND:KEY=VALUE[:KEY=VALUE]..., KIND one of ");
    let kinds: Vec<&str> = super::fs::all().map(|f| f.name()).collect();
    s.push_str(&kinds.join(", "));
    s.push_str(", or a directory you mounted. Keys:\n");
    for a in COMMON_AXES {
        s.push_str(&line(&format!("{}=", a.key), a.what, a.example));
    }
    for fs in super::fs::all() {
        for a in fs.own_keys() {
            let key = if a.key == "*" { "PROPERTY=".to_string() } else { format!("{}=", a.key) };
            s.push_str(&line(&key, &format!("({}) {}", fs.name(), a.what), a.example));
        }
    }
    s
}

/// Errors in a filesystem configuration, phrased so the user can fix the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The filesystem kind is not one fsbench knows.
    #[error("unknown filesystem `{0}`; valid: {valid}", valid = super::fs::names())]
    UnknownKind(String),
    /// A key that this kind does not take.
    #[error("unknown option `{key}` for {kind}; valid: {valid}")]
    UnknownKey {
        /// The filesystem kind.
        kind: Fs,
        /// The key as typed.
        key: String,
        /// Keys this kind accepts.
        valid: String,
    },
    /// Anything else wrong with the configuration.
    #[error("{0}")]
    Invalid(String),
}

impl FsConfig {
    /// A configuration of `kind` with defaults (one device, no extra options).
    pub fn new(kind: Fs) -> FsConfig {
        FsConfig {
            label: kind.name().to_string(),
            kind,
            mkfs_opts: Vec::new(),
            mount_opts: Vec::new(),
            zfs: ZfsOpts::default(),
            btrfs_profile: None,
            devices: usize::from(kind.needs_devices()),
            io_scheduler: None,
            options: Vec::new(),
        }
    }

    /// Parse the short CLI form (see the module docs). The label defaults to `s` itself.
    pub fn parse(s: &str) -> Result<FsConfig, ConfigError> {
        let s = s.trim();
        let mut segments = s.split(':');
        let kind: Fs = segments.next().unwrap_or_default().trim().parse()?;
        // Join `a:b` back when `b` has no `=` (values containing colons).
        let mut pairs: Vec<(String, String)> = Vec::new();
        for seg in segments {
            match seg.split_once('=') {
                Some((k, v)) if !k.is_empty() && !k.contains(char::is_whitespace) => {
                    pairs.push((k.to_string(), v.to_string()))
                }
                _ => match pairs.last_mut() {
                    Some((_, v)) => {
                        v.push(':');
                        v.push_str(seg);
                    }
                    None => {
                        return Err(ConfigError::Invalid(format!(
                            "`{seg}` in `{s}` is not KEY=VALUE"
                        )))
                    }
                },
            }
        }
        let mut raw = RawFsConfig {
            label: None,
            kind,
            mkfs_opts: Vec::new(),
            mount_opts: Vec::new(),
            devices: None,
            zfs: None,
            btrfs_profile: None,
            io_scheduler: None,
            options: Vec::new(),
        };
        for (k, v) in pairs {
            match k.as_str() {
                "label" => raw.label = Some(v),
                "mkfs" => raw.mkfs_opts.extend(v.split_whitespace().map(str::to_string)),
                "mount" => raw
                    .mount_opts
                    .extend(v.split(',').filter(|o| !o.is_empty()).map(str::to_string)),
                "devices" => {
                    raw.devices = Some(v.parse().map_err(|_| {
                        ConfigError::Invalid(format!("devices={v}: not a whole number"))
                    })?)
                }
                "sched" => raw.io_scheduler = Some(v),
                // Every other key is the filesystem's own (its plug-in takes it or refuses it).
                _ => raw.options.push((k, v)),
            }
        }
        let explicit_label = raw.label.as_deref().is_some_and(|l| !l.trim().is_empty());
        let mut cfg = FsConfig::try_from(raw)?;
        if !explicit_label {
            cfg.label = s.to_string();
        }
        // The label is shown on the terminal: no raw control characters.
        cfg.label = crate::workload::limits::escape_controls(&cfg.label);
        Ok(cfg)
    }

    /// Parse the TOML form (see the module docs).
    pub fn from_toml(s: &str) -> Result<FsConfig, ConfigError> {
        toml::from_str(s).map_err(|e| ConfigError::Invalid(e.to_string()))
    }

    /// The canonical short form (label omitted), e.g. `zfs:layout=mirror:devices=2`.
    pub fn short_form(&self) -> String {
        let mut s = self.kind.name().to_string();
        if !self.mkfs_opts.is_empty() {
            s.push_str(&format!(":mkfs={}", self.mkfs_opts.join(" ")));
        }
        if !self.mount_opts.is_empty() {
            s.push_str(&format!(":mount={}", self.mount_opts.join(",")));
        }
        s.push_str(&self.kind.short_form_mid(self));
        if self.devices > 1 {
            s.push_str(&format!(":devices={}", self.devices));
        }
        if let Some(sc) = &self.io_scheduler {
            s.push_str(&format!(":sched={sc}"));
        }
        s.push_str(&self.kind.short_form_tail(self));
        s
    }

    /// Mount options joined for `mount -o`, or `None` when there are none.
    pub fn mount_opts_joined(&self) -> Option<String> {
        (!self.mount_opts.is_empty()).then(|| self.mount_opts.join(","))
    }
}

impl fmt::Display for FsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)
    }
}

impl FromStr for FsConfig {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        FsConfig::parse(s)
    }
}

/// The serialised shape (TOML/JSON); converted to [`FsConfig`] through one validation path.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFsConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    kind: Fs,
    #[serde(default)]
    mkfs_opts: Vec<String>,
    #[serde(default)]
    mount_opts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    devices: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    zfs: Option<RawZfs>,
    /// `DATA` or `DATA/META`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    btrfs_profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    io_scheduler: Option<String>,
    /// The filesystem's own keys (`options = { on = "xfs" }`).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "props_table")]
    options: Vec<(String, String)>,
}

/// The TOML form's `[zfs]` table.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawZfs {
    /// `layout = "raidz"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// `properties = { compression = "lzjb" }`.
    #[serde(default, with = "props_table")]
    pub properties: Vec<(String, String)>,
}

/// What a configuration says beyond the keys every filesystem takes, handed to its plug-in
/// ([`super::fs::Filesystem::configure`]), which takes what is its own; anything left is
/// refused. Also what a plug-in gives back for the serialised form
/// ([`super::fs::Filesystem::given`]).
#[derive(Debug, Clone, Default)]
pub struct Given {
    /// `devices=N`, if given.
    pub devices: Option<usize>,
    /// Keys of the short form (or the TOML `options` table) that are not common ones.
    pub keys: Vec<(String, String)>,
    /// The TOML `[zfs]` table.
    pub zfs: Option<RawZfs>,
    /// The TOML `btrfs_profile` (`DATA` or `DATA/META`).
    pub btrfs_profile: Option<String>,
}

/// zfs properties as a TOML table (`{ compression = "lzjb" }`), kept in a stable order.
mod props_table {
    use super::BTreeMap;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(v.iter().map(|(k, v)| (k, v)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
        Ok(BTreeMap::<String, String>::deserialize(d)?.into_iter().collect())
    }
}

impl TryFrom<RawFsConfig> for FsConfig {
    type Error = ConfigError;

    fn try_from(raw: RawFsConfig) -> Result<FsConfig, ConfigError> {
        let kind = raw.kind;
        let mut cfg = FsConfig::new(kind);
        cfg.mkfs_opts = raw.mkfs_opts;
        cfg.mount_opts = raw.mount_opts;
        let valid_keys = || {
            let mut valid: Vec<&str> = COMMON_AXES.iter().map(|a| a.key).collect();
            valid.extend(kind.own_keys().iter().map(|a| a.key));
            valid.join(", ")
        };
        // A key the filesystem does not know is refused first, as the user typed it.
        if let Some((k, _)) = raw
            .options
            .iter()
            .find(|(k, _)| !kind.own_keys().iter().any(|a| a.key == k.as_str() || a.key == "*"))
        {
            return Err(ConfigError::UnknownKey { kind, key: k.clone(), valid: valid_keys() });
        }
        if let Some(sc) = raw.io_scheduler {
            if !kind.needs_devices() {
                return Err(ConfigError::Invalid(format!(
                    "sched={sc}: {kind} has no block device to schedule"
                )));
            }
            if !IO_SCHEDULERS.contains(&sc.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "unknown I/O scheduler `{sc}`; valid: {}",
                    IO_SCHEDULERS.join(", ")
                )));
            }
            cfg.io_scheduler = Some(sc);
        }
        if raw.devices == Some(0) && kind.needs_devices() {
            return Err(ConfigError::Invalid(format!("{kind} needs at least one device")));
        }
        super::fsopts::check_mkfs(kind, &cfg.mkfs_opts)?;
        super::fsopts::check_mount(kind, &cfg.mount_opts)?;
        let mut given = Given {
            devices: raw.devices,
            keys: raw.options,
            zfs: raw.zfs,
            btrfs_profile: raw.btrfs_profile,
        };
        kind.configure(&mut given, &mut cfg)?;
        if given.zfs.is_some() {
            return Err(ConfigError::Invalid(format!("zfs options given for {kind}")));
        }
        if given.btrfs_profile.is_some() {
            return Err(ConfigError::Invalid(format!("btrfs_profile given for {kind}")));
        }
        if let Some((k, _)) = given.keys.first() {
            return Err(ConfigError::UnknownKey { kind, key: k.clone(), valid: valid_keys() });
        }
        cfg.label = match raw.label {
            Some(l) if !l.trim().is_empty() => l,
            _ => cfg.short_form(),
        };
        Ok(cfg)
    }
}

impl From<FsConfig> for RawFsConfig {
    fn from(c: FsConfig) -> RawFsConfig {
        let given = c.kind.given(&c);
        RawFsConfig {
            label: Some(c.label),
            kind: c.kind,
            mkfs_opts: c.mkfs_opts,
            mount_opts: c.mount_opts,
            devices: given.devices,
            zfs: given.zfs,
            btrfs_profile: given.btrfs_profile,
            io_scheduler: c.io_scheduler,
            options: given.keys,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key the help lists parses in its example, and every key the parser accepts
    /// (common or a filesystem's own) is in the help.
    #[test]
    fn every_configuration_key_is_in_the_help_with_an_example_that_parses() {
        let help = axes_help();
        let own = crate::testbed::fs::all().flat_map(|f| f.own_keys().iter());
        for a in COMMON_AXES.iter().chain(own) {
            let key = if a.key == "*" { "PROPERTY=".to_string() } else { format!("{}=", a.key) };
            assert!(help.contains(&format!("  {key}")), "{key} missing:\n{help}");
            assert!(help.contains(a.example), "{}:\n{help}", a.example);
            let cfg = FsConfig::parse(a.example)
                .unwrap_or_else(|e| panic!("the example {} does not parse: {e}", a.example));
            assert!(!cfg.label.is_empty());
            if a.key != "*" {
                assert!(a.example.contains(&format!(":{}=", a.key)), "{}", a.example);
            }
        }
        // A key nobody declares is refused, and the message lists the declared ones.
        let e = FsConfig::parse("ext4:stripes=2").unwrap_err().to_string();
        for a in COMMON_AXES {
            assert!(e.contains(a.key), "{e}");
        }
    }

    #[test]
    fn plain_kinds() {
        for k in crate::testbed::fs::all() {
            let c = FsConfig::parse(k.name()).unwrap();
            assert_eq!(c.kind, k);
            assert_eq!(c.label, k.name());
            assert_eq!(c.devices, usize::from(k != "tmpfs"));
        }
    }

    #[test]
    fn unknown_kind_lists_valid_ones() {
        let e = FsConfig::parse("ext5").unwrap_err();
        assert_eq!(e, ConfigError::UnknownKind("ext5".into()));
        let msg = e.to_string();
        for k in crate::testbed::fs::all() {
            assert!(msg.contains(k.name()), "{msg}");
        }
    }

    #[test]
    fn mount_options_and_label_default() {
        let c = FsConfig::parse("ext4:mount=data=writeback,nobarrier").unwrap();
        assert_eq!(c.mount_opts, ["data=writeback", "nobarrier"]);
        assert_eq!(c.label, "ext4:mount=data=writeback,nobarrier");
        assert_eq!(c.mount_opts_joined().as_deref(), Some("data=writeback,nobarrier"));
    }

    #[test]
    fn sweep_labels_are_distinct() {
        let labels: Vec<String> =
            ["ext4:mount=data=writeback,nobarrier", "ext4:mount=nodelalloc", "xfs"]
                .iter()
                .map(|s| FsConfig::parse(s).unwrap().label)
                .collect();
        assert_eq!(labels, ["ext4:mount=data=writeback,nobarrier", "ext4:mount=nodelalloc", "xfs"]);
    }

    #[test]
    fn explicit_label() {
        let c = FsConfig::parse("ext4:mount=nodelalloc:label=nodelalloc").unwrap();
        assert_eq!(c.label, "nodelalloc");
        assert_eq!(c.mount_opts, ["nodelalloc"]);
    }

    #[test]
    fn mkfs_options_split_on_whitespace() {
        let c = FsConfig::parse("ext4:mkfs=-E stride=16").unwrap();
        assert_eq!(c.mkfs_opts, ["-E", "stride=16"]);
        let c = FsConfig::parse("xfs:mkfs=-l size=64m:mount=logbsize=256k").unwrap();
        assert_eq!(c.kind, "xfs");
        assert_eq!(c.mkfs_opts, ["-l", "size=64m"]);
        assert_eq!(c.mount_opts, ["logbsize=256k"]);
    }

    #[test]
    fn colon_inside_a_value_is_kept() {
        let c = FsConfig::parse("ext4:mount=context=system_u:object_r:tmp_t:s0").unwrap();
        assert_eq!(c.mount_opts, ["context=system_u:object_r:tmp_t:s0"]);
    }

    #[test]
    fn control_characters_in_labels_are_escaped() {
        let c = FsConfig::parse("ext4:label=a\u{1b}[2Jb").unwrap();
        assert_eq!(c.label, "a\\u{1b}[2Jb");
    }

    #[test]
    fn zfs_layout_and_properties() {
        let c =
            FsConfig::parse("zfs:layout=raidz:devices=3:compression=lz4:recordsize=8k").unwrap();
        assert_eq!(c.zfs.layout, ZfsLayout::Raidz(3));
        assert_eq!(c.devices, 3);
        assert_eq!(
            c.zfs.properties,
            [("compression".to_string(), "lz4".to_string()), ("recordsize".into(), "8k".into())]
        );
        assert_eq!(FsConfig::parse("zfs:layout=mirror").unwrap().zfs.layout, ZfsLayout::Mirror(2));
        assert_eq!(FsConfig::parse("zfs:devices=2").unwrap().zfs.layout, ZfsLayout::Stripe(2));
        assert_eq!(FsConfig::parse("zfs").unwrap().zfs.layout, ZfsLayout::Single);
        assert_eq!(ZfsLayout::Raidz2(4).vdev_keyword(), Some("raidz2"));
    }

    #[test]
    fn zfs_layout_errors() {
        assert!(FsConfig::parse("zfs:layout=mirror:devices=1").is_err());
        assert!(FsConfig::parse("zfs:layout=raidz3").unwrap_err().to_string().contains("raidz2"));
        assert!(FsConfig::parse("zfs:layout=single:devices=2").is_err());
    }

    #[test]
    fn io_scheduler_key() {
        let c = FsConfig::parse("ext4:sched=bfq").unwrap();
        assert_eq!(c.io_scheduler.as_deref(), Some("bfq"));
        assert_eq!(c.short_form(), "ext4:sched=bfq");
        let back = FsConfig::from_toml(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back.io_scheduler.as_deref(), Some("bfq"));
        let e = FsConfig::parse("xfs:sched=cfq").unwrap_err().to_string();
        assert!(e.contains("unknown I/O scheduler `cfq`") && e.contains("mq-deadline"), "{e}");
        let e = FsConfig::parse("tmpfs:sched=none").unwrap_err().to_string();
        assert!(e.contains("no block device"), "{e}");
    }

    #[test]
    fn btrfs_profiles() {
        let c = FsConfig::parse("btrfs:profile=raid1:devices=2").unwrap();
        assert_eq!(c.btrfs_profile, Some(("raid1".into(), "raid1".into())));
        assert_eq!(c.devices, 2);
        let c = FsConfig::parse("btrfs:profile=raid0/raid1").unwrap();
        assert_eq!(c.btrfs_profile, Some(("raid0".into(), "raid1".into())));
        assert_eq!(c.devices, 2, "device count defaults to the profile's minimum");
        assert!(FsConfig::parse("btrfs:profile=raid1:devices=1").is_err());
        assert!(FsConfig::parse("btrfs:profile=raid9").is_err());
    }

    #[test]
    fn bad_keys_and_values() {
        let e = FsConfig::parse("ext4:layout=mirror").unwrap_err();
        assert!(matches!(e, ConfigError::UnknownKey { .. }), "{e}");
        assert!(e.to_string().contains("mount"), "{e}");
        assert!(FsConfig::parse("ext4:devices=2").is_err());
        assert!(FsConfig::parse("ext4:devices=two").is_err());
        assert!(FsConfig::parse("tmpfs:mkfs=-q").is_err());
        assert!(FsConfig::parse("xfs:nonsense").is_err());
    }

    #[test]
    fn options_naming_devices_or_paths_are_refused_when_parsed() {
        for s in [
            "btrfs:mkfs=/dev/loop11",
            "xfs:mkfs=-l logdev=/dev/loop11,size=64m",
            "ext4:mkfs=-J device=/dev/loop11",
            "ext4:mkfs=-d /etc",
            "ext4:mount=journal_path=/dev/loop11",
            "xfs:mount=logdev=/dev/loop11",
            "zfs:compression=/dev/loop11",
        ] {
            let e = FsConfig::parse(s).unwrap_err().to_string();
            assert!(e.contains("remove or change it"), "{s}: {e}");
        }
        let e = FsConfig::from_toml("kind = \"btrfs\"\nmkfs_opts = [\"/dev/loop11\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an option"), "{e}");
    }

    #[test]
    fn toml_form() {
        let c = FsConfig::from_toml(
            r#"
            kind = "zfs"
            devices = 3
            [zfs]
            layout = "raidz"
            properties = { compression = "lzjb", recordsize = "8k" }
            "#,
        )
        .unwrap();
        assert_eq!(c.zfs.layout, ZfsLayout::Raidz(3));
        assert_eq!(c.label, "zfs:layout=raidz:devices=3:compression=lzjb:recordsize=8k");
        let c = FsConfig::from_toml(
            "label = \"wb\"\nkind = \"ext4\"\nmount_opts = [\"data=writeback\"]\n",
        )
        .unwrap();
        assert_eq!(c.label, "wb");
        assert_eq!(c.mount_opts, ["data=writeback"]);
        assert!(FsConfig::from_toml("kind = \"ext5\"").is_err());
        assert!(FsConfig::from_toml("kind = \"ext4\"\nbogus = 1").is_err());
    }

    #[test]
    fn toml_round_trip() {
        for s in [
            "zfs:layout=mirror:devices=2:checksum=sha256",
            "btrfs:profile=raid0/raid1",
            "ext4:mkfs=-E stride=16",
        ] {
            let c = FsConfig::parse(s).unwrap();
            let text = toml::to_string(&c).unwrap();
            let back = FsConfig::from_toml(&text).unwrap();
            assert_eq!(back, c, "{text}");
            let reparsed = FsConfig::parse(&c.short_form()).unwrap();
            assert_eq!(reparsed.kind, c.kind);
            assert_eq!(reparsed.devices, c.devices);
        }
    }
}
