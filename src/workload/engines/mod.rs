//! The I/O engines as the workload language knows them: each engine's name, what it can do
//! (its capabilities, fio's style: flags checked once, when a test is validated, never while it
//! runs), its own keys (rows of the key table, so that parsing, errors and `docs/workloads.md`
//! know them) and their checks, which turn what a test wrote into the engine's options.
//!
//! Why an engine is declared in two places: the workload layer must know every engine's name,
//! capabilities and keys to parse and validate a test, and it sits below the engine layer, which
//! owns the runtime half (each engine's `IoEngine` impl, in `crate::engine::ioengine`). So the
//! declarative half is here, one file per engine, and the runtime half there, one file per
//! engine of the same name; one list, [`engine_list!`], names every engine once, and both
//! halves are generated from it: [`ENGINES`] here, the engine modules and the dispatch to the
//! monomorphised worker there. An engine on the list without both halves does not compile, and
//! the runtime half takes its name and capabilities from its declaration (`IoEngine::SPEC`).
//!
//! Adding an engine `foo`:
//! - `src/workload/engines/foo.rs`: `pub const SPEC: EngineSpec` (name, summary, caps, keys,
//!   options check);
//! - `src/engine/ioengine/foo.rs`: `pub struct Foo` implementing `IoEngine` with
//!   `const SPEC = &crate::workload::engines::foo::SPEC`;
//! - one line `foo: Foo,` in [`engine_list!`].
//!
//! Nothing else changes: the `engine` key's values and help, the key table, the docs' key
//! reference (regenerated with `FSBENCH_BLESS=1`), validation and the runner's dispatch follow
//! from the list.

use super::keys::Key;
use super::spec::EngineKeys;
use crate::model::job::{EngineKind, EngineOptions, OptValue};

/// The one list of engines, in the order error messages and the docs show them: each line is
/// `module: RuntimeType`, where `module` is the engine's file here and in
/// `crate::engine::ioengine`, and `RuntimeType` its `IoEngine` impl there. `$then` is a macro
/// that receives the list (see the module documentation).
macro_rules! engine_list {
    ($then:ident) => {
        $then! {
            psync: Psync,
            uring: Uring,
            libaio: Libaio,
            mmap: Mmap,
            null: Null,
        }
    };
}
pub(crate) use engine_list;

macro_rules! declare {
    ($($module:ident: $runtime:ident,)*) => {
        $(pub mod $module;)*

        /// Every engine's declaration, in [`engine_list!`]'s order.
        pub const ENGINES: &[&EngineSpec] = &[$(&$module::SPEC),*];
    };
}
engine_list!(declare);

/// The engine of a test that names none.
pub const DEFAULT_ENGINE: &str = "psync";

/// One engine, as the workload language knows it.
#[derive(Debug)]
pub struct EngineSpec {
    /// Its name, as written in workloads (`engine = "psync"`) and shown in results.
    pub name: &'static str,
    /// What it does, in a few words: the engine's part of the `engine` key's help.
    pub summary: &'static str,
    /// What it can do.
    pub caps: Caps,
    /// Its own keys (section `[[test]]`), rows of the key table ([`super::keys::keys`]).
    pub keys: &'static [Key],
    /// The engine's options for a test: `given` holds the test's values of this engine's keys
    /// (typed by the parser, bounded by the key table), `test` what else the check needs.
    /// Checks them together and fills in the defaults; the error says what to change.
    pub options: fn(given: &EngineKeys, test: &TestCtx) -> Result<EngineOptions, EngineCheckError>,
}

