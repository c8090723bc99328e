//! The GEMV path (Gemv = 1, N up to 8, or M up to 8 along N with SwapAB): which configs the space holds, where the search
//! starts, how a GEMV kernel is launched, and that its kernels compile without spills for
//! sm_90a (nvcc) and gfx90a (hipcc) in every layout and input type, with and without split-K,
//! batches and beta. Without a compiler the compile checks print a notice and pass, unless
//! GEMMTUNE_REQUIRE_TOOLCHAIN is set (CI).

mod common;

use common::kernels::{hip_failures, hipcc_or_skip, nvcc_or_skip, problem, sm90a_failures};
use gemmtune::compile::codegen;
use gemmtune::compile::Target;
use gemmtune::hw::{HwSpec, Vendor};
use gemmtune::problem::{DataType, GemmProblem};
use gemmtune::space::{constraints, GsuAlgo, KernelConfig, ParamId, Space};

const TN_START: &str =
    "MT16x4x16_MI1x1x1_WG8x1_PGR4_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW8_SVW1_SU0_GV1";

fn cfg(name: &str) -> KernelConfig {
    KernelConfig::parse(name).unwrap()
}

fn rule(c: &KernelConfig, p: &GemmProblem, hw: &HwSpec) -> &'static str {
    constraints::check(c, p, hw)
        .map(|_| "ok")
        .unwrap_or_else(|v| v.rule)
}

/// Problems of every layout and input type the GEMV path takes, at edge sizes.
fn problems() -> Vec<GemmProblem> {
    use DataType::*;
    vec![
        problem(4096, 1, 4096, "TN", Bf16, Bf16, 0.0, 1),
        problem(1000, 3, 777, "TN", Bf16, Bf16, 0.5, 2),
        problem(4096, 8, 4096, "TT", F16, F16, 0.0, 1),
        problem(4096, 4, 4096, "NN", Bf16, Bf16, 0.0, 1),
        problem(333, 5, 1000, "NT", F16, F32, 1.0, 3),
        problem(2048, 2, 2048, "TN", F32, F32, 0.0, 1),
        problem(2048, 7, 1024, "NN", F32, F32, 0.25, 1),
        problem(4096, 8, 4096, "TN", F8, Bf16, 0.0, 1),
        problem(4096, 1, 4096, "NN", F8, Bf16, 0.0, 1),
        // M up to 8: along N (SwapAB), B streamed K-contiguous (transB = N) or N-contiguous.
        problem(1, 4096, 4096, "NN", Bf16, Bf16, 0.0, 1),
        problem(3, 1000, 777, "TN", F16, F16, 0.5, 2),
        problem(2, 2048, 1024, "NT", F32, F32, 0.25, 1),
        problem(4, 4096, 4096, "TN", F8, Bf16, 0.0, 1),
        problem(8, 2048, 1024, "NN", F32, F32, 0.0, 1),
    ]
}

