//! Operands the tensor memory accelerator cannot read in place: rows (or batches) that start
//! off the 16-byte grid, as a K-major f16 operand with K = 1500 has (rows of 3000 bytes). The
//! warpgroup path copies such an operand into aligned rows before its main kernel
//! (`constraints::packed_operands`), one more pass that reads and writes the whole operand.
//! Where the GEMM is bound by reading its operands, that pass costs about as much as the GEMM
//! itself. The warp-level path (mma.sync) reads the rows in place, in `cp.async` vectors as
//! wide as the rows allow; below 8 bytes a vector it loses to the copy.
//!
//! Measured on an H200, kernel against kernel, one call (cuBLASLt in brackets), f16, best
//! of the warpgroup default set / the warp-level 64x64x32 tile on four warps, four stages,
//! 8-byte vectors: Whisper's attention values, 64x1500x1500 x20 NN (B K-major) 82.2 / 60.3
//! [50.1], and its transpose 1500x64x1500 x20 TT (A K-major) 84.3 / 60.6 [99.7]. Larger tiles
//! ran slower there (64x128x32 on eight warps 64.9, 64x64x64 71.5-91.6). Compute-bound
//! problems keep the warpgroup path with the copy: 1500^3 x4 TN 89.4 against 216.9 for the
//! best warp-level tile, 4096x1500x1024 NT 28.3 against 88.8; and 2-byte vectors (ldb = 577)
//! lose at any size: 64x577x577 x192 NN 125.2 against 263.1 [145.7].
//!
//!   an operand off the 16-byte grid, vectors of 8 bytes or more, bound by memory
//!     -> the warp-level 64x64 tile, 64 bytes of K a stage, as deep as fits

use super::config::KernelConfig;
use super::constraints;
use super::param::{pack_mi, unpack_mi, ParamId};
use super::tuning_space::Space;

/// The narrowest read vector, in bytes, at which the warp-level path beats the copy.
const MIN_VECTOR_BYTES: i64 = 8;

impl Space {
    /// The warp-level start of a problem with an operand the tensor maps cannot read (module
    /// header): where this space holds the warpgroup instruction and a warp-level one of the
    /// same type, the operands' rows allow vectors of 8 bytes or more, and reading the
    /// operands once takes longer than the tensor cores' work at peak.
    pub fn unreadable_operand_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        if constraints::tma_readable(p, true) && constraints::tma_readable(p, false) {
            return None;
        }
        let warp_level = self.warp_level_beside_warpgroup()?;
        let compute_s = p.flops() / (self.hw.peak_tflops_of(p) * 1e12);
        let memory_s = p.min_bytes() / (self.hw.memory_bandwidth_gbps * 1e9);
        if memory_s < compute_s {
            return None;
        }
        let ea = p.a_type.bytes() as i64;
        let grvw = self.widest_read(16 / ea.max(1));
        if grvw * ea < MIN_VECTOR_BYTES {
            return None;
        }
        let ed = p.d_type.bytes() as i64;
        let space = self.with_deepest_pipeline(
            &[
                (ParamId::MacroTile0, 64),
                (ParamId::MacroTile1, 64),
                (ParamId::DepthU, 64 / ea),
                (ParamId::MatrixInstruction, warp_level),
                (ParamId::WavesM, 2),
                (ParamId::WavesN, 2),
                (ParamId::PrefetchLocalRead, 1),
                (ParamId::LdsSwizzle, 1),
                (ParamId::LdsPadA, 0),
                (ParamId::LdsPadB, 0),
                (ParamId::GlobalSplitU, 1),
                (ParamId::WorkGroupMapping, 8),
                (ParamId::GlobalReadVectorWidth, grvw),
                (
                    ParamId::StoreVectorWidth,
                    self.widest_store((16 / ed).max(1)),
                ),
            ]
            .into_iter()
            .chain(PLAIN_WARP_LEVEL)
            .collect::<Vec<_>>(),
        )?;
        Some(space.raw_default())
    }

    /// The warp-level (mma.sync) instruction of this space, where it holds the warpgroup
    /// instruction of the problem's type beside it: the instruction of the starts that read
    /// operands the tensor maps cannot (this file's and small_batch.rs's).
    pub(super) fn warp_level_beside_warpgroup(&self) -> Option<i64> {
        let instructions = &self.domain(ParamId::MatrixInstruction).values;
        if !instructions.contains(&pack_mi(constraints::wgmma_mi(self.problem.a_type))) {
            return None;
        }
        instructions
            .iter()
            .copied()
            .find(|&v| unpack_mi(v)[0] == 16)
    }
}

/// The parameters a plain warp-level kernel fixes: no producer warp, swap, persistent walk,
/// cluster, transposed LDS reads or operand copies (the starts that read operands in place).
pub(super) const PLAIN_WARP_LEVEL: [(ParamId, i64); 8] = [
    (ParamId::ProducerWarp, 0),
    (ParamId::SwapAB, 0),
    (ParamId::PersistentKernel, 0),
    (ParamId::ClusterN, 1),
    (ParamId::ClusterM, 1),
    (ParamId::TransposeLds, 0),
    (ParamId::PackUnaligned, 0),
    (ParamId::PackMnMajor, 0),
];

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::Space;

    /// An f16 problem of `batch` GEMMs in a layout, packed.
    fn f16(m: i64, n: i64, k: i64, batch: i64, ta: Trans, tb: Trans) -> GemmProblem {
        let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F16, DataType::F16, DataType::F16, DataType::F16);
        p.batch = batch;
        p.fill_defaults();
        p
    }

    fn start(p: &GemmProblem) -> Option<String> {
        let s = Space::for_problem(p, &HwSpec::by_name("H200").unwrap());
        let c = s.unreadable_operand_start()?;
        assert!(s.is_valid(&c), "{}", c.name());
        assert!(s.extra_starts().contains(&c), "{} is a start", c.name());
        Some(c.name())
    }

    #[test]
    fn memory_bound_problems_with_an_operand_off_the_grid_start_warp_level() {
        // Whisper's attention values: B K-major with ldb = 1500 (3000-byte rows).
        assert_eq!(
            start(&f16(64, 1500, 1500, 20, Trans::N, Trans::N)).as_deref(),
            Some("MT64x64x32_MI16x8x16_WG2x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW4_SVW8_SU0")
        );
        // The transpose: A K-major with lda = 1500, and D's rows 1500 apart (8-byte stores).
        assert_eq!(
            start(&f16(1500, 64, 1500, 20, Trans::T, Trans::T)).as_deref(),
            Some("MT64x64x32_MI16x8x16_WG2x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW4_SVW4_SU0")
        );
    }

    #[test]
    fn readable_compute_bound_or_narrow_vector_problems_keep_the_warpgroup_path() {
        // Every operand on the 16-byte grid.
        assert_eq!(start(&f16(64, 1504, 1504, 20, Trans::N, Trans::N)), None);
        // Off the grid, but bound by the tensor cores.
        assert_eq!(start(&f16(1500, 1500, 1500, 4, Trans::T, Trans::N)), None);
        // ldb = 577: 2-byte vectors.
        assert_eq!(start(&f16(64, 577, 577, 192, Trans::N, Trans::N)), None);
    }
}
