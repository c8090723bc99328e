//! Verification rules: how close a kernel's output must be to the reference.
//!
//! The tolerance is on the relative L2 error ||out - ref|| / ||ref||, which is robust to the
//! individual near-zero outputs that make element-wise relative errors meaningless. It grows
//! with the input precision and, slowly, with K (more terms, more rounding in the f32 sums
//! of a different order than the reference's). The output rounding dominates for 16-bit D.

use serde::{Deserialize, Serialize};

use crate::problem::{DataType, GemmProblem};

/// Result of checking a kernel's output against the reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    #[serde(deserialize_with = "nan_if_null")]
    pub max_abs_err: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub max_rel_err: f64,
    /// ||out - ref|| / ||ref|| over the whole output.
    #[serde(deserialize_with = "nan_if_null")]
    pub rel_l2_err: f64,
    pub tolerance: f64,
    pub passed: bool,
    /// `gpu-reference`, `cpu-reference` or `model` (sim).
    pub method: String,
}

/// JSON has no NaN or infinity: serde_json writes them as null, which reads back as NaN. A
/// kernel whose output overflows to infinities then reaches the parent (and the database) as
/// the wrong result it is, not as an unreadable reply.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// Unit roundoff of a type (half an ulp at 1.0).
fn unit_roundoff(t: DataType) -> f64 {
    match t {
        DataType::Bf16 => 2f64.powi(-8),
        DataType::F16 => 2f64.powi(-11),
        DataType::F32 => 2f64.powi(-24),
        DataType::F8 => 2f64.powi(-4),
        DataType::Bf8 => 2f64.powi(-3),
    }
}

/// Allowed relative L2 error for a problem's output.
pub fn tolerance(p: &GemmProblem) -> f64 {
    // Accumulation in f32 in a different order: ~sqrt(K) * u_f32, with a floor.
    let accum = (p.k.max(1) as f64).sqrt() * 2f64.powi(-24) * 4.0;
    // The output is rounded once to D's type; inputs are exact in both computations.
    let output = unit_roundoff(p.d_type);
    // 8-bit inputs: the tensor cores sum each instruction's 8-bit products with about 14
    // significant bits before they reach the f32 accumulator (Hopper), one rounding per
    // 32 of K, which a random walk turns into ~sqrt(K / 32) * 2^-14.
    let narrow = if p.a_type.is_8bit() {
        (p.k.max(1) as f64 / 32.0).sqrt().max(1.0) * 2f64.powi(-14) * 4.0
    } else {
        0.0
    };
    // f32 inputs read as tf32 (c_xf32_r on the matrix cores): 10 bits of mantissa, truncated
    // by the instruction, a relative error of up to 2^-10 per input that does not average out
    // along K (a bias of the same sign in every product).
    let tf32 = if p.reads_f32_as_tf32() {
        2f64.powi(-10) * 4.0
    } else {
        0.0
    };
    (2.0 * output + accum + narrow + tf32).max(1e-5)
}

/// Error statistics of `out` against `reference` (both as f64).
pub fn compare(out: &[f64], reference: &[f64], p: &GemmProblem) -> Verification {
    let mut max_abs: f64 = 0.0;
    let mut max_rel: f64 = 0.0;
    let mut diff2 = 0.0;
    let mut ref2 = 0.0;
    let mut nan = false;
    for (&o, &r) in out.iter().zip(reference) {
        if !o.is_finite() {
            nan = true;
        }
        let d = (o - r).abs();
        max_abs = max_abs.max(d);
        if r.abs() > 1e-3 {
            max_rel = max_rel.max(d / r.abs());
        }
        diff2 += d * d;
        ref2 += r * r;
    }
    let rel_l2 = if ref2 > 0.0 {
        (diff2 / ref2).sqrt()
    } else {
        diff2.sqrt()
    };
    let tol = tolerance(p);
    let passed = !nan && out.len() == reference.len() && rel_l2 <= tol;
    Verification {
        max_abs_err: if nan { f64::NAN } else { max_abs },
        max_rel_err: max_rel,
        rel_l2_err: if nan { f64::INFINITY } else { rel_l2 },
        tolerance: tol,
        passed,
        method: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_that_is_not_a_number_reads_back_as_nan() {
        let v = Verification {
            max_abs_err: f64::NAN,
            max_rel_err: f64::INFINITY,
            rel_l2_err: 1.5,
            tolerance: 0.01,
            passed: false,
            method: "gpu-reference".into(),
        };
        let json = serde_json::to_string(&v).unwrap();
        assert!(json.contains("\"max_abs_err\":null"), "{json}");
        let back: Verification = serde_json::from_str(&json).unwrap();
        assert!(back.max_abs_err.is_nan() && back.max_rel_err.is_nan());
        assert_eq!((back.rel_l2_err, back.passed), (1.5, false));
    }

    #[test]
    fn tolerance_orders_by_precision() {
        let mut p = GemmProblem::new(64, 64, 4096);
        let bf = tolerance(&p);
        p.d_type = DataType::F32;
        p.a_type = DataType::F32;
        p.b_type = DataType::F32;
        p.c_type = DataType::F32;
        let f = tolerance(&p);
        assert!(f < bf / 10.0, "{f} {bf}");
        // Read as tf32 (10-bit mantissa, truncated), f32 inputs lose more than bf16 outputs do
        // in rounding, but far less than bf16 inputs would.
        p.compute_type = crate::problem::ComputeType::Xf32;
        let x = tolerance(&p);
        assert!(x > 100.0 * f && x < bf, "{x} {f} {bf}");
    }

    #[test]
    fn compare_catches_nan_and_wrong_values() {
        let p = GemmProblem::new(2, 2, 16);
        let r = vec![1.0, 2.0, 3.0, 4.0];
        assert!(compare(&r, &r, &p).passed);
        assert!(!compare(&[1.0, 2.0, f64::NAN, 4.0], &r, &p).passed);
        assert!(!compare(&[1.0, 2.0, 3.5, 4.0], &r, &p).passed);
        assert!(!compare(&[1.0, 2.0, 3.0], &r, &p).passed);
    }
}
