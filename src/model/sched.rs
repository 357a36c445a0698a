//! How a job's threads are scheduled (fio's `nice`, `prio`/`prioclass`, `cpus_allowed` with
//! `cpus_allowed_policy`): plain data on a phase ([`crate::model::job::PhaseDef::sched`]),
//! which each worker thread of the phase applies to itself once, before the start barrier
//! (`crate::engine::sched`). Absent settings leave a thread as it was made (no call at all).

use serde::{Deserialize, Serialize};

/// The settings each worker thread of a phase takes before its first op.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadSched {
    /// Raise (or, negative, lower) the thread's CPU nice value by this much, -20 to 19, as
    /// fio's `nice(N)`: from the value the thread started with (the process's, normally 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// Its I/O priority (fio's `prio` and `prioclass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioprio: Option<IoPrio>,
    /// The CPUs it may run on (fio's `cpus_allowed`, `cpus_allowed_policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<CpuAffinity>,
}

impl ThreadSched {
    /// Nothing set: threads run as they are made.
    pub fn is_none(&self) -> bool {
        self.nice.is_none() && self.ioprio.is_none() && self.cpus.is_none()
    }
}

/// An I/O scheduling class (the kernel's `IOPRIO_CLASS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoClass {
    /// `IOPRIO_CLASS_RT` (1): served first; needs `CAP_SYS_ADMIN`.
    Realtime,
    /// `IOPRIO_CLASS_BE` (2): the default class.
    BestEffort,
    /// `IOPRIO_CLASS_IDLE` (3): served when no one else wants the disk.
    Idle,
}

impl IoClass {
    /// The kernel's number of the class.
    pub fn number(self) -> u32 {
        match self {
            IoClass::Realtime => 1,
            IoClass::BestEffort => 2,
            IoClass::Idle => 3,
        }
    }

    /// The word a workload writes for it (`rt`, `be`, `idle`).
    pub fn word(self) -> &'static str {
        match self {
            IoClass::Realtime => "rt",
            IoClass::BestEffort => "be",
            IoClass::Idle => "idle",
        }
    }
}

/// An I/O priority: a class and a level within it (0 highest, 7 lowest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoPrio {
    /// The class.
    pub class: IoClass,
    /// The level, 0 to 7.
    pub level: u8,
}

impl IoPrio {
    /// The value `ioprio_set` takes (`IOPRIO_PRIO_VALUE(class, level)`: class << 13 | level).
    pub fn value(self) -> u32 {
        self.class.number() << 13 | u32::from(self.level)
    }

    /// Read a workload's `ioprio`: `CLASS` or `CLASS:LEVEL`, CLASS `rt`, `be` or `idle`, LEVEL
    /// 0 to 7 (default 0).
    pub fn parse(text: &str) -> Result<IoPrio, String> {
        let (c, l) = match text.split_once(':') {
            Some((c, l)) => (c.trim(), Some(l.trim())),
            None => (text.trim(), None),
        };
        let class = match c {
            "rt" => IoClass::Realtime,
            "be" => IoClass::BestEffort,
            "idle" => IoClass::Idle,
            _ => return Err(format!("`{text}`: the class is rt, be or idle (`be:4`)")),
        };
        let level = match l {
            None => 0,
            Some(l) => match l.parse::<u8>() {
                Ok(n) if n <= 7 => n,
                _ => return Err(format!("`{text}`: the level is 0 (highest) to 7 (lowest)")),
            },
        };
        Ok(IoPrio { class, level })
    }

    /// As a workload writes it (`be:4`).
    pub fn text(self) -> String {
        format!("{}:{}", self.class.word(), self.level)
    }
}

/// The CPUs a phase's threads may run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuAffinity {
    /// The CPUs, ascending, without repeats, at least one.
    pub cpus: Vec<u32>,
    /// fio's `cpus_allowed_policy=split`: thread k runs on the set's (k mod n)-th CPU alone;
    /// false (`shared`): every thread may run on all of them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split: bool,
}

impl CpuAffinity {
    /// The CPUs thread `k` (its index among the phase's, or the role's, threads) runs on.
    pub fn of_thread(&self, k: u32) -> &[u32] {
        match self.cpus.len() {
            0 => &[],
            n if self.split => std::slice::from_ref(&self.cpus[k as usize % n]),
            _ => &self.cpus,
        }
    }
}

/// Read a CPU list in fio's (and the kernel's) syntax: numbers and ranges joined by commas,
/// `0,2-3`, each below `limit`. The result is ascending, without repeats, and not empty.
pub fn parse_cpu_list(text: &str, limit: u32) -> Result<Vec<u32>, String> {
    let mut cpus = Vec::new();
    let num = |w: &str| {
        w.trim().parse::<u32>().map_err(|_| {
            format!("`{text}`: `{}` is not a CPU number (a list such as `0,2-3`)", w.trim())
        })
    };
    for item in text.split(',') {
        if item.trim().is_empty() {
            continue;
        }
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let a = num(item)?;
                (a, a)
            }
        };
        if a > b {
            return Err(format!("`{text}`: the range {a}-{b} is empty (give the lower CPU first)"));
        }
        if b >= limit {
            return Err(format!(
                "`{text}`: CPU {b} is not on this machine (CPUs 0 to {})",
                limit.saturating_sub(1)
            ));
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(format!("`{text}`: no CPUs (a list such as `0,2-3`)"));
    }
    Ok(cpus)
}

/// A CPU list as [`parse_cpu_list`] reads it, ranges joined (`0,2-3`).
pub fn cpu_list_text(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioprio_value_is_the_kernels_encoding() {
        let p = IoPrio::parse("be:3").unwrap();
        assert_eq!(p.value(), 2 << 13 | 3);
        assert_eq!(IoPrio::parse("rt").unwrap().value(), 1 << 13);
        assert_eq!(IoPrio::parse("idle:7").unwrap().value(), 3 << 13 | 7);
        assert_eq!(IoPrio::parse("be:3").unwrap().text(), "be:3");
        assert!(IoPrio::parse("be:8").is_err());
        assert!(IoPrio::parse("none:1").is_err());
    }

    #[test]
    fn cpu_lists_read_as_fio_reads_them() {
        assert_eq!(parse_cpu_list("0,2-3", 4).unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_cpu_list(" 3,1-2,1 ", 4).unwrap(), vec![1, 2, 3]);
        assert!(parse_cpu_list("4", 4).unwrap_err().contains("CPU 4 is not on this machine"));
        assert!(parse_cpu_list("0-9", 4).unwrap_err().contains("CPU 9"));
        assert!(parse_cpu_list("3-1", 4).is_err());
        assert!(parse_cpu_list("a", 4).is_err());
        assert!(parse_cpu_list("", 4).is_err());
        assert_eq!(cpu_list_text(&[0, 2, 3, 5]), "0,2-3,5");
    }

    /// split gives thread k the (k mod n)-th CPU alone, as fio's `fio_cpus_split`; shared
    /// gives every thread the whole set.
    #[test]
    fn split_deals_one_cpu_per_thread_in_turn() {
        let a = CpuAffinity { cpus: vec![1, 3], split: true };
        assert_eq!(a.of_thread(0), &[1]);
        assert_eq!(a.of_thread(1), &[3]);
        assert_eq!(a.of_thread(2), &[1]);
        let s = CpuAffinity { split: false, ..a };
        assert_eq!(s.of_thread(1), &[1, 3]);
    }
}
