//! Shared-memory tile layouts: padded rows or the XOR swizzle (the warpgroup path's fixed
//! 128-byte swizzle), and how many bytes the stages and the staged output tile take. Mirrors
//! the LDS tile layout and swizzle part of the kernel template.
//!
//! Rule: `lds-layout` (the swizzle replaces padding). [`lds_bytes`] is what the `lds` rule of
//! [`super::resources`] holds against the GPU, what code generation asks for as dynamic shared
//! memory, and what the sim device's occupancy model uses.

use super::atom::is_wgmma;
use super::{fail, tile_count, Violation};
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// Alignment slack of the wgmma LDS layout: the kernel aligns its tiles to the 1024-byte
/// period of the 128-byte swizzle at run time.
pub(super) const WGMMA_LDS_ALIGN: u64 = 1024;

/// LDS bytes one workgroup uses: the main-loop stages, or the f32 epilogue staging tile if
/// that is larger (the epilogue reuses the same allocation). A persistent kernel stages its
/// output tile, in D's type, in bytes of its own after the stages (the producer refills them
/// meanwhile).
pub fn lds_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    if c.gv == 1 {
        return super::gemv::gemv_lds_bytes(c, p);
    }
    if c.fb > 0 {
        return super::flat_batch::flat_batch_lds_bytes(c, p);
    }
    let ea = p.a_type.bytes() as u64;
    let eb = p.b_type.bytes() as u64;
    let (mt0, mt1, du) = (c.mt0 as u64, c.mt1 as u64, c.depth_u as u64);
    if is_wgmma(c) {
        // The operand ring, plus the alignment slack.
        let main = wgmma_ring_bytes(c, p);
        if c.pk > 0 {
            return main + persistent_output_bytes(c, p) + WGMMA_LDS_ALIGN;
        }
        return staged_output(c, main) + WGMMA_LDS_ALIGN;
    }
    // The FMA path keeps both tiles MN-major (kernels/loader/gt_transpose_loader.h): DU rows
    // of MT0 or MT1 elements plus padding.
    if !c.uses_matrix_cores() {
        let stages = c.pgr.max(1) as u64;
        let a_tile = du * (mt0 + c.lpa as u64);
        let b_tile = du * (mt1 + c.lpb as u64);
        return staged_output(c, stages * (a_tile * ea + b_tile * eb));
    }
    // Rows of the LDS tile run along the operand's contiguous dimension; padding is per row.
    let a_tile = if p.trans_a.is_t() {
        mt0 * (du + c.lpa as u64)
    } else {
        du * (mt0 + c.lpa as u64)
    };
    let b_tile = if p.trans_b.is_t() {
        du * (mt1 + c.lpb as u64)
    } else {
        mt1 * (du + c.lpb as u64)
    };
    let stages = c.pgr.max(1) as u64;
    staged_output(c, stages * (a_tile * ea + b_tile * eb))
}

/// LDS bytes of the operand stages plus the f32 output tile staged through LDS: in the same
/// bytes after the main loop, or (stream-K, whose loads run on while a tile is written out) in
/// bytes of its own after them.
fn staged_output(c: &KernelConfig, stages: u64) -> u64 {
    let output = c.mt0 as u64 * c.mt1 as u64 * 4;
    if c.gsu_algo == GsuAlgo::StreamK {
        stages + output
    } else {
        stages.max(output)
    }
}

/// Column groups in which the persistent kernel stages and stores its output tile: the fewest
/// equal groups of at most `group_bytes` ([`persistent_group_limit`]) of columns per row of M
/// (with 256, 128 columns of a 16-bit D, 64 of f32), whole 8-column groups. Where the fewest
/// do not split MT1 so, `widen` looks on to twice as many; otherwise, or where none does, the
/// whole tile is one group (`gt_out_passes` in kernels/epilogue/gt_epilogue_tma.h). Groups of
/// 128 f32 columns left a 128x256 tile three operand stages beside a 64 KiB staging area.
pub fn persistent_output_passes(mt1: u32, d_bytes: u32, group_bytes: u32, widen: bool) -> u32 {
    let fewest = (mt1 * d_bytes).div_ceil(group_bytes.max(1)).max(1);
    let most = if widen { 2 * fewest } else { fewest };
    (fewest..=most)
        .find(|&p| mt1.is_multiple_of(p) && (mt1 / p).is_multiple_of(8))
        .unwrap_or(1)
}

