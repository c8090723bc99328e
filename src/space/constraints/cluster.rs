//! Clusters sharing A (ClusterN): what the kernel's multicast A loads (K-major tiles in row
//! slices, M-major ones in whole chunks) and cluster-wide slot releases need (kernels/loader/gt_tma_loader.h, kernels/loader/gt_free_slots.h).
//!
//! Rule: `cluster`.

use super::atom::is_wgmma;
use super::warpgroup::{k_major_box_rows, mn_chunk, packed_operands};
use super::{fail, Violation};
use crate::hw::{HwSpec, Vendor};
use crate::problem::GemmProblem;
use crate::space::config::{GsuAlgo, KernelConfig};

/// Cluster sizes the space offers. The kernel takes any size whose A slices are whole 8-row
/// groups, but clusters of 4 ran 1.6-2.2x slower than 2 on every shape tried on an H100
/// (4096x128x4096 e4m3 on 64x32 tiles 29.2 us against 13.4 on 64x64 in pairs; 3584x160x18944
/// 124.5 against 63.6): their A boxes of 16 rows and four remote releases per stage cost more
/// than the shared reads save.
pub const CLUSTER_N_VALUES: [u32; 2] = [1, 2];

/// `cluster`: ClusterN > 1 runs the warpgroup path with its producer warp on NVIDIA, whose
/// producers multicast slices of a K-major A tile (each tensor-map box cut into ClusterN
/// slices of whole 8-row groups) or whole chunks of an M-major one (ClusterN must divide
/// their number), and whose consumers release each slot cluster-wide. The
/// cluster's workgroups take neighbouring tiles of one row, so N must come in a whole number
/// of groups of ClusterN tiles; split-K over the grid keeps every split's K range the same
/// in a cluster (its partials summed by the reduction kernel or, past the mainloop's closing
/// cluster barrier, in the kernel), stream-K does not.
pub(super) fn cluster(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> Result<(), Violation> {
    let rule = "cluster";
    if c.cn == 1 {
        return Ok(());
    }
    if !CLUSTER_N_VALUES.contains(&c.cn) {
        return fail(
            rule,
            format!("ClusterN is one of {CLUSTER_N_VALUES:?}, not {}", c.cn),
        );
    }
    if hw.vendor != Vendor::Nvidia || !is_wgmma(c) || c.pw != 1 {
        return fail(
            rule,
            "ClusterN > 1 runs the Hopper warpgroup path with its producer warp: MI64x8x16/MI64x8x32/MI64x8x8 and ProducerWarp=1".into(),
        );
    }
    if c.gsu_algo == GsuAlgo::StreamK {
        return fail(
            rule,
            "ClusterN > 1 shares whole K ranges: no stream-K".into(),
        );
    }
    let tiles_n = (p.n as u64).div_ceil(c.mt1.max(1) as u64);
    if !tiles_n.is_multiple_of(c.cn as u64) {
        return fail(
            rule,
            format!(
                "ClusterN {} takes groups of {} tiles along N: N = {} is {tiles_n} tiles of MacroTile1 {}",
                c.cn, c.cn, p.n, c.mt1
            ),
        );
    }
    // The A tile the kernel reads: a packed A is K-major whatever its stored layout.
    let [pack_a, _] = packed_operands(c, p);
    match mn_chunk(c, p, true).filter(|_| !pack_a) {
        // M-major: each workgroup loads whole chunks of it.
        Some(chunk) if (c.mt0 / chunk).is_multiple_of(c.cn) => Ok(()),
        Some(chunk) => fail(
            rule,
            format!(
                "ClusterN {} shares an M-major A tile in whole chunks: MacroTile0 {} is {} chunks of {chunk}",
                c.cn,
                c.mt0,
                c.mt0 / chunk
            ),
        ),
        None => match k_major_box_rows(c.mt0) {
            Some(rows) if rows.is_multiple_of(8 * c.cn) => Ok(()),
            _ => fail(
                rule,
                format!(
                    "ClusterN {} cuts each A box of MacroTile0 {} into slices of whole 8-row groups",
                    c.cn, c.mt0
                ),
            ),
        },
    }
}
