//! The field vocabulary shared by both hipBLASLt log formats, and the step that turns one
//! line's raw `key -> value` pairs into [`GemmProblem`]s.
//!
//! The YAML reader (`yaml.rs`) and the command-line reader (`bench.rs`) only split a line
//! into pairs and hand each one to [`RawFields::set`]. Here every key is classified once:
//! problem fields are kept as borrowed text until [`RawFields::build`] parses them (so a
//! line costs no allocation unless it carries something unusual), epilogue and scaling
//! features are kept so the caller can warn that they are not tuned, harness settings
//! (timing, solution selection) are dropped, and anything unknown is kept verbatim.
//!
//! Defaults follow `hipblaslt-bench`'s own option table (hipBLASLt `clients/bench`):
//! `--transA`/`--transB` default to `N`, `--alpha 1`, `--beta 0`, `--batch_count 1`,
//! `--compute_type f32_r`, the four matrix types default to `--precision` (itself `f16_r`),
//! and leading dimensions that are absent (or too small) become packed. One deliberate
//! difference: hipblaslt-bench runs 128x128x128 when `-m/-n/-k` are absent, but hipBLASLt
//! always logs the sizes, so a log line without them is truncated or hand-edited and is
//! reported as an error instead of silently becoming a 128-cube.

use crate::problem::{ComputeType, DataType, GemmProblem, Trans};

/// The problem fields, in the order of [`RawFields::problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    M,
    N,
    K,
    Lda,
    Ldb,
    Ldc,
    Ldd,
    StrideA,
    StrideB,
    StrideC,
    StrideD,
    Alpha,
    Beta,
    TransA,
    TransB,
    Batch,
    AType,
    BType,
    CType,
    DType,
    ComputeType,
    /// `--precision` / `-r`: the default for the four matrix types.
    Precision,
    /// Per-tensor scale modes (`scaleA: 1` = one scalar for the tensor); see `scale`.
    ScaleA,
    ScaleB,
    ScaleC,
    ScaleD,
}

const N_FIELDS: usize = Field::ScaleD as usize + 1;

/// The value gemmtune gives each per-tensor scale a log asks for. A log says that a scalar
/// scale is applied (`scaleA: 1`), not its value, which is data; any value costs the same, and
/// values other than 1 whose product is not 1 make a kernel that drops one visibly wrong.
pub const BENCH_SCALES: [f64; 4] = [0.5, 0.25, 1.0, 2.0];

impl Field {
    /// The name used in messages (hipBLASLt's YAML spelling).
    fn name(self) -> &'static str {
        match self {
            Field::M => "M",
            Field::N => "N",
            Field::K => "K",
            Field::Lda => "lda",
            Field::Ldb => "ldb",
            Field::Ldc => "ldc",
            Field::Ldd => "ldd",
            Field::StrideA => "stride_a",
            Field::StrideB => "stride_b",
            Field::StrideC => "stride_c",
            Field::StrideD => "stride_d",
            Field::Alpha => "alpha",
            Field::Beta => "beta",
            Field::TransA => "transA",
            Field::TransB => "transB",
            Field::Batch => "batch_count",
            Field::AType => "a_type",
            Field::BType => "b_type",
            Field::CType => "c_type",
            Field::DType => "d_type",
            Field::ComputeType => "compute_type",
            Field::Precision => "precision",
            Field::ScaleA => "scaleA",
            Field::ScaleB => "scaleB",
            Field::ScaleC => "scaleC",
            Field::ScaleD => "scaleD",
        }
    }

    /// Sizes may carry one value per member of a grouped GEMM (`-m 128 256`).
    fn is_size(self) -> bool {
        (self as usize) <= (Field::StrideD as usize)
    }
}

/// What a key means to the tuner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyKind {
    Problem(Field),
    Function,
    CallCount,
    /// `--grouped_gemm`: sizes list one value per member.
    Grouped,
    /// Changes what is computed beyond the plain GEMM (fused epilogue, scaling, swizzled
    /// layout). Active when the value is not one of the listed inactive values.
    Feature(&'static [&'static str]),
    /// Describes a feature (bias type, E matrix layout); worth keeping only when a feature
    /// on the same line is active.
    Detail,
    /// How the benchmark was run or which solution was picked; irrelevant to the problem.
    Harness,
    Unknown,
}

const OFF: &[&str] = &["false", "0", "off", "no"];
const NO_ACTIVATION: &[&str] = &["none", ""];
const NO_SCALE: &[&str] = &["0"];
const UNSET: &[&str] = &[""];

