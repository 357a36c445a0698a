//! Finding a block on the testbed's devices.
//!
//! The primary method is a scan of the image files for the block's own header (magic, seed,
//! file, offset): every block of the data set is unique, so the scan finds every copy of it on
//! every device, whatever the filesystem (one on ext4, xfs, a btrfs single or a zfs stripe, two
//! on a btrfs raid1 or a zfs mirror). It steps in 512-byte sectors (zfs-fuse allocates in
//! 512-byte units) and skips the images' holes (`SEEK_DATA`), so it reads only what the
//! filesystem wrote. The filesystems' own tools cross-check it where they can say where a block
//! is: FIEMAP's physical offset on ext4 and xfs (a device offset), and on btrfs FIEMAP's
//! logical address mapped to device offsets by `btrfs-map-logical`.

use crate::model::block::{BlockId, HEADER_BYTES, MAGIC};
use crate::sys::cmd::Cmd;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const SECTOR: u64 = 512;
const CHUNK: usize = 1 << 20;

/// One copy of a block on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockCopy {
    /// Index of the device (image) in the testbed.
    pub device: usize,
    /// The image file.
    pub image: PathBuf,
    /// Byte offset in the image (= on the loop device).
    pub offset_bytes: u64,
}

/// Every copy of block `id` (any generation) in `images`, by scanning for its header.
pub fn scan(images: &[PathBuf], id: BlockId) -> io::Result<Vec<BlockCopy>> {
    let mut want = [0u8; 32];
    want[0..8].copy_from_slice(&MAGIC);
    want[8..16].copy_from_slice(&id.seed.to_le_bytes());
    want[16..24].copy_from_slice(&id.file.to_le_bytes());
    want[24..32].copy_from_slice(&id.offset.to_le_bytes());
    scan_pattern(images, &want, 0)
}

/// Every 512-byte-aligned place in `images` where the 32 bytes at `at` past it are `want`.
pub fn scan_pattern(images: &[PathBuf], want: &[u8; 32], at: usize) -> io::Result<Vec<BlockCopy>> {
    let mut found = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    for (device, image) in images.iter().enumerate() {
        let f = File::open(image)?;
        let len = f.metadata()?.len();
        let mut pos = 0u64;
        while pos < len {
            // Next data region (holes were never written).
            let start = match rustix::fs::seek(&f, rustix::fs::SeekFrom::Data(pos)) {
                Ok(s) => s,
                Err(rustix::io::Errno::NXIO) => break,
                Err(e) => return Err(e.into()),
            };
            let end = match rustix::fs::seek(&f, rustix::fs::SeekFrom::Hole(start)) {
                Ok(e) => e.min(len),
                Err(e) => return Err(e.into()),
            };
            let mut at_pos = start / SECTOR * SECTOR;
            while at_pos < end {
                if crate::sys::signals::interrupted() {
                    return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
                }
                let n = (CHUNK as u64).min(end - at_pos) as usize;
                let n = f.read_at(&mut buf[..n], at_pos)?;
                if n == 0 {
                    break;
                }
                let mut i = 0;
                while i + (at + 32).max(HEADER_BYTES) <= n {
                    if buf[i + at..i + at + 32] == *want {
                        found.push(BlockCopy {
                            device,
                            image: image.clone(),
                            offset_bytes: at_pos + i as u64,
                        });
                    }
                    i += SECTOR as usize;
                }
                at_pos += n as u64;
            }
            pos = end.max(start + 1);
        }
    }
    Ok(found)
}

/// Where the filesystem's own tools put a file's block on the devices.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolLocation {
    /// How it was found (`FIEMAP`, `FIEMAP + btrfs-map-logical`).
    pub method: String,
    /// FIEMAP's physical address of the block (a device offset on ext4/xfs, a btrfs logical
    /// address on btrfs).
    pub fiemap_physical: Option<u64>,
    /// Device index and byte offset of each copy the tool names.
    pub copies: Vec<(usize, u64)>,
    /// The tool's output, or why there is none.
    pub output: String,
}

