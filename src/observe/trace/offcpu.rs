//! Where the test's threads waited while off CPU, from the scheduler's own account.
//!
//! The phase's time split says how much of the threads' time was spent off CPU, not why. This
//! module asks the scheduler: a tracing instance of fsbench's own records `sched:sched_switch`
//! for the phase runner's thread and the workers it spawns (`set_event_pid` with
//! `options/event-fork`), with a `stacktrace` trigger on every switch-out into a sleep (`S` or
//! `D`) of a thread of the runner's name. After the phase the instance's `trace` text is read
//! once: each switch-out of a worker is paired with its next switch-in (the time off CPU) and
//! its kernel stack is classified with [`REASONS`], a declarative table of kernel functions.
//! A switch-out in state `R` (preempted) waits for a CPU. This kernel has no
//! `sched:sched_blocked_reason` (checked in `/sys/kernel/tracing/events/sched/`), hence stacks.
//!
//! Nothing runs in the hot loop: the kernel records the events; the text is parsed after the
//! phase. Its cost (a stack walk per sleep) is measured in docs/design/tracing.md.

use super::recording::{configure, lost_events};
use super::tracefs::Instance;
use super::{TraceError, TraceOptions};
use crate::model::trace::{OffCpuBreakdown, OffCpuReason};
use crate::state::StateDir;
use std::collections::HashMap;

/// Reason for a switch-out in state `R`: the thread was preempted and waited for a CPU.
pub const PREEMPTED: &str = "waiting for a CPU";
/// Reason when no function of [`REASONS`] is on the stack (or no stack was recorded).
pub const OTHER: &str = "other";

/// Kernel functions → reason, in priority order: the first row with a function anywhere on the
/// stack wins (a journal wait inside fsync is the journal's; a folio wait inside writeback is
/// writeback's). Names match a frame exactly or as a prefix followed by `.` (`.isra.0`).
pub const REASONS: &[(&str, &[&str])] = &[
    ("throttled in balance_dirty_pages", &["balance_dirty_pages"]),
    (
        "waiting on the journal",
        &[
            "jbd2_log_wait_commit",
            "jbd2_journal_force_commit",
            "wait_transaction_locked",
            "add_transaction_credits",
            "start_this_handle",
            "xlog_wait",
            "xlog_wait_on_iclog",
            "xfs_log_force",
            "xfs_log_force_seq",
            "xlog_cil_force_seq",
            "xfs_trans_alloc",
        ],
    ),
    (
        "fsync/sync waiting",
        &[
            "blkdev_issue_flush",
            "file_write_and_wait_range",
            "file_fdatawait_range",
            "ext4_sync_file",
            "xfs_file_fsync",
            "sync_inodes_sb",
        ],
    ),
    (
        "waiting for writeback",
        // Also a writer waiting for writeback it forced: ext4 whose dirty data passes half of
        // its free space starts writeback in ext4_nonda_switch and waits for it.
        &[
            "folio_wait_writeback",
            "wait_on_page_writeback",
            "__filemap_fdatawait_range",
            "wb_wait_for_completion",
            "try_to_writeback_inodes_sb",
            "writeback_inodes_sb",
        ],
    ),
    ("waiting for direct I/O", &["iomap_dio_rw", "__iomap_dio_rw", "__blockdev_direct_IO"]),
    (
        "waiting for a read",
        &[
            "filemap_read",
            "filemap_get_pages",
            "filemap_fault",
            "folio_wait_bit",
            "folio_wait_bit_common",
            "wait_on_page_bit",
            "ext4_read_bh",
            "xfs_buf_read_map",
            "vfs_read",
        ],
    ),
    (
        "lock",
        &[
            "__mutex_lock",
            "mutex_lock",
            "rwsem_down_write_slowpath",
            "rwsem_down_read_slowpath",
            "down_write",
            "down_read",
            "percpu_rwsem_wait",
        ],
    ),
];

