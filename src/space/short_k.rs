//! Starts for short K (at most two DepthU steps per tile: attention scores over a head
//! dimension, rank updates), where a tile's time is its output store and its load latency,
//! not its main loop: the persistent kernel two tiles ahead where tensor-map stores apply
//! (over two waves of 64-row tiles, ping-pong, one warpgroup storing while the other
//! multiplies), a shallow data-parallel tile where they do not; ping-pong on 128-row tiles
//! for a K of a few hundred over many waves, where the store still costs about what a few
//! K steps do; and for K of one warp-level step next to a narrow N, many small warp-level
//! workgroups a compute unit.

use super::config::KernelConfig;
use super::constraints;
use super::param::{pack_mi, ParamId};
use super::tuning_space::{moderate_k_ping_pong_kind, tile_count, two_line_depth, Space};
use crate::problem::Trans;

/// The most K of the tiny-K starts: one k step of the warp-level instruction.
const TINY_K: i64 = 16;
/// The widest N of the tiny-K starts: past it the warpgroup tiles' stores are wide enough.
const TINY_K_MAX_N: i64 = 64;
/// The most K of the FMA path's tiny-K start: one stage of 8.
const FMA_TINY_K: i64 = 8;
/// Outputs a warp of the tiny-K starts' 256-row tile holds: 64 accumulators a lane.
const TINY_K_OUTPUTS_PER_WARP: i64 = 2048;
/// The most K of the FMA path's short-K starts: sixteen stages of 8.
const FMA_SHORT_K: i64 = 128;
/// Waves of 128x128 tiles at least, for the FMA path's short-K starts: output-heavy GEMMs.
const FMA_SHORT_K_WAVES: i64 = 4;
/// The moderate-K ping-pong start's tile: as wide as one warpgroup's accumulators hold for
/// 128 rows beside a second warpgroup (144 columns, 144 accumulators a lane).
const MODERATE_K_PING_PONG_TILE: (i64, i64) = (128, 144);
/// The ping-pong tile's width for N: MODERATE_K_PING_PONG_TILE's 144 columns, or 128 where
/// 144 would pad N by more than 5% and 128 by less (N of 512 padded to 576 multiplies and
/// stores 12.5% more columns: 65536x512x1024 ran 0.89x cuBLASLt on the default's 128x256
/// tiles, H200).
fn moderate_k_tile_width(n: i64) -> i64 {
    let wide = MODERATE_K_PING_PONG_TILE.1;
    let pad = |w: i64| (n + w - 1) / w * w - n;
    if pad(wide) * 20 > n && pad(128) < pad(wide) {
        128
    } else {
        wide
    }
}

/// Waves of that tile at least: with 2.6 (768x8192x768) the second warpgroup had too few
/// tiles to overlap and the start ran 20.6 us against 19.9 for the default's (H200).
const MODERATE_K_PING_PONG_WAVES: i64 = 4;

