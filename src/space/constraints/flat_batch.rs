//! The flat batch path (`kernels/scheduler/gt_flat_batches.h`, `kernels/mainloop/
//! gt_flat_batch.h`, `kernels/loader/gt_flat_copy.h`): rules for FlatBatch = 1 and its staged
//! form FlatBatch = 2, which replace the tile rules for their configs, and the sizes codegen
//! launches them with.
//!
//! Rule `flat-batch`: each batch is one tile (MacroTile0 x MacroTile1 at least M x N, at most
//! [`FLAT_BATCH_MAX_SIDE`] each way, in steps of 4) computed by a group of WavesN waves (1, 2,
//! 4 or 8), either with FMAs (MI 1x1x1), the group's lanes a grid that gives each a whole
//! sub-tile of at most [`FLAT_BATCH_MAX_ACC`] outputs, or with a warp-level matrix instruction
//! of the GPU for 16-bit inputs of one type, the group's waves a grid that gives each whole
//! instructions, at most [`FLAT_MMA_MAX_ACC`] accumulators a lane; WavesM groups a workgroup
//! (1, 2, 4 or 8), and their LDS within the GPU's; the parameters the path has no use for at
//! their fixed values ([`KernelConfig::canonical`]); the grid's batches within its x. On FMAs
//! the LDS holds images of the operands' flat ranges, an f32 for every element (converted
//! once, as they are copied); on matrix cores 16-bit tiles of the operands as stored, padded
//! to whole instructions (`GtFlatTile`, kernels/layout/gt_flat_tile.h).
//!
//! The staged form (FlatBatch = 2, `kernels/scheduler/gt_flat_batches_staged.h`) is the
//! matrix-core form with one group a workgroup (WavesM = 1), each workgroup walking batches
//! while the next one's flat ranges are copied as they are into LDS beside the tiles
//! (`kernels/loader/gt_flat_stage.h`): batches up to [`FLAT_STAGED_SIDE`] each way.

use super::atom::{fma_lane_grid, is_wgmma_mi, part_grid};
use super::{fail, Violation};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;
use crate::space::config::KernelConfig;

/// The widest batch (rows or columns) one group computes.
pub const FLAT_BATCH_MAX_SIDE: u32 = 128;
/// Outputs a lane owns at most (its accumulators), on FMAs.
pub const FLAT_BATCH_MAX_ACC: u32 = 64;
/// Accumulators a lane holds at most, on matrix cores (its fragments take few registers
/// beside them).
pub const FLAT_MMA_MAX_ACC: u32 = 128;
/// Accumulators a lane holds at most on the staged form where beta reads C.
const STAGED_BETA_MAX_ACC: u32 = 96;
/// Waves of a group, and groups of a workgroup, at most.
const MOST_WAVES: u32 = 8;
/// Workgroups a grid holds along x (CUDA and HIP alike).
const MAX_GRID_X: i64 = (1 << 31) - 1;

/// The widest batch (rows or columns) the space takes the path for (on FMAs 77 x 77 was the
/// largest measured faster than the tiles it had, 100 x 100 ran three times slower; on matrix
/// cores the tiles still won 96 x 90 x 100 x2000 TN f16, 57.6 us against 85.8, and 100^3 x5000
/// NN f16, 222.9 against 232.3: src/space/flat_batch.rs).
pub const FLAT_SIDE: i64 = 96;
/// Batches a compute unit the path needs at least: two waves of workgroups of four.
const BATCHES_PER_UNIT: i64 = 8;
/// The widest batch (rows or columns) the staged form takes; for square batches the LDS bounds
/// it first (the tiles and staging areas of 160 x 160 x 160 in 16-bit take 210 KiB, of 176^3
/// more than the 227 KiB an H200 workgroup has).
pub const FLAT_STAGED_SIDE: i64 = 192;
/// Batches a compute unit the staged form needs at least: each of its workgroups walks
/// several, the next one's copies in flight while one multiplies.
const STAGED_BATCHES_PER_UNIT: i64 = 4;

