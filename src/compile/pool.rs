//! Parallel compilation: a batch of configs compiled on all CPU cores (rayon), each result
//! kept per config in input order.

use rayon::prelude::*;

use super::cache::CompileCache;
use super::{build_one, CompileError, CompiledKernel, Compiler, Target};
use crate::problem::GemmProblem;
use crate::space::KernelConfig;

/// Compiles every config; `threads = 0` uses all cores.
pub fn compile_batch(
    compiler: &dyn Compiler,
    configs: &[KernelConfig],
    problem: &GemmProblem,
    target: &Target,
    cache: Option<&CompileCache>,
    threads: usize,
) -> Vec<Result<CompiledKernel, CompileError>> {
    compile_batch_observed(compiler, configs, problem, target, cache, threads, &|| {})
}

/// [`compile_batch`], calling `done` as each config finishes (from the compiling threads),
/// for progress displays.
pub fn compile_batch_observed(
    compiler: &dyn Compiler,
    configs: &[KernelConfig],
    problem: &GemmProblem,
    target: &Target,
    cache: Option<&CompileCache>,
    threads: usize,
    done: &(dyn Fn() + Sync),
) -> Vec<Result<CompiledKernel, CompileError>> {
    let run = || {
        configs
            .par_iter()
            .map(|c| {
                let built = build_one(compiler, c, problem, target, cache);
                done();
                built
            })
            .collect()
    };
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    }
}
