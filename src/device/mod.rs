//! The `Device` trait and its backends.
//!
//! Everything above this module talks to a GPU only through [`Device`]: set a problem
//! (allocate rotating input sets, fill them with random data, compute the reference output),
//! run a compiled kernel (verify it, then time it), and run the vendor library the same way.
//! Backends: `cuda` (cudarc: driver, NVRTC, cuBLASLt), `hip` (ROCm, loaded at run time), `sim`
//! (an analytic model, for tests and machines without a GPU). [`worker`] wraps any backend in
//! a child process so a crashing or hanging kernel costs one config, not the run.

pub mod args;
pub mod cuda;
pub mod hip;
mod outcome;
pub mod replay;
pub mod sim;
mod sim_flat_batch;
mod sim_gemv;
pub mod worker;

pub use crate::target::DeviceInfo;
pub use outcome::{Outcome, Verification};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::compile::CompiledKernel;
use crate::hw::HwSpec;
use crate::problem::GemmProblem;

/// Errors of the harness itself (not of one config: those are [`Outcome`]s).
#[derive(Debug, Error)]
pub enum DeviceError {
    #[error("{backend} backend is not available: {reason}")]
    NotAvailable {
        backend: &'static str,
        reason: String,
    },
    #[error("device index {index} does not exist ({count} {backend} device(s) found)")]
    NoSuchDevice {
        backend: &'static str,
        index: u32,
        count: u32,
    },
    #[error("no GPU found ({0}); run with `--backend sim` to use the simulated device")]
    NoGpu(String),
    #[error("{0}")]
    Problem(#[from] crate::problem::ProblemError),
    #[error("driver error: {0}")]
    Driver(String),
    #[error("worker process: {0}")]
    Worker(String),
    /// The device could not be opened (reported by the worker as the backend said it).
    #[error("{0}")]
    Open(String),
}

/// Which backend to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    Auto,
    Cuda,
    Hip,
    Sim,
    /// Measurements recorded by `gemmtune sweep` (`--dataset FILE`), served without a GPU.
    Replay,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Auto => "auto",
            BackendKind::Cuda => "cuda",
            BackendKind::Hip => "hip",
            BackendKind::Sim => "sim",
            BackendKind::Replay => "replay",
        }
    }
}

/// How to time: hipblaslt-bench's options plus our own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingOptions {
    /// Timed launches.
    pub iters: u32,
    /// Warm-up launches before timing.
    pub cold_iters: u32,
    /// Size of the rotating input sets in MiB: enough copies of A/B/C are allocated to cover
    /// it, and consecutive launches cycle through them so inputs come from HBM, not L2/LLC.
    pub rotating_mb: u64,
    /// Also overwrite a buffer larger than L2 before every timed launch.
    pub flush_l2: bool,
    /// Seconds after which one config's verification + timing is declared hung.
    pub timeout_s: f64,
    /// Seed for input data.
    pub seed: u64,
}

impl Default for TimingOptions {
    fn default() -> Self {
        TimingOptions {
            iters: 20,
            cold_iters: 3,
            rotating_mb: 512,
            flush_l2: false,
            timeout_s: 30.0,
            seed: 1,
        }
    }
}

impl TimingOptions {
    /// Number of rotating input copies for a problem: enough to exceed `rotating_mb`.
    pub fn rotating_copies(&self, p: &GemmProblem) -> u64 {
        let per = (p.buffer_bytes("A").unwrap_or(0) + p.buffer_bytes("B").unwrap_or(0)).max(1);
        let want = self.rotating_mb * (1 << 20);
        want.div_ceil(per).clamp(1, 64)
    }
}

/// A GPU (real or simulated) that can run GEMM kernels for one problem at a time.
pub trait Device {
    fn info(&self) -> &DeviceInfo;

    /// The spec used for rooflines and constraints (detected from the name or given).
    fn hw_spec(&self) -> &HwSpec;

    /// Allocates buffers for `problem`, fills inputs with seeded random data and computes
    /// the reference output. Must be called before `run_kernel` / `run_vendor`.
    fn set_problem(
        &mut self,
        problem: &GemmProblem,
        timing: &TimingOptions,
    ) -> Result<(), DeviceError>;

