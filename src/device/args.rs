//! The argument block passed by value to every generated kernel; mirrors `kernels/gt_args.h`.

use crate::problem::GemmProblem;

/// `struct GtTensorMap` from `kernels/gt_args.h`: a CUDA tensor map's 128 opaque bytes.
#[repr(C, align(128))]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TensorMap(pub [u64; 16]);

/// `struct GtGemmArgs` from `kernels/gt_args.h`, field for field.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmArgs {
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub d: u64,
    pub workspace: u64,
    /// Stream-K arrival counts (u32 per tile), all zero between launches.
    pub flags: u64,
    pub alpha: f32,
    pub beta: f32,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub lda: i64,
    pub ldb: i64,
    pub ldc: i64,
    pub ldd: i64,
    pub stride_a: i64,
    pub stride_b: i64,
    pub stride_c: i64,
    pub stride_d: i64,
    pub batch: i32,
    pub pad: i32,
    /// Tensor maps of A and B for kernels that load through the tensor memory accelerator
    /// (set by the CUDA backend when the launch plan asks for them; zero otherwise).
    pub tma_a: TensorMap,
    pub tma_b: TensorMap,
    /// Tensor map of D for kernels that store through it (persistent kernels).
    pub tma_d: TensorMap,
    /// Tensor map of C for those kernels where beta reads C.
    pub tma_c: TensorMap,
}

impl GemmArgs {
    /// Arguments for `p` with the given device addresses.
    /// `workspace` and `flags` come from [`crate::compile::LaunchPlan`]'s `workspace_bytes` and
    /// `flags_bytes` (0 when the plan needs none).
    pub fn new(
        p: &GemmProblem,
        a: u64,
        b: u64,
        c: u64,
        d: u64,
        workspace: u64,
        flags: u64,
    ) -> Self {
        GemmArgs {
            a,
            b,
            c,
            d,
            workspace,
            flags,
            alpha: p.alpha_eff() as f32,
            beta: p.beta_eff() as f32,
            m: p.m,
            n: p.n,
            k: p.k,
            lda: p.lda,
            ldb: p.ldb,
            ldc: p.ldc,
            ldd: p.ldd,
            stride_a: p.stride_a,
            stride_b: p.stride_b,
            stride_c: p.stride_c,
            stride_d: p.stride_d,
            batch: p.batch as i32,
            pad: 0,
            tma_a: TensorMap::default(),
            tma_b: TensorMap::default(),
            tma_d: TensorMap::default(),
            tma_c: TensorMap::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn layout_matches_the_c_header() {
        // 6 pointers + 2 floats + 11 i64 + 2 i32 = 48 + 8 + 88 + 8 = 152, padded to 256 for
        // the four 128-byte-aligned 128-byte tensor maps.
        assert_eq!(std::mem::size_of::<super::GemmArgs>(), 768);
        assert_eq!(std::mem::align_of::<super::GemmArgs>(), 128);
        assert_eq!(std::mem::offset_of!(super::GemmArgs, tma_a), 256);
        assert_eq!(std::mem::offset_of!(super::GemmArgs, tma_d), 512);
        assert_eq!(std::mem::offset_of!(super::GemmArgs, tma_c), 640);
    }
}
