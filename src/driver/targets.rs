//! The targets of a `run` or a `compare`: directories the user mounted and testbeds fsbench
//! builds, from the command line's words to torn-down filesystems.
//!
//! [`TargetSet::new`] validates everything before any I/O (labels, directories, configurations),
//! [`TargetSet::check`] what the system must have (root, tools, free space),
//! [`TargetSet::up`] brings the testbeds up (their guards tear them down on every way out), and
//! [`TargetSet::teardown`] removes them, reporting what could not be removed.

use super::Targets;
use crate::engine::Target;
use crate::model::testbed::TestbedEnv;
use crate::testbed::{self, FsConfig, Testbed, TestbedOptions};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// What the user asked to run on.
#[derive(Debug, Clone)]
pub enum Spec {
    /// `run --dir DIR`: an existing directory.
    Dir(PathBuf),
    /// `run --fs CONFIG`: a testbed.
    Fs(String),
    /// A `compare` argument: a directory if one exists by that name, else a configuration.
    DirOrFs(String),
}

/// What is wrong with the targets given (nothing was run; exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// A directory that cannot be used.
    #[error("--dir {dir}: {why}")]
    BadDir {
        /// The directory.
        dir: PathBuf,
        /// Why, and what to do.
        why: String,
    },
    /// Neither a directory nor a configuration.
    #[error("`{given}` is neither a directory nor a filesystem configuration: {why}")]
    NotDirOrConfig {
        /// What was given.
        given: String,
        /// Why the configuration did not parse.
        why: String,
    },
    /// A configuration that does not parse.
    #[error("{0}")]
    BadConfig(String),
    /// The same label twice.
    #[error(
        "configuration `{0}` is given twice; give repeats distinct labels, e.g. {0}:label={0}-2"
    )]
    Duplicate(String),
    /// Testbeds need root.
    #[error("{0}")]
    NeedsRoot(String),
    /// The suite's files do not fit.
    #[error(transparent)]
    NoSpace(#[from] crate::workload::limits::LimitError),
    /// A data test that writes until the filesystem is full, asked to run in a directory.
    #[error("test {test} ({name}) writes until the filesystem is full (amount.fill, fio's fill_device), and the directory {dir} is on a filesystem fsbench did not make: it fills only a testbed it made; nothing was run: run it with --fs (e.g. --fs ext4 --size 1G) or compare configurations, or on a testbed kept by `fsbench testbed up` (--dir or fio's --directory on its mount point), or give the job a size")]
    FillNeedsTestbed {
        /// The test's id.
        test: String,
        /// The test's name.
        name: String,
        /// The directory.
        dir: PathBuf,
    },
}

impl crate::sys::classify::Classify for TargetError {
    /// What the user gave to run on is at fault; nothing was run.
    fn is_bad_input(&self) -> bool {
        true
    }
}

enum Side {
    Dir { path: PathBuf, label: String },
    Bed { config: FsConfig, opts: Box<TestbedOptions>, bed: Option<Box<Testbed>>, from_fs: bool },
}

/// The targets of one command, in order (the first is a comparison's baseline).
pub struct TargetSet(Vec<Side>);

fn check_dir(dir: &Path) -> Result<(), TargetError> {
    let bad = |why: String| TargetError::BadDir { dir: dir.to_path_buf(), why };
    let meta = std::fs::metadata(dir)
        .map_err(|e| bad(format!("{e}; give an existing directory on the filesystem to test")))?;
    if !meta.is_dir() {
        return Err(bad("is not a directory".into()));
    }
    if rustix::fs::access(dir, rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK).is_err()
    {
        return Err(bad("is not writable by this user; pick a directory you can write to".into()));
    }
    Ok(())
}

impl TargetSet {
    /// Validate `specs`; `options` sizes and places a testbed for a configuration.
    pub fn new(
        specs: &[Spec],
        options: &dyn Fn(&FsConfig) -> TestbedOptions,
    ) -> Result<TargetSet, TargetError> {
        let mut sides = Vec::new();
        let mut labels = std::collections::HashSet::new();
        for s in specs {
            let bed = |config: FsConfig, from_fs| Side::Bed {
                opts: Box::new(options(&config)),
                config,
                bed: None,
                from_fs,
            };
            let side = match s {
                Spec::Dir(d) => {
                    check_dir(d)?;
                    Side::Dir { path: d.clone(), label: d.display().to_string() }
                }
                Spec::Fs(c) => bed(
                    FsConfig::parse(c).map_err(|e| TargetError::BadConfig(e.to_string()))?,
                    true,
                ),
                Spec::DirOrFs(c) if Path::new(c).is_dir() => Side::Dir {
                    path: PathBuf::from(c),
                    label: crate::workload::limits::escape_controls(c),
                },
                Spec::DirOrFs(c) => bed(
                    FsConfig::parse(c).map_err(|e| TargetError::NotDirOrConfig {
                        given: c.clone(),
                        why: e.to_string(),
                    })?,
                    false,
                ),
            };
            let label = match &side {
                Side::Dir { label, .. } => label.clone(),
                Side::Bed { config, .. } => config.label.clone(),
            };
            if !labels.insert(label.clone()) {
                return Err(TargetError::Duplicate(label));
            }
            sides.push(side);
        }
        Ok(TargetSet(sides))
    }

