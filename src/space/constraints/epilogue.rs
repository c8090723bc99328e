//! Epilogues: the output tile written to D (direct vector stores, the split-K workspace, the
//! reduction), with alpha, beta and the conversion to D's type. Mirrors the epilogue part of
//! the kernel template.
//!
//! Rules: `store` (store vectors of at most 16 bytes that tile MacroTile0), `store-alignment`
//! (ldd, and ldc when C is read, keep them aligned) and `dtype` (the output types the
//! epilogue converts to; checked last, after the problem-fit rules).

use super::{fail, Violation};
use crate::problem::{DataType, GemmProblem};
use crate::space::config::KernelConfig;

/// `store`: whole store vectors of at most 16 bytes along MacroTile0.
pub(super) fn store(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
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
    Ok(())
}

/// Whether stores of `svw` elements (and reads of C, where beta reads it) start aligned in
/// every column: ldd (and ldc) are multiples of `svw`.
pub fn stores_aligned(p: &GemmProblem, svw: i64) -> bool {
    p.ldd % svw == 0 && (p.beta == 0.0 || p.ldc % svw == 0)
}

/// `store-alignment`: every store (and every read of C) starts aligned.
pub(super) fn store_alignment(c: &KernelConfig, p: &GemmProblem) -> Result<(), Violation> {
    if !stores_aligned(p, c.svw as i64) {
        return fail(
            "store-alignment",
            format!("ldd/ldc must be multiples of StoreVectorWidth {}", c.svw),
        );
    }
    Ok(())
}

/// `dtype`: 8-bit outputs, and f32 inputs with an output type other than f32 or C's, are
/// not converted by the epilogue.
pub(super) fn output_types(p: &GemmProblem) -> Result<(), Violation> {
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

/// Whether a data-parallel warpgroup kernel stores D as the persistent kernel does: its
/// consumers stage alpha * accumulators in D's type with matrix stores, and one thread hands
/// the tile to the tensor memory accelerator (kernels/epilogue/gt_epilogue_tma.h), in place
/// of the f32 staging tile that every thread reads back and writes out in vectors. Not a
/// parameter: wherever D allows it, one whole tile per workgroup (no split-K, no stream-K), and
/// the staging area, every column group in a part of its own, fits in the LDS the kernel has
/// anyway (the operand ring or the f32 tile, after the main loop). Where beta reads C, C must
/// allow it too ([`c_fits_output_tile`]): once the main loop is done, C's tile comes into the
/// staging area through a tensor map of C and each consumer blends it where it stages D.
///
/// D allows it where the persistent kernel's rule (`persistent`) does and the matrix stores
/// apply: a 16-bit D whose rows and batches start on 16-byte boundaries, MacroTile0 in whole
/// 16-byte vectors, store boxes of equal rows, swapped tiles' column groups in whole 16-column
/// steps. Measured on an H200 (`ncu`, 2880x256x2880 on swapped 96x64 tiles, one wave): the f32
/// staging and the read-back stores took about 15% of the consumer warps' samples, cuBLASLt's
/// matrix and tensor-map stores of the same tile about 5%; kernel against kernel the same
/// tiles ran 13.1 -> 12.6 us (64x128: 13.8 -> 13.1). An f32 D, staged element by element,
/// ran slower than its vector stores (4096x4096x1024 xf32 on 128x256: 110.4 against 106.0)
/// and keeps them.
pub fn stores_d_by_tensor_map(c: &KernelConfig, p: &GemmProblem) -> bool {
    use super::lds_layout::{lds_bytes, persistent_group_bytes, persistent_passes};
    let unit = 16 / p.d_type.bytes().max(1) as i64;
    super::lds_layout::whole_tile_output_by_map(c, p)
        && (c.sab == 0 || super::persistent_store_columns(c, p).is_multiple_of(16))
        && c.mt0 as i64 % unit == 0
        && super::scheduler::d_fits_output_boxes(c, p)
        && persistent_group_bytes(c, p) * persistent_passes(c, p) as u64
            + super::lds_layout::WGMMA_LDS_ALIGN
            <= lds_bytes(c, p)
}

#[cfg(test)]
mod tests {
    use super::stores_d_by_tensor_map;
    use crate::problem::{DataType, GemmProblem};
    use crate::space::constraints::lds_layout::c_fits_output_tile;
    use crate::space::KernelConfig;

    fn cfg(name: &str) -> KernelConfig {
        KernelConfig::parse(name).unwrap()
    }

    #[test]
    fn whole_warpgroup_tiles_of_an_aligned_d_store_through_tensor_maps() {
        let swapped = cfg(
            "MT96x64x64_MI64x8x16_WG4x1_PGR10_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1_SAB1",
        );
        let p = GemmProblem::new(2880, 256, 2880);
        assert!(stores_d_by_tensor_map(&swapped, &p));
        // D's rows off 16-byte boundaries, or C to read: the vector stores.
        let mut odd = GemmProblem::new(2881, 256, 2880);
        odd.ldd = 2881;
        assert!(!stores_d_by_tensor_map(&swapped, &odd));
        // C to read: through a tensor map of C where C has D's type and aligned rows.
        let mut beta = p.clone();
        beta.beta = 1.0;
        assert!(c_fits_output_tile(&beta));
        assert!(stores_d_by_tensor_map(&swapped, &beta));
        let mut odd_c = beta.clone();
        odd_c.ldc = 2881;
        assert!(!c_fits_output_tile(&odd_c));
        assert!(!stores_d_by_tensor_map(&swapped, &odd_c));
        let mut f32_c = beta.clone();
        f32_c.c_type = DataType::F32;
        assert!(!stores_d_by_tensor_map(&swapped, &f32_c));
        // An f32 D keeps its vector stores.
        let mut f32_d = p.clone();
        (f32_d.c_type, f32_d.d_type) = (DataType::F32, DataType::F32);
        assert!(!stores_d_by_tensor_map(&swapped, &f32_d));
        // Split-K, the persistent kernel (its own epilogue) and the mma.sync path: no.
        for other in [
            "MT96x64x64_MI64x8x16_WG4x1_PGR10_PLR1_LPA0_LPB0_SW1_GSU2R_WGM1_GRVW8_SVW8_SU0_PW1_SAB1",
            "MT96x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1_SAB1_PK1",
            "MT128x128x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        ] {
            assert!(!stores_d_by_tensor_map(&cfg(other), &p), "{other}");
        }
    }
}
