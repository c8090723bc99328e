//! Reads: the lookup of one measurement key that lets a run resume, and for reports and
//! history every measurement of a problem on a device, the best timed configs, the vendor
//! baseline, and the list of runs.
//!
//! Rows are read as raw text first ([`RawMeasurement`]) and decoded outside SQLite, so a
//! row that cannot be decoded is reported with its id instead of aborting the query.

use std::path::Path;

use rusqlite::{params, OptionalExtension, Row};

use super::handle::Store;
use super::outcome_json;
use super::records::{
    MeasurementExtra, MeasurementKey, RunRecord, RunStatus, StoredMeasurement, VENDOR_PREFIX,
};
use super::StoreError;
use crate::measure::stats::Stats;

/// Columns read by [`read_measurement`], with the joins they need.
pub(super) const MEASUREMENT_SELECT: &str = "
    SELECT m.id, m.run_id, m.device_name, m.arch, m.driver_version, m.compiler_version,
           m.source_hash, p.key, c.name, p.json, m.outcome_json, m.compile_ms, m.registers,
           m.spill_bytes, m.shared_bytes, m.recorded_at
    FROM measurements m
    JOIN problems p ON p.id = m.problem_id
    JOIN configs c ON c.id = m.config_id";

/// One measurement row before its JSON is decoded.
pub(super) struct RawMeasurement {
    id: i64,
    run_id: Option<i64>,
    key: MeasurementKey,
    problem_json: String,
    outcome_json: String,
    extra: MeasurementExtra,
    recorded_at_ms: i64,
}

pub(super) fn read_measurement(r: &Row<'_>) -> rusqlite::Result<RawMeasurement> {
    Ok(RawMeasurement {
        id: r.get(0)?,
        run_id: r.get(1)?,
        key: MeasurementKey {
            device_name: r.get(2)?,
            arch: r.get(3)?,
            driver_version: r.get(4)?,
            compiler_version: r.get(5)?,
            source_hash: r.get(6)?,
            problem_key: r.get(7)?,
            config_name: r.get(8)?,
        },
        problem_json: r.get(9)?,
        outcome_json: r.get(10)?,
        extra: MeasurementExtra {
            compile_ms: r.get(11)?,
            registers: r.get(12)?,
            spill_bytes: r.get(13)?,
            shared_bytes: r.get(14)?,
        },
        recorded_at_ms: r.get(15)?,
    })
}

impl RawMeasurement {
    pub(super) fn decode(self, path: &Path) -> Result<StoredMeasurement, StoreError> {
        let err = |what: &'static str, e: serde_json::Error| StoreError::Decode {
            path: path.to_path_buf(),
            what,
            id: self.id,
            message: e.to_string(),
        };
        let problem = serde_json::from_str(&self.problem_json).map_err(|e| err("problem", e))?;
        let outcome = outcome_json::decode(&self.outcome_json).map_err(|e| err("outcome", e))?;
        let stats = outcome.samples().and_then(Stats::of);
        Ok(StoredMeasurement {
            id: self.id,
            run_id: self.run_id,
            key: self.key,
            problem,
            outcome,
            stats,
            extra: self.extra,
            recorded_at_ms: self.recorded_at_ms,
        })
    }
}

impl Store {
    /// The latest measurement with exactly this key, for resuming a run.
    pub fn lookup(&self, key: &MeasurementKey) -> Result<Option<StoredMeasurement>, StoreError> {
        let raw = self
            .conn
            .prepare_cached(&format!(
                "{MEASUREMENT_SELECT}
                 WHERE p.key = ?1 AND c.name = ?2 AND m.device_name = ?3 AND m.arch = ?4
                   AND m.driver_version = ?5 AND m.compiler_version = ?6 AND m.source_hash = ?7
                 ORDER BY m.id DESC LIMIT 1"
            ))
            .and_then(|mut s| {
                s.query_row(
                    params![
                        key.problem_key,
                        key.config_name,
                        key.device_name,
                        key.arch,
                        key.driver_version,
                        key.compiler_version,
                        key.source_hash
                    ],
                    read_measurement,
                )
                .optional()
            })
            .map_err(|e| self.sql(e))?;
        raw.map(|r| r.decode(&self.path)).transpose()
    }

    fn measurements(
        &self,
        sql: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<StoredMeasurement>, StoreError> {
        let raws = self
            .conn
            .prepare_cached(sql)
            .and_then(|mut s| {
                s.query_map(params, read_measurement)?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| self.sql(e))?;
        raws.into_iter().map(|r| r.decode(&self.path)).collect()
    }

    /// Every measurement of a problem on a device (all configs, all outcomes, the vendor
    /// baseline included), oldest first.
    pub fn measurements_for_problem(
        &self,
        problem_key: &str,
        device_name: &str,
    ) -> Result<Vec<StoredMeasurement>, StoreError> {
        self.measurements(
            &format!("{MEASUREMENT_SELECT} WHERE p.key = ?1 AND m.device_name = ?2 ORDER BY m.id"),
            params![problem_key, device_name],
        )
    }

    /// The `n` fastest kernel configs (by median time) of a problem on a device, counting
    /// each config once with its latest timed measurement. Vendor baselines are excluded.
    pub fn best(
        &self,
        problem_key: &str,
        device_name: &str,
        n: usize,
    ) -> Result<Vec<StoredMeasurement>, StoreError> {
        self.measurements(
            &format!(
                "{MEASUREMENT_SELECT}
                 WHERE p.key = ?1 AND m.device_name = ?2 AND m.status = 'ok'
                   AND substr(c.name, 1, {len}) <> ?3
                   AND m.id = (SELECT max(l.id) FROM measurements l
                               WHERE l.problem_id = m.problem_id AND l.config_id = m.config_id
                                 AND l.device_name = m.device_name AND l.status = 'ok')
                 ORDER BY m.median_us, m.id
                 LIMIT ?4",
                len = VENDOR_PREFIX.len()
            ),
            params![
                problem_key,
                device_name,
                VENDOR_PREFIX,
                i64::try_from(n).unwrap_or(i64::MAX)
            ],
        )
    }

    /// The latest vendor-library measurement of a problem on a device, any outcome.
    pub fn latest_vendor(
        &self,
        problem_key: &str,
        device_name: &str,
    ) -> Result<Option<StoredMeasurement>, StoreError> {
        let mut rows = self.measurements(
            &format!(
                "{MEASUREMENT_SELECT}
                 WHERE p.key = ?1 AND m.device_name = ?2 AND substr(c.name, 1, {len}) = ?3
                 ORDER BY m.id DESC LIMIT 1",
                len = VENDOR_PREFIX.len()
            ),
            params![problem_key, device_name, VENDOR_PREFIX],
        )?;
        Ok(rows.pop())
    }

    /// All runs, oldest first.
    pub fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT id, started_at, finished_at, command_line, status, strategy, device
                 FROM runs ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok(RunRecord {
                        id: r.get(0)?,
                        started_at_ms: r.get(1)?,
                        finished_at_ms: r.get(2)?,
                        command_line: r.get(3)?,
                        status: RunStatus::parse(&r.get::<_, String>(4)?),
                        strategy: r.get(5)?,
                        device: r.get(6)?,
                    })
                })?
                .collect()
            })
            .map_err(|e| self.sql(e))
    }

    /// Number of measurements stored, all problems and devices.
    pub fn measurement_count(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT count(*) FROM measurements", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.sql(e))
    }
}
