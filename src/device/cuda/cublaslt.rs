//! The vendor baseline: one cuBLASLt matmul plan for a problem (layouts, types, the
//! heuristic's best algorithm for our workspace), built once per problem and launched like a
//! kernel so it is verified and timed exactly as generated kernels are.
//!
//! Mapping: cuBLASLt is column-major like BLAS, so the problem's stored matrices describe
//! themselves directly: A is `lda x cols(A)` with opA = T when transA = T, likewise B; C and D
//! are M x N. Strided batches use the layouts' batch count and stride attributes.

use std::ffi::c_void;

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys;
use cudarc::driver::sys::CUstream;

use crate::problem::{ComputeType, DataType, GemmProblem};

/// A cuBLASLt failure, as text (status name).
pub type LtError = String;

fn err(what: &str, e: lt::CublasError) -> LtError {
    format!("{what}: {:?}", e.0)
}

fn data_type(t: DataType) -> Result<sys::cudaDataType, LtError> {
    Ok(match t {
        DataType::Bf16 => sys::cudaDataType::CUDA_R_16BF,
        DataType::F16 => sys::cudaDataType::CUDA_R_16F,
        DataType::F32 => sys::cudaDataType::CUDA_R_32F,
        DataType::F8 => sys::cudaDataType::CUDA_R_8F_E4M3,
        DataType::Bf8 => sys::cudaDataType::CUDA_R_8F_E5M2,
    })
}

/// Everything `cublasLtMatmul` needs besides the data pointers.
pub struct LtPlan {
    handle: sys::cublasLtHandle_t,
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 4],
    algo: sys::cublasLtMatmulAlgo_t,
    workspace_bytes: usize,
    alpha: f32,
    beta: f32,
    /// With beta == 0 no C buffer exists: D (and D's layout) stands in for it.
    c_is_d: bool,
}

impl LtPlan {
    /// True when libcublasLt can be loaded.
    pub fn available() -> bool {
        // SAFETY: only probes whether the shared library can be opened.
        unsafe { sys::is_culib_present() }
    }

