//! The hipBLASLt baseline: one matmul plan per problem.
//!
//! Flow: [`BlasLt::load`] opens the library and a handle; [`BlasLt::plan`] describes the
//! problem exactly as hipblaslt-bench would (column-major layouts of the stored operands,
//! `opA`/`opB` from the transposes, strided batch, f32 compute and scale) and asks the
//! heuristic for its best algorithm within a workspace bound; [`MatmulPlan::run`] launches it
//! on the null stream, so it is timed with the same events as our kernels.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use super::safe::{DeviceBuffer, Gpu};
use crate::problem::{DataType, GemmProblem};
use crate::rocm::result::{check_blas, HipError};
use crate::rocm::sys::{self, BlasLtApi, BlasLtHandle, BlasLtHeuristicResult};

/// Workspace offered to the heuristic: what hipblaslt-bench offers by default (128 MiB).
pub const WORKSPACE_BYTES: u64 = 128 << 20;

/// A loaded hipBLASLt with one handle.
pub struct BlasLt {
    api: Arc<BlasLtApi>,
    handle: BlasLtHandle,
    version: c_int,
}

impl BlasLt {
    /// Loads the library and creates a handle on the current device.
    pub fn load() -> Result<BlasLt, HipError> {
        let api = Arc::new(BlasLtApi::load().map_err(HipError::Load)?);
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check_blas("hipblasLtCreate", unsafe { (api.create)(&mut handle) })?;
        let mut version: c_int = 0;
        // SAFETY: valid handle and out-pointer. A failure only loses the version string.
        let _ = unsafe { (api.get_version)(handle, &mut version) };
        Ok(BlasLt {
            api,
            handle,
            version,
        })
    }

    /// `0.8.0` style version of the library.
    pub fn version(&self) -> String {
        format!(
            "{}.{}.{}",
            self.version / 100_000,
            (self.version / 100) % 1000,
            self.version % 100
        )
    }

    /// The compute-type value this library version expects for f32 accumulation.
    fn compute_f32(&self) -> c_int {
        if self.version >= sys::HIPBLASLT_VERSION_COMPUTE_TYPE_SWITCH {
            sys::HIPBLAS_COMPUTE_32F
        } else {
            sys::HIPBLASLT_COMPUTE_F32_LEGACY
        }
    }

    /// Builds the descriptors for `p` and picks the heuristic's first algorithm.
    pub fn plan(&self, gpu: &Gpu, p: &GemmProblem, arch: &str) -> Result<MatmulPlan, HipError> {
        let api = &self.api;
        let mut plan = MatmulPlan {
            api: api.clone(),
            handle: self.handle,
            desc: std::ptr::null_mut(),
            layouts: [std::ptr::null_mut(); 4],
            pref: std::ptr::null_mut(),
            algo: sys::BlasLtMatmulAlgo::default(),
            workspace: None,
            workspace_bytes: 0,
        };
        // SAFETY (all calls below): out-pointers are fields of `plan`, which destroys
        // whatever was created if a later step fails; attribute buffers match their sizes.
        check_blas("hipblasLtMatmulDescCreate", unsafe {
            (api.matmul_desc_create)(&mut plan.desc, self.compute_f32(), sys::HIP_R_32F)
        })?;
        for (attr, t) in [
            (sys::HIPBLASLT_MATMUL_DESC_TRANSA, p.trans_a.is_t()),
            (sys::HIPBLASLT_MATMUL_DESC_TRANSB, p.trans_b.is_t()),
        ] {
            let op: i32 = if t {
                sys::HIPBLAS_OP_T
            } else {
                sys::HIPBLAS_OP_N
            };
            check_blas("hipblasLtMatmulDescSetAttribute", unsafe {
                (api.matmul_desc_set_attribute)(plan.desc, attr, (&op as *const i32).cast(), 4)
            })?;
        }
        let operands = [
            (p.a_type, p.a_rows(), p.a_cols(), p.lda, p.stride_a),
            (p.b_type, p.b_rows(), p.b_cols(), p.ldb, p.stride_b),
            (p.c_type, p.m, p.n, p.ldc, p.stride_c),
            (p.d_type, p.m, p.n, p.ldd, p.stride_d),
        ];
        for (i, (ty, rows, cols, ld, stride)) in operands.into_iter().enumerate() {
            check_blas("hipblasLtMatrixLayoutCreate", unsafe {
                (api.matrix_layout_create)(
                    &mut plan.layouts[i],
                    hip_data_type(ty, arch),
                    rows as u64,
                    cols as u64,
                    ld,
                )
            })?;
            if p.batch > 1 {
                let count = i32::try_from(p.batch)
                    .map_err(|_| HipError::Invalid(format!("batch {} too large", p.batch)))?;
                check_blas("hipblasLtMatrixLayoutSetAttribute", unsafe {
                    (api.matrix_layout_set_attribute)(
                        plan.layouts[i],
                        sys::HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                        (&count as *const i32).cast(),
                        4,
                    )
                })?;
                check_blas("hipblasLtMatrixLayoutSetAttribute", unsafe {
                    (api.matrix_layout_set_attribute)(
                        plan.layouts[i],
                        sys::HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                        (&stride as *const i64).cast(),
                        8,
                    )
                })?;
            }
        }
        check_blas("hipblasLtMatmulPreferenceCreate", unsafe {
            (api.preference_create)(&mut plan.pref)
        })?;
        let max_ws: u64 = WORKSPACE_BYTES;
        check_blas("hipblasLtMatmulPreferenceSetAttribute", unsafe {
            (api.preference_set_attribute)(
                plan.pref,
                sys::HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&max_ws as *const u64).cast(),
                8,
            )
        })?;
        let mut results = [BlasLtHeuristicResult::default(); 1];
        let mut found: c_int = 0;
        check_blas("hipblasLtMatmulAlgoGetHeuristic", unsafe {
            (api.algo_get_heuristic)(
                self.handle,
                plan.desc,
                plan.layouts[0],
                plan.layouts[1],
                plan.layouts[2],
                plan.layouts[3],
                plan.pref,
                1,
                results.as_mut_ptr(),
                &mut found,
            )
        })?;
        if found < 1 || results[0].state != 0 {
            return Err(HipError::BlasLt {
                call: "hipblasLtMatmulAlgoGetHeuristic (no algorithm for this problem)",
                code: if found < 1 { 7 } else { results[0].state },
            });
        }
        plan.algo = results[0].algo;
        plan.workspace_bytes = results[0].workspace_size as u64;
        if plan.workspace_bytes > 0 {
            plan.workspace = Some(gpu.alloc(plan.workspace_bytes)?);
        }
        Ok(plan)
    }
}

