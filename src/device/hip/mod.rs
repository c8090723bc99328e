//! `hip`: the AMD GPU backend (ROCm, every library loaded at run time).
//!
//! Layers, bottom up: the ROCm bindings in [`crate::rocm`] (raw C declarations resolved
//! with `libloading`, status codes to `Result`, hiprtc), [`safe`] (RAII buffers, modules,
//! events) and [`blaslt`] (the hipBLASLt baseline). [`HipDevice`] implements
//! [`Device`] on top of them:
//!
//! - `set_problem` allocates enough rotating copies of A/B/C to exceed
//!   `TimingOptions::rotating_mb` (so timed launches read HBM, not L2 or the Infinity Cache),
//!   fills the first copy with seeded random data from the host and clones it into the others,
//!   and computes the f64 reference output ([`host_data`]).
//! - `run_kernel` loads the code object, poisons D with NaN, launches once and verifies
//!   (`measure::verify`), then runs `cold_iters` warm-ups and `iters` timed launches between
//!   events, cycling through the input copies and optionally overwriting a flush buffer larger
//!   than the last-level cache (256 MB Infinity Cache on MI300X) before each timed launch.
//! - `run_vendor` does the same with hipBLASLt's heuristic choice.
//!
//! A memory fault or a hung kernel poisons the process's context ([`HipDevice::is_poisoned`]);
//! the worker then hands over to a fresh process.

pub mod blaslt;
pub mod host_data;
pub mod safe;

use std::time::Duration;

use super::args::GemmArgs;
use super::{
    Device, DeviceError, DeviceInfo, DeviceSelection, Outcome, TimingOptions, Verification,
};
use crate::compile::{CodeFormat, CompiledKernel};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;
use crate::rocm::result::{self, HipError};
use crate::rocm::sys;
use blaslt::{BlasLt, MatmulPlan};
use safe::{DeviceBuffer, Event, Gpu};

const BACKEND: &str = "hip";

fn not_available(reason: impl Into<String>) -> DeviceError {
    DeviceError::NotAvailable {
        backend: BACKEND,
        reason: reason.into(),
    }
}

fn driver(e: HipError) -> DeviceError {
    DeviceError::Driver(e.to_string())
}

/// One set of inputs; launches cycle through several so that inputs come from HBM.
struct InputSet {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: Option<DeviceBuffer>,
}

/// Everything that belongs to the current problem.
struct ProblemState {
    problem: GemmProblem,
    inputs: Vec<InputSet>,
    d: DeviceBuffer,
    /// Packed f64 reference output (M x N x batch).
    reference: Vec<f64>,
    /// Split-K workspace, grown on demand.
    workspace: Option<DeviceBuffer>,
    /// Stream-K arrival flags, grown on demand: zeroed when allocated, left zero by every
    /// complete launch.
    flags: Option<DeviceBuffer>,
    /// Overwritten before each timed launch when `flush_l2` is set.
    flush: Option<DeviceBuffer>,
    /// hipBLASLt plan, built on the first `run_vendor`; `Err` keeps the reason it failed.
    vendor: Option<Result<MatmulPlan, String>>,
}

/// An AMD GPU driven through the HIP runtime.
pub struct HipDevice {
    // Field order is drop order: the problem's buffers and plan go before the library
    // handle and the device.
    state: Option<ProblemState>,
    blaslt: Option<Result<BlasLt, String>>,
    gpu: Gpu,
    info: DeviceInfo,
    hw: HwSpec,
    poisoned: bool,
}

