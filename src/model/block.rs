//! Verifiable blocks: every block written carries a header saying what it is, and a checksum,
//! and its payload is derived from the header, so a block read back can be checked on its own
//! and a wrong one can be named ("zeroes", "an older generation of the same block", "another
//! file's block", "bits changed").
//!
//! Layout of a block of `len` bytes (little-endian):
//!
//! | bytes | field |
//! | --- | --- |
//! | 0..8 | magic `FSBVRFY1` |
//! | 8..16 | seed |
//! | 16..24 | file id |
//! | 24..32 | offset of the block in its file |
//! | 32..40 | generation (which write of this offset) |
//! | 40..44 | block length |
//! | 44..48 | CRC-32 (IEEE, `crc32fast`) of every other byte of the block |
//! | 48..len | payload: pseudo-random bytes from wyrand (`fastrand`) seeded by the header fields |
//!
//! The payload is incompressible and unique per (seed, file, offset, generation), so a
//! filesystem cannot compress or deduplicate it, and a scan of a device finds exactly the
//! copies of one block (see [`super::locate`]). Checking needs no state: the header says what
//! the block must be, the checksum says whether it is intact, and comparing the header with
//! what was expected at that place catches stale and misdirected blocks, which a checksum alone
//! cannot (fio's `verify` makes the same distinction with its `verify_header`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Magic at the start of every block.
pub const MAGIC: [u8; 8] = *b"FSBVRFY1";
/// Bytes of the header.
pub const HEADER_BYTES: usize = 48;
/// Block size of the integrity data set (the page and filesystem block size here).
pub const BLOCK_BYTES: usize = 4096;

/// What a block is: the fields of its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlockId {
    /// The run's seed.
    pub seed: u64,
    /// Which file.
    pub file: u64,
    /// Offset of the block in the file, bytes.
    pub offset: u64,
    /// Which write of this offset (an older generation is a stale block).
    pub generation: u64,
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "file {} offset {} generation {} (seed {})",
            self.file, self.offset, self.generation, self.seed
        )
    }
}

/// A block's header as read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// What the block says it is.
    pub id: BlockId,
    /// The block length it was written with.
    pub len: u32,
    /// The stored checksum.
    pub crc: u32,
}

/// Fill `buf` (its length is the block length, at least [`HEADER_BYTES`]) with block `id`.
/// No allocation: usable in a write loop.
pub fn fill(id: BlockId, buf: &mut [u8]) {
    assert!(buf.len() >= HEADER_BYTES, "a verified block holds at least its header");
    let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
    buf[0..8].copy_from_slice(&MAGIC);
    buf[8..16].copy_from_slice(&id.seed.to_le_bytes());
    buf[16..24].copy_from_slice(&id.file.to_le_bytes());
    buf[24..32].copy_from_slice(&id.offset.to_le_bytes());
    buf[32..40].copy_from_slice(&id.generation.to_le_bytes());
    buf[40..44].copy_from_slice(&len.to_le_bytes());
    let mut rng = fastrand::Rng::with_seed(payload_seed(id));
    for chunk in buf[HEADER_BYTES..].chunks_mut(8) {
        let v = rng.u64(..).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    let crc = checksum(buf);
    buf[44..48].copy_from_slice(&crc.to_le_bytes());
}

/// A fresh block `id` of `len` bytes.
pub fn make(id: BlockId, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    fill(id, &mut v);
    v
}

/// The payload's seed: the header fields folded in one at a time through splitmix64's
/// finaliser (a bijection), so distinct headers give unrelated streams. (Rotating the fields
/// into one word first would not do: offset 64 KiB rotated by 31 bits is generation 1 rotated
/// by 47.)
fn payload_seed(id: BlockId) -> u64 {
    let mut x = mix64(id.seed);
    for v in [id.file, id.offset, id.generation] {
        x = mix64(x ^ v);
    }
    x
}

fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// CRC-32 of the block without its checksum field.
pub fn checksum(buf: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&buf[..44]);
    h.update(&buf[HEADER_BYTES..]);
    h.finalize()
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_le_bytes(b)
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&buf[at..at + 4]);
    u32::from_le_bytes(b)
}

/// The header of `buf`, if it starts with [`MAGIC`].
pub fn parse(buf: &[u8]) -> Option<Header> {
    if buf.len() < HEADER_BYTES || buf[0..8] != MAGIC {
        return None;
    }
    Some(Header {
        id: BlockId {
            seed: u64_at(buf, 8),
            file: u64_at(buf, 16),
            offset: u64_at(buf, 24),
            generation: u64_at(buf, 32),
        },
        len: u32_at(buf, 40),
        crc: u32_at(buf, 44),
    })
}

/// What was found where a block was expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "found", rename_all = "snake_case")]
pub enum Found {
    /// The expected block, intact.
    Intact,
    /// Only zero bytes.
    Zeroed,
    /// No block header: overwritten with something else.
    NoHeader,
    /// The header is right but the checksum does not match: bits changed.
    BadChecksum {
        /// Checksum stored in the header.
        stored: u32,
        /// Checksum of the bytes read.
        computed: u32,
    },
    /// An intact block of this offset, but of another generation: a stale (lost) write.
    OtherGeneration {
        /// The generation found.
        generation: u64,
    },
    /// An intact block of another place (file, offset, seed or length): a misdirected write
    /// or read.
    OtherBlock {
        /// What the block says it is.
        id: BlockId,
    },
}