#[test]
fn gemv_configs_are_valid_for_n_up_to_8_only() {
    let hw = HwSpec::by_name("H100-SXM").unwrap();
    let c = cfg(TN_START);
    for n in 1..=4 {
        let p = GemmProblem::new(4096, n, 4096);
        assert_eq!(rule(&c, &p, &hw), "ok", "N={n}");
    }
    // N past the columns it covers, and past the path's reach.
    assert_eq!(rule(&c, &GemmProblem::new(4096, 5, 4096), &hw), "gemv");
    let wide = KernelConfig { mt1: 16, ..c };
    assert_eq!(rule(&wide, &GemmProblem::new(4096, 16, 4096), &hw), "gemv");
    // No matrix atom, one column of waves, split-K by a reduction or atomics only.
    let p = GemmProblem::new(4096, 4, 4096);
    for bad in [
        KernelConfig {
            mi: [16, 8, 16],
            ..c
        },
        KernelConfig { wg: [4, 2], ..c },
        KernelConfig {
            gsu: 2,
            gsu_algo: GsuAlgo::StreamK,
            ..c
        },
        KernelConfig {
            gsu: 2,
            gsu_algo: GsuAlgo::SingleKernel,
            ..c
        },
        KernelConfig {
            gsu: 1,
            gsu_algo: GsuAlgo::StreamK,
            ..c
        },
        KernelConfig { mt0: 256, ..c },
        KernelConfig { pgr: 5, ..c },
    ] {
        assert_eq!(rule(&bad, &p, &hw), "gemv", "{}", bad.name());
    }
    for ok in [
        KernelConfig {
            gsu: 4,
            gsu_algo: GsuAlgo::Atomic,
            ..c
        },
        KernelConfig {
            gsu: 4,
            gsu_algo: GsuAlgo::Reduce,
            ..c
        },
    ] {
        assert_eq!(rule(&ok, &p, &hw), "ok", "{}", ok.name());
    }
    // Vector loads need aligned leading dimensions; narrower vectors take what is left.
    let mut odd = GemmProblem::new(4096, 1, 4095);
    odd.lda = 4095;
    odd.ldb = 4095;
    assert_eq!(rule(&c, &odd, &hw), "gemv");
    assert_eq!(rule(&KernelConfig { grvw: 1, ..c }, &odd, &hw), "ok");
    // A tile kernel never takes the GEMV's small column counts.
    let tile = KernelConfig { gv: 0, ..c };
    assert_ne!(rule(&tile, &p, &hw), "ok");
}

#[test]
fn a_row_vector_times_a_matrix_runs_the_gemv_along_n() {
    use gemmtune::device::sim::model_time_us;
    let hw = HwSpec::by_name("H100-SXM").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    let p = problem(1, 4096, 4096, "NN", DataType::Bf16, DataType::Bf16, 0.0, 1);
    // One column: D's single row.
    let one = KernelConfig {
        mt1: 1,
        ..cfg(TN_START)
    };
    let along_n = KernelConfig { sab: 1, ..one };
    assert_eq!(rule(&along_n, &p, &hw), "ok");
    assert!(along_n.name().ends_with("_SAB1_GV1"), "{}", along_n.name());
    assert_eq!(KernelConfig::parse(&along_n.name()).unwrap(), along_n);
    // Unswapped its columns would be N = 4096; swapped, M past 8 is past its reach.
    assert_eq!(rule(&one, &p, &hw), "gemv");
    let nine = problem(9, 4096, 4096, "NN", DataType::Bf16, DataType::Bf16, 0.0, 1);
    assert_eq!(rule(&along_n, &nine, &hw), "gemv");
    // SwapAB says which side the GEMV runs along: canonical names keep it.
    assert_eq!(along_n.canonical().sab, 1);
    // Row blocks of N, and the kernel told to transpose.
    let plan = codegen::launch_plan(&along_n, &p, &target);
    assert_eq!(plan.grid, [256, 1, 1]);
    let src = codegen::generate(&along_n, &p, &target);
    assert!(src.defines.contains("#define GT_SWAP_AB 1"));
    assert!(src.defines.contains("#define GT_GEMV 1"));
    // The row vector (A, N-contiguous with lda = 1) is one K-contiguous run, read in vectors;
    // four rows of it (lda = 4) are read a row of four columns at a time.
    assert!(src.defines.contains("#define GT_GEMV_B_VECTORS 1"));
    let four = problem(4, 4096, 4096, "NN", DataType::Bf16, DataType::Bf16, 0.0, 1);
    let four_cols = KernelConfig { mt1: 4, ..along_n };
    assert_eq!(constraints::gemv_b_vectors(&four_cols, &four), 2);
    assert_eq!(constraints::gemv_b_vectors(&along_n, &four), 0);
    // Eight f32 columns (32 bytes) are two vectors; with ldb = 8 every row starts aligned.
    let eight_f32 = problem(8, 4096, 4096, "NN", DataType::F32, DataType::F32, 0.0, 1);
    let eight_cols = KernelConfig { mt1: 8, ..along_n };
    assert_eq!(constraints::gemv_b_vectors(&eight_cols, &eight_f32), 2);
    let src = codegen::generate(&eight_cols, &eight_f32, &target);
    assert!(src.defines.contains("#define GT_GEMV_B_VECTORS 2"));
    // The model sees the transposed problem: x^T W costs what W^T x does.
    let t = p.transposed();
    assert_eq!(
        (t.m, t.n, t.trans_a.is_t(), t.trans_b.is_t()),
        (4096, 1, true, true)
    );
    assert_eq!(
        model_time_us(&along_n, &p, &hw),
        model_time_us(&one, &t, &hw)
    );
    // The space starts there, and a GEMV sweep of it runs along N only.
    let space = Space::for_problem(&p, &hw);
    let starts = space.gemv_starts();
    assert!(!starts.is_empty() && starts.iter().all(|c| c.sab == 1 && c.gv == 1));
    assert_eq!(
        space.gemv_only().unwrap().domain(ParamId::SwapAB).values,
        [1]
    );
}

