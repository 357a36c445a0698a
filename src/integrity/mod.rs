//! Data integrity: what each filesystem does with a corrupted block (`fsbench integrity`).
//!
//! For each configuration and each (target, fault) case, on a fresh testbed (so cases cannot
//! affect each other):
//!
//! 1. write the known data set ([`dataset`]: directories and files of verifiable blocks,
//!    [`block`]) and pick the target block with the seed;
//! 2. ask the filesystem's tools where the block is (FIEMAP, `btrfs inspect-internal
//!    map-logical`), take the filesystem offline (unmount, or export the pool), and find every
//!    copy by scanning the images for the block's header ([`locate`]);
//! 3. write the fault over the chosen copies in the image files ([`fault`]; only the testbed's
//!    own images, only while offline);
//! 4. bring the filesystem online with cold caches, read the whole data set back, run the
//!    filesystem's scrub or checker ([`check`]), take it offline and online again, read again;
//! 5. decide the outcome from that evidence ([`matrix::classify`]), keeping the block, the
//!    offsets, the tool output and the kernel log lines of the case.
//!
//! The idea and the fault model are IRON file systems (Prabhakaran et al., SOSP 2005), which did
//! this by hand per block type for ext3, ReiserFS and JFS.

use crate::model::block;
pub mod check;
pub mod dataset;
pub mod fault;
pub mod locate;
pub mod matrix;
pub mod meta;
pub mod target;

pub use fault::Fault;
pub use matrix::{Case, ConfigMatrix, Outcome};
pub use target::Target;

use crate::testbed::fs::Untestable;
use crate::testbed::{FsConfig, Testbed, TestbedError, TestbedOptions};
use dataset::DataSet;
use std::path::PathBuf;
use std::time::Instant;

/// What to run.
#[derive(Debug, Clone)]
pub struct IntegrityOptions {
    /// Seed of the data set, the target blocks and the faults' bytes.
    pub seed: u64,
    /// Also damage metadata blocks (kernel error paths).
    pub metadata: bool,
    /// Faults to inject.
    pub faults: Vec<Fault>,
    /// Where and how big the testbeds are.
    pub testbed: TestbedOptions,
}

