//! [`BenchRow`]: one measured kernel (or the vendor library) as a bench session produces it,
//! the results store records it and the reports print it: outcome, statistics, rates, the
//! speedup over the vendor library and what compiling it took.

use serde::{Deserialize, Serialize};

use crate::compile::Resources;
use crate::device::Outcome;
use crate::measure::stats::{Rates, Stats};
use crate::space::KernelConfig;

/// One measured kernel (or the vendor library).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRow {
    pub name: String,
    pub config: Option<KernelConfig>,
    pub outcome: Outcome,
    pub stats: Option<Stats>,
    pub rates: Option<Rates>,
    /// Vendor median / this median (>1 = faster than the vendor library).
    pub speedup_vs_vendor: Option<f64>,
    /// Taken from the results database instead of measured now.
    pub reused: bool,
    pub compile_ms: Option<f64>,
    pub resources: Option<Resources>,
}

impl BenchRow {
    pub fn median_us(&self) -> Option<f64> {
        self.stats.map(|s| s.median_us)
    }

    pub fn is_ok(&self) -> bool {
        matches!(self.outcome, Outcome::Timed { ref verification, .. } if verification.passed)
    }
}
