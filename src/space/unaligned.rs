//! Starts for operands whose rows start on 16-byte but not 32-byte boundaries (a leading
//! dimension of 3000 or 1000 in bf16, 4112 in e4m3) on the Hopper warpgroup path. Such rows
//! cost the tensor-map loads more L2 requests than aligned ones (device/cuda/tma.rs reads them
//! with 128-byte L2 promotion, which keeps most of that cost away); pairs of workgroups that
//! share the unaligned operand by multicast (ClusterN, ClusterM) ask for its rows once, large
//! tiles ask for fewer rows per multiply-add, and a copy into aligned rows first
//! (PackUnaligned) removes the cost at the price of a pass over the operand. The starts here
//! put these in the search's first batch and `bench`'s default set; `Space::extra_starts`
//! orders them (the producer warpgroup's pairs along M first, then the paired twins).

use super::config::KernelConfig;
use super::constraints;
use super::param::ParamId;
use super::tuning_space::{fills_wave, tile_count, tiles_pair_up, Space};

impl Space {
    /// Where A's rows start on 16-byte but not 32-byte boundaries, every row of its tensor-map
    /// boxes costs the L2 several requests, and the requests, not the bytes, bound the
    /// kernel. Pairs of workgroups along N that share A by multicast (ClusterN=2) halve them.
    /// The starts: 256x128 tiles (or the width nearest 128 that makes the tiles along N pair
    /// up) with the producer warp, in pairs, as deep as fits, where that tile gives a wave of
    /// workgroups: data-parallel on two warpgroups along N, and persistent on two swapped
    /// warpgroups of 256x64 (unswapped, two of 128x128 need about 174 registers a thread
    /// beside the producer warp, 288 threads get 168). Measured on an H200, same call
    /// (cuBLASLt in brackets), K-major A: 8192x1000x3000 81.0 us against 113.6 on the same
    /// tile alone, 107.6 for the persistent 128x256 and 97.7 for it in pairs [68.8];
    /// 4096x4096x4104 205.1 against 291.9 persistent [183.3]; 2000x3000x1000 34.6 against
    /// 37.0 [23.8]; M-major A (NT): 8 x 1000^3 34.9 persistent swapped, 37.6 data-parallel,
    /// 42.6 before pairs could share an M-major A [29.8].
    pub fn unaligned_a_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        if !self.domain(ParamId::ClusterN).contains(2)
            || !constraints::tma_rows_unaligned(p, true)
            || tile_count(p, 256, 128) < self.hw.compute_units as i64
        {
            return Vec::new();
        }
        // Pairs take whole pairs of tiles along N: the width nearest 128 of those that cut N
        // into an even number of tiles with the least padding (96 for N = 2112).
        let n = p.n.max(1);
        let Some(mt1) = self
            .wave_fit_widths()
            .filter(|&w| tiles_pair_up(n, w))
            .min_by_key(|w| ((n + w - 1) / w * w - n, (w - 128).abs()))
        else {
            return Vec::new();
        };
        // (WavesM, PersistentKernel, SwapAB)
        [(8, 0, 0), (4, 1, 1)]
            .into_iter()
            .filter_map(|(waves_m, persistent, swap)| {
                let space = self.with_deepest_pipeline(&[
                    (ParamId::MacroTile0, 256),
                    (ParamId::MacroTile1, mt1),
                    (ParamId::WavesM, waves_m),
                    (ParamId::WavesN, 2),
                    (ParamId::ProducerWarp, 1),
                    (ParamId::ClusterN, 2),
                    (ParamId::PersistentKernel, persistent),
                    (ParamId::SwapAB, swap),
                    (ParamId::GlobalSplitU, 1),
                    (ParamId::GlobalSplitUAlgorithm, 1),
                ])?;
                Some(space.raw_default())
            })
            .collect()
    }

    /// Where B's rows start on 16-byte but not 32-byte boundaries (NN or TN with K = 3000, NT
    /// or TT with N = 1000), the mirror of [`Space::unaligned_a_starts`]: pairs of workgroups
    /// along M sharing B (ClusterM=2) on 128x256 tiles (64x256 where 128-row tiles do not
    /// pair up along M), warpgroups of 64x256 with the producer warp, as deep as fits;
    /// data-parallel and persistent. docs/performance.md has the measurements.
    pub fn unaligned_b_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        if !self.domain(ParamId::ClusterM).contains(2)
            || !constraints::tma_rows_unaligned(p, false)
            || tile_count(p, 128, 256) < self.hw.compute_units as i64
        {
            return Vec::new();
        }
        let m = p.m.max(1);
        let Some(mt0) = [128, 64]
            .into_iter()
            .find(|&h| tiles_pair_up(m, h) && self.domain(ParamId::MacroTile0).contains(h))
        else {
            return Vec::new();
        };
        [0, 1]
            .into_iter()
            .filter_map(|persistent| {
                let space = self.with_deepest_pipeline(&[
                    (ParamId::MacroTile0, mt0),
                    (ParamId::MacroTile1, 256),
                    (ParamId::WavesM, mt0 / 16),
                    (ParamId::WavesN, 1),
                    (ParamId::ProducerWarp, 1),
                    (ParamId::ClusterM, 2),
                    (ParamId::PersistentKernel, persistent),
                    (ParamId::SwapAB, 0),
                    (ParamId::GlobalSplitU, 1),
                    (ParamId::GlobalSplitUAlgorithm, 1),
                ])?;
                Some(space.raw_default())
            })
            .collect()
    }

    /// Where both operands' rows are aligned to 16 bytes only: the smaller (in bytes; B on a
    /// tie) copied into aligned rows first (PackUnaligned), and pairs of workgroups sharing
    /// the other (ClusterN sharing A where B is copied, ClusterM sharing B where A is), on the
    /// persistent 128x256 tile, as deep as fits; its stream-K twin follows where the pairs'
    /// last wave is short. Measured kernel against kernel on an H100, same call (cuBLASLt
    /// 69.5 us): 5000x1000x5000 NT 107.8 us as stream-K with B copied and pairs along N,
    /// 117.8 whole tiles, 117.5 for pairs along M without a copy, 167.5 with both copied.
    pub fn unaligned_pair_pack_start(&self) -> Option<KernelConfig> {
        let p = &self.problem;
        if constraints::unaligned_operands(p) != constraints::PACK_A | constraints::PACK_B {
            return None;
        }
        let a_bytes = p.m * p.a_type.bytes() as i64;
        let b_bytes = p.n * p.b_type.bytes() as i64;
        let (pack, pair) = if b_bytes <= a_bytes {
            (constraints::PACK_B, ParamId::ClusterN)
        } else {
            (constraints::PACK_A, ParamId::ClusterM)
        };
        if !self.domain(pair).contains(2)
            || !self
                .domain(ParamId::PackUnaligned)
                .contains(i64::from(pack))
        {
            return None;
        }
        let space = self.with_deepest_pipeline(&[
            (ParamId::MacroTile0, 128),
            (ParamId::MacroTile1, 256),
            (ParamId::WavesM, 8),
            (ParamId::WavesN, 1),
            (ParamId::ProducerWarp, 1),
            (ParamId::PersistentKernel, 1),
            (ParamId::SwapAB, 0),
            (ParamId::GlobalSplitU, 1),
            (ParamId::GlobalSplitUAlgorithm, 1),
            (pair, 2),
            (ParamId::PackUnaligned, i64::from(pack)),
        ])?;
        Some(space.raw_default())
    }

    /// Where an operand's rows are aligned to 16 bytes only, the tiles a producer warpgroup
    /// makes possible (ProducerWarp=2: two warpgroups of 232 registers a thread), in pairs
    /// along M sharing an unaligned B (where B is one and the tiles pair up), persistent, as
    /// deep as fits:
    /// - 192x192 (warpgroups of 192x96) where its tiles make a wave: bigger tiles ask the L2
    ///   for fewer rows per multiply-add, which is what unaligned rows are bound by;
    /// - swapped tiles 256 columns wide of the height between 128 and 256 (steps of 16) whose
    ///   tiles make one nearly full wave, where both operands are unaligned and N is at most
    ///   four such tiles.
    ///
    /// Measured kernel against kernel on an H200, same call (cuBLASLt in brackets): 3000^3 TN
    /// 90.5 us on 192x192 in pairs along M, 93.7 for the 128x192 with B copied that the
    /// search had found [76.9]; 3000^3 NN f16 89.2 against 94.5 [80.4]; 5000x1000x5000 NT
    /// 87.1 on swapped 160x256 in pairs along M against 97.0 for the 128x256 stream-K pair
    /// [69.2]. Aligned, 192x192 ties 128x192 since each warpgroup stores its own columns
    /// (3072^3: 77.0 against 77.8 [75.5]), and no start takes it there.
    ///
    /// Since unaligned rows are read with 128-byte L2 promotion (device/cuda/tma.rs) these
    /// are the best starts of such shapes, and come before the other unaligned ones (H200,
    /// bench's default set, one call): 3000^3 TN 78.1 us against 89.6 for the stream-K
    /// 128x256 pair before them [75.6], NT 80.4 against 89.3 [79.9], NN f16 81.0 against 91.6
    /// [79.1]; 11008x2048x4104 f16 266.1 against 271.1 [262.4]. Pairs along N sharing A
    /// lost (8192x1000x3000: 83.2 against 70.4 for the persistent 128x256 pair along M
    /// [68.8]), and make no start.
    pub fn producer_warpgroup_starts(&self) -> Vec<KernelConfig> {
        let p = &self.problem;
        let (ua, ub) = (
            constraints::tma_rows_unaligned(p, true),
            constraints::tma_rows_unaligned(p, false),
        );
        if !(ua || ub) || !self.domain(ParamId::ProducerWarp).admits(2) {
            return Vec::new();
        }
        let cus = self.hw.compute_units as i64;
        // The swapped tiles release every stage as soon as it is multiplied
        // (PrefetchLocalRead 0): 5000x1000x5000 NT on swapped 160x256 in pairs along M ran
        // 75.5 us so against 86.2 with PrefetchLocalRead 1 (H200, one call, cuBLASLt 70.1).
        let start = |mt0: i64, mt1: i64, swap: i64| {
            let cluster = self
                .unaligned_pair(mt0, mt1)
                .filter(|&c| c == ParamId::ClusterM)?;
            let release = if swap == 1 { 0 } else { 1 };
            self.producer_warpgroup_tile(
                mt0,
                mt1,
                [4, 2],
                swap,
                &[(cluster, 2), (ParamId::PrefetchLocalRead, release)],
            )
        };
        let mut out = Vec::new();
        if tile_count(p, 192, 192) >= cus {
            out.extend(start(192, 192, 0));
        }
        if ua && ub && p.n <= 4 * 256 {
            let height = (128..=256)
                .step_by(16)
                .filter(|&h| self.domain(ParamId::MacroTile0).contains(h))
                .find(|&h| {
                    let tiles = tile_count(p, h, 256);
                    tiles <= cus && fills_wave(tiles, &self.hw)
                });
            out.extend(height.and_then(|h| start(h, 256, 1)));
        }
        out
    }

    /// The pair that shares an operand whose rows are aligned to 16 bytes only, for tiles of
    /// `mt0` x `mt1`: along M (ClusterM) sharing such a B where the tiles along M pair up,
    /// else along N (ClusterN) sharing such an A where those along N do; none otherwise.
    fn unaligned_pair(&self, mt0: i64, mt1: i64) -> Option<ParamId> {
        let p = &self.problem;
        if constraints::tma_rows_unaligned(p, false)
            && tiles_pair_up(p.m, mt0)
            && self.domain(ParamId::ClusterM).contains(2)
        {
            Some(ParamId::ClusterM)
        } else if constraints::tma_rows_unaligned(p, true)
            && tiles_pair_up(p.n, mt1)
            && self.domain(ParamId::ClusterN).contains(2)
        {
            Some(ParamId::ClusterN)
        } else {
            None
        }
    }

    /// Where an operand's rows are aligned to 16 bytes only, the persistent and the
    /// wave-fitting starts again in pairs sharing it ([`Space::unaligned_pair`]): a pair asks
    /// the L2 for the shared operand's rows once, and such rows cost the L2 several requests
    /// each. Tuned on an H200, the tunes that measured such a pair won by it and those that
    /// did not fell short (cuBLASLt in brackets): 4096x1000x4096 NT 48.3 us on 128x256 in
    /// pairs along M [46.6], 57.3 on the same tile alone with B copied [46.8]; 3 x 1000^3
    /// 18.4 on 128x208 in pairs along M [14.9], 20.3 on a data-parallel 128x256 [15.1].
    pub fn paired_twins(&self) -> Vec<KernelConfig> {
        self.twins_of(
            [self.persistent_start(), self.wave_fit_start()],
            |c: &KernelConfig| Some((self.unaligned_pair(c.mt0 as i64, c.mt1 as i64)?, 2)),
        )
    }

    /// Each of `starts` not already in a cluster, with the one parameter `change` names set
    /// (none where it names none), where that is valid; each twin once.
    pub(super) fn twins_of(
        &self,
        starts: impl IntoIterator<Item = Option<KernelConfig>>,
        change: impl Fn(&KernelConfig) -> Option<(ParamId, i64)>,
    ) -> Vec<KernelConfig> {
        let mut out = Vec::new();
        for c in starts.into_iter().flatten() {
            let Some((id, value)) = change(&c) else {
                continue;
            };
            let mut twin = c;
            id.set(&mut twin, value);
            if c.cn == 1 && c.cm == 1 && self.is_valid(&twin) && !out.contains(&twin) {
                out.push(twin);
            }
        }
        out
    }

    /// Where operands have rows aligned to 16 bytes only, the default, the persistent, the
    /// wave-fitting and the N-fit starts again with one such operand copied into aligned rows
    /// first (PackUnaligned), so that the search measures both from its first batch. Which
    /// operand: a K-major one rather than an M- or N-major one, whose unaligned rows cost
    /// less; of two, the one of fewer bytes (the copy reads and writes it once more).
    /// Measured on an H200, same call, as the tuned kernels with the rows aligned by the
    /// caller instead (cuBLASLt in brackets): 3000^3 NN f16 122.1 us in place, 80.5 with
    /// B's (K-major) rows aligned, 77.5 with both [78.9]; tuned with copies, B copied won
    /// (95.8 us), and where the search started from both copied only, both copied did
    /// (110.0); 7168x2112x4112 e4m3 and 11008x2048x4104 f16 (TN) were won with B, the
    /// smaller, copied. A skinny N-major B (TT, ldb = N = 136) gains most: 8192x136x8192 TT
    /// on the N-fit 128x80 ran 47.6 us with B copied against 95.1 in place [51.8]; so does
    /// one whose rows are aligned but not whole 128-byte lines (`Space::copies_skinny_b`).
    pub fn packed_twins(&self) -> Vec<KernelConfig> {
        let starts = [
            self.default_config().ok(),
            self.persistent_start(),
            self.wave_fit_start(),
            self.n_fit_start(),
        ];
        let bits = self.twin_copies();
        if bits != 0 {
            return self.twins_of(starts, |_: &KernelConfig| {
                Some((ParamId::PackUnaligned, i64::from(bits)))
            });
        }
        // A skinny B off the lines: only tiles whose width its rows' swizzle cuts in chunks
        // of fewer than 64 columns gain (8192x224x4096 NT on 128x128: 41.5 us copied against
        // 33.7 in place; 16032x80x16384 NT on 128x80: 141.2 against 174.5 [133.6]).
        // N of 64 or fewer: the narrow-N start too (6144x48x6144 NT on 64x48: 28.7 us copied
        // against 33.7 in place [25.6]; 4096x32x4096 NT on 64x32 16.9 against 15.0 [14.8]).
        if !self.copies_skinny_b() {
            return Vec::new();
        }
        let b = i64::from(constraints::PACK_B);
        let narrow = self.narrow_n_start();
        self.twins_of(starts.into_iter().chain([narrow]), |c: &KernelConfig| {
            (!c.mt1.is_multiple_of(64)).then_some((ParamId::PackUnaligned, b))
        })
    }

    /// Whether the starts copy B K-major first where its rows are aligned: a skinny N-major
    /// B (N of one instruction's width at most) whose rows are not whole 128-byte lines
    /// (constraints::tma_rows_off_lines has the measurements), and no operand unaligned
    /// (those take [`Space::twin_copies`]). The copy is small beside A, and every tile along
    /// M then reads B K-major, in widths of the instruction's steps of 8.
    pub(super) fn copies_skinny_b(&self) -> bool {
        let p = &self.problem;
        constraints::unaligned_operands(p) == 0
            && constraints::tma_rows_off_lines(p, false)
            && p.n <= i64::from(constraints::MAX_WGMMA_N)
            && self
                .domain(ParamId::PackUnaligned)
                .contains(i64::from(constraints::PACK_B))
    }

    /// The PackUnaligned value of the packed twins (0: none): the K-major unaligned operand
    /// of fewer bytes (B on a tie), else every unaligned one (M- or N-major).
    pub(super) fn twin_copies(&self) -> u32 {
        let p = &self.problem;
        let offered = |bits: u32| {
            self.domain(ParamId::PackUnaligned)
                .contains(i64::from(bits))
        };
        let unaligned = constraints::unaligned_operands(p);
        if unaligned == 0 || !offered(unaligned) {
            return 0;
        }
        let bytes = |is_a: bool| {
            let (rows, t) = if is_a {
                (p.m, p.a_type)
            } else {
                (p.n, p.b_type)
            };
            rows * t.bytes() as i64
        };
        // B first: of two of equal bytes it is the one to copy (A may be shared by pairs
        // along N instead; 3000^3 TN, H200: 93.3 us with B copied, 108.4 from A copied).
        let k_major: Vec<(u32, i64)> = [(constraints::PACK_B, false), (constraints::PACK_A, true)]
            .into_iter()
            .filter(|&(bit, is_a)| unaligned & bit != 0 && p.k_contiguous(is_a))
            .map(|(bit, is_a)| (bit, bytes(is_a)))
            .collect();
        k_major
            .iter()
            .min_by_key(|&&(_, b)| b)
            .map_or(unaligned, |&(bit, _)| bit)
    }
}

