//! The GEMM problem `D = alpha * op(A) * op(B) + beta * C`, column-major as in BLAS/hipBLASLt.
//!
//! op(A) is M x K, op(B) is K x N, C and D are M x N. With `transA = T`, A is stored K x M
//! (so each row of op(A) is contiguous along K); with `transB = N`, B is stored K x N.
//! The seed workload (`M=16032 N=109 K=16384`, TN, bf16) is therefore two K-contiguous
//! operands: the best case for a streaming dot-product kernel.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use super::{ComputeType, DataType, ProblemError};

/// Transpose flag of one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Trans {
    N,
    T,
}

impl Trans {
    pub fn is_t(self) -> bool {
        self == Trans::T
    }
    /// The other layout: an operand stored K-contiguous is M- (or N-) contiguous when read as
    /// its transpose.
    pub fn flipped(self) -> Trans {
        match self {
            Trans::N => Trans::T,
            Trans::T => Trans::N,
        }
    }
    pub fn letter(self) -> char {
        match self {
            Trans::N => 'N',
            Trans::T => 'T',
        }
    }
}

impl fmt::Display for Trans {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

impl FromStr for Trans {
    type Err = ProblemError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "N" | "n" | "0" | "false" => Ok(Trans::N),
            "T" | "t" | "1" | "true" | "C" | "c" => Ok(Trans::T),
            other => Err(ProblemError::UnknownTrans(other.to_string())),
        }
    }
}

/// One GEMM as hipBLASLt describes it. Dimensions are `i64` so that negative values typed
/// by a user reach validation and get a clear message instead of a parse error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GemmProblem {
    pub m: i64,
    pub n: i64,
    pub k: i64,
    pub batch: i64,
    pub trans_a: Trans,
    pub trans_b: Trans,
    pub lda: i64,
    pub ldb: i64,
    pub ldc: i64,
    pub ldd: i64,
    pub stride_a: i64,
    pub stride_b: i64,
    pub stride_c: i64,
    pub stride_d: i64,
    pub a_type: DataType,
    pub b_type: DataType,
    pub c_type: DataType,
    pub d_type: DataType,
    pub compute_type: ComputeType,
    pub alpha: f64,
    pub beta: f64,
    /// Per-tensor scales (hipBLASLt's `scaleA` ... `scaleD`, cuBLASLt's scale pointers, used
    /// with 8-bit inputs): D = scale_d * (alpha * scale_a * scale_b * op(A) op(B) +
    /// beta * scale_c * C). 1 when the GEMM has none.
    #[serde(default = "unit_scale")]
    pub scale_a: f64,
    #[serde(default = "unit_scale")]
    pub scale_b: f64,
    #[serde(default = "unit_scale")]
    pub scale_c: f64,
    #[serde(default = "unit_scale")]
    pub scale_d: f64,
}

fn unit_scale() -> f64 {
    1.0
}

impl GemmProblem {
    /// The seed case's conventions: bf16 in/out, f32 compute, TN, packed leading dimensions.
    pub fn new(m: i64, n: i64, k: i64) -> Self {
        let mut p = GemmProblem {
            m,
            n,
            k,
            batch: 1,
            trans_a: Trans::T,
            trans_b: Trans::N,
            lda: 0,
            ldb: 0,
            ldc: 0,
            ldd: 0,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
            stride_d: 0,
            a_type: DataType::Bf16,
            b_type: DataType::Bf16,
            c_type: DataType::Bf16,
            d_type: DataType::Bf16,
            compute_type: ComputeType::F32,
            alpha: 1.0,
            beta: 0.0,
            scale_a: 1.0,
            scale_b: 1.0,
            scale_c: 1.0,
            scale_d: 1.0,
        };
        p.fill_defaults();
        p
    }

    /// The seed case's conventions in another layout (`Trans::T` for an operand stored
    /// K-major, op(X) = X^T), with that layout's packed leading dimensions.
    pub fn with_layout(m: i64, n: i64, k: i64, trans_a: Trans, trans_b: Trans) -> Self {
        let mut p = Self::new(m, n, k);
        (p.trans_a, p.trans_b, p.lda, p.ldb) = (trans_a, trans_b, 0, 0);
        p.fill_defaults();
        p
    }

