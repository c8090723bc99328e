//! The flat batch path (FlatBatch = 1, `kernels/scheduler/gt_flat_batches.h`, and its staged
//! form FlatBatch = 2, `kernels/scheduler/gt_flat_batches_staged.h`) in the space: where it is
//! searched, and its starts.
//!
//! Many small batched GEMMs whose rows are off the 16-byte grid (17 x 17 x 17, 33 x 33 x 33 in
//! f16 or f32) run on warp-level tiles that load every element alone, its place formed and
//! tested against the tile's bounds, and on such batches cuBLASLt is far from the memory floor
//! too. Copying each batch's operands into LDS as the flat ranges they occupy and multiplying
//! from there with FMAs runs them at a fraction of both. Measured on an H200 with a standalone
//! kernel of the same design beside cuBLAS in one process (us, cuBLAS in brackets):
//! 17x17x17 x50000 TN f16 on one wave a batch, four a workgroup, 24x20 outputs 78.8 [168.8]
//! (two waves a batch, 24x24: 96.9); 33x33x33 x10000 NN f16 on one wave, 40x36, 65.7 [86.7] (two
//! waves 40x40 68.9, four 48x40 88.1); 33x33x33 x10000 NN f32 on two waves 78.7 [123.7];
//! 45x45x45 x8000 TT f32 on four waves 109.0 [115.8]; 16x16x16 x100000 TN f16 77.8 [307.5];
//! 77x77x77 x3000 TN f16 on four waves 129.3 [105.9] (bench's default set: 158); and it lost
//! where the multiply-adds dominate or the rows are aligned already: 100x100x100 x5000 NN f16
//! 475.0 [156.8], 64x64x64 x4096 NN f32 117.4 [81.8].
//!
//!   batches of at most 96 x 96 outputs, two waves of workgroups of them or more
//!     -> FlatBatch searched, tile sides in steps of 4, up to eight waves a batch, on FMAs
//!        and (16-bit inputs of one type) on the GPU's warp-level matrix instructions
//!     -> where an operand's rows are off the 16-byte grid, or M and N are both under 8:
//!        starts on the least padded tile on the fewest waves a batch whose lanes own at most
//!        64 outputs, and on twice those waves; four waves a workgroup; on matrix cores
//!        first where they apply, the tile padded to whole instructions
//!   batches of at most 192 x 192 (the LDS's bound first) on an NVIDIA GPU, four a compute
//!   unit or more, 16-bit inputs of one type
//!     -> FlatBatch 2 searched (one group a workgroup, walking batches, the next one's
//!        operands copied into LDS meanwhile); where rows are off the 16-byte grid, starts on
//!        the least padded tile of whole instructions on four and on eight waves (150^3 x2000
//!        NN f16: 221.5 us against 348.8 for the tiles, cuBLASLt 235.3; H200)
//!
//! On FMAs the multiply-adds grow with the batch's volume and outweigh the copies past about
//! 45 x 45 x 45 (77 x 77 x 77 f16 x3000 ran at 0.84x cuBLASLt, 62% of its loop FFMAs); on
//! matrix cores a 77 x 77 x 77 batch is 300 mma.sync instructions (96 x 80 x 80), and the copy
//! into tiles of whole instructions is most of the kernel (H200: 73.2 us against 105.2 for
//! cuBLASLt; docs/performance.md).

use super::constraints::{self, flat_mma_shapes, flat_tile_sides, FLAT_BATCH_MAX_ACC};
use super::param::{pack_mi, ParamId};
use super::{KernelConfig, Space};

/// Waves a workgroup the starts fill with batches.
const WAVES_PER_WORKGROUP: u32 = 4;
/// Starts of the path, at most.
const STARTS: usize = 2;
/// M and N below which the path starts on rows of the 16-byte grid too (2x2x2 x65536 and
/// 3x3x100 x100000 f32 ran faster on it than on the GEMV path's batch a wave; 8x8x64 x131072
/// NN f16, 16x16x16 x100000 and 64x64x64 x4096 NN f32, rows on the grid, as fast or slower than
/// the tiles).
const TINY_SIDE: i64 = 8;