/// The reason for a switch-out with kernel stack `frames` (innermost first, symbol names).
pub fn classify<'a>(frames: impl IntoIterator<Item = &'a str> + Clone) -> &'static str {
    let matches = |f: &str, name: &str| {
        f == name || f.strip_prefix(name).is_some_and(|rest| rest.starts_with('.'))
    };
    for (reason, funcs) in REASONS {
        if frames.clone().into_iter().any(|f| funcs.iter().any(|n| matches(f, n))) {
            return reason;
        }
    }
    OTHER
}

/// Which threads count: those the phase runner `runner` spawned (seen in
/// `sched_process_fork`, transitively) that still carry its name `comm` (the workers; not the
/// runner itself, which only waits for them, nor an io_uring worker of another name).
#[derive(Debug, Clone)]
pub struct Threads {
    /// The phase runner's thread id (it waits for the workers; not the test's time).
    pub runner: u32,
    /// The runner's name, which the workers inherit.
    pub comm: String,
}

#[derive(Debug)]
struct Pending {
    out_ns: u64,
    reason: &'static str,
    /// A sleep whose stack has not been seen yet.
    awaiting_stack: bool,
}

#[derive(Default)]
struct Acc {
    by: HashMap<&'static str, (u64, u64)>,
    switches: u64,
    total: u64,
}

impl Acc {
    fn close(&mut self, p: Pending, in_ns: u64) {
        let d = in_ns.saturating_sub(p.out_ns);
        let e = self.by.entry(p.reason).or_default();
        e.0 += d;
        e.1 += 1;
        self.switches += 1;
        self.total += d;
    }
}

/// `TASK-PID [CPU] flags SECS.USECS: rest` → (pid, ns, rest).
fn split_header(line: &str) -> Option<(u32, u64, &str)> {
    let (head, rest) = line.split_once(": ")?;
    let (task, after) = head.split_once(" [")?;
    let pid = task.trim().rsplit_once('-')?.1.parse().ok()?;
    let ts = after.rsplit(' ').next()?;
    let (s, frac) = ts.split_once('.')?;
    let frac_ns = format!("{frac:0<9}");
    let ns = s.parse::<u64>().ok()? * 1_000_000_000 + frac_ns.get(..9)?.parse::<u64>().ok()?;
    Some((pid, ns, rest))
}

/// The value after `key=` up to the next ` key2=` (comms may hold spaces).
fn field<'a>(rest: &'a str, key: &str, next: &str) -> Option<&'a str> {
    let i = rest.find(key)? + key.len();
    let tail = &rest[i..];
    Some(tail.find(next).map_or(tail, |j| &tail[..j]))
}

