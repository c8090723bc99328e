//! Kernel configs and problems shared by the GPU smoke tests and the compile checks.
#![allow(dead_code)]

use gemmtune::compile::amd::HipCompiler;
use gemmtune::compile::codegen::{self, KernelSource};
use gemmtune::compile::nvidia::{NvccCompiler, NvrtcCompiler};
use gemmtune::compile::{pool, CompileError, Compiler, LaunchPlan, Target};
use gemmtune::problem::{DataType, GemmProblem, Trans};
use gemmtune::space::{GsuAlgo, KernelConfig, Space};
use rand::SeedableRng;

/// A packed problem of the given layout (`"TN"`, ...), types, beta and batch; alpha is 0.75
/// when beta is not zero, so both scalars are exercised.
#[allow(clippy::too_many_arguments)]
pub fn problem(
    m: i64,
    n: i64,
    k: i64,
    layout: &str,
    t: DataType,
    d: DataType,
    beta: f64,
    batch: i64,
) -> GemmProblem {
    let mut p = GemmProblem::new(m, n, k);
    let l: Vec<char> = layout.chars().collect();
    p.trans_a = if l[0] == 'T' { Trans::T } else { Trans::N };
    p.trans_b = if l[1] == 'T' { Trans::T } else { Trans::N };
    (p.a_type, p.b_type, p.c_type, p.d_type) = (t, t, d, d);
    p.beta = beta;
    p.alpha = if beta != 0.0 { 0.75 } else { 1.0 };
    p.batch = batch;
    (p.lda, p.ldb, p.ldc, p.ldd) = (0, 0, 0, 0);
    p.fill_defaults();
    p
}

/// `c` with TransposeLDS on, the operands it transposes (the M- or N-contiguous ones)
/// unpadded; `None` where `p` has no such operand.
pub fn with_transpose_lds(c: &KernelConfig, p: &GemmProblem) -> Option<KernelConfig> {
    let (a, b) = (!p.k_contiguous(true), !p.k_contiguous(false));
    (a || b).then_some(KernelConfig {
        tlds: 1,
        lpa: if a { 0 } else { c.lpa },
        lpb: if b { 0 } else { c.lpb },
        ..*c
    })
}

/// Default config, a few seeded samples, and forced split-K (atomic, reduce, stream-K) / swizzle
/// / odd-padding variants.
pub fn sample_configs(space: &Space, seed: u64, samples: usize) -> Vec<KernelConfig> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = vec![space
        .default_config()
        .expect("the space has a valid config")];
    for _ in 0..samples {
        if let Some(c) = space.sample(&mut rng) {
            out.push(c);
        }
    }
    let base = out[0];
    let variants = [
        KernelConfig {
            gsu: 2,
            gsu_algo: GsuAlgo::Atomic,
            ..base
        },
        KernelConfig {
            gsu: 3,
            gsu_algo: GsuAlgo::Reduce,
            su: 2,
            ..base
        },
        KernelConfig {
            gsu: 2,
            gsu_algo: GsuAlgo::StreamK,
            ..base
        },
        KernelConfig {
            swizzle: 1,
            lpa: 0,
            lpb: 0,
            ..base
        },
        KernelConfig {
            lpa: 4,
            lpb: 4,
            pgr: 1,
            plr: 0,
            ..base
        },
    ];
    for v in variants {
        if let Some(r) = space.repair(&v) {
            out.push(r);
        }
    }
    out.sort_by_key(|c| c.name());
    out.dedup();
    out
}

/// Hand-written kernel source `text` whose kernel `name` runs as one wave of 64 lanes (for
/// compile checks of code that is not generated from a config).
pub fn single_wave_source(name: &str, text: String) -> KernelSource {
    KernelSource {
        name: name.into(),
        defines: String::new(),
        text,
        launch: LaunchPlan {
            symbol: name.into(),
            grid: [1, 1, 1],
            block: [64, 1, 1],
            shared_bytes: 0,
            workspace_bytes: 0,
            zero_workspace: false,
            flags_bytes: 0,
            tma: None,
            tma_d: None,
            tma_c: None,
            persistent: false,
            epilogue: None,
            packs: Vec::new(),
        },
    }
}

