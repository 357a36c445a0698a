//! [`Comm`] over MPI (rsmpi on the system's Open MPI or MPICH; cargo feature `mpi`).
//!
//! MPI is initialised with `MPI_THREAD_SERIALIZED`: any thread may call MPI, one at a time, and
//! the mutex around the communicator guarantees that. Barriers are non-blocking barriers polled
//! every millisecond, so a rank waiting for the others still notices Ctrl-C and its timeout.

use super::{ClusterError, Comm};
use mpi::collective::Root;
use mpi::datatype::PartitionMut;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::AsRaw;
use mpi::Threading;
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Inner {
    world: SimpleCommunicator,
    // Dropped last: finalises MPI.
    _universe: mpi::environment::Universe,
}

// SAFETY: MPI handles are plain values valid on any thread of the process once MPI runs at
// MPI_THREAD_SERIALIZED or above (checked in `init`); the mutex makes calls one at a time.
unsafe impl Send for Inner {}

/// The world communicator of this MPI job.
pub struct MpiComm {
    inner: Mutex<Inner>,
    rank: u32,
    size: u32,
    host: String,
    global_clock: bool,
    timeout: Mutex<Option<Duration>>,
}

impl MpiComm {
    /// Initialise MPI. Fails when the library cannot give serialised threading.
    pub fn init() -> Result<MpiComm, ClusterError> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Serialized)
            .ok_or_else(|| {
                ClusterError::Init("MPI was already initialised in this process".into())
            })?;
        if threading < Threading::Serialized {
            return Err(ClusterError::Init(format!(
                "the MPI library gives only {threading:?} threading; fsbench needs MPI_THREAD_SERIALIZED"
            )));
        }
        let world = universe.world();
        let rank = world.rank() as u32;
        let size = world.size() as u32;
        let host = mpi::environment::processor_name()
            .unwrap_or_else(|_| crate::model::host::HostInfo::current().hostname);
        let global_clock = wtime_is_global(&world);
        Ok(MpiComm {
            inner: Mutex::new(Inner { world, _universe: universe }),
            rank,
            size,
            host,
            global_clock,
            timeout: Mutex::new(None),
        })
    }

    /// Give up waiting at a barrier after this long (None: wait for ever).
    pub fn set_timeout(&self, t: Option<Duration>) {
        if let Ok(mut g) = self.timeout.lock() {
            *g = t;
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Inner>, ClusterError> {
        self.inner.lock().map_err(|_| ClusterError::Mpi("communicator lock poisoned".into()))
    }
}

fn wtime_is_global(world: &SimpleCommunicator) -> bool {
    let mut flag: std::os::raw::c_int = 0;
    let mut val: *mut std::os::raw::c_int = std::ptr::null_mut();
    // SAFETY: MPI_WTIME_IS_GLOBAL is a predefined attribute of MPI_COMM_WORLD whose value is a
    // pointer to an int; `val` receives that pointer and is read only when `flag` says it is set.
    unsafe {
        let rc = mpi::ffi::MPI_Comm_get_attr(
            world.as_raw(),
            mpi::ffi::MPI_WTIME_IS_GLOBAL as std::os::raw::c_int,
            (&mut val as *mut *mut std::os::raw::c_int).cast(),
            &mut flag,
        );
        rc == 0 && flag != 0 && !val.is_null() && *val != 0
    }
}

impl Comm for MpiComm {
    fn rank(&self) -> u32 {
        self.rank
    }
    fn size(&self) -> u32 {
        self.size
    }
    fn host(&self) -> String {
        self.host.clone()
    }

    fn barrier(&self, at: &str) -> Result<(), ClusterError> {
        let timeout = self.timeout.lock().ok().and_then(|g| *g);
        let started = Instant::now();
        let mut req: mpi::ffi::MPI_Request = unsafe { mpi::ffi::RSMPI_REQUEST_NULL };
        {
            let g = self.lock()?;
            // SAFETY: `req` outlives the request: it is polled to completion below, or the job
            // is aborted.
            let rc = unsafe { mpi::ffi::MPI_Ibarrier(g.world.as_raw(), &mut req) };
            if rc != 0 {
                return Err(ClusterError::Mpi(format!("MPI_Ibarrier failed ({rc}) at {at}")));
            }
        }
        loop {
            let mut done: std::os::raw::c_int = 0;
            {
                let _g = self.lock()?;
                // SAFETY: `req` is the active request started above; MPI_Test may free it.
                let rc = unsafe {
                    mpi::ffi::MPI_Test(&mut req, &mut done, mpi::ffi::RSMPI_STATUS_IGNORE)
                };
                if rc != 0 {
                    return Err(ClusterError::Mpi(format!("MPI_Test failed ({rc}) at {at}")));
                }
            }
            if done != 0 {
                return Ok(());
            }
            if crate::sys::signals::interrupted() {
                // The request cannot be cancelled; the process ends soon after (every rank
                // got the signal from mpirun), so it is left pending.
                return Err(ClusterError::Interrupted { at: at.to_string() });
            }
            if let Some(t) = timeout {
                if started.elapsed() > t {
                    let e = ClusterError::Timeout {
                        rank: self.rank,
                        waited: started.elapsed(),
                        at: at.to_string(),
                    };
                    eprintln!("fsbench: {e}; ending every rank of the job");
                    self.abort(3);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn broadcast(&self, data: Vec<u8>) -> Result<Vec<u8>, ClusterError> {
        let g = self.lock()?;
        let root = g.world.process_at_rank(0);
        let mut len = data.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.rank == 0 { data } else { vec![0u8; len as usize] };
        root.broadcast_into(&mut buf[..]);
        Ok(buf)
    }

    fn gather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, ClusterError> {
        let g = self.lock()?;
        let root = g.world.process_at_rank(0);
        let len = i32::try_from(data.len())
            .map_err(|_| ClusterError::Mpi(format!("a {} byte message is too long", data.len())))?;
        if self.rank != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(data);
            return Ok(Vec::new());
        }
        let mut counts = vec![0i32; self.size as usize];
        root.gather_into_root(&len, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        let total: i32 = counts.iter().sum();
        let mut buf = vec![0u8; total as usize];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(data, &mut part);
        }
        Ok(counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec())
            .collect())
    }

    fn wtime(&self) -> f64 {
        mpi::time()
    }
    fn wtime_is_global(&self) -> bool {
        self.global_clock
    }

    fn send_f64(&self, to: u32, x: f64) -> Result<(), ClusterError> {
        let g = self.lock()?;
        g.world.process_at_rank(to as i32).send(&x);
        Ok(())
    }

    fn recv_f64(&self, from: u32) -> Result<f64, ClusterError> {
        let g = self.lock()?;
        let (x, _status) = g.world.process_at_rank(from as i32).receive::<f64>();
        Ok(x)
    }

    fn abort(&self, code: i32) -> ! {
        // SAFETY: MPI_Abort on the world communicator ends the job; it does not return.
        unsafe {
            mpi::ffi::MPI_Abort(mpi::ffi::RSMPI_COMM_WORLD, code);
        }
        std::process::exit(code)
    }
}
