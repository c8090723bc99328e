//! `Space`: the domains of every parameter for one problem on one GPU, and the operations
//! on it: the default config, bounded enumeration, random sampling and neighbourhoods, and
//! the order in which the starts beside the default (each kind of GEMM's in a file of its
//! own: narrow_n, one_wave, split_starts, n_fit, persistent_starts, wave_fit, short_k,
//! small_m, unaligned, gemv, fma) reach the search's first batch and `bench`'s default set.

use rand::{Rng, SeedableRng};
use serde::Serialize;
use thiserror::Error;

use super::config::{GsuAlgo, KernelConfig};
use super::constraints::{self, Violation};
use super::param::{pack_mi, unpack_mi, Domain, ParamId};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;

/// Deepest pipeline a skinny start takes (where its tiles fit that many stages). One 64x64
/// warpgroup tile per SM is held back by how many bytes it has in flight: on an H100, same
/// run (cuBLASLt in brackets), 4096x128x14336 ran 51.8 / 50.6 / 49.6 / 48.7 us at 8 / 10 /
/// 12 / 14 stages [55.2], 4096x128x4096 19.5 / 19.1 / 18.8 / 19.0 [17.9], 8192x64x8192
/// 52.0 / 51.8 / 51.7 / 52.0 [51.0]; a 48x64 swapped tile ran the same at 8 to 16 stages.
pub(super) const START_STAGES_MAX: i64 = 12;
/// Widest N the narrow-N start covers with one N tile (narrow_n.rs); such tiles stream A
/// fastest whole, so they get no stream-K twin.
pub(super) const NARROW_N_MAX: i64 = 64;
/// The tiles M up to 64 starts on ([`Space::tiny_m_starts`]): (MacroTile1, GlobalSplitU,
/// GlobalSplitUAlgorithm): 64 columns unsplit, 128 with K in four summed in the kernel.
pub(super) const TINY_M_TILES: [(i64, i64, i64); 2] = [(64, 1, 1), (128, 4, 3)];

#[derive(Debug, Error)]
pub enum SpaceError {
    #[error("the space has {size} configs, more than the limit of {limit}; fix some parameters (e.g. --fix DepthU=64) to bound it")]
    TooLarge { size: u128, limit: u128 },
    #[error("no valid config exists for {0} in this space")]
    Empty(String),
    #[error("unknown parameter `{0}` (known: {1})")]
    UnknownParam(String, String),
    #[error("value `{value}` for {param} is not allowed here (allowed: {allowed})")]
    BadValue {
        param: &'static str,
        value: String,
        allowed: String,
    },
}

/// The widest K split, opt-in: [`Space::few_tile_long_k_starts`].
pub(super) const WIDEST_SPLIT: i64 = 128;

/// Random points [`Space::sample`] tries before it repairs one.
const SAMPLE_TRIES: usize = 40_000;

/// All parameter domains for one problem on one GPU.
#[derive(Debug, Clone, Serialize)]
pub struct Space {
    pub domains: Vec<Domain>,
    #[serde(skip)]
    pub problem: GemmProblem,
    #[serde(skip)]
    pub hw: HwSpec,
    /// When set, only these configs are valid: a recorded sweep replayed, whose configs are
    /// not every combination of its parameters' values (its LDS layouts come in pairs).
    #[serde(skip)]
    pub only: Option<std::sync::Arc<std::collections::HashSet<KernelConfig>>>,
}

