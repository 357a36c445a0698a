//! O_DIRECT at the start of a test: does the target file accept it, and which alignment does
//! it need. Validation cannot know (the target is not chosen yet, and fio's jobs issue 512-byte
//! direct ops wherever the file allows them), so the sizes and offsets of a test's O_DIRECT
//! ops are checked here, against the file they will go to, before any I/O.
//!
//! The alignment is the file's own: `statx(STATX_DIOALIGN)` (Linux 6.1+) on the target file
//! when it exists (a file the job names, or a layout kept from an earlier repetition), else on
//! a probe file made with O_DIRECT in its directory (which also finds a filesystem that
//! refuses O_DIRECT: tmpfs before Linux 6.6, ramfs, some FUSE filesystems). Where the
//! filesystem does not report it, the logical block size of the block device under it
//! (`/sys/dev/block/MAJ:MIN/queue/logical_block_size`, or its parent's for a partition); where
//! there is none (btrfs, whose `st_dev` is not a block device, and which quietly does
//! misaligned "direct" I/O through the page cache), 4096 bytes.
//!
//! Measured on Linux 6.18 with loop devices of 512-byte logical blocks: ext4 and xfs report
//! 512/512 through statx, btrfs reports nothing (so 4096); ext4 on the host's virtio disk
//! reports 512/512.

use crate::engine::buffer::ALIGN;
use crate::model::failure::EngineError;
use crate::model::job::{OffsetMode, PhaseDef, TestDef};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, StatxFlags};
use std::fmt;
use std::path::Path;

/// The alignment assumed where neither the filesystem nor a block device says.
pub const FALLBACK_ALIGN: u64 = 4096;

/// Where a [`DioAlign`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlignSource {
    /// `statx(STATX_DIOALIGN)` on the file.
    Statx,
    /// The logical block size of the block device `major:minor` under the filesystem.
    Device(u32, u32),
    /// Neither: [`FALLBACK_ALIGN`].
    Fallback,
}

impl fmt::Display for AlignSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AlignSource::Statx => f.write_str("statx(STATX_DIOALIGN)"),
            AlignSource::Device(maj, min) => {
                write!(f, "the logical block size of device {maj}:{min}")
            }
            AlignSource::Fallback => f.write_str(
                "no statx alignment and no block device under the filesystem: 4096 assumed; btrfs, for one, quietly does smaller O_DIRECT ops through the page cache",
            ),
        }
    }
}

/// What a file needs for O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioAlign {
    /// Alignment of buffer addresses in memory, bytes.
    pub mem: u64,
    /// Alignment of file offsets and transfer lengths, bytes.
    pub offset: u64,
    /// Where the figures came from.
    pub source: AlignSource,
}

/// The alignment from what was found, in order: statx's `(mem, offset)` when the filesystem
/// reported it, the device's logical block size, else [`FALLBACK_ALIGN`]. None when statx
/// reports an offset alignment of 0: the file cannot do O_DIRECT.
pub fn choose(statx: Option<(u64, u64)>, device: Option<((u32, u32), u64)>) -> Option<DioAlign> {
    match (statx, device) {
        (Some((_, 0)), _) => None,
        (Some((mem, offset)), _) => Some(DioAlign { mem, offset, source: AlignSource::Statx }),
        (None, Some(((maj, min), lbs))) if lbs > 0 => {
            Some(DioAlign { mem: lbs, offset: lbs, source: AlignSource::Device(maj, min) })
        }
        _ => Some(FALLBACK),
    }
}

const FALLBACK: DioAlign =
    DioAlign { mem: FALLBACK_ALIGN, offset: FALLBACK_ALIGN, source: AlignSource::Fallback };

/// The O_DIRECT alignment of the file at `path` (named `shown` in messages): its own when it
/// exists as a regular file and its filesystem reports one, else that of a new file in its
/// directory ([`probe`]).
pub fn file_align(path: &Path, shown: &Path) -> Result<DioAlign, EngineError> {
    let st = rustix::fs::statx(
        rustix::fs::CWD,
        path,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::TYPE | StatxFlags::DIOALIGN,
    );
    if let Ok(st) = st {
        let regular = FileType::from_raw_mode(u32::from(st.stx_mode)) == FileType::RegularFile;
        if regular && st.stx_mask & StatxFlags::DIOALIGN.bits() != 0 {
            let found = (u64::from(st.stx_dio_mem_align), u64::from(st.stx_dio_offset_align));
            return choose(Some(found), None).ok_or_else(|| {
                EngineError::unsupported(format!(
                    "{} cannot be read or written with O_DIRECT (statx reports no direct-I/O alignment for it: {}); remove direct, or use another file or filesystem",
                    shown.display(),
                    path.parent().map_or_else(|| "unknown filesystem".into(), fs_name)
                ))
            });
        }
    }
    match path.parent() {
        Some(dir) => probe(dir),
        None => Ok(FALLBACK),
    }
}

