//! The flat batch path (FlatBatch = 1: many small batches, each computed whole by a group of
//! waves from flat LDS images of its operands with FMAs, or from 16-bit tiles padded to whole
//! matrix instructions; FlatBatch = 2, its staged form, each workgroup walking batches with
//! the next one's operands copied meanwhile): which problems search it, where the search
//! starts, how it is launched, and that its kernels compile without spills for sm_90a (nvcc
//! and NVRTC) and gfx90a, gfx942 and gfx950 (hipcc or clang) in every layout, 16-bit, 8-bit
//! and f32 inputs, with beta, on one to eight waves a batch, on FMAs and on each GPU's
//! warp-level matrix instructions.
//! Without a compiler the compile checks print a notice and pass, unless
//! GEMMTUNE_REQUIRE_TOOLCHAIN is set (CI).

mod common;

use common::kernels::{
    hip_failures, hipcc_or_skip, nvcc_or_skip, nvrtc_or_skip, problem, sm90a_failures,
};
use gemmtune::compile::{codegen, Target};
use gemmtune::hw::{HwSpec, Vendor};
use gemmtune::problem::{DataType, GemmProblem};
use gemmtune::space::{constraints, KernelConfig, ParamId, Space};

/// Problems of every layout and input type the path takes, sizes off the 16-byte grid.
fn problems() -> Vec<GemmProblem> {
    use DataType::*;
    vec![
        problem(17, 17, 17, "TN", F16, F16, 0.0, 50000),
        problem(33, 33, 33, "NN", F16, F16, 0.0, 10000),
        problem(33, 35, 37, "TT", Bf16, Bf16, 0.5, 3000),
        problem(45, 45, 45, "TT", F32, F32, 0.0, 8000),
        problem(41, 47, 23, "NT", F32, F32, 1.0, 3000),
        problem(77, 77, 77, "TN", F16, F16, 0.0, 3000),
        problem(50, 50, 50, "NT", F16, F16, 0.0, 4000),
        problem(61, 29, 90, "NN", Bf16, Bf16, 1.0, 3000),
        problem(4, 6, 64, "NN", F32, F32, 0.0, 131072),
        problem(24, 24, 40, "TN", F8, Bf16, 0.0, 4000),
    ]
}

/// Batches past the unstaged form's widest, which only the staged form takes.
fn staged_problems() -> Vec<GemmProblem> {
    use DataType::*;
    vec![
        problem(100, 100, 100, "NN", F16, F16, 0.0, 5000),
        problem(150, 150, 150, "NN", F16, F16, 0.0, 2000),
        problem(130, 70, 110, "TT", Bf16, Bf16, 0.5, 1000),
        problem(99, 121, 13, "NT", F16, F16, 1.0, 700),
    ]
}

#[test]
fn many_small_batches_start_on_the_flat_batch_path() {
    let hw = HwSpec::by_name("H200").unwrap();
    for p in problems() {
        let s = Space::for_problem(&p, &hw);
        let starts = s.flat_batch_starts();
        assert!(!starts.is_empty(), "{}", p.label());
        // 16-bit inputs of one type on matrix cores first, then on FMAs; others on FMAs.
        let mma = p.a_type.bytes() == 2 && p.b_type == p.a_type;
        assert_eq!(starts[0].uses_matrix_cores(), mma, "{}", p.label());
        assert!(starts.iter().any(|c| c.mi == [1, 1, 1]), "{}", p.label());
        for c in &starts {
            assert!(
                c.fb == 1 || (c.fb == 2 && c.uses_matrix_cores()),
                "{}",
                c.name()
            );
            assert!(c.mt0 as i64 >= p.m && c.mt1 as i64 >= p.n, "{}", c.name());
            s.check(c)
                .unwrap_or_else(|v| panic!("{} {}: {v}", p.label(), c.name()));
        }
        // In the first batch a search measures, so in bench's default set.
        let extra = s.extra_starts();
        assert!(starts.iter().all(|c| extra.contains(c)), "{}", p.label());
    }
    // Large batches and single GEMMs do not search it.
    for p in [
        problem(256, 256, 256, "TN", DataType::F16, DataType::F16, 0.0, 5000),
        problem(33, 33, 33, "TN", DataType::F16, DataType::F16, 0.0, 1),
    ] {
        let s = Space::for_problem(&p, &hw);
        assert!(!s.domain(ParamId::FlatBatch).contains(1), "{}", p.label());
        assert!(s.flat_batch_starts().is_empty());
    }
    // Small batches whose rows are on the 16-byte grid search it without starting there.
    let aligned = problem(64, 64, 64, "NN", DataType::F32, DataType::F32, 0.0, 4096);
    let s = Space::for_problem(&aligned, &hw);
    assert!(s.domain(ParamId::FlatBatch).contains(1));
    assert!(s.flat_batch_starts().is_empty());
}

