//! The solutions file (`solutions.json`): the kept kernels of a workload, each with the exact
//! problem it was tuned for and the numbers that justified keeping it.
//!
//! `gemmtune bench --solutions FILE` benchmarks the solutions of the problem it is given;
//! `gemmtune export` turns them into Tensile configs and advice.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::record::{GemmRecord, Verdict};
use super::WorkloadError;
use crate::problem::GemmProblem;
use crate::space::KernelConfig;

pub const FORMAT: &str = "gemmtune-solutions";
pub const VERSION: u32 = 1;

/// One kept kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Solution {
    /// The GEMM's id in the workload.
    pub id: usize,
    pub label: String,
    pub problem_key: String,
    pub problem: GemmProblem,
    /// Canonical kernel name.
    pub config: String,
    pub calls: u64,
    pub kernel_us: f64,
    pub vendor_us: f64,
    pub speedup: f64,
    pub error: Option<f64>,
    pub tolerance: Option<f64>,
    pub device_name: String,
    pub arch: String,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolutionFile {
    pub format: String,
    pub version: u32,
    pub solutions: Vec<Solution>,
}

impl SolutionFile {
    /// The kept records as solutions.
    pub fn from_records(records: &[GemmRecord], min_uplift: f64) -> Self {
        let solutions = records
            .iter()
            .filter(|r| r.verdict(min_uplift) == Verdict::Kept)
            .filter_map(|r| {
                Some(Solution {
                    id: r.id,
                    label: r.problem.label(),
                    problem_key: r.problem.key(),
                    problem: r.problem.clone(),
                    config: r.config.clone()?,
                    calls: r.calls,
                    kernel_us: r.best_us?,
                    vendor_us: r.vendor_us?,
                    speedup: r.speedup()?,
                    error: r.error,
                    tolerance: r.tolerance,
                    device_name: r.device_name.clone().unwrap_or_default(),
                    arch: r.arch.clone().unwrap_or_default(),
                })
            })
            .collect();
        SolutionFile {
            format: FORMAT.into(),
            version: VERSION,
            solutions,
        }
    }

    pub fn save(&self, path: &Path) -> Result<(), WorkloadError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| WorkloadError::file(path, e))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| WorkloadError::io(format!("cannot write {}", path.display()), e))
    }

    /// Reads and checks a solutions file: its format, and that every kernel name parses.
    pub fn load(path: &Path) -> Result<Self, WorkloadError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            WorkloadError::io(format!("cannot read solutions file {}", path.display()), e)
        })?;
        let file: SolutionFile = serde_json::from_str(&text)
            .map_err(|e| WorkloadError::file(path, format!("not a solutions file: {e}")))?;
        if file.format != FORMAT {
            return Err(WorkloadError::file(
                path,
                format!("format `{}` is not `{FORMAT}`", file.format),
            ));
        }
        if file.version > VERSION {
            return Err(WorkloadError::file(
                path,
                format!(
                    "version {} is newer than this gemmtune knows ({VERSION})",
                    file.version
                ),
            ));
        }
        for s in &file.solutions {
            KernelConfig::parse(&s.config)
                .map_err(|e| WorkloadError::file(path, format!("solution #{}: {e}", s.id)))?;
        }
        Ok(file)
    }

    /// The kernels tuned for exactly this problem.
    pub fn for_problem(&self, problem: &GemmProblem) -> Vec<&Solution> {
        let key = problem.key();
        self.solutions
            .iter()
            .filter(|s| s.problem_key == key)
            .collect()
    }
}