    /// The factor of op(A) op(B) in D once the per-tensor scales are folded in: what kernels,
    /// references and the vendor library are given as alpha, so all compute the same D.
    pub fn alpha_eff(&self) -> f64 {
        self.alpha * self.scale_a * self.scale_b * self.scale_d
    }

    /// The factor of C in D once the scales are folded in.
    pub fn beta_eff(&self) -> f64 {
        self.beta * self.scale_c * self.scale_d
    }

    /// Leading dimension of an operand of type `t` packed K-major (K rounded up to whole
    /// 128-byte lines, so that no packed row starts inside one): what
    /// kernels/loader/gt_pack_kernel.h writes.
    pub fn packed_ld(&self, t: DataType) -> i64 {
        let line = (128 / t.bytes().max(1)) as i64;
        (self.k + line - 1) / line * line
    }

    /// The problem as a kernel sees it once A (`pack_a`) or B (`pack_b`) has been packed
    /// K-major into a buffer of its own: that operand with the packed leading dimension and
    /// a stride of one packed matrix per batch.
    pub fn with_packed(&self, pack_a: bool, pack_b: bool) -> GemmProblem {
        let mut p = self.clone();
        if pack_a {
            p.trans_a = Trans::T;
            p.lda = self.packed_ld(self.a_type);
            p.stride_a = if self.batch > 1 { p.lda * self.m } else { 0 };
        }
        if pack_b {
            p.trans_b = Trans::N;
            p.ldb = self.packed_ld(self.b_type);
            p.stride_b = if self.batch > 1 { p.ldb * self.n } else { 0 };
        }
        p
    }

    /// Leading dimension of an operand of `rows` rows (M of A, N of B) and type `t` copied M-
    /// or N-major: the rows rounded up to whole 128-byte lines, so that every packed column
    /// of K starts on one (what kernels/loader/gt_pack_kernel.h's MN-major copy writes).
    pub fn packed_mn_ld(rows: i64, t: DataType) -> i64 {
        let line = (128 / t.bytes().max(1)) as i64;
        (rows + line - 1) / line * line
    }

    /// The problem as a kernel sees it once A (`pack_a`) or B (`pack_b`), stored
    /// K-contiguous, has been copied M- or N-major into a buffer of its own
    /// (`constraints::mn_packed_problem`, PackMNMajor): that operand with the other transpose
    /// flag, the packed leading dimension and a stride of one packed matrix per batch.
    pub fn with_mn_packed(&self, pack_a: bool, pack_b: bool) -> GemmProblem {
        let mut p = self.clone();
        if pack_a {
            p.trans_a = Trans::N;
            p.lda = Self::packed_mn_ld(self.m, self.a_type);
            p.stride_a = if self.batch > 1 { p.lda * self.k } else { 0 };
        }
        if pack_b {
            p.trans_b = Trans::T;
            p.ldb = Self::packed_mn_ld(self.n, self.b_type);
            p.stride_b = if self.batch > 1 { p.ldb * self.k } else { 0 };
        }
        p
    }

    /// The operands of D^T = B^T A^T: M and N exchanged, B in A's place (read with the
    /// opposite transpose flag: a K-contiguous B is a K-contiguous A of the transposed
    /// problem) and A in B's. C and D keep their own layout: a kernel that computes the
    /// transposed problem (the GEMV path along N, `SwapAB`) stores its row r, column c at D's
    /// (c, r).
    pub fn transposed(&self) -> GemmProblem {
        GemmProblem {
            m: self.n,
            n: self.m,
            trans_a: self.trans_b.flipped(),
            trans_b: self.trans_a.flipped(),
            lda: self.ldb,
            ldb: self.lda,
            stride_a: self.stride_b,
            stride_b: self.stride_a,
            a_type: self.b_type,
            b_type: self.a_type,
            scale_a: self.scale_b,
            scale_b: self.scale_a,
            ..self.clone()
        }
    }

