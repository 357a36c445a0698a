//! O_DIRECT at the start of a test: does the filesystem accept it, and which alignment does it
//! need. The answer comes from `statx(STATX_DIOALIGN)` (Linux 6.1+) on a probe file made with
//! O_DIRECT in the test's directory; where the filesystem does not report it, from the logical
//! block size of the device under it (`/sys/dev/block/MAJ:MIN/queue/logical_block_size`), and
//! 512 bytes where there is none. Validation already demands 4 KiB multiples (enough for every
//! common device); this check catches a filesystem that refuses O_DIRECT (tmpfs before Linux 6.6,
//! ramfs, some FUSE filesystems) or needs more, with a message that says so, before any file is made.

use crate::model::failure::EngineError;
use crate::model::job::{OffsetMode, TestDef};
use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
use std::path::Path;

/// What the filesystem needs for O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DioAlign {
    /// Alignment of buffer addresses in memory, bytes.
    pub mem: u64,
    /// Alignment of file offsets and transfer lengths, bytes.
    pub offset: u64,
    /// Where the figures came from: `statx` or the device's logical block size.
    pub source: &'static str,
}

/// Probe `dir` for O_DIRECT: the alignment it needs, or why it cannot be used (a filesystem
/// that refuses O_DIRECT is [`EngineError::Unsupported`]: the test is the user's to change).
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
    if let Ok(st) = st {
        if st.stx_mask & StatxFlags::DIOALIGN.bits() != 0 {
            if st.stx_dio_offset_align == 0 {
                return Err(EngineError::unsupported(format!(
                    "the filesystem at {} ({}) does not support O_DIRECT on this file (statx reports no direct-I/O alignment); remove direct or use another filesystem",
                    dir.display(),
                    fs_name(dir)
                )));
            }
            return Ok(DioAlign {
                mem: u64::from(st.stx_dio_mem_align),
                offset: u64::from(st.stx_dio_offset_align),
                source: "statx(STATX_DIOALIGN)",
            });
        }
    }
    let lbs = logical_block_size(dir).unwrap_or(512);
    Ok(DioAlign { mem: lbs, offset: lbs, source: "the device's logical block size" })
}

/// Check a test's O_DIRECT ops against `a`; the message states the alignment needed.
pub fn check_test(test: &TestDef, a: &DioAlign) -> Result<(), EngineError> {
    // Read buffers are page-aligned and write windows 4 KiB-aligned (engine::buffer).
    if a.mem > 4096 {
        return Err(EngineError::unsupported(format!(
            "O_DIRECT here needs buffers aligned to {} bytes ({}); fsbench aligns them to 4096",
            a.mem, a.source
        )));
    }
    for p in test.phases.iter().filter(|p| p.open.direct) {
        for o in p.pattern.data().iter().filter(|o| o.kind.is_data()) {
            let size = o.size.granule().unwrap_or(1);
            let bad_align = o.offset == OffsetMode::Random && o.align % a.offset != 0;
            if size % a.offset != 0 || bad_align {
                return Err(EngineError::unsupported(format!(
                    "phase `{}`: O_DIRECT on this filesystem needs sizes and offsets aligned to {} bytes ({}); this test has {} of {} bytes at {}-byte-aligned offsets: use multiples of {}",
                    p.name,
                    a.offset,
                    a.source,
                    o.kind.name(),
                    size,
                    if o.offset == OffsetMode::Random { o.align } else { size },
                    a.offset
                )));
            }
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
        Ok(s) => format!("filesystem magic {:#x}", s.f_type),
        Err(_) => "unknown filesystem".into(),
    }
}

fn logical_block_size(dir: &Path) -> Option<u64> {
    let st = rustix::fs::stat(dir).ok()?;
    let (maj, min) = (rustix::fs::major(st.st_dev), rustix::fs::minor(st.st_dev));
    let p = format!("/sys/dev/block/{maj}:{min}/queue/logical_block_size");
    let text = std::fs::read_to_string(&p)
        .or_else(|_| {
            std::fs::read_to_string(format!(
                "/sys/dev/block/{maj}:{min}/../queue/logical_block_size"
            ))
        })
        .ok()?;
    text.trim().parse().ok()
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
    fn misaligned_ops_are_refused_with_the_alignment() {
        let ctx = crate::workload::ResolveCtx {
            scale: crate::model::scale::Scale::Paper,
            free_memory: 1 << 30,
        };
        let text = "[[test]]\nid = \"d\"\nname = \"d\"\ndirect = true\nfile = { size = \"1M\" }\n[[test.phase]]\nname = \"r\"\npattern = [{ op = \"read\", size = \"8K\", offset = \"random\", align = \"4K\" }]\namount = { ops = 1 }\n";
        let spec = crate::workload::spec::parse(text, "t").unwrap();
        let suite = crate::workload::validate::resolve(&spec, "t", &ctx).unwrap();
        let t = &suite.tests[0];
        let a = DioAlign { mem: 512, offset: 4096, source: "statx(STATX_DIOALIGN)" };
        assert!(check_test(t, &a).is_ok());
        let a = DioAlign { mem: 512, offset: 8192, source: "statx(STATX_DIOALIGN)" };
        let e = check_test(t, &a).unwrap_err();
        assert!(e.is_bad_input(), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("aligned to 8192 bytes (statx(STATX_DIOALIGN))")
                && e.contains("4096-byte-aligned"),
            "{e}"
        );
        let a = DioAlign { mem: 8192, offset: 512, source: "x" };
        assert!(check_test(t, &a).unwrap_err().to_string().contains("buffers aligned to 8192"));
    }
}