impl Space {
    /// The full tuning space for a problem on a GPU.
    pub fn for_problem(problem: &GemmProblem, hw: &HwSpec) -> Space {
        let ea = problem.a_type.bytes() as i64;
        let ed = problem.d_type.bytes() as i64;
        let shapes = hw.mi_shapes_for(problem);
        // N up to 8 also has the GEMV path (Gemv=1), which multiplies with FMAs (MI 1x1x1)
        // whatever the type, on one to eight columns (MacroTile1 1, 2, 4, 8); so has M up to
        // 8, along N (SwapAB=1: the transposed problem's columns are D's rows).
        let gemv_along_n = problem.m <= constraints::GEMV_MAX_N;
        let gemv = problem.n <= constraints::GEMV_MAX_N || gemv_along_n;
        let mut mi_values: Vec<i64> = if shapes.is_empty() {
            vec![pack_mi([1, 1, 1])]
        } else {
            shapes.iter().map(|s| pack_mi(*s)).collect()
        };
        // Many small batches have the flat batch path (FlatBatch=1), FMAs whatever the type,
        // on tiles of the batch's size in steps of 4, and batches up to a few hundred rows its
        // staged form on matrix cores (FlatBatch=2; flat_batch.rs).
        let flat_values = constraints::flat_batch_values(problem, hw);
        let flat = !flat_values.is_empty();
        let staged = flat_values.contains(&2);
        if (gemv || flat) && !mi_values.contains(&pack_mi([1, 1, 1])) {
            mi_values.push(pack_mi([1, 1, 1]));
        }
        // Multiples of 16 up to 256 both ways: tiles that divide a skinny problem into one
        // wave of workgroups are rarely powers of two (M tiles come in steps of 16 with
        // SwapAB on the warpgroup path, N tiles are as fine on every path and finer on the
        // warpgroup path, below).
        let tile_values: Vec<i64> = (1..=16).map(|i| i * 16).collect();
        let n_tile = ((problem.n.max(16) + 15) / 16 * 16).min(128);
        let nvidia = hw.vendor == Vendor::Nvidia;
        let wgmma = shapes.contains(&constraints::wgmma_mi(problem.a_type));
        // Powers of two, and on the warpgroup path for N past 128 three warpgroups along M
        // (WavesM 12, constraints::THREE_WARPGROUPS: 192-row tiles, each warpgroup 64 rows by
        // the whole tile's width, Space::three_warpgroup_start): where 192-row tiles cut the
        // problem into fuller waves than 128-row ones (Space::three_warpgroup_waves_start). For
        // N up to 128, 128-row tiles of two warpgroups make the same instructions.
        let mut waves_m = vec![1, 2, 4, 8];
        if wgmma && problem.n > 128 {
            waves_m.push(constraints::THREE_WARPGROUPS as i64);
        }
        // On the warpgroup path N tiles come in the instruction's steps of 8 (72 or 120
        // columns cut N into one wave of tiles where steps of 16 cannot: shape::
        // tile_granularity), up to 512 where it can cover N past 256 in one workgroup
        // (several warpgroups along N sharing the A tile), so A is read once.
        let wide_tiles: Vec<i64> = if wgmma {
            let widest = if problem.n > 256 {
                constraints::MAX_WGMMA_TILE as i64
            } else {
                256
            };
            (1..=widest / 8).map(|i| i * 8).collect()
        } else {
            tile_values.clone()
        };
        let gemv_columns: &[i64] = if gemv { &[1, 2, 4, 8] } else { &[] };
        let unaligned_a = wgmma && constraints::tma_rows_unaligned(problem, true);
        let unaligned_b = wgmma && constraints::tma_rows_unaligned(problem, false);
        let transposable =
            !shapes.is_empty() && (!problem.k_contiguous(true) || !problem.k_contiguous(false));
        let mut n_tile_values: Vec<i64> = gemv_columns.iter().copied().chain(wide_tiles).collect();
        n_tile_values.dedup();
        // Past 256 rows on the warpgroup path: 320 (two warpgroups side by side beside a
        // producer warpgroup, Space::big_tile_wave_starts) and 384 (two stacked,
        // Space::tall_rows_start).
        let mut m_tile_values = tile_values.clone();
        if flat {
            m_tile_values.extend(constraints::flat_tile_sides(staged));
            n_tile_values.extend(constraints::flat_tile_sides(staged));
            m_tile_values.sort_unstable();
            m_tile_values.dedup();
            n_tile_values.sort_unstable();
            n_tile_values.dedup();
        }
        if wgmma && problem.m > 256 {
            m_tile_values.extend([320, 384]);
        }
        let domains = vec![
            Domain::choice(ParamId::MacroTile0, m_tile_values, 128),
            Domain::choice(ParamId::MacroTile1, n_tile_values, n_tile),
            // 8-bit types take twice the K per instruction and per 128-byte row.
            // 8 k a stage on the FMA path only: its loop body of 8 x 128 FFMAs is what the
            // f32 default runs (prefer_fma); matrix instructions take 16 k or more a step.
            Domain::pow2(
                ParamId::DepthU,
                if shapes.is_empty() { 8 } else { 16 },
                if ea == 1 { 256 } else { 128 },
                64,
            ),
            Domain::choice(ParamId::MatrixInstruction, mi_values.clone(), mi_values[0]),
            Domain::choice(ParamId::WavesM, waves_m, 2),
            // Eight waves a batch on the flat batch path, for its widest batches.
            Domain::pow2(
                ParamId::WavesN,
                1,
                if flat { 8 } else { 4 },
                if problem.n <= 64 { 1 } else { 2 },
            ),
            // Deeper pipelines than 4 stages are for the wgmma path (constraints::MAX_STAGES_WGMMA).
            Domain::range(
                ParamId::PrefetchGlobalRead,
                1,
                if wgmma {
                    constraints::MAX_STAGES_WGMMA as i64
                } else {
                    constraints::MAX_STAGES as i64
                },
                1,
                if nvidia { 3 } else { 2 },
            ),
            Domain::range(ParamId::PrefetchLocalRead, 0, 1, 1, 1),
            Domain::choice(ParamId::LdsPadA, vec![0, 4, 8], 16 / ea),
            Domain::choice(ParamId::LdsPadB, vec![0, 4, 8], 16 / ea),
            Domain::choice(ParamId::LdsSwizzle, vec![0, 1], 0),
            // 128 ways only where named (opt-in): a tile or two with a K of hundreds of
            // thousands (Space::few_tile_long_k_starts); in the searched domain it would
            // take the whole Hopper space past the enumeration bound.
            Domain::choice(
                ParamId::GlobalSplitU,
                vec![1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 64],
                default_split(problem, hw, n_tile),
            )
            .with_opt_in(vec![WIDEST_SPLIT]),
            Domain::choice(ParamId::GlobalSplitUAlgorithm, vec![0, 1, 2, 3], 1),
            Domain::choice(ParamId::WorkGroupMapping, vec![1, 2, 4, 8, 16, 32], 8),
            Domain::pow2(ParamId::GlobalReadVectorWidth, 1, 16 / ea, 16 / ea),
            Domain::pow2(ParamId::StoreVectorWidth, 1, 16 / ed, (8 / ed).max(1)),
            Domain::choice(ParamId::StaggerU, vec![0, 1, 2, 4, 8], 0),
            // 2, a producer warpgroup handing its registers to the two warpgroups of a
            // persistent tile (232 accumulator registers a thread instead of 168: 192x192,
            // swapped 160x256, 256x128), is opt-in (`--fix ProducerWarp=0,1,2`) and taken by
            // the starts where it won (Space::producer_warpgroup_starts,
            // Space::large_producer_warpgroup_start): elsewhere the same tiles tied or lost to
            // 128x192 and 128x256 with the producer warp (docs/performance.md).
            Domain::choice(
                ParamId::ProducerWarp,
                if wgmma { vec![0, 1] } else { vec![0] },
                0,
            )
            .with_opt_in(if wgmma { vec![2] } else { Vec::new() }),
            Domain::choice(
                ParamId::SwapAB,
                if wgmma || gemv_along_n {
                    vec![0, 1]
                } else {
                    vec![0]
                },
                0,
            ),
            // 2, ping-pong, is opt-in (`--fix PersistentKernel=0,1,2`): on the
            // mid-size GEMMs it was built for it ran 1-2% faster than the same tile with one
            // warpgroup, and slower on every other shape measured (docs/performance.md)...
            // except for K of at most two 128-byte rows, where a tile's time is its store and
            // one warpgroup's store runs under the other's loads and products
            // (Space::short_k_ping_pong_start), for 16- and 8-bit operands with K up to
            // 1024 (2048 into an f32 D), where the store still costs a few K steps
            // (Space::moderate_k_ping_pong_start), and for tf32, whose f32 tiles take twice
            // the bytes to store (Space::tf32_ping_pong_start): there the search takes it.
            Domain::choice(
                ParamId::PersistentKernel,
                match (
                    wgmma,
                    problem.k <= two_line_depth(problem)
                        || moderate_k_ping_pong_kind(problem)
                        || problem.reads_f32_as_tf32(),
                ) {
                    (true, true) => vec![0, 1, 2],
                    (true, false) => vec![0, 1],
                    (false, _) => vec![0],
                },
                0,
            )
            .with_opt_in(if wgmma { vec![2] } else { Vec::new() }),
            Domain::choice(ParamId::Gemv, if gemv { vec![0, 1] } else { vec![0] }, 0),
            // Clusters sharing A where the warpgroup path runs: opt-in (`--fix ClusterN=1,2`),
            // since pairs ran no faster than single workgroups on every shape measured
            // (docs/performance.md says by how much).
            // ... except where A's rows are only 16-byte aligned: there pairs sharing A halve
            // the L2 requests its tensor-map loads cost, and the search takes them
            // (Space::unaligned_a_starts).
            cluster_domain(ParamId::ClusterN, wgmma, unaligned_a),
            // Operands transposed into K-major LDS packs where one is M- or N-contiguous and
            // the matrix-core LDS path runs: searched on AMD, whose atoms would otherwise
            // gather such an operand one element per LDS read; opt-in on NVIDIA
            // (`--fix TransposeLDS=0,1`), where ldmatrix.trans reads it in one instruction.
            Domain::choice(
                ParamId::TransposeLds,
                if transposable && !nvidia {
                    vec![0, 1]
                } else {
                    vec![0]
                },
                0,
            )
            .with_opt_in(if transposable && nvidia {
                vec![1]
            } else {
                Vec::new()
            }),
            // Clusters along M sharing B: the mirror of ClusterN, searched where B's rows are
            // only 16-byte aligned (Space::unaligned_b_starts), opt-in elsewhere.
            cluster_domain(ParamId::ClusterM, wgmma, unaligned_b),
            // Operands with rows aligned to 16 bytes only, and an N-major B off the 128-byte
            // lines, copied into aligned rows first, where the warpgroup path reads them
            // through tensor maps (Space::packed_twins starts the search on both).
            Domain::choice(
                ParamId::PackUnaligned,
                if wgmma {
                    constraints::pack_unaligned_values(problem)
                } else {
                    vec![0]
                },
                0,
            ),
            // K-contiguous operands copied M- or N-major first where only the FMA path
            // applies (f32 inputs), on NVIDIA (Space::prefer_fma says where by default).
            Domain::choice(
                ParamId::PackMnMajor,
                if shapes.is_empty() {
                    constraints::pack_mn_major_values(problem, hw)
                } else {
                    vec![0]
                },
                0,
            ),
            // Many small batches, each computed whole from flat LDS images (flat_batch.rs).
            Domain::choice(
                ParamId::FlatBatch,
                std::iter::once(0).chain(flat_values).collect(),
                0,
            ),
        ];
        let mut space = Space {
            domains,
            problem: problem.clone(),
            hw: hw.clone(),
            only: None,
        };
        let walk_batches = problem.batch > constraints::MAX_GRID_YZ;
        if wgmma {
            if walk_batches {
                space.prefer_batch_walk();
            }
            space.prefer_wgmma();
        } else if shapes.is_empty() {
            space.prefer_fma();
        } else if transposable && !nvidia {
            space.prefer_transpose_lds();
        }
        // Again after: the tiny-M tiles prefer_wgmma may take come from a data-parallel
        // space of their own (small_m.rs).
        if walk_batches && wgmma {
            space.prefer_batch_walk();
        }
        space
    }

    /// More batches than a launch grid's layers on the warpgroup path: the default walks them
    /// on the persistent kernel. This comes before [`Space::prefer_wgmma`], which keeps its
    /// tile only where that tile is valid: the data-parallel tile, which folds those batches
    /// into its grid's y (constraints' `launch-grid`), measured slower there under sim
    /// (64x64x64 x70000: 411 us on the persistent 64x64 tile). Elsewhere the data-parallel
    /// kernels fold the batches and keep their own defaults (stream-K, the only walk before
    /// the fold, read 2x2x2 x65536 one element at a time: 459 us [cuBLASLt 53], H200).
    fn prefer_batch_walk(&mut self) {
        *self = self.preferring(&[(ParamId::PersistentKernel, 1), (ParamId::ProducerWarp, 1)]);
    }

    /// On AMD's matrix-core path an M- or N-contiguous operand is transposed into K-major LDS
    /// packs by default (unpadded: the packs carry their own swizzle), so that the MFMA
    /// operands are read in 8- and 16-byte LDS reads rather than gathered one element at a
    /// time. Compile-checked only: no AMD GPU has timed either (README, "AMD targets").
    fn prefer_transpose_lds(&mut self) {
        let mut prefs = vec![(ParamId::TransposeLds, 1)];
        if !self.problem.k_contiguous(true) {
            prefs.push((ParamId::LdsPadA, 0));
        }
        if !self.problem.k_contiguous(false) {
            prefs.push((ParamId::LdsPadB, 0));
        }
        // Unconditionally: where the default's tile does not fit as it is, the default's
        // repair shrinks it as it would without TransposeLDS (the transposed tile takes no more
        // LDS than the stored one).
        *self = self.preferring(&prefs);
    }