/// Summarise the text of an instance's `trace` file for `threads`. `end_ns` closes sleeps
/// still open when tracing stopped.
pub fn parse(text: &str, threads: &Threads, end_ns: u64) -> OffCpuBreakdown {
    // Events are recorded when either side of a switch is traced, so the other side may be any
    // task, another fsbench process's threads included: only the runner's children count.
    let mut family: std::collections::HashSet<u32> = [threads.runner].into();
    let mut workers: std::collections::HashSet<u32> = Default::default();
    let mut open: HashMap<u32, Pending> = HashMap::new();
    let mut acc = Acc::default();
    // The pid whose stack the following ` => ` lines are.
    let mut stack_of: Option<u32> = None;
    let mut frames: Vec<&str> = Vec::new();
    let flush = |pid: Option<u32>, frames: &mut Vec<&str>, open: &mut HashMap<u32, Pending>| {
        if let Some(p) = pid.and_then(|pid| open.get_mut(&pid)).filter(|p| p.awaiting_stack) {
            p.reason = classify(frames.iter().copied());
            p.awaiting_stack = false;
        }
        frames.clear();
    };
    for line in text.lines() {
        if let Some(f) = line.strip_prefix(" => ") {
            frames.push(f.split('+').next().unwrap_or(f).trim());
            continue;
        }
        flush(stack_of.take(), &mut frames, &mut open);
        if line.starts_with('#') {
            continue;
        }
        let Some((pid, ns, rest)) = split_header(line) else { continue };
        if rest.starts_with("<stack trace>") {
            stack_of = Some(pid);
            continue;
        }
        if let Some(fork) = rest.strip_prefix("sched_process_fork: ") {
            let parent = field(fork, " pid=", " child_comm=").and_then(|v| v.parse().ok());
            let child_comm = field(fork, "child_comm=", " child_pid=").unwrap_or("");
            let child = field(fork, "child_pid=", " ").and_then(|v| v.trim().parse().ok());
            if let (Some(parent), Some(child)) = (parent, child) {
                if family.contains(&parent) {
                    family.insert(child);
                    if child_comm == threads.comm {
                        workers.insert(child);
                    }
                }
            }
            continue;
        }
        let ours = |pid: u32, comm: &str| workers.contains(&pid) && comm == threads.comm;
        let Some(sw) = rest.strip_prefix("sched_switch: ") else { continue };
        let prev_comm = field(sw, "prev_comm=", " prev_pid=").unwrap_or("");
        let prev_pid = field(sw, "prev_pid=", " ").and_then(|v| v.parse().ok()).unwrap_or(0);
        let prev_state = field(sw, "prev_state=", " ").unwrap_or("");
        let next_comm = field(sw, "next_comm=", " next_pid=").unwrap_or("");
        let next_pid = field(sw, "next_pid=", " ").and_then(|v| v.parse().ok()).unwrap_or(0);
        // A thread's last switch-out (`X`, `Z`): it ended, it did not wait.
        let exited = prev_state.starts_with(['X', 'Z']);
        if exited {
            open.remove(&prev_pid);
        } else if ours(prev_pid, prev_comm) {
            let sleeping = !prev_state.starts_with('R');
            let reason = if sleeping { OTHER } else { PREEMPTED };
            let p = Pending { out_ns: ns, reason, awaiting_stack: sleeping };
            if let Some(old) = open.insert(prev_pid, p) {
                // A switch-in was lost (buffer full): close the old sleep here.
                acc.close(old, ns);
            }
        }
        if ours(next_pid, next_comm) {
            if let Some(p) = open.remove(&next_pid) {
                acc.close(p, ns);
            }
        }
    }
    flush(stack_of.take(), &mut frames, &mut open);
    for (_, p) in open.drain() {
        let end = end_ns.max(p.out_ns);
        acc.close(p, end);
    }
    let mut reasons: Vec<OffCpuReason> = acc
        .by
        .into_iter()
        .map(|(r, (nanos, switches))| OffCpuReason { reason: r.to_string(), nanos, switches })
        .collect();
    reasons.sort_by(|a, b| b.nanos.cmp(&a.nanos).then(a.reason.cmp(&b.reason)));
    OffCpuBreakdown { switches: acc.switches, total_nanos: acc.total, reasons, events_lost: 0 }
}

/// A running off-CPU trace of the calling thread's future children. Dropping it without
/// [`OffCpuTracer::stop`] removes the instance (and discards what was traced).
#[derive(Debug)]
pub struct OffCpuTracer {
    instance: Instance,
    threads: Threads,
}

impl OffCpuTracer {
    /// Trace the threads the calling thread spawns from now on (the phase's workers).
    pub fn start(opts: &TraceOptions) -> Result<OffCpuTracer, TraceError> {
        if !crate::sys::is_root() {
            return Err(TraceError::Unavailable("needs root (tracefs)".into()));
        }
        let runner = rustix::thread::gettid().as_raw_nonzero().get() as u32;
        let comm = std::fs::read_to_string("/proc/thread-self/comm")
            .map_err(|e| TraceError::Unavailable(format!("reading /proc/thread-self/comm: {e}")))?
            .trim_end_matches('\n')
            .to_string();
        let state = StateDir::new(&opts.state_dir);
        let inst = Instance::create(&state)?;
        if !inst.path().join("events/sched/sched_switch").is_dir() {
            return Err(TraceError::Unavailable("the kernel lacks sched:sched_switch".into()));
        }
        configure(&inst, &TraceOptions { buffer_kib_per_cpu: OFFCPU_BUFFER_KIB, ..opts.clone() })?;
        inst.write("set_event_pid", &runner.to_string())?;
        inst.write("options/event-fork", "1")?;
        // A comm with a quote cannot go into the filter: stacks for every sleep of the
        // traced tasks then (the parser still keeps only the workers').
        let by_name = if comm.contains('"') || comm.is_empty() {
            String::new()
        } else {
            format!(" && prev_comm == \"{comm}\"")
        };
        inst.write(
            "events/sched/sched_switch/trigger",
            &format!("stacktrace if prev_state & 3{by_name}"),
        )?;
        inst.write("events/sched/sched_switch/enable", "1")?;
        // Which threads are the runner's (see [`parse`]).
        inst.write("events/sched/sched_process_fork/enable", "1")?;
        inst.write("tracing_on", "1")?;
        Ok(OffCpuTracer { instance: inst, threads: Threads { runner, comm } })
    }

