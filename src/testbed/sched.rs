//! The I/O scheduler of a testbed's block devices (`sched=`): what the kernel offers for a
//! device (`/sys/block/NAME/queue/scheduler`, e.g. `none [mq-deadline] kyber bfq`), setting
//! it, and reading back the active one for the environment record.

use super::config::ConfigError;
use super::error::TestbedError;
use std::path::PathBuf;

fn path(dev: &str) -> PathBuf {
    PathBuf::from(format!("/sys/block/{dev}/queue/scheduler"))
}

/// Parse the scheduler file: (offered names, the active one).
pub fn parse(text: &str) -> (Vec<String>, Option<String>) {
    let mut offered = Vec::new();
    let mut active = None;
    for w in text.split_whitespace() {
        match w.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
            Some(a) => {
                active = Some(a.to_string());
                offered.push(a.to_string());
            }
            None => offered.push(w.to_string()),
        }
    }
    (offered, active)
}

/// The active scheduler of `dev`, if the file is readable.
pub fn active(dev: &str) -> Option<String> {
    std::fs::read_to_string(path(dev)).ok().and_then(|t| parse(&t).1)
}

/// The scheduler a device had before [`set`]; [`Restore::teardown`] puts it back, so a loop
/// device handed to the next user (loop devices outlive their detach) has the kernel's default.
#[derive(Debug)]
pub struct Restore {
    dev: String,
    previous: Option<String>,
}

impl Restore {
    /// Put the previous scheduler back.
    pub fn teardown(self) -> Result<(), TestbedError> {
        match self.previous {
            Some(prev) => {
                std::fs::write(path(&self.dev), &prev).map_err(|source| TestbedError::Io {
                    step: format!("restoring the I/O scheduler {prev} on"),
                    path: path(&self.dev),
                    source,
                })
            }
            None => Ok(()),
        }
    }
}

/// Set `sched` on `dev`, after checking that the kernel offers it for this device.
pub fn set(dev: &str, sched: &str) -> Result<Restore, TestbedError> {
    let p = path(dev);
    let text = std::fs::read_to_string(&p).map_err(|source| TestbedError::Io {
        step: "reading the I/O schedulers of".into(),
        path: p.clone(),
        source,
    })?;
    let (offered, previous) = parse(&text);
    if !offered.iter().any(|o| o == sched) {
        return Err(ConfigError::Invalid(format!(
            "sched={sched}: the kernel offers {} for {dev} (load a module such as bfq with \
             `modprobe bfq`, or pick one of those)",
            offered.join(", ")
        ))
        .into());
    }
    std::fs::write(&p, sched).map_err(|source| TestbedError::Io {
        step: format!("setting the I/O scheduler {sched} on"),
        path: p,
        source,
    })?;
    Ok(Restore { dev: dev.to_string(), previous })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_sysfs_file() {
        let (o, a) = parse("none [mq-deadline] kyber bfq\n");
        assert_eq!(o, vec!["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(a.as_deref(), Some("mq-deadline"));
        assert_eq!(parse("[none] \n").1.as_deref(), Some("none"));
    }
}
