//! A start of 64-row tiles in one wave, each as wide as N cut into as many equal parts as the
//! wave holds beside M's tile rows (96 to 256 columns), whole K, one warpgroup. Where M has few
//! 64-row slices and N is a few hundred columns, 128-row tiles fill the same wave only as
//! narrower tiles of two instruction slices each, which read each column of B from LDS twice
//! per tile: 2560x450x10240 f16 makes 120 tiles either as 128x80 or as 64x152, and cuBLASLt
//! runs the latter (`nvjet_sm90_hsh_64x152_64x7_4x1_v_bz`, 120 workgroups).
//!
//! Problem in, at most one config out; bench's default set and the search's first batch take
//! it beside the others (`Space::extra_starts`).

use super::config::KernelConfig;
use super::constraints;
use super::one_wave::one_wave_tile;
use super::tuning_space::Space;

/// The tile's rows: one warpgroup, one instruction slice.
const THIN_ROWS: i64 = 64;

/// Least share of the compute units, in percent, the one wave must occupy.
const MIN_FILL_PERCENT: i64 = 85;

/// The widths taken: narrower, a 64-row tile does too little work per stage for its loads
/// (the few-tile starts cover those); wider, one warpgroup's accumulators do not fit.
const WIDTHS: std::ops::RangeInclusive<i64> = 96..=256;

/// K steps (of the default's DepthU) a tile streams at least: with fewer, one wave of thin
/// tiles loses to the persistent kernel's overlapped epilogues.
const MIN_K_STEPS: i64 = 16;

impl Space {
    /// One wave of 64-row tiles on N in as many equal parts as the wave holds beside M's
    /// 64-row slices, where it fills at least 85% of the compute units and the parts are 96 to
    /// 256 columns wide: whole K, one warpgroup beside the producer warp, the N tiles of a row
    /// of A side by side, as deep as fits. 16-bit operands, B K-major in LDS (widths in steps
    /// of 8), without a batch only (measured there).
    ///
    /// H200, kernel against kernel, one call (cuBLASLt in brackets): 2560x450x10240 f16 on
    /// 64x152 (seven stages) 38.0 us against 42.1 for the best of bench's default set (128x80,
    /// persistent) [37.1]; 64x160 (the next step of 16, still three parts) ran 51.4.
    pub fn thin_rows_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        if !constraints::is_wgmma(&start)
            || p.batch > 1
            || p.a_type.bytes() != 2
            || p.b_type.bytes() != 2
            || p.k < MIN_K_STEPS * start.depth_u as i64
            || self.n_step() != 8
        {
            return None;
        }
        let width = self
            .one_wave_width(THIN_ROWS, MIN_FILL_PERCENT)
            .filter(|w| WIDTHS.contains(w))?;
        let tile = one_wave_tile(THIN_ROWS, width, 1);
        Some(self.with_deepest_pipeline(&tile)?.raw_default())
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
        h200(p).thin_rows_start()
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
