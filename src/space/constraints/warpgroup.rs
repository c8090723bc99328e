//! The warpgroup mainloop (Hopper): `wgmma` reading both operands from swizzled LDS, fed by
//! tensor-memory boxes, optionally by a producer warp (warp specialisation), optionally on the
//! transposed tile (SwapAB). Mirrors the warpgroup mainloop part of the kernel template and
//! the `wgmma` atom of `gt_mma_nvidia.h`.
//!
//! Rules: `wgmma` (what the path supports: layouts and types, swizzle, tensor-map boxes,
//! stages, warpgroup tiles), `producer-warp` and `swap-ab`. Its tiles are per warpgroup of 4
//! warps rather than per warp, and its LDS layouts are fixed (the swizzles the instruction's
//! descriptors read, kernels/layout/gt_wgmma_tile.h). The geometry the kernel and its launch
//! share lives here too: the LDS chunk of an M- or N-major operand (`mn_chunk`) and which
//! operands are packed before the main kernel (`packed_operands`).

use super::atom::{is_wgmma, warpgroup_tile, WARPGROUP_WARPS};
use super::resources::registers_estimate;
use super::{fail, Violation};
use crate::hw::HwSpec;
use crate::problem::{DataType, GemmProblem};
use crate::space::config::{GsuAlgo, KernelConfig};

/// WavesM of three warpgroups stacked along M (the only WavesM that is not a power of two).
pub const THREE_WARPGROUPS: u32 = 12;

/// Elements along M (N) of one LDS chunk of an M-major A (N-major B) on the warpgroup path, or
/// `None` for a K-major operand. The widest of 64, 32 and 16 elements (a 128-, 64- or 32-byte
/// swizzle) that divides the tile and, when several warpgroups share the operand's extent,
/// each warpgroup's part of it: a descriptor starts at a whole chunk. The kernel
/// (`GtWgmmaMnTile`) and its tensor-map boxes use the same chunk.
pub fn mn_chunk(cfg: &KernelConfig, p: &GemmProblem, is_a: bool) -> Option<u32> {
    // Only 16-bit operands can be read transposed; an M- or N-major tf32 operand is packed.
    if p.k_contiguous(is_a) || p.a_type.bytes() != 2 {
        return None;
    }
    let [wt_m, wt_n] = warpgroup_tile(cfg);
    let (extent, part) = if is_a {
        (cfg.mt0, wt_m)
    } else {
        (cfg.mt1, wt_n)
    };
    [64, 32, 16]
        .into_iter()
        .find(|c| extent.is_multiple_of(*c) && (part == 0 || part.is_multiple_of(*c)))
}

/// Most rows of one tensor-map box; a K-major tile with more is filled by several.
pub const MAX_BOX_ROWS: u32 = 256;
/// Most rows of a warpgroup tile (MacroTile): two boxes of 256 rows, so that one workgroup
/// covers N up to 512 (several warpgroups along N share the A tile).
pub const MAX_WGMMA_TILE: u32 = 512;
/// The widest N of one warpgroup instruction (and so of one warpgroup's tile along it).
pub const MAX_WGMMA_N: u32 = 256;

/// Rows of each tensor-map box filling a K-major tile of `rows` rows: the tile in the fewest
/// equal boxes of at most 256 rows, each whole 8-row groups (kernels/layout/gt_wgmma_tile.h);
/// `None` when no such split exists.
pub fn k_major_box_rows(rows: u32) -> Option<u32> {
    let boxes = rows.div_ceil(MAX_BOX_ROWS).max(1);
    (rows.is_multiple_of(boxes) && (rows / boxes).is_multiple_of(8)).then_some(rows / boxes)
}

/// Whether the tensor memory accelerator can read an operand in place: its rows and batches
/// start on 16-byte boundaries.
pub fn tma_readable(p: &GemmProblem, is_a: bool) -> bool {
    let (t, ld, stride) = stored(p, is_a);
    let unit = (16 / t.bytes().max(1)) as i64;
    ld % unit == 0 && (p.batch <= 1 || stride % unit == 0)
}

