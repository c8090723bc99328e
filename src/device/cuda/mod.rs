//! The CUDA backend: a [`Device`] on one NVIDIA GPU through the driver API (cudarc, loaded at
//! run time, so the binary starts where CUDA is missing).
//!
//! Flow per problem: `set_problem` allocates enough rotating copies of A/B/C to cover
//! `rotating_mb`, fills them on the GPU from the seed, and computes the reference output with
//! the reference kernel (checked against the CPU reference for small problems). Per kernel:
//! `run_kernel` loads the CUBIN, poisons D with NaN, launches once on copy 0, compares on the
//! GPU, then runs `cold_iters` warm-ups and `iters` launches timed with events, cycling through
//! the copies (optionally overwriting a 2x-L2 buffer between launches, outside the events).
//! `run_vendor` does the same with a cuBLASLt plan. Faults are outcomes; a sticky fault
//! (illegal address, ...) marks the device poisoned so the worker can be replaced.

mod cublaslt;
mod driver;
mod refkernels;
mod tma;

use std::ffi::c_void;

use cudarc::driver::result::{self as cu, DriverError};
use cudarc::driver::sys;

use self::cublaslt::LtPlan;
use self::driver::{describe, is_sticky, DeviceBuffer, Event, Module};
use self::refkernels::RefKernels;
use super::args::GemmArgs;
use super::{Device, DeviceError, DeviceInfo, DeviceSelection, Outcome, TimingOptions};
use crate::compile::nvidia::NvrtcCompiler;
use crate::compile::{CodeFormat, CompiledKernel};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;

/// Problems up to this many multiply-adds get their GPU reference checked on the CPU.
const CPU_CHECK_MACS: f64 = 3.0e7;
/// Workspace cuBLASLt may use (what PyTorch gives it on Hopper).
const LT_WORKSPACE: usize = 32 << 20;

/// Input buffers of one rotating copy.
struct InputSet {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: Option<DeviceBuffer>,
}

/// Everything allocated for the current problem.
struct ProblemState {
    problem: GemmProblem,
    inputs: Vec<InputSet>,
    d: DeviceBuffer,
    reference: DeviceBuffer,
    stats: DeviceBuffer,
    workspace: Option<DeviceBuffer>,
    /// Stream-K arrival flags: zeroed when allocated, left zero by every complete launch.
    flags: Option<DeviceBuffer>,
    flush: Option<DeviceBuffer>,
    vendor: Option<Result<LtPlan, String>>,
}

impl ProblemState {
    fn args(&self, copy: usize, workspace: u64, flags: u64) -> GemmArgs {
        let s = &self.inputs[copy % self.inputs.len()];
        GemmArgs::new(
            &self.problem,
            s.a.ptr,
            s.b.ptr,
            s.c.as_ref().map(|c| c.ptr).unwrap_or(0),
            self.d.ptr,
            workspace,
            flags,
        )
    }

    /// A workspace of at least `bytes` (grown, never shrunk).
    fn workspace(&mut self, bytes: u64) -> Result<u64, DriverError> {
        grown(&mut self.workspace, bytes, None)
    }

    /// Stream-K flags of at least `bytes`, all zero (grown, never shrunk; a new buffer is
    /// zeroed before any kernel can read it, on the same stream).
    fn flags(&mut self, bytes: u64, stream: sys::CUstream) -> Result<u64, DriverError> {
        grown(&mut self.flags, bytes, Some(stream))
    }
}

/// The address of `slot`'s buffer after making it hold at least `bytes` (kept when big enough;
/// a new one is zeroed on `zero_on` when given). 0, with nothing allocated, for 0 bytes.
fn grown(
    slot: &mut Option<DeviceBuffer>,
    bytes: u64,
    zero_on: Option<sys::CUstream>,
) -> Result<u64, DriverError> {
    if bytes == 0 {
        return Ok(0);
    }
    if slot.as_ref().is_none_or(|b| (b.bytes as u64) < bytes) {
        *slot = None;
        let b = DeviceBuffer::new(bytes as usize)?;
        if let Some(stream) = zero_on {
            b.memset_zero(stream)?;
        }
        *slot = Some(b);
    }
    Ok(slot.as_ref().map(|b| b.ptr).unwrap_or(0))
}

