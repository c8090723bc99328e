//! Source generation: a [`KernelConfig`] and a problem become one HIP C++ translation unit
//! (the template in `kernels/` specialised by `#define`s) plus the [`LaunchPlan`] to run it.
//!
//! The kernel files are embedded at build time and their quoted `#include`s are expanded here
//! ([`expand_includes`]), so a runtime compiler (NVRTC, hiprtc) needs no include path, while
//! nvcc/hipcc can compile the same files from disk with `-I kernels`. Their hash is part of
//! every cache and database key ([`template_hash`]). [`defines`] is the specialisation alone:
//! build.rs compiles the default kernel set from those blocks (`kernels/default_set.txt`).
//! For the warpgroup instruction (MI 64x8x16) the specialisation also carries the one device
//! function whose shape depends on the config: the `wgmma` of the warpgroup tile's N
//! ([`wgmma_function`]), whose inline assembly needs one operand per accumulator register.

use sha2::{Digest, Sha256};

use super::{EpiloguePlan, LaunchPlan, Target};
use crate::hw::Vendor;
use crate::plant::PlantKind;
use crate::problem::{DataType, GemmProblem};
use crate::space::constraints::{is_wgmma, warpgroup_tile};
use crate::space::{GsuAlgo, KernelConfig};

/// The kernel sources, embedded at build time.
pub const ARGS_HEADER: &str = include_str!("../../kernels/gt_args.h");
pub const PLATFORM_HEADER: &str = include_str!("../../kernels/gt_platform.h");
pub const MMA_HEADER: &str = include_str!("../../kernels/gt_mma.h");
pub const MMA_NVIDIA_HEADER: &str = include_str!("../../kernels/gt_mma_nvidia.h");
pub const MMA_AMD_HEADER: &str = include_str!("../../kernels/gt_mma_amd.h");
pub const GEMM_TEMPLATE: &str = include_str!("../../kernels/gemm.hip");
pub const REFERENCE_KERNEL: &str = include_str!("../../kernels/reference.hip");

