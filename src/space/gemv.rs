//! The GEMV path (Gemv = 1, N up to 8, or M up to 8 along N with SwapAB = 1) in the space:
//! the parameters it ignores and the values they take ([`GEMV_FIXED`], what [`KernelConfig::canonical`] sets), the space a sweep of
//! GEMV kernels walks, and where the search starts: a few configs of the shapes
//! `kernels/mainloop/gt_gemv.h` runs best, measured in the first batch beside the tile
//! kernels' starts.
//!
//! Where A and B are 16-bit and K-contiguous on NVIDIA, first the matrix-core GEMV (MI
//! 16x8x16): workgroups of one or two 16-row groups whose waves share K. With FMAs:
//! K-contiguous A (transA = T, a decode projection): eight vectors in flight per lane, spent
//! three ways: two rows per wave with four vectors of each (16-row workgroups of eight
//! waves), four rows with two (16 rows on four waves: each column of B read from L1 once per
//! four rows of A, for N near 8) and eight rows with one (32 rows on four waves: B read once
//! per eight rows, half as many workgroups); each split along K until the row blocks give
//! every compute unit one, keeping at least 2048 of K per split. M-contiguous A: one 16-byte
//! vector of rows per lane, eight waves taking turns along K, split along K until there are
//! two row blocks per compute unit (a few hundred rows make a block, so K is split finely,
//! at least 128 per split; the partial sums are N columns of M, small next to A).
//!
//! M up to 8 (a row vector times a matrix, `x^T W`) starts the same way on the transposed
//! problem D^T = B^T A^T (SwapAB = 1): B is then the streamed matrix, and where B is
//! K-contiguous (transB = N) it is read as the K-contiguous rows above.

use super::constraints::{GEMV_MAX_N, GEMV_MMA, MIN_SPLIT_K_M_CONTIGUOUS};
use super::param::pack_mi;
use super::{GsuAlgo, KernelConfig, ParamId, Space};
use crate::problem::GemmProblem;

/// The parameters a GEMV kernel has no use for, at the values its canonical name gives them
/// (kept equal to `KernelConfig::canonical`, which a test checks).
pub const GEMV_FIXED: [(ParamId, i64); 10] = [
    (ParamId::DepthU, 16),
    (ParamId::PrefetchLocalRead, 0),
    (ParamId::LdsPadA, 0),
    (ParamId::LdsPadB, 0),
    (ParamId::LdsSwizzle, 0),
    (ParamId::WorkGroupMapping, 1),
    (ParamId::StoreVectorWidth, 1),
    (ParamId::StaggerU, 0),
    (ParamId::ProducerWarp, 0),
    (ParamId::PersistentKernel, 0),
];

/// Row blocks per compute unit from which a GEMV's batches are many small ones.
const MANY_BLOCKS_PER_CU: i64 = 16;

/// K elements each split keeps at least, with K-contiguous and with M-contiguous A.
const MIN_SPLIT_K_ROWS: i64 = 2048;
const MIN_SPLIT_M_ROWS: i64 = MIN_SPLIT_K_M_CONTIGUOUS;

impl Space {
    /// This space narrowed to GEMV kernels (`None` where it has none): Gemv = 1, no matrix
    /// instruction, one column of waves, 1 to 8 columns, split-K by reduction or atomics, and
    /// the parameters a GEMV ignores at their fixed values. What a sweep of GEMV kernels walks.
    pub fn gemv_only(&self) -> Option<Space> {
        if !self.domain(ParamId::Gemv).contains(1) {
            return None;
        }
        let mut s = self.clone();
        let narrow: [(ParamId, &[i64]); 6] = [
            (ParamId::Gemv, &[1]),
            (
                ParamId::MatrixInstruction,
                &[pack_mi([1, 1, 1]), pack_mi(GEMV_MMA)],
            ),
            (ParamId::WavesN, &[1]),
            (ParamId::MacroTile1, &[1, 2, 4, 8]),
            (ParamId::GlobalSplitUAlgorithm, &[0, 1]),
            (ParamId::PrefetchGlobalRead, &[1, 2, 3, 4]),
        ];
        for (id, values) in narrow {
            s.domain_mut(id).restrict(values);
        }
        for (id, v) in GEMV_FIXED {
            s.domain_mut(id).restrict(&[v]);
        }
        // The side it runs along: N up to 8 unswapped, M up to 8 swapped.
        let p = &self.problem;
        let sides: Vec<i64> = [(0, p.n), (1, p.m)]
            .into_iter()
            .filter(|&(_, cols)| cols <= GEMV_MAX_N)
            .map(|(sab, _)| sab)
            .collect();
        s.domain_mut(ParamId::SwapAB).restrict(&sides);
        Some(s)
    }

