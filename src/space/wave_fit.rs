//! Starts for mid-size problems whose time is set by how the last wave of tiles fills the
//! compute units (half a wave to a few waves of the default's tiles, M of 128 or more and N
//! of 256 or more; swapped tiles of 128 columns from N of 192): the persistent kernel on the
//! tile, plain or swapped, whose count wastes the least of its waves, scored as waves x (tile
//! extent + 64); for tf32, one nearly full wave of 256-row tiles; over several waves, 192-row
//! tiles where their whole waves take less time than the 128-row tiles'; for half a wave to
//! nearly one of 128x128 tiles, swapped tiles of 128 columns (64 in pairs where A is M-major)
//! in one data-parallel wave. Each is a start beside the default that the search measures in
//! its first batch and `bench` in its default set.

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{fills_wave, tile_count, Space};

/// K steps (of the default's DepthU) from which the wave-fitting start's one warpgroup runs as
/// deep a ring as fits instead of four stages.
const LONG_K_STEPS: i64 = 64;

impl Space {
    /// The default's tile count where the wave-fitting starts apply: the default runs the
    /// warpgroup path, the persistent kernel is in the space, and M and N are at least
    /// `min_m` and `min_n` (256 each but where a start says otherwise: skinny problems have
    /// starts of their own).
    fn persistent_default_tiles(&self, min_m: i64, min_n: i64) -> Option<i64> {
        let p = &self.problem;
        let start = self.raw_default();
        (constraints::is_wgmma(&start)
            && self.domain(ParamId::PersistentKernel).contains(1)
            && p.m >= min_m
            && p.n >= min_n)
            .then(|| tile_count(p, start.mt0 as i64, start.mt1 as i64))
    }