#[test]
fn the_parameters_a_gemv_ignores_never_make_two_kernels() {
    let c = cfg(TN_START);
    let noisy = KernelConfig {
        depth_u: 64,
        lpa: 8,
        swizzle: 1,
        wgm: 8,
        svw: 4,
        su: 2,
        plr: 1,
        ..c
    };
    assert_eq!(noisy.canonical(), c);
    assert_eq!(noisy.name(), TN_START);
}

#[test]
fn gemv_starts_are_measured_first_for_tiny_n_in_every_layout_and_type() {
    for hw in ["H100-SXM", "MI300X"].map(|n| HwSpec::by_name(n).unwrap()) {
        for p in problems() {
            let space = Space::for_problem(&p, &hw);
            let starts = space.gemv_starts();
            assert!(
                !starts.is_empty(),
                "{} on {}: no GEMV start",
                p.label(),
                hw.name
            );
            for s in &starts {
                assert_eq!(s.gv, 1);
                space
                    .check(s)
                    .unwrap_or_else(|v| panic!("{} {}: {v}", p.label(), s.name()));
                // Measured first: as a start, or as the default itself where no tile kernel
                // is near the preferred one and the default falls back to the GEMV.
                assert!(
                    space.extra_starts().contains(s) || space.default_config().ok() == Some(*s),
                    "{}",
                    s.name()
                );
                assert_eq!(KernelConfig::parse(&s.name()).unwrap(), *s);
            }
        }
        let wide = GemmProblem::new(4096, 9, 4096);
        assert!(Space::for_problem(&wide, &hw).gemv_starts().is_empty());
    }
}

#[test]
fn a_sweep_space_of_gemv_kernels_enumerates_valid_distinct_configs() {
    let hw = HwSpec::by_name("H200").unwrap();
    for p in [problems()[0].clone(), problems()[3].clone()] {
        let mut space = Space::for_problem(&p, &hw);
        // What a GEMV sweep varies: rows, waves, loads in flight, vectors, splits.
        for (name, values) in [
            ("Gemv", "1"),
            ("MatrixInstruction", "1x1x1"),
            ("MacroTile1", "4"),
            ("WavesN", "1"),
            ("GlobalSplitU", "1,2"),
            ("DepthU", "16"),
            ("LdsPadA", "0"),
            ("LdsPadB", "0"),
            ("LdsSwizzle", "0"),
            ("PrefetchLocalRead", "0"),
            ("WorkGroupMapping", "1"),
            ("StoreVectorWidth", "1"),
            ("StaggerU", "0"),
            ("ProducerWarp", "0"),
            ("SwapAB", "0"),
            ("PersistentKernel", "0"),
        ] {
            space.fix(name, values).unwrap();
        }
        let all = space.enumerate(10_000_000).unwrap();
        assert!(all.len() >= 4, "{}: {} configs", p.label(), all.len());
        let mut names: Vec<String> = all.iter().map(|c| c.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "duplicates after canonicalisation");
        for c in &all {
            assert_eq!(c.gv, 1);
            space.check(c).unwrap();
        }
    }
}

