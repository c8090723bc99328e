//! The FMA path's tiles for many small batched GEMMs (f32, each batch's output at most 384x384:
//! batched small products of scientific and attention-like f32 code), in the space: the
//! default's tile and a start beside it.
//!
//! The eight-wave tiles of `fma.rs` are built for large outputs: 256x128 on one workgroup a
//! compute unit, 128 accumulators a lane, three or four stages. On a batch of 64x64 outputs
//! they are mostly padding, and the fallback's narrow tile holds several stages of LDS for a
//! K of a few steps. What runs fast there is the opposite: a tile that covers a batch's output
//! with little padding, 16 k a stage on two stages (a few KiB of LDS, so many workgroups share
//! a compute unit and their loads overlap), two to eight waves. H200, kernel against kernel,
//! same call (the old default's best in parentheses where bench ran it; cuBLASLt in brackets):
//! 64x64x64 x4096 NN 90.6 us on 64x64 of two waves, 102.8 on four (175.8) [82.2]; 64x64x512
//! x1024 TN 138.6 on 64x64 of four waves [126.1]; 32x32x32 x16384 NT 63.8-68.6 on 32x32 of two
//! [73.5]; 96x96x96 x2048 TT 146.1 on 32x32 of two, 178.8 on 32x64 [151.9]; 128x128x128 x1024
//! TN 127.3 on 128x128 of eight, 147.6 on four [130.9]; 300^3 x300 509.4 on 64x64 of two, 673.6
//! on the eight-wave default's 128x128x8 on three stages [454.9]; 256^3 x256 NN 214.0 on 128x128
//! of eight, 221.5 on the default's four stages [219.8]; 200^3 x500 NT 341.0 on 32x32 of two,
//! 372.8 on the default's 128x128 [306.6].

use super::param::ParamId;
use super::tuning_space::tile_count;
use super::{KernelConfig, Space};
use crate::hw::Vendor;

/// The largest batch output (rows or columns) the batch tiles take: 300^3 x300 was the largest
/// measured (larger batches take the eight-wave tiles, measured on large outputs).
const BATCH_TILE_MAX: i64 = 384;
/// The tile sides the batch tiles choose from, widest first.
const SIDES: [i64; 3] = [128, 64, 32];
/// Accumulators a lane the tile's waves are sized for: 64x64 on two waves of 32 lanes.
const OUTPUTS_PER_WAVE: i64 = 1024;
/// Waves of a batch tile: at least two, at most eight.
const WAVES: (i64, i64) = (2, 8);

impl Space {
    /// The default's preferences where the FMA path runs many small batched GEMMs (NVIDIA,
    /// batches whose M and N are both 9 to 384, at least a wave of the tiles below): the tile
    /// of [`batch_tile_side`] along each of M and N, its waves by its area
    /// ([`batch_tile_waves`]), 16 k a stage on two stages, no split. None elsewhere (on AMD
    /// not measured: no AMD GPU here).
    pub(super) fn fma_batch_tile(&self) -> Option<Vec<(ParamId, i64)>> {
        let (mt0, mt1, waves) = self.batch_tile()?;
        Some(batch_tile_prefs(mt0, mt1, waves))
    }

    /// A start beside that default: the same tile on half its waves (at least two), each lane
    /// holding twice the accumulators. Neither count won everywhere: 64x64x64 x4096 NN ran
    /// 90.6 us on two waves against 102.8 on four, 64x64x512 x1024 TN 138.6 on four against
    /// more than 154 on two (H200).
    pub fn fma_batch_wave_start(&self) -> Option<KernelConfig> {
        let (mt0, mt1, waves) = self.batch_tile()?;
        let (waves_m, waves_n) = batch_tile_waves(mt0, mt1, waves);
        let total = waves_m * waves_n;
        if !self.raw_default().on_fma_path() || total <= WAVES.0 {
            return None;
        }
        self.valid_start(&batch_tile_prefs(mt0, mt1, total / 2))
    }

    /// The batch tile (its extents along M and N) and the waves its area asks for, where the
    /// batch tiles apply.
    fn batch_tile(&self) -> Option<(i64, i64, i64)> {
        let p = &self.problem;
        if self.hw.vendor != Vendor::Nvidia
            || p.batch <= 1
            || p.m > BATCH_TILE_MAX
            || p.n > BATCH_TILE_MAX
        {
            return None;
        }
        let (mt0, mt1) = (batch_tile_side(p.m), batch_tile_side(p.n));
        (tile_count(p, mt0, mt1) >= self.hw.compute_units as i64).then_some((
            mt0,
            mt1,
            mt0 * mt1 / OUTPUTS_PER_WAVE,
        ))
    }
}

/// The preferences of a `mt0` x `mt1` batch tile on `waves` waves ([`batch_tile_waves`]), 16 k
/// a stage on two stages, no split.
fn batch_tile_prefs(mt0: i64, mt1: i64, waves: i64) -> Vec<(ParamId, i64)> {
    let (waves_m, waves_n) = batch_tile_waves(mt0, mt1, waves);
    vec![
        (ParamId::MacroTile0, mt0),
        (ParamId::MacroTile1, mt1),
        (ParamId::WavesM, waves_m),
        (ParamId::WavesN, waves_n),
        (ParamId::DepthU, 16),
        (ParamId::PrefetchGlobalRead, 2),
        (ParamId::GlobalSplitU, 1),
    ]
}

