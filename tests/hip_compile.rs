//! Compile checks of the AMD kernels for gfx90a, without a GPU.
//!
//! With the compiler gemmtune picks for gfx90a (`HipCompiler::for_arch`: hipcc by default):
//! the MFMA atoms (each instruction must appear in the ISA), the reference kernels, and a
//! sample of generated GEMM configs (both MFMA shapes, all layouts, with and without
//! TransposeLDS, split-K of every kind, edge shapes) are compiled for gfx90a (the newest arch Debian's ROCm 5.2 knows; gfx942 and gfx950
//! machine code is checked in `tests/amd_isa.rs`). Any compile error fails, and so does scratch
//! use by a config whose register estimate is far from the register file. Without a compiler
//! the tests print a notice and pass, unless `GEMMTUNE_REQUIRE_TOOLCHAIN` is set (CI), where
//! they fail.

mod common;

use std::process::Command;

use common::kernels::single_wave_source as source;
use gemmtune::compile::amd::HipCompiler;
use gemmtune::compile::codegen;
use gemmtune::compile::{Compiler, Target};
use gemmtune::hw::{HwSpec, Vendor};
use gemmtune::problem::{DataType, GemmProblem, Trans};
use gemmtune::space::{constraints, GsuAlgo, KernelConfig, Space};

const ARCH: &str = "gfx90a";

fn target() -> Target {
    Target::arch(Vendor::Amd, ARCH)
}

/// hipcc, or `None` after printing why the test is skipped (panics when CI requires it).
fn hipcc() -> Option<HipCompiler> {
    match HipCompiler::for_arch(ARCH) {
        Ok(c) => Some(c),
        Err(e) => {
            if std::env::var_os("GEMMTUNE_REQUIRE_TOOLCHAIN").is_some() {
                panic!("GEMMTUNE_REQUIRE_TOOLCHAIN is set but hipcc is unusable: {e}");
            }
            eprintln!("NOTICE: skipping AMD compile checks: {e}");
            None
        }
    }
}

/// A kernel per atom: C (M x N) = A (M x 64) * B (64 x N) through LDS views of both
/// orientations, so both the vector-load and the gather paths of the atoms are compiled.
const ATOM_KERNELS: &str = r#"
template <class E, bool KC, int LD> struct TestView {
    typedef E T;
    static constexpr bool K_CONTIG = KC;
    static constexpr bool ROWS_16B = (LD * sizeof(E)) % 16 == 0;
    const T* base;
    GT_DEVICE const T* ptr(int mn, int k) const { return KC ? base + mn * LD + k : base + k * LD + mn; }
    GT_DEVICE T at(int mn, int k) const { return *ptr(mn, k); }
};
template <class E, int M, int N, int K, bool KCA, bool KCB, int LD>
GT_DEVICE void atom_gemm(float* out, const E* ga, const E* gb) {
    typedef GtAtomMfma<E, M, N, K> Atom;
    __shared__ E sa[64 * LD];
    __shared__ E sb[64 * LD];
    const int lane = threadIdx.x;
    for (int i = lane; i < 64 * LD; i += 64) { sa[i] = ga[i]; sb[i] = gb[i]; }
    __syncthreads();
    TestView<E, KCA, LD> va{sa};
    TestView<E, KCB, LD> vb{sb};
    float c[Atom::C_REGS];
    for (int i = 0; i < Atom::C_REGS; ++i) c[i] = 0.f;
    typename Atom::FragA fa;
    typename Atom::FragB fb;
    for (int k0 = 0; k0 < 64; k0 += K) {
        Atom::load_a(fa, va, 0, k0, lane);
        Atom::load_b(fb, vb, k0, 0, lane);
        Atom::mma(c, fa, fb);
    }
    for (int i = 0; i < Atom::C_REGS; ++i) {
        int m, n;
        Atom::c_coord(lane, i, m, n);
        out[m * N + n] = c[i];
    }
}
#define ATOM_KERNEL(NAME, E, M, N, K, KCA, KCB, LD)                                        \
    extern "C" __global__ void __launch_bounds__(64) NAME(float* o, const E* a, const E* b) { \
        atom_gemm<E, M, N, K, KCA, KCB, LD>(o, a, b);                                        \
    }
ATOM_KERNEL(atom_bf16_32x32x8_kk, gt_bf16, 32, 32, 8, true, true, 72)
ATOM_KERNEL(atom_bf16_32x32x8_mn, gt_bf16, 32, 32, 8, false, false, 72)
ATOM_KERNEL(atom_bf16_16x16x16_kk, gt_bf16, 16, 16, 16, true, true, 72)
ATOM_KERNEL(atom_bf16_16x16x16_odd, gt_bf16, 16, 16, 16, true, false, 66)
ATOM_KERNEL(atom_f16_32x32x8_kk, gt_f16, 32, 32, 8, true, true, 72)
ATOM_KERNEL(atom_f16_16x16x16_mk, gt_f16, 16, 16, 16, false, true, 64)
"#;

fn atom_source() -> String {
    let prelude =
        "#define GT_VENDOR_AMD 1\n#include \"gt_platform.h\"\n#include \"atom/gt_mma.h\"\n";
    codegen::expand_includes(&format!("{prelude}{ATOM_KERNELS}"))
}

