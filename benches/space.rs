//! Host benches of the config space: bounded enumeration with constraint checks, sampling,
//! neighbourhoods, canonical-name parsing, and the sim backend's model.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rand::SeedableRng;

use gemmtune::device::sim::model_time_us;
use gemmtune::hw::HwSpec;
use gemmtune::problem::GemmProblem;
use gemmtune::space::{KernelConfig, Space};

fn seed_space() -> Space {
    let p = GemmProblem::new(16032, 109, 16384);
    let mut s = Space::for_problem(&p, &HwSpec::by_name("H200").unwrap());
    // The bounded sweep space: the structural parameters free, the minor ones fixed.
    for (k, v) in [
        ("LdsPadA", "8"),
        ("LdsPadB", "8"),
        ("LdsSwizzle", "0"),
        ("StoreVectorWidth", "4"),
        ("StaggerU", "0"),
        ("WorkGroupMapping", "8"),
        ("GlobalReadVectorWidth", "8"),
    ] {
        s.fix(k, v).unwrap();
    }
    s
}

fn benches(c: &mut Criterion) {
    let space = seed_space();
    c.bench_function("space/enumerate_seed_bounded", |b| {
        b.iter(|| black_box(space.enumerate(u128::MAX).unwrap().len()))
    });
    let cfg = space.default_config().unwrap();
    c.bench_function("space/check", |b| {
        b.iter(|| black_box(space.check(&cfg).is_ok()))
    });
    c.bench_function("space/neighbors", |b| {
        b.iter(|| black_box(space.neighbors(&cfg).len()))
    });
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    c.bench_function("space/sample", |b| {
        b.iter(|| black_box(space.sample(&mut rng)))
    });
    let name = cfg.name();
    c.bench_function("space/parse_name", |b| {
        b.iter(|| black_box(KernelConfig::parse(&name).unwrap()))
    });
    let hw = HwSpec::by_name("H200").unwrap();
    c.bench_function("sim/model_time", |b| {
        b.iter(|| black_box(model_time_us(&cfg, &space.problem, &hw)))
    });
}

criterion_group!(space_benches, benches);
criterion_main!(space_benches);
