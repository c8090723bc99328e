//! Shared-memory tile layouts: padded rows or the XOR swizzle (the warpgroup path's fixed
//! 128-byte swizzle), and how many bytes the stages and the staged output tile take. Mirrors
//! the LDS tile layout and swizzle part of the kernel template.
//!
//! Rule: `lds-layout` (the swizzle replaces padding). [`lds_bytes`] is what the `lds` rule of
//! [`super::resources`] holds against the GPU, what code generation asks for as dynamic shared
//! memory, and what the sim device's occupancy model uses.

use super::atom::is_wgmma;
use super::{fail, Violation};
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

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
