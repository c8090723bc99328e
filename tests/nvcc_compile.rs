//! Compiles a sample of the config space for sm_90a with nvcc: several layouts, element types,
//! edge shapes (unaligned leading dimensions, K smaller than DepthU), split-K of all four
//! kinds (atomic, reduce, stream-K, summed in the main kernel).
//! Fails on a compile error, and on register spills in configs small enough that they must not
//! spill. The warpgroup path (MI 64x8x16, wgmma) is compiled for the TN layouts it supports,
//! over tiles, warp grids, depths, pipeline stages and split-K, and must never spill. Without
//! nvcc it prints a notice and is skipped, unless GEMMTUNE_REQUIRE_TOOLCHAIN=1.

use gemmtune::compile::nvidia::NvccCompiler;
use gemmtune::compile::{pool, CompileError, Target};
use gemmtune::hw::{HwSpec, Vendor};
use gemmtune::problem::{DataType, GemmProblem};
use gemmtune::space::{constraints, GsuAlgo, KernelConfig, Space};

mod common;
use common::kernels::{error_lines, nvcc_or_skip, problem, sample_configs};

/// A wgmma config as (MacroTile, WG, PGR, PLR, GSU, GRVW).
type WgmmaCase = (&'static str, &'static str, u32, u32, &'static str, u32);

/// Swapped wgmma configs (SwapAB=1: the instruction's slices along N, its N along M), by name.
const SWAPPED: [(usize, &str); 8] = [
    (
        0,
        "MT128x128x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_SAB1",
    ),
    (
        0,
        "MT240x128x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0_PW1_SAB1",
    ),
    (
        0,
        "MT80x128x64_MI64x8x16_WG4x2_PGR6_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_SAB1",
    ),
    (
        1,
        "MT224x128x64_MI64x8x16_WG8x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1",
    ),
    (
        2,
        "MT48x128x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU3A_WGM8_GRVW8_SVW4_SU0_PW1_SAB1",
    ),
    (
        3,
        "MT16x64x64_MI64x8x16_WG4x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW2_SVW2_SU0_SAB1",
    ),
    (
        3,
        "MT112x64x128_MI64x8x16_WG4x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU2S_WGM8_GRVW2_SVW4_SU0_SAB1",
    ),
    (
        0,
        "MT48x64x64_MI64x8x16_WG4x1_PGR16_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1",
    ),
];

#[test]
fn wgmma_configs_compile_for_sm90a_without_spills() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    use DataType::*;
    let cases: [(GemmProblem, &[WgmmaCase]); 4] = [
        (
            problem(16032, 109, 16384, "TN", Bf16, Bf16, 0.0, 1),
            &[
                ("128x112x64", "8x1", 7, 0, "1", 8),
                ("128x112x64", "4x1", 4, 1, "1", 8),
                ("256x112x64", "8x1", 4, 1, "2A", 8),
                ("128x112x128", "8x1", 3, 1, "1", 8),
                ("64x112x64", "4x1", 2, 0, "3R", 8),
                ("128x112x64", "4x2", 5, 1, "1", 8),
                ("128x112x64", "8x1", 1, 0, "1", 4),
                ("128x112x64", "8x1", 5, 0, "1S", 8),
                ("64x112x64", "4x1", 4, 0, "2S", 8),
                ("64x64x64", "4x1", 13, 1, "1", 8),
                ("64x64x64", "4x1", 10, 0, "2R", 8),
                ("128x112x64", "8x1", 5, 1, "2K", 8),
            ],
        ),
        (
            problem(4096, 4096, 4096, "TN", Bf16, Bf16, 0.0, 1),
            &[
                ("128x256x64", "8x2", 4, 1, "1", 8),
                ("128x256x64", "8x1", 4, 0, "1", 8),
                ("256x128x64", "8x1", 4, 1, "1", 8),
                ("128x128x128", "8x1", 3, 0, "4R", 8),
                ("64x256x64", "4x1", 3, 1, "1", 8),
                ("256x64x64", "8x1", 4, 0, "1S", 8),
            ],
        ),
        (
            problem(1000, 77, 1000, "TN", F16, F32, 0.5, 1),
            &[
                ("128x80x64", "8x1", 4, 1, "1", 8),
                ("64x32x128", "4x2", 3, 0, "3R", 8),
                ("64x32x64", "4x1", 4, 1, "3K", 8),
            ],
        ),
        (
            problem(200, 64, 128, "TN", Bf16, Bf16, 0.0, 3),
            &[
                ("64x64x64", "4x1", 2, 0, "1", 2),
                ("64x64x64", "4x1", 3, 1, "4S", 2),
                ("64x64x64", "4x1", 3, 1, "2K", 2),
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (i, (p, list)) in cases.iter().enumerate() {
        let space = Space::for_problem(p, &hw);
        let mut configs: Vec<KernelConfig> = list
            .iter()
            .map(|(mt, wg, pgr, plr, gsu, grvw)| {
                let name = format!(
                    "MT{mt}_MI64x8x16_WG{wg}_PGR{pgr}_PLR{plr}_LPA0_LPB0_SW1_GSU{gsu}_WGM8_GRVW{grvw}_SVW4_SU0"
                );
                let c = KernelConfig::parse(&name).unwrap();
                space
                    .check(&c)
                    .unwrap_or_else(|v| panic!("{name} is not valid for {}: {v}", p.label()));
                c
            })
            .collect();
        // Every case outside stream-K also with the producer warp (ProducerWarp=1).
        let with_producer: Vec<KernelConfig> = configs
            .iter()
            .filter(|c| c.gsu_algo != GsuAlgo::StreamK)
            .map(|c| KernelConfig { pw: 1, ..*c })
            .collect();
        for c in &with_producer {
            space
                .check(c)
                .unwrap_or_else(|v| panic!("{} is not valid for {}: {v}", c.name(), p.label()));
        }
        configs.extend(with_producer);
        for (_, name) in SWAPPED.iter().filter(|(at, _)| *at == i) {
            let c = KernelConfig::parse(name).unwrap();
            space
                .check(&c)
                .unwrap_or_else(|v| panic!("{name} is not valid for {}: {v}", p.label()));
            configs.push(c);
        }
        let results = pool::compile_batch(&nvcc, &configs, p, &target, None, 0);
        for (cfg, r) in configs.iter().zip(results) {
            match r {
                Ok(k) => {
                    assert!(
                        k.resources.registers.is_some(),
                        "no ptxas report for {}",
                        cfg.name()
                    );
                    let spills = k.resources.spill_bytes.unwrap_or(0);
                    if spills > 0 {
                        failures.push(format!(
                            "{} {}: {spills} spill bytes",
                            p.label(),
                            cfg.name()
                        ));
                    }
                }
                Err(CompileError::Failed { log }) => failures.push(format!(
                    "{} {}:\n{}",
                    p.label(),
                    cfg.name(),
                    error_lines(&log)
                )),
                Err(e) => panic!("{e}"),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn sampled_configs_compile_for_sm90a_without_spills() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    use DataType::*;
    let problems = [
        problem(16032, 109, 16384, "TN", Bf16, Bf16, 0.0, 1),
        problem(200, 113, 5, "TN", Bf16, Bf16, 0.0, 1),
        problem(333, 109, 77, "NN", Bf16, Bf16, 0.5, 1),
        problem(256, 109, 200, "NT", F16, F32, 1.0, 1),
        problem(100, 64, 128, "TT", Bf16, Bf16, 0.0, 3),
        problem(96, 80, 64, "NN", F32, F32, 0.25, 1),
    ];
    let mut failures = Vec::new();
    let mut compiled = 0;
    let start = std::time::Instant::now();
    for (i, p) in problems.iter().enumerate() {
        let space = Space::for_problem(p, &hw);
        let mut configs = sample_configs(&space, 7 + i as u64, 2);
        // TransposeLDS (opt-in here) where there is an M- or N-contiguous operand on the
        // matrix cores: one sampled config with it.
        let mut transposing = space.clone();
        if transposing.fix("TransposeLDS", "1").is_ok() {
            let t = sample_configs(&transposing, 17 + i as u64, 1);
            assert!(t.iter().all(|c| c.tlds == 1), "{t:?}");
            configs.extend(t);
        }
        let results = pool::compile_batch(&nvcc, &configs, p, &target, None, 0);
        for (cfg, r) in configs.iter().zip(results) {
            match r {
                Ok(k) => {
                    compiled += 1;
                    let estimate = constraints::registers_estimate(cfg, p, &hw);
                    let spills = k.resources.spill_bytes.unwrap_or(0);
                    // Small configs have plenty of register headroom: spilling there is a bug.
                    // Except one 8-byte value ptxas (CUDA 13.0) stores and reloads in some
                    // stream-K kernels of the mma.sync path with scalar loads and DepthU 128,
                    // at 80 registers of 255 (MT192x16x128 WG4x2 GRVW1 GSU4S on 256x109x200
                    // NT: 16 spill bytes; the same with DepthU 64, GRVW 2 or GSU4R none).
                    let tolerated = if cfg.gsu_algo == GsuAlgo::StreamK {
                        16
                    } else {
                        0
                    };
                    if spills > tolerated && estimate <= 128 {
                        failures.push(format!(
                            "{} {}: {spills} spill bytes (estimate {estimate} regs)",
                            p.label(),
                            cfg.name()
                        ));
                    }
                    assert!(
                        k.resources.registers.is_some(),
                        "no ptxas report for {}",
                        cfg.name()
                    );
                }
                Err(CompileError::Failed { log }) => {
                    failures.push(format!(
                        "{} {}:\n{}",
                        p.label(),
                        cfg.name(),
                        error_lines(&log)
                    ));
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    eprintln!(
        "compiled {compiled} configs in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// PTX of one generated kernel for sm_90a, as nvcc writes it.
/// `p` with its f32 inputs read as tf32 (`c_xf32_r`).
fn xf32(mut p: GemmProblem) -> GemmProblem {
    p.compute_type = gemmtune::problem::ComputeType::Xf32;
    p
}

fn ptx_for(nvcc: &NvccCompiler, cfg: &KernelConfig, p: &GemmProblem) -> String {
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    let source = gemmtune::compile::codegen::generate(cfg, p, &target);
    let dir = tempfile::tempdir().unwrap();
    let (src, out) = (dir.path().join("k.cu"), dir.path().join("k.ptx"));
    std::fs::write(&src, &source.text).unwrap();
    let run = std::process::Command::new(nvcc.path())
        .args(["-x", "cu", "-ptx", "-std=c++17"])
        .arg("-gencode=arch=compute_90a,code=sm_90a")
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}: {}",
        cfg.name(),
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read_to_string(&out).unwrap()
}

/// The PTX text of the entry `name` (up to the next entry).
/// Compiles one config; a compile error or any spill, named after `what` and the config.
fn spill_or_error(
    nvcc: &NvccCompiler,
    c: &KernelConfig,
    p: &GemmProblem,
    target: &Target,
    what: &str,
) -> Option<String> {
    match pool::compile_batch(nvcc, &[*c], p, target, None, 0)
        .pop()
        .unwrap()
    {
        Ok(k) if k.resources.spill_bytes.unwrap_or(0) > 0 => Some(format!(
            "{what} {}: {:?} spill bytes",
            c.name(),
            k.resources.spill_bytes
        )),
        Ok(_) => None,
        Err(e) => Some(format!("{what} {}: {e}", c.name())),
    }
}

fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no entry {name}"));
    let rest = &ptx[start + 1..];
    &ptx[start..start + 1 + rest.find(".entry ").unwrap_or(rest.len())]
}

/// On sm_90 the host launches a split-K reduction as a programmatic dependent of its main
/// kernel: the main kernel lets it start early, and the reduction must wait for the main
/// kernel's partials before reading them. Kernels without a second launch carry neither.
#[test]
fn split_k_reduction_waits_for_its_main_kernel() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let p = problem(
        4096,
        128,
        14336,
        "TN",
        DataType::Bf16,
        DataType::Bf16,
        0.0,
        1,
    );
    for (name, split) in [
        (
            "MT64x128x64_MI64x8x16_WG4x1_PGR9_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0_PW1",
            true,
        ),
        (
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU3A_WGM8_GRVW8_SVW4_SU0",
            true,
        ),
        (
            "MT64x64x64_MI64x8x16_WG4x1_PGR12_PLR1_LPA0_LPB0_SW1_GSU1_WGM4_GRVW8_SVW8_SU0_PW1",
            false,
        ),
        (
            "MT64x64x64_MI64x8x16_WG4x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU2S_WGM8_GRVW8_SVW8_SU0",
            false,
        ),
        (
            "MT128x64x64_MI64x8x16_WG4x1_PGR8_PLR1_LPA0_LPB0_SW1_GSU2K_WGM1_GRVW8_SVW8_SU0_PW1",
            false,
        ),
        (
            "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU3K_WGM8_GRVW8_SVW4_SU0",
            false,
        ),
    ] {
        let cfg = KernelConfig::parse(name).unwrap();
        let ptx = ptx_for(&nvcc, &cfg, &p);
        let main = entry(&ptx, name);
        assert_eq!(
            main.contains("griddepcontrol.launch_dependents"),
            split,
            "{name}"
        );
        assert!(!main.contains("griddepcontrol.wait"), "{name}");
        if split {
            let epilogue = entry(&ptx, &format!("{name}_epilogue"));
            let wait = epilogue
                .find("griddepcontrol.wait")
                .unwrap_or_else(|| panic!("{name}_epilogue does not wait"));
            let first_load = epilogue
                .find("ld.global")
                .expect("the epilogue reads partials");
            assert!(wait < first_load, "{name}_epilogue reads before it waits");
        } else {
            assert!(!ptx.contains("_epilogue("), "{name}");
        }
    }
}

/// 4096^3 TN in bf16 with this beta: the problem the epilogue checks below compile for.
fn bf16_4096_cubed(beta: f64) -> GemmProblem {
    problem(
        4096,
        4096,
        4096,
        "TN",
        DataType::Bf16,
        DataType::Bf16,
        beta,
        1,
    )
}

/// The staged output tile is read back in 16-byte vectors (StoreVectorWidth 4 and 8: one or two
/// per run), never element by element, and the lane-dependent order of the two halves of an
/// 8-wide run keeps the run in registers (an indexed array would land in local memory). With
/// beta 1 and C in f32: where C has D's type, or beta is 0, the warpgroup kernels store D
/// through tensor maps instead (below).
#[test]
fn the_staged_tile_is_read_back_in_16_byte_vectors() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let p = GemmProblem {
        c_type: DataType::F32,
        ..bf16_4096_cubed(1.0)
    };
    for (name, vectors) in [
        (
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW4_SVW8_SU0",
            2,
        ),
        (
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW4_SVW4_SU0",
            1,
        ),
        (
            "MT128x128x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW8_SU0",
            2,
        ),
    ] {
        let cfg = KernelConfig::parse(name).unwrap();
        let main = ptx_for(&nvcc, &cfg, &p);
        let main = entry(&main, name);
        // `vectors` loads per run; the compiler may unroll the store loop (it did once the bf16
        // conversion became one instruction), which repeats whole runs.
        let loads = main.matches("ld.shared.v4.f32").count();
        assert!(
            loads > 0 && loads.is_multiple_of(vectors),
            "{name}: {loads} vector loads, not whole runs of {vectors}"
        );
        assert!(
            !main.contains("ld.shared.f32"),
            "{name} reads staged floats one by one"
        );
        assert!(!main.contains(".local"), "{name} uses local memory");
    }
}

/// Where D's rows start on 16-byte boundaries (and C, where beta reads it, has D's type and
/// such rows), the data-parallel warpgroup kernel stages D in its own type and stores it
/// through a tensor map (GT_STORE_D_TMA), with beta 1 after loading C's tile through one: no
/// staged floats read back, no local memory.
#[test]
fn whole_warpgroup_tiles_of_d_go_out_through_tensor_maps() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    const LOAD: &str = "cp.async.bulk.tensor.3d.shared::cluster.global";
    for name in [
        "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW4_SVW8_SU0",
        "MT96x64x64_MI64x8x16_WG4x1_PGR10_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1_SAB1",
    ] {
        let cfg = KernelConfig::parse(name).unwrap();
        let mut loads = Vec::new();
        for beta in [0.0, 1.0] {
            let main = ptx_for(&nvcc, &cfg, &bf16_4096_cubed(beta));
            let main = entry(&main, name);
            assert!(
                main.contains("cp.async.bulk.tensor.3d.global.shared::cta"),
                "{name} with beta {beta} does not store through a tensor map"
            );
            assert!(
                main.contains("stmatrix"),
                "{name} with beta {beta} stages D without matrix stores"
            );
            assert!(
                !main.contains("ld.shared.v4.f32"),
                "{name} with beta {beta} still reads an f32 staging tile back"
            );
            assert!(!main.contains(".local"), "{name} uses local memory");
            loads.push(main.matches(LOAD).count());
        }
        // The operands' loads, and with beta 1 C's besides them.
        assert!(
            loads[1] > loads[0],
            "{name}: no load of C's tile ({loads:?})"
        );
    }
}

/// The warpgroup path in every layout and with 8-bit inputs: M- and N-major operands read
/// through the instruction's transpose bits (LDS chunks of 64, 32 and 16 elements), operands
/// the tensor maps cannot read packed first, e4m3/e5m2 mixes on k32, f32 inputs read as tf32
/// (c_xf32_r) on k8, their M- and N-major operands packed K-major. Every kernel compiles
/// without spills; the PTX names the transpose bits the layout needs, and a packed operand's
/// packing kernel exists.
#[test]
fn warpgroup_layouts_and_8bit_inputs_compile_without_spills() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    use DataType::*;
    // (problem, config, transpose bits of the instruction's A and B, packed A, packed B).
    type Case = (GemmProblem, &'static str, &'static str, bool, bool);
    let cases: Vec<Case> = vec![
        (
            problem(4096, 4096, 4096, "NN", Bf16, Bf16, 0.0, 1),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
            "1, 0",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "NT", F16, F32, 0.5, 1),
            "MT128x256x64_MI64x8x16_WG8x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1",
            "1, 1",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "TT", Bf16, Bf16, 0.0, 2),
            "MT128x96x64_MI64x8x16_WG8x1_PGR5_PLR0_LPA0_LPB0_SW1_GSU2K_WGM8_GRVW8_SVW8_SU0",
            "0, 1",
            false,
            false,
        ),
        // Swapped: the instruction's A is B (N-major), its B is A (M-major, chunks of 16).
        (
            problem(10240, 128, 8192, "NT", Bf16, Bf16, 0.0, 1),
            "MT80x128x64_MI64x8x16_WG4x2_PGR6_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_SAB1",
            "1, 1",
            false,
            false,
        ),
        // B of 109 rows 218 bytes apart: packed K-major, A read M-major in chunks of 64.
        (
            problem(16032, 109, 16384, "NT", Bf16, Bf16, 0.0, 1),
            "MT128x112x64_MI64x8x16_WG8x1_PGR6_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0",
            "1, 0",
            false,
            true,
        ),
        // A with an odd leading dimension (K = 1000 + 4): packed; B N-major in chunks of 16.
        (
            {
                let mut p = problem(1000, 80, 1000, "TT", Bf16, Bf16, 1.0, 1);
                p.lda = 1004;
                p
            },
            "MT64x80x64_MI64x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW8_SU0",
            "0, 1",
            true,
            false,
        ),
        (
            problem(16032, 109, 16384, "TN", F8, Bf16, 0.0, 1),
            "MT128x112x128_MI64x8x32_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW16_SVW8_SU0",
            "",
            false,
            false,
        ),
        (
            {
                let mut p = problem(4096, 4096, 4096, "TN", F8, F32, 0.5, 1);
                p.b_type = Bf8;
                p
            },
            "MT128x256x128_MI64x8x32_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW16_SVW4_SU0_PW1",
            "",
            false,
            false,
        ),
        (
            xf32(problem(4096, 4096, 4096, "TN", F32, F32, 0.0, 1)),
            "MT128x256x32_MI64x8x8_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM16_GRVW4_SVW4_SU0_PW1",
            "",
            false,
            false,
        ),
        // A tile of an odd multiple of 8 columns: the instruction's N of 120, its last 8
        // output columns stored alone.
        (
            problem(1280, 1500, 1280, "NN", Bf16, Bf16, 1.0, 1),
            "MT128x120x64_MI64x8x16_WG8x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1",
            "1, 0",
            false,
            false,
        ),
        // tf32 has no transpose bits: both M- and N-major operands are packed K-major.
        (
            xf32(problem(1000, 333, 776, "NT", F32, F32, 1.0, 3)),
            "MT64x112x32_MI64x8x8_WG4x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW4_SVW4_SU0",
            "",
            true,
            true,
        ),
    ];
    // Persistent kernels: the 128x256 tile with four stages beside its output staging, a
    // swapped one, a wide N tile with a packed B, 8-bit inputs, and beta.
    // `--d_type f32_r` alone leaves C bf16: with beta 0 C is never read, so the tile of D's
    // layout that would hold it is no reason to refuse the pair.
    let c_apart = GemmProblem {
        c_type: Bf16,
        ..problem(7168, 256, 2048, "TN", F8, F32, 0.0, 1)
    };
    let persistent: Vec<Case> = vec![
        (
            problem(4096, 4096, 4096, "TN", Bf16, Bf16, 0.0, 2),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
            "0, 0",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "NT", F16, F32, 0.0, 1),
            "MT128x128x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_SAB1_PK1",
            "1, 1",
            false,
            false,
        ),
        (
            problem(16032, 272, 16384, "TT", Bf16, Bf16, 0.0, 1),
            "MT64x272x64_MI64x8x16_WG4x2_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
            // 136 columns per warpgroup are no whole number of chunks: B is packed K-major.
            "0, 0",
            false,
            true,
        ),
        (
            problem(8192, 8192, 8192, "TN", F8, Bf16, 0.0, 1),
            "MT128x256x128_MI64x8x32_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW16_SVW8_SU0_PW1_PK1",
            "",
            false,
            false,
        ),
        // 72 and 120 columns: 8-bit inputs with f32 D, 16-bit D read back with beta.
        (
            problem(10240, 200, 2560, "TN", F8, F32, 0.0, 1),
            "MT256x72x128_MI64x8x32_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW16_SVW4_SU0_PW1_PK1",
            "",
            false,
            false,
        ),
        (
            problem(1280, 1500, 1280, "TN", Bf16, Bf16, 1.0, 1),
            "MT128x120x64_MI64x8x16_WG8x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
            "0, 0",
            false,
            false,
        ),
        // C of another type than D, never read with beta 0 (the swapped tile, stream-K).
        (
            c_apart.clone(),
            "MT112x128x128_MI64x8x32_WG4x2_PGR6_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW16_SVW4_SU0_PW1_SAB1_PK1",
            "",
            false,
            false,
        ),
        (
            c_apart,
            "MT128x128x128_MI64x8x32_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW16_SVW4_SU0_PW1_PK1",
            "",
            false,
            false,
        ),
        (
            xf32(problem(4096, 4096, 4096, "TN", F32, F32, 0.0, 1)),
            "MT128x256x32_MI64x8x8_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW4_SVW4_SU0_PW1_PK1",
            "",
            false,
            false,
        ),        // Beta reads C through a tensor map: into a ring of two C tiles, one, or the staging
        // area itself, with 16-bit C read back by ldmatrix and f32 C element by element.
        (
            problem(4096, 4096, 4096, "TN", Bf16, Bf16, 1.0, 2),
            "MT128x128x64_MI64x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
            "0, 0",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "TN", Bf16, Bf16, 0.5, 1),
            "MT128x256x64_MI64x8x16_WG8x1_PGR3_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
            "0, 0",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "TN", F16, F16, 1.0, 1),
            "MT128x128x64_MI64x8x16_WG4x2_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1",
            "0, 0",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "TN", Bf16, F32, 1.0, 1),
            "MT128x128x64_MI64x8x16_WG8x1_PGR3_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
            "0, 0",
            false,
            false,
        ),
    ];
    // Ping-pong (PersistentKernel=2): the widest tile whose accumulators fit the 232 registers
    // the producer warpgroup hands over, 8-bit inputs, an f32 D, and an NN problem.
    let ping_pong: Vec<Case> = vec![
        (
            problem(1152, 4096, 1152, "TN", Bf16, Bf16, 0.0, 1),
            "MT128x176x64_MI64x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK2",
            "0, 0",
            false,
            false,
        ),
        (
            problem(1152, 4096, 1152, "TN", F8, Bf16, 0.0, 2),
            "MT128x144x128_MI64x8x32_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW16_SVW8_SU0_PW1_PK2",
            "",
            false,
            false,
        ),
        (
            problem(2000, 1000, 512, "NN", Bf16, F32, 0.0, 1),
            "MT128x128x64_MI64x8x16_WG4x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK2",
            "1, 0",
            false,
            false,
        ),
    ];
    // Clusters of two along N sharing A (ClusterN): data-parallel with 8-bit inputs and a
    // split, persistent, and an NN problem whose swapped M tiles of 80 pack A K-major.
    let clustered: Vec<Case> = vec![
        (
            problem(4096, 128, 4096, "TN", F8, Bf16, 0.0, 1),
            "MT64x64x128_MI64x8x32_WG4x1_PGR13_PLR0_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW16_SVW8_SU0_PW1_CN2",
            "",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "TN", Bf16, Bf16, 0.0, 2),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1_CN2",
            "0, 0",
            false,
            false,
        ),
        (
            problem(4096, 4096, 4096, "NN", Bf16, Bf16, 1.0, 1),
            "MT80x128x64_MI64x8x16_WG8x1_PGR2_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_SAB1_CN2",
            "0, 0",
            true,
            false,
        ),
        // An M-major A shared in whole chunks (NT, two chunks of 64 per 128-row tile), and
        // persistent and swapped in 256-row tiles (four chunks, two per workgroup).
        (
            problem(4096, 4096, 4096, "NT", Bf16, Bf16, 0.0, 1),
            "MT128x128x64_MI64x8x16_WG8x1_PGR4_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_CN2",
            "1, 1",
            false,
            false,
        ),
        (
            problem(2000, 2000, 1000, "NN", Bf16, Bf16, 0.0, 2),
            "MT256x128x64_MI64x8x16_WG4x2_PGR3_PLR0_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1_CN2",
            "0, 1",
            false,
            false,
        ),
    ];
    // Clusters of two along M sharing B (ClusterM): K-major B in row slices (NN, persistent),
    // N-major B in whole chunks (NT, batched).
    let along_m: Vec<Case> = vec![
        (
            problem(3000, 3000, 3000, "NN", F16, F16, 0.0, 1),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1_CM2",
            "1, 0",
            false,
            false,
        ),
        (
            problem(1000, 1000, 1000, "NT", Bf16, Bf16, 0.0, 8),
            "MT128x256x64_MI64x8x16_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_CM2",
            "1, 1",
            false,
            false,
        ),
    ];
    // Operands with rows aligned to 16 bytes only copied into aligned rows first
    // (PackUnaligned): B of an NN problem (K = 1000), both of a TN one, and A (M-major) of an
    // NT one in pairs sharing the packed, K-major A.
    let repacked: Vec<Case> = vec![
        (
            problem(1000, 1024, 1000, "NN", Bf16, Bf16, 0.0, 1),
            "MT128x128x64_MI64x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PU2",
            "1, 0",
            false,
            true,
        ),
        (
            problem(1000, 1024, 1040, "TN", F8, Bf16, 0.0, 2),
            "MT128x128x128_MI64x8x32_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW16_SVW8_SU0_PW1_PU3",
            "",
            true,
            true,
        ),
        (
            problem(1000, 1024, 1024, "NT", Bf16, Bf16, 0.0, 1),
            "MT128x128x64_MI64x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_CN2_PU1",
            "0, 1",
            true,
            false,
        ),
    ];
    // The persistent kernel's stream-K (GSU1S): alone, in pairs along M and along N with rows
    // aligned to 16 bytes only, swapped, and with an f32 output.
    let stream_k: Vec<Case> = vec![
        (
            problem(3072, 3072, 3072, "TN", Bf16, Bf16, 0.0, 1),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
            "",
            false,
            false,
        ),
        (
            problem(3000, 3000, 3000, "NN", F16, F16, 0.0, 1),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_PK1_CM2",
            "1, 0",
            false,
            false,
        ),
        (
            problem(3000, 3000, 3000, "TN", Bf16, Bf16, 0.0, 1),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_PK1_CN2",
            "",
            false,
            false,
        ),
        // A 2 x 4 block of swapped tiles sharing an M-major A (three chunks of 32) in slices of K
        // along its rows and an N-major B along its columns; a 2 x 2 block on the persistent
        // kernel.
        (
            problem(768, 768, 4096, "NT", Bf16, Bf16, 0.0, 1),
            "MT96x64x128_MI64x8x16_WG4x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW1_SAB1_CN4_CM2",
            "1, 1",
            false,
            false,
        ),
        (
            problem(2048, 2048, 2048, "TN", Bf16, Bf16, 0.0, 1),
            "MT128x128x128_MI64x8x16_WG4x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1_CN2_CM2",
            "",
            false,
            false,
        ),
        (
            problem(2000, 3000, 1024, "TN", Bf16, Bf16, 0.0, 2),
            "MT128x128x64_MI64x8x16_WG4x2_PGR4_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1",
            "",
            false,
            false,
        ),
    ];
    // A producer warpgroup handing its registers to two warpgroups (ProducerWarp=2): 192x192
    // in pairs along M with rows aligned to 16 bytes only, NN, 256x128 as stream-K, and
    // swapped 160x256 with both operands M- and N-major; in the data-parallel kernel the
    // 384-row tiles whose 156 accumulators a thread spilled where the producer's path joined
    // the warpgroups' (D through tensor maps; NN with beta, K split for the reduction kernel);
    // the wave-filling large tiles.
    let producer_warpgroup: Vec<Case> = vec![
        (
            problem(9216, 520, 4096, "TN", Bf16, Bf16, 0.0, 1),
            "MT384x104x64_MI64x8x16_WG8x1_PGR3_PLR0_LPA0_LPB0_SW1_GSU1_WGM1_GRVW8_SVW8_SU0_PW2",
            "",
            false,
            false,
        ),
        (
            problem(5000, 333, 3000, "NN", F16, F16, 0.5, 1),
            "MT384x112x64_MI64x8x16_WG8x1_PGR3_PLR0_LPA0_LPB0_SW1_GSU2R_WGM1_GRVW8_SVW8_SU0_PW2",
            "1, 0",
            false,
            false,
        ),
        (
            problem(3000, 3000, 3000, "TN", Bf16, Bf16, 0.0, 1),
            "MT192x192x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW2_PK1_CM2",
            "",
            false,
            false,
        ),
        (
            problem(3000, 3000, 3000, "NN", F16, F16, 0.0, 1),
            "MT192x192x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW2_PK1_CM2",
            "1, 0",
            false,
            false,
        ),
        (
            problem(3072, 3072, 3072, "TN", Bf16, Bf16, 0.0, 1),
            "MT256x128x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW2_PK1",
            "",
            false,
            false,
        ),
        (
            problem(5000, 1000, 5000, "NT", Bf16, Bf16, 0.0, 1),
            "MT160x256x64_MI64x8x16_WG4x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW2_SAB1_PK1_CM2",
            "",
            false,
            false,
        ),
        // The large tiles that fill the waves (src/space/big_tile_waves.rs): 256x160 stores
        // its 160 columns in four groups of 40, 256x120 (NN, C read back) in three of 40,
        // 192x144 on two warpgroups side by side.
        (
            problem(4096, 2500, 4096, "TN", Bf16, Bf16, 0.0, 1),
            "MT256x160x64_MI64x8x16_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW2_PK1",
            "",
            false,
            false,
        ),
        (
            problem(5120, 1500, 1280, "NN", F16, F16, 1.0, 1),
            "MT256x120x64_MI64x8x16_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW2_PK1",
            "1, 0",
            false,
            false,
        ),
        (
            problem(2304, 1576, 768, "TN", F16, F16, 0.0, 1),
            "MT192x144x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM4_GRVW8_SVW8_SU0_PW2_PK1",
            "",
            false,
            false,
        ),
    ];
    for (p, name, bits, pack_a, pack_b) in cases
        .into_iter()
        .chain(persistent)
        .chain(ping_pong)
        .chain(clustered)
        .chain(along_m)
        .chain(repacked)
        .chain(stream_k)
        .chain(producer_warpgroup)
    {
        let cfg = KernelConfig::parse(name).unwrap();
        Space::for_problem(&p, &hw)
            .check(&cfg)
            .unwrap_or_else(|v| panic!("{name} is not valid for {}: {v}", p.label()));
        assert_eq!(
            constraints::packed_operands(&cfg, &p),
            [pack_a, pack_b],
            "{name} {}",
            p.label()
        );
        let ptx = ptx_for(&nvcc, &cfg, &p);
        let main = entry(&ptx, &cfg.name());
        if cfg.pk > 0 {
            assert!(
                main.contains("cp.async.bulk.tensor.3d.global.shared::cta"),
                "{name}: a persistent kernel stores through a tensor map"
            );
            // 16-bit D is staged with matrix stores (transposed unless swapped), not one
            // element per instruction; f32 D element by element.
            let matrix = if cfg.sab > 0 {
                "stmatrix.sync.aligned.m8n8.x4.shared.b16"
            } else {
                "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16"
            };
            assert_eq!(
                main.contains(matrix),
                p.d_type.bytes() == 2,
                "{name} {}: {matrix}",
                p.label()
            );
            // C, where beta reads it into the staging area, is read back from LDS by the
            // instruction that mirrors the matrix stores; nothing else in the kernel uses it.
            // (Through the operand ring, each thread loads its own places of C instead.)
            let mirror = matrix.replace("stmatrix", "ldmatrix");
            assert_eq!(
                main.contains(&mirror),
                p.d_type.bytes() == 2
                    && p.beta != 0.0
                    && constraints::persistent_c_steps(&cfg, &p) == 0,
                "{name} {}: {mirror}",
                p.label()
            );
        }
        // Only the persistent stream-K copies split tiles' parts into LDS with the bulk engine.
        assert_eq!(
            main.contains("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"),
            cfg.pk == 1 && cfg.gsu_algo == GsuAlgo::StreamK,
            "{name}: the parts' bulk copies"
        );
        // Only a producer warpgroup (ping-pong's, ProducerWarp=2's) moves registers to the
        // computing warpgroups, and ptxas honours the move only with one workgroup per
        // compute unit in the launch bounds.
        let warpgroup = cfg.pk == 2 || cfg.pw == 2;
        for op in [
            "setmaxnreg.dec.sync.aligned.u32 40",
            "setmaxnreg.inc.sync.aligned.u32 232",
        ] {
            assert_eq!(main.contains(op), warpgroup, "{name}: {op}");
        }
        assert_eq!(
            ptx.contains(".minnctapersm 1"),
            warpgroup,
            "{name}: one workgroup per compute unit in the launch bounds"
        );
        // A cluster's producers multicast their shares of A (B); the cluster size is the
        // kernel's own (a plain launch makes the clusters).
        let cluster = cfg.cn * cfg.cm;
        assert_eq!(
            main.contains(".multicast::cluster"),
            cluster > 1,
            "{name}: multicast loads"
        );
        assert_eq!(
            ptx.contains(&format!(".reqnctapercluster {cluster}, 1, 1")),
            cluster > 1,
            "{name}: cluster dimensions"
        );
        let k = format!("k{}", 32 / p.a_type.bytes());
        let k = k.as_str();
        assert!(main.contains("wgmma.mma_async"), "{name}");
        assert!(main.contains(k), "{name}: no {k} instruction");
        if p.a_type == DataType::F32 {
            assert!(
                main.contains(".f32.tf32.tf32"),
                "{name}: f32 inputs are read as tf32"
            );
        }
        if !bits.is_empty() {
            assert!(
                main.contains(&format!("p, 1, 1, {bits};")),
                "{name} {}: the instruction's transpose bits are not {bits}",
                p.layout()
            );
        }
        for (on, letter) in [(pack_a, 'a'), (pack_b, 'b')] {
            assert_eq!(
                ptx.contains(&format!(".entry {}_pack_{letter}(", cfg.name())),
                on,
                "{name} {}: packing kernel of {letter}",
                p.layout()
            );
        }
        let target = Target::arch(Vendor::Nvidia, "sm_90a");
        let k = pool::compile_batch(&nvcc, &[cfg], &p, &target, None, 0)
            .pop()
            .unwrap()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            k.resources.spill_bytes.unwrap_or(0),
            0,
            "{name} {} spills",
            p.label()
        );
    }
}