impl HipDevice {
    /// Opens device `sel.index`. Without ROCm or without a GPU this is
    /// `DeviceError::NotAvailable` with the reason; a bad index is `NoSuchDevice`.
    pub fn open(sel: &DeviceSelection) -> Result<Self, DeviceError> {
        let api = safe::runtime().map_err(|e| not_available(e.to_string()))?;
        let count = match safe::device_count(&api) {
            Ok(0) => return Err(not_available("the HIP runtime found no GPU")),
            Ok(n) => n,
            Err(e) if e.code() == Some(sys::HIP_ERROR_NO_DEVICE) => {
                return Err(not_available(format!("no GPU ({e})")))
            }
            Err(e) => return Err(not_available(e.to_string())),
        };
        if sel.index >= count {
            return Err(DeviceError::NoSuchDevice {
                backend: BACKEND,
                index: sel.index,
                count,
            });
        }
        let gpu = Gpu::open(api, sel.index).map_err(driver)?;
        let arch = gpu.arch().map_err(driver)?;
        let mut name = gpu.name().map_err(driver)?;
        if name.is_empty() {
            name = arch.clone();
        }
        let hw = match &sel.hw_spec {
            Some(h) => h.clone(),
            None => HwSpec::for_device_name(&name)
                .or_else(|| HwSpec::for_device_name(&arch))
                .ok_or_else(|| {
                    DeviceError::Driver(format!(
                        "no built-in hw spec matches `{name}` ({arch}); pass --hw-spec FILE"
                    ))
                })?,
        };
        let (driver_version, runtime_version) = gpu.versions().map_err(driver)?;
        let compiler_version = crate::compile::amd::HiprtcCompiler::load()
            .map(|c| crate::compile::Compiler::id(&c))
            .unwrap_or_else(|_| format!("hip-runtime-{runtime_version}"));
        let info = DeviceInfo {
            backend: BACKEND.to_string(),
            index: sel.index,
            name,
            vendor: Vendor::Amd,
            arch,
            driver_version,
            compiler_version,
            memory_bytes: gpu.total_memory().map_err(driver)?,
            compute_units: gpu
                .attribute(sys::HIP_ATTR_MULTIPROCESSOR_COUNT)
                .map_err(driver)? as u32,
            l2_bytes: gpu.attribute(sys::HIP_ATTR_L2_CACHE_SIZE).map_err(driver)? as u64,
        };
        Ok(HipDevice {
            state: None,
            blaslt: None,
            gpu,
            info,
            hw,
            poisoned: false,
        })
    }

    /// Bytes the cache flush buffer must cover: twice the last-level cache (the Infinity
    /// Cache where there is one, else L2), so that nothing of the previous launch survives.
    fn flush_bytes(&self) -> u64 {
        let llc = self
            .hw
            .llc_bytes
            .unwrap_or(0)
            .max(self.info.l2_bytes)
            .max(self.hw.l2_bytes);
        2 * llc
    }

    /// Records a failure; sticky ones poison the device.
    fn note(&mut self, e: &HipError) {
        if e.is_sticky() {
            self.poisoned = true;
        }
    }

    fn outcome_of_error(&mut self, e: HipError) -> Outcome {
        self.note(&e);
        match e {
            HipError::Timeout { after_s } => Outcome::Timeout { after_s },
            other => Outcome::LaunchFailed {
                message: other.to_string(),
            },
        }
    }

    /// Poisons D, runs `launch` once on input set 0, and compares D with the reference.
    fn verify(
        &self,
        timing: &TimingOptions,
        launch: &mut dyn FnMut(usize) -> Result<(), HipError>,
    ) -> Result<Verification, HipError> {
        let st = self.state.as_ref().ok_or_else(no_problem)?;
        let p = &st.problem;
        let nan = host_data::nan_pattern(p.d_type).map_err(|e| HipError::Invalid(e.to_string()))?;
        if p.d_type.bytes() == 4 {
            st.d.fill_u32(nan)?;
        } else {
            st.d.fill_u16(nan as u16)?;
        }
        let done = self.gpu.event()?;
        launch(0)?;
        done.record()?;
        done.wait(Duration::from_secs_f64(timing.timeout_s.max(0.001)))?;
        let mut out = vec![0u8; st.d.bytes() as usize];
        st.d.copy_to_host(&mut out)?;
        let got = host_data::decode_output(p, &out);
        let mut v = crate::measure::verify::compare(&got, &st.reference, p);
        v.method = "cpu-reference".to_string();
        Ok(v)
    }

