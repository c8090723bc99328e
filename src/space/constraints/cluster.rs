//! Clusters sharing A (ClusterN) or B (ClusterM): what the kernel's multicast loads of the
//! shared tile (K-major tiles in row slices, M- or N-major ones in whole chunks) and
//! cluster-wide slot releases need (kernels/loader/gt_tma_loader.h, kernels/loader/gt_free_slots.h).
//!
//! Rule: `cluster`.

use super::atom::is_wgmma;
use super::warpgroup::{k_major_box_rows, mn_chunk, packed_operands};
use super::{fail, Violation};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// Cluster sizes the space offers, along N (ClusterN) or M (ClusterM). The kernel takes any
/// size whose slices are whole 8-row groups, but clusters of 4 ran 1.6-2.2x slower than 2 on every shape tried on an H100
/// (4096x128x4096 e4m3 on 64x32 tiles 29.2 us against 13.4 on 64x64 in pairs; 3584x160x18944
/// 124.5 against 63.6): their A boxes of 16 rows and four remote releases per stage cost more
/// than the shared reads save.
pub const CLUSTER_SIZES: [u32; 2] = [1, 2];

/// `cluster`: ClusterN > 1 runs the warpgroup path with its producer warp on NVIDIA, whose
/// producers multicast slices of a K-major A tile (each tensor-map box cut into ClusterN
/// slices of whole 8-row groups) or whole chunks of an M-major one (ClusterN must divide
/// their number), and whose consumers release each slot cluster-wide. The
/// cluster's workgroups take neighbouring tiles of one row, so N must come in a whole number
/// of groups of ClusterN tiles. ClusterM > 1 is the same along M, sharing B; the two are not
/// both above 1; split-K over the grid keeps every split's K range the same
/// in a cluster (its partials summed by the reduction kernel or, past the mainloop's closing
/// cluster barrier, in the kernel); the stream-K kernel does not, the persistent kernel's
/// stream-K does (its clusters take their units together, each workgroup its own tile).
pub(super) fn cluster(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let rule = "cluster";
    if c.cn == 1 && c.cm == 1 {
        return Ok(());
    }
    if c.cn > 1 && c.cm > 1 {
        return fail(
            rule,
            format!(
                "clusters run along N (ClusterN, sharing A) or along M (ClusterM, sharing B), not both: ClusterN {} and ClusterM {}",
                c.cn, c.cm
            ),
        );
    }
    // The cluster's direction: along N sharing A, or along M sharing B.
    let along_n = c.cn > 1;
    let (param, size) = if along_n {
        ("ClusterN", c.cn)
    } else {
        ("ClusterM", c.cm)
    };
    if !CLUSTER_SIZES.contains(&size) {
        return fail(
            rule,
            format!("{param} is one of {CLUSTER_SIZES:?}, not {size}"),
        );
    }
    if hw.vendor != Vendor::Nvidia || !is_wgmma(c) || c.pw == 0 {
        return fail(
            rule,
            format!("{param} > 1 runs the Hopper warpgroup path with its producer warp or warpgroup: MI64x8x16/MI64x8x32/MI64x8x8 and ProducerWarp=1 or 2"),
        );
    }
    if c.gsu_algo == GsuAlgo::StreamK && c.pk == 0 {
        return fail(
            rule,
            format!("{param} > 1 shares whole K ranges: stream-K only in the persistent kernel, whose clusters take their units together"),
        );
    }
    let (dim, extent, tile, tile_param, operand, rows) = if along_n {
        ("N", p.n, c.mt1, "MacroTile1", "A", c.mt0)
    } else {
        ("M", p.m, c.mt0, "MacroTile0", "B", c.mt1)
    };
    let tiles = (extent as u64).div_ceil(tile.max(1) as u64);
    if !tiles.is_multiple_of(size as u64) {
        return fail(
            rule,
            format!(
                "{param} {size} takes groups of {size} tiles along {dim}: {dim} = {extent} is {tiles} tiles of {tile_param} {tile}"
            ),
        );
    }
    // The shared tile as the kernel reads it: a packed operand is K-major whatever its stored
    // layout.
    let packed = packed_operands(c, p)[usize::from(!along_n)];
    match mn_chunk(c, p, along_n).filter(|_| !packed) {
        // M- or N-major: each workgroup loads whole chunks of it.
        Some(chunk) if (rows / chunk).is_multiple_of(size) => Ok(()),
        Some(chunk) => fail(
            rule,
            format!(
                "{param} {size} shares an M- or N-major {operand} tile in whole chunks: it is {} chunks of {chunk}",
                rows / chunk
            ),
        ),
        None => match k_major_box_rows(rows) {
            Some(box_rows) if box_rows.is_multiple_of(8 * size) => Ok(()),
            _ => fail(
                rule,
                format!(
                    "{param} {size} cuts each {operand} box of {rows} rows into slices of whole 8-row groups"
                ),
            ),
        },
    }
}