/// Classifies a key of either format (`M` in YAML, `-m`/`--sizem` on the command line).
pub(super) fn classify(key: &str) -> KeyKind {
    use Field::*;
    use KeyKind::*;
    match key {
        "M" | "m" | "sizem" => Problem(M),
        "N" | "n" | "sizen" => Problem(N),
        "K" | "k" | "sizek" => Problem(K),
        "lda" => Problem(Lda),
        "ldb" => Problem(Ldb),
        "ldc" => Problem(Ldc),
        "ldd" => Problem(Ldd),
        "stride_a" => Problem(StrideA),
        "stride_b" => Problem(StrideB),
        "stride_c" => Problem(StrideC),
        "stride_d" => Problem(StrideD),
        "alpha" => Problem(Alpha),
        "beta" => Problem(Beta),
        "transA" => Problem(TransA),
        "transB" => Problem(TransB),
        // `--batch` is hipblaslt-bench's deprecated spelling of `--batch_count`.
        "batch_count" | "batch" => Problem(Batch),
        "a_type" => Problem(AType),
        "b_type" => Problem(BType),
        "c_type" => Problem(CType),
        "d_type" => Problem(DType),
        "compute_type" => Problem(ComputeType),
        "precision" | "r" => Problem(Precision),
        "function" | "f" => Function,
        "call_count" => CallCount,
        "grouped_gemm" => Grouped,
        "activation_type" => Feature(NO_ACTIVATION),
        "bias_vector" | "use_e" | "gradient" | "scaleAlpha_vector" | "amaxScaleA"
        | "amaxScaleB" | "amaxD" | "swizzleA" | "swizzleB" => Feature(OFF),
        "scaleA" => Problem(ScaleA),
        "scaleB" => Problem(ScaleB),
        "scaleC" => Problem(ScaleC),
        "scaleD" => Problem(ScaleD),
        "batch_mode" => Feature(NO_SCALE),
        "compute_input_typeA" | "compute_input_typeB" => Feature(UNSET),
        "bias_type" | "bias_source" | "aux_type" | "activation_arg1" | "activation_arg2"
        | "lde" | "stride_e" => Detail,
        "scale_type"
        | "flush"
        | "rotating"
        | "cold_iters"
        | "iters"
        | "i"
        | "j"
        | "api_method"
        | "algo_method"
        | "solution_index"
        | "requested_solution"
        | "workspace"
        | "initialization"
        | "verify"
        | "v"
        | "print_kernel_info"
        | "use_gpu_timer"
        | "device"
        | "c_equal_d"
        | "any_stride"
        | "HMM"
        | "log_function_name"
        | "function_filter"
        | "skip_slow_solution_ratio"
        | "splitk"
        | "wgm"
        | "dump_matrix"
        | "use_user_args" => Harness,
        _ => Unknown,
    }
}

/// One line's pairs, borrowed from the line.
#[derive(Debug, Default)]
pub(super) struct RawFields<'a> {
    problem: [Option<&'a str>; N_FIELDS],
    pub function: Option<&'a str>,
    pub call_count: Option<&'a str>,
    grouped: bool,
    /// Active features, in line order.
    pub features: Vec<(&'a str, &'a str)>,
    details: Vec<(&'a str, &'a str)>,
    pub unknown: Vec<(&'a str, &'a str)>,
}

impl<'a> RawFields<'a> {
    /// Records one pair. A repeated key keeps its last value, as hipblaslt-bench does.
    pub fn set(&mut self, key: &'a str, value: &'a str) {
        match classify(key) {
            KeyKind::Problem(f) => self.problem[f as usize] = Some(value),
            KeyKind::Function => self.function = Some(value),
            KeyKind::CallCount => self.call_count = Some(value),
            KeyKind::Grouped => self.grouped = !OFF.contains(&value.to_ascii_lowercase().as_str()),
            KeyKind::Feature(inactive) => {
                if !inactive.iter().any(|off| off.eq_ignore_ascii_case(value)) {
                    self.features.push((key, value));
                }
            }
            KeyKind::Detail => self.details.push((key, value)),
            KeyKind::Harness => {}
            KeyKind::Unknown => self.unknown.push((key, value)),
        }
    }

    /// Feature details worth recording: only when a feature is active on this line.
    pub fn active_details(&self) -> &[(&'a str, &'a str)] {
        if self.features.is_empty() {
            &[]
        } else {
            &self.details
        }
    }