#[cfg(test)]
mod tests {
    use crate::hw::HwSpec;
    use crate::problem::{DataType, GemmProblem, Trans};
    use crate::space::{constraints, GsuAlgo, KernelConfig, ParamId, Space};

    #[test]
    fn the_persistent_starts_pair_up_to_share_an_unaligned_operand() {
        let h200 = HwSpec::by_name("H200").unwrap();
        // 4096x1000x4096 NT: B N-major with rows of 2000 bytes; 32 tiles along M pair up
        // along M, sharing B.
        let nt = GemmProblem::with_layout(4096, 1000, 4096, Trans::N, Trans::T);
        let s = Space::for_problem(&nt, &h200);
        let twins = s.paired_twins();
        assert!(!twins.is_empty());
        for c in &twins {
            assert_eq!((c.cm, c.cn, c.pk), (2, 1, 1), "{}", c.name());
            s.check(c).unwrap();
            assert!(s.extra_starts().contains(c), "{}", c.name());
        }
        // The tile measured: 128x256 in pairs along M.
        assert!(twins.iter().any(|c| (c.mt0, c.mt1) == (128, 256)));
        // 3 x 1000^3 TN, both unaligned: the wave-fitting tile in pairs along M too.
        let mut batched = GemmProblem::new(1000, 1000, 1000);
        batched.batch = 3;
        batched.fill_defaults();
        let b = Space::for_problem(&batched, &h200);
        let wave = b.wave_fit_start().unwrap();
        assert!(b.paired_twins().contains(&KernelConfig { cm: 2, ..wave }));
        // Aligned rows: no twins.
        let aligned = Space::for_problem(&GemmProblem::new(4096, 4096, 4096), &h200);
        assert!(aligned.paired_twins().is_empty());
    }

