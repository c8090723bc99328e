//! Host bench of the compile path that every repeated run takes: source generation, the cache
//! key hash and reading a cached code object (the sim compiler fills the cache first).

use criterion::{black_box, criterion_group, criterion_main, Criterion};

use gemmtune::compile::cache::CompileCache;
use gemmtune::compile::codegen::generate;
use gemmtune::compile::sim::SimCompiler;
use gemmtune::compile::{build_one, Target};
use gemmtune::hw::{HwSpec, Vendor};
use gemmtune::problem::GemmProblem;
use gemmtune::space::Space;

fn benches(c: &mut Criterion) {
    let p = GemmProblem::new(16032, 109, 16384);
    let space = Space::for_problem(&p, &HwSpec::by_name("H200").unwrap());
    let cfg = space.default_config().unwrap();
    let target = Target::arch(Vendor::Nvidia, "sm_90a");
    let dir = tempfile::tempdir().unwrap();
    let cache = CompileCache::new(dir.path());
    let compiler = SimCompiler { plants: vec![] };
    build_one(&compiler, &cfg, &p, &target, Some(&cache)).unwrap();
    c.bench_function("compile/generate_source", |b| {
        b.iter(|| black_box(generate(&cfg, &p, &target).text.len()))
    });
    c.bench_function("compile/cache_hit", |b| {
        b.iter(|| {
            let k = build_one(&compiler, &cfg, &p, &target, Some(&cache)).unwrap();
            assert!(k.cache_hit);
            black_box(k)
        })
    });
}

criterion_group!(compile_benches, benches);
criterion_main!(compile_benches);
