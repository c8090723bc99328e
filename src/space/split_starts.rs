//! Starts that cut K where the tiles alone leave compute units idle (small M or few tiles with
//! a long K): split-K summed in the kernel or by the reduction kernel on 64- and 128-row tiles
//! sized to fill one wave, and stream-K, where one persistent workgroup per compute unit
//! shares every (tile, K tile) iteration. Each is a start beside the default that the search
//! measures in its first batch and `bench` in its default set; which cut wins depends on K and
//! is measured, not modelled.

use super::config::{GsuAlgo, KernelConfig};
use super::constraints;
use super::one_wave::one_wave_tile;
use super::param::ParamId;
use super::tuning_space::{
    fills_wave, split_in_kernel_tile, tile_count, two_line_depth, Space, WIDEST_SPLIT,
};

impl Space {
    /// A second start for problems that start on a small warpgroup tile without a split: the
    /// 128x64 tile with K split in two and summed in the main kernel (GSU2K), when that is one
    /// full wave. Its workgroups stream a quarter fewer operand bytes each (96 rows of a
    /// 128x64 tile per K step against 128 of a 64x64 one), for the price of the partials'
    /// round trip; which wins depends on K and is measured, not modelled. H200, same run
    /// (cuBLASLt in brackets): 4096x128x14336 MT128x64 GSU2K 40.1-40.6 us against 42.0-43.2
    /// on MT64x64 without a split [39.5]; the split loses on shorter K: 4096x128x4096 19.3
    /// against 16.8-17.3 [16.5], 8192x64x8192 44.0 against 38.8-39.6 [39.5]; on an H100 the
    /// unsplit tile wins on 4096x128x14336 too (48.9-49.2 against 52.3). The pattern search
    /// measures both starts in its first batch.
    pub fn split_start(&self) -> Option<KernelConfig> {
        let start = self.raw_default();
        let tiles = tile_count(&self.problem, 128, 64) * 2;
        let small = constraints::is_wgmma(&start) && start.mt0 <= 64 && start.gsu <= 1;
        if !small || tiles > self.hw.compute_units as i64 || !fills_wave(tiles, &self.hw) {
            return None;
        }
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile0, 128),
            (ParamId::MacroTile1, 64),
            (ParamId::WavesM, 8),
            (ParamId::WavesN, 1),
            (ParamId::SwapAB, 0),
            (ParamId::GlobalSplitU, 2),
            (ParamId::GlobalSplitUAlgorithm, 3),
            (ParamId::WorkGroupMapping, 1),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::ProducerWarp, 1),
        ])?;
        Some(space.raw_default())
    }

    /// A start for skinny GEMMs (one side of 2 to 32: decode at a small batch, a router)
    /// whose tiles of 64 along the long side leave at least half the compute units idle: the
    /// whole short side in one tile (swapped where it is M), two 128-byte rows of K a stage,
    /// K split two to four ways so that the tiles times the split fill at most one wave, each
    /// split streaming at least 8 stages, the splits summed in the kernel (GSU<n>K), the
    /// producer warp loading as deep as fits. cuBLASLt cuts these the same way
    /// (`nvjet_sm90_tst_64x16_64x16_4x1_v_bz_splitK` on 2048x16x3584, `_16x64_..._splitK`
    /// on 16x2048x4096: K in four). H200, kernel against kernel, same call (cuBLASLt in
    /// brackets): 2048x16x3584 on 64x16 in three 10.3 us, in two or four 10.5, against 11.2
    /// for bench's default set's best (stream-K) [11.9]; 16x2048x4096 on the swapped 16x64
    /// in three 10.7, in four 11.0, against 12.0 [14.2]. One 128-byte row of K a stage ran
    /// 0.2-0.5 us slower, the reduction kernel (GSU<n>R) 0.7-2.0. Where N is 2 to 8 and the
    /// default runs warpgroup tiles (64x16) rather than the GEMV path, the same start; bench's
    /// default set with it against without, one call (17 GEMMs): it won 1536x4x8192 (13.6
    /// against 14.1 [12.6]), 3584x8x18944 (39.7 against 40.3 [42.9]) and 2048x7x16384 (23.7
    /// against 23.9 [22.5]); the others moved within the call's noise (0.3 us).
    pub fn skinny_split_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let short = p.m.min(p.n);
        if !constraints::is_wgmma(&start) || !(2..=32).contains(&short) {
            return None;
        }
        let swapped = p.m < p.n;
        let across = (short + 15) / 16 * 16;
        let (mt0, mt1) = if swapped { (across, 64) } else { (64, across) };
        let tiles = tile_count(p, mt0, mt1);
        let cus = self.hw.compute_units as i64;
        if tiles * 2 > cus {
            return None;
        }
        let depth = two_line_depth(p);
        let stages = (p.k + depth - 1) / depth;
        let split = (2..=4)
            .rev()
            .find(|&s| tiles * s <= cus && stages >= 8 * s)?;
        // The one-wave starts' split tile, on one warpgroup (swapped: its 64 rows along N).
        let prefs = [
            one_wave_tile(mt0, mt1, split).as_slice(),
            &[
                (ParamId::SwapAB, i64::from(swapped)),
                (ParamId::WavesM, 4),
                (ParamId::DepthU, depth),
            ],
        ]
        .concat();
        Some(self.with_deepest_pipeline(&prefs)?.raw_default())
    }

    /// A start for GEMMs whose 128x128 tiles are fewer than the compute units (and more than
    /// a quarter of them) with K long enough to split: those tiles with K split in two to
    /// four so that they fill one wave, the splits summed in the kernel (GSU<n>K). The default
    /// splits 128x256 tiles and sums them in a second kernel; stream-K gives a tile parts from
    /// several units that one adds in turn. H200, same call (cuBLASLt in brackets):
    /// 1024x1024x32768 94.0 us on 128x128 GSU2K against 108.7 on the default's 128x256 GSU4R,
    /// 98.7 on 128x256 GSU4K and 100.1 on persistent stream-K [93.3].
    pub fn square_split_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let tiles = tile_count(p, 128, 128);
        let cus = self.hw.compute_units as i64;
        if !constraints::is_wgmma(&start)
            || tiles * 4 < cus
            || fills_wave(tiles, &self.hw)
            || tiles >= cus
        {
            return None;
        }
        let depth = start.depth_u.max(1) as i64;
        // The split filling the most of one wave, three quarters of it at least: 768x768x30000
        // NT makes 36 tiles, 108 workgroups in three, which ran 59.0 us against 68.1-69.4 for
        // 128x192 and 128x256 on stream-K and 66.4 for 128x192 in four (96 workgroups)
        // [cuBLASLt 56.5]; TN 61.1 against 68.5 [60.6] (H200, kernel against kernel, one call).
        let split = (2..=4)
            .filter(|&s| tiles * s <= cus && tiles * s * 4 >= cus * 3)
            .max()?;
        if p.k < split * 32 * depth {
            return None;
        }
        let space = self.with_deepest_pipeline(&split_in_kernel_tile(128, 128, split))?;
        Some(space.raw_default())
    }

    /// Beside [`Space::square_split_start`], its wide twin: 128x256 tiles with K split in up
    /// to four (in the kernel) where their workgroups fill as much of one wave, three quarters
    /// at least. Half the tiles load a quarter fewer operand bytes per multiply-add, and which
    /// wins is measured, not derived: H200, kernel against kernel, one call each (cuBLASLt,
    /// on 128x128 tiles split in two with pairs of workgroups sharing a tile, in brackets):
    /// 1000x1000x10000 44.0 us on 128x256 GSU4K against 46.7 on 128x128 GSU2K [38.6];
    /// 1024x1024x32768 98.7 against 94.0 [93.3].
    pub fn wide_square_split_start(&self) -> Option<KernelConfig> {
        let square = self.square_split_start()?;
        let p = &self.problem;
        let tiles = tile_count(p, 128, 256);
        let cus = self.hw.compute_units as i64;
        let square_workgroups = tile_count(p, 128, 128) * square.gsu as i64;
        let split = (2..=4)
            .filter(|&s| tiles * s <= cus && tiles * s >= square_workgroups)
            .max()?;
        if p.m < 256 || p.n < 256 || p.k < split * 32 * square.depth_u as i64 {
            return None;
        }
        let space = self.with_deepest_pipeline(&split_in_kernel_tile(128, 256, split))?;
        Some(space.raw_default())
    }

    /// A start for GEMMs whose output is a few tiles and whose K is long (the weight gradient
    /// of a narrow layer over many tokens, an adapter's update): 64x64 warpgroup tiles with K
    /// split so that the tiles times the split fill the compute units, each split streaming
    /// at least 16 steps of K, two 128-byte rows of K a step; the producer warp loading as
    /// deep as fits, the partials summed by the reduction kernel (GSU<n>R). The default's
    /// split stops at 8 and its 128-row tiles are few, so the GPU was mostly idle, and stream-K
    /// gives each of these tiles dozens of contributors whose partials one workgroup adds in
    /// turn. H200, same call (cuBLASLt in brackets): 256x256x65536 31.4 us on MT64x64x128 GSU8R
    /// against 44.4 for the tune's MT128x32x128 GSU8R, 35.3 on MT64x128 GSU16K and 66-161 on
    /// stream-K [26.0].
    pub fn long_k_split_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        if !constraints::is_wgmma(&start) || p.n <= constraints::GEMV_MAX_N {
            return None;
        }
        let mt1 = ((p.n + 15) / 16 * 16).min(64);
        let tiles = tile_count(p, 64, mt1);
        let cus = self.hw.compute_units as i64;
        if tiles * 2 > cus {
            return None;
        }
        let depth = two_line_depth(p);
        let split = self
            .domain(ParamId::GlobalSplitU)
            .values
            .iter()
            .copied()
            .filter(|&s| tiles * s <= cus && p.k >= s * 16 * depth)
            .max()?;
        if split < 2 {
            return None;
        }
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile0, 64),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, 1),
            (ParamId::SwapAB, 0),
            (ParamId::DepthU, depth),
            (ParamId::GlobalSplitU, split),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (ParamId::PersistentKernel, 0),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::ProducerWarp, 1),
        ])?;
        Some(space.raw_default())
    }

    /// A start for small M with long K whose N fits one warpgroup tile: all of N (up to 256
    /// columns) on 64 rows, so B is read once per row of tiles and each workgroup streams the
    /// fewest operand rows per output, with K split in s (2 to 4) so that the tiles times s
    /// fill 80% or more of the compute units in one wave, the splits summed in the main
    /// kernel (GSU<s>K), the producer warp loading. H100, same call (cuBLASLt in brackets):
    /// 4096x200x14336 56.7 us on MT64x208 GSU2K against 60.2 on the N-fit MT64x112 [56.7];
    /// 3584x109x18944 58.0 on MT64x112 GSU2K [62.0]; 3584x160x18944 62.3 on MT64x160 GSU2K
    /// against 59.8 on the N-fit MT64x80 [65.2].
    ///
    /// Where no split of the 64-row tiles fills the wave so, and they fill less than 80% of it
    /// unsplit, 128-row tiles (two warpgroups of 64 rows) split in up to six, as cuBLASLt cuts
    /// 3072x96x24576
    /// (`nvjet_sm90_tst_128x96_64x7_4x1_v_bz_splitK`, 24 tiles in five): H200, kernel against
    /// kernel, one call, 51.8 us on MT128x96 GSU5K against 54.0 for the best of bench's default
    /// set (64x48 unsplit) and 52.2 on 64x96 in two [49.2].
    pub fn full_n_split_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let mt1 = (p.n + 15) / 16 * 16;
        if !constraints::is_wgmma(&start) || !(32..=256).contains(&mt1) {
            return None;
        }
        let cus = self.hw.compute_units as i64;
        let splits = self.domain(ParamId::GlobalSplitU);
        // The 128-row tiles only where the 64-row ones fill less than the wave's 80% alone.
        let thin = tile_count(p, 64, mt1);
        let heights = if thin * 10 < cus * 8 {
            &[(64, 4), (128, 6)][..]
        } else {
            &[(64, 4)][..]
        };
        let (rows, split) = heights.iter().find_map(|&(rows, most)| {
            let tiles = tile_count(p, rows, mt1);
            let split = (2..=most)
                .rev()
                .filter(|&s| splits.admits(s))
                .find(|&s| tiles * s <= cus && tiles * s * 10 >= cus * 8)?;
            Some((rows, split))
        })?;
        // Each split still streams a long K (the estimate is of streaming).
        if p.k < split * 16 * start.depth_u as i64 {
            return None;
        }
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile0, rows),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, rows / 16),
            (ParamId::SwapAB, 0),
            (ParamId::GlobalSplitU, split),
            (ParamId::GlobalSplitUAlgorithm, 3),
            (ParamId::WorkGroupMapping, 1),
            (ParamId::ProducerWarp, 1),
        ])?;
        Some(space.raw_default())
    }

    /// A start for few tiles with a long K whose N (65 to 128) is cut in two: tiles of 64
    /// rows and half of N (rounded up to 8 columns), K split two to four ways so that the
    /// workgroups fill half a wave to one, two 128-byte rows of K a stage, the splits summed
    /// in the kernel (GSU<n>K). Against all of N on one tile split more ways
    /// ([`Space::full_n_split_start`]) each split streams twice the K for the price of reading
    /// A twice, which L2 serves. H200, kernel against kernel, same call (cuBLASLt in
    /// brackets): 2048x112x8192 17.2 us on MT64x56 GSU2K against 18.9 on MT64x112 GSU4K
    /// [16.6], NT 19.5 against 22.7 [18.5]; 2048x96x8192 17.0 against 19.0 [16.4];
    /// 1536x128x8192 15.7 on MT64x64 GSU2K against 19.0 on the reduction kernel's [14.9];
    /// 1024x120x16384 18.6 in four [18.0]. Where the half tiles alone fill a wave it does not
    /// apply: 2560x104x16384 ran 32.6 on MT64x112 GSU3K against 37.9 on MT64x56 GSU3K.
    ///
    /// An N-major B (NT, TT) that the half tile would read in place (its width a multiple of
    /// 16) is also started copied K-major first (PackUnaligned), the copy that half tiles no
    /// LDS chunk divides read anyway: 2048x120x8192 TT on MT64x64 GSU2K 20.7 us copied against
    /// 25.0 in place (two calls) [17.7]; 2048x112x8192 TT on MT64x56, whose 56 columns no
    /// chunk divides, 20.3 from the copy [17.7].
    pub fn half_n_split_starts(&self) -> Vec<KernelConfig> {
        let Some(plain) = self.half_n_split_tile() else {
            return Vec::new();
        };
        let copy = (ParamId::PackUnaligned, i64::from(constraints::PACK_B));
        let copied = self.twins_of([Some(plain)], |c: &KernelConfig| {
            constraints::mn_chunk(c, &self.problem, false).map(|_| copy)
        });
        std::iter::once(plain).chain(copied).collect()
    }

    /// The half-N tile of [`Space::half_n_split_starts`], B as the space reads it.
    fn half_n_split_tile(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        if !constraints::is_wgmma(&start) || !(65..=128).contains(&p.n) {
            return None;
        }
        let mt1 = ((p.n + 1) / 2 + 7) / 8 * 8;
        let tiles = tile_count(p, 64, mt1);
        let cus = self.hw.compute_units as i64;
        let depth = two_line_depth(p);
        let split = (2..=4)
            .rev()
            .find(|&s| tiles * s <= cus && tiles * s * 2 >= cus && p.k >= s * 16 * depth)?;
        let prefs = [
            one_wave_tile(64, mt1, split).as_slice(),
            &[(ParamId::DepthU, depth)],
        ]
        .concat();
        Some(self.with_deepest_pipeline(&prefs)?.raw_default())
    }

    /// A start for problems whose unsplit warpgroup tiles leave compute units idle (small M
    /// with long K): the start's tile covering N (up to 256 columns) on 64 rows, as stream-K
    /// (GSU1S: one persistent workgroup per compute unit sharing every (tile, K tile)
    /// iteration), so every compute unit streams the same share of A however few tiles
    /// there are.
    pub fn stream_k_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let mt1 = ((p.n + 15) / 16 * 16).min(256);
        let tiles = tile_count(p, 64, mt1);
        let iters = (p.k + 63) / 64;
        if !constraints::is_wgmma(&start)
            || tiles * 10 >= self.hw.compute_units as i64 * 8
            || tiles * iters < 4 * self.hw.compute_units as i64
        {
            return None;
        }
        // One warpgroup, or two along N where one would hold more accumulators than
        // stream-K keeps live across its tile loop.
        [1, 2].into_iter().find_map(|wn| {
            let space = self.with_deepest_pipeline(&[
                (ParamId::MacroTile0, 64),
                (ParamId::MacroTile1, mt1),
                (ParamId::WavesM, 4),
                (ParamId::WavesN, wn),
                (ParamId::SwapAB, 0),
                (ParamId::ProducerWarp, 0),
                (ParamId::GlobalSplitU, 1),
                (ParamId::GlobalSplitUAlgorithm, 2),
                (ParamId::DepthU, 64),
            ])?;
            Some(space.raw_default())
        })
    }

    /// Starts for GEMMs of a few tiles on the warp-level path (M and N of at most 32 or so,
    /// where the warpgroup tiles do not apply) whose K is so long that even the widest split
    /// of the searched domain (64) leaves most compute units idle: the default's tile with K
    /// split 128 ways (opt-in, [`WIDEST_SPLIT`]) summed by atomics, then on stream-K (GSU1S,
    /// every compute unit streaming the same share of K), each on four warps and stages of
    /// 128 k where the tile takes them (more loads in flight a compute unit). H200, kernel
    /// against kernel, one call each (cuBLASLt in brackets): 32x32x1048576 split 128 ways by
    /// atomics 46.6 us, in the kernel 49.8, through the reduction kernel 56.3, on stream-K 65.6
    /// [43.2] (stream-K with two warps 87.6, 97.4 at 64 k a stage; two or four workgroups a
    /// compute unit 102.1-208.8; K in 64 through the reduction kernel 75.1; the default's
    /// split in eight 728.4); 32x32x262144 21.9 by atomics, 27.2 in 64, 40.6 on stream-K
    /// [21.8]; 16x16x1048576 NT (one warp) 59.7, 77.1 on stream-K [36.4]. Only where each
    /// split gets at least 16 of the tile's K steps.
    pub fn few_tile_long_k_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let steps = |depth: i64| (p.k + depth - 1) / depth;
        let too_short = |depth: i64| steps(depth) < FEW_TILE_LONG_K_STEPS * WIDEST_SPLIT;
        // Before the default's repair (which extra_starts has run once already): a K too short
        // even for the shallowest stage rules the starts out on almost every problem.
        let shallowest = self.domain(ParamId::DepthU).values.iter().copied().min();
        if shallowest.is_none_or(too_short) {
            return Vec::new();
        }
        // The repaired default: tiles larger than such a problem are not valid.
        let Ok(start) = self.default_config() else {
            return Vec::new();
        };
        let cus = self.hw.compute_units as i64;
        let tiles = tile_count(p, start.mt0 as i64, start.mt1 as i64);
        let searched = self.domain(ParamId::GlobalSplitU).values.iter().max();
        if constraints::is_wgmma(&start)
            || !start.uses_matrix_cores()
            || searched.is_none_or(|&s| tiles * s >= cus)
            || too_short(start.depth_u as i64)
        {
            return Vec::new();
        }
        let widest = KernelConfig {
            gsu: WIDEST_SPLIT as u32,
            gsu_algo: GsuAlgo::Atomic,
            ..start
        };
        let walk = KernelConfig {
            gsu: 1,
            gsu_algo: GsuAlgo::StreamK,
            ..start
        };
        [widest, walk]
            .into_iter()
            .filter_map(|c| {
                let wide = KernelConfig {
                    wg: [2, 2],
                    depth_u: 128,
                    pgr: 4,
                    ..c
                };
                [wide, KernelConfig { wg: c.wg, ..wide }, c]
                    .into_iter()
                    .find(|c| self.is_valid(c))
            })
            .collect()
    }
}