/// Whether the space searches the flat batch path for `p`: many small batches (at most
/// [`FLAT_SIDE`] each way, [`BATCHES_PER_UNIT`] a compute unit or more), each batch's images
/// (FMAs) or tiles (matrix cores) within the LDS.
pub fn flat_batch_applies(p: &GemmProblem, hw: &HwSpec) -> bool {
    let [ea, eb] = flat_extents(p);
    let images = flat_image_bytes(ea, p.a_type.bytes()) + flat_image_bytes(eb, p.b_type.bytes());
    let lds = hw.lds_bytes_per_workgroup;
    // The least a matrix-core group's tiles take: M, N and K rounded up to 16.
    let round = |x: i64| (x.max(1) as u64).next_multiple_of(16);
    let tiles = !flat_mma_shapes(p, hw).is_empty()
        && flat_ranges_dense(p)
        && tiles_bytes(p, round(p.m), round(p.n), round(p.k)) <= lds;
    p.batch >= BATCHES_PER_UNIT * i64::from(hw.compute_units)
        && p.m <= FLAT_SIDE
        && p.n <= FLAT_SIDE
        && (images <= lds || tiles)
}

/// Whether the space searches the staged form for `p`: an NVIDIA GPU (its copies into LDS are
/// asynchronous, cp.async; on AMD the kernel's copies would be plain loads and stores that
/// wait as the unstaged form's do, and its AMD builds used scratch memory), 16-bit A and B of
/// one type with a warp-level instruction, batches of at most [`FLAT_STAGED_SIDE`] each way
/// whose ranges are dense, [`STAGED_BATCHES_PER_UNIT`] a compute unit or more, and the least
/// tiles (M, N and K rounded up to 16) with both staging areas within the LDS.
pub fn flat_staged_applies(p: &GemmProblem, hw: &HwSpec) -> bool {
    let round = |x: i64| (x.max(1) as u64).next_multiple_of(16);
    hw.vendor == Vendor::Nvidia
        && p.batch >= STAGED_BATCHES_PER_UNIT * i64::from(hw.compute_units)
        && p.m <= FLAT_STAGED_SIDE
        && p.n <= FLAT_STAGED_SIDE
        && !flat_mma_shapes(p, hw).is_empty()
        && flat_ranges_dense(p)
        && tiles_bytes(p, round(p.m), round(p.n), round(p.k)) + flat_stages_bytes(p)
            <= hw.lds_bytes_per_workgroup
}

/// The FlatBatch values the space searches for `p` besides 0: 1 where
/// [`flat_batch_applies`], 2 where [`flat_staged_applies`].
pub fn flat_batch_values(p: &GemmProblem, hw: &HwSpec) -> Vec<i64> {
    [
        (1, flat_batch_applies(p, hw)),
        (2, flat_staged_applies(p, hw)),
    ]
    .into_iter()
    .filter_map(|(v, on)| on.then_some(v))
    .collect()
}

/// The widest batch side a FlatBatch value takes.
fn widest_side(fb: u32) -> u32 {
    if fb == 2 {
        FLAT_STAGED_SIDE as u32
    } else {
        FLAT_BATCH_MAX_SIDE
    }
}

/// LDS bytes of the staged form's two staging areas: each operand's flat range rounded up to
/// whole 16-byte chunks (`gt_flat_stage_bytes`).
pub fn flat_stages_bytes(p: &GemmProblem) -> u64 {
    let [ea, eb] = flat_extents(p);
    let stage = |n: i64, bytes: usize| (n.max(0) as u64 * bytes as u64).next_multiple_of(16);
    stage(ea, p.a_type.bytes()) + stage(eb, p.b_type.bytes())
}

/// Whether each operand's flat range holds at most as many elements between its lines (a
/// leading dimension past them) as in them, plus a chunk: on matrix cores the copies read the
/// whole range, and no LDS bound keeps it short as the FMA images' does.
pub fn flat_ranges_dense(p: &GemmProblem) -> bool {
    let [ea, eb] = flat_extents(p);
    ea <= 2 * p.m * p.k + 16 && eb <= 2 * p.k * p.n + 16
}

