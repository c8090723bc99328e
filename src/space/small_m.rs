//! Starts for few rows on the Hopper warpgroup path: M up to 64 with N past a tile (a row
//! vector or a few rows times a weight, `x^T W`) on the warpgroup tile transposed, all of M
//! in one tile, and M of 65 to 128 (one row of 128-row tiles) in pairs along N sharing A.
//! Starts beside the default that the search measures in its first batch and `bench` in its
//! default set.

use super::config::KernelConfig;
use super::constraints;
use super::param::pack_mi;
use super::param::ParamId;
use super::tuning_space::{tile_count, wgmma_operand_prefs, Space, TINY_M_TILES};

impl Space {
    /// M of 65 to 128 rows (one row of 128-row tiles) with N of half a wave of 64-column
    /// tiles or more: 128x64 tiles on two warpgroups in pairs along N sharing A
    /// (ClusterN=2), the producer warp loading, as deep as fits. Every workgroup reads all
    /// of A's rows for its K steps, so the small A is read from the L2 once per N tile, more
    /// than B; pairs halve that. H200, same call: 96x8192x8192 NT 44.7 us on 128x64 pairs
    /// against 50.1 alone [cuBLASLt 38.0].
    pub fn one_row_pair_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let wgmma = pack_mi(constraints::wgmma_mi(p.a_type));
        if !(65..=128).contains(&p.m)
            || !self.domain(ParamId::MatrixInstruction).contains(wgmma)
            || !self.domain(ParamId::ClusterN).admits(2)
            || tile_count(p, 128, 64) * 2 < self.hw.compute_units as i64
        {
            return None;
        }
        let tile = [
            (ParamId::MacroTile0, 128),
            (ParamId::MacroTile1, 64),
            (ParamId::WavesM, 8),
            (ParamId::WavesN, 1),
            (ParamId::SwapAB, 0),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (ParamId::WorkGroupMapping, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 0),
            (ParamId::ClusterN, 2),
        ];
        let prefs: Vec<(ParamId, i64)> = wgmma_operand_prefs(p).into_iter().chain(tile).collect();
        Some(self.with_deepest_pipeline(&prefs)?.raw_default())
    }

    /// Starts for M up to 64 with N past a tile (a row vector or a few rows times a weight,
    /// `x^T W`): the warpgroup tile transposed (SwapAB), all of M in one tile (M rounded up to
    /// 16 rows, so B is streamed once) on a warpgroup whose instruction runs along N, N in
    /// 64-column tiles unsplit, and in 128-column tiles with K split in four and summed in
    /// the kernel; the producer warp loading, one stage left in the tensor cores, as deep as
    /// fits. Up to 32 rows no unswapped 64-row tile is valid, and the first is the default.
    /// Without them the search kept mma.sync tiles with K split in 24 (8x4096x4096 NN 26.3
    /// us, 4x4096x4096 NN 27.5), and 8-bit problems of 4 to 40 rows had no valid default at
    /// all. H200, same call (cuBLASLt in brackets): 4x4096x4096 NN 17.9 us on MT16x64 [22.5];
    /// 8x4096x4096 NN 19.5 on MT16x64, 17.2 on MT16x128 GSU4K [16.9]; 8x4096x4096 TN 14.7 on
    /// MT16x64 [15.6]. (The GEMV along N wins M = 1 and loses from four columns on: every
    /// lane reads all of B's columns for its K, 42-274 us here.)
    pub fn tiny_m_starts(&self) -> Vec<KernelConfig> {
        TINY_M_TILES
            .into_iter()
            .filter_map(|tile| Some(self.tiny_m_space(tile)?.raw_default()))
            .collect()
    }

    /// This space started on a [`TINY_M_TILES`] tile (see [`Space::tiny_m_starts`]), with the
    /// widest store vector ldd allows; `None` where the problem is not M up to 64 with N past
    /// 64 on the warpgroup path, or no depth makes the tile valid.
    pub(super) fn tiny_m_space(&self, (mt1, split, algo): (i64, i64, i64)) -> Option<Space> {
        let p = &self.problem;
        // (The default itself may not be a warpgroup config here: its 128-row tiles are
        // larger than M needs.)
        let wgmma = pack_mi(constraints::wgmma_mi(p.a_type));
        // Also M between one and two warpgroup slices, where a 128-row tile would compute a
        // third or more of padding, when A is K-major: 96x8192x8192 TN ran 40.1 us on MT96x64
        // against 54.5 on 128x64 [cuBLASLt 39.2]; NT 50.5 against 50.1 (H200, same call).
        let rows = p.m <= 64 || (p.m < 128 && p.m % 64 != 0 && p.k_contiguous(true));
        if !self.domain(ParamId::MatrixInstruction).contains(wgmma)
            || !rows
            || p.n < 64
            || !self.domain(ParamId::SwapAB).contains(1)
        {
            return None;
        }
        let ed = p.d_type.bytes() as i64;
        let tile = [
            (ParamId::Gemv, 0),
            (ParamId::SwapAB, 1),
            // One M tile: M in steps of 16.
            (ParamId::MacroTile0, (p.m + 15) / 16 * 16),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, 1),
            (ParamId::GlobalSplitU, split),
            (ParamId::GlobalSplitUAlgorithm, algo),
            (ParamId::WorkGroupMapping, 1),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 0),
            (
                ParamId::StoreVectorWidth,
                self.widest_store((16 / ed).max(1)),
            ),
        ];
        let prefs: Vec<(ParamId, i64)> = wgmma_operand_prefs(p).into_iter().chain(tile).collect();
        self.with_deepest_pipeline(&prefs)
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::{GsuAlgo, Space};

    #[test]
    fn small_m_starts_on_swapped_rows_and_on_pairs_sharing_a() {
        let hw = HwSpec::by_name("H200").unwrap();
        let nt = GemmProblem {
            trans_a: Trans::N,
            trans_b: Trans::T,
            ..GemmProblem::new(96, 8192, 8192)
        };
        // TN, 96 rows: the transposed 96-row tile among the starts; NT (an M-major A): not.
        let tn = Space::for_problem(&GemmProblem::new(96, 8192, 8192), &hw);
        let swapped = tn.tiny_m_starts();
        assert!(!swapped.is_empty());
        assert_eq!(
            (swapped[0].mt0, swapped[0].mt1, swapped[0].sab),
            (96, 64, 1)
        );
        assert!(Space::for_problem(&nt, &hw).tiny_m_starts().is_empty());
        // Either way, one row of 128x64 tiles in pairs along N sharing A.
        for p in [GemmProblem::new(96, 8192, 8192), nt] {
            let s = Space::for_problem(&p, &hw);
            let pair = s.one_row_pair_start().expect("one row of tiles");
            s.check(&pair).unwrap();
            assert_eq!(
                (pair.mt0, pair.mt1, pair.cn, pair.pw),
                (128, 64, 2, 1),
                "{}",
                p.label()
            );
            assert!(pair.pgr >= 8, "{}", pair.name());
            assert!(s.extra_starts().contains(&pair));
        }
        // Two rows of tiles, or a 128-row multiple: neither.
        let s = Space::for_problem(&GemmProblem::new(4096, 4096, 4096), &hw);
        assert_eq!(s.one_row_pair_start(), None);
        assert!(Space::for_problem(&GemmProblem::new(128, 8192, 8192), &hw)
            .tiny_m_starts()
            .is_empty());
    }

    #[test]
    fn tiny_m_starts_on_the_transposed_warpgroup_tile() {
        let hw = HwSpec::by_name("H200").unwrap();
        for (m, svw) in [(1, 1), (4, 4), (8, 8), (16, 8), (24, 8)] {
            let p = GemmProblem::with_layout(m, 4096, 4096, Trans::N, Trans::N);
            let s = Space::for_problem(&p, &hw);
            let starts = s.tiny_m_starts();
            assert_eq!(starts.len(), 2, "M={m}");
            for c in &starts {
                s.check(c).unwrap();
                let mt0 = (m as u32).div_ceil(16) * 16;
                assert_eq!((c.mt0, c.sab, c.pw, c.plr, c.svw), (mt0, 1, 1, 1, svw));
                // (The first is the default where no 64-row tile is valid.)
                let (default, c) = (s.default_config().ok(), s.tile_order(c));
                assert!(s.extra_starts().contains(&c) || default == Some(c), "M={m}");
            }
            assert_eq!((starts[0].mt1, starts[0].gsu), (64, 1));
            assert_eq!((starts[1].mt1, starts[1].gsu), (128, 4));
            assert_eq!(starts[1].gsu_algo, GsuAlgo::SingleKernel);
        }
        // The default too, in 8-bit types (no other path takes them).
        let mut p = GemmProblem::new(12, 4096, 4096);
        (p.a_type, p.b_type) = (DataType::F8, DataType::F8);
        let c = Space::for_problem(&p, &hw).default_config().unwrap();
        assert_eq!((c.mt0, c.mt1, c.sab, c.svw), (16, 64, 1, 4));
        // From 33 rows on, one warpgroup's 64.
        let mut p = GemmProblem::new(40, 4096, 4096);
        (p.a_type, p.b_type) = (DataType::F8, DataType::F8);
        let c = Space::for_problem(&p, &hw).default_config().unwrap();
        assert_eq!((c.mt0, c.wg, c.sab), (64, [4, 1], 0));
        assert_eq!(Space::for_problem(&p, &hw).tiny_m_starts()[0].mt0, 48);
        // 65 rows with a K-major A: the transposed 80-row tile (more than one slice, less than
        // two); with an M-major A, 128 rows, or N under a tile: none.
        let s = Space::for_problem(&GemmProblem::new(65, 4096, 4096), &hw);
        assert_eq!(s.tiny_m_starts()[0].mt0, 80);
        let nt = GemmProblem {
            trans_a: Trans::N,
            trans_b: Trans::T,
            ..GemmProblem::new(65, 4096, 4096)
        };
        for p in [
            nt,
            GemmProblem::new(128, 4096, 4096),
            GemmProblem::new(8, 32, 4096),
        ] {
            let s = Space::for_problem(&p, &hw);
            assert!(s.tiny_m_starts().is_empty(), "{}", p.label());
        }
    }
}
