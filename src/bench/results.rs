//! The bench session's view of the results database: look up a stored outcome for resume,
//! record a new one as soon as it exists. `store::Store` implements it; tests use
//! [`MemoryResults`].

use std::collections::HashMap;

use super::session::BenchRow;
use crate::device::Outcome;
use crate::problem::GemmProblem;

/// Everything that makes a measurement reusable: the same device and software, the same
/// kernel source, the same problem and config.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResultKey {
    pub device_name: String,
    pub arch: String,
    pub driver_version: String,
    pub compiler_version: String,
    pub source_hash: String,
    pub problem_key: String,
    pub config_name: String,
}

pub trait ResultStore {
    fn lookup(&mut self, key: &ResultKey) -> Option<Outcome>;
    fn record(
        &mut self,
        key: &ResultKey,
        problem: &GemmProblem,
        row: &BenchRow,
    ) -> Result<(), String>;
}

/// An in-memory store (tests, `--no-db`).
#[derive(Debug, Default)]
pub struct MemoryResults {
    pub rows: HashMap<ResultKey, Outcome>,
    pub writes: usize,
}

impl ResultStore for MemoryResults {
    fn lookup(&mut self, key: &ResultKey) -> Option<Outcome> {
        self.rows.get(key).cloned()
    }

    fn record(&mut self, key: &ResultKey, _p: &GemmProblem, row: &BenchRow) -> Result<(), String> {
        self.rows.insert(key.clone(), row.outcome.clone());
        self.writes += 1;
        Ok(())
    }
}
