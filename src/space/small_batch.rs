//! Many small batched GEMMs whose operand rows are off the 16-byte grid (a 33 x 33 f16 batch
//! has rows of 66 bytes, a 100 x 100 one of 200), in the space: starts whose tile is the
//! batch's own size.
//!
//! There the warpgroup default copies each such operand into aligned rows first and runs
//! tiles of 48 to 64 rows per batch, and the warp-level start of `unreadable.rs` runs 64 x 64
//! tiles, four to a 100 x 100 batch, each an edge tile whose loads all test their bounds.
//! What runs faster is one tile a batch, as small as the batch allows (16-row steps), on few
//! warps, so that many workgroups share a compute unit. Measured on an H200, kernel against
//! kernel (sweeps of 100-150 kernels), cuBLASLt in brackets:
//!
//! | GEMM | bench's default set before | the batch's tile |
//! |---|---|---|
//! | 33x33x33 x10000 NN f16 | 208.4 (warpgroup 48x64, copies) | 114.3 (48x48x16, two warps, three stages) [86.7] |
//! | 100x100x100 x5000 NN f16 | 340.3 (64x64 warp-level) | 220.8 (128x112x16, four warps, three stages) [156.8] |
//! | 17x17x17 x50000 bf16 | 252.3 (32x32x32, two warps) | 244.0 (32x32x32, one warp, two stages) [137.8] |
//! | 33x33x33 x10000 NN f32 | 235.8 (FMA 64x64x16) | 137.9 (FMA 48x48x8, four waves, two stages) [122.8] |
//!
//! cuBLASLt runs CUTLASS's 64x64 and 128x128 warp-level tiles there (`align1`, `align2`)
//! and the 64x64x8 FFMA tile in f32: the same kind of kernel. Ours still trails it; each of
//! our edge tiles tests the bounds of every element it loads and stores.
//!
//!   batches at most 128 x 128, a wave of them or more, an operand off the 16-byte grid
//!     -> 16-bit and 8-bit: the warp-level tile of the batch (16-row steps), 1-4 warps by
//!        its area, K in 16 or 32 a stage (whichever pads it less, 32 on a tie)
//!     -> f32 on the FMA path: the batch's tile where 48 pads it less than the batch tile
//!        (fma_batch.rs), 8 k a stage where that pads a short K less

use super::constraints;
use super::param::ParamId;
use super::tuning_space::{tile_count, Space};
use super::unreadable::PLAIN_WARP_LEVEL;
use super::KernelConfig;
use crate::hw::Vendor;

/// The largest batch (rows or columns) one warp-level tile covers.
const MOST: i64 = 128;
/// Outputs a warp of the warp-level tile is sized for: a 32x32 batch on one warp, 48x48 on
/// two, 128x112 on four.
const OUTPUTS_PER_WARP: i64 = 1024;
/// The f32 tile side the FMA batch tile (fma_batch.rs) lacks.
const FMA_FIT_SIDE: i64 = 48;
/// K below which the FMA fit start stages 8 k where that pads K less than 16 does.
const FMA_SHORT_K: i64 = 64;

