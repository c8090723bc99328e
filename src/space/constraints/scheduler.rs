//! Tile schedulers: how the output tiles and the K dimension are shared among workgroups
//! (data-parallel, the split-K kinds, stream-K's persistent workgroups). Mirrors the tile
//! scheduler part of the kernel template.
//!
//! Rules: `split-k` (every split keeps at least one DepthU iteration; stream-K's iteration
//! count, accumulators, threads, pipeline and workgroups per compute unit stay within what
//! its tile loop and fix-up handle) and `persistent` (what the persistent warpgroup kernel
//! and its tensor-map epilogue need).

use super::atom::is_wgmma;
use super::warpgroup::k_major_box_rows;
use super::{fail, tile_count, Violation};
use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// Most persistent workgroups per compute unit a stream-K kernel launches (GlobalSplitU with
/// GlobalSplitUAlgorithm 2): beyond what can be resident at once, more only adds fix-ups.
pub const MAX_STREAM_K_PER_CU: u32 = 4;
/// Most f32 accumulators per thread, and threads per workgroup, of a stream-K kernel (see the
/// `split-k` rule).
pub const MAX_STREAM_K_ACCUMULATORS: u32 = 64;
pub const MAX_STREAM_K_THREADS: u32 = 256;

/// `split-k`: split-K must leave every split at least one DepthU iteration; stream-K has
/// limits of its own.
pub(super) fn split_k(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let iters = (p.k as u64).div_ceil(c.depth_u as u64);
    if c.gsu_algo == GsuAlgo::StreamK {
        let tiles = tile_count(c, p);
        if tiles * iters >= 1 << 31 {
            return fail(
                "split-k",
                format!(
                    "stream-K counts its {} (tile, DepthU) iterations in 32 bits",
                    tiles * iters
                ),
            );
        }
        // The tile loop and the fix-up hold registers across the main loop: ptxas spills with
        // more than 64 accumulators per thread (128-row warpgroup tiles, sm_90a) and with 512
        // threads (128 registers each), so stream-K stays within both. The persistent kernel's
        // stream-K keeps its partials in registers and its registers are counted by the
        // `producer-warp` rule.
        let threads = c.threads(hw.wave_size).max(1);
        let acc = c.mt0 * c.mt1 / threads;
        if c.pk == 0 && (acc > MAX_STREAM_K_ACCUMULATORS || threads > MAX_STREAM_K_THREADS) {
            return fail(
                "split-k",
                format!(
                    "stream-K allows at most {MAX_STREAM_K_ACCUMULATORS} accumulators per thread and \
                     {MAX_STREAM_K_THREADS} threads, this config has {acc} and {threads}"
                ),
            );
        }
        if c.pgr < 2 {
            return fail(
                "split-k",
                "stream-K pipelines across tiles and needs PrefetchGlobalRead >= 2".into(),
            );
        }
        if c.gsu > MAX_STREAM_K_PER_CU {
            return fail(
                "split-k",
                format!(
                    "stream-K runs at most {MAX_STREAM_K_PER_CU} persistent workgroups per compute unit, not {}",
                    c.gsu
                ),
            );
        }
    } else if c.gsu as u64 > iters {
        return fail(
            "split-k",
            format!(
                "GlobalSplitU {} exceeds the {} DepthU iterations of K={}",
                c.gsu, iters, p.k
            ),
        );
    }
    Ok(())
}