    /// Whether any per-tensor scale differs from 1.
    pub fn is_scaled(&self) -> bool {
        [self.scale_a, self.scale_b, self.scale_c, self.scale_d]
            .iter()
            .any(|&s| s != 1.0)
    }

    /// Whether f32 inputs may be read as tf32 (the `c_xf32_r` compute type): the matrix cores'
    /// tf32 form where the GPU has one, with tf32's rounding.
    pub fn reads_f32_as_tf32(&self) -> bool {
        self.a_type == DataType::F32 && self.compute_type == ComputeType::Xf32
    }

    /// Whether A (`is_a`) or B is stored with K contiguous: A with transA = T, B with
    /// transB = N (K-major); otherwise along M or N.
    pub fn k_contiguous(&self, is_a: bool) -> bool {
        if is_a {
            self.trans_a.is_t()
        } else {
            !self.trans_b.is_t()
        }
    }

    /// Rows of A as stored (its leading dimension must cover them).
    pub fn a_rows(&self) -> i64 {
        if self.trans_a.is_t() {
            self.k
        } else {
            self.m
        }
    }
    pub fn a_cols(&self) -> i64 {
        if self.trans_a.is_t() {
            self.m
        } else {
            self.k
        }
    }
    pub fn b_rows(&self) -> i64 {
        if self.trans_b.is_t() {
            self.n
        } else {
            self.k
        }
    }
    pub fn b_cols(&self) -> i64 {
        if self.trans_b.is_t() {
            self.k
        } else {
            self.n
        }
    }

    /// Replaces zero leading dimensions and strides with packed values (what hipblaslt-bench
    /// does when a flag is absent). Zero strides stay zero for batch 1, as hipBLASLt logs them.
    pub fn fill_defaults(&mut self) {
        if self.lda <= 0 {
            self.lda = self.a_rows();
        }
        if self.ldb <= 0 {
            self.ldb = self.b_rows();
        }
        if self.ldc <= 0 {
            self.ldc = self.m;
        }
        if self.ldd <= 0 {
            self.ldd = self.ldc;
        }
        if self.batch > 1 {
            if self.stride_a == 0 {
                self.stride_a = self.lda * self.a_cols();
            }
            if self.stride_b == 0 {
                self.stride_b = self.ldb * self.b_cols();
            }
            if self.stride_c == 0 {
                self.stride_c = self.ldc * self.n;
            }
            if self.stride_d == 0 {
                self.stride_d = self.ldd * self.n;
            }
        }
    }

    /// Checks everything that makes a problem impossible, independent of any device.
    pub fn validate(&self) -> Result<(), ProblemError> {
        for (name, value) in [
            ("M", self.m),
            ("N", self.n),
            ("K", self.k),
            ("batch_count", self.batch),
        ] {
            if value <= 0 {
                return Err(ProblemError::NonPositiveDim { name, value });
            }
        }
        // A NaN or infinite scalar makes every element of D NaN or infinite: nothing to verify
        // or time (and no JSON number carries it to the worker process).
        for (name, value) in [
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("scaleA", self.scale_a),
            ("scaleB", self.scale_b),
            ("scaleC", self.scale_c),
            ("scaleD", self.scale_d),
        ] {
            if !value.is_finite() {
                return Err(ProblemError::NonFinite { name, value });
            }
        }
        for (name, value, rows) in [
            ("lda", self.lda, self.a_rows()),
            ("ldb", self.ldb, self.b_rows()),
            ("ldc", self.ldc, self.m),
            ("ldd", self.ldd, self.m),
        ] {
            if value < rows {
                return Err(ProblemError::LeadingDimTooSmall { name, value, rows });
            }
        }
        if self.batch > 1 {
            // Inputs are only read, so their batches may broadcast (stride 0) or overlap (the
            // heads of a [batch, tokens, heads, dim] tensor: stride one head's columns, ld all
            // heads'); D's batches must not overlap, or one batch would overwrite another's.
            for (name, value, ld, cols, may_overlap) in [
                ("stride_a", self.stride_a, self.lda, self.a_cols(), true),
                ("stride_b", self.stride_b, self.ldb, self.b_cols(), true),
                ("stride_c", self.stride_c, self.ldc, self.n, true),
                ("stride_d", self.stride_d, self.ldd, self.n, false),
            ] {
                let needed = ld.saturating_mul(cols);
                if value < 0 || (value < needed && !may_overlap) {
                    return Err(ProblemError::StrideTooSmall {
                        name,
                        value,
                        needed,
                        batch: self.batch,
                    });
                }
            }
        }
        if self.a_type != self.b_type && !(self.a_type.is_8bit() && self.b_type.is_8bit()) {
            return Err(ProblemError::Unsupported(format!(
                "mixed input types a_type={} b_type={} are not supported",
                self.a_type, self.b_type
            )));
        }
        for name in ["A", "B", "C", "D"] {
            self.buffer_bytes(name)?;
        }
        Ok(())
    }