/// The warpgroup path's operand ring: PrefetchGlobalRead stages of unpadded K-major tiles (the
/// swizzle replaces padding).
fn wgmma_ring_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    let (mt0, mt1, du) = (c.mt0 as u64, c.mt1 as u64, c.depth_u as u64);
    c.pgr.max(1) as u64 * du * (mt0 * p.a_type.bytes() as u64 + mt1 * p.b_type.bytes() as u64)
}

/// LDS one workgroup of the persistent kernel's parts (sm_90a) may hold: 227 KiB.
const SM90_LDS_PER_WORKGROUP: u64 = 232448;

/// The most bytes of columns per row one column group of the persistent staging area holds
/// (`GtTmaStoreEpilogue::GROUP_BYTES`): 256, or 128 beside a producer warpgroup
/// (ProducerWarp=2), whose tiles are the tall ones: 192x192 then keeps four operand stages
/// (a 24 KiB staging area instead of 36): 3072^3 ran 83.1 us, where three stages took 87.1;
/// or 128 where 256 would leave the ring no room for its stages ([`persistent_narrow_groups`]).
/// Groups of 64 bytes, which would give swapped 160x256 a fourth stage too, cost more in
/// epilogue passes than the stage brings: 90.2 us on 3072^3, and 91.6 for 160x256 on
/// 5000x1000x5000 NT against 87.7 on three stages (H200, same call).
pub fn persistent_group_limit(c: &KernelConfig, p: &GemmProblem) -> u32 {
    if c.pw == 2 || persistent_narrow_groups(c, p) {
        NARROW_GROUP_BYTES
    } else {
        WIDE_GROUP_BYTES
    }
}

/// The column groups' widths, in bytes of a row: [`persistent_group_limit`].
const WIDE_GROUP_BYTES: u32 = 256;
const NARROW_GROUP_BYTES: u32 = 128;

/// The ring narrow column groups make room for ([`persistent_narrow_groups`]): a fourth
/// stage. Where whole groups leave two, the tile is too large for the persistent kernel
/// anyway (64x512 in eight groups never won: H200, bench's default sets of eight GEMMs).
const NARROW_STAGES: u32 = 4;

/// The fewest K steps (of DepthU) over which narrow column groups pay for their second pass.
const NARROW_LEAST_K_STEPS: i64 = 16;

/// Whether the persistent kernel (with a producer warp, D only; not ping-pong, whose two
/// staging areas were not measured so) stages its output in groups of 128 bytes a row
/// because groups of 256 leave its operand ring fewer than four stages
/// (`GT_OUT_NARROW`): swapped 208x128 with four stages needs 64 KiB for a whole 256-row
/// staging area, 32 in two groups. Only where that is what fits, so every config that fitted
/// before keeps its groups; where C is read through LDS its whole tile takes the room anyway.
/// Not for other rings, nor for a short K: there the stage brings less than the second
/// pass costs (H200, bench's default sets, one call: 4096x4096x40 x16 171.0 us on swapped
/// 256x128 with three stages in one group, 175.5 once four took two).
/// Swapped tiles keep groups of whole 16-column steps (their matrix stores write 16 columns).
pub fn persistent_narrow_groups(c: &KernelConfig, p: &GemmProblem) -> bool {
    if c.pk != 1
        || c.pw == 2
        || c.pgr != NARROW_STAGES
        || p.k < NARROW_LEAST_K_STEPS * c.depth_u as i64
        || p.beta != 0.0
        || !is_wgmma(c)
    {
        return false;
    }
    let staging = |passes: u32| group_bytes(c, p, passes) * c.consumer_sets() as u64;
    let narrow = group_passes(c, p, NARROW_GROUP_BYTES);
    !fits_beside_ring(c, p, staging(group_passes(c, p, WIDE_GROUP_BYTES)))
        && fits_beside_ring(c, p, staging(narrow))
        && (c.sab == 0 || (c.mt1 / narrow).is_multiple_of(16))
}

/// The column groups of a staging area whose groups hold at most `limit` bytes a row: the
/// narrow groups look on to twice the fewest for whole 8-column groups.
fn group_passes(c: &KernelConfig, p: &GemmProblem, limit: u32) -> u32 {
    persistent_output_passes(
        c.mt1,
        p.d_type.bytes() as u32,
        limit,
        limit == NARROW_GROUP_BYTES,
    )
}