/// `persistent`: PersistentKernel=1 is the warpgroup path with the producer warp (which loads
/// the next tile's operands while the warpgroups store the last), without split-K, storing
/// through a tensor map of D: D's rows and batches start on 16-byte boundaries and D is 16- or
/// 32-bit. Where beta reads C, C comes in through a tensor map into a tile laid out as D's:
/// C has D's type, and its rows and batches start on 16-byte boundaries too.
///
/// PersistentKernel=2 (ping-pong, `kernels/scheduler/gt_persistent.h`) runs two warpgroups that
/// each compute whole tiles in turn: WorkGroup 4x1 (one warpgroup per tile), unswapped, without
/// clusters, and beta 0 (each set stages D in an area of its own; C would need two more, and
/// read directly, [`super::persistent_c_direct`], a warpgroup's C took longer than the other's
/// tile: 128x128 on 8192x8192x1024 ran 854 us with beta 1 against 205 with beta 0, H200).
///
/// PersistentKernel=1 with stream-K (`GSU1S`: one workgroup per compute unit) shares the
/// (tile, K tile) units evenly among the clusters (`kernels/scheduler/gt_tile_walk.h`); its
/// split tiles are summed from the accumulator registers, and it stores D only (beta 0: the
/// C tiles of the whole-tile walk load ahead by tile, which a split tile's last contributor
/// cannot know, and C read directly waits out its round trips with no other tile to hide
/// them).
pub(super) fn persistent(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    let rule = "persistent";
    match c.pk {
        0 => return Ok(()),
        1 => {}
        2 => {
            if c.wg != [4, 1] || c.sab != 0 || c.cn > 1 || c.cm > 1 || p.beta != 0.0 {
                return fail(
                    rule,
                    "PersistentKernel=2 (ping-pong) takes one warpgroup per tile (WorkGroup 4x1), unswapped, without clusters, and beta 0".into(),
                );
            }
        }
        v => return fail(rule, format!("PersistentKernel is 0, 1 or 2, not {v}")),
    }
    if !is_wgmma(c) || c.pw == 0 {
        return fail(
            rule,
            format!("PersistentKernel={} runs the warpgroup path with its producer warp or warpgroup: MI64x8x16/MI64x8x32/MI64x8x8 and ProducerWarp=1 or 2", c.pk),
        );
    }
    if c.gsu_algo == GsuAlgo::StreamK {
        if c.pk != 1 || c.gsu != 1 || p.beta != 0.0 {
            return fail(
                rule,
                format!(
                    "stream-K in the persistent kernel is PersistentKernel=1 with GSU1S (one workgroup per compute unit) and beta 0: PersistentKernel={} GSU{}S beta {}",
                    c.pk, c.gsu, p.beta
                ),
            );
        }
        // A split tile's parts pass through the staging area of one column group, at least
        // one 16-byte vector per computing thread at a time (epilogue/gt_fixup.h). Warps of
        // 32: the persistent kernel is NVIDIA's.
        let area = super::lds_layout::persistent_group_bytes(c, p);
        let threads = c.threads(32) as u64;
        if area < threads * 16 {
            return fail(
                rule,
                format!(
                    "stream-K in the persistent kernel adds split tiles' parts through the staging area, 16 bytes per computing thread at a time: {area} bytes for {threads} threads"
                ),
            );
        }
    } else if c.gsu > 1 {
        return fail(
            rule,
            format!(
                "PersistentKernel={} takes whole tiles: GlobalSplitU=1 (stream-K is GSU1S)",
                c.pk
            ),
        );
    }
    let ed = p.d_type.bytes() as i64;
    let unit = 16 / ed.max(1);
    // The output boxes are 128 bytes of M; a tile of another height (SwapAB takes M tiles in
    // steps of 16) stores its last, partial chunk with the consumers' own 16-byte stores
    // (kernels/epilogue/gt_epilogue_tma.h), so its rows must be whole 16-byte vectors.
    if c.mt0 as i64 % unit != 0 {
        return fail(
            rule,
            format!(
                "PersistentKernel=1 stores D's rows in 16-byte vectors: MacroTile0 {} is not a multiple of {unit}",
                c.mt0
            ),
        );
    }
    if !d_fits_output_boxes(c, p) {
        return fail(
            rule,
            format!(
                "PersistentKernel=1 stores D through a tensor map: a 16- or 32-bit D whose ldd and batch stride are multiples of {unit} elements, MacroTile1 in equal boxes of at most 256 rows"
            ),
        );
    }
    Ok(())
}

/// Whether D can go out through the output tensor map (kernels/epilogue/gt_epilogue_tma.h): a
/// 16- or 32-bit D whose ldd and batch stride are multiples of a 16-byte vector, and
/// MacroTile1 in equal boxes of at most 256 rows. The persistent kernel's rule and the
/// data-parallel kernel's tensor-map stores (`epilogue::stores_d_by_tensor_map`) both ask it.
pub(super) fn d_fits_output_boxes(c: &KernelConfig, p: &GemmProblem) -> bool {
    let unit = 16 / p.d_type.bytes().max(1) as i64;
    !p.d_type.is_8bit()
        && p.ldd % unit == 0
        && (p.batch <= 1 || p.stride_d % unit == 0)
        && k_major_box_rows(c.mt1).is_some()
}