/// The warp-level matrix instructions the flat batch path may multiply `p` with on `hw`:
/// those of 16-bit A and B of one type, the warpgroup instruction left out.
pub fn flat_mma_shapes(p: &GemmProblem, hw: &HwSpec) -> Vec<[u32; 3]> {
    if p.a_type.bytes() != 2 || p.b_type != p.a_type {
        return Vec::new();
    }
    (hw.mi_shapes_for(p).iter().copied())
        .filter(|&mi| !is_wgmma_mi(mi))
        .collect()
}

/// The tile sides the path adds to MacroTile0 and MacroTile1 where it applies: steps of 4 up
/// to the widest batch it takes (the lanes' sub-tiles come in whole rows, and 17 rows pad to
/// 20 or 24 rather than 32), and with the staged form (`staged`) steps of 8 up to its widest
/// (whole 16 x 8 instructions a wave).
pub fn flat_tile_sides(staged: bool) -> impl Iterator<Item = i64> {
    let wide = if staged { FLAT_STAGED_SIDE / 8 } else { 0 };
    (1..=FLAT_SIDE / 4)
        .map(|i| i * 4)
        .chain((FLAT_SIDE / 8 + 1..=wide).map(|i| i * 8))
}

/// Elements from each operand's first to its last as stored, A then B: along the leading
/// dimension once per stored column but the last, and one stored column more. The flat range
/// the kernel copies (`GtFlatBatches::extent`).
pub fn flat_extents(p: &GemmProblem) -> [i64; 2] {
    let extent = |rows: i64, cols: i64, ld: i64| (cols - 1) * ld + rows;
    [
        if p.trans_a.is_t() {
            extent(p.k, p.m, p.lda)
        } else {
            extent(p.m, p.k, p.lda)
        },
        if p.trans_b.is_t() {
            extent(p.n, p.k, p.ldb)
        } else {
            extent(p.k, p.n, p.ldb)
        },
    ]
}

/// LDS bytes of one operand's image of `elements` elements of `bytes` each: an f32 for every
/// element of its 16-byte chunks, the first up to a chunk before the range
/// (`gt_flat_image_bytes`).
pub fn flat_image_bytes(elements: i64, bytes: usize) -> u64 {
    let bytes = bytes.max(1) as u64;
    ((elements.max(0) as u64 * bytes).div_ceil(16) + 1) * (16 / bytes) * 4
}

/// LDS bytes of a flat batch workgroup: both images (or tiles, on matrix cores) of each of
/// its WavesM groups.
pub fn flat_batch_lds_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    let group = if c.fb == 2 {
        flat_tiles_bytes(c, p) + flat_stages_bytes(p)
    } else if c.uses_matrix_cores() {
        flat_tiles_bytes(c, p)
    } else {
        let [ea, eb] = flat_extents(p);
        flat_image_bytes(ea, p.a_type.bytes()) + flat_image_bytes(eb, p.b_type.bytes())
    };
    c.wg[0] as u64 * group
}

/// LDS bytes of one group's two 16-bit tiles on matrix cores (`GtFlatTile::make`): each
/// operand's lines as stored, K rounded up to the instruction's K and M (N) to the batch tile,
/// lines an odd number of 16-byte chunks apart.
pub fn flat_tiles_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    let kp = (p.k.max(1) as u64).next_multiple_of(u64::from(c.mi[2].max(1)));
    tiles_bytes(p, u64::from(c.mt0), u64::from(c.mt1), kp)
}

/// [`flat_tiles_bytes`] of an `mt0 x mt1` batch tile with K padded to `kp`.
fn tiles_bytes(p: &GemmProblem, mt0: u64, mt1: u64, kp: u64) -> u64 {
    let tile = |lines: u64, len: u64| lines * ((len * 2 / 16) | 1) * 16;
    let a = if p.trans_a.is_t() {
        tile(mt0, kp)
    } else {
        tile(kp, mt0)
    };
    let b = if p.trans_b.is_t() {
        tile(kp, mt1)
    } else {
        tile(mt1, kp)
    };
    a + b
}