/// Bytes of one column group when MT1 is staged in `passes` groups: D's type, M in whole
/// 128-byte chunks (kernels/layout/gt_wgmma_tile.h's GtOutTile).
fn group_bytes(c: &KernelConfig, p: &GemmProblem, passes: u32) -> u64 {
    let chunk = 128 / p.d_type.bytes() as u64;
    (c.mt0 as u64).div_ceil(chunk) * 128 * (c.mt1 / passes) as u64
}

/// The persistent kernel's column groups for this config and D.
pub fn persistent_passes(c: &KernelConfig, p: &GemmProblem) -> u32 {
    // Beside a producer warpgroup the groups may be more than the fewest: 256x160 of a 16-bit
    // D stages 20 KiB in four groups instead of its whole 80 KiB, which leaves room for three
    // operand stages.
    group_passes(c, p, persistent_group_limit(c, p))
}

/// Whether each warpgroup of the persistent kernel stages and stores its own columns
/// (`GtTmaStoreEpilogue::OWN_COLS`): two to four warpgroups side by side along N, one
/// warpgroup tall, D only (no C, no stream-K parts in the staging area), each warpgroup's
/// columns splitting into the column groups in whole 8-column steps (16 where swapped: a
/// swapped matrix store writes 16 columns). Each then has a part of the staging area and its
/// own store boxes, a warpgroup's share of a column group wide.
pub fn persistent_own_columns(c: &KernelConfig, p: &GemmProblem) -> bool {
    let wgs = c.wg[1];
    let passes = persistent_passes(c, p);
    let own = c.mt1 / wgs.max(1);
    let step = if c.sab == 1 { 16 } else { 8 };
    c.wg[0] == 4
        && (2..=4).contains(&wgs)
        && p.beta == 0.0
        && c.gsu_algo != GsuAlgo::StreamK
        && c.consumer_sets() == 1
        && own.is_multiple_of(passes)
        && (own / passes).is_multiple_of(step)
}

/// Columns of one set of the persistent kernel's store boxes: a column group, or a
/// warpgroup's share of it ([`persistent_own_columns`]).
pub fn persistent_store_columns(c: &KernelConfig, p: &GemmProblem) -> u32 {
    let cols = c.mt1 / persistent_passes(c, p);
    if persistent_own_columns(c, p) {
        cols / c.wg[1]
    } else {
        cols
    }
}

/// Bytes of one column group of the persistent kernel's staging area.
pub(super) fn persistent_group_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    group_bytes(c, p, persistent_passes(c, p))
}

/// Bytes of the persistent kernel's output areas (kernels/epilogue/gt_epilogue_tma.h's
/// stage_off and c_off): the staging area holds one column group; where beta reads C through
/// LDS, C comes into a ring of whole C tiles beside it ([`persistent_c_stages`]) or into the
/// staging area, which then holds every column group; through the operand ring
/// ([`persistent_c_steps`]) or read directly ([`persistent_c_direct`]), it takes no LDS.
pub fn persistent_output_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    let group = persistent_group_bytes(c, p);
    let passes = persistent_passes(c, p) as u64;
    if p.beta == 0.0 || persistent_c_direct(c, p) || persistent_c_steps(c, p) > 0 {
        // Ping-pong: a staging area per set of consumers.
        return group * c.consumer_sets() as u64;
    }
    match persistent_c_stages(c, p) {
        0 => group * passes,
        stages => group * (1 + stages as u64 * passes),
    }
}

/// Whether the persistent kernel reads C (beta not 0) straight from global memory into its
/// accumulators' registers (`GT_C_DIRECT`, kernels/epilogue/gt_epilogue_tma.h) instead of
/// through LDS: where a tensor map cannot read C into D's tile ([`c_fits_output_tile`]: C of
/// another type, rows off D's 16-byte grid; the persistent kernel had no beta there before),
/// and for tiles of an f32 C whose C in the staging area would leave fewer than three operand
/// stages (128x256).
///
/// Nowhere else: the direct reads keep only a few values a thread in flight (the
/// accumulators hold the registers), so each tile waits out many round trips. Measured on an
/// H200 (beta 1, bench's default sets, same call): 4096^3 bf16 on 128x256, four stages
/// direct 311.4 us against 186.9 on three with C in place; with an f32 C and D, four stages
/// direct 231.5 against 238.8 for the best without the persistent kernel [cuBLASLt 209.7].
/// Asking L2 for the tile's C from the producer thread halfway through the main loop slowed
/// the producer: that f32 tile fell behind the data-parallel one.
///
/// Where the ring's slots hold whole column groups of such an f32 C, C comes through the ring
/// instead ([`persistent_c_steps`]).
pub fn persistent_c_direct(c: &KernelConfig, p: &GemmProblem) -> bool {
    if c.pk == 0 || p.beta == 0.0 || !is_wgmma(c) {
        return false;
    }
    c_direct_by_kind(p) || (f32_c_outgrows_staging(c, p) && persistent_c_steps(c, p) == 0)
}

