//! K-contiguous operands copied M- or N-major before the main kernel (PackMNMajor, the FMA
//! path), and M- or N-contiguous ones whose rows start off the 16-byte grid copied into
//! aligned rows as they lie: which operands a problem offers for it, what a config may ask,
//! and the problem the main kernel then reads (kernels/loader/gt_pack_kernel.h; the launch
//! side is `packed_operands`).
//!
//! The FMA mainloop keeps both operand tiles MN-major in LDS. An operand that is M- or
//! N-contiguous in memory lands there by cp.async as it lies; a K-contiguous one travels
//! through registers and is written transposed, which costs the mainloop registers, issue
//! slots and the latency of the reads before the writes. Copied MN-major first, the operand
//! costs one more read and write of itself instead. An M- or N-contiguous operand whose rows
//! (leading dimension 4095 in f32) or batches start off the 16-byte grid lands by 4-byte
//! copies only; its aligned copy takes 16-byte ones (H200, 4095^3 NT f32: 3751 us in 4-byte
//! vectors against cuBLASLt's 2658, where 4096^3 runs 2662).
//!
//! Rule: `pack-mn-major`.

use std::borrow::Cow;

use super::loader::operand_reads_aligned;
use super::warpgroup::{operand_names, operand_subsets, PACK_A, PACK_B};
use super::{fail, Violation};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;
use crate::space::config::KernelConfig;

/// The operands of `p` stored K-contiguous, as PackMNMajor's bit set (A = 1, B = 2).
fn k_contiguous_operands(p: &GemmProblem) -> u32 {
    u32::from(p.k_contiguous(true)) * PACK_A + u32::from(p.k_contiguous(false)) * PACK_B
}

/// The operands PackMNMajor may copy: the K-contiguous ones, and the M- or N-contiguous ones
/// whose rows or batches start off the 16-byte grid.
fn copyable_operands(p: &GemmProblem) -> u32 {
    let off_grid = |is_a: bool, bit: u32| {
        let t = if is_a { p.a_type } else { p.b_type };
        let vector = (16 / t.bytes().max(1)) as i64;
        if !p.k_contiguous(is_a) && !operand_reads_aligned(p, is_a, vector) {
            bit
        } else {
            0
        }
    };
    k_contiguous_operands(p) | off_grid(true, PACK_A) | off_grid(false, PACK_B)
}

/// The PackMNMajor values a problem offers on `hw`: every subset of the operands it can copy
/// ([`copyable_operands`]) on NVIDIA (whose backend runs the packing kernels), none
/// elsewhere.
pub fn pack_mn_major_values(p: &GemmProblem, hw: &HwSpec) -> Vec<i64> {
    if hw.vendor != Vendor::Nvidia {
        return vec![0];
    }
    operand_subsets(copyable_operands(p))
}

/// Which operands (A, B) `c` copies MN-major (with aligned rows) before its main kernel.
pub fn mn_packed_operands(c: &KernelConfig, p: &GemmProblem) -> [bool; 2] {
    if !c.on_fma_path() {
        return [false, false];
    }
    mn_copies(c.pm, p)
}

/// Which operands (A, B) a PackMNMajor of `pm` copies on the FMA path.
fn mn_copies(pm: u32, p: &GemmProblem) -> [bool; 2] {
    let copied = pm & copyable_operands(p);
    [copied & PACK_A != 0, copied & PACK_B != 0]
}

/// The problem the FMA path's main kernel reads with PackMNMajor = `pm`.
pub fn mn_packed_with(pm: u32, p: &GemmProblem) -> GemmProblem {
    let [a, b] = mn_copies(pm, p);
    p.with_mn_packed(a, b)
}

/// The problem `c`'s main kernel reads: `p` with the operands it copies MN-major replaced by
/// their copies.
pub fn mn_packed_problem<'a>(c: &KernelConfig, p: &'a GemmProblem) -> Cow<'a, GemmProblem> {
    let [a, b] = mn_packed_operands(c, p);
    if a || b {
        Cow::Owned(p.with_mn_packed(a, b))
    } else {
        Cow::Borrowed(p)
    }
}

