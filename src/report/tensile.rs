//! Tensile/TensileLite benchmark configs for tuned kernels, so a user can continue in Tensile
//! from a winner: the problem type, the winner's parameters as single-valued
//! `ForkParameters` in Tensile's names, and the exact problem size.
//!
//! Mapping (gemmtune -> TensileLite):
//! - MacroTile, MatrixInstruction and the waves of a workgroup -> one 9-entry
//!   `MatrixInstruction` `[MI_M, MI_N, MI_K, MI_B, MIBlockM, WaveTileM, WaveTileN,
//!   WaveGroupM, WaveGroupN]`, from which TensileLite derives MacroTile0 =
//!   MI_M x WaveTileM x WaveGroupM (and MacroTile1 likewise);
//! - GlobalSplitUAlgorithm: atomic -> `SingleBuffer`, per-split workspace ->
//!   `MultipleBuffer`, summed in the main kernel -> `MultipleBufferSingleKernel`;
//! - GlobalReadVectorWidth -> `GlobalReadVectorWidthA` and `...B`;
//! - DepthU, PrefetchGlobalRead, PrefetchLocalRead, LdsPadA/B, GlobalSplitU,
//!   WorkGroupMapping, StoreVectorWidth, StaggerU keep their names;
//! - LdsSwizzle has no TensileLite fork parameter and is written as a comment.
//!
//! The YAML is written by hand (a fixed, small structure) so no YAML library is needed.

use thiserror::Error;

use crate::problem::{ComputeType, GemmProblem};
use crate::space::{GsuAlgo, KernelConfig};

#[derive(Debug, Error, PartialEq)]
pub enum TensileError {
    #[error("{0} uses the FMA path (no matrix instruction), which TensileLite's MatrixInstruction cannot describe")]
    FmaPath(String),
    #[error("{0} is a Hopper warpgroup (wgmma) kernel; Tensile generates AMD MFMA kernels and has no equivalent")]
    Warpgroup(String),
    #[error("{0} is a GEMV kernel (Gemv=1: dot products of A's rows without tiles); TensileLite's tiled kernels have no equivalent")]
    Gemv(String),
    #[error("{name}: the wave tile {wave}x{wave1} is not a whole number of {mi0}x{mi1} matrix instructions")]
    WaveTile {
        name: String,
        wave: u32,
        wave1: u32,
        mi0: u32,
        mi1: u32,
    },
}

/// What the config file says about where the kernel came from (comments only).
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    pub device_name: String,
    pub arch: String,
    pub kernel_us: Option<f64>,
    pub vendor_us: Option<f64>,
}