/// Where every operand's rows start off the 16-byte grid (1001x1003x2047 f32, packed), the
/// FMA default on Hopper copies both first, K-contiguous ones M- or N-major (mode 3) and M- or
/// N-contiguous ones as they lie onto aligned rows (mode 4, kernels/loader/gt_pack_kernel.h),
/// reads the copies in 16-byte vectors and stores D in 4-byte ones; with its packing kernels
/// it compiles for sm_90a without spills in every layout.
#[test]
fn fma_off_grid_operands_compile_with_their_aligned_copies() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    let mut failures = Vec::new();
    for layout in ["TN", "NN", "NT", "TT"] {
        let p = problem(
            1001,
            1003,
            2047,
            layout,
            DataType::F32,
            DataType::F32,
            0.0,
            1,
        );
        let c = Space::for_problem(&p, &hw).default_config().unwrap();
        assert_eq!((c.pm, c.grvw, c.svw), (3, 4, 1), "{layout}: {}", c.name());
        let text = gemmtune::compile::codegen::generate(&c, &p, &target).text;
        for (name, k_contiguous) in [("A", p.k_contiguous(true)), ("B", p.k_contiguous(false))] {
            let mode = if k_contiguous { 3 } else { 4 };
            let line = format!("#define GT_PACK_{name} {mode}");
            assert!(text.contains(&line), "{layout}: no `{line}`");
        }
        let ptx = ptx_for(&nvcc, &c, &p);
        assert!(
            ptx.contains("_pack_a") && ptx.contains("_pack_b"),
            "{layout}"
        );
        failures.extend(spill_or_error(&nvcc, &c, &p, &target, layout));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The FMA path's default on Hopper (a 256x128 tile of eight waves with the cross-stage
/// prefetch; at 4096^3 with the kernels that copy K-contiguous operands M- or N-major first)
/// and its branch-free interior loop (an operand copied straight into LDS) compile for sm_90a
/// without spills, in every layout, with the operands in place on 8 k a stage and three
/// stages too; so do the default on few tiles (stream-K) and the split start beside it. The GEMV path converts 8-bit inputs in pairs with the hardware
/// conversion (cvt to f16x2, per encoding), while the reference kernel keeps its own decode.
#[test]
fn fma_prefetch_and_8bit_gemv_compile_for_sm90a() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    use DataType::*;
    let mut failures = Vec::new();
    for layout in ["TN", "NN", "NT", "TT"] {
        let p = problem(4096, 4096, 4096, layout, F32, F32, 0.0, 1);
        let space = Space::for_problem(&p, &hw);
        let default = space.default_config().unwrap();
        // At 4096^3 every K-contiguous operand is copied M- or N-major first (PackMNMajor,
        // the packing kernels compile with the main one), so every layout runs 16 k on four
        // stages; where both operands go through registers (TN in place) 8 k on three
        // (src/space/fma.rs).
        let packs = match layout {
            "TN" => "_PM3",
            "NN" => "_PM2",
            "TT" => "_PM1",
            _ => "",
        };
        let expected = format!(
            "MT256x128x16_MI1x1x1_WG4x2_PGR4_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0{packs}"
        );
        assert_eq!(default.name(), expected, "{layout}");
        let deeper = KernelConfig::parse(
            "MT128x128x16_MI1x1x1_WG1x4_PGR4_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0",
        )
        .unwrap();
        space.check(&deeper).unwrap();
        let in_place = KernelConfig::parse(
            "MT256x128x8_MI1x1x1_WG4x2_PGR3_PLR1_LPA4_LPB4_SW0_GSU1_WGM8_GRVW4_SVW2_SU0",
        )
        .unwrap();
        space.check(&in_place).unwrap();
        // Where the tiles are too few for the compute units (1024^3: 64 of 128x128), the
        // default is eight waves as stream-K, its pipeline running across tile boundaries;
        // the split start beside it runs four waves and the reduction kernel.
        let few = problem(1024, 1024, 1024, layout, F32, F32, 0.0, 1);
        let few_space = Space::for_problem(&few, &hw);
        let stream_k = few_space.default_config().unwrap();
        assert_eq!(
            stream_k.name(),
            "MT128x128x16_MI1x1x1_WG2x4_PGR4_PLR1_LPA4_LPB4_SW0_GSU1S_WGM8_GRVW4_SVW2_SU0",
            "{layout}"
        );
        let split = few_space.fma_split_start().expect("1024^3 splits K in 4");
        for (p, configs) in [
            (&p, vec![default, deeper, in_place]),
            (&few, vec![stream_k, split]),
        ] {
            let results = pool::compile_batch(&nvcc, &configs, p, &target, None, 0);
            for (cfg, r) in configs.iter().zip(results) {
                match r {
                    Ok(k) if k.resources.spill_bytes.unwrap_or(0) > 0 => failures.push(format!(
                        "{} {}: {:?} spill bytes",
                        p.label(),
                        cfg.name(),
                        k.resources.spill_bytes
                    )),
                    Ok(_) => {}
                    Err(e) => failures.push(format!("{} {}: {e}", p.label(), cfg.name())),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    let gemv = KernelConfig::parse(
        "MT16x1x16_MI1x1x1_WG4x1_PGR2_PLR0_LPA0_LPB0_SW0_GSU1_WGM1_GRVW16_SVW1_SU0_GV1",
    )
    .unwrap();
    for (a, conversion) in [(F8, "cvt.rn.f16x2.e4m3x2"), (Bf8, "cvt.rn.f16x2.e5m2x2")] {
        let mut p = problem(4096, 1, 4096, "TN", a, Bf16, 0.0, 1);
        p.b_type = F8;
        Space::for_problem(&p, &hw).check(&gemv).unwrap();
        let ptx = ptx_for(&nvcc, &gemv, &p);
        assert!(ptx.contains(conversion), "{}: no {conversion}", p.label());
        // B (e4m3) too, through the same conversion.
        assert!(ptx.contains("cvt.rn.f16x2.e4m3x2"), "{}", p.label());
    }
}

/// The persistent kernel's direct C reads (`GT_C_DIRECT`, kernels/epilogue/gt_c_direct.h)
/// compile for sm_90a without spills wherever the host picks them: a 256x128 tile of f32 C
/// beside a producer warpgroup, whose C neither fits in the staging area nor comes through its
/// three-stage ring (four slots), and a C of another type than D's, swapped too. The tensor
/// map of C is asked for only to have the L2 fetch each unswapped tile's C ahead
/// (`GT_C_PREFETCH`), in unswizzled boxes of the tile's rows by 32 columns.
#[test]
fn persistent_kernels_reading_c_directly_compile_without_spills() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    use DataType::*;
    let mut f32_c = problem(2048, 8192, 2048, "TN", Bf16, F32, 1.0, 1);
    f32_c.alpha = 1.0;
    let mut mixed_c = problem(4096, 1024, 4096, "TN", Bf16, Bf16, 1.0, 2);
    mixed_c.c_type = F32;
    mixed_c.fill_defaults();
    let mut swapped_mixed_c = problem(28672, 512, 8192, "TN", Bf16, Bf16, 1.0, 1);
    swapped_mixed_c.c_type = F32;
    swapped_mixed_c.fill_defaults();
    let cases = [
        (
            f32_c,
            "MT256x128x64_MI64x8x16_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW2_PK1",
        ),
        (
            mixed_c,
            "MT128x128x64_MI64x8x16_WG8x1_PGR6_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_PK1",
        ),
        (
            swapped_mixed_c,
            "MT176x128x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1",
        ),
    ];
    let mut failures = Vec::new();
    for (p, name) in &cases {
        let c = valid_config(p, &hw, name);
        assert!(
            constraints::persistent_c_direct(&c, p),
            "{name} on {}",
            p.label()
        );
        let text = gemmtune::compile::codegen::generate(&c, p, &target).text;
        assert!(text.contains("#define GT_C_DIRECT 1\n"), "{name}");
        assert!(
            !text.contains("#define GT_C_STAGES 1") && !text.contains("#define GT_C_STAGES 2"),
            "{name}"
        );
        let plan = gemmtune::compile::codegen::launch_plan(&c, p, &target);
        assert!(plan.tma_d.is_some(), "{name}");
        let prefetch = constraints::persistent_c_prefetch(&c, p, 132);
        assert_eq!(prefetch, c.sab == 0, "{name}");
        assert_eq!(
            text.contains("#define GT_C_PREFETCH 1\n"),
            prefetch,
            "{name}"
        );
        let boxes = plan.tma_c.map(|bx| (bx.inner, bx.outer, bx.swizzle_bytes));
        assert_eq!(boxes, prefetch.then_some((c.mt0, 32, 0)), "{name}");
        failures.extend(spill_or_error(&nvcc, &c, p, &target, &p.label()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The persistent kernel with C through its operand ring (`GT_C_STEPS`,
/// kernels/epilogue/gt_c_ring.h) compiles for sm_90a without spills wherever the host picks
/// it: the 128x256 tile of an f32 C and D on three and four stages (three slots of C), a
/// producer warpgroup's 256x128 on four (four slots), a cluster of two along N, and e4m3
/// inputs. The tensor map of C reads it in the staging layout, a 128-byte chunk of M by 32
/// columns, 128-byte swizzle; the L2 fetches each tile's C ahead where the tiles are more
/// than the compute units.
#[test]
fn persistent_kernels_with_c_through_the_ring_compile_without_spills() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    use DataType::*;
    let f32_c = problem(2048, 8192, 2048, "TN", Bf16, F32, 1.0, 1);
    let mut nt = problem(11008, 4096, 512, "NT", Bf16, F32, 1.0, 1);
    nt.alpha = 1.0;
    let mut e4m3 = problem(4000, 3000, 1000, "TN", F8, F32, 1.0, 1);
    e4m3.fill_defaults();
    let cases = [
        (
            f32_c.clone(),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
            3,
        ),
        (
            f32_c.clone(),
            "MT128x256x64_MI64x8x16_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
            3,
        ),
        (
            f32_c,
            "MT256x128x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW2_PK1_CN2",
            4,
        ),
        (
            nt,
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
            3,
        ),
        (
            e4m3,
            "MT128x256x128_MI64x8x32_WG8x1_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
            3,
        ),
    ];
    let mut failures = Vec::new();
    for (p, name, steps) in &cases {
        let c = valid_config(p, &hw, name);
        assert_eq!(
            constraints::persistent_c_steps(&c, p),
            *steps,
            "{name} on {}",
            p.label()
        );
        assert!(!constraints::persistent_c_direct(&c, p), "{name}");
        let text = gemmtune::compile::codegen::generate(&c, p, &target).text;
        assert!(
            text.contains(&format!("#define GT_C_STEPS {steps}\n")),
            "{name}"
        );
        let plan = gemmtune::compile::codegen::launch_plan(&c, p, &target);
        assert!(plan.tma_d.is_some(), "{name}");
        let boxes = plan
            .tma_c
            .map(|bx| (bx.k_major, bx.inner, bx.outer, bx.swizzle_bytes));
        assert_eq!(boxes, Some((false, 32, 32, 128)), "{name}");
        assert!(constraints::persistent_c_prefetch(&c, p, 132), "{name}");
        failures.extend(spill_or_error(&nvcc, &c, p, &target, &p.label()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Persistent kernels whose output goes out in narrow column groups (`GT_OUT_NARROW`: groups of
/// 256 bytes a row would leave the ring three stages) compile for sm_90a without spills: the
/// swapped 208x128 tile of an N-major B on four stages, an e4m3 one, and stream-K over batches
/// of an M-major A in f16.
#[test]
fn persistent_kernels_in_narrow_column_groups_compile_without_spills() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    use DataType::*;
    let cases = [
        (
            problem(2560, 2560, 2560, "TT", Bf16, Bf16, 0.0, 1),
            "MT208x128x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1",
        ),
        (
            problem(28672, 384, 4096, "TN", F8, Bf16, 0.0, 1),
            "MT224x128x128_MI64x8x32_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM1_GRVW16_SVW8_SU0_PW1_SAB1_PK1",
        ),
        (
            problem(1504, 600, 2048, "NT", F16, F16, 0.0, 3),
            "MT224x128x64_MI64x8x16_WG4x2_PGR4_PLR0_LPA0_LPB0_SW1_GSU1S_WGM8_GRVW8_SVW8_SU0_PW1_SAB1_PK1",
        ),
    ];
    let mut failures = Vec::new();
    for (p, name) in &cases {
        let c = valid_config(p, &hw, name);
        assert!(constraints::persistent_narrow_groups(&c, p), "{name}");
        let text = gemmtune::compile::codegen::generate(&c, p, &target).text;
        assert!(text.contains("#define GT_OUT_NARROW 1\n"), "{name}");
        failures.extend(spill_or_error(&nvcc, &c, p, &target, &p.label()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The config `name`, which must be valid for `p` on `hw`.
fn valid_config(p: &GemmProblem, hw: &HwSpec, name: &str) -> KernelConfig {
    let c = KernelConfig::parse(name).unwrap();
    Space::for_problem(p, hw)
        .check(&c)
        .unwrap_or_else(|v| panic!("{name} is not valid for {}: {v}", p.label()));
    c
}

/// A 32-bit D from unswapped warpgroups is staged at places a constant apart
/// (kernels/epilogue/gt_out_staging.h's CONST_PLACES): each thread's stores into the staging
/// area use its four first places as bases and constant offsets from them, on the persistent
/// kernel's 128x256 tile, ping-pong's 128x144 (the moderate-K start's, five stages), warpgroups
/// side by side storing their own columns, and tf32; all without spills. (Place by place, every
/// store had an address of its own: 96 bases for the 128x192 tile of warpgroups side by side.)
#[test]
fn a_32_bit_d_is_staged_at_constant_offsets_from_four_places() {
    let Some(nvcc) = nvcc_or_skip("nvcc_compile") else {
        return;
    };
    let hw = HwSpec::by_name("H200").unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    use DataType::*;
    let f32_d = problem(8192, 8192, 512, "TN", Bf16, F32, 0.0, 1);
    let cases = [
        (
            f32_d.clone(),
            "MT128x256x64_MI64x8x16_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
        ),
        (
            f32_d.clone(),
            "MT128x144x64_MI64x8x16_WG4x1_PGR5_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK2",
        ),
        (
            f32_d,
            "MT128x192x64_MI64x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0_PW1_PK1",
        ),
        (
            xf32(problem(4096, 4096, 4096, "TN", F32, F32, 0.0, 1)),
            "MT128x256x32_MI64x8x8_WG8x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW4_SVW4_SU0_PW1_PK1",
        ),
    ];
    let mut failures = Vec::new();
    for (p, name) in &cases {
        let c = valid_config(p, &hw, name);
        let ptx = ptx_for(&nvcc, &c, p);
        let main = entry(&ptx, name);
        let mut bases = std::collections::BTreeSet::new();
        for line in main.lines().filter(|l| l.contains("st.shared.f32")) {
            let address = line.split('[').nth(1).and_then(|a| a.split(']').next());
            let base = address.map(|a| a.split('+').next().unwrap_or(a).trim());
            bases.insert(base.unwrap_or_default().to_string());
        }
        assert!(
            !bases.is_empty() && bases.len() <= 8,
            "{name} on {}: {} store bases",
            p.label(),
            bases.len()
        );
        failures.extend(spill_or_error(&nvcc, &c, p, &target, &p.label()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
