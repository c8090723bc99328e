//! Matrix atoms: the instruction a mainloop multiplies with and how a wave's tile is made of
//! it. Mirrors the per-architecture atom headers of `kernels/` (`gt_mma_nvidia.h`: `mma.sync`
//! and the warpgroup `wgmma`; `gt_mma_amd.h`: MFMA) and the FMA fallback.
//!
//! Rules: `matrix-instruction` (a shape the GPU has for the input type, or 1x1x1 where it has
//! none), `dtype` (the input and compute types the atoms take), `wave-tile` (whole
//! instructions, or whole FMA thread tiles, per wave) and `depth-u` (whole instruction K steps
//! per DepthU). The warpgroup instruction's own constants live here too, since every other
//! group asks whether a config uses it.

use super::{fail, Violation};
use crate::hw::{HwSpec, Vendor};
use crate::problem::{DataType, GemmProblem};
use crate::space::config::KernelConfig;

/// The warpgroup matrix instruction (`wgmma`, sm_90a): 64 rows per warpgroup, N granularity 8
/// (the instruction's N is the warpgroup tile's N), K = 16 (32 bytes of 16-bit K).
pub const WGMMA_MI: [u32; 3] = [64, 8, 16];

/// The warpgroup instruction's shape for an input type: 32 bytes of K, so K = 32 for 8-bit
/// types.
pub fn wgmma_mi(t: DataType) -> [u32; 3] {
    [64, 8, 32 / t.bytes().clamp(1, 4) as u32]
}

/// Whether a config uses the warpgroup (`wgmma`) path of the template.
pub fn is_wgmma(c: &KernelConfig) -> bool {
    is_wgmma_mi(c.mi)
}

/// Whether a matrix instruction shape is the warpgroup instruction's.
pub fn is_wgmma_mi(mi: [u32; 3]) -> bool {
    mi[0] == 64 && mi[1] == 8
}

/// Warps per warpgroup: wgmma is issued by 4 consecutive warps together.
pub const WARPGROUP_WARPS: u32 = 4;

/// The tile of C one warpgroup owns: warps are grouped 4 consecutive along M, so there are
/// (WG0 / 4) x WG1 warpgroups. `[0, 0]` when WG0 is not a multiple of 4.
pub fn warpgroup_tile(c: &KernelConfig) -> [u32; 2] {
    let groups_m = c.wg[0] / WARPGROUP_WARPS;
    if groups_m == 0 || c.wg[1] == 0 {
        return [0, 0];
    }
    [c.mt0 / groups_m, c.mt1 / c.wg[1]]
}