/// Probe `dir` for O_DIRECT: the alignment a new file there needs, or why it cannot be used
/// (a filesystem that refuses O_DIRECT is [`EngineError::Unsupported`]: the test is the user's
/// to change).
pub fn probe(dir: &Path) -> Result<DioAlign, EngineError> {
    let name = format!(".fsbench-direct-probe-{}", std::process::id());
    let path = dir.join(&name);
    let fd = rustix::fs::open(
        &path,
        OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::DIRECT | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    );
    // The probe is removed whatever happened (it may exist even when O_DIRECT was refused).
    let cleanup = || {
        let _ = std::fs::remove_file(&path);
    };
    let fd = match fd {
        Ok(fd) => fd,
        Err(e) => {
            cleanup();
            let fs = fs_name(dir);
            return Err(match e {
                rustix::io::Errno::INVAL => EngineError::unsupported(format!(
                    "the filesystem at {} ({fs}) refuses O_DIRECT (open with O_DIRECT: {e}); run this test on a filesystem that supports direct I/O (ext4, xfs, btrfs), or remove direct",
                    dir.display()
                )),
                _ => EngineError::setup(
                    format!("cannot open a file with O_DIRECT in {}", dir.display()),
                    &e.into(),
                ),
            });
        }
    };
    let st = rustix::fs::statx(&fd, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN);
    drop(fd);
    cleanup();
    let reported = st
        .ok()
        .filter(|st| st.stx_mask & StatxFlags::DIOALIGN.bits() != 0)
        .map(|st| (u64::from(st.stx_dio_mem_align), u64::from(st.stx_dio_offset_align)));
    let device = reported.is_none().then(|| device_block_size(dir, Path::new("/sys"))).flatten();
    choose(reported, device).ok_or_else(|| {
        EngineError::unsupported(format!(
            "the filesystem at {} ({}) does not support O_DIRECT on this file (statx reports no direct-I/O alignment); remove direct or use another filesystem",
            dir.display(),
            fs_name(dir)
        ))
    })
}

/// Check a test's O_DIRECT ops (its phases' and its roles') against `a`, the alignment of
/// `file`, the test's first file: transfer sizes, random-offset alignment, sequential skips,
/// where each thread's part of the file starts and ends, and the buffers' alignment. The
/// message names the file, the alignment needed and where it came from.
pub fn check_test(test: &TestDef, a: &DioAlign, file: &Path) -> Result<(), EngineError> {
    // Read buffers and write windows are ALIGN-aligned (engine::buffer), enough for any
    // smaller memory alignment.
    if a.mem > ALIGN as u64 {
        return Err(EngineError::unsupported(format!(
            "O_DIRECT on {} needs buffers aligned to {} bytes ({}); fsbench aligns them to {ALIGN}",
            file.display(),
            a.mem,
            a.source
        )));
    }
    let fs = &test.files;
    // Where the threads' parts of the file start and end (sequential ops are cut short at the
    // end of a part): fio's offset/offset_increment regions, else the file or its even shares.
    let bounds: Vec<(&str, u64)> = match fs.region {
        Some(r) => vec![("offset", r.offset), ("offset_increment", r.increment), ("size", r.len)],
        None if fs.shared && !fs.whole => vec![
            ("file size", fs.size_bytes()),
            ("each thread's share of the file", fs.size_bytes() / u64::from(test.threads.max(1))),
        ],
        None => vec![("file size", fs.size_bytes())],
    };
    for p in test.phases.iter().filter(|p| p.open.direct) {
        check_phase(&format!("phase `{}`", p.name), p, &bounds, a, file)?;
    }
    for r in test.roles.iter().filter(|r| r.phase.open.direct) {
        let (label, bounds) = (format!("role `{}`", r.name), [("file size", r.file_bytes)]);
        check_phase(&label, &r.phase, &bounds, a, file)?;
    }
    Ok(())
}