/// An operand's element type, leading dimension and batch stride.
fn stored(p: &GemmProblem, is_a: bool) -> (DataType, i64, i64) {
    if is_a {
        (p.a_type, p.lda, p.stride_a)
    } else {
        (p.b_type, p.ldb, p.stride_b)
    }
}

/// Whether an operand the tensor memory accelerator reads in place has rows that start on
/// 16-byte but not 32-byte boundaries (K = 3000 in bf16). Each box row then costs the L2
/// several requests: on an H200, 8192x1000x3000 on the same kernel read 10.9 M L2 requests
/// and ran 107.7 us, against 3.2 M and 72.3 us with lda = ldb = 3008 (Nsight Compute), with
/// 256-byte L2 promotion (the tensor maps of such rows now ask for 128 bytes).
pub fn tma_rows_unaligned(p: &GemmProblem, is_a: bool) -> bool {
    let (t, ld, _) = stored(p, is_a);
    tma_readable(p, is_a) && rows_off_32_bytes(ld * t.bytes() as i64)
}

/// Whether an M- or N-major operand the tensor memory accelerator reads in place (its rows
/// aligned to 32 bytes) has rows that are not whole 128-byte lines: every 128-byte box row
/// then spans two lines of the L2, and the tile's width along M or N steps in the 32- or
/// 64-column chunks its rows' swizzle takes. Copied K-major first (PackUnaligned), a skinny
/// N-major B reads as TN's does. H200, same call, kernel against kernel (cuBLASLt in
/// brackets): 14336x176x4096 NT on 128x176 with B copied 42.0 us against 47.8 in place on
/// 128x192 [37.4]; 3584x160x18944 NT on 64x80 56.8 against 72.7 [46.5]; 32768x240x4096 TT on
/// 128x240 100.7 against 114.7 on 128x256 [97.6].
pub fn tma_rows_off_lines(p: &GemmProblem, is_a: bool) -> bool {
    let (t, ld, _) = stored(p, is_a);
    let row_bytes = ld * t.bytes() as i64;
    !p.k_contiguous(is_a)
        && tma_readable(p, is_a)
        && !rows_off_32_bytes(row_bytes)
        && row_bytes % 128 != 0
}

/// Whether PackUnaligned may copy an operand: rows aligned to 16 bytes only, or an N-major B
/// off the 128-byte lines (`tma_rows_off_lines`; an M-major A of such rows is left in place:
/// copying it was not measured to pay).
pub fn tma_rows_copyable(p: &GemmProblem, is_a: bool) -> bool {
    tma_rows_unaligned(p, is_a) || (!is_a && tma_rows_off_lines(p, is_a))
}

/// Whether rows `row_bytes` apart leave 32-byte boundaries: what makes an operand unaligned
/// for [`tma_rows_unaligned`], and what sets a tensor map's L2 promotion
/// (device/cuda/tma.rs), so that the starts for such operands and the promotion agree.
pub fn rows_off_32_bytes(row_bytes: i64) -> bool {
    row_bytes % 32 != 0
}

/// PackUnaligned's bit of A (copied into aligned rows first); B's is 2.
pub const PACK_A: u32 = 1;
/// PackUnaligned's bit of B.
pub const PACK_B: u32 = 2;

/// The values of a parameter that names a set of operands by these bits (PackUnaligned,
/// PackMNMajor) where `bits` are the operands it may name: every subset of them.
pub(super) fn operand_subsets(bits: u32) -> Vec<i64> {
    (0..=PACK_A + PACK_B)
        .filter(|v| v & !bits == 0)
        .map(i64::from)
        .collect()
}

/// The operands of a non-empty set of these bits, in words: "A", "B" or "A and B".
pub(super) fn operand_names(bits: u32) -> &'static str {
    if bits == PACK_A + PACK_B {
        "A and B"
    } else if bits == PACK_A {
        "A"
    } else {
        "B"
    }
}

