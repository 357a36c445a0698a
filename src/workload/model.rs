//! The validated, typed form of a workload: every size resolved to bytes, every name to an enum.
//! The engine only ever sees these types, so it never has to re-check its input.

use serde::{Deserialize, Serialize};

pub use super::spec::CacheReq;

/// A suite ready to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Suite {
    /// Suite name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Tests in order.
    pub tests: Vec<TestDef>,
}

/// One test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestDef {
    /// Id used by `--test`.
    pub id: String,
    /// Short name.
    pub name: String,
    /// Description in words.
    pub description: String,
    /// Worker threads.
    pub threads: u32,
    /// The file(s).
    pub file: FileDef,
    /// Phases in order.
    pub phases: Vec<PhaseDef>,
}

/// The test's file(s).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileDef {
    /// Size in bytes (after scaling and resolving `freemem`).
    pub size_bytes: u64,
    /// One file shared by all threads, or one per thread.
    pub shared: bool,
    /// Created and filled in the untimed setup.
    pub prefill: bool,
}

/// One phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseDef {
    /// Name.
    pub name: String,
    /// Timed or set-up.
    pub timed: bool,
    /// Cache precondition.
    pub cache: CacheReq,
    /// Open flags.
    pub open: OpenFlags,
    /// Operations, repeated in order (entries with `repeat = n` are expanded).
    pub pattern: Vec<OpDef>,
    /// Work per thread.
    pub amount: Amount,
    /// Sync policy.
    pub sync: SyncPolicy,
}

/// Flags for `open(2)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenFlags {
    /// `O_CREAT`.
    pub create: bool,
    /// `O_TRUNC`.
    pub trunc: bool,
    /// `O_APPEND`.
    pub append: bool,
    /// `O_DSYNC`.
    pub dsync: bool,
    /// `O_SYNC`.
    pub sync: bool,
    /// `O_DIRECT`.
    pub direct: bool,
}

impl OpenFlags {
    /// The flags as written in a workload, e.g. `create,dsync`.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        for (on, n) in [
            (self.create, "create"),
            (self.trunc, "trunc"),
            (self.append, "append"),
            (self.dsync, "dsync"),
            (self.sync, "sync"),
            (self.direct, "direct"),
        ] {
            if on {
                v.push(n);
            }
        }
        v
    }
}

/// Kinds of operation. Data operations now; metadata operations join this enum later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// `pread(2)`.
    Read,
    /// `pwrite(2)`.
    Write,
    /// `fsync(2)`.
    Fsync,
    /// `fdatasync(2)`.
    Fdatasync,
    /// `open(2)` (timed once per thread per phase).
    Open,
    /// `close(2)` (timed once per thread per phase).
    Close,
}

impl OpKind {
    /// Every kind, in the order histograms are indexed.
    pub const ALL: [OpKind; 6] = [
        OpKind::Read,
        OpKind::Write,
        OpKind::Fsync,
        OpKind::Fdatasync,
        OpKind::Open,
        OpKind::Close,
    ];

    /// Index into per-kind arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Fsync => "fsync",
            OpKind::Fdatasync => "fdatasync",
            OpKind::Open => "open",
            OpKind::Close => "close",
        }
    }

    /// Whether the op moves data (counts toward bytes and the main throughput).
    pub fn is_data(self) -> bool {
        matches!(self, OpKind::Read | OpKind::Write)
    }
}

/// Number of [`OpKind`]s.
pub const OP_KINDS: usize = OpKind::ALL.len();

/// One operation of a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OpDef {
    /// What to do.
    pub kind: OpKind,
    /// Transfer size (ignored for syncs).
    pub size: SizeDist,
    /// Where.
    pub offset: OffsetMode,
    /// Alignment of random offsets (1 = unaligned).
    pub align: u64,
}

/// Transfer size distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SizeDist {
    /// Always this many bytes.
    Fixed(u64),
    /// Uniform over `[min, max]` bytes.
    Uniform(u64, u64),
}

impl SizeDist {
    /// Largest possible size.
    pub fn max(&self) -> u64 {
        match *self {
            SizeDist::Fixed(n) => n,
            SizeDist::Uniform(_, hi) => hi,
        }
    }

    /// Mean size.
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Fixed(n) => n as f64,
            SizeDist::Uniform(lo, hi) => (lo + hi) as f64 / 2.0,
        }
    }
}

/// Offset selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OffsetMode {
    /// Continue where the previous sequential operation ended (per thread).
    Sequential,
    /// Uniformly random, aligned to `align`, such that the transfer fits in the file.
    Random,
    /// Same offset as the previous operation.
    Last,
}

/// Work per thread for a phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Amount {
    /// Bytes read + written.
    Bytes(u64),
    /// Operations (reads + writes + explicit syncs in the pattern).
    Ops(u64),
    /// Wall-clock seconds.
    Seconds(f64),
    /// Full sequential passes over the thread's part of the file.
    Passes(u32),
}

/// Which sync call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncCall {
    /// `fsync(2)`.
    Fsync,
    /// `fdatasync(2)`.
    Fdatasync,
}

impl SyncCall {
    /// The op kind whose histogram records this call.
    pub fn kind(self) -> OpKind {
        match self {
            SyncCall::Fsync => OpKind::Fsync,
            SyncCall::Fdatasync => OpKind::Fdatasync,
        }
    }
}

/// When a phase syncs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncPolicy {
    /// Sync each time the bytes this thread has written reach the next multiple of this (so "every
    /// 10 MB" of a 50 MB file is five syncs, at the 10, 20, 30, 40 and 50 MB marks).
    pub every_bytes: Option<u64>,
    /// Sync each time this thread's write count reaches the next multiple of this.
    pub every_ops: Option<u64>,
    /// The periodic call.
    pub call: Option<SyncCall>,
    /// Sync at the end of the phase (inside the timing).
    pub at_end: Option<SyncCall>,
}

impl TestDef {
    /// Bytes a test's files occupy (for sizing a testbed).
    pub fn footprint_bytes(&self) -> u64 {
        let files = if self.file.shared { 1 } else { self.threads as u64 };
        self.file.size_bytes * files
    }
}