/// The first lines of a compiler log that name an error (what a failed compile check prints).
pub fn error_lines(log: &str) -> String {
    log.lines()
        .filter(|l| l.contains("error"))
        .take(5)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Compiles each case for sm_90a with `nvcc`: one line for each compile error or spill.
pub fn sm90a_failures(nvcc: &dyn Compiler, cases: &[(GemmProblem, KernelConfig)]) -> Vec<String> {
    let target = Target::arch(gemmtune::hw::Vendor::Nvidia, "sm_90a");
    let mut failures = Vec::new();
    for (p, c) in cases {
        match pool::compile_batch(nvcc, std::slice::from_ref(c), p, &target, None, 0).remove(0) {
            Ok(k) if k.resources.spill_bytes.unwrap_or(0) > 0 => failures.push(format!(
                "{} {}: spills {:?}",
                p.label(),
                c.name(),
                k.resources
            )),
            Ok(_) => {}
            Err(CompileError::Failed { log }) => failures.push(format!(
                "{} {}:\n{}",
                p.label(),
                c.name(),
                error_lines(&log)
            )),
            Err(e) => panic!("{e}"),
        }
    }
    failures
}

/// Compiles each case for `target` with `hipcc`: one line for each compile error or scratch use.
pub fn hip_failures(
    hipcc: &HipCompiler,
    target: &Target,
    cases: &[(GemmProblem, KernelConfig)],
) -> Vec<String> {
    let mut failures = Vec::new();
    for (p, c) in cases {
        let src = codegen::generate(c, p, target);
        match hipcc.compile(&src, target) {
            Err(e) => failures.push(format!("{} for {}: {e}", c.name(), p.label())),
            Ok((_, res)) if res.spill_bytes.unwrap_or(0) > 0 => {
                failures.push(format!("{} for {}: scratch {res:?}", c.name(), p.label()))
            }
            Ok(_) => {}
        }
    }
    failures
}

/// The compiler `found` holds, or `None` with a notice that the `what` check for `target` is
/// skipped, unless GEMMTUNE_REQUIRE_TOOLCHAIN is set (CI), which makes a missing compiler a
/// failure.
pub fn toolchain_or_skip<T, E: std::fmt::Display>(
    what: &str,
    target: &str,
    found: Result<T, E>,
) -> Option<T> {
    match found {
        Ok(c) => Some(c),
        Err(e) => {
            if std::env::var_os("GEMMTUNE_REQUIRE_TOOLCHAIN").is_some() {
                panic!("GEMMTUNE_REQUIRE_TOOLCHAIN is set but no compiler builds {target}: {e}");
            }
            eprintln!("NOTICE: {what} {target} compile check skipped: {e}");
            None
        }
    }
}

/// nvcc (CUDA_PATH names a CUDA 13 toolkit), or `None` as [`toolchain_or_skip`] says.
pub fn nvcc_or_skip(what: &str) -> Option<NvccCompiler> {
    toolchain_or_skip(what, "sm_90a (nvcc)", NvccCompiler::find())
}

/// NVRTC (what `bench --backend cuda` compiles with: it differs from nvcc, e.g. it has no
/// `__builtin_memcpy`), or `None` as [`toolchain_or_skip`] says.
pub fn nvrtc_or_skip(what: &str) -> Option<NvrtcCompiler> {
    toolchain_or_skip(what, "sm_90a (NVRTC)", NvrtcCompiler::new())
}

/// The HIP compiler gemmtune picks for `arch`, or `None` with a notice naming `what` where there
/// is none or it does not know the arch (Debian's hipcc 5.2 stops at gfx90a; CI names clang
/// for gfx942 and gfx950), unless GEMMTUNE_REQUIRE_TOOLCHAIN is set.
pub fn hipcc_or_skip(arch: &str, what: &str) -> Option<HipCompiler> {
    let probe = HipCompiler::for_arch(arch).and_then(|h| {
        let empty = "#include <hip/hip_runtime.h>\nextern \"C\" __global__ void gt_empty() {}\n";
        let target = Target::arch(gemmtune::hw::Vendor::Amd, arch);
        h.compile(&single_wave_source("gt_empty", empty.into()), &target)
            .map(|_| h)
    });
    toolchain_or_skip(what, arch, probe)
}
