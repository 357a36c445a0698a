//! One reason a side of a comparison won or lost, in words, with its weight. The rules that
//! find them are [`crate::analysis::explain`].

use serde::{Deserialize, Serialize};

/// One reason a side won or lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// Rule name.
    pub rule: String,
    /// Strength of the difference (larger first).
    pub weight: f64,
    /// The sentence.
    pub text: String,
}

/// Rule names of the context lines [`context`] adds: not reasons, the figures to read them by.
pub const CONTEXT: &[&str] = &["time_split", "block_trace"];

/// Rule name of a line that names a role whose throughput changed between the configurations
/// ([`crate::analysis::explain::role_changes`]): not a reason for the verdict, what it hides.
pub const ROLE_CHANGE: &str = "role_throughput";

impl Explanation {
    /// A context line (where the time went, the block trace), not a reason.
    pub fn is_context(&self) -> bool {
        CONTEXT.contains(&self.rule.as_str())
    }

    /// A reason for the verdict: neither context nor a role's change.
    pub fn is_reason(&self) -> bool {
        !self.is_context() && self.rule != ROLE_CHANGE
    }
}

/// The sentence used when no rule fires.
pub const NOTHING: &str = "nothing fsbench observed (device requests, CPU, sync time, extents, memory) differs enough to explain the gap";
