//! A start for problems of one to a few waves whose 128-row tiles fill their waves poorly:
//! 256-, 192- or 320-row tiles beside a producer warpgroup (ProducerWarp=2, which hands its
//! registers to two consumer warpgroups of 128, 192 or 320 rows each), on the
//! persistent kernel (data-parallel where the tiles make one wave), of the width whose tile
//! count fills its waves best. A larger tile gives
//! M and N coarser steps of their own, so between the 128-row tiles and the larger ones one
//! usually fills the waves and the tile edges better than the other; and each of its tiles
//! reads fewer operand bytes per multiply.
//!
//! cuBLASLt runs such tiles there (`ncu`, H200): `nvjet_sm90_tst_256x112_64x4_2x1_v_bz_coopA`
//! on 8960x777x1536 (7 x 35 = 245 tiles on 132 units), `_hsh_192x144_64x5_2x1_v_bz_coopB` on
//! 2304x1576x768 f16 (132 tiles), `_320x128_64x3_1x2_h_bz_coopB` on 5120x2048x2048,
//! `_hsh_320x128_64x3_1x2_h_bz_coopB` on 5120x1024x5120 NN f16 and
//! `_qqtst_320x128_128x3_1x2_h_bz_coopB` on 20480x256x7168 e4m3 (128 tiles each).
//!
//! Problem in, at most one config per height out; bench's default set and the search's first
//! batch take them beside the others (`Space::extra_starts`).

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{tile_count, Space};

/// The large tiles' rows, each with how its two consumer warpgroups share the tile (WavesM,
/// WavesN): one above the other at 256 rows (128 each), side by side at 192 and 320 (all the
/// rows each, half the columns).
const LARGE_TILES: [(i64, [i64; 2]); 3] = [(256, [8, 1]), (192, [4, 2]), (320, [4, 2])];

/// The widths the tiles try: narrower, a 256-row tile reads too much of A per multiply (it
/// lost to 128-row tiles of the same count).
const WIDTHS: std::ops::RangeInclusive<i64> = 96..=256;

/// What a tile's perimeter costs beside its area in the waves' estimate: each of its rows and
/// columns counts as 32 of its elements (the operand bytes each K step reads). For 128-row
/// tiles this is close to the wave-fitting start's width + 64 (`Space::wave_fit_start`).
const PERIMETER_WEIGHT: i64 = 32;

/// Waves of the default's tiles up to which the start applies: past them the last wave's
/// share of the time is small, and the large tiles' own start covers the largest problems
/// (`Space::large_producer_warpgroup_start`).
const MAX_WAVES: i64 = 4;

/// K steps (of the default's DepthU) a tile streams at least: with fewer, a tile's time is
/// mostly its epilogue, which the larger tiles do not shorten.
const MIN_K_STEPS: i64 = 8;

/// Every stage released as soon as it is multiplied (PrefetchLocalRead 0), as on the tall
/// rows' tiles (`Space::tall_rows_start`): H200, kernel against kernel, one call (cuBLASLt in
/// brackets), 4096x2500x4096 on 256x160 108.2 us against 113.0 with PrefetchLocalRead 1
/// [106.5]; 8960x777x1536 on 256x112 (four stages) 34.8 against 35.5-35.8 [34.6].
const RELEASE_EARLY: (ParamId, i64) = (ParamId::PrefetchLocalRead, 0);

/// By how much, in percent, the large tiles' estimate must beat the 128-row tiles' best: on a
/// tie the 128-row tiles ran as fast (4096^3 on 256x128 179.8 us, on 128x256 178.0; H200,
/// one call).
const MIN_GAIN_PERCENT: i64 = 2;