#[test]
fn a_gemv_launch_covers_row_blocks_by_splits_by_batches() {
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    let p = problem(1000, 3, 777, "TN", DataType::Bf16, DataType::Bf16, 0.5, 2);
    let c = KernelConfig {
        gsu: 3,
        gsu_algo: GsuAlgo::Reduce,
        ..cfg(TN_START)
    };
    let plan = codegen::launch_plan(&c, &p, &target);
    assert_eq!(plan.grid, [63, 3, 2]);
    assert_eq!(plan.block, [256, 1, 1]);
    // K-contiguous A: LDS for the totals of waves that share K where a block's rows run past
    // M (every wave's R x MT1 totals: MT0 x MT1 floats).
    assert_eq!(plan.shared_bytes, 16 * 4 * 4);
    assert!(plan.tma.is_none());
    assert_eq!(plan.workspace_bytes, 1000 * 3 * 2 * 4 * 3);
    assert!(
        plan.epilogue.is_some(),
        "split partials are summed by the reduction kernel"
    );
    let src = codegen::generate(&c, &p, &target);
    assert!(src.defines.contains("#define GT_GEMV 1"));
    let tile = Space::for_problem(
        &GemmProblem::new(4096, 128, 4096),
        &HwSpec::by_name("H200").unwrap(),
    )
    .default_config()
    .unwrap();
    assert!(
        !codegen::generate(&tile, &GemmProblem::new(4096, 128, 4096), &target)
            .defines
            .contains("GT_GEMV")
    );
    // M-contiguous A: the waves' partial sums meet in LDS.
    let nn = problem(4096, 4, 4096, "NN", DataType::Bf16, DataType::Bf16, 0.0, 1);
    let c = cfg("MT256x4x16_MI1x1x1_WG4x1_PGR4_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW8_SVW1_SU0_GV1");
    assert_eq!(
        constraints::check(&c, &nn, &HwSpec::by_name("H200").unwrap()),
        Ok(())
    );
    let plan = codegen::launch_plan(&c, &nn, &target);
    assert_eq!(plan.grid, [16, 1, 1]);
    assert_eq!(plan.shared_bytes, 4 * 256 * 4 * 4);
}

/// The starts of each problem and variants of them: atomic and reduced splits, one load in
/// flight, narrower vectors, more rows per wave.
fn compile_cases(hw: &HwSpec) -> Vec<(GemmProblem, KernelConfig)> {
    let mut out = Vec::new();
    for p in problems() {
        let space = Space::for_problem(&p, hw);
        for s in space.gemv_starts() {
            let variants = [
                s,
                KernelConfig {
                    gsu: 3,
                    gsu_algo: GsuAlgo::Atomic,
                    ..s
                },
                KernelConfig {
                    gsu: 2,
                    gsu_algo: GsuAlgo::Reduce,
                    pgr: 1,
                    ..s
                },
                KernelConfig {
                    grvw: (s.grvw / 2).max(1),
                    mt0: if constraints::gemv_problem(&s, &p).trans_a.is_t() {
                        s.mt0 * 2
                    } else {
                        s.mt0 / 2
                    },
                    ..s
                },
            ];
            for v in variants {
                let v = v.canonical();
                if space.is_valid(&v) && !out.iter().any(|(q, c)| q == &p && *c == v) {
                    out.push((p.clone(), v));
                }
            }
        }
    }
    out
}

#[test]
fn gemv_kernels_compile_for_sm90a_without_spills() {
    let Some(nvcc) = nvcc_or_skip("gemv") else {
        return;
    };
    let hw = HwSpec::by_name("H100-SXM").unwrap();
    let cases = compile_cases(&hw);
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let failures = sm90a_failures(&nvcc, &cases);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn gemv_kernels_compile_for_gfx90a_without_scratch() {
    let Some(hipcc) = hipcc_or_skip("gfx90a", "gemv") else {
        return;
    };
    let hw = HwSpec::by_name("MI250X").unwrap();
    let target = Target::arch(Vendor::Amd, "gfx90a");
    // 8-bit inputs have no gfx90a encoding in the space's vocabulary: the bf16/f16/f32 cases.
    let cases: Vec<_> = compile_cases(&hw)
        .into_iter()
        .filter(|(p, _)| !p.a_type.is_8bit())
        .collect();
    let failures = hip_failures(&hipcc, &target, &cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The parameter is in the space's vocabulary for every GPU.
    assert!(ParamId::from_name("Gemv").is_some() && ParamId::from_name("GV").is_some());
}
