//! GPU smoke test (ignored by default; needs an NVIDIA GPU, libcuda, libnvrtc, libcublasLt):
//! opens the CUDA device, and for the seed shapes and edge problems in all four layouts
//! compiles sampled configs with NVRTC, runs and verifies them, and prints each outcome and
//! median time next to cuBLASLt's. Fails if any valid config is not verified and timed.
//!
//! Run: `cargo test --release --test cuda_smoke -- --include-ignored --nocapture`

use gemmtune::compile::nvidia::NvrtcCompiler;
use gemmtune::compile::pool;
use gemmtune::device::cuda::CudaDevice;
use gemmtune::device::{BackendKind, Device, DeviceSelection, Outcome, TimingOptions};
use gemmtune::measure::stats::Stats;
use gemmtune::problem::DataType;
use gemmtune::space::{GsuAlgo, KernelConfig, Space};

mod common;
use common::kernels::{problem, sample_configs};

/// Hand-picked configs for the memory-bound seed shapes (N = 109 / 113).
const SEED_CANDIDATES: &[&str] = &[
    "MT128x112x64_MI16x8x16_WG2x2_PGR3_PLR1_LPA8_LPB8_SW0_GSU1_WGM8_GRVW8_SVW4_SU0",
    "MT128x112x64_MI16x8x16_WG2x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW4_SU0",
    "MT128x112x64_MI16x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU4A_WGM8_GRVW8_SVW4_SU0",
    "MT64x112x128_MI16x8x16_WG2x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU1_WGM8_GRVW8_SVW4_SU0",
    "MT64x112x128_MI16x8x16_WG4x1_PGR4_PLR1_LPA0_LPB0_SW1_GSU2A_WGM8_GRVW8_SVW4_SU0",
    "MT256x112x64_MI16x8x16_WG4x2_PGR3_PLR1_LPA0_LPB0_SW1_GSU2R_WGM8_GRVW8_SVW4_SU0",
    "MT128x128x64_MI16x8x16_WG4x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU2A_WGM8_GRVW8_SVW4_SU0",
    "MT64x128x64_MI16x8x16_WG2x2_PGR4_PLR1_LPA0_LPB0_SW1_GSU4R_WGM8_GRVW8_SVW4_SU0",
];

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn configs_verify_and_time_on_the_gpu() {
    let sel = DeviceSelection {
        backend: Some(BackendKind::Cuda),
        ..Default::default()
    };
    let mut dev = CudaDevice::open(&sel).expect("a CUDA device");
    let info = dev.info().clone();
    println!(
        "device: {} {} driver {} {} SMs, L2 {} MiB, reference kernels: {}",
        info.name,
        info.arch,
        info.driver_version,
        info.compute_units,
        info.l2_bytes >> 20,
        dev.reference_origin()
    );
    let nvrtc = NvrtcCompiler::new().expect("NVRTC");
    let target = gemmtune::compile::target_for(&info);
    let hw = dev.hw_spec().clone();
    use DataType::*;
    let mut problems = vec![
        (problem(16032, 109, 16384, "TN", Bf16, Bf16, 0.0, 1), true),
        (problem(16032, 113, 16384, "TN", Bf16, Bf16, 0.0, 1), true),
        (problem(200, 113, 5, "TN", Bf16, Bf16, 0.0, 1), false),
        (problem(333, 109, 77, "NN", Bf16, Bf16, 0.5, 1), false),
        (problem(256, 109, 200, "NT", F16, F32, 1.0, 1), false),
        (problem(100, 64, 128, "TT", Bf16, Bf16, 0.0, 3), false),
        (problem(96, 80, 64, "NN", F32, F32, 0.25, 1), false),
        (problem(130, 72, 300, "TT", F32, F32, 0.0, 2), false),
    ];
    for layout in ["NN", "NT", "TN", "TT"] {
        problems.push((problem(1000, 520, 1100, layout, Bf16, Bf16, 0.0, 1), false));
        problems.push((problem(640, 384, 512, layout, F16, F16, 1.0, 1), false));
    }
    let mut failures = Vec::new();
    let (mut compiled, mut compile_s) = (0usize, 0f64);
    for (pi, (p, seed_shape)) in problems.iter().enumerate() {
        let timing = if *seed_shape {
            TimingOptions {
                iters: 20,
                cold_iters: 3,
                rotating_mb: 512,
                ..Default::default()
            }
        } else {
            TimingOptions {
                iters: 3,
                cold_iters: 1,
                rotating_mb: 16,
                ..Default::default()
            }
        };
        let space = Space::for_problem(p, &hw);
        let mut configs = sample_configs(&space, 100 + pi as u64, if *seed_shape { 3 } else { 8 });
        if *seed_shape {
            for name in SEED_CANDIDATES {
                let c = KernelConfig::parse(name).unwrap();
                match space.check(&c) {
                    Ok(()) => configs.push(c),
                    Err(v) => println!("  skip {name}: {v}"),
                }
            }
        }
        if let Err(e) = dev.set_problem(p, &timing) {
            failures.push(format!("{}: set_problem: {e}", p.label()));
            continue;
        }
        let vendor = dev.run_vendor(&timing);
        let vendor_us = vendor.samples().and_then(Stats::of).map(|s| s.median_us);
        println!(
            "== {} beta={} cuBLASLt: {} {}",
            p.label(),
            p.beta,
            vendor.status(),
            vendor_us
                .map(|u| format!("{u:.1} us"))
                .unwrap_or_else(|| vendor.reason())
        );
        let t0 = std::time::Instant::now();
        let kernels = pool::compile_batch(&nvrtc, &configs, p, &target, None, 0);
        compile_s += t0.elapsed().as_secs_f64();
        compiled += configs.len();
        for (cfg, k) in configs.iter().zip(kernels) {
            let k = match k {
                Ok(k) => k,
                Err(e) => {
                    failures.push(format!("{} {}: {e}", p.label(), cfg.name()));
                    continue;
                }
            };
            let out = dev.run_kernel(&k, &timing);
            let med = out.samples().and_then(Stats::of).map(|s| s.median_us);
            let err = out
                .verification()
                .map(|v| format!("relL2 {:.2e}", v.rel_l2_err))
                .unwrap_or_default();
            println!(
                "{} {:<14} {:>9} {:>6} regs={:?} spill={:?} {} {}",
                if *seed_shape { "*" } else { " " },
                out.status(),
                med.map(|u| format!("{u:.1}us")).unwrap_or_default(),
                match (med, vendor_us) {
                    (Some(a), Some(b)) => format!("x{:.2}", b / a),
                    _ => String::new(),
                },
                k.resources.registers,
                k.resources.spill_bytes,
                cfg.name(),
                if matches!(out, Outcome::Timed { .. }) {
                    err
                } else {
                    format!("{err} {}", out.reason())
                }
            );
            if !matches!(out, Outcome::Timed { .. }) {
                failures.push(format!(
                    "{} {}: {} {}",
                    p.label(),
                    cfg.name(),
                    out.status(),
                    out.reason()
                ));
            }
            if dev.is_poisoned() {
                drop(dev);
                dev = CudaDevice::open(&sel).expect("reopen");
                dev.set_problem(p, &timing)
                    .expect("set_problem after reopen");
            }
        }
    }
    println!(
        "NVRTC: {compiled} configs in {compile_s:.1} s ({:.1} configs/s on all cores)",
        compiled as f64 / compile_s.max(1e-9)
    );
    println!("{} failures", failures.len());
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(failures.is_empty());
}