    /// The extents a wave-fitting start tries for a tile's varying side: 64 to 256 in steps
    /// of 16 (of 32 where B is N-major in LDS: [`Space::n_step`]), where the MacroTile1
    /// domain holds them. H200, kernel against kernel, one call (cuBLASLt in brackets):
    /// 1280x1280x2048 NT on 128x112 23.7 us, on 128x128 16.1 [15.7]; 1152x1024x2048 NT on
    /// 128x80 17.7-18.9, on 128x96 15.2 [12.9].
    pub(super) fn wave_fit_widths(&self) -> impl Iterator<Item = i64> + '_ {
        let step = self.n_step().max(16);
        self.domain(ParamId::MacroTile1)
            .values
            .iter()
            .copied()
            .filter(move |n| (64..=256).contains(n) && n % step == 0)
    }

    /// The wave-fit score of `tiles` tiles whose varying side is `extent` (the other 128):
    /// waves x (extent + 64), a tile costing about its extent in tensor-core time plus a
    /// fixed share (prologue, epilogue) worth about 64 of it.
    fn wave_score(&self, tiles: i64, extent: i64) -> i64 {
        let cus = self.hw.compute_units.max(1) as i64;
        ((tiles + cus - 1) / cus) * (extent + 64)
    }

    /// A start for mid-size problems (from half a wave to four waves of the default's tiles),
    /// whose time is set by how the last wave of tiles fills the compute units: the persistent
    /// kernel on 128-row tiles (64-row ones for batches of 64 rows or fewer) of the width
    /// whose tile count wastes the least of its waves, scored as waves x (width + 64): a tile
    /// costs about its width in tensor-core time plus a fixed share (prologue, epilogue) worth
    /// about 64 columns. H200, kernel against kernel (cuBLASLt in brackets): 1152x4096x1152 on
    /// 128x144 tiles (261 tiles, 1.98 waves) 21.6 us, 128x160 22.2, 128x128 (288 tiles, 2.18
    /// waves) 25.3 [19.9].
    pub fn wave_fit_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        // Batched products of fewer rows or columns each fill the waves with their batch
        // (32 x 128x512x512 NN: 128 tiles of 128x128), those of 64 rows or fewer on 64-row
        // tiles (40 x 64x512x512 NN: 12.0 us on 64x256 tiles against 15.8 for the best start
        // before them [cuBLASLt 12.0]; 192 x 64x197x197 NN 22.1 on 64x128 [32.7]). One GEMM
        // of 128 to 255 rows takes the widths on 128-row tiles too: 128x25088x1152 NN
        // (a 3x3 convolution's GEMM) on 128x192 (131 tiles) 23.0 us against 26.0 for the
        // default's 128x256 (98) [cuBLASLt, on 128x192 too, 23.2], H200, kernel against
        // kernel, one call.
        let (least_m, least_n) = if p.batch > 1 { (32, 128) } else { (128, 256) };
        if self.persistent_default_tiles(least_m, least_n)? > 4 * cus {
            return None;
        }
        let rows = if p.m <= 64 { 64 } else { 128 };
        let score = |n: i64| self.wave_score(tile_count(p, rows, n), n);
        let mut widths: Vec<i64> = self
            .wave_fit_widths()
            .filter(|&n| tile_count(p, rows, n) * 2 >= cus)
            .collect();
        // The best score first; the wider tile of a tie (fewer tiles, fewer epilogues).
        widths.sort_by_key(|&n| (score(n), -n));
        // One warpgroup on all rows, four stages: on the recorded mid-size sweeps
        // (datasets/mid_*, nn_3072x1024x3072) it beat two warpgroups and deeper rings by 1-5%
        // (1152x4096x1152: 21.2 us against 21.8 for two warpgroups, 21.9 for six stages).
        // As deep as fits where each tile takes LONG_K_STEPS steps of K or more: H200, same
        // call, 5120x384x5120 (80 steps) on 128x128 31.6 us at 6 stages against 35.0 at 4
        // [31.0], 4096x512x14336 82.2 against 86.6 [79.4], 1024x1024x32768 on 128x64 141.9 at
        // 8 against 164.5; no worse on any of the 13 suite shapes it changes (8192x384x8192
        // 70.9 at 5 against 70.6); at 48 steps (3072x1024x3072) 5 stages and 4 were within 1%.
        // Two warpgroups, as deep as fits, where one cannot hold the tile: along M on 128
        // rows, along N on 64.
        let long_k = p.k >= LONG_K_STEPS * self.raw_default().depth_u as i64;
        let two_warpgroups = if rows == 64 { [4, 2] } else { [8, 1] };
        widths.into_iter().find_map(|n| {
            let tile = [
                (ParamId::MacroTile0, rows),
                (ParamId::MacroTile1, n),
                (ParamId::GlobalSplitU, 1),
                (ParamId::GlobalSplitUAlgorithm, 1),
                (ParamId::ProducerWarp, 1),
                (ParamId::PersistentKernel, 1),
                (ParamId::SwapAB, 0),
            ];
            let one_warpgroup = [
                tile.as_slice(),
                &[(ParamId::WavesM, 4), (ParamId::WavesN, 1)],
            ]
            .concat();
            let one = if long_k {
                self.with_deepest_pipeline(&one_warpgroup)
                    .map(|s| s.raw_default())
            } else {
                let four = [
                    one_warpgroup.as_slice(),
                    &[(ParamId::PrefetchGlobalRead, 4)],
                ]
                .concat();
                self.valid_start(&four)
            };
            if let Some(one) = one {
                return Some(one);
            }
            // The deepest pipeline's default is valid (with_deepest_pipeline checks it).
            let [wm, wn] = two_warpgroups;
            let two = self.with_deepest_pipeline(
                &[
                    tile.as_slice(),
                    &[(ParamId::WavesM, wm), (ParamId::WavesN, wn)],
                ]
                .concat(),
            )?;
            Some(two.raw_default())
        })
    }

    /// More than a wave of tiles with N past 128 (where the space offers three warpgroups
    /// along M): 192-row tiles on all of N, on each half of it past 256, or on the fewest
    /// parts of at most 256 past 512, where
    /// their waves take no more time than the 128-row tiles' on the same width, a 192-row tile
    /// doing 1.5 times the work (as [`Space::three_warpgroup_start`] runs them under a wave:
    /// data-parallel, the producer warp where it fits, as deep as fits). 37888x512x3584
    /// (Qwen2-7B's gate and up projections at 512 tokens) makes 396 tiles of 192x256, three
    /// waves of 132, against 592 of 128x256, 4.48 waves: on an H200 the search found 184.0 us
    /// on 192x256 against 221.2 for the best of bench's default set, on 128x256 [cuBLASLt
    /// 186.3]; with the start, bench's default set ran 182.7 [185.3]. Past 512 columns, on
    /// parts of N of at most 256: 4608x4096x3584 (Qwen2.5-7B's QKV projection at 4096 tokens)
    /// makes 384 tiles of 192x256, three waves, against 576 of 128x256, 4.36; 173.8 us on
    /// 192x256 against 185.3 for the best 128-row tile, stream-K on 128x256 [175.7] (kernel
    /// against kernel, one call).
    pub fn three_warpgroup_waves_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let parts = self.three_warpgroup_parts()?;
        let mt1 = self.n_part_width(parts);
        let cus = self.hw.compute_units.max(1) as i64;
        let waves = |rows: i64| (tile_count(p, rows, mt1) + cus - 1) / cus;
        // On a tie the 192-row tiles where they take all of N: 49152x248x4096 makes two waves
        // of them against three of 128-row ones, 143.6 us on 192x248 against 147.2 on
        // 128x248 (H200, same call, cuBLASLt 139.6). Ties on halves of N past 256 are not
        // measured (18944x512x3584) and keep the 128-row tiles.
        let (w192, w128) = (waves(192) * 3, waves(128) * 2);
        if tile_count(p, 192, mt1) <= cus || w192 > w128 || (w192 == w128 && parts > 1) {
            return None;
        }
        let tile = self.three_warpgroup_tile(mt1)?;
        // Wave after wave over more than two tile columns, the tiles go down groups of rows
        // as the default's do (WorkGroupMapping), so the next wave finds its B columns in
        // L2: 4096x12288x1024 f16 on 192x256 ran 161.8 us so against 174.6 with the
        // one-wave starts' order (H200, one call).
        let grouped = KernelConfig {
            wgm: self.domain(ParamId::WorkGroupMapping).default as u32,
            ..tile
        };
        Some(if parts > 2 && self.is_valid(&grouped) {
            grouped
        } else {
            tile
        })
    }

    /// Problems of a third of a wave to six waves of the default's tiles, M at least 256 and
    /// N at least 192 (prefill: 28672x512x8192, 14336x1024x4096, 3584x512x18944; 10240x200
    /// projections at 200 tokens), whose 128-row tiles leave the last wave partly idle: also
    /// start on the persistent kernel with swapped tiles of 128 columns and a height between
    /// 64 and 256 that is no multiple of 64 (only the instruction's N runs along M in such
    /// steps), scored as [`Space::wave_fit_start`] scores widths: waves x (height + 64).
    /// Taken only where it beats every 128-row width, and only with four stages or more.
    /// Measured kernel against kernel (cuBLASLt, which runs such tiles there too, in
    /// brackets): on an H200 28672x512x8192 on 176x128 (652 tiles, 4.94 waves) 319.6 us
    /// against 348.8 for 128x256 (448 tiles, 3.39 waves) [307.7], 14336x1024x4096 e4m3 86.9
    /// against 94.4 [80.2], 224 rows with three stages 331.6 and 88.7; on an H100
    /// 3584x512x18944 on 112x128 (128 tiles) 94.5 against 99.9 for 128x128 (112 tiles)
    /// [91.1].
    pub fn swapped_wave_start(&self) -> Option<KernelConfig> {
        self.swapped_wave_tile(128)
    }

    /// Half a wave to not quite one of 128x128 tiles, K of 16 steps or more: the swapped tile
    /// of 128 columns (A K-major) or of 64 columns in pairs along N sharing A (A M-major, read
    /// in chunks that multicast cuts: cuBLASLt's `nvjet_sm90_tst_160x64_64x6_1x2` on
    /// 1280x1024x2048 NT) whose height (65 to 255 rows in steps of 16, no multiple of 64, the
    /// lowest of equals) makes the most tiles that still run in one nearly full wave,
    /// data-parallel, as deep as fits. cuBLASLt cuts these the same way (1280x1024x8192:
    /// `nvjet_sm90_tst_80x128_64x8`, 128 workgroups), where the default's 128x256 leaves two
    /// thirds of the compute units idle and the wave-fit start's 128-row tiles (the same
    /// count) ran slower, with an N-major B far slower. H200, kernel against kernel, one call
    /// (cuBLASLt in brackets): 1280x1024x8192 TN on 80x128 33.7 us against 36.0 on the
    /// persistent 128x80 and 35.2 on the persistent 80x128 [31.0]; TT 34.8 against 48.9 for
    /// bench's default set [30.8].
    /// Bench's default set before and after the M-major form, one call: 1280x1024 NT 17.7 ->
    /// 15.6 us at K = 2048 [12.4], 29.7 -> 23.7 at 4096 [20.4], 48.8 -> 40.7 at 8192 [34.6].
    pub fn swapped_one_wave_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        let tiles_128 = tile_count(p, 128, 128);
        if !constraints::is_wgmma(&self.raw_default())
            || !self.domain(ParamId::SwapAB).contains(1)
            || p.batch > 1
            || tiles_128 * 2 < cus
            || fills_wave(tiles_128, &self.hw)
            || p.k < 16 * 64
        {
            return None;
        }
        // An M-major A: tiles of 64 columns on one warpgroup, in pairs along N sharing A.
        let width = if p.k_contiguous(true) { 128 } else { 64 };
        let height = self
            .swapped_heights()
            .map(|h| (tile_count(p, h, width), h))
            .filter(|&(tiles, _)| tiles <= cus && fills_wave(tiles, &self.hw))
            .max_by_key(|&(tiles, h)| (tiles, -h))?
            .1;
        let prefs = [
            swapped_tile(height, width, 0).as_slice(),
            &[
                (ParamId::WavesN, width / 64),
                (ParamId::WorkGroupMapping, 1),
            ],
        ]
        .concat();
        self.deepest_swapped(&prefs)
    }

    /// The swapped start of `prefs` as deep as fits; for an M-major A, in pairs along N
    /// sharing A where that is valid (its chunks multicast cuts, as cuBLASLt's
    /// `nvjet_sm90_tst_160x64_64x6_1x2` does), else alone.
    fn deepest_swapped(&self, prefs: &[(ParamId, i64)]) -> Option<KernelConfig> {
        if self.problem.k_contiguous(true) {
            Some(self.with_deepest_pipeline(prefs)?.raw_default())
        } else {
            self.deepest_along_n_clusters(prefs, &[2, 1])
        }
    }

    /// Under a wave of 128x128 tiles with M no multiple of 128 and A K-major: swapped tiles of
    /// 128 and of 64 columns on one warpgroup whose height (65 to 255 rows, no multiple of
    /// 64) divides M, for each width the height of the most tiles from half a wave to one,
    /// data-parallel, as deep as fits. Every row of every tile then holds a row of M, where
    /// 128-row tiles (and the one-wave start's heights, chosen for their count) leave the last
    /// row of tiles partly empty. H200, kernel against kernel, one call each (cuBLASLt in
    /// brackets): 576x2048x7168 (DeepSeek-V3's kv_a projection at 2048 tokens) on 96x128
    /// (96 tiles) 32.2 us against 41.5 on 128x80 (130 tiles, the best of bench's default
    /// set) and 55.7 on the one-wave start's 80x128 in two warpgroups [37.8]; 576x1536x7168
    /// on 144x64 (96) 27.0 against 28.8-29.0 [24.0]; 576x1024x7168 on 96x64 (96) 22.8
    /// against 23.7 [19.2]; 320x2048x4096 on 80x64 (128) 15.3 against 16.5 on 64x96 and 19.1
    /// on 80x128 [16.9]. With both widths bench's default set ran 576x2048x7168 28.1 on
    /// 144x64 (128 tiles) [37.1-39.4].
    ///
    /// An M-major A (NN, NT) takes the 64-column width only, in pairs along N sharing A (as
    /// [`Space::swapped_one_wave_start`]): 96x8192x8192 NT on 96x64 in pairs 40.7 us against
    /// 43.8 for the best of bench's default set, 128x64 in pairs, and 42.8 for 96x128
    /// [cuBLASLt, on 96x64 in pairs, 37.9] (H200, kernel against kernel, one call).
    pub fn even_m_swapped_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        if !constraints::is_wgmma(&self.raw_default())
            || !self.domain(ParamId::SwapAB).contains(1)
            || p.batch > 1
            || p.m % 128 == 0
            || p.k < 16 * 64
            || tile_count(p, 128, 128) > cus
        {
            return Vec::new();
        }
        let widths: &[i64] = if p.k_contiguous(true) {
            &[128, 64]
        } else {
            &[64]
        };
        let heights: Vec<i64> = self.swapped_heights().filter(|&h| p.m % h == 0).collect();
        widths
            .iter()
            .copied()
            .filter_map(|width| {
                let height = heights
                    .iter()
                    .map(|&h| (tile_count(p, h, width), h))
                    .filter(|&(tiles, _)| tiles <= cus && tiles * 2 >= cus)
                    .max_by_key(|&(tiles, h)| (tiles, -h))?
                    .1;
                let prefs = [
                    swapped_tile(height, width, 0).as_slice(),
                    &[(ParamId::WavesN, 1)],
                ]
                .concat();
                self.deepest_swapped(&prefs)
            })
            .collect()
    }

    /// The heights of swapped tiles in the space: 65 to 255 rows in steps of 16 and no
    /// multiple of 64 (only the instruction's N runs along M in such steps).
    fn swapped_heights(&self) -> impl Iterator<Item = i64> + '_ {
        self.domain(ParamId::MacroTile0)
            .values
            .iter()
            .copied()
            .filter(|h| (65..256).contains(h) && h % 16 == 0 && h % 64 != 0)
    }

    /// The same for swapped tiles of 256 columns, scored waves x (2 x height + 64) (a tile
    /// costs its area in 128-column units), where they fill the waves better than any 128-row
    /// width and at least as well as any 128-column height (224x128 ties 112x256):
    /// 7168x512x2048 e4m3 and 896x4096x4864 make 112 tiles of 128x256 on 132 compute units,
    /// 128 of 112x256. H200, kernel against kernel (cuBLASLt in brackets): 7168x512x2048 e4m3
    /// on 112x256 16.5 us against 17.5 on 128x256 and 17.9 on 240x128 (three stages) [15.2];
    /// 896x4096x4864 on 112x256 faster than 51.2 on 128x240 (126 tiles) and 52.8 on 128x256
    /// [49.6]. Tuned with it, 3584x2048x3584 ran 71.0 [75.4] and 14336x512x4096 83.4 [87.5]
    /// on 112x256 (docs/performance.md, "one wave of swapped 256-column tiles").
    pub fn swapped_wide_wave_start(&self) -> Option<KernelConfig> {
        let c = self.swapped_wave_tile(256)?;
        let wide = self.swapped_wave_score(c.mt0 as i64, 256);
        let beats_narrow = self
            .domain(ParamId::MacroTile0)
            .values
            .iter()
            .filter(|h| (65..256).contains(*h) && *h % 16 == 0)
            .all(|&h| self.swapped_wave_score(h, 128) >= wide);
        beats_narrow.then_some(c)
    }

    /// The wave-fit score of swapped tiles `height` rows by `width` columns: waves x (height x
    /// width / 128 + 64), a tile costing its area in 128-column units.
    fn swapped_wave_score(&self, height: i64, width: i64) -> i64 {
        self.wave_score(
            tile_count(&self.problem, height, width),
            height * width / 128,
        )
    }

    /// The persistent kernel's swapped tile of `width` columns whose height (65 to 255 rows,
    /// in steps of 16 and no multiple of 64) fills the waves best, scored waves x (height x
    /// width / 128 + 64), where it beats every 128-row width of [`Space::wave_fit_start`],
    /// as deep as fits with four stages or more. Where that tile's accumulators do not fit
    /// beside the producer warp and its tiles run in one wave, the data-parallel kernel
    /// without it: 640x8192x640 (an SDXL attention projection) makes 128 tiles of 160x256,
    /// which ran 15.7 us against 16.3 for the best of bench's default set, persistent 128x160
    /// (260 tiles) [cuBLASLt, on 320x128, 15.1]; 640x8192x1280 23.4 against 24.0 [22.9];
    /// with the producer warpgroup and three stages 17.3 and 25.4 (H200, same call).
    fn swapped_wave_tile(&self, width: i64) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        // Tiles of 128 columns also take N of 192 to 255, whose second column tile is at
        // least half full: on an H200 10240x200x2560 ran 16.1 us on 160x128 (128 tiles, one
        // wave) in e4m3 against 17.3 for the 128x208 the starts ran before (80 tiles) and 16.6
        // for 256x80 (120) [cuBLASLt 15.8], and 24.5 against 27.6 in bf16 [23.4]; with a
        // last column tile under half full they lost (12288x160x4096: 52.2 on 208x128
        // against 35.5 for 128x160 [34.3]).
        let min_n = if width == 128 { 192 } else { 256 };
        if !(cus / 3..=6 * cus).contains(&self.persistent_default_tiles(256, min_n)?)
            || !self.domain(ParamId::SwapAB).contains(1)
            || !self.domain(ParamId::MacroTile1).contains(width)
            // An M-contiguous A under these heights ran 1.8x slower (NN 28672x512x8192 on an
            // H200: 601.7-610.6 us on 176x128 against 335.5 for 128x256 [cuBLASLt 324.1]).
            || !p.k_contiguous(true)
        {
            return None;
        }
        let best_width = self
            .wave_fit_widths()
            .map(|n| self.wave_score(tile_count(p, 128, n), n))
            .min()?;
        let score = |h: i64| self.swapped_wave_score(h, width);
        let mut heights: Vec<i64> = self
            .swapped_heights()
            .filter(|&h| score(h) < best_width)
            .collect();
        heights.sort_by_key(|&h| (score(h), -h));
        let deep = |prefs: &[(ParamId, i64)]| {
            let c = self.with_deepest_pipeline(prefs)?.raw_default();
            (c.pgr >= 4).then_some(c)
        };
        // Where the tiles make one wave, the persistent kernel only where its ring fits beside
        // a staging area of whole rows: with narrow column groups
        // (constraints::persistent_narrow_groups) the data-parallel kernel's fifth stage ran
        // faster (H200, bench's default sets, one call: 14336x256x4096 e4m3 on 224x128 26.3 us
        // against 27.0, 12800x256x4096 on 208x128 41.2 against 41.8).
        let one_wave = |h: i64| tile_count(p, h, width) <= cus;
        heights.into_iter().find_map(|h| {
            deep(&swapped_tile(h, width, 1))
                .filter(|c| !(one_wave(h) && constraints::persistent_narrow_groups(c, p)))
                .or_else(|| {
                    let alone = [(ParamId::ProducerWarp, 0)];
                    let tile = [swapped_tile(h, width, 0).as_slice(), &alone].concat();
                    one_wave(h).then(|| deep(&tile)).flatten()
                })
        })
    }

    /// A second start for the mid-size problems of [`Space::wave_fit_start`] whose operands
    /// are 4 bytes wide (f32 read as tf32): the data-parallel kernel on 256-row tiles (two
    /// warpgroups of 128 rows), of the narrowest width whose tiles all run at once in one
    /// nearly full wave, as deep as fits. A tile streams (rows + columns) x K operand
    /// elements for rows x columns outputs, so 256 rows load a third fewer per multiply-add
    /// than 128 (256x160: 1/256 + 1/160 against 1/128 + 1/144), and with one wave there is
    /// no tail for a persistent kernel to hide. Why that wins in tf32 and not in 16 or 8
    /// bits is measured, not derived (tf32 multiplies at half the bf16 rate, so a tile's
    /// fixed costs, which the persistent kernel hides, weigh half as much against its main
    /// loop): on the recorded H200 sweeps of 1152x4096x1152 the 256x160 tile (130 tiles,
    /// one wave) ran 38.6 us in tf32 against 42.8 for the persistent 128x144 of the wave-fit
    /// start, while in bf16 and e4m3 it was 10% behind that start. One more config in the
    /// first round either way. `None` for narrower operands, or where no width makes one
    /// nearly full wave of 256-row tiles.
    pub fn tall_wave_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        if !p.reads_f32_as_tf32() {
            return None;
        }
        self.wave_fit_start()?;
        let cus = self.hw.compute_units.max(1) as i64;
        let n = self
            .wave_fit_widths()
            .filter(|&n| {
                let tiles = tile_count(p, 256, n);
                tiles <= cus && fills_wave(tiles, &self.hw)
            })
            .min()?;
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile0, 256),
            (ParamId::MacroTile1, n),
            (ParamId::WavesM, 8),
            (ParamId::WavesN, 1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (ParamId::PersistentKernel, 0),
            (ParamId::SwapAB, 0),
        ])?;
        Some(space.raw_default())
    }
}