impl Drop for BlasLt {
    fn drop(&mut self) {
        // SAFETY: created once; every plan holding the handle is dropped first because the
        // device drops its plan before the library.
        unsafe { (self.api.destroy)(self.handle) };
    }
}

/// The `hipDataType` of an operand. 8-bit floats are the fnuz variants on gfx94x and the
/// OCP variants on gfx950 and later.
pub fn hip_data_type(t: DataType, arch: &str) -> c_int {
    let fnuz = arch.starts_with("gfx94");
    match t {
        DataType::F32 => sys::HIP_R_32F,
        DataType::F16 => sys::HIP_R_16F,
        DataType::Bf16 => sys::HIP_R_16BF,
        DataType::F8 if fnuz => sys::HIP_R_8F_E4M3_FNUZ,
        DataType::F8 => sys::HIP_R_8F_E4M3,
        DataType::Bf8 if fnuz => sys::HIP_R_8F_E5M2_FNUZ,
        DataType::Bf8 => sys::HIP_R_8F_E5M2,
    }
}

/// Descriptors and the chosen algorithm for one problem; destroyed on drop.
pub struct MatmulPlan {
    api: Arc<BlasLtApi>,
    handle: BlasLtHandle,
    desc: sys::BlasLtMatmulDesc,
    layouts: [sys::BlasLtMatrixLayout; 4],
    pref: sys::BlasLtPreference,
    algo: sys::BlasLtMatmulAlgo,
    workspace: Option<DeviceBuffer>,
    workspace_bytes: u64,
}

impl MatmulPlan {
    /// Enqueues `D = alpha * op(A) op(B) + beta * C` on the null stream.
    pub fn run(
        &self,
        a: u64,
        b: u64,
        c: u64,
        d: u64,
        alpha: f32,
        beta: f32,
    ) -> Result<(), HipError> {
        let ws = self
            .workspace
            .as_ref()
            .map_or(std::ptr::null_mut(), |w| w.as_ptr());
        // SAFETY: descriptors are alive; addresses are device buffers sized for the problem;
        // alpha and beta are host scalars (the default pointer mode).
        check_blas("hipblasLtMatmul", unsafe {
            (self.api.matmul)(
                self.handle,
                self.desc,
                (&alpha as *const f32).cast(),
                a as *const c_void,
                self.layouts[0],
                b as *const c_void,
                self.layouts[1],
                (&beta as *const f32).cast(),
                c as *const c_void,
                self.layouts[2],
                d as *mut c_void,
                self.layouts[3],
                &self.algo,
                ws,
                self.workspace_bytes as usize,
                std::ptr::null_mut(),
            )
        })
    }
}

impl Drop for MatmulPlan {
    fn drop(&mut self) {
        // SAFETY: each object was created at most once; null ones were never created.
        unsafe {
            if !self.pref.is_null() {
                (self.api.preference_destroy)(self.pref);
            }
            for l in self.layouts {
                if !l.is_null() {
                    (self.api.matrix_layout_destroy)(l);
                }
            }
            if !self.desc.is_null() {
                (self.api.matmul_desc_destroy)(self.desc);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_types_follow_the_arch() {
        assert_eq!(
            hip_data_type(DataType::F8, "gfx942"),
            sys::HIP_R_8F_E4M3_FNUZ
        );
        assert_eq!(hip_data_type(DataType::F8, "gfx950"), sys::HIP_R_8F_E4M3);
        assert_eq!(hip_data_type(DataType::Bf16, "gfx90a"), sys::HIP_R_16BF);
    }
}