/// Why a test cannot use its engine as written, found when the workload is validated (before
/// anything runs): the user's to change, and each message says how.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineCheckError {
    /// `engine = "..."` names no declared engine.
    #[error("unknown engine `{name}`; known: {known}")]
    Unknown {
        /// The name written.
        name: String,
        /// The engines' names, comma-separated.
        known: String,
    },
    /// A key of another engine than the test's.
    #[error("{key} is an option of the {owner} engine; set engine = \"{owner}\" or remove it")]
    ForeignKey {
        /// The key written.
        key: String,
        /// The engine that declares it.
        owner: &'static str,
    },
    /// A fileset test on an engine that runs data tests only.
    #[error("engine = \"{engine}\" applies to data tests (file = ...); the ops of a fileset test are system calls of their own (engines that run them: {able})")]
    DataOnly {
        /// The test's engine.
        engine: &'static str,
        /// The engines that run fileset tests, comma-separated.
        able: String,
    },
    /// `iodepth` above what the engine queues.
    #[error("engine `{engine}` runs at most iodepth = {max} (one op at a time); use iodepth = 1, or engine = \"io_uring\" (an engine that queues)")]
    Depth {
        /// The test's engine.
        engine: String,
        /// Its largest queue depth.
        max: u32,
    },
    /// O_DIRECT on an engine that cannot open files so.
    #[error("engine `{engine}` cannot open files with O_DIRECT; remove direct / open = [\"direct\"] or use another engine")]
    NoDirect {
        /// The test's engine.
        engine: String,
    },
    /// O_DIRECT with op sizes drawn from a range or distribution (which may be any number of
    /// bytes); fixed sizes and splits are checked against the file's alignment when the test
    /// starts.
    #[error("O_DIRECT needs fixed sizes: a size drawn from a range may be any number of bytes, and every op's size must be a multiple of the file's direct-I/O alignment (checked when the test starts; typically 512 or 4096 bytes); use a size, or a split of sizes")]
    DrawnSizes,
    /// O_DIRECT with sizes or random offsets that are not multiples of an alignment the engine
    /// itself needs (beyond the file's).
    #[error("O_DIRECT needs fixed sizes and random offsets aligned to {align} bytes; use size and align multiples of {}", crate::model::units::fmt_bytes(*.align))]
    Misaligned {
        /// The alignment O_DIRECT needs with this engine.
        align: u64,
    },
    /// The engine's own check of its keys, or of what it needs of the test, refused them (the
    /// words are the engine's: its declaration's `options`).
    #[error("{reason}")]
    Options {
        /// The engine.
        engine: &'static str,
        /// What is wrong and how to fix it.
        reason: String,
    },
}

impl EngineCheckError {
    /// `engine`'s own check refused the test's options: `reason` says why and how to fix it.
    pub fn options(engine: &'static str, reason: impl Into<String>) -> EngineCheckError {
        EngineCheckError::Options { engine, reason: reason.into() }
    }
}

impl crate::sys::classify::Classify for EngineCheckError {
    /// The workload asks the engine for what it cannot do: the user's to change.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// What an engine's options check knows of the test.
#[derive(Debug, Clone, Copy)]
pub struct TestCtx {
    /// `iodepth`.
    pub iodepth: u32,
    /// `direct = true` on the test.
    pub direct: bool,
    /// A fileset test (`fileset = { ... }`), not a data test.
    pub fileset: bool,
    /// A data test's `file.prefill`.
    pub prefill: bool,
}

/// What an engine can do, checked once when a workload is validated (fio's engine flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Largest queue depth (`iodepth`) it accepts; 1 for an engine that does one op at a time.
    pub max_depth: u32,
    /// Every request completes inside `IoEngine::queue` (fio's `FIO_SYNCIO`): a `reap` after a
    /// `queue` never waits.
    pub sync_io: bool,
    /// Accepts files opened with O_DIRECT.
    pub direct: bool,
    /// With O_DIRECT: an alignment of transfer sizes and random offsets the engine itself needs,
    /// checked at validation; 1 for none. The file's own (`statx(STATX_DIOALIGN)`: 512 bytes on
    /// most devices) is only known at run time and checked when the test starts
    /// (`engine::direct`).
    pub direct_align: u64,
    /// Runs fileset tests (their whole-file and namespace ops are the engine trait's
    /// synchronous methods).
    pub fileset: bool,
}

