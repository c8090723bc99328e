//! Starts for problems whose default tiles fill the compute units poorly (well under one
//! wave, or a last wave mostly idle) and whose time is therefore set by how many compute
//! units work, not by how fast each one does: the problem cut into about one wave of
//! workgroups the way cuBLASLt cuts it there (its kernel names give the tiles, and its grids
//! the cut).
//!
//! - N just past a tile (129 to 512 columns, a few thousand rows): N in two equal tiles run as
//!   pairs of workgroups along N that share their A tile by multicast (ClusterN = 2), so A is
//!   read from L2 once per row of tiles, on 128 or 64 rows and with K split where the pairs
//!   alone leave compute units idle ([`Space::n_pair_start`]).
//! - A few tiles each way with a moderate K (640x640x5120, 768x768x3072): 64-row tiles of the
//!   width whose count fills one wave best, with one and with two 128-byte rows of K a stage,
//!   and wider ones split in two ([`Space::few_tile_wave_starts`]); where B is N-major, also
//!   whole K at the best fill and tiles of whole 128-byte chunks of B's rows split two to
//!   four ways; where K is long and B K-major, the 64-row tile whose width cuts N evenly,
//!   persistent ([`Space::few_tile_even_start`]).
//! - N past 128 with many rows (12288x300x2048; 12288x224x4096 on each half of N; past 512
//!   columns on parts of at most 256): one wave of 192-row tiles on three warpgroups along M,
//!   each instruction as wide as the tile ([`Space::three_warpgroup_start`]).
//!
//! Widths along an N-major B go in steps of 32 (`Space::n_step`); an operand whose rows are
//! aligned to 16 bytes only is copied into aligned rows first, as the other starts' twins do.
//!
//! All are starts beside the default, which the search measures in its first batch and
//! `bench` in its default set; nothing here changes the default itself.

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{split_in_kernel_tile, tile_count, two_line_depth, wave_fill, Space};

/// K steps each split of a start streams at least (a step: one 128-byte row of K per operand
/// row); below that a split's prologue and the partial sums cost more than its streaming saves.
const MIN_STEPS_PER_SPLIT: i64 = 16;