#[test]
fn batches_past_96_start_on_the_staged_form() {
    let hw = HwSpec::by_name("H200").unwrap();
    for p in staged_problems() {
        let s = Space::for_problem(&p, &hw);
        assert_eq!(s.domain(ParamId::FlatBatch).values, [0, 2], "{}", p.label());
        let starts = s.flat_batch_starts();
        assert!(!starts.is_empty(), "{}", p.label());
        for c in &starts {
            assert_eq!((c.fb, c.wg[0]), (2, 1), "{}", c.name());
            assert!(c.mt0 as i64 >= p.m && c.mt1 as i64 >= p.n, "{}", c.name());
            s.check(c)
                .unwrap_or_else(|v| panic!("{} {}: {v}", p.label(), c.name()));
            // Its LDS: the padded tiles and both operands' ranges as they lie.
            assert!(
                constraints::flat_batch_lds_bytes(c, &p)
                    > constraints::flat_stages_bytes(&p) + 2 * (p.m * p.k) as u64
            );
        }
        assert!(s.extra_starts().contains(&starts[0]), "{}", p.label());
        // Neither FMAs nor several groups a workgroup on the staged form.
        let fma = KernelConfig {
            mi: [1, 1, 1],
            ..starts[0]
        };
        assert!(s.check(&fma).is_err());
        let pairs = KernelConfig {
            wg: [2, starts[0].wg[1]],
            ..starts[0]
        };
        assert!(s.check(&pairs).is_err());
    }
    // Past the LDS: 200 x 200 x 200 in 16-bit needs more than 227 KiB.
    let wide = problem(200, 200, 200, "NN", DataType::F16, DataType::F16, 0.0, 5000);
    assert_eq!(
        Space::for_problem(&wide, &hw)
            .domain(ParamId::FlatBatch)
            .values,
        [0]
    );
    // The staged launch: persistent over as many workgroups as fit, a batch each at most.
    let p = &staged_problems()[0];
    let c = Space::for_problem(p, &hw).flat_batch_starts()[0];
    let plan = codegen::launch_plan(&c, p, &Target::arch(Vendor::Nvidia, "sm_90a"));
    assert!(plan.persistent);
    assert_eq!(plan.grid, [5000, 1, 1]);
    assert_eq!(plan.grid_at_once(Some(264)), [264, 1, 1]);
    let text = codegen::generate(&c, p, &Target::arch(Vendor::Nvidia, "sm_90a")).text;
    assert!(text.contains("#define GT_FLAT_BATCH 2"));
}

#[test]
fn a_flat_batch_launch_takes_a_batch_a_group() {
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    let p = problem(17, 17, 17, "TN", DataType::F16, DataType::F16, 0.0, 50001);
    let c = Space::for_problem(&p, &hw).flat_batch_starts()[0];
    let plan = codegen::launch_plan(&c, &p, &target);
    // WavesM batches a workgroup, the last one partly empty.
    assert_eq!(plan.grid, [50001u32.div_ceil(c.wg[0]), 1, 1]);
    assert_eq!(plan.block, [c.wg[0] * c.wg[1] * 32, 1, 1]);
    assert_eq!(
        u64::from(plan.shared_bytes),
        constraints::flat_batch_lds_bytes(&c, &p)
    );
    assert_eq!((plan.workspace_bytes, plan.flags_bytes), (0, 0));
    let text = codegen::generate(&c, &p, &target).text;
    assert!(text.contains("#define GT_FLAT_BATCH 1"));
}