#[test]
fn mfma_atoms_compile_to_the_expected_instructions() {
    let Some(hipcc) = hipcc() else { return };
    let src = source("atom_bf16_32x32x8_kk", atom_source());
    let (code, res) = hipcc
        .compile(&src, &target())
        .unwrap_or_else(|e| panic!("atoms do not compile: {e}"));
    assert!(!code.bytes.is_empty());
    assert_eq!(
        res.spill_bytes,
        Some(0),
        "an atom kernel uses scratch: {res:?}"
    );
    assert!(res.registers.is_some_and(|r| r > 0), "{res:?}");
    let lds = 2 * 64 * 72 * 2;
    assert_eq!(res.static_shared_bytes, Some(lds), "{res:?}");

    // The ISA must contain each instruction the atoms promise.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("atoms.hip");
    std::fs::write(&path, &src.text).unwrap();
    let out = Command::new(&hipcc.command().program)
        .env("HIP_PLATFORM", "amd")
        .arg(format!("--offload-arch={ARCH}"))
        .args(["--cuda-device-only", "-S", "-O3", "-std=c++17", "-o", "-"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let asm = String::from_utf8_lossy(&out.stdout);
    for insn in [
        "v_mfma_f32_32x32x8bf16_1k",
        "v_mfma_f32_16x16x16bf16_1k",
        "v_mfma_f32_32x32x8f16",
        "v_mfma_f32_16x16x16f16",
    ] {
        assert!(asm.contains(insn), "{insn} missing from the atoms' ISA");
    }
}

#[test]
fn gfx950_only_shapes_are_rejected_on_gfx90a() {
    let Some(hipcc) = hipcc() else { return };
    // Asking for the atom of a gfx950-only shape instantiates its dispatch.
    let text = format!(
        "#define GT_VENDOR_AMD 1\n{}template struct GtAtomFor<gt_bf16, 32, 32, 16>;\n",
        codegen::expand_includes("#include \"gt_platform.h\"\n#include \"atom/gt_mma.h\"\n")
    );
    match hipcc.compile(&source("none", text), &target()) {
        Err(gemmtune::compile::CompileError::Failed { log }) => {
            assert!(log.contains("gfx950"), "unexpected message: {log}")
        }
        other => panic!("32x32x16 compiled for gfx90a: {other:?}"),
    }
}

#[test]
fn reference_kernels_compile() {
    let Some(hipcc) = hipcc() else { return };
    let src = source(
        "gt_ref_gemm_bf16_bf16_TN",
        codegen::reference_source(&target()),
    );
    if let Err(e) = hipcc.compile(&src, &target()) {
        panic!("reference kernels do not compile for {ARCH}: {e}");
    }
}

/// The configs checked: a spread of MFMA shapes, layouts, split-K kinds and edge shapes.
fn sample_configs() -> Vec<(GemmProblem, KernelConfig)> {
    let hw = HwSpec::by_name("MI250X").unwrap();
    let base = KernelConfig {
        mt0: 64,
        mt1: 64,
        depth_u: 32,
        mi: [32, 32, 8],
        wg: [2, 2],
        pgr: 2,
        plr: 0,
        lpa: 8,
        lpb: 8,
        swizzle: 0,
        gsu: 1,
        gsu_algo: GsuAlgo::Reduce,
        wgm: 8,
        grvw: 8,
        svw: 4,
        su: 0,
        pw: 0,
        sab: 0,
        pk: 0,
        gv: 0,
        cn: 1,
        cm: 1,
        tlds: 0,
        pu: 0,
        pm: 0,
        fb: 0,
    };
    let mut out = Vec::new();
    let layouts = [
        (Trans::N, Trans::N),
        (Trans::N, Trans::T),
        (Trans::T, Trans::N),
        (Trans::T, Trans::T),
    ];
    for (i, (ta, tb)) in layouts.into_iter().enumerate() {
        for (m, n, k) in [
            (512i64, 512i64, 512i64),
            (16032, 109, 16384),
            (100, 113, 5 * 8),
        ] {
            let mut p = GemmProblem::new(m, n, k);
            p.trans_a = ta;
            p.trans_b = tb;
            p.lda = 0;
            p.ldb = 0;
            p.fill_defaults();
            if i % 2 == 1 {
                p.a_type = DataType::F16;
                p.b_type = DataType::F16;
                p.c_type = DataType::F16;
                p.d_type = DataType::F16;
            }
            let mut c = base;
            c.mi = if i < 2 { [32, 32, 8] } else { [16, 16, 16] };
            if m == 16032 {
                // Each layout a different way of combining K splits.
                (c.gsu, c.gsu_algo) = match i {
                    0 => (4, GsuAlgo::Atomic),
                    1 => (4, GsuAlgo::Reduce),
                    2 => (1, GsuAlgo::StreamK),
                    _ => (2, GsuAlgo::StreamK),
                };
                c.mt1 = 32;
                c.wg = [2, 1];
                c.mi = [16, 16, 16];
                c.swizzle = 1;
                c.lpa = 0;
                c.lpb = 0;
            }
            if m == 512 && i >= 2 {
                // Split partials summed in the main kernel by each tile's last split.
                (c.gsu, c.gsu_algo) = (i as u32, GsuAlgo::SingleKernel);
            }
            if m == 100 {
                // Odd leading dimensions force scalar loads.
                c.grvw = 1;
                c.svw = 1;
                c.pgr = 1;
                c.plr = 1;
            }
            let space = Space::for_problem(&p, &hw);
            let c = space.repair(&c).unwrap_or(c);
            // Layouts with an M- or N-contiguous operand: also with TransposeLDS (that operand
            // unpadded), odd leading dimensions included.
            let transposed = common::kernels::with_transpose_lds(&c, &p);
            for c in std::iter::once(c).chain(transposed) {
                match constraints::check(&c, &p, &hw) {
                    Ok(()) => out.push((p.clone(), c)),
                    Err(v) => panic!(
                        "sample config {} is invalid for {}: {v}",
                        c.name(),
                        p.label()
                    ),
                }
            }
        }
    }
    out
}

#[test]
fn generated_gemm_configs_compile_without_spills() {
    let Some(hipcc) = hipcc() else { return };
    let hw = HwSpec::by_name("MI250X").unwrap();
    let mut failures = Vec::new();
    for (p, c) in sample_configs() {
        let src = codegen::generate(&c, &p, &target());
        match hipcc.compile(&src, &target()) {
            Err(e) => failures.push(format!("{} for {}: {e}", c.name(), p.label())),
            Ok((_, res)) => {
                // Configs estimated at half the register file or less have no excuse to spill.
                let estimate = constraints::registers_estimate(&c, &p, &hw);
                if estimate <= hw.max_registers_per_thread / 2 && res.spill_bytes.unwrap_or(0) > 0 {
                    failures.push(format!(
                        "{} for {}: {} scratch bytes/lane (estimate {estimate} registers, got {:?})",
                        c.name(),
                        p.label(),
                        res.spill_bytes.unwrap_or(0),
                        res.registers
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn hiprtc_compiles_the_atoms_when_present() {
    use gemmtune::compile::amd::HiprtcCompiler;
    let rtc = match HiprtcCompiler::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("NOTICE: skipping the hiprtc check: {e}");
            return;
        }
    };
    let src = source("atom_bf16_32x32x8_kk", atom_source());
    match rtc.compile(&src, &target()) {
        Ok((code, res)) => {
            assert!(!code.bytes.is_empty());
            // Read from the code object's metadata note: hiprtc prints no remarks.
            assert!(res.registers.is_some_and(|r| r > 0), "{res:?}");
            assert_eq!(res.spill_bytes, Some(0), "{res:?}");
        }
        Err(e) => panic!("{} rejected the atoms: {e}", rtc.id()),
    }
}

/// The FMA path (f32) with its cross-stage prefetch (three or four stages, PrefetchLocalRead)
/// and the mainloop's branch-free interior loop (NN, NT: an operand copied straight into LDS)
/// compiles for gfx90a in every layout without scratch: the default (8 k a stage; at 16, a
/// K-contiguous operand took 525-534 registers and 40-120 scratch bytes a lane) and 16 k a
/// stage where no operand is K-contiguous (NT).
#[test]
fn fma_configs_with_cross_stage_prefetch_compile_without_scratch() {
    let Some(hipcc) = hipcc() else { return };
    let hw = HwSpec::by_name("MI250X").unwrap();
    let mut failures = Vec::new();
    for (ta, tb) in [
        (Trans::T, Trans::N),
        (Trans::N, Trans::N),
        (Trans::N, Trans::T),
        (Trans::T, Trans::T),
    ] {
        let mut p = GemmProblem::new(2048, 2048, 2048);
        (p.trans_a, p.trans_b) = (ta, tb);
        (p.a_type, p.b_type, p.c_type, p.d_type) =
            (DataType::F32, DataType::F32, DataType::F32, DataType::F32);
        p.lda = 0;
        p.ldb = 0;
        p.fill_defaults();
        let space = Space::for_problem(&p, &hw);
        let default = space.default_config().unwrap();
        assert_eq!(
            (default.depth_u, default.pgr, default.plr, default.mi),
            (8, 3, 1, [1, 1, 1])
        );
        let mut configs = vec![default, KernelConfig { pgr: 4, ..default }];
        if !p.k_contiguous(true) && !p.k_contiguous(false) {
            configs.push(KernelConfig {
                depth_u: 16,
                ..default
            });
        }
        for c in configs {
            if let Err(v) = space.check(&c) {
                panic!("{} is invalid for {}: {v}", c.name(), p.label());
            }
            let src = codegen::generate(&c, &p, &target());
            match hipcc.compile(&src, &target()) {
                Err(e) => failures.push(format!("{} for {}: {e}", c.name(), p.label())),
                Ok((_, res)) if res.spill_bytes.unwrap_or(0) > 0 => failures.push(format!(
                    "{} for {}: {:?} scratch bytes/lane",
                    c.name(),
                    p.label(),
                    res.spill_bytes
                )),
                Ok(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
