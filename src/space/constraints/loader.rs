//! Operand loaders: global memory to LDS in whole vectors (tensor-memory boxes, `cp.async`,
//! plain vector loads, AMD global-to-LDS). Mirrors the operand loader part of the kernel
//! template; the tensor-map conditions of the warpgroup path are in [`super::warpgroup`].
//!
//! Rules: `global-read` (vectors of at most 16 bytes that tile DepthU) and `alignment` (the
//! leading dimensions and batch strides keep every vector aligned).

use super::atom::is_wgmma;
use super::{fail, Violation};
use crate::problem::GemmProblem;
use crate::space::config::KernelConfig;

/// `global-read`: whole vectors of at most 16 bytes. Tiles need not divide evenly among the
/// threads: the last load round of the template is partial then.
pub(super) fn global_read(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    let ea = p.a_type.bytes() as u32;
    if c.grvw * ea > 16 || !c.grvw.is_power_of_two() {
        return fail(
            "global-read",
            format!(
                "GlobalReadVectorWidth {} x {} bytes must be a power of two of at most 16 bytes",
                c.grvw, ea
            ),
        );
    }
    if !c.depth_u.is_multiple_of(c.grvw) {
        return fail(
            "global-read",
            "DepthU must be a multiple of GlobalReadVectorWidth".into(),
        );
    }
    Ok(())
}

/// Whether vectors of `grvw` elements of A and B start aligned in every column and every
/// batch: the leading dimensions (and, batched, the strides) are multiples of it.
pub fn reads_aligned(p: &GemmProblem, grvw: i64) -> bool {
    let grvw = grvw.max(1);
    p.lda % grvw == 0
        && p.ldb % grvw == 0
        && (p.batch <= 1 || (p.stride_a % grvw == 0 && p.stride_b % grvw == 0))
}

/// `alignment`: every vector load starts aligned, in every column and every batch. The
/// warpgroup path loads through tensor maps instead, and packs what they cannot read.
pub(super) fn alignment(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    if is_wgmma(c) || reads_aligned(p, c.grvw as i64) {
        return Ok(());
    }
    if p.lda % c.grvw as i64 != 0 || p.ldb % c.grvw as i64 != 0 {
        return fail(
            "alignment",
            format!(
                "lda={} and ldb={} must be multiples of GlobalReadVectorWidth {} for aligned vector loads",
                p.lda, p.ldb, c.grvw
            ),
        );
    }
    fail(
        "alignment",
        "batch strides of A and B must be multiples of GlobalReadVectorWidth".into(),
    )
}