/// `matrix-instruction`: the instruction is one the GPU has for the input type.
pub(super) fn instruction(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let shapes = hw.mi_shapes_for(p);
    if c.uses_matrix_cores() {
        if !shapes.contains(&c.mi) {
            return fail(
                "matrix-instruction",
                format!(
                    "MI{}x{}x{} is not a {} matrix instruction for {} {} (valid: {})",
                    c.mi[0],
                    c.mi[1],
                    c.mi[2],
                    p.a_type,
                    hw.name,
                    hw.arch,
                    if shapes.is_empty() {
                        "none, use MI1x1x1".to_string()
                    } else {
                        shapes
                            .iter()
                            .map(|s| format!("{}x{}x{}", s[0], s[1], s[2]))
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            );
        }
    } else {
        if c.mi != [1, 1, 1] {
            return fail(
                "matrix-instruction",
                "MI must be a valid shape or 1x1x1".into(),
            );
        }
        if !shapes.is_empty() {
            return fail(
                "matrix-instruction",
                format!(
                    "{} has matrix instructions on {}: the FMA path is only for types without them",
                    p.a_type, hw.arch
                ),
            );
        }
    }
    Ok(())
}

/// `dtype`: 8-bit float inputs have the warpgroup instruction on NVIDIA and the 8-bit MFMA
/// instructions on AMD (`gt_mma_amd.h`: gfx94x's and gfx950's, the f8f6f4 shapes included);
/// the `mma.sync` and FMA paths have no 8-bit atoms. Compute types other than f32 have no atom
/// either.
pub(super) fn input_types(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let mfma = hw.vendor == Vendor::Amd && c.uses_matrix_cores();
    if p.a_type.is_8bit() && !is_wgmma(c) && !mfma {
        let [m, n, k] = wgmma_mi(p.a_type);
        return fail(
            "dtype",
            format!(
                "{} inputs run on the warpgroup instruction (MI{m}x{n}x{k}, NVIDIA sm_90a, layout TN) and on AMD's 8-bit MFMA instructions only: the mma.sync and FMA paths have no 8-bit atoms",
                p.a_type
            ),
        );
    }
    compute_type(p)
}

/// `dtype`: every atom (and the GEMV path) accumulates in f32. `c_xf32_r` lets f32 inputs be
/// read as tf32 by the matrix cores (the warpgroup instruction's tf32 form, where the GPU has
/// it: `matrix_instructions.xf32`); kernels that multiply them in full f32 (FMA, the GEMV)
/// meet it too. Other compute types have no atom.
pub(super) fn compute_type(p: &GemmProblem) -> Result<(), Violation> {
    use crate::problem::ComputeType;
    if p.compute_type == ComputeType::Xf32 && p.a_type != DataType::F32 {
        return fail(
            "dtype",
            format!(
                "compute type c_xf32_r is for f32 inputs (tf32 on the matrix cores), not {}",
                p.a_type
            ),
        );
    }
    if !matches!(p.compute_type, ComputeType::F32 | ComputeType::Xf32) {
        return fail(
            "dtype",
            format!(
                "compute type {} is not supported (use c_f32_r, or c_xf32_r for f32 inputs)",
                p.compute_type
            ),
        );
    }
    Ok(())
}

/// `wave-tile` and `depth-u`: wave tiles must be whole matrix instructions (or whole FMA
/// thread tiles), and DepthU whole instruction K steps.
pub(super) fn wave_tile(c: &KernelConfig, hw: &HwSpec) -> Result<(), Violation> {
    let wave = hw.wave_size;
    let [wt0, wt1] = c.wave_tile();
    if !c.mt0.is_multiple_of(c.wg[0]) || !c.mt1.is_multiple_of(c.wg[1]) {
        return fail(
            "wave-tile",
            "MacroTile must divide evenly among the waves".into(),
        );
    }
    if c.uses_matrix_cores() && !is_wgmma(c) {
        if wt0 % c.mi[0] != 0 || wt1 % c.mi[1] != 0 {
            return fail(
                "wave-tile",
                format!(
                    "wave tile {wt0}x{wt1} is not a multiple of MI {}x{}",
                    c.mi[0], c.mi[1]
                ),
            );
        }
        if !c.depth_u.is_multiple_of(c.mi[2]) {
            return fail(
                "depth-u",
                format!("DepthU {} is not a multiple of MI K {}", c.depth_u, c.mi[2]),
            );
        }
    } else if !c.uses_matrix_cores() {
        let per_lane = wt0 * wt1;
        if per_lane % wave != 0 || per_lane / wave > FMA_MAX_OUTPUTS_PER_LANE {
            return fail(
                "wave-tile",
                format!(
                    "FMA wave tile {wt0}x{wt1} must give each of {wave} lanes 1..{FMA_MAX_OUTPUTS_PER_LANE} outputs"
                ),
            );
        }
        if fma_lane_grid(wt0, wt1, wave).is_none() {
            return fail(
                "wave-tile",
                format!("FMA wave tile {wt0}x{wt1} cannot be split into whole sub-tiles over a grid of {wave} lanes"),
            );
        }
    }
    Ok(())
}

/// Outputs one lane of the FMA path may own: 128 accumulators plus two k of operands (16 + 8
/// each, with PrefetchLocalRead) fit the 255 registers of a thread, as in the vendor's f32
/// kernels (256x128 tiles of 256 threads).
pub const FMA_MAX_OUTPUTS_PER_LANE: u32 = 128;

/// The FMA path's grid of lanes over a wave tile (`gt_lanes_m`, kernels/gt_config.h):
/// `(LM, LN)` with LM a power of two, both dividing the tile, and the sub-tile
/// `wt0 / LM x wt1 / LN` the squarest such.
pub fn fma_lane_grid(wt0: u32, wt1: u32, wave: u32) -> Option<(u32, u32)> {
    part_grid(wt0, wt1, wave, [1, 1])
}

/// A grid of `count` parts over a `t0 x t1` tile (`gt_grid_m`, kernels/gt_config.h): `(G, H)`
/// with G a power of two, G x H = count, each part a whole number of `unit[0] x unit[1]`
/// blocks, its sub-tile `t0 / G x t1 / H` the squarest such (the fewest G on a tie).
pub fn part_grid(t0: u32, t1: u32, count: u32, unit: [u32; 2]) -> Option<(u32, u32)> {
    std::iter::successors(Some(1u32), |g| Some(g * 2))
        .take_while(|&g| g <= count)
        .filter(|&g| t0.is_multiple_of(g * unit[0]) && t1.is_multiple_of(count / g * unit[1]))
        .min_by_key(|&g| (t0 / g).abs_diff(t1 / (count / g)))
        .map(|g| (g, count / g))
}