    #[test]
    fn rows_aligned_to_16_bytes_only_start_copied_into_aligned_rows_too() {
        let h200 = HwSpec::by_name("H200").unwrap();
        // 3000^3 NN f16: A M-major with lda = 3000, B K-major with ldb = 3000, both rows of
        // 6000 bytes.
        let mut nn = GemmProblem::with_layout(3000, 3000, 3000, Trans::N, Trans::N);
        (nn.a_type, nn.b_type, nn.c_type, nn.d_type) =
            (DataType::F16, DataType::F16, DataType::F16, DataType::F16);
        let s = Space::for_problem(&nn, &h200);
        assert_eq!(s.domain(ParamId::PackUnaligned).values, vec![0, 1, 2, 3]);
        // B, the K-major one, is copied.
        let twins = s.packed_twins();
        assert!(!twins.is_empty());
        for c in &twins {
            assert_eq!(c.pu, 2, "{}", c.name());
            s.check(c).unwrap();
            assert_eq!(constraints::packed_operands(c, &nn), [false, true]);
            assert!(s.extra_starts().contains(c), "{}", c.name());
        }
        // TN with both K-major and unaligned: the smaller, B (1000 rows against 8192), and
        // B of two of a size; A where it is the smaller.
        for (m, n, pu) in [(8192, 1000, 2), (3000, 3000, 2), (1000, 8192, 1)] {
            let tn = Space::for_problem(&GemmProblem::new(m, n, 3000), &h200);
            let twins = tn.packed_twins();
            assert!(
                !twins.is_empty() && twins.iter().all(|c| c.pu == pu),
                "{m}x{n}: {twins:?}"
            );
        }
        // NT with M = N = 1000: both M- or N-major, both copied.
        let nt = GemmProblem::with_layout(1000, 1000, 1000, Trans::N, Trans::T);
        let nt = Space::for_problem(&nt, &h200);
        assert!(nt.packed_twins().iter().all(|c| c.pu == 3));
        // The M-major A is shared by pairs along N, the K-major B by pairs along M (the pairs
        // beside a copy come from Space::unaligned_pair_pack_start).
        let pairs: Vec<KernelConfig> = s
            .extra_starts()
            .into_iter()
            .filter(|c| c.cn == 2 && c.pu == 0)
            .collect();
        assert!(!pairs.is_empty() && pairs.iter().all(|c| c.mt0 == 256 && c.pu == 0));
        assert_eq!(s.domain(ParamId::ClusterM).values, vec![1, 2]);
        let along_m = s.unaligned_b_starts();
        assert_eq!(along_m.len(), 2, "{along_m:?}");
        for (c, pk) in along_m.iter().zip([0, 1]) {
            assert_eq!((c.mt0, c.mt1, c.wg, c.cm, c.pk), (128, 256, [8, 1], 2, pk));
            assert!(s.extra_starts().contains(c), "{}", c.name());
        }
        // Rows of 6016 bytes: nothing to copy, no twins.
        let aligned = Space::for_problem(&GemmProblem::new(3008, 3008, 3008), &h200);
        assert_eq!(aligned.domain(ParamId::PackUnaligned).values, vec![0]);
        assert!(aligned.packed_twins().is_empty());
    }