impl Space {
    /// 256-row tiles (two warpgroups of 128 rows) and 192- and 320-row tiles (two of all the
    /// rows side by side) beside a producer warpgroup ([`Space::big_tile`]: persistent past one wave): of
    /// each height the width whose waves take the least time by [`Space::waves_estimate`],
    /// where that beats the best 128-row tile (64 to 256 columns) by 2%, the better estimate
    /// first. Which height wins is measured: the estimate put 256x104 a little ahead on
    /// 14336x700x4096 NN, where 192x144 ran 114.0 us against 119.0 [112.1] (cuBLASLt runs
    /// `nvjet_sm90_tst_192x144_64x5_2x1_v_bz_coopB` there). Operands of one width, 16 or 8
    /// bits, without a batch (measured there: 14336x1000x4096 e4m3 on 256x144 81.8 against
    /// 85.4 on the persistent 128x144 [83.1]; cuBLASLt runs `_qqtst_256x144_128x4_2x1_v_bz_coopA`).
    ///
    /// H200, kernel against kernel, one call (cuBLASLt in brackets): 4096x2500x4096 on
    /// 256x160 (two waves) 113.3 us against 116.5 on the persistent 128x224 (three) [108.0];
    /// 8960x777x1536 on 256x112 35.7 against 38.1 on 128x160 [34.3]; 2304x1576x768 f16 on
    /// 192x144 (one wave of 132 tiles) 13.7 against 14.3 on 128x232 [13.2]. Where the estimate
    /// ties, so did the times (4096^3); on 5120x2048x2048, estimated 8% faster, 256x160 ran
    /// 61.9 against 61.6 on 128x160 [59.3]. Tiles whose waves are not full lost: 14336x700x4096
    /// NN on 256x144 (three waves of 280 tiles) 149.6 against 123.4 on 128x240.
    ///
    /// 320-row tiles (two warpgroups of 320 x half the columns, cuBLASLt's 320x128), bench's
    /// default set before and after, one call: 5120x1024x5120 NN f16 76.5 -> 73.2 us [72.7],
    /// 20480x256x7168 e4m3 59.9 -> 55.7 [56.5], 10240x1024x4096 116.9 -> 112.1 [111.3],
    /// 10240x512x4096 60.1 -> 58.1 [57.6]; 20 other GEMMs whose sets they joined kept their
    /// winner (times within 1.2%).
    pub fn big_tile_wave_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let cus = self.hw.compute_units.max(1) as i64;
        if !constraints::is_wgmma(&start)
            || tile_count(p, start.mt0 as i64, start.mt1 as i64) > MAX_WAVES * cus
            || p.k < MIN_K_STEPS * start.depth_u as i64
            || p.batch > 1
            || p.a_type.bytes() != p.b_type.bytes()
            || p.a_type.bytes() > 2
            || !self.domain(ParamId::ProducerWarp).admits(2)
            || !self.domain(ParamId::PersistentKernel).contains(1)
        {
            return Vec::new();
        }
        let step = self.n_step();
        let widths = |least: i64, waves: [i64; 2]| {
            self.domain(ParamId::MacroTile1)
                .values
                .iter()
                .copied()
                .filter(move |&n| (least..=256).contains(&n) && n % (step * waves[1]) == 0)
        };
        let Some(best_128) = widths(64, [4, 1])
            .map(|n| self.waves_estimate(128, n))
            .min()
        else {
            return Vec::new();
        };
        // The best tile of each height, the better estimate first.
        let mut out: Vec<(i64, KernelConfig)> = Vec::new();
        for (rows, waves) in LARGE_TILES {
            if !self.domain(ParamId::MacroTile0).contains(rows) {
                continue;
            }
            let mut best: Option<(i64, i64, KernelConfig)> = None;
            for n in widths(*WIDTHS.start(), waves) {
                let estimate = self.waves_estimate(rows, n);
                // The least estimate first; on a tie the larger tile (fewer epilogues).
                let better = best
                    .as_ref()
                    .is_none_or(|(e, area, _)| (estimate, -rows * n) < (*e, -*area));
                if !better || estimate * 100 > best_128 * (100 - MIN_GAIN_PERCENT) {
                    continue;
                }
                if let Some(c) = self.big_tile(rows, n, waves) {
                    best = Some((estimate, rows * n, c));
                }
            }
            out.extend(best.map(|(estimate, _, c)| (estimate, c)));
        }
        out.sort_by_key(|&(estimate, _)| estimate);
        out.into_iter().map(|(_, c)| c).collect()
    }

    /// The `rows` x `width` tile on two warpgroups placed by `waves` beside a producer
    /// warpgroup, every stage released early, as deep as fits: on the persistent kernel, or
    /// where its tiles all run at once on the data-parallel one, whose output tile takes the
    /// stages' bytes after the main loop (so any width keeps the stages, and a stage more).
    /// H200, kernel against kernel, one call (cuBLASLt in brackets): 10240x450x2560 f16 on
    /// 256x152 (120 tiles) data-parallel with four stages 38.4 us, on the persistent 256x160
    /// (whose 152 columns split into no column groups beside three stages) 39.6 [37.3];
    /// 2304x1576x768 f16 on 192x144 13.8 against 14.0 [13.1].
    ///
    /// With beta, where the persistent kernel has no room for C's tile beside three stages
    /// (320x128: C's 80 KiB), the data-parallel kernel, which brings C into its operand ring
    /// once the main loop is done. H200, kernel against kernel, one call: 1600x6400x4096
    /// beta 1 on 320x128 data-parallel 121.1 us in TN and NT, against 122.2 and 139.4 for the
    /// best 128-row tile [112.2, 112.5]; with beta 0 the persistent 320x128 ran 109-110 [108.6].
    fn big_tile(&self, rows: i64, width: i64, waves: [i64; 2]) -> Option<KernelConfig> {
        let cus = self.hw.compute_units.max(1) as i64;
        let persistent = i64::from(tile_count(&self.problem, rows, width) > cus);
        let tile = |persistent: i64| {
            self.producer_warpgroup_tile(
                rows,
                width,
                waves,
                0,
                &[(ParamId::PersistentKernel, persistent), RELEASE_EARLY],
            )
        };
        tile(persistent).or_else(|| {
            if persistent == 1 && self.problem.beta != 0.0 {
                tile(0)
            } else {
                None
            }
        })
    }

    /// The time the waves of `rows` x `width` tiles take, in relative units: waves, each
    /// counted whole, times a tile's area plus [`PERIMETER_WEIGHT`] per row and column.
    fn waves_estimate(&self, rows: i64, width: i64) -> i64 {
        let cus = self.hw.compute_units.max(1) as i64;
        let waves = (tile_count(&self.problem, rows, width) + cus - 1) / cus;
        waves * (rows * width + PERIMETER_WEIGHT * (rows + width))
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::{KernelConfig, Space};

    fn h200(p: &GemmProblem) -> Space {
        Space::for_problem(p, &HwSpec::by_name("H200").unwrap())
    }

    fn start(p: &GemmProblem) -> Option<KernelConfig> {
        h200(p).big_tile_wave_starts().first().copied()
    }

    #[test]
    fn with_beta_tiles_the_persistent_kernel_has_no_room_for_run_data_parallel() {
        let beta = GemmProblem {
            beta: 1.0,
            ..GemmProblem::new(1600, 6400, 4096)
        };
        let starts = h200(&beta).big_tile_wave_starts();
        let tall = starts
            .iter()
            .find(|c| c.mt0 == 320)
            .expect("a 320-row start with beta");
        h200(&beta).check(tall).unwrap();
        assert_eq!((tall.mt1, tall.pk, tall.pw), (128, 0, 2));
        // Beta 0: the same tile persistent.
        let plain = h200(&GemmProblem::new(1600, 6400, 4096)).big_tile_wave_starts();
        let tall = plain
            .iter()
            .find(|c| c.mt0 == 320)
            .expect("a 320-row start");
        assert_eq!((tall.mt1, tall.pk), (128, 1));
    }

    #[test]
    fn takes_the_large_tile_that_fills_the_waves() {
        let mut f16 = GemmProblem::new(2304, 1576, 768);
        f16.a_type = DataType::F16;
        f16.b_type = DataType::F16;
        f16.c_type = DataType::F16;
        f16.d_type = DataType::F16;
        let mut f16_wide = GemmProblem::new(10240, 450, 2560);
        f16_wide.a_type = DataType::F16;
        f16_wide.b_type = DataType::F16;
        f16_wide.c_type = DataType::F16;
        f16_wide.d_type = DataType::F16;
        // (problem, (rows, columns, warpgroups, persistent)): one wave of tiles (132 of
        // 192x144, 120 of 256x152) on the data-parallel kernel.
        for (p, (mt0, mt1, wg, pk)) in [
            (GemmProblem::new(4096, 2500, 4096), (256, 160, [8, 1], 1)),
            (GemmProblem::new(8960, 777, 1536), (256, 112, [8, 1], 1)),
            (f16, (192, 144, [4, 2], 0)),
            (f16_wide, (256, 152, [8, 1], 0)),
        ] {
            let c = start(&p).unwrap_or_else(|| panic!("{}", p.label()));
            assert_eq!(
                (c.mt0, c.mt1, c.wg, c.pk),
                (mt0, mt1, wg, pk),
                "{}",
                p.label()
            );
            assert_eq!((c.pw, c.gsu, c.sab, c.plr), (2, 1, 0, 0));
            assert!(h200(&p).is_valid(&c));
            // The search's first batch takes it (in the tile order its waves want).
            let extra = h200(&p).extra_starts();
            let same = |e: &KernelConfig| {
                (e.mt0, e.mt1, e.wg, e.pw, e.pk) == (c.mt0, c.mt1, c.wg, 2, c.pk)
            };
            assert!(extra.iter().any(same), "{}", p.label());
        }
    }

    #[test]
    fn each_height_offers_its_best_tile() {
        let nn = GemmProblem::with_layout(14336, 700, 4096, Trans::N, Trans::N);
        let tiles: Vec<_> = h200(&nn)
            .big_tile_wave_starts()
            .iter()
            .map(|c| (c.mt0, c.mt1, c.wg))
            .collect();
        assert_eq!(tiles, [(256, 104, [8, 1]), (192, 144, [4, 2])]);
        let mut e4m3 = GemmProblem::new(14336, 1000, 4096);
        e4m3.a_type = DataType::F8;
        e4m3.b_type = DataType::F8;
        let c = start(&e4m3).unwrap();
        assert_eq!((c.mt0, c.mt1, c.depth_u, c.plr), (256, 144, 128, 0));
        assert!(h200(&e4m3).is_valid(&c));
    }

    #[test]
    fn one_wave_of_320_row_tiles_where_they_fill_it() {
        // 5120/320 x 1024/128 and 20480/320 x 256/128 make 128 tiles, one wave: the 320x128
        // tile (two warpgroups of 320 x 64 side by side) first, data-parallel.
        let mut nn = GemmProblem::with_layout(5120, 1024, 5120, Trans::N, Trans::N);
        (nn.a_type, nn.b_type, nn.c_type, nn.d_type) =
            (DataType::F16, DataType::F16, DataType::F16, DataType::F16);
        let mut e4m3 = GemmProblem::new(20480, 256, 7168);
        e4m3.a_type = DataType::F8;
        e4m3.b_type = DataType::F8;
        for p in [nn, e4m3, GemmProblem::new(10240, 512, 4096)] {
            let c = start(&p).unwrap_or_else(|| panic!("{}", p.label()));
            assert_eq!(
                (c.mt0, c.mt1, c.wg, c.pw, c.pk, c.plr),
                (320, 128, [4, 2], 2, 0, 0),
                "{}",
                p.label()
            );
            assert!(h200(&p).is_valid(&c));
        }
        // Past one wave the persistent kernel: 10240x1024x4096 makes 256 of them.
        let c = start(&GemmProblem::new(10240, 1024, 4096)).unwrap();
        assert_eq!((c.mt0, c.mt1, c.pk), (320, 128, 1));
    }

    #[test]
    fn not_where_the_128_row_tiles_fill_the_waves_as_well() {
        // 128x256 tiles fill 4096^3's four waves as well as 256x128 tiles do.
        assert_eq!(start(&GemmProblem::new(4096, 4096, 4096)), None);
        assert_eq!(start(&GemmProblem::new(16384, 256, 4096)), None);
    }

    #[test]
    fn not_for_batches_or_other_operand_widths() {
        let mut batched = GemmProblem::new(4096, 2500, 4096);
        batched.batch = 2;
        assert_eq!(start(&batched), None);
        let mut mixed = GemmProblem::new(4096, 2500, 4096);
        mixed.a_type = DataType::F8;
        assert_eq!(start(&mixed), None);
        let mut f32 = GemmProblem::new(4096, 2500, 4096);
        f32.a_type = DataType::F32;
        f32.b_type = DataType::F32;
        assert_eq!(start(&f32), None);
    }
}