/// A structured sweep of the seed shape (M=16032 N=109 K=16384 bf16 TN): prints the ten fastest
/// verified configs next to cuBLASLt. Fails only if a valid config is wrong or fails to launch.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn seed_shape_sweep() {
    let sel = DeviceSelection {
        backend: Some(BackendKind::Cuda),
        ..Default::default()
    };
    let mut dev = CudaDevice::open(&sel).expect("a CUDA device");
    let nvrtc = NvrtcCompiler::new().expect("NVRTC");
    let target = gemmtune::compile::target_for(dev.info());
    let hw = dev.hw_spec().clone();
    let p = problem(
        16032,
        109,
        16384,
        "TN",
        DataType::Bf16,
        DataType::Bf16,
        0.0,
        1,
    );
    let space = Space::for_problem(&p, &hw);
    let base = space.default_config().unwrap();
    let mut configs = Vec::new();
    for mt0 in [64, 128, 256] {
        for du in [64, 128] {
            for wg in [[2, 1], [4, 1], [2, 2], [4, 2]] {
                for pgr in [3, 4] {
                    for gsu in [1, 2, 4] {
                        for su in [0, 1, 4] {
                            let c = KernelConfig {
                                mt0,
                                mt1: 112,
                                depth_u: du,
                                wg,
                                pgr,
                                gsu,
                                su,
                                gsu_algo: GsuAlgo::Atomic,
                                swizzle: 1,
                                lpa: 0,
                                lpb: 0,
                                ..base
                            };
                            if space.check(&c).is_ok() {
                                configs.push(c);
                            }
                        }
                    }
                }
            }
        }
    }
    let timing = TimingOptions {
        iters: 10,
        cold_iters: 2,
        rotating_mb: 512,
        ..Default::default()
    };
    dev.set_problem(&p, &timing).expect("set_problem");
    let vendor = dev.run_vendor(&timing);
    let vendor_us = vendor
        .samples()
        .and_then(Stats::of)
        .map(|s| s.median_us)
        .unwrap_or(f64::NAN);
    let kernels = pool::compile_batch(&nvrtc, &configs, &p, &target, None, 0);
    let mut times = Vec::new();
    let mut failures = Vec::new();
    for (cfg, k) in configs.iter().zip(kernels) {
        let Ok(k) = k else {
            failures.push(format!("{}: compile failed", cfg.name()));
            continue;
        };
        let out = dev.run_kernel(&k, &timing);
        match out.samples().and_then(Stats::of) {
            Some(s) => times.push((s.median_us, cfg.name(), k.resources.registers)),
            None => failures.push(format!("{}: {} {}", cfg.name(), out.status(), out.reason())),
        }
    }
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    println!(
        "sweep of {} configs, cuBLASLt {vendor_us:.1} us",
        configs.len()
    );
    for (us, name, regs) in times.iter().take(12) {
        println!(
            "  {us:8.1} us  x{:.2}  regs={regs:?} {name}",
            vendor_us / us
        );
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(failures.is_empty());
}
