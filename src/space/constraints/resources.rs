//! Resources: what one workgroup of the composed kernel needs from a compute unit, LDS bytes
//! and registers per thread, against what the GPU has. Not a kernel part of its own: the sum
//! of the parts' needs (the LDS layout's stages and output tile, the atom's fragments, the
//! loader's staging registers, the accumulators).
//!
//! Rules: `lds` and `registers`. [`registers_estimate`] is also the sim device's occupancy
//! estimate, and the `producer-warp` rule of [`super::warpgroup`] holds it against the share
//! each thread gets with the extra warp.

use super::atom::{fma_lane_grid, is_wgmma};
use super::lds_layout::{lds_bytes, static_lds_bytes};
use super::{fail, Violation};
use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// A rough per-thread register estimate (32-bit registers): accumulators, operand fragments
/// (doubled with PrefetchLocalRead), staging registers for global reads that do not go
/// straight to LDS, and a fixed allowance for addresses and loop state.
pub fn registers_estimate(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> u32 {
    if c.gv == 1 {
        return super::gemv::gemv_registers(c, p, hw.wave_size);
    }
    if c.fb > 0 {
        return super::flat_batch::flat_batch_registers(c, hw.wave_size);
    }
    let threads = c.threads(hw.wave_size).max(1);
    let acc = c.mt0 * c.mt1 / threads;
    let [wt0, wt1] = c.wave_tile();
    let kstep = if c.uses_matrix_cores() { c.mi[2] } else { 1 };
    let e = p.a_type.bytes() as u32;
    // Fragment bytes per lane for one K step of the wave tile, in 32-bit registers; wgmma
    // reads both operands from LDS through descriptors and holds no fragments.
    // The FMA path's lanes each hold one k of their FM rows of A and FN columns of B, in f32.
    let frag = if is_wgmma(c) {
        0
    } else if !c.uses_matrix_cores() {
        fma_lane_grid(wt0, wt1, hw.wave_size).map_or(wt0 + wt1, |(lm, ln)| wt0 / lm + wt1 / ln)
    } else {
        ((wt0 + wt1) * kstep * e).div_ceil(4 * hw.wave_size)
    };
    let frags = frag * (1 + c.plr);
    let loads_a = c.mt0 * c.depth_u / (threads * c.grvw.max(1));
    let loads_b = c.mt1 * c.depth_u / (threads * c.grvw.max(1));
    let staging = if hw.vendor == crate::hw::Vendor::Nvidia && c.pgr >= 2 {
        // cp.async writes LDS directly, except the K-contiguous operands of the FMA path and
        // the M- or N-contiguous ones with TransposeLDS, which pass through registers to be
        // transposed (kernels/loader/gt_transpose_loader.h, gt_kpack_loader.h).
        if c.uses_matrix_cores() {
            // TransposeLDS: the operands it transposes pass through registers.
            let [a, b] = super::transposed_operands(c, p);
            (u32::from(a) * loads_a + u32::from(b) * loads_b) * c.grvw * e / 4
        } else {
            let a = if p.k_contiguous(true) { loads_a } else { 0 };
            let b = if p.k_contiguous(false) { loads_b } else { 0 };
            (a + b) * c.grvw * e / 4
        }
    } else {
        (loads_a + loads_b) * c.grvw * e / 4
    };
    // Addresses and loop state. The warpgroup path outside stream-K needs fewer: ptxas gave
    // accumulators + 26 for 64x64 (128 threads), 128x256 (256 and 512 threads) and 256x128
    // (1024 threads) tiles, and for 128x320 on four warpgroups with the producer warp (80
    // accumulators, 106 registers: more than the 96 its 544 threads get; 128x272 there, 68
    // accumulators, compiled and ran).
    // The persistent kernel keeps its tile loop and the output staging's bookkeeping live
    // across the main loop: ptxas used 166 registers for 128 accumulators (128x256 on two
    // warpgroups of one 64-row slice each, 168 to spare with the producer warp) and spilled
    // 1096 bytes with 136 (128x272 on two warpgroups of 128x136). Each further 64-row slice
    // of a warpgroup's tile costs more: 128x256 on two warpgroups of two slices each (128x128)
    // spilled 560 bytes at 168.
    // Its stream-K walks a range of units and sums split tiles into the accumulators: ptxas
    // used 168 registers without spilling where whole tiles took 162 (128x256, two
    // warpgroups); counted as 2 more, so that tile stays in. Beside a producer warpgroup's
    // 232 registers, each further slice costs stream-K 26 more: 192x192 (warpgroups of three
    // slices, 144 accumulators) spilled 232 bytes and swapped 160x256 (two slices, 160) 4,
    // where 256x128 (two slices, 128) and their whole tiles spilled none.
    let fixed = if c.pk > 0 {
        let [wt_m, wt_n] = super::atom::warpgroup_tile(c);
        let slices = if c.sab == 1 { wt_n } else { wt_m } / 64;
        let stream_k = match (c.gsu_algo == GsuAlgo::StreamK, c.pw) {
            (false, _) => 0,
            (true, 2) => 2 + 26 * slices.saturating_sub(1),
            (true, _) => 2,
        };
        38 + 8 * slices.saturating_sub(1) + stream_k
    } else if is_wgmma(c) && c.gsu_algo != GsuAlgo::StreamK {
        26
    } else {
        40
    };
    acc + frags + staging + fixed
}

/// Workgroups of `c` resident on one compute unit at once, by LDS, threads and registers
/// (the sim models' occupancy; at least one where none fits, which the rules refuse anyway).
pub fn workgroups_per_cu(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> u64 {
    let threads = (c.threads(hw.wave_size) * c.consumer_sets()).max(1) as u64;
    let by_lds = hw.lds_bytes_per_cu / lds_bytes(c, p).max(1);
    let by_threads = (hw.max_waves_per_cu * hw.wave_size) as u64 / threads;
    let by_regs = hw.registers_per_cu / (registers_estimate(c, p, hw).max(1) as u64 * threads);
    by_lds.min(by_threads).min(by_regs).max(1)
}

/// `lds`: the stages and the staged output tile, and what the kernel declares itself, fit a
/// workgroup's LDS.
pub(super) fn lds(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let lds = lds_bytes(c, p) + static_lds_bytes(c, p);
    if lds > hw.lds_bytes_per_workgroup {
        return fail(
            "lds",
            format!(
                "needs {lds} bytes of LDS, {} has {} per workgroup",
                hw.name, hw.lds_bytes_per_workgroup
            ),
        );
    }
    Ok(())
}

/// `registers`: the estimate is within the per-thread cap and the share of the register
/// file each thread of the workgroup gets.
pub(super) fn registers(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
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
    let share = hw.register_share(threads);
    if regs > share {
        return fail(
            "registers",
            format!(
                "estimated {regs} registers per thread, but {threads} threads get {share} each"
            ),
        );
    }
    Ok(())
}
