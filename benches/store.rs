//! Results-database speed: recording one measurement (one transaction each, as the driver
//! does while a search runs) and the resume lookup that precedes every measurement.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use gemmtune::device::{Outcome, Verification};
use gemmtune::problem::GemmProblem;
use gemmtune::store::{MeasurementExtra, MeasurementKey, NewRun, Store};

fn key(problem: &GemmProblem, config: usize) -> MeasurementKey {
    MeasurementKey {
        device_name: "NVIDIA H200".into(),
        arch: "sm_90a".into(),
        driver_version: "580.65".into(),
        compiler_version: "nvrtc-13.0".into(),
        source_hash: "0123456789abcdef".into(),
        problem_key: problem.key(),
        config_name: format!("MT128x{}x64_MI16x16x16_WG2x2", 16 * (1 + config % 16)),
    }
}

fn timed(i: usize) -> Outcome {
    Outcome::Timed {
        samples_us: (0..20).map(|s| 100.0 + (i + s) as f64 * 0.1).collect(),
        verification: Verification {
            max_abs_err: 1e-3,
            max_rel_err: 1e-3,
            rel_l2_err: 1e-4,
            tolerance: 1e-2,
            passed: true,
            method: "gpu-reference".into(),
        },
    }
}

fn bench_store(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut store = Store::open(dir.path().join("bench.sqlite")).expect("open store");
    let run = store
        .begin_run(&NewRun {
            command_line: "gemmtune bench".into(),
            ..Default::default()
        })
        .expect("begin run");
    let problems: Vec<GemmProblem> = (1..=8)
        .map(|i| GemmProblem::new(1024 * i, 109, 16384))
        .collect();
    let extra = MeasurementExtra {
        compile_ms: Some(850.0),
        registers: Some(128),
        spill_bytes: Some(0),
        shared_bytes: Some(49152),
    };

    let mut i = 0usize;
    c.bench_function("store/record", |b| {
        b.iter(|| {
            i += 1;
            let p = &problems[i % problems.len()];
            store
                .record(Some(run), &key(p, i), p, &timed(i), &extra)
                .expect("record")
        })
    });

    let keys: Vec<_> = (0..64)
        .map(|j| key(&problems[j % problems.len()], j))
        .collect();
    let mut j = 0usize;
    c.bench_function("store/lookup", |b| {
        b.iter_batched(
            || {
                j += 1;
                &keys[j % keys.len()]
            },
            |k| store.lookup(k).expect("lookup"),
            BatchSize::SmallInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_store
}
criterion_main!(benches);
