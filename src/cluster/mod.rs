//! Many clients at once: a run spread over the ranks of an MPI job (`mpirun -np N fsbench run
//! --mpi ...`).
//!
//! - [`Comm`]: what the run needs from MPI (rank, size, barrier, broadcast and gather of bytes,
//!   a clock), implemented over MPI ([`mpi::MpiComm`], cargo feature `mpi`) and by
//!   [`Single`] (rank 0 of 1), so a run without MPI goes through the same code.
//! - [`clock`]: one clock for all ranks (`MPI_WTIME_IS_GLOBAL`, or an offset to rank 0 measured
//!   with a ping-pong, as IOR's `-g`-less mode and Cristian's algorithm do).
//! - [`hooks`]: the engine's phase hooks: a barrier before each phase, the phase's window on
//!   the global clock, agreement on its outcome (one failing rank fails the run everywhere,
//!   named with its host), the stonewall.
//! - [`reduce`]: on rank 0, the ranks' results become one (bytes and ops summed, latency
//!   histograms merged, time from the first start to the last end as IOR computes it).
//! - `fsbench run --mpi` (`cli/mpi_run.rs`) drives these on every rank.

pub mod clock;
pub mod hooks;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod reduce;
pub mod session;

use std::time::Duration;

/// Why a collective operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Ctrl-C / SIGTERM arrived while waiting for the other ranks.
    #[error("interrupted while waiting for the other ranks at {at}")]
    Interrupted {
        /// Where (e.g. "the barrier before phase `read` of test 3").
        at: String,
    },
    /// Waited longer than `--mpi-timeout` for the other ranks.
    #[error("rank {rank} waited {waited:?} at {at} for the other ranks (--mpi-timeout); a rank is stuck or died without the job ending: check each host's kernel log and the filesystem")]
    Timeout {
        /// This rank.
        rank: u32,
        /// How long.
        waited: Duration,
        /// Where.
        at: String,
    },
    /// The MPI library reported an error.
    #[error("MPI: {0}")]
    Mpi(String),
    /// `--mpi` with a build without MPI support.
    #[error("{}", BUILD_HINT)]
    NoMpi,
    /// MPI could not be initialised as fsbench needs it.
    #[error("{0}")]
    Init(String),
    /// A message from another rank did not decode.
    #[error("a message from rank {rank} did not decode: {reason}")]
    Decode {
        /// Sender.
        rank: u32,
        /// What was wrong.
        reason: String,
    },
}

impl crate::sys::classify::Classify for ClusterError {
    /// `--mpi` that cannot start here (nothing was run) is the user's to fix; the other ranks,
    /// the MPI library or a signal stopping a run are not.
    fn is_bad_input(&self) -> bool {
        matches!(self, ClusterError::NoMpi | ClusterError::Init(_))
    }

    fn is_interrupted(&self) -> bool {
        matches!(self, ClusterError::Interrupted { .. })
    }
}

/// What a multi-client run needs from the message-passing layer. Every collective method
/// (`barrier`, `broadcast`, `gather`) must be called by every rank in the same order.
pub trait Comm: Send + Sync {
    /// This process's rank (0-based).
    fn rank(&self) -> u32;
    /// Number of ranks.
    fn size(&self) -> u32;
    /// This rank's host name.
    fn host(&self) -> String;
    /// Wait until every rank arrived. `at` names the place for errors.
    fn barrier(&self, at: &str) -> Result<(), ClusterError>;
    /// Rank 0's `data` on every rank (other ranks' `data` is ignored).
    fn broadcast(&self, data: Vec<u8>) -> Result<Vec<u8>, ClusterError>;
    /// Every rank's `data`, in rank order, on rank 0; empty on the others.
    fn gather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, ClusterError>;
    /// This rank's clock, seconds (`MPI_Wtime`).
    fn wtime(&self) -> f64;
    /// True when the MPI library promises `wtime` is one clock on all ranks.
    fn wtime_is_global(&self) -> bool;
    /// Send one number to `to` (point to point, for the clock exchange).
    fn send_f64(&self, to: u32, x: f64) -> Result<(), ClusterError>;
    /// Receive one number from `from`.
    fn recv_f64(&self, from: u32) -> Result<f64, ClusterError>;
    /// End every rank of the job at once (after printing why): for when ranks can no longer
    /// agree, e.g. a barrier timed out.
    fn abort(&self, code: i32) -> !;
}

/// A single process: rank 0 of 1. Collectives return at once.
pub struct Single {
    start: std::time::Instant,
}

impl Default for Single {
    fn default() -> Self {
        Single { start: std::time::Instant::now() }
    }
}

impl Comm for Single {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        1
    }
    fn host(&self) -> String {
        crate::model::host::HostInfo::current().hostname
    }
    fn barrier(&self, _at: &str) -> Result<(), ClusterError> {
        Ok(())
    }
    fn broadcast(&self, data: Vec<u8>) -> Result<Vec<u8>, ClusterError> {
        Ok(data)
    }
    fn gather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, ClusterError> {
        Ok(vec![data.to_vec()])
    }
    fn wtime(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
    fn wtime_is_global(&self) -> bool {
        true
    }
    fn send_f64(&self, to: u32, _x: f64) -> Result<(), ClusterError> {
        Err(ClusterError::Mpi(format!("a single process has no rank {to} to send to")))
    }
    fn recv_f64(&self, from: u32) -> Result<f64, ClusterError> {
        Err(ClusterError::Mpi(format!("a single process has no rank {from} to receive from")))
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}

/// The command line that builds fsbench with MPI, for the error `--mpi` gives without it.
pub const BUILD_HINT: &str = "this fsbench was built without MPI support; build it with `scripts/install-deps.sh mpi && cargo build --release --features mpi` (Debian's Open MPI and libclang) and run it under `mpirun -np N fsbench run --mpi ...`";

/// The MPI communicator of this process, when built with the `mpi` feature; its barriers give
/// up after `timeout`.
pub fn init(timeout: Option<Duration>) -> Result<std::sync::Arc<dyn Comm>, ClusterError> {
    #[cfg(feature = "mpi")]
    {
        let c = mpi::MpiComm::init()?;
        c.set_timeout(timeout);
        Ok(std::sync::Arc::new(c))
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = timeout;
        Err(ClusterError::NoMpi)
    }
}