/// `pack-mn-major`: PackMNMajor copies K-contiguous operands, and M- or N-contiguous ones off
/// the 16-byte grid, for the FMA path, on NVIDIA.
pub(super) fn pack_mn_major(
    c: &KernelConfig,
    p: &GemmProblem,
    hw: &HwSpec,
) -> Result<(), Violation> {
    let rule = "pack-mn-major";
    if c.pm == 0 {
        return Ok(());
    }
    if c.pm > PACK_A + PACK_B {
        return fail(
            rule,
            format!("PackMNMajor is 0, 1 (A), 2 (B) or 3 (both), not {}", c.pm),
        );
    }
    if !c.on_fma_path() {
        return fail(
            rule,
            "PackMNMajor copies operands for the FMA path (f32 inputs): MatrixInstruction 1x1x1 without Gemv only".into(),
        );
    }
    if hw.vendor != Vendor::Nvidia {
        return fail(
            rule,
            "PackMNMajor runs its packing kernels on NVIDIA only (the HIP backend launches no packing kernels)".into(),
        );
    }
    let extra = c.pm & !copyable_operands(p);
    if extra != 0 {
        let which = operand_names(extra);
        return fail(
            rule,
            format!(
                "PackMNMajor={} asks to copy {which}, which is already M- or N-contiguous with rows on the 16-byte grid",
                c.pm
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{DataType, Trans};

    fn f32_problem(ta: Trans, tb: Trans) -> GemmProblem {
        let mut p = GemmProblem::with_layout(4096, 4096, 4096, ta, tb);
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        p
    }

    #[test]
    fn offers_the_subsets_of_the_k_contiguous_operands_on_nvidia() {
        let h200 = HwSpec::by_name("H200").unwrap();
        let mi300 = HwSpec::by_name("mi300x").unwrap();
        let tn = f32_problem(Trans::T, Trans::N);
        assert_eq!(pack_mn_major_values(&tn, &h200), vec![0, 1, 2, 3]);
        assert_eq!(pack_mn_major_values(&tn, &mi300), vec![0]);
        assert_eq!(
            pack_mn_major_values(&f32_problem(Trans::N, Trans::N), &h200),
            vec![0, 2]
        );
        assert_eq!(
            pack_mn_major_values(&f32_problem(Trans::T, Trans::T), &h200),
            vec![0, 1]
        );
        assert_eq!(
            pack_mn_major_values(&f32_problem(Trans::N, Trans::T), &h200),
            vec![0]
        );
        // M- and N-contiguous operands whose rows start off the 16-byte grid: lda = ldb =
        // 4095 in NT, and a batch stride of 4095 x 4096 + 1 for B.
        let mut nt = f32_problem(Trans::N, Trans::T);
        (nt.m, nt.n, nt.lda, nt.ldb) = (4095, 4095, 4095, 4095);
        assert_eq!(pack_mn_major_values(&nt, &h200), vec![0, 1, 2, 3]);
        assert_eq!(pack_mn_major_values(&nt, &mi300), vec![0]);
        let mut batched = f32_problem(Trans::N, Trans::T);
        batched.batch = 2;
        batched.stride_a = 4096 * 4096;
        batched.stride_b = 4096 * 4096 + 1;
        assert_eq!(pack_mn_major_values(&batched, &h200), vec![0, 2]);
    }

    #[test]
    fn off_grid_mn_contiguous_copies_keep_their_layout_on_aligned_rows() {
        let mut p = f32_problem(Trans::N, Trans::T);
        (p.m, p.lda) = (1001, 1001);
        let c = KernelConfig::parse(
            "MT256x128x16_MI1x1x1_WG4x2_PGR4_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0_PM1",
        )
        .unwrap();
        assert_eq!(mn_packed_operands(&c, &p), [true, false]);
        let q = mn_packed_problem(&c, &p);
        assert!(!q.k_contiguous(true) && !q.k_contiguous(false));
        assert_eq!((q.lda, q.ldb), (1024, 4096));
    }

    #[test]
    fn the_main_kernel_reads_the_copies_mn_major_with_aligned_rows() {
        let mut p = f32_problem(Trans::T, Trans::N);
        p.m = 1000;
        p.batch = 3;
        let c = KernelConfig::parse(
            "MT256x128x16_MI1x1x1_WG4x2_PGR4_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0_PM3",
        )
        .unwrap();
        let q = mn_packed_problem(&c, &p);
        assert!(!q.k_contiguous(true) && !q.k_contiguous(false));
        // 1000 rows of f32 round up to whole 128-byte lines: 1024; N = 4096 already is.
        assert_eq!((q.lda, q.ldb), (1024, 4096));
        assert_eq!((q.stride_a, q.stride_b), (1024 * 4096, 4096 * 4096));
        // Only the asked operands: B alone.
        let b_only = KernelConfig { pm: 2, ..c };
        let q = mn_packed_problem(&b_only, &p);
        assert!(q.k_contiguous(true) && !q.k_contiguous(false));
        assert_eq!(q.lda, p.lda);
    }

    #[test]
    fn refuses_other_paths_vendors_and_operands() {
        let h200 = HwSpec::by_name("H200").unwrap();
        let mi300 = HwSpec::by_name("mi300x").unwrap();
        let fma = KernelConfig::parse(
            "MT256x128x16_MI1x1x1_WG4x2_PGR4_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0_PM1",
        )
        .unwrap();
        let tn = f32_problem(Trans::T, Trans::N);
        assert!(pack_mn_major(&fma, &tn, &h200).is_ok());
        assert!(pack_mn_major(&fma, &tn, &mi300).is_err());
        // NT: A is M-contiguous already.
        let nt = f32_problem(Trans::N, Trans::T);
        let err = pack_mn_major(&fma, &nt, &h200).unwrap_err();
        assert!(err.message.contains("already"), "{err}");
        let wgmma = KernelConfig {
            mi: [64, 8, 16],
            ..fma
        };
        assert!(pack_mn_major(&wgmma, &tn, &h200).is_err());
    }
}