/// One phase's (or role's, `label`) O_DIRECT ops against `a`; `bounds` are where its threads'
/// parts of the file start and end.
fn check_phase(
    label: &str,
    p: &PhaseDef,
    bounds: &[(&str, u64)],
    a: &DioAlign,
    file: &Path,
) -> Result<(), EngineError> {
    let refuse = |what: String| {
        EngineError::unsupported(format!(
            "{label}: O_DIRECT on {} needs sizes and offsets in multiples of {} bytes ({}); this test has {what}: use multiples of {}",
            file.display(),
            a.offset,
            a.source,
            a.offset
        ))
    };
    let data: Vec<_> = p.pattern.data().iter().filter(|o| o.kind.is_data()).collect();
    for o in &data {
        // The first size (of a split's) that is not a multiple. A size drawn from a range
        // does not get here (validation refuses it with O_DIRECT), but would be refused.
        let odd = match o.size.granule() {
            None => Some("sizes drawn from a range".to_string()),
            Some(_) => {
                let mut sizes = o.size.entries().into_iter().map(|(n, _)| n);
                sizes.find(|n| n % a.offset != 0).map(|n| format!("{n} bytes"))
            }
        };
        if let Some(what) = odd {
            return Err(refuse(format!("{} of {what}", o.kind.name())));
        }
        if o.offset == OffsetMode::Random && o.align % a.offset != 0 {
            return Err(refuse(format!(
                "{} at random offsets aligned to {} bytes",
                o.kind.name(),
                o.align
            )));
        }
        if o.skip.unsigned_abs() % a.offset != 0 {
            return Err(refuse(format!(
                "{} skipping {} bytes after each op",
                o.kind.name(),
                o.skip
            )));
        }
    }
    let sequential = data.iter().any(|o| o.offset == OffsetMode::Sequential);
    let random = data.iter().any(|o| o.offset == OffsetMode::Random);
    for (what, n) in bounds {
        // A region's start moves random offsets too; a part's end only cuts sequential ops.
        let matters = sequential || (random && matches!(*what, "offset" | "offset_increment"));
        if matters && n % a.offset != 0 {
            return Err(refuse(format!("{what} {n} bytes")));
        }
    }
    Ok(())
}

// `f_type`'s integer type differs between architectures: the cast is not useless everywhere.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn fs_name(dir: &Path) -> String {
    match rustix::fs::statfs(dir) {
        Ok(s) if s.f_type as i64 == 0x0102_1994 => "tmpfs".into(),
        Ok(s) if s.f_type as i64 == 0x8584_58f6 => "ramfs".into(),
        Ok(s) if s.f_type as i64 == 0x6573_5546 => "FUSE".into(),
        Ok(s) if s.f_type as i64 == 0x9123_683e => "btrfs".into(),
        Ok(s) => format!("filesystem magic {:#x}", s.f_type),
        Err(_) => "unknown filesystem".into(),
    }
}

/// The block device under the filesystem holding `dir`, and its logical block size, read
/// under `sys` (`/sys`): the device's own `queue/`, or its parent's for a partition (whose
/// `/sys/dev/block/MAJ:MIN` link points inside the disk's directory).
fn device_block_size(dir: &Path, sys: &Path) -> Option<((u32, u32), u64)> {
    let st = rustix::fs::stat(dir).ok()?;
    let dev = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    logical_block_size(dev, sys).map(|lbs| (dev, lbs))
}

