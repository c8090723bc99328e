//! Starts for short K (at most two DepthU steps per tile: attention scores over a head
//! dimension, rank updates), where a tile's time is its output store and its load latency,
//! not its main loop: the persistent kernel two tiles ahead where tensor-map stores apply
//! (over two waves of 64-row tiles, ping-pong, one warpgroup storing while the other
//! multiplies), a shallow data-parallel tile where they do not.

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{tile_count, two_line_depth, Space};

impl Space {
    /// A start for short K (at most two DepthU steps) where the persistent start does not
    /// apply (D's rows not 16-byte aligned, as with 197-token attention, so no tensor-map
    /// stores; or beta): a data-parallel 64-row tile covering N (up to 256 columns, two
    /// warpgroups past 128) with only as many stages as K has steps. Stages beyond those
    /// only reserve shared memory, and with one or two steps a workgroup's time is its load
    /// latency and its stores, which several workgroups a compute unit overlap. H200, same
    /// call (cuBLASLt in brackets): 197x197x64 x192 28.5 us on MT64x208 WG4x2 PGR2 against
    /// 37.7 for the tune's MT128x112 PGR6 and 31.1-32.4 on 128-row tiles at PGR1-2 [31.6].
    pub fn short_k_tile_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let steps = (p.k + start.depth_u as i64 - 1) / start.depth_u.max(1) as i64;
        let mt1 = ((p.n + 15) / 16 * 16).min(256);
        if !constraints::is_wgmma(&start)
            || steps > 2
            || p.n <= constraints::GEMV_MAX_N
            || tile_count(p, 64, mt1) < 2 * self.hw.compute_units as i64
            || self.short_k_start().is_some()
        {
            return None;
        }
        self.valid_start(&[
            (ParamId::MacroTile0, 64),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, if mt1 > 128 { 2 } else { 1 }),
            (ParamId::PrefetchGlobalRead, steps),
            (ParamId::PrefetchLocalRead, 0),
            (ParamId::GlobalSplitU, 1),
            (ParamId::PersistentKernel, 0),
            (ParamId::ProducerWarp, 0),
            (ParamId::SwapAB, 0),
        ])
    }

    /// A start for short K (at most two DepthU steps per tile: attention scores over a head
    /// dimension, rank updates), where a tile's time is its output store, not its main loop:
    /// the persistent kernel on 128x128 tiles, whose producer warp loads the next tiles'
    /// operands and whose tensor-map stores drain while the consumers multiply the next tile,
    /// four stages deep (two tiles ahead at two steps per tile). A data-parallel kernel
    /// stores and then exits, and the next workgroup on that unit starts by waiting for its
    /// operands. H200, same call (cuBLASLt in brackets): 512x512x64 x40 11.5 us against 19.2
    /// for the tune's data-parallel 128x256 winner and 15.3-15.9 for the best data-parallel
    /// tiles [12.8]; 16384x16384x128 185.9-188.1 against 197.2 on the 128x256 persistent
    /// start [184.5]; 8192^2x256 e4m3 50.2 [50.5]; 1024^2x64 x64 46.9 [46.9]. Two stages ran
    /// 1.1-1.4x slower (no tile ahead), six 1.0-1.07x (16384^2x128: 196.2), 64-row or 64-column
    /// tiles 1.25-1.6x (each stores as much per operand byte loaded, but twice the tiles).
    pub fn short_k_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let start = self.raw_default();
        let steps = (p.k + start.depth_u as i64 - 1) / start.depth_u.max(1) as i64;
        if !constraints::is_wgmma(&start)
            || steps > 2
            || p.m < 128
            || p.n < 128
            || !self.domain(ParamId::PersistentKernel).contains(1)
            || tile_count(p, 128, 128) < 2 * self.hw.compute_units as i64
        {
            return None;
        }
        [4, 3, 2].into_iter().find_map(|pgr| {
            self.valid_start(&[
                (ParamId::MacroTile0, 128),
                (ParamId::MacroTile1, 128),
                (ParamId::WavesM, 8),
                (ParamId::WavesN, 1),
                (ParamId::PrefetchGlobalRead, pgr),
                (ParamId::PrefetchLocalRead, 0),
                (ParamId::GlobalSplitU, 1),
                (ParamId::GlobalSplitUAlgorithm, 1),
                (ParamId::ProducerWarp, 1),
                (ParamId::PersistentKernel, 1),
                (ParamId::SwapAB, 0),
            ])
        })
    }

    /// A start for short K (at most two 128-byte rows of K) over at least two waves of
    /// 64-row tiles: ping-pong (PersistentKernel=2), two warpgroups each taking whole 64-row
    /// tiles in turn beside the producer, so one warpgroup's store runs while the other
    /// loads and multiplies; the tile as wide as N in the fewest pieces of at most 256
    /// columns, four stages (two tiles ahead). H200, kernel against kernel, one call
    /// (cuBLASLt in brackets): 576x576x64 x48 on 64x192 14.3 us against 16.5 for the best
    /// of bench's default set [16.8]; 512x512x64 x40 11.1 against 11.8 [12.3]; 1024x1024x128
    /// x32 28.6 against 29.6 [29.7]; 8192x8192x256 e4m3 47.9 against 50.0 [50.4]; 4096^2 x 64
    /// 14.7 against 14.5 [14.3]; in another call 64x2048x64 x256 39.5 against 42.5 [39.4].
    /// Under two waves the tiles leave the second warpgroup little to overlap: 256x256x128
    /// x32 (128 tiles) 7.7 against 7.4, 128x128x64 x64 6.5 against 6.1.
    pub fn short_k_ping_pong_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        let pieces = (p.n + 255) / 256;
        let mt1 = ((p.n + pieces - 1) / pieces + 15) / 16 * 16;
        if !self.domain(ParamId::PersistentKernel).contains(2)
            || p.k > two_line_depth(p)
            || p.m < 64
            || p.n < 128
            || tile_count(p, 64, mt1) < 2 * self.hw.compute_units as i64
        {
            return None;
        }
        self.valid_start(&[
            (ParamId::MacroTile0, 64),
            (ParamId::MacroTile1, mt1),
            (ParamId::WavesM, 4),
            (ParamId::WavesN, 1),
            (ParamId::PrefetchGlobalRead, 4),
            (ParamId::PrefetchLocalRead, 1),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 2),
            (ParamId::SwapAB, 0),
        ])
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem};
    use crate::space::param::ParamId;
    use crate::space::Space;

    #[test]
    fn short_k_with_unaligned_d_starts_on_a_shallow_data_parallel_tile() {
        let hw = HwSpec::by_name("H200").unwrap();
        // D's rows of 197 elements: no tensor-map store, so no persistent start; one step of
        // K, one stage, 64 rows by all 197 columns on two warpgroups.
        let mut p = GemmProblem::new(197, 197, 64);
        p.batch = 192;
        let s = Space::for_problem(&p, &hw);
        assert_eq!(s.short_k_start(), None);
        let c = s.short_k_tile_start().expect("768 tiles of one K step");
        s.check(&c).unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.wg, c.pgr, c.pk, c.gsu),
            (64, 208, [4, 2], 1, 0, 1)
        );
        assert!(s.extra_starts().contains(&c));
        // Where the persistent start applies, long K, few tiles: none.
        for (m, n, k, batch) in [(512, 512, 64, 40), (197, 197, 1024, 192), (197, 197, 64, 2)] {
            let mut p = GemmProblem::new(m, n, k);
            p.batch = batch;
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.short_k_tile_start(), None, "{m}x{n}x{k}x{batch}");
        }
    }

    #[test]
    fn short_k_starts_on_the_persistent_kernel_two_tiles_ahead() {
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        let mut p = GemmProblem::new(512, 512, 64);
        p.batch = 40;
        let s = Space::for_problem(&p, &hw);
        let c = s.short_k_start().expect("640 tiles of one K step");
        s.check(&c).unwrap();
        assert_eq!(
            (c.mt0, c.mt1, c.pgr, c.plr, c.pw, c.pk),
            (128, 128, 4, 0, 1, 1)
        );
        assert!(s.extra_starts().contains(&c));
        // fp8: two steps of 128.
        let mut p = GemmProblem::new(8192, 8192, 256);
        p.a_type = DataType::F8;
        p.b_type = DataType::F8;
        assert!(Space::for_problem(&p, &hw).short_k_start().is_some());
        // Long K, fewer than two waves of tiles, a skinny N: none.
        for (m, n, k, batch) in [
            (4096, 4096, 256, 1),
            (128, 128, 64, 64),
            (16032, 109, 128, 1),
        ] {
            let mut p = GemmProblem::new(m, n, k);
            p.batch = batch;
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.short_k_start(), None, "{m}x{n}x{k}x{batch}");
        }
    }

    #[test]
    fn short_k_over_two_waves_of_64_row_tiles_starts_on_ping_pong() {
        let hw = HwSpec::by_name("H200").unwrap();
        let batched = |m, n, k, batch| GemmProblem {
            batch,
            ..GemmProblem::new(m, n, k)
        };
        // N in the fewest pieces of at most 256 columns: 576 in three of 192.
        for (p, mt1) in [
            (batched(576, 576, 64, 48), 192),
            (batched(64, 2048, 64, 256), 256),
            (batched(1024, 1024, 128, 32), 256),
        ] {
            let s = Space::for_problem(&p, &hw);
            let c = s.short_k_ping_pong_start().expect("short K, many tiles");
            s.check(&c).unwrap();
            assert_eq!((c.mt0, c.mt1, c.pk, c.pgr, c.wg), (64, mt1, 2, 4, [4, 1]));
            assert!(s.extra_starts().contains(&c));
        }
        let f8 = GemmProblem {
            a_type: DataType::F8,
            b_type: DataType::F8,
            ..GemmProblem::new(8192, 8192, 256)
        };
        assert!(Space::for_problem(&f8, &hw)
            .short_k_ping_pong_start()
            .is_some());
        // Under two waves of tiles, a narrow N, K past two 128-byte rows: none, and past
        // them the search keeps ping-pong opt-in.
        for p in [
            batched(256, 256, 128, 32),
            batched(4096, 64, 64, 8),
            batched(4096, 4096, 192, 1),
        ] {
            let s = Space::for_problem(&p, &hw);
            assert_eq!(s.short_k_ping_pong_start(), None, "{p:?}");
        }
        let long = Space::for_problem(&GemmProblem::new(4096, 4096, 192), &hw);
        assert!(!long.domain(ParamId::PersistentKernel).contains(2));
        assert!(long.domain(ParamId::PersistentKernel).admits(2));
    }
}