    /// Checks that all buffers fit in `device_bytes` of memory (with `copies` rotating input sets).
    pub fn check_fits(&self, device_bytes: u64, copies: u64) -> Result<(), ProblemError> {
        let needed = self.footprint_bytes(copies)?;
        // Leave 5% for the context, workspace and the reference output.
        if (needed as f64) > device_bytes as f64 * 0.95 {
            return Err(ProblemError::DoesNotFit {
                needed_gib: needed as f64 / (1u64 << 30) as f64,
                have_gib: device_bytes as f64 / (1u64 << 30) as f64,
            });
        }
        Ok(())
    }

    /// Bytes to allocate for one operand ("A", "B", "C", "D"), strides and padding included.
    pub fn buffer_bytes(&self, which: &'static str) -> Result<u64, ProblemError> {
        let (ld, cols, stride, ty) = match which {
            "A" => (self.lda, self.a_cols(), self.stride_a, self.a_type),
            "B" => (self.ldb, self.b_cols(), self.stride_b, self.b_type),
            "C" => (self.ldc, self.n, self.stride_c, self.c_type),
            _ => (self.ldd, self.n, self.stride_d, self.d_type),
        };
        let overflow = || ProblemError::SizeOverflow { name: which };
        let one = (ld as u64).checked_mul(cols as u64).ok_or_else(overflow)?;
        let elems = (stride.max(0) as u64)
            .checked_mul((self.batch - 1).max(0) as u64)
            .and_then(|s| s.checked_add(one))
            .ok_or_else(overflow)?;
        let bytes = elems.checked_mul(ty.bytes() as u64).ok_or_else(overflow)?;
        if bytes > (1u64 << 50) {
            return Err(overflow());
        }
        Ok(bytes)
    }

    /// Device bytes for `copies` rotating sets of A/B/C plus D and a reference output.
    pub fn footprint_bytes(&self, copies: u64) -> Result<u64, ProblemError> {
        let a = self.buffer_bytes("A")?;
        let b = self.buffer_bytes("B")?;
        let c = self.buffer_bytes("C")?;
        let d = self.buffer_bytes("D")?;
        let per_copy = a + b + if self.beta != 0.0 { c } else { 0 };
        per_copy
            .checked_mul(copies.max(1))
            .and_then(|x| x.checked_add(2 * d))
            .ok_or(ProblemError::SizeOverflow { name: "total" })
    }

