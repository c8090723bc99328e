//! Starts on the persistent kernel for problems of several waves of tiles: the default's
//! tile walked by one workgroup per compute unit (and its stream-K twin where the last wave
//! idles), its stream-K for few tiles with a long K, and the producer warpgroup's tall tiles
//! for large GEMMs of 16-bit inputs.

use super::config::{GsuAlgo, KernelConfig};
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{
    fills_wave, split_in_kernel_tile, tile_count, tiles_pair_up, Space, NARROW_N_MAX,
};

impl Space {
    /// A start for problems of several waves of tiles: the default's tile as a persistent
    /// kernel (one workgroup per compute unit walking the tiles, its producer warp loading the
    /// next tile's operands while the warpgroups store the last through a tensor map), as
    /// deep as its LDS allows beside the output tile.
    pub fn persistent_start(&self) -> Option<KernelConfig> {
        let start = self.raw_default();
        let tiles = tile_count(&self.problem, start.mt0 as i64, start.mt1 as i64);
        if !self.domain(ParamId::PersistentKernel).contains(1)
            || start.gsu > 1
            || tiles < 2 * self.hw.compute_units as i64
        {
            return None;
        }
        let space = self.with_deepest_pipeline(&[
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
        ])?;
        Some(space.raw_default())
    }