/// Which operands (A, B) a warpgroup kernel packs K-major into its workspace before the main
/// kernel (kernels/loader/gt_pack_kernel.h): those the tensor maps cannot read in place,
/// M- or N-major ones whose tiles are no whole number of LDS chunks, and those PackUnaligned
/// asks for whose rows are 16-byte but not 32-byte aligned (or, for an N-major B, not whole
/// 128-byte lines). The packed copy has none of these properties, so the packed problem packs
/// nothing more.
pub fn packed_operands(c: &KernelConfig, p: &GemmProblem) -> [bool; 2] {
    if !is_wgmma(c) {
        return [false, false];
    }
    let pack = |is_a: bool| {
        let bit = if is_a { PACK_A } else { PACK_B };
        !tma_readable(p, is_a)
            || (!p.k_contiguous(is_a) && mn_chunk(c, p, is_a).is_none())
            || (c.pu & bit != 0 && tma_rows_copyable(p, is_a))
    };
    [pack(true), pack(false)]
}

/// Registers a producer warpgroup keeps once it has handed the rest to the computing
/// warpgroups (`PRODUCER` in kernels/mainloop/gt_producer_registers.h).
const PRODUCER_WARPGROUP_REGISTERS: u32 = 40;

/// Registers each computing thread has beside a producer warpgroup (ping-pong's, or
/// ProducerWarp=2's): what the producer's 40 leave of the register file, in steps of 8, at most
/// 256 (`CONSUMER` in kernels/mainloop/gt_producer_registers.h): 232 for two warpgroups.
fn producer_warpgroup_consumer_registers(computing_threads: u32, hw: &HwSpec) -> u32 {
    let rest = hw
        .registers_per_cu
        .saturating_sub(4 * hw.wave_size as u64 * PRODUCER_WARPGROUP_REGISTERS as u64);
    ((rest / computing_threads.max(1) as u64).min(256) as u32) & !7
}