impl Found {
    /// Whether the block is the expected one, intact.
    pub fn is_intact(&self) -> bool {
        matches!(self, Found::Intact)
    }
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Intact => f.write_str("the expected block"),
            Found::Zeroed => f.write_str("zeroes"),
            Found::NoHeader => f.write_str("no block header (other data)"),
            Found::BadChecksum { stored, computed } => write!(
                f,
                "the right header but checksum {computed:08x} instead of {stored:08x} (bits changed)"
            ),
            Found::OtherGeneration { generation } => {
                write!(f, "generation {generation} of this block (a stale version)")
            }
            Found::OtherBlock { id } => write!(f, "the block of {id}"),
        }
    }
}

/// Check `buf` against the block expected there. Reads the block once for the checksum; no
/// allocation.
pub fn check(expected: BlockId, buf: &[u8]) -> Found {
    let Some(h) = parse(buf) else {
        return if buf.iter().all(|&b| b == 0) { Found::Zeroed } else { Found::NoHeader };
    };
    let computed = checksum(buf);
    if computed != h.crc {
        return Found::BadChecksum { stored: h.crc, computed };
    }
    if h.len as usize != buf.len() {
        return Found::OtherBlock { id: h.id };
    }
    if h.id == expected {
        return Found::Intact;
    }
    let same_place = BlockId { generation: expected.generation, ..h.id } == expected;
    if same_place {
        Found::OtherGeneration { generation: h.id.generation }
    } else {
        Found::OtherBlock { id: h.id }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: BlockId = BlockId { seed: 7, file: 3, offset: 8192, generation: 1 };

    #[test]
    fn a_block_checks_intact_and_says_what_it_is() {
        let b = make(ID, BLOCK_BYTES);
        assert_eq!(check(ID, &b), Found::Intact);
        let h = parse(&b).unwrap();
        assert_eq!(h.id, ID);
        assert_eq!(h.len as usize, BLOCK_BYTES);
        // Deterministic: the same id gives the same bytes.
        assert_eq!(b, make(ID, BLOCK_BYTES));
    }

    #[test]
    fn payload_differs_per_field_and_is_incompressible() {
        let b = make(ID, BLOCK_BYTES);
        for other in [
            BlockId { seed: 8, ..ID },
            BlockId { file: 4, ..ID },
            BlockId { offset: 12288, ..ID },
            BlockId { generation: 0, ..ID },
        ] {
            let o = make(other, BLOCK_BYTES);
            let same =
                b[HEADER_BYTES..].iter().zip(&o[HEADER_BYTES..]).filter(|(x, y)| x == y).count();
            // Unrelated random bytes agree in about 1/256 of the places.
            assert!(same < 64, "{other:?}: {same} equal payload bytes");
        }
        let mut counts = [0u32; 256];
        for &x in &b[HEADER_BYTES..] {
            counts[x as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c < 48), "byte values are spread evenly");
    }

    #[test]
    fn payload_seeds_are_distinct_across_fields() {
        let mut seen = std::collections::HashSet::new();
        for seed in 0..4 {
            for file in 0..8 {
                for block in 0..64u64 {
                    for generation in 0..3 {
                        let id = BlockId { seed, file, offset: block * 4096, generation };
                        assert!(seen.insert(payload_seed(id)), "{id:?} collides");
                    }
                }
            }
        }
        // The XOR of two blocks (raidz parity) differs between generations.
        let x = |g| {
            let a = make(BlockId { generation: g, offset: 61440, ..ID }, BLOCK_BYTES);
            let b = make(BlockId { generation: g, offset: 126976, ..ID }, BLOCK_BYTES);
            a.iter().zip(&b).map(|(x, y)| x ^ y).collect::<Vec<u8>>()
        };
        assert_ne!(x(0), x(1));
    }

    #[test]
    fn each_fault_is_named() {
        let good = make(ID, BLOCK_BYTES);
        assert_eq!(check(ID, &vec![0u8; BLOCK_BYTES]), Found::Zeroed);
        let mut garbage = vec![0u8; BLOCK_BYTES];
        fastrand::Rng::with_seed(1).fill(&mut garbage);
        assert_eq!(check(ID, &garbage), Found::NoHeader);
        let mut flipped = good.clone();
        flipped[1000] ^= 0x10;
        assert!(matches!(check(ID, &flipped), Found::BadChecksum { .. }));
        let mut flipped_header = good.clone();
        flipped_header[30] ^= 0x01;
        assert!(matches!(check(ID, &flipped_header), Found::BadChecksum { .. }));
        let stale = make(BlockId { generation: 0, ..ID }, BLOCK_BYTES);
        assert_eq!(check(ID, &stale), Found::OtherGeneration { generation: 0 });
        let elsewhere = BlockId { offset: 0, ..ID };
        assert_eq!(check(ID, &make(elsewhere, BLOCK_BYTES)), Found::OtherBlock { id: elsewhere });
        assert!(check(ID, &stale).to_string().contains("stale"));
    }

    #[test]
    fn any_length_from_the_header_up() {
        for len in [HEADER_BYTES, 512, 1000, 2048, 65536] {
            let b = make(ID, len);
            assert_eq!(check(ID, &b), Found::Intact, "{len}");
        }
        // A block of another length at the same place is not the expected one.
        let b = make(ID, 4096);
        assert!(matches!(check(ID, &b[..2048]), Found::BadChecksum { .. }));
    }
}