impl Caps {
    /// Check a test's `iodepth` and O_DIRECT use against these capabilities; the error says
    /// what to change. `direct_sizes` lists, for O_DIRECT phases, each data op's
    /// `(fixed size or None when drawn from a distribution, random-offset alignment or None)`.
    pub fn check(
        &self,
        engine: &str,
        iodepth: u32,
        direct: bool,
        direct_sizes: &mut dyn Iterator<Item = (Option<u64>, Option<u64>)>,
    ) -> Result<(), EngineCheckError> {
        if iodepth > self.max_depth {
            return Err(EngineCheckError::Depth { engine: engine.into(), max: self.max_depth });
        }
        if direct {
            if !self.direct {
                return Err(EngineCheckError::NoDirect { engine: engine.into() });
            }
            let a = self.direct_align.max(1);
            for (size, align) in direct_sizes {
                let Some(size) = size else { return Err(EngineCheckError::DrawnSizes) };
                if size % a != 0 || align.is_some_and(|x| x % a != 0) {
                    return Err(EngineCheckError::Misaligned { align: a });
                }
            }
        }
        Ok(())
    }
}

/// The engine called `name`.
pub fn find(name: &str) -> Option<&'static EngineSpec> {
    ENGINES.iter().copied().find(|e| e.name == name)
}

/// The declaration of a test's engine (validation admits only declared engines).
pub fn spec_of(engine: &EngineKind) -> &'static EngineSpec {
    find(engine.name()).unwrap_or_else(|| {
        unreachable!("validation admits only declared engines, not `{}`", engine.name())
    })
}

/// The engines' names, comma-separated, for "known: ..." in errors.
pub fn known() -> String {
    names().join(", ")
}

/// The engines' names, in the list's order.
pub fn names() -> Vec<&'static str> {
    ENGINES.iter().map(|e| e.name).collect()
}

/// The engine that declares key `name`, and the key.
pub fn owner_of(name: &str) -> Option<(&'static EngineSpec, &'static Key)> {
    ENGINES.iter().find_map(|e| e.keys.iter().find(|k| k.name == name).map(|k| (*e, k)))
}

/// The engine of a test and its options: `name` is the `engine` key (None: the default),
/// `given` the test's engine keys. Keys of another engine are refused, then the engine's
/// capabilities that concern the whole test, then its own check.
pub fn resolve(
    name: Option<&str>,
    given: &EngineKeys,
    test: &TestCtx,
) -> Result<(EngineKind, EngineOptions), EngineCheckError> {
    let name = name.unwrap_or(DEFAULT_ENGINE);
    let spec = find(name)
        .ok_or_else(|| EngineCheckError::Unknown { name: name.into(), known: known() })?;
    for (k, _) in given.iter() {
        if !spec.keys.iter().any(|key| key.name == k) {
            let owner = owner_of(k).map_or("another", |(e, _)| e.name);
            return Err(EngineCheckError::ForeignKey { key: k.into(), owner });
        }
    }
    if test.fileset && !spec.caps.fileset {
        let able: Vec<&str> = ENGINES.iter().filter(|e| e.caps.fileset).map(|e| e.name).collect();
        return Err(EngineCheckError::DataOnly { engine: spec.name, able: able.join(", ") });
    }
    let options = (spec.options)(given, test)?;
    Ok((EngineKind::named(spec.name), options))
}

/// An engine's options check for an engine without keys.
pub fn no_options(_given: &EngineKeys, _test: &TestCtx) -> Result<EngineOptions, EngineCheckError> {
    Ok(EngineOptions::default())
}

/// The integer `key` of `given`, else `default`.
pub fn int_or(given: &EngineKeys, key: &str, default: u64) -> u64 {
    match given.get(key) {
        Some(OptValue::Int(n)) => *n,
        _ => default,
    }
}

