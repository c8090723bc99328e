//! Tensor maps for kernels that load their operand tiles through the Hopper tensor memory
//! accelerator (launch plans with `tma_rows`): A and B described as 3-D tensors (K, rows,
//! batch) with K contiguous, read in boxes of 64 K elements (128 bytes) by the tile's rows,
//! written to LDS with the 128-byte swizzle the kernel's wgmma descriptors expect.

use cudarc::driver::sys;

use crate::device::args::TensorMap;
use crate::problem::{DataType, GemmProblem};

/// K elements per box: one 128-byte swizzle row of 16-bit elements.
const BOX_K: u32 = 64;

/// The tensor map of A (`rows` = MacroTile0) or B (`rows` = MacroTile1) at device address
/// `base`, for a TN problem (both operands K-contiguous).
pub fn operand_map(p: &GemmProblem, is_a: bool, base: u64, rows: u32) -> Result<TensorMap, String> {
    let (t, extent, ld, stride) = if is_a {
        (p.a_type, p.m, p.lda, p.stride_a)
    } else {
        (p.b_type, p.n, p.ldb, p.stride_b)
    };
    let dtype = match t {
        DataType::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        DataType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        other => return Err(format!("no tensor-map loads for {other:?} operands")),
    };
    let es = t.bytes() as u64;
    let batch = p.batch.max(1) as u64;
    // Strides of dimensions 1 and 2 in bytes; the batch stride must be a valid one even when
    // there is a single batch.
    let batch_stride = if batch > 1 {
        stride as u64
    } else {
        ld as u64 * extent as u64
    };
    let dims: [u64; 3] = [p.k as u64, extent as u64, batch];
    let strides: [u64; 2] = [ld as u64 * es, batch_stride * es];
    if !base.is_multiple_of(16) || strides.iter().any(|s| !s.is_multiple_of(16)) {
        return Err(format!(
            "tensor-map loads need 16-byte aligned rows: {} has leading dimension {ld} and batch stride {batch_stride}",
            if is_a { "A" } else { "B" }
        ));
    }
    let boxes: [u32; 3] = [BOX_K, rows, 1];
    let elem_strides: [u32; 3] = [1, 1, 1];
    let mut map = std::mem::MaybeUninit::<sys::CUtensorMap>::zeroed();
    // SAFETY: every array has the rank's length; `map` is written by the driver.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            map.as_mut_ptr(),
            dtype,
            3,
            base as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(format!("cuTensorMapEncodeTiled failed: {r:?}"));
    }
    // SAFETY: initialised by the successful call above.
    let map = unsafe { map.assume_init() };
    Ok(TensorMap(map.opaque))
}