impl Space {
    /// N of 129 to 512 columns on the warpgroup path where the pairs' tiles make about one
    /// wave: two N tiles of half of N (rounded up to a step of `Space::n_step`) in clusters
    /// of two along N sharing A, the producer warp loading as deep as fits, the two tiles of a
    /// row of A side by side (WorkGroupMapping 1). The rows and the split: the smallest split
    /// (1, 2 or 4, summed in the kernel) for which 128-row or else 64-row tiles give two
    /// thirds to all of one workgroup per compute unit. Pairs that cannot share A (an M- or
    /// N-major tile whose chunks do not divide among two) start unclustered. H200, kernel
    /// against kernel, same call (cuBLASLt in brackets, which runs the same cut on 72- and
    /// 80-column tiles in pairs):
    /// 8192x136x8192 on 128x80 in pairs 41.8 us against 42.9 for 64x144 and 49.8 for
    /// 128x144 [39.8]; 2048x160x8192 on 64x80 in pairs split in two 19.3 against 20.3 for
    /// 64x160 split in four and 29.0 for 128x144 split in four [18.0]; 4096x257x4096 on 64x144
    /// in pairs 24.0 against 28.8 for the default's 64x272 [22.8]; 4096x129x4096 on 64x80 in
    /// pairs 19.9 against 20.9 unpaired (64x144 unsplit, not this start, ran 18.1) [15.5].
    pub fn n_pair_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let widest = i64::from(constraints::MAX_WGMMA_N);
        if !constraints::is_wgmma(&start) || p.n <= 128 || p.n > 2 * widest {
            return None;
        }
        let mt1 = self.n_part_width(2);
        let cus = self.hw.compute_units.max(1) as i64;
        let (split, mt0) = [1, 2, 4]
            .into_iter()
            .flat_map(|s| [(s, 128), (s, 64)])
            .find(|&(s, mt0)| {
                let workgroups = tile_count(p, mt0, mt1) * s;
                workgroups <= cus && workgroups * 3 >= cus * 2
            })?;
        if p.k < split * MIN_STEPS_PER_SPLIT * start.depth_u as i64 {
            return None;
        }
        // An operand whose rows are aligned to 16 bytes only is copied into aligned rows
        // first (the twin the other starts get, Space::packed_twins): 8192x136x8192 TT (ldb =
        // 136) ran 47.6 us on these pairs with B copied against 95.1 unpaired in place [51.8].
        let prefs = [
            one_wave_tile(mt0, mt1, split).as_slice(),
            &[(ParamId::PackUnaligned, i64::from(self.twin_copies()))],
        ]
        .concat();
        self.deepest_along_n_clusters(&prefs, &[2, 1])
    }

    /// The start of `prefs` as deep as fits in clusters along N of the first of `sizes` (each
    /// a ClusterN, largest first) for which such a start is valid.
    pub(super) fn deepest_along_n_clusters(
        &self,
        prefs: &[(ParamId, i64)],
        sizes: &[i64],
    ) -> Option<KernelConfig> {
        sizes.iter().find_map(|&cluster| {
            let space =
                self.with_deepest_pipeline(&[prefs, &[(ParamId::ClusterN, cluster)]].concat())?;
            Some(space.raw_default())
        })
    }

    /// N past 128 columns where 192-row tiles make one wave that is fuller than the 128-row
    /// tiles' last one: three warpgroups along M (WavesM 12, a 64-row slice each, the
    /// instruction's N the whole tile width) on all of N, or on each half of it past 256 or
    /// where all of it makes too few tiles, or past 512 on the fewest parts of at most 256
    /// (widths in steps of `Space::n_step`; 1536x4096x1536 on 192x256, 128 tiles, ran 31.7 us
    /// in bench's default set against 31.9 for 128x192 before [31.1-31.2], H200), the
    /// producer warp where it fits ([`Space::three_warpgroup_tile`]), as deep as fits.
    /// 24576x208x4096 on 192x208 without the producer warp (four stages) 67.2 us against
    /// 102.2 for the best start before it (128x128, persistent) [62.0; cuBLASLt runs 192x208
    /// tiles there]. cuBLASLt cuts these the same way (12288x300x2048:
    /// `nvjet_sm90_tst_192x160_64x4_1x2`, 128 workgroups; 12288x224x4096:
    /// `nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB`, 128). On 12288x224x4096 the halves
    /// (192x112, 128 tiles) ran 37.2 us against 42.6 for the 128x224 the starts ran before
    /// (96 tiles) [37.3].
    /// Two warpgroups side by side along N on the same tiles each read all of A and issue
    /// narrower instructions, which the shared memory cannot feed as fast. H200, kernel
    /// against kernel, same call (cuBLASLt in brackets): 12288x300x2048 on 192x160 28.1 us
    /// against 35.5 on two warpgroups along N [25.8]; 12288x300x8192 88.8 against 106.1
    /// [84.9]; 12288x320x4096 NN 46.7 against 57.7 [51.9].
    pub fn three_warpgroup_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let fewest = self.three_warpgroup_parts()?;
        // All of N where 192-row tiles on it fill the wave, else each half of it; past 512
        // columns, the fewest parts of at most 256.
        let cuts: &[i64] = if fewest == 1 { &[1, 2] } else { &[fewest] };
        let whole = self.n_part_width(fewest);
        cuts.iter().find_map(|&parts| {
            let mt1 = self.n_part_width(parts);
            let tiles = tile_count(p, 192, mt1);
            let rows_128 = wave_fill(tile_count(p, 128, mt1), &self.hw)
                .max(wave_fill(tile_count(p, 128, whole), &self.hw));
            if tiles > self.hw.compute_units as i64 || wave_fill(tiles, &self.hw) <= rows_128 {
                return None;
            }
            self.three_warpgroup_tile(mt1)
        })
    }

    /// The 192-row tile of `mt1` columns on three warpgroups the 192-row starts run:
    /// data-parallel, the producer warp where its registers fit beside them (not on 192x208
    /// and wider: 416 threads would get 128 registers each), as deep as fits.
    pub(super) fn three_warpgroup_tile(&self, mt1: i64) -> Option<KernelConfig> {
        [1, 0].into_iter().find_map(|pw| {
            let prefs = [
                one_wave_tile(192, mt1, 1).as_slice(),
                &[(ParamId::ProducerWarp, pw)],
            ]
            .concat();
            Some(self.with_deepest_pipeline(&prefs)?.raw_default())
        })
    }

    /// A few tiles each way (fewer 128x128 tiles than half the compute units, M and N past
    /// 128) and K of 16 steps or more: 64-row tiles of the width (32 to 256 in steps of
    /// `Space::n_step`) whose count fills one wave best (the narrowest of equals), whole K;
    /// split in two only where no unsplit width fills two thirds of the compute units; the
    /// producer warp, as deep as fits. The default's 128x256 tiles leave most compute units
    /// idle there and its split is for long K only. H200, kernel against kernel, same call
    /// (cuBLASLt in brackets, its tiles 64x64, 96x64 and 64x32): 640x640x5120 on 64x64 (100
    /// tiles) 15.7 us against 53.8 for the default [15.7]; 768x768x3072 on 64x96 13.2 against
    /// 35.5 [11.6]; 512x512x4096 on 64x32 13.0 against 62.9 (64x64 split in two, the long-K
    /// split start's tile, 12.2) [11.5].
    pub fn few_tile_wave_start(&self) -> Option<KernelConfig> {
        Some(
            self.with_deepest_pipeline(&self.few_tile_wave_tile(None)?)?
                .raw_default(),
        )
    }

    /// The few-tile start; the same tile taking two 128-byte rows of K a stage (DepthU
    /// doubled, as deep as fits); and, where the start runs whole K, the 64-row tiles that
    /// fill one wave best split in two (wider tiles, each workgroup taking in fewer rows of K
    /// in all). Which streams fastest depends on the shape and is measured. H200, same call
    /// (cuBLASLt in brackets): 128 k a stage won on 640x640x5120 (64x64, 15.2 us against
    /// 15.9 [15.5]), 768x768x3072, 512x512x4096, 1024x512x8192, 384x768x6144, 896x896x4096
    /// (64x112, 16.8 against 19.1 [15.7]), 1024x768x4096 and 640x1280x2048, and lost on
    /// 512x1024x8192 NN (27.3 against 26.1), where 64x128 split in two ran 20.9 [19.5].
    /// Where B is N-major the whole-K tile joins the split one: bench's default set, one call
    /// (cuBLASLt, which runs 64x64 tiles of 13 stages there, in brackets): 512x640x4096 TT
    /// 15.2 -> 13.3 us on 64x64 [12.0-12.4], NT 16.0 -> 13.3 [12.2-12.4]; 512x640x8192 TT
    /// 25.2 -> 21.3 [15.9-16.0]; 384x896x4096 NT 15.1 -> 13.2 [12.3-12.5]; 384x768x2048 NT
    /// 10.9 -> 9.2 [8.7-9.1]. With B K-major it took a better start's place (384x384x8192 NN:
    /// 14.0 -> 15.5 [15.0]). There too the tiles of whole 128-byte chunks of B's rows split
    /// in up to four follow ([`Space::few_tile_chunked_split`]).
    pub fn few_tile_wave_starts(&self) -> Vec<KernelConfig> {
        let Some(tile) = self.few_tile_wave_tile(None) else {
            return Vec::new();
        };
        let depth = two_line_depth(&self.problem);
        let deep = [tile.as_slice(), &[(ParamId::DepthU, depth)]].concat();
        let split = self.few_tile_wave_tile(Some(2)).filter(|two| two != &tile);
        // Where B is N-major in LDS and the start splits K (whole K fills less than two
        // thirds of the wave), the 64-row tiles that fill it best with whole K too, from half
        // a wave: 64 columns there are one 128-byte chunk a row, where the split's wider tiles
        // (96 columns) stream in 64-byte ones.
        let n_major = self.n_step() == 32;
        let whole = n_major
            .then(|| self.few_tile_wave_tile(Some(1)))
            .flatten()
            .filter(|one| one != &tile);
        let chunked = n_major.then(|| self.few_tile_chunked_split()).flatten();
        [Some(tile), Some(deep), split, whole, chunked]
            .iter()
            .flatten()
            .filter_map(|prefs| Some(self.with_deepest_pipeline(prefs)?.raw_default()))
            .collect()
    }

    /// Where the few-tile starts apply (the caller, [`Space::few_tile_wave_starts`], has
    /// checked) and B is N-major in LDS, their 64-row tiles in whole 128-byte chunks
    /// of B's rows (64 to 256 columns in steps of 64) with K split two to four ways in the
    /// kernel: the fewest splits whose widest count of workgroups, up to one a compute unit,
    /// fills at least 85% of them (the narrowest width of equals), each split streaming at
    /// least MIN_STEPS_PER_SPLIT steps. cuBLASLt cuts these so
    /// (`nvjet_sm90_tst_64x128_64x8_4x1_v_bz_splitK` on 512x640x8192 TT, 120 workgroups:
    /// 64x128 tiles in three, its reduction in a kernel of its own). H200, kernel against
    /// kernel, one call (cuBLASLt in brackets): 512x640x8192 TT on 64x128 in three 18.0 us
    /// against 21.4 on whole-K 64x64 and 25.2 for the split start's 64x96 in two [15.7];
    /// 384x896x8192 NT 19.1 against 21.6 [16.7]. Bench's default set with this and the
    /// whole-K tile against neither, one call, 46 NT and TT GEMMs whose sets they change
    /// (M and N of 384 to 1280, K of 2048 to 8192): 1.028x faster (geometric mean), 11 by more
    /// than 2%, none slower by more than 0.3 us; 512x640x8192 NT 23.5 -> 17.8 [15.3-15.5],
    /// 640x512x8192 NT 21.4 -> 17.6 [15.5-15.6], 896x384x8192 TT 20.6 -> 17.8 [16.9-17.2].
    fn few_tile_chunked_split(&self) -> Option<Vec<(ParamId, i64)>> {
        let (cus, steps) = self.split_room();
        (2..=4)
            .filter(|&split| steps >= split * MIN_STEPS_PER_SPLIT)
            .find_map(|split| {
                let (workgroups, width) =
                    self.fullest_thin_width((1..=4).map(|i| i * 64), split)?;
                (workgroups * 100 >= cus * 85).then(|| one_wave_tile(64, width, split))
            })
    }

    /// Of 64-row tiles of `widths` with K split `split` ways, the most workgroups up to one a
    /// compute unit and, of widths that make as many, the narrowest (the fewest idle columns):
    /// (workgroups, width).
    fn fullest_thin_width(
        &self,
        widths: impl Iterator<Item = i64>,
        split: i64,
    ) -> Option<(i64, i64)> {
        let cus = self.hw.compute_units.max(1) as i64;
        widths
            .map(|w| (tile_count(&self.problem, 64, w) * split, -w))
            .filter(|&(workgroups, _)| workgroups <= cus)
            .max()
            .map(|(workgroups, w)| (workgroups, -w))
    }

    /// The compute units and the default's K steps that the few-tile splits are sized by.
    fn split_room(&self) -> (i64, i64) {
        let steps = self.problem.k / self.raw_default().depth_u.max(1) as i64;
        (self.hw.compute_units.max(1) as i64, steps)
    }

    /// Where the few-tile starts apply, the swapped tile of 96 rows of M by 64 columns of N
    /// (the instruction's 64 rows along N), two 128-byte rows of K a stage, K split in two
    /// where the tiles are at most half the compute units, as deep as fits. It follows the
    /// N-fit starts in [`Space::extra_starts`], so that bench's default set keeps those
    /// (4096x200x14336 lost its best kernel, 64x104, when this start came before them).
    /// cuBLASLt runs this tile there (`nvjet_sm90_tst_96x64_64x10_2x4`, split in two on
    /// 576x512x7168), and it outran the unswapped tile of the same count. H200, kernel
    /// against kernel, one call (cuBLASLt in brackets): 768x768x3072 on 96x64 12.7 us
    /// against 13.5 on 64x96 [11.8]; 576x512x7168 (DeepSeek-V3's KV down-projection at 512
    /// tokens) on 96x64 split in two 16.2 against 17.1 for the best unswapped start, 64x48
    /// [15.1].
    /// An M-major A (NN, NT) is read in chunks of 32 rows of 64 bytes, which the tensor
    /// memory accelerator fetches slowly: there clusters of four along N (two where the
    /// tiles along N pair up only or the workgroups pass three quarters of the compute units)
    /// share it, each workgroup loading a quarter of every chunk's K. 768x768x4096, same call: NT
    /// 15.4 us in fours against 18.1 unclustered [13.7], NN 15.6 against 18.5 [13.9]; with a
    /// K-major A fours gain nothing (TN 15.6 against 15.7 [13.2], TT 15.3 against 15.0
    /// [13.1]).
    pub fn few_tile_swapped_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let (cus, steps) = self.swapped_few_tiles()?;
        let tiles = tile_count(p, 96, 64);
        let split = if tiles * 2 <= cus && steps >= 2 * MIN_STEPS_PER_SPLIT {
            2
        } else {
            1
        };
        let depth = two_line_depth(p);
        let prefs = [
            one_wave_tile(96, 64, split).as_slice(),
            &[
                (ParamId::SwapAB, 1),
                (ParamId::WavesM, 4),
                (ParamId::DepthU, depth),
            ],
        ]
        .concat();
        // Clusters of four must each find four free compute units in one GPU processing
        // cluster: 96 workgroups in fours ran in one wave on an H200, 128 in two (1024x1024x8192
        // on 64x128 tiles 53.2 us against 37.5 unclustered), 128 in pairs in one (36.5).
        let clusters: &[i64] = if p.k_contiguous(true) {
            &[1]
        } else if tiles * split * 4 <= cus * 3 {
            &[4, 2, 1]
        } else {
            &[2, 1]
        };
        self.deepest_along_n_clusters(&prefs, clusters)
    }

    /// Where the few-tile starts apply and the space swaps A and B, the compute units and the
    /// default's K steps the swapped few-tile starts size their splits by.
    fn swapped_few_tiles(&self) -> Option<(i64, i64)> {
        if self.few_tile_wave_tile(None).is_none() || !self.domain(ParamId::SwapAB).contains(1) {
            return None;
        }
        Some(self.split_room())
    }

    /// Where the few-tile starts apply, the swapped tile of 96 rows of M by 128 columns of N
    /// (two of the instruction's 64-row slices along N) with K split two to four ways in the
    /// kernel, the most workgroups up to one a compute unit, where they fill 85% of them and
    /// each split streams MIN_STEPS_PER_SPLIT steps or more. Against the 96x64 tile it reads
    /// each row of A once per 128 columns, not 64. cuBLASLt splits such problems on tiles of
    /// 128 columns too (`nvjet_sm90_tst_144x128_64x6_1x2_h_bz_splitK`, 22 x 2 tiles in three,
    /// on 3072x256x24576). H200, kernel against kernel, one call (cuBLASLt in brackets):
    /// 3072x256x24576 on 96x128 in two 60.0 us against 68.4 for the best of bench's default set
    /// (64x128, whole K) and 69.6 on 96x64 whole K [59.6]; 144x128 in three 63.6.
    pub fn few_tile_swapped_split_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let (cus, steps) = self.swapped_few_tiles()?;
        let tiles = tile_count(p, 96, 128);
        let split = (2..=4)
            .filter(|&s| tiles * s <= cus && steps >= s * MIN_STEPS_PER_SPLIT)
            .max()?;
        if tiles * split * 100 < cus * 85 {
            return None;
        }
        let prefs = [
            one_wave_tile(96, 128, split).as_slice(),
            &[(ParamId::SwapAB, 1), (ParamId::WavesM, 4)],
        ]
        .concat();
        Some(self.with_deepest_pipeline(&prefs)?.raw_default())
    }

    /// Where the few-tile starts apply, B is K-major (TN, NN) and N is past 256 (narrower N is
    /// the N-fit and pair starts'): the persistent 64-row tile whose width (past 64, up to
    /// 128, in steps of `Space::n_step`) leaves the fewest idle columns of N, the narrowest of
    /// equals, with two 128-byte rows of K a stage, as deep as fits, where its tiles make half
    /// a wave to one. Few tiles with a long K stream their operands from L2, (64 + width) x K
    /// of them into every workgroup, and there the most workgroups (the few-tile start's
    /// width) is not the fastest cut: a partial last tile costs more than its extra
    /// workgroups save. H200, kernel against kernel, one call (cuBLASLt in brackets):
    /// 768x768x4096 TN on 64x96 14.7 us, on 64x88 15.7, 64x80 16.7 (the few-tile start's
    /// width), 64x72 17.0, 64x104 18.7, 64x112 16.9, 64x128 17.1 [13.2]; NN 14.2 against
    /// 16.7 on 64x80 [13.9]; 1024x768x4096 15.5 against 27.7 on 64x80 [19.6]; 768x768x3072
    /// 12.4 against 13.6 [11.6]. The persistent kernel ran these tiles 0-0.5 us faster than
    /// the data-parallel one. Where B is N-major (NT, TT) the
    /// swapped start's 96x64 runs faster (768x768x4096 TT 14.9 us against 18.2 on 64x96).
    pub fn few_tile_even_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        if self.few_tile_wave_tile(None).is_none() || !p.k_contiguous(false) || p.n <= 256 {
            return None;
        }
        let cus = self.hw.compute_units.max(1) as i64;
        let step = self.n_step();
        let mt1 = (64 / step + 1..=128 / step)
            .map(|i| i * step)
            .filter(|&w| {
                let tiles = tile_count(p, 64, w);
                tiles <= cus && tiles * 2 >= cus
            })
            .min_by_key(|&w| ((p.n + w - 1) / w * w - p.n, w))?;
        let prefs = [
            split_in_kernel_tile(64, mt1, 1).as_slice(),
            &[
                (ParamId::WorkGroupMapping, 1),
                (ParamId::PersistentKernel, 1),
                (ParamId::GlobalSplitUAlgorithm, 1),
                (ParamId::DepthU, two_line_depth(p)),
            ],
        ]
        .concat();
        Some(self.with_deepest_pipeline(&prefs)?.raw_default())
    }

    /// Where B is N-major and read in place (NT, TT), N past 256: the 64-row tiles whose width
    /// (128 to 256 in whole 64-column chunks, the widest swizzle) makes the most tiles of one
    /// wave, where they make half a wave to one and K takes 16 steps or more; data-parallel
    /// (WorkGroupMapping 2) and persistent (4), one warpgroup, a 128-byte row of K a stage,
    /// as deep as fits. cuBLASLt runs 160x64 and 64x96 tiles in clusters there, which
    /// ours do not match (clusters of ours run slower, docs/performance.md); the wave-fit and
    /// swapped one-wave starts' 128x96 and 160x64 in pairs ran 3-8% slower than these.
    /// H200, kernel against kernel, one call (cuBLASLt in brackets): 1536x768x2048 NT on 64x192
    /// persistent 13.9 us, data-parallel 14.2, 128x96 14.9 [12.2]; 1280x1024x2048 NT 14.5
    /// persistent, 15.1 on 128x96, 15.7 on 160x64 in pairs [12.7]; 1152x1024x2048 NT 14.4
    /// against 14.8 [12.7]; 896x768x2048 NT on 64x128 data-parallel 11.9, persistent 12.2
    /// [9.4]; 768x1024x8192 NT 28.8 data-parallel, 32.8 persistent, 31.8 on 128x64 [23.1].
    pub fn few_tile_n_major_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let cus = self.hw.compute_units.max(1) as i64;
        if !constraints::is_wgmma(&start)
            || self.n_step() != 32
            || p.m <= 128
            || p.n <= 256
            || p.k < MIN_STEPS_PER_SPLIT * start.depth_u as i64
        {
            return Vec::new();
        }
        let Some(mt1) = [128, 192, 256]
            .into_iter()
            .filter(|&w| {
                let tiles = tile_count(p, 64, w);
                tiles <= cus && tiles * 2 >= cus
            })
            .max_by_key(|&w| (tile_count(p, 64, w), -w))
        else {
            return Vec::new();
        };
        let depth = 128 / p.a_type.bytes() as i64;
        [(0, 2), (1, 4)]
            .into_iter()
            .filter_map(|(persistent, wgm)| {
                let prefs = [
                    split_in_kernel_tile(64, mt1, 1).as_slice(),
                    &[
                        (ParamId::WorkGroupMapping, wgm),
                        (ParamId::PersistentKernel, persistent),
                        (ParamId::GlobalSplitUAlgorithm, 1),
                        (ParamId::DepthU, depth),
                    ],
                ]
                .concat();
                Some(self.with_deepest_pipeline(&prefs)?.raw_default())
            })
            .collect()
    }

    /// The preferences of the few-tile start ([`Space::few_tile_wave_start`]) where it
    /// applies; with `split`, those of the 64-row tiles that fill one wave best with K split
    /// that many ways.
    fn few_tile_wave_tile(&self, split: Option<i64>) -> Option<Vec<(ParamId, i64)>> {
        let p = &self.problem;
        let start = self.raw_default();
        let cus = self.hw.compute_units.max(1) as i64;
        if !constraints::is_wgmma(&start)
            || p.m <= 128
            || p.n <= 128
            || tile_count(p, 128, 128) * 2 >= cus
            || p.k < MIN_STEPS_PER_SPLIT * start.depth_u as i64
        {
            return None;
        }
        let step = self.n_step();
        let best = |split: i64| {
            self.fullest_thin_width((2..=16).map(|i| i * 16).filter(|w| w % step == 0), split)
        };
        let (split, (workgroups, mt1)) = match split {
            Some(s) => (s, best(s)?),
            None => [1, 2]
                .into_iter()
                .filter_map(|s| Some((s, best(s)?)))
                .find(|&(s, (workgroups, _))| s == 2 || workgroups * 3 >= cus * 2)?,
        };
        if workgroups * 2 < cus || p.k < split * MIN_STEPS_PER_SPLIT * start.depth_u as i64 {
            return None;
        }
        Some(one_wave_tile(64, mt1, split))
    }

    /// The steps of N tile widths the one-wave starts take: the instruction's 8 where B is
    /// K-major in LDS, or 32 where it is N-major (read in place), whose tiles are loaded in
    /// chunks of the largest of 64, 32 or 16 columns dividing the width, and 16-column chunks
    /// (32-byte rows) stream far slower. H200, same call (cuBLASLt in brackets): 768x768x4096
    /// NT on 64x80 32.1 us, on 64x96 18.3 [13.3]; TT 32.0 and 18.7 [13.1]; TN 18.4 on 64x80.
    /// K-major, N in equal parts rounded to 8 rather than 16 (bench's default set, each start
    /// the only change): 10240x200x2560 on 192x104 23.6 against 25.2 on 192x112 [23.4], e4m3
    /// 15.6 against 16.3 [14.8]; 4096x200x14336 45.7 against 46.0 [44.3]; 8192x136x8192 TT
    /// (B copied K-major) on 128x72 46.5 against 47.5 on 128x80 [52.0].
    pub(super) fn n_step(&self) -> i64 {
        let copied = self.twin_copies() & constraints::PACK_B != 0;
        if self.problem.k_contiguous(false) || copied {
            8
        } else {
            32
        }
    }

    /// The fewest equal parts of N that tiles on three warpgroups along M take: all of N up
    /// to the widest warpgroup tile, each half of it up to 512, past that parts of at most
    /// 256 columns. `None` where the space offers no three warpgroups (Space::for_problem:
    /// the warpgroup path with N past 128 only), which bounds the 192-row starts
    /// ([`Space::three_warpgroup_start`], [`Space::three_warpgroup_waves_start`]) to it.
    pub(super) fn three_warpgroup_parts(&self) -> Option<i64> {
        let three = i64::from(constraints::THREE_WARPGROUPS);
        if !constraints::is_wgmma(&self.raw_default())
            || !self.domain(ParamId::WavesM).contains(three)
        {
            return None;
        }
        let widest = i64::from(constraints::MAX_WGMMA_N);
        Some((self.problem.n + widest - 1) / widest)
    }

    /// The tile width that cuts N into `parts` equal parts, rounded up to a step of
    /// [`Space::n_step`].
    pub(super) fn n_part_width(&self, parts: i64) -> i64 {
        let step = self.n_step();
        ((self.problem.n + parts - 1) / parts + step - 1) / step * step
    }

    /// The width of `rows`-row tiles on N in as many equal parts ([`Space::n_part_width`]) as
    /// one wave holds beside M's tile rows, where that wave is at least `min_fill_percent`
    /// full; `None` where it is not, or where M's tile rows alone fill more than a wave.
    pub(super) fn one_wave_width(&self, rows: i64, min_fill_percent: i64) -> Option<i64> {
        let p = &self.problem;
        let cus = self.hw.compute_units.max(1) as i64;
        let parts = cus / ((p.m + rows - 1) / rows);
        if parts == 0 {
            return None;
        }
        let width = self.n_part_width(parts);
        let tiles = tile_count(p, rows, width);
        (tiles <= cus && tiles * 100 >= cus * min_fill_percent).then_some(width)
    }
}