impl Space {
    /// Starts for K of one warp-level step (at most 16) beside a narrow N (at most 64) on many
    /// rows: a GEMM that reads A once and writes D once, with almost nothing to multiply, so
    /// its time is how many loads and stores are in flight. Warp-level tiles of 128 rows on
    /// four warps and 256 on as few warps as keep 64 accumulators a lane (two for 16
    /// columns, eight for 64), one stage of 16 k: a few KiB of LDS each, so many workgroups
    /// share a compute unit, where the warpgroup tiles' 64-k stages are three quarters zeros
    /// and hold it to a few. Swizzled LDS where an operand is M- or N-major (its rows are
    /// read transposed), none where both are K-contiguous. H200, kernel against kernel, same
    /// call (cuBLASLt in brackets): 1048576x16x16 27.1 on 128 rows (28.8 on 256 of eight
    /// warps) against 53.4 for the default's 128x16x32 on four stages [30.4]; 262144x32x16
    /// 14.1 against 19.4 [15.0]; 65536x64x8 10.7 on 256 rows (12.6 on 128) against 12.1
    /// [8.8-12.1]; 1000000x16x16 NN 25.7 on 256 rows of two warps, swizzled (31.2 without),
    /// 28.8 on 128 rows, 31.3 on 256 of eight warps [25.4]. N of 8 or less as well: the GEMV
    /// path splits K over a wave's lanes, and a K of 8 leaves all but one idle (1000000x8x8
    /// TN 27.3 on 256 rows of four warps, 27.5 of two, against 56.3 for the warpgroup tiles
    /// and 203.6 for the GEMV path [32.2]).
    pub fn tiny_k_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let warp_level = pack_mi([16, 8, 16]);
        if !self.domain(ParamId::MatrixInstruction).contains(warp_level)
            || p.k > TINY_K
            || p.n > TINY_K_MAX_N
            || p.a_type.bytes() != 2
            || tile_count(p, 128, p.n) < 2 * self.hw.compute_units as i64
        {
            return Vec::new();
        }
        let mt1 = (p.n + 15) / 16 * 16;
        let swizzle = i64::from(!p.k_contiguous(true) || !p.k_contiguous(false));
        [
            (128, 4),
            (256, (256 * mt1 / TINY_K_OUTPUTS_PER_WARP).clamp(2, 8)),
        ]
        .into_iter()
        .filter_map(|(mt0, waves)| {
            self.valid_start(&[
                (ParamId::MacroTile0, mt0),
                (ParamId::MacroTile1, mt1),
                (ParamId::DepthU, TINY_K),
                (ParamId::MatrixInstruction, warp_level),
                (ParamId::WavesM, waves),
                (ParamId::WavesN, 1),
                (ParamId::PrefetchGlobalRead, 1),
                (ParamId::PrefetchLocalRead, 0),
                (ParamId::LdsSwizzle, swizzle),
                (ParamId::LdsPadA, 0),
                (ParamId::LdsPadB, 0),
                (ParamId::GlobalSplitU, 1),
                (ParamId::ProducerWarp, 0),
                (ParamId::SwapAB, 0),
                (ParamId::PersistentKernel, 0),
                (ParamId::ClusterN, 1),
                (ParamId::ClusterM, 1),
            ])
        })
        .collect()
    }

    /// A start for the FMA path (f32, no matrix instructions) where K fits one stage of 8
    /// beside a narrow N (9 to 64) on many rows, as the tiny-K starts above are for 16-bit
    /// inputs: 64 rows by N (in whole 16-column steps) on four waves, one stage of 8 k and no
    /// prefetch across stages, so many small workgroups share a compute unit and their stores
    /// overlap. The default's 16 k on three stages reserve LDS for steps K does not have.
    /// H200, kernel against kernel, one call: 1000000x64x3 NN 126.1 us on 64x64x8 (128.8 on
    /// two waves, 128.9 on 128x64 of four waves on two stages) against 169.2 for the default's
    /// 128x64x16 on three [cuBLASLt 124.1].
    pub fn fma_tiny_k_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let default = self.raw_default();
        if !default.on_fma_path()
            || default.gv > 0
            || p.k > FMA_TINY_K
            || p.n > TINY_K_MAX_N
            || tile_count(p, 64, p.n) < 2 * self.hw.compute_units as i64
        {
            return None;
        }
        self.valid_start(&[
            (ParamId::MacroTile0, 64),
            (ParamId::MacroTile1, (p.n + 15) / 16 * 16),
            (ParamId::WavesM, 1),
            (ParamId::WavesN, 4),
            (ParamId::DepthU, FMA_TINY_K),
            (ParamId::PrefetchGlobalRead, 1),
            (ParamId::PrefetchLocalRead, 0),
            (ParamId::GlobalSplitU, 1),
        ])
    }

    /// The FMA path's starts for a short K (9 to 128) over many waves of output tiles (f32
    /// outer-product-like GEMMs, where the output store weighs as much as the main loop):
    /// tiles of four waves, 8 k a stage on three stages (the default's eight waves and 16 k
    /// hold one workgroup a compute unit), 128x128 without the local prefetch and 256x64
    /// with it. H200, sweeps (cuBLASLt in brackets; bench's default set before in
    /// parentheses): 8192x8192x32 NT 233.5 us on 128x128x8 (268.9) [166.0]; 5000x5000x64 NT
    /// 130.0 on 256x64x8 (145.9) [103.3]; 100000x128x128 NN 103.7 on 128x128x8 (111) [81.4].
    /// Where the default wins they lose nothing but their place in the set: 30000x512x64
    /// 88.9 against 83.9, 4096x4096x128 TT 129.8 against 124.7.
    pub fn fma_short_k_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let default = self.raw_default();
        if !default.on_fma_path()
            || p.k <= FMA_TINY_K
            || p.k > FMA_SHORT_K
            || tile_count(p, 128, 128) < FMA_SHORT_K_WAVES * self.hw.compute_units as i64
        {
            return Vec::new();
        }
        [(128, 128, 0), (256, 64, 1)]
            .into_iter()
            .filter_map(|(mt0, mt1, plr)| {
                self.valid_start(&[
                    (ParamId::MacroTile0, mt0),
                    (ParamId::MacroTile1, mt1),
                    (ParamId::WavesM, 1),
                    (ParamId::WavesN, 4),
                    (ParamId::DepthU, 8),
                    (ParamId::PrefetchGlobalRead, 3),
                    (ParamId::PrefetchLocalRead, plr),
                    (ParamId::GlobalSplitU, 1),
                ])
            })
            .collect()
    }

    /// A start for short K (at most two DepthU steps) where the persistent start does not
    /// apply (D's rows not 16-byte aligned, as with 197-token attention, so no tensor-map
    /// stores; or beta): a data-parallel 64-row tile covering N (up to 256 columns, two
    /// warpgroups past 128) with only as many stages as K has steps. Stages beyond those
    /// only reserve shared memory, and with one or two steps a workgroup's time is its load
    /// latency and its stores, which several workgroups a compute unit overlap. H200, same
    /// call (cuBLASLt in brackets): 197x197x64 x192 28.5 us on MT64x208 WG4x2 PGR2 against
    /// 37.7 for the tune's MT128x112 PGR6 and 31.1-32.4 on 128-row tiles at PGR1-2 [31.6].
    pub fn short_k_tile_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let steps = (p.k + start.depth_u as i64 - 1) / start.depth_u.max(1) as i64;
        let mt1 = ((p.n + 15) / 16 * 16).min(256);
        if !constraints::is_wgmma(&start)
            || steps > 2
            || p.n <= constraints::GEMV_MAX_N
            || tile_count(p, 64, mt1) < 2 * self.hw.compute_units as i64
            || self.short_k_start().is_some()
        {
            return None;
        }
        self.valid_start(&[
            (ParamId::MacroTile0, 64),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, if mt1 > 128 { 2 } else { 1 }),
            (ParamId::PrefetchGlobalRead, steps),
            (ParamId::PrefetchLocalRead, 0),
            (ParamId::GlobalSplitU, 1),
            (ParamId::PersistentKernel, 0),
            (ParamId::ProducerWarp, 0),
            (ParamId::SwapAB, 0),
        ])
    }

    /// A start for short K (at most two DepthU steps per tile: attention scores over a head
    /// dimension, rank updates), where a tile's time is its output store, not its main loop:
    /// the persistent kernel on 128x128 tiles, whose producer warp loads the next tiles'
    /// operands and whose tensor-map stores drain while the consumers multiply the next tile,
    /// four stages deep (two tiles ahead at two steps per tile). A data-parallel kernel
    /// stores and then exits, and the next workgroup on that unit starts by waiting for its
    /// operands. H200, same call (cuBLASLt in brackets): 512x512x64 x40 11.5 us against 19.2
    /// for the tune's data-parallel 128x256 winner and 15.3-15.9 for the best data-parallel
    /// tiles [12.8]; 16384x16384x128 185.9-188.1 against 197.2 on the 128x256 persistent
    /// start [184.5]; 8192^2x256 e4m3 50.2 [50.5]; 1024^2x64 x64 46.9 [46.9]. Two stages ran
    /// 1.1-1.4x slower (no tile ahead), six 1.0-1.07x (16384^2x128: 196.2), 64-row or 64-column
    /// tiles 1.25-1.6x (each stores as much per operand byte loaded, but twice the tiles).
    pub fn short_k_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let steps = (p.k + start.depth_u as i64 - 1) / start.depth_u.max(1) as i64;
        if !constraints::is_wgmma(&start)
            || steps > 2
            || p.m < 128
            || p.n < 128
            || !self.domain(ParamId::PersistentKernel).contains(1)
            || tile_count(p, 128, 128) < 2 * self.hw.compute_units as i64
        {
            return None;
        }
        [4, 3, 2].into_iter().find_map(|pgr| {
            self.valid_start(&[
                (ParamId::MacroTile0, 128),
                (ParamId::MacroTile1, 128),
                (ParamId::WavesM, 8),
                (ParamId::WavesN, 1),
                (ParamId::PrefetchGlobalRead, pgr),
                (ParamId::PrefetchLocalRead, 0),
                (ParamId::GlobalSplitU, 1),
                (ParamId::GlobalSplitUAlgorithm, 1),
                (ParamId::ProducerWarp, 1),
                (ParamId::PersistentKernel, 1),
                (ParamId::SwapAB, 0),
            ])
        })
    }

    /// A start for short K (at most two 128-byte rows of K) over at least two waves of
    /// 64-row tiles: ping-pong (PersistentKernel=2), two warpgroups each taking whole 64-row
    /// tiles in turn beside the producer, so one warpgroup's store runs while the other
    /// loads and multiplies; the tile as wide as N in the fewest pieces of at most 256
    /// columns, four stages (two tiles ahead). H200, kernel against kernel, one call
    /// (cuBLASLt in brackets): 576x576x64 x48 on 64x192 14.3 us against 16.5 for the best
    /// of bench's default set [16.8]; 512x512x64 x40 11.1 against 11.8 [12.3]; 1024x1024x128
    /// x32 28.6 against 29.6 [29.7]; 8192x8192x256 e4m3 47.9 against 50.0 [50.4]; 4096^2 x 64
    /// 14.7 against 14.5 [14.3]; in another call 64x2048x64 x256 39.5 against 42.5 [39.4].
    /// Under two waves the tiles leave the second warpgroup little to overlap: 256x256x128
    /// x32 (128 tiles) 7.7 against 7.4, 128x128x64 x64 6.5 against 6.1. From N of 64: bench's
    /// default set, two calls, 64x64x64 x70000 437.2 -> 424.4 and 436.7 -> 425.6 [394.7-394.9];
    /// the two other GEMMs whose sets it joined (4096x77x40 x16, 64x64x64 x4096) kept their
    /// winner.
    pub fn short_k_ping_pong_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let pieces = (p.n + 255) / 256;
        let mt1 = ((p.n + pieces - 1) / pieces + 15) / 16 * 16;
        if !self.domain(ParamId::PersistentKernel).contains(2)
            || p.k > two_line_depth(p)
            || p.m < 64
            || p.n < 64
            || tile_count(p, 64, mt1) < 2 * self.hw.compute_units as i64
        {
            return None;
        }
        self.valid_start(&[
            (ParamId::MacroTile0, 64),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, 1),
            (ParamId::PrefetchGlobalRead, 4),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 2),
            (ParamId::SwapAB, 0),
        ])
    }

    /// A start for K past two 128-byte rows and up to 1024, 2048 into an f32 D (16- or 8-bit A
    /// and B), over four or more waves of 128x144 tiles, B K-major, D of 16 or 32 bits and no
    /// C: ping-pong (PersistentKernel=2) on 128x144 tiles, each warpgroup multiplying whole
    /// tiles of its own beside the producer warpgroup while the other stores, as deep as
    /// fits. With 8 to 12 K steps a tile, storing a 128x256 tile still costs about what two
    /// or three of its K steps do, and the default's one set of warpgroups stores with the
    /// tensor cores idle.
    /// cuBLASLt runs `nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB` on 2304x8192x768. H200,
    /// kernel against the best of bench's default set, one call (cuBLASLt in brackets):
    /// 2304x8192x768 45.3 us against 51.1 [46.7]; 4096x8192x768 74.4 against 78.5 [75.9];
    /// 8192x8192x512 103.5 against 111.5 [106.5]; 2304x16384x768 86.3 against 88.7 [85.5];
    /// 3072x8192x1024 75.0 against 75.1 [73.8]; 4096x16384x256 66.1 against 65.8 [65.4]; in
    /// e4m3 (128 k a stage, four stages; the start fits five) 2304x8192x768 29.7 against 33.4
    /// [31.0], 8192x8192x1024 110.8 against 112.6 [109.5], 4096x8192x512 36.0 against 36.4
    /// [37.5]. An N-major B in 144 columns is not whole 64-column chunks: 6144x4096x1024 NT
    /// ran 140 against 74.4, so B is K-major here. An f32 D (16-bit inputs) as well, now that
    /// its stores are staged at places a constant apart (kernels/epilogue/gt_out_staging.h):
    /// five stages beside two staging areas of three 48-column groups, and the store of a
    /// tile, twice a 16-bit one's bytes, overlaps the other warpgroup's K steps where the
    /// persistent 128x256 tile's stores leave the tensor cores idle; 8192x8192x512 125.5
    /// against 140.8 for the best of bench's default set [133.9], 2304x8192x768 51.0 against
    /// 61.0 [54.8], 4096x8192x768 85.4 against 93.9 [90.3], 8192x28672x1024 704.5 against
    /// 772.5 [746.3] (H200, one call); e4m3 into f32 7168x4096x512 45.4 against 44.8 [45.3].
    /// Before, the element-by-element staging made it lose (2304x8192x768 70.3 against 62.3).
    /// Into an f32 D it still wins up to a K of 2048 (another call: 4096x8192x2048 195.1
    /// against 201.4 [194.9], 8192x8192x1536 298.4 against 310.9 [308.8], 2304x8192x2048 NN
    /// 114.2 against 117.6 [113.6], e4m3 7168x4096x2048 99.1 against 101.0 [100.0]) and
    /// loses at 4096 (4096^3: 204.3 against 183.8 [180.5]), so the kind goes that far for it.
    pub fn moderate_k_ping_pong_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let (mt0, mt1) = (MODERATE_K_PING_PONG_TILE.0, moderate_k_tile_width(p.n));
        if !moderate_k_ping_pong_kind(p)
            || p.k <= two_line_depth(p)
            || p.trans_b != Trans::N
            || !matches!(p.d_type.bytes(), 2 | 4)
            || p.beta != 0.0
            || !constraints::is_wgmma(&self.raw_default())
            || !self.domain(ParamId::PersistentKernel).contains(2)
            || tile_count(p, mt0, mt1) < MODERATE_K_PING_PONG_WAVES * self.hw.compute_units as i64
        {
            return None;
        }
        self.deepest_ping_pong(mt0, mt1)
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::param::ParamId;
    use crate::space::Space;

    #[test]
    fn one_warp_level_k_step_beside_a_narrow_n_starts_on_small_warp_level_tiles() {
        let hw = HwSpec::by_name("H200").unwrap();
        for (m, n, k, mt1, warps) in [
            (1048576, 16, 16, 16, 2),
            (65536, 64, 8, 64, 8),
            (100000, 24, 8, 32, 4),
            (1000000, 8, 8, 16, 2),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            let starts = s.tiny_k_starts();
            let shapes: Vec<_> = starts.iter().map(|c| (c.mt0, c.mt1, c.wg)).collect();
            assert_eq!(
                shapes,
                [(128, mt1, [4, 1]), (256, mt1, [warps, 1])],
                "{m}x{n}x{k}"
            );
            for c in &starts {
                s.check(c).unwrap();
                assert_eq!(
                    (c.mi, c.depth_u, c.pgr, c.swizzle, c.pk),
                    ([16, 8, 16], 16, 1, 0, 0)
                );
            }
        }
        // An M-major A is read transposed: swizzled.
        let nn = GemmProblem::with_layout(1000000, 16, 16, Trans::N, Trans::N);
        let s = Space::for_problem(&nn, &hw);
        let starts = s.tiny_k_starts();
        assert_eq!(starts.len(), 2);
        assert!(starts.iter().all(|c| c.swizzle == 1 && s.check(c).is_ok()));
        // K past one step, N past 64, f32, or too few rows: none.
        let mut f32 = GemmProblem::new(1048576, 16, 16);
        (f32.a_type, f32.b_type, f32.c_type, f32.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        for p in [
            GemmProblem::new(1048576, 16, 32),
            GemmProblem::new(1048576, 128, 16),
            GemmProblem::new(4096, 16, 16),
            f32,
        ] {
            assert!(
                Space::for_problem(&p, &hw).tiny_k_starts().is_empty(),
                "{}",
                p.label()
            );
        }
    }

    #[test]
    fn short_k_with_unaligned_d_starts_on_a_shallow_data_parallel_tile() {
        let hw = HwSpec::by_name("H200").unwrap();
        // D's rows of 197 elements: no tensor-map store, so no persistent start; one step of
        // K, one stage, 64 rows by all 197 columns on two warpgroups.
        let mut p = GemmProblem::new(197, 197, 64);
        p.batch = 192;
        let s = Space::for_problem(&p, &hw);
        assert_eq!(s.short_k_start(), None);
        let c = s.short_k_tile_start().expect("768 tiles of one K step");
        s.check(&c).unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.wg, c.pgr, c.pk, c.gsu),
            (64, 208, [4, 2], 1, 0, 1)
        );
        assert!(s.extra_starts().contains(&c));
        // Where the persistent start applies, long K, few tiles: none.
        for (m, n, k, batch) in [(512, 512, 64, 40), (197, 197, 1024, 192), (197, 197, 64, 2)] {
            let mut p = GemmProblem::new(m, n, k);
            p.batch = batch;
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.short_k_tile_start(), None, "{m}x{n}x{k}x{batch}");
        }
    }

    #[test]
    fn f32_with_k_of_one_stage_of_8_beside_a_narrow_n_starts_on_64_rows_of_one_stage() {
        let hw = HwSpec::by_name("H200").unwrap();
        let f32 = |m, n, k, ta, tb| {
            let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
            (p.a_type, p.b_type, p.c_type, p.d_type) =
                (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
            p
        };
        for (p, mt1) in [
            (f32(1000000, 64, 3, Trans::N, Trans::N), 64),
            (f32(262144, 24, 8, Trans::T, Trans::N), 32),
        ] {
            let s = Space::for_problem(&p, &hw);
            let c = s.fma_tiny_k_start().expect("a start");
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.depth_u, c.pgr, c.plr), (64, mt1, 8, 1, 0));
            assert!(s.extra_starts().contains(&c));
        }
        // K past one stage, N past 64, a GEMV's N, 16-bit inputs or few rows: none.
        for p in [
            f32(1000000, 64, 16, Trans::N, Trans::N),
            f32(1000000, 128, 3, Trans::N, Trans::N),
            f32(1000000, 4, 3, Trans::T, Trans::N),
            f32(4096, 64, 3, Trans::N, Trans::N),
            GemmProblem::new(1000000, 64, 3),
        ] {
            assert!(
                Space::for_problem(&p, &hw).fma_tiny_k_start().is_none(),
                "{}",
                p.label()
            );
        }
    }

    #[test]
    fn f32_with_a_short_k_over_many_tiles_starts_on_four_waves_of_8_k() {
        let hw = HwSpec::by_name("H200").unwrap();
        let f32 = |m: i64, n: i64, k: i64, ta: Trans, tb: Trans| {
            let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
            (p.a_type, p.b_type, p.c_type, p.d_type) =
                (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
            p.fill_defaults();
            p
        };
        let names = |p: &GemmProblem| {
            let s = Space::for_problem(p, &hw);
            let starts = s.fma_short_k_starts();
            let extra = s.extra_starts();
            for c in &starts {
                assert!(s.is_valid(c), "{}", c.name());
                assert!(extra.contains(c), "{} is a start", c.name());
            }
            starts
                .iter()
                .map(|c| {
                    format!(
                        "{}x{}x{} WG{}x{} PGR{} PLR{}",
                        c.mt0, c.mt1, c.depth_u, c.wg[0], c.wg[1], c.pgr, c.plr
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&f32(8192, 8192, 32, Trans::N, Trans::T)),
            vec!["128x128x8 WG1x4 PGR3 PLR0", "256x64x8 WG1x4 PGR3 PLR1"]
        );
        assert_eq!(names(&f32(100000, 128, 128, Trans::N, Trans::N)).len(), 2);
        // K of one stage (fma_tiny_k_start), K past 128, few tiles: none.
        assert!(names(&f32(8192, 8192, 8, Trans::N, Trans::T)).is_empty());
        assert!(names(&f32(8192, 8192, 256, Trans::N, Trans::T)).is_empty());
        assert!(names(&f32(20000, 256, 96, Trans::N, Trans::N)).is_empty());
    }

    #[test]
    fn short_k_starts_on_the_persistent_kernel_two_tiles_ahead() {
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        let mut p = GemmProblem::new(512, 512, 64);
        p.batch = 40;
        let s = Space::for_problem(&p, &hw);
        let c = s.short_k_start().expect("640 tiles of one K step");
        s.check(&c).unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.pgr, c.plr, c.pw, c.pk),
            (128, 128, 4, 0, 1, 1)
        );
        assert!(s.extra_starts().contains(&c));
        // fp8: two steps of 128.
        let mut p = GemmProblem::new(8192, 8192, 256);
        p.a_type = DataType::F8;
        p.b_type = DataType::F8;
        assert!(Space::for_problem(&p, &hw).short_k_start().is_some());
        // Long K, fewer than two waves of tiles, a skinny N: none.
        for (m, n, k, batch) in [
            (4096, 4096, 256, 1),
            (128, 128, 64, 64),
            (16032, 109, 128, 1),
        ] {
            let mut p = GemmProblem::new(m, n, k);
            p.batch = batch;
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.short_k_start(), None, "{m}x{n}x{k}x{batch}");
        }
    }

    #[test]
    fn short_k_over_two_waves_of_64_row_tiles_starts_on_ping_pong() {
        let hw = HwSpec::by_name("H200").unwrap();
        let batched = |m, n, k, batch| GemmProblem {
            batch,
            ..GemmProblem::new(m, n, k)
        };
        // N in the fewest pieces of at most 256 columns: 576 in three of 192.
        for (p, mt1) in [
            (batched(576, 576, 64, 48), 192),
            (batched(64, 2048, 64, 256), 256),
            (batched(1024, 1024, 128, 32), 256),
            (batched(64, 64, 64, 70000), 64),
        ] {
            let s = Space::for_problem(&p, &hw);
            let c = s.short_k_ping_pong_start().expect("short K, many tiles");
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.pk, c.pgr, c.wg), (64, mt1, 2, 4, [4, 1]));
            assert!(s.extra_starts().contains(&c));
        }
        let f8 = GemmProblem {
            a_type: DataType::F8,
            b_type: DataType::F8,
            ..GemmProblem::new(8192, 8192, 256)
        };
        assert!(Space::for_problem(&f8, &hw)
            .short_k_ping_pong_start()
            .is_some());
        // Under two waves of tiles, N under 64, K past two 128-byte rows: none, and past
        // them the search keeps ping-pong opt-in.
        for p in [
            batched(256, 256, 128, 32),
            batched(4096, 48, 64, 8),
            batched(4096, 4096, 192, 1),
        ] {
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.short_k_ping_pong_start(), None, "{p:?}");
        }
        // Past a K of 1024 the search keeps ping-pong opt-in.
        let f8_long = GemmProblem {
            a_type: DataType::F8,
            b_type: DataType::F8,
            ..GemmProblem::new(4096, 4096, 2048)
        };
        for p in [GemmProblem::new(4096, 4096, 2048), f8_long] {
            let long = Space::for_problem(&p, &hw);
            assert!(!long.domain(ParamId::PersistentKernel).contains(2));
            assert!(long.domain(ParamId::PersistentKernel).admits(2));
        }
    }

    #[test]
    fn moderate_k_over_many_waves_starts_on_ping_pong_128x144_tiles() {
        let hw = HwSpec::by_name("H200").unwrap();
        let f8 = |m, n, k| GemmProblem {
            a_type: DataType::F8,
            b_type: DataType::F8,
            ..GemmProblem::new(m, n, k)
        };
        let f32_d = |m, n, k| GemmProblem {
            c_type: DataType::F32,
            d_type: DataType::F32,
            ..GemmProblem::new(m, n, k)
        };
        for p in [
            GemmProblem::new(2304, 8192, 768),
            GemmProblem::new(8192, 8192, 512),
            GemmProblem::new(4096, 4096, 256),
            GemmProblem::with_layout(2304, 8192, 1024, Trans::N, Trans::N),
            f8(2304, 8192, 768),
            f8(8192, 8192, 1024),
            f32_d(2304, 8192, 768),
            f32_d(8192, 8192, 512),
            f32_d(4096, 8192, 2048),
            f32_d(8192, 8192, 1536),
        ] {
            let s = Space::for_problem(&p, &hw);
            let c = s
                .moderate_k_ping_pong_start()
                .expect("moderate K, many waves");
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0, c.mt1, c.pk, c.wg, c.gsu, c.sab),
                (128, 144, 2, [4, 1], 1, 0),
                "{}",
                p.label()
            );
            assert!(c.pgr >= 4, "{}", p.label());
            assert!(s.extra_starts().contains(&c), "{}", p.label());
        }
        // N of 512 or 1024 would be padded by 12.5% on 144 columns: 128 (H200, bench's
        // default set: 65536x512x1024 113.4 -> 107.3 us [99.2], 32768x1024x512 f16 60.7 -> 59.5
        // [58.5], e4m3 32768x512x1024 34.4 -> 33.3 [33.3]).
        for (p, width) in [
            (GemmProblem::new(65536, 512, 1024), 128),
            (f8(32768, 512, 1024), 128),
            (GemmProblem::new(16384, 1024, 1024), 128),
            (GemmProblem::new(16384, 2048, 768), 128),
            (GemmProblem::new(16384, 1536, 768), 144),
        ] {
            let s = Space::for_problem(&p, &hw);
            let c = s.moderate_k_ping_pong_start().expect("moderate K");
            assert_eq!((c.mt0, c.mt1), (128, width), "{}", p.label());
            s.check(&c).unwrap();
        }
        // Under four waves, K of two rows or past 1024 (8-bit: of two rows is 256; past 2048
        // into an f32 D), B N-major, f32 operands, beta: none.
        let mut f32 = GemmProblem::new(8192, 8192, 512);
        (f32.a_type, f32.b_type, f32.c_type, f32.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        let beta = GemmProblem {
            beta: 1.0,
            ..GemmProblem::new(8192, 8192, 512)
        };
        for p in [
            GemmProblem::new(768, 8192, 768),
            GemmProblem::new(8192, 8192, 128),
            GemmProblem::new(8192, 8192, 2048),
            GemmProblem::with_layout(8192, 8192, 512, Trans::N, Trans::T),
            f8(8192, 8192, 256),
            f8(8192, 8192, 2048),
            f32_d(4096, 4096, 4096),
            f32,
            beta,
        ] {
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.moderate_k_ping_pong_start(), None, "{}", p.label());
        }
    }
}