/// An f32 C whose whole tile fits neither in a ring of C tiles nor in place beside three
/// operand stages (read directly where it does not come through the operand ring either).
fn f32_c_outgrows_staging(c: &KernelConfig, p: &GemmProblem) -> bool {
    p.c_type.bytes() == 4 && whole_c_tile_stages(c, p) == 0 && !c_in_place_fits(c, p, c.pgr.min(3))
}

/// The persistent kernel's C through its operand ring (`GT_C_STEPS`,
/// kernels/epilogue/gt_c_ring.h): how many ring slots a tile's C takes after its K stages, in
/// column groups of [`C_RING_COLUMNS`] laid out as the staging area's tiles, as many whole
/// groups a slot as fit; 0 where this is not how C comes. Wherever a tensor map can read C in
/// D's layout (C of D's type, 16 or 32 bits, rows on the 16-byte grid), for whole tiles (not
/// stream-K) of whole groups, at least one a slot, and no more slots than the ring has, where
/// the warpgroups are unswapped and stacked along M (each thread's places then lie a constant
/// apart: a 320x128 tile on two warpgroups side by side spilled 1.6 KiB and ran 219.1 us
/// against 123.2 data-parallel on 1600x6400x4096 NT, H200). Then C needs no LDS of its own,
/// so the ring keeps its stages, and lands while the tile's last K steps are multiplied, in
/// one wave of tiles too (H200, one call, C in its own LDS / through the ring: f32 C and D
/// 3072x768x8192 NT 79.0 / 72.7 [57.8], 1024x1024x4096 21.9 / 19.3 [18.3], 2048x1024x2048
/// 25.0 / 21.0 [18.3]; bf16 4096x1024x4096 49.6 / 48.6 [48.2]). Measured on an H200 (beta
/// 1, bench's default sets, one call): an f32 C and D, where C was read directly after the
/// main loop, 11008x4096x4096 NT 624.1 -> 555.6 us [531-536], 4096^3 229.2 -> 202.4
/// [212-213], a fifth of the warps' samples (ncu) having
/// waited for C in the epilogue; a 16-bit C, where it came a tile ahead or in the staging
/// area, 4096^3 185.3 -> 180.4 [179], 16384^2 x 128 315.9 -> 302.3 [301], 8192^2 x 1024
/// 222.3 -> 210.1 [226], within 2% either way on six more. (A ring of C groups of its own
/// beside the operand ring left an f32 C's 128x256 tile two or five slots of 16 KiB and a store
/// to wait for before each refill: 798.8 and 801.6 us on 11008x4096x4096 NT.)
pub fn persistent_c_steps(c: &KernelConfig, p: &GemmProblem) -> u32 {
    if c.pk != 1
        || p.beta == 0.0
        || !is_wgmma(c)
        || c_direct_by_kind(p)
        || c.gsu_algo == GsuAlgo::StreamK
        || c.sab != 0
        || c.wg[1] != 1
        || !c.mt1.is_multiple_of(C_RING_COLUMNS)
        || !matches!(p.c_type.bytes(), 2 | 4)
    {
        return 0;
    }
    // C has D's type here (a tensor map reads it in D's layout): a group is a staging group
    // of C_RING_COLUMNS columns.
    let group = group_bytes(c, p, c.mt1 / C_RING_COLUMNS);
    let stage = wgmma_ring_bytes(c, p) / c.pgr.max(1) as u64;
    let per_stage = stage / group;
    if per_stage == 0 {
        return 0;
    }
    let steps = (c.mt1 / C_RING_COLUMNS).div_ceil(per_stage as u32);
    if steps <= c.pgr {
        steps
    } else {
        0
    }
}

/// The columns of one group of C through the operand ring (kernels/epilogue/gt_c_ring.h's
/// GROUP_N): 128 bytes of f32 a row, one 4 KiB box a 128-byte chunk of M.
pub const C_RING_COLUMNS: u32 = 32;