/// The swapped tile of `height` rows by `width` columns of the wave starts: two warpgroups
/// along N (the instruction's 64 rows), the instruction's N along M, the producer warp, whole
/// K, on the persistent kernel or not (`persistent`).
fn swapped_tile(height: i64, width: i64, persistent: i64) -> [(ParamId, i64); 9] {
    [
        (ParamId::MacroTile0, height),
        (ParamId::MacroTile1, width),
        (ParamId::WavesM, 4),
        (ParamId::WavesN, 2),
        (ParamId::SwapAB, 1),
        (ParamId::GlobalSplitU, 1),
        (ParamId::GlobalSplitUAlgorithm, 1),
        (ParamId::ProducerWarp, 1),
        (ParamId::PersistentKernel, persistent),
    ]
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::{KernelConfig, Space};

    /// Half a wave to nearly one of 128x128 tiles: the swapped 128-column tile (A K-major) or
    /// 64-column tile in pairs along N (A M-major) whose height makes the most tiles of one
    /// nearly full wave, data-parallel.
    #[test]
    fn half_a_wave_of_square_tiles_starts_on_one_wave_of_swapped_tiles() {
        let hw = HwSpec::by_name("H200").unwrap();
        // (M, N) -> height: 1280/80 x 8 = 128 tiles, 1152/96 x 10 = 120, 1536/96 x 8 = 128.
        for ((m, n), tb, height) in [
            ((1280, 1024), Trans::N, 80),
            ((1280, 1024), Trans::T, 80),
            ((1152, 1280), Trans::T, 96),
            ((1536, 1024), Trans::N, 96),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, 8192, Trans::T, tb), &hw);
            let c = s.swapped_one_wave_start().expect("a swapped wave");
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0 as i64, c.mt1, c.sab, c.pk, c.gsu),
                (height, 128, 1, 0, 1),
                "{m}x{n}"
            );
            assert!(s.extra_starts().contains(&s.tile_order(&c)), "{m}x{n}");
        }
        // An M-major A: 64 columns in pairs along N, the lowest height of the most tiles
        // (160 and 176 both make 8 x 16).
        let s = Space::for_problem(
            &GemmProblem::with_layout(1280, 1024, 2048, Trans::N, Trans::T),
            &hw,
        );
        let c = s.swapped_one_wave_start().expect("a swapped wave in pairs");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.sab, c.pk, c.cn), (160, 64, 1, 0, 2));
        // A whole wave of 128x128 tiles, under half a wave, K of a few steps: none.
        for (m, n, k, ta) in [
            (2048, 1024, 8192, Trans::N),
            (2048, 1024, 8192, Trans::T),
            (768, 768, 8192, Trans::T),
            (1280, 1024, 512, Trans::T),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, k, ta, Trans::N), &hw);
            assert_eq!(s.swapped_one_wave_start(), None, "{m}x{n}x{k} {ta:?}");
        }
    }

    /// Under a wave of 128x128 tiles with M no multiple of 128: swapped tiles of 128 and 64
    /// columns on one warpgroup whose height divides M, of the most tiles from half a wave
    /// to one.
    #[test]
    fn m_off_128_rows_starts_on_swapped_tiles_whose_height_divides_it() {
        let hw = HwSpec::by_name("H200").unwrap();
        // (M, N) -> tiles: 576 = 6 x 96 = 4 x 144 rows; 320 = 4 x 80 = 2 x 160.
        for ((m, n), tb, tiles) in [
            // 96x128: 96 tiles; 144x64: 128.
            ((576, 2048), Trans::N, vec![(96, 128), (144, 64)]),
            ((576, 2048), Trans::T, vec![(96, 128), (144, 64)]),
            // 144x128: 96 (96x128 would make 144); no 64-column tile under a wave.
            ((576, 3072), Trans::N, vec![(144, 128)]),
            // 96x64: 96 (the 128-column tiles make 48 or fewer).
            ((576, 1024), Trans::N, vec![(96, 64)]),
            // 80x128: 128; 160x64: 128.
            ((320, 4096), Trans::N, vec![(80, 128), (160, 64)]),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, 7168, Trans::T, tb), &hw);
            let starts = s.even_m_swapped_starts();
            let got: Vec<(u32, u32)> = starts.iter().map(|c| (c.mt0, c.mt1)).collect();
            assert_eq!(got, tiles, "{m}x{n}");
            for c in &starts {
                s.check(c).unwrap();
                assert_eq!((c.sab, c.wg, c.pk, c.gsu), (1, [4, 1], 0, 1), "{m}x{n}");
                // (in the tile order of a start whose tiles all run at once)
                assert!(s.extra_starts().contains(&s.tile_order(c)), "{m}x{n}");
            }
        }
        // An M-major A: the 64-column tile only, in pairs along N sharing A.
        for (m, n, k, height) in [(576, 2048, 7168, 144), (96, 8192, 8192, 96)] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, k, Trans::N, Trans::T), &hw);
            let starts = s.even_m_swapped_starts();
            assert_eq!(starts.len(), 1, "{m}x{n}");
            let c = starts[0];
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0 as i64, c.mt1, c.sab, c.cn),
                (height, 64, 1, 2),
                "{m}x{n}"
            );
        }
        // M of whole 128-row tiles, a wave of 128x128 tiles or more, no height dividing M
        // (1088 = 64 x 17), too few tiles of any that does: none.
        for (m, n, ta) in [
            (1024, 1024, Trans::T),
            (576, 4096, Trans::T),
            (1088, 1024, Trans::T),
            (576, 512, Trans::T),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, 7168, ta, Trans::N), &hw);
            assert_eq!(s.even_m_swapped_starts(), vec![], "{m}x{n} {ta:?}");
        }
    }

    #[test]
    fn four_byte_operands_also_start_on_one_wave_of_256_row_tiles() {
        let hw = HwSpec::by_name("H200").unwrap();
        let tf32 = GemmProblem::tf32;
        // 1152x4096: 5 x 26 tiles of 256x160 = 130, one nearly full wave of 132 (144 columns
        // would make 145 tiles, two waves); data-parallel, two warpgroups, as deep as fits.
        let s = Space::for_problem(&tf32(1152, 4096, 1152), &hw);
        let c = s.tall_wave_start().expect("a mid-size tf32 problem");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wg, c.pk, c.gsu), (256, 160, [8, 1], 0, 1));
        assert!(c.pgr >= 3, "{}", c.name());
        // The starts take the tile order of a start whose tiles all run at once.
        let (c, fit) = (s.tile_order(&c), s.tile_order(&s.wave_fit_start().unwrap()));
        assert!(s.extra_starts().contains(&c));
        // The wave-fit start stays, ahead of it.
        let starts = s.extra_starts();
        let at = |x: &KernelConfig| starts.iter().position(|y| y == x);
        assert!(at(&fit) < at(&c), "{starts:?}");
        // Two-byte operands of the same shape, and many waves of tf32 tiles: none.
        let bf16 = Space::for_problem(&GemmProblem::new(1152, 4096, 1152), &hw);
        assert_eq!(bf16.tall_wave_start(), None);
        let big = Space::for_problem(&tf32(8192, 8192, 8192), &hw);
        assert_eq!(big.tall_wave_start(), None);
    }

    #[test]
    fn mid_size_problems_start_on_the_persistent_tile_that_fills_its_waves() {
        let hw = HwSpec::by_name("H200").unwrap();
        // (problem, batch) -> the tile: 1152x4096: 128x144 makes 261 tiles (1.98 waves of
        // 132) where 128x128 makes 288 (2.18); 3072x1024: 128x208 makes 120 (one wave).
        for (m, n, k, batch, rows, width) in [
            (1152, 4096, 1152, 1, 128, 144),
            (3072, 1024, 3072, 1, 128, 208),
            (1000, 1000, 1000, 3, 128, 208),
            (2048, 2048, 2048, 1, 128, 256),
            // One row of 128-row tiles: 128x192 makes 131 tiles where 128x256 makes 98.
            (128, 25088, 1152, 1, 128, 192),
            // Batched: 32 x 128x512 makes 128 tiles of 128x128, one wave; 40 x 64x512 120
            // of 64x176; 192 x 64x197 384 of 64x112 (three waves, as 64x128 would).
            (128, 512, 512, 32, 128, 128),
            (64, 512, 512, 40, 64, 176),
            (64, 197, 197, 192, 64, 112),
            (64, 1024, 1024, 32, 64, 256),
        ] {
            let mut p = GemmProblem::new(m, n, k);
            p.batch = batch;
            let s = Space::for_problem(&p, &hw);
            let c = s.wave_fit_start().expect("a mid-size problem");
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0, c.mt1, c.pk, c.pw, c.gsu),
                (rows, width, 1, 1, 1),
                "{m}x{n}x{k}x{batch}"
            );
            // One warpgroup on four stages where it holds the tile; 128x256 needs two.
            let one = (c.wg, c.pgr) == ([4, 1], 4);
            assert_eq!(
                one,
                rows == 64 || width < 256,
                "{m}x{n}x{k}x{batch}: {}",
                c.name()
            );
            assert!(s.extra_starts().contains(&s.tile_order(&c)));
        }
        // K of 64 steps or more: one warpgroup as deep as fits (5120x384x5120: 120 tiles of
        // 128x128, 80 steps of 64).
        let s = Space::for_problem(&GemmProblem::new(5120, 384, 5120), &hw);
        let c = s.wave_fit_start().expect("one wave of 128x128");
        assert_eq!((c.mt0, c.mt1, c.wg, c.pk), (128, 128, [4, 1], 1));
        assert!(c.pgr > 4, "{}", c.name());
        // Many waves, skinny, 64 rows without a batch, or 128 rows too short for half a wave
        // of tiles of any width: none.
        for (m, n, k) in [
            (8192, 8192, 8192),
            (16032, 109, 16384),
            (5120, 77, 5120),
            (128, 4096, 512),
            (64, 8192, 512),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.wave_fit_start(), None, "{m}x{n}x{k}");
        }
    }

    /// B N-major (read in place): the wave-fitting widths and the N-fit start's widths are
    /// multiples of 32, so its tiles load in chunks of 32 or 64 columns, never 16.
    #[test]
    fn n_major_b_starts_on_widths_of_whole_32_column_chunks() {
        let hw = HwSpec::by_name("H200").unwrap();
        let nt = |m, n, k| GemmProblem::with_layout(m, n, k, Trans::N, Trans::T);
        // (problem) -> the wave-fitting width: 1280x1280 on 128x128 (100 tiles) where 128x112
        // (110) scored better; 1152x4096 on 128x160 where 128x144 did.
        for ((m, n, k), width) in [((1280, 1280, 2048), 128), ((1152, 4096, 1152), 160)] {
            let s = Space::for_problem(&nt(m, n, k), &hw);
            let c = s.wave_fit_start().expect("a mid-size problem");
            s.check(&c).unwrap();
            assert_eq!(c.mt1, width, "{m}x{n}x{k}: {}", c.name());
            let tn = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert!(tn.wave_fit_widths().any(|w| w % 32 != 0), "{m}x{n}x{k} TN");
        }
        // N = 176 and 240 on one N tile: 192 and 256 columns (176 and 240 where B is K-major).
        for (m, n, width) in [(14336, 176, 192), (32768, 240, 256)] {
            let s = Space::for_problem(&nt(m, n, 4096), &hw);
            let c = s.n_fit_start().expect("N cut in two by the default");
            s.check(&c).unwrap();
            assert_eq!(c.mt1, width, "{m}x{n}: {}", c.name());
            let tn = Space::for_problem(&GemmProblem::new(m, n, 4096), &hw);
            assert_eq!(
                tn.n_fit_start().map(|c| c.mt1 as i64),
                Some(n),
                "{m}x{n} TN"
            );
        }
    }

    #[test]
    fn many_waves_start_on_192_row_tiles_where_their_waves_take_less_time() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 37888x512: 396 tiles of 192x256 (three waves) against 592 of 128x256 (five).
        let s = Space::for_problem(&GemmProblem::new(37888, 512, 3584), &hw);
        let c = s.three_warpgroup_waves_start().expect("three full waves");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wg, c.pk, c.pw), (192, 256, [12, 1], 0, 0));
        assert!(c.pgr >= 4, "{}", c.name());
        assert!(s.extra_starts().contains(&c));
        // A tie on all of N: two waves of 192x248 against three of 128-row tiles, without
        // the producer warp (its registers do not fit beside three warpgroups of 248).
        let s = Space::for_problem(&GemmProblem::new(49152, 248, 4096), &hw);
        let c = s.three_warpgroup_waves_start().expect("a tie on all of N");
        assert_eq!((c.mt0, c.mt1, c.pw, c.pk), (192, 248, 0, 0));
        // Past 512 columns, parts of 256: 4608x4096 makes three waves of 192x256 against
        // five of 128x256, grouped along M as the default is.
        let s = Space::for_problem(&GemmProblem::new(4608, 4096, 3584), &hw);
        let c = s
            .three_warpgroup_waves_start()
            .expect("three waves of 192x256");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wg, c.pk, c.wgm), (192, 256, [12, 1], 0, 8));
        assert!(s.extra_starts().contains(&c));
        // 128-row tiles' waves as short (28672x512: three waves of 192-row tiles against
        // four of 128-row ones, 14336x512 two against two, 18944x512 two against three on
        // halves of N, 37888x1024 six waves against nine on quarters), one wave or less
        // (12288x300), N up to 128: none.
        for (m, n, k) in [
            (28672, 512, 8192),
            (14336, 512, 4096),
            (18944, 512, 3584),
            (12288, 300, 2048),
            (37888, 1024, 3584),
            (37888, 128, 3584),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.three_warpgroup_waves_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn prefill_problems_also_start_on_swapped_tiles_whose_height_fills_the_waves() {
        let hw = HwSpec::by_name("H200").unwrap();
        let e4m3 = |m, n, k| {
            let mut p = GemmProblem::new(m, n, k);
            (p.a_type, p.b_type) = (DataType::F8, DataType::F8);
            p
        };
        // 28672x512: 128x256 tiles make 448 (3.39 waves of 132), 224x128 make 512 (3.88;
        // four stages beside a staging area in narrow column groups), 176x128 652 (4.94);
        // 3584x512: 128x128 make 112, 112x128 make 128 (one wave).
        // 10240x200: 128x208 make 80 tiles, 160x128 make 128 (one wave), N's second column
        // tile 72 columns wide.
        for (p, height) in [
            (GemmProblem::new(28672, 512, 8192), 224),
            (e4m3(14336, 1024, 4096), 224),
            (GemmProblem::new(3584, 512, 18944), 112),
            (GemmProblem::new(10240, 200, 2560), 160),
            (e4m3(10240, 200, 2560), 160),
            // An N-major B takes 128-row tiles in 32-column steps (128x224: 240 tiles, 1.82
            // waves); 208x128 make 260 (1.97), in narrow column groups.
            (
                GemmProblem::with_layout(2560, 2560, 2560, Trans::T, Trans::T),
                208,
            ),
        ] {
            let s = Space::for_problem(&p, &hw);
            let c = s.swapped_wave_start().expect("a prefill problem");
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0, c.mt1, c.sab, c.pk, c.pw, c.gsu),
                (height, 128, 1, 1, 1, 1),
                "{}",
                c.name()
            );
            assert!(c.pgr >= 4, "{}", c.name());
            assert!(s.extra_starts().contains(&s.tile_order(&c)));
        }
        // One wave of tiles whose four stages would need narrow column groups: the
        // data-parallel kernel and its fifth stage (12800x256: 124 tiles of 208x128).
        let s = Space::for_problem(&GemmProblem::new(12800, 256, 4096), &hw);
        let c = s.swapped_wave_start().expect("a prefill problem");
        assert_eq!((c.mt0, c.pk, c.pgr), (208, 0, 5), "{}", c.name());
        // An M-contiguous A (NN): none.
        let nn = GemmProblem::with_layout(28672, 512, 8192, Trans::N, Trans::N);
        assert!(!nn.k_contiguous(true));
        assert_eq!(Space::for_problem(&nn, &hw).swapped_wave_start(), None);
        // A 128-row width fills the waves as well (4096^3: 128x256, 3.88 waves; the mid-size
        // problems of the wave-fit start: 1152x4096 on 128x144, 2 waves, as 144x128 would),
        // skinny problems: none.
        for (m, n, k) in [
            (4096, 4096, 4096),
            (1152, 4096, 1152),
            (3072, 1024, 3072),
            (2048, 2048, 2048),
            (8192, 1024, 4096),
            (8192, 256, 28672),
            (16032, 109, 16384),
            // N's second 128-column tile under half full.
            (12288, 160, 4096),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.swapped_wave_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn one_wave_of_swapped_256_column_tiles_starts_where_it_fills_the_gpu_best() {
        let hw = HwSpec::by_name("H200").unwrap();
        let mut e4m3 = GemmProblem::new(7168, 512, 2048);
        (e4m3.a_type, e4m3.b_type) = (DataType::F8, DataType::F8);
        // 7168x512 and 896x4096 make 112 tiles of 128x256 on 132 compute units, 128 of
        // 112x256, persistent beside the producer warp. 160x256 and 144x256, whose
        // accumulators do not fit beside it: one wave of 128 tiles, data-parallel without it
        // (1152x4096x1152 on 144x256: 20.2 us against 20.7 for the persistent 128x144
        // [cuBLASLt 19.9], H200, same call).
        for (p, height, alone) in [
            (e4m3, 112, 0),
            (GemmProblem::new(896, 4096, 4864), 112, 0),
            (GemmProblem::new(640, 8192, 640), 160, 1),
            (GemmProblem::new(1280, 4096, 640), 160, 1),
            (GemmProblem::new(1152, 4096, 1152), 144, 1),
        ] {
            let s = Space::for_problem(&p, &hw);
            let c = s.swapped_wide_wave_start().expect("one fuller wave");
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0, c.mt1, c.sab, c.pk, c.pw, c.gsu),
                (height, 256, 1, 1 - alone, 1 - alone, 1),
                "{}",
                c.name()
            );
            assert!(c.pgr >= 4, "{}", c.name());
            if alone == 0 {
                assert!(s.extra_starts().contains(&s.tile_order(&c)));
            }
        }
        // Where 128-row widths or 128-column heights fill the waves as well: none.
        for (m, n, k) in [(4096, 4096, 4096), (3584, 512, 18944), (16032, 109, 16384)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.swapped_wide_wave_start(), None, "{m}x{n}x{k}");
        }
    }
}
