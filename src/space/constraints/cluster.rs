//! Clusters sharing A (ClusterN), B (ClusterM) or both: what the kernel's multicast loads of a
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

/// Cluster sizes the space offers along N (ClusterN) and along M (ClusterM). Clusters of 4
/// along one direction alone ran 1.6-2.2x slower than pairs on every shape tried on an H100
/// (4096x128x4096 e4m3 on 64x32 tiles 29.2 us against 13.4 on 64x64 in pairs; 3584x160x18944
/// 124.5 against 63.6): their A boxes of 16 rows and four remote releases per stage cost more
/// than the shared reads save. Fours are offered again since an M- or N-major tile can be
/// shared in slices of K: on an H200 fours along N sharing an M-major A ran the swapped
/// 96x64 tile of 768x768x4096 NT and NN 1.17-1.19x faster than unclustered
/// (`Space::few_tile_swapped_start`), and two-dimensional blocks (2 x 4 is what the vendor
/// library runs there) take them too.
pub const CLUSTER_SIZES: [u32; 3] = [1, 2, 4];

/// Workgroups of one cluster at most: the portable limit of the hardware (eight).
pub const MAX_CLUSTER: u32 = 8;

/// `cluster`: ClusterN > 1 runs the warpgroup path with its producer warp on NVIDIA. The
/// ClusterN workgroups of a tile row share its A tile: their producers multicast slices of a
/// K-major A tile (each tensor-map box cut into ClusterN slices of whole 8-row groups) or
/// whole chunks of an M-major one (slices of every chunk's K where ClusterN does not divide
/// their number). ClusterM > 1 is the
/// same along M, sharing B among a tile column; both above 1 make a ClusterM x ClusterN
/// block of tiles, at most eight workgroups, each sharing A along its row and B along its
/// column (kernels/layout/gt_cluster_layout.h). N must come in a whole number of groups of
/// ClusterN tiles, M of ClusterM. Consumers release each slot to every workgroup that writes
/// into it; split-K over the grid keeps every split's K range the same in a cluster (its
/// partials summed by the reduction kernel or, past the mainloop's closing cluster barrier,
/// in the kernel); the stream-K kernel does not, the persistent kernel's stream-K does (its
/// clusters take their units together, each workgroup its own tile).
pub(super) fn cluster(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let rule = "cluster";
    if c.cn == 1 && c.cm == 1 {
        return Ok(());
    }
    for (param, size) in [("ClusterN", c.cn), ("ClusterM", c.cm)] {
        if !CLUSTER_SIZES.contains(&size) {
            return fail(
                rule,
                format!("{param} is one of {CLUSTER_SIZES:?}, not {size}"),
            );
        }
    }
    if c.cn * c.cm > MAX_CLUSTER {
        return fail(
            rule,
            format!(
                "a cluster holds at most {MAX_CLUSTER} workgroups: ClusterN {} x ClusterM {} is {}",
                c.cn,
                c.cm,
                c.cn * c.cm
            ),
        );
    }
    let param = if c.cn > 1 { "ClusterN" } else { "ClusterM" };
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
    if c.cn > 1 {
        shared_operand(c, p, true)?;
    }
    if c.cm > 1 {
        shared_operand(c, p, false)?;
    }
    Ok(())
}

/// The tiles along one direction of a cluster (N sharing A, or M sharing B) come in whole
/// groups, and the operand they share splits into whole shares: of a K-major tile slices of
/// every box's rows, of an M- or N-major one whole chunks or slices of every chunk's K.
fn shared_operand(c: &KernelConfig, p: &GemmProblem, along_n: bool) -> Result<(), Violation> {
    let rule = "cluster";
    let (param, size, dim, extent, tile, tile_param, operand, rows) = if along_n {
        ("ClusterN", c.cn, "N", p.n, c.mt1, "MacroTile1", "A", c.mt0)
    } else {
        ("ClusterM", c.cm, "M", p.m, c.mt0, "MacroTile0", "B", c.mt1)
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
        // M- or N-major: each workgroup loads whole chunks of it where they divide evenly,
        // else a slice of K of every chunk, in whole 8-row groups that keep the swizzle
        // period (1024 bytes) aligned.
        Some(chunk) if (rows / chunk).is_multiple_of(size) => Ok(()),
        Some(chunk) => {
            let slice = c.depth_u / size;
            let elem = if along_n { p.a_type } else { p.b_type };
            let pitch = chunk * elem.bytes() as u32;
            if c.depth_u.is_multiple_of(8 * size) && (slice * pitch).is_multiple_of(1024) {
                Ok(())
            } else {
                fail(
                    rule,
                    format!(
                        "{param} {size} shares an M- or N-major {operand} tile in whole chunks or in slices of K of 1024 bytes: it is {} chunks of {chunk}, DepthU {} in slices of {slice}",
                        rows / chunk,
                        c.depth_u
                    ),
                )
            }
        }
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
