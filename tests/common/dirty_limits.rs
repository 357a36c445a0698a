//! The dirty-limit sysctls (`vm.dirty_bytes`, `vm.dirty_background_bytes`) set for a test and
//! restored on drop, also when the test panics. Shared by the test binaries that make a
//! buffered writer pass a small dirty limit (`tests/trace.rs`, `tests/dirty_limit.rs`): include
//! it with `#[path]`.

use std::path::Path;

/// The dirty-limit sysctls, saved; restored on drop (also when the test panics). Writing
/// `dirty_bytes` zeroes `dirty_ratio` and the reverse, so the one that was in force is written
/// back. `set` needs root.
pub struct DirtyLimits {
    saved: Vec<(&'static str, &'static str, String)>,
}

impl DirtyLimits {
    const VM: &'static str = "/proc/sys/vm";

    fn read(name: &str) -> String {
        std::fs::read_to_string(Path::new(Self::VM).join(name))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    pub fn set(dirty_bytes: u64, background_bytes: u64) -> DirtyLimits {
        let mut saved = Vec::new();
        for (bytes, ratio) in
            [("dirty_bytes", "dirty_ratio"), ("dirty_background_bytes", "dirty_background_ratio")]
        {
            let b = Self::read(bytes);
            let (name, value) =
                if b != "0" && !b.is_empty() { (bytes, b) } else { (ratio, Self::read(ratio)) };
            saved.push((bytes, name, value));
        }
        let g = DirtyLimits { saved };
        // The background limit first: it must stay below the limit.
        std::fs::write(
            Path::new(Self::VM).join("dirty_background_bytes"),
            background_bytes.to_string(),
        )
        .expect("setting vm.dirty_background_bytes");
        std::fs::write(Path::new(Self::VM).join("dirty_bytes"), dirty_bytes.to_string())
            .expect("setting vm.dirty_bytes");
        g
    }
}

impl Drop for DirtyLimits {
    fn drop(&mut self) {
        // The limit before the background limit (the reverse of `set`).
        for (_, name, value) in &self.saved {
            if let Err(e) = std::fs::write(Path::new(Self::VM).join(name), value) {
                eprintln!("restoring vm.{name} = {value}: {e}");
            }
        }
    }
}