/// Whether the persistent kernel reading C directly ([`persistent_c_direct`]) has the L2 fetch
/// each tile's C while the tile is multiplied (`GT_C_PREFETCH`): the producer asks for the
/// tile's C a box of 32 columns a K step, late in the tile's K steps
/// (kernels/scheduler/gt_persistent.h says when), so the epilogue's reads find C in L2 rather
/// than in memory. Where the tiles are more than one per compute unit of `compute_units` (with
/// one tile each, nothing overlaps the epilogue and the prefetches only take bandwidth from
/// the main loop: 3072x768x8192 NT, 120 tiles of 128x160, ran 77.5 -> 83.2 us with them, H200),
/// the tile is unswapped and at most 256 rows, and C's rows and batches lie on the 16-byte
/// grid a tensor map needs. (Asking for C line by line from the producer thread slowed the
/// producer: [`persistent_c_direct`].)
pub fn persistent_c_prefetch(c: &KernelConfig, p: &GemmProblem, compute_units: u32) -> bool {
    let unit = 16 / p.c_type.bytes().max(1) as i64;
    (persistent_c_direct(c, p) || persistent_c_steps(c, p) > 0)
        && tile_count(c, p) > u64::from(compute_units)
        && c.sab == 0
        && c.mt0 <= C_PREFETCH_BOX
        && p.ldc % unit == 0
        && (p.batch <= 1 || p.stride_c % unit == 0)
}

/// The most elements of a side of a tensor-map box: the most rows of a tile whose C the
/// boxes prefetch.
const C_PREFETCH_BOX: u32 = 256;
/// The columns of C one prefetch box covers: the kernel's `C_PIECE`
/// (kernels/scheduler/gt_persistent.h), which asks for one such box a K step.
pub const C_PREFETCH_COLUMNS: u32 = 32;

/// The persistent tiles that read C directly whatever the LDS holds.
fn c_direct_by_kind(p: &GemmProblem) -> bool {
    !c_fits_output_tile(p)
}

/// Whether the staging area can hold C's whole tile (in place) beside `stages` operand
/// stages of the config's tile.
fn c_in_place_fits(c: &KernelConfig, p: &GemmProblem, stages: u32) -> bool {
    let shallow = KernelConfig { pgr: stages, ..*c };
    let tile = persistent_group_bytes(c, p) * persistent_passes(c, p) as u64;
    fits_beside_ring(&shallow, p, tile + persistent_c_barrier_bytes(0))
}

/// Whether `output` bytes (staging area, C's areas and their barriers) fit in the persistent
/// kernel's LDS beside the config's operand ring, its alignment slack and its stage barriers.
fn fits_beside_ring(c: &KernelConfig, p: &GemmProblem, output: u64) -> bool {
    wgmma_ring_bytes(c, p) + WGMMA_LDS_ALIGN + stage_barrier_bytes(c) + output
        <= SM90_LDS_PER_WORKGROUP
}

/// The persistent kernel's ring of C tiles (`GT_C_STAGES`): as many as the LDS holds beside
/// the operand ring and the staging area (with the barriers the kernel declares, counted as
/// the `lds` rule counts them), at most two; 0 puts C in the staging area, or nowhere where C
/// comes through the operand ring ([`persistent_c_steps`], which goes first), where the
/// staging area does not hold it either, or the tiles read C directly by kind
/// ([`persistent_c_direct`]). Each
/// tile of the ring lets C load further ahead. Measured on an H200 with beta 1, kernel against
/// kernel: 16384^2 x 128 ran 324 us with one C tile apart against 350-359 with C in place,
/// while 4096^3 needs the LDS for a 128x256 tile's third stage (192 us in place against 239
/// with one C tile apart and two stages).
pub fn persistent_c_stages(c: &KernelConfig, p: &GemmProblem) -> u32 {
    if persistent_c_steps(c, p) > 0 {
        0
    } else {
        whole_c_tile_stages(c, p)
    }
}

/// [`persistent_c_stages`] where C does not come through the operand ring.
fn whole_c_tile_stages(c: &KernelConfig, p: &GemmProblem) -> u32 {
    if c.pk == 0 || p.beta == 0.0 || !is_wgmma(c) || c_direct_by_kind(p) {
        return 0;
    }
    let group = persistent_group_bytes(c, p);
    let c_tile = group * persistent_passes(c, p) as u64;
    (1..=MAX_C_STAGES)
        .rev()
        .find(|&s| {
            fits_beside_ring(
                c,
                p,
                group + s as u64 * c_tile + persistent_c_barrier_bytes(s),
            )
        })
        .unwrap_or(0)
}

/// The deepest ring of C tiles: with two, one tile's C loads while the next waits in LDS.
const MAX_C_STAGES: u32 = 2;

