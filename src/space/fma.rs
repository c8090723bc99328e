//! The FMA path (f32 inputs, no matrix instructions) in the space: its default config and
//! where its search starts.
//!
//! On NVIDIA the default runs eight waves of FFMAs on a tile picked from a few shapes by how
//! well their count fills the compute units' waves (one workgroup a compute unit: a 256x128
//! tile holds 128 accumulators a lane), with a stage depth set by how the operands reach
//! LDS: through registers (K-contiguous, written transposed) or straight in (cp.async). The
//! shapes the default does not pick but that score close to it are starts of the search.
//! Where the tiles are too few for the compute units, the default runs them as stream-K and
//! a split along K is a start; where N or M is up to 8, the default is the GEMV path.

use super::tuning_space::tile_count;
use super::{constraints, KernelConfig, ParamId, Space};
use crate::hw::Vendor;
use crate::problem::GemmProblem;

/// The NVIDIA default's tiles, each eight waves of 64x64, 64x48, 96x32 or 64x32 outputs. The
/// rates are fitted to kernel-against-kernel times on an H200 (same calls, each tile on the
/// stage depth its layout takes, NVRTC; cuBLASLt in brackets):
/// 8192x8192x1024 TN 3093.5 us on 256x128 (16 waves), 3168.8 on 128x128 (4096 tiles, two a
/// compute unit), 3489.6 on 256x96, 3699.6 on 192x128 [2767.6]; 3072x1024x3072 TN on
/// 256x96 (132 tiles) 490.5, 192x128 508.3, 256x128 (96 tiles) 554.8, 128x128 586.8 [415.2];
/// 3000x1000x2000 NT on 192x128 (128 tiles) 297.1, 256x96 316.7, 256x128 391.6, 128x128 430.0
/// [287.7]; 1152x4096x1152 NN on 128x128 (288 tiles) 343.5, 192x128 352.2, 256x96 353.9,
/// 256x128 (160 tiles, two waves) 444.5 [266.6]; 2048^3 NN 390.2 on 256x128, 391.1 on
/// 128x128, 596.1 and 618.2 on the others [342.1].
const WAVE_TILES: [WaveTile; 4] = [
    WaveTile::new(256, 128, 4, 2, 100),
    WaveTile::new(256, 96, 4, 2, 85),
    WaveTile::new(192, 128, 2, 4, 85),
    WaveTile::new(128, 128, 2, 4, 90),
];

/// The tile of [`Space::fma_stream_k_start`]: the 128x128 one of [`WAVE_TILES`], the base tile
/// the few-tile default runs as stream-K too.
const STREAM_K_TILE: WaveTile = WAVE_TILES[3];

/// One of the default's eight-wave tiles: its extents, its waves along M and N, and its FFMA
/// rate in percent of the 256x128 tile's.
#[derive(Debug, Clone, Copy)]
struct WaveTile {
    mt0: i64,
    mt1: i64,
    waves_m: i64,
    waves_n: i64,
    rate: i64,
}

impl WaveTile {
    const fn new(mt0: i64, mt1: i64, waves_m: i64, waves_n: i64, rate: i64) -> Self {
        WaveTile {
            mt0,
            mt1,
            waves_m,
            waves_n,
            rate,
        }
    }
}

/// The tile of the FMA path's few-tile splits ([`Space::fma_small_tile_split_starts`]): 64
/// rows by 128 columns, the fastest of 64x64, 128x64, 64x128 and 128x128 (each split its best
/// way) on five of six small f32 GEMMs and 6% behind 128x64 on the sixth (512^3; H200).
const SMALL_SPLIT_TILE: (i64, i64) = (64, 128);
/// The least K a split of those starts keeps: eight stages of 16.
const SMALL_SPLIT_MIN_K: i64 = 128;

/// Starts on the default's other tiles whose score is within this many percent of its.
const WAVE_START_MARGIN: i64 = 15;

/// Stream-K's cost over an even share of the outputs a compute unit, in percent: what the
/// [`Space::fma_stream_k_start`] estimate adds for the tiles' fix-ups and partial stores.
/// Fitted to kernel-against-kernel times on an H200 (the start's doc has them): the start's
/// tiles ran 1.17-1.18x the even share's estimate, against the eight-wave tiles' scores.
const STREAM_K_COST: i64 = 125;

/// (DepthU, PrefetchGlobalRead) of the eight-wave tiles: 8 k on three stages where both
/// operands go through registers, else 16 k on four ([`Space::prefer_fma`] says why).
const STAGES_THROUGH_REGISTERS: (i64, i64) = (8, 3);
const STAGES_DEEP: (i64, i64) = (16, 4);

/// Where the default copies its K-contiguous operands M- or N-major first (PackMNMajor): where
/// the copies are estimated at no more than this many percent of the multiply-adds' time
/// ([`Space::fma_pack_share`]). An operand copied so lands in LDS by cp.async, and the kernel
/// runs as NT does: H200, 4096^3 f32, kernel against kernel, NT 2662 us against TN 2899, NN
/// 2826 and TT 2922 [cuBLASLt 2651-2797], where copying both operands of 4096^3 takes about
/// 2.5%.
const PACK_DEFAULT_SHARE: f64 = 4.0;
/// Where a start of the search measures the other choice: the copies at most this share.
const PACK_START_SHARE: f64 = 15.0;
/// Where the default copies operands off the 16-byte grid onto aligned rows: the copies at
/// most this share of the multiply-adds' time. 1000x513x2047 TN (about a third) ran 95.3 us
/// copied against 101.9 in place (H200, kernel against kernel); where the copies outweigh the
/// multiply-adds the GEMM is bound by reading the operands, and the copies read them twice
/// more. Not fitted further: [`Space::fma_alignment_twin_start`] measures the other choice.
const ALIGN_COPY_SHARE: f64 = 100.0;

