//! Starting the profiled command so that tracing sees it from its first instruction, waiting
//! for it, and passing Ctrl-C / `--duration` on to its process group.
//!
//! The pid must be in the tracing instance's `set_event_pid` *before* the command runs, but
//! `std::process::Command::spawn` returns only after `exec`. So the child is a tiny `sh`
//! trampoline in its own process group that waits for one byte on fd 3 and then `exec`s the
//! command (same pid): fsbench spawns it, registers the pid, switches tracing on, and releases
//! it. What `sh` does between the byte and `exec` (a `read` on a pipe) touches no file.

use super::ProfileError;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The trampoline: wait for the go byte on fd 3, close it, become the command.
const TRAMPOLINE: &str = "read -r _ <&3 || exit 126; exec 3<&-; exec \"$@\"";

/// Find `program` as `execvp` would: a path with a `/` is taken as is, otherwise each `PATH`
/// directory is searched. It must be a regular file with an execute bit.
pub fn resolve(program: &str) -> Result<PathBuf, ProfileError> {
    let ok =
        |p: &Path| std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        let p = PathBuf::from(program);
        return match ok(&p) {
            Ok(true) => Ok(p),
            Ok(false) => Err(ProfileError::NotExecutable(p)),
            Err(_) => Err(ProfileError::CommandNotFound(program.to_string())),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let p = dir.join(program);
        if let Ok(true) = ok(&p) {
            return Ok(p);
        }
    }
    Err(ProfileError::CommandNotFound(program.to_string()))
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exit {
    /// Exit code, or 128 + signal number when a signal ended it (as a shell reports it).
    pub code: i32,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// fsbench stopped it: Ctrl-C/SIGTERM was passed on (`interrupted`) or `--duration` ran out.
    pub stopped_by: Option<StopReason>,
}

/// Why fsbench stopped the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Ctrl-C or SIGTERM reached fsbench and was passed to the command's process group.
    Interrupted,
    /// `--duration` elapsed.
    Duration,
}

/// A command started and held at the trampoline.
#[derive(Debug)]
pub struct Held {
    child: Child,
    go: Option<OwnedFd>,
    /// Whether the leader has been reaped (its pid, and so the group's number, may be reused).
    reaped: bool,
    /// Its record in fsbench's state, forgotten once it and its group are gone.
    rec: Option<crate::state::Recorded>,
}

/// [`spawn_held`], recorded in `state` before it starts ([`crate::state::Resource::Command`]):
/// after a `kill -9` of fsbench, `fsbench testbed cleanup` kills what is left of its group.
pub fn spawn_held_recorded(
    argv: &[String],
    state: &crate::state::StateDir,
) -> Result<Held, ProfileError> {
    use crate::state::{ProcessId, Recorded, Resource};
    let argv0 = argv.first().cloned().unwrap_or_default();
    let rec = Recorded::new(state, Resource::Command { process: None, argv0: argv0.clone() })
        .map_err(|e| {
            ProfileError::Spawn(format!("recording the command in fsbench's state: {e}"))
        })?;
    let mut held = match spawn_held(argv) {
        Ok(h) => h,
        Err(e) => {
            let _ = rec.forget();
            return Err(e);
        }
    };
    let pid = held.pid();
    let id = ProcessId { pid, start_ticks: crate::state::process::start_ticks(pid).unwrap_or(0) };
    // Still held before exec: nothing of the command has run yet.
    rec.update(Resource::Command { process: Some(id), argv0 }).map_err(|e| {
        ProfileError::Spawn(format!("recording the command in fsbench's state: {e}"))
    })?;
    held.rec = Some(rec);
    Ok(held)
}

/// Whether `pid` (our child) has exited, without reaping it: while it is a zombie its pid, and
/// so its process group's number, cannot be taken by another process.
fn exited_unreaped(pid: i32) -> bool {
    // SAFETY: a zeroed siginfo_t is valid; waitid only writes into it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall on our own child.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid is set by waitid when a child was found (0 otherwise).
    r == 0 && unsafe { info.si_pid() } != 0
}

