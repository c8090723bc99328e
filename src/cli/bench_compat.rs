//! hipblaslt-bench's flags beyond the GEMM's shape and types, so that a `hipblaslt-bench` line
//! copied from a hipBLASLt log (`HIPBLASLT_LOG_MASK=32`) runs as `gemmtune bench <its flags>`.
//!
//! Every flag of hipblaslt-bench's option table is accepted. Per-tensor scales (`--scaleA 1`
//! ... `--scaleD 1`) become part of the problem (the log says a scalar is applied, not its
//! value: gemmtune gives each its benchmark value). Those that change the GEMM otherwise
//! (vector or block scales, fused bias or activation, auxiliary output, swizzled layouts,
//! grouped GEMMs, another compute input type) are honoured when they leave it a plain GEMM
//! (`--activation_type none`) and otherwise refused with the flag and why, since the kernels
//! gemmtune generates compute `D = scale_d (alpha scale_a scale_b op(A) op(B) + beta scale_c C)`
//! only. Those that
//! only steer hipblaslt-bench's own driver (its API, its solution search, data
//! initialisation, printing) have no counterpart here and are listed once in a note.
//! Timing flags (`-i`, `-j`, `--rotating`, `--flush`), the device and the GEMM's own flags
//! are gemmtune's own options (`args.rs`).

use clap::Args;

use crate::problem::GemmProblem;

/// Parses hipblaslt-bench's boolean values: a bare switch, `1`/`0`, `true`/`false`.
pub fn parse_switch(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "on" | "yes" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        other => Err(format!("expected 0/1 or true/false, not `{other}`")),
    }
}

