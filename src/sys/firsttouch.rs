//! The first touch of guest memory: whether the machine is a VM that reports free memory to
//! its host.
//!
//! A virtio balloon with free page reporting (`VIRTIO_BALLOON_F_REPORTING`) hands memory that
//! stayed free for a moment back to the host; the next time the guest touches those pages, each
//! costs a host fault. On the VM fsbench was developed on, writing 3 GiB to `/dev/shm` took
//! 5.5–6.0 s after 20 s idle and 1.15–2.5 s right after 3 GiB of anonymous memory had been
//! touched and freed. A phase that fills the page cache pays that cost or not depending on what
//! ran before it: noise that has nothing to do with the filesystem. An untimed warm-up (touch
//! the phase's footprint, free it, start the phase) did not remove it from unit14's test 8 and
//! made its later repetitions slower (docs/design/noise.md), so fsbench says when the machine
//! does this rather than pretending to undo it.

use std::path::Path;

/// Feature bit of a virtio balloon that reports free pages to the host (virtio spec 5.5.3).
const VIRTIO_BALLOON_F_REPORTING: usize = 5;

/// Whether a virtio balloon with free page reporting is bound under `sys` (normally `/sys`).
pub fn free_page_reporting_under(sys: &Path) -> bool {
    let Ok(devices) = std::fs::read_dir(sys.join("bus/virtio/devices")) else {
        return false;
    };
    devices.flatten().any(|d| {
        let driver = std::fs::read_link(d.path().join("driver")).ok();
        let balloon =
            driver.as_deref().and_then(Path::file_name).is_some_and(|n| n == "virtio_balloon");
        // `features` is one character per bit, bit 0 first.
        let features = std::fs::read_to_string(d.path().join("features")).unwrap_or_default();
        balloon && features.as_bytes().get(VIRTIO_BALLOON_F_REPORTING) == Some(&b'1')
    })
}

/// Whether this machine reports free memory to its host ([`free_page_reporting_under`] `/sys`).
pub fn free_page_reporting() -> bool {
    free_page_reporting_under(Path::new("/sys"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(root: &Path, name: &str, driver: &str, features: &str) {
        let d = root.join("bus/virtio/devices").join(name);
        std::fs::create_dir_all(&d).unwrap();
        let drv = root.join("bus/virtio/drivers").join(driver);
        std::fs::create_dir_all(&drv).unwrap();
        std::os::unix::fs::symlink(&drv, d.join("driver")).unwrap();
        std::fs::write(d.join("features"), features).unwrap();
    }

    #[test]
    fn a_balloon_with_the_reporting_bit_is_found_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        assert!(!free_page_reporting_under(t.path()), "no virtio bus");
        // This development VM's balloon: bits 1, 2, 5 and 7.
        device(t.path(), "virtio1", "virtio_blk", "0010011001000");
        assert!(!free_page_reporting_under(t.path()));
        device(t.path(), "virtio0", "virtio_balloon", "0110000000000");
        assert!(!free_page_reporting_under(t.path()), "a balloon without reporting");
        let u = tempfile::tempdir().unwrap();
        device(u.path(), "virtio0", "virtio_balloon", "0110010100000");
        assert!(free_page_reporting_under(u.path()));
    }
}
