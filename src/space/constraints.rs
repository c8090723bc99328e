//! Constraints: which configs are valid for a (problem, hw) pair, and why not.
//!
//! These rules are the contract between the space and the kernel template in `kernels/`:
//! every config that passes here must compile and run correctly. Each rule returns a
//! [`Violation`] naming the rule, so a rejected LLM suggestion can be explained back to it.
//!
//! The warpgroup instruction (MI 64x8x16, `wgmma` on sm_90a) has its own rule, `wgmma`: its
//! tiles are per warpgroup of 4 warps rather than per warp, and its LDS layout is fixed (the
//! 128-byte swizzle the instruction's descriptors read).

use serde::{Deserialize, Serialize};

use super::config::{GsuAlgo, KernelConfig};
use crate::hw::HwSpec;
use crate::problem::{DataType, GemmProblem};

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

/// The warpgroup matrix instruction (`wgmma`, sm_90a): 64 rows per warpgroup, N granularity 8
/// (the instruction's N is the warpgroup tile's N), K = 16 (32 bytes of 16-bit K).
pub const WGMMA_MI: [u32; 3] = [64, 8, 16];

/// The warpgroup instruction's shape for an input type: 32 bytes of K, so K = 32 for 8-bit
/// types.
pub fn wgmma_mi(t: DataType) -> [u32; 3] {
    [64, 8, 32 / t.bytes().clamp(1, 2) as u32]
}

