//! The warpgroup mainloop (Hopper): `wgmma` reading both operands from swizzled LDS, fed by
//! tensor-memory boxes, optionally by a producer warp (warp specialisation), optionally on the
//! transposed tile (SwapAB). Mirrors the warpgroup mainloop part of the kernel template and
//! the `wgmma` atom of `gt_mma_nvidia.h`.
//!
//! Rules: `wgmma` (what the path supports: layout, swizzle, tensor-map alignment and boxes,
//! stages, warpgroup tiles), `producer-warp` and `swap-ab`. Its tiles are per warpgroup of 4
//! warps rather than per warp, and its LDS layout is fixed (the 128-byte swizzle the
//! instruction's descriptors read).

use super::atom::{is_wgmma, warpgroup_tile, WARPGROUP_WARPS};
use super::resources::{register_share, registers_estimate};
use super::{fail, Violation};
use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// The `producer-warp` rule: warp specialisation exists where one thread's tensor-map loads
/// can feed the warpgroups (the wgmma path), outside stream-K (whose single pipeline runs
/// across tiles with the workgroup's barriers in it), and the extra warp must fit: in the
/// threads of a workgroup, and in the register file beside the computing threads.
pub(super) fn producer_warp(
    c: &KernelConfig,
    p: &GemmProblem,
    hw: &HwSpec,
) -> Result<(), Violation> {
    let rule = "producer-warp";
    match c.pw {
        0 => return Ok(()),
        1 => {}
        v => return fail(rule, format!("ProducerWarp is 0 or 1, not {v}")),
    }
    if !is_wgmma(c) {
        return fail(
            rule,
            "ProducerWarp=1 feeds wgmma warpgroups through tensor maps: MI64x8x16 only".into(),
        );
    }
    if c.gsu_algo == GsuAlgo::StreamK {
        return fail(
            rule,
            "ProducerWarp=1 does not combine with stream-K (GlobalSplitUAlgorithm=2)".into(),
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
    let budget = register_share(hw, threads);
    let need = registers_estimate(c, p, hw);
    if need > budget {
        return fail(
            rule,
            format!(
                "with the producer warp, {threads} threads get {budget} registers each; this config needs about {need}"
            ),
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
            "MI64x8x16 (wgmma) exists on NVIDIA sm_90a only".into(),
        );
    }
    // Both operand tiles are read by the instruction straight from LDS in K-major form, and
    // the template loads them without transposing: A must be stored KxM (transA = T) and B
    // KxN (transB = N), K contiguous in both.
    if !p.trans_a.is_t() || p.trans_b.is_t() {
        return fail(
            rule,
            format!(
                "MI64x8x16 needs both operands K-contiguous (layout TN); {}{} has {} M- or N-contiguous: use MI16x8x16",
                if p.trans_a.is_t() { 'T' } else { 'N' },
                if p.trans_b.is_t() { 'T' } else { 'N' },
                match (p.trans_a.is_t(), p.trans_b.is_t()) {
                    (false, true) => "A and B",
                    (false, false) => "A",
                    _ => "B",
                }
            ),
        );
    }
    if c.swizzle != 1 || c.lpa != 0 || c.lpb != 0 {
        return fail(
            rule,
            "MI64x8x16 uses the 128-byte LDS swizzle: LdsSwizzle=1, LdsPadA=LdsPadB=0".into(),
        );
    }
    // The tiles arrive through tensor maps, whose rows (and batches) must start on 16-byte
    // boundaries and whose boxes are at most 256 rows.
    {
        let unit = (16 / p.a_type.bytes().max(1)) as i64;
        let batched = p.batch > 1;
        let misaligned = p.lda % unit != 0
            || p.ldb % unit != 0
            || batched && (p.stride_a % unit != 0 || p.stride_b % unit != 0);
        if misaligned {
            return fail(
                rule,
                format!(
                    "MI64x8x16 loads through tensor maps: lda, ldb{} must be multiples of {unit} elements (16 bytes)",
                    if batched { " and the batch strides" } else { "" }
                ),
            );
        }
        if c.mt0 > 256 || c.mt1 > 256 {
            return fail(
                rule,
                "MI64x8x16 tensor-map boxes are at most 256 rows: MacroTile <= 256".into(),
            );
        }
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
        if !cols.is_multiple_of(64) || !rows.is_multiple_of(8) || rows > 256 {
            return fail(
                rule,
                format!(
                    "with SwapAB=1 the warpgroup tile {rows}x{cols} must have a multiple of 8 rows, at most 256, and a multiple of 64 columns"
                ),
            );
        }
    } else if !rows.is_multiple_of(64) || !cols.is_multiple_of(8) || cols > 256 {
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
