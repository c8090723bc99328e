//! The bench session's view of the results database: look up a stored outcome for resume,
//! record a new one as soon as it exists. [`DbResults`] writes through to the SQLite store
//! under one run; [`MemoryResults`] keeps them in memory (tests).

use std::collections::HashMap;

use super::row::BenchRow;
use crate::device::Outcome;
use crate::problem::GemmProblem;

/// The key of a stored measurement (device, software, kernel source, problem, config).
pub use crate::store::MeasurementKey as ResultKey;

pub trait ResultStore {
    fn lookup(&mut self, key: &ResultKey) -> Option<Outcome>;
    fn record(
        &mut self,
        key: &ResultKey,
        problem: &GemmProblem,
        row: &BenchRow,
    ) -> Result<(), String>;
}

impl<T: ResultStore + ?Sized> ResultStore for &mut T {
    fn lookup(&mut self, key: &ResultKey) -> Option<Outcome> {
        (**self).lookup(key)
    }
    fn record(&mut self, key: &ResultKey, p: &GemmProblem, row: &BenchRow) -> Result<(), String> {
        (**self).record(key, p, row)
    }
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

/// The results database, with the run the measurements belong to.
pub struct DbResults {
    pub store: crate::store::Store,
    pub run_id: Option<i64>,
}

impl ResultStore for DbResults {
    fn lookup(&mut self, key: &ResultKey) -> Option<Outcome> {
        // An unreadable row only means the config is measured again.
        self.store.lookup(key).ok().flatten().map(|m| m.outcome)
    }

    fn record(&mut self, key: &ResultKey, p: &GemmProblem, row: &BenchRow) -> Result<(), String> {
        let extra = crate::store::MeasurementExtra {
            compile_ms: row.compile_ms,
            registers: row.resources.as_ref().and_then(|r| r.registers),
            spill_bytes: row.resources.as_ref().and_then(|r| r.spill_bytes),
            shared_bytes: None,
        };
        self.store
            .record(self.run_id, key, p, &row.outcome, &extra)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
