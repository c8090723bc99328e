//! Source generation: a [`KernelConfig`] and a problem become one HIP C++ translation unit
//! (the template in `kernels/` specialised by `#define`s) plus the [`LaunchPlan`] to run it.
//!
//! The kernel files are embedded at build time and their quoted `#include`s are expanded here
//! ([`expand_includes`]), so a runtime compiler (NVRTC, hiprtc) needs no include path, while
//! nvcc/hipcc can compile the same files from disk with `-I kernels`. Their hash is part of
//! every cache and database key ([`template_hash`]). [`defines`] is the specialisation alone:
//! build.rs compiles the default kernel set from those blocks (`kernels/default_set.txt`).
//! It is composed of one small function per kernel part (the kernel and its target, operand
//! types, shape, atom, mainloop, LDS layout, loader, tile scheduler, epilogue, warpgroup
//! extras: `PARTS`), grouped like the space's rules (`space::constraints`), so a new part
//! brings its defines in one place.
//! For the warpgroup instruction (MI 64x8x16, 64x8x32 for 8-bit types) the specialisation also
//! carries the one device function whose shape depends on the config: the `wgmma` of the
//! warpgroup tile's N, operand types and majorness ([`wgmma_function`]), whose inline assembly
//! needs one operand per accumulator register.

use sha2::{Digest, Sha256};

use super::{EpiloguePlan, LaunchPlan, PackPlan, Target, TmaBox};
use crate::hw::Vendor;
use crate::plant::PlantKind;
use crate::problem::{DataType, GemmProblem};
use crate::space::constraints::{
    is_wgmma, k_major_box_rows, mn_chunk, mn_packed_operands, mn_packed_problem, packed_operands,
    persistent_store_columns, warpgroup_tile, MAX_GRID_YZ,
};
use crate::space::{GsuAlgo, KernelConfig};

/// The kernel sources, embedded at build time.
pub const ARGS_HEADER: &str = include_str!("../../kernels/gt_args.h");
pub const PLATFORM_HEADER: &str = include_str!("../../kernels/gt_platform.h");
pub const GEMM_TEMPLATE: &str = include_str!("../../kernels/gemm.hip");
pub const REFERENCE_KERNEL: &str = include_str!("../../kernels/reference.hip");

/// Kernel files a quoted `#include` may name, by their path under `kernels/` (the include
/// path nvcc and hipcc get). A file missing here is left as an `#include` line: fine inside a
/// branch the preprocessor skips, a clear compiler error otherwise. A test checks that every
/// file in `kernels/` is listed.
pub const KERNEL_FILES: &[(&str, &str)] = &[
    ("gt_args.h", ARGS_HEADER),
    ("gt_platform.h", PLATFORM_HEADER),
    ("gt_fp8.h", include_str!("../../kernels/gt_fp8.h")),
    ("gt_config.h", include_str!("../../kernels/gt_config.h")),
    ("gt_plant.h", include_str!("../../kernels/gt_plant.h")),
    ("atom/gt_mma.h", include_str!("../../kernels/atom/gt_mma.h")),
    (
        "atom/gt_mma_nvidia.h",
        include_str!("../../kernels/atom/gt_mma_nvidia.h"),
    ),
    (
        "atom/gt_mma_amd.h",
        include_str!("../../kernels/atom/gt_mma_amd.h"),
    ),
    (
        "atom/gt_sm90.h",
        include_str!("../../kernels/atom/gt_sm90.h"),
    ),
    (
        "layout/gt_lds_tile.h",
        include_str!("../../kernels/layout/gt_lds_tile.h"),
    ),
    (
        "layout/gt_kpack_tile.h",
        include_str!("../../kernels/layout/gt_kpack_tile.h"),
    ),
    (
        "layout/gt_wgmma_tile.h",
        include_str!("../../kernels/layout/gt_wgmma_tile.h"),
    ),
    (
        "layout/gt_gemv_view.h",
        include_str!("../../kernels/layout/gt_gemv_view.h"),
    ),
    (
        "layout/gt_cluster_layout.h",
        include_str!("../../kernels/layout/gt_cluster_layout.h"),
    ),
    (
        "layout/gt_flat_tile.h",
        include_str!("../../kernels/layout/gt_flat_tile.h"),
    ),
    (
        "loader/gt_ring_pos.h",
        include_str!("../../kernels/loader/gt_ring_pos.h"),
    ),
    (
        "loader/gt_vector_loader.h",
        include_str!("../../kernels/loader/gt_vector_loader.h"),
    ),
    (
        "loader/gt_register_loader.h",
        include_str!("../../kernels/loader/gt_register_loader.h"),
    ),
    (
        "loader/gt_transpose_loader.h",
        include_str!("../../kernels/loader/gt_transpose_loader.h"),
    ),
    (
        "loader/gt_kpack_loader.h",
        include_str!("../../kernels/loader/gt_kpack_loader.h"),
    ),
    (
        "loader/gt_pack_kernel.h",
        include_str!("../../kernels/loader/gt_pack_kernel.h"),
    ),
    (
        "loader/gt_flat_copy.h",
        include_str!("../../kernels/loader/gt_flat_copy.h"),
    ),
    (
        "loader/gt_flat_scatter.h",
        include_str!("../../kernels/loader/gt_flat_scatter.h"),
    ),
    (
        "loader/gt_flat_stage.h",
        include_str!("../../kernels/loader/gt_flat_stage.h"),
    ),
    (
        "loader/gt_tma_loader.h",
        include_str!("../../kernels/loader/gt_tma_loader.h"),
    ),
    (
        "loader/gt_free_slots.h",
        include_str!("../../kernels/loader/gt_free_slots.h"),
    ),
    (
        "mainloop/gt_producer_registers.h",
        include_str!("../../kernels/mainloop/gt_producer_registers.h"),
    ),
    (
        "mainloop/gt_warp_mma.h",
        include_str!("../../kernels/mainloop/gt_warp_mma.h"),
    ),
    (
        "mainloop/gt_fma.h",
        include_str!("../../kernels/mainloop/gt_fma.h"),
    ),
    (
        "mainloop/gt_mainloop_lds.h",
        include_str!("../../kernels/mainloop/gt_mainloop_lds.h"),
    ),
    (
        "mainloop/gt_gemv.h",
        include_str!("../../kernels/mainloop/gt_gemv.h"),
    ),
    (
        "mainloop/gt_flat_batch.h",
        include_str!("../../kernels/mainloop/gt_flat_batch.h"),
    ),
    (
        "mainloop/gt_flat_batch_mma.h",
        include_str!("../../kernels/mainloop/gt_flat_batch_mma.h"),
    ),
    (
        "mainloop/gt_gemv_mma.h",
        include_str!("../../kernels/mainloop/gt_gemv_mma.h"),
    ),
    (
        "mainloop/gt_wgmma.h",
        include_str!("../../kernels/mainloop/gt_wgmma.h"),
    ),
    (
        "mainloop/gt_mainloop_wgmma.h",
        include_str!("../../kernels/mainloop/gt_mainloop_wgmma.h"),
    ),
    (
        "mainloop/gt_mainloop_wgmma_ws.h",
        include_str!("../../kernels/mainloop/gt_mainloop_wgmma_ws.h"),
    ),
    (
        "scheduler/gt_tile_map.h",
        include_str!("../../kernels/scheduler/gt_tile_map.h"),
    ),
    (
        "scheduler/gt_data_parallel.h",
        include_str!("../../kernels/scheduler/gt_data_parallel.h"),
    ),
    (
        "scheduler/gt_gemv_rows.h",
        include_str!("../../kernels/scheduler/gt_gemv_rows.h"),
    ),
    (
        "scheduler/gt_flat_batches.h",
        include_str!("../../kernels/scheduler/gt_flat_batches.h"),
    ),
    (
        "scheduler/gt_flat_batches_staged.h",
        include_str!("../../kernels/scheduler/gt_flat_batches_staged.h"),
    ),
    (
        "scheduler/gt_stream_k.h",
        include_str!("../../kernels/scheduler/gt_stream_k.h"),
    ),
    (
        "scheduler/gt_tile_walk.h",
        include_str!("../../kernels/scheduler/gt_tile_walk.h"),
    ),
    (
        "scheduler/gt_persistent.h",
        include_str!("../../kernels/scheduler/gt_persistent.h"),
    ),
    (
        "epilogue/gt_epilogue.h",
        include_str!("../../kernels/epilogue/gt_epilogue.h"),
    ),
    (
        "epilogue/gt_c_direct.h",
        include_str!("../../kernels/epilogue/gt_c_direct.h"),
    ),
    (
        "epilogue/gt_c_ring.h",
        include_str!("../../kernels/epilogue/gt_c_ring.h"),
    ),
    (
        "epilogue/gt_out_staging.h",
        include_str!("../../kernels/epilogue/gt_out_staging.h"),
    ),
    (
        "epilogue/gt_epilogue_tma.h",
        include_str!("../../kernels/epilogue/gt_epilogue_tma.h"),
    ),
    (
        "epilogue/gt_fixup.h",
        include_str!("../../kernels/epilogue/gt_fixup.h"),
    ),
    (
        "epilogue/gt_reduce_kernel.h",
        include_str!("../../kernels/epilogue/gt_reduce_kernel.h"),
    ),
    (
        "epilogue/gt_flat_store.h",
        include_str!("../../kernels/epilogue/gt_flat_store.h"),
    ),
    ("gemm.hip", GEMM_TEMPLATE),
    ("reference.hip", REFERENCE_KERNEL),
];

