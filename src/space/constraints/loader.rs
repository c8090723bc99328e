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
    operand_reads_aligned(p, true, grvw) && operand_reads_aligned(p, false, grvw)
}

/// The same for A alone (`is_a`) or B alone.
pub fn operand_reads_aligned(p: &GemmProblem, is_a: bool, grvw: i64) -> bool {
    let grvw = grvw.max(1);
    let (ld, stride) = if is_a {
        (p.lda, p.stride_a)
    } else {
        (p.ldb, p.stride_b)
    };
    ld % grvw == 0 && (p.batch <= 1 || stride % grvw == 0)
}

/// The widest read vector up to `most` elements (a power of two) that keeps every read of `p`
/// aligned ([`reads_aligned`]).
pub fn widest_aligned_read(p: &GemmProblem, most: i64) -> i64 {
    let mut v = most.max(1);
    while v > 1 && !reads_aligned(p, v) {
        v /= 2;
    }
    v
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