/// The grid `(GM, GN)` of a group's waves over the batch tile on matrix cores, each wave
/// whole instructions (`gt_grid_m` in `GtFlatBatchMma`).
pub fn flat_wave_grid(c: &KernelConfig) -> Option<(u32, u32)> {
    part_grid(c.mt0, c.mt1, c.wg[1], [c.mi[0], c.mi[1]])
}

/// The rows and columns `(FM, FN)` each lane of a group owns of the batch tile, where its lane
/// grid (`gt_lanes_m`, kernels/gt_config.h) gives every lane a whole sub-tile.
pub fn flat_sub_tile(c: &KernelConfig, wave: u32) -> Option<(u32, u32)> {
    fma_lane_grid(c.mt0, c.mt1, c.wg[1] * wave).map(|(lm, ln)| (c.mt0 / lm, c.mt1 / ln))
}

/// Registers per thread: on FMAs the accumulators, one k of the lane's rows and columns in
/// f32, their places in the images, and a fixed part for the loop and the batch's addresses;
/// on matrix cores the accumulators (a group's outputs over its lanes), two steps of fragments
/// and the same fixed part.
pub fn flat_batch_registers(c: &KernelConfig, wave: u32) -> u32 {
    if c.uses_matrix_cores() {
        let acc = c.mt0 * c.mt1 / (c.wg[1] * wave).max(1);
        let (gm, gn) = flat_wave_grid(c).unwrap_or((1, 1));
        // A fragment of an M x K instruction: M * K 16-bit values over the wave's lanes.
        let frag = |side: u32| side * c.mi[2] * 2 / (4 * wave).max(1);
        let frags = (c.mt0 / gm / c.mi[0].max(1)) * frag(c.mi[0])
            + (c.mt1 / gn / c.mi[1].max(1)) * frag(c.mi[1]);
        return acc + 2 * frags + 24;
    }
    let (fm, fn_) = flat_sub_tile(c, wave).unwrap_or((c.mt0, c.mt1));
    fm * fn_ + 2 * (fm + fn_) + 24
}