    /// This space with each preferred value as its parameter's default, where the domain
    /// holds it (the others keep theirs).
    pub(super) fn preferring<'a>(
        &self,
        prefs: impl IntoIterator<Item = &'a (ParamId, i64)>,
    ) -> Space {
        let mut s = self.clone();
        for &(id, v) in prefs {
            if s.domain(id).contains(v) {
                s.domain_mut(id).default = v;
            }
        }
        s
    }

    /// The default of this space with each preferred value taken, where that config is
    /// valid: how a start that needs no deeper search than its preferences is made.
    pub(super) fn valid_start<'a>(
        &self,
        prefs: impl IntoIterator<Item = &'a (ParamId, i64)>,
    ) -> Option<KernelConfig> {
        let c = self.preferring(prefs).raw_default();
        self.is_valid(&c).then_some(c)
    }

    /// Where the warpgroup path applies (Hopper, both operands K-contiguous), it is the fast
    /// one: make its typical config the default, so that `bench` and the local searches start
    /// there. A wgmma config differs from an mma.sync one in several coupled parameters at
    /// once (instruction, waves, LDS swizzle and padding, pipeline depth), which no single
    /// search step crosses.
    fn prefer_wgmma(&mut self) {
        let ed = self.problem.d_type.bytes() as i64;
        let operands = wgmma_operand_prefs(&self.problem);
        let prefs = [
            (ParamId::WavesM, 8),
            (ParamId::WavesN, 1),
            (ParamId::PrefetchGlobalRead, 6),
            (ParamId::PrefetchLocalRead, 0),
            // 16-byte stores where ldd (and ldc, if read) allow them: the widest power of
            // two dividing both (a skinny M of 4 or 12 stores 4 elements at a time).
            (
                ParamId::StoreVectorWidth,
                self.widest_store((16 / ed).max(1)),
            ),
        ];
        // Wide problems: a 128x256 tile, two warpgroups of 64x256 each, four stages, one
        // stage left in the tensor cores while the next is issued. Measured on an H200, same
        // call, twice (cuBLASLt 172.4-172.6 us): 4096^3 190.7-191.5 us on WG8x1 against
        // 211.6-214.9 on four warpgroups of 64x128 (WG8x2) and 194.2-196.2 on WG8x2 with the
        // producer warp. One warpgroup column with a deeper pipeline otherwise.
        // N just past 256 (up to 512): one N tile covering N, two warpgroups along it (each
        // half of it, at most 256 columns) on 64 rows, so that A is read once, not once per
        // 256 columns.
        let one_n_tile = self.problem.n > 256
            && self.problem.n <= constraints::MAX_WGMMA_TILE as i64
            && self
                .domain(ParamId::MacroTile1)
                .contains((self.problem.n + 15) / 16 * 16);
        let wide: &[(ParamId, i64)] = if one_n_tile {
            &[
                (ParamId::MacroTile1, (self.problem.n + 15) / 16 * 16),
                (ParamId::MacroTile0, 64),
                (ParamId::WavesM, 4),
                (ParamId::WavesN, 2),
                (ParamId::PrefetchLocalRead, 1),
            ]
        } else if self.problem.n >= 256 {
            &[
                (ParamId::MacroTile1, 256),
                (ParamId::PrefetchGlobalRead, 4),
                (ParamId::PrefetchLocalRead, 1),
            ]
        } else {
            &[]
        };
        let small = if self.problem.n < 256 {
            self.small_wgmma_tile()
        } else {
            Vec::new()
        };
        // M up to 64: one warpgroup's 64 rows (a 128-row tile is larger than M needs; up to 32
        // only the transposed tiles fit, below).
        let short_m: &[(ParamId, i64)] = if self.problem.m <= 64 {
            &[(ParamId::MacroTile0, 64), (ParamId::WavesM, 4)]
        } else {
            &[]
        };
        let candidate = self.preferring(
            operands
                .iter()
                .chain(&prefs)
                .chain(wide)
                .chain(short_m)
                .chain(&small),
        );
        // Small tiles, and the single N tile, stream with as many stages as fit.
        let candidate = if small.is_empty() && !one_n_tile {
            Some(candidate)
        } else {
            candidate.with_deepest_pipeline(&[])
        };
        if let Some(c) = candidate.filter(|c| c.is_valid(&c.raw_default())) {
            *self = c;
        } else if let Some(tiny) = self.tiny_m_space(TINY_M_TILES[0]) {
            // M up to 32, where no 64-row tile is valid: the transposed 16- or 32-row tile.
            *self = tiny;
        }
        if let Some(swapped) = self.swapped_start() {
            *self = swapped;
        }
    }

    /// The widest store vector up to `most` elements that the store-alignment rule takes
    /// (ldd, and ldc where beta reads C, its multiples).
    pub(super) fn widest_store(&self, most: i64) -> i64 {
        let mut v = most.max(1);
        while v > 1 && !constraints::stores_aligned(&self.problem, v) {
            v /= 2;
        }
        v
    }

    /// The widest read vector up to `most` elements that the alignment rule takes (lda, ldb
    /// and, batched, the strides, its multiples).
    pub(super) fn widest_read(&self, most: i64) -> i64 {
        constraints::widest_aligned_read(&self.problem, most)
    }

    /// Skinny problems (N <= 128) whose unswapped start quantises badly onto the compute units
    /// start swapped (SwapAB=1), on the M tile in steps of 16 that streams the fewest operand
    /// rows per compute unit (waves x (A rows + B rows of a tile); B rows past N cost nothing,
    /// the tensor maps zero-fill them), if that is 10% fewer than the unswapped start's.
    /// Measured on an H100, same run (cuBLASLt in brackets): 10240x128x8192 66.4 us on
    /// MT80x128 (128 tiles) against 69.0 on MT128x128 (80 tiles) [65.3]; 6144x64x4096 23.9 on
    /// MT48x64 against 24.5 on MT64x64 [23.1]; 37888x64x3584 102.1 on MT144x64 (exactly two
    /// waves) against 104.9 on MT128x64 [103.9].
    fn swapped_start(&self) -> Option<Space> {
        let p = &self.problem;
        let start = self.raw_default();
        if p.n > 128 || start.sab != 0 || !self.domain(ParamId::SwapAB).contains(1) {
            return None;
        }
        let cus = self.hw.compute_units as i64;
        // Rows streamed per compute unit, in units of 1/split of K.
        let rows_per_cu = |mt0: i64, mt1: i64, split: i64| {
            (tile_count(p, mt0, mt1) * split + cus - 1) / cus * (mt0 + mt1.min(p.n))
        };
        let split = start.gsu.max(1) as i64;
        let unswapped = rows_per_cu(start.mt0 as i64, start.mt1 as i64, split);
        let mt1 = (p.n + 63) / 64 * 64;
        // Fewest rows per compute unit without a split, among tiles that fill a wave (where
        // none does, the split start stays); the larger tile on a tie.
        let (rows, mt0) = (2..=16)
            .map(|i| i * 16)
            .filter(|&mt0| fills_wave(tile_count(p, mt0, mt1), &self.hw))
            .map(|mt0| (rows_per_cu(mt0, mt1, 1) * split, -mt0))
            .min()?;
        if rows * 10 > unswapped * 9 {
            return None;
        }
        self.with_deepest_pipeline(&[
            (ParamId::SwapAB, 1),
            (ParamId::MacroTile0, -mt0),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, 1),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::GlobalSplitU, 1),
        ])
    }

    /// This space with `prefs` as its start and the deepest pipeline that fits in LDS, up to
    /// START_STAGES_MAX stages (at least 3); `None` when no depth makes a valid config.
    pub(super) fn with_deepest_pipeline(&self, prefs: &[(ParamId, i64)]) -> Option<Space> {
        self.with_pipeline_up_to(prefs, START_STAGES_MAX)
    }

    /// [`Space::with_deepest_pipeline`] up to `most` stages.
    pub(super) fn with_pipeline_up_to(&self, prefs: &[(ParamId, i64)], most: i64) -> Option<Space> {
        let mut base = self.clone();
        for &(id, v) in prefs {
            base.domain_mut(id).default = v;
        }
        let depths = &self.domain(ParamId::PrefetchGlobalRead).values;
        depths
            .iter()
            .rev()
            .copied()
            .filter(|pgr| (3..=most).contains(pgr))
            .find_map(|pgr| {
                let mut candidate = base.clone();
                candidate.domain_mut(ParamId::PrefetchGlobalRead).default = pgr;
                candidate
                    .is_valid(&candidate.raw_default())
                    .then_some(candidate)
            })
    }

    /// Skinny problems whose 128-row tiles fill less than half of the compute units start
    /// from one warpgroup on 64 rows (and 64 columns where that is still short of a full
    /// wave), as deep as fits (up to START_STAGES_MAX), without split-K when the smaller
    /// tiles fill the GPU. Measured
    /// on an H200, same run: 4096x128x4096 18.3 us (MT64x64, no split) against 26.9 (MT128x128)
    /// and 22.4 (MT128x128, GSU4R); 6144x64x4096 19.9 against 21.5. With half a wave or more
    /// of 128-row tiles the bigger tile stays: 10240x128x8192 (80 tiles) ran 53 us on
    /// MT128x128 against 68-83 us on 64-row tiles (1.2 and 2.4 waves). These start with the
    /// producer warp: 4096x128x4096 on MT64x64 PGR8 ran 17.0-17.2 us with it against
    /// 17.8-18.0 without (H200, same run); with one stage left in the tensor cores while the
    /// next is issued (PrefetchLocalRead 1), and the N tiles of a row of A side by side
    /// (WorkGroupMapping 1) where N spans several. H100, same call (cuBLASLt in brackets),
    /// e4m3 on MT64x64 PGR12: 4096x128x4096 13.0 us -> 12.4 (PLR1) -> 11.9 (and WGM1) [11.3];
    /// 4096x128x14336 30.6 -> 28.3 -> 27.8 [27.1]; 8192x64x8192 29.4 -> 28.8 [29.0]; bf16
    /// 3584x160x18944 on MT64x80 65.1 -> 59.3 [65.8].
    fn small_wgmma_tile(&self) -> Vec<(ParamId, i64)> {
        let p = &self.problem;
        let n_tile = self.domain(ParamId::MacroTile1).default;
        if tile_count(p, 128, n_tile) * 2 >= self.hw.compute_units as i64 {
            return Vec::new();
        }
        // The whole N tile where it fills a wave, or where its last wave is as full as that of
        // 64-column tiles (which read each row of A once per column tile): 7168x128x2048 e4m3
        // ran 9.9 us on 64x128 (112 tiles, one wave at 85%) against 10.8 on 64x64 (224 tiles,
        // two waves at 85%; H200, same call, cuBLASLt 9.6).
        let whole = tile_count(p, 64, n_tile);
        let mt1 = if fills_wave(whole, &self.hw)
            || n_tile <= 64
            || wave_fill(whole, &self.hw) >= wave_fill(tile_count(p, 64, 64), &self.hw)
        {
            n_tile
        } else {
            64
        };
        let split = default_split_for(p, &self.hw, 64, mt1);
        let mut prefs = vec![
            (ParamId::MacroTile0, 64),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::GlobalSplitU, split),
            (ParamId::ProducerWarp, 1),
            (ParamId::PrefetchLocalRead, 1),
        ];
        if mt1 < p.n {
            prefs.push((ParamId::WorkGroupMapping, 1));
        }
        prefs
    }

    /// Every start besides the default the first batch of a search should measure (valid in
    /// this space: a replayed sweep's space holds only what was recorded).
    ///
    /// A replayed sweep's space holds only what was recorded, which rarely includes the starts
    /// themselves: there each start of the full space is replaced by the recorded config
    /// nearest to it (most parameters equal, of the same kernel family), so a replay starts on
    /// the same families a run on the GPU would (on the recorded 4096x1x4096 sweep the GEMV
    /// starts were never recorded, and the search never reached the GEMV kernels).
    pub fn extra_starts(&self) -> Vec<KernelConfig> {
        // The replay's domains are narrowed to the recorded values too: its starts come from
        // the problem's whole space.
        let full = if self.only.is_some() {
            Space::for_problem(&self.problem, &self.hw)
        } else {
            self.clone()
        };
        let default = self.default_config().ok();
        let mut out: Vec<KernelConfig> = Vec::new();
        // Many small batches' own path first (flat_batch.rs), then an operand the tensor maps
        // cannot read, on many small batches or a problem bound by
        // memory, first: there the default's copy of it costs about as much as the GEMM
        // (small_batch.rs, unreadable.rs). Then the
        // one-wave cuts: where they apply the default's tiles leave most compute units idle,
        // and bench's default set takes the first few starts only.
        let starts: Vec<KernelConfig> = full
            .flat_batch_starts()
            .into_iter()
            .chain(full.small_batch_starts())
            .chain(full.unreadable_operand_start())
            .chain(full.tiny_k_starts())
            .chain(full.fma_tiny_k_start())
            .chain(full.fma_short_k_starts())
            .chain(full.narrow_n_start())
            .chain(full.narrow_n_tall_start())
            .chain(full.unswapped_twin_start())
            .chain(full.n_pair_start())
            .chain(full.three_warpgroup_start())
            .chain(full.tall_rows_start())
            .chain(full.three_warpgroup_waves_start())
            .chain(full.few_tile_even_start())
            .chain(full.swapped_one_wave_start())
            .chain(full.few_tile_n_major_starts())
            .chain(full.n_major_exact_starts())
            .chain(full.few_tile_wave_starts())
            .chain(full.split_start())
            .chain(full.skinny_split_start())
            .chain(full.long_k_split_start())
            .chain(full.square_split_start())
            .chain(full.wide_square_split_start())
            .chain(full.fma_batch_wave_start())
            .chain(full.fma_small_tile_split_starts())
            .chain(full.fma_split_start())
            .chain(full.fma_stream_k_start())
            .chain(full.fma_alignment_twin_start())
            .chain(full.tf32_ping_pong_start())
            .chain(full.fma_wave_starts())
            .chain(full.stream_k_start())
            .chain(full.few_tile_long_k_starts())
            .chain(full.wide_n_starts())
            .chain(full.n_fit_starts())
            .chain(full.many_wave_n_fit_start())
            .chain(full.few_tile_swapped_start())
            .chain(full.few_tile_swapped_split_start())
            .chain(full.even_m_swapped_starts())
            .chain(full.half_n_split_starts())
            .chain(full.full_n_split_start())
            .chain(full.persistent_start())
            .chain(full.batched_persistent_starts())
            .chain(full.wave_fit_start())
            .chain(full.swapped_wave_start())
            .chain(full.tall_wave_start())
            .chain(full.short_k_start())
            .chain(full.short_k_tile_start())
            .chain(full.short_k_ping_pong_start())
            .chain(full.moderate_k_ping_pong_start())
            .chain(full.tiny_m_starts())
            .chain(full.gemv_starts())
            // Rows aligned to 16 bytes only (unaligned.rs): large tiles and pairs sharing an
            // operand first, copies into aligned rows after them (docs/performance.md, "128-byte
            // L2 promotion").
            .chain(full.producer_warpgroup_starts())
            .chain(full.paired_twins())
            .chain(full.unaligned_a_starts())
            .chain(full.unaligned_b_starts())
            .chain(full.packed_twins())
            .chain(full.unaligned_pair_pack_start())
            .chain(full.few_tile_persistent_starts())
            .chain(full.large_producer_warpgroup_start())
            .chain(full.one_row_pair_start())
            .chain(full.swapped_wide_wave_start())
            // Last: where the set is full it yields to the starts above (measured on fewer
            // kinds of problem).
            .chain(full.big_tile_wave_starts())
            .chain(full.one_warpgroup_wave_starts())
            .collect();
        // Each stream-K twin, and with beta each data-parallel twin, right after its start
        // (the default's first): the strategies take the starts in order, as many as their
        // first batch holds. A start whose tiles all run at once takes the tile order that
        // places them best (tile_order.rs).
        let with_twins: Vec<KernelConfig> = default
            .iter()
            .chain(&starts)
            .flat_map(|c| {
                let twins = full.stream_k_twin(c).into_iter();
                std::iter::once(*c).chain(twins.chain(full.beta_data_parallel_twin(c)))
            })
            .map(|c| full.tile_order(&c))
            .collect();
        for c in with_twins
            .into_iter()
            .filter_map(|c| self.nearest_recorded(&c))
        {
            if !out.contains(&c) && Some(c) != default && self.is_valid(&c) {
                out.push(c);
            }
        }
        out
    }

    /// `c` itself, or in a replayed space the recorded config with the most parameters equal
    /// to it among those of its kernel family (GEMV or tiles); the first by name on a tie.
    fn nearest_recorded(&self, c: &KernelConfig) -> Option<KernelConfig> {
        let Some(only) = &self.only else {
            return Some(*c);
        };
        if only.contains(&c.canonical()) {
            return Some(c.canonical());
        }
        let same = |r: &KernelConfig| ParamId::ALL.iter().filter(|p| p.get(r) == p.get(c)).count();
        only.iter()
            .filter(|r| r.gv == c.gv)
            .max_by(|a, b| same(a).cmp(&same(b)).then_with(|| b.name().cmp(&a.name())))
            .copied()
    }

    pub fn domain(&self, id: ParamId) -> &Domain {
        self.domains
            .iter()
            .find(|d| d.id == id)
            .expect("every ParamId has a domain")
    }

    pub fn domain_mut(&mut self, id: ParamId) -> &mut Domain {
        self.domains
            .iter_mut()
            .find(|d| d.id == id)
            .expect("every ParamId has a domain")
    }

    /// Narrows one parameter to the given values (`--fix DepthU=32,64`).
    pub fn fix(&mut self, name: &str, values: &str) -> Result<(), SpaceError> {
        let id = ParamId::from_name(name).ok_or_else(|| {
            SpaceError::UnknownParam(name.to_string(), ParamId::ALL.map(|p| p.name()).join(", "))
        })?;
        let dom = self.domain(id).clone();
        let allowed = || {
            dom.values
                .iter()
                .chain(&dom.opt_in)
                .map(|v| id.format_value(*v))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut keep = Vec::new();
        for raw in values.split([',', ';']).filter(|s| !s.trim().is_empty()) {
            match id.parse_value(raw) {
                Some(v) if dom.admits(v) => keep.push(v),
                _ => {
                    return Err(SpaceError::BadValue {
                        param: id.name(),
                        value: raw.trim().to_string(),
                        allowed: allowed(),
                    })
                }
            }
        }
        self.domain_mut(id).restrict(&keep);
        // TransposeLDS=1 alone runs on the matrix-core LDS path only: where the default is a
        // warpgroup kernel, that path's typical config becomes the default (no repair step
        // crosses from one path to the other).
        if id == ParamId::TransposeLds && !keep.contains(&0) {
            self.prefer_lds_matrix_path();
        }
        Ok(())
    }

    /// The matrix-core LDS path's typical config as the default where the default is a
    /// warpgroup (wgmma) one: the first other instruction shape, a 128x128 tile on 2x2 waves,
    /// three stages of 32 k with the next fragments read ahead, swizzled LDS rows.
    fn prefer_lds_matrix_path(&mut self) {
        let mi = self.domain(ParamId::MatrixInstruction);
        let wgmma = constraints::wgmma_mi(self.problem.a_type);
        if mi.default != pack_mi(wgmma) {
            return;
        }
        let Some(&other) = mi
            .values
            .iter()
            .find(|&&v| v != pack_mi(wgmma) && v != pack_mi([1, 1, 1]))
        else {
            return;
        };
        let prefs = [
            (ParamId::MatrixInstruction, other),
            (ParamId::MacroTile0, 128),
            (ParamId::MacroTile1, 128),
            (ParamId::WavesM, 2),
            (ParamId::WavesN, 2),
            (ParamId::DepthU, 32),
            (ParamId::PrefetchGlobalRead, 3),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::LdsSwizzle, 1),
            (ParamId::LdsPadA, 0),
            (ParamId::LdsPadB, 0),
            (ParamId::ProducerWarp, 0),
            (ParamId::SwapAB, 0),
            (ParamId::PersistentKernel, 0),
        ];
        *self = self.preferring(&prefs);
    }

    /// The number of points in the product of the domains (valid or not).
    pub fn size(&self) -> u128 {
        self.domains
            .iter()
            .map(|d| d.values.len() as u128)
            .product()
    }

    pub fn check(&self, c: &KernelConfig) -> Result<(), Violation> {
        for d in &self.domains {
            let v = d.id.get(c);
            // The split algorithm is irrelevant (and canonicalised) without a split.
            if d.id == ParamId::GlobalSplitUAlgorithm
                && c.gsu <= 1
                && c.gsu_algo != GsuAlgo::StreamK
            {
                continue;
            }
            if !d.admits(v) {
                return Err(Violation {
                    rule: "domain",
                    message: format!(
                        "{}={} is outside the space ({})",
                        d.id.name(),
                        d.id.format_value(v),
                        d.values
                            .iter()
                            .map(|x| d.id.format_value(*x))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
        constraints::check(c, &self.problem, &self.hw)?;
        self.check_recorded(c)
    }

    fn check_recorded(&self, c: &KernelConfig) -> Result<(), Violation> {
        match &self.only {
            Some(only) if !only.contains(&c.canonical()) => Err(Violation {
                rule: "recorded",
                message: format!("{} is not in the recorded sweep", c.name()),
            }),
            _ => Ok(()),
        }
    }

    pub fn is_valid(&self, c: &KernelConfig) -> bool {
        self.check(c).is_ok()
    }

    fn config_from_values(&self, values: &[i64]) -> KernelConfig {
        let mut c = blank();
        for (d, v) in self.domains.iter().zip(values) {
            d.id.set(&mut c, *v);
        }
        c.canonical()
    }

    /// The config made of every domain's default, valid or not.
    pub fn raw_default(&self) -> KernelConfig {
        let values: Vec<i64> = self.domains.iter().map(|d| d.default).collect();
        self.config_from_values(&values)
    }

    /// The defaults of every domain, repaired to a valid config if the raw defaults are not.
    pub fn default_config(&self) -> Result<KernelConfig, SpaceError> {
        let c = self.raw_default();
        if self.is_valid(&c) {
            // Its tiles in the order that places them best where they all run at once, as
            // every start takes it (tile_order.rs).
            return Ok(self.tile_order(&c));
        }
        // Where no tile kernel is a few changes from the default (M or N of a few elements
        // whose leading dimensions no tile's vectors divide, as 7x1024x16 NT on an MI300X), the
        // GEMV path may still take the problem, and failing that a config drawn from the
        // whole space (a fixed seed: the default stays the same from run to run).
        self.repair(&c)
            .or_else(|| self.gemv_starts().into_iter().find(|g| self.is_valid(g)))
            .or_else(|| self.smallest_tile())
            .or_else(|| self.sample(&mut rand::rngs::StdRng::seed_from_u64(0)))
            .ok_or_else(|| SpaceError::Empty(self.problem.label()))
    }

    /// The smallest tile this space holds, one wave, read and stored one element at a time,
    /// on each of its instructions from the smallest up, transposed too where the space takes
    /// SwapAB: what alignment and size leave to a problem of a few unaligned rows (valid
    /// configs are too rare there for random draws to meet), repaired from there where
    /// needed.
    fn smallest_tile(&self) -> Option<KernelConfig> {
        // The FMA "instruction" (1x1x1) only where the space has no matrix instruction: beside
        // them it is the GEMV path's.
        let fma = pack_mi([1, 1, 1]);
        let values = &self.domain(ParamId::MatrixInstruction).values;
        let mut instructions: Vec<i64> = values
            .iter()
            .copied()
            .filter(|&v| v != fma || values.len() == 1)
            .collect();
        instructions.sort_by_key(|&v| {
            let [m, n, k] = unpack_mi(v);
            (m * n, k)
        });
        let least = |id: ParamId| self.domain(id).values.iter().copied().min();
        let mut small = Vec::new();
        for id in [
            ParamId::MacroTile0,
            ParamId::MacroTile1,
            ParamId::WavesM,
            ParamId::WavesN,
            ParamId::GlobalReadVectorWidth,
            ParamId::StoreVectorWidth,
            ParamId::GlobalSplitU,
        ] {
            small.push((id, least(id)?));
        }
        let swaps = &self.domain(ParamId::SwapAB).values;
        instructions.into_iter().find_map(|mi| {
            swaps.iter().find_map(|&sab| {
                let mut prefs = small.clone();
                if unpack_mi(mi)[0] == 64 {
                    // The warpgroup instruction: its operand side, and its 64 rows along M
                    // (along N transposed).
                    prefs.extend(wgmma_operand_prefs(&self.problem));
                    let rows = if sab == 1 {
                        ParamId::MacroTile1
                    } else {
                        ParamId::MacroTile0
                    };
                    prefs.extend([(rows, 64), (ParamId::WavesM, 4)]);
                }
                prefs.extend([(ParamId::MatrixInstruction, mi), (ParamId::SwapAB, sab)]);
                // (repair returns a valid config as it is)
                self.repair(&self.preferring(&prefs).raw_default())
            })
        })
    }

    /// How far `c` gets through the rules: the domain check first, then the constraint
    /// rules in the order [`constraints::check`] applies them. Higher is closer to valid.
    fn progress(&self, c: &KernelConfig) -> usize {
        match self.check(c) {
            Ok(()) => usize::MAX,
            Err(v) if v.rule == "domain" => 0,
            // Past every constraint rule, only not recorded.
            Err(v) if v.rule == "recorded" => 1 + constraints::RULE_ORDER.len(),
            Err(v) => {
                1 + constraints::RULE_ORDER
                    .iter()
                    .position(|r| *r == v.rule)
                    .unwrap_or(0)
            }
        }
    }

    /// Single-parameter changes of `c`, closest values first.
    fn single_changes(&self, c: &KernelConfig) -> Vec<KernelConfig> {
        let mut out = Vec::new();
        for d in &self.domains {
            let v0 = d.id.get(c);
            let mut vals = d.values.clone();
            vals.sort_by_key(|v| (v - v0).abs());
            for v in vals.into_iter().filter(|v| *v != v0) {
                let mut cand = *c;
                d.id.set(&mut cand, v);
                out.push(cand.canonical());
            }
        }
        out
    }

    /// A valid config near `c`, by greedy repair: each step makes the change of one parameter
    /// (or, when no single change helps, of two) that gets furthest through the rules.
    pub fn repair(&self, c: &KernelConfig) -> Option<KernelConfig> {
        let mut cur = *c;
        let mut best = self.progress(&cur);
        // The repair stays on the config's side of FlatBatch: one change to it makes a small
        // batched problem's tile config valid at once, and took 8x8x64 x131072 NN f16's
        // default off its 16x16 mma.sync tile (170 us on an H200) onto the flat batch path
        // (382 us).
        let family = c.fb;
        for _ in 0..32 {
            if best == usize::MAX {
                return Some(cur);
            }
            let singles: Vec<KernelConfig> = self
                .single_changes(&cur)
                .into_iter()
                .filter(|n| n.fb == family)
                .collect();
            let mut step = singles
                .iter()
                .map(|n| (self.progress(n), *n))
                .filter(|(s, _)| *s > best)
                .max_by_key(|(s, _)| *s);
            if step.is_none() {
                step = singles
                    .iter()
                    .flat_map(|n| self.single_changes(n))
                    .filter(|n| n.fb == family)
                    .map(|n| (self.progress(&n), n))
                    .filter(|(s, _)| *s > best)
                    .max_by_key(|(s, _)| *s);
            }
            let (score, cand) = step?;
            best = score;
            cur = cand;
        }
        None
    }

    /// The parts of this space its enumeration reads.
    pub(super) fn view(&self) -> super::enumerate::SpaceView<'_> {
        super::enumerate::SpaceView {
            domains: &self.domains,
            start: self.raw_default(),
            problem: &self.problem,
            hw: &self.hw,
        }
    }

    /// Every valid config, in a fixed order (the product of the domains', last parameter
    /// fastest); errors when the product exceeds `limit` points. Built by construction
    /// (`enumerate.rs`), so the time follows the valid configs, not the product.
    pub fn enumerate(&self, limit: u128) -> Result<Vec<KernelConfig>, SpaceError> {
        let size = self.size();
        if size > limit {
            return Err(SpaceError::TooLarge { size, limit });
        }
        // A replayed space holds only what was recorded; the constraints cannot know that.
        Ok(super::enumerate::valid_configs(&self.view())
            .into_iter()
            .filter(|c| self.check_recorded(c).is_ok())
            .collect())
    }

    /// A uniformly random valid config (rejection sampling, repaired after many misses).
    /// On the Hopper space about one random point in 2,000 to 4,500 is valid (H200: 16032x109,
    /// 1024x64, 4096^3 and 10240x200 bf16), so [`SAMPLE_TRIES`] misses are rare.
    /// Where the flat batch path is searched beside the tile kernels, a family is drawn first
    /// (each half the time) and then a point of its own space: the path's tile sides in steps of
    /// 4 and its fixed parameters made almost every point of the whole space invalid for both,
    /// and drawing `tune`'s model candidates took 82 s of the CPU for 90x90x30 x5000 NN f16.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<KernelConfig> {
        let fb = self.domain(ParamId::FlatBatch);
        if fb.contains(0) && fb.values.len() > 1 {
            let family = if rng.gen_bool(0.5) {
                self.flat_batch_only()
            } else {
                let mut tiles = self.clone();
                tiles.without_flat_sides();
                Some(tiles)
            };
            if let Some(family) = family {
                return family.sample_points(rng);
            }
        }
        self.sample_points(rng)
    }

    /// [`Space::sample`] over the whole product of the domains.
    fn sample_points<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<KernelConfig> {
        for _ in 0..SAMPLE_TRIES {
            let values: Vec<i64> = self.domains.iter().map(|d| d.sample(rng)).collect();
            let c = self.config_from_values(&values);
            if self.is_valid(&c) {
                return Some(c);
            }
        }
        let values: Vec<i64> = self.domains.iter().map(|d| d.sample(rng)).collect();
        self.repair(&self.config_from_values(&values))
    }

    /// Valid configs one parameter step away from `c`: per parameter, the nearest value below
    /// and above the current one that makes a valid config (a 128-row warpgroup tile steps to
    /// 64 and 192, not to the invalid 112 and 144 between them); for a categorical parameter,
    /// each other value that makes a valid config.
    pub fn neighbors(&self, c: &KernelConfig) -> Vec<KernelConfig> {
        let mut out = Vec::new();
        for d in &self.domains {
            let v0 = d.id.get(c);
            let below = d.values.iter().rev().filter(|&&v| v < v0);
            let above = d.values.iter().filter(|&&v| v > v0);
            let valid = |v: &i64| {
                let mut n = *c;
                d.id.set(&mut n, *v);
                let n = n.canonical();
                (n != *c && self.is_valid(&n)).then_some(n)
            };
            // A categorical parameter steps to each of its other values; an ordinal one to
            // the closest value below and above (the domain's own neighbours of a v0 outside
            // it).
            let steps: Vec<KernelConfig> = if d.id.is_categorical() {
                d.values.iter().filter_map(valid).collect()
            } else if d.contains(v0) {
                below
                    .filter_map(valid)
                    .take(1)
                    .chain(above.filter_map(valid).take(1))
                    .collect()
            } else {
                d.neighbors(v0).iter().filter_map(valid).collect()
            };
            for n in steps {
                if !out.contains(&n) {
                    out.push(n);
                }
            }
        }
        out
    }
}

/// The default split-K: the smallest split that gives every compute unit a workgroup with the
/// default 128-row tiles, while each split keeps at least 64 iterations of DepthU 64 (splitting
/// short K only adds reduction traffic).
fn default_split(p: &GemmProblem, hw: &HwSpec, n_tile: i64) -> i64 {
    default_split_for(p, hw, 128, n_tile)
}

/// The split-K default for tiles of mt0 x mt1.
fn default_split_for(p: &GemmProblem, hw: &HwSpec, mt0: i64, mt1: i64) -> i64 {
    let tiles = tile_count(p, mt0, mt1.max(16));
    let iters = (p.k + 63) / 64;
    [1, 2, 3, 4, 6, 8]
        .into_iter()
        .find(|&s| fills_wave(tiles * s, hw) || iters / (s * 2) < 64)
        .unwrap_or(8)
}

/// Workgroups of mt0 x mt1 tiles that cover the problem, every batch included.
/// The domain of ClusterN or ClusterM: pairs searched where the operand they share has rows
/// aligned to 16 bytes only (`unaligned`), opt-in wherever the warpgroup path runs.
fn cluster_domain(id: ParamId, wgmma: bool, unaligned: bool) -> Domain {
    let opt_in = if wgmma {
        constraints::CLUSTER_SIZES
            .iter()
            .map(|&v| i64::from(v))
            .collect()
    } else {
        Vec::new()
    };
    Domain::choice(id, if unaligned { vec![1, 2] } else { vec![1] }, 1).with_opt_in(opt_in)
}

/// The warpgroup path's operand side, which the starts on it share: its instruction for A's
/// type reading swizzled, unpadded LDS tiles of one 128-byte swizzle row of K (DepthU).
pub(super) fn wgmma_operand_prefs(p: &GemmProblem) -> [(ParamId, i64); 5] {
    [
        (
            ParamId::MatrixInstruction,
            pack_mi(constraints::wgmma_mi(p.a_type)),
        ),
        (ParamId::LdsSwizzle, 1),
        (ParamId::LdsPadA, 0),
        (ParamId::LdsPadB, 0),
        (ParamId::DepthU, 128 / p.a_type.bytes() as i64),
    ]
}

/// Whether `extent` makes an even number of `tile`-sized tiles (so they pair up in clusters
/// of two).
pub(super) fn tiles_pair_up(extent: i64, tile: i64) -> bool {
    (extent + tile - 1) / tile % 2 == 0
}

/// A data-parallel warpgroup tile of mt0 x mt1 on one warpgroup per 64 rows, K split `split`
/// ways and summed in the kernel (GSU<n>K) where split, the producer warp loading, one stage
/// left in the tensor cores while the next is issued: the preferences of the starts that cut
/// few tiles into one wave ([`Space::square_split_start`], the one-wave starts).
pub(super) fn split_in_kernel_tile(mt0: i64, mt1: i64, split: i64) -> [(ParamId, i64); 10] {
    [
        (ParamId::MacroTile0, mt0),
        (ParamId::MacroTile1, mt1),
        (ParamId::WavesM, mt0 / 16),
        (ParamId::WavesN, 1),
        (ParamId::SwapAB, 0),
        (ParamId::GlobalSplitU, split),
        (ParamId::GlobalSplitUAlgorithm, 3),
        (ParamId::PersistentKernel, 0),
        (ParamId::ProducerWarp, 1),
        (ParamId::PrefetchLocalRead, 1),
    ]
}

/// The DepthU of two 128-byte rows of K a stage for A's element type (128 k in 16 bits, 256
/// in 8): the depth the few-tile and split starts stream at.
pub(super) fn two_line_depth(p: &GemmProblem) -> i64 {
    256 / p.a_type.bytes() as i64
}

/// Whether ping-pong joins the searched values for a K past two 128-byte rows: 16-bit or 8-bit
/// A and B with K of at most 1024, or 2048 into an f32 D, whose tiles take twice the bytes to
/// store ([`Space::moderate_k_ping_pong_start`] says where it won).
pub(super) fn moderate_k_ping_pong_kind(p: &GemmProblem) -> bool {
    let bytes = p.a_type.bytes();
    let depth = if p.d_type.bytes() == 4 {
        2 * MODERATE_K_PING_PONG_DEPTH
    } else {
        MODERATE_K_PING_PONG_DEPTH
    };
    bytes <= 2 && p.b_type.bytes() == bytes && p.k <= depth
}

/// The longest K of [`moderate_k_ping_pong_kind`] for a 16-bit D, in elements: sixteen
/// 128-byte rows of 16-bit values, eight of 8-bit ones.
const MODERATE_K_PING_PONG_DEPTH: i64 = 1024;

pub(super) fn tile_count(p: &GemmProblem, mt0: i64, mt1: i64) -> i64 {
    (p.m + mt0 - 1) / mt0 * ((p.n + mt1 - 1) / mt1) * p.batch.max(1)
}

/// How full the waves of `workgroups` are, in thousandths: the workgroups over the compute
/// units of the waves they take.
pub(super) fn wave_fill(workgroups: i64, hw: &HwSpec) -> i64 {
    let cus = (hw.compute_units as i64).max(1);
    let waves = ((workgroups + cus - 1) / cus).max(1);
    workgroups * 1000 / (waves * cus)
}

/// Whether `workgroups` are one full wave: within 10% of one per compute unit.
pub(super) fn fills_wave(workgroups: i64, hw: &HwSpec) -> bool {
    workgroups * 10 >= hw.compute_units as i64 * 9
}

fn blank() -> KernelConfig {
    KernelConfig {
        mt0: 0,
        mt1: 0,
        depth_u: 0,
        mi: [1, 1, 1],
        wg: [1, 1],
        pgr: 1,
        plr: 0,
        lpa: 0,
        lpb: 0,
        swizzle: 0,
        gsu: 1,
        gsu_algo: GsuAlgo::Reduce,
        wgm: 1,
        grvw: 1,
        svw: 1,
        su: 0,
        pw: 0,
        sab: 0,
        pk: 0,
        gv: 0,
        cn: 1,
        cm: 1,
        tlds: 0,
        pu: 0,
        pm: 0,
        fb: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{DataType, Trans};

    fn space(spec: &str) -> Space {
        let p = GemmProblem::new(16032, 109, 16384);
        Space::for_problem(&p, &HwSpec::by_name(spec).unwrap())
    }

    #[test]
    fn default_is_valid_on_every_gpu() {
        for (_, hw) in HwSpec::builtin() {
            for p in [
                GemmProblem::new(16032, 109, 16384),
                GemmProblem::new(4096, 4096, 4096),
                GemmProblem::new(17, 3, 5),
            ] {
                let s = Space::for_problem(&p, &hw);
                let c = s.default_config().unwrap();
                s.check(&c).unwrap();
            }
        }
    }

    #[test]
    fn transpose_lds_is_amds_default_for_mn_contiguous_operands_and_opt_in_on_nvidia() {
        let layout = |ta, tb| GemmProblem::with_layout(4096, 4096, 4096, ta, tb);
        let mi300 = HwSpec::by_name("MI300X").unwrap();
        for (ta, tb) in [
            (Trans::N, Trans::N),
            (Trans::N, Trans::T),
            (Trans::T, Trans::T),
        ] {
            let s = Space::for_problem(&layout(ta, tb), &mi300);
            let c = s.default_config().unwrap();
            s.check(&c).unwrap();
            assert_eq!(c.tlds, 1, "{}", c.name());
            assert_eq!(s.domain(ParamId::TransposeLds).values, vec![0, 1]);
            // The transposed operands are unpadded.
            assert!(ta == Trans::T || c.lpa == 0, "{}", c.name());
            assert!(tb == Trans::N || c.lpb == 0, "{}", c.name());
        }
        let tn = Space::for_problem(&layout(Trans::T, Trans::N), &mi300);
        assert_eq!(tn.domain(ParamId::TransposeLds).values, vec![0]);
        assert_eq!(tn.default_config().unwrap().tlds, 0);
        let mut h100 = Space::for_problem(
            &layout(Trans::N, Trans::N),
            &HwSpec::by_name("H100-SXM").unwrap(),
        );
        assert_eq!(h100.domain(ParamId::TransposeLds).values, vec![0]);
        h100.fix("TransposeLDS", "1").unwrap();
        let c = h100.default_config().unwrap();
        h100.check(&c).unwrap();
        assert_eq!((c.tlds, c.mi), (1, [16, 8, 16]), "{}", c.name());
    }

    #[test]
    fn wgmma_start_fills_the_gpu_on_small_skinny_problems() {
        let hw = HwSpec::by_name("H200").unwrap();
        let start = |m, n, k| {
            let s = Space::for_problem(&GemmProblem::new(m, n, k), &hw);
            let c = s.default_config().unwrap();
            s.check(&c).unwrap();
            c
        };
        // 32 tiles of 128x128 on 132 SMs: 128 tiles of 64x64, one warpgroup, no split.
        let c = start(4096, 128, 4096);
        assert_eq!((c.mt0, c.mt1, c.wg, c.pgr, c.gsu), (64, 64, [4, 1], 12, 1));
        assert!(constraints::is_wgmma(&c));
        // 112 tiles of 64x128 fill one wave to 85%, as 224 of 64x64 fill two: the whole N.
        let mut p = GemmProblem::new(7168, 128, 2048);
        (p.a_type, p.b_type) = (DataType::F8, DataType::F8);
        let s = Space::for_problem(&p, &hw);
        let c = s.default_config().unwrap();
        assert_eq!((c.mt0, c.mt1, c.gsu), (64, 128, 1));
        // 128 tiles of 64x128 are already a full wave; 12 stages of 24 KiB do not fit, the
        // deepest pipeline that does is taken.
        let c = start(7680, 128, 4096);
        assert_eq!((c.mt0, c.mt1, c.gsu, c.pgr), (64, 128, 1, 9));
        // 80 tiles of 128x128 are more than half a wave, but leave 52 SMs idle: 128 swapped
        // tiles of 80x128 stream 80 rows of A per SM instead of 128.
        let c = start(10240, 128, 8192);
        assert_eq!((c.mt0, c.mt1, c.wg, c.sab, c.pw), (80, 128, [4, 1], 1, 1));
        assert_eq!((c.pgr, c.plr, c.gsu), (8, 1, 1));
        // 296 tiles of 128x64 are three waves; 264 of 144x64 are two.
        let c = start(37888, 64, 3584);
        assert_eq!((c.mt0, c.mt1, c.sab), (144, 64, 1));
        // 96 tiles of 64x64 on 132 SMs: 128 swapped tiles of 48x64 (112 rows per SM, not 128).
        let c = start(6144, 64, 4096);
        assert_eq!((c.mt0, c.mt1, c.sab, c.pgr), (48, 64, 1, 12));
        // 126 tiles of 128x112 fill the GPU: the 128-row start stays, unswapped.
        let c = start(16032, 109, 16384);
        assert_eq!((c.mt0, c.mt1, c.wg, c.sab), (128, 112, [8, 1], 0));
        // 128 tiles of 64x64 fill it too (swapped, 32x128 tiles would stream 160 rows, not 128).
        assert_eq!(start(4096, 128, 4096).sab, 0);
        // Even 64x64 tiles leave SMs idle: split-K makes up the rest.
        let c = start(3584, 64, 18944);
        assert_eq!((c.mt0, c.mt1, c.pgr), (64, 64, 12));
        assert!(c.gsu > 1, "{}", c.name());
    }

    #[test]
    fn constraint_rejections_name_the_rule() {
        let s = space("H200");
        // An mma.sync config (the default on H200 is a wgmma one).
        let sync = KernelConfig::parse(
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU2R_WGM8_GRVW8_SVW4_SU0",
        )
        .unwrap();
        s.check(&sync).unwrap();
        let mut c = sync;
        c.mi = [32, 32, 8];
        assert_eq!(s.check(&c).unwrap_err().rule, "domain");
        assert_eq!(
            constraints::check(&c, &s.problem, &s.hw).unwrap_err().rule,
            "matrix-instruction"
        );
        let mut c = sync;
        c.wg = [8, 8];
        assert_eq!(
            constraints::check(&c, &s.problem, &s.hw).unwrap_err().rule,
            "threads"
        );
        let mut c = sync;
        c.swizzle = 1;
        c.lpa = 8;
        assert_eq!(s.check(&c).unwrap_err().rule, "lds-layout");
        // 64 KiB of LDS on MI300X: four stages of 256x128 bf16 tiles do not fit.
        let s = space("MI300X");
        let mut c = s.default_config().unwrap();
        c.mt0 = 256;
        c.mt1 = 128;
        c.depth_u = 128;
        c.pgr = 4;
        assert_eq!(
            constraints::check(&c, &s.problem, &s.hw).unwrap_err().rule,
            "lds"
        );
    }

    #[test]
    fn sample_and_neighbors_stay_valid_and_deterministic() {
        let s = space("MI300X");
        let mut r1 = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut r2 = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let a = s.sample(&mut r1).unwrap();
            assert_eq!(Some(a), s.sample(&mut r2));
            s.check(&a).unwrap();
            for n in s.neighbors(&a) {
                s.check(&n).unwrap();
            }
        }
    }

    #[test]
    fn a_default_no_tile_reaches_falls_back_to_the_gemv_path() {
        // 7 rows of A M-contiguous (lda = 7) and N-contiguous B: no tile's vectors divide lda
        // on an MI300X, and the repair from the default found none; the GEMV along N takes it.
        let hw = HwSpec::by_name("mi300x").unwrap();
        let mut p = GemmProblem::new(7, 1024, 16);
        (p.trans_a, p.trans_b, p.batch) = (Trans::N, Trans::T, 64);
        p.fill_defaults();
        let s = Space::for_problem(&p, &hw);
        assert!(s.repair(&s.raw_default()).is_none());
        let c = s.default_config().expect("the GEMV along N");
        s.check(&c).unwrap();
        assert_eq!((c.gv, c.sab), (1, 1));
        // M = 9 (past the GEMV), lda = 9: a tile drawn from the whole space, the same each time.
        let mut p = GemmProblem::new(9, 500, 16);
        (p.trans_a, p.trans_b, p.a_type, p.b_type, p.c_type, p.d_type) = (
            Trans::N,
            Trans::N,
            DataType::F16,
            DataType::F16,
            DataType::F16,
            DataType::F16,
        );
        p.fill_defaults();
        let s = Space::for_problem(&p, &hw);
        assert!(s.repair(&s.raw_default()).is_none() && s.gemv_starts().is_empty());
        let c = s.default_config().expect("a drawn tile");
        s.check(&c).unwrap();
        assert_eq!(s.default_config().unwrap(), c);
        // On an MI355X too few configs of 5x128x100 NT (lda = 5) are valid for draws to meet
        // one: the smallest tile, one element a read.
        let hw = HwSpec::by_name("mi355x").unwrap();
        let p = GemmProblem::with_layout(5, 128, 100, Trans::N, Trans::T);
        let s = Space::for_problem(&p, &hw);
        let c = s.smallest_tile().expect("a 16-row tile");
        s.check(&c).unwrap();
        assert_eq!((c.mt0, c.grvw), (16, 1));
        assert_eq!(s.default_config().unwrap(), c);
        // 8-bit 16x9 on an H200: past the GEMV's N, short of the tiny-M starts' 64 columns;
        // the warpgroup instruction transposed takes it.
        let hw = HwSpec::by_name("H200").unwrap();
        let mut p = GemmProblem::new(16, 9, 4096);
        (p.a_type, p.b_type) = (DataType::F8, DataType::F8);
        let s = Space::for_problem(&p, &hw);
        let c = s.default_config().expect("a transposed warpgroup tile");
        s.check(&c).unwrap();
        assert!(constraints::is_wgmma(&c) && c.sab == 1, "{}", c.name());
    }

    #[test]
    fn a_split_steps_to_every_other_way_of_summing_it() {
        let s = Space::for_problem(
            &GemmProblem::new(4096, 128, 14336),
            &HwSpec::by_name("H200").unwrap(),
        );
        let c = KernelConfig::parse(
            "MT128x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU2R_WGM1_GRVW8_SVW8_SU0",
        )
        .unwrap();
        s.check(&c).unwrap();
        let algos: Vec<GsuAlgo> = s
            .neighbors(&c)
            .iter()
            .filter(|n| {
                KernelConfig {
                    gsu_algo: c.gsu_algo,
                    ..**n
                } == c
            })
            .map(|n| n.gsu_algo)
            .collect();
        assert_eq!(
            algos,
            [GsuAlgo::Atomic, GsuAlgo::StreamK, GsuAlgo::SingleKernel]
        );
    }

    #[test]
    fn batches_past_a_grids_layers_default_to_the_warpgroup_tile_walking_them() {
        // The warpgroup default's tile on the persistent kernel, as with fewer batches on the
        // data-parallel one (not the warp-level instruction repaired to 64x8 tiles).
        let hw = HwSpec::by_name("H200").unwrap();
        for (m, n, k, batch) in [(64, 64, 64, 70000), (128, 96, 256, 100000)] {
            let mut p = GemmProblem::new(m, n, k);
            p.batch = batch;
            p.fill_defaults();
            let c = Space::for_problem(&p, &hw).default_config().unwrap();
            assert_eq!(
                (c.mi, c.mt0, c.mt1, c.pk, c.pw, c.grvw),
                ([64, 8, 16], m as u32, n as u32, 1, 1, 8),
                "{}",
                c.name()
            );
            let mut fewer = p.clone();
            fewer.batch = 100;
            let d = Space::for_problem(&fewer, &hw).default_config().unwrap();
            assert_eq!((d.mt0, d.mt1, d.pk), (c.mt0, c.mt1, 0), "{}", d.name());
        }
    }

    #[test]
    fn enumerate_bounded_space() {
        let mut s = space("H100-SXM");
        // Widths in steps of 16 (the warpgroup path's steps of 8 double the product).
        let widths: Vec<String> = (1..=16).map(|i| (i * 16).to_string()).collect();
        s.fix("MacroTile1", &widths.join(",")).unwrap();
        for (p, v) in [
            ("DepthU", "64"),
            ("PrefetchLocalRead", "1"),
            ("LdsPadA", "8"),
            ("LdsPadB", "8"),
            ("LdsSwizzle", "0"),
            ("WorkGroupMapping", "8"),
            ("StoreVectorWidth", "4"),
            ("StaggerU", "0"),
            ("GlobalReadVectorWidth", "8"),
            ("GlobalSplitUAlgorithm", "1"),
            // The splits the sweep's preset keeps (bench/sweep.rs).
            ("GlobalSplitU", "1,2,3,4,6,8,12,16,24,32,64"),
        ] {
            s.fix(p, v).unwrap();
        }
        let all = s.enumerate(10_000_000).unwrap();
        assert!(!all.is_empty());
        for c in &all {
            s.check(c).unwrap();
        }
        let names: std::collections::HashSet<_> = all.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), all.len());
        assert!(matches!(
            space("H100-SXM").enumerate(1000),
            Err(SpaceError::TooLarge { .. })
        ));
    }

    #[test]
    fn fix_rejects_unknown_names_and_values() {
        let mut s = space("H200");
        assert!(matches!(
            s.fix("Bogus", "1"),
            Err(SpaceError::UnknownParam(..))
        ));
        assert!(matches!(
            s.fix("DepthU", "48"),
            Err(SpaceError::BadValue { .. })
        ));
        s.fix("MI", "16x8x16").unwrap();
    }
}