    /// This space without GEMV kernels: Gemv = 0, and the values only a GEMV takes (fewer
    /// than 16 columns, FMA on a type with matrix instructions) left out.
    pub fn tiles_only(&self) -> Space {
        let mut s = self.clone();
        s.domain_mut(ParamId::Gemv).restrict(&[0]);
        s.without_flat_sides();
        let wide: Vec<i64> = (s.domain(ParamId::MacroTile1).values.iter().copied())
            .filter(|&v| v >= 16)
            .collect();
        s.domain_mut(ParamId::MacroTile1).restrict(&wide);
        if !self.hw.mi_shapes_for(&self.problem).is_empty() {
            let mi: Vec<i64> = (s.domain(ParamId::MatrixInstruction).values.iter().copied())
                .filter(|&v| v != pack_mi([1, 1, 1]))
                .collect();
            s.domain_mut(ParamId::MatrixInstruction).restrict(&mi);
        }
        s
    }

    /// The GEMV starts valid in this space (none where N > 8 or the space has no Gemv = 1).
    pub fn gemv_starts(&self) -> Vec<KernelConfig> {
        (self.gemv_sides().into_iter())
            .map(|(p, sab)| self.gemv_starts_along(&p, sab))
            .find(|starts| !starts.is_empty())
            .unwrap_or_default()
    }

    /// The problem a GEMV kernel computes in this space and its SwapAB: of the sides
    /// [`Self::gemv_sides`] offers, the first with a start; None where none has or the space
    /// has no Gemv = 1.
    pub(super) fn gemv_along(&self) -> Option<(GemmProblem, u32)> {
        (self.gemv_sides().into_iter()).find(|(p, sab)| !self.gemv_starts_along(p, *sab).is_empty())
    }

    /// The problems a GEMV kernel can compute in this space, with their SwapAB: this space's
    /// where N is up to 8, its transpose (SwapAB = 1) where M is. Where both are, the one
    /// whose streamed matrix is K-contiguous comes first (unswapped on a tie): 1x4x1048576 NN
    /// has an M-major A of one row, which no GEMV reads along N = 4 (its rows are fewer than a
    /// wave's vector), while along M its B is four K-contiguous rows.
    fn gemv_sides(&self) -> Vec<(GemmProblem, u32)> {
        if !self.domain(ParamId::Gemv).contains(1) {
            return Vec::new();
        }
        let p = &self.problem;
        let mut sides = Vec::new();
        if p.n <= GEMV_MAX_N {
            sides.push((p.clone(), 0));
        }
        if p.m <= GEMV_MAX_N && self.domain(ParamId::SwapAB).contains(1) {
            sides.push((p.transposed(), 1));
        }
        sides.sort_by_key(|(q, _)| !q.trans_a.is_t());
        sides
    }