/// `flat-batch`: FlatBatch is 0, 1 or 2, and a FlatBatch config is one the flat batch kernel
/// runs (module header).
pub(super) fn flat_batch(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let rule = "flat-batch";
    match c.fb {
        0 => return Ok(()),
        1 => {}
        2 => {
            if hw.vendor != Vendor::Nvidia {
                return fail(
                    rule,
                    format!("the staged flat batch path (FlatBatch 2) needs asynchronous copies into LDS, which {} has not", hw.name),
                );
            }
            if !c.uses_matrix_cores() || c.wg[0] != 1 {
                return fail(
                    rule,
                    format!(
                        "the staged flat batch path (FlatBatch 2) runs one group of waves a workgroup (WavesM 1) on a warp-level matrix instruction, not WavesM {} on MI{}x{}x{}",
                        c.wg[0], c.mi[0], c.mi[1], c.mi[2]
                    ),
                );
            }
        }
        v => return fail(rule, format!("FlatBatch is 0, 1 or 2, not {v}")),
    }
    if *c != c.canonical() {
        return fail(
            rule,
            format!(
                "the flat batch path has no LDS tiles, pipeline, vectors, split, tile order or warpgroup kernels: their parameters take the fixed values of {}",
                c.name()
            ),
        );
    }
    if c.uses_matrix_cores() {
        flat_instruction(c, p, hw)?;
        if !flat_ranges_dense(p) {
            return fail(
                rule,
                "on matrix cores the flat batch path reads each operand's whole range: a leading dimension past twice the rows it holds takes MI1x1x1".into(),
            );
        }
    } else if c.mi != [1, 1, 1] {
        return fail(
            rule,
            "the flat batch path multiplies with FMAs (MatrixInstruction 1x1x1) or a warp-level matrix instruction".into(),
        );
    }
    let widest = widest_side(c.fb);
    let sides_ok = |t: u32, lim: i64| t.is_multiple_of(4) && t <= widest && i64::from(t) >= lim;
    if !sides_ok(c.mt0, p.m) || !sides_ok(c.mt1, p.n) {
        return fail(
            rule,
            format!(
                "the flat batch tile covers the batch's {}x{} outputs in steps of 4, at most {widest} each way: MacroTile {}x{} does not",
                p.m, p.n, c.mt0, c.mt1
            ),
        );
    }
    let counts_ok = |w: u32| w.is_power_of_two() && w <= MOST_WAVES;
    if !counts_ok(c.wg[0])
        || !counts_ok(c.wg[1])
        || !c.mt0.is_multiple_of(c.wg[0])
        || !c.mt1.is_multiple_of(c.wg[1])
    {
        return fail(
            rule,
            format!(
                "the flat batch path takes WavesM = 1, 2, 4 or 8 batches a workgroup on WavesN = 1, 2, 4 or 8 waves each, dividing MacroTile0 and MacroTile1: {}x{} does not",
                c.wg[0], c.wg[1]
            ),
        );
    }
    let wave = hw.wave_size;
    if c.uses_matrix_cores() {
        let acc = c.mt0 * c.mt1 / (c.wg[1] * wave);
        // The staged form keeps its batch's places live across the loop over batches: with
        // beta's reads of C beside them, 104 accumulators a lane spilled (sm_90a).
        let most = if c.fb == 2 && p.beta != 0.0 {
            STAGED_BETA_MAX_ACC
        } else {
            FLAT_MMA_MAX_ACC
        };
        if flat_wave_grid(c).is_none() || acc > most {
            return fail(
                rule,
                format!(
                    "the {} waves of a group must each own whole {}x{} instructions of MacroTile {}x{}, at most {most} accumulators a lane",
                    c.wg[1], c.mi[0], c.mi[1], c.mt0, c.mt1
                ),
            );
        }
    } else {
        let acc = flat_sub_tile(c, wave).map_or(u32::MAX, |(fm, fn_)| fm * fn_);
        if acc > FLAT_BATCH_MAX_ACC {
            return fail(
                rule,
                format!(
                    "the {} lanes of a group must each own a whole sub-tile of MacroTile {}x{} of at most {FLAT_BATCH_MAX_ACC} outputs",
                    c.wg[1] * wave,
                    c.mt0,
                    c.mt1
                ),
            );
        }
    }
    let lds = flat_batch_lds_bytes(c, p);
    if lds > hw.lds_bytes_per_workgroup {
        return fail(
            rule,
            format!(
                "the images (or tiles) of {} batches' operands need {lds} bytes of LDS, {} has {}",
                c.wg[0], hw.name, hw.lds_bytes_per_workgroup
            ),
        );
    }
    super::fma_registers(rule, flat_batch_registers(c, wave), c, hw)?;
    flat_grid_x(c, p)
}

/// `flat-batch` on matrix cores: a warp-level instruction of the GPU for the inputs, which are
/// 16-bit and of one type (the tiles keep them as they are).
fn flat_instruction(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    if p.a_type.bytes() != 2 || p.b_type != p.a_type {
        return fail(
            "flat-batch",
            format!(
                "the flat batch path's matrix instructions take 16-bit A and B of one type, not {} x {}: use MI1x1x1",
                p.a_type, p.b_type
            ),
        );
    }
    let warp = flat_mma_shapes(p, hw);
    if !warp.contains(&c.mi) {
        let names: Vec<String> = (warp.iter())
            .map(|s| format!("{}x{}x{}", s[0], s[1], s[2]))
            .collect();
        return fail(
            "flat-batch",
            format!(
                "the flat batch path multiplies with FMAs (MI1x1x1) or a warp-level matrix instruction of {} for {} (valid: {}), not MI{}x{}x{}",
                hw.name,
                p.a_type,
                if names.is_empty() { "none".into() } else { names.join(", ") },
                c.mi[0],
                c.mi[1],
                c.mi[2]
            ),
        );
    }
    Ok(())
}

