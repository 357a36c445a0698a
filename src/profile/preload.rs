//! The preload list (ureadahead's pack in text form), `fsbench preload`, and the measured
//! comparison of cold starts with and without it.
//!
//! List format: a comment line, then one `path<TAB>offset<TAB>length` line per range (bytes),
//! in the order the profiled cold start first touched them. Paths with a tab or newline are
//! left out (and counted).
//!
//! Preload: the ranges are sorted by their place on the device (FIEMAP of the range's first
//! byte; unmapped ranges last, in list order), `readahead(2)` is issued for each in that order
//! (the kernel queues them without waiting, so the device sees a sorted, deep queue), then each
//! range is read once with `pread` into a scratch buffer, which waits until it is in memory.
//! When `fsbench preload` returns, the ranges are cached.
//!
//! Comparison (`profile --compare-preload`): one traced cold run without the preload gives the
//! pages the command needs; then `repeat` pairs of cold runs, without and with the preload,
//! alternating which goes first (ABBA), each after `sync + drop_caches` verified as for
//! `--cold`. The command's wall time is the figure; the preload's own time is reported beside
//! it (a boot-time preloader runs it in parallel with other work). The decision is
//! [`crate::decision::decide_samples`] on 1 / wall time: Yuen's trimmed t-test on the
//! logs (Welch's below 5 pairs), two-sided at 5% (a family of one), and at least a 5% effect,
//! else a draw. "Prefetched but not used" is the bytes of the
//! list's ranges that the traced cold run did not bring into the cache.

use super::{cold, scope, spawn, Profile, ProfileError, ProfileOptions};
use crate::decision::decide_samples;
use crate::model::verdict::{Rule, Verdict};
use crate::observe::extents;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::Instant;

/// One range of a preload list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// File.
    pub path: String,
    /// Offset, bytes.
    pub offset: u64,
    /// Length, bytes.
    pub length: u64,
}

const HEADER: &str =
    "# fsbench preload list: path<TAB>offset<TAB>length (bytes), first-touch order";

/// Write the profile's first-touch ranges as a list; returns the number of ranges written.
pub fn write_list(p: &Profile, path: &Path) -> std::io::Result<usize> {
    let mut out = String::new();
    out.push_str(HEADER);
    out.push('\n');
    let mut n = 0;
    for t in &p.touched {
        let Some(f) = p.files.get(t.file) else { continue };
        // Files only: not a deleted one, nor a device's buffer cache (named in parentheses).
        if f.deleted || !f.path.starts_with('/') || f.path.contains(['\t', '\n']) {
            continue;
        }
        out.push_str(&format!("{}\t{}\t{}\n", f.path, t.offset_bytes, t.length_bytes));
        n += 1;
    }
    // Never through a link planted under that name (see `sys::outfile`).
    crate::sys::outfile::replace(path, out.as_bytes())?;
    Ok(n)
}

/// Read a list; errors name the line and how to fix it.
pub fn read_list(path: &Path) -> Result<Vec<Entry>, ProfileError> {
    // A list is the user's input: missing, unreadable, or a FIFO (which would block the
    // read forever) is bad input.
    let text = crate::sys::regular::read_to_string(path)
        .map_err(|e| ProfileError::BadInput(format!("preload list {}: {e}", path.display())))?;
    parse_list(&text).map_err(|source| ProfileError::List { path: path.to_path_buf(), source })
}

/// A line of a preload list that is not `path<TAB>offset<TAB>length`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    /// Not three fields.
    #[error("line {line}: expected path<TAB>offset<TAB>length, got {text:?}")]
    Fields {
        /// 1-based line.
        line: usize,
        /// The line.
        text: String,
    },
    /// An offset or length that is not a number.
    #[error("line {line}: {what} {value:?} is not a number of bytes")]
    NotANumber {
        /// 1-based line.
        line: usize,
        /// `offset` or `length`.
        what: &'static str,
        /// The field as written.
        value: String,
    },
}

impl crate::sys::classify::Classify for ListError {
    /// The list is the user's file.
    fn is_bad_input(&self) -> bool {
        true
    }
}

