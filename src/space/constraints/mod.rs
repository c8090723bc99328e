//! Constraints: which configs are valid for a (problem, hw) pair, and why not.
//!
//! These rules are the contract between the space and the kernel template in `kernels/`:
//! every config that passes here must compile and run correctly. Each rule returns a
//! [`Violation`] naming the rule, so a rejected LLM suggestion can be explained back to it.
//!
//! The rules come in groups named after the kernel part they constrain, one file each, so a
//! new part brings its rules in one place: `shape` (the workgroup, its tile and pipeline
//! depth), `lds_layout` (padding, swizzle, LDS bytes), `atom` (matrix instructions, wave
//! tiles), `warpgroup` (the `wgmma` mainloop, producer warp, SwapAB), `transpose_lds`
//! (operands transposed into K-major LDS packs), `pack_unaligned` (operands copied into
//! aligned rows first), `pack_mn_major` (operands copied M- or N-major onto aligned rows first,
//! the FMA path), `loader` (global reads), `epilogue` (stores,
//! output types), `scheduler` (split-K, stream-K), `cluster` (clusters sharing A) and
//! `resources` (LDS and registers against the GPU), `launch_grid` (batches past a grid's
//! layers); `gemv` holds every rule of the GEMV path, and `flat_batch` every rule of the flat
//! batch path, which have no tiles in LDS and replace the others for their configs. [`check`] applies them
//! in the order of [`RULE_ORDER`], the first broken rule wins.

mod atom;
mod cluster;
mod epilogue;
mod flat_batch;
mod gemv;
mod launch_grid;
mod lds_layout;
mod loader;
mod pack_mn_major;
mod pack_unaligned;
mod resources;
mod scheduler;
mod shape;
mod transpose_lds;
mod warpgroup;

use serde::{Deserialize, Serialize};

use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::config::KernelConfig;

pub use atom::{
    fma_lane_grid, is_wgmma, is_wgmma_mi, part_grid, warpgroup_tile, wgmma_mi, WARPGROUP_WARPS,
    WGMMA_MI,
};
pub use cluster::CLUSTER_SIZES;
pub use epilogue::{stores_aligned, stores_d_by_tensor_map};
pub use flat_batch::{
    flat_batch_applies, flat_batch_lds_bytes, flat_batch_registers, flat_batch_values,
    flat_extents, flat_image_bytes, flat_mma_shapes, flat_staged_applies, flat_stages_bytes,
    flat_sub_tile, flat_tile_sides, FLAT_BATCH_MAX_ACC, FLAT_BATCH_MAX_SIDE, FLAT_MMA_MAX_ACC,
    FLAT_SIDE, FLAT_STAGED_SIDE,
};
pub use gemv::{
    gemv_b_vectors, gemv_lds_bytes, gemv_problem, gemv_registers, gemv_rows, gemv_wave_batches,
    GEMV_MAX_N, GEMV_MMA, MIN_SPLIT_K_M_CONTIGUOUS,
};
pub use launch_grid::MAX_GRID_YZ;
pub use lds_layout::{
    lds_bytes, persistent_c_direct, persistent_c_prefetch, persistent_c_stages, persistent_c_steps,
    persistent_narrow_groups, persistent_output_bytes, persistent_output_passes, persistent_passes,
    persistent_store_columns, C_PREFETCH_COLUMNS, C_RING_COLUMNS,
};
pub use loader::{operand_reads_aligned, reads_aligned, widest_aligned_read};
pub use pack_mn_major::{
    mn_packed_operands, mn_packed_problem, mn_packed_with, pack_mn_major_values,
};
pub use pack_unaligned::{pack_unaligned_values, unaligned_operands};
pub use resources::{registers_estimate, workgroups_per_cu};
pub use scheduler::{MAX_STREAM_K_ACCUMULATORS, MAX_STREAM_K_PER_CU, MAX_STREAM_K_THREADS};
pub use shape::{MAX_STAGES, MAX_STAGES_WGMMA};
pub use transpose_lds::transposed_operands;
pub use warpgroup::{
    k_major_box_rows, mn_chunk, packed_operands, rows_off_32_bytes, tma_readable,
    tma_rows_off_lines, tma_rows_unaligned, MAX_BOX_ROWS, MAX_WGMMA_N, MAX_WGMMA_TILE, PACK_A,
    PACK_B, THREE_WARPGROUPS,
};

/// Why a config is not valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub rule: &'static str,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.rule, self.message)
    }
}

fn fail(rule: &'static str, message: String) -> Result<(), Violation> {
    Err(Violation { rule, message })
}

/// The output tiles of `c` over all of `p`'s batches (whole tiles, the edges' partial ones
/// counted): what the stream-K and prefetch rules count. Here rather than in a rule's file,
/// which would tie the rules that use it to that file's imports.
fn tile_count(c: &KernelConfig, p: &GemmProblem) -> u64 {
    (p.m as u64).div_ceil(c.mt0.max(1) as u64)
        * (p.n as u64).div_ceil(c.mt1.max(1) as u64)
        * p.batch.max(1) as u64
}

/// Registers FMA code has at most (AMD: the architectural VGPRs; the accumulation registers take
/// matrix-core results only).
const MAX_FMA_REGISTERS: u32 = 256;

/// The paths whose FMAs hold whole sums per thread (the GEMV path, the flat batch path): `rule`
/// fails where `regs`, their estimate, exceeds the share each of the workgroup's threads gets.
/// Here rather than in `resources`, whose estimate reads those paths' files.
fn fma_registers(
    rule: &'static str,
    regs: u32,
    c: &KernelConfig,
    hw: &HwSpec,
) -> Result<(), Violation> {
    let threads = c.threads(hw.wave_size);
    let share = hw
        .register_share(threads)
        .min(hw.max_registers_per_thread)
        .min(MAX_FMA_REGISTERS);
    if regs > share {
        return fail(
            rule,
            format!(
                "estimated {regs} registers per thread, more than the {share} each of {threads} threads gets"
            ),
        );
    }
    Ok(())
}