/// The bool `key` of `given`, else `default`.
pub fn bool_or(given: &EngineKeys, key: &str, default: bool) -> bool {
    match given.get(key) {
        Some(OptValue::Bool(b)) => *b,
        _ => default,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::keys::{Section, Type};

    #[test]
    fn the_list_declares_each_engine_once_with_its_own_keys() {
        let names = names();
        assert_eq!(names, ["psync", "io_uring", "libaio", "mmap", "null"]);
        assert!(find(DEFAULT_ENGINE).is_some(), "the default engine is declared");
        let mut keys: Vec<&str> =
            ENGINES.iter().flat_map(|e| e.keys.iter().map(|k| k.name)).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "no key is declared by two engines");
        for e in ENGINES {
            assert!(e.caps.max_depth >= 1, "{}", e.name);
            for k in e.keys {
                assert_eq!(k.section, Section::Test, "{}: {}", e.name, k.name);
                assert!(
                    matches!(k.ty, Type::Int | Type::Bool | Type::Str | Type::Choice),
                    "{}: {}: the parser reads ints, bools and words",
                    e.name,
                    k.name
                );
            }
        }
    }

    #[test]
    fn another_engines_key_names_its_owner() {
        let given = EngineKeys::from_pairs(vec![("sqpoll".into(), OptValue::Bool(true))]);
        let t = TestCtx { iodepth: 1, direct: false, fileset: false, prefill: true };
        let e = resolve(Some("psync"), &given, &t).unwrap_err().to_string();
        assert!(e.contains("sqpoll is an option of the io_uring engine"), "{e}");
        let e = resolve(Some("posix"), &EngineKeys::default(), &t).unwrap_err().to_string();
        assert!(
            e.contains("unknown engine `posix`; known: psync, io_uring, libaio, mmap, null"),
            "{e}"
        );
        let fs = TestCtx { fileset: true, ..t };
        let e = resolve(Some("io_uring"), &EngineKeys::default(), &fs).unwrap_err().to_string();
        assert!(e.contains("engines that run them: psync, null"), "{e}");
        let (k, o) = resolve(None, &EngineKeys::default(), &t).unwrap();
        assert_eq!((k.name(), o), ("psync", EngineOptions::default()));
    }

    #[test]
    fn caps_reject_depth_and_direct_misuse_with_the_fix() {
        let (psync, null) = (psync::SPEC.caps, null::SPEC.caps);
        let e = psync.check("psync", 16, false, &mut std::iter::empty()).unwrap_err().to_string();
        assert!(e.contains("iodepth = 1"), "{e}");
        assert!(null.check("null", 16, false, &mut std::iter::empty()).is_ok());
        // The file's alignment is judged when the test starts: psync takes 512-byte and 100-byte
        // direct ops here; an engine with an alignment of its own refuses what misses it.
        let small = [(Some(512), Some(512)), (Some(100), None)];
        assert!(psync.check("psync", 1, true, &mut small.into_iter()).is_ok());
        let own = Caps { direct_align: 4096, ..psync };
        let e = own
            .check("own", 1, true, &mut [(Some(4096), Some(512))].into_iter())
            .unwrap_err()
            .to_string();
        assert!(e.contains("aligned to 4096"), "{e}");
        let e =
            psync.check("psync", 1, true, &mut [(None, None)].into_iter()).unwrap_err().to_string();
        assert!(e.contains("fixed sizes"), "{e}");
        assert_eq!(
            psync.check("psync", 1, true, &mut [(None, None)].into_iter()),
            Err(EngineCheckError::DrawnSizes)
        );
        assert!(psync.check("psync", 1, true, &mut [(Some(8192), None)].into_iter()).is_ok());
        let e = mmap::SPEC
            .caps
            .check("mmap", 1, true, &mut std::iter::empty())
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot open files with O_DIRECT"), "{e}");
    }
}