/// The least padded batch tile for `lanes` lanes (`(MT0, MT1)`): over the lane grids LM x LN,
/// each lane's rows and columns rounded up to cover the batch, the fewest outputs, then the
/// squarest sub-tile, then the most lanes along M (longer runs of D's rows a store); None
/// where every grid gives a lane more than 64 outputs.
fn least_padded_tile(m: i64, n: i64, lanes: i64) -> Option<(i64, i64)> {
    std::iter::successors(Some(1i64), |lm| Some(lm * 2))
        .take_while(|&lm| lm <= lanes)
        .filter_map(|lm| {
            let ln = lanes / lm;
            let (fm, fn_) = ((m + lm - 1) / lm, (n + ln - 1) / ln);
            // Sides in steps of 4: a lane grid of fewer than 4 lanes a side rounds its rows up.
            let (mt0, mt1) = (round_to(lm * fm, 4), round_to(ln * fn_, 4));
            let acc = (mt0 / lm).max(1) * (mt1 / ln).max(1);
            (mt0 % lm == 0 && mt1 % ln == 0 && acc <= i64::from(FLAT_BATCH_MAX_ACC)).then_some((
                mt0 * mt1,
                (mt0 / lm - mt1 / ln).abs(),
                -lm,
                mt0,
                mt1,
            ))
        })
        .min()
        .map(|(_, _, _, mt0, mt1)| (mt0, mt1))
}

/// The least padded batch tile of whole `mi` instructions for `waves` waves of `wave` lanes
/// (`(MT0, MT1)`): over the wave grids G x H, M rounded up to G instructions and N to H, the
/// fewest outputs, then the squarest wave tile, then the fewest waves along M; None where every
/// grid gives a lane more than `most_acc` accumulators or a side past `widest`. The kernel
/// lays its waves out by the tile (`gt_grid_m`): a tile it would cut into wave tiles more than
/// four times longer one way than the other is left out (128 x 104 on eight waves makes
/// 16 x 104 strips that each read every B fragment: 377.6 us for 100^3 x5000 NN f16 where
/// 128 x 112, 32 x 56 a wave, took 232.3; H200).
fn least_padded_mma_tile(
    (m, n): (i64, i64),
    waves: i64,
    wave: i64,
    mi: [u32; 3],
    (widest, most_acc): (i64, i64),
) -> Option<(i64, i64)> {
    let (um, un) = (i64::from(mi[0]), i64::from(mi[1]));
    std::iter::successors(Some(1i64), |g| Some(g * 2))
        .take_while(|&g| g <= waves)
        .filter_map(|g| {
            let h = waves / g;
            let (mt0, mt1) = (round_to(m, g * um), round_to(n, h * un));
            let acc = mt0 * mt1 / (waves * wave);
            if acc > most_acc || mt0 > widest || mt1 > widest {
                return None;
            }
            let (gm, gn) =
                constraints::part_grid(mt0 as u32, mt1 as u32, waves as u32, [mi[0], mi[1]])?;
            let (wt0, wt1) = (mt0 / i64::from(gm), mt1 / i64::from(gn));
            (wt0 <= 4 * wt1 && wt1 <= 4 * wt0).then_some((
                mt0 * mt1,
                (wt0 - wt1).abs(),
                gm,
                mt0,
                mt1,
            ))
        })
        .min()
        .map(|(_, _, _, mt0, mt1)| (mt0, mt1))
}

fn round_to(x: i64, step: i64) -> i64 {
    (x + step - 1) / step * step
}

/// The parameters the flat batch path has no use for and the values
/// [`KernelConfig::canonical`] gives them: a sweep of its kernels pins them.
pub const FLAT_BATCH_FIXED: [(ParamId, i64); 20] = [
    (ParamId::DepthU, 16),
    (ParamId::PrefetchGlobalRead, 1),
    (ParamId::PrefetchLocalRead, 0),
    (ParamId::LdsPadA, 0),
    (ParamId::LdsPadB, 0),
    (ParamId::LdsSwizzle, 0),
    (ParamId::GlobalSplitU, 1),
    (ParamId::GlobalSplitUAlgorithm, 1),
    (ParamId::WorkGroupMapping, 1),
    (ParamId::GlobalReadVectorWidth, 1),
    (ParamId::StoreVectorWidth, 1),
    (ParamId::StaggerU, 0),
    (ParamId::ProducerWarp, 0),
    (ParamId::SwapAB, 0),
    (ParamId::PersistentKernel, 0),
    (ParamId::ClusterN, 1),
    (ParamId::TransposeLds, 0),
    (ParamId::PackUnaligned, 0),
    (ParamId::ClusterM, 1),
    (ParamId::PackMnMajor, 0),
];

impl Space {
    /// Whether the space searches the flat batch path in either form.
    fn searches_flat_batch(&self) -> bool {
        let fb = self.domain(ParamId::FlatBatch);
        fb.contains(1) || fb.contains(2)
    }