/// Errors that stop a configuration (a case's own failures are recorded in the case).
#[derive(Debug, thiserror::Error)]
pub enum IntegrityError {
    /// The testbed could not be built or used.
    #[error(transparent)]
    Testbed(#[from] TestbedError),
    /// This configuration cannot be tested.
    #[error(transparent)]
    Unsupported(#[from] Untestable),
    /// Ctrl-C or SIGTERM: the case stopped where it was (its testbed torn down).
    #[error("interrupted")]
    Interrupted,
}

/// Whether Ctrl-C or SIGTERM asked fsbench to stop (checked between a case's steps, so that
/// integrity stops within a second, not at the end of the case).
fn interrupted() -> bool {
    crate::sys::signals::interrupted()
}

impl crate::sys::classify::Classify for IntegrityError {
    /// A configuration fsbench cannot test is the user's choice; the testbed's errors say.
    fn is_bad_input(&self) -> bool {
        match self {
            IntegrityError::Testbed(e) => e.is_bad_input(),
            IntegrityError::Unsupported(_) => true,
            IntegrityError::Interrupted => false,
        }
    }

    fn is_interrupted(&self) -> bool {
        matches!(self, IntegrityError::Interrupted)
    }
}

/// Stop the case: tear its testbed down and say it was interrupted.
fn stop(mut case: Case, tb: Testbed) -> Result<Case, IntegrityError> {
    finish(&mut case, tb);
    Err(IntegrityError::Interrupted)
}

/// How many copies of a data block the configuration keeps.
pub fn data_copies(config: &FsConfig) -> usize {
    config.kind.integrity().map(|fs| fs.data_copies(config)).unwrap_or(1)
}

/// The targets run on `config`.
pub fn targets_for(config: &FsConfig, metadata: bool) -> Vec<Target> {
    let mut t = vec![Target::Data];
    if data_copies(config) > 1 {
        t.push(Target::DataAllCopies);
    }
    if config.kind.integrity().is_ok_and(|fs| fs.parity_target(config)) {
        t.push(Target::Parity);
    }
    if metadata {
        t.extend(meta::targets(config));
    }
    t
}

/// Check that `config` can be tested, before anything is built.
pub fn validate(config: &FsConfig) -> Result<(), IntegrityError> {
    config.kind.integrity().map(drop).map_err(IntegrityError::Unsupported)
}

/// Run every case of one configuration; `on_case` gets each case (and its position) as it
/// ends.
pub fn run_config(
    config: &FsConfig,
    opts: &IntegrityOptions,
    on_case: &mut dyn FnMut(usize, &Case),
) -> ConfigMatrix {
    let start = Instant::now();
    let mut m = ConfigMatrix {
        config: config.label.clone(),
        environment: None,
        seed: opts.seed,
        cases: Vec::new(),
        error: None,
        elapsed_seconds: 0.0,
    };
    if let Err(e) = validate(config) {
        m.error = Some(e.to_string());
        return m;
    }
    // One daemon (zfs-fuse) for all of this configuration's cases, not one per testbed.
    let state = crate::testbed::StateDir::new(
        opts.testbed.state_dir.clone().unwrap_or_else(crate::testbed::default_state_dir),
    );
    let _daemon = match config.kind.hold_daemon(&state) {
        Ok(d) => d,
        Err(e) => {
            m.error =
                Some(format!("starting {}: {e}", config.kind.daemon().unwrap_or("its daemon")));
            return m;
        }
    };
    'targets: for (ti, target) in targets_for(config, opts.metadata).into_iter().enumerate() {
        for fault in &opts.faults {
            if crate::sys::signals::interrupted() {
                m.error = Some("interrupted".into());
                break 'targets;
            }
            let case_seed = mix(opts.seed, ti as u64);
            match run_case(config, opts, target, *fault, case_seed, &mut m.environment) {
                Ok(c) => {
                    on_case(m.cases.len(), &c);
                    m.cases.push(c);
                }
                Err(IntegrityError::Interrupted) => {
                    m.error = Some("interrupted".into());
                    break 'targets;
                }
                Err(e) => {
                    m.error = Some(format!("{}/{}: {e}", target.name(), fault));
                    break 'targets;
                }
            }
        }
    }
    m.elapsed_seconds = start.elapsed().as_secs_f64();
    m
}

fn mix(seed: u64, n: u64) -> u64 {
    let mut x = seed.wrapping_add(n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Makes a damaged copy's bytes from its intact bytes.
type FaultBytes = Box<dyn Fn(&[u8]) -> Vec<u8>>;

/// A case's block: where it is and what its intact bytes are.
struct Located {
    /// Words for the evidence (`d1/f4 block 12 (offset 49152)`).
    block: String,
    copies: Vec<locate::BlockCopy>,
    tool: Option<locate::ToolLocation>,
    /// The bytes each damaged copy gets.
    fault_bytes: FaultBytes,
    len: usize,
}

fn run_case(
    config: &FsConfig,
    opts: &IntegrityOptions,
    target: Target,
    fault: Fault,
    case_seed: u64,
    env: &mut Option<crate::model::testbed::TestbedEnv>,
) -> Result<Case, IntegrityError> {
    let mut tb = Testbed::up(config, &opts.testbed)?;
    if interrupted() {
        tb.teardown()?;
        return Err(IntegrityError::Interrupted);
    }
    if env.is_none() {
        *env = Some(tb.environment());
    }
    let mut case = Case {
        target,
        fault,
        outcome: Outcome::NotRun,
        block: String::new(),
        copies: Vec::new(),
        damaged: Vec::new(),
        tool_location: None,
        locations_agree: None,
        online_error: None,
        first_read: None,
        check: None,
        second_read: None,
        kernel_log: Vec::new(),
        daemon_died: false,
        hung: None,
        note: None,
    };
    let ds = DataSet::new(opts.seed);
    let mnt = tb.mountpoint().to_path_buf();
    // The same block for every fault (and for both data targets), so the columns differ only
    // in what was done to it.
    let located = if target.is_metadata() {
        locate_meta(&mut tb, &ds, target, fault, mix(opts.seed, u64::MAX - 1), case_seed)
    } else {
        let block_seed = mix(opts.seed, u64::MAX);
        let written = watched(&tb, "writing the data set", &mut case.hung, || ds.write(&mnt));
        written.map_err(|source| LocateError::io("writing the data set", source)).and_then(|_| {
            if target == Target::Parity {
                locate_parity(&mut tb, &ds, fault, block_seed, case_seed)
            } else {
                locate_data(&mut tb, &ds, fault, block_seed, case_seed)
            }
        })
    };
    if interrupted() {
        return stop(case, tb);
    }
    let located = match located {
        Ok(l) => l,
        Err(why) => {
            case.note = Some(why.to_string());
            finish(&mut case, tb);
            return Ok(case);
        }
    };
    case.block = located.block.clone();
    case.copies = located.copies.clone();
    if let Some(t) = &located.tool {
        if !t.copies.is_empty() {
            let scanned: Vec<(usize, u64)> =
                located.copies.iter().map(|c| (c.device, c.offset_bytes)).collect();
            case.locations_agree = Some(t.copies.iter().all(|c| scanned.contains(c)));
        }
    }
    case.tool_location = located.tool;
    // Which copies: one (seeded) for `Data` and metadata, all for `DataAllCopies`.
    let mut rng = fastrand::Rng::with_seed(case_seed);
    case.damaged = match target {
        Target::DataAllCopies => located.copies.clone(),
        _ => vec![located.copies[rng.usize(..located.copies.len())].clone()],
    };

    // The filesystem is offline here (the locate step left it so).
    let owned = tb.image_paths();
    for copy in &case.damaged {
        let original = match fault::read_copy(copy, located.len) {
            Ok(o) => o,
            Err(e) => {
                case.note = Some(e.to_string());
                finish(&mut case, tb);
                return Ok(case);
            }
        };
        let bytes = (located.fault_bytes)(&original);
        let online = tb.is_online()?;
        if let Err(e) = fault::inject(copy, &bytes, &owned, online) {
            case.note = Some(e.to_string());
            finish(&mut case, tb);
            return Ok(case);
        }
        // Read the image back: the fault is in place, and differs from what was there.
        let back = fault::read_copy(copy, located.len).ok();
        if back.as_deref() != Some(&bytes[..]) || bytes == original {
            case.note = Some(format!(
                "the fault at dev{}@{} did not take (or changed nothing)",
                copy.device, copy.offset_bytes
            ));
            finish(&mut case, tb);
            return Ok(case);
        }
    }

    if interrupted() {
        return stop(case, tb);
    }
    let klog = check::KernelLog::mark(&format!("{} {}/{}", config.label, target.name(), fault));
    let mut names = tb.block_devices();
    names.extend(tb.zfs_pool().map(str::to_string));
    match tb.online() {
        Err(e) => case.online_error = Some(e.to_string()),
        Ok(()) => {
            let read = watched(&tb, "reading the data set", &mut case.hung, || ds.read_back(&mnt));
            case.first_read = Some(read);
            if interrupted() {
                return stop(case, tb);
            }
            match check::scrub_or_check(&mut tb) {
                Ok(c) => case.check = Some(c),
                Err(e) => case.note = Some(format!("scrub/check: {e}")),
            }
            if interrupted() {
                return stop(case, tb);
            }
            // Cold caches for the second read: offline and online again.
            let again = tb.offline().and_then(|_| tb.online());
            match again {
                Ok(()) => {
                    let read = watched(&tb, "reading the data set again", &mut case.hung, || {
                        ds.read_back(&mnt)
                    });
                    case.second_read = Some(read);
                }
                Err(e) => case.online_error = Some(format!("after the scrub/check: {e}")),
            }
        }
    }
    case.kernel_log = klog.lines_since(&names);
    if let Some(alive) = config.kind.daemon_alive() {
        case.daemon_died = !alive;
    }
    case.outcome = matrix::classify(
        &case,
        check::kernel_trouble(&case.kernel_log),
        check::kernel_detected(&case.kernel_log),
    );
    finish(&mut case, tb);
    Ok(case)
}

/// Run `f`, file operations on `tb`'s filesystem, under the zfs-fuse watchdog when `tb` is a
/// zfs pool ([`crate::testbed::zfs_watch::Watch`]): if they hang, the pool's FUSE connection is
/// aborted (so they return with ENOTCONN) and `hung` gets the watchdog's message.
fn watched<T>(tb: &Testbed, what: &str, hung: &mut Option<String>, f: impl FnOnce() -> T) -> T {
    let watch = tb.zfs_pool().map(|p| crate::testbed::zfs_watch::Watch::arm(p, what));
    let r = f();
    if let Some(m) = watch.and_then(|w| w.finish()) {
        *hung = Some(m);
    }
    r
}

/// Tear the testbed down, noting a failure in the case.
fn finish(case: &mut Case, tb: Testbed) {
    if let Err(e) = tb.teardown() {
        let n = format!("teardown: {e}");
        case.note = Some(match case.note.take() {
            Some(x) => format!("{x}; {n}"),
            None => n,
        });
    }
}

/// Why a case's block could not be located (recorded as the case's note; the case ends there).
#[derive(Debug, thiserror::Error)]
enum LocateError {
    /// The filesystem is not tested at all.
    #[error(transparent)]
    Untestable(#[from] Untestable),
    /// Taking the testbed offline or bringing it back failed.
    #[error("{step}: {source}")]
    Testbed {
        /// What was being done.
        step: &'static str,
        /// The testbed's error.
        source: TestbedError,
    },
    /// Writing the data set or reading the images failed.
    #[error("{step}: {source}")]
    Io {
        /// What was being done.
        step: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The data set or the devices do not hold the block sought (what, and what to try).
    #[error("{0}")]
    NotFound(String),
    /// The tools did not locate a metadata block.
    #[error(transparent)]
    Meta(#[from] meta::MetaError),
    /// A copy could not be read back.
    #[error(transparent)]
    Read(#[from] fault::InjectError),
}

impl LocateError {
    /// Taking `tb` offline failed.
    fn offline(source: TestbedError) -> LocateError {
        LocateError::Testbed { step: "taking the filesystem offline", source }
    }

    /// An I/O step failed.
    fn io(step: impl Into<String>, source: std::io::Error) -> LocateError {
        LocateError::Io { step: step.into(), source }
    }
}

impl crate::sys::classify::Classify for LocateError {
    /// The data set, the tools and fsbench's own images, not the user's input (but a
    /// filesystem that is not tested at all is the user's choice).
    fn is_bad_input(&self) -> bool {
        matches!(self, LocateError::Untestable(_))
    }
}

/// Pick a data block with the seed, ask the tools where it is, go offline, scan for it.
fn locate_data(
    tb: &mut Testbed,
    ds: &DataSet,
    fault: Fault,
    block_seed: u64,
    case_seed: u64,
) -> Result<Located, LocateError> {
    let (file, index) = pick_data_block(tb.config(), ds, block_seed)?;
    let id = file.block_id(ds.seed, index);
    let path: PathBuf = tb.mountpoint().join(&file.path);
    let tool = locate::by_tools(tb.config(), &path, id.offset, &tb.loop_devices());
    tb.offline().map_err(LocateError::offline)?;
    let copies = locate::scan(&tb.image_paths(), id)
        .map_err(|source| LocateError::io("scanning the images", source))?;
    let copies: Vec<_> = copies
        .into_iter()
        .filter(|c| {
            fault::read_copy(c, block::BLOCK_BYTES)
                .map(|b| block::check(id, &b).is_intact())
                .unwrap_or(false)
        })
        .collect();
    if copies.is_empty() {
        return Err(LocateError::NotFound(format!(
            "block {} of {} was not found on the devices (compressed or encrypted data?)",
            index,
            file.path.display()
        )));
    }
    let seed = case_seed;
    Ok(Located {
        block: format!("{} block {} (offset {})", file.path.display(), index, id.offset),
        copies,
        tool: (!tool.output.is_empty()).then_some(tool),
        fault_bytes: Box::new(move |orig| fault.data_bytes(orig, id, seed)),
        len: block::BLOCK_BYTES,
    })
}

/// Blocks per 128 KiB zfs record (zfs-fuse's default recordsize).
const RECORD_BLOCKS: u64 = (128 << 10) / block::BLOCK_BYTES as u64;

/// The data block of the case, chosen with the seed. On raidz, a block in a file's first full
/// 128 KiB record: raidz splits a record into two data columns of 64 KiB on three devices, so
/// such a block lies whole on one device and its row's parity is that of the block 64 KiB
/// away in the same record (see [`locate_parity`]).
fn pick_data_block<'a>(
    config: &FsConfig,
    ds: &'a DataSet,
    block_seed: u64,
) -> Result<(&'a dataset::DataFile, u64), LocateError> {
    let mut rng = fastrand::Rng::with_seed(block_seed);
    if config.kind.integrity().is_ok_and(|fs| fs.parity_protected(config)) {
        let big: Vec<&dataset::DataFile> =
            ds.files.iter().filter(|f| f.blocks > RECORD_BLOCKS).collect();
        if big.is_empty() {
            return Err(LocateError::NotFound(
                "no file of this seed's data set is longer than one zfs record; try another --seed"
                    .into(),
            ));
        }
        let file = big[rng.usize(..big.len())];
        return Ok((file, rng.u64(0..RECORD_BLOCKS)));
    }
    let file = &ds.files[rng.usize(..ds.files.len())];
    Ok((file, rng.u64(0..file.blocks)))
}

/// raidz1 on three devices: the parity of the row holding the case's data block, which is the
/// XOR of that block and the block half a record away. Found by scanning the images for the
/// XOR's bytes, so no knowledge of the raidz layout is assumed; a block found whole is
/// required.
fn locate_parity(
    tb: &mut Testbed,
    ds: &DataSet,
    fault: Fault,
    block_seed: u64,
    case_seed: u64,
) -> Result<Located, LocateError> {
    let (file, index) = pick_data_block(tb.config(), ds, block_seed)?;
    let partner = index ^ (RECORD_BLOCKS / 2);
    let xor = |generation: u64| -> Vec<u8> {
        let id = |i| block::BlockId { generation, ..file.block_id(ds.seed, i) };
        let a = block::make(id(index), block::BLOCK_BYTES);
        let b = block::make(id(partner), block::BLOCK_BYTES);
        a.iter().zip(&b).map(|(x, y)| x ^ y).collect()
    };
    let parity = xor(dataset::GENERATION);
    let stale = xor(dataset::GENERATION - 1);
    tb.offline().map_err(LocateError::offline)?;
    let mut want = [0u8; 32];
    want.copy_from_slice(&parity[block::HEADER_BYTES..block::HEADER_BYTES + 32]);
    let copies = locate::scan_pattern(&tb.image_paths(), &want, block::HEADER_BYTES)
        .map_err(|source| LocateError::io("scanning the images", source))?
        .into_iter()
        .filter(|c| fault::read_copy(c, block::BLOCK_BYTES).map(|b| b == parity).unwrap_or(false))
        .collect::<Vec<_>>();
    if copies.is_empty() {
        return Err(LocateError::NotFound(format!(
            "the parity of blocks {index} and {partner} of {} was not found on the devices",
            file.path.display()
        )));
    }
    Ok(Located {
        block: format!(
            "parity of {} blocks {index} and {partner} (offsets {} and {})",
            file.path.display(),
            index * block::BLOCK_BYTES as u64,
            partner * block::BLOCK_BYTES as u64
        ),
        copies,
        tool: None,
        fault_bytes: Box::new(move |orig| match fault {
            Fault::Stale => stale.clone(),
            f => f.raw_bytes(orig, case_seed),
        }),
        len: block::BLOCK_BYTES,
    })
}

/// Write the data set in two parts, locating the metadata block after each: the first
/// version of the block is the stale one. Leaves the filesystem offline.
fn locate_meta(
    tb: &mut Testbed,
    ds: &DataSet,
    target: Target,
    fault: Fault,
    block_seed: u64,
    case_seed: u64,
) -> Result<Located, LocateError> {
    use std::os::unix::fs::MetadataExt;
    let mnt = tb.mountpoint().to_path_buf();
    let fs = tb.config().kind.integrity()?;
    ds.write_part(&mnt, dataset::Part::First)
        .map_err(|source| LocateError::io("writing the data set", source))?;
    let mut rng = fastrand::Rng::with_seed(block_seed);
    let dir = ds.dirs[rng.usize(..ds.dirs.len())].clone();
    // The first file of each directory is written in the first part.
    let firsts: Vec<&dataset::DataFile> = ds
        .dirs
        .iter()
        .filter_map(|d| ds.files.iter().find(|f| f.path.parent() == Some(d.as_path())))
        .collect();
    let file = if target == Target::Indirect {
        // A file of more than one record has indirect blocks.
        let big: Vec<_> = firsts.iter().filter(|f| f.blocks > RECORD_BLOCKS).collect();
        if big.is_empty() {
            return Err(LocateError::NotFound(
                "no file of this seed's data set has an indirect block; try another --seed".into(),
            ));
        }
        *big[rng.usize(..big.len())]
    } else {
        *firsts
            .iter()
            .find(|f| f.path.parent() == Some(dir.as_path()))
            .ok_or_else(|| LocateError::NotFound("a directory without files".into()))?
    };
    let rel = if target == Target::Directory { dir.clone() } else { file.path.clone() };
    let ino = std::fs::metadata(mnt.join(&rel))
        .map_err(|source| LocateError::io(format!("stat {}", rel.display()), source))?
        .ino();
    let subject = meta::Subject { rel: rel.clone(), ino };
    tb.offline().map_err(LocateError::offline)?;
    let old = meta::find(tb, target, &subject)?;
    let old_bytes = fault::read_copy(&old.copies[0], old.len)?;
    tb.online().map_err(|source| LocateError::Testbed { step: "mounting again", source })?;
    ds.write_part(&mnt, dataset::Part::Rest)
        .map_err(|source| LocateError::io("writing the data set", source))?;
    tb.offline().map_err(LocateError::offline)?;
    let mb = meta::find(tb, target, &subject)?;
    let now = fault::read_copy(&mb.copies[0], mb.len)?;
    if fault == Fault::Stale && (now == old_bytes || old.len != mb.len) {
        return Err(LocateError::NotFound(format!(
            "no older version of the {}: it did not change while the rest of the data set was written",
            target.describe()
        )));
    }
    let at = old.copies[0].offset_bytes;
    let moved = if at == mb.copies[0].offset_bytes {
        String::new()
    } else {
        format!(" (the older version was at dev{}@{at})", old.copies[0].device)
    };
    let method = fs.metadata_method();
    Ok(Located {
        block: format!(
            "{} of {} (inode {ino}, {} bytes){moved}",
            target.describe(),
            rel.display(),
            mb.len
        ),
        copies: mb.copies,
        tool: Some(locate::ToolLocation {
            method: method.into(),
            fiemap_physical: None,
            copies: Vec::new(),
            output: mb.tool_output,
        }),
        fault_bytes: Box::new(move |orig| match fault {
            Fault::Stale => old_bytes.clone(),
            f => f.raw_bytes(orig, case_seed),
        }),
        len: mb.len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_per_configuration() {
        let t = |s: &str| targets_for(&FsConfig::parse(s).unwrap(), false);
        assert_eq!(t("ext4"), vec![Target::Data]);
        assert_eq!(t("zfs"), vec![Target::Data]);
        assert_eq!(t("zfs:layout=mirror:devices=2"), vec![Target::Data, Target::DataAllCopies]);
        assert_eq!(t("btrfs:profile=raid1:devices=2"), vec![Target::Data, Target::DataAllCopies]);
        assert_eq!(t("btrfs"), vec![Target::Data]);
        assert_eq!(t("zfs:layout=raidz"), vec![Target::Data, Target::Parity]);
        assert_eq!(t("zfs:layout=raidz2"), vec![Target::Data]);
    }

    #[test]
    fn unsupported_configurations_say_why() {
        let e = validate(&FsConfig::parse("tmpfs").unwrap()).unwrap_err();
        assert!(e.to_string().contains("no device"), "{e}");
        assert!(matches!(e, IntegrityError::Unsupported(Untestable { fs: "tmpfs", .. })), "{e}");
        let e = validate(&FsConfig::parse("overlay").unwrap()).unwrap_err();
        assert!(e.to_string().starts_with("overlay keeps its blocks on its backing"), "{e}");
        validate(&FsConfig::parse("zfs:layout=raidz").unwrap()).unwrap();
    }
}