/// The data-parallel warpgroup tile the one-wave starts run ([`split_in_kernel_tile`]), with
/// the tiles along N of a row of A side by side (WorkGroupMapping 1).
pub(super) fn one_wave_tile(mt0: i64, mt1: i64, split: i64) -> Vec<(ParamId, i64)> {
    [
        split_in_kernel_tile(mt0, mt1, split).as_slice(),
        &[(ParamId::WorkGroupMapping, 1)],
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::GsuAlgo;

    fn h200(m: i64, n: i64, k: i64) -> Space {
        Space::for_problem(
            &GemmProblem::new(m, n, k),
            &HwSpec::by_name("H200").unwrap(),
        )
    }

    #[test]
    fn few_tiles_of_long_k_start_on_swapped_96x128_tiles_split_to_fill_the_wave() {
        // 32 x 2 tiles in two: 128 workgroups.
        let s = h200(3072, 256, 24576);
        let c = s.few_tile_swapped_split_start().unwrap();
        assert_eq!((c.mt0, c.mt1, c.sab, c.gsu), (96, 128, 1, 2));
        assert_eq!(c.gsu_algo, GsuAlgo::SingleKernel);
        assert!(s.is_valid(&c));
        // K too short to split: 24 steps.
        assert_eq!(h200(3072, 256, 1536).few_tile_swapped_split_start(), None);
        // A wave of tiles already: not a few-tile problem.
        assert_eq!(h200(8192, 1024, 8192).few_tile_swapped_split_start(), None);
    }

    #[test]
    fn n_just_past_a_tile_starts_on_two_halves_in_pairs_sharing_a() {
        // (M, N, K) -> (rows, columns, split): the smallest split first, then the taller tile.
        for ((m, n, k), want) in [
            ((8192, 136, 8192), (128, 72, 1)),
            ((4096, 129, 4096), (64, 72, 1)),
            ((2048, 160, 8192), (64, 80, 2)),
            ((4096, 257, 4096), (64, 136, 1)),
            ((1024, 500, 16384), (64, 256, 4)),
        ] {
            let s = h200(m, n, k);
            let c = s.n_pair_start().unwrap_or_else(|| panic!("{m}x{n}x{k}"));
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0 as i64, c.mt1 as i64, c.gsu as i64),
                want,
                "{m}x{n}x{k}"
            );
            assert_eq!((c.cn, c.pw, c.wgm, c.pk), (2, 1, 1, 0), "{m}x{n}x{k}");
            if c.gsu > 1 {
                assert_eq!(c.gsu_algo, GsuAlgo::SingleKernel);
            }
            assert!(s.extra_starts().contains(&c), "{m}x{n}x{k}");
        }
        // N a tile or less, N past two 256-column tiles, many waves of pairs, K too short for
        // the split: none.
        for (m, n, k) in [
            (4096, 128, 4096),
            (4096, 513, 4096),
            (16032, 260, 16384),
            (2048, 160, 1024),
        ] {
            assert_eq!(h200(m, n, k).n_pair_start(), None, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn n_pairs_share_a_in_every_layout_and_type_the_warpgroup_path_runs() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 144 columns in two halves of 72: 72 where B is K-major, 96 (two 32-column chunks,
        // Space::n_step) where it is N-major.
        for (ta, tb, mt1) in [
            (Trans::N, Trans::N, 72),
            (Trans::N, Trans::T, 96),
            (Trans::T, Trans::T, 96),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(8192, 144, 8192, ta, tb), &hw);
            let c = s.n_pair_start().expect("a pair start");
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.cn), (128, mt1, 2), "{ta:?}{tb:?}");
        }
        let mut p = GemmProblem::new(4096, 300, 8192);
        (p.a_type, p.b_type) = (DataType::F8, DataType::F8);
        let s = Space::for_problem(&p, &hw);
        let c = s.n_pair_start().expect("e4m3 pairs");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.cn), (64, 152, 2));
    }

    #[test]
    fn unaligned_or_n_major_b_shapes_the_one_wave_starts() {
        let hw = HwSpec::by_name("H200").unwrap();
        // TT with ldb = 136 (272-byte rows): the pairs copy B into aligned rows first.
        let s = Space::for_problem(
            &GemmProblem::with_layout(8192, 136, 8192, Trans::T, Trans::T),
            &hw,
        );
        let c = s.n_pair_start().expect("pairs");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.pu), (128, 72, constraints::PACK_B));
        // The N-fit start gets its twin with B copied too.
        let fit = s.n_fit_start().expect("N fit");
        assert!(s.packed_twins().contains(&KernelConfig {
            pu: constraints::PACK_B,
            ..fit
        }));
        // Aligned: nothing copied.
        let s = Space::for_problem(
            &GemmProblem::with_layout(8192, 144, 8192, Trans::T, Trans::T),
            &hw,
        );
        assert_eq!(s.n_pair_start().expect("pairs").pu, 0);
        // An N-major B read in place takes widths in steps of 32: 768 in eight tiles of 96,
        // not ten of 80 (16-column chunks), as TN takes.
        for (tb, want) in [(Trans::T, 96), (Trans::N, 80)] {
            let s =
                Space::for_problem(&GemmProblem::with_layout(768, 768, 4096, Trans::N, tb), &hw);
            let c = s.few_tile_wave_start().expect("few tiles");
            s.check(&c).unwrap();
            assert_eq!((c.mt1, c.gsu), (want, 1), "{tb:?}");
        }
        let s = Space::for_problem(
            &GemmProblem::with_layout(4096, 320, 4096, Trans::N, Trans::T),
            &hw,
        );
        assert_eq!(s.n_pair_start().expect("pairs").mt1, 160);
        // ldb = 264 (528-byte rows): B is copied, K-major, and the halves round to 8.
        let s = Space::for_problem(
            &GemmProblem::with_layout(4096, 264, 4096, Trans::N, Trans::T),
            &hw,
        );
        let c = s.n_pair_start().expect("pairs");
        assert_eq!((c.mt1, c.pu), (136, constraints::PACK_B));
    }

    #[test]
    fn few_tiles_each_way_start_on_64_row_tiles_that_fill_one_wave() {
        for ((m, n, k), want) in [
            ((640, 640, 5120), (64, 1, 112, 1)),
            ((768, 768, 3072), (80, 1, 160, 1)),
            ((512, 512, 4096), (32, 1, 64, 2)),
            ((512, 1024, 8192), (64, 1, 128, 1)),
            ((384, 384, 8192), (48, 2, 0, 2)),
        ] {
            let s = h200(m, n, k);
            let c = s
                .few_tile_wave_start()
                .unwrap_or_else(|| panic!("{m}x{n}x{k}"));
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1 as i64, c.gsu as i64), (64, want.0, want.1));
            assert_eq!((c.pw, c.wgm), (1, 1));
            assert!(s.extra_starts().contains(&s.tile_order(&c)), "{m}x{n}x{k}");
            // Its twin takes 256 bytes of K a stage; where it runs whole K, the tiles that
            // fill one wave split in two follow.
            let all = s.few_tile_wave_starts();
            assert_eq!(all[0], c);
            let deep = all[1];
            assert_eq!((deep.mt0, deep.mt1, deep.depth_u), (c.mt0, c.mt1, 128));
            assert_eq!(all.len(), if c.gsu == 1 { 3 } else { 2 }, "{m}x{n}x{k}");
            if let Some(split) = all.get(2) {
                assert_eq!((split.mt0, split.gsu, split.mt1 as i64), (64, 2, want.2));
            }
            // The swapped 96x64 tile, split in two where its tiles are at most half the
            // compute units.
            let swapped = s.few_tile_swapped_start().expect("swapped");
            assert_eq!(
                (swapped.sab, swapped.mt0, swapped.mt1, swapped.depth_u),
                (1, 96, 64, 128),
                "{m}x{n}x{k}"
            );
            assert_eq!(swapped.gsu as i64, want.3, "{m}x{n}x{k}");
            for c in all.iter().chain([&swapped]) {
                s.check(c).unwrap();
                assert!(s.extra_starts().contains(&s.tile_order(c)), "{m}x{n}x{k}");
            }
        }
        // A wave of 128x128 tiles, a skinny N, K of a few steps, too few tiles even split:
        // none.
        for (m, n, k) in [
            (2048, 2048, 4096),
            (4096, 128, 4096),
            (640, 640, 512),
            (256, 256, 4096),
        ] {
            assert_eq!(h200(m, n, k).few_tile_wave_start(), None, "{m}x{n}x{k}");
            assert_eq!(h200(m, n, k).few_tile_swapped_start(), None, "{m}x{n}x{k}");
            assert!(
                h200(m, n, k).few_tile_wave_starts().is_empty(),
                "{m}x{n}x{k}"
            );
        }
    }

    /// With B N-major, where whole K fills under two thirds of the wave, the split start's
    /// tiles are joined by the 64x64 tiles that fill it best with whole K (80 of 132 on
    /// 512x640) and by the tiles of whole 128-byte chunks split to fill it; with B K-major
    /// (384x384 NN) neither joins.
    #[test]
    fn n_major_b_few_tiles_keep_a_whole_k_tile_beside_the_split() {
        for (ta, tb) in [(Trans::T, Trans::T), (Trans::N, Trans::T)] {
            let s = Space::for_problem(
                &GemmProblem::with_layout(512, 640, 4096, ta, tb),
                &HwSpec::by_name("H200").unwrap(),
            );
            let all = s.few_tile_wave_starts();
            assert_eq!((all[0].mt1, all[0].gsu), (96, 2));
            let whole = all[all.len() - 2];
            assert_eq!((whole.mt0, whole.mt1, whole.gsu), (64, 64, 1));
            // cuBLASLt's cut: 64x128 in three, 120 workgroups.
            let chunked = all[all.len() - 1];
            assert_eq!((chunked.mt0, chunked.mt1, chunked.gsu), (64, 128, 3));
            assert_eq!(chunked.gsu_algo, GsuAlgo::SingleKernel);
            for c in [whole, chunked] {
                s.check(&c).unwrap();
                assert!(s.extra_starts().contains(&s.tile_order(&c)));
            }
        }
        let nn = Space::for_problem(
            &GemmProblem::with_layout(384, 384, 8192, Trans::N, Trans::N),
            &HwSpec::by_name("H200").unwrap(),
        );
        assert!(nn.few_tile_wave_starts().iter().all(|c| c.gsu == 2));
    }

    /// Few tiles with a long K and B K-major: the persistent 64-row tile whose width cuts N
    /// into the fewest idle columns, without a stream-K twin (one wave over half full).
    #[test]
    fn few_tiles_with_b_k_major_start_on_the_width_that_cuts_n_evenly() {
        let hw = HwSpec::by_name("H200").unwrap();
        for ((m, n, k), ta, want) in [
            ((768, 768, 4096), Trans::T, 96),
            ((768, 768, 4096), Trans::N, 96),
            ((1024, 768, 4096), Trans::T, 96),
            ((640, 640, 5120), Trans::T, 80),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, k, ta, Trans::N), &hw);
            let c = s.few_tile_even_start().expect("an even cut");
            s.check(&c).unwrap();
            assert_eq!(
                (c.mt0, c.mt1 as i64, c.pk, c.gsu, c.depth_u),
                (64, want, 1, 1, 128),
                "{m}x{n}x{k}"
            );
            let starts = s.extra_starts();
            assert!(starts.contains(&s.tile_order(&c)), "{m}x{n}x{k}");
            assert!(
                !starts.contains(&KernelConfig {
                    gsu_algo: GsuAlgo::StreamK,
                    ..c
                }),
                "{m}x{n}x{k}"
            );
            // The few-tile starts stay beside it.
            for other in s.few_tile_wave_starts() {
                assert!(starts.contains(&s.tile_order(&other)), "{m}x{n}x{k}");
            }
        }
        // B N-major, N of 256 or less, a wave of 128x128 tiles: none.
        for ((m, n, k), ta, tb) in [
            ((768, 768, 4096), Trans::N, Trans::T),
            ((768, 768, 4096), Trans::T, Trans::T),
            ((4096, 200, 14336), Trans::T, Trans::N),
            ((2048, 2048, 4096), Trans::T, Trans::N),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(m, n, k, ta, tb), &hw);
            assert_eq!(s.few_tile_even_start(), None, "{m}x{n}x{k} {ta:?}{tb:?}");
        }
    }

    /// The swapped few-tile start shares an M-major A in clusters of four along N where its
    /// tiles along N come in fours and make at most three quarters of a wave, of two where
    /// in pairs, and a K-major A not at all.
    #[test]
    fn few_tile_swapped_start_clusters_an_m_major_a() {
        let hw = HwSpec::by_name("H200").unwrap();
        for (n, ta, tb, want) in [
            (768, Trans::N, Trans::T, 4),
            (768, Trans::N, Trans::N, 4),
            (640, Trans::N, Trans::N, 2),
            // 8 x 16 = 128 workgroups: fours would not all fit at once.
            (1024, Trans::N, Trans::T, 2),
            (768, Trans::T, Trans::N, 1),
            (768, Trans::T, Trans::T, 1),
        ] {
            let s = Space::for_problem(&GemmProblem::with_layout(768, n, 4096, ta, tb), &hw);
            let c = s.few_tile_swapped_start().expect("swapped");
            assert_eq!(
                (c.sab, c.mt0, c.mt1, c.cn, c.cm),
                (1, 96, 64, want, 1),
                "{n} {ta:?}{tb:?}"
            );
            s.check(&c).unwrap();
        }
    }

    #[test]
    fn a_wave_of_192_row_tiles_starts_on_three_warpgroups() {
        // (M, N, K, layout) -> columns: all of N up to 256, each half past it or where all of
        // N makes too few tiles (in steps of 32 where B is N-major in LDS).
        for ((m, n, k), (ta, tb), want) in [
            ((12288, 300, 2048), (Trans::T, Trans::N), 152),
            ((12288, 320, 4096), (Trans::N, Trans::N), 160),
            ((12288, 300, 2048), (Trans::N, Trans::T), 160),
            ((25344, 176, 4096), (Trans::T, Trans::N), 176),
            // All of N in steps of 8: 192x200 fits where 192x208 does not.
            ((24576, 200, 4096), (Trans::T, Trans::N), 200),
            // All of N makes 64 tiles, its halves 128.
            ((12288, 224, 4096), (Trans::T, Trans::N), 112),
            ((12288, 224, 4096), (Trans::N, Trans::T), 128),
        ] {
            let s = Space::for_problem(
                &GemmProblem::with_layout(m, n, k, ta, tb),
                &HwSpec::by_name("H200").unwrap(),
            );
            let c = s
                .three_warpgroup_start()
                .unwrap_or_else(|| panic!("{m}x{n}x{k}"));
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.wg), (192, want, [12, 1]), "{m}x{n}x{k}");
            assert_eq!((c.pw, c.pk, c.gsu, c.sab), (1, 0, 1, 0), "{m}x{n}x{k}");
            assert!(s.extra_starts().contains(&s.tile_order(&c)), "{m}x{n}x{k}");
        }
        // 192x208 and wider: without the producer warp, whose registers do not fit beside
        // three warpgroups there.
        let s = h200(24576, 208, 4096);
        let c = s.three_warpgroup_start().expect("one wave of 192x208");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.mt1, c.pw, c.pk), (192, 208, 0, 0));
        assert!(c.pgr >= 4, "{}", c.name());
        // 192-row tiles filling the wave worse than 128-row ones, more than a wave of them, N
        // of one 128-column tile or past two 256-column ones: none.
        for (m, n, k) in [
            (8192, 300, 2048),
            (16032, 260, 16384),
            (24576, 128, 4096),
            (4096, 600, 4096),
        ] {
            assert_eq!(h200(m, n, k).three_warpgroup_start(), None, "{m}x{n}x{k}");
        }
        // Not on the FMA path (f32), where WavesM 12 is not offered.
        let mut f32 = GemmProblem::new(12288, 300, 2048);
        (f32.a_type, f32.b_type, f32.c_type, f32.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        let s = Space::for_problem(&f32, &HwSpec::by_name("H200").unwrap());
        assert_eq!(s.three_warpgroup_start(), None);
        assert!(!s.domain(ParamId::WavesM).contains(12));
    }

    /// B N-major in place, half a wave to one of 64-row tiles: the width in whole 64-column
    /// chunks that makes the most tiles of one wave, data-parallel and persistent.
    #[test]
    fn n_major_b_on_few_tiles_starts_on_64_row_tiles_of_whole_chunks() {
        let hw = HwSpec::by_name("H200").unwrap();
        // (M, N) -> width: 1536x768 on 64x192 (96 tiles; 64x128 makes 144), 1280x1024 on
        // 64x192 (120), 896x768 on 64x128 (84).
        for ((m, n), width) in [((1536, 768), 192), ((1280, 1024), 192), ((896, 768), 128)] {
            for ta in [Trans::N, Trans::T] {
                let s =
                    Space::for_problem(&GemmProblem::with_layout(m, n, 2048, ta, Trans::T), &hw);
                let starts = s.few_tile_n_major_starts();
                let got: Vec<(u32, u32, u32, u32)> =
                    starts.iter().map(|c| (c.mt0, c.mt1, c.pk, c.wgm)).collect();
                assert_eq!(got, vec![(64, width, 0, 2), (64, width, 1, 4)], "{m}x{n}");
                for c in &starts {
                    s.check(c).unwrap();
                    assert_eq!((c.wg, c.pw, c.gsu), ([4, 1], 1, 1), "{}", c.name());
                    assert!(s.extra_starts().contains(&s.tile_order(c)), "{}", c.name());
                }
            }
        }
        // B K-major, many waves, N of one tile, or a short K: none.
        let hw_problems = [
            GemmProblem::with_layout(1536, 768, 2048, Trans::T, Trans::N),
            GemmProblem::with_layout(8192, 8192, 2048, Trans::N, Trans::T),
            GemmProblem::with_layout(4096, 256, 2048, Trans::N, Trans::T),
            GemmProblem::with_layout(1536, 768, 512, Trans::N, Trans::T),
        ];
        for p in hw_problems {
            let s = Space::for_problem(&p, &hw);
            assert!(s.few_tile_n_major_starts().is_empty(), "{}", p.label());
        }
    }
}
