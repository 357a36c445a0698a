//! Faults, and writing them into a testbed's own image files.
//!
//! The four faults are the ones a disk, a controller or a firmware bug produce (IRON file
//! systems, SOSP 2005, sections 3-4): a block that reads as zeroes, a few flipped bits, random
//! garbage, and a lost write that leaves the previous version of the block in place.

use super::locate::BlockCopy;
use crate::model::block::{self, BlockId};
use serde::{Deserialize, Serialize};
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// A fault written over a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// The block reads as zeroes.
    Zero,
    /// Three bits flipped in the block's payload (at seeded places).
    Bitflip,
    /// Random bytes (seeded).
    Garbage,
    /// The previous generation of the block: a write that never reached the disk. For a data
    /// block, generation 0 of the same block, intact and with a valid checksum of its own.
    Stale,
}

impl Fault {
    /// All faults, in table order.
    pub const ALL: [Fault; 4] = [Fault::Zero, Fault::Bitflip, Fault::Garbage, Fault::Stale];

    /// The name used in the CLI, tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Zero => "zero",
            Fault::Bitflip => "bitflip",
            Fault::Garbage => "garbage",
            Fault::Stale => "stale",
        }
    }

    /// The bytes to write over `original`, a data block `id`. `seed` chooses the bits and the
    /// garbage, so a run is repeatable.
    pub fn data_bytes(self, original: &[u8], id: BlockId, seed: u64) -> Vec<u8> {
        match self {
            Fault::Stale => {
                let old = BlockId { generation: id.generation.saturating_sub(1), ..id };
                block::make(old, original.len())
            }
            _ => self.raw_bytes(original, seed),
        }
    }

    /// The bytes to write over `original` for any block (metadata included); `Stale` without
    /// an older version at hand uses `older` if given, else is not applicable (`None`).
    pub fn raw_bytes(self, original: &[u8], seed: u64) -> Vec<u8> {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0xfa01_7fa0_17fa_017f);
        match self {
            Fault::Zero => vec![0u8; original.len()],
            Fault::Bitflip => {
                let mut v = original.to_vec();
                // In the payload, so the header (and a later scan) still names the block.
                let lo = block::HEADER_BYTES.min(v.len());
                for _ in 0..3 {
                    let i = rng.usize(lo..v.len());
                    v[i] ^= 1 << rng.u8(0..8);
                }
                v
            }
            Fault::Garbage => {
                let mut v = vec![0u8; original.len()];
                rng.fill(&mut v);
                v
            }
            Fault::Stale => original.to_vec(),
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A fault name fsbench does not know (`--faults`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault `{0}`; valid: zero, bitflip, garbage, stale")]
pub struct UnknownFault(pub String);

impl crate::sys::classify::Classify for UnknownFault {
    fn is_bad_input(&self) -> bool {
        true
    }
}

impl std::str::FromStr for Fault {
    type Err = UnknownFault;
    fn from_str(s: &str) -> Result<Self, UnknownFault> {
        Fault::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| UnknownFault(s.to_string()))
    }
}

/// Refusals and failures of an injection.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    /// The target is not one of the testbed's own images.
    #[error("refusing to write into {0}: not an image file this testbed created")]
    NotOwned(PathBuf),
    /// The filesystem is online.
    #[error("refusing to inject a fault while the filesystem is mounted or its pool imported")]
    Online,
    /// Reading or writing the image failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was done.
        what: &'static str,
        /// The image.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

impl crate::sys::classify::Classify for InjectError {
    /// A refusal guards fsbench's own images, and I/O fails on the system: not the user's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// Read `len` bytes of a copy (what is there now).
pub fn read_copy(copy: &BlockCopy, len: usize) -> Result<Vec<u8>, InjectError> {
    let io = |what, source| InjectError::Io { what, path: copy.image.clone(), source };
    let f = std::fs::File::open(&copy.image).map_err(|e| io("opening", e))?;
    let mut v = vec![0u8; len];
    f.read_exact_at(&mut v, copy.offset_bytes).map_err(|e| io("reading", e))?;
    Ok(v)
}

/// Write `bytes` over `copy` in its image file, durably, and drop the image's cached pages.
/// Only into one of `owned` (the testbed's image files), and only while `online` is false.
pub fn inject(
    copy: &BlockCopy,
    bytes: &[u8],
    owned: &[PathBuf],
    online: bool,
) -> Result<(), InjectError> {
    if !owned.contains(&copy.image) {
        return Err(InjectError::NotOwned(copy.image.clone()));
    }
    if online {
        return Err(InjectError::Online);
    }
    let io = |what, source| InjectError::Io { what, path: copy.image.clone(), source };
    let f = OpenOptions::new().write(true).open(&copy.image).map_err(|e| io("opening", e))?;
    f.write_all_at(bytes, copy.offset_bytes).map_err(|e| io("writing", e))?;
    f.sync_data().map_err(|e| io("syncing", e))?;
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)
        .map_err(|e| io("dropping cached pages of", e.into()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use block::{check, Found, BLOCK_BYTES};

    const ID: BlockId = BlockId { seed: 1, file: 0, offset: 0, generation: 1 };

    #[test]
    fn each_fault_damages_the_block_as_named_and_repeatably() {
        let good = block::make(ID, BLOCK_BYTES);
        let f = |x: Fault| x.data_bytes(&good, ID, 42);
        assert_eq!(check(ID, &f(Fault::Zero)), Found::Zeroed);
        assert!(matches!(check(ID, &f(Fault::Bitflip)), Found::BadChecksum { .. }));
        let flipped = f(Fault::Bitflip);
        let bits: u32 = good.iter().zip(&flipped).map(|(a, b)| (a ^ b).count_ones()).sum();
        assert!((1..=3).contains(&bits), "{bits} bits differ");
        assert_eq!(check(ID, &f(Fault::Garbage)), Found::NoHeader);
        assert_eq!(check(ID, &f(Fault::Stale)), Found::OtherGeneration { generation: 0 });
        for x in Fault::ALL {
            assert_eq!(f(x), f(x), "{x} is seeded");
            assert_eq!(x.name().parse::<Fault>().unwrap(), x);
        }
        assert_ne!(
            Fault::Garbage.data_bytes(&good, ID, 1),
            Fault::Garbage.data_bytes(&good, ID, 2)
        );
    }

    #[test]
    fn injection_only_into_owned_images_while_offline() {
        let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        let img = tmp.path().join("dev0.img");
        std::fs::write(&img, vec![7u8; 8192]).unwrap();
        let copy = BlockCopy { device: 0, image: img.clone(), offset_bytes: 4096 };
        let other = tmp.path().join("other.img");
        assert!(matches!(
            inject(&copy, &[0u8; 16], &[other], false),
            Err(InjectError::NotOwned(_))
        ));
        assert!(matches!(
            inject(&copy, &[0u8; 16], std::slice::from_ref(&img), true),
            Err(InjectError::Online)
        ));
        inject(&copy, &[0u8; 16], std::slice::from_ref(&img), false).unwrap();
        let back = std::fs::read(&img).unwrap();
        assert_eq!(&back[4096..4112], &[0u8; 16]);
        assert_eq!(back[4112], 7);
        assert_eq!(read_copy(&copy, 17).unwrap()[16], 7);
    }
}