impl Space {
    /// Where only the FMA path applies (f32 inputs), its typical config is the default. On
    /// NVIDIA, where there are at least half a wave of 256x128 tiles: eight waves on the
    /// [`WAVE_TILES`] tile of the best [`Space::fma_wave_score`] (the first on a tie), 8 k a
    /// stage on three stages where both operands go through registers (TN: 16 k would keep
    /// 24 registers of loads in flight a lane), else 16 k on four (the cp.async copies of an
    /// M- or N-contiguous operand land without registers). H200, 4096^3 f32, kernel against
    /// kernel (cuBLASLt in brackets): TN 2948.2 us on 8 k x 3 against 2979.8 on 16 x 4
    /// [2725.5]; NN 2944.2 on 16 x 4 against 3000.3 on 8 x 3 [2672.8]; NT 2798.5 against 2990.4
    /// [2650.1]; TT 2989.6 (2982.5 on 16 x 3) against 3169.4 [2792.2]. Three or more stages
    /// is what the FMA loop's cross-stage prefetch needs.
    /// On NVIDIA, many batches of outputs up to 384x384: a tile of a batch's output
    /// ([`Space::fma_batch_tile`]).
    /// On NVIDIA with fewer tiles: the GEMV path where N or M is up to 8 (but for NN along the
    /// GEMV's rows), else
    /// eight waves on the base tile, as stream-K where they would leave compute units idle
    /// ([`Space::fma_few_tiles_shared`]).
    /// Elsewhere: a 128x128 tile on four waves of 128x32, 16 k a stage, three stages, the next
    /// k's operands read while one multiplies, padded LDS rows. Measured on an H100 before the
    /// cross-stage prefetch (4096^3 f32, cuBLASLt 2725 us in the same call): 3147 us, against
    /// 3336 us on 8 waves of 64x32 (WG2x4) and 3447 us on a 256x128 tile of 8 waves, which
    /// without the prefetch waits on its barriers. On AMD (not measured: no AMD GPU here) 8 k
    /// a stage: with 16 and a K-contiguous operand, the compilers gave 518-566 registers a lane
    /// (gfx942, gfx950; gfx90a spilled 40-120 bytes), with 8 232-254.
    pub(super) fn prefer_fma(&mut self) {
        let common = [
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::LdsSwizzle, 0),
            (ParamId::LdsPadA, 4),
            (ParamId::LdsPadB, 4),
            // 8 bytes, narrower where D's rows (or C's) start off that grid.
            (
                ParamId::StoreVectorWidth,
                self.widest_store((8 / self.problem.d_type.bytes() as i64).max(1)),
            ),
        ];
        let nvidia = self.hw.vendor == Vendor::Nvidia;
        // On NVIDIA, where the GEMV path applies (N or M up to 8), its first start, unless A
        // and B of the problem it computes (this one, or its transpose along N) both run
        // along M and N (NN there): the tile kernels spend most of their multiply-adds on
        // padding. H200, each the default alone (`tune --max-evals 1`, the winner re-timed
        // beside cuBLASLt), tiles / GEMV [cuBLASLt] us: 1x4096x4096 NT 213.7 / 22.1 [20.5],
        // 4096x1x4096 TN 66.9 / 24.4 [24.4], 4096x4x4096 TN 67.2 / 27.8 [30.5], 4096x8x4096 NT
        // 50.4 / 36.5 [52.5]. TT along (14336x4x4096 TT; 8x4096x4096 NN, its transpose) starts
        // on 32 rows of four waves (Space::gemv_starts says why); NN along is not measured.
        let along_nn = self
            .gemv_along()
            .is_some_and(|(p, _)| !p.trans_a.is_t() && !p.trans_b.is_t());
        let gemv = self.gemv_starts().into_iter().next();
        if let Some(gemv) = gemv.filter(|_| nvidia && !along_nn) {
            *self = self.preferring(ParamId::values_of(&gemv).iter());
            return;
        }
        // Where an operand's rows start off the 16-byte grid, every candidate copies the
        // operands that makes aligned (where it can) and reads as wide as the rows then allow.
        let align = self.fma_default_alignment_packs();
        let reads = |packs: i64| (ParamId::GlobalReadVectorWidth, self.fma_read_width(packs));
        let narrow = [
            (ParamId::WavesM, 1),
            (ParamId::WavesN, 4),
            (ParamId::DepthU, if nvidia { 16 } else { 8 }),
            (ParamId::PrefetchGlobalRead, 3),
            (ParamId::PackMnMajor, align),
            reads(align),
        ];
        let wide: Vec<[(ParamId, i64); 8]> = if self.fma_waves_apply() {
            let packs = self.fma_default_packs();
            self.fma_wave_tiles()
                .into_iter()
                .map(|(_, tile)| self.fma_wave_tile(tile, packs))
                .collect()
        } else {
            Vec::new()
        };
        let few: Option<Vec<(ParamId, i64)>> = self.fma_few_tiles_shared().map(|shared| {
            let mut prefs = vec![
                (ParamId::WavesM, 2),
                (ParamId::WavesN, 4),
                (ParamId::DepthU, 16),
                (ParamId::GlobalSplitU, 1),
                (ParamId::PackMnMajor, align),
                reads(align),
            ];
            if shared {
                prefs.extend([
                    (ParamId::PrefetchGlobalRead, 4),
                    (ParamId::GlobalSplitUAlgorithm, 2),
                ]);
            } else {
                prefs.push((ParamId::PrefetchGlobalRead, 3));
            }
            prefs
        });
        // Many small batches first (fma_batch.rs), then the wide tiles best first where they
        // apply, else (or where none is valid) eight waves on the few tiles there are, else
        // the narrow one.
        let batch = self.fma_batch_tile().map(|mut prefs| {
            prefs.extend([(ParamId::PackMnMajor, align), reads(align)]);
            prefs
        });
        for tiles in batch
            .as_deref()
            .into_iter()
            .chain(wide.iter().map(|t| t.as_slice()))
            .chain(few.as_deref())
            .chain([narrow.as_slice()])
        {
            let candidate = self.preferring(tiles.iter().chain(common.iter()));
            if candidate.is_valid(&candidate.raw_default()) {
                *self = candidate;
                return;
            }
        }
    }

    /// Where the eight-wave tiles do not apply on NVIDIA (fewer than half a wave of 256x128
    /// tiles), the default runs the base tile (128x128 where the problem is that large) on
    /// eight waves of 64x32, and this says whether as stream-K (GSU1S, four stages: true) or
    /// data-parallel (three stages: false). Stream-K where the tiles are fewer than nine in
    /// ten compute units and K gives every workgroup four K tiles of 16 or more: the
    /// workgroups then share the tiles' K and more compute units multiply. None where the
    /// eight-wave tiles apply, or on AMD.
    /// H200, kernel against kernel, same call (us; stream-K / data-parallel on eight waves /
    /// the narrow tile on four waves of 128x32 [cuBLASLt]): 1024^3 TN 66.5 / 117.3 / 211.7
    /// [64.8], NN 65.9 / 107.3 / 197.2 [63.0], NT 62.2 / 99.2 / 164.5 [56.1]; 768x768x3072
    /// 106.5 / 331.0 / 609.2 [89.3]; 512x512x4096 NN 70.5 / 399.6 / 692.7 [56.8];
    /// 1024x1024x8192 425.3 / 870.2 / 1624.1 [359.1]; 1536x512x2048 96.6 / 224.7 / 409.0
    /// [84.5]; at 128 tiles, where stream-K gives each workgroup one whole tile, 1024x2048x2048
    /// NT 199.9 / 190.0 / 319.1 [178.7] and 2048x1024x1024 TT 109.1 / 106.5 / 199.2 [97.3].
    /// The narrow tile leaves most compute units idle there (64-128 workgroups of four waves);
    /// 64x128 tiles on four waves ran within 5% of stream-K at 1024^3 and 1024x2048x2048 and
    /// up to 3.6x slower at 512x512x4096.
    fn fma_few_tiles_shared(&self) -> Option<bool> {
        if self.hw.vendor != Vendor::Nvidia || self.fma_waves_apply() {
            return None;
        }
        let p = &self.problem;
        let base = self.raw_default();
        let cus = self.hw.compute_units as i64;
        let tiles = tile_count(p, base.mt0 as i64, base.mt1 as i64);
        Some(tiles * 10 < cus * 9 && tiles * ((p.k + 15) / 16) >= 4 * cus)
    }

    /// Whether the eight-wave tiles apply: NVIDIA, and at least half a wave of 256x128 tiles.
    fn fma_waves_apply(&self) -> bool {
        self.hw.vendor == Vendor::Nvidia
            && tile_count(&self.problem, 256, 128) >= self.hw.compute_units as i64 / 2
    }

    /// How long the tiles of `t` take, in units of one 256x128 tile's share of K a compute unit
    /// at its full rate, times 100: one workgroup's worth a compute unit at a time, so the
    /// waves of tiles times each one's area over its rate. Where a tile takes fewer registers
    /// and two share a compute unit, they share its rate: the same count.
    fn fma_wave_score(&self, t: WaveTile) -> i64 {
        let cus = (self.hw.compute_units as i64).max(1);
        let waves = (tile_count(&self.problem, t.mt0, t.mt1) + cus - 1) / cus;
        fma_area_score(waves * t.mt0 * t.mt1, t.rate)
    }

    /// The [`WAVE_TILES`] with their scores, best first (a stable sort: the table's order on a
    /// tie).
    fn fma_wave_tiles(&self) -> Vec<(i64, WaveTile)> {
        let mut tiles: Vec<_> = WAVE_TILES
            .iter()
            .map(|&t| (self.fma_wave_score(t), t))
            .collect();
        tiles.sort_by_key(|&(score, _)| score);
        tiles
    }

    /// The (DepthU, PrefetchGlobalRead) the layout takes on the eight-wave tiles with the
    /// operands of `packs` (PackMNMajor) copied M- or N-major first: 8 x 3 where both operands
    /// still go through registers.
    fn fma_stages(&self, packs: i64) -> (i64, i64) {
        let through =
            |is_a: bool, bit: u32| self.problem.k_contiguous(is_a) && packs & i64::from(bit) == 0;
        if through(true, constraints::PACK_A) && through(false, constraints::PACK_B) {
            STAGES_THROUGH_REGISTERS
        } else {
            STAGES_DEEP
        }
    }

    /// The operands PackMNMajor can copy (the largest set its domain holds) and the time their
    /// copies would take (a read and a write of each at the memory bandwidth, and a launch of
    /// a few microseconds each), in percent of the time of the GEMM's multiply-adds at 80% of
    /// the FP32 rate; None where there are none.
    fn fma_pack_share(&self) -> Option<(i64, f64)> {
        let p = &self.problem;
        let bits = *self.domain(ParamId::PackMnMajor).values.iter().max()?;
        let rows: Vec<i64> = [(constraints::PACK_A, p.m), (constraints::PACK_B, p.n)]
            .iter()
            .filter(|&&(bit, _)| bits & i64::from(bit) != 0)
            .map(|&(_, rows)| rows)
            .collect();
        if rows.is_empty() {
            return None;
        }
        let bytes: f64 = rows
            .iter()
            .map(|&r| (r * p.k * p.batch) as f64 * 4.0 * 2.0)
            .sum();
        let copy_s =
            bytes / (self.hw.memory_bandwidth_gbps.max(1.0) * 1e9) + 4e-6 * rows.len() as f64;
        let flops = 2.0 * (p.m * p.n * p.k * p.batch) as f64;
        let rate = self.hw.peak_tflops.get("f32").copied().unwrap_or(0.0) * 1e12 * 0.8;
        (rate > 0.0).then(|| (bits, 100.0 * copy_s / (flops / rate)))
    }

    /// PackMNMajor of the default: every operand it can copy where the copies are cheap enough
    /// ([`PACK_DEFAULT_SHARE`]), else those whose copies align its reads where that pays
    /// ([`Space::fma_default_alignment_packs`]).
    fn fma_default_packs(&self) -> i64 {
        match self.fma_pack_share() {
            Some((bits, share)) if share <= PACK_DEFAULT_SHARE => bits,
            _ => self.fma_default_alignment_packs(),
        }
    }

    /// The default's copies for alignment ([`Space::fma_alignment_packs`]) where they are
    /// estimated at no more than [`ALIGN_COPY_SHARE`] of the multiply-adds' time, else none:
    /// reading an operand once in place in 4-byte vectors beats copying it where the GEMM is
    /// bound by reading it (4095x16x4095 f32: a copy of A is two more passes over it).
    fn fma_default_alignment_packs(&self) -> i64 {
        match self.fma_pack_share() {
            Some((_, share)) if share <= ALIGN_COPY_SHARE => self.fma_alignment_packs(),
            _ => 0,
        }
    }

    /// Where the default's reads are off the 16-byte grid, the default with the other choice
    /// of [`Space::fma_default_alignment_packs`]: in place where it copies, copied where it
    /// reads in place, so that the search measures both from its first batch.
    pub fn fma_alignment_twin_start(&self) -> Option<KernelConfig> {
        let default = self.raw_default();
        let align = self.fma_alignment_packs();
        if !default.on_fma_path() || default.gv > 0 || align == 0 {
            return None;
        }
        let packs = if default.pm == 0 { align } else { 0 };
        self.valid_start(&[
            (ParamId::PackMnMajor, packs),
            (ParamId::GlobalReadVectorWidth, self.fma_read_width(packs)),
        ])
    }

    /// The problem the FMA main loop reads with the operands of `packs` (PackMNMajor) copied
    /// M- or N-major first.
    fn fma_packed_problem(&self, packs: i64) -> GemmProblem {
        constraints::mn_packed_with(u32::try_from(packs).unwrap_or(0), &self.problem)
    }

    /// The widest read vector (GlobalReadVectorWidth, at most 16 bytes) that keeps every read
    /// aligned with the operands of `packs` copied first (their copies' rows are aligned).
    fn fma_read_width(&self, packs: i64) -> i64 {
        let p = self.fma_packed_problem(packs);
        constraints::widest_aligned_read(&p, (16 / p.a_type.bytes() as i64).max(1))
    }

    /// Where an operand's rows (or batches) start off the 16-byte grid (K = 2047 in f32 TN,
    /// M = 4095 in NT), the fewest operands whose copies (PackMNMajor: K-contiguous ones
    /// copied M- or N-major, the others as they lie, each onto aligned rows) let every read be
    /// a whole 16-byte vector; 0 where the reads are aligned already (or off NVIDIA, where
    /// nothing is copied and the default reads in narrower vectors). Without it the f32
    /// default took neither and no candidate tile was valid. H200, kernel against kernel, same call (cuBLASLt in brackets):
    /// 1000x513x2047 TN on 128x128 stream-K, both copied 95.3 us, read in place in 4-byte
    /// vectors 101.9 [76.6], against 263.7 for the best of the default set before; 3000x2000x1001
    /// TN on 256x128, 400.2 against 442.6-461.4 [288.9]; 1001x1024x1024 NN (A M-contiguous,
    /// lda 1001) 79.2 in 4-byte vectors [62.3].
    fn fma_alignment_packs(&self) -> i64 {
        let widest = (16 / self.problem.a_type.bytes() as i64).max(1);
        if constraints::reads_aligned(&self.problem, widest) {
            return 0;
        }
        [constraints::PACK_A, constraints::PACK_B]
            .into_iter()
            .chain([constraints::PACK_A | constraints::PACK_B])
            .map(i64::from)
            .find(|&bits| {
                self.domain(ParamId::PackMnMajor).contains(bits)
                    && constraints::reads_aligned(&self.fma_packed_problem(bits), widest)
            })
            .unwrap_or(0)
    }

    /// The preferences that put the default on `t` with the operands of `packs` copied first,
    /// on the stages that takes, reading as wide as the rows then allow.
    fn fma_wave_tile(&self, t: WaveTile, packs: i64) -> [(ParamId, i64); 8] {
        self.fma_wave_tile_on(t, packs, self.fma_stages(packs))
    }

    /// The same with `(depth, stages)`.
    fn fma_wave_tile_on(
        &self,
        t: WaveTile,
        packs: i64,
        (depth, stages): (i64, i64),
    ) -> [(ParamId, i64); 8] {
        [
            (ParamId::MacroTile0, t.mt0),
            (ParamId::MacroTile1, t.mt1),
            (ParamId::WavesM, t.waves_m),
            (ParamId::WavesN, t.waves_n),
            (ParamId::DepthU, depth),
            (ParamId::PrefetchGlobalRead, stages),
            (ParamId::PackMnMajor, packs),
            (ParamId::GlobalReadVectorWidth, self.fma_read_width(packs)),
        ]
    }

    /// Starts on the eight-wave tiles the default did not take whose score is within
    /// [`WAVE_START_MARGIN`] percent of the best: the scores' rates are fitted, and where two
    /// tiles are that close either may win (3000x1000x2000 on an H200: 192x128 beat 256x96 by
    /// 6% in NT, lost by 9% in NN). Where both operands go through registers, the best tile
    /// on 16 k a stage and four stages as well: 8 x 3 wins at 4096^3 by 1% and at
    /// 8192x8192x1024 by 2.5%, loses at 3072x1024x3072 by 10% (H200, kernel against kernel:
    /// 256x96 tiles 487.5 us on 8 x 3 against 444.1 on 16 x 4 [414.1]).
    /// Where K-contiguous operands can be copied M- or N-major first (PackMNMajor) and the
    /// copies are estimated at no more than [`PACK_START_SHARE`], the best tile with the other
    /// choice than the default's is the first of these starts.
    pub fn fma_wave_starts(&self) -> Vec<KernelConfig> {
        let default = self.raw_default();
        if !self.fma_waves_apply() || !default.on_fma_path() {
            return Vec::new();
        }
        let packs = default.pm as i64;
        let tiles = self.fma_wave_tiles();
        let best = tiles[0].0;
        let deeper = self.fma_wave_tile_on(tiles[0].1, packs, STAGES_DEEP);
        let mut starts: Vec<KernelConfig> = tiles
            .iter()
            .filter(|&&(score, _)| score * 100 <= best * (100 + WAVE_START_MARGIN))
            .filter_map(|&(_, t)| self.valid_start(&self.fma_wave_tile(t, packs)))
            .collect();
        if let Some(c) = self.valid_start(&deeper) {
            if !starts.contains(&c) {
                starts.insert(starts.len().min(1), c);
            }
        }
        let other = match (packs, self.fma_pack_share()) {
            (0, Some((bits, share))) if share <= PACK_START_SHARE => bits,
            (0, _) => return starts,
            _ => 0,
        };
        if let Some(c) = self.valid_start(&self.fma_wave_tile(tiles[0].1, other)) {
            if !starts.contains(&c) {
                starts.insert(0, c);
            }
        }
        starts
    }

    /// A start for the FMA path where the eight-wave tiles apply but their waves would leave
    /// much of the compute units idle (about one to three waves, each tile's count or
    /// padding a poor fit): the base 128x128 tile on eight waves of 64x32 as stream-K (GSU1S,
    /// 16 k on four stages, the default's copies), whose workgroups share all tiles' K
    /// evenly. Taken where an even share of the outputs a compute unit at 128x128's rate, plus
    /// [`STREAM_K_COST`], scores below the best eight-wave tile
    /// ([`Space::fma_wave_score`]). H200, kernel against kernel, same call (cuBLASLt, on
    /// 128x128 tiles of four warps split three ways, in brackets): 5120x512x2048 TN on the
    /// start 273.7 us against 306.3 on the default's 256x96 (120 tiles, a third of the last
    /// column idle) and 281.4 on 128x128 of four waves split three ways [246.5]; not taken at
    /// 7680x512x2560, where it ran 490.1 against 454.6 on 256x128 (120 tiles) [431.9].
    pub fn fma_stream_k_start(&self) -> Option<KernelConfig> {
        let default = self.raw_default();
        if !self.fma_waves_apply() || !default.on_fma_path() {
            return None;
        }
        let base = STREAM_K_TILE;
        let best = self.fma_wave_tiles().first()?.0;
        let cus = (self.hw.compute_units as i64).max(1);
        let share = tile_count(&self.problem, base.mt0, base.mt1) * base.mt0 * base.mt1 / cus;
        let score = fma_area_score(share, base.rate) * STREAM_K_COST / 100;
        if score >= best {
            return None;
        }
        self.valid_start(&[
            (ParamId::MacroTile0, base.mt0),
            (ParamId::MacroTile1, base.mt1),
            (ParamId::WavesM, base.waves_m),
            (ParamId::WavesN, base.waves_n),
            (ParamId::DepthU, STAGES_DEEP.0),
            (ParamId::PrefetchGlobalRead, STAGES_DEEP.1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 2),
            (ParamId::PackMnMajor, default.pm as i64),
        ])
    }

    /// Starts for the FMA path where even [`SMALL_SPLIT_TILE`]s are fewer than the compute
    /// units (small f32 GEMMs: 512^3, 768^3, 1024x1024x512): that tile on four waves of 64x32,
    /// 16 k a stage on three stages, K split over a few workgroups a tile and summed by the
    /// reduction kernel. The splits: the first of the domain whose workgroups reach one a
    /// compute unit, the one before it and the two after, each keeping at least
    /// [`SMALL_SPLIT_MIN_K`] of K a split; where none reaches a compute unit, the largest that
    /// keeps it (and the one before). Where the best split falls differs by shape (below), so
    /// the search measures the few around the first full wave.
    /// H200, kernel against kernel, same call (us; cuBLASLt, which ran a 128x128 tile of four
    /// warps split 7 ways at 768^3, in brackets): 512^3 TN 18.4 on GSU4R (64x128 tiles; 17.5
    /// on 128x64 of eight waves) [17.3], against 24.1 for the stream-K default; 768^3 37.0 on
    /// GSU3R, 39.9 on 4, 41.7 on 6 [36.1] (the stream-K default 41.0); 1024x1024x512 NN 37.5
    /// on GSU3R (37.1 summed in the kernel, GSU3K), 42.6 on 4 [32.7]; 1536x512x2048 85.7 on
    /// 4, 108.9 on 3, 99.1 on 6 [84.8]; 384x384x4096 NT 45.9 on 6, 62.4 on 4 [51.6];
    /// 256x1024x1024 26.1 on 4 [25.2]. The default's 128x128 tile on four waves (the split
    /// start below) split as far: 39.2 at 768^3 (GSU6R), 40.2 at 1024x1024x512.
    pub fn fma_small_tile_split_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let (mt0, mt1) = SMALL_SPLIT_TILE;
        let cus = self.hw.compute_units as i64;
        let tiles = tile_count(p, mt0, mt1);
        if self.hw.vendor != Vendor::Nvidia
            || !self.raw_default().on_fma_path()
            || self.fma_waves_apply()
            || p.m < mt0
            || p.n < mt1
            || tiles >= cus
        {
            return Vec::new();
        }
        let splits: Vec<i64> = self
            .domain(ParamId::GlobalSplitU)
            .values
            .iter()
            .copied()
            .filter(|&s| s > 1 && p.k >= s * SMALL_SPLIT_MIN_K)
            .collect();
        let Some(last) = splits.len().checked_sub(1) else {
            return Vec::new();
        };
        let first_wave = splits
            .iter()
            .position(|&s| tiles * s >= cus)
            .unwrap_or(last);
        let picked = &splits[first_wave.saturating_sub(1)..(first_wave + 3).min(splits.len())];
        picked
            .iter()
            .filter_map(|&split| {
                self.valid_start(&[
                    (ParamId::MacroTile0, mt0),
                    (ParamId::MacroTile1, mt1),
                    (ParamId::WavesM, 1),
                    (ParamId::WavesN, 4),
                    (ParamId::DepthU, 16),
                    (ParamId::PrefetchGlobalRead, 3),
                    (ParamId::GlobalSplitU, split),
                    (ParamId::GlobalSplitUAlgorithm, 1),
                ])
            })
            .collect()
    }

    /// A start for the FMA path (f32 without matrix instructions) where the default's tiles
    /// are fewer than two a compute unit: the default's tile on four waves of 128 (or 64)
    /// accumulators a lane, 16 k a stage on three stages, K split so that there are at least
    /// two workgroups a compute unit (two fit one's registers), else as far as keeps 16 steps
    /// of K a split where that still makes a workgroup a compute unit; the partials summed by
    /// the reduction kernel. The default split stops where the matrix-core paths would stream
    /// too short a K (64 steps of 64), which on FFMAs, compute-bound from far shorter K, left
    /// 4096x64x4096 f32 unsplit. H200, same call (cuBLASLt 67.5 us): 66.6 us on MT128x64
    /// GSU12R on four waves, against 95.6 on eight (the few-tile default's waves) and 84.8 on
    /// that default (stream-K); tunes from it kept 63.7 at 4096x64x4096 (GSU8R), 64.7 at
    /// 512x512x4096 NN (GSU16R) and 92.0 at 1536x512x2048 (GSU8R) [67.2, 56.6, 85.1].
    pub fn fma_split_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        if !start.on_fma_path() || start.gsu > 1 {
            return None;
        }
        let tiles = tile_count(p, start.mt0 as i64, start.mt1 as i64);
        let cus = self.hw.compute_units as i64;
        let want = 2 * cus;
        let depth = 16;
        if tiles >= want {
            return None;
        }
        let splits: Vec<i64> = self
            .domain(ParamId::GlobalSplitU)
            .values
            .iter()
            .copied()
            .filter(|&s| s > 1 && p.k >= s * 16 * depth)
            .collect();
        let split = splits
            .iter()
            .copied()
            .find(|&s| tiles * s >= want)
            .or_else(|| splits.iter().copied().rfind(|&s| tiles * s >= cus))?;
        self.valid_start(&[
            (ParamId::WavesM, 1),
            (ParamId::WavesN, 4),
            (ParamId::DepthU, depth),
            (ParamId::PrefetchGlobalRead, 3),
            (ParamId::GlobalSplitU, split),
            (ParamId::GlobalSplitUAlgorithm, 1),
        ])
    }
}

