//! The start for narrow N on the Hopper warpgroup path: decode batches and skinny projections
//! of 1 to 64 columns (4096x8x4096, 14336x32x4096, 28672x8x4096), where one tile covers all
//! of N and the kernel's time is how fast it streams A once.
//!
//! Such a GEMM reads A once whatever its tiles, so what sets its time is how evenly and how
//! deeply the compute units stream it. The split-K and stream-K cuts the other starts give it
//! spread K over more workgroups but pay for it in partial sums and in workgroups that start
//! mid-tile; the persistent kernel with the producer warp on whole tiles (one workgroup per
//! compute unit walking its tiles' full K, many stages in flight) streams A faster, which is
//! also what cuBLASLt runs there (`nvjet_sm90_tst_64x8_64x16_2x1`: 64x8 tiles, 16 stages of
//! 64 k, 132 persistent workgroups).
//!
//! 8-bit inputs stream half the bytes per k: below a wave of 64-row tiles they take twice the
//! k a stage on the same persistent kernel, and from a wave on shallow data-parallel tiles,
//! several to a compute unit, streamed them faster.
//!
//! A start beside the default, first among the starts so that `bench`'s default set and the
//! search's first batch measure it (with, under a wave of 128-row tiles, those tiles
//! data-parallel after it); nothing here changes the default itself.
//!
//! An N-major B (NT, TT) of 65 to 128 columns in odd steps of 8 (72, 88, 104, 120) gets its
//! own starts: a tile exactly N wide, whose B no LDS chunk divides, so that it streams from
//! the K-major copy ([`Space::n_major_exact_starts`]).

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{tile_count, Space, NARROW_N_MAX, START_STAGES_MAX};

/// Stages of the 64-row tile's 128 k: 8 streamed 4096x8x4096 in 13.3 us and 4096x8x14336 in
/// 33.1 against 13.7 and 34.4 at 6 (H200, same call); deeper ones hold no more in flight
/// that pays, and leave the shared memory to the tile's output staging.
const SHORT_TILE_STAGES: i64 = 8;

/// 8-bit A with less than a wave of 64-row tiles: 256 k a stage (two swizzled rows, the bytes
/// of the 16-bit tile's 128 k) as deep as fits up to this, on the persistent kernel. H200,
/// kernel against kernel, one call [cuBLASLt]: e4m3 4096x8x4096 9.3 us against 10.8 for 128 k
/// at 8 stages [9.3]; 4096x4x14336 19.3 against 23.3 [20.7].
const EIGHT_BIT_UNDER_A_WAVE_STAGES: i64 = 10;

/// 8-bit A with one to two waves of 64-row tiles: data-parallel tiles of 128 k at this
/// depth, about 60 KB of shared memory each, so that three share a compute unit and one's
/// start hides behind the others' streams. H200, kernel against kernel, one call
/// [cuBLASLt]: e4m3 14336x8x4096 19.1 us against 20.6 for the persistent kernel at 8 stages
/// [20.1]; 14336x32x4096 19.6 against 20.7 [20.5].
const EIGHT_BIT_ONE_WAVE_STAGES: i64 = 6;

/// 8-bit A with two waves of 64-row tiles or more: the same tiles shallower still, five to a
/// compute unit. Same call: e4m3 28672x16x4096 (3.4 waves) 32.8 us at 4 stages, over 34.0 at
/// 6, against 35.6 for the persistent 128-row tile [35.4].
const EIGHT_BIT_TWO_WAVES_STAGES: i64 = 4;

/// 16-bit A whose K fits one stage of 128 k but not one of 64, with a wave of 128-row tiles
/// or more (decode attention scores over a head of 128, batched per head): the 128-row tile
/// with all of K in one stage, this many tiles ahead, each tile's instructions waited for before the next
/// (PrefetchLocalRead 0), so a tile costs one barrier round trip instead of two. H200, kernel
/// against kernel, one call [cuBLASLt]: 4096x1x128 x32 14.2 us against 14.7 for 64 k a stage
/// at 12 stages [13.7]; 2048x1x128 x64 14.0 against 14.6 [13.1]; 8192x4x128 x8 9.9 against
/// 10.0 [9.1]; 16384x8x128 6.1 against 6.3 [8.7]; 4096x16x128 x32 14.9 against 15.3 [13.3].
/// Six stages, or PrefetchLocalRead 1, ran 0.2-0.5 us slower.
const WHOLE_K_STAGES: i64 = 4;