    /// Parses the problem fields into one problem (or one per member of a grouped GEMM),
    /// with hipblaslt-bench's defaults filled in. Validation is the caller's job, so that
    /// it can report each member separately.
    pub fn build(&self) -> Result<Vec<GemmProblem>, String> {
        for f in [Field::M, Field::N, Field::K] {
            if self.problem[f as usize].is_none() {
                return Err(format!(
                    "missing {} (every hipBLASLt log line carries M, N and K)",
                    f.name()
                ));
            }
        }
        let members = if self.grouped {
            (0..=Field::StrideD as usize)
                .filter_map(|i| self.problem[i])
                .map(|v| v.split_whitespace().count())
                .max()
                .unwrap_or(1)
                .max(1)
        } else {
            1
        };
        (0..members).map(|i| self.build_member(i)).collect()
    }

    fn build_member(&self, member: usize) -> Result<GemmProblem, String> {
        let precision = match self.text(Field::Precision)? {
            Some(s) => parse_dtype(s)?,
            None => DataType::F16,
        };
        let dtype = |f: Field| -> Result<DataType, String> {
            self.text(f)?.map(parse_dtype).unwrap_or(Ok(precision))
        };
        let trans = |f: Field| -> Result<Trans, String> {
            match self.text(f)? {
                Some(s) => s.parse::<Trans>().map_err(|e| format!("{}: {e}", f.name())),
                None => Ok(Trans::N),
            }
        };
        let mut p = GemmProblem {
            m: self.int(Field::M, member)?.unwrap_or(0),
            n: self.int(Field::N, member)?.unwrap_or(0),
            k: self.int(Field::K, member)?.unwrap_or(0),
            batch: self.int(Field::Batch, 0)?.unwrap_or(1),
            trans_a: trans(Field::TransA)?,
            trans_b: trans(Field::TransB)?,
            lda: self.int(Field::Lda, member)?.unwrap_or(0),
            ldb: self.int(Field::Ldb, member)?.unwrap_or(0),
            ldc: self.int(Field::Ldc, member)?.unwrap_or(0),
            ldd: self.int(Field::Ldd, member)?.unwrap_or(0),
            stride_a: self.int(Field::StrideA, member)?.unwrap_or(0),
            stride_b: self.int(Field::StrideB, member)?.unwrap_or(0),
            stride_c: self.int(Field::StrideC, member)?.unwrap_or(0),
            stride_d: self.int(Field::StrideD, member)?.unwrap_or(0),
            a_type: dtype(Field::AType)?,
            b_type: dtype(Field::BType)?,
            c_type: dtype(Field::CType)?,
            d_type: dtype(Field::DType)?,
            compute_type: match self.text(Field::ComputeType)? {
                Some(s) => parse_compute(s)?,
                None => ComputeType::F32,
            },
            alpha: self.float(Field::Alpha)?.unwrap_or(1.0),
            beta: self.float(Field::Beta)?.unwrap_or(0.0),
            scale_a: self.scale(Field::ScaleA)?,
            scale_b: self.scale(Field::ScaleB)?,
            scale_c: self.scale(Field::ScaleC)?,
            scale_d: self.scale(Field::ScaleD)?,
        };
        // Absent leading dimensions become packed, as in hipblaslt-bench. A present but
        // too-small one is not raised silently (hipblaslt-bench would): a log claiming it
        // describes a different layout, so validation reports it instead.
        p.fill_defaults();
        Ok(p)
    }

    /// A single-valued field's text, if present.
    fn text(&self, f: Field) -> Result<Option<&'a str>, String> {
        match self.problem[f as usize] {
            Some(v) if v.split_whitespace().nth(1).is_some() => {
                Err(format!("{} has several values `{v}`", f.name()))
            }
            other => Ok(other),
        }
    }

    /// An integer field; sizes take the `member`-th value (or the last one, as
    /// hipblaslt-bench repeats the last size for the remaining group members).
    fn int(&self, f: Field, member: usize) -> Result<Option<i64>, String> {
        let Some(raw) = self.problem[f as usize] else {
            return Ok(None);
        };
        let value = if f.is_size() {
            let mut parts = raw.split_whitespace();
            let count = raw.split_whitespace().count();
            if count > 1 && !self.grouped {
                // Without --grouped_gemm hipblaslt-bench uses the first value only.
                parts.next()
            } else {
                parts.nth(member.min(count.saturating_sub(1)))
            }
            .unwrap_or("")
        } else {
            self.text(f)?.unwrap_or("")
        };
        value
            .parse::<i64>()
            .map(Some)
            .map_err(|_| format!("bad value `{value}` for {}: expected an integer", f.name()))
    }

    /// A per-tensor scale mode: 0 (or absent) is none, 1 one scalar per tensor, which gets its
    /// BENCH_SCALES value. Vector and block scales change the epilogue's inputs: refused.
    fn scale(&self, f: Field) -> Result<f64, String> {
        let i = f as usize - Field::ScaleA as usize;
        match self.text(f)?.map(str::trim) {
            None | Some("0") | Some("false") => Ok(1.0),
            Some("1") | Some("true") => Ok(BENCH_SCALES[i]),
            Some(other) => Err(format!(
                "{} mode `{other}` (a vector or block scale) is not supported: gemmtune tunes per-tensor scales (mode 1) only",
                f.name()
            )),
        }
    }

    fn float(&self, f: Field) -> Result<Option<f64>, String> {
        let Some(value) = self.text(f)? else {
            return Ok(None);
        };
        match value.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(format!(
                "bad value `{value}` for {}: expected a finite number",
                f.name()
            )),
        }
    }
}