/// `flat-batch`: the grid's workgroups along x hold every batch.
fn flat_grid_x(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    if (p.batch.max(1) as u64).div_ceil(u64::from(c.wg[0])) > MAX_GRID_X as u64 {
        return fail(
            "flat-batch",
            format!(
                "{} batches at {} a workgroup are more workgroups than a grid's x holds",
                p.batch, c.wg[0]
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::check;
    use super::*;
    use crate::problem::{DataType, Trans};

    fn odd_batches() -> GemmProblem {
        let mut p = GemmProblem::new(17, 17, 17);
        p.batch = 50000;
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F16, DataType::F16, DataType::F16, DataType::F16);
        p.fill_defaults();
        p
    }

    fn rule(name: &str, p: &GemmProblem) -> String {
        let hw = HwSpec::by_name("H200").unwrap();
        let c = KernelConfig::parse(name).unwrap();
        check(&c, p, &hw).map_or_else(|v| v.to_string(), |_| "ok".into())
    }

    const ONE_WAVE: &str =
        "MT24x24x16_MI1x1x1_WG4x1_PGR1_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW1_SVW1_SU0_FB1";

    #[test]
    fn odd_small_batches_take_a_batch_a_group() {
        let p = odd_batches();
        assert_eq!(rule(ONE_WAVE, &p), "ok");
        // Two waves a batch, two batches a workgroup.
        assert_eq!(rule(&ONE_WAVE.replace("WG4x1", "WG2x2"), &p), "ok");
        // The tile must cover the batch.
        assert!(rule(&ONE_WAVE.replace("MT24x24", "MT16x24"), &p).starts_with("flat-batch"));
        // Matrix instructions are not this path's.
        assert!(rule(&ONE_WAVE.replace("MI1x1x1", "MI16x8x16"), &p).starts_with("flat-batch"));
        // A name with a split is not canonical: the path has none.
        let split = KernelConfig {
            gsu: 2,
            ..KernelConfig::parse(ONE_WAVE).unwrap()
        };
        let hw = HwSpec::by_name("H200").unwrap();
        assert_eq!(flat_batch(&split, &p, &hw).unwrap_err().rule, "flat-batch");
    }

    #[test]
    fn a_lane_owns_at_most_its_share_of_outputs() {
        let mut p = odd_batches();
        (p.m, p.n) = (100, 100);
        p.fill_defaults();
        // 112x112 on one wave: 392 outputs a lane.
        let one = ONE_WAVE.replace("MT24x24", "MT112x112");
        assert!(
            rule(&one, &p).contains("at most 64 outputs"),
            "{}",
            rule(&one, &p)
        );
        assert_eq!(rule(&one.replace("WG4x1", "WG1x8"), &p), "ok");
    }

    #[test]
    fn the_images_cover_each_operand_from_first_to_last_element() {
        let mut p = odd_batches();
        p.trans_a = Trans::N;
        p.lda = 40;
        // A 17x17 M-contiguous with rows 40 apart: 16 * 40 + 17 elements.
        assert_eq!(flat_extents(&p), [16 * 40 + 17, 16 * 17 + 17]);
        // 83 chunks of 8 halves (one before the range), each 8 floats.
        assert_eq!(
            flat_image_bytes(657, 2),
            (1314_u64.div_ceil(16) + 1) * 8 * 4
        );
        assert_eq!(flat_image_bytes(289, 4), (1156_u64.div_ceil(16) + 1) * 16);
        let c = KernelConfig::parse(ONE_WAVE).unwrap();
        assert_eq!(
            flat_batch_lds_bytes(&c, &p),
            4 * (flat_image_bytes(657, 2) + flat_image_bytes(289, 2))
        );
        // Images past the GPU's LDS are refused.
        p.lda = 40000;
        assert!(
            rule(ONE_WAVE, &p).contains("bytes of LDS"),
            "{}",
            rule(ONE_WAVE, &p)
        );
    }
}
