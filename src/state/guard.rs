//! The one guard type for recorded resources.
//!
//! Every resource fsbench makes follows the same life: recorded in the state, created, used,
//! removed, and its record forgotten; removed by `Drop` on errors, panics and Ctrl-C; kept
//! (record and all) only when asked. [`Guard`] holds that life once; each resource kind only
//! says how it is removed ([`Release`]).

use super::record::{RecordId, Resource, StateDir};
use std::io;
use std::ops::Deref;
use std::path::Path;

/// How one kind of resource is removed.
pub trait Release {
    /// The error of a failed removal (or of updating the state afterwards).
    type Error: std::fmt::Display;
    /// Remove the resource. Called at most once by the guard.
    fn release(&mut self) -> Result<(), Self::Error>;
    /// Wrap a failure to update the state directory `dir`.
    fn state_error(dir: &Path, e: io::Error) -> Self::Error;
}

/// A resource's entry in this process's state record.
#[derive(Debug)]
pub struct Recorded {
    state: StateDir,
    id: RecordId,
}

impl Recorded {
    /// Record `resource` before it is made.
    pub fn new(state: &StateDir, resource: Resource) -> io::Result<Recorded> {
        Ok(Recorded { id: state.record(resource)?, state: state.clone() })
    }

    /// Replace what the record says (e.g. once a loop device's name is known).
    pub fn update(&self, resource: Resource) -> io::Result<()> {
        self.state.update(&self.id, resource)
    }

    /// The resource was removed (or never came to be): drop the entry.
    pub fn forget(self) -> io::Result<()> {
        self.state.forget(&self.id)
    }

    /// The state directory.
    pub fn state(&self) -> &StateDir {
        &self.state
    }

    /// The entry's handle.
    pub fn id(&self) -> &RecordId {
        &self.id
    }
}

/// A recorded resource, removed (and its record forgotten) by [`Guard::down`] or on drop.
/// A failed removal leaves the record for `fsbench testbed cleanup`.
#[derive(Debug)]
pub struct Guard<T: Release> {
    inner: T,
    rec: Option<Recorded>,
}

impl<T: Release> Guard<T> {
    /// Own `inner`, which `rec` records.
    pub fn new(inner: T, rec: Recorded) -> Guard<T> {
        Guard { inner, rec: Some(rec) }
    }

    /// Remove the resource and forget its record. Idempotent.
    pub fn down(&mut self) -> Result<(), T::Error> {
        let Some(rec) = self.rec.take() else {
            return Ok(());
        };
        // On failure the entry stays in the state file for `fsbench testbed cleanup`.
        self.inner.release()?;
        let dir = rec.state().path().to_path_buf();
        rec.forget().map_err(|e| T::state_error(&dir, e))
    }

    /// [`Guard::down`], consuming the guard.
    pub fn teardown(mut self) -> Result<(), T::Error> {
        self.down()
    }

    /// Leave the resource and its record in place (the record's handle is returned, e.g. to
    /// move it to a kept record).
    pub fn keep(mut self) -> Option<RecordId> {
        self.rec.take().map(|r| r.id().clone())
    }

    /// The record's handle, while the resource is owned.
    pub fn record_id(&self) -> Option<&RecordId> {
        self.rec.as_ref().map(Recorded::id)
    }

    /// The record, while the resource is owned.
    pub fn recorded(&self) -> Option<&Recorded> {
        self.rec.as_ref()
    }
}

impl<T: Release> Deref for Guard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T: Release> Drop for Guard<T> {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("fsbench: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static RELEASED: AtomicUsize = AtomicUsize::new(0);

    #[derive(Debug)]
    struct Thing(bool);
    impl Release for Thing {
        type Error = String;
        fn release(&mut self) -> Result<(), String> {
            RELEASED.fetch_add(1, Ordering::SeqCst);
            if self.0 {
                Ok(())
            } else {
                Err("busy".into())
            }
        }
        fn state_error(dir: &Path, e: io::Error) -> String {
            format!("{}: {e}", dir.display())
        }
    }

    #[test]
    fn released_once_and_forgotten_failed_release_keeps_the_record() {
        let t = tempfile::tempdir().unwrap();
        let sd = StateDir::new(t.path().join("s"));
        let before = RELEASED.load(Ordering::SeqCst);
        let rec = Recorded::new(&sd, Resource::ZfsPool { name: "fsbench_g1".into() }).unwrap();
        let mut g = Guard::new(Thing(true), rec);
        g.down().unwrap();
        g.down().unwrap();
        drop(g);
        assert_eq!(RELEASED.load(Ordering::SeqCst) - before, 1);
        assert!(sd.read_all().unwrap().is_empty());

        let rec = Recorded::new(&sd, Resource::ZfsPool { name: "fsbench_g2".into() }).unwrap();
        let g = Guard::new(Thing(false), rec);
        assert_eq!(g.teardown().unwrap_err(), "busy");
        let all = sd.read_all().unwrap();
        assert_eq!(all[0].1.entries.len(), 1, "the record stays for cleanup");
        // Tidy up the registry entry this test made.
        let id = all[0].1.entries[0].id;
        let _ = id;
        let rec = Recorded::new(&sd, Resource::ZfsPool { name: "x".into() }).unwrap();
        let kept = Guard::new(Thing(true), rec).keep().unwrap();
        assert_eq!(sd.read_all().unwrap()[0].1.entries.len(), 2, "kept stays recorded");
        sd.forget(&kept).unwrap();
    }
}