/// Expands `#include "file"` lines naming [`KERNEL_FILES`] recursively, each file once (they
/// all start with `#pragma once`, which is dropped: it is meaningless in a single buffer).
pub fn expand_includes(root: &str) -> String {
    fn walk(text: &str, seen: &mut Vec<&'static str>, out: &mut String) {
        for line in text.lines() {
            let t = line.trim();
            if t == "#pragma once" {
                continue;
            }
            let quoted = t
                .strip_prefix("#include")
                .map(str::trim)
                .and_then(|r| r.strip_prefix('"'))
                .and_then(|r| r.split('"').next());
            if let Some(name) = quoted {
                if let Some((file, body)) = KERNEL_FILES.iter().find(|(f, _)| *f == name) {
                    if !seen.contains(file) {
                        seen.push(file);
                        walk(body, seen, out);
                    }
                    continue;
                }
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    let mut out = String::new();
    walk(root, &mut Vec::new(), &mut out);
    out
}

/// Generated source ready for a compiler.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSource {
    pub name: String,
    /// The `#define GT_*` block alone (what distinguishes this kernel from another).
    pub defines: String,
    /// The whole translation unit: defines followed by the expanded template.
    pub text: String,
    pub launch: LaunchPlan,
}

/// Hash of every kernel source file: changes whenever the template changes.
pub fn template_hash() -> String {
    let mut h = Sha256::new();
    for (_, part) in KERNEL_FILES {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex(&h.finalize()[..8])
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The C type name the template uses for an element type.
pub fn c_type(t: DataType) -> &'static str {
    match t {
        DataType::Bf16 => "gt_bf16",
        DataType::F16 => "gt_f16",
        DataType::F32 => "float",
        DataType::F8 => "gt_fp8_e4m3",
        DataType::Bf8 => "gt_fp8_e5m2",
    }
}

/// The problem a config's main kernel reads: `p` with the operands it packs first replaced
/// by their packed copies: K-major with aligned rows on the warpgroup path, M- or N-major on
/// the FMA path (PackMNMajor).
pub fn kernel_problem(cfg: &KernelConfig, p: &GemmProblem) -> GemmProblem {
    let [a, b] = packed_operands(cfg, p);
    if a || b {
        p.with_packed(a, b)
    } else {
        mn_packed_problem(cfg, p).into_owned()
    }
}

/// The packing launches of a config (kernels/loader/gt_pack_kernel.h), placed in the
/// workspace from `offset` on (256-byte aligned).
fn pack_plans(cfg: &KernelConfig, p: &GemmProblem, offset: u64) -> Vec<PackPlan> {
    let [k_a, k_b] = packed_operands(cfg, p);
    let [mn_a, mn_b] = mn_packed_operands(cfg, p);
    let packed = kernel_problem(cfg, p);
    let mut at = offset.next_multiple_of(256);
    let mut plans = Vec::new();
    for (is_a, k_major, mn_major) in [(true, k_a, mn_a), (false, k_b, mn_b)] {
        if !k_major && !mn_major {
            continue;
        }
        let (rows, t, ld, stride) = if is_a {
            (p.m, p.a_type, packed.lda, packed.stride_a)
        } else {
            (p.n, p.b_type, packed.ldb, packed.stride_b)
        };
        // Rows of the copy times its leading dimension: rows x K rounded up K-major, K x rows
        // rounded up MN-major.
        let lines = if mn_major { p.k } else { rows };
        let bytes = (lines * ld * p.batch * t.bytes() as i64) as u64;
        // The grids of gt_pack_kernel.h: a K-major source copied K-major moves one 16-byte
        // vector per thread, 8 rows per block; the transposing copies move 32 x 32 tiles,
        // along K by rows for an M- or N-major source, along the rows by K for a copy made
        // MN-major.
        let grid = if mn_major {
            [(rows as u64).div_ceil(32), (p.k as u64).div_ceil(32)]
        } else if p.k_contiguous(is_a) {
            let vectors = ld as u64 / (16 / t.bytes().max(1)) as u64;
            [vectors.div_ceil(32), (rows as u64).div_ceil(8)]
        } else {
            [(p.k as u64).div_ceil(32), (rows as u64).div_ceil(32)]
        };
        // Block rows past a grid's 65535 are taken by the blocks in strides (gt_pack_operand);
        // batches past it are the launch-grid rule's (constraints/launch_grid.rs).
        let rows_y = grid[1].min(crate::space::constraints::MAX_GRID_YZ as u64);
        plans.push(PackPlan {
            is_a,
            symbol: format!("{}_pack_{}", cfg.name(), if is_a { 'a' } else { 'b' }),
            grid: [grid[0] as u32, rows_y as u32, p.batch as u32],
            block: [32, 8, 1],
            workspace_offset: at,
            bytes,
            mn_major,
            ld,
            stride,
        });
        at = (at + bytes).next_multiple_of(256);
    }
    plans
}

/// The launch geometry of a config for a problem.
pub fn launch_plan(cfg: &KernelConfig, p: &GemmProblem, target: &Target) -> LaunchPlan {
    let mut plan = main_launch_plan(cfg, &kernel_problem(cfg, p), target);
    plan.packs = pack_plans(cfg, p, plan.workspace_bytes);
    plan
}

/// The launch geometry of the main kernel (and its reduction) for the problem it reads.
fn main_launch_plan(cfg: &KernelConfig, p: &GemmProblem, target: &Target) -> LaunchPlan {
    let wave = wave_size(target);
    // A GEMV takes row blocks of the problem it computes (along N with SwapAB: the
    // transposed one's, N in MacroTile0's).
    let rows = if cfg.gv > 0 {
        crate::space::constraints::gemv_problem(cfg, p)
    } else {
        std::borrow::Cow::Borrowed(p)
    };
    let tiles_m = (rows.m as u64).div_ceil(cfg.mt0 as u64);
    let tiles_n = (rows.n as u64).div_ceil(cfg.mt1 as u64);
    let block = [cfg.launch_threads(wave), 1, 1];
    let shared_bytes = crate::space::constraints::lds_bytes(cfg, p) as u32;
    let tma = uses_tma(cfg, target).then(|| tma_boxes(cfg, p));
    let tiles = tiles_m * tiles_n * p.batch as u64;
    if cfg.fb > 0 {
        // A batch a group of waves, WavesM groups a workgroup, along x
        // (scheduler/gt_flat_batches.h). The staged form walks the batches over as many
        // workgroups as run at once (the backend clamps a persistent grid to that:
        // LaunchPlan::grid_at_once), a batch each at most.
        return LaunchPlan {
            symbol: cfg.name(),
            grid: [(p.batch.max(1) as u32).div_ceil(cfg.wg[0].max(1)), 1, 1],
            block,
            shared_bytes,
            workspace_bytes: 0,
            zero_workspace: false,
            flags_bytes: 0,
            tma: None,
            tma_c: None,
            tma_d: None,
            persistent: cfg.fb == 2,
            epilogue: None,
            packs: Vec::new(),
        };
    }
    if cfg.pk > 0 {
        // One workgroup per compute unit (the LDS holds one), walking the tiles; its output
        // tiles go out through a tensor map of D; where beta reads C through LDS, C comes in
        // through a tensor map of C in the same boxes.
        let out_box = output_box(cfg, p);
        // Stream-K: two f32 part slots per workgroup (each cluster's first and last part of
        // a tile) and a flag per tile (scheduler/gt_tile_walk.h, epilogue/gt_fixup.h's
        // GtRegisterPartials).
        let grid = persistent_grid(cfg, tiles, p, target);
        let (workspace_bytes, flags_bytes) = if cfg.gsu_algo == GsuAlgo::StreamK {
            (grid as u64 * 2 * staged_tile_bytes(cfg), tiles * 4)
        } else {
            (0, 0)
        };
        return LaunchPlan {
            symbol: cfg.name(),
            // Whole clusters: the tiles come in groups of ClusterN (constraints::cluster).
            grid: [grid, 1, 1],
            block,
            shared_bytes,
            workspace_bytes,
            zero_workspace: false,
            flags_bytes,
            tma,
            tma_c: c_map_box(cfg, p, target, out_box),
            tma_d: Some(out_box),
            persistent: true,
            epilogue: None,
            packs: Vec::new(),
        };
    }
    if cfg.gsu_algo == GsuAlgo::StreamK {
        let work = tiles * (p.k as u64).div_ceil(cfg.depth_u as u64);
        let grid = stream_k_grid(cfg.gsu, target.compute_units, tiles, work);
        return LaunchPlan {
            symbol: cfg.name(),
            grid: [grid as u32, 1, 1],
            block,
            shared_bytes,
            workspace_bytes: grid * 2 * staged_tile_bytes(cfg),
            zero_workspace: false,
            flags_bytes: tiles * 4,
            tma,
            tma_d: None,
            tma_c: None,
            persistent: false,
            epilogue: None,
            packs: Vec::new(),
        };
    }
    let mn = (p.m * p.n * p.batch) as u64;
    let (workspace_bytes, zero_workspace) = match (cfg.gsu > 1, cfg.gsu_algo) {
        (false, _) => (0, false),
        (true, GsuAlgo::Atomic) => (mn * 4, true),
        // One f32 partial tile per (tile, split), in the staging tile's own layout.
        (true, GsuAlgo::SingleKernel) => (tiles * cfg.gsu as u64 * staged_tile_bytes(cfg), false),
        (true, _) => (mn * 4 * cfg.gsu as u64, false),
    };
    let epilogue = cfg
        .has_reduction_kernel()
        .then(|| split_k_epilogue_plan(cfg, p));
    // Batches past a grid's 65535 layers fold into y, GSU splits a layer (gt_split_and_batch,
    // kernels/scheduler/gt_tile_map.h; the launch-grid rule keeps the reduction kernel, whose
    // grid they would not fit, away from them). Many short batches a wave each take WavesM
    // batches a workgroup (constraints::gemv_wave_batches).
    let groups = if crate::space::constraints::gemv_wave_batches(cfg, p, wave) {
        (p.batch.max(1) as u32).div_ceil(cfg.wg[0].max(1))
    } else {
        p.batch.max(1) as u32
    };
    let batch_z = groups.min(MAX_GRID_YZ as u32);
    let layers = groups.div_ceil(batch_z);
    let by_map = crate::space::constraints::stores_d_by_tensor_map(cfg, p);
    LaunchPlan {
        symbol: cfg.name(),
        grid: [(tiles_m * tiles_n) as u32, cfg.gsu * layers, batch_z],
        block,
        shared_bytes,
        workspace_bytes,
        zero_workspace,
        // The in-kernel sum counts the finished splits of each tile in a flag.
        flags_bytes: if cfg.sums_splits_in_kernel() {
            tiles * 4
        } else {
            0
        },
        tma,
        // Whole tiles stored as the persistent kernel stores them, where D allows it, C (where
        // beta reads it) loaded into them in the same boxes.
        tma_d: by_map.then(|| output_box(cfg, p)),
        tma_c: (by_map && p.beta != 0.0).then(|| output_box(cfg, p)),
        persistent: false,
        epilogue,
        packs: Vec::new(),
    }
}

/// The boxes of the persistent kernel's tensor map of C, where it has one: `out_box` where C
/// comes through LDS of its own; through the operand ring, boxes of one column group; where C
/// is read directly and the L2 fetches it ahead (`constraints::persistent_c_prefetch`),
/// unswizzled boxes of the tile's rows by `C_PREFETCH_COLUMNS` (they land in L2, not in LDS).
fn c_map_box(
    cfg: &KernelConfig,
    p: &GemmProblem,
    target: &Target,
    out_box: TmaBox,
) -> Option<TmaBox> {
    use crate::space::constraints::{
        persistent_c_direct, persistent_c_prefetch, persistent_c_steps, C_PREFETCH_COLUMNS,
        C_RING_COLUMNS,
    };
    if p.beta == 0.0 {
        None
    } else if persistent_c_steps(cfg, p) > 0 {
        // Through the operand ring: a 128-byte chunk of M by a column group, laid out as the
        // staging area's tiles.
        Some(TmaBox {
            k_major: false,
            inner: 128 / p.c_type.bytes() as u32,
            outer: C_RING_COLUMNS,
            swizzle_bytes: 128,
        })
    } else if !persistent_c_direct(cfg, p) {
        Some(out_box)
    } else {
        persistent_c_prefetch(cfg, p, target.compute_units).then_some(TmaBox {
            k_major: false,
            inner: cfg.mt0,
            outer: C_PREFETCH_COLUMNS.min(cfg.mt1),
            swizzle_bytes: 0,
        })
    }
}

/// The boxes in which the warpgroup kernels' output tiles go out through a tensor map of D
/// (kernels/epilogue/gt_epilogue_tma.h): 128 bytes of M by a column group of at most 256
/// columns.
fn output_box(cfg: &KernelConfig, p: &GemmProblem) -> TmaBox {
    let chunk = 128 / p.d_type.bytes() as u32;
    let cols = persistent_store_columns(cfg, p);
    TmaBox {
        k_major: false,
        inner: chunk,
        outer: k_major_box_rows(cols).unwrap_or(cols),
        swizzle_bytes: 128,
    }
}

/// The split-K epilogue's launch (kernels/epilogue/gt_reduce_kernel.h): 256 threads, each
/// summing 4 consecutive rows of one column; a block's threads cover the column's rows (up to
/// 1024) and as many columns as the rest of its threads take, so that short columns still fill
/// the block (one column per block left 192 of 256 threads idle at M = 256, and the reduction
/// ran at a tenth of the memory's rate). Column groups past the grid's 65535 rows loop in the
/// kernel. Where the columns leave threads over and the slices are many (a dot product split
/// 128 ways), the block's third dimension shares the slices instead, eight a thread at least
/// (one batch of loads in flight), up to 16 lanes of one wave whose partial sums the kernel
/// adds by shuffles.
fn split_k_epilogue_plan(cfg: &KernelConfig, p: &GemmProblem) -> EpiloguePlan {
    const THREADS: u64 = 256;
    const ROWS_PER_THREAD: u64 = 4;
    const SLICES_PER_THREAD: u64 = 8;
    // The sharing lanes meet by shuffles within one wave (kernels/epilogue/gt_reduce_kernel.h).
    const MOST_SHARING: u64 = 16;
    let along_m = (p.m as u64)
        .div_ceil(ROWS_PER_THREAD)
        .next_power_of_two()
        .clamp(1, THREADS);
    let mut columns = THREADS / along_m;
    let slices = if cfg.gsu_algo == GsuAlgo::Reduce {
        cfg.gsu as u64
    } else {
        1
    };
    let spare = columns / (p.n.max(1) as u64).next_power_of_two();
    let sharing = spare.min(slices / SLICES_PER_THREAD).clamp(1, MOST_SHARING);
    let sharing = 1 << sharing.ilog2();
    columns /= sharing;
    EpiloguePlan {
        symbol: format!("{}_epilogue", cfg.name()),
        grid: [
            (p.m as u64)
                .div_ceil(along_m * ROWS_PER_THREAD)
                .min(u32::MAX as u64) as u32,
            (p.n as u64).div_ceil(columns).clamp(1, 65535) as u32,
            p.batch.max(1) as u32,
        ],
        block: [along_m as u32, columns as u32, sharing as u32],
    }
}

/// Workgroups of a persistent launch: one per compute unit, never more than there are tiles,
/// in whole clusters of ClusterN (ClusterM). With stream-K, clusters share the (tile group,
/// K tile) units as [`stream_k_grid`] shares them among workgroups.
fn persistent_grid(cfg: &KernelConfig, tiles: u64, p: &GemmProblem, target: &Target) -> u32 {
    let cn = (cfg.cn.max(1) * cfg.cm.max(1)) as u64;
    if cfg.gsu_algo == GsuAlgo::StreamK {
        let groups = tiles / cn;
        let work = groups * (p.k as u64).div_ceil(cfg.depth_u as u64);
        let clusters = stream_k_grid(1, target.compute_units / cn as u32, groups, work);
        return (clusters * cn) as u32;
    }
    let units = (target.compute_units.max(1) as u64 / cn * cn).max(cn);
    tiles.min(units) as u32
}

/// Lanes per wave (warp) on the target's vendor.
fn wave_size(target: &Target) -> u32 {
    match target.vendor {
        Vendor::Nvidia => 32,
        Vendor::Amd => 64,
    }
}

/// Bytes of one f32 output tile as a workgroup stages it (a partial tile in the workspace).
fn staged_tile_bytes(cfg: &KernelConfig) -> u64 {
    cfg.mt0 as u64 * cfg.mt1 as u64 * 4
}

/// Whether a kernel loads its operand tiles through the tensor memory accelerator: the
/// warpgroup path (NVIDIA sm_90a), whose swizzled tiles are exactly what tensor maps with the
/// same swizzle write.
pub fn uses_tma(cfg: &KernelConfig, target: &Target) -> bool {
    target.vendor == Vendor::Nvidia && is_wgmma(cfg)
}

/// The tensor-map boxes of A and B for a warpgroup kernel.
pub fn tma_boxes(cfg: &KernelConfig, p: &GemmProblem) -> [TmaBox; 2] {
    let du = cfg.depth_u;
    let boxes = |is_a: bool, t: DataType, rows: u32| match mn_chunk(cfg, p, is_a) {
        // Rows of 128 bytes of K, as many rows as the tile has, in boxes of at most 256.
        None => TmaBox {
            k_major: true,
            inner: 128 / t.bytes() as u32,
            outer: k_major_box_rows(rows).unwrap_or(rows),
            swizzle_bytes: 128,
        },
        // Rows of one chunk along M or N, one row per k of the stage.
        Some(chunk) => TmaBox {
            k_major: false,
            inner: chunk,
            outer: du,
            swizzle_bytes: chunk * t.bytes() as u32,
        },
    };
    let mut a = boxes(true, p.a_type, cfg.mt0);
    let mut b = boxes(false, p.b_type, cfg.mt1);
    // In a cluster sharing A (B) each workgroup loads a 1/ClusterN (1/ClusterM) slice of every
    // box of a K-major tile, and of an M- or N-major one whose chunks do not divide among the
    // sharers (kernels/loader/gt_tma_loader.h, constraints::cluster).
    let slice = |bx: &mut TmaBox, rows: u32, sharers: u32| {
        if sharers > 1 && (bx.k_major || !rows.div_ceil(bx.inner).is_multiple_of(sharers)) {
            bx.outer /= sharers;
        }
    };
    slice(&mut a, cfg.mt0, cfg.cn.max(1));
    slice(&mut b, cfg.mt1, cfg.cm.max(1));
    [a, b]
}

/// Workgroups of a stream-K launch: GSU per compute unit, never more than there are (tile, K
/// tile) iterations. When the tiles are fewer than that and a whole number of workgroups per
/// tile still fills 90% of it, the grid is that multiple of the tile count instead: every
/// workgroup then works on one tile, in one piece (one pipeline fill, one fix-up), which
/// measured faster than an even spread across tile boundaries on small shapes (4096x128x4096,
/// H200). Each workgroup needs two partial-tile slots of f32 (see GtStreamK in the template).
pub fn stream_k_grid(per_cu: u32, compute_units: u32, tiles: u64, work: u64) -> u64 {
    let slots = per_cu.max(1) as u64 * compute_units.max(1) as u64;
    let per_tile = slots / tiles.max(1);
    let grid = if per_tile >= 1 && tiles * per_tile * 10 >= slots * 9 {
        tiles * per_tile
    } else {
        slots
    };
    grid.min(work).clamp(1, u32::MAX as u64)
}

/// The `#define GT_*` lines that specialise the template for one config and problem (for
/// MI 64x8x16 followed by the generated [`wgmma_function`]). They depend on the problem's
/// layout, types and `beta == 0`, never on M, N or K (those are arguments), so one compiled
/// kernel serves every shape with the same layout and types.
///
/// Each kernel part adds the defines its header reads (`PARTS`); the lines then follow
/// `DEFINE_ORDER`.
pub fn defines(cfg: &KernelConfig, stored: &GemmProblem, target: &Target) -> String {
    let cfg = cfg.canonical();
    let spec = PartSpec {
        p: &kernel_problem(&cfg, stored),
        stored,
        cfg,
        target,
    };
    let mut block = DefineBlock::default();
    for part in PARTS {
        part(&spec, &mut block);
    }
    block.text()
}

/// What every part's defines are made from.
struct PartSpec<'a> {
    /// Canonical (the split algorithm is `Reduce` without a split).
    cfg: KernelConfig,
    /// The problem the main kernel reads: packed operands as copied (`kernel_problem`).
    p: &'a GemmProblem,
    /// The problem as stored, which the packers read.
    stored: &'a GemmProblem,
    target: &'a Target,
}

/// The define block as the parts build it: `#define` lines, then device code.
#[derive(Default)]
struct DefineBlock {
    defines: Vec<(&'static str, String)>,
    code: String,
}

impl DefineBlock {
    fn def(&mut self, name: &'static str, value: impl ToString) {
        self.defines.push((name, value.to_string()));
    }

    /// A switch the template reads as 0 or 1.
    fn flag(&mut self, name: &'static str, on: bool) {
        self.def(name, u8::from(on));
    }

    fn text(mut self) -> String {
        let rank = |name: &str| DEFINE_ORDER.iter().position(|n| *n == name);
        // Stable: defines not in the list keep the order of the parts, after the listed ones.
        self.defines
            .sort_by_key(|(name, _)| rank(name).unwrap_or(usize::MAX));
        let mut out = String::new();
        for (name, value) in &self.defines {
            out.push_str(&format!("#define {name} {value}\n"));
        }
        out + &self.code
    }
}

/// The kernel's parts, each adding the defines of its part of the template; a new part adds
/// its function here.
const PARTS: &[fn(&PartSpec, &mut DefineBlock)] = &[
    kernel_defines,
    operand_defines,
    shape_defines,
    atom_defines,
    mainloop_defines,
    lds_layout_defines,
    loader_defines,
    scheduler_defines,
    epilogue_defines,
    warpgroup_defines,
    pack_defines,
];

/// The order of the lines of a define block. The block is part of every compile-cache key
/// and of the default set's lookup (`kernels/default_set.txt`), so these lines keep the order
/// they have always had; a define not listed follows them.
const DEFINE_ORDER: &[&str] = &[
    "GT_KERNEL_NAME",
    "GT_TARGET_ARCH",
    "GT_VENDOR_AMD",
    "GT_TYPE_A",
    "GT_TYPE_B",
    "GT_TYPE_C",
    "GT_TYPE_D",
    "GT_TRANS_A",
    "GT_TRANS_B",
    "GT_MT0",
    "GT_MT1",
    "GT_DU",
    "GT_MI_M",
    "GT_MI_N",
    "GT_MI_K",
    "GT_WG0",
    "GT_WG1",
    "GT_THREADS",
    "GT_PGR",
    "GT_PLR",
    "GT_LPA",
    "GT_LPB",
    "GT_SWIZZLE",
    "GT_GSU",
    "GT_STREAM_K",
    "GT_GSU_ATOMIC",
    "GT_GSU_SINGLE_KERNEL",
    "GT_WGM",
    "GT_GRVW",
    "GT_SVW",
    "GT_SU",
    "GT_BETA_ZERO",
    "GT_WGMMA",
    "GT_WGMMA_N",
    "GT_PRODUCER_WARP",
    "GT_SWAP_AB",
];

/// The kernel's symbol and what it is compiled for.
fn kernel_defines(s: &PartSpec, b: &mut DefineBlock) {
    b.def("GT_KERNEL_NAME", s.cfg.name());
    b.def("GT_TARGET_ARCH", format!("\"{}\"", s.target.arch));
    b.flag("GT_VENDOR_AMD", s.target.vendor == Vendor::Amd);
}

/// The operands' element types and layouts (from the problem).
fn operand_defines(s: &PartSpec, b: &mut DefineBlock) {
    b.def("GT_TYPE_A", c_type(s.p.a_type));
    b.def("GT_TYPE_B", c_type(s.p.b_type));
    b.def("GT_TYPE_C", c_type(s.p.c_type));
    b.def("GT_TYPE_D", c_type(s.p.d_type));
    b.flag("GT_TRANS_A", s.p.trans_a.is_t());
    b.flag("GT_TRANS_B", s.p.trans_b.is_t());
}

/// The workgroup's shape: macro tile, DepthU, waves and threads (`constraints::shape`).
fn shape_defines(s: &PartSpec, b: &mut DefineBlock) {
    let c = &s.cfg;
    b.def("GT_MT0", c.mt0);
    b.def("GT_MT1", c.mt1);
    b.def("GT_DU", c.depth_u);
    b.def("GT_WG0", c.wg[0]);
    b.def("GT_WG1", c.wg[1]);
    b.def("GT_THREADS", c.threads(wave_size(s.target)));
}

/// The matrix atom: the instruction's shape, 1x1x1 for FMA (`constraints::atom`).
fn atom_defines(s: &PartSpec, b: &mut DefineBlock) {
    b.def("GT_MI_M", s.cfg.mi[0]);
    b.def("GT_MI_N", s.cfg.mi[1]);
    b.def("GT_MI_K", s.cfg.mi[2]);
}

/// The mainloop: pipeline stages, local-read prefetch and the staggered K start.
fn mainloop_defines(s: &PartSpec, b: &mut DefineBlock) {
    b.def("GT_PGR", s.cfg.pgr);
    b.def("GT_PLR", s.cfg.plr);
    b.def("GT_SU", s.cfg.su);
}

/// The shared-memory tile layout: row padding or the swizzle (`constraints::lds_layout`).
fn lds_layout_defines(s: &PartSpec, b: &mut DefineBlock) {
    b.def("GT_LPA", s.cfg.lpa);
    b.def("GT_LPB", s.cfg.lpb);
    b.def("GT_SWIZZLE", s.cfg.swizzle);
    // M- or N-contiguous operands transposed into K-major packs (constraints::transpose_lds);
    // named only when set, so the define blocks of the other kernels stay as they were.
    if s.cfg.tlds > 0 {
        b.def("GT_TRANSPOSE_LDS", 1);
    }
}

/// The operand loader: global-read vector width (`constraints::loader`).
fn loader_defines(s: &PartSpec, b: &mut DefineBlock) {
    b.def("GT_GRVW", s.cfg.grvw);
}

/// The tile scheduler: grouped tile order and the split-K kind (`constraints::scheduler`).
fn scheduler_defines(s: &PartSpec, b: &mut DefineBlock) {
    let c = &s.cfg;
    b.def("GT_GSU", c.gsu);
    b.flag("GT_STREAM_K", c.gsu_algo == GsuAlgo::StreamK);
    b.flag("GT_GSU_ATOMIC", c.gsu > 1 && c.gsu_algo == GsuAlgo::Atomic);
    // Named only when set, like the producer warp: the define blocks (and compile-cache
    // keys) of the other kernels stay as they were.
    if c.sums_splits_in_kernel() {
        b.def("GT_GSU_SINGLE_KERNEL", 1);
    }
    // 2: ping-pong.
    if c.pk > 0 {
        b.def("GT_PERSISTENT", c.pk);
    }
    // The flat batch path's own schedule (a batch a group of waves; 2: staged, each workgroup
    // walking batches); named only when set.
    if c.fb > 0 {
        b.def("GT_FLAT_BATCH", c.fb);
    }
    // The GEMV path's own schedule (rows by K splits); named only when set, like the side
    // it runs along (SwapAB: along N, for M up to 8).
    if c.gv > 0 {
        b.def("GT_GEMV", 1);
        if c.sab > 0 {
            b.def("GT_SWAP_AB", 1);
        }
        let b_vectors = crate::space::constraints::gemv_b_vectors(c, s.p);
        if b_vectors > 0 {
            b.def("GT_GEMV_B_VECTORS", b_vectors);
        }
    }
    // Edge tiles computed shifted back inside the matrix; named only where the problem has
    // an edge tile the shift applies to, so that the kernels of whole tiles compile as they
    // did (the shift's bookkeeping cost small tiles registers).
    if edge_shift(c, s.p) {
        b.def("GT_EDGE_SHIFT", 1);
    }
    // Clusters sharing A or B (constraints::cluster); named only when set.
    if c.cn > 1 {
        b.def("GT_CLUSTER_N", c.cn);
    }
    if c.cm > 1 {
        b.def("GT_CLUSTER_M", c.cm);
    }
    b.def("GT_WGM", c.wgm);
}

/// The epilogue: store vector width and whether C is read (`constraints::epilogue`).
fn epilogue_defines(s: &PartSpec, b: &mut DefineBlock) {
    b.def("GT_SVW", s.cfg.svw);
    b.flag("GT_BETA_ZERO", s.p.beta == 0.0);
    // Named only when set (the persistent kernel's ring of C tiles, or C read directly).
    let c_stages = crate::space::constraints::persistent_c_stages(&s.cfg, s.p);
    if c_stages > 0 {
        b.def("GT_C_STAGES", c_stages);
    }
    if crate::space::constraints::persistent_c_direct(&s.cfg, s.p) {
        b.def("GT_C_DIRECT", 1);
    }
    let c_steps = crate::space::constraints::persistent_c_steps(&s.cfg, s.p);
    if c_steps > 0 {
        b.def("GT_C_STEPS", c_steps);
    }
    if crate::space::constraints::persistent_c_prefetch(&s.cfg, s.p, s.target.compute_units) {
        b.def("GT_C_PREFETCH", 1);
    }
    // The persistent staging area's narrow column groups; named only when set.
    if crate::space::constraints::persistent_narrow_groups(&s.cfg, s.p) {
        b.def("GT_OUT_NARROW", 1);
    }
    // The data-parallel kernel's tensor-map stores of D; named only when set.
    if crate::space::constraints::stores_d_by_tensor_map(&s.cfg, s.p) {
        b.def("GT_STORE_D_TMA", 1);
    }
}

/// The packing kernels run before the main one (kernels/loader/gt_pack_kernel.h): each reads
/// its operand as stored and writes the copy the main kernel reads: 1 = stored K-major,
/// copied K-major; 2 = stored M- or N-major, copied K-major (both the warpgroup path's); 3 =
/// stored K-major, copied M- or N-major; 4 = stored M- or N-major off the 16-byte grid,
/// copied as it lies onto aligned rows (both the FMA path's PackMNMajor).
fn pack_defines(s: &PartSpec, b: &mut DefineBlock) {
    let (c, stored) = (&s.cfg, s.stored);
    let [k_a, k_b] = packed_operands(c, stored);
    let [mn_a, mn_b] = mn_packed_operands(c, stored);
    let mode = |k_major: bool, mn_major: bool, k_contiguous: bool| match (k_major, mn_major) {
        (true, _) if k_contiguous => Some(1),
        (true, _) => Some(2),
        (false, true) if k_contiguous => Some(3),
        (false, true) => Some(4),
        (false, false) => None,
    };
    if let Some(m) = mode(k_a, mn_a, stored.k_contiguous(true)) {
        b.def("GT_PACK_A", m);
    }
    if let Some(m) = mode(k_b, mn_b, stored.k_contiguous(false)) {
        b.def("GT_PACK_B", m);
    }
}

/// Whether the warp-level LDS paths compute some edge tile of `p` shifted back inside the
/// matrix (kernels/scheduler/gt_tile_map.h, `GtEdgeShift`, which tests the same at run time):
/// M or N past a whole number of tiles, at least one tile wide, the shifted start on the
/// operand's vectors along M or N (where it is M- or N-contiguous) and on the store's along M.
fn edge_shift(c: &KernelConfig, p: &GemmProblem) -> bool {
    if is_wgmma(c) || c.gv > 0 || c.fb > 0 {
        return false;
    }
    let shifts = |lim: i64, tile: u32, align: u32| {
        let tile = i64::from(tile);
        lim > tile && lim % tile != 0 && (lim - tile) % i64::from(align) == 0
    };
    let vec = |contiguous: bool| if contiguous { c.grvw } else { 1 };
    // Both widths are powers of two (constraints::loader, ::epilogue): the larger is a
    // multiple of the other.
    let align_m = vec(!p.trans_a.is_t()).max(c.svw);
    shifts(p.m, c.mt0, align_m) || shifts(p.n, c.mt1, vec(p.trans_b.is_t()))
}

/// The warpgroup mainloop (MI 64x8x16, 64x8x32): the instruction's N, the operands' LDS chunks
/// when M- or N-major, which operands are packed first, the producer warp, SwapAB and the
/// `wgmma` device function (`constraints::warpgroup`).
fn warpgroup_defines(s: &PartSpec, b: &mut DefineBlock) {
    let (c, p) = (&s.cfg, s.p);
    if !is_wgmma(c) {
        return;
    }
    // The instruction's N runs along the warpgroup tile's N, or its M when swapped.
    let [wt_m, wt_n] = warpgroup_tile(c);
    let n = if c.sab > 0 { wt_m } else { wt_n };
    b.def("GT_WGMMA", 1);
    b.def("GT_WGMMA_N", n);
    // Named only when set: the define blocks (and compile-cache keys) of kernels without
    // a producer warp stay as they were; likewise for TN kernels (no chunks, no packing).
    if c.pw > 0 {
        b.def("GT_PRODUCER_WARP", c.pw);
    }
    if c.sab > 0 {
        b.def("GT_SWAP_AB", 1);
    }
    let (a_chunk, b_chunk) = (mn_chunk(c, p, true), mn_chunk(c, p, false));
    if let Some(chunk) = a_chunk {
        b.def("GT_A_CHUNK", chunk);
    }
    if let Some(chunk) = b_chunk {
        b.def("GT_B_CHUNK", chunk);
    }
    // The instruction's A operand is the sliced tile: A, or B when swapped.
    let (s_mn, n_mn) = if c.sab > 0 {
        (b_chunk.is_some(), a_chunk.is_some())
    } else {
        (a_chunk.is_some(), b_chunk.is_some())
    };
    let (s_type, n_type) = if c.sab > 0 {
        (p.b_type, p.a_type)
    } else {
        (p.a_type, p.b_type)
    };
    b.code
        .push_str(&wgmma_function(n, s_type, n_type, s_mn, n_mn));
}

/// The device function `gt_wgmma_op(d, desc_a, desc_b)`: one
/// `wgmma.mma_async.sync.aligned.m64n<n>k<k>.f32.<ta>.<tb>` adding A (64 x k) times B (k x n),
/// both in shared memory and named by descriptors, into the n/2 f32 registers `d` (scale-d = 1:
/// accumulate; no negation). k is 32 bytes of K: 16 for 16-bit types, 32 for 8-bit ones and 8
/// for f32 inputs read as tf32 (the `c_xf32_r` compute type); a 16-bit operand that is M- or
/// N-major in shared memory (`a_mn`, `b_mn`) sets the instruction's transpose bit, which 8-bit
/// and tf32 operands do not have. Written with plain C types: it precedes the template's
/// headers in the translation unit. No line is indented: the default kernel set stores define
/// blocks line-trimmed, and an AOT lookup compares them exactly.
pub fn wgmma_function(n: u32, ta: DataType, tb: DataType, a_mn: bool, b_mn: bool) -> String {
    let regs = (n / 2) as usize;
    let ptx = |t: DataType| match t {
        DataType::F16 => "f16",
        DataType::F8 => "e4m3",
        DataType::Bf8 => "e5m2",
        DataType::F32 => "tf32",
        DataType::Bf16 => "bf16",
    };
    let k = 32 / ta.bytes() as u32;
    // 16-bit types take imm-trans-a and imm-trans-b after the input scales.
    let trans = if ta.bytes() == 2 {
        format!(", {}, {}", u8::from(a_mn), u8::from(b_mn))
    } else {
        String::new()
    };
    let outs = (0..regs)
        .map(|i| format!("%{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let constraints = (0..regs)
        .map(|i| format!("\"+f\"(d[{i}])"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "__device__ __forceinline__ void gt_wgmma_op(float (&d)[{regs}], unsigned long long desc_a,\n\
         unsigned long long desc_b) {{\n\
         asm volatile(\n\
         \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale}, 0;\\n\"\n\
         \"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{pa}.{pb} \"\n\
         \"{{{outs}}}, %{da}, %{db}, p, 1, 1{trans};\\n}}\\n\"\n\
         : {constraints}\n\
         : \"l\"(desc_a), \"l\"(desc_b), \"r\"(1));\n\
         }}\n",
        pa = ptx(ta),
        pb = ptx(tb),
        da = regs,
        db = regs + 1,
        scale = regs + 2,
    )
}

/// Specialises the template for one config and problem.
pub fn generate(cfg: &KernelConfig, p: &GemmProblem, target: &Target) -> KernelSource {
    let launch = launch_plan(cfg, p, target);
    let mut defines = defines(cfg, p, target);
    if let Some(d) = crate::plant::planted(&cfg.name()).map(PlantKind::define) {
        defines.push_str(&format!("#define {d} 1\n"));
    }
    let text = format!(
        "// generated by gemmtune for {}\n{defines}\n{}",
        p.label(),
        expand_includes(GEMM_TEMPLATE)
    );
    KernelSource {
        name: cfg.name(),
        defines,
        text,
        launch,
    }
}

/// The reference, random-fill and comparison kernels as one translation unit.
pub fn reference_source(target: &Target) -> String {
    format!(
        "#define GT_VENDOR_AMD {}\n{}",
        u8::from(target.vendor == Vendor::Amd),
        expand_includes(REFERENCE_KERNEL)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Trans;

    fn target() -> Target {
        Target::arch(Vendor::Nvidia, "sm_90a")
    }

    /// The kernel stays composed of small flat parts: gemm.hip under 300 lines, every other
    /// file under 400, and no `#if` inside another outside the portability header.
    #[test]
    fn kernel_parts_stay_small_and_flat() {
        for (name, text) in KERNEL_FILES {
            let lines = text.lines().count();
            let limit = if *name == "gemm.hip" { 300 } else { 400 };
            assert!(
                lines < limit,
                "kernels/{name} has {lines} lines (limit {limit})"
            );
            if *name == "gt_platform.h" {
                continue;
            }
            let (mut depth, mut deepest) = (0i32, 0);
            for line in text.lines() {
                let t = line.trim_start();
                let directive = t.strip_prefix('#').map(str::trim_start).unwrap_or("");
                if directive.starts_with("if") {
                    depth += 1;
                    deepest = deepest.max(depth);
                } else if directive.starts_with("endif") {
                    depth -= 1;
                }
            }
            assert_eq!(depth, 0, "kernels/{name}: unbalanced #if");
            assert!(deepest <= 1, "kernels/{name}: #if nested {deepest} deep");
        }
    }

    #[test]
    fn edge_tiles_shift_only_where_the_shifted_start_keeps_the_vectors() {
        let fma = KernelConfig::parse(
            "MT256x128x16_MI1x1x1_WG4x2_PGR4_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0",
        )
        .unwrap();
        let nt = |m, n| GemmProblem::with_layout(m, n, 2000, Trans::N, Trans::T);
        let block =
            |p: &GemmProblem| defines(&fma, p, &target()).contains("#define GT_EDGE_SHIFT 1\n");
        // M or N past whole tiles, the shifted starts on the 4-element vectors: named.
        assert!(edge_shift(&fma, &nt(2000, 2048)) && block(&nt(2000, 2048)));
        assert!(edge_shift(&fma, &nt(2048, 2004)) && edge_shift(&fma, &nt(2000, 2000)));
        // Whole tiles, narrower than one, or an N-contiguous B whose N - 128 is off its
        // vectors: the blocks stay as they were.
        assert!(!edge_shift(&fma, &nt(2048, 2048)) && !block(&nt(2048, 2048)));
        assert!(!edge_shift(&fma, &nt(100, 100)) && !edge_shift(&fma, &nt(2048, 2001)));
        // An M-contiguous A whose M - 256 is off its vectors, N whole: none. K-contiguous, the
        // same M shifts by whole rows, but the store's 2-element vectors along M need an even M.
        assert!(!edge_shift(&fma, &nt(2001, 2048)));
        let tn = |m| GemmProblem::with_layout(m, 2048, 2000, Trans::T, Trans::N);
        assert!(edge_shift(&fma, &tn(2002)) && !edge_shift(&fma, &tn(2001)));
        // The warpgroup path's tensor maps need none.
        let wgmma = KernelConfig::parse(
            "MT128x112x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        assert!(!edge_shift(
            &wgmma,
            &GemmProblem::with_layout(2000, 2000, 2000, Trans::N, Trans::T)
        ));
    }

    #[test]
    fn other_layouts_read_mn_major_boxes_or_pack() {
        let cfg = KernelConfig::parse(
            "MT128x112x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        // NN: A M-major in chunks of 64 (boxes of 64 rows of M by DepthU of K), B K-major.
        let nn = GemmProblem::with_layout(16032, 112, 16384, Trans::N, Trans::N);
        let plan = launch_plan(&cfg, &nn, &target());
        let [a, b] = plan.tma.unwrap();
        assert_eq!(
            (a.k_major, a.inner, a.outer, a.swizzle_bytes),
            (false, 64, 64, 128)
        );
        assert_eq!((b.k_major, b.inner, b.outer), (true, 64, 112));
        assert!(plan.packs.is_empty());
        assert!(defines(&cfg, &nn, &target()).contains("#define GT_A_CHUNK 64\n"));
        // NT with N = 109: B's rows are 218 bytes apart, so B is packed K-major after the
        // split-K partials, and the main kernel reads it as TN's B.
        let nt = GemmProblem::with_layout(16032, 109, 16384, Trans::N, Trans::T);
        let plan = launch_plan(&cfg, &nt, &target());
        assert_eq!(plan.packs.len(), 1);
        let pk = &plan.packs[0];
        assert!(!pk.is_a && pk.symbol.ends_with("_pack_b"));
        assert_eq!(
            pk.workspace_offset,
            plan.workspace_bytes.next_multiple_of(256)
        );
        assert_eq!(pk.bytes, 109 * 16384 * 2);
        assert_eq!(plan.workspace_total(), pk.workspace_offset + pk.bytes);
        assert!(plan.tma.unwrap()[1].k_major);
        let d = defines(&cfg, &nt, &target());
        assert!(d.contains("#define GT_TRANS_B 0\n") && d.contains("#define GT_PACK_B 2\n"));
        let kp = kernel_problem(&cfg, &nt);
        assert_eq!((kp.ldb, kp.trans_b), (16384, Trans::N));
    }

    /// A copy of a million rows, 8 a block row, needs more block rows than a grid's 65535:
    /// the launch stops there and the pack kernel strides over the rest.
    #[test]
    fn pack_grids_stop_at_a_launchs_rows() {
        let cfg = KernelConfig::parse(
            "MT128x16x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        // K of 15: A's rows of 30 bytes, which the tensor maps cannot read.
        let p = GemmProblem::new(1048576, 16, 15);
        let plan = launch_plan(&cfg, &p, &target());
        let pk = plan.packs.iter().find(|pk| pk.is_a).expect("A copied");
        assert_eq!(pk.grid[1], 65535);
        let small = launch_plan(&cfg, &GemmProblem::new(4096, 16, 15), &target());
        assert_eq!(small.packs[0].grid[1], 4096 / 8);
    }

    #[test]
    fn every_kernel_file_is_embedded() {
        fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, root, out);
                } else if matches!(p.extension().and_then(|x| x.to_str()), Some("h" | "hip")) {
                    let rel = p
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    out.push(rel);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let mut files = Vec::new();
        walk(&root, &root, &mut files);
        for f in &files {
            assert!(
                KERNEL_FILES.iter().any(|(name, _)| name == f),
                "kernels/{f} is not in KERNEL_FILES: generated sources would lack it"
            );
        }
        // And every include of the template resolves: nothing is left unexpanded.
        let text = expand_includes(GEMM_TEMPLATE);
        assert!(
            !text.contains("#include \""),
            "an include was left unexpanded"
        );
    }

    #[test]
    fn wgmma_function_has_one_operand_per_accumulator() {
        let f = wgmma_function(112, DataType::Bf16, DataType::Bf16, false, false);
        assert!(f.contains("wgmma.mma_async.sync.aligned.m64n112k16.f32.bf16.bf16"));
        assert!(f.contains("float (&d)[56]"));
        assert_eq!(f.matches("\"+f\"").count(), 56);
        assert!(f.contains("%55}, %56, %57, p, 1, 1, 0, 0;"));
        assert!(f.contains("setp.ne.b32 p, %58, 0;"));
        let h = wgmma_function(8, DataType::F16, DataType::F16, true, false);
        assert!(h.contains("m64n8k16.f32.f16.f16"));
        assert!(h.contains("p, 1, 1, 1, 0;"), "{h}");
        assert_eq!(h.matches("\"+f\"").count(), 4);
        // 8-bit types: k32, their own type names, no transpose bits.
        let q = wgmma_function(128, DataType::F8, DataType::Bf8, false, false);
        assert!(q.contains("m64n128k32.f32.e4m3.e5m2"), "{q}");
        assert!(q.contains("%65, p, 1, 1;"), "{q}");
        // f32 inputs read as tf32: k8, no transpose bits.
        let t = wgmma_function(256, DataType::F32, DataType::F32, false, false);
        assert!(t.contains("m64n256k8.f32.tf32.tf32"), "{t}");
        assert!(t.contains("%129, p, 1, 1;"), "{t}");
    }

    #[test]
    fn stream_k_plans_one_persistent_launch_per_device() {
        let p = GemmProblem::new(4096, 128, 4096);
        let cfg = KernelConfig::parse(
            "MT128x128x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU2S_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        let t = Target {
            compute_units: 132,
            ..target()
        };
        let plan = launch_plan(&cfg, &p, &t);
        // 32 tiles, 264 slots: 8 workgroups per tile fill 97% of them.
        assert_eq!(plan.grid, [256, 1, 1]);
        assert!(plan.epilogue.is_none() && !plan.zero_workspace);
        assert_eq!(plan.workspace_bytes, 256 * 2 * 128 * 128 * 4);
        // 80 tiles on 132 slots: one per tile would leave 39% idle, so the work is spread.
        assert_eq!(stream_k_grid(1, 132, 80, 80 * 128), 132);
        assert_eq!(stream_k_grid(1, 132, 300, 300 * 56), 132);
        assert_eq!(plan.flags_bytes, 32 * 4);
        // Never more workgroups than (tile, K tile) iterations.
        let tiny = GemmProblem::new(128, 128, 128);
        assert_eq!(launch_plan(&cfg, &tiny, &t).grid, [2, 1, 1]);
        assert!(defines(&cfg, &p, &t).contains("#define GT_STREAM_K 1\n"));
        let plain = KernelConfig {
            gsu_algo: GsuAlgo::Reduce,
            ..cfg
        };
        assert!(defines(&plain, &p, &t).contains("#define GT_STREAM_K 0\n"));
        assert_eq!(launch_plan(&plain, &p, &t).flags_bytes, 0);
    }

    #[test]
    fn split_k_epilogue_covers_every_column_of_every_batch() {
        let cfg = KernelConfig::parse(
            "MT64x64x64_MI64x8x16_WG4x1_PGR8_PLR0_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        let mut p = GemmProblem::new(4097, 109, 4096);
        p.batch = 3;
        let plan = launch_plan(&cfg, &p, &target());
        assert_eq!(plan.grid, [65 * 2, 2, 3]);
        let epi = plan
            .epilogue
            .expect("a split-K kernel has an epilogue launch");
        // 4 rows per thread, 256 threads: 5 blocks along M cover 4097 rows.
        assert_eq!((epi.grid, epi.block), ([5, 109, 3], [256, 1, 1]));
        assert_eq!(plan.workspace_bytes, 4097 * 109 * 3 * 4 * 2);
        // Short columns share a block: 64 threads cover 256 rows, four columns a block.
        let short = GemmProblem::new(256, 256, 65536);
        let epi = launch_plan(&cfg, &short, &target()).epilogue.unwrap();
        assert_eq!((epi.grid, epi.block), ([1, 64, 1], [64, 4, 1]));
        // 16 rows: 4 threads a column, 64 columns a block; 100 columns in two blocks.
        let tiny = GemmProblem::new(16, 100, 65536);
        let epi = launch_plan(&cfg, &tiny, &target()).epilogue.unwrap();
        assert_eq!((epi.grid, epi.block), ([1, 2, 1], [4, 64, 1]));
        // Column groups past 65535 grid rows loop inside the kernel.
        let wide = GemmProblem::new(64, 10_000_000, 64);
        let epi = launch_plan(&cfg, &wide, &target()).epilogue.unwrap();
        assert_eq!((epi.grid, epi.block), ([1, 65535, 1], [16, 16, 1]));
        // A dot product split 128 ways: sixteen threads share its slices, eight each; 16 rows
        // of one column likewise, the rows on four threads.
        let split = |name: &str| KernelConfig::parse(name).unwrap();
        let dot = split(
            "MT16x1x16_MI1x1x1_WG8x1_PGR4_PLR0_LPA0_LPB0_SW0_GSU128R_WGM1_GRVW8_SVW1_SU0_GV1",
        );
        let epi = |p: &GemmProblem| launch_plan(&dot, p, &target()).epilogue.unwrap();
        let e = epi(&GemmProblem::new(1, 1, 4194304));
        assert_eq!((e.grid, e.block), ([1, 1, 1], [1, 16, 16]));
        let e = epi(&GemmProblem::new(16, 1, 4194304));
        assert_eq!((e.grid, e.block), ([1, 1, 1], [4, 4, 16]));
        // Few slices, or columns that fill the block: no sharing.
        assert_eq!(
            launch_plan(&cfg, &tiny, &target()).epilogue.unwrap().block[2],
            1
        );
        assert_eq!(epi(&GemmProblem::new(4096, 1, 4194304)).block[2], 1);
    }

    #[test]
    fn batches_past_the_grids_z_fold_into_y_beside_the_splits() {
        let cfg = KernelConfig::parse(
            "MT16x16x32_MI16x8x16_WG1x1_PGR1_PLR0_LPA8_LPB8_SW0_GSU2K_WGM8_GRVW8_SVW4_SU0",
        )
        .unwrap();
        let mut p = GemmProblem::new(2, 2, 2);
        p.batch = 65535;
        assert_eq!(launch_plan(&cfg, &p, &target()).grid, [1, 2, 65535]);
        // Two layers of 65535 batches: y is split x layer (kernels/scheduler/gt_tile_map.h).
        p.batch = 65536;
        assert_eq!(launch_plan(&cfg, &p, &target()).grid, [1, 4, 65535]);
        p.batch = 200_000;
        assert_eq!(launch_plan(&cfg, &p, &target()).grid, [1, 8, 65535]);
    }

    #[test]
    fn many_short_batches_take_a_wave_each() {
        let gemv = |name: &str| KernelConfig::parse(name).unwrap();
        let four =
            gemv("MT16x2x16_MI1x1x1_WG4x1_PGR2_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW2_SVW1_SU0_GV1");
        let mut p = GemmProblem::new(2, 2, 2);
        p.batch = 65536;
        // Four batches a workgroup of four waves.
        assert_eq!(launch_plan(&four, &p, &target()).grid, [1, 1, 16384]);
        // 300000 batches: 75000 groups, folded into two layers of y.
        p.batch = 300_000;
        assert_eq!(launch_plan(&four, &p, &target()).grid, [1, 2, 65535]);
        // A K longer than four wave-wide runs of 2 (256): a workgroup a batch, its waves
        // sharing K; so too with rows past a wave's four, or a split.
        p.batch = 1000;
        p.k = 257;
        assert_eq!(launch_plan(&four, &p, &target()).grid, [1, 1, 1000]);
        p.k = 2;
        p.m = 5;
        assert_eq!(launch_plan(&four, &p, &target()).grid, [1, 1, 1000]);
    }

    #[test]
    fn single_kernel_split_sums_in_the_main_launch() {
        let cfg = KernelConfig::parse(
            "MT128x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU2K_WGM1_GRVW8_SVW8_SU0_PW1",
        )
        .unwrap();
        let mut p = GemmProblem::new(4097, 128, 14336);
        p.batch = 3;
        let plan = launch_plan(&cfg, &p, &target());
        // 33 x 2 tiles per batch, each split a grid row; no second launch.
        assert_eq!(plan.grid, [66, 2, 3]);
        assert!(plan.epilogue.is_none() && !plan.zero_workspace);
        // One f32 partial tile per (tile, split) and one flag per tile.
        assert_eq!(plan.workspace_bytes, 66 * 3 * 2 * 128 * 64 * 4);
        assert_eq!(plan.flags_bytes, 66 * 3 * 4);
        assert!(defines(&cfg, &p, &target()).contains(
            "#define GT_GSU_SINGLE_KERNEL 1
"
        ));
        // The reduction kernel's variant names no such define and sums in a second launch.
        let two = KernelConfig {
            gsu_algo: GsuAlgo::Reduce,
            ..cfg
        };
        assert!(!defines(&two, &p, &target()).contains("GT_GSU_SINGLE_KERNEL"));
        let plan = launch_plan(&two, &p, &target());
        assert!(plan.epilogue.is_some() && plan.flags_bytes == 0);
    }

    #[test]
    fn producer_warp_adds_a_warp_and_names_its_define() {
        let p = GemmProblem::new(4096, 128, 4096);
        let cfg = KernelConfig::parse(
            "MT64x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM2_GRVW8_SVW8_SU0_PW1",
        )
        .unwrap();
        let plan = launch_plan(&cfg, &p, &target());
        assert_eq!(plan.block, [160, 1, 1]);
        assert!(defines(&cfg, &p, &target()).contains("#define GT_PRODUCER_WARP 1\n"));
        let plain = KernelConfig { pw: 0, ..cfg };
        assert_eq!(launch_plan(&plain, &p, &target()).block, [128, 1, 1]);
        assert!(!defines(&plain, &p, &target()).contains("GT_PRODUCER_WARP"));
    }

    #[test]
    fn the_persistent_stream_k_plans_part_slots_per_workgroup_and_a_flag_per_tile() {
        let t = Target {
            compute_units: 132,
            ..target()
        };
        let p = GemmProblem::new(3072, 3072, 3072);
        let cfg = KernelConfig::parse(
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        )
        .unwrap();
        let plan = launch_plan(&cfg, &p, &t);
        // 24 x 12 tiles on 132 compute units: one workgroup each, two f32 part slots each.
        assert_eq!(plan.grid, [132, 1, 1]);
        assert_eq!(plan.workspace_bytes, 132 * 2 * 128 * 256 * 4);
        assert_eq!(plan.flags_bytes, 288 * 4);
        assert!(defines(&cfg, &p, &t).contains("#define GT_STREAM_K 1\n"));
        // In pairs: 66 clusters of two.
        let pairs = KernelConfig { cm: 2, ..cfg };
        assert_eq!(launch_plan(&pairs, &p, &t).grid, [132, 1, 1]);
        // Fewer units than clusters: one cluster per unit.
        let short = GemmProblem::new(256, 256, 64);
        assert_eq!(launch_plan(&cfg, &short, &t).grid, [2, 1, 1]);
        // Whole tiles need neither.
        let whole = KernelConfig {
            gsu_algo: GsuAlgo::Reduce,
            ..cfg
        };
        let plan = launch_plan(&whole, &p, &t);
        assert_eq!((plan.workspace_bytes, plan.flags_bytes), (0, 0));
    }

    #[test]
    fn a_cluster_shares_a_in_slices_and_launches_whole_clusters() {
        let p = GemmProblem::new(4096, 256, 4096);
        let cfg = KernelConfig::parse(
            "MT128x128x64_MI64x8x16_WG8x1_PGR6_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1_CN2",
        )
        .unwrap();
        let t = Target {
            compute_units: 131,
            ..target()
        };
        let plan = launch_plan(&cfg, &p, &t);
        // 32 x 2 tiles: 32 clusters; each workgroup loads 64 of A's 128 rows per box.
        assert_eq!(plan.grid, [64, 1, 1]);
        let [a, b] = plan.tma.unwrap();
        assert_eq!((a.outer, b.outer), (64, 128));
        assert!(defines(&cfg, &p, &t).contains(
            "#define GT_CLUSTER_N 2
"
        ));
        // Persistent: one workgroup per compute unit, rounded down to whole clusters.
        let big = GemmProblem::new(16384, 4096, 4096);
        let pk = KernelConfig { pk: 1, ..cfg };
        assert_eq!(launch_plan(&pk, &big, &t).grid, [130, 1, 1]);
        let single = KernelConfig { cn: 1, ..pk };
        assert_eq!(launch_plan(&single, &big, &t).grid, [131, 1, 1]);
        assert_eq!(launch_plan(&single, &big, &t).tma.unwrap()[0].outer, 128);
        assert!(!defines(&single, &big, &t).contains("GT_CLUSTER_N"));
        // A 2 x 4 block (ClusterM 2, ClusterN 4) of 96x64 swapped tiles on 768x768 NT: eight
        // workgroups a cluster. A is M-major in three chunks of 32 rows, too few for four
        // sharers: slices of 32 of its 128 k; B N-major in one chunk of 64: slices of 64 k.
        let nt = GemmProblem::with_layout(768, 768, 4096, Trans::N, Trans::T);
        let block = KernelConfig::parse(
            "MT96x64x128_MI64x8x16_WG4x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1_SAB1_CN4_CM2",
        )
        .unwrap();
        let plan = launch_plan(&block, &nt, &t);
        assert_eq!(plan.grid, [96, 1, 1]);
        let [a, b] = plan.tma.unwrap();
        assert_eq!((a.k_major, a.inner, a.outer), (false, 32, 32));
        assert_eq!((b.k_major, b.inner, b.outer), (false, 64, 64));
        let d = defines(&block, &nt, &t);
        assert!(d.contains("#define GT_CLUSTER_N 4\n") && d.contains("#define GT_CLUSTER_M 2\n"));
    }

    #[test]
    fn only_the_persistent_kernel_may_launch_fewer_workgroups_than_its_grid() {
        // Data-parallel 128x160 tiles in clusters of four along M, storing through a map of
        // D: 40 x 5 tiles, each its own workgroup, more than fit at once on an H200. Capped to
        // what fits, the tiles past it went uncomputed (their D stayed as the harness filled
        // it: NaN).
        let p = GemmProblem::with_layout(5120, 768, 5120, Trans::N, Trans::T);
        let dp = KernelConfig::parse(
            "MT128x160x64_MI64x8x16_WG4x1_PGR6_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_CM4",
        )
        .unwrap();
        let plan = launch_plan(&dp, &p, &target());
        assert!(plan.tma_d.is_some() && !plan.persistent);
        assert_eq!(plan.grid, [200, 1, 1]);
        assert_eq!(plan.grid_at_once(Some(128)), [200, 1, 1]);
        // The persistent twin walks its tiles over what fits.
        let pk = KernelConfig { pk: 1, ..dp };
        let plan = launch_plan(&pk, &p, &target());
        assert!(plan.persistent);
        let launched = plan.grid_at_once(Some(128));
        assert_eq!(launched[0], plan.grid[0].min(128));
        assert_eq!(plan.grid_at_once(None), plan.grid);
    }

    #[test]
    fn a_persistent_kernel_with_beta_loads_c_through_its_own_tensor_map() {
        let p = GemmProblem {
            beta: 1.0,
            ..GemmProblem::new(16384, 16384, 128)
        };
        // Through the operand ring: boxes of one 128-byte chunk of M by a 32-column group.
        let ringed = KernelConfig::parse(
            "MT128x128x64_MI64x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        )
        .unwrap();
        let plan = launch_plan(&ringed, &p, &target());
        let boxes = plan
            .tma_c
            .map(|b| (b.k_major, b.inner, b.outer, b.swizzle_bytes));
        assert_eq!(boxes, Some((false, 64, 32, 128)));
        let text = defines(&ringed, &p, &target());
        assert!(text.contains("#define GT_C_STEPS 1\n") && !text.contains("GT_C_STAGES"));
        // A tile not of whole 32-column groups: C comes in D's boxes, into a ring of two C
        // tiles.
        let cfg = KernelConfig::parse(
            "MT128x112x64_MI64x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        )
        .unwrap();
        let plan = launch_plan(&cfg, &p, &target());
        assert_eq!(plan.tma_c, plan.tma_d);
        assert!(plan.tma_c.is_some());
        assert!(defines(&cfg, &p, &target()).contains("#define GT_C_STAGES 2\n"));
        // In the staging area (no define), and no map of C at all without beta.
        let deeper = KernelConfig { pgr: 6, ..cfg };
        assert!(!defines(&deeper, &p, &target()).contains("GT_C_STAGES"));
        assert!(launch_plan(&deeper, &p, &target()).tma_c.is_some());
        let no_c = GemmProblem::new(16384, 16384, 128);
        assert_eq!(launch_plan(&cfg, &no_c, &target()).tma_c, None);
        assert!(!defines(&cfg, &no_c, &target()).contains("GT_C_STAGES"));
    }

    #[test]
    fn warpgroups_side_by_side_store_their_own_columns_in_boxes_of_their_share() {
        use crate::space::constraints::persistent_passes;
        let cfg = KernelConfig::parse(
            "MT192x192x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW2_PK1",
        )
        .unwrap();
        let p = GemmProblem::new(3072, 3072, 3072);
        let box_cols =
            |c: &KernelConfig, p: &GemmProblem| launch_plan(c, p, &target()).tma_d.unwrap().outer;
        // Three column groups of 64 (128 bytes a row beside a producer warpgroup), each
        // warpgroup storing its 32 of every group.
        assert_eq!(persistent_passes(&cfg, &p), 3);
        assert_eq!(box_cols(&cfg, &p), 32);
        // Beta reads C into the shared layout, and stream-K parts meet in it: whole groups.
        let with_c = GemmProblem { beta: 1.0, ..p };
        assert_eq!(box_cols(&cfg, &with_c), 64);
        let stream_k = KernelConfig {
            gsu_algo: GsuAlgo::StreamK,
            ..cfg
        };
        assert_eq!(box_cols(&stream_k, &p), 64);
        // Warpgroups stacked along M store their own rows: whole groups.
        let stacked = KernelConfig { wg: [8, 1], ..cfg };
        assert_eq!(box_cols(&stacked, &p), 64);
        // Swapped, a share of whole 16-column steps: 160x256 in four groups of 64, shares of
        // 32; 192x192's shares of 32 too. 96 columns in two groups of 48: shares of 24, which
        // a swapped matrix store (16 columns) would straddle.
        let swapped = KernelConfig { sab: 1, ..cfg };
        assert_eq!(box_cols(&swapped, &p), 32);
        let tall = KernelConfig {
            mt0: 160,
            mt1: 256,
            ..swapped
        };
        assert_eq!(box_cols(&tall, &p), 32);
        let short = KernelConfig { mt1: 96, ..swapped };
        assert_eq!(box_cols(&short, &p), 48);
        // 144 columns: groups of 48, shares of 24; four warpgroups on 96 columns: groups of
        // 48, shares of 12, no whole number of 8-column steps, so the group is shared.
        let narrower = KernelConfig { mt1: 144, ..cfg };
        assert_eq!(box_cols(&narrower, &p), 24);
        let four = KernelConfig {
            mt1: 96,
            wg: [4, 4],
            ..cfg
        };
        assert_eq!(persistent_passes(&four, &p), 2);
        assert_eq!(box_cols(&four, &p), 48);
    }

    #[test]
    fn swap_ab_runs_the_instruction_n_along_m() {
        let p = GemmProblem::new(10240, 128, 8192);
        let cfg = KernelConfig::parse(
            "MT80x128x64_MI64x8x16_WG4x2_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_SAB1",
        )
        .unwrap();
        let d = defines(&cfg, &p, &target());
        assert!(d.contains("#define GT_WGMMA_N 80\n"), "{d}");
        assert!(d.contains("#define GT_SWAP_AB 1\n") && d.contains("m64n80k16"));
        let plan = launch_plan(&cfg, &p, &target());
        assert_eq!((plan.grid, plan.block), ([128, 1, 1], [256, 1, 1]));
        let plain = KernelConfig::parse(
            "MT128x128x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        assert!(!defines(&plain, &p, &target()).contains("GT_SWAP_AB"));
    }

    #[test]
    fn only_wgmma_configs_carry_the_generated_function() {
        let p = GemmProblem::new(16032, 109, 16384);
        let wg = KernelConfig::parse(
            "MT128x256x64_MI64x8x16_WG8x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW8_SVW8_SU0",
        )
        .unwrap();
        let d = defines(&wg, &p, &target());
        assert!(d.contains("#define GT_WGMMA 1\n#define GT_WGMMA_N 128\n"));
        assert!(d.contains("m64n128k16"));
        let mma = KernelConfig {
            mi: [16, 8, 16],
            ..wg
        };
        let d = defines(&mma, &p, &target());
        assert!(!d.contains("GT_WGMMA") && !d.contains("wgmma"));
    }

    /// The configs the define blocks are checked on: every valid config of bounded spaces of
    /// problems over every layout, type, beta and path, for an NVIDIA and an AMD target.
    fn sample_blocks() -> Vec<(KernelConfig, GemmProblem, Target)> {
        use crate::hw::HwSpec;
        use crate::space::Space;
        let mut out = Vec::new();
        let problem = |m, n, k, ta, tb, t: DataType, beta: f64| {
            let mut p = GemmProblem::with_layout(m, n, k, ta, tb);
            p.beta = beta;
            (p.a_type, p.b_type, p.c_type, p.d_type) = (t, t, t, t);
            p
        };
        let cases = [
            (
                "H200",
                "sm_90a",
                problem(16032, 109, 16384, Trans::T, Trans::N, DataType::Bf16, 0.0),
            ),
            (
                "H200",
                "sm_90a",
                problem(4096, 4096, 4096, Trans::N, Trans::N, DataType::Bf16, 1.0),
            ),
            (
                "H100-SXM",
                "sm_90a",
                problem(1000, 24, 8200, Trans::N, Trans::T, DataType::F16, 0.0),
            ),
            (
                "H200",
                "sm_90a",
                problem(512, 768, 1024, Trans::T, Trans::T, DataType::F32, 0.5),
            ),
            (
                "MI300X",
                "gfx942",
                problem(8192, 128, 2048, Trans::T, Trans::N, DataType::Bf16, 1.0),
            ),
        ];
        for (spec, arch, p) in cases {
            let hw = HwSpec::by_name(spec).unwrap();
            let mut s = Space::for_problem(&p, &hw);
            for (param, values) in [
                ("DepthU", "64"),
                ("LdsPadA", "0,8"),
                ("LdsPadB", "0"),
                ("WorkGroupMapping", "8"),
                ("StaggerU", "0,4"),
                ("GlobalSplitU", "1,3"),
                ("MacroTile0", "80,128"),
                ("MacroTile1", "16,128"),
                ("WavesN", "1,2"),
                ("PrefetchGlobalRead", "2,4"),
                ("StoreVectorWidth", "4"),
                // Recorded before M-major A tiles could be shared in pairs and before operands
                // were copied into aligned rows (the NT problem's A has rows of 2000 bytes),
                // and before the FMA path copied K-contiguous operands MN-major (the TT
                // problem's A): tests/nvcc_compile.rs compiles those kernels.
                ("ClusterN", "1"),
                ("ClusterM", "1"),
                ("PackUnaligned", "0"),
                ("PackMNMajor", "0"),
            ] {
                s.fix(param, values).unwrap();
            }
            let target = Target {
                vendor: hw.vendor,
                arch: arch.into(),
                compute_units: 132,
            };
            for c in s.enumerate(10_000_000).unwrap() {
                out.push((c, p.clone(), target.clone()));
            }
        }
        out
    }

    /// The define blocks of 32,344 configs, recorded before `defines` was composed of one
    /// function per kernel part: the blocks are compile-cache keys and the default set's
    /// lookup, so no part may change a byte of them. A deliberate change of the template's
    /// defines changes this digest, and its commit says why.
    #[test]
    fn define_blocks_are_what_they_were() {
        let blocks = sample_blocks();
        // Each block's text, written once and read by every check below.
        let texts: Vec<String> = blocks.iter().map(|(c, p, t)| defines(c, p, t)).collect();
        let mut h = Sha256::new();
        for text in &texts {
            h.update(text);
        }
        let count = |f: &dyn Fn(&KernelConfig) -> bool| blocks.iter().filter(|b| f(&b.0)).count();
        // The blocks holding `line`.
        let with_line = |line: &str| texts.iter().filter(|t| t.contains(line)).count();
        // The sample covers every part: the warpgroup path with and without its extras, and
        // every split-K kind. Recorded when the parts were split out (32344 blocks, 3288 on
        // the warpgroup path), then again when that path took every layout and 8-bit types:
        // its NN and NT problems became warpgroup kernels, and its instruction function
        // (`gt_wgmma_op`) names types and transpose bits; and again when PersistentKernel
        // configs (`GT_PERSISTENT`) joined the sample; and again when the rules left out
        // swapped persistent tiles of other heights than the 128-byte output box (they stored
        // wrong results) and configs whose LDS meets the limit only without the kernel's own
        // mbarriers and flags (the driver refused them): fewer blocks, the others unchanged;
        // and again when FMA lanes could own up to 128 outputs and the FMA path's transposing
        // loads counted their staging registers: 36 more f32 blocks in all (more split-sum
        // kernels, fewer stream-K ones), the matrix-core ones untouched (their rules did not
        // change); and again when the persistent kernels' register allowance became what
        // ptxas used and NVIDIA's register share that of a sub-partition: 48 more persistent
        // blocks with the producer warp, the others unchanged; and again when the persistent
        // kernel took beta: 288 more persistent blocks (the beta problems'), every block of
        // the sample before unchanged (their digest is still dc7473d9...); and again when
        // the persistent kernel stored swapped tiles of any height whose rows are whole
        // 16-byte vectors (the last, partial chunk through the consumers' own stores): 192
        // more swapped persistent blocks, the others unchanged (their digest is still
        // cc50e2ab...); and again when the persistent kernel took stream-K (GSU1S): the new
        // 216 persistent stream-K blocks, the others unchanged (checked here); and again when
        // the data-parallel warpgroup kernels stored D through tensor maps where D allows it:
        // a `GT_STORE_D_TMA` line in those blocks, every block otherwise unchanged (checked
        // here, the line left out); and again when they took beta, C through a tensor map: 768
        // more blocks with that line (the beta problems'), none otherwise changed; and again
        // when the persistent kernel's C came through its operand ring where the ring holds
        // C's column groups: the 48 blocks with a `GT_C_STEPS` line (beta problems' persistent
        // kernels, their `GT_C_STAGES` line gone where they had one); and again when the
        // warp-level LDS paths computed edge tiles shifted back inside the matrix: a
        // `GT_EDGE_SHIFT` line in the blocks of problems with such an edge tile, every block
        // otherwise unchanged (checked here, the line left out).
        let persistent_stream_k = |c: &KernelConfig| c.pk > 0 && c.gsu_algo == GsuAlgo::StreamK;
        let mut before = Sha256::new();
        for (b, text) in blocks.iter().zip(&texts) {
            if !persistent_stream_k(&b.0) {
                before.update(
                    text.replace("#define GT_STORE_D_TMA 1\n", "")
                        .replace("#define GT_EDGE_SHIFT 1\n", ""),
                );
            }
        }
        let edge_shifts = with_line("#define GT_EDGE_SHIFT 1\n");
        assert_eq!(
            edge_shifts,
            blocks.iter().filter(|(c, p, _)| edge_shift(c, p)).count()
        );
        assert_eq!(edge_shifts, 17580);
        assert!(blocks
            .iter()
            .all(|(c, p, _)| !(is_wgmma(c) && edge_shift(c, p))));
        let tma_stores = with_line("#define GT_STORE_D_TMA 1\n");
        assert_eq!(
            tma_stores,
            blocks
                .iter()
                .filter(|(c, p, _)| crate::space::constraints::stores_d_by_tensor_map(c, p))
                .count()
        );
        assert_eq!(tma_stores, 1728);
        assert_eq!(with_line("#define GT_C_STEPS "), 48);
        assert_eq!(
            format!("{:x}", before.finalize()),
            "ea30ce12f5f2a5ec57435c43a27429bf0ad96d7892efe3681aafedf2e2ad146b"
        );
        assert_eq!(count(&|_| true), 37140);
        assert_eq!(count(&is_wgmma), 8496);
        assert_eq!(count(&|c| c.pw > 0), 4536);
        assert_eq!(count(&|c| c.sab > 0), 3744);
        assert_eq!(count(&|c| c.gsu_algo == GsuAlgo::StreamK), 4980);
        assert_eq!(count(&|c| c.sums_splits_in_kernel()), 7488);
        assert_eq!(count(&|c| c.pk > 0), 1080);
        assert_eq!(count(&persistent_stream_k), 216);
        assert_eq!(
            format!("{:x}", h.finalize()),
            "efa5325b7af4585f2e770dc993f60bd637b64761f4e02bcb59b6d6f38422b83f"
        );
    }
}