    /// The starts of the GEMV kernels computing `p` (this space's problem, or its transpose
    /// with SwapAB = `sab` 1).
    fn gemv_starts_along(&self, p: &GemmProblem, sab: u32) -> Vec<KernelConfig> {
        let wave = self.hw.wave_size as i64;
        // B's K-contiguous columns are read in vectors of as many elements as A's.
        let b_vectors = p.trans_a.is_t() && !p.trans_b.is_t();
        let widest = if b_vectors {
            p.a_type.bytes().max(p.b_type.bytes())
        } else {
            p.a_type.bytes()
        } as i64;
        // The widest vector the leading dimensions (and batch strides) keep aligned.
        let mut grvw = 16 / widest;
        let aligned = |v: i64| {
            let batched = p.batch > 1;
            p.lda % v == 0
                && (!batched || p.stride_a % v == 0)
                && (!b_vectors || (p.ldb % v == 0 && (!batched || p.stride_b % v == 0)))
        };
        while grvw > 1 && !aligned(grvw) {
            grvw /= 2;
        }
        // Where B's rows are read as vectors wider than 16 bytes (eight f32 columns, two
        // vectors a row), each vector of A costs GlobalReadVectorWidth rows of B: half the
        // vector measured best. H200, f32 NN along N, ours [cuBLASLt] us: 8x4096x4096 36.6
        // on vectors of two [44.6], 40.8 of four, 39.7 of one; 8x4096x14336 87.0 [123.7].
        let mt1 = (p.n.max(1) as u32).next_power_of_two();
        if p.trans_a.is_t() && p.trans_b.is_t() && mt1 as usize * p.b_type.bytes() > 16 {
            grvw = (grvw / 2).max(1);
        }
        let row_blocks = |mt0: i64| (p.m + mt0 - 1) / mt0 * p.batch.max(1);
        let start =
            |mt0: i64, mt1: u32, mi: [u32; 3], waves: u32, pgr: u32, vector: i64| KernelConfig {
                mt0: mt0 as u32,
                mt1,
                mi,
                wg: [waves, 1],
                pgr,
                grvw: vector as u32,
                gsu: self.gemv_split(p, row_blocks(mt0)) as u32,
                gsu_algo: GsuAlgo::Reduce,
                gv: 1,
                sab,
                ..self.raw_default()
            };
        // (start, fewest loads in flight it may step down to).
        let mut candidates: Vec<(KernelConfig, u32)> = Vec::new();
        // The matrix-core GEMV (16-bit TN on NVIDIA): one and two groups of 16 rows, the
        // waves of a workgroup taking turns along K.
        for (mt0, waves) in [(16, 8), (32, 4)] {
            candidates.push((start(mt0, 8, GEMV_MMA, waves, 4, 8), 4));
        }
        if p.trans_a.is_t() {
            // The same eight vectors in flight per lane (about the same registers) on two,
            // four and eight rows per wave. More rows read each vector of B for more rows of
            // A but make fewer row blocks, which the split gives back where they leave compute
            // units idle; which spends the loads best is measured, not modelled. H100, the
            // recorded 4096x1x4096 sweep (four-wave workgroups only): eight rows with one
            // vector each, K split in 2 (256 workgroups), 18.6 us, the sweep's second fastest
            // (18.5 split in 4); with two vectors each 19.0 split in 2 and 21.3 unsplit (128
            // workgroups on 132 SMs). A tune of the same problem (docs/performance.md) kept
            // two rows per wave, unsplit.
            // Where B runs along N (TT), B is read one element at a time, a register each, and
            // 32 rows on four waves with one vector in flight came first: H200, f32, tuned,
            // 14336x4x4096 TT 89.8 us on it [cuBLASLt 125.9] against 247.2 on 16 rows of eight
            // waves with four; 8x4096x4096 NN (TT along N) 84.5 on 32 rows [44.4].
            let mut shapes = [(16, 8, 4), (16, 4, 2), (32, 4, 1)];
            if !b_vectors {
                shapes.rotate_right(1);
            }
            for (mt0, waves, pgr) in shapes {
                candidates.push((start(mt0, mt1, [1, 1, 1], waves, pgr, grvw), 1));
            }
            // Many small batches (a few rows each, row blocks many waves of compute units
            // deep): two waves with one load in flight waste the least on rows past M. H200,
            // a sweep of 3x3x100 x100000 f32: 252.6 us on 16 rows of two waves [cuBLASLt
            // 256.7], 322.5 on the first start above.
            if row_blocks(16) >= MANY_BLOCKS_PER_CU * self.hw.compute_units as i64 && p.m <= 8 {
                candidates.push((start(16, mt1, [1, 1, 1], 2, 1, grvw), 1));
            }
        } else {
            let mut v = grvw;
            while wave * v > 256 {
                v /= 2;
            }
            candidates.push((start(wave * v, mt1, [1, 1, 1], 8, 4, v), 1));
        }
        let mut out = Vec::new();
        for (base, min_pgr) in candidates {
            // Fewer loads in flight where the registers do not hold that many (B read
            // element by element takes one register per element), then no split.
            let found = (min_pgr..=base.pgr)
                .rev()
                .flat_map(|pgr| [base.gsu, 1].map(|gsu| KernelConfig { pgr, gsu, ..base }))
                .map(KernelConfig::canonical)
                .find(|c| self.is_valid(c));
            if let Some(c) = found.filter(|c| !out.contains(c)) {
                out.push(c);
            }
        }
        out
    }