/// LDS the kernel declares itself besides the dynamic bytes: on the warpgroup path an
/// mbarrier per stage (two with the producer warp or the persistent kernel), the hand-off
/// flag of stream-K and of the in-kernel split sum, and the persistent kernel's C barriers.
/// The driver refuses a launch whose dynamic and static bytes together pass the limit (an
/// H100 refused a stream-K kernel of exactly 232448 dynamic bytes).
pub(super) fn static_lds_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    // The data-parallel kernel's C, through a tensor map, arrives on the in-place barriers:
    // counted wherever its kernel and C may take that path (epilogue::stores_d_by_tensor_map
    // asks more of the tile).
    let c_through_map = c.pk > 0 || whole_tile_output_by_map(c, p);
    let c_barriers = if c_through_map
        && p.beta != 0.0
        && is_wgmma(c)
        && !persistent_c_direct(c, p)
        && persistent_c_steps(c, p) == 0
    {
        persistent_c_barrier_bytes(persistent_c_stages(c, p))
    } else {
        0
    };
    stage_barrier_bytes(c) + c_barriers
}

/// The mbarriers of the operand ring and the split-K flags ([`static_lds_bytes`] but for C).
fn stage_barrier_bytes(c: &KernelConfig) -> u64 {
    let per_stage = if !is_wgmma(c) {
        0
    } else if c.pw > 0 || c.pk > 0 {
        16
    } else {
        8
    };
    let flag = c.gsu_algo == GsuAlgo::StreamK || c.sums_splits_in_kernel();
    // The persistent kernel's stream-K: two more mbarriers and two flags (ptxas: 96 bytes of
    // static LDS against 64 for whole tiles, 128x256 with four stages).
    let flag_bytes = match (flag, c.pk > 0) {
        (false, _) => 0,
        (true, false) => 8,
        (true, true) => 32,
    };
    // Ping-pong's turn barriers, one per set of consumers.
    let turns = if c.pk == 2 { 16 } else { 0 };
    per_stage * c.pgr as u64 + flag_bytes + turns
}

/// The persistent kernel's C barriers with a ring of `stages` C tiles (0: C in the staging
/// area): four per ring slot, and in the staging area the hand-over barrier. ptxas reported 32
/// bytes a slot, and 48 in all with the hand-over barrier (aligned).
fn persistent_c_barrier_bytes(stages: u32) -> u64 {
    if stages == 0 {
        48
    } else {
        32 * stages as u64
    }
}

/// What the data-parallel kernel's tensor-map output (epilogue::stores_d_by_tensor_map) asks
/// of the kernel and the problem before its tile: the warpgroup path, one whole tile per
/// workgroup (not persistent, no GEMV, no split-K, no stream-K), a 16-bit D, and C (where beta
/// reads it) readable into D's tile ([`c_fits_output_tile`]).
pub fn whole_tile_output_by_map(c: &KernelConfig, p: &GemmProblem) -> bool {
    is_wgmma(c)
        && c.pk == 0
        && c.gv == 0
        && c.gsu == 1
        && c.gsu_algo != GsuAlgo::StreamK
        && c_fits_output_tile(p)
        && p.d_type.bytes() == 2
}

/// Whether C, where beta reads it, can come into a tile laid out as D's through a tensor map:
/// C of D's type, its rows and batches on 16-byte boundaries (the persistent kernel's rule,
/// `persistent`). Measured on an H200 (kernel against kernel, one call each): the
/// data-parallel 128x256 tile on 4096x1024x4096 with beta 1 ran 55.4-56.3 us reading C in the
/// f32 staging tile's vector stores, 49.3 with C through a tensor map, against 46.6 with beta
/// 0; asking L2 for C's tile before the main loop instead ran 57.5, loading C a few runs
/// ahead in the vector stores 56.2.
pub fn c_fits_output_tile(p: &GemmProblem) -> bool {
    let unit = 16 / p.d_type.bytes().max(1) as i64;
    p.beta == 0.0
        || (p.c_type == p.d_type && p.ldc % unit == 0 && (p.batch <= 1 || p.stride_c % unit == 0))
}

/// `lds-layout`: LdsSwizzle=1 replaces padding.
pub(super) fn padding_or_swizzle(c: &KernelConfig) -> Result<(), Violation> {
    if c.swizzle == 1 && (c.lpa != 0 || c.lpb != 0) {
        return fail(
            "lds-layout",
            "LdsSwizzle=1 replaces padding: LdsPadA and LdsPadB must be 0".into(),
        );
    }
    Ok(())
}