/// Start `argv` (already [`resolve`]d) held before `exec`, in its own process group, with the
/// user's stdin/stdout/stderr.
pub fn spawn_held(argv: &[String]) -> Result<Held, ProfileError> {
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| ProfileError::Spawn(format!("pipe: {e}")))?;
    let rfd = r.as_raw_fd();
    let parent = rustix::process::getpid().as_raw_nonzero().get();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(TRAMPOLINE).arg("fsbench-profile").args(argv).process_group(0);
    // SAFETY: only async-signal-safe calls (prctl, getppid, dup2, fcntl) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // Killed with fsbench (kill -9 included): never left running orphaned. Kept across
            // the exec of the command (not a set-uid program).
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                // fsbench died between fork and prctl.
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            if rfd == 3 {
                let flags = libc::fcntl(3, libc::F_GETFD);
                if flags < 0 || libc::fcntl(3, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(rfd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| ProfileError::Spawn(format!("/bin/sh: {e}")))?;
    drop(r);
    Ok(Held { child, go: Some(w), reaped: false, rec: None })
}

impl Held {
    /// The pid (the command's, once released: `exec` keeps it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Let the command run; returns the release time.
    pub fn release(&mut self) -> Result<Instant, ProfileError> {
        let go = self.go.take().ok_or_else(|| ProfileError::Spawn("released twice".into()))?;
        let mut f = std::fs::File::from(go);
        let t = Instant::now();
        f.write_all(b"\n")
            .map_err(|e| ProfileError::Spawn(format!("releasing the command: {e}")))?;
        Ok(t)
    }

    /// Wait for the command. Ctrl-C/SIGTERM (fsbench's flag) or `limit` send SIGINT / SIGTERM
    /// to its process group, then SIGKILL if it is still there 5 s later.
    pub fn wait(mut self, limit: Option<Duration>) -> Result<Exit, ProfileError> {
        let start = Instant::now();
        let mut stopped: Option<(StopReason, Instant)> = None;
        let mut killed = false;
        let pgid = self.child.id() as i32;
        loop {
            if exited_unreaped(pgid) {
                // What the command left running in its group goes with it (its number is still
                // reserved by the unreaped leader).
                // SAFETY: plain syscall; a negative pid names the process group.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
            }
            match self.child.try_wait() {
                Ok(Some(st)) => {
                    self.reaped = true;
                    if let Some(rec) = self.rec.take() {
                        let _ = rec.forget();
                    }
                    let signal = st.signal();
                    let code = st.code().unwrap_or_else(|| 128 + signal.unwrap_or(0));
                    return Ok(Exit { code, signal, stopped_by: stopped.map(|s| s.0) });
                }
                Ok(None) => {}
                Err(e) => return Err(ProfileError::Spawn(format!("waiting for the command: {e}"))),
            }
            if stopped.is_none() {
                let why = if crate::sys::signals::interrupted() {
                    Some((StopReason::Interrupted, libc::SIGINT))
                } else if limit.is_some_and(|l| start.elapsed() >= l) {
                    Some((StopReason::Duration, libc::SIGTERM))
                } else {
                    None
                };
                if let Some((reason, sig)) = why {
                    // SAFETY: plain syscall; a negative pid names the process group.
                    unsafe { libc::kill(-pgid, sig) };
                    stopped = Some((reason, Instant::now()));
                }
            } else if let Some((_, at)) = stopped {
                if !killed && at.elapsed() > Duration::from_secs(5) {
                    // SAFETY: as above.
                    unsafe { libc::kill(-pgid, libc::SIGKILL) };
                    killed = true;
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // Not released (an error before the run): the trampoline reads EOF and exits 126.
        // Released and not waited for (an error during the run): the group is killed, so
        // fsbench never leaves it running. The leader is not reaped yet, so its number is
        // still its group's.
        self.go.take();
        if !self.reaped {
            // SAFETY: plain syscall; a negative pid names the process group.
            unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
            let _ = self.child.wait();
        }
        if let Some(rec) = self.rec.take() {
            let _ = rec.forget();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_execvp() {
        assert!(resolve("sh").is_ok());
        assert!(matches!(resolve("no-such-cmd-fsbench"), Err(ProfileError::CommandNotFound(_))));
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("data");
        std::fs::write(&f, "x").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(resolve(f.to_str().unwrap()), Err(ProfileError::NotExecutable(_))));
        assert!(matches!(resolve("/no/such"), Err(ProfileError::CommandNotFound(_))));
    }

    #[test]
    fn held_command_runs_after_release_with_its_exit_code() {
        let mut h = spawn_held(&["sh".into(), "-c".into(), "exit 7".into()]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        h.release().unwrap();
        let e = h.wait(None).unwrap();
        assert_eq!((e.code, e.signal, e.stopped_by), (7, None, None));
    }

    #[test]
    fn duration_stops_the_process_group() {
        let mut h = spawn_held(&["sleep".into(), "30".into()]).unwrap();
        h.release().unwrap();
        let t = Instant::now();
        let e = h.wait(Some(Duration::from_millis(200))).unwrap();
        assert_eq!(e.stopped_by, Some(StopReason::Duration));
        assert_eq!(e.signal, Some(libc::SIGTERM));
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