    /// Warm-ups, then `iters` launches each between two events; microseconds per launch.
    fn time(
        &self,
        timing: &TimingOptions,
        launch: &mut dyn FnMut(usize) -> Result<(), HipError>,
    ) -> Result<Vec<f64>, HipError> {
        let st = self.state.as_ref().ok_or_else(no_problem)?;
        let copies = st.inputs.len().max(1);
        let timeout = Duration::from_secs_f64(timing.timeout_s.max(0.001));
        let (start, end) = (self.gpu.event()?, self.gpu.event()?);
        for i in 0..timing.cold_iters as usize {
            launch(i % copies)?;
        }
        end.record()?;
        end.wait(timeout)?;
        let mut samples = Vec::with_capacity(timing.iters as usize);
        for i in 0..timing.iters as usize {
            if let Some(f) = &st.flush {
                // Outside the events: the flush itself is not timed.
                f.fill_bytes(i as u8)?;
            }
            start.record()?;
            launch((timing.cold_iters as usize + i) % copies)?;
            end.record()?;
            end.wait(timeout)?;
            samples.push(Event::elapsed_ms(&start, &end)? as f64 * 1e3);
        }
        Ok(samples)
    }

    /// Verification then timing, with failures turned into outcomes.
    fn measure(
        &mut self,
        timing: &TimingOptions,
        launch: &mut dyn FnMut(usize) -> Result<(), HipError>,
    ) -> Outcome {
        let verification = match self.verify(timing, launch) {
            Ok(v) => v,
            Err(e) => return self.outcome_of_error(e),
        };
        if !verification.passed {
            return Outcome::WrongResult { verification };
        }
        match self.time(timing, launch) {
            Ok(samples_us) => Outcome::Timed {
                samples_us,
                verification,
            },
            Err(e) => self.outcome_of_error(e),
        }
    }

    fn ensure_blaslt(&mut self) -> Result<(), String> {
        if self.blaslt.is_none() {
            self.blaslt = Some(BlasLt::load().map_err(|e| e.to_string()));
        }
        match &self.blaslt {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(e.clone()),
            None => Err("hipBLASLt was not loaded".into()),
        }
    }
}

/// Makes `slot` hold a buffer of at least `bytes` (kept when big enough; zeroed when new and
/// `zeroed` is asked for). Nothing to do for 0 bytes.
fn grow(
    gpu: &Gpu,
    slot: &mut Option<DeviceBuffer>,
    bytes: u64,
    zeroed: bool,
) -> Result<(), HipError> {
    if bytes == 0 || slot.as_ref().is_some_and(|b| b.bytes() >= bytes) {
        return Ok(());
    }
    *slot = None;
    let b = gpu.alloc(bytes)?;
    if zeroed {
        b.fill_bytes(0)?;
    }
    *slot = Some(b);
    Ok(())
}

fn no_problem() -> HipError {
    HipError::Invalid("set_problem must be called before running kernels".into())
}

