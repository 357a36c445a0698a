//! One helper for every external command fsbench runs (`mkfs.*`, `mount`, `losetup`, `zpool`, ...).
//!
//! The command line and its stderr are kept in the error, so a failed `mkfs.xfs -b size=3` shows
//! the user exactly what the tool said, not just "exit status 1".

use std::ffi::OsStr;
use std::fmt;
use std::process::{Command, Stdio};

/// A failed external command, with what it printed on stderr.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    /// The program could not be started (not installed, not executable).
    #[error("could not run `{cmdline}`: {source}{}", hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default())]
    Spawn {
        /// The command line as the user would type it.
        cmdline: String,
        /// The OS error.
        source: std::io::Error,
        /// A hint, e.g. the Debian package that provides the program.
        hint: Option<String>,
    },
    /// The program did not finish within its time limit ([`Cmd::timeout`]) and was killed.
    #[error("`{cmdline}` did not return within {seconds} s and was killed{}{}", fmt_stderr(stderr), if note.is_empty() { String::new() } else { format!("; {note}") })]
    TimedOut {
        /// The command line as the user would type it.
        cmdline: String,
        /// The limit, seconds.
        seconds: u64,
        /// What it printed on stderr until then.
        stderr: String,
        /// What was done about it (e.g. the FUSE connection that was aborted).
        note: String,
    },
    /// Ctrl-C or SIGTERM reached fsbench while the program ran ([`Cmd::interruptible`]): it was
    /// killed rather than waited for.
    #[error("`{cmdline}` was stopped: fsbench was interrupted")]
    Interrupted {
        /// The command line as the user would type it.
        cmdline: String,
    },
    /// The program ran and exited non-zero (or was killed by a signal).
    #[error("`{cmdline}` failed ({status}){}", fmt_stderr(stderr))]
    Failed {
        /// The command line as the user would type it.
        cmdline: String,
        /// Exit status description.
        status: String,
        /// Captured stderr (trimmed), shown to the user.
        stderr: String,
    },
}

fn fmt_stderr(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!(":\n{}", indent(stderr.trim()))
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// Builder for an external command whose stderr ends up in the error.
pub struct Cmd {
    program: String,
    args: Vec<String>,
    hint: Option<String>,
    timeout: Option<std::time::Duration>,
    interruptible: bool,
}

impl Cmd {
    /// A command running `program` (looked up in `PATH`, plus `/sbin` and `/usr/sbin`).
    pub fn new(program: impl Into<String>) -> Self {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            hint: None,
            timeout: None,
            interruptible: false,
        }
    }

    /// Append one argument.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_string_lossy().into_owned());
        self
    }

    /// Append several arguments.
    pub fn args<I, S>(mut self, it: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for a in it {
            self.args.push(a.as_ref().to_string_lossy().into_owned());
        }
        self
    }

    /// What to tell the user if the program is missing (e.g. "install the Debian package xfsprogs").
    pub fn hint(mut self, h: impl Into<String>) -> Self {
        self.hint = Some(h.into());
        self
    }

    /// Kill the program (SIGKILL) if Ctrl-C or SIGTERM reaches fsbench while it runs, and fail
    /// with [`CmdError::Interrupted`]: for long steps that change nothing fsbench must undo
    /// (checkers, scrubs, mkfs), so that fsbench stops within a second. A command started after
    /// the interruption (teardown) runs to its end.
    pub fn interruptible(mut self) -> Self {
        self.interruptible = true;
        self
    }

    /// Kill the program (SIGKILL) if it has not finished after `limit`, and fail with
    /// [`CmdError::TimedOut`]: for commands that can hang (a zfs-fuse daemon that deadlocked).
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The command line as a user would type it (for messages and logs).
    pub fn cmdline(&self) -> String {
        let mut s = self.program.clone();
        for a in &self.args {
            s.push(' ');
            if a.is_empty() || a.contains(char::is_whitespace) {
                s.push_str(&format!("'{a}'"));
            } else {
                s.push_str(a);
            }
        }
        s
    }

    /// Run to completion and return what it printed and how it exited, whatever the exit
    /// status: for tools whose non-zero exit is a finding, not a failure (`e2fsck -n` exits 4
    /// when it finds errors). Only a program that cannot be started is an error.
    pub fn output(&self) -> Result<CmdOutput, CmdError> {
        if let Some(limit) = self.timeout {
            return self.output_within(limit);
        }
        if self.interruptible && !crate::sys::signals::interrupted() {
            // No time limit: only the interruption ends it early.
            return self.output_within(std::time::Duration::MAX);
        }
        let out = Command::new(&self.program)
            .args(&self.args)
            .env("PATH", search_path())
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .map_err(|source| CmdError::Spawn {
                cmdline: self.cmdline(),
                source,
                hint: self.hint.clone(),
            })?;
        Ok(CmdOutput {
            cmdline: self.cmdline(),
            code: out.status.code(),
            status: out.status.to_string(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// [`Cmd::output`] with a time limit. The pipes are read by two threads (a child that
    /// fills one must not block); after the limit the child is killed and, if it is stuck where
    /// even SIGKILL must wait (uninterruptible sleep), left to a thread that reaps it later, so
    /// the caller never waits longer than the limit plus a few seconds.
    fn output_within(&self, limit: std::time::Duration) -> Result<CmdOutput, CmdError> {
        use std::io::Read;
        use std::time::{Duration, Instant};
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .env("PATH", search_path())
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| CmdError::Spawn {
                cmdline: self.cmdline(),
                source,
                hint: self.hint.clone(),
            })?;
        let reader = |r: Option<Box<dyn Read + Send>>| {
            let (tx, rx) = std::sync::mpsc::channel();
            if let Some(mut r) = r {
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let _ = r.read_to_end(&mut buf);
                    let _ = tx.send(buf);
                });
            }
            rx
        };
        let out_rx = reader(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let err_rx = reader(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let text = |rx: &std::sync::mpsc::Receiver<Vec<u8>>, wait: Duration| {
            String::from_utf8_lossy(&rx.recv_timeout(wait).unwrap_or_default()).into_owned()
        };
        // `None`: no limit (`Duration::MAX` for an interruptible command).
        let deadline = Instant::now().checked_add(limit);
        let watch_interrupt = self.interruptible && !crate::sys::signals::interrupted();
        let mut pause = Duration::from_millis(1);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    return Ok(CmdOutput {
                        cmdline: self.cmdline(),
                        code: status.code(),
                        status: status.to_string(),
                        stdout: text(&out_rx, Duration::from_secs(5)),
                        stderr: text(&err_rx, Duration::from_secs(5)),
                    })
                }
                Ok(None)
                    if deadline.is_none_or(|d| Instant::now() < d)
                        && !(watch_interrupt && crate::sys::signals::interrupted()) =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                _ => break,
            }
        }
        let _ = child.kill();
        let gone = Instant::now() + Duration::from_secs(3);
        while Instant::now() < gone && !matches!(child.try_wait(), Ok(Some(_))) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !matches!(child.try_wait(), Ok(Some(_))) {
            // Reaped whenever it can die; no zombie is left for the life of this process.
            std::thread::spawn(move || {
                let _ = child.wait();
            });
        }
        if watch_interrupt && crate::sys::signals::interrupted() {
            return Err(CmdError::Interrupted { cmdline: self.cmdline() });
        }
        Err(CmdError::TimedOut {
            cmdline: self.cmdline(),
            seconds: limit.as_secs_f64().ceil() as u64,
            stderr: text(&err_rx, Duration::from_millis(200)),
            note: String::new(),
        })
    }

    /// Run to completion; return stdout on success, a [`CmdError`] with stderr otherwise.
    pub fn run(&self) -> Result<String, CmdError> {
        let out = self.output()?;
        if out.code == Some(0) {
            Ok(out.stdout)
        } else {
            Err(CmdError::Failed { cmdline: out.cmdline, status: out.status, stderr: out.stderr })
        }
    }
}

