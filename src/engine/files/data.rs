//! A data test's files: one file shared by every thread (each taking its own region for
//! sequential ops), or one per thread; opened by each phase's workers and read and written at
//! offsets through the engine's queue.

use super::{removes_files, SetUp, TestFiles, WorkerShare};
use crate::engine::runner::{EngineOptions, Progress};
use crate::engine::worker::{FileWork, PaddedCounter, Work};
use crate::model::failure::EngineError;
use crate::model::job::{Amount, PhaseDef, TestDef};
use crate::model::result::{PhaseResult, RepResult, Warning};
use std::path::{Path, PathBuf};

/// A data test's files.
pub(super) struct DataFiles {
    /// Their paths: one (shared) or one per thread of this process.
    paths: Vec<PathBuf>,
    /// Per thread, the counter its progress (bytes) is read from; made for each phase.
    counters: Vec<PaddedCounter>,
}

impl DataFiles {
    /// Name the test's files under `dir` (and remove what an earlier run left there). With
    /// several processes in one directory ([`EngineOptions::share`]), a shared file is one for
    /// all of them; files of one thread get the process's index in their names.
    pub(super) fn make(test: &TestDef, dir: &Path, opts: &EngineOptions) -> DataFiles {
        let paths: Vec<PathBuf> = if test.files.shared {
            vec![dir.join(format!("t{}.dat", test.id))]
        } else if let Some(s) = opts.share {
            let i = s.index;
            (0..test.threads).map(|k| dir.join(format!("t{}.r{i}.{k}.dat", test.id))).collect()
        } else {
            (0..test.threads).map(|k| dir.join(format!("t{}.{k}.dat", test.id))).collect()
        };
        let files = DataFiles { paths, counters: Vec::new() };
        files.remove_created_by(test, opts);
        files
    }