/// Whether a config uses the warpgroup (`wgmma`) path of the template.
pub fn is_wgmma(c: &KernelConfig) -> bool {
    c.mi[0] == 64 && c.mi[1] == 8
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

/// Elements along M (N) of one LDS chunk of an M-major A (N-major B) on the warpgroup path, or
/// `None` for a K-major operand. The widest of 64, 32 and 16 elements (a 128-, 64- or 32-byte
/// swizzle) that divides the tile and, when several warpgroups share the operand's extent,
/// each warpgroup's part of it: a descriptor starts at a whole chunk. The kernel
/// (`GtWgmmaMnTile`) and its tensor-map boxes use the same chunk.
pub fn mn_chunk(cfg: &KernelConfig, p: &GemmProblem, is_a: bool) -> Option<u32> {
    let k_major = if is_a {
        p.trans_a.is_t()
    } else {
        !p.trans_b.is_t()
    };
    if k_major {
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

/// Whether the tensor memory accelerator can read an operand in place: its rows and batches
/// start on 16-byte boundaries.
pub fn tma_readable(p: &GemmProblem, is_a: bool) -> bool {
    let (t, ld, stride) = if is_a {
        (p.a_type, p.lda, p.stride_a)
    } else {
        (p.b_type, p.ldb, p.stride_b)
    };
    let unit = (16 / t.bytes().max(1)) as i64;
    ld % unit == 0 && (p.batch <= 1 || stride % unit == 0)
}

/// Which operands (A, B) a warpgroup kernel packs K-major into its workspace before the main
/// kernel (kernels/loader/gt_pack_kernel.h): those the tensor maps cannot read in place, and
/// M- or N-major ones whose tiles are no whole number of LDS chunks.
pub fn packed_operands(c: &KernelConfig, p: &GemmProblem) -> [bool; 2] {
    if !is_wgmma(c) {
        return [false, false];
    }
    let pack = |is_a: bool| {
        let mn_major = if is_a {
            !p.trans_a.is_t()
        } else {
            p.trans_b.is_t()
        };
        !tma_readable(p, is_a) || (mn_major && mn_chunk(c, p, is_a).is_none())
    };
    [pack(true), pack(false)]
}

/// Most persistent workgroups per compute unit a stream-K kernel launches (GlobalSplitU with
/// GlobalSplitUAlgorithm 2): beyond what can be resident at once, more only adds fix-ups.
pub const MAX_STREAM_K_PER_CU: u32 = 4;
/// Most f32 accumulators per thread, and threads per workgroup, of a stream-K kernel (see the
/// `split-k` rule).
pub const MAX_STREAM_K_ACCUMULATORS: u32 = 64;
pub const MAX_STREAM_K_THREADS: u32 = 256;

/// Most PrefetchGlobalRead stages: the warpgroup path streams deeper pipelines (a memory-bound
/// shape needs several tiles in flight per SM to cover the DRAM latency; one 64x64 bf16 tile
/// per SM keeps 16 KiB stages, and 13 of them fit in LDS).
pub const MAX_STAGES: u32 = 4;
pub const MAX_STAGES_WGMMA: u32 = 16;

/// Alignment slack of the wgmma LDS layout: the kernel aligns its tiles to the 1024-byte
/// period of the 128-byte swizzle at run time.
const WGMMA_LDS_ALIGN: u64 = 1024;

/// LDS bytes one workgroup uses: the main-loop stages, or the f32 epilogue staging tile if
/// that is larger (the epilogue reuses the same allocation).
pub fn lds_bytes(c: &KernelConfig, p: &GemmProblem) -> u64 {
    let ea = p.a_type.bytes() as u64;
    let eb = p.b_type.bytes() as u64;
    let (mt0, mt1, du) = (c.mt0 as u64, c.mt1 as u64, c.depth_u as u64);
    if is_wgmma(c) {
        // Unpadded K-major tiles (the swizzle replaces padding), plus the alignment slack.
        let main = c.pgr.max(1) as u64 * du * (mt0 * ea + mt1 * eb);
        return staged_output(c, main) + WGMMA_LDS_ALIGN;
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

/// Registers each of `threads` threads of one workgroup gets: every thread of a launch gets
/// the same allocation, in steps of 8.
fn register_share(hw: &HwSpec, threads: u32) -> u32 {
    (hw.registers_per_cu / threads.max(1) as u64).min(u32::MAX as u64) as u32 & !7
}

/// A rough per-thread register estimate (32-bit registers): accumulators, operand fragments
/// (doubled with PrefetchLocalRead), staging registers for global reads that do not go
/// straight to LDS, and a fixed allowance for addresses and loop state.
pub fn registers_estimate(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> u32 {
    let threads = c.threads(hw.wave_size).max(1);
    let acc = c.mt0 * c.mt1 / threads;
    let [wt0, wt1] = c.wave_tile();
    let kstep = if c.uses_matrix_cores() { c.mi[2] } else { 1 };
    let e = p.a_type.bytes() as u32;
    // Fragment bytes per lane for one K step of the wave tile, in 32-bit registers; wgmma
    // reads both operands from LDS through descriptors and holds no fragments.
    let frag = if is_wgmma(c) {
        0
    } else {
        ((wt0 + wt1) * kstep * e).div_ceil(4 * hw.wave_size)
    };
    let frags = frag * (1 + c.plr);
    let loads_a = c.mt0 * c.depth_u / (threads * c.grvw.max(1));
    let loads_b = c.mt1 * c.depth_u / (threads * c.grvw.max(1));
    let staging = if hw.vendor == crate::hw::Vendor::Nvidia && c.pgr >= 2 {
        0 // cp.async writes LDS directly
    } else {
        (loads_a + loads_b) * c.grvw * e / 4
    };
    // Addresses and loop state. The warpgroup path outside stream-K needs fewer: ptxas gave
    // accumulators + 26 for 64x64 (128 threads), 128x256 (256 and 512 threads) and 256x128
    // (1024 threads) tiles; 30 keeps a margin.
    let fixed = if is_wgmma(c) && c.gsu_algo != GsuAlgo::StreamK {
        30
    } else {
        40
    };
    acc + frags + staging + fixed
}

/// The rules in the order [`check`] applies them (used to measure progress when repairing).
pub const RULE_ORDER: &[&str] = &[
    "positive",
    "threads",
    "range",
    "lds-layout",
    "tile-granularity",
    "matrix-instruction",
    "dtype",
    "wgmma",
    "producer-warp",
    "swap-ab",
    "wave-tile",
    "depth-u",
    "global-read",
    "alignment",
    "store",
    "store-alignment",
    "lds",
    "registers",
    "split-k",
    "tile-vs-problem",
];

/// Checks every rule; the first one broken is returned.
pub fn check(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let wave = hw.wave_size;
    let threads = c.threads(wave);
    for (name, v) in [
        ("MacroTile0", c.mt0),
        ("MacroTile1", c.mt1),
        ("DepthU", c.depth_u),
        ("WavesM", c.wg[0]),
        ("WavesN", c.wg[1]),
        ("GlobalSplitU", c.gsu),
        ("WorkGroupMapping", c.wgm),
        ("GlobalReadVectorWidth", c.grvw),
        ("StoreVectorWidth", c.svw),
        ("PrefetchGlobalRead", c.pgr),
    ] {
        if v == 0 {
            return fail("positive", format!("{name} must be at least 1"));
        }
    }
    if threads > hw.max_threads_per_workgroup {
        return fail(
            "threads",
            format!(
                "{} waves x {} lanes = {} threads exceeds {} per workgroup",
                c.wg[0] * c.wg[1],
                wave,
                threads,
                hw.max_threads_per_workgroup
            ),
        );
    }
    let max_stages = if is_wgmma(c) {
        MAX_STAGES_WGMMA
    } else {
        MAX_STAGES
    };
    if c.pgr > max_stages || c.plr > 1 || c.swizzle > 1 {
        return fail(
            "range",
            format!("PrefetchGlobalRead is 1..{max_stages} (1..{MAX_STAGES_WGMMA} with MI64x8x16), PrefetchLocalRead and LdsSwizzle are 0 or 1"),
        );
    }
    if c.swizzle == 1 && (c.lpa != 0 || c.lpb != 0) {
        return fail(
            "lds-layout",
            "LdsSwizzle=1 replaces padding: LdsPadA and LdsPadB must be 0".into(),
        );
    }
    if !c.mt0.is_multiple_of(16) || !c.mt1.is_multiple_of(16) || !c.depth_u.is_multiple_of(8) {
        return fail(
            "tile-granularity",
            "MacroTile0/1 must be multiples of 16 and DepthU a multiple of 8".into(),
        );
    }
    // Matrix instruction valid for this dtype on this arch.
    let shapes = hw.mi_shapes(p.a_type);
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
    if p.a_type.is_8bit() && !is_wgmma(c) {
        return fail(
            "dtype",
            format!(
                "{} inputs run on the warpgroup instruction only (MI{}x{}x{}, NVIDIA sm_90a, layout TN): the mma.sync, MFMA and FMA paths have no 8-bit atoms",
                p.a_type,
                wgmma_mi(p.a_type)[0],
                wgmma_mi(p.a_type)[1],
                wgmma_mi(p.a_type)[2]
            ),
        );
    }
    if p.compute_type != crate::problem::ComputeType::F32 {
        return fail(
            "dtype",
            format!(
                "compute type {} is not supported (use c_f32_r)",
                p.compute_type
            ),
        );
    }
    if is_wgmma(c) {
        check_wgmma(c, p, hw)?;
    }
    check_producer_warp(c, p, hw)?;
    check_swap_ab(c)?;
    // Wave tiles must be whole matrix instructions (or whole FMA thread tiles).
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
        if per_lane % wave != 0 || per_lane / wave > 64 {
            return fail(
                "wave-tile",
                format!("FMA wave tile {wt0}x{wt1} must give each of {wave} lanes 1..64 outputs"),
            );
        }
    }
    // Global reads: whole vectors of at most 16 bytes. Tiles need not divide evenly among the
    // threads: the last load round of the template is partial then.
    let ea = p.a_type.bytes() as u32;
    if c.grvw * ea > 16 || !c.grvw.is_power_of_two() {
        return fail(
            "global-read",
            format!(
                "GlobalReadVectorWidth {} x {} bytes must be a power of two of at most 16 bytes",
                c.grvw, ea
            ),
        );
    }
    if !c.depth_u.is_multiple_of(c.grvw) {
        return fail(
            "global-read",
            "DepthU must be a multiple of GlobalReadVectorWidth".into(),
        );
    }
    // The warpgroup path reads through tensor maps, or packs what they cannot read.
    if !is_wgmma(c) && (p.lda % c.grvw as i64 != 0 || p.ldb % c.grvw as i64 != 0) {
        return fail(
            "alignment",
            format!(
                "lda={} and ldb={} must be multiples of GlobalReadVectorWidth {} for aligned vector loads",
                p.lda, p.ldb, c.grvw
            ),
        );
    }
    if !is_wgmma(c)
        && p.batch > 1
        && (p.stride_a % c.grvw as i64 != 0 || p.stride_b % c.grvw as i64 != 0)
    {
        return fail(
            "alignment",
            "batch strides of A and B must be multiples of GlobalReadVectorWidth".into(),
        );
    }
    let ed = p.d_type.bytes() as u32;
    if c.svw * ed > 16 || !c.svw.is_power_of_two() || !c.mt0.is_multiple_of(c.svw) {
        return fail(
            "store",
            format!(
                "StoreVectorWidth {} must be a power of two, at most 16 bytes and divide MacroTile0",
                c.svw
            ),
        );
    }
    if p.ldd % c.svw as i64 != 0 || (p.beta != 0.0 && p.ldc % c.svw as i64 != 0) {
        return fail(
            "store-alignment",
            format!("ldd/ldc must be multiples of StoreVectorWidth {}", c.svw),
        );
    }
    // Resources.
    let lds = lds_bytes(c, p);
    if lds > hw.lds_bytes_per_workgroup {
        return fail(
            "lds",
            format!(
                "needs {lds} bytes of LDS, {} has {} per workgroup",
                hw.name, hw.lds_bytes_per_workgroup
            ),
        );
    }
    let regs = registers_estimate(c, p, hw);
    let reg_cap = hw.max_registers_per_thread;
    if regs > reg_cap {
        return fail(
            "registers",
            format!("estimated {regs} registers per thread exceeds {reg_cap}"),
        );
    }
    // A workgroup must fit the register file: with 1024 threads each gets 64 registers, and
    // the compiler spills what does not fit (the producer warp's share: `producer-warp`).
    let threads = c.threads(hw.wave_size).max(1);
    let share = register_share(hw, threads);
    if regs > share {
        return fail(
            "registers",
            format!(
                "estimated {regs} registers per thread, but {threads} threads get {share} each"
            ),
        );
    }
    // Problem fit: split-K must leave every split at least one DepthU iteration, and tiles
    // far larger than the problem only waste work.
    let iters = (p.k as u64).div_ceil(c.depth_u as u64);
    if c.gsu_algo == GsuAlgo::StreamK {
        let tiles = (p.m as u64).div_ceil(c.mt0 as u64)
            * (p.n as u64).div_ceil(c.mt1 as u64)
            * p.batch as u64;
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
        // threads (128 registers each), so stream-K stays within both.
        let threads = c.threads(hw.wave_size).max(1);
        let acc = c.mt0 * c.mt1 / threads;
        if acc > MAX_STREAM_K_ACCUMULATORS || threads > MAX_STREAM_K_THREADS {
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
    let cap = |dim: i64| (dim.max(16) as u64).next_power_of_two();
    // Swapped, N is cut into the instruction's 64-row slices: 64 is its smallest N tile.
    let min_n = if c.sab != 0 { 64 } else { 16 };
    if c.mt0 as u64 > cap(p.m) || c.mt1 as u64 > cap(p.n).max(min_n) {
        return fail(
            "tile-vs-problem",
            format!(
                "MacroTile {}x{} is larger than the problem {}x{} needs",
                c.mt0, c.mt1, p.m, p.n
            ),
        );
    }
    if p.c_type.is_8bit()
        || p.d_type.is_8bit()
        || matches!(p.a_type, DataType::F32) && p.d_type != DataType::F32 && p.d_type != p.c_type
    {
        return fail(
            "dtype",
            format!(
                "output types c={} d={} are not supported with a={}",
                p.c_type, p.d_type, p.a_type
            ),
        );
    }
    Ok(())
}

/// The `producer-warp` rule: warp specialisation exists where one thread's tensor-map loads
/// can feed the warpgroups (the wgmma path), outside stream-K (whose single pipeline runs
/// across tiles with the workgroup's barriers in it), and the extra warp must fit: in the
/// threads of a workgroup, and in the register file beside the computing threads.
fn check_producer_warp(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
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
fn check_swap_ab(c: &KernelConfig) -> Result<(), Violation> {
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
fn check_wgmma(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
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
    // first: packed_operands), whose boxes are at most 256 rows.
    if c.mt0 > 256 || c.mt1 > 256 {
        return fail(
            rule,
            "MI64x8x16 tensor-map boxes are at most 256 rows: MacroTile <= 256".into(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Trans;

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
        assert_eq!(
            rule(&KernelConfig { pw: 2, ..ok }, &seed, &hw),
            "producer-warp"
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
        // Layouts with an M- or N-contiguous operand.
        for (ta, tb) in [
            (Trans::N, Trans::N),
            (Trans::T, Trans::T),
            (Trans::N, Trans::T),
        ] {
            let mut q = p.clone();
            (q.trans_a, q.trans_b) = (ta, tb);
            q.fill_defaults();
            let v = check(&base, &q, &hw).unwrap_err();
            assert_eq!(v.rule, "wgmma");
            assert!(v.message.contains("K-contiguous"), "{v}");
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