    /// Verifies the kernel against the reference, then times it. Failures are outcomes.
    fn run_kernel(&mut self, kernel: &CompiledKernel, timing: &TimingOptions) -> Outcome;

    /// Times the vendor library (cuBLASLt / hipBLASLt) on the same problem and data.
    fn run_vendor(&mut self, timing: &TimingOptions) -> Outcome;

    /// True once a fault has left the device context unusable (e.g. an illegal address on
    /// CUDA is sticky); the worker then exits so that a fresh process takes over.
    fn is_poisoned(&self) -> bool {
        false
    }
}

/// Options that pick and configure a device.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DeviceSelection {
    pub backend: Option<BackendKind>,
    pub index: u32,
    /// Spec to use instead of the one detected from the device name.
    pub hw_spec: Option<HwSpec>,
    /// Sim backend only: configs planted to fail, for testing the harness.
    pub sim_plants: Vec<crate::plant::Plant>,
    /// Replay backend only: the recorded sweep to serve.
    pub dataset: Option<std::path::PathBuf>,
}

/// Opens a device in this process (no worker isolation).
pub fn open_in_process(sel: &DeviceSelection) -> Result<Box<dyn Device>, DeviceError> {
    match sel.backend.unwrap_or(BackendKind::Auto) {
        BackendKind::Sim => Ok(Box::new(sim::SimDevice::new(sel)?)),
        BackendKind::Replay => {
            let path = sel
                .dataset
                .as_ref()
                .ok_or_else(|| DeviceError::NotAvailable {
                    backend: "replay",
                    reason: "no recorded sweep given (--dataset FILE)".into(),
                })?;
            let data = replay::Dataset::load(path).map_err(|e| DeviceError::NotAvailable {
                backend: "replay",
                reason: e.to_string(),
            })?;
            Ok(Box::new(replay::ReplayDevice::new(data)))
        }
        BackendKind::Cuda => Ok(Box::new(cuda::CudaDevice::open(sel)?)),
        BackendKind::Hip => Ok(Box::new(hip::HipDevice::open(sel)?)),
        BackendKind::Auto => Ok(Box::new(resolve_auto(sel)?)),
    }
}

/// `--backend auto`: the first real GPU found, else a clear error naming `--backend sim`.
fn resolve_auto(sel: &DeviceSelection) -> Result<AutoDevice, DeviceError> {
    let mut reasons = Vec::new();
    match cuda::CudaDevice::open(sel) {
        Ok(d) => return Ok(AutoDevice::Cuda(Box::new(d))),
        Err(e) => reasons.push(format!("CUDA: {e}")),
    }
    match hip::HipDevice::open(sel) {
        Ok(d) => return Ok(AutoDevice::Hip(Box::new(d))),
        Err(e) => reasons.push(format!("HIP: {e}")),
    }
    Err(DeviceError::NoGpu(reasons.join("; ")))
}

/// Which real backend `auto` found.
pub enum AutoDevice {
    Cuda(Box<cuda::CudaDevice>),
    Hip(Box<hip::HipDevice>),
}

impl AutoDevice {
    fn inner(&self) -> &dyn Device {
        match self {
            AutoDevice::Cuda(d) => d.as_ref(),
            AutoDevice::Hip(d) => d.as_ref(),
        }
    }
    fn inner_mut(&mut self) -> &mut dyn Device {
        match self {
            AutoDevice::Cuda(d) => d.as_mut(),
            AutoDevice::Hip(d) => d.as_mut(),
        }
    }
}

impl Device for AutoDevice {
    fn info(&self) -> &DeviceInfo {
        self.inner().info()
    }
    fn hw_spec(&self) -> &HwSpec {
        self.inner().hw_spec()
    }
    fn set_problem(&mut self, p: &GemmProblem, t: &TimingOptions) -> Result<(), DeviceError> {
        self.inner_mut().set_problem(p, t)
    }
    fn run_kernel(&mut self, k: &CompiledKernel, t: &TimingOptions) -> Outcome {
        self.inner_mut().run_kernel(k, t)
    }
    fn run_vendor(&mut self, t: &TimingOptions) -> Outcome {
        self.inner_mut().run_vendor(t)
    }
    fn is_poisoned(&self) -> bool {
        self.inner().is_poisoned()
    }
}