    fn remove_created_by(&self, test: &TestDef, opts: &EngineOptions) {
        if removes_files(test, opts) {
            for p in &self.paths {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

impl TestFiles for DataFiles {
    fn preflight(&self, test: &TestDef) -> Result<(), EngineError> {
        if !test.phases.iter().any(|p| p.open.direct) {
            return Ok(());
        }
        // O_DIRECT refused or misaligned: this test's failure, before any file is made.
        match self.paths.first().and_then(|p| p.parent()) {
            Some(dir) => crate::engine::direct::probe(dir)
                .and_then(|a| crate::engine::direct::check_test(test, &a)),
            None => Ok(()),
        }
    }

    fn set_up(&mut self, cx: &SetUp<'_>) -> Result<bool, EngineError> {
        let (test, opts) = (cx.test, cx.opts);
        // A file shared by several processes is prefilled once, whole, by the first.
        let others_fill = test.files.shared && opts.share.is_some_and(|s| s.index > 0);
        if !test.files.prefill || others_fill {
            return Ok(true);
        }
        cx.progress.phase_start(test, cx.rep, "setup", Some(test.footprint_bytes()));
        let size = file_size(test, opts);
        let verify = opts.verify.then_some(opts.seed);
        let r = prefill(&self.paths, size, opts.compress_percent, cx.seed, verify, cx.progress);
        cx.progress.phase_end();
        r.map_err(|e| e.at("setup"))
    }

    fn phase_seed(&self, seed: u64, _pi: usize) -> u64 {
        // Every data phase of a repetition has the repetition's seed (kept, so that runs
        // repeat their operations).
        seed
    }

    fn start_progress(&self, test: &TestDef, rep: u32, phase: &PhaseDef, progress: &dyn Progress) {
        progress.phase_start(test, rep, &phase.name, expected_bytes(test, phase))
    }

    fn all_exist(&self) -> bool {
        self.paths.iter().all(|p| p.exists())
    }

    fn residency_files(&self) -> Vec<PathBuf> {
        self.paths.clone()
    }

    fn sampled(&self) -> bool {
        false
    }

    fn evictable(&self) -> &[PathBuf] {
        &self.paths
    }

    fn shares<'a>(
        &'a mut self,
        test: &'a TestDef,
        _phase: &'a PhaseDef,
        opts: &'a EngineOptions,
    ) -> Vec<WorkerShare<'a>> {
        let n = test.threads as usize;
        self.counters = (0..n).map(|_| PaddedCounter::default()).collect();
        let size = file_size(test, opts);
        // Threads of all processes sharing the file, and this process's first among them.
        let (first, all) = match opts.share {
            Some(s) if test.files.shared => (s.index as usize * n, s.count as usize * n),
            _ => (0, n),
        };
        let (paths, counters) = (&self.paths, &self.counters);
        (0..n)
            .map(|k| {
                let (path, region_start, region_len) = if test.files.shared {
                    let g = first + k;
                    let per = size / all as u64;
                    // The last thread takes the remainder.
                    let len = if g == all - 1 { size - per * g as u64 } else { per };
                    (&paths[0], per * g as u64, len)
                } else {
                    (&paths[k], 0, size)
                };
                // A shared file is file 0; otherwise thread k's file is file k.
                let file = if test.files.shared { 0 } else { k as u64 };
                let verify = opts.verify.then_some((opts.seed, file));
                let work = FileWork { path, file_size: size, region_start, region_len, verify };
                (Work::File(work), &counters[k].0)
            })
            .collect()
    }

    fn remove_created(&self, test: &TestDef, opts: &EngineOptions) {
        self.remove_created_by(test, opts);
    }

    fn verify(
        &self,
        test: &TestDef,
        opts: &EngineOptions,
        rep: u32,
        _phases: &[PhaseResult],
    ) -> Result<Warning, EngineError> {
        let c = crate::engine::verify::check_files(&self.paths, opts.seed, test.files.prefill)?;
        Ok(Warning::Verified {
            repetition: rep + 1,
            blocks_intact: c.intact,
            blocks_unwritten: c.unwritten,
            nanos: c.nanos,
        })
    }

    fn finish_result(&self, complete: bool, r: &mut RepResult) {
        if complete && self.all_exist() {
            // After the last phase, outside every timing: FIEMAP with its sync flag.
            r.extents = Some(crate::observe::extents::summarize(&self.paths));
        }
    }

    fn remove(self: Box<Self>, test: &TestDef, opts: &EngineOptions) {
        self.remove_created_by(test, opts);
    }
}

/// Size of a test's file: a shared file used by several processes is as many times larger.
fn file_size(test: &TestDef, opts: &EngineOptions) -> u64 {
    match opts.share {
        Some(s) if test.files.shared => test.files.size_bytes() * s.count as u64,
        _ => test.files.size_bytes(),
    }
}

/// Bytes a data phase moves over all threads, when known (for progress).
fn expected_bytes(test: &TestDef, phase: &PhaseDef) -> Option<u64> {
    let t = test.threads as u64;
    match phase.amount {
        Amount::Bytes(b) => Some(b * t),
        Amount::Passes(p) => Some(test.footprint_bytes() * p as u64),
        Amount::Ops(k) => {
            let data: Vec<_> = phase.pattern.data().iter().filter(|o| o.kind.is_data()).collect();
            if data.is_empty() {
                return None;
            }
            let mean = data.iter().map(|o| o.size.mean()).sum::<f64>() / data.len() as f64;
            let share = data.len() as f64 / phase.pattern.len() as f64;
            Some((k as f64 * share * mean) as u64 * t)
        }
        Amount::Seconds(_) | Amount::Fill(_) | Amount::Share(_) => None,
    }
}

/// Write each file sequentially with 1 MiB writes and fsync it (with `verify`: the verified
/// content of its seed). `Ok(false)` if interrupted.
pub fn prefill(
    paths: &[PathBuf],
    size: u64,
    compress_percent: u8,
    seed: u64,
    verify: Option<u64>,
    progress: &dyn Progress,
) -> Result<bool, EngineError> {
    use std::io::Write;
    const CHUNK: usize = 1 << 20;
    let mut done = 0u64;
    for (i, p) in paths.iter().enumerate() {
        let mut pool = match verify {
            Some(vseed) => crate::engine::buffer::WritePool::verified(CHUNK, 1, vseed, i as u64),
            None => crate::engine::buffer::WritePool::new(CHUNK, compress_percent, seed ^ 0xf111),
        };
        let mut f = std::fs::File::create(p)
            .map_err(|e| EngineError::io("creating", Some(p.clone()), &e))?;
        let mut left = size;
        while left > 0 {
            if crate::sys::signals::interrupted() {
                return Ok(false);
            }
            let n = left.min(CHUNK as u64) as usize;
            f.write_all(pool.window_at(0, size - left, n))
                .map_err(|e| EngineError::io("writing", Some(p.clone()), &e))?;
            left -= n as u64;
            done += n as u64;
            progress.phase_progress(done);
        }
        f.sync_all().map_err(|e| EngineError::io("fsync", Some(p.clone()), &e))?;
    }
    Ok(true)
}