/// Tensile's type letter as a ProblemType `DataType` value.
fn type_letter(t: crate::problem::DataType) -> &'static str {
    match t {
        crate::problem::DataType::Bf16 => "B",
        crate::problem::DataType::F16 => "H",
        crate::problem::DataType::F32 => "S",
        crate::problem::DataType::F8 => "F8",
        crate::problem::DataType::Bf8 => "B8",
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// The TensileLite `MatrixInstruction` entry of a config.
pub fn matrix_instruction(c: &KernelConfig) -> Result<[u32; 9], TensileError> {
    // Before the instruction: the matrix-core GEMV names an mma.sync shape it uses untiled.
    if c.gv == 1 {
        return Err(TensileError::Gemv(c.name()));
    }
    if !c.uses_matrix_cores() {
        return Err(TensileError::FmaPath(c.name()));
    }
    if crate::space::constraints::is_wgmma(c) {
        return Err(TensileError::Warpgroup(c.name()));
    }
    let [w0, w1] = c.wave_tile();
    let [m, n, k] = c.mi;
    if w0 == 0 || w1 == 0 || w0 % m != 0 || w1 % n != 0 {
        return Err(TensileError::WaveTile {
            name: c.name(),
            wave: w0,
            wave1: w1,
            mi0: m,
            mi1: n,
        });
    }
    Ok([m, n, k, 1, 1, w0 / m, w1 / n, c.wg[0], c.wg[1]])
}

/// The benchmark config for one tuned GEMM.
pub fn benchmark_config(
    problem: &GemmProblem,
    c: &KernelConfig,
    from: &Provenance,
) -> Result<String, TensileError> {
    let mi = matrix_instruction(c)?;
    let mut y = String::new();
    y.push_str("# Tensile/TensileLite benchmark config for one GEMM tuned by gemmtune.\n");
    y.push_str(&format!("# Kernel:  {}\n", c.name()));
    y.push_str(&format!("# Problem: {}\n", problem.label()));
    y.push_str(&format!(
        "# Reproduce the vendor timing with: {}\n",
        problem.hipblaslt_bench_args()
    ));
    if let Some(k) = from.kernel_us {
        let vendor = from
            .vendor_us
            .map(|v| format!(", vendor library {v:.2} us ({:.3}x)", v / k))
            .unwrap_or_default();
        y.push_str(&format!(
            "# Measured on {} ({}): {k:.2} us{vendor}\n",
            from.device_name, from.arch
        ));
    }
    if !from.arch.starts_with("gfx") && !from.arch.is_empty() {
        y.push_str(&format!(
            "# Note: measured on {}, not an AMD GPU; MatrixInstruction shapes may need mapping to the target's MFMA shapes.\n",
            from.arch
        ));
    }
    if c.swizzle != 0 {
        y.push_str("# Not expressible in TensileLite: LdsSwizzle=1 (XOR-swizzled LDS rows instead of padding).\n");
    }
    if problem.lda != problem.a_rows()
        || problem.ldb != problem.b_rows()
        || problem.ldc != problem.m
        || problem.ldd != problem.ldc
    {
        y.push_str(&format!(
            "# Leading dimensions are not packed: lda={} ldb={} ldc={} ldd={}.\n",
            problem.lda, problem.ldb, problem.ldc, problem.ldd
        ));
    }
    y.push_str("GlobalParameters:\n");
    y.push_str("  MinimumRequiredVersion: 4.33.0\n");
    y.push_str("  NumElementsToValidate: -1\n");
    y.push_str("  BoundsCheck: False\n");
    y.push_str("  KernelTime: True\n");
    y.push_str("  DataInitTypeAB: 3\n");
    y.push_str("  DataInitTypeBeta: 0\n");
    y.push_str("  RotatingBufferSize: 512\n");
    y.push_str("\nBenchmarkProblems:\n");
    y.push_str(&format!("  - # {}\n", problem.label()));
    y.push_str("    - # ProblemType\n");
    y.push_str("      OperationType: GEMM\n");
    y.push_str(&format!(
        "      DataType: {}\n",
        type_letter(problem.a_type)
    ));
    y.push_str(&format!(
        "      DestDataType: {}\n",
        type_letter(problem.d_type)
    ));
    let compute = match problem.compute_type {
        ComputeType::F32 | ComputeType::Xf32 => "s",
        ComputeType::F16 => "h",
    };
    y.push_str(&format!("      ComputeDataType: {compute}\n"));
    y.push_str(&format!(
        "      HighPrecisionAccumulate: {}\n",
        py_bool(problem.compute_type != ComputeType::F16 && problem.a_type.bytes() < 4)
    ));
    if problem.compute_type == ComputeType::Xf32 {
        y.push_str("      F32XdlMathOp: x\n");
    }
    y.push_str(&format!(
        "      TransposeA: {}\n",
        py_bool(problem.trans_a.is_t())
    ));
    y.push_str(&format!(
        "      TransposeB: {}\n",
        py_bool(problem.trans_b.is_t())
    ));
    y.push_str(&format!(
        "      UseBeta: {}\n",
        py_bool(problem.beta != 0.0)
    ));
    y.push_str("      Batched: True\n");
    y.push_str("    - # BenchmarkProblemSizeGroup\n");
    y.push_str("      InitialSolutionParameters:\n");
    y.push_str("      BenchmarkCommonParameters:\n");
    y.push_str("        - KernelLanguage: [\"Assembly\"]\n");
    y.push_str("      ForkParameters:\n");
    y.push_str("        - MatrixInstruction:\n");
    y.push_str(&format!(
        "          - [{}]\n",
        mi.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // Stream-K is a parameter of its own in Tensile (deterministic fix-up: StreamKAtomic 0),
    // with GlobalSplitU 1; Tensile sizes the persistent grid from the device itself.
    let (gsu, algo) = match c.gsu_algo {
        GsuAlgo::Atomic => (c.gsu, "\"SingleBuffer\""),
        GsuAlgo::Reduce => (c.gsu, "\"MultipleBuffer\""),
        GsuAlgo::StreamK => (1, "\"MultipleBuffer\""),
        GsuAlgo::SingleKernel => (c.gsu, "\"MultipleBufferSingleKernel\""),
    };
    let stream_k = u8::from(c.gsu_algo == GsuAlgo::StreamK);
    let forks: Vec<(&str, String)> = vec![
        ("DepthU", c.depth_u.to_string()),
        ("PrefetchGlobalRead", c.pgr.to_string()),
        ("PrefetchLocalRead", c.plr.to_string()),
        ("LdsPadA", c.lpa.to_string()),
        ("LdsPadB", c.lpb.to_string()),
        ("GlobalSplitU", gsu.to_string()),
        ("GlobalSplitUAlgorithm", algo.to_string()),
        ("StreamK", stream_k.to_string()),
        ("StreamKAtomic", "0".to_string()),
        ("WorkGroupMapping", c.wgm.to_string()),
        ("GlobalReadVectorWidthA", c.grvw.to_string()),
        ("GlobalReadVectorWidthB", c.grvw.to_string()),
        ("StoreVectorWidth", c.svw.to_string()),
        ("StaggerU", c.su.to_string()),
    ];
    for (name, value) in forks {
        y.push_str(&format!("        - {name}: [{value}]\n"));
    }
    y.push_str("      BenchmarkJoinParameters:\n");
    y.push_str("      BenchmarkFinalParameters:\n");
    y.push_str("        - ProblemSizes:\n");
    y.push_str(&format!(
        "          - Exact: [{}, {}, {}, {}]\n",
        problem.m, problem.n, problem.batch, problem.k
    ));
    if from.arch.starts_with("gfx") {
        y.push_str("\nLibraryLogic:\n");
        y.push_str(&format!("  ArchitectureName: \"{}\"\n", from.arch));
        y.push_str("  LibraryType: \"GridBased\"\n");
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn winner() -> KernelConfig {
        KernelConfig::parse(
            "MT64x32x64_MI16x16x16_WG2x1_PGR2_PLR1_LPA8_LPB0_SW0_GSU4A_WGM8_GRVW8_SVW4_SU2",
        )
        .unwrap()
    }

    #[test]
    fn matrix_instruction_rebuilds_the_macro_tile() {
        let c = winner();
        let mi = matrix_instruction(&c).unwrap();
        assert_eq!(mi, [16, 16, 16, 1, 1, 2, 2, 2, 1]);
        // TensileLite: MacroTile = MI x MIBlock x WaveTile x WaveGroup.
        assert_eq!(mi[0] * mi[4] * mi[5] * mi[7], c.mt0);
        assert_eq!(mi[1] * mi[6] * mi[8], c.mt1);
    }

    #[test]
    fn config_has_the_problem_type_forks_and_exact_size() {
        let p = GemmProblem::new(16032, 109, 16384);
        let y = benchmark_config(
            &p,
            &winner(),
            &Provenance {
                device_name: "AMD Instinct MI300X".into(),
                arch: "gfx942".into(),
                kernel_us: Some(100.0),
                vendor_us: Some(120.0),
            },
        )
        .unwrap();
        for needle in [
            "OperationType: GEMM",
            "DataType: B\n",
            "DestDataType: B\n",
            "ComputeDataType: s\n",
            "HighPrecisionAccumulate: True",
            "TransposeA: True",
            "TransposeB: False",
            "UseBeta: False",
            "- [16, 16, 16, 1, 1, 2, 2, 2, 1]",
            "- DepthU: [64]",
            "- GlobalSplitU: [4]",
            "- GlobalSplitUAlgorithm: [\"SingleBuffer\"]",
            "- GlobalReadVectorWidthA: [8]",
            "- StaggerU: [2]",
            "- Exact: [16032, 109, 1, 16384]",
            "ArchitectureName: \"gfx942\"",
            "1.200x",
        ] {
            assert!(y.contains(needle), "missing {needle:?} in\n{y}");
        }
        // Every line is indented by whole pairs of spaces and no tab sneaks in.
        for line in y.lines() {
            let indent = line.len() - line.trim_start().len();
            assert!(indent % 2 == 0 && !line.contains('\t'), "{line:?}");
        }
        // The in-kernel sum is Tensile's single-kernel multiple-buffer reduction.
        let single = KernelConfig {
            gsu_algo: GsuAlgo::SingleKernel,
            ..winner()
        };
        let y = benchmark_config(&p, &single, &Provenance::default()).unwrap();
        assert!(y.contains("- GlobalSplitUAlgorithm: [\"MultipleBufferSingleKernel\"]"));
        assert!(y.contains("- GlobalSplitU: [4]"));
    }

    #[test]
    fn fma_configs_are_refused_with_a_reason() {
        let c = KernelConfig::parse(
            "MT64x32x16_MI1x1x1_WG2x1_PGR2_PLR0_LPA0_LPB0_SW0_GSU1_WGM8_GRVW4_SVW4_SU0",
        )
        .unwrap();
        let e = benchmark_config(&GemmProblem::new(64, 64, 64), &c, &Provenance::default());
        assert!(matches!(e, Err(TensileError::FmaPath(_))));
        let w = KernelConfig::parse(
            "MT128x112x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
        )
        .unwrap();
        let e = benchmark_config(&GemmProblem::new(64, 64, 64), &w, &Provenance::default());
        assert!(matches!(e, Err(TensileError::Warpgroup(_))));
    }

    #[test]
    fn gemv_kernels_have_no_tensile_config() {
        for name in [
            "MT16x8x16_MI16x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW8_SVW1_SU0_GV1",
            "MT16x1x16_MI1x1x1_WG8x1_PGR2_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW8_SVW1_SU0_GV1",
        ] {
            let c = KernelConfig::parse(name).unwrap();
            assert!(
                matches!(matrix_instruction(&c), Err(TensileError::Gemv(_))),
                "{name}"
            );
        }
    }
}