    /// Stop, read the trace once, remove the instance and summarise.
    pub fn stop(self) -> Result<OffCpuBreakdown, TraceError> {
        let end_ns = super::tracer::now_mono_ns();
        let inst = self.instance;
        inst.write("tracing_on", "0")?;
        let text = inst.read("trace")?;
        let lost = lost_events(inst.path());
        // The trigger must go before the instance can be removed.
        let _ = inst.write("events/sched/sched_switch/enable", "0");
        let _ = inst.write("events/sched/sched_process_fork/enable", "0");
        let _ = inst.write("events/sched/sched_switch/trigger", "!stacktrace");
        inst.remove()?;
        let mut b = parse(&text, &self.threads, end_ns);
        b.events_lost = lost;
        Ok(b)
    }
}

/// Ring buffer per CPU for the off-CPU trace, KiB: a switch with its stack is ~300 bytes, so
/// this holds ~100k sleeps per CPU.
pub const OFFCPU_BUFFER_KIB: u64 = 32 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
# tracer: nop
#
     fsb-w-50    [001] .....    9.000000: sched_process_fork: comm=fsb-w pid=50 child_comm=fsb-w child_pid=100
     fsb-w-50    [001] .....    9.000001: sched_process_fork: comm=fsb-w pid=50 child_comm=iou-sqp-50 child_pid=101
     fsb-w-200   [000] d..2.    9.500000: sched_switch: prev_comm=fsb-w prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=fsb-w next_pid=100 next_prio=120
     fsb-w-101   [000] d..2.    9.500001: sched_switch: prev_comm=fsb-w prev_pid=101 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
     fsb-w-100   [001] d..2.   10.000000: sched_switch: prev_comm=fsb-w prev_pid=100 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120
  other cpu-7    [000] d..2.   10.000001: sched_switch: prev_comm=x y prev_pid=7 prev_prio=120 prev_state=R ==> next_comm=swapper/0 next_pid=0 next_prio=120
     fsb-w-100   [001] d..2.   10.000002: <stack trace>
 => trace_event_raw_event_sched_switch
 => __schedule
 => schedule
 => io_schedule_timeout
 => balance_dirty_pages+0x2a1/0x9f0
 => balance_dirty_pages_ratelimited_flags
 => generic_perform_write
 => vfs_write
       <idle>-0     [001] d..2.   10.006000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=fsb-w next_pid=100 next_prio=120
     fsb-w-100   [001] d..2.   10.007000: sched_switch: prev_comm=fsb-w prev_pid=100 prev_prio=120 prev_state=D ==> next_comm=swapper/1 next_pid=0 next_prio=120
     fsb-w-100   [001] d..2.   10.007001: <stack trace>
 => __schedule
 => io_schedule
 => folio_wait_bit_common
 => folio_wait_writeback
 => __filemap_fdatawait_range
 => file_write_and_wait_range
 => ext4_sync_file
 => jbd2_log_wait_commit.isra.0
     fsb-w-50    [000] d..2.   10.007500: sched_switch: prev_comm=fsb-w prev_pid=50 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
     fsb-w-50    [000] d..2.   10.007501: <stack trace>
 => futex_wait
       <idle>-0     [001] d..2.   10.009000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=fsb-w next_pid=100 next_prio=120
     fsb-w-100   [001] d..2.   10.009500: sched_switch: prev_comm=fsb-w prev_pid=100 prev_prio=120 prev_state=R+ ==> next_comm=kworker/1:1 next_pid=9 next_prio=120
 kworker/1:1-9      [001] d..2.   10.010000: sched_switch: prev_comm=kworker/1:1 prev_pid=9 prev_prio=120 prev_state=I ==> next_comm=fsb-w next_pid=100 next_prio=120
     fsb-w-100   [001] d..2.   10.020000: sched_switch: prev_comm=fsb-w prev_pid=100 prev_prio=120 prev_state=X ==> next_comm=fsb-w next_pid=200 next_prio=120