    /// The smallest split in the domain that gives every compute unit one row block
    /// (K-contiguous A) or three (M-contiguous A), keeping the least K per split above; 1
    /// when none is needed or allowed. M-contiguous, H200, bf16 on 256-row workgroups, us
    /// [cuBLASLt]: 4096x1x4096 NN 17.1 split in 16 (two a unit), 15.7 in 32 [15.9];
    /// 14336x1x4096 NN 37.1 in 6, 34.4 in 8 (three a unit) [33.0], 36.1 in 16.
    fn gemv_split(&self, p: &GemmProblem, blocks: i64) -> i64 {
        let (per_cu, min_k) = if p.trans_a.is_t() {
            (1, MIN_SPLIT_K_ROWS)
        } else {
            (3, MIN_SPLIT_M_ROWS)
        };
        let want = per_cu * self.hw.compute_units as i64;
        if blocks >= want {
            return 1;
        }
        let most = (p.k / min_k).max(1);
        // The opt-in widest split (128) too: where the searched ones (up to 64) leave most
        // compute units idle, a long K waits on too few workgroups. H200, 1x1x4194304 (a dot
        // product of 4M elements) on the searched widest, 64 ways: 71.6 us [cuBLASLt 25.3].
        let domain = self.domain(ParamId::GlobalSplitU);
        let mut allowed: Vec<i64> = (domain.values.iter().chain(&domain.opt_in).copied())
            .filter(|&s| s <= most)
            .collect();
        allowed.sort_unstable();
        allowed
            .iter()
            .copied()
            .find(|&s| blocks * s >= want)
            .or_else(|| allowed.iter().copied().max())
            .unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::DataType::F32;
    use crate::problem::{GemmProblem, Trans};
    use crate::space::constraints;

    #[test]
    fn a_decode_gemv_starts_on_eight_rows_per_wave_split_to_fill_the_compute_units() {
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        let fma_starts = |m: i64| {
            let p = GemmProblem::new(m, 1, 4096);
            let space = Space::for_problem(&p, &hw);
            let starts: Vec<KernelConfig> = (space.gemv_starts().into_iter())
                .filter(|c| c.mi == [1, 1, 1])
                .collect();
            for c in &starts {
                space.check(c).unwrap();
            }
            let rows = |c: &KernelConfig| constraints::gemv_rows(c, &p, hw.wave_size);
            // Every FMA start keeps eight vectors in flight per lane, on 2, 4 or 8 rows.
            let spread: Vec<u32> = starts.iter().map(rows).collect();
            assert_eq!(spread, [2, 4, 8]);
            assert!(starts.iter().all(|c| rows(c) * c.pgr == 8));
            let eight = *starts.iter().find(|c| rows(c) == 8).unwrap();
            let blocks = (p.m + eight.mt0 as i64 - 1) / eight.mt0 as i64;
            (eight, blocks)
        };
        // 128 blocks of 32 rows leave 4 of the 132 SMs idle: K split in two, 256 workgroups.
        let (c, blocks) = fma_starts(4096);
        assert_eq!((c.mt0, c.wg, c.pgr, c.gsu), (32, [4, 1], 1, 2));
        assert_eq!(c.gsu_algo, GsuAlgo::Reduce);
        assert!(blocks * c.gsu as i64 >= hw.compute_units as i64);
        // 448 blocks fill them without a split.
        let (c, _) = fma_starts(14336);
        assert_eq!((c.mt0, c.gsu), (32, 1));
    }

    #[test]
    fn a_dot_product_of_millions_splits_past_the_searched_widest() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(1, 1, 4194304);
        let space = Space::for_problem(&p, &hw);
        let starts = space.gemv_starts();
        assert!(!starts.is_empty());
        for c in &starts {
            space.check(c).unwrap();
            assert_eq!((c.gsu, c.gsu_algo), (128, GsuAlgo::Reduce), "{}", c.name());
        }
        // A K too short for 128 splits of the least K a split keeps: the searched values.
        let short = Space::for_problem(&GemmProblem::new(1, 1, 65536), &hw);
        assert!(short.gemv_starts().iter().all(|c| c.gsu <= 32));
    }

