//! The tile order of a warpgroup start whose tiles all run at once (one wave, one tile per
//! workgroup): WorkGroupMapping then decides nothing about what stays in L2 between waves, only
//! which workgroups the GPU places side by side. An NVIDIA launch puts consecutive workgroups
//! in pairs on the two compute units of one texture processing cluster, and successive pairs
//! on different GPCs. Where N spans only a few tiles (two to four) and A's tile is the taller
//! (MacroTile0 > MacroTile1), the tiles of one row of A belong side by side
//! (WorkGroupMapping 1); grouped along M, the workgroups sharing a row of A sit
//! WorkGroupMapping apart.
//!
//! Measured on an H200, kernel against kernel, one call each (cuBLASLt in brackets), the same
//! tile with WorkGroupMapping 1 / 4 / 8: 4096x333x4096 beta 1 on persistent 128x96 (4 tile
//! columns) 23.3 / 23.5 / 30.6 [24.4]; 2880x256x2880 on swapped 96x64 (4) 13.1 / 13.2 / 15.5
//! [11.4]. With more tile columns the order mattered little either way: bench's default sets of
//! 20 GEMMs of M and N of 576-1536 (NN, NT, TN, TT), WorkGroupMapping 1 against the starts' own,
//! within 0.2 us on all but one (1152x1280x4096 NN on 128x96, 25.1 against 24.2); 576x1024x7168
//! on swapped 96x64x128 (16) 22.0 / - / 22.9 [19.4]. Where B's tile is the taller it moved the
//! time by at most 0.2 us (1536x768x2048 NT on 64x192: 14.1 / 14.1 / 14.0), and with one tile
//! column it changes nothing; none of those is touched.
//!
//!   start (one wave, A's tile taller, 2-4 tile columns) -> the same with WorkGroupMapping 1

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{tile_count, Space};

impl Space {
    /// `c` with WorkGroupMapping 1 where it is a one-wave warpgroup start whose A tile is the
    /// taller (module header), where this space holds that value; `c` itself otherwise.
    /// Clustered, split-K, ping-pong and GEMV configs keep their own order: their workgroups
    /// are not one per tile.
    pub(super) fn one_wave_order(&self, c: &KernelConfig) -> KernelConfig {
        let p = &self.problem;
        let (mt0, mt1) = (c.mt0 as i64, c.mt1 as i64);
        let tile_columns = (p.n + mt1 - 1) / mt1.max(1);
        let applies = constraints::is_wgmma(c)
            && c.gv == 0
            && c.cn == 1
            && c.cm == 1
            && c.gsu == 1
            && c.pk <= 1
            && p.batch <= 1
            && mt0 > mt1
            && (2..=4).contains(&tile_columns)
            && tile_count(p, mt0, mt1) <= self.hw.compute_units as i64
            && c.wgm != 1
            && self.domain(ParamId::WorkGroupMapping).contains(1);
        if !applies {
            return *c;
        }
        let mut ordered = *c;
        ordered.wgm = 1;
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
    use crate::space::Space;

    fn space(m: i64, n: i64, k: i64) -> Space {
        let p = GemmProblem::new(m, n, k);
        Space::for_problem(&p, &HwSpec::by_name("H200").unwrap())
    }

    fn named(s: &Space, name: &str) -> crate::space::KernelConfig {
        let c = crate::space::KernelConfig::parse(name).unwrap();
        assert!(s.is_valid(&c), "{name}");
        c
    }

    #[test]
    fn one_wave_tall_a_tiles_sit_side_by_side_along_n() {
        let s = space(4096, 333, 4096);
        let c = named(
            &s,
            "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        );
        assert_eq!(s.one_wave_order(&c).wgm, 1);
        // Everything else stays as it was.
        let mut back = s.one_wave_order(&c);
        back.wgm = c.wgm;
        assert_eq!(back, c);
    }

    #[test]
    fn other_orders_are_left_alone() {
        for (m, n, k, name) in [
            // B's tile the taller.
            (1536, 768, 2048, "MT64x192x64_MI64x8x16_WG4x1_PGR6_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1"),
            // One tile column.
            (7168, 96, 2048, "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1"),
            // N in more than four tiles (14 here): the starts' own order.
            (1152, 1280, 4096, "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1"),
            // More tiles than compute units: the order keeps what the next wave reads in L2.
            (8192, 384, 4096, "MT128x96x64_MI64x8x16_WG4x1_PGR7_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1"),
        ] {
            let s = space(m, n, k);
            let c = named(&s, name);
            assert_eq!(s.one_wave_order(&c), c, "{m}x{n}x{k}");
        }
    }
}
