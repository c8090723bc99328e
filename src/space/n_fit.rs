//! Starts that cut N: N just past 256 on wide tiles of several warpgroups along N
//! (or two half tiles), and N cut into equal tiles where the default's tile leaves idle
//! columns or idle compute units (the N-fit start, with either PrefetchLocalRead; over many
//! waves, on the persistent kernel).

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{tile_count, Space};

impl Space {
    /// Starts for N just past 256 besides the default's single 64-row N tile: 128-row tiles
    /// (half as many tiles, each reading B from L2 once per 128 rows of A instead of 64) with
    /// two warpgroups along N, and with four (two along each side, fed by the producer warp:
    /// on an H100, same call, 16032x260x16384 ran 209.8 us on MT128x272 WG8x2 with it, 302.4
    /// without, 238.5 on the 64-row tile, cuBLASLt 203.7; where its 68+ accumulators do not
    /// fit the 544 threads' registers, as for N = 320, the start is left out); and two N tiles of half
    /// of N on the square shapes' tile (128 rows, two warpgroups of 64 rows each covering the
    /// tile's N). N past 256 makes these GEMMs compute-bound (16032x384x16384 needs 262 us
    /// of tensor-core time on an H100, its operands 190 us of copy), where reading A twice
    /// from L2 costs less than the wide tiles' lower tensor-core rate: on an H100 the single
    /// 64x384 tile ran 395-421 us and 128x384 tiles 569-575 us against cuBLASLt's 268.
    pub fn wide_n_starts(&self) -> Vec<KernelConfig> {
        let start = self.raw_default();
        if !constraints::is_wgmma(&start) || start.mt1 <= 256 {
            return Vec::new();
        }
        let half = ((self.problem.n + 1) / 2 + 15) / 16 * 16;
        let shapes = [
            vec![
                (ParamId::MacroTile0, 128),
                (ParamId::WavesM, 4),
                (ParamId::WavesN, 2),
            ],
            vec![
                (ParamId::MacroTile0, 128),
                (ParamId::WavesM, 8),
                (ParamId::WavesN, 2),
                (ParamId::ProducerWarp, 1),
                (ParamId::PrefetchLocalRead, 1),
            ],
            // The two N tiles of a row of A run next to each other (WorkGroupMapping 1), so
            // A comes from DRAM once: 16032x320x16384 on an H100, same call, 238.9 us against
            // 255.1 with WGM8 (cuBLASLt 230.1); 16032x384 276.8 against 279.8.
            vec![
                (ParamId::MacroTile0, 128),
                (ParamId::MacroTile1, half),
                (ParamId::WavesM, 8),
                (ParamId::WavesN, 1),
                (ParamId::PrefetchLocalRead, 1),
                (ParamId::WorkGroupMapping, 1),
            ],
        ];
        shapes
            .iter()
            .filter_map(|prefs| Some(self.with_deepest_pipeline(prefs)?.raw_default()))
            .collect()
    }

    /// A start for skinny problems whose N the default's tile cuts with idle columns (N = 160
    /// in three 64-column tiles: 192 columns), or whose default tiles leave more than half of
    /// the compute units idle (8192x256 on 128x256 tiles: 64 workgroups on 132 units): N cut
    /// into c equal tiles (multiples of 8 where B is K-major in LDS, else of 32; at most 256
    /// columns), c chosen by a streaming estimate (waves of workgroups times the rows and
    /// columns each streams along K), side by side (WorkGroupMapping 1, so the N tiles of a
    /// row of A run together and A comes from DRAM once). On an H100 3584x160x18944 ran
    /// 62.4-63.0 us on MT64x80 (two N tiles, 112 workgroups) where the search had kept
    /// 71.8-78.3 us kernels (cuBLASLt 65.5-66.0): only a lucky step of the pattern search
    /// reached it; 8192x256x28672 e4m3 ran 99.5 us on MT128x128 with the producer warp
    /// (cuBLASLt 94.6) where 30-evaluation tunes from the 128x256 default kept 112.0 and
    /// 133.7 us.
    /// Where N is 256 or less and the default cuts it in two, at any number of waves: N of
    /// 193-255 at 16k-32k rows, whose default is 128x128 (A read twice) and whose whole N on
    /// the persistent kernel keeps three stages beside its output tile. H200, kernel against
    /// kernel (cuBLASLt, which runs 128x232 and 128x240 tiles of four stages there, in
    /// brackets): 16384x232x4096 on 128x232 (five stages) 47.4 us against 57.8 on 128x128 and
    /// 57.3 persistent [46.0]; 32768x240x4096 96.5 against 112.4 [92.7].
    pub fn n_fit_start(&self) -> Option<KernelConfig> {
        // Widths in the instruction's steps of 8 where B is K-major in LDS, else of 32
        // (Space::n_step: 16-column chunks of an N-major B stream far slower).
        self.n_fit_at(self.n_step(), 0)
    }