/// The rules in the order [`check`] applies them (used to measure progress when repairing).
pub const RULE_ORDER: &[&str] = &[
    "positive",
    "threads",
    "gemv",
    "flat-batch",
    "launch-grid",
    "range",
    "lds-layout",
    "tile-granularity",
    "matrix-instruction",
    "dtype",
    "wgmma",
    "producer-warp",
    "swap-ab",
    "pack-unaligned",
    "pack-mn-major",
    "transpose-lds",
    "wave-tile",
    "depth-u",
    "global-read",
    "alignment",
    "store",
    "store-alignment",
    "lds",
    "registers",
    "split-k",
    "persistent",
    "cluster",
    "tile-vs-problem",
];

/// Checks every rule; the first one broken is returned.
pub fn check(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    shape::positive(c)?;
    shape::threads(c, hw)?;
    // Every path accumulates in f32 (or reads f32 as tf32): the compute type comes first.
    atom::compute_type(p)?;
    // The GEMV path is a mainloop and schedule of its own: its rules replace the tile ones.
    gemv::gemv(c, p, hw)?;
    // So is the flat batch path, one batch a group of waves from LDS images.
    flat_batch::flat_batch(c, p, hw)?;
    if c.fb > 0 {
        return epilogue::output_types(p);
    }
    launch_grid::batches(c, p)?;
    if c.gv == 1 {
        return epilogue::output_types(p);
    }
    shape::range(c)?;
    lds_layout::padding_or_swizzle(c)?;
    shape::tile_granularity(c)?;
    atom::instruction(c, p, hw)?;
    atom::input_types(c, p, hw)?;
    if is_wgmma(c) {
        warpgroup::wgmma(c, p, hw)?;
    }
    warpgroup::producer_warp(c, p, hw)?;
    warpgroup::swap_ab(c)?;
    pack_unaligned::pack_unaligned(c, p)?;
    pack_mn_major::pack_mn_major(c, p, hw)?;
    // From here on the rules judge the operands the main kernel reads: the MN-major copies
    // where PackMNMajor makes them.
    let p = &*mn_packed_problem(c, p);
    transpose_lds::transpose_lds(c, p)?;
    atom::wave_tile(c, hw)?;
    loader::global_read(c, p)?;
    loader::alignment(c, p)?;
    epilogue::store(c, p)?;
    epilogue::store_alignment(c, p)?;
    resources::lds(c, p, hw)?;
    resources::registers(c, p, hw)?;
    scheduler::split_k(c, p, hw)?;
    scheduler::persistent(c, p)?;
    cluster::cluster(c, p, hw)?;
    shape::tile_vs_problem(c, p)?;
    epilogue::output_types(p)
}