";

    fn threads() -> Threads {
        Threads { runner: 50, comm: "fsb-w".into() }
    }

    #[test]
    fn pairs_switches_and_classifies_stacks() {
        let b = parse(SAMPLE, &threads(), 11_000_000_000);
        let ns = |r: &str| b.reasons.iter().find(|x| x.reason == r).map(|x| x.nanos);
        // 10.000000 -> 10.006000 throttled; 10.007000 -> 10.009000 journal (it outranks the
        // writeback and fsync frames below it); 10.009500 -> 10.010000 preempted. The runner
        // (pid 50), a thread not forked by it (200, of another process of the same name), a
        // child of another name (101), other tasks and the worker's exit (X) are not counted.
        assert_eq!(ns("throttled in balance_dirty_pages"), Some(6_000_000));
        assert_eq!(ns("waiting on the journal"), Some(2_000_000));
        assert_eq!(ns(PREEMPTED), Some(500_000));
        assert_eq!(b.reasons.len(), 3);
        assert_eq!(b.switches, 3);
        assert_eq!(b.total_nanos, 8_500_000);
        assert_eq!(b.reasons[0].reason, "throttled in balance_dirty_pages");
        assert_eq!(
            b.words(),
            "throttled in balance_dirty_pages 71%, waiting on the journal 24%, waiting for a CPU 6%"
        );
    }

    #[test]
    fn a_sleep_open_at_the_end_is_closed_there() {
        let text = "     fsb-w-50    [001] .....    9.000000: sched_process_fork: comm=fsb-w pid=50 child_comm=fsb-w child_pid=100\n     fsb-w-100   [001] d..2.   10.000000: sched_switch: prev_comm=fsb-w prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n";
        let b = parse(text, &threads(), 10_250_000_000);
        assert_eq!(b.total_nanos, 250_000_000);
        assert_eq!(b.reasons[0].reason, OTHER);
    }

    #[test]
    fn table_priority_and_suffixes() {
        assert_eq!(
            classify(["io_schedule", "folio_wait_bit_common", "filemap_read"]),
            "waiting for a read"
        );
        assert_eq!(
            classify(["io_schedule", "folio_wait_writeback", "filemap_read"]),
            "waiting for writeback"
        );
        assert_eq!(
            classify(["schedule", "xlog_wait_on_iclog", "xfs_file_fsync"]),
            "waiting on the journal"
        );
        assert_eq!(classify(["schedule", "blkdev_issue_flush.constprop.0"]), "fsync/sync waiting");
        assert_eq!(classify(["schedule", "rwsem_down_write_slowpath", "vfs_write"]), "lock");
        // Seen in seed 001's streaming write on a nearly full ext4 (`--scale 1/64`).
        let nonda = ["schedule", "wb_wait_for_completion", "__writeback_inodes_sb_nr"];
        let nonda = [&nonda[..], &["try_to_writeback_inodes_sb", "ext4_nonda_switch"]].concat();
        assert_eq!(classify(nonda), "waiting for writeback");
        // A prefix is not a match.
        assert_eq!(classify(["balance_dirty_pages_ratelimited_flags"]), OTHER);
        assert_eq!(classify(["futex_wait"]), OTHER);
    }

    #[test]
    fn breakdowns_of_phases_add_up() {
        let b = parse(SAMPLE, &threads(), 11_000_000_000);
        let mut sum = b.clone();
        sum.add(&b);
        assert_eq!(sum.total_nanos, 2 * b.total_nanos);
        assert_eq!(sum.reasons.len(), b.reasons.len());
        assert!(
            (sum.share("waiting on the journal") - b.share("waiting on the journal")).abs() < 1e-12
        );
    }
}
