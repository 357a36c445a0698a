//! Finding a block on the testbed's devices.
//!
//! The primary method is a scan of the image files for the block's own header (magic, seed,
//! file, offset): every block of the data set is unique, so the scan finds every copy of it on
//! every device, whatever the filesystem (one on ext4, xfs, a btrfs single or a zfs stripe, two
//! on a btrfs raid1 or a zfs mirror). It steps in 512-byte sectors (zfs-fuse allocates in
//! 512-byte units) and skips the images' holes (`SEEK_DATA`), so it reads only what the
//! filesystem wrote. The filesystems' own tools cross-check it where they can say where a block
//! is: FIEMAP's physical offset on ext4 and xfs (a device offset), and on btrfs FIEMAP's
//! logical address mapped to device offsets by `btrfs-map-logical` (each filesystem's plug-in
//! says which, [`crate::testbed::fs::FsIntegrity::map_fiemap`]).

use crate::model::block::{BlockId, HEADER_BYTES, MAGIC};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const SECTOR: u64 = 512;
const CHUNK: usize = 1 << 20;

pub use crate::model::integrity::{BlockCopy, ToolLocation};

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

/// Ask FIEMAP (and the filesystem's plug-in, [`crate::testbed::fs::FsIntegrity::map_fiemap`]:
/// on btrfs `btrfs-map-logical`) where byte `offset` of `file` is. Call while the filesystem is
/// mounted; `devices` are the testbed's loop devices in order.
pub fn by_tools(
    config: &crate::testbed::FsConfig,
    file: &Path,
    offset: u64,
    devices: &[PathBuf],
) -> ToolLocation {
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
    if let Ok(fs) = config.kind.integrity() {
        fs.map_fiemap(physical, devices, &mut loc);
    }
    loc
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
}