impl Space {
    /// The starts of a problem of many small batches with an operand off the 16-byte grid
    /// (module header): the warp-level tile of the batch, or on the FMA path the batch's
    /// 48-wide tile. None elsewhere, nor on AMD (not measured: no AMD GPU here).
    pub fn small_batch_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        if self.hw.vendor != Vendor::Nvidia
            || p.batch <= 1
            || p.m > MOST
            || p.n > MOST
            || (constraints::tma_readable(p, true) && constraints::tma_readable(p, false))
            || tile_count(p, MOST, MOST) < self.hw.compute_units as i64
        {
            return Vec::new();
        }
        self.warp_level_batch_start()
            .into_iter()
            .chain(self.fma_batch_fit_start())
            .collect()
    }

    /// The warp-level (mma.sync) tile of one batch, where the space holds the warpgroup
    /// instruction and a warp-level one beside it.
    fn warp_level_batch_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let warp_level = self.warp_level_beside_warpgroup()?;
        let ((mt0, mt1), (waves_m, waves_n)) = warp_tile(p.m, p.n)?;
        // 32 k on a tie: fewer stages for the same padding (17x17x17 on one stage of 32).
        let du = if round_up(p.k, 16) < round_up(p.k, 32) {
            16
        } else {
            32
        };
        let stages = ((p.k + du - 1) / du).clamp(2, 3);
        let ea = p.a_type.bytes() as i64;
        let ed = p.d_type.bytes() as i64;
        // Swizzled LDS rows on tiles of 64 rows or more (the 128x112 tile's sweep), padded
        // ones below (48x48 ran 130.6 us unswizzled against 136.0 swizzled).
        let swizzle = i64::from(mt0.min(mt1) >= 64);
        let prefs: Vec<(ParamId, i64)> = [
            (ParamId::MacroTile0, mt0),
            (ParamId::MacroTile1, mt1),
            (ParamId::DepthU, du),
            (ParamId::MatrixInstruction, warp_level),
            (ParamId::WavesM, waves_m),
            (ParamId::WavesN, waves_n),
            (ParamId::PrefetchGlobalRead, stages),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::LdsSwizzle, swizzle),
            (ParamId::LdsPadA, 0),
            (ParamId::LdsPadB, 0),
            (ParamId::GlobalSplitU, 1),
            (ParamId::WorkGroupMapping, 1),
            (
                ParamId::GlobalReadVectorWidth,
                self.widest_read(16 / ea.max(1)),
            ),
            (
                ParamId::StoreVectorWidth,
                self.widest_store((16 / ed).max(1)),
            ),
        ]
        .into_iter()
        .chain(PLAIN_WARP_LEVEL)
        .collect();
        self.valid_start(&prefs)
    }

    /// On the FMA path, the batch tile with 48 along each side it pads less than the batch
    /// tile's own side (33 to 48 rows), 8 k a stage where a short K pads less so, on four
    /// waves along N and two stages without the local prefetch (the 33x33x33 f32 sweep's
    /// best; with the prefetch one wave ran 178.2 us against 139.5).
    fn fma_batch_fit_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let default = self.raw_default();
        if !default.on_fma_path() {
            return None;
        }
        let fit = |d: i64, side: u32| {
            if d <= FMA_FIT_SIDE && FMA_FIT_SIDE < i64::from(side) {
                FMA_FIT_SIDE
            } else {
                i64::from(side)
            }
        };
        let (mt0, mt1) = (fit(p.m, default.mt0), fit(p.n, default.mt1));
        let du = if p.k < FMA_SHORT_K && round_up(p.k, 8) < round_up(p.k, 16) {
            8
        } else {
            i64::from(default.depth_u)
        };
        if (mt0, mt1, du)
            == (
                default.mt0.into(),
                default.mt1.into(),
                default.depth_u.into(),
            )
        {
            return None;
        }
        self.valid_start(&[
            (ParamId::MacroTile0, mt0),
            (ParamId::MacroTile1, mt1),
            (ParamId::DepthU, du),
            (ParamId::WavesM, 1),
            (ParamId::WavesN, 4),
            (ParamId::PrefetchGlobalRead, 2),
            (ParamId::PrefetchLocalRead, 0),
            (ParamId::GlobalSplitU, 1),
        ])
    }
}

fn round_up(d: i64, step: i64) -> i64 {
    (d + step - 1) / step * step
}