    #[test]
    fn rows_aligned_to_16_bytes_only_start_in_pairs_sharing_a() {
        let h200 = HwSpec::by_name("H200").unwrap();
        let clustered = |k: i64| {
            let s = Space::for_problem(&GemmProblem::new(8192, 1000, k), &h200);
            // Pairs beside a copy of B are Space::unaligned_pair_pack_start's, those with a
            // producer warpgroup Space::producer_warpgroup_starts'.
            let starts: Vec<KernelConfig> = s
                .extra_starts()
                .into_iter()
                .filter(|c| c.cn == 2 && c.pu == 0 && c.pw == 1)
                .collect();
            (s.domain(ParamId::ClusterN).values.clone(), starts)
        };
        // K = 3000: rows of 6000 bytes, 16-byte aligned only.
        let (values, starts) = clustered(3000);
        assert_eq!(values, vec![1, 2]);
        assert_eq!(starts.len(), 2, "{starts:?}");
        for (c, wg, pk, sab) in [(starts[0], [8, 2], 0, 0), (starts[1], [4, 2], 1, 1)] {
            assert_eq!(
                (c.mt0, c.mt1, c.wg, c.pw, c.pk, c.sab),
                (256, 128, wg, 1, pk, sab)
            );
        }
        // N = 2112 pairs up in tiles of 96 columns.
        let s = Space::for_problem(&GemmProblem::new(8192, 2112, 3000), &h200);
        let c = s.extra_starts().into_iter().find(|c| c.cn == 2).unwrap();
        assert_eq!(c.mt1, 96, "{}", c.name());
        // Rows of 6016 bytes (K = 3008) or rows the packer aligns (K = 3001) need none.
        for k in [3008, 3001] {
            assert_eq!(clustered(k), (vec![1], Vec::new()), "K = {k}");
        }
    }