impl Space {
    /// N of at most 64 columns on the warpgroup path, with at least three eighths of a wave
    /// of 64-row tiles: one N tile of N rounded up to 16, the persistent kernel on whole
    /// tiles fed by the producer warp. The rows: 128 with 64 k a stage (as deep as fits, up
    /// to START_STAGES_MAX) where 128-row tiles make at least one wave, else 64 with 128 k a
    /// stage at `SHORT_TILE_STAGES`: a wave of 64-row tiles and under two of 128-row ones
    /// streamed alike (14336x8x4096 NN 32.7 and 33.3 us), past that the taller tile's fewer
    /// B re-reads and tile starts win (28672x8x4096 TN 60.8 against 63.2). A B whose rows are
    /// 16-byte but not 32-byte aligned (N-major, 8 bf16 columns) is copied K-major first
    /// (PackUnaligned = 2): read in place, each of its 16-byte rows costs the L2 a request
    /// (14336x8x4096 NT 45.8 us in place). An 8-bit A takes its own cuts (the
    /// `EIGHT_BIT_*_STAGES` constants): 64 rows with 256 k a stage on the persistent kernel
    /// below a wave of 64-row tiles, data-parallel 64-row tiles of 128 k from a wave on.
    ///
    /// H200, bench's default set before and after the start, one call [cuBLASLt]:
    /// 4096x8x4096 NN 15.3 -> 13.5 us [14.1]; 14336x32x4096 NN 44.2 -> 33.4 [32.7];
    /// 4096x32x4096 TN 15.8 -> 14.0 [14.8]; 4096x8x14336 NN 35.0 -> 32.6 [33.0]; 14336x8x4096
    /// NT (B copied) 50.4 -> 37.5 [32.5]; 4096x8x4096 NT 18.8 -> 16.3 [16.0]; 4096x1x4096 NN
    /// 15.6 -> 13.5 [15.7]; e4m3 14336x8x4096 20.5 -> 20.1 [18.9] before the 8-bit cuts (19.1
    /// [19.3] with them, docs/performance.md). Swapped (M of at most 16 on the instruction's
    /// N) it lost to the default set on 8x14336x4096 NN (46.6 against 38.0 [33.7]), so
    /// M-narrow problems keep the other starts.
    pub fn narrow_n_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        if !constraints::is_wgmma(&self.raw_default())
            || p.n > NARROW_N_MAX
            || !self.domain(ParamId::PersistentKernel).contains(1)
            || !self.domain(ParamId::ProducerWarp).contains(1)
        {
            return None;
        }
        let mt1 = (p.n + 15) / 16 * 16;
        let short_tiles = tile_count(p, 64, mt1);
        if short_tiles * 8 < cus * 3 {
            return None;
        }
        // (rows, k a stage, stages, persistent, PrefetchLocalRead). The 128-row tile's 64 k
        // are 64 bytes of an 8-bit type, less than a swizzled row: there it takes 128 k.
        let cuts: &[(i64, i64, i64, i64, i64)] = if p.a_type.bytes() == 1 {
            if short_tiles >= 2 * cus {
                &[(64, 128, EIGHT_BIT_TWO_WAVES_STAGES, 0, 1)]
            } else if short_tiles >= cus {
                &[(64, 128, EIGHT_BIT_ONE_WAVE_STAGES, 0, 1)]
            } else {
                &[(64, 256, EIGHT_BIT_UNDER_A_WAVE_STAGES, 1, 1)]
            }
        } else if tile_count(p, 128, mt1) >= cus && (65..=128).contains(&p.k) {
            &[(128, 128, WHOLE_K_STAGES, 1, 0)]
        } else if tile_count(p, 128, mt1) >= cus {
            &[
                (128, 64, START_STAGES_MAX, 1, 1),
                (128, 128, START_STAGES_MAX, 1, 1),
            ]
        } else {
            &[(64, 128, SHORT_TILE_STAGES, 1, 1)]
        };
        let plain = cuts
            .iter()
            .find_map(|&(mt0, depth_u, stages, persistent, plr)| {
                let space = self.with_pipeline_up_to(
                    &[
                        (ParamId::MacroTile0, mt0),
                        (ParamId::MacroTile1, mt1),
                        (ParamId::DepthU, depth_u),
                        (ParamId::WavesM, 4),
                        (ParamId::WavesN, 1),
                        (ParamId::SwapAB, 0),
                        (ParamId::ProducerWarp, 1),
                        (ParamId::PersistentKernel, persistent),
                        (ParamId::PrefetchLocalRead, plr),
                        (ParamId::GlobalSplitU, 1),
                        (ParamId::GlobalSplitUAlgorithm, 1),
                    ],
                    stages,
                )?;
                Some(space.raw_default())
            })?;
        let packed = KernelConfig {
            pu: constraints::PACK_B,
            ..plain
        };
        // Only a B of rows aligned to 16 bytes and not 32 is copied here; the packed twins
        // take a B off the 128-byte lines (Space::packed_twins).
        Some(
            if constraints::tma_rows_unaligned(&self.problem, false) && self.is_valid(&packed) {
                packed
            } else {
                plain
            },
        )
    }

    /// A second start for the narrow-N problems whose 128-row tiles make half a wave to
    /// under one (where [`Space::narrow_n_start`] takes 64-row tiles on the persistent kernel):
    /// the 128-row tile, two warpgroups along M beside the producer warp, 128 k a stage,
    /// data-parallel, as deep as fits, for 16-bit inputs. Its rows of an M-major A are 256
    /// bytes a k instead of 128. H200, kernel against kernel, one call (cuBLASLt in brackets),
    /// against the persistent 64-row tile: 11008x6x4096 NN 27.5 us against 30.3 [27.6];
    /// 13824x5x5120 39.2 against 39.5 [37.3]; 14336x8x4096 33.0 against 33.3 [32.1]. Bench's
    /// default set before and after, one call: 11008x6x4096 NN 29.3 -> 27.5 [27.4-27.5];
    /// 11008x16x4096 NN 29.6 -> 27.6 [27.2-27.6]; 14336x2x4096 33.4 -> 32.8 [32.2-32.3].
    pub fn narrow_n_tall_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        let mt1 = (p.n + 15) / 16 * 16;
        let tall = tile_count(p, 128, mt1);
        if !constraints::is_wgmma(&self.raw_default())
            || p.n > NARROW_N_MAX
            || p.a_type.bytes() != 2
            || tall >= cus
            || tall * 2 < cus
            || p.k <= 128
        {
            return None;
        }
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile0, 128),
            (ParamId::MacroTile1, mt1),
            (ParamId::DepthU, 128),
            (ParamId::WavesM, 8),
            (ParamId::WavesN, 1),
            (ParamId::SwapAB, 0),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 0),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
        ])?;
        Some(space.raw_default())
    }

    /// An N-major B (NT, TT) of 65 to 128 columns, N an odd multiple of 8: 64-row tiles
    /// exactly N wide, data-parallel and persistent, one warpgroup beside the producer warp,
    /// as deep as fits. No chunk of 64, 32 or 16 columns divides such a tile, so B streams from
    /// its K-major copy; the other starts round N up to 16 and read B in place in 16-column
    /// chunks (a 32-byte swizzle), or split N. H200, kernel against kernel, one call
    /// (cuBLASLt in brackets), data-parallel / persistent against the best of bench's default
    /// set: 4096x72x4096 TT 16.9 / 18.0 against 20.7 [19.2] (NT, another call: 17.3 / 17.8
    /// against 20.8 [18.7]); 7168x88x2048 NT 15.5 / 15.0 against 15.7 [12.9]; 6144x120x4096 TT
    /// 22.5 / 22.4 against 22.8 [22.4]; 5120x104x5120 NT 22.6 / 23.1 against 22.7 [21.5].
    ///
    /// N of 80 or 112 (16-column chunks) or 96 (32-column ones) reads B in place by default;
    /// there the same tiles read B copied K-major first (PackUnaligned on B): H200, kernel
    /// against kernel, one call, 6144x96x6144 NT on 64x96 data-parallel 27.7 us with B copied
    /// against 33.8 in place and 39.7 for the default set's best, stream-K on 64x96 [cuBLASLt
    /// 24.5].
    pub fn n_major_exact_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let copy = if p.n % 16 == 8 {
            0
        } else {
            constraints::PACK_B
        };
        if !constraints::is_wgmma(&self.raw_default())
            || p.k_contiguous(false)
            || !(65..=128).contains(&p.n)
            || p.n % 8 != 0
            || p.n % 64 == 0
            || (copy > 0
                && !self
                    .domain(ParamId::PackUnaligned)
                    .contains(i64::from(copy)))
        {
            return Vec::new();
        }
        [0, 1]
            .into_iter()
            .filter_map(|persistent| {
                let space = self.with_deepest_pipeline(&[
                    (ParamId::MacroTile0, 64),
                    (ParamId::MacroTile1, p.n),
                    (ParamId::DepthU, 128 / p.a_type.bytes() as i64),
                    (ParamId::WavesM, 4),
                    (ParamId::WavesN, 1),
                    (ParamId::SwapAB, 0),
                    (ParamId::ProducerWarp, 1),
                    (ParamId::PersistentKernel, persistent),
                    (ParamId::WorkGroupMapping, 8),
                    (ParamId::GlobalSplitU, 1),
                    (ParamId::GlobalSplitUAlgorithm, 1),
                    (ParamId::PackUnaligned, i64::from(copy)),
                ])?;
                Some(space.raw_default())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::{GsuAlgo, KernelConfig, Space};

    #[test]
    fn an_n_major_b_of_odd_eights_starts_on_a_tile_exactly_n_wide() {
        let hw = HwSpec::by_name("H200").unwrap();
        // Odd multiples of 8 read B from its automatic K-major copy; N of 80, 96 or 112 (read
        // in place in 16- or 32-column chunks otherwise) copy it by PackUnaligned.
        let copied = crate::space::constraints::PACK_B;
        for (m, n, ta, pu) in [
            (4096, 72, Trans::T, 0),
            (4096, 88, Trans::N, 0),
            (4096, 120, Trans::T, 0),
            (6144, 80, Trans::T, copied),
            (6144, 96, Trans::N, copied),
            (6144, 112, Trans::N, copied),
        ] {
            let p = GemmProblem::with_layout(m, n, m, ta, Trans::T);
            let s = Space::for_problem(&p, &hw);
            let starts = s.n_major_exact_starts();
            assert_eq!(starts.len(), 2, "N = {n}");
            for (c, pk) in starts.iter().zip([0, 1]) {
                s.check(c).unwrap();
                assert_eq!(
                    (c.mt0, c.mt1 as i64, c.pk, c.sab, c.pu),
                    (64, n, pk, 0, pu),
                    "N = {n}"
                );
                assert!(s.extra_starts().contains(&s.tile_order(c)), "N = {n}");
            }
        }
        // N of 128 (64-column chunks), N past 128, a K-major B: none.
        for (n, tb) in [(128, Trans::T), (136, Trans::T), (72, Trans::N)] {
            let p = GemmProblem::with_layout(4096, n, 4096, Trans::T, tb);
            let s = Space::for_problem(&p, &hw);
            assert!(s.n_major_exact_starts().is_empty(), "N = {n}");
        }
    }

    /// A problem of this layout and input type with packed leading dimensions, on an H200.
    fn h200(m: i64, n: i64, k: i64, ta: Trans, tb: Trans, t: DataType) -> Space {
        let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
        (p.a_type, p.b_type) = (t, t);
        Space::for_problem(&p, &HwSpec::by_name("H200").unwrap())
    }

    #[test]
    fn narrow_n_under_a_wave_of_128_row_tiles_also_starts_on_them_data_parallel() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 86 to 112 tiles of 128 rows (of 132 compute units), K- or M-major A.
        for (m, n, k, ta) in [
            (11008, 6, 4096, Trans::N),
            (13824, 5, 5120, Trans::T),
            (14336, 8, 4096, Trans::T),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, k, ta, Trans::N), &hw);
            let c = s.narrow_n_tall_start().expect("half a wave or more");
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0, c.mt1, c.depth_u, c.wg, c.pk, c.pw, c.gsu),
                (128, 16, 128, [8, 1], 0, 1, 1),
                "{m}x{n}"
            );
            assert!(s.extra_starts().contains(&s.tile_order(&c)), "{m}x{n}");
        }
        // A wave of 128-row tiles or more, under half of one, N past 64, 8-bit A: none.
        let mut e4m3 = GemmProblem::new(11008, 6, 4096);
        (e4m3.a_type, e4m3.b_type) = (DataType::F8, DataType::F8);
        e4m3.fill_defaults();
        for p in [
            GemmProblem::new(28672, 8, 4096),
            GemmProblem::new(4096, 8, 4096),
            GemmProblem::new(11008, 96, 4096),
            e4m3,
        ] {
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.narrow_n_tall_start(), None, "{}x{}", p.m, p.n);
        }
    }

    #[test]
    fn narrow_n_starts_on_one_n_tile_of_whole_tiles() {
        use Trans::{N, T};
        let bf16 = DataType::Bf16;
        let f8 = DataType::F8;
        // (shape, layout, type) -> (rows, columns, k a stage, stages, B copied, persistent).
        for ((m, n, k), (ta, tb), t, want) in [
            ((4096, 8, 4096), (N, N), bf16, (64, 16, 128, 8, 0, 1)),
            ((14336, 32, 4096), (T, N), bf16, (64, 32, 128, 8, 0, 1)),
            ((4096, 1, 14336), (N, N), bf16, (64, 16, 128, 8, 0, 1)),
            ((28672, 8, 4096), (T, N), bf16, (128, 16, 64, 12, 0, 1)),
            ((14336, 8, 4096), (N, T), bf16, (64, 16, 128, 8, 2, 1)),
            ((14336, 64, 4096), (T, T), bf16, (64, 64, 128, 6, 0, 1)),
            // 8-bit: a wave of 64-row tiles or more data-parallel and shallow, less than one
            // persistent with 256 k a stage.
            ((14336, 8, 4096), (T, N), f8, (64, 16, 128, 6, 0, 0)),
            ((28672, 16, 4096), (T, N), f8, (64, 16, 128, 4, 0, 0)),
            ((4096, 8, 4096), (T, N), f8, (64, 16, 256, 10, 0, 1)),
            ((4096, 4, 14336), (T, N), f8, (64, 16, 256, 10, 0, 1)),
        ] {
            let s = h200(m, n, k, ta, tb, t);
            let c = s.narrow_n_start().unwrap_or_else(|| panic!("{m}x{n}x{k}"));
            s.check(&c).unwrap();
            let got = (c.mt0, c.mt1, c.depth_u, c.pgr, c.pu, c.pk);
            assert_eq!(got, want, "{m}x{n}x{k} {ta:?}{tb:?} {t:?}");
            assert_eq!((c.pw, c.gsu, c.sab), (1, 1, 0), "{m}x{n}x{k}");
            // First among the starts, and no stream-K twin after it.
            let starts = s.extra_starts();
            assert_eq!(starts.first(), Some(&s.tile_order(&c)), "{m}x{n}x{k}");
            let twin = KernelConfig {
                gsu_algo: GsuAlgo::StreamK,
                ..c
            };
            assert!(!starts.contains(&twin), "{m}x{n}x{k}");
        }
        // All of K in one stage of the 128-row tile, four tiles ahead, each tile's
        // instructions waited for: decode attention scores over 32 heads of 128, and K of
        // 128 unbatched.
        for batch in [32, 1] {
            let mut p = GemmProblem::new(if batch == 1 { 32768 } else { 4096 }, 1, 128);
            p.batch = batch;
            p.fill_defaults();
            let s = Space::for_problem(&p, &HwSpec::by_name("H200").unwrap());
            let c = s.narrow_n_start().expect("a wave of 128-row tiles");
            s.check(&c).unwrap();
            let got = (c.mt0, c.mt1, c.depth_u, c.pgr, c.plr, c.pk);
            assert_eq!(got, (128, 16, 128, 4, 0, 1), "batch {batch}");
        }
        // N past 64, too few rows for three eighths of a wave, M-narrow: none.
        for (m, n, k) in [(14336, 65, 4096), (3072, 8, 4096), (8, 14336, 4096)] {
            let s = h200(m, n, k, N, N, bf16);
            assert_eq!(s.narrow_n_start(), None, "{m}x{n}x{k}");
        }
    }
}