#[cfg(test)]
mod verdicts;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Trans;
    use crate::space::config::GsuAlgo;
    use crate::space::Space;

    fn wgmma_cfg(name: &str) -> KernelConfig {
        KernelConfig::parse(name).unwrap()
    }

    const SEED_BEST: &str =
        "MT128x112x64_MI64x8x16_WG8x1_PGR7_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0";

    fn rule(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> &'static str {
        check(c, p, hw).map(|_| "ok").unwrap_or_else(|v| v.rule)
    }

    #[test]
    fn wgmma_configs_for_tn_pass() {
        let hw = HwSpec::by_name("H200").unwrap();
        let seed = GemmProblem::new(16032, 109, 16384);
        check(&wgmma_cfg(SEED_BEST), &seed, &hw).unwrap();
        let square = GemmProblem::new(4096, 4096, 4096);
        for name in [
            "MT128x256x64_MI64x8x16_WG8x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW8_SVW8_SU0",
            "MT256x128x128_MI64x8x16_WG8x1_PGR2_PLR0_LPA0_LPB0_SW1_GSU2A_WGM8_GRVW8_SVW8_SU0",
            "MT64x16x64_MI64x8x16_WG4x2_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW4_SVW4_SU0",
        ] {
            check(&wgmma_cfg(name), &square, &hw).unwrap_or_else(|v| panic!("{name}: {v}"));
        }
        assert_eq!(warpgroup_tile(&wgmma_cfg(SEED_BEST)), [64, 112]);
    }

    /// Three warpgroups along M: 192-row tiles of one warpgroup column on the warpgroup path
    /// only.
    #[test]
    fn three_warpgroups_take_192_rows_on_the_warpgroup_path() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(12288, 300, 2048);
        let ok = wgmma_cfg(
            "MT192x160x64_MI64x8x16_WG12x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1",
        );
        assert_eq!(rule(&ok, &p, &hw), "ok");
        for (c, want) in [
            (KernelConfig { mt0: 128, ..ok }, "wgmma"),
            (KernelConfig { wg: [12, 2], ..ok }, "wgmma"),
            (
                KernelConfig {
                    mi: [16, 8, 16],
                    pw: 0,
                    ..ok
                },
                "range",
            ),
        ] {
            assert_eq!(rule(&c, &p, &hw), want, "{}", c.name());
        }
    }

    /// Clusters sharing A: the warpgroup path with its producer warp, a K-major A whose
    /// boxes split into whole 8-row slices or an M-major one in whole chunks or aligned
    /// slices of K, N in whole groups of ClusterN tiles, no stream-K, sizes the space offers
    /// (blocks with ClusterM of at most eight), NVIDIA only.
    #[test]
    fn clusters_share_a_tiles_of_whole_tile_groups() {
        use crate::problem::DataType;
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        let p = GemmProblem::new(3584, 160, 18944);
        let ok = wgmma_cfg(
            "MT64x80x64_MI64x8x16_WG4x1_PGR12_PLR0_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1_CN2",
        );
        assert_eq!(rule(&ok, &p, &hw), "ok");
        for (c, why) in [
            (KernelConfig { pw: 0, ..ok }, "producer warp"),
            (KernelConfig { cn: 8, ..ok }, "ClusterN is one of"),
            (KernelConfig { cn: 3, ..ok }, "ClusterN is one of"),
            (KernelConfig { cn: 4, cm: 4, ..ok }, "at most 8 workgroups"),
            // N = 160 in two tiles of 80: no whole group of four.
            (KernelConfig { cn: 4, ..ok }, "groups of 4 tiles"),
            // N = 160 in three tiles of 64: no whole pair.
            (KernelConfig { mt1: 64, ..ok }, "groups of 2 tiles"),
        ] {
            let v = check(&c, &p, &hw).unwrap_err();
            assert_eq!(v.rule, "cluster", "{}: {v}", c.name());
            assert!(v.message.contains(why), "{}: {v}", c.name());
        }
        // Swapped M tiles of 16 rows share slices of 8.
        let swapped = KernelConfig {
            mt0: 16,
            mt1: 128,
            sab: 1,
            ..ok
        };
        assert_eq!(rule(&swapped, &p, &hw), "ok");
        // Stream-K splits K ranges unevenly: refused (the producer warp's rule comes first).
        let stream_k = KernelConfig {
            gsu: 2,
            gsu_algo: GsuAlgo::StreamK,
            ..ok
        };
        assert!(check(&stream_k, &p, &hw).is_err());
        // A split over the grid keeps a cluster's K ranges equal, its partials summed by the
        // reduction kernel or in the kernel.
        for gsu_algo in [GsuAlgo::Reduce, GsuAlgo::SingleKernel] {
            let split = KernelConfig {
                gsu: 2,
                gsu_algo,
                ..ok
            };
            assert_eq!(rule(&split, &p, &hw), "ok", "{}", split.name());
        }
        // An M-major A is shared in whole chunks where they divide among the cluster (128
        // rows: two of 64), else in slices of K of 1024 bytes (64 rows: one chunk, each of a
        // pair loading 32 of its 64 k, 4096 bytes), in place or (PackUnaligned, lda = 3000)
        // copied K-major first and sliced by rows.
        let nn = GemmProblem::with_layout(3584, 160, 18944, Trans::N, Trans::N);
        assert_eq!(rule(&ok, &nn, &hw), "ok");
        // Swapped 16-row tiles: one chunk of 16 (32-byte rows); four sharers would slice 64 k
        // into 16 rows of 512 bytes.
        let nn512 = GemmProblem::with_layout(3584, 512, 18944, Trans::N, Trans::N);
        let fours = KernelConfig {
            mt0: 16,
            mt1: 128,
            sab: 1,
            cn: 4,
            ..ok
        };
        assert_eq!(rule(&KernelConfig { cn: 2, ..fours }, &nn512, &hw), "ok");
        let v = check(&fours, &nn512, &hw).unwrap_err();
        assert!(
            v.rule == "cluster" && v.message.contains("slices of K of 1024 bytes"),
            "{v}"
        );
        let two_chunks = KernelConfig {
            mt0: 128,
            wg: [8, 1],
            pgr: 6,
            ..ok
        };
        assert_eq!(rule(&two_chunks, &nn, &hw), "ok");
        let nn3000 = GemmProblem::with_layout(3000, 160, 18944, Trans::N, Trans::N);
        assert_eq!(rule(&ok, &nn3000, &hw), "ok");
        assert_eq!(rule(&KernelConfig { pu: 1, ..ok }, &nn3000, &hw), "ok");
        // ClusterM: the mirror along M, sharing B (K-major here: slices of 8 rows of its
        // 80-row box); 3584 rows are 56 tiles of 64 (pairs), 3000 are 47 (no whole pair).
        let along_m = KernelConfig { cn: 1, cm: 2, ..ok };
        assert_eq!(rule(&along_m, &p, &hw), "ok");
        let v = check(&along_m, &GemmProblem::new(3000, 160, 18944), &hw).unwrap_err();
        assert!(
            v.rule == "cluster" && v.message.contains("groups of 2 tiles along M"),
            "{v}"
        );
        // Both: a 2 x 2 block sharing A along its rows and B along its columns, each rule
        // checked on its own direction (A's 64-row boxes in quarters of 16 along a row of
        // four; B's 80-row boxes do not split into four whole 8-row groups).
        assert_eq!(rule(&KernelConfig { cm: 2, ..ok }, &p, &hw), "ok");
        let block = KernelConfig { cm: 4, cn: 2, ..ok };
        let v = check(&block, &p, &hw).unwrap_err();
        assert!(
            v.rule == "cluster" && v.message.contains("ClusterM 4 cuts each B box of 80 rows"),
            "{v}"
        );
        // B N-major (NT), 80 columns: five chunks of 16 (32-byte rows) shared in slices of 32
        // k (1024 bytes), not of 16 among four.
        let nt = GemmProblem::with_layout(3584, 160, 18944, Trans::T, Trans::T);
        assert_eq!(rule(&along_m, &nt, &hw), "ok");
        assert_eq!(
            rule(&KernelConfig { cm: 4, ..along_m }, &nt, &hw),
            "cluster"
        );
        assert_eq!(
            rule(
                &KernelConfig {
                    mt1: 128,
                    pgr: 9,
                    ..along_m
                },
                &nt,
                &hw
            ),
            "ok"
        );
        let mut f8 = p.clone();
        (f8.a_type, f8.b_type) = (DataType::F8, DataType::F8);
        let f8_ok = wgmma_cfg(
            "MT64x80x128_MI64x8x32_WG4x1_PGR8_PLR0_LPA0_LPB0_SW1_GSU1_WGM1_GRVW16_SVW8_SU0_PW1_CN2",
        );
        assert_eq!(rule(&f8_ok, &f8, &hw), "ok");
        // Opt-in where a warpgroup instruction runs (the search never visits them unless
        // fixed), absent elsewhere.
        use crate::space::ParamId::ClusterN;
        let mut h100 = Space::for_problem(&p, &hw);
        assert_eq!(h100.domain(ClusterN).values, vec![1]);
        assert!(h100.check(&ok).is_ok());
        h100.fix("ClusterN", "1,2").unwrap();
        assert_eq!(h100.domain(ClusterN).values, vec![1, 2]);
        let mut mi300 = Space::for_problem(&p, &HwSpec::by_name("MI300X").unwrap());
        assert!(mi300.fix("ClusterN", "2").is_err());
    }

    /// f32 inputs with the c_xf32_r compute type run on the warpgroup instruction's tf32 form
    /// (MI64x8x8) where the GPU lists it, their M- and N-major operands packed; the FMA tiles
    /// are left out there, kept where the GPU has no tf32 instruction (the MI300X spec lists
    /// none). c_xf32_r with other inputs, or c_f16_r, is refused by the `dtype` rule.
    #[test]
    fn xf32_runs_f32_inputs_as_tf32_on_the_warpgroup_instruction() {
        use crate::problem::{ComputeType, DataType};
        let h100 = HwSpec::by_name("H100-SXM").unwrap();
        let mut p = GemmProblem::new(4096, 4096, 4096);
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        p.compute_type = ComputeType::Xf32;
        let tf32 = wgmma_cfg(
            "MT128x256x32_MI64x8x8_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW4_SVW4_SU0_PW1",
        );
        assert_eq!(rule(&tf32, &p, &h100), "ok");
        assert_eq!(packed_operands(&tf32, &p), [false, false]);
        let fma = wgmma_cfg(
            "MT128x128x16_MI1x1x1_WG1x4_PGR3_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0",
        );
        assert_eq!(rule(&fma, &p, &h100), "matrix-instruction");
        let nn = GemmProblem {
            trans_a: Trans::N,
            trans_b: Trans::N,
            ..p.clone()
        };
        assert_eq!(rule(&tf32, &nn, &h100), "ok");
        assert_eq!(packed_operands(&tf32, &nn), [true, false]);
        // Without c_xf32_r, f32 has no matrix instruction on the H100: the FMA path.
        let f32 = GemmProblem {
            compute_type: ComputeType::F32,
            ..p.clone()
        };
        assert_eq!(rule(&tf32, &f32, &h100), "matrix-instruction");
        assert_eq!(rule(&fma, &f32, &h100), "ok");
        // A GPU without a tf32 instruction runs c_xf32_r on the FMA path, in full f32.
        assert_eq!(rule(&fma, &p, &HwSpec::by_name("MI300X").unwrap()), "ok");
        let bf16 = GemmProblem {
            compute_type: ComputeType::Xf32,
            ..GemmProblem::new(4096, 4096, 4096)
        };
        let v = check(&wgmma_cfg(SEED_BEST), &bf16, &h100).unwrap_err();
        assert_eq!(v.rule, "dtype");
        assert!(v.message.contains("c_xf32_r is for f32 inputs"), "{v}");
    }

    #[test]
    fn swap_ab_slices_n_and_steps_m_by_8() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(10240, 128, 8192);
        let swapped = wgmma_cfg(
            "MT80x128x64_MI64x8x16_WG4x2_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_SAB1",
        );
        assert_eq!(rule(&swapped, &p, &hw), "ok");
        // Unswapped, 80 rows are not whole 64-row slices.
        assert_eq!(rule(&KernelConfig { sab: 0, ..swapped }, &p, &hw), "wgmma");
        // Swapped, N per warpgroup must be whole slices: 128 over 2 warpgroups is, 112 is not.
        let n112 = KernelConfig {
            mt1: 112,
            wg: [4, 1],
            ..swapped
        };
        assert_eq!(rule(&n112, &p, &hw), "wgmma");
        assert_eq!(rule(&KernelConfig { mt1: 128, ..n112 }, &p, &hw), "ok");
        // The instruction's N (here M per warpgroup) is at most 256.
        let wide = KernelConfig {
            mt0: 256,
            pgr: 4,
            ..swapped
        };
        assert_eq!(rule(&wide, &p, &hw), "ok");
        assert_eq!(rule(&KernelConfig { mt0: 272, ..wide }, &p, &hw), "wgmma");
        // With the producer warp and with stream-K it is still the wgmma path.
        assert_eq!(rule(&KernelConfig { pw: 1, ..swapped }, &p, &hw), "ok");
        let sk = KernelConfig {
            gsu: 1,
            gsu_algo: GsuAlgo::StreamK,
            ..swapped
        };
        assert_eq!(rule(&sk, &p, &hw), "ok");
        let mma = KernelConfig {
            mi: [16, 8, 16],
            wg: [1, 4],
            swizzle: 0,
            pgr: 3,
            ..swapped
        };
        assert_eq!(rule(&KernelConfig { sab: 0, ..mma }, &p, &hw), "ok");
        assert_eq!(rule(&mma, &p, &hw), "swap-ab");
        assert_eq!(
            rule(&KernelConfig { sab: 2, ..swapped }, &p, &hw),
            "swap-ab"
        );
    }

    #[test]
    fn producer_warp_is_for_wgmma_outside_stream_k_and_must_fit() {
        let hw = HwSpec::by_name("H200").unwrap();
        let seed = GemmProblem::new(16032, 109, 16384);
        let ok = KernelConfig {
            pw: 1,
            ..wgmma_cfg(SEED_BEST)
        };
        assert_eq!(rule(&ok, &seed, &hw), "ok");
        let mma = KernelConfig {
            mi: [16, 8, 16],
            wg: [2, 2],
            swizzle: 0,
            pgr: 3,
            ..ok
        };
        assert_eq!(rule(&KernelConfig { pw: 0, ..mma }, &seed, &hw), "ok");
        assert_eq!(rule(&mma, &seed, &hw), "producer-warp");
        let stream_k = KernelConfig {
            gsu: 1,
            gsu_algo: GsuAlgo::StreamK,
            pgr: 4,
            ..ok
        };
        assert_eq!(rule(&KernelConfig { pw: 0, ..stream_k }, &seed, &hw), "ok");
        assert_eq!(rule(&stream_k, &seed, &hw), "producer-warp");
        // A producer warpgroup serves two warpgroups of one tile, data-parallel or
        // persistent, but not one warpgroup, ping-pong (its own) or a split summed in the
        // kernel (the producer's path meets the warpgroups' only on the staging barrier).
        assert_eq!(rule(&KernelConfig { pw: 2, ..ok }, &seed, &hw), "ok");
        let one = KernelConfig {
            mt0: 64,
            wg: [4, 1],
            pw: 2,
            ..ok
        };
        assert_eq!(rule(&one, &seed, &hw), "producer-warp");
        let split = KernelConfig {
            pw: 2,
            gsu: 2,
            gsu_algo: GsuAlgo::SingleKernel,
            ..ok
        };
        assert_eq!(rule(&split, &seed, &hw), "producer-warp");
        assert_eq!(
            rule(
                &KernelConfig {
                    gsu_algo: GsuAlgo::Reduce,
                    ..split
                },
                &seed,
                &hw
            ),
            "ok"
        );
        // 1024 computing threads leave no room for a 33rd warp.
        let square = GemmProblem::new(4096, 4096, 4096);
        let full = wgmma_cfg(
            "MT256x128x64_MI64x8x16_WG16x2_PGR2_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        );
        assert_eq!(rule(&full, &square, &hw), "ok");
        assert_eq!(
            rule(&KernelConfig { pw: 1, ..full }, &square, &hw),
            "producer-warp"
        );
        // 512 + 32 threads get 120 registers each: enough for 64 accumulators.
        let wide = wgmma_cfg(
            "MT128x256x64_MI64x8x16_WG8x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW8_SVW8_SU0",
        );
        assert_eq!(rule(&KernelConfig { pw: 1, ..wide }, &square, &hw), "ok");
        // 384 + 32 threads get 152 each, short of 128 accumulators and the rest (384 alone
        // get 168).
        let big = wgmma_cfg(
            "MT192x256x64_MI64x8x16_WG12x1_PGR2_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        );
        assert_eq!(rule(&big, &square, &hw), "ok");
        assert_eq!(
            rule(&KernelConfig { pw: 1, ..big }, &square, &hw),
            "producer-warp"
        );
    }

    #[test]
    fn stream_k_limits_name_the_split_k_rule() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(4096, 128, 4096);
        let ok = wgmma_cfg(
            "MT128x128x64_MI64x8x16_WG8x1_PGR5_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0",
        );
        assert_eq!(rule(&ok, &p, &hw), "ok");
        // Stream-K ignores the iteration count that bounds a plain split.
        let small_k = GemmProblem::new(4096, 128, 64);
        assert_eq!(rule(&KernelConfig { gsu: 4, ..ok }, &small_k, &hw), "ok");
        assert_eq!(rule(&KernelConfig { gsu: 5, ..ok }, &p, &hw), "split-k");
        // 128 accumulators per thread: one warpgroup on a 128-row tile.
        assert_eq!(rule(&KernelConfig { wg: [4, 1], ..ok }, &p, &hw), "split-k");
        // The output tile has LDS of its own: six stages no longer fit beside it.
        assert_eq!(rule(&KernelConfig { pgr: 6, ..ok }, &p, &hw), "lds");
        assert_eq!(rule(&KernelConfig { pgr: 1, ..ok }, &p, &hw), "split-k");
        // 512 threads: 128 registers each.
        let wide = KernelConfig {
            mt1: 256,
            wg: [8, 2],
            pgr: 2,
            ..ok
        };
        assert_eq!(
            rule(&wide, &GemmProblem::new(4096, 4096, 4096), &hw),
            "split-k"
        );
        let huge = GemmProblem::new(1 << 22, 1 << 16, 1 << 16);
        assert_eq!(rule(&ok, &huge, &hw), "split-k");
    }

    #[test]
    fn wgmma_rejections_name_the_rule() {
        let hw = HwSpec::by_name("H100-SXM").unwrap();
        let p = GemmProblem::new(16032, 109, 16384);
        let base = wgmma_cfg(SEED_BEST);
        // Layouts with an M- or N-major operand: 16-bit ones are read transposed (B of 109
        // rows, 218 bytes apart, cannot be read by tensor maps and is packed first); 8-bit
        // ones only K-major.
        for (ta, tb, packs) in [
            (Trans::N, Trans::N, [false, false]),
            (Trans::T, Trans::T, [false, true]),
            (Trans::N, Trans::T, [false, true]),
        ] {
            let q = GemmProblem::with_layout(p.m, p.n, p.k, ta, tb);
            check(&base, &q, &hw).unwrap_or_else(|v| panic!("{}: {v}", q.layout()));
            assert_eq!(packed_operands(&base, &q), packs, "{}", q.layout());
            let mut f8 = q.clone();
            (f8.a_type, f8.b_type) = (crate::problem::DataType::F8, crate::problem::DataType::F8);
            let v = check(
                &KernelConfig {
                    mi: [64, 8, 32],
                    depth_u: 128,
                    ..base
                },
                &f8,
                &hw,
            )
            .unwrap_err();
            assert_eq!(v.rule, "wgmma");
            assert!(v.message.contains("K-major only"), "{v}");
        }
        let cases = [
            // WavesM not a multiple of 4.
            KernelConfig { wg: [2, 1], ..base },
            // Warpgroup tile of 32 rows.
            KernelConfig {
                mt0: 64,
                wg: [8, 1],
                ..base
            },
            // Warpgroup tile wider than 256 columns.
            KernelConfig { mt1: 512, ..base },
            // Not 128 bytes of K per LDS row.
            KernelConfig {
                depth_u: 32,
                ..base
            },
            // Padding instead of the swizzle.
            KernelConfig {
                swizzle: 0,
                lpa: 8,
                lpb: 8,
                ..base
            },
            // A stage kept in the tensor cores needs a third stage.
            KernelConfig {
                plr: 1,
                pgr: 2,
                ..base
            },
        ];
        for c in cases {
            assert_eq!(rule(&c, &p, &hw), "wgmma", "{}", c.name());
        }
        // Deeper pipelines are for wgmma only; LDS still bounds them.
        let mma = KernelConfig {
            mi: [16, 8, 16],
            wg: [2, 2],
            swizzle: 0,
            lpa: 8,
            lpb: 8,
            pgr: 6,
            ..base
        };
        assert_eq!(rule(&mma, &p, &hw), "range");
        let deep = KernelConfig {
            mt1: 64,
            pgr: 8,
            ..base
        };
        assert_eq!(rule(&deep, &p, &hw), "ok");
        let big = KernelConfig {
            mt0: 256,
            mt1: 128,
            pgr: 8,
            ..base
        };
        assert_eq!(rule(&big, &p, &hw), "lds");
        // Not an AMD instruction.
        let mi300 = HwSpec::by_name("MI300X").unwrap();
        assert_eq!(rule(&base, &p, &mi300), "matrix-instruction");
    }

    #[test]
    fn persistent_staging_groups_hold_256_bytes_of_columns() {
        use crate::problem::DataType;
        let hw = HwSpec::by_name("H200").unwrap();
        // 16-bit D: 128 columns a group; f32 D: 64, so a 128-row group is 32 KiB either way.
        assert_eq!(persistent_output_passes(256, 2, 256, false), 2);
        assert_eq!(persistent_output_passes(256, 4, 256, false), 4);
        assert_eq!(persistent_output_passes(80, 4, 256, false), 2);
        // 120 f32 columns split into no whole 8-column halves: one group.
        assert_eq!(persistent_output_passes(120, 4, 256, false), 1);
        // Beside a producer warpgroup, 128 bytes: a 192-column 16-bit tile in three groups.
        assert_eq!(persistent_output_passes(192, 2, 128, true), 3);
        // 160 columns of a 16-bit D: three groups do not split them; widened, four of 40.
        assert_eq!(persistent_output_passes(160, 2, 128, false), 1);
        assert_eq!(persistent_output_passes(160, 2, 128, true), 4);
        assert_eq!(persistent_output_passes(176, 2, 128, true), 1);
        let p = GemmProblem {
            c_type: DataType::F32,
            d_type: DataType::F32,
            ..GemmProblem::new(4096, 4096, 4096)
        };
        let c = wgmma_cfg(
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
        );
        // Four stages beside one 32 KiB group fit (they did not beside a 64 KiB one).
        assert_eq!(lds_bytes(&c, &p), 4 * 64 * 384 * 2 + 128 * 64 * 4 + 1024);
        assert_eq!(rule(&c, &p, &hw), "ok");
    }

    #[test]
    fn a_fourth_stage_takes_narrow_column_groups_where_whole_ones_leave_no_room() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::with_layout(2560, 2560, 2560, Trans::T, Trans::T);
        let four = wgmma_cfg(
            "MT208x128x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1",
        );
        // 208 rows stage as four 128-byte chunks of M: one group of 128 columns is 64 KiB,
        // which leaves three stages; two groups of 64 columns, 32 KiB.
        assert!(persistent_narrow_groups(&four, &p));
        assert_eq!(persistent_passes(&four, &p), 2);
        assert_eq!(lds_bytes(&four, &p), 4 * 64 * 336 * 2 + 4 * 128 * 64 + 1024);
        assert_eq!(rule(&four, &p, &hw), "ok");
        // Three stages fit beside the whole group, which they keep.
        let three = KernelConfig { pgr: 3, ..four };
        assert!(!persistent_narrow_groups(&three, &p));
        assert_eq!(persistent_passes(&three, &p), 1);
        // Five do not fit either way; with C to read, or a K of fewer than 16 steps, four do
        // not (the second pass costs more there than the stage brings).
        assert_eq!(rule(&KernelConfig { pgr: 5, ..four }, &p, &hw), "lds");
        let beta = GemmProblem {
            beta: 1.0,
            ..p.clone()
        };
        assert!(!persistent_narrow_groups(&four, &beta));
        let short = GemmProblem::with_layout(2560, 2560, 960, Trans::T, Trans::T);
        assert!(!persistent_narrow_groups(&four, &short));
        assert_eq!(rule(&four, &short, &hw), "lds");
    }

    #[test]
    fn persistent_kernels_read_c_beside_or_inside_their_staging_area() {
        use crate::problem::DataType;
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem {
            beta: 1.0,
            ..GemmProblem::new(4096, 4096, 4096)
        };
        let pk = |name: &str| wgmma_cfg(&format!("{name}_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1"));
        let no_c = GemmProblem::new(4096, 4096, 4096);
        // C comes through the operand ring where a tensor map reads it in D's layout and the
        // ring holds its 32-column groups: a 128x128 tile's 16-bit C in one slot (four 8 KiB
        // groups to a 32 KiB stage), a 128x256 tile's in two, on two to four stages, with no
        // LDS of its own.
        let deep = pk("MT128x128x64_MI64x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1");
        let wide = pk("MT128x256x64_MI64x8x16_WG8x1_PGR2_PLR0_LPA0_LPB0_SW1");
        let third = KernelConfig { pgr: 3, ..wide };
        let four = KernelConfig { pgr: 4, ..wide };
        for (c, steps) in [(&deep, 1), (&wide, 2), (&third, 2), (&four, 2)] {
            assert_eq!(persistent_c_steps(c, &p), steps, "{}", c.name());
            assert_eq!(persistent_c_stages(c, &p), 0, "{}", c.name());
            assert!(!persistent_c_direct(c, &p), "{}", c.name());
            assert_eq!(lds_bytes(c, &p), lds_bytes(c, &no_c), "{}", c.name());
            assert_eq!(rule(c, &p, &hw), "ok", "{}", c.name());
        }
        // Tiles not of whole 32-column groups take C a tile or two ahead, in a ring of C tiles
        // beside the staging area (two beside four stages of 128x112, one beside four of
        // 128x176), or in the staging area itself (128x240 on three stages: both of its
        // 120-column groups).
        let n112 = pk("MT128x112x64_MI64x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1");
        let n176 = pk("MT128x176x64_MI64x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1");
        let n240 = pk("MT128x240x64_MI64x8x16_WG8x1_PGR3_PLR0_LPA0_LPB0_SW1");
        for (c, stages, c_bytes) in [
            (&n112, 2, 2 * 128 * 112 * 2),
            (&n176, 1, 128 * 176 * 2),
            (&n240, 0, 128 * 120 * 2),
        ] {
            assert_eq!(persistent_c_steps(c, &p), 0, "{}", c.name());
            assert_eq!(persistent_c_stages(c, &p), stages, "{}", c.name());
            assert!(!persistent_c_direct(c, &p), "{}", c.name());
            assert_eq!(
                lds_bytes(c, &p),
                lds_bytes(c, &no_c) + c_bytes,
                "{}",
                c.name()
            );
            assert_eq!(rule(c, &p, &hw), "ok", "{}", c.name());
        }
        // 128x176 on five stages leaves no room for C's tile.
        assert_eq!(rule(&KernelConfig { pgr: 5, ..n176 }, &p, &hw), "lds");
        // C comes in D's layout through a tensor map: another type, or rows off the 16-byte
        // grid, are read directly instead, with no LDS for C and no map of it.
        let f32_c = GemmProblem {
            c_type: DataType::F32,
            ..p.clone()
        };
        assert_eq!(rule(&deep, &f32_c, &hw), "ok");
        assert!(persistent_c_direct(&deep, &f32_c));
        assert_eq!(persistent_c_steps(&deep, &f32_c), 0);
        assert_eq!(persistent_c_stages(&deep, &f32_c), 0);
        assert_eq!(lds_bytes(&deep, &f32_c), lds_bytes(&deep, &no_c));
        let odd_ldc = GemmProblem {
            ldc: 4098,
            ..p.clone()
        };
        let narrow = KernelConfig { svw: 2, ..deep };
        assert_eq!(rule(&narrow, &p, &hw), "ok");
        assert!(!persistent_c_direct(&narrow, &p));
        assert_eq!(rule(&narrow, &odd_ldc, &hw), "ok");
        assert!(persistent_c_direct(&narrow, &odd_ldc));
        // An f32 C of a 128x256 tile, whose C in place would leave fewer than three stages,
        // comes through the operand ring beside four or three: eight groups of 32 columns, 16
        // KiB each, three to a 48 KiB stage, in three slots after the K stages, with no LDS of
        // its own; a 128x128 tile's in two slots of four.
        let f32_cd = GemmProblem {
            c_type: DataType::F32,
            d_type: DataType::F32,
            ..p.clone()
        };
        let f32_wide = KernelConfig { svw: 4, ..wide };
        let f32_no_c = GemmProblem {
            beta: 0.0,
            ..f32_cd.clone()
        };
        for pgr in [3, 4] {
            let c = KernelConfig { pgr, ..f32_wide };
            assert_eq!(persistent_c_steps(&c, &f32_cd), 3, "PGR{pgr}");
            assert!(!persistent_c_direct(&c, &f32_cd), "PGR{pgr}");
            assert_eq!(lds_bytes(&c, &f32_cd), lds_bytes(&c, &f32_no_c), "PGR{pgr}");
            assert_eq!(rule(&c, &f32_cd, &hw), "ok", "PGR{pgr}");
        }
        assert_eq!(persistent_c_steps(&deep, &f32_cd), 2);
        // Where its slots would outnumber the stages (256x128 beside a producer warpgroup on
        // three stages: four slots), or C's rows are off the 16-byte grid (below), an f32 C
        // that outgrows the staging area is read directly.
        let tall = wgmma_cfg(
            "MT256x128x64_MI64x8x16_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW2_PK1",
        );
        assert_eq!(rule(&tall, &f32_cd, &hw), "ok");
        assert_eq!(persistent_c_steps(&tall, &f32_cd), 0);
        assert!(persistent_c_direct(&tall, &f32_cd));
        assert_eq!(
            persistent_c_steps(&KernelConfig { pgr: 4, ..tall }, &f32_cd),
            4
        );
        // Through the operand ring or read directly, C is fetched into L2 ahead where the
        // tiles are more than a wave and a tensor map can read C: not with C through LDS of
        // its own, one wave of tiles, or rows off the grid.
        let cus = hw.compute_units;
        let ringed = KernelConfig { pgr: 4, ..f32_wide };
        assert!(persistent_c_prefetch(&ringed, &f32_cd, cus));
        assert!(persistent_c_prefetch(&tall, &f32_cd, cus));
        assert!(persistent_c_prefetch(&third, &p, cus));
        assert!(!persistent_c_prefetch(&n112, &p, cus));
        let one_wave = GemmProblem {
            m: 1024,
            n: 2048,
            ..f32_cd.clone()
        };
        assert_eq!(persistent_c_steps(&ringed, &one_wave), 3);
        assert!(!persistent_c_prefetch(&ringed, &one_wave, cus));
        let odd_f32_ldc = GemmProblem {
            ldc: 4098,
            ..f32_cd.clone()
        };
        assert_eq!(persistent_c_steps(&ringed, &odd_f32_ldc), 0);
        assert!(persistent_c_direct(&ringed, &odd_f32_ldc));
        assert!(!persistent_c_prefetch(&ringed, &odd_f32_ldc, cus));
    }

    #[test]
    fn the_persistent_kernels_stream_k_takes_one_workgroup_per_unit_and_beta_0() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(3000, 3000, 3000);
        let sk = wgmma_cfg(
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        );
        assert_eq!(rule(&sk, &p, &hw), "ok");
        // In pairs along M or N (each workgroup of a pair its own tile, the pair one range).
        assert_eq!(rule(&KernelConfig { cm: 2, ..sk }, &p, &hw), "ok");
        assert_eq!(rule(&KernelConfig { cn: 2, ..sk }, &p, &hw), "ok");
        // Pairs and the producer warp outside the persistent kernel still take no stream-K.
        let plain = KernelConfig { pk: 0, ..sk };
        assert_eq!(rule(&plain, &p, &hw), "producer-warp");
        // One workgroup per compute unit, one set of consumers, and D only.
        assert_eq!(rule(&KernelConfig { gsu: 2, ..sk }, &p, &hw), "persistent");
        let beta = GemmProblem {
            beta: 1.0,
            ..p.clone()
        };
        // (Three stages, so that C fits in the staging area.)
        let shallow = KernelConfig { pgr: 3, ..sk };
        assert_eq!(rule(&shallow, &beta, &hw), "persistent");
        assert_eq!(
            rule(
                &KernelConfig {
                    gsu_algo: GsuAlgo::Reduce,
                    ..shallow
                },
                &beta,
                &hw
            ),
            "ok"
        );
        // A split tile's parts pass through the staging area, 16 bytes a computing thread
        // at a time: 128x16 on 512 threads stages 4 KiB, less than the 8 KiB a pass needs.
        let thin = wgmma_cfg(
            "MT128x16x64_MI64x8x16_WG8x2_PGR10_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        );
        assert_eq!(rule(&thin, &p, &hw), "persistent");
        // Its flags and two part barriers: 32 bytes of static LDS beside the ring's.
        assert_eq!(lds_layout::static_lds_bytes(&sk, &p), 4 * 16 + 32);
    }

    #[test]
    fn ping_pong_runs_two_single_warpgroup_tile_owners_beside_a_producer_warpgroup() {
        let hw = HwSpec::by_name("H200").unwrap();
        let p = GemmProblem::new(1152, 4096, 1152);
        let pp = wgmma_cfg(
            "MT128x144x64_MI64x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK2",
        );
        assert_eq!(rule(&pp, &p, &hw), "ok");
        // Two sets of 128 computing threads and a whole producer warpgroup.
        assert_eq!(pp.launch_threads(32), 384);
        assert_eq!(pp.consumer_sets(), 2);
        // Each set stages its tile in an area of its own: two 128x72 column groups.
        assert_eq!(
            lds_bytes(&pp, &p),
            4 * 64 * (128 + 144) * 2 + 2 * 128 * 72 * 2 + 1024
        );
        assert_eq!(lds_layout::static_lds_bytes(&pp, &p), 4 * 16 + 16);
        // 176 accumulators fit the 232 registers the consumers take; 192 do not (ptxas
        // compiled 128x176 without spills).
        assert_eq!(rule(&KernelConfig { mt1: 176, ..pp }, &p, &hw), "ok");
        assert_eq!(
            rule(&KernelConfig { mt1: 192, ..pp }, &p, &hw),
            "producer-warp"
        );
        // One warpgroup per tile, unswapped, alone, storing D only.
        for bad in [
            KernelConfig { wg: [8, 1], ..pp },
            KernelConfig { cn: 2, ..pp },
        ] {
            assert_eq!(rule(&bad, &p, &hw), "persistent", "{}", bad.name());
        }
        let beta = GemmProblem {
            beta: 1.0,
            ..p.clone()
        };
        assert_eq!(rule(&pp, &beta, &hw), "persistent");
        assert_eq!(rule(&KernelConfig { pk: 1, ..pp }, &beta, &hw), "ok");
    }

    #[test]
    fn wgmma_lds_bytes_are_unpadded_stages_plus_alignment_slack() {
        let p = GemmProblem::new(16032, 109, 16384);
        let c = wgmma_cfg(SEED_BEST);
        assert_eq!(lds_bytes(&c, &p), 7 * 64 * (128 + 112) * 2 + 1024);
        // A single small stage: the f32 epilogue tile dominates.
        let small = KernelConfig {
            pgr: 1,
            mt1: 256,
            ..c
        };
        assert_eq!(lds_bytes(&small, &p), 128 * 256 * 4 + 1024);
    }
}