/// The `producer-warp` rule: warp specialisation exists where one thread's tensor-map loads
/// can feed the warpgroups (the wgmma path), outside the stream-K kernel (whose single
/// pipeline runs across tiles with the workgroup's barriers in it; the persistent kernel's
/// stream-K has the producer warp), and the extra warp must fit: in the
/// threads of a workgroup, and in the register file beside the computing threads. A producer
/// warpgroup (ProducerWarp=2) gives its registers to the two warpgroups of a tile (in the
/// data-parallel or the persistent kernel), which get more than a producer warp beside them
/// leaves (232 instead of 168 a thread for two warpgroups): it must leave them more than they
/// start with.
pub(super) fn producer_warp(
    c: &KernelConfig,
    p: &GemmProblem,
    hw: &HwSpec,
) -> Result<(), Violation> {
    let rule = "producer-warp";
    match c.pw {
        0 => return Ok(()),
        1 | 2 => {}
        v => return fail(rule, format!("ProducerWarp is 0, 1 or 2, not {v}")),
    }
    if !is_wgmma(c) {
        return fail(
            rule,
            format!("ProducerWarp={} feeds warpgroup (wgmma) tiles through tensor maps: MI64x8x16, MI64x8x32 or MI64x8x8", c.pw),
        );
    }
    if c.gsu_algo == GsuAlgo::StreamK && c.pk == 0 {
        return fail(
            rule,
            format!("ProducerWarp={} takes stream-K (GlobalSplitUAlgorithm=2) only in the persistent kernel (PersistentKernel=1)", c.pw),
        );
    }
    // Two computing warpgroups only: four beside a producer warpgroup (640 threads) hung in
    // the register hand-over on an H200. Ping-pong (PersistentKernel=2) has its own producer
    // warpgroup with ProducerWarp=1.
    let computing = c.threads(hw.wave_size) * c.consumer_sets();
    if c.pw == 2 && (c.pk == 2 || computing != 2 * WARPGROUP_WARPS * hw.wave_size) {
        return fail(
            rule,
            format!(
                "ProducerWarp=2 (a producer warpgroup) hands its registers to the two computing warpgroups of one tile: WorkGroup of 8 warps, PersistentKernel 0 or 1 (ping-pong, PersistentKernel=2, has its own with ProducerWarp=1), not PersistentKernel={} with {} warps",
                c.pk,
                computing / hw.wave_size
            ),
        );
    }
    // The data-parallel kernel's producer warpgroup takes no part in summing split tiles in
    // the kernel (kernels/scheduler/gt_data_parallel.h): its path never meets the
    // warpgroups' after the main loop but on the staging barrier.
    if c.pw == 2 && c.pk == 0 && c.gsu > 1 && c.gsu_algo == GsuAlgo::SingleKernel {
        return fail(
            rule,
            "ProducerWarp=2 outside the persistent kernel splits K with the reduction kernel or atomics (GSU<n>R, GSU<n>A), not summed in the kernel (GSU<n>K)".into(),
        );
    }
    let threads = c.launch_threads(hw.wave_size);
    if threads > hw.max_threads_per_workgroup {
        return fail(
            rule,
            format!(
                "{} computing threads plus the producer warp exceed {} per workgroup",
                c.threads(hw.wave_size),
                hw.max_threads_per_workgroup
            ),
        );
    }
    // Who gets how many registers: the launch's share, or what a producer warpgroup hands
    // the computing ones.
    let (budget, who, each) = if c.pk == 2 || c.pw == 2 {
        let budget = producer_warpgroup_consumer_registers(computing, hw);
        if budget <= hw.register_share(threads) {
            return fail(
                rule,
                format!(
                    "a producer warpgroup beside {computing} computing threads cannot give them more than the {} registers each they start with",
                    hw.register_share(threads)
                ),
            );
        }
        if c.pk == 2 {
            (
                budget,
                "ping-pong's computing warpgroups get".to_string(),
                "per thread",
            )
        } else {
            (
                budget,
                format!("beside the producer warpgroup, {computing} computing threads get"),
                "each",
            )
        }
    } else {
        (
            hw.register_share(threads),
            format!("with the producer warp, {threads} threads get"),
            "each",
        )
    };
    let need = registers_estimate(c, p, hw);
    if need > budget {
        return fail(
            rule,
            format!("{who} {budget} registers {each}; this config needs about {need}"),
        );
    }
    Ok(())
}

/// The `swap-ab` rule: only the warpgroup path computes the transposed tile (its tile
/// granularity is checked with the rest of the `wgmma` rule).
pub(super) fn swap_ab(c: &KernelConfig) -> Result<(), Violation> {
    match c.sab {
        0 => Ok(()),
        1 if is_wgmma(c) => Ok(()),
        1 => fail(
            "swap-ab",
            "SwapAB=1 transposes the warpgroup instruction's tile: MI64x8x16 only".into(),
        ),
        v => fail("swap-ab", format!("SwapAB is 0 or 1, not {v}")),
    }
}

