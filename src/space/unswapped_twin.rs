//! The unswapped twin of a skinny problem's swapped default (N of 65 to 128; narrower N has
//! the narrow-N start, narrow_n.rs): N in one tile of the instruction's own width, 128 rows,
//! the producer warp.
//!
//! The swapped default (tuning_space.rs, `swapped_start`) is chosen by the operand rows each
//! compute unit streams, which favours a wave of swapped tiles over fewer unswapped ones.
//! Where N is not a multiple of 64 the swapped tile's 64-row slices along N run past it, and
//! the swapped wave streams more operand rows in all (10240x96: 128 tiles of 80 + 96 rows a
//! k against 80 of 128 + 96, 1.26 times as many); on an H200 the time followed that total
//! (1.22 times as long), not the idle compute units. Kernel against kernel, one call
//! (cuBLASLt in brackets): 10240x96x8192 on 128x96 48.5 us against 59.1 on the
//! swapped 80x128 default [56.0]; 12288x80x4096 on 128x80 31.7 against 45.6 [31.6];
//! 10240x112x8192 on 128x112 49.3 against 51.4 [51.3]. Where N is a whole number of slices
//! the swapped default stays ahead (29568x128x8192: 224x128 swapped 126.1, 128x128 130.5
//! [133.2]), so which runs faster is measured: a start beside the default.

use super::config::KernelConfig;
use super::tuning_space::{split_in_kernel_tile, tile_count, Space, NARROW_N_MAX};

/// Stages of the twin's 64 k: the depth the figures above ran at.
const TWIN_STAGES: i64 = 6;

impl Space {
    /// The unswapped twin where the default is swapped and N is 65 to 128: 128 rows by N
    /// rounded up to [`Space::n_step`] (`Space::n_part_width` of one part), two warpgroups
    /// along M fed by the producer warp, whole K, up to `TWIN_STAGES` stages; only where its
    /// tiles make at least half a wave (fewer leave too many compute units idle to stream A
    /// at the rate the swapped wave does).
    pub fn unswapped_twin_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let cus = self.hw.compute_units.max(1) as i64;
        if start.sab != 1 || p.n <= NARROW_N_MAX || p.n > 128 {
            return None;
        }
        let mt1 = self.n_part_width(1);
        if tile_count(p, 128, mt1) * 2 < cus {
            return None;
        }
        let space = self.with_pipeline_up_to(&split_in_kernel_tile(128, mt1, 1), TWIN_STAGES)?;
        Some(space.raw_default())
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;
    use crate::space::Space;

    fn h200(m: i64, n: i64, k: i64) -> Space {
        Space::for_problem(
            &GemmProblem::new(m, n, k),
            &HwSpec::by_name("H200").unwrap(),
        )
    }

    #[test]
    fn swapped_defaults_get_an_unswapped_twin_of_whole_n() {
        for (m, n, k, width) in [(10240, 96, 8192, 96), (12288, 80, 4096, 80)] {
            let s = h200(m, n, k);
            assert_eq!(s.raw_default().sab, 1, "{m}x{n}x{k}: swapped default");
            let c = s.unswapped_twin_start().expect("a twin");
            s.check(&c).unwrap();
            assert_eq!(
                (c.sab, c.mt0, c.mt1, c.pw, c.pk, c.gsu, c.pgr),
                (0, 128, width, 1, 0, 1, 6),
                "{m}x{n}x{k}"
            );
            assert!(s.extra_starts().contains(&s.tile_order(&c)), "{m}x{n}x{k}");
        }
        // Under half a wave of 128-row tiles (6144x96: 48), narrow N, or an unswapped
        // default: none.
        for (m, n, k) in [
            (6144, 96, 4096),
            (14336, 8, 4096),
            (16384, 96, 4096),
            (4096, 4096, 4096),
        ] {
            assert_eq!(h200(m, n, k).unswapped_twin_start(), None, "{m}x{n}x{k}");
        }
    }
}