    /// This space narrowed to the flat batch path's kernels (a sweep of them), or None where it
    /// is not searched: FlatBatch 1 or 2, FMAs or the warp-level instructions, tiles of the
    /// batch's size, and the parameters it ignores pinned ([`FLAT_BATCH_FIXED`]).
    pub fn flat_batch_only(&self) -> Option<Space> {
        if !self.searches_flat_batch() {
            return None;
        }
        let mut s = self.clone();
        let p = &self.problem;
        let staged = self.domain(ParamId::FlatBatch).contains(2);
        let covering =
            |lim: i64| -> Vec<i64> { flat_tile_sides(staged).filter(|&t| t >= lim).collect() };
        s.domain_mut(ParamId::FlatBatch).restrict(&[1, 2]);
        s.domain_mut(ParamId::Gemv).restrict(&[0]);
        let mis: Vec<i64> = std::iter::once([1, 1, 1])
            .chain(flat_mma_shapes(p, &self.hw))
            .map(pack_mi)
            .collect();
        s.domain_mut(ParamId::MatrixInstruction).restrict(&mis);
        s.domain_mut(ParamId::MacroTile0).restrict(&covering(p.m));
        s.domain_mut(ParamId::MacroTile1).restrict(&covering(p.n));
        for (id, v) in FLAT_BATCH_FIXED {
            s.domain_mut(id).restrict(&[v]);
        }
        Some(s)
    }

    /// The tile kernels' space where the flat batch path is searched too: its tile sides that
    /// no tile kernel takes (steps of 4, or of 8 along M and along N off the warpgroup path)
    /// and its eight waves a batch left out, so that a sweep of the tiles walks what it did
    /// before.
    pub(super) fn without_flat_sides(&mut self) {
        if !self.searches_flat_batch() {
            return;
        }
        let wgmma = self
            .hw
            .mi_shapes_for(&self.problem)
            .contains(&constraints::wgmma_mi(self.problem.a_type));
        let m: Vec<i64> = (self.domain(ParamId::MacroTile0).values.iter().copied())
            .filter(|v| v % 16 == 0)
            .collect();
        let step = if wgmma { 8 } else { 16 };
        let n: Vec<i64> = (self.domain(ParamId::MacroTile1).values.iter().copied())
            .filter(|&v| v <= 8 || v % step == 0)
            .collect();
        let waves: Vec<i64> = (self.domain(ParamId::WavesN).values.iter().copied())
            .filter(|&v| v <= 4)
            .collect();
        self.domain_mut(ParamId::MacroTile0).restrict(&m);
        self.domain_mut(ParamId::MacroTile1).restrict(&n);
        self.domain_mut(ParamId::WavesN).restrict(&waves);
        self.domain_mut(ParamId::FlatBatch).restrict(&[0]);
    }

    /// The flat batch path's starts where the space searches it (module header): the least
    /// padded tile on the fewest waves a batch that fit it, then on twice those waves; and
    /// where the staged form is searched, its least padded tiles on four and eight waves
    /// (first where the unstaged form does not take the batch).
    pub fn flat_batch_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let off_grid = !(constraints::tma_readable(p, true) && constraints::tma_readable(p, false));
        let tiny = p.m < TINY_SIDE && p.n < TINY_SIDE;
        let fb = self.domain(ParamId::FlatBatch);
        let (unstaged, staged) = (fb.contains(1), fb.contains(2) && off_grid);
        if !(unstaged && (off_grid || tiny)) && !staged {
            return Vec::new();
        }
        let wave = i64::from(self.hw.wave_size);
        let start = |fb: i64, mi: [u32; 3], waves: u32, (mt0, mt1): (i64, i64)| {
            let per_workgroup = if fb == 2 {
                1
            } else {
                (WAVES_PER_WORKGROUP / waves).max(1)
            };
            let prefs = [
                (ParamId::FlatBatch, fb),
                (ParamId::MatrixInstruction, pack_mi(mi)),
                (ParamId::MacroTile0, mt0),
                (ParamId::MacroTile1, mt1),
                (ParamId::WavesN, i64::from(waves)),
                (ParamId::WavesM, i64::from(per_workgroup)),
            ];
            self.valid_start(&prefs)
        };
        let first_mi = flat_mma_shapes(p, &self.hw).first().copied();
        // Matrix cores first (their first instruction shape), then FMAs.
        let unstaged_limits = (
            i64::from(constraints::FLAT_BATCH_MAX_SIDE),
            i64::from(FLAT_BATCH_MAX_ACC),
        );
        let mma = (first_mi.filter(|_| unstaged).into_iter()).flat_map(|mi| {
            [1u32, 2, 4, 8]
                .into_iter()
                .filter_map(move |waves| {
                    least_padded_mma_tile((p.m, p.n), i64::from(waves), wave, mi, unstaged_limits)
                        .and_then(|tile| start(1, mi, waves, tile))
                })
                .take(STARTS)
        });
        let fma = [1u32, 2, 4, 8]
            .into_iter()
            .filter(|_| unstaged)
            .filter_map(|waves| {
                least_padded_tile(p.m, p.n, i64::from(waves) * wave)
                    .and_then(|tile| start(1, [1, 1, 1], waves, tile))
            })
            .take(STARTS);
        let staged_limits = (
            constraints::FLAT_STAGED_SIDE,
            i64::from(constraints::FLAT_MMA_MAX_ACC),
        );
        let staged_starts = (first_mi.filter(|_| staged).into_iter()).flat_map(|mi| {
            [4u32, 8].into_iter().filter_map(move |waves| {
                least_padded_mma_tile((p.m, p.n), i64::from(waves), wave, mi, staged_limits)
                    .and_then(|tile| start(2, mi, waves, tile))
            })
        });
        let unstaged_starts: Vec<KernelConfig> = mma.chain(fma).collect();
        if unstaged_starts.is_empty() {
            staged_starts.collect()
        } else {
            unstaged_starts.into_iter().chain(staged_starts).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};