impl Device for HipDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn hw_spec(&self) -> &HwSpec {
        &self.hw
    }

    fn set_problem(
        &mut self,
        problem: &GemmProblem,
        timing: &TimingOptions,
    ) -> Result<(), DeviceError> {
        problem.validate()?;
        let copies = timing.rotating_copies(problem);
        problem.check_fits(self.info.memory_bytes, copies)?;
        // Release the previous problem's memory before allocating the next one.
        self.state = None;
        let p = problem.clone();
        let (a_bytes, b_bytes) = (p.buffer_bytes("A")?, p.buffer_bytes("B")?);
        let (c_bytes, d_bytes) = (p.buffer_bytes("C")?, p.buffer_bytes("D")?);
        let a = host_data::random_operand(p.a_type, a_bytes, timing.seed, 0)?;
        let b = host_data::random_operand(p.b_type, b_bytes, timing.seed, 1)?;
        let c = if p.beta != 0.0 {
            Some(host_data::random_operand(
                p.c_type,
                c_bytes,
                timing.seed,
                2,
            )?)
        } else {
            None
        };
        host_data::nan_pattern(p.d_type)?;
        let reference = host_data::reference(
            &p,
            &a.values,
            &b.values,
            c.as_ref().map_or(&[][..], |c| &c.values),
        );
        let gpu = &self.gpu;
        let build = || -> Result<ProblemState, HipError> {
            let mut inputs: Vec<InputSet> = Vec::with_capacity(copies as usize);
            for i in 0..copies {
                let set = InputSet {
                    a: gpu.alloc(a_bytes)?,
                    b: gpu.alloc(b_bytes)?,
                    c: match &c {
                        Some(_) => Some(gpu.alloc(c_bytes)?),
                        None => None,
                    },
                };
                if i == 0 {
                    set.a.copy_from_host(&a.bytes)?;
                    set.b.copy_from_host(&b.bytes)?;
                    if let (Some(buf), Some(c)) = (&set.c, &c) {
                        buf.copy_from_host(&c.bytes)?;
                    }
                } else {
                    // Same data at a different address: all that matters for cold caches.
                    let first = &inputs[0];
                    set.a.copy_from_device(&first.a, a_bytes)?;
                    set.b.copy_from_device(&first.b, b_bytes)?;
                    if let (Some(dst), Some(src)) = (&set.c, &first.c) {
                        dst.copy_from_device(src, c_bytes)?;
                    }
                }
                inputs.push(set);
            }
            let flush = if timing.flush_l2 {
                Some(gpu.alloc(self.flush_bytes())?)
            } else {
                None
            };
            let d = gpu.alloc(d_bytes)?;
            gpu.synchronize()?;
            Ok(ProblemState {
                problem: p.clone(),
                inputs,
                d,
                reference,
                workspace: None,
                flags: None,
                flush,
                vendor: None,
            })
        };
        match build() {
            Ok(st) => {
                self.state = Some(st);
                Ok(())
            }
            Err(e) => {
                self.note(&e);
                Err(driver(e))
            }
        }
    }

    fn run_kernel(&mut self, kernel: &CompiledKernel, timing: &TimingOptions) -> Outcome {
        if kernel.code.format != CodeFormat::Hsaco {
            return Outcome::LaunchFailed {
                message: format!("the HIP backend cannot load {:?} code", kernel.code.format),
            };
        }
        let module = match self.gpu.load_module(&kernel.code.bytes) {
            Ok(m) => m,
            Err(e) => return self.outcome_of_error(e),
        };
        let plan = &kernel.launch;
        let (main, epilogue) = match (
            module.function(&plan.symbol),
            plan.epilogue
                .as_ref()
                .map(|e| module.function(&e.symbol))
                .transpose(),
        ) {
            (Ok(m), Ok(e)) => (m, e),
            (Err(e), _) | (_, Err(e)) => {
                return Outcome::LaunchFailed {
                    message: e.to_string(),
                }
            }
        };
        // Workspace for split-K and flags for stream-K, grown and kept across kernels of the
        // same problem.
        let Some(st) = self.state.as_mut() else {
            return Outcome::LaunchFailed {
                message: no_problem().to_string(),
            };
        };
        let grown = grow(&self.gpu, &mut st.workspace, plan.workspace_bytes, false)
            .and_then(|()| grow(&self.gpu, &mut st.flags, plan.flags_bytes, true));
        if let Err(e) = grown {
            return self.outcome_of_error(e);
        }
        let Some(st) = self.state.as_ref() else {
            return Outcome::LaunchFailed {
                message: no_problem().to_string(),
            };
        };
        let p = st.problem.clone();
        let d_addr = st.d.addr();
        let ws = st.workspace.as_ref().map_or(0, |w| w.addr());
        let flags = st.flags.as_ref().map_or(0, |f| f.addr());
        let args: Vec<GemmArgs> = st
            .inputs
            .iter()
            .map(|set| {
                let c = set.c.as_ref().map_or(0, |c| c.addr());
                GemmArgs::new(&p, set.a.addr(), set.b.addr(), c, d_addr, ws, flags)
            })
            .collect();
        let zero_ws = plan
            .zero_workspace
            .then(|| st.workspace.as_ref().map(|w| w.as_ptr()))
            .flatten();
        let api = self.gpu.api().clone();
        let ws_bytes = plan.workspace_bytes as usize;
        let mut launch = |set: usize| -> Result<(), HipError> {
            if let Some(w) = zero_ws {
                // SAFETY: `w` is the live workspace of at least `ws_bytes` bytes.
                result::check(&api, "hipMemset(workspace)", unsafe {
                    (api.memset)(w, 0, ws_bytes)
                })?;
            }
            main.launch(plan.grid, plan.block, plan.shared_bytes, &args[set])?;
            if let (Some(f), Some(e)) = (&epilogue, &plan.epilogue) {
                f.launch(e.grid, e.block, 0, &args[set])?;
            }
            Ok(())
        };
        // The kernels and their module are released when they go out of scope here.
        self.measure(timing, &mut launch)
    }

    fn run_vendor(&mut self, timing: &TimingOptions) -> Outcome {
        if let Err(reason) = self.ensure_blaslt() {
            return Outcome::LaunchFailed {
                message: format!("hipBLASLt unavailable: {reason}"),
            };
        }
        let Some(st) = self.state.as_mut() else {
            return Outcome::LaunchFailed {
                message: no_problem().to_string(),
            };
        };
        if st.vendor.is_none() {
            let lib = match &self.blaslt {
                Some(Ok(lib)) => lib,
                _ => unreachable!("ensure_blaslt succeeded"),
            };
            st.vendor = Some(
                lib.plan(&self.gpu, &st.problem, &self.info.arch)
                    .map_err(|e| e.to_string()),
            );
        }
        let st = self.state.as_ref().expect("state checked above");
        let plan = match &st.vendor {
            Some(Ok(plan)) => plan,
            Some(Err(reason)) => {
                return Outcome::LaunchFailed {
                    message: reason.clone(),
                }
            }
            None => unreachable!("plan built above"),
        };
        let p = &st.problem;
        let (alpha, beta) = (p.alpha_eff() as f32, p.beta_eff() as f32);
        let addrs: Vec<[u64; 3]> = st
            .inputs
            .iter()
            .map(|s| [s.a.addr(), s.b.addr(), s.c.as_ref().map_or(0, |c| c.addr())])
            .collect();
        let d = st.d.addr();
        // hipBLASLt requires a C pointer even for beta = 0: D serves (it is never read).
        let mut launch = |set: usize| -> Result<(), HipError> {
            let [a, b, c] = addrs[set];
            plan.run(a, b, if c == 0 { d } else { c }, d, alpha, beta)
        };
        // The launcher borrows the plan inside `self.state`, so errors are recorded after
        // it is done rather than through `measure` (which needs `&mut self`).
        let result = self.verify(timing, &mut launch).and_then(|v| {
            if v.passed {
                self.time(timing, &mut launch).map(|s| Outcome::Timed {
                    samples_us: s,
                    verification: v,
                })
            } else {
                Ok(Outcome::WrongResult { verification: v })
            }
        });
        result.unwrap_or_else(|e| self.outcome_of_error(e))
    }

    fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_without_a_gpu_is_not_available_with_a_reason() {
        // This holds on any machine without an AMD GPU, whether or not ROCm is installed:
        // either the library is missing or the runtime finds no device.
        if std::path::Path::new("/dev/kfd").exists() {
            eprintln!("skipping: this machine has an AMD GPU driver (/dev/kfd)");
            return;
        }
        match HipDevice::open(&DeviceSelection::default()) {
            Err(DeviceError::NotAvailable { backend, reason }) => {
                assert_eq!(backend, "hip");
                assert!(!reason.trim().is_empty());
            }
            Err(other) => panic!("expected NotAvailable, got {other}"),
            Ok(_) => panic!("opened a HIP device on a machine without /dev/kfd"),
        }
    }
}
