//! Starts of one wave of tiles on one warpgroup, each as wide as N cut into as many equal parts
//! as the wave holds beside M's tile rows: 64-row tiles of 96 to 256 columns, and 192-row tiles
//! of 64 to 80 columns (the warpgroup's three 64-row slices). Where M has few tile rows and N is
//! wide, 128-row tiles fill the same wave only as tiles of another shape: 2560x450x10240 f16
//! makes 120 tiles either as 128x80 or as 64x152, and 576x3000x7168 126 either as 192x72 or as
//! 128x120 (with 64 idle rows of M); cuBLASLt runs the former of each
//! (`nvjet_sm90_hsh_64x152_64x7_4x1_v_bz`, `nvjet_sm90_tst_192x72_64x6_1x2_h_bz`).
//!
//! Problem in, at most one config per height out; bench's default set and the search's first
//! batch take them beside the others (`Space::extra_starts`).

use super::config::KernelConfig;
use super::constraints;
use super::one_wave::one_wave_tile;
use super::param::ParamId;
use super::tuning_space::{tile_count, Space};

/// The tiles' rows, each with the widths they take: narrower tiles do too little work per
/// stage for their loads (the few-tile and narrow-N starts cover those), wider ones do not fit
/// one warpgroup's accumulators (a 192-row tile's three slices hold 1.5 a column).
const HEIGHTS: [(i64, std::ops::RangeInclusive<i64>); 2] = [(64, 96..=256), (192, 64..=80)];

/// Least share of the compute units, in percent, the one wave must occupy, and least share of
/// its tiles' area the problem must fill.
const MIN_FILL_PERCENT: i64 = 85;

/// K steps (of the default's DepthU) a tile streams at least: with fewer, one wave of such
/// tiles loses to the persistent kernel's overlapped epilogues.
const MIN_K_STEPS: i64 = 16;

impl Space {
    /// One wave of 64- or 192-row tiles on one warpgroup beside the producer warp, N in as many
    /// equal parts as the wave holds beside M's tile rows, where the wave and the tiles' area
    /// are each at least 85% full and the parts are as wide as the height takes: whole K, the
    /// N tiles of a row of A side by side, as deep as fits. 16-bit operands, B K-major in LDS
    /// (widths in steps of 8), without a batch only (measured there).
    ///
    /// H200, kernel against kernel, one call each (cuBLASLt in brackets): 2560x450x10240 f16
    /// on 64x152 (seven stages) 38.0 us against 42.1 for the best of bench's default set
    /// (128x80, persistent) [37.1]; 64x160 (the next step of 16, still three parts) ran 51.4.
    /// 576x3000x7168 on 192x72 (six stages) 37.6 against 43.6 for the best of the set (swapped
    /// 144x128) and 46.8 on 64x216 [39.5]; on three warpgroups of 64 rows 38.3.
    pub fn one_warpgroup_wave_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        if !constraints::is_wgmma(&start)
            || p.batch > 1
            || p.a_type.bytes() != 2
            || p.b_type.bytes() != 2
            || p.k < MIN_K_STEPS * start.depth_u as i64
            || self.n_step() != 8
        {
            return Vec::new();
        }
        HEIGHTS
            .iter()
            .filter_map(|(rows, widths)| {
                let width = self
                    .one_wave_width(*rows, MIN_FILL_PERCENT)
                    .filter(|w| widths.contains(w))?;
                let area = tile_count(p, *rows, width) * rows * width;
                if p.m * p.n * 100 < area * MIN_FILL_PERCENT {
                    return None;
                }
                let tile = [
                    one_wave_tile(*rows, width, 1).as_slice(),
                    &[(ParamId::WavesM, 4)],
                ]
                .concat();
                Some(self.with_deepest_pipeline(&tile)?.raw_default())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::{KernelConfig, Space};

    fn h200(p: &GemmProblem) -> Space {
        Space::for_problem(p, &HwSpec::by_name("H200").unwrap())
    }

    fn f16(mut p: GemmProblem) -> GemmProblem {
        p.a_type = DataType::F16;
        p.b_type = DataType::F16;
        p.c_type = DataType::F16;
        p.d_type = DataType::F16;
        p
    }

    fn start(p: &GemmProblem) -> Option<KernelConfig> {
        h200(p).one_warpgroup_wave_starts().first().copied()
    }

    #[test]
    fn cuts_n_into_the_parts_one_wave_of_64_row_tiles_holds() {
        let p = f16(GemmProblem::new(2560, 450, 10240));
        let c = start(&p).unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.wg, c.pk, c.gsu, c.sab),
            (64, 152, [4, 1], 0, 1, 0)
        );
        assert!(h200(&p).is_valid(&c));
        assert!(c.pgr >= 4, "{}", c.name());
        // Not measured with an N-major B (widths in steps of 32).
        let nt = GemmProblem::with_layout(2560, 450, 10240, Trans::N, Trans::T);
        assert_eq!(start(&nt), None);
    }

    #[test]
    fn cuts_n_into_the_parts_one_wave_of_192_row_tiles_holds() {
        // Three tile rows of 192 and 42 parts of 72 columns: 126 tiles, as cuBLASLt cuts it.
        let p = GemmProblem::new(576, 3000, 7168);
        let starts = h200(&p).one_warpgroup_wave_starts();
        let c = starts.iter().find(|c| c.mt0 == 192).unwrap();
        assert_eq!((c.mt1, c.wg, c.pk, c.gsu), (72, [4, 1], 0, 1));
        assert!(h200(&p).is_valid(c));
        // The search's first batch takes it (in the tile order its wave wants).
        let same = |e: &KernelConfig| (e.mt0, e.mt1, e.wg, e.pk) == (192, 72, [4, 1], 0);
        assert!(h200(&p).extra_starts().iter().any(same));
        // 600 rows make four tile rows of 192, a fifth of them idle.
        let idle = GemmProblem::new(600, 3000, 7168);
        assert!(h200(&idle)
            .one_warpgroup_wave_starts()
            .iter()
            .all(|c| c.mt0 != 192));
    }

    #[test]
    fn not_where_the_wave_is_short_the_tiles_narrow_or_k_short() {
        // 80 slices of 64 rows leave one part of N: 450 columns.
        assert_eq!(start(&GemmProblem::new(5120, 450, 10240)), None);
        // Four parts of 64 columns.
        assert_eq!(start(&GemmProblem::new(2048, 256, 8192)), None);
        // Ten 64-k steps.
        assert_eq!(start(&GemmProblem::new(2560, 450, 640)), None);
        let mut batched = GemmProblem::new(2560, 450, 10240);
        batched.batch = 2;
        assert_eq!(start(&batched), None);
    }
}