    fn batches(m: i64, n: i64, k: i64, count: i64, t: DataType) -> GemmProblem {
        let mut p = GemmProblem::new(m, n, k);
        p.batch = count;
        (p.a_type, p.b_type, p.c_type, p.d_type) = (t, t, t, t);
        p.fill_defaults();
        p
    }

    #[test]
    fn odd_small_batches_start_on_the_least_padded_tile() {
        let hw = HwSpec::by_name("H200").unwrap();
        let s = Space::for_problem(&batches(17, 17, 17, 50000, DataType::F16), &hw);
        let starts = s.flat_batch_starts();
        assert_eq!(starts.len(), 6);
        let tiles: Vec<_> = (starts.iter())
            .map(|c| (c.mi, c.mt0, c.mt1, c.wg, c.fb))
            .collect();
        assert_eq!(
            tiles,
            [
                // Matrix cores first: 17 rounded up to a 16x8 instruction's sides on one wave,
                // four batches a workgroup; on two waves, along M (16 x 24 each).
                ([16, 8, 16], 32, 24, [4, 1], 1),
                ([16, 8, 16], 32, 24, [2, 2], 1),
                // Then FMAs, one wave a batch: 24x20 (8 x 4 lanes of 3 x 5 outputs); two
                // waves, 24x24 (8 x 8 lanes of 3 x 3).
                ([1, 1, 1], 24, 20, [4, 1], 1),
                ([1, 1, 1], 24, 24, [2, 2], 1),
                // Then the staged form, one group a workgroup on four and eight waves, whole
                // instructions a wave.
                ([16, 8, 16], 32, 32, [1, 4], 2),
                ([16, 8, 16], 32, 32, [1, 8], 2),
            ]
        );
        for c in &starts {
            s.check(c).unwrap();
        }
        // They are in the first batch a search measures.
        let extra = s.extra_starts();
        assert!(starts.iter().all(|c| extra.contains(c)));
    }

    #[test]
    fn the_path_is_searched_only_for_many_small_batches() {
        let hw = HwSpec::by_name("H200").unwrap();
        let on = |p: &GemmProblem| {
            Space::for_problem(p, &hw)
                .domain(ParamId::FlatBatch)
                .contains(1)
        };
        assert!(on(&batches(33, 33, 33, 10000, DataType::F32)));
        assert!(!on(&batches(33, 33, 33, 100, DataType::F32)));
        assert!(!on(&batches(128, 128, 128, 10000, DataType::F16)));
        assert!(!on(&GemmProblem::new(17, 17, 17)));
        let mut wide = batches(33, 33, 33, 10000, DataType::F16);
        wide.trans_a = Trans::N;
        wide.lda = 100_000;
        assert!(!on(&wide));
    }