    /// Builds the plan; `max_workspace` bounds the algorithm's workspace.
    pub fn new(p: &GemmProblem, max_workspace: usize) -> Result<Self, LtError> {
        let handle = lt::create_handle().map_err(|e| err("cublasLtCreate", e))?;
        let mut plan = LtPlan {
            handle,
            desc: std::ptr::null_mut(),
            layouts: [std::ptr::null_mut(); 4],
            algo: sys::cublasLtMatmulAlgo_t { data: [0; 8] },
            workspace_bytes: 0,
            // Per-tensor scales folded in, as for our kernels: the same D.
            alpha: p.alpha_eff() as f32,
            beta: p.beta_eff() as f32,
            c_is_d: p.beta == 0.0,
        };
        // c_xf32_r lets the library read f32 inputs as tf32, as our warpgroup kernels do.
        let compute = if p.compute_type == ComputeType::Xf32 {
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32
        } else {
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F
        };
        plan.desc = lt::create_matmul_desc(compute, sys::cudaDataType::CUDA_R_32F)
            .map_err(|e| err("cublasLtMatmulDescCreate", e))?;
        for (attr, t) in [
            (
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                p.trans_a,
            ),
            (
                sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSB,
                p.trans_b,
            ),
        ] {
            // cublasOperation_t: 0 = N, 1 = T.
            let op: i32 = i32::from(t.is_t());
            // SAFETY: the descriptor is live and the value is a 4-byte cublasOperation_t.
            unsafe {
                lt::set_matmul_desc_attribute(
                    plan.desc,
                    attr,
                    &op as *const i32 as *const c_void,
                    4,
                )
            }
            .map_err(|e| err("cublasLtMatmulDescSetAttribute", e))?;
        }
        if p.a_type.is_8bit() {
            // 8-bit inputs: the kernels gemmtune generates accumulate each product in the
            // tensor cores' own precision over all of K, which is cuBLASLt's fast
            // accumulation; ask for the same, so both compute D to the same precision.
            let fast: i8 = 1;
            // SAFETY: the descriptor is live and the value is a 1-byte int8_t.
            unsafe {
                lt::set_matmul_desc_attribute(
                    plan.desc,
                    sys::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                    &fast as *const i8 as *const c_void,
                    1,
                )
            }
            .map_err(|e| err("cublasLtMatmulDescSetAttribute", e))?;
        }
        let c_type = if plan.c_is_d { p.d_type } else { p.c_type };
        let (ldc, stride_c) = if plan.c_is_d {
            (p.ldd, p.stride_d)
        } else {
            (p.ldc, p.stride_c)
        };
        let shapes = [
            (p.a_type, p.a_rows(), p.a_cols(), p.lda, p.stride_a),
            (p.b_type, p.b_rows(), p.b_cols(), p.ldb, p.stride_b),
            (c_type, p.m, p.n, ldc, stride_c),
            (p.d_type, p.m, p.n, p.ldd, p.stride_d),
        ];
        for (i, (t, rows, cols, ld, stride)) in shapes.into_iter().enumerate() {
            let l = lt::create_matrix_layout(data_type(t)?, rows as u64, cols as u64, ld)
                .map_err(|e| err("cublasLtMatrixLayoutCreate", e))?;
            plan.layouts[i] = l;
            if p.batch > 1 {
                let count = p.batch as i32;
                // SAFETY: live layout; values are an i32 count and an i64 stride.
                unsafe {
                    lt::set_matrix_layout_attribute(
                        l,
                        sys::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                        &count as *const i32 as *const c_void,
                        4,
                    )
                    .and_then(|_| {
                        lt::set_matrix_layout_attribute(
                            l,
                            sys::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                            &stride as *const i64 as *const c_void,
                            8,
                        )
                    })
                }
                .map_err(|e| err("cublasLtMatrixLayoutSetAttribute", e))?;
            }
        }
        let pref =
            lt::create_matmul_pref().map_err(|e| err("cublasLtMatmulPreferenceCreate", e))?;
        let ws = max_workspace as u64;
        // SAFETY: live preference; the value is a u64 byte count.
        let heuristic = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                &ws as *const u64 as *const c_void,
                8,
            )
            .and_then(|_| {
                lt::get_matmul_algo_heuristic(
                    plan.handle,
                    plan.desc,
                    plan.layouts[0],
                    plan.layouts[1],
                    plan.layouts[2],
                    plan.layouts[3],
                    pref,
                )
            })
        };
        // SAFETY: created above, destroyed once.
        let _ = unsafe { lt::destroy_matmul_pref(pref) };
        let h = heuristic.map_err(|e| err("cublasLtMatmulAlgoGetHeuristic", e))?;
        plan.algo = h.algo;
        plan.workspace_bytes = h.workspaceSize;
        Ok(plan)
    }

    pub fn workspace_bytes(&self) -> usize {
        self.workspace_bytes
    }

    /// Enqueues D = alpha * op(A) op(B) + beta * C on `stream`.
    ///
    /// # Safety
    /// The addresses must be device buffers large enough for the problem the plan was built
    /// for, and the workspace at least `workspace_bytes()`.
    pub unsafe fn launch(
        &self,
        a: u64,
        b: u64,
        c: u64,
        d: u64,
        workspace: u64,
        stream: CUstream,
    ) -> Result<(), LtError> {
        let c_ptr = if self.c_is_d { d } else { c };
        lt::matmul(
            self.handle,
            self.desc,
            &self.alpha as *const f32 as *const c_void,
            &self.beta as *const f32 as *const c_void,
            a as *const c_void,
            self.layouts[0],
            b as *const c_void,
            self.layouts[1],
            c_ptr as *const c_void,
            self.layouts[2],
            d as *mut c_void,
            self.layouts[3],
            &self.algo,
            workspace as *mut c_void,
            self.workspace_bytes,
            stream as sys::cudaStream_t,
        )
        .map_err(|e| err("cublasLtMatmul", e))
    }
}

impl Drop for LtPlan {
    fn drop(&mut self) {
        // SAFETY: each object was created by this plan (or is null) and is destroyed once.
        unsafe {
            for l in self.layouts {
                if !l.is_null() {
                    let _ = lt::destroy_matrix_layout(l);
                }
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
            let _ = lt::destroy_handle(self.handle);
        }
    }
}