/// Ask FIEMAP (and on btrfs `btrfs-map-logical`) where byte `offset` of `file` is. Call while the
/// filesystem is mounted; `devices` are the testbed's loop devices in order.
pub fn by_tools(
    kind: crate::model::testbed::FsKind,
    file: &Path,
    offset: u64,
    devices: &[PathBuf],
) -> ToolLocation {
    use crate::model::testbed::FsKind;
    let mut loc = ToolLocation { method: "FIEMAP".into(), ..Default::default() };
    let extents = match crate::observe::extents::extents(file) {
        Ok(x) => x,
        Err(e) => {
            loc.output = format!("FIEMAP failed: {e}");
            return loc;
        }
    };
    let Some(e) = extents
        .iter()
        .find(|e| e.logical_bytes <= offset && offset < e.logical_bytes + e.length_bytes)
    else {
        loc.output = format!("no extent covers offset {offset}");
        return loc;
    };
    let physical = e.physical_bytes + (offset - e.logical_bytes);
    loc.fiemap_physical = Some(physical);
    loc.output = format!(
        "extent logical {} physical {} length {} flags {:#x}",
        e.logical_bytes, e.physical_bytes, e.length_bytes, e.flags
    );
    match kind {
        FsKind::Ext2 | FsKind::Ext3 | FsKind::Ext4 | FsKind::Xfs => loc.copies.push((0, physical)),
        FsKind::Btrfs if !devices.is_empty() => {
            loc.method.push_str(" + btrfs-map-logical");
            let cmd =
                Cmd::new("btrfs-map-logical").arg("-l").arg(physical.to_string()).arg(&devices[0]);
            match cmd.output() {
                Ok(o) => {
                    loc.copies = parse_map_logical(&o.stdout, physical, devices);
                    loc.output.push_str(&format!("\n$ {}\n{}", o.cmdline, o.text()));
                }
                Err(e) => loc.output.push_str(&format!("\n{e}")),
            }
        }
        _ => {}
    }
    loc
}

/// Parse `mirror 1 logical L physical P device /dev/loopN` lines for logical address `logical`
/// (the tool also lists the blocks after it, up to its default length).
pub fn parse_map_logical(out: &str, logical: u64, devices: &[PathBuf]) -> Vec<(usize, u64)> {
    let mut v = Vec::new();
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let l =
            w.iter().position(|x| *x == "logical").and_then(|i| w.get(i + 1)?.parse::<u64>().ok());
        if l != Some(logical) {
            continue;
        }
        let phys = w.iter().position(|x| *x == "physical").and_then(|i| w.get(i + 1)?.parse().ok());
        let dev = w.iter().position(|x| *x == "device").and_then(|i| w.get(i + 1));
        if let (Some(p), Some(d)) = (phys, dev) {
            if let Some(idx) = devices.iter().position(|x| x == Path::new(d)) {
                v.push((idx, p));
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::block;
    use std::io::Write;

    #[test]
    fn scan_finds_every_copy_at_sector_steps_and_skips_holes() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let id = BlockId { seed: 9, file: 2, offset: 4096, generation: 1 };
        let b = block::make(id, block::BLOCK_BYTES);
        let imgs: Vec<PathBuf> = (0..2).map(|i| tmp.path().join(format!("dev{i}.img"))).collect();
        for p in &imgs {
            let f = File::create(p).unwrap();
            f.set_len(64 << 20).unwrap();
        }
        // Copy on device 0 at a 512-aligned odd place, past a chunk border; device 1 at 40 MiB.
        let f0 = File::options().write(true).open(&imgs[0]).unwrap();
        f0.write_all_at(&b, (3 << 20) + 1536).unwrap();
        // A neighbour block with another offset must not match.
        let other = block::make(BlockId { offset: 8192, ..id }, block::BLOCK_BYTES);
        f0.write_all_at(&other, 8 << 20).unwrap();
        let mut f1 = File::options().write(true).open(&imgs[1]).unwrap();
        f1.write_all_at(&b, 40 << 20).unwrap();
        f1.flush().unwrap();
        let copies = scan(&imgs, id).unwrap();
        assert_eq!(
            copies.iter().map(|c| (c.device, c.offset_bytes)).collect::<Vec<_>>(),
            vec![(0, (3 << 20) + 1536), (1, 40 << 20)]
        );
    }

    #[test]
    fn map_logical_lines() {
        let out = "mirror 1 logical 13631488 physical 22020096 device /dev/loop4\n\
                   mirror 1 logical 13643776 physical 22032384 device /dev/loop4\n\
                   mirror 2 logical 13631488 physical 1048576 device /dev/loop5\n";
        let devs = vec![PathBuf::from("/dev/loop4"), PathBuf::from("/dev/loop5")];
        assert_eq!(parse_map_logical(out, 13631488, &devs), vec![(0, 22020096), (1, 1048576)]);
    }
}
