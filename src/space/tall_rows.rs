//! A start of 384-row tiles in one wave: two warpgroups of 192 rows each beside a producer
//! warpgroup that gives them its registers (ProducerWarp=2, data-parallel), so that a tile of
//! 384 rows by up to 136 columns holds its accumulators (156 a thread at 104 columns, where a
//! producer warp beside them leaves 168 registers and three warpgroups 128). Where M cuts into
//! few rows of such tiles, N then cuts into as many tile columns as one wave holds, and the
//! wave is nearly full where 128-, 192- and 256-row tiles leave part of a second wave idle or
//! take narrower tiles. cuBLASLt runs these tiles there: `nvjet_sm90_tst_384x104_64x3_4x1_v_bz
//! _coopA` on 9216x520x4096 (120 workgroups of 384 threads) and `_384x80_64x3_2x1_v_bz_coopA`
//! on 3840x1028x1280 (130).
//!
//! Problem in, at most one config out; bench's default set and the search's first batch take
//! it beside the others (`Space::extra_starts`).

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::Space;

/// The tile's rows: two warpgroups of three 64-row instruction slices each.
pub const TALL_ROWS: i64 = 384;

/// Least share of the compute units, in percent, the one wave of tall tiles must occupy.
const MIN_FILL_PERCENT: i64 = 85;

/// Narrowest tile: narrower, the tile's 384 rows of A are read for too little work.
const MIN_WIDTH: i64 = 64;

/// K steps (of 64 16-bit k) a tile streams at least: shorter, its three-stage prologue and
/// its epilogue weigh more than the fuller wave saves.
const MIN_K_STEPS: i64 = 16;

impl Space {
    /// One wave of 384-row tiles, where it fills at least 85% of the compute units and
    /// 128-row tiles of up to 256 columns fill no wave so well: N cut into as many equal parts
    /// (rounded up to a step of [`Space::n_step`]) as one wave holds beside M's tile rows,
    /// at least 64 columns wide, on two warpgroups of 192 rows and a producer warpgroup, every
    /// stage released as soon as it is multiplied (PrefetchLocalRead 0: with three stages of
    /// such tiles the ring refills sooner), as deep as fits (three stages of 16-bit tiles).
    /// `None` where M offers no such tiles (the space's MacroTile0 holds 384 on the warpgroup
    /// path past 256 rows), for batches (not measured), where K is short, or where the width
    /// leaves too little room for the accumulators (past 136 columns).
    ///
    /// H200, kernel against kernel, one call (cuBLASLt in brackets): 9216x520x4096 on 384x104
    /// 56.5 us against 62.4 for the best of bench's default set (128x176, persistent) [55.8];
    /// 3840x1028x1280 on 384x80 19.4 against 22.0 (192x208 on three warpgroups) [19.2]. The
    /// same tiles without the register hand-over: three warpgroups of 128 rows or two beside a
    /// producer warp spill (655-737 us); without a producer, the ring's barrier in the loop
    /// made 384x104 64.4-98.7.
    pub fn tall_rows_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        if !self.domain(ParamId::MacroTile0).contains(TALL_ROWS) {
            return None;
        }
        let depth = self.raw_default().depth_u as i64;
        if p.k < MIN_K_STEPS * depth.max(1) {
            return None;
        }
        if p.batch > 1 {
            return None;
        }
        // Where 128-row tiles of a width up to 256 fill a wave the other starts cover it; the
        // tall tiles are for M whose 128-row tiles leave a row of tiles without a full wave.
        if self
            .one_wave_width(128, MIN_FILL_PERCENT)
            .is_some_and(|w| w <= i64::from(constraints::MAX_WGMMA_N))
        {
            return None;
        }
        let width = self
            .one_wave_width(TALL_ROWS, MIN_FILL_PERCENT)
            .filter(|&w| w >= MIN_WIDTH)?;
        let prefs = [
            (ParamId::MacroTile0, TALL_ROWS),
            (ParamId::MacroTile1, width),
            (ParamId::WavesM, 8),
            (ParamId::WavesN, 1),
            (ParamId::SwapAB, 0),
            (ParamId::GlobalSplitU, 1),
            (ParamId::PersistentKernel, 0),
            (ParamId::ProducerWarp, 2),
            (ParamId::PrefetchLocalRead, 0),
            (ParamId::WorkGroupMapping, 1),
        ];
        Some(self.with_deepest_pipeline(&prefs)?.raw_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};

    fn h200(p: &GemmProblem) -> Space {
        Space::for_problem(p, &HwSpec::by_name("H200").unwrap())
    }

    fn start(m: i64, n: i64, k: i64) -> Option<KernelConfig> {
        h200(&GemmProblem::new(m, n, k)).tall_rows_start()
    }

    #[test]
    fn cuts_n_into_the_columns_one_wave_of_tall_tiles_holds() {
        // cuBLASLt's own tiles on these: 384x104 (24 x 5 = 120) and 384x80 (10 x 13 = 130).
        for ((m, n, k), width) in [((9216, 520, 4096), 104), ((3840, 1028, 1280), 80)] {
            let c = start(m, n, k).unwrap();
            assert_eq!(
                (c.mt0, c.mt1, c.wg, c.pw, c.pk, c.plr),
                (384, width, [8, 1], 2, 0, 0)
            );
            assert_eq!((c.gsu, c.sab, c.pgr), (1, 0, 3), "{m}x{n}x{k}");
            assert!(h200(&GemmProblem::new(m, n, k)).is_valid(&c));
        }
    }

    #[test]
    fn every_layout_and_16_bit_type_takes_it() {
        for (ta, tb) in [
            (Trans::N, Trans::N),
            (Trans::N, Trans::T),
            (Trans::T, Trans::T),
        ] {
            let mut p = GemmProblem::with_layout(9216, 520, 4096, ta, tb);
            p.a_type = DataType::F16;
            p.b_type = DataType::F16;
            p.c_type = DataType::F16;
            p.d_type = DataType::F16;
            let s = h200(&p);
            let c = s.tall_rows_start().unwrap();
            assert!(s.is_valid(&c), "{}", c.name());
            assert_eq!(c.mt0, 384);
        }
    }

    #[test]
    fn not_where_the_wave_is_short_k_short_or_the_tile_too_wide() {
        // 48 tile rows leave two columns of tiles: 260 wide, past what the registers hold.
        assert_eq!(start(18432, 520, 4096), None);
        // 96 of 132 compute units.
        assert_eq!(start(18432, 256, 2304), None);
        // Eight 64-k steps.
        assert_eq!(start(9216, 520, 512), None);
        // M of 256 rows or fewer has no 384-row tiles at all.
        assert_eq!(start(256, 8192, 8192), None);
        // A second wave.
        assert_eq!(start(9216, 1040, 4096), None);
        // 128x256 tiles fill a wave (16 x 8): the other starts' tiles.
        assert_eq!(start(2048, 2048, 2048), None);
        // 384x24 tiles: too narrow.
        assert_eq!(start(8192, 136, 8192), None);
    }
}