/// The side of a batch tile along a dimension of `d` (at most [`BATCH_TILE_MAX`]): the one of
/// [`SIDES`] that pads `d` least, the widest on a tie (96 takes 32, where 64 or 128 would leave
/// a third of the tile idle; 100 takes 128, which pads it no more than 32 does, on fewer
/// tiles: 100x100x100 x5000 NN ran 546.6 us on 128x128 tiles, 576.1 with 32x32 in the set
/// [465.2], H200).
fn batch_tile_side(d: i64) -> i64 {
    let padded = |t: i64| (d + t - 1) / t * t;
    SIDES
        .into_iter()
        .min_by_key(|&t| (padded(t), -t))
        .unwrap_or(SIDES[0])
}

/// The waves along M and N of a `mt0` x `mt1` tile on `waves` waves (clamped to [`WAVES`], a
/// power of two): the split whose wave tiles are squarest, more along N on a tie (32x32 on
/// two waves of 32x16 ran faster than on 16x32, H200).
fn batch_tile_waves(mt0: i64, mt1: i64, waves: i64) -> (i64, i64) {
    let total = (waves.clamp(WAVES.0, WAVES.1) as u64).next_power_of_two() as i64;
    let mut best = (1, total);
    let mut best_score = i64::MAX;
    let mut wm = total;
    while wm >= 1 {
        let wn = total / wm;
        if mt0 % wm == 0 && mt1 % wn == 0 {
            let score = (mt0 / wm - mt1 / wn).abs();
            if score <= best_score {
                best = (wm, wn);
                best_score = score;
            }
        }
        wm /= 2;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};

    fn f32_batch(m: i64, n: i64, k: i64, batch: i64, layout: &str) -> GemmProblem {
        let t = |c: u8| if c == b'T' { Trans::T } else { Trans::N };
        let (ta, tb) = (t(layout.as_bytes()[0]), t(layout.as_bytes()[1]));
        let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        p.batch = batch;
        p
    }

    #[test]
    fn sides_cover_a_batch_with_little_padding() {
        let sides: Vec<i64> = [9, 32, 48, 64, 96, 100, 120, 128]
            .into_iter()
            .map(batch_tile_side)
            .collect();
        assert_eq!(sides, vec![32, 32, 64, 64, 32, 128, 128, 128]);
    }

    #[test]
    fn waves_make_the_wave_tiles_squarest() {
        assert_eq!(batch_tile_waves(32, 32, 1), (1, 2));
        assert_eq!(batch_tile_waves(64, 64, 4), (2, 2));
        assert_eq!(batch_tile_waves(64, 64, 2), (1, 2));
        assert_eq!(batch_tile_waves(128, 128, 16), (2, 4));
        assert_eq!(batch_tile_waves(128, 32, 4), (4, 1));
    }

    #[test]
    fn small_f32_batches_default_to_a_tile_of_the_batch_on_two_stages() {
        let hw = HwSpec::by_name("H200").unwrap();
        for (p, tile, waves) in [
            (f32_batch(64, 64, 64, 4096, "NN"), (64, 64), (2, 2)),
            (f32_batch(96, 96, 96, 2048, "TT"), (32, 32), (1, 2)),
            (f32_batch(128, 128, 128, 1024, "TN"), (128, 128), (2, 4)),
            (f32_batch(300, 300, 300, 300, "TN"), (64, 64), (2, 2)),
            (f32_batch(200, 200, 200, 500, "NT"), (32, 32), (1, 2)),
            (f32_batch(256, 256, 256, 256, "NN"), (128, 128), (2, 4)),
        ] {
            let c = Space::for_problem(&p, &hw).default_config().unwrap();
            assert_eq!((c.mt0, c.mt1), (tile.0 as u32, tile.1 as u32), "{p:?}");
            assert_eq!(c.wg, [waves.0 as u32, waves.1 as u32]);
            assert_eq!((c.depth_u, c.pgr, c.gsu), (16, 2, 1));
            let start = Space::for_problem(&p, &hw).fma_batch_wave_start();
            let halved = start.map(|s| s.wg[0] * s.wg[1]);
            let waves = c.wg[0] * c.wg[1];
            assert_eq!(halved, (waves > 2).then_some(waves / 2));
        }
    }

    #[test]
    fn large_or_unbatched_or_few_tiles_keep_the_other_defaults() {
        let hw = HwSpec::by_name("H200").unwrap();
        for p in [
            f32_batch(64, 64, 64, 1, "NN"),
            f32_batch(512, 512, 512, 64, "TN"),
            f32_batch(64, 64, 64, 16, "TN"),
        ] {
            assert!(
                Space::for_problem(&p, &hw).fma_batch_tile().is_none(),
                "{p:?}"
            );
        }
        let mut batched = GemmProblem::new(64, 64, 64);
        batched.batch = 4096;
        let c = Space::for_problem(&batched, &hw).default_config().unwrap();
        assert!(!c.on_fma_path());
    }
}
