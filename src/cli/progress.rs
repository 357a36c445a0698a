//! A progress bar on stderr (hidden when stderr is not a terminal).

use crate::engine::Progress;
use crate::workload::TestDef;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;

/// indicatif bar driven by the engine's progress callbacks.
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    total_tests: usize,
    repeat: u32,
    test_pos: Mutex<(String, usize)>,
    label: Mutex<String>,
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
        }
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
        let idx = {
            let mut tp = self.test_pos.lock().unwrap_or_else(|e| e.into_inner());
            let key =
                format!("{}\0{}", self.label.lock().unwrap_or_else(|e| e.into_inner()), test.id);
            if tp.0 != key {
                tp.0 = key;
                tp.1 += 1;
            }
            tp.1
        };
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
        pb.set_prefix(format!(
            "[{idx}/{}] test {} {}{rep} {phase}",
            self.total_tests, test.id, test.name
        ));
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(pb);
    }
}
