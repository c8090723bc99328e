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