    #[test]
    fn both_operands_unaligned_start_with_the_smaller_copied_and_pairs_sharing_the_other() {
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        // NT with lda = 5000 and ldb = 1000: B (10 MB) copied, pairs along N sharing A.
        let p = GemmProblem {
            trans_a: crate::problem::Trans::N,
            trans_b: crate::problem::Trans::T,
            ..GemmProblem::new(5000, 1000, 5000)
        };
        let s = Space::for_problem(&p, &hw);
        let c = s.unaligned_pair_pack_start().expect("both rows unaligned");
        s.check(&c).unwrap();
        assert_eq!((c.cn, c.cm, c.pu, c.pk), (2, 1, constraints::PACK_B, 1));
        // 80 pairs on 66: its stream-K twin follows it among the starts.
        let starts = s.extra_starts();
        let at = starts.iter().position(|x| *x == c).expect("started");
        assert_eq!(
            starts[at + 1],
            KernelConfig {
                gsu_algo: GsuAlgo::StreamK,
                ..c
            }
        );
        // A the smaller (M = 1000, N = 5000): A copied, pairs along M sharing B.
        let wide = GemmProblem {
            trans_a: crate::problem::Trans::N,
            trans_b: crate::problem::Trans::T,
            ..GemmProblem::new(1000, 5000, 5000)
        };
        let s = Space::for_problem(&wide, &hw);
        let c = s.unaligned_pair_pack_start().expect("both rows unaligned");
        assert_eq!((c.cn, c.cm, c.pu), (1, 2, constraints::PACK_A));
        // One operand unaligned, or none: no such start.
        for q in [
            GemmProblem::new(4096, 1000, 4096),
            GemmProblem::new(4096, 4096, 4096),
        ] {
            let s = Space::for_problem(&q, &hw);
            assert_eq!(s.unaligned_pair_pack_start(), None, "{}", q.label());
        }
    }