    /// Floating-point operations: one multiply and one add per inner-product term.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch as f64
    }

    /// Fewest bytes any kernel must move: A, B (and C when beta != 0) read once, D written once.
    pub fn min_bytes(&self) -> f64 {
        let (m, n, k, b) = (
            self.m as f64,
            self.n as f64,
            self.k as f64,
            self.batch as f64,
        );
        let mut bytes = m * k * self.a_type.bytes() as f64 + k * n * self.b_type.bytes() as f64;
        if self.beta != 0.0 {
            bytes += m * n * self.c_type.bytes() as f64;
        }
        bytes += m * n * self.d_type.bytes() as f64;
        bytes * b
    }

    /// FLOPs per byte of compulsory traffic.
    pub fn arithmetic_intensity(&self) -> f64 {
        self.flops() / self.min_bytes()
    }

    /// Layout tag as Tensile and hipBLASLt name it, e.g. `TN`.
    pub fn layout(&self) -> String {
        format!("{}{}", self.trans_a, self.trans_b)
    }

    /// Tensile-style type tag, e.g. `BBS` (A/B type, D type, compute type).
    pub fn type_tag(&self) -> String {
        let compute = match self.compute_type {
            ComputeType::F32 | ComputeType::Xf32 => 'S',
            ComputeType::F16 => 'H',
        };
        format!(
            "{}{}{}",
            self.a_type.tensile_letter(),
            self.d_type.tensile_letter(),
            compute
        )
    }

    /// A short human label: `16032x109x16384 TN bf16_r`.
    pub fn label(&self) -> String {
        let batch = if self.batch > 1 {
            format!("x{}", self.batch)
        } else {
            String::new()
        };
        format!(
            "{}x{}x{}{} {} {}",
            self.m,
            self.n,
            self.k,
            batch,
            self.layout(),
            self.a_type
        )
    }

    /// The one string that identifies this problem in the database and caches.
    /// Every field that changes the computation or the memory layout is in it.
    pub fn key(&self) -> String {
        format!(
            "{}_{}_{}{}{}{}_{}_M{}_N{}_K{}_B{}_lda{}_ldb{}_ldc{}_ldd{}_sa{}_sb{}_sc{}_sd{}_alpha{}_beta{}",
            self.layout(),
            self.type_tag(),
            self.a_type.tensile_letter(),
            self.b_type.tensile_letter(),
            self.c_type.tensile_letter(),
            self.d_type.tensile_letter(),
            self.compute_type.hipblaslt_name(),
            self.m,
            self.n,
            self.k,
            self.batch,
            self.lda,
            self.ldb,
            self.ldc,
            self.ldd,
            self.stride_a,
            self.stride_b,
            self.stride_c,
            self.stride_d,
            self.alpha,
            self.beta
        ) + &if self.is_scaled() {
            format!(
                "_scale{}x{}x{}x{}",
                self.scale_a, self.scale_b, self.scale_c, self.scale_d
            )
        } else {
            String::new()
        }
    }

    /// The equivalent `hipblaslt-bench` command line, so a user can reproduce the vendor timing.
    pub fn hipblaslt_bench_args(&self) -> String {
        format!(
            "hipblaslt-bench --api_method c -m {} -n {} -k {} --lda {} --ldb {} --ldc {} --ldd {} --stride_a {} --stride_b {} --stride_c {} --stride_d {} --alpha {} --beta {} --transA {} --transB {} --batch_count {} --a_type {} --b_type {} --c_type {} --d_type {} --compute_type {}",
            self.m, self.n, self.k, self.lda, self.ldb, self.ldc, self.ldd,
            self.stride_a, self.stride_b, self.stride_c, self.stride_d,
            self.alpha, self.beta, self.trans_a, self.trans_b, self.batch,
            self.a_type, self.b_type, self.c_type, self.d_type, self.compute_type
        ) + &[
            ("scaleA", self.scale_a),
            ("scaleB", self.scale_b),
            ("scaleC", self.scale_c),
            ("scaleD", self.scale_d),
        ]
        .iter()
        .filter(|(_, s)| *s != 1.0)
        // hipblaslt-bench takes the scale's mode: 1 is one scalar per tensor.
        .map(|(flag, _)| format!(" --{flag} 1"))
        .collect::<String>()
    }
}

