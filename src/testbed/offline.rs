//! Taking a testbed's filesystem offline and back, and naming what backs it: for tools that
//! work on an unmounted filesystem (`e2fsck -n`, `xfs_repair -n`) and for fault injection into
//! the testbed's own image files (`fsbench integrity`).
//!
//! Offline means unmounted (kernel filesystems; every mount of the testbed, newest first, so an
//! overlay goes before the filesystem under it) or exported (zfs): the loop devices and image
//! files stay, and so do the guards and state records, so teardown and `fsbench testbed
//! cleanup` work the same whether the filesystem is online or not.

use super::error::{Result, TestbedError};
use super::{mount, mountinfo, zfs, Owned, Testbed};
use std::path::PathBuf;

impl Testbed {
    /// The image files this testbed created (empty for tmpfs and a real device), in device order.
    pub fn image_paths(&self) -> Vec<PathBuf> {
        self.guards
            .iter()
            .filter_map(|g| match g {
                Owned::Image(i) => Some(i.path().to_path_buf()),
                _ => None,
            })
            .collect()
    }

    /// The loop devices over [`Testbed::image_paths`] (`/dev/loop3`), in the same order.
    pub fn loop_devices(&self) -> Vec<PathBuf> {
        self.guards
            .iter()
            .filter_map(|g| match g {
                Owned::Loop(l) => Some(l.device().to_path_buf()),
                _ => None,
            })
            .collect()
    }

    /// The zfs pool's name, for a zfs testbed.
    pub fn zfs_pool(&self) -> Option<&str> {
        self.pool().map(|p| p.name())
    }

    /// The directory of links to a zfs testbed's devices (`zpool import -d`, `zdb -e -p`).
    pub fn zfs_devdir(&self) -> Option<PathBuf> {
        self.pool().map(|p| p.devdir().to_path_buf())
    }

    fn pool(&self) -> Option<&zfs::ZfsPool> {
        self.guards.iter().find_map(|g| match g {
            Owned::Pool(p) => Some(p),
            _ => None,
        })
    }

    /// The testbed's mounts, in the order they were made.
    fn mount_specs(&self) -> Vec<&mount::MountSpec> {
        self.guards
            .iter()
            .filter_map(|g| match g {
                Owned::Mount(m) => Some(m.spec()),
                _ => None,
            })
            .collect()
    }

    /// Whether the filesystem is mounted (kernel filesystems) or its pool imported (zfs).
    pub fn is_online(&self) -> Result<bool> {
        match self.pool() {
            Some(p) => {
                Ok(zfs::daemon_running() && zfs::imported_pools()?.iter().any(|n| n == p.name()))
            }
            None => Ok(mountinfo::is_mounted(&self.mountpoint)),
        }
    }

    /// Unmount (kernel filesystems) or export the pool (zfs), then drop the host's caches so
    /// nothing read before comes back from memory. tmpfs cannot go offline.
    pub fn offline(&mut self) -> Result<()> {
        if !self.config.kind.needs_devices() {
            return Err(TestbedError::Check(format!(
                "a {} cannot be taken offline",
                self.config.kind
            )));
        }
        match self.pool() {
            Some(p) => zfs::export(p.name())?,
            None => {
                for spec in self.mount_specs().into_iter().rev() {
                    mount::umount(&spec.target)?;
                }
            }
        }
        drop_caches()
    }

    /// Mount again (kernel filesystems) or import the pool (zfs) after [`Testbed::offline`].
    /// Caches are dropped first, so the filesystem reads what is on its devices now.
    pub fn online(&mut self) -> Result<()> {
        drop_caches()?;
        if let Some(p) = self.pool() {
            return zfs::import(p.name(), p.devdir());
        }
        let specs = self.mount_specs();
        if specs.is_empty() {
            return Err(TestbedError::Check("this testbed has no mount to restore".into()));
        }
        for spec in specs {
            spec.mount()?;
        }
        Ok(())
    }
}

fn drop_caches() -> Result<()> {
    if crate::sys::is_root() {
        crate::sys::cache::drop_all_caches()
            .map_err(|e| TestbedError::io("drop_caches", "/proc/sys/vm/drop_caches", e))?;
    }
    Ok(())
}
