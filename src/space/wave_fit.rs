//! Starts for mid-size problems whose time is set by how the last wave of tiles fills the
//! compute units (half a wave to a few waves of the default's tiles, M and N of 256 or more):
//! the persistent kernel on the tile, plain or swapped, whose count wastes the least of its
//! waves, scored as waves x (tile extent + 64); for tf32, one nearly full wave of 256-row
//! tiles. Each is a start beside the default that the search measures in its first batch and
//! `bench` in its default set.

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{fills_wave, tile_count, Space};

impl Space {
    /// The default's tile count where the wave-fitting starts apply: the default runs the
    /// warpgroup path, the persistent kernel is in the space, and M and N are at least 256
    /// (skinny problems have starts of their own).
    fn wide_persistent_default_tiles(&self) -> Option<i64> {
        let p = &self.problem;
        let start = self.raw_default();
        (constraints::is_wgmma(&start)
            && self.domain(ParamId::PersistentKernel).contains(1)
            && p.m >= 256
            && p.n >= 256)
            .then(|| tile_count(p, start.mt0 as i64, start.mt1 as i64))
    }

    /// The extents a wave-fitting start tries for a tile's varying side: 64 to 256 in steps
    /// of 16, where the MacroTile1 domain holds them.
    pub(super) fn wave_fit_widths(&self) -> impl Iterator<Item = i64> + '_ {
        self.domain(ParamId::MacroTile1)
            .values
            .iter()
            .copied()
            .filter(|n| (64..=256).contains(n) && n % 16 == 0)
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
    /// kernel on 128-row tiles of the width whose tile count wastes the least of its waves,
    /// scored as waves x (width + 64): a tile costs about its width in tensor-core time plus
    /// a fixed share (prologue, epilogue) worth about 64 columns. H200, kernel against kernel
    /// (cuBLASLt in brackets): 1152x4096x1152 on 128x144 tiles (261 tiles, 1.98 waves) 21.6 us,
    /// 128x160 22.2, 128x128 (288 tiles, 2.18 waves) 25.3 [19.9].
    pub fn wave_fit_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        if self.wide_persistent_default_tiles()? > 4 * cus {
            return None;
        }
        let score = |n: i64| self.wave_score(tile_count(p, 128, n), n);
        let mut widths: Vec<i64> = self
            .wave_fit_widths()
            .filter(|&n| tile_count(p, 128, n) * 2 >= cus)
            .collect();
        // The best score first; the wider tile of a tie (fewer tiles, fewer epilogues).
        widths.sort_by_key(|&n| (score(n), -n));
        // One warpgroup on all 128 rows, four stages: on the recorded mid-size sweeps
        // (datasets/mid_*, nn_3072x1024x3072) it beat two warpgroups and deeper rings by 1-5%
        // (1152x4096x1152: 21.2 us against 21.8 for two warpgroups, 21.9 for six stages).
        // Two warpgroups, as deep as fits, where one cannot hold the tile.
        widths.into_iter().find_map(|n| {
            let tile = [
                (ParamId::MacroTile0, 128),
                (ParamId::MacroTile1, n),
                (ParamId::WavesN, 1),
                (ParamId::GlobalSplitU, 1),
                (ParamId::GlobalSplitUAlgorithm, 1),
                (ParamId::ProducerWarp, 1),
                (ParamId::PersistentKernel, 1),
                (ParamId::SwapAB, 0),
            ];
            let one = self
                .preferring(
                    tile.iter()
                        .chain(&[(ParamId::WavesM, 4), (ParamId::PrefetchGlobalRead, 4)]),
                )
                .raw_default();
            if self.is_valid(&one) {
                return Some(one);
            }
            // The deepest pipeline's default is valid (with_deepest_pipeline checks it).
            let two =
                self.with_deepest_pipeline(&[tile.as_slice(), &[(ParamId::WavesM, 8)]].concat())?;
            Some(two.raw_default())
        })
    }

    /// Problems of a third of a wave to six waves of the default's tiles, M and N at least
    /// 256 (prefill: 28672x512x8192, 14336x1024x4096, 3584x512x18944), whose 128-row tiles
    /// leave the last wave partly idle: also start on the persistent kernel with swapped
    /// tiles of 128 columns and a height between 64 and 256 that is no multiple of 64 (only
    /// the instruction's N runs along M in such steps), scored as [`Space::wave_fit_start`]
    /// scores widths: waves x (height + 64). Taken only where it beats every 128-row width,
    /// and only with four stages or more. Measured kernel against kernel (cuBLASLt, which
    /// runs such tiles there too, in brackets): on an H200 28672x512x8192 on 176x128 (652
    /// tiles, 4.94 waves) 319.6 us against 348.8 for 128x256 (448 tiles, 3.39 waves) [307.7],
    /// 14336x1024x4096 e4m3 86.9 against 94.4 [80.2], 224 rows with three stages 331.6 and
    /// 88.7; on an H100 3584x512x18944 on 112x128 (128 tiles) 94.5 against 99.9 for 128x128
    /// (112 tiles) [91.1].
    pub fn swapped_wave_start(&self) -> Option<KernelConfig> {
        self.swapped_wave_tile(128)
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
    /// as deep as fits with four stages or more.
    fn swapped_wave_tile(&self, width: i64) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        if !(cus / 3..=6 * cus).contains(&self.wide_persistent_default_tiles()?)
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
            .domain(ParamId::MacroTile0)
            .values
            .iter()
            .copied()
            .filter(|h| (65..256).contains(h) && h % 16 == 0 && h % 64 != 0)
            .filter(|&h| score(h) < best_width)
            .collect();
        heights.sort_by_key(|&h| (score(h), -h));
        heights.into_iter().find_map(|h| {
            let space = self.with_deepest_pipeline(&[
                (ParamId::MacroTile0, h),
                (ParamId::MacroTile1, width),
                (ParamId::WavesM, 4),
                (ParamId::WavesN, 2),
                (ParamId::SwapAB, 1),
                (ParamId::GlobalSplitU, 1),
                (ParamId::GlobalSplitUAlgorithm, 1),
                (ParamId::ProducerWarp, 1),
                (ParamId::PersistentKernel, 1),
            ])?;
            let c = space.raw_default();
            (c.pgr >= 4).then_some(c)
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
        if p.a_type.bytes() < 4 || p.b_type.bytes() < 4 {
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
