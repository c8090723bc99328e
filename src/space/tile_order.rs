//! The tile order of a warpgroup start that computes one tile per workgroup (WorkGroupMapping:
//! consecutive workgroups walk down groups of that many tile rows, scheduler/gt_tile_map.h).
//! Where all tiles run at once (one wave) the order decides nothing about what stays in L2
//! between waves, only which workgroups the GPU places side by side, and through that how many
//! bytes the L2 serves. An NVIDIA launch puts consecutive workgroups in pairs on the two
//! compute units of one texture processing cluster, and successive pairs on different GPCs.
//!
//! - Where N spans only a few tiles (two to four), the tiles of one row of A belong side by
//!   side (WorkGroupMapping 1): each row of A has only those few readers, each column of B
//!   many, and over several waves B's few columns stay in L2 while each row of A is read by
//!   its tiles together.
//! - Every other one-wave start: groups of four tile rows (WorkGroupMapping 4), four
//!   consecutive workgroups sharing a column of B.
//!
//! Measured on an H200, kernel against kernel, one call each (cuBLASLt in brackets), the same
//! tile with WorkGroupMapping 1 / 4 / 8: 4096x333x4096 beta 1 on persistent 128x96 (4 tile
//! columns) 23.3 / 23.5 / 30.6 [24.4]; 2880x256x2880 on swapped 96x64 (4) 13.1 / 13.2 / 15.5
//! [11.4]. Another call, 14 GEMMs of 32-132 tiles, WorkGroupMapping 1 / 2 / 4 / 8 on every
//! one-wave tile of bench's default set (their starts had 1 or 8): 256x6272x2304 NN f16 on
//! 128x96 18.9 / 16.6 / 16.7 / 16.6 [16.8]; 512x1568x4608 NN f16 on 64x112 23.0 / 17.2 /
//! 17.4 / 17.5 [18.7]; 1024^2x4096 on 64x128 22.6 / 19.9 / 17.2 / 17.3 [19.5]; 1152x768x8192 on
//! 64x112 34.4 / 32.6 / 26.8 / 32.8 [27.0]; 1280x768x4096 on 64x128 17.4 / 17.3 / 17.4 / 20.1
//! [17.1]; 256x3072x8192 NT on 64x96 42.6 / 35.9 / 30.9 / 30.2 [27.5]. Of the 61 tiles whose
//! order moved the time by 0.6 us or more, four was the best or within 0.3 us of it on 46, and
//! none of the other 15 was its GEMM's fastest tile, while one and eight each lost up to a
//! quarter. `ncu` on 256x6272x2304 TN (128x96): the L2's read sectors from the SMs drop from
//! 3.00 M (WorkGroupMapping 1) to 2.35 M (2) and 2.31 M (8), and the time from 16.74 us to
//! 15.01 / 15.10, while the SMs receive the same 136 MB. Over several waves, 1 / 2 / 4 / 8 /
//! 16: 18432x256x2304 on persistent swapped 144x128 36.1 / 36.4 / 37.1 / 37.6 / 39.0 [33.0];
//! 28672x384x4096 e4m3 on persistent swapped 176x128 70.2 / 70.5 / 71.0 / 72.3 / 76.1 [66.1],
//! on 128x192 74.7 / 74.8 / 75.1 / 75.6 / 76.7; 9216x520x4096 on 128x176 61.8 / 62.0 / 61.9
//! / 62.2 / 62.1; with more tile columns (4096^3, 8192x1024x4096, 6144x2048x4096 NN,
//! 3840x1500x1280 on 128x256 and 128x192) within 1% of each other except 4096^3 (16 best,
//! 1.0% ahead of 8), left as the starts have them. Where B's tile is the taller, N in two
//! tiles, one wave: 4096x130x11008 on 64x72 31.2 with 1 against 37.2 with 4 [34.8], 64x80
//! 44.0 against 47.8 (bench's default set with either order, one call); 1536x768x2048 NT
//! on 64x192 (four tile columns) 14.1 / 14.1 / 14.0 with 1 / 4 / 8.
//!
//!   start, 2-4 tile columns (stream-K: one wave and A's tile the taller) -> WorkGroupMapping 1
//!   any other one-wave start (not stream-K)                             -> WorkGroupMapping 4

use super::config::{GsuAlgo, KernelConfig};
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{tile_count, Space};