/// The `wgmma` rule: what the warpgroup path of the template supports.
pub(super) fn wgmma(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let rule = "wgmma";
    if hw.vendor != crate::hw::Vendor::Nvidia {
        return fail(
            rule,
            "the warpgroup instruction (MI64x8x16, MI64x8x32) exists on NVIDIA sm_90a only".into(),
        );
    }
    // The instruction reads both operand tiles straight from LDS: K-major, or for 16-bit types
    // M- or N-major (its transpose bits). 8-bit operands must be K-major (layout TN), as for
    // cuBLASLt on Hopper.
    if p.a_type.is_8bit() && (!p.trans_a.is_t() || p.trans_b.is_t()) {
        return fail(
            rule,
            format!(
                "the warpgroup instruction reads 8-bit operands K-major only: {} needs layout TN, not {}{}",
                p.a_type,
                p.trans_a.letter(),
                p.trans_b.letter()
            ),
        );
    }
    if c.swizzle != 1 || c.lpa != 0 || c.lpb != 0 {
        return fail(
            rule,
            "MI64x8x16 uses the 128-byte LDS swizzle: LdsSwizzle=1, LdsPadA=LdsPadB=0".into(),
        );
    }
    // The tiles arrive through tensor maps (an operand they cannot read in place is packed
    // first: packed_operands) in boxes of at most 256 rows, two at most per K slab.
    let boxes_split = |rows: u32| rows <= MAX_WGMMA_TILE && k_major_box_rows(rows).is_some();
    if !boxes_split(c.mt0) || !boxes_split(c.mt1) {
        return fail(
            rule,
            format!(
                "warpgroup tiles are at most {MAX_WGMMA_TILE} rows, filled by equal tensor-map boxes of at most {MAX_BOX_ROWS} rows of whole 8-row groups: MacroTile {}x{} is not",
                c.mt0, c.mt1
            ),
        );
    }
    // Without fragments to prefetch, PrefetchLocalRead=1 keeps one stage multiplying in the
    // tensor cores while the next is issued; that stage's slot is not reloaded meanwhile, so
    // it needs a third stage.
    if c.plr == 1 && c.pgr < 3 {
        return fail(
            rule,
            format!("with MI64x8x16, PrefetchLocalRead=1 keeps a stage in the tensor cores and needs PrefetchGlobalRead >= 3 (got {})", c.pgr),
        );
    }
    if !c.wg[0].is_multiple_of(WARPGROUP_WARPS) {
        return fail(
            rule,
            format!(
                "WavesM {} must be a multiple of 4: warps issue wgmma as warpgroups of 4 along M",
                c.wg[0]
            ),
        );
    }
    // Three warpgroups along M: one 64-row slice of a 192-row tile each (two of a 384-row
    // one), the instruction's N the tile's width, so every wgmma reads a B tile as wide as the tile's and A is not read
    // twice (two warpgroups side by side along N each read all of A; on 192x160 tiles they
    // made 12288x300x2048 35.5 us against 28.1, H200).
    if c.wg[0] == THREE_WARPGROUPS && (!matches!(c.mt0, 192 | 384) || c.wg[1] != 1) {
        return fail(
            rule,
            format!(
                "WavesM {THREE_WARPGROUPS} (three warpgroups) takes MacroTile0 192 or 384 and WavesN=1, not MacroTile0={} with WavesN={}",
                c.mt0, c.wg[1]
            ),
        );
    }
    let groups_m = c.wg[0] / WARPGROUP_WARPS;
    if !c.mt0.is_multiple_of(groups_m) || !c.mt1.is_multiple_of(c.wg[1]) {
        return fail(
            rule,
            format!(
                "MacroTile {}x{} must divide evenly among {}x{} warpgroups",
                c.mt0, c.mt1, groups_m, c.wg[1]
            ),
        );
    }
    let [rows, cols] = warpgroup_tile(c);
    if c.sab != 0 {
        // Swapped, the instruction's 64-row slices run along N and its N along M.
        if !cols.is_multiple_of(64) || !rows.is_multiple_of(8) || rows > MAX_WGMMA_N {
            return fail(
                rule,
                format!(
                    "with SwapAB=1 the warpgroup tile {rows}x{cols} must have a multiple of 8 rows, at most 256, and a multiple of 64 columns"
                ),
            );
        }
    } else if !rows.is_multiple_of(64) || !cols.is_multiple_of(8) || cols > MAX_WGMMA_N {
        return fail(
            rule,
            format!(
                "warpgroup tile {rows}x{cols} must have a multiple of 64 rows and a multiple of 8 columns, at most 256"
            ),
        );
    }
    // One swizzle row is 128 bytes of K.
    let per_row = 128 / p.a_type.bytes() as u32;
    if !c.depth_u.is_multiple_of(per_row) {
        return fail(
            rule,
            format!(
                "DepthU {} must be a multiple of {per_row} (128 bytes of K per swizzled LDS row)",
                c.depth_u
            ),
        );
    }
    Ok(())
}