/// The logical block size of block device `(major, minor)` from sysfs under `sys`; None when
/// it is not a block device (btrfs, tmpfs, NFS: an anonymous `st_dev`) or sysfs says nothing.
fn logical_block_size((maj, min): (u32, u32), sys: &Path) -> Option<u64> {
    let dev = sys.join(format!("dev/block/{maj}:{min}"));
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok();
    read(dev.join("queue/logical_block_size"))
        // A partition has no queue of its own: its disk's (the link's target's parent).
        .or_else(|| {
            read(std::fs::canonicalize(&dev).ok()?.parent()?.join("queue/logical_block_size"))
        })
        .filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_on_a_disk_filesystem_reports_an_alignment_and_leaves_nothing() {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        match probe(d.path()) {
            Ok(a) => {
                assert!(
                    a.offset.is_power_of_two() && a.offset >= 512 && a.offset <= 65536,
                    "{a:?}"
                );
                assert!(a.mem >= 1, "{a:?}");
            }
            // /var/tmp on a filesystem without O_DIRECT: the message says so.
            Err(e) => assert!(e.to_string().contains("O_DIRECT"), "{e}"),
        }
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_file_itself_is_asked_first_and_a_missing_file_probes_its_directory() {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let f = d.path().join("data");
        // Absent: the directory's probe (which leaves nothing behind).
        let absent = file_align(&f, &f);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
        std::fs::write(&f, [0u8; 8192]).unwrap();
        let present = file_align(&f, &f);
        match (absent, present) {
            // Same filesystem, same answer; the file's own comes from statx where the
            // kernel has STATX_DIOALIGN for this filesystem.
            (Ok(a), Ok(b)) => {
                assert_eq!((a.mem, a.offset), (b.mem, b.offset), "{a:?} {b:?}");
                if a.source == AlignSource::Statx {
                    assert_eq!(b.source, AlignSource::Statx);
                }
            }
            (Err(a), _) => assert!(a.to_string().contains("O_DIRECT"), "{a}"),
            (Ok(a), Err(b)) => panic!("the directory takes O_DIRECT ({a:?}), its file not: {b}"),
        }
    }

    #[test]
    fn the_sources_are_taken_in_order() {
        // statx's figures win over the device's.
        let a = choose(Some((4, 512)), Some(((7, 0), 4096))).unwrap();
        assert_eq!((a.mem, a.offset, a.source), (4, 512, AlignSource::Statx));
        // An offset alignment of 0 from statx: this file cannot do O_DIRECT.
        assert_eq!(choose(Some((0, 0)), Some(((7, 0), 512))), None);
        // No statx: the device's logical block size for both.
        let a = choose(None, Some(((7, 3), 512))).unwrap();
        assert_eq!((a.mem, a.offset, a.source), (512, 512, AlignSource::Device(7, 3)));
        assert_eq!(a.source.to_string(), "the logical block size of device 7:3");
        // Neither (btrfs: no statx alignment, st_dev not a block device): 4096.
        let a = choose(None, None).unwrap();
        assert_eq!((a.mem, a.offset, a.source), (4096, 4096, AlignSource::Fallback));
        assert!(a.source.to_string().contains("4096 assumed"), "{}", a.source);
        assert_eq!(choose(None, Some(((7, 3), 0))).unwrap().offset, 4096);
    }

    #[test]
    fn a_partition_has_its_disks_logical_block_size() {
        // A sysfs of a disk 254:0 (4096-byte blocks) with partition 254:1, and a loop 7:0.
        let sys = tempfile::tempdir().unwrap();
        let disk = sys.path().join("devices/virtual/vdz");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(disk.join("vdz1")).unwrap();
        std::fs::write(disk.join("queue/logical_block_size"), "4096\n").unwrap();
        let lp = sys.path().join("devices/virtual/loop0");
        std::fs::create_dir_all(lp.join("queue")).unwrap();
        std::fs::write(lp.join("queue/logical_block_size"), "512\n").unwrap();
        let links = sys.path().join("dev/block");
        std::fs::create_dir_all(&links).unwrap();
        std::os::unix::fs::symlink("../../devices/virtual/vdz", links.join("254:0")).unwrap();
        std::os::unix::fs::symlink("../../devices/virtual/vdz/vdz1", links.join("254:1")).unwrap();
        std::os::unix::fs::symlink("../../devices/virtual/loop0", links.join("7:0")).unwrap();
        assert_eq!(logical_block_size((254, 0), sys.path()), Some(4096));
        assert_eq!(logical_block_size((254, 1), sys.path()), Some(4096), "the disk's");
        assert_eq!(logical_block_size((7, 0), sys.path()), Some(512));
        // An anonymous device (btrfs, tmpfs): none.
        assert_eq!(logical_block_size((0, 40), sys.path()), None);
    }

    fn test_of(keys: &str, pattern: &str) -> TestDef {
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let text = format!("[[test]]\nid = \"d\"\nname = \"d\"\ndirect = true\n{keys}\n[[test.phase]]\nname = \"r\"\npattern = {pattern}\namount = {{ ops = 1 }}\n");
        let spec = crate::workload::spec::parse(&text, "t").unwrap();
        let suite = crate::workload::validate::resolve(&spec, "t", &ctx).unwrap();
        suite.tests.into_iter().next().unwrap()
    }

    fn refusal(t: &TestDef, offset: u64) -> String {
        let a = DioAlign { mem: 512, offset, source: AlignSource::Statx };
        let e = check_test(t, &a, Path::new("/mnt/x/f")).unwrap_err();
        assert!(e.is_bad_input(), "{e:?}");
        e.to_string()
    }

    #[test]
    fn misaligned_ops_are_refused_with_the_files_alignment() {
        let file = "file = { size = \"1M\" }";
        let t = test_of(
            file,
            "[{ op = \"read\", size = \"8K\", offset = \"random\", align = \"4K\" }]",
        );
        let ok = |t: &TestDef, offset| {
            let a = DioAlign { mem: 512, offset, source: AlignSource::Statx };
            check_test(t, &a, Path::new("/mnt/x/f"))
        };
        assert!(ok(&t, 4096).is_ok() && ok(&t, 512).is_ok());
        let e = refusal(&t, 8192);
        assert!(
            e.contains("O_DIRECT on /mnt/x/f needs sizes and offsets in multiples of 8192 bytes (statx(STATX_DIOALIGN))")
                && e.contains("read at random offsets aligned to 4096 bytes"),
            "{e}"
        );
        // 512-byte and 1 KiB ops (fio's iometer jobs) at 512-byte offsets on a 512-byte file.
        let small = "[{ op = \"read\", size = { split = [{ size = \"512\", weight = 10 }, { size = \"1K\", weight = 5 }, { size = \"4K\", weight = 85 }] }, offset = \"random\", align = \"512\", write_percent = 20 }]";
        let t = test_of(file, small);
        assert!(ok(&t, 512).is_ok());
        let e = refusal(&t, 4096);
        assert!(e.contains("read of 512 bytes: use multiples of 4096"), "{e}");
        // A split is named by its first size the file cannot do (not the sizes' divisor).
        let t = test_of(file, "[{ op = \"write\", size = { split = [{ size = \"4K\", weight = 1 }, { size = \"6K\", weight = 1 }] } }]");
        let e = refusal(&t, 4096);
        assert!(e.starts_with("phase `r`: ") && e.contains("write of 6144 bytes"), "{e}");
        // A size no device can do: refused, naming the alignment.
        let t = test_of(file, "[{ op = \"write\", size = \"100\" }]");
        let e = refusal(&t, 512);
        assert!(e.contains("multiples of 512 bytes") && e.contains("write of 100 bytes"), "{e}");
        // A sequential skip that moves offsets off the alignment.
        let t = test_of(file, "[{ op = \"read\", size = \"4K\", skip = 1000 }]");
        assert!(refusal(&t, 512).contains("skipping 1000 bytes"));
        // A file size that cuts the last sequential op short.
        let t = test_of("file = { size = \"10000\" }", "[{ op = \"read\", size = \"512\" }]");
        assert!(refusal(&t, 512).contains("file size 10000 bytes"));
        // ... does not matter to random ops, which always fit whole.
        let t = test_of(
            "file = { size = \"10000\" }",
            "[{ op = \"read\", size = \"512\", offset = \"random\", align = \"512\" }]",
        );
        assert!(ok(&t, 512).is_ok());
        // A role's direct ops are checked too (its own file's size).
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let text = "[[test]]\nid = \"d\"\nname = \"d\"\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"p\"\npattern = [{ op = \"read\", size = \"4K\" }]\namount = { ops = 1 }\n[[test.role]]\nname = \"x\"\nfile = { size = \"1M\" }\npattern = [{ op = \"write\", size = \"1K\" }]\ndirect = true\namount = { bytes = \"64K\" }\n";
        let spec = crate::workload::spec::parse(text, "t").unwrap();
        let suite = crate::workload::validate::resolve(&spec, "t", &ctx).unwrap();
        let r = &suite.tests[0];
        assert!(ok(r, 512).is_ok());
        let e = refusal(r, 4096);
        assert!(e.starts_with("role `x`: ") && e.contains("write of 1024 bytes"), "{e}");
        // Buffers: fsbench's are 4096-aligned, enough for any smaller need.
        let a = DioAlign { mem: 8192, offset: 512, source: AlignSource::Statx };
        let e = check_test(&t, &a, Path::new("/f")).unwrap_err().to_string();
        assert!(e.contains("buffers aligned to 8192"), "{e}");
    }
}