impl Space {
    /// `c` in the tile order that places its tiles best (module header), where this space
    /// holds that order; `c` itself otherwise. Clustered, split-K, ping-pong, batched and GEMV
    /// configs keep their own order: their workgroups are not one per tile. Stream-K's
    /// persistent kernel, whose workgroups split tiles, keeps its own too, but for the first
    /// rule, which was measured with it.
    pub fn tile_order(&self, c: &KernelConfig) -> KernelConfig {
        let p = &self.problem;
        let one_per_tile = constraints::is_wgmma(c)
            && c.gv == 0
            && c.cn == 1
            && c.cm == 1
            && c.gsu == 1
            && c.pk <= 1
            && p.batch <= 1;
        if !one_per_tile {
            return *c;
        }
        let (mt0, mt1) = (c.mt0 as i64, c.mt1 as i64);
        let tile_columns = (p.n + mt1 - 1) / mt1.max(1);
        let one_wave = tile_count(p, mt0, mt1) <= self.hw.compute_units as i64;
        let few_columns = (2..=4).contains(&tile_columns);
        // Stream-K's workgroups split tiles once they outnumber them: only the first rule,
        // measured with it, reaches it.
        let streamed = c.gsu_algo == GsuAlgo::StreamK;
        let wgm = if few_columns && (!streamed || (one_wave && mt0 > mt1)) {
            1
        } else if one_wave && !streamed {
            4
        } else {
            return *c;
        };
        if c.wgm == wgm || !self.domain(ParamId::WorkGroupMapping).contains(wgm as i64) {
            return *c;
        }
        let mut ordered = *c;
        ordered.wgm = wgm;
        if self.is_valid(&ordered) {
            ordered
        } else {
            *c
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::GemmProblem;
    use crate::space::{KernelConfig, Space};

    /// The config `name` (valid for the m x n x k problem on an H200) and its tile order.
    fn ordered(m: i64, n: i64, k: i64, name: &str) -> (KernelConfig, KernelConfig) {
        let s = Space::for_problem(
            &GemmProblem::new(m, n, k),
            &HwSpec::by_name("H200").unwrap(),
        );
        let c = KernelConfig::parse(name).unwrap();
        assert!(s.is_valid(&c), "{name}");
        (c, s.tile_order(&c))
    }

    /// `name` placed with WorkGroupMapping `wgm`, everything else as it was.
    fn assert_placed(m: i64, n: i64, k: i64, name: &str, wgm: u32) {
        let (c, placed) = ordered(m, n, k, name);
        assert_eq!(placed.wgm, wgm, "{m}x{n}x{k}");
        assert_eq!(
            KernelConfig {
                wgm: c.wgm,
                ..placed
            },
            c,
            "{m}x{n}x{k}"
        );
    }

    #[test]
    fn one_wave_tall_a_tiles_sit_side_by_side_along_n() {
        assert_placed(
            4096,
            333,
            4096,
            "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
            1,
        );
    }

    #[rustfmt::skip]
    #[test]
    fn other_one_wave_tiles_go_in_groups_of_four_rows() {
        for (m, n, k, name) in [
            // N in more than four tiles (14 here).
            (1152, 1280, 4096, "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1"),
            // Two tile rows, 66 tile columns, ordered along N by its start.
            (256, 6272, 2304, "MT128x96x64_MI64x8x16_WG8x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1"),
        ] {
            assert_placed(m, n, k, name, 4);
        }
    }

    #[rustfmt::skip]
    #[test]
    fn few_tile_columns_walk_each_row_of_a_together() {
        for (m, n, k, name) in [
            // One wave, B's tile the taller.
            (1536, 768, 2048, "MT64x192x64_MI64x8x16_WG4x1_PGR6_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1"),
            // Several waves.
            (8192, 384, 4096, "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1"),
            (18432, 256, 2304, "MT144x128x64_MI64x8x16_WG4x2_PGR5_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1"),
        ] {
            assert_eq!(ordered(m, n, k, name).1.wgm, 1, "{m}x{n}x{k}");
        }
    }

    #[rustfmt::skip]
    #[test]
    fn other_orders_are_left_alone() {
        for (m, n, k, name) in [
            // Already in groups of four.
            (1152, 1280, 4096, "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM4_GRVW8_SVW8_SU0_PW1"),
            // More tiles than compute units and N in more than four: the order keeps what the
            // next wave reads in L2.
            (8192, 1024, 4096, "MT128x128x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1"),
            // Split K: more workgroups than tiles.
            (1152, 1280, 4096, "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0_PW1"),
            // Stream-K on the persistent kernel.
            (256, 6272, 2304, "MT64x256x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0"),
        ] {
            let (c, placed) = ordered(m, n, k, name);
            assert_eq!(placed, c, "{m}x{n}x{k}");
        }
    }

    #[test]
    fn the_default_and_bench_set_take_the_order_too() {
        let s = Space::for_problem(
            &GemmProblem::new(256, 6272, 2304),
            &HwSpec::by_name("H200").unwrap(),
        );
        let d = s.default_config().unwrap();
        assert_eq!(s.tile_order(&d), d);
        for c in crate::bench::defaults::default_configs(&s, 12) {
            assert_eq!(s.tile_order(&c), c, "{}", c.name());
        }
    }
}