    /// More than four waves of the default's tiles (the wave-fit starts take fewer) whose last
    /// column of tiles leaves an eighth of its width idle or more: the persistent kernel on
    /// the default's rows and N cut into the equal widths (at most 256 columns, in
    /// [`Space::n_step`]s) whose waves take the least time, scored as
    /// [`Space::n_fit_start`] scores them, waves x (rows + width); taken where that beats the
    /// default's tile. Its stream-K twin follows it (the last wave is rarely full).
    /// H200, bench's default set before and after, one call [cuBLASLt]: 13824x1344x5120 (six
    /// tiles of 224 columns against six of 256, the last a quarter full) 281.3 -> 241.0 us
    /// [238.8]; 22016x960x4096 (four of 240) 239.2 -> 230.8 [216.0]; 28672x576x4096 (four of
    /// 144) 200.1 -> 187.4 [189.1]; 16384x1344x4096 e4m3 145.3 -> 125.4 [130.0].
    pub fn many_wave_n_fit_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let (mt0, mt1) = (start.mt0 as i64, start.mt1 as i64);
        let cus = self.hw.compute_units.max(1) as i64;
        let tiles_n = (p.n + mt1 - 1) / mt1;
        let idle = tiles_n * mt1 - p.n;
        if !constraints::is_wgmma(&start)
            || start.sab > 0
            || tiles_n < 2
            || idle * 8 < mt1
            || tile_count(p, mt0, mt1) <= 4 * cus
            || !self.domain(ParamId::PersistentKernel).contains(1)
        {
            return None;
        }
        let step = self.n_step();
        let (width, cost) = (tiles_n..=tiles_n + 2)
            .map(|c| self.n_cut(mt0, step, c))
            .filter(|&(width, _)| (128..=256).contains(&width))
            .min_by_key(|&(_, cost)| cost)?;
        let default_waves = (tile_count(p, mt0, mt1) + cus - 1) / cus;
        if cost >= default_waves * (mt0 + mt1) {
            return None;
        }
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile1, width),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 1),
        ])?;
        Some(space.raw_default())
    }

    /// N cut into `cuts` equal tiles of `rows` rows: the width (N / cuts rounded up to a
    /// multiple of `step`) and the N-fit score of those tiles, a streaming estimate: waves of
    /// workgroups times the rows and columns each streams along K.
    fn n_cut(&self, rows: i64, step: i64, cuts: i64) -> (i64, i64) {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        let tiles_m = (p.m + rows - 1) / rows * p.batch.max(1);
        let width = ((p.n + cuts - 1) / cuts + step - 1) / step * step;
        (width, ((tiles_m * cuts + cus - 1) / cus) * (rows + width))
    }

    /// The N-fit start on widths in steps of `step`, with PackUnaligned `pack`.
    fn n_fit_at(&self, step: i64, pack: i64) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let mt0 = start.mt0 as i64;
        let tiles_n = (p.n + start.mt1 as i64 - 1) / start.mt1 as i64;
        let idle = tiles_n * start.mt1 as i64 - p.n;
        let cus = self.hw.compute_units.max(1) as i64;
        let tiles = tile_count(p, mt0, start.mt1 as i64);
        // The estimate below is of streaming along K: it says nothing of short K, where a
        // workgroup's few K tiles cost less than its launch.
        let underfilled = 2 * tiles <= cus && p.n >= 32 && p.k >= 16 * start.depth_u as i64;
        // N of one instruction's width at most, cut in two or more by the default: whole N
        // on one tile reads A once, at any number of waves (below).
        let whole_n = p.n <= i64::from(constraints::MAX_WGMMA_N) && tiles_n >= 2;
        if !constraints::is_wgmma(&start)
            || start.sab > 0
            || (tiles_n < 2 && !underfilled)
            || (idle < 16 && !underfilled)
            || (tiles >= 2 * cus && !whole_n)
        {
            return None;
        }
        let width = |c: i64| self.n_cut(mt0, step, c).0;
        let c = (1..=(p.n / 16).max(tiles_n))
            .filter(|&c| width(c) <= 256)
            .min_by_key(|&c| (self.n_cut(mt0, step, c).1, c))?;
        // Whole K per tile (the tiles fill the GPU by themselves), with the producer warp
        // where it fits: 8192x256x28672 e4m3 ran 99.5 us with it against 105.1 without
        // (H100); 3584x109x18944 58.8 us on MT64x64 without a split against 64.2 on MT64x112
        // (the default's MT64x64 splits K in two: 83.6), cuBLASLt 63.6.
        // One warpgroup along N where the width is 128 or less (the default's two along N are
        // for a single tile past 256 columns): H200, same call, 1024x512x8192 on MT64x64
        // 22.3 us with one against 25.3 with two [20.6]; 512x512x4096 on MT64x32 12.9 against
        // 14.3 [11.7].
        let waves_n = if width(c) <= 128 {
            1
        } else {
            self.domain(ParamId::WavesN).default
        };
        let fit = [
            (ParamId::MacroTile1, width(c)),
            (ParamId::WorkGroupMapping, 1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::WavesN, waves_n),
            (ParamId::PackUnaligned, pack),
        ];
        let with_producer = [fit.as_slice(), &[(ParamId::ProducerWarp, 1)]].concat();
        let space = self
            .with_deepest_pipeline(&with_producer)
            .or_else(|| self.with_deepest_pipeline(&fit))?;
        let fitted = space.raw_default();
        (fitted.canonical() != start.canonical()).then_some(fitted)
    }

    /// The N-fit start and the same with the other PrefetchLocalRead: which of the two wins
    /// flips with the tile and is measured, not modelled. H100, same call (cuBLASLt in
    /// brackets): 3584x160x18944 on MT64x80 59.3 us with PLR1 against 65.1 with PLR0 [65.8];
    /// 4096x200x14336 on MT64x112 70.4 against 60.4 [56.6]; 8192x256x28672 e4m3 on
    /// MT128x128 98.5 against 97.1 [94.2].
    ///
    /// Where the starts copy a skinny N-major B K-major first ([`Space::copies_skinny_b`]),
    /// also the N-fit start on that copy, in the instruction's steps of 8 (the widths a
    /// K-major B takes): H200, bench's default set, one call [cuBLASLt]: 14336x176x4096 NT on
    /// 128x176 42.0 us against 46.7 on 128x192 in place [37.0]; 32768x240x4096 NT on 128x240
    /// 97.5 against 113.6 on 128x256 [93.2]; 3584x160x18944 NT on 64x80 57.3 against 70.0 on
    /// 64x160 split in two [46.4].
    pub fn n_fit_starts(&self) -> Vec<KernelConfig> {
        let copied = self
            .copies_skinny_b()
            .then(|| self.n_fit_at(8, i64::from(constraints::PACK_B)))
            .flatten();
        let Some(fitted) = self.n_fit_start() else {
            return copied.into_iter().collect();
        };
        let other = KernelConfig {
            plr: 1 - fitted.plr.min(1),
            ..fitted
        };
        std::iter::once(fitted)
            .chain(self.is_valid(&other).then_some(other))
            .chain(copied)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;
    use crate::space::Space;

    #[test]
    fn many_waves_with_an_idle_last_column_start_on_equal_n_tiles() {
        let hw = HwSpec::by_name("H200").unwrap();
        // N over 128x256 tiles: 1344 in six (the last a quarter full), 960 in four, 576 in
        // three; cut into equal widths of the fewest waves x (rows + width).
        for (m, n, k, width) in [
            (13824, 1344, 5120, 224),
            (22016, 960, 4096, 240),
            (28672, 576, 4096, 144),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            let c = s.many_wave_n_fit_start().expect("equal N tiles");
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.pk, c.gsu), (128, width, 1, 1), "{m}x{n}");
            assert!(s.extra_starts().contains(&s.tile_order(&c)), "{m}x{n}");
        }
        // N a multiple of 256, a last column under an eighth idle (N = 1000), or four waves
        // or fewer (the wave-fit starts' problems): none.
        for (m, n) in [(16384, 1024), (16384, 1000), (4096, 1344)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, 4096), &hw);
            assert_eq!(s.many_wave_n_fit_start(), None, "{m}x{n}");
        }
    }

    #[test]
    fn a_skinny_n_cut_with_idle_columns_starts_on_equal_n_tiles() {
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        let s = Space::for_problem(&GemmProblem::new(3584, 160, 18944), &hw);
        // 56 x 3 tiles of 64x64 (192 columns, two waves): two tiles of 80, one wave.
        let c = s.n_fit_start().expect("N = 160 on 64-column tiles");
        s.check(&c).unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.wgm),
            (s.default_config().unwrap().mt0, 80, 1)
        );
        assert!(s.extra_starts().contains(&s.tile_order(&c)));
        // N a whole number of the default's tiles that fill the GPU, or a problem of many
        // waves: none.
        for (m, n, k) in [(16032, 128, 4096), (4096, 4096, 4096), (16032, 109, 16384)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert_eq!(s.n_fit_start(), None, "{m}x{n}x{k}");
        }
        // Whole tiles that leave most compute units idle: 64 tiles of 128x256 become 128 of
        // 128x128.
        let mut f8 = GemmProblem::new(8192, 256, 28672);
        (f8.a_type, f8.b_type) = (crate::problem::DataType::F8, crate::problem::DataType::F8);
        let s = Space::for_problem(&f8, &hw);
        assert_eq!(s.default_config().unwrap().mt1, 256);
        let c = s.n_fit_start().expect("64 workgroups on 132 compute units");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.wgm), (128, 128, 1));
        // N of 193-255 cut in two by the default, at any number of waves: whole N on one
        // data-parallel tile of a multiple of 8 columns, the producer warp, as deep as fits.
        let h200 = HwSpec::by_name("H200").unwrap();
        for (m, n) in [(16384, 232), (32768, 240)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, 4096), &h200);
            let c = s.n_fit_start().unwrap_or_else(|| panic!("{m}x{n}"));
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.wgm, c.pw, c.pk), (128, n as u32, 1, 1, 0));
            assert!(c.pgr >= 4, "{}", c.name());
        }
        // A fitted width of 128 or less runs on one warpgroup along N, whatever the default's.
        let s512 = Space::for_problem(&GemmProblem::new(1024, 512, 8192), &hw);
        assert_eq!(s512.default_config().unwrap().wg, [4, 2]);
        let c512 = s512.n_fit_start().expect("16 tiles of 64x512");
        s512.check(&c512).unwrap();
        assert_eq!((c512.mt1, c512.wg), (64, [4, 1]));
        // Both ways of keeping stages in the tensor cores start.
        let both = s.n_fit_starts();
        assert_eq!(both.len(), 2);
        assert_eq!((both[0], both[1].plr), (c, 1 - c.plr));
        assert!(both
            .iter()
            .all(|c| s.extra_starts().contains(&s.tile_order(c))));
    }
}