/// What a command printed and how it exited ([`Cmd::output`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CmdOutput {
    /// The command line as a user would type it.
    pub cmdline: String,
    /// Exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// Exit status description (`exit status: 4`, `signal: 6 (SIGABRT)`).
    pub status: String,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
}

impl CmdOutput {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// stdout and stderr together (stderr after stdout), trimmed.
    pub fn text(&self) -> String {
        let (o, e) = (self.stdout.trim_end(), self.stderr.trim_end());
        match (o.is_empty(), e.is_empty()) {
            (_, true) => o.to_string(),
            (true, false) => e.to_string(),
            (false, false) => format!("{o}\n{e}"),
        }
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cmdline())
    }
}

/// `PATH` with the sbin directories added: admin tools live there and `sudo` users often lack them.
fn search_path() -> String {
    let base = std::env::var("PATH").unwrap_or_default();
    let mut parts: Vec<&str> = base.split(':').filter(|p| !p.is_empty()).collect();
    for extra in ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        if !parts.contains(&extra) {
            parts.push(extra);
        }
    }
    parts.join(":")
}

/// Whether `program` can be found in the search path.
pub fn have_program(program: &str) -> bool {
    search_path().split(':').any(|d| std::path::Path::new(d).join(program).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_keeps_stderr() {
        let err = Cmd::new("sh").args(["-c", "echo boom >&2; exit 3"]).run().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("boom"), "{msg}");
        assert!(msg.contains("sh -c"), "{msg}");
    }

    #[test]
    fn missing_program_gives_hint() {
        let err = Cmd::new("fsbench-no-such-program").hint("install foo").run().unwrap_err();
        assert!(err.to_string().contains("install foo"));
    }

    #[test]
    fn output_keeps_a_finding_exit_code_and_both_streams() {
        let o = Cmd::new("sh").args(["-c", "echo found; echo note >&2; exit 4"]).output().unwrap();
        assert_eq!(o.code, Some(4));
        assert!(!o.success());
        assert_eq!(o.text(), "found\nnote");
    }

    #[test]
    fn success_returns_stdout() {
        assert_eq!(Cmd::new("echo").arg("hi").run().unwrap(), "hi\n");
    }

    #[test]
    fn a_command_past_its_time_limit_is_killed_and_named() {
        let start = std::time::Instant::now();
        let err = Cmd::new("sh")
            .args(["-c", "echo waiting >&2; exec sleep 60"])
            .timeout(std::time::Duration::from_millis(500))
            .run()
            .unwrap_err();
        // Well under the sleep: killed at the limit, not waited for.
        assert!(start.elapsed() < std::time::Duration::from_secs(30), "{:?}", start.elapsed());
        assert!(matches!(err, CmdError::TimedOut { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("did not return within 1 s") && msg.contains("sh -c"), "{msg}");
        assert!(msg.contains("waiting"), "stderr so far is kept: {msg}");
        // Within the limit, the output is as without one.
        let o = Cmd::new("sh")
            .args(["-c", "echo found; echo note >&2; exit 4"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert_eq!((o.code, o.text()), (Some(4), "found\nnote".to_string()));
    }
}