    #[test]
    fn unaligned_rows_start_on_the_producer_warpgroups_tall_tiles_in_pairs() {
        let hw = HwSpec::by_name("H200").unwrap();
        let nt = |m, n, k| GemmProblem {
            trans_a: crate::problem::Trans::N,
            trans_b: crate::problem::Trans::T,
            ..GemmProblem::new(m, n, k)
        };
        let shape = |c: &KernelConfig| (c.mt0, c.mt1, c.wg, c.sab, c.pw, c.pk, c.cm, c.cn);
        // 3000^3 TN (both rows 6000 bytes): 192x192 in pairs along M sharing B (16 tiles of
        // M pair up), four stages.
        let s = Space::for_problem(&GemmProblem::new(3000, 3000, 3000), &hw);
        let starts = s.producer_warpgroup_starts();
        assert_eq!(starts.len(), 1);
        s.check(&starts[0]).unwrap();
        assert_eq!(shape(&starts[0]), (192, 192, [4, 2], 0, 2, 1, 2, 1));
        assert_eq!(starts[0].pgr, 4);
        // Among the seven starts bench's default set takes after the default.
        assert!(s.extra_starts()[..7].contains(&starts[0]));
        // 8192x1000x3000 TN: 43 tiles of M do not pair up, and pairs along N sharing A make
        // no start.
        let s = Space::for_problem(&GemmProblem::new(8192, 1000, 3000), &hw);
        assert!(s.producer_warpgroup_starts().iter().all(|c| c.cm == 2));
        // 5000x1000x5000 NT: swapped 160x256 (32 x 4 = 128 tiles on 132), pairs along M.
        let s = Space::for_problem(&nt(5000, 1000, 5000), &hw);
        // (192x192 pairs along N sharing the M-major A do not fit beside it.)
        let starts = s.producer_warpgroup_starts();
        let swapped = starts.last().expect("a swapped start");
        assert_eq!(shape(swapped), (160, 256, [4, 2], 1, 2, 1, 2, 1));
        assert_eq!(swapped.plr, 0);
        for c in &starts {
            s.check(c).unwrap();
        }
        // Only B unaligned (4096x1000x4096 NT: A's rows of 8192 bytes are aligned, B's of 2000
        // are not): pairs along M share the unaligned B.
        let s = Space::for_problem(&nt(4096, 1000, 4096), &hw);
        for c in s.producer_warpgroup_starts() {
            s.check(&c).unwrap();
            assert_eq!((c.pw, c.cm, c.sab), (2, 2, 0));
        }
        // Aligned rows: none.
        for q in [
            GemmProblem::new(4096, 4096, 4096),
            GemmProblem::new(3072, 3072, 3072),
        ] {
            let s = Space::for_problem(&q, &hw);
            assert!(s.producer_warpgroup_starts().is_empty(), "{}", q.label());
        }
    }

