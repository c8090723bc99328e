//! Tile schedulers: how the output tiles and the K dimension are shared among workgroups
//! (data-parallel, the split-K kinds, stream-K's persistent workgroups). Mirrors the tile
//! scheduler part of the kernel template.
//!
//! Rule: `split-k` (every split keeps at least one DepthU iteration; stream-K's iteration
//! count, accumulators, threads, pipeline and workgroups per compute unit stay within what
//! its tile loop and fix-up handle).

use super::{fail, Violation};
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
    Ok(())
}