/// Parse the text of a list.
pub fn parse_list(text: &str) -> Result<Vec<Entry>, ListError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.split('\t');
        let (Some(p), Some(o), Some(l), None) = (it.next(), it.next(), it.next(), it.next()) else {
            return Err(ListError::Fields { line: i + 1, text: line.to_string() });
        };
        let num = |s: &str, what: &'static str| {
            s.trim().parse::<u64>().map_err(|_| ListError::NotANumber {
                line: i + 1,
                what,
                value: s.to_string(),
            })
        };
        out.push(Entry {
            path: p.to_string(),
            offset: num(o, "offset")?,
            length: num(l, "length")?,
        });
    }
    Ok(out)
}

/// What a preload did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PreloadReport {
    /// Ranges preloaded.
    pub ranges: usize,
    /// Distinct files.
    pub files: usize,
    /// Files of the list that could not be opened.
    pub missing_files: Vec<String>,
    /// Bytes read (ranges clipped to the file sizes).
    pub bytes: u64,
    /// Ranges whose device place was unknown (no FIEMAP): preloaded last, in list order.
    pub unsorted_ranges: usize,
    /// Time taken, seconds.
    pub seconds: f64,
}

impl PreloadReport {
    /// One line for a person.
    pub fn render(&self) -> String {
        let mut s = format!(
            "preloaded {} in {} ranges of {} files in {:.3} s",
            super::summary::human(self.bytes),
            self.ranges,
            self.files,
            self.seconds
        );
        if self.unsorted_ranges > 0 {
            s.push_str(&format!(" ({} ranges not sortable: no FIEMAP)", self.unsorted_ranges));
        }
        if !self.missing_files.is_empty() {
            s.push_str(&format!(
                "; {} files missing: {}",
                self.missing_files.len(),
                self.missing_files.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        s
    }
}

/// An open file of a list: descriptor, device, extents, size.
type Opened = (std::fs::File, u64, Vec<crate::model::extents::Extent>, u64);

/// Bring the list's ranges into the page cache, sorted by device offset.
pub fn preload(list: &[Entry]) -> PreloadReport {
    let t = Instant::now();
    let mut r = PreloadReport::default();
    let mut open: HashMap<&str, Option<Opened>> = HashMap::new();
    // (device, physical offset or MAX, list position)
    let mut order: Vec<(u64, u64, usize)> = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let slot = open.entry(e.path.as_str()).or_insert_with(|| {
            // Never blocks on a FIFO named in the list: only regular files are read.
            let f = crate::sys::regular::open(Path::new(&e.path)).ok()?;
            let md = f.metadata().ok()?;
            if !md.is_file() {
                return None;
            }
            let ex = extents::extents(Path::new(&e.path)).unwrap_or_default();
            Some((f, md.dev(), ex, md.len()))
        });
        let Some((_, dev, ex, _)) = slot else {
            if !r.missing_files.contains(&e.path) {
                r.missing_files.push(e.path.clone());
            }
            continue;
        };
        let phys = ex
            .iter()
            .find(|x| x.logical_bytes <= e.offset && e.offset < x.logical_bytes + x.length_bytes)
            .map(|x| x.physical_bytes + (e.offset - x.logical_bytes));
        if phys.is_none() {
            r.unsorted_ranges += 1;
        }
        order.push((*dev, phys.unwrap_or(u64::MAX), i));
    }
    order.sort();
    r.files = open.values().filter(|v| v.is_some()).count();
    for &(_, _, i) in &order {
        let e = &list[i];
        if let Some(Some((f, _, _, _))) = open.get(e.path.as_str()) {
            // SAFETY: plain syscall on an open descriptor.
            unsafe { libc::readahead(f.as_raw_fd(), e.offset as i64, e.length as usize) };
        }
    }
    let mut buf = vec![0u8; 1 << 20];
    for &(_, _, i) in &order {
        let e = &list[i];
        let Some(Some((f, _, _, size))) = open.get(e.path.as_str()) else { continue };
        let end = (e.offset + e.length).min(*size);
        let mut pos = e.offset;
        while pos < end {
            let n = ((end - pos) as usize).min(buf.len());
            match f.read_at(&mut buf[..n], pos) {
                Ok(0) | Err(_) => break,
                Ok(k) => pos += k as u64,
            }
        }
        r.bytes += pos.saturating_sub(e.offset);
        r.ranges += 1;
    }
    r.seconds = t.elapsed().as_secs_f64();
    r
}

/// The measured comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    /// The command.
    pub command: Vec<String>,
    /// The list used.
    pub list: String,
    /// Cold wall times without the preload, seconds.
    pub without_seconds: Vec<f64>,
    /// Cold wall times of the command after the preload, seconds.
    pub with_seconds: Vec<f64>,
    /// Time of each preload, seconds.
    pub preload_seconds: Vec<f64>,
    /// The decision on 1 / wall time; side 0 = without, side 1 = with (the command's time
    /// after the preload, as a preloader that ran earlier, at boot, would give).
    pub verdict: Verdict,
    /// The same with the preload's own time added to the command's: what running the preload
    /// just before the command gains.
    #[serde(default)]
    pub verdict_end_to_end: Option<Verdict>,
    /// Bytes the list preloads (as read in the first preload).
    pub list_bytes: u64,
    /// Bytes of the list that the traced cold run did not bring into the cache.
    pub prefetched_not_used_bytes: u64,
    /// Cache checks that left more than 1% resident.
    pub cold_warnings: Vec<String>,
}

impl Comparison {
    /// Text for a person.
    pub fn render(&self) -> String {
        let med = |v: &[f64]| crate::stats::summary::median(v);
        let words = |v: &Verdict| match v {
            Verdict::Win { winner: 1, factor, .. } => {
                format!("{factor:.2}x faster (significant by compare's rule)")
            }
            Verdict::Win { factor, .. } => {
                format!("{factor:.2}x SLOWER (significant by compare's rule)")
            }
            Verdict::Draw { factor, .. } => {
                format!("draw: no significant difference (factor {factor:.2})")
            }
            Verdict::NotCompared { reason } => format!("not compared: {reason}"),
        };
        let mut verdict = format!(
            "the command alone after the preload (a preloader run earlier, at boot): {}",
            words(&self.verdict)
        );
        if let Some(v) = &self.verdict_end_to_end {
            verdict.push_str(&format!(
                "\n           preload + command, the preload's own time counted: {}",
                words(v)
            ));
        }
        let mut s = format!(
            "preload comparison of `{}` with {} ({} cold runs each, interleaved):\n  \
             without preload: median {:.3} s\n  with preload:    median {:.3} s (preload itself: \
             median {:.3} s; preload + command: median {:.3} s)\n  verdict: {verdict}\n  \
             prefetched but not used: {} of {} preloaded\n",
            super::summary::short_command(&self.command.join(" ")),
            self.list,
            self.without_seconds.len(),
            med(&self.without_seconds),
            med(&self.with_seconds),
            med(&self.preload_seconds),
            med(&self
                .with_seconds
                .iter()
                .zip(&self.preload_seconds)
                .map(|(a, b)| a + b)
                .collect::<Vec<_>>()),
            super::summary::human(self.prefetched_not_used_bytes),
            super::summary::human(self.list_bytes),
        );
        for w in &self.cold_warnings {
            s.push_str(&format!("  note: {w}\n"));
        }
        s
    }
}

/// Bytes of `list` outside the ranges in `needed` (by path).
pub fn not_used(list: &[Entry], needed: &HashMap<String, Vec<(u64, u64)>>) -> u64 {
    let mut total = 0;
    for e in list {
        let (a, b) = (e.offset, e.offset + e.length);
        let mut covered = 0;
        if let Some(rs) = needed.get(&e.path) {
            for &(x, y) in rs {
                let lo = a.max(x);
                let hi = b.min(y);
                if hi > lo {
                    covered += hi - lo;
                }
            }
        }
        total += e.length.saturating_sub(covered);
    }
    total
}

/// Cold-start helper: run `argv` held, release it and return its wall time in seconds.
pub fn timed_run(argv: &[String]) -> Result<f64, ProfileError> {
    let mut h = spawn::spawn_held(argv)?;
    let t = h.release()?;
    h.wait(None)?;
    Ok(t.elapsed().as_secs_f64())
}

/// `fsbench profile --compare-preload LIST`.
pub fn compare(
    opts: &ProfileOptions,
    list_path: &Path,
    repeat: usize,
) -> Result<Comparison, ProfileError> {
    let list = read_list(list_path)?;
    let first =
        opts.argv.first().ok_or_else(|| ProfileError::BadInput("no command given".into()))?;
    spawn::resolve(first)?;
    let watched = scope::resolve(&opts.mounts)?;
    if !crate::sys::is_root() {
        return Err(ProfileError::Unavailable(
            "the preload comparison needs root (it empties the page cache and traces)".into(),
        ));
    }
    let traced = super::profile_once(&ProfileOptions { cold: true, ..opts.clone() }, &watched)?;
    let mut needed: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
    for t in &traced.touched {
        if let Some(f) = traced.files.get(t.file) {
            needed
                .entry(f.path.clone())
                .or_default()
                .push((t.offset_bytes, t.offset_bytes + t.length_bytes));
        }
    }
    let mut c = Comparison {
        command: opts.argv.clone(),
        list: list_path.display().to_string(),
        without_seconds: Vec::new(),
        with_seconds: Vec::new(),
        preload_seconds: Vec::new(),
        verdict: Verdict::NotCompared { reason: "not run".into() },
        verdict_end_to_end: None,
        list_bytes: 0,
        prefetched_not_used_bytes: not_used(&list, &needed),
        cold_warnings: Vec::new(),
    };
    'outer: for i in 0..repeat {
        let order = if i % 2 == 0 { [false, true] } else { [true, false] };
        for with in order {
            if crate::sys::signals::interrupted() {
                break 'outer;
            }
            let check = cold::make_cold(&watched)?;
            if let Some(w) = check.warning() {
                c.cold_warnings.push(w);
            }
            if with {
                let r = preload(&list);
                if c.list_bytes == 0 {
                    c.list_bytes = r.bytes;
                }
                c.preload_seconds.push(r.seconds);
                c.with_seconds.push(timed_run(&opts.argv)?);
            } else {
                c.without_seconds.push(timed_run(&opts.argv)?);
            }
        }
    }
    let n = c.without_seconds.len().min(c.with_seconds.len());
    let inv = |v: &[f64]| v[..n].iter().map(|t| 1.0 / t).collect::<Vec<f64>>();
    c.verdict = decide_samples(&inv(&c.without_seconds), &inv(&c.with_seconds), &Rule::default());
    let both: Vec<f64> =
        c.with_seconds.iter().zip(&c.preload_seconds).map(|(a, b)| a + b).collect();
    c.verdict_end_to_end =
        Some(decide_samples(&inv(&c.without_seconds), &inv(&both), &Rule::default()));
    c.cold_warnings.dedup();
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_round_trip_and_errors() {
        let l = parse_list("# c\n/a b\t0\t4096\n/c\t8192\t100\n").unwrap();
        assert_eq!(l[0], Entry { path: "/a b".into(), offset: 0, length: 4096 });
        assert_eq!(l.len(), 2);
        let e = parse_list("/a\t0\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("path<TAB>offset<TAB>length"), "{e}");
        let e = parse_list("/a\tx\t1\n").unwrap_err().to_string();
        assert!(e.contains("offset \"x\""), "{e}");
    }

    #[test]
    fn prefetched_not_used() {
        let list = parse_list("/a\t0\t8192\n/b\t0\t4096\n").unwrap();
        let mut needed = HashMap::new();
        needed.insert("/a".to_string(), vec![(4096, 8192)]);
        assert_eq!(not_used(&list, &needed), 4096 + 4096);
    }

    #[test]
    fn preload_reads_the_ranges_and_reports_missing_files() {
        let d = tempfile::tempdir_in("/var/tmp").unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![1u8; 20000]).unwrap();
        let path = p.to_string_lossy().into_owned();
        let list = vec![
            Entry { path: path.clone(), offset: 8192, length: 100_000 },
            Entry { path: path.clone(), offset: 0, length: 4096 },
            Entry { path: "/no/such/file".into(), offset: 0, length: 1 },
        ];
        let r = preload(&list);
        assert_eq!(r.files, 1);
        assert_eq!(r.ranges, 2);
        assert_eq!(r.bytes, (20000 - 8192) + 4096);
        assert_eq!(r.missing_files, vec!["/no/such/file".to_string()]);
    }
}
