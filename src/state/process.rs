//! Process identity for state records: a pid plus its start time, so a reused pid is never
//! mistaken for the process that wrote a record or the daemon fsbench started.

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// A process as identified in /proc: pid and start time (clock ticks after boot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessId {
    /// Process id.
    pub pid: u32,
    /// Field 22 of /proc/PID/stat; differs for a later process that reuses the pid.
    pub start_ticks: u64,
}

impl ProcessId {
    /// The calling process.
    pub fn current() -> ProcessId {
        let pid = std::process::id();
        ProcessId { pid, start_ticks: start_ticks(pid).unwrap_or(0) }
    }

    /// The process `pid` if it exists now.
    pub fn of(pid: u32) -> Option<ProcessId> {
        start_ticks(pid).map(|start_ticks| ProcessId { pid, start_ticks })
    }

    /// Whether this very process (same pid and start time) is still running (zombies count as gone).
    pub fn is_alive(&self) -> bool {
        match stat_fields(self.pid) {
            Some((_, state, ticks)) => ticks == self.start_ticks && state != 'Z' && state != 'X',
            None => false,
        }
    }

    /// The process's command name (`/proc/PID/comm`), if it is this process.
    pub fn comm(&self) -> Option<String> {
        let (comm, _, ticks) = stat_fields(self.pid)?;
        (ticks == self.start_ticks).then_some(comm)
    }

    /// Send SIGTERM, wait up to `wait` for the process to go, then SIGKILL. Only if it is still
    /// this process. Returns whether it is gone.
    pub fn terminate(&self, wait: Duration) -> bool {
        if !self.is_alive() {
            return true;
        }
        let Some(pid) = rustix::process::Pid::from_raw(self.pid as i32) else {
            return false;
        };
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if !self.is_alive() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if self.is_alive() {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            std::thread::sleep(Duration::from_millis(200));
        }
        !self.is_alive()
    }
}

/// Field 22 of /proc/PID/stat (the start time in clock ticks), if the process exists.
pub fn start_ticks(pid: u32) -> Option<u64> {
    stat_fields(pid).map(|(_, _, t)| t)
}

/// (comm, state, start time) from /proc/PID/stat.
fn stat_fields(pid: u32) -> Option<(String, char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parse /proc/PID/stat. The command name may contain spaces and parentheses, so fields are
/// counted from the last `)`.
fn parse_stat(text: &str) -> Option<(String, char, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let mut rest = text.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    // Fields after the state start at field 4; starttime is field 22.
    let ticks = rest.nth(22 - 4)?.parse().ok()?;
    Some((comm, state, ticks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_comm() {
        let line =
            "123 (a (b) c) S 1 123 123 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 10";
        assert_eq!(parse_stat(line), Some(("a (b) c".to_string(), 'S', 98765)));
    }

    #[test]
    fn current_process_is_alive_and_reused_pid_is_not() {
        let me = ProcessId::current();
        assert!(me.start_ticks > 0);
        assert!(me.is_alive());
        let impostor = ProcessId { start_ticks: me.start_ticks + 1, ..me };
        assert!(!impostor.is_alive());
        assert!(impostor.comm().is_none());
    }
}