    /// A skinny N-major B whose rows are aligned but not whole 128-byte lines (NT, ldb = N =
    /// 176): the N-fit start again on B copied K-major, in the instruction's steps of 8,
    /// beside the in-place one; copied twins only of tiles the swizzle cuts in chunks under
    /// 64 columns; the narrow-N start stays in place with a copied twin.
    #[test]
    fn a_skinny_n_major_b_off_the_lines_starts_copied_k_major_too() {
        let hw = HwSpec::by_name("H200").unwrap();
        let layout = |m, n, k, ta| GemmProblem::with_layout(m, n, k, ta, Trans::T);
        for ta in [Trans::N, Trans::T] {
            let s = Space::for_problem(&layout(14336, 176, 4096, ta), &hw);
            assert!(s.copies_skinny_b());
            assert_eq!(s.twin_copies(), 0);
            let fits = s.n_fit_starts();
            let widths: Vec<(u32, u32)> = fits.iter().map(|c| (c.mt1, c.pu)).collect();
            assert!(widths.contains(&(192, 0)), "{widths:?}");
            assert!(widths.contains(&(176, constraints::PACK_B)), "{widths:?}");
            for c in fits.iter().chain(&s.packed_twins()) {
                s.check(c).unwrap();
                assert!(s.extra_starts().contains(&s.tile_order(c)), "{}", c.name());
            }
            for c in s.packed_twins() {
                assert!(
                    c.mt1 % 64 != 0 && c.pu == constraints::PACK_B,
                    "{}",
                    c.name()
                );
            }
        }
        // N of 64 or fewer: the narrow-N start in place and its copied twin.
        let s = Space::for_problem(&layout(6144, 48, 6144, Trans::N), &hw);
        let narrow = s.narrow_n_start().expect("N = 48");
        assert_eq!(narrow.pu, 0);
        assert!(s.packed_twins().contains(&KernelConfig {
            pu: constraints::PACK_B,
            ..narrow
        }));
        // Rows of whole lines (N = 256), N past one instruction's width, or B K-major: no copy.
        for p in [
            layout(14336, 256, 4096, Trans::N),
            layout(14336, 288, 4096, Trans::N),
            GemmProblem::new(14336, 176, 4096),
        ] {
            let s = Space::for_problem(&p, &hw);
            assert!(!s.copies_skinny_b(), "{}", p.label());
            assert!(s.n_fit_starts().iter().all(|c| c.pu == 0), "{}", p.label());
        }
    }
}