    /// Give every testbed the same image size: the largest any of them needs (a kind's minimum,
    /// e.g. xfs's 300 MiB, raises it for all), so no result is flattered by a bigger device.
    /// Says so when that differs from `asked` (`--size`).
    pub fn same_image_size(&mut self, asked: Option<u64>) {
        let sizes = self.0.iter().filter_map(|s| match s {
            Side::Bed { opts, .. } => Some(opts.size_bytes),
            Side::Dir { .. } => None,
        });
        let Some(size) = sizes.max() else { return };
        if let Some(asked) = asked.filter(|&asked| asked != size) {
            eprintln!(
                "fsbench: note: --size {} is below what one configuration needs; every configuration gets {} images",
                crate::model::units::fmt_bytes(asked),
                crate::model::units::fmt_bytes(size)
            );
        }
        for s in self.0.iter_mut() {
            if let Side::Bed { opts, .. } = s {
                opts.size_bytes = size;
            }
        }
    }

    /// Check that `suite`'s files fit: in each directory, and on each testbed of `run --fs`
    /// that is up (call it again after [`TargetSet::up`]).
    ///
    /// A testbed not yet up is checked against its image size (a `--size` smaller than a test's
    /// files, memory-relative sizes such as `freemem/2` included, as they were resolved when
    /// the suite was loaded); one that is up, against its mounted filesystem's free space.
    pub fn check_space(&self, suite: &crate::model::job::Suite) -> Result<(), TargetError> {
        use crate::workload::limits;
        for s in &self.0 {
            match s {
                Side::Dir { path, .. } => {
                    limits::check_space(suite, path, limits::DIR_REMEDY)
                        .map_err(TargetError::NoSpace)?;
                }
                Side::Bed { bed: Some(b), .. } => {
                    limits::check_space(suite, b.mountpoint(), limits::BED_REMEDY)
                        .map_err(TargetError::NoSpace)?;
                }
                Side::Bed { bed: None, opts, config, .. } => {
                    limits::check_fits(suite, opts.size_bytes, &config.label)
                        .map_err(TargetError::NoSpace)?;
                }
            }
        }
        Ok(())
    }

