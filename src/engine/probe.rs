//! What is observed around a phase, outside its timing: the block layer's counters of the
//! target's devices, the memory of the host (and of a filesystem daemon), and with `--trace`
//! the block trace of a timed phase (with `--offcpu`, what its threads waited for). [`Probe::start`] opens the bracket just before the phase's
//! workers are released, [`Probe::finish`] closes it just after they end, and
//! [`Observed::record`] puts what was seen into the phase's result.

use super::target::Target;
use crate::model::memory::{MemDelta, MemSample};
use crate::model::result::{note_once, PhaseResult, Warning};
use crate::model::trace::TraceSummary;
use crate::observe::blockstat::Snapshot;
use crate::observe::trace::offcpu::OffCpuTracer;
use crate::observe::trace::{TraceOptions, Tracer};

/// The bracket around one phase, open.
pub struct Probe {
    tracer: Option<Tracer>,
    offcpu: Option<OffCpuTracer>,
    mem_before: MemSample,
    before: Snapshot,
}

/// What the bracket saw.
pub struct Observed {
    after: Snapshot,
    before: Snapshot,
    memory: MemDelta,
    trace: Option<TraceSummary>,
}

impl Probe {
    /// Open the bracket: start tracing `devices` when `trace` and the off-CPU trace when
    /// `offcpu`, then sample memory and the devices' counters.
    pub fn start(
        target: &Target<'_>,
        devices: &[String],
        trace: bool,
        offcpu: bool,
        warnings: &mut Vec<Warning>,
    ) -> Probe {
        let tracer = if trace { start_trace(devices, warnings) } else { None };
        // Started last: it follows the threads this one spawns from now on (the workers).
        let offcpu = if offcpu { start_offcpu(warnings) } else { None };
        let mem_before = MemSample::take(target.daemon);
        let before = Snapshot::take(devices);
        Probe { tracer, offcpu, mem_before, before }
    }

    /// Close the bracket: the devices' counters, the trace (a lost trace is a warning), memory.
    pub fn finish(
        self,
        target: &Target<'_>,
        devices: &[String],
        phase: &str,
        warnings: &mut Vec<Warning>,
    ) -> Observed {
        let after = Snapshot::take(devices);
        let offcpu = self.offcpu.and_then(|t| match t.stop() {
            Ok(s) => Some(s),
            Err(e) => {
                let (phase, error) = (phase.to_string(), format!("off-CPU trace: {e}"));
                note_once(warnings, Warning::TraceLost { phase, error });
                None
            }
        });
        let mut trace = self.tracer.and_then(|t| match t.stop() {
            Ok(s) => Some(s),
            Err(e) => {
                let (phase, error) = (phase.to_string(), e.to_string());
                note_once(warnings, Warning::TraceLost { phase, error });
                None
            }
        });
        // Without a block trace (no devices: tmpfs, FUSE) the off-CPU account still stands.
        if let Some(o) = offcpu {
            trace.get_or_insert_with(TraceSummary::default).offcpu = Some(o);
        }
        let memory = MemDelta { before: self.mem_before, after: MemSample::take(target.daemon) };
        Observed { after, before: self.before, memory, trace }
    }
}

impl Observed {
    /// Put what was seen into the phase's result; an incomplete trace is a warning.
    pub fn record(self, target: &Target<'_>, pr: &mut PhaseResult, warnings: &mut Vec<Warning>) {
        pr.device = self.before.delta(&self.after).map(|mut d| {
            // A user's directory: its device is not fsbench's (Target::dir), others use it.
            d.shared = target.devices.is_empty();
            d
        });
        pr.memory = Some(self.memory);
        if let Some(t) = &self.trace {
            if t.events_lost > 0 || t.events_over_limit > 0 {
                let (events_lost, events_over_limit) = (t.events_lost, t.events_over_limit);
                let phase = pr.name.clone();
                let w = Warning::TraceIncomplete { phase, events_lost, events_over_limit };
                note_once(warnings, w);
            }
        }
        pr.trace = self.trace;
    }
}

/// Start the off-CPU trace of the workers about to be spawned, or say once why not.
fn start_offcpu(warnings: &mut Vec<Warning>) -> Option<OffCpuTracer> {
    match OffCpuTracer::start(&TraceOptions::default()) {
        Ok(t) => Some(t),
        Err(e) => {
            let reason = format!("off-CPU tracing unavailable ({e}); the run goes on without it");
            note_once(warnings, Warning::TraceUnavailable { reason });
            None
        }
    }
}

/// Start tracing `devices`, or say once why not.
fn start_trace(devices: &[String], warnings: &mut Vec<Warning>) -> Option<Tracer> {
    if devices.is_empty() {
        let reason = "tracing unavailable: no block device under this directory (tmpfs, FUSE or a network filesystem)".into();
        note_once(warnings, Warning::TraceUnavailable { reason });
        return None;
    }
    match Tracer::start(devices, TraceOptions::default()) {
        Ok(t) => Some(t),
        Err(e) => {
            let reason = format!("tracing unavailable ({e}); the run goes on without it");
            note_once(warnings, Warning::TraceUnavailable { reason });
            None
        }
    }
}
