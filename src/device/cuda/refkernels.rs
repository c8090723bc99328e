//! The support kernels of `kernels/reference.hip` on one CUDA device: seeded random fills, NaN
//! poison, the reference GEMM and the on-GPU comparison that turns an output into a
//! [`Verification`] without copying it to the host.
//!
//! The module comes from the build's ahead-of-time objects when they cover the device's arch,
//! otherwise from NVRTC at open time.

use std::ffi::c_void;

use cudarc::driver::sys::{CUfunction, CUstream};

use super::driver::{self, describe, DeviceBuffer, Module};
use crate::compile::nvidia::NvrtcCompiler;
use crate::compile::{aot, codegen, Target};
use crate::device::args::GemmArgs;
use crate::device::Verification;
use crate::hw::Vendor;
use crate::problem::{DataType, GemmProblem};

/// Type tag used in the support kernels' names.
fn tag(t: DataType) -> Result<&'static str, String> {
    match t {
        DataType::Bf16 => Ok("bf16"),
        DataType::F16 => Ok("f16"),
        DataType::F32 => Ok("f32"),
        DataType::F8 => Ok("f8"),
        DataType::Bf8 => Ok("bf8"),
    }
}

/// The reference GEMM of a problem's types and layout: `gt_ref_gemm_<a>_<c>_<layout>`, with
/// both input types named when they are 8-bit (`gt_ref_gemm_f8_bf8_bf16_TN`).
fn ref_gemm_name(p: &GemmProblem) -> Result<String, String> {
    let inputs = if p.a_type.is_8bit() {
        format!("{}_{}", tag(p.a_type)?, tag(p.b_type)?)
    } else {
        tag(p.a_type)?.to_string()
    };
    Ok(format!(
        "gt_ref_gemm_{inputs}_{}_{}",
        tag(p.c_type)?,
        p.layout()
    ))
}

/// The NaN bit pattern of a type and its width in bytes.
fn nan_bits(t: DataType) -> (u32, usize) {
    match t {
        DataType::Bf16 => (0x7fc0, 2),
        DataType::F16 => (0x7e00, 2),
        _ => (0x7fc0_0000, 4),
    }
}

pub struct RefKernels {
    module: Module,
    /// `aot` or `nvrtc-13.0`: where the module came from.
    pub origin: String,
}

const BLOCK: u32 = 256;

fn grid_for(count: u64) -> u32 {
    count.div_ceil(BLOCK as u64).clamp(1, 65_535 * 8) as u32
}

/// Launches an element-wise kernel over `count` elements (one thread each, grid-stride).
///
/// # Safety
/// `params` must match the kernel's parameter list, and every buffer must hold `count` elements.
unsafe fn launch_over(
    f: CUfunction,
    count: u64,
    params: &mut [*mut c_void],
    stream: CUstream,
) -> Result<(), String> {
    driver::launch(f, [grid_for(count), 1, 1], [BLOCK, 1, 1], 0, stream, params)
        .map_err(|e| describe(&e))
}

impl RefKernels {
    pub fn load(arch: &str, nvrtc: Option<&NvrtcCompiler>) -> Result<Self, String> {
        if let Some(bytes) = aot::reference_object(arch) {
            let module = Module::load(bytes).map_err(|e| describe(&e))?;
            return Ok(RefKernels {
                module,
                origin: "aot".into(),
            });
        }
        let nvrtc = nvrtc
            .ok_or("the reference kernels need NVRTC (no ahead-of-time object for this arch)")?;
        let target = Target::arch(Vendor::Nvidia, arch);
        let src = codegen::reference_source(&target);
        let (bytes, _) = nvrtc
            .compile_source(&src, "gemmtune_reference", arch)
            .map_err(|e| e.to_string())?;
        let module = Module::load(&bytes).map_err(|e| describe(&e))?;
        Ok(RefKernels {
            module,
            origin: format!("nvrtc-{}.{}", nvrtc.version().0, nvrtc.version().1),
        })
    }

    fn function(&self, name: &str) -> Result<CUfunction, String> {
        self.module
            .function(name)
            .map_err(|e| format!("{name}: {}", describe(&e)))
    }

    /// Fills `count` elements of type `t` at `ptr` with uniform [-1, 1) values from `seed`.
    pub fn fill(
        &self,
        ptr: u64,
        count: u64,
        t: DataType,
        seed: u64,
        stream: CUstream,
    ) -> Result<(), String> {
        let f = self.function(&format!("gt_fill_{}", tag(t)?))?;
        let (mut p, mut c, mut s) = (ptr, count, seed);
        let mut params = [
            &mut p as *mut u64 as *mut c_void,
            &mut c as *mut u64 as *mut c_void,
            &mut s as *mut u64 as *mut c_void,
        ];
        // SAFETY: (T*, u64, u64) matches gt_fill_<t>; the buffer holds `count` elements.
        unsafe { launch_over(f, count, &mut params, stream) }
    }

