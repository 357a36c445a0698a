//! Progress on stderr: a bar on a terminal; otherwise (a log file, CI, `nohup`) one plain line
//! as each test starts, with the time since the start, so a long run is never silent.

use crate::engine::Progress;
use crate::model::job::TestDef;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write as _};
use std::sync::Mutex;
use std::time::Instant;

/// indicatif bar driven by the engine's progress callbacks.
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    total_tests: usize,
    repeat: u32,
    test_pos: Mutex<(String, usize)>,
    label: Mutex<String>,
    /// stderr is not a terminal: lines instead of a bar.
    lines: bool,
    /// Each repetition is a unit of its own (compare's interleaved rounds), so two in a row of
    /// the same test on the same target (at a round boundary) are two lines, not one.
    per_repetition: bool,
    started: Instant,
}

/// A test as progress names it: its id, then its name when that says more (a fio job's test
/// has its job's name as both).
fn test_words(test: &TestDef) -> String {
    if test.name == test.id {
        test.id.clone()
    } else {
        format!("{} {}", test.id, test.name)
    }
}

impl Bar {
    /// A bar for `total_tests` tests of `repeat` repetitions.
    pub fn new(total_tests: usize, repeat: u32) -> Bar {
        Bar {
            bar: Mutex::new(None),
            total_tests,
            repeat,
            test_pos: Mutex::new((String::new(), 0)),
            label: Mutex::new(String::new()),
            lines: !std::io::stderr().is_terminal(),
            per_repetition: false,
            started: Instant::now(),
        }
    }

    /// A bar for `units` repetitions of tests on targets, counted one by one.
    pub fn per_repetition(units: usize) -> Bar {
        Bar { per_repetition: true, ..Bar::new(units, 1) }
    }
}

impl Progress for Bar {
    fn target_start(&self, label: &str) {
        *self.label.lock().unwrap_or_else(|e| e.into_inner()) = label.to_string();
    }

    fn phase_start(&self, test: &TestDef, rep: u32, phase: &str, expected: Option<u64>) {
        self.start(test, rep, phase, expected, false)
    }

    fn phase_start_ops(&self, test: &TestDef, rep: u32, phase: &str, expected: Option<u64>) {
        self.start(test, rep, phase, expected, true)
    }

    fn phase_progress(&self, bytes: u64) {
        if let Some(pb) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            pb.set_position(bytes);
        }
    }

    fn phase_end(&self) {
        if let Some(pb) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            pb.finish_and_clear();
        }
    }
}

impl Bar {
    fn start(&self, test: &TestDef, rep: u32, phase: &str, expected: Option<u64>, ops: bool) {
        let label = self.label.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let (idx, new_test) = {
            let mut tp = self.test_pos.lock().unwrap_or_else(|e| e.into_inner());
            let key = match self.per_repetition {
                true => format!("{label}\0{}\0{rep}", test.id),
                false => format!("{label}\0{}", test.id),
            };
            let new_test = tp.0 != key;
            if new_test {
                tp.0 = key;
                tp.1 += 1;
            }
            (tp.1, new_test)
        };
        // Repetitions added by --repeat auto can go past the planned count.
        let of = if idx <= self.total_tests {
            format!("{idx}/{}", self.total_tests)
        } else {
            idx.to_string()
        };
        if self.lines {
            if new_test {
                let s = self.started.elapsed().as_secs();
                let on = if label.is_empty() { String::new() } else { format!("{label}: ") };
                // Not eprintln!: a closed stderr must not end the run before its teardown.
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "fsbench: [{of}] {on}test {} ({}:{:02} elapsed)",
                    test_words(test),
                    s / 60,
                    s % 60
                );
            }
            return;
        }
        let pb = match expected {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let style = match (expected.is_some(), ops) {
            (true, false) => {
                "{prefix} {wide_bar} {bytes}/{total_bytes} {binary_bytes_per_sec} {elapsed}"
            }
            (false, false) => "{prefix} {spinner} {bytes} {binary_bytes_per_sec} {elapsed}",
            (true, true) => "{prefix} {wide_bar} {human_pos}/{human_len} ops {per_sec} {elapsed}",
            (false, true) => "{prefix} {spinner} {human_pos} ops {per_sec} {elapsed}",
        };
        pb.set_style(
            ProgressStyle::with_template(style).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let rep = if self.repeat > 1 {
            format!(" rep {}/{}", rep + 1, self.repeat)
        } else {
            String::new()
        };
        pb.set_prefix(format!("[{of}] test {}{rep} {phase}", test_words(test)));
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(pb);
    }
}