/// One optional hipblaslt-bench value; a bare switch reads as `true`.
macro_rules! hipblaslt_flags {
    ($($(#[$doc:meta])* $field:ident = $name:literal,)*) => {
        /// hipblaslt-bench's options that are not gemmtune's own, each as typed.
        #[derive(Debug, Args, Clone, Default)]
        #[command(next_help_heading = "hipblaslt-bench options (accepted so a log line runs as is)")]
        pub struct HipblasltBenchArgs {
            /// Print the results in hipblaslt-bench's CSV columns (one row per kernel and the
            /// vendor library) instead of the table.
            #[arg(long = "hipblaslt-csv")]
            pub csv_columns: bool,
            $(
                $(#[$doc])*
                #[arg(long = $name, num_args = 0..=1, default_missing_value = "true",
                      allow_hyphen_values = true, value_name = "V", hide_short_help = true)]
                pub $field: Option<String>,
            )*
        }

        impl HipblasltBenchArgs {
            /// Every flag given, as (name, value).
            fn given(&self) -> Vec<(&'static str, &str)> {
                let mut out = Vec::new();
                $(
                    if let Some(v) = &self.$field {
                        out.push(($name, v.as_str()));
                    }
                )*
                out
            }
        }
    };
}

hipblaslt_flags! {
    /// Must be `matmul`.
    function = "function",
    /// The precision of alpha and beta: f32_r.
    scale_type = "scale_type",
    compute_input_type_a = "compute_input_typeA",
    compute_input_type_b = "compute_input_typeB",
    bias_vector = "bias_vector",
    bias_type = "bias_type",
    bias_source = "bias_source",
    activation_type = "activation_type",
    activation_arg1 = "activation_arg1",
    activation_arg2 = "activation_arg2",
    scale_a = "scaleA",
    scale_b = "scaleB",
    scale_c = "scaleC",
    scale_d = "scaleD",
    scale_alpha_vector = "scaleAlpha_vector",
    scale_a_block_row_size = "scaleABlockRowSize",
    scale_a_block_col_size = "scaleABlockColSize",
    scale_b_block_row_size = "scaleBBlockRowSize",
    scale_b_block_col_size = "scaleBBlockColSize",
    amax_scale_a = "amaxScaleA",
    amax_scale_b = "amaxScaleB",
    amax_d = "amaxD",
    use_e = "use_e",
    aux_type = "aux_type",
    lde = "lde",
    stride_e = "stride_e",
    gradient = "gradient",
    swizzle_a = "swizzleA",
    swizzle_b = "swizzleB",
    grouped_gemm = "grouped_gemm",
    c_equal_d = "c_equal_d",
    any_stride = "any_stride",
    api_method = "api_method",
    algo_method = "algo_method",
    solution_index = "solution_index",
    requested_solution = "requested_solution",
    initialization = "initialization",
    verify = "verify",
    print_kernel_info = "print_kernel_info",
    use_gpu_timer = "use_gpu_timer",
    splitk = "splitk",
    wgm = "wgm",
    workspace = "workspace",
    log_function_name = "log_function_name",
    function_filter = "function_filter",
    skip_slow_solution_ratio = "skip_slow_solution_ratio",
    dump_matrix = "dump_matrix",
    use_user_args = "use_user_args",
    hmm = "HMM",
}

/// What a flag means to gemmtune.
enum Meaning {
    /// Changes the GEMM unless its value is one of these (compared without case).
    Gemm {
        plain: &'static [&'static str],
        why: &'static str,
    },
    /// Describes a GEMM feature that another flag turns on; no effect alone.
    Detail,
    /// Steers hipblaslt-bench's own driver; nothing to do here.
    Driver(&'static str),
}

const OFF: &[&str] = &["false", "0"];

fn meaning(flag: &str) -> Meaning {
    use Meaning::*;
    let epilogue = "gemmtune's kernels have no fused epilogue (bias, activation, auxiliary output)";
    let scaling = "gemmtune's kernels apply per-tensor scale factors only (mode 1), not vector, block or amax ones";
    match flag {
        "function" => Gemm {
            plain: &["matmul"],
            why: "gemmtune benchmarks matmul only",
        },
        "scale_type" => Gemm {
            plain: &["f32_r", "s"],
            why: "gemmtune's kernels take alpha and beta in f32 (scale_type f32_r)",
        },
        "bias_vector" | "use_e" | "gradient" => Gemm {
            plain: OFF,
            why: epilogue,
        },
        "activation_type" => Gemm {
            plain: &["none", ""],
            why: epilogue,
        },
        "scaleA" | "scaleB" | "scaleC" | "scaleD" => Gemm {
            plain: &["0", "1"],
            why: scaling,
        },
        "scaleAlpha_vector" | "amaxScaleA" | "amaxScaleB" | "amaxD" => Gemm {
            plain: OFF,
            why: scaling,
        },
        "swizzleA" | "swizzleB" => Gemm {
            plain: OFF,
            why: "gemmtune's kernels read plain column-major operands, not pre-swizzled ones",
        },
        "grouped_gemm" => Gemm {
            plain: OFF,
            why: "bench runs one GEMM; put the grouped call's line in a log for `gemmtune tune-log`",
        },
        "bias_type" | "bias_source" | "activation_arg1" | "activation_arg2" | "aux_type"
        | "lde" | "stride_e" | "scaleABlockRowSize" | "scaleABlockColSize"
        | "scaleBBlockRowSize" | "scaleBBlockColSize" => Detail,
        "c_equal_d" => Driver("C and D are separate buffers here; the result is the same"),
        "any_stride" => Driver("strides are used as given"),
        "verify" => Driver("every kernel is verified against a reference"),
        "use_gpu_timer" => Driver("kernels are timed with GPU events"),
        "print_kernel_info" => Driver("kernel names are always printed"),
        "initialization" => Driver("inputs are seeded random data (--seed)"),
        "splitk" | "wgm" => {
            Driver("hipBLASLt solution parameters; gemmtune searches GlobalSplitU and WorkGroupMapping itself")
        }
        _ => Driver("hipblaslt-bench's own driver setting"),
    }
}

impl HipblasltBenchArgs {
    /// Sets the per-tensor scales `--scaleA 1` ... `--scaleD 1` ask for on `problem`, with
    /// the value a log's `scaleA: 1` gets (problem::log::BENCH_SCALES).
    pub fn apply_scales(&self, problem: &mut GemmProblem) {
        let modes = [&self.scale_a, &self.scale_b, &self.scale_c, &self.scale_d];
        let scales = [
            &mut problem.scale_a,
            &mut problem.scale_b,
            &mut problem.scale_c,
            &mut problem.scale_d,
        ];
        for (i, (mode, scale)) in modes.into_iter().zip(scales).enumerate() {
            if mode.as_deref().map(str::trim) == Some("1") {
                *scale = crate::problem::log::BENCH_SCALES[i];
            }
        }
    }

    /// Checks the flags against `problem`: an error naming the first flag that would change
    /// the GEMM, or the note listing the flags without effect (`None` when there are none).
    pub fn check(&self, problem: &GemmProblem) -> Result<Option<String>, String> {
        let mut ignored = Vec::new();
        for (flag, value) in self.given() {
            let v = value.trim().to_ascii_lowercase();
            match meaning(flag) {
                Meaning::Gemm { plain, why } => {
                    if !plain.contains(&v.as_str()) {
                        return Err(format!("--{flag} {value} changes the GEMM: {why}"));
                    }
                }
                Meaning::Detail => ignored.push(format!("--{flag} {value}")),
                Meaning::Driver(why) => ignored.push(format!("--{flag} {value} ({why})")),
            }
        }
        for (flag, given, own) in [
            (
                "compute_input_typeA",
                &self.compute_input_type_a,
                problem.a_type,
            ),
            (
                "compute_input_typeB",
                &self.compute_input_type_b,
                problem.b_type,
            ),
        ] {
            let Some(t) = given else { continue };
            let same = t
                .parse::<crate::problem::DataType>()
                .is_ok_and(|t| t == own);
            if !same && !t.trim().is_empty() {
                return Err(format!(
                    "--{flag} {t} changes the GEMM: gemmtune computes on the input type ({own})"
                ));
            }
        }
        Ok((!ignored.is_empty()).then(|| {
            format!(
                "gemmtune: hipblaslt-bench options with no effect here: {}",
                ignored.join(", ")
            )
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pairs: &[(&str, &str)]) -> HipblasltBenchArgs {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            a: HipblasltBenchArgs,
        }
        let mut argv = vec!["x".to_string()];
        for (k, v) in pairs {
            argv.push(format!("--{k}"));
            if !v.is_empty() {
                argv.push(v.to_string());
            }
        }
        Cli::try_parse_from(argv).unwrap().a
    }

    #[test]
    fn plain_values_pass_and_features_are_refused_by_name() {
        let p = GemmProblem::new(64, 64, 64);
        let note = args(&[
            ("scaleA", "0"),
            ("activation_type", "none"),
            ("api_method", "c"),
        ])
        .check(&p)
        .unwrap()
        .unwrap();
        assert!(note.contains("--api_method c"), "{note}");
        assert_eq!(args(&[("scaleA", "0")]).check(&p).unwrap(), None);
        for (flag, value) in [
            ("bias_vector", ""),
            ("activation_type", "gelu"),
            ("scaleB", "2"),
            ("swizzleA", "1"),
            ("scale_type", "f16_r"),
            ("compute_input_typeA", "f8_r"),
        ] {
            let err = args(&[(flag, value)]).check(&p).unwrap_err();
            assert!(err.starts_with(&format!("--{flag}")), "{err}");
            assert!(err.contains("changes the GEMM"), "{err}");
        }
        args(&[("compute_input_typeA", "bf16_r")])
            .check(&p)
            .unwrap();
        // A per-tensor scale (mode 1) is part of the problem, with its benchmark value.
        let scaled = args(&[("scaleA", "1"), ("scaleB", "1"), ("scaleD", "0")]);
        let mut q = p.clone();
        scaled.apply_scales(&mut q);
        assert_eq!((q.scale_a, q.scale_b, q.scale_d), (0.5, 0.25, 1.0));
        assert_eq!(scaled.check(&q).unwrap(), None);
    }
}