/// Quoted values (`'gelu'` in YAML, `"gelu"` from a shell) lose their quotes.
pub(super) fn unquote(v: &str) -> &str {
    for q in ['\'', '"'] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

fn parse_dtype(s: &str) -> Result<DataType, String> {
    // hipBLASLt writes the canonical names; matching them first skips the general
    // parser's lowercase copy on every field of every line.
    match s {
        "bf16_r" => Ok(DataType::Bf16),
        "f16_r" => Ok(DataType::F16),
        "f32_r" => Ok(DataType::F32),
        _ => s.parse::<DataType>().map_err(|e| e.to_string()),
    }
}

fn parse_compute(s: &str) -> Result<ComputeType, String> {
    match s {
        "c_f32_r" | "f32_r" => Ok(ComputeType::F32),
        _ => s
            .parse::<ComputeType>()
            .map_err(|e| format!("compute_type: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_hipblaslt_bench() {
        let mut f = RawFields::default();
        f.set("m", "64");
        f.set("n", "32");
        f.set("k", "16");
        let p = f.build().unwrap().remove(0);
        assert_eq!((p.trans_a, p.trans_b), (Trans::N, Trans::N));
        assert_eq!(p.a_type, DataType::F16);
        assert_eq!(p.compute_type, ComputeType::F32);
        assert_eq!((p.alpha, p.beta, p.batch), (1.0, 0.0, 1));
        assert_eq!((p.lda, p.ldb, p.ldc, p.ldd), (64, 16, 64, 64));
    }

    #[test]
    fn precision_sets_all_types_and_explicit_types_win() {
        let mut f = RawFields::default();
        for (k, v) in [
            ("M", "8"),
            ("N", "8"),
            ("K", "8"),
            ("r", "bf16_r"),
            ("d_type", "f32_r"),
        ] {
            f.set(k, v);
        }
        let p = f.build().unwrap().remove(0);
        assert_eq!(
            (p.a_type, p.c_type, p.d_type),
            (DataType::Bf16, DataType::Bf16, DataType::F32)
        );
    }

    #[test]
    fn grouped_sizes_expand_and_repeat_the_last_value() {
        let mut f = RawFields::default();
        for (k, v) in [
            ("m", "16 32 48"),
            ("n", "8"),
            ("k", "64 128"),
            ("grouped_gemm", "true"),
        ] {
            f.set(k, v);
        }
        let ps = f.build().unwrap();
        let shapes: Vec<_> = ps.iter().map(|p| (p.m, p.n, p.k)).collect();
        assert_eq!(shapes, vec![(16, 8, 64), (32, 8, 128), (48, 8, 128)]);
    }

    #[test]
    fn ungrouped_multi_values_use_the_first() {
        let mut f = RawFields::default();
        for (k, v) in [("m", "16 32"), ("n", "8"), ("k", "64")] {
            f.set(k, v);
        }
        let ps = f.build().unwrap();
        assert_eq!(ps.len(), 1);
        assert_eq!(ps[0].m, 16);
    }

    #[test]
    fn features_are_active_only_off_their_default() {
        let mut f = RawFields::default();
        f.set("activation_type", "none");
        f.set("bias_vector", "false");
        f.set("scaleA", "0");
        f.set("bias_type", "f32_r");
        assert!(f.features.is_empty());
        assert!(f.active_details().is_empty());
        f.set("activation_type", "gelu");
        assert_eq!(f.features, vec![("activation_type", "gelu")]);
        assert_eq!(f.active_details(), &[("bias_type", "f32_r")]);
    }

    #[test]
    fn bad_values_name_the_field() {
        let mut f = RawFields::default();
        for (k, v) in [("M", "12x"), ("N", "8"), ("K", "8")] {
            f.set(k, v);
        }
        assert!(f.build().unwrap_err().contains("`12x` for M"));
        f.set("M", "12");
        f.set("alpha", "nan");
        assert!(f.build().unwrap_err().contains("alpha"));
        f.set("alpha", "1");
        f.set("a_type", "i4_r");
        assert!(f.build().unwrap_err().contains("i4_r"));
    }
}