/// K steps (of the default's DepthU) each split streams at least where
/// [`Space::few_tile_long_k_starts`] apply.
const FEW_TILE_LONG_K_STEPS: i64 = 16;

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{GemmProblem, Trans};
    use crate::space::{GsuAlgo, Space};

    #[test]
    fn small_m_with_long_k_starts_on_all_of_n_split_in_the_kernel() {
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        let s = Space::for_problem(&GemmProblem::new(4096, 200, 14336), &hw);
        let c = s
            .full_n_split_start()
            .expect("64 tiles of 64x208, two splits");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wgm, c.pw), (64, 208, 1, 1));
        assert_eq!((c.gsu, c.gsu_algo), (2, GsuAlgo::SingleKernel));
        assert!(s.extra_starts().contains(&c));
        // Tiles that fill the GPU by themselves, N past one tile, or short K: none.
        for (m, n, k) in [(16032, 109, 16384), (4096, 4096, 4096), (3584, 160, 1024)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.full_n_split_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn where_64_row_tiles_split_fill_no_wave_128_row_tiles_split_in_up_to_six() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 48 tiles of 64x96 make 96 or 144 workgroups; 24 of 128x96 in five make 120.
        let s = Space::for_problem(&GemmProblem::new(3072, 96, 24576), &hw);
        let c = s.full_n_split_start().expect("24 tiles in five");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wg, c.gsu), (128, 96, [8, 1], 5));
        assert_eq!(c.gsu_algo, GsuAlgo::SingleKernel);
        assert!(s.extra_starts().contains(&c));
    }

    #[test]
    fn few_tiles_with_n_of_65_to_128_start_on_half_of_n_split_in_the_kernel() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 2048x112x8192: 32 tiles of 64x56 along M, two along N, K in two: 128 workgroups.
        let s = Space::for_problem(&GemmProblem::new(2048, 112, 8192), &hw);
        let c = s.half_n_split_tile().expect("32 rows of tiles, long K");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.depth_u, c.pw), (64, 56, 128, 1));
        assert_eq!((c.gsu, c.gsu_algo, c.sab), (2, GsuAlgo::SingleKernel, 0));
        assert!(s.extra_starts().contains(&c));
        // N of 120 on 1024 rows: 64-column halves, 32 tiles, K in four; the same with B
        // N-major (NT), read in place.
        let p = GemmProblem::new(1024, 120, 16384);
        let c = Space::for_problem(&p, &hw).half_n_split_tile().unwrap();
        assert_eq!((c.mt1, c.gsu), (64, 4));
        let p = GemmProblem::with_layout(1024, 120, 16384, Trans::N, Trans::T);
        let s = Space::for_problem(&p, &hw);
        let c = s.half_n_split_tile().unwrap();
        assert_eq!((c.mt1, c.gsu, c.pu), (64, 4, 0));
        // ... and copied K-major first; B read by 56-column halves, which no chunk divides,
        // is copied by them anyway: no twin.
        let both = s.half_n_split_starts();
        assert_eq!(both.len(), 2);
        assert_eq!((both[1].mt1, both[1].gsu, both[1].pu), (64, 4, 2));
        s.check(&both[1]).unwrap();
        assert!(s.extra_starts().contains(&both[1]));
        let p = GemmProblem::with_layout(2048, 112, 8192, Trans::T, Trans::T);
        assert_eq!(Space::for_problem(&p, &hw).half_n_split_starts().len(), 1);
        // Half tiles that fill a wave alone, N outside 65..=128, K too short to split: none.
        for (m, n, k) in [
            (2560, 104, 16384),
            (2048, 64, 8192),
            (2048, 136, 8192),
            (2048, 112, 2048),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert!(s.half_n_split_starts().is_empty(), "{m}x{n}x{k}");
        }
    }

    #[test]
    fn few_tiles_with_long_k_start_on_64x64_tiles_split_to_fill_the_gpu() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 16 tiles of 64x64, K split in 8 (128 workgroups of 132), 256 bytes of K a step.
        let s = Space::for_problem(&GemmProblem::new(256, 256, 65536), &hw);
        let c = s.long_k_split_start().expect("16 tiles, 1024 steps of K");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.depth_u, c.pw), (64, 64, 128, 1));
        assert_eq!((c.gsu, c.gsu_algo, c.pk), (8, GsuAlgo::Reduce, 0));
        assert!(s.extra_starts().contains(&c));
        // NT, 2 x 8 tiles: the same split.
        let p = GemmProblem::with_layout(128, 512, 32768, Trans::N, Trans::T);
        let c = Space::for_problem(&p, &hw).long_k_split_start().unwrap();
        assert_eq!((c.mt0, c.mt1, c.gsu), (64, 64, 8));
        // Many tiles, a GEMV's columns, K too short to split: none.
        for (m, n, k) in [(4096, 4096, 4096), (4096, 1, 65536), (256, 256, 2048)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.long_k_split_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn under_a_wave_of_128x128_tiles_starts_split_to_one_wave() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 64 tiles of 128x128, K in two: 128 workgroups, summed in the kernel.
        let s = Space::for_problem(&GemmProblem::new(1024, 1024, 32768), &hw);
        let c = s.square_split_start().expect("64 tiles, long K");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wg, c.pw), (128, 128, [8, 1], 1));
        assert_eq!((c.gsu, c.gsu_algo), (2, GsuAlgo::SingleKernel));
        assert!(s.extra_starts().contains(&c));
        // 36 tiles (768x768), K in three: 108 workgroups, the most of one wave.
        let s = Space::for_problem(
            &GemmProblem::with_layout(768, 768, 30000, Trans::N, Trans::T),
            &hw,
        );
        let c = s.square_split_start().expect("36 tiles, long K");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.gsu), (128, 128, 3));
        // 18 tiles of 128x256 in four make 72 workgroups, fewer than 108: no wide twin.
        assert_eq!(s.wide_square_split_start(), None);
        // 1000x1000: 64 tiles in two, or 32 of 128x256 in four, 128 workgroups either way.
        let s = Space::for_problem(&GemmProblem::new(1000, 1000, 10000), &hw);
        let c = s.wide_square_split_start().expect("32 wide tiles, long K");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wg, c.gsu), (128, 256, [8, 1], 4));
        assert_eq!(c.gsu_algo, GsuAlgo::SingleKernel);
        assert!(s.extra_starts().contains(&c));
        // A full wave, a handful of tiles, K too short for two splits: none.
        for (m, n, k) in [(4096, 4096, 4096), (256, 256, 65536), (1024, 1024, 2048)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.square_split_start(), None, "{m}x{n}x{k}");
            assert_eq!(s.wide_square_split_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn small_tile_starts_come_with_a_split_start_that_fills_one_wave() {
        let hw = HwSpec::by_name("H200").unwrap();
        let s = Space::for_problem(&GemmProblem::new(4096, 128, 14336), &hw);
        let c = s
            .split_start()
            .expect("64 tiles of 128x64, two splits each");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wg, c.wgm, c.pw), (128, 64, [8, 1], 1, 1));
        assert_eq!((c.gsu, c.gsu_algo), (2, GsuAlgo::SingleKernel));
        assert!(c.pgr >= 3, "{}", c.name());
        // Large tiles start without one; so do problems whose split grid is not one wave.
        for (m, n, k) in [(16032, 109, 16384), (4096, 4096, 4096), (10240, 128, 8192)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.split_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn skinny_problems_on_few_tiles_start_split_in_the_kernel() {
        let hw = HwSpec::by_name("H200").unwrap();
        // (m, n, k, tile, split): 32 tiles of 28 stages in three (four would leave seven
        // stages a split), 32 of 32 stages in four, 64 tiles in two; M of 16 swapped; N of 2
        // to 8 where the default runs warpgroup tiles.
        for (m, n, k, tile, split) in [
            (2048, 16, 3584, (64, 16, 0), 3),
            (2048, 7, 16384, (64, 16, 0), 4),
            (4096, 8, 4096, (64, 16, 0), 2),
            (16, 2048, 4096, (16, 64, 1), 4),
            (4096, 32, 4096, (64, 32, 0), 2),
            (24, 4096, 4096, (32, 64, 1), 2),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            let c = s.skinny_split_start().expect("skinny, few tiles");
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.sab), tile, "{m}x{n}x{k}");
            assert_eq!(
                (c.gsu, c.gsu_algo, c.depth_u, c.pw),
                (split, GsuAlgo::SingleKernel, 128, 1)
            );
            assert!(s.extra_starts().contains(&c), "{m}x{n}x{k}");
        }
        // One column, a short side past 32, tiles that fill half the GPU, K too short to
        // split: none.
        for (m, n, k) in [
            (4096, 1, 4096),
            (2048, 48, 4096),
            (8192, 16, 4096),
            (2048, 16, 1024),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.skinny_split_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn one_warp_level_tile_of_a_very_long_k_starts_split_128_ways_and_on_stream_k() {
        let hw = HwSpec::by_name("H200").unwrap();
        // One 32x32 tile: four warps, 128 k a stage; one 16x16 tile: one warp (its 8x8 wave
        // tiles would be smaller than the instruction).
        for (m, n, k, wg) in [
            (32, 32, 1 << 20, [2, 2]),
            (32, 32, 1 << 18, [2, 2]),
            (16, 16, 1 << 20, [1, 1]),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            let starts = s.few_tile_long_k_starts();
            let kinds: Vec<_> = starts.iter().map(|c| (c.gsu, c.gsu_algo)).collect();
            assert_eq!(kinds, [(128, GsuAlgo::Atomic), (1, GsuAlgo::StreamK)]);
            let extra = s.extra_starts();
            for c in &starts {
                s.check(c).unwrap();
                assert_eq!((c.wg, c.depth_u), (wg, 128), "{}", c.name());
                assert!(extra.contains(c), "{}", c.name());
            }
        }
        // Where the widest searched split fills the compute units, or 128 splits would get
        // fewer than 16 K steps each, or the warpgroup path applies: none.
        for (m, n, k) in [(32, 32, 65536), (256, 256, 1 << 20), (512, 32, 1 << 20)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert!(s.few_tile_long_k_starts().is_empty(), "{m}x{n}x{k}");
        }
    }
}
