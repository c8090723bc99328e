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

/// The results database, with the run the measurements belong to. Writes that fail are
/// counted, so the command can fail at its end instead of reporting unsaved results as saved.
pub struct DbResults {
    pub store: crate::store::Store,
    pub run_id: Option<i64>,
    unstored: usize,
    first_error: Option<String>,
}

impl DbResults {
    pub fn new(store: crate::store::Store, run_id: Option<i64>) -> Self {
        DbResults {
            store,
            run_id,
            unstored: 0,
            first_error: None,
        }
    }

    /// An error when any measurement could not be written.
    pub fn check_stored(&self) -> Result<(), crate::store::StoreError> {
        match &self.first_error {
            None => Ok(()),
            Some(first) => Err(crate::store::StoreError::Unstored {
                path: self.store.path().to_path_buf(),
                count: self.unstored,
                first: first.clone(),
            }),
        }
    }
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
        let written = self
            .store
            .record(self.run_id, key, p, &row.outcome, &extra)
            .map(|_| ())
            .map_err(|e| e.to_string());
        if let Err(e) = &written {
            self.unstored += 1;
            self.first_error.get_or_insert_with(|| e.clone());
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn a_refused_write_fails_the_run_instead_of_passing_silently() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.sqlite");
        let mut db = DbResults::new(Store::open(&path).unwrap(), None);
        let problem = GemmProblem::new(64, 64, 64);
        let row = BenchRow {
            name: "vendor:cublaslt".into(),
            config: None,
            outcome: Outcome::modelled(vec![1.0]),
            stats: None,
            rates: None,
            speedup_vs_vendor: None,
            reused: false,
            compile_ms: None,
            resources: None,
        };
        let key = |config: &str| ResultKey {
            device_name: "d".into(),
            arch: "a".into(),
            driver_version: "1".into(),
            compiler_version: "c".into(),
            source_hash: "h".into(),
            problem_key: problem.key(),
            config_name: config.into(),
        };
        db.record(&key("a"), &problem, &row).unwrap();
        db.check_stored().unwrap();
        // Another process damages the database while the run goes on.
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("DROP TABLE measurements")
            .unwrap();
        assert!(db.record(&key("b"), &problem, &row).is_err());
        assert!(db.record(&key("c"), &problem, &row).is_err());
        let err = db.check_stored().unwrap_err().to_string();
        assert!(
            err.starts_with("2 measurement(s) could not be stored"),
            "{err}"
        );
        assert!(err.contains(&path.display().to_string()), "{err}");
    }
}
