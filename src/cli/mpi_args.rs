//! The options of a multi-client run (`--mpi` and its companions), shared by `run` and
//! `compare`; [`super::mpi_run`] runs them.

use clap::Args;

/// Options of a multi-client run.
#[derive(Debug, Clone, Args)]
pub struct MpiArgs {
    /// Run as one rank of an MPI job: `mpirun -np N fsbench run --mpi --dir DIR ...` (or
    /// `fsbench compare --mpi DIR DIR ...`). Every
    /// rank runs the workload's threads in its own subdirectory of DIR (file per process; DIR
    /// may be a mount all hosts share); phases start together after a barrier, and the figure
    /// is all ranks' bytes over the time from the first start to the last end (as IOR). Needs a
    /// build with `--features mpi`.
    #[arg(long)]
    pub mpi: bool,

    /// With --mpi: stop each timed phase on every rank at the next operation after this many
    /// seconds (IOR's stonewall, `-D`); the figure then counts the work every rank completed.
    #[arg(long, value_name = "SECONDS", requires = "mpi", value_parser = positive_secs)]
    pub stonewall: Option<f64>,

    /// With --mpi: all ranks work in one directory (made by rank 0 in DIR) and share each
    /// test's shared file, which is then ranks times the size, every thread of every rank
    /// writing or reading its own region with sequential offsets, or anywhere in the file with
    /// random ones (IOR's default, shared-file mode). A fileset is one set in one directory
    /// tree for all ranks, ranks times the files, each thread of each rank with its own names
    /// (mdtest's shared-directory mode). Files of one thread get the rank in their names.
    #[arg(long, requires = "mpi")]
    pub mpi_shared: bool,

    /// With --mpi: a rank waiting longer than this at a barrier for the others ends the whole
    /// job with a message naming where it waited (a rank hung in the kernel, or died without
    /// mpirun noticing).
    #[arg(long, value_name = "SECONDS", default_value_t = 1800.0, value_parser = positive_secs, requires = "mpi")]
    pub mpi_timeout: f64,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}