/// The FMA path's time score of `area` outputs a compute unit on a tile of `rate` (percent
/// of the 256x128 tile's FFMA rate): units of one 256x128 tile's share at the full rate,
/// times 100.
fn fma_area_score(area: i64, rate: i64) -> i64 {
    area * 100 / rate / (256 * 128 / 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::GsuAlgo;

    fn f32_problem(m: i64, n: i64, k: i64, layout: &str) -> GemmProblem {
        let t = |c: u8| if c == b'T' { Trans::T } else { Trans::N };
        let (ta, tb) = (t(layout.as_bytes()[0]), t(layout.as_bytes()[1]));
        let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        p
    }

    type Shape = (u32, u32, u32, [u32; 2], u32, u32);

    fn shape(c: &KernelConfig) -> Shape {
        (c.mt0, c.mt1, c.depth_u, c.wg, c.pgr, c.plr)
    }

    fn default_shape(m: i64, n: i64, k: i64, layout: &str, hw: &str) -> Shape {
        let hw = HwSpec::by_name(hw).unwrap();
        shape(
            &Space::for_problem(&f32_problem(m, n, k, layout), &hw)
                .default_config()
                .unwrap(),
        )
    }

    #[test]
    fn fma_tiles_fewer_than_two_a_compute_unit_start_split() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 32 tiles of 128x64: K in 12 makes 384 workgroups, two or more a compute unit, on
        // four waves.
        let s = Space::for_problem(&f32_problem(4096, 64, 4096, "TN"), &hw);
        let c = s.fma_split_start().expect("32 FMA tiles");
        s.check(&c).unwrap();
        assert_eq!((c.mi, c.mt0, c.mt1, c.wg), ([1, 1, 1], 128, 64, [1, 4]));
        assert_eq!((c.depth_u, c.pgr), (16, 3));
        assert_eq!((c.gsu, c.gsu_algo), (12, GsuAlgo::Reduce));
        assert!(s.extra_starts().contains(&c));
        // 16 tiles of 512x512x4096: no split keeping 16 steps reaches two a compute unit, 16
        // reaches one.
        let few = Space::for_problem(&f32_problem(512, 512, 4096, "NN"), &hw);
        assert_eq!(few.fma_split_start().map(|c| c.gsu), Some(16));
        // Enough tiles, a split that would leave fewer than 16 steps: none.
        let many = Space::for_problem(&f32_problem(4096, 4096, 4096, "TN"), &hw);
        assert_eq!(many.fma_split_start(), None);
        let short = Space::for_problem(&f32_problem(1024, 1024, 256, "TN"), &hw);
        assert_eq!(short.fma_split_start(), None);
        let bf16 = Space::for_problem(&GemmProblem::new(4096, 64, 4096), &hw);
        assert_eq!(bf16.fma_split_start(), None);
    }

    #[test]
    fn fma_small_tiles_split_around_the_first_full_wave() {
        let hw = HwSpec::by_name("H200").unwrap();
        let splits = |m, n, k, layout| {
            let s = Space::for_problem(&f32_problem(m, n, k, layout), &hw);
            let starts = s.fma_small_tile_split_starts();
            let extra = s.extra_starts();
            for c in &starts {
                s.check(c).unwrap();
                assert!(extra.contains(c), "{m}x{n}x{k}: {}", c.name());
                assert_eq!((c.mi, c.mt0, c.mt1, c.wg), ([1, 1, 1], 64, 128, [1, 4]));
                assert_eq!((c.depth_u, c.pgr, c.gsu_algo), (16, 3, GsuAlgo::Reduce));
            }
            starts.iter().map(|c| c.gsu).collect::<Vec<_>>()
        };
        // 32 tiles: no split keeping 128 of K reaches a wave; the largest that does and the
        // one before.
        assert_eq!(splits(512, 512, 512, "TN"), [3, 4]);
        // 72 tiles: 2 reaches a wave (none before it), then 3 and 4.
        assert_eq!(splits(768, 768, 768, "TN"), [2, 3, 4]);
        // 18 tiles: 8 reaches a wave; 6 before it, 12 and 16 after.
        assert_eq!(splits(384, 384, 4096, "NT"), [6, 8, 12, 16]);
        assert_eq!(splits(1024, 1024, 512, "NN"), [2, 3, 4]);
        // N under the tile (the split start takes these), a wave of tiles already, K too
        // short to split, and the matrix-core path: none.
        assert!(splits(4096, 64, 4096, "TN").is_empty());
        assert!(splits(640, 2048, 640, "TT").is_empty());
        assert!(splits(1024, 512, 128, "TN").is_empty());
        let bf16 = Space::for_problem(&GemmProblem::new(512, 512, 512), &hw);
        assert!(bf16.fma_small_tile_split_starts().is_empty());
    }

    #[test]
    fn fma_default_is_the_gemv_path_for_a_few_rows_or_columns_but_nn_along_them() {
        let hw = HwSpec::by_name("H200").unwrap();
        let default = |m, n, layout, hw: &HwSpec| {
            let s = Space::for_problem(&f32_problem(m, n, 4096, layout), hw);
            let c = s.default_config().unwrap();
            s.check(&c).unwrap();
            c
        };
        for (m, n, layout, sab) in [(4096, 1, "TN", 0), (4096, 8, "NT", 0), (1, 4096, "NT", 1)] {
            let c = default(m, n, layout, &hw);
            assert_eq!((c.gv, c.sab), (1, sab), "{m}x{n} {layout}");
            assert_eq!(
                (c.mt0, c.wg),
                (if layout == "TN" { 16 } else { 128 }, [8, 1])
            );
        }
        // TT along the GEMV's rows (8x4096 NN is TT transposed): 32 rows on four waves.
        for (m, n, layout, sab) in [(14336, 4, "TT", 0), (8, 4096, "NN", 1)] {
            let c = default(m, n, layout, &hw);
            assert_eq!(
                (c.gv, c.sab, c.mt0, c.wg),
                (1, sab, 32, [4, 1]),
                "{m}x{n} {layout}"
            );
        }
        // NN along the rows (4096x8 NN, 8x4096 TT) keeps the tiles; so does AMD.
        for (m, n, layout) in [(4096, 8, "NN"), (8, 4096, "TT")] {
            assert_eq!(default(m, n, layout, &hw).gv, 0, "{m}x{n} {layout}");
        }
        let mi300 = HwSpec::by_name("MI300X").unwrap();
        assert_eq!(default(4096, 1, "TN", &mi300).gv, 0);
    }

    #[test]
    fn fma_default_on_few_tiles_runs_eight_waves_stream_k_where_they_would_idle() {
        let hw = HwSpec::by_name("H200").unwrap();
        let default = |m, n, k, layout| {
            let s = Space::for_problem(&f32_problem(m, n, k, layout), &hw);
            let c = s.default_config().unwrap();
            s.check(&c).unwrap();
            c
        };
        // 64 tiles of 128x128 for 132 compute units, 64 K tiles each: stream-K.
        for layout in ["TN", "NN", "NT", "TT"] {
            let c = default(1024, 1024, 1024, layout);
            assert_eq!((c.mi, c.mt0, c.mt1, c.wg), ([1, 1, 1], 128, 128, [2, 4]));
            assert_eq!(
                (c.depth_u, c.pgr, c.gsu, c.gsu_algo),
                (16, 4, 1, GsuAlgo::StreamK)
            );
        }
        // 128 tiles (stream-K would give each workgroup one whole tile), or too little K to
        // share (64 tiles of 4 K tiles): data-parallel on eight waves.
        for (m, n, k) in [(1024, 2048, 2048), (1024, 1024, 64)] {
            let c = default(m, n, k, "NT");
            assert_eq!(
                (c.mt0, c.mt1, c.wg, c.pgr, c.gsu),
                (128, 128, [2, 4], 3, 1),
                "{m}x{n}x{k}"
            );
            assert_ne!(c.gsu_algo, GsuAlgo::StreamK);
        }
        // The eight-wave tiles apply; AMD keeps the narrow tile.
        assert_eq!(default(2048, 2048, 2048, "TN").mt0, 256);
        let mi300 = HwSpec::by_name("MI300X").unwrap();
        let amd = Space::for_problem(&f32_problem(1024, 1024, 1024, "TN"), &mi300)
            .default_config()
            .unwrap();
        assert_eq!((amd.wg, amd.gsu_algo == GsuAlgo::StreamK), ([1, 4], false));
    }

    #[test]
    fn fma_default_takes_the_eight_wave_tile_that_fills_the_waves_best() {
        let cases: [(i64, i64, i64, &str, &str, Shape, &str); 7] = [
            (
                4096,
                4096,
                4096,
                "TN",
                "H200",
                (256, 128, 16, [4, 2], 4, 1),
                "whole waves, both operands copied N- and M-major first",
            ),
            (
                2048,
                2048,
                2048,
                "TN",
                "H200",
                (256, 128, 8, [4, 2], 3, 1),
                "128 tiles, one wave",
            ),
            (
                8192,
                8192,
                1024,
                "TN",
                "H200",
                (256, 128, 16, [4, 2], 4, 1),
                "more waves elsewhere, both operands copied first",
            ),
            (
                3072,
                1024,
                3072,
                "TN",
                "H200",
                (256, 96, 8, [4, 2], 3, 1),
                "96 tiles, 132 of 256x96",
            ),
            (
                1152,
                4096,
                1152,
                "NN",
                "H200",
                (128, 128, 16, [2, 4], 4, 1),
                "2 waves, or 288 two a CU",
            ),
            (
                4096,
                64,
                4096,
                "TN",
                "H200",
                (128, 64, 16, [2, 4], 4, 1),
                "32 tiles: eight waves, stream-K",
            ),
            (
                4096,
                4096,
                4096,
                "TN",
                "mi300x",
                (128, 128, 8, [1, 4], 3, 1),
                "AMD: 8 k a stage",
            ),
        ];
        for (m, n, k, layout, hw, want, why) in cases {
            assert_eq!(
                default_shape(m, n, k, layout, hw),
                want,
                "{m}x{n}x{k} {hw}: {why}"
            );
        }
    }

    #[test]
    fn fma_stage_depth_follows_how_the_operands_reach_lds() {
        // Both through registers (TN where the copies would cost 7% of 2048^3): 8 k on three
        // stages; any operand copied straight in: 16 k on four.
        for (layout, depth, stages) in [("TN", 8, 3), ("NN", 16, 4), ("NT", 16, 4), ("TT", 16, 4)] {
            let s = default_shape(2048, 2048, 2048, layout, "H200");
            assert_eq!((s.2, s.4), (depth, stages), "{layout}");
            assert_eq!((s.0, s.1), (256, 128), "{layout}");
        }
        // 8 k a stage exists on the FMA path only.
        let h200 = HwSpec::by_name("H200").unwrap();
        let depths = |s: &Space| s.domain(ParamId::DepthU).values.clone();
        let f32_space = Space::for_problem(&f32_problem(4096, 4096, 4096, "TN"), &h200);
        assert!(depths(&f32_space).contains(&8));
        let bf16_space = Space::for_problem(&GemmProblem::new(4096, 4096, 4096), &h200);
        assert!(!depths(&bf16_space).contains(&8));
    }

    #[test]
    fn fma_default_copies_k_contiguous_operands_where_the_copies_are_cheap() {
        let h200 = HwSpec::by_name("H200").unwrap();
        let pm = |m, n, k, layout: &str| {
            Space::for_problem(&f32_problem(m, n, k, layout), &h200)
                .default_config()
                .unwrap()
                .pm
        };
        // Every K-contiguous operand of 4096^3 (about 2.5% of the multiply-adds): A in TN and
        // TT, B in TN and NN; none in NT.
        assert_eq!(pm(4096, 4096, 4096, "TN"), 3);
        assert_eq!(pm(4096, 4096, 4096, "NN"), 2);
        assert_eq!(pm(4096, 4096, 4096, "TT"), 1);
        assert_eq!(pm(4096, 4096, 4096, "NT"), 0);
        // Small or thin GEMMs keep theirs in place, and so does a 64-batch of 512^3, where
        // the copies would take a fifth of the time; so does every AMD default (the HIP
        // backend launches no packing kernels).
        assert_eq!(pm(1024, 1024, 1024, "TN"), 0);
        assert_eq!(pm(4096, 64, 4096, "TN"), 0);
        let mut batched = f32_problem(512, 512, 512, "TN");
        batched.batch = 64;
        let s = Space::for_problem(&batched, &h200);
        assert_eq!(s.default_config().unwrap().pm, 0);
        assert!(s.fma_wave_starts().iter().all(|c| c.pm == 0));
        let mi300 = HwSpec::by_name("mi300x").unwrap();
        let amd = Space::for_problem(&f32_problem(4096, 4096, 4096, "TN"), &mi300);
        assert_eq!(amd.domain(ParamId::PackMnMajor).values, vec![0]);
    }

    #[test]
    fn fma_default_copies_operands_off_the_16_byte_grid_onto_aligned_rows() {
        let h200 = HwSpec::by_name("H200").unwrap();
        let default = |p: &GemmProblem, hw: &HwSpec| {
            let s = Space::for_problem(p, hw);
            let c = s.default_config().unwrap();
            assert!(s.is_valid(&c), "{}", c.name());
            for start in s.extra_starts() {
                assert!(s.is_valid(&start), "{}", start.name());
            }
            (c.pm, c.grvw, c.svw, c.gsu_algo)
        };
        // K = 2047, TN: both operands' rows are off the grid; copied, they read in 16-byte
        // vectors, and the few tiles still run as stream-K. D's rows (1000) are on it.
        assert_eq!(
            default(&f32_problem(1000, 513, 2047, "TN"), &h200),
            (3, 4, 2, GsuAlgo::StreamK)
        );
        // lda = 1001, NN: A is M-contiguous off the grid, copied as it lies; B (ldb = K =
        // 1024) stays in place; D's rows take 4-byte stores.
        let (pm, grvw, svw, _) = default(&f32_problem(1001, 1024, 1024, "NN"), &h200);
        assert_eq!((pm, grvw, svw), (1, 4, 1));
        // 4095^3 NT: both M- and N-contiguous, both off the grid.
        assert_eq!(default(&f32_problem(4095, 4095, 4095, "NT"), &h200).0, 3);
        // 4095x16x4095 TN, bound by reading A: a copy of A would be two more passes over it,
        // so the default reads in place in 4-byte vectors, and the twin start copies.
        let skinny = f32_problem(4095, 16, 4095, "TN");
        let (pm, grvw, _, _) = default(&skinny, &h200);
        assert_eq!((pm, grvw), (0, 1));
        let s = Space::for_problem(&skinny, &h200);
        let twin = s.fma_alignment_twin_start().expect("the copied twin");
        assert_eq!((twin.pm, twin.grvw), (3, 4));
        assert!(s.extra_starts().contains(&twin));
        // And the other way round where the default copies.
        let s = Space::for_problem(&f32_problem(1000, 513, 2047, "TN"), &h200);
        let twin = s.fma_alignment_twin_start().expect("the in-place twin");
        assert_eq!((twin.pm, twin.grvw), (0, 1));
        // Aligned problems have none.
        let aligned = Space::for_problem(&f32_problem(1024, 512, 2048, "TN"), &h200);
        assert_eq!(aligned.fma_alignment_twin_start(), None);
        // On AMD nothing is copied: the default reads in vectors as wide as the rows allow.
        let mi300 = HwSpec::by_name("mi300x").unwrap();
        let (pm, grvw, svw, _) = default(&f32_problem(1000, 514, 2046, "TN"), &mi300);
        assert_eq!((pm, grvw, svw), (0, 2, 2));
    }

    #[test]
    fn fma_stream_k_starts_where_the_eight_wave_tiles_idle_their_waves() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 5120x512: the best eight-wave tile makes one wave (256x96, 120 tiles, a third of
        // the last column padding), the even share scores a quarter below it.
        let s = Space::for_problem(&f32_problem(5120, 512, 2048, "TN"), &hw);
        let c = s.fma_stream_k_start().expect("5120x512x2048 f32");
        s.check(&c).unwrap();
        assert_eq!((c.mi, c.mt0, c.mt1, c.wg), ([1, 1, 1], 128, 128, [2, 4]));
        assert_eq!(
            (c.depth_u, c.pgr, c.gsu, c.gsu_algo),
            (16, 4, 1, GsuAlgo::StreamK)
        );
        assert!(s.extra_starts().contains(&c));
        // 7680x512: 256x128 fills 120 of 132 compute units, stream-K's cost outweighs the rest.
        let near = Space::for_problem(&f32_problem(7680, 512, 2560, "TN"), &hw);
        assert_eq!(near.fma_stream_k_start(), None);
        // Many waves: their last one matters little.
        let big = Space::for_problem(&f32_problem(4096, 4096, 4096, "TN"), &hw);
        assert_eq!(big.fma_stream_k_start(), None);
        // Too few tiles for the eight-wave tiles (the few-tile default is stream-K already),
        // and matrix-core types: none.
        let few = Space::for_problem(&f32_problem(2048, 512, 2048, "TN"), &hw);
        assert_eq!(few.fma_stream_k_start(), None);
        let bf16 = Space::for_problem(&GemmProblem::new(5120, 512, 2048), &hw);
        assert_eq!(bf16.fma_stream_k_start(), None);
    }

    #[test]
    fn fma_wave_starts_are_the_close_runners_up() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 3000x1000: 256x96 (132 tiles) and 192x128 (128) tie, 256x128 (96) within 15%;
        // 128x128 (192 tiles, two waves) not.
        // The default copies B (K-contiguous, 1000 x 2000, 3% of the multiply-adds) N-major
        // first; the first start leaves it in place.
        let s = Space::for_problem(&f32_problem(3000, 1000, 2000, "NN"), &hw);
        let default = s.default_config().unwrap();
        assert_eq!((default.mt0, default.mt1, default.pm), (256, 96, 2));
        let starts = s.fma_wave_starts();
        let tiles: Vec<(u32, u32, u32)> = starts.iter().map(|c| (c.mt0, c.mt1, c.pm)).collect();
        assert_eq!(
            tiles,
            [(256, 96, 0), (256, 96, 2), (192, 128, 2), (256, 128, 2)]
        );
        for c in &starts {
            s.check(c).unwrap();
            assert_eq!((c.depth_u, c.pgr, c.gsu), (16, 4, 1));
        }
        let extra = s.extra_starts();
        assert!(starts.iter().all(|c| *c == default || extra.contains(c)));
        // 4096^3: 128x128 (eight waves of two a compute unit) 11% behind, the others 30%.
        // bf16: none (matrix cores).
        let big = Space::for_problem(&f32_problem(4096, 4096, 4096, "TN"), &hw);
        let big_tiles: Vec<(u32, u32, u32, u32)> = big
            .fma_wave_starts()
            .iter()
            .map(|c| (c.mt0, c.mt1, c.depth_u, c.pm))
            .collect();
        // Both operands copied first by default: the first start keeps them in place, both
        // through registers on 8 k a stage.
        assert_eq!(
            big_tiles,
            [(256, 128, 8, 0), (256, 128, 16, 3), (128, 128, 16, 3)]
        );
        // 2048^3 TN: the copies would take 7%, so the default leaves both in place; the
        // first start copies them.
        let mid = Space::for_problem(&f32_problem(2048, 2048, 2048, "TN"), &hw);
        assert_eq!(mid.default_config().unwrap().pm, 0);
        let first = mid.fma_wave_starts()[0];
        assert_eq!(
            (first.mt0, first.mt1, first.depth_u, first.pgr, first.pm),
            (256, 128, 16, 4, 3)
        );
        let bf16 = Space::for_problem(&GemmProblem::new(3000, 1000, 2000), &hw);
        assert!(bf16.fma_wave_starts().is_empty());
    }
}
