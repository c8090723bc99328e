//! The row types the store takes and gives back.
//!
//! A [`MeasurementKey`] says *where and what* was measured (device, toolchain, kernel
//! source, problem, config): two measurements with equal keys are interchangeable, which is
//! what lets a re-run reuse stored results. [`MeasurementExtra`] carries what the compiler
//! reported; [`StoredMeasurement`] is a row read back, with its outcome whole.

use serde::{Deserialize, Serialize};

use crate::compile::CompiledKernel;
use crate::device::{DeviceInfo, Outcome};
use crate::measure::stats::Stats;
use crate::problem::GemmProblem;

/// Config names of vendor-library baselines start with this, e.g. `vendor:cublaslt`.
pub const VENDOR_PREFIX: &str = "vendor:";

/// Everything that makes a stored measurement reusable for a new request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MeasurementKey {
    pub device_name: String,
    pub arch: String,
    pub driver_version: String,
    pub compiler_version: String,
    /// Hash of the kernel template and headers; a template change invalidates results.
    pub source_hash: String,
    pub problem_key: String,
    /// Canonical kernel name, or `vendor:<library>` for the baseline.
    pub config_name: String,
}

impl MeasurementKey {
    pub fn new(
        device: &DeviceInfo,
        source_hash: &str,
        problem: &GemmProblem,
        config_name: &str,
    ) -> Self {
        MeasurementKey {
            device_name: device.name.clone(),
            arch: device.arch.clone(),
            driver_version: device.driver_version.clone(),
            compiler_version: device.compiler_version.clone(),
            source_hash: source_hash.to_string(),
            problem_key: problem.key(),
            config_name: config_name.to_string(),
        }
    }

    /// The config name of a vendor baseline, e.g. `vendor_config("cublaslt")`.
    pub fn vendor_config(library: &str) -> String {
        format!("{VENDOR_PREFIX}{library}")
    }

    pub fn is_vendor(&self) -> bool {
        self.config_name.starts_with(VENDOR_PREFIX)
    }
}

/// What the compiler reported about a kernel; all optional (vendor rows have none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MeasurementExtra {
    pub compile_ms: Option<f64>,
    pub registers: Option<u32>,
    pub spill_bytes: Option<u32>,
    pub shared_bytes: Option<u32>,
}

impl MeasurementExtra {
    pub fn of_kernel(kernel: &CompiledKernel) -> Self {
        MeasurementExtra {
            compile_ms: Some(kernel.compile_ms),
            registers: kernel.resources.registers,
            spill_bytes: kernel.resources.spill_bytes,
            // Shared memory per workgroup, static plus dynamic: what limits occupancy.
            shared_bytes: Some(
                kernel
                    .launch
                    .shared_bytes
                    .saturating_add(kernel.resources.static_shared_bytes.unwrap_or(0)),
            ),
        }
    }
}

/// One measurement read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMeasurement {
    pub id: i64,
    pub run_id: Option<i64>,
    pub key: MeasurementKey,
    pub problem: GemmProblem,
    pub outcome: Outcome,
    /// Statistics of the samples, for timed outcomes.
    pub stats: Option<Stats>,
    pub extra: MeasurementExtra,
    pub recorded_at_ms: i64,
}

impl StoredMeasurement {
    pub fn status(&self) -> &'static str {
        self.outcome.status()
    }
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Finished,
    Failed,
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// Reads the stored text; anything unrecognised (a newer gemmtune's status) is `None`.
    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "failed" => RunStatus::Failed,
            "interrupted" => RunStatus::Interrupted,
            _ => return None,
        })
    }
}

/// What a run is, when it starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    pub command_line: String,
    pub strategy: Option<String>,
    /// Human description of the device (name, arch, driver).
    pub device: Option<String>,
}

/// One run read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: i64,
    pub started_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    pub command_line: String,
    /// `None` when the stored status is not one this build knows.
    pub status: Option<RunStatus>,
    pub strategy: Option<String>,
    pub device: Option<String>,
}
