//! Ctrl-C and SIGTERM handling.
//!
//! The handler only sets an `AtomicBool` (via `signal-hook`): no allocation or locking happens in
//! signal context. The engine's hot loop polls the flag with a relaxed load, so a run stops within
//! one operation's time, and every guard (test files, mounts, loop devices) is dropped normally.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The process-wide "stop now" flag, set by SIGINT or SIGTERM once [`install`] has run.
pub fn flag() -> &'static Arc<AtomicBool> {
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Register SIGINT and SIGTERM to set [`flag`]. Safe to call more than once.
pub fn install() -> std::io::Result<()> {
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(flag()))?;
    }
    Ok(())
}

/// Whether a stop was requested.
pub fn interrupted() -> bool {
    flag().load(Ordering::Relaxed)
}
