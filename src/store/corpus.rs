//! Every kernel measurement in the database, across problems: what the model-based search
//! learns from.
//!
//! One [`CorpusRow`] per (problem, config, device), the latest measurement of each: its
//! problem whole, the device, the canonical config name, and its median time (`None` when
//! it failed: a compile error, a wrong result, a timeout are lessons too). Vendor baselines
//! are left out. A row whose problem cannot be decoded is skipped, not an error: one damaged
//! row must not cost the search everything else the database knows.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::handle::Store;
use super::records::VENDOR_PREFIX;
use super::StoreError;
use crate::problem::GemmProblem;

/// The latest measurement of one config of one problem on one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusRow {
    pub problem: GemmProblem,
    pub device_name: String,
    pub arch: String,
    pub config_name: String,
    /// The median time; `None` when the kernel did not produce a verified time.
    pub median_us: Option<f64>,
}

impl Store {
    /// Every kernel's latest measurement, all problems and devices.
    pub fn corpus(&self) -> Result<Vec<CorpusRow>, StoreError> {
        let raw: Vec<(String, String, String, String, String, Option<f64>)> = self
            .conn
            .prepare_cached(&format!(
                "SELECT p.json, m.device_name, m.arch, c.name, m.status, m.median_us
                 FROM measurements m
                 JOIN problems p ON p.id = m.problem_id
                 JOIN configs c ON c.id = m.config_id
                 WHERE substr(c.name, 1, {len}) <> ?1
                   AND m.id = (SELECT max(l.id) FROM measurements l
                               WHERE l.problem_id = m.problem_id AND l.config_id = m.config_id
                                 AND l.device_name = m.device_name)
                 ORDER BY m.id",
                len = VENDOR_PREFIX.len()
            ))
            .and_then(|mut s| {
                s.query_map([VENDOR_PREFIX], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                })?
                .collect()
            })
            .map_err(|e| self.sql(e))?;
        let mut problems: HashMap<String, Option<GemmProblem>> = HashMap::new();
        Ok(raw
            .into_iter()
            .filter_map(|(json, device_name, arch, config_name, status, median)| {
                let problem = problems
                    .entry(json)
                    .or_insert_with_key(|j| serde_json::from_str(j).ok())
                    .clone()?;
                Some(CorpusRow {
                    problem,
                    device_name,
                    arch,
                    config_name,
                    median_us: median.filter(|_| status == "ok"),
                })
            })
            .collect())
    }
}
