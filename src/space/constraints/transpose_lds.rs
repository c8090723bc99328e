//! TransposeLDS: what the loader that transposes an M- or N-contiguous operand into K-major
//! LDS packs needs (kernels/loader/gt_kpack_loader.h, kernels/layout/gt_kpack_tile.h).
//!
//! Rule: `transpose-lds`.

use super::atom::is_wgmma;
use super::{fail, Violation};
use crate::problem::GemmProblem;
use crate::space::config::KernelConfig;

/// Which operands TransposeLDS=1 transposes: those that are not K-contiguous in memory (A with
/// transA = N, B with transB = T).
pub fn transposed_operands(c: &KernelConfig, p: &GemmProblem) -> [bool; 2] {
    let on = c.tlds == 1;
    [on && !p.k_contiguous(true), on && !p.k_contiguous(false)]
}

/// `transpose-lds`: TransposeLDS=1 runs on the matrix-core LDS path (the warpgroup path's
/// descriptors read either major-ness, the FMA path wants MN-major tiles), needs an operand
/// to transpose, DepthU in whole 16-byte packs of K, and no padding on the transposed tile
/// (its swizzle is fixed).
pub(super) fn transpose_lds(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    let rule = "transpose-lds";
    if c.tlds == 0 {
        return Ok(());
    }
    if c.tlds > 1 {
        return fail(rule, format!("TransposeLDS is 0 or 1, not {}", c.tlds));
    }
    if !c.uses_matrix_cores() || is_wgmma(c) {
        return fail(
            rule,
            "TransposeLDS=1 is for the matrix-core LDS path (MFMA, mma.sync): not the FMA path (MI 1x1x1) or the Hopper warpgroup path".into(),
        );
    }
    let [a, b] = transposed_operands(c, p);
    if !a && !b {
        return fail(
            rule,
            "TransposeLDS=1 transposes an M- or N-contiguous operand; here A (transA = T) and B (transB = N) are both K-contiguous".into(),
        );
    }
    let kpack = 16 / p.a_type.bytes().max(p.b_type.bytes()).max(1) as u32;
    if !c.depth_u.is_multiple_of(kpack) {
        return fail(
            rule,
            format!(
                "TransposeLDS=1 packs K in 16 bytes ({kpack} elements): DepthU {} is not a multiple",
                c.depth_u
            ),
        );
    }
    if (a && c.lpa != 0) || (b && c.lpb != 0) {
        let which = if a && c.lpa != 0 {
            "LdsPadA"
        } else {
            "LdsPadB"
        };
        return fail(
            rule,
            format!("TransposeLDS=1 keeps the transposed tile unpadded (its 16-byte packs are swizzled): {which} must be 0"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Trans;

    fn cfg(name: &str) -> KernelConfig {
        KernelConfig::parse(name).unwrap()
    }

    #[test]
    fn transposes_only_mn_contiguous_operands_on_the_lds_matrix_path() {
        let nn = GemmProblem::with_layout(1024, 1024, 1024, Trans::N, Trans::N);
        let tn = GemmProblem::new(1024, 1024, 1024);
        let ok = cfg(
            "MT128x128x32_MI32x32x8_WG2x2_PGR2_PLR1_LPA0_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0_TLDS1",
        );
        assert_eq!(transpose_lds(&ok, &nn), Ok(()));
        assert_eq!(transposed_operands(&ok, &nn), [true, false]);
        let why = |c: &KernelConfig, p: &GemmProblem| transpose_lds(c, p).unwrap_err().message;
        assert!(
            why(&ok, &tn).contains("both K-contiguous"),
            "{}",
            why(&ok, &tn)
        );
        let padded = KernelConfig { lpa: 8, ..ok };
        assert!(why(&padded, &nn).contains("LdsPadA must be 0"));
        let shallow = KernelConfig { depth_u: 4, ..ok };
        assert!(why(&shallow, &nn).contains("DepthU 4"));
        let fma = KernelConfig {
            mi: [1, 1, 1],
            ..ok
        };
        assert!(why(&fma, &nn).contains("matrix-core LDS path"));
        let wgmma = cfg(
            "MT128x128x64_MI64x8x16_WG4x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_TLDS1",
        );
        assert!(why(&wgmma, &nn).contains("warpgroup path"));
        assert_eq!(
            transpose_lds(&KernelConfig { tlds: 0, ..padded }, &tn),
            Ok(())
        );
    }
}