/// Kernel files a quoted `#include` may name, by file name. A file missing here (the AMD atoms
/// when they are not part of this build) is left as an `#include` line: fine inside a branch
/// the preprocessor skips, a clear compiler error otherwise.
pub const KERNEL_FILES: &[(&str, &str)] = &[
    ("gt_args.h", ARGS_HEADER),
    ("gt_platform.h", PLATFORM_HEADER),
    ("gt_mma.h", MMA_HEADER),
    ("gt_mma_nvidia.h", MMA_NVIDIA_HEADER),
    ("gt_mma_amd.h", MMA_AMD_HEADER),
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

/// The launch geometry of a config for a problem.
pub fn launch_plan(cfg: &KernelConfig, p: &GemmProblem, target: &Target) -> LaunchPlan {
    let wave = match target.vendor {
        Vendor::Nvidia => 32,
        Vendor::Amd => 64,
    };
    let tiles_m = (p.m as u64).div_ceil(cfg.mt0 as u64);
    let tiles_n = (p.n as u64).div_ceil(cfg.mt1 as u64);
    let block = [cfg.launch_threads(wave), 1, 1];
    let shared_bytes = crate::space::constraints::lds_bytes(cfg, p) as u32;
    let tma_rows = uses_tma(cfg, target).then_some([cfg.mt0, cfg.mt1]);
    let tiles = tiles_m * tiles_n * p.batch as u64;
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
            tma_rows,
            epilogue: None,
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
    // The split-K epilogue: 256 threads of 4 consecutive rows each along M, one column of
    // one batch per grid row (columns past the grid's 65535 rows loop in the kernel).
    let epilogue = (cfg.gsu > 1 && !cfg.sums_splits_in_kernel()).then(|| EpiloguePlan {
        symbol: format!("{}_epilogue", cfg.name()),
        grid: [
            (p.m as u64).div_ceil(256 * 4).min(u32::MAX as u64) as u32,
            (p.n as u64).clamp(1, 65535) as u32,
            p.batch.max(1) as u32,
        ],
        block: [256, 1, 1],
    });
    LaunchPlan {
        symbol: cfg.name(),
        grid: [(tiles_m * tiles_n) as u32, cfg.gsu, p.batch as u32],
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
        tma_rows,
        epilogue,
    }
}

/// Bytes of one f32 output tile as a workgroup stages it (a partial tile in the workspace).
fn staged_tile_bytes(cfg: &KernelConfig) -> u64 {
    cfg.mt0 as u64 * cfg.mt1 as u64 * 4
}

/// Whether a kernel loads its operand tiles through the tensor memory accelerator: the
/// warpgroup path (NVIDIA sm_90a), whose 128-byte-swizzled K-major tiles are exactly what a
/// tensor map with 128-byte swizzle writes.
pub fn uses_tma(cfg: &KernelConfig, target: &Target) -> bool {
    target.vendor == Vendor::Nvidia && is_wgmma(cfg)
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
pub fn defines(cfg: &KernelConfig, p: &GemmProblem, target: &Target) -> String {
    let cfg = cfg.canonical();
    let wave = match target.vendor {
        Vendor::Nvidia => 32,
        Vendor::Amd => 64,
    };
    let mut defs = String::new();
    let mut def = |k: &str, v: String| defs.push_str(&format!("#define {k} {v}\n"));
    def("GT_KERNEL_NAME", cfg.name());
    def("GT_TARGET_ARCH", format!("\"{}\"", target.arch));
    def(
        "GT_VENDOR_AMD",
        u8::from(target.vendor == Vendor::Amd).to_string(),
    );
    def("GT_TYPE_A", c_type(p.a_type).into());
    def("GT_TYPE_B", c_type(p.b_type).into());
    def("GT_TYPE_C", c_type(p.c_type).into());
    def("GT_TYPE_D", c_type(p.d_type).into());
    def("GT_TRANS_A", u8::from(p.trans_a.is_t()).to_string());
    def("GT_TRANS_B", u8::from(p.trans_b.is_t()).to_string());
    def("GT_MT0", cfg.mt0.to_string());
    def("GT_MT1", cfg.mt1.to_string());
    def("GT_DU", cfg.depth_u.to_string());
    def("GT_MI_M", cfg.mi[0].to_string());
    def("GT_MI_N", cfg.mi[1].to_string());
    def("GT_MI_K", cfg.mi[2].to_string());
    def("GT_WG0", cfg.wg[0].to_string());
    def("GT_WG1", cfg.wg[1].to_string());
    def("GT_THREADS", cfg.threads(wave).to_string());
    def("GT_PGR", cfg.pgr.to_string());
    def("GT_PLR", cfg.plr.to_string());
    def("GT_LPA", cfg.lpa.to_string());
    def("GT_LPB", cfg.lpb.to_string());
    def("GT_SWIZZLE", cfg.swizzle.to_string());
    def("GT_GSU", cfg.gsu.to_string());
    def(
        "GT_STREAM_K",
        u8::from(cfg.gsu_algo == GsuAlgo::StreamK).to_string(),
    );
    def(
        "GT_GSU_ATOMIC",
        u8::from(cfg.gsu > 1 && cfg.gsu_algo == GsuAlgo::Atomic).to_string(),
    );
    // Named only when set, like the producer warp below.
    if cfg.sums_splits_in_kernel() {
        def("GT_GSU_SINGLE_KERNEL", "1".into());
    }
    def("GT_WGM", cfg.wgm.to_string());
    def("GT_GRVW", cfg.grvw.to_string());
    def("GT_SVW", cfg.svw.to_string());
    def("GT_SU", cfg.su.to_string());
    def("GT_BETA_ZERO", u8::from(p.beta == 0.0).to_string());
    if is_wgmma(&cfg) {
        // The instruction's N runs along the warpgroup tile's N, or its M when swapped.
        let [wt_m, wt_n] = warpgroup_tile(&cfg);
        let n = if cfg.sab > 0 { wt_m } else { wt_n };
        def("GT_WGMMA", "1".into());
        def("GT_WGMMA_N", n.to_string());
        // Named only when set: the define blocks (and compile-cache keys) of kernels without
        // a producer warp stay as they were.
        if cfg.pw > 0 {
            def("GT_PRODUCER_WARP", "1".into());
        }
        if cfg.sab > 0 {
            def("GT_SWAP_AB", "1".into());
        }
        defs.push_str(&wgmma_function(n, p.a_type));
    }
    defs
}

/// The device function `gt_wgmma_m64k16(d, desc_a, desc_b)`: one
/// `wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<t>.<t>` adding A (64 x 16) times B (16 x n),
/// both K-major in shared memory and named by descriptors, into the n/2 f32 registers `d`
/// (scale-d = 1: accumulate; no negation, no transposition). Written with plain C types: it
/// precedes the template's headers in the translation unit. No line is indented: the default
/// kernel set stores define blocks line-trimmed, and an AOT lookup compares them exactly.
pub fn wgmma_function(n: u32, t: DataType) -> String {
    let regs = (n / 2) as usize;
    let ptx_type = if t == DataType::F16 { "f16" } else { "bf16" };
    let outs = (0..regs)
        .map(|i| format!("%{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let constraints = (0..regs)
        .map(|i| format!("\"+f\"(d[{i}])"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "__device__ __forceinline__ void gt_wgmma_m64k16(float (&d)[{regs}], unsigned long long desc_a,\n\
         unsigned long long desc_b) {{\n\
         asm volatile(\n\
         \"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale}, 0;\\n\"\n\
         \"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ptx_type}.{ptx_type} \"\n\
         \"{{{outs}}}, %{da}, %{db}, p, 1, 1, 0, 0;\\n}}\\n\"\n\
         : {constraints}\n\
         : \"l\"(desc_a), \"l\"(desc_b), \"r\"(1));\n\
         }}\n",
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

    fn target() -> Target {
        Target::arch(Vendor::Nvidia, "sm_90a")
    }

    #[test]
    fn wgmma_function_has_one_operand_per_accumulator() {
        let f = wgmma_function(112, DataType::Bf16);
        assert!(f.contains("wgmma.mma_async.sync.aligned.m64n112k16.f32.bf16.bf16"));
        assert!(f.contains("float (&d)[56]"));
        assert_eq!(f.matches("\"+f\"").count(), 56);
        assert!(f.contains("%55}, %56, %57, p, 1, 1, 0, 0;"));
        assert!(f.contains("setp.ne.b32 p, %58, 0;"));
        let h = wgmma_function(8, DataType::F16);
        assert!(h.contains("m64n8k16.f32.f16.f16"));
        assert_eq!(h.matches("\"+f\"").count(), 4);
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
        // Columns past 65535 grid rows loop inside the kernel.
        let wide = GemmProblem::new(64, 100_000, 64);
        let epi = launch_plan(&cfg, &wide, &target()).epilogue.unwrap();
        assert_eq!(epi.grid, [1, 65535, 1]);
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
}