/// The warp-level tile of an `m` x `n` batch and its warps along M and N: one warp per
/// [`OUTPUTS_PER_WARP`] outputs of the batch in 16-row steps, one to four, a power of two;
/// of the splits, the one whose tile (each warp's rows a multiple of 16, the tile's columns of
/// 16 and each warp's of 8) pads the batch least, then the squarest warp tiles, more warps
/// along N on a tie (100x100 on four warps: 128x112 as 2x2).
fn warp_tile(m: i64, n: i64) -> Option<((i64, i64), (i64, i64))> {
    let area = round_up(m, 16) * round_up(n, 16);
    let total = ((area / OUTPUTS_PER_WARP).clamp(1, 4) as u64).next_power_of_two() as i64;
    // Fewest warps along M first, so that the first of equal keys is the one more along N.
    (0..=total.ilog2())
        .map(|s| {
            let (wm, wn) = (1 << s, total >> s);
            let (mt0, mt1) = (round_up(m, 16 * wm), round_up(n, 16.max(8 * wn)));
            (
                (mt0 * mt1, (mt0 / wm - mt1 / wn).abs()),
                ((mt0, mt1), (wm, wn)),
            )
        })
        .min_by_key(|&(key, _)| key)
        .map(|(_, tile)| tile)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};

    fn batch(m: i64, n: i64, k: i64, count: i64, t: DataType, ta: Trans, tb: Trans) -> GemmProblem {
        let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
        (p.a_type, p.b_type, p.c_type, p.d_type) = (t, t, t, t);
        p.batch = count;
        p.fill_defaults();
        p
    }

    fn starts(p: &GemmProblem) -> Vec<String> {
        let s = Space::for_problem(p, &HwSpec::by_name("H200").unwrap());
        let out = s.small_batch_starts();
        let extra = s.extra_starts();
        for c in &out {
            assert!(s.is_valid(c), "{}", c.name());
            assert!(extra.contains(c), "{} is a start", c.name());
        }
        out.iter().map(|c| c.name()).collect()
    }

    #[test]
    fn small_batches_off_the_grid_start_on_a_tile_of_the_batch() {
        let (n, t) = (Trans::N, Trans::T);
        assert_eq!(
            starts(&batch(33, 33, 33, 10000, DataType::F16, n, n)),
            vec!["MT48x48x16_MI16x8x16_WG1x2_PGR3_PLR1_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0"]
        );
        assert_eq!(
            starts(&batch(100, 100, 100, 5000, DataType::F16, n, n)),
            vec!["MT128x112x16_MI16x8x16_WG2x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW4_SVW4_SU0"]
        );
        assert_eq!(
            starts(&batch(17, 17, 17, 50000, DataType::Bf16, t, n)),
            vec!["MT32x32x32_MI16x8x16_WG1x1_PGR2_PLR1_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0"]
        );
        assert_eq!(
            starts(&batch(33, 33, 33, 10000, DataType::F32, n, n)),
            vec!["MT48x48x8_MI1x1x1_WG1x4_PGR2_PLR0_LPA4_LPB4_SW0_GSU1_WGM8_GRVW1_SVW1_SU0"]
        );
    }

    #[test]
    fn aligned_large_few_or_single_batches_get_none() {
        let n = Trans::N;
        // Rows of 128 bytes: the tensor maps read them.
        assert!(starts(&batch(64, 64, 64, 10000, DataType::F16, n, n)).is_empty());
        // Batches past one tile.
        assert!(starts(&batch(200, 200, 200, 1000, DataType::F16, n, n)).is_empty());
        // Fewer batches than compute units.
        assert!(starts(&batch(33, 33, 33, 64, DataType::F16, n, n)).is_empty());
        // One GEMM.
        assert!(starts(&batch(33, 33, 33, 1, DataType::F16, n, n)).is_empty());
    }

    #[test]
    fn warps_follow_the_area_of_the_batch() {
        assert_eq!(warp_tile(17, 17), Some(((32, 32), (1, 1))));
        assert_eq!(warp_tile(33, 33), Some(((48, 48), (1, 2))));
        assert_eq!(warp_tile(100, 100), Some(((128, 112), (2, 2))));
        assert_eq!(warp_tile(9, 120), Some(((16, 128), (1, 2))));
    }
}