    /// Overwrites `count` elements of type `t` with NaN.
    pub fn poison(
        &self,
        ptr: u64,
        count: u64,
        t: DataType,
        stream: CUstream,
    ) -> Result<(), String> {
        let (bits, width) = nan_bits(t);
        let f = self.function(if width == 2 {
            "gt_fill_bits16"
        } else {
            "gt_fill_bits32"
        })?;
        let (mut p, mut c, mut b) = (ptr, count, bits);
        let mut params = [
            &mut p as *mut u64 as *mut c_void,
            &mut c as *mut u64 as *mut c_void,
            &mut b as *mut u32 as *mut c_void,
        ];
        // SAFETY: (u16*/u32*, u64, u32) matches gt_fill_bits16/32.
        unsafe { launch_over(f, count, &mut params, stream) }
    }

    /// Computes the reference output of `args` into `out` (f32, packed [batch][N][M]).
    pub fn reference(
        &self,
        p: &GemmProblem,
        args: &GemmArgs,
        out: u64,
        stream: CUstream,
    ) -> Result<(), String> {
        let name = ref_gemm_name(p)?;
        let f = self.function(&name)?;
        let mut a = *args;
        let mut o = out;
        let mut params = [
            &mut a as *mut GemmArgs as *mut c_void,
            &mut o as *mut u64 as *mut c_void,
        ];
        // y and z at most a grid's layers: the kernel strides over the tiles and batches past
        // them.
        let most = crate::space::constraints::MAX_GRID_YZ as u64;
        let grid = [
            (p.m as u64).div_ceil(16) as u32,
            (p.n as u64).div_ceil(16).min(most) as u32,
            (p.batch as u64).min(most) as u32,
        ];
        // SAFETY: (GtGemmArgs, float*) matches gt_ref_gemm_*; `out` holds batch*M*N floats.
        unsafe { driver::launch(f, grid, [16, 16, 1], 0, stream, &mut params) }
            .map_err(|e| describe(&e))
    }

    /// Compares the output described by `args` (D pointer, ldd, stride_d) with `reference`.
    pub fn compare(
        &self,
        p: &GemmProblem,
        args: &GemmArgs,
        reference: u64,
        stats: &DeviceBuffer,
        stream: CUstream,
    ) -> Result<Verification, String> {
        let f = self.function(&format!("gt_compare_{}", tag(p.d_type)?))?;
        stats.memset_zero(stream).map_err(|e| describe(&e))?;
        let (mut d, mut r, mut a, mut s) = (args.d, reference, *args, stats.ptr);
        let mut params = [
            &mut d as *mut u64 as *mut c_void,
            &mut r as *mut u64 as *mut c_void,
            &mut a as *mut GemmArgs as *mut c_void,
            &mut s as *mut u64 as *mut c_void,
        ];
        let total = (p.m * p.n * p.batch) as u64;
        // SAFETY: (T*, float*, GtGemmArgs, double*) matches gt_compare_<t>; stats holds 5 doubles.
        unsafe {
            driver::launch(
                f,
                [grid_for(total).min(4096), 1, 1],
                [BLOCK, 1, 1],
                0,
                stream,
                &mut params,
            )
        }
        .map_err(|e| describe(&e))?;
        // The copy below runs on the legacy default stream, which does not wait for our
        // non-blocking stream: finish the comparison first.
        // SAFETY: the stream belongs to the current context.
        unsafe { cudarc::driver::result::stream::synchronize(stream) }.map_err(|e| describe(&e))?;
        let v: Vec<f64> = stats.copy_to_host(5).map_err(|e| describe(&e))?;
        Ok(verification_from_stats(&v, p))
    }
}

/// [sum (o-r)^2, sum r^2, max |o-r|, max rel, NaN count] -> the verdict, with
/// `measure::verify::tolerance`; any NaN fails.
pub fn verification_from_stats(v: &[f64], p: &GemmProblem) -> Verification {
    let tol = crate::measure::verify::tolerance(p);
    let nan = v[4] > 0.0;
    let rel_l2 = if v[1] > 0.0 {
        (v[0] / v[1]).sqrt()
    } else {
        v[0].sqrt()
    };
    Verification {
        max_abs_err: if nan { f64::NAN } else { v[2] },
        max_rel_err: v[3],
        rel_l2_err: if nan { f64::INFINITY } else { rel_l2 },
        tolerance: tol,
        passed: !nan && rel_l2 <= tol,
        method: "gpu-reference".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_become_a_verdict() {
        let p = GemmProblem::new(64, 64, 64);
        let ok = verification_from_stats(&[1e-8, 1.0, 1e-4, 1e-3, 0.0], &p);
        assert!(ok.passed, "{ok:?}");
        let wrong = verification_from_stats(&[0.5, 1.0, 0.7, 1.0, 0.0], &p);
        assert!(!wrong.passed);
        let nan = verification_from_stats(&[0.0, 1.0, 0.0, 0.0, 3.0], &p);
        assert!(!nan.passed && nan.max_abs_err.is_nan());
    }
}
