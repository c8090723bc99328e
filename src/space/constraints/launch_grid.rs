//! The launch grid's limits: a grid holds at most 65535 workgroups along y and z, and the
//! kernels that give each batch a layer of their grid (the reduction kernel, the operand
//! copies of kernels/loader/gt_pack_kernel.h) cannot take more batches than that. The
//! data-parallel and GEMV main kernels fold the batches past 65535 into y beside their splits
//! (kernels/scheduler/gt_tile_map.h's gt_split_and_batch); the persistent kernel and stream-K
//! walk the batches inside a one-dimensional grid.
//!
//! Rule: `launch-grid`. Without it a launch past the limit fails in the driver
//! (CUDA_ERROR_INVALID_VALUE) and takes the whole measurement with it.

use super::pack_mn_major::mn_packed_operands;
use super::warpgroup::packed_operands;
use super::{fail, Violation};
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// Most workgroups of a launch grid along y and along z (CUDA and HIP alike).
pub const MAX_GRID_YZ: i64 = 65535;

/// `launch-grid`: more batches than a grid's z holds need a main kernel that walks or folds
/// them, with no reduction kernel after it and no operand copy first.
pub(super) fn batches(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    if p.batch <= MAX_GRID_YZ {
        return Ok(());
    }
    let walks = c.gv == 0 && (c.pk > 0 || c.gsu_algo == GsuAlgo::StreamK);
    let folds = !walks && c.pk == 0 && !c.has_reduction_kernel();
    let [ka, kb] = packed_operands(c, p);
    let [ma, mb] = mn_packed_operands(c, p);
    let copies = ka || kb || ma || mb || c.pu > 0;
    if !(walks || folds) || copies {
        return fail(
            "launch-grid",
            format!(
                "{} batches are more than a launch grid's {MAX_GRID_YZ} layers: the persistent kernel and stream-K (PersistentKernel=1 or 2, GSU<n>S) walk them and the data-parallel and GEMV kernels fold them into the grid's y, with no split-K reduction kernel (GSU<n>R, GSU<n>A) after them and no operand copied first",
                p.batch
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::check;
    use super::*;
    use crate::hw::HwSpec;

    fn rule(c: &str, p: &GemmProblem) -> &'static str {
        let hw = HwSpec::by_name("H200").unwrap();
        let c = KernelConfig::parse(c).unwrap();
        check(&c, p, &hw).map(|_| "ok").unwrap_or_else(|v| v.rule)
    }

    #[test]
    fn batches_past_a_grids_layers_take_the_kernels_that_walk_or_fold_them() {
        let many = GemmProblem {
            batch: MAX_GRID_YZ + 1,
            ..GemmProblem::new(64, 64, 64)
        };
        let most = GemmProblem {
            batch: MAX_GRID_YZ,
            ..many.clone()
        };
        let data_parallel =
            "MT64x64x64_MI64x8x16_WG4x1_PGR1_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0";
        assert_eq!(rule(data_parallel, &most), "ok");
        // The data-parallel kernel folds them into y; with a reduction kernel after it, no.
        assert_eq!(rule(data_parallel, &many), "ok");
        let long = |batch: i64| GemmProblem {
            batch,
            ..GemmProblem::new(64, 64, 256)
        };
        let reduced =
            "MT64x64x64_MI64x8x16_WG4x1_PGR1_PLR0_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0";
        assert_eq!(rule(reduced, &long(MAX_GRID_YZ)), "ok");
        assert_eq!(rule(reduced, &long(MAX_GRID_YZ + 1)), "launch-grid");
        let in_kernel = reduced.replace("GSU2R", "GSU2K");
        assert_eq!(rule(&in_kernel, &long(MAX_GRID_YZ + 1)), "ok");
        let persistent =
            "MT64x64x64_MI64x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1";
        assert_eq!(rule(persistent, &many), "ok");
        let stream_k =
            "MT16x16x32_MI16x8x16_WG1x1_PGR4_PLR1_LPA8_LPB8_SW0_GSU1S_WGM8_GRVW8_SVW4_SU0";
        assert_eq!(rule(stream_k, &many), "ok");
        // A copy first (B's rows of 66 bytes, unreadable by a tensor map) gives each batch a
        // layer of the copy's grid.
        let odd = GemmProblem {
            batch: MAX_GRID_YZ + 1,
            ..GemmProblem::new(64, 33, 64)
        };
        let mut nt = odd.clone();
        nt.trans_a = crate::problem::Trans::N;
        nt.trans_b = crate::problem::Trans::T;
        nt.lda = 0;
        nt.ldb = 0;
        nt.fill_defaults();
        let c = KernelConfig::parse(persistent).unwrap();
        assert_eq!(packed_operands(&c, &nt), [false, true]);
        assert_eq!(rule(persistent, &nt), "launch-grid");
    }
}