    #[test]
    fn a_row_of_m_major_a_starts_along_n_where_b_is_k_contiguous() {
        let hw = HwSpec::by_name("H200").unwrap();
        // 1x4x1048576 NN: along N = 4 its one row of A is M-major (no GEMV reads it); along M
        // its B is four K-contiguous rows.
        let mut p = GemmProblem::with_layout(1, 4, 1048576, Trans::N, Trans::N);
        p.fill_defaults();
        let space = Space::for_problem(&p, &hw);
        let starts = space.gemv_starts();
        assert!(!starts.is_empty());
        for c in &starts {
            space.check(c).unwrap();
            assert_eq!(c.sab, 1, "{}", c.name());
        }
        assert_eq!(space.gemv_along().map(|(_, sab)| sab), Some(1));
        // Where both sides stream K-contiguous rows, the unswapped side comes first.
        let dot = Space::for_problem(&GemmProblem::new(1, 1, 4194304), &hw);
        assert!(dot.gemv_starts().iter().all(|c| c.sab == 0));
    }

    #[test]
    fn many_small_batches_start_on_two_waves_too() {
        let hw = HwSpec::by_name("H200").unwrap();
        let mut p = GemmProblem::new(3, 3, 100);
        p.batch = 100_000;
        (p.a_type, p.b_type, p.c_type, p.d_type) = (F32, F32, F32, F32);
        p.fill_defaults();
        let space = Space::for_problem(&p, &hw);
        let two = space.gemv_starts().into_iter().find(|c| c.wg == [2, 1]);
        let two = two.expect("a two-wave start");
        assert_eq!((two.mt0, two.pgr), (16, 1));
        // A few batches of long rows: no such start.
        let mut few = GemmProblem::new(3, 3, 4096);
        few.batch = 8;
        let space = Space::for_problem(&few, &hw);
        assert!(space.gemv_starts().iter().all(|c| c.wg != [2, 1]));
    }

    #[test]
    fn canonical_gemv_configs_hold_the_fixed_values() {
        let space = Space::for_problem(
            &GemmProblem::new(4096, 2, 4096),
            &HwSpec::by_name("H200").unwrap(),
        );
        let start = space.gemv_starts()[0];
        let noisy = KernelConfig {
            depth_u: 128,
            plr: 1,
            lpa: 8,
            lpb: 4,
            swizzle: 1,
            wgm: 16,
            svw: 8,
            su: 4,
            pw: 1,
            sab: 1,
            pk: 1,
            ..start
        };
        for (id, v) in GEMV_FIXED {
            assert_eq!(id.get(&noisy.canonical()), v, "{}", id.name());
        }
        let only = space.gemv_only().unwrap();
        assert!(only.is_valid(&start));
        let configs = only.enumerate(u128::MAX).unwrap();
        assert!(configs.iter().all(|c| c.gv == 1) && configs.contains(&start));
        let tiles = space.tiles_only();
        assert!(!tiles.domain(ParamId::MacroTile1).contains(8));
        assert!(tiles.default_config().is_ok_and(|c| c.gv == 0));
    }
}