/// Test problems of f32 operands read as tf32 (`c_xf32_r`), which several parts of the space
/// treat apart.
#[cfg(test)]
impl GemmProblem {
    pub(crate) fn tf32(m: i64, n: i64, k: i64) -> Self {
        let mut p = GemmProblem::new(m, n, k);
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        p.compute_type = ComputeType::Xf32;
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_tensor_scales_fold_into_alpha_and_beta_and_the_key() {
        let mut p = GemmProblem::new(64, 64, 64);
        let plain = p.key();
        assert!(!plain.contains("scale"));
        (p.alpha, p.beta) = (2.0, 0.5);
        (p.scale_a, p.scale_b, p.scale_c, p.scale_d) = (0.5, 0.25, 4.0, 2.0);
        assert_eq!(p.alpha_eff(), 2.0 * 0.5 * 0.25 * 2.0);
        assert_eq!(p.beta_eff(), 0.5 * 4.0 * 2.0);
        assert!(p.is_scaled() && p.key().contains("_scale0.5x0.25x4x2"));
        // Packed operands: K-major, leading dimension K rounded up to 128 bytes.
        let mut q = GemmProblem::new(100, 109, 1001);
        (q.trans_b, q.ldb, q.batch) = (Trans::T, 0, 2);
        q.fill_defaults();
        let k = q.with_packed(false, true);
        assert_eq!((k.trans_b, k.ldb, k.stride_b), (Trans::N, 1024, 1024 * 109));
        assert_eq!(k.lda, q.lda);
    }

    #[test]
    fn seed_defaults_are_packed_tn_bf16() {
        let p = GemmProblem::new(16032, 109, 16384);
        assert_eq!((p.lda, p.ldb, p.ldc, p.ldd), (16384, 16384, 16032, 16032));
        assert_eq!(p.layout(), "TN");
        assert_eq!(p.type_tag(), "BBS");
        p.validate().unwrap();
        // Reading A alone is 525 MB, the floor for any kernel.
        assert!((p.min_bytes() - 532.7e6).abs() < 1e6, "{}", p.min_bytes());
        assert!((p.flops() - 2.0 * 16032.0 * 109.0 * 16384.0).abs() < 1.0);
    }

    #[test]
    fn rejects_impossible_shapes() {
        let mut p = GemmProblem::new(0, 10, 10);
        assert!(matches!(
            p.validate(),
            Err(ProblemError::NonPositiveDim { name: "M", .. })
        ));
        p = GemmProblem::new(10, -3, 10);
        assert!(matches!(
            p.validate(),
            Err(ProblemError::NonPositiveDim { name: "N", .. })
        ));
        p = GemmProblem::new(64, 64, 64);
        p.lda = 32;
        let err = p.validate().unwrap_err();
        assert!(err.to_string().contains("lda=32"), "{err}");
        p = GemmProblem::new(i64::MAX / 2, 4, i64::MAX / 2);
        assert!(matches!(
            p.validate(),
            Err(ProblemError::SizeOverflow { .. })
        ));
        for (alpha, beta, scale_d) in [
            (f64::NAN, 0.0, 1.0),
            (1.0, f64::INFINITY, 1.0),
            (1.0, 0.0, f64::NEG_INFINITY),
        ] {
            p = GemmProblem::new(64, 64, 64);
            (p.alpha, p.beta, p.scale_d) = (alpha, beta, scale_d);
            let err = p.validate().unwrap_err();
            assert!(matches!(err, ProblemError::NonFinite { .. }), "{err}");
            assert!(err.to_string().contains("must be a finite number"), "{err}");
        }
    }

    #[test]
    fn batched_strides_default_and_validate() {
        let mut p = GemmProblem::new(64, 32, 16);
        p.batch = 4;
        p.fill_defaults();
        assert_eq!(p.stride_a, 16 * 64);
        p.validate().unwrap();
        // Inputs may overlap between batches (interleaved heads), D may not.
        (p.stride_a, p.stride_b, p.stride_c) = (16, 32, 8);
        p.validate().unwrap();
        p.stride_a = -1;
        assert!(matches!(
            p.validate(),
            Err(ProblemError::StrideTooSmall {
                name: "stride_a",
                ..
            })
        ));
        p.stride_a = 16;
        p.stride_d = 10;
        assert!(matches!(
            p.validate(),
            Err(ProblemError::StrideTooSmall {
                name: "stride_d",
                ..
            })
        ));
    }

    #[test]
    fn does_not_fit_small_device() {
        let p = GemmProblem::new(16032, 109, 16384);
        let err = p.check_fits(256 << 20, 1).unwrap_err();
        assert!(err.to_string().contains("GiB"));
        p.check_fits(80 << 30, 4).unwrap();
    }
}
