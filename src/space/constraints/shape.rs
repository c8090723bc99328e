//! The workgroup's shape: its parameters are whole, its threads fit, its pipeline depth and
//! LDS switches are in range, its tiles have the granularity every part assumes, and they are
//! not far larger than the problem. Mirrors what the kernel template's entry (`gemm.hip`)
//! takes before it composes the parts: the macro tile, the waves and the stage count.
//!
//! Rules: `positive`, `threads`, `range`, `tile-granularity`, `tile-vs-problem`.

use super::atom::is_wgmma;
use super::{fail, Violation};
use crate::hw::HwSpec;
use crate::problem::GemmProblem;
use crate::space::config::KernelConfig;

/// Most PrefetchGlobalRead stages: the warpgroup path streams deeper pipelines (a memory-bound
/// shape needs several tiles in flight per SM to cover the DRAM latency; one 64x64 bf16 tile
/// per SM keeps 16 KiB stages, and 13 of them fit in LDS).
pub const MAX_STAGES: u32 = 4;
pub const MAX_STAGES_WGMMA: u32 = 16;

/// `positive`: every size and count is at least 1.
pub(super) fn positive(c: &KernelConfig) -> Result<(), Violation> {
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
    Ok(())
}

/// `threads`: the waves fit in one workgroup.
pub(super) fn threads(c: &KernelConfig, hw: &HwSpec) -> Result<(), Violation> {
    let wave = hw.wave_size;
    let threads = c.threads(wave);
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
    Ok(())
}

/// `range`: pipeline depth (deeper on the warpgroup path), the LDS switches, and three
/// warpgroups along M only on the warpgroup path.
pub(super) fn range(c: &KernelConfig) -> Result<(), Violation> {
    let max_stages = if is_wgmma(c) {
        MAX_STAGES_WGMMA
    } else {
        MAX_STAGES
    };
    if c.wg[0] == super::warpgroup::THREE_WARPGROUPS && !is_wgmma(c) {
        return fail(
            "range",
            "WavesM 12 is three warpgroups of the warpgroup path (MI64x8x16): the other paths take 1, 2, 4 or 8 waves along M".into(),
        );
    }
    if c.pgr > max_stages || c.plr > 1 || c.swizzle > 1 {
        return fail(
            "range",
            format!("PrefetchGlobalRead is 1..{max_stages} (1..{MAX_STAGES_WGMMA} with MI64x8x16), PrefetchLocalRead and LdsSwizzle are 0 or 1"),
        );
    }
    Ok(())
}

/// `tile-granularity`: the tile steps every loader, layout and atom assumes. Unswapped on the
/// warpgroup path MacroTile1 is the instruction's N, whose step is 8, and so is every part's
/// there (8-row tensor-map box groups, 8-column output fragments): tiles such as 72 or 120
/// columns cut N into one wave of tiles where steps of 16 leave a part idle or add a wave.
pub(super) fn tile_granularity(c: &KernelConfig) -> Result<(), Violation> {
    let n_step = if is_wgmma(c) && c.sab == 0 { 8 } else { 16 };
    if !c.mt0.is_multiple_of(16) || !c.mt1.is_multiple_of(n_step) || !c.depth_u.is_multiple_of(8) {
        return fail(
            "tile-granularity",
            "MacroTile0/1 must be multiples of 16 (MacroTile1 of 8 on the unswapped warpgroup path) and DepthU a multiple of 8".into(),
        );
    }
    Ok(())
}

/// `tile-vs-problem`: tiles far larger than the problem only waste work.
pub(super) fn tile_vs_problem(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
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
    Ok(())
}