pub struct CudaDevice {
    info: DeviceInfo,
    hw: HwSpec,
    ctx: sys::CUcontext,
    dev: sys::CUdevice,
    stream: sys::CUstream,
    nvrtc: Option<NvrtcCompiler>,
    refs: RefKernels,
    state: Option<ProblemState>,
    poisoned: bool,
    /// Split-K epilogues launch as programmatic dependents of their main kernel (sm_90+,
    /// where the generated epilogue waits for it with `griddepcontrol.wait`).
    dependent_launch: bool,
}

fn not_available(reason: String) -> DeviceError {
    DeviceError::NotAvailable {
        backend: "cuda",
        reason,
    }
}

fn attribute(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> Result<i32, DeviceError> {
    // SAFETY: `dev` is a valid device ordinal handle.
    unsafe { cu::device::get_attribute(dev, a) }.map_err(|e| DeviceError::Driver(describe(&e)))
}

/// The compile target for a compute capability: the arch-specific variant (`sm_90a`) where
/// one exists, since the kernels may use features only it exposes.
pub fn arch_for(major: i32, minor: i32) -> String {
    if major >= 9 && minor == 0 {
        format!("sm_{major}{minor}a")
    } else {
        format!("sm_{major}{minor}")
    }
}

impl CudaDevice {
    /// Opens GPU `sel.index`. `NotAvailable` when libcuda or a GPU is missing, `NoSuchDevice`
    /// for an index past the last GPU.
    pub fn open(sel: &DeviceSelection) -> Result<Self, DeviceError> {
        // SAFETY: probes whether libcuda can be opened; nothing else is called without it.
        if !unsafe { sys::is_culib_present() } {
            return Err(not_available(
                "libcuda not found (no NVIDIA driver installed)".into(),
            ));
        }
        cu::init().map_err(|e| not_available(describe(&e)))?;
        let count = cu::device::get_count().map_err(|e| not_available(describe(&e)))?;
        if count <= 0 {
            return Err(not_available("the driver reports no CUDA device".into()));
        }
        if sel.index >= count as u32 {
            return Err(DeviceError::NoSuchDevice {
                backend: "cuda",
                index: sel.index,
                count: count as u32,
            });
        }
        let drv = |e: DriverError| DeviceError::Driver(describe(&e));
        let dev = cu::device::get(sel.index as i32).map_err(drv)?;
        // SAFETY: the primary context of a valid device, made current on this thread.
        let ctx = unsafe { cu::primary_ctx::retain(dev) }.map_err(drv)?;
        unsafe { cu::ctx::set_current(ctx) }.map_err(drv)?;
        let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking).map_err(drv)?;

        let name = cu::device::get_name(dev).map_err(drv)?;
        use sys::CUdevice_attribute as A;
        let major = attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attribute(dev, A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let sms = attribute(dev, A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let l2 = attribute(dev, A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?;
        // SAFETY: valid device.
        let memory = unsafe { cu::device::total_mem(dev) }.map_err(drv)?;
        let mut driver_version = 0;
        // SAFETY: valid out-pointer.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }
            .result()
            .map_err(drv)?;
        let nvrtc = NvrtcCompiler::new().ok();
        let arch = arch_for(major, minor);
        let hw = match &sel.hw_spec {
            Some(h) => h.clone(),
            None => HwSpec::for_device_name(&name).ok_or_else(|| {
                not_available(format!(
                    "no built-in hw spec matches `{name}`; pass one with --hw-spec"
                ))
            })?,
        };
        let refs = RefKernels::load(&arch, nvrtc.as_ref()).map_err(|e| {
            DeviceError::Driver(format!("loading the reference kernels for {arch}: {e}"))
        })?;
        let info = DeviceInfo {
            backend: "cuda".into(),
            index: sel.index,
            name,
            vendor: Vendor::Nvidia,
            arch,
            driver_version: format!("{}.{}", driver_version / 1000, (driver_version % 1000) / 10),
            compiler_version: nvrtc
                .as_ref()
                .map(|n| format!("nvrtc-{}.{}", n.version().0, n.version().1))
                .unwrap_or_else(|| "none".into()),
            memory_bytes: memory as u64,
            compute_units: sms as u32,
            l2_bytes: l2 as u64,
        };
        Ok(CudaDevice {
            info,
            hw,
            ctx,
            dev,
            stream,
            nvrtc,
            refs,
            state: None,
            poisoned: false,
            dependent_launch: major >= 9,
        })
    }

    /// Where the reference kernels came from (`aot` or the NVRTC version).
    pub fn reference_origin(&self) -> &str {
        &self.refs.origin
    }

    pub fn nvrtc(&self) -> Option<&NvrtcCompiler> {
        self.nvrtc.as_ref()
    }

    fn sync(&mut self) -> Result<(), DriverError> {
        // SAFETY: the stream belongs to this device's context.
        let r = unsafe { cu::stream::synchronize(self.stream) };
        if let Err(e) = &r {
            if is_sticky(e) {
                self.poisoned = true;
            }
        }
        r
    }

    /// A driver failure during a run: records stickiness and becomes `LaunchFailed`.
    fn failed(&mut self, what: &str, message: String, sticky: bool) -> Outcome {
        if sticky {
            self.poisoned = true;
        }
        Outcome::LaunchFailed {
            message: format!("{what}: {message}"),
        }
    }

    fn driver_failed(&mut self, what: &str, e: DriverError) -> Outcome {
        let sticky = is_sticky(&e);
        self.failed(what, describe(&e), sticky)
    }

    /// Verifies with `launch(copy)`, then times it. Shared by kernels and the vendor library.
    fn verify_and_time(
        &mut self,
        timing: &TimingOptions,
        launch: &mut dyn FnMut(&mut ProblemState, usize, sys::CUstream) -> Result<(), String>,
    ) -> Outcome {
        let stream = self.stream;
        let Some(mut state) = self.state.take() else {
            return Outcome::LaunchFailed {
                message: "set_problem was not called".into(),
            };
        };
        let outcome = self.verify_and_time_with(&mut state, timing, stream, launch);
        self.state = Some(state);
        outcome
    }

    fn verify_and_time_with(
        &mut self,
        state: &mut ProblemState,
        timing: &TimingOptions,
        stream: sys::CUstream,
        launch: &mut dyn FnMut(&mut ProblemState, usize, sys::CUstream) -> Result<(), String>,
    ) -> Outcome {
        let p = state.problem.clone();
        let d_elems = (p.buffer_bytes("D").unwrap_or(0) / p.d_type.bytes() as u64).max(1);
        if let Err(e) = self.refs.poison(state.d.ptr, d_elems, p.d_type, stream) {
            return self.failed("poisoning D", e, false);
        }
        if let Err(e) = launch(state, 0, stream) {
            return self.failed("launch", e, false);
        }
        if let Err(e) = self.sync() {
            return self.driver_failed("kernel execution", e);
        }
        let args = state.args(0, 0, 0);
        let verification =
            match self
                .refs
                .compare(&p, &args, state.reference.ptr, &state.stats, stream)
            {
                Ok(v) => v,
                Err(e) => return self.failed("verification", e, false),
            };
        if !verification.passed {
            return Outcome::WrongResult { verification };
        }

        if timing.flush_l2 && state.flush.is_none() {
            match DeviceBuffer::new((2 * self.info.l2_bytes.max(1 << 20)) as usize) {
                Ok(b) => state.flush = Some(b),
                Err(e) => return self.driver_failed("allocating the L2 flush buffer", e),
            }
        }
        let copies = state.inputs.len();
        for i in 0..timing.cold_iters as usize {
            if let Err(e) = launch(state, (i + 1) % copies, stream) {
                return self.failed("warm-up launch", e, false);
            }
        }
        let n = timing.iters.max(1) as usize;
        let mut events = Vec::with_capacity(2 * n);
        for _ in 0..2 * n {
            match Event::new() {
                Ok(e) => events.push(e),
                Err(e) => return self.driver_failed("creating events", e),
            }
        }
        for i in 0..n {
            if let Some(f) = &state.flush {
                if let Err(e) = f.memset_zero(stream) {
                    return self.driver_failed("L2 flush", e);
                }
            }
            let copy = (timing.cold_iters as usize + 1 + i) % copies;
            let timed = events[2 * i]
                .record(stream)
                .map_err(|e| describe(&e))
                .and_then(|_| launch(state, copy, stream))
                .and_then(|_| events[2 * i + 1].record(stream).map_err(|e| describe(&e)));
            if let Err(e) = timed {
                return self.failed("timed launch", e, false);
            }
        }
        if let Err(e) = self.sync() {
            return self.driver_failed("timed execution", e);
        }
        let mut samples_us = Vec::with_capacity(n);
        for i in 0..n {
            match events[2 * i].elapsed_ms(&events[2 * i + 1]) {
                Ok(ms) => samples_us.push(ms as f64 * 1e3),
                Err(e) => return self.driver_failed("reading events", e),
            }
        }
        Outcome::Timed {
            samples_us,
            verification,
        }
    }

    fn allocate(
        &mut self,
        p: &GemmProblem,
        timing: &TimingOptions,
    ) -> Result<ProblemState, DeviceError> {
        let drv = |e: DriverError| DeviceError::Driver(describe(&e));
        let copies = timing.rotating_copies(p);
        let (free, _) = cu::mem_get_info().map_err(drv)?;
        p.check_fits(free as u64, copies)?;
        let bytes =
            |w: &'static str| -> Result<usize, DeviceError> { Ok(p.buffer_bytes(w)? as usize) };
        let mut inputs = Vec::new();
        for _ in 0..copies {
            inputs.push(InputSet {
                a: DeviceBuffer::new(bytes("A")?).map_err(drv)?,
                b: DeviceBuffer::new(bytes("B")?).map_err(drv)?,
                c: if p.beta != 0.0 {
                    Some(DeviceBuffer::new(bytes("C")?).map_err(drv)?)
                } else {
                    None
                },
            });
        }
        let out_elems = (p.m * p.n * p.batch) as usize;
        Ok(ProblemState {
            problem: p.clone(),
            inputs,
            d: DeviceBuffer::new(bytes("D")?).map_err(drv)?,
            reference: DeviceBuffer::new(out_elems * 4).map_err(drv)?,
            stats: DeviceBuffer::new(5 * 8).map_err(drv)?,
            workspace: None,
            flags: None,
            flush: None,
            vendor: None,
        })
    }

    /// Compares the GPU reference of copy 0 with the CPU reference (small problems only).
    fn check_reference_on_cpu(&self, state: &ProblemState) -> Result<(), DeviceError> {
        use crate::measure::reference::{decode, gemm};
        let p = &state.problem;
        let drv = |e: DriverError| DeviceError::Driver(describe(&e));
        let set = &state.inputs[0];
        let a = decode(
            &set.a.copy_to_host::<u8>(set.a.bytes).map_err(drv)?,
            p.a_type,
        );
        let b = decode(
            &set.b.copy_to_host::<u8>(set.b.bytes).map_err(drv)?,
            p.b_type,
        );
        let c = match &set.c {
            Some(c) => Some(decode(
                &c.copy_to_host::<u8>(c.bytes).map_err(drv)?,
                p.c_type,
            )),
            None => None,
        };
        let cpu = gemm(p, &a, &b, c.as_deref());
        let gpu: Vec<f32> = state.reference.copy_to_host(cpu.len()).map_err(drv)?;
        let (mut d2, mut r2) = (0.0, 0.0);
        for (g, c) in gpu.iter().zip(&cpu) {
            let g = *g as f64;
            if !g.is_finite() {
                d2 = f64::INFINITY;
            }
            d2 += (g - c) * (g - c);
            r2 += c * c;
        }
        // The GPU reference sums in f64 too and rounds once to f32.
        let rel = if r2 > 0.0 {
            (d2 / r2).sqrt()
        } else {
            d2.sqrt()
        };
        if rel.is_nan() || rel > 1e-6 {
            return Err(DeviceError::Driver(format!(
                "the GPU reference GEMM disagrees with the CPU reference (relative L2 error {rel:.3e})"
            )));
        }
        Ok(())
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        // Buffers and modules must go before the context they live in is released.
        self.state = None;
        // SAFETY: the stream and the primary context were created/retained by `open`.
        unsafe {
            let _ = cu::stream::destroy(self.stream);
            let _ = cu::primary_ctx::release(self.dev);
        }
        let _ = self.ctx;
    }
}

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn hw_spec(&self) -> &HwSpec {
        &self.hw
    }

    fn set_problem(&mut self, p: &GemmProblem, timing: &TimingOptions) -> Result<(), DeviceError> {
        p.validate()?;
        if self.poisoned {
            return Err(DeviceError::Driver(
                "the CUDA context is poisoned by an earlier fault".into(),
            ));
        }
        self.state = None;
        let state = self.allocate(p, timing)?;
        let stream = self.stream;
        let elems = |bytes: usize, t: crate::problem::DataType| (bytes / t.bytes()) as u64;
        for (i, set) in state.inputs.iter().enumerate() {
            // Distinct, reproducible data per copy and operand.
            let seed = timing
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add(3 * i as u64);
            self.refs
                .fill(
                    set.a.ptr,
                    elems(set.a.bytes, p.a_type),
                    p.a_type,
                    seed,
                    stream,
                )
                .and_then(|_| {
                    self.refs.fill(
                        set.b.ptr,
                        elems(set.b.bytes, p.b_type),
                        p.b_type,
                        seed + 1,
                        stream,
                    )
                })
                .and_then(|_| match &set.c {
                    Some(c) => {
                        self.refs
                            .fill(c.ptr, elems(c.bytes, p.c_type), p.c_type, seed + 2, stream)
                    }
                    None => Ok(()),
                })
                .map_err(DeviceError::Driver)?;
        }
        let args = state.args(0, 0, 0);
        self.refs
            .reference(p, &args, state.reference.ptr, stream)
            .map_err(DeviceError::Driver)?;
        self.sync().map_err(|e| DeviceError::Driver(describe(&e)))?;
        if p.flops() / 2.0 <= CPU_CHECK_MACS {
            self.check_reference_on_cpu(&state)?;
        }
        self.state = Some(state);
        Ok(())
    }

    fn run_kernel(&mut self, kernel: &CompiledKernel, timing: &TimingOptions) -> Outcome {
        if self.poisoned {
            return Outcome::LaunchFailed {
                message: "the CUDA context is poisoned by an earlier fault".into(),
            };
        }
        if kernel.code.format != CodeFormat::Cubin {
            return Outcome::LaunchFailed {
                message: format!("the CUDA backend runs CUBINs, not {:?}", kernel.code.format),
            };
        }
        let module = match Module::load(&kernel.code.bytes) {
            Ok(m) => m,
            Err(e) => return self.driver_failed("loading the CUBIN", e),
        };
        let plan = kernel.launch.clone();
        let main = match module.function(&plan.symbol) {
            Ok(f) => f,
            Err(e) => return self.driver_failed(&format!("kernel {}", plan.symbol), e),
        };
        if let Err(e) = driver::allow_shared(main, plan.shared_bytes) {
            return self.driver_failed("setting the dynamic shared memory size", e);
        }
        // A persistent kernel walks its tiles (or batches) over however many workgroups it is
        // given: no more than can run at once, in whole clusters (LaunchPlan::grid_at_once). A
        // data-parallel kernel storing through a map of D as well needs its whole grid.
        let grid = if plan.persistent {
            match driver::workgroups_at_once(
                main,
                plan.block,
                plan.shared_bytes,
                self.info.compute_units,
            ) {
                Ok(at_once) => plan.grid_at_once(at_once),
                Err(e) => return self.driver_failed("querying the workgroups that fit at once", e),
            }
        } else {
            plan.grid
        };
        // Operands packed before the main kernel (into the workspace, after the split-K
        // partials): the main kernel reads the packed copies (K-major on the warpgroup path,
        // M- or N-major on the FMA path), with each plan's leading dimension and stride.
        let packs: Vec<(sys::CUfunction, &crate::compile::PackPlan)> = {
            let mut v = Vec::new();
            for pk in &plan.packs {
                match module.function(&pk.symbol) {
                    Ok(f) => v.push((f, pk)),
                    Err(e) => return self.driver_failed(&format!("kernel {}", pk.symbol), e),
                }
            }
            v
        };
        let workspace_total = plan.workspace_total();
        // The workspace is allocated before the tensor maps are encoded: a packed operand's
        // map names its address, which stays put (the buffer only grows).
        let ws_base = match self.state.as_mut().map(|st| st.workspace(workspace_total)) {
            Some(Ok(ws)) => ws,
            Some(Err(e)) => return self.driver_failed("allocating the workspace", e),
            None => 0,
        };
        let packed = |is_a: bool| plan.packs.iter().find(|pk| pk.is_a == is_a);
        // The problem the tensor maps describe (the warpgroup path's, whose copies are K-major;
        // the FMA path's M- or N-major copies are read without maps).
        let k_major = |is_a: bool| packed(is_a).is_some_and(|pk| !pk.mn_major);
        let kernel_problem = self
            .state
            .as_ref()
            .map(|st| st.problem.with_packed(k_major(true), k_major(false)));
        // Tensor maps of every rotating copy, encoded before any launch: encoding between the
        // timing events would be counted as kernel time.
        let maps = match (plan.tma, self.state.as_ref(), kernel_problem.as_ref()) {
            (Some([ra, rb]), Some(st), Some(kp)) => {
                let encoded: Result<Vec<_>, String> = st
                    .inputs
                    .iter()
                    .map(|s| {
                        let a = packed(true).map_or(s.a.ptr, |pk| ws_base + pk.workspace_offset);
                        let b = packed(false).map_or(s.b.ptr, |pk| ws_base + pk.workspace_offset);
                        // C rotates with the inputs: each copy has its own map.
                        let c = match (&plan.tma_c, &s.c) {
                            (Some(bx), Some(c)) => Some(tma::c_map(kp, c.ptr, bx)?),
                            _ => None,
                        };
                        Ok((
                            tma::operand_map(kp, true, a, &ra)?,
                            tma::operand_map(kp, false, b, &rb)?,
                            c,
                        ))
                    })
                    .collect();
                match encoded {
                    Ok(m) => m,
                    Err(message) => return Outcome::LaunchFailed { message },
                }
            }
            _ => Vec::new(),
        };
        // The output's map, for kernels that store through one: D is a single buffer.
        let map_d = match (&plan.tma_d, self.state.as_ref()) {
            (Some(bx), Some(st)) => match tma::output_map(&st.problem, st.d.ptr, bx) {
                Ok(m) => Some(m),
                Err(message) => return Outcome::LaunchFailed { message },
            },
            _ => None,
        };
        let epilogue = match &plan.epilogue {
            Some(ep) => match module.function(&ep.symbol) {
                Ok(f) => Some((f, ep.grid, ep.block)),
                Err(e) => return self.driver_failed(&format!("kernel {}", ep.symbol), e),
            },
            None => None,
        };
        // A kernel that follows one of its own launch on the stream (sm_90+) starts as that
        // one's programmatic dependent and waits for it itself: the epilogue after the main
        // kernel, and a main kernel after a pack kernel (GtCfg::WAIT_FOR_PACK), whose launch
        // then overlaps the copy's end instead of following it. H200, kernel against kernel,
        // same call: 4096x48x4096 TT 17.9 -> 16.5 us, 8192x80x4096 TT 26.9 -> 24.7,
        // 16032x109x16384 NT 136.8 -> 134.9.
        let launcher = |follows: bool| {
            if self.dependent_launch && follows {
                driver::launch_dependent
            } else {
                driver::launch
            }
        };
        let launch_epilogue = launcher(true);
        let launch_main = launcher(!packs.is_empty());
        let mut launch =
            |state: &mut ProblemState, copy: usize, stream: sys::CUstream| -> Result<(), String> {
                let ws = state.workspace(workspace_total).map_err(|e| describe(&e))?;
                if plan.zero_workspace {
                    // SAFETY: the workspace holds at least workspace_bytes.
                    unsafe { cu::memset_d8_async(ws, 0, plan.workspace_bytes as usize, stream) }
                        .map_err(|e| describe(&e))?;
                }
                let flags = state
                    .flags(plan.flags_bytes, stream)
                    .map_err(|e| describe(&e))?;
                let mut args = state.args(copy, ws, flags);
                for &(f, pk) in &packs {
                    let mut dst = ws + pk.workspace_offset;
                    let mut pack_params = [
                        &mut args as *mut GemmArgs as *mut c_void,
                        &mut dst as *mut u64 as *mut c_void,
                    ];
                    // SAFETY: (GtGemmArgs, void*) matches <name>_pack_a/b; the workspace holds
                    // the packed operand at this offset (workspace_total).
                    unsafe { driver::launch(f, pk.grid, pk.block, 0, stream, &mut pack_params) }
                        .map_err(|e| describe(&e))?;
                }
                for &(_, pk) in &packs {
                    let dst = ws + pk.workspace_offset;
                    if pk.is_a {
                        (args.a, args.lda, args.stride_a) = (dst, pk.ld, pk.stride);
                    } else {
                        (args.b, args.ldb, args.stride_b) = (dst, pk.ld, pk.stride);
                    }
                }
                if let Some((a, b, c)) = maps.get(copy % maps.len().max(1)) {
                    args.tma_a = *a;
                    args.tma_b = *b;
                    if let Some(c) = c {
                        args.tma_c = *c;
                    }
                }
                if let Some(d) = map_d {
                    args.tma_d = d;
                }
                let mut params = [&mut args as *mut GemmArgs as *mut c_void];
                // SAFETY: every generated kernel takes one GtGemmArgs by value; the buffers it
                // names belong to `state` and outlive the launch (synchronised before release).
                // After a pack kernel it waits for the copy before reading it.
                unsafe {
                    launch_main(
                        main,
                        grid,
                        plan.block,
                        plan.shared_bytes,
                        stream,
                        &mut params,
                    )
                }
                .map_err(|e| describe(&e))?;
                if let Some((f, grid, block)) = epilogue {
                    // SAFETY: as above; the epilogue has the same signature, and on sm_90+
                    // it waits for the main kernel before reading the workspace.
                    unsafe { launch_epilogue(f, grid, block, 0, stream, &mut params) }
                        .map_err(|e| describe(&e))?;
                }
                Ok(())
            };
        let outcome = self.verify_and_time(timing, &mut launch);
        drop(module);
        outcome
    }

    fn run_vendor(&mut self, timing: &TimingOptions) -> Outcome {
        if self.poisoned {
            return Outcome::LaunchFailed {
                message: "the CUDA context is poisoned by an earlier fault".into(),
            };
        }
        let Some(state) = self.state.as_mut() else {
            return Outcome::LaunchFailed {
                message: "set_problem was not called".into(),
            };
        };
        if state.vendor.is_none() {
            let plan = if LtPlan::available() {
                LtPlan::new(&state.problem, LT_WORKSPACE)
            } else {
                Err("libcublasLt not found".into())
            };
            state.vendor = Some(plan);
        }
        let ws_bytes = match &state.vendor {
            Some(Ok(plan)) => plan.workspace_bytes() as u64,
            Some(Err(e)) => {
                return Outcome::LaunchFailed {
                    message: format!("cuBLASLt: {e}"),
                }
            }
            None => 0,
        };
        let mut launch =
            |state: &mut ProblemState, copy: usize, stream: sys::CUstream| -> Result<(), String> {
                let ws = state.workspace(ws_bytes).map_err(|e| describe(&e))?;
                let args = state.args(copy, ws, 0);
                match &state.vendor {
                    // SAFETY: the plan was built for this problem; buffers and workspace fit it.
                    Some(Ok(plan)) => unsafe {
                        plan.launch(args.a, args.b, args.c, args.d, ws, stream)
                    },
                    _ => Err("no cuBLASLt plan".into()),
                }
            };
        self.verify_and_time(timing, &mut launch)
    }

    fn is_poisoned(&self) -> bool {
        self.poisoned
    }
}