    #[test]
    fn a_sweep_pins_what_the_canonical_name_fixes() {
        // FLAT_BATCH_FIXED and KernelConfig::canonical list the same values: a sweep of the
        // path walks only canonical configs.
        let hw = HwSpec::by_name("H200").unwrap();
        let s = Space::for_problem(&batches(17, 17, 17, 50000, DataType::F16), &hw);
        let c = s.flat_batch_starts()[0];
        let mut wild = c;
        for (id, _) in FLAT_BATCH_FIXED {
            let d = s.domain(id);
            id.set(&mut wild, *d.values.last().unwrap());
        }
        let canonical = wild.canonical();
        for (id, v) in FLAT_BATCH_FIXED {
            assert_eq!(id.get(&canonical), v, "{}", id.name());
        }
        assert_eq!(canonical, c);
    }

    #[test]
    fn matrix_core_starts_take_whole_instructions_and_16_bit_inputs() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 77 x 77: one or two waves would hold 100 or more accumulators a lane; four waves
        // take 96 x 80 as 2 x 2 wave tiles of 48 x 40 (the squarest of the least padded).
        let s = Space::for_problem(&batches(77, 77, 77, 3000, DataType::F16), &hw);
        let starts = s.flat_batch_starts();
        assert_eq!(
            (starts[0].mi, starts[0].mt0, starts[0].mt1, starts[0].wg),
            ([16, 8, 16], 96, 80, [1, 4])
        );
        let unstaged = (128, 64);
        assert_eq!(
            least_padded_mma_tile((77, 77), 4, 32, [16, 8, 16], unstaged),
            Some((96, 80))
        );
        assert_eq!(
            least_padded_mma_tile((77, 77), 2, 32, [16, 8, 16], unstaged),
            None
        );
        // 100 x 100 on eight waves: 128 x 104 would be cut into 16 x 104 strips.
        assert_eq!(
            least_padded_mma_tile((100, 100), 8, 32, [16, 8, 16], unstaged),
            Some((128, 112))
        );
        // The staged form's sides and accumulators: 150 x 150 on eight waves, 95 a lane.
        assert_eq!(
            least_padded_mma_tile((150, 150), 8, 32, [16, 8, 16], (192, 128)),
            Some((160, 160))
        );
        // f32 has no 16-bit instruction: FMAs only, and a sweep of the path keeps to them.
        let s = Space::for_problem(&batches(33, 33, 33, 10000, DataType::F32), &hw);
        assert!(s.flat_batch_starts().iter().all(|c| c.mi == [1, 1, 1]));
        let only = s.flat_batch_only().unwrap();
        assert_eq!(
            only.domain(ParamId::MatrixInstruction).values,
            [pack_mi([1, 1, 1])]
        );
        // bf16 sweeps both (the warpgroup instruction is not the path's).
        let s = Space::for_problem(&batches(33, 33, 33, 10000, DataType::Bf16), &hw);
        let only = s.flat_batch_only().unwrap();
        assert_eq!(
            only.domain(ParamId::MatrixInstruction).values,
            [pack_mi([16, 8, 16]), pack_mi([1, 1, 1])]
        );
    }

    #[test]
    fn random_configs_come_from_both_families() {
        // Drawn from the whole product, almost no point was valid for either family: the
        // model search's 600 random candidates for 90x90x30 x5000 NN f16 took 82 s of the CPU.
        use rand::SeedableRng;
        let hw = HwSpec::by_name("H200").unwrap();
        let s = Space::for_problem(&batches(45, 45, 45, 8000, DataType::Bf16), &hw);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let drawn: Vec<KernelConfig> = (0..40).filter_map(|_| s.sample(&mut rng)).collect();
        assert!(drawn.len() >= 30, "{} of 40 drawn", drawn.len());
        assert!(drawn.iter().all(|c| s.is_valid(c)));
        let flat = drawn.iter().filter(|c| c.fb == 1).count();
        assert!(
            (8..=32).contains(&flat),
            "{flat} of 40 on the flat batch path"
        );
        assert!(drawn.iter().any(|c| c.fb == 1 && c.uses_matrix_cores()));
        assert!(drawn.iter().any(|c| c.fb == 1 && !c.uses_matrix_cores()));
    }

    #[test]
    fn a_lane_owns_at_most_64_outputs() {
        // 96 x 96 on one wave would give each lane 288: the first start takes more waves.
        assert_eq!(least_padded_tile(96, 96, 32), None);
        assert_eq!(least_padded_tile(96, 96, 256), Some((96, 96)));
        assert_eq!(least_padded_tile(17, 17, 32), Some((24, 20)));
    }
}