/// Each problem's starts, and its first start of each kind (FMAs, matrix cores, staged) on
/// every wave count a batch that fits it.
fn compile_cases(hw: &HwSpec) -> Vec<(GemmProblem, KernelConfig)> {
    let mut out = Vec::new();
    for p in problems().into_iter().chain(staged_problems()) {
        let s = Space::for_problem(&p, hw);
        let starts = s.flat_batch_starts();
        for c in &starts {
            out.push((p.clone(), *c));
        }
        let first_fma = starts.iter().find(|c| c.mi == [1, 1, 1]);
        let first_mma = starts.iter().find(|c| c.uses_matrix_cores() && c.fb == 1);
        let first_staged = starts.iter().find(|c| c.fb == 2);
        for first in first_mma.into_iter().chain(first_fma).chain(first_staged) {
            for waves in [1, 2, 4, 8] {
                let c = KernelConfig {
                    wg: [1, waves],
                    ..*first
                };
                if s.check(&c).is_ok()
                    && !out.iter().any(|(q, d)| q.label() == p.label() && *d == c)
                {
                    out.push((p.clone(), c));
                }
            }
        }
    }
    out
}

#[test]
fn flat_batch_kernels_compile_for_sm90a_without_spills() {
    let Some(nvcc) = nvcc_or_skip("flat batch") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let cases = compile_cases(&hw);
    assert!(cases.len() >= 16, "{} cases", cases.len());
    let failures = sm90a_failures(&nvcc, &cases);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn flat_batch_kernels_compile_with_nvrtc() {
    // bench and tune on NVIDIA compile with NVRTC, not nvcc: the matrix-core kernels once
    // used a builtin only nvcc has.
    let Some(nvrtc) = nvrtc_or_skip("flat batch") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let cases: Vec<_> = (compile_cases(&hw).into_iter())
        .filter(|(_, c)| c.uses_matrix_cores())
        .collect();
    assert!(cases.len() >= 8, "{} cases", cases.len());
    let failures = sm90a_failures(&nvrtc, &cases);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn flat_batch_kernels_compile_for_gfx90a_without_scratch() {
    let Some(hipcc) = hipcc_or_skip("gfx90a", "flat batch") else {
        return;
    };
    let hw = HwSpec::by_name("MI250X").unwrap();
    let target = Target::arch(Vendor::Amd, "gfx90a");
    // 8-bit inputs have no gfx90a encoding in the space's vocabulary.
    let cases: Vec<_> = compile_cases(&hw)
        .into_iter()
        .filter(|(p, _)| !p.a_type.is_8bit())
        .collect();
    assert!(cases.len() >= 10, "{} cases", cases.len());
    let failures = hip_failures(&hipcc, &target, &cases);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ParamId::from_name("FlatBatch").is_some() && ParamId::from_name("FB").is_some());
}

#[test]
fn flat_batch_kernels_compile_for_gfx942_and_gfx950_without_scratch() {
    for (arch, gpu) in [("gfx942", "MI300X"), ("gfx950", "MI355X")] {
        let Some(hipcc) = hipcc_or_skip(arch, "flat batch") else {
            continue;
        };
        let hw = HwSpec::by_name(gpu).unwrap();
        let target = Target::arch(Vendor::Amd, arch);
        let cases = compile_cases(&hw);
        assert!(cases.len() >= 12, "{arch}: {} cases", cases.len());
        let failures = hip_failures(&hipcc, &target, &cases);
        assert!(failures.is_empty(), "{arch}:\n{}", failures.join("\n\n"));
    }
}
