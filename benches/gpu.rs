//! GPU benches: the default kernel set and the recorded winners on the seed shapes and the
//! square shape, timed through the `Device` trait with GPU events (`iter_custom` sums the
//! kernel times of the samples, so launch gaps and verification stay out), the vendor library
//! beside them. Bench ids are `<device>/<problem>/<kernel>`. On a machine without a GPU this
//! prints why and registers nothing.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

use gemmtune::bench::defaults::default_configs;
use gemmtune::compile::{build_one, compiler_for, target_for};
use gemmtune::device::replay::Dataset;
use gemmtune::device::{open_in_process, BackendKind, Device, DeviceSelection, TimingOptions};
use gemmtune::problem::GemmProblem;
use gemmtune::space::{KernelConfig, Space};

/// Sums `iters` kernel times measured with GPU events into one duration.
fn timed(
    device: &mut dyn Device,
    kernel: Option<&gemmtune::compile::CompiledKernel>,
    iters: u64,
) -> Duration {
    let timing = TimingOptions {
        iters: iters.clamp(1, 10_000) as u32,
        cold_iters: 1,
        ..TimingOptions::default()
    };
    let outcome = match kernel {
        Some(k) => device.run_kernel(k, &timing),
        None => device.run_vendor(&timing),
    };
    let us: f64 = outcome
        .samples()
        .map(|s| s.iter().sum())
        .unwrap_or(f64::NAN);
    if !us.is_finite() {
        panic!("benchmark failed: {}", outcome.reason());
    }
    Duration::from_secs_f64(us * 1e-6)
}

/// The best config a committed dataset recorded for the problem, if any.
fn recorded_winner(problem: &GemmProblem) -> Option<KernelConfig> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|e| Dataset::load(&e.path()).ok())
        .find(|d| d.header.problem.key() == problem.key())
        .and_then(|d| d.best())
        .map(|(c, _)| c)
}

fn gpu_benches(c: &mut Criterion) {
    let sel = DeviceSelection {
        backend: Some(BackendKind::Cuda),
        ..DeviceSelection::default()
    };
    let mut device = match open_in_process(&sel) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("gpu benches skipped: no GPU ({e})");
            return;
        }
    };
    let info = device.info().clone();
    let hw = device.hw_spec().clone();
    let compiler = match compiler_for(&info, &[]) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gpu benches skipped: no compiler ({e})");
            return;
        }
    };
    let target = target_for(&info);
    let dev_name = info.name.replace(' ', "_");
    for problem in [
        GemmProblem::new(16032, 109, 16384),
        GemmProblem::new(16032, 113, 16384),
        GemmProblem::new(4096, 4096, 4096),
    ] {
        if let Err(e) = device.set_problem(&problem, &TimingOptions::default()) {
            eprintln!("skipping {}: {e}", problem.label());
            continue;
        }
        let space = Space::for_problem(&problem, &hw);
        let mut configs = default_configs(&space, 4);
        if let Some(w) = recorded_winner(&problem) {
            if !configs.contains(&w) {
                configs.push(w);
            }
        }
        let label = format!("{}x{}x{}", problem.m, problem.n, problem.k);
        let mut group = c.benchmark_group(format!("{dev_name}/{label}"));
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(2));
        group.bench_function("vendor", |b| {
            b.iter_custom(|n| timed(device.as_mut(), None, n))
        });
        for cfg in configs {
            let kernel = match build_one(compiler.as_ref(), &cfg, &problem, &target, None) {
                Ok(k) => k,
                Err(e) => {
                    eprintln!("{}: does not compile: {e}", cfg.name());
                    continue;
                }
            };
            group.bench_function(cfg.name(), |b| {
                b.iter_custom(|n| timed(device.as_mut(), Some(&kernel), n))
            });
        }
        group.finish();
    }
}

criterion_group!(gpu, gpu_benches);
criterion_main!(gpu);
