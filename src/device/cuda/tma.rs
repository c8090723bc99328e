//! Tensor maps for kernels that load their operand tiles through the Hopper tensor memory
//! accelerator (launch plans with `tma`): A and B described as 3-D tensors, (K, rows, batch)
//! for a K-major operand and (rows, K, batch) for an M- or N-major one, read in the boxes the
//! plan names and written to shared memory with the swizzle the kernel's wgmma descriptors
//! expect; and of D, (M, N, batch), for kernels that store their output tiles through one
//! (`tma_d`), and of C for those of them that read C (`tma_c`).

use cudarc::driver::sys;

use crate::compile::TmaBox;
use crate::device::args::TensorMap;
use crate::problem::{DataType, GemmProblem};
use crate::space::constraints;

/// The tensor map of A (`is_a`) or B at device address `base` for boxes `bx`.
pub fn operand_map(
    p: &GemmProblem,
    is_a: bool,
    base: u64,
    bx: &TmaBox,
) -> Result<TensorMap, String> {
    let (t, extent, ld, stride) = if is_a {
        (p.a_type, p.m, p.lda, p.stride_a)
    } else {
        (p.b_type, p.n, p.ldb, p.stride_b)
    };
    let name = if is_a { "A" } else { "B" };
    // The stored matrix is ld x cols; its contiguous dimension is K for a K-major operand.
    let (inner_dim, outer_dim) = if bx.k_major {
        (p.k as u64, extent as u64)
    } else {
        (extent as u64, p.k as u64)
    };
    encode(
        name,
        t,
        p.batch,
        [inner_dim, outer_dim],
        ld,
        stride,
        base,
        bx,
    )
}

/// The tensor map of D (M x N per batch, M contiguous) at `base`, for boxes `bx`.
pub fn output_map(p: &GemmProblem, base: u64, bx: &TmaBox) -> Result<TensorMap, String> {
    let dims = [p.m as u64, p.n as u64];
    encode("D", p.d_type, p.batch, dims, p.ldd, p.stride_d, base, bx)
}

/// The tensor map of C, laid out as D, at `base`, for boxes `bx`.
pub fn c_map(p: &GemmProblem, base: u64, bx: &TmaBox) -> Result<TensorMap, String> {
    let dims = [p.m as u64, p.n as u64];
    encode("C", p.c_type, p.batch, dims, p.ldc, p.stride_c, base, bx)
}

/// Encodes a 3-D tiled tensor map: `dims` (contiguous first) of each of `batch` matrices of
/// type `t`, leading dimension `ld`, batch stride `stride` (elements).
#[allow(clippy::too_many_arguments)]
fn encode(
    name: &str,
    t: DataType,
    batch: i64,
    dims: [u64; 2],
    ld: i64,
    stride: i64,
    base: u64,
    bx: &TmaBox,
) -> Result<TensorMap, String> {
    let dtype = match t {
        DataType::Bf16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        DataType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        DataType::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        // The copy moves bytes; the instruction reads them as e4m3 or e5m2.
        DataType::F8 | DataType::Bf8 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
    };
    let es = t.bytes() as u64;
    let batch = batch.max(1) as u64;
    let [inner_dim, outer_dim] = dims;
    // Strides of dimensions 1 and 2 in bytes; the batch stride must be a valid one even when
    // there is a single batch.
    let batch_stride = if batch > 1 {
        stride as u64
    } else {
        ld as u64 * outer_dim
    };
    let dims: [u64; 3] = [inner_dim, outer_dim, batch];
    let strides: [u64; 2] = [ld as u64 * es, batch_stride * es];
    if !base.is_multiple_of(16) || strides.iter().any(|s| !s.is_multiple_of(16)) {
        return Err(format!(
            "tensor maps need 16-byte aligned rows: {name} has leading dimension {ld} and batch stride {batch_stride}"
        ));
    }
    let swizzle = match bx.swizzle_bytes {
        128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        // A box that only warms the L2 (the persistent kernel's C ahead of a direct read).
        0 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        other => return Err(format!("no {other}-byte tensor-map swizzle")),
    };
    let promotion = l2_promotion(ld as u64 * es);
    let boxes: [u32; 3] = [bx.inner, bx.outer, 1];
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
            swizzle,
            promotion,
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

/// The L2 promotion of a tensor map whose rows are `row_bytes` apart. Rows that start on
/// 16-byte but not 32-byte boundaries (a leading dimension of 3000 in bf16) cross a 256-byte
/// promotion unit at every other row: with 256-byte promotion each box row then costs the L2
/// several requests, which bound the kernel; 128-byte promotion leaves them nearly as cheap as
/// aligned rows. Measured on an H200, same kernel (192x192 tiles, pairs along M):
/// 3072x3072x3000 TN 85.3 us with 256-byte promotion, 78.6 with 128-byte (77.2 for K = 3072
/// either way; cuBLASLt 76.6). Aligned rows ran alike with any promotion and keep 256 bytes.
/// The rule is the space's own definition of such rows (`constraints::rows_off_32_bytes`).
fn l2_promotion(row_bytes: u64) -> sys::CUtensorMapL2promotion {
    if constraints::rows_off_32_bytes(row_bytes as i64) {
        sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B
    } else {
        sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sys::CUtensorMapL2promotion::{
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B as P128, CU_TENSOR_MAP_L2_PROMOTION_L2_256B as P256,
    };

    #[test]
    fn rows_off_32_byte_boundaries_promote_128_bytes() {
        // bf16 rows of 3000 and 1000 elements, e4m3 rows of 4112: 16-byte aligned only.
        for bytes in [6000, 2000, 4112] {
            assert_eq!(l2_promotion(bytes), P128, "{bytes}");
        }
        // Rows on 32-byte boundaries or better keep 256-byte promotion.
        for bytes in [6016, 8192, 32, 4096 * 4] {
            assert_eq!(l2_promotion(bytes), P256, "{bytes}");
        }
    }
}