    /// Refuse, before any I/O, a data test that writes until its filesystem is full
    /// ([`Amount::Fill`](crate::model::job::Amount::Fill) in a data phase, its own or a
    /// role's: fio's `fill_device`) when a target is a directory that is not on a testbed
    /// kept by `fsbench testbed up` ([`testbed::cleanup::kept_testbed_holding`]): fsbench
    /// fills only a testbed it made, never the machine's own filesystem. (A fileset's fill
    /// stops at its share of the filesystem and is not refused.)
    pub fn check_fill(&self, suite: &crate::model::job::Suite) -> Result<(), TargetError> {
        use crate::model::job::{Amount, Pattern};
        let fills = |p: &crate::model::job::PhaseDef| {
            matches!(p.amount, Amount::Fill(_)) && matches!(p.pattern, Pattern::Data(_))
        };
        let Some(t) = suite
            .tests
            .iter()
            .find(|t| t.phases.iter().any(fills) || t.roles.iter().any(|r| fills(&r.phase)))
        else {
            return Ok(());
        };
        // A directory on a kept testbed is one fsbench made; the state's records say which
        // (unreadable records: not known to be one, so refused).
        let state = testbed::StateDir::default();
        let on_kept =
            |dir: &Path| matches!(testbed::cleanup::kept_testbed_holding(&state, dir), Ok(Some(_)));
        match self.0.iter().find_map(|s| match s {
            Side::Dir { path, .. } if !on_kept(path) => Some(path),
            Side::Dir { .. } | Side::Bed { .. } => None,
        }) {
            Some(dir) => Err(TargetError::FillNeedsTestbed {
                test: crate::workload::limits::escape_controls(&t.id),
                name: t.name.clone(),
                dir: dir.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Check what building the testbeds needs (root, tools, space on the host), before any
    /// I/O.
    pub fn check(&self) -> anyhow::Result<()> {
        let beds: Vec<(&FsConfig, &TestbedOptions, bool)> = self
            .0
            .iter()
            .filter_map(|s| match s {
                Side::Bed { config, opts, from_fs, .. } => Some((config, &**opts, *from_fs)),
                Side::Dir { .. } => None,
            })
            .collect();
        if let Some((config, _, from_fs)) = beds.first() {
            if !crate::sys::is_root() {
                let msg = if *from_fs {
                    format!(
                        "--fs {} builds a filesystem on loop devices, which needs root; without root use --dir on a filesystem you mounted",
                        config.label
                    )
                } else {
                    "building filesystems (image files, loop devices, mkfs, mount, zfs-fuse) needs root; run as root, \
                     or compare directories you mounted yourself: fsbench compare /mnt/a /mnt/b"
                        .into()
                };
                return Err(TargetError::NeedsRoot(msg).into());
            }
        }
        for (config, opts, _) in beds {
            testbed::preflight::check(config, opts.size_bytes, false)
                .with_context(|| format!("checking what {} needs", config.label))?;
        }
        Ok(())
    }

    /// Bring every testbed up, saying so on stderr. Returns false when interrupted before all
    /// were up (those up are torn down by their guards when the set is dropped).
    pub fn up(&mut self) -> anyhow::Result<bool> {
        for s in self.0.iter_mut() {
            if let Side::Bed { config, opts, bed, .. } = s {
                if crate::sys::signals::interrupted() {
                    return Ok(false);
                }
                eprintln!("fsbench: setting up {}", testbed::sizing::describe(opts, config));
                let b = match Testbed::up(config, opts) {
                    Ok(b) => b,
                    // Ctrl-C during set-up: mkfs or mount saw the signal too; the guards removed
                    // what was made (this testbed's and, when the set is dropped, the others').
                    Err(_) if crate::sys::signals::interrupted() => {
                        eprintln!("fsbench: interrupted during set-up; nothing is left behind");
                        return Ok(false);
                    }
                    Err(e) => {
                        return Err(
                            anyhow::Error::new(e).context(format!("setting up {}", config.label))
                        )
                    }
                };
                *bed = Some(Box::new(b));
            }
        }
        Ok(true)
    }

    /// Tear every testbed down; the error names each that could not be removed.
    pub fn teardown(&mut self) -> anyhow::Result<()> {
        let mut errors = Vec::new();
        for s in self.0.iter_mut() {
            if let Side::Bed { config, bed: Some(_), .. } = s {
                let label = config.label.clone();
                if let Side::Bed { bed, .. } = s {
                    if let Some(b) = bed.take() {
                        if let Err(e) = b.teardown() {
                            errors.push(format!("{label}: {e}"));
                        }
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(anyhow::anyhow!(
                "could not remove every testbed: {}; run `fsbench testbed cleanup`",
                errors.join("; ")
            ))
        }
    }
}

impl Targets for TargetSet {
    fn count(&self) -> usize {
        self.0.len()
    }
    fn target(&self, i: usize) -> Target<'_> {
        match &self.0[i] {
            Side::Dir { path, label } => {
                let mut t = Target::dir(path);
                t.label = label.clone();
                t
            }
            Side::Bed { bed: Some(b), .. } => b.target(),
            Side::Bed { config, .. } => {
                unreachable!("testbed {} is up while the suite runs", config.label)
            }
        }
    }
    fn env(&self, i: usize) -> Option<TestbedEnv> {
        match &self.0[i] {
            Side::Bed { bed: Some(b), .. } => Some(b.environment()),
            _ => None,
        }
    }
    fn refresh(&mut self, i: usize) -> anyhow::Result<()> {
        if let Side::Bed { config, opts, bed, .. } = &mut self.0[i] {
            if let Some(b) = bed.take() {
                b.teardown().with_context(|| format!("tearing down {}", config.label))?;
            }
            let b = Testbed::up(config, opts)
                .with_context(|| format!("setting up {}", config.label))?;
            *bed = Some(Box::new(b));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(_: &FsConfig) -> TestbedOptions {
        TestbedOptions::default()
    }

    #[test]
    fn labels_must_differ_and_words_must_mean_something() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().display().to_string();
        let e = TargetSet::new(&[Spec::DirOrFs(dir.clone()), Spec::DirOrFs(dir.clone())], &opts)
            .err()
            .unwrap();
        assert!(matches!(e, TargetError::Duplicate(_)), "{e}");
        let e = TargetSet::new(&[Spec::DirOrFs("nofs".into())], &opts).err().unwrap();
        assert!(e.to_string().contains("neither a directory nor"), "{e}");
        let e = TargetSet::new(&[Spec::Dir(d.path().join("missing"))], &opts).err().unwrap();
        assert!(e.to_string().contains("give an existing directory"), "{e}");
        let set =
            TargetSet::new(&[Spec::Dir(d.path().into()), Spec::DirOrFs("ext4".into())], &opts)
                .unwrap();
        assert_eq!(set.count(), 2);
        assert_eq!(set.target(0).label, dir);
        assert!(set.env(0).is_none());
    }
}
