//! Progress events of a search. The driver reports what it does through [`Progress`]; the CLI
//! draws bars and tables from them, quiet mode passes `()` which ignores everything, and
//! tests collect them with a closure.

use serde::{Deserialize, Serialize};

use crate::device::Outcome;
use crate::space::KernelConfig;

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Budget,
    TimeBudget,
    MaxRounds,
    /// `patience` rounds without a `min_improvement` gain.
    Converged,
    TargetReached,
    /// The strategy had nothing new to propose.
    Exhausted,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Budget => "evaluation budget used",
            StopReason::TimeBudget => "time budget used",
            StopReason::MaxRounds => "maximum rounds reached",
            StopReason::Converged => "no improvement for `patience` rounds",
            StopReason::TargetReached => "target reached",
            StopReason::Exhausted => "strategy has nothing new to propose",
        }
    }
}

/// Something the driver did.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A round begins: how many configs go to the evaluator after validation and dedup.
    RoundStarted {
        round: usize,
        to_evaluate: usize,
        invalid: usize,
        duplicates: usize,
    },
    /// The strategy explained itself (LLM analysis, current tuning step).
    Note(String),
    /// Something the user should see once (fallback took over, many invalid suggestions).
    Warning(String),
    /// One config's result.
    Evaluated {
        index: usize,
        config: KernelConfig,
        outcome: Outcome,
        median_us: Option<f64>,
    },
    /// A config was reused from results already stored.
    Reused {
        config: KernelConfig,
    },
    /// The best time improved.
    NewBest {
        index: usize,
        config: KernelConfig,
        median_us: f64,
    },
    RoundFinished {
        round: usize,
        best_us: Option<f64>,
    },
    /// The final re-timing of the top configs begins.
    Retiming {
        configs: usize,
        rounds: usize,
    },
    Finished {
        stop: StopReason,
    },
}

/// Receives progress events.
pub trait Progress {
    fn event(&mut self, event: &Event);
}

/// Quiet: ignores every event.
impl Progress for () {
    fn event(&mut self, _event: &Event) {}
}

impl<F: FnMut(&Event)> Progress for F {
    fn event(&mut self, event: &Event) {
        self(event)
    }
}
