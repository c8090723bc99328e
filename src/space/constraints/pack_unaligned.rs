//! Operands copied into aligned rows before the main kernel (PackUnaligned): which operands
//! a problem offers for it and what a config may ask (kernels/loader/gt_pack_kernel.h; the
//! launch side is `packed_operands`).
//!
//! Rule: `pack-unaligned`.

use super::atom::is_wgmma;
use super::warpgroup::{
    operand_names, operand_subsets, tma_rows_copyable, tma_rows_unaligned, PACK_A, PACK_B,
};
use super::{fail, Violation};
use crate::problem::GemmProblem;
use crate::space::config::KernelConfig;

/// The operands of `p` whose rows the tensor maps read in place but start on 16-byte and not
/// 32-byte boundaries, as PackUnaligned's bit set (A = 1, B = 2).
pub fn unaligned_operands(p: &GemmProblem) -> u32 {
    u32::from(tma_rows_unaligned(p, true)) * PACK_A
        + u32::from(tma_rows_unaligned(p, false)) * PACK_B
}

/// The operands of `p` that PackUnaligned may copy (`tma_rows_copyable`), as its bit set.
fn copyable_operands(p: &GemmProblem) -> u32 {
    u32::from(tma_rows_copyable(p, true)) * PACK_A + u32::from(tma_rows_copyable(p, false)) * PACK_B
}

/// The PackUnaligned values a problem offers: every subset of its copyable operands.
pub fn pack_unaligned_values(p: &GemmProblem) -> Vec<i64> {
    operand_subsets(copyable_operands(p))
}

/// `pack-unaligned`: PackUnaligned copies operands for the warpgroup path's tensor maps, and
/// only those whose rows are 16-byte but not 32-byte aligned, or an N-major B in rows that
/// are not whole 128-byte lines (an operand the maps cannot read at all is packed whatever
/// the config says; a K-major one of aligned rows gains nothing).
pub(super) fn pack_unaligned(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    let rule = "pack-unaligned";
    if c.pu == 0 {
        return Ok(());
    }
    if c.pu > PACK_A + PACK_B {
        return fail(
            rule,
            format!("PackUnaligned is 0, 1 (A), 2 (B) or 3 (both), not {}", c.pu),
        );
    }
    if !is_wgmma(c) {
        return fail(
            rule,
            "PackUnaligned copies operands for the Hopper warpgroup path's tensor maps: MI64x8x16/MI64x8x32/MI64x8x8 only".into(),
        );
    }
    let extra = c.pu & !copyable_operands(p);
    if extra != 0 {
        let which = operand_names(extra);
        return fail(
            rule,
            format!("PackUnaligned={} asks to copy {which}, which the tensor maps read in place at no extra cost (rows aligned to 32 bytes, and no N-major B off the 128-byte lines)", c.pu),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Trans;

    #[test]
    fn offers_the_subsets_of_the_unaligned_operands() {
        // K = 3000 in bf16: both TN operands have rows of 6000 bytes.
        assert_eq!(
            pack_unaligned_values(&GemmProblem::new(512, 512, 3000)),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            pack_unaligned_values(&GemmProblem::new(512, 512, 3008)),
            vec![0]
        );
        // NN: A is M-major with lda = M = 1000 (2000 bytes), B K-major with ldb = K = 4096.
        let nn = GemmProblem::with_layout(1000, 512, 4096, Trans::N, Trans::N);
        assert_eq!(unaligned_operands(&nn), PACK_A);
        assert_eq!(pack_unaligned_values(&nn), vec![0, 1]);
        // K = 3001: rows the tensor maps cannot read at all; they are packed anyway.
        assert_eq!(
            pack_unaligned_values(&GemmProblem::new(512, 512, 3001)),
            vec![0]
        );
    }
}