    /// A start for tf32 products (f32 operands on the warpgroup instruction, the `c_xf32_r`
    /// compute type) of at least two 128x128 tiles a compute unit: ping-pong
    /// (PersistentKernel=2) on 128x128 tiles, each of the two warpgroups multiplying a tile of
    /// its own while the other stores its f32 one, as deep as fits. An f32 tile is twice the
    /// bytes of a 16-bit one to store, and cuBLASLt runs tf32 this way
    /// (`sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1`, 132
    /// persistent workgroups of 384 threads). H200, kernel against kernel, one call: 6144 x
    /// 6144 x 1024 226.1 us against 235.4 on the default's 128x256 [208.6], 4096 x 4096 x
    /// 1024 103.6 against 106.7 [92.6].
    pub fn tf32_ping_pong_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        if !constraints::is_wgmma(&start)
            || !p.reads_f32_as_tf32()
            || !self.domain(ParamId::PersistentKernel).contains(2)
            || tile_count(p, 128, 128) < 2 * self.hw.compute_units as i64
        {
            return None;
        }
        self.deepest_ping_pong(128, 128)
    }

    /// Ping-pong (PersistentKernel=2) on unswapped `mt0` x `mt1` tiles, one warpgroup each
    /// beside the producer, whole tiles (no split), as deep as fits: the tiles of the tf32 and
    /// moderate-K ping-pong starts.
    pub(super) fn deepest_ping_pong(&self, mt0: i64, mt1: i64) -> Option<KernelConfig> {
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile0, mt0),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, 1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 2),
            (ParamId::SwapAB, 0),
        ])?;
        Some(space.raw_default())
    }

    /// Batched products whose default is the single N tile of 64 rows (N of 257-512: the
    /// tile that reads A once for one long-K GEMM): the persistent kernel on 128x128 and
    /// 128x256 tiles, two warpgroups along M fed by the producer warp, as deep as fits. A
    /// batch's A is small and read once either way; what sets the time is how the tiles'
    /// short mainloops overlap their stores, which the persistent kernel does and the
    /// single-tile default, whose persistent form does not fit at N = 512, does not. H200,
    /// kernel against kernel, one call (cuBLASLt in brackets): 96 x 384^3 on 128x128 28.3 us
    /// against 33.9 on the default's tile persistent [28.7]; 128 x 512^3 on 128x256 65.0,
    /// 128x128 66.4, against 93.4 for the best of bench's default set [63.7]; 64 x 512^3 NN
    /// 35.3 and 35.5 [34.6]; 128 x 512^3 e4m3 41.7 and 42.5 against 69.7 [43.6].
    pub fn batched_persistent_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        if p.batch <= 1
            || !constraints::is_wgmma(&start)
            || start.mt0 != 64
            || start.mt1 <= 256
            || !self.domain(ParamId::PersistentKernel).contains(1)
        {
            return Vec::new();
        }
        [128, 256]
            .into_iter()
            .filter_map(|mt1| {
                // The split tile of the one-wave starts, unsplit and persistent.
                let prefs = [
                    split_in_kernel_tile(128, mt1, 1).as_slice(),
                    &[
                        (ParamId::PersistentKernel, 1),
                        (ParamId::GlobalSplitUAlgorithm, 1),
                    ],
                ]
                .concat();
                let space = self.with_deepest_pipeline(&prefs)?;
                Some(space.raw_default())
            })
            .collect()
    }

    /// The data-parallel twin of a persistent start (or default) where beta reads C and C's
    /// tile costs the persistent kernel stages: it stages the whole tile's C beside the
    /// operand ring (kernels/epilogue/gt_epilogue_tma.h), while the data-parallel kernel
    /// brings C through its tensor map into the ring once the main loop is done
    /// (kernels/scheduler/gt_data_parallel.h) and keeps every stage. The twin: the same
    /// config data-parallel, as deep as fits, where that is deeper. H200, kernel against
    /// kernel, one call (cuBLASLt in brackets): 1600x6400x4096 beta 1 on 128x224, persistent
    /// on three stages 133.6 us, data-parallel on four 122.4 [114.4]; with beta 0, persistent
    /// on four 115.0, on three 128.4, data-parallel on four 117.3 [108.6].
    pub(super) fn beta_data_parallel_twin(&self, c: &KernelConfig) -> Option<KernelConfig> {
        if self.problem.beta == 0.0 || c.pk == 0 || c.gsu_algo == GsuAlgo::StreamK {
            return None;
        }
        let mut prefs = ParamId::values_of(c);
        prefs.push((ParamId::PersistentKernel, 0));
        let twin = self.with_deepest_pipeline(&prefs)?.raw_default();
        (twin.pgr > c.pgr).then_some(twin)
    }

    /// The persistent kernel's stream-K (GSU1S) twin of a persistent start (or default), where
    /// it is valid (beta 0, one workgroup per compute unit) and the start's whole tiles either
    /// leave more than 10% of their waves' clusters idle (but not of one wave at least half
    /// full) or run more than ten waves with a partial last one (its shared units are then a
    /// small part of the work, and the whole waves keep their locality). All waves but the
    /// last one or two go whole, and the clusters share the rest's (tile, K tile) units evenly
    /// (kernels/scheduler/gt_tile_walk.h).
    /// Measured kernel against kernel on an H100, cuBLASLt in brackets, each line one call:
    /// 3072^3 on 128x256 in pairs along M 94.2 us, whole tiles 100.7 [75.6]; 3000^3 TN (rows
    /// aligned to 16 bytes only) 109.0 against the 256x128 pair's 115.4 [79.0]; 5000x1000x5000
    /// NT 117.5 against 122.5 [70.7]; 8192^3 in pairs along M (15.5 waves) 1457.3 [1515.0],
    /// where 8 x 2048^3 (7.8 waves) ran 194.6 against 181.6 whole [178.9] and 4096^3 (3.9)
    /// 201.1 against 174.2 [171.8]; on an H200 5120x5120x1280 (800 tiles of 128x256, 6.06
    /// waves, 6% of the seventh busy) 103.5 against 106.7 whole [94.4].
    pub(super) fn stream_k_twin(&self, c: &KernelConfig) -> Option<KernelConfig> {
        let p = &self.problem;
        // One N tile of a narrow N streams A fastest on whole tiles (narrow_n.rs).
        let narrow = p.n <= c.mt1 as i64 && c.mt1 as i64 <= NARROW_N_MAX;
        if c.pk != 1 || c.gsu_algo == GsuAlgo::StreamK || narrow {
            return None;
        }
        let cluster = (c.cn.max(1) * c.cm.max(1)) as i64;
        let clusters = (self.hw.compute_units.max(1) as i64 / cluster).max(1);
        let groups = tile_count(p, c.mt0 as i64, c.mt1 as i64) / cluster;
        let rounds = (groups + clusters - 1) / clusters;
        let short_last_wave = groups * 100 < rounds * clusters * 90;
        let many_waves = rounds > 10 && groups % clusters != 0;
        // One wave at least half full: each tile's K spread over more workgroups ran slower
        // than whole tiles (768x768x4096, H200, one call: 64x96 on 96 workgroups 21.9 us
        // against 14.7 whole, 128x64 on 72 21.2 against 17.9).
        let half_wave_or_more = rounds == 1 && groups * 2 >= clusters;
        if (!short_last_wave && !many_waves) || half_wave_or_more {
            return None;
        }
        let twin = KernelConfig {
            gsu_algo: GsuAlgo::StreamK,
            ..*c
        };
        self.is_valid(&twin).then_some(twin)
    }

    /// Fewer of the default's tiles than compute units, with a long K (1024x1024x65536: 32
    /// tiles of 128x256 for 132 compute units, 1024 K tiles each): the default's tile as the
    /// persistent kernel's stream-K, every compute unit taking an even share of all (tile, K
    /// tile) units, as deep as fits. H100, same call: 1024x1024x65536 187.1 us [cuBLASLt
    /// 178.5]; tuned before it, 190.7 [176.8] on an H200.
    ///
    /// Where the tiles fill at least 60% of a wave, the same tiles whole as well, one to a
    /// workgroup: spread over every compute unit each tile's K is cut at places that cost a
    /// fix-up and a second pipeline fill, for a gain of the few idle units, which pays on a
    /// long K (16032x109x16384 TT, 126 tiles of 128x112: stream-K won bench's default set)
    /// and not on a shorter one. H200, kernel against kernel, one call, whole / stream-K
    /// [cuBLASLt]: 7168x96x2048 (112 tiles of 64x96) 13.0 / 17.7 (13.5 for the best
    /// data-parallel kernel) [12.2]; 7168x96x4096 21.2 / 25.1 (21.7) [20.5]; 3072x1024x3072
    /// (96 of 128x256) 35.9 / 41.5; 11008x256x4096 (86) 45.3 / 48.1; 12288x80x4096 (128
    /// swapped 96x128) 40.0 / 40.6. At 53-55% of a wave stream-K won: 1792x1280x4096 (70 of
    /// 128x256) 44.2 / 42.0, 1536^2 x 6144 (72) 62.8 / 54.1.
    pub fn few_tile_persistent_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let cus = self.hw.compute_units.max(1) as i64;
        let tiles = tile_count(p, start.mt0 as i64, start.mt1 as i64);
        let ktiles = (p.k + 63) / 64;
        if !constraints::is_wgmma(&start)
            || !self.domain(ParamId::PersistentKernel).contains(1)
            || p.beta != 0.0
            || tiles >= cus
            || tiles * ktiles < 8 * cus
        {
            return Vec::new();
        }
        // Narrow problems (N, or M swapped, of at most NARROW_N_MAX) have whole tiles on the
        // persistent kernel from the narrow-N start already.
        let narrow = p.n.min(p.m) <= NARROW_N_MAX;
        // GlobalSplitUAlgorithm: 2 stream-K, 1 whole tiles.
        let algos: &[i64] = if tiles * 5 >= cus * 3 && !narrow {
            &[2, 1]
        } else {
            &[2]
        };
        algos
            .iter()
            .filter_map(|&algo| {
                let space = self.with_deepest_pipeline(&[
                    (ParamId::ProducerWarp, 1),
                    (ParamId::PersistentKernel, 1),
                    (ParamId::GlobalSplitU, 1),
                    (ParamId::GlobalSplitUAlgorithm, algo),
                ])?;
                Some(space.raw_default())
            })
            .collect()
    }

    /// Large GEMMs of 16-bit inputs (at least eight waves of 256x128 tiles): 256x128 tiles on
    /// two warpgroups stacked along M beside a producer warpgroup (ProducerWarp=2, 232
    /// registers a thread for 128 accumulator rows each), persistent, in pairs along N sharing
    /// A where the tiles along N pair up, as deep as fits: a start beside the 128x256 default,
    /// which wins on some of these shapes and not on others. Kernel against kernel on an
    /// H100, one call (cuBLASLt in brackets): 8192x28672x8192 5082.8 us against 5211.5 for
    /// 128x256 beside a producer warp [5177.7]; 6144x8192x8192 NT 1026.8 against 1086.3
    /// [1117.9]; 8192^3 1394.2 against 1382.3 [1474.0] (on an H200, 1404.2 against 1450.1
    /// [1582.4]); 16384x8192x4096 NN 1444.3 against 1405.3 [1575.3]. With fewer waves it
    /// tied or lost (H200: 4096^3 176.5 against 175.3, 8 x 2048^3 183.9 against 181.5).
    ///
    /// Also from one nearly full wave, at any operand width, where the default's wider tiles
    /// leave columns idle ([`Space::idle_columns_take_waves`]), with the tiles of a row side by
    /// side (WorkGroupMapping 1) where they are few.
    pub fn large_producer_warpgroup_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        let tiles = tile_count(p, 256, 128);
        let large = p.a_type.bytes() == 2 && p.b_type.bytes() == 2 && tiles >= 8 * cus;
        let idle = self.idle_columns_take_waves(tiles);
        if !self.domain(ParamId::ProducerWarp).admits(2) || !(large || idle) {
            return None;
        }
        let pair = tiles_pair_up(p.n, 128) && self.domain(ParamId::ClusterN).admits(2);
        // A row of at most eight tiles side by side reads its 256 rows of A from DRAM once:
        // 25600x640x4096 (five tiles a row) ran 177.3 us with WorkGroupMapping 1 against
        // 181.8 with 8 (H200, same call, cuBLASLt 176.6).
        let order = if idle && !large && p.n <= 8 * 128 {
            1
        } else {
            self.domain(ParamId::WorkGroupMapping).default
        };
        self.producer_warpgroup_tile(
            256,
            128,
            [8, 1],
            0,
            &[
                (ParamId::ClusterN, i64::from(pair) + 1),
                (ParamId::WorkGroupMapping, order),
            ],
        )
    }

    /// Whether `tiles` 256x128 tiles (a nearly full wave or more) take less tensor-core time
    /// than the default's tiles because those leave columns idle: N past a multiple of the
    /// default's width, each wave counted whole at its tiles' area. 25600x640x4096
    /// (Granite-3-8B's gate and up projections at 640 tokens) makes 600 tiles of 128x256
    /// whose last column is half idle, five waves, against 500 of 256x128, four: on an H200,
    /// kernel against kernel, one call, 237.6 us on the default's tile against 177.3 on
    /// 256x128 beside a producer warpgroup, 193.0 on the persistent 128x224 and 189.9 on
    /// 128x128 [cuBLASLt, on 256x128 tiles in pairs, 176.6].
    fn idle_columns_take_waves(&self, tiles: i64) -> bool {
        let p = &self.problem;
        let start = self.raw_default();
        let cus = self.hw.compute_units.max(1) as i64;
        let waves = |t: i64| (t + cus - 1) / cus;
        let (mt0, mt1) = (start.mt0 as i64, start.mt1 as i64);
        constraints::is_wgmma(&start)
            && p.n % mt1 != 0
            && fills_wave(tiles.min(cus), &self.hw)
            && waves(tiles) * 256 * 128 < waves(tile_count(p, mt0, mt1)) * mt0 * mt1
    }

    /// The persistent kernel on `mt0` x `mt1` tiles, warpgroups placed by `waves` (WavesM,
    /// WavesN), swapped or not, beside a producer warpgroup (ProducerWarp=2), whole tiles, with
    /// the `extra` preferences (a cluster, a tile order; taken last, so they may also choose
    /// the data-parallel kernel), as deep as fits: what the producer-warpgroup starts share.
    pub(super) fn producer_warpgroup_tile(
        &self,
        mt0: i64,
        mt1: i64,
        waves: [i64; 2],
        swap: i64,
        extra: &[(ParamId, i64)],
    ) -> Option<KernelConfig> {
        let tile = [
            (ParamId::MacroTile0, mt0),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, waves[0]),
            (ParamId::WavesN, waves[1]),
            (ParamId::SwapAB, swap),
            (ParamId::ProducerWarp, 2),
            (ParamId::PersistentKernel, 1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
        ];
        let space = self.with_deepest_pipeline(&[tile.as_slice(), extra].concat())?;
        Some(space.raw_default())
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem};
    use crate::space::{GsuAlgo, KernelConfig, Space};

    #[test]
    fn persistent_starts_with_idle_last_waves_get_stream_k_twins() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 3072^3: 288 tiles of 128x256 are 2.18 waves; the twin follows its start.
        let s = Space::for_problem(&GemmProblem::new(3072, 3072, 3072), &hw);
        let starts = s.extra_starts();
        let at = starts
            .iter()
            .position(|c| c.pk == 1 && c.gsu_algo == GsuAlgo::StreamK)
            .expect("a stream-K twin");
        let twin = starts[at];
        s.check(&twin).unwrap();
        assert!(
            at > 0
                && starts[..at].contains(&KernelConfig {
                    gsu_algo: GsuAlgo::Reduce,
                    ..twin
                })
        );
        // 5120x5120x1280: 800 tiles are 6.06 waves (87% busy), a twin; 8192^3: 15.5 waves, a
        // twin; 4096^3: 512 tiles are 3.9 waves (97% busy): none.
        // With beta: none.
        for (m, n, k) in [(5120, 5120, 1280), (8192, 8192, 8192)] {
            let many = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            assert!(
                many.extra_starts()
                    .iter()
                    .any(|c| c.pk == 1 && c.gsu_algo == GsuAlgo::StreamK),
                "{m}x{n}x{k}"
            );
        }
        let full = Space::for_problem(&GemmProblem::new(4096, 4096, 4096), &hw);
        assert!(!full
            .extra_starts()
            .iter()
            .any(|c| c.gsu_algo == GsuAlgo::StreamK));
        let beta = GemmProblem {
            beta: 1.0,
            ..GemmProblem::new(3072, 3072, 3072)
        };
        let s = Space::for_problem(&beta, &hw);
        assert!(!s
            .extra_starts()
            .iter()
            .any(|c| c.gsu_algo == GsuAlgo::StreamK && c.pk == 1));
        // Few tiles with a long K: the persistent stream-K start.
        let long = Space::for_problem(&GemmProblem::new(1024, 1024, 65536), &hw);
        let starts = long.few_tile_persistent_starts();
        let [c] = starts.as_slice() else {
            panic!("32 tiles, 1024 K tiles each: stream-K alone, {starts:?}");
        };
        long.check(c).unwrap();
        assert_eq!((c.pk, c.gsu, c.gsu_algo), (1, 1, GsuAlgo::StreamK));
        assert!(long.extra_starts().contains(c));
        let square = Space::for_problem(&GemmProblem::new(4096, 4096, 4096), &hw);
        assert!(square.few_tile_persistent_starts().is_empty());
        // 112 tiles of 64x96 (85% of a wave): whole tiles too; 70 of 128x256 (53%): not.
        for (m, n, k, algos) in [
            (7168, 96, 2048, vec![GsuAlgo::StreamK, GsuAlgo::Reduce]),
            (1792, 1280, 4096, vec![GsuAlgo::StreamK]),
        ] {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            let starts = s.few_tile_persistent_starts();
            for c in &starts {
                s.check(c).unwrap();
                assert_eq!((c.pk, c.gsu), (1, 1), "{m}x{n}x{k}");
                assert!(s.extra_starts().contains(&s.tile_order(c)), "{m}x{n}x{k}");
            }
            let got: Vec<GsuAlgo> = starts.iter().map(|c| c.gsu_algo).collect();
            assert_eq!(got, algos, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn persistent_starts_that_lose_stages_to_c_get_data_parallel_twins() {
        let hw = HwSpec::by_name("H200").unwrap();
        let beta = GemmProblem {
            beta: 1.0,
            ..GemmProblem::new(1600, 6400, 4096)
        };
        let s = Space::for_problem(&beta, &hw);
        let starts = s.extra_starts();
        let persistent: Vec<&KernelConfig> = starts.iter().filter(|c| c.pk == 1).collect();
        assert!(!persistent.is_empty());
        // Each persistent start that C's tile leaves shallower than its data-parallel self is
        // followed by that twin, deeper.
        let mut twins = 0;
        for c in persistent {
            let Some(twin) = s.beta_data_parallel_twin(c) else {
                continue;
            };
            s.check(&twin).unwrap();
            assert_eq!(
                KernelConfig {
                    pk: 1,
                    pgr: c.pgr,
                    ..twin
                },
                *c
            );
            assert!(twin.pgr > c.pgr, "{}", twin.name());
            let at = starts.iter().position(|x| x == c).unwrap();
            assert!(starts[at + 1..].contains(&s.tile_order(&twin)));
            twins += 1;
        }
        assert!(twins > 0, "128x224 drops to three stages with beta");
        // Beta 0: no twins.
        let plain = Space::for_problem(&GemmProblem::new(1600, 6400, 4096), &hw);
        assert!(plain
            .extra_starts()
            .iter()
            .all(|c| plain.beta_data_parallel_twin(c).is_none()));
    }

    #[test]
    fn tf32_products_of_two_tiles_a_compute_unit_start_on_ping_pong() {
        let hw = HwSpec::by_name("H200").unwrap();
        let tf32 = GemmProblem::tf32;
        let s = Space::for_problem(&tf32(4096, 4096, 1024), &hw);
        let c = s
            .tf32_ping_pong_start()
            .expect("1024 tf32 tiles of 128x128");
        s.check(&c).unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.wg, c.pk, c.pw, c.sab),
            (128, 128, [4, 1], 2, 1, 0)
        );
        assert_eq!(c.mi, [64, 8, 8]);
        assert!(s.extra_starts().contains(&c));
        // 2048^2: 256 tiles, fewer than two a compute unit; f32 on FFMAs and bf16: none.
        let few = Space::for_problem(&tf32(2048, 2048, 2048), &hw);
        assert_eq!(few.tf32_ping_pong_start(), None);
        let mut f32 = tf32(4096, 4096, 1024);
        f32.compute_type = crate::problem::ComputeType::F32;
        assert_eq!(Space::for_problem(&f32, &hw).tf32_ping_pong_start(), None);
        let bf16 = Space::for_problem(&GemmProblem::new(4096, 4096, 1024), &hw);
        assert_eq!(bf16.tf32_ping_pong_start(), None);
    }

    #[test]
    fn large_gemms_of_16_bit_inputs_start_from_a_producer_warpgroup_too() {
        let h200 = HwSpec::by_name("H200").unwrap();
        let big = Space::for_problem(&GemmProblem::new(8192, 28672, 8192), &h200);
        let c = big.large_producer_warpgroup_start().unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.wg, c.pw, c.pk, c.cn, c.gsu),
            (256, 128, [8, 1], 2, 1, 2, 1)
        );
        big.check(&c).unwrap();
        assert!(big.extra_starts().contains(&c));
        // Fewer than eight waves of 256x128 tiles, or 8-bit inputs: none.
        let square = Space::for_problem(&GemmProblem::new(4096, 4096, 4096), &h200);
        assert!(square.large_producer_warpgroup_start().is_none());
        let mut fp8 = GemmProblem::new(8192, 28672, 8192);
        (fp8.a_type, fp8.b_type) = (DataType::F8, DataType::F8);
        fp8.fill_defaults();
        assert!(Space::for_problem(&fp8, &h200)
            .large_producer_warpgroup_start()
            .is_none());
        // Tiles along N that do not pair up: alone.
        let odd = Space::for_problem(&GemmProblem::new(8192, 8192 + 128, 8192), &h200);
        assert_eq!(odd.large_producer_warpgroup_start().map(|c| c.cn), Some(1));
    }

    #[test]
    fn idle_columns_over_several_waves_start_on_256x128_tiles() {
        let h200 = HwSpec::by_name("H200").unwrap();
        // 25600x640: 600 tiles of 128x256 (the last column half idle), five waves, against
        // 500 of 256x128, four; in bf16 and e4m3, five tiles a row side by side.
        for t in [DataType::Bf16, DataType::F8] {
            let mut p = GemmProblem::new(25600, 640, 4096);
            (p.a_type, p.b_type) = (t, t);
            p.fill_defaults();
            let s = Space::for_problem(&p, &h200);
            let c = s.large_producer_warpgroup_start().expect("256x128 tiles");
            assert_eq!(
                (c.mt0, c.mt1, c.pw, c.pk, c.cn, c.wgm),
                (256, 128, 2, 1, 1, 1),
                "{t:?}"
            );
            s.check(&c).unwrap();
            assert!(s.extra_starts().contains(&c));
        }
        // As many waves either way (16384x640: three), N a multiple of the default's width,
        // or under a nearly full wave of 256x128 tiles (2048x640: 40): none.
        for (m, n) in [(16384, 640), (25600, 512), (2048, 640)] {
            let s = Space::for_problem(&GemmProblem::new(m, n, 4096), &h200);
            assert!(s.large_producer_warpgroup_start().is_none(), "{m}x{n}");
        }
    }

    #[test]
    fn batches_on_a_single_n_tile_start_persistent_on_128_row_tiles_too() {
        let h200 = HwSpec::by_name("H200").unwrap();
        for (n, t) in [
            (512, DataType::Bf16),
            (384, DataType::Bf16),
            (512, DataType::F8),
        ] {
            let mut p = GemmProblem::new(n, n, n);
            (p.a_type, p.b_type, p.batch) = (t, t, 96);
            p.fill_defaults();
            let s = Space::for_problem(&p, &h200);
            assert_eq!((s.raw_default().mt0, s.raw_default().mt1), (64, n as u32));
            let starts = s.batched_persistent_starts();
            let tiles: Vec<(u32, u32, u32, u32)> =
                starts.iter().map(|c| (c.mt0, c.mt1, c.pk, c.pw)).collect();
            assert_eq!(tiles, [(128, 128, 1, 1), (128, 256, 1, 1)], "{n} {t:?}");
            for c in &starts {
                s.check(c).unwrap();
                assert!(s.extra_starts().contains(c), "{}", c.name());
            }
        }
        // One GEMM of the same shape, or a batch whose default is not the single N tile: none.
        let one = Space::for_problem(&GemmProblem::new(512, 512, 512), &h200);
        assert!(one.batched_persistent_starts().is_empty());
        let mut small = GemmProblem::new(256, 256, 256);
        small.batch = 64;
        small.fill_defaults();
        assert!(Space::for_problem(&small, &h200)
            .batched_persistent_starts()
            .is_empty());
    }
}
